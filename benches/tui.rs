//! TUI frame costs. Prints figures; run with `cargo bench --bench tui`.
//!
//! - Building and drawing a frame at 200x60 with a 1,000,000-event trace loaded (one
//!   session, the worst case for Σ), at the newest step and while time-travelling (every
//!   frame at a different step, so no per-step result can be reused), unfiltered and with
//!   Σ filters (applying a new filter, which scans Σ over several frames, then at the newest
//!   step and time-travelling). The first frame after the load is reported on its own and
//!   is part of every worst. Target: ≤ 10 ms, every frame.
//! - The first frame for a 100,000-event file: open, read and index the first chunk, draw.
//!   The rest of the file loads in the background with a progress bar. Target: ≤ 300 ms.
//! - What handing the 1M-event session to the audit worker costs the UI thread (`R`): it
//!   goes in pieces, one per event-loop turn; the worst piece bounds the input latency.
//! - The same for the first REPL command on that session (the REPL worker's hand-over).
//! - A follow burst (announce-only, so Σ grows to a million beliefs), 1,000 lines per turn
//!   with a frame after each: the worst time the UI thread spends adding a turn's lines and
//!   drawing, which bounds key latency while following.

use std::hint::black_box;
use std::io::Read;
use std::time::{Duration, Instant};

use doxascope::trace::generate::{GenConfig, write_mixed};
use doxascope::trace::{Reader, ReaderConfig};
use doxascope::tui::app::{App, Pane, Purpose};
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::panes::sigma::SigmaFilter;
use doxascope::tui::repl_job::Msg;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::draw;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn trace(events: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let cfg = GenConfig {
        events,
        seed: 7,
        sessions: 1,
        atoms: 300,
    };
    write_mixed(&mut out, &cfg).expect("in-memory write");
    out
}

/// Frame times of a series: the first, the mean and the worst (the first included).
struct Frames {
    first: Duration,
    mean: Duration,
    worst: Duration,
    count: usize,
}

impl Frames {
    fn line(&self, what: &str) {
        println!(
            "{what}: first {:.2} ms, mean {:.2} ms, worst {:.2} ms ({} frames)",
            ms(self.first),
            ms(self.mean),
            ms(self.worst),
            self.count
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn frames(app: &mut App, n: usize, mut before: impl FnMut(&mut App, usize)) -> Frames {
    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("test backend");
    let mut total = Duration::ZERO;
    let mut worst = Duration::ZERO;
    let mut first = Duration::ZERO;
    for i in 0..n {
        before(app, i);
        app.dirty = true;
        let start = Instant::now();
        term.draw(|f| draw(f, app)).expect("draw");
        let d = start.elapsed();
        if i == 0 {
            first = d;
        }
        total += d;
        worst = worst.max(d);
    }
    black_box(term.backend().buffer().area);
    Frames {
        first,
        mean: total / n.max(1) as u32,
        worst,
        count: n,
    }
}

/// Applies a new Σ filter as the event loop does: frames are drawn while the pane says it
/// is still filtering (the scan goes in pieces), each timed.
fn apply_filter(app: &mut App, text: &str) -> Frames {
    app.panes.sigma.filter = SigmaFilter::parse(text);
    app.panes.sigma.sel = 0;
    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("test backend");
    let (mut total, mut worst, mut first, mut count) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO, 0usize);
    loop {
        app.dirty = false;
        let start = Instant::now();
        term.draw(|f| draw(f, app)).expect("draw");
        let d = start.elapsed();
        if count == 0 {
            first = d;
        }
        count += 1;
        total += d;
        worst = worst.max(d);
        // The pane asks for another frame while the filter is not complete.
        if !app.dirty || count > 100_000 {
            break;
        }
    }
    Frames {
        first,
        mean: total / count as u32,
        worst,
        count,
    }
}

/// One announce line of a follow burst (as `benches/tui_follow.rs` writes them).
fn announce_line(i: u64) -> String {
    format!(
        "{{\"kind\":\"announce\",\"seq\":{},\"id\":\"b{i}\",\"formula\":\"p{i} -> q{i}\",\"source\":\"user\"}}\n",
        i + 1
    )
}

/// A follow burst without the terminal: announce-only lines (Σ grows to a million active
/// beliefs) reach the store 1,000 per event-loop turn (100,000 lines/s at a turn per 10 ms),
/// and a 200x60 frame is drawn after every turn, as the view does while following. Parsing
/// is the follower thread's, so only adding to the store and drawing are timed: what the UI
/// thread spends per turn, which bounds how long a key waits.
/// One turn of the follow burst: `per_turn` new lines read, added to the model, and a frame
/// drawn; returns the time to add and the time to draw.
fn burst_turn(
    app: &mut App,
    reader: &mut Reader,
    term: &mut Terminal<TestBackend>,
    buf: &mut String,
    turn: u64,
    per_turn: u64,
) -> (Duration, Duration) {
    buf.clear();
    for i in turn * per_turn..(turn + 1) * per_turn {
        buf.push_str(&announce_line(i));
    }
    let mut items = Vec::new();
    reader.feed(buf.as_bytes(), &mut items);
    let t = Instant::now();
    app.store.extend(items);
    app.on_data();
    let added = t.elapsed();
    let t = Instant::now();
    term.draw(|f| draw(f, app)).expect("draw");
    (added, t.elapsed())
}

fn follow_burst(theme: &Theme) {
    const TURNS: u64 = 1_000;
    const PER_TURN: u64 = 1_000;
    let mut app = App::new(Store::new(), theme.clone());
    app.focus = Pane::Sigma;
    let mut reader = Reader::new("burst.jsonl", ReaderConfig::default());
    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("test backend");
    let (mut worst_add, mut worst_draw) = (Duration::ZERO, Duration::ZERO);
    let mut worst_at = 0;
    let mut late_draw = Duration::ZERO;
    let mut buf = String::new();
    for turn in 0..TURNS {
        let (added, drawn) = burst_turn(&mut app, &mut reader, &mut term, &mut buf, turn, PER_TURN);
        if added > worst_add {
            worst_add = added;
            worst_at = app.sess().map_or(0, |s| s.tl.beliefs().len());
        }
        worst_draw = worst_draw.max(drawn);
        if turn >= TURNS - 100 {
            late_draw += drawn;
        }
    }
    let beliefs = app.sess().map_or(0, |s| s.tl.beliefs().len());
    println!(
        "follow burst to {beliefs} active beliefs, {PER_TURN} lines per turn: worst add {:.1} ms (reaching {worst_at} beliefs), worst frame {:.1} ms, mean frame over the last 100 turns {:.2} ms",
        worst_add.as_secs_f64() * 1e3,
        worst_draw.as_secs_f64() * 1e3,
        late_draw.as_secs_f64() * 1e3 / 100.0
    );
    // The model's replay state grows its hash maps incrementally (no turn rehashes a
    // million entries): see `doxascope::model::timeline`.
    // A Σ filter on the million beliefs, then 100 more turns of the burst with it on: the
    // filter's index scans only the new records each turn.
    for text in ["status:active", "p12 status:active"] {
        apply_filter(&mut app, text).line(&format!(
            "  then the Σ filter {text:?} applied over {beliefs} beliefs"
        ));
    }
    let (mut worst_add, mut worst_draw, mut total) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for turn in TURNS..TURNS + 100 {
        let (added, drawn) = burst_turn(&mut app, &mut reader, &mut term, &mut buf, turn, PER_TURN);
        worst_add = worst_add.max(added);
        worst_draw = worst_draw.max(drawn);
        total += added + drawn;
    }
    println!(
        "  100 more turns with that filter on (a list of {} rows): add and draw mean {:.2} ms, worst add {:.2} ms, worst frame {:.2} ms",
        app.sigma_rows().len(),
        ms(total) / 100.0,
        ms(worst_add),
        ms(worst_draw)
    );
}

/// Belief records of the first session that ended (retracted or superseded).
fn app_retracted(store: &Store) -> usize {
    store.sessions.first().map_or(0, |s| s.ended.len())
}

fn main() {
    highlight::load_now();
    let theme = Theme::builtin("dark").expect("dark theme");

    let bytes = trace(1_000_000);
    let start = Instant::now();
    let store = Store::from_bytes("bench.jsonl", &bytes);
    let load = start.elapsed();
    let n = store.sessions.first().map_or(0, |s| s.len());
    println!(
        "1M-event trace: {} MB, read and indexed in {:.2} s ({} events in the session, {} beliefs)",
        bytes.len() / 1_000_000,
        load.as_secs_f64(),
        n,
        store.sessions.first().map_or(0, |s| s.tl.beliefs().len())
    );
    let retracted = app_retracted(&store);
    let mut app = App::new(store, theme.clone());
    println!("  ({retracted} belief records end by retraction or supersession)");
    let travel = |a: &mut App, i: usize| {
        a.view_mut().cursor = ((i as u64 * 7_919_993) % u64::from(n.max(1))) as u32;
    };
    let mut all_worst = Duration::ZERO;
    for focus in [Pane::Sigma, Pane::Timeline] {
        app.focus = focus;
        app.view_mut().follow = true;
        app.on_data();
        let f = frames(&mut app, 30, |_, _| {});
        f.line(&format!("frame 200x60, newest step, focus {focus:?}"));
        all_worst = all_worst.max(f.worst);
    }
    app.focus = Pane::Sigma;
    app.view_mut().follow = false;
    let f = frames(&mut app, 30, travel);
    f.line("frame 200x60, a different step every frame");
    all_worst = all_worst.max(f.worst);
    for text in [
        "status:active",
        "status:retracted",
        "p12",
        "role:rule source:user",
    ] {
        app.view_mut().follow = true;
        app.on_data();
        let f = apply_filter(&mut app, text);
        f.line(&format!(
            "frame 200x60, applying the Σ filter {text:?} (scanned in pieces)"
        ));
        all_worst = all_worst.max(f.worst);
        let f = frames(&mut app, 30, |_, _| {});
        f.line(&format!(
            "frame 200x60, filter {text:?} ({} rows), newest step",
            app.sigma_rows().len()
        ));
        all_worst = all_worst.max(f.worst);
        app.view_mut().follow = false;
        let f = frames(&mut app, 30, travel);
        f.line(&format!(
            "frame 200x60, filter {text:?}, a different step every frame"
        ));
        all_worst = all_worst.max(f.worst);
    }
    app.panes.sigma.filter = SigmaFilter::default();
    println!(
        "worst frame of all the above: {:.2} ms (target 10 ms)",
        ms(all_worst)
    );

    // What `R` costs the UI thread on this session: copying it for the audit worker (which
    // then keeps its own model and is sent only new lines), one piece per event-loop turn.
    let mut pieces = 0u32;
    let mut worst = Duration::ZERO;
    let start = Instant::now();
    loop {
        let t = Instant::now();
        let req = app.recompute_input(true);
        worst = worst.max(t.elapsed());
        pieces += 1;
        black_box(&req);
        if !app.handover_pending() {
            break;
        }
    }
    println!(
        "audit hand-over of the 1M-event session: {pieces} pieces, worst {:.1} ms on the UI thread, {:.0} ms in all",
        worst.as_secs_f64() * 1e3,
        start.elapsed().as_secs_f64() * 1e3
    );

    // What the first REPL command costs the UI thread on this session: the REPL worker keeps
    // its own model too, and is handed the session in pieces, one per event-loop turn, before
    // the command goes with the last one.
    app.queue_command("entails p0".into(), u64::from(n), Purpose::Prompt);
    let mut pieces = 0u32;
    let mut worst = Duration::ZERO;
    let start = Instant::now();
    loop {
        let t = Instant::now();
        let msg = app.repl_next();
        worst = worst.max(t.elapsed());
        pieces += 1;
        let done = matches!(msg, Some(Msg::Run(_)) | None);
        black_box(msg);
        if done {
            break;
        }
    }
    println!(
        "REPL hand-over of the 1M-event session: {pieces} pieces, worst {:.1} ms on the UI thread per loop turn, {:.0} ms in all",
        worst.as_secs_f64() * 1e3,
        start.elapsed().as_secs_f64() * 1e3
    );

    follow_burst(&theme);

    // First frame of a 100k-event file.
    let dir = std::env::temp_dir().join(format!("doxascope-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("100k.jsonl");
    std::fs::write(&path, trace(100_000)).expect("write trace");
    let start = Instant::now();
    let mut f = std::fs::File::open(&path).expect("open");
    let mut buf = vec![0u8; 256 * 1024];
    let got = f.read(&mut buf).expect("read");
    let mut reader = Reader::new("100k.jsonl", ReaderConfig::default());
    let mut items = Vec::new();
    reader.feed(&buf[..got], &mut items);
    let mut store = Store::new();
    store.extend(items);
    let mut app = App::new(store, theme.clone());
    app.loading = Some((got as u64, std::fs::metadata(&path).map_or(0, |m| m.len())));
    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("test backend");
    term.draw(|fr| draw(fr, &mut app)).expect("draw");
    let first = start.elapsed();
    println!(
        "first frame, 100k-event file: {:.1} ms (first chunk: {} events shown, loading continues)",
        first.as_secs_f64() * 1e3,
        app.sess().map_or(0, |s| s.len())
    );
    let start = Instant::now();
    let mut rest = Vec::new();
    f.read_to_end(&mut rest).expect("read");
    let mut items = Vec::new();
    reader.feed(&rest, &mut items);
    reader.finish(&mut items);
    app.store.extend(items);
    app.on_data();
    term.draw(|fr| draw(fr, &mut app)).expect("draw");
    println!(
        "rest of the 100k-event file read, indexed and drawn in {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    let _ = std::fs::remove_dir_all(&dir);
}
