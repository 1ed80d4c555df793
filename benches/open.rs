//! Opening a large trace file in the viewer and time-travelling in it. Prints figures; run
//! with `cargo bench --bench open -- FILE` (`scripts/bench_open.sh` passes its 10M-event
//! trace), or without a file to generate 1,000,000 events (`BENCH_EVENTS=N` for another
//! size) with `--seed 7`.
//!
//! - The load runs the viewer's loader code on one thread: the file is registered with the
//!   store (its events stay in it) and read with [`read_all_briefs`] in batches of 4,096 items,
//!   each added with [`Store::extend_briefs`], as the background loader and the event loop do (the
//!   binary overlaps the two on two threads; here they take turns, so the time is the CPU
//!   both spend). Reported: wall and CPU time, the store's columns, peak RSS against the
//!   file size.
//! - Time travel: frames of 200x60 drawn at random steps of the largest session (a seeded
//!   generator), each after moving the cursor there and trimming the store's decoded events
//!   as the event loop does between frames: the time from the move to the drawn frame, mean
//!   and worst, with Σ focused and with the timeline focused. Target: ≤ 50 ms.

use std::fs::File;
use std::time::{Duration, Instant};

use doxascope::trace::generate::{GenConfig, write_mixed};
use doxascope::trace::{BriefItem, ReaderConfig, read_all_briefs};
use doxascope::tui::app::{App, Pane};
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::draw;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

#[path = "support/proc.rs"]
mod proc;
use proc::{cpu_seconds, status_kib};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    highlight::load_now();
    let theme = Theme::builtin("dark").expect("dark theme");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = match std::env::args().skip(1).find(|a| !a.starts_with("--")) {
        Some(p) => std::path::PathBuf::from(p),
        None => {
            let events = std::env::var("BENCH_EVENTS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1_000_000);
            let p = dir.path().join("open.jsonl");
            let f = std::io::BufWriter::new(File::create(&p).expect("create"));
            let cfg = GenConfig {
                events,
                seed: 7,
                ..GenConfig::default()
            };
            write_mixed(f, &cfg).expect("generate");
            p
        }
    };
    let size = std::fs::metadata(&path).expect("stat").len();
    let name = path.to_string_lossy().into_owned();
    let cfg = ReaderConfig::default();

    let (cpu0, start) = (cpu_seconds(), Instant::now());
    let mut store = Store::new();
    let file = File::open(&path).expect("open");
    store.add_source(&name, file.try_clone().expect("dup"), cfg);
    let mut batch: Vec<BriefItem> = Vec::with_capacity(4096);
    read_all_briefs(&name, file, cfg, |it| {
        batch.push(it);
        if batch.len() >= 4096 {
            store.extend_briefs(std::mem::replace(&mut batch, Vec::with_capacity(4096)));
        }
    })
    .expect("read");
    store.extend_briefs(batch);
    let (load, cpu) = (start.elapsed(), cpu_seconds() - cpu0);
    let events = store.log.events.len();
    let hwm = status_kib("VmHWM:") as f64 * 1024.0;
    println!(
        "load: {events} events, {:.0} MiB file, {:.2} s wall, {cpu:.2} s CPU ({:.2} µs CPU/event); \
         store columns {:.0} MiB; peak RSS {:.0} MiB = {:.2}x file",
        size as f64 / 1048576.0,
        load.as_secs_f64(),
        cpu / events.max(1) as f64 * 1e6,
        store.log.events.heap_bytes() as f64 / 1048576.0,
        hwm / 1048576.0,
        hwm / size.max(1) as f64
    );

    let (session, n) = store
        .sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (i, s.len()))
        .max_by_key(|&(_, n)| n)
        .unwrap_or((0, 0));
    let mut app = App::new(store, theme);
    app.show_session(session);
    app.view_mut().follow = false;
    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("test backend");
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for focus in [Pane::Sigma, Pane::Timeline] {
        app.focus = focus;
        let (mut total, mut worst) = (Duration::ZERO, Duration::ZERO);
        let (frames, mut first) = (200u32, None);
        for _ in 0..frames {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let t = Instant::now();
            app.view_mut().cursor = (rng % u64::from(n.max(1))) as u32;
            app.store.trim();
            app.dirty = true;
            term.draw(|f| draw(f, &mut app)).expect("draw");
            let d = t.elapsed();
            total += d;
            worst = worst.max(d);
            first.get_or_insert(d);
        }
        // The first frame of a focus draws panes not drawn before; it is said apart so that a
        // slow worst frame can be told from a slow steady state.
        println!(
            "time travel to a random step of {n} (focus {focus:?}): mean {:.2} ms, worst {:.2} ms \
             (first {:.2} ms) over {frames} frames (target 50 ms)",
            ms(total / frames),
            ms(worst),
            ms(first.unwrap_or_default())
        );
    }
    println!(
        "decoded events pinned at the end: {}",
        app.store.log.events.pinned()
    );
}
