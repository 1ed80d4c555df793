//! The per-step pass: seed 004's **bad retrieval** as a failed fetch step, and **incorrect
//! computation** as a step whose `compute` expression, evaluated on its inputs, does not give
//! the value it wrote. One pass over the step events serves both (and records how every
//! computation recomputed, which the answers' check reads).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    Comp, Comps, Detected, Mode, Scene, Tally, is_computation, plan_of, post_name, step_def,
    text_of,
};
use crate::model::arith::{self, Expr};
use crate::model::audit::{Code, Cx};
use crate::model::bdi::StepRef;
use crate::trace::event::{Belief, Body, PlanStep, Step, StepKind, StepStatus, body_of};

/// A step event of a plan step, as the checks below read it.
struct At<'x> {
    /// Its index in the BDI log's steps.
    i: usize,
    sr: &'x StepRef,
    s: &'x Step,
    rec: u32,
    plan_id: &'x str,
    sid: &'x str,
    def: &'x PlanStep,
}

/// Runs the fetch and computation checks over every step event, in step order; returns how
/// each computation recomputed.
pub(super) fn check(cx: &Cx<'_>, sc: &Scene<'_>, tally: &mut Tally) -> Comps {
    let mut comps = Comps::new();
    for (i, sr) in sc.bl.steps.iter().enumerate() {
        // Not pinned: every step event passes here.
        let loaded = sc.log.events.load(sr.event as usize);
        let (Some(rec), Some(Body::Step(s))) = (sr.plan, body_of(&loaded)) else {
            continue;
        };
        let Some(sid) = s.step.as_deref() else {
            continue;
        };
        let Some(plan) = plan_of(sc.plans, rec) else {
            continue;
        };
        let Some(def) = step_def(plan, sid) else {
            continue;
        };
        let at = At {
            i,
            sr,
            s,
            rec,
            plan_id: sc.bl.plans[rec as usize].id.as_str(),
            sid,
            def,
        };
        if s.status == Some(StepStatus::Failed) && def.kind == Some(StepKind::Fetch) {
            failed_fetch(cx, sc, &at, tally);
            continue;
        }
        if s.status != Some(StepStatus::Done) {
            continue;
        }
        if let Some(c) = recompute(cx, sc, &at, tally) {
            comps.insert((rec, sid.to_string()), c);
        }
    }
    comps
}

/// Bad retrieval, the first kind: a fetch step that failed retrieved nothing (a warning,
/// with the tools' errors as evidence).
fn failed_fetch(cx: &Cx<'_>, sc: &Scene<'_>, at: &At<'_>, tally: &mut Tally) {
    let (plan_id, sid) = (at.plan_id, at.sid);
    let errors: Vec<Value> =
        at.s.tool_calls
            .iter()
            .filter_map(|c| {
                c.error
                    .as_deref()
                    .map(|e| json!({"tool": c.tool.as_str(), "error": e}))
            })
            .collect();
    let why = match errors.first() {
        Some(e) => format!(
            " ({} reported: {})",
            e["tool"].as_str().unwrap_or("a tool"),
            e["error"].as_str().unwrap_or("")
        ),
        None => String::new(),
    };
    tally.out.push(
        cx.finding(
            Code::BadRetrieval,
            at.sr.step,
            at.sr.event,
            format!("Fetch step {plan_id}/{sid} failed: nothing was retrieved{why}."),
        )
        .with("plan", plan_id)
        .with("step", sid)
        .with("cause", "fetch-failed")
        .with("tool_errors", errors),
    );
    tally.detected.push(Detected {
        mode: Mode::BadRetrieval,
        window: sc.window_of(at.sr.step),
        plan: Some(plan_id.to_string()),
        steps: vec![sid.to_string()],
        plan_level: false,
    });
}

/// The belief a done step wrote as its result: its `output`, else its postcondition's
/// belief, else its only new belief.
fn written_by<'x>(def: &PlanStep, s: &'x Step) -> Option<&'x Belief> {
    match def.output.as_deref().or_else(|| post_name(def)) {
        Some(n) => s.new_beliefs.iter().find(|b| b.name.as_str() == n),
        None if s.new_beliefs.len() == 1 => s.new_beliefs.first(),
        None => None,
    }
}

/// The snapshot the step computed from: the ground beliefs at its dispatch (the latest
/// dispatch of this run of the step), else just before it reported done.
fn snapshot(sc: &Scene<'_>, at: &At<'_>) -> u32 {
    let dispatched_at = sc.bl.steps[..at.i]
        .iter()
        .rev()
        .filter(|o| o.plan == Some(at.rec))
        .find_map(|o| {
            match sc
                .log
                .events
                .load(o.event as usize)
                .as_deref()
                .map(|e| &e.body)
            {
                Some(Body::Step(x)) if x.step.as_deref() == Some(at.sid) => {
                    Some((o.step, x.status))
                }
                _ => None,
            }
        })
        .and_then(|(t, st)| (st == Some(StepStatus::Dispatched)).then_some(t));
    dispatched_at.unwrap_or(at.sr.step.saturating_sub(1))
}

/// The exact value of `expr_text` with the step's inputs, else the ground beliefs at `snap`,
/// and the inputs it used as written.
fn evaluate(
    sc: &Scene<'_>,
    expr_text: &str,
    s: &Step,
    snap: u32,
) -> Result<(f64, serde_json::Map<String, Value>), arith::ArithError> {
    let e = Expr::parse(expr_text)?;
    let mut vals = BTreeMap::new();
    let mut shown = serde_json::Map::new();
    for n in e.names() {
        let v = match s.inputs.as_deref().and_then(|m| m.get(n)) {
            Some(v) => Some(v.clone()),
            None => sc
                .bl
                .history(sc.log, n, snap)
                .last()
                .map(|g| g.value.cloned().unwrap_or(Value::Null)),
        };
        let Some(v) = v else {
            return Err(arith::ArithError::Unknown(n.to_string()));
        };
        let Some(x) = arith::numeric(&v) else {
            return Err(arith::ArithError::NotNumeric(n.to_string(), text_of(&v)));
        };
        vals.insert(n.to_string(), x);
        shown.insert(n.to_string(), v);
    }
    Ok((e.eval(&vals)?, shown))
}

/// Incorrect computation: recomputes a done step's `compute` and compares it with the value
/// it wrote. Returns how it came out (`None` for a step that is no computation); a step that
/// cannot be recomputed is `not-checkable`, a wrong one an `incorrect-computation` finding.
fn recompute(cx: &Cx<'_>, sc: &Scene<'_>, at: &At<'_>, tally: &mut Tally) -> Option<Comp> {
    let (s, plan_id, sid) = (at.s, at.plan_id, at.sid);
    let Some(expr_text) = at.def.compute.as_deref() else {
        return is_computation(at.def).then_some(Comp::Unchecked);
    };
    let Some(written) = written_by(at.def, s) else {
        // Nothing to compare with; a missing output is the false-positive check's.
        return Some(Comp::Unchecked);
    };
    let snap = snapshot(sc, at);
    let outcome = evaluate(sc, expr_text, s, snap);
    let wv = written.value.as_deref().cloned().unwrap_or(Value::Null);
    let from = if s.inputs.is_some() {
        "the step's inputs".to_string()
    } else {
        format!("the ground beliefs at step {snap}")
    };
    let not_checkable = |why: String| {
        cx.finding(Code::NotCheckable, at.sr.step, at.sr.event, why)
            .with("plan", plan_id)
            .with("step", sid)
            .with("compute", expr_text)
            .with("cause", "computation")
    };
    let (exact, inputs) = match outcome {
        Ok(x) => x,
        Err(e) => {
            tally.out.push(not_checkable(format!(
                "The computation of {plan_id}/{sid} ({expr_text}) cannot be rechecked: {e}."
            )));
            return Some(Comp::Unchecked);
        }
    };
    let Some(ok) = arith::agrees(&wv, exact) else {
        tally.out.push(not_checkable(format!(
            "The computation of {plan_id}/{sid} cannot be rechecked: it wrote {} = {}, which \
             is not a number.",
            written.name,
            text_of(&wv)
        )));
        return Some(Comp::Unchecked);
    };
    if ok {
        return Some(Comp::Right);
    }
    let listed: Vec<String> = inputs
        .iter()
        .map(|(k, v)| format!("{k} = {}", text_of(v)))
        .collect();
    let exact_shown = format!("{}", (exact * 1e6).round() / 1e6);
    tally.out.push(
        cx.finding(
            Code::IncorrectComputation,
            at.sr.step,
            at.sr.event,
            format!(
                "Step {plan_id}/{sid} wrote {} = {}, but {expr_text} is {exact_shown} with {} \
                 (from {from}).",
                written.name,
                text_of(&wv),
                if listed.is_empty() {
                    "no inputs".to_string()
                } else {
                    listed.join(", ")
                }
            ),
        )
        .with("plan", plan_id)
        .with("step", sid)
        .with("compute", expr_text)
        .with("inputs", Value::Object(inputs))
        .with("inputs_from", from)
        .with("output", written.name.as_str())
        .with("written", wv)
        .with("recomputed", exact),
    );
    tally.detected.push(Detected {
        mode: Mode::IncorrectComputation,
        window: sc.window_of(at.sr.step),
        plan: Some(plan_id.to_string()),
        steps: vec![sid.to_string()],
        plan_level: false,
    });
    Some(Comp::Wrong)
}
