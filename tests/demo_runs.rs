//! The demo's systems: the solver never ends inconsistent, the baseline sometimes does, runs
//! are deterministic, and the world's model checker agrees with the SAT engine.

use doxascope::demo::run::{Dialogue, baseline, solver};
use doxascope::demo::world::Lit;
use doxascope::demo::{DemoConfig, Schedule};
use doxascope::logic::engine::{BeliefSpec, BeliefState, Entails, Role};
use doxascope::logic::parse::parse;
use doxascope::logic::revise::Policy;

fn cfg(schedule: Schedule, seed: u64, error_rate: f64, policy: Policy) -> DemoConfig {
    DemoConfig {
        schedule,
        seed,
        turns: 10,
        error_rate,
        policy,
    }
}

#[test]
fn solver_runs_end_consistent_and_baselines_do_not_always() {
    for schedule in [Schedule::Random, Schedule::Stress] {
        let c = cfg(schedule, 7, 0.15, Policy::Greedy);
        let mut baseline_inconsistent = 0;
        let mut retractions = 0;
        for i in 0..40 {
            let d = Dialogue::script(&c, i);
            let b = baseline(&d);
            let s = solver(&d, c.policy).expect("engine");
            assert!(
                s.summary.consistent,
                "{schedule:?} dialogue {i}: solver inconsistent"
            );
            assert!(
                s.engine_consistent,
                "engine and model checker disagree on dialogue {i}"
            );
            baseline_inconsistent += usize::from(!b.consistent);
            retractions += s.summary.retractions;
            // Same replies on both sides: raw accuracy is identical.
            assert_eq!(b.raw_correct, s.summary.raw_correct);
        }
        assert!(
            baseline_inconsistent > 0,
            "{schedule:?}: no inconsistent baseline"
        );
        if schedule == Schedule::Stress {
            assert!(
                retractions > 0,
                "the stress schedule should make GreedySAT retract"
            );
        }
    }
}

#[test]
fn every_consistency_preserving_policy_ends_consistent() {
    for policy in [Policy::Recency, Policy::Confidence, Policy::Reject] {
        let c = cfg(Schedule::Stress, 11, 0.3, policy);
        for i in 0..15 {
            let d = Dialogue::script(&c, i);
            let s = solver(&d, policy).expect("engine");
            assert!(s.summary.consistent, "{policy:?} dialogue {i}");
            assert!(s.engine_consistent);
        }
    }
}

#[test]
fn flag_keeps_every_commitment_like_the_baseline() {
    // `flag` never retracts: the final belief state is the baseline's, so the two agree on
    // consistency, and the engine's verdict matches the model checker's.
    let c = cfg(Schedule::Stress, 5, 0.3, Policy::Flag);
    let mut inconsistent = 0;
    for i in 0..15 {
        let d = Dialogue::script(&c, i);
        let b = baseline(&d);
        let s = solver(&d, Policy::Flag).expect("engine");
        assert_eq!(s.summary.beliefs, b.beliefs, "dialogue {i}");
        assert_eq!(s.summary.consistent, b.consistent);
        assert_eq!(s.engine_consistent, b.consistent);
        assert_eq!(s.summary.retractions, 0);
        inconsistent += usize::from(!b.consistent);
    }
    assert!(inconsistent > 0);
}

#[test]
fn an_agent_without_errors_is_perfect_and_never_revised() {
    for schedule in [Schedule::Random, Schedule::Stress] {
        let c = cfg(schedule, 2, 0.0, Policy::Greedy);
        for i in 0..20 {
            let d = Dialogue::script(&c, i);
            assert!(d.turns.iter().all(|t| t.reply == t.correct));
            let b = baseline(&d);
            let s = solver(&d, c.policy).expect("engine");
            for r in [&b, &s.summary] {
                assert!(r.consistent);
                assert_eq!(r.final_correct, r.turns);
                assert_eq!(r.raw_correct, r.turns);
            }
            assert_eq!((s.summary.retractions, s.summary.refused), (0, 0));
        }
    }
}

#[test]
fn runs_are_deterministic_and_dialogues_independent() {
    let c = cfg(Schedule::Stress, 99, 0.2, Policy::Greedy);
    for i in [0, 3, 17] {
        let a = Dialogue::script(&c, i);
        let b = Dialogue::script(&c, i);
        assert_eq!(a, b);
        assert_eq!(
            solver(&a, c.policy).expect("engine"),
            solver(&b, c.policy).expect("engine")
        );
    }
    // Another seed gives other dialogues.
    let other = cfg(Schedule::Stress, 100, 0.2, Policy::Greedy);
    assert!((0..5).any(|i| Dialogue::script(&c, i) != Dialogue::script(&other, i)));
    // Both schedules ask about the same world.
    let random = cfg(Schedule::Random, 99, 0.2, Policy::Greedy);
    assert_eq!(
        Dialogue::script(&c, 4).world,
        Dialogue::script(&random, 4).world
    );
}

#[test]
fn slips_concentrate_on_negation_and_derived_facts() {
    let c = cfg(Schedule::Random, 3, 0.15, Policy::Greedy);
    let (mut neg, mut neg_wrong, mut plain, mut plain_wrong) = (0, 0, 0, 0);
    for i in 0..300 {
        let d = Dialogue::script(&c, i);
        for t in &d.turns {
            let stated_fact = d
                .world
                .rules
                .iter()
                .any(|r| r.is_fact() && r.head.atom == t.question.atom);
            let wrong = usize::from(t.reply != t.correct);
            if t.question.negated || d.world.is_derived(t.question.atom) {
                neg += 1;
                neg_wrong += wrong;
            } else if stated_fact {
                plain += 1;
                plain_wrong += wrong;
            }
        }
    }
    let hard = neg_wrong as f64 / neg as f64;
    let easy = plain_wrong as f64 / plain as f64;
    assert!(hard > 2.0 * easy, "hard {hard:.3} vs easy {easy:.3}");
}

/// The world's ground truth (brute-force model checking) against the SAT engine.
#[test]
fn world_truth_agrees_with_the_engine() {
    let c = cfg(Schedule::Random, 1, 0.0, Policy::Greedy);
    for i in 0..60 {
        let w = Dialogue::script(
            &DemoConfig {
                seed: i as u64,
                ..c
            },
            0,
        )
        .world;
        let mut st = BeliefState::new().expect("engine");
        for (k, r) in w.rules.iter().enumerate() {
            let f = parse(&r.formula(&w)).expect("rule parses");
            st.add(BeliefSpec::new(format!("r{k}"), f).role(Role::Rule))
                .expect("rule accepted");
        }
        assert!(st.consistent().expect("engine").consistent, "world {i}");
        let decided = w.truth.iter().filter(|t| t.is_some()).count();
        assert!(
            decided >= 2 && decided < w.atoms.len(),
            "world {i} is trivial"
        );
        for (a, name) in w.atoms.iter().enumerate() {
            let e = st.entails(&parse(name).expect("atom")).expect("engine");
            let expected = match w.truth[a] {
                Some(true) => Entails::Entailed,
                Some(false) => Entails::Contradicted,
                None => Entails::Unknown,
            };
            assert_eq!(e.result, expected, "world {i}, atom {name}");
        }
        // And on a random extension by literals: consistency agrees.
        let lits: Vec<Lit> = (0..w.atoms.len())
            .step_by(2)
            .map(|a| Lit {
                atom: a,
                positive: (i + a) % 3 == 0,
            })
            .collect();
        for (k, l) in lits.iter().enumerate() {
            let f = parse(&l.formula(&w)).expect("literal");
            st.add(BeliefSpec::new(format!("b{k}"), f)).expect("add");
        }
        assert_eq!(
            st.consistent().expect("engine").consistent,
            w.consistent_with(&lits),
            "world {i} with {lits:?}"
        );
    }
}

/// Algorithm 1 of seed 003 (and the engine's recency fallback) re-implemented on the world's
/// brute-force model checker: the engine's greedy revisions must match it step by step.
#[test]
fn greedy_revisions_match_algorithm_one_on_the_model_checker() {
    use doxascope::logic::engine::Outcome;
    let mut checked = (0, 0, 0); // (single retractions, fallbacks, refusals)
    for seed in 0..6 {
        let c = cfg(Schedule::Stress, seed, 0.4, Policy::Greedy);
        for i in 0..12 {
            let d = Dialogue::script(&c, i);
            let w = &d.world;
            let run = solver(&d, Policy::Greedy).expect("engine");
            let mut active: Vec<(String, Lit)> = Vec::new();
            let (mut fallbacks, mut refusals) = (0, 0);
            for (t, step) in d.turns.iter().zip(&run.steps) {
                let (Some(lit), Some(s)) = (t.literal, step) else {
                    assert!(t.literal.is_none() && step.is_none());
                    continue;
                };
                let lits = |set: &[(String, Lit)]| -> Vec<Lit> {
                    set.iter().map(|(_, l)| *l).chain([lit]).collect()
                };
                let ctx = format!("seed {seed} dialogue {i} turn {}", t.index);
                if w.consistent_with(&lits(&active)) {
                    assert_ne!(s.theta, Outcome::Contradiction, "{ctx}");
                    assert!(s.applied && s.retracted.is_empty(), "{ctx}");
                    active.push((s.id.clone(), lit));
                    continue;
                }
                assert_eq!(s.theta, Outcome::Contradiction, "{ctx}");
                if !w.consistent_with(&[lit]) {
                    // Contradicts the world's rules alone: no retraction can help.
                    assert!(!s.applied && s.retracted.is_empty(), "{ctx}: {s:?}");
                    assert!(!s.fallback, "{ctx}: a refusal is not a fallback");
                    checked.2 += 1;
                    refusals += 1;
                    continue;
                }
                // Oldest first, the first single retraction that restores satisfiability.
                let single = (0..active.len()).find(|&j| {
                    let mut rest = active.clone();
                    rest.remove(j);
                    w.consistent_with(&lits(&rest))
                });
                let expected: Vec<String> = match single {
                    Some(j) => {
                        assert!(!s.fallback, "{ctx}");
                        checked.0 += 1;
                        vec![active[j].0.clone()]
                    }
                    None => {
                        assert!(s.fallback, "{ctx}: expected the recency fallback");
                        checked.1 += 1;
                        fallbacks += 1;
                        // Newest first, keep what stays consistent with the new literal.
                        let mut kept: Vec<(String, Lit)> = Vec::new();
                        for b in active.iter().rev() {
                            let mut k = kept.clone();
                            k.push(b.clone());
                            if w.consistent_with(&lits(&k)) {
                                kept = k;
                            }
                        }
                        active
                            .iter()
                            .filter(|b| !kept.contains(b))
                            .map(|b| b.0.clone())
                            .collect()
                    }
                };
                assert_eq!(s.retracted, expected, "{ctx}");
                assert!(s.applied, "{ctx}");
                active.retain(|(id, _)| !expected.contains(id));
                active.push((s.id.clone(), lit));
                assert!(w.consistent_with(&lits(&active[..active.len() - 1])));
            }
            let ids: Vec<Lit> = active.iter().map(|(_, l)| *l).collect();
            assert_eq!(run.summary.beliefs, ids);
            // The counts `--eval` prints: fallbacks apart from refusals.
            assert_eq!(
                (run.summary.fallbacks, run.summary.refused),
                (fallbacks, refusals),
                "seed {seed} dialogue {i}"
            );
        }
    }
    assert!(
        checked.0 > 0 && checked.1 > 0 && checked.2 > 0,
        "{checked:?}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Any seed, error rate, schedule and length: greedy ends consistent, both systems see
    /// the same replies, and the baseline is inconsistent exactly when `flag` is.
    #[test]
    fn any_configuration_keeps_the_solver_consistent(
        seed in 0u64..1_000_000,
        error_rate in 0.0f64..1.0,
        stress in proptest::bool::ANY,
        turns in 1usize..25,
        index in 0usize..1000,
    ) {
        let schedule = if stress { Schedule::Stress } else { Schedule::Random };
        let c = DemoConfig { schedule, seed, turns, error_rate, policy: Policy::Greedy };
        let d = Dialogue::script(&c, index);
        proptest::prop_assert_eq!(d.turns.len(), turns);
        let g = solver(&d, Policy::Greedy).expect("engine");
        proptest::prop_assert!(g.summary.consistent && g.engine_consistent);
        let b = baseline(&d);
        let f = solver(&d, Policy::Flag).expect("engine");
        proptest::prop_assert_eq!(f.summary.consistent, b.consistent);
        proptest::prop_assert_eq!(f.engine_consistent, b.consistent);
        proptest::prop_assert!(g.summary.final_correct <= turns);
    }
}
