//! Minimal corrections against a truth table: every set found is a correction (what is left
//! is satisfiable with the hard part), minimal (putting back any one member makes it
//! unsatisfiable), and, when the enumeration says it is complete, every minimal correction a
//! brute force over all subsets finds is among them.

use std::time::Duration;

use doxascope::logic::engine::corrections::{minimal_corrections, satisfiable as solver_sat};
use doxascope::logic::formula::Formula;
use doxascope::logic::oracle::satisfiable;
use doxascope::logic::parse::parse;
use proptest::prelude::*;

fn formula() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0u8..4).prop_map(|i| format!("p{i}")),
        (0u8..4).prop_map(|i| format!("!p{i}")),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} & {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} | {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} -> {b})")),
        ]
    })
}

fn sat_with(hard: &[Formula], soft: &[Formula], keep: &[bool]) -> bool {
    let mut all: Vec<&Formula> = hard.iter().collect();
    all.extend(soft.iter().zip(keep).filter(|(_, k)| **k).map(|(f, _)| f));
    satisfiable(&all)
}

/// Every minimal correction by brute force: complements of the maximal satisfiable subsets.
fn brute(hard: &[Formula], soft: &[Formula]) -> Vec<Vec<usize>> {
    let n = soft.len();
    let sat: Vec<u32> = (0u32..(1 << n))
        .filter(|&m| {
            let keep: Vec<bool> = (0..n).map(|i| m >> i & 1 == 1).collect();
            sat_with(hard, soft, &keep)
        })
        .collect();
    let mut out: Vec<Vec<usize>> = sat
        .iter()
        .filter(|&&m| !sat.iter().any(|&o| o != m && o & m == m))
        .map(|&m| (0..n).filter(|&i| m >> i & 1 == 0).collect())
        .collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn corrections_are_exactly_the_minimal_ones(
        hard in proptest::collection::vec(formula(), 0..3),
        soft in proptest::collection::vec(formula(), 0..8),
    ) {
        let hard: Vec<Formula> = hard.iter().map(|f| parse(f).unwrap()).collect();
        let soft: Vec<Formula> = soft.iter().map(|f| parse(f).unwrap()).collect();
        let hr: Vec<&Formula> = hard.iter().collect();
        let sr: Vec<&Formula> = soft.iter().collect();
        let c = minimal_corrections(&hr, &sr, 1000, Duration::from_secs(20)).unwrap();
        prop_assert!(c.complete);
        let hard_sat = satisfiable(&hr);
        prop_assert_eq!(c.hard_inconsistent, !hard_sat);
        let all: Vec<&Formula> = hr.iter().chain(sr.iter()).copied().collect();
        prop_assert_eq!(solver_sat(&all, Duration::from_secs(20)).unwrap(), satisfiable(&all));
        if !hard_sat {
            prop_assert!(c.sets.is_empty());
            return Ok(());
        }
        for set in &c.sets {
            let keep: Vec<bool> = (0..soft.len()).map(|i| !set.contains(&i)).collect();
            prop_assert!(sat_with(&hard, &soft, &keep), "not a correction: {:?}", set);
            for &m in set {
                let mut back = keep.clone();
                back[m] = true;
                prop_assert!(!sat_with(&hard, &soft, &back), "not minimal: {:?}", set);
            }
        }
        let mut got = c.sets.clone();
        got.sort();
        let want = brute(&hard, &soft);
        prop_assert_eq!(got, want);
    }
}

/// The cap stops the enumeration early and says so; what it found is still minimal.
#[test]
fn the_cap_is_reported() {
    // x_i and ¬x_i for four atoms: 2^4 minimal corrections.
    let mut soft = Vec::new();
    for i in 0..4 {
        soft.push(parse(&format!("x{i}")).unwrap());
        soft.push(parse(&format!("!x{i}")).unwrap());
    }
    let sr: Vec<&Formula> = soft.iter().collect();
    let all = minimal_corrections(&[], &sr, 100, Duration::from_secs(20)).unwrap();
    assert!(all.complete);
    assert_eq!(all.sets.len(), 16);
    let some = minimal_corrections(&[], &sr, 3, Duration::from_secs(20)).unwrap();
    assert!(!some.complete);
    assert_eq!(some.sets.len(), 3);
    // The first keeps the earliest formulas: it gives up the negations.
    assert_eq!(some.sets[0], vec![1, 3, 5, 7]);
}
