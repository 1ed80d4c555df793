//! Seed 000's inconsistency log: every announcement that contradicted Σ, with what resolved
//! it.
//!
//! The paper's `KnowledgeBase.update` appends `(proposition, existing, announcement)` to
//! `inconsistencies` whenever a new fact contradicts a stored one, and keeps both; resolving
//! is left to a later step ("invoke revision protocol"). doxascope's log is the same list
//! made exact by the solver: one entry per `announce` whose gate Θ(Σ, φ) was `contradiction`
//! (the recomputation's verdict, not the agent's claim), with the minimal conflict it met, and
//! the first later event after which Σ is consistent again: the revision that settled it (its
//! policy and what it gave up), a retraction, or an announcement that overwrote a belief of
//! the conflict. An entry nothing resolved by the end is open. It is read from one
//! [`Recomputed`] (the audit's walk: no solve of its own), so it is the same in the TUI's
//! retractions pane and in `export --format json`.

use serde_json::{Value, json};

use super::recompute::Recomputed;
use super::timeline::Timeline;
use crate::logic::engine::Outcome;
use crate::trace::TraceLog;
use crate::trace::event::Body;

/// How Σ became consistent again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolvedBy {
    /// A `revise` (its policy as written), once its retractions were applied.
    Revision {
        /// The policy the revise names.
        policy: Option<String>,
    },
    /// A `retract` outside any revision.
    Retraction,
    /// An announcement that overwrote a belief of the conflict.
    Overwrite,
}

/// What made Σ consistent again after a contradiction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The step after which Σ is consistent again.
    pub step: u32,
    /// The event: the `revise`, the `retract` or the `announce`.
    pub event: u32,
    /// What kind of event it was.
    pub by: ResolvedBy,
    /// The beliefs it gave up (ids).
    pub retracted: Vec<String>,
}

/// One contradiction announced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inconsistency {
    /// The step of the `announce`.
    pub step: u32,
    /// Its event position.
    pub event: u32,
    /// The announced belief's id.
    pub id: String,
    /// Its formula, as written.
    pub formula: String,
    /// Whether Σ was consistent just before (`false`: it already held a contradiction).
    pub consistent_before: bool,
    /// A minimal conflicting subset of Σ after the announcement (ids), when computed.
    pub conflict: Vec<String>,
    /// What resolved it, `None` while nothing has.
    pub resolution: Option<Resolution>,
}

impl Inconsistency {
    /// The resolution as of step `t` (`None` when it comes later).
    pub fn resolved_by(&self, t: u32) -> Option<&Resolution> {
        self.resolution.as_ref().filter(|r| r.step <= t)
    }

    /// The entry as JSON, as of step `t`.
    pub fn to_json(&self, t: u32) -> Value {
        let resolution = self.resolved_by(t).map(|r| {
            let (by, policy) = match &r.by {
                ResolvedBy::Revision { policy } => ("revision", policy.clone()),
                ResolvedBy::Retraction => ("retraction", None),
                ResolvedBy::Overwrite => ("overwrite", None),
            };
            json!({"step": r.step, "by": by, "policy": policy, "retracted": r.retracted})
        });
        json!({
            "step": self.step,
            "id": self.id,
            "formula": self.formula,
            "consistent_before": self.consistent_before,
            "conflict": self.conflict,
            "resolved": resolution,
        })
    }
}

/// The inconsistency log of one session (see the module docs), entries in step order.
pub fn log(tl: &Timeline, trace: &TraceLog, rc: &Recomputed) -> Vec<Inconsistency> {
    // Every moment Σ is known to become consistent again, in step order.
    let mut back: Vec<Resolution> = Vec::new();
    for rv in &rc.revisions {
        if matches!(rv.after, Ok((true, _))) {
            let policy = match trace.events.get(rv.event as usize).map(|e| &e.body) {
                Some(Body::Revise(r)) => r.policy.as_ref().map(|p| p.to_string()),
                _ => None,
            };
            back.push(Resolution {
                step: rv.settled_at,
                event: rv.event,
                by: ResolvedBy::Revision { policy },
                retracted: rv.retracted.iter().map(|r| r.id.clone()).collect(),
            });
        }
    }
    for r in &rc.retracts {
        if r.consistent == Ok(true) {
            let Some(pos) = tl.event_pos_at(r.step) else {
                continue;
            };
            let retracted = tl
                .beliefs()
                .iter()
                .filter(|b| b.retraction.is_some_and(|x| x.event == pos))
                .map(|b| b.id.to_string())
                .collect();
            back.push(Resolution {
                step: r.step,
                event: pos,
                by: ResolvedBy::Retraction,
                retracted,
            });
        }
    }
    let mut out: Vec<Inconsistency> = Vec::new();
    for a in &rc.announces {
        let Ok(res) = &a.result else { continue };
        if res.consistent_after {
            // An announcement can itself end a contradiction: it overwrote a belief of it.
            if !res.consistent_before {
                let retracted = tl
                    .beliefs()
                    .iter()
                    .filter(|b| b.retraction.is_some_and(|x| x.event == a.event))
                    .map(|b| b.id.to_string())
                    .collect();
                back.push(Resolution {
                    step: a.step,
                    event: a.event,
                    by: ResolvedBy::Overwrite,
                    retracted,
                });
            }
            continue;
        }
        if res.gate.theta != Outcome::Contradiction {
            continue;
        }
        let formula = match trace.events.get(a.event as usize).map(|e| &e.body) {
            Some(Body::Announce(x)) => x.formula.to_string(),
            _ => String::new(),
        };
        out.push(Inconsistency {
            step: a.step,
            event: a.event,
            id: a.id.clone(),
            formula,
            consistent_before: res.consistent_before,
            conflict: res.conflict.to_vec(),
            resolution: None,
        });
    }
    back.sort_by_key(|r| (r.step, r.event));
    for e in &mut out {
        // The first return to consistency after the announcement. A revision settled at the
        // announcement's own step cannot be about it (its trigger came before).
        e.resolution = back.iter().find(|r| r.step > e.step).cloned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Model, RecomputeOptions};

    fn log_of(lines: &[&str]) -> Vec<Inconsistency> {
        let text = lines.join("\n") + "\n";
        let m = Model::from_bytes("i.jsonl", text.as_bytes());
        let tl = m.timeline("i.jsonl").expect("session");
        let rc = m
            .recompute("i.jsonl", &RecomputeOptions::default())
            .expect("recomputed");
        log(tl, m.log(), &rc)
    }

    #[test]
    fn every_contradiction_with_what_ended_it() {
        let l = log_of(&[
            r#"{"kind":"announce","id":"a","formula":"p"}"#,
            r#"{"kind":"announce","id":"b","formula":"!p"}"#,
            // Another contradiction while Σ is inconsistent: logged, not the first's cause.
            r#"{"kind":"announce","id":"c","formula":"!p & q"}"#,
            r#"{"kind":"retract","target":"b"}"#,
            r#"{"kind":"retract","target":"c"}"#,
            // Overwritten: `e` announced again with another formula ends the conflict.
            r#"{"kind":"announce","id":"d","formula":"!r"}"#,
            r#"{"kind":"announce","id":"e","formula":"r"}"#,
            r#"{"kind":"announce","id":"e","formula":"s"}"#,
            // And one nothing resolves.
            r#"{"kind":"announce","id":"f","formula":"!s"}"#,
        ]);
        type Row<'a> = (u32, &'a str, bool, Option<(u32, &'a ResolvedBy)>);
        let got: Vec<Row<'_>> = l
            .iter()
            .map(|e| {
                (
                    e.step,
                    e.id.as_str(),
                    e.consistent_before,
                    e.resolution.as_ref().map(|r| (r.step, &r.by)),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (2, "b", true, Some((5, &ResolvedBy::Retraction))),
                (3, "c", false, Some((5, &ResolvedBy::Retraction))),
                (7, "e", true, Some((8, &ResolvedBy::Overwrite))),
                (9, "f", true, None),
            ]
        );
        assert_eq!(l[0].conflict.len(), 2);
        assert_eq!(
            l[0].resolution.as_ref().map(|r| r.retracted.clone()),
            Some(vec!["c".to_string()])
        );
        assert!(l[0].resolved_by(4).is_none());
        assert_eq!(l[0].to_json(5)["resolved"]["by"], "retraction");
    }
}
