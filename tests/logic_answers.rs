//! Answers depend on Σ and the question alone (issue 11): the active domain, explanations,
//! announcements into an inconsistent Σ and re-announcements, each checked against a
//! brute-force oracle that reads the documented quantifier semantics (`logic::oracle::fo`,
//! witnesses and domain computed apart from the engine's grounding) and enumerates truth
//! assignments.

use std::time::Duration;

use doxascope::logic::engine::{
    Added, BeliefSpec, BeliefState, EngineError, Entails, Outcome, Role,
};
use doxascope::logic::formula::{Atom, Formula, Term};
use doxascope::logic::ground;
use doxascope::logic::oracle;
use doxascope::logic::parse::parse;
use doxascope::logic::revise::{Policy, Revision};
use proptest::prelude::*;

fn f(s: &str) -> Formula {
    parse(s).unwrap_or_else(|e| panic!("{s}: {e:?}"))
}

fn spec(id: &str, s: &str) -> BeliefSpec {
    BeliefSpec::new(id, f(s))
}

// ---------------------------------------------------------------------------------------
// The brute-force oracle over the documented semantics (`logic::oracle::fo`: witnesses for
// the outer existentials of Σ, the constants and witnesses of Σ and of the question as the
// domain, or the anonymous individual), written apart from the engine's grounding.

fn refs(fs: &[Formula]) -> Vec<&Formula> {
    fs.iter().collect()
}

fn sat(fs: &[Formula]) -> bool {
    oracle::satisfiable(&refs(fs))
}

/// Θ by truth tables over the domain of Σ and Δ.
fn theta(sigma: &[&Formula], delta: &Formula) -> Outcome {
    oracle::fo::theta(sigma, delta)
}

/// `ids` (of `held`) is inconsistent (`question` None) or entails `question`, and dropping
/// any one id makes it not; over the domain it shares with `context`.
fn is_mus(
    held: &[BeliefSpec],
    ids: &[String],
    question: Option<&Formula>,
    context: &[&Formula],
) -> bool {
    let bad = |skip: Option<usize>| -> bool {
        let fs: Vec<&Formula> = ids
            .iter()
            .enumerate()
            .filter(|(k, _)| Some(*k) != skip)
            .map(|(_, id)| &*held.iter().find(|b| &b.id == id).expect("held id").formula)
            .collect();
        match question {
            None => !oracle::fo::consistent_in(&fs, context),
            Some(q) => oracle::fo::entails_in(&fs, q, context),
        }
    };
    bad(None) && (0..ids.len()).all(|k| !bad(Some(k)))
}

// ---------------------------------------------------------------------------------------
// Generators: first-order formulas over P/1, Q/1, two propositions and few constants.

fn term(consts: &'static [&'static str]) -> impl Strategy<Value = Term> {
    prop_oneof![
        2 => prop::sample::select(consts).prop_map(|c| Term::Const(c.to_string())),
        1 => Just(Term::Var("x".to_string())),
    ]
}

fn fo(consts: &'static [&'static str]) -> impl Strategy<Value = Formula> {
    let leaf = prop_oneof![
        3 => (prop::sample::select(&["P", "Q"][..]), term(consts))
            .prop_map(|(p, t)| Formula::Atom(Atom::Pred(p.to_string(), vec![t]))),
        2 => prop::sample::select(&["p0", "p1"][..])
            .prop_map(|p| Formula::Atom(Atom::Prop(p.to_string()))),
        1 => prop::bool::ANY.prop_map(|b| if b { Formula::True } else { Formula::False }),
    ];
    let body = leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|g| Formula::Not(Box::new(g))),
            prop::collection::vec(inner.clone(), 2..3).prop_map(Formula::And),
            prop::collection::vec(inner.clone(), 2..3).prop_map(Formula::Or),
            (inner.clone(), inner).prop_map(|(a, b)| Formula::Implies(Box::new(a), Box::new(b))),
        ]
    });
    // Close the variable: ∀, ∃, or a constant in its place.
    (body, 0u8..3, prop::sample::select(consts)).prop_map(|(b, how, c)| match how {
        0 => Formula::Forall(vec!["x".into()], Box::new(b)),
        1 => Formula::Exists(vec!["x".into()], Box::new(b)),
        _ => close(&b, c),
    })
}

/// `g` with the variable `x` replaced by `c`.
fn close(g: &Formula, c: &str) -> Formula {
    ground::ground(
        &Formula::Forall(vec!["x".into()], Box::new(g.clone())),
        &[c.to_string()],
        10,
    )
    .expect("one instance")
}

const SIGMA_CONSTS: &[&str] = &["a", "b"];
const NOISE_CONSTS: &[&str] = &["c", "d"];
const QUERY_CONSTS: &[&str] = &["a", "b"];

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![5 => Just(Role::Fact), 1 => Just(Role::Assumption), 1 => Just(Role::Rule)]
}

fn sigma_items() -> impl Strategy<Value = Vec<(Formula, Role, f64)>> {
    prop::collection::vec(
        (
            fo(SIGMA_CONSTS),
            role(),
            prop::sample::select(&[0.4, 0.7, 1.0][..]),
        ),
        0..5,
    )
}

/// Something done before or between the additions of Σ that leaves Σ as it was.
#[derive(Debug, Clone)]
enum Noise {
    Check(Formula),
    WhyNot(Formula),
    Why(Formula),
    Consistent,
    /// A belief added and retracted again.
    AddRetract(Formula),
    /// An announcement under `reject` that is refused, or else retracted again.
    Reject(Formula),
}

fn noise() -> impl Strategy<Value = Noise> {
    prop_oneof![
        fo(NOISE_CONSTS).prop_map(Noise::Check),
        fo(NOISE_CONSTS).prop_map(Noise::WhyNot),
        fo(NOISE_CONSTS).prop_map(Noise::Why),
        Just(Noise::Consistent),
        fo(NOISE_CONSTS).prop_map(Noise::AddRetract),
        fo(NOISE_CONSTS).prop_map(Noise::Reject),
    ]
}

fn specs(items: &[(Formula, Role, f64)]) -> Vec<BeliefSpec> {
    items
        .iter()
        .enumerate()
        .map(|(i, (g, r, c))| {
            BeliefSpec::new(format!("s{i}"), g.clone())
                .role(*r)
                .confidence(if r.is_hard() { 1.0 } else { *c })
                .step(i as u64)
        })
        .collect()
}

/// Adds Σ in order (rules the engine refuses become assumptions, the same on every state).
fn add_all(st: &mut BeliefState, sigma: &[BeliefSpec]) {
    for s in sigma {
        match st.add(s.clone()) {
            Ok(_) => {}
            Err(EngineError::HardConflict(_)) => {
                st.add(s.clone().role(Role::Assumption)).expect("add");
            }
            Err(e) => panic!("add: {e}"),
        }
    }
}

fn apply(st: &mut BeliefState, n: &Noise, k: usize) {
    match n {
        Noise::Check(g) => drop(st.check(g, None)),
        Noise::WhyNot(g) => drop(st.whynot(g)),
        Noise::Why(g) => drop(st.why(g)),
        Noise::Consistent => drop(st.consistent()),
        Noise::AddRetract(g) => {
            let id = format!("noise{k}");
            if st.add(BeliefSpec::new(&id, g.clone())).is_ok() {
                st.retract(&id).expect("retract");
            }
        }
        Noise::Reject(g) => {
            let id = format!("noise{k}");
            let r = st
                .announce(BeliefSpec::new(&id, g.clone()), Policy::Reject)
                .expect("announce");
            if r.applied {
                st.retract(&id).expect("retract");
            }
        }
    }
}

/// Every answer the engine gives about `q` on `st`, as one comparable value.
#[derive(Debug, PartialEq)]
struct Answers {
    check: Outcome,
    entails: Entails,
    degree: Option<f64>,
    consistent: (bool, Vec<String>),
    why: (bool, Vec<String>),
    supports: (Vec<Vec<String>>, bool),
    countermodel: bool,
    necessity: f64,
    announce: Vec<(Option<Revision>, Vec<BeliefSpec>)>,
}

fn answers(st: &mut BeliefState, q: &Formula) -> Answers {
    let e = st.entails(q).expect("entails");
    let c = st.consistent().expect("consistent");
    let w = st.why(q).expect("why");
    let s = st
        .supports(q, 16, Duration::from_secs(5))
        .expect("supports");
    let mut out = Answers {
        check: st.check(q, None).expect("check").outcome,
        entails: e.result,
        degree: e.degree,
        consistent: (c.consistent, c.conflict),
        why: (w.entailed, w.support),
        supports: (s.supports, s.complete),
        countermodel: st.whynot(q).expect("whynot").countermodel.is_some(),
        necessity: st.necessity(q).expect("necessity"),
        announce: Vec::new(),
    };
    // Announcing changes Σ: each policy on a copy rebuilt from the handle's Σ would not test
    // this state, so the policies run one after the other on this state, last one wins.
    for p in [Policy::Reject, Policy::Flag, Policy::Greedy] {
        let r = st.announce(BeliefSpec::new(format!("q-{}", p.as_str()), q.clone()), p);
        out.announce.push((r.ok(), st.held().expect("held")));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The same question after any history of queries, additions, refused announcements
    /// and retractions that leads to the same Σ gets the same answer as on a fresh state
    /// holding that Σ: verdicts, degrees, conflicts, supports and revisions alike.
    #[test]
    fn answers_depend_on_sigma_and_the_question_alone(
        items in sigma_items(),
        before in prop::collection::vec(noise(), 0..5),
        between in prop::collection::vec(noise(), 0..5),
        q in fo(QUERY_CONSTS),
    ) {
        let sigma = specs(&items);
        let mut fresh = BeliefState::new().expect("engine");
        add_all(&mut fresh, &sigma);
        let mut used = BeliefState::new().expect("engine");
        for (k, n) in before.iter().enumerate() {
            apply(&mut used, n, k);
        }
        let half = sigma.len() / 2;
        add_all(&mut used, &sigma[..half]);
        for (k, n) in between.iter().enumerate() {
            apply(&mut used, n, 100 + k);
        }
        add_all(&mut used, &sigma[half..]);
        prop_assert_eq!(used.held().expect("held"), fresh.held().expect("held"));
        let a = answers(&mut used, &q);
        let b = answers(&mut fresh, &q);
        prop_assert_eq!(a, b);
    }

    /// Θ, consistency, `why` and the conflicts agree with truth tables over the documented
    /// domain (Σ's constants and the question's, or the anonymous individual).
    #[test]
    fn first_order_answers_agree_with_the_oracle(
        items in sigma_items(),
        q in fo(QUERY_CONSTS),
    ) {
        let sigma = specs(&items);
        let mut st = BeliefState::new().expect("engine");
        add_all(&mut st, &sigma);
        let held = st.held().expect("held");
        let fs: Vec<&Formula> = held.iter().map(|b| &*b.formula).collect();
        prop_assert_eq!(st.check(&q, None).expect("check").outcome, theta(&fs, &q));

        let consistent = oracle::fo::consistent(&fs);
        let c = st.consistent().expect("consistent");
        prop_assert_eq!(c.consistent, consistent);
        if !consistent {
            prop_assert!(is_mus(&held, &c.conflict, None, &fs), "conflict {:?}", c.conflict);
        }

        let mut with_q = fs.clone();
        with_q.push(&q);
        let entailed = oracle::fo::entails(&fs, &q);
        let why = st.why(&q).expect("why");
        prop_assert_eq!(why.entailed, entailed);
        if entailed {
            prop_assert!(is_mus(&held, &why.support, Some(&q), &with_q), "support {:?}", why.support);
        }
        let sup = st.supports(&q, 16, Duration::from_secs(5)).expect("supports");
        for s in &sup.supports {
            prop_assert!(is_mus(&held, s, Some(&q), &with_q), "support {:?}", s);
        }

        let rev = st
            .announce(BeliefSpec::new("phi", q.clone()), Policy::Reject)
            .expect("announce");
        prop_assert_eq!(rev.outcome, theta(&fs, &q));
        prop_assert_eq!(rev.sigma_was_inconsistent, !oracle::fo::consistent_in(&fs, &with_q));
        if rev.outcome == Outcome::Contradiction {
            let mut with_phi = held.clone();
            with_phi.push(BeliefSpec::new("phi", q.clone()));
            prop_assert_eq!(rev.conflict.last().map(String::as_str), Some("phi").filter(|_| !rev.conflict.is_empty()));
            if !rev.conflict.is_empty() {
                prop_assert!(is_mus(&with_phi, &rev.conflict, None, &with_q), "conflict {:?}", rev.conflict);
                let rest = &rev.conflict[..rev.conflict.len() - 1];
                let rest_fs: Vec<&Formula> = rest
                    .iter()
                    .map(|id| &*held.iter().find(|b| &b.id == id).expect("id").formula)
                    .collect();
                prop_assert!(oracle::fo::consistent_in(&rest_fs, &with_q), "the conflict does not need phi");
            } else {
                prop_assert!(rev.sigma_was_inconsistent, "a contradiction into a consistent Σ names its conflict");
            }
            if rev.sigma_was_inconsistent {
                prop_assert!(is_mus(&held, &rev.prior_conflict, None, &with_q), "prior {:?}", rev.prior_conflict);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Revision: every change to Σ is reported, under every policy.

fn policy() -> impl Strategy<Value = Policy> {
    prop::sample::select(
        &[
            Policy::Greedy,
            Policy::Recency,
            Policy::Confidence,
            Policy::Reject,
            Policy::Flag,
        ][..],
    )
}

fn prop_formula() -> impl Strategy<Value = Formula> {
    let leaf = prop_oneof![
        8 => prop::sample::select(&["p0", "p1", "p2", "p3"][..])
            .prop_map(|p| Formula::Atom(Atom::Prop(p.to_string()))),
        1 => prop::bool::ANY.prop_map(|b| if b { Formula::True } else { Formula::False }),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|g| Formula::Not(Box::new(g))),
            prop::collection::vec(inner.clone(), 2..3).prop_map(Formula::And),
            prop::collection::vec(inner.clone(), 2..3).prop_map(Formula::Or),
            (inner.clone(), inner).prop_map(|(a, b)| Formula::Implies(Box::new(a), Box::new(b))),
        ]
    })
}

/// One announcement: id (few ids, so re-announcements and replacements are common), formula,
/// confidence, role, policy.
fn announcement() -> impl Strategy<Value = (u8, Formula, f64, bool, Policy)> {
    (
        0u8..6,
        prop_formula(),
        prop::sample::select(&[0.3, 0.6, 0.9, 1.0][..]),
        prop::bool::weighted(0.1),
        policy(),
    )
}

/// Σ after a revision, by the invariant: `(Σ − retracted) ∪ {φ if applied}`, φ in the place
/// of a same-id belief when it was merged, at the end otherwise.
fn expected_after(before: &[BeliefSpec], phi: &BeliefSpec, rev: &Revision) -> Vec<BeliefSpec> {
    let mut out: Vec<BeliefSpec> = before
        .iter()
        .filter(|b| !rev.retracted.contains(&b.id))
        .cloned()
        .collect();
    if rev.applied {
        match rev.added {
            Some(Added::Merged) => {
                let b = out
                    .iter_mut()
                    .find(|b| b.id == phi.id)
                    .expect("merged into a held id");
                assert_eq!((&b.formula, b.role), (&phi.formula, phi.role));
                *b = phi.clone();
            }
            _ => {
                out.retain(|b| b.id != phi.id);
                out.push(phi.clone());
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// For all five policies: Σ afterwards is exactly what the revision reports; a revising
    /// policy leaves a consistent Σ consistent and touches nothing when Σ was inconsistent
    /// already; `reject` changes nothing on a contradiction; conflicts are minimal
    /// unsatisfiable sets that contain φ.
    #[test]
    fn every_change_to_sigma_is_reported(steps in prop::collection::vec(announcement(), 1..14)) {
        let mut st = BeliefState::new().expect("engine");
        for (k, (id, g, c, hard, pol)) in steps.into_iter().enumerate() {
            let before = st.held().expect("held");
            prop_assert_eq!(&before, &st.beliefs().cloned().collect::<Vec<_>>());
            let role = if hard { Role::Rule } else { Role::Fact };
            let phi = BeliefSpec::new(format!("b{id}"), g.clone())
                .confidence(if hard { 1.0 } else { c })
                .role(role)
                .step(k as u64);
            let rev = match st.announce(phi.clone(), pol) {
                Ok(r) => r,
                Err(EngineError::HardConflict(_)) => {
                    prop_assert_eq!(st.held().expect("held"), before);
                    continue;
                }
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            };
            let after = st.held().expect("held");
            prop_assert_eq!(&after, &expected_after(&before, &phi, &rev), "{:?}", rev);
            prop_assert_eq!(&after, &st.beliefs().cloned().collect::<Vec<_>>());
            prop_assert!(!rev.retracted.contains(&phi.id));
            // Θ is computed on Σ as it stood, a same-id record φ replaces included (issue 27).
            let before_fs: Vec<&Formula> = before.iter().map(|b| &*b.formula).collect();
            prop_assert_eq!(rev.outcome, oracle::theta(&before_fs, &phi.formula));
            // What the policy saw: Σ without a same-id belief that φ replaces.
            let seen: Vec<BeliefSpec> = before
                .iter()
                .filter(|b| b.id != phi.id || (b.formula == phi.formula && b.role == phi.role))
                .cloned()
                .collect();
            let replaced = before.iter().find(|b| b.id == phi.id && !seen.contains(b));
            prop_assert_eq!(
                rev.role_change,
                replaced.filter(|b| rev.applied && b.role != phi.role).map(|b| (b.role, phi.role))
            );
            let seen_fs: Vec<Formula> = seen.iter().map(|b| (*b.formula).clone()).collect();
            let seen_refs: Vec<&Formula> = seen_fs.iter().collect();
            let decided = oracle::theta(&seen_refs, &phi.formula);
            let was_sat = sat(&seen_fs);
            prop_assert_eq!(rev.sigma_was_inconsistent, decided == Outcome::Contradiction && !was_sat);
            let after_fs: Vec<Formula> = after.iter().map(|b| (*b.formula).clone()).collect();
            prop_assert_eq!(rev.sigma_inconsistent, !sat(&after_fs), "{:?}", rev);
            if decided != Outcome::Contradiction {
                prop_assert!(rev.applied);
                continue;
            }
            let mut with_phi = seen.clone();
            with_phi.push(phi.clone());
            if was_sat {
                prop_assert!(is_mus(&with_phi, &rev.conflict, None, &[]), "{:?}", rev.conflict);
                prop_assert_eq!(rev.conflict.last(), Some(&phi.id));
                match pol {
                    Policy::Reject => prop_assert_eq!(&after, &before),
                    Policy::Flag => prop_assert!(rev.sigma_inconsistent || !rev.applied),
                    // Not applied, a replaced record is back as it was, consistent or not.
                    _ if rev.applied || sat(&before.iter().map(|b| (*b.formula).clone()).collect::<Vec<_>>()) => {
                        prop_assert!(sat(&after_fs), "{:?} left Σ inconsistent", pol)
                    }
                    _ => prop_assert_eq!(&after, &before),
                }
            } else {
                prop_assert!(rev.retracted.is_empty(), "retracted from an inconsistent Σ: {:?}", rev);
                prop_assert!(is_mus(&seen, &rev.prior_conflict, None, &[]));
                if !rev.conflict.is_empty() {
                    prop_assert!(is_mus(&with_phi, &rev.conflict, None, &[]));
                    prop_assert_eq!(rev.conflict.last(), Some(&phi.id));
                }
                if pol == Policy::Reject {
                    prop_assert_eq!(&after, &before);
                } else if !hard {
                    prop_assert!(rev.applied);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Regressions, one per item of issue 11 that the engine owns.

/// Item 8: a read-only question does not change later answers.
#[test]
fn queries_do_not_grow_the_domain() {
    let mut st = BeliefState::new().unwrap();
    let rule = f("forall x. Q(x) -> P(x)");
    let first = st.check(&rule, None).unwrap().outcome;
    st.whynot(&f("R(c, d)")).unwrap();
    assert_eq!(st.check(&rule, None).unwrap().outcome, first);
    assert_eq!(first, Outcome::NewInfo);
}

/// Item 8: after `announce P(a); retract P(a)` Σ is empty, and `∃x. P(x)` is new information,
/// not a contradiction; alone it is consistent.
#[test]
fn a_retracted_constant_leaves_the_domain() {
    let mut st = BeliefState::new().unwrap();
    let r = st.announce(spec("pa", "P(a)"), Policy::Reject).unwrap();
    assert!(r.applied);
    assert!(st.retract("pa").unwrap());
    let ex = f("exists x. P(x)");
    assert_eq!(st.check(&ex, None).unwrap().outcome, Outcome::NewInfo);
    st.add(BeliefSpec::new("ex", ex)).unwrap();
    assert!(st.consistent().unwrap().consistent);
    // ∀x. ¬P(x) contradicts it: its instance at the witness of ∃x. P(x).
    assert_eq!(
        st.check(&f("forall x. ~P(x)"), None).unwrap().outcome,
        Outcome::Contradiction
    );
    // A new constant is not the witness (issue 27): ∃x. P(x) does not say P(b), so ¬P(b) is
    // new information, with or without other constants around.
    assert_eq!(
        st.check(&f("~P(b)"), None).unwrap().outcome,
        Outcome::NewInfo
    );
    st.add(spec("qc", "Q(c)")).unwrap();
    assert_eq!(
        st.check(&f("~P(b)"), None).unwrap().outcome,
        Outcome::NewInfo
    );
    assert!(st.retract("qc").unwrap());
    assert_eq!(
        st.check(&f("~P(b)"), None).unwrap().outcome,
        Outcome::NewInfo
    );
    assert!(st.consistent().unwrap().consistent);
}

/// Item 5: announcing an unrelated formula into an inconsistent Σ blames Σ's own conflict,
/// not the formula, and no policy retracts anything.
#[test]
fn announcing_into_an_inconsistent_sigma_blames_nobody_new() {
    for pol in [
        Policy::Greedy,
        Policy::Recency,
        Policy::Confidence,
        Policy::Flag,
        Policy::Reject,
    ] {
        let mut st = BeliefState::new().unwrap();
        st.announce(spec("t1", "domain"), Policy::Flag).unwrap();
        st.announce(spec("t2", "~domain | map_b"), Policy::Flag)
            .unwrap();
        st.announce(spec("t5", "~map_b"), Policy::Flag).unwrap();
        let r = st.announce(spec("u", "p -> q"), pol).unwrap();
        assert!(r.sigma_was_inconsistent, "{pol:?}");
        assert_eq!(r.prior_conflict, vec!["t1", "t2", "t5"], "{pol:?}");
        assert!(r.conflict.is_empty(), "{pol:?}: {:?}", r.conflict);
        assert!(r.retracted.is_empty(), "{pol:?}");
        assert_eq!(r.applied, pol != Policy::Reject, "{pol:?}");
        // A formula that does conflict with a consistent part is named with it.
        let r = st.announce(spec("v", "~q & p"), pol).unwrap();
        if pol != Policy::Reject {
            assert_eq!(r.conflict, vec!["u", "v"], "{pol:?}");
            assert!(r.retracted.is_empty(), "{pol:?}");
        }
    }
}

/// Item 5, the consistent case: the conflict is a minimal set containing the trigger, even
/// when Σ holds other ways to derive the same atoms.
#[test]
fn conflicts_contain_the_trigger_and_are_minimal() {
    let mut st = BeliefState::new().unwrap();
    for (id, s) in [
        ("a", "p"),
        ("b", "p -> q"),
        ("c", "r"),
        ("d", "r -> q"),
        ("e", "s"),
    ] {
        st.add(spec(id, s)).unwrap();
    }
    let r = st.announce(spec("n", "~q"), Policy::Reject).unwrap();
    // Preferred: the earliest beliefs.
    assert_eq!(r.conflict, vec!["a", "b", "n"]);
}

/// Item 9: a re-announcement overwrites confidence and step.
#[test]
fn re_announcement_overwrites_confidence() {
    let mut st = BeliefState::new().unwrap();
    st.announce(spec("g", "g").confidence(0.7).step(1), Policy::Greedy)
        .unwrap();
    st.add(spec("h", "h").confidence(0.9)).unwrap();
    let r = st
        .announce(spec("g", "g").confidence(0.6).step(2), Policy::Greedy)
        .unwrap();
    assert_eq!(r.added, Some(Added::Merged));
    assert_eq!(st.entails(&f("g")).unwrap().degree, Some(0.6));
    let held = st.held().unwrap();
    assert_eq!((held[0].confidence, held[0].step), (0.6, 2));
    assert_eq!(st.beliefs().next().map(|b| b.confidence), Some(0.6));
}

/// Item 11: `flag; ~p @0.8; p @0.95; confidence; ~p @0.7` reports what it did (nothing is
/// retracted from an already inconsistent Σ, and the record of ~p is overwritten).
#[test]
fn no_silent_retraction_under_confidence() {
    let mut st = BeliefState::new().unwrap();
    st.announce(spec("~p", "~p").confidence(0.8), Policy::Flag)
        .unwrap();
    st.announce(spec("p", "p").confidence(0.95), Policy::Flag)
        .unwrap();
    let r = st
        .announce(spec("~p", "~p").confidence(0.7), Policy::Confidence)
        .unwrap();
    assert!(r.sigma_was_inconsistent);
    assert!(r.applied);
    assert!(r.retracted.is_empty());
    let held = st.held().unwrap();
    assert_eq!(held.len(), 2);
    assert_eq!((held[0].id.as_str(), held[0].confidence), ("~p", 0.7));
    assert!(!st.consistent().unwrap().consistent);
}

/// A replacement (same id, another formula) that the policy drops puts the old record back
/// where it was.
#[test]
fn a_dropped_replacement_restores_the_old_record() {
    let mut st = BeliefState::new().unwrap();
    st.add(spec("x", "a").confidence(0.5)).unwrap();
    st.add(spec("y", "b").confidence(0.9)).unwrap();
    let r = st
        .announce(spec("x", "~b").confidence(0.2), Policy::Confidence)
        .unwrap();
    assert!(!r.applied);
    assert!(r.retracted.is_empty());
    assert_eq!(r.conflict, vec!["y", "x"]);
    let held = st.held().unwrap();
    assert_eq!(held, st.beliefs().cloned().collect::<Vec<_>>());
    assert_eq!(held[0], spec("x", "a").confidence(0.5));
    // Under a replacing policy the new record takes over; the old one is not blamed. Θ is
    // the verdict on Σ as it stood, the old record included (issue 27): a contradiction,
    // which the replacement itself resolves, with nothing retracted.
    let r = st.announce(spec("y", "~b"), Policy::Greedy).unwrap();
    assert_eq!(r.outcome, Outcome::Contradiction);
    assert!(r.applied);
    assert!(r.retracted.is_empty());
    assert_eq!(r.role_change, None);
}

/// Supports come sorted by size, then by commitment order, on any history.
#[test]
fn supports_are_sorted() {
    let mut st = BeliefState::new().unwrap();
    for (id, s) in [
        ("a", "p"),
        ("b", "p -> r"),
        ("c", "q"),
        ("d", "q -> r"),
        ("e", "r"),
    ] {
        st.add(spec(id, s)).unwrap();
    }
    let s = st.supports(&f("r"), 8, Duration::from_secs(5)).unwrap();
    assert!(s.complete);
    assert_eq!(s.supports, vec![vec!["e"], vec!["a", "b"], vec!["c", "d"]]);
}
