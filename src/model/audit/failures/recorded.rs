//! The failure modes a trace records (`failure_mode` on a postcondition or satisfaction, and
//! a satisfaction's `correct`) against what doxascope detected in the same scope: agreement
//! is `failure-mode-recorded`, a disagreement `failure-mode-mismatch`. The two modes
//! [`super::super::bdi`] finds (verification false positive, DAG deadlock) join the detected
//! ones here.

use std::collections::BTreeSet;

use super::{
    Comp, Comps, Detected, Mode, Scene, Score, Scored, Tally, mode_of, plan_def, post_name,
};
use crate::model::audit::{Code, Cx, Finding, body_in};
use crate::trace::event::{Body, body_of};

/// Where a recorded failure mode applies: a plan step (plan id, step id), or the intention.
enum Scope<'s> {
    Step(&'s str, String),
    Intention,
}

/// The modes bdi.rs found, as detected ones.
pub(super) fn bdi_modes(cx: &Cx<'_>, sc: &Scene<'_>, tally: &mut Tally) {
    for f in &cx.modes {
        let Some(mode) = mode_of(f.code) else {
            continue;
        };
        let (steps, plan_level) = match mode {
            Mode::DagDeadlock => (Vec::new(), true),
            _ => (f.plan_step.clone().into_iter().collect(), false),
        };
        tally.detected.push(Detected {
            mode,
            window: f.step.and_then(|t| sc.window_of(t)),
            plan: f.plan.clone(),
            steps,
            plan_level,
        });
    }
}

/// The recorded failure modes, as (step, event, scope, label), in step order.
fn recorded<'s>(sc: &Scene<'s>) -> Vec<(u32, u32, Scope<'s>, String)> {
    let bl = sc.bl;
    let mut recorded: Vec<(u32, u32, Scope<'s>, String)> = Vec::new();
    // Postconditions are decoded here, not pinned (a long trace has one every few dozen
    // events): the few that record a failure mode are copied out.
    for pr in &bl.postconditions {
        let loaded = sc.log.events.load(pr.event as usize);
        if let (Some(rec), Some(Body::Postcondition(p))) = (pr.plan, body_of(&loaded))
            && let (Some(fm), Some(sid)) = (p.failure_mode.as_deref(), p.step.as_deref())
        {
            let plan = bl.plans[rec as usize].id.as_str();
            recorded.push((
                pr.step,
                pr.event,
                Scope::Step(plan, sid.to_string()),
                fm.to_string(),
            ));
        }
    }
    for (k, &(step, pos)) in bl.satisfactions.iter().enumerate() {
        if let Some(Body::Satisfaction(s)) = body_in(sc.sats, k)
            && let Some(fm) = s.failure_mode.as_deref()
        {
            recorded.push((step, pos, Scope::Intention, fm.to_string()));
        }
    }
    recorded.sort_by_key(|r| (r.0, r.1));
    recorded
}

/// Compares each recorded failure mode with the modes detected in its scope.
pub(super) fn check(
    cx: &Cx<'_>,
    sc: &Scene<'_>,
    comps: &Comps,
    scored: &[Scored],
    tally: &mut Tally,
) {
    for (step, event, scope, label) in recorded(sc) {
        let wi = sc.window_of(step);
        let here: BTreeSet<Mode> = tally
            .detected
            .iter()
            .filter(|d| d.window == wi)
            .filter(|d| match &scope {
                Scope::Intention => true,
                Scope::Step(p, s) => {
                    d.plan.is_none()
                        || d.plan.as_deref() == Some(*p)
                            && (d.plan_level || d.steps.iter().any(|x| x == s))
                }
            })
            .map(|d| d.mode)
            .collect();
        let where_ = match &scope {
            Scope::Step(p, s) => format!("{p}/{s}"),
            Scope::Intention => wi
                .and_then(|i| sc.windows[i].id)
                .map_or_else(|| "the run".to_string(), |id| format!("intention {id}")),
        };
        let found: Vec<&str> = here.iter().map(|m| m.as_str()).collect();
        let found_text = if found.is_empty() {
            "nothing".to_string()
        } else {
            found.join(", ")
        };
        let Some(mode) = Mode::from_label(&label) else {
            tally.out.push(
                cx.finding(
                    Code::FailureModeRecorded,
                    step,
                    event,
                    format!(
                        "The trace records failure mode {label} for {where_}, which is not in seed \
                         004's taxonomy; doxascope detected {found_text} there."
                    ),
                )
                .with("recorded", label.as_str())
                .with("scope", where_.as_str())
                .with("detected", &found)
                .with("verdict", "not-in-taxonomy"),
            );
            continue;
        };
        let checkable = checkable(sc, comps, scored, mode, &scope, step, wi);
        let verdict = if here.contains(&mode) {
            "agree"
        } else if !here.is_empty() || checkable {
            "disagree"
        } else {
            "unchecked"
        };
        let f = verdict_finding(
            cx,
            (step, event),
            mode,
            &where_,
            verdict,
            &here,
            &found_text,
        );
        tally.out.push(
            f.with("recorded", mode.as_str())
                .with("scope", where_.as_str())
                .with("detected", &found)
                .with("verdict", verdict),
        );
    }
}

/// Whether doxascope checked for `mode` in the scope with the information the trace carries
/// (so that finding none there is a disagreement, not an unchecked record).
fn checkable(
    sc: &Scene<'_>,
    comps: &Comps,
    scored: &[Scored],
    mode: Mode,
    scope: &Scope<'_>,
    step: u32,
    wi: Option<usize>,
) -> bool {
    let bl = sc.bl;
    let mut answer_in = scored.iter().filter(|s| s.window == wi);
    match (mode, scope) {
        (Mode::VerificationFalsePositive, Scope::Step(p, s)) => {
            plan_def(sc.plans, bl, p, step, s).is_some_and(|d| post_name(d).is_some())
        }
        (Mode::VerificationFalsePositive, Scope::Intention) => true,
        (Mode::DagDeadlock, _) => true,
        (Mode::IncorrectComputation, Scope::Step(p, s)) => bl
            .plans
            .iter()
            .enumerate()
            .rev()
            .find(|(_, r)| r.id == *p && r.step <= step)
            .is_some_and(|(r, _)| comps.get(&(r as u32, s.to_string())) == Some(&Comp::Right)),
        (Mode::IncorrectComputation, Scope::Intention) => {
            let w = wi.map(|i| &sc.windows[i]);
            let ran: Vec<Comp> = comps
                .iter()
                .filter(|((r, _), _)| {
                    let t = bl.plans[*r as usize].step;
                    w.is_none_or(|w| t >= w.start && t < w.end)
                })
                .map(|(_, c)| *c)
                .collect();
            !ran.is_empty() && ran.iter().all(|c| *c == Comp::Right)
        }
        (Mode::BadRetrieval, Scope::Step(_, s)) => answer_in
            .any(|a| a.determined && (a.score != Score::Wrong || a.fetches.iter().any(|f| f == s))),
        (Mode::BadRetrieval, Scope::Intention) => answer_in.any(|a| a.determined),
        (Mode::AnswerFormatting, _) => answer_in.next().is_some(),
        (Mode::AvoidedFileRead, _) => wi.is_some_and(|i| !sc.windows[i].files.is_empty()),
    }
}

/// The finding for a recorded mode with a `verdict` (agree, disagree or unchecked).
fn verdict_finding(
    cx: &Cx<'_>,
    (step, event): (u32, u32),
    mode: Mode,
    where_: &str,
    verdict: &str,
    here: &BTreeSet<Mode>,
    found_text: &str,
) -> Finding {
    if verdict == "disagree" {
        let said = if here.is_empty() {
            format!(
                "checked and found no {}",
                mode.words()
                    .trim_start_matches("a ")
                    .trim_start_matches("an ")
            )
        } else {
            format!("detected {found_text} instead")
        };
        return cx.finding(
            Code::FailureModeMismatch,
            step,
            event,
            format!(
                "The trace records failure mode {} for {where_}, but doxascope {said}.",
                mode.as_str()
            ),
        );
    }
    let said = if verdict == "agree" {
        "doxascope detected it too".to_string()
    } else {
        format!(
            "doxascope cannot check it with what the trace carries (it detected {found_text} \
             there)"
        )
    };
    cx.finding(
        Code::FailureModeRecorded,
        step,
        event,
        format!(
            "The trace records failure mode {} for {where_}; {said}.",
            mode.as_str()
        ),
    )
}

/// A recorded score (`correct`) against doxascope's score of the same answer.
pub(super) fn scores(cx: &Cx<'_>, sc: &Scene<'_>, scored: &[Scored], tally: &mut Tally) {
    for (k, &(step, pos)) in sc.bl.satisfactions.iter().enumerate() {
        let Some(Body::Satisfaction(s)) = body_in(sc.sats, k) else {
            continue;
        };
        let (Some(correct), Some(mine)) = (
            s.correct,
            scored.iter().find(|a| a.sat_step == step).map(|a| &a.score),
        ) else {
            continue;
        };
        let ours = *mine == Score::Correct;
        if correct != ours {
            tally.out.push(
                cx.finding(
                    Code::FailureModeMismatch,
                    step,
                    pos,
                    format!(
                        "The trace scores the answer {}, but it {} the expected answer.",
                        if correct { "correct" } else { "wrong" },
                        if ours { "matches" } else { "does not match" }
                    ),
                )
                .with("recorded_correct", correct)
                .with("recomputed_correct", ours),
            );
        }
    }
}
