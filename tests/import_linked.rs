//! Linked conversations from OpenTelemetry: traces whose spans share
//! `gen_ai.conversation.id` (or `session.id`) are sessions of their own, each carrying the
//! conversation on its `session` event, and the session list and the header treat them as
//! parts of one conversation; `view --session` opens one of them by name and refuses a name
//! the file does not hold, listing the names.

use std::process::Command;

use doxascope::model::Model;
use doxascope::model::sessions::{Part, conversation_of, parts};
use doxascope::trace::import::{self, Format};
use doxascope::tui::app::App;
use doxascope::tui::data::Store;
use doxascope::tui::theme::Theme;
use serde_json::{Value, json};

/// One trace of one chat span, from `service`, starting `start_s` seconds into the day,
/// with `attr` set when given.
fn trace(service: &str, trace_id: &str, start_s: u64, attr: Option<(&str, &str)>) -> Value {
    let ns = |s: u64| (1_767_225_600u64 + s).to_string() + "000000000";
    let mut attrs = vec![
        json!({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}),
        json!({"key": "gen_ai.request.model", "value": {"stringValue": "m"}}),
    ];
    if let Some((k, v)) = attr {
        attrs.push(json!({"key": k, "value": {"stringValue": v}}));
    }
    json!({
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "t"}, "spans": [{
            "traceId": trace_id,
            "spanId": format!("{:016x}", start_s + 1),
            "name": "chat m",
            "kind": 3,
            "startTimeUnixNano": ns(start_s),
            "endTimeUnixNano": ns(start_s + 1),
            "attributes": attrs,
        }]}]
    })
}

/// Three traces: two turns of conversation `chat-7` (one naming it by
/// `gen_ai.conversation.id`, the other by `session.id`) around a trace of no conversation.
fn otlp() -> Vec<u8> {
    let doc = json!({"resourceSpans": [
        trace("alpha", "0000000000000000000000000000000a", 0, Some(("gen_ai.conversation.id", "chat-7"))),
        trace("mid", "0000000000000000000000000000000b", 10, None),
        trace("zeta", "0000000000000000000000000000000c", 20, Some(("session.id", "chat-7"))),
    ]});
    serde_json::to_vec(&doc).unwrap()
}

fn imported() -> Vec<u8> {
    import::import(Format::Otlp, &otlp(), "linked.json")
        .expect("the file imports")
        .v1
}

#[test]
fn traces_of_one_conversation_are_linked_sessions() {
    let m = Model::from_bytes("linked.json", &imported());
    let names: Vec<&str> = m.timelines().iter().map(|t| t.name()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let convs: Vec<Option<String>> = m
        .timelines()
        .iter()
        .map(|t| conversation_of(m.log(), t))
        .collect();
    let by_name = |n: &str| convs[names.iter().position(|x| x.starts_with(n)).unwrap()].clone();
    assert_eq!(by_name("alpha").as_deref(), Some("chat-7"));
    assert_eq!(by_name("zeta").as_deref(), Some("chat-7"));
    assert_eq!(by_name("mid"), None);
    let refs: Vec<Option<&str>> = convs.iter().map(Option::as_deref).collect();
    let p = parts(&refs);
    let at = |n: &str| p[names.iter().position(|x| x.starts_with(n)).unwrap()];
    assert_eq!(at("alpha"), Some(Part { index: 1, of: 2 }));
    assert_eq!(at("zeta"), Some(Part { index: 2, of: 2 }));
    assert_eq!(at("mid"), None);
}

#[test]
fn the_list_keeps_the_conversation_together_and_the_header_names_it() {
    let mut app = App::new(
        Store::from_bytes("linked.json", &imported()),
        Theme::builtin("light").unwrap(),
    );
    app.apply(doxascope::tui::keys::Action::Sessions);
    let rows: Vec<String> = app
        .picker
        .as_ref()
        .unwrap()
        .rows(&app)
        .into_iter()
        .map(|r| r.name)
        .collect();
    let first = |n: &str| rows.iter().position(|r| r.starts_with(n)).unwrap();
    assert_eq!(first("zeta"), first("alpha") + 1, "{rows:?}");
    let screen = doxascope::tui::ui::render_text(&mut app, 140, 30);
    let header = screen.lines().next().unwrap_or_default();
    assert!(
        header.contains("conversation chat-7, part 1 of 2"),
        "{header}"
    );
}

fn view(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn view_session_with_an_unknown_name_is_an_error_listing_the_names() {
    let dir = tempfile::tempdir().unwrap();
    let otel = dir.path().join("linked.json");
    std::fs::write(&otel, otlp()).unwrap();
    let v1 = dir.path().join("run.jsonl");
    std::fs::write(
        &v1,
        "{\"kind\":\"thought\",\"session\":\"s1\",\"text\":\"x\"}\n\
         {\"kind\":\"thought\",\"session\":\"s2\",\"text\":\"y\"}\n",
    )
    .unwrap();
    // An imported file is read once: its names are known before the view starts.
    let (code, err) = view(&["view", "--session", "nope", otel.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no session named \"nope\"; sessions: "),
        "{err}"
    );
    assert!(err.contains("alpha ") && err.contains("zeta "), "{err}");
    let (code, err) = view(&[
        "view",
        "--no-follow",
        "--session",
        "s3",
        v1.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no session named \"s3\"; sessions: s1, s2"),
        "{err}"
    );
}

/// A coding agent's trace sent only as log records: its session takes the conversation
/// the records name, so it links to the other parts all the same.
#[test]
fn a_trace_of_log_records_only_takes_their_conversation() {
    let rec = |trace: &str, t: u64| {
        json!({
            "timeUnixNano": format!("{}000000000", 1_767_225_600u64 + t),
            "traceId": trace,
            "eventName": "agent.turn",
            "severityNumber": 9,
            "body": {"stringValue": "did a turn"},
            "attributes": [{"key": "gen_ai.conversation.id", "value": {"stringValue": "chat-9"}}],
        })
    };
    let doc = json!({"resourceLogs": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "coder"}}]},
        "scopeLogs": [{"scope": {"name": "t"}, "logRecords": [
            rec("000000000000000000000000000000d1", 0),
            rec("000000000000000000000000000000d2", 5),
        ]}]
    }]});
    let v1 = import::import(
        Format::Otlp,
        &serde_json::to_vec(&doc).unwrap(),
        "logs.json",
    )
    .expect("the file imports")
    .v1;
    let m = Model::from_bytes("logs.json", &v1);
    let convs: Vec<Option<String>> = m
        .timelines()
        .iter()
        .map(|t| conversation_of(m.log(), t))
        .collect();
    assert_eq!(
        convs,
        [Some("chat-9".to_string()), Some("chat-9".to_string())]
    );
}
