//! The active domain, grounding of quantifiers, and evaluation of ground formulas.
//!
//! # Semantics
//!
//! Quantifiers range over the *domain*: the constants that occur in Σ and in the query
//! (contract §3), together with the *witnesses* of Σ's beliefs and of the query. This is
//! domain closure with unique names over a Herbrand universe, not full first-order
//! entailment (see `shared/research/logic-engine.md` §4):
//!
//! - **Witnesses.** A belief is held in its [`witnessed`] form: each variable of an *outer
//!   existential* (an `∃` in positive position or a `∀` in negative position, not below a
//!   quantifier that stays nor below `↔`: the `∃` of an `∃*∀*` sentence after negation normal
//!   form) is replaced by a witness constant of its own, a name no formula can write (it
//!   starts with [`WITNESS_MARK`], a noncharacter the parser refuses). `∃x. (P(x) ∧ ¬Q(x))`
//!   is held as `P(w) ∧ ¬Q(w)`: it asks for an individual, and gets a new one, instead of
//!   claiming that some *known* constant is one (which would contradict `Q(b)`, `Q(c)`). The
//!   name depends on the formula alone, so the same formula always brings the same witness
//!   (announcing it twice, or asking about it and then announcing it, does not grow the
//!   domain). [`domain_constants`] gives a formula's share of the domain, witnesses included.
//! - **Grounding.** Every quantifier that remains is grounded over the domain with [`ground`]:
//!   `∀x₁…xₖ. φ` becomes the n-ary conjunction of φ with every tuple of constants substituted
//!   for x₁…xₖ, `∃` the n-ary disjunction. Tuples are taken in lexicographic order of the
//!   domain as given, the last variable varying fastest, so the result is deterministic.
//!   With exactly one instance the instance itself is returned (no one-child node).
//! - **Exact for `∃*∀*`, monotone.** For beliefs whose outer existentials are all their
//!   existentials (every `∃*∀*` sentence: facts, rules `∀x. P(x) → Q(x)`, `∃x. P(x)`,
//!   `∃x ∀y. R(x, y)`), the witnessed form is universal, and this is Herbrand's theorem for
//!   the Bernays–Schönfinkel class: Σ is consistent here exactly when it is satisfiable in
//!   first-order logic (a first-order model gives a Herbrand model over the constants and
//!   witnesses, and back). Universal sentences are preserved under substructures and under
//!   duplicated individuals, so removing a belief (whose constants and witnesses may leave
//!   the domain) never makes a consistent Σ inconsistent, and the constants a query adds
//!   never change whether Σ is consistent: the property every revision policy relies on.
//! - **Not exact: `∀∃` nested.** An existential below a universal (`∀x. ∃y. R(x, y)`) would
//!   need a Skolem *function*, an infinite universe; it is grounded as a disjunction over the
//!   domain, so it can only be satisfied by a known constant or witness. For such beliefs
//!   consistency depends on the domain, can be lost when a retraction shrinks it, and the
//!   revision policies repair again until Σ is consistent over its own domain (see
//!   [`crate::logic::revise`]).
//! - **Queries.** A question is asked as a belief would be held, both ways: Θ(Σ, Δ) is
//!   `contradiction` exactly when Σ ∪ {Δ} is inconsistent and `entailed` exactly when
//!   Σ ∪ {¬Δ} is, so `check ¬Δ` is `entailed` exactly when `check Δ` is `contradiction`, and
//!   `entails` likewise. The question is grounded as written over the domain of Σ and of the
//!   question, which holds the witnesses Δ would get as a belief and those ¬Δ would
//!   ([`question_constants`]; `¬Δ` and `Δ` share theirs); within the exact fragment the
//!   disjunction over a domain holding a witness is equisatisfiable with the witness itself.
//!   So a question's universals are about *every* individual, not only the known ones:
//!   `{P(a)}` does not entail `∀x. P(x)` (a new individual need not be `P`), and entailment is
//!   monotone too. With Σ of `∃*∀*` sentences, `contradiction` is first-order exact when Δ
//!   is `∃*∀*` and `entailed` when Δ is `∀*∃*` (so ¬Δ is `∃*∀*`): Herbrand again.
//! - **An empty domain** (no constant nor witness in Σ nor in the query) is read as one
//!   *anonymous individual*, the constant [`ANONYMOUS`] (`_`): `∀x. P(x)` becomes `P(_)`.
//!   First-order structures are never empty, and grounding `∀x. P(x) ∧ ∀x. ¬P(x)` over
//!   nothing would give `⊤`. The anonymous individual is used only while there is no constant
//!   at all, so it never stands beside a user constant, even one that happens to be written
//!   `_`; as soon as a constant appears, the domain is exactly the constants and witnesses.
//! - The domain is a function of Σ and the query alone: the engine counts the constants of
//!   the active beliefs' witnessed forms and re-grounds its quantified beliefs whenever the
//!   domain a request needs differs from the one they are grounded over, growing or
//!   shrinking; that is what [`has_quantifier`] is for. Constants of earlier queries and of
//!   retracted beliefs play no part.
//! - Only variables bound by an enclosing quantifier are substituted; a free [`Term::Var`] in
//!   a hand-built tree is left as it is.
//! - The domain should be duplicate-free (a `BTreeSet` from [`constants`] is); a duplicate
//!   constant yields duplicate instances, which is harmless but wasteful.
//!
//! # Budgets
//!
//! Grounding is refused *before* anything is expanded, following the "limit after expansion"
//! principle: [`estimate_instances`] computes, with saturating arithmetic, the number of
//! quantifier-body instances grounding would create (∑ over quantifier nodes of
//! ∏ |D|^k along the path), and [`ground`] refuses when it exceeds the caller's cap (the
//! engine's default is [`DEFAULT_INSTANCE_CAP`] = 100,000 instances per formula). A second,
//! fixed guard, [`MAX_GROUND_NODES`], bounds the size of the resulting tree, because a small
//! instance count times a large body can still be huge. The estimate is exact (no
//! simplification happens during grounding), so the refusal never fires on a formula that
//! would in fact be small. Miniscoping is not done.
//!
//! # Recursion
//!
//! Grounding recurses once per nesting level and refuses trees deeper than [`MAX_DEPTH`]
//! first; every other function here is iterative and safe on trees of any depth.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::fmt;

use super::formula::{Atom, Formula, MAX_DEPTH, Term};

/// The anonymous individual quantifiers range over when the domain is empty (see the module
/// docs).
pub const ANONYMOUS: &str = "_";

/// The default cap on quantifier-body instances per formula (see the module docs).
pub const DEFAULT_INSTANCE_CAP: u64 = 100_000;

/// The largest ground formula [`ground`] builds, in nodes: about 100-200 MB of tree, twenty
/// times what the default instance cap needs for a rule with a ten-node body.
pub const MAX_GROUND_NODES: u128 = 2_000_000;

/// Why a formula was not grounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroundError {
    /// More quantifier instances than the cap allows.
    TooManyInstances {
        /// The estimated instance count (saturating at `u128::MAX`).
        estimate: u128,
        /// The cap that was exceeded.
        cap: u64,
        /// The number of constants in the domain.
        domain_size: usize,
    },
    /// The ground formula would exceed [`MAX_GROUND_NODES`].
    TooLarge {
        /// The estimated number of nodes (saturating).
        nodes: u128,
    },
    /// The formula nests deeper than [`MAX_DEPTH`] (only possible for hand-built trees).
    TooDeep {
        /// The formula's depth.
        depth: usize,
    },
}

impl fmt::Display for GroundError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroundError::TooManyInstances {
                estimate,
                cap,
                domain_size,
            } => write!(
                f,
                "grounding too large: {} instances over {domain_size} constants, over the cap \
                 of {cap}",
                approx(*estimate)
            ),
            GroundError::TooLarge { nodes } => write!(
                f,
                "grounding too large: the ground formula would have {} nodes, over the limit \
                 of {MAX_GROUND_NODES}",
                approx(*nodes)
            ),
            GroundError::TooDeep { depth } => write!(
                f,
                "formula nests deeper than {MAX_DEPTH} levels (depth {depth}), not grounded"
            ),
        }
    }
}

impl std::error::Error for GroundError {}

/// A count for a message: exact when small, `≈10^N` when large, `more than 10^38` when it
/// saturated.
fn approx(n: u128) -> String {
    if n == u128::MAX {
        "more than 10^38".to_string()
    } else if n < 10_000_000_000 {
        n.to_string()
    } else {
        format!("≈10^{}", n.ilog10())
    }
}

/// The first character of every witness name: U+FDD0, a Unicode noncharacter ("reserved for
/// internal use"), which the parser refuses escaped or not, so no constant written in a
/// formula is ever taken for a witness (see the module docs).
pub const WITNESS_MARK: char = '\u{FDD0}';

/// Whether `c` is one of the noncharacters U+FDD0 to U+FDEF, which the parser refuses: the
/// range witness names are made from.
pub fn is_reserved_char(c: char) -> bool {
    ('\u{FDD0}'..='\u{FDEF}').contains(&c)
}

/// Whether the constant `c` is a witness made by [`witnessed`].
pub fn is_witness(c: &str) -> bool {
    c.starts_with(WITNESS_MARK)
}

/// A 64-bit FNV-1a fingerprint of `f`'s structure (connectives, names, variables), without
/// recursion: the part of a witness name that says which formula owns it.
fn fingerprint(f: &Formula) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let name = |eat: &mut dyn FnMut(&[u8]), s: &str| {
        eat(&(s.len() as u64).to_le_bytes());
        eat(s.as_bytes());
    };
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        let tag: u8 = match g {
            Formula::True => 0,
            Formula::False => 1,
            Formula::Atom(_) => 2,
            Formula::Not(_) => 3,
            Formula::And(_) => 4,
            Formula::Or(_) => 5,
            Formula::Implies(..) => 6,
            Formula::Iff(..) => 7,
            Formula::Forall(..) => 8,
            Formula::Exists(..) => 9,
        };
        eat(&[tag]);
        match g {
            Formula::Atom(Atom::Prop(p)) => name(&mut eat, p),
            Formula::Atom(Atom::Quoted(p)) => {
                eat(&[1]);
                name(&mut eat, p);
            }
            Formula::Atom(Atom::Pred(p, args)) => {
                eat(&[2]);
                name(&mut eat, p);
                eat(&(args.len() as u64).to_le_bytes());
                for t in args {
                    match t {
                        Term::Var(v) => {
                            eat(&[0]);
                            name(&mut eat, v);
                        }
                        Term::Const(c) => {
                            eat(&[1]);
                            name(&mut eat, c);
                        }
                    }
                }
            }
            Formula::And(gs) | Formula::Or(gs) => eat(&(gs.len() as u64).to_le_bytes()),
            Formula::Forall(vs, _) | Formula::Exists(vs, _) => {
                eat(&(vs.len() as u64).to_le_bytes());
                for v in vs {
                    name(&mut eat, v);
                }
            }
            _ => {}
        }
        push_children(g, &mut stack);
    }
    h
}

/// `f` with a *witness constant* in place of each variable of its outer existentials: the
/// form in which a belief is held (see the module docs). An outer existential is an `∃` in
/// positive position or a `∀` in negative position (under an odd number of negations, or on
/// the left of `→`), neither below a quantifier that stays nor below `↔` (where it is both
/// positive and negative); each of its variables becomes the constant
/// `WITNESS_MARK` + variable + `.` + the fingerprint of the formula without its leading
/// negations + `.` + the quantifier's place + `.` + the variable's, so the same formula
/// always gets the same witnesses (and `¬φ` those the question `φ` is asked with), and two
/// different ones (all but certainly) never share one. The quantifier itself disappears; every other quantifier stays, to be grounded
/// over the domain. Borrowed when nothing changes (no outer existential), and for trees
/// deeper than [`MAX_DEPTH`] (which [`ground`] refuses anyway).
pub fn witnessed(f: &Formula) -> Cow<'_, Formula> {
    witness_walk(f, true)
}

/// [`witnessed`] of `f` (`positive`) or of `¬f`: the same names either way, since a witness
/// is named after `f` without its leading negations and the quantifier's place in it, so
/// `¬∀x. P(x)` as a belief and `∀x. P(x)` as a question share theirs.
fn witness_walk(f: &Formula, positive: bool) -> Cow<'_, Formula> {
    if !has_quantifier(f) || f.depth() > MAX_DEPTH {
        return Cow::Borrowed(f);
    }
    let mut key = f;
    while let Formula::Not(g) = key {
        key = g;
    }
    let mut w = Witnessing {
        hash: None,
        formula: key,
        count: 0,
        node: 0,
        env: HashMap::new(),
    };
    let g = w.walk(f, Some(positive), false);
    if w.count == 0 {
        Cow::Borrowed(f)
    } else {
        Cow::Owned(g)
    }
}

/// Adds the constants of the domain a belief brings: the constants it names and its
/// witnesses ([`witnessed`]).
pub fn domain_constants(f: &Formula, out: &mut BTreeSet<String>) {
    constants(&witnessed(f), out);
}

/// Adds the constants of the domain a question brings: the constants it names, the
/// witnesses it would get as a belief and those its negation would get (a question is
/// asked both ways, see the module docs).
pub fn question_constants(f: &Formula, out: &mut BTreeSet<String>) {
    constants(&witness_walk(f, true), out);
    constants(&witness_walk(f, false), out);
}

/// The walk of [`witnessed`]: variables bound by an outer existential map to their witness
/// (`Some`), variables bound by a quantifier that stays to `None` (shadowing).
struct Witnessing<'f> {
    /// The formula without its leading negations: what names the witnesses.
    formula: &'f Formula,
    hash: Option<u64>,
    count: usize,
    /// Quantifier nodes met so far (walk order, the same for `f` and `¬f`).
    node: usize,
    env: HashMap<String, Vec<Option<String>>>,
}

impl Witnessing<'_> {
    /// Depth-bounded by the check in [`witnessed`]. `pol`: `Some(true)` positive,
    /// `Some(false)` negative, `None` both (below `↔`); `kept`: below a quantifier that stays.
    fn walk(&mut self, f: &Formula, pol: Option<bool>, kept: bool) -> Formula {
        let flip = pol.map(|p| !p);
        match f {
            Formula::True
            | Formula::False
            | Formula::Atom(Atom::Prop(_) | Atom::Quoted(_) | Atom::Value(_)) => f.clone(),
            Formula::Atom(Atom::Pred(p, args)) => Formula::Atom(Atom::Pred(
                p.clone(),
                args.iter()
                    .map(|t| match t {
                        Term::Var(v) => match self.env.get(v).and_then(|s| s.last()) {
                            Some(Some(w)) => Term::Const(w.clone()),
                            _ => t.clone(),
                        },
                        Term::Const(_) => t.clone(),
                    })
                    .collect(),
            )),
            Formula::Not(g) => Formula::Not(Box::new(self.walk(g, flip, kept))),
            Formula::And(gs) => Formula::And(gs.iter().map(|g| self.walk(g, pol, kept)).collect()),
            Formula::Or(gs) => Formula::Or(gs.iter().map(|g| self.walk(g, pol, kept)).collect()),
            Formula::Implies(a, b) => Formula::Implies(
                Box::new(self.walk(a, flip, kept)),
                Box::new(self.walk(b, pol, kept)),
            ),
            Formula::Iff(a, b) => Formula::Iff(
                Box::new(self.walk(a, None, kept)),
                Box::new(self.walk(b, None, kept)),
            ),
            Formula::Forall(vs, body) | Formula::Exists(vs, body) => {
                let exists = matches!(f, Formula::Exists(..));
                let outer = !kept && pol == Some(exists);
                if vs.is_empty() {
                    return self.walk(body, pol, kept);
                }
                self.node += 1;
                for (k, v) in vs.iter().enumerate() {
                    let w = outer.then(|| self.witness(v, k));
                    self.env.entry(v.clone()).or_default().push(w);
                }
                let g = self.walk(body, pol, kept || !outer);
                for v in vs {
                    if let Some(s) = self.env.get_mut(v) {
                        s.pop();
                    }
                }
                if outer {
                    g
                } else if exists {
                    Formula::Exists(vs.clone(), Box::new(g))
                } else {
                    Formula::Forall(vs.clone(), Box::new(g))
                }
            }
        }
    }

    /// The witness of variable `k` (`v`) of the current quantifier node.
    fn witness(&mut self, v: &str, k: usize) -> String {
        let formula = self.formula;
        let h = *self.hash.get_or_insert_with(|| fingerprint(formula));
        self.count += 1;
        format!("{WITNESS_MARK}{v}.{h:016x}.{}.{k}", self.node)
    }
}

/// Adds the constants that occur in `f` (predicate arguments that are [`Term::Const`]) to
/// `out`: the formula's share of the active domain.
pub fn constants(f: &Formula, out: &mut BTreeSet<String>) {
    for_each_atom(f, |a| {
        if let Atom::Pred(_, args) = a {
            for t in args {
                if let Term::Const(c) = t {
                    if !out.contains(c) {
                        out.insert(c.clone());
                    }
                }
            }
        }
    });
}

/// Adds every atom of `f` to `out` (meant for ground formulas; an atom with a variable is
/// added as it is).
pub fn atoms(f: &Formula, out: &mut BTreeSet<Atom>) {
    for_each_atom(f, |a| {
        if !out.contains(a) {
            out.insert(a.clone());
        }
    });
}

/// Whether `f` contains a quantifier, i.e. whether its grounding depends on the domain.
pub fn has_quantifier(f: &Formula) -> bool {
    // Literals and flat connectives of literals (most formulas of a trace) need no stack.
    let literal = |g: &Formula| match g {
        Formula::Not(h) => !h.has_children(),
        g => !g.has_children(),
    };
    match f {
        Formula::And(gs) | Formula::Or(gs) if gs.iter().all(literal) => return false,
        Formula::Implies(a, b) | Formula::Iff(a, b) if literal(a) && literal(b) => return false,
        g if literal(g) => return false,
        _ => {}
    }
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        match g {
            Formula::Forall(..) | Formula::Exists(..) => return true,
            _ => push_children(g, &mut stack),
        }
    }
    false
}

fn push_children<'a>(f: &'a Formula, stack: &mut Vec<&'a Formula>) {
    match f {
        Formula::True | Formula::False | Formula::Atom(_) => {}
        Formula::Not(g) | Formula::Forall(_, g) | Formula::Exists(_, g) => stack.push(g),
        // Reversed so that children are visited left to right.
        Formula::And(gs) | Formula::Or(gs) => stack.extend(gs.iter().rev()),
        Formula::Implies(a, b) | Formula::Iff(a, b) => {
            stack.push(b);
            stack.push(a);
        }
    }
}

fn for_each_atom<'a>(f: &'a Formula, mut visit: impl FnMut(&'a Atom)) {
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        if let Formula::Atom(a) = g {
            visit(a);
        } else {
            push_children(g, &mut stack);
        }
    }
}

/// `n^k`, saturating.
fn pow_saturating(n: u128, k: usize) -> u128 {
    match (n, k) {
        (_, 0) | (1, _) => 1,
        (0, _) => 0,
        _ => u32::try_from(k)
            .ok()
            .and_then(|k| n.checked_pow(k))
            .unwrap_or(u128::MAX),
    }
}

/// The number of quantifier-body instances grounding `f` over a domain of `domain_size`
/// constants creates: for each quantifier node, |D| to the power of the number of variables
/// it and its enclosing quantifiers bind, summed (saturating). `∀x. ∃y. P(x, y)` over 10
/// constants: 10 + 100 = 110.
pub fn estimate_instances(f: &Formula, domain_size: usize) -> u128 {
    let n = domain_size as u128;
    let mut total: u128 = 0;
    let mut stack: Vec<(&Formula, u128)> = vec![(f, 1)];
    while let Some((g, mult)) = stack.pop() {
        match g {
            Formula::Forall(vs, body) | Formula::Exists(vs, body) => {
                let m = mult.saturating_mul(pow_saturating(n, vs.len()));
                total = total.saturating_add(m);
                if m > 0 {
                    stack.push((body, m));
                }
            }
            _ => {
                let mut children = Vec::new();
                push_children(g, &mut children);
                stack.extend(children.into_iter().map(|c| (c, mult)));
            }
        }
    }
    total
}

/// The exact number of nodes of `ground(f)` over `domain_size` constants (saturating),
/// computed without expanding and without recursion.
pub fn estimate_ground_size(f: &Formula, domain_size: usize) -> u128 {
    let n = domain_size as u128;
    // Post-order: a node is visited twice, the second time its children's sizes are on
    // `sizes`.
    let mut stack: Vec<(&Formula, bool)> = vec![(f, false)];
    let mut sizes: Vec<u128> = Vec::new();
    while let Some((g, done)) = stack.pop() {
        if !done {
            stack.push((g, true));
            let mut children = Vec::new();
            push_children(g, &mut children);
            stack.extend(children.into_iter().map(|c| (c, false)));
            continue;
        }
        let arity = match g {
            Formula::True | Formula::False | Formula::Atom(_) => 0,
            Formula::Not(_) | Formula::Forall(..) | Formula::Exists(..) => 1,
            Formula::Implies(..) | Formula::Iff(..) => 2,
            Formula::And(gs) | Formula::Or(gs) => gs.len(),
        };
        let at = sizes.len().saturating_sub(arity);
        let sum = sizes.drain(at..).fold(0u128, u128::saturating_add);
        let size = match g {
            Formula::Forall(vs, _) | Formula::Exists(vs, _) => match pow_saturating(n, vs.len()) {
                0 => 1,
                1 => sum,
                k => k.saturating_mul(sum).saturating_add(1),
            },
            _ => sum.saturating_add(1),
        };
        sizes.push(size);
    }
    sizes.pop().unwrap_or(1)
}

/// Grounds `f` over `domain` (see the module docs for the semantics), refusing when more
/// than `cap` instances or more than [`MAX_GROUND_NODES`] nodes would be created. A formula
/// without quantifiers is returned as an equal copy.
pub fn ground(f: &Formula, domain: &[String], cap: u64) -> Result<Formula, GroundError> {
    ground_ref(f, domain, cap).map(Cow::into_owned)
}

/// [`ground`] without the copy when there is nothing to substitute: a formula without
/// quantifiers comes back borrowed (after the same depth and size checks), which is what
/// callers that re-ground every formula they are handed want, since most formulas of a
/// trace are propositional.
pub fn ground_ref<'f>(
    f: &'f Formula,
    domain: &[String],
    cap: u64,
) -> Result<Cow<'f, Formula>, GroundError> {
    let (depth, nodes, quantified) = survey(f);
    if depth > MAX_DEPTH {
        return Err(GroundError::TooDeep { depth });
    }
    if !quantified {
        // No instance is created, and the ground formula is `f` itself: only the size guard
        // can refuse it.
        if nodes > MAX_GROUND_NODES {
            return Err(GroundError::TooLarge { nodes });
        }
        return Ok(Cow::Borrowed(f));
    }
    let anonymous = [ANONYMOUS.to_string()];
    let domain = if domain.is_empty() {
        &anonymous[..]
    } else {
        domain
    };
    let estimate = estimate_instances(f, domain.len());
    if estimate > u128::from(cap) {
        return Err(GroundError::TooManyInstances {
            estimate,
            cap,
            domain_size: domain.len(),
        });
    }
    let nodes = estimate_ground_size(f, domain.len());
    if nodes > MAX_GROUND_NODES {
        return Err(GroundError::TooLarge { nodes });
    }
    let mut env: HashMap<&str, Vec<&str>> = HashMap::new();
    Ok(Cow::Owned(ground_rec(f, domain, &mut env)))
}

/// One pass over `f`: its depth (as [`Formula::depth`]), its number of nodes (as
/// [`estimate_ground_size`] counts them when there is no quantifier: every connective and
/// atom once) and whether it has a quantifier.
fn survey(f: &Formula) -> (usize, u128, bool) {
    let (mut depth, mut nodes, mut quantified) = (0usize, 0u128, false);
    let mut stack: Vec<(&Formula, usize)> = vec![(f, 0)];
    while let Some((g, d)) = stack.pop() {
        depth = depth.max(d);
        nodes = nodes.saturating_add(1);
        match g {
            Formula::True | Formula::False | Formula::Atom(_) => {}
            Formula::Not(h) => stack.push((h, d + 1)),
            Formula::Forall(_, h) | Formula::Exists(_, h) => {
                quantified = true;
                stack.push((h, d + 1));
            }
            Formula::And(gs) | Formula::Or(gs) => stack.extend(gs.iter().map(|h| (h, d + 1))),
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                stack.push((a, d + 1));
                stack.push((b, d + 1));
            }
        }
    }
    (depth, nodes, quantified)
}

/// Depth-bounded by the check in [`ground`].
fn ground_rec<'a>(
    f: &'a Formula,
    domain: &'a [String],
    env: &mut HashMap<&'a str, Vec<&'a str>>,
) -> Formula {
    match f {
        Formula::True => Formula::True,
        Formula::False => Formula::False,
        Formula::Atom(Atom::Pred(p, args)) => Formula::Atom(Atom::Pred(
            p.clone(),
            args.iter()
                .map(|t| match t {
                    Term::Var(v) => match env.get(v.as_str()).and_then(|s| s.last()) {
                        Some(c) => Term::Const((*c).to_string()),
                        None => Term::Var(v.clone()),
                    },
                    Term::Const(c) => Term::Const(c.clone()),
                })
                .collect(),
        )),
        Formula::Atom(a) => Formula::Atom(a.clone()),
        Formula::Not(g) => Formula::Not(Box::new(ground_rec(g, domain, env))),
        Formula::And(gs) => Formula::And(gs.iter().map(|g| ground_rec(g, domain, env)).collect()),
        Formula::Or(gs) => Formula::Or(gs.iter().map(|g| ground_rec(g, domain, env)).collect()),
        Formula::Implies(a, b) => Formula::Implies(
            Box::new(ground_rec(a, domain, env)),
            Box::new(ground_rec(b, domain, env)),
        ),
        Formula::Iff(a, b) => Formula::Iff(
            Box::new(ground_rec(a, domain, env)),
            Box::new(ground_rec(b, domain, env)),
        ),
        Formula::Forall(vs, body) | Formula::Exists(vs, body) => {
            let forall = matches!(f, Formula::Forall(..));
            if vs.is_empty() {
                return ground_rec(body, domain, env);
            }
            if domain.is_empty() {
                return if forall {
                    Formula::True
                } else {
                    Formula::False
                };
            }
            let mut instances = Vec::new();
            // An odometer over the domain, last variable fastest.
            let mut idx = vec![0usize; vs.len()];
            loop {
                for (v, &i) in vs.iter().zip(&idx) {
                    env.entry(v.as_str()).or_default().push(domain[i].as_str());
                }
                instances.push(ground_rec(body, domain, env));
                for v in vs {
                    if let Some(s) = env.get_mut(v.as_str()) {
                        s.pop();
                    }
                }
                let mut pos = idx.len();
                loop {
                    if pos == 0 {
                        return match instances.len() {
                            1 => instances.pop().unwrap_or_default(),
                            _ if forall => Formula::And(instances),
                            _ => Formula::Or(instances),
                        };
                    }
                    pos -= 1;
                    idx[pos] += 1;
                    if idx[pos] < domain.len() {
                        break;
                    }
                    idx[pos] = 0;
                }
            }
        }
    }
}

/// Evaluates a ground formula under an assignment of truth values to atoms, without
/// recursion. Meant for ground formulas (oracles, countermodel validation); a quantifier
/// met anyway is transparent (its body is evaluated with the variables left in the atoms,
/// which the assignment sees as they are).
pub fn eval(f: &Formula, assignment: &impl Fn(&Atom) -> bool) -> bool {
    let mut stack: Vec<(&Formula, bool)> = vec![(f, false)];
    let mut values: Vec<bool> = Vec::new();
    while let Some((g, done)) = stack.pop() {
        if !done {
            match g {
                Formula::True => values.push(true),
                Formula::False => values.push(false),
                Formula::Atom(a) => values.push(assignment(a)),
                _ => {
                    stack.push((g, true));
                    let mut children = Vec::new();
                    push_children(g, &mut children);
                    stack.extend(children.into_iter().map(|c| (c, false)));
                }
            }
            continue;
        }
        let value = match g {
            Formula::Not(_) => values.pop() != Some(true),
            Formula::Forall(..) | Formula::Exists(..) => values.pop() == Some(true),
            Formula::Implies(..) | Formula::Iff(..) => {
                let b = values.pop() == Some(true);
                let a = values.pop() == Some(true);
                if matches!(g, Formula::Implies(..)) {
                    !a || b
                } else {
                    a == b
                }
            }
            Formula::And(gs) | Formula::Or(gs) => {
                let at = values.len().saturating_sub(gs.len());
                let v = if matches!(g, Formula::And(_)) {
                    values[at..].iter().all(|&b| b)
                } else {
                    values[at..].iter().any(|&b| b)
                };
                values.truncate(at);
                v
            }
            Formula::True | Formula::False | Formula::Atom(_) => continue,
        };
        values.push(value);
    }
    values.pop() == Some(true)
}
