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
    /// A value atom `key = value` such as `seat_pref = "aisle"`: the key holds this value
    /// now. A key holds at most one value at a time (the engine adds that functional
    /// constraint; see [`ValueAtom`]).
    Value(Box<ValueAtom>),
}

/// The key and value of a value atom `key = value` (`docs/trace-format.md`, "Value atoms").
///
/// Two value atoms are the same atom exactly when key, value and unit are equal after
/// canonicalisation ([`Scalar`]): `n = 3` and `n = 3.0` are one atom, `n = "3"` another,
/// `n = 3 "km"` a third. Distinct value atoms of one key exclude each other.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueAtom {
    /// The key (a memory key, a state channel, a ground belief's name).
    pub key: String,
    /// The value, canonical.
    pub value: Scalar,
    /// The unit, part of the value's identity (`None`: no unit).
    pub unit: Option<String>,
}

/// A value in canonical form, so that equal values are equal atoms.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    /// A string (never equal to a number, even when it holds one: `"3"` is not `3`).
    Str(String),
    /// A number in canonical text ([`canonical_number`]): `3`, `-0.5`, `1e300`.
    Num(String),
    /// `true`, `false`, `null`, an array or an object as canonical JSON text
    /// ([`canonical_json`]): no spaces, object keys sorted, numbers canonical.
    Json(String),
}

impl ValueAtom {
    /// The value atom `key = value` for a JSON value (a trace's `belief` event), with `unit`.
    pub fn from_json(key: &str, value: &serde_json::Value, unit: Option<&str>) -> ValueAtom {
        ValueAtom {
            key: key.to_string(),
            value: Scalar::from_json(value),
            unit: unit.map(str::to_string),
        }
    }
}

impl Scalar {
    /// The canonical form of a JSON value.
    pub fn from_json(v: &serde_json::Value) -> Scalar {
        match v {
            serde_json::Value::String(s) => Scalar::Str(s.clone()),
            serde_json::Value::Number(n) => Scalar::Num(number_text(n)),
            other => Scalar::Json(canonical_json(other)),
        }
    }
}

/// A JSON number's canonical text: see [`canonical_number`]. A number serde_json cannot
/// represent as a double (none it parses) keeps its text.
fn number_text(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(x) if x.is_finite() => canonical_float(x),
        _ => n.to_string(),
    }
}

/// The canonical text of a number written as `text` (JSON number syntax), or `None` when
/// it is not one or is not finite as a double. Numbers are compared as IEEE doubles: `3`,
/// `3.0`, `3e0` and `0.3e1` are all `3`; `-0` is `0`; integral values below 10^17 print as
/// plain digits, other values in Rust's shortest round-trip form (`0.1`, `1e300`).
pub fn canonical_number(text: &str) -> Option<String> {
    let x: f64 = text.parse().ok()?;
    x.is_finite().then(|| canonical_float(x))
}

fn canonical_float(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e17 {
        // Display writes integral doubles as plain digits; adding 0.0 turns -0 into 0.
        format!("{}", x + 0.0)
    } else {
        // The shortest text that reads back as the same double, with an exponent when
        // plain digits would be long (`1e300`, `1.5e-7`).
        format!("{x:?}")
    }
}

/// Canonical JSON text: no whitespace, object keys sorted, numbers canonical
/// ([`canonical_number`]), strings with `"`, `\`, controls and the characters the display
/// sanitizer would mark escaped as `\uXXXX`, so the text is visible as written.
pub fn canonical_json(v: &serde_json::Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(n)),
        Value::String(s) => write_json_string(s, out),
        Value::Array(xs) => {
            out.push('[');
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(k, out);
                out.push(':');
                write_json(&m[k], out);
            }
            out.push('}');
        }
    }
}

fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if crate::logic::parse::needs_escape(c) => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
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
