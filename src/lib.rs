//! doxascope: inspect the belief states of LLM agents.
//!
//! The crate is layered, and each layer only depends on the ones above it in this list:
//!
//! - [`logic`]: formulas, grounding, CNF, the incremental SAT engine, revision, graded beliefs.
//!   No I/O.
//! - [`trace`]: the trace format v1 (event schema) and the loss-free streaming reader.
//! - [`cli`]: the headless subcommands (`validate`, ...), exit codes and messages.
//!
//! See `docs/architecture.md` for how data flows between them.

#![forbid(unsafe_code)]

pub mod cli;
pub mod demo;
pub mod logic;
pub mod model;
pub mod repl;
pub mod sanitize;
pub mod trace;
