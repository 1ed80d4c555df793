//! The active domain, grounding of quantifiers, and evaluation of ground formulas.
//!
//! # Semantics
//!
//! Quantifiers range over the *active domain*: the constants that occur in Σ and in the query
//! (contract §3). This is domain closure with unique names, not first-order entailment: under
//! it `∀x. P(x)` holds as soon as `P` holds for every known constant (see
//! `shared/research/logic-engine.md` §4). The engine collects the domain with [`constants`]
//! and grounds each quantified formula with [`ground`]:
//!
//! - `∀x₁…xₖ. φ` becomes the n-ary conjunction of φ with every tuple of constants substituted
//!   for x₁…xₖ, `∃` the n-ary disjunction. Tuples are taken in lexicographic order of the
//!   domain as given, the last variable varying fastest, so the result is deterministic.
//! - With exactly one instance the instance itself is returned (no one-child node).
//! - **An empty domain** (no constant in Σ nor in the query) is read as one *anonymous
//!   individual*, the constant [`ANONYMOUS`] (`_`): `∀x. P(x)` and `∃x. P(x)` both become
//!   `P(_)`. First-order structures are never empty, and grounding `∃` over nothing would
//!   give `⊥`, so a Σ such as `{∃x. P(x)}` alone (or what remains of Σ after the retraction
//!   of its last constant) would read as inconsistent. The anonymous individual is used only
//!   while there is no constant at all, so it never stands beside a user constant, even one
//!   that happens to be written `_`; as soon as a constant appears, the domain is exactly the
//!   constants. Like any closed domain, one individual cannot satisfy formulas that need two
//!   (`∃x. P(x) ∧ ∃x. ¬P(x)` reads as inconsistent until two constants are known).
//! - The domain is a function of Σ and the query alone: the engine counts the constants of
//!   the active beliefs and re-grounds its quantified beliefs whenever the domain a request
//!   needs differs from the one they are grounded over, growing or shrinking (∀ gains or loses
//!   instances, ∃ gets weaker or stronger, which no added clause can express); that is what
//!   [`has_quantifier`] is for. Constants of earlier queries and of retracted beliefs play no
//!   part.
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
