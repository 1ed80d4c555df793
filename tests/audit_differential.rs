//! The audit against an independent oracle on random propositional traces.
//!
//! The test builds traces of announcements, retractions and verifications over three atoms,
//! keeps its own Σ (a map from id to formula, replaced on re-announcement, as contract §2 and
//! the replay define it) and decides everything by truth tables over the eight assignments:
//! no parser, grounding, CNF or solver of the crate is involved on the oracle side. It then
//! requires the audit to report exactly:
//!
//! - a `claimed-outcome-mismatch` at every verify whose claim disagrees with the true class
//!   (convention 2: `ungrounded` and `newinfo` both agree with `newinfo`), and the confusion
//!   matrix cell by cell;
//! - an `unhandled-contradiction` at every announcement that takes Σ from satisfiable to
//!   unsatisfiable, unless retractions restore satisfiability before the next announcement
//!   (these traces have no `revise`);
//! - an `inconsistent-sigma` at the last event exactly when Σ ends unsatisfiable;
//! - an unforced `revision-not-minimal` at every retraction said to be by revision (these
//!   traces have no `revise` to carry out) exactly when Σ was satisfiable just before it.

use std::collections::BTreeMap;

use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, audit};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum F {
    Atom(usize),
    Not(Box<F>),
    And(Box<F>, Box<F>),
    Or(Box<F>, Box<F>),
    Implies(Box<F>, Box<F>),
}

const ATOMS: [&str; 3] = ["p", "q", "r"];

impl F {
    fn eval(&self, a: u8) -> bool {
        match self {
            F::Atom(i) => a & (1 << i) != 0,
            F::Not(x) => !x.eval(a),
            F::And(x, y) => x.eval(a) && y.eval(a),
            F::Or(x, y) => x.eval(a) || y.eval(a),
            F::Implies(x, y) => !x.eval(a) || y.eval(a),
        }
    }

    /// Fully parenthesized, mixing ASCII and Unicode connectives.
    fn text(&self) -> String {
        match self {
            F::Atom(i) => ATOMS[*i].to_string(),
            F::Not(x) => format!("!({})", x.text()),
            F::And(x, y) => format!("({} & {})", x.text(), y.text()),
            F::Or(x, y) => format!("({} ∨ {})", x.text(), y.text()),
            F::Implies(x, y) => format!("({} -> {})", x.text(), y.text()),
        }
    }
}

fn formula() -> impl Strategy<Value = F> {
    let leaf = (0..3usize).prop_map(F::Atom);
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|x| F::Not(Box::new(x))),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| F::And(Box::new(x), Box::new(y))),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| F::Or(Box::new(x), Box::new(y))),
            (inner.clone(), inner).prop_map(|(x, y)| F::Implies(Box::new(x), Box::new(y))),
        ]
    })
}

#[derive(Debug, Clone)]
enum Ev {
    Announce(usize, F),
    /// Retract the n-th active id (modulo), if any; by revision when true.
    Retract(usize, bool),
    Verify(F, usize),
}

const CLAIMS: [&str; 4] = ["contradiction", "entailed", "newinfo", "ungrounded"];

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        4 => (0..5usize, formula()).prop_map(|(i, f)| Ev::Announce(i, f)),
        1 => (0..8usize, any::<bool>()).prop_map(|(n, r)| Ev::Retract(n, r)),
        3 => (formula(), 0..4usize).prop_map(|(f, c)| Ev::Verify(f, c)),
    ]
}

fn sat(sigma: &BTreeMap<String, F>, extra: Option<&F>) -> bool {
    (0u8..8).any(|a| sigma.values().all(|f| f.eval(a)) && extra.is_none_or(|f| f.eval(a)))
}

fn class(sigma: &BTreeMap<String, F>, d: &F) -> &'static str {
    if !sat(sigma, Some(d)) {
        "contradiction"
    } else if !sat(sigma, Some(&F::Not(Box::new(d.clone())))) {
        "entailed"
    } else {
        "newinfo"
    }
}

fn agrees(claimed: &str, true_class: &str) -> bool {
    claimed == true_class || (true_class == "newinfo" && claimed == "ungrounded")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn audit_agrees_with_truth_tables(evs in prop::collection::vec(event(), 1..14)) {
        let mut lines = Vec::new();
        let mut sigma: BTreeMap<String, F> = BTreeMap::new();
        let mut mismatches = Vec::new();
        let mut matrix: BTreeMap<(&str, &str), u64> = BTreeMap::new();
        let mut contradictions = Vec::new();
        let mut unforced = Vec::new();
        // (step of the announcement, a retraction followed) while Σ is unsatisfiable.
        let mut open: Option<(u32, bool)> = None;
        for e in &evs {
            let step = lines.len() as u32 + 1;
            match e {
                Ev::Announce(i, f) => {
                    if let Some((s, acted)) = open.take()
                        && (!acted || !sat(&sigma, None))
                    {
                        contradictions.push(s);
                    }
                    let before = sat(&sigma, None);
                    let id = format!("b{i}");
                    lines.push(format!(
                        r#"{{"kind":"announce","id":"{id}","formula":"{}"}}"#,
                        f.text()
                    ));
                    sigma.insert(id, f.clone());
                    if before && !sat(&sigma, None) {
                        open = Some((step, false));
                    }
                }
                Ev::Retract(n, revision) => {
                    let Some(id) = sigma.keys().nth(n % sigma.len().max(1)).cloned() else {
                        continue;
                    };
                    let by = if *revision { "revision" } else { "agent" };
                    if *revision && sat(&sigma, None) {
                        unforced.push(step);
                    }
                    lines.push(format!(r#"{{"kind":"retract","target":"{id}","by":"{by}"}}"#));
                    sigma.remove(&id);
                    if let Some(o) = open.as_mut() {
                        o.1 = true;
                    }
                }
                Ev::Verify(f, c) => {
                    let claimed = CLAIMS[*c];
                    lines.push(format!(
                        r#"{{"kind":"verify","formula":"{}","outcome":"{claimed}"}}"#,
                        f.text()
                    ));
                    let truth = class(&sigma, f);
                    *matrix.entry((claimed, truth)).or_default() += 1;
                    if !agrees(claimed, truth) {
                        mismatches.push(step);
                    }
                }
            }
        }
        if let Some((s, acted)) = open
            && (!acted || !sat(&sigma, None))
        {
            contradictions.push(s);
        }
        let text = lines.join("\n") + "\n";
        let report = audit(&Model::from_bytes("d.jsonl", text.as_bytes()), &AuditOptions::default());
        let steps = |c: Code| -> Vec<u32> {
            report.findings.iter().filter(|f| f.code == c).filter_map(|f| f.step).collect()
        };
        prop_assert_eq!(steps(Code::ClaimedOutcomeMismatch), mismatches, "{}", text);
        for claimed in CLAIMS {
            for truth in ["contradiction", "entailed", "newinfo"] {
                let want = matrix.get(&(claimed, truth)).copied().unwrap_or(0);
                prop_assert_eq!(report.matrix.get(claimed, truth), want, "{} -> {}\n{}", claimed, truth, text);
            }
        }
        prop_assert_eq!(steps(Code::UnhandledContradiction), contradictions, "{}", text);
        let end: Vec<u32> = if sat(&sigma, None) { vec![] } else { vec![lines.len() as u32] };
        prop_assert_eq!(steps(Code::InconsistentSigma), end, "{}", text);
        prop_assert!(steps(Code::ParseError).is_empty(), "{}", text);
        let found: Vec<u32> = report
            .findings
            .iter()
            .filter(|f| f.code == Code::RevisionNotMinimal && f.evidence.get("unforced") == Some(&true.into()))
            .filter_map(|f| f.step)
            .collect();
        prop_assert_eq!(found, unforced, "{}", text);
    }
}
