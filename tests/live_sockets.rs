//! Socket integration tests: an in-process hub and real Unix/TCP clients, one hostile
//! behaviour per test (reliability-security research §4.7).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use doxascope::trace::live::{
    CloseReason, ListenAddr, ListenError, Live, LiveConfig, LiveEvent, Peer, RejectReason,
};
use doxascope::trace::{Body, Item};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::mpsc::Receiver;
use tokio::time::{sleep, timeout};

fn line(tag: &str) -> String {
    format!("{{\"kind\":\"log\",\"message\":\"{tag}\"}}\n")
}

fn render_items(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|it| match it {
            Item::Event(ev) => match &ev.body {
                Body::Log(l) => {
                    format!("{}@{}", l.message.as_deref().unwrap_or("?"), ev.origin.line)
                }
                other => format!("{:?}", other),
            },
            Item::Problem(p) => format!("{:?}@{}", p.code, p.origin.line),
        })
        .collect()
}

fn render(ev: &LiveEvent) -> Vec<String> {
    match ev {
        LiveEvent::Opened { name, .. } => vec![format!("Opened:{name}")],
        LiveEvent::Named { name, .. } => vec![format!("Named:{name}")],
        LiveEvent::Items { items, .. } => render_items(items),
        LiveEvent::Spilling { held, .. } => vec![format!("Spilling:{held}")],
        LiveEvent::Closed {
            reason,
            spooled_only,
            ..
        } => vec![format!("Closed:{reason:?}:{spooled_only}")],
        LiveEvent::Rejected { reason, .. } => vec![format!("Rejected:{reason:?}")],
        LiveEvent::ServerError(e) => vec![format!("ServerError:{e}")],
        LiveEvent::SpoolRemoved { files, .. } => vec![format!("SpoolRemoved:{}", files.len())],
    }
}

async fn next(rx: &mut Receiver<LiveEvent>) -> LiveEvent {
    timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("timed out waiting for a live event")
        .expect("channel closed")
}

/// Everything up to and including the next `Closed` or `Rejected`.
async fn until_end(rx: &mut Receiver<LiveEvent>) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        let ev = next(rx).await;
        let end = matches!(ev, LiveEvent::Closed { .. } | LiveEvent::Rejected { .. });
        out.extend(render(&ev));
        if end {
            return out;
        }
    }
}

fn sock_path(dir: &Path) -> ListenAddr {
    ListenAddr::Unix(dir.join("private").join("live.sock"))
}

/// Reads until the server closes the connection (or resets it).
async fn server_closes<S: AsyncReadExt + Unpin>(s: &mut S) {
    let mut b = [0u8; 64];
    let r = timeout(Duration::from_secs(10), s.read(&mut b))
        .await
        .expect("server did not close the connection");
    assert!(matches!(r, Ok(0) | Err(_)), "unexpected data: {r:?}");
}

#[tokio::test]
async fn unix_session_in_a_private_directory() {
    let dir = tempfile::tempdir().unwrap();
    let addr = sock_path(dir.path());
    let (live, mut rx) = Live::new(LiveConfig::default());
    let listener = live.listen(&addr).await.unwrap();
    let ListenAddr::Unix(path) = listener.local_addr().clone() else {
        panic!("not unix")
    };
    let mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "socket directory must be private");
    let mut c = UnixStream::connect(&path).await.unwrap();
    c.write_all(b"{\"kind\":\"session\",\"session\":\"agent-7\",\"agent\":\"x\"}\n")
        .await
        .unwrap();
    c.write_all(line("a").as_bytes()).await.unwrap();
    drop(c);
    let got = until_end(&mut rx).await;
    assert_eq!(got[0], "Opened:conn-1");
    assert_eq!(got[1], "Named:agent-7");
    assert_eq!(got[got.len() - 1], "Closed:Eof:0");
    assert_eq!(&got[3..got.len() - 1], ["a@2"]);
    assert!(got[2].starts_with("Session("), "{}", got[2]);
    drop(listener);
    assert!(
        !path.exists(),
        "the socket file is removed with the listener"
    );
}

#[tokio::test]
async fn unsafe_socket_directories_and_paths_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (live, _rx) = Live::new(LiveConfig::default());
    // World-writable directory.
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = live
        .listen(&ListenAddr::Unix(open.join("s")))
        .await
        .unwrap_err();
    assert!(matches!(e, ListenError::UnsafeDirectory { .. }), "{e}");
    // Not owned by us (only testable where we may chown, i.e. as root).
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
    if std::os::unix::fs::chown(&theirs, Some(65534), None).is_ok() {
        let e = live
            .listen(&ListenAddr::Unix(theirs.join("s")))
            .await
            .unwrap_err();
        assert!(matches!(e, ListenError::UnsafeDirectory { .. }), "{e}");
    }
    // A regular file where the socket should go.
    let private = dir.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::write(private.join("s"), "precious").unwrap();
    let e = live
        .listen(&ListenAddr::Unix(private.join("s")))
        .await
        .unwrap_err();
    assert!(matches!(e, ListenError::PathOccupied(_)), "{e}");
    assert_eq!(
        std::fs::read_to_string(private.join("s")).unwrap(),
        "precious"
    );
    // Over-long path.
    let long = private.join("x".repeat(120));
    let e = live.listen(&ListenAddr::Unix(long)).await.unwrap_err();
    assert!(matches!(e, ListenError::PathTooLong(_)), "{e}");
}

#[tokio::test]
async fn stale_socket_is_replaced_but_a_live_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("p");
    std::fs::create_dir(&private).unwrap();
    let path = private.join("s");
    // A socket file nobody listens on any more (a crashed server).
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let (live, mut rx) = Live::new(LiveConfig::default());
    let listener = live.listen(&ListenAddr::Unix(path.clone())).await.unwrap();
    let e = live
        .listen(&ListenAddr::Unix(path.clone()))
        .await
        .unwrap_err();
    assert!(matches!(e, ListenError::InUse(_)), "{e}");
    // The first listener still works.
    let mut c = UnixStream::connect(&path).await.unwrap();
    c.write_all(line("x").as_bytes()).await.unwrap();
    drop(c);
    assert!(until_end(&mut rx).await.contains(&"x@1".to_string()));
    drop(listener);
}

#[tokio::test]
async fn peers_of_another_user_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let me = {
        let (a, _b) = UnixStream::pair().unwrap();
        a.peer_cred().unwrap().uid()
    };
    let cfg = LiveConfig {
        allowed_uid: Some(me.wrapping_add(1)),
        ..LiveConfig::default()
    };
    let (live, mut rx) = Live::new(cfg);
    let listener = live.listen(&sock_path(dir.path())).await.unwrap();
    let ListenAddr::Unix(path) = listener.local_addr().clone() else {
        panic!()
    };
    let mut c = UnixStream::connect(&path).await.unwrap();
    let _ = c.write_all(line("a").as_bytes()).await;
    match next(&mut rx).await {
        LiveEvent::Rejected {
            peer: Peer::Unix { uid, .. },
            reason: RejectReason::WrongUser { uid: u2 },
        } => {
            assert_eq!(uid, me);
            assert_eq!(u2, me);
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    server_closes(&mut c).await;
    assert_eq!(live.stats().sessions, 0);
    assert_eq!(live.stats().rejected, 1);
}

#[test]
fn listen_addresses_parse_and_non_loopback_tcp_is_refused() {
    assert_eq!(
        "tcp:127.0.0.1:7000".parse::<ListenAddr>().unwrap(),
        ListenAddr::Tcp("127.0.0.1:7000".parse().unwrap())
    );
    assert_eq!(
        "tcp:localhost:7000".parse::<ListenAddr>().unwrap(),
        ListenAddr::Tcp("127.0.0.1:7000".parse().unwrap())
    );
    assert_eq!(
        "tcp:[::1]:7000".parse::<ListenAddr>().unwrap(),
        ListenAddr::Tcp("[::1]:7000".parse().unwrap())
    );
    assert_eq!(
        "unix:/run/x.sock".parse::<ListenAddr>().unwrap(),
        ListenAddr::Unix("/run/x.sock".into())
    );
    for bad in ["tcp:0.0.0.0:7000", "tcp:192.168.1.10:7000", "tcp:[::]:7000"] {
        assert!(
            matches!(bad.parse::<ListenAddr>(), Err(ListenError::NotLoopback(_))),
            "{bad}"
        );
    }
    for bad in [
        "",
        "unix:",
        "tcp:",
        "tcp:example.com:80",
        "7000",
        "udp:127.0.0.1:1",
    ] {
        assert!(
            matches!(bad.parse::<ListenAddr>(), Err(ListenError::BadAddress(_))),
            "{bad}"
        );
    }
}

#[tokio::test]
async fn non_loopback_tcp_is_refused_at_listen_too() {
    let (live, _rx) = Live::new(LiveConfig::default());
    let e = live
        .listen(&ListenAddr::Tcp("0.0.0.0:0".parse().unwrap()))
        .await
        .unwrap_err();
    assert!(matches!(e, ListenError::NotLoopback(_)), "{e}");
}

async fn tcp_hub(
    cfg: LiveConfig,
) -> (
    Live,
    Receiver<LiveEvent>,
    doxascope::trace::live::Listener,
    std::net::SocketAddr,
) {
    let (live, rx) = Live::new(cfg);
    let listener = live
        .listen(&"tcp:127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let ListenAddr::Tcp(addr) = listener.local_addr().clone() else {
        panic!()
    };
    (live, rx, listener, addr)
}

#[tokio::test]
async fn oversized_messages_are_reported_and_skipped() {
    let cfg = LiveConfig {
        max_message_bytes: 100,
        ..LiveConfig::default()
    };
    let (_live, mut rx, _l, addr) = tcp_hub(cfg).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let big = format!(
        "{{\"kind\":\"log\",\"message\":\"{}\"}}\n",
        "x".repeat(5000)
    );
    c.write_all(line("a").as_bytes()).await.unwrap();
    c.write_all(big.as_bytes()).await.unwrap();
    // A message that never ends is bounded the same way.
    c.write_all(line("b").as_bytes()).await.unwrap();
    c.write_all(&vec![b'y'; 200_000]).await.unwrap();
    drop(c);
    let got = until_end(&mut rx).await;
    assert_eq!(
        got,
        [
            "Opened:conn-1",
            "a@1",
            "LineTooLong@2",
            "b@3",
            "LineTooLong@4",
            "Closed:Eof:0"
        ]
    );
}

#[tokio::test]
async fn a_slow_client_byte_by_byte_gives_whole_records() {
    let (_live, mut rx, _l, addr) = tcp_hub(LiveConfig::default()).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.set_nodelay(true).unwrap();
    for b in format!("{}{}", line("a"), line("b")).bytes() {
        c.write_all(&[b]).await.unwrap();
        sleep(Duration::from_micros(300)).await;
    }
    drop(c);
    assert_eq!(
        until_end(&mut rx).await,
        ["Opened:conn-1", "a@1", "b@2", "Closed:Eof:0"]
    );
}

/// E63: a client writing faster than the viewer consumes is made to wait (the hub stops
/// reading it) and loses nothing.
#[tokio::test]
async fn a_slow_consumer_makes_a_socket_session_wait_and_lose_nothing() {
    let cfg = LiveConfig {
        session_queue: 2,
        read_chunk: 4096,
        ..LiveConfig::default()
    };
    let (_live, mut rx, _l, addr) = tcp_hub(cfg).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let total: u64 = 200_000;
    let written = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let w = written.clone();
    let writer = tokio::spawn(async move {
        let mut batch = String::new();
        for i in 0..total {
            batch.push_str(&line(&format!("m{i}")));
            if batch.len() > 8192 || i + 1 == total {
                c.write_all(batch.as_bytes()).await.unwrap();
                w.fetch_add(batch.len() as u64, std::sync::atomic::Ordering::Relaxed);
                batch.clear();
            }
        }
    });
    // Nothing consumed: the hub stops reading after two batches, the kernel buffers fill,
    // and the writer is held up.
    sleep(Duration::from_millis(500)).await;
    let held_up = written.load(std::sync::atomic::Ordering::Relaxed);
    let all = (0..total)
        .map(|i| line(&format!("m{i}")).len() as u64)
        .sum::<u64>();
    assert!(
        held_up < all,
        "the writer was not held up ({held_up} of {all} bytes)"
    );
    let mut next_num = 0u64;
    loop {
        match next(&mut rx).await {
            LiveEvent::Items { items, .. } => {
                for s in render_items(&items) {
                    let n: u64 = s
                        .trim_start_matches('m')
                        .split('@')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap();
                    assert_eq!(n, next_num, "in order, nothing lost or repeated");
                    next_num += 1;
                }
            }
            LiveEvent::Closed {
                reason,
                spooled_only,
                ..
            } => {
                assert_eq!((reason, spooled_only), (CloseReason::Eof, 0));
                break;
            }
            _ => {}
        }
    }
    writer.await.unwrap();
    assert_eq!(next_num, total);
}

/// E63: what a flooding session hands the viewer is bounded; the rest is in its spool file,
/// which holds the whole stream byte for byte, and the counts say so.
#[tokio::test]
async fn a_flood_is_held_up_to_the_bound_and_the_rest_spooled() {
    let spool = tempfile::tempdir().unwrap();
    let cfg = LiveConfig {
        max_held_events: 1000,
        spool_dir: Some(spool.path().join("live")),
        ..LiveConfig::default()
    };
    let (live, mut rx, _l, addr) = tcp_hub(cfg).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let total = 20_000;
    let mut sent = String::new();
    for i in 0..total {
        sent.push_str(&line(&format!("m{i}")));
    }
    let bytes = sent.clone();
    let writer = tokio::spawn(async move {
        c.write_all(bytes.as_bytes()).await.unwrap();
    });
    let mut delivered = 0u64;
    let mut spool_file = None;
    let mut spilling = None;
    loop {
        match next(&mut rx).await {
            LiveEvent::Opened { spool, .. } => spool_file = spool,
            LiveEvent::Items { items, .. } => delivered += items.len() as u64,
            LiveEvent::Spilling { held, .. } => spilling = Some(held),
            LiveEvent::Closed {
                reason,
                spooled_only,
                ..
            } => {
                assert_eq!(reason, CloseReason::Eof);
                assert_eq!(spooled_only, total - delivered);
                break;
            }
            _ => {}
        }
    }
    writer.await.unwrap();
    assert_eq!(delivered, 1000);
    assert_eq!(spilling, Some(delivered));
    assert_eq!(live.stats().spooled_only, total - delivered);
    let spool_file = spool_file.expect("a spool file");
    assert_eq!(std::fs::read_to_string(&spool_file).unwrap(), sent);
    let mode = std::fs::metadata(&spool_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Without a spool directory the session is closed at the bound, and says why.
    let (_live, mut rx, _l, addr) = tcp_hub(LiveConfig {
        max_held_events: 10,
        ..LiveConfig::default()
    })
    .await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(sent.as_bytes()).await.ok();
    let got = until_end(&mut rx).await;
    assert_eq!(got.last().unwrap(), "Closed:MemoryLimit:0");
    assert!(got.iter().filter(|s| s.contains('@')).count() < 100);
}

/// E63: the bound holds over all sessions together, not only per session (sessions open
/// at once; an ended session with a spool file gives its share back, see
/// tests/live_bounds.rs).
#[tokio::test]
async fn the_memory_bound_holds_across_sessions() {
    let spool = tempfile::tempdir().unwrap();
    let cfg = LiveConfig {
        max_held_events_total: 50,
        spool_dir: Some(spool.path().to_path_buf()),
        ..LiveConfig::default()
    };
    let (_live, mut rx, _l, addr) = tcp_hub(cfg).await;
    let mut delivered = 0u64;
    let mut open = Vec::new();
    for k in 0..5 {
        let mut c = TcpStream::connect(addr).await.unwrap();
        let mut text = String::new();
        for i in 0..40 {
            text.push_str(&line(&format!("{k}-{i}")));
        }
        c.write_all(text.as_bytes()).await.unwrap();
        open.push(c);
        // Until this session has handed over all its lines or spills the rest.
        let mut mine = 0;
        while mine < 40 {
            match next(&mut rx).await {
                LiveEvent::Items { items, .. } => mine += items.len(),
                LiveEvent::Spilling { .. } => break,
                _ => {}
            }
        }
        delivered += mine as u64;
    }
    assert_eq!(delivered, 50, "held of 200");
    assert_eq!(std::fs::read_dir(spool.path()).unwrap().count(), 5);
}

#[tokio::test]
async fn an_attached_stream_waits_for_the_consumer() {
    let cfg = LiveConfig {
        session_queue: 1,
        ..LiveConfig::default()
    };
    let (live, mut rx) = Live::new(cfg);
    let (mut w, r) = tokio::io::duplex(64);
    live.attach("pipe", r);
    let writer = tokio::spawn(async move {
        for i in 0..200 {
            w.write_all(line(&format!("{i}")).as_bytes()).await.unwrap();
        }
    });
    sleep(Duration::from_millis(100)).await;
    let got = until_end(&mut rx).await;
    writer.await.unwrap();
    let events: Vec<&String> = got.iter().filter(|s| s.contains('@')).collect();
    assert_eq!(events.len(), 200);
    assert_eq!(got.last().unwrap(), "Closed:Eof:0");
}

/// E61: 64 clients dripping one byte at a time hold every slot; a real agent arriving then
/// is served (a slow one is evicted), and the drippers are closed when their line takes
/// longer than the line deadline.
#[tokio::test]
async fn slowloris_clients_neither_lock_out_an_agent_nor_stay() {
    let cfg = LiveConfig {
        max_connections: 64,
        line_timeout: Duration::from_secs(3),
        evict_slow_after: Duration::from_millis(500),
        ..LiveConfig::default()
    };
    let (live, mut rx, _l, addr) = tcp_hub(cfg).await;
    let mut drippers = Vec::new();
    for _ in 0..64 {
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.set_nodelay(true).unwrap();
        drippers.push(tokio::spawn(async move {
            let msg = line("slow");
            for b in msg.as_bytes() {
                if c.write_all(&[*b]).await.is_err() {
                    return;
                }
                sleep(Duration::from_millis(400)).await;
            }
        }));
    }
    let mut opened = 0;
    while opened < 64 {
        if matches!(next(&mut rx).await, LiveEvent::Opened { .. }) {
            opened += 1;
        }
    }
    sleep(Duration::from_millis(700)).await;
    let mut agent = TcpStream::connect(addr).await.unwrap();
    agent.write_all(line("agent").as_bytes()).await.unwrap();
    let mut served = false;
    let mut ends = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(8);
    while tokio::time::Instant::now() < deadline && (ends.len() < 64 || !served) {
        let Ok(Some(ev)) = timeout(Duration::from_millis(500), rx.recv()).await else {
            continue;
        };
        match ev {
            LiveEvent::Items { items, .. } => {
                served |= render_items(&items).contains(&"agent@1".to_string());
            }
            LiveEvent::Rejected { reason, .. } => panic!("agent refused: {reason:?}"),
            LiveEvent::Closed { reason, .. } => ends.push(reason),
            _ => {}
        }
    }
    assert!(served, "the agent was served");
    assert!(live.stats().evicted >= 1);
    assert!(ends.contains(&CloseReason::Evicted), "{ends:?}");
    // Every dripper is gone within the line deadline (3 s), long before its line is done.
    assert_eq!(
        ends.iter()
            .filter(|r| matches!(r, CloseReason::Evicted | CloseReason::LineTimeout))
            .count(),
        64,
        "{ends:?}"
    );
    assert!(ends.contains(&CloseReason::LineTimeout), "{ends:?}");
    for d in drippers {
        d.abort();
    }
}

/// E61 before the first record: whitespace dripped byte by byte is refused at the line
/// deadline, not held for the idle timeout.
#[tokio::test]
async fn whitespace_dripped_before_the_first_record_is_refused() {
    let cfg = LiveConfig {
        line_timeout: Duration::from_millis(500),
        ..LiveConfig::default()
    };
    let (_live, mut rx, _l, addr) = tcp_hub(cfg).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    let drip = tokio::spawn(async move {
        for _ in 0..50 {
            if c.write_all(b" ").await.is_err() {
                return;
            }
            sleep(Duration::from_millis(100)).await;
        }
    });
    let t0 = std::time::Instant::now();
    assert_eq!(until_end(&mut rx).await, ["Rejected:IdleTimeout"]);
    assert!(t0.elapsed() < Duration::from_secs(3));
    drip.abort();
}

#[tokio::test]
async fn http_requests_are_refused_before_any_session_exists() {
    let (live, mut rx, _l, addr) = tcp_hub(LiveConfig::default()).await;
    for req in [
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "POST /x HTTP/1.1\r\nContent-Type: text/plain\r\n\r\n{\"kind\":\"log\"}\n",
    ] {
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.write_all(req.as_bytes()).await.unwrap();
        assert_eq!(until_end(&mut rx).await, ["Rejected:Http"]);
        server_closes(&mut c).await;
    }
    assert_eq!(live.stats().sessions, 0);
}

#[tokio::test]
async fn garbage_is_refused_at_the_start_and_reported_per_line_later() {
    let (_live, mut rx, _l, addr) = tcp_hub(LiveConfig::default()).await;
    // TLS ClientHello-like binary start.
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(&[0x16, 0x03, 0x01, 0x00, 0xa5, 0x01])
        .await
        .unwrap();
    assert_eq!(until_end(&mut rx).await, ["Rejected:NotJsonl"]);
    server_closes(&mut c).await;
    // Blank lines, then a valid start, then garbage lines between good ones.
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(b"\n  \n").await.unwrap();
    c.write_all(line("a").as_bytes()).await.unwrap();
    c.write_all(b"\x00\xff\xfe garbage\n").await.unwrap();
    c.write_all(b"not json\n").await.unwrap();
    c.write_all(line("b").as_bytes()).await.unwrap();
    drop(c);
    assert_eq!(
        until_end(&mut rx).await,
        [
            "Opened:conn-1",
            "a@3",
            "InvalidUtf8@4",
            "Json@5",
            "b@6",
            "Closed:Eof:0"
        ]
    );
}

#[tokio::test]
async fn connections_beyond_the_cap_are_closed_and_counted() {
    let cfg = LiveConfig {
        max_connections: 4,
        ..LiveConfig::default()
    };
    let (live, mut rx, _l, addr) = tcp_hub(cfg).await;
    let mut held = Vec::new();
    for i in 0..4 {
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.write_all(line(&format!("c{i}")).as_bytes())
            .await
            .unwrap();
        held.push(c);
    }
    let mut opened = 0;
    while opened < 4 {
        if matches!(next(&mut rx).await, LiveEvent::Opened { .. }) {
            opened += 1;
        }
    }
    let mut extra = Vec::new();
    for _ in 0..10 {
        extra.push(TcpStream::connect(addr).await.unwrap());
    }
    let mut rejected = 0;
    while rejected < 10 {
        match next(&mut rx).await {
            LiveEvent::Rejected {
                reason: RejectReason::TooManyConnections,
                ..
            } => rejected += 1,
            LiveEvent::Items { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    for c in &mut extra {
        server_closes(c).await;
    }
    assert_eq!(live.stats().rejected, 10);
    // Closing one frees a place.
    drop(held.pop());
    loop {
        if matches!(next(&mut rx).await, LiveEvent::Closed { .. }) {
            break;
        }
    }
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(line("late").as_bytes()).await.unwrap();
    drop(c);
    let got = until_end(&mut rx).await;
    assert!(got.contains(&"late@1".to_string()), "{got:?}");
    assert_eq!(live.stats().sessions, 5);
}

#[tokio::test]
async fn a_disconnect_mid_line_reports_the_torn_record() {
    let (_live, mut rx, _l, addr) = tcp_hub(LiveConfig::default()).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(line("a").as_bytes()).await.unwrap();
    c.write_all(b"{\"kind\":\"log\",\"mess").await.unwrap();
    drop(c);
    assert_eq!(
        until_end(&mut rx).await,
        ["Opened:conn-1", "a@1", "Json@2", "Closed:Eof:0"]
    );
}

#[tokio::test]
async fn silent_connections_time_out() {
    let cfg = LiveConfig {
        idle_timeout: Duration::from_millis(200),
        ..LiveConfig::default()
    };
    let (_live, mut rx, _l, addr) = tcp_hub(cfg).await;
    // Silent after a first record.
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(line("a").as_bytes()).await.unwrap();
    assert_eq!(
        until_end(&mut rx).await,
        ["Opened:conn-1", "a@1", "Closed:IdleTimeout:0"]
    );
    server_closes(&mut c).await;
    // Silent from the start (slowloris).
    let mut c = TcpStream::connect(addr).await.unwrap();
    assert_eq!(until_end(&mut rx).await, ["Rejected:IdleTimeout"]);
    server_closes(&mut c).await;
}

#[tokio::test]
async fn shutdown_closes_every_session() {
    let (live, mut rx, _l, addr) = tcp_hub(LiveConfig::default()).await;
    let mut c = TcpStream::connect(addr).await.unwrap();
    c.write_all(line("a").as_bytes()).await.unwrap();
    assert_eq!(next(&mut rx).await.kind_name(), "Opened");
    live.shutdown();
    let got = until_end(&mut rx).await;
    assert_eq!(
        got.last().unwrap(),
        &format!("Closed:{:?}:0", CloseReason::Shutdown)
    );
}

trait KindName {
    fn kind_name(&self) -> &'static str;
}

impl KindName for LiveEvent {
    fn kind_name(&self) -> &'static str {
        match self {
            LiveEvent::Opened { .. } => "Opened",
            LiveEvent::Named { .. } => "Named",
            LiveEvent::Items { .. } => "Items",
            LiveEvent::Spilling { .. } => "Spilling",
            LiveEvent::Closed { .. } => "Closed",
            LiveEvent::Rejected { .. } => "Rejected",
            LiveEvent::ServerError(_) => "ServerError",
            LiveEvent::SpoolRemoved { .. } => "SpoolRemoved",
        }
    }
}

#[tokio::test]
async fn two_clients_claiming_one_session_name_stay_two_sessions() {
    let (_live, mut rx, _l, addr) = tcp_hub(LiveConfig::default()).await;
    let hello = "{\"kind\":\"session\",\"session\":\"same\"}\n";
    let mut a = TcpStream::connect(addr).await.unwrap();
    a.write_all(hello.as_bytes()).await.unwrap();
    let mut ids = Vec::new();
    loop {
        if let LiveEvent::Named { session, name } = next(&mut rx).await {
            assert_eq!(name, "same");
            ids.push(session);
            break;
        }
    }
    let mut b = TcpStream::connect(addr).await.unwrap();
    b.write_all(hello.as_bytes()).await.unwrap();
    loop {
        if let LiveEvent::Named { session, name } = next(&mut rx).await {
            assert_eq!(name, "same");
            ids.push(session);
            break;
        }
    }
    assert_ne!(ids[0], ids[1], "the server-assigned id is the identity");
}

#[tokio::test]
async fn a_flooding_session_does_not_starve_another() {
    let cfg = LiveConfig {
        session_queue: 2,
        ..LiveConfig::default()
    };
    let (_live, mut rx, _l, addr) = tcp_hub(cfg).await;
    let mut flood = TcpStream::connect(addr).await.unwrap();
    flood.set_nodelay(true).unwrap();
    let flooder = tokio::spawn(async move {
        for i in 0..2000 {
            if flood
                .write_all(line(&format!("f{i}")).as_bytes())
                .await
                .is_err()
            {
                break;
            }
            if i % 50 == 0 {
                sleep(Duration::from_millis(1)).await;
            }
        }
        flood
    });
    sleep(Duration::from_millis(50)).await;
    let mut quiet = TcpStream::connect(addr).await.unwrap();
    quiet.write_all(line("hello").as_bytes()).await.unwrap();
    let _flood = flooder.await.unwrap();
    // Nothing was consumed during the flood; the quiet session's line still got through.
    let mut found = false;
    while !found {
        if let LiveEvent::Items { items, .. } = next(&mut rx).await {
            found = render_items(&items).contains(&"hello@1".to_string());
        }
    }
}

#[tokio::test]
async fn dropping_the_hub_handle_does_not_end_an_attached_session() {
    let (live, mut rx) = Live::new(LiveConfig::default());
    let (mut w, r) = tokio::io::duplex(1024);
    live.attach("pipe", r);
    drop(live);
    sleep(Duration::from_millis(50)).await;
    w.write_all(line("after").as_bytes()).await.unwrap();
    drop(w);
    assert_eq!(
        until_end(&mut rx).await,
        ["Opened:pipe", "after@1", "Closed:Eof:0"]
    );
}
