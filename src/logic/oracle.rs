//! A brute-force truth-table oracle for differential tests (not for production use: it is
//! exponential in the number of atoms).
//!
//! It shares only [`crate::logic::cnf::eval`] with the engine, so a bug in the Tseitin
//! encoding, the selectors, the model cache or the solver plumbing shows up as a disagreement.
//! The functional constraint of value atoms (one value per key) is implemented here by
//! skipping assignments, apart from the engine's at-most-one clauses.

use std::collections::HashMap;

use crate::logic::cnf::{atoms_of, eval};
use crate::logic::formula::{Atom, Formula};

/// More atoms than this and the oracle refuses (2^20 assignments).
pub const MAX_ATOMS: usize = 20;

/// The atoms of a set of formulas, each once.
pub fn atoms(fs: &[&Formula]) -> Vec<Atom> {
    let mut out = Vec::new();
    for f in fs {
        atoms_of(f, &mut out);
    }
    out
}

/// Calls `visit` with every assignment of `atoms` (as a lookup function) until it returns
/// `true`; returns whether it did.
///
/// Only assignments of the semantics are visited: a key holds at most one value, so an
/// assignment making two distinct value atoms of one key true is skipped (checked here by
/// counting, independently of the engine's at-most-one clauses).
pub fn any_assignment(
    atoms: &[Atom],
    mut visit: impl FnMut(&dyn Fn(&Atom) -> bool) -> bool,
) -> bool {
    assert!(atoms.len() <= MAX_ATOMS, "oracle: too many atoms");
    let pos: HashMap<&Atom, usize> = atoms.iter().enumerate().map(|(i, a)| (a, i)).collect();
    // For each key, the mask of its value atoms' positions.
    let mut keys: HashMap<&str, u64> = HashMap::new();
    for (i, a) in atoms.iter().enumerate() {
        if let Atom::Value(v) = a {
            *keys.entry(v.key.as_str()).or_insert(0) |= 1 << i;
        }
    }
    for mask in 0u64..(1u64 << atoms.len()) {
        if keys.values().any(|&k| (mask & k).count_ones() > 1) {
            continue;
        }
        let value = |a: &Atom| pos.get(a).is_some_and(|&i| mask >> i & 1 == 1);
        if visit(&value) {
            return true;
        }
    }
    false
}

/// Whether every formula holds under `value`. Panics on quantifiers.
pub fn all_true(fs: &[&Formula], value: &dyn Fn(&Atom) -> bool) -> bool {
    fs.iter()
        .all(|f| eval(f, &mut |a| value(a)).expect("oracle: ground formulas only"))
}

/// Is the conjunction of `fs` satisfiable?
pub fn satisfiable(fs: &[&Formula]) -> bool {
    let atoms = atoms(fs);
    any_assignment(&atoms, |v| all_true(fs, v))
}

/// Does the conjunction of `fs` entail `phi`?
pub fn entails(fs: &[&Formula], phi: &Formula) -> bool {
    let mut all: Vec<&Formula> = fs.to_vec();
    all.push(phi);
    let atoms = atoms(&all);
    !any_assignment(&atoms, |v| {
        all_true(fs, v) && !eval(phi, &mut |a| v(a)).expect("oracle: ground formulas only")
    })
}

/// The gate Θ(Σ, Δ) by truth table: `Contradiction` when Σ ∧ Δ is unsatisfiable, else
/// `Entailed` when Σ ⊨ Δ, else `NewInfo` (seed 001's definition, with no engine in between).
pub fn theta(sigma: &[&Formula], delta: &Formula) -> crate::logic::engine::Outcome {
    use crate::logic::engine::Outcome;
    let mut with: Vec<&Formula> = sigma.to_vec();
    with.push(delta);
    if !satisfiable(&with) {
        Outcome::Contradiction
    } else if entails(sigma, delta) {
        Outcome::Entailed
    } else {
        Outcome::NewInfo
    }
}
