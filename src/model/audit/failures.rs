//! Seed 004's failure taxonomy (§7.3), each mode a finding with its evidence, and the
//! comparison of the failure modes a trace records with what doxascope detected.
//!
//! Two of the six modes are found by [`super::bdi`] (`postcondition-false-positive` is the
//! verification false positive, `dag-deadlock` the DAG deadlock). This module finds the other
//! four from the BDI log and the optional fields of trace format v1 that carry what a check
//! needs (`docs/trace-format.md`, *Seed 004's failure taxonomy*):
//!
//! - **incorrect computation** (`incorrect-computation`): a plan step that says what it
//!   computes (`compute`) wrote a value its inputs do not give. The inputs are the step's
//!   `inputs`, or else the ground beliefs at its dispatch (seed 004's snapshot); the
//!   expression is evaluated by [`crate::model::arith`] and the written value is accepted
//!   when it is the exact result rounded to the precision it was written with. An expression
//!   that cannot be evaluated (a name with no numeric value) is `not-checkable`.
//! - **answer formatting** (`answer-formatting`): a `satisfaction` carries the task's
//!   `expected_answer`; the answer (the record's `answer`, else the last `FINAL ANSWER: v` of
//!   a step's summary, the paper's extraction rule, else the value of the intention's tier-1
//!   satisfaction belief) misses the quasi-exact match (numbers compared as numbers after
//!   removing `$ , %`; text compared without case, spaces or punctuation) but would match
//!   after one more step of formatting: rounding to the expected precision (16.95 vs 17), a
//!   power-of-ten scale (17000 vs 17, "thousand hours"), or text around the value.
//! - **bad retrieval** (`bad-retrieval`): a fetch step that failed (nothing was retrieved, a
//!   warning), or a wrong answer whose every upstream computation recomputes correctly, so
//!   the wrong value entered through the fetch steps upstream of the answer (an error; the
//!   evidence lists what each fetched). Seed 004: "a wrong fetch value produces a wrong
//!   computation, which produces a wrong final answer".
//! - **avoiding a file read** (`file-read-avoided`): the intention names files (`files`) and
//!   no step of it called a `read_file` tool on one of them; the steps that searched the web
//!   instead are the evidence. An error when the intention's answer is scored wrong.
//!
//! A wrong answer none of these explains (an upstream computation without `compute`) is a
//! `wrong-answer`, with the steps that could not be rechecked.
//!
//! **Recorded failure modes.** A `postcondition` or `satisfaction` may record a
//! `failure_mode`. Each is surfaced (`failure-mode-recorded`, info) with what doxascope
//! detected in the same scope (the step, or the whole intention), and a disagreement is a
//! `failure-mode-mismatch` (warning): doxascope detected other modes there, or checked for the
//! recorded one with the information present and found none. A recorded `correct` that
//! disagrees with doxascope's score of the answer is a mismatch too.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::{Code, Cx, Decoded, Finding, body_in, decode_all};
use crate::model::bdi::{BdiLog, tier1_name};
use crate::trace::TraceLog;
use crate::trace::event::{Body, Plan, PlanStep, Step, StepKind};

mod answers;
mod computation;
mod files;
mod recorded;

/// The six modes of seed 004's taxonomy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// Web search returned wrong or irrelevant information, or nothing.
    BadRetrieval,
    /// The task's data is in a local file the agent never read.
    AvoidedFileRead,
    /// Arithmetic errors or the wrong formula.
    IncorrectComputation,
    /// A step self-reported its postcondition met, the tier-1 check finds no such belief.
    VerificationFalsePositive,
    /// No step ready, the plan incomplete.
    DagDeadlock,
    /// The answer's format does not match the expected one.
    AnswerFormatting,
}

impl Mode {
    /// Every mode, in the paper's order.
    pub const ALL: [Mode; 6] = [
        Mode::BadRetrieval,
        Mode::AvoidedFileRead,
        Mode::IncorrectComputation,
        Mode::VerificationFalsePositive,
        Mode::DagDeadlock,
        Mode::AnswerFormatting,
    ];

    /// The label a trace records (`failure_mode`).
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::BadRetrieval => "bad_retrieval",
            Mode::AvoidedFileRead => "avoided_file_read",
            Mode::IncorrectComputation => "incorrect_computation",
            Mode::VerificationFalsePositive => "verification_false_positive",
            Mode::DagDeadlock => "dag_deadlock",
            Mode::AnswerFormatting => "answer_formatting",
        }
    }

    /// The mode a recorded label names: case, spaces and hyphens do not matter, and the
    /// paper's own wordings are accepted (`avoiding_file_read_tool_use`).
    pub fn from_label(label: &str) -> Option<Mode> {
        let l: String = label
            .trim()
            .chars()
            .map(|c| match c {
                ' ' | '-' => '_',
                c => c.to_ascii_lowercase(),
            })
            .collect();
        match l.as_str() {
            "bad_retrieval" => Some(Mode::BadRetrieval),
            "avoided_file_read"
            | "avoiding_file_read"
            | "avoiding_file_read_tool_use"
            | "file_read_avoided" => Some(Mode::AvoidedFileRead),
            "incorrect_computation" => Some(Mode::IncorrectComputation),
            "verification_false_positive" => Some(Mode::VerificationFalsePositive),
            "dag_deadlock" => Some(Mode::DagDeadlock),
            "answer_formatting" => Some(Mode::AnswerFormatting),
            _ => None,
        }
    }

    fn words(self) -> &'static str {
        match self {
            Mode::BadRetrieval => "bad retrieval",
            Mode::AvoidedFileRead => "an avoided file read",
            Mode::IncorrectComputation => "an incorrect computation",
            Mode::VerificationFalsePositive => "a verification false positive",
            Mode::DagDeadlock => "a DAG deadlock",
            Mode::AnswerFormatting => "an answer-formatting near miss",
        }
    }
}

/// The mode a finding code stands for.
pub(super) fn mode_of(code: Code) -> Option<Mode> {
    Some(match code {
        Code::BadRetrieval => Mode::BadRetrieval,
        Code::FileReadAvoided => Mode::AvoidedFileRead,
        Code::IncorrectComputation => Mode::IncorrectComputation,
        Code::PostconditionFalsePositive => Mode::VerificationFalsePositive,
        Code::DagDeadlock => Mode::DagDeadlock,
        Code::AnswerFormatting => Mode::AnswerFormatting,
        _ => return None,
    })
}

/// How a recomputed step came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comp {
    Right,
    Wrong,
    Unchecked,
}

/// An answer scored against the expected one.
#[derive(Debug, Clone, PartialEq)]
pub enum Score {
    /// The quasi-exact match holds.
    Correct,
    /// It would hold after one more formatting step; says which.
    NearMiss(String),
    /// It does not.
    Wrong,
}

/// A value as the text an answer is compared by.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim().to_string(),
        other => other.to_string(),
    }
}

fn as_number(s: &str) -> Option<f64> {
    let t: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '$' | ',' | '%'))
        .collect();
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
    {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// The numbers written in a text, in order (`"about 17 thousand"` → 17).
fn numbers_in(s: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
                && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < b.len()
            && (b[i].is_ascii_digit()
                || (matches!(b[i], b'.' | b',') && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
        {
            i += 1;
        }
        if let Some(x) = as_number(&s[start..i]) {
            out.push(x);
        }
    }
    out
}

fn squeeze(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn decimals(s: &str) -> i32 {
    let t: String = s
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    t.find('.').map_or(0, |i| (t.len() - i - 1) as i32)
}

fn round_to(x: f64, d: i32) -> f64 {
    let k = 10f64.powi(d);
    (x * k).round() / k
}

/// Scores an answer against the expected one (see the module docs).
pub fn score(answer: &str, expected: &str) -> Score {
    if let Some(e) = as_number(expected) {
        let (x, extra) = match as_number(answer) {
            Some(a) if close(a, e) => return Score::Correct,
            Some(a) => (a, false),
            None => match numbers_in(answer).as_slice() {
                [a] => (*a, true),
                _ => return Score::Wrong,
            },
        };
        let d = decimals(expected);
        if close(x, e) && extra {
            return Score::NearMiss(format!("text around the number {expected}"));
        }
        if close(round_to(x, d), e) {
            return Score::NearMiss(format!(
                "not rounded to the expected precision ({} decimal{})",
                d,
                if d == 1 { "" } else { "s" }
            ));
        }
        for k in [-9, -6, -3, -2, 2, 3, 6, 9] {
            if close(round_to(x * 10f64.powi(k), d), e) {
                return Score::NearMiss(format!(
                    "a different unit or scale (off by a factor of 10^{})",
                    -k
                ));
            }
        }
        return Score::Wrong;
    }
    let (a, e) = (squeeze(answer), squeeze(expected));
    if a == e {
        return Score::Correct;
    }
    let (short, long) = if a.len() <= e.len() {
        (&a, &e)
    } else {
        (&e, &a)
    };
    if short.chars().count() >= 3 && long.contains(short.as_str()) {
        return Score::NearMiss("text around or missing from the answer".into());
    }
    Score::Wrong
}

/// A failure mode detected, with where: its intention window and the plan steps it
/// implicates.
struct Detected {
    mode: Mode,
    window: Option<usize>,
    plan: Option<String>,
    steps: Vec<String>,
    plan_level: bool,
}

/// The files an intention names that no step read, and the steps that searched the web
/// instead: (step, event, `plan/step`).
type Unread<'a> = (Vec<&'a str>, Vec<(u32, u32, String)>);

/// An answer found: its text, where it came from, its step and event, and the (plan record,
/// step id) that produced it.
type Found = (String, String, u32, u32, Option<(u32, String)>);

/// An intention and the events up to the next one.
struct Window<'a> {
    id: Option<&'a str>,
    start: u32,
    end: u32,
    pos: u32,
    files: Vec<&'a str>,
    tier1: Option<&'a str>,
}

/// A scored answer.
struct Scored {
    window: Option<usize>,
    sat_step: u32,
    score: Score,
    /// Whether the wrong answer's cause was determined.
    determined: bool,
    fetches: Vec<String>,
}

fn plan_of<'a>(plans: &'a Decoded<'_>, rec: u32) -> Option<&'a Plan> {
    match body_in(plans, rec as usize)? {
        Body::Plan(p) => Some(p),
        _ => None,
    }
}

fn step_def<'p>(plan: &'p Plan, id: &str) -> Option<&'p PlanStep> {
    plan.steps.iter().find(|s| s.id.as_str() == id)
}

fn post_name(def: &PlanStep) -> Option<&str> {
    def.post
        .as_deref()
        .and_then(Value::as_str)
        .and_then(tier1_name)
}

fn is_computation(def: &PlanStep) -> bool {
    def.compute.is_some() || def.kind == Some(StepKind::Compute)
}

/// The step and its ancestors in the plan's DAG.
fn ancestors<'p>(plan: &'p Plan, id: &str) -> Vec<&'p PlanStep> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut todo = vec![id];
    let mut out = Vec::new();
    while let Some(i) = todo.pop() {
        if !seen.insert(i) {
            continue;
        }
        if let Some(d) = step_def(plan, i) {
            out.push(d);
            todo.extend(d.deps.iter().map(|x| x.as_str()));
        }
    }
    out.sort_by_key(|d| plan.steps.iter().position(|s| s.id == d.id));
    out
}

/// Whether any string inside `v` names the file (its last path component).
fn mentions(v: &Value, file: &str) -> bool {
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    match v {
        Value::String(s) => !base.is_empty() && s.contains(base),
        Value::Array(xs) => xs.iter().any(|x| mentions(x, file)),
        Value::Object(m) => m.values().any(|x| mentions(x, file)),
        _ => false,
    }
}

fn tool_is(tool: &str, want: &str) -> bool {
    let t = tool.to_ascii_lowercase();
    t == want || t.ends_with(&format!(".{want}")) || t.ends_with(&format!(":{want}"))
}

fn searched(s: &Step) -> bool {
    s.tool_calls
        .iter()
        .any(|c| c.tool.to_ascii_lowercase().contains("search"))
        || s.new_beliefs.iter().any(|b| {
            b.source
                .as_deref()
                .is_some_and(|x| x.to_ascii_lowercase().contains("search"))
        })
}

/// The tables every failure-mode check reads, built once per session: the decoded plans and
/// satisfactions, and the intention windows.
struct Scene<'s> {
    log: &'s TraceLog,
    bl: &'s BdiLog,
    plans: &'s Decoded<'s>,
    sats: &'s Decoded<'s>,
    windows: Vec<Window<'s>>,
}

impl<'s> Scene<'s> {
    fn new(
        log: &'s TraceLog,
        bl: &'s BdiLog,
        plans: &'s Decoded<'s>,
        intentions: &'s Decoded<'s>,
        sats: &'s Decoded<'s>,
    ) -> Self {
        let mut windows: Vec<Window<'s>> = Vec::new();
        for (k, &(step, pos)) in bl.intentions.iter().enumerate() {
            let Some(ev) = intentions[k].as_deref() else {
                continue;
            };
            let Body::Intention(i) = &ev.body else {
                continue;
            };
            windows.push(Window {
                id: ev.id.as_deref(),
                start: step,
                end: bl.intentions.get(k + 1).map_or(u32::MAX, |x| x.0),
                pos,
                files: i.files.iter().map(|f| f.as_str()).collect(),
                tier1: i
                    .satisfaction
                    .as_deref()
                    .and_then(Value::as_str)
                    .and_then(tier1_name),
            });
        }
        Scene {
            log,
            bl,
            plans,
            sats,
            windows,
        }
    }

    /// The intention window step `t` lies in.
    fn window_of(&self, t: u32) -> Option<usize> {
        // Intentions are recorded in step order, so their windows are sorted by start.
        self.windows
            .partition_point(|w| w.start <= t)
            .checked_sub(1)
    }
}

/// What the checks found so far: the findings in the order they are reported, and the modes
/// detected, for the comparison with the recorded ones.
#[derive(Default)]
struct Tally {
    out: Vec<Finding>,
    detected: Vec<Detected>,
}

/// How each computation step recomputed, by (plan record, step id).
type Comps = HashMap<(u32, String), Comp>;

pub(super) fn check(cx: &mut Cx<'_>) {
    let log = cx.log;
    let bl = cx.tl.bdi_log();
    if bl.steps.is_empty() && bl.satisfactions.is_empty() && bl.intentions.is_empty() {
        return;
    }
    let plans = decode_all(log, bl.plans.iter().map(|p| p.event));
    let intentions = decode_all(log, bl.intentions.iter().map(|&(_, pos)| pos));
    let sats = decode_all(log, bl.satisfactions.iter().map(|&(_, pos)| pos));
    let sc = Scene::new(log, bl, &plans, &intentions, &sats);
    let mut tally = Tally::default();

    // The order is the report's: step findings, answers, file reads, then the comparisons.
    let comps = computation::check(cx, &sc, &mut tally);
    let unread = files::unread(&sc);
    let scored = answers::check(cx, &sc, &comps, &unread, &mut tally);
    files::check(cx, &sc, &unread, &scored, &mut tally);
    recorded::bdi_modes(cx, &sc, &mut tally);
    recorded::check(cx, &sc, &comps, &scored, &mut tally);
    recorded::scores(cx, &sc, &scored, &mut tally);
    for f in tally.out {
        cx.push(f);
    }
}

/// The definition of step `sid` in the version of plan `id` current at step `t`.
fn plan_def<'a>(
    plans: &'a Decoded<'_>,
    bl: &BdiLog,
    id: &str,
    t: u32,
    sid: &str,
) -> Option<&'a PlanStep> {
    let rec = bl.plans.iter().rposition(|r| r.id == id && r.step <= t)?;
    step_def(plan_of(plans, rec as u32)?, sid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_the_quasi_exact_match_and_name_the_near_miss() {
        assert_eq!(score("17", "17"), Score::Correct);
        assert_eq!(score("17.0", "17"), Score::Correct);
        assert_eq!(score("$1,234", "1234"), Score::Correct);
        assert_eq!(score(" Paris ", "paris"), Score::Correct);
        assert!(matches!(score("16.95", "17"), Score::NearMiss(m) if m.contains("rounded")));
        assert!(matches!(score("17000", "17"), Score::NearMiss(m) if m.contains("10^3")));
        assert!(
            matches!(score("17 thousand hours", "17"), Score::NearMiss(m) if m.contains("text"))
        );
        assert!(matches!(
            score("The answer is Paris", "Paris"),
            Score::NearMiss(_)
        ));
        assert_eq!(score("0.0003561723", "17"), Score::Wrong);
        assert_eq!(score("18", "17"), Score::Wrong);
        assert_eq!(score("Lyon", "Paris"), Score::Wrong);
        assert_eq!(score("between 3 and 4", "17"), Score::Wrong);
    }

    #[test]
    fn labels_are_read_loosely_but_only_for_the_six_modes() {
        for m in Mode::ALL {
            assert_eq!(Mode::from_label(m.as_str()), Some(m));
            assert_eq!(
                Mode::from_label(&m.as_str().replace('_', " ").to_uppercase()),
                Some(m)
            );
        }
        assert_eq!(
            Mode::from_label("Avoiding file read tool use"),
            Some(Mode::AvoidedFileRead)
        );
        assert_eq!(Mode::from_label("timeout"), None);
    }
}
