//! One small hand-built trace per finding code that must trigger it, and near misses that
//! must not.

use doxascope::logic::revise::Policy;
use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, Finding, Report, Severity, audit};
use serde_json::Value;
use std::io::Write;

fn run_with(lines: &[&str], opts: AuditOptions) -> Report {
    let mut bytes = Vec::new();
    for l in lines {
        bytes.extend_from_slice(l.as_bytes());
        bytes.push(b'\n');
    }
    audit(&Model::from_bytes("t.jsonl", &bytes), &opts)
}

fn run(lines: &[&str]) -> Report {
    run_with(lines, AuditOptions::default())
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

fn strs(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

const PQ: [&str; 2] = [
    r#"{"kind":"announce","id":"f","formula":"p"}"#,
    r#"{"kind":"announce","id":"r","formula":"p -> q","role":"rule"}"#,
];

fn with(prefix: &[&'static str], rest: &[&'static str]) -> Vec<&'static str> {
    prefix.iter().chain(rest).copied().collect()
}

#[test]
fn claimed_outcome_mismatch_per_class() {
    let r = run(&with(
        &PQ,
        &[
            r#"{"kind":"verify","formula":"q","outcome":"newinfo","method":"sat","tier":{"n":2},"because":["f"]}"#,
            r#"{"kind":"verify","formula":"q","outcome":"entailed"}"#,
            r#"{"kind":"verify","formula":"s","outcome":"ungrounded"}"#,
            r#"{"kind":"verify","formula":"s","outcome":"newinfo"}"#,
            r#"{"kind":"verify","formula":"!q","outcome":"newinfo"}"#,
            r#"{"kind":"verify","formula":"s","outcome":"contradiction"}"#,
        ],
    ));
    let fs = of(&r, Code::ClaimedOutcomeMismatch);
    let steps: Vec<Option<u32>> = fs.iter().map(|f| f.step).collect();
    assert_eq!(steps, vec![Some(3), Some(7), Some(8)], "{:#?}", r.findings);
    assert_eq!(fs[0].evidence["recomputed"], "entailed");
    // What the verify said of itself comes with it; nothing of it on the others.
    assert_eq!(fs[0].evidence["method"], "sat");
    assert_eq!(fs[0].evidence["tier"], serde_json::json!({"n": 2}));
    assert_eq!(fs[0].evidence["because"], serde_json::json!(["f"]));
    assert_eq!(fs[0].formulas, ["q"]);
    assert!(!fs[1].evidence.contains_key("method"));
    // The support shows why: both premises.
    let support = &fs[0].evidence["supports"][0];
    let mut ids = strs(Some(support));
    ids.sort();
    assert_eq!(ids, ["f", "r"]);
    assert_eq!(fs[1].evidence["recomputed"], "contradiction");
    assert!(fs[1].evidence.contains_key("conflicts"));
    assert_eq!(fs[2].evidence["recomputed"], "newinfo");
    assert_eq!(r.matrix.get("newinfo", "entailed"), 1);
    assert_eq!(r.matrix.get("ungrounded", "newinfo"), 1);
    assert_eq!(r.matrix.get("contradiction", "newinfo"), 1);
    assert_eq!(r.matrix.total(), 6);
    assert!(r.failed());
}

#[test]
fn ungrounded_citation_missing_and_insufficient() {
    let r = run(&with(
        &PQ,
        &[
            r#"{"kind":"announce","id":"x","formula":"s"}"#,
            // Cites an id nothing announced: error.
            r#"{"kind":"announce","id":"d1","formula":"q","because":["ghost"]}"#,
            // Cites a real premise that does not entail it: warning.
            r#"{"kind":"verify","formula":"q","outcome":"entailed","because":["x"]}"#,
            // Near misses: premises that do entail; a claimed `ungrounded` says so itself.
            r#"{"kind":"verify","formula":"q","outcome":"entailed","because":["f","r"]}"#,
            r#"{"kind":"verify","formula":"q","outcome":"ungrounded","because":["x"]}"#,
        ],
    ));
    let fs = of(&r, Code::UngroundedCitation);
    assert_eq!(fs.len(), 2, "{:#?}", r.findings);
    assert_eq!(fs[0].step, Some(4));
    assert_eq!(fs[0].severity, Severity::Error);
    assert_eq!(strs(fs[0].evidence.get("missing")), ["ghost"]);
    assert_eq!(fs[1].step, Some(5));
    assert_eq!(fs[1].severity, Severity::Warning);
}

#[test]
fn ungrounded_citation_of_a_verified_contradiction() {
    let r = run(&with(
        &PQ,
        &[
            r#"{"kind":"announce","id":"x","formula":"s"}"#,
            // ¬q contradicts Σ through f and r; x has nothing to do with it.
            r#"{"kind":"verify","formula":"!q","outcome":"contradiction","because":["x"]}"#,
            r#"{"kind":"verify","formula":"!q","outcome":"contradiction","because":["nope"]}"#,
            // Near miss: the premises that do contradict it (the rule is always included).
            r#"{"kind":"verify","formula":"!q","outcome":"contradiction","because":["f"]}"#,
        ],
    ));
    let fs = of(&r, Code::UngroundedCitation);
    assert_eq!(fs.len(), 2, "{:#?}", r.findings);
    assert_eq!((fs[0].step, fs[0].severity), (Some(4), Severity::Warning));
    assert_eq!((fs[1].step, fs[1].severity), (Some(5), Severity::Error));
    none(&r, Code::ClaimedOutcomeMismatch);
}

const CONTRA: [&str; 2] = [
    r#"{"kind":"announce","id":"a","formula":"p"}"#,
    r#"{"kind":"announce","id":"b","formula":"!p"}"#,
];

#[test]
fn unhandled_contradiction_until_the_end() {
    let r = run(&CONTRA);
    let f = only(&r, Code::UnhandledContradiction);
    assert_eq!(f.step, Some(2));
    assert_eq!(f.ids[0], "b");
    // The session ends inconsistent too.
    assert_eq!(only(&r, Code::InconsistentSigma).step, Some(2));
}

#[test]
fn unhandled_contradiction_when_the_next_announcement_comes_first() {
    let r = run(&with(
        &CONTRA,
        &[
            r#"{"kind":"announce","id":"c","formula":"q"}"#,
            r#"{"kind":"retract","target":"a"}"#,
        ],
    ));
    let f = only(&r, Code::UnhandledContradiction);
    assert!(
        f.message.contains("next announcement (step 3)"),
        "{}",
        f.message
    );
}

#[test]
fn contradiction_handled_by_retraction_or_revision_is_not_reported() {
    let by_retract = run(&with(
        &CONTRA,
        &[r#"{"kind":"retract","target":"a","by":"agent"}"#],
    ));
    none(&by_retract, Code::UnhandledContradiction);
    let by_revise = run(&with(
        &CONTRA,
        &[
            r#"{"kind":"revise","trigger":"b","retracted":["a"],"policy":"greedy"}"#,
            r#"{"kind":"retract","target":"a","by":"revision"}"#,
        ],
    ));
    assert!(by_revise.findings.is_empty(), "{:#?}", by_revise.findings);
}

#[test]
fn retractions_that_do_not_restore_consistency_leave_it_unhandled() {
    let r = run(&with(
        &CONTRA,
        &[
            r#"{"kind":"announce","id":"x","formula":"s","role":"assumption"}"#,
            r#"{"kind":"announce","id":"c","formula":"!p"}"#,
            r#"{"kind":"retract","target":"b"}"#,
        ],
    ));
    // The first contradiction (step 2) is cut off by the announcement at step 3; the second
    // announcement of ¬p (step 4) did not make Σ inconsistent (it already was), and the
    // retraction of b leaves c against a.
    let fs = of(&r, Code::UnhandledContradiction);
    assert_eq!(fs.len(), 1, "{:#?}", r.findings);
    assert_eq!(fs[0].step, Some(2));
}

#[test]
fn revision_incomplete_when_sigma_stays_inconsistent() {
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"a2","formula":"p & s"}"#,
        r#"{"kind":"announce","id":"b","formula":"!p"}"#,
        r#"{"kind":"revise","trigger":"b","retracted":["a"],"policy":"greedy"}"#,
        r#"{"kind":"retract","target":"a","by":"revision"}"#,
    ]);
    let f = only(&r, Code::RevisionIncomplete);
    assert_eq!(f.step, Some(4));
    assert!(strs(f.evidence.get("conflict_after")).contains(&"a2".to_string()));
    // The revise named the trigger, so the contradiction was handled (badly): no
    // unhandled-contradiction, but the session ends inconsistent.
    none(&r, Code::UnhandledContradiction);
    let end = only(&r, Code::InconsistentSigma);
    assert_eq!(end.step, Some(5));
    let mut conflict = strs(end.evidence.get("conflict"));
    conflict.sort();
    assert_eq!(conflict, ["a2", "b"]);
}

#[test]
fn revision_not_minimal_when_a_retracted_belief_could_stay() {
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"u","formula":"s"}"#,
        r#"{"kind":"announce","id":"b","formula":"!p"}"#,
        r#"{"kind":"revise","trigger":"b","retracted":["a","u"]}"#,
        r#"{"kind":"retract","target":"a","by":"revision"}"#,
        r#"{"kind":"retract","target":"u","by":"revision"}"#,
    ]);
    let f = only(&r, Code::RevisionNotMinimal);
    assert_eq!(strs(f.evidence.get("restorable")), ["u"]);
    // Near miss: retracting only what the conflict needs.
    let ok = run(&[
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"u","formula":"s"}"#,
        r#"{"kind":"announce","id":"b","formula":"!p"}"#,
        r#"{"kind":"revise","trigger":"b","retracted":["a"]}"#,
        r#"{"kind":"retract","target":"a","by":"revision"}"#,
    ]);
    assert!(ok.findings.is_empty(), "{:#?}", ok.findings);
}

#[test]
fn revision_policy_mismatch_against_the_stated_policy() {
    // Greedy retracts the oldest commitment whose removal alone restores consistency: a,
    // not c.
    let lines = [
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"c","formula":"p -> q"}"#,
        r#"{"kind":"announce","id":"b","formula":"!q"}"#,
        r#"{"kind":"revise","trigger":"b","retracted":["c"],"policy":"greedy"}"#,
        r#"{"kind":"retract","target":"c","by":"revision"}"#,
    ];
    let r = run(&lines);
    let f = only(&r, Code::RevisionPolicyMismatch);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(strs(f.evidence.get("policy_retracts")), ["a"]);
    assert_eq!(strs(f.evidence.get("retracted")), ["c"]);
    // Asking for another policy than the stated one makes it a hypothetical note.
    let r = run_with(
        &lines,
        AuditOptions {
            policy: Some(Policy::Recency),
            ..AuditOptions::default()
        },
    );
    for f in of(&r, Code::RevisionPolicyMismatch) {
        assert_eq!(f.severity, Severity::Info);
    }
    // Near miss: the revise did what greedy does.
    let ok = run(&[
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"c","formula":"p -> q"}"#,
        r#"{"kind":"announce","id":"b","formula":"!q"}"#,
        r#"{"kind":"revise","trigger":"b","retracted":["a"],"policy":"greedy"}"#,
        r#"{"kind":"retract","target":"a","by":"revision"}"#,
    ]);
    none(&ok, Code::RevisionPolicyMismatch);
}

#[test]
fn norm_retracted_by_whom() {
    let r = run(&[
        r#"{"kind":"announce","id":"n1","formula":"forall x. !Reveal(x)","role":"norm"}"#,
        r#"{"kind":"announce","id":"n2","formula":"!Harm","role":"norm"}"#,
        r#"{"kind":"announce","id":"f","formula":"p"}"#,
        r#"{"kind":"retract","target":"n1","by":"agent","reason":"inconvenient"}"#,
        r#"{"kind":"retract","target":"n2","by":"user"}"#,
        r#"{"kind":"retract","target":"f","by":"agent"}"#,
    ]);
    let fs = of(&r, Code::NormRetracted);
    assert_eq!(fs.len(), 2, "{:#?}", r.findings);
    assert_eq!((fs[0].step, fs[0].severity), (Some(4), Severity::Error));
    assert_eq!(fs[0].evidence["reason"], "inconvenient");
    assert_eq!((fs[1].step, fs[1].severity), (Some(5), Severity::Warning));
}

/// Issue 27: a rule announced again as a fact keeps its formula and loses its hardness; the
/// audit says so (info), and Θ of the re-announcement is computed on Σ with the rule.
#[test]
fn a_role_change_by_re_announcement_is_reported() {
    let r = run(&[
        r#"{"kind":"announce","id":"r","formula":"g0 | !g2","role":"rule"}"#,
        r#"{"kind":"verify","formula":"g0 | !g2","outcome":"entailed"}"#,
        r#"{"kind":"announce","id":"r","formula":"g0 | !g2","role":"fact","confidence":0.6}"#,
        r#"{"kind":"announce","id":"s","formula":"p","role":"fact"}"#,
        r#"{"kind":"announce","id":"s","formula":"p","role":"fact","confidence":0.5}"#,
        r#"{"kind":"announce","id":"t","formula":"q","role":"fact"}"#,
        r#"{"kind":"announce","id":"t","formula":"!q","role":"fact"}"#,
    ]);
    let f = only(&r, Code::RoleChanged);
    assert_eq!((f.step, f.severity), (Some(3), Severity::Info));
    assert_eq!(f.evidence["from"], "rule");
    assert_eq!(f.evidence["to"], "fact");
    assert_eq!(f.evidence["same_formula"], true);
    none(&r, Code::ClaimedOutcomeMismatch);
}

const PLAN: &str = r#"{"kind":"plan","id":"p1","steps":[{"id":"S1","kind":"fetch","deps":[],"post":"ground_belief(pace) is known"},{"id":"S2","kind":"compute","deps":["S1"],"post":"ground_belief(time) is known"}]}"#;

#[test]
fn postcondition_false_positive_caught_or_not() {
    let caught = run(&[
        PLAN,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"dispatched"}"#,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"done","post_met":true,"new_beliefs":[{"name":"speed","value":"20"}]}"#,
        r#"{"kind":"postcondition","plan":"p1","step":"S1","tier":1,"ok":false,"program":"ground_belief(pace) is known"}"#,
    ]);
    let f = only(&caught, Code::PostconditionFalsePositive);
    assert_eq!((f.step, f.severity), (Some(3), Severity::Warning));
    none(&caught, Code::PostconditionRecordMismatch);
    let uncaught = run(&[
        PLAN,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"done","post_met":true,"new_beliefs":[{"name":"speed","value":"20"}]}"#,
    ]);
    assert_eq!(
        only(&uncaught, Code::PostconditionFalsePositive).severity,
        Severity::Error
    );
    // Near miss: the step wrote the expected name (here through a `belief` event).
    let ok = run(&[
        PLAN,
        r#"{"kind":"belief","name":"pace","value":"20"}"#,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"done","post_met":true}"#,
        r#"{"kind":"postcondition","plan":"p1","step":"S1","tier":1,"ok":true,"program":"ground_belief(pace) is known"}"#,
    ]);
    assert!(ok.findings.is_empty(), "{:#?}", ok.findings);
}

#[test]
fn postcondition_record_mismatch_both_ways() {
    let r = run(&[
        PLAN,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"done","post_met":false}"#,
        r#"{"kind":"postcondition","plan":"p1","step":"S1","tier":1,"ok":true,"program":"ground_belief(pace) is known"}"#,
        r#"{"kind":"belief","name":"time","value":"3"}"#,
        r#"{"kind":"postcondition","plan":"p1","step":"S2","tier":1,"ok":false}"#,
    ]);
    let fs = of(&r, Code::PostconditionRecordMismatch);
    assert_eq!(fs.len(), 2, "{:#?}", r.findings);
    assert_eq!(fs[0].evidence["recorded"], true);
    assert_eq!(fs[0].evidence["recomputed"], false);
    assert_eq!(fs[1].evidence["recorded"], false);
    assert_eq!(fs[1].evidence["recomputed"], true);
}

#[test]
fn satisfaction_record_is_checked_against_ground_beliefs() {
    let intention = r#"{"kind":"intention","id":"int-1","type":"t","satisfaction":"ground_belief(answer) is known"}"#;
    let r = run(&[
        intention,
        r#"{"kind":"satisfaction","intention":"int-1","ok":true}"#,
        r#"{"kind":"belief","name":"answer","value":"17"}"#,
        r#"{"kind":"satisfaction","intention":"int-1","ok":true}"#,
    ]);
    let f = only(&r, Code::PostconditionRecordMismatch);
    assert_eq!(f.step, Some(2));
    assert_eq!(f.evidence["intention"], "int-1");
}

#[test]
fn tiers_2_and_3_are_not_checkable_notes() {
    let r = run(&[
        PLAN,
        r#"{"kind":"postcondition","plan":"p1","step":"S1","tier":2,"ok":true,"program":"assert pace > 0"}"#,
        r#"{"kind":"postcondition","plan":"p1","step":"S2","tier":3,"ok":false}"#,
    ]);
    let fs = of(&r, Code::NotCheckable);
    assert_eq!(fs.len(), 2);
    assert!(fs.iter().all(|f| f.severity == Severity::Info));
    assert!(!r.failed(), "{:#?}", r.findings);
}

#[test]
fn dag_cycle_and_dangling_dependency() {
    let r = run(&[
        r#"{"kind":"plan","id":"p","steps":[{"id":"A","deps":["C"]},{"id":"B","deps":["A"]},{"id":"C","deps":["B"]},{"id":"D","deps":["Z"]}]}"#,
    ]);
    let c = only(&r, Code::DagCycle);
    let mut cyc = strs(c.evidence.get("cycle"));
    cyc.sort();
    assert_eq!(cyc, ["A", "B", "C"]);
    let d = only(&r, Code::DagDanglingDependency);
    assert_eq!(d.evidence["dangling"][0]["missing"], "Z");
    let ok = run(&[PLAN]);
    assert!(ok.findings.is_empty(), "{:#?}", ok.findings);
}

#[test]
fn dag_deadlock_without_replan_is_an_error() {
    let r = run(&[
        PLAN,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"failed"}"#,
    ]);
    let f = only(&r, Code::DagDeadlock);
    assert_eq!((f.step, f.severity), (Some(2), Severity::Error));
    assert_eq!(strs(f.evidence.get("unfinished")), ["S1", "S2"]);
    // Near miss: a done step waiting for its check is in flight, not deadlocked; once
    // verified, S2 is ready.
    let ok = run(&[
        PLAN,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"dispatched"}"#,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"done","post_met":true,"new_beliefs":[{"name":"pace","value":"1"}]}"#,
        r#"{"kind":"postcondition","plan":"p1","step":"S1","tier":1,"ok":true,"program":"ground_belief(pace) is known"}"#,
    ]);
    assert!(ok.findings.is_empty(), "{:#?}", ok.findings);
}

#[test]
fn unexpected_belief_name_needs_a_similar_expected_one() {
    let r = run(&[
        PLAN,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"done","new_beliefs":[{"name":"pace_kmh","value":"20"},{"name":"weather","value":"sunny"}]}"#,
    ]);
    let f = only(&r, Code::UnexpectedBeliefName);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(f.evidence["name"], "pace_kmh");
    assert_eq!(f.evidence["written_by"], "p1/S1");
    assert_eq!(strs(f.evidence.get("similar_expected")), ["pace"]);
    // Near misses: a `belief` event is not a step output; once `pace` is known, a similar
    // name is no longer a likely mistake.
    let stated = run(&[PLAN, r#"{"kind":"belief","name":"pace_kmh","value":"20"}"#]);
    none(&stated, Code::UnexpectedBeliefName);
    let ok = run(&[
        PLAN,
        r#"{"kind":"belief","name":"pace","value":"20"}"#,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"done","new_beliefs":[{"name":"pace_kmh","value":"20"}]}"#,
    ]);
    none(&ok, Code::UnexpectedBeliefName);
}

#[test]
fn repeated_query_only_when_sigma_is_unchanged() {
    let r = run(&with(
        &PQ,
        &[
            r#"{"kind":"query","formula":"q","answer":"yes"}"#,
            r#"{"kind":"query","formula":"q","answer":"yes"}"#,
            r#"{"kind":"query","formula":"(q)","answer":"yes"}"#,
            r#"{"kind":"announce","id":"z","formula":"s"}"#,
            r#"{"kind":"query","formula":"q","answer":"yes"}"#,
        ],
    ));
    let f = only(&r, Code::RepeatedQuery);
    assert_eq!(f.step, Some(4));
    let steps: Vec<u64> = f.evidence["steps"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    assert_eq!(steps, [3, 4, 5]);
}

#[test]
fn oscillation_between_two_states() {
    // The agent tries p, drops it, tries q, drops it, and goes back to p then q: Σ returns to
    // states it had abandoned. Each pair of alternating states is reported once.
    let r = run(&[
        r#"{"kind":"announce","id":"base","formula":"r"}"#,
        r#"{"kind":"announce","id":"a1","formula":"p"}"#,
        r#"{"kind":"retract","target":"a1"}"#,
        r#"{"kind":"announce","id":"a2","formula":"q"}"#,
        r#"{"kind":"retract","target":"a2"}"#,
        r#"{"kind":"announce","id":"a3","formula":"p"}"#,
        r#"{"kind":"retract","target":"a3"}"#,
        r#"{"kind":"announce","id":"a4","formula":"q"}"#,
    ]);
    let fs = of(&r, Code::Oscillation);
    assert_eq!(fs.len(), 2, "{:#?}", r.findings);
    // {r} and {r, p}: p adopted at 2, dropped at 3, adopted again (as a3, same formula) at 6.
    assert_eq!(fs[0].step, Some(6));
    assert_eq!(strs(fs[0].evidence.get("state_b")), ["a3"]);
    assert!(strs(fs[0].evidence.get("state_a")).is_empty());
    let steps: Vec<u64> = fs[0].evidence["steps"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    assert_eq!(steps, [1, 2, 3, 6]);
    assert_eq!(fs[1].step, Some(8));
    assert_eq!(strs(fs[1].evidence.get("state_b")), ["a4"]);
    // Near miss: trying p then q once each is not oscillating.
    let ok = run(&[
        r#"{"kind":"announce","id":"a1","formula":"p"}"#,
        r#"{"kind":"retract","target":"a1"}"#,
        r#"{"kind":"announce","id":"a2","formula":"q"}"#,
    ]);
    none(&ok, Code::Oscillation);
}

#[test]
fn unresolved_reference_and_formula_parse_error() {
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"p &"}"#,
        r#"{"kind":"retract","target":"nobody"}"#,
    ]);
    let p = only(&r, Code::ParseError);
    assert_eq!(p.step, Some(1));
    assert_eq!(p.formulas, ["p &"]);
    assert!(p.location.as_ref().is_some_and(|l| l.column.is_some()));
    let u = only(&r, Code::UnresolvedReference);
    assert_eq!(u.ids, ["nobody"]);
}

#[test]
fn every_code_has_a_name_and_a_summary() {
    for &c in Code::ALL {
        assert_eq!(Code::from_name(c.as_str()), Some(c));
        assert!(c.summary(1).starts_with("1 "));
        assert!(c.summary(3).starts_with("3 "));
        assert_ne!(c.summary(1)[2..], c.summary(2)[2..], "{c}");
    }
    // The names contract §5 fixes.
    for name in [
        "claimed-outcome-mismatch",
        "ungrounded-citation",
        "unhandled-contradiction",
        "inconsistent-sigma",
        "revision-not-minimal",
        "revision-incomplete",
        "norm-retracted",
        "postcondition-false-positive",
        "dag-cycle",
        "dag-dangling-dependency",
        "dag-deadlock",
        "repeated-query",
        "parse-error",
    ] {
        assert!(Code::from_name(name).is_some(), "{name}");
    }
}

// Seed 004's failure taxonomy (§7.3): the four modes `model::audit::failures` detects, and
// recorded `failure_mode`s against them.

const INTENT: &str = r#"{"kind":"intention","id":"int-1","type":"t","satisfaction":"ground_belief(final_answer) is known"}"#;
const RATIO: &str = r#"{"kind":"plan","id":"p","steps":[{"id":"S1","kind":"fetch","post":"ground_belief(a) is known"},{"id":"S2","kind":"fetch","post":"ground_belief(b) is known"},{"id":"S3","kind":"compute","deps":["S1","S2"],"post":"ground_belief(r) is known","compute":"a / b"},{"id":"S4","kind":"synthesize","deps":["S3"],"post":"ground_belief(final_answer) is known"}]}"#;
const FETCHED: [&str; 2] = [
    r#"{"kind":"step","plan":"p","step":"S1","status":"done","new_beliefs":[{"name":"a","value":"356400","source":"web_search"}]}"#,
    r#"{"kind":"step","plan":"p","step":"S2","status":"done","new_beliefs":[{"name":"b","value":20.9,"source":"web_search"}]}"#,
];

fn ratio_run(r: &'static str, answer: &'static str, sat: &'static str) -> Vec<&'static str> {
    let mut v = vec![INTENT, RATIO];
    v.extend(FETCHED);
    v.extend([r, answer, sat]);
    v
}

#[test]
fn incorrect_computation_against_the_inputs_at_dispatch() {
    let r = run(&[
        RATIO,
        FETCHED[0],
        FETCHED[1],
        r#"{"kind":"step","plan":"p","step":"S3","status":"dispatched"}"#,
        // A later write of `b` is not what S3 computed from: the snapshot is at dispatch.
        r#"{"kind":"belief","name":"b","value":"10"}"#,
        r#"{"kind":"step","plan":"p","step":"S3","status":"done","new_beliefs":[{"name":"r","value":"17820"}]}"#,
    ]);
    let f = only(&r, Code::IncorrectComputation);
    assert_eq!((f.step, f.severity), (Some(6), Severity::Error));
    assert_eq!(f.evidence["inputs"]["b"], 20.9);
    assert_eq!(f.evidence["written"], "17820");
    let exact = f.evidence["recomputed"].as_f64().expect("number");
    assert!((exact - 17052.631578947367).abs() < 1e-6, "{exact}");
    // Near misses: the result rounded to what was written; the step's own `inputs`
    // (here the 10 written after dispatch) overriding the snapshot.
    let rounded = run(&[
        RATIO,
        FETCHED[0],
        FETCHED[1],
        r#"{"kind":"step","plan":"p","step":"S3","status":"done","new_beliefs":[{"name":"r","value":"17052.63"}]}"#,
    ]);
    none(&rounded, Code::IncorrectComputation);
    assert!(rounded.findings.is_empty(), "{:#?}", rounded.findings);
    let own = run(&[
        RATIO,
        FETCHED[0],
        FETCHED[1],
        r#"{"kind":"step","plan":"p","step":"S3","status":"done","inputs":{"b":20},"new_beliefs":[{"name":"r","value":17820}]}"#,
    ]);
    none(&own, Code::IncorrectComputation);
    // An input that is not a number cannot be rechecked: said, never a verdict.
    let odd = run(&[
        RATIO,
        r#"{"kind":"belief","name":"a","value":"2:01:09"}"#,
        FETCHED[1],
        r#"{"kind":"step","plan":"p","step":"S3","status":"done","new_beliefs":[{"name":"r","value":"1"}]}"#,
    ]);
    none(&odd, Code::IncorrectComputation);
    let n = only(&odd, Code::NotCheckable);
    assert_eq!(n.evidence["cause"], "computation");
}

#[test]
fn answer_formatting_is_a_near_miss_and_an_exact_match_is_not() {
    let emit = r#"{"kind":"step","plan":"p","step":"S4","status":"done","summary":"FINAL ANSWER: 16.95","new_beliefs":[{"name":"final_answer","value":"16.95"}]}"#;
    let s3 = r#"{"kind":"step","plan":"p","step":"S3","status":"done","new_beliefs":[{"name":"r","value":"17052.63"}]}"#;
    let r = run(&ratio_run(
        s3,
        emit,
        r#"{"kind":"satisfaction","intention":"int-1","ok":true,"expected_answer":"17"}"#,
    ));
    let f = only(&r, Code::AnswerFormatting);
    assert_eq!((f.step, f.severity), (Some(6), Severity::Warning));
    assert_eq!(f.evidence["answer"], "16.95");
    assert_eq!(f.evidence["expected"], "17");
    none(&r, Code::WrongAnswer);
    none(&r, Code::BadRetrieval);
    // Near misses: "17.0" is the expected 17 (numbers compare as numbers); no expected answer,
    // nothing to score.
    let exact = run(&ratio_run(
        s3,
        r#"{"kind":"step","plan":"p","step":"S4","status":"done","summary":"FINAL ANSWER: 17.0","new_beliefs":[{"name":"final_answer","value":"17.0"}]}"#,
        r#"{"kind":"satisfaction","intention":"int-1","ok":true,"expected_answer":17}"#,
    ));
    assert!(exact.findings.is_empty(), "{:#?}", exact.findings);
    let unscored = run(&ratio_run(
        s3,
        emit,
        r#"{"kind":"satisfaction","intention":"int-1","ok":true}"#,
    ));
    assert!(unscored.findings.is_empty(), "{:#?}", unscored.findings);
}

#[test]
fn bad_retrieval_when_every_computation_checks_and_wrong_answer_when_not() {
    let s3 = r#"{"kind":"step","plan":"p","step":"S3","status":"done","new_beliefs":[{"name":"r","value":"17052.63"}]}"#;
    let wrong = r#"{"kind":"step","plan":"p","step":"S4","status":"done","summary":"FINAL ANSWER: 17052.63 hours","new_beliefs":[{"name":"final_answer","value":"17052.63"}]}"#;
    let sat = r#"{"kind":"satisfaction","intention":"int-1","ok":true,"expected_answer":"42"}"#;
    let r = run(&ratio_run(s3, wrong, sat));
    let f = only(&r, Code::BadRetrieval);
    assert_eq!((f.step, f.severity), (Some(6), Severity::Error));
    assert_eq!(f.evidence["cause"], "wrong-answer");
    let fetched: Vec<&str> = f.evidence["fetched"]
        .as_array()
        .expect("fetched")
        .iter()
        .filter_map(|x| x["step"].as_str())
        .collect();
    assert_eq!(fetched, ["S1", "S2"]);
    none(&r, Code::WrongAnswer);
    // Near miss: the wrong answer follows from a wrong computation, which explains it.
    let bad_comp = run(&ratio_run(
        r#"{"kind":"step","plan":"p","step":"S3","status":"done","new_beliefs":[{"name":"r","value":"42000"}]}"#,
        wrong,
        sat,
    ));
    none(&bad_comp, Code::BadRetrieval);
    only(&bad_comp, Code::IncorrectComputation);
    // Near miss: a computation that cannot be rechecked leaves the cause open.
    let open = run(&[
        INTENT,
        r#"{"kind":"plan","id":"p","steps":[{"id":"S1","kind":"fetch"},{"id":"S2","kind":"compute","deps":["S1"]},{"id":"S3","kind":"synthesize","deps":["S2"]}]}"#,
        r#"{"kind":"step","plan":"p","step":"S1","status":"done","new_beliefs":[{"name":"a","value":"1"}]}"#,
        r#"{"kind":"step","plan":"p","step":"S2","status":"done","new_beliefs":[{"name":"b","value":"2"}]}"#,
        r#"{"kind":"step","plan":"p","step":"S3","status":"done","summary":"FINAL ANSWER: 2"}"#,
        sat,
    ]);
    none(&open, Code::BadRetrieval);
    let w = only(&open, Code::WrongAnswer);
    assert_eq!(strs(w.evidence.get("unchecked")), ["S2"]);
    // A fetch that failed outright is the other half of bad retrieval; a failed compute
    // step is not.
    let failed = run(&[
        RATIO,
        r#"{"kind":"step","plan":"p","step":"S1","status":"failed","tool_calls":[{"tool":"web_search","error":"timeout"}]}"#,
        r#"{"kind":"step","plan":"p","step":"S3","status":"failed"}"#,
    ]);
    let f = only(&failed, Code::BadRetrieval);
    assert_eq!((f.step, f.severity), (Some(2), Severity::Warning));
    assert_eq!(f.evidence["tool_errors"][0]["error"], "timeout");
}

#[test]
fn file_read_avoided_unless_a_step_reads_the_named_file() {
    let intent = r#"{"kind":"intention","id":"int-1","files":["data/menu_sales.xlsx"],"satisfaction":"ground_belief(final_answer) is known"}"#;
    let plan = r#"{"kind":"plan","id":"p","steps":[{"id":"S1","kind":"fetch","post":"ground_belief(total) is known"},{"id":"S2","kind":"synthesize","deps":["S1"]}]}"#;
    let r = run(&[
        intent,
        plan,
        r#"{"kind":"step","plan":"p","step":"S1","status":"done","tool_calls":[{"tool":"web_search","args":{"query":"menu sales"}},{"tool":"read_file","args":{"path":"other.csv"}}],"new_beliefs":[{"name":"total","value":"1"}]}"#,
    ]);
    let f = only(&r, Code::FileReadAvoided);
    assert_eq!((f.step, f.severity), (Some(3), Severity::Warning));
    assert_eq!(strs(f.evidence.get("unread")), ["data/menu_sales.xlsx"]);
    assert_eq!(strs(f.evidence.get("searched_instead")), ["p/S1"]);
    // With a wrong answer it is the cause, an error, and no bad retrieval is claimed.
    let wrong = run(&[
        intent,
        plan,
        r#"{"kind":"step","plan":"p","step":"S1","status":"done","tool_calls":[{"tool":"web_search"}],"new_beliefs":[{"name":"total","value":"1"}]}"#,
        r#"{"kind":"step","plan":"p","step":"S2","status":"done","summary":"FINAL ANSWER: 1"}"#,
        r#"{"kind":"satisfaction","intention":"int-1","ok":true,"expected_answer":"89706.00"}"#,
    ]);
    assert_eq!(
        only(&wrong, Code::FileReadAvoided).severity,
        Severity::Error
    );
    none(&wrong, Code::BadRetrieval);
    // Near misses: the file read by name (any argument, its last path component); a task
    // that names no file.
    let read = run(&[
        intent,
        plan,
        r#"{"kind":"step","plan":"p","step":"S1","status":"done","tool_calls":[{"tool":"read_file","args":["menu_sales.xlsx"]}],"new_beliefs":[{"name":"total","value":"1"}]}"#,
    ]);
    assert!(read.findings.is_empty(), "{:#?}", read.findings);
    let no_file = run(&[
        INTENT,
        plan,
        r#"{"kind":"step","plan":"p","step":"S1","status":"done","tool_calls":[{"tool":"web_search"}],"new_beliefs":[{"name":"total","value":"1"}]}"#,
    ]);
    assert!(no_file.findings.is_empty(), "{:#?}", no_file.findings);
}

/// Each intention's window holds the steps from it up to the next intention, the last one's
/// to the end: a file read in one window does not count for another, and a step at the
/// next intention's step is the next window's.
#[test]
fn a_file_read_counts_only_in_its_intentions_window() {
    let intent = |id: &str, file: &str| {
        format!(
            r#"{{"kind":"intention","id":"{id}","files":["{file}"],"satisfaction":"ground_belief(final_answer) is known"}}"#
        )
    };
    let plan = r#"{"kind":"plan","id":"p","steps":[{"id":"S1","kind":"fetch","post":"ground_belief(total) is known"}]}"#;
    let read = |file: &str| {
        format!(
            r#"{{"kind":"step","plan":"p","step":"S1","status":"done","tool_calls":[{{"tool":"read_file","args":{{"path":"{file}"}}}}],"new_beliefs":[{{"name":"total","value":"1"}}]}}"#
        )
    };
    let lines = [
        intent("int-1", "a.csv"),
        plan.to_string(),
        read("a.csv"),
        intent("int-2", "b.csv"),
        read("a.csv"),
        read("c.csv"),
        intent("int-3", "c.csv"),
        read("b.csv"),
        intent("int-4", "d.csv"),
        read("d.csv"),
    ];
    let r = run(&lines.iter().map(String::as_str).collect::<Vec<_>>());
    let mut unread: Vec<(String, Vec<String>)> = of(&r, Code::FileReadAvoided)
        .iter()
        .map(|f| {
            let id = f
                .message
                .split_whitespace()
                .nth(3)
                .unwrap_or("")
                .to_string();
            (id, strs(f.evidence.get("unread")))
        })
        .collect();
    unread.sort();
    assert_eq!(
        unread,
        [
            ("int-2".to_string(), vec!["b.csv".to_string()]),
            ("int-3".to_string(), vec!["c.csv".to_string()]),
        ],
        "{:#?}",
        r.findings
    );
}

#[test]
fn recorded_failure_modes_agree_disagree_or_stay_unchecked() {
    let s3 = r#"{"kind":"step","plan":"p","step":"S3","status":"done","new_beliefs":[{"name":"r","value":"17052.63"}]}"#;
    let emit =
        r#"{"kind":"step","plan":"p","step":"S4","status":"done","summary":"FINAL ANSWER: 16.95"}"#;
    // Agreement: surfaced as a note.
    let agree = run(&ratio_run(
        s3,
        emit,
        r#"{"kind":"satisfaction","intention":"int-1","ok":true,"expected_answer":"17","failure_mode":"Answer formatting"}"#,
    ));
    let f = only(&agree, Code::FailureModeRecorded);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(f.evidence["verdict"], "agree");
    assert_eq!(strs(f.evidence.get("detected")), ["answer_formatting"]);
    none(&agree, Code::FailureModeMismatch);
    // Disagreement: another mode detected there.
    let other = run(&ratio_run(
        s3,
        emit,
        r#"{"kind":"satisfaction","intention":"int-1","ok":true,"expected_answer":"17","failure_mode":"incorrect_computation"}"#,
    ));
    let f = only(&other, Code::FailureModeMismatch);
    assert_eq!(f.evidence["recorded"], "incorrect_computation");
    assert_eq!(strs(f.evidence.get("detected")), ["answer_formatting"]);
    // Disagreement: checked and absent (the postcondition holds, so no false positive).
    // (One step: a failed check of S1 in PLAN would also deadlock S2, another mode.)
    let absent = run(&[
        r#"{"kind":"plan","id":"p1","steps":[{"id":"S1","kind":"fetch","post":"ground_belief(pace) is known"}]}"#,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"done","post_met":true,"new_beliefs":[{"name":"pace","value":"1"}]}"#,
        r#"{"kind":"postcondition","plan":"p1","step":"S1","tier":1,"ok":false,"failure_mode":"verification_false_positive"}"#,
    ]);
    let f = only(&absent, Code::FailureModeMismatch);
    assert!(strs(f.evidence.get("detected")).is_empty());
    // Unchecked: a bad retrieval of a done fetch, with no expected answer to judge it by.
    let unchecked = run(&[
        r#"{"kind":"plan","id":"p1","steps":[{"id":"S1","kind":"fetch","post":"ground_belief(pace) is known"}]}"#,
        r#"{"kind":"step","plan":"p1","step":"S1","status":"done","post_met":true,"new_beliefs":[{"name":"pace","value":"1"}]}"#,
        r#"{"kind":"postcondition","plan":"p1","step":"S1","tier":2,"ok":false,"failure_mode":"bad_retrieval"}"#,
    ]);
    let f = only(&unchecked, Code::FailureModeRecorded);
    assert_eq!(f.evidence["verdict"], "unchecked");
    none(&unchecked, Code::FailureModeMismatch);
    // A label outside the taxonomy is surfaced as such; a recorded score is checked too.
    let odd = run(&ratio_run(
        s3,
        r#"{"kind":"step","plan":"p","step":"S4","status":"done","summary":"FINAL ANSWER: 17"}"#,
        r#"{"kind":"satisfaction","intention":"int-1","ok":true,"expected_answer":"17","correct":false,"failure_mode":"timeout"}"#,
    ));
    assert_eq!(
        only(&odd, Code::FailureModeRecorded).evidence["verdict"],
        "not-in-taxonomy"
    );
    let m = only(&odd, Code::FailureModeMismatch);
    assert_eq!(m.evidence["recorded_correct"], false);
    assert_eq!(m.evidence["recomputed_correct"], true);
}

// Seed 001's QUERY and ANSWER, recomputed on Σ at their step.

#[test]
fn query_answers_are_recomputed() {
    let r = run(&with(
        &PQ,
        &[
            r#"{"kind":"query","formula":"q","answer":"unknown"}"#,
            r#"{"kind":"query","formula":"!q","answer":"unknown"}"#,
            r#"{"kind":"query","formula":"s","answer":"yes"}"#,
            // Near misses: right answers of each kind, and a query with no answer.
            r#"{"kind":"query","formula":"q","answer":"yes"}"#,
            r#"{"kind":"query","formula":"!p","answer":"no"}"#,
            r#"{"kind":"query","formula":"s | q & !q","answer":"unknown"}"#,
            r#"{"kind":"query","formula":"!q"}"#,
        ],
    ));
    let fs = of(&r, Code::QueryAnswerMismatch);
    let got: Vec<(Option<u32>, &Value, &Value)> = fs
        .iter()
        .map(|f| (f.step, &f.evidence["claimed"], &f.evidence["recomputed"]))
        .collect();
    assert_eq!(
        got,
        vec![
            (Some(3), &Value::from("unknown"), &Value::from("entailed")),
            (
                Some(4),
                &Value::from("unknown"),
                &Value::from("contradicted")
            ),
            (Some(5), &Value::from("yes"), &Value::from("unknown")),
        ],
        "{:#?}",
        r.findings
    );
    assert!(fs.iter().all(|f| f.severity == Severity::Error));
    // The premises behind the recomputed answer: q follows from both beliefs.
    let mut ids = strs(fs[0].evidence.get("supports").and_then(|s| s.get(0)));
    ids.sort();
    assert_eq!(ids, ["f", "r"]);
    assert_eq!(fs[1].evidence["expected_answer"], "no");
    assert!(fs[1].evidence.get("conflicts").is_some());
}

#[test]
fn answers_must_follow_from_sigma_unless_hedged() {
    let r = run(&with(
        &PQ,
        &[
            r#"{"kind":"answer","text":"q does not hold","formula":"!q"}"#,
            r#"{"kind":"answer","text":"s holds","formula":"s"}"#,
            // Near misses: an entailed answer; a hedged guess; an answer with no formula.
            r#"{"kind":"answer","text":"q","formula":"q"}"#,
            r#"{"kind":"answer","text":"maybe s","formula":"s","hedged":true}"#,
            r#"{"kind":"answer","text":"no idea"}"#,
        ],
    ));
    let c = only(&r, Code::AnswerContradictsSigma);
    assert_eq!((c.step, c.severity), (Some(3), Severity::Error));
    let mut ids = strs(c.evidence.get("conflicts").and_then(|s| s.get(0)));
    ids.sort();
    assert_eq!(ids, ["f", "r"]);
    let n = only(&r, Code::AnswerNotEntailed);
    assert_eq!((n.step, n.severity), (Some(4), Severity::Warning));
    // A hedged answer Σ contradicts is still a contradiction.
    let hedged = run(&with(
        &PQ,
        &[r#"{"kind":"answer","formula":"!q","hedged":true}"#],
    ));
    assert_eq!(
        only(&hedged, Code::AnswerContradictsSigma).evidence["hedged"],
        true
    );
    // An answer formula that does not parse is a parse error, not a verdict.
    let bad = run(&[r#"{"kind":"answer","formula":"p &"}"#]);
    only(&bad, Code::ParseError);
    none(&bad, Code::AnswerNotEntailed);
}

#[test]
fn query_and_answer_timeouts_are_not_checkable_never_verdicts() {
    use std::time::Duration;
    // A pigeonhole formula no solver refutes in a millisecond.
    let mut clauses = Vec::new();
    let (holes, pigeons) = (8, 9);
    for p in 0..pigeons {
        let row: Vec<String> = (0..holes).map(|h| format!("x{p}_{h}")).collect();
        clauses.push(format!("({})", row.join(" | ")));
    }
    for h in 0..holes {
        for a in 0..pigeons {
            for b in a + 1..pigeons {
                clauses.push(format!("(!x{a}_{h} | !x{b}_{h})"));
            }
        }
    }
    let php = clauses.join(" & ");
    let announce =
        format!(r#"{{"kind":"announce","id":"php","formula":"{php} | z","role":"rule"}}"#);
    let lines = [
        announce.as_str(),
        r#"{"kind":"query","formula":"z","answer":"yes"}"#,
        r#"{"kind":"answer","formula":"z"}"#,
    ];
    let mut opts = AuditOptions::default();
    opts.recompute.timeout = Duration::from_millis(1);
    let r = run_with(&lines, opts);
    none(&r, Code::QueryAnswerMismatch);
    none(&r, Code::AnswerNotEntailed);
    let n: Vec<_> = of(&r, Code::NotCheckable)
        .into_iter()
        .filter(|f| f.formulas == ["z"])
        .collect();
    assert_eq!(n.len(), 2, "{:#?}", r.findings);
    assert!(n.iter().all(|f| f.evidence["cause"] == "timeout"), "{n:#?}");
}

// Truth maintenance: a derived belief falls with its premises unless something else
// supports it.

#[test]
fn unsupported_derivation_once_the_retractions_settle() {
    let base = [
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"r","formula":"p -> q","role":"rule"}"#,
        r#"{"kind":"announce","id":"d","formula":"q","because":["a","r"]}"#,
    ];
    let r = run(&with(
        &base,
        &[
            r#"{"kind":"retract","target":"a","by":"agent"}"#,
            r#"{"kind":"log","message":"moving on"}"#,
        ],
    ));
    let f = only(&r, Code::UnsupportedDerivation);
    assert_eq!((f.step, f.severity), (Some(4), Severity::Warning));
    assert_eq!(f.evidence["belief"], "d");
    assert_eq!(f.evidence["premises_gone"][0]["id"], "a");
    assert_eq!(f.evidence["premises_gone"][0]["step"], 4);
    assert_eq!(strs(f.evidence.get("premises_left")), ["r"]);
    // Near misses: the agent retracts the dependent right after (one run of retractions);
    // another belief still entails it; the dependent itself was retracted.
    let cascaded = run(&with(
        &base,
        &[
            r#"{"kind":"retract","target":"a"}"#,
            r#"{"kind":"retract","target":"d"}"#,
        ],
    ));
    none(&cascaded, Code::UnsupportedDerivation);
    let revised = run(&with(
        &base,
        &[
            r#"{"kind":"revise","trigger":"a","retracted":["a","d"]}"#,
            r#"{"kind":"retract","target":"a","by":"revision"}"#,
            r#"{"kind":"retract","target":"d","by":"revision"}"#,
        ],
    ));
    none(&revised, Code::UnsupportedDerivation);
    let supported = run(&with(
        &base,
        &[
            r#"{"kind":"announce","id":"b","formula":"q | !q -> q & p | q"}"#,
            r#"{"kind":"retract","target":"a"}"#,
        ],
    ));
    none(&supported, Code::UnsupportedDerivation);
    // ...until that other support goes too.
    let later = run(&with(
        &base,
        &[
            r#"{"kind":"announce","id":"b","formula":"q"}"#,
            r#"{"kind":"retract","target":"a"}"#,
            r#"{"kind":"thought","text":"b still says q"}"#,
            r#"{"kind":"retract","target":"b"}"#,
        ],
    ));
    assert_eq!(only(&later, Code::UnsupportedDerivation).step, Some(7));
    // A derived rule is judged the same way.
    let rule = run(&[
        r#"{"kind":"announce","id":"r1","formula":"p -> q","role":"rule"}"#,
        r#"{"kind":"announce","id":"r2","formula":"q -> s","role":"rule"}"#,
        r#"{"kind":"announce","id":"r3","formula":"p -> s","role":"rule","because":["r1","r2"]}"#,
        r#"{"kind":"retract","target":"r2"}"#,
    ]);
    assert_eq!(
        only(&rule, Code::UnsupportedDerivation).evidence["belief"],
        "r3"
    );
}

#[test]
fn mixed_script_and_confusable_names_are_flagged() {
    // `аdmin` has a Cyrillic а: one word, two scripts, and it renders like `admin`.
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"\"admin\" -> granted"}"#,
        r#"{"kind":"announce","id":"b","formula":"\"аdmin\""}"#,
    ]);
    let f = only(&r, Code::MixedScriptAtom);
    assert_eq!(f.step, Some(2));
    assert_eq!(f.evidence["atom"], "аdmin");
    assert_eq!(strs(f.evidence.get("scripts")), ["Cyrillic", "Latin"]);
    assert_eq!(strs(f.evidence.get("looks_like")), ["admin"]);
    assert!(f.message.contains("renders like `admin`"), "{}", f.message);
    // The message shows the marker, so the two names do not read the same in the report.
    assert!(
        f.message.contains("аdmin⟨mixed:Cyrillic+Latin⟩"),
        "{}",
        f.message
    );
    none(&r, Code::ConfusableAtoms);

    // All Cyrillic, one script, yet its skeleton is that of a Latin name in use: one pair.
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"\"paypa\""}"#,
        r#"{"kind":"query","formula":"\"раура\""}"#,
        r#"{"kind":"announce","id":"c","formula":"\"раура\" | \"paypa\""}"#,
    ]);
    let f = only(&r, Code::ConfusableAtoms);
    assert_eq!(f.step, Some(2));
    assert_eq!(strs(f.evidence.get("looks_like")), ["paypa"]);
    none(&r, Code::MixedScriptAtom);
}

/// Read from a file, where an ASCII line is not decoded for this check, a look-alike is
/// found however it is written (raw UTF-8, or a `\u` escape in an ASCII line) and the
/// findings are those of the same lines held in memory.
#[test]
fn look_alikes_in_a_file_are_found_as_in_memory() {
    let lines = [
        r#"{"kind":"announce","id":"a","formula":"\"admin\" -> granted"}"#,
        r#"{"kind":"log","level":"info","message":"\u0430dmin is not a formula here"}"#,
        r#"{"kind":"query","formula":"\"\u0430dmin\""}"#,
        r#"{"kind":"announce","id":"b","formula":"\"раура\" | \"paypa\""}"#,
        r#"{"kind":"verify","formula":"\"p\\u\" | granted","outcome":"newinfo"}"#,
        r#"{"kind":"answer","question":"?","formula":"\"g\u043e\u043egle\"","answer":"yes"}"#,
        r#"{"kind":"announce","id":"c","formula":"\"google\""}"#,
    ];
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    for l in lines {
        writeln!(file, "{l}").expect("write");
    }
    let from_file = audit(
        &Model::load(&[file.path()]).expect("loads"),
        &AuditOptions::default(),
    );
    let in_memory = run(&lines);
    let looks = |r: &Report| -> Vec<(Code, Option<u32>, Value)> {
        r.findings
            .iter()
            .filter(|f| matches!(f.code, Code::MixedScriptAtom | Code::ConfusableAtoms))
            .map(|f| (f.code, f.step, f.evidence["atom"].clone()))
            .collect()
    };
    let found = looks(&from_file);
    assert_eq!(found, looks(&in_memory));
    let atoms: Vec<&str> = found.iter().filter_map(|(_, _, a)| a.as_str()).collect();
    assert!(atoms.contains(&"аdmin"), "{found:?}");
    assert!(atoms.contains(&"раура"), "{found:?}");
    assert!(atoms.contains(&"gооgle"), "{found:?}");
}

#[test]
fn names_in_one_script_each_are_not_flagged() {
    let r = run(&[
        // Russian and English side by side, each word in one script.
        r#"{"kind":"announce","id":"a","formula":"\"Москва\" -> \"Moscow\""}"#,
        // Japanese mixes Han, Hiragana and Katakana in one word by design.
        r#"{"kind":"announce","id":"b","formula":"\"日本語のテキスト\""}"#,
        // Accents are Latin.
        r#"{"kind":"announce","id":"c","formula":"\"café\" & naive"}"#,
        // Look-alikes inside a thought are text, not names: not this check's business.
        r#"{"kind":"thought","text":"аdmin"}"#,
    ]);
    none(&r, Code::MixedScriptAtom);
    none(&r, Code::ConfusableAtoms);
}

/// A ground value overwritten while Σ is inconsistent, outside its conflict, leaves that
/// conflict standing: the end of the session names it (it once said "nothing", the conflict
/// having been forgotten at the overwrite and never searched again).
#[test]
fn an_overwrite_outside_the_conflict_keeps_it_named() {
    let r = run(&[
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"b","formula":"!p"}"#,
        r#"{"kind":"belief","name":"pace","value":"20"}"#,
        r#"{"kind":"belief","name":"pace","value":"21"}"#,
        r#"{"kind":"announce","id":"c","formula":"q"}"#,
    ]);
    let end: Vec<&Finding> = of(&r, Code::InconsistentSigma)
        .into_iter()
        .filter(|f| f.message.contains("at the end of the session"))
        .collect();
    assert_eq!(end.len(), 1, "{:#?}", r.findings);
    assert_eq!(end[0].ids, ["a", "b"], "{:#?}", end[0]);
}
