//! Answers depend on Σ at the step and the question alone (issue 11, item 8): the quantifier
//! domain is the constants of Σ and of the question, never those of earlier questions,
//! retracted beliefs or undone commands; an empty domain holds one anonymous individual, so
//! no consistent Σ reads as ⊥ after a retraction.

use doxascope::repl::{EmptyTrace, Repl};
use proptest::prelude::*;
use serde_json::Value;

fn run(r: &mut Repl, line: &str) -> Value {
    let cmd = line.split_whitespace().next().unwrap_or("");
    match r.run_line(line) {
        Ok(reply) => reply.to_json(cmd),
        Err(e) => e.to_json(),
    }
}

/// The answer of a question, without the fields that name the command.
fn answer(r: &mut Repl, line: &str) -> String {
    let mut v = run(r, line);
    if let Value::Object(m) = &mut v {
        m.remove("command");
    }
    v.to_string()
}

#[test]
fn an_earlier_question_does_not_change_the_domain() {
    let mut r = Repl::new(Box::new(EmptyTrace));
    let q = "check forall x. Q(x) -> P(x)";
    let first = answer(&mut r, q);
    run(&mut r, "whynot R(c, d)");
    assert_eq!(answer(&mut r, q), first);
}

#[test]
fn a_retracted_belief_leaves_no_constant_behind() {
    let mut r = Repl::new(Box::new(EmptyTrace));
    run(&mut r, "policy reject");
    run(&mut r, "announce P(a)");
    run(&mut r, "retract P(a)");
    // Σ is empty: ∃x. P(x) is new information, not a contradiction and not entailed.
    assert_eq!(run(&mut r, "check exists x. P(x)")["outcome"], "newinfo");
    assert_eq!(run(&mut r, "check forall x. P(x)")["outcome"], "newinfo");
    run(&mut r, "announce exists x. P(x)");
    assert_eq!(run(&mut r, "consistent")["consistent"], true);
}

#[test]
fn undo_and_reset_give_back_the_same_answers() {
    let mut r = Repl::new(Box::new(EmptyTrace));
    run(&mut r, "announce forall x. Q(x) -> P(x)");
    let q = "entails exists x. P(x)";
    let before = answer(&mut r, q);
    run(&mut r, "announce Q(b)");
    run(&mut r, "undo");
    assert_eq!(answer(&mut r, q), before);
    run(&mut r, "announce R(c, d)");
    run(&mut r, "reset");
    run(&mut r, "announce forall x. Q(x) -> P(x)");
    assert_eq!(answer(&mut r, q), before);
}

const PREDS: [(&str, usize); 3] = [("P", 1), ("Q", 1), ("R", 2)];
const CONSTS: [&str; 3] = ["a", "b", "c"];

fn atom(var: bool) -> impl Strategy<Value = String> {
    (
        0..PREDS.len(),
        proptest::collection::vec(0..CONSTS.len() + 1, 2),
    )
        .prop_map(move |(p, args)| {
            let (name, arity) = PREDS[p];
            let args: Vec<&str> = args[..arity]
                .iter()
                .map(|&i| {
                    if i == CONSTS.len() {
                        if var { "x" } else { "a" }
                    } else {
                        CONSTS[i]
                    }
                })
                .collect();
            format!("{name}({})", args.join(", "))
        })
}

fn formula() -> impl Strategy<Value = String> {
    let ground = atom(false).prop_recursive(1, 4, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} & {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} -> {y})")),
            inner.prop_map(|x| format!("~{x}")),
        ]
    });
    let open = atom(true).prop_recursive(1, 4, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} -> {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} | {y})")),
            inner.prop_map(|x| format!("~{x}")),
        ]
    });
    prop_oneof![
        3 => ground,
        1 => open.clone().prop_map(|b| format!("forall x. {b}")),
        1 => open.prop_map(|b| format!("exists x. {b}")),
    ]
}

#[derive(Debug, Clone)]
enum Step {
    Announce(String),
    Ask(&'static str, String),
    RetractLast,
    Undo,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => formula().prop_map(Step::Announce),
        3 => (prop_oneof![Just("check"), Just("entails"), Just("whynot"), Just("why")], formula())
            .prop_map(|(c, f)| Step::Ask(c, f)),
        1 => Just(Step::RetractLast),
        1 => Just(Step::Undo),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// After any history, a question gets the answer a fresh REPL holding the same Σ (same
    /// beliefs, same order) gives.
    #[test]
    fn answers_depend_on_sigma_and_the_question_only(
        history in proptest::collection::vec(step(), 0..10),
        question in (prop_oneof![Just("check"), Just("entails"), Just("why"), Just("whynot"), Just("consistent")], formula()),
    ) {
        let mut r = Repl::new(Box::new(EmptyTrace));
        run(&mut r, "policy flag");
        let mut announced: Vec<String> = Vec::new();
        for s in &history {
            match s {
                Step::Announce(f) => {
                    if run(&mut r, &format!("announce {f}"))["ok"] == true {
                        announced.push(f.clone());
                    }
                }
                Step::Ask(c, f) => { run(&mut r, &format!("{c} {f}")); }
                Step::RetractLast => {
                    if let Some(f) = announced.last() {
                        run(&mut r, &format!("retract {f}"));
                    }
                }
                Step::Undo => { run(&mut r, "undo"); }
            }
        }
        // The same Σ, built afresh.
        let sigma = run(&mut r, "sigma");
        let mut fresh = Repl::new(Box::new(EmptyTrace));
        run(&mut fresh, "policy flag");
        for b in sigma["beliefs"].as_array().unwrap() {
            let a = run(&mut fresh, &format!("announce {}", b["formula"].as_str().unwrap()));
            prop_assert_eq!(&a["ok"], &Value::Bool(true));
        }
        let line = match question.0 {
            "consistent" => "consistent".to_string(),
            c => format!("{c} {}", question.1),
        };
        prop_assert_eq!(answer(&mut r, &line), answer(&mut fresh, &line), "{}", line);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Issue 27, quantifier after retraction, as the REPL replies: after every announcement
    /// (any policy, with confidences so that revisions retract) and every retraction, the
    /// reply's `sigma_inconsistent` is what `consistent` says next, and both agree with the
    /// first-order oracle on the Σ the REPL lists.
    #[test]
    fn sigma_inconsistent_is_what_consistent_says_after_every_step(
        steps in proptest::collection::vec(
            (formula(), 0usize..6, prop::sample::select(&[0.3, 0.6, 0.9][..]), any::<bool>()),
            1..10,
        ),
    ) {
        use doxascope::logic::oracle::{self, fo};
        let policies = ["greedy", "greedy-paper", "recency", "confidence", "reject", "flag"];
        let mut r = Repl::new(Box::new(EmptyTrace));
        for (f, p, c, retract) in &steps {
            run(&mut r, &format!("policy {}", policies[*p]));
            let reply = if *retract {
                let sigma = run(&mut r, "sigma");
                let Some(first) = sigma["beliefs"].as_array().and_then(|b| b.first()).cloned() else {
                    continue;
                };
                run(&mut r, &format!("retract {}", first["formula"].as_str().unwrap()));
                None
            } else {
                Some(run(&mut r, &format!("announce {f} @{c}")))
            };
            let consistent = run(&mut r, "consistent")["consistent"].as_bool().unwrap();
            if let Some(a) = reply.filter(|a| a["ok"] == true) {
                prop_assert_eq!(&a["sigma_inconsistent"], &Value::Bool(!consistent), "{}", a);
            }
            let sigma = run(&mut r, "sigma");
            let fs: Vec<doxascope::logic::formula::Formula> = sigma["beliefs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| doxascope::logic::parse::parse(b["formula"].as_str().unwrap()).unwrap())
                .collect();
            let refs: Vec<&doxascope::logic::formula::Formula> = fs.iter().collect();
            if fo::atom_count(&refs, None) <= 14.min(oracle::MAX_ATOMS) {
                prop_assert_eq!(consistent, fo::consistent(&refs), "{:?}", fs);
            }
        }
    }
}
