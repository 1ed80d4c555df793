//! The demo's trace through the model layer: the replay has no per-event errors, and the
//! recomputation agrees with every gate verdict the demo wrote and finds Σ consistent after
//! every revision, under every consistency-keeping policy.

use doxascope::demo::{DemoConfig, Schedule, write_trace};
use doxascope::logic::revise::Policy;
use doxascope::model::audit::{AuditOptions, Code, audit, render_text};
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
        let refusals = bytes
            .split(|b| *b == b'\n')
            .filter(|l| l.windows(9).any(|w| w == b"\"refused "))
            .count();
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
        // `reject` never retracts: its contradictions are all refusals, which are no
        // revision of Σ.
        if policy == Policy::Reject {
            assert_eq!(revisions, 0);
            assert!(refusals > 0, "{schedule:?}: nothing was refused");
        } else {
            assert!(
                revisions > 0,
                "{policy:?} {schedule:?}: nothing was revised"
            );
        }
    }
}

fn trace(cfg: &DemoConfig, dialogues: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_trace(cfg, dialogues, &mut bytes).expect("trace");
    bytes
}

/// The audit of the demo's own traces: a refused commitment never entered Σ, so it must not
/// read as Σ going back and forth. The two runs named in issue 16 audited as 2 and 7
/// oscillations before refused commitments stopped being written as announce + retract.
#[test]
fn the_demo_traces_audit_clean() {
    for (cfg, n) in [
        (
            DemoConfig {
                schedule: Schedule::Random,
                seed: 7,
                error_rate: 0.3,
                ..DemoConfig::default()
            },
            3,
        ),
        (DemoConfig::default(), 20),
        (
            DemoConfig {
                policy: Policy::Reject,
                error_rate: 0.3,
                ..DemoConfig::default()
            },
            20,
        ),
    ] {
        let model = Model::from_bytes("demo.jsonl", &trace(&cfg, n));
        let report = audit(&model, &AuditOptions::default());
        assert!(
            report.findings.is_empty(),
            "{cfg:?}: {}",
            render_text(&report)
        );
    }
}

/// Over many runs, every policy that keeps Σ consistent: no refused commitment is announced,
/// and the only findings are oscillations (and flip-flops) the simulated agent really caused,
/// between states made of commitments it did announce (the stress schedule asks P, then ¬P,
/// then P again, and a slipping agent flips with it).
#[test]
fn refused_commitments_are_never_announced_and_audit_findings_are_real() {
    for policy in [
        Policy::Greedy,
        Policy::Recency,
        Policy::Confidence,
        Policy::Reject,
    ] {
        for schedule in [Schedule::Stress, Schedule::Random] {
            for seed in 1..=3 {
                let cfg = DemoConfig {
                    schedule,
                    seed,
                    error_rate: 0.3,
                    policy,
                    ..DemoConfig::default()
                };
                let bytes = trace(&cfg, 10);
                let text = String::from_utf8(bytes.clone()).expect("UTF-8");
                let mut announced = std::collections::BTreeSet::new();
                for line in text.lines() {
                    let v: serde_json::Value = serde_json::from_str(line).expect("JSON");
                    let session = v["session"].as_str().unwrap_or("").to_string();
                    match v["kind"].as_str() {
                        Some("announce") => {
                            announced.insert((session, v["id"].as_str().unwrap_or("").to_string()));
                        }
                        Some("log") => {
                            let m = v["message"].as_str().unwrap_or("");
                            if let Some(rest) = m.strip_prefix("refused ") {
                                let id = rest.split(' ').next().unwrap_or("").to_string();
                                assert!(
                                    !announced.contains(&(session, id.clone())),
                                    "{cfg:?}: refused {id} was announced"
                                );
                            }
                        }
                        _ => {}
                    }
                }
                let model = Model::from_bytes("demo.jsonl", &bytes);
                let report = audit(&model, &AuditOptions::default());
                for f in &report.findings {
                    // A flip-flop is the same slip seen on one belief (P, ¬P, P).
                    assert!(
                        matches!(f.code, Code::Oscillation | Code::FlipFlop),
                        "{cfg:?}: {}",
                        render_text(&report)
                    );
                    for id in &f.ids {
                        assert!(
                            announced.contains(&(f.session.clone(), id.clone())),
                            "{cfg:?}: oscillation over {id}, never announced"
                        );
                    }
                }
            }
        }
    }
}
