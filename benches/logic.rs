//! Logic-engine benchmark on the T1 classification workload (research notes §5).
//!
//! For each candidate clause Δ of `benches/data/trace_T1.txt` (1,000 atoms, 4,000 steps):
//! Θ(Σ, Δ) through the public `BeliefState` handle (solver thread, channels and all); a
//! NEWINFO Δ joins Σ as a retractable fact. Prints gate checks per second, the median and p90
//! per check, and the median `why` time over every ENTAILED step, and asserts the class counts
//! every backend of the research run produced (239 / 1,838 / 1,923).
//!
//! Run: `cargo bench --bench logic` (add `-- --quick` for the first 1,000 steps only,
//! `-- --no-why` to time the gate alone).

use std::time::{Duration, Instant};

use doxascope::logic::engine::{BeliefSpec, BeliefState, Limits, Outcome};
use doxascope::logic::formula::{Atom, Formula};

fn lit(n: i64) -> Formula {
    let a = Formula::Atom(Atom::Prop(format!("x{}", n.unsigned_abs())));
    if n < 0 { Formula::Not(Box::new(a)) } else { a }
}

fn load(path: &str) -> Vec<Formula> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| l.starts_with("w "))
        .map(|l| {
            let lits: Vec<Formula> = l
                .split_whitespace()
                .skip(2)
                .map(|t| t.parse::<i64>().expect("literal"))
                .take_while(|&n| n != 0)
                .map(lit)
                .collect();
            if lits.len() == 1 {
                lits.into_iter().next().expect("one literal")
            } else {
                Formula::Or(lits)
            }
        })
        .collect()
}

/// CPU time of the whole process (all threads) from /proc, for figures that survive a
/// machine shared with other jobs. `None` where /proc is unavailable.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(Duration::from_millis(ticks * 10))
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p) as usize]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let no_why = std::env::args().any(|a| a == "--no-why");
    let dir = env!("CARGO_MANIFEST_DIR");
    let mut steps = load(&format!("{dir}/benches/data/trace_T1.txt"));
    if quick {
        steps.truncate(1000);
    }
    let mut sigma = BeliefState::with_limits(Limits {
        timeout: Duration::from_secs(60),
        ..Limits::default()
    })
    .expect("engine");
    let (mut c, mut e, mut n) = (0, 0, 0);
    let mut check_times = Vec::with_capacity(steps.len());
    let mut why_times = Vec::new();
    let mut why_sizes = 0usize;
    let start = Instant::now();
    let cpu0 = cpu_time();
    let mut gate_total = Duration::ZERO;
    for (i, delta) in steps.iter().enumerate() {
        let t0 = Instant::now();
        let outcome = sigma.check(delta, None).expect("check").outcome;
        let dt = t0.elapsed();
        gate_total += dt;
        check_times.push(dt);
        match outcome {
            Outcome::Contradiction => c += 1,
            Outcome::Entailed => {
                e += 1;
                if no_why {
                    continue;
                }
                let t1 = Instant::now();
                let why = sigma.why(delta).expect("why");
                why_times.push(t1.elapsed());
                assert!(why.entailed);
                why_sizes += why.support.len();
            }
            _ => {
                n += 1;
                sigma
                    .add(BeliefSpec::new(format!("s{i}"), delta.clone()).step(i as u64))
                    .expect("add");
            }
        }
    }
    let total = start.elapsed();
    let cpu = cpu_time().zip(cpu0).map(|(a, b)| a.saturating_sub(b));
    let (solves, invalid) = sigma.stats().expect("stats");
    println!(
        "T1 steps: {}  contradiction {c}  entailed {e}  newinfo {n}",
        steps.len()
    );
    println!(
        "gate checks/s: {:.0}  (median {:?}, p90 {:?}, gate time {:.3}s, main solves {solves}, invalid cores replaced {invalid})",
        steps.len() as f64 / gate_total.as_secs_f64(),
        pct(&mut check_times, 0.5),
        pct(&mut check_times, 0.9),
        gate_total.as_secs_f64()
    );
    if !why_times.is_empty() {
        println!(
            "why: {} runs, median {:?}, p90 {:?}, avg support size {:.1}",
            why_times.len(),
            pct(&mut why_times, 0.5),
            pct(&mut why_times, 0.9),
            why_sizes as f64 / why_times.len() as f64
        );
    }
    println!(
        "total wall time (checks + adds + why): {:.3}s",
        total.as_secs_f64()
    );
    if let Some(cpu) = cpu {
        println!(
            "total CPU time: {:.3}s{}",
            cpu.as_secs_f64(),
            if no_why {
                format!(
                    " => {:.0} gate steps per CPU second (check + add)",
                    steps.len() as f64 / cpu.as_secs_f64()
                )
            } else {
                String::new()
            }
        );
    }
    if !quick {
        assert_eq!((c, e, n), (239, 1838, 1923), "T1 class counts");
    }
}
