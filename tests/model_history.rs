//! `history φ` against brute-force replays that ask at every step: a truth table (for
//! propositional traces, independent of the engine) and a fresh engine per step (for traces
//! with quantifiers, whose grounding the truth table does not do). The history walks only the
//! change points that can matter and prunes with monotonicity and components; the replays ask
//! every step from scratch, so any step the pruning skips wrongly shows up as a disagreement.

use std::collections::BTreeSet;

use doxascope::logic::engine::{BeliefSpec, BeliefState, Entails, Role};
use doxascope::logic::formula::{Atom, Formula};
use doxascope::logic::ground;
use doxascope::logic::parse::parse;
use doxascope::logic::print::normalized;
use doxascope::model::Model;
use doxascope::model::history::{Change, History, HistoryIndex, Status};
use doxascope::model::recompute::RecomputeOptions;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Announce(u8, String, u8),
    Retract(u8),
    Filler(String),
}

/// Formulas over one of two groups of atoms (p*, q*), so that a session's beliefs often fall
/// into several components and the pruning by component is exercised.
fn group(g: &'static str) -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0u8..3).prop_map(move |i| format!("{g}{i}")),
        (0u8..3).prop_map(move |i| format!("!{g}{i}")),
    ];
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} & {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} | {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} -> {b})")),
        ]
    })
}

fn formula() -> impl Strategy<Value = String> {
    prop_oneof![group("p"), group("q")]
}

/// A question: over one group, or over both (φ then spans two components).
fn question() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => formula(),
        1 => (group("p"), group("q")).prop_map(|(a, b)| format!("({a} | {b})")),
        1 => (group("p"), group("q")).prop_map(|(a, b)| format!("({a} & {b})")),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u8..6, formula(), 0u8..5).prop_map(|(i, f, r)| Op::Announce(i, f, r)),
        2 => (0u8..6).prop_map(Op::Retract),
        1 => formula().prop_map(Op::Filler),
    ]
}

fn trace(ops: &[Op]) -> String {
    let roles = ["fact", "fact", "assumption", "rule", "fact"];
    let mut lines = Vec::new();
    for o in ops {
        lines.push(match o {
            Op::Announce(i, f, r) => format!(
                r#"{{"kind":"announce","id":"b{i}","formula":"{f}","role":"{}"}}"#,
                roles[*r as usize]
            ),
            Op::Retract(i) => format!(r#"{{"kind":"retract","target":"b{i}","by":"agent"}}"#),
            Op::Filler(f) => format!(r#"{{"kind":"verify","formula":"{f}","outcome":"newinfo"}}"#),
        });
    }
    lines.join("\n") + "\n"
}

fn models_ok(fs: &[Formula], extra: &Formula, want: impl Fn(bool) -> bool) -> bool {
    // Every assignment satisfying fs satisfies want(extra).
    let mut atoms = BTreeSet::new();
    for f in fs.iter().chain([extra]) {
        ground::atoms(f, &mut atoms);
    }
    let atoms: Vec<Atom> = atoms.into_iter().collect();
    (0u32..(1 << atoms.len())).all(|bits| {
        let assign = |a: &Atom| {
            atoms
                .iter()
                .position(|x| x == a)
                .is_some_and(|i| bits >> i & 1 == 1)
        };
        !fs.iter().all(|f| ground::eval(f, &assign)) || want(ground::eval(extra, &assign))
    })
}

/// φ's status on Σ by truth table.
fn oracle(sigma: &[Formula], phi: &Formula) -> &'static str {
    if models_ok(sigma, &Formula::True, |_| false) {
        return "inconsistent";
    }
    if models_ok(sigma, phi, |v| v) {
        "entailed"
    } else if models_ok(sigma, phi, |v| !v) {
        "contradicted"
    } else {
        "unknown"
    }
}

fn sigma(m: &Model, step: u32) -> Vec<Formula> {
    m.sigma_at("h.jsonl", step)
        .unwrap()
        .iter()
        .filter_map(|b| b.formula().ok())
        .collect()
}

/// The rows a replay asking at every step expects: a row at every step where the status
/// differs from the step before (step 0 against `unknown`), and at every step where a
/// record with φ's formula entered or left Σ.
fn check_against(
    m: &Model,
    h: &History,
    phi: &Formula,
    status_at: impl Fn(u32) -> &'static str,
) -> Result<(), TestCaseError> {
    let tl = m.timeline("h.jsonl").unwrap();
    let n = tl.len();
    let norm = normalized(phi);
    let is_phi = |r: u32| {
        tl.belief(m.log(), r)
            .and_then(|v| v.formula().ok())
            .is_some_and(|f| normalized(&f) == norm)
    };
    let mut prev = "unknown";
    let mut expected: Vec<(u32, &'static str, &'static str, bool, bool)> = Vec::new();
    for t in 0..=n {
        let s = status_at(t);
        let announced = tl
            .beliefs()
            .iter()
            .enumerate()
            .any(|(i, r)| r.announced == t && t > 0 && is_phi(i as u32));
        let retracted = tl
            .beliefs()
            .iter()
            .enumerate()
            .any(|(i, r)| r.retraction.is_some_and(|x| x.step == t) && is_phi(i as u32));
        if s != prev || announced || retracted {
            expected.push((t, s, prev, announced, retracted));
        }
        prev = s;
    }
    let got: Vec<(u32, &'static str, &'static str, bool, bool)> = h
        .rows
        .iter()
        .filter(|r| {
            // Re-derivations alone are not status changes; they are checked below.
            r.changes != [Change::Rederived]
        })
        .map(|r| {
            (
                r.step,
                r.status.as_str(),
                r.previous.as_str(),
                r.changes.iter().any(|c| matches!(c, Change::Announced(_))),
                r.changes.iter().any(|c| matches!(c, Change::Retracted(..))),
            )
        })
        .collect();
    prop_assert_eq!(&got, &expected, "history of {} disagrees", phi);
    for r in &h.rows {
        prop_assert!(!matches!(r.status, Status::NotCheckable(_)));
        // Every support is a subset of Σ at that step that entails φ, and minimal.
        if let Some(s) = &r.support {
            let s = s.as_ref().expect("support found");
            prop_assert_eq!(&r.status, &Status::Entailed);
            let members: Vec<Formula> = s
                .iter()
                .map(|&i| {
                    prop_assert!(tl.beliefs()[i as usize].active_at(r.step));
                    Ok(tl.belief(m.log(), i).unwrap().formula().unwrap())
                })
                .collect::<Result<_, TestCaseError>>()?;
            prop_assert!(models_ok(&members, phi, |v| v), "support does not entail φ");
            for k in 0..members.len() {
                let mut less = members.clone();
                less.remove(k);
                prop_assert!(!models_ok(&less, phi, |v| v), "support not minimal");
            }
        } else if r.status == Status::Entailed && r.previous != Status::Entailed {
            prop_assert!(false, "an entailed stretch without a support at {}", r.step);
        }
        if r.changes.contains(&Change::Rederived) {
            prop_assert_eq!(&r.previous, &Status::Entailed);
            prop_assert_eq!(&r.status, &Status::Entailed);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Propositional traces: the truth table at every step.
    #[test]
    fn history_agrees_with_a_truth_table_at_every_step(
        ops in proptest::collection::vec(op(), 1..28),
        phi in question(),
    ) {
        let text = trace(&ops);
        let m = Model::from_bytes("h.jsonl", text.as_bytes());
        let tl = m.timeline("h.jsonl").unwrap();
        let opts = RecomputeOptions { audit: None, ..RecomputeOptions::default() };
        let ix = HistoryIndex::build(tl, m.log(), &opts);
        let phi = parse(&phi).unwrap();
        let h = ix.history(tl, m.log(), &phi, None, &opts);
        prop_assert!(h.pruned);
        check_against(&m, &h, &phi, |t| oracle(&sigma(&m, t), &phi))?;
        // The index's own figures agree with the replay.
        for t in 0..=tl.len() {
            prop_assert_eq!(ix.size_at(t) as usize, m.sigma_at("h.jsonl", t).unwrap().len());
            prop_assert_eq!(ix.consistent_at(t).unwrap(), oracle(&sigma(&m, t), &Formula::True) != "inconsistent");
        }
        // A second question reuses the index and agrees as well.
        let not_phi = Formula::Not(Box::new(phi.clone()));
        let h2 = ix.history(tl, m.log(), &not_phi, None, &opts);
        check_against(&m, &h2, &not_phi, |t| oracle(&sigma(&m, t), &not_phi))?;
    }
}

/// A fresh engine holding Σ at step t, asked about φ: the brute-force replay for formulas the
/// truth table cannot ground.
fn engine_status(m: &Model, t: u32, phi: &Formula) -> &'static str {
    let mut st = BeliefState::new().unwrap();
    for b in m.sigma_at("h.jsonl", t).unwrap() {
        let spec = BeliefSpec::new(b.id(), b.formula().unwrap()).step(u64::from(b.step()));
        st.add(spec).unwrap();
    }
    let e = st.entails(phi).unwrap();
    if !e.sigma_consistent {
        return "inconsistent";
    }
    match e.result {
        Entails::Entailed => "entailed",
        Entails::Contradicted => "contradicted",
        Entails::Unknown => "unknown",
    }
}

fn qformula() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u8..3).prop_map(|i| format!("P(c{i})")),
        (0u8..3).prop_map(|i| format!("!P(c{i})")),
        (0u8..3).prop_map(|i| format!("Q(c{i})")),
        Just("forall x. P(x) -> Q(x)".to_string()),
        Just("exists x. !Q(x)".to_string()),
        Just("forall x. P(x)".to_string()),
    ]
}

fn qop() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u8..5, qformula()).prop_map(|(i, f)| Op::Announce(i, f, 0)),
        2 => (0u8..5).prop_map(Op::Retract),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Quantified traces: the engine asked afresh at every step (the domain changes with Σ,
    /// so an added belief can make an entailed ∃ unentailed: no pruning may assume
    /// monotonicity here).
    #[test]
    fn history_agrees_with_the_engine_at_every_step(
        ops in proptest::collection::vec(qop(), 1..16),
        phi in qformula(),
    ) {
        let text = trace(&ops);
        let m = Model::from_bytes("h.jsonl", text.as_bytes());
        let tl = m.timeline("h.jsonl").unwrap();
        let opts = RecomputeOptions { audit: None, ..RecomputeOptions::default() };
        let ix = HistoryIndex::build(tl, m.log(), &opts);
        let phi = parse(&phi).unwrap();
        let h = ix.history(tl, m.log(), &phi, None, &opts);
        let quantified = ground::has_quantifier(&phi)
            || (0..tl.beliefs().len()).any(|i| {
                tl.belief(m.log(), i as u32)
                    .and_then(|v| v.formula().ok())
                    .is_some_and(|f| ground::has_quantifier(&f))
            });
        prop_assert_eq!(h.pruned, !quantified);
        let mut statuses = Vec::new();
        for t in 0..=tl.len() {
            statuses.push(engine_status(&m, t, &phi));
        }
        // Supports of quantified formulas are not checked by truth table here; only the
        // statuses and the rows.
        let n = tl.len();
        let mut prev = "unknown";
        let mut want = Vec::new();
        for t in 0..=n {
            let s = statuses[t as usize];
            if s != prev {
                want.push((t, s));
            }
            prev = s;
        }
        let got: Vec<(u32, &str)> = h
            .rows
            .iter()
            .filter(|r| r.changes.contains(&Change::Status))
            .map(|r| (r.step, r.status.as_str()))
            .collect();
        prop_assert_eq!(got, want);
    }
}

/// A rule that makes φ follow, a support member retracted while another support remains:
/// φ is re-derived, with the new support named.
#[test]
fn a_lost_support_with_another_left_is_a_rederivation() {
    let text = [
        r#"{"kind":"announce","id":"r1","formula":"a -> q","role":"rule"}"#,
        r#"{"kind":"announce","id":"f1","formula":"a"}"#,
        r#"{"kind":"announce","id":"f2","formula":"q"}"#,
        r#"{"kind":"retract","target":"f1","by":"agent"}"#,
        r#"{"kind":"retract","target":"f2","by":"user"}"#,
    ]
    .join("\n");
    let m = Model::from_bytes("h.jsonl", text.as_bytes());
    let tl = m.timeline("h.jsonl").unwrap();
    let opts = RecomputeOptions::default();
    let ix = HistoryIndex::build(tl, m.log(), &opts);
    let h = ix.history(tl, m.log(), &parse("q").unwrap(), None, &opts);
    let ids = |s: &Option<Result<Vec<u32>, _>>| -> Vec<String> {
        s.as_ref()
            .and_then(|s| s.as_ref().ok())
            .map(|s| {
                s.iter()
                    .map(|&i| tl.beliefs()[i as usize].id.to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let rows: Vec<(u32, Vec<&str>, &str, Vec<String>)> = h
        .rows
        .iter()
        .map(|r| {
            (
                r.step,
                r.changes.iter().map(|c| c.as_str()).collect(),
                r.status.as_str(),
                ids(&r.support),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                2,
                vec!["status"],
                "entailed",
                vec!["r1".into(), "f1".into()]
            ),
            (3, vec!["announced"], "entailed", vec![]),
            (4, vec!["re-derived"], "entailed", vec!["f2".into()]),
            (5, vec!["status", "retracted"], "unknown", vec![]),
        ]
    );
    let _ = Role::Fact;
}

/// `doxascope history` and the REPL's `history` give the same answer: a belief id stands for
/// its formula, JSON carries the rows with their events and supports, a bad formula is exit
/// 2 with the column.
#[test]
fn history_on_the_command_line_and_in_the_repl() {
    let sample = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join("treasure-hunt.jsonl");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
            .arg("history")
            .args(args)
            .arg(&sample)
            .output()
            .expect("runs")
    };
    let out = run(&["t3-not-a", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["id"], "t3-not-a");
    assert_eq!(v["formula"], "¬treasure_in_a");
    let rows = v["rows"].as_array().expect("rows");
    let summary: Vec<(u64, &str)> = rows
        .iter()
        .map(|r| (r["step"].as_u64().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    // Entailed by the domain and the map before the agent concluded it, announced at 11;
    // Σ inconsistent from the user's correction on, until the revision retracts the map and
    // the agent's conclusion: then the user's treasure_in_a contradicts it.
    assert_eq!(
        summary,
        [
            (8, "entailed"),
            (11, "entailed"),
            (15, "inconsistent"),
            (21, "contradicted")
        ]
    );
    assert_eq!(rows[0]["event"]["line"], 8);
    assert_eq!(rows[0]["event"]["kind"], "announce");
    let support: Vec<&str> = rows[0]["support"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(support, ["t1-domain", "t2-map-b"]);
    assert_eq!(rows[1]["changes"], serde_json::json!(["announced"]));
    assert_eq!(rows[1]["belief"], "t3-not-a");
    assert!(v["cost"]["change_points"].as_u64().unwrap() >= 4);
    let bad = run(&["p &"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("column"));
    // The REPL: the same rows, and the index is reused by the second question.
    let m = Model::load(&[&sample]).expect("loads");
    let mut r = doxascope::repl::Repl::new(Box::new(doxascope::repl::ModelSigma::new(
        std::sync::Arc::new(m),
        "treasure-hunt.jsonl",
    )));
    let a = r
        .run_line("history ¬treasure_in_a")
        .unwrap()
        .to_json("history");
    let steps = |rows: &[serde_json::Value]| -> Vec<u64> {
        rows.iter().map(|r| r["step"].as_u64().unwrap()).collect()
    };
    assert_eq!(steps(a["rows"].as_array().unwrap()), steps(rows));
    assert_eq!(a["cost"]["index_reused"], false);
    let b = r
        .run_line("history treasure_in_a")
        .unwrap()
        .to_json("history");
    assert_eq!(b["cost"]["index_reused"], true);
    assert_eq!(b["rows"][0]["status"], "contradicted");
    // Without a trace there is no timeline to ask.
    let mut empty = doxascope::repl::Repl::new(Box::new(doxascope::repl::EmptyTrace));
    assert!(empty.run_line("history p").is_err());
}
