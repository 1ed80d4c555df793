//! Build script: tells the test suite whether tmux, Chromium, Inspect AI, dratify, LangGraph
//! and the OpenTelemetry Python SDK are here.
//!
//! The end-to-end tests drive the real binary in tmux, and the report's test loads it in
//! headless Chromium (`cfg(doxascope_no_chromium)`, the same way). Without tmux they cannot
//! run, and a test that returns early is reported as passed, which hides the gap. With
//! `cfg(doxascope_no_tmux)` they are marked `#[ignore]` instead, so `cargo test` lists each as
//! "ignored, tmux is not installed" and counts them in its summary. Under CI (`CI` set and not
//! `false`/`0`) the cfg is never set: the tests run and fail when tmux is missing, because a
//! CI run that silently skips them proves nothing.

use std::process::Command;

/// The Inspect AI version `scripts/setup-inspect.sh` installs (its marker names it).
const INSPECT_VERSION: &str = "0.3.285";

/// Whether the held-out traces of other tools are beside the checkout (see
/// `tests/support/external.rs`, which looks in the same places).
fn external_traces() -> bool {
    println!("cargo::rerun-if-env-changed=DOXASCOPE_EXTERNAL_TRACES");
    let root = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let candidates = [
        std::env::var_os("DOXASCOPE_EXTERNAL_TRACES").map(std::path::PathBuf::from),
        Some(root.join("../shared/external-traces")),
        Some(root.join("../../shared/external-traces")),
    ];
    candidates
        .into_iter()
        .flatten()
        .any(|p| p.join("SOURCES.md").is_file())
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_tmux)");
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_chromium)");
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_external)");
    if !external_traces() {
        println!("cargo::rustc-cfg=doxascope_no_external");
        println!(
            "cargo::warning=../shared/external-traces is not here: the tests on other tools' real \
             traces will be ignored"
        );
    }
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_inspect)");
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_otel)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=PATH");
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    let tmux = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .any(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if !ci && !chromium {
        println!("cargo::rustc-cfg=doxascope_no_chromium");
        println!(
            "cargo::warning=chromium is not installed: the report's browser test will be ignored"
        );
    }
    // Inspect AI for tests/inspect_client.rs: ready once scripts/setup-inspect.sh ran (it
    // touches this file afterwards, so this runs again). Under CI the test installs it
    // itself, and fails when it cannot.
    let venv = std::env::var("DOXASCOPE_INSPECT_VENV")
        .unwrap_or_else(|_| "target/inspect-venv".to_string());
    let marker = std::path::Path::new(&venv).join(format!(".doxascope-ready-{INSPECT_VERSION}"));
    println!("cargo::rerun-if-env-changed=DOXASCOPE_INSPECT_VENV");
    if !ci && !marker.exists() {
        println!("cargo::rustc-cfg=doxascope_no_inspect");
    }
    // dratify for tests/certificates_dratify.rs, the same way: ready once
    // scripts/setup-dratify.sh ran; under CI the test installs it itself.
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_dratify)");
    let drat = std::env::var("DOXASCOPE_DRAT_VENV").unwrap_or_else(|_| "target/drat-venv".into());
    println!("cargo::rerun-if-env-changed=DOXASCOPE_DRAT_VENV");
    if !ci
        && !std::path::Path::new(&drat)
            .join(".doxascope-ready-dratify-0.1.10")
            .exists()
    {
        println!("cargo::rustc-cfg=doxascope_no_dratify");
    }
    // LangGraph for tests/import_sources.rs: ready once scripts/setup-langgraph.sh ran (it
    // touches this file afterwards). Under CI the test installs it itself, and fails when it
    // cannot.
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_langgraph)");
    println!("cargo::rerun-if-env-changed=DOXASCOPE_LANGGRAPH_VENV");
    let lg_venv = std::env::var("DOXASCOPE_LANGGRAPH_VENV")
        .unwrap_or_else(|_| "target/langgraph-venv".to_string());
    let lg_marker = std::path::Path::new(&lg_venv).join(".doxascope-ready-langgraph-1.2.24");
    if !ci && !lg_marker.exists() {
        println!("cargo::rustc-cfg=doxascope_no_langgraph");
    }
    // The OpenTelemetry Python SDK for tests/otlp_python.rs: ready once
    // scripts/setup-otel.sh ran (it touches this file afterwards). Without it (PyPI
    // unreachable, say) the tests are listed as ignored with that reason, not passed.
    let otel = std::path::Path::new("target/otel-venv/.doxascope-ready-otel");
    if !ci && !otel.exists() {
        println!("cargo::rustc-cfg=doxascope_no_otel");
    }
    // LangGraph, smolagents, Strands and LlamaIndex for tests/frameworks_b.rs: ready once
    // scripts/setup-frameworks-b.sh ran (it touches this file afterwards). Without them the
    // tests are listed as ignored with that reason; under CI they run and fail.
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_fw_b)");
    if !ci && !std::path::Path::new("target/fw-b-venv/.doxascope-ready-frameworks-b").exists() {
        println!("cargo::rustc-cfg=doxascope_no_fw_b");
    }
    // pydantic-ai, the OpenAI Agents SDK and openai-v2 for tests/frameworks_a.rs: ready once
    // scripts/setup-frameworks-a.sh ran (it touches this file afterwards). Under CI the test
    // installs them itself, and fails when it cannot.
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_fw_a)");
    if !ci && !std::path::Path::new("target/fw-a-venv/.doxascope-ready-fw-a-1").exists() {
        println!("cargo::rustc-cfg=doxascope_no_fw_a");
    }
    // arize-phoenix-client for tests/phoenix_annotations.rs: ready once
    // scripts/setup-phoenix.sh ran (it touches this file afterwards). Under CI the test
    // installs it itself, and fails when it cannot.
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_phoenix)");
    if !ci && !std::path::Path::new("target/phoenix-venv/.doxascope-ready-phoenix-3.5.0").exists() {
        println!("cargo::rustc-cfg=doxascope_no_phoenix");
    }
    // The MCP Python SDK for tests/mcp_python.rs: ready once scripts/setup-mcp.sh ran (it
    // touches this file afterwards). Without it the test is listed as ignored with that
    // reason; under CI it runs (installing the SDK itself) and fails when it cannot.
    println!("cargo::rustc-check-cfg=cfg(doxascope_no_mcp)");
    let mcp = std::path::Path::new("target/mcp-venv/.doxascope-ready-mcp");
    if !ci && !mcp.exists() {
        println!("cargo::rustc-cfg=doxascope_no_mcp");
    }
    if !ci && !tmux {
        println!("cargo::rustc-cfg=doxascope_no_tmux");
        println!("cargo::warning=tmux is not installed: the end-to-end tests will be ignored");
    }
    if !ci && (!tmux || !chromium) {
        // Installing either changes a directory on PATH: look again then. (Only while one is
        // missing: a removed tmux is caught at run time by `tests/support/tmux.rs`, a removed
        // Chromium by the report's test itself.)
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path).filter(|d| d.is_dir()) {
                println!("cargo::rerun-if-changed={}", dir.display());
            }
        }
    }
}
