//! Issue 29 items 4 and 5: a judge's score against the solver, and seed 004 completed (tier-2
//! conditions re-run, plans that can never become ready, `plan_stats` against the run). Each
//! check has a trace that triggers it and near misses that must not.

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

fn sorted(v: &Value) -> Vec<Vec<String>> {
    let mut sets: Vec<Vec<String>> = v
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|s| {
            let mut ids: Vec<String> = s
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().to_string())
                .collect();
            ids.sort();
            ids
        })
        .collect();
    sets.sort();
    sets
}

const SIGMA: [&str; 2] = [
    r#"{"kind":"announce","id":"f","formula":"p"}"#,
    r#"{"kind":"announce","id":"r","formula":"p -> q","role":"rule"}"#,
];

fn with(rest: &[&'static str]) -> Vec<&'static str> {
    SIGMA.iter().chain(rest).copied().collect()
}

#[test]
fn a_judge_passing_an_answer_sigma_contradicts_is_named_with_the_conflict() {
    let r = run(&with(&[
        r#"{"kind":"answer","id":"a1","formula":"!q","text":"q does not hold"}"#,
        r#"{"kind":"score","name":"correct","value":"C","target":"a1","source":"llm-judge"}"#,
    ]));
    let fs = of(&r, Code::ScorePassesContradicted);
    assert_eq!(fs.len(), 1, "{:#?}", r.findings);
    let f = fs[0];
    assert_eq!(f.step, Some(4));
    assert_eq!(f.evidence["score"], "correct");
    assert_eq!(f.evidence["scorer"], "llm-judge");
    assert_eq!(f.evidence["verdict"], "pass");
    assert_eq!(sorted(&f.evidence["conflicts"]), vec![vec!["f", "r"]]);
    assert!(f.message.contains("llm-judge"), "{}", f.message);
    assert_eq!(f.formulas, ["!q"]);
}

#[test]
fn a_judge_failing_an_answer_sigma_entails_is_named_with_the_support() {
    let r = run(&with(&[
        r#"{"kind":"answer","id":"a2","formula":"q"}"#,
        r#"{"kind":"score","name":"accuracy","value":0,"passed":false,"target":"a2","source":"match"}"#,
        r#"{"kind":"score","name":"verdict","value":false,"target":"a2"}"#,
        r#"{"kind":"score","name":"grade","value":0.4,"label":"incorrect","target":"a2"}"#,
    ]));
    let fs = of(&r, Code::ScoreFailsEntailed);
    assert_eq!(fs.len(), 3, "{:#?}", r.findings);
    for f in &fs {
        assert_eq!(sorted(&f.evidence["supports"]), vec![vec!["f", "r"]]);
        assert_eq!(f.evidence["verdict"], "fail");
    }
    assert_eq!(fs[1].evidence["scorer"], Value::Null);
    assert!(fs[1].message.contains("an unnamed scorer"));
}

#[test]
fn judges_that_agree_or_do_not_rule_are_not_findings() {
    let r = run(&with(&[
        r#"{"kind":"answer","id":"yes","formula":"q"}"#,
        r#"{"kind":"answer","id":"no","formula":"!q"}"#,
        r#"{"kind":"answer","id":"open","formula":"s"}"#,
        // Agreeing with the solver.
        r#"{"kind":"score","name":"correct","value":"C","target":"yes"}"#,
        r#"{"kind":"score","name":"correct","value":"I","target":"no"}"#,
        r#"{"kind":"score","name":"correct","value":1,"passed":true,"target":"yes"}"#,
        // Not a pass or a fail: a grade, a partial, no label.
        r#"{"kind":"score","name":"helpfulness","value":0.8,"target":"no"}"#,
        r#"{"kind":"score","name":"correct","value":"P","target":"no"}"#,
        // A metric where high is bad: not read.
        r#"{"kind":"score","name":"hallucination","value":1,"target":"yes"}"#,
        // The session as a whole, a target the trace lacks, an answer Σ does not decide.
        r#"{"kind":"score","name":"correct","value":"C"}"#,
        r#"{"kind":"score","name":"correct","value":"C","target":"nowhere"}"#,
        r#"{"kind":"score","name":"correct","value":"I","target":"open"}"#,
    ]));
    assert!(
        of(&r, Code::ScorePassesContradicted).is_empty(),
        "{:#?}",
        r.findings
    );
    assert!(
        of(&r, Code::ScoreFailsEntailed).is_empty(),
        "{:#?}",
        r.findings
    );
}

const BDI: [&str; 3] = [
    r#"{"kind":"intention","id":"I1","type":"q","satisfaction":"status == \"done\" and distance > 42"}"#,
    r#"{"kind":"plan","id":"P1","steps":[{"id":"S1","kind":"fetch","post":"distance > 42"}]}"#,
    r#"{"kind":"step","plan":"P1","step":"S1","status":"dispatched"}"#,
];

fn bdi(distance: &str, status: &str, program: &str) -> Report {
    let belief = format!(
        r#"{{"kind":"step","plan":"P1","step":"S1","status":"done","post_met":true,"new_beliefs":[{{"name":"distance","value":{distance}}},{{"name":"status","value":"{status}"}}]}}"#
    );
    let post = format!(
        r#"{{"kind":"postcondition","plan":"P1","step":"S1","tier":2,"ok":true,"program":"{program}"}}"#
    );
    let sat = r#"{"kind":"satisfaction","intention":"I1","ok":true}"#;
    let mut lines: Vec<&str> = BDI.to_vec();
    lines.extend([belief.as_str(), post.as_str(), sat]);
    run(&lines)
}

#[test]
fn tier2_comparisons_are_rerun_against_the_records_and_claims() {
    let r = bdi("41.2", "pending", "distance > 42");
    let mism = of(&r, Code::PostconditionRecordMismatch);
    assert_eq!(mism.len(), 2, "{:#?}", r.findings);
    assert_eq!(mism[0].evidence["tier"], 2);
    assert_eq!(mism[0].evidence["values"]["distance"], 41.2);
    assert_eq!(mism[0].evidence["recomputed"], false);
    assert!(
        mism[1].message.contains("satisfaction of I1"),
        "{}",
        mism[1].message
    );
    assert_eq!(mism[1].evidence["values"]["status"], "pending");
    let fp = of(&r, Code::PostconditionFalsePositive);
    assert_eq!(fp.len(), 1, "{:#?}", r.findings);
    assert!(
        fp[0].message.contains("distance = 41.2"),
        "{}",
        fp[0].message
    );
    // A re-run record is checked, not "not checkable".
    assert!(of(&r, Code::NotCheckable).is_empty(), "{:#?}", r.findings);
}

#[test]
fn tier2_near_misses_agree_or_stay_not_checkable() {
    let r = bdi("43", "done", "distance > 42");
    assert!(
        of(&r, Code::PostconditionRecordMismatch).is_empty(),
        "{:#?}",
        r.findings
    );
    assert!(
        of(&r, Code::PostconditionFalsePositive).is_empty(),
        "{:#?}",
        r.findings
    );
    assert!(of(&r, Code::NotCheckable).is_empty(), "{:#?}", r.findings);
    // A Prolog program is not in the language: still not checkable, never a verdict.
    let r = bdi("41.2", "done", "distance(D), D > 42.");
    assert_eq!(of(&r, Code::NotCheckable).len(), 1, "{:#?}", r.findings);
    let recs: Vec<_> = of(&r, Code::PostconditionRecordMismatch)
        .into_iter()
        .filter(|f| f.evidence.get("step").is_some())
        .collect();
    assert!(recs.is_empty(), "{:#?}", r.findings);
}

#[test]
fn a_plan_whose_steps_can_never_be_ready_is_flagged_when_written() {
    let r = run(&[
        r#"{"kind":"plan","id":"P1","steps":[{"id":"S1"},{"id":"S2","deps":["S3"]},{"id":"S3","deps":["S2"]},{"id":"S4","deps":["S1","S2"]},{"id":"S5","deps":["S9"]}]}"#,
        r#"{"kind":"step","plan":"P1","step":"S1","status":"dispatched"}"#,
    ]);
    let fs = of(&r, Code::PlanNeverReady);
    assert_eq!(fs.len(), 1, "{:#?}", r.findings);
    assert_eq!(fs[0].step, Some(1), "flagged at the plan event");
    assert_eq!(
        fs[0].evidence["never_ready"],
        serde_json::json!(["S2", "S3", "S4", "S5"])
    );
    assert_eq!(fs[0].evidence["waits"][2]["on"], serde_json::json!(["S2"]));
    // A near miss: a DAG whose every step can run in turn.
    let r = run(&[
        r#"{"kind":"plan","id":"P1","steps":[{"id":"S1"},{"id":"S2","deps":["S1"]},{"id":"S3","deps":["S1","S2"]}]}"#,
    ]);
    assert!(of(&r, Code::PlanNeverReady).is_empty(), "{:#?}", r.findings);
}

fn stats(after: &'static str) -> Report {
    run(&[
        r#"{"kind":"plan_stats","plan":"P1","use_count":3,"success_count":2,"failure_count":1}"#,
        r#"{"kind":"intention","id":"I1","satisfaction":"ground_belief(a) is known"}"#,
        r#"{"kind":"plan","id":"P1","steps":[{"id":"S1","post":"ground_belief(a) is known"}]}"#,
        r#"{"kind":"step","plan":"P1","step":"S1","status":"dispatched"}"#,
        r#"{"kind":"step","plan":"P1","step":"S1","status":"done","new_beliefs":[{"name":"a","value":1}]}"#,
        r#"{"kind":"postcondition","plan":"P1","step":"S1","tier":1,"ok":true}"#,
        r#"{"kind":"satisfaction","intention":"I1","ok":true}"#,
        after,
    ])
}

#[test]
fn plan_stats_are_reconciled_with_the_run() {
    let r = stats(
        r#"{"kind":"plan_stats","plan":"P1","use_count":3,"success_count":2,"failure_count":1}"#,
    );
    let fs = of(&r, Code::PlanStatsInconsistent);
    assert_eq!(fs.len(), 1, "{:#?}", r.findings);
    assert!(
        fs[0].message.contains("use_count grew by 0"),
        "{}",
        fs[0].message
    );
    assert!(
        fs[0].message.contains("success_count grew by 0"),
        "{}",
        fs[0].message
    );
    assert_eq!(fs[0].evidence["run"]["uses"], 1);
    let r = stats(
        r#"{"kind":"plan_stats","plan":"P1","use_count":2,"success_count":1,"failure_count":1}"#,
    );
    let fs = of(&r, Code::PlanStatsInconsistent);
    assert_eq!(fs.len(), 1, "{:#?}", r.findings);
    assert!(
        fs[0].message.contains("use_count went down"),
        "{}",
        fs[0].message
    );
    // Counted: one more use and one more success (more is fine: other runs share the library).
    let r = stats(
        r#"{"kind":"plan_stats","plan":"P1","use_count":5,"success_count":3,"failure_count":1}"#,
    );
    assert!(
        of(&r, Code::PlanStatsInconsistent).is_empty(),
        "{:#?}",
        r.findings
    );
}

/// What the verification pane lists beside the gate claims (and counts among its
/// disagreements): every postcondition and satisfaction record with its condition re-run.
#[test]
fn recorded_checks_carry_the_rerun_the_panes_show() {
    use doxascope::model::condition::recorded_checks;
    let lines: Vec<String> = {
        let mut v: Vec<String> = BDI.iter().map(|s| s.to_string()).collect();
        v.push(r#"{"kind":"step","plan":"P1","step":"S1","status":"done","new_beliefs":[{"name":"distance","value":41.2},{"name":"status","value":"done"}]}"#.into());
        v.push(r#"{"kind":"postcondition","plan":"P1","step":"S1","tier":2,"ok":true}"#.into());
        v.push(r#"{"kind":"postcondition","plan":"P1","step":"S1","tier":3,"ok":true,"program":"distance > 42"}"#.into());
        v.push(r#"{"kind":"satisfaction","intention":"I1","ok":false}"#.into());
        v
    };
    let model = Model::from_bytes("t.jsonl", lines.join("\n").as_bytes());
    let tl = &model.timelines()[0];
    let checks = recorded_checks(tl.bdi_log(), model.log());
    assert_eq!(checks.len(), 3, "{checks:#?}");
    // The tier-2 record without a program is checked against the step's `post`.
    assert_eq!(checks[0].program.as_deref(), Some("distance > 42"));
    assert_eq!(checks[0].agrees(), Some(false));
    // Tier 3 is never re-run.
    assert!(checks[1].rerun.is_none());
    assert_eq!(checks[1].agrees(), None);
    // The satisfaction's condition is false (distance 41.2), as recorded.
    assert_eq!(checks[2].what, "satisfaction");
    assert_eq!(checks[2].agrees(), Some(true));
    let (_, r) = checks[2].rerun.as_ref().unwrap();
    assert_eq!(
        r.as_ref().unwrap().values_text(),
        "distance = 41.2, status = done"
    );
}

/// A score of a plan step is judged against the step's postcondition re-run at that point.
#[test]
fn a_judge_of_a_step_is_held_to_its_postcondition() {
    let lines = [
        r#"{"kind":"plan","id":"P1","steps":[{"id":"S1","post":"distance > 42"},{"id":"S2","post":"ground_belief(b) is known"}]}"#,
        r#"{"kind":"step","plan":"P1","step":"S1","status":"dispatched"}"#,
        r#"{"kind":"step","id":"e1","plan":"P1","step":"S1","status":"done","new_beliefs":[{"name":"distance","value":41.2}]}"#,
        r#"{"kind":"step","plan":"P1","step":"S2","status":"dispatched"}"#,
        r#"{"kind":"step","id":"e2","plan":"P1","step":"S2","status":"done","new_beliefs":[{"name":"b","value":1}]}"#,
        r#"{"kind":"score","name":"step_ok","value":true,"target":"e1","source":"judge"}"#,
        r#"{"kind":"score","name":"step_ok","value":false,"target":"e2","source":"judge"}"#,
        // Near misses: agreeing with the re-run.
        r#"{"kind":"score","name":"step_ok","value":false,"target":"e1"}"#,
        r#"{"kind":"score","name":"step_ok","value":true,"target":"e2"}"#,
    ];
    let r = run(&lines);
    let pass = of(&r, Code::ScorePassesContradicted);
    assert_eq!(pass.len(), 1, "{:#?}", r.findings);
    assert_eq!(pass[0].evidence["step"], "S1");
    assert_eq!(pass[0].evidence["values"]["distance"], 41.2);
    assert_eq!(pass[0].step, Some(6));
    let fail = of(&r, Code::ScoreFailsEntailed);
    assert_eq!(fail.len(), 1, "{:#?}", r.findings);
    assert_eq!(fail[0].evidence["step"], "S2");
    assert_eq!(fail[0].evidence["tier"], 1);
}
