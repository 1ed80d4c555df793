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

use crate::trace::event::body_of;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Value, json};

use super::{Code, Cx, Decoded, Finding, Severity, body_in, decode_all};
use crate::model::arith::{self, Expr};
use crate::model::bdi::{BdiLog, tier1_name};
use crate::trace::event::{Body, Plan, PlanStep, Step, StepKind, StepStatus};

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

pub(super) fn check(cx: &mut Cx<'_>) {
    let log = cx.log;
    let bl = cx.tl.bdi_log();
    if bl.steps.is_empty() && bl.satisfactions.is_empty() && bl.intentions.is_empty() {
        return;
    }
    let mut out: Vec<Finding> = Vec::new();
    let mut detected: Vec<Detected> = Vec::new();

    let plans = decode_all(log, bl.plans.iter().map(|p| p.event));
    let intentions = decode_all(log, bl.intentions.iter().map(|&(_, pos)| pos));
    let sats = decode_all(log, bl.satisfactions.iter().map(|&(_, pos)| pos));

    // Intention windows.
    let mut windows: Vec<Window<'_>> = Vec::new();
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
    // Intentions are recorded in step order, so their windows are sorted by start.
    let window_of = |t: u32| windows.partition_point(|w| w.start <= t).checked_sub(1);

    // Computations and failed fetches, step event by step event.
    let mut comps: HashMap<(u32, String), Comp> = HashMap::new();
    for (i, sr) in bl.steps.iter().enumerate() {
        // Not pinned: every step event passes here.
        let loaded = log.events.load(sr.event as usize);
        let (Some(rec), Some(Body::Step(s))) = (sr.plan, body_of(&loaded)) else {
            continue;
        };
        let Some(sid) = s.step.as_deref() else {
            continue;
        };
        let Some(plan) = plan_of(&plans, rec) else {
            continue;
        };
        let Some(def) = step_def(plan, sid) else {
            continue;
        };
        let plan_id = bl.plans[rec as usize].id.as_str();
        if s.status == Some(StepStatus::Failed) && def.kind == Some(StepKind::Fetch) {
            let errors: Vec<Value> = s
                .tool_calls
                .iter()
                .filter_map(|c| {
                    c.error
                        .as_deref()
                        .map(|e| json!({"tool": c.tool.as_str(), "error": e}))
                })
                .collect();
            let why = match errors.first() {
                Some(e) => format!(
                    " ({} reported: {})",
                    e["tool"].as_str().unwrap_or("a tool"),
                    e["error"].as_str().unwrap_or("")
                ),
                None => String::new(),
            };
            out.push(
                cx.finding(
                    Code::BadRetrieval,
                    sr.step,
                    sr.event,
                    format!("Fetch step {plan_id}/{sid} failed: nothing was retrieved{why}."),
                )
                .with("plan", plan_id)
                .with("step", sid)
                .with("cause", "fetch-failed")
                .with("tool_errors", errors),
            );
            detected.push(Detected {
                mode: Mode::BadRetrieval,
                window: window_of(sr.step),
                plan: Some(plan_id.to_string()),
                steps: vec![sid.to_string()],
                plan_level: false,
            });
            continue;
        }
        if s.status != Some(StepStatus::Done) {
            continue;
        }
        let Some(expr_text) = def.compute.as_deref() else {
            if is_computation(def) {
                comps.insert((rec, sid.to_string()), Comp::Unchecked);
            }
            continue;
        };
        let out_name = def.output.as_deref().or_else(|| post_name(def));
        let written = match out_name {
            Some(n) => s.new_beliefs.iter().find(|b| b.name.as_str() == n),
            None if s.new_beliefs.len() == 1 => s.new_beliefs.first(),
            None => None,
        };
        let Some(written) = written else {
            // Nothing to compare with; a missing output is the false-positive check's.
            comps.insert((rec, sid.to_string()), Comp::Unchecked);
            continue;
        };
        // The snapshot the step computed from: the ground beliefs at its dispatch (the
        // latest dispatch of this run of the step), else just before it reported done.
        let dispatched_at = bl.steps[..i]
            .iter()
            .rev()
            .filter(|o| o.plan == Some(rec))
            .find_map(|o| {
                match log
                    .events
                    .load(o.event as usize)
                    .as_deref()
                    .map(|e| &e.body)
                {
                    Some(Body::Step(x)) if x.step.as_deref() == Some(sid) => {
                        Some((o.step, x.status))
                    }
                    _ => None,
                }
            })
            .and_then(|(t, st)| (st == Some(StepStatus::Dispatched)).then_some(t));
        let snap = dispatched_at.unwrap_or(sr.step.saturating_sub(1));
        let outcome = Expr::parse(expr_text).and_then(|e| {
            let mut vals = BTreeMap::new();
            let mut shown = serde_json::Map::new();
            for n in e.names() {
                let v = match s.inputs.as_deref().and_then(|m| m.get(n)) {
                    Some(v) => Some(v.clone()),
                    None => bl
                        .history(log, n, snap)
                        .last()
                        .map(|g| g.value.cloned().unwrap_or(Value::Null)),
                };
                let Some(v) = v else {
                    return Err(arith::ArithError::Unknown(n.to_string()));
                };
                let Some(x) = arith::numeric(&v) else {
                    return Err(arith::ArithError::NotNumeric(n.to_string(), text_of(&v)));
                };
                vals.insert(n.to_string(), x);
                shown.insert(n.to_string(), v);
            }
            Ok((e.eval(&vals)?, shown))
        });
        let wv = written.value.as_deref().cloned().unwrap_or(Value::Null);
        let from = if s.inputs.is_some() {
            "the step's inputs".to_string()
        } else {
            format!("the ground beliefs at step {snap}")
        };
        let (exact, inputs) = match outcome {
            Ok(x) => x,
            Err(e) => {
                comps.insert((rec, sid.to_string()), Comp::Unchecked);
                out.push(
                    cx.finding(
                        Code::NotCheckable,
                        sr.step,
                        sr.event,
                        format!(
                            "The computation of {plan_id}/{sid} ({expr_text}) cannot be \
                             rechecked: {e}."
                        ),
                    )
                    .with("plan", plan_id)
                    .with("step", sid)
                    .with("compute", expr_text)
                    .with("cause", "computation"),
                );
                continue;
            }
        };
        let Some(ok) = arith::agrees(&wv, exact) else {
            comps.insert((rec, sid.to_string()), Comp::Unchecked);
            out.push(
                cx.finding(
                    Code::NotCheckable,
                    sr.step,
                    sr.event,
                    format!(
                        "The computation of {plan_id}/{sid} cannot be rechecked: it wrote {} = {}, \
                         which is not a number.",
                        written.name,
                        text_of(&wv)
                    ),
                )
                .with("plan", plan_id)
                .with("step", sid)
                .with("compute", expr_text)
                .with("cause", "computation"),
            );
            continue;
        };
        comps.insert(
            (rec, sid.to_string()),
            if ok { Comp::Right } else { Comp::Wrong },
        );
        if ok {
            continue;
        }
        let listed: Vec<String> = inputs
            .iter()
            .map(|(k, v)| format!("{k} = {}", text_of(v)))
            .collect();
        let exact_shown = format!("{}", (exact * 1e6).round() / 1e6);
        out.push(
            cx.finding(
                Code::IncorrectComputation,
                sr.step,
                sr.event,
                format!(
                    "Step {plan_id}/{sid} wrote {} = {}, but {expr_text} is {exact_shown} with \
                     {} (from {from}).",
                    written.name,
                    text_of(&wv),
                    if listed.is_empty() {
                        "no inputs".to_string()
                    } else {
                        listed.join(", ")
                    }
                ),
            )
            .with("plan", plan_id)
            .with("step", sid)
            .with("compute", expr_text)
            .with("inputs", Value::Object(inputs))
            .with("inputs_from", from)
            .with("output", written.name.as_str())
            .with("written", wv)
            .with("recomputed", exact),
        );
        detected.push(Detected {
            mode: Mode::IncorrectComputation,
            window: window_of(sr.step),
            plan: Some(plan_id.to_string()),
            steps: vec![sid.to_string()],
            plan_level: false,
        });
    }

    // Files each intention names and no step read; the steps that searched instead.
    let mut unread: Vec<Unread<'_>> = Vec::new();
    for w in &windows {
        let mut read: BTreeSet<&str> = BTreeSet::new();
        let mut searches: Vec<(u32, u32, String)> = Vec::new();
        // Step events are recorded in step order: a window's are one run of them, found by
        // bisection (a scan of every step per intention grew with the square of the session).
        let from = bl.steps.partition_point(|s| s.step < w.start);
        let to = from + bl.steps[from..].partition_point(|s| s.step < w.end);
        for sr in &bl.steps[from..to] {
            let loaded = log.events.load(sr.event as usize);
            let Some(Body::Step(s)) = body_of(&loaded) else {
                continue;
            };
            for c in s
                .tool_calls
                .iter()
                .filter(|c| tool_is(&c.tool, "read_file"))
            {
                for f in &w.files {
                    if c.args.as_deref().is_some_and(|a| mentions(a, f)) {
                        read.insert(f);
                    }
                }
            }
            if searched(s) && s.status != Some(StepStatus::Dispatched) {
                let name = format!(
                    "{}/{}",
                    s.plan.as_deref().unwrap_or("?"),
                    s.step.as_deref().unwrap_or("?")
                );
                if !searches.iter().any(|x| x.2 == name) {
                    searches.push((sr.step, sr.event, name));
                }
            }
        }
        let missing: Vec<&str> = w
            .files
            .iter()
            .copied()
            .filter(|f| !read.contains(f))
            .collect();
        unread.push((missing, searches));
    }

    // Answers against the expected ones.
    let mut scored: Vec<Scored> = Vec::new();
    for (k, &(step, pos)) in bl.satisfactions.iter().enumerate() {
        let Some(Body::Satisfaction(sat)) = body_in(&sats, k) else {
            continue;
        };
        let Some(expected) = sat.expected_answer.as_deref() else {
            continue;
        };
        let wi = window_of(step);
        let w = wi.map(|i| &windows[i]);
        let start = w.map_or(0, |w| w.start);
        // (text, where it came from, its event, the plan record and step that produced it)
        // The emitted answer (the paper's extraction: the last `FINAL ANSWER: v` wins), else
        // the intention's tier-1 satisfaction belief; the harness's own `answer`, when
        // recorded, is the text scored, and the emitting step stays the answer's place.
        let mut emitted: Option<Found> = None;
        for sr in bl
            .steps
            .iter()
            .filter(|s| s.step >= start && s.step <= step)
        {
            let loaded = log.events.load(sr.event as usize);
            let Some(Body::Step(s)) = body_of(&loaded) else {
                continue;
            };
            if s.status != Some(StepStatus::Done) {
                continue;
            }
            if let Some(v) = s.summary.as_deref().and_then(|t| {
                t.rfind("FINAL ANSWER:")
                    .map(|k| t[k + 13..].lines().next().unwrap_or("").trim().to_string())
            }) {
                let by = format!(
                    "{}/{}",
                    s.plan.as_deref().unwrap_or("?"),
                    s.step.as_deref().unwrap_or("?")
                );
                emitted = Some((
                    v,
                    format!("the FINAL ANSWER of step {by}"),
                    sr.step,
                    sr.event,
                    sr.plan.zip(s.step.as_deref().map(str::to_string)),
                ));
            }
        }
        if emitted.is_none()
            && let Some(name) = w.and_then(|w| w.tier1)
            && let Some(g) = bl.history(log, name, step).last()
            && let Some(v) = g.value
        {
            let producer = match log
                .events
                .load(g.event as usize)
                .as_deref()
                .map(|e| &e.body)
            {
                Some(Body::Step(s)) => bl
                    .steps
                    .iter()
                    .find(|r| r.event == g.event)
                    .and_then(|r| r.plan)
                    .zip(s.step.as_deref().map(str::to_string)),
                _ => None,
            };
            emitted = Some((
                text_of(v),
                format!("ground_belief({name})"),
                g.step,
                g.event,
                producer,
            ));
        }
        let found = match (sat.answer.as_deref(), emitted) {
            (Some(a), Some((_, from, st, ev, producer))) => Some((
                text_of(a),
                format!("recorded by the harness; emitted as {from}"),
                st,
                ev,
                producer,
            )),
            (Some(a), None) => Some((
                text_of(a),
                "recorded by the harness".to_string(),
                step,
                pos,
                None,
            )),
            (None, e) => e,
        };
        let Some((answer, from, at_step, at_event, producer)) = found else {
            continue;
        };
        let exp = text_of(expected);
        let sc = score(&answer, &exp);
        let intention = w
            .and_then(|w| w.id)
            .map_or_else(|| "the intention".to_string(), str::to_string);
        let mut entry = Scored {
            window: wi,
            sat_step: step,
            score: sc.clone(),
            determined: true,
            fetches: Vec::new(),
        };
        let producer_names = producer
            .as_ref()
            .map(|(r, s)| (bl.plans[*r as usize].id.clone(), s.clone()));
        match &sc {
            Score::Correct => {}
            Score::NearMiss(how) => {
                out.push(
                    cx.finding(
                        Code::AnswerFormatting,
                        at_step,
                        at_event,
                        format!(
                            "The answer {answer} ({from}) misses the expected {exp} only in its \
                             format: {how}."
                        ),
                    )
                    .with("intention", intention.as_str())
                    .with("answer", answer.as_str())
                    .with("answer_from", from.as_str())
                    .with("expected", exp.as_str())
                    .with("near_miss", how.as_str())
                    .with("scored_at", step),
                );
                detected.push(Detected {
                    mode: Mode::AnswerFormatting,
                    window: wi,
                    plan: producer_names.as_ref().map(|p| p.0.clone()),
                    steps: producer_names.iter().map(|p| p.1.clone()).collect(),
                    plan_level: false,
                });
            }
            Score::Wrong => {
                let files_unread = wi.is_some_and(|i| !unread[i].0.is_empty());
                // The plan whose DAG led to the answer, and its steps upstream of it.
                let (rec, upstream) = match &producer {
                    Some((r, sid)) => (
                        Some(*r),
                        plan_of(&plans, *r)
                            .map(|p| ancestors(p, sid))
                            .unwrap_or_default(),
                    ),
                    None => {
                        let r = bl
                            .plans
                            .iter()
                            .rposition(|p| p.step >= start && p.step <= step)
                            .map(|r| r as u32);
                        (
                            r,
                            r.and_then(|r| plan_of(&plans, r))
                                .map(|p| p.steps.iter().collect())
                                .unwrap_or_default(),
                        )
                    }
                };
                let status = |d: &PlanStep| {
                    rec.and_then(|r| comps.get(&(r, d.id.to_string())).copied())
                        .unwrap_or(Comp::Unchecked)
                };
                let computations: Vec<&PlanStep> = upstream
                    .iter()
                    .copied()
                    .filter(|d| is_computation(d))
                    .collect();
                let wrong_comp = computations.iter().any(|d| status(d) == Comp::Wrong);
                let unchecked: Vec<String> = computations
                    .iter()
                    .filter(|d| status(d) == Comp::Unchecked)
                    .map(|d| d.id.to_string())
                    .collect();
                let fetch_defs: Vec<&PlanStep> = upstream
                    .iter()
                    .copied()
                    .filter(|d| d.kind == Some(StepKind::Fetch))
                    .collect();
                let plan_id = rec.map(|r| bl.plans[r as usize].id.clone());
                if files_unread || wrong_comp {
                    // Explained by the finding already made for it.
                } else if unchecked.is_empty() && !fetch_defs.is_empty() {
                    let r = rec.unwrap_or(0);
                    let fetched: Vec<Value> = fetch_defs
                        .iter()
                        .map(|d| {
                            // Not pinned, and only this plan's steps decoded.
                            let last = bl
                                .steps
                                .iter()
                                .rev()
                                .filter(|o| o.plan == Some(r) && o.step <= step)
                                .filter_map(|o| log.events.load(o.event as usize))
                                .find(|e| {
                                    matches!(&e.body, Body::Step(x)
                                        if x.step.as_deref() == Some(d.id.as_str())
                                            && x.status == Some(StepStatus::Done))
                                });
                            let wrote: Vec<Value> = last
                                .as_deref()
                                .and_then(|e| match &e.body {
                                    Body::Step(x) => Some(x),
                                    _ => None,
                                })
                                .map(|x| {
                                    x.new_beliefs
                                        .iter()
                                        .map(|b| {
                                            json!({"name": b.name.as_str(), "value": b.value,
                                                   "unit": b.unit.as_deref(),
                                                   "source": b.source.as_deref()})
                                        })
                                        .collect()
                                })
                                .unwrap_or_default();
                            json!({"step": d.id.as_str(), "description": d.description.as_deref(),
                                   "wrote": wrote})
                        })
                        .collect();
                    let shown: Vec<String> = fetched
                        .iter()
                        .map(|f| {
                            let vals: Vec<String> = f["wrote"]
                                .as_array()
                                .map(|a| {
                                    a.iter()
                                        .map(|b| {
                                            format!(
                                                "{} = {}",
                                                b["name"].as_str().unwrap_or("?"),
                                                text_of(&b["value"])
                                            )
                                        })
                                        .collect()
                                })
                                .unwrap_or_default();
                            format!(
                                "{} ({})",
                                f["step"].as_str().unwrap_or("?"),
                                if vals.is_empty() {
                                    "nothing".to_string()
                                } else {
                                    vals.join(", ")
                                }
                            )
                        })
                        .collect();
                    let comp_ids: Vec<String> =
                        computations.iter().map(|d| d.id.to_string()).collect();
                    let checked = if comp_ids.is_empty() {
                        "no computation lies between them and the answer".to_string()
                    } else {
                        format!(
                            "{} {} correctly",
                            comp_ids.join(", "),
                            if comp_ids.len() == 1 {
                                "recomputes"
                            } else {
                                "recompute"
                            }
                        )
                    };
                    let steps: Vec<String> = fetch_defs.iter().map(|d| d.id.to_string()).collect();
                    entry.fetches = steps.clone();
                    out.push(
                        cx.finding(
                            Code::BadRetrieval,
                            at_step,
                            at_event,
                            format!(
                                "The answer {answer} ({from}) is wrong (expected {exp}) and {checked}, \
                                 so the error came in with what plan {} fetched: {}.",
                                plan_id.as_deref().unwrap_or("?"),
                                shown.join("; ")
                            ),
                        )
                        .severity(Severity::Error)
                        .with("intention", intention.as_str())
                        .with("answer", answer.as_str())
                        .with("answer_from", from.as_str())
                        .with("expected", exp.as_str())
                        .with("plan", plan_id.clone())
                        .with("fetched", fetched)
                        .with("computations_checked", comp_ids)
                        .with("cause", "wrong-answer")
                        .with("scored_at", step),
                    );
                    detected.push(Detected {
                        mode: Mode::BadRetrieval,
                        window: wi,
                        plan: plan_id.clone(),
                        steps,
                        plan_level: false,
                    });
                } else {
                    entry.determined = false;
                    let why = if unchecked.is_empty() {
                        "no fetch step lies upstream of it".to_string()
                    } else {
                        format!(
                            "{} of plan {} cannot be rechecked (no `compute`)",
                            unchecked.join(", "),
                            plan_id.as_deref().unwrap_or("?")
                        )
                    };
                    out.push(
                        cx.finding(
                            Code::WrongAnswer,
                            at_step,
                            at_event,
                            format!(
                                "The answer {answer} ({from}) is wrong (expected {exp}); its cause \
                                 cannot be told: {why}."
                            ),
                        )
                        .with("intention", intention.as_str())
                        .with("answer", answer.as_str())
                        .with("answer_from", from.as_str())
                        .with("expected", exp.as_str())
                        .with("plan", plan_id)
                        .with("unchecked", unchecked)
                        .with("scored_at", step),
                    );
                }
            }
        }
        scored.push(entry);
    }

    // Avoided file reads, now that the answers are scored.
    for (i, w) in windows.iter().enumerate() {
        let (missing, searches) = &unread[i];
        if missing.is_empty() {
            continue;
        }
        let wrong = scored
            .iter()
            .any(|s| s.window == Some(i) && s.score == Score::Wrong);
        let (at_step, at_event) = searches
            .first()
            .map(|x| (x.0, x.1))
            .or_else(|| {
                // In step order, as the steps: the window's first, by bisection.
                let k = bl.satisfactions.partition_point(|x| x.0 < w.start);
                bl.satisfactions.get(k).filter(|x| x.0 < w.end).copied()
            })
            .unwrap_or((w.start, w.pos));
        let names: Vec<&str> = searches.iter().map(|x| x.2.as_str()).collect();
        let instead = if names.is_empty() {
            String::new()
        } else {
            format!("; {} searched the web instead", names.join(", "))
        };
        let id = w.id.unwrap_or("the intention");
        out.push(
            cx.finding(
                Code::FileReadAvoided,
                at_step,
                at_event,
                format!(
                    "The task of {id} names {}, but no step read {} with read_file{instead}{}.",
                    missing.join(", "),
                    if missing.len() == 1 { "it" } else { "them" },
                    if wrong {
                        ", and the answer is wrong"
                    } else {
                        ""
                    }
                ),
            )
            .severity(if wrong {
                Severity::Error
            } else {
                Severity::Warning
            })
            .with("intention", id)
            .with("files", &w.files)
            .with("unread", missing)
            .with("searched_instead", &names)
            .with("answer_wrong", wrong),
        );
        detected.push(Detected {
            mode: Mode::AvoidedFileRead,
            window: Some(i),
            plan: None,
            steps: names.iter().map(|n| n.to_string()).collect(),
            plan_level: true,
        });
    }

    // The modes bdi.rs found.
    for f in &cx.modes {
        let Some(mode) = mode_of(f.code) else {
            continue;
        };
        let (steps, plan_level) = match mode {
            Mode::DagDeadlock => (Vec::new(), true),
            _ => (f.plan_step.clone().into_iter().collect(), false),
        };
        detected.push(Detected {
            mode,
            window: f.step.and_then(window_of),
            plan: f.plan.clone(),
            steps,
            plan_level,
        });
    }

    // Recorded failure modes against the detected ones.
    enum Scope<'a> {
        Step(&'a str, &'a str),
        Intention,
    }
    // Postconditions are decoded here, not pinned (a long trace has one every few dozen
    // events): the few that record a failure mode are copied out.
    let mut post_modes: Vec<(u32, u32, u32, String, String)> = Vec::new();
    for pr in &bl.postconditions {
        let loaded = log.events.load(pr.event as usize);
        if let (Some(rec), Some(Body::Postcondition(p))) = (pr.plan, body_of(&loaded))
            && let (Some(fm), Some(sid)) = (p.failure_mode.as_deref(), p.step.as_deref())
        {
            post_modes.push((pr.step, pr.event, rec, sid.to_string(), fm.to_string()));
        }
    }
    let mut recorded: Vec<(u32, u32, Scope<'_>, &str)> = post_modes
        .iter()
        .map(|(step, event, rec, sid, fm)| {
            (
                *step,
                *event,
                Scope::Step(bl.plans[*rec as usize].id.as_str(), sid.as_str()),
                fm.as_str(),
            )
        })
        .collect();
    for (k, &(step, pos)) in bl.satisfactions.iter().enumerate() {
        if let Some(Body::Satisfaction(s)) = body_in(&sats, k)
            && let Some(fm) = s.failure_mode.as_deref()
        {
            recorded.push((step, pos, Scope::Intention, fm));
        }
    }
    recorded.sort_by_key(|r| (r.0, r.1));
    let answer_in = |wi: Option<usize>| scored.iter().filter(move |s| s.window == wi);
    for (step, event, scope, label) in recorded {
        let wi = window_of(step);
        let here: BTreeSet<Mode> = detected
            .iter()
            .filter(|d| d.window == wi)
            .filter(|d| match scope {
                Scope::Intention => true,
                Scope::Step(p, s) => {
                    d.plan.is_none()
                        || d.plan.as_deref() == Some(p)
                            && (d.plan_level || d.steps.iter().any(|x| x == s))
                }
            })
            .map(|d| d.mode)
            .collect();
        let where_ = match scope {
            Scope::Step(p, s) => format!("{p}/{s}"),
            Scope::Intention => wi
                .and_then(|i| windows[i].id)
                .map_or_else(|| "the run".to_string(), |id| format!("intention {id}")),
        };
        let found: Vec<&str> = here.iter().map(|m| m.as_str()).collect();
        let found_text = if found.is_empty() {
            "nothing".to_string()
        } else {
            found.join(", ")
        };
        let Some(mode) = Mode::from_label(label) else {
            out.push(
                cx.finding(
                    Code::FailureModeRecorded,
                    step,
                    event,
                    format!(
                        "The trace records failure mode {label} for {where_}, which is not in seed \
                         004's taxonomy; doxascope detected {found_text} there."
                    ),
                )
                .with("recorded", label)
                .with("scope", where_.as_str())
                .with("detected", &found)
                .with("verdict", "not-in-taxonomy"),
            );
            continue;
        };
        let checkable = match (mode, &scope) {
            (Mode::VerificationFalsePositive, Scope::Step(p, s)) => {
                plan_def(&plans, bl, p, step, s).is_some_and(|d| post_name(d).is_some())
            }
            (Mode::VerificationFalsePositive, Scope::Intention) => true,
            (Mode::DagDeadlock, _) => true,
            (Mode::IncorrectComputation, Scope::Step(p, s)) => bl
                .plans
                .iter()
                .enumerate()
                .rev()
                .find(|(_, r)| r.id == *p && r.step <= step)
                .is_some_and(|(r, _)| comps.get(&(r as u32, s.to_string())) == Some(&Comp::Right)),
            (Mode::IncorrectComputation, Scope::Intention) => {
                let w = wi.map(|i| &windows[i]);
                let ran: Vec<Comp> = comps
                    .iter()
                    .filter(|((r, _), _)| {
                        let t = bl.plans[*r as usize].step;
                        w.is_none_or(|w| t >= w.start && t < w.end)
                    })
                    .map(|(_, c)| *c)
                    .collect();
                !ran.is_empty() && ran.iter().all(|c| *c == Comp::Right)
            }
            (Mode::BadRetrieval, Scope::Step(_, s)) => answer_in(wi).any(|a| {
                a.determined && (a.score != Score::Wrong || a.fetches.iter().any(|f| f == s))
            }),
            (Mode::BadRetrieval, Scope::Intention) => answer_in(wi).any(|a| a.determined),
            (Mode::AnswerFormatting, _) => answer_in(wi).next().is_some(),
            (Mode::AvoidedFileRead, _) => wi.is_some_and(|i| !windows[i].files.is_empty()),
        };
        let verdict = if here.contains(&mode) {
            "agree"
        } else if !here.is_empty() || checkable {
            "disagree"
        } else {
            "unchecked"
        };
        let f = if verdict == "disagree" {
            let said = if here.is_empty() {
                format!(
                    "checked and found no {}",
                    mode.words()
                        .trim_start_matches("a ")
                        .trim_start_matches("an ")
                )
            } else {
                format!("detected {found_text} instead")
            };
            cx.finding(
                Code::FailureModeMismatch,
                step,
                event,
                format!(
                    "The trace records failure mode {} for {where_}, but doxascope {said}.",
                    mode.as_str()
                ),
            )
        } else {
            let said = if verdict == "agree" {
                "doxascope detected it too".to_string()
            } else {
                format!(
                    "doxascope cannot check it with what the trace carries (it detected \
                     {found_text} there)"
                )
            };
            cx.finding(
                Code::FailureModeRecorded,
                step,
                event,
                format!(
                    "The trace records failure mode {} for {where_}; {said}.",
                    mode.as_str()
                ),
            )
        };
        out.push(
            f.with("recorded", mode.as_str())
                .with("scope", where_.as_str())
                .with("detected", &found)
                .with("verdict", verdict),
        );
    }
    // A recorded score against doxascope's.
    for (k, &(step, pos)) in bl.satisfactions.iter().enumerate() {
        let Some(Body::Satisfaction(s)) = body_in(&sats, k) else {
            continue;
        };
        let (Some(correct), Some(mine)) = (
            s.correct,
            scored.iter().find(|a| a.sat_step == step).map(|a| &a.score),
        ) else {
            continue;
        };
        let ours = *mine == Score::Correct;
        if correct != ours {
            out.push(
                cx.finding(
                    Code::FailureModeMismatch,
                    step,
                    pos,
                    format!(
                        "The trace scores the answer {}, but it {} the expected answer.",
                        if correct { "correct" } else { "wrong" },
                        if ours { "matches" } else { "does not match" }
                    ),
                )
                .with("recorded_correct", correct)
                .with("recomputed_correct", ours),
            );
        }
    }
    for f in out {
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
