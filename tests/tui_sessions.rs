//! The session list (`o`, `:sessions`), the previous session (`-`), linked conversations
//! (`c`, the header's "part i of n") and `diff --tui`'s events tab, driven by keys on the
//! real `App` and read off the rendered screen.

use doxascope::model::diff::Align;
use doxascope::trace::{Item, Reader, ReaderConfig};
use doxascope::tui::app::{App, Effect};
use doxascope::tui::audit_job::Auditor;
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::panes::diff::DiffView;
use doxascope::tui::text::is_clean;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn app_for(lines: &[&str]) -> App {
    highlight::load_now();
    App::new(
        Store::from_bytes("t.jsonl", (lines.join("\n") + "\n").as_bytes()),
        Theme::builtin("light").unwrap(),
    )
}

fn press(app: &mut App, keys: &str) -> Vec<Effect> {
    let mut fx = Vec::new();
    for c in keys.chars() {
        let k = match c {
            '\n' => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
            '\x1b' => KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE),
            '\t' => KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE),
            c if c.is_ascii_uppercase() => KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT),
            c => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        };
        fx.extend(app.on_key(k));
    }
    fx
}

fn shown(app: &App) -> String {
    app.sess().map(|s| s.name.to_string()).unwrap_or_default()
}

/// The names of the list's rows, in the order shown.
fn listed(app: &App) -> Vec<String> {
    let p = app.picker.as_ref().expect("the session list is open");
    p.rows(app).into_iter().map(|r| r.name).collect()
}

/// The rendered line of the list that shows session `name`.
fn row_of(screen: &str, name: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(&format!("{name} ")) && l.contains('│'))
        .unwrap_or_else(|| panic!("no row for {name} in\n{screen}"))
        .to_string()
}

const TRACE: &[&str] = &[
    r#"{"kind":"session","session":"s1"}"#,
    r#"{"kind":"tool_call","session":"s1","tool":"t","ts":"2026-01-01T10:00:00Z"}"#,
    r#"{"kind":"tool_call","session":"s1","tool":"t","status":"error","ts":"2026-01-01T10:00:05Z","duration_ms":1000}"#,
    r#"{"kind":"score","session":"s1","name":"ok","value":false}"#,
    r#"{"kind":"score","session":"s1","name":"style","value":0.5}"#,
    r#"{"kind":"log","session":"s1","level":"error","message":"disk full"}"#,
    r#"{"kind":"session","session":"s2"}"#,
    r#"{"kind":"thought","session":"s2","text":"fine","ts":"2026-01-01T11:00:00Z"}"#,
    r#"{"kind":"session","session":"s3","meta":{"conversation_id":"c-1"}}"#,
    r#"{"kind":"thought","session":"s3","text":"turn one"}"#,
    r#"{"kind":"session","session":"s4","meta":{"conversation_id":"c-1"}}"#,
    r#"{"kind":"thought","session":"s4","text":"turn two"}"#,
    r#"{"kind":"session","session":"s5"}"#,
    r#"{"kind":"thought","session":"s5","text":"alone"}"#,
];

#[test]
fn the_list_shows_each_sessions_figures_and_the_audits_findings_once_run() {
    let mut app = app_for(TRACE);
    press(&mut app, "o");
    let screen = render_text(&mut app, 140, 40);
    let s1 = row_of(&screen, "s1");
    // 6 events, 2 steps (tool calls), 2 errors (the failed call, the error log), 2 scores
    // of which 1 fails, 6s from the first time to the end of the failed call.
    let cols: Vec<&str> = s1.split_whitespace().collect();
    assert!(cols.windows(4).any(|w| w == ["6", "2", "✗2", "…"]), "{s1}");
    assert!(
        s1.contains("2 (1✗)") && s1.contains("6.00s") && s1.contains("10:00:05"),
        "{s1}"
    );
    let s2 = row_of(&screen, "s2");
    let cols: Vec<&str> = s2.split_whitespace().collect();
    assert!(cols.windows(4).any(|w| w == ["2", "0", "0", "…"]), "{s2}");
    // The audit's findings replace "…" once it ran.
    press(&mut app, "\x1b");
    let mut auditor = Auditor::default();
    let req = app
        .recompute_input(true)
        .expect("the session is handed over");
    let (session, version) = (req.delta.session, req.version);
    auditor.add(req);
    let a = auditor.analyse(session, version);
    let n = a.findings.len();
    assert!(n >= 2, "a failed call and a failing score are findings");
    app.on_analysis(a);
    press(&mut app, "o");
    let screen = render_text(&mut app, 140, 40);
    let s1 = row_of(&screen, "s1");
    let cols: Vec<&str> = s1.split_whitespace().collect();
    assert!(
        cols.windows(4)
            .any(|w| w == ["6", "2", "✗2", &n.to_string()]),
        "{s1}"
    );
    assert!(is_clean(&screen));
}

#[test]
fn sorting_filtering_enter_and_the_previous_session() {
    let mut app = app_for(TRACE);
    press(&mut app, ":");
    for c in "sessions".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    press(&mut app, "\n");
    assert_eq!(listed(&app)[0], "s1", "read order first");
    // E sorts by errors, E again reverses: the failing session first, then read order.
    press(&mut app, "E");
    assert_eq!(listed(&app).last().map(String::as_str), Some("s1"));
    press(&mut app, "E");
    assert_eq!(listed(&app)[0], "s1");
    // `/` filters by name; Enter ends the filter, Enter again opens the row.
    press(&mut app, "/s2\n");
    assert_eq!(listed(&app), ["s2"]);
    press(&mut app, "\n");
    assert!(app.picker.is_none(), "Enter opens and closes the list");
    assert_eq!(shown(&app), "s2");
    // `-` is `cd -`: back and forth between the last two sessions.
    press(&mut app, "-");
    assert_eq!(shown(&app), "s1");
    press(&mut app, "-");
    assert_eq!(shown(&app), "s2");
    press(&mut app, "S");
    assert_eq!(shown(&app), "s1");
    press(&mut app, "-");
    assert_eq!(shown(&app), "s2");
    // Esc closes without moving.
    press(&mut app, "oj\x1b");
    assert!(app.picker.is_none());
    assert_eq!(shown(&app), "s2");
}

#[test]
fn linked_sessions_are_grouped_and_the_header_says_which_part() {
    let mut app = app_for(TRACE);
    press(&mut app, "o");
    // Sorted by name, Z to A: the conversation's parts stay together, in part order, where
    // its first row lands.
    press(&mut app, "NN");
    assert_eq!(listed(&app), ["s5", "s3", "s4", "s2", "s1"]);
    let screen = render_text(&mut app, 140, 40);
    assert!(
        row_of(&screen, "s3").contains("c-1 · part 1 of 2"),
        "{screen}"
    );
    assert!(
        row_of(&screen, "s4").contains("c-1 · part 2 of 2"),
        "{screen}"
    );
    assert!(!row_of(&screen, "s5").contains("part"), "{screen}");
    press(&mut app, "/s3\n\n");
    assert_eq!(shown(&app), "s3");
    let screen = render_text(&mut app, 140, 30);
    let header = screen.lines().next().unwrap_or_default();
    assert!(header.contains("conversation c-1, part 1 of 2"), "{header}");
    press(&mut app, "c");
    assert_eq!(shown(&app), "s4");
    let screen = render_text(&mut app, 140, 30);
    assert!(
        screen
            .lines()
            .next()
            .unwrap_or_default()
            .contains("part 2 of 2")
    );
    press(&mut app, "c");
    assert_eq!(shown(&app), "s3", "after the last part, the first");
    // A session in no conversation has no part, and `c` says so.
    press(&mut app, "s");
    assert_eq!(shown(&app), "s4");
    press(&mut app, "s");
    assert_eq!(shown(&app), "s5");
    press(&mut app, "c");
    assert_eq!(shown(&app), "s5");
    assert!(app.status.contains("not linked"), "{}", app.status);
    let screen = render_text(&mut app, 140, 30);
    assert!(
        !screen
            .lines()
            .next()
            .unwrap_or_default()
            .contains("conversation")
    );
}

#[test]
fn sessions_that_arrive_while_the_list_is_open_are_listed() {
    let mut app = app_for(&TRACE[..2]);
    press(&mut app, "o");
    assert_eq!(listed(&app), ["s1"]);
    let more = concat!(
        r#"{"kind":"tool_call","session":"s1","tool":"t","status":"error"}"#,
        "\n",
        r#"{"kind":"thought","session":"late","text":"hello"}"#,
        "\n"
    );
    let mut r = Reader::new("t.jsonl", ReaderConfig::default());
    let mut items: Vec<Item> = Vec::new();
    r.feed(more.as_bytes(), &mut items);
    r.finish(&mut items);
    app.store.extend(items);
    app.on_data();
    assert_eq!(listed(&app), ["s1", "late"]);
    let screen = render_text(&mut app, 140, 40);
    let s1 = row_of(&screen, "s1");
    let cols: Vec<&str> = s1.split_whitespace().collect();
    assert!(cols.windows(3).any(|w| w == ["3", "2", "✗1"]), "{s1}");
}

fn diff_app() -> App {
    let mut app = app_for(&[
        r#"{"kind":"announce","session":"a","id":"p","formula":"p"}"#,
        r#"{"kind":"tool_call","session":"a","tool":"search","args":{"q":"x"},"result":"r1"}"#,
        r#"{"kind":"tool_call","session":"a","tool":"fetch","result":"ok"}"#,
        r#"{"kind":"answer","session":"a","text":"same"}"#,
        r#"{"kind":"announce","session":"b","id":"p","formula":"p"}"#,
        r#"{"kind":"tool_call","session":"b","tool":"search","args":{"q":"x"},"result":"r2 \u001b[31mred"}"#,
        r#"{"kind":"tool_call","session":"b","tool":"fetch","result":"ok"}"#,
        r#"{"kind":"answer","session":"b","text":"same"}"#,
    ]);
    app.diff = DiffView::build(&app.store, 0, 1, Align::Step);
    app
}

#[test]
fn diff_tui_shows_the_events_that_differ_on_its_second_tab() {
    let mut app = diff_app();
    let screen = render_text(&mut app, 120, 30);
    assert!(
        !screen.contains("tool calls: A has 2"),
        "Σ is the first tab"
    );
    press(&mut app, "\t");
    let screen = render_text(&mut app, 120, 30);
    assert!(
        screen.contains("tool calls: A has 2, B has 2; 1 differ"),
        "{screen}"
    );
    assert!(
        screen.contains("A #1 search at step 2 · B #1 search at step 2"),
        "{screen}"
    );
    assert!(screen.contains(r#"result: A: "r1" · B: "r2"#), "{screen}");
    assert!(
        screen.contains("answers: A has 1, B has 1; the same"),
        "{screen}"
    );
    assert!(is_clean(&screen), "the trace's escape is shown, not sent");
    // It scrolls: the first line leaves the screen.
    press(&mut app, "j");
    let screen = render_text(&mut app, 120, 30);
    assert!(!screen.contains("tool calls: A has 2"), "{screen}");
    // Tab goes back to Σ side by side.
    press(&mut app, "\t");
    let screen = render_text(&mut app, 120, 30);
    assert!(screen.contains("A: a step 0 of 4 · |Σ| 0"), "{screen}");
}

#[test]
fn a_session_asked_for_by_name_is_shown_once_it_arrives_and_a_missing_one_is_said() {
    let mut app = app_for(&TRACE[..2]);
    app.want_session = Some("late".into());
    app.wanted_missing();
    assert_eq!(shown(&app), "s1");
    assert!(
        app.status
            .contains("no session named \"late\" (yet); sessions: s1"),
        "{}",
        app.status
    );
    let mut r = Reader::new("t.jsonl", ReaderConfig::default());
    let mut items: Vec<Item> = Vec::new();
    r.feed(
        b"{\"kind\":\"thought\",\"session\":\"late\",\"text\":\"here\"}\n",
        &mut items,
    );
    r.finish(&mut items);
    app.store.extend(items);
    app.on_data();
    assert_eq!(shown(&app), "late");
    assert_eq!(app.want_session, None);
}
