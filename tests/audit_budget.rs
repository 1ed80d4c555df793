//! The solver's budgets in the audit: a request that runs out of time or over a cap is
//! `not-checkable`, never a verdict, and the audit goes on for the rest of the trace
//! (`docs/reliability.md`, "Solver budgets and trace size").

use std::process::Command;
use std::time::Duration;

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, Report, audit};
use doxascope::model::recompute::RecomputeOptions;
use serde_json::{Value, json};

/// The pigeonhole formula PHP(p, h): p pigeons in h holes, one per hole. Unsatisfiable for
/// p > h, and beyond any CDCL solver's reach in seconds from p = 11, h = 10 (varisat needs
/// more than a minute; `shared/research/reliability-security.md` §1.4).
fn php(p: usize, h: usize) -> String {
    let mut cl = Vec::new();
    for i in 0..p {
        let c: Vec<String> = (0..h).map(|j| format!("x{i}_{j}")).collect();
        cl.push(format!("({})", c.join(" | ")));
    }
    for j in 0..h {
        for a in 0..p {
            for b in a + 1..p {
                cl.push(format!("(!x{a}_{j} | !x{b}_{j})"));
            }
        }
    }
    cl.join(" & ")
}

fn lines(events: &[Value]) -> String {
    let mut s = String::new();
    for (i, e) in events.iter().enumerate() {
        let mut e = e.clone();
        e["session"] = json!("s");
        e["seq"] = json!(i + 1);
        s.push_str(&e.to_string());
        s.push('\n');
    }
    s
}

fn audit_with(text: &str, timeout: Duration) -> Report {
    let model = Model::from_bytes("t.jsonl", text.as_bytes());
    let opts = AuditOptions {
        recompute: RecomputeOptions {
            timeout,
            ..RecomputeOptions::default()
        },
        ..AuditOptions::default()
    };
    audit(&model, &opts)
}

fn codes_at(r: &Report, step: u32) -> Vec<Code> {
    r.findings
        .iter()
        .filter(|f| f.step == Some(step))
        .map(|f| f.code)
        .collect()
}

/// D50: Σ = {PHP(11,10)} is inconsistent, but no solver proves it in a fraction of a second.
/// Every claim about it is then not checkable: none is confirmed, none is refuted, nothing is
/// said about the contradiction's handling, and the counts say so. A belief that the solver
/// could not judge still joins Σ, so once it is retracted the audit checks again.
#[test]
fn a_timeout_is_never_a_verdict() {
    let text = lines(&[
        json!({"kind": "announce", "id": "php", "formula": php(11, 10)}),
        json!({"kind": "verify", "formula": "x0_0", "outcome": "contradiction"}),
        json!({"kind": "verify", "formula": "x0_0", "outcome": "entailed"}),
        json!({"kind": "verify", "formula": "x0_0", "outcome": "newinfo"}),
        json!({"kind": "retract", "target": "php"}),
        json!({"kind": "verify", "formula": "x0_0", "outcome": "entailed"}),
    ]);
    let r = audit_with(&text, Duration::from_millis(300));
    assert_eq!(r.verifies, 4);
    assert_eq!(r.recomputed, 1, "{r:#?}");
    assert_eq!(r.not_checkable, 3);
    assert_eq!(r.matrix.get("contradiction", "unknown"), 1);
    assert_eq!(r.matrix.get("entailed", "unknown"), 1);
    assert_eq!(r.matrix.get("newinfo", "unknown"), 1);
    assert_eq!(r.matrix.get("newinfo", "newinfo"), 0);
    // The announcement: whether it made Σ inconsistent is not decided, and says why.
    let first: Vec<_> = r.findings.iter().filter(|f| f.step == Some(1)).collect();
    assert_eq!(first.len(), 1, "{first:#?}");
    assert_eq!(first[0].code, Code::NotCheckable);
    assert_eq!(first[0].evidence["cause"], json!("timeout"));
    assert!(first[0].message.contains("php"), "{}", first[0].message);
    for step in 2..=4 {
        assert_eq!(codes_at(&r, step), [Code::NotCheckable], "step {step}");
    }
    // After the retraction Σ is empty again and the claim is checked (and wrong).
    assert_eq!(
        codes_at(&r, 6),
        [Code::ClaimedOutcomeMismatch],
        "{:#?}",
        r.findings
    );
    assert!(
        !r.findings.iter().any(|f| matches!(
            f.code,
            Code::UnhandledContradiction | Code::InconsistentSigma
        )),
        "{:#?}",
        r.findings
    );
}

/// Without the retraction, the end of the session is not checkable either (rather than
/// silently consistent), and `--json` carries the counts and the cause.
#[test]
fn the_json_report_counts_what_was_not_checkable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("php.jsonl");
    let text = lines(&[
        json!({"kind": "announce", "id": "php", "formula": php(11, 10)}),
        json!({"kind": "verify", "formula": "x0_0", "outcome": "newinfo"}),
    ]);
    std::fs::write(&path, text).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["audit", "--json", "--timeout", "0.3"])
        .arg(&path)
        .output()
        .expect("run doxascope");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["summary"]["recomputed"], json!(0));
    assert_eq!(v["summary"]["not_checkable"], json!(1));
    assert_eq!(v["summary"]["by_code"], json!({"not-checkable": 3}));
    let findings = v["findings"].as_array().expect("findings");
    assert!(
        findings
            .iter()
            .all(|f| f["evidence"]["cause"] == json!("timeout")),
        "{findings:#?}"
    );
    assert!(
        findings.iter().any(|f| f["step"] == json!(2)
            && f["message"]
                .as_str()
                .is_some_and(|m| m.contains("end of the session"))),
        "{findings:#?}"
    );
}

fn audit_capped(text: &str, formula_cap: usize, state_cap: usize) -> Report {
    let model = Model::from_bytes("t.jsonl", text.as_bytes());
    let opts = AuditOptions {
        recompute: RecomputeOptions {
            formula_cap,
            state_cap,
            ..RecomputeOptions::default()
        },
        ..AuditOptions::default()
    };
    audit(&model, &opts)
}

fn wide(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{prefix}{i}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// D52: a formula over the per-formula cap is refused before it is encoded; the claims about
/// a Σ that holds it are not checkable (and say which belief is to blame), and once it is
/// retracted the audit checks again.
#[test]
fn a_formula_over_the_cap_is_not_checkable_and_the_audit_goes_on() {
    let text = lines(&[
        json!({"kind": "announce", "id": "a", "formula": "a"}),
        json!({"kind": "announce", "id": "big", "formula": wide("w", 400)}),
        json!({"kind": "verify", "formula": "a", "outcome": "entailed"}),
        json!({"kind": "retract", "target": "big"}),
        json!({"kind": "verify", "formula": "a", "outcome": "entailed"}),
        json!({"kind": "verify", "formula": "!a", "outcome": "newinfo"}),
    ]);
    let r = audit_capped(&text, 300, 1_000_000);
    let at = |step: u32| r.findings.iter().filter(move |f| f.step == Some(step));
    let big: Vec<_> = at(2).collect();
    assert_eq!(big.len(), 1, "{big:#?}");
    assert_eq!(big[0].code, Code::NotCheckable);
    assert_eq!(big[0].evidence["cause"], json!("too-large"));
    let after: Vec<_> = at(3).collect();
    assert_eq!(after.len(), 1, "{after:#?}");
    assert_eq!(after[0].evidence["cause"], json!("sigma-incomplete"));
    assert!(after[0].message.contains("big"), "{}", after[0].message);
    assert_eq!(r.recomputed, 2);
    assert_eq!(r.not_checkable, 1);
    assert_eq!(codes_at(&r, 5), []);
    assert_eq!(
        codes_at(&r, 6),
        [Code::ClaimedOutcomeMismatch],
        "{:#?}",
        r.findings
    );
    // The same trace under the default caps is checked throughout.
    let r = audit_capped(&text, 1_000_000, 1_000_000);
    assert_eq!(r.recomputed, 3);
    assert!(!r.findings.iter().any(|f| f.code == Code::NotCheckable));
}

/// D52: formulas that fit one by one but not together: the state cap refuses the one that
/// would overflow it, and the rest of the session is not checkable while it is held.
#[test]
fn the_state_cap_refuses_the_formula_that_overflows_it() {
    let text = lines(&[
        json!({"kind": "announce", "id": "b1", "formula": wide("x", 200)}),
        json!({"kind": "announce", "id": "b2", "formula": wide("y", 200)}),
        json!({"kind": "announce", "id": "b3", "formula": wide("z", 200)}),
        json!({"kind": "verify", "formula": "x0", "outcome": "newinfo"}),
    ]);
    let r = audit_capped(&text, 1000, 700);
    assert_eq!(codes_at(&r, 1), [], "{:#?}", r.findings);
    assert_eq!(codes_at(&r, 2), []);
    let third: Vec<_> = r.findings.iter().filter(|f| f.step == Some(3)).collect();
    assert_eq!(third.len(), 1, "{third:#?}");
    assert_eq!(third[0].evidence["cause"], json!("too-large"));
    assert_eq!(codes_at(&r, 4), [Code::NotCheckable, Code::NotCheckable]);
    assert_eq!(r.not_checkable, 1);
}

/// A Σ that is inconsistent without the belief over the cap is inconsistent with it: that
/// much is still an answer, and the claims it decides are checked.
#[test]
fn an_inconsistency_outlives_a_belief_over_the_cap() {
    let text = lines(&[
        json!({"kind": "announce", "id": "a", "formula": "a"}),
        json!({"kind": "announce", "id": "na", "formula": "!a"}),
        json!({"kind": "announce", "id": "big", "formula": wide("w", 400)}),
        json!({"kind": "verify", "formula": "b", "outcome": "newinfo"}),
    ]);
    let r = audit_capped(&text, 300, 1_000_000);
    assert_eq!(
        codes_at(&r, 2),
        [Code::UnhandledContradiction],
        "{:#?}",
        r.findings
    );
    let big: Vec<_> = r.findings.iter().filter(|f| f.step == Some(3)).collect();
    assert_eq!(big.len(), 1, "{big:#?}");
    assert_eq!(big[0].evidence["cause"], json!("too-large"));
    assert_eq!(
        codes_at(&r, 4),
        [Code::ClaimedOutcomeMismatch, Code::InconsistentSigma]
    );
    assert_eq!(r.recomputed, 1);
}
