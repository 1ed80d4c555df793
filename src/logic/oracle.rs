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

/// The first-order oracle: the quantifier semantics of [`crate::logic::ground`] decided by
/// truth tables over its own individuals, written apart from the engine's grounding (no
/// [`crate::logic::ground`] function is called, witnesses are not names but individuals of
/// their own, quantifiers are evaluated over the domain instead of expanded). The semantics,
/// as this module reads it:
///
/// - each formula of Σ gets one *witness* individual per variable of its outer existentials
///   (an `∃` in positive position or a `∀` in negative position, below no quantifier that
///   stays and no `↔`), and those quantifiers are read as "the witness satisfies the body";
///   equal formulas share their witnesses, and a witness whose variable occurs in no atom is
///   no individual at all;
/// - the domain is the constants of Σ and of the question, the witnesses of Σ, and those
///   the question would get as a belief and its negation would (`¬φ` shares the witnesses
///   of `φ`), or one anonymous individual when that is empty; every other quantifier ranges
///   over it;
/// - the question itself is read plainly (every quantifier over the domain).
pub mod fo {
    use std::collections::{BTreeSet, HashMap, HashSet};

    use crate::logic::engine::Outcome;
    use crate::logic::formula::{Atom, Formula, Term};

    /// An individual.
    #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
    enum Ind {
        Named(String),
        /// (formula number, quantifier node number within it, variable number)
        Witness(usize, usize, usize),
        Anonymous,
    }

    /// A ground atom over individuals.
    #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
    enum GAtom {
        Prop(String),
        Quoted(String),
        Pred(String, Vec<Ind>),
        /// A value atom: ground already (no variables), one value per key.
        Value(crate::logic::formula::ValueAtom),
    }

    /// How a variable is bound while a formula is walked.
    type Env = HashMap<String, Vec<Ind>>;

    /// One formula to evaluate: `witnesses` maps each outer quantifier node (by address) to
    /// the individuals its variables stand for; empty for the question, read plainly.
    struct Read<'f> {
        formula: &'f Formula,
        witnesses: HashMap<usize, Vec<Ind>>,
    }

    fn addr(f: &Formula) -> usize {
        f as *const Formula as usize
    }

    /// The outer existential quantifier nodes of `f`.
    fn outer(f: &Formula, pol: Option<bool>, kept: bool, out: &mut Vec<*const Formula>) {
        match f {
            Formula::True | Formula::False | Formula::Atom(_) => {}
            Formula::Not(g) => outer(g, pol.map(|p| !p), kept, out),
            Formula::And(gs) | Formula::Or(gs) => {
                for g in gs {
                    outer(g, pol, kept, out);
                }
            }
            Formula::Implies(a, b) => {
                outer(a, pol.map(|p| !p), kept, out);
                outer(b, pol, kept, out);
            }
            Formula::Iff(a, b) => {
                outer(a, None, kept, out);
                outer(b, None, kept, out);
            }
            Formula::Forall(vs, g) | Formula::Exists(vs, g) => {
                let existential = matches!(
                    (f, pol),
                    (Formula::Exists(..), Some(true)) | (Formula::Forall(..), Some(false))
                );
                let is_outer = existential && !kept && !vs.is_empty();
                if is_outer {
                    out.push(f);
                }
                outer(g, pol, kept || (!is_outer && !vs.is_empty()), out);
            }
        }
    }

    /// Walks `f` under `env`, collecting the named constants and the witnesses that occur in
    /// an atom (a witness is bound like a variable, so it occurs when its variable does).
    fn occurring(
        r: &Read<'_>,
        f: &Formula,
        env: &mut Env,
        consts: &mut BTreeSet<Ind>,
        seen_witness: &mut BTreeSet<Ind>,
    ) {
        match f {
            Formula::True | Formula::False => {}
            Formula::Atom(Atom::Pred(_, args)) => {
                for t in args {
                    match t {
                        Term::Const(c) => {
                            consts.insert(Ind::Named(c.clone()));
                        }
                        Term::Var(v) => {
                            if let Some(i @ Ind::Witness(..)) = env.get(v).and_then(|s| s.last()) {
                                seen_witness.insert(i.clone());
                            }
                        }
                    }
                }
            }
            Formula::Atom(_) => {}
            Formula::Not(g) => occurring(r, g, env, consts, seen_witness),
            Formula::And(gs) | Formula::Or(gs) => {
                for g in gs {
                    occurring(r, g, env, consts, seen_witness);
                }
            }
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                occurring(r, a, env, consts, seen_witness);
                occurring(r, b, env, consts, seen_witness);
            }
            Formula::Forall(vs, g) | Formula::Exists(vs, g) => {
                // A variable bound by a quantifier that stays is no witness (shadowing).
                let ws = r.witnesses.get(&addr(f));
                for (k, v) in vs.iter().enumerate() {
                    let i = ws.map_or(Ind::Anonymous, |w| w[k].clone());
                    env.entry(v.clone()).or_default().push(i);
                }
                occurring(r, g, env, consts, seen_witness);
                for v in vs {
                    env.get_mut(v).map(Vec::pop);
                }
            }
        }
    }

    /// The truth of `f` under `value`, quantifiers over `domain` except the outer ones of
    /// `r`, which bind their witnesses.
    fn holds(
        r: &Read<'_>,
        f: &Formula,
        domain: &[Ind],
        env: &mut Env,
        value: &dyn Fn(&GAtom) -> bool,
    ) -> bool {
        match f {
            Formula::True => true,
            Formula::False => false,
            Formula::Atom(a) => value(&ground_atom(a, env)),
            Formula::Not(g) => !holds(r, g, domain, env, value),
            Formula::And(gs) => gs.iter().all(|g| holds(r, g, domain, env, value)),
            Formula::Or(gs) => gs.iter().any(|g| holds(r, g, domain, env, value)),
            Formula::Implies(a, b) => {
                !holds(r, a, domain, env, value) || holds(r, b, domain, env, value)
            }
            Formula::Iff(a, b) => {
                holds(r, a, domain, env, value) == holds(r, b, domain, env, value)
            }
            Formula::Forall(vs, g) | Formula::Exists(vs, g) => {
                if let Some(ws) = r.witnesses.get(&addr(f)) {
                    for (v, w) in vs.iter().zip(ws) {
                        env.entry(v.clone()).or_default().push(w.clone());
                    }
                    let b = holds(r, g, domain, env, value);
                    for v in vs {
                        env.get_mut(v).map(Vec::pop);
                    }
                    return b;
                }
                let forall = matches!(f, Formula::Forall(..));
                tuples(
                    vs,
                    domain,
                    env,
                    &mut |env| holds(r, g, domain, env, value),
                    forall,
                )
            }
        }
    }

    /// Whether `body` holds for every (`forall`) or some tuple of `domain` bound to `vs`.
    fn tuples(
        vs: &[String],
        domain: &[Ind],
        env: &mut Env,
        body: &mut dyn FnMut(&mut Env) -> bool,
        forall: bool,
    ) -> bool {
        let Some((v, rest)) = vs.split_first() else {
            return body(env);
        };
        for d in domain {
            env.entry(v.clone()).or_default().push(d.clone());
            let b = tuples(rest, domain, env, body, forall);
            env.get_mut(v).map(Vec::pop);
            if b != forall {
                return b;
            }
        }
        forall
    }

    fn ground_atom(a: &Atom, env: &Env) -> GAtom {
        match a {
            Atom::Prop(p) => GAtom::Prop(p.clone()),
            Atom::Quoted(p) => GAtom::Quoted(p.clone()),
            Atom::Value(v) => GAtom::Value((**v).clone()),
            Atom::Pred(p, args) => GAtom::Pred(
                p.clone(),
                args.iter()
                    .map(|t| match t {
                        Term::Const(c) => Ind::Named(c.clone()),
                        Term::Var(v) => env
                            .get(v)
                            .and_then(|s| s.last())
                            .cloned()
                            .unwrap_or_else(|| Ind::Named(format!("?{v}"))),
                    })
                    .collect(),
            ),
        }
    }

    /// Every ground atom `f` can look at over `domain`.
    fn atoms_of(
        r: &Read<'_>,
        f: &Formula,
        domain: &[Ind],
        env: &mut Env,
        out: &mut HashSet<GAtom>,
    ) {
        match f {
            Formula::True | Formula::False => {}
            Formula::Atom(a) => {
                out.insert(ground_atom(a, env));
            }
            Formula::Not(g) => atoms_of(r, g, domain, env, out),
            Formula::And(gs) | Formula::Or(gs) => {
                for g in gs {
                    atoms_of(r, g, domain, env, out);
                }
            }
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                atoms_of(r, a, domain, env, out);
                atoms_of(r, b, domain, env, out);
            }
            Formula::Forall(vs, g) | Formula::Exists(vs, g) => {
                if let Some(ws) = r.witnesses.get(&addr(f)) {
                    for (v, w) in vs.iter().zip(ws) {
                        env.entry(v.clone()).or_default().push(w.clone());
                    }
                    atoms_of(r, g, domain, env, out);
                    for v in vs {
                        env.get_mut(v).map(Vec::pop);
                    }
                    return;
                }
                tuples(
                    vs,
                    domain,
                    env,
                    &mut |env| {
                        atoms_of(r, g, domain, env, out);
                        true
                    },
                    true,
                );
            }
        }
    }

    /// Σ (read with witnesses) and the question (read plainly, its witnesses in the
    /// domain), ready for truth tables.
    struct World<'f> {
        sigma: Vec<Read<'f>>,
        question: Option<Read<'f>>,
        domain: Vec<Ind>,
        atoms: Vec<GAtom>,
    }

    /// `context`: formulas whose constants and witnesses join the domain without being
    /// asserted (a subset of Σ asked about over the domain of all of Σ).
    fn world<'f>(
        sigma: &[&'f Formula],
        question: Option<&'f Formula>,
        context: &[&'f Formula],
    ) -> World<'f> {
        // Equal formulas share their witnesses, and so do `¬φ` and `φ`: number the distinct
        // formulas without their leading negations.
        let strip = |mut f: &'f Formula| {
            while let Formula::Not(g) = f {
                f = g;
            }
            f
        };
        let mut distinct: Vec<&Formula> = Vec::new();
        let mut number = |f: &'f Formula| {
            let f = strip(f);
            match distinct.iter().position(|g| **g == *f) {
                Some(k) => k,
                None => {
                    distinct.push(f);
                    distinct.len() - 1
                }
            }
        };
        // The outer existentials of `f` (of `¬f` when not `positive`), each variable its
        // witness: (formula, the quantifier's number in walk order, the variable's).
        let with_witnesses = |f: &'f Formula, k: usize, positive: bool| {
            let mut nodes = Vec::new();
            outer(f, Some(positive), false, &mut nodes);
            let place = quantifier_places(f);
            let mut witnesses = HashMap::new();
            for node in nodes {
                let Some(vs) = binder_vars(f, node) else {
                    continue;
                };
                let at = place.get(&(node as usize)).copied().unwrap_or(usize::MAX);
                let ws: Vec<Ind> = (0..vs.len()).map(|j| Ind::Witness(k, at, j)).collect();
                witnesses.insert(node as usize, ws);
            }
            Read {
                formula: f,
                witnesses,
            }
        };
        let mut reads: Vec<Read<'f>> = Vec::new();
        for f in sigma {
            let k = number(f);
            reads.push(with_witnesses(f, k, true));
        }
        // A question brings the witnesses it would get as a belief and those of its negation.
        let q_witnessed: Vec<Read<'f>> = question
            .map(|f| {
                let k = number(f);
                vec![with_witnesses(f, k, true), with_witnesses(f, k, false)]
            })
            .unwrap_or_default();
        let ctx: Vec<Read<'f>> = context
            .iter()
            .map(|f| {
                let k = number(f);
                with_witnesses(f, k, true)
            })
            .collect();
        let mut consts = BTreeSet::new();
        let mut seen = BTreeSet::new();
        for r in reads.iter().chain(&q_witnessed).chain(&ctx) {
            occurring(r, r.formula, &mut Env::new(), &mut consts, &mut seen);
        }
        consts.extend(seen);
        let mut domain: Vec<Ind> = consts.into_iter().collect();
        if domain.is_empty() {
            domain.push(Ind::Anonymous);
        }
        let question = question.map(|f| Read {
            formula: f,
            witnesses: HashMap::new(),
        });
        let mut atoms = HashSet::new();
        for r in reads.iter().chain(&question) {
            atoms_of(r, r.formula, &domain, &mut Env::new(), &mut atoms);
        }
        let mut atoms: Vec<GAtom> = atoms.into_iter().collect();
        atoms.sort();
        World {
            sigma: reads,
            question,
            domain,
            atoms,
        }
    }

    /// The place of every quantifier node of `f` (by address) in a pre-order walk, children
    /// left to right: equal trees number their quantifiers alike.
    fn quantifier_places(f: &Formula) -> HashMap<usize, usize> {
        let mut out = HashMap::new();
        let mut stack = vec![f];
        while let Some(g) = stack.pop() {
            match g {
                Formula::True | Formula::False | Formula::Atom(_) => {}
                Formula::Not(h) => stack.push(h),
                Formula::Forall(vs, h) | Formula::Exists(vs, h) => {
                    if !vs.is_empty() {
                        let n = out.len();
                        out.insert(addr(g), n);
                    }
                    stack.push(h);
                }
                Formula::And(hs) | Formula::Or(hs) => stack.extend(hs.iter().rev()),
                Formula::Implies(a, b) | Formula::Iff(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
            }
        }
        out
    }

    /// The variables of the quantifier node `node` inside `f`, found by walking `f` (no
    /// pointer is dereferenced).
    fn binder_vars(f: &Formula, node: *const Formula) -> Option<&[String]> {
        let mut stack = vec![f];
        while let Some(g) = stack.pop() {
            if std::ptr::eq(g, node) {
                return match g {
                    Formula::Forall(vs, _) | Formula::Exists(vs, _) => Some(vs),
                    _ => None,
                };
            }
            match g {
                Formula::True | Formula::False | Formula::Atom(_) => {}
                Formula::Not(h) | Formula::Forall(_, h) | Formula::Exists(_, h) => stack.push(h),
                Formula::And(hs) | Formula::Or(hs) => stack.extend(hs.iter()),
                Formula::Implies(a, b) | Formula::Iff(a, b) => {
                    stack.push(a);
                    stack.push(b);
                }
            }
        }
        None
    }

    impl World<'_> {
        /// Is there an assignment under which Σ holds and the question has value `want`
        /// (no question: Σ alone)?
        fn sat(&self, want: Option<bool>) -> bool {
            assert!(
                self.atoms.len() <= super::MAX_ATOMS,
                "oracle: too many atoms"
            );
            let pos: HashMap<&GAtom, usize> =
                self.atoms.iter().enumerate().map(|(i, a)| (a, i)).collect();
            // A key holds at most one value: the masks of each key's value atoms.
            let mut keys: HashMap<&str, u64> = HashMap::new();
            for (i, a) in self.atoms.iter().enumerate() {
                if let GAtom::Value(v) = a {
                    *keys.entry(v.key.as_str()).or_insert(0) |= 1 << i;
                }
            }
            (0u64..(1u64 << self.atoms.len())).any(|mask| {
                if keys.values().any(|&k| (mask & k).count_ones() > 1) {
                    return false;
                }
                let value = |a: &GAtom| pos.get(a).is_some_and(|&i| mask >> i & 1 == 1);
                let mut env = Env::new();
                self.sigma
                    .iter()
                    .all(|r| holds(r, r.formula, &self.domain, &mut env, &value))
                    && match (want, &self.question) {
                        (Some(w), Some(q)) => {
                            holds(q, q.formula, &self.domain, &mut env, &value) == w
                        }
                        _ => true,
                    }
            })
        }
    }

    /// Whether Σ is consistent under the semantics.
    pub fn consistent(sigma: &[&Formula]) -> bool {
        world(sigma, None, &[]).sat(None)
    }

    /// Whether `sigma` is consistent over the domain it shares with `context`.
    pub fn consistent_in(sigma: &[&Formula], context: &[&Formula]) -> bool {
        world(sigma, None, context).sat(None)
    }

    /// Θ(Σ, Δ) under the semantics.
    pub fn theta(sigma: &[&Formula], delta: &Formula) -> Outcome {
        let w = world(sigma, Some(delta), &[]);
        if !w.sat(Some(true)) {
            Outcome::Contradiction
        } else if !w.sat(Some(false)) {
            Outcome::Entailed
        } else {
            Outcome::NewInfo
        }
    }

    /// Σ ⊨ φ under the semantics (an inconsistent Σ entails everything).
    pub fn entails(sigma: &[&Formula], phi: &Formula) -> bool {
        !world(sigma, Some(phi), &[]).sat(Some(false))
    }

    /// Whether `sigma` entails `phi` over the domain it shares with `context`.
    pub fn entails_in(sigma: &[&Formula], phi: &Formula, context: &[&Formula]) -> bool {
        !world(sigma, Some(phi), context).sat(Some(false))
    }

    /// How many ground atoms deciding Σ and `question` takes (for test generators that must
    /// stay within [`super::MAX_ATOMS`]).
    pub fn atom_count(sigma: &[&Formula], question: Option<&Formula>) -> usize {
        world(sigma, question, &[]).atoms.len()
    }
}
