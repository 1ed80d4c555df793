//! Scores beside what they score (issue 26 item 4): a failing score is the audit's
//! `score-failed` on the scored event, reached by `e` (before the audit has run too), listed
//! by `report` and `:scores`, carried by the scored event's timeline row and listed in its
//! detail pane; a number whose scale the source does not give is shown and never a failure.
//! Real files of Inspect and Langfuse from `../shared/external-traces`.
//!
//! Also item 7: the detail pane's `from` of an imported event names its place in the source.

use std::path::{Path, PathBuf};

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, audit};
use doxascope::trace::import::{Format, detect, import};
use doxascope::tui::app::App;
use doxascope::tui::audit_job::Auditor;
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[path = "support/external.rs"]
mod external;

fn ext(rel: &str) -> PathBuf {
    external::dir()
        .expect(
            "the external traces (../shared/external-traces); without them this test is ignored",
        )
        .join(rel)
}

/// The v1 an importer makes of a file.
fn v1_of(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let head = &bytes[..bytes.len().min(doxascope::trace::import::HEAD_BYTES)];
    let format = detect(path, head);
    assert_ne!(format, Format::V1, "{}", path.display());
    let name = path.file_name().unwrap().to_string_lossy();
    import(format, &bytes, &name).unwrap().v1
}

fn app(name: &str, v1: &[u8]) -> App {
    highlight::load_now();
    App::new(Store::from_bytes(name, v1), Theme::plain("dark"))
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn audit_app(app: &mut App) {
    let mut auditor = Auditor::default();
    if let Some(req) = app.recompute_input(true) {
        let (session, version) = (req.delta.session, req.version);
        auditor.add(req);
        app.on_analysis(auditor.analyse(session, version));
    }
}

/// A run whose answer a scorer marked incorrect, whose tool call a judge passed, and a
/// numeric score of the whole run with no scale.
const SCORED: &str = r#"{"kind":"tool_call","id":"t1","tool":"search","result":"Paris"}
{"kind":"answer","id":"ans","text":"Lyon"}
{"kind":"score","name":"accuracy","value":0,"passed":false,"target":"ans","source":"match","explanation":"expected Paris"}
{"kind":"score","name":"relevance","value":"pass","target":"t1","source":"llm"}
{"kind":"score","name":"helpfulness","value":0.2}
"#;

#[test]
fn a_failed_score_is_a_finding_on_what_it_scores() {
    let model = Model::from_bytes("s.jsonl", SCORED.as_bytes());
    let rep = audit(&model, &AuditOptions::default());
    let failed: Vec<_> = rep
        .findings
        .iter()
        .filter(|f| f.code.to_string() == "score-failed")
        .collect();
    assert_eq!(failed.len(), 1, "{:?}", rep.findings);
    assert_eq!(failed[0].step, Some(2), "on the answer it scores");
    assert!(
        failed[0].message.contains("accuracy"),
        "{}",
        failed[0].message
    );
    assert!(rep.failed());
    // Without the failing score nothing fails: the pass and the bare number are no finding.
    let passing = SCORED.replace(r#""passed":false"#, r#""passed":true"#);
    let rep = audit(
        &Model::from_bytes("s.jsonl", passing.as_bytes()),
        &AuditOptions::default(),
    );
    assert!(!rep.failed(), "{:?}", rep.findings);
}

#[test]
fn the_scored_rows_carry_their_scores_and_e_reaches_the_failed_one_before_the_audit() {
    let mut a = app("s.jsonl", SCORED.as_bytes());
    a.view_mut().follow = false;
    a.goto_step(1);
    let screen = render_text(&mut a, 200, 40);
    assert!(screen.contains("★ accuracy 0 FAIL"), "{screen}");
    assert!(screen.contains("★ relevance pass PASS"), "{screen}");
    // The bare number of the whole run is on its own row only, without a verdict.
    assert!(!screen.contains("★ helpfulness"), "{screen}");
    // The audit is held back: e still lands on the failed answer.
    assert!(a.view().analysis.is_none());
    a.on_key(key('g'));
    a.on_key(key('e'));
    assert_eq!(a.step(), 2, "{}", a.status);
    assert!(a.status.contains("score-failed"), "{}", a.status);
    // Its detail pane lists the score with who gave it and why.
    let screen = render_text(&mut a, 200, 40);
    assert!(
        screen.contains("score      ★ accuracy 0 FAIL  (step 3, by match): expected Paris"),
        "{screen}"
    );
    audit_app(&mut a);
    assert!(a.view().analysis.is_some());
    a.on_key(key('g'));
    a.on_key(key('e'));
    assert_eq!(a.step(), 2, "{}", a.status);
    a.on_key(key('e'));
    assert!(
        a.status.contains("no more"),
        "one stop per failure: {}",
        a.status
    );
}

#[test]
fn scores_command_and_report_list_every_score_failed_first() {
    let mut a = app("s.jsonl", SCORED.as_bytes());
    a.on_key(key(':'));
    for c in "scores".chars() {
        a.on_key(key(c));
    }
    a.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let (title, lines) = a.popup.clone().expect("a popup");
    assert_eq!(title, "scores");
    assert_eq!(lines[0], "3 scores, 1 failed");
    assert!(
        lines[1].contains("★ accuracy 0 FAIL  on step 2 (answer) by match"),
        "{lines:?}"
    );
    assert!(lines[2].contains("on step 1 (tool_call)"), "{lines:?}");
    assert!(lines[3].contains("on the whole run"), "{lines:?}");
    let model = Model::from_bytes("s.jsonl", SCORED.as_bytes());
    let html = doxascope::model::report::report(
        &model,
        &["s.jsonl".to_string()],
        &AuditOptions::default(),
    );
    assert!(html.contains("Scores (3, 1 failed)"), "{html}");
    assert!(html.contains("score-failed"), "{html}");
}

#[test]
fn audit_exits_1_on_a_failed_score() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    std::fs::write(&p, SCORED).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["audit", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("score-failed"));
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn inspects_incorrect_is_a_finding_on_its_answer_and_correct_is_not() {
    for (rel, fails) in [
        ("inspect/log_formats.eval", true),
        ("inspect/log_read_sample.eval", false),
        ("inspect/log_read_sample.json", false),
    ] {
        let v1 = v1_of(&ext(rel));
        let model = Model::from_bytes(rel, &v1);
        let rep = audit(&model, &AuditOptions::default());
        let failed: Vec<_> = rep
            .findings
            .iter()
            .filter(|f| f.code.to_string() == "score-failed")
            .collect();
        assert_eq!(failed.len(), usize::from(fails), "{rel}: {failed:?}");
        if fails {
            let tl = &model.timelines()[0];
            let step = failed[0].step.unwrap();
            let ev = model
                .log()
                .events
                .load(tl.event_pos_at(step).unwrap() as usize)
                .unwrap();
            assert_eq!(ev.kind_name(), "answer", "{rel}: on the answer it scores");
            // The answer was read from a member of the archive, not from a line: the finding
            // names that place, and no line of the converted stream.
            assert_eq!(failed[0].location, None, "{rel}");
            let from = failed[0].evidence["from"].as_str().unwrap_or("");
            assert!(from.starts_with("samples/"), "{rel}: {from}");
            assert!(
                failed[0].message.contains("★ match I FAIL"),
                "{}",
                failed[0].message
            );
        }
    }
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn langfuse_judge_scores_are_shown_on_their_observation_and_never_guessed_failed() {
    let rel = "langfuse/claude-agent-2025-12-22.trace.json";
    let v1 = v1_of(&ext(rel));
    let model = Model::from_bytes(rel, &v1);
    let tl = &model.timelines()[0];
    let all = doxascope::model::scores::of_session(model.log(), tl);
    assert!(!all.is_empty());
    let correctness = all
        .iter()
        .find(|s| s.score.name == "correctness")
        .expect("the judge's correctness score");
    // 0 on a scale Langfuse does not give: shown, not a failure.
    assert_eq!(correctness.passed, None);
    let rep = audit(&model, &AuditOptions::default());
    assert!(
        !rep.findings
            .iter()
            .any(|f| f.code.to_string() == "score-failed"),
        "{:?}",
        rep.findings
    );
    let lines = doxascope::model::scores::lines(model.log(), tl);
    assert!(
        lines.iter().any(|l| l.contains("★ correctness 0")),
        "{lines:?}"
    );
}

/// LangSmith feedback as the API returns runs (`feedback_stats`): a score per key aimed at the
/// run; a mean is shown, unanimous categorical feedback `fail` is a failure.
#[test]
fn langsmith_feedback_stats_are_scores_of_their_run() {
    let runs = r#"[{"id":"r1","run_type":"chain","name":"agent","trace_id":"r1","dotted_order":"20250101T000000000000Zr1",
      "inputs":{"input":"Capital of France?"},"outputs":{"output":"Lyon"},
      "start_time":"2025-01-01T00:00:00Z","end_time":"2025-01-01T00:00:01Z",
      "feedback_stats":{"correctness":{"n":2,"avg":0.5},"review":{"n":1,"avg":null,"values":{"fail":1}}}}]"#;
    let v1 = import(Format::LangSmith, runs.as_bytes(), "runs.json")
        .unwrap()
        .v1;
    let model = Model::from_bytes("runs.json", &v1);
    let tl = &model.timelines()[0];
    let all = doxascope::model::scores::of_session(model.log(), tl);
    assert_eq!(all.len(), 2, "{}", String::from_utf8_lossy(&v1));
    let mean = all.iter().find(|s| s.score.name == "correctness").unwrap();
    assert_eq!(mean.passed, None);
    assert!(mean.target.is_some(), "aimed at the run");
    let review = all.iter().find(|s| s.score.name == "review").unwrap();
    assert_eq!(review.passed, Some(false));
    let rep = audit(&model, &AuditOptions::default());
    let failed: Vec<_> = rep
        .findings
        .iter()
        .filter(|f| f.code.to_string() == "score-failed")
        .collect();
    assert_eq!(failed.len(), 1, "{:?}", rep.findings);
    assert_eq!(failed[0].step, review.target);
}

/// Item 7: an event imported from line 3 of an OTLP JSON-lines file says `FILE:3`, not the
/// line of the converted stream.
#[test]
fn an_imported_events_from_names_its_line_in_the_source() {
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/otel/collector-file-exporter.jsonl");
    let name = "collector-file-exporter.jsonl";
    let v1 = v1_of(&src);
    let model = Model::from_bytes(name, &v1);
    let tl = &model.timelines()[0];
    // The last event read from the source's third line, and its line in the v1 stream.
    let (step, v1_line) = (1..=tl.len())
        .rev()
        .find_map(|s| {
            let ev = model
                .log()
                .events
                .load(tl.event_pos_at(s).unwrap() as usize)
                .unwrap();
            let from = ev.extra.value("x_from")?;
            from.as_str()?
                .starts_with("line 3,")
                .then_some((s, ev.origin.line))
        })
        .expect("an event from line 3");
    assert!(
        v1_line != 3,
        "a test that can tell the two apart: step {step}, v1 line {v1_line}, {} sessions",
        model.timelines().len()
    );
    let mut a = app(name, &v1);
    // As `doxascope view SOURCE` does: the file is the source, converted on opening.
    a.sources
        .imported
        .push(doxascope::tui::sources::ImportedFile {
            name: name.to_string(),
            format: Format::Otlp,
            notes: 0,
        });
    a.view_mut().follow = false;
    a.goto_step(u64::from(step));
    // The detail pane shows the timeline's event.
    a.focus = doxascope::tui::app::Pane::Timeline;
    a.detail_from = doxascope::tui::app::Pane::Timeline;
    let screen = render_text(&mut a, 200, 50);
    assert!(
        screen.contains(&format!("from       {name}:3 (span ")),
        "{screen}"
    );
    assert!(!screen.contains(&format!("{name}:{v1_line} ")), "{screen}");
}
