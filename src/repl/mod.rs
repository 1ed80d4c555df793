//! The REPL engine: one command engine for the TUI's command line and `doxascope repl`.
//!
//! A session looks at one trace session at a chosen step t. Σ is the trace's beliefs active
//! at t (read from the model's replay, the one every pane, `audit` and `export` read) with the
//! *hand-issued layer* applied on top: the announcements and retractions typed at the prompt.
//!
//! The layer is a log of what each command did (module `layer`): the policy in force when it ran,
//! whether its formula entered Σ, what the policy retracted. Σ at any step is the trace's Σ
//! with those effects applied in order, so a rejected announcement never enters Σ, changing
//! the policy or moving in time never re-decides an earlier command, and `undo` takes back
//! one command with all its effects. `save` writes Σ and the layer as a self-contained trace
//! that `doxascope audit` replays to the same Σ.
//!
//! Every answer depends on Σ at the step and the question alone: the belief state is rebuilt
//! from Σ whenever Σ changes, and the engine grounds quantifiers over the constants of Σ and
//! the question.
//!
//! Modules: [`command`] parses a line and holds the table of commands, each row carrying the
//! function that runs it (module `exec`); [`reply`] renders results as text or JSON;
//! [`model_sigma`] reads Σ from a replayed model. The engine never computes logic itself: it
//! hands formulas to [`BeliefState`].

mod across;
pub mod command;
mod exec;
pub mod gate;
mod layer;
pub mod model_sigma;
pub mod reply;
mod watch;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use crate::logic::engine::{BeliefSpec, BeliefState, EngineError, Role};
use crate::logic::formula::{Atom, Formula, Term};
use crate::logic::parse::parse as parse_formula;
use crate::logic::revise::Policy;
use crate::sanitize::sanitize;

pub use command::{COMMANDS, Command, CommandError, FormulaArg};
pub use model_sigma::ModelSigma;
pub use reply::{
    Certified, Changed, DecisionLine, DiffItem, EventRef, GroundChange, HistoryCostView,
    HistoryLine, KeyLifeView, KeyWriteLine, LeftInfo, Member, NoteLine, RepairLine, ReplError,
    Reply, RevisionLine, Stop, VerdictLine,
};

use layer::{HandEntry, Held};

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
    /// Ids of the premises it was derived from (`because`).
    pub because: Vec<String>,
}

/// What the REPL reads from a trace: Σ at any step. The replay model implements it
/// ([`ModelSigma`]); a REPL without a trace uses [`EmptyTrace`].
pub trait TraceSigma: Send {
    /// The name of the session being inspected.
    fn session(&self) -> &str;
    /// The last step of the trace (0 when it is empty).
    fn last_step(&self) -> u64;
    /// The trace's active beliefs after `step` events, oldest first.
    fn sigma_at(&self, step: u64) -> Vec<TraceBelief>;
    /// The replayed model and the session's name in it, for the questions across time
    /// (`history`, `diff`, `whatif`) that read the whole timeline; `None` without a trace.
    fn model(&self) -> Option<(&std::sync::Arc<crate::model::Model>, &str)> {
        None
    }
    /// The ground beliefs (BDI `belief` events: memory blocks, store keys) held after `step`
    /// events, as `(name, value as text)` sorted by name. They are not formulas and take no
    /// part in reasoning; `diff` shows how they changed.
    fn ground_at(&self, _step: u64) -> Vec<(String, String)> {
        Vec::new()
    }
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

/// How the hand-issued layer changes the trace's Σ at the current step, for a view that
/// draws the trace's Σ (the TUI's Σ pane): what to add and what to mark retracted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HandView {
    /// The step this view is for.
    pub step: u64,
    /// Commands in the layer.
    pub commands: usize,
    /// Beliefs the layer holds in Σ (added or overwritten by hand).
    pub added: Vec<Member>,
    /// Ids of the trace's beliefs at the step that are no longer in Σ.
    pub removed: Vec<String>,
}

/// How long a whole `whatif` walk may take by default (each solve has its own budget too).
pub const WHATIF_BUDGET: std::time::Duration = std::time::Duration::from_secs(60);

/// A REPL session over one trace session.
pub struct Repl {
    trace: Box<dyn TraceSigma>,
    step: u64,
    policy: Policy,
    layer: Vec<HandEntry>,
    /// The belief state for Σ(step) with the layer applied, built lazily and dropped whenever
    /// Σ changes, so that it always holds exactly `held`, in its order.
    state: Option<BeliefState>,
    /// Σ as the state was built from.
    held: Vec<Held>,
    /// Display data for every id of `held`.
    members: HashMap<String, Member>,
    /// Notes from building the state (trace beliefs the engine could not hold), shown once.
    notes: Vec<String>,
    /// The history index of the session, built by the first `history` and kept while the
    /// trace does not grow.
    history_index: Option<std::sync::Arc<crate::model::history::HistoryIndex>>,
    /// The budget of each solve of the walks over the whole session (`history`, `whatif`).
    walk_timeout: std::time::Duration,
    /// The budget of a whole `whatif` walk.
    whatif_budget: std::time::Duration,
    /// Where the session's bookmarks and notes are kept (`note`, `notes`), when the session
    /// comes from a trace file.
    note_store: Option<crate::trace::notes::NoteStore>,
    /// The watchpoints and breakpoints (`watch`, `break`), in the order they were set.
    points: Vec<watch::Point>,
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
            held: Vec::new(),
            members: HashMap::new(),
            notes: Vec::new(),
            history_index: None,
            walk_timeout: crate::model::recompute::RecomputeOptions::default().timeout,
            whatif_budget: WHATIF_BUDGET,
            note_store: None,
            points: Vec::new(),
        }
    }

    /// Gives the session a place for its bookmarks and notes: the store of the trace file the
    /// session was read from (see [`crate::trace::notes`]).
    pub fn set_note_store(&mut self, store: crate::trace::notes::NoteStore) {
        self.note_store = Some(store);
    }

    /// The bookmarks and notes, when the session has a store.
    pub fn note_store(&self) -> Option<&crate::trace::notes::NoteStore> {
        self.note_store.as_ref()
    }

    /// Sets the budget of a whole `whatif` walk ([`WHATIF_BUDGET`] by default): past it the
    /// walk stops and the answer says at which step.
    pub fn set_whatif_budget(&mut self, budget: std::time::Duration) {
        self.whatif_budget = budget;
    }

    /// Sets the budget of each solve of the walks over the whole session (`history`,
    /// `whatif`): a solve that runs out is not checkable, never a verdict.
    pub fn set_walk_timeout(&mut self, timeout: std::time::Duration) {
        self.walk_timeout = timeout;
    }

    /// The step being inspected.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The policy in force.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Sets the policy (as the command `policy P` does). Only later announcements use it:
    /// each earlier command keeps the policy it ran under.
    pub fn set_policy(&mut self, policy: Policy) {
        self.policy = policy;
    }

    /// Puts the session over another trace (the same session, grown), keeping the
    /// hand-issued layer, the policy and the step (at most the new last step).
    pub fn set_trace(&mut self, trace: Box<dyn TraceSigma>) {
        self.step = self.step.min(trace.last_step());
        self.trace = trace;
        self.invalidate();
    }

    /// How many commands the hand-issued layer holds.
    pub fn hand_commands(&self) -> usize {
        self.layer.len()
    }

    /// Notes produced while building Σ (for example a trace belief the engine could not
    /// hold), taken once.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Atoms and belief ids of the current Σ, for Tab completion.
    pub fn completion_pool(&mut self) -> Vec<String> {
        let mut out = BTreeSet::new();
        for h in self.sigma_held(self.step) {
            atom_names(&h.belief.formula, &mut out);
            out.insert(h.belief.id);
        }
        out.into_iter().collect()
    }

    /// Parses and runs one command line.
    pub fn run_line(&mut self, line: &str) -> Result<Reply, ReplError> {
        let cmd = command::parse(line)?;
        self.run(&cmd)
    }

    /// Runs one parsed command: the function its row of [`COMMANDS`] carries.
    pub fn run(&mut self, cmd: &Command) -> Result<Reply, ReplError> {
        let spec = command::spec(cmd.name())
            .ok_or_else(|| ReplError::new(cmd.name(), "no such command"))?;
        (spec.run)(self, cmd)
    }

    /// The hand-issued layer's effect on the trace's Σ at the current step (see [`HandView`]);
    /// `None` when the layer is empty.
    pub fn hand_view(&self) -> Option<HandView> {
        if self.layer.is_empty() {
            return None;
        }
        let base = self.trace.sigma_at(self.step);
        let held = layer::apply(base.clone(), &self.layer);
        let ids: BTreeSet<&str> = held.iter().map(|h| h.belief.id.as_str()).collect();
        let removed = base
            .iter()
            .filter(|b| {
                !ids.contains(b.id.as_str()) || held.iter().any(|h| h.hand && h.belief.id == b.id)
            })
            .map(|b| b.id.clone())
            .collect();
        let added = held
            .iter()
            .filter(|h| h.hand)
            .map(|h| member_of(&h.belief, true))
            .collect();
        Some(HandView {
            step: self.step,
            commands: self.layer.len(),
            added,
            removed,
        })
    }

    /// Σ at `step` with the layer applied, in the engine's order.
    fn sigma_held(&self, step: u64) -> Vec<Held> {
        layer::apply(self.trace.sigma_at(step), &self.layer)
    }

    /// Σ changed: the state is rebuilt on the next question.
    fn invalidate(&mut self) {
        self.state = None;
    }

    fn state_mut(&mut self) -> Result<&mut BeliefState, ReplError> {
        self.ensure_state()?;
        self.state
            .as_mut()
            .ok_or_else(|| ReplError::new("", "the belief state could not be built"))
    }

    /// Builds the belief state for Σ(step) with the layer applied, if it is not built.
    fn ensure_state(&mut self) -> Result<(), ReplError> {
        if self.state.is_some() {
            return Ok(());
        }
        self.held = self.sigma_held(self.step);
        self.members.clear();
        for h in &self.held {
            self.members
                .insert(h.belief.id.clone(), member_of(&h.belief, h.hand));
        }
        let (state, notes) = state_of(&self.held).map_err(|e| engine_error("", e))?;
        self.notes.extend(notes);
        self.state = Some(state);
        Ok(())
    }

    fn current_members(&self) -> Vec<Member> {
        self.held
            .iter()
            .filter_map(|h| self.members.get(&h.belief.id).cloned())
            .collect()
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
}

/// A belief state holding `held`, in its order, and notes on the beliefs it could not hold.
fn state_of(held: &[Held]) -> Result<(BeliefState, Vec<String>), EngineError> {
    let mut state = BeliefState::new()?;
    let mut notes = Vec::new();
    for h in held {
        let b = &h.belief;
        let spec = BeliefSpec::new(b.id.clone(), b.formula.clone())
            .role(b.role)
            .confidence(b.confidence)
            .step(b.step);
        let res = match state.add(spec.clone()) {
            // The agent held a rule that contradicts its other rules: Σ as the agent held it
            // is inconsistent, and the REPL shows that rather than refusing the rule (the
            // audit's recomputation mirrors it the same way).
            Err(EngineError::HardConflict(_)) => state.add(spec.role(Role::Assumption)),
            other => other,
        };
        if let Err(e) = res {
            notes.push(format!(
                "belief {} (step {}) not loaded: {e}",
                sanitize(&b.id),
                b.step
            ));
        }
    }
    Ok((state, notes))
}

fn member_of(b: &TraceBelief, hand: bool) -> Member {
    Member {
        id: b.id.clone(),
        formula: b.formula.to_string(),
        step: b.step,
        source: b.source.clone(),
        role: b.role,
        confidence: b.confidence,
        hand,
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
            Formula::Atom(Atom::Value(v)) => {
                out.insert(v.key.clone());
            }
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
