//! The history of a formula: every step at which φ changed status, and why.
//!
//! `history φ` answers "when did the agent come to believe φ, when did it stop, and what
//! caused each change?" over a whole session. Asking the engine at every step would cost one
//! solve per event; this module asks far fewer questions, and asks them of one incremental
//! solver walked forward once:
//!
//! - **Σ only changes at announcements and retractions**, so φ's status only changes there.
//!   The [`HistoryIndex`] of a session, built once, lists those *change points* (one record in,
//!   one record out at most per event), the size of Σ after each (the TUI's sparkline) and
//!   whether Σ is consistent after each: one forward walk of one incremental solver that
//!   solves only when consistency can have changed (adding to an inconsistent Σ keeps it
//!   inconsistent, retracting from a consistent one keeps it consistent, and a retraction
//!   that misses the last conflict found changes nothing).
//! - **φ only depends on the beliefs it is connected to.** The index also splits the
//!   session's beliefs into components of a union-find over their atoms (over every belief the
//!   session ever held, so a component at any one step is inside one of them). When Σ is
//!   consistent, Σ ⊨ φ exactly when the beliefs of φ's components entail φ, so a history walks
//!   only those beliefs, and a change point outside them cannot change φ's status. Quantified
//!   formulas ground over the constants of all of Σ and of the question, which links
//!   everything and makes even Σ's consistency depend on φ's constants: a session with one is
//!   walked whole, asked at every change point, and Σ counts as inconsistent for φ when both
//!   Σ ∧ φ and Σ ∧ ¬φ are unsatisfiable over the question's domain (what `entails` says).
//! - **Entailment is monotone.** While Σ stays consistent, adding beliefs keeps φ entailed or
//!   contradicted, and removing beliefs keeps it unknown; an entailed φ stays entailed while
//!   every member of its known minimal support stays in Σ. So [`HistoryIndex::history`] solves
//!   at a change point only when the change can matter, and computes a minimal support at the
//!   start of every entailed stretch (and again when a member of it leaves Σ while φ stays
//!   entailed: φ was *re-derived*).
//!
//! Every solve has the per-request budget of [`RecomputeOptions::timeout`]; a request that
//! runs out is [`Status::NotCheckable`] at that change point, never a verdict, and the next
//! change point is asked afresh. An inconsistent Σ entails everything: that is its own status,
//! [`Status::Inconsistent`], rather than "entailed".
//!
//! The test `tests/model_history.rs` checks the result against a brute-force replay that asks
//! a truth table at every step of small random traces.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use crate::logic::engine::{BeliefSpec, Outcome};
use crate::logic::formula::{Atom, Formula};
use crate::logic::ground;
use crate::logic::print::normalized;
use crate::trace::TraceLog;

use super::recompute::{Mirror, RecomputeOptions, Unknown, role};
use super::timeline::{RetractedBy, Timeline};
use crate::logic::engine::run_with_stack;

/// How long the search for one minimal support may take (then the support is not
/// checkable; the status it explains stands).
pub const SUPPORT_BUDGET: Duration = Duration::from_secs(2);

/// φ's status at a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Σ ⊨ φ, Σ consistent.
    Entailed,
    /// Σ ⊨ ¬φ, Σ consistent.
    Contradicted,
    /// Neither, Σ consistent.
    Unknown,
    /// Σ is inconsistent: it entails everything, φ and ¬φ alike.
    Inconsistent,
    /// The solver could not decide within its budget (or Σ holds a belief it could not take
    /// in): never a verdict.
    NotCheckable(Unknown),
}

impl Status {
    /// `entailed`, `contradicted`, `unknown`, `inconsistent` or `not-checkable`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Entailed => "entailed",
            Status::Contradicted => "contradicted",
            Status::Unknown => "unknown",
            Status::Inconsistent => "inconsistent",
            Status::NotCheckable(_) => "not-checkable",
        }
    }

    /// Whether this is a verdict about φ on a consistent Σ.
    fn is_verdict(&self) -> bool {
        matches!(
            self,
            Status::Entailed | Status::Contradicted | Status::Unknown
        )
    }
}

/// One point at which Σ changed: the event at `step` put at most one record in and took at
/// most one out (a superseding announcement does both).
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// The step (Σ is changed from this step on).
    pub step: u32,
    /// The event, as a position in [`TraceLog::events`].
    pub event: u32,
    /// The record that entered Σ (index into [`Timeline::beliefs`]).
    pub entered: Option<u32>,
    /// The record that left Σ.
    pub left: Option<u32>,
    /// How many beliefs Σ holds from this step on.
    pub size: u32,
    /// Whether Σ is consistent from this step on.
    pub consistent: Result<bool, Unknown>,
}

/// What building an index cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexCost {
    /// Wall time of the build.
    pub elapsed: Duration,
    /// Change points (steps at which Σ changed).
    pub points: usize,
    /// Consistency questions that needed the solver (the rest followed from monotonicity).
    pub solves: u64,
}

/// No component: a belief with no atom (⊤, ⊥) or a formula that does not parse.
const NONE: u32 = u32::MAX;

/// The change points of one session with Σ's size and consistency after each, and the
/// components of its beliefs (see the module docs). Built once; every
/// [`HistoryIndex::history`] reads it.
#[derive(Debug, Clone)]
pub struct HistoryIndex {
    session: String,
    /// The timeline's length and record count when built (a grown timeline needs a new one).
    len: u32,
    records: usize,
    points: Vec<ChangePoint>,
    /// Per record: its component (a union-find root over atoms), or [`NONE`].
    comp: Vec<u32>,
    /// Per record: a hash of its normalized formula (0 when it does not parse).
    norm: Vec<u64>,
    /// Atom -> component.
    atoms: HashMap<Atom, u32>,
    /// Some belief of the session is quantified: every component is one.
    quantified: bool,
    cost: IndexCost,
}

/// What the history of a formula cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HistoryCost {
    /// Wall time.
    pub elapsed: Duration,
    /// Change points of the session.
    pub points: usize,
    /// Change points that touched φ's components.
    pub relevant: usize,
    /// Entailment questions asked of the solver.
    pub checks: u64,
    /// Minimal supports searched for.
    pub supports: u64,
    /// Beliefs walked (those of φ's components).
    pub beliefs: usize,
}

/// A change at a step of φ's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// φ's status changed (to the row's `status`, from its `previous`).
    Status,
    /// A belief with φ's formula (or the id asked about) entered Σ (record index).
    Announced(u32),
    /// Such a belief left Σ (record index), and how.
    Retracted(u32, RetractedBy),
    /// φ stayed entailed, but a member of its support left Σ: it is entailed through
    /// another support (the row's `support`).
    Rederived,
}

impl Change {
    /// `status`, `announced`, `retracted` or `re-derived`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Change::Status => "status",
            Change::Announced(_) => "announced",
            Change::Retracted(..) => "retracted",
            Change::Rederived => "re-derived",
        }
    }
}

/// One step of φ's history.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRow {
    /// The step.
    pub step: u32,
    /// The event that caused the change, as a position in [`TraceLog::events`] (none at
    /// step 0).
    pub event: Option<u32>,
    /// What changed.
    pub changes: Vec<Change>,
    /// φ's status from this step on.
    pub status: Status,
    /// Its status just before.
    pub previous: Status,
    /// When the row starts an entailed stretch or φ was re-derived: a minimal support (record
    /// indices into [`Timeline::beliefs`], in Σ's order), or why none was found in budget.
    pub support: Option<Result<Vec<u32>, Unknown>>,
}

/// The history of a formula over a session.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// The formula, printed.
    pub formula: String,
    /// The belief id asked about, when the question named one.
    pub id: Option<String>,
    /// φ's status at step 0 (Σ empty): `unknown` unless φ is valid or unsatisfiable.
    pub initial: Status,
    /// Every step at which something changed, in step order.
    pub rows: Vec<HistoryRow>,
    /// Whether only φ's components were walked (see the module docs).
    pub pruned: bool,
    /// What it cost.
    pub cost: HistoryCost,
}

impl History {
    /// φ's status at `step` (the last row at or before it).
    pub fn status_at(&self, step: u32) -> &Status {
        self.rows
            .iter()
            .rev()
            .find(|r| r.step <= step)
            .map_or(&self.initial, |r| &r.status)
    }

    /// The steps with a row, for a timeline strip.
    pub fn steps(&self) -> Vec<u32> {
        self.rows.iter().map(|r| r.step).collect()
    }
}

fn norm_hash(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    // 0 marks "does not parse".
    h.finish().max(1)
}

/// Union-find over atom ids.
struct Uf(Vec<u32>);

impl Uf {
    fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            let p = self.0[x as usize];
            self.0[x as usize] = self.0[p as usize];
            x = p;
        }
        x
    }

    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b) as usize] = a.min(b);
        }
    }
}

fn atoms_of(f: &Formula) -> Vec<Atom> {
    let mut set = std::collections::BTreeSet::new();
    ground::atoms(f, &mut set);
    set.into_iter().collect()
}

fn spec_for(tl: &Timeline, log: &TraceLog, rec: u32) -> Option<(BeliefSpec, Formula)> {
    let v = tl.belief(log, rec)?;
    if !v.record.formula_ok {
        return None;
    }
    let f = v.formula().ok()?;
    let c = v.confidence();
    let conf = if c.is_finite() && c > 0.0 {
        c.min(1.0)
    } else {
        f64::MIN_POSITIVE
    };
    let spec = BeliefSpec::new(v.id().to_string(), Formula::True)
        .role(role(v.role()))
        .confidence(conf)
        .step(u64::from(v.step()));
    Some((spec, f))
}

impl HistoryIndex {
    /// Builds the index of a session: its change points, Σ's size and consistency after each
    /// (one forward walk with one incremental solver, on a thread with the engine's stack),
    /// and the components of its beliefs.
    pub fn build(tl: &Timeline, log: &TraceLog, opts: &RecomputeOptions) -> HistoryIndex {
        run_with_stack(|| Self::build_here(tl, log, opts))
    }

    fn build_here(tl: &Timeline, log: &TraceLog, opts: &RecomputeOptions) -> HistoryIndex {
        let t0 = Instant::now();
        let beliefs = tl.beliefs();
        // Change points: every announced step and every retraction step, one event each.
        let mut at: Vec<(u32, Option<u32>, Option<u32>)> = Vec::new();
        let mut by_step: HashMap<u32, usize> = HashMap::new();
        let mut slot = |step: u32, at: &mut Vec<(u32, Option<u32>, Option<u32>)>| {
            *by_step.entry(step).or_insert_with(|| {
                at.push((step, None, None));
                at.len() - 1
            })
        };
        for (i, r) in beliefs.iter().enumerate() {
            let k = slot(r.announced, &mut at);
            at[k].1 = Some(i as u32);
            if let Some(x) = r.retraction {
                let k = slot(x.step, &mut at);
                at[k].2 = Some(i as u32);
            }
        }
        at.sort_unstable_by_key(|p| p.0);
        // Components and formula hashes.
        let mut atom_ids: HashMap<Atom, u32> = HashMap::new();
        let mut uf = Uf(Vec::new());
        let mut first_atom: Vec<u32> = vec![NONE; beliefs.len()];
        let mut norm: Vec<u64> = vec![0; beliefs.len()];
        let mut quantified = false;
        let mut parsed: Vec<Option<Formula>> = Vec::with_capacity(beliefs.len());
        for (i, r) in beliefs.iter().enumerate() {
            let f = if r.formula_ok {
                tl.belief(log, i as u32).and_then(|v| v.formula().ok())
            } else {
                None
            };
            if let Some(f) = &f {
                norm[i] = norm_hash(&normalized(f));
                quantified |= ground::has_quantifier(f);
                let mut prev: Option<u32> = None;
                for a in atoms_of(f) {
                    let n = atom_ids.len() as u32;
                    let id = *atom_ids.entry(a).or_insert_with(|| {
                        uf.0.push(n);
                        n
                    });
                    if let Some(p) = prev {
                        uf.union(p, id);
                    }
                    prev = Some(id);
                    first_atom[i] = id;
                }
            }
            parsed.push(f);
        }
        let comp: Vec<u32> = first_atom
            .iter()
            .map(|&a| if a == NONE { NONE } else { uf.find(a) })
            .collect();
        let atoms: HashMap<Atom, u32> = atom_ids
            .into_iter()
            .map(|(a, id)| (a, uf.find(id)))
            .collect();
        // Consistency along the walk.
        let mut m = Mirror::unchecked(opts);
        let mut size: u32 = 0;
        let mut solves = 0u64;
        let mut points = Vec::with_capacity(at.len());
        for (step, entered, left) in at {
            if let Some(r) = left {
                size = size.saturating_sub(1);
                let _ = m.retract(&beliefs[r as usize].id);
            }
            if let Some(r) = entered {
                size += 1;
                if let (Some((spec, _)), Some(f)) =
                    (spec_for(tl, log, r), parsed[r as usize].as_ref())
                {
                    // A belief the engine cannot take in is listed as missing by the mirror,
                    // which makes every later answer about Σ not checkable until it leaves.
                    let _ = m.add(spec, f);
                }
            }
            if !m.sat_known() {
                solves += 1;
            }
            let consistent = m.sat();
            // A conflict of an inconsistent Σ, found once: retractions that miss it keep Σ
            // inconsistent without a solve (the generated traces stay inconsistent for
            // thousands of steps, and each solve there costs milliseconds).
            if consistent == Ok(false) && !m.conflict_known() {
                solves += 1;
                let _ = m.consistent();
            }
            points.push(ChangePoint {
                step,
                event: tl.event_pos_at(step).unwrap_or(0),
                entered,
                left,
                size,
                consistent,
            });
        }
        let cost = IndexCost {
            elapsed: t0.elapsed(),
            points: points.len(),
            solves,
        };
        HistoryIndex {
            session: tl.name().to_string(),
            len: tl.len(),
            records: beliefs.len(),
            points,
            comp,
            norm,
            atoms,
            quantified,
            cost,
        }
    }

    /// The session it indexes.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Whether it still describes `tl` (a followed trace grows: then build a new one).
    pub fn is_current(&self, tl: &Timeline) -> bool {
        self.len == tl.len() && self.records == tl.beliefs().len() && self.session == tl.name()
    }

    /// The change points in step order.
    pub fn points(&self) -> &[ChangePoint] {
        &self.points
    }

    /// What building it cost.
    pub fn cost(&self) -> IndexCost {
        self.cost
    }

    /// The change point in force at `step` (the last at or before it); `None` before the
    /// first (Σ empty).
    pub fn point_at(&self, step: u32) -> Option<&ChangePoint> {
        let k = self.points.partition_point(|p| p.step <= step);
        k.checked_sub(1).map(|k| &self.points[k])
    }

    /// Σ's size at `step`.
    pub fn size_at(&self, step: u32) -> u32 {
        self.point_at(step).map_or(0, |p| p.size)
    }

    /// Whether Σ is consistent at `step` (an empty Σ is).
    pub fn consistent_at(&self, step: u32) -> Result<bool, Unknown> {
        self.point_at(step)
            .map_or(Ok(true), |p| p.consistent.clone())
    }

    /// The history of `phi` over the session (see the module docs). With `id`, the
    /// records of that belief id count as announcements and retractions of φ too.
    pub fn history(
        &self,
        tl: &Timeline,
        log: &TraceLog,
        phi: &Formula,
        id: Option<&str>,
        opts: &RecomputeOptions,
    ) -> History {
        run_with_stack(|| self.history_here(tl, log, phi, id, opts))
    }

    fn history_here(
        &self,
        tl: &Timeline,
        log: &TraceLog,
        phi: &Formula,
        id: Option<&str>,
        opts: &RecomputeOptions,
    ) -> History {
        let t0 = Instant::now();
        let beliefs = tl.beliefs();
        let whole = self.quantified || ground::has_quantifier(phi);
        let phi_comps: Vec<u32> = atoms_of(phi)
            .iter()
            .filter_map(|a| self.atoms.get(a).copied())
            .collect();
        let relevant = |r: u32| -> bool {
            whole || {
                let c = self.comp.get(r as usize).copied().unwrap_or(NONE);
                c != NONE && phi_comps.contains(&c)
            }
        };
        let phi_norm = normalized(phi);
        let phi_hash = norm_hash(&phi_norm);
        let is_phi = |r: u32| -> bool {
            let rec = &beliefs[r as usize];
            if id.is_some_and(|i| *rec.id == *i) {
                return true;
            }
            self.norm.get(r as usize) == Some(&phi_hash)
                && tl
                    .belief(log, r)
                    .and_then(|v| v.formula().ok())
                    .is_some_and(|f| normalized(&f) == phi_norm)
        };
        let mut cost = HistoryCost {
            points: self.points.len(),
            ..HistoryCost::default()
        };
        let mut m = Mirror::unchecked(opts);
        let mut active: HashMap<String, u32> = HashMap::new();
        let not_phi = Formula::Not(Box::new(phi.clone()));
        // On a Σ known consistent, one gate decides. With quantifiers Σ's consistency depends
        // on the domain, which the question's constants extend (contract §3), so the index's
        // consistency (over Σ's own constants) does not apply: Σ ∧ φ and Σ ∧ ¬φ both
        // unsatisfiable over the question's domain is an inconsistent Σ.
        let check = |m: &mut Mirror, cost: &mut HistoryCost| -> Status {
            let (status, checks) = status_on(m, phi, &not_phi, whole);
            cost.checks += checks;
            status
        };
        let support_of = |m: &mut Mirror,
                          cost: &mut HistoryCost,
                          active: &HashMap<String, u32>|
         -> Result<Vec<u32>, Unknown> {
            cost.supports += 1;
            match m.support_one(phi, SUPPORT_BUDGET.min(opts.timeout)) {
                Ok(Some(ids)) => {
                    let mut recs: Vec<u32> = ids
                        .iter()
                        .filter_map(|i| active.get(i.as_str()).copied())
                        .collect();
                    recs.sort_unstable();
                    Ok(recs)
                }
                // The gate said entailed; a support search that finds none disagrees with it.
                Ok(None) => Err(Unknown::Engine(
                    "no support found for an entailed formula".into(),
                )),
                Err(e) => Err(e),
            }
        };
        // Step 0: Σ is empty and consistent.
        let initial = check(&mut m, &mut cost);
        let mut rows: Vec<HistoryRow> = Vec::new();
        let mut status = initial.clone();
        let mut support: Option<Result<Vec<u32>, Unknown>> = None;
        if status == Status::Entailed {
            support = Some(support_of(&mut m, &mut cost, &active));
        }
        if status != Status::Unknown {
            rows.push(HistoryRow {
                step: 0,
                event: None,
                changes: vec![Change::Status],
                status: status.clone(),
                previous: Status::Unknown,
                support: support.clone(),
            });
        }
        for p in &self.points {
            let mut changes: Vec<Change> = Vec::new();
            let mut touched_in = false;
            let mut touched_out: Option<u32> = None;
            if let Some(r) = p.left {
                if is_phi(r) {
                    let by = beliefs[r as usize]
                        .retraction
                        .map_or(RetractedBy::Unspecified, |x| x.by);
                    changes.push(Change::Retracted(r, by));
                }
                if relevant(r) {
                    touched_out = Some(r);
                    let id = &beliefs[r as usize].id;
                    active.remove(id.as_str());
                    let _ = m.retract(id);
                }
            }
            if let Some(r) = p.entered {
                if is_phi(r) {
                    changes.push(Change::Announced(r));
                }
                if relevant(r) {
                    touched_in = true;
                    if let Some((spec, f)) = spec_for(tl, log, r) {
                        active.insert(spec.id.clone(), r);
                        cost.beliefs += 1;
                        let _ = m.add(spec, &f);
                    }
                }
            }
            if touched_in || touched_out.is_some() {
                cost.relevant += 1;
            }
            let support_hit = match (&support, touched_out) {
                (Some(Ok(s)), Some(r)) => s.contains(&r),
                (Some(Err(_)), Some(_)) => true,
                _ => false,
            };
            let new = match &p.consistent {
                _ if whole => check(&mut m, &mut cost),
                Err(u) => Status::NotCheckable(u.clone()),
                Ok(false) => Status::Inconsistent,
                Ok(true) => {
                    let unchanged = status.is_verdict()
                        && !whole
                        && match (&status, touched_in, touched_out.is_some()) {
                            (_, false, false) => true,
                            (Status::Entailed | Status::Contradicted, true, false) => true,
                            (Status::Unknown, false, true) => true,
                            (Status::Entailed, false, true) => !support_hit,
                            _ => false,
                        };
                    if unchanged {
                        status.clone()
                    } else {
                        check(&mut m, &mut cost)
                    }
                }
            };
            let became = new != status;
            if new == Status::Entailed && (became || support_hit) {
                let s = support_of(&mut m, &mut cost, &active);
                if !became && support_hit && matches!(support, Some(Ok(_))) {
                    changes.push(Change::Rederived);
                }
                support = Some(s);
            } else if new != Status::Entailed {
                support = None;
            }
            if became {
                changes.insert(0, Change::Status);
            }
            if !changes.is_empty() {
                let row_support = if new == Status::Entailed
                    && (became || changes.contains(&Change::Rederived))
                {
                    support.clone()
                } else {
                    None
                };
                rows.push(HistoryRow {
                    step: p.step,
                    event: Some(p.event),
                    changes,
                    status: new.clone(),
                    previous: status.clone(),
                    support: row_support,
                });
            }
            status = new;
        }
        cost.elapsed = t0.elapsed();
        History {
            formula: phi.to_string(),
            id: id.map(str::to_string),
            initial,
            rows,
            pruned: !whole,
            cost,
        }
    }
}

/// The status of each of `phis` on Σ at `step` of a session: one mirror of Σ(step) answers
/// them all (what `diff` asks of the end of two runs). Each solve has the budget of `opts`.
pub fn statuses_at(
    tl: &Timeline,
    log: &TraceLog,
    step: u32,
    phis: &[Formula],
    opts: &RecomputeOptions,
) -> Vec<Status> {
    run_with_stack(|| {
        let mut m = Mirror::unchecked(opts);
        let mut quantified = phis.iter().any(ground::has_quantifier);
        for v in tl.sigma_at(log, step) {
            if let Some((spec, f)) = spec_for(tl, log, v.index) {
                quantified |= ground::has_quantifier(&f);
                let _ = m.add(spec, &f);
            }
        }
        let consistent = if quantified { Ok(true) } else { m.sat() };
        phis.iter()
            .map(|phi| match &consistent {
                Err(u) => Status::NotCheckable(u.clone()),
                Ok(false) => Status::Inconsistent,
                Ok(true) => {
                    let not_phi = Formula::Not(Box::new(phi.clone()));
                    status_on(&mut m, phi, &not_phi, quantified).0
                }
            })
            .collect()
    })
}

/// φ's status on the mirror's Σ, and how many gates it took. One gate decides on a Σ known
/// consistent; where that is not known (`unsure`: with quantifiers Σ's consistency depends on
/// the domain the question's constants extend), Σ ∧ φ and Σ ∧ ¬φ both unsatisfiable is an
/// inconsistent Σ, not a contradicted φ.
fn status_on(m: &mut Mirror, phi: &Formula, not_phi: &Formula, unsure: bool) -> (Status, u64) {
    match m.gate(phi, &[]) {
        Ok(g) => match g.theta {
            Outcome::Entailed => (Status::Entailed, 1),
            Outcome::Contradiction if unsure => match m.gate(not_phi, &[]) {
                Ok(n) if n.theta == Outcome::Contradiction => (Status::Inconsistent, 2),
                Ok(_) => (Status::Contradicted, 2),
                Err(e) => (Status::NotCheckable(e), 2),
            },
            Outcome::Contradiction => (Status::Contradicted, 1),
            _ => (Status::Unknown, 1),
        },
        Err(e) => (Status::NotCheckable(e), 1),
    }
}
