//! The real client for two things GenAI instrumentations send apart from the span they
//! concern (`tests/support/otel_response_agent.py`, the OpenTelemetry Python SDK):
//!
//! - evaluations (`gen_ai.evaluation.result` log records) that name only the model's
//!   `gen_ai.response.id`, emitted in the agent's span or in no span at all, and before or
//!   after the call: each scores the `llm_call` with that response id, the failing one a
//!   `score-failed` finding on it;
//! - a model call's `gen_ai.client.inference.operation.details` record sent after its span:
//!   live it amends the call shown (`x_amends`), it is not a second call, so the calls and
//!   tokens are counted once, and the run still gets its question.
//!
//! Read from an OTLP JSON-lines file and live by the receiver. Skipped, with a message,
//! without the SDK (PyPI unreachable); failing then under CI.

use std::process::Command;
use std::time::Duration;

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, audit};
use doxascope::model::{scores, usage};
use doxascope::trace::import::{self, Format};
use doxascope::trace::live::{ListenAddr, Live, LiveConfig, LiveEvent};
use doxascope::trace::{Event, Item};
use serde_json::Value;

#[path = "support/otel_venv.rs"]
mod venv;

fn script() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support/otel_response_agent.py")
}

fn json(ev: &Event) -> Value {
    serde_json::from_str(&ev.to_json_line()).expect("an event as JSON")
}

/// What the session must show wherever it was read.
fn assert_read(model: &Model) {
    let tl = model
        .timelines()
        .iter()
        .find(|t| !t.scores().is_empty())
        .expect("a session with scores");
    let log = model.log();
    let at = |step: u32| {
        json(
            &log.events
                .load(tl.event_pos_at(step).unwrap() as usize)
                .unwrap(),
        )
    };
    let evs: Vec<Value> = (1..=tl.event_positions().len() as u32).map(at).collect();
    // Two model calls, counted once each with their own tokens.
    let t = usage::totals(log, tl);
    assert_eq!(t.calls, 2, "{evs:#?}");
    assert_eq!(t.session.input, Some(51), "{evs:#?}");
    assert_eq!(t.session.output, Some(6));
    let calls: Vec<&Value> = evs
        .iter()
        .filter(|e| e["kind"] == "llm_call" && e.get("x_amends").is_none())
        .collect();
    assert_eq!(calls.len(), 2, "{evs:#?}");
    // The run has its question, which only the details records carry.
    let run = evs
        .iter()
        .find(|e| e["kind"] == "intention")
        .expect("the run");
    assert_eq!(run["goal"], "What colour is the sky?");
    // Each score is on the model call with its response id, whichever span it came in.
    let all = scores::of_session(log, tl);
    assert_eq!(all.len(), 2, "{all:#?}");
    for (name, resp, passed) in [
        ("relevance", "resp-1", true),
        ("correctness", "resp-2", false),
    ] {
        let s = all.iter().find(|s| s.score.name == name).expect(name);
        assert_eq!(s.passed, Some(passed), "{name}");
        let target = at(s
            .target
            .unwrap_or_else(|| panic!("{name} has no target: {evs:#?}")));
        assert_eq!(target["kind"], "llm_call", "{name}");
        assert_eq!(target["response_id"], resp, "{name}");
    }
    let failing = all.iter().find(|s| s.passed == Some(false)).unwrap();
    let rep = audit(model, &AuditOptions::default());
    let failed: Vec<_> = rep
        .findings
        .iter()
        .filter(|f| f.code.to_string() == "score-failed")
        .collect();
    assert_eq!(failed.len(), 1, "{:#?}", rep.findings);
    assert_eq!(failed[0].step, failing.target);
}

#[test]
#[cfg_attr(
    doxascope_no_otel,
    ignore = "the OpenTelemetry Python SDK is not installed: run scripts/setup-otel.sh (needs PyPI; CI installs it)"
)]
fn sdk_response_scores_and_late_details_in_a_file() {
    let Some(py) = venv::python("otlp_python_responses") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("resp.jsonl");
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
    let bytes = std::fs::read(&path).expect("the file");
    assert_eq!(import::detect(&path, &bytes), Format::Otlp);
    let imported = import::import(Format::Otlp, &bytes, "resp.jsonl").expect("import");
    let model = Model::from_bytes("resp.jsonl", &imported.v1);
    assert_read(&model);
    // A file holds the span and its record together: read as one call, nothing amended.
    assert!(!String::from_utf8_lossy(&imported.v1).contains("x_amends"));
}

#[test]
#[cfg_attr(
    doxascope_no_otel,
    ignore = "the OpenTelemetry Python SDK is not installed: run scripts/setup-otel.sh (needs PyPI; CI installs it)"
)]
fn sdk_response_scores_and_late_details_sent_live() {
    let Some(py) = venv::python("otlp_python_responses") else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let events: Vec<Event> = rt.block_on(async {
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
        let mut evs: Vec<Event> = Vec::new();
        // Until the session ended (its root span came and the trace went quiet): anything
        // counted twice would be in by then.
        loop {
            let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out; so far: {evs:#?}"))
                .expect("hub alive");
            match ev {
                LiveEvent::Items { items, .. } => {
                    for it in items {
                        let Item::Event(e) = it else {
                            panic!("bad line: {it:?}")
                        };
                        evs.push(e);
                    }
                }
                LiveEvent::Rejected { reason, .. } => panic!("refused: {reason:?}"),
                LiveEvent::Closed { .. } => break,
                _ => {}
            }
        }
        drop(l);
        evs
    });
    let text: String = events.iter().map(|e| e.to_json_line() + "\n").collect();
    let model = Model::from_bytes("live", text.as_bytes());
    assert_read(&model);
    // The first call's record came after its span: it amends that call, with its content.
    let amends: Vec<Value> = events
        .iter()
        .map(json)
        .filter(|e| e.get("x_amends").is_some())
        .collect();
    assert_eq!(amends.len(), 1, "{text}");
    assert_eq!(amends[0]["kind"], "llm_call");
    assert_eq!(amends[0]["output"], "Blue.");
    assert!(amends[0].get("input_tokens").is_none());
    let first = events
        .iter()
        .map(json)
        .find(|e| e["kind"] == "llm_call" && e["response_id"] == "resp-1" && e.get("id").is_some())
        .expect("the first call");
    assert_eq!(amends[0]["x_amends"], first["id"]);
}
