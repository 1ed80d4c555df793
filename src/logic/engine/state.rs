//! [`State`], the belief state itself: the clause log that feeds both solvers, the
//! rules-only solver, grounding over the active domain, query probes and their batched
//! retirement, and `add`/`retract`. The gate lives in `snapshot.rs`, explanations in
//! `explain.rs`, revision in `revise.rs`; all of them are methods of this one type.

use compact_str::CompactString;
use hashbrown::{HashMap, HashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use varisat::Lit;

use super::{Added, BeliefSpec, EngineError, Limits, Role};
use crate::logic::cnf::{self, Tseitin};
use crate::logic::formula::{Atom, Formula};
use crate::logic::ground;
use crate::logic::solver::{Sat, Stop};

/// A clause-log entry: which solver(s) a clause belongs to.
#[derive(Debug, Clone)]
pub(super) enum Entry {
    /// Every solver (definitions, probes).
    Both(Vec<Lit>),
    /// Selector clauses of unquantified beliefs (rules and norms included) and their
    /// retirement units: main solver only, not the snapshot, which holds those beliefs
    /// unguarded (a selector there would only be one more free variable for every solve to
    /// decide). Added to the main solver and not kept in the log, which only the snapshot
    /// is rebuilt from.
    Guard(Vec<Lit>),
    /// Unguarded clauses of an unquantified belief: snapshot solver only, dead once the
    /// belief is retracted.
    Snap(Vec<Lit>, usize),
}

/// The clause log the snapshot solver is rebuilt from ([`Entry::Both`] and [`Entry::Snap`]
/// clauses, in the order they were added), flat: every clause's literals in one vector, with
/// each clause's length and owner beside it. A `Vec` per clause cost its 24-byte header, an
/// allocation of its own and the entry's tag and belief index, about three times the literals
/// of a short clause; the log holds every clause a session ever added, so this was one of the
/// largest parts of an audit's engine state.
#[derive(Debug, Default)]
pub(super) struct ClauseLog {
    lits: Vec<Lit>,
    /// Each clause's length (at most [`cnf::MAX_CLAUSE`]: longer ones are cut into chains
    /// before they are logged).
    lens: Vec<u8>,
    /// Each clause's owner: the belief whose unguarded clause it is ([`Entry::Snap`]), or
    /// [`ClauseLog::BOTH`] for a clause of every solver ([`Entry::Both`]).
    owners: Vec<u32>,
}

impl ClauseLog {
    /// The owner of an [`Entry::Both`] clause.
    const BOTH: u32 = u32::MAX;

    /// Appends a clause of at most [`cnf::MAX_CLAUSE`] literals; `owner` is the belief of a
    /// snapshot-only clause, `None` for a clause of every solver.
    fn push(&mut self, clause: &[Lit], owner: Option<usize>) {
        self.lits.extend_from_slice(clause);
        // `State::push` cuts longer clauses first; a belief index never nears u32::MAX (the
        // occurrence index already counts beliefs in u32).
        self.lens
            .push(u8::try_from(clause.len()).unwrap_or(u8::MAX));
        self.owners
            .push(owner.map_or(Self::BOTH, |b| u32::try_from(b).unwrap_or(Self::BOTH - 1)));
    }

    /// How many clauses it holds.
    pub(super) fn len(&self) -> usize {
        self.lens.len()
    }

    /// Every clause in order, with its owner (`None`: every solver's).
    pub(super) fn iter(&self) -> impl Iterator<Item = (&[Lit], Option<usize>)> {
        let mut at = 0;
        self.lens.iter().zip(&self.owners).map(move |(&n, &o)| {
            let c = &self.lits[at..at + usize::from(n)];
            at += usize::from(n);
            (c, (o != Self::BOTH).then_some(o as usize))
        })
    }
}

/// A formula prepared for assumption: see [`State::query`]. Its two sides are read with
/// [`State::pos`] and [`State::neg`].
#[derive(Debug)]
pub(super) struct Query {
    /// What makes the formula true; a clause side becomes a probe when first read.
    pub(super) pos: Side,
    /// What makes the formula false; likewise.
    pub(super) neg: Side,
    pub(super) probes: Vec<Lit>,
    /// The probe standing for the true side, if one was made.
    pub(super) pos_probe: Option<Lit>,
    /// The ground formula.
    pub(super) formula: Formula,
}

/// How many dead probes are retired at once.
const PROBE_BATCH: usize = 64;

/// How many retracted selectors wait, assumed false, before their retirement units are
/// added: like probe retirements, each level-0 unit makes varisat re-simplify the whole main
/// solver on its next solve, while a waiting selector costs one assumption per solve.
const RETIRE_BATCH: usize = 64;

/// One side of a formula: all of these literals, or one clause of them.
#[derive(Debug)]
pub(super) enum Side {
    Units(Vec<Lit>),
    Clause(Vec<Lit>),
}

/// A belief as stored on the solver thread.
#[derive(Debug, Clone)]
pub(super) struct Belief {
    pub(super) spec: BeliefSpec,
    pub(super) sel: Lit,
    pub(super) active: bool,
    pub(super) seq: u64,
    /// The grounding over the current domain, for a quantified formula (boxed, like the
    /// constants: a state holds every belief ever added, and most have neither).
    pub(super) ground: Option<Box<Formula>>,
    /// The constants of the formula as given (its share of the active domain).
    consts: Box<[String]>,
    /// How many atom occurrences the formula has (saturating): what evaluating it costs.
    pub(super) size: u32,
    /// The formula as a clause of atom literals, when it is one (a literal or a disjunction
    /// of literals: most beliefs of a trace), so that [`State::repair`] evaluates it on
    /// variables without looking its atoms up.
    pub(super) clause: Option<Box<[Lit]>>,
}

impl Belief {
    /// The ground formula the solver holds for this belief.
    pub(super) fn formula(&self) -> &Formula {
        self.ground.as_deref().unwrap_or(&self.spec.formula)
    }
}

/// The unquantified rules and norms alone, on a solver of their own: what a new rule or norm
/// is checked against before it is accepted. On the main solver that check had to switch off
/// every other selector of Σ, thousands of assumptions per solve (measured: a tenth of an
/// audit's solver time); here it assumes the rules alone. A satisfiable answer is final; an
/// unsatisfiable one (or any quantified belief, whose grounding this solver does not follow)
/// sends the check to the main solver, which also names the conflict.
///
/// The rules sit in *chunks* of up to [`RULE_CHUNK`], one selector per chunk. The active
/// rules of a long trace form one large, tightly constrained formula, and a rule that does not
/// fit needs a refutation of it: with one selector per rule every solve replayed thousands of
/// assumptions and everything varisat learned carried as many selector literals (on the
/// 1,000,000-event trace a third of the audit, growing with the trace). A retraction retires
/// its chunk's selector and puts the chunk's other rules behind a fresh one: one binary clause
/// each, since their definitions stay in the solver. The solver is rebuilt from the active
/// rules alone once what it holds (definitions of candidates that were refused, retired
/// chunks) outgrows them, amortized over what was added. A model of the rules is kept: a new
/// rule it satisfies fits without a solve, and it stays a model while rules are retracted or
/// added through a check that produced it.
pub(super) struct Rules {
    enc: Tseitin,
    sat: Sat,
    cancel: Arc<Stop>,
    /// The active unquantified rules and norms: belief index -> (ground formula, its
    /// definition literal here, its chunk).
    active: BTreeMap<usize, (Formula, Lit, usize)>,
    /// Each chunk's selector and members (belief indices); the last one takes new rules.
    chunks: Vec<(Lit, Vec<usize>)>,
    /// Clauses added since the last rebuild, and how many the rebuild added.
    added: usize,
    base: usize,
    /// Rebuilds so far (tests check that their walks reach one).
    #[cfg(test)]
    pub(super) rebuilds: usize,
    /// Rules refused by the unit rules alone, without a solve (likewise).
    #[cfg(test)]
    pub(super) unit_refusals: usize,
    /// A model of the active rules (indexed by this solver's variables), when one is known.
    model: Option<Vec<bool>>,
    /// The active rules that are a literal, counted per atom and sign (`[negative,
    /// positive]`): what every model of the rules gives those atoms, so that a rule false
    /// under them is refused without a solve ([`Rules::units_refute`]).
    units: HashMap<Atom, [u32; 2]>,
}

/// The most rules behind one selector of [`Rules`]: a retraction re-adds up to this many
/// binary clauses, and a check assumes one selector per chunk. (Small in unit tests, so that
/// their short walks cross chunks and rebuilds.)
const RULE_CHUNK: usize = if cfg!(test) { 3 } else { 64 };

/// The clauses [`Rules`] may add beyond four times what its last rebuild added before it is
/// rebuilt again.
const RULE_SLACK: usize = if cfg!(test) { 8 } else { 4096 };

impl Rules {
    fn new(cancel: Arc<Stop>) -> Self {
        Rules {
            enc: Tseitin::new(),
            sat: Sat::new(cancel.clone()),
            cancel,
            active: BTreeMap::new(),
            chunks: Vec::new(),
            added: 0,
            base: 0,
            #[cfg(test)]
            rebuilds: 0,
            #[cfg(test)]
            unit_refusals: 0,
            model: None,
            units: HashMap::new(),
        }
    }

    /// The atom and sign of a rule that is a literal.
    fn unit(f: &Formula) -> Option<(&Atom, bool)> {
        match f {
            Formula::Atom(a) => Some((a, true)),
            Formula::Not(g) => match &**g {
                Formula::Atom(a) => Some((a, false)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Counts rule `f` in or out of [`Rules::units`].
    fn count_unit(&mut self, f: &Formula, delta: i32) {
        let Some((a, sign)) = Self::unit(f) else {
            return;
        };
        let n = self.units.entry(a.clone()).or_default();
        n[usize::from(sign)] = n[usize::from(sign)].saturating_add_signed(delta);
        if *n == [0, 0] {
            self.units.remove(a);
        }
    }

    /// Whether `f` is false whatever the atoms the unit rules leave open are (Kleene's
    /// three-valued evaluation under the units): then no model of the rules satisfies it.
    /// A long trace's rules pin most atoms with units (about a third of the generated
    /// trace's rules are a literal), and refusing the rules that contradict them took a
    /// refutation each, whose cost grew with the rules held (issue 31: 20,700 refutations
    /// in the audit of the 3,000,000-event prefix, 5,365 with this).
    fn units_refute(&self, f: &Formula) -> bool {
        let value = |a: &Atom| match self.units.get(a) {
            Some(&[0, p]) if p > 0 => Some(true),
            Some(&[n, 0]) if n > 0 => Some(false),
            _ => None,
        };
        kleene(f, &value) == Some(false)
    }

    fn clause(&mut self, c: &[Lit]) {
        self.added += 1;
        self.sat.add_clause(c);
    }

    /// The definition literal of `f`, its definitions added.
    fn encode(&mut self, f: &Formula) -> Result<Lit, EngineError> {
        let mut cls: Vec<Vec<Lit>> = Vec::new();
        let t = self.enc.encode(f, &mut cls)?;
        for c in &cls {
            self.clause(c);
        }
        Ok(t)
    }

    /// Puts rule `idx` (definition literal `t`) into the open chunk.
    fn place(&mut self, idx: usize, t: Lit) -> usize {
        if self.chunks.last().is_none_or(|c| c.1.len() >= RULE_CHUNK) {
            let s = self.enc.fresh_var().positive();
            self.chunks.push((s, Vec::new()));
        }
        let k = self.chunks.len() - 1;
        let s = self.chunks[k].0;
        self.chunks[k].1.push(idx);
        self.clause(&[!s, t]);
        k
    }

    /// A fresh solver holding the active rules alone. The model survives through the atoms.
    fn rebuild(&mut self) -> Result<(), EngineError> {
        let values: Option<Vec<(Atom, bool)>> = self.model.as_ref().map(|m| {
            self.enc
                .atoms()
                .map(|(a, v)| (a.clone(), m.get(v.index()).copied().unwrap_or(false)))
                .collect()
        });
        let rules: Vec<(usize, Formula)> = std::mem::take(&mut self.active)
            .into_iter()
            .map(|(i, (f, _, _))| (i, f))
            .collect();
        self.enc = Tseitin::new();
        self.sat = Sat::new(self.cancel.clone());
        self.chunks.clear();
        self.added = 0;
        for (i, f) in rules {
            let t = self.encode(&f)?;
            let k = self.place(i, t);
            self.active.insert(i, (f, t, k));
        }
        self.base = self.added;
        #[cfg(test)]
        {
            self.rebuilds += 1;
        }
        self.model = values.map(|vals| {
            let mut m = vec![false; self.enc.num_vars()];
            for (a, b) in vals {
                if let Some(v) = self.enc.atom_var(&a)
                    && let Some(x) = m.get_mut(v.index())
                {
                    *x = b;
                }
            }
            m
        });
        Ok(())
    }

    /// Whether the cached model satisfies `f` (atoms it does not know read as false, as
    /// everywhere: no rule the model was checked against mentions them).
    fn model_satisfies(&self, f: &Formula) -> bool {
        let Some(m) = &self.model else {
            return false;
        };
        cnf::eval(f, &mut |a| {
            self.enc
                .atom_var(a)
                .and_then(|v| m.get(v.index()).copied())
                .unwrap_or(false)
        }) == Some(true)
    }

    /// Whether the active rules and norms together with `f` are satisfiable.
    fn fit(&mut self, f: &Formula) -> Result<bool, EngineError> {
        if self.model_satisfies(f) {
            return Ok(true);
        }
        if self.units_refute(f) {
            #[cfg(test)]
            {
                self.unit_refusals += 1;
            }
            return Ok(false);
        }
        if self.added > 4 * self.base + RULE_SLACK {
            self.rebuild()?;
        }
        let t = self.encode(f)?;
        let mut a: Vec<Lit> = self.chunks.iter().map(|c| c.0).collect();
        a.push(t);
        if !self.sat.solve(&a)? {
            return Ok(false);
        }
        let mut m = vec![false; self.enc.num_vars()];
        for l in self.sat.model().unwrap_or_default() {
            if let Some(x) = m.get_mut(l.index()) {
                *x = l.is_positive();
            }
        }
        self.model = Some(m);
        Ok(true)
    }

    fn add(&mut self, idx: usize, f: &Formula) -> Result<(), EngineError> {
        if !self.model_satisfies(f) {
            self.model = None;
        }
        let t = self.encode(f)?;
        let k = self.place(idx, t);
        self.count_unit(f, 1);
        if let Some((old, _, _)) = self.active.insert(idx, (f.clone(), t, k)) {
            // Not reached (a belief is added again only once retracted), but a replaced
            // rule must not keep its unit counted.
            self.count_unit(&old, -1);
        }
        Ok(())
    }

    fn retract(&mut self, idx: usize) {
        let Some((f, _, k)) = self.active.remove(&idx) else {
            return;
        };
        self.count_unit(&f, -1);
        let old = self.chunks[k].0;
        let members = std::mem::take(&mut self.chunks[k].1);
        // The unit keeps the retired selector off (a free one could be switched on by a
        // saved phase).
        self.clause(&[!old]);
        let s = self.enc.fresh_var().positive();
        let mut kept = Vec::with_capacity(members.len());
        for m in members {
            if m == idx {
                continue;
            }
            if let Some(&(_, t, _)) = self.active.get(&m) {
                self.clause(&[!s, t]);
                kept.push(m);
            }
        }
        self.chunks[k] = (s, kept);
    }
}

/// `f` under a partial assignment (`None`: unknown), in Kleene's three-valued logic: a
/// known value is the value of every completion of the assignment.
fn kleene(f: &Formula, value: &impl Fn(&Atom) -> Option<bool>) -> Option<bool> {
    match f {
        Formula::True => Some(true),
        Formula::False => Some(false),
        Formula::Atom(a) => value(a),
        Formula::Not(g) => kleene(g, value).map(|b| !b),
        Formula::And(cs) => {
            let mut all = Some(true);
            for c in cs {
                match kleene(c, value) {
                    Some(false) => return Some(false),
                    None => all = None,
                    Some(true) => {}
                }
            }
            all
        }
        Formula::Or(cs) => {
            let mut any = Some(false);
            for c in cs {
                match kleene(c, value) {
                    Some(true) => return Some(true),
                    None => any = None,
                    Some(false) => {}
                }
            }
            any
        }
        Formula::Implies(a, b) => match (kleene(a, value), kleene(b, value)) {
            (Some(false), _) | (_, Some(true)) => Some(true),
            (Some(true), Some(false)) => Some(false),
            _ => None,
        },
        Formula::Iff(a, b) => Some(kleene(a, value)? == kleene(b, value)?),
        Formula::Forall(..) | Formula::Exists(..) => None,
    }
}

/// The state living on the solver thread. All operations are methods here; the
/// [`BeliefState`](super::BeliefState) handle ships them over.
pub struct State {
    pub(super) enc: Tseitin,
    pub(super) main: Sat,
    pub(super) rules: Rules,
    pub(super) log: ClauseLog,
    pub(super) beliefs: Vec<Belief>,
    /// Each id's belief. Keyed by a copy of the id, inline up to 24 bytes: comparing a
    /// key then reads the table's own slot, not a string elsewhere on the heap (a cache
    /// miss a lookup on a long session, issue 31).
    by_id: HashMap<CompactString, usize>,
    /// A model of the current Σ on the main solver, indexed by variable.
    pub(super) model: Option<Vec<bool>>,
    assumptions: Option<Vec<Lit>>,
    pub(super) cancel: Arc<Stop>,
    limits: Limits,
    seq: u64,
    pub(super) dead_probes: Vec<Lit>,
    /// Selectors of retracted unquantified beliefs whose unit `¬s` is not yet in
    /// the log (the main solver assumes it until then; see [`RETIRE_BATCH`]).
    dead_sels: Vec<Lit>,
    /// Probes that became selectors of unquantified beliefs (belief index): the snapshot
    /// holds those beliefs unguarded, so there they are retired with the next probe batch.
    snap_retire: Vec<(Lit, usize)>,
    last_probe: Option<(Formula, Lit)>,
    /// How many active beliefs mention each constant: the domain of Σ, kept up to date on
    /// every add and retraction so that a request only adds its own constants.
    consts: BTreeMap<String, u32>,
    /// The domain the active quantified beliefs are grounded over.
    grounded_over: Vec<String>,
    /// Number of active quantified beliefs (0: no request needs a domain).
    pub(super) quantified_active: usize,
    /// Σ as plain clauses (None after a retraction until rebuilt); see [`State::sat_with`].
    pub(super) snap: Option<Sat>,
    /// Active beliefs (indices, ascending) that are unsatisfiable together, checked on a
    /// fresh solver: while every one of them stays active Σ is inconsistent, and every
    /// question about Σ ∧ something is answered without a solve (see [`State::sat_with`]).
    /// Adding keeps it; retracting a member (or re-grounding) drops it.
    pub(super) core: Option<Vec<usize>>,
    /// A belief index below which the active beliefs, as grounded now, are known consistent
    /// together: where [`State::sigma_conflict`]'s search for the shortest inconsistent
    /// prefix of Σ starts. Adding appends beyond it and retracting only weakens a prefix, so
    /// both keep it; re-grounding lowers it to 0 and a reactivation to the belief's index.
    /// Without it every conflict searched all of Σ again, by bisection, with solves over a
    /// Σ that grows with the trace (issue 31).
    pub(super) sat_prefix: usize,
    pub(super) dirty_calls: usize,
    /// Number of quantified beliefs ever added (0: no selector to assume on the snapshot).
    pub(super) quantified: usize,
    clauses: usize,
    scratch: Vec<Vec<Lit>>,
    /// For each atom variable, the unquantified beliefs mentioning it (retracted ones too,
    /// until the next compaction): which beliefs a change of that atom's value can falsify,
    /// what [`State::repair`] re-evaluates.
    pub(super) occ: Vec<Vec<u32>>,
    /// Beliefs indexed in `occ` and retracted since: it is rebuilt from the active beliefs
    /// once they outnumber the active ones, which keeps it proportional to Σ.
    occ_dead: usize,
    occ_live: usize,
    /// The beliefs indexed in `occ`, retracted ones included until the next compaction.
    occ_members: Vec<u32>,
    /// The variables the state needed when it was built from Σ ([`State::outgrown`]).
    base_vars: usize,
    /// The active beliefs it was built from (0: it was not).
    base_live: usize,
    /// Turns [`State::repair`] off, so that a test can compare its answers with solved ones.
    #[cfg(test)]
    pub(super) repair_off: bool,
    /// Searches of Σ's conflict made on a known core's prefix (see `prefix_conflict`).
    #[cfg(test)]
    pub(super) prefix_searches: usize,
}

/// How far a state may outgrow Σ before [`State::outgrown`] says so: retired beliefs beyond
/// twice the active ones, and variables beyond what Σ needs by more than half of that, at
/// most [`GARBAGE_VARS`] (and at least [`OUTGROWN_VARS`]). varisat keeps per-variable data
/// for every variable it was ever given (the definitions of every question asked included),
/// the largest part of a long session's engine. Small under test, so that every engine test
/// of the local engine also runs across rebuilds.
///
/// The floors are for a small Σ, where a rebuild replays next to nothing and every solve
/// pays for each retired belief and variable it still holds (a satisfiable solve assigns
/// them all): a trace writing one name a new value at every step spent 0.3 ms a step on
/// up to 4,096 retired writes under the earlier floors (4,096 beliefs, 65,536 variables),
/// 16,000 steps in 4.9 s against 1.2 s now (`cargo bench --bench audit_state`). A large Σ
/// is bounded by its own size, as before.
const OUTGROWN_BELIEFS: usize = if cfg!(test) { 8 } else { 512 };
const OUTGROWN_VARS: usize = if cfg!(test) { 64 } else { 1 << 13 };
/// The most variables a state may hold beyond what Σ needs. Beyond about 500,000 variables
/// varisat's arrays double once more: a 10M session's engine that let its garbage grow to
/// half of Σ's variables ended 120 MiB larger (678 MiB against 557), while this cap keeps it
/// where rebuilding at every half again of Σ kept it (565 MiB).
const GARBAGE_VARS: usize = if cfg!(test) { 256 } else { 1 << 17 };

/// How [`State::add_inner`] treats a rule or norm that may contradict the hard part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HardCheck {
    /// Not checked (a belief known to have been accepted before).
    Skip,
    /// Refused with a minimal conflict.
    Explain,
    /// Refused, naming only the new belief (the caller demotes it).
    Detect,
}

impl State {
    /// An empty state whose solvers stop when `cancel` says so.
    pub fn new(cancel: Arc<Stop>, limits: Limits) -> Self {
        let snap = Some(Sat::new_dense(Arc::clone(&cancel)));
        State {
            enc: Tseitin::new(),
            main: Sat::new(cancel.clone()),
            rules: Rules::new(cancel.clone()),
            log: ClauseLog::default(),
            beliefs: Vec::new(),
            by_id: HashMap::new(),
            model: None,
            assumptions: None,
            cancel,
            limits,
            seq: 0,
            dead_probes: Vec::new(),
            dead_sels: Vec::new(),
            snap_retire: Vec::new(),
            last_probe: None,
            consts: BTreeMap::new(),
            grounded_over: Vec::new(),
            quantified_active: 0,
            snap,
            core: None,
            sat_prefix: 0,
            dirty_calls: 0,
            quantified: 0,
            clauses: 0,
            scratch: Vec::new(),
            occ: Vec::new(),
            occ_dead: 0,
            occ_live: 0,
            occ_members: Vec::new(),
            base_vars: 0,
            base_live: 0,
            #[cfg(test)]
            repair_off: false,
            #[cfg(test)]
            prefix_searches: 0,
        }
    }

    /// Encodes `f` into permanent definitions (both solvers) and returns its literal.
    pub(super) fn encode(&mut self, f: &Formula) -> Result<Lit, EngineError> {
        // A literal of a known atom adds nothing: no clause, no variable to reserve.
        if let Some((a, positive)) = literal(f)
            && let Some(v) = self.enc.atom_var(a)
        {
            return Ok(v.lit(positive));
        }
        self.reserve(f)?;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let lit = self.enc.encode(f, &mut scratch);
        for c in scratch.drain(..) {
            self.push(Entry::Both(c));
        }
        self.scratch = scratch;
        Ok(lit?)
    }

    /// Refuses `f` when encoding it (plus a selector clause per conjunct) could exceed the
    /// variable or clause cap. Checked before anything is added.
    fn reserve(&self, f: &Formula) -> Result<(), EngineError> {
        let mut bound = cnf::size_bound(f);
        if let Formula::And(cs) = f {
            bound.clauses += cs.len();
        }
        if bound.vars > self.limits.max_formula_vars {
            return Err(EngineError::TooLarge {
                what: "variables in one formula",
                needed: bound.vars,
                cap: self.limits.max_formula_vars,
            });
        }
        if bound.clauses > self.limits.max_formula_clauses {
            return Err(EngineError::TooLarge {
                what: "clauses in one formula",
                needed: bound.clauses,
                cap: self.limits.max_formula_clauses,
            });
        }
        let vars = self.enc.num_vars() + bound.vars;
        if vars > self.limits.max_vars {
            return Err(EngineError::TooLarge {
                what: "variables",
                needed: vars,
                cap: self.limits.max_vars,
            });
        }
        let clauses = self.clauses + bound.clauses;
        if clauses > self.limits.max_clauses {
            return Err(EngineError::TooLarge {
                what: "clauses",
                needed: clauses,
                cap: self.limits.max_clauses,
            });
        }
        Ok(())
    }

    /// Prepares a formula for assuming it true (`pos`) or false (`neg`) on top of Σ.
    ///
    /// Only the subformulas get permanent definitions. The top connective is handled by
    /// shape so that queries add no permanent free variable (every free variable costs on
    /// every later solve): a conjunction is assumed true as its conjuncts and a disjunction
    /// false as its negated disjuncts; the other side (one clause) goes behind a fresh
    /// *probe* literal `q` with the clause `¬q ∨ …`, retired by [`State::finish`] with the
    /// unit `¬q` so varisat deletes it.
    ///
    /// The probe is made only when that side is first read ([`State::pos`], [`State::neg`]):
    /// the gate usually decides one side from the cached model, and for a clause Δ that is
    /// the true side, so most checks of a clause make no probe at all (each probe is a free
    /// variable until retired and each retirement a level-0 unit that makes varisat
    /// re-simplify its clause database).
    pub(super) fn query(&mut self, f: &Formula) -> Result<Query, EngineError> {
        let g = self.ground_as(f, false)?;
        let f = g.as_ref().unwrap_or(f);
        self.reserve(f)?;
        let (pos, neg) = self.shape(f)?;
        Ok(Query {
            pos,
            neg,
            probes: Vec::new(),
            pos_probe: None,
            formula: f.clone(),
        })
    }

    /// The assumptions making the query true.
    pub(super) fn pos<'q>(&mut self, q: &'q mut Query) -> &'q [Lit] {
        if let Side::Clause(c) = &mut q.pos {
            let c = std::mem::take(c);
            let (lits, probe) = self.side_lits(c);
            q.pos_probe = probe;
            q.probes.extend(probe);
            q.pos = Side::Units(lits);
        }
        match &q.pos {
            Side::Units(l) | Side::Clause(l) => l,
        }
    }

    /// The assumptions making the query false.
    pub(super) fn neg<'q>(&mut self, q: &'q mut Query) -> &'q [Lit] {
        if let Side::Clause(c) = &mut q.neg {
            let c = std::mem::take(c);
            let (lits, probe) = self.side_lits(c);
            q.probes.extend(probe);
            q.neg = Side::Units(lits);
        }
        match &q.neg {
            Side::Units(l) | Side::Clause(l) => l,
        }
    }

    /// The domain a request about `f` needs: the constants and witnesses of the active
    /// beliefs and of `f` (contract §3; empty means the anonymous individual, see
    /// [`crate::logic::ground`]).
    fn domain_with(&self, f: Option<&Formula>) -> Vec<String> {
        let mut extra = BTreeSet::new();
        if let Some(f) = f {
            ground::question_constants(f, &mut extra);
        }
        extra.retain(|c| !self.consts.contains_key(c));
        if extra.is_empty() {
            return self.consts.keys().cloned().collect();
        }
        let mut d: BTreeSet<String> = extra;
        d.extend(self.consts.keys().cloned());
        d.into_iter().collect()
    }

    /// Brings the active quantified beliefs to the domain Σ alone needs (requests without a
    /// formula of their own: `consistent`, the grades).
    pub(super) fn sync_active(&mut self) -> Result<(), EngineError> {
        if self.quantified_active == 0 {
            return Ok(());
        }
        let d = self.domain_with(None);
        self.sync_domain(d)
    }

    fn sync_domain(&mut self, domain: Vec<String>) -> Result<(), EngineError> {
        if domain != self.grounded_over {
            if self.quantified_active > 0 {
                self.reground(&domain)?;
            }
            self.grounded_over = domain;
        }
        Ok(())
    }

    /// Grounds `f` over the domain of Σ and `f` (re-grounding the quantified beliefs when that
    /// domain differs from the one they are grounded over, growing or shrinking), or `None`
    /// when `f` has no quantifier. A `belief` is grounded in its witnessed form, a query as
    /// written (see [`crate::logic::ground`]). Without quantified beliefs and without a
    /// quantifier in `f` nothing is computed: propositional traces pay one walk of `f` for
    /// this.
    fn ground_as(&mut self, f: &Formula, belief: bool) -> Result<Option<Formula>, EngineError> {
        let quantified = ground::has_quantifier(f);
        if self.quantified_active == 0 && !quantified {
            return Ok(None);
        }
        let domain = self.domain_with(Some(f));
        self.sync_domain(domain)?;
        if !quantified {
            return Ok(None);
        }
        let f = if belief {
            ground::witnessed(f)
        } else {
            std::borrow::Cow::Borrowed(f)
        };
        Ok(Some(ground::ground(
            &f,
            &self.grounded_over,
            self.limits.ground_cap,
        )?))
    }

    /// Re-grounds every active quantified belief over `domain`. `∃` gets weaker when the
    /// domain grows (and `∀` when it shrinks), which no added clause can express, so each one
    /// moves to a fresh selector with its new grounding and the old selector is retired.
    fn reground(&mut self, domain: &[String]) -> Result<(), EngineError> {
        for i in 0..self.beliefs.len() {
            if !self.beliefs[i].active || self.beliefs[i].ground.is_none() {
                continue;
            }
            let g = ground::ground(
                &ground::witnessed(&self.beliefs[i].spec.formula),
                domain,
                self.limits.ground_cap,
            )?;
            if Some(&g) == self.beliefs[i].ground.as_deref() {
                continue;
            }
            self.reserve(&g)?;
            let old = self.beliefs[i].sel;
            let sel = self.enc.fresh_var().positive();
            for c in self.guarded_clauses(&g, Some(sel))? {
                self.push(Entry::Both(c));
            }
            self.push(Entry::Both(vec![!old]));
            self.beliefs[i].sel = sel;
            self.beliefs[i].ground = Some(Box::new(g));
            // A formula changed in place: no prefix is known consistent any more.
            self.sat_prefix = 0;
            // The member's formula changed: the set may no longer be unsatisfiable.
            if self
                .core
                .as_ref()
                .is_some_and(|c| c.binary_search(&i).is_ok())
            {
                self.core = None;
            }
        }
        self.model = None;
        self.assumptions = None;
        Ok(())
    }

    /// Retires the probes of a query.
    ///
    /// Retirement is batched: every new level-0 unit makes varisat re-simplify its whole
    /// clause database on the next solve (measured: the dominant cost per gate check when
    /// each probe was retired at once), while a few dozen dead probes cost a decision each.
    /// The true-side probe of the last query stays reusable as the selector of the same
    /// formula (the gate-then-add pattern of `announce`).
    pub(super) fn finish(&mut self, q: Query) {
        self.last_probe = q.pos_probe.map(|p| (q.formula, p));
        self.dead_probes.extend(q.probes);
        if self.dead_probes.len() >= PROBE_BATCH {
            self.flush_probes();
        }
        self.sync_disabled();
    }

    /// Dead probes are assumed false on every solve until retired: left free, phase saving
    /// can set one true and make its clause a live constraint.
    fn sync_disabled(&mut self) {
        let off: Vec<Lit> = self.dead_probes.iter().map(|&p| !p).collect();
        if let Some(sn) = &mut self.snap {
            sn.set_disabled(off);
        }
        let off = self.main_disabled();
        self.main.set_disabled(off);
    }

    /// What the main solver assumes false on every solve until it is a unit:
    /// dead probes and retracted selectors.
    fn main_disabled(&self) -> Vec<Lit> {
        self.dead_probes
            .iter()
            .chain(&self.dead_sels)
            .map(|&p| !p)
            .collect()
    }

    /// The main solver (one place to hang its upkeep on).
    pub(super) fn main_sat(&mut self) -> &mut Sat {
        &mut self.main
    }

    fn flush_probes(&mut self) {
        self.last_probe = None;
        for p in std::mem::take(&mut self.dead_probes) {
            self.push(Entry::Both(vec![!p]));
        }
        for (p, b) in std::mem::take(&mut self.snap_retire) {
            self.push(Entry::Snap(vec![!p], b));
        }
    }

    fn flush_sels(&mut self) {
        for s in std::mem::take(&mut self.dead_sels) {
            self.push(Entry::Guard(vec![!s]));
        }
    }

    /// A dead probe guarding exactly `f` (clause `¬q ∨ f`), if one is still unretired.
    fn take_probe(&mut self, f: &Formula) -> Option<Lit> {
        let (g, q) = self.last_probe.take()?;
        if g != *f {
            return None;
        }
        let i = self.dead_probes.iter().position(|&p| p == q)?;
        self.dead_probes.swap_remove(i);
        self.sync_disabled();
        Some(q)
    }

    /// (true side, false side) of `f` by its top connective.
    fn shape(&mut self, f: &Formula) -> Result<(Side, Side), EngineError> {
        let mut f = f;
        let mut negated = false;
        while let Formula::Not(g) = f {
            f = g;
            negated = !negated;
        }
        let (pos, neg) = match f {
            Formula::Or(cs) => {
                let lits = cs
                    .iter()
                    .map(|c| self.encode(c))
                    .collect::<Result<Vec<_>, _>>()?;
                let negs = lits.iter().map(|&l| !l).collect();
                (Side::Clause(lits), Side::Units(negs))
            }
            Formula::And(cs) => {
                let lits = cs
                    .iter()
                    .map(|c| self.encode(c))
                    .collect::<Result<Vec<_>, _>>()?;
                let negs = lits.iter().map(|&l| !l).collect();
                (Side::Units(lits), Side::Clause(negs))
            }
            Formula::Implies(a, b) => {
                let (la, lb) = (self.encode(a)?, self.encode(b)?);
                (Side::Clause(vec![!la, lb]), Side::Units(vec![la, !lb]))
            }
            _ => {
                let l = self.encode(f)?;
                (Side::Units(vec![l]), Side::Units(vec![!l]))
            }
        };
        Ok(if negated { (neg, pos) } else { (pos, neg) })
    }

    /// Assumption literals for a clause side: a probe guarding it (none for one literal).
    fn side_lits(&mut self, mut c: Vec<Lit>) -> (Vec<Lit>, Option<Lit>) {
        if c.len() == 1 {
            return (c, None);
        }
        let q = self.enc.fresh_var().positive();
        c.insert(0, !q);
        self.push(Entry::Both(c));
        (vec![q], Some(q))
    }

    /// The clauses saying "`guard` implies `f`" (`guard` = None: `f` holds outright).
    fn guarded_clauses(
        &mut self,
        f: &Formula,
        guard: Option<Lit>,
    ) -> Result<Vec<Vec<Lit>>, EngineError> {
        let (pos, _) = self.shape(f)?;
        let mut out: Vec<Vec<Lit>> = match pos {
            Side::Units(ls) => ls.into_iter().map(|l| vec![l]).collect(),
            Side::Clause(c) => vec![c],
        };
        if let Some(g) = guard {
            for c in &mut out {
                c.insert(0, !g);
            }
        }
        Ok(out)
    }

    fn push(&mut self, e: Entry) {
        let (Entry::Both(c) | Entry::Guard(c) | Entry::Snap(c, _)) = &e;
        if c.len() > cnf::MAX_CLAUSE {
            // A long clause is cut into a chain (see `cnf::MAX_CLAUSE`).
            let mut parts: Vec<Vec<Lit>> = Vec::new();
            self.enc.add_chained(c, &mut parts);
            for p in parts {
                self.push(match &e {
                    Entry::Both(_) => Entry::Both(p),
                    Entry::Guard(_) => Entry::Guard(p),
                    Entry::Snap(_, b) => Entry::Snap(p, *b),
                });
            }
            return;
        }
        self.clauses += 1;
        match &e {
            Entry::Both(c) => {
                self.main.add_clause(c);
                if let Some(s) = &mut self.snap {
                    s.add_clause(c);
                }
            }
            Entry::Guard(c) => {
                // The log rebuilds the snapshot only, which never holds these: keeping them
                // cost memory for every selector clause and retirement of a long trace.
                self.main.add_clause(c);
                return;
            }
            Entry::Snap(c, _) => {
                if let Some(s) = &mut self.snap {
                    s.add_clause(c);
                }
            }
        }
        match &e {
            Entry::Both(c) => self.log.push(c, None),
            Entry::Snap(c, b) => self.log.push(c, Some(*b)),
            Entry::Guard(_) => {}
        }
    }

    /// The selectors of the active retractable beliefs (the main solver's assumptions).
    pub(super) fn assumptions(&mut self) -> Vec<Lit> {
        if let Some(a) = &self.assumptions {
            return a.clone();
        }
        let a: Vec<Lit> = self
            .beliefs
            .iter()
            .filter(|b| b.active)
            .map(|b| b.sel)
            .collect();
        self.assumptions = Some(a.clone());
        a
    }

    /// Selectors of the active rules and norms: part of every "hard part" check.
    pub(super) fn fixed_selectors(&self) -> Vec<Lit> {
        self.beliefs
            .iter()
            .filter(|b| b.active && b.spec.role.is_hard())
            .map(|b| b.sel)
            .collect()
    }

    /// Active belief indices in commitment order.
    pub(super) fn active(&self) -> Vec<usize> {
        (0..self.beliefs.len())
            .filter(|&i| self.beliefs[i].active)
            .collect()
    }

    /// Whether the state holds far more than Σ: a state keeps every belief ever added, with
    /// its clauses and variables in the main solver, and the definitions of every formula
    /// asked about, and every satisfiable solve assigns every variable, so on a long session
    /// each question cost in proportion to the session so far (issue 31). The local engine
    /// then drops the state and builds it again from Σ alone, in commitment order
    /// (`handle::replay`): every answer depends on Σ and that order only.
    ///
    /// What is garbage is measured against what Σ needs now, not against what it needed at
    /// the last rebuild: Σ grows through a long session, and a state compared with its own
    /// size at the last rebuild was rebuilt each time Σ had grown by half, garbage or not
    /// (five rebuilds of a 10M session's walk, replaying 516,000 beliefs, 7% of its time;
    /// three now, 288,000).
    pub(super) fn outgrown(&self) -> bool {
        let (all, live) = (self.beliefs.len(), self.by_id.len());
        let needed = self.needed_vars();
        all > 2 * live + OUTGROWN_BELIEFS
            || self.enc.num_vars() > needed + OUTGROWN_VARS.max((needed / 2).min(GARBAGE_VARS))
    }

    /// Records that the state was just built from Σ alone: what it holds now is what Σ
    /// needs, the measure of [`State::outgrown`] until the next rebuild.
    pub(super) fn built_from_sigma(&mut self) {
        self.base_vars = self.enc.num_vars();
        self.base_live = self.by_id.len();
    }

    /// The variables Σ needs now, estimated from those its beliefs needed at the last
    /// rebuild (per active belief); without one, those the state started with (none).
    fn needed_vars(&self) -> usize {
        match self.base_live {
            0 => self.base_vars,
            n => self.base_vars.saturating_mul(self.by_id.len()) / n,
        }
    }

    /// Index of the active belief with this id.
    pub(super) fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id
            .get(id)
            .copied()
            .filter(|&i| self.beliefs[i].active)
    }

    fn check_confidence(c: f64) -> Result<(), EngineError> {
        if c > 0.0 && c <= 1.0 {
            Ok(())
        } else {
            Err(EngineError::BadConfidence(c))
        }
    }

    /// Adds a belief (no gate, no revision). Rules and norms are checked against the hard
    /// part first and refused with [`EngineError::HardConflict`].
    pub fn add(&mut self, spec: BeliefSpec) -> Result<Added, EngineError> {
        self.add_inner(spec, HardCheck::Explain)
    }

    /// Adds a belief; a rule or norm that contradicts the hard part joins as an assumption
    /// instead (`true` then). What a caller that would demote it anyway (the audit's mirror
    /// of a trace, whose Σ holds the belief whatever the engine thinks of it) needs: the
    /// minimal conflict [`State::add`] computes for its error is not searched, and that
    /// search over a hard part that grows with the trace was most of the cost of adding.
    pub fn add_or_demote(&mut self, spec: BeliefSpec) -> Result<(Added, bool), EngineError> {
        match self.add_inner(spec.clone(), HardCheck::Detect) {
            Err(EngineError::HardConflict(_)) => {
                let added = self.add_inner(spec.role(Role::Assumption), HardCheck::Skip)?;
                Ok((added, true))
            }
            r => r.map(|a| (a, false)),
        }
    }

    pub(super) fn add_inner(
        &mut self,
        spec: BeliefSpec,
        hard: HardCheck,
    ) -> Result<Added, EngineError> {
        let check_hard = hard != HardCheck::Skip;
        Self::check_confidence(spec.confidence)?;
        let grounded = self.ground_as(&spec.formula, true)?;
        let f = grounded.as_ref().unwrap_or(&spec.formula).clone();
        self.reserve(&f)?;
        if let Some(i) = self.index_of(&spec.id) {
            let b = &mut self.beliefs[i];
            if b.spec.formula == spec.formula && b.spec.role == spec.role {
                // Seed 000: an update overwrites the record of the same proposition.
                b.spec.step = spec.step;
                b.spec.confidence = spec.confidence;
                return Ok(Added::Merged);
            }
        }
        // The rules-only solver settles the common case (the new rule fits); the main
        // solver decides the rest and names the conflict.
        let fit = if spec.role.is_hard() && check_hard && grounded.is_none() {
            self.rules_fit(&f)?
        } else {
            None
        };
        if fit == Some(false) && hard == HardCheck::Detect {
            // The rules-only solver holds exactly the hard part (no quantified belief was
            // ever added, or it would not answer): its refusal is final, and only naming the
            // conflict would need the main solver.
            return Err(EngineError::HardConflict(vec![spec.id.clone()]));
        }
        if spec.role.is_hard() && check_hard && fit != Some(true) {
            let mut q = self.query(&f)?;
            let pos = self.pos(&mut q).to_vec();
            let mut a = self.fixed_selectors();
            a.extend_from_slice(&pos);
            let universe = self.assumptions();
            switch_off(&mut a, &universe);
            let ok = self.main_sat().solve(&a)?;
            if !ok {
                let mut conflict = if hard == HardCheck::Explain {
                    self.hard_conflict(&pos, &f)?
                } else {
                    Vec::new()
                };
                conflict.push(spec.id.clone());
                self.finish(q);
                return Err(EngineError::HardConflict(conflict));
            }
            self.finish(q);
        }
        if let Some(i) = self.index_of(&spec.id) {
            self.retract_index(i);
        }
        let idx = self.beliefs.len();
        let reused = self.take_probe(&f);
        let sel = match reused {
            Some(q) => q,
            None => self.enc.fresh_var().positive(),
        };
        if let Some(q) = reused {
            // The probe's clause `¬q ∨ φ` is exactly the selector clause.
            if grounded.is_none() {
                self.snap_retire.push((q, idx));
            }
        } else if grounded.is_some() {
            for c in self.guarded_clauses(&f, Some(sel))? {
                self.push(Entry::Both(c));
            }
        } else {
            for c in self.guarded_clauses(&f, Some(sel))? {
                self.push(Entry::Guard(c));
            }
        }
        if grounded.is_some() {
            self.quantified += 1;
        }
        if grounded.is_none() {
            for c in self.guarded_clauses(&f, None)? {
                self.push(Entry::Snap(c, idx));
            }
        }
        if self.model_satisfies(&f) != Some(true) {
            self.model = None;
        }
        if spec.role.is_hard() && grounded.is_none() {
            self.rules.add(idx, &f)?;
        }
        self.by_id
            .insert(CompactString::from(spec.id.as_str()), idx);
        self.seq += 1;
        let consts = self.count_in(&spec.formula);
        if grounded.is_some() {
            self.quantified_active += 1;
        }
        self.beliefs.push(Belief {
            spec,
            sel,
            active: true,
            seq: self.seq,
            ground: grounded.map(Box::new),
            consts,
            size: 0,
            clause: None,
        });
        self.index_atoms(idx);
        self.assumptions = None;
        Ok(Added::New)
    }

    /// The atom variables of belief `i`'s formula (each once), and how many atom
    /// occurrences it has.
    fn atom_vars(&self, i: usize) -> (Vec<usize>, usize) {
        let atoms = atom_refs(&self.beliefs[i].spec.formula);
        let mut vars: Vec<usize> = atoms
            .iter()
            .filter_map(|a| self.enc.atom_var(a))
            .map(|v| v.index())
            .collect();
        vars.sort_unstable();
        vars.dedup();
        (vars, atoms.len())
    }

    /// `f` as a clause of atom literals, when it is a literal or a disjunction of literals
    /// whose atoms all have variables.
    fn as_clause(&self, f: &Formula) -> Option<Box<[Lit]>> {
        let lit = |g: &Formula| {
            literal(g).and_then(|(a, positive)| self.enc.atom_var(a).map(|v| v.lit(positive)))
        };
        match f {
            Formula::Or(cs) => cs.iter().map(lit).collect(),
            g => lit(g).map(|l| Box::from([l])),
        }
    }

    /// Records belief `i` (unquantified) under each of its atoms in `occ`.
    fn index_atoms(&mut self, i: usize) {
        if self.beliefs[i].ground.is_some() {
            return;
        }
        let Ok(k) = u32::try_from(i) else {
            return;
        };
        let (vars, size) = self.atom_vars(i);
        self.beliefs[i].size = u32::try_from(size).unwrap_or(u32::MAX);
        self.beliefs[i].clause = self.as_clause(&self.beliefs[i].spec.formula);
        for v in vars {
            if self.occ.len() <= v {
                self.occ.resize_with(v + 1, Vec::new);
            }
            self.occ[v].push(k);
        }
        self.occ_members.push(k);
        self.occ_live += 1;
    }

    /// A retracted belief leaves `occ` at the next compaction: entries are filtered by
    /// `active` when read, and the index is rebuilt from the active beliefs when the
    /// retracted ones outnumber them (amortized O(1) per retraction).
    fn unindex_atoms(&mut self, i: usize) {
        if self.beliefs[i].ground.is_some() {
            return;
        }
        self.occ_live = self.occ_live.saturating_sub(1);
        self.occ_dead += 1;
        if self.occ_dead > 64 && self.occ_dead > self.occ_live {
            let mut members = std::mem::take(&mut self.occ_members);
            // A belief retracted and put back is listed twice.
            members.sort_unstable();
            members.dedup();
            for &m in &members {
                for v in self.atom_vars(m as usize).0 {
                    if let Some(l) = self.occ.get_mut(v) {
                        l.clear();
                    }
                }
            }
            self.occ_dead = 0;
            self.occ_live = 0;
            for m in members {
                if self.beliefs[m as usize].active {
                    self.index_atoms(m as usize);
                }
            }
        }
    }

    /// Whether the active rules and norms together with `f` (ground) are satisfiable, from
    /// the rules-only solver; `None` while quantified beliefs are held (that solver does not
    /// follow their grounding), when the main solver must answer.
    pub(super) fn rules_fit(&mut self, f: &Formula) -> Result<Option<bool>, EngineError> {
        if self.quantified > 0 {
            return Ok(None);
        }
        Ok(Some(self.rules.fit(f)?))
    }

    /// Counts the constants of a belief's formula, its witnesses included, into the domain;
    /// returns them.
    fn count_in(&mut self, f: &Formula) -> Box<[String]> {
        let mut cs = BTreeSet::new();
        ground::domain_constants(f, &mut cs);
        for c in &cs {
            *self.consts.entry(c.clone()).or_default() += 1;
        }
        cs.into_iter().collect()
    }

    pub(super) fn retract_index(&mut self, i: usize) {
        if !self.beliefs[i].active {
            return;
        }
        self.beliefs[i].active = false;
        // Only active beliefs are looked up by id (`index_of`), and a state holds every belief
        // ever added: the map keeps to Σ (a reactivation puts the id back).
        let id = self.beliefs[i].spec.id.as_str();
        if self.by_id.get(id) == Some(&i) {
            self.by_id.remove(id);
        }
        if self
            .core
            .as_ref()
            .is_some_and(|c| c.binary_search(&i).is_ok())
        {
            self.core = None;
        }
        self.unindex_atoms(i);
        for c in &self.beliefs[i].consts {
            if let Some(n) = self.consts.get_mut(c) {
                *n -= 1;
                if *n == 0 {
                    self.consts.remove(c);
                }
            }
        }
        if self.beliefs[i].ground.is_some() {
            self.quantified_active -= 1;
        }
        let sel = self.beliefs[i].sel;
        self.assumptions = None;
        if self.beliefs[i].ground.is_none() {
            self.snap = None;
            self.dirty_calls = 0;
            if self.beliefs[i].spec.role.is_hard() {
                self.rules.retract(i);
            }
        }
        if self.beliefs[i].ground.is_some() {
            self.push(Entry::Both(vec![!sel]));
        } else {
            self.dead_sels.push(sel);
            if self.dead_sels.len() >= RETIRE_BATCH {
                self.flush_sels();
            }
            self.sync_disabled();
        }
    }

    /// Makes the retracted belief `i` active again in its old place in the commitment order,
    /// under a fresh selector (an announcement that replaced it and was then not applied puts
    /// it back, see [`crate::logic::revise`]). A quantified belief is grounded over the domain
    /// the others are grounded over; the next request brings them all to its own.
    pub(super) fn reactivate(&mut self, i: usize) -> Result<(), EngineError> {
        if self.beliefs[i].active {
            return Ok(());
        }
        let quantified = self.beliefs[i].ground.is_some();
        let f = if quantified {
            ground::ground(
                &ground::witnessed(&self.beliefs[i].spec.formula),
                &self.grounded_over,
                self.limits.ground_cap,
            )?
        } else {
            (*self.beliefs[i].spec.formula).clone()
        };
        self.reserve(&f)?;
        let sel = self.enc.fresh_var().positive();
        for c in self.guarded_clauses(&f, Some(sel))? {
            self.push(if quantified {
                Entry::Both(c)
            } else {
                Entry::Guard(c)
            });
        }
        if !quantified {
            for c in self.guarded_clauses(&f, None)? {
                self.push(Entry::Snap(c, i));
            }
            if self.beliefs[i].spec.role.is_hard() {
                self.rules.add(i, &f)?;
            }
        }
        // Beliefs below `i` are still known consistent; `i` itself is back among them.
        self.sat_prefix = self.sat_prefix.min(i);
        let spec_formula = self.beliefs[i].spec.formula.clone();
        let consts = self.count_in(&spec_formula);
        let b = &mut self.beliefs[i];
        b.sel = sel;
        b.active = true;
        b.consts = consts;
        if quantified {
            b.ground = Some(Box::new(f));
            self.quantified_active += 1;
        }
        let id = CompactString::from(b.spec.id.as_str());
        self.by_id.insert(id, i);
        self.index_atoms(i);
        self.model = None;
        self.assumptions = None;
        Ok(())
    }

    /// Retracts the active belief `id`; `false` if there is none.
    pub fn retract(&mut self, id: &str) -> bool {
        match self.index_of(id) {
            Some(i) => {
                self.retract_index(i);
                true
            }
            None => false,
        }
    }

    /// The ids of belief indices.
    pub(super) fn names(&self, idx: &[usize]) -> Vec<String> {
        idx.iter()
            .map(|&i| self.beliefs[i].spec.id.clone())
            .collect()
    }

    /// Whether any active retractable belief has a confidence below 1.
    pub(super) fn graded(&self) -> bool {
        self.beliefs
            .iter()
            .any(|b| b.active && !b.spec.role.is_hard() && b.spec.confidence < 1.0)
    }

    /// `f` grounded over the domain of Σ and `f` (the quantified beliefs brought to it).
    pub(super) fn grounded(&mut self, f: &Formula) -> Result<Formula, EngineError> {
        let g = self.ground_as(f, false)?.unwrap_or_else(|| f.clone());
        self.reserve(&g)?;
        Ok(g)
    }

    /// Ids of the active beliefs in commitment order.
    pub fn active_ids(&self) -> Vec<String> {
        self.beliefs
            .iter()
            .filter(|b| b.active)
            .map(|b| b.spec.id.clone())
            .collect()
    }

    /// The active beliefs as held here, in commitment order.
    pub fn held(&self) -> Vec<BeliefSpec> {
        self.beliefs
            .iter()
            .filter(|b| b.active)
            .map(|b| b.spec.clone())
            .collect()
    }

    /// Solver statistics: (main solves, invalid cores replaced).
    pub fn stats(&self) -> (u64, u64) {
        (self.main.num_solves(), self.main.invalid_cores())
    }
}

/// Appends `¬u` for every `u` of `universe` not already in `a`.
pub(super) fn switch_off(a: &mut Vec<Lit>, universe: &[Lit]) {
    let on: HashSet<Lit> = a.iter().copied().collect();
    a.extend(universe.iter().filter(|u| !on.contains(*u)).map(|&u| !u));
}

/// The atoms of `f`, by reference, with repetitions.
pub(super) fn atom_refs(f: &Formula) -> Vec<&Atom> {
    let mut out = Vec::new();
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        match g {
            Formula::True | Formula::False => {}
            Formula::Atom(a) => out.push(a),
            Formula::Not(a) | Formula::Forall(_, a) | Formula::Exists(_, a) => stack.push(a),
            Formula::And(cs) | Formula::Or(cs) => stack.extend(cs.iter()),
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                stack.push(b);
                stack.push(a);
            }
        }
    }
    out
}

/// A literal's atom and the value that makes the literal true.
pub(super) fn literal(f: &Formula) -> Option<(&Atom, bool)> {
    let (mut f, mut positive) = (f, true);
    while let Formula::Not(g) = f {
        f = g;
        positive = !positive;
    }
    match f {
        Formula::Atom(a) => Some((a, positive)),
        _ => None,
    }
}
