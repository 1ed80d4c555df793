//! Checks over the BDI model (seed 004): postconditions, plan DAGs, belief names, tiers.
//!
//! One forward walk over the session's BDI log keeps, per plan version, a
//! [`PlanView`](crate::model::bdi::PlanView) updated exactly as
//! [`crate::model::bdi::state_at`] folds it, and the set of ground-belief names known so far
//! (convention 9: upserts from `belief` events and from `step` events with `status: done`).
//! Rebuilding the state at every event would cost quadratic time on long runs; the walk costs
//! one pass. The DAG questions themselves (cycle, dangling dependencies, readiness) are the
//! model's.
//!
//! **Tier-1 postconditions** are `ground_belief(X) is known`: true iff a ground belief named X
//! exists at that point. A step that self-reports `post_met: true` while that is false is a
//! `postcondition-false-positive`: a warning when the harness's own tier-1 check of the step
//! caught it (`ok: false`), an error when nothing did. A `postcondition` record whose `ok`
//! disagrees with the recomputed tier-1 result is a `postcondition-record-mismatch`, and so is
//! a `satisfaction` record against its intention's tier-1 condition. Tiers 2
//! and 3 (execution, LLM judge) are `not-checkable`.
//!
//! **Deadlock**: a plan is incomplete, no step is dispatched, none is done and still awaiting
//! its verification, and none is ready (every dependency done and verified). A step that is
//! done but not yet checked counts as in flight, so the moment between a step finishing and
//! its check is not a deadlock. Reported once per plan version: a warning when the agent
//! replanned later in the session, an error when it never did.
//!
//! **Unexpected names** (info): a ground belief a step wrote (`new_beliefs`) under a name that
//! no plan step, intention or postcondition refers to, while a name that is expected and not
//! yet known shares a word with it (`marathon_record_time` against `kipchoge_marathon_time`).
//! Beliefs stated by `belief` events (the user, a tool) are not step outputs and are not
//! checked. Usually the cause of a false positive or a deadlock, which carry the severity.

use crate::trace::event::body_of;
use hashbrown::{HashMap, HashSet};
use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{Code, Cx, Finding, Severity, body_in, decode_all};
use crate::model::bdi::{PlanView, PostCheck, StepState, StepView, tier1_name};
use crate::trace::event::{Body, StepStatus};

fn value_text<V: std::ops::Deref<Target = Value>>(v: Option<&V>) -> Option<&str> {
    v.and_then(|v| v.as_str())
}

/// Words of a belief name, for similarity.
fn words(name: &str) -> BTreeSet<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3)
        .map(str::to_ascii_lowercase)
        .collect()
}

/// A self-reported `post_met` that the recomputation contradicts, waiting for the harness's
/// check to decide its severity.
struct FalsePositive {
    plan: String,
    record: u32,
    step_id: String,
    step: u32,
    event: u32,
    expected: String,
    wrote: Vec<String>,
    known: Vec<String>,
    caught_at: Option<u32>,
    checked_ok: Option<bool>,
}

/// A write of a name nothing expects: (step, event, name, (event, plan/step) of the step
/// event that wrote it).
type OddWrite = (u32, u32, String, Option<(u32, String)>);

struct Deadlock {
    plan: String,
    record: u32,
    step: u32,
    event: u32,
    unfinished: Vec<String>,
    waits: Vec<(String, Vec<String>)>,
}

pub(super) fn check<'a>(cx: &mut Cx<'a>) {
    let log: &'a crate::trace::TraceLog = cx.log;
    let tl: &'a crate::model::Timeline = cx.tl;
    let bl = tl.bdi_log();
    if bl.plans.is_empty()
        && bl.steps.is_empty()
        && bl.postconditions.is_empty()
        && bl.satisfactions.is_empty()
    {
        return;
    }

    // The session's plans, decoded for this check alone: the plan views below borrow their
    // step definitions for the whole walk, and pinning them in the store kept every plan of
    // every session decoded to the end of the audit.
    let plans = decode_all(log, bl.plans.iter().map(|p| p.event));

    // Every name something expects: plan posts, postcondition programs, intentions.
    let mut expected: HashSet<String> = HashSet::new();
    for k in 0..plans.len() {
        if let Some(Body::Plan(plan)) = body_in(&plans, k) {
            for s in &plan.steps {
                if let Some(n) = value_text(s.post.as_ref()).and_then(tier1_name) {
                    expected.insert(n.to_string());
                }
            }
        }
    }
    for r in &bl.postconditions {
        if let Some(Body::Postcondition(p)) = log
            .events
            .load(r.event as usize)
            .as_deref()
            .map(|e| &e.body)
            && let Some(n) = p.program.as_deref().and_then(tier1_name)
        {
            expected.insert(n.to_string());
        }
    }
    for &(_, pos) in &bl.intentions {
        if let Some(Body::Intention(i)) = body_of(&log.events.load(pos as usize)) {
            if let Some(n) = value_text(i.satisfaction.as_ref()).and_then(tier1_name) {
                expected.insert(n.to_string());
            }
            if let Some(Value::Array(ps)) = i.open_parameters.as_deref() {
                expected.extend(ps.iter().filter_map(Value::as_str).map(str::to_string));
            }
        }
    }

    // The events of the walk, in step order: plans, steps, postconditions, belief writes.
    #[derive(Clone, Copy)]
    enum E {
        Plan(usize),
        Step(usize),
        Post(usize),
        Sat(u32),
    }
    let mut evs: Vec<(u32, u32, E)> = Vec::new();
    evs.extend(
        bl.plans
            .iter()
            .enumerate()
            .map(|(i, p)| (p.step, p.event, E::Plan(i))),
    );
    evs.extend(
        bl.steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.step, s.event, E::Step(i))),
    );
    evs.extend(
        bl.postconditions
            .iter()
            .enumerate()
            .map(|(i, s)| (s.step, s.event, E::Post(i))),
    );
    evs.extend(bl.satisfactions.iter().map(|&(s, p)| (s, p, E::Sat(p))));
    evs.sort_by_key(|&(s, e, _)| (s, e));

    let mut views: HashMap<u32, PlanView<'_>> = HashMap::new();
    let mut known: HashSet<&'a str> = HashSet::new();
    let mut upserts = bl.upserts.iter().peekable();
    let mut fps: Vec<FalsePositive> = Vec::new();
    let mut deadlocks: Vec<Deadlock> = Vec::new();
    let mut deadlocked: HashSet<u32> = HashSet::new();
    let mut out: Vec<Finding> = Vec::new();
    // (step, event) of every write of a name nothing expects, with its name.
    let mut odd_writes: Vec<OddWrite> = Vec::new();

    let mut advance = |t: u32, known: &mut HashSet<&'a str>, odd: &mut Vec<OddWrite>| {
        while let Some(u) = upserts.next_if(|u| u.step <= t) {
            let name = bl.names[u.name as usize].as_str();
            if !expected.contains(name) {
                let owner = match log
                    .events
                    .load(u.event as usize)
                    .as_deref()
                    .map(|e| &e.body)
                {
                    Some(Body::Step(s)) => s.step.clone().map(|id| {
                        (
                            u.event,
                            format!("{}/{}", s.plan.as_deref().unwrap_or("?"), id),
                        )
                    }),
                    _ => None,
                };
                // Which expected names it resembles, among those still unknown.
                let w = words(name);
                let similar = expected
                    .iter()
                    .filter(|e| !known.contains(e.as_str()))
                    .any(|e| !words(e).is_disjoint(&w));
                // Only step outputs: beliefs the user or a tool stated directly are not
                // meant to satisfy a postcondition.
                if similar && owner.is_some() {
                    odd.push((u.step, u.event, name.to_string(), owner));
                }
            }
            known.insert(name);
        }
    };

    for &(step, _, e) in &evs {
        advance(step, &mut known, &mut odd_writes);
        match e {
            E::Plan(i) => {
                let pr = &bl.plans[i];
                let Some(Body::Plan(plan)) = body_in(&plans, i) else {
                    continue;
                };
                let pv = PlanView::pending(pr, i as u32, plan);
                dag(cx, &pv, &mut out);
                views.insert(i as u32, pv);
            }
            E::Step(i) => {
                let sr = bl.steps[i];
                let loaded = log.events.load(sr.event as usize);
                let (Some(rec), Some(Body::Step(s))) = (sr.plan, body_of(&loaded)) else {
                    continue;
                };
                let Some(pv) = views.get_mut(&rec) else {
                    continue;
                };
                let Some(ix) = s
                    .step
                    .as_deref()
                    .and_then(|id| pv.steps.iter().position(|x| x.def.id == id))
                else {
                    continue;
                };
                if s.status == Some(StepStatus::Dispatched) {
                    // The dependencies that had not finished when this step started.
                    let unmet: Vec<String> = pv.steps[ix]
                        .def
                        .deps
                        .iter()
                        .filter(|d| {
                            pv.steps
                                .iter()
                                .find(|x| x.def.id == d.as_str())
                                .is_some_and(|x| x.state != StepState::Done)
                        })
                        .map(|d| d.to_string())
                        .collect();
                    if !unmet.is_empty() {
                        out.push(
                            cx.finding(
                                Code::StepBeforeDependencies,
                                sr.step,
                                sr.event,
                                format!(
                                    "Step {}/{} was dispatched while {} had not finished.",
                                    pv.id,
                                    pv.steps[ix].def.id,
                                    unmet.join(", ")
                                ),
                            )
                            .with("plan", pv.id)
                            .with("step", pv.steps[ix].def.id.as_str())
                            .with("unmet", &unmet),
                        );
                    }
                }
                let sv = &mut pv.steps[ix];
                sv.apply(s, sr.step, sr.event);
                if s.status == Some(StepStatus::Done)
                    && s.post_met == Some(true)
                    && let Some(name) = value_text(sv.def.post.as_ref()).and_then(tier1_name)
                    && !known.contains(name)
                {
                    let mut k: Vec<String> = known.iter().map(|s| s.to_string()).collect();
                    k.sort();
                    fps.push(FalsePositive {
                        plan: pv.id.to_string(),
                        record: rec,
                        step_id: sv.def.id.to_string(),
                        step: sr.step,
                        event: sr.event,
                        expected: name.to_string(),
                        wrote: s.new_beliefs.iter().map(|b| b.name.to_string()).collect(),
                        known: k,
                        caught_at: None,
                        checked_ok: None,
                    });
                }
                deadlock(pv, rec, sr.step, sr.event, &mut deadlocked, &mut deadlocks);
            }
            E::Sat(pos) => {
                let loaded = log.events.load(pos as usize);
                let Some(Body::Satisfaction(sat)) = body_of(&loaded) else {
                    continue;
                };
                let Some(ok) = sat.ok else { continue };
                // The intention it is about: the latest with that id, or the latest at all.
                // Not pinned: each satisfaction looks through the intentions before it.
                let intention = bl
                    .intentions
                    .iter()
                    .rev()
                    .filter(|&&(s, _)| s <= step)
                    .filter_map(|&(_, p)| log.events.load(p as usize))
                    .find(|e| sat.intention.is_none() || e.id == sat.intention);
                let Some((id, Body::Intention(i))) =
                    intention.as_deref().map(|e| (e.id.clone(), &e.body))
                else {
                    continue;
                };
                let Some(name) = value_text(i.satisfaction.as_ref()).and_then(tier1_name) else {
                    continue;
                };
                let holds = known.contains(name);
                if ok != holds {
                    let id = id.map_or_else(|| "the intention".to_string(), |i| i.to_string());
                    out.push(
                        cx.finding(
                            Code::PostconditionRecordMismatch,
                            step,
                            pos,
                            format!(
                                "The satisfaction of {id} is recorded as {}, but its condition \
                                 ground_belief({name}) is {} at that point.",
                                if ok { "met" } else { "not met" },
                                if holds { "known" } else { "not known" }
                            ),
                        )
                        .with("intention", id.clone())
                        .with("recorded", ok)
                        .with("recomputed", holds),
                    );
                }
            }
            E::Post(i) => {
                let pr = bl.postconditions[i];
                // Not pinned (a long trace has a postcondition every few dozen events): the
                // step's view keeps what the checks read of it, not its texts.
                let loaded = log.events.load(pr.event as usize);
                let (Some(rec), Some(Body::Postcondition(p))) = (pr.plan, body_of(&loaded)) else {
                    continue;
                };
                let Some(pv) = views.get_mut(&rec) else {
                    continue;
                };
                let plan_id = pv.id;
                let Some(sv) = p
                    .step
                    .as_deref()
                    .and_then(|id| pv.steps.iter_mut().find(|x| x.def.id == id))
                else {
                    continue;
                };
                sv.checks.push(PostCheck {
                    tier: p.tier,
                    ok: p.ok,
                    // Read below from `p` itself (failures.rs reads recorded failure
                    // modes from the events); no check reads them from the view.
                    failure_mode: None,
                    program: None,
                    step: pr.step,
                    event: pr.event,
                });
                let step_id = sv.def.id.to_string();
                match p.tier {
                    Some(2 | 3)
                        if !super::tiers::rechecks(
                            cx,
                            p.tier,
                            p.program
                                .as_deref()
                                .or_else(|| value_text(sv.def.post.as_ref())),
                            pr.step,
                        ) =>
                    {
                        let tier = p.tier.unwrap_or(0);
                        let verdict = match p.ok {
                            Some(true) => "passed",
                            Some(false) => "failed",
                            None => "has no verdict",
                        };
                        out.push(
                            cx.finding(
                                Code::NotCheckable,
                                pr.step,
                                pr.event,
                                format!(
                                    "The tier-{tier} postcondition of {plan_id}/{step_id} {verdict}; \
                                     tier {tier} is not independently checkable."
                                ),
                            )
                            .with("plan", plan_id)
                            .with("step", step_id.clone())
                            .with("tier", tier)
                            .with("ok", p.ok)
                            .with("cause", "tier"),
                        );
                    }
                    _ => {
                        let program = p
                            .program
                            .as_deref()
                            .or_else(|| value_text(sv.def.post.as_ref()));
                        if let Some(name) = program.and_then(tier1_name) {
                            let holds = known.contains(name);
                            if let Some(fp) = fps
                                .iter_mut()
                                .rev()
                                .find(|f| f.record == rec && f.step_id == step_id)
                                && fp.caught_at.is_none()
                            {
                                fp.caught_at = Some(pr.step);
                                fp.checked_ok = p.ok;
                            }
                            if let Some(ok) = p.ok
                                && ok != holds
                            {
                                out.push(
                                    cx.finding(
                                        Code::PostconditionRecordMismatch,
                                        pr.step,
                                        pr.event,
                                        format!(
                                            "The tier-1 postcondition of {plan_id}/{step_id} is \
                                             recorded as {}, but ground_belief({name}) is {} at \
                                             that point.",
                                            if ok { "ok" } else { "failed" },
                                            if holds { "known" } else { "not known" }
                                        ),
                                    )
                                    .with("plan", plan_id)
                                    .with("step", step_id.clone())
                                    .with("recorded", ok)
                                    .with("recomputed", holds),
                                );
                            }
                        }
                    }
                }
                deadlock(pv, rec, pr.step, pr.event, &mut deadlocked, &mut deadlocks);
            }
        }
    }
    advance(u32::MAX, &mut known, &mut odd_writes);

    for fp in fps {
        let caught = fp.checked_ok == Some(false);
        let unexpected: Vec<&String> = fp.wrote.iter().filter(|w| !expected.contains(*w)).collect();
        let wrote = if fp.wrote.is_empty() {
            "it wrote no ground belief".to_string()
        } else {
            format!("it wrote {}", fp.wrote.join(", "))
        };
        let tail = match fp.caught_at {
            Some(s) if caught => format!("; the harness's tier-1 check caught it at step {s}"),
            Some(s) => format!("; the tier-1 check at step {s} did not catch it"),
            None => "; no tier-1 check followed".to_string(),
        };
        let mut f = cx
            .finding(
                Code::PostconditionFalsePositive,
                fp.step,
                fp.event,
                format!(
                    "Step {}/{} self-reported post_met, but its postcondition \
                     ground_belief({}) is known is false: {wrote}{tail}.",
                    fp.plan, fp.step_id, fp.expected
                ),
            )
            .severity(if caught {
                Severity::Warning
            } else {
                Severity::Error
            })
            .with("plan", fp.plan.clone())
            .with("step", fp.step_id.clone())
            .with(
                "postcondition",
                format!("ground_belief({}) is known", fp.expected),
            )
            .with("expected", fp.expected.clone())
            .with("wrote", fp.wrote.clone())
            .with("ground_beliefs", fp.known.clone())
            .with("checked_at", fp.caught_at);
        if !unexpected.is_empty() {
            f = f.with("unexpected_names", json!(unexpected));
        }
        out.push(f);
    }

    let replans: Vec<u32> = bl.plans.iter().map(|p| p.step).collect();
    for d in deadlocks {
        let replanned = replans.iter().any(|&s| s > d.step);
        let waits: Vec<String> = d
            .waits
            .iter()
            .map(|(s, on)| format!("{s} waits on {}", on.join(", ")))
            .collect();
        let recovery = if replanned {
            "the agent replanned afterwards"
        } else {
            "the agent never replanned"
        };
        out.push(
            cx.finding(
                Code::DagDeadlock,
                d.step,
                d.event,
                format!(
                    "Plan {} is deadlocked: {} unfinished, no step in flight and none ready{}; {recovery}.",
                    d.plan,
                    d.unfinished.join(", "),
                    if waits.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", waits.join("; "))
                    }
                ),
            )
            .severity(if replanned { Severity::Warning } else { Severity::Error })
            .with("plan", d.plan)
            .with("plan_version", d.record)
            .with("unfinished", d.unfinished)
            .with(
                "waits",
                json!(d.waits.iter().map(|(s, on)| json!({"step": s, "on": on})).collect::<Vec<_>>()),
            )
            .with("replanned", replanned),
        );
    }

    for (step, event, name, owner) in odd_writes {
        let w = words(&name);
        let mut similar: Vec<&String> = expected
            .iter()
            .filter(|e| !words(e).is_disjoint(&w))
            .collect();
        similar.sort();
        let by = owner
            .as_ref()
            .map_or_else(String::new, |(_, o)| format!(" by step {o}"));
        out.push(
            cx.finding(
                Code::UnexpectedBeliefName,
                step,
                event,
                format!(
                    "The ground belief {name} was written{by} under a name nothing expects, \
                     while {} {} expected.",
                    similar
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    if similar.len() == 1 { "is" } else { "are" }
                ),
            )
            .with("name", name)
            .with("written_by", owner.map(|(_, o)| o))
            .with("similar_expected", json!(similar)),
        );
    }
    // plan_stats: each recorded outcome is an outcome of a use, so successes plus failures
    // cannot exceed uses (seed 004's useCount / successCount / failureCount).
    for &(step, pos) in &bl.plan_stats {
        let loaded = log.events.load(pos as usize);
        let Some(Body::PlanStats(ps)) = body_of(&loaded) else {
            continue;
        };
        let (uses, ok, bad) = (
            ps.use_count.unwrap_or(0),
            ps.success_count.unwrap_or(0),
            ps.failure_count.unwrap_or(0),
        );
        if ps.use_count.is_some() && ok.saturating_add(bad) > uses {
            let plan = ps.plan.as_deref().unwrap_or("?");
            out.push(
                cx.finding(
                    Code::PlanStatsInconsistent,
                    step,
                    pos,
                    format!(
                        "The plan_stats of {plan} count {ok} successes and {bad} failures from \
                         {uses} uses."
                    ),
                )
                .with("plan", plan)
                .with("use_count", uses)
                .with("success_count", ok)
                .with("failure_count", bad),
            );
        }
    }
    for f in out {
        cx.push(f);
    }
}

/// `dag-cycle` and `dag-dangling-dependency` of one plan version.
fn dag(cx: &Cx<'_>, pv: &PlanView<'_>, out: &mut Vec<Finding>) {
    if let Some(cycle) = pv.cycle() {
        let mut shown: Vec<&str> = cycle.clone();
        if let Some(first) = cycle.first() {
            shown.push(first);
        }
        out.push(
            cx.finding(
                Code::DagCycle,
                pv.step,
                pv.event,
                format!(
                    "Plan {} has a dependency cycle: {}.",
                    pv.id,
                    shown.join(" → ")
                ),
            )
            .with("plan", pv.id)
            .with("cycle", json!(cycle)),
        );
    }
    let dangling = pv.dangling();
    if !dangling.is_empty() {
        let pairs: Vec<String> = dangling
            .iter()
            .map(|(s, d)| format!("{s} depends on {d}"))
            .collect();
        out.push(
            cx.finding(
                Code::DagDanglingDependency,
                pv.step,
                pv.event,
                format!(
                    "Plan {} depends on steps it does not have: {}.",
                    pv.id,
                    pairs.join("; ")
                ),
            )
            .with("plan", pv.id)
            .with(
                "dangling",
                json!(
                    dangling
                        .iter()
                        .map(|(s, d)| json!({"step": s, "missing": d}))
                        .collect::<Vec<_>>()
                ),
            ),
        );
    }
}

/// Records the first moment a plan version deadlocks (see the module docs).
fn deadlock(
    pv: &PlanView<'_>,
    rec: u32,
    step: u32,
    event: u32,
    seen: &mut HashSet<u32>,
    out: &mut Vec<Deadlock>,
) {
    if seen.contains(&rec) || pv.complete() || pv.steps.is_empty() {
        return;
    }
    let in_flight = pv.steps.iter().any(|s| {
        s.state == StepState::Dispatched || (s.state == StepState::Done && s.checks.is_empty())
    });
    if in_flight || !pv.ready().is_empty() {
        return;
    }
    seen.insert(rec);
    let ok = |s: &StepView<'_>| s.state == StepState::Done && s.verified();
    let by_id: HashMap<&str, &StepView<'_>> =
        pv.steps.iter().map(|s| (s.def.id.as_str(), s)).collect();
    let unfinished = pv
        .steps
        .iter()
        .filter(|s| !ok(s))
        .map(|s| s.def.id.to_string())
        .collect();
    let waits = pv
        .steps
        .iter()
        .filter(|s| s.state == StepState::Pending)
        .filter_map(|s| {
            let on: Vec<String> = s
                .def
                .deps
                .iter()
                .filter(|d| !by_id.get(d.as_str()).is_some_and(|x| ok(x)))
                .map(|d| d.to_string())
                .collect();
            (!on.is_empty()).then(|| (s.def.id.to_string(), on))
        })
        .collect();
    out.push(Deadlock {
        plan: pv.id.to_string(),
        record: rec,
        step,
        event,
        unfinished,
        waits,
    });
}
