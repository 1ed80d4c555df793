//! Reader benchmark: generate (or take) a large mixed trace, read and index it, print
//! events/s and memory.
//!
//! ```sh
//! cargo bench --bench read                 # generates 1,000,000 events in a temp dir
//! cargo bench --bench read -- FILE.jsonl   # reads an existing trace
//! BENCH_EVENTS=200000 cargo bench --bench read
//! ```
//!
//! Two passes over the same file:
//! 1. *stream*: read and decode every line, count events, keep nothing (what `validate`
//!    does); measures decoding speed alone.
//! 2. *read+index*: read into a [`TraceLog`] that keeps every event and indexes it (what the
//!    viewer does), decoding on all cores. Memory is reported as the growth of peak RSS (VmHWM) over the pass,
//!    because the generator and the first pass have already raised the process's peak, and
//!    as the total peak at the end.
//!
//! A third, untimed pass repeats the read with heap accounting switched on, to split the live
//! heap into its parts. Accounting stays off while timing: it is one shared counter updated on
//! every allocation from every decoding thread, a cost the `doxascope` binary does not have.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fs::File;
use std::io::{BufWriter, Read};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use doxascope::trace::generate::{GenConfig, write_mixed};
use doxascope::trace::{Item, Reader, ReaderConfig, TraceLog};

#[path = "support/proc.rs"]
mod proc;
use proc::{cpu_seconds, status_kib};

/// Counts live heap bytes, to split memory into "events vector" and "other heap".
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Whether [`LIVE`] is kept; read on every allocation, written only between passes.
static COUNTING: AtomicBool = AtomicBool::new(false);

// SAFETY: forwards to the system allocator unchanged; only adds bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(l.size(), Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(new, Ordering::Relaxed);
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let arg = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let dir = tempfile::tempdir().expect("temp dir");
    let path = match arg {
        Some(p) => std::path::PathBuf::from(p),
        None => {
            let events = std::env::var("BENCH_EVENTS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1_000_000);
            let path = dir.path().join("mixed.jsonl");
            let t = Instant::now();
            let f = BufWriter::new(File::create(&path).expect("create trace"));
            write_mixed(
                f,
                &GenConfig {
                    events,
                    seed: 7,
                    ..GenConfig::default()
                },
            )
            .expect("write trace");
            println!(
                "generated {events} events in {:.2} s",
                t.elapsed().as_secs_f64()
            );
            path
        }
    };
    println!(
        "size_of: Event {} B, Body {} B",
        std::mem::size_of::<doxascope::trace::Event>(),
        std::mem::size_of::<doxascope::trace::Body>()
    );
    // Wall-clock figures on a shared machine mean little without the load they ran under.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "machine:     {} cores available; load average {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let bytes = std::fs::metadata(&path).expect("trace metadata").len();
    let name = path.to_string_lossy().into_owned();
    println!("file: {name} ({:.1} MiB)", bytes as f64 / 1048576.0);

    // Pass 1: stream.
    let t = Instant::now();
    let cpu = cpu_seconds();
    let mut f = File::open(&path).expect("open trace");
    let mut reader = Reader::new(&name, ReaderConfig::default());
    let mut buf = vec![0u8; 1 << 20];
    let mut items = Vec::new();
    let (mut events, mut problems) = (0u64, 0u64);
    loop {
        let n = f.read(&mut buf).expect("read trace");
        if n == 0 {
            reader.finish(&mut items);
        } else {
            reader.feed(&buf[..n], &mut items);
        }
        for it in items.drain(..) {
            match it {
                Item::Event(_) => events += 1,
                Item::Problem(_) => problems += 1,
            }
        }
        if n == 0 {
            break;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    println!(
        "stream:      {events} events, {problems} problems in {secs:.3} s wall = {:.0} events/s, \
         {:.0} MiB/s; {cpu:.2} s CPU = {:.0} events/CPU-s",
        events as f64 / secs,
        bytes as f64 / 1048576.0 / secs,
        events as f64 / cpu.max(0.01)
    );

    // Pass 2: read + index, keeping everything.
    let rss_before = status_kib("VmRSS:");
    let hwm_before = status_kib("VmHWM:");
    let t = Instant::now();
    let cpu = cpu_seconds();
    let log = read_log(&name, &path);
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    let hwm_after = status_kib("VmHWM:");
    let rss_after = status_kib("VmRSS:");
    let n = log.events.len() as f64;
    println!(
        "read+index:  {} events, {} problems, {} sessions in {secs:.3} s wall = {:.0} events/s; \
         {cpu:.2} s CPU = {:.0} events/CPU-s",
        log.events.len(),
        log.problems.len(),
        log.index.sessions().count(),
        n / secs,
        n / cpu.max(0.01)
    );
    let file_mib = bytes as f64 / 1048576.0;
    let growth = hwm_after.saturating_sub(hwm_before.max(rss_before)) as f64 / 1024.0;
    println!(
        "memory:      RSS {:.1} -> {:.1} MiB; peak growth during read+index {growth:.1} MiB = {:.2}x file; \
         process peak {:.1} MiB = {:.2}x file",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        growth / file_mib,
        hwm_after as f64 / 1024.0,
        hwm_after as f64 / 1024.0 / file_mib
    );
    let (events, index, problems) = (
        log.events.heap_bytes(),
        // The index holds counts only.
        0usize,
        log.problems.capacity() * std::mem::size_of::<doxascope::trace::Problem>(),
    );
    drop(log);

    // Pass 3 (untimed): the same read with heap accounting on. Only the bytes allocated
    // during the pass and still live after it are counted, so frees of earlier blocks do not
    // disturb the figure.
    COUNTING.store(true, Ordering::Relaxed);
    let live_before = LIVE.load(Ordering::Relaxed);
    let log = read_log(&name, &path);
    let live = (LIVE.load(Ordering::Relaxed).wrapping_sub(live_before) as isize).max(0) as usize;
    COUNTING.store(false, Ordering::Relaxed);
    let mib = |b: usize| b as f64 / 1048576.0;
    let (live, vec, index, problems) = (mib(live), mib(events), mib(index), mib(problems));
    println!(
        "heap:        live {live:.1} MiB after read+index: event store columns {vec:.1} MiB, \
         index >= {index:.1} MiB, problems {problems:.1} MiB, bodies/strings/other {:.1} MiB \
         ({:.0} B per event)",
        live - vec - index - problems,
        (live - vec - index - problems) * 1048576.0 / n.max(1.0)
    );
    std::hint::black_box(&log);
}

/// Reads and indexes the whole trace at `path`, as the viewer does.
fn read_log(name: &str, path: &std::path::Path) -> TraceLog {
    let mut log = TraceLog::new();
    let _ = name;
    // As the viewer and `Model::load` do: the events stay in the file.
    log.read_file(path, ReaderConfig::default())
        .expect("read trace");
    log
}
