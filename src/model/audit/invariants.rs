//! Seed 001's invariants on what the agent admits into Σ (issue 29, item 2).
//!
//! - **inference-without-because**: a fact whose `source` says it was inferred (`inference`,
//!   `inferred`, `derived`, `deduced`, `reasoning`, or one of them followed by `:...`)
//!   announced with no `because`: seed 001 keeps
//!   the record of how a fact was derived, and an inference without premises is an assertion
//!   nobody can check. An `assumption` needs no premises. (A `because` whose premises later
//!   leave Σ is `unsupported-derivation`'s case.)
//! - **norm-violated**: after an announcement Σ is inconsistent and a minimal conflict holds
//!   exactly one norm: the announced facts violate that norm (named in the finding).
//! - **norms-conflict**: a minimal conflict holds two or more norms: the norms cannot all be
//!   kept together with (or without) the facts.
//!
//! Norms are never given up (`norm-retracted` reports one that is); these two say which norm
//! a contradiction is about. One finding per conflict, at the first step it appears.

use std::collections::BTreeSet;

use super::{Code, Cx, Finding};
use crate::trace::event::{Body, Role, body_of};

/// Whether a `source` says the belief was inferred by the agent.
pub(super) fn is_inference(source: &str) -> bool {
    let s = source.trim().to_ascii_lowercase();
    [
        "inference",
        "inferred",
        "derived",
        "derivation",
        "deduction",
        "deduced",
        "reasoning",
    ]
    .iter()
    .any(|k| s == *k || s.starts_with(&format!("{k}:")))
}

/// `inference-without-because`.
pub(super) fn inference_without_because(cx: &mut Cx<'_>) {
    let mut found = Vec::new();
    for (i, r) in cx.tl.beliefs().iter().enumerate() {
        if cx.tl.is_ground(i as u32) {
            continue;
        }
        let ev = cx.log.events.load(r.event as usize);
        let Some(Body::Announce(a)) = body_of(&ev) else {
            continue;
        };
        let Some(source) = a.source.as_deref() else {
            continue;
        };
        if a.role != Role::Fact || !a.because.is_empty() || !is_inference(source) {
            continue;
        }
        found.push(
            cx.finding(
                Code::InferenceWithoutBecause,
                r.announced,
                r.event,
                format!(
                    "{} ({}) is announced as an inference (source {source}) but cites no \
                     premises (`because`) and is not an assumption.",
                    r.id, a.formula
                ),
            )
            .ids([r.id.to_string()])
            .formulas([a.formula.to_string()])
            .with("source", source),
        );
    }
    for f in found {
        cx.push(f);
    }
}

/// The role of the record with `id` active at `t`, as the trace announced it.
fn role_at(cx: &Cx<'_>, id: &str, t: u32) -> Option<Role> {
    let beliefs = cx.tl.beliefs();
    let idx = cx.ids().active(id, t)?;
    if cx.tl.is_ground(idx) {
        return Some(Role::Fact);
    }
    let ev = cx.log.events.load(beliefs[idx as usize].event as usize);
    match body_of(&ev) {
        Some(Body::Announce(a)) => Some(a.role),
        _ => None,
    }
}

/// A minimal conflict of Σ found after an announcement, split by role.
struct NormConflict {
    step: u32,
    event: u32,
    norms: Vec<String>,
    others: Vec<String>,
}

/// Every distinct minimal conflict holding a norm, at the first announcement after which Σ
/// has it. The conflicts are the recomputation's (a minimal conflict after each announcement
/// that leaves Σ inconsistent), so no solver question is asked here.
fn norm_conflicts(cx: &Cx<'_>) -> Vec<NormConflict> {
    let mut seen: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut out = Vec::new();
    for a in &cx.rc.announces {
        let Ok(res) = &a.result else { continue };
        if res.consistent_after || res.conflict.is_empty() {
            continue;
        }
        let mut key: Vec<String> = res.conflict.to_vec();
        key.sort();
        if seen.contains(&key) {
            continue;
        }
        let (norms, others): (Vec<String>, Vec<String>) = res
            .conflict
            .iter()
            .cloned()
            .partition(|id| role_at(cx, id, a.step) == Some(Role::Norm));
        seen.insert(key);
        if norms.is_empty() {
            continue;
        }
        out.push(NormConflict {
            step: a.step,
            event: a.event,
            norms,
            others,
        });
    }
    out
}

/// `{a, b}` for a message.
fn braced(ids: &[String]) -> String {
    format!("{{{}}}", ids.join(", "))
}

/// `norm-violated`.
pub(super) fn norm_violated(cx: &mut Cx<'_>) {
    let found: Vec<Finding> = norm_conflicts(cx)
        .into_iter()
        .filter(|c| c.norms.len() == 1 && !c.others.is_empty())
        .map(|c| {
            let norm = &c.norms[0];
            cx.finding(
                Code::NormViolated,
                c.step,
                c.event,
                format!(
                    "The norm {norm} is violated: it is inconsistent with {}.",
                    braced(&c.others)
                ),
            )
            .ids(std::iter::once(norm.clone()).chain(c.others.iter().cloned()))
            .with("norm", norm.as_str())
            .with("violated_by", &c.others)
        })
        .collect();
    for f in found {
        cx.push(f);
    }
}

/// `norms-conflict`.
pub(super) fn norms_conflict(cx: &mut Cx<'_>) {
    let found: Vec<Finding> = norm_conflicts(cx)
        .into_iter()
        .filter(|c| c.norms.len() >= 2)
        .map(|c| {
            let with = if c.others.is_empty() {
                String::new()
            } else {
                format!(" given {}", braced(&c.others))
            };
            cx.finding(
                Code::NormsConflict,
                c.step,
                c.event,
                format!(
                    "The norms {} cannot all be kept{with}: together they are inconsistent.",
                    braced(&c.norms)
                ),
            )
            .ids(c.norms.iter().chain(&c.others).cloned())
            .with("norms", &c.norms)
            .with("facts", &c.others)
        })
        .collect();
    for f in found {
        cx.push(f);
    }
}
