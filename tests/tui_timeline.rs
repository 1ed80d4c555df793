//! The timeline's lnav habits, driven through an `App` with key and mouse events: the filter
//! by kind, level and text with filter-in and filter-out (`F` on the timeline), horizontal
//! scroll of long rows (← →), clicks that select a row or a pane, and `:open PATH`.

use std::path::PathBuf;

use doxascope::trace::Body;
use doxascope::tui::app::{App, Effect, Mode, Pane};
use doxascope::tui::data::{RowItem, Store};
use doxascope::tui::highlight;
use doxascope::tui::panes::timeline::{TimelineFilter, summary};
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;
use proptest::prelude::*;
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

fn sample(name: &str) -> App {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(name);
    app_for(name, &std::fs::read(path).unwrap())
}

/// Feeds keys: `<name>` is a special key, anything else a character. Returns the effects.
fn press(app: &mut App, keys: &str) -> Vec<Effect> {
    let mut out = Vec::new();
    let mut rest = keys;
    while let Some(c) = rest.chars().next() {
        let k = if c == '<'
            && let Some(end) = rest.find('>')
        {
            let k = match &rest[1..end] {
                "tab" => KeyCode::Tab,
                "enter" => KeyCode::Enter,
                "esc" => KeyCode::Esc,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "bs" => KeyCode::Backspace,
                "c-u" => {
                    rest = &rest[end + 1..];
                    out.extend(
                        app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
                    );
                    continue;
                }
                other => panic!("unknown key <{other}>"),
            };
            rest = &rest[end + 1..];
            KeyEvent::new(k, KeyModifiers::NONE)
        } else {
            rest = &rest[c.len_utf8()..];
            let m = if c.is_ascii_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            KeyEvent::new(KeyCode::Char(c), m)
        };
        out.extend(app.on_key(k));
    }
    out
}

fn focus_timeline(app: &mut App) {
    while app.focus != Pane::Timeline {
        press(app, "<tab>");
    }
}

/// The rows a filter keeps, by the filter's definition, computed apart from the pane: kind
/// and level from the event itself, text from the kind and the summary the row shows.
fn naive(app: &App, f: &Naive) -> Vec<u32> {
    let s = app.sess().unwrap();
    (0..s.rows())
        .filter(|&r| {
            let (kind, level, text) = match s.row_item(r).unwrap() {
                RowItem::Event(i) => {
                    let ev = app.store.event(s.events()[i as usize]).unwrap();
                    let level = match &ev.body {
                        Body::Log(l) => l.level.as_deref().map(|l| l.to_lowercase()),
                        _ => None,
                    };
                    (
                        ev.kind_name().to_string(),
                        level,
                        format!("{} {}", ev.kind_name(), summary(ev)).to_lowercase(),
                    )
                }
                RowItem::Problem(k) => {
                    let p = app.store.problem(s.problems[k as usize].1).unwrap();
                    // A line kept despite a problem is a `warning`, not a parse error.
                    let (kind, level) = match p.severity {
                        doxascope::trace::Severity::Error => ("parse-error", "error"),
                        doxascope::trace::Severity::Warning => ("warning", "warn"),
                    };
                    (
                        kind.to_string(),
                        Some(level.to_string()),
                        format!("{kind} {}", p.message).to_lowercase(),
                    )
                }
            };
            let level = level.map(|l| if l == "warning" { "warn".into() } else { l });
            (f.kinds.is_empty() || f.kinds.contains(&kind))
                && !f.not_kinds.contains(&kind)
                && (f.levels.is_empty() || level.as_ref().is_some_and(|l| f.levels.contains(l)))
                && !level.as_ref().is_some_and(|l| f.not_levels.contains(l))
                && f.word.as_ref().is_none_or(|w| text.contains(w.as_str()))
                && !f.not_words.iter().any(|w| text.contains(w.as_str()))
        })
        .collect()
}

#[derive(Debug, Clone, Default)]
struct Naive {
    kinds: Vec<String>,
    not_kinds: Vec<String>,
    levels: Vec<String>,
    not_levels: Vec<String>,
    word: Option<String>,
    not_words: Vec<String>,
}

impl Naive {
    fn typed(&self) -> String {
        let mut v = Vec::new();
        if !self.kinds.is_empty() {
            v.push(format!("kind:{}", self.kinds.join(",")));
        }
        for k in &self.not_kinds {
            v.push(format!("-kind:{k}"));
        }
        if !self.levels.is_empty() {
            v.push(format!("level:{}", self.levels.join(",")));
        }
        for l in &self.not_levels {
            v.push(format!("-level:{l}"));
        }
        v.extend(self.word.clone());
        for w in &self.not_words {
            v.push(format!("-{w}"));
        }
        v.join(" ")
    }
}

const KINDS: [&str; 9] = [
    "announce",
    "retract",
    "verify",
    "log",
    "thought",
    "revise",
    "parse-error",
    "warning",
    "query",
];
const LEVELS: [&str; 3] = ["info", "warn", "error"];
const WORDS: [&str; 6] = ["treasure", "b2", "map", "room", "step", "line"];

fn naive_filter() -> impl Strategy<Value = Naive> {
    let pick = |v: &'static [&'static str], n: usize| {
        proptest::sample::subsequence(v, 0..=n)
            .prop_map(|v| v.into_iter().map(str::to_string).collect::<Vec<String>>())
    };
    (
        pick(&KINDS, 2),
        pick(&KINDS, 1),
        pick(&LEVELS, 2),
        pick(&LEVELS, 1),
        proptest::option::of(proptest::sample::select(&WORDS[..])),
        pick(&WORDS, 1),
    )
        .prop_map(
            |(kinds, not_kinds, levels, not_levels, word, not_words)| Naive {
                kinds,
                not_kinds,
                levels,
                not_levels,
                word: word.map(str::to_string),
                not_words,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For random filters over three samples (one with bad lines), the rows the pane keeps
    /// are the rows the filter's definition keeps, and moving down visits exactly those.
    #[test]
    fn the_timeline_filter_keeps_what_its_definition_keeps(f in naive_filter(), which in 0..3usize) {
        let name = ["treasure-hunt.jsonl", "broken.jsonl", "greedysat-stress.jsonl"][which];
        let mut app = sample(name);
        focus_timeline(&mut app);
        press(&mut app, "F<c-u>");
        let typed = f.typed();
        press(&mut app, &typed);
        press(&mut app, "<enter>");
        let want = naive(&app, &f);
        let got = app.panes.timeline.kept_rows(&app.store, app.session(), None);
        prop_assert_eq!(&got, &want, "filter {:?}", typed);
        // j from the first row visits the kept rows in order.
        press(&mut app, "g");
        let mut visited = Vec::new();
        for _ in 0..want.len() + 2 {
            press(&mut app, "j");
            visited.push(app.view().cursor);
        }
        visited.dedup();
        let after_first: Vec<u32> = want.iter().copied().filter(|&r| r > 0).collect();
        prop_assert_eq!(visited, if after_first.is_empty() { vec![0] } else { after_first });
    }
}

#[test]
fn filter_in_and_filter_out_change_what_the_timeline_shows() {
    let mut app = sample("treasure-hunt.jsonl");
    focus_timeline(&mut app);
    press(&mut app, "g");
    let all = render_text(&mut app, 160, 45);
    assert!(all.contains("thought"), "{all}");
    press(&mut app, "Fkind:announce<enter>");
    assert_eq!(app.mode, Mode::Normal);
    assert!(
        app.status.contains("timeline filter kind:announce"),
        "{}",
        app.status
    );
    app.zoom = true;
    let kept = render_text(&mut app, 160, 45);
    let n = app.sess().unwrap().rows();
    let announces = app.panes.timeline.kept_rows(&app.store, 0, None).len();
    assert!(announces > 2 && announces < n as usize);
    assert!(
        kept.contains(&format!("{announces} of {n} rows, filter: kind:announce")),
        "{kept}"
    );
    // Only announcements, and the cursor's row (the first event, a session event), which
    // the filter hides but which stays in sight, said to be hidden.
    assert!(!kept.contains(" thought "), "{kept}");
    assert!(kept.contains("(hidden by the filter)"), "{kept}");
    // `F` shows the filter in force to edit; filtering out instead.
    press(&mut app, "F");
    assert_eq!(app.edit.text, "kind:announce");
    press(&mut app, "<c-u>-kind:announce -kind:session<enter>");
    let out = render_text(&mut app, 160, 45);
    assert!(!out.contains(" announce "), "{out}");
    assert!(out.contains(" thought "), "{out}");
    // Text and level: the one error-level log of the broken sample.
    let mut b = sample("broken.jsonl");
    focus_timeline(&mut b);
    press(&mut b, "Flevel:error<enter>");
    let kept = b.panes.timeline.kept_rows(&b.store, 0, None);
    let s = b.sess().unwrap();
    let (mut problems, mut logs) = (0, 0);
    for &r in &kept {
        match s.row_item(r) {
            Some(RowItem::Problem(_)) => problems += 1,
            Some(RowItem::Event(i)) => {
                let ev = b.store.event(s.events()[i as usize]).unwrap();
                match &ev.body {
                    Body::Log(l) => assert_eq!(l.level.as_deref(), Some("error")),
                    other => panic!("kept a non-error row: {other:?}"),
                }
                logs += 1;
            }
            None => unreachable!(),
        }
    }
    assert!(problems > 0, "the bad lines are errors: {kept:?}");
    let _ = logs;
    // An empty filter shows every row again.
    press(&mut app, "F<c-u><enter>");
    assert!(app.panes.timeline.filter().is_empty());
    assert!(app.status.contains("every row shown"), "{}", app.status);
    let back = render_text(&mut app, 160, 45);
    assert!(
        back.contains(" thought ") && back.contains(" announce "),
        "{back}"
    );
}

#[test]
fn search_finds_only_rows_the_filter_shows() {
    let mut app = sample("treasure-hunt.jsonl");
    focus_timeline(&mut app);
    press(&mut app, "/treasure<enter>");
    let all: usize = app
        .status
        .split(" of ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("n of N");
    press(&mut app, "Fkind:announce<enter>");
    press(&mut app, "n");
    let filtered: usize = app
        .status
        .split(" of ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("n of N");
    assert!(filtered < all, "{filtered} of {all}");
    let s = app.sess().unwrap();
    let row = app.view().cursor;
    let Some(RowItem::Event(i)) = s.row_item(row) else {
        panic!("an event")
    };
    assert_eq!(
        app.store.event(s.events()[i as usize]).unwrap().kind_name(),
        "announce"
    );
}

#[test]
fn the_filter_parses_lists_negations_and_level_spellings() {
    let f = TimelineFilter::parse("kind:Announce,retract -level:Warning some Text -noise");
    assert!(f.keeps("announce", None, || "announce some text here".into()));
    assert!(!f.keeps("verify", None, || "verify some text".into()));
    assert!(!f.keeps("announce", Some("warn"), || "announce some text".into()));
    assert!(!f.keeps("retract", None, || "retract some text noise".into()));
    assert!(!f.keeps("retract", None, || "retract other".into()));
    assert!(TimelineFilter::parse("  ").is_empty());
    assert!(TimelineFilter::parse("level:err").keeps("log", Some("ERROR"), String::new));
    // A lone `-` is text, not an empty negation.
    assert!(!TimelineFilter::parse("-").is_empty());
}

/// A trace whose one row is far wider than any terminal.
fn long_row() -> App {
    let tail = "the-far-end-of-the-row";
    let text = format!("{}{tail}", "x".repeat(150));
    let line = format!(r#"{{"kind":"thought","session":"s","text":"{text}"}}"#);
    app_for("long.jsonl", format!("{line}\n").as_bytes())
}

#[test]
fn left_and_right_scroll_long_timeline_rows() {
    let mut app = long_row();
    focus_timeline(&mut app);
    app.zoom = true;
    let before = render_text(&mut app, 80, 24);
    assert!(!before.contains("far-end"), "{before}");
    for _ in 0..8 {
        press(&mut app, "<right>");
    }
    let after = render_text(&mut app, 80, 24);
    assert!(after.contains("the-far-end-of-the-row"), "{after}");
    assert!(after.contains(&format!("→{}", 8 * 16)), "{after}");
    // The step and kind columns stay.
    assert!(after.contains("     1   thought"), "{after}");
    press(&mut app, "hhhhhhhh");
    assert_eq!(app.panes.timeline.hscroll, 0);
    assert_eq!(render_text(&mut app, 80, 24), before);
    press(&mut app, "<left>");
    assert_eq!(
        app.panes.timeline.hscroll, 0,
        "never before the row's start"
    );
}

fn click(app: &mut App, column: u16, row: u16) {
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    });
}

/// The screen row of the first line containing `text`.
fn row_of(screen: &str, text: &str) -> Option<(u16, u16)> {
    screen.lines().enumerate().find_map(|(y, l)| {
        l.find(text)
            .map(|b| (l[..b].chars().count() as u16, y as u16))
    })
}

#[test]
fn a_click_selects_the_row_under_it_in_every_list_pane_and_focuses_the_others() {
    let mut app = sample("treasure-hunt.jsonl");
    let screen = render_text(&mut app, 160, 45);
    // The timeline: the row of step 15 becomes the cursor.
    let (x, y) = row_of(&screen, "    15   announce").expect("step 15 on screen");
    click(&mut app, x + 2, y);
    assert_eq!(app.focus, Pane::Timeline);
    assert_eq!(app.step(), 15);
    assert!(!app.view().follow, "a click pauses follow");
    // Σ: the belief clicked is the one the detail pane shows.
    let screen = render_text(&mut app, 160, 45);
    let id = {
        let s = app.sess().unwrap();
        let b = &s.tl.beliefs()[0];
        b.id.to_string()
    };
    let (x, y) = row_of(&screen, &format!("{id} ")).expect("first belief on screen");
    click(&mut app, x + 2, y);
    assert_eq!(app.focus, Pane::Sigma);
    assert_eq!(app.panes.sigma.sel, 0);
    let detail = render_text(&mut app, 160, 45);
    assert!(detail.contains(&format!("id         {id}")), "{detail}");
    // A click on the header row of Σ selects nothing new.
    click(&mut app, x + 2, y - 1);
    assert_eq!(app.panes.sigma.sel, 0);
    // The plan, detail and REPL panes are focused by a click.
    for p in [Pane::Plan, Pane::Detail, Pane::Repl] {
        let (_, r) = *app.areas.iter().find(|(q, _)| *q == p).unwrap();
        click(&mut app, r.x + 3, r.y + 1);
        assert_eq!(app.focus, p);
    }
}

#[test]
fn open_asks_the_loop_to_read_a_file_and_shows_its_session_once_it_is_in() {
    let mut app = sample("treasure-hunt.jsonl");
    let fx = press(&mut app, ":open other.jsonl<enter>");
    assert_eq!(fx, vec![Effect::Open(PathBuf::from("other.jsonl"))]);
    assert_eq!(app.mode, Mode::Command, "the line stays open");
    let fx = press(&mut app, "open<enter><esc>");
    assert!(fx.is_empty());
    assert!(app.status.contains("give a file"), "{}", app.status);
    // The loop reads the file into the store; the view moves to its session.
    app.opened("other.jsonl".into());
    assert_eq!(app.session(), 0, "nothing read yet");
    let mut r =
        doxascope::trace::Reader::new("other.jsonl", doxascope::trace::ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(
        br#"{"kind":"announce","session":"second","id":"z","formula":"z"}
"#,
        &mut items,
    );
    r.finish(&mut items);
    app.store.extend(items);
    app.on_data();
    assert_eq!(app.sess().unwrap().name.as_ref(), "second");
    assert!(app.status.contains("opened other.jsonl"), "{}", app.status);
    let screen = render_text(&mut app, 160, 45);
    assert!(screen.contains("session second"), "{screen}");
}
