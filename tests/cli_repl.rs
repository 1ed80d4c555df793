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

/// Seed 004's ground beliefs are members of Σ as value atoms: listed, queried, explained,
/// and a key's life shown by `history KEY`.
#[test]
fn value_atoms_of_ground_beliefs_are_queried() {
    let input = concat!(
        "sigma\n",
        "entails numerator = \"356400\" km\n",
        "entails numerator = \"356401\" km\n",
        "entails numerator = 356400 km\n",
        "why denominator = \"20.9\" \"km/h\"\n",
        "whynot final_answer = \"18\" \"thousand hours\"\n",
        "entails ~(rounded_result = \"17000\" hours & final_answer = \"17\" \"thousand hours\")\n",
        "history numerator\n",
    );
    let (code, out, _) = repl(&["sample-traces/kipchoge-bdi.jsonl", "--json"], input);
    assert_eq!(code, 0);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let ids: Vec<&str> = lines[0]["beliefs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 9, "{ids:?}");
    assert!(ids.contains(&"numerator") && ids.contains(&"final_answer"));
    assert_eq!(lines[1]["result"], "entailed");
    // Another value of the key: contradicted (one value per key).
    assert_eq!(lines[2]["result"], "contradicted");
    // The number 356400 is not the string "356400".
    assert_eq!(lines[3]["result"], "contradicted");
    let support: Vec<&str> = lines[4]["supports"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(support, ["denominator"]);
    // Not entailed: the countermodel shows the value the key holds, which rules it out.
    assert_eq!(
        lines[5]["countermodel"]["final_answer = \"18\" \"thousand hours\""], false,
        "{}",
        lines[5]
    );
    assert_eq!(
        lines[5]["countermodel"]["final_answer = \"17\" \"thousand hours\""], true,
        "{}",
        lines[5]
    );
    assert_eq!(lines[6]["result"], "contradicted");
    // history KEY: both writes of numerator, the second re-writing the same value.
    let key = &lines[7]["key"];
    assert_eq!(key["key"], "numerator");
    let values = key["values"].as_array().unwrap();
    assert_eq!(values.len(), 2, "{key}");
    assert_eq!(values[0]["step"], 16);
    assert_eq!(values[0]["ended"]["by"], "reannounced");
    assert!(
        values[1]["writer"]
            .as_str()
            .unwrap()
            .starts_with("step S2 of plan-2: Minimum perigee"),
        "{key}"
    );
}

/// An overwrite is a revision: the text of `history KEY` shows the old value overwritten at
/// the writing step, and who wrote each.
#[test]
fn history_of_a_key_shows_its_values_and_writers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kv.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"kind":"belief","name":"seat","value":"aisle","source":"memory:create"}"#,
            "\n",
            r#"{"kind":"step","plan":"p","step":"S1","status":"dispatched","inputs":{"seat":"aisle"}}"#,
            "\n",
            r#"{"kind":"belief","name":"seat","value":"window","source":"memory:update"}"#,
            "\n",
        ),
    )
    .unwrap();
    let p = path.to_string_lossy().into_owned();
    let (code, out, _) = repl(&[&p], "history seat\n");
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "values of seat:\n    step     1  seat = \"aisle\" (memory:create)  ← belief; \
             overwritten at step 3\n    step     3  seat = \"window\" (memory:update)  ← belief\n  \
             read by: step 2 (S1 of p)"
        ),
        "{out}"
    );
    let (_, out, _) = repl(
        &[&p, "--json"],
        "entails seat = \"aisle\"\nat 2\nentails seat = \"aisle\"\n",
    );
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["result"], "contradicted");
    assert_eq!(lines[2]["result"], "entailed");
}
