//! Seed 004 completed (issue 29, item 5): tier-2 postconditions and satisfaction conditions
//! re-run, plans whose steps can never become ready, and `plan_stats` against the run.
//!
//! **Tier 2.** A postcondition (`postcondition` record of tier 2, its `program` or else the
//! plan step's `post`), an intention's `satisfaction` condition, or a step's `post` that is a
//! comparison over ground beliefs in [`crate::model::condition`]'s language is re-run on the
//! ground beliefs held at that point. A record whose `ok` differs is a
//! `postcondition-record-mismatch`, a step that self-reported `post_met` while it is false a
//! `postcondition-false-positive`; the evidence holds the values read. One the language
//! cannot read stays `not-checkable` ([`super::bdi`]).
//!
//! **Never ready** (`plan-never-ready`): when a plan is written, the steps that can never
//! become ready: a step can finish only when every dependency exists in the plan and can
//! finish, so a step on a cycle, after one, or after a step the plan lacks never can. Found
//! at the plan event, not when the run stalls (`dag-deadlock`).
//!
//! **`plan_stats` against the run**: between two records of one plan's counters in a
//! session (the first against zeros at the start), no counter goes down, `use_count` grows at least by the plan's uses in between
//! (its `plan` events), and `success_count` / `failure_count` at least by the satisfactions
//! met / not met of the intentions it served in between (a satisfaction counts for the latest
//! plan written before it). Counters may grow more (runs elsewhere share the library), never
//! less. A record with more outcomes than uses is `bdi`'s finding and not judged again.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Value, json};

use super::{Code, Cx, Finding};
use crate::model::bdi::BdiLog;
use crate::model::condition::{Rerun, recheck_at, satisfaction_rerun};
use crate::trace::TraceLog;
use crate::trace::event::{Body, Plan, PlanStep, StepStatus, body_of};

/// Whether a tier-2 postcondition record's program is one this module re-runs (then
/// [`super::bdi`] does not call it not checkable).
pub(super) fn rechecks(cx: &Cx<'_>, tier: Option<u8>, program: Option<&str>, t: u32) -> bool {
    tier == Some(2)
        && program
            .and_then(|p| recheck_at(p, cx.tl.bdi_log(), cx.log, t))
            .is_some_and(|r| r.is_ok())
}

pub(super) fn check(cx: &mut Cx<'_>) {
    let mut out = Vec::new();
    postconditions(cx, &mut out);
    steps(cx, &mut out);
    satisfactions(cx, &mut out);
    unready_plans(cx, &mut out);
    plan_stats(cx, &mut out);
    for f in out {
        cx.push(f);
    }
}

fn post_text(def: &PlanStep) -> Option<&str> {
    def.post.as_deref().and_then(Value::as_str)
}

/// The definition of step `id` in the plan record `rec`.
fn with_def<R>(
    log: &TraceLog,
    bl: &BdiLog,
    rec: u32,
    id: &str,
    f: impl FnOnce(&PlanStep) -> R,
) -> Option<R> {
    let pr = bl.plans.get(rec as usize)?;
    let loaded = log.events.load(pr.event as usize);
    match body_of(&loaded) {
        Some(Body::Plan(p)) => p.steps.iter().find(|s| s.id == id).map(f),
        _ => None,
    }
}

fn rerun_evidence(f: Finding, program: &str, r: &Rerun) -> Finding {
    f.with("tier", 2)
        .with("program", program)
        .with("recomputed", r.holds)
        .with("values", json!(r.values))
}

fn postconditions(cx: &Cx<'_>, out: &mut Vec<Finding>) {
    let bl = cx.tl.bdi_log();
    for pr in &bl.postconditions {
        let loaded = cx.log.events.load(pr.event as usize);
        let Some(Body::Postcondition(p)) = body_of(&loaded) else {
            continue;
        };
        // Tier 3 is an LLM's judgment, never re-run; any other record whose condition is a
        // comparison is (a tier-1 form is `bdi`'s).
        let (Some(ok), Some(rec), Some(id)) = (p.ok, pr.plan, p.step.as_deref()) else {
            continue;
        };
        if p.tier == Some(3) {
            continue;
        }
        let program = match p.program.as_deref() {
            Some(x) => Some(x.to_string()),
            None => with_def(cx.log, bl, rec, id, |d| post_text(d).map(str::to_string)).flatten(),
        };
        let Some(program) = program else { continue };
        let Some(Ok(r)) = recheck_at(&program, bl, cx.log, pr.step) else {
            continue;
        };
        if r.holds == ok {
            continue;
        }
        let plan = &bl.plans[rec as usize].id;
        let f = cx.finding(
            Code::PostconditionRecordMismatch,
            pr.step,
            pr.event,
            format!(
                "The postcondition of {plan}/{id} ({program}) is recorded as {}, but \
                 re-run on the ground beliefs at that point it is {} ({}).",
                if ok { "ok" } else { "failed" },
                r.holds,
                r.values_text()
            ),
        );
        out.push(
            rerun_evidence(f, &program, &r)
                .with("plan", plan.as_str())
                .with("step", id)
                .with("recorded", ok),
        );
    }
}

fn steps(cx: &Cx<'_>, out: &mut Vec<Finding>) {
    let bl = cx.tl.bdi_log();
    for sr in &bl.steps {
        let loaded = cx.log.events.load(sr.event as usize);
        let Some(Body::Step(s)) = body_of(&loaded) else {
            continue;
        };
        let (Some(StepStatus::Done), Some(true), Some(rec), Some(id)) =
            (s.status, s.post_met, sr.plan, s.step.as_deref())
        else {
            continue;
        };
        let Some(Some(program)) =
            with_def(cx.log, bl, rec, id, |d| post_text(d).map(str::to_string))
        else {
            continue;
        };
        let Some(Ok(r)) = recheck_at(&program, bl, cx.log, sr.step) else {
            continue;
        };
        if r.holds {
            continue;
        }
        let plan = &bl.plans[rec as usize].id;
        let f = cx.finding(
            Code::PostconditionFalsePositive,
            sr.step,
            sr.event,
            format!(
                "Step {plan}/{id} self-reported post_met, but its postcondition {program} is \
                 false on the ground beliefs at that point ({}).",
                r.values_text()
            ),
        );
        out.push(
            rerun_evidence(f, &program, &r)
                .with("plan", plan.as_str())
                .with("step", id),
        );
    }
}

fn satisfactions(cx: &Cx<'_>, out: &mut Vec<Finding>) {
    let bl = cx.tl.bdi_log();
    for &(step, pos) in &bl.satisfactions {
        let loaded = cx.log.events.load(pos as usize);
        let Some(Body::Satisfaction(sat)) = body_of(&loaded) else {
            continue;
        };
        let Some(ok) = sat.ok else { continue };
        let Some((id, Some(r), program)) =
            satisfaction_rerun(bl, cx.log, step, sat.intention.as_deref())
        else {
            continue;
        };
        let Ok(r) = r else { continue };
        if r.holds == ok {
            continue;
        }
        let id = id.unwrap_or_else(|| "the intention".to_string());
        let f = cx.finding(
            Code::PostconditionRecordMismatch,
            step,
            pos,
            format!(
                "The satisfaction of {id} is recorded as {}, but its condition {program} re-run \
                 on the ground beliefs at that point is {} ({}).",
                if ok { "met" } else { "not met" },
                r.holds,
                r.values_text()
            ),
        );
        out.push(
            rerun_evidence(f, &program, &r)
                .with("intention", id)
                .with("recorded", ok),
        );
    }
}

/// The steps of a plan that can never become ready, each with the dependencies that hold it
/// back, in plan order.
pub fn never_ready(plan: &Plan) -> Vec<(String, Vec<String>)> {
    let ids: HashSet<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
    let mut can: HashSet<&str> = HashSet::new();
    loop {
        let before = can.len();
        for s in &plan.steps {
            if s.deps
                .iter()
                .all(|d| ids.contains(d.as_str()) && can.contains(d.as_str()))
            {
                can.insert(s.id.as_str());
            }
        }
        if can.len() == before {
            break;
        }
    }
    plan.steps
        .iter()
        .filter(|s| !can.contains(s.id.as_str()))
        .map(|s| {
            let on = s
                .deps
                .iter()
                .filter(|d| !can.contains(d.as_str()))
                .map(|d| d.to_string())
                .collect();
            (s.id.to_string(), on)
        })
        .collect()
}

fn unready_plans(cx: &Cx<'_>, out: &mut Vec<Finding>) {
    let bl = cx.tl.bdi_log();
    for pr in &bl.plans {
        let loaded = cx.log.events.load(pr.event as usize);
        let Some(Body::Plan(plan)) = body_of(&loaded) else {
            continue;
        };
        let stuck = never_ready(plan);
        if stuck.is_empty() {
            continue;
        }
        let shown: Vec<String> = stuck
            .iter()
            .map(|(s, on)| format!("{s} (waits on {})", on.join(", ")))
            .collect();
        out.push(
            cx.finding(
                Code::PlanNeverReady,
                pr.step,
                pr.event,
                format!(
                    "Plan {} is written with steps that can never become ready: {}.",
                    pr.id,
                    shown.join("; ")
                ),
            )
            .with("plan", pr.id.as_str())
            .with(
                "never_ready",
                stuck.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(),
            )
            .with(
                "waits",
                json!(
                    stuck
                        .iter()
                        .map(|(s, on)| json!({"step": s, "on": on}))
                        .collect::<Vec<_>>()
                ),
            ),
        );
    }
}

/// One `plan_stats` record: its step and event, and its three counters.
type Record = (u32, u32, [Option<u64>; 3]);

fn plan_stats(cx: &Cx<'_>, out: &mut Vec<Finding>) {
    let bl = cx.tl.bdi_log();
    let mut records: BTreeMap<String, Vec<Record>> = BTreeMap::new();
    for &(step, pos) in &bl.plan_stats {
        let loaded = cx.log.events.load(pos as usize);
        if let Some(Body::PlanStats(ps)) = body_of(&loaded)
            && let Some(id) = ps.plan.as_deref()
        {
            records.entry(id.to_string()).or_default().push((
                step,
                pos,
                [ps.use_count, ps.success_count, ps.failure_count],
            ));
        }
    }
    // Each satisfaction with a verdict, for the latest plan written before it.
    let plans_in_order = bl.plans.is_sorted_by_key(|p| p.step);
    let outcomes: Vec<(u32, &str, bool)> = bl
        .satisfactions
        .iter()
        .filter_map(|&(step, pos)| {
            let loaded = cx.log.events.load(pos as usize);
            let ok = match body_of(&loaded) {
                Some(Body::Satisfaction(s)) => s.ok?,
                _ => return None,
            };
            let plan = if plans_in_order {
                &bl.plans[bl
                    .plans
                    .partition_point(|p| p.step <= step)
                    .checked_sub(1)?]
            } else {
                bl.plans.iter().rev().find(|p| p.step <= step)?
            };
            Some((step, plan.id.as_str(), ok))
        })
        .collect();
    // The steps of each plan's writes and of its outcomes, sorted: what happened between two
    // records is a count by bisection (a scan of the session's plans and outcomes for every
    // record grew with the session squared).
    let mut plan_steps: HashMap<&str, Vec<u32>> = HashMap::new();
    for p in &bl.plans {
        plan_steps.entry(p.id.as_str()).or_default().push(p.step);
    }
    let mut outcome_steps: HashMap<(&str, bool), Vec<u32>> = HashMap::new();
    for &(step, id, ok) in &outcomes {
        outcome_steps.entry((id, ok)).or_default().push(step);
    }
    for v in plan_steps.values_mut().chain(outcome_steps.values_mut()) {
        v.sort_unstable();
    }
    let between = |steps: Option<&Vec<u32>>, from: u32, to: u32| {
        steps.map_or(0, |v| {
            (v.partition_point(|&s| s <= to) - v.partition_point(|&s| s <= from)) as u64
        })
    };
    for (id, recs) in &records {
        // Before the session's first record, the counters are at least 0: the first record
        // holds at least this run's uses and outcomes up to it.
        let start = (0, 0, [Some(0); 3]);
        for pair in std::iter::once(&start)
            .chain(recs)
            .collect::<Vec<_>>()
            .windows(2)
        {
            let ((from, _, before), (to, pos, after)) = (*pair[0], *pair[1]);
            if let [Some(uses), ok, bad] = after
                && ok.unwrap_or(0).saturating_add(bad.unwrap_or(0)) > uses
            {
                // `bdi` reports this record already (more outcomes than uses).
                continue;
            }
            // `from < s <= to`; nothing when the records go back in steps.
            let seen = if from < to {
                [
                    between(plan_steps.get(id.as_str()), from, to),
                    between(outcome_steps.get(&(id.as_str(), true)), from, to),
                    between(outcome_steps.get(&(id.as_str(), false)), from, to),
                ]
            } else {
                [0; 3]
            };
            let mut wrong = Vec::new();
            for (k, name) in ["use_count", "success_count", "failure_count"]
                .iter()
                .enumerate()
            {
                let (Some(b), Some(a)) = (before[k], after[k]) else {
                    continue;
                };
                if a < b {
                    wrong.push(format!("{name} went down from {b} to {a}"));
                } else if a - b < seen[k] {
                    wrong.push(format!(
                        "{name} grew by {} from step {from} to step {to}, but the run shows {} in between",
                        a - b,
                        seen[k]
                    ));
                }
            }
            if wrong.is_empty() {
                continue;
            }
            out.push(
                cx.finding(
                    Code::PlanStatsInconsistent,
                    to,
                    pos,
                    format!(
                        "The plan_stats of {id} disagree with the run: {}.",
                        wrong.join("; ")
                    ),
                )
                .with("plan", id.as_str())
                .with("since_step", from)
                .with("before", json!(before))
                .with("after", json!(after))
                .with(
                    "run",
                    json!({"uses": seen[0], "met": seen[1], "not_met": seen[2]}),
                ),
            );
        }
    }
}
