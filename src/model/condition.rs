//! Seed 004's tier-2 postconditions, re-run where they are simple comparisons over ground
//! beliefs (`distance > 42`, `status == "done"`): a small language, parsed and evaluated
//! here, never a program run.
//!
//! The paper's tier 2 has an LLM translate a postcondition into a Prolog program; doxascope
//! re-runs the ones that say what they check in this language and leaves the rest
//! `not-checkable`:
//!
//! - a **comparison** `A op B` with `op` one of `==` (or `=`), `!=`, `<`, `<=`, `>`, `>=`;
//!   each side an arithmetic expression of [`crate::model::arith`] over ground-belief names
//!   and numbers (`ground_belief(x)` is read as `x`), a quoted string (`"done"`, `'done'`)
//!   or `true` / `false`. Strings and booleans compare only with `==` and `!=`, against a
//!   belief's value as written (a JSON string's text, a number's digits, a boolean);
//! - the tier-1 form `ground_belief(X) is known`;
//! - `and` (`&&`), `or` (`||`), `not` (`!` before a parenthesis), and parentheses.
//!
//! A name with no ground belief at that point makes its comparison false, as the absent
//! fact makes a Prolog query fail; a value that is not a number where a number is needed
//! (`"2:01:09" > 3`) makes the whole condition not checkable, never a verdict.

use std::collections::BTreeMap;

use serde_json::Value;

use super::arith::{self, Expr};
use super::bdi::{BdiLog, tier1_name};
use crate::trace::TraceLog;
use crate::trace::event::Body;

/// The longest condition parsed, in bytes.
pub const MAX_LEN: usize = 4096;
const MAX_DEPTH: usize = 32;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `==` or `=`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Side {
    /// An arithmetic expression (a bare name is one too).
    Num(Expr),
    /// A quoted string.
    Text(String),
    /// `true` or `false`.
    Bool(bool),
}

/// A parsed condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    /// `ground_belief(X) is known`.
    Known(String),
    /// `A op B`.
    Cmp(Side, Op, Side),
    /// Every one holds.
    And(Vec<Cond>),
    /// Some one holds.
    Or(Vec<Cond>),
    /// It does not hold.
    Not(Box<Cond>),
}

/// The outcome of a re-run: whether the condition holds, and the values it read (by name;
/// `null` for a name with no ground belief).
#[derive(Debug, Clone, PartialEq)]
pub struct Rerun {
    /// Whether it holds.
    pub holds: bool,
    /// The values read.
    pub values: BTreeMap<String, Value>,
}

impl Rerun {
    /// The values read, as `name = value` joined by commas (`distance = 41.2`).
    pub fn values_text(&self) -> String {
        self.values
            .iter()
            .map(|(k, v)| format!("{k} = {}", text_of(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "unknown".to_string(),
        v => v.to_string(),
    }
}

/// Splits `s` at top-level (outside quotes and parentheses) occurrences of any of `seps`,
/// matched as whole words when alphabetic.
fn split_top<'a>(s: &'a str, seps: &[&str]) -> Vec<&'a str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start, mut i) = (0i32, None::<u8>, 0, 0);
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' | b'\'' => quote = Some(c),
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ if depth == 0 => {
                let hit = seps.iter().find(|sep| {
                    let sb = sep.as_bytes();
                    b[i..].starts_with(sb)
                        && (!sb[0].is_ascii_alphabetic()
                            || ((i == 0 || !is_word(b[i - 1]))
                                && b.get(i + sb.len()).is_none_or(|&n| !is_word(n))))
                });
                if let Some(sep) = hit {
                    out.push(&s[start..i]);
                    i += sep.len();
                    start = i;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&s[start..]);
    out
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `s` is one parenthesized group, `( ... )`, from its first byte to its last.
fn wrapped(s: &str) -> bool {
    let b = s.as_bytes();
    if b.first() != Some(&b'(') || b.last() != Some(&b')') {
        return false;
    }
    let (mut depth, mut quote) = (0i32, None::<u8>);
    for (i, &c) in b.iter().enumerate() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            b'"' | b'\'' => quote = Some(c),
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 && i + 1 < b.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// Parses a condition; an error names what is not in the language.
pub fn parse(src: &str) -> Result<Cond, String> {
    if src.len() > MAX_LEN {
        return Err(format!("longer than {MAX_LEN} bytes"));
    }
    cond(src, 0)
}

fn cond(s: &str, depth: usize) -> Result<Cond, String> {
    if depth > MAX_DEPTH {
        return Err("nested too deeply".into());
    }
    let s = s.trim();
    let ors = split_top(s, &["||", "or"]);
    if ors.len() > 1 {
        return ors
            .iter()
            .map(|p| cond(p, depth + 1))
            .collect::<Result<_, _>>()
            .map(Cond::Or);
    }
    let ands = split_top(s, &["&&", "and"]);
    if ands.len() > 1 {
        return ands
            .iter()
            .map(|p| cond(p, depth + 1))
            .collect::<Result<_, _>>()
            .map(Cond::And);
    }
    if let Some(rest) = s.strip_prefix("not ").or_else(|| {
        s.strip_prefix('!')
            .filter(|r| r.trim_start().starts_with('('))
    }) {
        return Ok(Cond::Not(Box::new(cond(rest, depth + 1)?)));
    }
    if wrapped(s) {
        return cond(&s[1..s.len() - 1], depth + 1);
    }
    if let Some(name) = tier1_name(s) {
        return Ok(Cond::Known(name.to_string()));
    }
    comparison(s)
}

fn comparison(s: &str) -> Result<Cond, String> {
    // Longest operators first, so `<=` is not read as `<`.
    const OPS: [(&str, Op); 7] = [
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("<", Op::Lt),
        (">", Op::Gt),
        ("=", Op::Eq),
    ];
    for (text, op) in OPS {
        let parts = split_top(s, &[text]);
        if parts.len() == 2 {
            let (l, r) = (side(parts[0])?, side(parts[1])?);
            let textual = |x: &Side| !matches!(x, Side::Num(_));
            if (textual(&l) || textual(&r)) && !matches!(op, Op::Eq | Op::Ne) {
                return Err(format!("`{text}` compares numbers, not text"));
            }
            return Ok(Cond::Cmp(l, op, r));
        }
        if parts.len() > 2 {
            return Err(format!("more than one `{text}` in one comparison"));
        }
    }
    Err(format!("not a comparison: {s}"))
}

fn side(s: &str) -> Result<Side, String> {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return Ok(Side::Text(s[1..s.len() - 1].to_string()));
        }
    }
    match s {
        "true" => return Ok(Side::Bool(true)),
        "false" => return Ok(Side::Bool(false)),
        _ => {}
    }
    Expr::parse(&unwrap_ground(s))
        .map(Side::Num)
        .map_err(|e| e.to_string())
}

/// `ground_belief(x)` read as `x`, wherever it appears.
fn unwrap_ground(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("ground_belief") {
        out.push_str(&rest[..at]);
        let after = rest[at + "ground_belief".len()..].trim_start();
        match after
            .strip_prefix('(')
            .and_then(|a| a.find(')').map(|c| (a, c)))
        {
            Some((a, c)) => {
                out.push_str(a[..c].trim());
                rest = &a[c + 1..];
            }
            None => {
                out.push_str("ground_belief");
                rest = &rest[at + "ground_belief".len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The names a condition reads, in order, each once.
pub fn names(c: &Cond) -> Vec<String> {
    fn walk(c: &Cond, out: &mut Vec<String>) {
        let mut push = |n: &str| {
            if !out.iter().any(|x| x == n) {
                out.push(n.to_string());
            }
        };
        match c {
            Cond::Known(n) => push(n),
            Cond::Cmp(l, _, r) => {
                for s in [l, r] {
                    if let Side::Num(e) = s {
                        e.names().into_iter().for_each(&mut push);
                    }
                }
            }
            Cond::And(cs) | Cond::Or(cs) => cs.iter().for_each(|c| walk(c, out)),
            Cond::Not(c) => walk(c, out),
        }
    }
    let mut out = Vec::new();
    walk(c, &mut out);
    out
}

/// Evaluates a condition with `value` giving a ground belief's value by name (`None`: no
/// such belief). An error says why it cannot be checked.
pub fn eval(c: &Cond, value: &dyn Fn(&str) -> Option<Value>) -> Result<Rerun, String> {
    let mut values = BTreeMap::new();
    for n in names(c) {
        values.insert(n.clone(), value(&n).unwrap_or(Value::Null));
    }
    let holds = holds(c, &values)?;
    Ok(Rerun { holds, values })
}

/// Evaluates a condition over the ground beliefs held at step `t` of a session.
pub fn eval_at(c: &Cond, bl: &BdiLog, log: &TraceLog, t: u32) -> Result<Rerun, String> {
    eval(c, &|n| {
        if !bl.known_by(n, t) {
            return None;
        }
        bl.history(log, n, t)
            .last()
            .map(|g| g.value.cloned().unwrap_or(Value::Null))
    })
}

/// A postcondition or satisfaction condition re-run at step `t`: `None` when it is the
/// tier-1 form (checked as such elsewhere) or not in the language; else its outcome, or why
/// it cannot be checked.
pub fn recheck_at(
    program: &str,
    bl: &BdiLog,
    log: &TraceLog,
    t: u32,
) -> Option<Result<Rerun, String>> {
    if tier1_name(program).is_some() {
        return None;
    }
    let c = parse(program).ok()?;
    Some(eval_at(&c, bl, log, t))
}

/// The tier a condition is checked at by doxascope: 1 for `ground_belief(X) is known`, 2
/// for a condition in this module's language, `None` for anything else.
pub fn tier_of(program: &str) -> Option<u8> {
    if tier1_name(program).is_some() {
        Some(1)
    } else {
        parse(program).ok().map(|_| 2)
    }
}

/// Any condition doxascope can re-run (tier 1 or 2), re-run at step `t`, with its tier.
pub fn rerun_any(
    program: &str,
    bl: &BdiLog,
    log: &TraceLog,
    t: u32,
) -> Option<(u8, Result<Rerun, String>)> {
    let tier = tier_of(program)?;
    let c = parse(program).ok()?;
    Some((tier, eval_at(&c, bl, log, t)))
}

/// A recorded check of a postcondition or a satisfaction condition, beside doxascope's re-run
/// of it: what the verification pane lists with the `verify` claims.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCheck {
    /// The step of the record.
    pub step: u32,
    /// The record's event position.
    pub event: u32,
    /// `postcondition` or `satisfaction`.
    pub what: &'static str,
    /// The condition checked (the record's `program`, the plan step's `post`, or the
    /// intention's condition), if known.
    pub program: Option<String>,
    /// The tier the record names.
    pub tier: Option<u8>,
    /// The record's verdict.
    pub claimed: Option<bool>,
    /// The condition re-run at the record's step with its tier, when doxascope can.
    pub rerun: Option<(u8, Result<Rerun, String>)>,
}

impl RecordedCheck {
    /// Whether the record agrees with the re-run; `None` when either is missing.
    pub fn agrees(&self) -> Option<bool> {
        match (&self.rerun, self.claimed) {
            (Some((_, Ok(r))), Some(c)) => Some(r.holds == c),
            _ => None,
        }
    }
}

/// Every `postcondition` and `satisfaction` record of a session, in log order, each with its
/// condition re-run at its step.
pub fn recorded_checks(bl: &BdiLog, log: &TraceLog) -> Vec<RecordedCheck> {
    let mut out = Vec::new();
    for pr in &bl.postconditions {
        let Some(ev) = log.events.load(pr.event as usize) else {
            continue;
        };
        let Body::Postcondition(p) = &ev.body else {
            continue;
        };
        let post = || {
            let rec = bl.plans.get(pr.plan? as usize)?;
            let plan = log.events.load(rec.event as usize)?;
            let Body::Plan(plan) = &plan.body else {
                return None;
            };
            let def = plan
                .steps
                .iter()
                .find(|s| Some(s.id.as_str()) == p.step.as_deref())?;
            def.post.as_deref()?.as_str().map(str::to_string)
        };
        let program = p.program.as_deref().map(str::to_string).or_else(post);
        // Tier 3 is an LLM's judgment: never re-run, whatever its text looks like.
        let rerun = program
            .as_deref()
            .filter(|_| p.tier != Some(3))
            .and_then(|x| rerun_any(x, bl, log, pr.step));
        out.push(RecordedCheck {
            step: pr.step,
            event: pr.event,
            what: "postcondition",
            program,
            tier: p.tier,
            claimed: p.ok,
            rerun,
        });
    }
    for &(step, pos) in &bl.satisfactions {
        let Some(ev) = log.events.load(pos as usize) else {
            continue;
        };
        let Body::Satisfaction(sat) = &ev.body else {
            continue;
        };
        let found = satisfaction_rerun(bl, log, step, sat.intention.as_deref());
        let program = found.as_ref().map(|f| f.2.clone());
        let rerun = program.as_deref().and_then(|x| rerun_any(x, bl, log, step));
        out.push(RecordedCheck {
            step,
            event: pos,
            what: "satisfaction",
            program,
            tier: rerun.as_ref().map(|r| r.0),
            claimed: sat.ok,
            rerun,
        });
    }
    out.sort_by_key(|c| c.event);
    out
}

/// What [`satisfaction_rerun`] finds: the intention's id, its condition re-run (when it is
/// a tier-2 comparison), and the condition.
pub type SatisfactionRerun = (Option<String>, Option<Result<Rerun, String>>, String);

/// The intention a satisfaction at step `t` is about (the latest with that id, or the
/// latest at all), with its condition re-run at `t` when it is a tier-2 comparison: (its id,
/// the re-run, the condition). Read by the audit and the plan pane's satisfaction line.
pub fn satisfaction_rerun(
    bl: &BdiLog,
    log: &TraceLog,
    t: u32,
    intention: Option<&str>,
) -> Option<SatisfactionRerun> {
    let ev = bl
        .intentions
        .iter()
        .rev()
        .filter(|&&(s, _)| s <= t)
        .filter_map(|&(_, p)| log.events.load(p as usize))
        .find(|e| intention.is_none() || e.id.as_deref() == intention)?;
    let Body::Intention(i) = &ev.body else {
        return None;
    };
    let program = i.satisfaction.as_deref()?.as_str()?.to_string();
    Some((
        ev.id.as_deref().map(str::to_string),
        recheck_at(&program, bl, log, t),
        program,
    ))
}

fn holds(c: &Cond, vals: &BTreeMap<String, Value>) -> Result<bool, String> {
    Ok(match c {
        Cond::Known(n) => vals.get(n).is_some_and(|v| !v.is_null()),
        Cond::And(cs) => {
            let mut all = true;
            for c in cs {
                all &= holds(c, vals)?;
            }
            all
        }
        Cond::Or(cs) => {
            let mut any = false;
            for c in cs {
                any |= holds(c, vals)?;
            }
            any
        }
        Cond::Not(c) => !holds(c, vals)?,
        Cond::Cmp(l, op, r) => compare(l, *op, r, vals)?,
    })
}

fn compare(l: &Side, op: Op, r: &Side, vals: &BTreeMap<String, Value>) -> Result<bool, String> {
    let absent = |s: &Side| match s {
        Side::Num(e) => e
            .names()
            .iter()
            .any(|n| vals.get(*n).is_none_or(Value::is_null)),
        _ => false,
    };
    if absent(l) || absent(r) {
        return Ok(false);
    }
    let eq = match (l, r) {
        (Side::Num(a), Side::Num(b)) => {
            let (x, y) = (number(a, vals)?, number(b, vals)?);
            let close = (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0);
            return Ok(match op {
                Op::Eq => close,
                Op::Ne => !close,
                Op::Lt => x < y && !close,
                Op::Le => x < y || close,
                Op::Gt => x > y && !close,
                Op::Ge => x > y || close,
            });
        }
        (Side::Num(e), lit) | (lit, Side::Num(e)) => literal_eq(&written(e, vals)?, lit),
        (a, b) => a == b,
    };
    Ok(if op == Op::Ne { !eq } else { eq })
}

fn number(e: &Expr, vals: &BTreeMap<String, Value>) -> Result<f64, String> {
    let mut xs = BTreeMap::new();
    for n in e.names() {
        let v = vals.get(n).cloned().unwrap_or(Value::Null);
        let x =
            arith::numeric(&v).ok_or_else(|| format!("{n} = {} is not a number", text_of(&v)))?;
        xs.insert(n.to_string(), x);
    }
    e.eval(&xs).map_err(|e| e.to_string())
}

/// The value a bare name holds, for a comparison with a string or a boolean.
fn written(e: &Expr, vals: &BTreeMap<String, Value>) -> Result<Value, String> {
    match e {
        Expr::Name(n) => Ok(vals.get(n).cloned().unwrap_or(Value::Null)),
        _ => Err("only a belief's name compares with text or a boolean".into()),
    }
}

fn literal_eq(v: &Value, lit: &Side) -> bool {
    match (v, lit) {
        (Value::Bool(b), Side::Bool(c)) => b == c,
        (Value::String(s), Side::Bool(c)) => s.trim() == if *c { "true" } else { "false" },
        (v, Side::Text(t)) => text_of(v).trim() == t.trim(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(src: &str, vals: &[(&str, Value)]) -> Result<bool, String> {
        let c = parse(src)?;
        eval(&c, &|n| {
            vals.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone())
        })
        .map(|r| r.holds)
    }

    #[test]
    fn comparisons_over_ground_beliefs() {
        let v = [
            ("distance", json!(41.2)),
            ("status", json!("done")),
            ("n", json!("356,400")),
        ];
        assert_eq!(run("distance > 42", &v), Ok(false));
        assert_eq!(run("distance <= 42", &v), Ok(true));
        assert_eq!(run("ground_belief(distance) * 2 >= 82.4", &v), Ok(true));
        assert_eq!(run("status == \"done\"", &v), Ok(true));
        assert_eq!(run("status != 'done'", &v), Ok(false));
        assert_eq!(run("n = 356400 and status == \"done\"", &v), Ok(true));
        assert_eq!(run("distance > 42 or not (status == \"x\")", &v), Ok(true));
        assert_eq!(
            run("ground_belief(status) is known && missing < 3", &v),
            Ok(false)
        );
        assert_eq!(run("not missing < 3", &v), Ok(true));
    }

    #[test]
    fn what_is_not_in_the_language_is_refused() {
        assert!(parse("distance(D), D > 42.").is_err());
        assert!(parse("status < \"done\"").is_err());
        assert!(parse("a < b < c").is_err());
        assert!(parse("the answer is right").is_err());
        let v = [("t", json!("2:01:09"))];
        assert!(run("t > 3", &v).is_err());
    }
}
