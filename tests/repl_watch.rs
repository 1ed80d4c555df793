//! Watchpoints and breakpoints in the REPL: `continue` stops exactly where a watched
//! formula's status or membership changes (checked against the REPL's own `entails`,
//! `consistent` and `sigma` asked at every step, an independent walk), where a watched key
//! is written, and at the findings of a watched code, naming the event.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use doxascope::model::Model;
use doxascope::repl::{ModelSigma, Repl};
use serde_json::Value;

fn repl(sample: &str) -> Repl {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(sample);
    let model = Model::load(&[path]).expect("the sample loads");
    let name = model.pick_session(None).unwrap().name().to_string();
    Repl::new(Box::new(ModelSigma::new(Arc::new(model), name)))
}

fn json(r: &mut Repl, line: &str) -> Value {
    let word = line.split_whitespace().next().unwrap();
    match r.run_line(line) {
        Ok(reply) => reply.to_json(word),
        Err(e) => e.to_json(),
    }
}

/// What the oracle compares at a step: entails' answer, Σ's consistency, and the ids of the
/// beliefs of Σ whose formula is the watched one.
fn state(r: &mut Repl, t: u64, formula: &str) -> (String, bool, BTreeSet<String>) {
    json(r, &format!("at {t}"));
    let e = json(r, &format!("entails {formula}"));
    let c = json(r, "consistent");
    let members = json(r, "sigma")["beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["formula"] == formula)
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect();
    (
        e["result"].as_str().unwrap().to_string(),
        c["consistent"].as_bool().unwrap(),
        members,
    )
}

#[test]
fn continue_stops_where_the_formula_changes_and_nowhere_else() {
    for formula in ["treasure_in_b", "treasure_in_a", "¬treasure_in_a"] {
        let mut oracle = repl("treasure-hunt.jsonl");
        let last = oracle.step();
        let mut expected = Vec::new();
        let mut before = state(&mut oracle, 0, formula);
        for t in 1..=last {
            let now = state(&mut oracle, t, formula);
            if now != before {
                expected.push(t);
            }
            before = now;
        }
        let mut r = repl("treasure-hunt.jsonl");
        json(&mut r, "at 0");
        assert_eq!(json(&mut r, &format!("watch {formula}"))["ok"], true);
        let mut stops = Vec::new();
        loop {
            let v = json(&mut r, "continue");
            let Some(step) = v["stopped"]["step"].as_u64() else {
                assert_eq!(r.step(), *stops.last().unwrap_or(&0), "a miss stays put");
                break;
            };
            assert_eq!(r.step(), step, "continue travels to the stop");
            stops.push(step);
        }
        assert_eq!(stops, expected, "{formula}");
        assert!(!stops.is_empty());
        // And back again, in reverse.
        let mut back = Vec::new();
        while let Some(step) = json(&mut r, "continue back")["stopped"]["step"].as_u64() {
            back.push(step);
        }
        let mut rev: Vec<u64> = expected.iter().rev().copied().collect();
        rev.retain(|&s| s < *expected.last().unwrap());
        assert_eq!(back, rev, "{formula} backwards");
    }
}

#[test]
fn a_stop_names_the_event() {
    let mut r = repl("treasure-hunt.jsonl");
    json(&mut r, "at 0");
    json(&mut r, "watch treasure_in_b");
    let text = r.run_line("continue").unwrap().to_text();
    assert!(text.starts_with("stopped at step 8 (from 0):"), "{text}");
    assert!(
        text.contains("entailed (was unknown)")
            && text.contains("← announce t2-map-b (")
            && text.contains("treasure-hunt.jsonl:8)"),
        "{text}"
    );
}

#[test]
fn a_watched_key_stops_where_it_is_written() {
    let mut r = repl("bdi-bad-retrieval.jsonl");
    json(&mut r, "at 0");
    json(&mut r, "watch target_entity");
    let v = json(&mut r, "continue");
    assert_eq!(v["stopped"]["step"], 6, "{v}");
    let hit = v["stopped"]["hits"][0].as_str().unwrap();
    assert!(
        hit.contains("target_entity") && hit.contains("earth_moon_distance"),
        "{hit}"
    );
}

#[test]
fn a_breakpoint_stops_at_its_findings_and_unknown_codes_are_refused() {
    let mut r = repl("kipchoge-bdi.jsonl");
    assert_eq!(json(&mut r, "break no-such-code")["ok"], false);
    json(&mut r, "at 0");
    json(&mut r, "break dag-deadlock");
    let v = json(&mut r, "continue");
    assert_eq!(v["stopped"]["step"], 19, "{v}");
    assert!(
        v["stopped"]["hits"][0]
            .as_str()
            .unwrap()
            .starts_with("break #1: dag-deadlock at step 19: ")
    );
    assert_eq!(json(&mut r, "continue")["stopped"]["step"], Value::Null);
    assert_eq!(json(&mut r, "unwatch")["points"], serde_json::json!([]));
    assert_eq!(
        json(&mut r, "continue")["ok"],
        false,
        "nothing to continue to"
    );
}
