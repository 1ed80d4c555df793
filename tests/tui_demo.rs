//! `doxascope demo` in the TUI without a terminal: an `App` plays the demo's paced stream
//! through the same calls the event loop makes (`demo_next_due`, `demo_tick`, keys).

use std::time::{Duration, Instant};

use doxascope::demo::player::base_delay;
use doxascope::demo::{DemoConfig, DemoEvents};
use doxascope::trace::Event;
use doxascope::tui::app::App;
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::{help_lines, help_lines_for, render_text};
use doxascope::tui::{DemoOptions, demo_player};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn opts(dialogues: usize) -> DemoOptions {
    DemoOptions {
        config: DemoConfig {
            error_rate: 0.3,
            seed: 7,
            turns: 4,
            ..DemoConfig::default()
        },
        dialogues,
        speed: 1.0,
        scripted: None,
    }
}

fn demo_app(dialogues: usize) -> App {
    highlight::load_now();
    let mut app = App::new(Store::new(), Theme::builtin("light").unwrap());
    app.demo = Some(demo_player(&opts(dialogues)));
    app
}

fn key(app: &mut App, c: char) {
    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
}

/// What the demo produces, independently of the player and the TUI.
fn expected(dialogues: usize) -> Vec<Event> {
    let o = opts(dialogues);
    DemoEvents::new(o.config, o.dialogues).collect()
}

/// Plays like the event loop: sleep until the next due instant, then tick.
fn play_until_done(app: &mut App, mut now: Instant) -> Instant {
    while let Some(due) = app.demo_next_due(now) {
        assert!(due >= now, "the next event is never due in the past");
        now = due;
        app.demo_tick(now);
    }
    now
}

#[test]
fn the_demo_plays_at_its_pace_into_the_session() {
    let all = expected(1);
    let mut app = demo_app(1);
    let t0 = Instant::now();
    assert!(app.demo_tick(t0), "the session event has no delay");
    assert_eq!(app.store.log.events, all[..1]);
    // The world waits its delay: nothing just before, the world right at it.
    let world = base_delay(&all[1]);
    assert!(!app.demo_tick(t0 + world - Duration::from_millis(1)));
    assert!(app.demo_tick(t0 + world));
    assert_eq!(app.store.log.events, all[..2]);
    let end = play_until_done(&mut app, t0 + world);
    assert_eq!(app.store.log.events, all, "every event, in order");
    // Watchable: the whole dialogue takes as long as its delays add up to at speed 1.
    let total: Duration = all.iter().map(base_delay).sum();
    assert_eq!(end - t0, total);
    assert!(total >= Duration::from_secs(4), "4 turns are not a blur");
    // Follow mode shows the newest step, and the header says the demo has finished (while
    // it played, it said it was playing).
    assert_eq!(app.step() as usize, all.len());
    let screen = render_text(&mut app, 140, 30);
    assert!(screen.contains("demo ■ finished"), "{screen}");
    assert!(!screen.contains("demo ▶"), "{screen}");
    let mut playing = demo_app(1);
    playing.demo_tick(t0);
    let screen = render_text(&mut playing, 140, 30);
    assert!(screen.contains("demo ▶ x1.0"), "{screen}");
}

#[test]
fn space_pauses_dot_steps_and_plus_minus_change_the_speed() {
    let all = expected(1);
    let mut app = demo_app(1);
    let t0 = Instant::now();
    app.demo_tick(t0);
    key(&mut app, ' ');
    assert!(app.demo.as_ref().is_some_and(|p| p.is_paused()));
    let screen = render_text(&mut app, 140, 30);
    assert!(screen.contains("demo ⏸"), "{screen}");
    let far = t0 + Duration::from_secs(3600);
    assert_eq!(
        app.demo_next_due(far),
        None,
        "a paused demo never wakes the loop"
    );
    assert!(!app.demo_tick(far), "no new events while paused");
    assert_eq!(app.store.log.events.len(), 1);
    // `.` releases the world and its rules, then one whole turn, still paused.
    key(&mut app, '.');
    let n1 = app.store.log.events.len();
    assert!(n1 > 1);
    assert!(app.store.log.events.iter().all(|e| e.kind_name() != "turn"));
    key(&mut app, '.');
    let n2 = app.store.log.events.len();
    assert_eq!(
        app.store.log.events.get(n1).expect("event").kind_name(),
        "turn"
    );
    assert!(n2 > n1 + 1, "a turn comes with its gate and commitment");
    assert_eq!(app.store.log.events, all[..n2]);
    assert!(!app.demo_tick(far), "stepping does not resume play");
    assert_eq!(
        app.step() as usize,
        n2,
        "the view follows the stepped events"
    );
    // `+` doubles the speed, `-` halves it, shown in the header.
    key(&mut app, '+');
    key(&mut app, '+');
    assert_eq!(app.demo.as_ref().map(|p| p.speed()), Some(4.0));
    key(&mut app, '-');
    assert_eq!(app.demo.as_ref().map(|p| p.speed()), Some(2.0));
    // Space resumes; at speed 2 the rest takes half its delays.
    key(&mut app, ' ');
    let screen = render_text(&mut app, 140, 30);
    assert!(screen.contains("demo ▶ x2.0"), "{screen}");
    let now = Instant::now();
    let due = app.demo_next_due(now).expect("playing again");
    assert!(due - now <= base_delay(&all[n2]) / 2);
    play_until_done(&mut app, now);
    assert_eq!(app.store.log.events, all);
}

#[test]
fn each_dialogue_becomes_a_session_and_the_view_follows_the_newest() {
    let all = expected(2);
    let mut app = demo_app(2);
    play_until_done(&mut app, Instant::now());
    assert_eq!(app.store.log.events, all);
    assert_eq!(app.store.sessions.len(), 2);
    assert_eq!(app.session(), 1);
}

#[test]
fn demo_keys_are_bound_and_listed_only_in_the_demo() {
    highlight::load_now();
    let mut app = App::new(Store::new(), Theme::builtin("light").unwrap());
    key(&mut app, ' ');
    key(&mut app, '+');
    assert!(app.demo.is_none());
    let th = Theme::builtin("light").unwrap();
    let text = |lines: Vec<ratatui::text::Line<'static>>| {
        lines
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let plain = text(help_lines(&th));
    let demo = text(help_lines_for(&th, true));
    assert!(!plain.contains("demo: pause"), "{plain}");
    for k in [
        "Space",
        "demo: pause",
        "demo: step",
        "demo: faster",
        "demo: slower",
    ] {
        assert!(demo.contains(k), "{k} missing from the demo help:\n{demo}");
    }
    // The help overlay in demo mode lists them too.
    let mut app = demo_app(1);
    key(&mut app, '?');
    let screen = render_text(&mut app, 140, 60);
    assert!(screen.contains("demo: pause"), "{screen}");
}

#[test]
fn without_a_terminal_the_demo_still_prints_to_stdout() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["demo", "--turns", "2", "--speed", "64"])
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("turn  1") && text.contains("turn  2"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "no terminal escapes in a pipe:\n{text}"
    );
}

/// `demo --agent`: dialogues an external agent answered before the TUI started play like the
/// simulated ones, with the agent's replies and the session marked `external`.
#[test]
fn scripted_dialogues_of_an_external_agent_play_in_the_tui() {
    use doxascope::demo::Label;
    use doxascope::demo::run::Dialogue;
    let o = opts(1);
    let scripted: Vec<Dialogue> = (0..2)
        .map(|i| {
            Dialogue::script_with(&o.config, i, Some("my-agent"), &mut |_| Ok(Label::Unknown))
                .expect("scripted")
        })
        .collect();
    highlight::load_now();
    let mut app = App::new(Store::new(), Theme::builtin("light").unwrap());
    app.demo = Some(demo_player(&DemoOptions {
        dialogues: 2,
        scripted: Some(scripted),
        ..o
    }));
    play_until_done(&mut app, Instant::now());
    let evs = &app.store.log.events;
    let turns: Vec<&Event> = evs.iter().filter(|e| e.kind_name() == "turn").collect();
    assert_eq!(turns.len(), 8, "two dialogues of four turns");
    for t in turns {
        let v = serde_json::to_value(t).unwrap();
        assert_eq!(v["reply"], "UNKNOWN");
    }
    let sessions: Vec<serde_json::Value> = evs
        .iter()
        .filter(|e| e.kind_name() == "session")
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(sessions.len(), 2);
    assert!(
        sessions
            .iter()
            .all(|s| s["model"] == "external" && s["meta"]["agent_command"] == "my-agent")
    );
}

/// `demo --race greedy,reject`: the race pane shows both policies' Σ columns, in lockstep
/// with the turns the demo has played, on a 100x30 terminal.
#[test]
fn a_race_shows_both_policies_side_by_side_in_lockstep() {
    use doxascope::demo::race::Race;
    use doxascope::logic::revise::Policy;
    use doxascope::tui::panes::race::RaceView;
    let o = DemoOptions {
        config: DemoConfig {
            error_rate: 0.3,
            seed: 1,
            turns: 10,
            ..DemoConfig::default()
        },
        ..opts(1)
    };
    let race = Race::new(o.config, 1, [Policy::Greedy, Policy::Reject]).expect("race");
    highlight::load_now();
    let mut app = App::new(Store::new(), Theme::builtin("light").unwrap());
    app.demo = Some(demo_player(&o));
    app.race = Some(RaceView::new(race.clone()));
    let t0 = Instant::now();
    app.demo_tick(t0);
    let screen = render_text(&mut app, 100, 30);
    assert!(screen.contains("waiting for turn 1"), "{screen}");
    // Step to turn 3: the pane says turn 3 and shows each side's Σ at that turn.
    key(&mut app, ' ');
    for _ in 0..4 {
        key(&mut app, '.');
    }
    assert_eq!(app.race.as_ref().map(RaceView::position), Some((0, 3)));
    let screen = render_text(&mut app, 100, 30);
    assert!(screen.contains("turn 3/10"), "{screen}");
    for p in ["Σ greedy", "Σ reject"] {
        assert!(screen.contains(p), "{p} in\n{screen}");
    }
    key(&mut app, ' ');
    play_until_done(&mut app, t0);
    let screen = render_text(&mut app, 100, 30);
    assert!(screen.contains("turn 10/10"), "{screen}");
    // Side by side: both columns on the same rows, greedy left of reject.
    let row = screen
        .lines()
        .find(|l| l.contains("Σ greedy"))
        .expect("the greedy column");
    let (g, r) = (row.find("Σ greedy"), row.find("Σ reject"));
    assert!(g < r && r.is_some(), "{row}");
    let last = race.dialogues[0].rows.last().expect("turns");
    let counts = |i: usize| {
        let s = &last.sides[i];
        format!(
            "revisions {}  dropped {}  refusals {}",
            s.revisions, s.dropped_total, s.refusals
        )
    };
    let counts_row = screen
        .lines()
        .find(|l| l.contains(&counts(0)))
        .unwrap_or_else(|| panic!("{} in\n{screen}", counts(0)));
    assert!(counts_row.contains(&counts(1)), "{counts_row}");
    assert_ne!(counts(0), counts(1), "this dialogue tells them apart");
}
