//! Formula-language throughput: the million-atom flat chain (parse, print, drop), a
//! maximum-depth nesting, and grounding a transitivity axiom. Prints figures; run with
//! `cargo bench --bench parse`.

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

use doxascope::logic::formula::{Formula, MAX_DEPTH};
use doxascope::logic::ground::{constants, ground};
use doxascope::logic::parse::parse;
use doxascope::logic::print::to_ascii;

/// Runs `f` `runs` times and returns the fastest run (the least disturbed by other load on a
/// shared machine) and the last result.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed());
        out = Some(r);
    }
    match out {
        Some(r) => (best, r),
        None => panic!("runs must be positive"),
    }
}

fn main() {
    let n = 1_000_000;
    let chain = (1..=n)
        .map(|i| format!("a{i}"))
        .collect::<Vec<_>>()
        .join(" ∧ ");
    let (t, f) = best(5, || parse(black_box(&chain)).expect("chain parses"));
    let atoms = match &f {
        Formula::And(v) => v.len(),
        _ => 0,
    };
    assert_eq!(atoms, n);
    println!(
        "parse  {n}-atom ∧ chain ({:.1} MB): {:>8.1} ms  ({:.1} M atoms/s)",
        chain.len() as f64 / 1e6,
        t.as_secs_f64() * 1e3,
        n as f64 / t.as_secs_f64() / 1e6
    );
    let (t, s) = best(5, || f.to_string());
    assert_eq!(s, chain);
    println!(
        "print  Unicode:                      {:>8.1} ms",
        t.as_secs_f64() * 1e3
    );
    let (t, _) = best(5, || to_ascii(&f));
    println!(
        "print  ASCII:                        {:>8.1} ms",
        t.as_secs_f64() * 1e3
    );
    let (t, ()) = best(5, || drop(black_box(f.clone())));
    println!(
        "clone+drop the tree:                 {:>8.1} ms",
        t.as_secs_f64() * 1e3
    );

    let deep = format!(
        "{}p{}",
        "¬(a ∧ ".repeat(MAX_DEPTH / 2),
        ")".repeat(MAX_DEPTH / 2)
    );
    let (t, _) = best(20, || parse(black_box(&deep)).expect("within the limit"));
    println!(
        "parse  depth-{MAX_DEPTH} nesting:                {:>8.3} ms",
        t.as_secs_f64() * 1e3
    );
    let too_deep = "(".repeat(100_000) + "p" + &")".repeat(100_000);
    let (t, _) = best(20, || parse(black_box(&too_deep)).expect_err("too deep"));
    println!(
        "reject 100,000-deep parentheses:     {:>8.3} ms",
        t.as_secs_f64() * 1e3
    );

    let axiom = parse("∀x, y, z. Older(x, y) ∧ Older(y, z) → Older(x, z)").expect("axiom");
    let facts = (0..40)
        .map(|i| format!("Older(c{i}, c{})", i + 1))
        .collect::<Vec<_>>()
        .join(" ∧ ");
    let mut domain = BTreeSet::new();
    constants(&parse(&facts).expect("facts"), &mut domain);
    let domain: Vec<String> = domain.into_iter().collect();
    let (t, g) = best(5, || {
        ground(&axiom, &domain, 100_000).expect("under the cap")
    });
    println!(
        "ground transitivity over {} constants ({} nodes): {:.1} ms",
        domain.len(),
        g.size(),
        t.as_secs_f64() * 1e3
    );
}
