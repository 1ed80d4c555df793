//! What a REPL command answers: [`Reply`] and [`ReplError`], and how both render, as text
//! for a person and as the JSON objects of `doxascope repl --json`. Every string from a trace
//! goes through the sanitizer in [`Reply::to_text`]; JSON carries it escaped by serde.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::logic::engine::{Entails, Outcome, Role};
use crate::logic::revise::Policy;
use crate::sanitize::sanitize;

use super::command::CommandError;

/// A belief as shown in results: contract §4's `{id, formula, step, source}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The belief id.
    pub id: String,
    /// The formula, printed.
    pub formula: String,
    /// The step that announced it.
    pub step: u64,
    /// Its source.
    pub source: String,
    /// Its role.
    pub role: Role,
    /// Its confidence.
    pub confidence: f64,
    /// Whether it comes from the hand-issued layer rather than the trace.
    pub hand: bool,
}

/// An event of the trace as results name it: its kind, the belief id it names, where it was
/// read.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRef {
    /// The step it takes effect at.
    pub step: u64,
    /// Its kind (`announce`, `retract`, ...).
    pub kind: String,
    /// The belief id it names (an announcement's id, a retraction's target).
    pub id: Option<String>,
    /// The file (or stream) it was read from.
    pub file: String,
    /// Its line there.
    pub line: u64,
}

impl EventRef {
    fn to_json(&self) -> Value {
        json!({"step": self.step, "kind": self.kind, "id": self.id, "file": self.file, "line": self.line})
    }

    fn to_text(&self) -> String {
        let id = self
            .id
            .as_deref()
            .map(|i| format!(" {}", sanitize(i)))
            .unwrap_or_default();
        format!(
            "{}{id} ({}:{})",
            sanitize(&self.kind),
            sanitize(&self.file),
            self.line
        )
    }
}

/// One row of `history`: a step at which φ changed.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryLine {
    /// The step.
    pub step: u64,
    /// The event that caused the change (none at step 0).
    pub event: Option<EventRef>,
    /// What changed: `status`, `announced`, `retracted`, `re-derived`.
    pub changes: Vec<&'static str>,
    /// φ's status from this step on: `entailed`, `contradicted`, `unknown`, `inconsistent`
    /// (Σ entails everything) or `not-checkable`.
    pub status: &'static str,
    /// Its status just before.
    pub previous: &'static str,
    /// Why the status is not checkable, when it is not.
    pub reason: Option<String>,
    /// The belief with φ's formula (or the id asked about) announced or retracted here.
    pub belief: Option<String>,
    /// Who retracted it (`agent`, `revision`, `user`, `unspecified`, `superseded`,
    /// `reannounced`).
    pub by: Option<&'static str>,
    /// For a row that starts an entailed stretch or re-derives φ: a minimal support, or why
    /// none was found within budget.
    pub support: Option<Result<Vec<Member>, String>>,
}

/// A key's life, for `history KEY` on a ground belief (`model::keylife`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeyLifeView {
    /// The key.
    pub key: String,
    /// Every value it held, in order of writing.
    pub writes: Vec<KeyWriteLine>,
    /// The plan steps that read it: (step, `S3 of plan-2`).
    pub reads: Vec<(u64, String)>,
}

/// Where `continue` stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Stop {
    /// The step it started from.
    pub from: u64,
    /// Whether it travelled backwards.
    pub back: bool,
    /// The step it stopped at; `None` when nothing triggers in that direction (it stays).
    pub step: Option<u64>,
    /// The trace's last step.
    pub last: u64,
    /// What triggered there, each naming the point and the event.
    pub hits: Vec<String>,
}

/// One value of a key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyWriteLine {
    /// The step it was written at.
    pub step: u64,
    /// The value atom.
    pub formula: String,
    /// The belief's source.
    pub source: Option<String>,
    /// Who wrote it (`belief`, `step S1 of plan-2: summary`).
    pub writer: String,
    /// When and how the value ended (`superseded`: overwritten, `reannounced`: written again
    /// with the same value, or who retracted it).
    pub ended: Option<(u64, &'static str)>,
}

/// What answering `history` cost (the index is built once per session and reused).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryCostView {
    /// Change points of Σ in the session.
    pub points: usize,
    /// Consistency solves the index needed.
    pub index_solves: u64,
    /// Milliseconds the index took to build.
    pub index_ms: f64,
    /// Whether the index was reused from an earlier question.
    pub index_reused: bool,
    /// Milliseconds the history itself took.
    pub ms: f64,
    /// Change points that touched φ's components.
    pub relevant: usize,
    /// Entailment questions asked.
    pub checks: u64,
    /// Minimal supports searched.
    pub supports: u64,
    /// Whether only φ's components were walked.
    pub pruned: bool,
}

/// A belief `diff` added or removed.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffItem {
    /// The belief.
    pub member: Member,
    /// For an added belief: whether Σ at the first step already entailed it; for a removed
    /// one: whether Σ at the second step still entails it. `None` when that Σ is
    /// inconsistent (it entails everything) or the question was not checkable.
    pub entailed: Option<bool>,
    /// For a removed belief that left between the two steps: how.
    pub left: Option<LeftInfo>,
}

/// How a belief left Σ.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftInfo {
    /// The step it left at.
    pub step: u64,
    /// Who ended it (`agent`, `revision`, `user`, `unspecified`, `superseded`,
    /// `reannounced`, `hand` for the hand-issued layer).
    pub by: String,
    /// The `reason` the retraction gave.
    pub reason: Option<String>,
    /// The event that ended it.
    pub event: Option<EventRef>,
}

/// A belief id held at both steps of a `diff` with another record.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    /// The belief at the first step.
    pub before: Member,
    /// At the second.
    pub after: Member,
}

/// A `revise` event as `diff` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionLine {
    /// Its step.
    pub step: u64,
    /// Its trigger (id or formula).
    pub trigger: Option<String>,
    /// The ids it gave up.
    pub retracted: Vec<String>,
    /// The policy it names.
    pub policy: Option<String>,
}

/// A verdict `whatif` found changed.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictLine {
    /// The event.
    pub event: Option<EventRef>,
    /// `verify`, `query`, `answer` or `turn`.
    pub kind: &'static str,
    /// The formula asked about.
    pub formula: String,
    /// What the agent claimed or replied.
    pub claimed: Option<String>,
    /// The verdict on the real Σ.
    pub real: String,
    /// On the alternative Σ.
    pub alt: String,
}

/// A repair `whatif` lists: the model's own (the REPL adds nothing to it).
pub use crate::model::whatif::Repair as RepairLine;

/// An announcement the real run or the alternative policy revised, as `whatif` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionLine {
    /// Its step.
    pub step: u64,
    /// The belief announced.
    pub id: String,
    /// Its formula.
    pub formula: String,
    /// What the real run gave up for it.
    pub real_retracted: Vec<String>,
    /// What the alternative did: (applied, retracted, fallback), or why it is not known.
    pub alt: Result<(bool, Vec<String>, bool), String>,
    /// The minimal repairs (with `complete`), or why they are not known.
    pub repairs: Result<(Vec<RepairLine>, bool), String>,
    /// Σ was inconsistent before the announcement.
    pub sigma_was_inconsistent: bool,
}

/// A bookmark or note as the REPL shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteLine {
    /// Its number.
    pub id: u64,
    /// The step it marks.
    pub step: u64,
    /// The belief it marks, if any.
    pub belief: Option<String>,
    /// Its text (empty: a bookmark).
    pub text: String,
    /// When it was made.
    pub created: String,
}

impl NoteLine {
    fn to_json(&self) -> Value {
        json!({"id": self.id, "step": self.step, "belief": self.belief, "text": self.text,
               "bookmark": self.text.is_empty(), "created": self.created})
    }

    fn to_text(&self) -> String {
        let on = self
            .belief
            .as_deref()
            .map(|b| format!(" belief {}", sanitize(b)))
            .unwrap_or_default();
        let text = if self.text.is_empty() {
            "(bookmark)".to_string()
        } else {
            sanitize(&self.text)
        };
        format!("#{:<3} step {:>5}{on}: {text}", self.id, self.step)
    }
}

/// A ground belief (a memory block, a store key) that differs between two steps: written,
/// rewritten or retracted in between.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroundChange {
    /// The ground belief's name.
    pub name: String,
    /// Its value at the first step (`None`: not held).
    pub before: Option<String>,
    /// Its value at the second step (`None`: not held).
    pub after: Option<String>,
}

/// The result of a successful command.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `announce`
    Announce {
        /// The id the formula was announced under.
        id: String,
        /// Θ(Σ, φ) before the update.
        outcome: Outcome,
        /// Whether φ is in Σ now.
        applied: bool,
        /// Ids the policy retracted.
        retracted: Vec<String>,
        /// The minimal conflicting set, when φ contradicted Σ.
        conflict: Vec<String>,
        /// The policy applied.
        policy: Policy,
        /// Greedy fell back to the recency subset.
        fallback: bool,
        /// Norms in the conflict.
        norm_violation: Vec<String>,
        /// When Σ was already inconsistent before the announcement: a minimal conflicting
        /// subset of Σ itself (φ is not blamed for it and no policy ran); empty otherwise.
        prior_conflict: Vec<String>,
        /// Whether Σ is inconsistent afterwards (`flag`, `greedy-paper`, or an already
        /// inconsistent Σ).
        inconsistent_after: bool,
        /// When φ replaced the belief of the same id held with another role: (old, new).
        role_change: Option<(Role, Role)>,
    },
    /// `check`
    Check {
        /// Θ(Σ, φ), refined to `ungrounded` when premises were cited and do not (with the
        /// rules and norms) entail φ.
        outcome: Outcome,
        /// The plain three-way Θ(Σ, φ).
        theta: Outcome,
        /// Cited ids that are not in Σ (they count as not cited).
        missing: Vec<String>,
        /// On a contradiction with a consistent Σ: a minimal subset of Σ that φ contradicts
        /// (each member needed). Empty otherwise.
        conflict: Vec<Member>,
        /// When Σ itself is inconsistent: a minimal conflicting subset of Σ (Θ is then
        /// `contradiction` for every φ, which says nothing about φ).
        prior_conflict: Vec<Member>,
        /// With `--certificate DIR`: what was written.
        certificate: Option<Certified>,
    },
    /// `entails`
    Entails {
        /// entailed / contradicted / unknown.
        result: Entails,
        /// N(φ) when Σ is graded.
        degree: Option<f64>,
        /// Whether Σ is consistent (an inconsistent Σ entails everything).
        consistent: bool,
        /// With `--certificate DIR`: what was written.
        certificate: Option<Certified>,
    },
    /// `believes`
    Believes {
        /// The degree asked about.
        k: f64,
        /// Whether B≥k φ holds: the beliefs of confidence at least k entail φ, and k is above
        /// the inconsistency degree of Σ.
        holds: bool,
        /// N(φ), the necessity degree.
        degree: f64,
    },
    /// `dependents`
    Dependents {
        /// The id asked about.
        id: String,
        /// Beliefs citing it, directly or through other dependents, with the id each cites.
        dependents: Vec<(Member, String)>,
    },
    /// `why`
    Why {
        /// Minimal support sets.
        supports: Vec<Vec<Member>>,
        /// Whether these are all of them.
        complete: bool,
    },
    /// `whynot`
    WhyNot {
        /// An assignment satisfying Σ ∧ ¬φ, or `None` when Σ ⊨ φ.
        countermodel: Option<BTreeMap<String, bool>>,
    },
    /// `consistent`
    Consistent {
        /// Whether Σ is satisfiable.
        consistent: bool,
        /// A minimal conflicting subset when it is not.
        conflict: Vec<Member>,
    },
    /// `retract`
    Retract {
        /// The retracted id.
        id: String,
        /// With `--cascade`: the beliefs derived from it that fell with it.
        cascaded: Vec<String>,
        /// Dependents kept because Σ still entails them without the retracted premises.
        kept: Vec<String>,
        /// A warning (retracting a norm).
        warning: Option<String>,
    },
    /// `undo`
    Undo {
        /// The undone command, described.
        undone: String,
        /// Commands left in the hand-issued layer.
        hand: usize,
    },
    /// `reset`
    Reset {
        /// How many hand-issued operations were dropped.
        dropped: usize,
    },
    /// `policy`
    Policy {
        /// The policy now in force.
        policy: Policy,
    },
    /// `at`
    At {
        /// The step now inspected.
        step: u64,
        /// The last step of the trace.
        last: u64,
        /// Beliefs active at that step (trace plus layer).
        beliefs: usize,
        /// Commands of the hand-issued layer applied on top of the trace's Σ.
        hand: usize,
    },
    /// `diff`
    Diff {
        /// From step.
        a: u64,
        /// To step.
        b: u64,
        /// Beliefs active at b but not at a (by id), each with whether Σ at a already
        /// entailed it.
        added: Vec<DiffItem>,
        /// Beliefs active at a but not at b, each with how it left and whether Σ at b still
        /// entails it.
        removed: Vec<DiffItem>,
        /// Ids active at both with another formula, role or step (superseded or
        /// re-announced in between).
        changed: Vec<Changed>,
        /// Whether Σ is consistent at a and at b (or why it is not checkable).
        consistent: [Result<bool, String>; 2],
        /// The `revise` events between the two steps.
        revisions: Vec<RevisionLine>,
        /// Ground beliefs (memory) whose value differs, by name.
        ground: Vec<GroundChange>,
    },
    /// `sigma`
    Sigma {
        /// Every active belief.
        beliefs: Vec<Member>,
    },
    /// `note`
    Note {
        /// The note made.
        note: NoteLine,
        /// The file it is kept in.
        location: String,
        /// Whether that file is in the user's data directory (the trace's directory was not
        /// writable).
        in_data_dir: bool,
    },
    /// `notes`
    Notes {
        /// The session's notes by step.
        notes: Vec<NoteLine>,
        /// The file they are kept in, when there is one.
        location: Option<String>,
        /// What was wrong with that file.
        problems: Vec<String>,
    },
    /// `unnote`
    Unnote {
        /// The number removed.
        id: u64,
    },
    /// `whatif`
    WhatIf {
        /// The alternative policy.
        policy: Policy,
        /// The policy the run's `revise` events name.
        run_policy: Option<Policy>,
        /// The step the alternative decides from.
        from: u64,
        /// The step both Σs are shown at.
        at: u64,
        /// Σ at `at`, real and alternative side by side: each belief with `both`, `real`
        /// or `alternative`.
        sigma: Vec<(Member, &'static str)>,
        /// Every later verdict or answer that would have changed.
        changed: Vec<VerdictLine>,
        /// Verdicts compared.
        compared: usize,
        /// Verdicts not checkable on one side or both.
        not_checkable: usize,
        /// Every announcement either side revised, with the other repairs.
        decisions: Vec<DecisionLine>,
        /// The walk's budget ran out before this step: nothing from it on was compared.
        stopped_at: Option<u64>,
    },
    /// `history`
    History {
        /// The formula, printed.
        formula: String,
        /// The belief id asked about, when the argument named one.
        id: Option<String>,
        /// The session.
        session: String,
        /// φ's status at step 0.
        initial: &'static str,
        /// The steps at which φ changed.
        rows: Vec<HistoryLine>,
        /// What it cost.
        cost: HistoryCostView,
        /// Whether the hand-issued layer holds commands (history is about the trace alone).
        hand: usize,
        /// When the argument named a ground belief: the key's life.
        key: Option<KeyLifeView>,
    },
    /// `watch`, `break`, `unwatch`, `continue`
    Watch {
        /// The watchpoints and breakpoints set, numbered from 1 in this order.
        points: Vec<String>,
        /// For `continue`: where time travel stopped and why.
        stop: Option<Stop>,
    },
    /// `prompt`
    Prompt {
        /// Seed 001's prompt for Σ (and the question, when given).
        text: String,
    },
    /// `help`
    Help {
        /// The help text.
        text: String,
    },
    /// `save`
    Save {
        /// The file written.
        path: String,
        /// How many events it holds.
        events: usize,
    },
}

/// A command that failed. The session goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplError {
    /// The command word ("" when none was recognized).
    pub command: String,
    /// What went wrong.
    pub message: String,
    /// 1-based column in the command line, when the error has a place.
    pub column: Option<usize>,
}

impl ReplError {
    pub(crate) fn new(command: &str, message: impl Into<String>) -> Self {
        ReplError {
            command: command.to_string(),
            message: message.into(),
            column: None,
        }
    }
}

impl From<CommandError> for ReplError {
    fn from(e: CommandError) -> Self {
        ReplError {
            command: e.command,
            message: e.message,
            column: Some(e.column),
        }
    }
}

impl Reply {
    /// The contract §4 JSON object: `{"ok": true, "command": ..., ...}`.
    pub fn to_json(&self, command: &str) -> Value {
        let mut v = match self {
            Reply::Announce {
                id,
                outcome,
                applied,
                retracted,
                conflict,
                policy,
                fallback,
                norm_violation,
                prior_conflict,
                inconsistent_after,
                role_change,
            } => json!({
                "id": id, "outcome": outcome.as_str(), "applied": applied,
                "retracted": retracted, "conflict": conflict, "policy": policy.as_str(),
                "fallback": fallback, "norm_violation": norm_violation,
                "sigma_was_inconsistent": !prior_conflict.is_empty(),
                "prior_conflict": prior_conflict,
                "sigma_inconsistent": inconsistent_after,
                "role_change": role_change.map(|(from, to)| json!({
                    "from": role_name(from), "to": role_name(to),
                })),
            }),
            Reply::Check {
                outcome,
                theta,
                missing,
                conflict,
                prior_conflict,
                certificate,
            } => with_certificate(
                json!({
                    "outcome": outcome.as_str(),
                    "theta": theta.as_str(),
                    "missing_citations": missing,
                    "conflict": conflict.iter().map(member_json).collect::<Vec<_>>(),
                    "sigma_consistent": prior_conflict.is_empty(),
                    "prior_conflict": prior_conflict.iter().map(member_json).collect::<Vec<_>>(),
                }),
                certificate,
            ),
            Reply::Entails {
                result,
                degree,
                consistent,
                certificate,
            } => with_certificate(
                json!({"result": result.as_str(), "degree": degree, "sigma_consistent": consistent}),
                certificate,
            ),
            Reply::Why { supports, complete } => json!({
                "supports": supports.iter().map(|s| s.iter().map(member_json).collect::<Vec<_>>()).collect::<Vec<_>>(),
                "complete": complete,
            }),
            Reply::WhyNot { countermodel } => json!({"countermodel": countermodel}),
            Reply::Consistent {
                consistent,
                conflict,
            } => json!({
                "consistent": consistent,
                "conflict": conflict.iter().map(member_json).collect::<Vec<_>>(),
            }),
            Reply::Retract {
                id,
                cascaded,
                kept,
                warning,
            } => json!({"id": id, "cascaded": cascaded, "kept": kept, "warning": warning}),
            Reply::Believes { k, holds, degree } => {
                json!({"k": k, "holds": holds, "degree": degree})
            }
            Reply::Dependents { id, dependents } => json!({
                "id": id,
                "dependents": dependents.iter().map(|(m, cites)| {
                    let mut v = member_json(m);
                    v["cites"] = json!(cites);
                    v
                }).collect::<Vec<_>>(),
            }),
            Reply::Undo { undone, hand } => json!({"undone": undone, "hand_commands": hand}),
            Reply::Reset { dropped } => json!({"dropped": dropped}),
            Reply::Policy { policy } => json!({"policy": policy.as_str()}),
            Reply::At {
                step,
                last,
                beliefs,
                hand,
            } => {
                json!({"step": step, "last_step": last, "beliefs": beliefs, "hand_commands": hand})
            }
            Reply::Diff {
                a,
                b,
                added,
                removed,
                changed,
                consistent,
                revisions,
                ground,
            } => {
                let cons = |c: &Result<bool, String>| c.as_ref().ok().copied();
                let cons_err = |c: &Result<bool, String>| c.as_ref().err().cloned();
                let mut v = json!({
                    "from": a, "to": b,
                    "added": added.iter().map(|d| {
                        let mut v = member_json(&d.member);
                        v["already_entailed"] = json!(d.entailed);
                        v
                    }).collect::<Vec<_>>(),
                    "removed": removed.iter().map(|d| {
                        let mut v = member_json(&d.member);
                        v["still_entailed"] = json!(d.entailed);
                        v["left"] = match &d.left {
                            Some(l) => json!({
                                "step": l.step, "by": l.by, "reason": l.reason,
                                "event": l.event.as_ref().map(EventRef::to_json),
                            }),
                            None => Value::Null,
                        };
                        v
                    }).collect::<Vec<_>>(),
                    "changed": changed.iter().map(|c| json!({
                        "id": c.after.id,
                        "before": member_json(&c.before),
                        "after": member_json(&c.after),
                    })).collect::<Vec<_>>(),
                    "consistent": {
                        "from": cons(&consistent[0]), "to": cons(&consistent[1]),
                        "from_error": cons_err(&consistent[0]), "to_error": cons_err(&consistent[1]),
                    },
                    "revisions": revisions.iter().map(|r| json!({
                        "step": r.step, "trigger": r.trigger, "retracted": r.retracted,
                        "policy": r.policy,
                    })).collect::<Vec<_>>(),
                });
                if !ground.is_empty() {
                    v["ground"] = json!(
                        ground
                            .iter()
                            .map(|g| json!({"name": g.name, "before": g.before, "after": g.after}))
                            .collect::<Vec<_>>()
                    );
                }
                v
            }
            Reply::Sigma { beliefs } => json!({
                "beliefs": beliefs.iter().map(|m| {
                    let mut v = member_json(m);
                    v["role"] = json!(role_name(m.role));
                    v["confidence"] = json!(m.confidence);
                    v["layer"] = json!(if m.hand { "hand" } else { "trace" });
                    v
                }).collect::<Vec<_>>(),
            }),
            Reply::History {
                formula,
                id,
                session,
                initial,
                rows,
                cost,
                hand,
                key,
            } => json!({
                "formula": formula, "id": id, "session": session, "initial": initial,
                "rows": rows.iter().map(history_line_json).collect::<Vec<_>>(),
                "key": key.as_ref().map(key_life_json),
                "hand_commands_ignored": hand,
                "cost": {
                    "change_points": cost.points, "index_solves": cost.index_solves,
                    "index_ms": cost.index_ms, "index_reused": cost.index_reused,
                    "ms": cost.ms, "relevant_points": cost.relevant, "checks": cost.checks,
                    "supports": cost.supports, "pruned": cost.pruned,
                },
            }),
            Reply::WhatIf {
                policy,
                run_policy,
                from,
                at,
                sigma,
                changed,
                compared,
                not_checkable,
                decisions,
                stopped_at,
            } => {
                let ids = |side: &str| -> Vec<&str> {
                    sigma
                        .iter()
                        .filter(|(_, s)| *s == side)
                        .map(|(m, _)| m.id.as_str())
                        .collect()
                };
                json!({
                    "policy": policy.as_str(),
                    "run_policy": run_policy.map(Policy::as_str),
                    "from": from, "at": at,
                    "sigma": sigma.iter().map(|(m, side)| {
                        let mut v = member_json(m);
                        v["in"] = json!(side);
                        v
                    }).collect::<Vec<_>>(),
                    "only_real": ids("real"),
                    "only_alternative": ids("alternative"),
                    "changed": changed.iter().map(|c| json!({
                        "event": c.event.as_ref().map(EventRef::to_json),
                        "kind": c.kind, "formula": c.formula, "claimed": c.claimed,
                        "real": c.real, "alternative": c.alt,
                    })).collect::<Vec<_>>(),
                    "compared": compared, "not_checkable": not_checkable,
                    "stopped_at": stopped_at,
                    "decisions": decisions.iter().map(|d| {
                        let (alt, alt_err) = match &d.alt {
                            Ok((applied, retracted, fallback)) => (json!({
                                "applied": applied, "retracted": retracted, "fallback": fallback,
                            }), Value::Null),
                            Err(e) => (Value::Null, json!(e)),
                        };
                        let (repairs, complete, rep_err) = match &d.repairs {
                            Ok((rs, complete)) => (json!(rs.iter().map(|r| json!({
                                "retract": r.retract, "keeps_new": r.keeps_new, "keeps": r.keeps,
                                "real": r.real, "alternative": r.alternative,
                            })).collect::<Vec<_>>()), json!(complete), Value::Null),
                            Err(e) => (Value::Null, Value::Null, json!(e)),
                        };
                        json!({
                            "step": d.step, "id": d.id, "formula": d.formula,
                            "real_retracted": d.real_retracted,
                            "alternative": alt, "alternative_error": alt_err,
                            "repairs": repairs, "repairs_complete": complete,
                            "repairs_error": rep_err,
                            "sigma_was_inconsistent": d.sigma_was_inconsistent,
                        })
                    }).collect::<Vec<_>>(),
                })
            }
            Reply::Note {
                note,
                location,
                in_data_dir,
            } => json!({"note": note.to_json(), "location": location, "in_data_dir": in_data_dir}),
            Reply::Watch { points, stop } => json!({
                "points": points,
                "stopped": stop.as_ref().map(|st| json!({
                    "from": st.from, "back": st.back, "step": st.step, "last": st.last,
                    "hits": st.hits,
                })),
            }),
            Reply::Notes {
                notes,
                location,
                problems,
            } => json!({
                "notes": notes.iter().map(NoteLine::to_json).collect::<Vec<_>>(),
                "location": location, "problems": problems,
            }),
            Reply::Unnote { id } => json!({"removed": id}),
            Reply::Help { text } => json!({"text": text}),
            Reply::Prompt { text } => json!({"prompt": text}),
            Reply::Save { path, events } => json!({"path": path, "events": events}),
        };
        if let Value::Object(map) = &mut v {
            map.insert("ok".into(), json!(true));
            map.insert("command".into(), json!(command));
        }
        v
    }

    /// Human-readable text. Every string from a trace goes through the sanitizer here.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let line = |m: &Member| {
            format!(
                "{:<16} {}  (step {}, {}, {}{})",
                sanitize(&m.id),
                sanitize(&m.formula),
                m.step,
                role_name(m.role),
                sanitize(&m.source),
                if m.confidence < 1.0 {
                    format!(", p={:.2}", m.confidence)
                } else {
                    String::new()
                }
            )
        };
        match self {
            Reply::Announce {
                id,
                outcome,
                applied,
                retracted,
                conflict,
                policy,
                fallback,
                norm_violation,
                prior_conflict,
                inconsistent_after,
                role_change,
            } => {
                let _ = write!(out, "{}: ", outcome.as_str().to_uppercase());
                if *applied {
                    let _ = write!(out, "announced {}", sanitize(id));
                } else {
                    let _ = write!(out, "not applied ({})", policy.as_str());
                }
                if let Some((from, to)) = role_change {
                    let _ = write!(
                        out,
                        "\n  role changed: {} -> {} (the record of the same id is replaced)",
                        role_name(*from),
                        role_name(*to)
                    );
                }
                if !prior_conflict.is_empty() && *policy == Policy::GreedyPaper {
                    let _ = write!(
                        out,
                        "\n  Σ was already inconsistent (conflict: {}); Algorithm 1 as written \
                         still looks for one prior commitment whose retraction restores it",
                        sanitize(&prior_conflict.join(", "))
                    );
                } else if !prior_conflict.is_empty() {
                    let _ = write!(
                        out,
                        "\n  Σ was already inconsistent (conflict: {}); no policy ran and \
                         nothing was retracted: repair it with `retract`",
                        sanitize(&prior_conflict.join(", "))
                    );
                }
                if !conflict.is_empty() {
                    let _ = write!(out, "\n  conflict: {}", sanitize(&conflict.join(", ")));
                }
                if !retracted.is_empty() {
                    let _ = write!(
                        out,
                        "\n  retracted ({}{}): {}",
                        policy.as_str(),
                        if *fallback {
                            ", fallback to recency"
                        } else {
                            ""
                        },
                        sanitize(&retracted.join(", "))
                    );
                }
                if !norm_violation.is_empty() {
                    let _ = write!(
                        out,
                        "\n  norm violation: {}",
                        sanitize(&norm_violation.join(", "))
                    );
                }
                if *applied && *inconsistent_after && prior_conflict.is_empty() {
                    let _ = write!(
                        out,
                        "\n  Σ is inconsistent now: {} keeps the new formula{}",
                        policy.as_str(),
                        if *policy == Policy::GreedyPaper {
                            " (no single retraction restores consistency; Algorithm 1 as \
                             written neither refuses nor falls back)"
                        } else {
                            ""
                        }
                    );
                }
            }
            Reply::Check {
                outcome,
                theta,
                missing,
                conflict,
                prior_conflict,
                certificate,
            } => {
                out.push_str(&outcome.as_str().to_uppercase());
                if outcome != theta {
                    let _ = write!(
                        out,
                        " ({} by Σ, but the cited premises with the rules and norms do not entail it)",
                        theta.as_str()
                    );
                }
                if !missing.is_empty() {
                    let _ = write!(
                        out,
                        "\n  cited but not in Σ: {}",
                        sanitize(&missing.join(", "))
                    );
                }
                if !prior_conflict.is_empty() {
                    out.push_str(" (Σ itself is inconsistent; a minimal conflicting subset:)");
                    for m in prior_conflict {
                        let _ = write!(out, "\n  {}", line(m));
                    }
                } else if !conflict.is_empty() {
                    out.push_str("; φ contradicts this minimal subset of Σ:");
                    for m in conflict {
                        let _ = write!(out, "\n  {}", line(m));
                    }
                }
                if let Some(c) = certificate {
                    out.push_str(&c.text());
                }
            }
            Reply::Entails {
                result,
                degree,
                consistent,
                certificate,
            } => {
                out.push_str(result.as_str());
                if let Some(d) = degree {
                    let _ = write!(out, " (N = {d:.2})");
                }
                if !consistent {
                    out.push_str(" (Σ is inconsistent: it entails everything)");
                }
                if let Some(c) = certificate {
                    out.push_str(&c.text());
                }
            }
            Reply::Why { supports, complete } => {
                if supports.is_empty() {
                    out.push_str("not entailed: no support");
                }
                for (i, s) in supports.iter().enumerate() {
                    let _ = writeln!(out, "support {}:", i + 1);
                    for m in s {
                        let _ = writeln!(out, "  {}", line(m));
                    }
                }
                if !complete {
                    out.push_str("(more supports may exist: the search was capped)");
                }
                while out.ends_with('\n') {
                    out.pop();
                }
            }
            Reply::WhyNot { countermodel } => match countermodel {
                None => out.push_str("entailed: no countermodel"),
                Some(m) => {
                    let parts: Vec<String> = m
                        .iter()
                        .map(|(a, v)| format!("{}={}", sanitize(a), if *v { "T" } else { "F" }))
                        .collect();
                    let _ = write!(out, "countermodel: {}", parts.join(" "));
                }
            },
            Reply::Consistent {
                consistent,
                conflict,
            } => {
                if *consistent {
                    out.push_str("consistent");
                } else {
                    out.push_str("INCONSISTENT; a minimal conflicting subset:");
                    for m in conflict {
                        let _ = write!(out, "\n  {}", line(m));
                    }
                }
            }
            Reply::Retract {
                id,
                cascaded,
                kept,
                warning,
            } => {
                let _ = write!(out, "retracted {}", sanitize(id));
                if !cascaded.is_empty() {
                    let _ = write!(
                        out,
                        "\n  and what was derived from it: {}",
                        sanitize(&cascaded.join(", "))
                    );
                }
                if !kept.is_empty() {
                    let _ = write!(
                        out,
                        "\n  kept (Σ still entails them): {}",
                        sanitize(&kept.join(", "))
                    );
                }
                if let Some(w) = warning {
                    let _ = write!(out, "\n  warning: {}", sanitize(w));
                }
            }
            Reply::Believes { k, holds, degree } => {
                let _ = write!(
                    out,
                    "{}: B≥{k} φ (N(φ) = {degree:.2})",
                    if *holds { "believed" } else { "not believed" }
                );
            }
            Reply::Dependents { id, dependents } => {
                if dependents.is_empty() {
                    let _ = write!(out, "nothing in Σ cites {}", sanitize(id));
                }
                for (i, (m, cites)) in dependents.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    let _ = write!(out, "{}  (cites {})", line(m), sanitize(cites));
                }
            }
            Reply::Undo { undone, hand } => {
                let _ = write!(
                    out,
                    "undone: {} ({hand} hand-issued command(s) left)",
                    sanitize(undone)
                );
            }
            Reply::Reset { dropped } => {
                let _ = write!(out, "hand-issued layer dropped ({dropped} operations)");
            }
            Reply::Policy { policy } => {
                let _ = write!(out, "policy: {}", policy.as_str());
            }
            Reply::At {
                step,
                last,
                beliefs,
                hand,
            } => {
                let _ = write!(out, "at step {step} of {last}: {beliefs} beliefs in Σ");
                if *hand > 0 {
                    let _ = write!(
                        out,
                        " (the trace's, with the effects of {hand} hand-issued command(s))"
                    );
                }
            }
            Reply::Diff {
                a,
                b,
                added,
                removed,
                changed,
                consistent,
                revisions,
                ground,
            } => {
                let _ = write!(out, "from step {a} to step {b}:");
                for d in added {
                    let _ = write!(out, "\n+ {}", line(&d.member));
                    if d.entailed == Some(true) {
                        let _ = write!(out, "\n    (Σ at step {a} already entailed it)");
                    }
                }
                for d in removed {
                    let _ = write!(out, "\n- {}", line(&d.member));
                    if let Some(l) = &d.left {
                        let _ = write!(out, "\n    left at step {} ({}", l.step, sanitize(&l.by));
                        if let Some(r) = &l.reason {
                            let _ = write!(out, ": {}", sanitize(r));
                        }
                        out.push(')');
                    }
                    match d.entailed {
                        Some(true) => {
                            let _ = write!(out, "\n    Σ at step {b} still entails it");
                        }
                        Some(false) => {
                            let _ = write!(out, "\n    Σ at step {b} no longer entails it");
                        }
                        None => {}
                    }
                }
                for c in changed {
                    let _ = write!(out, "\n~ {}\n  → {}", line(&c.before), line(&c.after));
                }
                for g in ground {
                    let name = sanitize(&g.name);
                    let short = |v: &str| sanitize(&clip(v, 120));
                    let _ = match (&g.before, &g.after) {
                        (None, Some(v)) => write!(out, "\n+ {name} = {}", short(v)),
                        (Some(v), None) => write!(out, "\n- {name} (was {})", short(v)),
                        (Some(x), Some(y)) if x.contains('\n') || y.contains('\n') => {
                            // A memory block: the lines that changed, not the whole text.
                            let _ = write!(out, "\n~ {name}:");
                            let (xs, ys): (Vec<&str>, Vec<&str>) =
                                (x.lines().collect(), y.lines().collect());
                            for l in xs.iter().filter(|l| !ys.contains(l)) {
                                let _ = write!(out, "\n    - {}", short(l));
                            }
                            for l in ys.iter().filter(|l| !xs.contains(l)) {
                                let _ = write!(out, "\n    + {}", short(l));
                            }
                            Ok(())
                        }
                        (Some(x), Some(y)) => {
                            write!(out, "\n~ {name}: {} → {}", short(x), short(y))
                        }
                        (None, None) => Ok(()),
                    };
                }
                for r in revisions {
                    let _ = write!(
                        out,
                        "\n  revision at step {}: trigger {}, gave up {} ({})",
                        r.step,
                        sanitize(r.trigger.as_deref().unwrap_or("?")),
                        sanitize(&r.retracted.join(", ")),
                        sanitize(r.policy.as_deref().unwrap_or("no policy named"))
                    );
                }
                if added.is_empty() && removed.is_empty() && changed.is_empty() && ground.is_empty()
                {
                    out.push_str(" no change");
                }
                let c = |x: &Result<bool, String>| match x {
                    Ok(true) => "consistent".to_string(),
                    Ok(false) => "INCONSISTENT".to_string(),
                    Err(e) => format!("not checkable ({})", sanitize(e)),
                };
                if consistent[0] != consistent[1] {
                    let _ = write!(
                        out,
                        "\n  Σ: {} at step {a}, {} at step {b}",
                        c(&consistent[0]),
                        c(&consistent[1])
                    );
                }
            }
            Reply::Sigma { beliefs } => {
                if beliefs.is_empty() {
                    out.push_str("Σ is empty");
                }
                for (i, m) in beliefs.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    out.push_str(&line(m));
                    if m.hand {
                        out.push_str(" [hand]");
                    }
                }
            }
            Reply::History {
                formula,
                id,
                session,
                initial,
                rows,
                cost,
                hand,
                key,
            } => {
                let named = id
                    .as_deref()
                    .map(|i| format!(" (belief {})", sanitize(i)))
                    .unwrap_or_default();
                let _ = write!(
                    out,
                    "history of {}{named} in session {}: {initial} at step 0",
                    sanitize(formula),
                    sanitize(session)
                );
                let changed = rows.iter().filter(|r| r.step > 0).count();
                let _ = write!(
                    out,
                    ", {changed} change{}",
                    if changed == 1 { "" } else { "s" }
                );
                for r in rows {
                    let mut what: Vec<String> = Vec::new();
                    for c in &r.changes {
                        match *c {
                            "status" => {
                                let mut t = format!("→ {} (was {})", r.status, r.previous);
                                if let Some(why) = &r.reason {
                                    t.push_str(&format!(": {}", sanitize(why)));
                                }
                                what.push(t);
                            }
                            "announced" | "retracted" => {
                                let b = r.belief.as_deref().unwrap_or("");
                                let by = r.by.map(|b| format!(" by {b}")).unwrap_or_default();
                                what.push(format!("{c} {}{by}", sanitize(b)));
                            }
                            other => what.push(other.to_string()),
                        }
                    }
                    let ev = r
                        .event
                        .as_ref()
                        .map(|e| format!("  ← {}", e.to_text()))
                        .unwrap_or_default();
                    let _ = write!(out, "\n  step {:>5}  {}{ev}", r.step, what.join("; "));
                    match &r.support {
                        Some(Ok(ms)) if ms.is_empty() => {
                            out.push_str("\n              support: {} (φ is valid)");
                        }
                        Some(Ok(ms)) => {
                            out.push_str("\n              support:");
                            for m in ms {
                                let _ = write!(out, "\n                {}", line(m));
                            }
                        }
                        Some(Err(e)) => {
                            let _ = write!(
                                out,
                                "\n              support: not checkable ({})",
                                sanitize(e)
                            );
                        }
                        None => {}
                    }
                }
                if let Some(k) = key {
                    key_life_text(k, &mut out);
                }
                if *hand > 0 {
                    let _ = write!(
                        out,
                        "\n  (the history is the trace's; the {hand} hand-issued command(s) are not part of it)"
                    );
                }
                let _ = write!(
                    out,
                    "\n  cost: index of {} change points ({} consistency solves, {:.1} ms{}); \
                     history {} of them relevant, {} checks, {} supports, {:.1} ms{}",
                    cost.points,
                    cost.index_solves,
                    cost.index_ms,
                    if cost.index_reused { ", reused" } else { "" },
                    cost.relevant,
                    cost.checks,
                    cost.supports,
                    cost.ms,
                    if cost.pruned {
                        ""
                    } else {
                        " (whole Σ walked: quantifiers)"
                    },
                );
            }
            Reply::WhatIf {
                policy,
                run_policy,
                from,
                at,
                sigma,
                changed,
                compared,
                not_checkable,
                decisions,
                stopped_at,
            } => {
                let _ = write!(
                    out,
                    "what if {} had decided from step {from} (the run used {}):",
                    policy.as_str(),
                    run_policy.map_or("no named policy", Policy::as_str)
                );
                let _ = write!(out, "\nΣ at step {at}, real | alternative:");
                for (m, side) in sigma {
                    let mark = match *side {
                        "both" => "  both ",
                        "real" => "  real ",
                        _ => "  alt  ",
                    };
                    let _ = write!(out, "\n{mark} {}", line(m));
                }
                if sigma.iter().all(|(_, s)| *s == "both") {
                    out.push_str("\n  (the two Σs are the same here)");
                }
                for d in decisions {
                    let _ = write!(
                        out,
                        "\nstep {}: {} {}",
                        d.step,
                        sanitize(&d.id),
                        sanitize(&d.formula)
                    );
                    let _ = write!(
                        out,
                        "\n  real: gave up {}",
                        if d.real_retracted.is_empty() {
                            "nothing".to_string()
                        } else {
                            sanitize(&d.real_retracted.join(", "))
                        }
                    );
                    match &d.alt {
                        Ok((applied, retracted, fallback)) => {
                            let _ = write!(
                                out,
                                "\n  {}: {}, gave up {}{}",
                                policy.as_str(),
                                if *applied {
                                    "admitted it"
                                } else {
                                    "refused it"
                                },
                                if retracted.is_empty() {
                                    "nothing".to_string()
                                } else {
                                    sanitize(&retracted.join(", "))
                                },
                                if *fallback { " (recency fallback)" } else { "" }
                            );
                        }
                        Err(e) => {
                            let _ = write!(
                                out,
                                "\n  {}: not checkable ({})",
                                policy.as_str(),
                                sanitize(e)
                            );
                        }
                    }
                    if d.sigma_was_inconsistent {
                        out.push_str("\n  (Σ was already inconsistent before it)");
                    }
                    match &d.repairs {
                        Ok((rs, complete)) => {
                            let _ = write!(
                                out,
                                "\n  minimal repairs{}:",
                                if *complete { "" } else { " (more may exist)" }
                            );
                            for r in rs {
                                let mut tags = Vec::new();
                                if r.real {
                                    tags.push("the run's");
                                }
                                if r.alternative {
                                    tags.push(policy.as_str());
                                }
                                let tag = if tags.is_empty() {
                                    String::new()
                                } else {
                                    format!("  [{}]", tags.join(", "))
                                };
                                let keeps = if r.keeps.is_empty() {
                                    String::new()
                                } else {
                                    format!("; keeps {}", sanitize(&r.keeps.join(", ")))
                                };
                                let _ = write!(
                                    out,
                                    "\n    give up {}{}{keeps}{tag}",
                                    sanitize(&r.retract.join(", ")),
                                    if r.keeps_new { "" } else { " (refuse it)" },
                                );
                            }
                        }
                        Err(e) => {
                            let _ = write!(out, "\n  repairs: not checkable ({})", sanitize(e));
                        }
                    }
                }
                if changed.is_empty() {
                    let _ = write!(
                        out,
                        "\nno later verdict or answer would have changed ({compared} compared)"
                    );
                } else {
                    let _ = write!(
                        out,
                        "\n{} of {compared} later verdicts or answers would have changed:",
                        changed.len()
                    );
                    for c in changed {
                        let ev = c
                            .event
                            .as_ref()
                            .map(|e| format!("step {} ", e.step))
                            .unwrap_or_default();
                        let _ = write!(
                            out,
                            "\n  {ev}{} {}: {} → {}{}",
                            c.kind,
                            sanitize(&c.formula),
                            sanitize(&c.real),
                            sanitize(&c.alt),
                            c.claimed
                                .as_deref()
                                .map(|x| format!(" (claimed {})", sanitize(x)))
                                .unwrap_or_default()
                        );
                    }
                }
                if *not_checkable > 0 {
                    let _ = write!(out, "\n({not_checkable} not checkable within the budget)");
                }
                if let Some(s) = stopped_at {
                    let _ = write!(
                        out,
                        "\n(the walk's budget ran out at step {s}: nothing from there on was \
                         replayed or compared; --budget gives it more)"
                    );
                }
            }
            Reply::Note {
                note,
                location,
                in_data_dir,
            } => {
                let _ = write!(
                    out,
                    "{} {}\n  kept in {}{}",
                    if note.text.is_empty() {
                        "bookmarked"
                    } else {
                        "noted"
                    },
                    note.to_text(),
                    sanitize(location),
                    if *in_data_dir {
                        " (the trace's directory is not writable)"
                    } else {
                        ""
                    }
                );
            }
            Reply::Watch { points, stop } => match stop {
                Some(st) => match st.step {
                    Some(step) => {
                        let _ = write!(out, "stopped at step {step} (from {}):", st.from);
                        for h in &st.hits {
                            let _ = write!(out, "\n  {}", sanitize(h));
                        }
                    }
                    None => {
                        let _ = write!(
                            out,
                            "no watchpoint triggers {} step {} (last step {}); still at step {}",
                            if st.back { "before" } else { "after" },
                            st.from,
                            st.last,
                            st.from
                        );
                    }
                },
                None if points.is_empty() => out.push_str("no watchpoints"),
                None => {
                    for (i, p) in points.iter().enumerate() {
                        if i > 0 {
                            out.push('\n');
                        }
                        let _ = write!(out, "{}. {}", i + 1, sanitize(p));
                    }
                }
            },
            Reply::Notes {
                notes,
                location,
                problems,
            } => {
                if notes.is_empty() {
                    out.push_str("no bookmarks or notes in this session");
                }
                for (i, n) in notes.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    out.push_str(&n.to_text());
                }
                if let Some(l) = location {
                    let _ = write!(out, "\n  kept in {}", sanitize(l));
                }
                for p in problems {
                    let _ = write!(out, "\n  warning: {}", sanitize(p));
                }
            }
            Reply::Unnote { id } => {
                let _ = write!(out, "removed note #{id}");
            }
            Reply::Help { text } => out.push_str(text),
            Reply::Prompt { text } => {
                let lines: Vec<String> = text.trim_end().lines().map(sanitize).collect();
                out.push_str(&lines.join("\n"));
            }
            Reply::Save { path, events } => {
                let _ = write!(out, "wrote {events} events to {}", sanitize(path));
            }
        }
        out
    }
}

impl ReplError {
    /// The contract §4 error object.
    pub fn to_json(&self) -> Value {
        let mut error = json!({"message": self.message});
        if let Some(c) = self.column {
            error["column"] = json!(c);
        }
        json!({"ok": false, "command": self.command, "error": error})
    }

    /// Human-readable text.
    pub fn to_text(&self) -> String {
        match self.column {
            Some(c) => format!("error: column {c}: {}", sanitize(&self.message)),
            None => format!("error: {}", sanitize(&self.message)),
        }
    }
}

/// The trace-format name of a role.
pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::Fact => "fact",
        Role::Rule => "rule",
        Role::Norm => "norm",
        Role::Assumption => "assumption",
    }
}

fn key_life_json(k: &KeyLifeView) -> Value {
    json!({
        "key": k.key,
        "values": k.writes.iter().map(|w| json!({
            "step": w.step, "formula": w.formula, "source": w.source, "writer": w.writer,
            "ended": w.ended.map(|(step, by)| json!({"step": step, "by": by})),
        })).collect::<Vec<_>>(),
        "read_by": k.reads.iter().map(|(step, by)| json!({"step": step, "step_id": by}))
            .collect::<Vec<_>>(),
    })
}

/// The key's life under a `history` reply: one line per value with its writer, how it
/// ended, and the steps that read the key.
fn key_life_text(k: &KeyLifeView, out: &mut String) {
    let _ = write!(out, "\n  values of {}:", sanitize(&k.key));
    for w in &k.writes {
        let src = w
            .source
            .as_deref()
            .map(|s| format!(" ({})", sanitize(s)))
            .unwrap_or_default();
        let ended = match w.ended {
            Some((step, "superseded")) => format!("; overwritten at step {step}"),
            Some((step, "reannounced")) => format!("; written again at step {step}"),
            Some((step, by)) => format!("; retracted at step {step} by {by}"),
            None => String::new(),
        };
        let _ = write!(
            out,
            "\n    step {:>5}  {}{src}  ← {}{ended}",
            w.step,
            sanitize(&w.formula),
            sanitize(&w.writer)
        );
    }
    if !k.reads.is_empty() {
        let reads: Vec<String> = k
            .reads
            .iter()
            .map(|(step, by)| format!("step {step} ({})", sanitize(by)))
            .collect();
        let _ = write!(out, "\n  read by: {}", reads.join(", "));
    }
}

fn history_line_json(r: &HistoryLine) -> Value {
    let (support, support_error) = match &r.support {
        Some(Ok(ms)) => (
            json!(ms.iter().map(member_json).collect::<Vec<_>>()),
            Value::Null,
        ),
        Some(Err(e)) => (Value::Null, json!(e)),
        None => (Value::Null, Value::Null),
    };
    json!({
        "step": r.step, "status": r.status, "previous": r.previous, "changes": r.changes,
        "event": r.event.as_ref().map(EventRef::to_json), "reason": r.reason,
        "belief": r.belief, "by": r.by, "support": support, "support_error": support_error,
    })
}

fn member_json(m: &Member) -> Value {
    json!({"id": m.id, "formula": m.formula, "step": m.step, "source": m.source})
}

/// The first `max` characters of `s`, with `…` when cut: a memory block in a diff line.
fn clip(s: &str, max: usize) -> String {
    let one_line = s.replace('\n', " ");
    match one_line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

/// One question's answer (`satisfiable` / `unsatisfiable`) and the files that show it,
/// relative to the certificate directory.
pub type CertifiedFiles = (String, Vec<String>);

/// What `--certificate DIR` wrote for one verdict (`check`, `entails`).
#[derive(Debug, Clone, PartialEq)]
pub struct Certified {
    /// The directory as given.
    pub dir: String,
    /// Per question: the question, the answer (`satisfiable` / `unsatisfiable`) and the
    /// files written, relative to the directory; or why it was not certified.
    pub questions: Vec<(String, Result<CertifiedFiles, String>)>,
    /// The verdict the two certificates imply, when both were made.
    pub certified: Option<String>,
    /// Whether it is the verdict given.
    pub agrees: Option<bool>,
    /// Why nothing could be written (the directory), if so.
    pub error: Option<String>,
}

impl Certified {
    /// From the index entries written (or the error writing them).
    pub(crate) fn from_entries(dir: &str, written: std::io::Result<Vec<Value>>) -> Certified {
        let mut c = Certified {
            dir: dir.to_string(),
            questions: Vec::new(),
            certified: None,
            agrees: None,
            error: None,
        };
        let entries = match written {
            Ok(e) => e,
            Err(e) => {
                c.error = Some(e.to_string());
                return c;
            }
        };
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        for e in &entries {
            let question = s(e, "question").unwrap_or_default();
            let r = match (s(e, "answer"), s(e, "cnf")) {
                (Some(answer), Some(cnf)) => {
                    let evidence = s(e, "proof").or_else(|| s(e, "model")).unwrap_or_default();
                    Ok((answer, vec![cnf, evidence]))
                }
                _ => Err(s(e, "error").unwrap_or_default()),
            };
            c.questions.push((question, r));
            c.certified = s(e, "certified");
            c.agrees = e.get("agrees").and_then(Value::as_bool);
        }
        c
    }

    /// The reply's lines about it (each starting with a newline).
    fn text(&self) -> String {
        let dir = sanitize(&self.dir);
        if let Some(e) = &self.error {
            return format!("\n  certificate not written to {dir}: {}", sanitize(e));
        }
        let mut out = format!("\n  certificates in {dir} (index.json):");
        for (q, r) in &self.questions {
            match r {
                Ok((answer, files)) => {
                    let _ = write!(out, "\n    {q} {answer}: {}", sanitize(&files.join(", ")));
                }
                Err(e) => {
                    let _ = write!(out, "\n    {q} not certified: {}", sanitize(e));
                }
            }
        }
        if self.agrees == Some(false) {
            let _ = write!(
                out,
                "\n    the certificates say {}, not the verdict above (a doxascope bug: please report it)",
                self.certified.as_deref().unwrap_or("?")
            );
        }
        out
    }

    fn to_json(&self) -> Value {
        json!({
            "dir": self.dir,
            "index": "index.json",
            "error": self.error,
            "certified": self.certified,
            "agrees": self.agrees,
            "questions": self.questions.iter().map(|(q, r)| match r {
                Ok((answer, files)) => json!({"question": q, "answer": answer, "files": files}),
                Err(e) => json!({"question": q, "error": e}),
            }).collect::<Vec<_>>(),
        })
    }
}

/// A reply's JSON with `"certificate"` added when one was written (absent otherwise, so
/// replies without the option are unchanged).
fn with_certificate(mut v: Value, c: &Option<Certified>) -> Value {
    if let (Some(c), Some(o)) = (c, v.as_object_mut()) {
        o.insert("certificate".into(), c.to_json());
    }
    v
}
