//! The formula printers: Unicode (`Display`) and ASCII ([`to_ascii`]), and the normalized
//! form used as a belief's default id ([`normalized`]).
//!
//! Both printers write the minimal parentheses the precedence rules of [`super::parse`]
//! allow, plus the ones that preserve structure: a nested conjunction inside a conjunction
//! (and likewise for ∨) is parenthesized, because the parser would otherwise flatten it; a
//! left operand of `→`/`↔` of the same connective is parenthesized (both are right
//! associative); a quantifier is parenthesized unless nothing follows it, because its body
//! extends as far right as possible.
//!
//! # Round trip
//!
//! `parse(print(φ)) == φ` for every φ the parser can produce, with either printer, which is
//! the normal form: n-ary nodes with at least two children, quantifiers with at least one
//! variable whose names are valid names ([`super::parse::is_name`]), every [`Term::Var`] bound
//! by an enclosing quantifier, every [`Atom::Prop`] name a valid name. Names that are not
//! valid names (keywords, spaces, non-ASCII) are printed quoted; for a constant or a predicate
//! name this round-trips, as it does for a constant that a quantifier shadows (a quoted
//! argument is always a constant). Outside the normal form the output is still sensible but
//! may re-parse to an equivalent, different tree: `And([])` prints `⊤`, `Or([])` `⊥`, a one-child
//! `And`/`Or` or a quantifier over no variables prints its child, and an `Atom::Prop` whose
//! name is not a valid name prints as quoted text (an `Atom::Quoted`).
//!
//! Printing is iterative (an explicit work stack), so it is safe on trees of any depth.

use std::collections::HashMap;
use std::fmt;

use super::formula::{Atom, Formula, Scalar, Term, ValueAtom};
use super::parse::{is_key, is_name, needs_escape};

/// The concrete tokens of one printer.
struct Syntax {
    not: &'static str,
    and: &'static str,
    or: &'static str,
    implies: &'static str,
    iff: &'static str,
    top: &'static str,
    bottom: &'static str,
    forall: &'static str,
    exists: &'static str,
}

const UNICODE: Syntax = Syntax {
    not: "¬",
    and: " ∧ ",
    or: " ∨ ",
    implies: " → ",
    iff: " ↔ ",
    top: "⊤",
    bottom: "⊥",
    forall: "∀",
    exists: "∃",
};

const ASCII: Syntax = Syntax {
    not: "~",
    and: " & ",
    or: " | ",
    implies: " -> ",
    iff: " <-> ",
    top: "true",
    bottom: "false",
    forall: "forall ",
    exists: "exists ",
};

impl fmt::Display for Formula {
    /// The Unicode form, e.g. `∀x. P(x) → ¬(q ∧ r)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print(self, &UNICODE))
    }
}

impl fmt::Display for Atom {
    /// The atom as it appears in a printed formula (the same in Unicode and ASCII): `p`,
    /// `Older(alice, bob)`, `"dns failure"`; names that are not valid names are quoted. Meant
    /// for countermodels and evidence lists, whose atoms are ground.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        print_atom(self, &HashMap::new(), &mut out);
        f.write_str(&out)
    }
}

/// The ASCII form, e.g. `forall x. P(x) -> ~(q & r)` (quoted text keeps its characters).
pub fn to_ascii(f: &Formula) -> String {
    print(f, &ASCII)
}

/// The normalized form of a formula: its ASCII printing.
///
/// This is a belief's default id (contract §2, `announce.id`). Two texts that parse to the
/// same tree (differing in spacing, redundant parentheses, Unicode vs ASCII connectives, `&&`
/// vs `&`) get the same id; it is deliberately *not* a semantic normal form (`a ∧ b` and
/// `b ∧ a` are different beliefs), because a belief is what the agent said. ASCII is chosen
/// over Unicode so that ids are easy to type in the REPL (`retract p & q`).
pub fn normalized(f: &Formula) -> String {
    to_ascii(f)
}

/// Binding strength of a node as it prints; quantifiers are handled separately.
fn precedence(f: &Formula) -> u8 {
    match f {
        Formula::Iff(..) => 1,
        Formula::Implies(..) => 2,
        Formula::Or(_) => 3,
        Formula::And(_) => 4,
        Formula::Not(_) => 5,
        _ => 6,
    }
}

enum Task<'a> {
    /// Print `f`; parenthesize it if it binds looser than `min`, or if it is a quantifier and
    /// something will follow it (`rightmost` false).
    Node {
        f: &'a Formula,
        min: u8,
        rightmost: bool,
    },
    Text(&'static str),
    /// Leave the scope of a quantifier's variables.
    Unbind(&'a [String]),
}

fn print(root: &Formula, syn: &Syntax) -> String {
    let mut out = String::new();
    // Variables bound at the current point, so that a constant with the same name is quoted.
    let mut bound: HashMap<&str, usize> = HashMap::new();
    let mut tasks = vec![Task::Node {
        f: root,
        min: 0,
        rightmost: true,
    }];
    while let Some(task) = tasks.pop() {
        let (f, min, rightmost) = match task {
            Task::Text(s) => {
                out.push_str(s);
                continue;
            }
            Task::Unbind(vars) => {
                for v in vars {
                    if let Some(n) = bound.get_mut(v.as_str()) {
                        *n -= 1;
                        if *n == 0 {
                            bound.remove(v.as_str());
                        }
                    }
                }
                continue;
            }
            Task::Node { f, min, rightmost } => (f, min, rightmost),
        };
        // Degenerate shapes the parser never builds print as their meaning.
        match f {
            Formula::And(gs) | Formula::Or(gs) if gs.len() == 1 => {
                tasks.push(Task::Node {
                    f: &gs[0],
                    min,
                    rightmost,
                });
                continue;
            }
            Formula::Forall(vs, g) | Formula::Exists(vs, g) if vs.is_empty() => {
                tasks.push(Task::Node {
                    f: g,
                    min,
                    rightmost,
                });
                continue;
            }
            _ => {}
        }
        let quantifier = matches!(f, Formula::Forall(..) | Formula::Exists(..));
        let paren = if quantifier {
            !rightmost
        } else {
            precedence(f) < min
        };
        // Inside parentheses the node is its own rightmost context.
        let rightmost = rightmost || paren;
        if paren {
            out.push('(');
            tasks.push(Task::Text(")"));
        }
        match f {
            Formula::True => out.push_str(syn.top),
            Formula::False => out.push_str(syn.bottom),
            Formula::And(gs) if gs.is_empty() => out.push_str(syn.top),
            Formula::Or(gs) if gs.is_empty() => out.push_str(syn.bottom),
            Formula::Atom(a) => print_atom(a, &bound, &mut out),
            Formula::Not(g) => {
                out.push_str(syn.not);
                tasks.push(Task::Node {
                    f: g,
                    min: 5,
                    rightmost,
                });
            }
            Formula::And(gs) | Formula::Or(gs) => {
                let (sep, min) = if matches!(f, Formula::And(_)) {
                    (syn.and, 5)
                } else {
                    (syn.or, 4)
                };
                let last = gs.len() - 1;
                for (i, g) in gs.iter().enumerate().rev() {
                    tasks.push(Task::Node {
                        f: g,
                        min,
                        rightmost: rightmost && i == last,
                    });
                    if i > 0 {
                        tasks.push(Task::Text(sep));
                    }
                }
            }
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                let (sep, prec) = if matches!(f, Formula::Implies(..)) {
                    (syn.implies, 2)
                } else {
                    (syn.iff, 1)
                };
                tasks.push(Task::Node {
                    f: b,
                    min: prec,
                    rightmost,
                });
                tasks.push(Task::Text(sep));
                tasks.push(Task::Node {
                    f: a,
                    min: prec + 1,
                    rightmost: false,
                });
            }
            Formula::Forall(vs, g) | Formula::Exists(vs, g) => {
                out.push_str(if matches!(f, Formula::Forall(..)) {
                    syn.forall
                } else {
                    syn.exists
                });
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    print_name(v, &mut out);
                    *bound.entry(v.as_str()).or_insert(0) += 1;
                }
                out.push_str(". ");
                tasks.push(Task::Unbind(vs));
                tasks.push(Task::Node {
                    f: g,
                    min: 0,
                    rightmost,
                });
            }
        }
    }
    out
}

fn print_atom(a: &Atom, bound: &HashMap<&str, usize>, out: &mut String) {
    match a {
        Atom::Prop(p) => print_name(p, out),
        Atom::Quoted(q) => print_quoted(q, out),
        Atom::Value(v) => print_value_atom(v, out),
        Atom::Pred(p, args) => {
            print_name(p, out);
            out.push('(');
            for (i, t) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match t {
                    Term::Var(v) => print_name(v, out),
                    // A bare name bound here would re-parse as the variable.
                    Term::Const(c) if bound.contains_key(c.as_str()) => print_quoted(c, out),
                    Term::Const(c) => print_name(c, out),
                }
            }
            out.push(')');
        }
    }
}

/// `key = value unit`: the key bare when it re-parses as that key, the value as its
/// canonical literal, the unit bare when it is a name.
fn print_value_atom(v: &ValueAtom, out: &mut String) {
    if is_key(&v.key) {
        out.push_str(&v.key);
    } else {
        print_quoted(&v.key, out);
    }
    out.push_str(" = ");
    match &v.value {
        Scalar::Str(s) => print_quoted(s, out),
        Scalar::Num(t) | Scalar::Json(t) => out.push_str(t),
    }
    if let Some(u) = &v.unit {
        out.push(' ');
        print_name(u, out);
    }
}

/// A name as is when it re-parses as that name, quoted otherwise.
fn print_name(name: &str, out: &mut String) {
    if is_name(name) {
        out.push_str(name);
    } else {
        print_quoted(name, out);
    }
}

/// Quoted text with `"` and `\` escaped and invisible characters as `\u{…}`.
fn print_quoted(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}
