//! Watchpoints while following (issue 32 item 3): a followed trace grows line by line; the
//! app's watch checks go to the REPL worker's own handler and the answers come back, as the
//! event loop would do it, without threads or a terminal.

use std::path::PathBuf;
use std::sync::Arc;

use doxascope::model::Model;
use doxascope::repl::{ModelSigma, Repl, Reply, Stop};

use doxascope::trace::{Reader, ReaderConfig};
use doxascope::tui::app::{App, Effect};
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::repl_job::ReplState;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A sample trace read as a follower would: `first` lines now, the rest by [`Followed::grow`].
struct Followed {
    reader: Reader,
    lines: Vec<String>,
    next: usize,
}

impl Followed {
    fn open(name: &str, first: usize) -> (Followed, App) {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("sample-traces")
            .join(name);
        Followed::text(name, &std::fs::read_to_string(path).unwrap(), first)
    }

    fn text(name: &str, text: &str, first: usize) -> (Followed, App) {
        highlight::load_now();
        let mut f = Followed {
            reader: Reader::new(name, ReaderConfig::default()),
            lines: text.lines().map(|l| format!("{l}\n")).collect(),
            next: 0,
        };
        let mut store = Store::new();
        store.extend(f.read(first));
        (f, App::new(store, Theme::builtin("light").unwrap()))
    }

    fn read(&mut self, n: usize) -> Vec<doxascope::trace::Item> {
        let mut items = Vec::new();
        let end = (self.next + n).min(self.lines.len());
        for l in &self.lines[self.next..end] {
            self.reader.feed(l.as_bytes(), &mut items);
        }
        self.next = end;
        items
    }

    /// `n` more lines arrive; the app is told, and its queued commands are answered.
    fn grow(&mut self, app: &mut App, repl: &mut ReplState, n: usize) {
        app.store.extend(self.read(n));
        app.on_data();
        drain(app, repl);
    }
}

/// Hands every queued command to the worker's handler and feeds the answers back.
fn drain(app: &mut App, repl: &mut ReplState) {
    while let Some(msg) = app.repl_next() {
        if let Some(a) = repl.apply(msg) {
            app.on_reply(a);
        }
    }
}

fn press(app: &mut App, repl: &mut ReplState, keys: &str) {
    for c in keys.chars() {
        let k = match c {
            '\n' => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
            '\x1b' => KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE),
            c => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        };
        for e in app.on_key(k) {
            if let Effect::Run {
                line,
                step,
                purpose,
            } = e
            {
                app.queue_command(line, step, purpose);
            }
        }
        drain(app, repl);
    }
}

/// Where `continue` stops, one after the other from step 0, in the headless REPL over the
/// whole recorded trace with the point `set`.
fn recorded_stops(sample: &str, set: &str) -> Vec<u64> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(sample);
    let model = Model::load(&[path]).expect("the sample loads");
    let name = model.pick_session(None).unwrap().name().to_string();
    let mut r = Repl::new(Box::new(ModelSigma::new(Arc::new(model), name)));
    r.run_line("at 0").unwrap();
    r.run_line(set).unwrap();
    let mut out = Vec::new();
    while let Ok(Reply::Watch {
        stop: Some(Stop { step: Some(s), .. }),
        ..
    }) = r.run_line("continue")
    {
        out.push(s);
    }
    out
}

fn scrollback(app: &App) -> String {
    app.panes
        .repl
        .scrollback
        .iter()
        .map(|l| l.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn following_pauses_where_a_watched_formula_changes_and_f_resumes() {
    let (mut f, mut app) = Followed::open("treasure-hunt.jsonl", 3);
    let mut r = ReplState::default();
    press(&mut app, &mut r, ":watch treasure_in_b\n\x1b");
    assert!(app.view().follow);
    // treasure_in_b becomes entailed at step 8 (line 8): the view stops there, not at the end.
    f.grow(&mut app, &mut r, 15);
    assert_eq!(app.store.sessions[0].len(), 18);
    assert!(!app.view().follow, "following paused");
    assert_eq!(app.step(), 8);
    assert!(
        app.status
            .starts_with("watch #1: treasure_in_b became entailed (was unknown) at step 8")
            && app
                .status
                .contains("← announce t2-map-b (treasure-hunt.jsonl:8)"),
        "{}",
        app.status
    );
    let screen = render_text(&mut app, 200, 40);
    assert!(screen.contains("⏸ watch"), "{screen}");
    // More lines while paused move nothing.
    f.grow(&mut app, &mut r, 5);
    assert_eq!(app.store.sessions[0].len(), 23);
    assert_eq!(app.step(), 8);
    assert!(!app.view().follow);
    // `:watch` lists the point and where it last stopped.
    press(&mut app, &mut r, ":watch\n\x1b");
    assert!(
        scrollback(&app).contains("1. watch treasure_in_b (last stopped at step 8)"),
        "{}",
        scrollback(&app)
    );
    // `f` resumes; what arrived after the stop is checked too, so each later change pauses
    // again: the pauses are `continue`'s stops over the whole recorded trace.
    let mut stops = vec![8];
    for _ in 0..30 {
        press(&mut app, &mut r, "f");
        if app.view().follow {
            break;
        }
        let step = u64::from(app.step());
        assert!(
            app.status.starts_with("watch #1: treasure_in_b ")
                && app.status.contains(&format!(" at step {step}"))
                && app.status.contains(" ← "),
            "{}",
            app.status
        );
        stops.push(step);
    }
    assert_eq!(
        stops,
        recorded_stops("treasure-hunt.jsonl", "watch treasure_in_b")
    );
    assert!(
        stops.contains(&15),
        "it became inconsistent at step 15: {stops:?}"
    );
    assert!(app.view().follow);
    assert_eq!(
        u64::from(app.step()),
        u64::from(app.store.sessions[0].len())
    );
    assert_eq!(app.view().watch.paused, None);
    assert!(!render_text(&mut app, 200, 40).contains("⏸ watch"));
}

#[test]
fn a_watched_formula_whose_status_stays_does_not_pause() {
    let (mut f, mut app) = Followed::open("treasure-hunt.jsonl", 9);
    let mut r = ReplState::default();
    // Entailed since step 8, and never changed by the lines that follow.
    press(&mut app, &mut r, ":watch treasure_in_b\n\x1b");
    f.grow(&mut app, &mut r, 5);
    assert!(app.view().follow, "{}", app.status);
    assert_eq!(app.step(), 14);
    assert_eq!(app.view().watch.paused, None);
}

#[test]
fn continue_moves_the_pause_and_resumes_following_when_nothing_is_left() {
    let (mut f, mut app) = Followed::open("treasure-hunt.jsonl", 3);
    let mut r = ReplState::default();
    press(&mut app, &mut r, ":watch treasure_in_b\n\x1b");
    f.grow(&mut app, &mut r, 20);
    assert_eq!(app.step(), 8);
    let want = recorded_stops("treasure-hunt.jsonl", "watch treasure_in_b");
    for &stop in &want[1..] {
        press(&mut app, &mut r, ":continue\n\x1b");
        assert!(!app.view().follow);
        assert_eq!(u64::from(app.step()), stop);
        assert!(
            app.status.contains(&format!(" at step {stop}")),
            "{}",
            app.status
        );
        assert!(app.view().watch.paused.is_some());
    }
    // Nothing left after the last stop: `:continue` resumes following.
    press(&mut app, &mut r, ":continue\n\x1b");
    assert!(app.view().follow, "{}", app.status);
    assert_eq!(app.step(), 23);
    assert_eq!(app.view().watch.paused, None);
}

#[test]
fn a_breakpoint_pauses_following_at_its_finding() {
    let (mut f, mut app) = Followed::open("kipchoge-bdi.jsonl", 5);
    let mut r = ReplState::default();
    press(&mut app, &mut r, ":break dag-deadlock\n\x1b");
    f.grow(&mut app, &mut r, 1000);
    assert!(!app.view().follow);
    assert_eq!(app.step(), 19);
    assert!(
        app.status
            .starts_with("break #1: dag-deadlock at step 19: "),
        "{}",
        app.status
    );
}

#[test]
fn a_failed_tool_call_pauses_following_at_once() {
    let trace = [
        r#"{"kind":"announce","formula":"p"}"#,
        r#"{"kind":"tool_call","id":"t1","tool":"search","status":"ok"}"#,
        r#"{"kind":"announce","formula":"q"}"#,
        r#"{"kind":"tool_call","id":"t2","tool":"fetch","status":"error","error":"404"}"#,
        r#"{"kind":"announce","formula":"r"}"#,
    ]
    .join("\n");
    let (mut f, mut app) = Followed::text("agent.jsonl", &trace, 1);
    let mut r = ReplState::default();
    press(&mut app, &mut r, ":break tool-call-failed\n\x1b");
    // A successful call is a near miss.
    f.grow(&mut app, &mut r, 2);
    assert!(app.view().follow, "{}", app.status);
    f.grow(&mut app, &mut r, 2);
    assert!(!app.view().follow);
    assert_eq!(app.step(), 4);
    assert!(
        app.status
            .starts_with("break #1: tool-call-failed at step 4: ")
            && app.status.contains("404"),
        "{}",
        app.status
    );
    assert!(render_text(&mut app, 200, 40).contains("⏸ watch"));
}
