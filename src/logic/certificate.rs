//! Certificates: answers anyone can check without trusting doxascope.
//!
//! Every verdict doxascope recomputes (a gate's Θ, an `entails`) rests on two satisfiability
//! questions about Σ and a formula ψ: is Σ ∧ ψ satisfiable, and is Σ ∧ ¬ψ? [`certify`] answers
//! one of them **from scratch**: it grounds Σ's formulas (in their witnessed form) and ψ over the
//! active domain (the constants and witnesses of Σ and ψ, [`crate::logic::ground`]), Tseitin-encodes them with a fresh encoder
//! ([`crate::logic::cnf`]), asserts each belief and the query (or its negation) as a unit
//! clause, and solves the CNF once on a fresh varisat solver. Nothing of the engine's
//! incremental state (selectors, probes, cached models, remembered cores) is involved, so
//! the certificate stands on its own:
//!
//! - the CNF in DIMACS, with a comment header naming the question, the atom of every atom
//!   variable and the literal asserting each belief and the query;
//! - for an unsatisfiable CNF, varisat's DRAT proof (text): a DRAT checker such as drat-trim
//!   or dratify, sharing no code with varisat, replays it to the empty clause;
//! - for a satisfiable one, the model: every variable's value, which anyone checks by
//!   evaluating each clause.
//!
//! DRAT cannot express assumptions, which is why the query is a unit clause here and the
//! solver is used for one solve only (varisat refuses DRAT for incremental solving).
//!
//! No I/O happens here: the texts are returned and the caller writes them
//! (`model::certificates`). Certificates cost nothing unless asked for: the recomputation
//! never calls this.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io;
use std::sync::Arc;
use std::time::Instant;

use varisat::{ExtendFormula, Lit, ProofFormat, Solver};

use super::cnf::{self, Tseitin};
use super::engine::{Entails, Outcome};
use super::formula::{Atom, Formula};
use super::ground;
use super::solver::Stop;

/// One belief of Σ as the certificate sees it.
#[derive(Debug, Clone, Copy)]
pub struct Premise<'a> {
    /// The belief id (named in the CNF's header).
    pub id: &'a str,
    /// Its formula as written (quantifiers are grounded here).
    pub formula: &'a Formula,
}

/// Which of the two questions a certificate answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Question {
    /// Is Σ ∧ ψ satisfiable?
    WithQuery,
    /// Is Σ ∧ ¬ψ satisfiable?
    WithNegation,
    /// With cited premises (`because`): are the cited beliefs with every rule and norm,
    /// and ¬ψ, satisfiable? Satisfiable means they do not entail ψ: the verdict is
    /// `ungrounded` (when Σ ∧ ψ is satisfiable).
    Grounding,
}

impl Question {
    /// Both questions, in the order a verdict asks them.
    pub const BOTH: [Question; 2] = [Question::WithQuery, Question::WithNegation];

    /// The question as written in the certificate and its index (`"Σ ∧ ψ satisfiable?"`).
    pub fn text(self) -> &'static str {
        match self {
            Question::WithQuery => "Σ ∧ ψ satisfiable?",
            Question::WithNegation => "Σ ∧ ¬ψ satisfiable?",
            Question::Grounding => "cited ∧ rules ∧ norms ∧ ¬ψ satisfiable?",
        }
    }

    /// A short name for file names (`psi`, `not-psi`).
    pub fn tag(self) -> &'static str {
        match self {
            Question::WithQuery => "psi",
            Question::WithNegation => "not-psi",
            Question::Grounding => "grounding",
        }
    }
}

/// Limits of one certificate.
#[derive(Debug, Clone, Copy)]
pub struct CertOptions {
    /// The cap on quantifier instances per formula (as the recomputation's).
    pub instance_cap: u64,
    /// The most clauses (and variables) the CNF may have, checked before encoding.
    pub max_size: usize,
    /// When the solve must stop; `None`: no deadline.
    pub deadline: Option<Instant>,
}

impl Default for CertOptions {
    fn default() -> Self {
        CertOptions {
            instance_cap: ground::DEFAULT_INSTANCE_CAP,
            max_size: super::engine::MAX_STATE_SIZE,
            deadline: None,
        }
    }
}

/// Why no certificate was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertError {
    /// A formula could not be grounded (over the instance cap, too large, too deep).
    Ground(String),
    /// The CNF would exceed [`CertOptions::max_size`].
    TooLarge(usize),
    /// The solve did not finish before the deadline.
    Timeout,
    /// varisat failed otherwise.
    Solver(String),
}

impl std::fmt::Display for CertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CertError::Ground(m) => write!(f, "{m}"),
            CertError::TooLarge(n) => {
                write!(f, "the CNF would have about {n} clauses, over the limit")
            }
            CertError::Timeout => write!(f, "the solve did not finish in time"),
            CertError::Solver(m) => write!(f, "solver error: {m}"),
        }
    }
}

impl std::error::Error for CertError {}

/// The answer of a certificate, with what proves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Unsatisfiable, with a DRAT proof (text) of the CNF.
    Unsat {
        /// The DRAT proof, ending in the empty clause.
        proof: Vec<u8>,
    },
    /// Satisfiable, with a model.
    Sat {
        /// The value of every variable 1..=n as a DIMACS literal (`3` true, `-3` false).
        model: Vec<i64>,
        /// The atoms with their values in the model, by name.
        atoms: Vec<(String, bool)>,
    },
}

/// One answered question with its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certificate {
    /// The question answered.
    pub question: Question,
    /// The CNF in DIMACS, comment header first.
    pub cnf: String,
    /// The answer and its proof or model.
    pub answer: Answer,
}

impl Certificate {
    /// Whether the CNF is satisfiable.
    pub fn satisfiable(&self) -> bool {
        matches!(self.answer, Answer::Sat { .. })
    }

    /// The model file: the readable atom values as comments, then the DIMACS literals on a
    /// `v` line ending in 0 (the SAT competition's format). `None` when unsatisfiable.
    pub fn model_text(&self) -> Option<String> {
        let Answer::Sat { model, atoms } = &self.answer else {
            return None;
        };
        let mut out = format!("c model: {} yes\n", self.question.text());
        for (a, v) in atoms {
            let _ = writeln!(out, "c {}={v}", comment_safe(a));
        }
        out.push('v');
        for l in model {
            let _ = write!(out, " {l}");
        }
        out.push_str(" 0\n");
        Some(out)
    }
}

/// Θ(Σ, ψ) from the two answers, as the gate defines it: Σ ∧ ψ unsatisfiable is a
/// contradiction (an inconsistent Σ included), else Σ ∧ ¬ψ unsatisfiable is entailed, else
/// new information.
pub fn theta_of(with_query: bool, with_negation: bool) -> Outcome {
    if !with_query {
        Outcome::Contradiction
    } else if !with_negation {
        Outcome::Entailed
    } else {
        Outcome::NewInfo
    }
}

/// `entails ψ` from the two answers: Σ ∧ ¬ψ unsatisfiable is entailed (an inconsistent Σ
/// entails everything), else Σ ∧ ψ unsatisfiable is contradicted, else unknown.
pub fn entails_of(with_query: bool, with_negation: bool) -> Entails {
    if !with_negation {
        Entails::Entailed
    } else if !with_query {
        Entails::Contradicted
    } else {
        Entails::Unknown
    }
}

/// A comment line's text with every control character escaped, so that a name from a trace
/// never ends the comment (a newline would make the rest of it a clause line).
pub fn comment_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The proof sink: varisat's DRAT steps into memory, failing once the deadline passes, which
/// makes varisat abandon the solve.
struct ProofSink<'b> {
    buf: &'b mut Vec<u8>,
    stop: Arc<Stop>,
}

impl io::Write for ProofSink<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.stop.stopped() {
            return Err(io::Error::other("deadline"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The CNF of one question before it is solved.
struct Encoded {
    clauses: Vec<Vec<Lit>>,
    num_vars: usize,
    header: String,
    atoms: Vec<(String, usize)>,
}

/// Grounds and encodes Σ and ψ (negated for [`Question::WithNegation`]), naming every atom,
/// belief and the query in the header after the caller's `context` lines.
fn encode(
    sigma: &[Premise<'_>],
    domain_from: &[Premise<'_>],
    query: &Formula,
    question: Question,
    context: &[String],
    opts: &CertOptions,
) -> Result<Encoded, CertError> {
    let quantified =
        ground::has_quantifier(query) || sigma.iter().any(|p| ground::has_quantifier(p.formula));
    let domain: Vec<String> = if quantified {
        let mut d = BTreeSet::new();
        for p in domain_from {
            ground::domain_constants(p.formula, &mut d);
        }
        ground::question_constants(query, &mut d);
        d.into_iter().collect()
    } else {
        Vec::new()
    };
    let ground_one = |f: &Formula| {
        ground::ground(f, &domain, opts.instance_cap).map_err(|e| CertError::Ground(e.to_string()))
    };
    // Beliefs are held in their witnessed form, as the engine holds them; the question is
    // grounded as written (`ground` module docs).
    let grounded: Vec<Formula> = sigma
        .iter()
        .map(|p| ground_one(&ground::witnessed(p.formula)))
        .collect::<Result<_, _>>()?;
    let q = ground_one(query)?;
    let mut bound = 0usize;
    for f in grounded.iter().chain(std::iter::once(&q)) {
        let b = cnf::size_bound(f);
        bound = bound.saturating_add(b.clauses.max(b.vars) + 1);
    }
    if bound > opts.max_size {
        return Err(CertError::TooLarge(bound));
    }
    let mut enc = Tseitin::new();
    let mut clauses: Vec<Vec<Lit>> = Vec::new();
    let mut lines = String::new();
    let quantified_err = |e: cnf::CnfError| CertError::Ground(e.to_string());
    for (p, f) in sigma.iter().zip(&grounded) {
        if let Some(c) = as_clause(f, &mut enc) {
            // A clause stands as itself: no definition variable, which keeps the CNF and
            // its models small on traces of clauses (the T1 workload).
            clauses.push(c);
            let _ = writeln!(
                lines,
                "c belief clause {} {}",
                clauses.len(),
                comment_safe(p.id)
            );
            continue;
        }
        let t = enc.encode(f, &mut clauses).map_err(quantified_err)?;
        clauses.push(vec![t]);
        let _ = writeln!(lines, "c belief {} {}", t.to_dimacs(), comment_safe(p.id));
    }
    let t = enc.encode(&q, &mut clauses).map_err(quantified_err)?;
    let asserted = match question {
        Question::WithQuery => t,
        Question::WithNegation | Question::Grounding => !t,
    };
    clauses.push(vec![asserted]);
    let _ = writeln!(
        lines,
        "c query {} {}",
        asserted.to_dimacs(),
        match question {
            Question::WithQuery => "ψ",
            Question::WithNegation | Question::Grounding => "¬ψ",
        }
    );
    let mut atoms: Vec<(String, usize)> = enc
        .atoms()
        .map(|(a, v)| (atom_name(a), v.index() + 1))
        .collect();
    atoms.sort();
    let mut header = String::from("c doxascope certificate\n");
    let _ = writeln!(header, "c question: {}", question.text());
    let _ = writeln!(header, "c psi: {}", comment_safe(&query.to_string()));
    for c in context {
        let _ = writeln!(header, "c {}", comment_safe(c));
    }
    if !domain.is_empty() {
        let names: Vec<String> = domain.iter().map(|d| comment_safe(d)).collect();
        let _ = writeln!(header, "c domain: {}", names.join(", "));
    }
    header.push_str(
        "c a belief that is a clause is that clause (`c belief clause N ID`: the Nth clause \
         below); any other belief and the query are asserted by the unit clause of their \
         literal (`c belief LIT ID`, `c query LIT`); `c atom VAR NAME` names the atom \
         variables, the other variables are Tseitin definitions\n",
    );
    for (name, v) in &atoms {
        let _ = writeln!(header, "c atom {v} {}", comment_safe(name));
    }
    header.push_str(&lines);
    Ok(Encoded {
        clauses,
        num_vars: enc.num_vars(),
        header,
        atoms,
    })
}

/// The literals of `f` when it is a clause (a literal, or a disjunction of literals, at
/// most [`cnf::MAX_CLAUSE`] of them, no two complementary), their atoms given variables by
/// `enc`; `None` for any other formula.
fn as_clause(f: &Formula, enc: &mut Tseitin) -> Option<Vec<Lit>> {
    let parts: Vec<&Formula> = match f {
        Formula::Or(cs) => cs.iter().collect(),
        other => vec![other],
    };
    if parts.len() > cnf::MAX_CLAUSE {
        return None;
    }
    let mut lits = Vec::with_capacity(parts.len());
    for part in parts {
        let atom = match part {
            Formula::Atom(_) => part,
            Formula::Not(a) if matches!(**a, Formula::Atom(_)) => a,
            _ => return None,
        };
        // Encoding an atom adds no clause: it only names its variable.
        let mut none: Vec<Vec<Lit>> = Vec::new();
        let l = enc.encode(atom, &mut none).ok()?;
        lits.push(if std::ptr::eq(atom, part) { l } else { !l });
    }
    lits.sort_unstable();
    lits.dedup();
    if lits.windows(2).any(|w| w[0].var() == w[1].var()) {
        return None;
    }
    Some(lits)
}

fn atom_name(a: &Atom) -> String {
    a.to_string()
}

/// Answers one question about Σ and `query` from scratch, with its CNF and its proof or
/// model (see the module docs). `context` lines (session, step, event) go into the CNF's
/// header as comments.
pub fn certify(
    sigma: &[Premise<'_>],
    query: &Formula,
    question: Question,
    context: &[String],
    opts: &CertOptions,
) -> Result<Certificate, CertError> {
    certify_over(sigma, sigma, query, question, context, opts)
}

/// [`certify`] for a part of Σ (the cited premises with the rules and norms,
/// [`Question::Grounding`]): the beliefs in `sigma` are the CNF's, the quantifier domain is
/// still the constants of all of Σ (`domain_from`) and the query, as the engine grounds it.
pub fn certify_over(
    sigma: &[Premise<'_>],
    domain_from: &[Premise<'_>],
    query: &Formula,
    question: Question,
    context: &[String],
    opts: &CertOptions,
) -> Result<Certificate, CertError> {
    let e = encode(sigma, domain_from, query, question, context, opts)?;
    let mut cnf_text = e.header;
    let _ = writeln!(cnf_text, "p cnf {} {}", e.num_vars, e.clauses.len());
    for c in &e.clauses {
        for l in c {
            let _ = write!(cnf_text, "{} ", l.to_dimacs());
        }
        cnf_text.push_str("0\n");
    }
    let stop = Stop::new();
    if let Some(d) = opts.deadline {
        stop.set_deadline(d);
    }
    let mut proof = Vec::new();
    let (sat, model) = {
        let mut solver = Solver::new();
        solver.write_proof(
            ProofSink {
                buf: &mut proof,
                stop: stop.clone(),
            },
            ProofFormat::Drat,
        );
        for c in &e.clauses {
            solver.add_clause(c);
        }
        let sat = solver.solve().map_err(|err| {
            if stop.stopped() {
                CertError::Timeout
            } else {
                CertError::Solver(err.to_string())
            }
        })?;
        let model = if sat { solver.model() } else { None };
        solver
            .close_proof()
            .map_err(|err| CertError::Solver(err.to_string()))?;
        (sat, model)
    };
    let answer = if sat {
        let mut values = vec![false; e.num_vars];
        for l in model.unwrap_or_default() {
            if let Some(v) = values.get_mut(l.index()) {
                *v = l.is_positive();
            }
        }
        let atoms = e
            .atoms
            .iter()
            .map(|(name, v)| (name.clone(), values[v - 1]))
            .collect();
        let model = values
            .iter()
            .enumerate()
            .map(|(i, &b)| if b { i as i64 + 1 } else { -(i as i64 + 1) })
            .collect();
        Answer::Sat { model, atoms }
    } else {
        // varisat writes no step when unit propagation alone refutes the CNF (a belief and
        // the query as contradicting units): the empty clause then follows by unit
        // propagation, so it is a valid last step, and every proof ends with it.
        if !proof.ends_with(b"\n0\n") && proof != b"0\n" {
            proof.extend_from_slice(b"0\n");
        }
        Answer::Unsat { proof }
    };
    Ok(Certificate {
        question,
        cnf: cnf_text,
        answer,
    })
}

/// The clauses of a DIMACS text (comments and the header line skipped); `None` when a line
/// is not a clause. For checking a model against a CNF without trusting the encoder.
pub fn parse_dimacs(text: &str) -> Option<Vec<Vec<i64>>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('c') || line.starts_with('p') {
            continue;
        }
        for w in line.split_whitespace() {
            let l: i64 = w.parse().ok()?;
            if l == 0 {
                out.push(std::mem::take(&mut cur));
            } else {
                cur.push(l);
            }
        }
    }
    cur.is_empty().then_some(out)
}

/// Whether every clause of `cnf` has a literal true in `model` (DIMACS literals, as in
/// [`Answer::Sat`]).
pub fn model_satisfies(cnf: &[Vec<i64>], model: &[i64]) -> bool {
    let truth: std::collections::HashSet<i64> = model.iter().copied().collect();
    cnf.iter().all(|c| c.iter().any(|l| truth.contains(l)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::oracle;
    use crate::logic::parse::parse;
    use proptest::prelude::*;

    fn premises(fs: &[Formula]) -> Vec<(String, Formula)> {
        fs.iter()
            .enumerate()
            .map(|(i, f)| (format!("b{i}"), f.clone()))
            .collect()
    }

    fn ask(sigma: &[(String, Formula)], q: &Formula, question: Question) -> Certificate {
        let ps: Vec<Premise> = sigma
            .iter()
            .map(|(id, f)| Premise { id, formula: f })
            .collect();
        certify(&ps, q, question, &[], &CertOptions::default()).unwrap()
    }

    /// The answer agrees with the truth-table oracle, a model satisfies every clause of the
    /// DIMACS text, and an unsatisfiable answer has a proof ending in the empty clause.
    fn check_against_oracle(sigma: &[Formula], q: &Formula) -> Result<(), TestCaseError> {
        let named = premises(sigma);
        let refs: Vec<&Formula> = sigma.iter().collect();
        let not_q = Formula::Not(Box::new(q.clone()));
        for (question, f) in [(Question::WithQuery, q), (Question::WithNegation, &not_q)] {
            let cert = ask(&named, q, question);
            let mut all = refs.clone();
            all.push(f);
            prop_assert_eq!(cert.satisfiable(), oracle::satisfiable(&all));
            let clauses = parse_dimacs(&cert.cnf).unwrap();
            match &cert.answer {
                Answer::Sat { model, .. } => prop_assert!(model_satisfies(&clauses, model)),
                Answer::Unsat { proof } => {
                    let text = String::from_utf8(proof.clone()).unwrap();
                    prop_assert!(text.lines().any(|l| l.trim() == "0"), "{}", text);
                }
            }
        }
        Ok(())
    }

    fn atom() -> impl Strategy<Value = Formula> {
        (0u8..5).prop_map(|i| Formula::Atom(Atom::Prop(format!("a{i}"))))
    }

    fn formula() -> impl Strategy<Value = Formula> {
        atom().prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|f| Formula::Not(Box::new(f))),
                prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::And),
                prop::collection::vec(inner.clone(), 2..4).prop_map(Formula::Or),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Formula::Implies(Box::new(a), Box::new(b))),
                (inner.clone(), inner).prop_map(|(a, b)| Formula::Iff(Box::new(a), Box::new(b))),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        /// Differential: both answers of every certificate agree with truth tables.
        #[test]
        fn answers_agree_with_the_oracle(
            sigma in prop::collection::vec(formula(), 0..5),
            q in formula(),
        ) {
            check_against_oracle(&sigma, &q)?;
        }
    }

    /// The treasure hunt's contradiction at the paper's step 5: Σ ∧ ψ is unsatisfiable (a
    /// proof), Σ ∧ ¬ψ satisfiable (a model), so Θ is a contradiction.
    #[test]
    fn a_contradiction_has_a_proof_and_a_model() {
        let sigma = premises(&[parse("(a | b) & ~(a & b)").unwrap(), parse("b").unwrap()]);
        let q = parse("a").unwrap();
        let pos = ask(&sigma, &q, Question::WithQuery);
        let neg = ask(&sigma, &q, Question::WithNegation);
        assert!(!pos.satisfiable() && neg.satisfiable());
        assert_eq!(
            theta_of(pos.satisfiable(), neg.satisfiable()),
            Outcome::Contradiction
        );
        assert_eq!(
            entails_of(pos.satisfiable(), neg.satisfiable()),
            Entails::Contradicted
        );
        assert!(pos.cnf.contains("c atom 1 a\n") || pos.cnf.contains("c atom 2 a\n"));
        assert!(pos.cnf.contains("c belief "));
        assert!(pos.cnf.contains("c question: Σ ∧ ψ satisfiable?"));
        let model = neg.model_text().unwrap();
        assert!(
            model.contains("c a=false") && model.contains("c b=true"),
            "{model}"
        );
        assert!(model.trim_end().ends_with(" 0"));
    }

    /// Quantified beliefs are grounded over the constants and witnesses of Σ and the query,
    /// as the engine grounds them.
    #[test]
    fn quantifiers_are_grounded_over_the_active_domain() {
        let sigma = premises(&[
            parse("forall x. (P(x) -> Q(x))").unwrap(),
            parse("P(a)").unwrap(),
        ]);
        let q = parse("Q(a)").unwrap();
        assert!(!ask(&sigma, &q, Question::WithNegation).satisfiable());
        let q = parse("exists x. Q(x)").unwrap();
        let c = ask(&sigma, &q, Question::WithNegation);
        assert!(!c.satisfiable());
        // The domain holds `a` and the witness the question brings (the `ground` docs).
        let domain = c.cnf.lines().find(|l| l.starts_with("c domain: ")).unwrap();
        assert!(domain.starts_with("c domain: a, "), "{}", c.cnf);
        assert_eq!(domain.matches(ground::WITNESS_MARK).count(), 1, "{}", c.cnf);
        // A constant only the query names widens the domain: Q(b) is not entailed.
        let q = parse("Q(b)").unwrap();
        assert!(ask(&sigma, &q, Question::WithNegation).satisfiable());
    }

    /// Names from a trace cannot break the DIMACS text: a newline in an id is escaped, and
    /// the clause count of the `p cnf` line is exactly the clauses a parser reads.
    #[test]
    fn names_cannot_end_a_comment() {
        let sigma = vec![("evil\n1 0\nc".to_string(), parse("p").unwrap())];
        let c = ask(&sigma, &parse("q").unwrap(), Question::WithQuery);
        assert!(c.cnf.contains("evil\\n1 0\\nc"), "{}", c.cnf);
        let clauses = parse_dimacs(&c.cnf).unwrap();
        let p = c.cnf.lines().find(|l| l.starts_with("p cnf ")).unwrap();
        assert_eq!(
            p.split_whitespace().nth(3),
            Some(clauses.len().to_string().as_str())
        );
    }

    /// A deadline already past stops the solve: a timeout, never an answer.
    #[test]
    fn a_passed_deadline_is_a_timeout() {
        // A pigeonhole instance: 7 pigeons, 6 holes, hard enough to write proof steps.
        let mut fs = Vec::new();
        let v = |p: usize, h: usize| Formula::Atom(Atom::Prop(format!("p{p}h{h}")));
        for p in 0..7 {
            fs.push(Formula::Or((0..6).map(|h| v(p, h)).collect()));
        }
        for h in 0..6 {
            for p in 0..7 {
                for q in p + 1..7 {
                    fs.push(Formula::Not(Box::new(Formula::And(vec![v(p, h), v(q, h)]))));
                }
            }
        }
        let named = premises(&fs);
        let ps: Vec<Premise> = named
            .iter()
            .map(|(id, f)| Premise { id, formula: f })
            .collect();
        let opts = CertOptions {
            deadline: Some(Instant::now()),
            ..CertOptions::default()
        };
        let r = certify(&ps, &Formula::True, Question::WithQuery, &[], &opts);
        assert_eq!(r, Err(CertError::Timeout));
    }
}
