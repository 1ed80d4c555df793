//! The official MCP Python SDK (`mcp` from PyPI) in a virtual environment under
//! `target/mcp-venv`, made by `scripts/setup-mcp.sh` (which `.ci/run` calls), on first use
//! here too. Included with `#[path]`.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The venv's python, with the SDK importable; `None` (after saying so) when it cannot be
/// had. Under CI a missing SDK is a failure: a CI run that skips the real-client tests
/// proves nothing.
pub fn python(suite: &str) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let py = root.join("target/mcp-venv/bin/python");
    let ready = || {
        Command::new(&py)
            .args(["-c", "import mcp, mcp.client.stdio"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ready() {
        let _ = Command::new("bash")
            .arg(root.join("scripts/setup-mcp.sh"))
            .status();
    }
    if ready() {
        return Some(py);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "{suite}: the MCP Python SDK could not be installed into target/mcp-venv, and under \
         CI this test must run"
    );
    eprintln!(
        "skipping {suite}: the MCP Python SDK is not installed and PyPI could not be reached \
         (scripts/setup-mcp.sh)"
    );
    None
}
