//! Rationality of the agent's own revisions, on formulas and on ground (key-value) beliefs
//! (issue 29, item 3; the failed-update notion is BeliefTrack's).
//!
//! - **revision-not-minimal**, extended: a `retract` by `revision` that carries out no
//!   `revise` while Σ was consistent: no conflict forced it.
//! - **flip-flop**: a belief that returns to a value (or formula) it had left: `A → B → A`
//!   for one key or id, or φ, then ¬φ, then φ again.
//! - **stale-input**: a step's `inputs`, or a tool call's `args`, carry a ground belief's value
//!   that was overwritten or retracted before the step ran (its dispatch, when one is recorded).
//! - **stale-citation**: a `because` citing an id that was held before but no longer is.
//! - **repeated-tool-call**: the same tool called with the same arguments again with Σ
//!   unchanged in between (nothing learned); a retry of a failed call is not one.
//! - **failed-update**: an observation (source `tool:...`, `observation...`) that Σ
//!   contradicted, given up while the beliefs it contradicted are kept; or a ground belief an
//!   observation updated, set back to its old value by a source that is not an observation.

use hashbrown::{HashMap, HashSet};
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::probe::Probe;
use super::thought::{probe_at, steps};
use super::{Code, Cx, Finding};
use crate::logic::formula::{Formula, canonical_json};
use crate::logic::parse::parse;
use crate::logic::print::normalized;
use crate::model::recompute::unforced_candidate;
use crate::model::timeline::RetractedBy;
use crate::trace::brief::GroundWrite;
use crate::trace::event::{Body, Kind, StepStatus, body_of};

/// What `read` takes from a record's announcement (an `announce`, or a ground belief's
/// own). Decoded for the question only (never pinned: most records of a long trace are asked
/// about).
fn said<R>(
    cx: &Cx<'_>,
    idx: u32,
    read: impl FnOnce(&crate::trace::event::Announce) -> R,
) -> Option<R> {
    if let Some(a) = cx.tl.ground_announce(idx) {
        return Some(read(a));
    }
    let r = cx.tl.beliefs().get(idx as usize)?;
    let ev = cx.log.events.load(r.event as usize);
    match body_of(&ev) {
        Some(Body::Announce(a)) => Some(read(a)),
        _ => None,
    }
}

/// The formula text of a record: an `announce`'s formula, or a ground belief's value atom.
fn formula_of(cx: &Cx<'_>, idx: u32) -> Option<String> {
    said(cx, idx, |a| a.formula.to_string())
}

/// The source of a record.
fn source_of(cx: &Cx<'_>, idx: u32) -> Option<String> {
    said(cx, idx, |a| a.source.as_deref().map(str::to_string)).flatten()
}

/// Whether a source is an observation of the world: a tool result or an observation.
pub(super) fn is_observation(source: &str) -> bool {
    let s = source.trim().to_ascii_lowercase();
    s.starts_with("tool:") || s == "tool" || s.starts_with("observation")
}

/// `revision-not-minimal` for retractions said to be by revision that no conflict forced.
///
/// Whether Σ was consistent before each is the recomputation's answer
/// ([`RetractConsistency::before`](crate::model::recompute::RetractConsistency)); a probe
/// replays Σ only for what it could not answer (a plain recomputation, an unknown, quantified
/// beliefs held).
pub(super) fn unforced_retractions(cx: &mut Cx<'_>) {
    let mut probe: Option<Probe<'_>> = None;
    let mut found = Vec::new();
    let recorded = &cx.rc.retracts;
    let tl = cx.tl;
    for e in tl.retracts() {
        let Some(idx) = unforced_candidate(tl, e) else {
            continue;
        };
        let before = recorded
            .binary_search_by_key(&e.step, |r| r.step)
            .ok()
            .and_then(|i| recorded[i].before.as_ref());
        let consistent = match before {
            Some(Ok(c)) => *c,
            _ => {
                let Ok(p) = probe_at(&mut probe, cx, e.step - 1) else {
                    break;
                };
                p.is_consistent().unwrap_or(false)
            }
        };
        if !consistent {
            continue;
        }
        let r = &cx.tl.beliefs()[idx as usize];
        let id = r.id.to_string();
        let formula = formula_of(cx, idx).unwrap_or_default();
        found.push(
            cx.finding(
                Code::RevisionNotMinimal,
                e.step,
                e.event,
                format!(
                    "{id} ({formula}) was retracted by revision while Σ was consistent: no \
                     conflict forced it."
                ),
            )
            .ids([id])
            .formulas([formula])
            .with("unforced", true),
        );
    }
    for f in found {
        cx.push(f);
    }
}

/// φ as (the normalized formula under one negation, its polarity).
fn polarity(f: &Formula) -> (String, bool) {
    match f {
        Formula::Not(x) => (normalized(x), false),
        _ => (normalized(f), true),
    }
}

/// The first record of `seq` (texts in order) that returns to a text the sequence had left,
/// with the text it left for.
///
/// The texts of the runs before the current one are kept in a set: comparing each record
/// with every earlier run grew with the square of an id's records, on a trace writing one
/// name a new value at every step (issue 31).
fn returns(seq: &[(u32, String)]) -> Option<(u32, &str, &str)> {
    let mut left: HashSet<&str> = Default::default();
    let mut current: Option<&str> = None;
    for (i, text) in seq {
        match current {
            Some(c) if c == text => continue,
            Some(c) => {
                if left.contains(text.as_str()) {
                    return Some((*i, text, c));
                }
                left.insert(c);
            }
            None => {}
        }
        current = Some(text);
    }
    None
}

/// Whether `records[k]` returns a ground belief to its value from before an observation
/// (`failed-update`'s ground case, reported there rather than as a flip-flop).
fn is_undone_observation(cx: &Cx<'_>, records: &[u32], k: usize) -> bool {
    let back = records[k];
    k >= 2
        && source_of(cx, records[k - 1]).is_some_and(|s| is_observation(&s))
        && !source_of(cx, back).is_some_and(|s| is_observation(&s))
        && formula_of(cx, records[k - 2]) == formula_of(cx, back)
}

/// A formula base's records seen so far as polarities (φ or ¬φ), for `flip-flop`: what
/// [`returns`] finds in a sequence of two texts.
struct Swing {
    /// The polarity of the latest record.
    pos: bool,
    /// How many times the polarity changed, up to two.
    changes: u8,
    /// The record at the second change: the one that returned.
    back: Option<u32>,
}

impl Swing {
    fn new(pos: bool) -> Swing {
        Swing {
            pos,
            changes: 0,
            back: None,
        }
    }

    /// Record `i`, of polarity `pos`, follows.
    fn see(&mut self, i: u32, pos: bool) {
        if self.back.is_none() && pos != self.pos {
            self.pos = pos;
            self.changes += 1;
            if self.changes == 2 {
                self.back = Some(i);
            }
        }
    }
}

/// `flip-flop`.
pub(super) fn flip_flop(cx: &mut Cx<'_>) {
    let mut found: Vec<Finding> = Vec::new();
    let mut reported = HashSet::new();
    // Ids in ascending order, the order of their findings.
    for (id, records) in cx.ids().groups() {
        // A return needs three records (φ, something else, φ again): most ids have one, and
        // are not decoded at all.
        if records.len() < 3 {
            continue;
        }
        let seq: Vec<(u32, String)> = records
            .iter()
            .filter_map(|&i| formula_of(cx, i).map(|f| (i, f)))
            .collect();
        let Some((back, text, left)) = returns(&seq) else {
            continue;
        };
        let k = records.iter().position(|&r| r == back).unwrap_or(0);
        if is_undone_observation(cx, records, k) {
            continue;
        }
        let r = &cx.tl.beliefs()[back as usize];
        reported.insert(back);
        found.push(
            cx.finding(
                Code::FlipFlop,
                r.announced,
                r.event,
                format!("{id} went back to {text} after it had changed to {left}."),
            )
            .ids([id.to_string()])
            .formulas([text.to_string(), left.to_string()]),
        );
    }
    // Formulas under their own ids: φ, then ¬φ, then φ. A base's records are only ever φ
    // or ¬φ, so its sequence is one of polarities, and a return is its second change: a
    // few bytes a base, where keeping each record's text held a string per belief and
    // grew faster than the session (issue 31).
    let mut by_base: HashMap<String, Swing> = HashMap::new();
    for (i, r) in cx.tl.beliefs().iter().enumerate() {
        let i = i as u32;
        if cx.tl.is_ground(i) || !r.formula_ok {
            continue;
        }
        let Some(Ok(f)) = formula_of(cx, i).map(|t| parse(&t)) else {
            continue;
        };
        let (base, pos) = polarity(&f);
        by_base
            .entry(base)
            .and_modify(|swing| swing.see(i, pos))
            .or_insert_with(|| Swing::new(pos));
    }
    // The bases that returned, in ascending order (the findings' order): few, where sorting
    // every base grew faster than the session (issue 31).
    let shown = |base: &str, pos: bool| {
        if pos {
            base.to_string()
        } else {
            format!("~({base})")
        }
    };
    let mut returned: Vec<(String, u32, String, String)> = by_base
        .into_iter()
        .filter_map(|(base, swing)| {
            let back = swing.back?;
            // After two changes the polarity is the first one again.
            let (text, left) = (shown(&base, swing.pos), shown(&base, !swing.pos));
            Some((base, back, text, left))
        })
        .collect();
    returned.sort_unstable();
    for (_, back, text, left) in returned {
        if !reported.insert(back) {
            continue;
        }
        let r = &cx.tl.beliefs()[back as usize];
        found.push(
            cx.finding(
                Code::FlipFlop,
                r.announced,
                r.event,
                format!("Σ holds {text} again after it had changed to {left}."),
            )
            .ids([r.id.to_string()])
            .formulas([text, left]),
        );
    }
    for f in found {
        cx.push(f);
    }
}

/// The value atom a name holding `v` is written as.
pub(super) fn value_formula(name: &str, v: &Value) -> String {
    GroundWrite::new(name, Some(v), None, None)
        .formula
        .to_string()
}

/// Whether a record's formula holds the value atom `want` (with or without a unit).
fn holds(formula: &str, want: &str) -> bool {
    formula == want
        || formula
            .strip_prefix(want)
            .is_some_and(|r| r.starts_with(' '))
}

/// What a stale value was: the record that held it and how it left Σ.
struct Stale {
    held_then: u32,
    now: Option<String>,
}

/// A name's ground records by the value they hold, unit aside: each formula's value atom
/// printed without its unit, as a read's [`value_formula`] prints it. Built once per name
/// read, so that a read of a value the name never held is a lookup, not a walk over every
/// earlier write.
struct Values {
    /// Records (in writing order) by their value atom without the unit.
    by_value: HashMap<String, Vec<u32>>,
    /// Records whose formula is no value atom (none that a ground write prints): asked one
    /// by one.
    other: Vec<u32>,
}

impl Values {
    /// The index of `records`, the ground records of one name.
    fn of(cx: &Cx<'_>, records: &[u32]) -> Values {
        use crate::logic::formula::Atom;
        let mut v = Values {
            by_value: HashMap::new(),
            other: Vec::new(),
        };
        for &i in records {
            match &parse(formula(cx, i)) {
                Ok(Formula::Atom(Atom::Value(atom))) => {
                    let mut atom = atom.clone();
                    atom.unit = None;
                    let key = crate::logic::print::to_ascii(&Formula::Atom(Atom::Value(atom)));
                    v.by_value.entry(key).or_default().push(i);
                }
                _ => v.other.push(i),
            }
        }
        v
    }

    /// The last record before `bound` (a record index) whose formula holds `want`.
    fn last_holding(&self, cx: &Cx<'_>, want: &str, bound: u32) -> Option<u32> {
        let below = |list: &[u32]| -> Option<u32> {
            list[..list.partition_point(|&i| i < bound)]
                .iter()
                .rev()
                .copied()
                .find(|&i| holds(formula(cx, i), want))
        };
        let by_value = self.by_value.get(want).and_then(|l| below(l));
        by_value.max(below(&self.other))
    }
}

/// A ground record's formula.
fn formula<'c>(cx: &'c Cx<'_>, i: u32) -> &'c str {
    cx.tl.ground_announce(i).map_or("", |a| a.formula.as_str())
}

/// Whether `name = v` was held once before step `t` and is not at `t`.
///
/// A name's ground records are in step order and at most one is active at a step (each
/// write ends the one before): the active one, if any, is the last written by `t`. It is
/// asked first; the one that held `v` before is found in the name's [`Values`]. A scan of
/// every record written by `t`, each copied out, grew with the session squared on a trace
/// writing and reading a name at every step (issue 31: 15.9 s for 16,000 steps).
fn stale(
    cx: &Cx<'_>,
    values: &mut HashMap<String, Values>,
    name: &str,
    v: &Value,
    t: u32,
) -> Option<Stale> {
    let records = cx.tl.ground_records_of(name);
    let beliefs = cx.tl.beliefs();
    let upto = records.partition_point(|&i| beliefs[i as usize].announced <= t);
    let &last = records[..upto].last()?;
    let want = value_formula(name, v);
    // The records before `bound` were written by `t` and are not active at `t`.
    let (now, bound) = if beliefs[last as usize].active_at(t) {
        let f = formula(cx, last);
        if holds(f, &want) {
            return None;
        }
        (Some(f.to_string()), last)
    } else {
        (None, records.get(upto).copied().unwrap_or(u32::MAX))
    };
    let index = match values.get(name) {
        Some(ix) => ix,
        None => values
            .entry(name.to_string())
            .or_insert_with(|| Values::of(cx, records)),
    };
    let held_then = index.last_holding(cx, &want, bound)?;
    Some(Stale { held_then, now })
}

/// `stale-input`.
pub(super) fn stale_input(cx: &mut Cx<'_>) {
    if !cx.tl.has_ground_records() {
        return;
    }
    let mut dispatched: HashMap<(String, String), u32> = HashMap::new();
    let mut values: HashMap<String, Values> = HashMap::new();
    let mut found = Vec::new();
    for (step, pos) in steps(cx, &[Kind::Step]) {
        let ev = cx.log.events.load(pos as usize);
        let Some(Body::Step(s)) = body_of(&ev) else {
            continue;
        };
        let key = (
            s.plan.as_deref().unwrap_or("").to_string(),
            s.step.as_deref().unwrap_or("").to_string(),
        );
        // A step runs from its dispatch: what it read was read then.
        let ran = match s.status {
            Some(StepStatus::Dispatched) | None => *dispatched.entry(key.clone()).or_insert(step),
            _ => dispatched.get(&key).copied().unwrap_or(step),
        };
        let before = ran.saturating_sub(1);
        let mut uses: Vec<(String, String, Value)> = Vec::new();
        if let Some(inputs) = &s.inputs {
            for (k, v) in inputs.iter() {
                uses.push(("input".to_string(), k.clone(), v.clone()));
            }
        }
        for c in &s.tool_calls {
            if let Some(Value::Object(args)) = c.args.as_deref() {
                for (k, v) in args {
                    uses.push((format!("argument of {}", c.tool), k.clone(), v.clone()));
                }
            }
        }
        for (what, name, v) in uses {
            let Some(st) = stale(cx, &mut values, &name, &v, before) else {
                continue;
            };
            let gone = cx.tl.beliefs()[st.held_then as usize].retraction;
            let value = canonical_json(&v);
            let now = st.now.clone().unwrap_or_else(|| "nothing".to_string());
            found.push(
                cx.finding(
                    Code::StaleInput,
                    step,
                    pos,
                    format!(
                        "Step {} ran on {name} = {value} ({what}), but that value was {} at \
                         step {} before it ran; {name} held {now} then.",
                        key.1,
                        if st.now.is_some() {
                            "overwritten"
                        } else {
                            "retracted"
                        },
                        gone.map_or(0, |g| g.step)
                    ),
                )
                .ids([name.clone()])
                .with("name", name.as_str())
                .with("used", value.as_str())
                .with("held", st.now.as_deref())
                .with("left_at", gone.map(|g| g.step))
                .with("ran_at", ran)
                .with("plan", key.0.as_str())
                .with("step", key.1.as_str()),
            );
        }
    }
    for f in found {
        cx.push(f);
    }
}

/// `stale-citation`.
pub(super) fn stale_citation(cx: &mut Cx<'_>) {
    let ids = cx.ids();
    let beliefs = cx.tl.beliefs();
    let mut found = Vec::new();
    for citing in cx.citations() {
        for c in citing.cited.iter().filter(|c| !c.held && !c.own) {
            let Some(gone) = ids
                .announced_by(&c.id, citing.step - 1)
                .iter()
                .filter_map(|&i| beliefs[i as usize].retraction)
                .next_back()
            else {
                continue;
            };
            let c = c.id.as_str();
            found.push(
                cx.finding(
                    Code::StaleCitation,
                    citing.step,
                    citing.event,
                    format!(
                        "This event cites {c}, which left Σ at step {} ({}) and is no longer held.",
                        gone.step,
                        gone.by.as_str()
                    ),
                )
                .ids([c.to_string()])
                .with("cited", c)
                .with("left_at", gone.step)
                .with("by", gone.by.as_str()),
            );
        }
    }
    // The other reader of the citations (`unsupported-thought-premise`) runs first.
    cx.done_with_citations();
    for f in found {
        cx.push(f);
    }
}

/// One tool call: where it is, and whether it failed.
struct Call {
    step: u32,
    event: u32,
    failed: bool,
}

/// The steps at which Σ changed (a record entered or left), sorted. Writing a belief again
/// with the value it holds ends its record and starts another at the same step: no change.
fn changes(cx: &Cx<'_>) -> Vec<u32> {
    let beliefs = cx.tl.beliefs();
    let mut v = Vec::new();
    let mut rewritten: HashSet<(&str, u32)> = Default::default();
    for r in beliefs {
        match r.retraction {
            Some(x) if x.by == RetractedBy::Reannounced => {
                rewritten.insert((r.id.as_str(), x.step));
            }
            Some(x) => v.push(x.step),
            None => {}
        }
    }
    v.extend(
        beliefs
            .iter()
            .filter(|r| !rewritten.contains(&(r.id.as_str(), r.announced)))
            .map(|r| r.announced),
    );
    v.sort_unstable();
    v.dedup();
    v
}

/// Whether Σ changed strictly between steps `a` and `b`.
fn changed_between(changes: &[u32], a: u32, b: u32) -> bool {
    let i = changes.partition_point(|&s| s <= a);
    changes.get(i).is_some_and(|&s| s < b)
}

/// `repeated-tool-call`.
pub(super) fn repeated_tool_call(cx: &mut Cx<'_>) {
    let mut calls: BTreeMap<(String, String), Vec<Call>> = BTreeMap::new();
    for (step, pos) in steps(cx, &[Kind::Step]) {
        let ev = cx.log.events.load(pos as usize);
        let Some(Body::Step(s)) = body_of(&ev) else {
            continue;
        };
        for c in &s.tool_calls {
            let args = c.args.as_deref().map_or("null".to_string(), canonical_json);
            calls
                .entry((c.tool.to_string(), args))
                .or_default()
                .push(Call {
                    step,
                    event: pos,
                    failed: c.error.is_some(),
                });
        }
    }
    let changes = changes(cx);
    let mut found = Vec::new();
    for ((tool, args), list) in &calls {
        // Chains of calls, each with nothing learned since the one before.
        let mut chain: Vec<&Call> = Vec::new();
        let flush = |chain: &mut Vec<&Call>, found: &mut Vec<Finding>| {
            if chain.len() >= 2 {
                let at = chain[1];
                let steps: Vec<u32> = chain.iter().map(|c| c.step).collect();
                found.push(
                    cx.finding(
                        Code::RepeatedToolCall,
                        at.step,
                        at.event,
                        format!(
                            "{tool} was called {} times with the same arguments {args} and \
                             nothing learned in between (steps {steps:?}).",
                            chain.len()
                        ),
                    )
                    .with("tool", tool.as_str())
                    .with("args", args.as_str())
                    .with("steps", json!(steps)),
                );
            }
            chain.clear();
        };
        for c in list {
            let linked = chain
                .last()
                .is_some_and(|p| !p.failed && !changed_between(&changes, p.step, c.step));
            if !linked {
                flush(&mut chain, &mut found);
            }
            chain.push(c);
        }
        flush(&mut chain, &mut found);
    }
    for f in found {
        cx.push(f);
    }
}

/// `failed-update`.
pub(super) fn failed_update(cx: &mut Cx<'_>) {
    let mut found = Vec::new();
    // Formulas: an observation that made Σ inconsistent, dropped while what it contradicted
    // stays (the recomputation's minimal conflict after the observation says what that was).
    // Borrowed: a copy of every record cost a 10M session 75 MB of fresh pages (issue 31).
    let tl = cx.tl;
    let beliefs = tl.beliefs();
    for a in &cx.rc.announces {
        let (Ok(res), Some(i)) = (&a.result, a.record) else {
            continue;
        };
        if !res.consistent_before || res.consistent_after || res.conflict.is_empty() {
            continue;
        }
        let r = &beliefs[i as usize];
        if !source_of(cx, i).is_some_and(|s| is_observation(&s)) {
            continue;
        }
        let Some(x) = r.retraction else { continue };
        if matches!(x.by, RetractedBy::Reannounced | RetractedBy::User) {
            continue;
        }
        let conflict: Vec<String> = res
            .conflict
            .iter()
            .filter(|c| **c != *r.id)
            .cloned()
            .collect();
        let kept = !conflict.is_empty()
            && conflict
                .iter()
                .all(|c| cx.ids().active(c, x.step).is_some());
        if !kept {
            continue;
        }
        let text = formula_of(cx, i).unwrap_or_default();
        found.push(
            cx.finding(
                Code::FailedUpdate,
                x.step,
                x.event,
                format!(
                    "The observation {} ({text}) contradicted {} and was given up, while \
                     the beliefs it contradicted are kept.",
                    r.id,
                    conflict.join(", ")
                ),
            )
            .ids(std::iter::once(r.id.to_string()).chain(conflict.iter().cloned()))
            .formulas([text])
            .with("observation", r.id.as_str())
            .with("kept", &conflict),
        );
    }
    // Ground beliefs: an observed value set back to the value from before it.
    for (name, all) in cx.ids().groups() {
        // Undoing an observation takes three records of the name.
        if all.len() < 3 {
            continue;
        }
        let records: Vec<u32> = all
            .iter()
            .copied()
            .filter(|&i| cx.tl.is_ground(i))
            .collect();
        for (k, &back) in records.iter().enumerate().skip(2) {
            if !is_undone_observation(cx, &records, k) {
                continue;
            }
            let r = &beliefs[back as usize];
            let observed = formula_of(cx, records[k - 1]).unwrap_or_default();
            let old = formula_of(cx, back).unwrap_or_default();
            found.push(
                cx.finding(
                    Code::FailedUpdate,
                    r.announced,
                    r.event,
                    format!(
                        "{name} was observed as {observed} ({}), then set back to {old} by a \
                         source that is not an observation.",
                        source_of(cx, records[k - 1]).unwrap_or_default()
                    ),
                )
                .ids([name.to_string()])
                .formulas([observed.clone(), old])
                .with("observation", observed),
            );
            break;
        }
    }
    for f in found {
        cx.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::{Swing, returns};

    /// The first return as a scan of every earlier run finds it.
    fn returns_by_scan(seq: &[(u32, String)]) -> Option<(u32, &str, &str)> {
        let mut runs: Vec<&(u32, String)> = Vec::new();
        for x in seq {
            if runs.last().is_some_and(|l| l.1 == x.1) {
                continue;
            }
            if runs.len() >= 2 && runs[..runs.len() - 1].iter().any(|r| r.1 == x.1) {
                return Some((x.0, x.1.as_str(), runs[runs.len() - 1].1.as_str()));
            }
            runs.push(x);
        }
        None
    }

    /// 2,000 pseudo-random seeds (xorshift) from `seed`.
    fn seeds(mut seed: u64) -> impl Iterator<Item = u64> {
        (0..2000).map(move |_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        })
    }

    #[test]
    fn returns_agrees_with_a_scan_of_every_run() {
        for seed in seeds(0x853c_49e6_748f_ea9b) {
            let (len, texts) = (seed % 9, seed / 9 % 4 + 1);
            let seq: Vec<(u32, String)> = (0..len as u32)
                .map(|i| (i, ((seed >> (8 + 2 * i)) % texts).to_string()))
                .collect();
            assert_eq!(returns(&seq), returns_by_scan(&seq), "{seq:?}");
        }
    }

    /// A base's polarities tracked one at a time find the return a scan of the runs finds,
    /// with the text it returned to and the one it left.
    #[test]
    fn a_swing_finds_the_return_a_scan_finds() {
        for seed in seeds(0x2545_f491_4f6c_dd1d) {
            let len = seed % 10;
            let pos: Vec<bool> = (0..len).map(|i| (seed >> (8 + i)) & 1 == 1).collect();
            let text = |p: bool| if p { "p" } else { "~(p)" }.to_string();
            let seq: Vec<(u32, String)> = (0..len as u32)
                .map(|i| (i, text(pos[i as usize])))
                .collect();
            let want = returns_by_scan(&seq).map(|(i, t, l)| (i, t.to_string(), l.to_string()));
            let mut swing: Option<Swing> = None;
            for (i, &p) in pos.iter().enumerate() {
                match swing.as_mut() {
                    Some(s) => s.see(i as u32, p),
                    None => swing = Some(Swing::new(p)),
                }
            }
            let got = swing.and_then(|s| Some((s.back?, text(s.pos), text(!s.pos))));
            assert_eq!(got, want, "{pos:?}");
        }
    }
}
