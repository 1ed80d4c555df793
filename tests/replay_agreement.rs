//! One replay, one truth (property tests over random traces and random hand-issued commands).
//!
//! - Σ at every step is the same set of beliefs (id, formula, confidence, source) from the
//!   model's replay, the REPL, `export --format json`; the audit's recomputation sees the same
//!   Σ (its consistency after each announcement and its gate verdicts agree with a brute-force
//!   truth table over the model's Σ, and with the REPL's answers).
//! - Every conflict any path returns is unsatisfiable and minimal by truth table.
//! - Hand-issued commands change Σ exactly as their replies say; `save`, then loading the
//!   saved file, gives the REPL's Σ back, and its audit reports nothing the REPL did not show.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use doxascope::logic::formula::{Atom, Formula};
use doxascope::logic::parse::parse;
use doxascope::model::Model;
use doxascope::model::audit::{AuditOptions, Code, Severity, audit};
use doxascope::model::export::{Format, Header, export};
use doxascope::repl::{ModelSigma, Repl};
use proptest::prelude::*;
use serde_json::{Value, json};

// ---- the oracle: truth tables, written independently of the engine ----

fn atoms(f: &Formula, out: &mut BTreeSet<String>) {
    match f {
        Formula::True | Formula::False => {}
        Formula::Atom(Atom::Prop(p)) => {
            out.insert(p.clone());
        }
        Formula::Atom(a) => panic!("propositional only: {a:?}"),
        Formula::Not(g) => atoms(g, out),
        Formula::And(gs) | Formula::Or(gs) => gs.iter().for_each(|g| atoms(g, out)),
        Formula::Implies(a, b) | Formula::Iff(a, b) => {
            atoms(a, out);
            atoms(b, out);
        }
        Formula::Forall(..) | Formula::Exists(..) => panic!("no quantifiers here"),
    }
}

fn eval(f: &Formula, m: &BTreeMap<String, bool>) -> bool {
    match f {
        Formula::True => true,
        Formula::False => false,
        Formula::Atom(Atom::Prop(p)) => m[p],
        Formula::Atom(_) => unreachable!(),
        Formula::Not(g) => !eval(g, m),
        Formula::And(gs) => gs.iter().all(|g| eval(g, m)),
        Formula::Or(gs) => gs.iter().any(|g| eval(g, m)),
        Formula::Implies(a, b) => !eval(a, m) || eval(b, m),
        Formula::Iff(a, b) => eval(a, m) == eval(b, m),
        Formula::Forall(..) | Formula::Exists(..) => unreachable!(),
    }
}

fn sat(fs: &[Formula]) -> bool {
    let mut names = BTreeSet::new();
    fs.iter().for_each(|f| atoms(f, &mut names));
    let names: Vec<String> = names.into_iter().collect();
    (0u32..1 << names.len()).any(|bits| {
        let m: BTreeMap<String, bool> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), bits >> i & 1 == 1))
            .collect();
        fs.iter().all(|f| eval(f, &m))
    })
}

/// Θ(Σ, φ) by truth table.
fn theta(sigma: &[Formula], phi: &Formula) -> &'static str {
    let mut with = sigma.to_vec();
    with.push(phi.clone());
    if !sat(&with) {
        return "contradiction";
    }
    let mut without = sigma.to_vec();
    without.push(Formula::Not(Box::new(phi.clone())));
    if sat(&without) { "newinfo" } else { "entailed" }
}

/// Unsatisfiable, and every set with one member dropped satisfiable.
fn assert_minimal_conflict(fs: &[Formula], what: &str) {
    assert!(!sat(fs), "{what}: the conflict {fs:?} is satisfiable");
    for i in 0..fs.len() {
        let mut rest = fs.to_vec();
        rest.remove(i);
        assert!(sat(&rest), "{what}: {fs:?} is not minimal (drop {i})");
    }
}

// ---- random traces ----

const ATOMS: [&str; 4] = ["a", "b", "c", "d"];

fn formula() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0..ATOMS.len()).prop_map(|i| ATOMS[i].to_string()),
        (0..ATOMS.len()).prop_map(|i| format!("~{}", ATOMS[i])),
    ];
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} & {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} | {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} -> {y})")),
            inner.prop_map(|x| format!("~{x}")),
        ]
    })
}

#[derive(Debug, Clone)]
enum Ev {
    Announce {
        id: Option<u8>,
        formula: String,
        role: &'static str,
        confidence: f64,
        source: &'static str,
    },
    Retract(u8),
    Verify(String, &'static str),
    /// A line with confidence 0: an error for the line in every path.
    ZeroConfidence(String),
}

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        5 => (
            proptest::option::weighted(0.8, 0u8..5),
            formula(),
            prop_oneof![8 => Just("fact"), 2 => Just("assumption"), 1 => Just("rule")],
            prop_oneof![Just(1.0), Just(0.8), Just(0.5)],
            prop_oneof![Just("s1"), Just("s2")],
        )
            .prop_map(|(id, formula, role, confidence, source)| Ev::Announce {
                id,
                formula,
                role,
                confidence,
                source
            }),
        2 => (0u8..5).prop_map(Ev::Retract),
        2 => (formula(), prop_oneof![Just("contradiction"), Just("entailed"), Just("newinfo")])
            .prop_map(|(f, o)| Ev::Verify(f, o)),
        1 => formula().prop_map(Ev::ZeroConfidence),
    ]
}

fn jsonl(events: &[Ev]) -> String {
    let mut out = String::new();
    for (i, e) in events.iter().enumerate() {
        let mut v = match e {
            Ev::Announce {
                id,
                formula,
                role,
                confidence,
                source,
            } => {
                let mut v = json!({"kind": "announce", "formula": formula, "role": role,
                                   "confidence": confidence, "source": source});
                if let Some(id) = id {
                    v["id"] = json!(format!("b{id}"));
                }
                v
            }
            Ev::Retract(id) => json!({"kind": "retract", "target": format!("b{id}")}),
            Ev::Verify(f, o) => json!({"kind": "verify", "formula": f, "outcome": o}),
            Ev::ZeroConfidence(f) => {
                json!({"kind": "announce", "id": "zero", "formula": f, "confidence": 0})
            }
        };
        v["seq"] = json!(i + 1);
        v["session"] = json!("t");
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

fn load(text: &str) -> (tempfile::TempDir, Model) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, text).unwrap();
    let m = Model::load(&[&path]).unwrap();
    (dir, m)
}

/// A belief as every path must agree on it.
type Key = (String, String, String, String);

fn key(id: &str, formula: &str, confidence: f64, source: &str) -> Key {
    let f = parse(formula).map(|f| f.to_string()).unwrap_or_default();
    (
        id.to_string(),
        f,
        format!("{confidence:.4}"),
        source.to_string(),
    )
}

fn run(r: &mut Repl, line: &str) -> Value {
    let cmd = line.split_whitespace().next().unwrap_or("");
    match r.run_line(line) {
        Ok(reply) => reply.to_json(cmd),
        Err(e) => e.to_json(),
    }
}

fn repl_sigma(r: &mut Repl) -> (BTreeSet<Key>, BTreeMap<String, Formula>) {
    let s = run(r, "sigma");
    let mut keys = BTreeSet::new();
    let mut formulas = BTreeMap::new();
    for b in s["beliefs"].as_array().expect("sigma answers") {
        let id = b["id"].as_str().unwrap();
        let f = b["formula"].as_str().unwrap();
        keys.insert(key(
            id,
            f,
            b["confidence"].as_f64().unwrap(),
            b["source"].as_str().unwrap(),
        ));
        formulas.insert(id.to_string(), parse(f).unwrap());
    }
    (keys, formulas)
}

fn conflict_formulas(
    ids: &Value,
    sigma: &BTreeMap<String, Formula>,
    extra: Option<(&str, &Formula)>,
) -> Vec<Formula> {
    ids.as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let id = m.as_str().or(m["id"].as_str()).unwrap();
            match extra {
                Some((x, f)) if x == id => f.clone(),
                _ => sigma
                    .get(id)
                    .unwrap_or_else(|| panic!("conflict member {id} is not in Σ"))
                    .clone(),
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn every_path_sees_the_same_sigma(events in proptest::collection::vec(event(), 1..14)) {
        let text = jsonl(&events);
        let (_dir, model) = load(&text);
        // Only bad lines: no session at all.
        let Some(tl) = model.timelines().first() else { return Ok(()) };
        let name = tl.name().to_string();
        let last = tl.len();
        let model = Arc::new(model);
        let mut repl = Repl::new(Box::new(ModelSigma::new(model.clone(), name.clone())));
        let mut sigma_formulas: Vec<Vec<Formula>> = Vec::new();
        for t in 0..=last {
            let views = model.sigma_at(&name, t).unwrap();
            let from_model: BTreeSet<Key> = views
                .iter()
                .map(|v| key(v.id(), v.formula_text(), v.confidence(), v.source().unwrap_or("")))
                .collect();
            let exported: Value = serde_json::from_str(&export(
                &views,
                Format::Json,
                Header { session: &name, step: t },
            ))
            .unwrap();
            let from_export: BTreeSet<Key> = exported["beliefs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| key(
                    b["id"].as_str().unwrap(),
                    b["formula"].as_str().unwrap(),
                    b["confidence"].as_f64().unwrap(),
                    b["source"].as_str().unwrap_or(""),
                ))
                .collect();
            run(&mut repl, &format!("at {t}"));
            let (from_repl, formulas) = repl_sigma(&mut repl);
            prop_assert_eq!(&from_model, &from_repl, "step {}", t);
            prop_assert_eq!(&from_model, &from_export, "step {}", t);
            prop_assert!(!from_model.iter().any(|k| k.0 == "zero"), "confidence 0 never in Σ");
            let fs: Vec<Formula> = formulas.values().cloned().collect();
            let c = run(&mut repl, "consistent");
            prop_assert_eq!(c["consistent"] == true, sat(&fs), "step {}", t);
            if c["consistent"] == false {
                assert_minimal_conflict(&conflict_formulas(&c["conflict"], &formulas, None), "consistent");
            }
            sigma_formulas.push(fs);
        }
        // The recomputation walks the same Σ: its answers are the truth table's on it, and
        // the REPL's `check` at the step before says the same.
        let rec = model
            .recompute(&name, &Default::default())
            .expect("the session exists");
        for a in &rec.announces {
            if let Ok(res) = &a.result {
                prop_assert_eq!(
                    res.consistent_after,
                    sat(&sigma_formulas[a.step as usize]),
                    "announce at step {}", a.step
                );
                if !res.consistent_after && !res.conflict.is_empty() {
                    run(&mut repl, &format!("at {}", a.step));
                    let (_, formulas) = repl_sigma(&mut repl);
                    assert_minimal_conflict(
                        &conflict_formulas(&json!(&*res.conflict), &formulas, None),
                        "recomputed announce conflict",
                    );
                }
            }
        }
        // Bad lines (confidence 0) are not events: steps count the others.
        let stepped: Vec<&Ev> = events.iter().filter(|e| !matches!(e, Ev::ZeroConfidence(_))).collect();
        for v in &rec.verifies {
            let Ev::Verify(f, _) = stepped[v.step as usize - 1] else { continue };
            let phi = parse(f).unwrap();
            let want = theta(&sigma_formulas[v.step as usize - 1], &phi);
            let got = v.result.as_ref().expect("propositional verifies are checkable").theta;
            prop_assert_eq!(got.as_str(), want, "verify at step {}", v.step);
            run(&mut repl, &format!("at {}", v.step - 1));
            let ch = run(&mut repl, &format!("check {f}"));
            prop_assert_eq!(ch["outcome"].as_str(), Some(want));
        }
    }
}

#[derive(Debug, Clone)]
enum Hand {
    Announce(String, Option<f64>),
    Retract(u8),
    Policy(&'static str),
    At(u8),
    Undo,
    Check(String),
}

fn hand() -> impl Strategy<Value = Hand> {
    prop_oneof![
        5 => (formula(), proptest::option::weighted(0.3, prop_oneof![Just(0.5), Just(0.9)]))
            .prop_map(|(f, c)| Hand::Announce(f, c)),
        1 => (0u8..8).prop_map(Hand::Retract),
        2 => prop_oneof![Just("greedy"), Just("recency"), Just("confidence"), Just("reject"), Just("flag")]
            .prop_map(Hand::Policy),
        1 => (0u8..20).prop_map(Hand::At),
        1 => Just(Hand::Undo),
        2 => formula().prop_map(Hand::Check),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn hand_commands_do_what_they_say_and_save_round_trips(
        events in proptest::collection::vec(event(), 0..10),
        start in 0u8..12,
        cmds in proptest::collection::vec(hand(), 1..12),
    ) {
        let text = jsonl(&events);
        let (dir, model) = load(&text);
        let name = model.timelines().first().map(|t| t.name().to_string()).unwrap_or_default();
        let last = model.timelines().first().map_or(0, |t| t.len());
        let model = Arc::new(model);
        let mut repl = Repl::new(Box::new(ModelSigma::new(model.clone(), name.clone())));
        run(&mut repl, &format!("at {}", u32::from(start).min(last)));
        // Whether the layer was moved off the step it was made on, and whether Σ was ever
        // inconsistent: either may leave findings in the saved file that the REPL showed.
        let mut moved = false;
        let mut inconsistent = !sat(&repl_sigma(&mut repl).1.into_values().collect::<Vec<_>>());
        let mut history: Vec<BTreeSet<Key>> = Vec::new();
        // Formulas taken out of Σ by a hand command (a retract, or the policy of an
        // announcement), and whether one was announced again: the saved file then really
        // goes A … B … A … B, and its `oscillation` finding is about what the user typed.
        let mut dropped: Vec<Formula> = Vec::new();
        let mut typed_loop = false;
        for c in &cmds {
            let (before, formulas) = repl_sigma(&mut repl);
            match c {
                Hand::Announce(f, conf) => {
                    let line = match conf {
                        Some(c) => format!("announce {f} @{c}"),
                        None => format!("announce {f}"),
                    };
                    let a = run(&mut repl, &line);
                    prop_assert_eq!(&a["ok"], &json!(true), "{}", a);
                    let id = a["id"].as_str().unwrap().to_string();
                    let phi = parse(f).unwrap();
                    let retracted: BTreeSet<String> = a["retracted"].as_array().unwrap()
                        .iter().map(|v| v.as_str().unwrap().to_string()).collect();
                    typed_loop |= dropped.contains(&phi);
                    dropped.extend(retracted.iter().filter_map(|i| formulas.get(i).cloned()));
                    let (after, _) = repl_sigma(&mut repl);
                    // Σ after = Σ before − retracted, with φ overwriting its id when applied.
                    let mut want: BTreeSet<String> = before.iter().map(|k| k.0.clone())
                        .filter(|i| !retracted.contains(i)).collect();
                    if a["applied"] == true { want.insert(id.clone()); } else { want.remove(&id); }
                    let got: BTreeSet<String> = after.iter().map(|k| k.0.clone()).collect();
                    prop_assert_eq!(got, want, "{}", a);
                    if a["sigma_was_inconsistent"] == true {
                        prop_assert!(retracted.is_empty(), "no policy runs on an inconsistent Σ: {}", a);
                        let prior = conflict_formulas(&a["prior_conflict"], &formulas, None);
                        assert_minimal_conflict(&prior, "prior conflict");
                    } else if !a["conflict"].as_array().unwrap().is_empty() {
                        let cf = conflict_formulas(&a["conflict"], &formulas, Some((&id, &phi)));
                        prop_assert!(a["conflict"].as_array().unwrap().iter().any(|v| v == &json!(id)),
                            "the conflict contains the trigger: {}", a);
                        assert_minimal_conflict(&cf, "announce conflict");
                    }
                    let sigma_now: Vec<Formula> = repl_sigma(&mut repl).1.into_values().collect();
                    inconsistent |= !sat(&sigma_now);
                }
                Hand::Retract(k) => {
                    let ids: Vec<String> = before.iter().map(|k| k.0.clone()).collect();
                    if ids.is_empty() { continue; }
                    let id = ids[*k as usize % ids.len()].clone();
                    dropped.extend(formulas.get(&id).cloned());
                    let r = run(&mut repl, &format!("retract {id}"));
                    prop_assert_eq!(&r["ok"], &json!(true), "{}", r);
                    let (after, _) = repl_sigma(&mut repl);
                    prop_assert!(!after.iter().any(|k| k.0 == id));
                    prop_assert_eq!(after.len() + 1, before.len());
                }
                Hand::Policy(p) => { run(&mut repl, &format!("policy {p}")); }
                Hand::At(t) => {
                    let t = u32::from(*t).min(last);
                    if u64::from(t) != repl.step() && repl.hand_commands() > 0 { moved = true; }
                    run(&mut repl, &format!("at {t}"));
                }
                Hand::Undo => {
                    let u = run(&mut repl, "undo");
                    if u["ok"] == true {
                        // Σ is what it was before the undone command (at this step).
                        if !moved {
                            let prev = history.pop().expect("a command to undo");
                            prop_assert_eq!(repl_sigma(&mut repl).0, prev);
                        }
                    }
                    continue;
                }
                Hand::Check(f) => {
                    let ch = run(&mut repl, &format!("check {f}"));
                    let phi = parse(f).unwrap();
                    let fs: Vec<Formula> = formulas.values().cloned().collect();
                    prop_assert_eq!(ch["outcome"].as_str(), Some(theta(&fs, &phi)));
                    if !ch["conflict"].as_array().unwrap().is_empty() {
                        let mut cf = conflict_formulas(&ch["conflict"], &formulas, None);
                        cf.push(phi.clone());
                        assert_minimal_conflict(&cf, "check conflict");
                    }
                    if !ch["prior_conflict"].as_array().unwrap().is_empty() {
                        assert_minimal_conflict(&conflict_formulas(&ch["prior_conflict"], &formulas, None), "check prior");
                    }
                    continue;
                }
            }
            if matches!(c, Hand::Announce(..) | Hand::Retract(_)) {
                history.push(before);
            }
            inconsistent |= !sat(&repl_sigma(&mut repl).1.into_values().collect::<Vec<_>>());
        }
        // save, then load the saved file: the same Σ; audited, nothing the REPL did not show.
        let path = dir.path().join("saved.jsonl");
        let s = run(&mut repl, &format!("save {}", path.display()));
        prop_assert_eq!(&s["ok"], &json!(true), "{}", s);
        let (held, _) = repl_sigma(&mut repl);
        let saved = Model::load(&[&path]).unwrap();
        let tl = &saved.timelines()[0];
        let got: BTreeSet<Key> = saved.sigma_at(tl.name(), tl.len()).unwrap().iter()
            .map(|v| key(v.id(), v.formula_text(), v.confidence(), v.source().unwrap_or("")))
            .collect();
        prop_assert_eq!(&got, &held);
        let report = audit(&saved, &AuditOptions::default());
        let serious: Vec<String> = report.findings.iter()
            .filter(|f| f.severity != Severity::Info)
            .filter(|f| !(typed_loop && f.code == Code::Oscillation))
            .map(|f| format!("{}: {}", f.code.as_str(), f.message))
            .collect();
        if !moved && !inconsistent {
            prop_assert!(serious.is_empty(), "{:?}\n{}", serious, std::fs::read_to_string(&path).unwrap());
        }
    }
}
