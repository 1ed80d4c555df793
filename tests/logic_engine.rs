//! Differential tests of the belief-state engine against the brute-force truth-table oracle.

use std::collections::HashSet;
use std::time::Duration;

use doxascope::logic::engine::{
    BeliefSpec, BeliefState, EngineError, Entails, Limits, Outcome, Role,
};
use doxascope::logic::formula::{Atom, Formula, Term};
use doxascope::logic::oracle;
use doxascope::logic::revise::Policy;
use proptest::prelude::*;

fn atom(i: u8) -> Formula {
    Formula::Atom(Atom::Prop(format!("p{i}")))
}

fn formula(atoms: u8) -> impl Strategy<Value = Formula> {
    let leaf = prop_oneof![
        8 => (0..atoms).prop_map(atom),
        1 => Just(Formula::True),
        1 => Just(Formula::False),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|f| Formula::Not(Box::new(f))),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::And),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::Or),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Formula::Implies(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| Formula::Iff(Box::new(a), Box::new(b))),
        ]
    })
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        6 => Just(Role::Fact),
        1 => Just(Role::Assumption),
        2 => Just(Role::Rule),
        1 => Just(Role::Norm),
    ]
}

fn beliefs(atoms: u8, max: usize) -> impl Strategy<Value = Vec<(Formula, Role, f64)>> {
    prop::collection::vec(
        (
            formula(atoms),
            role(),
            prop_oneof![Just(0.3), Just(0.6), Just(1.0)],
        ),
        0..max,
    )
}

/// Builds a state from the generated beliefs, skipping rules the engine refuses (and checking
/// that it refuses exactly those that contradict the rules already held).
fn build(items: &[(Formula, Role, f64)]) -> (BeliefState, Vec<BeliefSpec>) {
    let mut st = BeliefState::new().expect("engine");
    let mut held: Vec<BeliefSpec> = Vec::new();
    for (i, (f, r, c)) in items.iter().enumerate() {
        let conf = if r.is_hard() { 1.0 } else { *c };
        let spec = BeliefSpec::new(format!("b{i}"), f.clone())
            .role(*r)
            .confidence(conf)
            .step(i as u64);
        match st.add(spec.clone()) {
            Ok(_) => held.push(spec),
            Err(EngineError::HardConflict(ids)) => {
                let mut hard: Vec<&Formula> = held
                    .iter()
                    .filter(|b| b.role.is_hard())
                    .map(|b| &*b.formula)
                    .collect();
                hard.push(f);
                assert!(!oracle::satisfiable(&hard), "refused a consistent rule");
                assert!(ids.contains(&spec.id));
            }
            Err(e) => panic!("add failed: {e}"),
        }
    }
    (st, held)
}

fn formulas<'a>(held: &'a [BeliefSpec], ids: &[String]) -> Vec<&'a Formula> {
    ids.iter()
        .map(|id| &*held.iter().find(|b| &b.id == id).expect("known id").formula)
        .collect()
}

fn all(held: &[BeliefSpec]) -> Vec<&Formula> {
    held.iter().map(|b| &*b.formula).collect()
}

fn not(f: &Formula) -> Formula {
    Formula::Not(Box::new(f.clone()))
}

/// `ids` is a subset-minimal set whose formulas together with `extra` are unsatisfiable.
fn assert_mus(held: &[BeliefSpec], ids: &[String], extra: &[Formula]) {
    let mut fs = formulas(held, ids);
    fs.extend(extra.iter());
    assert!(!oracle::satisfiable(&fs), "reported set is satisfiable");
    for skip in 0..ids.len() {
        let mut sub: Vec<&Formula> = formulas(held, ids)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, f)| f)
            .collect();
        sub.extend(extra.iter());
        assert!(oracle::satisfiable(&sub), "reported set is not minimal");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn gate_entails_consistent_agree_with_oracle(
        items in beliefs(6, 7),
        queries in prop::collection::vec(formula(7), 1..4),
        cite in prop::collection::vec(any::<bool>(), 7),
    ) {
        let (mut st, held) = build(&items);
        let sigma = all(&held);
        let sat = oracle::satisfiable(&sigma);
        let c = st.consistent().unwrap();
        prop_assert_eq!(c.consistent, sat);
        if !sat {
            assert_mus(&held, &c.conflict, &[]);
        }
        for q in &queries {
            let expect = oracle::theta(&sigma, q);
            let cited: Vec<String> = held
                .iter()
                .zip(&cite)
                .filter(|(_, c)| **c)
                .map(|(b, _)| b.id.clone())
                .collect();
            let chk = st.check(q, Some(&cited)).unwrap();
            prop_assert_eq!(chk.theta, expect);
            let premises: Vec<&Formula> = held
                .iter()
                .filter(|b| b.role.is_hard() || cited.contains(&b.id))
                .map(|b| &*b.formula)
                .collect();
            let grounded = oracle::entails(&premises, q);
            let want = if expect == Outcome::Contradiction || grounded { expect } else { Outcome::Ungrounded };
            prop_assert_eq!(chk.outcome, want);
            prop_assert_eq!(st.check(q, None).unwrap().outcome, expect);

            let e = st.entails(q).unwrap();
            let ent = oracle::entails(&sigma, q);
            let con = oracle::entails(&sigma, &not(q));
            let want = if ent { Entails::Entailed } else if con { Entails::Contradicted } else { Entails::Unknown };
            prop_assert_eq!(e.result, want);
            prop_assert_eq!(e.sigma_consistent, sat);
        }
    }

    #[test]
    fn gate_stays_right_across_retractions_and_snapshot_rebuilds(
        items in beliefs(6, 8),
        drops in prop::collection::vec(any::<prop::sample::Index>(), 1..3),
        queries in prop::collection::vec(formula(7), 14..16),
    ) {
        let (mut st, mut held) = build(&items);
        for d in drops {
            if held.is_empty() { break; }
            let i = d.index(held.len());
            let id = held[i].id.clone();
            prop_assert!(st.retract(&id).unwrap());
            held.remove(i);
            // Enough checks to go through both the selector solver (while the snapshot is
            // stale) and the rebuilt snapshot.
            for q in &queries {
                let sigma = all(&held);
                let expect = oracle::theta(&sigma, q);
                prop_assert_eq!(st.check(q, None).unwrap().outcome, expect);
            }
        }
    }

    #[test]
    fn why_whynot_supports_are_sound_and_minimal(
        items in beliefs(6, 7),
        q in formula(7),
    ) {
        let (mut st, held) = build(&items);
        let sigma = all(&held);
        let entailed = oracle::entails(&sigma, &q);
        let why = st.why(&q).unwrap();
        prop_assert_eq!(why.entailed, entailed);
        if entailed {
            assert_mus(&held, &why.support, &[not(&q)]);
        }
        let wn = st.whynot(&q).unwrap();
        prop_assert_eq!(wn.countermodel.is_none(), entailed);
        if let Some(cm) = wn.countermodel {
            let value = |a: &Atom| cm.iter().any(|(b, v)| b == a && *v);
            let mut qa = Vec::new();
            doxascope::logic::cnf::atoms_of(&q, &mut qa);
            prop_assert!(qa.iter().all(|a| cm.iter().any(|(b, _)| b == a)));
            prop_assert!(!oracle::all_true(&[&q], &value));
        }
        let sup = st.supports(&q, 64, Duration::from_secs(5)).unwrap();
        prop_assert!(sup.complete);
        for s in &sup.supports {
            assert_mus(&held, s, &[not(&q)]);
        }
        // Complete means all of them: compare with brute force over subsets.
        let n = held.len();
        let mut expected: HashSet<Vec<String>> = HashSet::new();
        for mask in 0u32..(1 << n) {
            let ids: Vec<String> = (0..n).filter(|i| mask >> i & 1 == 1).map(|i| held[i].id.clone()).collect();
            let mut fs = formulas(&held, &ids);
            let nq = not(&q);
            fs.push(&nq);
            if oracle::satisfiable(&fs) { continue; }
            let minimal = (0..ids.len()).all(|skip| {
                let mut sub: Vec<&Formula> = formulas(&held, &ids).into_iter().enumerate()
                    .filter(|(i, _)| *i != skip).map(|(_, f)| f).collect();
                sub.push(&nq);
                oracle::satisfiable(&sub)
            });
            if minimal { expected.insert(ids); }
        }
        let got: HashSet<Vec<String>> = sup.supports.iter().cloned().collect();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn graded_degrees_agree_with_oracle(
        items in beliefs(5, 7),
        q in formula(6),
        k in prop_oneof![Just(0.3), Just(0.6), Just(1.0)],
    ) {
        let (mut st, held) = build(&items);
        let mut levels: Vec<f64> = held.iter().filter(|b| !b.role.is_hard()).map(|b| b.confidence).collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        let cut = |a: f64| -> Vec<&Formula> {
            held.iter().filter(|b| b.role.is_hard() || b.confidence >= a).map(|b| &*b.formula).collect()
        };
        let inc = levels.iter().copied().filter(|&a| !oracle::satisfiable(&cut(a))).fold(0.0, f64::max);
        prop_assert_eq!(st.inconsistency_degree().unwrap(), inc);
        let hard: Vec<&Formula> = held.iter().filter(|b| b.role.is_hard()).map(|b| &*b.formula).collect();
        let n = if inc >= 1.0 {
            0.0
        } else if oracle::entails(&hard, &q) {
            1.0
        } else {
            levels.iter().copied().filter(|&a| a > inc && oracle::entails(&cut(a), &q)).fold(0.0, f64::max)
        };
        prop_assert_eq!(st.necessity(&q).unwrap(), n);
        prop_assert_eq!(st.believes_at_least(&q, k).unwrap(), k > inc && oracle::entails(&cut(k), &q));
        let e = st.entails(&q).unwrap();
        let graded = held.iter().any(|b| !b.role.is_hard() && b.confidence < 1.0);
        prop_assert_eq!(e.degree, if graded { Some(n) } else { None });
    }

    #[test]
    fn revision_policies_restore_consistency_and_match_algorithm_1(
        items in beliefs(5, 7),
        new in formula(6),
        new_role in prop_oneof![4 => Just(Role::Fact), 1 => Just(Role::Rule), 1 => Just(Role::Norm)],
        policy in prop_oneof![Just(Policy::Greedy), Just(Policy::Recency), Just(Policy::Confidence), Just(Policy::Reject), Just(Policy::Flag)],
    ) {
        // Start from a consistent Σ (what an agent running the gate would hold).
        let (mut st, mut held) = build(&items);
        if !oracle::satisfiable(&all(&held)) {
            let c = st.consistent().unwrap();
            let soft_member = c
                .conflict
                .iter()
                .find(|id| !held.iter().any(|b| &b.id == *id && b.role.is_hard()))
                .cloned();
            if let Some(id) = soft_member {
                st.retract(&id).unwrap();
                held.retain(|b| b.id != id);
            }
            prop_assume!(oracle::satisfiable(&all(&held)));
        }
        let spec = BeliefSpec::new("new", new.clone()).role(new_role).confidence(if new_role.is_hard() { 1.0 } else { 0.6 }).step(100);
        let rev = st.announce(spec.clone(), policy).unwrap();
        let mut with = all(&held);
        with.push(&new);
        let conflicting = !oracle::satisfiable(&with);
        prop_assert_eq!(rev.outcome == Outcome::Contradiction, conflicting);
        let after: Vec<BeliefSpec> = st.beliefs().cloned().collect::<Vec<_>>();
        // Rules and norms are never retracted.
        for b in held.iter().filter(|b| b.role.is_hard()) {
            prop_assert!(after.iter().any(|a| a.id == b.id));
        }
        let after_f: Vec<&Formula> = after.iter().map(|b| &*b.formula).collect();
        if policy != Policy::Flag {
            prop_assert!(oracle::satisfiable(&after_f), "revision left Σ inconsistent");
        } else {
            prop_assert_eq!(rev.sigma_inconsistent, !oracle::satisfiable(&after_f));
        }
        prop_assert_eq!(rev.applied, after.iter().any(|b| b.id == "new"));
        if !conflicting {
            prop_assert!(rev.applied && rev.retracted.is_empty());
            return Ok(());
        }
        let hard: Vec<&Formula> = held.iter().filter(|b| b.role.is_hard()).map(|b| &*b.formula).chain([&new]).collect();
        let hard_ok = oracle::satisfiable(&hard);
        if !hard_ok || policy == Policy::Reject {
            prop_assert!(rev.retracted.is_empty());
            return Ok(());
        }
        // Direct transcription of Algorithm 1 over the retractable prior commitments
        // (oldest first), then the recency fallback.
        let rules: Vec<&Formula> = held.iter().filter(|b| b.role.is_hard()).map(|b| &*b.formula).collect();
        let soft: Vec<&BeliefSpec> = held.iter().filter(|b| !b.role.is_hard()).collect();
        let lex = |order: Vec<&BeliefSpec>, forced: bool| -> Vec<String> {
            let mut kept: Vec<&Formula> = rules.clone();
            if forced { kept.push(&new); }
            let mut dropped = Vec::new();
            for b in order {
                kept.push(&b.formula);
                if !oracle::satisfiable(&kept) { kept.pop(); dropped.push(b.id.clone()); }
            }
            dropped.sort_by_key(|id| held.iter().position(|b| &b.id == id));
            dropped
        };
        match policy {
            Policy::Greedy => {
                let mut expect = None;
                for c in &soft {
                    let mut t: Vec<&Formula> = held.iter().filter(|b| b.id != c.id).map(|b| &*b.formula).collect();
                    t.push(&new);
                    if oracle::satisfiable(&t) { expect = Some(c.id.clone()); break; }
                }
                match expect {
                    Some(id) => {
                        prop_assert!(!rev.fallback);
                        prop_assert_eq!(rev.retracted.clone(), vec![id]);
                    }
                    None => {
                        prop_assert!(rev.fallback);
                        let order: Vec<&BeliefSpec> = soft.iter().rev().copied().collect();
                        prop_assert_eq!(rev.retracted.clone(), lex(order, true));
                    }
                }
            }
            Policy::Recency => {
                let order: Vec<&BeliefSpec> = soft.iter().rev().copied().collect();
                prop_assert_eq!(rev.retracted.clone(), lex(order, true));
            }
            Policy::Confidence => {
                let mut order: Vec<&BeliefSpec> = soft.clone();
                order.push(&spec);
                if new_role.is_hard() { order.pop(); }
                order.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(b.step.cmp(&a.step)));
                let mut dropped = lex(order, new_role.is_hard());
                dropped.retain(|id| id != "new");
                prop_assert_eq!(rev.retracted.clone(), dropped);
            }
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// `greedy-paper` is Algorithm 1 exactly as seed 003 writes it, transcribed here on truth
    /// tables: the oldest single prior commitment whose removal makes Σ ∪ {φ} satisfiable is
    /// dropped, and nothing else happens: φ is kept either way (no refusal, no fallback),
    /// also when Σ was inconsistent already.
    #[test]
    fn greedy_paper_is_algorithm_1_as_written(
        items in beliefs(5, 7),
        new in formula(6),
    ) {
        let (mut st, held) = build(&items);
        let spec = BeliefSpec::new("new", new.clone()).confidence(0.6).step(100);
        let rev = st.announce(spec, Policy::GreedyPaper).unwrap();
        let mut with = all(&held);
        with.push(&new);
        prop_assert!(rev.applied, "Algorithm 1 keeps the new commitment");
        let expect: Vec<String> = if oracle::satisfiable(&with) {
            Vec::new()
        } else {
            held.iter()
                .filter(|b| !b.role.is_hard())
                .find(|c| {
                    let mut t: Vec<&Formula> =
                        held.iter().filter(|b| b.id != c.id).map(|b| &*b.formula).collect();
                    t.push(&new);
                    oracle::satisfiable(&t)
                })
                .map(|c| vec![c.id.clone()])
                .unwrap_or_default()
        };
        prop_assert_eq!(&rev.retracted, &expect);
        prop_assert!(!rev.fallback);
        let after: Vec<BeliefSpec> = st.beliefs().cloned().collect();
        let mut want: Vec<&str> = held
            .iter()
            .map(|b| b.id.as_str())
            .filter(|id| !expect.iter().any(|e| e == id))
            .chain(["new"])
            .collect();
        let mut got: Vec<&str> = after.iter().map(|b| b.id.as_str()).collect();
        want.sort_unstable();
        got.sort_unstable();
        prop_assert_eq!(got, want);
        let after_f: Vec<&Formula> = after.iter().map(|b| &*b.formula).collect();
        prop_assert_eq!(rev.sigma_inconsistent, !oracle::satisfiable(&after_f));
    }
}

#[test]
fn pigeonhole_times_out_and_the_state_recovers() {
    let pigeons = 12;
    let holes = 11;
    let v = |p: usize, h: usize| Formula::Atom(Atom::Prop(format!("x{p}_{h}")));
    let mut cls = Vec::new();
    for p in 0..pigeons {
        cls.push(Formula::Or((0..holes).map(|h| v(p, h)).collect()));
    }
    for h in 0..holes {
        for p in 0..pigeons {
            for q in p + 1..pigeons {
                cls.push(Formula::Or(vec![not(&v(p, h)), not(&v(q, h))]));
            }
        }
    }
    let mut st = BeliefState::with_limits(Limits {
        timeout: Duration::from_secs(1),
        ..Limits::default()
    })
    .unwrap();
    st.add(BeliefSpec::new("small", atom(0))).unwrap();
    st.add(BeliefSpec::new("php", Formula::And(cls))).unwrap();
    let t = std::time::Instant::now();
    assert_eq!(st.consistent(), Err(EngineError::Timeout));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "caller blocked past the deadline"
    );
    assert_eq!(st.rebuilds(), 1);
    // The rebuilt state still holds both beliefs and answers once the hard one is gone.
    assert!(st.retract("php").unwrap());
    assert!(st.consistent().unwrap().consistent);
    assert_eq!(st.entails(&atom(0)).unwrap().result, Entails::Entailed);
}

#[test]
fn handle_is_send_and_works_from_another_thread() {
    fn is_send<T: Send>(_: &T) {}
    let mut st = BeliefState::new().unwrap();
    is_send(&st);
    st.add(BeliefSpec::new("a", atom(1))).unwrap();
    let r = std::thread::spawn(move || st.check(&atom(1), None).unwrap().outcome)
        .join()
        .unwrap();
    assert_eq!(r, Outcome::Entailed);
}

#[test]
fn caps_refuse_before_adding() {
    let mut st = BeliefState::with_limits(Limits {
        max_clauses: 50,
        ..Limits::default()
    })
    .unwrap();
    let big = Formula::And((0..100).map(|i| atom(i as u8 % 50)).collect());
    assert!(matches!(
        st.add(BeliefSpec::new("big", big)),
        Err(EngineError::TooLarge {
            what: "clauses",
            ..
        })
    ));
    st.add(BeliefSpec::new("ok", atom(1))).unwrap();
    assert!(st.beliefs().all(|b| b.id != "big"));
    assert_eq!(
        st.add(BeliefSpec::new("bad", atom(2)).confidence(1.5)),
        Err(EngineError::BadConfidence(1.5))
    );
    let mut st = BeliefState::with_limits(Limits {
        ground_cap: 10,
        ..Limits::default()
    })
    .unwrap();
    let p = |x: &str, y: &str| {
        Formula::Atom(Atom::Pred(
            "P".into(),
            vec![Term::Var(x.into()), Term::Var(y.into())],
        ))
    };
    for c in ["a", "b", "c", "d"] {
        let f = Formula::Atom(Atom::Pred("Q".into(), vec![Term::Const(c.into())]));
        st.add(BeliefSpec::new(c, f)).unwrap();
    }
    // 4 constants, two variables: 16 instances over a cap of 10, refused before expanding.
    let big = Formula::Forall(vec!["x".into(), "y".into()], Box::new(p("x", "y")));
    assert!(matches!(
        st.add(BeliefSpec::new("q", big)),
        Err(EngineError::Ground(_))
    ));
}

#[test]
fn norm_conflicts_are_reported_and_norms_survive() {
    let mut st = BeliefState::new().unwrap();
    st.add(BeliefSpec::new("n1", not(&atom(1))).role(Role::Norm))
        .unwrap();
    st.add(BeliefSpec::new("f1", atom(2)).step(1)).unwrap();
    let rev = st
        .announce(BeliefSpec::new("f2", atom(1)).step(2), Policy::Greedy)
        .unwrap();
    assert_eq!(rev.outcome, Outcome::Contradiction);
    assert!(!rev.applied);
    assert_eq!(rev.norm_violation, vec!["n1".to_string()]);
    assert_eq!(rev.conflict, vec!["n1".to_string(), "f2".to_string()]);
    assert!(st.belief("n1").is_some());
    // Under flag, the fact is kept and Σ is marked inconsistent.
    let rev = st
        .announce(BeliefSpec::new("f3", atom(1)).step(3), Policy::Flag)
        .unwrap();
    assert!(rev.applied && rev.sigma_inconsistent);
    let c = st.consistent().unwrap();
    assert_eq!(c.conflict, vec!["n1".to_string(), "f3".to_string()]);
}

#[test]
fn long_flat_chain_solves() {
    // 1,000,000 is timed in release by `cargo bench --bench logic`; debug builds of varisat
    // are too slow for that here.
    let n = 100_000;
    let chain = Formula::And(
        (0..n)
            .map(|i| Formula::Atom(Atom::Prop(format!("c{i}"))))
            .collect(),
    );
    // Correctness only: a loaded machine must not turn a debug-build solve into a timeout.
    let mut st = BeliefState::with_limits(Limits {
        timeout: Duration::from_secs(120),
        ..Limits::default()
    })
    .unwrap();
    st.add(BeliefSpec::new("chain", chain)).unwrap();
    let last = Formula::Atom(Atom::Prop(format!("c{}", n - 1)));
    assert_eq!(st.check(&last, None).unwrap().outcome, Outcome::Entailed);
    assert_eq!(
        st.check(&not(&last), None).unwrap().outcome,
        Outcome::Contradiction
    );
    assert_eq!(st.why(&last).unwrap().support, vec!["chain".to_string()]);
}

// ---------------------------------------------------------------------------------------
// Issue 27: quantifiers after retraction. Random Σ of quantified beliefs and constants,
// random announcements under every policy and random retractions; after every step the
// engine's `sigma_inconsistent`, its `consistent` and the first-order oracle
// (`oracle::fo`, which reads the witness semantics apart from the engine's grounding) agree.

/// A literal over P/1 and Q/1 with an argument from `terms`.
fn q_literal(terms: &'static [&'static str]) -> impl Strategy<Value = String> {
    (
        prop::sample::select(&["P", "Q"][..]),
        prop::sample::select(terms),
        any::<bool>(),
    )
        .prop_map(|(p, t, neg)| format!("{}{p}({t})", if neg { "~" } else { "" }))
}

/// A small body over the literals of `terms`.
fn q_body(terms: &'static [&'static str]) -> impl Strategy<Value = String> {
    q_literal(terms).prop_recursive(2, 4, 2, move |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} & {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} | {b})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("({a} -> {b})")),
        ]
    })
}

/// A belief and whether it is in the exact fragment (`∃*∀*` after negation normal form).
fn q_belief() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        3 => q_literal(&["a", "b", "c"]).prop_map(|f| (f, true)),
        3 => q_body(&["x", "a", "b"]).prop_map(|b| (format!("exists x. {b}"), true)),
        2 => q_body(&["x", "a", "c"]).prop_map(|b| (format!("forall x. {b}"), true)),
        1 => q_body(&["x", "b"]).prop_map(|b| (format!("~(forall x. {b})"), true)),
        1 => q_body(&["x", "y"]).prop_map(|b| (format!("exists x. forall y. {b}"), true)),
        1 => q_body(&["x", "y"]).prop_map(|b| (format!("forall x. exists y. {b}"), false)),
    ]
}

#[derive(Debug, Clone)]
enum QStep {
    Announce {
        formula: (String, bool),
        confidence: f64,
        rule: bool,
        policy: Policy,
    },
    /// Retract the active belief at this position (modulo Σ's size).
    Retract(usize),
}

fn q_step() -> impl Strategy<Value = QStep> {
    prop_oneof![
        4 => (
            q_belief(),
            prop::sample::select(&[0.3, 0.6, 0.9, 1.0][..]),
            prop::bool::weighted(0.1),
            prop::sample::select(&Policy::ALL[..]),
        )
            .prop_map(|(formula, confidence, rule, policy)| QStep::Announce {
                formula,
                confidence,
                rule,
                policy,
            }),
        2 => (0usize..8).prop_map(QStep::Retract),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn quantifier_after_retraction(steps in prop::collection::vec(q_step(), 1..12)) {
        let mut st = BeliefState::new().expect("engine");
        let mut exact: std::collections::HashMap<String, bool> = Default::default();
        for (k, step) in steps.into_iter().enumerate() {
            let was = st.consistent().expect("consistent").consistent;
            let mut reported = None;
            let mut repairing = false;
            match step {
                QStep::Announce { formula: (text, in_fragment), confidence, rule, policy } => {
                    let f = doxascope::logic::parse::parse(&text).expect("parses");
                    let id = format!("b{k}");
                    let spec = BeliefSpec::new(&id, f)
                        .confidence(if rule { 1.0 } else { confidence })
                        .role(if rule { Role::Rule } else { Role::Fact })
                        .step(k as u64);
                    match st.announce(spec, policy) {
                        Ok(rev) => {
                            reported = Some(rev.sigma_inconsistent);
                            repairing = matches!(
                                policy,
                                Policy::Greedy | Policy::Recency | Policy::Confidence
                            );
                            exact.insert(id, in_fragment);
                        }
                        Err(EngineError::HardConflict(_)) => {}
                        Err(e) => return Err(TestCaseError::fail(e.to_string())),
                    }
                }
                QStep::Retract(i) => {
                    let ids = st.held().expect("held");
                    if !ids.is_empty() {
                        let id = ids[i % ids.len()].id.clone();
                        prop_assert!(st.retract(&id).expect("retract"));
                    }
                }
            }
            let held = st.held().expect("held");
            let fs: Vec<&Formula> = held.iter().map(|b| &*b.formula).collect();
            let all_exact = held.iter().all(|b| exact.get(&b.id).copied().unwrap_or(true));
            let c = st.consistent().expect("consistent");
            if let Some(bad) = reported {
                prop_assert_eq!(bad, !c.consistent, "the reply and `consistent` disagree");
            }
            if oracle::fo::atom_count(&fs, None) <= oracle::MAX_ATOMS {
                prop_assert_eq!(c.consistent, oracle::fo::consistent(&fs), "engine vs oracle on {:?}", fs);
            }
            if was && all_exact {
                // Monotone in the exact fragment: a retraction keeps Σ consistent, and a
                // repairing policy repairs what an announcement breaks.
                if reported.is_none() || repairing {
                    prop_assert!(c.consistent, "Σ became inconsistent: {:?}", fs);
                }
            }
            if was && repairing {
                // Outside the fragment too: the policies repair over Σ's own domain (only
                // rules could stand in the way, and they are in the fragment here or not).
                prop_assert!(c.consistent || held.iter().any(|b| b.role == Role::Rule), "{:?}", fs);
            }
        }
    }
}

/// Outside the exact fragment a repair can shrink the domain under a `∀∃` belief: `recency`
/// retracts `Q(b)`, the last mention of b, and over {a} alone "every individual has one of
/// the opposite P" is unsatisfiable. The policy repairs again over Σ's own domain, and the
/// reply says what `consistent` says.
#[test]
fn a_repair_that_shrinks_the_domain_under_a_forall_exists_repairs_again() {
    let parse = |s: &str| doxascope::logic::parse::parse(s).expect("parses");
    for policy in [Policy::Recency, Policy::Greedy, Policy::Confidence] {
        let mut st = BeliefState::new().expect("engine");
        st.add(BeliefSpec::new("ra", parse("R(a)")).confidence(0.5).step(1))
            .expect("add");
        st.add(BeliefSpec::new("qb", parse("Q(b)")).confidence(0.5).step(2))
            .expect("add");
        let opposite = "forall x. exists y. ((P(x) -> ~P(y)) & (~P(x) -> P(y)))";
        st.add(
            BeliefSpec::new("opp", parse(opposite))
                .confidence(0.6)
                .step(3),
        )
        .expect("add");
        assert!(st.consistent().expect("consistent").consistent);
        let rev = st
            .announce(
                BeliefSpec::new("none", parse("forall x. ~Q(x)")).step(4),
                policy,
            )
            .expect("announce");
        let c = st.consistent().expect("consistent");
        assert!(c.consistent, "{policy:?}: {rev:?} left {:?}", st.held());
        assert!(!rev.sigma_inconsistent, "{policy:?}: {rev:?}");
        assert!(rev.applied, "{policy:?}: {rev:?}");
        assert_eq!(rev.retracted, vec!["qb", "opp"], "{policy:?}");
    }
}
