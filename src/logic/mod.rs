//! The logic layer: the formula language and everything that reasons about it.
//!
//! Nothing here performs I/O. Formulas are parsed into [`formula::Formula`], quantifiers are
//! grounded over the active domain, and the ground formulas are Tseitin-encoded into one
//! incremental varisat solver per belief state.

pub mod certificate;
pub mod cnf;
pub mod engine;
pub mod formula;
pub mod ground;
#[doc(hidden)]
pub mod oracle;
pub mod parse;
pub mod print;
pub mod solver;

/// Revision policies and graded beliefs are children of the engine (they read the state's
/// internals); their paths here stay as they were.
pub use engine::{grade, revise};
