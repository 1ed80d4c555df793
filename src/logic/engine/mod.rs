//! Belief states: one incremental SAT solver per state, on its own thread.
//!
//! # Design
//!
//! A belief state Σ is a list of beliefs (id, ground formula, role, confidence, step). Each
//! formula is Tseitin-encoded ([`crate::logic::cnf`]) into permanent definition clauses with a
//! definition literal `t_φ`. What makes a belief *count* depends on its role:
//!
//! * Every belief, rules and norms included, gets a *selector* variable `s` and the clauses
//!   `¬s ∨ t_φ`; Σ is "the active selectors", passed to varisat as assumptions on every
//!   solve. Retracting retires `s` with the unit `¬s`, after which varisat drops the guarded
//!   clauses. Each new level-0 unit makes varisat re-simplify its whole clause database on
//!   the next solve, so retired selectors wait, assumed false, and become units in batches.
//! * **Rules and norms** are never retracted by revision, and are refused when they
//!   contradict the rules and norms already held. They used to be hard clauses of the main
//!   solver, which made every retraction of one (a superseding announcement, a retraction by
//!   hand) rebuild that solver from the whole clause log, and needed a second *explain*
//!   solver to name them in conflicts; behind selectors they cost one assumption per solve
//!   (about 36 ns, measured) and the main solver explains everything itself.
//!
//! Gate checks (Θ, `entails`) run on a second solver, the *snapshot*: the same definitions
//! with every active belief as plain clauses, so varisat simplifies with Σ at level 0 instead
//! of replaying thousands of selector assumptions on every solve. The selectors of
//! unquantified beliefs never reach it (a SAT answer assigns every variable the solver knows,
//! so each idle selector there cost a decision on every solve). A retraction makes it stale;
//! the selector solver answers until enough calls have passed to pay for rebuilding it from
//! the clause log. With a cached model of Σ a check needs one SAT call in the common case:
//! whichever of Σ∧Δ / Σ∧¬Δ the model already satisfies needs no call. The other side often
//! needs none either: setting a few atoms of Δ in the model (and mending, a few levels deep,
//! the beliefs that falsifies) usually yields a model of Σ with Δ's other value, checked by
//! evaluating every belief that mentions a changed atom (an index from atoms to beliefs
//! says which). So a `newinfo` verdict is usually two models and no solve; only
//! unsatisfiable sides (`entailed`, `contradiction`) always reach the solver. On the T1
//! workload this took the solves of an audit from 6,325 to about 2,500 and its instructions
//! from 1.89 G to 0.42 G (callgrind, whole process).
//!
//! Queries do not leave permanent free variables behind: only their subformulas get
//! definitions, and the top connective goes behind a *probe* literal (made only when that
//! side is actually solved, see `State::query`) that is retired (in
//! batches, since each new level-0 unit makes varisat re-simplify) after the query; a probe
//! whose formula is then announced becomes that belief's selector.
//!
//! Explanations (`why`, `supports`, `consistent`, conflict reports, refused rules) depend on
//! Σ (its active beliefs, in commitment order) and the question alone, never on what was
//! asked before: each runs on a throw-away solver (`Fresh`) built in a canonical order from
//! the beliefs atom-connected to the question (its *cone*; all of Σ where a conflict of Σ
//! itself may be the answer), and returns the *preferred* minimal set, the one deletion from
//! the back would keep (`preferred_mus`), which is defined by satisfiability alone. Before
//! any set is returned it is re-checked on another fresh solver holding only its members
//! (unsatisfiable with the question; satisfiable once any one member is dropped); a set that
//! fails is an [`EngineError::Internal`], never an answer. Whenever a subset of Σ is tested,
//! the selectors outside it are assumed false (left free, saved phases switch them on and a
//! propagation check becomes a search). The engine's own clause log is what rebuilds the
//! snapshot.
//!
//! Quantified beliefs are grounded over the active domain (contract §3): the constants and
//! witnesses of the active beliefs (each held in its witnessed form, its outer existentials
//! replaced by witnesses of its own), counted as beliefs come and go, plus those of the
//! request's formula, or the anonymous individual when there are none
//! ([`crate::logic::ground`]). They sit behind a
//! selector even when they are rules: when a request needs another domain than the one they
//! are grounded over (growing or shrinking), each is re-grounded under a fresh selector (∃
//! gets weaker as the domain grows, which no added clause can express) and the old one is
//! retired. Propositional states never compute a domain.
//!
//! varisat's `failed_core()` is occasionally invalid in long incremental runs, so every core
//! is validated by a re-solve ([`Sat::validated_core`](crate::logic::solver::Sat::validated_core)) or used only as a hint that is solved
//! again. Solves cannot be interrupted from outside, but every solver stops
//! itself at the request's deadline through its proof writer ([`Stop`](crate::logic::solver::Stop)), so a request runs on
//! the caller's own thread when it can and on a dedicated solver thread ([`Worker`](crate::logic::solver::Worker)) when it
//! must (see [`BeliefState`], the `Send` handle). On an overrun it answers
//! [`EngineError::Timeout`] and rebuilds the state from its own copy of the beliefs. Variable
//! and clause counts are capped before a formula is encoded.
//!
//! # Where things are
//!
//! Every operation is a method of [`State`], in the file of its kind, and one line of
//! [`Handle`] shared by both handles:
//!
//! - `mod.rs` (here): the design and the public result types;
//! - `state.rs`: [`State`], the clause log, grounding, probes, `add`/`retract`;
//! - `snapshot.rs`: the snapshot solver, the cached model, the gate (`check`, `entails`);
//! - `explain.rs`: `consistent`, `why`, `supports`, `whynot` and the minimal-set searches;
//! - `revise.rs` ([`revise`], also `logic::revise`): revision policies and `announce`;
//! - `grade.rs` ([`grade`], also `logic::grade`): possibilistic grades;
//! - `handle.rs`: [`BeliefState`], where its requests run, the deadline and the rebuild;
//! - `local.rs`: the recomputation's handle, on its own big-stack thread.
//!
//! # Example
//!
//! ```
//! use doxascope::logic::engine::{BeliefSpec, BeliefState, Outcome, Role};
//! use doxascope::logic::formula::{Atom, Formula};
//!
//! let p = |s: &str| Formula::Atom(Atom::Prop(s.into()));
//! let mut sigma = BeliefState::new().unwrap();
//! sigma.add(BeliefSpec::new("r1", Formula::Implies(Box::new(p("rain")), Box::new(p("wet"))))
//!     .role(Role::Rule)).unwrap();
//! sigma.add(BeliefSpec::new("f1", p("rain")).step(3)).unwrap();
//! assert_eq!(sigma.check(&p("wet"), None).unwrap().outcome, Outcome::Entailed);
//! assert_eq!(sigma.check(&Formula::Not(Box::new(p("wet"))), None).unwrap().outcome,
//!            Outcome::Contradiction);
//! let why = sigma.why(&p("wet")).unwrap();
//! assert_eq!(why.support, vec!["r1".to_string(), "f1".to_string()]);
//! ```

pub mod corrections;
mod explain;
pub mod grade;
mod handle;
mod local;
pub mod revise;
mod snapshot;
mod state;

use std::sync::Arc;
use std::time::Duration;

use crate::logic::cnf::CnfError;
use crate::logic::formula::Atom;
use crate::logic::formula::Formula;
use crate::logic::ground::{self, GroundError};
use crate::logic::solver::SolveError;

pub use handle::{BeliefState, Handle, Shared};
pub(crate) use local::{LocalEngine, run_with_stack};
pub use state::State;

/// What a belief is, which decides how it is stored and whether revision may drop it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Role {
    /// An observed or told fact (retractable).
    #[default]
    Fact,
    /// A rule (hard once accepted; never retracted by revision).
    Rule,
    /// A norm (hard once accepted; never retracted; conflicts are norm violations).
    Norm,
    /// An explicit assumption (retractable).
    Assumption,
}

impl Role {
    /// Rules and norms are hard; facts and assumptions are retractable.
    pub fn is_hard(self) -> bool {
        matches!(self, Role::Rule | Role::Norm)
    }
}

/// A belief to add to a state.
#[derive(Debug, Clone, PartialEq)]
pub struct BeliefSpec {
    /// The belief id results refer to.
    pub id: String,
    /// The ground formula, shared: the state, its handle's replica and the model's mirror
    /// of Σ each hold every belief, and a formula is the larger part of one.
    pub formula: Arc<Formula>,
    /// Its role.
    pub role: Role,
    /// Confidence in (0, 1]; 1 when not graded.
    pub confidence: f64,
    /// The trace step it was committed at (recency for revision).
    pub step: u64,
}

impl BeliefSpec {
    /// A fact with confidence 1 at step 0.
    pub fn new(id: impl Into<String>, formula: Formula) -> Self {
        BeliefSpec {
            id: id.into(),
            formula: Arc::new(formula),
            role: Role::Fact,
            confidence: 1.0,
            step: 0,
        }
    }

    /// Sets the role.
    pub fn role(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// Sets the confidence.
    pub fn confidence(mut self, c: f64) -> Self {
        self.confidence = c;
        self
    }

    /// Sets the step.
    pub fn step(mut self, step: u64) -> Self {
        self.step = step;
        self
    }
}

/// Caps and the per-request timeout. The caps are checked against an upper bound of what
/// encoding a formula adds ([`cnf::size_bound`](crate::logic::cnf::size_bound)), before anything is encoded, so a formula
/// over a cap costs no solver memory (`docs/reliability.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Maximum number of SAT variables in one state.
    pub max_vars: usize,
    /// Maximum number of clauses in one state.
    pub max_clauses: usize,
    /// Maximum number of SAT variables one formula may add.
    pub max_formula_vars: usize,
    /// Maximum number of clauses one formula may add.
    pub max_formula_clauses: usize,
    /// How long a caller waits for any one request.
    pub timeout: Duration,
    /// Maximum quantifier instances when grounding one formula.
    pub ground_cap: u64,
}

/// The default cap on the variables, and on the clauses, one formula may add: a little over
/// what a conjunction or disjunction of 1,000,000 atoms, or a CNF of 200,000 three-literal
/// clauses, needs.
pub const MAX_FORMULA_SIZE: usize = 2_500_000;

/// The default cap on the variables, and on the clauses, of one state (every formula encoded
/// into it since it was created or last rebuilt, queries included).
pub const MAX_STATE_SIZE: usize = 5_000_000;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_vars: MAX_STATE_SIZE,
            max_clauses: MAX_STATE_SIZE,
            max_formula_vars: MAX_FORMULA_SIZE,
            max_formula_clauses: MAX_FORMULA_SIZE,
            timeout: Duration::from_secs(10),
            ground_cap: ground::DEFAULT_INSTANCE_CAP,
        }
    }
}

/// An engine failure. `Timeout` is the "unknown (timeout)" answer.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineError {
    /// The request did not finish before the deadline; the answer is unknown. The state was
    /// rebuilt and stays usable.
    Timeout,
    /// The solver thread died (an engine bug); the state was rebuilt.
    Crashed,
    /// Adding the formula would exceed a cap.
    TooLarge {
        /// `"variables"` or `"clauses"` (of the state), or `"variables in one formula"` or
        /// `"clauses in one formula"`.
        what: &'static str,
        /// The count the state would reach.
        needed: usize,
        /// The cap.
        cap: usize,
    },
    /// The formula has quantifiers where a ground formula was required.
    Quantified,
    /// Grounding the formula over the active domain was refused.
    Ground(GroundError),
    /// A confidence outside (0, 1].
    BadConfidence(f64),
    /// No active belief has this id.
    UnknownId(String),
    /// The rule or norm contradicts the rules and norms already held (ids of a minimal
    /// conflicting set, the new one included).
    HardConflict(Vec<String>),
    /// An internal consistency check failed (an answer could not be validated).
    Internal(String),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Timeout => write!(f, "unknown (timeout)"),
            EngineError::Crashed => write!(f, "the solver thread failed; the state was rebuilt"),
            EngineError::TooLarge { what, needed, cap } => {
                write!(
                    f,
                    "too large: {needed} {what} would exceed the cap of {cap}"
                )
            }
            EngineError::Quantified => write!(f, "the formula contains a quantifier"),
            EngineError::Ground(e) => write!(f, "{e}"),
            EngineError::BadConfidence(c) => write!(f, "confidence {c} is not in (0, 1]"),
            EngineError::UnknownId(id) => write!(f, "no active belief with id {id:?}"),
            EngineError::HardConflict(ids) => {
                write!(f, "contradicts the rules and norms: {}", ids.join(", "))
            }
            EngineError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for EngineError {}

impl From<SolveError> for EngineError {
    fn from(e: SolveError) -> Self {
        match e {
            SolveError::Cancelled => EngineError::Timeout,
            SolveError::Solver(m) => EngineError::Internal(m),
        }
    }
}

impl From<GroundError> for EngineError {
    fn from(e: GroundError) -> Self {
        EngineError::Ground(e)
    }
}

impl From<CnfError> for EngineError {
    fn from(_: CnfError) -> Self {
        EngineError::Quantified
    }
}

/// Θ(Σ, Δ) and its refinement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Σ ∧ Δ is unsatisfiable.
    Contradiction,
    /// Σ ⊨ Δ (and the cited premises, if any, entail Δ).
    Entailed,
    /// Consistent and not entailed (and the cited premises, if any, entail Δ).
    NewInfo,
    /// Consistent, but the cited premises plus all rules and norms do not entail Δ.
    Ungrounded,
}

impl Outcome {
    /// The contract name (`contradiction`, `entailed`, `newinfo`, `ungrounded`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Contradiction => "contradiction",
            Outcome::Entailed => "entailed",
            Outcome::NewInfo => "newinfo",
            Outcome::Ungrounded => "ungrounded",
        }
    }
}

/// The result of a gate check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The outcome, `Ungrounded` included.
    pub outcome: Outcome,
    /// The plain three-way Θ(Σ, Δ) (never `Ungrounded`).
    pub theta: Outcome,
    /// Cited ids that are not active beliefs (they count as not cited).
    pub missing_citations: Vec<String>,
}

/// The answer of `entails`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entails {
    /// Σ ⊨ φ.
    Entailed,
    /// Σ ⊨ ¬φ.
    Contradicted,
    /// Neither.
    Unknown,
}

impl Entails {
    /// The contract name.
    pub fn as_str(self) -> &'static str {
        match self {
            Entails::Entailed => "entailed",
            Entails::Contradicted => "contradicted",
            Entails::Unknown => "unknown",
        }
    }
}

/// The result of `entails`.
#[derive(Debug, Clone, PartialEq)]
pub struct Entailment {
    /// Entailed / contradicted / unknown. When Σ is inconsistent everything is entailed and
    /// this says `Entailed` with `sigma_consistent == false`.
    pub result: Entails,
    /// N(φ), the necessity degree, when Σ is graded (some confidence below 1).
    pub degree: Option<f64>,
    /// Whether Σ is consistent.
    pub sigma_consistent: bool,
}

/// The result of `consistent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consistency {
    /// Whether Σ is satisfiable.
    pub consistent: bool,
    /// When not: the ids of a minimal conflicting subset (rules and norms included).
    pub conflict: Vec<String>,
}

/// One minimal support ("why").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Why {
    /// Whether Σ ⊨ φ at all.
    pub entailed: bool,
    /// Ids of a subset-minimal set of beliefs entailing φ (empty if not entailed, or if φ is
    /// valid).
    pub support: Vec<String>,
}

/// All minimal supports, possibly capped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Supports {
    /// Each a subset-minimal set of belief ids entailing φ.
    pub supports: Vec<Vec<String>>,
    /// True when these are provably all of them.
    pub complete: bool,
}

/// A countermodel ("why not").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhyNot {
    /// `None` when Σ ⊨ φ (no countermodel exists). Otherwise an assignment satisfying
    /// Σ ∧ ¬φ, projected on the atoms of φ and of the beliefs sharing atoms with φ.
    pub countermodel: Option<Vec<(Atom, bool)>>,
}

/// What an add did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// A new belief.
    New,
    /// The same formula under the same id (and role) was already active: the record was
    /// overwritten with the new step and confidence (seed 000: an update overwrites the
    /// record of the same proposition); it keeps its place in the commitment order.
    Merged,
}
