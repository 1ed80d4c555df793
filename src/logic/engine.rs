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
//! whichever of Σ∧Δ / Σ∧¬Δ the model already satisfies needs no call.
//!
//! Queries do not leave permanent free variables behind: only their subformulas get
//! definitions, and the top connective goes behind a *probe* literal (made only when that
//! side is actually solved, see `State::query`) that is retired (in
//! batches, since each new level-0 unit makes varisat re-simplify) after the query; a probe
//! whose formula is then announced becomes that belief's selector.
//!
//! Explanations (`why`, `supports`, `consistent`, conflict reports, refused rules) depend on
//! Σ (its active beliefs, in commitment order) and the question alone, never on what was
//! asked before: each runs on a throw-away solver ([`Fresh`]) built in a canonical order from
//! the beliefs atom-connected to the question (its *cone*; all of Σ where a conflict of Σ
//! itself may be the answer), and returns the *preferred* minimal set, the one deletion from
//! the back would keep ([`preferred_mus`]), which is defined by satisfiability alone. Before
//! any set is returned it is re-checked on another fresh solver holding only its members
//! (unsatisfiable with the question; satisfiable once any one member is dropped); a set that
//! fails is an [`EngineError::Internal`], never an answer. Whenever a subset of Σ is tested,
//! the selectors outside it are assumed false (left free, saved phases switch them on and a
//! propagation check becomes a search). The engine's own clause log is what rebuilds the
//! snapshot.
//!
//! Quantified beliefs are grounded over the active domain (contract §3): the constants of the
//! active beliefs, counted as beliefs come and go, plus those of the request's formula, or the
//! anonymous individual when there are none ([`crate::logic::ground`]). They sit behind a
//! selector even when they are rules: when a request needs another domain than the one they
//! are grounded over (growing or shrinking), each is re-grounded under a fresh selector (∃
//! gets weaker as the domain grows, which no added clause can express) and the old one is
//! retired. Propositional states never compute a domain.
//!
//! varisat's `failed_core()` is occasionally invalid in long incremental runs, so every core
//! is validated by a re-solve ([`Sat::validated_core`]) or used only as a hint that is solved
//! again. Solves cannot be interrupted from outside, but every solver stops
//! itself at the request's deadline through its proof writer ([`Stop`]), so a request runs on
//! the caller's own thread when it can and on a dedicated solver thread ([`Worker`]) when it
//! must (see [`BeliefState`], the `Send` handle). On an overrun it answers
//! [`EngineError::Timeout`] and rebuilds the state from its own copy of the beliefs. Variable
//! and clause counts are capped before a formula is encoded.
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

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use varisat::Lit;

use crate::logic::cnf::{self, CnfError, Tseitin};
use crate::logic::formula::MAX_DEPTH;
use crate::logic::formula::{Atom, Formula};
use crate::logic::ground::{self, GroundError};
use crate::logic::revise::{Policy, Revision};
use crate::logic::solver::{Overrun, Sat, SolveError, Stop, Worker};

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
    /// The ground formula.
    pub formula: Formula,
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
            formula,
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
/// encoding a formula adds ([`cnf::size_bound`]), before anything is encoded, so a formula
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

/// A clause-log entry: which solver(s) a clause belongs to.
#[derive(Debug, Clone)]
enum Entry {
    /// Every solver (definitions, probes).
    Both(Vec<Lit>),
    /// Selector clauses of unquantified beliefs (rules and norms included) and their
    /// retirement units: main solver only, not the snapshot, which holds those beliefs
    /// unguarded (a selector there would only be one more free variable for every solve to
    /// decide).
    Guard(Vec<Lit>),
    /// Unguarded clauses of an unquantified belief: snapshot solver only, dead once the
    /// belief is retracted.
    Snap(Vec<Lit>, usize),
}

/// A formula prepared for assumption: see [`State::query`]. Its two sides are read with
/// [`State::pos`] and [`State::neg`].
#[derive(Debug)]
pub(crate) struct Query {
    /// What makes the formula true; a clause side becomes a probe when first read.
    pos: Side,
    /// What makes the formula false; likewise.
    neg: Side,
    probes: Vec<Lit>,
    /// The probe standing for the true side, if one was made.
    pos_probe: Option<Lit>,
    /// The ground formula.
    pub(crate) formula: Formula,
}

/// How many dead probes are retired at once.
const PROBE_BATCH: usize = 64;

/// How many retracted selectors wait, assumed false, before their retirement units are
/// added: like probe retirements, each level-0 unit makes varisat re-simplify the whole main
/// solver on its next solve, while a waiting selector costs one assumption per solve.
const RETIRE_BATCH: usize = 64;

/// Clause sides up to this long are split into one call per literal instead of a probe
/// ([`State::sat_side`]).
const SPLIT_MAX: usize = 4;

/// One side of a formula: all of these literals, or one clause of them.
#[derive(Debug)]
enum Side {
    Units(Vec<Lit>),
    Clause(Vec<Lit>),
}

/// A belief as stored on the solver thread.
#[derive(Debug, Clone)]
pub(crate) struct Belief {
    pub(crate) spec: BeliefSpec,
    pub(crate) sel: Lit,
    pub(crate) active: bool,
    pub(crate) seq: u64,
    /// The grounding over the current domain, for a quantified formula.
    pub(crate) ground: Option<Formula>,
    /// The constants of the formula as given (its share of the active domain).
    consts: Vec<String>,
}

impl Belief {
    /// The ground formula the solver holds for this belief.
    pub(crate) fn formula(&self) -> &Formula {
        self.ground.as_ref().unwrap_or(&self.spec.formula)
    }
}

/// The unquantified rules and norms alone, each behind its own selector, on a solver of their
/// own: what a new rule or norm is checked against before it is accepted. On the main solver
/// that check had to switch off every other selector of Σ, thousands of assumptions per
/// solve (measured: a tenth of an audit's solver time); here it assumes just the active
/// rules. A satisfiable answer is final; an unsatisfiable one (or any quantified belief, whose
/// grounding this solver does not follow) sends the check to the main solver, which also
/// names the conflict.
struct Rules {
    enc: Tseitin,
    sat: Sat,
    /// (belief index, selector) of the active unquantified rules and norms, oldest first.
    active: Vec<(usize, Lit)>,
}

impl Rules {
    fn new(cancel: Arc<Stop>) -> Self {
        Rules {
            enc: Tseitin::new(),
            sat: Sat::new(cancel),
            active: Vec::new(),
        }
    }

    /// The definition literal of `f`, its definitions added.
    fn encode(&mut self, f: &Formula) -> Result<Lit, EngineError> {
        let mut cls: Vec<Vec<Lit>> = Vec::new();
        let t = self.enc.encode(f, &mut cls)?;
        for c in &cls {
            self.sat.add_clause(c);
        }
        Ok(t)
    }

    /// Whether the active rules and norms together with `f` are satisfiable.
    fn fit(&mut self, f: &Formula) -> Result<bool, EngineError> {
        let t = self.encode(f)?;
        let mut a: Vec<Lit> = self.active.iter().map(|&(_, s)| s).collect();
        a.push(t);
        Ok(self.sat.solve(&a)?)
    }

    fn add(&mut self, idx: usize, f: &Formula) -> Result<(), EngineError> {
        let t = self.encode(f)?;
        let s = self.enc.fresh_var().positive();
        self.sat.add_clause(&[!s, t]);
        self.active.push((idx, s));
        Ok(())
    }

    fn retract(&mut self, idx: usize) {
        if let Some(k) = self.active.iter().position(|&(i, _)| i == idx) {
            let (_, s) = self.active.remove(k);
            // A free retired selector could be switched on by a saved phase; the unit keeps
            // it off (this solver is small, so re-simplifying it costs little).
            self.sat.add_clause(&[!s]);
        }
    }
}

/// The state living on the solver thread. All operations are methods here; the
/// [`BeliefState`] handle ships them over.
pub struct State {
    pub(crate) enc: Tseitin,
    pub(crate) main: Sat,
    rules: Rules,
    log: Vec<Entry>,
    pub(crate) beliefs: Vec<Belief>,
    by_id: HashMap<String, usize>,
    /// A model of the current Σ on the main solver, indexed by variable.
    model: Option<Vec<bool>>,
    assumptions: Option<Vec<Lit>>,
    cancel: Arc<Stop>,
    limits: Limits,
    seq: u64,
    dead_probes: Vec<Lit>,
    /// Selectors of retracted unquantified beliefs whose unit `¬s` is not yet in
    /// the log (the main solver assumes it until then; see [`RETIRE_BATCH`]).
    dead_sels: Vec<Lit>,
    /// Probes that became selectors of unquantified beliefs (belief index): the snapshot
    /// holds those beliefs unguarded, so there they are retired with the next probe batch.
    snap_retire: Vec<(Lit, usize)>,
    last_probe: Option<(Formula, Lit)>,
    /// How many active beliefs mention each constant: the domain of Σ, kept up to date on
    /// every add and retraction so that a request only adds its own constants.
    consts: BTreeMap<String, u32>,
    /// The domain the active quantified beliefs are grounded over.
    grounded_over: Vec<String>,
    /// Number of active quantified beliefs (0: no request needs a domain).
    quantified_active: usize,
    /// Σ as plain clauses (None after a retraction until rebuilt); see [`State::sat_with`].
    snap: Option<Sat>,
    dirty_calls: usize,
    /// Number of quantified beliefs ever added (0: no selector to assume on the snapshot).
    quantified: usize,
    clauses: usize,
    scratch: Vec<Vec<Lit>>,
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

impl State {
    /// An empty state whose solvers stop when `cancel` says so.
    pub fn new(cancel: Arc<Stop>, limits: Limits) -> Self {
        let snap = Some(Sat::new(Arc::clone(&cancel)));
        State {
            enc: Tseitin::new(),
            main: Sat::new(cancel.clone()),
            rules: Rules::new(cancel.clone()),
            log: Vec::new(),
            beliefs: Vec::new(),
            by_id: HashMap::new(),
            model: None,
            assumptions: None,
            cancel,
            limits,
            seq: 0,
            dead_probes: Vec::new(),
            dead_sels: Vec::new(),
            snap_retire: Vec::new(),
            last_probe: None,
            consts: BTreeMap::new(),
            grounded_over: Vec::new(),
            quantified_active: 0,
            snap,
            dirty_calls: 0,
            quantified: 0,
            clauses: 0,
            scratch: Vec::new(),
        }
    }

    /// Encodes `f` into permanent definitions (both solvers) and returns its literal.
    pub(crate) fn encode(&mut self, f: &Formula) -> Result<Lit, EngineError> {
        self.reserve(f)?;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let lit = self.enc.encode(f, &mut scratch);
        for c in scratch.drain(..) {
            self.push(Entry::Both(c));
        }
        self.scratch = scratch;
        Ok(lit?)
    }

    /// Refuses `f` when encoding it (plus a selector clause per conjunct) could exceed the
    /// variable or clause cap. Checked before anything is added.
    fn reserve(&self, f: &Formula) -> Result<(), EngineError> {
        let mut bound = cnf::size_bound(f);
        if let Formula::And(cs) = f {
            bound.clauses += cs.len();
        }
        if bound.vars > self.limits.max_formula_vars {
            return Err(EngineError::TooLarge {
                what: "variables in one formula",
                needed: bound.vars,
                cap: self.limits.max_formula_vars,
            });
        }
        if bound.clauses > self.limits.max_formula_clauses {
            return Err(EngineError::TooLarge {
                what: "clauses in one formula",
                needed: bound.clauses,
                cap: self.limits.max_formula_clauses,
            });
        }
        let vars = self.enc.num_vars() + bound.vars;
        if vars > self.limits.max_vars {
            return Err(EngineError::TooLarge {
                what: "variables",
                needed: vars,
                cap: self.limits.max_vars,
            });
        }
        let clauses = self.clauses + bound.clauses;
        if clauses > self.limits.max_clauses {
            return Err(EngineError::TooLarge {
                what: "clauses",
                needed: clauses,
                cap: self.limits.max_clauses,
            });
        }
        Ok(())
    }

    /// Prepares a formula for assuming it true (`pos`) or false (`neg`) on top of Σ.
    ///
    /// Only the subformulas get permanent definitions. The top connective is handled by
    /// shape so that queries add no permanent free variable (every free variable costs on
    /// every later solve): a conjunction is assumed true as its conjuncts and a disjunction
    /// false as its negated disjuncts; the other side (one clause) goes behind a fresh
    /// *probe* literal `q` with the clause `¬q ∨ …`, retired by [`State::finish`] with the
    /// unit `¬q` so varisat deletes it.
    ///
    /// The probe is made only when that side is first read ([`State::pos`], [`State::neg`]):
    /// the gate usually decides one side from the cached model, and for a clause Δ that is
    /// the true side, so most checks of a clause make no probe at all (each probe is a free
    /// variable until retired and each retirement a level-0 unit that makes varisat
    /// re-simplify its clause database).
    pub(crate) fn query(&mut self, f: &Formula) -> Result<Query, EngineError> {
        let g = self.ground(f)?;
        let f = g.as_ref().unwrap_or(f);
        self.reserve(f)?;
        let (pos, neg) = self.shape(f)?;
        Ok(Query {
            pos,
            neg,
            probes: Vec::new(),
            pos_probe: None,
            formula: f.clone(),
        })
    }

    /// The assumptions making the query true.
    pub(crate) fn pos<'q>(&mut self, q: &'q mut Query) -> &'q [Lit] {
        if let Side::Clause(c) = &mut q.pos {
            let c = std::mem::take(c);
            let (lits, probe) = self.side_lits(c);
            q.pos_probe = probe;
            q.probes.extend(probe);
            q.pos = Side::Units(lits);
        }
        match &q.pos {
            Side::Units(l) | Side::Clause(l) => l,
        }
    }

    /// The assumptions making the query false.
    pub(crate) fn neg<'q>(&mut self, q: &'q mut Query) -> &'q [Lit] {
        if let Side::Clause(c) = &mut q.neg {
            let c = std::mem::take(c);
            let (lits, probe) = self.side_lits(c);
            q.probes.extend(probe);
            q.neg = Side::Units(lits);
        }
        match &q.neg {
            Side::Units(l) | Side::Clause(l) => l,
        }
    }

    /// The domain a request about `f` needs: the constants of the active beliefs and of `f`
    /// (contract §3; empty means the anonymous individual, see [`crate::logic::ground`]).
    fn domain_with(&self, f: Option<&Formula>) -> Vec<String> {
        let mut extra = BTreeSet::new();
        if let Some(f) = f {
            ground::constants(f, &mut extra);
        }
        extra.retain(|c| !self.consts.contains_key(c));
        if extra.is_empty() {
            return self.consts.keys().cloned().collect();
        }
        let mut d: BTreeSet<String> = extra;
        d.extend(self.consts.keys().cloned());
        d.into_iter().collect()
    }

    /// Brings the active quantified beliefs to the domain Σ alone needs (requests without a
    /// formula of their own: `consistent`, the grades).
    pub(crate) fn sync_active(&mut self) -> Result<(), EngineError> {
        if self.quantified_active == 0 {
            return Ok(());
        }
        let d = self.domain_with(None);
        self.sync_domain(d)
    }

    fn sync_domain(&mut self, domain: Vec<String>) -> Result<(), EngineError> {
        if domain != self.grounded_over {
            if self.quantified_active > 0 {
                self.reground(&domain)?;
            }
            self.grounded_over = domain;
        }
        Ok(())
    }

    /// Grounds `f` over the domain of Σ and `f` (re-grounding the quantified beliefs when that
    /// domain differs from the one they are grounded over, growing or shrinking), or `None`
    /// when `f` has no quantifier. Without quantified beliefs and without a quantifier in `f`
    /// nothing is computed: propositional traces pay one walk of `f` for this.
    fn ground(&mut self, f: &Formula) -> Result<Option<Formula>, EngineError> {
        let quantified = ground::has_quantifier(f);
        if self.quantified_active == 0 && !quantified {
            return Ok(None);
        }
        let domain = self.domain_with(Some(f));
        self.sync_domain(domain)?;
        if !quantified {
            return Ok(None);
        }
        Ok(Some(ground::ground(
            f,
            &self.grounded_over,
            self.limits.ground_cap,
        )?))
    }

    /// Re-grounds every active quantified belief over `domain`. `∃` gets weaker when the
    /// domain grows (and `∀` when it shrinks), which no added clause can express, so each one
    /// moves to a fresh selector with its new grounding and the old selector is retired.
    fn reground(&mut self, domain: &[String]) -> Result<(), EngineError> {
        for i in 0..self.beliefs.len() {
            if !self.beliefs[i].active || self.beliefs[i].ground.is_none() {
                continue;
            }
            let g = ground::ground(
                &self.beliefs[i].spec.formula,
                domain,
                self.limits.ground_cap,
            )?;
            if Some(&g) == self.beliefs[i].ground.as_ref() {
                continue;
            }
            self.reserve(&g)?;
            let old = self.beliefs[i].sel;
            let sel = self.enc.fresh_var().positive();
            for c in self.guarded_clauses(&g, Some(sel))? {
                self.push(Entry::Both(c));
            }
            self.push(Entry::Both(vec![!old]));
            self.beliefs[i].sel = sel;
            self.beliefs[i].ground = Some(g);
        }
        self.model = None;
        self.assumptions = None;
        Ok(())
    }

    /// Retires the probes of a query.
    ///
    /// Retirement is batched: every new level-0 unit makes varisat re-simplify its whole
    /// clause database on the next solve (measured: the dominant cost per gate check when
    /// each probe was retired at once), while a few dozen dead probes cost a decision each.
    /// The true-side probe of the last query stays reusable as the selector of the same
    /// formula (the gate-then-add pattern of `announce`).
    pub(crate) fn finish(&mut self, q: Query) {
        self.last_probe = q.pos_probe.map(|p| (q.formula, p));
        self.dead_probes.extend(q.probes);
        if self.dead_probes.len() >= PROBE_BATCH {
            self.flush_probes();
        }
        self.sync_disabled();
    }

    /// Dead probes are assumed false on every solve until retired: left free, phase saving
    /// can set one true and make its clause a live constraint.
    fn sync_disabled(&mut self) {
        let off: Vec<Lit> = self.dead_probes.iter().map(|&p| !p).collect();
        if let Some(sn) = &mut self.snap {
            sn.set_disabled(off);
        }
        let off = self.main_disabled();
        self.main.set_disabled(off);
    }

    /// What the main solver assumes false on every solve until it is a unit:
    /// dead probes and retracted selectors.
    fn main_disabled(&self) -> Vec<Lit> {
        self.dead_probes
            .iter()
            .chain(&self.dead_sels)
            .map(|&p| !p)
            .collect()
    }

    /// The main solver (one place to hang its upkeep on).
    pub(crate) fn main_sat(&mut self) -> &mut Sat {
        &mut self.main
    }

    fn flush_probes(&mut self) {
        self.last_probe = None;
        for p in std::mem::take(&mut self.dead_probes) {
            self.push(Entry::Both(vec![!p]));
        }
        for (p, b) in std::mem::take(&mut self.snap_retire) {
            self.push(Entry::Snap(vec![!p], b));
        }
    }

    fn flush_sels(&mut self) {
        for s in std::mem::take(&mut self.dead_sels) {
            self.push(Entry::Guard(vec![!s]));
        }
    }

    /// A dead probe guarding exactly `f` (clause `¬q ∨ f`), if one is still unretired.
    fn take_probe(&mut self, f: &Formula) -> Option<Lit> {
        let (g, q) = self.last_probe.take()?;
        if g != *f {
            return None;
        }
        let i = self.dead_probes.iter().position(|&p| p == q)?;
        self.dead_probes.swap_remove(i);
        self.sync_disabled();
        Some(q)
    }

    /// (true side, false side) of `f` by its top connective.
    fn shape(&mut self, f: &Formula) -> Result<(Side, Side), EngineError> {
        let mut f = f;
        let mut negated = false;
        while let Formula::Not(g) = f {
            f = g;
            negated = !negated;
        }
        let (pos, neg) = match f {
            Formula::Or(cs) => {
                let lits = cs
                    .iter()
                    .map(|c| self.encode(c))
                    .collect::<Result<Vec<_>, _>>()?;
                let negs = lits.iter().map(|&l| !l).collect();
                (Side::Clause(lits), Side::Units(negs))
            }
            Formula::And(cs) => {
                let lits = cs
                    .iter()
                    .map(|c| self.encode(c))
                    .collect::<Result<Vec<_>, _>>()?;
                let negs = lits.iter().map(|&l| !l).collect();
                (Side::Units(lits), Side::Clause(negs))
            }
            Formula::Implies(a, b) => {
                let (la, lb) = (self.encode(a)?, self.encode(b)?);
                (Side::Clause(vec![!la, lb]), Side::Units(vec![la, !lb]))
            }
            _ => {
                let l = self.encode(f)?;
                (Side::Units(vec![l]), Side::Units(vec![!l]))
            }
        };
        Ok(if negated { (neg, pos) } else { (pos, neg) })
    }

    /// Assumption literals for a clause side: a probe guarding it (none for one literal).
    fn side_lits(&mut self, mut c: Vec<Lit>) -> (Vec<Lit>, Option<Lit>) {
        if c.len() == 1 {
            return (c, None);
        }
        let q = self.enc.fresh_var().positive();
        c.insert(0, !q);
        self.push(Entry::Both(c));
        (vec![q], Some(q))
    }

    /// The clauses saying "`guard` implies `f`" (`guard` = None: `f` holds outright).
    fn guarded_clauses(
        &mut self,
        f: &Formula,
        guard: Option<Lit>,
    ) -> Result<Vec<Vec<Lit>>, EngineError> {
        let (pos, _) = self.shape(f)?;
        let mut out: Vec<Vec<Lit>> = match pos {
            Side::Units(ls) => ls.into_iter().map(|l| vec![l]).collect(),
            Side::Clause(c) => vec![c],
        };
        if let Some(g) = guard {
            for c in &mut out {
                c.insert(0, !g);
            }
        }
        Ok(out)
    }

    fn push(&mut self, e: Entry) {
        let (Entry::Both(c) | Entry::Guard(c) | Entry::Snap(c, _)) = &e;
        if c.len() > cnf::MAX_CLAUSE {
            // A long clause is cut into a chain (see `cnf::MAX_CLAUSE`).
            let mut parts: Vec<Vec<Lit>> = Vec::new();
            self.enc.add_chained(c, &mut parts);
            for p in parts {
                self.push(match &e {
                    Entry::Both(_) => Entry::Both(p),
                    Entry::Guard(_) => Entry::Guard(p),
                    Entry::Snap(_, b) => Entry::Snap(p, *b),
                });
            }
            return;
        }
        self.clauses += 1;
        match &e {
            Entry::Both(c) => {
                self.main.add_clause(c);
                if let Some(s) = &mut self.snap {
                    s.add_clause(c);
                }
            }
            Entry::Guard(c) => self.main.add_clause(c),
            Entry::Snap(c, _) => {
                if let Some(s) = &mut self.snap {
                    s.add_clause(c);
                }
            }
        }
        self.log.push(e);
    }

    fn rebuild_snapshot(&mut self) {
        let mut sat = Sat::new(self.cancel.clone());
        sat.set_disabled(self.dead_probes.iter().map(|&p| !p).collect());
        for e in &self.log {
            match e {
                Entry::Both(c) => sat.add_clause(c),
                Entry::Snap(c, b) if self.beliefs[*b].active => sat.add_clause(c),
                _ => {}
            }
        }
        self.snap = Some(sat);
        self.dirty_calls = 0;
    }

    /// Whether the snapshot solver is current; after a retraction it is rebuilt once enough
    /// gate calls have gone to the selector solver to pay for the rebuild.
    fn snapshot_ready(&mut self) -> bool {
        if self.snap.is_some() {
            return true;
        }
        self.dirty_calls += 1;
        if self.dirty_calls > 8 + self.log.len() / 500 {
            self.rebuild_snapshot();
            return true;
        }
        false
    }

    /// The selectors of the active retractable beliefs (the main solver's assumptions).
    pub(crate) fn assumptions(&mut self) -> Vec<Lit> {
        if let Some(a) = &self.assumptions {
            return a.clone();
        }
        let a: Vec<Lit> = self
            .beliefs
            .iter()
            .filter(|b| b.active)
            .map(|b| b.sel)
            .collect();
        self.assumptions = Some(a.clone());
        a
    }

    /// Selectors of the active rules and norms: part of every "hard part" check.
    pub(crate) fn fixed_selectors(&self) -> Vec<Lit> {
        self.beliefs
            .iter()
            .filter(|b| b.active && b.spec.role.is_hard())
            .map(|b| b.sel)
            .collect()
    }

    /// Active belief indices in commitment order.
    pub(crate) fn active(&self) -> Vec<usize> {
        (0..self.beliefs.len())
            .filter(|&i| self.beliefs[i].active)
            .collect()
    }

    /// Index of the active belief with this id.
    pub(crate) fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id
            .get(id)
            .copied()
            .filter(|&i| self.beliefs[i].active)
    }

    fn store_model(&mut self, m: Option<Vec<Lit>>) {
        if let Some(m) = m {
            let mut vals = vec![false; self.enc.num_vars()];
            for l in m {
                if let Some(v) = vals.get_mut(l.index()) {
                    *v = l.is_positive();
                }
            }
            self.model = Some(vals);
        }
    }

    /// Evaluates `f` on the cached model of Σ (atoms absent from it read as false, which is
    /// sound because such atoms occur in no belief). `None` without a cached model.
    fn model_satisfies(&self, f: &Formula) -> Option<bool> {
        let m = self.model.as_ref()?;
        cnf::eval(f, &mut |a| {
            self.enc
                .atom_var(a)
                .and_then(|v| m.get(v.index()).copied())
                .unwrap_or(false)
        })
    }

    /// Main-solver solve under Σ plus `extra`; a satisfying model is cached when `keep`.
    ///
    /// Σ is answered by the *snapshot* solver when it is current: every active belief as
    /// plain clauses, so varisat simplifies with them at level 0 instead of replaying
    /// thousands of selector assumptions per solve (measured about 3x faster per check on the
    /// T1 workload in the research notes). A retraction invalidates it; until it is rebuilt the
    /// selector solver answers. Only quantified beliefs (re-grounded under new selectors when
    /// the domain grows) stay behind selectors there.
    pub(crate) fn sat_with(&mut self, extra: &[Lit], keep: bool) -> Result<bool, EngineError> {
        if self.snapshot_ready() {
            let mut a: Vec<Lit> = if self.quantified == 0 {
                Vec::new()
            } else {
                self.beliefs
                    .iter()
                    .filter(|b| b.active && b.ground.is_some())
                    .map(|b| b.sel)
                    .collect()
            };
            a.extend_from_slice(extra);
            let Some(snap) = self.snap.as_mut() else {
                return Err(EngineError::Internal("snapshot solver missing".into()));
            };
            let sat = snap.solve(&a)?;
            if sat && keep {
                let m = snap.model();
                self.store_model(m);
            }
            return Ok(sat);
        }
        let mut a = self.assumptions();
        a.extend_from_slice(extra);
        let sat = self.main_sat().solve(&a)?;
        if sat && keep {
            let m = self.main.model();
            self.store_model(m);
        }
        Ok(sat)
    }

    fn check_confidence(c: f64) -> Result<(), EngineError> {
        if c > 0.0 && c <= 1.0 {
            Ok(())
        } else {
            Err(EngineError::BadConfidence(c))
        }
    }

    /// Adds a belief (no gate, no revision). Rules and norms are checked against the hard
    /// part first and refused with [`EngineError::HardConflict`].
    pub fn add(&mut self, spec: BeliefSpec) -> Result<Added, EngineError> {
        self.add_inner(spec, true)
    }

    pub(crate) fn add_inner(
        &mut self,
        spec: BeliefSpec,
        check_hard: bool,
    ) -> Result<Added, EngineError> {
        Self::check_confidence(spec.confidence)?;
        let grounded = self.ground(&spec.formula)?;
        let f = grounded.as_ref().unwrap_or(&spec.formula).clone();
        self.reserve(&f)?;
        if let Some(i) = self.index_of(&spec.id) {
            let b = &mut self.beliefs[i];
            if b.spec.formula == spec.formula && b.spec.role == spec.role {
                // Seed 000: an update overwrites the record of the same proposition.
                b.spec.step = spec.step;
                b.spec.confidence = spec.confidence;
                return Ok(Added::Merged);
            }
        }
        // The rules-only solver settles the common case (the new rule fits); the main
        // solver decides the rest and names the conflict.
        let fits = spec.role.is_hard()
            && check_hard
            && grounded.is_none()
            && self.rules_fit(&f)? == Some(true);
        if spec.role.is_hard() && check_hard && !fits {
            let mut q = self.query(&f)?;
            let pos = self.pos(&mut q).to_vec();
            let mut a = self.fixed_selectors();
            a.extend_from_slice(&pos);
            let universe = self.assumptions();
            switch_off(&mut a, &universe);
            let ok = self.main_sat().solve(&a)?;
            if !ok {
                let mut conflict = self.hard_conflict(&pos, &f)?;
                conflict.push(spec.id.clone());
                self.finish(q);
                return Err(EngineError::HardConflict(conflict));
            }
            self.finish(q);
        }
        if let Some(i) = self.index_of(&spec.id) {
            self.retract_index(i);
        }
        let idx = self.beliefs.len();
        let reused = self.take_probe(&f);
        let sel = match reused {
            Some(q) => q,
            None => self.enc.fresh_var().positive(),
        };
        if let Some(q) = reused {
            // The probe's clause `¬q ∨ φ` is exactly the selector clause.
            if grounded.is_none() {
                self.snap_retire.push((q, idx));
            }
        } else if grounded.is_some() {
            for c in self.guarded_clauses(&f, Some(sel))? {
                self.push(Entry::Both(c));
            }
        } else {
            for c in self.guarded_clauses(&f, Some(sel))? {
                self.push(Entry::Guard(c));
            }
        }
        if grounded.is_some() {
            self.quantified += 1;
        }
        if grounded.is_none() {
            for c in self.guarded_clauses(&f, None)? {
                self.push(Entry::Snap(c, idx));
            }
        }
        if self.model_satisfies(&f) != Some(true) {
            self.model = None;
        }
        if spec.role.is_hard() && grounded.is_none() {
            self.rules.add(idx, &f)?;
        }
        self.by_id.insert(spec.id.clone(), idx);
        self.seq += 1;
        let consts = self.count_in(&spec.formula);
        if grounded.is_some() {
            self.quantified_active += 1;
        }
        self.beliefs.push(Belief {
            spec,
            sel,
            active: true,
            seq: self.seq,
            ground: grounded,
            consts,
        });
        self.assumptions = None;
        Ok(Added::New)
    }

    /// Whether the active rules and norms together with `f` (ground) are satisfiable, from
    /// the rules-only solver; `None` while quantified beliefs are held (that solver does not
    /// follow their grounding), when the main solver must answer.
    pub(crate) fn rules_fit(&mut self, f: &Formula) -> Result<Option<bool>, EngineError> {
        if self.quantified > 0 {
            return Ok(None);
        }
        Ok(Some(self.rules.fit(f)?))
    }

    /// A minimal set of active rules/norms that together with `f` (ground, made true) is
    /// unsatisfiable: the preferred one among the rules and norms atom-connected to `f`.
    fn hard_conflict(&mut self, lits: &[Lit], f: &Formula) -> Result<Vec<String>, EngineError> {
        let hard: Vec<usize> = self
            .active()
            .into_iter()
            .filter(|&i| self.beliefs[i].spec.role.is_hard())
            .collect();
        let members = self.cone(&[f], &hard);
        let m = self.explain(&[(f, true)], lits, &members)?;
        Ok(self.names(&m.unwrap_or_default()))
    }

    /// Counts the constants of a belief's formula into the domain; returns them.
    fn count_in(&mut self, f: &Formula) -> Vec<String> {
        let mut cs = BTreeSet::new();
        ground::constants(f, &mut cs);
        for c in &cs {
            *self.consts.entry(c.clone()).or_default() += 1;
        }
        cs.into_iter().collect()
    }

    pub(crate) fn retract_index(&mut self, i: usize) {
        if !self.beliefs[i].active {
            return;
        }
        self.beliefs[i].active = false;
        for c in &self.beliefs[i].consts {
            if let Some(n) = self.consts.get_mut(c) {
                *n -= 1;
                if *n == 0 {
                    self.consts.remove(c);
                }
            }
        }
        if self.beliefs[i].ground.is_some() {
            self.quantified_active -= 1;
        }
        let sel = self.beliefs[i].sel;
        self.assumptions = None;
        if self.beliefs[i].ground.is_none() {
            self.snap = None;
            self.dirty_calls = 0;
            if self.beliefs[i].spec.role.is_hard() {
                self.rules.retract(i);
            }
        }
        if self.beliefs[i].ground.is_some() {
            self.push(Entry::Both(vec![!sel]));
        } else {
            self.dead_sels.push(sel);
            if self.dead_sels.len() >= RETIRE_BATCH {
                self.flush_sels();
            }
            self.sync_disabled();
        }
    }

    /// Makes the retracted belief `i` active again in its old place in the commitment order,
    /// under a fresh selector (an announcement that replaced it and was then not applied puts
    /// it back, see [`crate::logic::revise`]). A quantified belief is grounded over the domain
    /// the others are grounded over; the next request brings them all to its own.
    pub(crate) fn reactivate(&mut self, i: usize) -> Result<(), EngineError> {
        if self.beliefs[i].active {
            return Ok(());
        }
        let quantified = self.beliefs[i].ground.is_some();
        let f = if quantified {
            ground::ground(
                &self.beliefs[i].spec.formula,
                &self.grounded_over,
                self.limits.ground_cap,
            )?
        } else {
            self.beliefs[i].spec.formula.clone()
        };
        self.reserve(&f)?;
        let sel = self.enc.fresh_var().positive();
        for c in self.guarded_clauses(&f, Some(sel))? {
            self.push(if quantified {
                Entry::Both(c)
            } else {
                Entry::Guard(c)
            });
        }
        if !quantified {
            for c in self.guarded_clauses(&f, None)? {
                self.push(Entry::Snap(c, i));
            }
            if self.beliefs[i].spec.role.is_hard() {
                self.rules.add(i, &f)?;
            }
        }
        let spec_formula = self.beliefs[i].spec.formula.clone();
        let consts = self.count_in(&spec_formula);
        let b = &mut self.beliefs[i];
        b.sel = sel;
        b.active = true;
        b.consts = consts;
        if quantified {
            b.ground = Some(f);
            self.quantified_active += 1;
        }
        let id = b.spec.id.clone();
        self.by_id.insert(id, i);
        self.model = None;
        self.assumptions = None;
        Ok(())
    }

    /// Retracts the active belief `id`; `false` if there is none.
    pub fn retract(&mut self, id: &str) -> bool {
        match self.index_of(id) {
            Some(i) => {
                self.retract_index(i);
                true
            }
            None => false,
        }
    }

    /// The ids of belief indices.
    pub(crate) fn names(&self, idx: &[usize]) -> Vec<String> {
        idx.iter()
            .map(|&i| self.beliefs[i].spec.id.clone())
            .collect()
    }

    /// The beliefs of `among` (indices, ascending) connected to `seeds` through shared atoms,
    /// directly or through other beliefs of `among`, in the order of `among`. A minimal
    /// unsatisfiable set containing the seeds is atom-connected, so when `among` is
    /// consistent on its own every explanation of the seeds lies in this cone, and the
    /// cone depends on Σ and the seeds alone.
    pub(crate) fn cone(&self, seeds: &[&Formula], among: &[usize]) -> Vec<usize> {
        let mut by_atom: HashMap<&Atom, Vec<usize>> = HashMap::new();
        let mut atoms_of: Vec<Vec<&Atom>> = Vec::with_capacity(among.len());
        for (k, &i) in among.iter().enumerate() {
            let atoms = atom_refs(self.beliefs[i].formula());
            for &a in &atoms {
                by_atom.entry(a).or_default().push(k);
            }
            atoms_of.push(atoms);
        }
        let mut seen_atoms: HashSet<&Atom> = HashSet::new();
        let mut todo: Vec<&Atom> = Vec::new();
        for f in seeds {
            todo.extend(atom_refs(f));
        }
        let mut inside = vec![false; among.len()];
        while let Some(a) = todo.pop() {
            if !seen_atoms.insert(a) {
                continue;
            }
            for &k in by_atom.get(a).map(Vec::as_slice).unwrap_or(&[]) {
                if !inside[k] {
                    inside[k] = true;
                    todo.extend(atoms_of[k].iter().copied());
                }
            }
        }
        among
            .iter()
            .zip(inside)
            .filter(|&(_, x)| x)
            .map(|(&i, _)| i)
            .collect()
    }

    /// The *preferred* minimal subset of `members` (belief indices in commitment order) that
    /// is unsatisfiable together with the `hard` formulas (each with the value it must take),
    /// re-checked before it is returned; `None` when they are satisfiable together.
    ///
    /// Deterministic by construction: the answer is a function of the formulas, their order
    /// and satisfiability alone (see [`preferred_mus`]), never of a solver's history, and it
    /// runs on a fresh solver holding just `members`.
    pub(crate) fn explain(
        &mut self,
        hard: &[(&Formula, bool)],
        hard_main: &[Lit],
        members: &[usize],
    ) -> Result<Option<Vec<usize>>, EngineError> {
        let mut big = Big::new(self, hard_main, members);
        let all: Vec<usize> = (0..members.len()).collect();
        if big.sat(self, &all)? {
            return Ok(None);
        }
        // The preferred set is the colex-smallest minimal unsatisfiable subset (smallest last
        // member, then smallest second-to-last, ...), so it is also the preferred set of any
        // subset of `members` that contains it. Search a core first, on a small fresh
        // solver, then confirm on the main solver (warm: proving a large set unsatisfiable
        // from scratch is what made this slow) that no earlier prefix does it: with
        // M = {e₁ > e₂ > …}, each {e₁…eⱼ₋₁} ∪ members[<eⱼ] must be satisfiable. A check that
        // fails yields a core whose preferred set is colex-smaller, and the search repeats on
        // it. Only satisfiability decides the answer; cores only choose where to look.
        let mut cand: Vec<usize> = big.core(self);
        let mut rounds = 0;
        loop {
            // Each round finds a colex-smaller set, but a run of loose cores could take
            // many rounds: after a few, search every member at once (exact, so the
            // confirmation then holds at once).
            rounds += 1;
            if rounds > MAX_ROUNDS {
                cand = all.clone();
            }
            cand.sort_unstable();
            cand.dedup();
            let sub: Vec<usize> = cand.iter().map(|&k| members[k]).collect();
            let mut small = Fresh::new(self, hard, &sub)?;
            let idx: Vec<usize> = (0..sub.len()).collect();
            let Some(m) = preferred_mus(&mut small, &idx)? else {
                // An invalid core: search all of them.
                cand = all.clone();
                continue;
            };
            let m: Vec<usize> = m.into_iter().map(|p| cand[p]).collect();
            let mut needed: Vec<usize> = Vec::with_capacity(m.len());
            let mut earlier = None;
            let mut model: Option<Vec<bool>> = None;
            for &e in m.iter().rev() {
                // The last model satisfies the previous set; if it also satisfies the member
                // just added, it satisfies this (smaller) one.
                let known = model.as_ref().is_some_and(|vals| {
                    needed.last().is_some_and(|&k| {
                        cnf::eval(self.beliefs[members[k]].formula(), &mut |a| {
                            self.enc
                                .atom_var(a)
                                .and_then(|v| vals.get(v.index()).copied())
                                .unwrap_or(false)
                        }) == Some(true)
                    })
                });
                if !known {
                    let mut set = needed.clone();
                    set.extend(0..e);
                    if !big.sat(self, &set)? {
                        earlier = Some(big.core(self));
                        break;
                    }
                    let mut vals = vec![false; self.enc.num_vars()];
                    for l in self.main.model().unwrap_or_default() {
                        if let Some(v) = vals.get_mut(l.index()) {
                            *v = l.is_positive();
                        }
                    }
                    model = Some(vals);
                }
                needed.push(e);
            }
            match earlier {
                Some(c) => cand = c,
                None => {
                    let m: Vec<usize> = m.into_iter().map(|k| members[k]).collect();
                    self.verify_mus(hard, &m)?;
                    return Ok(Some(m));
                }
            }
        }
    }

    /// Re-checks an explanation on a fresh solver holding only its members: together with
    /// `hard` they are unsatisfiable, and dropping any one member makes them satisfiable. A
    /// set that fails is an [`EngineError::Internal`], never shown.
    pub(crate) fn verify_mus(
        &self,
        hard: &[(&Formula, bool)],
        set: &[usize],
    ) -> Result<(), EngineError> {
        let mut fresh = Fresh::new(self, hard, set)?;
        let all: Vec<usize> = (0..set.len()).collect();
        if fresh.sat(true, &all, usize::MAX)? {
            return Err(EngineError::Internal(format!(
                "explanation {:?} is not unsatisfiable",
                self.names(set)
            )));
        }
        for k in 0..set.len() {
            if !fresh.sat(true, &all, k)? {
                return Err(EngineError::Internal(format!(
                    "explanation {:?} is not minimal ({} is not needed)",
                    self.names(set),
                    self.beliefs[set[k]].spec.id
                )));
            }
        }
        Ok(())
    }

    /// Is Σ consistent? If not, Σ's preferred minimal conflicting subset (rules and norms
    /// included): a function of Σ and its order alone.
    pub fn consistent(&mut self) -> Result<Consistency, EngineError> {
        self.sync_active()?;
        if self.sat_with(&[], true)? {
            return Ok(Consistency {
                consistent: true,
                conflict: Vec::new(),
            });
        }
        let m = self.sigma_conflict()?;
        Ok(Consistency {
            consistent: false,
            conflict: self.names(&m),
        })
    }

    /// Σ's preferred minimal conflict (Σ inconsistent as grounded now).
    ///
    /// Its last member is the last belief of the shortest inconsistent prefix of Σ, found on
    /// the main solver by bisection over prefixes (its cores propose where to cut and are
    /// checked like any guess). The rest lies in that belief's cone within the prefix: the
    /// other beliefs of the prefix share no atom with it and are satisfiable on their own, so
    /// they change no answer. So the search runs on a fresh solver over that cone alone and
    /// finds the same set as over all of Σ, without encoding all of Σ again.
    pub(crate) fn sigma_conflict(&mut self) -> Result<Vec<usize>, EngineError> {
        let active = self.active();
        let sels: Vec<Lit> = active.iter().map(|&i| self.beliefs[i].sel).collect();
        let pos: HashMap<Lit, usize> = sels.iter().enumerate().map(|(k, &s)| (s, k)).collect();
        let mut a: Vec<Lit> = Vec::with_capacity(sels.len());
        let mut prefix_sat =
            |main: &mut Sat, k: usize| -> Result<(bool, Option<usize>), SolveError> {
                a.clear();
                a.extend_from_slice(&sels[..k]);
                a.extend(sels[k..].iter().map(|&s| !s));
                let sat = main.solve(&a)?;
                let top = if sat {
                    None
                } else {
                    main.raw_core()
                        .iter()
                        .filter_map(|l| pos.get(l))
                        .copied()
                        .max()
                };
                Ok((sat, top))
            };
        let (all_sat, mut hint) = prefix_sat(&mut self.main, sels.len())?;
        if all_sat {
            return Err(EngineError::Internal(
                "the solvers disagree on consistency".into(),
            ));
        }
        let (mut lo, mut hi) = (0usize, sels.len());
        let mut bisect = false;
        while hi - lo > 1 {
            let guess = hint.map(|t| t + 1).filter(|&k| k > lo && k < hi);
            let mid = match guess {
                Some(g) if !bisect => g,
                _ => lo + (hi - lo) / 2,
            };
            bisect = !bisect && guess.is_some();
            let (sat, top) = prefix_sat(&mut self.main, mid)?;
            hint = top;
            if sat {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let seed = self.beliefs[active[hi - 1]].formula().clone();
        let mut members = self.cone(&[&seed], &active[..hi]);
        // A belief without atoms (⊥) is in no cone, its own included.
        if members.last() != Some(&active[hi - 1]) {
            members.push(active[hi - 1]);
        }
        self.explain(&[], &[], &members)?
            .ok_or_else(|| EngineError::Internal("the solvers disagree on consistency".into()))
    }

    /// Θ(Σ, Δ) with one SAT call in the common case (the cached model decides the other).
    pub(crate) fn theta(&mut self, delta: &Formula, q: &mut Query) -> Result<Outcome, EngineError> {
        let model_ok = match self.model_satisfies(delta) {
            Some(v) => v,
            None => {
                if !self.sat_side(q, true, true)? {
                    return Ok(Outcome::Contradiction);
                }
                true
            }
        };
        if model_ok {
            // Σ∧Δ is satisfiable (the model shows it); is Σ∧¬Δ?
            // Keep the model that satisfies Δ: Δ often joins Σ next.
            return Ok(if self.sat_side(q, false, false)? {
                Outcome::NewInfo
            } else {
                Outcome::Entailed
            });
        }
        // The model satisfies Σ∧¬Δ, so Δ is not entailed; is Σ∧Δ satisfiable?
        Ok(if self.sat_side(q, true, true)? {
            Outcome::NewInfo
        } else {
            Outcome::Contradiction
        })
    }

    /// Whether Σ (as grounded now) is satisfiable; no solve when a model is cached.
    pub(crate) fn sigma_sat(&mut self) -> Result<bool, EngineError> {
        if self.model.is_some() {
            return Ok(true);
        }
        self.sat_with(&[], true)
    }

    /// Is Σ ∧ (one side of `q`) satisfiable? A model is cached when `keep`.
    ///
    /// A short clause side on the snapshot solver is split instead of probed: Σ ∧ (l₁ ∨ … ∨ lₖ)
    /// is satisfiable iff some Σ ∧ lᵢ is, and each of those is a plain assumption (usually a
    /// propagation-only call when it fails). A probe would leave a clause, a variable that
    /// every later satisfiable solve must assign and write into its model, and a level-0 unit
    /// that makes varisat re-simplify its clause database. On the selector solver (snapshot
    /// stale after a retraction) each call replays every selector, so one probed call is
    /// cheaper there.
    fn sat_side(&mut self, q: &mut Query, positive: bool, keep: bool) -> Result<bool, EngineError> {
        let side = if positive { &q.pos } else { &q.neg };
        if let Side::Clause(c) = side {
            if c.len() <= SPLIT_MAX && self.snap.is_some() {
                let c = c.clone();
                for l in c {
                    if self.sat_with(&[l], keep)? {
                        return Ok(true);
                    }
                }
                return Ok(false);
            }
        }
        let lits = if positive { self.pos(q) } else { self.neg(q) }.to_vec();
        self.sat_with(&lits, keep)
    }

    /// The gate Θ(Σ, Δ). With `because` (cited ids), a consistent Δ that the cited beliefs
    /// plus all rules and norms do not entail is `Ungrounded` (seed 001 §5).
    pub fn check(
        &mut self,
        delta: &Formula,
        because: Option<&[String]>,
    ) -> Result<Check, EngineError> {
        let mut q = self.query(delta)?;
        let theta = self.theta(delta, &mut q)?;
        let mut missing = Vec::new();
        let mut outcome = theta;
        if let (Some(cited), true) = (because, theta != Outcome::Contradiction) {
            let mut a = Vec::new();
            for id in cited {
                match self.index_of(id) {
                    Some(i) => a.push(self.beliefs[i].sel),
                    None => missing.push(id.clone()),
                }
            }
            a.extend(self.fixed_selectors());
            a.extend_from_slice(self.neg(&mut q));
            let universe = self.assumptions();
            switch_off(&mut a, &universe);
            if self.main_sat().solve(&a)? {
                outcome = Outcome::Ungrounded;
            }
        }
        self.finish(q);
        Ok(Check {
            outcome,
            theta,
            missing_citations: missing,
        })
    }

    /// Whether any active retractable belief has a confidence below 1.
    pub(crate) fn graded(&self) -> bool {
        self.beliefs
            .iter()
            .any(|b| b.active && !b.spec.role.is_hard() && b.spec.confidence < 1.0)
    }

    /// Σ ⊨ φ, Σ ⊨ ¬φ, or neither; with N(φ) when graded.
    pub fn entails(&mut self, phi: &Formula) -> Result<Entailment, EngineError> {
        self.entails_with(phi, true)
    }

    /// Σ ⊨ φ, Σ ⊨ ¬φ, or neither, without N(φ): computing the degree costs a solve per
    /// confidence level, which callers that only report the three-way answer (the audit's
    /// recomputation of `query` events) should not pay.
    pub(crate) fn entails_plain(&mut self, phi: &Formula) -> Result<Entails, EngineError> {
        Ok(self.entails_with(phi, false)?.result)
    }

    fn entails_with(&mut self, phi: &Formula, degree: bool) -> Result<Entailment, EngineError> {
        let mut q = self.query(phi)?;
        let entailed = !self.sat_side(&mut q, false, true)?;
        let contradicted = !self.sat_side(&mut q, true, true)?;
        let result = if entailed {
            Entails::Entailed
        } else if contradicted {
            Entails::Contradicted
        } else {
            Entails::Unknown
        };
        let degree = if degree && self.graded() {
            let neg = self.neg(&mut q).to_vec();
            Some(self.necessity_lits(&neg)?)
        } else {
            None
        };
        self.finish(q);
        Ok(Entailment {
            result,
            degree,
            sigma_consistent: !(entailed && contradicted),
        })
    }

    /// `f` grounded over the domain of Σ and `f` (the quantified beliefs brought to it).
    pub(crate) fn grounded(&mut self, f: &Formula) -> Result<Formula, EngineError> {
        let g = self.ground(f)?.unwrap_or_else(|| f.clone());
        self.reserve(&g)?;
        Ok(g)
    }

    /// Where the supports of `g` (ground) are looked for: the beliefs atom-connected to `g`.
    /// A support outside them is a conflict of Σ itself (an inconsistent Σ entails
    /// everything), so all of Σ is used when the rest is inconsistent (`every`: all supports
    /// are wanted) or when the cone does not entail `g` (one is).
    fn support_members(&mut self, g: &Formula, every: bool) -> Result<Vec<usize>, EngineError> {
        let all = self.active();
        let cone = self.cone(&[g], &all);
        if cone.len() == all.len() || self.sigma_sat()? {
            return Ok(cone);
        }
        let need_all = if every {
            let inside: HashSet<usize> = cone.iter().copied().collect();
            let rest: Vec<usize> = all
                .iter()
                .copied()
                .filter(|i| !inside.contains(i))
                .collect();
            let mut fresh = Fresh::new(self, &[], &rest)?;
            let k: Vec<usize> = (0..rest.len()).collect();
            !fresh.sat(false, &k, usize::MAX)?
        } else {
            let mut fresh = Fresh::new(self, &[(g, false)], &cone)?;
            let k: Vec<usize> = (0..cone.len()).collect();
            fresh.sat(true, &k, usize::MAX)?
        };
        Ok(if need_all { all } else { cone })
    }

    /// One minimal support of φ: the preferred minimal subset of Σ entailing φ (earliest
    /// beliefs kept), a function of Σ, its order and φ alone, re-checked before it is
    /// returned.
    pub fn why(&mut self, phi: &Formula) -> Result<Why, EngineError> {
        let mut q = self.query(phi)?;
        let neg = self.neg(&mut q).to_vec();
        let g = std::mem::take(&mut q.formula);
        let members = self.support_members(&g, false);
        let r = members.and_then(|m| self.explain(&[(&g, false)], &neg, &m));
        self.finish(q);
        Ok(match r? {
            None => Why {
                entailed: false,
                support: Vec::new(),
            },
            Some(m) => Why {
                entailed: true,
                support: self.names(&m),
            },
        })
    }

    /// All minimal supports of φ, at most `max` of them, within `budget` (capped MARCO on a
    /// fresh solver over the beliefs that can matter). Each is re-checked (it entails φ and
    /// no member can be dropped); they come sorted by size, then by commitment order.
    pub fn supports(
        &mut self,
        phi: &Formula,
        max: usize,
        budget: Duration,
    ) -> Result<Supports, EngineError> {
        let g = self.grounded(phi)?;
        let members = self.support_members(&g, true)?;
        let mut fresh = Fresh::new(self, &[(&g, false)], &members)?;
        let cancel = self.cancel.clone();
        let hard = fresh.hard.clone();
        let sels = fresh.sels.clone();
        let (muses, complete) = marco(&mut fresh.sat, cancel, &hard, &sels, max, budget)?;
        let mut out: Vec<Vec<usize>> = Vec::with_capacity(muses.len());
        for m in muses {
            let mut set: Vec<usize> = m
                .iter()
                .filter_map(|l| fresh.pos.get(l))
                .map(|&k| members[k])
                .collect();
            set.sort_unstable();
            self.verify_mus(&[(&g, false)], &set)?;
            out.push(set);
        }
        out.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        out.dedup();
        Ok(Supports {
            supports: out.iter().map(|m| self.names(m)).collect(),
            complete,
        })
    }

    /// A countermodel of Σ ⊨ φ, validated by evaluating every active belief and ¬φ on it.
    pub fn whynot(&mut self, phi: &Formula) -> Result<WhyNot, EngineError> {
        let mut q = self.query(phi)?;
        let mut a = self.assumptions();
        a.extend_from_slice(self.neg(&mut q));
        let sat = self.main_sat().solve(&a)?;
        let model = if sat { self.main.model() } else { None };
        // The query already holds φ grounded over the current domain.
        let g = std::mem::take(&mut q.formula);
        self.finish(q);
        let Some(model) = model else {
            return Ok(WhyNot { countermodel: None });
        };
        let mut vals = vec![false; self.enc.num_vars()];
        for l in model {
            if let Some(v) = vals.get_mut(l.index()) {
                *v = l.is_positive();
            }
        }
        let mut value = |a: &Atom| {
            self.enc
                .atom_var(a)
                .and_then(|v| vals.get(v.index()).copied())
                .unwrap_or(false)
        };
        for b in self.beliefs.iter().filter(|b| b.active) {
            if cnf::eval(b.formula(), &mut value) != Some(true) {
                return Err(EngineError::Internal(format!(
                    "countermodel violates belief {}",
                    b.spec.id
                )));
            }
        }
        if cnf::eval(&g, &mut value) != Some(false) {
            return Err(EngineError::Internal(
                "countermodel satisfies the query".into(),
            ));
        }
        // Project on the atoms of φ and of the beliefs sharing an atom with φ.
        let mut atoms = Vec::new();
        cnf::atoms_of(&g, &mut atoms);
        let query_atoms: HashSet<Atom> = atoms.iter().cloned().collect();
        for b in self.beliefs.iter().filter(|b| b.active) {
            let mut ba = Vec::new();
            cnf::atoms_of(b.formula(), &mut ba);
            if ba.iter().any(|a| query_atoms.contains(a)) {
                for a in ba {
                    if !atoms.contains(&a) {
                        atoms.push(a);
                    }
                }
            }
        }
        let countermodel = atoms
            .into_iter()
            .map(|a| {
                let v = value(&a);
                (a, v)
            })
            .collect();
        Ok(WhyNot {
            countermodel: Some(countermodel),
        })
    }

    /// Ids of the active beliefs in commitment order.
    pub fn active_ids(&self) -> Vec<String> {
        self.beliefs
            .iter()
            .filter(|b| b.active)
            .map(|b| b.spec.id.clone())
            .collect()
    }

    /// Solver statistics: (main solves, invalid cores replaced).
    pub fn stats(&self) -> (u64, u64) {
        (self.main.num_solves(), self.main.invalid_cores())
    }

    /// Applies a revision policy to a new belief (see [`crate::logic::revise`]).
    pub fn announce(&mut self, spec: BeliefSpec, policy: Policy) -> Result<Revision, EngineError> {
        crate::logic::revise::announce(self, spec, policy)
    }
}

/// The atoms of `f`, by reference, with repetitions.
fn atom_refs(f: &Formula) -> Vec<&Atom> {
    let mut out = Vec::new();
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        match g {
            Formula::True | Formula::False => {}
            Formula::Atom(a) => out.push(a),
            Formula::Not(a) | Formula::Forall(_, a) | Formula::Exists(_, a) => stack.push(a),
            Formula::And(cs) | Formula::Or(cs) => stack.extend(cs.iter()),
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                stack.push(b);
                stack.push(a);
            }
        }
    }
    out
}

/// A throw-away solver for one explanation: some beliefs, each behind a selector of its own,
/// and some *hard* formulas assumed on demand. Built in a canonical order (the hard formulas,
/// then the members in the order given), so nothing of the long-lived solvers' history
/// reaches an explanation.
pub(crate) struct Fresh {
    sat: Sat,
    /// The hard formulas' literals, each with its required value.
    hard: Vec<Lit>,
    /// The members' selectors, in order.
    sels: Vec<Lit>,
    /// Selector -> member position.
    pos: HashMap<Lit, usize>,
    /// Whether the hard formulas alone are satisfiable, from a solver of their own: asking
    /// this one would solve every member's definitions too (huge for a huge belief).
    hard_sat: bool,
}

impl Fresh {
    /// A solver holding `members` (belief indices of `st`) and the `hard` formulas.
    pub(crate) fn new(
        st: &State,
        hard: &[(&Formula, bool)],
        members: &[usize],
    ) -> Result<Fresh, EngineError> {
        let mut enc = Tseitin::new();
        let mut cls: Vec<Vec<Lit>> = Vec::new();
        let mut hard_lits = Vec::with_capacity(hard.len());
        for (f, value) in hard {
            let t = enc.encode(f, &mut cls)?;
            hard_lits.push(if *value { t } else { !t });
        }
        let hard_sat = hard.is_empty() || {
            let mut alone = Sat::new(st.cancel.clone());
            for c in &cls {
                alone.add_clause(c);
            }
            alone.solve(&hard_lits)?
        };
        let mut sels = Vec::with_capacity(members.len());
        for &i in members {
            let t = enc.encode(st.beliefs[i].formula(), &mut cls)?;
            let s = enc.fresh_var().positive();
            cls.push(vec![!s, t]);
            sels.push(s);
        }
        let mut sat = Sat::new(st.cancel.clone());
        for c in &cls {
            sat.add_clause(c);
        }
        let pos = sels.iter().enumerate().map(|(k, &s)| (s, k)).collect();
        Ok(Fresh {
            sat,
            hard: hard_lits,
            sels,
            pos,
            hard_sat,
        })
    }

    /// Whether the members at positions `set` (all but `set[skip]`), with the hard formulas
    /// when `with_hard`, are satisfiable. Every other selector is assumed false: left free,
    /// saved phases switch selectors on and a propagation check becomes a search.
    pub(crate) fn sat(
        &mut self,
        with_hard: bool,
        set: &[usize],
        skip: usize,
    ) -> Result<bool, EngineError> {
        if set.len() == usize::from(skip < set.len()) {
            return Ok(!with_hard || self.hard_sat);
        }
        let mut on = vec![false; self.sels.len()];
        let mut a: Vec<Lit> = Vec::with_capacity(self.hard.len() + self.sels.len());
        if with_hard {
            a.extend_from_slice(&self.hard);
        }
        for (k, &p) in set.iter().enumerate() {
            if k != skip {
                on[p] = true;
                a.push(self.sels[p]);
            }
        }
        a.extend(
            self.sels
                .iter()
                .zip(&on)
                .filter(|&(_, &o)| !o)
                .map(|(&s, _)| !s),
        );
        Ok(self.sat.solve(&a)?)
    }

    /// After an unsatisfiable [`Fresh::sat`]: the member positions in the solver's core, a
    /// hint only (the core is not trusted; whatever it suggests is solved again).
    fn core(&self) -> Vec<usize> {
        self.sat
            .raw_core()
            .iter()
            .filter_map(|l| self.pos.get(l))
            .copied()
            .collect()
    }
}

/// Core-guided rounds of [`State::explain`] before it searches all members at once.
const MAX_ROUNDS: usize = 3;

/// The main solver seen as a solver over some members: their selectors, the other active
/// selectors switched off, and the hard part's literals.
struct Big {
    hard: Vec<Lit>,
    sels: Vec<Lit>,
    universe: Vec<Lit>,
    pos: HashMap<Lit, usize>,
}

impl Big {
    fn new(st: &mut State, hard: &[Lit], members: &[usize]) -> Big {
        let sels: Vec<Lit> = members.iter().map(|&i| st.beliefs[i].sel).collect();
        let pos = sels.iter().enumerate().map(|(k, &s)| (s, k)).collect();
        Big {
            hard: hard.to_vec(),
            sels,
            universe: st.assumptions(),
            pos,
        }
    }

    /// Whether the members at positions `set` with the hard part are satisfiable.
    fn sat(&mut self, st: &mut State, set: &[usize]) -> Result<bool, EngineError> {
        let mut a = self.hard.clone();
        a.extend(set.iter().map(|&k| self.sels[k]));
        switch_off(&mut a, &self.universe);
        Ok(st.main.solve(&a)?)
    }

    /// The member positions in the core of the last unsatisfiable [`Big::sat`] (a hint).
    fn core(&self, st: &State) -> Vec<usize> {
        st.main
            .raw_core()
            .iter()
            .filter_map(|l| self.pos.get(l))
            .copied()
            .collect()
    }
}

/// The *preferred* minimal unsatisfiable subset of `cand` (member positions, ascending: the
/// order of preference) together with the hard formulas, or `None` when they are all
/// satisfiable together.
///
/// It is the set deletion from the back would find (keep the earliest beliefs, drop the
/// latest possible), computed by progression: with `needed` the members found so far, the
/// next member is the last of the shortest prefix of the remaining candidates that is
/// unsatisfiable with `needed`, found by bisection (the solver's core proposes where to cut,
/// and is checked like any other guess). Every step is decided by satisfiability alone, so the
/// answer is a function of the formulas and their order: two solvers, or one solver with any
/// history, give the same set. About `|M|·log n` solves.
pub(crate) fn preferred_mus(
    fresh: &mut Fresh,
    cand: &[usize],
) -> Result<Option<Vec<usize>>, EngineError> {
    if fresh.sat(true, cand, usize::MAX)? {
        return Ok(None);
    }
    let mut needed: Vec<usize> = Vec::new();
    let mut cand: Vec<usize> = cand.to_vec();
    // Invariant: needed ∪ cand[..hi] is unsatisfiable (with the hard formulas).
    let mut hint = fresh.core();
    loop {
        let hi0 = cand.len();
        if hi0 == 0 {
            break;
        }
        let mut test: Vec<usize> = needed.clone();
        if !fresh.sat(true, &test, usize::MAX)? {
            break;
        }
        // needed ∪ cand[..lo] is satisfiable.
        let (mut lo, mut hi) = (0usize, hi0);
        let mut bisect = false;
        while hi - lo > 1 {
            // The core's suggestion and bisection take turns: the core is usually right
            // at once, and bisection bounds the worst case to about 2·log n solves.
            let guess = hint
                .iter()
                .filter_map(|p| cand.binary_search(p).ok())
                .max()
                .map(|k| k + 1)
                .filter(|&k| k > lo && k < hi);
            hint.clear();
            let mid = match guess {
                Some(g) if !bisect => g,
                _ => lo + (hi - lo) / 2,
            };
            bisect = !bisect && guess.is_some();
            test.truncate(needed.len());
            test.extend_from_slice(&cand[..mid]);
            if fresh.sat(true, &test, usize::MAX)? {
                lo = mid;
            } else {
                hi = mid;
                hint = fresh.core();
            }
        }
        needed.push(cand[hi - 1]);
        cand.truncate(hi - 1);
    }
    needed.sort_unstable();
    Ok(Some(needed))
}

/// Deletion-based MUS with clause-set refinement: a subset-minimal `M ⊆ soft` with
/// `hard ∧ M` unsatisfiable, `None` when `hard ∧ soft` is satisfiable. Elements at the end of
/// `soft` are tried for removal first, so earlier ones are preferred. The result is validated
/// by a final solve; a refinement spoiled by an invalid core is redone without cores.
///
/// Selectors of `universe` outside the set being tested are assumed false: left free, the
/// solver's saved phases switch them on and a propagation check turns into a search.
pub(crate) fn mus(
    sat: &mut Sat,
    hard: &[Lit],
    soft: Vec<Lit>,
    universe: &[Lit],
) -> Result<Option<Vec<Lit>>, SolveError> {
    let mut all = hard.to_vec();
    all.extend_from_slice(&soft);
    switch_off(&mut all, universe);
    let Some(core) = sat.validated_core(&all, universe)? else {
        return Ok(None);
    };
    let core: HashSet<Lit> = core.into_iter().collect();
    let cand: Vec<Lit> = soft.iter().copied().filter(|l| core.contains(l)).collect();
    if let Some(m) = shrink(sat, hard, cand, true, universe)? {
        return Ok(Some(m));
    }
    shrink(sat, hard, soft, false, universe)?
        .map(Some)
        .ok_or_else(|| SolveError::Solver("no minimal unsatisfiable subset validated".into()))
}

fn shrink(
    sat: &mut Sat,
    hard: &[Lit],
    mut cand: Vec<Lit>,
    refine: bool,
    universe: &[Lit],
) -> Result<Option<Vec<Lit>>, SolveError> {
    let mut needed: Vec<Lit> = Vec::new();
    let mut a = Vec::new();
    while let Some(c) = cand.pop() {
        a.clear();
        a.extend_from_slice(hard);
        a.extend_from_slice(&needed);
        a.extend_from_slice(&cand);
        switch_off(&mut a, universe);
        if sat.solve(&a)? {
            needed.push(c);
        } else if refine {
            let core: HashSet<Lit> = sat.raw_core().into_iter().collect();
            cand.retain(|l| core.contains(l));
        }
    }
    a.clear();
    a.extend_from_slice(hard);
    a.extend_from_slice(&needed);
    switch_off(&mut a, universe);
    if sat.solve(&a)? {
        return Ok(None);
    }
    needed.reverse();
    Ok(Some(needed))
}

/// Appends `¬u` for every `u` of `universe` not already in `a`.
pub(crate) fn switch_off(a: &mut Vec<Lit>, universe: &[Lit]) {
    let on: HashSet<Lit> = a.iter().copied().collect();
    a.extend(universe.iter().filter(|u| !on.contains(u)).map(|&u| !u));
}

/// Capped MARCO: enumerates minimal subsets of `soft` unsatisfiable with `hard`. Returns
/// them and whether the enumeration finished within `max` and `budget`.
fn marco(
    sat: &mut Sat,
    cancel: Arc<Stop>,
    hard: &[Lit],
    soft: &[Lit],
    max: usize,
    budget: Duration,
) -> Result<(Vec<Vec<Lit>>, bool), SolveError> {
    let start = Instant::now();
    // Map solver: variable i true = soft[i] excluded. varisat decides false first, so seeds
    // start large (MUS-first).
    let mut map = Sat::new(cancel);
    let n = soft.len();
    let x = |i: usize| varisat::Var::from_index(i).positive();
    // Map variables the map solver has never seen are absent from its models, which reads
    // as "not excluded": exactly the default wanted.
    let mut out = Vec::new();
    let mut a = hard.to_vec();
    a.extend_from_slice(soft);
    if sat.solve(&a)? {
        return Ok((out, true));
    }
    loop {
        if out.len() >= max || start.elapsed() > budget {
            return Ok((out, false));
        }
        if !map.solve(&[])? {
            return Ok((out, true));
        }
        let model = map.model().unwrap_or_default();
        let mut excluded = vec![false; n];
        for l in model {
            if l.index() < n {
                excluded[l.index()] = l.is_positive();
            }
        }
        let seed: Vec<usize> = (0..n).filter(|&i| !excluded[i]).collect();
        a.clear();
        a.extend_from_slice(hard);
        a.extend(seed.iter().map(|&i| soft[i]));
        switch_off(&mut a, soft);
        if sat.solve(&a)? {
            // Grow to a maximal satisfiable subset; block all its subsets.
            let mut keep = seed.clone();
            for i in 0..n {
                if excluded[i] {
                    a.clear();
                    a.extend_from_slice(hard);
                    a.extend(keep.iter().map(|&j| soft[j]));
                    a.push(soft[i]);
                    switch_off(&mut a, soft);
                    if sat.solve(&a)? {
                        keep.push(i);
                    }
                }
            }
            let kept: HashSet<usize> = keep.into_iter().collect();
            let block: Vec<Lit> = (0..n)
                .filter(|i| !kept.contains(i))
                .map(|i| !x(i))
                .collect();
            if block.is_empty() {
                return Ok((out, true));
            }
            map.add_clause(&block);
        } else {
            let sub: Vec<Lit> = seed.iter().map(|&i| soft[i]).collect();
            let Some(m) = mus(sat, hard, sub, soft)? else {
                return Err(SolveError::Solver("seed became satisfiable".into()));
            };
            let pos: HashMap<Lit, usize> = soft.iter().enumerate().map(|(i, &l)| (l, i)).collect();
            let block: Vec<Lit> = m.iter().filter_map(|l| pos.get(l)).map(|&i| x(i)).collect();
            out.push(m);
            if block.is_empty() {
                return Ok((out, true));
            }
            map.add_clause(&block);
        }
    }
}

/// Requests whose formulas have at most this many nodes (at most [`INLINE_DEPTH`] deep, no
/// quantifier) may run on the caller's thread; see [`BeliefState`].
const INLINE_NODES: usize = 20_000;

/// The deepest formula handled on the caller's thread. The engine's consumers recurse over
/// formulas; at the parser's [`MAX_DEPTH`] that overflows a 2 MiB thread in a debug build
/// (measured: grounding inside `whynot`), a quarter of it leaves ample room.
const INLINE_DEPTH: usize = MAX_DEPTH / 4;

/// Whether work on `f` is small and stack-safe enough for the caller's thread: at most
/// [`INLINE_NODES`] nodes, at most [`INLINE_DEPTH`] deep, no quantifier (grounding can
/// multiply a small formula by the instance cap, and a grown domain re-grounds it on any later
/// request). The walk stops at the first violation, so it costs at most `INLINE_NODES` steps.
fn fits_inline(f: &Formula) -> bool {
    let mut stack: Vec<(&Formula, usize)> = vec![(f, 0)];
    let mut nodes = 0usize;
    while let Some((g, d)) = stack.pop() {
        nodes += 1;
        if nodes > INLINE_NODES || d > INLINE_DEPTH {
            return false;
        }
        match g {
            Formula::True | Formula::False | Formula::Atom(_) => {}
            Formula::Forall(..) | Formula::Exists(..) => return false,
            Formula::Not(h) => stack.push((h, d + 1)),
            Formula::And(hs) | Formula::Or(hs) => stack.extend(hs.iter().map(|h| (h, d + 1))),
            Formula::Implies(x, y) | Formula::Iff(x, y) => {
                stack.push((x, d + 1));
                stack.push((y, d + 1));
            }
        }
    }
    true
}

thread_local! {
    /// The states of the handles living on this thread (see [`Home::Local`]), by handle id.
    static LOCAL: RefCell<HashMap<u64, Box<State>>> = RefCell::new(HashMap::new());
}

/// Handle ids.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// States orphaned in another thread's [`LOCAL`] (their handle was dropped or moved away
/// from that thread): each thread frees its own on its next visit to [`LOCAL`].
static GRAVEYARD: Mutex<Vec<(ThreadId, u64)>> = Mutex::new(Vec::new());
static BURIED: AtomicUsize = AtomicUsize::new(0);

fn bury(thread: ThreadId, id: u64) {
    if let Ok(mut g) = GRAVEYARD.lock() {
        g.push((thread, id));
        BURIED.store(g.len(), Ordering::Relaxed);
    }
}

/// Frees this thread's orphaned states.
fn sweep() {
    if BURIED.load(Ordering::Relaxed) == 0 {
        return;
    }
    let me = thread::current().id();
    let mine: Vec<u64> = match GRAVEYARD.lock() {
        Ok(mut g) => {
            let mine = g
                .iter()
                .filter(|(t, _)| *t == me)
                .map(|&(_, id)| id)
                .collect();
            g.retain(|(t, _)| *t != me);
            BURIED.store(g.len(), Ordering::Relaxed);
            mine
        }
        Err(_) => return,
    };
    let _ = LOCAL.try_with(|m| {
        let mut m = m.borrow_mut();
        for id in mine {
            m.remove(&id);
        }
    });
}

/// Where a handle's state lives.
enum Home {
    /// In [`LOCAL`] of `thread` under `id` (absent while a request runs, and after a
    /// request overran until the next request rebuilds it).
    Local { thread: ThreadId, id: u64 },
    /// On a dedicated solver thread.
    Worker(Worker<State>),
}

/// The `Send` handle of a belief state. Keeps its own copy of the active beliefs to rebuild
/// the state after a timeout or a crash (the domain is a function of them).
///
/// # Where requests run
///
/// `Solver` is not `Send`, so a state lives on one thread. Normally that is the thread that
/// created the handle, and requests from it run **right there** (the state sits in a
/// thread-local registry). Shipping every gate check to a solver thread and waiting for the
/// answer cost two cross-thread wake-ups per check: measured about 10 µs on an idle 2-core
/// machine and far more on a loaded one, where each wake-up waits for a core.
///
/// The deadline does not need a second thread: every solver of the state stops itself once
/// the request's deadline has passed ([`Stop`], checked by the proof writer varisat calls on
/// every learned clause and at the end of every solve, and before every solve), which answers
/// [`EngineError::Timeout`]; the state is then rebuilt from the handle's copy of Σ at the start
/// of the next request. So a caller waits at most about [`Limits::timeout`] for a solve, as
/// before.
///
/// A deadline inside the solver cannot bound work outside it (encoding or grounding a huge
/// formula), and recursion over a deep formula needs a big stack. So the handle moves its state, for good, to a dedicated solver thread ([`Worker`],
/// 256 MiB stack; the caller waits at most until the deadline and an overrun abandons and
/// rebuilds the state) when a request's formula does not pass `fits_inline`, and also when
/// the handle is used from another thread than the one holding its state (the state cannot
/// follow it; it is rebuilt on the solver thread from the copy).
pub struct BeliefState {
    home: Home,
    mirror: Vec<BeliefSpec>,
    /// The ids in `mirror`, so that adding a new id does not scan it.
    mirror_ids: HashSet<String>,
    limits: Limits,
    rebuilds: u64,
}

impl BeliefState {
    /// An empty state with default limits.
    pub fn new() -> Result<Self, EngineError> {
        Self::with_limits(Limits::default())
    }

    /// An empty state with the given limits.
    pub fn with_limits(limits: Limits) -> Result<Self, EngineError> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let st = Box::new(State::new(Stop::new(), limits));
        sweep();
        LOCAL
            .try_with(|m| m.borrow_mut().insert(id, st))
            .map_err(|_| EngineError::Internal("thread-local storage is gone".into()))?;
        Ok(BeliefState {
            home: Home::Local {
                thread: thread::current().id(),
                id,
            },
            mirror: Vec::new(),
            mirror_ids: HashSet::new(),
            limits,
            rebuilds: 0,
        })
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Changes the per-request timeout.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.limits.timeout = timeout;
    }

    /// How many times the state was rebuilt after a timeout or crash.
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// The active beliefs in commitment order.
    pub fn beliefs(&self) -> &[BeliefSpec] {
        &self.mirror
    }

    /// The active belief `id`.
    pub fn belief(&self, id: &str) -> Option<&BeliefSpec> {
        self.mirror.iter().find(|b| b.id == id)
    }

    /// A fresh state holding the handle's copy of Σ (the domain is a function of Σ). Every
    /// one of these beliefs was accepted before, so the hard part is known consistent.
    fn replay(stop: Arc<Stop>, limits: Limits, specs: Vec<BeliefSpec>) -> State {
        let mut s = State::new(stop, limits);
        for spec in specs {
            let _ = s.add_inner(spec, false);
        }
        s
    }

    /// Moves the state to a dedicated solver thread, rebuilt there from the copy.
    fn move_to_worker(&mut self) -> Result<(), EngineError> {
        let limits = self.limits;
        let specs = self.mirror.clone();
        let w = Worker::spawn(move |c| Self::replay(c, limits, specs))
            .map_err(|e| EngineError::Internal(format!("cannot start the solver thread: {e}")))?;
        if let Home::Local { thread, id } = std::mem::replace(&mut self.home, Home::Worker(w)) {
            if thread == thread::current().id() {
                let _ = LOCAL.try_with(|m| m.borrow_mut().remove(&id));
            } else {
                bury(thread, id);
            }
        }
        Ok(())
    }

    /// After a timeout or a crash: a fresh state from the copy (on the solver thread, or at
    /// the next local request).
    fn rebuild(&mut self) {
        self.rebuilds += 1;
        if let Home::Worker(_) = self.home {
            // If the thread cannot be started, keep the cancelled worker: it answers Timeout
            // until a later rebuild succeeds.
            let _ = self.move_to_worker();
        }
    }

    /// Runs `f` on the state: on the caller's thread when the state lives there and `fits`
    /// (see [`fits_inline`]), otherwise on the solver thread.
    fn call<R: Send + 'static>(
        &mut self,
        fits: bool,
        f: impl FnOnce(&mut State) -> Result<R, EngineError> + Send + 'static,
    ) -> Result<R, EngineError> {
        let deadline = Instant::now() + self.limits.timeout;
        if let Home::Local { thread, id } = self.home {
            if fits && thread == thread::current().id() {
                return self.call_local(id, deadline, f);
            }
            self.move_to_worker()?;
        }
        let Home::Worker(w) = &self.home else {
            return Err(EngineError::Internal("no solver thread".into()));
        };
        match w.run(deadline, f) {
            Ok(Err(EngineError::Timeout)) | Err(Overrun::Timeout) => {
                self.rebuild();
                Err(EngineError::Timeout)
            }
            Ok(r) => r,
            Err(Overrun::Crashed) => {
                self.rebuild();
                Err(EngineError::Crashed)
            }
        }
    }

    fn call_local<R>(
        &mut self,
        id: u64,
        deadline: Instant,
        f: impl FnOnce(&mut State) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        sweep();
        let held = LOCAL
            .try_with(|m| m.borrow_mut().remove(&id))
            .map_err(|_| EngineError::Internal("thread-local storage is gone".into()))?;
        let mut st = match held {
            Some(st) => st,
            None => Box::new(Self::replay(Stop::new(), self.limits, self.mirror.clone())),
        };
        st.cancel.set_deadline(deadline);
        match catch_unwind(AssertUnwindSafe(|| f(&mut st))) {
            Ok(Err(EngineError::Timeout)) => {
                // The state's solvers are stopped for good: drop it, rebuild on the next request.
                self.rebuilds += 1;
                Err(EngineError::Timeout)
            }
            Ok(r) => {
                st.cancel.clear_deadline();
                let _ = LOCAL.try_with(|m| m.borrow_mut().insert(id, st));
                r
            }
            Err(_) => {
                // A panic may have left the state half-updated.
                self.rebuilds += 1;
                Err(EngineError::Crashed)
            }
        }
    }

    /// Drops retracted ids from the copy of Σ.
    fn forget(&mut self, ids: &[String]) {
        if ids.is_empty() {
            return;
        }
        for id in ids {
            self.mirror_ids.remove(id);
        }
        self.mirror.retain(|b| !ids.contains(&b.id));
    }

    fn apply_added(&mut self, spec: BeliefSpec, added: Added) {
        match added {
            Added::Merged => {
                if let Some(b) = self.mirror.iter_mut().find(|b| b.id == spec.id) {
                    b.step = spec.step;
                    b.confidence = spec.confidence;
                }
            }
            Added::New => {
                if !self.mirror_ids.insert(spec.id.clone()) {
                    self.mirror.retain(|b| b.id != spec.id);
                }
                self.mirror.push(spec);
            }
        }
    }

    /// Adds a belief without gate or revision (see [`State::add`]).
    pub fn add(&mut self, spec: BeliefSpec) -> Result<Added, EngineError> {
        let s = spec.clone();
        let fits = fits_inline(&spec.formula);
        let added = self.call(fits, move |st| st.add(s))?;
        self.apply_added(spec, added);
        Ok(added)
    }

    /// Retracts the active belief `id`; `false` if there is none.
    pub fn retract(&mut self, id: &str) -> Result<bool, EngineError> {
        let i = id.to_string();
        let done = self.call(true, move |st| Ok(st.retract(&i)))?;
        self.forget(&[id.to_string()]);
        Ok(done)
    }

    /// Is Σ consistent? If not, a minimal conflicting subset.
    pub fn consistent(&mut self) -> Result<Consistency, EngineError> {
        self.call(true, |st| st.consistent())
    }

    /// The gate Θ(Σ, Δ); `because` = the cited premise ids, if the claim cites any.
    pub fn check(
        &mut self,
        delta: &Formula,
        because: Option<&[String]>,
    ) -> Result<Check, EngineError> {
        let d = delta.clone();
        let b = because.map(|b| b.to_vec());
        self.call(fits_inline(delta), move |st| st.check(&d, b.as_deref()))
    }

    /// Entailed / contradicted / unknown, with N(φ) when graded.
    pub fn entails(&mut self, phi: &Formula) -> Result<Entailment, EngineError> {
        let f = phi.clone();
        self.call(fits_inline(phi), move |st| st.entails(&f))
    }

    /// One minimal support set of φ.
    pub fn why(&mut self, phi: &Formula) -> Result<Why, EngineError> {
        let f = phi.clone();
        self.call(fits_inline(phi), move |st| st.why(&f))
    }

    /// All minimal support sets of φ (at most `max`, within `budget`).
    pub fn supports(
        &mut self,
        phi: &Formula,
        max: usize,
        budget: Duration,
    ) -> Result<Supports, EngineError> {
        let f = phi.clone();
        self.call(fits_inline(phi), move |st| st.supports(&f, max, budget))
    }

    /// A validated countermodel of Σ ⊨ φ.
    pub fn whynot(&mut self, phi: &Formula) -> Result<WhyNot, EngineError> {
        let f = phi.clone();
        self.call(fits_inline(phi), move |st| st.whynot(&f))
    }

    /// The gate, then the update: a consistent belief is added; a contradicting one is
    /// resolved by `policy` (see [`crate::logic::revise`]).
    pub fn announce(&mut self, spec: BeliefSpec, policy: Policy) -> Result<Revision, EngineError> {
        let s = spec.clone();
        let fits = fits_inline(&spec.formula);
        let rev = self.call(fits, move |st| st.announce(s, policy))?;
        self.forget(&rev.retracted);
        if let Some(added) = rev.added {
            self.apply_added(spec, added);
        }
        Ok(rev)
    }

    /// Announces many beliefs in one request (one channel round trip instead of one per
    /// belief: what a trace replay wants). Each gets its own result, in order; the whole
    /// batch shares one deadline, and on a timeout none of it is applied.
    pub fn announce_many(
        &mut self,
        specs: Vec<BeliefSpec>,
        policy: Policy,
    ) -> Result<Vec<Result<Revision, EngineError>>, EngineError> {
        let batch = specs.clone();
        let fits = specs.iter().all(|s| fits_inline(&s.formula));
        let out = self.call(fits, move |st| {
            let mut out = Vec::with_capacity(batch.len());
            for spec in batch {
                match st.announce(spec, policy) {
                    Err(EngineError::Timeout) => return Err(EngineError::Timeout),
                    r => out.push(r),
                }
            }
            Ok(out)
        })?;
        for (spec, r) in specs.into_iter().zip(&out) {
            if let Ok(rev) = r {
                self.forget(&rev.retracted);
                if let Some(added) = rev.added {
                    self.apply_added(spec, added);
                }
            }
        }
        Ok(out)
    }

    /// Inc(Σ): the highest confidence level whose cut is inconsistent (0 if consistent).
    pub fn inconsistency_degree(&mut self) -> Result<f64, EngineError> {
        self.call(true, |st| st.inconsistency_degree())
    }

    /// N(φ): the highest level above Inc(Σ) whose cut entails φ (0 if none).
    pub fn necessity(&mut self, phi: &Formula) -> Result<f64, EngineError> {
        let f = phi.clone();
        self.call(fits_inline(phi), move |st| {
            let mut q = st.query(&f)?;
            let neg = st.neg(&mut q).to_vec();
            let r = st.necessity_lits(&neg);
            st.finish(q);
            r
        })
    }

    /// B≥k φ: the cut at k entails φ and k is above Inc(Σ).
    pub fn believes_at_least(&mut self, phi: &Formula, k: f64) -> Result<bool, EngineError> {
        let f = phi.clone();
        self.call(fits_inline(phi), move |st| {
            let mut q = st.query(&f)?;
            let neg = st.neg(&mut q).to_vec();
            let r = st.believes_at_least_lits(&neg, k);
            st.finish(q);
            r
        })
    }

    /// The active beliefs as the state itself holds them (not the handle's copy), in
    /// commitment order: for cross-checking that every change to Σ was reported.
    pub fn held(&mut self) -> Result<Vec<BeliefSpec>, EngineError> {
        self.call(true, |st| {
            Ok(st
                .beliefs
                .iter()
                .filter(|b| b.active)
                .map(|b| b.spec.clone())
                .collect())
        })
    }

    /// (main-solver solves, invalid cores detected and replaced) so far.
    pub fn stats(&mut self) -> Result<(u64, u64), EngineError> {
        self.call(true, |st| Ok(st.stats()))
    }
}

impl Drop for BeliefState {
    fn drop(&mut self) {
        if let Home::Local { thread, id } = self.home {
            if thread == thread::current().id() {
                let _ = LOCAL.try_with(|m| m.borrow_mut().remove(&id));
            } else {
                bury(thread, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::oracle;
    use proptest::prelude::*;

    fn lit(v: u8, positive: bool) -> Formula {
        let a = Formula::Atom(Atom::Prop(format!("a{v}")));
        if positive {
            a
        } else {
            Formula::Not(Box::new(a))
        }
    }

    /// One step of a T1-shaped stream: a clause of 1-3 literals and what to do with it.
    fn step() -> impl Strategy<Value = (Vec<(u8, bool)>, u8)> {
        (
            prop::collection::vec((0u8..7, any::<bool>()), 1..4),
            0u8..20,
        )
    }

    fn clause(lits: &[(u8, bool)]) -> Formula {
        if let [(v, p)] = lits {
            lit(*v, *p)
        } else {
            Formula::Or(lits.iter().map(|&(v, p)| lit(v, p)).collect())
        }
    }

    fn held_here(id: u64) -> bool {
        LOCAL.with(|m| m.borrow().contains_key(&id))
    }

    fn local_id(st: &BeliefState) -> Option<u64> {
        match st.home {
            Home::Local { id, .. } => Some(id),
            Home::Worker(_) => None,
        }
    }

    /// Requests run on the creating thread; a handle sent elsewhere takes its Σ along (its
    /// state is rebuilt on a solver thread) and the state left behind is freed.
    #[test]
    fn states_live_on_the_creating_thread_and_follow_the_handle() {
        let mut st = BeliefState::new().unwrap();
        st.add(BeliefSpec::new("a", lit(1, true))).unwrap();
        st.add(BeliefSpec::new(
            "r",
            Formula::Or(vec![lit(1, false), lit(2, true)]),
        ))
        .unwrap();
        assert_eq!(
            st.check(&lit(2, true), None).unwrap().outcome,
            Outcome::Entailed
        );
        let id = local_id(&st).expect("local");
        assert!(held_here(id));
        let st = thread::spawn(move || {
            assert_eq!(
                st.check(&lit(2, true), None).unwrap().outcome,
                Outcome::Entailed
            );
            assert_eq!(st.why(&lit(2, true)).unwrap().support, vec!["a", "r"]);
            assert!(local_id(&st).is_none());
            st
        })
        .join()
        .unwrap();
        // Sweeping happens on this thread's next visit.
        let _other = BeliefState::new().unwrap();
        assert!(!held_here(id));
        drop(st);
        let mut st = BeliefState::new().unwrap();
        let id = local_id(&st).expect("local");
        st.add(BeliefSpec::new("a", lit(1, true))).unwrap();
        thread::spawn(move || drop(st)).join().unwrap();
        let _other = BeliefState::new().unwrap();
        assert!(!held_here(id));
    }

    /// The domain is Σ's constants plus the query's, whatever was asked before and on
    /// whichever thread: over {a}, `∃x. P(x)` leaves no room for `¬P(a)`; asking about `b`
    /// (domain {a, b} for that question alone) does not change that, before or after the
    /// state moves to the solver thread.
    #[test]
    fn the_domain_does_not_remember_queries() {
        let p = |c: &str| {
            Formula::Atom(Atom::Pred(
                "P".into(),
                vec![crate::logic::formula::Term::Const(c.into())],
            ))
        };
        let q = |c: &str| {
            Formula::Atom(Atom::Pred(
                "Q".into(),
                vec![crate::logic::formula::Term::Const(c.into())],
            ))
        };
        let mut st = BeliefState::new().unwrap();
        st.add(BeliefSpec::new("qa", q("a"))).unwrap();
        assert_eq!(st.check(&q("b"), None).unwrap().outcome, Outcome::NewInfo);
        assert!(local_id(&st).is_some());
        let ex = Formula::Exists(
            vec!["x".into()],
            Box::new(Formula::Atom(Atom::Pred(
                "P".into(),
                vec![crate::logic::formula::Term::Var("x".into())],
            ))),
        );
        st.add(BeliefSpec::new("ex", ex)).unwrap();
        assert!(
            local_id(&st).is_none(),
            "quantified beliefs go to the solver thread"
        );
        let not_pa = Formula::Not(Box::new(p("a")));
        let not_pb = Formula::Not(Box::new(p("b")));
        assert_eq!(
            st.check(&not_pa, None).unwrap().outcome,
            Outcome::Contradiction
        );
        assert_eq!(st.check(&not_pb, None).unwrap().outcome, Outcome::NewInfo);
        assert_eq!(
            st.check(&not_pa, None).unwrap().outcome,
            Outcome::Contradiction
        );
    }

    /// A hand-built formula deeper than the parser allows is handled on the big-stack
    /// solver thread, from a test thread with a small stack.
    /// A formula of `depth` nested connectives over three atoms.
    fn nested(depth: usize) -> Formula {
        let mut f = lit(3, true);
        let mut d = 0;
        while d + 2 <= depth {
            f = if d % 4 == 0 {
                Formula::Or(vec![Formula::Not(Box::new(f)), lit(4, d % 8 == 0)])
            } else {
                Formula::And(vec![Formula::Not(Box::new(f)), lit(5, true)])
            };
            d += 2;
        }
        f
    }

    /// Gate, why, why-not and add of `f` (over atoms 3-5) agree with the oracle; returns
    /// whether the state stayed on this thread.
    fn exercise(f: &Formula) -> bool {
        let mut st = BeliefState::new().unwrap();
        st.add(BeliefSpec::new("a", lit(3, true))).unwrap();
        st.add(BeliefSpec::new("b", lit(5, true))).unwrap();
        let (a, b) = (lit(3, true), lit(5, true));
        let expect = if !oracle::satisfiable(&[&a, &b, f]) {
            Outcome::Contradiction
        } else if oracle::entails(&[&a, &b], f) {
            Outcome::Entailed
        } else {
            Outcome::NewInfo
        };
        assert_eq!(st.check(f, None).unwrap().outcome, expect);
        assert_eq!(st.why(f).unwrap().entailed, expect == Outcome::Entailed);
        let cm = st.whynot(f).unwrap().countermodel;
        assert_eq!(cm.is_none(), expect == Outcome::Entailed);
        st.add(BeliefSpec::new("deep", f.clone())).unwrap();
        local_id(&st).is_some()
    }

    /// On the 2 MiB test thread of a debug build: formulas up to the inline depth run here,
    /// deeper ones (up to the parser's limit and beyond) on the solver thread.
    #[test]
    fn deep_formulas_run_where_the_stack_fits() {
        assert!(exercise(&nested(INLINE_DEPTH)));
        assert!(!exercise(&nested(MAX_DEPTH)));
    }

    #[test]
    fn deep_formulas_go_to_the_solver_thread() {
        let mut deep = lit(3, true);
        for _ in 0..MAX_DEPTH / 2 + 10 {
            deep = Formula::Not(Box::new(Formula::Not(Box::new(deep))));
        }
        assert!(!fits_inline(&deep));
        let mut st = BeliefState::new().unwrap();
        st.add(BeliefSpec::new("a", lit(3, true))).unwrap();
        assert_eq!(st.check(&deep, None).unwrap().outcome, Outcome::Entailed);
        assert!(local_id(&st).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// The gate-then-add stream the TUI, the audit and the benchmark run, long enough to
        /// cross several probe batches, with retractions (stale snapshot, selector solver,
        /// rebuilt snapshot), rules, announcements and explanations interleaved: every
        /// verdict agrees with the truth-table oracle on the beliefs actually held.
        #[test]
        fn gate_then_add_streams_agree_with_oracle(
            steps in prop::collection::vec(step(), 120..200),
        ) {
            let mut st = BeliefState::new().unwrap();
            for (i, (lits, op)) in steps.iter().enumerate() {
                let delta = clause(lits);
                let held: Vec<Formula> = st.beliefs().iter().map(|b| b.formula.clone()).collect();
                let sigma: Vec<&Formula> = held.iter().collect();
                let mut with = sigma.clone();
                with.push(&delta);
                let expect = if !oracle::satisfiable(&with) {
                    Outcome::Contradiction
                } else if oracle::entails(&sigma, &delta) {
                    Outcome::Entailed
                } else {
                    Outcome::NewInfo
                };
                let id = format!("s{i}");
                // `entails` reads both sides: for a clause that retires a probe every step,
                // so the stream crosses several probe batches.
                if i % 2 == 0 {
                    let e = st.entails(&delta).unwrap().result;
                    let want = if expect == Outcome::Entailed && oracle::satisfiable(&sigma) {
                        Entails::Entailed
                    } else if expect == Outcome::Contradiction {
                        Entails::Contradicted
                    } else {
                        Entails::Unknown
                    };
                    prop_assert_eq!(e, want);
                }
                match op {
                    // Retract the oldest belief.
                    0 => {
                        if let Some(b) = st.beliefs().first().map(|b| b.id.clone()) {
                            prop_assert!(st.retract(&b).unwrap());
                        }
                    }
                    // A rule, when it keeps Σ consistent.
                    1 if expect != Outcome::Contradiction => {
                        let spec = BeliefSpec::new(id, delta.clone()).role(Role::Rule);
                        prop_assert!(st.add(spec).is_ok());
                    }
                    // The announce path (gate and update in one request).
                    2..=4 => {
                        let rev = st
                            .announce(BeliefSpec::new(id, delta.clone()).step(i as u64), Policy::Reject)
                            .unwrap();
                        prop_assert_eq!(rev.outcome, expect);
                        prop_assert_eq!(rev.applied, expect != Outcome::Contradiction);
                    }
                    _ => {
                        let got = st.check(&delta, None).unwrap().outcome;
                        prop_assert_eq!(got, expect);
                        match got {
                            Outcome::NewInfo => {
                                st.add(BeliefSpec::new(id, delta.clone()).step(i as u64)).unwrap();
                            }
                            Outcome::Entailed if op % 5 == 0 => {
                                let why = st.why(&delta).unwrap();
                                prop_assert!(why.entailed);
                                let support: Vec<&Formula> = st
                                    .beliefs()
                                    .iter()
                                    .filter(|b| why.support.contains(&b.id))
                                    .map(|b| &b.formula)
                                    .collect();
                                prop_assert!(oracle::entails(&support, &delta));
                            }
                            _ => {}
                        }
                    }
                }
            }
            let held: Vec<Formula> = st.beliefs().iter().map(|b| b.formula.clone()).collect();
            let sigma: Vec<&Formula> = held.iter().collect();
            prop_assert_eq!(st.consistent().unwrap().consistent, oracle::satisfiable(&sigma));
        }

        /// Rules and norms are accepted exactly when they keep the rules and norms held
        /// satisfiable, through replacements (same id, new formula) and retractions, with
        /// facts in between: the rules-only solver and the main solver's fallback together
        /// agree with the truth-table oracle in both directions, and a refusal names a
        /// conflict that contains the new rule.
        #[test]
        fn rules_are_accepted_exactly_when_the_hard_part_stays_satisfiable(
            steps in prop::collection::vec(step(), 30..80),
        ) {
            let mut st = BeliefState::new().unwrap();
            for (i, (lits, op)) in steps.iter().enumerate() {
                let f = clause(lits);
                let held: Vec<(String, Formula, Role)> = st
                    .beliefs()
                    .iter()
                    .map(|b| (b.id.clone(), b.formula.clone(), b.role))
                    .collect();
                match op {
                    0..=2 => {
                        if let Some((id, _, _)) = held.get(usize::from(*op) * 7 % held.len().max(1)) {
                            prop_assert!(st.retract(id).unwrap());
                        }
                    }
                    3..=6 => {
                        st.add(BeliefSpec::new(format!("f{i}"), f)).unwrap();
                    }
                    _ => {
                        // Every third rule replaces an earlier one under its id.
                        let id = format!("r{}", if op % 3 == 0 { i / 4 } else { i });
                        let mut hard: Vec<&Formula> = held
                            .iter()
                            .filter(|(_, _, r)| r.is_hard())
                            .map(|(_, g, _)| g)
                            .collect();
                        hard.push(&f);
                        let fits = oracle::satisfiable(&hard);
                        let role = if op % 2 == 0 { Role::Rule } else { Role::Norm };
                        match st.add(BeliefSpec::new(id.clone(), f).role(role)) {
                            Ok(_) => prop_assert!(fits, "accepted a rule that contradicts the rules"),
                            Err(EngineError::HardConflict(ids)) => {
                                prop_assert!(!fits, "refused a rule that fits");
                                prop_assert!(ids.contains(&id));
                            }
                            Err(e) => return Err(TestCaseError::fail(e.to_string())),
                        }
                    }
                }
            }
        }
    }
}
