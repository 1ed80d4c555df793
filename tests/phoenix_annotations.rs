//! OpenInference (Phoenix) span annotations sent by the real `arize-phoenix-client`
//! (`tests/support/phoenix_agent.py`) to the receiver behind `--listen otlp:`, on spans the
//! OpenTelemetry SDK sent there with OpenInference attributes: each annotation is a `score`
//! on the annotated span's event (label and score read by the one rule of `model::scores`);
//! the failing one is a `score-failed` finding on the model call, and `e` reaches it.
//!
//! Listed as ignored, with the reason, while the client is not installed
//! (`scripts/setup-phoenix.sh`); failing then under CI.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, audit};
use doxascope::model::scores;
use doxascope::trace::live::{ListenAddr, Live, LiveConfig, LiveEvent};
use doxascope::trace::{Event, Item};
use doxascope::tui::app::App;
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::theme::Theme;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

fn venv_python() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let py = root.join("target/phoenix-venv/bin/python");
    let ready = |py: &PathBuf| {
        Command::new(py)
            .args([
                "-c",
                "import phoenix.client, opentelemetry.sdk, opentelemetry.exporter.otlp.proto.http",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ready(&py) {
        let _ = Command::new("bash")
            .arg(root.join("scripts/setup-phoenix.sh"))
            .status();
    }
    if ready(&py) {
        return Some(py);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "phoenix_annotations: arize-phoenix-client could not be installed \
         (scripts/setup-phoenix.sh), and under CI this test must run"
    );
    eprintln!("skipping phoenix_annotations: run scripts/setup-phoenix.sh (needs PyPI)");
    None
}

fn json(ev: &Event) -> Value {
    serde_json::from_str(&ev.to_json_line()).expect("an event as JSON")
}

/// Runs the agent and its annotation client against a live receiver: the events shown, and
/// the model call's and the agent's span ids.
fn run() -> Option<(Vec<Event>, String, String)> {
    let py = venv_python()?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/phoenix_agent.py");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    Some(rt.block_on(async {
        let (live, mut rx) = Live::new(LiveConfig::default());
        let addr: ListenAddr = "otlp:127.0.0.1:0".parse().expect("addr");
        let l = live.listen(&addr).await.expect("listen");
        let ListenAddr::Otlp(a) = l.local_addr().clone() else {
            panic!("not otlp")
        };
        let out = tokio::task::spawn_blocking(move || {
            Command::new(&py)
                .arg(script)
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
        let said = String::from_utf8_lossy(&out.stdout).to_string();
        let ids: Vec<&str> = said.split_whitespace().collect();
        let mut evs: Vec<Event> = Vec::new();
        while evs.iter().filter(|e| e.kind_name() == "score").count() < 3 {
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
                _ => {}
            }
        }
        drop(l);
        (evs, ids[0].to_string(), ids[1].to_string())
    }))
}

#[test]
#[cfg_attr(
    doxascope_no_phoenix,
    ignore = "arize-phoenix-client is not installed: run scripts/setup-phoenix.sh (needs PyPI; CI installs it)"
)]
fn phoenix_client_annotations_are_scores_on_their_spans_and_e_reaches_the_failed_one() {
    let Some((events, llm_id, agent_id)) = run() else {
        return;
    };
    let text: String = events.iter().map(|e| e.to_json_line() + "\n").collect();
    let model = Model::from_bytes("live", text.as_bytes());
    let tl = &model.timelines()[0];
    let log = model.log();
    let at = |step: u32| {
        json(
            &log.events
                .load(tl.event_pos_at(step).unwrap() as usize)
                .unwrap(),
        )
    };
    let all = scores::of_session(log, tl);
    assert_eq!(all.len(), 3, "{text}");
    let get = |name: &str| all.iter().find(|s| s.score.name == name).expect(name);
    let wrong = get("correctness");
    assert_eq!(wrong.passed, Some(false));
    assert_eq!(wrong.score.source.as_deref(), Some("llm"));
    assert_eq!(
        wrong.score.explanation.as_deref(),
        Some("the capital of France is Paris")
    );
    let call = at(wrong.target.expect("on the model call"));
    assert_eq!(call["kind"], "llm_call");
    assert_eq!(call["id"], llm_id.as_str());
    let human = get("user_feedback");
    assert_eq!(human.passed, Some(true));
    assert_eq!(human.score.source.as_deref(), Some("human"));
    let run = at(human.target.expect("on the agent"));
    assert_eq!(run["kind"], "intention");
    assert_eq!(run["id"], agent_id.as_str());
    // A bare number is shown, never a verdict.
    let code = get("latency_check");
    assert_eq!(code.passed, None);
    assert_eq!(code.target, human.target);
    // The failing one is the audit's finding on the model call.
    let rep = audit(&model, &AuditOptions::default());
    let failed: Vec<_> = rep
        .findings
        .iter()
        .filter(|f| f.code.to_string() == "score-failed")
        .collect();
    assert_eq!(failed.len(), 1, "{:#?}", rep.findings);
    assert_eq!(failed[0].step, wrong.target);
    // And `e` stops on it in the viewer.
    highlight::load_now();
    let mut app = App::new(
        Store::from_bytes("live", text.as_bytes()),
        Theme::plain("dark"),
    );
    app.view_mut().follow = false;
    app.goto_step(1);
    let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    app.on_key(key('g'));
    let mut stops = Vec::new();
    for _ in 0..4 {
        app.on_key(key('e'));
        stops.push((app.step(), app.status.clone()));
    }
    assert!(
        stops
            .iter()
            .any(|(s, why)| Some(*s) == wrong.target && why.contains("score-failed")),
        "{stops:#?}"
    );
}
