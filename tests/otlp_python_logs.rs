//! The real client for OTLP logs: the OpenTelemetry Python SDK's `OTLPLogExporter` (and its
//! `OTLPSpanExporter`) send a model call whose message content goes only as log records
//! (`tests/support/otel_logs_agent.py`: `gen_ai.system.message`, `gen_ai.user.message`,
//! `gen_ai.choice`, the `gen_ai.client.inference.operation.details` event, and a coding
//! agent's error event outside any span).
//!
//! - live: to the receiver (`--listen otlp:`, in process), where the records join the
//!   session of the trace they were emitted in, the span-less event by its
//!   `gen_ai.conversation.id`;
//! - file: the same telemetry as OTLP JSON lines (the Collector file exporter's shape),
//!   imported: the records join their trace's session, the span-less event by its
//!   `gen_ai.conversation.id`.
//!
//! Skipped, with a message, without the SDK (PyPI unreachable); failing then under CI.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use doxascope::trace::import::{self, Format};
use doxascope::trace::live::{ListenAddr, Live, LiveConfig, LiveEvent};
use doxascope::trace::{Item, Reader, ReaderConfig};

#[path = "support/otel_venv.rs"]
mod venv;

fn script() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/otel_logs_agent.py")
}

fn json(ev: &doxascope::trace::Event) -> serde_json::Value {
    serde_json::from_str(&ev.to_json_line()).expect("an event as JSON")
}

/// What a session must show of the model call, wherever it was read.
fn assert_model_call(evs: &[serde_json::Value]) {
    let logs: Vec<&serde_json::Value> = evs.iter().filter(|e| e["kind"] == "log").collect();
    let msg = |event: &str| {
        logs.iter()
            .find(|l| l["x_event"] == event)
            .unwrap_or_else(|| panic!("no {event} record in {evs:#?}"))
    };
    assert_eq!(
        msg("gen_ai.system.message")["message"],
        "system: You answer in one word."
    );
    assert_eq!(
        msg("gen_ai.user.message")["message"],
        "user: What colour is the sky?"
    );
    assert_eq!(
        msg("gen_ai.choice")["message"],
        "assistant: Blue. [calls look_up]"
    );
    // The messages belong to the chat span: the model call's own event.
    let call = evs
        .iter()
        .find(|e| e["kind"] == "llm_call" && e["id"].is_string())
        .expect("the chat span's llm_call");
    assert_eq!(msg("gen_ai.user.message")["x_span"], call["id"]);
    // The details event describes the chat span's call: read with it, one model call with
    // the record's content and tokens, not a second call.
    assert_eq!(
        evs.iter().filter(|e| e["kind"] == "llm_call").count(),
        1,
        "{evs:#?}"
    );
    assert_eq!(call["input_tokens"], 21, "{call}");
    assert_eq!(
        call["input"][0]["text"], "What colour is the sky?",
        "{call}"
    );
    assert!(
        evs.iter()
            .any(|e| e["kind"] == "thought" && e["text"] == "Blue."),
        "{evs:#?}"
    );
    // The content came: no warning that it was not captured.
    assert!(
        !logs.iter().any(|l| l["message"]
            .as_str()
            .is_some_and(|m| m.contains("not captured"))),
        "{evs:#?}"
    );
    assert!(evs.iter().any(|e| e["kind"] == "intention"), "{evs:#?}");
    // The run's answer: the call's output, known now that the record is read with its span.
    assert!(
        evs.iter()
            .any(|e| e["kind"] == "answer" && e["text"] == "Blue."),
        "{evs:#?}"
    );
}

#[test]
fn python_log_exporter_records_join_their_trace_live() {
    let Some(py) = venv::python("otlp_python_logs") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let (live, mut rx) = Live::new(LiveConfig::default());
        let addr: ListenAddr = "otlp:127.0.0.1:0".parse().expect("addr");
        let l = live.listen(&addr).await.expect("listen");
        let ListenAddr::Otlp(a) = l.local_addr().clone() else {
            panic!("not otlp")
        };
        let out = tokio::task::spawn_blocking(move || {
            Command::new(&py)
                .arg(script())
                .arg("live")
                .arg(format!("http://{a}"))
                .output()
                .expect("run the agent")
        })
        .await
        .expect("join");
        assert!(
            out.status.success(),
            "the agent failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "logs 5 exported 5"
        );
        // Every answer was given once the lines were in the sessions' streams: wait for them.
        let mut names = BTreeMap::new();
        let mut by: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
        // session, 3 message logs, the llm_call (with the details record's content), its
        // thought, intention, answer, the coding agent's log.
        let want = |by: &BTreeMap<String, Vec<serde_json::Value>>| {
            by.values().map(Vec::len).sum::<usize>() >= 9
        };
        while !want(&by) {
            let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out; so far: {by:#?}"))
                .expect("hub alive");
            match ev {
                LiveEvent::Opened { session, name, .. } | LiveEvent::Named { session, name } => {
                    names.insert(session, name);
                }
                LiveEvent::Items { session, items, .. } => {
                    for it in items {
                        let Item::Event(e) = it else {
                            panic!("bad line: {it:?}")
                        };
                        by.entry(names.get(&session).cloned().unwrap_or_default())
                            .or_default()
                            .push(json(&e));
                    }
                }
                LiveEvent::Rejected { reason, .. } => panic!("refused: {reason:?}"),
                _ => {}
            }
        }
        let traced = by
            .iter()
            .find(|(n, _)| n.starts_with("otel-logs-agent "))
            .unwrap_or_else(|| panic!("no session of the trace: {by:#?}"));
        assert_model_call(traced.1);
        // The coding agent's event has no trace: it joins the trace whose spans named its
        // conversation (the root span was exported before the event was emitted).
        assert_eq!(by.len(), 1, "{by:#?}");
        let ev = traced
            .1
            .iter()
            .find(|e| e["x_event"] == "coder.tool_result")
            .unwrap_or_else(|| panic!("{by:#?}"));
        assert_eq!(ev["level"], "error");
        assert_eq!(ev["x_attributes"]["tool_name"], "Bash");
        drop(l);
    });
}

#[test]
fn python_log_exporter_file_imports_into_the_trace_session() {
    let Some(py) = venv::python("otlp_python_logs") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("collector.jsonl");
    let out = Command::new(&py)
        .arg(script())
        .arg("file")
        .arg(&path)
        .output()
        .expect("run the agent");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let bytes = std::fs::read(&path).expect("the file");
    assert_eq!(import::detect(&path, &bytes), Format::Otlp);
    // A file of log records alone is OpenTelemetry too.
    let logs_only = bytes.split(|b| *b == b'\n').nth(1).expect("the logs line");
    assert_eq!(import::detect(&path, logs_only), Format::Otlp);
    let alone = import::import(Format::Otlp, logs_only, "logs.jsonl").expect("import logs");
    let alone = String::from_utf8_lossy(&alone.v1).into_owned();
    assert!(
        alone.contains("user: What colour is the sky?") && alone.contains(&trace),
        "{alone}"
    );
    let imported = import::import(Format::Otlp, &bytes, "collector.jsonl").expect("import");
    assert!(imported.notes.is_empty(), "{:?}", imported.notes);
    let mut r = Reader::new("t", ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(&imported.v1, &mut items);
    r.finish(&mut items);
    let evs: Vec<serde_json::Value> = items
        .into_iter()
        .map(|it| match it {
            Item::Event(e) => json(&e),
            Item::Problem(p) => panic!("bad v1 line: {p:?}"),
        })
        .collect();
    let sessions: std::collections::BTreeSet<&str> =
        evs.iter().filter_map(|e| e["session"].as_str()).collect();
    assert_eq!(sessions.len(), 1, "one session: {sessions:?}");
    assert_eq!(evs[0]["meta"]["trace_id"], trace.as_str());
    assert_model_call(&evs);
    // The span-less event joined the trace by its conversation id.
    let ev = evs
        .iter()
        .find(|e| e["x_event"] == "coder.tool_result")
        .unwrap_or_else(|| panic!("{evs:#?}"));
    assert_eq!(ev["level"], "error");
    assert_eq!(ev["message"], "coder.tool_result");
}
