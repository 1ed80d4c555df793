//! The TUI's live data path without a terminal: a real Unix-socket session and a real
//! followed file feed an `App` through the same `Sources` calls the event loop makes.

use std::io::Write;
use std::time::Duration;

use doxascope::trace::follow::{FollowConfig, FollowItem, FollowStatus, Follower};
use doxascope::trace::live::{ListenAddr, Live, LiveConfig, LiveEvent};
use doxascope::tui::app::App;
use doxascope::tui::data::{SessionSource, Store};
use doxascope::tui::highlight;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tokio::io::AsyncWriteExt;

fn app() -> App {
    highlight::load_now();
    App::new(Store::new(), Theme::builtin("light").unwrap())
}

fn key(app: &mut App, c: char) {
    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
}

#[test]
fn a_unix_socket_session_becomes_a_selectable_timeline() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("live.sock");
    let mut app = app();
    app.store = Store::from_bytes("file.jsonl", b"{\"kind\":\"announce\",\"formula\":\"a\"}\n");
    rt.block_on(async {
        let (live, mut rx) = Live::new(LiveConfig::default());
        let addr: ListenAddr = format!("unix:{}", sock.display()).parse().unwrap();
        let listener = live.listen(&addr).await.unwrap();
        app.sources.listening = Some(listener.local_addr().to_string());
        let mut c = tokio::net::UnixStream::connect(&sock).await.unwrap();
        // The claimed name carries an escape sequence: it must be shown sanitized.
        c.write_all(
            b"{\"kind\":\"announce\",\"formula\":\"p\",\"id\":\"b1\",\"session\":\"agent\\u001b[31m\"}\n\
              {\"kind\":\"announce\",\"formula\":\"p -> q\",\"id\":\"b2\",\"role\":\"rule\"}\n\
              {\"kind\":\"retract\",\"target\":\"b1\"}\n",
        )
        .await
        .unwrap();
        c.shutdown().await.unwrap();
        drop(c);
        let mut closed = false;
        while !closed {
            let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .expect("live event in time")
                .expect("hub alive");
            closed = matches!(ev, LiveEvent::Closed { .. });
            app.sources.on_live(&mut app.store, ev);
            app.on_data();
        }
        drop(listener);
    });
    assert_eq!(app.store.sessions.len(), 2);
    let s = &app.store.sessions[1];
    assert!(matches!(s.origin, SessionSource::Live(_)));
    assert_eq!(s.len(), 3);
    assert!(s.name.starts_with("agent"), "{}", s.name);
    assert!(!s.name.contains('\u{1b}'));
    assert_eq!(s.tl.beliefs()[0].retraction.map(|r| r.step), Some(3));
    // `s` selects the live session like any other; the header tells it is live.
    assert_eq!(app.session(), 0);
    key(&mut app, 's');
    assert_eq!(app.session(), 1);
    let screen = render_text(&mut app, 160, 30);
    assert!(screen.contains("live: ended"), "{screen}");
    assert!(screen.contains("listening unix:"), "{screen}");
    assert!(screen.contains("step 3 of 3"), "{screen}");
}

#[test]
fn spilling_and_an_empty_live_session_are_shown() {
    let mut app = app();
    // An opened session without events is listed and drawable.
    let opened = LiveEvent::Opened {
        session: 7,
        name: "conn-7".into(),
        peer: doxascope::trace::live::Peer::Attached,
        spool: Some("/spool/conn-7.jsonl".into()),
    };
    app.sources.on_live(&mut app.store, opened);
    app.on_data();
    let msg = app.sources.on_live(
        &mut app.store,
        LiveEvent::Spilling {
            session: 7,
            held: 42,
        },
    );
    let msg = msg.unwrap();
    assert!(msg.contains("after 42 events"), "{msg}");
    assert!(msg.contains("/spool/conn-7.jsonl"), "{msg}");
    let screen = render_text(&mut app, 160, 30);
    assert!(screen.contains("conn-7"), "{screen}");
    assert!(
        screen.contains("first 42 events shown, the rest in /spool/conn-7.jsonl"),
        "{screen}"
    );
    assert!(screen.contains("live: connected"), "{screen}");
}

/// Receives follower output until `pred` holds for what was applied so far.
fn pump(
    app: &mut App,
    rt: &tokio::runtime::Runtime,
    rx: &mut tokio::sync::mpsc::Receiver<FollowItem>,
    seen: &mut Vec<FollowStatus>,
    pred: impl Fn(&App, &[FollowStatus]) -> bool,
) {
    while !pred(app, seen) {
        let item = rt
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), rx.recv()).await })
            .expect("follower output in time")
            .expect("follower alive");
        if let FollowItem::Status(s) = &item {
            seen.push(s.clone());
        }
        if let Some(m) = app.sources.on_follow(&mut app.store, 0, item) {
            app.status = m;
        }
        app.on_data();
    }
}

#[test]
fn follow_statuses_reach_the_app_and_a_truncation_starts_a_new_segment() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut app = app();
    let cfg = FollowConfig {
        poll_interval: Duration::from_millis(20),
        ..FollowConfig::default()
    };
    let (handle, mut rx) = Follower::spawn(&path, cfg).unwrap();
    app.sources.add_file(path.clone());
    let mut seen = Vec::new();
    pump(&mut app, &rt, &mut rx, &mut seen, |_, s| {
        s.contains(&FollowStatus::Waiting)
    });
    assert!(app.status.contains("waiting for the file to appear"));
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(
        b"{\"kind\":\"announce\",\"formula\":\"p\"}\n{\"kind\":\"announce\",\"formula\":\"q\"}\n",
    )
    .unwrap();
    f.flush().unwrap();
    pump(&mut app, &rt, &mut rx, &mut seen, |a, _| {
        a.store.sessions.first().is_some_and(|s| s.len() == 2)
    });
    // Truncate and write something shorter: re-read from the start, as a new segment.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.write_all(b"{\"kind\":\"announce\",\"formula\":\"r\"}\n")
        .unwrap();
    f.flush().unwrap();
    pump(&mut app, &rt, &mut rx, &mut seen, |a, _| {
        a.store.sessions.get(1).is_some_and(|s| s.len() == 1)
    });
    handle.stop();
    assert!(seen.contains(&FollowStatus::Truncated), "{seen:?}");
    assert!(app.status.contains("truncated, re-read"), "{}", app.status);
    // What was shown before is still there, unchanged; the re-read is its own timeline.
    assert_eq!(app.store.sessions.len(), 2);
    assert_eq!(app.store.sessions[0].len(), 2);
    assert!(app.store.sessions[1].name.ends_with("· re-read 1"));
    // A following view moved on to the re-read, where the new lines are.
    assert_eq!(app.session(), 1);
    let screen = render_text(&mut app, 200, 30);
    assert!(screen.contains("truncated, re-read"), "{screen}");
}

#[test]
fn a_rotation_stays_visible_after_following_resumes() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    std::fs::write(
        &path,
        b"{\"kind\":\"announce\",\"formula\":\"p\"}\n{\"kind\":\"announce\",\"formula\":\"q\"}\n",
    )
    .unwrap();
    let mut app = app();
    let cfg = FollowConfig {
        poll_interval: Duration::from_millis(20),
        ..FollowConfig::default()
    };
    let (handle, mut rx) = Follower::spawn(&path, cfg).unwrap();
    app.sources.add_file(path.clone());
    let mut seen = Vec::new();
    pump(&mut app, &rt, &mut rx, &mut seen, |a, _| {
        a.store.sessions.first().is_some_and(|s| s.len() == 2)
    });
    // Rotation with no moment without a file at the path (else the follower may report
    // "waiting" in between): the old file stays linked as r.jsonl.1 and a new one is renamed
    // over the name.
    std::fs::hard_link(&path, dir.path().join("r.jsonl.1")).unwrap();
    let fresh = dir.path().join("fresh");
    std::fs::write(&fresh, b"{\"kind\":\"announce\",\"formula\":\"r\"}\n").unwrap();
    std::fs::rename(&fresh, &path).unwrap();
    pump(&mut app, &rt, &mut rx, &mut seen, |a, s| {
        a.store.sessions.first().is_some_and(|s| s.len() == 3)
            && s.last() == Some(&FollowStatus::Following)
    });
    handle.stop();
    assert!(seen.contains(&FollowStatus::Rotated), "{seen:?}");
    // The new file continues the same timeline; the rotation is still on screen.
    assert_eq!(app.store.sessions.len(), 1);
    assert!(app.status.contains("rotated"), "{}", app.status);
    let screen = render_text(&mut app, 200, 30);
    assert!(
        screen.contains("r.jsonl: following (rotated 1x)"),
        "{screen}"
    );
}

/// Item 8 of issue 12: after a flood of short connections the session list keeps the 32
/// most recently ended live sessions; older ones leave the list (and memory) but not the
/// disk: their spool files hold their events, and their placeholder says where.
#[test]
fn ended_live_sessions_age_out_of_the_list_but_stay_on_disk() {
    use doxascope::tui::sources::MAX_ENDED_LIVE;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("run").join("live.sock");
    let mut app = app();
    let n = 100;
    rt.block_on(async {
        let (live, mut rx) = Live::new(LiveConfig {
            spool_dir: Some(dir.path().join("spool")),
            ..LiveConfig::default()
        });
        let addr: ListenAddr = format!("unix:{}", sock.display()).parse().unwrap();
        let _listener = live.listen(&addr).await.unwrap();
        for i in 0..n {
            let mut c = tokio::net::UnixStream::connect(&sock).await.unwrap();
            c.write_all(format!("{{\"kind\":\"log\",\"message\":\"m{i}\"}}\n").as_bytes())
                .await
                .unwrap();
        }
        let mut closed = 0;
        while closed < n {
            let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .expect("live event in time")
                .expect("hub alive");
            closed += usize::from(matches!(ev, LiveEvent::Closed { .. }));
            // The user looks at the first session, which must stay.
            app.sources.shown = 0;
            app.sources.on_live(&mut app.store, ev);
            app.on_data();
        }
    });
    // The one on screen and the 31 most recent.
    assert_eq!(app.store.listed(), MAX_ENDED_LIVE);
    assert_eq!(app.sources.aged_out, (n - MAX_ENDED_LIVE) as u64);
    assert!(!app.store.sessions[0].retired);
    assert_eq!(app.store.sessions[0].len(), 1);
    // A retired session says where its events are, and they are there.
    let gone = app
        .store
        .sessions
        .iter()
        .find(|s| s.retired)
        .expect("a retired session");
    assert!(gone.is_empty());
    let file = gone
        .name
        .split("events in ")
        .nth(1)
        .unwrap()
        .trim_end_matches(')');
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.starts_with("{\"kind\":\"log\",\"message\":\"m"),
        "{text}"
    );
    // Moving through the sessions visits only listed ones, and the header counts those.
    for _ in 0..2 * n {
        key(&mut app, 's');
        assert!(!app.store.sessions[app.session()].retired);
    }
    let screen = render_text(&mut app, 200, 30);
    assert!(screen.contains(&format!("/{MAX_ENDED_LIVE})")), "{screen}");
}

#[test]
fn the_rest_of_a_large_followed_file_is_read_on_request() {
    use doxascope::tui::app::Effect;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let lines = [
        "{\"kind\":\"announce\",\"formula\":\"p\"}\n",
        "{\"kind\":\"announce\",\"formula\":\"q\"}\n",
        "{\"kind\":\"announce\",\"formula\":\"r\"}\n",
    ];
    std::fs::write(&path, lines.concat()).unwrap();
    let mut app = app();
    // "Large" for this test: only the last line is read at first.
    let cfg = FollowConfig {
        poll_interval: Duration::from_millis(20),
        tail_threshold: 10,
        tail_bytes: lines[2].len() as u64,
        ..FollowConfig::default()
    };
    let (handle, mut rx) = Follower::spawn_many(vec![path.clone()], cfg).unwrap();
    let (tx, mut one) = tokio::sync::mpsc::channel(64);
    rt.spawn(async move {
        while let Some((_, item)) = rx.recv().await {
            if tx.send(item).await.is_err() {
                break;
            }
        }
    });
    app.sources.add_file(path.clone());
    let mut seen = Vec::new();
    pump(&mut app, &rt, &mut one, &mut seen, |a, _| {
        a.store.sessions.first().is_some_and(|s| s.len() == 1)
    });
    let screen = render_text(&mut app, 200, 30);
    assert!(
        screen.contains("not loaded (:read-all reads it)"),
        "{screen}"
    );
    // `:read-all` asks the event loop to read the skipped files whole.
    let mut effects = Vec::new();
    effects.extend(app.on_key(KeyEvent::new(KeyCode::Char(':'), KeyModifiers::NONE)));
    for c in "read-all".chars() {
        effects.extend(app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
    }
    effects.extend(app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    let files: Vec<usize> = effects
        .iter()
        .find_map(|e| match e {
            Effect::ReadWhole(f) => Some(f.clone()),
            _ => None,
        })
        .expect("a ReadWhole effect");
    assert_eq!(files, [0]);
    for f in files {
        handle.read_whole(f);
    }
    pump(&mut app, &rt, &mut one, &mut seen, |a, _| {
        a.store.sessions.get(1).is_some_and(|s| s.len() == 3)
    });
    assert!(seen.contains(&FollowStatus::ReadWhole), "{seen:?}");
    // The tail's timeline stays; the whole file is a new reading of it, with every line.
    assert_eq!(app.store.sessions[0].len(), 1);
    assert!(app.store.sessions[1].name.ends_with("· re-read 1"));
    let screen = render_text(&mut app, 200, 30);
    assert!(!screen.contains("not loaded"), "{screen}");
    // Asked again (the command line stays open after a command): nothing left to read.
    for c in "read-all".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    let again = app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(again.is_empty());
    assert!(
        app.status.contains("read from its start already"),
        "{}",
        app.status
    );
    handle.stop();
}

/// One HTTP/1.1 POST on a fresh connection; the status code.
async fn post(addr: &str, path: &str, content_type: &str, body: &[u8]) -> u16 {
    use tokio::io::AsyncReadExt;
    let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes()).await.unwrap();
    c.write_all(body).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), c.read_to_end(&mut answer))
        .await
        .expect("an answer in time")
        .unwrap();
    String::from_utf8_lossy(&answer[9..12]).parse().unwrap()
}

#[test]
fn otlp_log_records_become_a_live_session_and_a_refused_logs_request_is_shown() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut app = app();
    rt.block_on(async {
        let (live, mut rx) = Live::new(LiveConfig::default());
        let addr: ListenAddr = "otlp:127.0.0.1:0".parse().unwrap();
        let listener = live.listen(&addr).await.unwrap();
        app.sources.listening = Some(listener.local_addr().to_string());
        let ListenAddr::Otlp(a) = listener.local_addr().clone() else {
            panic!("not otlp")
        };
        let a = a.to_string();
        let status = post(&a, "/v1/logs", "text/plain", b"{}").await;
        assert_eq!(status, 415);
        let logs = serde_json::json!({"resourceLogs": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
        "scopeLogs": [{"logRecords": [{
            "traceId": "0000000000000000000000000000abcd",
            "spanId": "0000000000000001",
            "eventName": "gen_ai.user.message",
            "body": {"kvlistValue": {"values": [
                {"key": "content", "value": {"stringValue": "hello there"}}]}},
        }]}]}]});
        let status = post(
            &a,
            "/v1/logs",
            "application/json",
            logs.to_string().as_bytes(),
        )
        .await;
        assert_eq!(status, 200);
        let mut refused = false;
        while !refused || app.store.sessions.iter().all(|s| s.len() < 2) {
            let ev = tokio::time::timeout(Duration::from_secs(10), rx.recv())
                .await
                .expect("live event in time")
                .expect("hub alive");
            refused |= matches!(ev, LiveEvent::Rejected { .. });
            if let Some(m) = app.sources.on_live(&mut app.store, ev) {
                app.status = m;
                // As each frame does.
                app.keep_message();
            }
            app.on_data();
        }
        drop(listener);
    });
    let s = &app.store.sessions[0];
    assert!(matches!(s.origin, SessionSource::Live(_)));
    assert_eq!(&*s.name, "svc 000000000000abcd");
    let screen = render_text(&mut app, 200, 40);
    assert!(screen.contains("user: hello there"), "{screen}");
    // The refusal stays in the messages the status line keeps.
    key(&mut app, ':');
    for c in "messages".chars() {
        key(&mut app, c);
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let screen = render_text(&mut app, 200, 40);
    assert!(
        screen.contains("OTLP request refused: content type"),
        "{screen}"
    );
}
