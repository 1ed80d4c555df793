//! The trace layer: the trace format v1 and the readers that turn bytes into events.
//!
//! - [`event`]: the typed schema (contract §2). Every event keeps its [`Origin`].
//! - [`reader`]: the sans-IO streaming JSONL reader. Bytes in any chunking give the same
//!   [`Item`]s; bad lines become [`Problem`]s in the output stream, never panics or silent
//!   drops.
//! - [`index`]: whole-stream reading into a [`TraceLog`] with its [`Index`] (events per session,
//!   counts per kind).
//! - [`store`]: where a log's events live ([`EventStore`]): places in their file, decoded on
//!   demand, or decoded in memory when no file is behind them.
//! - [`read_all`] (module `load`): whole-stream reading on all cores, with exactly the
//!   streaming reader's output.
//! - [`generate`]: deterministic large mixed traces for benchmarks and load tests.
//! - [`import`]: the traces other tools write (OpenTelemetry, Inspect, Langfuse, ...) turned
//!   into v1.
//!
//! The format itself is documented for users in `docs/trace-format.md`, with a JSON Schema in
//! `docs/trace-format.schema.json`; tests keep the three (docs, schema, [`Kind`]) in step.
//!
//! ## Memory layout
//!
//! A trace read from a file keeps its events in the file: [`TraceLog::events`] is an
//! [`EventStore`] holding, per event, the byte offset and number of its line and its kind
//! (17 bytes), and an event is decoded from its line (a positioned read through the page
//! cache) when something looks at it. Views borrow decoded events that stay *pinned* until
//! the owner unpins them ([`EventStore::get`], the TUI between frames); walks that look at
//! each event once decode without pinning ([`EventStore::load`]). Events with no file
//! behind them (followed files, which may be truncated under the viewer; standard input
//! without a spool; in-memory streams) stay decoded in memory.
//!
//! A decoded [`Event`] is kept small: strings are inline up to 24 bytes ([`event::Text`]),
//! every kind's fields are boxed (the [`Body`] enum is 16 bytes and an event pays only for its
//! own kind), rare free-form JSON values are boxed, and unknown fields cost nothing when
//! absent. Session and file names are thin shared [`FileName`]s, and the usual timestamp
//! spellings are re-created from their value rather than stored (an [`Event`] is 120 bytes).
//!
//! ## Adding a kind or a field
//!
//! 1. `event.rs`: the name in the `kinds!` list, a struct for its fields, a [`Body`] variant and
//!    its arm in [`Body::kind`].
//! 2. `fields.rs`: any new field name in `known_fields!`, and the kind's arm in `build_body`
//!    (types and value checks live there, so errors name the field).
//! 3. `docs/trace-format.md` and `docs/trace-format.schema.json`: a section with a field table
//!    and an example line, and the schema entry. `tests/trace_schema.rs` fails until the docs,
//!    the schema and [`Kind::ALL`] agree and the example reads clean.
//! 4. `generate.rs`: a weight and a line shape (`tests/trace_broken.rs` checks every kind is
//!    generated), and a line in `tests/trace_roundtrip.rs` (it checks every kind is covered).

pub mod brief;
pub mod event;
mod fields;
pub mod follow;
pub mod gate;
pub mod generate;
pub mod import;
pub mod index;
pub mod live;
mod load;
pub mod notes;
pub mod otlp_http;
pub mod provenance;
pub mod reader;
pub mod sha256;
pub mod store;
/// Random hostile JSONL streams for the property tests of the loads here and in the viewer.
#[cfg(test)]
#[path = "../../tests/support/streams.rs"]
pub(crate) mod streams;
pub mod time;

pub use brief::{Brief, BriefItem, Gist};
pub use event::{Body, Event, FORMAT_VERSION, FileName, Kind, Origin, Timestamp};
pub use index::{Index, TraceLog};
pub use load::{
    lead_session, read_all, read_all_briefs, read_all_briefs_lean, read_all_briefs_led,
    read_places_briefs, read_session_briefs,
};
pub use reader::{
    DEFAULT_MAX_LINE_BYTES, EXCERPT_BYTES, Excerpt, Item, Problem, ProblemCode, Reader,
    ReaderConfig, Severity,
};
pub use store::{EventStore, SharedSource, SourceId};
