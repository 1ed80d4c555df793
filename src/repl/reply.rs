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
    },
    /// `entails`
    Entails {
        /// entailed / contradicted / unknown.
        result: Entails,
        /// N(φ) when Σ is graded.
        degree: Option<f64>,
        /// Whether Σ is consistent (an inconsistent Σ entails everything).
        consistent: bool,
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
        /// Beliefs active at b but not at a.
        added: Vec<Member>,
        /// Beliefs active at a but not at b.
        removed: Vec<Member>,
        /// Ground beliefs (memory) whose value differs, by name.
        ground: Vec<GroundChange>,
    },
    /// `sigma`
    Sigma {
        /// Every active belief.
        beliefs: Vec<Member>,
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
            } => json!({
                "id": id, "outcome": outcome.as_str(), "applied": applied,
                "retracted": retracted, "conflict": conflict, "policy": policy.as_str(),
                "fallback": fallback, "norm_violation": norm_violation,
                "sigma_was_inconsistent": !prior_conflict.is_empty(),
                "prior_conflict": prior_conflict,
            }),
            Reply::Check {
                outcome,
                theta,
                missing,
                conflict,
                prior_conflict,
            } => json!({
                "outcome": outcome.as_str(),
                "theta": theta.as_str(),
                "missing_citations": missing,
                "conflict": conflict.iter().map(member_json).collect::<Vec<_>>(),
                "sigma_consistent": prior_conflict.is_empty(),
                "prior_conflict": prior_conflict.iter().map(member_json).collect::<Vec<_>>(),
            }),
            Reply::Entails {
                result,
                degree,
                consistent,
            } => {
                json!({"result": result.as_str(), "degree": degree, "sigma_consistent": consistent})
            }
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
                ground,
            } => {
                let mut v = json!({
                    "from": a, "to": b,
                    "added": added.iter().map(member_json).collect::<Vec<_>>(),
                    "removed": removed.iter().map(member_json).collect::<Vec<_>>(),
                });
                if !ground.is_empty() {
                    v["ground"] =
                        json!(ground
                        .iter()
                        .map(|g| json!({"name": g.name, "before": g.before, "after": g.after}))
                        .collect::<Vec<_>>());
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
            Reply::Help { text } => json!({"text": text}),
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
            } => {
                let _ = write!(out, "{}: ", outcome.as_str().to_uppercase());
                if *applied {
                    let _ = write!(out, "announced {}", sanitize(id));
                } else {
                    let _ = write!(out, "not applied ({})", policy.as_str());
                }
                if !prior_conflict.is_empty() {
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
            }
            Reply::Check {
                outcome,
                theta,
                missing,
                conflict,
                prior_conflict,
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
            }
            Reply::Entails {
                result,
                degree,
                consistent,
            } => {
                out.push_str(result.as_str());
                if let Some(d) = degree {
                    let _ = write!(out, " (N = {d:.2})");
                }
                if !consistent {
                    out.push_str(" (Σ is inconsistent: it entails everything)");
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
                ground,
            } => {
                let _ = write!(out, "from step {a} to step {b}:");
                for m in added {
                    let _ = write!(out, "\n+ {}", line(m));
                }
                for m in removed {
                    let _ = write!(out, "\n- {}", line(m));
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
                if added.is_empty() && removed.is_empty() && ground.is_empty() {
                    out.push_str(" no change");
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
            Reply::Help { text } => out.push_str(text),
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
