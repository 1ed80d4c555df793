//! Graded beliefs as possibilistic logic (seed 000 §2.3, research notes §7).
//!
//! Each retractable belief carries a confidence α ∈ (0, 1]; rules and norms count as 1 (they
//! are hard). The α-cut Σ≥α is the set of beliefs with confidence ≥ α, which with selectors is
//! just a subset of the assumptions: no new clauses. Cuts are nested and (in)consistency is
//! monotone in α, so both degrees are found by binary search over the distinct levels, with
//! ⌈log₂ L⌉ SAT calls each:
//!
//! * Inc(Σ) = max{α : Σ≥α ⊨ ⊥}, 0 when Σ is consistent;
//! * N(φ) = max{α > Inc(Σ) : Σ≥α ⊨ φ}, 0 when there is none. Beliefs at or below Inc(Σ) are
//!   "drowned" and support nothing;
//! * B≥k φ holds when k > Inc(Σ) and Σ≥k ⊨ φ.
//!
//! These grades are ordinal (possibilistic), not probabilities.

use varisat::Lit;

use super::EngineError;
use super::state::{State, switch_off};
use crate::logic::formula::Formula;

impl State {
    /// The distinct confidence levels of the active retractable beliefs, ascending.
    fn levels(&self) -> Vec<f64> {
        let mut l: Vec<f64> = self
            .beliefs
            .iter()
            .filter(|b| b.active && !b.spec.role.is_hard())
            .map(|b| b.spec.confidence)
            .collect();
        l.sort_by(f64::total_cmp);
        l.dedup();
        l
    }

    /// Selectors of the cut Σ≥α.
    fn cut(&self, alpha: f64) -> Vec<Lit> {
        self.beliefs
            .iter()
            .filter(|b| b.active && (b.spec.role.is_hard() || b.spec.confidence >= alpha))
            .map(|b| b.sel)
            .collect()
    }

    /// Σ≥α ∧ extra is unsatisfiable.
    fn cut_unsat(&mut self, alpha: f64, extra: &[Lit]) -> Result<bool, EngineError> {
        let mut a = self.cut(alpha);
        a.extend_from_slice(extra);
        let universe = self.assumptions();
        switch_off(&mut a, &universe);
        Ok(!self.main_sat().solve(&a)?)
    }

    /// The largest index `i` in `levels` with `pred(levels[i])`, for a predicate that holds
    /// on a prefix; `None` if it holds nowhere.
    fn last_true(&mut self, levels: &[f64], extra: &[Lit]) -> Result<Option<usize>, EngineError> {
        if levels.is_empty() || !self.cut_unsat(levels[0], extra)? {
            return Ok(None);
        }
        let (mut lo, mut hi) = (0, levels.len());
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if self.cut_unsat(levels[mid], extra)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(Some(lo))
    }

    /// Inc(Σ): the highest level whose cut is inconsistent, 0 when Σ is consistent.
    pub fn inconsistency_degree(&mut self) -> Result<f64, EngineError> {
        self.sync_active()?;
        self.inc()
    }

    /// Inc(Σ) over the current grounding (a request about a formula has grounded Σ over
    /// its domain already).
    fn inc(&mut self) -> Result<f64, EngineError> {
        let levels = self.levels();
        Ok(self.last_true(&levels, &[])?.map_or(0.0, |i| levels[i]))
    }

    /// N(φ): the highest level above Inc(Σ) whose cut entails φ (0 if none).
    pub fn necessity(&mut self, phi: &Formula) -> Result<f64, EngineError> {
        let mut q = self.query(phi)?;
        let neg = self.neg(&mut q).to_vec();
        let r = self.necessity_lits(&neg);
        self.finish(q);
        r
    }

    /// B≥k φ: the cut at k entails φ and k is above Inc(Σ).
    pub fn believes_at_least(&mut self, phi: &Formula, k: f64) -> Result<bool, EngineError> {
        let mut q = self.query(phi)?;
        let neg = self.neg(&mut q).to_vec();
        let r = self.believes_at_least_lits(&neg, k);
        self.finish(q);
        r
    }

    /// N(φ), given the assumptions `neg` that make φ false.
    pub(crate) fn necessity_lits(&mut self, neg: &[Lit]) -> Result<f64, EngineError> {
        let inc = self.inc()?;
        if inc >= 1.0 {
            return Ok(0.0);
        }
        let mut a = self.fixed_selectors();
        a.extend_from_slice(neg);
        let universe = self.assumptions();
        switch_off(&mut a, &universe);
        if !self.main_sat().solve(&a)? {
            // The rules and norms alone entail φ.
            return Ok(1.0);
        }
        let levels: Vec<f64> = self.levels().into_iter().filter(|&l| l > inc).collect();
        Ok(self.last_true(&levels, neg)?.map_or(0.0, |i| levels[i]))
    }

    /// B≥k φ, given the assumptions `neg` that make φ false.
    pub(crate) fn believes_at_least_lits(
        &mut self,
        neg: &[Lit],
        k: f64,
    ) -> Result<bool, EngineError> {
        let inc = self.inc()?;
        if k <= inc {
            return Ok(false);
        }
        self.cut_unsat(k, neg)
    }
}
