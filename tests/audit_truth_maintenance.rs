//! Truth maintenance against a brute-force oracle: on random small traces, the audit reports
//! `unsupported-derivation` for exactly the derived beliefs that are still in Σ after some of
//! the premises they cited left it, while Σ is consistent and nothing else in Σ entails them
//! (truth tables over at most four atoms), at the event that settles the retractions.

use std::collections::{BTreeMap, BTreeSet};

use doxascope::logic::formula::{Atom, Formula};
use doxascope::logic::ground;
use doxascope::logic::parse::parse;
use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, audit};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// id, formula, role (0, 1: fact; 2: assumption; 3: rule), cited ids.
    Announce(u8, String, u8, Vec<u8>),
    Retract(u8),
    Revise(u8),
    Log,
}

fn formula() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0u8..4).prop_map(|i| format!("p{i}")),
        (0u8..4).prop_map(|i| format!("!p{i}")),
    ];
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} & {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} | {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} -> {b})")),
        ]
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u8..6, formula(), 0u8..4, proptest::collection::vec(0u8..6, 0..3))
            .prop_map(|(i, f, r, b)| Op::Announce(i, f, r, b)),
        3 => (0u8..6).prop_map(Op::Retract),
        1 => (0u8..6).prop_map(Op::Revise),
        1 => Just(Op::Log),
    ]
}

fn sat(fs: &[&Formula]) -> bool {
    let mut atoms = BTreeSet::new();
    for f in fs {
        ground::atoms(f, &mut atoms);
    }
    let atoms: Vec<Atom> = atoms.into_iter().collect();
    (0u32..(1 << atoms.len())).any(|bits| {
        let assign = |a: &Atom| {
            atoms
                .iter()
                .position(|x| x == a)
                .is_some_and(|i| bits >> i & 1 == 1)
        };
        fs.iter().all(|f| ground::eval(f, &assign))
    })
}

fn entails(sigma: &[&Formula], phi: &Formula) -> bool {
    let not = Formula::Not(Box::new(phi.clone()));
    let mut all: Vec<&Formula> = sigma.to_vec();
    all.push(&not);
    !sat(&all)
}

/// A record of the naive replay: its formula, the premises in Σ when it was announced.
struct Rec {
    formula: Formula,
    premises: Vec<String>,
}

/// (step, belief id) of every derived belief that outlived its support, by the definition.
fn oracle(ops: &[Op]) -> Vec<(u32, String)> {
    let mut recs: Vec<Rec> = Vec::new();
    let mut active: BTreeMap<String, usize> = BTreeMap::new();
    // First pass: which events end a record (a retract of an active id, an announce of one).
    let mut ends = vec![false; ops.len()];
    {
        let mut ids: BTreeSet<String> = BTreeSet::new();
        for (i, o) in ops.iter().enumerate() {
            match o {
                Op::Announce(id, ..) => {
                    let id = format!("b{id}");
                    ends[i] = ids.contains(&id);
                    ids.insert(id);
                }
                Op::Retract(id) => ends[i] = ids.remove(&format!("b{id}")),
                _ => {}
            }
        }
    }
    let in_run = |i: usize| ends[i] || matches!(ops[i], Op::Revise(_));
    let mut reported: BTreeSet<usize> = BTreeSet::new();
    let mut ended = false;
    let mut out = Vec::new();
    for (i, o) in ops.iter().enumerate() {
        match o {
            Op::Announce(id, f, _, because) => {
                let id = format!("b{id}");
                active.remove(&id);
                let premises: Vec<String> = because
                    .iter()
                    .map(|c| format!("b{c}"))
                    .filter(|c| *c != id && active.contains_key(c))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                recs.push(Rec {
                    formula: parse(f).expect("generated formulas parse"),
                    premises,
                });
                active.insert(id, recs.len() - 1);
            }
            Op::Retract(id) => {
                active.remove(&format!("b{id}"));
            }
            _ => {}
        }
        ended |= ends[i];
        let settles = in_run(i) && (i + 1 == ops.len() || !in_run(i + 1));
        if !(settles && ended) {
            continue;
        }
        ended = false;
        let sigma: Vec<&Formula> = active.values().map(|&r| &recs[r].formula).collect();
        if !sat(&sigma) {
            continue;
        }
        for (id, &r) in &active {
            if reported.contains(&r) || recs[r].premises.iter().all(|p| active.contains_key(p)) {
                continue;
            }
            let rest: Vec<&Formula> = active
                .iter()
                .filter(|(other, _)| *other != id)
                .map(|(_, &x)| &recs[x].formula)
                .collect();
            if !entails(&rest, &recs[r].formula) {
                reported.insert(r);
                out.push((i as u32 + 1, id.clone()));
            }
        }
    }
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn reported_exactly_when_the_premises_are_gone_and_nothing_else_supports(
        ops in proptest::collection::vec(op(), 1..24)
    ) {
        let roles = ["fact", "fact", "assumption", "rule"];
        let lines: Vec<String> = ops
            .iter()
            .map(|o| match o {
                Op::Announce(i, f, r, because) => {
                    let b: Vec<String> = because.iter().map(|c| format!("\"b{c}\"")).collect();
                    format!(
                        r#"{{"kind":"announce","id":"b{i}","formula":"{f}","role":"{}","because":[{}]}}"#,
                        roles[*r as usize],
                        b.join(",")
                    )
                }
                Op::Retract(i) => format!(r#"{{"kind":"retract","target":"b{i}"}}"#),
                Op::Revise(i) => format!(r#"{{"kind":"revise","trigger":"b{i}"}}"#),
                Op::Log => r#"{"kind":"log","message":"-"}"#.to_string(),
            })
            .collect();
        let text = lines.join("\n") + "\n";
        let report = audit(&Model::from_bytes("tm.jsonl", text.as_bytes()), &AuditOptions::default());
        let mut got: Vec<(u32, String)> = report
            .findings
            .iter()
            .filter(|f| f.code == Code::UnsupportedDerivation)
            .map(|f| (f.step.unwrap_or(0), f.evidence["belief"].as_str().unwrap_or("").to_string()))
            .collect();
        got.sort();
        prop_assert!(
            report.findings.iter().all(|f| f.code != Code::NotCheckable),
            "{:#?}", report.findings
        );
        prop_assert_eq!(got, oracle(&ops), "{}", text);
    }
}

/// The generator exercises the property: a fair share of the traces have a report, and a fair
/// share do not.
#[test]
fn the_random_traces_exercise_both_sides() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = proptest::collection::vec(op(), 1..24);
    let (mut reported, mut cases) = (0, 0);
    for _ in 0..300 {
        let ops = strategy.new_tree(&mut runner).expect("tree").current();
        cases += 1;
        if !oracle(&ops).is_empty() {
            reported += 1;
        }
    }
    assert!(reported * 10 >= cases, "{reported} of {cases}");
    assert!(reported * 10 <= cases * 9, "{reported} of {cases}");
}
