//! The cost of `history φ` on the generated 1,000,000-event trace (`gentrace --events 1000000
//! --seed 7`, eight sessions): the index of each session (its change points, Σ's size and
//! consistency after each, built once), then the history of a few formulas per session over
//! that index, and for scale a replay that asks the engine at every step of one session's
//! first steps with one incremental solver (the approach the index avoids).
//!
//! ```sh
//! cargo bench --bench history                      # generates the trace in memory
//! HISTORY_BENCH_FILE=/tmp/g.jsonl cargo bench --bench history   # or reads gentrace's file
//! HISTORY_BENCH_EVENTS=100000 cargo bench --bench history
//! ```
//!
//! Prints figures; asserts nothing about time.

use std::hint::black_box;
use std::time::{Duration, Instant};

use doxascope::logic::engine::{BeliefSpec, BeliefState};
use doxascope::logic::parse::parse;
use doxascope::model::Model;
use doxascope::model::history::HistoryIndex;
use doxascope::model::recompute::RecomputeOptions;
use doxascope::trace::generate::{GenConfig, write_mixed};

#[path = "support/proc.rs"]
mod proc;
use proc::{cpu_seconds, status_kib};

fn main() {
    let t0 = Instant::now();
    let model = match std::env::var("HISTORY_BENCH_FILE") {
        Ok(path) => match Model::load(&[path.as_str()]) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        },
        Err(_) => {
            let events: u64 = std::env::var("HISTORY_BENCH_EVENTS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(1_000_000);
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
            Model::from_bytes("gentrace.jsonl", &bytes)
        }
    };
    println!(
        "trace: {} events, {} sessions, loaded in {:.2} s",
        model.log().events.len(),
        model.timelines().len(),
        t0.elapsed().as_secs_f64()
    );
    let opts = RecomputeOptions {
        audit: None,
        ..RecomputeOptions::default()
    };
    let mut index_total = Duration::ZERO;
    let mut index_cpu = 0.0;
    let mut points_total = 0usize;
    let mut solves_total = 0u64;
    let mut queries: Vec<(Duration, u64, u64, usize, f64)> = Vec::new();
    let mut first_index = None;
    for tl in model.timelines() {
        let c0 = cpu_seconds();
        let t = Instant::now();
        let ix = HistoryIndex::build(tl, model.log(), &opts);
        let took = t.elapsed();
        index_cpu += cpu_seconds() - c0;
        index_total += took;
        let cost = ix.cost();
        points_total += cost.points;
        solves_total += cost.solves;
        let inconsistent = ix
            .points()
            .iter()
            .filter(|p| p.consistent == Ok(false))
            .count();
        println!(
            "  session {}: {} steps, {} beliefs, {} change points ({} with Σ inconsistent), \
             index {:.3} s, {} consistency solves",
            tl.name(),
            tl.len(),
            tl.beliefs().len(),
            cost.points,
            inconsistent,
            took.as_secs_f64(),
            cost.solves
        );
        // Questions: an atom, a literal, and formulas the session itself announced early,
        // midway and last.
        let mut phis: Vec<String> = vec!["p17".into(), "!p42".into()];
        let n = tl.beliefs().len();
        for k in [0, n / 2, n.saturating_sub(1)] {
            if let Some(v) = tl.belief(model.log(), k as u32) {
                phis.push(v.formula_text().to_string());
            }
        }
        for phi in phis {
            let Ok(f) = parse(&phi) else { continue };
            let c = cpu_seconds();
            let t = Instant::now();
            let h = black_box(ix.history(tl, model.log(), &f, None, &opts));
            queries.push((
                t.elapsed(),
                h.cost.checks,
                h.cost.supports,
                h.rows.len(),
                cpu_seconds() - c,
            ));
        }
        if first_index.is_none() {
            first_index = Some(ix);
        }
    }
    println!(
        "index, all sessions: {:.2} s wall, {:.2} s CPU, {} change points for {} events, {} \
         consistency solves",
        index_total.as_secs_f64(),
        index_cpu,
        points_total,
        model.log().events.len(),
        solves_total
    );
    if !queries.is_empty() {
        let total: Duration = queries.iter().map(|q| q.0).sum();
        let max = queries.iter().map(|q| q.0).max().unwrap_or_default();
        let checks: u64 = queries.iter().map(|q| q.1).sum();
        let supports: u64 = queries.iter().map(|q| q.2).sum();
        let rows: usize = queries.iter().map(|q| q.3).sum();
        let cpu: f64 = queries.iter().map(|q| q.4).sum();
        let cpu_max = queries.iter().map(|q| q.4).fold(0.0, f64::max);
        println!(
            "history over the index: {} questions, mean {:.3} s wall / {:.3} s CPU, max {:.3} s \
             wall / {:.3} s CPU; {} entailment checks and {} support searches in all ({} rows)",
            queries.len(),
            total.as_secs_f64() / queries.len() as f64,
            cpu / queries.len() as f64,
            max.as_secs_f64(),
            cpu_max,
            checks,
            supports,
            rows
        );
    }
    // For scale: the engine asked at every step of the first session's first steps, with
    // one incremental solver (add and retract as the replay says, then one `entails`).
    let Some(tl) = model.timelines().first() else {
        return;
    };
    let steps = tl.len().min(20_000);
    let phi = parse("p17").expect("p17");
    let mut st = BeliefState::new().expect("engine");
    let mut asked = 0u64;
    let mut at: std::collections::HashMap<u32, (Vec<u32>, Vec<u32>)> = Default::default();
    for (i, r) in tl.beliefs().iter().enumerate() {
        at.entry(r.announced).or_default().0.push(i as u32);
        if let Some(x) = r.retraction {
            at.entry(x.step).or_default().1.push(i as u32);
        }
    }
    let c0 = cpu_seconds();
    let t = Instant::now();
    for step in 1..=steps {
        if let Some((ins, outs)) = at.get(&step) {
            for &i in outs {
                let _ = st.retract(&tl.beliefs()[i as usize].id);
            }
            for &i in ins {
                if let Some(v) = tl.belief(model.log(), i)
                    && let Ok(f) = v.formula()
                {
                    let _ = st.add(BeliefSpec::new(v.id(), f).step(u64::from(step)));
                }
            }
        }
        let _ = black_box(st.entails(&phi));
        asked += 1;
    }
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - c0;
    let per_step = cpu / f64::from(steps.max(1));
    println!(
        "a solve per step (first {steps} steps of session {}, {asked} questions, one incremental \
         solver): {wall:.3} s wall / {cpu:.3} s CPU, {:.1} µs CPU per step; about {:.1} s per \
         question for the session's {} steps, {:.0} s for all {} events",
        tl.name(),
        per_step * 1e6,
        per_step * f64::from(tl.len()),
        tl.len(),
        per_step * model.log().events.len() as f64,
        model.log().events.len()
    );
    println!("peak RSS {} MiB", status_kib("VmHWM:") / 1024);
}
