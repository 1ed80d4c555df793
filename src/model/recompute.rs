//! The recomputation pass: every claim of a session checked again with the solver.
//!
//! [`recompute`] walks one session forward with ONE belief state (the engine's
//! [`State`](crate::logic::engine::State), driven on the walk's own thread through the
//! engine's local handle, `logic/engine/local.rs`), mirroring the trace:
//! each `announce` adds its belief (an announce of an active id with another formula replaces
//! it, as in the replay), each `retract` that ended a record retracts it. Along the way:
//!
//! - every `verify` gets Θ(Σ, Δ) recomputed on Σ just before it ([`VerifyResult`]). Δ is the
//!   conjunction of the event's formulas. `because`, when given, is passed to the engine,
//!   whose refinement says `ungrounded` when the cited premises plus all rules and norms do
//!   not entail Δ; both the three-way class and the refined outcome are kept;
//! - every `announce` records the gate verdict on the state before it, the citation check,
//!   and whether Σ is consistent after it, with a minimal conflicting subset if not
//!   ([`AnnounceCheck`]);
//! - every `query` gets `entails` recomputed ([`QueryResult`]), and so does every `answer`
//!   with a formula ([`AnswerResult`]: seed 001's ANSWER, "verify that the final answer is
//!   consistent with Σ");
//! - every belief derived from premises (`because`) of which some were retracted is checked
//!   for another support once the retractions settle ([`DerivationCheck`], truth
//!   maintenance: seed 001's "record of how a fact was derived");
//! - every `revise` records whether Σ was consistent before it, a minimal conflict, whether
//!   each retracted belief lies in a conflict, and whether Σ is consistent once the `retract`
//!   events that apply it have happened ([`RevisionCheck`]).
//!
//! Quantified formulas are grounded over the active domain (the constants of the active
//! beliefs plus those of the formula being checked, contract §3). The engine only holds
//! ground formulas, so whenever the domain a check needs differs from the one the quantified
//! beliefs were grounded over, they are re-grounded and replaced in the engine (traces without
//! quantifiers never pay for this).
//!
//! Nothing here fails: a formula that does not parse or cannot be grounded, a solver timeout
//! or an engine error makes that one result [`Unknown`] with the reason, and the walk goes on.

mod records;

use crate::trace::event::body_of;
use hashbrown::HashMap;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use crate::logic::engine::{
    BeliefSpec, EngineError, Entails, Limits, MAX_FORMULA_SIZE, MAX_STATE_SIZE, Outcome,
    Role as EngineRole,
};
use crate::logic::formula::Formula;
use crate::logic::ground::{self, DEFAULT_INSTANCE_CAP};
use crate::logic::parse::parse;
use crate::logic::revise::{Policy, Revision};
use crate::trace::TraceLog;
use crate::trace::event::Text;
use crate::trace::event::{Body, Kind, Outcome as Claimed, QueryAnswer, Role};

use super::timeline::{RetractEntry, RetractedBy, Timeline, event_at, load_at};
use crate::logic::engine::{LocalEngine, run_with_stack};
use records::Records;

/// Settings of the recomputation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecomputeOptions {
    /// How long one solver request may take before its answer is [`Unknown`].
    pub timeout: Duration,
    /// The cap on quantifier instances per formula (see [`crate::logic::ground`]).
    pub instance_cap: u64,
    /// The cap on the SAT variables, and on the clauses, one formula may add
    /// ([`Limits::max_formula_vars`]); a belief over it is not held by the solver, and every
    /// claim about a Σ holding it is [`Unknown::Incomplete`].
    pub formula_cap: usize,
    /// The cap on the SAT variables, and on the clauses, of the whole belief state
    /// ([`Limits::max_vars`]).
    pub state_cap: usize,
    /// Also answer the questions the audit asks beyond the claims themselves (see
    /// [`AuditQuestions`]); `None` for the plain recomputation. On by default: the answers
    /// that are minimal sets (conflicts, supports) are one valid choice among several, and
    /// which one the solver finds depends on everything asked before, so an audit made
    /// from a default recomputation reports exactly what `doxascope audit` reports.
    pub audit: Option<AuditQuestions>,
}

impl RecomputeOptions {
    /// The engine limits these options set.
    pub fn limits(&self) -> Limits {
        Limits {
            timeout: self.timeout,
            max_vars: self.state_cap,
            max_clauses: self.state_cap,
            max_formula_vars: self.formula_cap,
            max_formula_clauses: self.formula_cap,
            ..Limits::default()
        }
    }
}

impl Default for RecomputeOptions {
    fn default() -> Self {
        RecomputeOptions {
            timeout: Duration::from_secs(10),
            instance_cap: DEFAULT_INSTANCE_CAP,
            formula_cap: MAX_FORMULA_SIZE,
            state_cap: MAX_STATE_SIZE,
            audit: Some(AuditQuestions::default()),
        }
    }
}

/// The audit's extra questions, answered during the same walk so every solver question is
/// asked once, on the one engine that already holds Σ at that step (a second mirror of Σ per
/// check used to cost as much as the recomputation itself):
///
/// - for the first [`EVIDENCE_CAP`] verifies of a session whose claim disagrees, the minimal
///   premise sets behind the recomputed verdict ([`VerifyResult::evidence`]);
/// - for a verify recomputed as a contradiction that cites premises, whether those premises
///   entail ¬Δ ([`VerifyResult::contradiction_citation`]);
/// - after every `retract` event, whether Σ is consistent ([`Recomputed::retracts`]), and at
///   the end of the session a minimal conflict when it is not ([`Recomputed::end`]);
/// - for every revision that left Σ consistent, which retracted beliefs could be put back
///   ([`RetractedCheck::restorable`]), and the revision policy re-run on Σ just before the
///   trigger's announcement ([`RevisionCheck::rerun`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AuditQuestions {
    /// The policy every revision is re-run with; `None`: the policy its `revise` names
    /// (revisions naming no known policy are not re-run).
    pub policy: Option<Policy>,
}

/// How many disagreeing verifies per session get their supports computed. Finding all
/// minimal supports is the one expensive question the audit asks; a trace with more
/// mismatches than this has a broken gate, and the first ones show how.
pub const EVIDENCE_CAP: usize = 20;

/// Why a result could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unknown {
    /// A formula of the event does not parse.
    Parse {
        /// 1-based column in the formula text.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// Grounding was refused (too many instances).
    Ground(String),
    /// The solver did not answer in time.
    Timeout,
    /// A formula exceeds the variable or clause cap (checked before it is encoded).
    TooLarge(String),
    /// Σ holds a belief the solver could not take in (too large, not groundable), so no
    /// answer about Σ can be trusted until it is retracted.
    Incomplete {
        /// The belief id.
        id: String,
        /// Why the solver does not hold it.
        reason: String,
    },
    /// Any other engine failure (internal).
    Engine(String),
    /// The event has nothing to check (no formula).
    Nothing,
}

impl Unknown {
    /// Whether this is a verdict that exists but was not computed within the solver's
    /// budget (time or size): the claim it concerns is `not-checkable`, never checked. Parse
    /// errors and events without a formula are not: they are findings of their own.
    pub fn not_checkable(&self) -> bool {
        !matches!(self, Unknown::Parse { .. } | Unknown::Nothing)
    }

    /// A stable short name of the cause, for `audit --json` (`evidence.cause` of a
    /// `not-checkable` finding): `timeout`, `too-large`, `ground-cap`, `sigma-incomplete`,
    /// `engine`, `parse`, `nothing`.
    pub fn cause(&self) -> &'static str {
        match self {
            Unknown::Parse { .. } => "parse",
            Unknown::Ground(_) => "ground-cap",
            Unknown::Timeout => "timeout",
            Unknown::TooLarge(_) => "too-large",
            Unknown::Incomplete { .. } => "sigma-incomplete",
            Unknown::Engine(_) => "engine",
            Unknown::Nothing => "nothing",
        }
    }
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unknown::Parse { column, message } => {
                write!(f, "formula does not parse at column {column}: {message}")
            }
            Unknown::Ground(m) => write!(f, "{m}"),
            Unknown::Timeout => write!(f, "unknown (timeout)"),
            Unknown::TooLarge(m) => write!(f, "{m}"),
            Unknown::Incomplete { id, reason } => write!(
                f,
                "Σ holds {id}, which the solver could not take in ({reason})"
            ),
            Unknown::Engine(m) => write!(f, "solver error: {m}"),
            Unknown::Nothing => write!(f, "nothing to check"),
        }
    }
}

impl From<EngineError> for Unknown {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Timeout => Unknown::Timeout,
            e @ EngineError::TooLarge { .. } => Unknown::TooLarge(e.to_string()),
            EngineError::Ground(g) => Unknown::Ground(g.to_string()),
            e => Unknown::Engine(e.to_string()),
        }
    }
}

/// The gate recomputed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// Θ(Σ, Δ): `Contradiction`, `Entailed` or `NewInfo` (never `Ungrounded`).
    pub theta: Outcome,
    /// The engine's outcome with the cited premises: `theta`, or `Ungrounded` when the
    /// premises cited (plus rules and norms) do not entail Δ. Equal to `theta` without
    /// `because`.
    pub outcome: Outcome,
    /// Cited ids that are not active beliefs at that point.
    pub missing_citations: Vec<String>,
}

/// A `verify` event, claimed and recomputed.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyResult {
    /// The step of the event.
    pub step: u32,
    /// The event position in [`TraceLog::events`].
    pub event: u32,
    /// The outcome the agent claimed.
    pub claimed: Option<Claimed>,
    /// The recomputed gate on Σ just before the event.
    pub result: Result<Gate, Unknown>,
    /// Audit only ([`AuditQuestions`]): for the first [`EVIDENCE_CAP`] disagreeing verifies
    /// of the session, the minimal premise sets (at most 3) entailing Δ when the recomputed
    /// verdict is `entailed`, or ¬Δ when it is `contradiction`; `None` otherwise (boxed:
    /// capped per session, while a session keeps a result per verify).
    pub evidence: Option<Box<Result<Vec<Vec<String>>, Unknown>>>,
    /// Audit only: for a verify recomputed as a contradiction that cites premises and does
    /// not itself claim `ungrounded`, what the citation is worth (boxed: one verify in a
    /// few has one, and a session keeps a result per verify until its audit ends).
    pub contradiction_citation: Option<Box<ContradictionCitation>>,
}

/// The citation of a verified contradiction: the engine refines only consistent claims, so
/// "the cited premises, with the rules and norms, entail ¬Δ" is asked separately.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContradictionCitation {
    /// Cited ids that are not active beliefs.
    pub missing: Vec<String>,
    /// Whether the cited premises (with every rule and norm) entail ¬Δ; asked only when
    /// nothing is missing (`Ok(true)` otherwise).
    pub grounded: Result<bool, Unknown>,
}

/// Σ's consistency after a `retract` event that removed at least one belief.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetractConsistency {
    /// The step of the `retract`.
    pub step: u32,
    /// Whether Σ is consistent right after it.
    pub consistent: Result<bool, Unknown>,
    /// Whether Σ was consistent just before it: asked only of a retract by revision that
    /// carries out no `revise` ([`unforced_candidate`], `revision-not-minimal`'s question:
    /// did a conflict force it?), and only while no quantified belief is held (a question
    /// would re-ground them, which the recomputation must not depend on); `None` otherwise.
    pub before: Option<Result<bool, Unknown>>,
}

/// A `thought` with `asserts`, judged on Σ at its step (audit only): the questions of
/// `thought-contradicts-sigma` and `unsupported-thought-premise`, asked in the walk rather
/// than by a second mirror of Σ replayed for the checks (issue 31).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThoughtCheck {
    /// The step of the thought.
    pub step: u32,
    /// What Θ said of each asserted formula, when Σ was consistent there (empty when it was
    /// not: nothing is judged against an inconsistent Σ); `None` when the walk could not
    /// answer as the checks ask (quantifiers, beliefs missing, an unknown), left to a probe.
    pub judged: Option<Vec<AssertCheck>>,
}

/// One asserted formula of a thought through Θ (see [`ThoughtCheck`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertCheck {
    /// Its index in the thought's `asserts` (formulas that do not parse, or that the solver
    /// could not judge, have none).
    pub index: u32,
    /// Θ(Σ, φ).
    pub outcome: Outcome,
    /// For a contradiction, a minimal subset of Σ entailing ¬φ (empty when none was found
    /// within the budget).
    pub conflict: Vec<String>,
}

/// The record a `retract` ended when the agent said it retracted by revision and no `revise`
/// decided it: a retraction only a conflict of Σ could have forced.
pub(crate) fn unforced_candidate(tl: &Timeline, e: &RetractEntry) -> Option<u32> {
    let idx = e.record?;
    let r = tl.beliefs().get(idx as usize)?;
    let by_revision = r
        .retraction
        .is_some_and(|x| x.by == RetractedBy::Revision && x.event == e.event);
    (e.revision.is_none() && by_revision && e.step > 0).then_some(idx)
}

/// A revision policy re-run on Σ just before the trigger's announcement.
#[derive(Debug, Clone, PartialEq)]
pub struct Rerun {
    /// The policy re-run.
    pub policy: Policy,
    /// What it does; `None` when Σ was not consistent before the trigger (every policy is
    /// then undefined) or could not be decided.
    pub revision: Option<Result<Revision, Unknown>>,
}

impl VerifyResult {
    /// Whether the claim agrees with the recomputation, by convention 2 of
    /// `docs/samples.md`: equal classes agree, and a claimed `ungrounded` or `newinfo`
    /// agrees with a recomputed `newinfo` (UNGROUNDED refines NEWINFO and cannot be decided
    /// from the formula alone). `None` when there is no claim or no recomputed result.
    pub fn agrees(&self) -> Option<bool> {
        let claimed = self.claimed?;
        let theta = self.result.as_ref().ok()?.theta;
        Some(matches!(
            (claimed, theta),
            (Claimed::Contradiction, Outcome::Contradiction)
                | (Claimed::Entailed, Outcome::Entailed)
                | (Claimed::Newinfo | Claimed::Ungrounded, Outcome::NewInfo)
        ))
    }
}

/// What an `announce` did to Σ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnounceResult {
    /// The gate on Σ just before the announcement (with its `because`).
    pub gate: Gate,
    /// Whether Σ is consistent right after it.
    pub consistent_after: bool,
    /// When not: a minimal conflicting subset of Σ (ids), rules and norms included. It is
    /// always computed when this announcement made Σ inconsistent; while Σ stays
    /// inconsistent it is the conflict found earlier if that is still wholly in Σ, else empty
    /// (call `consistent` on a state to get one). Shared: every announcement while Σ stays
    /// inconsistent repeats the same conflict, and a copy each was a tenth of what a long
    /// session's results held.
    pub conflict: Arc<[String]>,
    /// A rule or norm that contradicted the rules and norms already held: the engine refused
    /// it as hard, so it is mirrored as a retractable belief (Σ is then inconsistent).
    pub hard_conflict: bool,
    /// Whether Σ was consistent just before: `consistent_before && !consistent_after` is the
    /// announcement that made Σ inconsistent (seed 000, Table 1, step 5).
    pub consistent_before: bool,
}

/// An `announce` event, recomputed.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnounceCheck {
    /// The step.
    pub step: u32,
    /// The event position.
    pub event: u32,
    /// The belief id.
    pub id: String,
    /// The belief record it created (index into [`Timeline::beliefs`]); every announcement
    /// that the replay took creates one (a re-announcement overwrites by starting a new
    /// record), so `None` only for an event the replay could not take.
    pub record: Option<u32>,
    /// The result.
    pub result: Result<AnnounceResult, Unknown>,
}

/// A `query` event, claimed and recomputed.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryResult {
    /// The step.
    pub step: u32,
    /// The event position.
    pub event: u32,
    /// The answer the agent received.
    pub claimed: Option<QueryAnswer>,
    /// `entails` recomputed on Σ just before the event.
    pub result: Result<Entails, Unknown>,
    /// Audit only: for the first [`EVIDENCE_CAP`] disagreeing queries of the session that Σ
    /// entails or contradicts, the minimal subsets of Σ (at most 3) behind the recomputed
    /// answer: entailing the formula when it is entailed, its negation when contradicted.
    pub evidence: Option<Result<Vec<Vec<String>>, Unknown>>,
}

/// An `answer` event with a formula, recomputed: `entails` on Σ just before it.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerResult {
    /// The step.
    pub step: u32,
    /// The event position.
    pub event: u32,
    /// Whether the agent hedged it (`hedged: true`): then only a contradiction matters.
    pub hedged: bool,
    /// `entails` recomputed on Σ just before the event.
    pub result: Result<Entails, Unknown>,
    /// Audit only: for an answer Σ contradicts (within [`EVIDENCE_CAP`]), the minimal subsets
    /// of Σ entailing its negation.
    pub evidence: Option<Result<Vec<Vec<String>>, Unknown>>,
}

impl QueryResult {
    /// Whether the claimed answer matches (`yes` = entailed, `no` = contradicted, `unknown`
    /// = neither).
    pub fn agrees(&self) -> Option<bool> {
        let c = self.claimed?;
        let r = *self.result.as_ref().ok()?;
        Some(matches!(
            (c, r),
            (QueryAnswer::Yes, Entails::Entailed)
                | (QueryAnswer::No, Entails::Contradicted)
                | (QueryAnswer::Unknown, Entails::Unknown)
        ))
    }
}

/// One belief a `revise` gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetractedCheck {
    /// The id (as resolved by the replay).
    pub id: String,
    /// Whether it was active just before the revise.
    pub was_active: bool,
    /// Whether it lies in a minimal conflicting subset of Σ just before the revise:
    /// `Some(false)` when Σ was consistent (or it was not active), `Some(true)` when it is in
    /// the minimal conflict the engine found, `None` otherwise: Σ may have several conflicts,
    /// and membership in *some* minimal conflict other than the one found is not decided.
    pub in_conflict: Option<bool>,
    /// Audit only: when the revision left Σ consistent and the belief was active, whether
    /// it could be put back alone with Σ staying consistent (`Err` when the solver could not
    /// decide it); `None` when not asked.
    pub restorable: Option<Result<bool, Unknown>>,
}

/// A `revise` event, recomputed.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionCheck {
    /// The step of the revise.
    pub step: u32,
    /// The event position.
    pub event: u32,
    /// Index into [`Timeline::revisions`].
    pub revision: u32,
    /// Whether Σ was consistent just before the revise, and a minimal conflict if not.
    pub before: Result<(bool, Vec<String>), Unknown>,
    /// The beliefs it retracted.
    pub retracted: Vec<RetractedCheck>,
    /// The step after which `after` was computed: the last `retract` applying the revise (or
    /// the revise itself when none did).
    pub settled_at: u32,
    /// Whether Σ is consistent once the revise is applied, and a minimal conflict if not.
    pub after: Result<(bool, Vec<String>), Unknown>,
    /// Audit only: the policy re-run for the trigger (see [`AuditQuestions`]); `None` when
    /// not asked (no policy, no trigger record, or a plain recomputation).
    pub rerun: Option<Rerun>,
}

/// A belief that stayed in Σ after premises it was derived from (its `because`) left it,
/// checked for another support: whether Σ without it still entails it. Judged once the run
/// of retractions settles (the last of consecutive `retract`, `revise` and superseding
/// `announce` events), so an agent retracting a premise and then its dependents is never
/// caught in between; judged only while Σ is consistent (in an inconsistent Σ everything
/// follows from the rest). One result per belief record: the first time it is unsupported,
/// or could not be decided.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivationCheck {
    /// The step of the event that settled the retractions.
    pub step: u32,
    /// That event's position.
    pub event: u32,
    /// The dependent belief's record (index into [`Timeline::beliefs`]).
    pub record: u32,
    /// Its id.
    pub id: String,
    /// The premises it cited that were in Σ when it was announced and are gone now.
    pub gone: Vec<String>,
    /// The cited premises still in Σ.
    pub left: Vec<String>,
    /// Whether Σ without it entails it (`Ok(false)`: it has lost its support).
    pub supported: Result<bool, Unknown>,
}

/// A per-event problem of the recomputation.
#[derive(Debug, Clone, PartialEq)]
pub struct RecomputeError {
    /// The step.
    pub step: u32,
    /// The event position.
    pub event: u32,
    /// What happened.
    pub error: Unknown,
}

/// Everything the recomputation found for one session, in event order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recomputed {
    /// The session.
    pub session: String,
    /// One per `verify`.
    pub verifies: Vec<VerifyResult>,
    /// One per `announce`.
    pub announces: Vec<AnnounceCheck>,
    /// One per `query`.
    pub queries: Vec<QueryResult>,
    /// One per `answer` with a formula.
    pub answers: Vec<AnswerResult>,
    /// One per `revise`.
    pub revisions: Vec<RevisionCheck>,
    /// Derived beliefs left without support (or undecided) after their premises went.
    pub derivations: Vec<DerivationCheck>,
    /// Problems mirroring Σ (a belief that could not be added or retracted).
    pub errors: Vec<RecomputeError>,
    /// How many times the solver state was rebuilt after a timeout.
    pub rebuilds: u64,
    /// Audit only: Σ's consistency after each `retract` event that removed a belief, in
    /// step order.
    pub retracts: Vec<RetractConsistency>,
    /// Audit only: every `thought` with `asserts`, judged, in step order.
    pub thoughts: Vec<ThoughtCheck>,
    /// Audit only: whether Σ is consistent at the end of the session, with a minimal
    /// conflict freshly computed when it is not.
    pub end: Option<Result<(bool, Vec<String>), Unknown>>,
    /// The audit questions these results answer (`None`: a plain recomputation).
    pub audit: Option<AuditQuestions>,
}

/// The forward-walking mirror of Σ in one engine (also walked by `model::history` and
/// `model::whatif`, which ask other questions of the same Σ).
pub(super) struct Mirror {
    engine: LocalEngine,
    /// Active quantified beliefs: id -> (formula as parsed, spec with the current grounding).
    quantified: BTreeMap<String, (Formula, BeliefSpec)>,
    /// Constants of the active beliefs, counted.
    consts: BTreeMap<String, u32>,
    /// Constants of each active belief.
    belief_consts: HashMap<String, BTreeSet<String>>,
    /// The domain the quantified beliefs are grounded over.
    grounded: BTreeSet<String>,
    cap: u64,
    /// Whether Σ is satisfiable, when known. Adding a belief keeps an inconsistent Σ
    /// inconsistent, retracting keeps a consistent Σ consistent, and a gate verdict other
    /// than `contradiction` proves Σ ∧ φ consistent, so most events need no extra solve.
    /// While Σ is known inconsistent, Θ is `contradiction` for every Δ and every formula is
    /// entailed, which needs no solve either: this is what keeps the pass fast on traces that
    /// stay inconsistent for long stretches.
    known_sat: Option<bool>,
    /// A minimal conflicting subset of Σ, computed on demand while Σ is inconsistent. It stays
    /// valid while beliefs are only added and while retractions miss it.
    known_conflict: Option<Arc<[String]>>,
    /// Σ's satisfiability ran out of time and Σ has not changed since: asking again would
    /// spend the same budget for the same non-answer.
    sat_unknown: Option<Unknown>,
    /// Beliefs of Σ the engine does not hold (over a cap, not groundable), with the reason.
    /// While any is active, every answer about Σ is [`Unknown::Incomplete`]: the engine's Σ
    /// lacks a belief of the trace's, and an answer about the smaller set would be an answer
    /// about a state the agent was never in.
    missing: BTreeMap<String, Unknown>,
    /// Add rules and norms without checking them against the rules and norms held: for walks
    /// that only ask whether Σ is consistent and what it entails (`model::history`), where a
    /// rule that contradicts the others makes Σ inconsistent either way, and the check (a
    /// solve and a minimal conflict for the refusal) was most of the cost on long traces.
    unchecked: bool,
    /// Bumped whenever Σ (as the engine holds it) may have changed.
    sigma: u64,
    /// The last gate answered, with the Σ it was answered on: an agent announces the Δ it
    /// just verified (gate, then update), and Θ depends on Σ and Δ alone, so the
    /// announcement's own gate needs no second solve.
    last_gate: Option<(u64, Formula, Vec<String>, Gate)>,
}

pub(super) fn role(r: Role) -> EngineRole {
    match r {
        Role::Fact => EngineRole::Fact,
        Role::Rule => EngineRole::Rule,
        Role::Norm => EngineRole::Norm,
        Role::Assumption => EngineRole::Assumption,
    }
}

pub(super) fn parse_formula(text: &str) -> Result<Formula, Unknown> {
    parse(text).map_err(|e| Unknown::Parse {
        column: e.column,
        message: e.message,
    })
}

impl Mirror {
    /// An empty Σ under the limits of `opts`.
    pub(super) fn new(opts: &RecomputeOptions) -> Mirror {
        Mirror {
            engine: LocalEngine::with_limits(opts.limits()),
            quantified: BTreeMap::new(),
            consts: BTreeMap::new(),
            belief_consts: HashMap::new(),
            grounded: BTreeSet::new(),
            cap: opts.instance_cap,
            known_sat: Some(true),
            known_conflict: None,
            sat_unknown: None,
            missing: BTreeMap::new(),
            unchecked: false,
            sigma: 0,
            last_gate: None,
        }
    }

    /// An empty Σ that takes rules and norms in without checking them against the others
    /// (see [`Mirror::unchecked`]).
    pub(super) fn unchecked(opts: &RecomputeOptions) -> Mirror {
        Mirror {
            unchecked: true,
            ..Mirror::new(opts)
        }
    }

    fn domain_with(&self, f: &Formula) -> BTreeSet<String> {
        let mut d: BTreeSet<String> = self.consts.keys().cloned().collect();
        ground::question_constants(f, &mut d);
        d
    }

    /// `f` grounded over `domain`; borrowed when `f` has no quantifier (most formulas of a
    /// trace), so the common case copies neither the formula nor the domain.
    fn ground<'f>(
        &self,
        f: &'f Formula,
        domain: &BTreeSet<String>,
    ) -> Result<Cow<'f, Formula>, Unknown> {
        let d: Vec<String> = if ground::has_quantifier(f) {
            domain.iter().cloned().collect()
        } else {
            Vec::new()
        };
        ground::ground_ref(f, &d, self.cap).map_err(|e| Unknown::Ground(e.to_string()))
    }

    /// Makes the quantified beliefs grounded over `domain`.
    fn sync(&mut self, domain: &BTreeSet<String>) -> Result<(), Unknown> {
        if *domain == self.grounded {
            return Ok(());
        }
        self.sigma += 1;
        let ids: Vec<String> = self.quantified.keys().cloned().collect();
        for id in ids {
            let Some((raw, spec)) = self.quantified.get(&id) else {
                continue;
            };
            let g = self.ground(raw, domain)?.into_owned();
            let mut spec = spec.clone();
            spec.formula = g.into();
            if self.engine.add_or_demote(spec.clone())?.1 {
                spec.role = EngineRole::Assumption;
            }
            if let Some(q) = self.quantified.get_mut(&id) {
                q.1 = spec;
            }
        }
        self.grounded = domain.clone();
        self.forget();
        Ok(())
    }

    /// Whether a request about `f` depends on the domain: only quantifiers (in Σ or in `f`)
    /// do. Without them nothing is grounded, and the domain (the constants of Σ, which can
    /// grow with every event) is not even collected.
    fn needs_domain(&self, f: &Formula) -> bool {
        !self.quantified.is_empty() || ground::has_quantifier(f)
    }

    /// Grounds `f` and brings Σ's grounding to the same domain.
    fn prepare<'f>(&mut self, f: &'f Formula) -> Result<Cow<'f, Formula>, Unknown> {
        if !self.needs_domain(f) {
            // Still through `ground`: its depth and size guards apply to every formula.
            return self.ground(f, &BTreeSet::new());
        }
        let domain = self.domain_with(f);
        self.sync(&domain)?;
        self.ground(f, &domain)
    }

    /// Err while Σ holds a belief the engine could not take in.
    fn whole(&self) -> Result<(), Unknown> {
        match self.missing.iter().next() {
            None => Ok(()),
            Some((id, reason)) => Err(Unknown::Incomplete {
                id: id.clone(),
                reason: reason.to_string(),
            }),
        }
    }

    /// Adds a belief to the mirror of Σ; `Ok(true)` when a rule or norm contradicted the hard
    /// part and was mirrored as retractable. Whatever the engine says, the belief is in Σ
    /// afterwards: held by the engine, or listed in [`Mirror::missing`] with the reason
    /// (returned as the `Err`), so that no later answer is about a Σ without it.
    pub(super) fn add(&mut self, spec: BeliefSpec, raw: &Formula) -> Result<bool, Unknown> {
        let id = spec.id.clone();
        let r = self.try_add(spec, raw);
        if let Err(e) = &r {
            // A replaced belief the engine still holds must go too; otherwise the engine's
            // beliefs are unchanged, and an inconsistency among them is still Σ's.
            if self.engine.belief(&id).is_some() {
                let _ = self.engine.retract(&id);
                self.forget();
            }
            self.remove(&id);
            self.sat_unknown = None;
            self.missing.insert(id, e.clone());
        }
        r
    }

    fn try_add(&mut self, spec: BeliefSpec, raw: &Formula) -> Result<bool, Unknown> {
        // A belief is held in its witnessed form (`logic::ground`): its witnesses are
        // constants of the domain like any other.
        let held = ground::witnessed(raw);
        let raw: &Formula = &held;
        self.sigma += 1;
        let id = spec.id.clone();
        let held = self.engine.belief(&id).is_some();
        let was_missing = !held && self.missing.remove(&id).is_some();
        self.sat_unknown = None;
        self.remove(&id);
        if held || was_missing {
            // An overwrite is a retraction, then an addition at the end of the commitment
            // order: as for a retraction, an inconsistent Σ's preferred conflict that does
            // not name the old belief stays preferred (a conflict naming the new one ends
            // later). Ground values are overwritten all the time, and searching the conflict
            // again after each was most of a long audit (issue 31). Quantified beliefs are
            // re-grounded over a domain the new belief may change, so they forget.
            let kept = held
                && self.quantified.is_empty()
                && self.known_sat == Some(false)
                && self
                    .known_conflict
                    .as_ref()
                    .is_some_and(|c| c.iter().all(|x| *x != id));
            if !kept {
                self.forget();
            }
        } else if self.known_sat == Some(true) {
            self.known_sat = None;
        }
        let mut cs = BTreeSet::new();
        ground::constants(raw, &mut cs);
        for c in &cs {
            *self.consts.entry(c.clone()).or_default() += 1;
        }
        // Propositional beliefs (most of a trace) have no constants to count down.
        if !cs.is_empty() {
            self.belief_consts.insert(id.clone(), cs);
        }
        let mut spec = spec;
        spec.formula = if self.needs_domain(raw) {
            let domain: BTreeSet<String> = self.consts.keys().cloned().collect();
            self.sync(&domain)?;
            self.ground(raw, &domain)?.into_owned().into()
        } else {
            self.ground(raw, &BTreeSet::new())?.into_owned().into()
        };
        let mut hard_conflict = false;
        let added = if self.unchecked {
            self.engine.add_unchecked(spec.clone()).map(|a| (a, false))
        } else {
            self.engine.add_or_demote(spec.clone())
        };
        match added {
            Ok((_, demoted)) => {
                if demoted {
                    hard_conflict = true;
                    spec.role = EngineRole::Assumption;
                }
            }
            // Only a rule or norm is solved for when added (against the hard part): the
            // trace says it joined Σ, so it joins unchecked, and whether Σ stayed consistent
            // is asked (and may be unknown) like for any other belief.
            Err(EngineError::Timeout) => {
                self.engine.add_unchecked(spec.clone())?;
            }
            Err(e) => return Err(e.into()),
        }
        if ground::has_quantifier(raw) {
            self.quantified.insert(id, (raw.clone(), spec));
        }
        Ok(hard_conflict)
    }

    /// Forgets the bookkeeping of an id (the engine side is done by the caller or by a
    /// replacing add).
    fn remove(&mut self, id: &str) {
        self.quantified.remove(id);
        if let Some(cs) = self.belief_consts.remove(id) {
            for c in cs {
                if let Some(n) = self.consts.get_mut(&c) {
                    *n -= 1;
                    if *n == 0 {
                        self.consts.remove(&c);
                    }
                }
            }
        }
    }

    pub(super) fn retract(&mut self, id: &str) -> Result<bool, Unknown> {
        self.sigma += 1;
        self.remove(id);
        self.sat_unknown = None;
        if self.missing.remove(id).is_some() {
            self.forget();
        }
        if self.known_sat == Some(false)
            && self
                .known_conflict
                .as_ref()
                .is_none_or(|c| c.iter().any(|x| x == id))
        {
            self.forget();
        }
        Ok(self.engine.retract(id)?)
    }

    fn forget(&mut self) {
        self.known_sat = None;
        self.known_conflict = None;
        self.sat_unknown = None;
    }

    fn sync_active(&mut self) -> Result<(), Unknown> {
        if self.quantified.is_empty() {
            return Ok(());
        }
        let domain: BTreeSet<String> = self.consts.keys().cloned().collect();
        self.sync(&domain)
    }

    /// Whether [`Mirror::sat`] can answer without a solve.
    pub(super) fn sat_known(&self) -> bool {
        self.known_sat.is_some() || self.sat_unknown.is_some()
    }

    /// Whether a minimal conflict of an inconsistent Σ is known.
    pub(super) fn conflict_known(&self) -> bool {
        self.known_conflict.is_some()
    }

    /// Whether Σ is satisfiable (one solve at most, no conflict computed).
    pub(super) fn sat(&mut self) -> Result<bool, Unknown> {
        // With beliefs missing, the engine holds a subset of Σ: its inconsistency is Σ's, its
        // consistency says nothing about Σ.
        match self.sat_held() {
            Ok(false) => Ok(false),
            r => {
                self.whole()?;
                r
            }
        }
    }

    /// Whether the beliefs the engine holds are satisfiable.
    fn sat_held(&mut self) -> Result<bool, Unknown> {
        self.sync_active()?;
        if let Some(k) = self.known_sat {
            return Ok(k);
        }
        if let Some(e) = &self.sat_unknown {
            return Err(e.clone());
        }
        match self.engine.check(&Formula::True, None) {
            Ok(c) => {
                let sat = c.theta != Outcome::Contradiction;
                self.known_sat = Some(sat);
                Ok(sat)
            }
            Err(e) => {
                let e = Unknown::from(e);
                self.sat_unknown = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Whether Σ is known to be inconsistent with every belief of it held by the engine and
    /// none quantified: then [`Mirror::supported_without`] answers `Ok(None)` for every
    /// belief, without asking anything.
    fn inconsistent_whole(&mut self) -> bool {
        self.quantified.is_empty() && self.missing.is_empty() && self.sat() == Ok(false)
    }

    /// Whether Σ is consistent, and a minimal conflict when not.
    pub(super) fn consistent(&mut self) -> Result<(bool, Vec<String>), Unknown> {
        if self.sat()? {
            return Ok((true, Vec::new()));
        }
        if let Some(c) = &self.known_conflict {
            return Ok((false, c.to_vec()));
        }
        let c = self.engine.consistent()?;
        self.known_sat = Some(c.consistent);
        self.known_conflict = (!c.consistent).then(|| c.conflict.as_slice().into());
        Ok((c.consistent, c.conflict))
    }

    /// The cited ids that are not active.
    fn missing(&self, because: &[String]) -> Vec<String> {
        because
            .iter()
            .filter(|id| self.engine.belief(id).is_none())
            .cloned()
            .collect()
    }

    /// Whether Σ entails `f`, contradicts it, or neither (one budgeted solve; none while Σ
    /// is known inconsistent, when everything follows, as the engine says).
    fn entails(&mut self, f: &Formula) -> Result<Entails, Unknown> {
        let g = self.prepare(f)?;
        if self.known_sat == Some(false) {
            return Ok(Entails::Entailed);
        }
        self.whole()?;
        Ok(self.engine.entails_plain(&g)?)
    }

    /// Whether Σ without the belief `id` still entails it; `None` while Σ is inconsistent
    /// (not judged). Σ is left as it was: a retractable belief is switched off for one solve
    /// (the gate's citation refinement with every other belief cited); a rule or norm, which
    /// the engine holds as hard, is taken out for the question and put back.
    fn supported_without(&mut self, id: &str) -> Result<Option<bool>, Unknown> {
        self.whole()?;
        self.sync_active()?;
        if !self.sat()? {
            return Ok(None);
        }
        let Some(spec) = self.engine.belief(id).cloned() else {
            return Err(Unknown::Nothing);
        };
        if spec.role.is_hard() {
            self.engine.retract(id)?;
            let r = self.engine.entails_plain(&spec.formula);
            // Σ held it a moment ago, with the same formula: putting it back cannot conflict.
            self.engine.add_unchecked(spec)?;
            return Ok(Some(r? == Entails::Entailed));
        }
        let others: Vec<String> = self
            .engine
            .beliefs()
            .filter(|b| b.id != id)
            .map(|b| b.id.clone())
            .collect();
        let c = self.engine.check(&spec.formula, Some(&others))?;
        Ok(Some(c.outcome != Outcome::Ungrounded))
    }

    /// Θ(Σ, Δ). With beliefs missing only a contradiction is an answer: Σ ∧ Δ contains the
    /// held part of Σ ∧ Δ.
    pub(super) fn gate(&mut self, f: &Formula, because: &[Text]) -> Result<Gate, Unknown> {
        let g = self.prepare(f)?;
        let because: Vec<String> = because.iter().map(|b| b.to_string()).collect();
        if self.known_sat == Some(false) {
            return Ok(Gate {
                theta: Outcome::Contradiction,
                outcome: Outcome::Contradiction,
                missing_citations: self.missing(&because),
            });
        }
        if let Some((sigma, f, b, gate)) = &self.last_gate
            && *sigma == self.sigma
            && *f == *g
            && *b == because
        {
            return Ok(gate.clone());
        }
        let cited = (!because.is_empty()).then_some(because.as_slice());
        let c = match self.engine.check(&g, cited) {
            Ok(c) => c,
            Err(e) => {
                self.whole()?;
                return Err(e.into());
            }
        };
        if c.theta != Outcome::Contradiction {
            self.whole()?;
            // Σ ∧ Δ is satisfiable, so Σ is.
            self.known_sat = Some(true);
        }
        let gate = Gate {
            theta: c.theta,
            outcome: c.outcome,
            missing_citations: c.missing_citations,
        };
        self.last_gate = Some((self.sigma, g.into_owned(), because, gate.clone()));
        Ok(gate)
    }
}

/// The audit's questions (see [`AuditQuestions`]). None of them changes Σ, the cached
/// consistency or the grounding domain beyond what the gate of the same event already did, so
/// the claims are recomputed exactly as without them.
impl Mirror {
    /// Grounds `f` for a question about the current Σ. Without quantifiers (in Σ or `f`)
    /// there is nothing to ground, and the grounding domain is left alone so that asking
    /// changes nothing the recomputation remembers.
    fn ask<'f>(&mut self, f: &'f Formula) -> Result<Cow<'f, Formula>, Unknown> {
        self.whole()?;
        if self.quantified.is_empty() && !ground::has_quantifier(f) {
            return Ok(Cow::Borrowed(f));
        }
        self.prepare(f)
    }

    /// Whether Σ is consistent, without remembering the answer: what the recomputation
    /// remembers decides which solver calls it makes later, and those must not depend on
    /// whether the audit asked.
    fn peek_sat(&mut self) -> Result<bool, Unknown> {
        if self.known_sat == Some(false) {
            return Ok(false);
        }
        self.whole()?;
        if let Some(k) = self.known_sat {
            return Ok(k);
        }
        if let Some(e) = &self.sat_unknown {
            return Err(e.clone());
        }
        if !self.quantified.is_empty() {
            self.sync_active()?;
        }
        Ok(self.engine.check(&Formula::True, None)?.theta != Outcome::Contradiction)
    }

    /// Whether Σ is consistent, with a freshly computed minimal conflict when not (not
    /// remembered, as [`Mirror::peek_sat`]).
    fn peek_consistent(&mut self) -> Result<(bool, Vec<String>), Unknown> {
        if let Some(e) = &self.sat_unknown {
            self.whole()?;
            return Err(e.clone());
        }
        if self.known_sat == Some(true) {
            self.whole()?;
            return Ok((true, Vec::new()));
        }
        if !self.quantified.is_empty() {
            self.sync_active()?;
        }
        // A conflict among the beliefs the engine holds is a conflict of Σ.
        let c = self.engine.consistent()?;
        if c.consistent {
            self.whole()?;
        }
        Ok((c.consistent, c.conflict))
    }

    /// Up to 3 minimal subsets of Σ entailing `f`.
    pub(super) fn supports(&mut self, f: &Formula) -> Result<Vec<Vec<String>>, Unknown> {
        let g = self.ask(f)?;
        let s = self
            .engine
            .supports(&g, 3, Duration::from_secs(2))
            .map_err(Unknown::from)?;
        Ok(s.supports)
    }

    /// One minimal subset of Σ entailing `f` (ids), found within `budget`; `Ok(None)` when Σ
    /// does not entail `f`, and `Err(Timeout)` when the search ran out of budget before it
    /// found one.
    pub(super) fn support_one(
        &mut self,
        f: &Formula,
        budget: Duration,
    ) -> Result<Option<Vec<String>>, Unknown> {
        let g = self.ask(f)?;
        let s = self.engine.supports(&g, 1, budget).map_err(Unknown::from)?;
        match s.supports.into_iter().next() {
            Some(ids) => Ok(Some(ids)),
            None if s.complete => Ok(None),
            None => Err(Unknown::Timeout),
        }
    }

    /// Θ(Σ, f) without citations.
    pub(super) fn theta(&mut self, f: &Formula) -> Result<Outcome, Unknown> {
        let g = self.ask(f)?;
        Ok(self.engine.check(&g, None)?.theta)
    }

    /// Whether the cited premises with every rule and norm entail `f` (the engine's
    /// UNGROUNDED refinement); `true` also when Σ contradicts `f`, which is not refined.
    fn grounded_by(&mut self, f: &Formula, because: &[String]) -> Result<bool, Unknown> {
        let g = self.ask(f)?;
        Ok(self.engine.check(&g, Some(because))?.outcome != Outcome::Ungrounded)
    }

    /// What `policy` does when `spec` (formula as parsed) is announced into the current Σ,
    /// on a throwaway copy of Σ in its current grounding (oldest first: policies break ties
    /// by recency).
    fn rerun(&mut self, spec: BeliefSpec, policy: Policy) -> Result<Revision, Unknown> {
        let g = self.ask(&ground::witnessed(&spec.formula))?.into_owned();
        let mut copy = LocalEngine::with_limits(self.engine.limits());
        let mut specs: Vec<&BeliefSpec> = self.engine.beliefs().collect();
        specs.sort_by_key(|s| s.step);
        for s in specs {
            copy.add_or_demote(s.clone())?;
        }
        Ok(copy.announce(
            BeliefSpec {
                formula: g.into(),
                ..spec
            },
            policy,
        )?)
    }
}

/// Θ on Σ for each asserted formula of a thought, as the thought checks ask it of a probe
/// (`model::audit::thought`): nothing when Σ is inconsistent, and for a contradiction one
/// minimal subset of Σ entailing the negation, searched for 2 s. `None` where the answer could
/// depend on what this walk remembers or lacks: quantifiers (asking re-grounds Σ), beliefs
/// the engine could not take in, an unknown consistency.
fn judge_thought(m: &mut Mirror, asserts: &[Text]) -> Option<Vec<AssertCheck>> {
    if !m.quantified.is_empty() || !m.missing.is_empty() {
        return None;
    }
    let parsed: Vec<Option<Formula>> = asserts.iter().map(|t| parse(t).ok()).collect();
    if parsed.iter().flatten().any(ground::has_quantifier) {
        return None;
    }
    if !m.peek_sat().ok()? {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    for (index, f) in parsed.iter().enumerate() {
        let Some(f) = f else { continue };
        let Ok(outcome) = m.theta(f) else { continue };
        let conflict = if outcome == Outcome::Contradiction {
            m.support_one(&Formula::Not(Box::new(f.clone())), Duration::from_secs(2))
                .ok()
                .flatten()
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        out.push(AssertCheck {
            index: index as u32,
            outcome,
            conflict,
        });
    }
    Some(out)
}

fn conjunction(texts: &[&str]) -> Result<Formula, Unknown> {
    let mut fs = Vec::new();
    for t in texts {
        fs.push(parse_formula(t)?);
    }
    match fs.len() {
        0 => Err(Unknown::Nothing),
        1 => Ok(fs.pop().unwrap_or_default()),
        _ => Ok(Formula::And(fs)),
    }
}

/// Moves the records of `small` into `big`. `BTreeSet::append` rebuilds the whole tree
/// (linear in both sets); `watched` grows with the session while Σ stays inconsistent, and
/// appending each settling's few fresh records to it was quadratic: 5% of the audit of the
/// 3,000,000-event prefix, 0.6% of the 1,000,000 (issue 31). Inserting the smaller set costs
/// its own size times a logarithm.
fn merge_into(big: &mut BTreeSet<u32>, mut small: BTreeSet<u32>) {
    if small.len() > big.len() {
        std::mem::swap(big, &mut small);
    }
    big.extend(small);
}

/// Recomputes every claim of one session (see the module docs). The walk runs on a thread
/// of its own with the engine's stack (see `logic/engine/local.rs`).
pub fn recompute(tl: &Timeline, log: &TraceLog, opts: &RecomputeOptions) -> Recomputed {
    run_with_stack(|| walk(tl, log, opts))
}

fn walk(tl: &Timeline, log: &TraceLog, opts: &RecomputeOptions) -> Recomputed {
    let mut out = Recomputed {
        session: tl.name().to_string(),
        ..Recomputed::default()
    };
    // The result lists sized from the kind column before the walk (announces, verifies and
    // queries are most of a trace's events): grown by doubling, they held up to twice what
    // they needed, for as long as the session's audit lasts.
    let (mut announces, mut verifies, mut queries, mut answers) = (0, 0, 0, 0);
    for &pos in tl.event_positions() {
        match log.events.kind(pos as usize) {
            Some(Some(Kind::Announce)) => announces += 1,
            Some(Some(Kind::Verify)) => verifies += 1,
            Some(Some(Kind::Query)) => queries += 1,
            Some(Some(Kind::Answer)) => answers += 1,
            _ => {}
        }
    }
    out.announces.reserve_exact(announces);
    out.verifies.reserve_exact(verifies);
    out.queries.reserve_exact(queries);
    out.answers.reserve_exact(answers);
    out.revisions.reserve_exact(tl.revisions().len());
    let mut m = Mirror::new(opts);
    let no_conflict: Arc<[String]> = Arc::new([]);
    // The record each announce event made, the records each event ended, those each step
    // wrote: asked at every step, answered from columns (see `records`).
    let beliefs = tl.beliefs();
    let records = Records::new(beliefs);
    // Pending revision checks, settled after the step of their last retract.
    // Keyed by the step that settles them, each step's in the order they came: a list
    // scanned at every step cost the walk in proportion to the revisions waiting: the
    // hottest line of the walk's own code on the 10M trace's sessions (issue 31).
    let mut pending: BTreeMap<u32, Vec<RevisionCheck>> = BTreeMap::new();
    let revision_at: HashMap<u32, usize> = tl
        .revisions()
        .iter()
        .enumerate()
        .map(|(k, r)| (r.event, k))
        .collect();
    // The audit's questions: which announcements trigger a revision to re-run (and with
    // which policy), and each id's records (to find what a revision could restore).
    let audit = opts.audit;
    let mut triggers: HashMap<u32, Vec<(usize, Policy)>> = HashMap::new();
    // Record indices sorted by id (stably, so each id's records stay in order): a map from
    // id to a list cost a list per id, 80 bytes a belief, in every session being audited.
    let mut records_by_id: Vec<u32> = Vec::new();
    if let Some(q) = audit {
        for (k, r) in tl.revisions().iter().enumerate() {
            // Not pinned: a long trace has a revise every few dozen events.
            let stated = match body_of(&load_at(log, r.event)) {
                Some(Body::Revise(b)) => b.policy.as_deref().and_then(Policy::parse),
                _ => None,
            };
            if let (Some(p), Some(rec)) = (q.policy.or(stated), r.trigger_record) {
                triggers.entry(rec).or_default().push((k, p));
            }
        }
        records_by_id = (0..beliefs.len() as u32).collect();
        records_by_id.sort_by(|&a, &b| {
            beliefs[a as usize]
                .id
                .as_str()
                .cmp(beliefs[b as usize].id.as_str())
        });
    }
    let mut reruns: HashMap<usize, Rerun> = HashMap::new();
    let mut explained = 0usize;
    // Queries and answers have caps of their own, counted in the order the audit counts them,
    // so the audit finds every answer it will show here and never asks a probe.
    let (mut explained_queries, mut explained_answers) = (0usize, 0usize);
    // Truth maintenance: the active record of each id, the premises each derived record
    // cited (those in Σ when it was announced), who cites each id, the derived records whose
    // premises went but that still had support (asked again at every later settling), and
    // the records already reported.
    // Keyed by the record's own id (borrowed from the timeline, not copied).
    let mut active_ids: HashMap<&str, u32> = HashMap::new();
    let mut premises_of: HashMap<u32, Vec<String>> = HashMap::new();
    let mut cited_by: HashMap<String, Vec<u32>> = HashMap::new();
    let mut watched: BTreeSet<u32> = BTreeSet::new();
    let mut settled: BTreeSet<u32> = BTreeSet::new();
    let mut ended_in_run: Vec<String> = Vec::new();
    let positions = tl.event_positions();
    // The next entry of the timeline's retract log (in step order, as the walk).
    let mut next_retract = 0usize;
    let ends_or_revises = |pos: u32| {
        // The kind column, not the event: decoding (and pinning) every event twice over for
        // this would keep the whole trace decoded in memory.
        records.ends(pos) || log.events.kind(pos as usize) == Some(Some(Kind::Revise))
    };

    for (i, &pos) in tl.event_positions().iter().enumerate() {
        let step = i as u32 + 1;
        // Decoded for this step only (not pinned): an audit of a long trace would otherwise
        // hold every event decoded until the end.
        let loaded = load_at(log, pos);
        let ev = loaded.as_deref().unwrap_or_else(|| event_at(log, pos));
        // Retractions this event causes (a retract, or a superseding announce, whose
        // replacement happens through the add below).
        for &r in records.ended_by(pos) {
            let id = tl.beliefs()[r as usize].id.as_str();
            if active_ids.get(id) == Some(&r) {
                active_ids.remove(id);
            }
            ended_in_run.push(id.to_string());
        }
        if let Body::Retract(_) = &ev.body {
            // Σ just before a retraction no revise decided: was it consistent? Asked here,
            // where Σ is at hand, rather than by a second mirror of the whole session
            // replayed for the check (most of a 10M-event audit, issue 31).
            let entry = loop {
                match tl.retracts().get(next_retract) {
                    Some(e) if e.step < step => next_retract += 1,
                    Some(e) if e.step == step => break Some(e),
                    _ => break None,
                }
            };
            let before = match entry {
                Some(e)
                    if audit.is_some()
                        && m.quantified.is_empty()
                        && unforced_candidate(tl, e).is_some() =>
                {
                    Some(m.peek_sat())
                }
                _ => None,
            };
            for &r in records.ended_by(pos) {
                let id = tl.beliefs()[r as usize].id.clone();
                match m.retract(&id) {
                    Ok(true) => {}
                    // A belief the engine never held (its formula did not parse) is fine.
                    Ok(false) => {}
                    Err(error) => out.errors.push(RecomputeError {
                        step,
                        event: pos,
                        error,
                    }),
                }
            }
            if audit.is_some() && records.ends(pos) {
                out.retracts.push(RetractConsistency {
                    step,
                    consistent: m.peek_sat(),
                    before,
                });
            }
        }
        match &ev.body {
            Body::Announce(a) => {
                let record = records.made_by(pos);
                let id = match record {
                    Some(r) => tl.beliefs()[r as usize].id.to_string(),
                    None => ev.id.as_ref().map(|s| s.to_string()).unwrap_or_else(|| {
                        parse(&a.formula)
                            .map(|f| crate::logic::print::normalized(&f))
                            .unwrap_or_else(|_| a.formula.trim().to_string())
                    }),
                };
                // Whatever the solver answers (or fails to), the belief joins the mirror of
                // Σ: a timeout here must not leave later events checked against a Σ without
                // it. The result is `Err` when any part of it is unknown.
                let result = parse_formula(&a.formula).and_then(|f| {
                    let gate = m.gate(&f, &a.because);
                    let consistent_before = m.sat();
                    let c = a.confidence;
                    let conf = if c.is_finite() && c > 0.0 {
                        c.min(1.0)
                    } else {
                        // The engine needs (0, 1]; 0 means "no confidence at all".
                        f64::MIN_POSITIVE
                    };
                    // A revision this announcement triggers: its policy re-run on Σ now.
                    for &(k, policy) in record.and_then(|r| triggers.get(&r)).into_iter().flatten()
                    {
                        let revision = match &consistent_before {
                            Ok(false) => None,
                            Ok(true) => {
                                let spec = BeliefSpec::new(id.clone(), f.clone())
                                    .role(role(a.role))
                                    .confidence(conf)
                                    .step(step as u64);
                                Some(m.rerun(spec, policy))
                            }
                            Err(e) => Some(Err(e.clone())),
                        };
                        reruns.insert(k, Rerun { policy, revision });
                    }
                    let mut hard_conflict = false;
                    let mut added = Ok(());
                    if record.is_some() {
                        let spec = BeliefSpec::new(id.clone(), Formula::True)
                            .role(role(a.role))
                            .confidence(conf)
                            .step(step as u64);
                        let replaces =
                            m.engine.belief(&id).is_some() || m.missing.contains_key(&id);
                        match m.add(spec, &f) {
                            Ok(h) => hard_conflict = h,
                            Err(e) => added = Err(e),
                        }
                        // Σ ∧ φ was satisfiable, so Σ plus the new belief is consistent; it
                        // was not, so Σ plus the new belief is inconsistent: no solve needed
                        // either way. (Only when nothing was replaced or re-grounded, which
                        // could change Σ beyond adding φ.) When the gate ran out of time, the
                        // same question would too.
                        if !replaces && !hard_conflict && added.is_ok() && m.quantified.is_empty() {
                            match &gate {
                                Ok(g) => m.known_sat = Some(g.theta != Outcome::Contradiction),
                                Err(e @ Unknown::Timeout) => m.sat_unknown = Some(e.clone()),
                                Err(_) => {}
                            }
                        }
                    }
                    let gate = gate?;
                    let consistent_before = consistent_before?;
                    added?;
                    let consistent_after = m.sat()?;
                    // The conflict is computed when Σ becomes inconsistent; while it stays so,
                    // the one found then is repeated if still valid.
                    let conflict = if consistent_after {
                        no_conflict.clone()
                    } else if consistent_before {
                        let c = m.consistent()?.1;
                        m.known_conflict.clone().unwrap_or_else(|| c.into())
                    } else {
                        m.known_conflict
                            .clone()
                            .unwrap_or_else(|| no_conflict.clone())
                    };
                    Ok(AnnounceResult {
                        gate,
                        consistent_after,
                        conflict,
                        hard_conflict,
                        consistent_before,
                    })
                });
                if let Some(r) = record {
                    let premises: Vec<String> = a
                        .because
                        .iter()
                        .map(|c| c.to_string())
                        .filter(|c| *c != id && active_ids.contains_key(c.as_str()))
                        .collect();
                    for c in &premises {
                        cited_by.entry(c.clone()).or_default().push(r);
                    }
                    if !premises.is_empty() {
                        premises_of.insert(r, premises);
                    }
                    active_ids.insert(tl.beliefs()[r as usize].id.as_str(), r);
                }
                out.announces.push(AnnounceCheck {
                    step,
                    event: pos,
                    id,
                    record,
                    result,
                });
            }
            Body::Verify(v) => {
                let texts: Vec<&str> = v.all_formulas().collect();
                let delta = conjunction(&texts);
                let result = delta.clone().and_then(|f| m.gate(&f, &v.because));
                let mut vr = VerifyResult {
                    step,
                    event: pos,
                    claimed: v.outcome,
                    result,
                    evidence: None,
                    contradiction_citation: None,
                };
                if let (Some(_), Ok(f), Ok(g)) = (audit, &delta, &vr.result) {
                    let theta = g.theta;
                    if vr.agrees() == Some(false) && explained < EVIDENCE_CAP {
                        explained += 1;
                        vr.evidence = match theta {
                            Outcome::Entailed => Some(Box::new(m.supports(f))),
                            Outcome::Contradiction => {
                                Some(Box::new(m.supports(&Formula::Not(Box::new(f.clone())))))
                            }
                            _ => None,
                        };
                    }
                    if theta == Outcome::Contradiction
                        && !v.because.is_empty()
                        && v.outcome != Some(Claimed::Ungrounded)
                    {
                        let because: Vec<String> =
                            v.because.iter().map(|b| b.to_string()).collect();
                        let missing = m.missing(&because);
                        let grounded = if missing.is_empty() {
                            m.grounded_by(&Formula::Not(Box::new(f.clone())), &because)
                        } else {
                            Ok(true)
                        };
                        vr.contradiction_citation =
                            Some(Box::new(ContradictionCitation { missing, grounded }));
                    }
                }
                out.verifies.push(vr);
            }
            Body::Thought(th) if audit.is_some() && !th.asserts.is_empty() => {
                out.thoughts.push(ThoughtCheck {
                    step,
                    judged: judge_thought(&mut m, &th.asserts),
                });
            }
            Body::Query(q) => {
                let f = parse_formula(&q.formula);
                let result = f.clone().and_then(|f| m.entails(&f));
                let mut qr = QueryResult {
                    step,
                    event: pos,
                    claimed: q.answer,
                    result,
                    evidence: None,
                };
                let decided = matches!(qr.result, Ok(Entails::Entailed | Entails::Contradicted));
                if let (Some(_), Ok(f), Some(false), true) = (audit, &f, qr.agrees(), decided)
                    && explained_queries < EVIDENCE_CAP
                {
                    explained_queries += 1;
                    qr.evidence = match qr.result {
                        Ok(Entails::Entailed) => Some(m.supports(f)),
                        _ => Some(m.supports(&Formula::Not(Box::new(f.clone())))),
                    };
                }
                out.queries.push(qr);
            }
            Body::Answer(a) => {
                if let Some(text) = a.formula.as_deref() {
                    let f = parse_formula(text);
                    let result = f.clone().and_then(|f| m.entails(&f));
                    let mut ar = AnswerResult {
                        step,
                        event: pos,
                        hedged: a.hedged == Some(true),
                        result,
                        evidence: None,
                    };
                    if let (Some(_), Ok(f), Ok(Entails::Contradicted)) = (audit, &f, &ar.result)
                        && explained_answers < EVIDENCE_CAP
                    {
                        explained_answers += 1;
                        ar.evidence = Some(m.supports(&Formula::Not(Box::new(f.clone()))));
                    }
                    out.answers.push(ar);
                }
            }
            Body::Revise(_) => {
                if let Some(&k) = revision_at.get(&pos) {
                    let entry = &tl.revisions()[k];
                    let before = m.consistent();
                    let mut ids: Vec<String> = entry
                        .retracts
                        .iter()
                        .filter_map(|&ri| tl.retracts()[ri as usize].record)
                        .map(|r| tl.beliefs()[r as usize].id.to_string())
                        .collect();
                    ids.extend(entry.unapplied.iter().cloned());
                    let retracted = ids
                        .into_iter()
                        .map(|id| {
                            let was_active = m.engine.belief(&id).is_some();
                            let in_conflict = match &before {
                                _ if !was_active => Some(false),
                                Ok((true, _)) => Some(false),
                                Ok((false, c)) if c.contains(&id) => Some(true),
                                _ => None,
                            };
                            RetractedCheck {
                                id,
                                was_active,
                                in_conflict,
                                restorable: None,
                            }
                        })
                        .collect();
                    let settled_at = entry
                        .retracts
                        .iter()
                        .map(|&ri| tl.retracts()[ri as usize].step)
                        .max()
                        .unwrap_or(step)
                        .max(step);
                    pending.entry(settled_at).or_default().push(RevisionCheck {
                        step,
                        event: pos,
                        revision: k as u32,
                        before,
                        retracted,
                        settled_at,
                        after: Err(Unknown::Nothing),
                        rerun: reruns.remove(&k),
                    });
                }
            }
            Body::Belief(_) | Body::Step(_) => {
                // Ground beliefs written here join Σ as their value atoms, no gate asked (the
                // trace holds them); an overwrite replaces the old value (the same id).
                for r in records.announced_at(step) {
                    let Some(a) = tl.ground_announce(r) else {
                        continue;
                    };
                    let Ok(f) = parse(&a.formula) else {
                        continue;
                    };
                    let id = beliefs[r as usize].id.as_str();
                    let spec = BeliefSpec::new(id.to_string(), f.clone()).step(step as u64);
                    if let Err(error) = m.add(spec, &f) {
                        out.errors.push(RecomputeError {
                            step,
                            event: pos,
                            error,
                        });
                    }
                    active_ids.insert(id, r);
                }
            }
            _ => {}
        }
        // Derived beliefs whose premises went, once the run of retractions is over.
        let run_ends = ends_or_revises(pos)
            && positions
                .get(i + 1)
                .is_none_or(|&next| !ends_or_revises(next));
        if run_ends && !ended_in_run.is_empty() {
            let mut fresh: BTreeSet<u32> = BTreeSet::new();
            for id in ended_in_run.drain(..) {
                fresh.extend(cited_by.get(&id).into_iter().flatten().copied());
            }
            // While Σ is inconsistent no derivation is judged: every candidate would only go
            // back to `watched` (or leave it for good, having left Σ or got its premises
            // back). They wait there unexamined until a settling finds Σ consistent, which
            // judges them all as each settling in between would have left them; examining
            // every watched record at every settling grew with the trace (quadratic).
            let candidates = if m.inconsistent_whole() {
                merge_into(&mut watched, fresh);
                BTreeSet::new()
            } else {
                let mut c = std::mem::take(&mut watched);
                merge_into(&mut c, fresh);
                c
            };
            for r in candidates {
                let rec = &tl.beliefs()[r as usize];
                if settled.contains(&r) || active_ids.get(rec.id.as_str()) != Some(&r) {
                    continue;
                }
                let premises = premises_of.get(&r).map(Vec::as_slice).unwrap_or(&[]);
                let (left, gone): (Vec<String>, Vec<String>) = premises
                    .iter()
                    .cloned()
                    .partition(|c| active_ids.contains_key(c.as_str()));
                if gone.is_empty() {
                    continue;
                }
                let supported = match m.supported_without(rec.id.as_str()) {
                    // A belief whose formula the solver never held (it does not parse) has
                    // nothing to check.
                    Err(Unknown::Nothing) => continue,
                    Ok(None) | Ok(Some(true)) => {
                        watched.insert(r);
                        continue;
                    }
                    Ok(Some(false)) => Ok(false),
                    Err(e) => Err(e),
                };
                settled.insert(r);
                out.derivations.push(DerivationCheck {
                    step,
                    event: pos,
                    record: r,
                    id: rec.id.to_string(),
                    gone,
                    left,
                    supported,
                });
            }
        }
        // Settle the revisions whose last retraction was this step.
        for mut rc in pending.remove(&step).unwrap_or_default() {
            rc.after = m.consistent();
            if audit.is_some() && matches!(rc.after, Ok((true, _))) {
                for r in rc.retracted.iter_mut().filter(|r| r.was_active) {
                    // The belief as it was last announced before the revise.
                    let id_of = |ix: &u32| tl.beliefs()[*ix as usize].id.as_str();
                    let from = records_by_id.partition_point(|ix| id_of(ix) < r.id.as_str());
                    let to = from
                        + records_by_id[from..].partition_point(|ix| id_of(ix) == r.id.as_str());
                    let formula = records_by_id[from..to]
                        .iter()
                        .rfind(|&&ix| tl.beliefs()[ix as usize].announced <= rc.step)
                        .and_then(|&ix| match tl.ground_announce(ix) {
                            // A ground belief's record stands for its value atom.
                            Some(a) => parse(&a.formula).ok(),
                            None => {
                                load_at(log, tl.beliefs()[ix as usize].event).and_then(|e| match &e
                                    .body
                                {
                                    Body::Announce(a) => parse(&a.formula).ok(),
                                    _ => None,
                                })
                            }
                        });
                    if let Some(f) = formula {
                        r.restorable = Some(m.theta(&f).map(|o| o != Outcome::Contradiction));
                    }
                }
            }
            out.revisions.push(rc);
        }
    }
    out.revisions.sort_by_key(|r| r.step);
    if audit.is_some() {
        out.end = Some(m.peek_consistent());
    }
    out.audit = audit;
    out.rebuilds = m.engine.rebuilds();
    out
}
