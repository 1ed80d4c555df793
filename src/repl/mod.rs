//! The REPL engine: one command engine for the TUI's command line and `doxascope repl`.
//!
//! A session looks at one trace session at a chosen step t. Σ is the trace's beliefs active
//! at t plus a *hand-issued layer*: the announcements and retractions typed at the prompt.
//! The layer is a fork: it never changes the trace, it is replayed on top of Σ(t) whenever the
//! step changes (`at`), and `save` writes it out as trace JSONL.
//!
//! Every command returns a [`Reply`] or a [`ReplError`]; both render as text or as the JSON
//! objects of contract §4. Errors are results: the session always goes on.
//!
//! The engine never computes logic itself: it hands formulas to [`BeliefState`], whose solver
//! runs on its own thread with a deadline.

pub mod command;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::logic::engine::{BeliefSpec, BeliefState, EngineError, Entails, Outcome, Role};
use crate::logic::formula::{Atom, Formula, Term};
use crate::logic::parse::parse as parse_formula;
use crate::logic::print::normalized;
use crate::logic::revise::Policy;
use crate::sanitize::sanitize;

/// `why` lists at most this many minimal supports...
const MAX_SUPPORTS: usize = 16;
/// ...found within this time; past either cap the answer says it is not complete.
const SUPPORTS_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

pub use command::{COMMANDS, Command, CommandError, FormulaArg};

/// A belief of the trace, as the REPL needs to know it.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceBelief {
    /// The belief id.
    pub id: String,
    /// The formula.
    pub formula: Formula,
    /// Its role.
    pub role: Role,
    /// Where it came from (`user`, `tool:ping_test`, ...).
    pub source: String,
    /// Confidence in (0, 1].
    pub confidence: f64,
    /// The step that announced it.
    pub step: u64,
}

/// What the REPL reads from a trace: Σ at any step. The replay model implements it; a REPL
/// without a trace uses [`EmptyTrace`].
pub trait TraceSigma: Send {
    /// The name of the session being inspected.
    fn session(&self) -> &str;
    /// The last step of the trace (0 when it is empty).
    fn last_step(&self) -> u64;
    /// The trace's active beliefs after `step` events, oldest first.
    fn sigma_at(&self, step: u64) -> Vec<TraceBelief>;
}

/// A trace with no events: the REPL on an empty Σ.
#[derive(Debug, Default, Clone, Copy)]
pub struct EmptyTrace;

impl TraceSigma for EmptyTrace {
    fn session(&self) -> &str {
        "repl"
    }
    fn last_step(&self) -> u64 {
        0
    }
    fn sigma_at(&self, _step: u64) -> Vec<TraceBelief> {
        Vec::new()
    }
}

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
    },
    /// `check`
    Check {
        /// Θ(Σ, φ).
        outcome: Outcome,
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
    },
    /// `undo`
    Undo {
        /// The undone command, described.
        undone: String,
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
    fn new(command: &str, message: impl Into<String>) -> Self {
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

/// One hand-issued operation of the layer.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Announce { spec: BeliefSpec, source: String },
    Retract { id: String },
}

/// A REPL session over one trace session.
pub struct Repl {
    trace: Box<dyn TraceSigma>,
    step: u64,
    policy: Policy,
    layer: Vec<Op>,
    /// The belief state for (step, layer), built lazily and dropped when either changes.
    state: Option<BeliefState>,
    /// Display data for every id in the current state.
    members: HashMap<String, Member>,
    /// Notes from building the state (trace beliefs the engine refused), shown once.
    notes: Vec<String>,
}

impl Repl {
    /// A session at the last step of `trace`.
    pub fn new(trace: Box<dyn TraceSigma>) -> Self {
        let step = trace.last_step();
        Repl {
            trace,
            step,
            policy: Policy::default(),
            layer: Vec::new(),
            state: None,
            members: HashMap::new(),
            notes: Vec::new(),
        }
    }

    /// The step being inspected.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The policy in force.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Sets the policy (as the command `policy P` does).
    pub fn set_policy(&mut self, policy: Policy) {
        if policy != self.policy {
            self.policy = policy;
            // Announcements of the layer were resolved under the old policy; replaying them
            // under the new one would silently change Σ, so the built state is kept as is and
            // only new announcements use the new policy.
        }
    }

    /// Notes produced while building Σ (for example a trace rule the engine refused), taken
    /// once.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Atoms and belief ids of the current Σ, for Tab completion.
    pub fn completion_pool(&mut self) -> Vec<String> {
        let mut out = BTreeSet::new();
        for b in self.trace.sigma_at(self.step) {
            atom_names(&b.formula, &mut out);
            out.insert(b.id);
        }
        for op in &self.layer {
            if let Op::Announce { spec, .. } = op {
                atom_names(&spec.formula, &mut out);
                out.insert(spec.id.clone());
            }
        }
        out.into_iter().collect()
    }

    /// Parses and runs one command line.
    pub fn run_line(&mut self, line: &str) -> Result<Reply, ReplError> {
        let cmd = command::parse(line)?;
        self.run(&cmd)
    }

    /// Runs one parsed command.
    pub fn run(&mut self, cmd: &Command) -> Result<Reply, ReplError> {
        let name = cmd.name();
        match cmd {
            Command::Announce {
                formula,
                confidence,
                role,
                source,
            } => {
                let f = parse_arg(name, formula)?;
                let id = normalized(&f);
                let spec = BeliefSpec::new(id.clone(), f)
                    .role(role.unwrap_or_default())
                    .confidence(confidence.unwrap_or(1.0))
                    .step(self.step);
                let source = source.clone().unwrap_or_else(|| "user".to_string());
                let policy = self.policy;
                self.ensure_state()?;
                let rev = self
                    .state_mut()
                    .announce(spec.clone(), policy)
                    .map_err(|e| engine_error(name, e))?;
                self.members
                    .insert(id.clone(), member_of(&spec, &source, true));
                self.layer.push(Op::Announce { spec, source });
                Ok(Reply::Announce {
                    id,
                    outcome: rev.outcome,
                    applied: rev.applied,
                    retracted: rev.retracted,
                    conflict: rev.conflict,
                    policy,
                    fallback: rev.fallback,
                    norm_violation: rev.norm_violation,
                })
            }
            Command::Check(arg) => {
                let check = self.query(name, arg, |st, f| st.check(f, None))?;
                Ok(Reply::Check {
                    outcome: check.theta,
                })
            }
            Command::Entails(arg) => {
                let e = self.query(name, arg, |st, f| st.entails(f))?;
                Ok(Reply::Entails {
                    result: e.result,
                    degree: e.degree,
                    consistent: e.sigma_consistent,
                })
            }
            Command::Why(arg) => {
                let s = self.query(name, arg, |st, f| {
                    st.supports(f, MAX_SUPPORTS, SUPPORTS_BUDGET)
                })?;
                let supports = s.supports.iter().map(|ids| self.members_of(ids)).collect();
                Ok(Reply::Why {
                    supports,
                    complete: s.complete,
                })
            }
            Command::WhyNot(arg) => {
                let w = self.query(name, arg, |st, f| st.whynot(f))?;
                Ok(Reply::WhyNot {
                    countermodel: w.countermodel.map(|m| {
                        m.into_iter()
                            .map(|(atom, v)| (atom_text(&atom), v))
                            .collect()
                    }),
                })
            }
            Command::Consistent => {
                let c = self
                    .state()?
                    .consistent()
                    .map_err(|e| engine_error(name, e))?;
                Ok(Reply::Consistent {
                    consistent: c.consistent,
                    conflict: self.members_of(&c.conflict),
                })
            }
            Command::Retract(arg) => {
                let id = self.resolve_id(name, arg)?;
                let state = self.state()?;
                let done = state.retract(&id).map_err(|e| engine_error(name, e))?;
                if !done {
                    return Err(ReplError::new(
                        name,
                        format!("no active belief with id `{}`", sanitize(&id)),
                    ));
                }
                self.layer.push(Op::Retract { id: id.clone() });
                Ok(Reply::Retract { id })
            }
            Command::Undo => {
                let Some(op) = self.layer.pop() else {
                    return Err(ReplError::new(name, "nothing to undo"));
                };
                self.state = None;
                let undone = match op {
                    Op::Announce { spec, .. } => format!("announce {}", spec.id),
                    Op::Retract { id } => format!("retract {id}"),
                };
                Ok(Reply::Undo { undone })
            }
            Command::Reset => {
                let dropped = self.layer.len();
                self.layer.clear();
                self.state = None;
                Ok(Reply::Reset { dropped })
            }
            Command::Policy(p) => {
                if let Some(p) = p {
                    self.set_policy(*p);
                }
                Ok(Reply::Policy {
                    policy: self.policy,
                })
            }
            Command::At(step) => {
                let last = self.trace.last_step();
                if *step > last {
                    return Err(ReplError::new(
                        name,
                        format!("step {step} is past the end of the trace (last step {last})"),
                    ));
                }
                self.step = *step;
                self.state = None;
                self.ensure_state()?;
                let beliefs = self.current_members().len();
                Ok(Reply::At {
                    step: *step,
                    last,
                    beliefs,
                })
            }
            Command::Diff(a, b) => {
                let last = self.trace.last_step();
                if *a > last || *b > last {
                    return Err(ReplError::new(
                        name,
                        format!("steps must be at most {last}, the last step of the trace"),
                    ));
                }
                let at_a = self.trace.sigma_at(*a);
                let at_b = self.trace.sigma_at(*b);
                let key = |t: &TraceBelief| (t.id.clone(), t.step);
                let ka: BTreeSet<_> = at_a.iter().map(key).collect();
                let kb: BTreeSet<_> = at_b.iter().map(key).collect();
                let added = at_b
                    .iter()
                    .filter(|t| !ka.contains(&key(t)))
                    .map(trace_member)
                    .collect();
                let removed = at_a
                    .iter()
                    .filter(|t| !kb.contains(&key(t)))
                    .map(trace_member)
                    .collect();
                Ok(Reply::Diff {
                    a: *a,
                    b: *b,
                    added,
                    removed,
                })
            }
            Command::Sigma => {
                self.ensure_state()?;
                Ok(Reply::Sigma {
                    beliefs: self.current_members(),
                })
            }
            Command::Help(which) => Ok(Reply::Help {
                text: help_text(which.as_deref()),
            }),
            Command::Save(path) => {
                let text = self.layer_jsonl();
                let events = text.lines().count();
                std::fs::write(path, text).map_err(|e| {
                    ReplError::new(name, format!("cannot write {}: {e}", sanitize(path)))
                })?;
                Ok(Reply::Save {
                    path: path.clone(),
                    events,
                })
            }
        }
    }

    /// The hand-issued layer as trace JSONL (one event per line).
    pub fn layer_jsonl(&self) -> String {
        let mut out = String::new();
        for (i, op) in self.layer.iter().enumerate() {
            let ev = match op {
                Op::Announce { spec, source } => json!({
                    "kind": "announce",
                    "v": 1,
                    "seq": i + 1,
                    "session": self.trace.session(),
                    "id": spec.id,
                    "formula": spec.formula.to_string(),
                    "role": role_name(spec.role),
                    "source": source,
                    "confidence": spec.confidence,
                }),
                Op::Retract { id } => json!({
                    "kind": "retract",
                    "v": 1,
                    "seq": i + 1,
                    "session": self.trace.session(),
                    "target": id,
                    "by": "user",
                }),
            };
            out.push_str(&ev.to_string());
            out.push('\n');
        }
        out
    }

    /// Parses a formula argument and asks the belief state one question about it.
    fn query<T>(
        &mut self,
        name: &str,
        arg: &FormulaArg,
        ask: impl FnOnce(&mut BeliefState, &Formula) -> Result<T, EngineError>,
    ) -> Result<T, ReplError> {
        let f = parse_arg(name, arg)?;
        ask(self.state()?, &f).map_err(|e| engine_error(name, e))
    }

    fn state_mut(&mut self) -> &mut BeliefState {
        self.state
            .as_mut()
            .expect("ensure_state was called before state_mut")
    }

    fn state(&mut self) -> Result<&mut BeliefState, ReplError> {
        self.ensure_state()?;
        Ok(self.state_mut())
    }

    /// Builds Σ(step) plus the layer, if it is not built already.
    fn ensure_state(&mut self) -> Result<(), ReplError> {
        if self.state.is_some() {
            return Ok(());
        }
        let mut state = BeliefState::new().map_err(|e| engine_error("", e))?;
        self.members.clear();
        for b in self.trace.sigma_at(self.step) {
            let spec = BeliefSpec::new(b.id.clone(), b.formula.clone())
                .role(b.role)
                .confidence(b.confidence)
                .step(b.step);
            self.members.insert(b.id.clone(), trace_member(&b));
            if let Err(e) = state.add(spec) {
                self.notes.push(format!(
                    "trace belief {} (step {}) not loaded: {e}",
                    sanitize(&b.id),
                    b.step
                ));
            }
        }
        for op in &self.layer {
            match op {
                Op::Announce { spec, source } => {
                    self.members
                        .insert(spec.id.clone(), member_of(spec, source, true));
                    if let Err(e) = state.announce(spec.clone(), self.policy) {
                        self.notes.push(format!(
                            "hand announcement {} failed: {e}",
                            sanitize(&spec.id)
                        ));
                    }
                }
                Op::Retract { id } => {
                    let _ = state.retract(id);
                }
            }
        }
        self.state = Some(state);
        Ok(())
    }

    fn current_members(&self) -> Vec<Member> {
        let Some(state) = &self.state else {
            return Vec::new();
        };
        let active: BTreeSet<String> = state.beliefs().iter().map(|b| b.id.clone()).collect();
        let mut out: Vec<Member> = active
            .iter()
            .filter_map(|id| self.members.get(id).cloned())
            .collect();
        out.sort_by(|a, b| (a.step, &a.id).cmp(&(b.step, &b.id)));
        out
    }

    fn members_of(&self, ids: &[String]) -> Vec<Member> {
        ids.iter()
            .map(|id| {
                self.members.get(id).cloned().unwrap_or_else(|| Member {
                    id: id.clone(),
                    formula: id.clone(),
                    step: self.step,
                    source: "user".into(),
                    role: Role::Fact,
                    confidence: 1.0,
                    hand: true,
                })
            })
            .collect()
    }

    /// `retract ID-or-φ`: an id if one is active, else the normalized formula.
    fn resolve_id(&mut self, name: &str, arg: &FormulaArg) -> Result<String, ReplError> {
        self.ensure_state()?;
        if self.members.contains_key(&arg.text) {
            return Ok(arg.text.clone());
        }
        let f = parse_arg(name, arg).map_err(|mut e| {
            e.message = format!(
                "`{}` is neither a belief id nor a formula: {}",
                sanitize(&arg.text),
                e.message
            );
            e
        })?;
        Ok(normalized(&f))
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Fact => "fact",
        Role::Rule => "rule",
        Role::Norm => "norm",
        Role::Assumption => "assumption",
    }
}

fn member_of(spec: &BeliefSpec, source: &str, hand: bool) -> Member {
    Member {
        id: spec.id.clone(),
        formula: spec.formula.to_string(),
        step: spec.step,
        source: source.to_string(),
        role: spec.role,
        confidence: spec.confidence,
        hand,
    }
}

fn trace_member(b: &TraceBelief) -> Member {
    Member {
        id: b.id.clone(),
        formula: b.formula.to_string(),
        step: b.step,
        source: b.source.clone(),
        role: b.role,
        confidence: b.confidence,
        hand: false,
    }
}

fn parse_arg(command: &str, arg: &FormulaArg) -> Result<Formula, ReplError> {
    parse_formula(&arg.text).map_err(|e| ReplError {
        command: command.to_string(),
        message: e.message.clone(),
        column: Some(arg.column + e.column.saturating_sub(1)),
    })
}

fn engine_error(command: &str, e: EngineError) -> ReplError {
    ReplError::new(command, e.to_string())
}

fn atom_text(atom: &Atom) -> String {
    Formula::Atom(atom.clone()).to_string()
}

fn atom_names(f: &Formula, out: &mut BTreeSet<String>) {
    let mut stack = vec![f];
    while let Some(f) = stack.pop() {
        match f {
            Formula::True | Formula::False => {}
            Formula::Atom(Atom::Prop(p)) => {
                out.insert(p.clone());
            }
            Formula::Atom(Atom::Pred(p, args)) => {
                out.insert(p.clone());
                for t in args {
                    if let Term::Const(c) = t {
                        out.insert(c.clone());
                    }
                }
            }
            Formula::Atom(Atom::Quoted(_)) => {}
            Formula::Not(g) | Formula::Forall(_, g) | Formula::Exists(_, g) => stack.push(g),
            Formula::And(gs) | Formula::Or(gs) => stack.extend(gs.iter()),
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                stack.push(a);
                stack.push(b);
            }
        }
    }
}

/// The help text: every command, or one in detail.
pub fn help_text(which: Option<&str>) -> String {
    let mut out = String::new();
    match which.and_then(command::spec) {
        Some(c) => {
            let _ = writeln!(out, "{} {}", c.name, c.args);
            let _ = write!(out, "  {}", c.summary);
        }
        None => {
            for c in COMMANDS {
                let _ = writeln!(
                    out,
                    "{:<28} {}",
                    format!("{} {}", c.name, c.args),
                    c.summary
                );
            }
            out.pop();
        }
    }
    out
}

fn member_json(m: &Member) -> Value {
    json!({"id": m.id, "formula": m.formula, "step": m.step, "source": m.source})
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
            } => json!({
                "id": id, "outcome": outcome.as_str(), "applied": applied,
                "retracted": retracted, "conflict": conflict, "policy": policy.as_str(),
                "fallback": fallback, "norm_violation": norm_violation,
            }),
            Reply::Check { outcome } => json!({"outcome": outcome.as_str()}),
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
            Reply::Retract { id } => json!({"id": id}),
            Reply::Undo { undone } => json!({"undone": undone}),
            Reply::Reset { dropped } => json!({"dropped": dropped}),
            Reply::Policy { policy } => json!({"policy": policy.as_str()}),
            Reply::At {
                step,
                last,
                beliefs,
            } => json!({"step": step, "last_step": last, "beliefs": beliefs}),
            Reply::Diff {
                a,
                b,
                added,
                removed,
            } => json!({
                "from": a, "to": b,
                "added": added.iter().map(member_json).collect::<Vec<_>>(),
                "removed": removed.iter().map(member_json).collect::<Vec<_>>(),
            }),
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
            } => {
                let _ = write!(out, "{}: ", outcome.as_str().to_uppercase());
                if *applied {
                    let _ = write!(out, "announced {}", sanitize(id));
                } else {
                    let _ = write!(out, "not applied ({})", policy.as_str());
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
            Reply::Check { outcome } => out.push_str(&outcome.as_str().to_uppercase()),
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
            Reply::Retract { id } => {
                let _ = write!(out, "retracted {}", sanitize(id));
            }
            Reply::Undo { undone } => {
                let _ = write!(out, "undone: {}", sanitize(undone));
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
            } => {
                let _ = write!(out, "at step {step} of {last}: {beliefs} beliefs in Σ");
            }
            Reply::Diff {
                a,
                b,
                added,
                removed,
            } => {
                let _ = write!(out, "from step {a} to step {b}:");
                for m in added {
                    let _ = write!(out, "\n+ {}", line(m));
                }
                for m in removed {
                    let _ = write!(out, "\n- {}", line(m));
                }
                if added.is_empty() && removed.is_empty() {
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

/// Σ of one session of a replayed [`crate::model::Model`], for the REPL.
pub struct ModelSigma {
    model: std::sync::Arc<crate::model::Model>,
    session: String,
}

impl ModelSigma {
    /// The REPL's view of `session` in `model`.
    pub fn new(model: std::sync::Arc<crate::model::Model>, session: impl Into<String>) -> Self {
        ModelSigma {
            model,
            session: session.into(),
        }
    }
}

fn engine_role(role: crate::trace::event::Role) -> Role {
    use crate::trace::event::Role as R;
    match role {
        R::Fact => Role::Fact,
        R::Rule => Role::Rule,
        R::Norm => Role::Norm,
        R::Assumption => Role::Assumption,
    }
}

impl TraceSigma for ModelSigma {
    fn session(&self) -> &str {
        &self.session
    }

    fn last_step(&self) -> u64 {
        self.model
            .timeline(&self.session)
            .map_or(0, |t| u64::from(t.len()))
    }

    fn sigma_at(&self, step: u64) -> Vec<TraceBelief> {
        let step = u32::try_from(step).unwrap_or(u32::MAX);
        let Some(views) = self.model.sigma_at(&self.session, step) else {
            return Vec::new();
        };
        // A belief whose formula does not parse is reported by validate and the audit; it
        // cannot take part in reasoning, so it is left out of the REPL's Σ.
        views
            .iter()
            .filter_map(|v| {
                Some(TraceBelief {
                    id: v.id().to_string(),
                    formula: v.formula().ok()?,
                    role: engine_role(v.role()),
                    source: v.source().unwrap_or("").to_string(),
                    confidence: v.confidence(),
                    step: u64::from(v.step()),
                })
            })
            .collect()
    }
}
