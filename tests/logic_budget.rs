//! Input that is large but trivially satisfiable is answered, not timed out: the cost is in
//! the encoding, which must stay linear (`docs/reliability.md`, "Solver budgets and trace
//! size"). The budget here is generous so that a slow machine or a debug build cannot make
//! the tests flaky; what they assert is the answer.

use std::time::Duration;

use doxascope::logic::engine::{BeliefSpec, BeliefState, Entails, Limits, Outcome};
use doxascope::logic::formula::{Atom, Formula};

fn atom(s: String) -> Formula {
    Formula::Atom(Atom::Prop(s))
}

fn not(f: Formula) -> Formula {
    Formula::Not(Box::new(f))
}

fn state() -> BeliefState {
    BeliefState::with_limits(Limits {
        timeout: Duration::from_secs(120),
        ..Limits::default()
    })
    .expect("state")
}

/// A disjunction of 1,000,000 atoms: new information, satisfiable, and neither it nor its
/// first atom entailed. Checking its entailment assumes every atom false in turn, which in
/// one 1,000,000-literal clause made the solver's watch scan quadratic.
#[test]
fn a_million_atom_disjunction_is_answered() {
    let n = 1_000_000;
    let big = Formula::Or((0..n).map(|i| atom(format!("a{i}"))).collect());
    let mut s = state();
    assert_eq!(
        s.check(&big, None).expect("check").outcome,
        Outcome::NewInfo
    );
    s.add(BeliefSpec::new("big", big.clone())).expect("add");
    assert!(s.consistent().expect("consistent").consistent);
    assert_eq!(s.entails(&big).expect("entails").result, Entails::Entailed);
    assert_eq!(
        s.check(&atom("a0".into()), None).expect("check").outcome,
        Outcome::NewInfo
    );
    // All atoms but the last false, as one belief of 999,999 conjuncts: consistent with the
    // disjunction, and then the last atom is entailed.
    let rest = Formula::And((0..n - 1).map(|i| not(atom(format!("a{i}")))).collect());
    assert_eq!(
        s.check(&rest, None).expect("check").outcome,
        Outcome::NewInfo
    );
    s.add(BeliefSpec::new("rest", rest)).expect("add");
    assert_eq!(
        s.entails(&atom(format!("a{}", n - 1)))
            .expect("entails")
            .result,
        Entails::Entailed
    );
}

/// A satisfiable CNF of 200,000 clauses over 200,000 variables, announced as one belief:
/// new information, consistent, and a literal it forces is entailed.
#[test]
fn a_200k_clause_satisfiable_cnf_is_answered() {
    let n = 200_000usize;
    // Clause k: v_k ∨ ¬v_{k+1} ∨ v_{(7k+3) mod n}; all variables true satisfies every
    // clause, and a small xorshift mixes the signs of the third literal.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut clauses = Vec::with_capacity(n);
    for k in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let third = atom(format!("v{}", (7 * k + 3) % n));
        let third = if x & 1 == 0 { third } else { not(third) };
        clauses.push(Formula::Or(vec![
            atom(format!("v{k}")),
            not(atom(format!("v{}", (k + 1) % n))),
            third,
        ]));
    }
    clauses.push(atom("v0".into()));
    let cnf = Formula::And(clauses);
    let mut s = state();
    assert_eq!(
        s.check(&cnf, None).expect("check").outcome,
        Outcome::NewInfo
    );
    s.add(BeliefSpec::new("cnf", cnf)).expect("add");
    assert!(s.consistent().expect("consistent").consistent);
    assert_eq!(
        s.entails(&atom("v0".into())).expect("entails").result,
        Entails::Entailed
    );
    assert_eq!(
        s.check(&not(atom("v5".into())), None)
            .expect("check")
            .outcome,
        Outcome::NewInfo
    );
}
