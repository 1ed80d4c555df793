//! What if another revision policy had decided: `whatif POLICY [from STEP]`.
//!
//! The session is replayed from step `from` with two engines walked forward together: one
//! mirrors the trace (the *real* Σ), the other (the *alternative* Σ) starts from the same Σ at
//! `from` and decides every later announcement with [`crate::logic::engine::State::announce`]
//! under the chosen policy:
//!
//! - an `announce` goes through the alternative policy (which may refuse it, or give up other
//!   beliefs); a belief it gives up leaves the alternative Σ at the step where the real run
//!   gave up the same belief, at the end of the real run's revision of that announcement (its
//!   last `retract`) when the real run kept it, and at once when the real run revised nothing,
//!   so that with the run's own policy the two Σs agree at every step;
//! - a `retract` that carries out a revision (`by: revision`, or one a `revise` listed) is the
//!   real policy's decision and is not replayed; any other `retract` (by the agent or the user)
//!   is, when the alternative Σ holds the belief;
//! - `verify`, `query`, `answer` and `turn` get their verdict recomputed on both Σs just
//!   before the event, and every one that differs is listed.
//!
//! For every announcement the real run or the alternative policy revised, the other repairs
//! are listed: every minimal correction of the conflict ([`crate::logic::engine::corrections`]) over
//! Σ just before it plus the new belief (the real Σ when the real run revised, else the
//! alternative one), with which beliefs each keeps, and which one each policy chose. When Σ was consistent before, every conflict involves the new belief and
//! lies in its component (the beliefs linked to it through shared atoms), so only that
//! component is searched; a conflict over more than [`MAX_REPAIR_BELIEFS`] retractable beliefs
//! is answered `too large` instead.
//!
//! Every solve has the budget of [`RecomputeOptions::timeout`]; an answer that runs out is
//! not checkable, never a verdict, and a verdict is listed as changed only when both sides
//! were decided.

use std::collections::{BTreeSet, HashMap};

use crate::logic::engine::corrections::{minimal_corrections, satisfiable};
use crate::logic::engine::{BeliefSpec, EngineError, Outcome, Role as EngineRole};
use crate::logic::formula::{Atom, Formula};
use crate::logic::ground;
use crate::logic::parse::parse;
use crate::logic::revise::Policy;
use crate::trace::TraceLog;
use crate::trace::event::{Body, Reply as TurnReply};

use super::recompute::{RecomputeOptions, Unknown, role};
use super::timeline::{RetractedBy, Timeline};
use crate::logic::engine::{LocalEngine, run_with_stack};

/// At most this many alternative repairs per revision.
pub const MAX_REPAIRS: usize = 16;

/// Repairs are searched among at most this many retractable beliefs (the conflict's
/// component, or all of Σ when Σ was already inconsistent): each repair costs a solve per
/// belief, and a conflict wider than this is answered `too large` rather than after minutes.
pub const MAX_REPAIR_BELIEFS: usize = 256;

/// Why a belief left the alternative Σ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AltLeft {
    /// The alternative policy gave it up.
    Policy,
    /// A `retract` of the trace that is not a revision (the agent's or the user's).
    Retract,
    /// The same id was announced again (and the alternative policy admitted it).
    Superseded,
}

impl AltLeft {
    /// `policy`, `retract` or `superseded`.
    pub fn as_str(self) -> &'static str {
        match self {
            AltLeft::Policy => "policy",
            AltLeft::Retract => "retract",
            AltLeft::Superseded => "superseded",
        }
    }
}

/// A belief of the alternative Σ, valid over `[entered, left)`.
#[derive(Debug, Clone, PartialEq)]
pub struct AltRecord {
    /// The belief id.
    pub id: String,
    /// The trace record it holds (index into [`Timeline::beliefs`]: formula, source, ...).
    pub record: u32,
    /// The step it entered.
    pub entered: u32,
    /// When and why it left.
    pub left: Option<(u32, AltLeft)>,
}

impl AltRecord {
    /// Whether it is in the alternative Σ at `t`.
    pub fn active_at(&self, t: u32) -> bool {
        self.entered <= t && self.left.is_none_or(|(s, _)| s > t)
    }
}

/// What the alternative policy did with one announcement.
#[derive(Debug, Clone, PartialEq)]
pub struct AltDecision {
    /// Θ(Σ, φ) on the alternative Σ.
    pub outcome: Outcome,
    /// Whether φ entered the alternative Σ.
    pub applied: bool,
    /// The ids it gave up.
    pub retracted: Vec<String>,
    /// Greedy fell back to recency.
    pub fallback: bool,
}

/// One minimal repair of a conflict.
#[derive(Debug, Clone, PartialEq)]
pub struct Repair {
    /// The ids it gives up (the new belief's own id when it refuses it).
    pub retract: Vec<String>,
    /// Whether it keeps the new belief.
    pub keeps_new: bool,
    /// Of the beliefs the real run gave up, those this repair keeps.
    pub keeps: Vec<String>,
    /// It is the repair the real run made.
    pub real: bool,
    /// It is the repair the alternative policy made.
    pub alternative: bool,
}

/// The repairs of one announcement's conflict.
#[derive(Debug, Clone, PartialEq)]
pub struct Repairs {
    /// Every minimal correction found (real and alternative included when they are minimal).
    pub repairs: Vec<Repair>,
    /// Whether they are provably all.
    pub complete: bool,
    /// Σ was inconsistent before the announcement (the conflicts are not all its doing).
    pub sigma_was_inconsistent: bool,
}

/// An announcement the real run or the alternative policy revised.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The step of the announcement.
    pub step: u32,
    /// Its record.
    pub record: u32,
    /// Its id.
    pub id: String,
    /// The ids the real run gave up for it (its `revise`), in order.
    pub real_retracted: Vec<String>,
    /// The real run's revise (index into [`Timeline::revisions`]), if it made one.
    pub revision: Option<u32>,
    /// What the alternative policy did.
    pub alt: Result<AltDecision, Unknown>,
    /// The other repairs.
    pub repairs: Result<Repairs, Unknown>,
}

/// A verdict of the trace recomputed on both Σs.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictChange {
    /// The step of the event.
    pub step: u32,
    /// The event position.
    pub event: u32,
    /// `verify`, `query`, `answer` or `turn`.
    pub kind: &'static str,
    /// The formula asked about.
    pub formula: String,
    /// What the agent claimed or replied.
    pub claimed: Option<String>,
    /// On the real Σ.
    pub real: String,
    /// On the alternative Σ.
    pub alt: String,
}

/// The outcome of a what-if.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIf {
    /// The alternative policy.
    pub policy: Policy,
    /// The step the alternative starts from.
    pub from: u32,
    /// The alternative Σ as intervals (records in order of entry).
    pub alt: Vec<AltRecord>,
    /// Every announcement either side revised, with the other repairs.
    pub decisions: Vec<Decision>,
    /// Every later verdict or answer that would have changed.
    pub changed: Vec<VerdictChange>,
    /// Verdicts compared.
    pub compared: usize,
    /// Verdicts not decided on one side or both (not checkable).
    pub not_checkable: usize,
    /// Problems mirroring the trace (a belief an engine could not take in).
    pub errors: Vec<(u32, Unknown)>,
    /// The walk's overall budget ran out before this step: nothing from it on was replayed
    /// or compared (the alternative Σ is known up to the step before).
    pub stopped_at: Option<u32>,
}

impl WhatIf {
    /// The alternative Σ at step `t`.
    pub fn alt_at(&self, t: u32) -> Vec<&AltRecord> {
        self.alt.iter().filter(|r| r.active_at(t)).collect()
    }
}

/// The policy the run used: the one its `revise` events name (the first named).
pub fn run_policy(tl: &Timeline, log: &TraceLog) -> Option<Policy> {
    tl.revisions().iter().find_map(
        |r| match &log.events.get(r.event as usize).map(|e| &e.body) {
            Some(Body::Revise(v)) => v.policy.as_deref().and_then(Policy::parse),
            _ => None,
        },
    )
}

fn spec_of(tl: &Timeline, log: &TraceLog, rec: u32) -> Option<BeliefSpec> {
    let v = tl.belief(log, rec)?;
    let f = v.formula().ok()?;
    let c = v.confidence();
    let conf = if c.is_finite() && c > 0.0 {
        c.min(1.0)
    } else {
        f64::MIN_POSITIVE
    };
    Some(
        BeliefSpec::new(v.id().to_string(), f)
            .role(role(v.role()))
            .confidence(conf)
            .step(u64::from(v.step())),
    )
}

/// Adds a belief the trace says was held; a rule that contradicts the rules is held as an
/// assumption (as the recomputation and the REPL do).
fn hold(e: &mut LocalEngine, spec: BeliefSpec) -> Result<(), EngineError> {
    match e.add(spec.clone()) {
        Ok(_) => Ok(()),
        Err(EngineError::HardConflict(_)) => e.add(spec.role(EngineRole::Assumption)).map(|_| ()),
        Err(err) => Err(err),
    }
}

/// The verdict of a `verify`: Θ(Σ, Δ).
fn gate(e: &mut LocalEngine, f: &Formula) -> Result<String, Unknown> {
    Ok(e.check(f, None)?.theta.as_str().to_string())
}

/// The verdict of a question: entailed, contradicted, unknown, or inconsistent (Σ entails
/// everything).
fn ask(e: &mut LocalEngine, f: &Formula) -> Result<&'static str, Unknown> {
    Ok(match e.check(f, None)?.theta {
        Outcome::Entailed => "entailed",
        Outcome::Contradiction => match e.check(&Formula::Not(Box::new(f.clone())), None)?.theta {
            Outcome::Contradiction => "inconsistent",
            _ => "contradicted",
        },
        _ => "unknown",
    })
}

fn turn_answer(a: &str) -> String {
    match a {
        "entailed" => "YES",
        "contradicted" => "NO",
        "unknown" => "UNKNOWN",
        other => other,
    }
    .to_string()
}

/// Replays a session from `from` under `policy` (see the module docs), on a thread with the
/// engine's stack.
pub fn whatif(
    tl: &Timeline,
    log: &TraceLog,
    policy: Policy,
    from: u32,
    opts: &RecomputeOptions,
) -> WhatIf {
    whatif_within(tl, log, policy, from, opts, None)
}

/// [`whatif`] within an overall `budget`: a policy that repairs every announcement of a long,
/// conflicted run searches a maximal consistent subset each time, so the walk can take
/// minutes; past the budget it stops and says where ([`WhatIf::stopped_at`]).
pub fn whatif_within(
    tl: &Timeline,
    log: &TraceLog,
    policy: Policy,
    from: u32,
    opts: &RecomputeOptions,
    budget: Option<std::time::Duration>,
) -> WhatIf {
    let deadline = budget.and_then(|b| std::time::Instant::now().checked_add(b));
    run_with_stack(|| walk(tl, log, policy, from.min(tl.len()), opts, deadline))
}

fn walk(
    tl: &Timeline,
    log: &TraceLog,
    policy: Policy,
    from: u32,
    opts: &RecomputeOptions,
    deadline: Option<std::time::Instant>,
) -> WhatIf {
    let limits = opts.limits();
    let mut real = LocalEngine::with_limits(limits);
    let mut alt = LocalEngine::with_limits(limits);
    let mut out = WhatIf {
        policy,
        from,
        alt: Vec::new(),
        decisions: Vec::new(),
        changed: Vec::new(),
        compared: 0,
        not_checkable: 0,
        errors: Vec::new(),
        stopped_at: None,
    };
    // Up to `from` the alternative Σ is the real one: its records, as the trace has them.
    let mut alt_active: HashMap<String, usize> = HashMap::new();
    for (i, r) in tl.beliefs().iter().enumerate() {
        if r.announced > from || r.active_at(from) {
            continue;
        }
        let left = r.retraction.map(|x| {
            let why = match x.by {
                RetractedBy::Superseded | RetractedBy::Reannounced => AltLeft::Superseded,
                RetractedBy::Revision => AltLeft::Policy,
                _ => AltLeft::Retract,
            };
            (x.step, why)
        });
        out.alt.push(AltRecord {
            id: r.id.to_string(),
            record: i as u32,
            entered: r.announced,
            left,
        });
    }
    for v in tl.sigma_at(log, from) {
        if let Some(spec) = spec_of(tl, log, v.index) {
            for e in [&mut real, &mut alt] {
                if let Err(err) = hold(e, spec.clone()) {
                    out.errors.push((from, err.into()));
                }
            }
        }
        alt_active.insert(v.id().to_string(), out.alt.len());
        out.alt.push(AltRecord {
            id: v.id().to_string(),
            record: v.index,
            entered: v.step(),
            left: None,
        });
    }
    let mut record_at: HashMap<u32, u32> = HashMap::new();
    let mut ended_at: HashMap<u32, Vec<u32>> = HashMap::new();
    for (i, r) in tl.beliefs().iter().enumerate() {
        record_at.insert(r.announced, i as u32);
        if let Some(x) = r.retraction {
            ended_at.entry(x.step).or_default().push(i as u32);
        }
    }
    // The real revision each announcement triggered, and the step it was carried out by.
    let mut revision_of: HashMap<u32, u32> = HashMap::new();
    for (k, rv) in tl.revisions().iter().enumerate() {
        if let Some(rec) = rv.trigger_record {
            revision_of.entry(rec).or_insert(k as u32);
        }
    }
    let settled = |k: u32| -> u32 {
        let rv = &tl.revisions()[k as usize];
        rv.retracts
            .iter()
            .map(|&ri| tl.retracts()[ri as usize].step)
            .max()
            .unwrap_or(rv.step)
            .max(rv.step)
    };
    let policy_retract: HashMap<u32, bool> = tl
        .retracts()
        .iter()
        .map(|r| (r.step, r.revision.is_some()))
        .collect();
    // Beliefs the alternative gave up, held until the step the real run settled its
    // revision: (step, alt record).
    let mut pending: Vec<(u32, usize)> = Vec::new();
    for step in from + 1..=tl.len() {
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            out.stopped_at = Some(step);
            break;
        }
        let Some(pos) = tl.event_pos_at(step) else {
            continue;
        };
        let Some(ev) = log.events.get(pos as usize) else {
            continue;
        };
        match &ev.body {
            Body::Announce(_) => {
                // The real Σ: the record it ends (a superseded one), then the new one.
                for &e in ended_at.get(&step).map(Vec::as_slice).unwrap_or(&[]) {
                    let _ = real.retract(&tl.beliefs()[e as usize].id);
                }
                let Some(&rec) = record_at.get(&step) else {
                    continue;
                };
                let id = tl.beliefs()[rec as usize].id.to_string();
                let Some(spec) = spec_of(tl, log, rec) else {
                    // A formula that does not parse cannot be reasoned with: both Σs hold it
                    // as the trace does, and no policy decides on it.
                    if let Some(&old) = alt_active.get(&id) {
                        out.alt[old].left = Some((step, AltLeft::Superseded));
                    }
                    alt_active.insert(id.clone(), out.alt.len());
                    out.alt.push(AltRecord {
                        id,
                        record: rec,
                        entered: step,
                        left: None,
                    });
                    continue;
                };
                if let Err(err) = hold(&mut real, spec.clone()) {
                    out.errors.push((step, err.into()));
                }
                let revision = revision_of.get(&rec).copied();
                let real_retracted: Vec<String> = revision
                    .map(|k| {
                        tl.revisions()[k as usize]
                            .retracts
                            .iter()
                            .filter_map(|&ri| tl.retracts()[ri as usize].record)
                            .map(|r| tl.beliefs()[r as usize].id.to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                let decided = alt.announce(spec.clone(), policy).map_err(Unknown::from);
                let alt_decision = decided
                    .as_ref()
                    .map(|rev| AltDecision {
                        outcome: rev.outcome,
                        applied: rev.applied,
                        retracted: rev.retracted.clone(),
                        fallback: rev.fallback,
                    })
                    .map_err(Unknown::clone);
                if let Ok(rev) = &decided {
                    // Given up when the real run gave up the same belief, at the end of the
                    // real run's revision when it did not, and at once when it revised
                    // nothing: with the run's own policy the two Σs agree at every step.
                    let real_step: HashMap<String, u32> = revision
                        .map(|k| {
                            tl.revisions()[k as usize]
                                .retracts
                                .iter()
                                .filter_map(|&ri| {
                                    let x = &tl.retracts()[ri as usize];
                                    x.record
                                        .map(|r| (tl.beliefs()[r as usize].id.to_string(), x.step))
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    for gone in &rev.retracted {
                        let when = real_step
                            .get(gone)
                            .copied()
                            .unwrap_or_else(|| revision.map_or(step, settled));
                        if let Some(&ai) = alt_active.get(gone) {
                            if when > step {
                                if let Some(s) = spec_of(tl, log, out.alt[ai].record) {
                                    let _ = hold(&mut alt, s);
                                }
                                pending.push((when, ai));
                            } else {
                                out.alt[ai].left = Some((step, AltLeft::Policy));
                                alt_active.remove(gone);
                            }
                        }
                    }
                    if rev.applied {
                        if let Some(old) = alt_active.insert(id.clone(), out.alt.len()) {
                            out.alt[old].left = Some((step, AltLeft::Superseded));
                        }
                        out.alt.push(AltRecord {
                            id: id.clone(),
                            record: rec,
                            entered: step,
                            left: None,
                        });
                    }
                }
                let revised = revision.is_some()
                    || match &decided {
                        Ok(rev) => !rev.retracted.is_empty() || !rev.applied,
                        Err(_) => true,
                    };
                if revised {
                    // The conflict of the side that revised: the real Σ when the real run did,
                    // else the alternative Σ, just before the announcement (without the
                    // record it supersedes: the update replaces it).
                    let before: Vec<BeliefSpec> = if revision.is_some() {
                        tl.sigma_at(log, step - 1)
                            .iter()
                            .filter(|v| v.id() != spec.id)
                            .filter_map(|v| spec_of(tl, log, v.index))
                            .collect()
                    } else {
                        out.alt
                            .iter()
                            .filter(|a| a.active_at(step - 1) && a.id != spec.id)
                            .filter_map(|a| spec_of(tl, log, a.record))
                            .collect()
                    };
                    let repairs =
                        repairs(before, &spec, &real_retracted, decided.as_ref().ok(), opts);
                    out.decisions.push(Decision {
                        step,
                        record: rec,
                        id,
                        real_retracted,
                        revision,
                        alt: alt_decision,
                        repairs,
                    });
                } else if let Err(u) = alt_decision {
                    out.errors.push((step, u));
                }
            }
            Body::Retract(_) => {
                let by_policy = policy_retract.get(&step).copied().unwrap_or(false);
                for &e in ended_at.get(&step).map(Vec::as_slice).unwrap_or(&[]) {
                    let r = &tl.beliefs()[e as usize];
                    let _ = real.retract(&r.id);
                    let is_policy =
                        by_policy || r.retraction.is_some_and(|x| x.by == RetractedBy::Revision);
                    if is_policy {
                        continue;
                    }
                    if let Some(ai) = alt_active.remove(r.id.as_str()) {
                        let _ = alt.retract(&r.id);
                        out.alt[ai].left = Some((step, AltLeft::Retract));
                    }
                }
            }
            Body::Belief(_) | Body::Step(_) => {
                // Ground beliefs written here (value atoms): the trace's values, held in both
                // Σs alike (no policy decides on them); an overwrite replaces the old value
                // in both.
                for &e in ended_at.get(&step).map(Vec::as_slice).unwrap_or(&[]) {
                    let r = &tl.beliefs()[e as usize];
                    let _ = real.retract(&r.id);
                    if let Some(ai) = alt_active.remove(r.id.as_str()) {
                        let _ = alt.retract(&r.id);
                        out.alt[ai].left = Some((step, AltLeft::Superseded));
                    }
                }
                let lo = tl.beliefs().partition_point(|r| r.announced < step);
                let hi = tl.beliefs().partition_point(|r| r.announced <= step);
                for rec in lo as u32..hi as u32 {
                    if let Some(spec) = spec_of(tl, log, rec) {
                        for e in [&mut real, &mut alt] {
                            if let Err(err) = hold(e, spec.clone()) {
                                out.errors.push((step, err.into()));
                            }
                        }
                    }
                    let id = tl.beliefs()[rec as usize].id.to_string();
                    alt_active.insert(id.clone(), out.alt.len());
                    out.alt.push(AltRecord {
                        id,
                        record: rec,
                        entered: step,
                        left: None,
                    });
                }
            }
            body => {
                let asked: Option<(&'static str, String, Option<String>)> = match body {
                    Body::Verify(v) => {
                        let fs: Vec<&str> = v.all_formulas().collect();
                        let text = if fs.len() == 1 {
                            fs[0].to_string()
                        } else {
                            fs.iter()
                                .map(|f| format!("({f})"))
                                .collect::<Vec<_>>()
                                .join(" & ")
                        };
                        let claimed = v.outcome.map(|o| {
                            serde_json::to_value(o)
                                .ok()
                                .and_then(|x| x.as_str().map(str::to_string))
                                .unwrap_or_default()
                        });
                        (!fs.is_empty()).then_some(("verify", text, claimed))
                    }
                    Body::Query(q) => Some((
                        "query",
                        q.formula.to_string(),
                        q.answer.map(|a| {
                            serde_json::to_value(a)
                                .ok()
                                .and_then(|x| x.as_str().map(str::to_string))
                                .unwrap_or_default()
                        }),
                    )),
                    Body::Answer(a) => a.formula.as_ref().map(|f| {
                        (
                            "answer",
                            f.to_string(),
                            a.text.as_ref().map(|t| t.to_string()),
                        )
                    }),
                    Body::Turn(t) => t.literal.as_ref().map(|l| {
                        let reply = t.reply.map(|r| {
                            match r {
                                TurnReply::Yes => "YES",
                                TurnReply::No => "NO",
                                TurnReply::Unknown => "UNKNOWN",
                            }
                            .to_string()
                        });
                        ("turn", l.to_string(), reply)
                    }),
                    _ => None,
                };
                if let Some((kind, text, claimed)) = asked
                    && let Ok(f) = parse(&text)
                {
                    let (r, a) = match kind {
                        "verify" => (gate(&mut real, &f), gate(&mut alt, &f)),
                        "turn" => (
                            ask(&mut real, &f).map(turn_answer),
                            ask(&mut alt, &f).map(turn_answer),
                        ),
                        _ => (
                            ask(&mut real, &f).map(str::to_string),
                            ask(&mut alt, &f).map(str::to_string),
                        ),
                    };
                    out.compared += 1;
                    match (r, a) {
                        (Ok(r), Ok(a)) => {
                            if r != a {
                                out.changed.push(VerdictChange {
                                    step,
                                    event: pos,
                                    kind,
                                    formula: f.to_string(),
                                    claimed,
                                    real: r,
                                    alt: a,
                                });
                            }
                        }
                        _ => out.not_checkable += 1,
                    }
                }
            }
        }
        // Give up what the alternative decided to, at the step the real run settled.
        let mut j = 0;
        while j < pending.len() {
            if pending[j].0 == step {
                let (_, ai) = pending.swap_remove(j);
                let id = out.alt[ai].id.clone();
                if out.alt[ai].left.is_none() && alt_active.get(&id) == Some(&ai) {
                    let _ = alt.retract(&id);
                    alt_active.remove(&id);
                    out.alt[ai].left = Some((step, AltLeft::Policy));
                }
            } else {
                j += 1;
            }
        }
    }
    // Whatever is still pending (a revision settled past the end, or past where the budget
    // stopped the walk) leaves there.
    let end = out.stopped_at.unwrap_or(tl.len());
    for (_, ai) in pending {
        if out.alt[ai].left.is_none() {
            out.alt[ai].left = Some((end, AltLeft::Policy));
        }
    }
    out.alt.sort_by_key(|r| (r.entered, r.record));
    out
}

/// The atoms of `f` as far as connection goes: the values of one key exclude each other, so
/// every value atom stands for its key (one atom per key, with an empty value).
fn atoms_of(f: &Formula) -> BTreeSet<Atom> {
    let mut s = BTreeSet::new();
    ground::atoms(f, &mut s);
    s.into_iter()
        .map(|a| match a {
            Atom::Value(v) => Atom::Value(Box::new(crate::logic::formula::ValueAtom {
                key: v.key,
                value: crate::logic::formula::Scalar::Json(String::new()),
                unit: None,
            })),
            a => a,
        })
        .collect()
}

/// Every minimal repair of the conflict of announcing `spec` into `members` (Σ just before
/// it), see the module docs.
fn repairs(
    mut members: Vec<BeliefSpec>,
    spec: &BeliefSpec,
    real_retracted: &[String],
    alt: Option<&crate::logic::revise::Revision>,
    opts: &RecomputeOptions,
) -> Result<Repairs, Unknown> {
    let mut domain = BTreeSet::new();
    for m in members.iter().chain([spec]) {
        ground::domain_constants(&m.formula, &mut domain);
    }
    let domain: Vec<String> = domain.into_iter().collect();
    // Beliefs, φ included, are held in their witnessed form (`logic::ground`).
    let grounded = |f: &Formula| -> Result<Formula, Unknown> {
        ground::ground(&ground::witnessed(f), &domain, opts.instance_cap)
            .map_err(|e| Unknown::Ground(e.to_string()))
    };
    let phi = grounded(&spec.formula)?;
    let mut ground_members: Vec<Formula> = Vec::with_capacity(members.len());
    for m in &members {
        ground_members.push(grounded(&m.formula)?);
    }
    // Was Σ consistent before? (Then every conflict involves φ and lies in its component.)
    let before: Vec<&Formula> = ground_members.iter().collect();
    let consistent_before = satisfiable(&before, opts.timeout).map_err(Unknown::from)?;
    let mut keep: Vec<bool> = vec![true; members.len()];
    if consistent_before {
        // φ's component, grown through shared atoms.
        let mut atoms = atoms_of(&phi);
        let sets: Vec<BTreeSet<Atom>> = ground_members.iter().map(atoms_of).collect();
        keep = vec![false; members.len()];
        loop {
            let mut grew = false;
            for (i, s) in sets.iter().enumerate() {
                if !keep[i] && !s.is_disjoint(&atoms) {
                    keep[i] = true;
                    atoms.extend(s.iter().cloned());
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
    }
    let mut hard: Vec<&Formula> = Vec::new();
    let mut soft: Vec<&Formula> = Vec::new();
    let mut soft_ids: Vec<&str> = Vec::new();
    for (i, m) in members.iter().enumerate() {
        if !keep[i] {
            continue;
        }
        if m.role.is_hard() {
            hard.push(&ground_members[i]);
        } else {
            soft.push(&ground_members[i]);
            soft_ids.push(&m.id);
        }
    }
    if soft.len() > MAX_REPAIR_BELIEFS {
        return Err(Unknown::TooLarge(format!(
            "the conflict spans {} retractable beliefs{}; repairs are listed for at most {}",
            soft.len(),
            if consistent_before {
                ""
            } else {
                " (Σ was already inconsistent)"
            },
            MAX_REPAIR_BELIEFS
        )));
    }
    // The new belief last: repairs keep the older beliefs first, as a repair of an
    // announcement usually does; refusing it is one of the repairs.
    soft.push(&phi);
    soft_ids.push(&spec.id);
    let c = minimal_corrections(&hard, &soft, MAX_REPAIRS, opts.timeout).map_err(Unknown::from)?;
    let set_of = |ids: &[String]| -> BTreeSet<String> { ids.iter().cloned().collect() };
    let real_set = set_of(real_retracted);
    let alt_set: Option<BTreeSet<String>> = alt.map(|r| {
        let mut s = set_of(&r.retracted);
        if !r.applied {
            s.insert(spec.id.clone());
        }
        s
    });
    let repairs = c
        .sets
        .iter()
        .map(|set| {
            let retract: Vec<String> = set.iter().map(|&i| soft_ids[i].to_string()).collect();
            let rs = set_of(&retract);
            Repair {
                keeps_new: !rs.contains(&spec.id),
                keeps: real_retracted
                    .iter()
                    .filter(|id| !rs.contains(*id))
                    .cloned()
                    .collect(),
                real: !real_set.is_empty() && rs == real_set,
                alternative: alt_set.as_ref().is_some_and(|a| !a.is_empty() && *a == rs),
                retract,
            }
        })
        .collect();
    members.clear();
    Ok(Repairs {
        repairs,
        complete: c.complete,
        sigma_was_inconsistent: !consistent_before,
    })
}

/// Every minimal way to make room for `phi` in `members` (Σ, consistent): each a minimal set
/// of ids of Σ whose retraction makes Σ ∪ {φ} consistent (the repairs that refuse φ left
/// out), and whether they are provably all. The live gate's `repairs`; the same enumeration
/// as a revision's repairs here.
pub fn room_for(
    members: Vec<BeliefSpec>,
    phi: &BeliefSpec,
    opts: &RecomputeOptions,
) -> Result<(Vec<Vec<String>>, bool), Unknown> {
    let r = repairs(members, phi, &[], None, opts)?;
    let sets = r
        .repairs
        .into_iter()
        .filter(|rep| rep.keeps_new)
        .map(|rep| rep.retract)
        .collect();
    Ok((sets, r.complete))
}
