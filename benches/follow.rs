//! Follow-mode figures: how fast an appended line is delivered by the follower thread, and
//! whether a sustained burst is delivered completely. Prints figures; run with
//! `cargo bench --bench follow` (`FOLLOW_BURST_SECS=2` shortens the burst on a busy machine).

use std::fs::OpenOptions;
use std::io::Write;
use std::time::{Duration, Instant};

use doxascope::trace::follow::{FollowConfig, FollowItem, Follower};
use doxascope::trace::{Body, Item};

fn announce(i: u64) -> String {
    format!(
        "{{\"kind\":\"announce\",\"id\":\"b{i}\",\"formula\":\"p{i} -> q{i}\",\"source\":\"user\",\"confidence\":0.9}}\n"
    )
}

fn index_of(item: &Item) -> Option<u64> {
    match item {
        Item::Event(ev) => match &ev.body {
            Body::Announce(_) => ev.id.as_deref()?.strip_prefix('b')?.parse().ok(),
            _ => None,
        },
        Item::Problem(_) => None,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Appends one line at a time, ~10 ms apart, and measures write-to-delivery latency, with
/// notifications or on the periodic poll alone.
fn latency(n: u64, use_notify: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, "").expect("create");
    let cfg = FollowConfig {
        notify: use_notify,
        ..FollowConfig::default()
    };
    let (handle, mut rx) = Follower::spawn(&path, cfg).expect("spawn");
    let mut file = OpenOptions::new().append(true).open(&path).expect("open");
    let mut lat = Vec::new();
    let mut notify = use_notify;
    for i in 0..n {
        let start = Instant::now();
        file.write_all(announce(i).as_bytes()).expect("write");
        'wait: loop {
            match rx.blocking_recv() {
                Some(FollowItem::Items(items)) => {
                    if items.iter().any(|it| index_of(it) == Some(i)) {
                        lat.push(start.elapsed());
                        break 'wait;
                    }
                }
                Some(FollowItem::Status(s)) => {
                    if matches!(s, doxascope::trace::follow::FollowStatus::PollingOnly(_)) {
                        notify = false;
                    }
                }
                None => panic!("follower ended"),
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    handle.stop();
    lat.sort();
    println!(
        "append-to-delivery latency over {n} appends (notify {}): p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        match (use_notify, notify) {
            (true, true) => "on",
            (true, false) => "UNAVAILABLE",
            _ => "off, polling every 250 ms",
        },
        percentile(&lat, 0.50).as_secs_f64() * 1e3,
        percentile(&lat, 0.95).as_secs_f64() * 1e3,
        lat.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

/// Writes `rate` lines/s for `secs` seconds (in 10 ms slices) while the follower reads, then
/// checks that every line was delivered exactly once.
fn burst(rate: u64, secs: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, "").expect("create");
    let (handle, mut rx) = Follower::spawn(&path, FollowConfig::default()).expect("spawn");
    let total = rate * secs;
    let per_slice = rate / 100;
    let writer_path = path.clone();
    let writer = std::thread::spawn(move || {
        let mut file = OpenOptions::new()
            .append(true)
            .open(&writer_path)
            .expect("open");
        let start = Instant::now();
        let mut i = 0u64;
        let mut slice = 0u64;
        let mut buf = String::new();
        while i < total {
            buf.clear();
            for _ in 0..per_slice.min(total - i) {
                buf.push_str(&announce(i));
                i += 1;
            }
            file.write_all(buf.as_bytes()).expect("write");
            slice += 1;
            let due = Duration::from_millis(10 * slice);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        start.elapsed()
    });
    let start = Instant::now();
    let mut next = 0u64;
    let mut problems = 0u64;
    let mut out_of_order = 0u64;
    let deadline = Duration::from_secs(secs + 60);
    while next < total && start.elapsed() < deadline {
        match rx.blocking_recv() {
            Some(FollowItem::Items(items)) => {
                for it in &items {
                    match index_of(it) {
                        Some(k) if k == next => next += 1,
                        Some(_) => out_of_order += 1,
                        None => problems += 1,
                    }
                }
            }
            Some(FollowItem::Status(_)) => {}
            None => break,
        }
    }
    let done = start.elapsed();
    let wrote_in = writer.join().expect("writer");
    handle.stop();
    println!(
        "burst: {total} lines written at {rate}/s target in {:.2} s (achieved {:.0} lines/s); \
         {next} delivered in order in {:.2} s; {out_of_order} out of order/duplicate; \
         {problems} problems; {}",
        wrote_in.as_secs_f64(),
        total as f64 / wrote_in.as_secs_f64(),
        done.as_secs_f64(),
        if next == total && out_of_order == 0 && problems == 0 {
            "EXACT"
        } else {
            "MISMATCH"
        }
    );
}

/// The same burst through a live Unix-socket session with an eager consumer: every line must
/// arrive (a drop would be counted and reported).
fn live_burst(rate: u64, secs: u64) {
    use doxascope::trace::live::{ListenAddr, Live, LiveConfig, LiveEvent};
    use tokio::io::AsyncWriteExt;
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("live").join("s.sock");
        let (live, mut rx) = Live::new(LiveConfig::default());
        let _listener = live
            .listen(&ListenAddr::Unix(path.clone()))
            .await
            .expect("listen");
        let total = rate * secs;
        let per_slice = rate / 100;
        let writer = tokio::spawn(async move {
            let mut c = tokio::net::UnixStream::connect(&path)
                .await
                .expect("connect");
            let start = Instant::now();
            let mut i = 0u64;
            let mut slice = 0u64;
            let mut buf = String::new();
            while i < total {
                buf.clear();
                for _ in 0..per_slice.min(total - i) {
                    buf.push_str(&announce(i));
                    i += 1;
                }
                c.write_all(buf.as_bytes()).await.expect("write");
                slice += 1;
                let due = Duration::from_millis(10 * slice);
                if let Some(wait) = due.checked_sub(start.elapsed()) {
                    tokio::time::sleep(wait).await;
                }
            }
            start.elapsed()
        });
        let start = Instant::now();
        let (mut next, mut dropped, mut bad) = (0u64, 0u64, 0u64);
        while let Some(ev) = rx.recv().await {
            match ev {
                LiveEvent::Items { items, .. } => {
                    for it in &items {
                        match index_of(it) {
                            Some(k) if k == next => next += 1,
                            _ => bad += 1,
                        }
                    }
                }
                // Past the memory bound, the rest is in the spool file only.
                LiveEvent::Closed { spooled_only, .. } => {
                    dropped += spooled_only;
                    break;
                }
                _ => {}
            }
        }
        let wrote_in = writer.await.expect("writer");
        println!(
            "live unix-socket burst: {total} lines at {rate}/s target written in {:.2} s; \
             {next} delivered in order in {:.2} s; {dropped} kept only on disk; {bad} unexpected; {}",
            wrote_in.as_secs_f64(),
            start.elapsed().as_secs_f64(),
            if next == total && dropped == 0 && bad == 0 {
                "EXACT"
            } else {
                "MISMATCH"
            }
        );
    });
}

/// Throughput when the follower starts on a file that already holds `n` lines.
fn catch_up(n: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    let text: String = (0..n).map(announce).collect();
    std::fs::write(&path, &text).expect("write");
    let start = Instant::now();
    let (handle, mut rx) = Follower::spawn(&path, FollowConfig::default()).expect("spawn");
    let mut next = 0u64;
    while next < n {
        match rx.blocking_recv() {
            Some(FollowItem::Items(items)) => {
                next += items.iter().filter_map(index_of).count() as u64
            }
            Some(FollowItem::Status(_)) => {}
            None => break,
        }
    }
    let t = start.elapsed();
    handle.stop();
    println!(
        "catch-up: {n} lines ({:.1} MB) delivered in {:.2} s ({:.0} lines/s)",
        text.len() as f64 / 1e6,
        t.as_secs_f64(),
        n as f64 / t.as_secs_f64()
    );
}

fn main() {
    let secs = std::env::var("FOLLOW_BURST_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    latency(200, true);
    latency(40, false);
    catch_up(1_000_000);
    burst(100_000, secs);
    live_burst(100_000, secs.min(2));
}
