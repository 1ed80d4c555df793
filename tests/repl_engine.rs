//! Scripted REPL sessions over an in-memory trace: every command, its JSON shape (contract
//! §4), the hand-issued layer as a fork, and every error case.

use doxascope::logic::engine::Role;
use doxascope::logic::parse::parse;
use doxascope::repl::{EmptyTrace, Repl, TraceBelief, TraceSigma};
use serde_json::Value;

/// A trace whose beliefs are announced at given steps and retracted at others.
struct Scripted {
    beliefs: Vec<(TraceBelief, Option<u64>)>,
    last: u64,
}

impl TraceSigma for Scripted {
    fn session(&self) -> &str {
        "scripted"
    }
    fn last_step(&self) -> u64 {
        self.last
    }
    fn sigma_at(&self, step: u64) -> Vec<TraceBelief> {
        self.beliefs
            .iter()
            .filter(|(b, gone)| b.step <= step && gone.is_none_or(|g| g > step))
            .map(|(b, _)| b.clone())
            .collect()
    }
}

fn belief(id: &str, f: &str, step: u64, role: Role, source: &str) -> TraceBelief {
    TraceBelief {
        id: id.into(),
        formula: parse(f).unwrap(),
        role,
        source: source.into(),
        confidence: 1.0,
        step,
        because: Vec::new(),
    }
}

/// rain → wet (rule, step 1), rain (step 2), sunny (step 3, retracted at step 5), ¬cold (4).
fn weather() -> Repl {
    Repl::new(Box::new(Scripted {
        beliefs: vec![
            (belief("r1", "rain -> wet", 1, Role::Rule, "kb"), None),
            (belief("f1", "rain", 2, Role::Fact, "tool:sensor"), None),
            (belief("f2", "sunny", 3, Role::Fact, "user"), Some(5)),
            (belief("f3", "!cold", 4, Role::Fact, "user"), None),
        ],
        last: 6,
    }))
}

fn json(repl: &mut Repl, line: &str) -> Value {
    match repl.run_line(line) {
        Ok(r) => {
            let cmd = line.split_whitespace().next().unwrap_or("");
            r.to_json(cmd)
        }
        Err(e) => e.to_json(),
    }
}

#[test]
fn queries_at_the_last_step() {
    let mut r = weather();
    assert_eq!(json(&mut r, "check wet")["outcome"], "entailed");
    assert_eq!(json(&mut r, "check !rain")["outcome"], "contradiction");
    assert_eq!(json(&mut r, "check snow")["outcome"], "newinfo");
    let e = json(&mut r, "entails wet");
    assert_eq!(e["ok"], true);
    assert_eq!(e["command"], "entails");
    assert_eq!(e["result"], "entailed");
    assert!(e["degree"].is_null());
    assert_eq!(json(&mut r, "entails !wet")["result"], "contradicted");
    assert_eq!(json(&mut r, "entails sunny")["result"], "unknown");
}

#[test]
fn why_names_the_minimal_support_with_provenance() {
    let mut r = weather();
    let w = json(&mut r, "why wet");
    assert_eq!(w["complete"], true);
    let supports = w["supports"].as_array().unwrap();
    assert_eq!(supports.len(), 1);
    let mut ids: Vec<&str> = supports[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, ["f1", "r1"]);
    let f1 = supports[0]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "f1")
        .unwrap();
    assert_eq!(f1["step"], 2);
    assert_eq!(f1["source"], "tool:sensor");
    assert_eq!(f1["formula"], "rain");
    // Nothing supports what is not entailed.
    assert_eq!(json(&mut r, "why snow")["supports"], serde_json::json!([]));
}

#[test]
fn whynot_gives_a_countermodel_of_sigma_and_not_phi() {
    let mut r = weather();
    let w = json(&mut r, "whynot rain & snow");
    let m = w["countermodel"].as_object().unwrap();
    // Σ forces rain, so snow must be false in any countermodel of rain ∧ snow.
    assert_eq!(m["snow"], false);
    assert_eq!(m["rain"], true);
    assert!(json(&mut r, "whynot wet")["countermodel"].is_null());
}

#[test]
fn time_travel_changes_sigma_and_diff_reports_it() {
    let mut r = weather();
    assert_eq!(json(&mut r, "entails sunny")["result"], "unknown");
    let at = json(&mut r, "at 4");
    assert_eq!(at["step"], 4);
    assert_eq!(at["beliefs"], 4);
    assert_eq!(json(&mut r, "entails sunny")["result"], "entailed");
    assert_eq!(json(&mut r, "at 1")["beliefs"], 1);
    assert_eq!(json(&mut r, "entails wet")["result"], "unknown");
    let d = json(&mut r, "diff 2 6");
    let added: Vec<&str> = d["added"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    let removed: Vec<&str> = d["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(added, ["f3"]);
    assert!(removed.is_empty());
    let d = json(&mut r, "diff 4 5");
    assert_eq!(d["removed"][0]["id"], "f2");
}

#[test]
fn hand_layer_is_a_fork_replayed_after_time_travel() {
    let mut r = weather();
    let a = json(&mut r, "announce snow @0.7 from me");
    assert_eq!(a["outcome"], "newinfo");
    assert_eq!(a["applied"], true);
    assert_eq!(a["retracted"], serde_json::json!([]));
    assert_eq!(json(&mut r, "entails snow")["result"], "entailed");
    // Graded Σ now: the degree is reported.
    let e = json(&mut r, "entails snow");
    assert!((e["degree"].as_f64().unwrap() - 0.7).abs() < 1e-9, "{e}");
    // Moving in time keeps the layer on top of the new Σ.
    json(&mut r, "at 3");
    assert_eq!(json(&mut r, "entails snow")["result"], "entailed");
    let sigma = json(&mut r, "sigma");
    let layers: Vec<(&str, &str)> = sigma["beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap(), m["layer"].as_str().unwrap()))
        .collect();
    assert!(layers.contains(&("snow", "hand")));
    assert!(layers.contains(&("f2", "trace")));
    // undo drops it; reset clears the rest.
    assert_eq!(json(&mut r, "undo")["undone"], "announce snow");
    assert_eq!(json(&mut r, "entails snow")["result"], "unknown");
    assert_eq!(json(&mut r, "undo")["ok"], false);
    json(&mut r, "announce hail");
    json(&mut r, "retract f2");
    assert_eq!(json(&mut r, "entails sunny")["result"], "unknown");
    assert_eq!(json(&mut r, "reset")["dropped"], 2);
    assert_eq!(json(&mut r, "entails sunny")["result"], "entailed");
}

#[test]
fn contradictions_are_resolved_by_the_policy() {
    let mut r = weather();
    // greedy: the oldest single commitment that restores consistency is rain (f1);
    // the rule is never retracted.
    let a = json(&mut r, "announce !wet");
    assert_eq!(a["outcome"], "contradiction");
    assert_eq!(a["applied"], true);
    assert_eq!(a["retracted"], serde_json::json!(["f1"]));
    assert_eq!(json(&mut r, "consistent")["consistent"], true);
    json(&mut r, "undo");
    assert_eq!(json(&mut r, "policy reject")["policy"], "reject");
    let a = json(&mut r, "announce !wet");
    assert_eq!(a["applied"], false);
    assert_eq!(json(&mut r, "entails wet")["result"], "entailed");
    json(&mut r, "policy flag");
    let a = json(&mut r, "announce !wet");
    assert_eq!(a["applied"], true);
    let c = json(&mut r, "consistent");
    assert_eq!(c["consistent"], false);
    let mut ids: Vec<&str> = c["conflict"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, ["f1", "r1", "~wet"]);
}

#[test]
fn save_writes_sigma_and_the_layer_as_a_self_contained_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hand.jsonl");
    let mut r = weather();
    json(&mut r, "announce snow as assumption from me");
    json(&mut r, "retract f3");
    let s = json(&mut r, &format!("save {}", path.display()));
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(s["events"], lines.len());
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    // A note, Σ at step 6 (f2 left at step 5), the gate and the announcement, the retraction.
    assert_eq!(
        kinds,
        [
            "log", "announce", "announce", "announce", "verify", "announce", "retract"
        ]
    );
    let ids: Vec<&str> = lines[1..4]
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["r1", "f1", "f3"]);
    assert_eq!(lines[1]["role"], "rule");
    assert_eq!(lines[4]["outcome"], "newinfo");
    assert_eq!(lines[5]["formula"], "snow");
    assert_eq!(lines[5]["role"], "assumption");
    assert_eq!(lines[5]["source"], "me");
    assert_eq!(lines[6]["target"], "f3");
    assert_eq!(lines[6]["by"], "user");
}

#[test]
fn errors_are_results_and_the_session_goes_on() {
    let mut r = weather();
    let cases: &[(&str, &str, Option<u64>)] = &[
        ("entails p &", "entails", Some(12)),
        ("frobnicate", "", Some(1)),
        ("why", "why", Some(4)),
        ("at 99", "at", None),
        ("at x", "at", Some(4)),
        ("diff 1", "diff", Some(6)),
        ("policy lazy", "policy", Some(8)),
        ("announce p @2", "announce", Some(12)),
        ("retract nothing_here", "retract", None),
        ("consistent please", "consistent", Some(12)),
        ("help nope", "help", Some(6)),
        ("save /nonexistent-dir/x.jsonl", "save", None),
        ("check ((p)", "check", Some(11)),
    ];
    for (line, command, column) in cases {
        let v = json(&mut r, line);
        assert_eq!(v["ok"], false, "{line}: {v}");
        assert_eq!(v["command"], *command, "{line}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        match column {
            Some(c) => assert_eq!(v["error"]["column"], *c, "{line}: {v}"),
            None => assert!(v["error"].get("column").is_none(), "{line}: {v}"),
        }
    }
    // Still usable.
    assert_eq!(json(&mut r, "entails wet")["result"], "entailed");
}

#[test]
fn quantified_rules_and_norms() {
    let mut r = Repl::new(Box::new(EmptyTrace));
    let a = json(
        &mut r,
        "announce forall x, y. Parent(x, y) -> Older(x, y) as rule from kb",
    );
    assert_eq!(a["applied"], true, "{a}");
    json(&mut r, "announce ∀x. ¬RevealAddress(x) as norm from policy");
    json(&mut r, "announce Parent(alice, bob)");
    assert_eq!(
        json(&mut r, "entails Older(alice, bob)")["result"],
        "entailed"
    );
    let a = json(&mut r, "announce RevealAddress(alice)");
    assert_eq!(a["outcome"], "contradiction");
    assert_eq!(a["applied"], false, "a norm is never retracted: {a}");
    assert!(!a["norm_violation"].as_array().unwrap().is_empty());
}

#[test]
fn text_output_is_sanitized() {
    let mut r = Repl::new(Box::new(EmptyTrace));
    // The formula language writes control characters as escapes; the decoded atom holds them.
    let reply = r.run_line(r#"announce "evil\u{1b}]0;pwned\u{7}""#).unwrap();
    let text = reply.to_text();
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(!text.contains('\u{7}'), "{text:?}");
    let e = r.run_line("entails \u{1b}[2J").unwrap_err();
    assert!(!e.to_text().contains('\u{1b}'));
}

/// Issue 27, first reproduction: a repair under `recency` must leave Σ consistent, and the
/// reply must say what `consistent` says next. `∃x. (P(x) ∧ ¬Q(x))` asks for an individual
/// that is P and not Q; its witness is one, so nothing contradicts it and nothing is
/// retracted (over the known constants b and c alone it contradicted Q(b) ∧ Q(c), recency
/// retracted Q(b), and the shrunken domain then made Σ inconsistent behind the reply's back).
#[test]
fn an_existential_gets_a_witness_and_a_repair_leaves_sigma_consistent() {
    let mut r = Repl::new(Box::new(EmptyTrace));
    json(&mut r, "policy recency");
    json(&mut r, "announce Q(b) @0.8");
    json(&mut r, "announce Q(c) @0.8");
    let a = json(&mut r, "announce (exists x. (P(x) & ~Q(x))) @0.7");
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["outcome"], "newinfo", "{a}");
    assert_eq!(a["retracted"], serde_json::json!([]), "{a}");
    assert_eq!(a["sigma_inconsistent"], false, "{a}");
    let c = json(&mut r, "consistent");
    assert_eq!(c["consistent"], true, "{c}");
    // Σ holds both Q facts and the existential; it does not say which individual.
    assert_eq!(json(&mut r, "entails P(b)")["result"], "unknown");
    assert_eq!(json(&mut r, "entails P(c)")["result"], "unknown");
    assert_eq!(
        json(&mut r, "entails exists x. (P(x) & ~Q(x))")["result"],
        "entailed"
    );
    // A universal denial is what contradicts it, and a repair then keeps Σ consistent.
    let d = json(&mut r, "announce (forall x. (P(x) -> Q(x))) @0.9");
    assert_eq!(d["outcome"], "contradiction", "{d}");
    assert_eq!(
        d["sigma_inconsistent"],
        !json(&mut r, "consistent")["consistent"].as_bool().unwrap(),
        "{d}"
    );
    assert_eq!(d["sigma_inconsistent"], false, "{d}");
}

/// Issue 27, second reproduction: Θ of a re-announcement is computed on Σ as it stood, so a
/// formula Σ holds as a rule is `entailed` when announced again as a fact, and the role
/// change is reported (text and JSON).
#[test]
fn a_re_announcement_is_entailed_and_its_role_change_reported() {
    let mut r = Repl::new(Box::new(EmptyTrace));
    json(&mut r, "policy flag");
    let first = json(&mut r, "announce (g0 | ~g2) as rule");
    assert_eq!(first["outcome"], "newinfo");
    assert_eq!(first["role_change"], Value::Null);
    let again = json(&mut r, "announce (g0 | ~g2) @0.6");
    assert_eq!(again["outcome"], "entailed", "{again}");
    assert_eq!(again["applied"], true);
    assert_eq!(
        again["role_change"],
        serde_json::json!({"from": "rule", "to": "fact"})
    );
    assert_eq!(again["sigma_inconsistent"], false);
    // The same again as a fact: nothing changes role, and Σ still holds it.
    let same = json(&mut r, "announce (g0 | ~g2) @0.6");
    assert_eq!(same["outcome"], "entailed", "{same}");
    assert_eq!(same["role_change"], Value::Null);
    // The text reply names the change.
    let mut t = Repl::new(Box::new(EmptyTrace));
    t.run_line("announce (g0 | ~g2) as rule").unwrap();
    let text = t.run_line("announce (g0 | ~g2) @0.6").unwrap().to_text();
    assert!(text.starts_with("ENTAILED: announced"), "{text}");
    assert!(text.contains("role changed: rule -> fact"), "{text}");
}
