//! The trace layer: the trace format v1 and the readers that turn bytes into events.
//!
//! - [`event`]: the typed schema (contract §2). Every event keeps its [`Origin`].
//! - [`reader`]: the sans-IO streaming JSONL reader. Bytes in any chunking give the same
//!   [`Item`]s; bad lines become [`Problem`]s in the output stream, never panics or silent
//!   drops.
//! - [`index`]: whole-stream reading into a [`TraceLog`] with its [`Index`] (events per session,
//!   counts per kind).
//! - [`generate`]: deterministic large mixed traces for benchmarks and load tests.
//!
//! The format itself is documented for users in `docs/trace-format.md`, with a JSON Schema in
//! `docs/trace-format.schema.json`; tests keep the three (docs, schema, [`Kind`]) in step.

pub mod event;
mod fields;
pub mod follow;
pub mod generate;
pub mod index;
pub mod live;
pub mod reader;
pub mod time;

pub use event::{Body, Event, FORMAT_VERSION, Kind, Origin, Timestamp};
pub use index::{Index, TraceLog};
pub use reader::{
    DEFAULT_MAX_LINE_BYTES, Item, Problem, ProblemCode, Reader, ReaderConfig, Severity,
};
