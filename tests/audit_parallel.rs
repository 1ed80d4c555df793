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

/// Whether Σ was consistent before a retraction by revision no `revise` decided comes from
/// the recomputation's walk; a plain recomputation leaves it to the probe. Both must find
/// the same unforced retractions, also where the recomputation cannot answer (quantified
/// beliefs held, a formula that does not parse, a rule against the facts) and the check
/// falls back to the probe. The same for the thoughts judged through Θ.
#[test]
fn unforced_retractions_from_the_recomputation_equal_the_probe() {
    let traces: [&[&str]; 4] = [
        &[
            r#"{"kind":"announce","id":"a","formula":"p"}"#,
            r#"{"kind":"announce","id":"b","formula":"q"}"#,
            r#"{"kind":"thought","asserts":["!q","r","q | s","((("]}"#,
            r#"{"kind":"retract","target":"a","by":"revision"}"#,
            r#"{"kind":"announce","id":"c","formula":"!q"}"#,
            r#"{"kind":"thought","asserts":["q"]}"#,
            r#"{"kind":"retract","target":"c","by":"revision"}"#,
            r#"{"kind":"announce","id":"b","formula":"r"}"#,
            r#"{"kind":"retract","target":"b","by":"revision"}"#,
        ],
        &[
            r#"{"kind":"announce","id":"q1","formula":"forall x. P(x) -> Q(x)"}"#,
            r#"{"kind":"announce","id":"f1","formula":"P(a)"}"#,
            r#"{"kind":"thought","id":"t1","asserts":["!Q(a)","Q(b)"]}"#,
            r#"{"kind":"announce","id":"g","formula":"Q(b)","because":["t1"]}"#,
            r#"{"kind":"retract","target":"f1","by":"revision"}"#,
            r#"{"kind":"announce","id":"f2","formula":"!Q(b)"}"#,
            r#"{"kind":"announce","id":"f3","formula":"P(b)"}"#,
            r#"{"kind":"retract","target":"f3","by":"revision"}"#,
            r#"{"kind":"retract","target":"q1","by":"revision"}"#,
            r#"{"kind":"announce","id":"f4","formula":"P(c)"}"#,
            r#"{"kind":"retract","target":"f4","by":"revision"}"#,
        ],
        &[
            r#"{"kind":"announce","id":"x","formula":"p & (","role":"fact"}"#,
            r#"{"kind":"announce","id":"y","formula":"p"}"#,
            r#"{"kind":"thought","asserts":["!p","forall x. P(x)"]}"#,
            r#"{"kind":"retract","target":"y","by":"revision"}"#,
            r#"{"kind":"retract","target":"x","by":"revision"}"#,
            r#"{"kind":"announce","id":"r1","formula":"p -> q","role":"rule"}"#,
            r#"{"kind":"announce","id":"r2","formula":"p & !q","role":"fact"}"#,
            r#"{"kind":"announce","id":"r3","formula":"!(p -> q)","role":"rule"}"#,
            r#"{"kind":"retract","target":"r2","by":"revision"}"#,
            r#"{"kind":"retract","target":"r3","by":"revision"}"#,
        ],
        &[
            r#"{"kind":"announce","id":"a","formula":"p"}"#,
            r#"{"kind":"announce","id":"b","formula":"!p"}"#,
            r#"{"kind":"revise","trigger":"b","retracted":["a"],"policy":"greedy"}"#,
            r#"{"kind":"retract","target":"a","by":"revision"}"#,
            r#"{"kind":"retract","target":"b","by":"revision"}"#,
            r#"{"kind":"announce","id":"a","formula":"p"}"#,
            r#"{"kind":"retract","target":"a","by":"revision"}"#,
        ],
    ];
    let unforced = |r: &Report| -> Vec<(Option<u32>, String)> {
        r.findings
            .iter()
            .filter(|f| f.evidence.get("unforced") == Some(&true.into()))
            .map(|f| (f.step, f.message.clone()))
            .collect()
    };
    let (mut total, mut thoughts) = (0, 0);
    for lines in traces {
        let text = lines.join("\n") + "\n";
        let model = Model::from_bytes("h.jsonl", text.as_bytes());
        let direct = audit(&model, &threads(1));
        let probed = via_probe(&model, &threads(1));
        assert_eq!(unforced(&direct), unforced(&probed), "{text}");
        assert_same_findings(&direct, &probed, &text);
        total += unforced(&direct).len();
        thoughts += direct
            .findings
            .iter()
            .filter(|f| {
                f.code.as_str().starts_with("thought")
                    || f.code.as_str().contains("thought-premise")
            })
            .count();
    }
    assert!(total >= 5, "the traces retract unforced ({total})");
    assert!(thoughts >= 2, "the thoughts are judged ({thoughts})");
    // And on generated traces, which retract by revision without a revise now and then.
    let mut generated_total = 0;
    for seed in [7, 9, 13] {
        let model = generated(3_000, 2, seed);
        let direct = audit(&model, &threads(1));
        generated_total += unforced(&direct).len();
        assert_eq!(
            unforced(&direct),
            unforced(&via_probe(&model, &threads(1))),
            "seed {seed}"
        );
    }
    assert!(generated_total > 0, "the generated traces retract unforced");
}
