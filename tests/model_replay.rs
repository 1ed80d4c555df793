//! Replay semantics on hand-written traces: ids, supersession, retraction by formula,
//! revise/retract linking, per-event errors, several sessions.

use doxascope::logic::engine::{Entails, Outcome};
use doxascope::model::recompute::Unknown;
use doxascope::model::{Model, RecomputeOptions, RetractedBy};

fn model(lines: &[&str]) -> Model {
    let mut text = lines.join("\n");
    text.push('\n');
    Model::from_bytes("t.jsonl", text.as_bytes())
}

fn ids(m: &Model, t: u32) -> Vec<String> {
    m.sigma_at("t.jsonl", t)
        .unwrap()
        .iter()
        .map(|b| b.id().to_string())
        .collect()
}

#[test]
fn default_id_is_the_normalized_formula_and_retract_by_formula_works() {
    let m = model(&[
        r#"{"kind":"announce","formula":"p ∧  q"}"#,
        r#"{"kind":"announce","id":"r","formula":"a -> b"}"#,
        r#"{"kind":"retract","target":"p & q","by":"user","reason":"wrong"}"#,
        r#"{"kind":"retract","target":"a → b"}"#,
    ]);
    assert_eq!(ids(&m, 2), ["p & q", "r"]);
    assert_eq!(ids(&m, 3), ["r"]);
    assert!(ids(&m, 4).is_empty());
    let tl = m.timeline("t.jsonl").unwrap();
    let r0 = tl.beliefs()[0].retraction.unwrap();
    assert_eq!((r0.step, r0.by), (3, RetractedBy::User));
    assert_eq!(
        tl.beliefs()[1].retraction.unwrap().by,
        RetractedBy::Unspecified
    );
    assert!(tl.errors().is_empty());
}

#[test]
fn reannouncement_overwrites_supersedes_or_starts_a_new_record() {
    let m = model(&[
        r#"{"kind":"announce","id":"x","formula":"p","source":"a","confidence":0.7}"#,
        r#"{"kind":"announce","id":"x","formula":"(p)","source":"b","confidence":0.6}"#,
        r#"{"kind":"announce","id":"x","formula":"q"}"#,
        r#"{"kind":"retract","target":"x"}"#,
        r#"{"kind":"announce","id":"x","formula":"p"}"#,
    ]);
    let tl = m.timeline("t.jsonl").unwrap();
    // The same formula again overwrites the record (seed 000's update): source, confidence
    // and step are the new event's; another formula supersedes; after a retraction the id
    // starts a new record.
    assert_eq!(tl.beliefs().len(), 4);
    assert_eq!(
        tl.beliefs()[0].retraction.unwrap().by,
        RetractedBy::Reannounced
    );
    assert_eq!(tl.beliefs()[0].retraction.unwrap().step, 2);
    let at2 = m.sigma_at("t.jsonl", 2).unwrap();
    assert_eq!(at2.len(), 1);
    assert_eq!(
        (at2[0].source(), at2[0].confidence(), at2[0].step()),
        (Some("b"), 0.6, 2)
    );
    // Time travel still sees the first record before the update.
    let at1 = m.sigma_at("t.jsonl", 1).unwrap();
    assert_eq!((at1[0].source(), at1[0].confidence()), (Some("a"), 0.7));
    assert_eq!(
        tl.beliefs()[1].retraction.unwrap().by,
        RetractedBy::Superseded
    );
    let sigma = m.sigma_at("t.jsonl", 3).unwrap();
    assert_eq!(sigma.len(), 1);
    assert_eq!(sigma[0].formula_text(), "q");
    assert!(ids(&m, 4).is_empty());
    assert_eq!(m.sigma_at("t.jsonl", 5).unwrap()[0].step(), 5);
    assert_eq!(tl.records_of("x").count(), 4);
    assert_eq!(tl.active_record("x", 5), Some(3));
}

#[test]
fn confidence_zero_is_a_bad_line_and_stays_out_of_sigma() {
    let m = model(&[
        r#"{"kind":"announce","id":"x","formula":"p","confidence":0}"#,
        r#"{"kind":"announce","id":"y","formula":"q","confidence":0.5}"#,
    ]);
    let tl = m.timeline("t.jsonl").unwrap();
    assert_eq!(tl.reader_problems(), 1);
    let last = tl.len();
    assert_eq!(ids(&m, last), ["y"]);
}

#[test]
fn bad_formulas_and_unknown_targets_are_per_event_errors() {
    let m = model(&[
        r#"{"kind":"announce","id":"a","formula":"p & (q"}"#,
        r#"{"kind":"announce","id":"b","formula":"q"}"#,
        r#"{"kind":"verify","formula":"q ->","outcome":"entailed"}"#,
        r#"{"kind":"verify","formula":"q","outcome":"entailed"}"#,
        r#"{"kind":"retract","target":"nope"}"#,
        r#"{"kind":"frobnicate","x":1}"#,
        r#"{"kind":"query","formula":"~q","answer":"no"}"#,
        "this is not json",
    ]);
    let tl = m.timeline("t.jsonl").unwrap();
    let fields: Vec<(u32, &str)> = tl.errors().iter().map(|e| (e.step, e.field)).collect();
    assert_eq!(fields, [(1, "formula"), (3, "formula"), (5, "target")]);
    assert_eq!(tl.errors()[0].column, Some(7));
    // The unparseable belief is still in Σ (the agent believed it), flagged.
    assert_eq!(ids(&m, 2), ["a", "b"]);
    assert!(!tl.beliefs()[0].formula_ok);
    assert_eq!(tl.unknown_kinds(), 1);
    assert_eq!(tl.reader_problems(), 1);

    let r = m
        .recompute("t.jsonl", &RecomputeOptions::default())
        .unwrap();
    assert!(matches!(
        r.announces[0].result,
        Err(Unknown::Parse { column: 7, .. })
    ));
    assert!(matches!(r.verifies[0].result, Err(Unknown::Parse { .. })));
    assert_eq!(r.verifies[0].agrees(), None);
    assert_eq!(
        r.verifies[1].result.as_ref().unwrap().theta,
        Outcome::Entailed
    );
    assert_eq!(r.verifies[1].agrees(), Some(true));
    assert_eq!(r.queries[0].result, Ok(Entails::Contradicted));
    assert_eq!(r.queries[0].agrees(), Some(true));
}

#[test]
fn revise_links_its_retracts_and_is_checked_after_them() {
    let m = model(&[
        r#"{"kind":"announce","id":"r","formula":"p -> q","role":"rule"}"#,
        r#"{"kind":"announce","id":"f1","formula":"p"}"#,
        r#"{"kind":"announce","id":"f2","formula":"s"}"#,
        r#"{"kind":"announce","id":"f3","formula":"!q"}"#,
        r#"{"kind":"revise","trigger":"f3","retracted":["f2","p"],"policy":"recency"}"#,
        r#"{"kind":"retract","target":"f1","by":"revision"}"#,
        r#"{"kind":"log","message":"between"}"#,
        r#"{"kind":"retract","target":"f2","by":"revision"}"#,
    ]);
    let tl = m.timeline("t.jsonl").unwrap();
    let rv = &tl.revisions()[0];
    assert_eq!(rv.retracts, [0, 1]);
    assert!(rv.unapplied.is_empty());
    assert_eq!(rv.trigger_record, Some(3));
    let r = m
        .recompute("t.jsonl", &RecomputeOptions::default())
        .unwrap();
    let rc = &r.revisions[0];
    assert_eq!(rc.settled_at, 8);
    let before = rc.before.as_ref().unwrap();
    assert!(!before.0);
    let mut conflict = before.1.clone();
    conflict.sort();
    assert_eq!(conflict, ["f1", "f3", "r"]);
    let ret: Vec<(&str, Option<bool>)> = rc
        .retracted
        .iter()
        .map(|x| (x.id.as_str(), x.in_conflict))
        .collect();
    // f1 is in the only conflict; f2 is not in any, so it is not decided as "in" (the
    // single conflict found does not contain it and Σ without it is still inconsistent).
    assert_eq!(ret, [("f1", Some(true)), ("f2", None)]);
    assert!(rc.after.as_ref().unwrap().0);
    // The announce of f3 made Σ inconsistent, with the conflict.
    let a = r.announces[3].result.as_ref().unwrap();
    assert!(a.consistent_before && !a.consistent_after);
    assert_eq!(a.gate.theta, Outcome::Contradiction);
}

#[test]
fn unapplied_revision_entries_are_listed() {
    let m = model(&[
        r#"{"kind":"announce","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","id":"b","formula":"!p"}"#,
        r#"{"kind":"revise","trigger":"b","retracted":["a"]}"#,
    ]);
    let tl = m.timeline("t.jsonl").unwrap();
    assert_eq!(tl.revisions()[0].unapplied, ["a"]);
    let r = m
        .recompute("t.jsonl", &RecomputeOptions::default())
        .unwrap();
    // No retract applied it: Σ is still inconsistent right after the revise.
    assert!(!r.revisions[0].after.as_ref().unwrap().0);
    assert_eq!(r.revisions[0].settled_at, 3);
}

#[test]
fn quantified_beliefs_are_regrounded_when_the_domain_grows() {
    let m = model(&[
        r#"{"kind":"announce","id":"n","formula":"forall x. !Reveal(x)","role":"norm"}"#,
        r#"{"kind":"verify","formula":"Reveal(dave)","outcome":"contradiction"}"#,
        r#"{"kind":"announce","id":"e","formula":"exists x. Friend(x)"}"#,
        r#"{"kind":"announce","id":"f","formula":"!Friend(bob)"}"#,
        r#"{"kind":"verify","formula":"Friend(carol)","outcome":"newinfo"}"#,
        r#"{"kind":"announce","id":"g","formula":"!Friend(carol)"}"#,
        r#"{"kind":"verify","formula":"Friend(dave)","outcome":"newinfo"}"#,
    ]);
    let r = m
        .recompute("t.jsonl", &RecomputeOptions::default())
        .unwrap();
    let got: Vec<Outcome> = r
        .verifies
        .iter()
        .map(|v| v.result.as_ref().unwrap().theta)
        .collect();
    // dave is new: the norm grounds over it. ∃x. Friend(x) has a witness of its own (issue
    // 27): with ¬Friend(bob) it says nothing about carol (under the old reading over the
    // known constants {bob, carol} it forced Friend(carol)), and denying carol too leaves Σ
    // consistent, Friend(dave) new information.
    assert_eq!(
        got,
        [Outcome::Contradiction, Outcome::NewInfo, Outcome::NewInfo]
    );
    let g = r.announces[3].result.as_ref().unwrap();
    assert!(g.consistent_after);
}

#[test]
fn sessions_are_separate_timelines() {
    let m = model(&[
        r#"{"kind":"announce","session":"s1","id":"a","formula":"p"}"#,
        r#"{"kind":"announce","session":"s2","id":"a","formula":"!p"}"#,
        r#"{"kind":"announce","session":"s1","id":"b","formula":"q"}"#,
    ]);
    assert_eq!(m.sessions(), ["s1", "s2"]);
    assert_eq!(m.timeline("s1").unwrap().len(), 2);
    assert_eq!(m.sigma_at("s1", 2).unwrap().len(), 2);
    assert_eq!(m.sigma_at("s2", 1).unwrap()[0].formula_text(), "!p");
    assert!(m.pick_session(None).is_err());
    assert_eq!(m.pick_session(Some("s2")).unwrap().name(), "s2");
    let r = m.recompute("s1", &RecomputeOptions::default()).unwrap();
    assert!(
        r.announces
            .iter()
            .all(|a| a.result.as_ref().unwrap().consistent_after)
    );
    let pos = m.timeline("s2").unwrap().event_positions()[0];
    assert_eq!(m.origin(pos).unwrap().line, 2);
}

#[test]
fn scores_are_logged_with_their_targets_and_change_nothing_else() {
    let m = model(&[
        r#"{"kind":"announce","id":"b1","formula":"p"}"#,
        r#"{"kind":"answer","id":"a1","text":"yes"}"#,
        r#"{"kind":"score","name":"correct","value":"C","target":"a1","source":"match"}"#,
        r#"{"kind":"score","name":"overall","value":0.5}"#,
        r#"{"kind":"score","name":"later","value":true,"target":"a2"}"#,
        r#"{"kind":"answer","id":"a2","text":"no"}"#,
        r#"{"kind":"score","name":"ghost","value":1,"target":"nothing-has-this-id"}"#,
        r#"{"kind":"score","name":"bad","value":{"a":1}}"#,
    ]);
    let tl = m.timeline("t.jsonl").unwrap();
    let steps: Vec<u32> = tl.scores().iter().map(|s| s.0).collect();
    assert_eq!(
        steps,
        [3, 4, 5, 7],
        "the line with an object value is a bad line"
    );
    assert_eq!(m.log().problems.len(), 1);
    assert!(
        m.log().problems[0].message.contains("value"),
        "{:?}",
        m.log().problems
    );
    assert_eq!(tl.score_target(m.log(), 3), Some(2), "the answer before it");
    assert_eq!(tl.score_target(m.log(), 4), None, "no target: the session");
    assert_eq!(tl.score_target(m.log(), 5), Some(6), "a target after it");
    assert_eq!(
        tl.score_target(m.log(), 7),
        None,
        "a target the trace lacks"
    );
    assert_eq!(tl.score_target(m.log(), 2), None, "not a score");
    // Scores are not beliefs: Σ and the BDI state do not see them.
    assert_eq!(ids(&m, 7), ["b1"]);
    assert!(tl.bdi_log().is_empty());
    assert!(tl.errors().is_empty());
}

/// Memory edits (docs/import.md): a `retract` naming a held ground belief takes its value
/// back; the BDI state no longer holds it until it is written again; the retraction log
/// keeps what was taken back, and the value atom's record of Σ ends with it. An announced
/// Σ belief of the same id wins; a name never written is an error, as before.
#[test]
fn retracting_a_ground_belief_takes_its_value_back() {
    use doxascope::model::bdi::state_at;
    let m = model(&[
        r#"{"kind":"belief","name":"human","value":"First name: Chad"}"#,
        r#"{"kind":"tool_call","tool":"core_memory_replace"}"#,
        r#"{"kind":"retract","target":"human","reason":"core_memory_replace","by":"agent"}"#,
        r#"{"kind":"belief","name":"human","value":"First name: Sarah"}"#,
        r#"{"kind":"retract","target":"never_written"}"#,
        r#"{"kind":"announce","id":"human","formula":"p"}"#,
        r#"{"kind":"retract","target":"human"}"#,
        r#"{"kind":"retract","target":"human"}"#,
        r#"{"kind":"retract","target":"human"}"#,
    ]);
    let tl = m.timeline("t.jsonl").unwrap();
    let bdi = tl.bdi_log();
    let held = |t: u32| -> Vec<String> {
        state_at(bdi, m.log(), t)
            .ground
            .iter()
            .map(|g| format!("{}={}", g.name, g.value.unwrap()))
            .collect()
    };
    assert_eq!(held(1), [r#"human="First name: Chad""#]);
    assert!(held(3).is_empty(), "taken back at step 3");
    assert_eq!(held(4), [r#"human="First name: Sarah""#]);
    assert!(bdi.known_by("human", 2) && !bdi.known_by("human", 3));
    let rt = tl.retracts();
    assert_eq!(rt.len(), 5);
    // The ground belief is a record of Σ too (its value atom, id = its name): both end.
    assert_eq!((rt[0].record, rt[0].ground), (Some(0), Some(0)));
    assert_eq!(tl.beliefs()[0].id, "human");
    assert_eq!(
        bdi.retracted(m.log(), 0).unwrap().value,
        Some(&serde_json::json!("First name: Chad"))
    );
    // Never written: an error, as any dangling target.
    assert_eq!((rt[1].record, rt[1].ground), (None, None));
    // The Σ belief `human` is active: it is the one retracted.
    assert!(rt[2].record.is_some() && rt[2].ground.is_none());
    // Then the ground belief of that name.
    assert_eq!((rt[3].record, rt[3].ground), (None, Some(1)));
    assert!(held(8).is_empty());
    // Nothing left to take back.
    assert_eq!((rt[4].record, rt[4].ground), (None, None));
    let steps: Vec<u32> = tl.errors().iter().map(|e| e.step).collect();
    assert_eq!(steps, [5, 9]);
    assert_eq!(
        bdi.retractions_of("human", 9)
            .map(|r| r.step)
            .collect::<Vec<_>>(),
        [3, 8]
    );
}
