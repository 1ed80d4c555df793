//! The gate: the snapshot solver (Σ as plain clauses), the cached model of Σ, and the
//! questions answered from them, Θ (`check`) and `entails` (see the module docs of
//! [`crate::logic::engine`] for why Σ is kept twice).

use varisat::Lit;

use std::collections::HashSet;

use super::explain::Fresh;
use super::state::{Query, Side, State, literal, switch_off};
use super::{Check, EngineError, Entailment, Entails, Outcome};
use crate::logic::cnf;
use crate::logic::formula::{Atom, Formula};
use crate::logic::solver::Sat;

/// Clause sides up to this long are split into one call per literal instead of a probe
/// ([`State::sat_side`]).
const SPLIT_MAX: usize = 4;

/// The most atom occurrences one [`State::repair`] re-evaluates in all (in the beliefs it
/// must check); past it a solve is cheaper.
const REPAIR_MAX: usize = 512;

/// How many atoms outside the query a repair may set to mend the beliefs it falsifies.
const REPAIR_STEPS: usize = 3;

/// The value of variable `v` in model `m` changed by `flips` (variables past the model's end,
/// made after it, read as false like everywhere else).
fn value_in(m: &[bool], flips: &[(usize, bool)], v: usize) -> bool {
    flips
        .iter()
        .find(|&&(x, _)| x == v)
        .map_or_else(|| m.get(v).copied().unwrap_or(false), |&(_, b)| b)
}

/// Small ways to give `f` the value `want`, each a list of (atom, value) to set: all
/// literals of a conjunction made true (or of a clause made false), or one literal of a
/// clause made true (or of a conjunction made false), and likewise for an implication.
fn candidates(f: &Formula, want: bool) -> Vec<Vec<(&Atom, bool)>> {
    let (mut f, mut want) = (f, want);
    while let Formula::Not(g) = f {
        f = g;
        want = !want;
    }
    match (f, want) {
        (Formula::Atom(a), w) => vec![vec![(a, w)]],
        (Formula::And(cs), true) | (Formula::Or(cs), false) => {
            all(cs.iter().map(|c| set(c, want)).collect())
        }
        (Formula::Or(cs), true) | (Formula::And(cs), false) => {
            each(cs.iter().map(|c| set(c, want)).collect())
        }
        (Formula::Implies(a, b), false) => all(vec![set(a, true), set(b, false)]),
        (Formula::Implies(a, b), true) => each(vec![set(a, false), set(b, true)]),
        _ => Vec::new(),
    }
}

/// The atom value that gives literal `c` the value `w`.
fn set(c: &Formula, w: bool) -> Option<(&Atom, bool)> {
    literal(c).map(|(a, positive)| (a, positive == w))
}

/// One candidate setting every part (none if a part is not a literal).
fn all(parts: Vec<Option<(&Atom, bool)>>) -> Vec<Vec<(&Atom, bool)>> {
    parts
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .into_iter()
        .collect()
}

/// One candidate per literal part.
fn each(parts: Vec<Option<(&Atom, bool)>>) -> Vec<Vec<(&Atom, bool)>> {
    parts.into_iter().flatten().map(|l| vec![l]).collect()
}

impl State {
    pub(super) fn rebuild_snapshot(&mut self) {
        let mut sat = Sat::new_dense(self.cancel.clone());
        sat.set_disabled(self.dead_probes.iter().map(|&p| !p).collect());
        for (c, owner) in self.log.iter() {
            if owner.is_none_or(|b| self.beliefs.get(b).is_some_and(|x| x.active)) {
                sat.add_clause(c);
            }
        }
        self.snap = Some(sat);
        self.dirty_calls = 0;
    }

    /// Whether the snapshot solver is current; after a retraction it is rebuilt once enough
    /// gate calls have gone to the selector solver to pay for the rebuild.
    pub(super) fn snapshot_ready(&mut self) -> bool {
        if self.snap.is_some() {
            return true;
        }
        self.dirty_calls += 1;
        if self.dirty_calls > 8 + self.log.len() / 500 {
            self.rebuild_snapshot();
            return true;
        }
        false
    }

    pub(super) fn store_model(&mut self, m: Option<Vec<Lit>>) {
        if let Some(m) = m {
            let mut vals = vec![false; self.enc.num_vars()];
            for l in m {
                if let Some(v) = vals.get_mut(l.index()) {
                    *v = l.is_positive();
                }
            }
            self.model = Some(vals);
        }
    }

    /// Evaluates `f` on the cached model of Σ (atoms absent from it read as false, which is
    /// sound because such atoms occur in no belief). `None` without a cached model.
    pub(super) fn model_satisfies(&self, f: &Formula) -> Option<bool> {
        let m = self.model.as_ref()?;
        cnf::eval(f, &mut |a| {
            self.enc
                .atom_var(a)
                .and_then(|v| m.get(v.index()).copied())
                .unwrap_or(false)
        })
    }

    /// Main-solver solve under Σ plus `extra`; a satisfying model is cached when `keep`.
    ///
    /// Σ is answered by the *snapshot* solver when it is current: every active belief as
    /// plain clauses, so varisat simplifies with them at level 0 instead of replaying
    /// thousands of selector assumptions per solve (measured about 3x faster per check on the
    /// T1 workload in the research notes). A retraction invalidates it; until it is rebuilt the
    /// selector solver answers. Only quantified beliefs (re-grounded under new selectors when
    /// the domain grows) stay behind selectors there.
    ///
    /// While a remembered core of Σ ([`State::core`]) stays wholly active, Σ is inconsistent
    /// and the answer is `false` without a solve. Every unsatisfiable answer of the selector
    /// solver whose core lies within Σ (not the extra literals) leaves such a core behind,
    /// so a long stretch of an inconsistent Σ costs one solve per retraction that breaks the
    /// core, not one (over every selector of Σ) per question.
    pub(super) fn sat_with(&mut self, extra: &[Lit], keep: bool) -> Result<bool, EngineError> {
        if self.core.is_some() {
            return Ok(false);
        }
        if self.snapshot_ready() {
            let mut a: Vec<Lit> = if self.quantified == 0 {
                Vec::new()
            } else {
                self.beliefs
                    .iter()
                    .filter(|b| b.active && b.ground.is_some())
                    .map(|b| b.sel)
                    .collect()
            };
            a.extend_from_slice(extra);
            let Some(snap) = self.snap.as_mut() else {
                return Err(EngineError::Internal("snapshot solver missing".into()));
            };
            let sat = snap.solve(&a)?;
            if sat && keep {
                let m = snap.model();
                self.store_model(m);
            }
            return Ok(sat);
        }
        let mut a = self.assumptions();
        a.extend_from_slice(extra);
        let sat = self.main_sat().solve(&a)?;
        if sat && keep {
            let m = self.main.model();
            self.store_model(m);
        }
        if !sat {
            self.remember_core(extra)?;
        }
        Ok(sat)
    }

    /// After an unsatisfiable solve of the selector solver under Σ and `extra`: when its
    /// core names only selectors of Σ (the extra literals and the retired ones assumed off
    /// aside), and those beliefs are unsatisfiable together on a fresh solver holding only
    /// them, they become [`State::core`]. varisat's cores are not trusted (see
    /// [`crate::logic::solver`]): one that fails the check is dropped, never used.
    fn remember_core(&mut self, extra: &[Lit]) -> Result<(), EngineError> {
        let raw = self.main.raw_core();
        if raw.iter().any(|l| extra.contains(l)) {
            return Ok(());
        }
        let on: HashSet<Lit> = raw.into_iter().collect();
        let members: Vec<usize> = (0..self.beliefs.len())
            .filter(|&i| self.beliefs[i].active && on.contains(&self.beliefs[i].sel))
            .collect();
        if members.is_empty() {
            return Ok(());
        }
        let mut fresh = Fresh::new(self, &[], &members)?;
        let all: Vec<usize> = (0..members.len()).collect();
        if !fresh.sat(false, &all, usize::MAX)? {
            self.core = Some(members);
        }
        Ok(())
    }

    /// Θ(Σ, Δ): at most one SAT call in the common case, often none. The cached model of Σ
    /// decides one side; [`State::repair`] often decides the other by flipping a few atoms
    /// of Δ in that model (a checked model, found without a solve); only what is left is
    /// solved.
    pub(super) fn theta(&mut self, q: &mut Query) -> Result<Outcome, EngineError> {
        if q.formula == Formula::True {
            return Ok(if self.sigma_sat()? {
                Outcome::Entailed
            } else {
                Outcome::Contradiction
            });
        }
        let known = self.model_satisfies(&q.formula);
        if known != Some(true) {
            // Is Σ∧Δ satisfiable? Keep a model that satisfies Δ: Δ often joins Σ next.
            if let Some(flips) = self.repair(&q.formula, true) {
                self.adopt(&flips);
            } else if !self.sat_side(q, true, true)? {
                return Ok(Outcome::Contradiction);
            }
        }
        if known == Some(false) {
            // The model that was cached satisfies Σ∧¬Δ: Δ is not entailed.
            return Ok(Outcome::NewInfo);
        }
        // Σ∧Δ is satisfiable (the cached model shows it); is Σ∧¬Δ?
        Ok(
            if self.repair(&q.formula, false).is_some() || self.sat_side(q, false, false)? {
                Outcome::NewInfo
            } else {
                Outcome::Entailed
            },
        )
    }

    /// A model of Σ in which `f` (ground) takes the value `want`, found without a solve by
    /// setting a few atoms of `f` in the cached model of Σ: the flips (atom variable, value)
    /// on success, `None` when no small change of `f`'s atoms works (or there is no model,
    /// or Σ holds quantified beliefs, whose groundings `occ` does not follow).
    ///
    /// The answer is checked, not guessed: every active belief mentioning a flipped atom is
    /// evaluated on the changed model (the others keep the value the model gave them, true),
    /// and so is `f`. The candidate changes come from `f`'s shape (a literal, a clause, a
    /// conjunction of literals, an implication between literals: a gate's Δ almost always),
    /// and one that would re-evaluate beliefs with more than [`REPAIR_MAX`] atoms in all is
    /// left to the solver.
    pub(super) fn repair(&self, f: &Formula, want: bool) -> Option<Vec<(usize, bool)>> {
        #[cfg(test)]
        if self.repair_off {
            return None;
        }
        if self.quantified > 0 {
            return None;
        }
        let m = self.model.as_ref()?;
        let mut budget = REPAIR_MAX;
        for cand in candidates(f, want) {
            let mut flips: Vec<(usize, bool)> = Vec::with_capacity(cand.len() + REPAIR_STEPS);
            for (a, value) in cand {
                // Every atom of a query is encoded before it is asked about.
                let v = self.enc.atom_var(a)?.index();
                if value_in(m, &flips, v) != value {
                    flips.push((v, value));
                }
            }
            // The atoms of `f` stay as set; a belief the change falsifies is mended by
            // setting one of its other atoms, a few levels deep (a short local search).
            let mut broken = Vec::new();
            for &(v, _) in &flips {
                self.breaks(m, &flips, v, &mut budget, &mut broken)?;
            }
            if self.mend(m, f, want, &mut flips, &broken, REPAIR_STEPS, &mut budget)? {
                return Some(flips);
            }
        }
        None
    }

    /// Depth-first search for a mend of the `broken` beliefs (those `flips` falsify):
    /// `Some(true)` with `flips` completed when none is left and `f` has the value `want`;
    /// `None` once `budget` is spent. An atom set once (`f`'s own first) is not set again.
    /// Setting an atom can only change the beliefs that mention it, so each level
    /// re-evaluates those and the ones still broken, nothing else.
    #[allow(clippy::too_many_arguments)]
    fn mend(
        &self,
        m: &[bool],
        f: &Formula,
        want: bool,
        flips: &mut Vec<(usize, bool)>,
        broken: &[u32],
        depth: usize,
        budget: &mut usize,
    ) -> Option<bool> {
        let Some(&b) = broken.first() else {
            if !self.one_value_each(m, flips) {
                return Some(false);
            }
            let mut look = |a: &Atom| self.look(m, flips, a);
            return Some(cnf::eval(f, &mut look) == Some(want));
        };
        if depth == 0 {
            return Some(false);
        }
        let options: Vec<(usize, bool)> = match &self.beliefs[b as usize].clause {
            Some(c) => c.iter().map(|l| (l.index(), l.is_positive())).collect(),
            None => candidates(self.beliefs[b as usize].formula(), true)
                .into_iter()
                .filter_map(|c| match c.as_slice() {
                    [(a, value)] => self.enc.atom_var(a).map(|v| (v.index(), *value)),
                    _ => None,
                })
                .collect(),
        };
        let mut next: Vec<u32> = Vec::with_capacity(broken.len() + 4);
        for (v, value) in options {
            if flips.iter().any(|&(x, _)| x == v) {
                continue;
            }
            flips.push((v, value));
            next.clear();
            for &x in broken {
                if !self.holds(m, flips, x as usize, budget)? {
                    next.push(x);
                }
            }
            self.breaks(m, flips, v, budget, &mut next)?;
            if self.mend(m, f, want, flips, &next, depth - 1, budget)? {
                return Some(true);
            }
            flips.pop();
        }
        Some(false)
    }

    /// Whether `m` changed by `flips` still gives every key at most one value: a value atom
    /// the flips set true has no rival value true. (The at-most-one clauses are no belief, so
    /// [`State::breaks`] does not see them.)
    fn one_value_each(&self, m: &[bool], flips: &[(usize, bool)]) -> bool {
        flips.iter().filter(|f| f.1).all(|&(v, _)| {
            match self.enc.var_atom(varisat::Var::from_index(v)) {
                Some(a @ Atom::Value(_)) => {
                    self.enc.rivals(a).all(|r| !value_in(m, flips, r.index()))
                }
                _ => true,
            }
        })
    }

    /// The value of atom `a` in model `m` changed by `flips`.
    fn look(&self, m: &[bool], flips: &[(usize, bool)], a: &Atom) -> bool {
        self.enc
            .atom_var(a)
            .is_some_and(|v| value_in(m, flips, v.index()))
    }

    /// Whether belief `b` holds in model `m` changed by `flips`; `None` once evaluating it
    /// would exceed `budget` (atom occurrences, spent as they are evaluated).
    fn holds(
        &self,
        m: &[bool],
        flips: &[(usize, bool)],
        b: usize,
        budget: &mut usize,
    ) -> Option<bool> {
        let belief = &self.beliefs[b];
        *budget = budget.checked_sub(belief.size as usize)?;
        Some(match &belief.clause {
            Some(c) => c
                .iter()
                .any(|l| value_in(m, flips, l.index()) == l.is_positive()),
            None => {
                let mut look = |a: &Atom| self.look(m, flips, a);
                cnf::eval(belief.formula(), &mut look) == Some(true)
            }
        })
    }

    /// Adds to `out` the active beliefs mentioning atom variable `v` that `m` changed by
    /// `flips` falsifies (each once); `None` once `budget` is spent.
    fn breaks(
        &self,
        m: &[bool],
        flips: &[(usize, bool)],
        v: usize,
        budget: &mut usize,
        out: &mut Vec<u32>,
    ) -> Option<()> {
        for &b in self.occ.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if self.beliefs[b as usize].active
                && !out.contains(&b)
                && !self.holds(m, flips, b as usize, budget)?
            {
                out.push(b);
            }
        }
        Some(())
    }

    /// Makes the cached model the repaired one (see [`State::repair`]). The model is read
    /// through its atoms only, so the values of definition variables it leaves stale do not
    /// matter.
    pub(super) fn adopt(&mut self, flips: &[(usize, bool)]) {
        if let Some(m) = &mut self.model {
            for &(v, b) in flips {
                if m.len() <= v {
                    m.resize(v + 1, false);
                }
                m[v] = b;
            }
        }
    }

    /// Whether Σ (as grounded now) is satisfiable; no solve when a model is cached.
    pub(super) fn sigma_sat(&mut self) -> Result<bool, EngineError> {
        if self.model.is_some() {
            return Ok(true);
        }
        self.sat_with(&[], true)
    }

    /// Is Σ ∧ (one side of `q`) satisfiable? A model is cached when `keep`.
    ///
    /// A short clause side on the snapshot solver is split instead of probed: Σ ∧ (l₁ ∨ … ∨ lₖ)
    /// is satisfiable iff some Σ ∧ lᵢ is, and each of those is a plain assumption (usually a
    /// propagation-only call when it fails). A probe would leave a clause, a variable that
    /// every later satisfiable solve must assign and write into its model, and a level-0 unit
    /// that makes varisat re-simplify its clause database. On the selector solver (snapshot
    /// stale after a retraction) each call replays every selector, so one probed call is
    /// cheaper there.
    pub(super) fn sat_side(
        &mut self,
        q: &mut Query,
        positive: bool,
        keep: bool,
    ) -> Result<bool, EngineError> {
        let side = if positive { &q.pos } else { &q.neg };
        if let Side::Clause(c) = side {
            if c.len() <= SPLIT_MAX && self.snap.is_some() {
                let c = c.clone();
                for l in c {
                    if self.sat_with(&[l], keep)? {
                        return Ok(true);
                    }
                }
                return Ok(false);
            }
        }
        let lits = if positive { self.pos(q) } else { self.neg(q) }.to_vec();
        self.sat_with(&lits, keep)
    }

    /// The gate Θ(Σ, Δ). With `because` (cited ids), a consistent Δ that the cited beliefs
    /// plus all rules and norms do not entail is `Ungrounded` (seed 001 §5).
    pub fn check(
        &mut self,
        delta: &Formula,
        because: Option<&[String]>,
    ) -> Result<Check, EngineError> {
        let mut q = self.query(delta)?;
        let theta = self.theta(&mut q)?;
        let mut missing = Vec::new();
        let mut a = Vec::new();
        // Named whatever Θ is: a citation of nothing is reported on a contradiction too.
        for id in because.unwrap_or(&[]) {
            match self.index_of(id) {
                Some(i) => a.push(self.beliefs[i].sel),
                None => missing.push(id.clone()),
            }
        }
        let mut outcome = theta;
        if because.is_some() && theta != Outcome::Contradiction {
            a.extend(self.fixed_selectors());
            a.extend_from_slice(self.neg(&mut q));
            let universe = self.assumptions();
            switch_off(&mut a, &universe);
            if self.main_sat().solve(&a)? {
                outcome = Outcome::Ungrounded;
            }
        }
        self.finish(q);
        Ok(Check {
            outcome,
            theta,
            missing_citations: missing,
        })
    }

    /// Σ ⊨ φ, Σ ⊨ ¬φ, or neither; with N(φ) when graded.
    pub fn entails(&mut self, phi: &Formula) -> Result<Entailment, EngineError> {
        self.entails_with(phi, true)
    }

    /// Σ ⊨ φ, Σ ⊨ ¬φ, or neither, without N(φ): computing the degree costs a solve per
    /// confidence level, which callers that only report the three-way answer (the audit's
    /// recomputation of `query` events) should not pay.
    pub(super) fn entails_plain(&mut self, phi: &Formula) -> Result<Entails, EngineError> {
        Ok(self.entails_with(phi, false)?.result)
    }

    fn entails_with(&mut self, phi: &Formula, degree: bool) -> Result<Entailment, EngineError> {
        let mut q = self.query(phi)?;
        // Each side is decided by the cached model, a repair of it, or a solve.
        let known = self.model_satisfies(&q.formula);
        let entailed = !(known == Some(false)
            || self.repair(&q.formula, false).is_some()
            || self.sat_side(&mut q, false, true)?);
        let contradicted = !(known == Some(true)
            || match self.repair(&q.formula, true) {
                Some(flips) => {
                    self.adopt(&flips);
                    true
                }
                None => self.sat_side(&mut q, true, true)?,
            });
        let result = if entailed {
            Entails::Entailed
        } else if contradicted {
            Entails::Contradicted
        } else {
            Entails::Unknown
        };
        let degree = if degree && self.graded() {
            let neg = self.neg(&mut q).to_vec();
            Some(self.necessity_lits(&neg)?)
        } else {
            None
        };
        self.finish(q);
        Ok(Entailment {
            result,
            degree,
            sigma_consistent: !(entailed && contradicted),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::engine::{BeliefSpec, Limits};
    use crate::logic::oracle;
    use crate::logic::solver::Stop;
    use proptest::prelude::*;

    fn lit(v: u8, positive: bool) -> Formula {
        let a = Formula::Atom(Atom::Prop(format!("a{v}")));
        if positive {
            a
        } else {
            Formula::Not(Box::new(a))
        }
    }

    /// A literal, a clause, a conjunction of literals or an implication between literals
    /// (every shape `repair` knows), or a biconditional (one it leaves to the solver).
    fn formula() -> impl Strategy<Value = Formula> {
        let l = (0u8..6, any::<bool>()).prop_map(|(v, p)| lit(v, p));
        let ls = prop::collection::vec(l.clone(), 2..4);
        prop_oneof![
            3 => l.clone(),
            6 => ls.clone().prop_map(Formula::Or),
            2 => ls.prop_map(Formula::And),
            1 => (l.clone(), l.clone()).prop_map(|(a, b)| Formula::Implies(Box::new(a), Box::new(b))),
            1 => (l.clone(), l).prop_map(|(a, b)| Formula::Iff(Box::new(a), Box::new(b))),
        ]
    }

    /// A xorshift walk from `seed`: each call draws a number below `n`, the same on every run.
    fn draws(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        }
    }

    fn state(repair_off: bool) -> State {
        let mut st = State::new(Stop::new(), Limits::default());
        st.repair_off = repair_off;
        st
    }

    fn held(st: &State) -> Vec<Formula> {
        st.held()
            .into_iter()
            .map(|b| (*b.formula).clone())
            .collect()
    }

    /// Walks a state through `steps` (formula, role pick, op pick): adds through
    /// `add_or_demote` (as the audit does) and retractions of a held belief, and checks after
    /// each step, against the truth-table oracle: Θ and `entails` of the step's formula,
    /// Σ's consistency, whether a rule or norm was demoted exactly when it contradicts the
    /// hard part, and that a remembered core of Σ is active and unsatisfiable. Returns how
    /// many questions a remembered core answered, how often the rules solver was rebuilt and
    /// how many rules its unit rules refused without a solve.
    fn walk_against_oracle(steps: &[(Formula, u8, u8)]) -> (usize, usize, usize) {
        use crate::logic::engine::Role;
        let mut st = state(false);
        let mut core_answers = 0;
        for (i, (f, role, op)) in steps.iter().enumerate() {
            let held = st.held();
            let sigma: Vec<&Formula> = held.iter().map(|b| &*b.formula).collect();
            if let Some(core) = st.core.clone() {
                core_answers += 1;
                let members: Vec<&Formula> = core
                    .iter()
                    .map(|&k| {
                        assert!(st.beliefs[k].active, "a core member is not active");
                        &*st.beliefs[k].spec.formula
                    })
                    .collect();
                assert!(
                    !oracle::satisfiable(&members),
                    "a remembered core is satisfiable"
                );
            }
            let theta = oracle::theta(&sigma, f);
            assert_eq!(
                st.check(f, None).unwrap().theta,
                theta,
                "Θ of {f} at step {i}"
            );
            let not_f = Formula::Not(Box::new(f.clone()));
            let entails = if oracle::entails(&sigma, f) {
                Entails::Entailed
            } else if oracle::entails(&sigma, &not_f) {
                Entails::Contradicted
            } else {
                Entails::Unknown
            };
            assert_eq!(
                st.entails(f).unwrap().result,
                entails,
                "entails {f} at step {i}"
            );
            assert_eq!(
                st.consistent().unwrap().consistent,
                oracle::satisfiable(&sigma),
                "consistency at step {i}"
            );
            match op % 3 {
                0 if !held.is_empty() => {
                    let id = &held[(*role as usize * 7 + i) % held.len()].id;
                    assert!(st.retract(id));
                }
                _ => {
                    let role =
                        [Role::Fact, Role::Rule, Role::Norm, Role::Assumption][*role as usize % 4];
                    let mut hard: Vec<&Formula> = held
                        .iter()
                        .filter(|b| b.role.is_hard())
                        .map(|b| &*b.formula)
                        .collect();
                    hard.push(f);
                    let conflict = role.is_hard() && !oracle::satisfiable(&hard);
                    let spec = BeliefSpec::new(format!("b{i}"), f.clone()).role(role);
                    let (_, demoted) = st.add_or_demote(spec).unwrap();
                    assert_eq!(demoted, conflict, "demotion of {f} at step {i}");
                }
            }
        }
        (core_answers, st.rules.rebuilds, st.rules.unit_refusals)
    }

    /// A long fixed walk over few atoms, with Σ inconsistent for long stretches and many
    /// rules, retracted too: answers agree with the oracle, and the walk does reach the
    /// mechanisms it is there for (answers from a remembered core, rebuilds of the rules
    /// solver).
    #[test]
    fn remembered_cores_and_rule_chunks_agree_with_the_oracle() {
        let mut next = draws(0x2545_f491_4f6c_dd1d_u64);
        let mut steps = Vec::new();
        for _ in 0..400 {
            let shape = next(4);
            let mut ls: Vec<Formula> = (0..3).map(|_| lit(next(7) as u8, next(2) == 0)).collect();
            let f = match shape {
                0 => ls.swap_remove(0),
                1 => Formula::Or(ls),
                2 => Formula::Implies(Box::new(ls.swap_remove(0)), Box::new(ls.swap_remove(0))),
                _ => Formula::Or(ls[..2].to_vec()),
            };
            steps.push((f, next(4) as u8, next(3) as u8));
        }
        let (core_answers, rebuilds, unit_refusals) = walk_against_oracle(&steps);
        assert!(
            core_answers > 20,
            "only {core_answers} answers from a remembered core"
        );
        assert!(rebuilds > 0, "the rules solver was never rebuilt");
        assert!(
            unit_refusals > 10,
            "only {unit_refusals} rules refused by the unit rules"
        );
    }

    /// A rule false under the unit rules held is refused without a solve, and a unit rule
    /// retracted no longer refuses anything: its literal's negation is accepted as a rule
    /// afterwards, and so is a rule that a unit put back makes false only with another.
    #[test]
    fn unit_rules_refuse_without_a_solve_until_retracted() {
        use crate::logic::engine::Role;
        let mut st = state(false);
        let add = |st: &mut State, id: &str, f: Formula| {
            st.add_or_demote(BeliefSpec::new(id, f).role(Role::Rule))
                .unwrap()
                .1
        };
        assert!(!add(&mut st, "p", lit(0, true)));
        assert!(!add(&mut st, "q", lit(1, true)));
        let before = st.rules.unit_refusals;
        // ¬a0 ∨ ¬a1 is false under the units a0, a1.
        assert!(add(
            &mut st,
            "x",
            Formula::Or(vec![lit(0, false), lit(1, false)])
        ));
        assert_eq!(st.rules.unit_refusals, before + 1, "refused by a solve");
        assert!(st.retract("p"));
        assert!(st.retract("x"));
        // With a0 gone, neither ¬a0 nor ¬a0 ∨ ¬a1 contradicts the rules held (a1).
        assert!(!add(
            &mut st,
            "y",
            Formula::Or(vec![lit(0, false), lit(1, false)])
        ));
        assert!(!add(&mut st, "z", lit(0, false)));
        // a0 and a1 again, each once more: a1 is held twice, so one retraction keeps it.
        assert!(add(&mut st, "p2", lit(0, true)));
        assert!(!add(&mut st, "q2", lit(1, true)));
        assert!(st.retract("q"));
        assert!(add(&mut st, "w", lit(1, false)));
    }

    /// With a core known and Σ's shortest inconsistent prefix a small part of Σ, the
    /// conflict is searched on fresh solvers over that prefix. It is the one deletion from
    /// the back finds in the shortest inconsistent prefix (truth tables), and the one a state
    /// that searches on its main solver finds. Σ is a short random part over six atoms, a
    /// conflicting pair, then a long tail of literals of atoms of their own (in no conflict).
    /// In half of the rounds an early belief is retracted while the core is found (so the
    /// core is the pair) and then put back: the shortest inconsistent prefix may then end
    /// well before the core.
    #[test]
    fn a_known_cores_prefix_gives_the_conflict_of_all_sigma() {
        let mut next = draws(0x2545_f491_4f6c_dd1d_u64);
        let (mut searched, mut earlier) = (0, 0);
        let rounds = 60;
        for round in 0..rounds {
            let mut specs = Vec::new();
            for i in 0..2 + next(10) {
                let ls: Vec<Formula> = (0..1 + next(2))
                    .map(|_| lit(next(6) as u8, next(2) == 0))
                    .collect();
                let f = if ls.len() == 1 {
                    ls[0].clone()
                } else {
                    Formula::Or(ls)
                };
                specs.push(BeliefSpec::new(format!("e{i}"), f));
            }
            let early = specs.len();
            specs.push(BeliefSpec::new("l0", lit(9, true)));
            specs.push(BeliefSpec::new("l1", lit(9, false)));
            let refs: Vec<Formula> = specs.iter().map(|b| (*b.formula).clone()).collect();
            let refs: Vec<&Formula> = refs.iter().collect();
            for i in 0..specs.len() * crate::logic::engine::explain::SMALL_PREFIX {
                let f = Formula::Atom(Atom::Prop(format!("t{i}")));
                specs.push(BeliefSpec::new(format!("t{i}"), f));
            }
            // The shortest inconsistent prefix, then deletion from the back.
            let k = (1..=refs.len())
                .find(|&k| !oracle::satisfiable(&refs[..k]))
                .unwrap();
            let mut keep: Vec<usize> = (0..k).collect();
            for j in (0..k).rev() {
                let without: Vec<&Formula> =
                    keep.iter().filter(|&&m| m != j).map(|&m| refs[m]).collect();
                if !oracle::satisfiable(&without) {
                    keep.retain(|&m| m != j);
                }
            }
            let want: Vec<String> = keep.iter().map(|&m| specs[m].id.clone()).collect();
            earlier += usize::from(k <= early);
            // A retraction leaves the snapshot stale: the main solver answers, and its core
            // is kept.
            let mut st = state(false);
            for b in &specs {
                st.add_or_demote(b.clone()).unwrap();
            }
            st.add_or_demote(BeliefSpec::new("gone", lit(0, true)))
                .unwrap();
            assert!(st.retract("gone"));
            if round % 2 == 0 {
                let r = next(early as u64) as usize;
                st.retract_index(r);
                assert!(!st.consistent().unwrap().consistent);
                st.reactivate(r).unwrap();
            }
            let got = st.consistent().unwrap();
            assert!(!got.consistent, "round {round}");
            assert_eq!(got.conflict, want, "round {round}");
            searched += st.prefix_searches;
            // The same Σ without a history: answered on the snapshot, no core, and the
            // conflict searched on the main solver.
            let mut plain = state(false);
            for b in &specs {
                plain.add_or_demote(b.clone()).unwrap();
            }
            assert_eq!(plain.consistent().unwrap().conflict, want, "round {round}");
            assert_eq!(plain.prefix_searches, 0, "round {round}");
        }
        assert!(
            earlier >= 20,
            "only {earlier} rounds end Σ's conflict early"
        );
        assert!(
            searched >= rounds,
            "only {searched} searches took the prefix"
        );
    }

    /// Σ's conflict found from the prefix known consistent (`sat_prefix`, kept across adds
    /// and retractions) is the one a state with no history finds over the same Σ, and it is
    /// a minimal unsatisfiable set (oracle); the walk does start searches past the start.
    #[test]
    fn conflicts_from_a_known_consistent_prefix_match_a_fresh_search() {
        let mut next = draws(0x9e37_79b9_7f4a_7c15_u64);
        let mut st = state(false);
        let mut resumed = 0;
        for i in 0..300 {
            if next(3) == 0 && !st.held().is_empty() {
                let held = st.held();
                let id = held[next(held.len() as u64) as usize].id.clone();
                assert!(st.retract(&id));
            } else {
                let ls: Vec<Formula> = (0..2).map(|_| lit(next(12) as u8, next(2) == 0)).collect();
                let f = if next(2) == 0 {
                    ls[0].clone()
                } else {
                    Formula::Or(ls)
                };
                st.add_or_demote(BeliefSpec::new(format!("b{i}"), f))
                    .unwrap();
            }
            let held = st.held();
            let sigma: Vec<&Formula> = held.iter().map(|b| &*b.formula).collect();
            if oracle::satisfiable(&sigma) {
                assert!(st.consistent().unwrap().consistent);
                continue;
            }
            resumed += usize::from(st.sat_prefix > 0);
            let got = st.consistent().unwrap().conflict;
            let mut fresh = state(false);
            for b in &held {
                fresh.add_or_demote(b.clone()).unwrap();
            }
            assert_eq!(got, fresh.consistent().unwrap().conflict, "step {i}");
            let members: Vec<&Formula> = got
                .iter()
                .map(|id| &*held.iter().find(|b| &b.id == id).unwrap().formula)
                .collect();
            assert!(!oracle::satisfiable(&members), "step {i}: satisfiable");
            for k in 0..members.len() {
                let mut less = members.clone();
                less.remove(k);
                assert!(oracle::satisfiable(&less), "step {i}: not minimal");
            }
        }
        assert!(
            resumed > 20,
            "only {resumed} searches started past the start"
        );
    }

    /// A cited id that is not in Σ is named whatever Θ is: on a contradiction too (it used to
    /// be named only when Σ ∧ Δ was consistent, so the audit's report of such a citation
    /// depended on whether the recomputation already knew Σ inconsistent).
    #[test]
    fn missing_citations_are_named_on_a_contradiction() {
        let mut st = state(false);
        st.add(BeliefSpec::new("p", lit(0, true))).unwrap();
        let cited = ["p".to_string(), "gone".to_string()];
        let c = st.check(&lit(0, false), Some(&cited)).unwrap();
        assert_eq!(c.theta, Outcome::Contradiction);
        assert_eq!(c.missing_citations, ["gone"]);
        let c = st.check(&lit(1, true), Some(&cited)).unwrap();
        assert_eq!(c.theta, Outcome::NewInfo);
        assert_eq!(c.missing_citations, ["gone"]);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Every repaired model is a model of all of Σ (not only of the beliefs `repair`
        /// re-evaluated) in which the formula has the value asked for; and the gate and
        /// `entails` answer the same with repairs as with every side solved, and as the
        /// truth-table oracle, through additions and retractions.
        #[test]
        fn repairs_are_models_and_answer_as_solving_does(
            steps in prop::collection::vec((formula(), 0u8..12), 30..90),
        ) {
            let mut fast = state(false);
            let mut slow = state(true);
            for (i, (f, op)) in steps.iter().enumerate() {
                let sigma = held(&fast);
                let refs: Vec<&Formula> = sigma.iter().collect();
                let theta = fast.check(f, None).unwrap().theta;
                prop_assert_eq!(theta, slow.check(f, None).unwrap().theta);
                let expect = oracle::theta(&refs, f);
                prop_assert_eq!(theta, expect);
                prop_assert_eq!(
                    fast.entails(f).unwrap().result,
                    slow.entails(f).unwrap().result
                );
                for want in [true, false] {
                    let Some(flips) = fast.repair(f, want) else { continue };
                    let mut m = fast.model.clone().unwrap_or_default();
                    for &(v, b) in &flips {
                        if m.len() <= v {
                            m.resize(v + 1, false);
                        }
                        m[v] = b;
                    }
                    let mut value = |a: &Atom| {
                        fast.enc.atom_var(a).is_some_and(|v| m.get(v.index()).copied().unwrap_or(false))
                    };
                    for b in &sigma {
                        prop_assert_eq!(cnf::eval(b, &mut value), Some(true));
                    }
                    prop_assert_eq!(cnf::eval(f, &mut value), Some(want));
                }
                match op {
                    0 | 1 => {
                        // Retract the oldest belief from both.
                        if let Some(b) = fast.held().first().map(|b| b.id.clone()) {
                            prop_assert!(fast.retract(&b));
                            prop_assert!(slow.retract(&b));
                        }
                    }
                    _ if theta == Outcome::NewInfo => {
                        let spec = BeliefSpec::new(format!("b{i}"), f.clone()).step(i as u64);
                        fast.add(spec.clone()).unwrap();
                        slow.add(spec).unwrap();
                    }
                    _ => {}
                }
            }
        }

        /// The same walk on random steps.
        #[test]
        fn random_walks_agree_with_the_oracle(
            steps in prop::collection::vec((formula(), 0u8..4, 0u8..3), 20..80),
        ) {
            walk_against_oracle(&steps);
        }
    }
}
