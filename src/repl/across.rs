//! The questions across time that read a session's whole timeline rather than Σ at one step:
//! `history` (here), with the building blocks `diff` and `whatif` share: naming an event and
//! showing a belief record as a [`Member`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::logic::engine::{BeliefState, Entails};

use crate::logic::formula::Formula;
use crate::logic::revise::Policy;
use crate::model::history::{Change, HistoryIndex, Status};
use crate::model::recompute::RecomputeOptions;
use crate::model::whatif::{run_policy, whatif_within};
use crate::model::{BeliefView, Model, Timeline};

use super::layer::Held;
use super::model_sigma::engine_role;
use super::reply::{
    Changed, DecisionLine, DiffItem, EventRef, GroundChange, HistoryCostView, HistoryLine,
    KeyLifeView, KeyWriteLine, LeftInfo, RevisionLine, VerdictLine,
};
use super::{FormulaArg, Member, Repl, ReplError, Reply, member_of, parse_arg, state_of};

/// The event at log position `pos`, which takes effect at `step`, as results name it.
pub(crate) fn event_ref(model: &Model, step: u32, pos: u32) -> Option<EventRef> {
    let ev = model.event(pos)?;
    let id = match &ev.body {
        crate::trace::event::Body::Announce(_) => ev.id.as_ref().map(|s| s.to_string()),
        crate::trace::event::Body::Retract(r) => Some(r.target.to_string()),
        _ => None,
    };
    Some(EventRef {
        step: u64::from(step),
        kind: ev.kind_name().to_string(),
        id,
        file: ev.origin.file.to_string(),
        // An imported event's line in its source file, when the source has lines.
        line: crate::trace::provenance::source_place(ev)
            .and_then(|p| p.line)
            .unwrap_or(ev.origin.line),
    })
}

/// A belief record of the trace as a [`Member`].
pub(crate) fn member_of_view(v: &BeliefView<'_>) -> Member {
    Member {
        id: v.id().to_string(),
        formula: v
            .formula()
            .map(|f| f.to_string())
            .unwrap_or_else(|_| v.formula_text().to_string()),
        step: u64::from(v.step()),
        source: v.source().unwrap_or("").to_string(),
        role: engine_role(v.role()),
        confidence: v.confidence(),
        hand: false,
    }
}

/// The model and session a question across time needs, or why there are none.
pub(crate) fn model_of(r: &Repl, command: &str) -> Result<(Arc<Model>, String), ReplError> {
    r.trace
        .model()
        .map(|(m, s)| (Arc::clone(m), s.to_string()))
        .ok_or_else(|| {
            ReplError::new(
                command,
                "this question reads the trace's timeline: start the REPL on a trace file",
            )
        })
}

/// The options of the REPL's solver walks: the recomputation's budgets with the REPL's
/// timeout, no audit questions.
pub(crate) fn walk_options(r: &Repl) -> RecomputeOptions {
    RecomputeOptions {
        audit: None,
        timeout: r.walk_timeout,
        ..RecomputeOptions::default()
    }
}

/// The formula a `history` argument means: a belief id of the session (the formula of its
/// record in force at `step`, else its last one before, else its first), or a formula.
fn resolve(
    tl: &Timeline,
    model: &Model,
    step: u32,
    command: &str,
    arg: &FormulaArg,
) -> Result<(Formula, Option<String>), ReplError> {
    let text = arg.text.trim();
    let recs: Vec<u32> = tl.records_of(text).map(|(i, _)| i).collect();
    let pick = recs
        .iter()
        .rev()
        .find(|&&i| tl.beliefs()[i as usize].active_at(step))
        .or_else(|| {
            recs.iter()
                .rev()
                .find(|&&i| tl.beliefs()[i as usize].announced <= step)
        })
        .or(recs.first());
    if let Some(&i) = pick
        && let Some(f) = tl.belief(model.log(), i).and_then(|v| v.formula().ok())
    {
        return Ok((f, Some(text.to_string())));
    }
    if !recs.is_empty() {
        return Err(ReplError::new(
            command,
            format!(
                "belief {} has no formula that parses",
                crate::sanitize::sanitize(text)
            ),
        ));
    }
    // Not an id: a formula (its errors point into the command line).
    Ok((parse_arg(command, arg)?, None))
}

fn status_reason(s: &Status) -> Option<String> {
    match s {
        Status::NotCheckable(u) => Some(u.to_string()),
        _ => None,
    }
}

/// `history φ|ID`.
pub(crate) fn history(r: &mut Repl, command: &str, arg: &FormulaArg) -> Result<Reply, ReplError> {
    let (model, session) = model_of(r, command)?;
    let tl = model
        .timeline(&session)
        .ok_or_else(|| ReplError::new(command, "the session has no events"))?;
    let step = u32::try_from(r.step).unwrap_or(u32::MAX);
    let (phi, id) = resolve(tl, &model, step, command, arg)?;
    let opts = walk_options(r);
    let reused = r.history_index.as_ref().is_some_and(|ix| ix.is_current(tl));
    if !reused {
        r.history_index = Some(Arc::new(HistoryIndex::build(tl, model.log(), &opts)));
    }
    let ix = r
        .history_index
        .clone()
        .ok_or_else(|| ReplError::new(command, "the history index could not be built"))?;
    let h = ix.history(tl, model.log(), &phi, id.as_deref(), &opts);
    let log = model.log();
    let rows = h
        .rows
        .iter()
        .map(|row| {
            let mut belief = None;
            let mut by = None;
            for c in &row.changes {
                match *c {
                    Change::Announced(rec) => {
                        belief = Some(tl.beliefs()[rec as usize].id.to_string());
                    }
                    Change::Retracted(rec, b) => {
                        belief = Some(tl.beliefs()[rec as usize].id.to_string());
                        by = Some(b.as_str());
                    }
                    _ => {}
                }
            }
            let support = row.support.as_ref().map(|s| match s {
                Ok(recs) => Ok(recs
                    .iter()
                    .filter_map(|&i| tl.belief(log, i))
                    .map(|v| member_of_view(&v))
                    .collect()),
                Err(e) => Err(e.to_string()),
            });
            HistoryLine {
                step: u64::from(row.step),
                event: row.event.and_then(|p| event_ref(&model, row.step, p)),
                changes: row.changes.iter().map(Change::as_str).collect(),
                status: row.status.as_str(),
                previous: row.previous.as_str(),
                reason: status_reason(&row.status),
                belief,
                by,
                support,
            }
        })
        .collect();
    let ic = ix.cost();
    let key = id
        .as_deref()
        .and_then(|k| crate::model::keylife::key_life(tl, log, k, step, None).map(|l| (k, l)))
        .map(|(k, life)| KeyLifeView {
            key: k.to_string(),
            writes: life
                .writes
                .into_iter()
                .map(|w| KeyWriteLine {
                    step: u64::from(w.step),
                    formula: w.formula,
                    source: w.source,
                    writer: w.writer,
                    ended: w.ended.map(|x| (u64::from(x.step), x.by.as_str())),
                })
                .collect(),
            reads: life
                .reads
                .into_iter()
                .map(|r| (u64::from(r.step), r.by))
                .collect(),
        });
    Ok(Reply::History {
        formula: h.formula.clone(),
        id,
        session,
        initial: h.initial.as_str(),
        rows,
        cost: HistoryCostView {
            points: ic.points,
            index_solves: ic.solves,
            index_ms: ic.elapsed.as_secs_f64() * 1e3,
            index_reused: reused,
            ms: h.cost.elapsed.as_secs_f64() * 1e3,
            relevant: h.cost.relevant,
            checks: h.cost.checks,
            supports: h.cost.supports,
            pruned: h.pruned,
        },
        hand: r.layer.len(),
        key,
    })
}

/// Whether `state` entails `f`: `None` when Σ is inconsistent (it entails everything) or the
/// question is not checkable.
fn entailed_by(state: Option<&mut BeliefState>, f: &Formula) -> Option<bool> {
    let e = state?.entails(f).ok()?;
    e.sigma_consistent.then_some(e.result == Entails::Entailed)
}

/// `diff A B`: Σ at A against Σ at B, both as the REPL holds them (the trace's, with the
/// hand-issued layer's effects).
pub(crate) fn diff(r: &mut Repl, command: &str, a: u64, b: u64) -> Result<Reply, ReplError> {
    // Ground beliefs (memory) by name: listed on their own with their values below, so
    // their records of Σ are left out of Σ's part.
    let ga: BTreeMap<String, String> = r.trace.ground_at(a).into_iter().collect();
    let gb: BTreeMap<String, String> = r.trace.ground_at(b).into_iter().collect();
    let ground_id =
        |h: &Held| !h.hand && (ga.contains_key(&h.belief.id) || gb.contains_key(&h.belief.id));
    let mut at_a = r.sigma_held(a);
    let mut at_b = r.sigma_held(b);
    at_a.retain(|h| !ground_id(h));
    at_b.retain(|h| !ground_id(h));
    let by_id = |hs: &[Held]| -> HashMap<String, usize> {
        hs.iter()
            .enumerate()
            .map(|(i, h)| (h.belief.id.clone(), i))
            .collect()
    };
    let (ia, ib) = (by_id(&at_a), by_id(&at_b));
    let same = |x: &Held, y: &Held| {
        x.belief.formula == y.belief.formula
            && x.belief.role == y.belief.role
            && x.belief.step == y.belief.step
            && x.hand == y.hand
    };
    // Engines for both ends, to tell what still follows (each question budgeted).
    let mut sa = state_of(&at_a).ok().map(|s| s.0);
    let mut sb = state_of(&at_b).ok().map(|s| s.0);
    let consistent = |s: Option<&mut BeliefState>| -> Result<bool, String> {
        match s {
            Some(s) => s
                .consistent()
                .map(|c| c.consistent)
                .map_err(|e| e.to_string()),
            None => Err("the belief state could not be built".into()),
        }
    };
    let cons = [consistent(sa.as_mut()), consistent(sb.as_mut())];
    let model = r.trace.model().map(|(m, s)| (Arc::clone(m), s.to_string()));
    let tl = model
        .as_ref()
        .and_then(|(m, s)| m.timeline(s).map(|t| (m, t)));
    let mut added = Vec::new();
    let mut changed = Vec::new();
    for h in &at_b {
        match ia.get(&h.belief.id) {
            None => added.push(DiffItem {
                member: member_of(&h.belief, h.hand),
                entailed: entailed_by(sa.as_mut(), &h.belief.formula),
                left: None,
            }),
            Some(&i) if !same(&at_a[i], h) => changed.push(Changed {
                before: member_of(&at_a[i].belief, at_a[i].hand),
                after: member_of(&h.belief, h.hand),
            }),
            Some(_) => {}
        }
    }
    let mut removed = Vec::new();
    for h in &at_a {
        if ib.contains_key(&h.belief.id) {
            continue;
        }
        // How it left: the trace's record ended between the steps, or the layer took it.
        let left = if a < b {
            match (&tl, h.hand) {
                (Some((m, t)), false) => u32::try_from(a)
                    .ok()
                    .and_then(|sa| t.active_record(&h.belief.id, sa))
                    .and_then(|rec| t.beliefs()[rec as usize].retraction)
                    .filter(|x| u64::from(x.step) <= b)
                    .map(|x| {
                        let reason = match m.event(x.event).map(|e| &e.body) {
                            Some(crate::trace::event::Body::Retract(rt)) => {
                                rt.reason.as_ref().map(|s| s.to_string())
                            }
                            _ => None,
                        };
                        LeftInfo {
                            step: u64::from(x.step),
                            by: x.by.as_str().to_string(),
                            reason,
                            event: event_ref(m, x.step, x.event),
                        }
                    }),
                _ => None,
            }
            .or_else(|| {
                (!r.layer.is_empty()).then(|| LeftInfo {
                    step: b,
                    by: "hand".to_string(),
                    reason: None,
                    event: None,
                })
            })
        } else {
            None
        };
        removed.push(DiffItem {
            member: member_of(&h.belief, h.hand),
            entailed: entailed_by(sb.as_mut(), &h.belief.formula),
            left,
        });
    }
    let (lo, hi) = (a.min(b), a.max(b));
    let revisions = match &tl {
        Some((m, t)) => t
            .revisions()
            .iter()
            .filter(|rv| u64::from(rv.step) > lo && u64::from(rv.step) <= hi)
            .filter_map(|rv| match m.event(rv.event).map(|e| &e.body) {
                Some(crate::trace::event::Body::Revise(x)) => Some(RevisionLine {
                    step: u64::from(rv.step),
                    trigger: x.trigger.as_ref().map(|s| s.to_string()),
                    retracted: x.retracted.iter().map(|s| s.to_string()).collect(),
                    policy: x.policy.as_ref().map(|s| s.to_string()),
                }),
                _ => None,
            })
            .collect(),
        None => Vec::new(),
    };
    // Ground beliefs (memory) by name: what was written, rewritten or retracted between.
    let names: BTreeSet<&String> = ga.keys().chain(gb.keys()).collect();
    let ground = names
        .into_iter()
        .filter(|n| ga.get(*n) != gb.get(*n))
        .map(|n| GroundChange {
            name: n.clone(),
            before: ga.get(n).cloned(),
            after: gb.get(n).cloned(),
        })
        .collect();
    let _ = command;
    Ok(Reply::Diff {
        a,
        b,
        added,
        removed,
        changed,
        consistent: cons,
        revisions,
        ground,
    })
}

/// `whatif POLICY [from STEP]`: the session replayed under another policy (see
/// [`crate::model::whatif`]); both Σs are shown at the REPL's step when it is past `from`,
/// else at the last step.
pub(crate) fn whatif(
    r: &mut Repl,
    command: &str,
    policy: Policy,
    from: u64,
) -> Result<Reply, ReplError> {
    let (model, session) = model_of(r, command)?;
    let tl = model
        .timeline(&session)
        .ok_or_else(|| ReplError::new(command, "the session has no events"))?;
    let log = model.log();
    let from32 = u32::try_from(from).unwrap_or(u32::MAX);
    let w = whatif_within(
        tl,
        log,
        policy,
        from32,
        &walk_options(r),
        Some(r.whatif_budget),
    );
    let at = if r.step > from {
        r.step
    } else {
        u64::from(tl.len())
    };
    // Past where the budget stopped the walk the alternative Σ is not known.
    let at = match w.stopped_at {
        Some(s) => at.min(u64::from(s.saturating_sub(1))),
        None => at,
    };
    let at32 = u32::try_from(at).unwrap_or(u32::MAX);
    let alt: Vec<u32> = w.alt_at(at32).iter().map(|a| a.record).collect();
    let real: Vec<u32> = tl.sigma_at(log, at32).iter().map(|v| v.index).collect();
    let mut recs: Vec<u32> = alt.iter().chain(real.iter()).copied().collect();
    recs.sort_unstable();
    recs.dedup();
    let sigma = recs
        .into_iter()
        .filter_map(|i| {
            let side = match (real.contains(&i), alt.contains(&i)) {
                (true, true) => "both",
                (true, false) => "real",
                _ => "alternative",
            };
            tl.belief(log, i).map(|v| (member_of_view(&v), side))
        })
        .collect();
    let changed = w
        .changed
        .iter()
        .map(|c| VerdictLine {
            event: event_ref(&model, c.step, c.event),
            kind: c.kind,
            formula: c.formula.clone(),
            claimed: c.claimed.clone(),
            real: c.real.clone(),
            alt: c.alt.clone(),
        })
        .collect();
    let decisions = w
        .decisions
        .iter()
        .map(|d| DecisionLine {
            step: u64::from(d.step),
            id: d.id.clone(),
            formula: tl
                .belief(log, d.record)
                .map(|v| member_of_view(&v).formula)
                .unwrap_or_default(),
            real_retracted: d.real_retracted.clone(),
            alt: d
                .alt
                .as_ref()
                .map(|a| (a.applied, a.retracted.clone(), a.fallback))
                .map_err(|e| e.to_string()),
            repairs: d
                .repairs
                .as_ref()
                .map(|rs| (rs.repairs.clone(), rs.complete))
                .map_err(|e| e.to_string()),
            sigma_was_inconsistent: d.repairs.as_ref().is_ok_and(|rs| rs.sigma_was_inconsistent),
        })
        .collect();
    Ok(Reply::WhatIf {
        policy,
        run_policy: run_policy(tl, log),
        from,
        at,
        sigma,
        changed,
        compared: w.compared,
        not_checkable: w.not_checkable,
        decisions,
        stopped_at: w.stopped_at.map(u64::from),
    })
}
