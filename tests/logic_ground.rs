//! Quantified beliefs: grounding over the active domain (constants and witnesses),
//! re-grounding when it grows, checked against the first-order truth-table oracle
//! (`logic::oracle::fo`), which reads the semantics without the engine's grounding.

use doxascope::logic::engine::{BeliefSpec, BeliefState, Entails, Outcome, Role};
use doxascope::logic::formula::{Atom, Formula, Term};
use doxascope::logic::oracle;
use proptest::prelude::*;

fn p(t: Term) -> Formula {
    Formula::Atom(Atom::Pred("P".into(), vec![t]))
}

fn q(a: Term, b: Term) -> Formula {
    Formula::Atom(Atom::Pred("Q".into(), vec![a, b]))
}

fn c(s: &str) -> Term {
    Term::Const(s.into())
}

fn x() -> Term {
    Term::Var("x".into())
}

fn not(f: Formula) -> Formula {
    Formula::Not(Box::new(f))
}

/// Small formulas over P/1 and Q/2 with constants a, b, c, possibly quantified over x.
fn formula() -> impl Strategy<Value = Formula> {
    let term = prop_oneof![Just(c("a")), Just(c("b")), Just(c("c")), Just(x())];
    let leaf = prop_oneof![
        term.clone().prop_map(p),
        (term.clone(), term).prop_map(|(a, b)| q(a, b)),
    ];
    let body = leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(not),
            prop::collection::vec(inner.clone(), 2..3).prop_map(Formula::Or),
            prop::collection::vec(inner.clone(), 2..3).prop_map(Formula::And),
            (inner.clone(), inner).prop_map(|(a, b)| Formula::Implies(Box::new(a), Box::new(b))),
        ]
    });
    (body, 0..3u8).prop_map(|(b, k)| match k {
        0 => Formula::Forall(vec!["x".into()], Box::new(b)),
        1 => Formula::Exists(vec!["x".into()], Box::new(b)),
        // A free x in an unquantified formula would not be ground; bind it.
        _ => Formula::Forall(vec!["x".into()], Box::new(b)),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn quantified_gate_agrees_with_oracle_as_the_domain_grows(
        items in prop::collection::vec((formula(), any::<bool>()), 1..5),
        queries in prop::collection::vec(formula(), 1..4),
    ) {
        let mut st = BeliefState::new().unwrap();
        let mut held: Vec<Formula> = Vec::new();
        for (i, (f, rule)) in items.iter().enumerate() {
            let role = if *rule { Role::Rule } else { Role::Fact };
            if st.add(BeliefSpec::new(format!("b{i}"), f.clone()).role(role)).is_ok() {
                held.push(f.clone());
            } else {
                // Only a rule contradicting the rules already held is refused.
                prop_assert!(*rule);
            }
        }
        let refs: Vec<&Formula> = held.iter().collect();
        for qf in &queries {
            // The domain: the constants and witnesses of Σ and of the question, nothing else
            // (an empty one is the anonymous individual).
            // Truth tables over more atoms take seconds each in a debug build.
            if oracle::fo::atom_count(&refs, Some(qf)) > 14 {
                continue;
            }
            let expect = oracle::fo::theta(&refs, qf);
            prop_assert_eq!(st.check(qf, None).unwrap().outcome, expect);
            let e = st.entails(qf).unwrap().result;
            let entailed = oracle::fo::entails(&refs, qf);
            prop_assert_eq!(e == Entails::Entailed, entailed);
            let wn = st.whynot(qf).unwrap();
            prop_assert_eq!(wn.countermodel.is_none(), entailed);
            // A question is asked both ways: Σ ⊨ ¬Δ exactly when Δ contradicts a consistent Σ.
            let neg = Formula::Not(Box::new(qf.clone()));
            if st.consistent().unwrap().consistent {
                prop_assert_eq!(
                    st.check(&neg, None).unwrap().outcome == Outcome::Entailed,
                    expect == Outcome::Contradiction
                );
            }
        }
        if oracle::fo::atom_count(&refs, None) <= 14 {
            prop_assert_eq!(st.consistent().unwrap().consistent, oracle::fo::consistent(&refs));
        }
    }
}

#[test]
fn exists_has_a_witness_of_its_own() {
    let mut st = BeliefState::new().unwrap();
    let ex = Formula::Exists(vec!["x".into()], Box::new(p(x())));
    st.add(BeliefSpec::new("e", ex.clone())).unwrap();
    st.add(BeliefSpec::new("nb", not(p(c("b"))))).unwrap();
    // ∃x P(x) is held as P(w), w its witness: ¬P(b) does not contradict it (under the old
    // reading over the known constants, domain {b}, it did).
    assert!(st.consistent().unwrap().consistent);
    // Nor does a new constant get P from it.
    st.add(BeliefSpec::new("r", q(c("c"), c("c")))).unwrap();
    assert!(st.consistent().unwrap().consistent);
    assert_eq!(st.entails(&p(c("c"))).unwrap().result, Entails::Unknown);
    // But Σ entails ∃x P(x) (its witness), and a universal denial contradicts it.
    assert_eq!(st.entails(&ex).unwrap().result, Entails::Entailed);
    let none = Formula::Forall(vec!["x".into()], Box::new(not(p(x()))));
    assert_eq!(
        st.check(&none, None).unwrap().outcome,
        Outcome::Contradiction
    );
    assert_eq!(st.why(&not(none)).unwrap().support, vec!["e".to_string()]);
    // A ∀ rule gains the instances of new constants.
    let all = Formula::Forall(
        vec!["x".into()],
        Box::new(Formula::Implies(Box::new(p(x())), Box::new(q(x(), x())))),
    );
    st.add(BeliefSpec::new("rule", all).role(Role::Rule))
        .unwrap();
    assert_eq!(
        st.check(&q(c("c"), c("c")), None).unwrap().outcome,
        Outcome::Entailed
    );
    st.add(BeliefSpec::new("pd", p(c("d")))).unwrap();
    assert_eq!(
        st.entails(&q(c("d"), c("d"))).unwrap().result,
        Entails::Entailed
    );
}

/// Which quantifiers get witnesses (issue 27): the outer existentials, by polarity, below no
/// quantifier that stays and no `↔`; everything else stays to be grounded.
#[test]
fn witnessed_replaces_exactly_the_outer_existentials() {
    use doxascope::logic::ground::{domain_constants, has_quantifier, is_witness, witnessed};
    use doxascope::logic::parse::parse;
    let witnesses = |s: &str| -> (usize, bool) {
        let f = parse(s).unwrap();
        let w = witnessed(&f);
        let mut d = std::collections::BTreeSet::new();
        domain_constants(&f, &mut d);
        (
            d.iter().filter(|c| is_witness(c)).count(),
            has_quantifier(&w),
        )
    };
    // (formula, witnesses, a quantifier left)
    for (s, n, left) in [
        ("exists x. P(x)", 1, false),
        ("exists x, y. R(x, y)", 2, false),
        ("~(forall x. P(x))", 1, false),
        ("(forall x. P(x)) -> q", 1, false),
        ("q -> exists x. P(x)", 1, false),
        ("~(exists x. P(x))", 0, true),
        ("forall x. P(x)", 0, true),
        ("forall x. exists y. R(x, y)", 0, true),
        ("exists x. forall y. R(x, y)", 1, true),
        ("(exists x. P(x)) <-> q", 0, true),
        ("exists x. p", 0, false),
        ("(exists x. P(x)) & (exists x. ~P(x))", 2, false),
        // Shadowing: the inner x is bound by a quantifier that stays.
        ("exists x. forall x. P(x)", 0, true),
        ("P(a)", 0, false),
    ] {
        assert_eq!(witnesses(s), (n, left), "{s}");
    }
    // The same formula, the same witnesses; another formula, others.
    let a = parse("exists x. P(x)").unwrap();
    let b = parse("exists x. ~P(x)").unwrap();
    assert_eq!(witnessed(&a), witnessed(&a.clone()));
    let (mut da, mut db) = (Default::default(), Default::default());
    domain_constants(&a, &mut da);
    domain_constants(&b, &mut db);
    assert!(da.is_disjoint(&db));
}

/// A question is asked both ways, each with its witnesses (issue 27): a universal question
/// is about every individual, not only the known ones, and `check ¬Δ` is `entailed` exactly
/// when `check Δ` is `contradiction`.
#[test]
fn questions_are_asked_both_ways() {
    use doxascope::logic::parse::parse;
    let f = |s: &str| parse(s).unwrap();
    let mut st = BeliefState::new().unwrap();
    st.add(BeliefSpec::new("pa", f("P(a)"))).unwrap();
    assert_eq!(
        st.check(&f("forall x. P(x)"), None).unwrap().outcome,
        Outcome::NewInfo
    );
    assert_eq!(
        st.entails(&f("exists x. P(x)")).unwrap().result,
        Entails::Entailed
    );
    let mut st = BeliefState::new().unwrap();
    st.add(BeliefSpec::new("qb", f("Q(b)"))).unwrap();
    st.add(BeliefSpec::new("qc", f("Q(c)"))).unwrap();
    let some = f("exists x. (P(x) & ~Q(x))");
    let none = f("~(exists x. (P(x) & ~Q(x)))");
    assert_eq!(st.check(&some, None).unwrap().outcome, Outcome::NewInfo);
    assert_eq!(st.check(&none, None).unwrap().outcome, Outcome::NewInfo);
    assert_eq!(st.entails(&none).unwrap().result, Entails::Unknown);
    // With a rule that makes every individual Q, both sides are decided, and agree.
    st.add(BeliefSpec::new("all", f("forall x. Q(x)")).role(Role::Rule))
        .unwrap();
    assert_eq!(
        st.check(&some, None).unwrap().outcome,
        Outcome::Contradiction
    );
    assert_eq!(st.check(&none, None).unwrap().outcome, Outcome::Entailed);
    assert_eq!(st.entails(&some).unwrap().result, Entails::Contradicted);
}
