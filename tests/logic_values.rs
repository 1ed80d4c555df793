//! Value atoms (`key = value`) in the engine, against the truth-table oracle, which
//! implements the functional constraint (one value per key) on its own, by skipping the
//! assignments that give a key two values.

use std::time::Duration;

use doxascope::logic::engine::{BeliefSpec, BeliefState, EngineError, Entails, Outcome, Role};
use doxascope::logic::formula::{Atom, Formula, Scalar, ValueAtom};
use doxascope::logic::oracle;
use doxascope::logic::parse::parse;
use proptest::prelude::*;

fn p(s: &str) -> Formula {
    parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn value(key: &str, v: Scalar) -> Formula {
    Formula::Atom(Atom::Value(Box::new(ValueAtom {
        key: key.into(),
        value: v,
        unit: None,
    })))
}

/// The atom pool: two propositions and value atoms of three keys with two or three values
/// (one of them a unit variant, a distinct value of its key).
fn leaf() -> impl Strategy<Value = Formula> {
    prop_oneof![
        2 => prop::sample::select(vec!["p", "q"]).prop_map(|n| Formula::Atom(Atom::Prop(n.into()))),
        3 => prop::sample::select(vec!["\"a\"", "\"b\"", "3"])
            .prop_map(|v| p(&format!("seat = {v}"))),
        3 => prop::sample::select(vec!["1", "2", "2 km"])
            .prop_map(|v| p(&format!("user-prefs/n = {v}"))),
        2 => prop::sample::select(vec!["true", "false"]).prop_map(|v| p(&format!("ok = {v}"))),
        1 => Just(Formula::False),
    ]
}

fn formula() -> impl Strategy<Value = Formula> {
    leaf().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            3 => inner.clone().prop_map(|f| Formula::Not(Box::new(f))),
            2 => prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::And),
            2 => prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::Or),
            1 => (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Formula::Implies(Box::new(a), Box::new(b))),
            1 => (inner.clone(), inner).prop_map(|(a, b)| Formula::Iff(Box::new(a), Box::new(b))),
        ]
    })
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![6 => Just(Role::Fact), 1 => Just(Role::Assumption), 2 => Just(Role::Rule)]
}

/// Adds the beliefs, skipping the rules the engine refuses: exactly those that contradict
/// the rules held (by the oracle).
fn build(items: &[(Formula, Role)]) -> (BeliefState, Vec<BeliefSpec>) {
    let mut st = BeliefState::new().expect("engine");
    let mut held: Vec<BeliefSpec> = Vec::new();
    for (i, (f, r)) in items.iter().enumerate() {
        let spec = BeliefSpec::new(format!("b{i}"), f.clone())
            .role(*r)
            .step(i as u64);
        match st.add(spec.clone()) {
            Ok(_) => held.push(spec),
            Err(EngineError::HardConflict(_)) => {
                let mut hard: Vec<&Formula> = held
                    .iter()
                    .filter(|b| b.role.is_hard())
                    .map(|b| &*b.formula)
                    .collect();
                hard.push(f);
                assert!(!oracle::satisfiable(&hard), "refused a consistent rule");
            }
            Err(e) => panic!("add failed: {e}"),
        }
    }
    (st, held)
}

fn all(held: &[BeliefSpec]) -> Vec<&Formula> {
    held.iter().map(|b| &*b.formula).collect()
}

fn not(f: &Formula) -> Formula {
    Formula::Not(Box::new(f.clone()))
}

/// Whether a (partial) assignment gives some key two values.
fn two_values(cm: &[(Atom, bool)]) -> bool {
    let keys: Vec<&str> = cm
        .iter()
        .filter(|(_, v)| *v)
        .filter_map(|(a, _)| match a {
            Atom::Value(v) => Some(v.key.as_str()),
            _ => None,
        })
        .collect();
    keys.iter()
        .enumerate()
        .any(|(i, k)| keys[i + 1..].contains(k))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn value_atoms_agree_with_oracle(
        items in prop::collection::vec((formula(), role()), 0..7),
        queries in prop::collection::vec(formula(), 1..5),
        drop in any::<prop::sample::Index>(),
    ) {
        let (mut st, mut held) = build(&items);
        for round in 0..2 {
            let sigma = all(&held);
            let sat = oracle::satisfiable(&sigma);
            prop_assert_eq!(st.consistent().unwrap().consistent, sat);
            for q in &queries {
                // Asked twice: the second answer may come from the cached model.
                for _ in 0..2 {
                    prop_assert_eq!(st.check(q, None).unwrap().theta, oracle::theta(&sigma, q), "{}", q);
                }
                let e = st.entails(q).unwrap();
                let want = if oracle::entails(&sigma, q) {
                    Entails::Entailed
                } else if oracle::entails(&sigma, &not(q)) {
                    Entails::Contradicted
                } else {
                    Entails::Unknown
                };
                prop_assert_eq!(e.result, want, "{}", q);
                let wn = st.whynot(q).unwrap();
                prop_assert_eq!(wn.countermodel.is_none(), oracle::entails(&sigma, q));
                if let Some(cm) = &wn.countermodel {
                    prop_assert!(!two_values(cm), "countermodel gives a key two values: {:?}", cm);
                }
            }
            // Then again after a retraction (the snapshot is rebuilt from the log).
            if round == 0 && !held.is_empty() {
                let i = drop.index(held.len());
                let id = held[i].id.clone();
                prop_assert!(st.retract(&id).unwrap());
                held.remove(i);
            }
        }
    }
}

#[test]
fn two_values_of_one_key_are_inconsistent() {
    let mut st = BeliefState::new().unwrap();
    st.add(BeliefSpec::new("a", p(r#"seat_pref = "aisle""#)))
        .unwrap();
    // The gate refuses the second value (the cached model of Σ must not be "repaired" into
    // one that gives the key both).
    let chk = st.check(&p(r#"seat_pref = "window""#), None).unwrap();
    assert_eq!(chk.theta, Outcome::Contradiction);
    assert_eq!(
        st.entails(&p(r#"seat_pref = "window""#)).unwrap().result,
        Entails::Contradicted
    );
    // Equal values are one atom: 3 and 3.0, not "3"; a unit makes another value.
    st.add(BeliefSpec::new("n", p("count = 3"))).unwrap();
    assert_eq!(
        st.entails(&p("count = 3.0")).unwrap().result,
        Entails::Entailed
    );
    assert_eq!(
        st.entails(&p(r#"count = "3""#)).unwrap().result,
        Entails::Contradicted
    );
    assert_eq!(
        st.entails(&p("count = 3 km")).unwrap().result,
        Entails::Contradicted
    );
    // Mixed with propositions.
    st.add(BeliefSpec::new("r", p(r#"balance_ok -> status = "paid""#)).role(Role::Rule))
        .unwrap();
    st.add(BeliefSpec::new("s", p(r#"status = "due""#)))
        .unwrap();
    assert_eq!(
        st.entails(&p("balance_ok")).unwrap().result,
        Entails::Contradicted
    );
    let why = st.why(&p("~balance_ok")).unwrap();
    assert!(why.entailed);
    let mut support = why.support.clone();
    support.sort();
    assert_eq!(support, vec!["r".to_string(), "s".to_string()]);
    assert!(st.consistent().unwrap().consistent);
    st.add(BeliefSpec::new("w", p(r#"status = "paid""#)))
        .unwrap();
    let c = st.consistent().unwrap();
    assert!(!c.consistent);
    let mut conflict = c.conflict.clone();
    conflict.sort();
    assert_eq!(conflict, vec!["s".to_string(), "w".to_string()]);
}

#[test]
fn a_key_with_many_values_stays_linear() {
    // A thousand values of one key: each adds one variable and three clauses, and the
    // questions stay quick (a pairwise encoding would add half a million clauses).
    let mut st = BeliefState::new().unwrap();
    for i in 0..1000 {
        let f = value("k", Scalar::Num(i.to_string()));
        st.add(BeliefSpec::new(format!("v{i}"), Formula::Not(Box::new(f))))
            .unwrap();
    }
    st.add(BeliefSpec::new("hold", p("k = 1000 | k = 1001")))
        .unwrap();
    let c = st.consistent().unwrap();
    assert!(c.consistent);
    assert_eq!(
        st.entails(&p("k = 1000 & k = 1001")).unwrap().result,
        Entails::Contradicted
    );
    let sup = st
        .supports(&p("~k = 5"), 4, Duration::from_secs(5))
        .unwrap();
    assert!(!sup.supports.is_empty());
}
