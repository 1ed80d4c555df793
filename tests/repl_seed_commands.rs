//! The seeds' questions at the REPL: UNGROUNDED with `check φ because ID...` (seed 001),
//! graded belief `believes φ @K` (seed 000), and derivations that fall with their premises:
//! `dependents ID` and `retract --cascade` (truth maintenance), with the norm warning.

use std::sync::Arc;

use doxascope::model::Model;
use doxascope::repl::{ModelSigma, Repl};
use serde_json::Value;

/// rule r: rain -> wet; fact f: rain; derived d: wet (because r, f); derived e: wet | cold
/// (because d); g: sun, with an independent support s: sun; norm n: ~leak.
fn trace() -> (tempfile::TempDir, Repl) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tms.jsonl");
    let lines = [
        r#"{"kind":"announce","id":"r","formula":"rain -> wet","role":"rule"}"#,
        r#"{"kind":"announce","id":"f","formula":"rain","confidence":0.6}"#,
        r#"{"kind":"announce","id":"d","formula":"wet","because":["r","f"],"source":"inference"}"#,
        r#"{"kind":"announce","id":"e","formula":"wet | cold","because":["d"],"source":"inference"}"#,
        r#"{"kind":"announce","id":"s","formula":"sun","confidence":0.9}"#,
        r#"{"kind":"announce","id":"g","formula":"sun | warm","because":["f"],"source":"inference"}"#,
        r#"{"kind":"announce","id":"n","formula":"~leak","role":"norm"}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let model = Model::load(&[&path]).unwrap();
    let name = model.timelines()[0].name().to_string();
    (
        dir,
        Repl::new(Box::new(ModelSigma::new(Arc::new(model), name))),
    )
}

fn run(r: &mut Repl, line: &str) -> Value {
    let cmd = line.split_whitespace().next().unwrap_or("");
    match r.run_line(line) {
        Ok(reply) => reply.to_json(cmd),
        Err(e) => e.to_json(),
    }
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn ids(r: &mut Repl) -> Vec<String> {
    let mut v: Vec<String> = run(r, "sigma")["beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn check_because_gives_ungrounded_like_a_verify() {
    let (_d, mut r) = trace();
    // Σ entails wet, and r with f is a support: entailed.
    let c = run(&mut r, "check wet because r f");
    assert_eq!(c["outcome"], "entailed", "{c}");
    // Citing only the fact: entailed by Σ, but f (with the rules and norms, so r too) does
    // entail it. Citing s: the rules and norms with s do not entail wet.
    assert_eq!(run(&mut r, "check wet because s")["outcome"], "ungrounded");
    assert_eq!(run(&mut r, "check wet because s")["theta"], "entailed");
    // New information with a citation that does not support it.
    let c = run(&mut r, "check hail because s");
    assert_eq!(
        (c["outcome"].as_str(), c["theta"].as_str()),
        (Some("ungrounded"), Some("newinfo"))
    );
    // A citation that is not in Σ is reported and counts as not cited.
    let c = run(&mut r, "check wet because nope");
    assert_eq!(strs(&c["missing_citations"]), ["nope"]);
    assert_eq!(c["outcome"], "ungrounded");
    // Without `because`: the plain gate.
    assert_eq!(run(&mut r, "check wet")["outcome"], "entailed");
    assert_eq!(run(&mut r, "check wet because")["ok"], false);
}

#[test]
fn believes_is_graded_belief() {
    let (_d, mut r) = trace();
    // d (confidence 1) says wet: N(wet) = 1.
    let b = run(&mut r, "believes wet @0.7");
    assert_eq!(b["holds"], true, "{b}");
    assert!((b["degree"].as_f64().unwrap() - 1.0).abs() < 1e-9, "{b}");
    // Without d, wet rests on f (0.6) and the rule (1): N(wet) = 0.6.
    run(&mut r, "retract d");
    let b = run(&mut r, "believes wet @0.5");
    assert_eq!(b["holds"], true, "{b}");
    assert!((b["degree"].as_f64().unwrap() - 0.6).abs() < 1e-9, "{b}");
    assert_eq!(run(&mut r, "believes wet @0.7")["holds"], false);
    assert_eq!(run(&mut r, "believes sun @0.9")["holds"], true);
    assert_eq!(run(&mut r, "believes sun @0.95")["holds"], false);
    assert_eq!(run(&mut r, "believes sun")["ok"], false);
    assert_eq!(run(&mut r, "believes sun @0")["ok"], false);
}

#[test]
fn dependents_follow_because_transitively() {
    let (_d, mut r) = trace();
    let d = run(&mut r, "dependents f");
    let got: Vec<(String, String)> = d["dependents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_string(),
                m["cites"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("d".to_string(), "f".to_string()),
            ("e".to_string(), "d".to_string()),
            ("g".to_string(), "f".to_string())
        ]
    );
    assert!(
        run(&mut r, "dependents s")["dependents"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(run(&mut r, "dependents zzz")["ok"], false);
}

#[test]
fn cascade_retracts_what_fell_with_its_premise_and_keeps_what_has_another_support() {
    let (_d, mut r) = trace();
    let a = run(&mut r, "retract f --cascade");
    assert_eq!(a["ok"], true, "{a}");
    // d (wet) and then e (wet | cold) lose their support; g (sun | warm) is still entailed
    // by s (sun).
    assert_eq!(strs(&a["cascaded"]), ["d", "e"]);
    assert_eq!(strs(&a["kept"]), ["g"]);
    assert_eq!(ids(&mut r), ["g", "n", "r", "s"]);
    // One command: undo brings all of them back.
    run(&mut r, "undo");
    assert_eq!(ids(&mut r), ["d", "e", "f", "g", "n", "r", "s"]);
    // Without --cascade only the premise goes.
    let a = run(&mut r, "retract f");
    assert!(strs(&a["cascaded"]).is_empty());
    assert_eq!(ids(&mut r), ["d", "e", "g", "n", "r", "s"]);
}

#[test]
fn saving_a_cascade_writes_every_retraction() {
    let (dir, mut r) = trace();
    run(&mut r, "retract f --cascade");
    let path = dir.path().join("saved.jsonl");
    run(&mut r, &format!("save {}", path.display()));
    let saved = Model::load(&[&path]).unwrap();
    let tl = &saved.timelines()[0];
    let mut got: Vec<String> = saved
        .sigma_at(tl.name(), tl.len())
        .unwrap()
        .iter()
        .map(|v| v.id().to_string())
        .collect();
    got.sort();
    assert_eq!(got, ids(&mut r));
}

#[test]
fn retracting_a_norm_by_hand_warns() {
    let (_d, mut r) = trace();
    let a = run(&mut r, "retract n");
    assert!(
        a["warning"].as_str().is_some_and(|w| w.contains("norm")),
        "{a}"
    );
    assert_eq!(run(&mut r, "retract s")["warning"], Value::Null);
}

/// `policy greedy-paper`: seed 003's Algorithm 1 as written at the prompt. It drops the
/// oldest single commitment that restores consistency, and otherwise keeps the new formula
/// with Σ inconsistent (no refusal, no fallback), where `greedy` refuses it.
#[test]
fn greedy_paper_policy_keeps_what_no_single_retraction_repairs() {
    let (_d, mut r) = trace();
    run(&mut r, "policy greedy-paper");
    // ~wet has two conflicts, {d, ~wet} and {r, f, ~wet}, with no retractable commitment in
    // both: no single retraction restores consistency, so Σ keeps ~wet, inconsistent.
    let a = run(&mut r, "announce ~wet");
    assert_eq!(a["applied"], true, "{a}");
    assert_eq!(a["retracted"], serde_json::json!([]), "{a}");
    assert_eq!(a["sigma_inconsistent"], true, "{a}");
    assert_eq!(run(&mut r, "consistent")["consistent"], false);
    // Under greedy the same announcement is repaired (here by the recency fallback).
    run(&mut r, "undo");
    run(&mut r, "policy greedy");
    let g = run(&mut r, "announce ~wet");
    assert_eq!(g["sigma_inconsistent"], false, "{g}");
    assert_eq!(run(&mut r, "consistent")["consistent"], true);
    // A single retraction that restores consistency is taken, the oldest first.
    run(&mut r, "undo");
    run(&mut r, "policy greedy-paper");
    let s = run(&mut r, "announce ~sun");
    assert_eq!(s["retracted"], serde_json::json!(["s"]), "{s}");
    assert_eq!(s["sigma_inconsistent"], false, "{s}");
}
