//! `doxascope demo` end to end: the headless trace validates and replays to the solver's
//! consistent state, the event stream equals the file, `--eval` prints the table, bad flags
//! exit 2, and live play prints the dialogue.

use std::collections::BTreeMap;
use std::process::Command;

use doxascope::demo::{DemoConfig, DemoEvents, Schedule, write_trace};
use doxascope::logic::engine::{BeliefSpec, BeliefState, Role};
use doxascope::logic::parse::parse;
use doxascope::logic::revise::Policy;
use doxascope::trace::{Item, Reader, ReaderConfig};
use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
}

fn events_as_json(bytes: &[u8]) -> Vec<Value> {
    let mut r = Reader::new("t.jsonl", ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(bytes, &mut items);
    r.finish(&mut items);
    items
        .into_iter()
        .map(|it| match it {
            Item::Event(e) => serde_json::to_value(&e).expect("event serializes"),
            Item::Problem(p) => panic!("demo trace has a problem: {p:?}"),
        })
        .collect()
}

#[test]
fn headless_trace_validates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("demo.jsonl");
    let st = bin()
        .args(["demo", "--headless", "--seed", "4", "--error-rate", "0.3"])
        .args(["--dialogues", "5", "--out"])
        .arg(&path)
        .status()
        .expect("run demo");
    assert!(st.success());
    let out = bin()
        .arg("validate")
        .arg(&path)
        .output()
        .expect("run validate");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("0 errors, 0 warnings"), "{stdout}");
}

/// Replays the trace the way a viewer would (announce adds, retract removes, by id) and checks
/// every session's Σ with an engine after every turn: the solver run is consistent at every
/// step, and each turn's literal is what its reply commits to.
#[test]
fn replaying_the_trace_gives_a_consistent_sigma_after_every_turn() {
    let cfg = DemoConfig {
        schedule: Schedule::Stress,
        seed: 21,
        turns: 12,
        error_rate: 0.35,
        policy: Policy::Greedy,
    };
    let mut bytes = Vec::new();
    write_trace(&cfg, 6, &mut bytes).expect("trace");
    let events = events_as_json(&bytes);
    let mut sigma: BTreeMap<String, BTreeMap<String, (String, bool)>> = BTreeMap::new();
    let mut revisions = 0;
    let check = |beliefs: &BTreeMap<String, (String, bool)>| {
        let mut st = BeliefState::new().expect("engine");
        for (id, (f, rule)) in beliefs {
            let role = if *rule { Role::Rule } else { Role::Fact };
            st.add(BeliefSpec::new(id.clone(), parse(f).expect("formula")).role(role))
                .expect("add");
        }
        st.consistent().expect("engine").consistent
    };
    let mut pending_turn = false;
    for ev in &events {
        let session = ev["session"].as_str().expect("session").to_string();
        let s = sigma.entry(session.clone()).or_default();
        match ev["kind"].as_str() {
            Some("announce") => {
                let id = ev["id"].as_str().expect("id").to_string();
                let f = ev["formula"].as_str().expect("formula").to_string();
                let source = ev["source"].as_str().expect("source");
                assert_eq!(source == "world", ev["role"] == "rule", "{ev}");
                assert!(source == "world" || source == "llm", "{ev}");
                s.insert(id, (f, ev["role"] == "rule"));
            }
            Some("retract") => {
                assert!(s.remove(ev["target"].as_str().expect("target")).is_some());
            }
            Some("revise") => revisions += 1,
            Some("turn") => {
                if pending_turn {
                    assert!(check(s), "{session}: Σ inconsistent before {ev}");
                }
                pending_turn = true;
                let reply = ev["reply"].as_str().expect("reply");
                // The truth of the asked proposition: a bool, or UNKNOWN when the world's
                // rules leave it open.
                assert!(ev["truth"].is_boolean() || ev["truth"] == "UNKNOWN", "{ev}");
                let q = ev["question"].as_str().expect("question");
                match (reply, ev.get("literal").and_then(Value::as_str)) {
                    ("UNKNOWN", None) => {}
                    ("YES" | "NO", Some(lit)) => {
                        let negative = lit.starts_with('!');
                        let negated_q = q.contains(" is not true?");
                        assert_eq!(negative, (reply == "YES") == negated_q, "{ev}");
                    }
                    other => panic!("reply/literal mismatch {other:?} in {ev}"),
                }
            }
            Some("session") => pending_turn = false,
            _ => {}
        }
    }
    for (session, s) in &sigma {
        assert!(check(s), "{session}: final Σ inconsistent");
    }
    assert_eq!(sigma.len(), 6);
    assert!(revisions > 0, "this seed and error rate should revise");
}

#[test]
fn the_event_stream_is_the_headless_trace() {
    let cfg = DemoConfig {
        seed: 8,
        error_rate: 0.25,
        ..DemoConfig::default()
    };
    let mut bytes = Vec::new();
    write_trace(&cfg, 3, &mut bytes).expect("trace");
    let from_file = events_as_json(&bytes);
    let mut stream = DemoEvents::new(cfg, 3);
    let from_stream: Vec<Value> = stream
        .by_ref()
        .map(|e| serde_json::to_value(&e).expect("json"))
        .collect();
    assert_eq!(stream.problems(), 0);
    assert_eq!(from_stream, from_file);
    // Deterministic bytes.
    let mut again = Vec::new();
    write_trace(&cfg, 3, &mut again).expect("trace");
    assert_eq!(bytes, again);
}

#[test]
fn eval_prints_table_one() {
    let out = bin()
        .args(["demo", "--eval", "--dialogues", "30", "--error-rate", "0.2"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in ["Final Acc.", "Incons.", "Contra.", "Retracts", "Per dial."] {
        assert!(text.contains(needle), "{text}");
    }
    // The measured rows come before the paper's own table.
    let (measured, paper) = text
        .split_once("Seed 003, Table 1")
        .expect("the paper's table");
    let rows: Vec<&str> = measured
        .lines()
        .filter(|l| l.starts_with("Random") || l.starts_with("Stress"))
        .collect();
    assert_eq!(rows.len(), 6, "{text}");
    for row in &rows {
        let cols: Vec<&str> = row.split_whitespace().collect();
        // Setting, the system's name (one to three words), then seven figures.
        let f = &cols[cols.len() - 7..];
        let system = cols[1..cols.len() - 7].join(" ");
        let (x, n) = f[1].split_once('/').expect("x/N column");
        assert_eq!(n, "30");
        if system == "Solver greedy" {
            assert_eq!(x, "0", "greedy leaves no inconsistent dialogue: {row}");
        }
        if system == "Solver Alg. 1" {
            assert_eq!(f[6], "0", "Algorithm 1 as written refuses nothing: {row}");
        }
        let acc: f64 = f[0].parse().expect("accuracy");
        assert!((0.0..=1.0).contains(&acc));
    }
    assert!(
        paper.contains("0.937") && paper.contains("5/120"),
        "{paper}"
    );
    assert!(
        paper.contains("Algorithm 1 as written (Solver Alg. 1)"),
        "{paper}"
    );
    let one = bin()
        .args(["demo", "--eval", "--dialogues", "5", "--schedule", "random"])
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&one.stdout);
    let measured = text.split("Seed 003").next().unwrap_or("");
    assert_eq!(
        measured.lines().filter(|l| l.starts_with("Random")).count(),
        3
    );
    assert_eq!(
        measured.lines().filter(|l| l.starts_with("Stress")).count(),
        0
    );
}

#[test]
fn bad_flags_exit_2() {
    for args in [
        &["demo", "--error-rate", "1.5"][..],
        &["demo", "--headless"],
        &["demo", "--schedule", "chaos"],
        &["demo", "--policy", "vibes"],
        &["demo", "--turns", "0"],
        &["demo", "--eval", "--headless", "--out", "x"],
    ] {
        let out = bin().args(args).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn live_play_prints_the_dialogue() {
    let out = bin()
        .args(["demo", "--speed", "64", "--turns", "4", "--seed", "3"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("== dialogue 1"), "{text}");
    assert!(text.contains("turn  4"), "{text}");
    assert!(text.contains("dialogue 1 done"), "{text}");
    assert!(
        text.ends_with("demo finished: every dialogue has been played\n"),
        "the demo says when it has finished: {text}"
    );
    // Live play's own default error rate (`--error-rate` not given).
    assert!(text.contains("error rate 0.3"), "{text}");
}

/// A refused commitment is shown in its turn, under the gate's verdict, and is never shown
/// as committed.
#[test]
fn live_play_shows_a_refusal_in_its_turn() {
    let out = bin()
        .args(["demo", "--speed", "64", "--turns", "5", "--seed", "7"])
        .args(["--schedule", "random", "--error-rate", "0.3"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "          gate: B is contradiction\n          refused b4 (B): it contradicts the \
             world's rules and facts, which are never retracted\n"
        ),
        "{text}"
    );
    assert!(!text.contains("commit b4"), "{text}");
}
