//! One small hand-built trace per finding code that must trigger it, and near misses that
//! must not.

use doxascope::logic::revise::Policy;
use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, Finding, Report, Severity, audit};
use serde_json::Value;

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
            r#"{"kind":"verify","formula":"q","outcome":"newinfo"}"#,
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
