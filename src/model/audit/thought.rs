//! Chain-of-thought steps through the gate Θ (issue 29, item 1).
//!
//! A `thought` changes nothing in Σ, but what it `asserts` is what the agent reasons from next.
//! Each asserted formula is put through Θ on Σ at the thought's step:
//!
//! - **thought-contradicts-sigma**: Σ contradicts it; the evidence is a minimal conflict (a
//!   minimal subset of Σ entailing its negation). Not made while Σ itself is inconsistent
//!   (everything contradicts an inconsistent Σ, and other findings say so).
//! - **unsupported-thought-premise**: Σ does not entail it (NEWINFO: consistent, not
//!   entailed) and a later event cites it as a premise: a `because` naming the thought's `id`,
//!   or the asserted formula as written while no belief of Σ has that id. A guess that stays a
//!   guess is fine; a guess reasoned from as if known is not.
//!
//! Both ask a forward-only [`Probe`] (one per session, made only when the session has a
//! thought with `asserts`).

use hashbrown::HashMap;

use serde_json::json;

use super::probe::Probe;
use super::{Code, Cx, Finding};
use crate::logic::engine::Outcome;
use crate::logic::formula::Formula;
use crate::logic::parse::parse;
use crate::logic::print::normalized;
use crate::model::recompute::ThoughtCheck;
use crate::trace::event::{Body, Kind, body_of};

/// The session's events of these kinds with their steps (event i takes effect at step
/// i + 1), found by the store's kind index without decoding the others.
pub(super) fn steps(cx: &Cx<'_>, kinds: &[Kind]) -> Vec<(u32, u32)> {
    cx.tl
        .event_positions()
        .iter()
        .enumerate()
        .filter(|&(_, &pos)| {
            cx.log
                .events
                .kind(pos as usize)
                .flatten()
                .is_some_and(|k| kinds.contains(&k))
        })
        .map(|(i, &pos)| (i as u32 + 1, pos))
        .collect()
}

/// The probe, moved to step `t` (made on first use).
pub(super) fn probe_at<'p, 'a: 'p>(
    slot: &'p mut Option<Probe<'a>>,
    cx: &Cx<'a>,
    t: u32,
) -> Result<&'p mut Probe<'a>, String> {
    if slot.as_ref().is_none_or(|p| p.step() > t) {
        *slot = Some(Probe::new(cx.tl, cx.log, &cx.opts.recompute)?);
    }
    let p = slot.as_mut().ok_or("no probe")?;
    p.seek(t)?;
    Ok(p)
}

/// A minimal subset of Σ (at the probe's step) that contradicts `f`: one that entails ¬f.
pub(super) fn conflict_with(p: &mut Probe<'_>, f: &Formula) -> Vec<String> {
    let not = Formula::Not(Box::new(f.clone()));
    p.supports(&not, 1)
        .ok()
        .and_then(|(sets, _)| sets.into_iter().next())
        .unwrap_or_default()
}

/// One asserted formula of a thought, with what Θ said of it.
struct Asserted {
    step: u32,
    event: u32,
    id: Option<String>,
    text: String,
    outcome: Outcome,
}

/// Every asserted formula of every thought, through Θ on Σ at its step. Formulas that do not
/// parse are `parse-error`s elsewhere; a solver failure leaves the formula unjudged. The
/// recomputation's answers ([`ThoughtCheck`]) are read where it gave them; a probe answers the
/// rest (a plain recomputation, quantifiers, unknowns).
fn judged(cx: &Cx<'_>) -> Vec<(Asserted, Vec<String>)> {
    let mut probe: Option<Probe<'_>> = None;
    let mut out = Vec::new();
    let answered = &cx.rc.thoughts;
    for (step, pos) in steps(cx, &[Kind::Thought]) {
        let ev = cx.log.events.load(pos as usize);
        let Some(Body::Thought(th)) = body_of(&ev) else {
            continue;
        };
        if th.asserts.is_empty() {
            continue;
        }
        let id = ev
            .as_deref()
            .and_then(|e| e.id.as_deref())
            .map(str::to_string);
        let asserted = |index: usize, outcome: Outcome| Asserted {
            step,
            event: pos,
            id: id.clone(),
            text: th.asserts[index].to_string(),
            outcome,
        };
        let given = answered
            .binary_search_by_key(&step, |t: &ThoughtCheck| t.step)
            .ok()
            .and_then(|i| answered[i].judged.as_ref());
        if let Some(given) = given {
            for a in given {
                out.push((asserted(a.index as usize, a.outcome), a.conflict.clone()));
            }
            continue;
        }
        let Ok(p) = probe_at(&mut probe, cx, step) else {
            return out;
        };
        if !p.is_consistent().unwrap_or(false) {
            continue;
        }
        for (index, text) in th.asserts.iter().enumerate() {
            let Ok(f) = parse(text) else { continue };
            let Ok(outcome) = p.theta(&f) else { continue };
            let conflict = if outcome == Outcome::Contradiction {
                conflict_with(p, &f)
            } else {
                Vec::new()
            };
            out.push((asserted(index, outcome), conflict));
        }
    }
    out
}

/// `thought-contradicts-sigma`.
pub(super) fn contradicts_sigma(cx: &mut Cx<'_>) {
    let found: Vec<Finding> = judged(cx)
        .into_iter()
        .filter(|(a, _)| a.outcome == Outcome::Contradiction)
        .map(|(a, conflict)| {
            let norms: Vec<String> = conflict
                .iter()
                .filter(|id| is_norm(cx, id, a.step))
                .cloned()
                .collect();
            let against = if norms.is_empty() {
                String::new()
            } else {
                format!(" It goes against the norm {}.", norms.join(", "))
            };
            cx.finding(
                Code::ThoughtContradictsSigma,
                a.step,
                a.event,
                format!(
                    "A thought asserts {}, which Σ contradicts: {} entails its negation.{against}",
                    a.text,
                    list(&conflict)
                ),
            )
            .ids(conflict.iter().cloned())
            .formulas([a.text.clone()])
            .with("recomputed", "contradiction")
            .with("conflict", &conflict)
            .with("norms", &norms)
        })
        .collect();
    for f in found {
        cx.push(f);
    }
}

/// Whether the belief `id` held at step `t` was announced as a norm.
fn is_norm(cx: &Cx<'_>, id: &str, t: u32) -> bool {
    let Some(idx) = cx.ids().active(id, t) else {
        return false;
    };
    let ev = cx
        .log
        .events
        .load(cx.tl.beliefs()[idx as usize].event as usize);
    matches!(body_of(&ev), Some(Body::Announce(a)) if a.role == crate::trace::event::Role::Norm)
}

/// `{a, b}` for a message, or "beliefs of Σ" when the conflict could not be extracted.
fn list(ids: &[String]) -> String {
    if ids.is_empty() {
        return "beliefs of Σ".to_string();
    }
    format!("{{{}}}", ids.join(", "))
}

/// What a later event reasons from: the ids its `because` cites, and the formulas it uses as
/// premises (normalized): a cited text that is no belief's id, read as a formula; a step's
/// `inputs` and its tool calls' `args`, read as value atoms.
struct Premises {
    step: u32,
    event: u32,
    ids: Vec<String>,
    formulas: Vec<String>,
}

/// The normalized text of a formula, if it parses.
fn norm(text: &str) -> Option<String> {
    parse(text).ok().map(|f| normalized(&f))
}

/// The premises of the session's events after step `after`, in step order.
fn premises_after(cx: &Cx<'_>, after: u32) -> Vec<Premises> {
    let cited = cx
        .citations()
        .iter()
        .filter(|c| c.step > after)
        .map(|c| Premises {
            step: c.step,
            event: c.event,
            ids: c.cited.iter().map(|x| x.id.to_string()).collect(),
            formulas: c
                .cited
                .iter()
                .filter(|x| !x.held)
                .filter_map(|x| norm(&x.id))
                .collect(),
        });
    let used = steps(cx, &[Kind::Step])
        .into_iter()
        .filter(|&(step, _)| step > after)
        .filter_map(|(step, pos)| {
            let ev = cx.log.events.load(pos as usize);
            let Some(Body::Step(s)) = body_of(&ev) else {
                return None;
            };
            let inputs = s.inputs.iter().flat_map(|m| m.iter());
            let args = s.tool_calls.iter().flat_map(|c| match c.args.as_deref() {
                Some(serde_json::Value::Object(m)) => m.iter().collect::<Vec<_>>(),
                _ => Vec::new(),
            });
            let formulas: Vec<String> = inputs
                .chain(args)
                .filter_map(|(k, v)| norm(&super::rationality::value_formula(k, v)))
                .collect();
            (!formulas.is_empty()).then_some(Premises {
                step,
                event: pos,
                ids: Vec::new(),
                formulas,
            })
        });
    // Two lists in step order, one event a step: merged in step order.
    let mut out: Vec<Premises> = cited.chain(used).collect();
    out.sort_by_key(|p| p.step);
    out
}

/// `unsupported-thought-premise`.
pub(super) fn unsupported_premise(cx: &mut Cx<'_>) {
    let newinfo: Vec<Asserted> = judged(cx)
        .into_iter()
        .map(|(a, _)| a)
        .filter(|a| a.outcome == Outcome::NewInfo)
        .collect();
    let Some(first) = newinfo.first().map(|a| a.step) else {
        return;
    };
    let uses = premises_after(cx, first);
    // The uses (in step order) citing each id and each formula: the first use after a
    // thought is a bisection, where a scan of every later use for every thought grew with the
    // session squared.
    let mut citing: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut using: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, p) in uses.iter().enumerate() {
        for (map, keys) in [(&mut citing, &p.ids), (&mut using, &p.formulas)] {
            for key in keys {
                let list = map.entry(key.as_str()).or_default();
                if list.last() != Some(&k) {
                    list.push(k);
                }
            }
        }
    }
    let first_after = |list: Option<&Vec<usize>>, step: u32| {
        let list = list?;
        list.get(list.partition_point(|&k| uses[k].step <= step))
            .copied()
    };
    // One finding per thought formula, at its first use as a premise.
    let mut reported: HashMap<(u32, String), ()> = HashMap::new();
    let mut found = Vec::new();
    for a in &newinfo {
        let text = norm(&a.text);
        let by_id =
            a.id.as_deref()
                .and_then(|id| first_after(citing.get(id), a.step));
        let by_text = text
            .as_deref()
            .and_then(|t| first_after(using.get(t), a.step));
        let use_ = by_id.into_iter().chain(by_text).min().map(|k| &uses[k]);
        let Some(Premises {
            step: at, event, ..
        }) = use_
        else {
            continue;
        };
        if reported.insert((a.event, a.text.clone()), ()).is_some() {
            continue;
        }
        found.push(
            cx.finding(
                Code::UnsupportedThoughtPremise,
                *at,
                *event,
                format!(
                    "A thought at step {} asserted {}, which Σ did not entail there, and this \
                     event cites it as a premise.",
                    a.step, a.text
                ),
            )
            .formulas([a.text.clone()])
            .ids(a.id.clone())
            .with("thought_step", a.step)
            .with("recomputed", "newinfo")
            .with("cited_at", json!(at)),
        );
    }
    for f in found {
        cx.push(f);
    }
}
