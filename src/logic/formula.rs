//! The formula AST shared by the parser, the printer, grounding and the solver encoding.
//!
//! Conjunctions and disjunctions are n-ary so that a long flat chain (`a ∧ b ∧ c ∧ …`) is one
//! node with many children instead of a million-deep binary tree. The parser flattens only
//! unparenthesized chains of the same connective, and the printer parenthesizes a nested
//! same-connective child, so `parse(print(φ)) == φ` holds structurally.

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
