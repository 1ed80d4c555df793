//! The hand-issued layer: a log of what the commands typed at the prompt *did*, not a script
//! to run again.
//!
//! Each [`HandEntry`] keeps the command, the policy in force when it ran, the step Σ was at,
//! and its effect: whether the formula entered Σ and which beliefs the policy retracted. Σ at
//! any step is the trace's Σ with those effects applied in order ([`apply`]): no solver runs
//! and no policy decides again, so changing the policy, moving in time or undoing a command
//! never rewrites what an earlier command did. A rejected announcement has no effect on Σ.
//!
//! [`to_jsonl`] writes Σ and the layer as a self-contained trace: the trace's beliefs at the
//! step as `announce` events, then for each command the events an agent would have written
//! for it (the gate's `verify`, the `announce` when it was applied, the policy's `revise` and
//! its `retract`s, a hand `retract`), so that `doxascope audit` of the saved file replays to
//! the same Σ the REPL holds.

use serde_json::{Value, json};

use crate::logic::engine::{BeliefSpec, Outcome};
use crate::logic::revise::Policy;

use super::TraceBelief;
use super::reply::role_name;

/// What a hand-issued command was.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HandOp {
    /// `announce φ`, with the belief it would add.
    Announce {
        /// The belief (id, formula, role, confidence, step).
        spec: BeliefSpec,
        /// Its source.
        source: String,
    },
    /// `retract ID`.
    Retract {
        /// The id retracted.
        id: String,
    },
}

/// One command of the layer and what it did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HandEntry {
    /// The command.
    pub op: HandOp,
    /// The policy in force when it ran.
    pub policy: Policy,
    /// The step Σ was at when it ran.
    pub step: u64,
    /// Whether the formula entered Σ (announce) or the belief left it (retract).
    pub applied: bool,
    /// Ids the policy retracted (announce).
    pub retracted: Vec<String>,
    /// Θ(Σ, φ) before the announcement.
    pub outcome: Option<Outcome>,
}

impl HandEntry {
    /// The command, described for `undo`.
    pub fn describe(&self) -> String {
        match &self.op {
            HandOp::Announce { spec, .. } => {
                let mut s = format!("announce {}", spec.formula);
                if !self.applied {
                    s.push_str(" (which was not applied)");
                }
                if !self.retracted.is_empty() {
                    s.push_str(&format!(
                        ", restoring {} retracted by {}",
                        self.retracted.join(", "),
                        self.policy.as_str()
                    ));
                }
                s
            }
            HandOp::Retract { id } if self.retracted.is_empty() => format!("retract {id}"),
            HandOp::Retract { id } => {
                format!("retract --cascade {id} ({})", self.retracted.join(", "))
            }
        }
    }
}

/// A belief of the REPL's Σ: a trace belief or one the layer added.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Held {
    /// The belief.
    pub belief: TraceBelief,
    /// Whether the hand-issued layer added it.
    pub hand: bool,
    /// For hand beliefs, the index of the entry that added it (recency among the layer's
    /// beliefs of one step).
    pub order: usize,
}

/// The trace's Σ with the layer's effects applied in order, in the order the engine is
/// given them: by step, the trace's beliefs before the layer's at the same step, and the
/// layer's in command order. The order is part of Σ: recency policies read it.
pub(crate) fn apply(base: Vec<TraceBelief>, entries: &[HandEntry]) -> Vec<Held> {
    let mut held: Vec<Held> = base
        .into_iter()
        .map(|belief| Held {
            belief,
            hand: false,
            order: 0,
        })
        .collect();
    for (k, e) in entries.iter().enumerate() {
        match &e.op {
            HandOp::Announce { spec, source } => {
                if !e.retracted.is_empty() {
                    held.retain(|h| !e.retracted.contains(&h.belief.id));
                }
                if e.applied {
                    held.retain(|h| h.belief.id != spec.id);
                    held.push(Held {
                        belief: TraceBelief {
                            id: spec.id.clone(),
                            formula: (*spec.formula).clone(),
                            role: spec.role,
                            source: source.clone(),
                            confidence: spec.confidence,
                            step: spec.step,
                            because: Vec::new(),
                        },
                        hand: true,
                        order: k,
                    });
                }
            }
            HandOp::Retract { id } => {
                if e.applied {
                    held.retain(|h| h.belief.id != *id && !e.retracted.contains(&h.belief.id));
                }
            }
        }
    }
    held.sort_by_key(|h| (h.belief.step, h.hand, h.order));
    held
}

/// Σ at the fork (`base`) and the layer as a self-contained trace in JSONL (see the module
/// docs). Returns the text and the number of events.
pub(crate) fn to_jsonl(
    session: &str,
    step: u64,
    base: &[TraceBelief],
    entries: &[HandEntry],
) -> (String, usize) {
    let mut events: Vec<Value> = Vec::new();
    events.push(json!({
        "kind": "log",
        "level": "info",
        "message": format!(
            "Σ of session {session} at step {step} ({} belief(s)), then {} hand-issued command(s)",
            base.len(),
            entries.len()
        ),
    }));
    for b in base {
        events.push(announce_event(
            &b.id,
            &b.formula.to_string(),
            role_name(b.role),
            &b.source,
            b.confidence,
        ));
    }
    let mut active: Vec<String> = base.iter().map(|b| b.id.clone()).collect();
    for e in entries {
        match &e.op {
            HandOp::Announce { spec, source } => {
                // The gate of an announcement that replaces a belief of the same id was asked
                // of Σ without that belief (seed 000's update), not of the Σ the saved file
                // holds at this point: no claim is written for it.
                let replaces = active.contains(&spec.id);
                if let Some(outcome) = e.outcome.filter(|_| !replaces) {
                    events.push(json!({
                        "kind": "verify",
                        "formula": spec.formula.to_string(),
                        "outcome": outcome.as_str(),
                        "method": "hand",
                        "detail": format!("gate of a hand-issued announcement, policy {}", e.policy.as_str()),
                    }));
                }
                if e.applied {
                    events.push(announce_event(
                        &spec.id,
                        &spec.formula.to_string(),
                        role_name(spec.role),
                        source,
                        spec.confidence,
                    ));
                    active.retain(|a| *a != spec.id);
                    active.push(spec.id.clone());
                }
                let dropped: Vec<&String> = e
                    .retracted
                    .iter()
                    .filter(|id| active.contains(id))
                    .collect();
                if !dropped.is_empty() {
                    events.push(json!({
                        "kind": "revise",
                        "trigger": if e.applied { spec.id.clone() } else { spec.formula.to_string() },
                        "retracted": dropped,
                        "policy": e.policy.as_str(),
                    }));
                    for id in &dropped {
                        events.push(json!({
                            "kind": "retract",
                            "target": id,
                            "by": "revision",
                            "reason": format!("policy {}", e.policy.as_str()),
                        }));
                    }
                    active.retain(|a| !e.retracted.contains(a));
                }
            }
            HandOp::Retract { id } => {
                if e.applied && active.contains(id) {
                    events.push(json!({"kind": "retract", "target": id, "by": "user"}));
                    active.retain(|a| a != id);
                }
                // `retract --cascade`: the beliefs derived from it that fell with it.
                for d in &e.retracted {
                    if active.contains(d) {
                        events.push(json!({
                            "kind": "retract",
                            "target": d,
                            "by": "user",
                            "reason": format!("derived from {id}, which was retracted"),
                        }));
                        active.retain(|a| a != d);
                    }
                }
            }
        }
    }
    let mut out = String::new();
    for (i, mut ev) in events.into_iter().enumerate() {
        ev["v"] = json!(1);
        ev["seq"] = json!(i + 1);
        ev["session"] = json!(session);
        out.push_str(&ev.to_string());
        out.push('\n');
    }
    let n = out.lines().count();
    (out, n)
}

fn announce_event(id: &str, formula: &str, role: &str, source: &str, confidence: f64) -> Value {
    let mut ev = json!({
        "kind": "announce",
        "id": id,
        "formula": formula,
        "role": role,
        "confidence": confidence,
    });
    if !source.is_empty() {
        ev["source"] = json!(source);
    }
    ev
}
