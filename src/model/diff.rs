//! What differs between two runs of the same task (`doxascope diff RUN1 RUN2`).
//!
//! Two runs rarely agree step for step: an agent thinks once more, a tool answers later. So
//! the runs are first *aligned*, a sequence of pairs of corresponding steps, in one of three
//! ways ([`Align`]):
//!
//! - `step`: step t of one run with step t of the other;
//! - `plan`: the step right after each plan step finished (a BDI `step` event with status
//!   `done` or `failed`), matched by plan and step id;
//! - `formula`: Σ's changes matched by content: each announcement or retraction is keyed by
//!   its kind and its normalized formula, and the two sequences of keys are aligned as a text
//!   diff aligns lines (common prefix and suffix, then a longest common subsequence of the
//!   middle, or a match in order past a size cap). Events that do not change Σ are ignored,
//!   so a run that thought or logged more still aligns.
//!
//! Then, whatever the alignment:
//!
//! - **beliefs only in one run**: formulas (normalized) announced in one run and never in the
//!   other, each with whether the other run's final Σ entails it anyway;
//! - **beliefs with another status**: formulas both runs announced whose status at the end
//!   differs: held or given up (and how), entailed, contradicted, unknown, or Σ inconsistent;
//! - **verdicts that differ**: `verify` and `query` events matched by kind, formula and
//!   occurrence (the n-th verify of Δ in one run with the n-th in the other), whose claimed
//!   outcome or recomputed verdict differs, and those only one run has;
//! - **the first divergence**: the first aligned pair of steps at which the two Σs differ
//!   (as sets of formulas), with the Σ changes that led to it in each run.
//!
//! Besides Σ, what the runs did is compared ([`events`]): tool calls (tool, args, result,
//! status), model calls, thoughts, answers, scores and errors, each kind aligned on its own.
//!
//! A run diffed with itself is empty under every alignment (a test checks it).

pub mod events;

use std::collections::{BTreeMap, HashMap};

use crate::logic::formula::Formula;
use crate::logic::parse::parse;
use crate::logic::print::normalized;
use crate::trace::event::{Body, StepStatus};

use super::Model;
use super::history::{Status, statuses_at};
use super::recompute::{RecomputeOptions, Recomputed};
use super::timeline::{RetractedBy, Timeline};
use crate::trace::TraceLog;

/// How two runs are aligned (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    /// Step t with step t.
    #[default]
    Step,
    /// By plan step (plan and step id of each finished step).
    Plan,
    /// By Σ's changes, matched by content.
    Formula,
}

impl Align {
    /// `step`, `plan` or `formula`.
    pub fn as_str(self) -> &'static str {
        match self {
            Align::Step => "step",
            Align::Plan => "plan",
            Align::Formula => "formula",
        }
    }

    /// Parses the name.
    pub fn parse(s: &str) -> Option<Align> {
        Some(match s {
            "step" => Align::Step,
            "plan" => Align::Plan,
            "formula" => Align::Formula,
            _ => return None,
        })
    }
}

/// One run: a session's timeline and the log it was replayed from.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// The events as read.
    pub log: &'a TraceLog,
    /// Its timeline.
    pub tl: &'a Timeline,
}

impl<'a> Run<'a> {
    /// Session `tl` of `model`.
    pub fn of(model: &'a Model, tl: &'a Timeline) -> Run<'a> {
        Run {
            log: model.log(),
            tl,
        }
    }
}

/// The solver-free part of a diff: the aligned pairs of steps and the first divergence of
/// Σ under them (what the TUI's side-by-side mode walks).
#[derive(Debug, Clone, PartialEq)]
pub struct Alignment {
    /// The aligned pairs of steps, from (0, 0) to the ends, increasing in both.
    pub pairs: Vec<(u32, u32)>,
    /// The first pair whose Σs differ.
    pub divergence: Option<Divergence>,
}

/// Aligns two runs (no solver: the timelines alone).
pub fn align(a: Run<'_>, b: Run<'_>, how: Align) -> Alignment {
    let (na, nb) = (norms(a), norms(b));
    let (da, db) = (deltas(a, &na), deltas(b, &nb));
    let pairs = pairs(how, a, b, &da, &db);
    let divergence = divergence(&pairs, &da, &db);
    Alignment { pairs, divergence }
}

/// The normalized formula of each belief of Σ at `step` (record index, formula), for
/// comparing two Σs by content.
pub fn sigma_keys(run: Run<'_>, step: u32) -> Vec<(u32, String)> {
    run.tl
        .sigma_at(run.log, step)
        .iter()
        .map(|v| {
            let key = v
                .formula()
                .map(|f| normalized(&f))
                .unwrap_or_else(|_| format!("<unparsed:{}>", v.id()));
            (v.index, key)
        })
        .collect()
}

/// Where a belief stands at the end of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct EndStatus {
    /// The record (index into [`Timeline::beliefs`]) last announced with the formula.
    pub record: Option<u32>,
    /// Whether a record with the formula is in Σ at the end.
    pub held: bool,
    /// When not held: how the last such record left Σ.
    pub left: Option<(u32, RetractedBy)>,
    /// The formula's status on the final Σ.
    pub status: Status,
}

/// A formula only one run announced.
#[derive(Debug, Clone, PartialEq)]
pub struct OnlyIn {
    /// The formula, normalized.
    pub formula: String,
    /// Its first record in the run that has it.
    pub record: u32,
    /// Its status in the run that has it, at the end.
    pub here: EndStatus,
    /// Its status on the other run's final Σ (which never held it).
    pub other: Status,
}

/// A formula both runs announced, with another status at the end.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusDiff {
    /// The formula, normalized.
    pub formula: String,
    /// In the first run.
    pub a: EndStatus,
    /// In the second run.
    pub b: EndStatus,
}

/// One side of a verdict: the event, what it claimed and what recomputation says.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictSide {
    /// The step of the event.
    pub step: u32,
    /// The event, as a position in its model's log.
    pub event: u32,
    /// What the agent claimed (`entailed`, `yes`, ...).
    pub claimed: Option<String>,
    /// The verdict recomputed on Σ just before it, or why it is not checkable.
    pub recomputed: Result<String, String>,
}

/// A verdict event whose outcome differs between the runs, or that only one run has.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictDiff {
    /// `verify` or `query`.
    pub kind: &'static str,
    /// The formula, normalized.
    pub formula: String,
    /// Which occurrence of (kind, formula) in each run (0-based).
    pub occurrence: usize,
    /// In the first run (`None`: only the second has it).
    pub a: Option<VerdictSide>,
    /// In the second run.
    pub b: Option<VerdictSide>,
}

/// The first aligned pair of steps at which the two Σs differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// The step of the first run.
    pub a: u32,
    /// The step of the second run.
    pub b: u32,
    /// The steps of the first run's Σ changes since the previous aligned pair (the cause).
    pub changes_a: Vec<u32>,
    /// The second run's.
    pub changes_b: Vec<u32>,
    /// Formulas in the first run's Σ there and not in the second's.
    pub only_a: Vec<String>,
    /// And the other way.
    pub only_b: Vec<String>,
}

/// Everything that differs between two runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDiff {
    /// The alignment used.
    pub align: Align,
    /// The aligned pairs of steps.
    pub pairs: Vec<(u32, u32)>,
    /// Formulas only the first run announced.
    pub only_a: Vec<OnlyIn>,
    /// Formulas only the second run announced.
    pub only_b: Vec<OnlyIn>,
    /// Formulas with another status at the end.
    pub status: Vec<StatusDiff>,
    /// Verdicts that differ.
    pub verdicts: Vec<VerdictDiff>,
    /// The first divergence of Σ under the alignment.
    pub divergence: Option<Divergence>,
    /// Tool calls, model calls, thoughts, answers, scores and errors that differ.
    pub items: Vec<events::ItemDiff>,
    /// How many of each kind each run has.
    pub counts: events::Counts,
}

impl RunDiff {
    /// Whether nothing differs.
    pub fn is_empty(&self) -> bool {
        self.only_a.is_empty()
            && self.only_b.is_empty()
            && self.status.is_empty()
            && self.verdicts.is_empty()
            && self.divergence.is_none()
            && self.items.is_empty()
    }
}

/// A Σ change: (step, +1 entered / -1 left, normalized formula).
type Delta = (u32, i32, String);

/// The normalized formulas of every record (None when it does not parse).
fn norms(run: Run<'_>) -> Vec<Option<String>> {
    (0..run.tl.beliefs().len() as u32)
        .map(|i| {
            run.tl
                .belief(run.log, i)
                .and_then(|v| v.formula().ok())
                .map(|f| normalized(&f))
        })
        .collect()
}

/// Σ's changes in step order.
fn deltas(run: Run<'_>, norm: &[Option<String>]) -> Vec<Delta> {
    let mut out: Vec<Delta> = Vec::new();
    for (i, r) in run.tl.beliefs().iter().enumerate() {
        let key = norm[i]
            .clone()
            .unwrap_or_else(|| format!("<unparsed:{}>", r.id));
        out.push((r.announced, 1, key.clone()));
        if let Some(x) = r.retraction {
            out.push((x.step, -1, key));
        }
    }
    // At one step a superseding announcement ends one record and starts another: the end
    // first, as the replay does.
    out.sort_by_key(|d| (d.0, d.1));
    out
}

/// Where each formula stands at the end of a run.
fn ends(run: Run<'_>, norm: &[Option<String>]) -> BTreeMap<String, EndStatus> {
    let mut out: BTreeMap<String, EndStatus> = BTreeMap::new();
    for (i, r) in run.tl.beliefs().iter().enumerate() {
        let Some(key) = &norm[i] else { continue };
        let e = out.entry(key.clone()).or_insert(EndStatus {
            record: None,
            held: false,
            left: None,
            status: Status::Unknown,
        });
        // The last record with the formula speaks for it, unless an earlier one is still held.
        e.held |= r.retraction.is_none();
        e.record = Some(i as u32);
        e.left = r.retraction.map(|x| (x.step, x.by));
    }
    for e in out.values_mut() {
        if e.held {
            e.left = None;
        }
    }
    out
}

fn steps_of_plan(run: Run<'_>) -> Vec<((String, String), u32)> {
    let mut out = Vec::new();
    for (i, &pos) in run.tl.event_positions().iter().enumerate() {
        if let Some(ev) = run.log.events.get(pos as usize)
            && let Body::Step(s) = &ev.body
            && matches!(s.status, Some(StepStatus::Done | StepStatus::Failed))
        {
            let plan = s.plan.as_deref().unwrap_or("").to_string();
            let step = s.step.as_deref().unwrap_or("").to_string();
            out.push(((plan, step), i as u32 + 1));
        }
    }
    out
}

/// Pairs of positions of a longest common subsequence of `a` and `b`: common prefix and
/// suffix, then dynamic programming over the middle when it is small enough, else the
/// middle matched greedily in order.
fn lcs<T: PartialEq>(a: &[T], b: &[T]) -> Vec<(usize, usize)> {
    let mut pre = 0;
    while pre < a.len() && pre < b.len() && a[pre] == b[pre] {
        pre += 1;
    }
    let mut suf = 0;
    while suf < a.len() - pre && suf < b.len() - pre && a[a.len() - 1 - suf] == b[b.len() - 1 - suf]
    {
        suf += 1;
    }
    let mut out: Vec<(usize, usize)> = (0..pre).map(|i| (i, i)).collect();
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    if (ma.len() as u64) * (mb.len() as u64) <= 4_000_000 {
        let (n, m) = (ma.len(), mb.len());
        let mut dp = vec![0u32; (n + 1) * (m + 1)];
        let at = |i: usize, j: usize| i * (m + 1) + j;
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                dp[at(i, j)] = if ma[i] == mb[j] {
                    dp[at(i + 1, j + 1)] + 1
                } else {
                    dp[at(i + 1, j)].max(dp[at(i, j + 1)])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n && j < m {
            if ma[i] == mb[j] {
                out.push((pre + i, pre + j));
                i += 1;
                j += 1;
            } else if dp[at(i + 1, j)] >= dp[at(i, j + 1)] {
                i += 1;
            } else {
                j += 1;
            }
        }
    } else {
        let mut j = 0;
        for (i, x) in ma.iter().enumerate() {
            if let Some(k) = mb[j..].iter().position(|y| y == x) {
                out.push((pre + i, pre + j + k));
                j += k + 1;
            }
        }
    }
    out.extend((0..suf).map(|k| (a.len() - suf + k, b.len() - suf + k)));
    out
}

/// The aligned pairs of steps, from (0, 0) to (end, end), increasing in both.
fn pairs(align: Align, a: Run<'_>, b: Run<'_>, da: &[Delta], db: &[Delta]) -> Vec<(u32, u32)> {
    let (la, lb) = (a.tl.len(), b.tl.len());
    let mut out = vec![(0, 0)];
    match align {
        Align::Step => {
            for t in 1..=la.max(lb) {
                out.push((t.min(la), t.min(lb)));
            }
        }
        Align::Plan => {
            let sa = steps_of_plan(a);
            let sb = steps_of_plan(b);
            let ka: Vec<&(String, String)> = sa.iter().map(|x| &x.0).collect();
            let kb: Vec<&(String, String)> = sb.iter().map(|x| &x.0).collect();
            for (i, j) in lcs(&ka, &kb) {
                out.push((sa[i].1, sb[j].1));
            }
        }
        Align::Formula => {
            let ka: Vec<(i32, &str)> = da.iter().map(|d| (d.1, d.2.as_str())).collect();
            let kb: Vec<(i32, &str)> = db.iter().map(|d| (d.1, d.2.as_str())).collect();
            for (i, j) in lcs(&ka, &kb) {
                out.push((da[i].0, db[j].0));
            }
        }
    }
    out.push((la, lb));
    out.dedup();
    out
}

/// Walks both runs along the pairs and finds the first pair whose Σs differ.
fn divergence(pairs: &[(u32, u32)], da: &[Delta], db: &[Delta]) -> Option<Divergence> {
    // count[key] = multiplicity in A's Σ minus in B's; Σs are equal when all are 0.
    let mut count: HashMap<&str, i64> = HashMap::new();
    let mut nonzero = 0usize;
    fn bump<'k>(count: &mut HashMap<&'k str, i64>, k: &'k str, by: i64, nonzero: &mut usize) {
        let c = count.entry(k).or_insert(0);
        let was = *c != 0;
        *c += by;
        match (was, *c != 0) {
            (false, true) => *nonzero += 1,
            (true, false) => *nonzero -= 1,
            _ => {}
        }
    }
    let (mut ia, mut ib) = (0usize, 0usize);
    for &(sa, sb) in pairs {
        let mut changes_a = Vec::new();
        let mut changes_b = Vec::new();
        while ia < da.len() && da[ia].0 <= sa {
            let d = &da[ia];
            bump(&mut count, &d.2, i64::from(d.1), &mut nonzero);
            changes_a.push(d.0);
            ia += 1;
        }
        while ib < db.len() && db[ib].0 <= sb {
            let d = &db[ib];
            bump(&mut count, &d.2, -i64::from(d.1), &mut nonzero);
            changes_b.push(d.0);
            ib += 1;
        }
        if nonzero > 0 {
            let mut only_a: Vec<String> = Vec::new();
            let mut only_b: Vec<String> = Vec::new();
            for (k, &c) in &count {
                if c > 0 {
                    only_a.push(k.to_string());
                } else if c < 0 {
                    only_b.push(k.to_string());
                }
            }
            only_a.sort();
            only_b.sort();
            changes_a.dedup();
            changes_b.dedup();
            return Some(Divergence {
                a: sa,
                b: sb,
                changes_a,
                changes_b,
                only_a,
                only_b,
            });
        }
    }
    None
}

type VerdictKey = (&'static str, String);

fn claimed_outcome(o: crate::trace::event::Outcome) -> &'static str {
    use crate::trace::event::Outcome as O;
    match o {
        O::Contradiction => "contradiction",
        O::Entailed => "entailed",
        O::Newinfo => "newinfo",
        O::Ungrounded => "ungrounded",
    }
}

fn claimed_answer(a: crate::trace::event::QueryAnswer) -> &'static str {
    use crate::trace::event::QueryAnswer as A;
    match a {
        A::Yes => "yes",
        A::No => "no",
        A::Unknown => "unknown",
    }
}

fn verdicts(run: Run<'_>, rc: &Recomputed) -> BTreeMap<VerdictKey, Vec<VerdictSide>> {
    let mut out: BTreeMap<VerdictKey, Vec<VerdictSide>> = BTreeMap::new();
    let key_of = |texts: Vec<&str>| -> String {
        let fs: Result<Vec<Formula>, _> = texts.iter().map(|t| parse(t)).collect();
        match fs {
            Ok(mut fs) if fs.len() == 1 => normalized(&fs.remove(0)),
            Ok(fs) if !fs.is_empty() => normalized(&Formula::And(fs)),
            _ => texts.join(" & "),
        }
    };
    for v in &rc.verifies {
        let Some(ev) = run.log.events.get(v.event as usize) else {
            continue;
        };
        let Body::Verify(b) = &ev.body else { continue };
        let key = key_of(b.all_formulas().collect());
        out.entry(("verify", key)).or_default().push(VerdictSide {
            step: v.step,
            event: v.event,
            claimed: v.claimed.map(|c| claimed_outcome(c).to_string()),
            recomputed: match &v.result {
                Ok(g) => Ok(g.theta.as_str().to_string()),
                Err(e) => Err(e.to_string()),
            },
        });
    }
    for q in &rc.queries {
        let Some(ev) = run.log.events.get(q.event as usize) else {
            continue;
        };
        let Body::Query(b) = &ev.body else { continue };
        let key = key_of(vec![&b.formula]);
        out.entry(("query", key)).or_default().push(VerdictSide {
            step: q.step,
            event: q.event,
            claimed: q.claimed.map(|c| claimed_answer(c).to_string()),
            recomputed: match &q.result {
                Ok(e) => Ok(e.as_str().to_string()),
                Err(e) => Err(e.to_string()),
            },
        });
    }
    out
}

/// Diffs two runs (see the module docs). Solves recompute both runs' verdicts and the final
/// statuses, each under the budget of `opts`.
pub fn diff(a: Run<'_>, b: Run<'_>, align: Align, opts: &RecomputeOptions) -> RunDiff {
    let (na, nb) = (norms(a), norms(b));
    let Alignment { pairs, divergence } = self::align(a, b, align);
    let (mut ea, mut eb) = (ends(a, &na), ends(b, &nb));
    // Final statuses of every formula either run announced, on each final Σ.
    let keys: Vec<String> = ea
        .keys()
        .chain(eb.keys())
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let phis: Vec<Formula> = keys
        .iter()
        .map(|k| parse(k).unwrap_or(Formula::True))
        .collect();
    let sa = statuses_at(a.tl, a.log, a.tl.len(), &phis, opts);
    let sb = statuses_at(b.tl, b.log, b.tl.len(), &phis, opts);
    let mut only_a = Vec::new();
    let mut only_b = Vec::new();
    let mut status = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        if let Some(e) = ea.get_mut(key) {
            e.status = sa[k].clone();
        }
        if let Some(e) = eb.get_mut(key) {
            e.status = sb[k].clone();
        }
        match (ea.get(key), eb.get(key)) {
            (Some(x), None) => only_a.push(OnlyIn {
                formula: key.clone(),
                record: first_record(&na, key).unwrap_or(0),
                here: x.clone(),
                other: sb[k].clone(),
            }),
            (None, Some(y)) => only_b.push(OnlyIn {
                formula: key.clone(),
                record: first_record(&nb, key).unwrap_or(0),
                here: y.clone(),
                other: sa[k].clone(),
            }),
            (Some(x), Some(y)) => {
                let differs = x.held != y.held
                    || x.left.map(|l| l.1) != y.left.map(|l| l.1)
                    || x.status.as_str() != y.status.as_str();
                if differs {
                    status.push(StatusDiff {
                        formula: key.clone(),
                        a: x.clone(),
                        b: y.clone(),
                    });
                }
            }
            (None, None) => {}
        }
    }
    only_a.sort_by_key(|o| o.record);
    only_b.sort_by_key(|o| o.record);
    // Verdicts.
    let ropts = RecomputeOptions {
        audit: None,
        ..*opts
    };
    let ra = super::recompute::recompute(a.tl, a.log, &ropts);
    let rb = super::recompute::recompute(b.tl, b.log, &ropts);
    let (va, vb) = (verdicts(a, &ra), verdicts(b, &rb));
    let mut vkeys: Vec<&VerdictKey> = va.keys().chain(vb.keys()).collect();
    vkeys.sort();
    vkeys.dedup();
    let mut vdiffs = Vec::new();
    for key in vkeys {
        let xs = va.get(key).map(Vec::as_slice).unwrap_or(&[]);
        let ys = vb.get(key).map(Vec::as_slice).unwrap_or(&[]);
        for n in 0..xs.len().max(ys.len()) {
            let (x, y) = (xs.get(n), ys.get(n));
            let same = match (x, y) {
                (Some(x), Some(y)) => x.claimed == y.claimed && x.recomputed == y.recomputed,
                _ => false,
            };
            if !same {
                vdiffs.push(VerdictDiff {
                    kind: key.0,
                    formula: key.1.clone(),
                    occurrence: n,
                    a: x.cloned(),
                    b: y.cloned(),
                });
            }
        }
    }
    vdiffs.sort_by_key(|v| {
        let s = v.a.as_ref().or(v.b.as_ref()).map_or(0, |s| s.step);
        (s, v.kind, v.occurrence)
    });
    let (items, counts) = events::diff_items(a, b);
    RunDiff {
        align,
        pairs,
        only_a,
        only_b,
        status,
        verdicts: vdiffs,
        divergence,
        items,
        counts,
    }
}

fn first_record(norm: &[Option<String>], key: &str) -> Option<u32> {
    norm.iter()
        .position(|n| n.as_deref() == Some(key))
        .map(|i| i as u32)
}
