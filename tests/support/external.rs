//! Where the held-out real traces of other tools are.
//!
//! They are public files of other projects (OpenTelemetry GenAI, Inspect, Langfuse,
//! LangSmith, Letta, Graphiti), kept beside the repository in `../shared/external-traces/`
//! with a SOURCES.md giving each one's origin and licence, and never copied into it. Tests
//! read them in place: `$DOXASCOPE_EXTERNAL_TRACES`, else `../shared/external-traces` beside
//! the checkout, else `../../shared/external-traces` (a worktree one level deeper).
//!
//! Without them the tests that need them are listed as ignored, with the reason:
//! `build.rs` sets `cfg(doxascope_no_external)` (tests carry
//! `#[cfg_attr(doxascope_no_external, ignore = "...")]`). Unlike tmux they cannot be
//! installed, so their absence is not a failure under CI either; the importers' own
//! fixtures and fuzz targets still run.

#![allow(dead_code)]

use std::path::PathBuf;

/// The directory of the external traces, if it is there.
pub fn dir() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    [
        std::env::var_os("DOXASCOPE_EXTERNAL_TRACES").map(PathBuf::from),
        Some(root.join("../shared/external-traces")),
        Some(root.join("../../shared/external-traces")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.join("SOURCES.md").is_file())
}

/// A file under the external traces (`inspect/log_formats.eval`); `None` without them, after
/// saying so on stderr.
pub fn path(rel: &str) -> Option<PathBuf> {
    match dir() {
        Some(d) => Some(d.join(rel)),
        None => {
            eprintln!("skipping: the external traces (../shared/external-traces) are not here");
            None
        }
    }
}
