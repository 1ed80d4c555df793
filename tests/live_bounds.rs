//! Issue 28's last item and issue 31's receiver item: a viewer that takes live sessions for
//! ever holds in memory only what is open or on screen, and keeps a bounded spool directory.
//! Real hub sessions feed an `App` through the `Sources` calls the event loop makes.

use std::time::Duration;

use doxascope::trace::live::{Live, LiveConfig, LiveEvent, SessionId};
use doxascope::tui::app::App;
use doxascope::tui::data::{SessionSource, Store};
use doxascope::tui::highlight;
use doxascope::tui::theme::Theme;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc::Receiver;

fn app() -> App {
    highlight::load_now();
    App::new(Store::new(), Theme::builtin("light").unwrap())
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The JSONL of session `s`: `n` log events whose messages say which they are.
fn lines(s: usize, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| format!("{{\"kind\":\"log\",\"message\":\"s{s}-e{i}\"}}\n"))
        .collect::<String>()
        .into_bytes()
}

/// Hands hub events to the app until session `id` has ended (or, with `None`, until the
/// next event of any kind was handled); returns what was handled.
async fn pump(
    app: &mut App,
    rx: &mut Receiver<LiveEvent>,
    until: Option<SessionId>,
) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("live event in time")
            .expect("hub alive");
        let done = match (&ev, until) {
            (LiveEvent::Closed { session, .. }, Some(id)) => *session == id,
            (_, None) => true,
            _ => false,
        };
        seen.push(format!("{ev:?}").chars().take(60).collect());
        app.sources.shown = app.session();
        if let Some(m) = app.sources.on_live(&mut app.store, ev) {
            app.status = m;
            app.keep_message();
        }
        app.on_data();
        if done {
            return seen;
        }
    }
}

/// The messages of session `idx`'s events, in order.
fn messages(app: &App, idx: usize) -> Vec<String> {
    let s = &app.store.sessions[idx];
    s.events()
        .iter()
        .map(|&p| {
            let ev = app.store.log.events.load(p as usize).expect("an event");
            let line = ev.to_json_line();
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            v["message"].as_str().unwrap_or("?").to_string()
        })
        .collect()
}

/// After many ended sessions, memory holds the events of the session on screen and of the
/// one still open, none of the ended ones; the ended ones stay listed, and showing one reads
/// all its events back from its spool file (kept there as places, not in memory).
#[test]
fn ended_sessions_leave_memory_and_are_read_back_from_their_spool_when_shown() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    let per = 10;
    rt().block_on(async {
        let (live, mut rx) = Live::new(LiveConfig {
            spool_dir: Some(dir.path().join("spool")),
            ..LiveConfig::default()
        });
        // Session 0 is on screen (the first one listed) and ends.
        let first = live.attach("first", std::io::Cursor::new(lines(0, per)));
        pump(&mut app, &mut rx, Some(first)).await;
        assert_eq!(app.session(), 0);
        // One that stays open all along.
        let (mut open_w, open_r) = tokio::io::duplex(1 << 16);
        let open = live.attach("open", open_r);
        open_w.write_all(&lines(1, per)).await.unwrap();
        for s in 2..20 {
            let id = live.attach("s", std::io::Cursor::new(lines(s, per)));
            pump(&mut app, &mut rx, Some(id)).await;
        }
        // The open session's lines were handed over in between (one batch at least).
        while app
            .store
            .live_session(open)
            .is_none_or(|i| app.store.sessions[i].len() < per as u32)
        {
            pump(&mut app, &mut rx, None).await;
        }
        let open_idx = app.store.live_session(open).unwrap();
        assert!(app.sources.live[&open].open);
        // Held in memory: the one on screen and the open one, nothing of 18 ended ones.
        assert_eq!(app.store.log.events.resident(), 2 * per);
        assert_eq!(app.store.sessions[open_idx].len(), per as u32);
        assert_eq!(app.store.sessions[0].len(), per as u32);
        let ended: Vec<usize> = (1..app.store.sessions.len())
            .filter(|&i| i != open_idx)
            .collect();
        assert_eq!(ended.len(), 18);
        for &i in &ended {
            let s = &app.store.sessions[i];
            assert!(s.unloaded && !s.retired && s.is_empty(), "session {i}");
        }
        // All listed still.
        assert_eq!(app.store.listed(), 20);
        // Shown: read back whole from its file, in order, and not into memory.
        let idx = ended[5];
        let SessionSource::Live(id) = app.store.sessions[idx].origin else {
            panic!("a live session")
        };
        app.show_session(idx);
        assert_eq!(app.store.sessions[idx].len(), per as u32);
        let s = (2..20)
            .find(|&s| messages(&app, idx)[0] == format!("s{s}-e0"))
            .expect("a session's own events");
        let want: Vec<String> = (0..per).map(|i| format!("s{s}-e{i}")).collect();
        assert_eq!(messages(&app, idx), want);
        assert_eq!(app.store.log.events.resident(), 2 * per);
        assert!(app.sources.live.contains_key(&id));
        // Showing it again reads nothing twice.
        app.show_session(0);
        app.show_session(idx);
        assert_eq!(app.store.sessions[idx].len(), per as u32);
        // The open session ends: it leaves memory too (it is not on screen).
        drop(open_w);
        pump(&mut app, &mut rx, Some(open)).await;
        assert!(app.store.sessions[open_idx].unloaded);
        assert_eq!(app.store.log.events.resident(), per);
    });
}

/// The spool directory keeps at most the bound's files of ended sessions, the oldest
/// deleted first; an open session's file is never deleted; the view says how many were
/// deleted (status line, `:messages`, header), and a listed session whose file is gone
/// leaves the list.
#[test]
fn the_spool_directory_keeps_at_most_the_bound_and_says_what_it_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let mut app = app();
    let bound = 5;
    rt().block_on(async {
        let (live, mut rx) = Live::new(LiveConfig {
            spool_dir: Some(spool.clone()),
            max_spool_files: bound,
            ..LiveConfig::default()
        });
        app.sources.listening = Some("otlp:127.0.0.1:4318".into());
        let (mut open_w, open_r) = tokio::io::duplex(1 << 16);
        let open = live.attach("open", open_r);
        open_w.write_all(&lines(0, 3)).await.unwrap();
        let mut ids = Vec::new();
        for s in 1..=20 {
            let id = live.attach("s", std::io::Cursor::new(lines(s, 3)));
            pump(&mut app, &mut rx, Some(id)).await;
            ids.push(id);
            let files = std::fs::read_dir(&spool).unwrap().count();
            assert!(files <= bound + 1, "{files} files after {s} sessions");
        }
        let names: Vec<String> = std::fs::read_dir(&spool)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), bound + 1, "{names:?}");
        // The open session's file and the newest ended ones are there.
        assert!(names.contains(&format!("conn-{open}.jsonl")), "{names:?}");
        for id in &ids[ids.len() - bound..] {
            assert!(names.contains(&format!("conn-{id}.jsonl")), "{names:?}");
        }
        assert_eq!(live.stats().spool_removed, 15);
        assert_eq!(app.sources.spool_removed, 15);
        assert!(
            app.messages
                .iter()
                .any(|m| m.contains("deleted the 1 oldest file") && m.contains("15 deleted")),
            "{:?}",
            app.messages
        );
        let header = app.sources.header(&app.store, app.session());
        assert!(header.contains("15 spool files deleted"), "{header}");
        // Listed: the open one (on screen) and the ended ones whose files remain.
        assert_eq!(app.store.live_session(open), Some(app.session()));
        for id in &ids[..ids.len() - bound] {
            assert!(!app.sources.live.contains_key(id));
            // Its slot is retired, or given to a newer session already.
            if let Some(idx) = app.store.live_session(*id) {
                assert!(app.store.sessions[idx].retired);
            }
        }
        assert_eq!(app.store.listed(), 1 + bound);
        drop(open_w);
        pump(&mut app, &mut rx, Some(open)).await;
    });
}

/// The hub's total bounds count what the viewer holds: a session with a spool file gives
/// its share back when it ends, so sessions that come one after another never reach the
/// bound (today every session after the first ten spills at once).
#[test]
fn ended_spooled_sessions_give_back_their_share_of_the_hub_bound() {
    let dir = tempfile::tempdir().unwrap();
    rt().block_on(async {
        let (live, mut rx) = Live::new(LiveConfig {
            spool_dir: Some(dir.path().join("spool")),
            max_held_events_total: 100,
            ..LiveConfig::default()
        });
        for s in 0..50 {
            let id = live.attach("s", std::io::Cursor::new(lines(s, 10)));
            loop {
                let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                    .await
                    .unwrap()
                    .unwrap();
                match ev {
                    LiveEvent::Spilling { session, held } => {
                        panic!("session {s} ({session}) spilled after {held} events")
                    }
                    LiveEvent::Closed { session, .. } if session == id => break,
                    _ => {}
                }
            }
        }
        // Without a spool file the viewer keeps what it was given: the bound holds over the
        // hub's life.
        let (live, mut rx) = Live::new(LiveConfig {
            max_held_events_total: 100,
            ..LiveConfig::default()
        });
        let mut closed_by_limit = false;
        for s in 0..20 {
            let id = live.attach("s", std::io::Cursor::new(lines(s, 10)));
            loop {
                let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                    .await
                    .unwrap()
                    .unwrap();
                if let LiveEvent::Closed {
                    session, reason, ..
                } = ev
                    && session == id
                {
                    closed_by_limit |= reason == doxascope::trace::live::CloseReason::MemoryLimit;
                    break;
                }
            }
        }
        assert!(closed_by_limit);
    });
}

/// What the viewer keeps per session is bounded in count too: after hundreds of ended
/// sessions it has as many session slots as it lists (the slots of sessions taken out of
/// the list are given to new ones), the log's index names only those, and the header
/// counts the rest as on disk only.
#[test]
fn per_session_bookkeeping_is_bounded_in_count() {
    use doxascope::tui::sources::MAX_ENDED_LIVE;
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    let n = 300;
    rt().block_on(async {
        let (live, mut rx) = Live::new(LiveConfig {
            spool_dir: Some(dir.path().join("spool")),
            ..LiveConfig::default()
        });
        app.sources.listening = Some("otlp:127.0.0.1:4318".into());
        for s in 0..n {
            let mut text = lines(s, 3);
            // Each claims a name of its own, as each OTLP trace does.
            text.extend_from_slice(
                format!("{{\"kind\":\"log\",\"message\":\"x\",\"session\":\"trace-{s}\"}}\n")
                    .as_bytes(),
            );
            let id = live.attach("s", std::io::Cursor::new(text));
            pump(&mut app, &mut rx, Some(id)).await;
            assert!(
                app.store.sessions.len() <= MAX_ENDED_LIVE + 2,
                "{} slots after {s} sessions",
                app.store.sessions.len()
            );
        }
    });
    assert_eq!(app.store.listed(), MAX_ENDED_LIVE);
    assert_eq!(app.sources.aged_out, (n - MAX_ENDED_LIVE) as u64);
    assert!(app.sources.live.len() <= MAX_ENDED_LIVE);
    assert!(app.sources.ended.len() <= MAX_ENDED_LIVE);
    // The shown session (the first) and nothing else is held in memory.
    assert_eq!(app.store.log.events.resident(), 4);
    let named = app.store.log.index.sessions().count();
    assert!(named <= MAX_ENDED_LIVE + 2, "{named} sessions in the index");
    let header = app.sources.header(&app.store, app.session());
    assert!(
        header.contains(&format!(
            "{} ended sessions only on disk",
            n - MAX_ENDED_LIVE
        )),
        "{header}"
    );
    // The listed ones are the newest, and each shows its own events when opened.
    let newest = (0..app.store.sessions.len())
        .filter(|&i| !app.store.sessions[i].retired && i != app.session())
        .collect::<Vec<_>>();
    for i in newest {
        app.show_session(i);
        let m = messages(&app, i);
        assert_eq!(m.len(), 4, "session {i}");
        let s: usize = m[0][1..m[0].find('-').unwrap()].parse().unwrap();
        assert!(s >= n - MAX_ENDED_LIVE, "session {s} should have aged out");
        assert_eq!(m[..3], [0, 1, 2].map(|e| format!("s{s}-e{e}")));
    }
}

/// A spool file removed by someone else before its session is shown: the view says so and
/// goes on (the session stays empty), it never panics.
#[test]
fn a_spool_file_gone_before_its_session_is_shown_is_said_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    rt().block_on(async {
        let (live, mut rx) = Live::new(LiveConfig {
            spool_dir: Some(dir.path().join("spool")),
            ..LiveConfig::default()
        });
        for s in 0..2 {
            let id = live.attach("s", std::io::Cursor::new(lines(s, 4)));
            pump(&mut app, &mut rx, Some(id)).await;
        }
    });
    assert!(app.store.sessions[1].unloaded);
    let SessionSource::Live(id) = app.store.sessions[1].origin else {
        panic!("a live session")
    };
    let path = app.sources.live[&id].spool_path.clone().unwrap();
    std::fs::remove_file(&path).unwrap();
    app.show_session(1);
    assert!(
        app.status.contains("cannot read the spool file"),
        "{}",
        app.status
    );
    assert!(app.store.sessions[1].is_empty());
    let _ = doxascope::tui::ui::render_text(&mut app, 120, 30);
}
