//! Follow mode measured on the screen: the real binary in a real terminal (tmux, 200x60),
//! reading a file that this bench appends to, and the figures read back with `capture-pane`.
//! Where `benches/follow.rs` times the follower thread alone, this times what a user sees.
//!
//! 1. *Latency*: one line appended at a time (~20 ms apart); the time from the write until
//!    the header shows the new event count. Reports median, p95 (target <= 100 ms) and max.
//!    The figure includes one `capture-pane` round trip (a process spawn, a few ms), so it
//!    slightly overstates the true latency.
//! 2. *Burst*: 100,000 lines per second for 10 seconds, written in 10 ms slices. While it
//!    runs, `?` is pressed every half second and the time until the help overlay appears is
//!    recorded (the UI stays responsive if that stays small); afterwards the header's event
//!    count must equal the number of lines written.
//!
//! Run: `cargo bench --bench tui_follow`. `TUI_FOLLOW_BURST_SECS`, `TUI_FOLLOW_RATE` and
//! `TUI_FOLLOW_SAMPLES` change the burst length, the rate and the number of latency samples.
//! Skipped, with a message, when tmux is not installed.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "../tests/support/tmux.rs"]
mod tmux;
use tmux::{Tmux, event_count};

fn line(i: u64) -> String {
    format!(
        "{{\"kind\":\"announce\",\"seq\":{},\"id\":\"b{i}\",\"formula\":\"p{i} -> q{i}\",\"source\":\"user\"}}\n",
        i + 1
    )
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Polls the header until the count reaches `n` or `limit` passes.
fn wait_count(t: &Tmux, n: u64, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if event_count(&t.header()).is_some_and(|c| c >= n) {
            return Some(start.elapsed());
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn start(tag: &str, file: &Path) -> Tmux {
    let t = Tmux::new(tag);
    let cmd = format!("\"{}\" \"{}\"", tmux::bin(), file.display());
    t.start_sized(&cmd, 200, 60);
    let up = Instant::now();
    while !t.header().contains("doxascope") {
        assert!(
            up.elapsed() < Duration::from_secs(10),
            "the TUI did not start:\n{}",
            t.capture()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    t
}

fn latency(dir: &Path, samples: u64) {
    let path = dir.join("latency.jsonl");
    std::fs::write(&path, line(0)).expect("create");
    let t = start("lat", &path);
    wait_count(&t, 1, Duration::from_secs(10)).expect("first line on screen");
    let mut file = OpenOptions::new().append(true).open(&path).expect("open");
    let mut lat = Vec::new();
    let mut missed = 0;
    for i in 1..=samples {
        let began = Instant::now();
        file.write_all(line(i).as_bytes()).expect("write");
        match wait_count(&t, i + 1, Duration::from_secs(5)) {
            Some(_) => lat.push(began.elapsed()),
            None => missed += 1,
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    lat.sort();
    if lat.is_empty() {
        println!("latency: no line reached the screen within 5 s ({missed} missed)");
        return;
    }
    let p95 = percentile(&lat, 0.95);
    println!(
        "write -> on screen: {} lines, median {:.1} ms, p95 {:.1} ms, max {:.1} ms, {missed} not shown within 5 s",
        lat.len(),
        percentile(&lat, 0.5).as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3,
        lat[lat.len() - 1].as_secs_f64() * 1e3,
    );
    println!(
        "target p95 <= 100 ms: {}",
        if p95 <= Duration::from_millis(100) && missed == 0 {
            "met"
        } else {
            "NOT met"
        }
    );
}

fn burst(dir: &Path, secs: u64, rate: u64) {
    let path = dir.join("burst.jsonl");
    std::fs::write(&path, "").expect("create");
    let t = start("burst", &path);
    let total = secs * rate;
    let slice = Duration::from_millis(10);
    let per_slice = (rate / 100).max(1);
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || {
            let mut file = OpenOptions::new().append(true).open(&path).expect("open");
            let began = Instant::now();
            let mut written = 0u64;
            let mut buf = String::new();
            let mut k = 0u32;
            while written < total {
                buf.clear();
                let n = per_slice.min(total - written);
                for i in written..written + n {
                    buf.push_str(&line(i));
                }
                file.write_all(buf.as_bytes()).expect("write");
                written += n;
                k += 1;
                // Pace against the start so a slow slice does not lower the overall rate.
                let due = began + slice * k;
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            (written, began.elapsed())
        })
    };
    // Responsiveness while the burst runs: `?` opens the help overlay, `?` closes it.
    let mut key_lat = Vec::new();
    let mut unanswered = 0;
    while !writer.is_finished() {
        let began = Instant::now();
        t.keys(&["?"]);
        let mut shown = false;
        while began.elapsed() < Duration::from_secs(5) {
            if t.capture().contains("Shift-Tab") {
                shown = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if shown {
            key_lat.push(began.elapsed());
        } else {
            unanswered += 1;
        }
        t.keys(&["?"]);
        std::thread::sleep(Duration::from_millis(500));
    }
    let (written, took) = writer.join().expect("writer");
    let settle = Instant::now();
    let reached = wait_count(&t, written, Duration::from_secs(60));
    let shown = event_count(&t.header()).unwrap_or(0);
    println!(
        "burst: {written} lines in {:.2} s ({:.0} lines/s); screen caught up {} after the last write; header shows {shown} events",
        took.as_secs_f64(),
        written as f64 / took.as_secs_f64(),
        match reached {
            Some(d) => format!("{:.0} ms", d.as_secs_f64() * 1e3),
            None => format!("NOT within {:.0} s", settle.elapsed().as_secs_f64()),
        }
    );
    key_lat.sort();
    if key_lat.is_empty() {
        println!("during the burst: the help key was never answered ({unanswered} tries)");
    } else {
        println!(
            "during the burst: key -> help overlay on screen median {:.1} ms, max {:.1} ms over {} presses, {unanswered} unanswered within 5 s",
            percentile(&key_lat, 0.5).as_secs_f64() * 1e3,
            key_lat[key_lat.len() - 1].as_secs_f64() * 1e3,
            key_lat.len()
        );
    }
    println!(
        "event count equals lines written: {}",
        if shown == written { "yes" } else { "NO" }
    );
}

fn main() {
    if !Tmux::available() {
        println!("skipping tui_follow: tmux is not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    latency(dir.path(), env_or("TUI_FOLLOW_SAMPLES", 200));
    burst(
        dir.path(),
        env_or("TUI_FOLLOW_BURST_SECS", 10),
        env_or("TUI_FOLLOW_RATE", 100_000),
    );
}
