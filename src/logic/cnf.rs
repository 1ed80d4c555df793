//! Tseitin encoding of ground formulas into CNF, plus a plain evaluator.
//!
//! Every subformula gets a *definition literal* `t` with full bi-implication clauses
//! (`t ↔ (l₁ ∧ … ∧ lₙ)` and so on), never distribution, so the CNF stays linear in the size of
//! the formula. Definitions are a conservative extension of the formula (any model of the
//! atoms extends uniquely to the definition variables), which is why they are **permanent**:
//! they are added once as hard clauses and never need retracting, and the same literal is
//! reused whenever the same subformula appears again (structural hash-consing over the
//! already-encoded children, so `p ∧ q` inside two beliefs costs one variable). Both polarities
//! are defined, so a definition literal can be assumed true (consistency) or false
//! (entailment by refutation) without new clauses.
//!
//! Variables are numbered by the encoder itself and created lazily: an atom gets a variable
//! the first time it is encoded, so the solver never sees atoms that occur nowhere. Negation
//! costs nothing (`¬φ` is `!t_φ`), `∨` is encoded as a negated `∧` (De Morgan) so both share
//! one cache, and constants are folded away.
//!
//! Long clauses are cut into chains ([`MAX_CLAUSE`], [`Tseitin::add_chained`]). varisat, like
//! every MiniSat-style solver, looks for a new watched literal by scanning a clause from its
//! third literal, so assigning the literals of one n-literal clause false one after another
//! costs O(n²): a 1,000,000-atom disjunction checked for entailment (its negation assumed,
//! one atom at a time) ran out of a 10 s budget in that scan alone. Cut into clauses of at
//! most [`MAX_CLAUSE`] literals linked by fresh variables (`l₁ ∨ … ∨ l₆₃ ∨ y₁`,
//! `¬y₁ ∨ l₆₄ ∨ … ∨ y₂`, …), every scan is short. The chain is a conservative extension of
//! the clause (a model of it sets the `y`s to "the rest of the clause is still needed"), so
//! it can stand wherever the clause stood, as a definition or as a guarded belief.
//!
//! Quantifiers are not encoded here: formulas are grounded first (`logic::ground`).
//!
//! **Value atoms** (`key = value`, [`crate::logic::formula::ValueAtom`]) carry a meaning of
//! their own: a key holds at most one value. The encoder adds it where value atoms get their
//! variables, so every solver fed by an encoder (the engine's, the rules', the fresh ones of
//! explanations and corrections, the DIMACS export) holds it: the distinct value atoms of one
//! key that were ever encoded are at most one true, as a sequential ("ladder") at-most-one
//! that grows with each new value by one variable and three clauses (`v → sₙ`,
//! `sₙ₋₁ → sₙ`, `sₙ₋₁ → ¬v`, where `sₙ` reads "one of the first n values holds"). Linear in
//! the values of a key, and incremental: nothing is re-encoded when a value is added. These
//! clauses are permanent like definitions: they are true in every model of the semantics.

use hashbrown::HashMap;
use varisat::{Lit, Var};

use crate::logic::formula::{Atom, Formula};

/// Where the encoder sends the clauses it produces.
pub trait ClauseSink {
    /// Adds one clause (a disjunction of literals).
    fn add_clause(&mut self, clause: &[Lit]);
}

impl ClauseSink for Vec<Vec<Lit>> {
    fn add_clause(&mut self, clause: &[Lit]) {
        self.push(clause.to_vec());
    }
}

/// An encoding failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CnfError {
    /// The formula still contains a quantifier; ground it first.
    Quantified,
}

impl std::fmt::Display for CnfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CnfError::Quantified => write!(f, "the formula contains a quantifier; ground it first"),
        }
    }
}

impl std::error::Error for CnfError {}

/// Key of a hash-consed gate: the (normalized) literals of its inputs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Gate {
    And(Vec<Lit>),
    Iff(Lit, Lit),
}

/// The longest clause handed to a solver; longer ones become chains (see the module docs).
pub const MAX_CLAUSE: usize = 64;

/// How many extra variables (and as many extra clauses) chaining a clause of `len` literals
/// costs.
pub fn chain_links(len: usize) -> usize {
    if len <= MAX_CLAUSE {
        0
    } else {
        // Each link carries MAX_CLAUSE - 2 literals of the clause besides its two links.
        (len - 2).div_ceil(MAX_CLAUSE - 2)
    }
}

/// An upper bound on what encoding a formula can add, computed before encoding so that caps
/// can refuse a formula before anything reaches the solver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SizeBound {
    /// At most this many new variables.
    pub vars: usize,
    /// At most this many new clauses.
    pub clauses: usize,
}

/// Computes a [`SizeBound`] for `f` without allocating per node.
pub fn size_bound(f: &Formula) -> SizeBound {
    let mut bound = SizeBound {
        vars: 1,
        clauses: 1,
    };
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        // One variable per node, and for a gate with k inputs k + 1 clauses (And/Or) or
        // 4 clauses (Iff); atoms add one variable and no clause, value atoms one more
        // variable and three clauses (their key's at-most-one ladder).
        bound.vars += 1;
        match g {
            Formula::Atom(Atom::Value(_)) => {
                bound.vars += 1;
                bound.clauses += 3;
            }
            Formula::True | Formula::False | Formula::Atom(_) => {}
            Formula::Not(a) => stack.push(a),
            Formula::And(cs) | Formula::Or(cs) => {
                let links = chain_links(cs.len() + 1);
                bound.clauses += cs.len() + 1 + links;
                bound.vars += links;
                stack.extend(cs.iter());
            }
            Formula::Implies(a, b) => {
                bound.clauses += 3;
                stack.push(a);
                stack.push(b);
            }
            Formula::Iff(a, b) => {
                bound.clauses += 4;
                stack.push(a);
                stack.push(b);
            }
            Formula::Forall(_, a) | Formula::Exists(_, a) => stack.push(a),
        }
    }
    bound
}

/// The Tseitin encoder of one belief state: owns the variable numbering, the atom table and
/// the gate cache.
#[derive(Debug, Default)]
pub struct Tseitin {
    next_var: usize,
    atoms: HashMap<Atom, Var>,
    atom_of: HashMap<Var, Atom>,
    gates: HashMap<Gate, Lit>,
    true_lit: Option<Lit>,
    /// Per key of a value atom: the ladder literal "one of its values encoded so far
    /// holds", and the variables of those values.
    keys: HashMap<String, (Lit, Vec<Var>)>,
}

enum Frame<'a> {
    Visit(&'a Formula),
    Build(&'a Formula, usize),
}

impl Tseitin {
    /// A fresh encoder with no variables.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allocates a fresh variable (used for selectors and other engine-side literals).
    pub fn fresh_var(&mut self) -> Var {
        let v = Var::from_index(self.next_var);
        self.next_var += 1;
        v
    }

    /// The number of variables allocated so far.
    pub fn num_vars(&self) -> usize {
        self.next_var
    }

    /// The variable of an atom, if the atom was ever encoded.
    pub fn atom_var(&self, atom: &Atom) -> Option<Var> {
        self.atoms.get(atom).copied()
    }

    /// The atom a variable stands for, if it is an atom variable.
    pub fn var_atom(&self, var: Var) -> Option<&Atom> {
        self.atom_of.get(&var)
    }

    /// The variables of the value atoms of `atom`'s key other than `atom`'s own (empty for an
    /// atom that is no value atom): the ones that must be false when it is true.
    pub fn rivals(&self, atom: &Atom) -> impl Iterator<Item = Var> + '_ {
        let own = self.atoms.get(atom).copied();
        let vars = match atom {
            Atom::Value(v) => self.keys.get(&v.key).map(|k| k.1.as_slice()),
            _ => None,
        };
        vars.unwrap_or(&[])
            .iter()
            .copied()
            .filter(move |&x| Some(x) != own)
    }

    /// Every encoded atom with its variable.
    pub fn atoms(&self) -> impl Iterator<Item = (&Atom, Var)> {
        self.atoms.iter().map(|(a, v)| (a, *v))
    }

    /// Adds `clause` to `sink`, cut into a chain of clauses of at most [`MAX_CLAUSE`]
    /// literals linked by fresh variables when it is longer (see the module docs).
    pub fn add_chained(&mut self, clause: &[Lit], sink: &mut impl ClauseSink) {
        if clause.len() <= MAX_CLAUSE {
            sink.add_clause(clause);
            return;
        }
        let mut rest = clause;
        let mut link: Option<Lit> = None;
        let mut buf = Vec::with_capacity(MAX_CLAUSE);
        loop {
            buf.clear();
            buf.extend(link.map(|y| !y));
            let room = MAX_CLAUSE - buf.len();
            if rest.len() <= room {
                buf.extend_from_slice(rest);
                sink.add_clause(&buf);
                return;
            }
            let (head, tail) = rest.split_at(room - 1);
            buf.extend_from_slice(head);
            let y = self.fresh_var().positive();
            buf.push(y);
            sink.add_clause(&buf);
            link = Some(y);
            rest = tail;
        }
    }

    fn constant(&mut self, value: bool, sink: &mut impl ClauseSink) -> Lit {
        let t = match self.true_lit {
            Some(t) => t,
            None => {
                let t = self.fresh_var().positive();
                sink.add_clause(&[t]);
                self.true_lit = Some(t);
                t
            }
        };
        if value { t } else { !t }
    }

    fn atom(&mut self, atom: &Atom, sink: &mut impl ClauseSink) -> Lit {
        if let Some(v) = self.atoms.get(atom) {
            return v.positive();
        }
        let v = self.fresh_var();
        self.atoms.insert(atom.clone(), v);
        self.atom_of.insert(v, atom.clone());
        if let Atom::Value(va) = atom {
            self.one_value(&va.key, v, sink);
        }
        v.positive()
    }

    /// Extends the at-most-one ladder of `key` by its new value variable `v` (module docs).
    fn one_value(&mut self, key: &str, v: Var, sink: &mut impl ClauseSink) {
        let Some((prev, _)) = self.keys.get(key) else {
            // The first value: "one of the first 1 holds" is the value itself.
            self.keys.insert(key.to_string(), (v.positive(), vec![v]));
            return;
        };
        let prev = *prev;
        let s = self.fresh_var().positive();
        sink.add_clause(&[!v.positive(), s]);
        sink.add_clause(&[!prev, s]);
        sink.add_clause(&[!prev, !v.positive()]);
        if let Some(k) = self.keys.get_mut(key) {
            k.0 = s;
            k.1.push(v);
        }
    }

    fn and_gate(&mut self, mut lits: Vec<Lit>, sink: &mut impl ClauseSink) -> Lit {
        let t = self.true_lit;
        if let Some(t) = t {
            if lits.contains(&!t) {
                return !t;
            }
            lits.retain(|&l| l != t);
        }
        lits.sort_unstable();
        lits.dedup();
        // After sorting, l and ¬l are adjacent (same variable, codes 2v and 2v+1).
        if lits.windows(2).any(|w| w[0].var() == w[1].var()) {
            return self.constant(false, sink);
        }
        match lits.len() {
            0 => return self.constant(true, sink),
            1 => return lits[0],
            _ => {}
        }
        let key = Gate::And(lits);
        if let Some(&l) = self.gates.get(&key) {
            return l;
        }
        let Gate::And(lits) = &key else {
            unreachable!("key was built as And just above")
        };
        let x = self.fresh_var().positive();
        let mut long = Vec::with_capacity(lits.len() + 1);
        long.push(x);
        for &l in lits {
            sink.add_clause(&[!x, l]);
            long.push(!l);
        }
        self.add_chained(&long, sink);
        self.gates.insert(key, x);
        x
    }

    fn or_gate(&mut self, lits: Vec<Lit>, sink: &mut impl ClauseSink) -> Lit {
        let neg = lits.into_iter().map(|l| !l).collect();
        !self.and_gate(neg, sink)
    }

    fn iff_gate(&mut self, a: Lit, b: Lit, sink: &mut impl ClauseSink) -> Lit {
        if a == b {
            return self.constant(true, sink);
        }
        if a == !b {
            return self.constant(false, sink);
        }
        if let Some(t) = self.true_lit {
            if a == t {
                return b;
            }
            if a == !t {
                return !b;
            }
            if b == t {
                return a;
            }
            if b == !t {
                return !a;
            }
        }
        // (¬a ↔ b) = ¬(a ↔ b): normalize both inputs to positive literals, ordered.
        let flip = a.is_negative() != b.is_negative();
        let (mut p, mut q) = (a.var().positive(), b.var().positive());
        if q < p {
            std::mem::swap(&mut p, &mut q);
        }
        let key = Gate::Iff(p, q);
        let x = match self.gates.get(&key) {
            Some(&x) => x,
            None => {
                let x = self.fresh_var().positive();
                sink.add_clause(&[!x, !p, q]);
                sink.add_clause(&[!x, p, !q]);
                sink.add_clause(&[x, p, q]);
                sink.add_clause(&[x, !p, !q]);
                self.gates.insert(key, x);
                x
            }
        };
        if flip { !x } else { x }
    }

    /// Encodes a ground formula and returns its definition literal. The clauses defining it
    /// (and any subformula not encoded before) go to `sink`.
    pub fn encode(&mut self, f: &Formula, sink: &mut impl ClauseSink) -> Result<Lit, CnfError> {
        // Iterative post-order walk: deep formulas must not overflow the stack.
        let mut stack = vec![Frame::Visit(f)];
        let mut out: Vec<Lit> = Vec::new();
        while let Some(frame) = stack.pop() {
            match frame {
                Frame::Visit(g) => match g {
                    Formula::True => out.push(self.constant(true, sink)),
                    Formula::False => out.push(self.constant(false, sink)),
                    Formula::Atom(a) => out.push(self.atom(a, sink)),
                    Formula::Not(a) => {
                        stack.push(Frame::Build(g, 1));
                        stack.push(Frame::Visit(a));
                    }
                    Formula::And(cs) | Formula::Or(cs) => {
                        stack.push(Frame::Build(g, cs.len()));
                        stack.extend(cs.iter().rev().map(Frame::Visit));
                    }
                    Formula::Implies(a, b) | Formula::Iff(a, b) => {
                        stack.push(Frame::Build(g, 2));
                        stack.push(Frame::Visit(b));
                        stack.push(Frame::Visit(a));
                    }
                    Formula::Forall(..) | Formula::Exists(..) => return Err(CnfError::Quantified),
                },
                Frame::Build(g, n) => {
                    let args = out.split_off(out.len() - n);
                    let lit = match g {
                        Formula::Not(_) => !args[0],
                        Formula::And(_) => self.and_gate(args, sink),
                        Formula::Or(_) => self.or_gate(args, sink),
                        Formula::Implies(..) => self.or_gate(vec![!args[0], args[1]], sink),
                        Formula::Iff(..) => self.iff_gate(args[0], args[1], sink),
                        _ => unreachable!("only connectives are built"),
                    };
                    out.push(lit);
                }
            }
        }
        out.pop().ok_or(CnfError::Quantified)
    }
}

/// Evaluates a formula under an assignment of its atoms. `None` when the formula contains a
/// quantifier (ground it first).
pub fn eval(f: &Formula, value: &mut impl FnMut(&Atom) -> bool) -> Option<bool> {
    Some(match f {
        Formula::True => true,
        Formula::False => false,
        Formula::Atom(a) => value(a),
        Formula::Not(a) => !eval(a, value)?,
        Formula::And(cs) => {
            let mut all = true;
            for c in cs {
                all &= eval(c, value)?;
            }
            all
        }
        Formula::Or(cs) => {
            let mut any = false;
            for c in cs {
                any |= eval(c, value)?;
            }
            any
        }
        Formula::Implies(a, b) => !eval(a, value)? | eval(b, value)?,
        Formula::Iff(a, b) => eval(a, value)? == eval(b, value)?,
        Formula::Forall(..) | Formula::Exists(..) => return None,
    })
}

/// Collects the atoms of a formula (each once, in first-occurrence order).
pub fn atoms_of(f: &Formula, out: &mut Vec<Atom>) {
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        match g {
            Formula::True | Formula::False => {}
            Formula::Atom(a) => {
                if !out.contains(a) {
                    out.push(a.clone());
                }
            }
            Formula::Not(a) | Formula::Forall(_, a) | Formula::Exists(_, a) => stack.push(a),
            Formula::And(cs) | Formula::Or(cs) => stack.extend(cs.iter().rev()),
            Formula::Implies(a, b) | Formula::Iff(a, b) => {
                stack.push(b);
                stack.push(a);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Formula {
        Formula::Atom(Atom::Prop(s.into()))
    }

    #[test]
    fn hash_consing_reuses_definitions() {
        let mut enc = Tseitin::new();
        let mut cls: Vec<Vec<Lit>> = Vec::new();
        let a = enc
            .encode(&Formula::And(vec![p("a"), p("b")]), &mut cls)
            .unwrap();
        let n = cls.len();
        let b = enc
            .encode(&Formula::And(vec![p("b"), p("a")]), &mut cls)
            .unwrap();
        assert_eq!(a, b);
        assert_eq!(cls.len(), n);
        // ¬(¬a ∨ ¬b) is the same gate by De Morgan.
        let c = enc
            .encode(
                &Formula::Not(Box::new(Formula::Or(vec![
                    Formula::Not(Box::new(p("a"))),
                    Formula::Not(Box::new(p("b"))),
                ]))),
                &mut cls,
            )
            .unwrap();
        assert_eq!(a, c);
    }

    /// Gates wider than [`MAX_CLAUSE`] are chained; the encoding still agrees with the
    /// formula on every assignment (a wide disjunction and its negation, over distinct
    /// subformulas so that nothing collapses), and every clause is short.
    #[test]
    fn chained_wide_gates_agree_with_evaluation() {
        use crate::logic::solver::{Sat, Stop};
        let n = 12;
        let mut terms = Vec::new();
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let nj = Formula::Not(Box::new(p(&format!("a{j}"))));
                    terms.push(Formula::And(vec![p(&format!("a{i}")), nj]));
                }
            }
        }
        assert!(terms.len() > 2 * MAX_CLAUSE);
        let wide = Formula::Or(terms);
        for f in [wide.clone(), Formula::Not(Box::new(wide))] {
            let mut enc = Tseitin::new();
            let mut cls: Vec<Vec<Lit>> = Vec::new();
            let t = enc.encode(&f, &mut cls).unwrap();
            assert!(cls.iter().all(|c| c.len() <= MAX_CLAUSE));
            let b = size_bound(&f);
            assert!(enc.num_vars() <= b.vars && cls.len() <= b.clauses);
            let mut sat = Sat::new(Stop::new());
            for c in &cls {
                sat.add_clause(c);
            }
            let vars: Vec<Var> = (0..n)
                .map(|i| enc.atom_var(&Atom::Prop(format!("a{i}"))).unwrap())
                .collect();
            for bits in 0u32..1 << n {
                let value = |i: usize| bits >> i & 1 == 1;
                let mut assume: Vec<Lit> = (0..n).map(|i| vars[i].lit(value(i))).collect();
                let want = eval(&f, &mut |a| match a {
                    Atom::Prop(s) => value(s[1..].parse::<usize>().unwrap()),
                    _ => false,
                })
                .unwrap();
                assume.push(t);
                assert_eq!(sat.solve(&assume).unwrap(), want, "{bits:b}");
                *assume.last_mut().unwrap() = !t;
                assert_eq!(sat.solve(&assume).unwrap(), !want, "{bits:b}");
            }
        }
    }

    #[test]
    fn quantifiers_are_refused() {
        let mut enc = Tseitin::new();
        let mut cls: Vec<Vec<Lit>> = Vec::new();
        let f = Formula::Forall(vec!["x".into()], Box::new(p("a")));
        assert_eq!(enc.encode(&f, &mut cls), Err(CnfError::Quantified));
    }

    #[test]
    fn long_flat_chain_and_deep_nesting_encode() {
        let mut enc = Tseitin::new();
        let mut cls: Vec<Vec<Lit>> = Vec::new();
        let chain = Formula::And((0..100_000).map(|i| p(&format!("x{i}"))).collect());
        enc.encode(&chain, &mut cls).unwrap();
        let mut deep = p("z");
        for _ in 0..50_000 {
            deep = Formula::Not(Box::new(Formula::And(vec![deep, p("y")])));
        }
        enc.encode(&deep, &mut cls).unwrap();
        // Formula's own Drop is iterative, so the deep tree goes away safely.
        drop(deep);
    }
}
