//! Judge against solver: a `score` (an eval scorer, an LLM judge, a human) that passes an
//! answer Σ contradicts, or fails one Σ entails (issue 29, item 4).
//!
//! **What a score says.** A score is read as a pass or a fail by the one rule of
//! [`crate::model::scores`] ([`verdict`]): its `passed`, else a boolean `value`, Inspect's
//! letters, or a word such as `correct` / `incorrect` in its value or label. A bare number
//! does not rule (its scale is the scorer's), and a score whose name says a high value is
//! bad (`hallucination`, `toxicity`, ...) is read only through its `passed`.
//!
//! **What is judged.** The event a score's `target` names (the latest answer or plan step's
//! event with that `id` before the score, else the first after, as
//! [`Timeline::score_target`] resolves it):
//! an `answer` with a formula, whose recomputed verdict on Σ at that step is the one
//! `answer-contradicts-sigma` and `answer-not-entailed` read; or a plan step's `step` event,
//! whose postcondition (tier 1, or a tier-2 comparison) is re-run on the ground beliefs at
//! that event (a pass of a step whose postcondition is false, a fail of one whose
//! postcondition holds, with the values read). A score without a target scores
//! the session as a whole and is not judged, nor is an answer Σ neither entails nor
//! contradicts (there the judge knows something Σ does not).
//!
//! A pass of a contradicted answer is `score-passes-contradicted` (error) with the minimal
//! conflicts (subsets of Σ entailing the answer's negation); a fail of an entailed answer is
//! `score-fails-entailed` (warning) with the minimal supports. Either the judge or the
//! agent's beliefs are wrong; the finding names the score, its scorer (`source`) and the
//! beliefs to look at.
//!
//! [`Timeline::score_target`]: crate::model::timeline::Timeline::score_target

use std::collections::HashMap;

use serde_json::json;

use super::probe::Probe;
use super::{Code, Cx};
use crate::logic::engine::Entails;
use crate::logic::formula::Formula;
use crate::logic::parse::parse;
use crate::model::condition::rerun_any;
use crate::trace::event::{Body, Score, body_of};

/// Whether a score passes (`Some(true)`) or fails (`Some(false)`) what it scores: the one
/// rule of [`crate::model::scores::passed`], so a judge is held to what the timeline, the
/// session list and `score-failed` read of the same score.
pub fn verdict(s: &Score) -> Option<bool> {
    crate::model::scores::passed(s)
}

/// A score to judge: its step and event, what it says, and the answer it targets.
struct Judged {
    step: u32,
    event: u32,
    name: String,
    value: String,
    scorer: Option<String>,
    pass: bool,
    answer_step: u32,
    answer_event: u32,
    formula: String,
    recomputed: Entails,
}

pub(super) fn check(cx: &mut Cx<'_>) {
    let mut todo: Vec<Judged> = Vec::new();
    let mut steps: Vec<super::Finding> = Vec::new();
    // Built at the first score that rules on a target.
    let mut ids: Option<HashMap<String, Vec<u32>>> = None;
    for &(step, pos) in cx.tl.scores() {
        let loaded = cx.log.events.load(pos as usize);
        let Some(Body::Score(s)) = body_of(&loaded) else {
            continue;
        };
        let Some(pass) = verdict(s) else { continue };
        let Some(target) = s.target.as_deref() else {
            continue;
        };
        let ids = ids.get_or_insert_with(|| targets(cx));
        let Some(target_pos) = resolve(ids, target, pos) else {
            continue;
        };
        let Some(a) = cx.rc.answers.iter().find(|a| a.event == target_pos) else {
            if let Some(f) = judge_step(cx, step, pos, s, pass, target_pos) {
                steps.push(f);
            }
            continue;
        };
        let Ok(recomputed) = a.result else { continue };
        let agrees = match recomputed {
            Entails::Entailed => pass,
            Entails::Contradicted => !pass,
            Entails::Unknown => true,
        };
        if agrees {
            continue;
        }
        let target = cx.log.events.load(target_pos as usize);
        let Some(Body::Answer(b)) = body_of(&target) else {
            continue;
        };
        let Some(formula) = b.formula.as_ref().map(|t| t.to_string()) else {
            continue;
        };
        todo.push(Judged {
            step,
            event: pos,
            name: s.name.to_string(),
            value: s.value.as_ref().map_or_else(
                || s.label.as_deref().unwrap_or("").to_string(),
                |v| v.to_string(),
            ),
            scorer: s.source.as_deref().map(str::to_string),
            pass,
            answer_step: a.step,
            answer_event: a.event,
            formula,
            recomputed,
        });
    }
    // The probe only moves forward: the answers in step order.
    todo.sort_by_key(|j| (j.answer_step, j.step));
    let mut probe: Option<Probe<'_>> = None;
    for j in todo {
        let f = finding(cx, &mut probe, &j);
        cx.push(f);
    }
    for f in steps {
        cx.push(f);
    }
}

/// The events a score can judge, by `id`: the answers with a formula and the plan steps'
/// `step` events, each id's positions in log order. Read without pinning: a long trace has
/// many of both.
fn targets(cx: &Cx<'_>) -> HashMap<String, Vec<u32>> {
    let mut out: HashMap<String, Vec<u32>> = HashMap::new();
    let answers = cx.rc.answers.iter().map(|a| a.event);
    let steps = cx.tl.bdi_log().steps.iter().map(|s| s.event);
    for pos in answers.chain(steps) {
        if let Some(id) = cx.log.events.load(pos as usize).and_then(|e| e.id.clone()) {
            out.entry(id.to_string()).or_default().push(pos);
        }
    }
    for v in out.values_mut() {
        v.sort_unstable();
    }
    out
}

/// The event a score at `pos` names by `target`: the latest with that id before it, else the
/// first after it (as [`Timeline::score_target`] resolves a target among all events).
///
/// [`Timeline::score_target`]: crate::model::timeline::Timeline::score_target
fn resolve(ids: &HashMap<String, Vec<u32>>, target: &str, pos: u32) -> Option<u32> {
    let v = ids.get(target)?;
    let k = v.partition_point(|&p| p < pos);
    k.checked_sub(1).map(|i| v[i]).or_else(|| v.get(k).copied())
}

/// A score of a plan step (its `step` event): against the step's postcondition re-run on the
/// ground beliefs when it was reported (tiers 1 and 2, [`crate::model::condition`]).
fn judge_step(
    cx: &Cx<'_>,
    step: u32,
    pos: u32,
    s: &Score,
    pass: bool,
    target: u32,
) -> Option<super::Finding> {
    let bl = cx.tl.bdi_log();
    let sr = bl.steps.iter().find(|r| r.event == target)?;
    let loaded = cx.log.events.load(target as usize);
    let Some(Body::Step(st)) = body_of(&loaded) else {
        return None;
    };
    let id = st.step.as_deref()?;
    let rec = bl.plans.get(sr.plan? as usize)?;
    let plan = cx.log.events.load(rec.event as usize);
    let Some(Body::Plan(plan)) = body_of(&plan) else {
        return None;
    };
    let post = plan
        .steps
        .iter()
        .find(|d| d.id == id)?
        .post
        .as_deref()?
        .as_str()?;
    let (tier, r) = rerun_any(post, bl, cx.log, sr.step)?;
    let r = r.ok()?;
    if r.holds == pass {
        return None;
    }
    let scorer = s.source.as_deref().map_or_else(
        || "an unnamed scorer".to_string(),
        |x| format!("scorer {x}"),
    );
    let value = s.value.as_ref().map_or_else(
        || s.label.as_deref().unwrap_or("").to_string(),
        |v| v.to_string(),
    );
    let (code, said) = if pass {
        (Code::ScorePassesContradicted, "passes")
    } else {
        (Code::ScoreFailsEntailed, "fails")
    };
    Some(
        cx.finding(
            code,
            step,
            pos,
            format!(
                "The score {} = {value} by {scorer} {said} step {}/{id} (step {}), whose \
                 postcondition {post} is {} on the ground beliefs at that point ({}).",
                s.name,
                rec.id,
                sr.step,
                r.holds,
                r.values_text()
            ),
        )
        .with("score", s.name.as_str())
        .with("value", value)
        .with("scorer", s.source.as_deref())
        .with("verdict", if pass { "pass" } else { "fail" })
        .with("plan", rec.id.as_str())
        .with("step", id)
        .with("postcondition", post)
        .with("tier", tier)
        .with("recomputed", r.holds)
        .with("values", json!(r.values)),
    )
}

/// The minimal subsets of Σ at the answer's step entailing `phi`.
fn sets<'a>(
    probe: &mut Option<Probe<'a>>,
    cx: &Cx<'a>,
    t: u32,
    phi: &Formula,
) -> Result<Vec<Vec<String>>, String> {
    if probe.as_ref().is_none_or(|p| p.step() > t) {
        *probe = Some(Probe::new(cx.tl, cx.log, &cx.opts.recompute)?);
    }
    let p = probe.as_mut().ok_or("no probe")?;
    p.seek(t)?;
    p.supports(phi, 3).map(|(s, _)| s)
}

fn finding<'a>(cx: &Cx<'a>, probe: &mut Option<Probe<'a>>, j: &Judged) -> super::Finding {
    let scorer = j.scorer.as_deref().map_or_else(
        || "an unnamed scorer".to_string(),
        |s| format!("scorer {s}"),
    );
    let (code, key, said, phi) = if j.pass {
        (
            Code::ScorePassesContradicted,
            "conflicts",
            "passes",
            parse(&j.formula).ok().map(|f| Formula::Not(Box::new(f))),
        )
    } else {
        (
            Code::ScoreFailsEntailed,
            "supports",
            "fails",
            parse(&j.formula).ok(),
        )
    };
    let sigma = if j.pass { "contradicts" } else { "entails" };
    let mut f = cx
        .finding(
            code,
            j.step,
            j.event,
            format!(
                "The score {} = {} by {scorer} {said} the answer {} (step {}), which Σ at that \
                 step {sigma}: the judge or the agent's beliefs are wrong.",
                j.name, j.value, j.formula, j.answer_step
            ),
        )
        .formulas([j.formula.clone()])
        .with("score", j.name.clone())
        .with("value", j.value.clone())
        .with("scorer", j.scorer.clone())
        .with("verdict", if j.pass { "pass" } else { "fail" })
        .with("answer_step", j.answer_step)
        .with(
            "recomputed",
            match j.recomputed {
                Entails::Entailed => "entailed",
                Entails::Contradicted => "contradicted",
                Entails::Unknown => "unknown",
            },
        );
    // The answer's own recomputation kept its conflicts when it could; else ask the probe.
    let given = cx
        .rc
        .answers
        .iter()
        .find(|a| a.event == j.answer_event)
        .and_then(|a| a.evidence.clone())
        .filter(|_| j.pass);
    let evidence = match (given, phi) {
        (Some(r), _) => r.map_err(|e| e.to_string()),
        (None, Some(phi)) => sets(probe, cx, j.answer_step, &phi),
        (None, None) => Err("the answer's formula does not parse".to_string()),
    };
    match evidence {
        Ok(sets) => {
            let mut ids: Vec<&String> = sets.iter().flatten().collect();
            ids.sort();
            ids.dedup();
            f = f.ids(ids.into_iter().cloned()).with(key, json!(sets));
        }
        Err(e) => f = f.with("evidence_error", e),
    }
    f
}
