//! Minimal corrections: every way to restore consistency by giving up as little as possible.
//!
//! A revision policy picks *one* repair of a conflict; `whatif` shows the others. A *minimal
//! correction set* (MCS) of soft formulas S under hard formulas H is a set C ⊆ S such that
//! H ∪ (S − C) is satisfiable and H ∪ (S − C') is not for any proper subset C' of C: the
//! complement of a maximal satisfiable subset. [`minimal_corrections`] enumerates them on a
//! fresh solver of its own (the belief state is never touched):
//!
//! 1. every soft formula gets a selector `s` with `¬s ∨ t_φ`;
//! 2. a set M grows greedily in the given order while H, M and the blocking clauses found so
//!    far stay satisfiable (earlier formulas are kept first);
//! 3. M takes in every soft formula a model of it satisfies (that model satisfies every
//!    blocking clause through some soft formula, so M now meets every correction found
//!    before) and grows again while H ∪ M stays satisfiable, which makes it a maximal
//!    satisfiable subset: its complement C is a minimal correction;
//! 4. the clause `∨_{i∈C} s_i` blocks C and every superset of it, and the loop goes on until
//!    H and the blocking clauses are unsatisfiable (every MCS has been found) or the cap or the
//!    budget is reached.
//!
//! Since M meets every correction found before, its complement is never a superset of one:
//! no correction is found twice. Formulas
//! must be ground. The test `tests/logic_corrections.rs` checks minimality and completeness
//! against a truth table.
//!
//! It holds a solver of its own and reads nothing of [`State`](super::State): the belief
//! state is never touched.

use std::sync::Arc;
use std::time::{Duration, Instant};

use varisat::Lit;

use super::EngineError;
use crate::logic::cnf::{Tseitin, eval};
use crate::logic::formula::Formula;
use crate::logic::solver::{Sat, SolveError, Stop};

/// The minimal corrections found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corrections {
    /// Each a minimal correction set: indices into the soft formulas, ascending. An empty set
    /// alone means the formulas are consistent already.
    pub sets: Vec<Vec<usize>>,
    /// Whether these are provably all of them (not cut by the cap or the budget).
    pub complete: bool,
    /// The hard formulas alone are unsatisfiable: no correction of the soft ones helps.
    pub hard_inconsistent: bool,
}

/// Every minimal correction set of `soft` under `hard` (ground formulas), at most `max` of
/// them, within `budget` (see the module docs). Soft formulas earlier in the list are kept
/// first when a set grows, so the first correction found gives up the latest formulas it can.
pub fn minimal_corrections(
    hard: &[&Formula],
    soft: &[&Formula],
    max: usize,
    budget: Duration,
) -> Result<Corrections, EngineError> {
    let stop = Stop::new();
    if let Some(d) = Instant::now().checked_add(budget) {
        stop.set_deadline(d);
    }
    let mut enc = Tseitin::new();
    let mut clauses: Vec<Vec<Lit>> = Vec::new();
    for f in hard {
        let t = enc.encode(f, &mut clauses)?;
        clauses.push(vec![t]);
    }
    let mut sels = Vec::with_capacity(soft.len());
    for f in soft {
        let t = enc.encode(f, &mut clauses)?;
        let s = enc.fresh_var().positive();
        clauses.push(vec![!s, t]);
        sels.push(s);
    }
    let mut sat = Sat::new(Arc::clone(&stop));
    for c in &clauses {
        sat.add_clause(c);
    }
    let mut out = Corrections {
        sets: Vec::new(),
        complete: false,
        hard_inconsistent: false,
    };
    // A cancelled solve (the budget) ends the enumeration with what was found: every set
    // found is a genuine minimal correction.
    let cut = |e: SolveError, out: Corrections| -> Result<Corrections, EngineError> {
        match e {
            SolveError::Cancelled => Ok(out),
            e => Err(e.into()),
        }
    };
    loop {
        match sat.solve(&[]) {
            Ok(true) => {}
            Ok(false) => {
                out.hard_inconsistent = out.sets.is_empty();
                out.complete = true;
                return Ok(out);
            }
            Err(e) => return cut(e, out),
        }
        if out.sets.len() >= max {
            return Ok(out);
        }
        // Grow in the given order under the blocking clauses, so earlier formulas are kept
        // first; then take in what a model of that set satisfies (which meets every blocking
        // clause) and grow again: the result is a maximal satisfiable subset.
        let mut kept = vec![false; soft.len()];
        for pass in 0..2 {
            if pass == 1 {
                let a: Vec<Lit> = (0..soft.len())
                    .filter(|&j| kept[j])
                    .map(|j| sels[j])
                    .collect();
                match sat.solve(&a) {
                    Ok(true) => {
                        for (k, v) in satisfied(&sat, &enc, soft).into_iter().enumerate() {
                            kept[k] |= v;
                        }
                    }
                    Ok(false) => {
                        return Err(EngineError::Internal(
                            "a satisfiable set became unsatisfiable".into(),
                        ));
                    }
                    Err(e) => return cut(e, out),
                }
            }
            for i in 0..soft.len() {
                if kept[i] {
                    continue;
                }
                let mut a: Vec<Lit> = (0..soft.len())
                    .filter(|&j| kept[j])
                    .map(|j| sels[j])
                    .collect();
                a.push(sels[i]);
                match sat.solve(&a) {
                    Ok(true) => kept[i] = true,
                    Ok(false) => {}
                    Err(e) => return cut(e, out),
                }
            }
        }
        let correction: Vec<usize> = (0..soft.len()).filter(|&i| !kept[i]).collect();
        if correction.is_empty() {
            // Consistent as they are: the empty set is the only minimal correction.
            out.sets.push(correction);
            out.complete = true;
            return Ok(out);
        }
        let block: Vec<Lit> = correction.iter().map(|&i| sels[i]).collect();
        sat.add_clause(&block);
        out.sets.push(correction);
    }
}

/// Which soft formulas the solver's last model satisfies (evaluated on its atoms).
fn satisfied(sat: &Sat, enc: &Tseitin, soft: &[&Formula]) -> Vec<bool> {
    let model = sat.model().unwrap_or_default();
    let mut value = vec![false; enc.num_vars()];
    for l in model {
        if let Some(v) = value.get_mut(l.index()) {
            *v = l.is_positive();
        }
    }
    soft.iter()
        .map(|f| {
            eval(f, &mut |a| {
                enc.atom_var(a)
                    .and_then(|v| value.get(v.index()).copied())
                    .unwrap_or(false)
            }) == Some(true)
        })
        .collect()
}

/// Whether the conjunction of `fs` (ground) is satisfiable, on a solver of its own, within
/// `budget` (`Err(Timeout)` past it).
pub fn satisfiable(fs: &[&Formula], budget: Duration) -> Result<bool, EngineError> {
    let stop = Stop::new();
    if let Some(d) = Instant::now().checked_add(budget) {
        stop.set_deadline(d);
    }
    let mut enc = Tseitin::new();
    let mut clauses: Vec<Vec<Lit>> = Vec::new();
    for f in fs {
        let t = enc.encode(f, &mut clauses)?;
        clauses.push(vec![t]);
    }
    let mut sat = Sat::new(stop);
    for c in &clauses {
        sat.add_clause(c);
    }
    Ok(sat.solve(&[])?)
}
