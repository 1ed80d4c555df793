//! The recomputation against an independent truth-table oracle on random small traces:
//! every gate verdict, query answer and consistency flag must match, and the audit's QUERY and
//! ANSWER findings are exactly the ones the oracle predicts.

use std::collections::BTreeSet;

use doxascope::logic::engine::{Entails, Outcome};
use doxascope::logic::formula::{Atom, Formula};
use doxascope::logic::ground;
use doxascope::logic::parse::parse;
use doxascope::model::audit::{AuditOptions, Code, audit};
use doxascope::model::{Model, RecomputeOptions};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Announce(u8, String, u8),
    Retract(u8),
    Verify(String),
    Query(String, u8),
    Answer(String, bool),
    /// A verify of a formula, its announcement (the gate-then-update pattern), and the
    /// same verify on the Σ that now holds it: three events.
    Checked(u8, String, u8),
}

fn formula() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0u8..4).prop_map(|i| format!("p{i}")),
        (0u8..4).prop_map(|i| format!("!p{i}")),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} & {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} | {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} -> {b})")),
            inner.prop_map(|a| format!("!({a})")),
        ]
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, formula(), 0u8..6).prop_map(|(i, f, r)| Op::Announce(i, f, r)),
        2 => (0u8..6).prop_map(Op::Retract),
        2 => formula().prop_map(Op::Verify),
        1 => (formula(), 0u8..3).prop_map(|(f, a)| Op::Query(f, a)),
        1 => (formula(), any::<bool>()).prop_map(|(f, h)| Op::Answer(f, h)),
        2 => (0u8..6, formula(), 0u8..6).prop_map(|(i, f, r)| Op::Checked(i, f, r)),
    ]
}

/// Every assignment over the atoms of `fs` and `extra` that satisfies all of `fs`, with
/// the atom list.
fn models(fs: &[Formula], extra: Option<&Formula>) -> (Vec<Atom>, Vec<Vec<bool>>) {
    let mut atoms = BTreeSet::new();
    for f in fs.iter().chain(extra) {
        ground::atoms(f, &mut atoms);
    }
    let atoms: Vec<Atom> = atoms.into_iter().collect();
    let mut out = Vec::new();
    for bits in 0u32..(1 << atoms.len()) {
        let val: Vec<bool> = (0..atoms.len()).map(|i| bits >> i & 1 == 1).collect();
        let assign = |a: &Atom| atoms.iter().position(|x| x == a).is_some_and(|i| val[i]);
        if fs.iter().all(|f| ground::eval(f, &assign)) {
            out.push(val);
        }
    }
    (atoms, out)
}

/// Σ ⊨ φ by truth table (vacuously true when Σ is unsatisfiable).
fn entails(sigma: &[Formula], phi: &Formula) -> bool {
    let (atoms, ms) = models(sigma, Some(phi));
    ms.iter().all(|val| {
        let assign = |a: &Atom| atoms.iter().position(|x| x == a).is_some_and(|i| val[i]);
        ground::eval(phi, &assign)
    })
}

fn sat(fs: &[Formula]) -> bool {
    !models(fs, None).1.is_empty()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn recomputation_matches_truth_tables(ops in proptest::collection::vec(op(), 1..30)) {
        let roles = ["fact", "fact", "assumption", "fact", "rule", "norm"];
        // One op per event.
        let ops: Vec<Op> = ops
            .into_iter()
            .flat_map(|o| match o {
                Op::Checked(i, f, r) => {
                    vec![Op::Verify(f.clone()), Op::Announce(i, f.clone(), r), Op::Verify(f)]
                }
                o => vec![o],
            })
            .collect();
        let mut lines = Vec::new();
        for o in &ops {
            lines.push(match o {
                Op::Announce(i, f, r) => format!(
                    r#"{{"kind":"announce","id":"b{i}","formula":"{f}","role":"{}"}}"#,
                    roles[*r as usize]
                ),
                Op::Retract(i) => format!(r#"{{"kind":"retract","target":"b{i}"}}"#),
                Op::Verify(f) => format!(r#"{{"kind":"verify","formula":"{f}","outcome":"newinfo"}}"#),
                Op::Query(f, a) => format!(
                    r#"{{"kind":"query","formula":"{f}","answer":"{}"}}"#,
                    ["yes", "no", "unknown"][*a as usize]
                ),
                Op::Answer(f, h) => format!(r#"{{"kind":"answer","formula":"{f}","hedged":{h}}}"#),
                Op::Checked(..) => unreachable!("expanded above"),
            });
        }
        let text = lines.join("\n") + "\n";
        let m = Model::from_bytes("r.jsonl", text.as_bytes());
        let tl = m.timeline("r.jsonl").unwrap();
        let r = m.recompute("r.jsonl", &RecomputeOptions::default()).unwrap();
        let sigma_before = |step: u32| -> Vec<Formula> {
            tl.sigma_at(m.log(), step - 1).iter().map(|b| b.formula().unwrap()).collect()
        };
        let sigma_after = |step: u32| -> Vec<Formula> {
            tl.sigma_at(m.log(), step).iter().map(|b| b.formula().unwrap()).collect()
        };
        for v in &r.verifies {
            let s = sigma_before(v.step);
            let Op::Verify(f) = &ops[v.step as usize - 1] else { unreachable!() };
            let d = parse(f).unwrap();
            let mut sd = s.clone();
            sd.push(d.clone());
            let want = if !sat(&sd) {
                Outcome::Contradiction
            } else if entails(&s, &d) {
                Outcome::Entailed
            } else {
                Outcome::NewInfo
            };
            prop_assert_eq!(v.result.as_ref().unwrap().theta, want, "verify at {}", v.step);
        }
        let class = |step: u32, f: &str| {
            let s = sigma_before(step);
            let d = parse(f).unwrap();
            if entails(&s, &d) {
                Entails::Entailed
            } else if entails(&s, &Formula::Not(Box::new(d))) {
                Entails::Contradicted
            } else {
                Entails::Unknown
            }
        };
        // The audit's findings on queries and answers, by step, against the oracle's classes.
        let report = audit(&m, &AuditOptions::default());
        let found = |code: Code| -> Vec<u32> {
            report.findings.iter().filter(|f| f.code == code).filter_map(|f| f.step).collect()
        };
        let (mut mismatch, mut contradicts, mut unentailed) = (Vec::new(), Vec::new(), Vec::new());
        for q in &r.queries {
            let Op::Query(f, a) = &ops[q.step as usize - 1] else { unreachable!() };
            let want = class(q.step, f);
            prop_assert_eq!(q.result.clone().unwrap(), want, "query at {}", q.step);
            let right = [Entails::Entailed, Entails::Contradicted, Entails::Unknown][*a as usize];
            if right != want {
                mismatch.push(q.step);
            }
        }
        for a in &r.answers {
            let Op::Answer(f, hedged) = &ops[a.step as usize - 1] else { unreachable!() };
            let want = class(a.step, f);
            prop_assert_eq!(a.result.clone().unwrap(), want, "answer at {}", a.step);
            match want {
                Entails::Contradicted => contradicts.push(a.step),
                Entails::Unknown if !hedged => unentailed.push(a.step),
                _ => {}
            }
        }
        prop_assert_eq!(r.answers.len(), ops.iter().filter(|o| matches!(o, Op::Answer(..))).count());
        prop_assert_eq!(found(Code::QueryAnswerMismatch), mismatch);
        prop_assert_eq!(found(Code::AnswerContradictsSigma), contradicts);
        prop_assert_eq!(found(Code::AnswerNotEntailed), unentailed);
        for a in &r.announces {
            let res = a.result.as_ref().unwrap();
            // The announcement's own gate, on Σ just before it (often the verify just before
            // asked the same question).
            let Op::Announce(_, f, _) = &ops[a.step as usize - 1] else { unreachable!() };
            let d = parse(f).unwrap();
            let s = sigma_before(a.step);
            let mut sd = s.clone();
            sd.push(d.clone());
            let want = if !sat(&sd) {
                Outcome::Contradiction
            } else if entails(&s, &d) {
                Outcome::Entailed
            } else {
                Outcome::NewInfo
            };
            prop_assert_eq!(res.gate.theta, want, "announce gate at {}", a.step);
            let after = sigma_after(a.step);
            prop_assert_eq!(res.consistent_after, sat(&after), "announce at {}", a.step);
            prop_assert_eq!(res.consistent_before, sat(&sigma_before(a.step)));
            if !res.consistent_after && !res.conflict.is_empty() {
                // The conflict is a minimal unsatisfiable subset of Σ.
                let sigma = tl.sigma_at(m.log(), a.step);
                let pick = |skip: Option<&str>| -> Vec<Formula> {
                    sigma.iter()
                        .filter(|b| res.conflict.iter().any(|c| c == b.id()))
                        .filter(|b| Some(b.id()) != skip)
                        .map(|b| b.formula().unwrap())
                        .collect()
                };
                prop_assert_eq!(pick(None).len(), res.conflict.len());
                prop_assert!(!sat(&pick(None)));
                for c in res.conflict.iter() {
                    prop_assert!(sat(&pick(Some(c))), "conflict not minimal");
                }
            }
            if res.consistent_before && !res.consistent_after {
                prop_assert!(!res.conflict.is_empty());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Issue 27: quantified traces. The recomputation grounds Σ itself (its own mirror of Σ, with
// witnesses for the outer existentials of each belief); the first-order oracle
// (`oracle::fo`) reads the same semantics apart from any grounding. Retractions shrink the
// domain; Σ's consistency after each announcement and every gate verdict must match.

fn q_literal() -> impl Strategy<Value = String> {
    (
        prop::sample::select(&["P", "Q"][..]),
        prop::sample::select(&["x", "a", "b"][..]),
        any::<bool>(),
    )
        .prop_map(|(p, t, neg)| format!("{}{p}({t})", if neg { "!" } else { "" }))
}

fn q_formula() -> impl Strategy<Value = String> {
    let body = q_literal().prop_recursive(2, 4, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} & {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} | {b})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("({a} -> {b})")),
        ]
    });
    // The open x is closed by a quantifier or replaced by a constant.
    (body, 0u8..4).prop_map(|(b, k)| match k {
        0 => format!("exists x. {b}"),
        1 => format!("forall x. {b}"),
        2 => format!("!(forall x. {b})"),
        _ => b.replace("(x)", "(c)"),
    })
}

fn q_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..5, q_formula(), 0u8..6).prop_map(|(i, f, r)| Op::Announce(i, f, r)),
        3 => (0u8..5).prop_map(Op::Retract),
        2 => q_formula().prop_map(Op::Verify),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn quantified_recomputation_matches_the_first_order_oracle(
        ops in proptest::collection::vec(q_op(), 1..16),
    ) {
        use doxascope::logic::oracle::{self, fo};
        let roles = ["fact", "fact", "assumption", "fact", "rule", "norm"];
        let mut lines = Vec::new();
        for o in &ops {
            lines.push(match o {
                Op::Announce(i, f, r) => format!(
                    r#"{{"kind":"announce","id":"b{i}","formula":"{f}","role":"{}"}}"#,
                    roles[*r as usize]
                ),
                Op::Retract(i) => format!(r#"{{"kind":"retract","target":"b{i}"}}"#),
                Op::Verify(f) => format!(r#"{{"kind":"verify","formula":"{f}","outcome":"newinfo"}}"#),
                _ => unreachable!("not generated"),
            });
        }
        let text = lines.join("\n") + "\n";
        let m = Model::from_bytes("q.jsonl", text.as_bytes());
        let tl = m.timeline("q.jsonl").unwrap();
        let r = m.recompute("q.jsonl", &RecomputeOptions::default()).unwrap();
        let sigma = |step: u32| -> Vec<Formula> {
            tl.sigma_at(m.log(), step).iter().map(|b| b.formula().unwrap()).collect()
        };
        let small = |fs: &[&Formula], q: Option<&Formula>| fo::atom_count(fs, q) <= oracle::MAX_ATOMS;
        for v in &r.verifies {
            let s = sigma(v.step - 1);
            let refs: Vec<&Formula> = s.iter().collect();
            let Op::Verify(f) = &ops[v.step as usize - 1] else { unreachable!() };
            let d = parse(f).unwrap();
            if small(&refs, Some(&d)) {
                prop_assert_eq!(v.result.as_ref().unwrap().theta, fo::theta(&refs, &d), "verify at {}", v.step);
            }
        }
        for a in &r.announces {
            let res = a.result.as_ref().unwrap();
            let Op::Announce(_, f, _) = &ops[a.step as usize - 1] else { unreachable!() };
            let d = parse(f).unwrap();
            let before = sigma(a.step - 1);
            let before: Vec<&Formula> = before.iter().collect();
            let after = sigma(a.step);
            let after: Vec<&Formula> = after.iter().collect();
            if small(&before, Some(&d)) && small(&after, None) {
                prop_assert_eq!(res.gate.theta, fo::theta(&before, &d), "announce gate at {}", a.step);
                prop_assert_eq!(res.consistent_before, fo::consistent(&before), "before {}", a.step);
                prop_assert_eq!(res.consistent_after, fo::consistent(&after), "after {}", a.step);
            }
        }
    }
}
