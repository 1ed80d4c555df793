//! Time and model calls in imported traces (issue 26, items 2 and 3): every call and run
//! keeps how long it took (`duration_ms`, checked against the source's own figure), the
//! timeline shows time since the start and durations, `:time` jumps to a time, and model
//! calls show their model and tokens, added up per session, model and run.

use doxascope::model::Model;
use doxascope::model::clock::{TimeTarget, duration_ms, step_at};
use doxascope::model::usage::{Tokens, model_call, totals};
use doxascope::trace::Event;
use doxascope::trace::import::{Format, import};
use doxascope::tui::app::App;
use doxascope::tui::data::Store;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

#[path = "support/external.rs"]
mod external;

fn real(rel: &str) -> Vec<u8> {
    let dir = external::dir().expect(
        "the external traces (../shared/external-traces); without them this test is ignored",
    );
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn imported(format: Format, rel: &str) -> Vec<u8> {
    import(format, &real(rel), rel).unwrap().v1
}

fn events(model: &Model) -> Vec<Event> {
    model.log().events.to_vec()
}

fn of_kind<'a>(evs: &'a [Event], kind: &str) -> Vec<&'a Event> {
    evs.iter().filter(|e| e.kind_name() == kind).collect()
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn inspect_calls_keep_their_working_time_and_usage() {
    let rel = "inspect/2025-05-12T20-27-36-04-00_browser.json";
    let src: Value = serde_json::from_slice(&real(rel)).unwrap();
    let sample = &src["samples"][0];
    let want = |event: &str| -> Vec<f64> {
        sample["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == event)
            .map(|e| (e["working_time"].as_f64().unwrap() * 1e6).round() / 1e3)
            .collect()
    };
    let model = Model::from_bytes(rel, &imported(Format::Inspect, rel));
    let evs = events(&model);
    let sess = evs[0].session.clone();
    let got = |kind: &str| -> Vec<f64> {
        of_kind(&evs, kind)
            .iter()
            .filter(|e| e.session == sess)
            .map(|e| duration_ms(e).unwrap_or(-1.0))
            .collect()
    };
    assert_eq!(got("llm_call"), want("model"));
    assert_eq!(got("tool_call"), want("tool"));
    let run = of_kind(&evs, "intention")[0];
    let total = sample["total_time"].as_f64().unwrap();
    assert_eq!(duration_ms(run), Some((total * 1e6).round() / 1e3));
    // Tokens: the session's total is the source's, per model too.
    let input: u64 = sample["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "model")
        .map(|e| e["output"]["usage"]["input_tokens"].as_u64().unwrap())
        .sum();
    let cached: u64 = sample["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "model")
        .map(|e| {
            e["output"]["usage"]["input_tokens_cache_read"]
                .as_u64()
                .unwrap()
        })
        .sum();
    let tl = model.timeline(&sess).unwrap();
    let t = totals(model.log(), tl);
    assert_eq!(t.session.input, Some(input));
    assert_eq!(t.session.cache_read, Some(cached));
    assert_eq!(t.by_model["openai/gpt-4o-mini"].1.input, Some(input));
    assert_eq!(t.by_run.len(), 1);
    assert_eq!(t.by_run[0].calls, t.calls);
    assert_eq!(t.by_run[0].counted.input, Some(input));
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn opentelemetry_spans_keep_their_length_and_tokens_per_run() {
    let rel = "otel-genai/any-agent_OPENAI_trace.json";
    let src: Value = serde_json::from_slice(&real(rel)).unwrap();
    let model = Model::from_bytes(rel, &imported(Format::Otlp, rel));
    let evs = events(&model);
    for (kind, op) in [
        ("llm_call", "call_llm"),
        ("tool_call", "execute_tool"),
        ("intention", "invoke_agent"),
    ] {
        let want: Vec<f64> = src["spans"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["name"].as_str().unwrap().starts_with(op))
            .map(|s| {
                let ns = |k: &str| s[k].as_i64().unwrap() as i128;
                ((ns("end_time") - ns("start_time")) / 1000) as f64 / 1000.0
            })
            .collect();
        let got: Vec<f64> = of_kind(&evs, kind)
            .iter()
            .map(|e| duration_ms(e).unwrap())
            .collect();
        assert_eq!(got, want, "{kind}");
    }
    let input: u64 = src["spans"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["attributes"]["gen_ai.usage.input_tokens"].as_u64())
        .sum();
    let t = totals(model.log(), &model.timelines()[0]);
    assert_eq!(t.calls, 3);
    assert_eq!(t.session.input, Some(input));
    // The calls are inside the agent span: they are its run's.
    assert_eq!(t.by_run.len(), 1);
    assert_eq!(
        (t.by_run[0].calls, t.by_run[0].counted.input),
        (3, Some(input))
    );
    let call = model_call(of_kind(&evs, "llm_call")[0]).unwrap();
    assert_eq!(call.model.as_deref(), Some("mistral/mistral-small-latest"));
    assert_eq!(call.tokens.unwrap().brief(), "in 269 out 16");
}

#[test]
fn a_runs_reported_totals_are_kept_beside_the_counted_ones() {
    let trace = [
        r#"{"kind":"intention","id":"a1","type":"agent","input_tokens":500,"output_tokens":50,"x_span":"a1"}"#,
        r#"{"kind":"llm_call","model":"m1","input_tokens":100,"output_tokens":10,"x_span":"c1","x_parent":"a1"}"#,
        r#"{"kind":"intention","id":"a2","type":"sub","x_span":"a2","x_parent":"a1"}"#,
        r#"{"kind":"llm_call","model":"m2","usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}},"x_span":"c2","x_parent":"a2"}"#,
        // After the sub-agent, in the outer run by the span tree.
        r#"{"kind":"llm_call","model":"m1","input_tokens":1,"output_tokens":1,"x_span":"c3","x_parent":"a1"}"#,
    ]
    .join("\n");
    let model = Model::from_bytes("r.jsonl", trace.as_bytes());
    let t = totals(model.log(), &model.timelines()[0]);
    assert_eq!(t.calls, 3);
    assert_eq!(t.session.input, Some(108));
    assert_eq!(t.session.total(), Some(122));
    assert_eq!(t.by_model["m1"].0, 2);
    assert_eq!(t.by_model["m2"].1.cache_read, Some(4));
    assert_eq!(t.by_model["m2"].1.reasoning, Some(2));
    let runs: Vec<(&str, u64, Option<u64>)> = t
        .by_run
        .iter()
        .map(|r| (r.id.as_str(), r.calls, r.counted.input))
        .collect();
    assert_eq!(runs, [("a1", 2, Some(101)), ("a2", 1, Some(7))]);
    assert_eq!(
        t.by_run[0].reported,
        Some(Tokens {
            input: Some(500),
            output: Some(50),
            ..Tokens::default()
        })
    );
}

fn key(c: char) -> KeyEvent {
    let m = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(KeyCode::Char(c), m)
}

fn typed(app: &mut App, line: &str) {
    app.on_key(key(':'));
    for c in line.chars() {
        app.on_key(key(c));
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    // The line stays open for the next command.
    app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
}

const TIMED: &str = r#"{"kind":"intention","id":"r","type":"agent","ts":"2026-03-01T14:02:00Z","duration_ms":20000}
{"kind":"llm_call","model":"gpt-4o","ts":"2026-03-01T14:02:00.500Z","duration_ms":1234,"input_tokens":1124,"output_tokens":23,"finish_reasons":["stop"],"output":"The capital of France is Paris, a city on the Seine with many bridges and museums"}
{"kind":"tool_call","tool":"search","ts":"2026-03-01T14:02:05Z","duration_ms":850}
{"kind":"tool_call","tool":"fetch","ts":"2026-03-01T14:02:12.500Z","duration_ms":125000}
{"kind":"answer","text":"Paris","ts":"2026-03-01T14:02:20Z"}
"#;

#[test]
fn the_timeline_shows_time_since_the_start_and_durations_and_t_hides_them() {
    let mut app = App::new(
        Store::from_bytes("t.jsonl", TIMED.as_bytes()),
        Theme::builtin("dark").unwrap(),
    );
    let screen = render_text(&mut app, 200, 40);
    for row in [
        "     2     +0.500s  1.23s llm_call",
        "     3     +5.000s  850ms tool_call",
        "     4    +12.500s  2m05s tool_call",
        "     5    +20.000s        answer",
    ] {
        assert!(screen.contains(row), "{row}\n{screen}");
    }
    // The model call reads at a glance: model, tokens, finish reason, first words.
    assert!(
        screen.contains("gpt-4o · in 1124 out 23 · stop · \"The capital of France"),
        "{screen}"
    );
    app.on_key(key('T'));
    let screen = render_text(&mut app, 200, 40);
    assert!(screen.contains("     4   tool_call     fetch"), "{screen}");
    assert_eq!(
        doxascope::model::usage::first_words("The capital of France is Paris, a city", 4),
        "The capital of France…"
    );
    assert!(!screen.contains("+12.500s"), "{screen}");
}

#[test]
fn time_jumps_to_the_first_event_at_or_after_a_time() {
    let mut app = App::new(
        Store::from_bytes("t.jsonl", TIMED.as_bytes()),
        Theme::builtin("dark").unwrap(),
    );
    for (arg, step) in [
        ("+5s", 3),
        ("+5.1s", 4),
        ("12.5", 4),
        ("+0s", 1),
        ("14:02:13", 5),
        ("2026-03-01T14:02:01Z", 3),
    ] {
        app.on_key(key('g'));
        typed(&mut app, &format!("time {arg}"));
        assert_eq!(app.step(), step, "{arg}: {}", app.status);
    }
    app.on_key(key('g'));
    typed(&mut app, "time +1m");
    assert_eq!(app.step(), 1);
    assert!(
        app.status.contains("no event at or after"),
        "{}",
        app.status
    );
    typed(&mut app, "time soon");
    assert!(app.status.starts_with("time: not a time"), "{}", app.status);
}

#[test]
fn step_at_bisects_to_the_first_event_at_or_after_a_time() {
    // Every offset against a linear scan, on a session with events without times mixed in.
    let mut lines = Vec::new();
    let mut times = Vec::new();
    for i in 0..200u32 {
        if i % 7 == 3 {
            lines.push(r#"{"kind":"log","message":"no time"}"#.to_string());
            times.push(None);
        } else {
            let t = f64::from(i / 3) * 0.5;
            lines.push(format!(
                r#"{{"kind":"log","message":"x","ts":{}}}"#,
                1_772_000_000.0 + t
            ));
            times.push(Some(t));
        }
    }
    let model = Model::from_bytes("s.jsonl", lines.join("\n").as_bytes());
    let tl = &model.timelines()[0];
    for k in 0..80 {
        let at = f64::from(k) * 0.25 - 0.5;
        let want = times
            .iter()
            .position(|t| t.is_some_and(|t| t >= at))
            .map(|i| i as u32 + 1);
        assert_eq!(
            step_at(model.log(), tl, TimeTarget::Offset(at.max(0.0))),
            if at < 0.0 { Some(1) } else { want },
            "{at}"
        );
    }
}

#[test]
fn tokens_lists_the_totals_of_the_session_its_models_and_runs() {
    let mut app = App::new(
        Store::from_bytes("t.jsonl", TIMED.as_bytes()),
        Theme::builtin("dark").unwrap(),
    );
    app.on_key(key(':'));
    for c in "tokens".chars() {
        app.on_key(key(c));
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let screen = render_text(&mut app, 200, 40);
    for want in [
        "session: 1 model call, in 1124 out 23 (total 1147)",
        "model gpt-4o: 1 model call, in 1124 out 23 (total 1147)",
        "run r agent (step 1): 1 model call, in 1124 out 23 (total 1147)",
    ] {
        assert!(screen.contains(want), "{want}\n{screen}");
    }
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn spans_draws_the_agent_run_as_a_waterfall_of_its_calls() {
    let rel = "otel-genai/any-agent_OPENAI_trace.json";
    let mut app = App::new(
        Store::from_bytes(rel, &imported(Format::Otlp, rel)),
        Theme::builtin("dark").unwrap(),
    );
    app.on_key(key('g'));
    app.on_key(key(':'));
    for c in "spans".chars() {
        app.on_key(key(c));
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let screen = render_text(&mut app, 200, 50);
    // The agent span is the root, its three model calls and two tools under it, in order,
    // each with its start and length on the run's time axis (steps 5 and 8 are the tools'
    // results as observations, which are not spans).
    for row in [
        "▶     2 intention any_agent                        +0.000s  1.23s │██████████████████████████████│",
        "      3   llm_call mistral/mistral-small-latest    +0.002s  239ms │██████                        │",
        "      4   tool_call get_current_time               +0.241s    3ms │     █                        │",
        "      6   llm_call mistral/mistral-small-latest    +0.244s  314ms │     ████████                 │",
        "      7   tool_call write_file                     +0.560s    2ms │             █                │",
        "      9   llm_call mistral/mistral-small-latest    +0.564s  662ms │             ████████████████ │",
    ] {
        assert!(screen.contains(row), "{row}\n{screen}");
    }
    assert!(screen.contains("span tree: rows 1-6 of 6"), "{screen}");
}

/// `:transcript` at `step` of an imported file: the popup's text.
fn transcript_at(format: Format, rel: &str, step: u64) -> String {
    let mut app = App::new(
        Store::from_bytes(rel, &imported(format, rel)),
        Theme::builtin("dark").unwrap(),
    );
    app.goto_step(step);
    app.on_key(key(':'));
    for c in "transcript".chars() {
        app.on_key(key(c));
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    render_text(&mut app, 200, 50)
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn transcript_shows_a_model_calls_messages_and_tool_requests() {
    let s = transcript_at(Format::Otlp, "otel-genai/vercel-ai-v6_all-spans.json", 2);
    for want in [
        "transcript of the model call at step 2",
        "── user",
        "Write a haiku about programming.",
        "── assistant",
        "Lines of code align,",
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
    // Inspect keeps the last message sent and the tools asked for.
    let s = transcript_at(
        Format::Inspect,
        "inspect/2025-05-12T20-27-36-04-00_browser.json",
        7,
    );
    for want in [
        "── user",
        "Use the web browser tool to navigate to https://www.aisi.gov.uk/",
        "── tool request",
        r#"web_browser_go({"url":"https://www.aisi.gov.uk/"})"#,
    ] {
        assert!(s.contains(want), "{want}\n{s}");
    }
}

#[test]
fn a_long_popup_scrolls_and_any_other_key_closes_it() {
    let long: String = (0..80)
        .map(|i| format!("line {i} of a long answer\n"))
        .collect();
    let ev = serde_json::json!({"kind": "llm_call", "model": "m", "output": long});
    let mut app = App::new(
        Store::from_bytes("l.jsonl", format!("{ev}\n").as_bytes()),
        Theme::builtin("dark").unwrap(),
    );
    app.on_key(key(':'));
    for c in "transcript".chars() {
        app.on_key(key(c));
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let s = render_text(&mut app, 160, 30);
    assert!(s.contains("line 0 of") && !s.contains("line 40 of"), "{s}");
    assert!(s.contains("↑↓ PgUp PgDn scroll"), "{s}");
    for _ in 0..40 {
        app.on_key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE));
    }
    let s = render_text(&mut app, 160, 30);
    assert!(s.contains("line 40 of") && !s.contains("line 0 of"), "{s}");
    app.on_key(key('x'));
    assert!(app.popup.is_none());
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces (../shared/external-traces) are not here"
)]
fn a_langsmith_model_call_shows_its_usage_metadata_and_finish_reason() {
    let rel = "langsmith-langgraph/langsmith_js_wrap_openai_default.json";
    let model = Model::from_bytes(rel, &imported(Format::LangSmith, rel));
    let evs = events(&model);
    let call = model_call(of_kind(&evs, "llm_call")[0]).unwrap();
    let t = call.tokens.unwrap();
    assert_eq!(
        (t.input, t.output, t.cache_read),
        (Some(9), Some(9), Some(0))
    );
    assert_eq!(t.total(), Some(18));
    assert_eq!(call.finish.as_deref(), Some("stop"));
}

#[test]
fn a_bad_line_keeps_the_time_columns_aligned() {
    let trace = format!("{}not json\n", TIMED);
    let mut app = App::new(
        Store::from_bytes("t.jsonl", trace.as_bytes()),
        Theme::builtin("dark").unwrap(),
    );
    let screen = render_text(&mut app, 200, 40);
    let col = |needle: &str| {
        screen
            .lines()
            .find(|l| l.contains(needle))
            .and_then(|l| l.find(needle).map(|i| l[..i].chars().count()))
            .unwrap_or_else(|| panic!("{needle}\n{screen}"))
    };
    assert_eq!(col("parse-error"), col("answer "), "{screen}");
}
