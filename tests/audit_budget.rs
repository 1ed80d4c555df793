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
    assert_eq!(codes_at(&r, 6), [Code::ClaimedOutcomeMismatch]);
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
