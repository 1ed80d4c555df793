//! `doxascope export` end to end: every format on the samples, exit codes.

use std::path::PathBuf;
use std::process::{Command, Output};

use doxascope::logic::parse::parse;
use doxascope::model::{Model, RecomputeOptions};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(name)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .arg("export")
        .args(args)
        .output()
        .expect("binary runs")
}

fn export(name: &str, at: u32, format: &str) -> String {
    let p = sample(name);
    let out = run(&[
        p.to_str().unwrap(),
        "--at",
        &at.to_string(),
        "--format",
        format,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Satisfiability of a DIMACS text, by varisat.
fn dimacs_sat(text: &str) -> bool {
    let mut s = varisat::Solver::new();
    s.add_dimacs_cnf(text.as_bytes()).expect("valid DIMACS");
    s.solve().expect("solves")
}

/// Whether the engine finds Σ at `t` consistent: the recomputation's verdict after the last
/// announcement at or before `t`, or after the last revision settled by then.
fn engine_consistent(name: &str, t: u32) -> bool {
    let m = Model::load(&[sample(name)]).unwrap();
    let r = m.recompute(name, &RecomputeOptions::default()).unwrap();
    let mut last: Option<(u32, bool)> = None;
    for a in r.announces.iter().filter(|a| a.step <= t) {
        last = Some((a.step, a.result.as_ref().unwrap().consistent_after));
    }
    for rv in r.revisions.iter().filter(|x| x.settled_at <= t) {
        if last.is_none_or(|(s, _)| s <= rv.settled_at) {
            last = Some((rv.settled_at, rv.after.as_ref().unwrap().0));
        }
    }
    last.is_none_or(|(_, c)| c)
}

#[test]
fn dimacs_resolved_by_varisat_agrees_with_the_engine() {
    let cases: &[(&str, &[u32])] = &[
        ("treasure-hunt.jsonl", &[0, 5, 11, 14, 15, 17]),
        (
            "greedysat-stress.jsonl",
            &[10, 22, 23, 24, 25, 34, 35, 36, 38],
        ),
        ("alice-bob-norms.jsonl", &[6, 11, 19, 25]),
        ("dns-troubleshooting.jsonl", &[7, 25]),
    ];
    let mut seen = (false, false);
    for (name, steps) in cases {
        for &t in *steps {
            let text = export(name, t, "dimacs");
            let sat = dimacs_sat(&text);
            assert_eq!(sat, engine_consistent(name, t), "{name} at {t}:\n{text}");
            if sat {
                seen.0 = true;
            } else {
                seen.1 = true;
            }
        }
    }
    assert!(
        seen.0 && seen.1,
        "both satisfiable and unsatisfiable cases exercised"
    );
}

#[test]
fn dimacs_header_maps_atoms_and_beliefs() {
    let text = export("treasure-hunt.jsonl", 15, "dimacs");
    assert!(text.starts_with("c doxascope export: session treasure-hunt.jsonl, step 15"));
    assert!(
        text.lines()
            .any(|l| l.starts_with("c atom ") && l.ends_with(" treasure_in_a"))
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("c atom ") && l.ends_with(" treasure_in_b"))
    );
    for id in ["t1-domain", "t2-map-b", "t3-not-a", "t5-user-a"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("c belief ") && l.ends_with(&format!(" {id}"))),
            "{id}"
        );
    }
    let p = text.lines().find(|l| l.starts_with("p cnf ")).unwrap();
    let n: Vec<usize> = p[6..]
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let clauses = text
        .lines()
        .skip_while(|l| !l.starts_with("p cnf"))
        .skip(1)
        .count();
    assert_eq!(n[1], clauses);
}

#[test]
fn prompt_is_the_export_prompt_list() {
    let text = export("dns-troubleshooting.jsonl", 25, "prompt");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7);
    assert_eq!(
        lines[0],
        "- ¬Reachable(user, example_com) (source=user, p=0.90)"
    );
    assert_eq!(
        lines[3],
        "- DNSFail(example_com) (source=tool:ping_test, p=0.85)"
    );
    let body = lines[6]
        .strip_prefix("- ")
        .and_then(|l| l.strip_suffix(" (source=user, p=0.90)"))
        .unwrap();
    assert_eq!(
        parse(body).unwrap(),
        parse("ReachableByIp(user) ∧ ¬ResolvesNames(user)").unwrap()
    );
    // Step 0: nothing.
    assert_eq!(export("dns-troubleshooting.jsonl", 0, "prompt"), "");
}

#[test]
fn smtlib_has_one_assert_per_belief_and_declares_atoms() {
    let text = export("alice-bob-norms.jsonl", 19, "smtlib");
    let asserts = text.lines().filter(|l| l.starts_with("(assert ")).count();
    assert_eq!(asserts, 9, "{text}");
    assert!(text.contains("(declare-const |Older(alice, carol)| Bool)"));
    assert!(text.contains("; r2-older-trans (rule, source="));
    assert!(text.trim_end().ends_with("(check-sat)"));
    // Balanced parentheses outside quoted symbols and comments.
    let mut depth = 0i64;
    for line in text.lines().filter(|l| !l.starts_with(';')) {
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '|' => quoted = !quoted,
                '(' if !quoted => depth += 1,
                ')' if !quoted => depth -= 1,
                _ => {}
            }
            assert!(depth >= 0);
        }
    }
    assert_eq!(depth, 0);
}

#[test]
fn json_lists_the_beliefs_with_provenance() {
    let text = export("greedysat-stress.jsonl", 25, "json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["step"], 25);
    let ids: Vec<&str> = v["beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["r1", "r2", "r3", "r4", "r5", "b1", "b4", "b5", "b6"],
        "b3 retracted at 25"
    );
    let b6 = &v["beliefs"][8];
    assert_eq!(b6["formula"], "C");
    assert_eq!(b6["source"], "llm");
    assert_eq!(b6["step"], 23);
    assert_eq!(b6["origin"]["line"], 23);
}

#[test]
fn bad_input_exits_2() {
    let p = sample("treasure-hunt.jsonl");
    let p = p.to_str().unwrap();
    assert_eq!(
        run(&["/nonexistent/x.jsonl", "--format", "json"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(run(&[p, "--format", "yaml"]).status.code(), Some(2));
    assert_eq!(run(&[p]).status.code(), Some(2));
    let past = run(&[p, "--at", "24", "--format", "json"]);
    assert_eq!(past.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&past.stderr).contains("past the end"));
    assert_eq!(
        run(&[p, "--at", "-1", "--format", "json"]).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&[p, "--format", "json", "--session", "nope"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn several_sessions_need_session() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("two.jsonl");
    std::fs::write(
        &f,
        "{\"kind\":\"announce\",\"session\":\"a\",\"id\":\"x\",\"formula\":\"p\"}\n\
         {\"kind\":\"announce\",\"session\":\"b\",\"id\":\"y\",\"formula\":\"q -> r\",\"source\":\"user\",\"confidence\":0.5}\n\
         not json\n",
    )
    .unwrap();
    let f = f.to_str().unwrap();
    let out = run(&[f, "--format", "prompt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--session"));
    let out = run(&[f, "--format", "prompt", "--session", "b"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "- q → r (source=user, p=0.50)\n"
    );
    // The bad line is reported, not fatal.
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 line(s)"));
}

/// The beliefs of Σ at a step whose printed formula mentions one of `words` as a whole word:
/// an independent reading of seed 001's relevance filter (symbols shared with the question).
fn mentioning(name: &str, at: u32, words: &[&str]) -> Vec<String> {
    let m = Model::load(&[sample(name)]).unwrap();
    let tl = &m.timelines()[0];
    tl.sigma_at(m.log(), at)
        .iter()
        .filter(|b| b.role() != doxascope::trace::event::Role::Norm)
        .filter_map(|b| b.formula().ok().map(|f| f.to_string()))
        .filter(|text| {
            text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| words.contains(&w))
        })
        .collect()
}

fn bullets(section: &str) -> Vec<String> {
    section
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .filter(|l| *l != "none")
        .map(|l| l.rsplit_once(" (source=").map_or(l, |x| x.0).to_string())
        .collect()
}

#[test]
fn agent_prompt_is_seed_001s_export_prompt() {
    let p = sample("alice-bob-norms.jsonl");
    let out = run(&[
        p.to_str().unwrap(),
        "--format",
        "agent-prompt",
        "--query",
        "Older(alice, carol)",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    // The tag instructions, as the paper words them.
    for tag in [
        "state it with an ASSERT tag",
        "use ANSWER tag",
        "you may use QUERY",
    ] {
        assert!(text.contains(tag), "{text}");
    }
    let (head, facts) = text
        .split_once("Known facts and rules")
        .expect("facts section");
    // The norm is listed even though the question does not mention it.
    assert_eq!(
        bullets(head.split_once("Norms:").unwrap().1),
        ["∀x. ¬RevealAddress(x)"]
    );
    // Exactly the beliefs sharing a predicate or constant with the question.
    assert_eq!(
        bullets(facts),
        mentioning("alice-bob-norms.jsonl", 25, &["Older", "alice", "carol"])
    );
    assert!(!facts.contains("Mother(x, y)"), "{facts}");
    assert!(facts.contains("(7 of 8;"), "{facts}");
    // A question about nothing in Σ still lists the norm, and says no fact is relevant.
    let none = run(&[
        p.to_str().unwrap(),
        "--format",
        "agent-prompt",
        "--query",
        "rain",
    ]);
    let none = String::from_utf8(none.stdout).unwrap();
    assert!(
        none.contains("RevealAddress") && none.contains("(0 of 8;"),
        "{none}"
    );
    // Without a question, all of Σ.
    let all = export("alice-bob-norms.jsonl", 12, "agent-prompt");
    let (_, facts) = all.split_once("Known facts and rules").unwrap();
    assert_eq!(bullets(facts).len(), 6, "{all}");
}

#[test]
fn agent_prompt_query_errors_exit_2() {
    let p = sample("alice-bob-norms.jsonl");
    let bad = run(&[
        p.to_str().unwrap(),
        "--format",
        "agent-prompt",
        "--query",
        "Older(alice,",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("column"));
    let wrong = run(&[p.to_str().unwrap(), "--format", "prompt", "--query", "p"]);
    assert_eq!(wrong.status.code(), Some(2));
}

/// The REPL's `prompt` is the same text as `export --format agent-prompt` at that step.
#[test]
fn repl_prompt_equals_the_export() {
    let p = sample("alice-bob-norms.jsonl");
    for (at, q) in [(25u32, Some("Older(alice, carol)")), (12, None)] {
        let mut args = vec![
            p.to_str().unwrap().to_string(),
            "--at".into(),
            at.to_string(),
            "--format".into(),
            "agent-prompt".into(),
        ];
        if let Some(q) = q {
            args.extend(["--query".to_string(), q.to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let exported = String::from_utf8(run(&args).stdout).unwrap();
        let input = format!("at {at}\nprompt {}\n", q.unwrap_or(""));
        let mut child = Command::new(env!("CARGO_BIN_EXE_doxascope"))
            .args(["repl", "--json", p.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let last = String::from_utf8(out.stdout).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(last.lines().last().unwrap()).expect("json");
        assert_eq!(v["prompt"].as_str().unwrap(), exported, "at {at}");
    }
}

/// `--format prompt` follows seed 000's `KnowledgeBase`: `facts` is a dictionary, so an
/// update overwrites a fact in place (its position kept, its values new), while a fact that
/// was retracted and comes back is a new entry at the end.
#[test]
fn prompt_lists_sigma_in_knowledge_base_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kb.jsonl");
    std::fs::write(
        &path,
        [
            r#"{"kind":"announce","id":"b1","formula":"a","source":"user","confidence":0.9}"#,
            r#"{"kind":"announce","id":"b2","formula":"b","source":"user"}"#,
            r#"{"kind":"announce","id":"b3","formula":"c","source":"tool"}"#,
            r#"{"kind":"announce","id":"b1","formula":"!a","source":"tool","confidence":0.5}"#,
            r#"{"kind":"retract","target":"b2"}"#,
            r#"{"kind":"announce","id":"b2","formula":"b","source":"user"}"#,
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let out = run(&[path.to_str().unwrap(), "--format", "prompt"]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "- ¬a (source=tool, p=0.50)\n- c (source=tool, p=1.00)\n- b (source=user, p=1.00)\n"
    );
}

/// Issue 13 item 7, headless: `export --format json` carries seed 000's inconsistency log up
/// to the step, each contradiction with the conflict it met and what resolved it.
#[test]
fn json_carries_the_inconsistency_log_up_to_the_step() {
    let at = |step: u32| -> serde_json::Value {
        serde_json::from_str(&export("treasure-hunt.jsonl", step, "json")).expect("json")
    };
    assert_eq!(at(14)["inconsistencies"], serde_json::json!([]));
    let open = &at(17)["inconsistencies"][0];
    assert_eq!(open["step"], 15);
    assert_eq!(open["id"], "t5-user-a");
    assert_eq!(open["consistent_before"], true);
    assert!(open["resolved"].is_null(), "{open}");
    let mut conflict: Vec<&str> = open["conflict"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    conflict.sort_unstable();
    assert!(
        conflict == ["t3-not-a", "t5-user-a"] || conflict == ["t1-domain", "t2-map-b", "t5-user-a"],
        "{conflict:?}"
    );
    let done = &at(23)["inconsistencies"][0]["resolved"];
    assert_eq!(done["step"], 21);
    assert_eq!(done["by"], "revision");
    assert_eq!(done["policy"], "confidence");
    assert_eq!(
        done["retracted"],
        serde_json::json!(["t2-map-b", "t3-not-a"])
    );
    // The stress dialogue: two contradictions, each resolved by its GreedySAT revision.
    let g: serde_json::Value =
        serde_json::from_str(&export("greedysat-stress.jsonl", 38, "json")).unwrap();
    let log = g["inconsistencies"].as_array().unwrap();
    let got: Vec<(u64, u64, &str)> = log
        .iter()
        .map(|e| {
            (
                e["step"].as_u64().unwrap(),
                e["resolved"]["step"].as_u64().unwrap(),
                e["resolved"]["retracted"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [(23, 25, "b3"), (34, 36, "b4")]);
}
