//! The replay and the recomputation on the bundled samples, against `docs/samples.md`.

use doxascope::logic::engine::{Entails, Outcome};
use doxascope::logic::parse::parse;
use doxascope::model::bdi::StepState;
use doxascope::model::export::{Format, Header, export};
use doxascope::model::{Model, RecomputeOptions, RetractedBy};
use doxascope::trace::event::Outcome as Claimed;

fn load(name: &str) -> Model {
    let path = format!("{}/sample-traces/{name}", env!("CARGO_MANIFEST_DIR"));
    Model::load(&[path]).expect("sample readable")
}

fn ids(m: &Model, session: &str, t: u32) -> Vec<String> {
    m.sigma_at(session, t)
        .expect("session")
        .iter()
        .map(|b| b.id().to_string())
        .collect()
}

#[test]
fn treasure_hunt_sigma_over_time() {
    let m = load("treasure-hunt.jsonl");
    assert_eq!(m.sessions(), vec!["treasure-hunt.jsonl"]);
    let s = "treasure-hunt.jsonl";
    assert!(ids(&m, s, 0).is_empty());
    assert!(ids(&m, s, 4).is_empty());
    assert_eq!(ids(&m, s, 5), vec!["t1-domain"]);
    assert_eq!(ids(&m, s, 11), vec!["t1-domain", "t2-map-b", "t3-not-a"]);
    // Step 15: both contradictory beliefs active, nothing retracted.
    assert_eq!(
        ids(&m, s, 15),
        vec!["t1-domain", "t2-map-b", "t3-not-a", "t5-user-a"]
    );
    assert_eq!(ids(&m, s, 17), ids(&m, s, 15));
    let sigma = m.sigma_at(s, 15).unwrap();
    let t3 = &sigma[2];
    assert_eq!(t3.source(), Some("inference"));
    assert_eq!(t3.because(), ["t1-domain", "t2-map-b"]);
    assert_eq!(t3.origin().line, 11);
    assert_eq!(sigma[1].confidence(), 0.95);

    let r = m.recompute(s, &RecomputeOptions::default()).unwrap();
    // Four verdicts, all agreeing.
    assert_eq!(r.verifies.len(), 4);
    assert!(r.verifies.iter().all(|v| v.agrees() == Some(true)));
    let last = r.announces.last().unwrap();
    assert_eq!(last.step, 15);
    let res = last.result.as_ref().unwrap();
    assert!(!res.consistent_after);
    assert_eq!(res.gate.theta, Outcome::Contradiction);
    let mut c = res.conflict.to_vec();
    c.sort();
    assert!(
        c == ["t3-not-a", "t5-user-a"] || c == ["t1-domain", "t2-map-b", "t5-user-a"],
        "{c:?}"
    );
    // Every earlier announcement kept Σ consistent.
    assert!(
        r.announces[..r.announces.len() - 1].iter().all(|a| a
            .result
            .as_ref()
            .unwrap()
            .consistent_after)
    );
    // The paper's resolution of step 5: the revise at 19 (policy confidence) drops the map's
    // B and the ¬A derived from it; the retractions at 20 and 21 apply it.
    assert_eq!(ids(&m, s, 19), ids(&m, s, 15));
    assert_eq!(ids(&m, s, 20), vec!["t1-domain", "t3-not-a", "t5-user-a"]);
    assert_eq!(ids(&m, s, 21), vec!["t1-domain", "t5-user-a"]);
    assert_eq!(ids(&m, s, 23), ids(&m, s, 21));
    let rv = &r.revisions[0];
    assert_eq!((rv.step, rv.settled_at), (19, 21));
    assert!(matches!(rv.before, Ok((false, _))));
    assert!(matches!(rv.after, Ok((true, _))));
    let mut dropped: Vec<&str> = rv.retracted.iter().map(|x| x.id.as_str()).collect();
    dropped.sort();
    assert_eq!(dropped, ["t2-map-b", "t3-not-a"]);
    let rerun = rv.rerun.as_ref().expect("the policy is re-run");
    assert_eq!(rerun.policy.as_str(), "confidence");
    let again = rerun.revision.as_ref().unwrap().as_ref().unwrap();
    let mut again: Vec<&str> = again.retracted.iter().map(String::as_str).collect();
    again.sort();
    assert_eq!(again, dropped, "the policy makes the paper's choice");
    // The query and the answer after it agree with the revised Σ.
    assert_eq!(r.queries.last().unwrap().agrees(), Some(true));
    assert_eq!(r.answers.last().unwrap().result, Ok(Entails::Entailed));
}

#[test]
fn greedysat_revisions_retract_and_restore_consistency() {
    let m = load("greedysat-stress.jsonl");
    let s = "greedysat-stress.jsonl";
    assert!(ids(&m, s, 23).contains(&"b3".to_string()));
    assert!(ids(&m, s, 24).contains(&"b3".to_string()));
    assert!(!ids(&m, s, 25).contains(&"b3".to_string()));
    assert!(ids(&m, s, 35).contains(&"b4".to_string()));
    assert!(!ids(&m, s, 36).contains(&"b4".to_string()));
    let tl = m.timeline(s).unwrap();
    let (_, b3) = tl.records_of("b3").next().unwrap();
    let ret = b3.retraction.unwrap();
    assert_eq!((ret.step, ret.by), (25, RetractedBy::Revision));
    assert_eq!(tl.revisions().len(), 2);
    assert!(tl.revisions().iter().all(|r| r.unapplied.is_empty()));
    assert_eq!(tl.revisions()[0].retracts.len(), 1);
    assert_eq!(tl.retracts()[0].revision, Some(0));

    let r = m.recompute(s, &RecomputeOptions::default()).unwrap();
    assert_eq!(r.revisions.len(), 2);
    for rc in &r.revisions {
        assert!(!rc.before.as_ref().unwrap().0, "inconsistent before");
        assert!(rc.after.as_ref().unwrap().0, "consistent after");
        assert_eq!(rc.retracted.len(), 1);
        assert_eq!(rc.retracted[0].in_conflict, Some(true));
    }
    assert_eq!(r.revisions[0].settled_at, 25);
    assert_eq!(r.revisions[1].retracted[0].id, "b4");
    assert!(r.verifies.iter().all(|v| v.agrees() == Some(true)));
    let contradictions = r
        .verifies
        .iter()
        .filter(|v| v.result.as_ref().unwrap().theta == Outcome::Contradiction)
        .count();
    assert_eq!(contradictions, 2);
}

#[test]
fn alice_bob_exactly_one_mismatch_at_17() {
    let m = load("alice-bob-norms.jsonl");
    let s = "alice-bob-norms.jsonl";
    let r = m.recompute(s, &RecomputeOptions::default()).unwrap();
    let bad: Vec<_> = r
        .verifies
        .iter()
        .filter(|v| v.agrees() != Some(true))
        .collect();
    assert_eq!(bad.len(), 1, "{:?}", r.verifies);
    assert_eq!(bad[0].step, 17);
    assert_eq!(bad[0].claimed, Some(Claimed::Ungrounded));
    assert_eq!(bad[0].result.as_ref().unwrap().theta, Outcome::Entailed);
    // The queries are answered correctly (∃x. Older(x, x) is refuted via the asymmetry).
    assert_eq!(r.queries.len(), 2);
    assert!(
        r.queries.iter().all(|q| q.agrees() == Some(true)),
        "{:?}",
        r.queries
    );
    // Σ stays consistent; the norm is never retracted.
    assert!(
        r.announces
            .iter()
            .all(|a| a.result.as_ref().unwrap().consistent_after)
    );
    assert!(ids(&m, s, 25).contains(&"n1-no-address".to_string()));
}

#[test]
fn dns_recomputation_agrees_everywhere() {
    let m = load("dns-troubleshooting.jsonl");
    let r = m
        .recompute("dns-troubleshooting.jsonl", &RecomputeOptions::default())
        .unwrap();
    assert_eq!(r.verifies.len(), 6);
    assert!(r.verifies.iter().all(|v| v.agrees() == Some(true)));
    assert!(r.queries.iter().all(|q| q.agrees() == Some(true)));
    assert!(r.errors.is_empty());
}

#[test]
fn dns_prompt_export_matches_the_documented_list() {
    let m = load("dns-troubleshooting.jsonl");
    let s = "dns-troubleshooting.jsonl";
    let sigma = m.sigma_at(s, 25).unwrap();
    let out = export(
        &sigma,
        Format::Prompt,
        Header {
            session: s,
            step: 25,
        },
    );
    let expected = [
        ("¬Reachable(user, example_com)", "user", "0.90"),
        (
            "¬Reachable(user, example_com) → DNSFail(example_com) ∨ LinkDown(user)",
            "background",
            "0.80",
        ),
        (
            "ReachableByIp(user) → ¬LinkDown(user)",
            "background",
            "0.95",
        ),
        ("DNSFail(example_com)", "tool:ping_test", "0.85"),
        ("ReachableByIp(user)", "tool:ping_test", "0.95"),
        (
            "DNSFail(example_com) ∧ ¬LinkDown(user)",
            "inference",
            "0.80",
        ),
        ("ReachableByIp(user) ∧ ¬ResolvesNames(user)", "user", "0.90"),
    ];
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), expected.len());
    for (line, (f, src, p)) in lines.iter().zip(expected) {
        let suffix = format!(" (source={src}, p={p})");
        let body = line
            .strip_prefix("- ")
            .and_then(|l| l.strip_suffix(&suffix))
            .unwrap_or_else(|| panic!("bad line {line:?}"));
        assert_eq!(parse(body).unwrap(), parse(f).unwrap(), "{line}");
    }
}

#[test]
fn kipchoge_plan_dag_statuses() {
    let m = load("kipchoge-bdi.jsonl");
    let s = "kipchoge-bdi.jsonl";
    let at = |t| m.bdi_at(s, t).unwrap();

    let b = at(12);
    assert_eq!(b.schema_beliefs.len(), 3);
    assert_eq!(b.desires.len(), 1);
    assert_eq!(b.intention.unwrap().id, Some("int-1"));
    assert!(b.plans.is_empty());
    let names: Vec<&str> = b.ground.iter().map(|g| g.name).collect();
    assert_eq!(names, ["rate_entity", "rounding_unit", "target_entity"]);

    // After S1's failed verification (step 19): plan-1 deadlocked.
    let b = at(19);
    let p1 = b.plan("plan-1").unwrap();
    let st: Vec<StepState> = p1.steps.iter().map(|x| x.state).collect();
    use StepState::*;
    assert_eq!(st, [Done, Done, Pending, Pending, Pending]);
    assert_eq!(p1.steps[0].post_met, Some(true));
    assert_eq!(p1.steps[0].latest_check(1).unwrap().ok, Some(false));
    assert!(p1.steps[1].verified());
    assert!(p1.ready().is_empty());
    assert!(p1.deadlocked());
    assert!(p1.cycle().is_none());
    assert!(p1.dangling().is_empty());
    assert!(b.ground_belief("kipchoge_marathon_time").is_none());
    assert!(b.ground_belief("marathon_record_time").is_some());
    // At step 17, S1 is still in flight: not deadlocked. At 18 S1 is done but awaiting its
    // verdict (in flight, convention 9), so not yet deadlocked either.
    assert!(!at(17).plan("plan-1").unwrap().deadlocked());
    let p18 = at(18);
    let p1 = p18.plan("plan-1").unwrap();
    assert_eq!(p1.in_flight(), ["S1"]);
    assert!(!p1.deadlocked());
    // Plan-2 never deadlocks: between a step's done and its verdict it is in flight.
    for t in 21..=40 {
        if let Some(p2) = at(t).plan("plan-2") {
            assert!(!p2.deadlocked(), "plan-2 at {t}");
        }
    }

    let b = at(40);
    let p2 = b.plan("plan-2").unwrap();
    assert!(p2.complete());
    assert!(p2.steps.iter().all(|x| x.verified()));
    let fa = b.ground_belief("final_answer").unwrap();
    assert!(fa.value.is_some());
    assert!(fa.from_step_event);
    assert_eq!(b.satisfaction.len(), 1);
    assert_eq!(b.satisfaction[0].ok, Some(true));
    let lib: Vec<_> = b
        .library
        .iter()
        .map(|e| (e.id, e.use_count, e.success_count, e.failure_count))
        .collect();
    assert_eq!(
        lib,
        [
            ("plan-1", Some(1), Some(0), Some(1)),
            ("plan-2", Some(1), Some(1), Some(0))
        ]
    );
    assert_eq!(b.reviews.len(), 2);
    assert!(b.library[0].decision.is_some());
}

#[test]
fn kipchoge_ground_beliefs_are_sigma_rows() {
    let m = load("kipchoge-bdi.jsonl");
    let s = "kipchoge-bdi.jsonl";
    let end = m.timeline(s).unwrap().len();
    let sigma = m.sigma_at(s, end).unwrap();
    let mut rows: Vec<(String, String, Option<String>)> = sigma
        .iter()
        .map(|b| {
            (
                b.id().to_string(),
                b.formula().expect("a value atom parses").to_string(),
                b.source().map(str::to_string),
            )
        })
        .collect();
    rows.sort();
    let want = [
        (
            "denominator",
            r#"denominator = "20.9" "km/h""#,
            "web_search",
        ),
        (
            "final_answer",
            r#"final_answer = "17" "thousand hours""#,
            "synthesis",
        ),
        (
            "marathon_record_time",
            r#"marathon_record_time = "2:01:09" "h:mm:ss""#,
            "web_search",
        ),
        ("numerator", r#"numerator = "356400" km"#, "web_search"),
        (
            "rate_entity",
            r#"rate_entity = "eliud_kipchoge_speed" "km/h""#,
            "user",
        ),
        ("raw_result", r#"raw_result = "17052.63" hours"#, "bash"),
        (
            "rounded_result",
            r#"rounded_result = "17000" hours"#,
            "bash",
        ),
        ("rounding_unit", r#"rounding_unit = "1000" hours"#, "user"),
        (
            "target_entity",
            r#"target_entity = "earth_moon_distance" km"#,
            "user",
        ),
    ];
    let want: Vec<(String, String, Option<String>)> = want
        .iter()
        .map(|(i, f, src)| (i.to_string(), f.to_string(), Some(src.to_string())))
        .collect();
    assert_eq!(rows, want);
    // Each row is at the step of the event that wrote it; numerator, written again with the
    // same value at step 24, is that write's (the first one re-announced).
    let num = sigma.iter().find(|b| b.id() == "numerator").unwrap();
    assert_eq!(num.step(), 24);
    let tl = m.timeline(s).unwrap();
    let first = tl.records_of("numerator").next().unwrap().1;
    assert_eq!(first.announced, 16);
    assert_eq!(
        first.retraction.map(|r| r.by),
        Some(RetractedBy::Reannounced)
    );
    assert!(tl.overwrites().is_empty());
    // Before the first write Σ is empty; after seq 6 it holds target_entity.
    assert!(ids(&m, s, 5).is_empty());
    assert_eq!(ids(&m, s, 6), vec!["target_entity"]);
}
