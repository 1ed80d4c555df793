//! The logic layer: the formula language and everything that reasons about it.
//!
//! Nothing here performs I/O. Formulas are parsed into [`formula::Formula`], quantifiers are
//! grounded over the active domain, and the ground formulas are Tseitin-encoded into one
//! incremental varisat solver per belief state.

pub mod formula;
pub mod ground;
pub mod parse;
pub mod print;
