//! The OpenTelemetry Python SDK in a virtual environment under `target/otel-venv`, installed
//! from PyPI on first use (`opentelemetry-sdk`, `opentelemetry-exporter-otlp-proto-http`).
//! `.ci/run` installs it the same way before the tests. Included with `#[path]`.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The venv's python, with the SDK importable; `None` (after saying so) when it cannot be
/// had. Under CI a missing SDK is a failure: a CI run that skips the real-client tests
/// proves nothing.
pub fn python(suite: &str) -> Option<PathBuf> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/otel-venv");
    let py = venv.join("bin/python");
    let ready = || {
        Command::new(&py)
            .args([
                "-c",
                "import opentelemetry.sdk, opentelemetry.exporter.otlp.proto.http, google.protobuf",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ready() {
        let _ = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status();
        let _ = Command::new(venv.join("bin/pip"))
            .args([
                "install",
                "-q",
                "--disable-pip-version-check",
                "opentelemetry-sdk",
                "opentelemetry-exporter-otlp-proto-http",
            ])
            .status();
    }
    if ready() {
        // What scripts/setup-otel.sh leaves: build.rs stops listing the tests as ignored.
        let _ = std::fs::write(venv.join(".doxascope-ready-otel"), "");
        return Some(py);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "{suite}: the OpenTelemetry Python SDK could not be installed into target/otel-venv, \
         and under CI this test must run"
    );
    eprintln!(
        "skipping {suite}: the OpenTelemetry Python SDK is not installed and PyPI could not \
         be reached (pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http \
         into target/otel-venv)"
    );
    None
}

/// The scripted agent.
pub fn agent_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/otel_agent.py")
}

/// A free loopback port (bound and released: another process may take it first, rarely).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}
