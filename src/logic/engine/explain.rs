//! Explanations: `consistent`, `why`, `supports`, `whynot` and the conflicts other requests
//! report, with the minimal-subset searches behind them ([`preferred_mus`], MARCO). Each
//! runs on a throw-away solver ([`Fresh`]) built from Σ and the question alone, and every
//! set is re-checked before it is returned.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use varisat::Lit;

use super::state::{State, atom_refs, switch_off};
use super::{Consistency, EngineError, Supports, Why, WhyNot};
use crate::logic::cnf::{self, Tseitin};
use crate::logic::formula::{Atom, Formula};
use crate::logic::solver::{Sat, SolveError, Stop};

/// What connects beliefs in a [`State::cone`]: an atom, or the key of a value atom (the
/// values of one key exclude each other, so beliefs mentioning two of them interact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Link<'a> {
    Atom(&'a Atom),
    Key(&'a str),
}

impl<'a> Link<'a> {
    fn of(a: &'a Atom) -> Link<'a> {
        match a {
            Atom::Value(v) => Link::Key(&v.key),
            a => Link::Atom(a),
        }
    }
}

impl State {
    /// A minimal set of active rules/norms that together with `f` (ground, made true) is
    /// unsatisfiable: the preferred one among the rules and norms atom-connected to `f`.
    pub(super) fn hard_conflict(
        &mut self,
        lits: &[Lit],
        f: &Formula,
    ) -> Result<Vec<String>, EngineError> {
        let hard: Vec<usize> = self
            .active()
            .into_iter()
            .filter(|&i| self.beliefs[i].spec.role.is_hard())
            .collect();
        let members = self.cone(&[f], &hard);
        let m = self.explain(&[(f, true)], lits, &members)?;
        Ok(self.names(&m.unwrap_or_default()))
    }

    /// The beliefs of `among` (indices, ascending) connected to `seeds` through shared atoms,
    /// directly or through other beliefs of `among`, in the order of `among`. A minimal
    /// unsatisfiable set containing the seeds is atom-connected, so when `among` is
    /// consistent on its own every explanation of the seeds lies in this cone, and the
    /// cone depends on Σ and the seeds alone.
    ///
    /// Value atoms of one key are connected through their key (they exclude each other).
    pub(super) fn cone(&self, seeds: &[&Formula], among: &[usize]) -> Vec<usize> {
        let mut by_atom: HashMap<Link<'_>, Vec<usize>> = HashMap::new();
        let mut atoms_of: Vec<Vec<Link<'_>>> = Vec::with_capacity(among.len());
        for (k, &i) in among.iter().enumerate() {
            let atoms: Vec<Link<'_>> = atom_refs(self.beliefs[i].formula())
                .into_iter()
                .map(Link::of)
                .collect();
            for &a in &atoms {
                by_atom.entry(a).or_default().push(k);
            }
            atoms_of.push(atoms);
        }
        let mut seen_atoms: HashSet<Link<'_>> = HashSet::new();
        let mut todo: Vec<Link<'_>> = Vec::new();
        for f in seeds {
            todo.extend(atom_refs(f).into_iter().map(Link::of));
        }
        let mut inside = vec![false; among.len()];
        while let Some(a) = todo.pop() {
            if !seen_atoms.insert(a) {
                continue;
            }
            for &k in by_atom.get(&a).map(Vec::as_slice).unwrap_or(&[]) {
                if !inside[k] {
                    inside[k] = true;
                    todo.extend(atoms_of[k].iter().copied());
                }
            }
        }
        among
            .iter()
            .zip(inside)
            .filter(|&(_, x)| x)
            .map(|(&i, _)| i)
            .collect()
    }

    /// The *preferred* minimal subset of `members` (belief indices in commitment order) that
    /// is unsatisfiable together with the `hard` formulas (each with the value it must take),
    /// re-checked before it is returned; `None` when they are satisfiable together.
    ///
    /// Deterministic by construction: the answer is a function of the formulas, their order
    /// and satisfiability alone (see [`preferred_mus`]), never of a solver's history, and it
    /// runs on a fresh solver holding just `members`.
    pub(super) fn explain(
        &mut self,
        hard: &[(&Formula, bool)],
        hard_main: &[Lit],
        members: &[usize],
    ) -> Result<Option<Vec<usize>>, EngineError> {
        let mut big = Big::new(self, hard_main, members);
        let all: Vec<usize> = (0..members.len()).collect();
        if big.sat(self, &all)? {
            return Ok(None);
        }
        // The preferred set is the colex-smallest minimal unsatisfiable subset (smallest last
        // member, then smallest second-to-last, ...), so it is also the preferred set of any
        // subset of `members` that contains it. Search a core first, on a small fresh
        // solver, then confirm on the main solver (warm: proving a large set unsatisfiable
        // from scratch is what made this slow) that no earlier prefix does it: with
        // M = {e₁ > e₂ > …}, each {e₁…eⱼ₋₁} ∪ members[<eⱼ] must be satisfiable. A check that
        // fails yields a core whose preferred set is colex-smaller, and the search repeats on
        // it. Only satisfiability decides the answer; cores only choose where to look.
        let mut cand: Vec<usize> = big.core(self);
        let mut rounds = 0;
        loop {
            // Each round finds a colex-smaller set, but a run of loose cores could take
            // many rounds: after a few, search every member at once (exact, so the
            // confirmation then holds at once).
            rounds += 1;
            if rounds > MAX_ROUNDS {
                cand = all.clone();
            }
            cand.sort_unstable();
            cand.dedup();
            let sub: Vec<usize> = cand.iter().map(|&k| members[k]).collect();
            let mut small = Fresh::new(self, hard, &sub)?;
            let idx: Vec<usize> = (0..sub.len()).collect();
            let Some(m) = preferred_mus(&mut small, &idx)? else {
                // An invalid core: search all of them.
                cand = all.clone();
                continue;
            };
            let m: Vec<usize> = m.into_iter().map(|p| cand[p]).collect();
            let mut needed: Vec<usize> = Vec::with_capacity(m.len());
            let mut earlier = None;
            let mut model: Option<Vec<bool>> = None;
            for &e in m.iter().rev() {
                // The last model satisfies the previous set; if it also satisfies the member
                // just added, it satisfies this (smaller) one.
                let known = model.as_ref().is_some_and(|vals| {
                    needed.last().is_some_and(|&k| {
                        cnf::eval(self.beliefs[members[k]].formula(), &mut |a| {
                            self.enc
                                .atom_var(a)
                                .and_then(|v| vals.get(v.index()).copied())
                                .unwrap_or(false)
                        }) == Some(true)
                    })
                });
                if !known {
                    let mut set = needed.clone();
                    set.extend(0..e);
                    if !big.sat(self, &set)? {
                        earlier = Some(big.core(self));
                        break;
                    }
                    let mut vals = vec![false; self.enc.num_vars()];
                    for l in self.main.model().unwrap_or_default() {
                        if let Some(v) = vals.get_mut(l.index()) {
                            *v = l.is_positive();
                        }
                    }
                    model = Some(vals);
                }
                needed.push(e);
            }
            match earlier {
                Some(c) => cand = c,
                None => {
                    let m: Vec<usize> = m.into_iter().map(|k| members[k]).collect();
                    self.verify_mus(hard, &m)?;
                    return Ok(Some(m));
                }
            }
        }
    }

    /// Re-checks an explanation on a fresh solver holding only its members: together with
    /// `hard` they are unsatisfiable, and dropping any one member makes them satisfiable. A
    /// set that fails is an [`EngineError::Internal`], never shown.
    pub(super) fn verify_mus(
        &self,
        hard: &[(&Formula, bool)],
        set: &[usize],
    ) -> Result<(), EngineError> {
        let mut fresh = Fresh::new(self, hard, set)?;
        let all: Vec<usize> = (0..set.len()).collect();
        if fresh.sat(true, &all, usize::MAX)? {
            return Err(EngineError::Internal(format!(
                "explanation {:?} is not unsatisfiable",
                self.names(set)
            )));
        }
        for k in 0..set.len() {
            if !fresh.sat(true, &all, k)? {
                return Err(EngineError::Internal(format!(
                    "explanation {:?} is not minimal ({} is not needed)",
                    self.names(set),
                    self.beliefs[set[k]].spec.id
                )));
            }
        }
        Ok(())
    }

    /// Is Σ consistent? If not, Σ's preferred minimal conflicting subset (rules and norms
    /// included): a function of Σ and its order alone.
    pub fn consistent(&mut self) -> Result<Consistency, EngineError> {
        self.sync_active()?;
        if self.sat_with(&[], true)? {
            self.sat_prefix = self.beliefs.len();
            return Ok(Consistency {
                consistent: true,
                conflict: Vec::new(),
            });
        }
        let m = self.sigma_conflict()?;
        Ok(Consistency {
            consistent: false,
            conflict: self.names(&m),
        })
    }

    /// Σ's preferred minimal conflict (Σ inconsistent as grounded now).
    ///
    /// Its last member is the last belief of the shortest inconsistent prefix of Σ, found on
    /// the main solver by bisection over prefixes (its cores propose where to cut and are
    /// checked like any guess). The rest lies in that belief's cone within the prefix: the
    /// other beliefs of the prefix share no atom with it and are satisfiable on their own, so
    /// they change no answer. So the search runs on a fresh solver over that cone alone and
    /// finds the same set as over all of Σ, without encoding all of Σ again.
    pub(super) fn sigma_conflict(&mut self) -> Result<Vec<usize>, EngineError> {
        let active = self.active();
        // A known core ends an inconsistent prefix: when that prefix is a small part of Σ,
        // searching it on a solver of its own spares every solve the selectors of all of Σ.
        if let Some(end) = self
            .core
            .as_ref()
            .and_then(|c| c.last())
            .map(|&last| active.partition_point(|&i| i <= last))
            && end * SMALL_PREFIX <= active.len()
        {
            return self.prefix_conflict(&active[..end]);
        }
        let sels: Vec<Lit> = active.iter().map(|&i| self.beliefs[i].sel).collect();
        let pos: HashMap<Lit, usize> = sels.iter().enumerate().map(|(k, &s)| (s, k)).collect();
        let mut a: Vec<Lit> = Vec::with_capacity(sels.len());
        let mut prefix_sat =
            |main: &mut Sat, k: usize| -> Result<(bool, Option<usize>), SolveError> {
                a.clear();
                a.extend_from_slice(&sels[..k]);
                a.extend(sels[k..].iter().map(|&s| !s));
                let sat = main.solve(&a)?;
                let top = if sat {
                    None
                } else {
                    main.raw_core()
                        .iter()
                        .filter_map(|l| pos.get(l))
                        .copied()
                        .max()
                };
                Ok((sat, top))
            };
        let (all_sat, hint) = prefix_sat(&mut self.main, sels.len())?;
        if all_sat {
            return Err(EngineError::Internal(
                "the solvers disagree on consistency".into(),
            ));
        }
        let known = active.partition_point(|&i| i < self.sat_prefix);
        let main = &mut self.main;
        let hi = shortest_unsat_prefix(known, active.len(), hint, |k| Ok(prefix_sat(main, k)?))?;
        let members = self.conflict_cone(&active[..hi]);
        self.explain(&[], &[], &members)?
            .ok_or_else(|| EngineError::Internal("the solvers disagree on consistency".into()))
    }

    /// With `prefix` Σ's shortest inconsistent prefix, where Σ's preferred conflict lies: the
    /// cone of its last belief within it (the other beliefs share no atom with it and are
    /// consistent on their own). Every belief below that last one is consistent, which
    /// `sat_prefix` now says. A belief without atoms (⊥) is in no cone, its own included, so
    /// it is added.
    fn conflict_cone(&mut self, prefix: &[usize]) -> Vec<usize> {
        let last = prefix[prefix.len() - 1];
        self.sat_prefix = last;
        let seed = self.beliefs[last].formula();
        let mut members = self.cone(&[seed], prefix);
        if members.last() != Some(&last) {
            members.push(last);
        }
        members
    }

    /// [`State::sigma_conflict`] when Σ's shortest inconsistent prefix lies in `prefix`
    /// (active beliefs, ascending, inconsistent together: they end with a known core's last
    /// member). The search is the same, by bisection over prefixes from the one known
    /// consistent, then the preferred minimal conflict of the last belief's cone; both run
    /// on fresh solvers holding only `prefix`, then only the cone, so each solve costs the
    /// prefix rather than Σ. On a long trace whose first conflict stays unresolved, Σ's
    /// conflict was searched with hundreds of thousands of selectors assumed at every solve
    /// for a prefix of a hundred beliefs (issue 31). Every step is decided by satisfiability
    /// alone, so the answer is the one the main solver's search gives.
    fn prefix_conflict(&mut self, prefix: &[usize]) -> Result<Vec<usize>, EngineError> {
        #[cfg(test)]
        {
            self.prefix_searches += 1;
        }
        let mut fresh = Fresh::new(self, &[], prefix)?;
        let mut set: Vec<usize> = Vec::with_capacity(prefix.len());
        let known = prefix.partition_point(|&i| i < self.sat_prefix);
        let hi = shortest_unsat_prefix(known, prefix.len(), None, |k| {
            set.clear();
            set.extend(0..k);
            let sat = fresh.sat(false, &set, usize::MAX)?;
            Ok((
                sat,
                if sat {
                    None
                } else {
                    fresh.core().into_iter().max()
                },
            ))
        })?;
        let members = self.conflict_cone(&prefix[..hi]);
        let mut small = Fresh::new(self, &[], &members)?;
        let idx: Vec<usize> = (0..members.len()).collect();
        let m: Vec<usize> = preferred_mus(&mut small, &idx)?
            .ok_or_else(|| EngineError::Internal("the solvers disagree on consistency".into()))?
            .into_iter()
            .map(|k| members[k])
            .collect();
        self.verify_mus(&[], &m)?;
        Ok(m)
    }

    /// Where the supports of `g` (ground) are looked for: the beliefs atom-connected to `g`.
    /// A support outside them is a conflict of Σ itself (an inconsistent Σ entails
    /// everything), so all of Σ is used when the rest is inconsistent (`every`: all supports
    /// are wanted) or when the cone does not entail `g` (one is).
    fn support_members(&mut self, g: &Formula, every: bool) -> Result<Vec<usize>, EngineError> {
        let all = self.active();
        let cone = self.cone(&[g], &all);
        if cone.len() == all.len() || self.sigma_sat()? {
            return Ok(cone);
        }
        let need_all = if every {
            let inside: HashSet<usize> = cone.iter().copied().collect();
            let rest: Vec<usize> = all
                .iter()
                .copied()
                .filter(|i| !inside.contains(i))
                .collect();
            let mut fresh = Fresh::new(self, &[], &rest)?;
            let k: Vec<usize> = (0..rest.len()).collect();
            !fresh.sat(false, &k, usize::MAX)?
        } else {
            let mut fresh = Fresh::new(self, &[(g, false)], &cone)?;
            let k: Vec<usize> = (0..cone.len()).collect();
            fresh.sat(true, &k, usize::MAX)?
        };
        Ok(if need_all { all } else { cone })
    }

    /// One minimal support of φ: the preferred minimal subset of Σ entailing φ (earliest
    /// beliefs kept), a function of Σ, its order and φ alone, re-checked before it is
    /// returned.
    pub fn why(&mut self, phi: &Formula) -> Result<Why, EngineError> {
        let mut q = self.query(phi)?;
        let neg = self.neg(&mut q).to_vec();
        let g = std::mem::take(&mut q.formula);
        let members = self.support_members(&g, false);
        let r = members.and_then(|m| self.explain(&[(&g, false)], &neg, &m));
        self.finish(q);
        Ok(match r? {
            None => Why {
                entailed: false,
                support: Vec::new(),
            },
            Some(m) => Why {
                entailed: true,
                support: self.names(&m),
            },
        })
    }

    /// All minimal supports of φ, at most `max` of them, within `budget` (capped MARCO on a
    /// fresh solver over the beliefs that can matter). Each is re-checked (it entails φ and
    /// no member can be dropped); they come sorted by size, then by commitment order.
    pub fn supports(
        &mut self,
        phi: &Formula,
        max: usize,
        budget: Duration,
    ) -> Result<Supports, EngineError> {
        let g = self.grounded(phi)?;
        let members = self.support_members(&g, true)?;
        let mut fresh = Fresh::new(self, &[(&g, false)], &members)?;
        let cancel = self.cancel.clone();
        let hard = fresh.hard.clone();
        let sels = fresh.sels.clone();
        let (muses, complete) = marco(&mut fresh.sat, cancel, &hard, &sels, max, budget)?;
        let mut out: Vec<Vec<usize>> = Vec::with_capacity(muses.len());
        for m in muses {
            let mut set: Vec<usize> = m
                .iter()
                .filter_map(|l| fresh.pos.get(l))
                .map(|&k| members[k])
                .collect();
            set.sort_unstable();
            self.verify_mus(&[(&g, false)], &set)?;
            out.push(set);
        }
        out.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        out.dedup();
        Ok(Supports {
            supports: out.iter().map(|m| self.names(m)).collect(),
            complete,
        })
    }

    /// A countermodel of Σ ⊨ φ, validated by evaluating every active belief and ¬φ on it.
    pub fn whynot(&mut self, phi: &Formula) -> Result<WhyNot, EngineError> {
        let mut q = self.query(phi)?;
        let mut a = self.assumptions();
        a.extend_from_slice(self.neg(&mut q));
        let sat = self.main_sat().solve(&a)?;
        let model = if sat { self.main.model() } else { None };
        // The query already holds φ grounded over the current domain.
        let g = std::mem::take(&mut q.formula);
        self.finish(q);
        let Some(model) = model else {
            return Ok(WhyNot { countermodel: None });
        };
        let mut vals = vec![false; self.enc.num_vars()];
        for l in model {
            if let Some(v) = vals.get_mut(l.index()) {
                *v = l.is_positive();
            }
        }
        let mut value = |a: &Atom| {
            self.enc
                .atom_var(a)
                .and_then(|v| vals.get(v.index()).copied())
                .unwrap_or(false)
        };
        for b in self.beliefs.iter().filter(|b| b.active) {
            if cnf::eval(b.formula(), &mut value) != Some(true) {
                return Err(EngineError::Internal(format!(
                    "countermodel violates belief {}",
                    b.spec.id
                )));
            }
        }
        if cnf::eval(&g, &mut value) != Some(false) {
            return Err(EngineError::Internal(
                "countermodel satisfies the query".into(),
            ));
        }
        // Project on the atoms of φ and of the beliefs sharing an atom with φ, or a key of
        // one of its value atoms (the value the key holds is what rules φ's value out).
        let mut atoms = Vec::new();
        cnf::atoms_of(&g, &mut atoms);
        let query_atoms: HashSet<Atom> = atoms.iter().cloned().collect();
        let query_keys: HashSet<String> = atoms
            .iter()
            .filter_map(|a| match a {
                Atom::Value(v) => Some(v.key.clone()),
                _ => None,
            })
            .collect();
        let shared = |a: &Atom| {
            query_atoms.contains(a) || matches!(a, Atom::Value(v) if query_keys.contains(&v.key))
        };
        for b in self.beliefs.iter().filter(|b| b.active) {
            let mut ba = Vec::new();
            cnf::atoms_of(b.formula(), &mut ba);
            if ba.iter().any(shared) {
                for a in ba {
                    if !atoms.contains(&a) {
                        atoms.push(a);
                    }
                }
            }
        }
        let countermodel = atoms
            .into_iter()
            .map(|a| {
                let v = value(&a);
                (a, v)
            })
            .collect();
        Ok(WhyNot {
            countermodel: Some(countermodel),
        })
    }
}

/// A throw-away solver for one explanation: some beliefs, each behind a selector of its own,
/// and some *hard* formulas assumed on demand. Built in a canonical order (the hard formulas,
/// then the members in the order given), so nothing of the long-lived solvers' history
/// reaches an explanation.
pub(super) struct Fresh {
    sat: Sat,
    /// The hard formulas' literals, each with its required value.
    hard: Vec<Lit>,
    /// The members' selectors, in order.
    sels: Vec<Lit>,
    /// Selector -> member position.
    pos: HashMap<Lit, usize>,
    /// Whether the hard formulas alone are satisfiable, from a solver of their own: asking
    /// this one would solve every member's definitions too (huge for a huge belief).
    hard_sat: bool,
}

impl Fresh {
    /// A solver holding `members` (belief indices of `st`) and the `hard` formulas.
    pub(super) fn new(
        st: &State,
        hard: &[(&Formula, bool)],
        members: &[usize],
    ) -> Result<Fresh, EngineError> {
        let mut enc = Tseitin::new();
        let mut cls: Vec<Vec<Lit>> = Vec::new();
        let mut hard_lits = Vec::with_capacity(hard.len());
        for (f, value) in hard {
            let t = enc.encode(f, &mut cls)?;
            hard_lits.push(if *value { t } else { !t });
        }
        let hard_sat = hard.is_empty() || {
            let mut alone = Sat::new(st.cancel.clone());
            for c in &cls {
                alone.add_clause(c);
            }
            alone.solve(&hard_lits)?
        };
        let mut sels = Vec::with_capacity(members.len());
        for &i in members {
            let t = enc.encode(st.beliefs[i].formula(), &mut cls)?;
            let s = enc.fresh_var().positive();
            cls.push(vec![!s, t]);
            sels.push(s);
        }
        let mut sat = Sat::new(st.cancel.clone());
        for c in &cls {
            sat.add_clause(c);
        }
        let pos = sels.iter().enumerate().map(|(k, &s)| (s, k)).collect();
        Ok(Fresh {
            sat,
            hard: hard_lits,
            sels,
            pos,
            hard_sat,
        })
    }

    /// Whether the members at positions `set` (all but `set[skip]`), with the hard formulas
    /// when `with_hard`, are satisfiable. Every other selector is assumed false: left free,
    /// saved phases switch selectors on and a propagation check becomes a search.
    pub(super) fn sat(
        &mut self,
        with_hard: bool,
        set: &[usize],
        skip: usize,
    ) -> Result<bool, EngineError> {
        if set.len() == usize::from(skip < set.len()) {
            return Ok(!with_hard || self.hard_sat);
        }
        let mut on = vec![false; self.sels.len()];
        let mut a: Vec<Lit> = Vec::with_capacity(self.hard.len() + self.sels.len());
        if with_hard {
            a.extend_from_slice(&self.hard);
        }
        for (k, &p) in set.iter().enumerate() {
            if k != skip {
                on[p] = true;
                a.push(self.sels[p]);
            }
        }
        a.extend(
            self.sels
                .iter()
                .zip(&on)
                .filter(|&(_, &o)| !o)
                .map(|(&s, _)| !s),
        );
        Ok(self.sat.solve(&a)?)
    }

    /// After an unsatisfiable [`Fresh::sat`]: the member positions in the solver's core, a
    /// hint only (the core is not trusted; whatever it suggests is solved again).
    fn core(&self) -> Vec<usize> {
        self.sat
            .raw_core()
            .iter()
            .filter_map(|l| self.pos.get(l))
            .copied()
            .collect()
    }
}

/// The length of the shortest inconsistent prefix of `n` beliefs (all `n` inconsistent
/// together), by bisection from the first `known` (consistent: no solve needed).
/// `prefix_sat(k)` says whether the first `k` are satisfiable and, when not, the last
/// position its solver's core names: the core and bisection take turns proposing where to
/// cut, and every guess is solved like any other.
fn shortest_unsat_prefix(
    known: usize,
    n: usize,
    mut hint: Option<usize>,
    mut prefix_sat: impl FnMut(usize) -> Result<(bool, Option<usize>), EngineError>,
) -> Result<usize, EngineError> {
    let (mut lo, mut hi) = (known.min(n.saturating_sub(1)), n);
    let mut bisect = false;
    while hi - lo > 1 {
        let guess = hint.map(|t| t + 1).filter(|&k| k > lo && k < hi);
        let mid = match guess {
            Some(g) if !bisect => g,
            _ => lo + (hi - lo) / 2,
        };
        bisect = !bisect && guess.is_some();
        let (sat, top) = prefix_sat(mid)?;
        hint = top;
        if sat {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi)
}

/// Core-guided rounds of [`State::explain`] before it searches all members at once.
const MAX_ROUNDS: usize = 3;

/// [`State::sigma_conflict`] searches a known core's prefix on fresh solvers when Σ is at
/// least this many times as long: encoding the prefix again costs about as much as one solve
/// over it, and a search on the main solver takes a dozen solves over all of Σ.
pub(super) const SMALL_PREFIX: usize = 4;

/// The main solver seen as a solver over some members: their selectors, the other active
/// selectors switched off, and the hard part's literals.
struct Big {
    hard: Vec<Lit>,
    sels: Vec<Lit>,
    universe: Vec<Lit>,
    pos: HashMap<Lit, usize>,
}

impl Big {
    fn new(st: &mut State, hard: &[Lit], members: &[usize]) -> Big {
        let sels: Vec<Lit> = members.iter().map(|&i| st.beliefs[i].sel).collect();
        let pos = sels.iter().enumerate().map(|(k, &s)| (s, k)).collect();
        Big {
            hard: hard.to_vec(),
            sels,
            universe: st.assumptions(),
            pos,
        }
    }

    /// Whether the members at positions `set` with the hard part are satisfiable.
    fn sat(&mut self, st: &mut State, set: &[usize]) -> Result<bool, EngineError> {
        let mut a = self.hard.clone();
        a.extend(set.iter().map(|&k| self.sels[k]));
        switch_off(&mut a, &self.universe);
        Ok(st.main.solve(&a)?)
    }

    /// The member positions in the core of the last unsatisfiable [`Big::sat`] (a hint).
    fn core(&self, st: &State) -> Vec<usize> {
        st.main
            .raw_core()
            .iter()
            .filter_map(|l| self.pos.get(l))
            .copied()
            .collect()
    }
}

/// The *preferred* minimal unsatisfiable subset of `cand` (member positions, ascending: the
/// order of preference) together with the hard formulas, or `None` when they are all
/// satisfiable together.
///
/// It is the set deletion from the back would find (keep the earliest beliefs, drop the
/// latest possible), computed by progression: with `needed` the members found so far, the
/// next member is the last of the shortest prefix of the remaining candidates that is
/// unsatisfiable with `needed`, found by bisection (the solver's core proposes where to cut,
/// and is checked like any other guess). Every step is decided by satisfiability alone, so the
/// answer is a function of the formulas and their order: two solvers, or one solver with any
/// history, give the same set. About `|M|·log n` solves.
pub(super) fn preferred_mus(
    fresh: &mut Fresh,
    cand: &[usize],
) -> Result<Option<Vec<usize>>, EngineError> {
    if fresh.sat(true, cand, usize::MAX)? {
        return Ok(None);
    }
    let mut needed: Vec<usize> = Vec::new();
    let mut cand: Vec<usize> = cand.to_vec();
    // Invariant: needed ∪ cand[..hi] is unsatisfiable (with the hard formulas).
    let mut hint = fresh.core();
    loop {
        let hi0 = cand.len();
        if hi0 == 0 {
            break;
        }
        let mut test: Vec<usize> = needed.clone();
        if !fresh.sat(true, &test, usize::MAX)? {
            break;
        }
        // needed ∪ cand[..lo] is satisfiable.
        let (mut lo, mut hi) = (0usize, hi0);
        let mut bisect = false;
        while hi - lo > 1 {
            // The core's suggestion and bisection take turns: the core is usually right
            // at once, and bisection bounds the worst case to about 2·log n solves.
            let guess = hint
                .iter()
                .filter_map(|p| cand.binary_search(p).ok())
                .max()
                .map(|k| k + 1)
                .filter(|&k| k > lo && k < hi);
            hint.clear();
            let mid = match guess {
                Some(g) if !bisect => g,
                _ => lo + (hi - lo) / 2,
            };
            bisect = !bisect && guess.is_some();
            test.truncate(needed.len());
            test.extend_from_slice(&cand[..mid]);
            if fresh.sat(true, &test, usize::MAX)? {
                lo = mid;
            } else {
                hi = mid;
                hint = fresh.core();
            }
        }
        needed.push(cand[hi - 1]);
        cand.truncate(hi - 1);
    }
    needed.sort_unstable();
    Ok(Some(needed))
}

/// Deletion-based MUS with clause-set refinement: a subset-minimal `M ⊆ soft` with
/// `hard ∧ M` unsatisfiable, `None` when `hard ∧ soft` is satisfiable. Elements at the end of
/// `soft` are tried for removal first, so earlier ones are preferred. The result is validated
/// by a final solve; a refinement spoiled by an invalid core is redone without cores.
///
/// Selectors of `universe` outside the set being tested are assumed false: left free, the
/// solver's saved phases switch them on and a propagation check turns into a search.
pub(super) fn mus(
    sat: &mut Sat,
    hard: &[Lit],
    soft: Vec<Lit>,
    universe: &[Lit],
) -> Result<Option<Vec<Lit>>, SolveError> {
    let mut all = hard.to_vec();
    all.extend_from_slice(&soft);
    switch_off(&mut all, universe);
    let Some(core) = sat.validated_core(&all, universe)? else {
        return Ok(None);
    };
    let core: HashSet<Lit> = core.into_iter().collect();
    let cand: Vec<Lit> = soft.iter().copied().filter(|l| core.contains(l)).collect();
    if let Some(m) = shrink(sat, hard, cand, true, universe)? {
        return Ok(Some(m));
    }
    shrink(sat, hard, soft, false, universe)?
        .map(Some)
        .ok_or_else(|| SolveError::Solver("no minimal unsatisfiable subset validated".into()))
}

fn shrink(
    sat: &mut Sat,
    hard: &[Lit],
    mut cand: Vec<Lit>,
    refine: bool,
    universe: &[Lit],
) -> Result<Option<Vec<Lit>>, SolveError> {
    let mut needed: Vec<Lit> = Vec::new();
    let mut a = Vec::new();
    while let Some(c) = cand.pop() {
        a.clear();
        a.extend_from_slice(hard);
        a.extend_from_slice(&needed);
        a.extend_from_slice(&cand);
        switch_off(&mut a, universe);
        if sat.solve(&a)? {
            needed.push(c);
        } else if refine {
            let core: HashSet<Lit> = sat.raw_core().into_iter().collect();
            cand.retain(|l| core.contains(l));
        }
    }
    a.clear();
    a.extend_from_slice(hard);
    a.extend_from_slice(&needed);
    switch_off(&mut a, universe);
    if sat.solve(&a)? {
        return Ok(None);
    }
    needed.reverse();
    Ok(Some(needed))
}

/// Capped MARCO: enumerates minimal subsets of `soft` unsatisfiable with `hard`. Returns
/// them and whether the enumeration finished within `max` and `budget`.
fn marco(
    sat: &mut Sat,
    cancel: Arc<Stop>,
    hard: &[Lit],
    soft: &[Lit],
    max: usize,
    budget: Duration,
) -> Result<(Vec<Vec<Lit>>, bool), SolveError> {
    let start = Instant::now();
    // Map solver: variable i true = soft[i] excluded. varisat decides false first, so seeds
    // start large (MUS-first).
    let mut map = Sat::new(cancel);
    let n = soft.len();
    let x = |i: usize| varisat::Var::from_index(i).positive();
    // Map variables the map solver has never seen are absent from its models, which reads
    // as "not excluded": exactly the default wanted.
    let mut out = Vec::new();
    let mut a = hard.to_vec();
    a.extend_from_slice(soft);
    if sat.solve(&a)? {
        return Ok((out, true));
    }
    loop {
        if out.len() >= max || start.elapsed() > budget {
            return Ok((out, false));
        }
        if !map.solve(&[])? {
            return Ok((out, true));
        }
        let model = map.model().unwrap_or_default();
        let mut excluded = vec![false; n];
        for l in model {
            if l.index() < n {
                excluded[l.index()] = l.is_positive();
            }
        }
        let seed: Vec<usize> = (0..n).filter(|&i| !excluded[i]).collect();
        a.clear();
        a.extend_from_slice(hard);
        a.extend(seed.iter().map(|&i| soft[i]));
        switch_off(&mut a, soft);
        if sat.solve(&a)? {
            // Grow to a maximal satisfiable subset; block all its subsets.
            let mut keep = seed.clone();
            for i in 0..n {
                if excluded[i] {
                    a.clear();
                    a.extend_from_slice(hard);
                    a.extend(keep.iter().map(|&j| soft[j]));
                    a.push(soft[i]);
                    switch_off(&mut a, soft);
                    if sat.solve(&a)? {
                        keep.push(i);
                    }
                }
            }
            let kept: HashSet<usize> = keep.into_iter().collect();
            let block: Vec<Lit> = (0..n)
                .filter(|i| !kept.contains(i))
                .map(|i| !x(i))
                .collect();
            if block.is_empty() {
                return Ok((out, true));
            }
            map.add_clause(&block);
        } else {
            let sub: Vec<Lit> = seed.iter().map(|&i| soft[i]).collect();
            let Some(m) = mus(sat, hard, sub, soft)? else {
                return Err(SolveError::Solver("seed became satisfiable".into()));
            };
            let pos: HashMap<Lit, usize> = soft.iter().enumerate().map(|(i, &l)| (l, i)).collect();
            let block: Vec<Lit> = m.iter().filter_map(|l| pos.get(l)).map(|&i| x(i)).collect();
            out.push(m);
            if block.is_empty() {
                return Ok((out, true));
            }
            map.add_clause(&block);
        }
    }
}
