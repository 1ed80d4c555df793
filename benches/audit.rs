//! Auditing a generated 100,000-event trace holding at least 10,000 `verify` events (target:
//! at most 2 s for the audit, replay included). Prints figures; run with
//! `cargo bench --bench audit`. `AUDIT_BENCH_EVENTS=N` changes the size, `AUDIT_BENCH_RUNS=N`
//! the number of runs (best of N is reported).
//!
//! Wall time depends on what else the machine runs, so the CPU time of the whole process
//! (every thread) is printed next to it: on an idle machine with `cores` cores the audit's
//! wall time approaches CPU / cores for the parallel part.

use std::hint::black_box;
use std::time::{Duration, Instant};

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Severity, audit, audit_recomputed};
use doxascope::trace::generate::{GenConfig, write_mixed};

#[path = "support/proc.rs"]
mod proc;
use proc::cpu_seconds;

fn main() {
    let events: u64 = std::env::var("AUDIT_BENCH_EVENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let cfg = GenConfig {
        events,
        seed: 7,
        ..GenConfig::default()
    };
    let mut bytes = Vec::new();
    if let Err(e) = write_mixed(&mut bytes, &cfg) {
        eprintln!("generator failed: {e}");
        std::process::exit(1);
    }
    println!(
        "trace: {} events, {} bytes, {} sessions",
        cfg.events,
        bytes.len(),
        cfg.sessions
    );

    let runs: usize = std::env::var("AUDIT_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3)
        .max(1);
    let mut best = Duration::MAX;
    let mut best_load = Duration::MAX;
    let mut best_cpu = f64::MAX;
    let mut last = None;
    for _ in 0..runs {
        let c0 = cpu_seconds();
        let t0 = Instant::now();
        let model = Model::from_bytes("bench.jsonl", &bytes);
        let t1 = Instant::now();
        let report = audit(&model, &AuditOptions::default());
        let t2 = Instant::now();
        best_load = best_load.min(t1 - t0);
        best = best.min(t2 - t0);
        best_cpu = best_cpu.min(cpu_seconds() - c0);
        last = Some(black_box(report));
    }
    let Some(report) = last else { return };
    // The model's solver pass alone (sequential, all sessions), and the audit's own checks
    // on top of it.
    let model = Model::from_bytes("bench.jsonl", &bytes);
    let c0 = cpu_seconds();
    let t0 = Instant::now();
    let rcs: Vec<_> = model
        .timelines()
        .iter()
        .filter_map(|tl| model.recompute(tl.name(), &AuditOptions::default().recompute))
        .collect();
    let t1 = Instant::now();
    let c1 = cpu_seconds();
    black_box(audit_recomputed(&model, &rcs, &AuditOptions::default()));
    println!(
        "split: the model's recomputation pass {:.3} s wall / {:.2} s CPU (sequential), the \
         audit's checks {:.3} s wall / {:.2} s CPU",
        (t1 - t0).as_secs_f64(),
        c1 - c0,
        t1.elapsed().as_secs_f64(),
        cpu_seconds() - c1
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "audit (replay + recompute + checks): best of {runs} {:.3} s wall, {:.2} s CPU on \
         {cores} cores (replay alone {:.3} s)",
        best.as_secs_f64(),
        best_cpu,
        best_load.as_secs_f64()
    );
    println!(
        "verify events: {} seen, {} recomputed; findings: {} ({} errors, {} warnings, {} notes)",
        report.verifies,
        report.recomputed,
        report.findings.len(),
        report.count(Severity::Error),
        report.count(Severity::Warning),
        report.count(Severity::Info)
    );
    for (code, n) in report.by_code() {
        println!("  {code}: {n}");
    }
    let target = Duration::from_secs(2);
    println!(
        "target <= 2 s for 100,000 events with >= 10,000 verify: {}",
        if best <= target && report.verifies >= 10_000 {
            "met"
        } else {
            "NOT met"
        }
    );
}
