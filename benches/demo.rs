//! Demo throughput: scripting dialogues, the baseline, the solver run (one engine per
//! dialogue, GreedySAT), writing the trace, and the event stream a viewer plays.
//!
//! Run: `cargo bench --bench demo`. Prints figures; takes a few seconds.

use std::hint::black_box;
use std::time::Instant;

use doxascope::demo::run::{Dialogue, baseline, solver};
use doxascope::demo::{DemoConfig, DemoEvents, Schedule, write_trace};

fn main() {
    let n = 1000;
    for schedule in [Schedule::Random, Schedule::Stress] {
        let cfg = DemoConfig {
            schedule,
            ..DemoConfig::default()
        };
        let t = Instant::now();
        let dialogues: Vec<Dialogue> = (0..n).map(|i| Dialogue::script(&cfg, i)).collect();
        let script = t.elapsed();
        let t = Instant::now();
        let inconsistent = dialogues.iter().filter(|d| !baseline(d).consistent).count();
        let base = t.elapsed();
        let t = Instant::now();
        let mut retractions = 0;
        for d in &dialogues {
            match solver(d, cfg.policy) {
                Ok(r) => retractions += r.summary.retractions,
                Err(e) => {
                    eprintln!("engine failed: {e}");
                    return;
                }
            }
        }
        let solve = t.elapsed();
        println!(
            "{:<6} {n} dialogues x {} turns: script {:>7.1} us/dialogue, baseline {:>7.1} us/dialogue \
             ({inconsistent} inconsistent), solver {:>8.1} us/dialogue ({retractions} retractions)",
            schedule.as_str(),
            cfg.turns,
            script.as_secs_f64() * 1e6 / n as f64,
            base.as_secs_f64() * 1e6 / n as f64,
            solve.as_secs_f64() * 1e6 / n as f64,
        );
    }
    let cfg = DemoConfig::default();
    let mut buf = Vec::new();
    let t = Instant::now();
    let lines = match write_trace(&cfg, n, &mut buf) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("trace failed: {e}");
            return;
        }
    };
    let w = t.elapsed();
    println!(
        "headless trace: {n} dialogues, {lines} events, {} bytes in {:.3} s ({:.0} events/s)",
        buf.len(),
        w.as_secs_f64(),
        lines as f64 / w.as_secs_f64()
    );
    let t = Instant::now();
    let count = DemoEvents::new(cfg, n).map(black_box).count();
    let s = t.elapsed();
    println!(
        "event stream (reader included): {count} events in {:.3} s ({:.0} events/s)",
        s.as_secs_f64(),
        count as f64 / s.as_secs_f64()
    );
}
