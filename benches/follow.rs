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

fn main() {
    let secs = std::env::var("FOLLOW_BURST_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    latency(200, true);
    latency(40, false);
    burst(100_000, secs);
}
