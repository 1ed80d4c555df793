//! The audit: every claim of a trace that can be recomputed, recomputed, and every
//! disagreement reported as a [`Finding`] with its evidence.
//!
//! # Design
//!
//! The audit interprets nothing itself. It reads the [`Model`]: the replayed [`Timeline`]
//! (Σ as validity intervals, the retraction log, the BDI log) and the solver pass
//! [`Model::recompute`] (gate verdicts, consistency after each announcement, consistency
//! around each revision), which also answers the checks' further questions ("could this
//! retracted belief be restored?", "which premises support this entailment?", "what would
//! the policy have retracted?") in the same walk when asked to
//! ([`super::recompute::AuditQuestions`], on by default): every solver question is asked
//! once. A recomputation made without them is still accepted ([`audit_recomputed`]); the
//! checks then ask a `probe::Probe`, a forward-only mirror of the same Σ.
//!
//! Sessions are independent and audited in parallel (at most one per core, or
//! [`AuditOptions::threads`]); the report is merged in session order, so it does not depend
//! on the number of threads.
//!
//! Finding codes are data, in the shape of tokio-console's `Warn<T>` lints: every [`Code`]
//! has a fixed name (contract §5; names never change), a default severity, a sentence per
//! instance (the finding's `message`, written by the check that found it) and a summary
//! fragment that follows a count ([`Code::summary`]: "2 postconditions were self-reported as
//! met but are not"). The checks are grouped by what they read:
//!
//! - `epistemic`: gate verdicts (`claimed-outcome-mismatch`, with the confusion
//!   [`Matrix`]), citations, contradictions and their handling, revisions, norms;
//! - `bdi`: tier-1 postconditions, plan DAGs, belief names, tiers that cannot be checked;
//! - `failures`: the rest of seed 004's failure taxonomy (bad retrieval, avoided file reads,
//!   incorrect computations, answer formatting) and recorded `failure_mode`s against them;
//! - `loops`: repeated queries and oscillation;
//! - `lookalike`: names that render like other names (mixed scripts, confusables);
//! - `input`: reader problems and unparsable formulas (`parse-error`);
//! - `runtime`: what the run records as failed: tool calls, model calls, agent runs, error
//!   logs ([`crate::model::failure`]);
//! - `judge`: a `score` against the solver (`score-passes-contradicted`,
//!   `score-fails-entailed`);
//! - `tiers`: seed 004 completed: tier-2 conditions re-run ([`crate::model::condition`]),
//!   `plan-never-ready`, `plan_stats` against the run.
//!
//! [`ci`] writes a report as SARIF or JUnit and matches findings against a baseline.
//!
//! To add a code: its row in the `codes!` table (the registry: doc paragraph, name, severity,
//! summary fragments, and `{ needs, example, check }`), the check as a function of its own in
//! the module that reads the data it needs (named by the row's `check`), a test that triggers
//! it and a near miss that must not, the example trace, and a line in the README's audit
//! list. docs/trace-format.md's finding table is [`finding_table`]'s output
//! (tests/audit_registry.rs fails, printing it, when they differ).
//!
//! Steps follow [`super::timeline`]: step t is the state after the session's first t events
//! (for the bundled samples, step = `seq`). Each finding also carries the `seq` and the
//! file:line of the event it is about.

mod bdi;
pub mod ci;
mod citations;
mod epistemic;
pub mod failures;
mod ids;
mod input;
mod invariants;
mod judge;
mod lookalike;
mod loops;
mod probe;
mod rationality;
mod registry;
mod render;
mod runtime;
mod scored;
mod thought;
mod tiers;

use crate::trace::event::body_of;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};

use crate::logic::revise::Policy;
use crate::trace::TraceLog;
use crate::trace::event::Outcome as Claimed;

use super::Model;
use super::recompute::{AuditQuestions, RecomputeOptions, Recomputed};
use super::timeline::Timeline;

pub use registry::{finding_table, help_text, list_checks, list_checks_json};
pub use render::{Form, render_text};

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; never fails the audit.
    Info,
    /// Something went wrong but was caught or recovered from.
    Warning,
    /// A claim in the trace is false, or the agent left a problem unhandled.
    Error,
}

impl Severity {
    /// The contract name (`info`, `warning`, `error`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The registry of checks (issue 29, "lints as data"): one row per finding code, read by
/// the docs' finding table, `audit --list-checks` and the audit itself.
///
/// A row is `/// doc paragraph` then `Variant = "name", Severity, "one", "many"`, optionally
/// followed by `{ needs: "...", example: "path", check: module::function, }` (each field
/// optional, in that order) and a `;`. `check` is the unit that finds this code, run after the
/// grouped passes ([`Code::check`]; a grouped pass may find the code too, for the cases it
/// has always covered); a row without one is found by its module's grouped pass
/// (epistemic, bdi, failures, loops, lookalike, input, runtime), split out as it is touched.
macro_rules! codes {
    (@opt) => { None };
    (@opt $x:expr) => { Some($x) };
    ($( $(#[doc = $doc:literal])* $v:ident = $name:literal, $sev:ident, $one:literal, $many:literal
        $({ $(needs: $needs:literal,)? $(example: $ex:literal,)? $(check: $check:path,)? })? ; )*) => {
        /// A finding code. The names are fixed (contract §5).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $( $(#[doc = $doc])* $v ),* }

        impl Code {
            /// Every code, in documentation order.
            pub const ALL: &'static [Code] = &[$(Code::$v),*];

            /// The stable name.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$v => $name),* }
            }

            /// The code with this name.
            pub fn from_name(s: &str) -> Option<Code> {
                match s { $($name => Some(Code::$v),)* _ => None }
            }

            /// The usual severity (a check may raise or lower it for one instance, and says
            /// why in the message).
            pub fn default_severity(self) -> Severity {
                match self { $(Code::$v => Severity::$sev),* }
            }

            /// The summary fragment that follows a count, singular and plural.
            fn fragments(self) -> (&'static str, &'static str) {
                match self { $(Code::$v => ($one, $many)),* }
            }

            /// The doc paragraph: when the finding is reported (the row's doc comment, as
            /// one line).
            pub fn doc(self) -> String {
                let raw = match self { $(Code::$v => concat!($($doc, " "),*)),* };
                raw.split_whitespace().collect::<Vec<_>>().join(" ")
            }

            /// What the trace must record for the check to be made, when that is more than
            /// the event the finding is about.
            pub fn needs(self) -> Option<&'static str> {
                match self { $(Code::$v => codes!(@opt $($($needs)?)?)),* }
            }

            /// A trace in the repository that draws this finding (a path from the
            /// repository's root).
            pub fn example(self) -> Option<&'static str> {
                match self { $(Code::$v => codes!(@opt $($($ex)?)?)),* }
            }

            /// The unit check that finds this code, when it is one of its own (else a
            /// module's grouped pass finds it).
            pub(crate) fn check(self) -> Option<fn(&mut Cx<'_>)> {
                match self { $(Code::$v => codes!(@opt $($($check as fn(&mut Cx<'_>))?)?)),* }
            }
        }
    };
}

codes! {
    /// A `verify` whose claimed outcome differs from Θ recomputed on Σ just before it.
    ClaimedOutcomeMismatch = "claimed-outcome-mismatch", Error,
        "gate verdict differs from the recomputed one",
        "gate verdicts differ from the recomputed ones" { example: "sample-traces/alice-bob-norms.jsonl", };
    /// A `because` that cites ids not in Σ, or premises that do not entail what they justify.
    UngroundedCitation = "ungrounded-citation", Warning,
        "citation does not ground its claim", "citations do not ground their claims";
    /// An announcement made Σ inconsistent and nothing revised it before the next
    /// announcement or the end.
    UnhandledContradiction = "unhandled-contradiction", Error,
        "contradiction was announced and never handled",
        "contradictions were announced and never handled";
    /// Σ is inconsistent at the end of a session (and no other finding says so already).
    InconsistentSigma = "inconsistent-sigma", Error,
        "session ends with Σ inconsistent", "sessions end with Σ inconsistent";
    /// A revision retracted a belief that could have stayed, or a `retract` by `revision`
    /// that carries out no `revise` happened while Σ was consistent (no conflict forced it).
    RevisionNotMinimal = "revision-not-minimal", Warning,
        "revision retracted more than needed", "revisions retracted more than needed" {
        check: rationality::unforced_retractions,
    };
    /// Σ is still inconsistent after a revision.
    RevisionIncomplete = "revision-incomplete", Error,
        "revision left Σ inconsistent", "revisions left Σ inconsistent";
    /// The revision policy, re-run on Σ before the trigger, retracts something else.
    RevisionPolicyMismatch = "revision-policy-mismatch", Warning,
        "revision differs from what its policy retracts",
        "revisions differ from what their policy retracts";
    /// A belief derived (`because`) from premises that left Σ, still in Σ with nothing else
    /// entailing it.
    UnsupportedDerivation = "unsupported-derivation", Warning,
        "derived belief outlived its premises", "derived beliefs outlived their premises";
    /// A norm was retracted.
    NormRetracted = "norm-retracted", Error,
        "norm was retracted", "norms were retracted";
    /// A fact whose `source` says it was inferred (`inference`, `inferred`, `derived`,
    /// `deduced`, `reasoning`, or one of them followed by `:...`) announced with no `because`
    /// and not as an assumption (seed 001: a derived fact keeps its derivation).
    InferenceWithoutBecause = "inference-without-because", Warning,
        "inference cites no premises", "inferences cite no premises" {
        needs: "an `announce`'s `source`",
        example: "tests/data/audit/inference-without-because.jsonl",
        check: invariants::inference_without_because,
    };
    /// After an announcement Σ is inconsistent and a minimal conflict holds exactly one
    /// norm: the facts in it violate that norm (named by its id).
    NormViolated = "norm-violated", Error,
        "norm was violated", "norms were violated" {
        needs: "a `norm`-role belief",
        example: "tests/data/audit/norm-violated.jsonl",
        check: invariants::norm_violated,
    };
    /// A minimal conflict of Σ holds two or more norms: they cannot all be kept, with the
    /// facts or on their own.
    NormsConflict = "norms-conflict", Error,
        "set of norms conflicts", "sets of norms conflict" {
        needs: "two `norm`-role beliefs",
        example: "tests/data/audit/norms-conflict.jsonl",
        check: invariants::norms_conflict,
    };
    /// A re-announcement of an id changed the belief's role (a rule announced again as a
    /// fact is retractable from then on).
    RoleChanged = "role-changed", Info,
        "belief's role was changed by a re-announcement",
        "beliefs' roles were changed by re-announcements";
    /// A step self-reported `post_met` but its tier-1 postcondition is false.
    PostconditionFalsePositive = "postcondition-false-positive", Warning,
        "postcondition was self-reported as met but is not",
        "postconditions were self-reported as met but are not" { example: "sample-traces/kipchoge-bdi.jsonl", };
    /// A `postcondition` record whose `ok` disagrees with the recomputed tier-1 check.
    PostconditionRecordMismatch = "postcondition-record-mismatch", Error,
        "postcondition record disagrees with the recomputed check",
        "postcondition records disagree with the recomputed checks";
    /// A plan whose dependencies form a cycle.
    DagCycle = "dag-cycle", Error,
        "plan has a dependency cycle", "plans have dependency cycles";
    /// A plan step depending on a step the plan does not have.
    DagDanglingDependency = "dag-dangling-dependency", Error,
        "plan depends on a step it does not have", "plans depend on steps they do not have";
    /// A plan with no step in flight or ready while it is incomplete.
    DagDeadlock = "dag-deadlock", Warning,
        "plan deadlocked", "plans deadlocked" { example: "sample-traces/kipchoge-bdi.jsonl", };
    /// A ground belief written under a name nothing expects, while a similar name is expected.
    UnexpectedBeliefName = "unexpected-belief-name", Info,
        "belief was written under a name nothing expects",
        "beliefs were written under names nothing expects" { example: "sample-traces/kipchoge-bdi.jsonl", };
    /// A plan step dispatched while a step it depends on was not done (seed 004 issue 13).
    StepBeforeDependencies = "step-before-dependencies", Warning,
        "step was dispatched before its dependencies were done",
        "steps were dispatched before their dependencies were done" { example: "sample-traces/bdi-bookkeeping.jsonl", };
    /// `plan_stats` counters that cannot all hold: more outcomes than uses.
    PlanStatsInconsistent = "plan-stats-inconsistent", Warning,
        "plan_stats record contradicts itself", "plan_stats records contradict themselves" { example: "sample-traces/bdi-bookkeeping.jsonl", };
    /// Seed 004's bad retrieval: a fetch step that failed, or a wrong answer whose every
    /// upstream computation recomputes correctly (the wrong value came from a fetch).
    BadRetrieval = "bad-retrieval", Warning,
        "retrieval went wrong", "retrievals went wrong" { example: "sample-traces/bdi-bad-retrieval.jsonl", };
    /// Seed 004's avoided file read: the task names a file no step read with `read_file`.
    FileReadAvoided = "file-read-avoided", Warning,
        "task's file was never read", "tasks' files were never read" { example: "sample-traces/bdi-file-read.jsonl", };
    /// Seed 004's incorrect computation: a step's written result differs from its `compute`
    /// expression evaluated on its inputs.
    IncorrectComputation = "incorrect-computation", Error,
        "computation wrote a wrong result", "computations wrote wrong results" { example: "sample-traces/bdi-computation.jsonl", };
    /// Seed 004's answer formatting: the answer misses the expected one only in its format.
    AnswerFormatting = "answer-formatting", Warning,
        "answer misses the expected one only in its format",
        "answers miss the expected ones only in their format" { example: "sample-traces/bdi-answer-format.jsonl", };
    /// An answer that does not match the expected one, for a cause doxascope cannot tell.
    WrongAnswer = "wrong-answer", Error,
        "answer does not match the expected one", "answers do not match the expected ones";
    /// A `failure_mode` (or score) the trace records that doxascope's detection contradicts.
    FailureModeMismatch = "failure-mode-mismatch", Warning,
        "recorded failure mode disagrees with what doxascope detected",
        "recorded failure modes disagree with what doxascope detected" { example: "sample-traces/bdi-file-read.jsonl", };
    /// A `failure_mode` the trace records, with what doxascope detected in the same place.
    FailureModeRecorded = "failure-mode-recorded", Info,
        "failure mode was recorded by the trace", "failure modes were recorded by the trace" { example: "sample-traces/bdi-answer-format.jsonl", };
    /// A `query` whose claimed answer differs from `entails` recomputed on Σ at that step.
    QueryAnswerMismatch = "query-answer-mismatch", Error,
        "query answer differs from the recomputed one",
        "query answers differ from the recomputed ones";
    /// An `answer` whose formula Σ contradicts.
    AnswerContradictsSigma = "answer-contradicts-sigma", Error,
        "answer contradicts Σ", "answers contradict Σ";
    /// An `answer` presented as known (not `hedged`) that Σ does not entail.
    AnswerNotEntailed = "answer-not-entailed", Warning,
        "answer given as known is not entailed by Σ",
        "answers given as known are not entailed by Σ";
    /// A `thought` asserts a formula that Σ at that step contradicts (the evidence is a
    /// minimal conflict: a minimal subset of Σ entailing its negation).
    ThoughtContradictsSigma = "thought-contradicts-sigma", Error,
        "thought contradicts Σ", "thoughts contradict Σ" {
        needs: "a `thought` with `asserts`",
        example: "tests/data/audit/thought-contradicts-sigma.jsonl",
        check: thought::contradicts_sigma,
    };
    /// A `thought` asserts a formula that Σ does not entail there, and a later event uses it
    /// as a premise: a `because` citing the thought's `id` (or the formula, when no held
    /// belief has that id), or a step's `inputs` or tool-call `args` holding the value atom
    /// it asserts.
    UnsupportedThoughtPremise = "unsupported-thought-premise", Warning,
        "unsupported thought was used as a premise",
        "unsupported thoughts were used as premises" {
        needs: "a `thought` with `asserts` (and an `id`); a later `because`, `inputs` or `args`",
        example: "tests/data/audit/unsupported-thought-premise.jsonl",
        check: thought::unsupported_premise,
    };
    /// A name in a formula that mixes scripts in one word (`аdmin` with a Cyrillic `а`).
    MixedScriptAtom = "mixed-script-atom", Warning,
        "name mixes scripts and can pass for another",
        "names mix scripts and can pass for others";
    /// Two different names of one session that render alike (Unicode confusables).
    ConfusableAtoms = "confusable-atoms", Warning,
        "pair of different names looks alike", "pairs of different names look alike";
    /// The same query asked again with Σ unchanged.
    RepeatedQuery = "repeated-query", Warning,
        "query was repeated with Σ unchanged", "queries were repeated with Σ unchanged";
    /// Σ alternating between two states.
    Oscillation = "oscillation", Warning,
        "oscillation between two belief states",
        "oscillations between two belief states";
    /// A belief returns to a value or formula it had left: `A → B → A` for one key or id,
    /// or φ, then ¬φ, then φ again.
    FlipFlop = "flip-flop", Warning,
        "belief flip-flopped", "beliefs flip-flopped" {
        needs: "a key or formula written three times",
        example: "tests/data/audit/flip-flop.jsonl",
        check: rationality::flip_flop,
    };
    /// A step's `inputs`, or a tool call's `args`, carry a ground belief's value that was
    /// overwritten or retracted before the step ran (its dispatch, when recorded).
    StaleInput = "stale-input", Warning,
        "step ran on a stale input", "steps ran on stale inputs" {
        needs: "a `step`'s `inputs` or `tool_calls[].args` naming ground beliefs",
        example: "tests/data/audit/stale-input.jsonl",
        check: rationality::stale_input,
    };
    /// A `because` cites an id that was held before and is no longer in Σ.
    StaleCitation = "stale-citation", Warning,
        "citation names what is no longer held", "citations name what is no longer held" {
        needs: "`because` on an `announce` or `verify`",
        example: "tests/data/audit/stale-citation.jsonl",
        check: rationality::stale_citation,
    };
    /// The same tool called with the same arguments again with Σ unchanged in between (a
    /// retry after a failed call is not counted).
    RepeatedToolCall = "repeated-tool-call", Warning,
        "tool call was repeated with nothing learned",
        "tool calls were repeated with nothing learned" {
        needs: "a `step`'s `tool_calls` with `args`",
        example: "tests/data/audit/repeated-tool-call.jsonl",
        check: rationality::repeated_tool_call,
    };
    /// An observation (source `tool:...` or `observation...`) that Σ contradicted was given up
    /// while the beliefs it contradicted are kept, or an observed ground value was set back
    /// to its old value by a source that is not an observation.
    FailedUpdate = "failed-update", Warning,
        "observation lost to a belief it contradicted",
        "observations lost to beliefs they contradicted" {
        needs: "an observation `source` (`tool:NAME#CALL`, `observation`)",
        example: "tests/data/audit/failed-update.jsonl",
        check: rationality::failed_update,
    };
    /// A retract target or revise trigger naming no active belief.
    UnresolvedReference = "unresolved-reference", Warning,
        "reference names no active belief", "references name no active belief";
    /// A line that could not be read, or a formula that does not parse.
    ParseError = "parse-error", Error,
        "line or formula could not be parsed", "lines or formulas could not be parsed" { example: "sample-traces/broken.jsonl", };
    /// A tool call the trace records as failed (an `error`, status error, Letta's failed
    /// status, Langfuse's level ERROR).
    ToolCallFailed = "tool-call-failed", Warning,
        "tool call failed", "tool calls failed";
    /// A model call the trace records as failed.
    ModelCallFailed = "model-call-failed", Warning,
        "model call failed", "model calls failed";
    /// An agent run (an `intention`) the trace records as failed.
    AgentRunFailed = "agent-run-failed", Error,
        "agent run failed", "agent runs failed";
    /// A `log` at level error that no failed call or run above already reports.
    ErrorLogged = "error-logged", Warning,
        "error was logged", "errors were logged";
    /// A `score` that passes an answer Σ contradicts, or a plan step whose postcondition
    /// re-runs false (`audit::judge`).
    ScorePassesContradicted = "score-passes-contradicted", Error,
        "score passes an answer or step the recomputation refutes",
        "scores pass answers or steps the recomputation refutes" {
        needs: "a `score` whose `target` names an `answer` with a `formula`, or a plan step's `step` event",
        example: "tests/data/audit/score-passes-contradicted.jsonl",
        check: judge::check,
    };
    /// A `score` that fails an answer Σ entails, or a plan step whose postcondition re-runs
    /// true (`audit::judge`).
    ScoreFailsEntailed = "score-fails-entailed", Warning,
        "score fails an answer or step the recomputation confirms",
        "scores fail answers or steps the recomputation confirms" {
        needs: "a `score` whose `target` names an `answer` with a `formula`, or a plan step's `step` event (found by the unit of `score-passes-contradicted`)",
        example: "tests/data/audit/score-fails-entailed.jsonl",
    };
    /// A plan with steps that can never become ready, flagged when it is written: they
    /// depend, directly or through other steps, on a cycle or a step the plan lacks
    /// (`audit::tiers`).
    PlanNeverReady = "plan-never-ready", Error,
        "plan has steps that can never become ready",
        "plans have steps that can never become ready" {
        needs: "a `plan` with `deps`",
        example: "tests/data/audit/plan-never-ready.jsonl",
        check: tiers::check,
    };
    /// A score that says the scored work failed (`passed: false`, Inspect's `I`/`N`, a
    /// `false` value, a `fail`/`incorrect` label: `model/scores.rs`), on what it scores.
    ScoreFailed = "score-failed", Error,
        "score says the work failed", "scores say the work failed" {
        needs: "a `score` with `passed`, a boolean value, Inspect's letters or a pass/fail word",
        example: "tests/data/audit/score-failed.jsonl",
        check: scored::check,
    };
    /// A verdict doxascope cannot check independently (tier 2 and 3, solver timeouts).
    NotCheckable = "not-checkable", Info,
        "verdict is not independently checkable", "verdicts are not independently checkable";
}

impl Code {
    /// "N fragment": the count followed by the summary fragment ("1 plan deadlocked").
    pub fn summary(self, n: usize) -> String {
        let (one, many) = self.fragments();
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a finding points in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file as given (or `<stdin>`).
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column, when known: within the line for reader problems, within the formula
    /// text for formula parse errors (then `evidence.field` names the field).
    pub column: Option<u64>,
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The code.
    pub code: Code,
    /// How serious it is.
    pub severity: Severity,
    /// The session.
    pub session: String,
    /// The step it is about (`None` for a line that is not an event).
    pub step: Option<u32>,
    /// The `seq` of that event.
    pub seq: Option<u64>,
    /// One complete sentence, already sanitized for display.
    pub message: String,
    /// The event's (or line's) location.
    pub location: Option<Location>,
    /// Belief ids involved (raw, as in the trace).
    pub ids: Vec<String>,
    /// Formulas involved (raw, as in the trace).
    pub formulas: Vec<String>,
    /// Code-specific evidence (claimed and recomputed outcomes, conflicts, plan steps, ...).
    pub evidence: Map<String, Value>,
}

impl Finding {
    /// The finding as the JSON object `--json` prints.
    pub fn to_json(&self) -> Value {
        let location = self
            .location
            .as_ref()
            .map(|l| json!({"file": l.file, "line": l.line, "column": l.column}));
        json!({
            "code": self.code.as_str(),
            "severity": self.severity.as_str(),
            "session": self.session,
            "step": self.step,
            "seq": self.seq,
            "message": self.message,
            "location": location,
            "ids": self.ids,
            "formulas": self.formulas,
            "evidence": Value::Object(self.evidence.clone()),
        })
    }
}

/// The recomputed side of the confusion matrix: the three solver classes, plus `unknown`
/// when the verdict could not be recomputed.
pub const RECOMPUTED: [&str; 4] = ["contradiction", "entailed", "newinfo", "unknown"];
/// The claimed side: the four outcomes an agent may claim.
pub const CLAIMED: [&str; 4] = ["contradiction", "entailed", "newinfo", "ungrounded"];

/// Claimed gate outcomes against recomputed ones, over every `verify` that claims one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Matrix {
    /// `counts[claimed][recomputed]`, indexed as [`CLAIMED`] and [`RECOMPUTED`].
    pub counts: [[u64; 4]; 4],
}

impl Matrix {
    /// The count for one cell, by name.
    pub fn get(&self, claimed: &str, recomputed: &str) -> u64 {
        match (
            CLAIMED.iter().position(|c| *c == claimed),
            RECOMPUTED.iter().position(|c| *c == recomputed),
        ) {
            (Some(i), Some(j)) => self.counts[i][j],
            _ => 0,
        }
    }

    pub(crate) fn add(&mut self, claimed: Claimed, recomputed: usize) {
        let i = match claimed {
            Claimed::Contradiction => 0,
            Claimed::Entailed => 1,
            Claimed::Newinfo => 2,
            Claimed::Ungrounded => 3,
        };
        self.counts[i][recomputed.min(3)] += 1;
    }

    fn merge(&mut self, o: &Matrix) {
        for i in 0..4 {
            for j in 0..4 {
                self.counts[i][j] += o.counts[i][j];
            }
        }
    }

    /// `{claimed: {recomputed: n}}` with every cell, zeros included, so the shape is stable.
    pub fn to_json(&self) -> Value {
        let mut rows = Map::new();
        for (i, c) in CLAIMED.iter().enumerate() {
            let mut row = Map::new();
            for (j, r) in RECOMPUTED.iter().enumerate() {
                row.insert((*r).to_string(), json!(self.counts[i][j]));
            }
            rows.insert((*c).to_string(), Value::Object(row));
        }
        Value::Object(rows)
    }

    /// Total verdicts counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().flatten().sum()
    }
}

/// Settings of an audit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AuditOptions {
    /// The revision policy to re-run each revision with. `None`: the policy the `revise`
    /// event names (revisions naming no known policy are not re-run).
    pub policy: Option<Policy>,
    /// Solver settings of the recomputation.
    pub recompute: RecomputeOptions,
    /// How many sessions are audited at once; `0`: one per core. The report is the same
    /// whatever the number.
    pub threads: usize,
}

/// Per-session totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session name.
    pub name: String,
    /// Its events.
    pub events: u32,
}

/// Everything an audit found.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The findings, by session (in order of first appearance), then step, then code.
    pub findings: Vec<Finding>,
    /// Claimed against recomputed gate outcomes, over all sessions.
    pub matrix: Matrix,
    /// The sessions audited.
    pub sessions: Vec<SessionSummary>,
    /// `verify` events seen.
    pub verifies: u64,
    /// Of those, how many were recomputed.
    pub recomputed: u64,
    /// Of those, how many could not be recomputed within the solver's budget (a timeout, a
    /// formula over a cap, a Σ the solver could not hold): each is a `not-checkable`
    /// finding, never a verdict. The rest of the not-recomputed ones have no formula that
    /// parses (a `parse-error`).
    pub not_checkable: u64,
    /// The policy revisions were re-run with, when one was chosen.
    pub policy: Option<Policy>,
}

impl Report {
    /// Findings of this severity.
    pub fn count(&self, s: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == s).count()
    }

    /// Findings per code, in code order.
    pub fn by_code(&self) -> BTreeMap<Code, usize> {
        let mut m = BTreeMap::new();
        for f in &self.findings {
            *m.entry(f.code).or_default() += 1;
        }
        m
    }

    /// Whether the audit fails (contract §1: any finding of severity warning or error).
    pub fn failed(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity >= Severity::Warning)
    }

    /// The `summary` object of `--json`.
    pub fn summary_json(&self) -> Value {
        let by_severity =
            [Severity::Info, Severity::Warning, Severity::Error].map(|s| self.count(s));
        self.summary_of(self.findings.len(), &self.by_code(), by_severity)
    }

    /// The `summary` object for findings counted elsewhere (a [`Spooled`] audit's).
    fn summary_of(
        &self,
        findings: usize,
        by_code: &BTreeMap<Code, usize>,
        [infos, warnings, errors]: [usize; 3],
    ) -> Value {
        let mut codes = Map::new();
        for (c, n) in by_code {
            codes.insert(c.as_str().to_string(), json!(n));
        }
        let headlines: Vec<String> = by_code.iter().map(|(c, n)| c.summary(*n)).collect();
        json!({
            "findings": findings,
            "errors": errors,
            "warnings": warnings,
            "infos": infos,
            "by_code": codes,
            "headlines": headlines,
            "sessions": self.sessions.iter().map(|s| json!({"name": s.name, "events": s.events})).collect::<Vec<_>>(),
            "verifies": self.verifies,
            "recomputed": self.recomputed,
            "not_checkable": self.not_checkable,
            "policy": self.policy.map(|p| p.as_str()),
        })
    }

    /// The whole `--json` document: `{findings, summary, claimed_vs_recomputed}`.
    pub fn to_json(&self) -> Value {
        json!({
            "findings": self.findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
            "summary": self.summary_json(),
            "claimed_vs_recomputed": self.matrix.to_json(),
        })
    }
}

/// What the checks of one session share: the model's data for it and a way to build
/// findings that point back at events.
pub(crate) struct Cx<'a> {
    pub(crate) log: &'a TraceLog,
    pub(crate) tl: &'a Timeline,
    pub(crate) rc: &'a Recomputed,
    pub(crate) opts: &'a AuditOptions,
    /// The findings, when they are kept whole (a [`Report`]).
    findings: Vec<Finding>,
    /// The findings already rendered, when the audit writes them out ([`Spooled`]).
    spool: Option<render::SessionSpool>,
    /// The failure modes found so far, for the failures check's comparison with the recorded
    /// ones (in both cases above: a rendered finding cannot be read back).
    pub(crate) modes: Vec<ModeNote>,
    pub(crate) matrix: Matrix,
    /// The session's records by id, built by the first check that asks ([`Cx::ids`]).
    ids: std::cell::OnceCell<ids::ById<'a>>,
    /// The session's citations, read by the first check that asks ([`Cx::citations`]).
    citations: std::cell::OnceCell<Vec<citations::Citing>>,
}

/// A finding of a failure mode, as the failures check reads it: the code, the step, and the
/// plan and plan step its evidence names.
pub(crate) struct ModeNote {
    pub(crate) code: Code,
    pub(crate) step: Option<u32>,
    pub(crate) plan: Option<String>,
    pub(crate) plan_step: Option<String>,
}

impl<'a> Cx<'a> {
    /// The session's records by id: which record of an id held at a step, without a scan of
    /// every record.
    pub(crate) fn ids(&self) -> &ids::ById<'a> {
        self.ids.get_or_init(|| ids::ById::new(self.tl.beliefs()))
    }

    /// The session's citing events, each cited id with whether it was held just before.
    pub(crate) fn citations(&self) -> &[citations::Citing] {
        self.citations.get_or_init(|| citations::of(self))
    }

    /// [`Cx::citations`] given up by the check that reads them last (they are as large as
    /// the session's citations). A check that asks after this reads them again.
    pub(crate) fn done_with_citations(&mut self) {
        self.citations.take();
    }

    /// A finding about the event at log position `event`, taking effect at `step`.
    pub(crate) fn finding(
        &self,
        code: Code,
        step: u32,
        event: u32,
        message: impl AsRef<str>,
    ) -> Finding {
        // Not pinned: a long trace has findings on a large share of its events.
        let ev = self.log.events.load(event as usize);
        let ev = ev.as_deref();
        Finding {
            code,
            severity: code.default_severity(),
            session: self.tl.name().to_string(),
            step: Some(step),
            seq: ev.map(|e| e.seq),
            message: crate::sanitize::sanitize(message.as_ref()),
            location: ev.and_then(|e| {
                // An imported event's line is the file's line the importer read it from; one
                // read from a place that is not a line (a JSON path, an archive member) has
                // no line to give, and says its place in the evidence instead.
                let line = match crate::trace::provenance::source_place(e) {
                    Some(place) => place.line?,
                    None => e.origin.line,
                };
                Some(Location {
                    file: e.origin.file.to_string(),
                    line,
                    column: None,
                })
            }),
            ids: Vec::new(),
            formulas: Vec::new(),
            evidence: ev
                .and_then(crate::trace::provenance::source_place)
                .filter(|p| p.line.is_none())
                .map(|p| Map::from_iter([("from".to_string(), Value::String(p.text))]))
                .unwrap_or_default(),
        }
    }

    pub(crate) fn push(&mut self, f: Finding) {
        if failures::mode_of(f.code).is_some() {
            let text = |k: &str| {
                f.evidence
                    .get(k)
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            self.modes.push(ModeNote {
                code: f.code,
                step: f.step,
                plan: text("plan"),
                plan_step: text("step"),
            });
        }
        match &mut self.spool {
            // Rendered now: a long trace has hundreds of thousands of findings per session,
            // and the rendered form is a fraction of a `Finding`'s memory.
            Some(spool) => spool.push(&f),
            None => self.findings.push(f),
        }
    }
}

/// Builder-style helpers so checks read as sentences.
impl Finding {
    pub(crate) fn severity(mut self, s: Severity) -> Self {
        self.severity = s;
        self
    }

    pub(crate) fn ids<I: IntoIterator<Item = S>, S: Into<String>>(mut self, ids: I) -> Self {
        self.ids.extend(ids.into_iter().map(Into::into));
        self
    }

    pub(crate) fn formulas<I: IntoIterator<Item = S>, S: Into<String>>(mut self, fs: I) -> Self {
        self.formulas.extend(fs.into_iter().map(Into::into));
        self
    }

    pub(crate) fn with(mut self, key: &str, v: impl serde::Serialize) -> Self {
        // Plain data (strings, numbers, lists of them) always serializes.
        let v = serde_json::to_value(v).unwrap_or(Value::Null);
        self.evidence.insert(key.to_string(), v);
        self
    }
}

/// The events of one kind a check reads throughout, decoded for that check alone (indexed
/// like the [`crate::model::bdi::BdiLog`] list they come from): its views borrow from them,
/// and pinning them in the store kept every one of every session decoded to the end of the
/// audit.
type Decoded<'a> = Vec<Option<std::borrow::Cow<'a, crate::trace::Event>>>;

/// The events at `positions`, decoded (see [`Decoded`]).
fn decode_all<'a>(log: &'a TraceLog, positions: impl Iterator<Item = u32>) -> Decoded<'a> {
    positions.map(|pos| log.events.load(pos as usize)).collect()
}

/// The body of the `k`-th event of `decoded`, if it was read.
fn body_in<'a>(decoded: &'a Decoded<'_>, k: usize) -> Option<&'a crate::trace::event::Body> {
    body_of(decoded.get(k)?)
}

/// The audit of one session.
struct SessionAudit {
    findings: Vec<Finding>,
    spool: Option<render::Spool>,
    matrix: Matrix,
    verifies: u64,
    recomputed: u64,
    not_checkable: u64,
    summary: SessionSummary,
}

fn audit_session(
    log: &TraceLog,
    tl: &Timeline,
    opts: &AuditOptions,
    given: Option<&Recomputed>,
    form: Option<Form>,
    one_walk: Option<&OneWalk>,
) -> SessionAudit {
    // About twenty walks of the session follow: when its lines are spread over the file
    // among other sessions', each would read the whole file (`trace::store::gather`).
    let _gathered = log.events.gather_sparse(tl.event_positions());
    let owned;
    let rc = match given {
        Some(rc) => rc,
        None => {
            // The recomputation answers the checks' questions in the same walk.
            let ro = RecomputeOptions {
                audit: Some(AuditQuestions {
                    policy: opts.policy,
                }),
                ..opts.recompute
            };
            let walk = || super::recompute::recompute(tl, log, &ro);
            owned = match one_walk {
                Some(one) => one.walk(tl, walk),
                None => walk(),
            };
            &owned
        }
    };
    let mut cx = Cx {
        log,
        tl,
        rc,
        opts,
        findings: Vec::new(),
        spool: form.map(render::SessionSpool::new),
        modes: Vec::new(),
        matrix: Matrix::default(),
        ids: std::cell::OnceCell::new(),
        citations: std::cell::OnceCell::new(),
    };
    input::check(&mut cx);
    epistemic::check(&mut cx);
    bdi::check(&mut cx);
    failures::check(&mut cx);
    loops::check(&mut cx);
    lookalike::check(&mut cx);
    runtime::check(&mut cx);
    registry::run_units(&mut cx);
    let mut findings = cx.findings;
    findings.sort_by_key(|a| (a.step, a.code, a.seq));
    SessionAudit {
        findings,
        spool: cx.spool.map(render::SessionSpool::finish),
        matrix: cx.matrix,
        verifies: rc.verifies.len() as u64,
        recomputed: rc.verifies.iter().filter(|v| v.result.is_ok()).count() as u64,
        not_checkable: rc
            .verifies
            .iter()
            .filter(|v| v.result.as_ref().is_err_and(|e| e.not_checkable()))
            .count() as u64,
        summary: SessionSummary {
            name: tl.name().to_string(),
            events: tl.len(),
        },
    }
}

/// The code and message of the finding a failure becomes ([`crate::model::failure`]), the
/// same the audit gives it: what the TUI shows for a failure before its audit has run.
pub fn failure_finding(f: &crate::model::failure::Failure) -> (Code, String) {
    runtime::describe(f)
}

/// The step and message of the `score-failed` finding a failed score becomes, the same the
/// audit gives it: what the TUI shows for it before its audit has run.
pub fn score_finding(tl: &Timeline, s: &crate::model::scores::Scored) -> (u32, String) {
    (scored::place(tl, s).0, scored::message(s))
}

/// Audits every session of a model (running [`Model::recompute`] for each).
pub fn audit(model: &Model, opts: &AuditOptions) -> Report {
    let problems = input::reader_problems(model);
    let sessions = Sessions::Borrowed(model.timelines());
    audit_sessions(model.log(), sessions, problems, opts, &[], None).0
}

/// Audits every session of a model from recomputations already made (a view that has run
/// [`Model::recompute`] does not pay for it twice). A session without one in `recomputed`
/// is recomputed here.
pub fn audit_recomputed(model: &Model, recomputed: &[Recomputed], opts: &AuditOptions) -> Report {
    let problems = input::reader_problems(model);
    let sessions = Sessions::Borrowed(model.timelines());
    audit_sessions(model.log(), sessions, problems, opts, recomputed, None).0
}

/// Audits every session of a model for printing in one form, as [`audit`] then
/// [`render_text`] or [`Report::to_json`] would, byte for byte, without keeping the findings:
/// each session's findings are rendered as the session's audit ends and kept compressed, so
/// a trace with millions of findings is audited in a fraction of the memory.
pub fn audit_spooled(model: &Model, opts: &AuditOptions, form: Form) -> Spooled {
    let problems = input::reader_problems(model);
    let sessions = Sessions::Borrowed(model.timelines());
    spooled(
        audit_sessions(model.log(), sessions, problems, opts, &[], Some(form)),
        form,
    )
}

/// [`audit_spooled`], byte for byte, for a caller done with the sessions: their timelines
/// are taken out of `model` ([`Model::take_timelines`]: it holds none afterwards, its log
/// stays) and each is dropped as its session's audit ends. A long trace's timelines are
/// about a third of what the audit holds once loaded; the sessions audited last no longer
/// share the memory with every finished one's.
pub fn audit_spooled_releasing(model: &mut Model, opts: &AuditOptions, form: Form) -> Spooled {
    // Reader problems name their session from the timelines: before they go.
    let problems = input::reader_problems(model);
    let slots = model
        .take_timelines()
        .into_iter()
        .map(|tl| std::sync::Mutex::new(Some(tl)))
        .collect();
    let sessions = Sessions::Owned(slots);
    spooled(
        audit_sessions(model.log(), sessions, problems, opts, &[], Some(form)),
        form,
    )
}

fn spooled((report, spool): (Report, Option<render::Spool>), form: Form) -> Spooled {
    Spooled {
        report,
        spool: spool.unwrap_or_else(|| render::Spool::new(form)),
    }
}

/// The timelines of the sessions to audit: borrowed from the model, or owned, each taken
/// from its slot by the worker that audits it and dropped when that audit ends.
enum Sessions<'a> {
    Borrowed(&'a [Timeline]),
    Owned(Vec<std::sync::Mutex<Option<Timeline>>>),
}

impl Sessions<'_> {
    fn len(&self) -> usize {
        match self {
            Sessions::Borrowed(t) => t.len(),
            Sessions::Owned(t) => t.len(),
        }
    }

    /// Runs `f` on the `i`-th timeline; an owned one is dropped right after (`None` when it
    /// was taken before: each session is audited once).
    fn with<R>(&self, i: usize, f: impl FnOnce(&Timeline) -> R) -> Option<R> {
        match self {
            Sessions::Borrowed(t) => t.get(i).map(f),
            Sessions::Owned(t) => {
                let tl = t
                    .get(i)?
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()?;
                Some(f(&tl))
            }
        }
    }
}

/// Sessions at least this long walk one at a time in the CLI's audit (see `audit_sessions`);
/// a few events under test, so that a unit test's sessions take the lock.
const ONE_WALK_MIN: u32 = if cfg!(test) { 400 } else { 100_000 };

/// The CLI's audit walks its long sessions one at a time: the lock they take around the walk.
#[derive(Default)]
struct OneWalk {
    lock: std::sync::Mutex<()>,
    /// The long walks of this audit in flight (kept under test only).
    #[cfg(test)]
    in_flight: AtomicUsize,
}

/// The most long walks seen in flight together in any one audit (tests check it is one).
#[cfg(test)]
static MOST_WALKS_TOGETHER: AtomicUsize = AtomicUsize::new(0);

impl OneWalk {
    /// Walks `tl` with `walk`, alone among this audit's long sessions when `tl` is long.
    fn walk<R>(&self, tl: &Timeline, walk: impl FnOnce() -> R) -> R {
        if tl.len() < ONE_WALK_MIN {
            return walk();
        }
        // The walk's engine is dropped when it returns: holding the lock across it is what
        // keeps two engines from growing together.
        let _alone = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        #[cfg(test)]
        {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            MOST_WALKS_TOGETHER.fetch_max(now, Ordering::SeqCst);
        }
        let r = walk();
        #[cfg(test)]
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        r
    }
}

fn audit_sessions(
    log: &TraceLog,
    sessions: Sessions<'_>,
    problems: Vec<Finding>,
    opts: &AuditOptions,
    recomputed: &[Recomputed],
    form: Option<Form>,
) -> (Report, Option<render::Spool>) {
    let mut report = Report {
        findings: Vec::new(),
        matrix: Matrix::default(),
        sessions: Vec::new(),
        verifies: 0,
        recomputed: 0,
        not_checkable: 0,
        policy: opts.policy,
    };
    // Sessions are independent: audit them on as many threads as there are cores (each
    // solver request already runs on its engine's own thread), and merge in session order.
    let count = sessions.len();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = match opts.threads {
        0 => cores,
        n => n,
    }
    .clamp(1, count.max(1));
    let next = AtomicUsize::new(0);
    // A session's walk holds its engine, which grows with Σ to the walk's end (a 10M
    // session's walk adds about 450 MiB by then), and two workers walking together held two
    // of them: the 10M audit's high-water mark. Long sessions walk one at a time: while one
    // worker walks, the other runs the checks of the session it walked before, which take
    // about as long, so both cores stay busy but during the first walk. Only for the CLI's
    // spooled audit: the TUI's audit keeps its workers' walks together.
    let one_walk = OneWalk::default();
    let one_walk = (workers > 1 && form.is_some() && recomputed.is_empty()).then_some(&one_walk);
    let work = || {
        let mut out = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            let a = sessions.with(i, |tl| {
                let given = recomputed.iter().find(|r| r.session == tl.name());
                audit_session(log, tl, opts, given, form, one_walk)
            });
            if let Some(a) = a {
                out.push((i, a));
            }
        }
        out
    };
    // One worker runs right here: a thread to wait for costs a wake-up, which on a loaded
    // machine means waiting for a core.
    let mut done: Vec<(usize, SessionAudit)> = if workers == 1 {
        work()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers).map(|_| scope.spawn(work)).collect();
            handles
                .into_iter()
                // A panicking check is a bug; losing its session's findings silently would
                // hide it, so the panic propagates.
                .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    };
    done.sort_by_key(|(i, _)| *i);
    // Reader problems come first: they say what the rest of the audit could not see.
    let mut spool = form.map(|form| {
        let mut s = render::SessionSpool::new(form);
        for f in &problems {
            s.push(f);
        }
        let mut all = render::Spool::new(form);
        all.append(s.finish());
        all
    });
    if spool.is_none() {
        report.findings = problems;
    }
    for (_, a) in done {
        report.findings.extend(a.findings);
        if let (Some(all), Some(s)) = (spool.as_mut(), a.spool) {
            all.append(s);
        }
        report.matrix.merge(&a.matrix);
        report.verifies += a.verifies;
        report.recomputed += a.recomputed;
        report.not_checkable += a.not_checkable;
        report.sessions.push(a.summary);
    }
    (report, spool)
}

/// An audit rendered for one output form ([`audit_spooled`]): the totals of a [`Report`],
/// and its findings as text or JSON, compressed.
pub struct Spooled {
    /// Everything but the findings (`findings` is empty).
    report: Report,
    spool: render::Spool,
}

impl Spooled {
    /// Whether the audit fails, as [`Report::failed`].
    pub fn failed(&self) -> bool {
        self.spool.failed()
    }

    /// How many findings there are.
    pub fn findings(&self) -> usize {
        self.spool.len()
    }

    /// Writes the report in the form it was rendered for: what [`render_text`] returns, or
    /// [`Report::to_json`] pretty-printed with a final newline.
    pub fn write(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.spool.write(&self.report, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::generate::{GenConfig, write_mixed};

    /// With two workers on long sessions, the sessions walk one at a time (`audit_sessions`),
    /// and the report is the one worker's, byte for byte.
    #[test]
    fn long_sessions_walk_one_at_a_time_and_print_what_one_prints() {
        let cfg = GenConfig {
            events: 6_000,
            seed: 9,
            sessions: 3,
            atoms: 40,
        };
        let mut bytes = Vec::new();
        write_mixed(&mut bytes, &cfg).expect("generator");
        let print = |threads| {
            let mut model = Model::from_bytes("gen.jsonl", &bytes);
            let opts = AuditOptions {
                threads,
                ..AuditOptions::default()
            };
            let s = audit_spooled_releasing(&mut model, &opts, Form::Json);
            let mut out = Vec::new();
            s.write(&mut out).expect("memory");
            out
        };
        let one = print(1);
        assert_eq!(print(2), one);
        // Counted per audit: other tests' audits running beside this one do not add up.
        assert_eq!(
            MOST_WALKS_TOGETHER.load(Ordering::SeqCst),
            1,
            "two long sessions of one audit walked together"
        );
    }
}
