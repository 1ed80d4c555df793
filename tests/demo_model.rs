//! The demo's trace through the model layer: the replay has no per-event errors, and the
//! recomputation agrees with every gate verdict the demo wrote and finds Σ consistent after
//! every revision, under every consistency-keeping policy.

use doxascope::demo::{DemoConfig, Schedule, write_trace};
use doxascope::logic::revise::Policy;
use doxascope::model::{Model, RecomputeOptions};

#[test]
fn the_model_recomputes_the_demo_trace_without_disagreement() {
    for (policy, schedule) in [
        (Policy::Greedy, Schedule::Stress),
        (Policy::Greedy, Schedule::Random),
        (Policy::Recency, Schedule::Stress),
        (Policy::Reject, Schedule::Stress),
    ] {
        let cfg = DemoConfig {
            schedule,
            seed: 13,
            turns: 10,
            error_rate: 0.3,
            policy,
        };
        let mut bytes = Vec::new();
        write_trace(&cfg, 8, &mut bytes).expect("trace");
        let model = Model::from_bytes("demo.jsonl", &bytes);
        assert_eq!(model.sessions().len(), 8);
        let mut revisions = 0;
        for tl in model.timelines() {
            assert!(
                tl.errors().is_empty(),
                "{policy:?} {}: {:?}",
                tl.name(),
                tl.errors()
            );
            assert_eq!(tl.reader_problems(), 0);
            let r = model
                .recompute(tl.name(), &RecomputeOptions::default())
                .expect("session");
            assert!(r.errors.is_empty(), "{:?}", r.errors);
            for v in &r.verifies {
                assert_eq!(v.agrees(), Some(true), "{policy:?} {}: {v:?}", tl.name());
            }
            for rev in &r.revisions {
                revisions += 1;
                let (after, conflict) = rev.after.clone().expect("recomputed");
                assert!(
                    after,
                    "{policy:?} {}: Σ inconsistent after a revision {conflict:?}",
                    tl.name()
                );
                assert!(rev.retracted.iter().all(|c| c.was_active), "{rev:?}");
            }
            let last = tl.len();
            let sigma = model.sigma_at(tl.name(), last).expect("sigma");
            assert!(!sigma.is_empty());
        }
        assert!(
            revisions > 0,
            "{policy:?} {schedule:?}: nothing was revised"
        );
    }
}
