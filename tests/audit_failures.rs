//! Failures are findings (issue 26, item 1): in every format doxascope reads, a failed tool
//! call is a `tool-call-failed` finding, `doxascope audit` fails on it, the timeline's
//! `level:error` filter keeps it and marks it with a glyph, and `e` reaches it.
//!
//! Each format is tested on a real file of that tool (`../shared/external-traces/`, read in
//! place) with one of its tool calls made to fail the way that tool writes a failure; Inspect's
//! own log of tool errors is used as it is.

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, Finding, audit};
use doxascope::trace::import::{Format, import};
use doxascope::tui::app::App;
use doxascope::tui::audit_job::Auditor;
use doxascope::tui::data::Store;
use doxascope::tui::panes::timeline::TimelineFilter;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Value, json};

#[path = "support/external.rs"]
mod external;

fn real(rel: &str) -> Vec<u8> {
    let dir = external::dir().expect(
        "the external traces (../shared/external-traces); without them this test is ignored",
    );
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn json_of(rel: &str) -> Value {
    serde_json::from_slice(&real(rel)).unwrap()
}

/// The v1 the importer of `format` makes of `bytes`.
fn v1(format: Format, bytes: &[u8], name: &str) -> Vec<u8> {
    import(format, bytes, name)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .v1
}

fn findings(name: &str, v1: &[u8]) -> Vec<Finding> {
    audit(&Model::from_bytes(name, v1), &AuditOptions::default()).findings
}

fn of(fs: &[Finding], code: Code) -> Vec<&Finding> {
    fs.iter().filter(|f| f.code == code).collect()
}

fn key(c: char) -> KeyEvent {
    let m = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(KeyCode::Char(c), m)
}

/// The TUI on `v1`, audited as the event loop does in the background.
fn tui(name: &str, v1: &[u8]) -> App {
    let mut app = App::new(Store::from_bytes(name, v1), Theme::builtin("dark").unwrap());
    let mut auditor = Auditor::default();
    if let Some(req) = app.recompute_input(true) {
        let (session, version) = (req.delta.session, req.version);
        auditor.add(req);
        app.on_analysis(auditor.analyse(session, version));
    }
    app
}

/// From the first step, `e` lands on the first failed tool call (no other finding comes
/// before it), the status line names the code, and the row carries the `✗` glyph and the
/// failure's text even without colour.
fn e_reaches(name: &str, v1: &[u8], step: u32, says: &str) {
    let mut app = tui(name, v1);
    app.on_key(key('g'));
    app.on_key(key('e'));
    assert_eq!(app.step(), step, "{name}: {}", app.status);
    assert!(app.status.contains("tool-call-failed"), "{}", app.status);
    let screen = render_text(&mut app, 200, 50);
    let row = screen
        .lines()
        .find(|l| l.contains(&format!("{step:>6} ✗ ")) && l.contains(" tool_call "))
        .unwrap_or_else(|| panic!("{name}: no ✗ row for step {step}:\n{screen}"));
    assert!(row.contains("FAILED"), "{row}");
    assert!(row.contains(says), "{row}");
}

/// The audit's failed tool calls: (step, message).
fn failed_calls(fs: &[Finding]) -> Vec<(u32, String)> {
    of(fs, Code::ToolCallFailed)
        .iter()
        .map(|f| (f.step.unwrap(), f.message.clone()))
        .collect()
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn inspect_tool_errors_are_findings_and_e_reaches_them() {
    let rel = "inspect/log_tool_call_error.json";
    let v1 = v1(Format::Inspect, &real(rel), rel);
    let fs = findings(rel, &v1);
    let calls = failed_calls(&fs);
    // Every one of the eleven tool errors Inspect logged, with its type.
    assert_eq!(calls.len(), 11, "{fs:#?}");
    for ty in [
        "parsing",
        "timeout",
        "unicode_decode",
        "permission",
        "file_not_found",
        "is_a_directory",
        "limit",
        "approval",
        "unknown",
        "output_limit",
    ] {
        assert!(
            calls.iter().any(|(_, m)| m.contains(&format!("{ty}: "))),
            "{ty}: {calls:?}"
        );
    }
    assert!(fs.iter().all(|f| f.code == Code::ToolCallFailed), "{fs:#?}");
    // The first is a parsing error; `e` goes there first.
    e_reaches(rel, &v1, calls[0].0, "parsing");
}

/// `e_reaches` for the first failed call, whatever its message.
fn e_reaches_first(name: &str, v1: &[u8], says: &str) {
    let fs = findings(name, v1);
    let calls = failed_calls(&fs);
    assert_eq!(calls.len(), 1, "{fs:#?}");
    assert!(calls[0].1.contains(says), "{calls:?}");
    // The failure is said once: the error log the importer also writes for it is folded in.
    assert!(of(&fs, Code::ErrorLogged).is_empty(), "{fs:#?}");
    e_reaches(name, v1, calls[0].0, says);
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn an_opentelemetry_tool_span_with_status_error_is_a_finding() {
    let rel = "otel-genai/any-agent_OPENAI_trace.json";
    let mut doc = json_of(rel);
    let clean = v1(Format::Otlp, &serde_json::to_vec(&doc).unwrap(), rel);
    assert!(failed_calls(&findings(rel, &clean)).is_empty());
    let spans = doc["spans"].as_array_mut().unwrap();
    let tool = spans
        .iter_mut()
        .find(|s| s["name"].as_str().unwrap().starts_with("execute_tool"))
        .unwrap();
    tool["status"] = json!({"status_code": "error", "description": "disk full"});
    let v1 = v1(Format::Otlp, &serde_json::to_vec(&doc).unwrap(), rel);
    e_reaches_first(rel, &v1, "disk full");
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn a_langfuse_tool_observation_at_level_error_is_a_finding() {
    let rel = "langfuse/openai-agents-2025-09-30.trace.json";
    let mut doc = json_of(rel);
    let mut failed = 0;
    // Observations are listed twice (inside the trace and at the top): both copies fail.
    let mut fail = |obs: &mut Value| {
        for o in obs.as_array_mut().into_iter().flatten() {
            if o["type"] == "TOOL" {
                o["level"] = json!("ERROR");
                o["statusMessage"] = json!("weather service unreachable");
                failed += 1;
            }
        }
    };
    fail(&mut doc["observations"]);
    fail(&mut doc["trace"]["observations"]);
    assert!(failed > 0);
    let v1 = v1(Format::Langfuse, &serde_json::to_vec(&doc).unwrap(), rel);
    e_reaches_first(rel, &v1, "weather service unreachable");
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn a_langsmith_tool_run_with_an_error_is_a_finding() {
    let rel = "langsmith-langgraph/agx_sample_langchain_export.json";
    let mut doc = json_of(rel);
    let tool = doc["child_runs"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["run_type"] == "tool")
        .unwrap();
    tool["error"] = json!("PermissionError: [Errno 13] Permission denied: '/root'");
    let v1 = v1(Format::LangSmith, &serde_json::to_vec(&doc).unwrap(), rel);
    e_reaches_first(rel, &v1, "PermissionError");
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn a_letta_tool_result_with_status_failed_is_a_finding() {
    let rel = "letta/memgpt_agent_with_convo.v1-2025-03.af";
    let mut doc = json_of(rel);
    let msgs = doc["messages"].as_array_mut().unwrap();
    // The result of the first call that is not `send_message` (that one is the answer).
    let call = msgs
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .find(|c| c["function"]["name"] != "send_message")
        .map(|c| c["id"].clone())
        .unwrap();
    let m = msgs
        .iter_mut()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call)
        .unwrap();
    let text = m["content"][0]["text"].as_str().unwrap().to_string();
    let mut result: Value = serde_json::from_str(&text).unwrap();
    result["status"] = json!("Failed");
    result["message"] = json!("Error: old_content not found in memory block human");
    m["content"][0]["text"] = json!(result.to_string());
    let v1 = v1(Format::Letta, &serde_json::to_vec(&doc).unwrap(), rel);
    e_reaches_first(rel, &v1, "old_content not found");
}

#[test]
fn failed_model_calls_runs_and_error_logs_are_findings_with_their_severity() {
    let trace = [
        r#"{"kind":"intention","id":"run-1","type":"planner","status":"error","error":"max turns exceeded"}"#,
        r#"{"kind":"llm_call","id":"c1","model":"gpt-4o","error":{"type":"RateLimitError","message":"429"}}"#,
        r#"{"kind":"tool_call","id":"t1","tool":"search","status":"ok","error":null}"#,
        r#"{"kind":"log","level":"error","message":"disk quota exceeded"}"#,
        r#"{"kind":"log","level":"warn","message":"slow"}"#,
        // The log an importer writes beside a failed span repeats it: one finding.
        r#"{"kind":"tool_call","id":"t2","tool":"fetch","status":"error","error":"404","x_span":"t2"}"#,
        r#"{"kind":"log","level":"error","message":"fetch failed: 404","x_span":"t2"}"#,
    ]
    .join("\n");
    let fs = findings("f.jsonl", trace.as_bytes());
    let brief: Vec<(Code, &str, u32)> = fs
        .iter()
        .map(|f| (f.code, f.severity.as_str(), f.step.unwrap()))
        .collect();
    assert_eq!(
        brief,
        [
            (Code::AgentRunFailed, "error", 1),
            (Code::ModelCallFailed, "warning", 2),
            (Code::ErrorLogged, "warning", 4),
            (Code::ToolCallFailed, "warning", 6),
        ]
    );
    assert!(fs[0].message.contains("planner") && fs[0].message.contains("max turns"));
    assert!(
        fs[1].message.contains("RateLimitError: 429"),
        "{}",
        fs[1].message
    );
    assert_eq!(fs[3].evidence["log_steps"], json!([7]));
}

#[test]
fn audit_exits_1_on_a_failed_tool_call_and_0_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = |line: &str| {
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, format!("{line}\n")).unwrap();
        std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
            .args(["audit", p.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let bad = run(r#"{"kind":"tool_call","tool":"bash","error":"exit 127"}"#);
    assert_eq!(bad.status.code(), Some(1));
    let out = String::from_utf8_lossy(&bad.stdout);
    assert!(
        out.contains("tool-call-failed") && out.contains("exit 127"),
        "{out}"
    );
    let good = run(r#"{"kind":"tool_call","tool":"bash","result":"ok"}"#);
    assert_eq!(good.status.code(), Some(0), "{good:?}");
}

#[test]
fn level_error_keeps_failed_calls_and_no_color_still_marks_them() {
    let trace = [
        r#"{"kind":"tool_call","tool":"ls","result":"a b"}"#,
        r#"{"kind":"tool_call","tool":"rm","status":"error","error":"permission denied"}"#,
        r#"{"kind":"log","level":"info","message":"fine"}"#,
        r#"{"kind":"llm_call","model":"m","error":"overloaded"}"#,
    ]
    .join("\n");
    let mut app = App::new(
        Store::from_bytes("t.jsonl", trace.as_bytes()),
        // NO_COLOR's theme: the mark must be a glyph, not only a colour.
        Theme::plain("dark"),
    );
    app.panes
        .timeline
        .set_filter(TimelineFilter::parse("level:error"));
    let kept = app.panes.timeline.kept_rows(&app.store, 0, None);
    assert_eq!(kept, [1, 3]);
    let screen = render_text(&mut app, 160, 40);
    assert!(screen.contains("     2 ✗ tool_call"), "{screen}");
    assert!(screen.contains("     4 ✗ llm_call"), "{screen}");
    assert!(!screen.contains("     1 ✗"), "{screen}");
}

#[test]
fn a_failed_run_is_marked_failed_in_the_plan_pane() {
    let trace = [
        r#"{"kind":"intention","id":"run-1","type":"planner","goal":"book a flight","status":"error","error":"max turns exceeded"}"#,
        r#"{"kind":"intention","id":"run-2","type":"planner","goal":"book a hotel"}"#,
    ]
    .join("\n");
    let mut app = tui("p.jsonl", trace.as_bytes());
    app.on_key(key('g'));
    let screen = render_text(&mut app, 200, 50);
    assert!(screen.contains("✗ FAILED max turns exceeded"), "{screen}");
    app.on_key(key('G'));
    let screen = render_text(&mut app, 200, 50);
    assert!(
        screen.contains("book a hotel") && !screen.contains("✗ FAILED"),
        "{screen}"
    );
}

#[test]
fn report_lists_each_failure_with_its_error() {
    let trace = [
        r#"{"kind":"tool_call","tool":"bash","error":{"type":"timeout","message":"took 180 s"}}"#,
        r#"{"kind":"log","level":"error","message":"<b>disk</b> full"}"#,
    ]
    .join("\n");
    let model = Model::from_bytes("r.jsonl", trace.as_bytes());
    let html = doxascope::model::report::report(
        &model,
        &["r.jsonl".to_string()],
        &AuditOptions::default(),
    );
    assert!(html.contains("tool-call-failed"), "{html}");
    assert!(html.contains("timeout: took 180 s"), "{html}");
    assert!(html.contains("error-logged"), "{html}");
    // Escaped, as every string from the trace.
    assert!(html.contains("&lt;b&gt;disk&lt;/b&gt; full"), "{html}");
    assert!(
        !html.contains("Model calls and tokens"),
        "no model call, no section"
    );
    let calls = r#"{"kind":"llm_call","model":"<m>","input_tokens":10,"output_tokens":2}"#;
    let html = doxascope::model::report::report(
        &Model::from_bytes("c.jsonl", calls.as_bytes()),
        &["c.jsonl".to_string()],
        &AuditOptions::default(),
    );
    assert!(html.contains("Model calls and tokens"), "{html}");
    assert!(
        html.contains("model &lt;m&gt;: 1 model call, in 10 out 2 (total 12)"),
        "{html}"
    );
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn a_failed_run_is_one_finding_in_inspect_and_langsmith_and_the_plan_pane_says_so() {
    // Inspect: a sample that errored (its traceback logged) is a failed run.
    let rel = "inspect/2025-05-12T20-27-36-04-00_browser.json";
    let mut doc = json_of(rel);
    doc["samples"][0]["error"] = json!({
        "message": "RuntimeError: sandbox died",
        "traceback": "Traceback (most recent call last):\n  ...\nRuntimeError: sandbox died",
    });
    let v1 = v1(Format::Inspect, &serde_json::to_vec(&doc).unwrap(), rel);
    let fs = findings(rel, &v1);
    let runs = of(&fs, Code::AgentRunFailed);
    assert_eq!(runs.len(), 1, "{fs:#?}");
    assert!(
        runs[0].message.contains("sandbox died"),
        "{}",
        runs[0].message
    );
    // Its log is the same failure, folded in.
    assert!(of(&fs, Code::ErrorLogged).is_empty(), "{fs:#?}");
    assert!(
        runs[0].evidence.contains_key("log_steps"),
        "{:?}",
        runs[0].evidence
    );
    let mut app = tui(rel, &v1);
    app.on_key(key('g'));
    app.on_key(key('e'));
    assert!(app.status.contains("agent-run-failed"), "{}", app.status);
    let screen = render_text(&mut app, 200, 50);
    assert!(
        screen.contains("✗ FAILED RuntimeError: sandbox died"),
        "{screen}"
    );

    // LangSmith: the root run's error fails the run.
    let rel = "langsmith-langgraph/agx_sample_langchain_export.json";
    let mut doc = json_of(rel);
    doc["error"] = json!("GraphRecursionError: Recursion limit of 25 reached");
    let ls = self::v1(Format::LangSmith, &serde_json::to_vec(&doc).unwrap(), rel);
    let fs = findings(rel, &ls);
    let runs = of(&fs, Code::AgentRunFailed);
    assert_eq!(runs.len(), 1, "{fs:#?}");
    assert!(
        runs[0].message.contains("Recursion limit"),
        "{}",
        runs[0].message
    );
    assert!(of(&fs, Code::ErrorLogged).is_empty(), "{fs:#?}");
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn opentelemetry_model_call_and_agent_spans_with_status_error_are_findings() {
    let rel = "otel-genai/any-agent_OPENAI_trace.json";
    let mut doc = json_of(rel);
    for s in doc["spans"].as_array_mut().unwrap() {
        let name = s["name"].as_str().unwrap().to_string();
        if name.starts_with("invoke_agent") {
            s["status"] = json!({"status_code": "error", "description": "max turns exceeded"});
        }
        if name.starts_with("call_llm") && s["attributes"]["gen_ai.usage.input_tokens"] == 269 {
            s["status"] = json!({"status_code": "error", "description": "429 rate limited"});
        }
    }
    let v1 = v1(Format::Otlp, &serde_json::to_vec(&doc).unwrap(), rel);
    let fs = findings(rel, &v1);
    let brief: Vec<(Code, String)> = fs.iter().map(|f| (f.code, f.message.clone())).collect();
    assert_eq!(
        brief,
        [
            (
                Code::AgentRunFailed,
                "the agent run any_agent failed: max turns exceeded.".to_string()
            ),
            (
                Code::ModelCallFailed,
                "the model call mistral/mistral-small-latest failed: 429 rate limited.".to_string()
            ),
        ],
        "{fs:#?}"
    );
    let mut app = tui(rel, &v1);
    app.on_key(key('g'));
    app.on_key(key('e'));
    let screen = render_text(&mut app, 200, 50);
    assert!(screen.contains("✗ FAILED max turns exceeded"), "{screen}");
    app.on_key(key('e'));
    assert!(app.status.contains("model-call-failed"), "{}", app.status);
}
