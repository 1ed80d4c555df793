//! Model benchmarks (harness = false; prints figures).
//!
//! 1. Time travel: a generated 1,000,000-event trace is loaded (reader + replay), then Σ and
//!    the BDI state are computed at 100 random steps of random sessions; prints the median
//!    and maximum time per move (target: <= 50 ms) and the peak memory (VmHWM) against the
//!    file size (target: <= 2x).
//! 2. Recomputation: every session of a generated 100,000-event trace is recomputed with the
//!    solver (what `doxascope audit` runs); prints the time and the verify count.
//!
//! `cargo bench --bench model` (set `DOXASCOPE_BENCH_EVENTS` to change the trace size,
//! `DOXASCOPE_BENCH_ONLY=timetravel|recompute` to run one part).

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs::File;
use std::io::BufWriter;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use doxascope::model::{Model, RecomputeOptions};
use doxascope::trace::generate::{GenConfig, write_mixed};
use doxascope::trace::{ReaderConfig, TraceLog};

#[path = "support/proc.rs"]
mod proc;
use proc::{cpu_seconds, status_kib};

/// The system allocator, counting live heap bytes and their peak, so that the model's own
/// bytes are told apart from the allocator's slack (VmRSS counts both).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn count_up(n: usize) {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` with the same arguments; the counters do not
// affect the allocation.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_up(layout.size());
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            count_up(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn mib(bytes: usize) -> f64 {
    bytes as f64 / 1048576.0
}

/// Peak resident memory (VmHWM) in KiB.
fn vm_hwm_kib() -> u64 {
    status_kib("VmHWM:")
}

/// Current resident memory (VmRSS) in KiB.
fn vm_rss_kib() -> u64 {
    status_kib("VmRSS:")
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

fn time_travel(events: u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.jsonl");
    let bytes = {
        let f = File::create(&path).expect("create");
        write_mixed(
            BufWriter::new(f),
            &GenConfig {
                events,
                seed: 42,
                ..GenConfig::default()
            },
        )
        .expect("write")
    };
    let base = vm_hwm_kib();
    let t0 = Instant::now();
    let mut log = TraceLog::new();
    let f = File::open(&path).expect("open");
    log.read_from("big.jsonl", f, ReaderConfig::default())
        .expect("read");
    let read = t0.elapsed();
    let rss_log = vm_rss_kib();
    let heap_log = LIVE.load(Ordering::Relaxed);
    PEAK.store(heap_log, Ordering::Relaxed);
    let t1 = Instant::now();
    let model = Model::from_log(log);
    let replay = t1.elapsed();
    let heap_model = LIVE.load(Ordering::Relaxed);
    let heap_peak = PEAK.load(Ordering::Relaxed);
    let rss_model = vm_rss_kib();
    let peak = vm_hwm_kib();
    // Where the kept bytes go (lengths times element sizes; heap text in errors excluded).
    let tls = model.timelines();
    let sum =
        |f: &dyn Fn(&doxascope::model::Timeline) -> usize| -> usize { tls.iter().map(f).sum() };
    let parts = [
        ("events", sum(&|t| t.event_positions().len() * 4)),
        ("beliefs", sum(&|t| size_of_val(t.beliefs()))),
        ("errors", sum(&|t| size_of_val(t.errors()))),
        ("retracts", sum(&|t| size_of_val(t.retracts()))),
        ("revisions", sum(&|t| size_of_val(t.revisions()))),
        (
            "verifies+queries",
            sum(&|t| (t.verifies().len() + t.queries().len()) * 8),
        ),
        ("bdi upserts", sum(&|t| t.bdi_log().upserts.len() * 16)),
        (
            "bdi steps+postconditions",
            sum(&|t| (t.bdi_log().steps.len() + t.bdi_log().postconditions.len()) * 12),
        ),
    ];
    let parts: Vec<String> = parts
        .iter()
        .map(|(n, b)| format!("{n} {:.1}", mib(*b)))
        .collect();
    println!("  model's vectors (MiB): {}", parts.join(", "));
    let mut rng = Rng(7);
    let mut times: Vec<Duration> = Vec::new();
    let mut sizes = 0usize;
    for _ in 0..100 {
        let tls = model.timelines();
        let tl = &tls[rng.below(tls.len() as u64) as usize];
        let t = rng.below(tl.len() as u64 + 1) as u32;
        let start = Instant::now();
        let sigma = tl.sigma_at(model.log(), t);
        let bdi = model.bdi_at(tl.name(), t).expect("session");
        times.push(start.elapsed());
        sizes += sigma.len() + bdi.ground.len() + bdi.plans.len();
    }
    times.sort();
    let beliefs: usize = model.timelines().iter().map(|t| t.beliefs().len()).sum();
    println!(
        "time travel: {events} events, {} sessions, {beliefs} belief records, file {:.1} MiB",
        model.timelines().len(),
        bytes as f64 / 1048576.0
    );
    println!(
        "  load: read {:.2} s + replay {:.2} s",
        read.as_secs_f64(),
        replay.as_secs_f64()
    );
    println!(
        "  move to a random step (Σ + BDI), 100 moves: median {:.3} ms, max {:.3} ms \
         ({sizes} items returned)",
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3
    );
    println!(
        "  memory: VmHWM {:.1} MiB (before load {:.1} MiB) = {:.2}x the file size; \
         VmRSS after reading {:.1} MiB ({:.2}x), after the replay {:.1} MiB (model's own share \
         {:.1} MiB = {:.2}x the file size)",
        peak as f64 / 1024.0,
        base as f64 / 1024.0,
        peak as f64 * 1024.0 / bytes as f64,
        rss_log as f64 / 1024.0,
        rss_log as f64 * 1024.0 / bytes as f64,
        rss_model as f64 / 1024.0,
        (rss_model as f64 - rss_log as f64) / 1024.0,
        (rss_model as f64 - rss_log as f64) * 1024.0 / bytes as f64
    );
    println!(
        "  heap (counted): after reading {:.1} MiB; replay peak +{:.1} MiB, model kept +{:.1} MiB",
        mib(heap_log),
        mib(heap_peak.saturating_sub(heap_log)),
        mib(heap_model.saturating_sub(heap_log))
    );
}

fn recompute(events: u64) {
    let mut buf = Vec::new();
    write_mixed(
        &mut buf,
        &GenConfig {
            events,
            seed: 9,
            ..GenConfig::default()
        },
    )
    .expect("write");
    let model = Model::from_bytes("gen.jsonl", &buf);
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    let mut verifies = 0;
    let mut unknown = 0;
    for s in model.sessions() {
        let r = model
            .recompute(s, &RecomputeOptions::default())
            .expect("session");
        verifies += r.verifies.len();
        unknown += r.verifies.iter().filter(|v| v.result.is_err()).count();
    }
    println!(
        "recompute: {events} events, {verifies} verify events ({unknown} unknown): {:.2} s \
         wall, {:.2} s CPU (all threads)",
        start.elapsed().as_secs_f64(),
        cpu_seconds() - cpu0
    );
}

fn main() {
    let events = std::env::var("DOXASCOPE_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let only = std::env::var("DOXASCOPE_BENCH_ONLY").unwrap_or_default();
    // Time travel first: VmHWM is a process-wide peak, so nothing may run before it.
    if only != "recompute" {
        time_travel(events);
    }
    if only != "timetravel" {
        recompute(events / 10);
    }
}
