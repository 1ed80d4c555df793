//! The audit's report does not depend on how it was computed: sessions audited on one
//! thread or several give the same report, and the checks' extra questions answered by the
//! recomputation's own walk or by a separate mirror of Σ (the probe, used when a plain
//! recomputation is given) give the same findings. Minimal sets (conflicts, supports) are
//! the exception: Σ may have several, and which one a solver finds depends on what it was
//! asked before, so there the two may pick different ones: the test requires both to give
//! one or both to give none. (Whether a reported conflict really is a minimal conflict is
//! the oracle tests' business: `model_recompute_oracle`, `audit_differential`.)

use std::path::Path;

use doxascope::model::audit::{AuditOptions, Finding, Report, audit, audit_recomputed};
use doxascope::model::{Model, RecomputeOptions};
use doxascope::trace::generate::{GenConfig, write_mixed};
use serde_json::Value;

fn generated(events: u64, sessions: u32, seed: u64) -> Model {
    generated_with(events, sessions, seed, 40)
}

fn generated_with(events: u64, sessions: u32, seed: u64, atoms: u32) -> Model {
    let cfg = GenConfig {
        events,
        seed,
        sessions,
        atoms,
    };
    let mut bytes = Vec::new();
    write_mixed(&mut bytes, &cfg).expect("generator");
    Model::from_bytes("gen.jsonl", &bytes)
}

fn threads(n: usize) -> AuditOptions {
    AuditOptions {
        threads: n,
        ..AuditOptions::default()
    }
}

/// The checks asking a probe instead of reading the recomputation's answers.
fn via_probe(model: &Model, opts: &AuditOptions) -> Report {
    let plain_opts = RecomputeOptions {
        audit: None,
        ..RecomputeOptions::default()
    };
    let plain: Vec<_> = model
        .timelines()
        .iter()
        .filter_map(|tl| model.recompute(tl.name(), &plain_opts))
        .collect();
    assert!(plain.iter().all(|r| r.audit.is_none()));
    audit_recomputed(model, &plain, opts)
}

/// Evidence keys holding a minimal set (or lists of them) the solver chose.
const CHOSEN: [&str; 4] = ["conflict", "conflict_after", "conflicts", "supports"];

/// A finding with the solver's choice of minimal sets left out (the message and `ids` name
/// them too).
fn unchosen(f: &Finding) -> Value {
    let mut v = f.to_json();
    if let Some(o) = v.as_object_mut() {
        o.remove("ids");
        o.remove("message");
        if let Some(Value::Object(ev)) = o.get_mut("evidence") {
            for k in CHOSEN {
                if let Some(x) = ev.remove(k) {
                    let empty = x.as_array().is_none_or(|a| a.is_empty());
                    ev.insert(format!("{k}_given"), Value::Bool(!empty));
                }
            }
        }
    }
    v
}

/// Same findings, up to the choice of minimal sets.
fn assert_same_findings(a: &Report, b: &Report, what: &str) {
    assert_eq!(a.findings.len(), b.findings.len(), "{what}: finding counts");
    for (x, y) in a.findings.iter().zip(&b.findings) {
        assert_eq!(unchosen(x), unchosen(y), "{what}");
    }
    assert_eq!(a.matrix, b.matrix, "{what}");
    assert_eq!(a.sessions, b.sessions, "{what}");
    assert_eq!(
        (a.verifies, a.recomputed),
        (b.verifies, b.recomputed),
        "{what}"
    );
}

fn assert_same(a: &Report, b: &Report, what: &str) {
    assert_eq!(a.findings.len(), b.findings.len(), "{what}: finding counts");
    for (x, y) in a.findings.iter().zip(&b.findings) {
        assert_eq!(x, y, "{what}");
    }
    assert_eq!(a, b, "{what}");
    assert_eq!(a.to_json(), b.to_json(), "{what}");
}

#[test]
fn parallel_audit_equals_sequential() {
    for seed in [3, 11] {
        let model = generated(1_000, 6, seed);
        assert!(model.timelines().len() > 1);
        let one = audit(&model, &threads(1));
        assert!(!one.findings.is_empty(), "the generated trace has findings");
        for n in [2, 4] {
            assert_same(&one, &audit(&model, &threads(n)), "threads");
        }
        assert_same(&one, &audit(&model, &AuditOptions::default()), "default");
    }
}

#[test]
fn answers_from_the_recomputation_equal_the_probe() {
    for (seed, atoms) in [(1, 12), (2, 12), (5, 40)] {
        let model = generated_with(1_000, 3, seed, atoms);
        let direct = audit(&model, &threads(1));
        assert_same_findings(&direct, &via_probe(&model, &threads(1)), "generated");
    }
    let model = generated(1_000, 4, 5);
    // Revisions re-run under a policy chosen by the user, too.
    let opts = AuditOptions {
        policy: Some(doxascope::logic::revise::Policy::Recency),
        ..threads(1)
    };
    assert_same_findings(&audit(&model, &opts), &via_probe(&model, &opts), "recency");
}

#[test]
fn samples_audit_the_same_either_way() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("sample-traces") {
        let p = e.expect("entry").path();
        if p.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let model = Model::load(&[&p]).expect("sample");
        let direct = audit(&model, &AuditOptions::default());
        let name = p.display().to_string();
        assert_same_findings(&direct, &via_probe(&model, &AuditOptions::default()), &name);
        n += 1;
    }
    assert!(n >= 5, "the samples are there");
}
