//! `whatif`: with the policy a run used it reproduces the run (the same Σ at every step, no
//! verdict changed); with another policy every changed verdict agrees with a fresh engine
//! asked on the alternative Σ; every alternative repair is a minimal correction by truth
//! table. The runs are the belief-revision demo's (seed 003), written under each policy.

use std::collections::BTreeSet;

use doxascope::demo::{DemoConfig, Schedule, write_trace};
use doxascope::logic::engine::{BeliefSpec, BeliefState, Entails, Role};
use doxascope::logic::formula::Formula;
use doxascope::logic::oracle;
use doxascope::logic::revise::Policy;
use doxascope::model::Model;
use doxascope::model::recompute::RecomputeOptions;
use doxascope::model::whatif::{run_policy, whatif};
use doxascope::repl::{ModelSigma, Repl};

const POLICIES: [Policy; 5] = [
    Policy::Greedy,
    Policy::Recency,
    Policy::Confidence,
    Policy::Reject,
    Policy::Flag,
];

fn demo(policy: Policy, seed: u64) -> Model {
    let cfg = DemoConfig {
        schedule: Schedule::Stress,
        seed,
        turns: 10,
        error_rate: 0.4,
        policy,
    };
    let mut bytes = Vec::new();
    write_trace(&cfg, 3, &mut bytes).expect("demo trace");
    Model::from_bytes("demo.jsonl", &bytes)
}

fn opts() -> RecomputeOptions {
    RecomputeOptions {
        audit: None,
        ..RecomputeOptions::default()
    }
}

#[test]
fn the_runs_own_policy_reproduces_the_run() {
    let mut revisions = 0;
    for policy in POLICIES {
        for seed in 1..=3 {
            let m = demo(policy, seed);
            for tl in m.timelines() {
                let used = run_policy(tl, m.log());
                assert!(used.is_none() || used == Some(policy));
                revisions += tl.revisions().len();
                for from in [0, tl.len() / 2] {
                    let w = whatif(tl, m.log(), policy, from, &opts());
                    for t in 0..=tl.len() {
                        let real: BTreeSet<(String, u32)> = tl
                            .sigma_at(m.log(), t)
                            .iter()
                            .map(|v| (v.id().to_string(), v.index))
                            .collect();
                        let alt: BTreeSet<(String, u32)> = w
                            .alt_at(t)
                            .iter()
                            .map(|r| (r.id.clone(), r.record))
                            .collect();
                        assert_eq!(
                            alt,
                            real,
                            "{policy:?} seed {seed} session {} from {from}, step {t}",
                            tl.name()
                        );
                    }
                    assert!(w.changed.is_empty(), "{:#?}", w.changed);
                    assert_eq!(w.not_checkable, 0);
                    for d in &w.decisions {
                        let alt = d.alt.as_ref().expect("decided");
                        let a: BTreeSet<&String> = alt.retracted.iter().collect();
                        let r: BTreeSet<&String> = d.real_retracted.iter().collect();
                        assert_eq!(a, r, "{policy:?} at step {}", d.step);
                        assert!(alt.applied, "the trace announced it");
                        // The run's own repair is listed when it is a minimal one.
                        let reps = d.repairs.as_ref().expect("repairs");
                        if !r.is_empty() && policy != Policy::Greedy {
                            assert!(reps.repairs.iter().any(|x| x.real && x.alternative));
                        }
                    }
                }
            }
        }
    }
    assert!(
        revisions >= 10,
        "only {revisions} revisions: the test proves little"
    );
}

fn sigma_of(m: &Model, tl_name: &str, ids: &[(String, u32)]) -> Vec<(String, Formula, Role)> {
    let tl = m.timeline(tl_name).unwrap();
    ids.iter()
        .map(|(id, rec)| {
            let v = tl.belief(m.log(), *rec).unwrap();
            let role = match v.role() {
                doxascope::trace::event::Role::Rule => Role::Rule,
                doxascope::trace::event::Role::Norm => Role::Norm,
                doxascope::trace::event::Role::Assumption => Role::Assumption,
                doxascope::trace::event::Role::Fact => Role::Fact,
            };
            (id.clone(), v.formula().unwrap(), role)
        })
        .collect()
}

#[test]
fn another_policy_changes_verdicts_as_a_fresh_engine_says_and_repairs_are_minimal() {
    let mut changed = 0;
    let mut repairs_checked = 0;
    for (real, alt) in [
        (Policy::Greedy, Policy::Reject),
        (Policy::Flag, Policy::Recency),
        (Policy::Reject, Policy::Confidence),
    ] {
        for seed in 1..=3 {
            let m = demo(real, seed);
            for tl in m.timelines() {
                let w = whatif(tl, m.log(), alt, 0, &opts());
                for c in &w.changed {
                    changed += 1;
                    // The alternative Σ just before the event, asked afresh.
                    let ids: Vec<(String, u32)> = w
                        .alt_at(c.step - 1)
                        .iter()
                        .map(|r| (r.id.clone(), r.record))
                        .collect();
                    let mut st = BeliefState::new().unwrap();
                    for (id, f, role) in sigma_of(&m, tl.name(), &ids) {
                        let spec = BeliefSpec::new(id, f).role(role);
                        if st.add(spec.clone()).is_err() {
                            st.add(spec.role(Role::Assumption)).unwrap();
                        }
                    }
                    let f = doxascope::logic::parse::parse(&c.formula).unwrap();
                    let got = match c.kind {
                        "verify" => st.check(&f, None).unwrap().theta.as_str().to_string(),
                        _ => {
                            let e = st.entails(&f).unwrap();
                            let s = if !e.sigma_consistent {
                                "inconsistent"
                            } else {
                                match e.result {
                                    Entails::Entailed => "entailed",
                                    Entails::Contradicted => "contradicted",
                                    Entails::Unknown => "unknown",
                                }
                            };
                            if c.kind == "turn" {
                                match s {
                                    "entailed" => "YES",
                                    "contradicted" => "NO",
                                    "unknown" => "UNKNOWN",
                                    o => o,
                                }
                                .to_string()
                            } else {
                                s.to_string()
                            }
                        }
                    };
                    assert_eq!(got, c.alt, "{c:?}");
                    assert_ne!(c.real, c.alt);
                }
                // Every repair: what it leaves is satisfiable, and putting back any one of
                // what it gives up is not (truth table over Σ before the announcement plus
                // the new belief).
                for d in &w.decisions {
                    let Ok(reps) = &d.repairs else { continue };
                    // The Σ of the side that revised: the real one when the run did.
                    let before: Vec<(String, u32)> = if d.revision.is_some() {
                        tl.sigma_at(m.log(), d.step - 1)
                            .iter()
                            .filter(|v| v.id() != d.id)
                            .map(|v| (v.id().to_string(), v.index))
                            .collect()
                    } else {
                        w.alt_at(d.step - 1)
                            .iter()
                            .filter(|r| r.id != d.id)
                            .map(|r| (r.id.clone(), r.record))
                            .collect()
                    };
                    let mut all = sigma_of(&m, tl.name(), &before);
                    let new = tl.belief(m.log(), d.record).unwrap().formula().unwrap();
                    all.push((d.id.clone(), new, Role::Fact));
                    let fs: Vec<&Formula> = all.iter().map(|x| &x.1).collect();
                    if oracle::atoms(&fs).len() > 16 {
                        continue;
                    }
                    let left = |out: &BTreeSet<&str>| -> Vec<&Formula> {
                        all.iter()
                            .filter(|x| !out.contains(x.0.as_str()))
                            .map(|x| &x.1)
                            .collect()
                    };
                    assert!(
                        reps.repairs.iter().all(|r| !r.retract.is_empty()),
                        "a revision whose conflict needs no repair: {reps:?}"
                    );
                    for r in &reps.repairs {
                        let out: BTreeSet<&str> = r.retract.iter().map(String::as_str).collect();
                        assert!(oracle::satisfiable(&left(&out)), "not a repair: {r:?}");
                        for x in &r.retract {
                            let mut fewer = out.clone();
                            fewer.remove(x.as_str());
                            assert!(!oracle::satisfiable(&left(&fewer)), "not minimal: {r:?}");
                            let hard = all.iter().any(|b| b.0 == *x && b.2.is_hard());
                            assert!(!hard, "a repair gave up a rule: {r:?}");
                        }
                        repairs_checked += 1;
                    }
                }
            }
        }
    }
    assert!(changed > 0, "no verdict changed: the test proves little");
    assert!(
        repairs_checked > 10,
        "only {repairs_checked} repairs checked"
    );
}

#[test]
fn whatif_in_the_repl_and_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.jsonl");
    let cfg = DemoConfig {
        schedule: Schedule::Stress,
        seed: 2,
        turns: 10,
        error_rate: 0.4,
        policy: Policy::Greedy,
    };
    let mut bytes = Vec::new();
    write_trace(&cfg, 1, &mut bytes).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let m = Model::from_bytes("g.jsonl", &bytes);
    let session = m.timelines()[0].name().to_string();
    let mut r = Repl::new(Box::new(ModelSigma::new(std::sync::Arc::new(m), session)));
    let same = r.run_line("whatif greedy").unwrap().to_json("whatif");
    assert_eq!(same["policy"], "greedy");
    assert_eq!(same["run_policy"], "greedy");
    assert_eq!(same["changed"], serde_json::json!([]));
    assert_eq!(same["only_real"], serde_json::json!([]));
    assert_eq!(same["only_alternative"], serde_json::json!([]));
    let other = r
        .run_line("whatif reject from 3")
        .unwrap()
        .to_json("whatif");
    assert_eq!(other["from"], 3);
    assert!(!other["decisions"].as_array().unwrap().is_empty());
    let d = &other["decisions"][0];
    assert!(
        d["repairs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["alternative"] == true)
    );
    assert!(r.run_line("whatif sometimes").is_err());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["whatif", "reject", path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["policy"], "reject");
    assert_eq!(v["stopped_at"], serde_json::Value::Null);
    // The command line answers what the REPL answers for the same question.
    let in_repl = r.run_line("whatif reject").unwrap().to_json("whatif");
    assert_eq!(v["decisions"], in_repl["decisions"]);
    // The file is named as it was given (a path here, a name in the REPL's model).
    let without_file = |x: &serde_json::Value| {
        let mut x = x.clone();
        for c in x.as_array_mut().unwrap() {
            c["event"]["file"] = serde_json::Value::Null;
        }
        x
    };
    assert_eq!(
        without_file(&v["changed"]),
        without_file(&in_repl["changed"])
    );
    assert!(!v["decisions"].as_array().unwrap().is_empty());

    // A walk's budget that has run out before the first step: the answer says where it
    // stopped, shows both Σs before it, and compares nothing.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args([
            "whatif",
            "reject",
            path.to_str().unwrap(),
            "--budget",
            "1e-9",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("the walk's budget ran out at step 1"),
        "{text}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args([
            "whatif",
            "reject",
            path.to_str().unwrap(),
            "--budget",
            "1e-9",
        ])
        .arg("--json")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stopped_at"], 1);
    assert_eq!(v["at"], 0);
    assert_eq!(v["compared"], 0);
    assert_eq!(v["decisions"], serde_json::json!([]));
    for bad in ["0", "-1", "nan"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
            .args(["whatif", "reject", path.to_str().unwrap()])
            .arg(format!("--budget={bad}"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--budget {bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--budget"));
    }
}

/// The walk's overall budget stops it and says where; nothing past that is compared, and the
/// alternative Σ up to there is the real one (no decision could differ yet).
#[test]
fn the_walks_budget_stops_it_and_says_where() {
    use doxascope::model::whatif::whatif_within;
    let m = demo(Policy::Greedy, 1);
    let tl = &m.timelines()[0];
    let w = whatif_within(
        tl,
        m.log(),
        Policy::Reject,
        5,
        &opts(),
        Some(std::time::Duration::ZERO),
    );
    assert_eq!(w.stopped_at, Some(6));
    assert!(w.changed.is_empty() && w.decisions.is_empty());
    assert_eq!(w.compared, 0);
    for t in 0..=5 {
        let real: BTreeSet<u32> = tl.sigma_at(m.log(), t).iter().map(|v| v.index).collect();
        let alt: BTreeSet<u32> = w.alt_at(t).iter().map(|r| r.record).collect();
        assert_eq!(alt, real, "step {t}");
    }
    let full = whatif_within(tl, m.log(), Policy::Reject, 5, &opts(), None);
    assert_eq!(full.stopped_at, None);
}
