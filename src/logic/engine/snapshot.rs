//! The gate: the snapshot solver (Σ as plain clauses), the cached model of Σ, and the
//! questions answered from them, Θ (`check`) and `entails` (see the module docs of
//! [`crate::logic::engine`] for why Σ is kept twice).

use varisat::Lit;

use super::state::{Entry, Query, Side, State, switch_off};
use super::{Check, EngineError, Entailment, Entails, Outcome};
use crate::logic::cnf;
use crate::logic::formula::Formula;
use crate::logic::solver::Sat;

/// Clause sides up to this long are split into one call per literal instead of a probe
/// ([`State::sat_side`]).
const SPLIT_MAX: usize = 4;

impl State {
    pub(super) fn rebuild_snapshot(&mut self) {
        let mut sat = Sat::new(self.cancel.clone());
        sat.set_disabled(self.dead_probes.iter().map(|&p| !p).collect());
        for e in &self.log {
            match e {
                Entry::Both(c) => sat.add_clause(c),
                Entry::Snap(c, b) if self.beliefs[*b].active => sat.add_clause(c),
                _ => {}
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
    pub(super) fn sat_with(&mut self, extra: &[Lit], keep: bool) -> Result<bool, EngineError> {
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
        Ok(sat)
    }

    /// Θ(Σ, Δ) with one SAT call in the common case (the cached model decides the other).
    pub(super) fn theta(&mut self, delta: &Formula, q: &mut Query) -> Result<Outcome, EngineError> {
        let model_ok = match self.model_satisfies(delta) {
            Some(v) => v,
            None => {
                if !self.sat_side(q, true, true)? {
                    return Ok(Outcome::Contradiction);
                }
                true
            }
        };
        if model_ok {
            // Σ∧Δ is satisfiable (the model shows it); is Σ∧¬Δ?
            // Keep the model that satisfies Δ: Δ often joins Σ next.
            return Ok(if self.sat_side(q, false, false)? {
                Outcome::NewInfo
            } else {
                Outcome::Entailed
            });
        }
        // The model satisfies Σ∧¬Δ, so Δ is not entailed; is Σ∧Δ satisfiable?
        Ok(if self.sat_side(q, true, true)? {
            Outcome::NewInfo
        } else {
            Outcome::Contradiction
        })
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
        let theta = self.theta(delta, &mut q)?;
        let mut missing = Vec::new();
        let mut outcome = theta;
        if let (Some(cited), true) = (because, theta != Outcome::Contradiction) {
            let mut a = Vec::new();
            for id in cited {
                match self.index_of(id) {
                    Some(i) => a.push(self.beliefs[i].sel),
                    None => missing.push(id.clone()),
                }
            }
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
        let entailed = !self.sat_side(&mut q, false, true)?;
        let contradicted = !self.sat_side(&mut q, true, true)?;
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
