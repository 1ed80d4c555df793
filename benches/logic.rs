//! Logic-engine benchmark on the T1 classification workload (research notes §5).
//!
//! For each candidate clause Δ of `benches/data/trace_T1.txt` (1,000 atoms, 4,000 steps):
//! Θ(Σ, Δ) through the public `BeliefState` handle, exactly as the TUI, the audit and the REPL
//! call it (the state runs on the calling thread; no special path for the benchmark); a
//! NEWINFO Δ joins Σ as a retractable fact. Prints gate checks per second, the median and p90
//! per check, and the median `why` time over every ENTAILED step, and asserts the class counts
//! every backend of the research run produced (239 / 1,838 / 1,923).
//!
//! Run: `cargo bench --bench logic` (add `-- --quick` for the first 1,000 steps only,
//! `-- --no-why` to time the gate alone, `-- --gate-only` to stop after the gate run,
//! `-- --batch-only` for the batched run alone).

use std::time::{Duration, Instant};

use doxascope::logic::engine::{BeliefSpec, BeliefState, Limits, Outcome, Role};
use doxascope::logic::formula::{Atom, Formula};
use doxascope::logic::revise::Policy;

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
    if std::env::args().any(|a| a == "--revise-only") {
        revise_r1(quick);
        return;
    }
    if std::env::args().any(|a| a == "--batch-only") {
        batched(&steps, quick);
        return;
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
    if std::env::args().any(|a| a == "--gate-only") {
        return;
    }
    batched(&steps, quick);
    revise_r1(quick);
    chain(if quick { 100_000 } else { 1_000_000 });
}

/// A flat conjunction of `n` atoms: added as one belief, then one gate check and one `why`.
fn chain(n: usize) {
    let f = Formula::And(
        (0..n)
            .map(|i| Formula::Atom(Atom::Prop(format!("c{i}"))))
            .collect(),
    );
    let last = Formula::Atom(Atom::Prop(format!("c{}", n - 1)));
    let mut sigma = BeliefState::with_limits(Limits {
        timeout: Duration::from_secs(120),
        ..Limits::default()
    })
    .expect("engine");
    let t0 = Instant::now();
    sigma.add(BeliefSpec::new("chain", f)).expect("add chain");
    let add = t0.elapsed();
    let t1 = Instant::now();
    let out = sigma.check(&last, None).expect("check").outcome;
    let check = t1.elapsed();
    assert_eq!(out, Outcome::Entailed);
    let t2 = Instant::now();
    let why = sigma.why(&last).expect("why");
    assert_eq!(why.support.len(), 1);
    println!(
        "flat ∧ chain of {n}: add {:.3}s, gate check {:?}, why {:?}",
        add.as_secs_f64(),
        check,
        t2.elapsed()
    );
}

/// Revision workload R1 (research notes §3: 300 atoms, 3,000 steps; unit clauses are
/// retractable commitments, the others fixed rules), announced one by one under `greedy`.
/// A rule contradicting the rules is refused up front. Reports revisions, how many needed
/// the recency fallback, and how many varisat cores failed validation and were replaced.
fn revise_r1(quick: bool) {
    let dir = env!("CARGO_MANIFEST_DIR");
    let mut steps = load(&format!("{dir}/benches/data/trace_R1.txt"));
    if quick {
        steps.truncate(500);
    }
    let mut sigma = BeliefState::with_limits(Limits {
        timeout: Duration::from_secs(60),
        ..Limits::default()
    })
    .expect("engine");
    let (mut revisions, mut fallbacks, mut retracted, mut refused) = (0, 0, 0, 0);
    let mut times = Vec::new();
    let t0 = Instant::now();
    for (i, f) in steps.iter().enumerate() {
        let role = if matches!(f, Formula::Or(_)) {
            Role::Rule
        } else {
            Role::Fact
        };
        let spec = BeliefSpec::new(format!("r{i}"), f.clone())
            .role(role)
            .step(i as u64);
        let t = Instant::now();
        match sigma.announce(spec, Policy::Greedy) {
            Ok(rev) => {
                if rev.outcome == Outcome::Contradiction {
                    if rev.applied {
                        revisions += 1;
                        times.push(t.elapsed());
                    } else {
                        refused += 1;
                    }
                    fallbacks += usize::from(rev.fallback);
                    retracted += rev.retracted.len();
                }
            }
            Err(e) => panic!("announce r{i}: {e}"),
        }
    }
    let total = t0.elapsed();
    assert!(sigma.consistent().expect("consistent").consistent);
    let (_, invalid) = sigma.stats().expect("stats");
    println!(
        "R1 greedy: {} steps in {:.3}s, {revisions} revisions ({fallbacks} needed the recency fallback), {retracted} retracted, {refused} refused, kept {}, invalid cores replaced {invalid}, median {:?} per revision",
        steps.len(),
        total.as_secs_f64(),
        sigma.beliefs().count(),
        if times.is_empty() {
            Duration::ZERO
        } else {
            pct(&mut times, 0.5)
        }
    );
}

/// The same workload as one `announce_many` request under the `reject` policy (a replay's
/// access pattern): a contradicting Δ is refused, anything else joins Σ. An entailed Δ joining
/// Σ does not change its models, so the classes are the same as above.
fn batched(steps: &[Formula], quick: bool) {
    let mut sigma = BeliefState::with_limits(Limits {
        timeout: Duration::from_secs(120),
        ..Limits::default()
    })
    .expect("engine");
    let specs: Vec<BeliefSpec> = steps
        .iter()
        .enumerate()
        .map(|(i, d)| BeliefSpec::new(format!("s{i}"), d.clone()).step(i as u64))
        .collect();
    let cpu0 = cpu_time();
    let t0 = Instant::now();
    let out = sigma.announce_many(specs, Policy::Reject).expect("batch");
    let dt = t0.elapsed();
    let cpu = cpu_time().zip(cpu0).map(|(a, b)| a.saturating_sub(b));
    let (mut c, mut e, mut n) = (0, 0, 0);
    for r in &out {
        match r.as_ref().expect("announce").outcome {
            Outcome::Contradiction => c += 1,
            Outcome::Entailed => e += 1,
            _ => n += 1,
        }
    }
    println!(
        "batched announce (one request, policy reject): {} steps in {:.3}s wall => {:.0} gate checks/s{}",
        steps.len(),
        dt.as_secs_f64(),
        steps.len() as f64 / dt.as_secs_f64(),
        cpu.map_or(String::new(), |c| format!(
            " ({:.0} per CPU second)",
            steps.len() as f64 / c.as_secs_f64()
        ))
    );
    if !quick {
        assert_eq!((c, e, n), (239, 1838, 1923), "T1 class counts (batched)");
    }
}
