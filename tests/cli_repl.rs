//! `doxascope repl` end to end: the built binary, a sample trace, commands on stdin.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

fn repl(args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .arg("repl")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn json_mode_answers_every_line_with_one_object() {
    let input = "entails treasure_in_b\n\nconsistent\nat 10\nconsistent\ncheck treasure_in_a\n\
                 why treasure_in_b\nwhynot treasure_in_a\nannounce treasure_in_a @0.5\n\
                 announce !treasure_in_b\nentails (\nnope\n";
    let (code, out, _) = repl(
        &["sample-traces/treasure-hunt.jsonl", "--json", "--at", "17"],
        input,
    );
    assert_eq!(code, 0);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), input.lines().count());
    // At step 17, before the revision, the user's treasure_in_a contradicts Σ (seed 000
    // Table 1, step 5).
    assert_eq!(lines[0]["command"], "entails");
    assert_eq!(lines[1]["ok"], false);
    assert_eq!(lines[2]["consistent"], false);
    let conflict: Vec<&str> = lines[2]["conflict"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(conflict.contains(&"t5-user-a"), "{conflict:?}");
    // Before step 5 Σ is consistent and entails treasure_in_b through the map.
    assert_eq!(lines[3]["step"], 10);
    assert_eq!(lines[4]["consistent"], true);
    assert_eq!(lines[5]["outcome"], "contradiction");
    let support = &lines[6]["supports"][0];
    assert_eq!(support[0]["id"], "t2-map-b");
    assert_eq!(support[0]["source"], "tool:ask_map");
    assert!(lines[7]["countermodel"].is_object());
    // A contradicting announcement under greedy: the oldest single retraction is applied.
    assert_eq!(lines[8]["outcome"], "contradiction");
    assert_eq!(lines[8]["applied"], true);
    assert!(!lines[8]["retracted"].as_array().unwrap().is_empty());
    assert_eq!(lines[10]["ok"], false);
    assert_eq!(lines[10]["error"]["column"], 10);
    assert_eq!(lines[11]["ok"], false);
}

#[test]
fn text_mode_and_start_step() {
    let (code, out, _) = repl(
        &["sample-traces/treasure-hunt.jsonl", "--at", "10"],
        "# a comment\nconsistent\nsigma\n",
    );
    assert_eq!(code, 0);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("consistent"));
    assert!(out.contains("t2-map-b"));
    assert!(
        !out.contains("t5-user-a"),
        "step 10 is before the user's claim"
    );
}

#[test]
fn unusable_input_exits_2() {
    let (code, _, err) = repl(&["no-such-file.jsonl"], "");
    assert_eq!(code, 2);
    assert!(err.contains("no-such-file.jsonl"));
    let (code, _, err) = repl(&["sample-traces/treasure-hunt.jsonl", "--at", "999"], "");
    assert_eq!(code, 2);
    assert!(err.contains("past the end"), "{err}");
    let (code, _, _) = repl(&["--policy", "lazy"], "");
    assert_eq!(code, 2);
}

#[test]
fn no_trace_starts_from_an_empty_sigma() {
    let (code, out, _) = repl(
        &["--json", "--policy", "reject"],
        "announce p -> q as rule\nannounce p\nannounce !q\nentails q\n",
    );
    assert_eq!(code, 0);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[2]["outcome"], "contradiction");
    assert_eq!(lines[2]["applied"], false);
    assert_eq!(lines[3]["result"], "entailed");
}

/// `diff` shows how ground beliefs (memory) changed between two steps: rewritten,
/// retracted, written; Σ's part is unchanged.
#[test]
fn diff_shows_memory_edits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mem.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"kind":"belief","name":"human","value":"First name: Chad"}"#,
            "\n",
            r#"{"kind":"belief","name":"persona","value":"I am Sam"}"#,
            "\n",
            r#"{"kind":"retract","target":"human","reason":"core_memory_replace","by":"agent"}"#,
            "\n",
            r#"{"kind":"belief","name":"human","value":"First name: Sarah"}"#,
            "\n",
            r#"{"kind":"retract","target":"persona","by":"agent"}"#,
            "\n",
            r#"{"kind":"belief","name":"task","value":"book a flight"}"#,
            "\n",
        ),
    )
    .unwrap();
    let p = path.to_string_lossy().into_owned();
    let (code, out, _) = repl(&[&p], "diff 2 6\ndiff 2 2\n");
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "from step 2 to step 6:\n\
         ~ human: First name: Chad → First name: Sarah\n\
         - persona (was I am Sam)\n\
         + task = book a flight\n\
         from step 2 to step 2: no change\n"
    );
    let (_, out, _) = repl(&[&p, "--json"], "diff 3 4\n");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        v["ground"],
        serde_json::json!([{"name": "human", "before": null, "after": "First name: Sarah"}])
    );
}
