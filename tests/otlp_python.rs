//! The real client: the OpenTelemetry Python SDK (BatchSpanProcessor) sends GenAI spans of a
//! scripted agent (`tests/support/otel_agent.py`) to the TUI started with
//! `--listen otlp:127.0.0.1:PORT` in tmux. The traces appear as live sessions on screen,
//! and every span arrives: the spool files the TUI wrote (its raw live streams, v1) are
//! opened by `doxascope audit` and counted kind by kind against what the agent sent.
//!
//! - protobuf: the SDK's own OTLP/HTTP exporter: proves the receiver speaks the protocol
//!   the SDKs (and the Collector's `otlphttp` exporter) use, including their retry on 429;
//! - JSON: the SDK's OTLP encoder, written as proto3 JSON by protobuf's `json_format`,
//!   gzip'd (the SDK has no JSON exporter): proves the JSON path, gzip and base64 ids.
//!
//! Listed as ignored, with the reason, without tmux or without the SDK (`scripts/setup-otel.sh`
//! installs it; PyPI unreachable); failing in either case under CI.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/tmux.rs"]
mod tmux;
#[path = "support/otel_venv.rs"]
mod venv;

use tmux::Tmux;

const TRACES: usize = 12;
const TOOLS: usize = 2;

fn spool_files(cache: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let live = cache.join("doxascope/live");
    for run in std::fs::read_dir(&live).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(run.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push(f.path());
        }
    }
    out.sort();
    out
}

fn run(encoding: &str) {
    let Some(py) = venv::python("otlp_python") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let port = venv::free_port();
    let t = Tmux::new(&format!("otlp15-{encoding}"));
    t.start_sized(
        &format!(
            "env XDG_CACHE_HOME='{}' '{}' view --listen otlp:127.0.0.1:{port}",
            cache.display(),
            tmux::bin()
        ),
        200,
        50,
    );
    t.wait_for("the receiver to listen", 20, |s| {
        s.contains(&format!("listening otlp:127.0.0.1:{port}"))
    });
    let out = Command::new(&py)
        .arg(venv::agent_script())
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(encoding)
        .arg(TRACES.to_string())
        .args(["--tools", &TOOLS.to_string()])
        .output()
        .expect("run the agent");
    assert!(
        out.status.success(),
        "the agent failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let per_trace = 1 + 2 * TOOLS + 1;
    // Made and exported: the SDK dropped none of them on its side.
    let n = TRACES * per_trace;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("sent {n} exported {n}")
    );
    // On screen: the traces as live sessions of the test agent, every one ended once its
    // root span was in. "0 open" alone also holds before the first span is drawn (the
    // agent has returned, the frame not yet redrawn), so the agent's name is waited for too.
    t.wait_for("every trace to end", 30, |s| {
        s.contains(&format!("listening otlp:127.0.0.1:{port} (0 open"))
            && s.contains("otel-test-agent")
    });
    t.keys(&["q"]);
    let start = Instant::now();
    while t.run(&["list-sessions"]).status.success() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let files = spool_files(&cache);
    assert_eq!(files.len(), TRACES, "one spool file per trace: {files:?}");
    // `audit` reads every spooled session; counted per kind, nothing is missing.
    let a = Command::new(tmux::bin())
        .arg("audit")
        .arg("--json")
        .args(&files)
        .output()
        .expect("audit");
    let text = String::from_utf8_lossy(&a.stdout);
    assert!(
        a.status.code().is_some_and(|c| c <= 1),
        "{text}{}",
        String::from_utf8_lossy(&a.stderr)
    );
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for f in &files {
        for line in std::fs::read_to_string(f).expect("spool").lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a v1 line");
            *counts
                .entry(v["kind"].as_str().unwrap_or("").to_string())
                .or_default() += 1;
        }
    }
    let want: std::collections::BTreeMap<String, usize> = [
        ("session", TRACES),
        ("intention", TRACES),
        ("llm_call", TRACES * (TOOLS + 1)),
        ("thought", TRACES * (TOOLS + 1)),
        ("tool_call", TRACES * TOOLS),
        ("score", TRACES),
        ("answer", TRACES),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    assert_eq!(counts, want);
    // What audit read: every session, every event, and no finding about them.
    let audit: serde_json::Value = serde_json::from_str(&text).expect("audit --json");
    let sessions = audit["summary"]["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), TRACES, "{text}");
    let events: u64 = sessions.iter().filter_map(|s| s["events"].as_u64()).sum();
    assert_eq!(events as usize, want.values().sum::<usize>(), "{text}");
    assert_eq!(audit["summary"]["errors"], 0, "{text}");
    assert_eq!(audit["summary"]["warnings"], 0, "{text}");
}

#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
#[cfg_attr(
    all(doxascope_no_otel, not(doxascope_no_tmux)),
    ignore = "the OpenTelemetry Python SDK is not installed: run scripts/setup-otel.sh (needs PyPI; CI installs it)"
)]
#[test]
fn python_sdk_protobuf_spans_reach_the_tui_and_audit() {
    if tmux::missing("otlp_python") {
        return;
    }
    run("proto");
}

#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
#[cfg_attr(
    all(doxascope_no_otel, not(doxascope_no_tmux)),
    ignore = "the OpenTelemetry Python SDK is not installed: run scripts/setup-otel.sh (needs PyPI; CI installs it)"
)]
#[test]
fn python_sdk_json_spans_reach_the_tui_and_audit() {
    if tmux::missing("otlp_python") {
        return;
    }
    run("json");
}
