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
    let past = run(&[p, "--at", "18", "--format", "json"]);
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
