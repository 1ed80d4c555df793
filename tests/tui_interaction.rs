//! Interaction tests: key sequences drive the real `App`; commands the app hands to the REPL
//! worker are run through the worker's own request handler, and the answers fed back, so the
//! whole path from key to screen is exercised without a terminal or threads.

use std::path::PathBuf;

use doxascope::tui::app::{App, Effect, Mode, Pane};
use doxascope::tui::audit_job::{At, Auditor};
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::keys::BINDINGS;
use doxascope::tui::repl_job::{Msg, ReplState, Request};
use doxascope::tui::text::is_clean;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::{help_lines, render_text};
use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

fn app_for(name: &str, bytes: &[u8]) -> App {
    highlight::load_now();
    App::new(
        Store::from_bytes(name, bytes),
        Theme::builtin("light").unwrap(),
    )
}

/// Runs the audit the event loop would run in the background, on this thread: what the
/// auditor has not seen yet is added to `auditor`, then the session is audited.
fn audit(app: &mut App, auditor: &mut Auditor) {
    if let Some(req) = app.recompute_input(true) {
        let (session, version) = (req.delta.session, req.version);
        auditor.add(req);
        app.on_analysis(auditor.analyse(session, version));
    }
}

fn sample(name: &str) -> App {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(name);
    app_for(name, &std::fs::read(path).unwrap())
}

/// Parses `"[[<tab>:why p<enter>"`: `<name>` is a special key, anything else a character.
fn parse_keys(s: &str) -> Vec<KeyEvent> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if c == '<'
            && let Some(end) = rest.find('>')
        {
            let name = &rest[1..end];
            let k = match name {
                "tab" => KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE),
                "s-tab" => KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT),
                "esc" => KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE),
                "enter" => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
                "up" => KeyEvent::new(KeyCode::Up, KeyModifiers::NONE),
                "down" => KeyEvent::new(KeyCode::Down, KeyModifiers::NONE),
                "pgdn" => KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE),
                "pgup" => KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE),
                "bs" => KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE),
                "c-z" => KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL),
                other => panic!("unknown key <{other}>"),
            };
            out.push(k);
            rest = &rest[end + 1..];
        } else {
            let m = if c.is_ascii_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            out.push(KeyEvent::new(KeyCode::Char(c), m));
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Feeds keys; runs every REPL command on `repl` (the worker's own state, sent the messages
/// the event loop would send it: pieces of the session, then the command) and feeds the answers back. Returns the other effects.
fn press(app: &mut App, repl: &mut Option<ReplState>, keys: &str) -> Vec<Effect> {
    let mut other = Vec::new();
    for k in parse_keys(keys) {
        for e in app.on_key(k) {
            match e {
                Effect::Run {
                    line,
                    step,
                    purpose,
                } => {
                    // As the event loop does: queued, then handed over piece by piece.
                    let r = repl.get_or_insert_with(ReplState::default);
                    app.queue_command(line, step, purpose);
                    while let Some(msg) = app.repl_next() {
                        if let Some(answer) = r.apply(msg) {
                            app.on_reply(answer);
                        }
                    }
                }
                e => other.push(e),
            }
        }
    }
    other
}

#[test]
fn time_travel_keys_move_the_step_and_pause_follow() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    assert_eq!(app.step(), 23);
    assert!(app.view().follow);
    press(&mut app, &mut r, "[[");
    assert_eq!(app.step(), 21);
    assert!(!app.view().follow);
    press(&mut app, &mut r, "]");
    assert_eq!(app.step(), 22);
    press(&mut app, &mut r, "g");
    assert_eq!(app.step(), 1);
    press(&mut app, &mut r, "[");
    assert_eq!(app.step(), 1, "never before the first step");
    press(&mut app, &mut r, "G");
    assert_eq!(app.step(), 23);
    press(&mut app, &mut r, "g");
    press(&mut app, &mut r, "f");
    assert!(app.view().follow);
    assert_eq!(app.step(), 23, "follow jumps to the newest step");
    let screen = render_text(&mut app, 160, 45);
    assert!(
        // A file read once is at its end, not followed (nothing more will come).
        screen.contains("step 23 of 23") && screen.contains("READ ONCE"),
        "{screen}"
    );
    // Σ changes with the step: at step 5 only the domain assumption is in.
    press(&mut app, &mut r, "g]]]]");
    assert_eq!(app.step(), 5);
    let rows = app.sigma_rows();
    assert_eq!(rows.len(), 1);
}

#[test]
fn tab_cycles_every_pane_both_ways() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    let mut seen = Vec::new();
    for _ in 0..Pane::ALL.len() {
        seen.push(app.focus);
        press(&mut app, &mut r, "<tab>");
    }
    assert_eq!(seen, Pane::ALL.to_vec());
    assert_eq!(app.focus, Pane::Sigma);
    press(&mut app, &mut r, "<s-tab>");
    assert_eq!(app.focus, Pane::Repl);
}

#[test]
fn search_jumps_between_matches_and_wraps() {
    let mut app = sample("greedysat-stress.jsonl");
    let mut r = None;
    press(&mut app, &mut r, "g/revise<enter>");
    assert_eq!(app.mode, Mode::Normal);
    assert_eq!(app.step(), 24);
    assert!(app.status.contains("1 of 2"), "{}", app.status);
    press(&mut app, &mut r, "n");
    assert_eq!(app.step(), 35);
    assert!(app.status.contains("2 of 2"), "{}", app.status);
    press(&mut app, &mut r, "n");
    assert_eq!(app.step(), 24, "wraps around");
    press(&mut app, &mut r, "N");
    assert_eq!(app.step(), 35);
    press(&mut app, &mut r, "/no such thing<enter>");
    assert_eq!(app.step(), 35);
    assert!(app.status.contains("not found"));
}

const FLAGGED: &str = r#"{"kind":"announce","formula":"p","id":"a"}
{"kind":"announce","formula":"p &","id":"bad"}
{"kind":"log","level":"info","message":"fine"}
{"kind":"retract","target":"ghost"}
{"kind":"log","level":"error","message":"tool crashed"}
not json at all
{"kind":"announce","formula":"q"}
"#;

#[test]
fn e_and_shift_e_visit_errors_and_findings() {
    let mut app = app_for("flagged.jsonl", FLAGGED.as_bytes());
    let mut r = None;
    assert_eq!(app.store.parse_errors(), 1);
    // Before the audit answers, e still finds the error log (a failure needs no audit) and
    // the bad line (a row of its own).
    assert_eq!(app.problem_count(), None);
    press(&mut app, &mut r, "g");
    press(&mut app, &mut r, "e");
    assert_eq!((app.step(), app.view().cursor), (5, 4));
    assert!(app.status.contains("error-logged"), "{}", app.status);
    press(&mut app, &mut r, "e");
    assert_eq!(
        app.view().cursor,
        5,
        "the bad line sits after the fifth event"
    );
    assert_eq!(app.step(), 5);
    audit(&mut app, &mut Auditor::default());
    // What `doxascope audit` reports: the formula, the unresolved retract target, the
    // error-level log line and the bad line.
    assert_eq!(app.problem_count(), Some(4));
    press(&mut app, &mut r, "g");
    press(&mut app, &mut r, "e");
    assert_eq!(app.step(), 2);
    assert!(app.status.contains("parse-error"), "{}", app.status);
    press(&mut app, &mut r, "e");
    assert_eq!(app.step(), 4);
    assert!(
        app.status.contains("unresolved-reference"),
        "{}",
        app.status
    );
    press(&mut app, &mut r, "e");
    assert_eq!((app.step(), app.view().cursor), (5, 4));
    assert!(app.status.contains("error-logged"), "{}", app.status);
    press(&mut app, &mut r, "e");
    assert_eq!(app.step(), 5);
    assert_eq!(app.view().cursor, 5);
    assert!(app.status.contains("Line 6"), "{}", app.status);
    press(&mut app, &mut r, "e");
    assert_eq!(app.view().cursor, 5);
    assert!(app.status.contains("no more"));
    press(&mut app, &mut r, "E");
    assert_eq!((app.step(), app.view().cursor), (5, 4));
    press(&mut app, &mut r, "E");
    assert_eq!(app.step(), 4);
    let screen = render_text(&mut app, 160, 45);
    assert!(
        screen.contains("parse errors: 1") && screen.contains("findings: 4"),
        "{screen}"
    );
}

/// A run whose tool call failed, with the span's error log repeating it, and a model call
/// that failed later.
const FAILED_RUN: &str = r#"{"kind":"intention","id":"run","intention_type":"agent"}
{"kind":"tool_call","id":"s1","tool":"fetch","status":"error","error":"timeout"}
{"kind":"log","level":"error","message":"timeout","x_span":"s1"}
{"kind":"announce","formula":"p","id":"a"}
{"kind":"llm_call","id":"m1","model":"gpt","status":"error","error":"rate limited"}
"#;

/// `e` reaches failed calls before the background audit has answered (it is held back
/// here), stops once per failure (the error log repeating the tool call's is folded into
/// it), and after the audit lands visits the same rows, not each twice.
#[test]
fn e_reaches_failures_before_the_audit_and_once_after_it() {
    let mut app = app_for("failed.jsonl", FAILED_RUN.as_bytes());
    let mut r = None;
    assert!(app.view().analysis.is_none(), "the audit is held back");
    let mut visit = |app: &mut App| {
        press(app, &mut r, "g");
        let mut seen = Vec::new();
        for _ in 0..5 {
            press(app, &mut r, "e");
            if app.status.contains("no more") {
                break;
            }
            seen.push((app.step(), app.status.clone()));
        }
        seen
    };
    let before = visit(&mut app);
    let steps: Vec<u32> = before.iter().map(|(s, _)| *s).collect();
    assert_eq!(steps, vec![2, 5], "{before:?}");
    assert!(before[0].1.contains("tool-call-failed"), "{before:?}");
    assert!(before[0].1.contains("timeout"), "{before:?}");
    assert!(before[1].1.contains("model-call-failed"), "{before:?}");
    audit(&mut app, &mut Auditor::default());
    assert!(app.view().analysis.is_some());
    let after = visit(&mut app);
    let steps_after: Vec<u32> = after.iter().map(|(s, _)| *s).collect();
    assert_eq!(steps_after, steps, "{after:?}");
}

#[test]
fn repl_line_runs_why_and_entails_with_history_and_completion() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    // At step 17, before the revision drops the map's B.
    app.view_mut().follow = false;
    app.goto_step(17);
    press(&mut app, &mut r, ":entails treasure_in_b<enter>");
    assert_eq!(app.mode, Mode::Command);
    let text: Vec<_> = app
        .panes
        .repl
        .scrollback
        .iter()
        .map(|l| l.text.clone())
        .collect();
    assert_eq!(text[0], ": entails treasure_in_b");
    assert!(text[1].starts_with("entailed"), "{text:?}");
    press(&mut app, &mut r, "why ¬treasure_in_a<enter>");
    let all = app
        .panes
        .repl
        .scrollback
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(all.contains("t3-not-a"), "{all}");
    // History: Up recalls the last command, Up again the one before.
    press(&mut app, &mut r, "<up><up>");
    assert_eq!(app.repl_input.text, "entails treasure_in_b");
    press(&mut app, &mut r, "<down>");
    assert_eq!(app.repl_input.text, "why ¬treasure_in_a");
    press(&mut app, &mut r, "<down>");
    assert_eq!(app.repl_input.text, "");
    // Completion: command names, then atoms and ids of Σ.
    press(&mut app, &mut r, "ent<tab>");
    assert_eq!(app.repl_input.text, "entails ");
    press(&mut app, &mut r, "t2<tab>");
    assert_eq!(app.repl_input.text, "entails t2-map-b ");
    // An error is a result, not a crash.
    press(&mut app, &mut r, "<esc>:entails p &<enter>");
    assert_eq!(
        app.panes.repl.scrollback.last().map(|l| l.kind),
        Some(doxascope::tui::panes::repl::ScrollKind::Error)
    );
    // `at` moves the whole view.
    press(&mut app, &mut r, "at 8<enter>");
    assert_eq!(app.step(), 8);
    press(&mut app, &mut r, "<esc>");
    assert_eq!(app.mode, Mode::Normal);
}

#[test]
fn w_on_a_belief_highlights_its_minimal_support() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    // Select t3-not-a (third row of Σ at step 17, before the revision).
    app.view_mut().follow = false;
    app.goto_step(17);
    press(&mut app, &mut r, "jj");
    assert_eq!(
        app.selected_event()
            .and_then(|p| app.store.event(p))
            .and_then(|e| e.id.clone())
            .as_deref(),
        Some("t3-not-a")
    );
    press(&mut app, &mut r, "w");
    // t3-not-a supports itself; the highlighted support is how else Σ derives it.
    let want: std::collections::HashSet<String> = ["t1-domain", "t2-map-b"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(app.view().support, want, "{}", app.status);
    let screen = render_text(&mut app, 160, 45);
    assert!(screen.contains("support"), "{screen}");
    press(&mut app, &mut r, "<esc>");
    assert!(app.view().support.is_empty());
}

#[test]
fn enter_on_a_revision_shows_the_conflict_set() {
    let mut app = sample("greedysat-stress.jsonl");
    let mut r = None;
    press(&mut app, &mut r, "<tab><tab><tab>");
    assert_eq!(app.focus, Pane::Retract);
    // Newest first: revise@35 (b9), retract@25..; go to the revise of step 24.
    let sess = app.sess().unwrap();
    let target = sess
        .revisions_newest(sess.len(), 0, usize::MAX)
        .iter()
        .position(|&(s, _)| s == 24)
        .unwrap();
    for _ in 0..target {
        press(&mut app, &mut r, "j");
    }
    press(&mut app, &mut r, "<enter>");
    let (_, lines) = app.popup.clone().expect("conflict popup");
    let all = lines.join("\n");
    assert!(all.contains("contradiction"), "{all}");
    assert!(
        all.contains("b3"),
        "the dropped belief is in the conflict: {all}"
    );
    let screen = render_text(&mut app, 160, 45);
    assert!(screen.contains("conflict set"), "{screen}");
    press(&mut app, &mut r, "x");
    assert!(app.popup.is_none(), "any key closes it");
}

/// The popup of every row of the retractions pane, opened in the order `order` (row indices,
/// newest first as the pane lists them), on one REPL job.
fn popups_in_order(order: &[usize]) -> Vec<(usize, Vec<String>)> {
    let mut app = sample("greedysat-stress.jsonl");
    let mut r = None;
    press(&mut app, &mut r, "<tab><tab><tab>");
    let mut out = Vec::new();
    for &row in order {
        app.panes.retract.sel = row;
        press(&mut app, &mut r, "<enter>");
        let (_, lines) = app.popup.clone().expect("a popup");
        press(&mut app, &mut r, "x");
        out.push((row, lines));
    }
    out.sort();
    out
}

#[test]
fn conflict_popups_do_not_depend_on_what_was_opened_before() {
    let app = sample("greedysat-stress.jsonl");
    let sess = app.sess().unwrap();
    let rows = sess.revisions_newest(sess.len(), 0, usize::MAX).len();
    assert!(rows >= 4, "the sample has revise and retract rows");
    let forward: Vec<usize> = (0..rows).collect();
    let backward: Vec<usize> = (0..rows).rev().collect();
    // Every row twice, interleaved, as a user going back and forth would.
    let mixed: Vec<usize> = (0..rows).flat_map(|i| [rows - 1 - i, i]).collect();
    let a = popups_in_order(&forward);
    let b = popups_in_order(&backward);
    let mut c = popups_in_order(&mixed);
    c.dedup();
    assert_eq!(a, b);
    assert_eq!(a, c);
    // A revise row and the retract row that applies it show the same conflict, which holds
    // the belief the revision dropped; no row claims the trigger was entailed.
    let all: Vec<String> = a.iter().map(|(_, l)| l.join("\n")).collect();
    for text in &all {
        assert!(!text.contains("entailed just before"), "{text}");
    }
    let with_b3: Vec<&String> = all.iter().filter(|t| t.contains("b3")).collect();
    assert!(with_b3.len() >= 2, "revise@24 and retract@25: {all:?}");
    assert_eq!(with_b3[0], with_b3[1]);
}

#[test]
fn the_sigma_pane_shows_the_hand_layer_and_esc_returns_to_the_trace() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    // At step 11 Σ is consistent; the announcement retracts two trace beliefs.
    press(&mut app, &mut r, ":at 11<enter>");
    press(&mut app, &mut r, ":announce ~treasure_in_b<enter>");
    let hand = app.hand_shown().cloned().expect("the hand layer is shown");
    assert_eq!(hand.commands, 1);
    assert_eq!(hand.added.len(), 1);
    assert_eq!(hand.removed.len(), 2, "{hand:?}");
    let screen = render_text(&mut app, 200, 50);
    assert!(screen.contains("hand layer: 1 command(s)"), "{screen}");
    assert!(screen.contains("[hand]"), "{screen}");
    assert!(screen.contains("retracted [hand]"), "{screen}");
    // Another step: the view follows (the REPL job reports the layer's effect there).
    press(&mut app, &mut r, "<esc>]");
    assert_eq!(app.step(), 12);
    assert_eq!(app.hand_shown().map(|h| h.step), Some(12));
    let screen = render_text(&mut app, 200, 50);
    assert!(screen.contains("[hand]"), "{screen}");
    // Esc (in normal mode) returns the pane to the trace; the layer is kept.
    press(&mut app, &mut r, "<esc>");
    let screen = render_text(&mut app, 200, 50);
    assert!(
        !screen.contains("active [hand]"),
        "Esc hid the layer: {screen}"
    );
    assert!(screen.contains("hand layer hidden"), "{screen}");
    press(&mut app, &mut r, ":sigma<enter>");
    assert!(app.hand_shown().is_some());
    press(&mut app, &mut r, ":reset<enter>");
    assert!(app.view().hand.is_none());
    let screen = render_text(&mut app, 200, 50);
    assert!(!screen.contains("active [hand]"), "{screen}");
    assert!(!screen.contains("hand layer"), "{screen}");
}

#[test]
fn s_m_and_r_say_what_they_did() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    press(&mut app, &mut r, "f");
    let follow = app.view().follow;
    press(&mut app, &mut r, "s");
    assert!(app.status.contains("only one session"), "{}", app.status);
    assert_eq!(
        app.view().follow,
        follow,
        "s with one session changes nothing"
    );
    press(&mut app, &mut r, "m");
    assert!(app.status.contains("mouse on"), "{}", app.status);
    press(&mut app, &mut r, "m");
    assert!(app.status.contains("mouse released"), "{}", app.status);
    let fx = press(&mut app, &mut r, "R");
    assert!(app.status.contains("auditing"), "{}", app.status);
    assert!(!fx.is_empty());
}

/// An audit that ends just after a key was answered (CI caught a bookmark's refusal replaced
/// this way) waits in `:messages`: the answer stays on the status line until the next key.
#[test]
fn an_audit_ending_does_not_replace_the_answer_to_a_key() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    let mut auditor = Auditor::default();
    audit(&mut app, &mut auditor);
    let summary = app.status.clone();
    assert!(
        summary.starts_with("audit: "),
        "nothing answered yet: {summary}"
    );
    let done = app.view().analysis.clone().unwrap();
    press(&mut app, &mut r, "s");
    let answer = app.status.clone();
    assert!(answer.contains("only one session"), "{answer}");
    render_text(&mut app, 120, 40);
    app.on_analysis(done.clone());
    assert_eq!(app.status, answer, "the answer stays");
    let kept: Vec<&String> = app.messages.iter().rev().take(2).collect();
    assert_eq!(
        kept,
        [&summary, &answer],
        "kept after the answer, once each"
    );
    render_text(&mut app, 120, 40);
    assert_eq!(
        app.messages.back(),
        Some(&summary),
        "the answer is not kept twice"
    );
    // A key that says nothing ends the answer: the next audit is shown.
    press(&mut app, &mut r, "<down>");
    assert_eq!(app.status, answer);
    app.on_analysis(done);
    assert_eq!(app.status, summary);
}

#[test]
fn messages_keeps_every_status_and_the_config_warnings() {
    let mut app = sample("treasure-hunt.jsonl");
    app.config_warnings = vec!["config.toml: unknown key theem".into()];
    let mut r = None;
    press(&mut app, &mut r, "s");
    render_text(&mut app, 120, 40);
    press(&mut app, &mut r, "m");
    render_text(&mut app, 120, 40);
    press(&mut app, &mut r, ":messages<enter>");
    let (title, lines) = app.popup.clone().expect("the messages overlay");
    assert_eq!(title, "messages");
    let all = lines.join("\n");
    assert!(all.contains("unknown key theem"), "{all}");
    assert!(all.contains("only one session"), "{all}");
    assert!(all.contains("mouse on"), "{all}");
    assert_eq!(app.mode, doxascope::tui::app::Mode::Normal);
}

#[test]
fn filter_narrows_sigma() {
    let mut app = sample("greedysat-stress.jsonl");
    let mut r = None;
    press(&mut app, &mut r, "Frole:rule<enter>");
    // The world's r1..r5.
    assert_eq!(app.sigma_rows().len(), 5);
    press(&mut app, &mut r, "Fstatus:retracted<enter>");
    assert_eq!(app.sigma_rows().len(), 2);
    press(&mut app, &mut r, "Fsource:llm !F<enter>");
    assert_eq!(app.sigma_rows().len(), 1);
    press(&mut app, &mut r, "F<enter>");
    assert_eq!(app.sigma_rows().len(), 13);
}

#[test]
fn help_overlay_lists_every_binding() {
    let th = Theme::builtin("dark").unwrap();
    let text: String = help_lines(&th)
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.to_string())
                .collect::<String>()
                + "\n"
        })
        .collect();
    // The demo's keys are bound, and listed, only while the demo plays (tests/tui_demo.rs).
    for b in BINDINGS.iter().filter(|b| !b.action.demo_only()) {
        assert!(
            text.contains(b.label) && text.contains(b.help),
            "{}",
            b.label
        );
    }
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    press(&mut app, &mut r, "?");
    let screen = render_text(&mut app, 120, 50);
    assert!(
        screen.contains(" help (") && screen.contains("next error or finding"),
        "{screen}"
    );
    press(&mut app, &mut r, "?");
    assert!(!app.help);
}

/// At 80x24 the help overlay does not hold every key and command: it scrolls (↓, PgDn) and
/// says what is above and below, and every help line is reachable.
#[test]
fn help_overlay_scrolls_to_every_line_on_a_small_terminal() {
    let th = Theme::builtin("light").unwrap();
    let want: Vec<String> = help_lines(&th)
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.to_string()).collect())
        .collect();
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    press(&mut app, &mut r, "?");
    let first = render_text(&mut app, 80, 24);
    assert!(
        first.contains("more lines") && first.contains("↓"),
        "{first}"
    );
    let mut seen = first.clone();
    let mut last = first;
    for _ in 0..20 {
        press(&mut app, &mut r, "<pgdn>");
        assert!(app.help, "paging does not close the help");
        last = render_text(&mut app, 80, 24);
        seen.push_str(&last);
    }
    // Long lines are folded: each line's start and its last word are shown.
    for l in &want {
        let start: String = l.chars().take(40).collect();
        let end = l.split_whitespace().last().unwrap_or("");
        assert!(
            seen.contains(start.trim_end()) && seen.contains(end),
            "{l:?} never shown"
        );
    }
    // At the end: the last line is shown, and what is above is said.
    assert!(
        last.contains(want.last().unwrap().split_whitespace().last().unwrap())
            && last.contains("↑"),
        "{last}"
    );
    let bottom = last.lines().find(|l| l.starts_with('└')).unwrap_or("");
    assert!(
        bottom.contains("↑") && !bottom.contains("↓"),
        "nothing below the last line:\n{last}"
    );
    press(&mut app, &mut r, "<up>");
    assert!(app.help);
    press(&mut app, &mut r, "<esc>");
    assert!(!app.help, "any other key closes");
    // Opened again, it starts at the top.
    press(&mut app, &mut r, "?");
    let again = render_text(&mut app, 80, 24);
    assert!(again.contains(want[1].trim_end()), "{again}");
}

/// A long answer in the REPL pane is shown from its command (where `history` says the belief
/// entered), the pane's frame says how many lines are below, and PgDn reaches the end.
#[test]
fn a_long_repl_answer_starts_at_its_command_and_says_there_is_more() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    render_text(&mut app, 160, 45);
    press(&mut app, &mut r, ":history t2-map-b<enter>");
    let s = render_text(&mut app, 160, 45);
    let repl: Vec<&str> = s.lines().rev().skip(2).take(7).collect();
    let pane = repl.join("\n");
    assert!(
        pane.contains(": history t2-map-b") && pane.contains("step     8"),
        "the answer from its start:\n{s}"
    );
    assert!(pane.contains("↓") && pane.contains("more (PgDn)"), "{s}");
    for _ in 0..5 {
        press(&mut app, &mut r, "<pgdn>");
    }
    let s = render_text(&mut app, 160, 45);
    let pane: String = s
        .lines()
        .rev()
        .skip(2)
        .take(7)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(pane.contains("cost:"), "the end of the answer:\n{s}");
    assert!(pane.contains("↑") && pane.contains("more (PgUp)"), "{s}");
    assert!(!pane.contains("↓"), "{s}");
}

/// Σ at 120 columns shows role and confidence beside the formula, and ids whole when there
/// is room.
#[test]
fn sigma_shows_role_and_confidence_at_120_columns_and_whole_ids() {
    let mut app = sample("treasure-hunt.jsonl");
    let s = render_text(&mut app, 120, 40);
    let row = s
        .lines()
        .find(|l| l.contains("t2-map-b"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(row.contains("fact") && row.contains("0.95"), "{row}\n{s}");
    let mut app = sample("alice-bob-norms.jsonl");
    let s = render_text(&mut app, 160, 45);
    assert!(
        s.contains("r0-mother-parent ") && s.contains("n1-no-address "),
        "ids whole:\n{s}"
    );
}

/// Esc clears a Σ filter; `S` cycles sessions the other way round from `s`.
#[test]
fn esc_clears_the_sigma_filter_and_big_s_goes_back_a_session() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    assert_eq!(app.focus, Pane::Sigma);
    press(&mut app, &mut r, "Frole:assumption<enter>");
    assert!(!app.panes.sigma.filter.is_empty());
    assert_eq!(app.sigma_rows().len(), 1);
    press(&mut app, &mut r, "<esc>");
    assert!(app.panes.sigma.filter.is_empty(), "Esc clears the filter");
    assert_eq!(app.sigma_rows().len(), 4);
    let t = ["a", "b", "c"]
        .map(|n| format!("{{\"kind\":\"announce\",\"session\":\"{n}\",\"formula\":\"p\"}}\n"))
        .concat();
    let mut app = app_for("three.jsonl", t.as_bytes());
    let name = |app: &App| app.sess().map(|s| s.name.to_string()).unwrap_or_default();
    let first = name(&app);
    press(&mut app, &mut r, "s");
    let second = name(&app);
    assert_ne!(first, second);
    press(&mut app, &mut r, "S");
    assert_eq!(name(&app), first, "S undoes s");
    press(&mut app, &mut r, "S");
    press(&mut app, &mut r, "s");
    assert_eq!(name(&app), first, "s undoes S, round the end too");
}

/// `b` bookmarks the focused pane's item: the selected verification claim's step, not the
/// timeline's; Σ's selected belief.
#[test]
fn b_bookmarks_the_focused_panes_item() {
    let mut app = sample("treasure-hunt.jsonl");
    let bookmark = |app: &mut App| -> (String, u64) {
        app.on_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::NONE))
            .into_iter()
            .find_map(|e| match e {
                Effect::Run { line, step, .. } => Some((line, step)),
                _ => None,
            })
            .expect("b asks for a note")
    };
    app.focus = Pane::Verify;
    // Newest first: steps 14, 10, 7, 4.
    app.panes.verify.sel = 2;
    assert_eq!(bookmark(&mut app), ("note".to_string(), 7));
    app.focus = Pane::Sigma;
    app.panes.sigma.sel = 0;
    assert_eq!(
        bookmark(&mut app),
        ("note --belief t1-domain".to_string(), 23)
    );
    app.focus = Pane::Timeline;
    assert_eq!(bookmark(&mut app), ("note".to_string(), 23));
}

#[test]
fn quit_suspend_zoom_and_mouse() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    assert_eq!(press(&mut app, &mut r, "q"), vec![Effect::Quit]);
    assert_eq!(press(&mut app, &mut r, "<c-z>"), vec![Effect::Suspend]);
    assert_eq!(press(&mut app, &mut r, "m"), vec![Effect::Mouse(true)]);
    press(&mut app, &mut r, "z");
    assert!(app.zoom);
    press(&mut app, &mut r, "z");
    // A click focuses the pane under it; the wheel moves the selection.
    render_text(&mut app, 160, 45);
    let (_, rect) = *app
        .areas
        .iter()
        .find(|(p, _)| *p == Pane::Timeline)
        .unwrap();
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: rect.x + 3,
        row: rect.y + 2,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(app.focus, Pane::Timeline);
    let before = app.step();
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: rect.x + 3,
        row: rect.y + 2,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(app.step(), before - 3);
}

/// Every string field of this trace carries terminal escapes, bidi overrides or invisible
/// characters; none may reach the screen.
fn hostile() -> String {
    let evil = [
        "\u{1b}]0;PWNED\u{7}",
        "\u{1b}[?1049h",
        "\u{1b}[?1000h",
        "\u{1b}]52;c;aGVsbG8=\u{7}",
        "\u{1b}[2J\u{1b}[H",
        "\u{202E}evil\u{202C}",
        "zero\u{200B}width",
        "\r\u{8}\u{7f}\u{9b}31m",
    ]
    .concat();
    let e = serde_json::to_string(&evil).unwrap();
    [
        format!(r#"{{"kind":"session","session":{e},"agent":{e},"model":{e}}}"#),
        format!(r#"{{"kind":"announce","session":{e},"id":{e},"formula":"p","source":{e},"text":{e},"because":[{e}]}}"#),
        format!(r#"{{"kind":"announce","session":{e},"formula":{e}}}"#),
        format!(r#"{{"kind":"verify","session":{e},"formula":"p","outcome":"contradiction","method":{e},"tier":{e}}}"#),
        format!(r#"{{"kind":"revise","session":{e},"trigger":{e},"retracted":[{e}],"policy":{e}}}"#),
        format!(r#"{{"kind":"retract","session":{e},"target":{e},"reason":{e}}}"#),
        format!(r#"{{"kind":"intention","session":{e},"id":{e},"type":{e},"goal":{e},"satisfaction":{e}}}"#),
        format!(r#"{{"kind":"plan","session":{e},"id":{e},"steps":[{{"id":{e},"kind":{e},"deps":[]}}]}}"#),
        format!(r#"{{"kind":"log","session":{e},"level":"error","message":{e}}}"#),
        format!(r#"{{"kind":{e},"session":{e},"x":{e}}}"#),
    ]
    .join("\n")
}

#[test]
fn hostile_trace_never_puts_control_characters_on_screen() {
    let mut app = app_for("hostile.jsonl", hostile().as_bytes());
    let n = app.sess().unwrap().len();
    assert_eq!(n, 10);
    let mut r = None;
    press(&mut app, &mut r, "g");
    for i in 0..n {
        app.view_mut().cursor = i;
        for (zoom, p) in std::iter::once((false, Pane::Sigma)).chain(Pane::ALL.map(|p| (true, p))) {
            app.zoom = zoom;
            app.focus = p;
            app.detail_from = Pane::Timeline;
            for (w, h) in [(160, 45), (70, 20)] {
                let s = render_text(&mut app, w, h);
                assert!(is_clean(&s), "step {} pane {:?}:\n{s}", i + 1, p);
                assert!(!s.contains('\u{1b}'));
            }
        }
    }
    // The escapes are shown as visible markers, not dropped.
    app.view_mut().cursor = 8;
    app.focus = Pane::Detail;
    let s = render_text(&mut app, 200, 60);
    assert!(s.contains('␛'), "{s}");
    // And typed into the REPL, they are only text.
    press(&mut app, &mut r, ":sigma<enter>");
    let s = render_text(&mut app, 200, 60);
    assert!(is_clean(&s));
}

#[test]
fn recomputed_verdicts_mark_the_mismatched_claim() {
    let mut app = sample("alice-bob-norms.jsonl");
    let mut r = None;
    assert_eq!(press(&mut app, &mut r, "R"), vec![Effect::Recompute]);
    assert_eq!(app.auto_recompute(), vec![Effect::Recompute]);
    audit(&mut app, &mut Auditor::default());
    let v = app.view().analysis.clone().unwrap();
    // docs/samples.md: exactly one claim disagrees, at step 17 (claimed ungrounded, the
    // solver says entailed).
    assert_eq!(v.mismatches(), 1);
    let s = app.sess().unwrap();
    let (_, pos17) = *s.tl.verifies().iter().find(|&&(st, _)| st == 17).unwrap();
    assert_eq!(v.by_pos[&pos17].outcome, "entailed");
    assert_eq!(v.by_pos[&pos17].agrees, Some(false));
    assert!(
        v.findings
            .iter()
            .any(|(at, f)| *at == At::Event(16) && f.code.as_str() == "claimed-outcome-mismatch"),
        "{:?}",
        v.findings
    );
    app.focus = Pane::Verify;
    app.zoom = true;
    let screen = render_text(&mut app, 120, 20);
    assert!(screen.contains("≠ entailed"), "{screen}");
    assert!(screen.contains("= contradiction"), "{screen}");
    assert!(
        screen.contains(&format!("findings: {}", v.findings.len())),
        "{screen}"
    );
}

/// The findings the TUI shows are `doxascope audit`'s: same codes, same steps, same
/// messages, for every sample.
#[test]
fn findings_are_the_audits() {
    use doxascope::model::Model;
    use doxascope::model::audit::{AuditOptions, audit as run_audit};
    for name in [
        "alice-bob-norms.jsonl",
        "dns-troubleshooting.jsonl",
        "greedysat-stress.jsonl",
        "kipchoge-bdi.jsonl",
        "treasure-hunt.jsonl",
        "bdi-bad-retrieval.jsonl",
        "bdi-file-read.jsonl",
        "bdi-computation.jsonl",
        "bdi-answer-format.jsonl",
    ] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("sample-traces")
            .join(name);
        let bytes = std::fs::read(path).unwrap();
        let mut app = app_for(name, &bytes);
        audit(&mut app, &mut Auditor::default());
        let got: Vec<_> = app
            .view()
            .analysis
            .as_ref()
            .unwrap()
            .findings
            .iter()
            .map(|(_, f)| (f.step, f.code, f.message.clone()))
            .collect();
        let report = run_audit(&Model::from_bytes(name, &bytes), &AuditOptions::default());
        let mut want: Vec<_> = report
            .findings
            .iter()
            .map(|f| (f.step, f.code, f.message.clone()))
            .collect();
        let mut got_sorted = got.clone();
        got_sorted.sort();
        want.sort();
        assert_eq!(got_sorted, want, "{name}");
    }
}

/// Follow mode: data appended after an audit reaches the auditor as a delta, and the next
/// audit equals one of the whole trace read at once.
#[test]
fn audits_of_appended_data_equal_an_audit_of_everything() {
    let lines: Vec<&str> = FLAGGED.lines().collect();
    let (a, b) = lines.split_at(3);
    let first = format!("{}\n", a.join("\n"));
    let rest = format!("{}\n", b.join("\n"));
    // One reader fed twice, as a follower feeds it.
    let mut reader = doxascope::trace::Reader::new("flagged.jsonl", Default::default());
    let mut items = Vec::new();
    reader.feed(first.as_bytes(), &mut items);
    let mut store = Store::new();
    store.extend(std::mem::take(&mut items));
    highlight::load_now();
    let mut app = App::new(store, Theme::builtin("light").unwrap());
    let mut auditor = Auditor::default();
    audit(&mut app, &mut auditor);
    assert_eq!(app.problem_count(), Some(1));
    reader.feed(rest.as_bytes(), &mut items);
    reader.finish(&mut items);
    app.store.extend(items);
    app.on_data();
    let req = app.recompute_input(true).unwrap();
    assert_eq!(
        req.delta.items.len(),
        4,
        "only what is new is copied: {:?}",
        req.delta.items.len()
    );
    let (session, version) = (req.delta.session, req.version);
    auditor.add(req);
    app.on_analysis(auditor.analyse(session, version));
    let whole = {
        let mut w = app_for("flagged.jsonl", FLAGGED.as_bytes());
        audit(&mut w, &mut Auditor::default());
        w.view().analysis.clone().unwrap()
    };
    let codes = |a: &doxascope::tui::audit_job::Analysis| {
        a.findings
            .iter()
            .map(|(at, f)| (*at, f.code, f.step))
            .collect::<Vec<_>>()
    };
    assert_eq!(codes(app.view().analysis.as_ref().unwrap()), codes(&whole));
}

/// A big session goes to the auditor in pieces, one per turn of the event loop, and only the
/// last piece asks for the audit; the result is the audit of the whole session.
#[test]
fn a_big_session_is_handed_to_the_auditor_in_pieces() {
    let mut app = app_for("flagged.jsonl", FLAGGED.as_bytes());
    app.handover_chunk = 2;
    let mut auditor = Auditor::default();
    let mut runs = Vec::new();
    let version = loop {
        let req = app.recompute_input(true).unwrap();
        assert!(app.recomputing());
        runs.push(req.run);
        let version = req.version;
        auditor.add(req);
        if !app.handover_pending() {
            break version;
        }
    };
    assert_eq!(runs, vec![false, false, true], "6 events in pieces of 2");
    app.on_analysis(auditor.analyse(app.session(), version));
    assert!(!app.recomputing());
    // The formula, the retract target, the error log and the bad line (as `e` visits them).
    assert_eq!(app.problem_count(), Some(4));
}

/// An audit that answers after the view moved to another session is not shown, but it no
/// longer counts as running, so the new session gets its own audit.
#[test]
fn an_audit_of_a_session_left_behind_is_not_shown_and_does_not_block_the_next() {
    let two = format!(
        "{}\n{{\"kind\":\"announce\",\"session\":\"other\",\"formula\":\"q &\"}}\n",
        FLAGGED.trim_end()
    );
    let mut app = app_for("flagged.jsonl", two.as_bytes());
    assert_eq!(app.store.sessions.len(), 2);
    let mut auditor = Auditor::default();
    let req = app.recompute_input(true).unwrap();
    let version = req.version;
    auditor.add(req);
    app.show_session(1);
    app.on_data();
    app.on_analysis(auditor.analyse(0, version));
    assert!(app.view().analysis.is_none(), "not the shown session's");
    assert!(!app.recomputing());
    assert_eq!(app.auto_recompute(), vec![Effect::Recompute]);
    audit(&mut app, &mut auditor);
    assert_eq!(
        app.problem_count(),
        Some(1),
        "the other session's formula error"
    );
}

/// Scrollback lines after the `n`-th.
fn replies(app: &App, n: usize) -> Vec<String> {
    app.panes.repl.scrollback[n..]
        .iter()
        .map(|l| l.text.clone())
        .collect()
}

#[test]
fn a_command_typed_while_the_session_is_handed_to_the_repl_is_answered_when_it_completes() {
    // The one-shot answer (the whole session with the command) is the oracle.
    let mut whole = sample("treasure-hunt.jsonl");
    let mut w = ReplState::default();
    let a = w.handle(Request {
        line: "why ¬treasure_in_a".into(),
        step: 17,
        purpose: doxascope::tui::app::Purpose::Prompt,
        data: whole.repl_input(),
    });
    whole.on_reply(a);
    let expected = replies(&whole, 0);
    assert!(
        expected.iter().any(|l| l.contains("t3-not-a")),
        "{expected:?}"
    );

    let mut app = sample("treasure-hunt.jsonl");
    app.view_mut().follow = false;
    app.goto_step(17);
    app.handover_chunk = 11;
    let mut r = ReplState::default();
    let effects = app.on_key(KeyEvent::new(KeyCode::Char(':'), KeyModifiers::NONE));
    assert!(effects.is_empty());
    for c in "why ¬treasure_in_a".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    let mut effects = app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let Some(Effect::Run {
        line,
        step,
        purpose,
    }) = effects.pop()
    else {
        panic!("Enter runs the line");
    };
    let typed = app.panes.repl.scrollback.len();
    app.queue_command(line, step, purpose);
    // 23 events in pieces of 11: two pieces, then the command with the last event.
    let mut pieces = 0;
    loop {
        let msg = app.repl_next().expect("a message while the command waits");
        match msg {
            Msg::Data(d) => {
                pieces += 1;
                assert!(d.positions.len() <= 11);
                assert!(app.repl_pending());
                assert_eq!(app.repl_loading, Some((11 * pieces, 23)));
                assert!(r.apply(Msg::Data(d)).is_none(), "a piece is not answered");
                // Input stays live meanwhile: the user can step back and forth.
                app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
                assert_eq!(app.mode, Mode::Normal);
                app.on_key(KeyEvent::new(KeyCode::Char('['), KeyModifiers::NONE));
                app.on_key(KeyEvent::new(KeyCode::Char(']'), KeyModifiers::NONE));
            }
            Msg::Run(req) => {
                assert_eq!(req.data.as_ref().map(|d| d.positions.len()), Some(1));
                let a = r.apply(Msg::Run(req)).expect("a command is answered");
                app.on_reply(a);
                break;
            }
        }
    }
    assert_eq!(pieces, 2);
    assert!(!app.repl_pending());
    assert_eq!(app.repl_loading, None);
    assert!(app.repl_next().is_none(), "nothing more to send");
    let got = replies(&app, typed);
    assert!(got[0].starts_with("loading…"), "{got:?}");
    assert_eq!(
        got[1..],
        expected[..],
        "same answer as with the whole session"
    );
}

#[test]
fn unfiltered_sigma_rows_are_sigma_at_every_step_without_the_list() {
    use doxascope::tui::panes::sigma::SigmaRows;
    for name in [
        "treasure-hunt.jsonl",
        "greedysat-stress.jsonl",
        "alice-bob-norms.jsonl",
        "broken.jsonl",
    ] {
        let mut app = sample(name);
        let mut r = None;
        let n = app.sess().map_or(0, |s| s.len());
        press(&mut app, &mut r, "g");
        for t in 1..=n {
            app.goto_step(u64::from(t));
            assert_eq!(app.step(), t);
            let rows = app.sigma_rows();
            assert!(matches!(*rows, SigmaRows::Prefix(_)), "{name} at {t}");
            let s = app.sess().unwrap();
            // The oracle: Σ with retracted beliefs, as the list the filter path builds.
            let want = s.sigma_at(t, true);
            assert_eq!(rows.range(0, usize::MAX), want, "{name} at {t}");
            assert_eq!(rows.len(), want.len());
            assert_eq!(rows.get(want.len()), None);
            // Windows of it, as a frame asks for them.
            if want.len() > 2 {
                assert_eq!(rows.range(1, 3), want[1..3]);
            }
            assert_eq!(
                rows.range(want.len() + 5, want.len() + 9),
                Vec::<u32>::new()
            );
        }
        // A filter that keeps only active beliefs is Σ without retracted ones.
        press(&mut app, &mut r, "Fstatus:active<enter>");
        let rows = app.sigma_rows();
        assert!(!matches!(*rows, SigmaRows::Prefix(_)));
        let s = app.sess().unwrap();
        assert_eq!(rows.range(0, usize::MAX), s.sigma_at(app.step(), false));
    }
}

/// Seed 001's QUERY and ANSWER checks reach the TUI: the wrong query answer and the answer Σ
/// contradicts are findings on their events, shown in the detail pane.
#[test]
fn query_and_answer_findings_show_on_their_events() {
    let trace = concat!(
        r#"{"kind":"announce","id":"f","formula":"p"}"#,
        "\n",
        r#"{"kind":"announce","id":"r","formula":"p -> q","role":"rule"}"#,
        "\n",
        r#"{"kind":"query","formula":"q","answer":"unknown"}"#,
        "\n",
        r#"{"kind":"answer","text":"q is false","formula":"!q"}"#,
        "\n",
    );
    let mut app = app_for("qa.jsonl", trace.as_bytes());
    audit(&mut app, &mut Auditor::default());
    let codes: Vec<(At, &str)> = app
        .view()
        .analysis
        .as_ref()
        .unwrap()
        .findings
        .iter()
        .map(|(at, f)| (*at, f.code.as_str()))
        .collect();
    assert_eq!(
        codes,
        vec![
            (At::Event(2), "query-answer-mismatch"),
            (At::Event(3), "answer-contradicts-sigma")
        ]
    );
    app.view_mut().follow = false;
    app.goto_step(4);
    app.detail_from = Pane::Timeline;
    app.focus = Pane::Detail;
    app.zoom = true;
    let s = render_text(&mut app, 160, 30);
    assert!(s.contains("answer-contradicts-sigma"), "{s}");
}

/// Truth maintenance reaches the TUI: the derived belief that outlived its premise is a
/// finding on the retraction that left it unsupported.
#[test]
fn unsupported_derivation_shows_on_the_retraction() {
    let trace = concat!(
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        "\n",
        r#"{"kind":"announce","id":"r","formula":"p -> q","role":"rule"}"#,
        "\n",
        r#"{"kind":"announce","id":"d","formula":"q","because":["a","r"]}"#,
        "\n",
        r#"{"kind":"retract","target":"a"}"#,
        "\n",
    );
    let mut app = app_for("tm.jsonl", trace.as_bytes());
    audit(&mut app, &mut Auditor::default());
    let codes: Vec<(At, &str)> = app
        .view()
        .analysis
        .as_ref()
        .unwrap()
        .findings
        .iter()
        .map(|(at, f)| (*at, f.code.as_str()))
        .collect();
    assert_eq!(codes, vec![(At::Event(3), "unsupported-derivation")]);
    app.view_mut().follow = false;
    app.goto_step(4);
    app.detail_from = Pane::Timeline;
    app.focus = Pane::Detail;
    app.zoom = true;
    let s = render_text(&mut app, 160, 30);
    assert!(s.contains("unsupported-derivation"), "{s}");
}

/// Seed 001's prompt in the TUI's command line: the tag instructions, the norm, and only the
/// beliefs relevant to the question.
#[test]
fn repl_line_shows_seed_001s_prompt() {
    let mut app = sample("alice-bob-norms.jsonl");
    let mut r = None;
    press(&mut app, &mut r, ":prompt Older(alice, carol)<enter>");
    let all = app
        .panes
        .repl
        .scrollback
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        all.contains("ASSERT tag") && all.contains("ANSWER tag"),
        "{all}"
    );
    assert!(all.contains("- ∀x. ¬RevealAddress(x)"), "{all}");
    assert!(all.contains("- Parent(bob, carol)"), "{all}");
    assert!(!all.contains("Mother(x, y)"), "{all}");
}

/// Each session has its own view: leaving a session and coming back finds its cursor, its
/// follow mode and its audit as they were, and the other session starts at its newest step
/// with no audit of its own yet.
#[test]
fn each_session_keeps_its_own_cursor_follow_mode_and_audit() {
    let two = format!(
        "{}\n{{\"kind\":\"announce\",\"session\":\"other\",\"formula\":\"q\"}}\n{{\"kind\":\"announce\",\"session\":\"other\",\"formula\":\"r\"}}\n",
        FLAGGED.trim_end()
    );
    let mut app = app_for("flagged.jsonl", two.as_bytes());
    let mut r = None;
    audit(&mut app, &mut Auditor::default());
    let findings = app.problem_count();
    assert!(findings.is_some());
    press(&mut app, &mut r, "g]");
    assert_eq!(app.step(), 2);
    assert!(!app.view().follow);
    press(&mut app, &mut r, "s");
    assert_eq!(app.session(), 1);
    assert!(
        app.view().follow,
        "a session seen for the first time follows"
    );
    assert_eq!(app.step(), 2, "at its newest step");
    assert_eq!(app.problem_count(), None, "no audit of this session yet");
    press(&mut app, &mut r, "[");
    assert_eq!(app.step(), 1);
    press(&mut app, &mut r, "s");
    assert_eq!(app.session(), 0);
    assert_eq!(app.step(), 2, "the cursor where it was left");
    assert!(!app.view().follow, "still paused");
    assert_eq!(app.problem_count(), findings, "its audit kept");
    press(&mut app, &mut r, "s");
    assert_eq!(app.step(), 1, "the other session's cursor too");
}

/// Issue 13 item 2: the whole BDI state in the plan pane's tabs, at any step. `l` / `h`
/// (→ / ←) switch the tab; what each tab shows follows the selected step.
#[test]
fn plan_pane_tabs_show_the_whole_bdi_state_at_any_step() {
    let mut app = sample("kipchoge-bdi.jsonl");
    let mut r = None;
    app.focus = Pane::Plan;
    app.zoom = true;
    let plan = render_text(&mut app, 140, 60);
    assert!(
        plan.contains("‹plan› beliefs library") && plan.contains("plan plan-2"),
        "{plan}"
    );
    press(&mut app, &mut r, "l");
    let beliefs = render_text(&mut app, 140, 60);
    assert!(beliefs.contains("plan ‹beliefs› library"), "{beliefs}");
    for want in [
        "schema beliefs (3)",
        "task requires rounding to nearest 1000",
        "desires (1)",
        "ground beliefs (9)",
        "final_answer = 17 thousand hours",
        // numerator was written twice (plan-1/S2 at 16, plan-2/S2 at 24): its history.
        "numerator = 356400 km  web_search, step 24, by a plan step, 2 writes",
        "before: 356400 km at step 16",
        "marathon_record_time = 2:01:09",
    ] {
        assert!(beliefs.contains(want), "{want}:\n{beliefs}");
    }
    press(&mut app, &mut r, "l");
    let library = render_text(&mut app, 140, 60);
    for want in [
        "plan library (2)",
        "plan-1  generated, 1 version  used 1  succeeded 0  failed 1  review: remove",
        "plan-2  generated, 1 version  used 1  succeeded 1  failed 0  review: keep",
        "review decisions (2)",
        "satisfaction (1)",
    ] {
        assert!(library.contains(want), "{want}:\n{library}");
    }
    // At step 20 (plan-1 deadlocked): one plan, no counters, no review yet; the beliefs
    // tab has numerator's first write only.
    app.view_mut().follow = false;
    app.goto_step(20);
    let early = render_text(&mut app, 140, 60);
    assert!(
        early.contains("plan library (1)") && early.contains("used –"),
        "{early}"
    );
    assert!(early.contains("review decisions (0)"), "{early}");
    press(&mut app, &mut r, "h");
    let early = render_text(&mut app, 140, 60);
    assert!(
        early.contains("numerator = 356400 km  web_search, step 16, by a plan step"),
        "{early}"
    );
    assert!(!early.contains("final_answer"), "{early}");
    // ← from the first tab wraps to the last.
    press(&mut app, &mut r, "hh");
    assert!(render_text(&mut app, 140, 60).contains("plan beliefs ‹library›"));
}

/// Issue 13 item 7: seed 000's inconsistency log in the retractions pane, at any step: the
/// contradiction of the treasure hunt's step 5 unresolved until the revision settles.
#[test]
fn retractions_pane_shows_the_inconsistency_log_at_any_step() {
    let mut app = sample("treasure-hunt.jsonl");
    let mut r = None;
    audit(&mut app, &mut Auditor::default());
    app.focus = Pane::Retract;
    app.zoom = true;
    press(&mut app, &mut r, "l");
    let end = render_text(&mut app, 160, 20);
    assert!(end.contains("revisions ‹inconsistencies›"), "{end}");
    assert!(
        end.contains(
            "15 contradiction t5-user-a treasure_in_a conflict t1-domain, t2-map-b, t5-user-a"
        ) && end
            .contains("resolved at step 21 by revision (confidence), dropping t2-map-b, t3-not-a"),
        "{end}"
    );
    app.view_mut().follow = false;
    app.goto_step(17);
    let mid = render_text(&mut app, 160, 20);
    assert!(mid.contains("unresolved at step 17"), "{mid}");
    app.goto_step(14);
    let before = render_text(&mut app, 160, 20);
    assert!(
        before.contains("no contradiction announced by this step"),
        "{before}"
    );
    // Enter opens the entry; the detail pane shows its announcement.
    app.goto_step(23);
    press(&mut app, &mut r, "<enter>");
    let popup = render_text(&mut app, 160, 30);
    assert!(
        popup.contains("a minimal conflict: t1-domain, t2-map-b, t5-user-a"),
        "{popup}"
    );
    press(&mut app, &mut r, "<esc>");
    app.detail_from = Pane::Retract;
    assert_eq!(
        app.selected_event()
            .and_then(|p| app.store.event(p))
            .and_then(|e| e.id.clone())
            .as_deref(),
        Some("t5-user-a")
    );
}

/// Postcondition and satisfaction records are claims of the verification pane too: each
/// beside its condition re-run, and a disagreement counted with the gate's (issue 29).
#[test]
fn postcondition_and_satisfaction_records_are_verification_claims() {
    let trace = concat!(
        r#"{"kind":"intention","id":"I1","satisfaction":"distance > 42"}"#,
        "\n",
        r#"{"kind":"plan","id":"P1","steps":[{"id":"S1","post":"distance > 42"}]}"#,
        "\n",
        r#"{"kind":"step","plan":"P1","step":"S1","status":"dispatched"}"#,
        "\n",
        r#"{"kind":"step","plan":"P1","step":"S1","status":"done","new_beliefs":[{"name":"distance","value":41.2}]}"#,
        "\n",
        r#"{"kind":"postcondition","plan":"P1","step":"S1","tier":2,"ok":true,"program":"distance > 42"}"#,
        "\n",
        r#"{"kind":"satisfaction","intention":"I1","ok":false}"#,
        "\n",
    );
    let mut app = app_for("tier2.jsonl", trace.as_bytes());
    audit(&mut app, &mut Auditor::default());
    let v = app.view().analysis.clone().unwrap();
    assert_eq!(v.by_pos.len(), 2, "{:?}", v.by_pos);
    assert_eq!(v.mismatches(), 1, "{:?}", v.by_pos);
    app.focus = Pane::Verify;
    let s = render_text(&mut app, 160, 50);
    assert!(s.contains("verification 2"), "{s}");
    assert!(s.contains("≠ not met"), "{s}");
    assert!(s.contains("= not met"), "{s}");
    assert!(s.contains("satisfaction of I1"), "{s}");
    // The plan pane puts the re-run beside the satisfaction record, with the value read.
    assert!(
        s.contains("satisfaction: NOT met  = recomputed false (distance = 41.2)"),
        "{s}"
    );
    assert!(s.contains("S1 tier 2: false (distance = 41.2)"), "{s}");
}
