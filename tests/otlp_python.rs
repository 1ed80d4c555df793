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

fn run(encoding: &str, fail_tool: bool) {
    let Some(py) = venv::python("otlp_python") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let port = venv::free_port();
    let t = Tmux::new(&format!(
        "otlp15-{encoding}{}",
        if fail_tool { "-fail" } else { "" }
    ));
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
        .args(fail_tool.then_some("--fail-tool"))
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
    let mut want: std::collections::BTreeMap<String, usize> = [
        ("session", TRACES),
        ("intention", TRACES),
        ("llm_call", TRACES * (TOOLS + 1)),
        ("thought", TRACES * (TOOLS + 1)),
        ("tool_call", TRACES * TOOLS),
        // Each tool's result, as an observation (`docs/import.md`).
        ("belief", TRACES * TOOLS),
        ("score", TRACES),
        ("answer", TRACES),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    if fail_tool {
        // The exception the SDK recorded on the failed span; the failed call observed
        // nothing, so it wrote no belief.
        want.insert("log".into(), 1);
        *want.get_mut("belief").expect("beliefs") -= 1;
    }
    assert_eq!(counts, want);
    // What audit read: every session, every event, and no finding about them.
    let audit: serde_json::Value = serde_json::from_str(&text).expect("audit --json");
    let sessions = audit["summary"]["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), TRACES, "{text}");
    let events: u64 = sessions.iter().filter_map(|s| s["events"].as_u64()).sum();
    assert_eq!(events as usize, want.values().sum::<usize>(), "{text}");
    assert_eq!(audit["summary"]["errors"], 0, "{text}");
    if !fail_tool {
        assert_eq!(audit["summary"]["warnings"], 0, "{text}");
        assert_eq!(a.status.code(), Some(0), "{text}");
        return;
    }
    // The failed tool span is one finding (its exception log folded in), and audit fails.
    assert_eq!(a.status.code(), Some(1), "{text}");
    assert_eq!(audit["summary"]["warnings"], 1, "{text}");
    assert_eq!(
        audit["summary"]["by_code"],
        serde_json::json!({"tool-call-failed": 1}),
        "{text}"
    );
    let f = &audit["findings"][0];
    assert!(
        f["message"]
            .as_str()
            .is_some_and(|m| m.contains("lookup") && m.contains("lookup service down")),
        "{f}"
    );
    // Every call and run carries how long it took.
    for f in &files {
        for line in std::fs::read_to_string(f).expect("spool").lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a v1 line");
            if ["llm_call", "tool_call", "intention"].contains(&v["kind"].as_str().unwrap_or("")) {
                assert!(v["duration_ms"].as_f64().is_some(), "{line}");
            }
        }
    }
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
    run("proto", false);
}

/// A tool that raises inside its span (the SDK sets status ERROR and records the exception)
/// is a `tool-call-failed` finding of the live session, and `audit` exits 1.
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
#[test]
fn python_sdk_failed_tool_span_is_a_finding_live() {
    if tmux::missing("otlp_python") {
        return;
    }
    run("proto", true);
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
    run("json", false);
}
