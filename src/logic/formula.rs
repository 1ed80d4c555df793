//! The formula AST shared by the parser, the printer, grounding and the solver encoding.
//!
//! Conjunctions and disjunctions are n-ary so that a long flat chain (`a ∧ b ∧ c ∧ …`) is one
//! node with many children instead of a million-deep binary tree. The parser flattens only
//! unparenthesized chains of the same connective, and the printer parenthesizes a nested
//! same-connective child, so `parse(print(φ)) == φ` holds structurally.
//!
//! `Formula` implements `Drop` iteratively, so a tree of any depth can be dropped on any
//! stack. The price is that a `Formula` cannot be destructured by value (`match f {
//! Formula::Not(g) => *g, … }` is E0509): match on a reference, or move a child out with
//! `std::mem::take` (`Formula::default()` is `⊤`). Everything else that walks a tree either
//! is iterative or relies on [`MAX_DEPTH`], which the parser enforces; code that builds trees
//! by hand should check [`Formula::depth`] before handing them to recursive code.

/// A term inside a predicate atom: a bound variable or a constant of the active domain.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Term {
    /// A variable bound by an enclosing quantifier.
    Var(String),
    /// A constant (an individual of the active domain).
    Const(String),
}

/// An atomic proposition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    /// A bare identifier such as `p` or `treasure_in_b`.
    Prop(String),
    /// A predicate applied to terms, such as `Older(alice, bob)`.
    Pred(String, Vec<Term>),
    /// A quoted proposition such as `"dns failure example.com"` (the text without quotes).
    Quoted(String),
}

/// A formula of the doxascope language (contract §3).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Formula {
    /// ⊤
    True,
    /// ⊥
    False,
    /// An atom.
    Atom(Atom),
    /// ¬φ
    Not(Box<Formula>),
    /// φ₁ ∧ … ∧ φₙ (n ≥ 2 when produced by the parser)
    And(Vec<Formula>),
    /// φ₁ ∨ … ∨ φₙ (n ≥ 2 when produced by the parser)
    Or(Vec<Formula>),
    /// φ → ψ (right associative)
    Implies(Box<Formula>, Box<Formula>),
    /// φ ↔ ψ
    Iff(Box<Formula>, Box<Formula>),
    /// ∀x, y. φ
    Forall(Vec<String>, Box<Formula>),
    /// ∃x, y. φ
    Exists(Vec<String>, Box<Formula>),
}

/// The deepest nesting of connectives and quantifiers the parser accepts (contract §3).
///
/// Depth counts the connective and quantifier nodes on the longest path from the root to an
/// atom (an atom, `⊤` and `⊥` have depth 0), and separately the nesting of parentheses. The
/// bound exists so that every recursive consumer downstream (Tseitin encoding, derived
/// `Clone`/`PartialEq`/`Debug`, grounding) stays far from the stack limit even on a 2 MiB test
/// thread in a debug build. Trees built by hand may be deeper; [`Formula::depth`] checks them,
/// and dropping any tree, however deep, is iterative.
pub const MAX_DEPTH: usize = 1_000;

impl Default for Formula {
    /// `⊤`, so that `std::mem::take` can move a subformula out of a tree (a `Formula` cannot be
    /// destructured by value because it implements `Drop`).
    fn default() -> Self {
        Formula::True
    }
}

impl Formula {
    /// The nesting depth (see [`MAX_DEPTH`]), computed without recursion so that it is safe on
    /// trees of any depth.
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut stack: Vec<(&Formula, usize)> = vec![(self, 0)];
        while let Some((f, d)) = stack.pop() {
            max = max.max(d);
            match f {
                Formula::True | Formula::False | Formula::Atom(_) => {}
                Formula::Not(g) | Formula::Forall(_, g) | Formula::Exists(_, g) => {
                    stack.push((g, d + 1))
                }
                Formula::And(gs) | Formula::Or(gs) => {
                    stack.extend(gs.iter().map(|g| (g, d + 1)));
                }
                Formula::Implies(a, b) | Formula::Iff(a, b) => {
                    stack.push((a, d + 1));
                    stack.push((b, d + 1));
                }
            }
        }
        max
    }

    /// The number of nodes (atoms, constants, connectives, quantifiers), computed without
    /// recursion.
    pub fn size(&self) -> usize {
        let mut n = 0;
        let mut stack: Vec<&Formula> = vec![self];
        while let Some(f) = stack.pop() {
            n += 1;
            match f {
                Formula::True | Formula::False | Formula::Atom(_) => {}
                Formula::Not(g) | Formula::Forall(_, g) | Formula::Exists(_, g) => stack.push(g),
                Formula::And(gs) | Formula::Or(gs) => stack.extend(gs.iter()),
                Formula::Implies(a, b) | Formula::Iff(a, b) => {
                    stack.push(a);
                    stack.push(b);
                }
            }
        }
        n
    }

    /// Whether this node has subformulas.
    pub(crate) fn has_children(&self) -> bool {
        !matches!(self, Formula::True | Formula::False | Formula::Atom(_))
    }

    /// Whether some child of `self` has children of its own (`self` is at least three levels
    /// deep).
    fn has_grandchildren(&self) -> bool {
        match self {
            Formula::True | Formula::False | Formula::Atom(_) => false,
            Formula::Not(g) | Formula::Forall(_, g) | Formula::Exists(_, g) => g.has_children(),
            Formula::And(gs) | Formula::Or(gs) => gs.iter().any(Formula::has_children),
            Formula::Implies(a, b) | Formula::Iff(a, b) => a.has_children() || b.has_children(),
        }
    }

    /// Moves every child at least three levels deep onto `stack`, leaving `⊤` in its place,
    /// so that dropping `self` afterwards recurses at most three levels (a literal such as
    /// `¬p` stays: detaching it would cost an allocation for nothing).
    fn detach_deep_children(&mut self, stack: &mut Vec<Formula>) {
        let mut take = |f: &mut Formula| {
            if f.has_grandchildren() {
                stack.push(std::mem::take(f));
            }
        };
        match self {
            Formula::True | Formula::False | Formula::Atom(_) => {}
            Formula::Not(g) | Formula::Forall(_, g) | Formula::Exists(_, g) => take(g),
            Formula::And(gs) | Formula::Or(gs) => gs.iter_mut().for_each(take),
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                take(a);
                take(b);
            }
        }
    }
}

impl Drop for Formula {
    /// Iterative: the default drop glue recurses once per level and a deep tree (say
    /// `¬¬¬…p` built by hand a million levels deep) would overflow the stack, which aborts the
    /// process. Leaves and nodes whose children are all leaves are dropped without allocating.
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.detach_deep_children(&mut stack);
        while let Some(mut f) = stack.pop() {
            f.detach_deep_children(&mut stack);
        }
    }
}
