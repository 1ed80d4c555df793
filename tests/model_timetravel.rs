//! Time travel: the state at any step equals a fresh replay of the events up to that step,
//! and Σ equals an independent naive replay.

use doxascope::model::bdi::BdiState;
use doxascope::model::{BeliefView, Model};
use doxascope::trace::event::Body;
use doxascope::trace::generate::{GenConfig, write_mixed};
use doxascope::trace::{Item, TraceLog};
use proptest::prelude::*;

/// What a user sees of Σ: ids, formulas, announcement steps and origins.
fn sigma_proj(s: &[BeliefView<'_>]) -> Vec<(String, String, u32, u64)> {
    s.iter()
        .map(|b| {
            (
                b.id().to_string(),
                b.formula_text().to_string(),
                b.step(),
                b.origin().line,
            )
        })
        .collect()
}

/// What a user sees of the BDI state, without log positions (which differ between logs).
fn bdi_proj(b: &BdiState<'_>) -> String {
    let ground: Vec<_> = b
        .ground
        .iter()
        .map(|g| (g.name, g.value.cloned(), g.step, g.writes))
        .collect();
    let plans: Vec<_> = b
        .plans
        .iter()
        .map(|p| {
            (
                p.id,
                p.step,
                p.steps
                    .iter()
                    .map(|s| {
                        (
                            s.def.id.clone(),
                            s.state,
                            s.post_met,
                            s.checks
                                .iter()
                                .map(|c| (c.tier, c.ok, c.step))
                                .collect::<Vec<_>>(),
                        )
                    })
                    .collect::<Vec<_>>(),
                p.deadlocked(),
            )
        })
        .collect();
    let lib: Vec<_> = b
        .library
        .iter()
        .map(|e| {
            (
                e.id,
                e.versions,
                e.use_count,
                e.success_count,
                e.failure_count,
            )
        })
        .collect();
    format!(
        "{:?}|{:?}|{ground:?}|{:?}|{plans:?}|{:?}|{lib:?}|{}",
        b.schema_beliefs,
        b.desires,
        b.intention.map(|i| (i.id, i.step)),
        b.satisfaction,
        b.reviews.len()
    )
}

/// A from-scratch Σ: apply announces, ground-belief writes (a member named by the belief,
/// a rewrite moving it to the end as a new record) and id-targeted retracts in order.
fn naive_sigma(log: &TraceLog, session: &str, t: usize) -> Vec<String> {
    let mut active: Vec<String> = Vec::new();
    let events = log.events.iter().filter(|e| &*e.session == session).take(t);
    for e in events {
        match &e.body {
            Body::Announce(_) => {
                let id =
                    e.id.as_ref()
                        .expect("generated announces carry ids")
                        .to_string();
                if !active.contains(&id) {
                    active.push(id);
                }
            }
            Body::Retract(r) => active.retain(|x| *x != r.target),
            Body::Belief(b) => {
                active.retain(|x| *x != b.name);
                active.push(b.name.to_string());
            }
            Body::Step(st) if st.status == Some(doxascope::trace::event::StepStatus::Done) => {
                for b in &st.new_beliefs {
                    active.retain(|x| *x != b.name);
                    active.push(b.name.to_string());
                }
            }
            _ => {}
        }
    }
    active
}

fn generated(events: u64, seed: u64, sessions: u32) -> Vec<u8> {
    let mut buf = Vec::new();
    write_mixed(
        &mut buf,
        &GenConfig {
            events,
            seed,
            sessions,
            atoms: 30,
        },
    )
    .expect("in-memory write");
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_step_equals_a_fresh_replay(
        seed in any::<u64>(),
        events in 50u64..1500,
        sessions in 1u32..4,
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 4),
    ) {
        let bytes = generated(events, seed, sessions);
        let model = Model::from_bytes("gen.jsonl", &bytes);
        for tl in model.timelines() {
            for pick in &picks {
                let t = pick.index(tl.len() as usize + 1) as u32;
                // Fresh replay: only this session's first t events.
                let mut log = TraceLog::new();
                log.extend(
                    tl.event_positions()[..t as usize]
                        .iter()
                        .map(|&p| Item::Event(model.log().events.get(p as usize).expect("event").clone())),
                );
                let fresh = Model::from_log(log);
                let sigma = tl.sigma_at(model.log(), t);
                let bdi = model.bdi_at(tl.name(), t).unwrap();
                match fresh.timeline(tl.name()) {
                    Some(f) => {
                        prop_assert_eq!(f.len(), t);
                        prop_assert_eq!(
                            sigma_proj(&sigma),
                            sigma_proj(&f.sigma_at(fresh.log(), t))
                        );
                        prop_assert_eq!(
                            bdi_proj(&bdi),
                            bdi_proj(&fresh.bdi_at(tl.name(), t).unwrap())
                        );
                    }
                    None => {
                        prop_assert_eq!(t, 0);
                        prop_assert!(sigma.is_empty());
                        prop_assert!(bdi.plans.is_empty() && bdi.ground.is_empty());
                    }
                }
                let ids: Vec<String> = sigma.iter().map(|b| b.id().to_string()).collect();
                prop_assert_eq!(ids, naive_sigma(model.log(), tl.name(), t as usize));
            }
        }
    }
}

#[test]
fn steps_and_seqs_translate() {
    let bytes = generated(400, 7, 3);
    let model = Model::from_bytes("gen.jsonl", &bytes);
    for tl in model.timelines() {
        for t in 1..=tl.len() {
            let seq = tl.seq_at(model.log(), t).unwrap();
            assert_eq!(tl.step_of_seq(model.log(), seq), Some(t));
        }
        assert_eq!(tl.seq_at(model.log(), 0), None);
        assert_eq!(tl.seq_at(model.log(), tl.len() + 1), None);
    }
}
