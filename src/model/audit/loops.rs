//! `repeated-query` and `oscillation`: an agent going round in circles (seed 001 §6.3, §7.3).
//!
//! Both compare *states* of Σ, identified by a fingerprint: the wrapping sum of a 64-bit
//! hash of each active belief's normalized formula (its id when the formula does not parse).
//! A sum is order-independent and updates in O(1) as beliefs enter and leave, so the walk is
//! one pass over the timeline's belief records; ids do not matter, so re-announcing the same
//! formula under a new id is the same state.
//!
//! - **repeated-query**: the same query (normalized formula) asked again while Σ is in the
//!   same state as when it was first asked: the answer cannot have changed (the seed's agent
//!   "got into loops like repeatedly querying the same thing"). One finding per group, at the
//!   first repetition, listing every step of the group.
//! - **oscillation**: Σ's sequence of states goes A … B … A … B: the agent keeps switching
//!   between two belief states (seed 001 §7.3, "oscillating between two approaches"). Reported
//!   once per pair of states, at the step that completes the pattern, with the beliefs that
//!   differ between the two states.

use crate::trace::event::body_of;
use hashbrown::HashMap;
use std::collections::BTreeSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::json;

use super::{Code, Cx, Finding};
use crate::logic::parse::parse;
use crate::logic::print::normalized;
use crate::trace::event::Body;

fn hash(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// The identity of a belief's content: its normalized formula, or its id.
fn content(cx: &Cx<'_>, record: u32) -> String {
    // Decoded for this question only: a pinned view of every belief that ever entered Σ
    // would keep most of a long trace decoded.
    cx.tl
        .beliefs()
        .get(record as usize)
        .and_then(|r| cx.log.events.load(r.event as usize))
        .and_then(|e| match &e.body {
            Body::Announce(a) => parse(&a.formula).ok().map(|f| normalized(&f)),
            _ => None,
        })
        .unwrap_or_else(|| {
            cx.tl
                .beliefs()
                .get(record as usize)
                .map(|r| format!("id:{}", r.id))
                .unwrap_or_default()
        })
}

pub(super) fn check(cx: &mut Cx<'_>) {
    let tl = cx.tl;
    // Σ changes by step: (step, record, entering?).
    let mut changes: Vec<(u32, u32, bool)> = Vec::new();
    for (i, r) in tl.beliefs().iter().enumerate() {
        changes.push((r.announced, i as u32, true));
        if let Some(x) = r.retraction {
            changes.push((x.step, i as u32, false));
        }
    }
    changes.sort_unstable();
    let queries = tl.queries();
    if changes.is_empty() && queries.len() < 2 {
        return;
    }
    let hashes: Vec<u64> = (0..tl.beliefs().len() as u32)
        .map(|i| hash(&content(cx, i)))
        .collect();

    let mut out: Vec<Finding> = Vec::new();
    let mut fp: u64 = 0;
    let mut ci = 0;
    // States visited, consecutive duplicates removed: (fingerprint, step entered).
    let mut states: Vec<(u64, u32)> = vec![(0, 0)];
    let mut last_seen: HashMap<u64, usize> = HashMap::new();
    last_seen.insert(0, 0);
    // Returns to an earlier state: (index now, index before, fingerprint).
    let mut returns: Vec<(usize, usize, u64)> = Vec::new();
    let mut reported_pairs: BTreeSet<(u64, u64)> = BTreeSet::new();
    // Queries: (normalized formula, Σ fingerprint) -> index into `out`, steps.
    let mut asked: HashMap<(String, u64), (u32, Option<usize>)> = HashMap::new();

    let mut qi = 0;
    let last_step = tl.len();
    let mut step_marks: Vec<u32> = changes.iter().map(|c| c.0).collect();
    step_marks.extend(queries.iter().map(|q| q.0));
    step_marks.sort_unstable();
    step_marks.dedup();
    for &step in &step_marks {
        while let Some(&(s, r, enter)) = changes.get(ci) {
            if s > step {
                break;
            }
            ci += 1;
            let h = hashes[r as usize];
            fp = if enter {
                fp.wrapping_add(h)
            } else {
                fp.wrapping_sub(h)
            };
        }
        if states.last().is_some_and(|&(f, _)| f != fp) {
            let now = states.len();
            states.push((fp, step));
            if let Some(&before) = last_seen.get(&fp) {
                oscillation(
                    cx,
                    &states,
                    &returns,
                    now,
                    before,
                    &mut reported_pairs,
                    &mut out,
                );
                returns.push((now, before, fp));
            }
            last_seen.insert(fp, now);
        }
        while let Some(&(qs, pos)) = queries.get(qi) {
            if qs > step {
                break;
            }
            qi += 1;
            let loaded = cx.log.events.load(pos as usize);
            let Some(Body::Query(q)) = body_of(&loaded) else {
                continue;
            };
            let key = parse(&q.formula)
                .map(|f| normalized(&f))
                .unwrap_or_else(|_| q.formula.trim().to_string());
            match asked.get_mut(&(key.clone(), fp)) {
                None => {
                    asked.insert((key, fp), (qs, None));
                }
                Some((first, slot)) => match slot {
                    Some(ix) => {
                        if let Some(f) = out.get_mut(*ix)
                            && let Some(serde_json::Value::Array(steps)) =
                                f.evidence.get_mut("steps")
                        {
                            steps.push(json!(qs));
                        }
                    }
                    None => {
                        *slot = Some(out.len());
                        let f = cx
                            .finding(
                                Code::RepeatedQuery,
                                qs,
                                pos,
                                format!(
                                    "The query {} was asked again with Σ unchanged since step {}, \
                                     so its answer cannot have changed.",
                                    q.formula, first
                                ),
                            )
                            .formulas([q.formula.clone()])
                            .with("first_step", *first)
                            .with("steps", json!([*first, qs]));
                        out.push(f);
                    }
                },
            }
        }
    }
    let _ = last_step;
    for f in out {
        cx.push(f);
    }
}

/// Checks whether returning to state `now` (last seen at `before`) completes A … B … A … B.
fn oscillation(
    cx: &Cx<'_>,
    states: &[(u64, u32)],
    returns: &[(usize, usize, u64)],
    now: usize,
    before: usize,
    reported: &mut BTreeSet<(u64, u64)>,
    out: &mut Vec<Finding>,
) {
    let b = states[now].0;
    // A return to some A ≠ B that happened between B's two visits, whose A had been visited
    // before B's first one.
    for &(i, j, a) in returns.iter().rev() {
        if i <= before {
            break;
        }
        if a == b || j >= before {
            continue;
        }
        let pair = (a.min(b), a.max(b));
        if !reported.insert(pair) {
            return;
        }
        let step = states[now].1;
        let sa = states[i].1;
        let (only_a, only_b) = difference(cx, sa, step);
        let steps: Vec<u32> = [j, before, i, now].iter().map(|&k| states[k].1).collect();
        let pos = cx.tl.event_pos_at(step).unwrap_or(0);
        let mut ids: Vec<String> = only_a.iter().map(|(id, _)| id.clone()).collect();
        ids.extend(only_b.iter().map(|(id, _)| id.clone()));
        let describe = |xs: &[(String, String)]| {
            if xs.is_empty() {
                "nothing".to_string()
            } else {
                xs.iter()
                    .map(|(id, f)| format!("{id} ({f})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        out.push(
            cx.finding(
                Code::Oscillation,
                step,
                pos,
                format!(
                    "Σ oscillates between two states (at steps {}): one holds {}, the other {}.",
                    steps
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    describe(&only_a),
                    describe(&only_b)
                ),
            )
            .ids(ids)
            .with("steps", json!(steps))
            .with(
                "state_a",
                json!(only_a.iter().map(|(i, _)| i).collect::<Vec<_>>()),
            )
            .with(
                "state_b",
                json!(only_b.iter().map(|(i, _)| i).collect::<Vec<_>>()),
            ),
        );
        return;
    }
}

/// Beliefs (id, formula) in Σ at step `a` and not at `b`, and the reverse, by content.
type Diff = (Vec<(String, String)>, Vec<(String, String)>);

fn difference(cx: &Cx<'_>, a: u32, b: u32) -> Diff {
    let at = |t: u32| -> Vec<(String, String, String)> {
        cx.tl
            .sigma_at(cx.log, t)
            .into_iter()
            .map(|v| {
                (
                    content(cx, v.index),
                    v.id().to_string(),
                    v.formula_text().to_string(),
                )
            })
            .collect()
    };
    let (sa, sb) = (at(a), at(b));
    let ka: BTreeSet<&String> = sa.iter().map(|x| &x.0).collect();
    let kb: BTreeSet<&String> = sb.iter().map(|x| &x.0).collect();
    let only = |xs: &[(String, String, String)], other: &BTreeSet<&String>| {
        xs.iter()
            .filter(|x| !other.contains(&x.0))
            .map(|x| (x.1.clone(), x.2.clone()))
            .collect::<Vec<_>>()
    };
    (only(&sa, &kb), only(&sb, &ka))
}
