//! The reasoning audit (issue 29, items 1–3): for each check, a small trace that triggers it
//! and a near miss that must not; the thought checks also against the truth-table oracle.

use doxascope::logic::engine::Outcome;
use doxascope::logic::oracle;
use doxascope::logic::parse::parse;
use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, Finding, Report, audit};
use serde_json::Value;

fn run(lines: &[&str]) -> Report {
    let mut bytes = Vec::new();
    for l in lines {
        bytes.extend_from_slice(l.as_bytes());
        bytes.push(b'\n');
    }
    audit(
        &Model::from_bytes("t.jsonl", &bytes),
        &AuditOptions::default(),
    )
}

fn of(r: &Report, code: Code) -> Vec<&Finding> {
    r.findings.iter().filter(|f| f.code == code).collect()
}

fn only(r: &Report, code: Code) -> &Finding {
    let fs = of(r, code);
    assert_eq!(fs.len(), 1, "expected one {code}: {:#?}", r.findings);
    fs[0]
}

fn none(r: &Report, code: Code) {
    assert!(
        of(r, code).is_empty(),
        "unexpected {code}: {:#?}",
        r.findings
    );
}

fn sorted(v: &Value) -> Vec<String> {
    let mut ids: Vec<String> = v
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

const DNS: [&str; 2] = [
    r#"{"kind":"announce","id":"f","formula":"dns_answers"}"#,
    r#"{"kind":"announce","id":"r","formula":"dns_answers -> resolver_up","role":"rule"}"#,
];

#[test]
fn thought_contradicting_sigma_names_the_minimal_conflict() {
    let r = run(&[
        DNS[0],
        DNS[1],
        r#"{"kind":"announce","id":"x","formula":"unrelated"}"#,
        r#"{"kind":"thought","text":"it is down","asserts":["!resolver_up"]}"#,
    ]);
    let f = only(&r, Code::ThoughtContradictsSigma);
    assert_eq!(f.step, Some(4));
    assert_eq!(sorted(&f.evidence["conflict"]), ["f", "r"]);
    // Near misses: entailed, new, or Σ already inconsistent (reported elsewhere).
    for asserts in [r#"["resolver_up"]"#, r#"["cache_stale"]"#] {
        let line = format!(r#"{{"kind":"thought","asserts":{asserts}}}"#);
        none(
            &run(&[DNS[0], DNS[1], &line]),
            Code::ThoughtContradictsSigma,
        );
    }
    let r = run(&[
        DNS[0],
        DNS[1],
        r#"{"kind":"announce","id":"g","formula":"!resolver_up"}"#,
        r#"{"kind":"thought","asserts":["!resolver_up"]}"#,
    ]);
    none(&r, Code::ThoughtContradictsSigma);
}

#[test]
fn unsupported_thought_is_a_finding_only_once_used_as_a_premise() {
    let thought = r#"{"kind":"thought","id":"th","asserts":["dns_broken"]}"#;
    let uses = r#"{"kind":"announce","id":"d","formula":"restart","because":["th"]}"#;
    let f = {
        let r = run(&[DNS[0], thought, uses]);
        let f = only(&r, Code::UnsupportedThoughtPremise);
        assert_eq!(
            (f.step, f.evidence["thought_step"].as_u64()),
            (Some(3), Some(2))
        );
        f.clone()
    };
    assert_eq!(f.formulas, ["dns_broken"]);
    // Cited by its formula when no belief has that id.
    let by_text = r#"{"kind":"verify","formula":"restart","because":["dns_broken"]}"#;
    only(
        &run(&[DNS[0], thought, by_text]),
        Code::UnsupportedThoughtPremise,
    );
    // Used as a step's input: a value the thought guessed, not one Σ holds.
    let guess = r#"{"kind":"thought","asserts":["rate = 1.1"]}"#;
    let step = r#"{"kind":"step","plan":"p","step":"S1","status":"done","inputs":{"rate":1.1}}"#;
    let held = r#"{"kind":"belief","name":"rate","value":1.1}"#;
    only(
        &run(&[DNS[0], guess, step]),
        Code::UnsupportedThoughtPremise,
    );
    none(
        &run(&[DNS[0], held, guess, step]),
        Code::UnsupportedThoughtPremise,
    );
    // Near misses: never used; or used but entailed by Σ.
    none(&run(&[DNS[0], thought]), Code::UnsupportedThoughtPremise);
    let entailed = r#"{"kind":"thought","id":"th","asserts":["resolver_up"]}"#;
    none(
        &run(&[DNS[0], DNS[1], entailed, uses]),
        Code::UnsupportedThoughtPremise,
    );
}

#[test]
fn thought_checks_agree_with_the_truth_table_oracle() {
    let pool = ["p", "!p", "p -> q", "q | r", "!q & r", "q", "p <-> r"];
    let mut checked = 0;
    for a in pool {
        for b in pool {
            let fa = parse(a).expect("parses");
            let fb = parse(b).expect("parses");
            if !oracle::satisfiable(&[&fa, &fb]) {
                continue;
            }
            for t in pool {
                let ft = parse(t).expect("parses");
                let lines = [
                    format!(r#"{{"kind":"announce","id":"a","formula":"{a}"}}"#),
                    format!(r#"{{"kind":"announce","id":"b","formula":"{b}"}}"#),
                    format!(r#"{{"kind":"thought","id":"th","asserts":["{t}"]}}"#),
                    r#"{"kind":"announce","id":"z","formula":"s","because":["th"]}"#.to_string(),
                ];
                let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
                let r = run(&lines);
                let truth = oracle::theta(&[&fa, &fb], &ft);
                let contra = !of(&r, Code::ThoughtContradictsSigma).is_empty();
                let unsupported = !of(&r, Code::UnsupportedThoughtPremise).is_empty();
                assert_eq!(
                    contra,
                    truth == Outcome::Contradiction,
                    "{a}; {b}; thought {t}"
                );
                assert_eq!(
                    unsupported,
                    truth == Outcome::NewInfo,
                    "{a}; {b}; thought {t}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn inference_without_because_unless_cited_or_assumed() {
    let r = run(&[r#"{"kind":"announce","id":"d","formula":"net_up","source":"inference"}"#]);
    assert_eq!(only(&r, Code::InferenceWithoutBecause).ids, ["d"]);
    only(
        &run(&[r#"{"kind":"announce","id":"d","formula":"net_up","source":"inference:llm"}"#]),
        Code::InferenceWithoutBecause,
    );
    only(
        &run(&[r#"{"kind":"announce","id":"d","formula":"net_up","source":"deduced"}"#]),
        Code::InferenceWithoutBecause,
    );
    for near in [
        r#"{"kind":"announce","id":"d","formula":"net_up","source":"inference","because":["f"]}"#,
        r#"{"kind":"announce","id":"d","formula":"net_up","source":"inference","role":"assumption"}"#,
        r#"{"kind":"announce","id":"d","formula":"net_up","source":"user"}"#,
        r#"{"kind":"announce","id":"d","formula":"net_up","source":"inferences-db"}"#,
    ] {
        none(&run(&[DNS[0], near]), Code::InferenceWithoutBecause);
    }
}

const NORM: [&str; 2] = [
    r#"{"kind":"announce","id":"n-pii","formula":"!share_pii","role":"norm"}"#,
    r#"{"kind":"announce","id":"r","formula":"attach -> share_pii","role":"rule"}"#,
];

#[test]
fn norm_violation_names_the_norm() {
    let r = run(&[
        NORM[0],
        NORM[1],
        r#"{"kind":"announce","id":"f","formula":"attach"}"#,
    ]);
    let f = only(&r, Code::NormViolated);
    assert_eq!(f.evidence["norm"], "n-pii");
    assert_eq!(sorted(&f.evidence["violated_by"]), ["f", "r"]);
    none(&r, Code::NormsConflict);
    // Near miss: an action the norm does not forbid; and a contradiction with no norm in it.
    let ok = run(&[
        NORM[0],
        NORM[1],
        r#"{"kind":"announce","id":"f","formula":"draft"}"#,
    ]);
    none(&ok, Code::NormViolated);
    let plain = run(&[
        NORM[0],
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"b","formula":"!p"}"#,
    ]);
    none(&plain, Code::NormViolated);
}

#[test]
fn norms_that_cannot_be_kept_together() {
    let r = run(&[
        r#"{"kind":"announce","id":"n1","formula":"urgent -> reply","role":"norm"}"#,
        r#"{"kind":"announce","id":"n2","formula":"night -> !reply","role":"norm"}"#,
        r#"{"kind":"announce","id":"u","formula":"urgent"}"#,
        r#"{"kind":"announce","id":"t","formula":"night"}"#,
    ]);
    let f = only(&r, Code::NormsConflict);
    assert_eq!(sorted(&f.evidence["norms"]), ["n1", "n2"]);
    assert_eq!(f.step, Some(4));
    none(&r, Code::NormViolated);
    // Directly contradictory norms.
    let r = run(&[
        r#"{"kind":"announce","id":"n1","formula":"reply","role":"norm"}"#,
        r#"{"kind":"announce","id":"n2","formula":"!reply","role":"norm"}"#,
    ]);
    assert_eq!(
        sorted(&only(&r, Code::NormsConflict).evidence["norms"]),
        ["n1", "n2"]
    );
    // Near miss: the facts never trigger both.
    let r = run(&[
        r#"{"kind":"announce","id":"n1","formula":"urgent -> reply","role":"norm"}"#,
        r#"{"kind":"announce","id":"n2","formula":"night -> !reply","role":"norm"}"#,
        r#"{"kind":"announce","id":"u","formula":"urgent"}"#,
    ]);
    none(&r, Code::NormsConflict);
}

#[test]
fn retraction_by_revision_that_no_conflict_forced() {
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"b","formula":"q"}"#,
        r#"{"kind":"retract","target":"a","by":"revision"}"#,
    ]);
    let f = only(&r, Code::RevisionNotMinimal);
    assert_eq!(
        (f.step, f.evidence["unforced"].as_bool()),
        (Some(3), Some(true))
    );
    // Near misses: the agent forgetting, and a retraction a conflict forced.
    none(
        &run(&[
            r#"{"kind":"announce","id":"a","formula":"p"}"#,
            r#"{"kind":"retract","target":"a","by":"agent"}"#,
        ]),
        Code::RevisionNotMinimal,
    );
    none(
        &run(&[
            r#"{"kind":"announce","id":"a","formula":"p"}"#,
            r#"{"kind":"announce","id":"b","formula":"!p"}"#,
            r#"{"kind":"retract","target":"a","by":"revision"}"#,
        ]),
        Code::RevisionNotMinimal,
    );
}

#[test]
fn flip_flop_of_a_value_and_of_a_formula() {
    let v = |x: &str| format!(r#"{{"kind":"belief","name":"seat","value":"{x}"}}"#);
    let (a, w, m) = (v("aisle"), v("window"), v("middle"));
    let f = only(&run(&[&a, &w, &a]), Code::FlipFlop).clone();
    assert_eq!(f.step, Some(3));
    assert_eq!(f.ids, ["seat"]);
    none(&run(&[&a, &w, &m]), Code::FlipFlop);
    none(&run(&[&a, &a, &w]), Code::FlipFlop);
    // φ, ¬φ, φ under ids of their own.
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"door_open"}"#,
        r#"{"kind":"retract","target":"a"}"#,
        r#"{"kind":"announce","id":"b","formula":"!door_open"}"#,
        r#"{"kind":"retract","target":"b"}"#,
        r#"{"kind":"announce","id":"c","formula":"door_open"}"#,
    ]);
    assert_eq!(only(&r, Code::FlipFlop).step, Some(5));
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"door_open"}"#,
        r#"{"kind":"retract","target":"a"}"#,
        r#"{"kind":"announce","id":"b","formula":"!door_open"}"#,
    ]);
    none(&r, Code::FlipFlop);
}

const PLAN: &str = r#"{"kind":"plan","id":"p","steps":[{"id":"S1","kind":"compute"}]}"#;

#[test]
fn stale_input_of_a_step_and_of_a_tool_call() {
    let b = |x: f64| format!(r#"{{"kind":"belief","name":"rate","value":{x}}}"#);
    let (old, new) = (b(1.1), b(1.2));
    let step = r#"{"kind":"step","plan":"p","step":"S1","status":"done","inputs":{"rate":1.1}}"#;
    let f = only(&run(&[PLAN, &old, &new, step]), Code::StaleInput).clone();
    assert_eq!(
        (f.evidence["used"].as_str(), f.evidence["held"].as_str()),
        (Some("1.1"), Some("rate = 1.2"))
    );
    // Dispatched before the overwrite: it ran on the value then held.
    let dispatched = r#"{"kind":"step","plan":"p","step":"S1","status":"dispatched"}"#;
    none(
        &run(&[PLAN, &old, dispatched, &new, step]),
        Code::StaleInput,
    );
    // Near miss: the current value.
    let fresh = r#"{"kind":"step","plan":"p","step":"S1","status":"done","inputs":{"rate":1.2}}"#;
    none(&run(&[PLAN, &old, &new, fresh]), Code::StaleInput);
    // A tool call's argument; and a retracted value.
    let call = r#"{"kind":"step","plan":"p","step":"S1","status":"done","tool_calls":[{"tool":"convert","args":{"rate":1.1,"to":"EUR"}}]}"#;
    only(&run(&[PLAN, &old, &new, call]), Code::StaleInput);
    let retract = r#"{"kind":"retract","target":"rate","by":"agent"}"#;
    let f = only(&run(&[PLAN, &old, retract, step]), Code::StaleInput).clone();
    assert!(f.evidence["held"].is_null(), "{f:#?}");
}

/// `stale-input` against a replay of each name's writes kept in the test: a step's input is
/// stale when no value its name holds before the step is the one used, and an earlier write
/// of that name held it (whatever its unit). Random writes of numbers and strings with and
/// without spaces, with no unit, a bare one or a quoted one, rewrites of the same value,
/// retractions and reads of two names.
#[test]
fn stale_input_agrees_with_a_replay_of_the_writes() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    // Values as JSON and as a value atom prints them; units as a value atom prints them.
    let values = ["1", "2", "3", r#""a b""#, r#""a""#];
    let units = [
        (None, ""),
        (Some("km"), " km"),
        (Some("km per h"), r#" "km per h""#),
    ];
    for round in 0..200 {
        let mut lines = vec![PLAN.to_string()];
        // Per name, its writes: (value, printed unit, still held).
        let mut writes: [Vec<(&str, &str, bool)>; 2] = [Vec::new(), Vec::new()];
        let names = ["rate", "seat"];
        let mut want = Vec::new();
        for _ in 0..next(30) + 1 {
            let n = next(2) as usize;
            let name = names[n];
            let step = lines.len() as u32 + 1;
            match next(5) {
                0 | 1 => {
                    let v = values[next(5) as usize];
                    let (unit, printed) = units[next(3) as usize];
                    let unit_field = unit.map_or(String::new(), |u| format!(r#","unit":"{u}""#));
                    lines.push(format!(
                        r#"{{"kind":"belief","name":"{name}","value":{v}{unit_field}}}"#
                    ));
                    writes[n].iter_mut().for_each(|w| w.2 = false);
                    writes[n].push((v, printed, true));
                }
                2 => {
                    lines.push(format!(r#"{{"kind":"retract","target":"{name}"}}"#));
                    writes[n].iter_mut().for_each(|w| w.2 = false);
                }
                _ => {
                    let v = values[next(5) as usize];
                    lines.push(format!(
                        r#"{{"kind":"step","plan":"p","step":"S1","status":"done","inputs":{{"{name}":{v}}}}}"#
                    ));
                    let held = writes[n].iter().find(|w| w.2);
                    if held.is_some_and(|w| w.0 == v) {
                        continue;
                    }
                    if writes[n].iter().any(|w| !w.2 && w.0 == v) {
                        let now = held.map(|w| format!("{name} = {}{}", w.0, w.1));
                        want.push((step, name.to_string(), v.to_string(), now));
                    }
                }
            }
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let r = run(&refs);
        let got: Vec<(u32, String, String, Option<String>)> = of(&r, Code::StaleInput)
            .iter()
            .map(|f| {
                (
                    f.step.unwrap_or(0),
                    f.evidence["name"].as_str().unwrap_or("").to_string(),
                    f.evidence["used"].as_str().unwrap_or("").to_string(),
                    f.evidence["held"].as_str().map(str::to_string),
                )
            })
            .collect();
        assert_eq!(got, want, "round {round}:\n{}", lines.join("\n"));
    }
}

#[test]
fn stale_citation_of_a_retracted_belief() {
    let r = run(&[
        r#"{"kind":"announce","id":"c","formula":"cache_fresh"}"#,
        r#"{"kind":"retract","target":"c","by":"agent"}"#,
        r#"{"kind":"announce","id":"d","formula":"skip","because":["c"]}"#,
    ]);
    let f = only(&r, Code::StaleCitation);
    assert_eq!((f.step, f.evidence["left_at"].as_u64()), (Some(3), Some(2)));
    // Near misses: still held; re-announced before the citation; never held at all.
    none(
        &run(&[
            r#"{"kind":"announce","id":"c","formula":"cache_fresh"}"#,
            r#"{"kind":"announce","id":"d","formula":"skip","because":["c"]}"#,
        ]),
        Code::StaleCitation,
    );
    none(
        &run(&[
            r#"{"kind":"announce","id":"c","formula":"cache_fresh"}"#,
            r#"{"kind":"retract","target":"c","by":"agent"}"#,
            r#"{"kind":"announce","id":"c","formula":"cache_fresh"}"#,
            r#"{"kind":"verify","formula":"cache_fresh","because":["c"]}"#,
        ]),
        Code::StaleCitation,
    );
    none(
        &run(&[r#"{"kind":"announce","id":"d","formula":"skip","because":["nope"]}"#]),
        Code::StaleCitation,
    );
    // An announcement citing its own id, whose earlier record was retracted: it says what it
    // is re-stating, not what it reasons from. The same citation by another id is stale.
    let own = [
        r#"{"kind":"announce","id":"c","formula":"cache_fresh"}"#,
        r#"{"kind":"retract","target":"c","by":"agent"}"#,
        r#"{"kind":"announce","id":"c","formula":"cache_fresh","because":["c"]}"#,
    ];
    none(&run(&own), Code::StaleCitation);
    let other = own[2].replace(r#""id":"c""#, r#""id":"e""#);
    only(&run(&[own[0], own[1], &other]), Code::StaleCitation);
}

#[test]
fn repeated_tool_call_only_when_nothing_was_learned() {
    let call = r#"{"kind":"step","plan":"p","step":"S1","tool_calls":[{"tool":"web_search","args":{"q":"x","n":1}}]}"#;
    let same = r#"{"kind":"step","plan":"p","step":"S1","tool_calls":[{"tool":"web_search","args":{"n":1,"q":"x"}}]}"#;
    let f = only(&run(&[PLAN, call, same, same]), Code::RepeatedToolCall).clone();
    assert_eq!(f.evidence["steps"], serde_json::json!([2, 3, 4]));
    // Near misses: something learned in between; other arguments; a retry after a failure.
    // Writing the value a belief already holds teaches nothing.
    let found = r#"{"kind":"step","plan":"p","step":"S1","status":"done","tool_calls":[{"tool":"web_search","args":{"q":"x","n":1}}],"new_beliefs":[{"name":"res","value":"none"}]}"#;
    let again = r#"{"kind":"belief","name":"res","value":"none"}"#;
    only(&run(&[PLAN, found, again, found]), Code::RepeatedToolCall);
    let learned = r#"{"kind":"belief","name":"hint","value":"try y"}"#;
    none(&run(&[PLAN, call, learned, same]), Code::RepeatedToolCall);
    let other = r#"{"kind":"step","plan":"p","step":"S1","tool_calls":[{"tool":"web_search","args":{"q":"y","n":1}}]}"#;
    none(&run(&[PLAN, call, other]), Code::RepeatedToolCall);
    let failed = r#"{"kind":"step","plan":"p","step":"S1","tool_calls":[{"tool":"web_search","args":{"q":"x","n":1},"error":"timeout"}]}"#;
    none(&run(&[PLAN, failed, call]), Code::RepeatedToolCall);
}

#[test]
fn failed_update_keeps_a_belief_against_an_observation() {
    let belief = r#"{"kind":"announce","id":"f","formula":"door_open","source":"user"}"#;
    let obs = r#"{"kind":"announce","id":"o","formula":"!door_open","source":"tool:sensor#7"}"#;
    let r = run(&[
        belief,
        obs,
        r#"{"kind":"retract","target":"o","by":"agent"}"#,
    ]);
    let f = only(&r, Code::FailedUpdate);
    assert_eq!(sorted(&f.evidence["kept"]), ["f"]);
    // Near miss: the belief gives way to the observation.
    let r = run(&[
        belief,
        obs,
        r#"{"kind":"retract","target":"f","by":"agent"}"#,
    ]);
    none(&r, Code::FailedUpdate);
    // Ground beliefs: an observed value set back by the agent.
    let w = |v: &str, s: &str| {
        format!(r#"{{"kind":"belief","name":"door","value":"{v}","source":"{s}"}}"#)
    };
    let r = run(&[
        &w("open", "user"),
        &w("closed", "tool:sensor#7"),
        &w("open", "agent"),
    ]);
    assert_eq!(only(&r, Code::FailedUpdate).step, Some(3));
    none(&r, Code::FlipFlop);
    let r = run(&[
        &w("open", "user"),
        &w("closed", "tool:sensor#7"),
        &w("open", "tool:sensor#8"),
    ]);
    none(&r, Code::FailedUpdate);
}
