//! `doxascope diff RUN1 RUN2` and the REPL's `diff A B`: a run diffed with itself is empty
//! under every alignment, and two runs that differ in one announcement show exactly that
//! difference and its consequences (a verdict recomputed otherwise, a final Σ gone
//! inconsistent, the extra belief contradicted by the other run).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use doxascope::model::Model;
use doxascope::model::diff::{Align, Run, diff};
use doxascope::model::recompute::RecomputeOptions;
use doxascope::repl::{ModelSigma, Repl};
use serde_json::Value;

fn samples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-traces");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("samples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    v.sort();
    v
}

fn opts() -> RecomputeOptions {
    RecomputeOptions {
        audit: None,
        ..RecomputeOptions::default()
    }
}

fn doxascope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .output()
        .expect("binary runs")
}

#[test]
fn every_sample_diffed_with_itself_is_empty_under_every_alignment() {
    for p in samples() {
        let m = Model::load(&[&p]).expect("loads");
        for tl in m.timelines() {
            let run = Run::of(&m, tl);
            for align in [Align::Step, Align::Plan, Align::Formula] {
                let d = diff(run, run, align, &opts());
                assert!(d.is_empty(), "{} by {align:?}: {d:#?}", p.display());
            }
        }
    }
    // The same through the command line: exit 0, `identical` in JSON.
    let p = samples()
        .into_iter()
        .find(|p| p.ends_with("dns-troubleshooting.jsonl"));
    let p = p.expect("dns sample");
    let p = p.to_str().unwrap();
    for align in ["step", "plan", "formula"] {
        let out = doxascope(&["diff", p, p, "--align", align, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{align}");
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(v["identical"], true);
        assert_eq!(v["align"], align);
        assert_eq!(v["only_in_a"], serde_json::json!([]));
        assert!(v["divergence"].is_null());
    }
}

const RUN_A: &[&str] = &[
    r#"{"kind":"announce","id":"r1","formula":"a -> c","role":"rule"}"#,
    r#"{"kind":"announce","id":"f1","formula":"a"}"#,
    r#"{"kind":"verify","formula":"c","outcome":"entailed"}"#,
    r#"{"kind":"announce","id":"f2","formula":"b"}"#,
    r#"{"kind":"query","formula":"b","answer":"yes"}"#,
    r#"{"kind":"verify","formula":"d","outcome":"newinfo"}"#,
    r#"{"kind":"announce","id":"f3","formula":"~d"}"#,
];

/// Run A with one more announcement (`c -> d` after step 2).
fn run_b() -> Vec<&'static str> {
    let mut b = RUN_A.to_vec();
    b.insert(
        2,
        r#"{"kind":"announce","id":"f9","formula":"c -> d","source":"tool:x"}"#,
    );
    b
}

fn write(dir: &Path, name: &str, lines: &[&str]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, lines.join("\n") + "\n").expect("write");
    p
}

#[test]
fn runs_differing_in_one_announcement_show_it_and_its_consequences() {
    let ma = Model::from_bytes("a.jsonl", (RUN_A.join("\n") + "\n").as_bytes());
    let mb = Model::from_bytes("b.jsonl", (run_b().join("\n") + "\n").as_bytes());
    let a = Run::of(&ma, &ma.timelines()[0]);
    let b = Run::of(&mb, &mb.timelines()[0]);
    for align in [Align::Step, Align::Formula] {
        let d = diff(a, b, align, &opts());
        assert!(d.only_a.is_empty(), "{align:?}");
        // Exactly the one announcement, which run A's final Σ contradicts (c and ¬d hold).
        let only: Vec<(&str, &str)> = d
            .only_b
            .iter()
            .map(|o| (o.formula.as_str(), o.other.as_str()))
            .collect();
        assert_eq!(only, [("c -> d", "contradicted")], "{align:?}");
        assert_eq!(d.only_b[0].here.status.as_str(), "inconsistent");
        // Its consequence at the end: with ¬d, run B's Σ is inconsistent, so every belief
        // both runs hold has another status there.
        let status: Vec<(&str, &str, &str)> = d
            .status
            .iter()
            .map(|s| (s.formula.as_str(), s.a.status.as_str(), s.b.status.as_str()))
            .collect();
        assert_eq!(
            status,
            [
                ("a", "entailed", "inconsistent"),
                ("a -> c", "entailed", "inconsistent"),
                ("b", "entailed", "inconsistent"),
                ("~d", "entailed", "inconsistent"),
            ],
            "{align:?}"
        );
        // Its consequence midway: `verify d` is recomputed entailed in B; the claims agree
        // and nothing else differs.
        assert_eq!(d.verdicts.len(), 1, "{:#?}", d.verdicts);
        let v = &d.verdicts[0];
        assert_eq!((v.kind, v.formula.as_str()), ("verify", "d"));
        let (va, vb) = (v.a.as_ref().unwrap(), v.b.as_ref().unwrap());
        assert_eq!(va.claimed, vb.claimed);
        assert_eq!(va.recomputed.as_deref(), Ok("newinfo"));
        assert_eq!(vb.recomputed.as_deref(), Ok("entailed"));
        let div = d.divergence.as_ref().expect("Σ diverges");
        assert_eq!(div.only_b, ["c -> d"]);
        assert!(div.only_a.is_empty());
        match align {
            // Step 3 is the extra announcement in B and a verify in A.
            Align::Step => assert_eq!((div.a, div.b), (3, 3)),
            // The next aligned change (f2) comes after it; B's change at step 3 is named.
            _ => {
                assert_eq!((div.a, div.b), (4, 5));
                assert_eq!(div.changes_b, [3, 5]);
                assert_eq!(div.changes_a, [4]);
            }
        }
    }
    // The command line: exit 1, the same in JSON.
    let dir = tempfile::tempdir().expect("tmp");
    let pa = write(dir.path(), "a.jsonl", RUN_A);
    let pb = write(dir.path(), "b.jsonl", &run_b());
    let out = doxascope(&[
        "diff",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
        "--align",
        "formula",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["identical"], false);
    assert_eq!(v["only_in_b"][0]["formula"], "c -> d");
    assert_eq!(v["only_in_b"][0]["id"], "f9");
    assert_eq!(v["only_in_b"][0]["step"], 3);
    assert_eq!(v["verdicts_differ"][0]["b"]["recomputed"], "entailed");
    assert_eq!(v["divergence"]["changes_b"], serde_json::json!([3, 5]));
    let text = doxascope(&["diff", pa.to_str().unwrap(), pb.to_str().unwrap()]);
    assert_eq!(text.status.code(), Some(1));
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("beliefs only in"), "{text}");
    assert!(text.contains("first divergence of Σ: step 3"), "{text}");
    // Unusable input: exit 2.
    let bad = doxascope(&["diff", pa.to_str().unwrap(), "/nonexistent/x.jsonl"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Plan alignment pairs the steps right after the same plan step finished, even when the
/// runs reach it at different steps.
#[test]
fn plan_alignment_pairs_finished_plan_steps() {
    let plan = r#"{"kind":"plan","id":"pl","steps":[{"id":"s1","kind":"fetch","deps":[]},{"id":"s2","kind":"compute","deps":["s1"]}]}"#;
    let a = [
        plan,
        r#"{"kind":"step","plan":"pl","step":"s1","status":"done"}"#,
        r#"{"kind":"announce","id":"x","formula":"x"}"#,
        r#"{"kind":"step","plan":"pl","step":"s2","status":"done"}"#,
    ];
    let b = [
        plan,
        r#"{"kind":"log","level":"info","message":"thinking"}"#,
        r#"{"kind":"step","plan":"pl","step":"s1","status":"done"}"#,
        r#"{"kind":"announce","id":"x","formula":"x"}"#,
        r#"{"kind":"step","plan":"pl","step":"s2","status":"done"}"#,
    ];
    let ma = Model::from_bytes("a.jsonl", (a.join("\n") + "\n").as_bytes());
    let mb = Model::from_bytes("b.jsonl", (b.join("\n") + "\n").as_bytes());
    let ra = Run::of(&ma, &ma.timelines()[0]);
    let rb = Run::of(&mb, &mb.timelines()[0]);
    let d = diff(ra, rb, Align::Plan, &opts());
    assert_eq!(d.pairs, [(0, 0), (2, 3), (4, 5)]);
    assert!(d.is_empty(), "{d:#?}");
    // By step, the same runs diverge (the log shifted everything).
    let d = diff(ra, rb, Align::Step, &opts());
    assert_eq!(d.divergence.map(|v| (v.a, v.b)), Some((3, 3)));
}

/// The REPL's `diff A B` within one session: added, removed (with how each left), a belief
/// superseded under the same id, Σ's consistency at both ends, and what still follows.
#[test]
fn repl_diff_between_steps_is_complete() {
    let lines = [
        r#"{"kind":"announce","id":"r","formula":"p -> q","role":"rule"}"#,
        r#"{"kind":"announce","id":"f","formula":"p"}"#,
        r#"{"kind":"announce","id":"g","formula":"q"}"#,
        r#"{"kind":"announce","id":"h","formula":"s"}"#,
        r#"{"kind":"revise","trigger":"h","retracted":["g"],"policy":"greedy"}"#,
        r#"{"kind":"retract","target":"g","by":"revision","reason":"tidy"}"#,
        r#"{"kind":"announce","id":"h","formula":"~s"}"#,
        r#"{"kind":"announce","id":"k","formula":"~q"}"#,
    ];
    let m = Model::from_bytes("d.jsonl", (lines.join("\n") + "\n").as_bytes());
    let mut r = Repl::new(Box::new(ModelSigma::new(std::sync::Arc::new(m), "d.jsonl")));
    let d = r.run_line("diff 4 8").expect("diff").to_json("diff");
    let ids = |k: &str| -> Vec<String> {
        d[k].as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids("added"), ["k"]);
    assert_eq!(ids("removed"), ["g"]);
    // g left by the revision at step 6, with its reason; Σ at 8 still entails q? No: ¬q is
    // held, so Σ is inconsistent there.
    assert_eq!(d["removed"][0]["left"]["step"], 6);
    assert_eq!(d["removed"][0]["left"]["by"], "revision");
    assert_eq!(d["removed"][0]["left"]["reason"], "tidy");
    // h changed formula under the same id.
    assert_eq!(d["changed"][0]["id"], "h");
    assert_eq!(d["changed"][0]["before"]["formula"], "s");
    assert_eq!(d["changed"][0]["after"]["formula"], "¬s");
    assert_eq!(d["consistent"]["from"], true);
    assert_eq!(d["consistent"]["to"], false);
    // A belief removed while Σ at B still entails it, and one added that Σ at A entailed.
    let d = r.run_line("diff 3 7").expect("diff").to_json("diff");
    assert_eq!(d["removed"][0]["id"], "g");
    assert_eq!(d["removed"][0]["still_entailed"], true);
    let d = r.run_line("diff 2 3").expect("diff").to_json("diff");
    assert_eq!(d["added"][0]["id"], "g");
    assert_eq!(d["added"][0]["already_entailed"], true);
    // The revision between the steps is named.
    let d = r.run_line("diff 4 6").expect("diff").to_json("diff");
    assert_eq!(d["revisions"][0]["step"], 5);
    assert_eq!(d["revisions"][0]["retracted"], serde_json::json!(["g"]));
    // Same step: nothing.
    let d = r.run_line("diff 5 5").expect("diff").to_json("diff");
    assert_eq!(d["added"], serde_json::json!([]));
    assert_eq!(d["changed"], serde_json::json!([]));
}

#[path = "support/external.rs"]
mod external;

/// Two real runs of one task by two frameworks (any-agent's OpenAI and LangChain traces,
/// imported): what they did differs (the clock the first tool read, what the second tool
/// returned, the answer), so `diff` exits 1 and names the first differing tool call with both
/// sides; each run against itself has no difference.
#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn two_real_runs_differ_in_their_tool_calls_and_answers() {
    let dir = external::dir()
        .expect("the external traces")
        .join("otel-genai");
    let a = dir.join("any-agent_OPENAI_trace.json");
    let b = dir.join("any-agent_LANGCHAIN_trace.json");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = doxascope(&["diff", a, b, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["identical"], false);
    assert_eq!(v["items"]["tool_call"], serde_json::json!({"a": 2, "b": 2}));
    let items = v["items_differ"].as_array().expect("items_differ");
    let first = &items[0];
    assert_eq!(first["kind"], "tool_call");
    assert_eq!(first["fields"], serde_json::json!(["result"]));
    assert_eq!(first["a"]["fields"]["tool"], "get_current_time");
    assert_eq!(first["b"]["fields"]["tool"], "get_current_time");
    assert_eq!(first["a"]["number"], 1);
    assert_eq!(
        first["a"]["fields"]["result"]["datetime"],
        "2025-09-16T08:43:13-04:00"
    );
    assert_eq!(
        first["b"]["fields"]["result"]["datetime"],
        "2025-09-16T09:16:41-04:00"
    );
    // The second tool returned `{}` in one run and "null" in the other.
    let second = &items[1];
    assert_eq!(second["a"]["fields"]["tool"], "write_file");
    assert_eq!(second["fields"], serde_json::json!(["result"]));
    // The answers differ too.
    assert!(
        items
            .iter()
            .any(|i| i["kind"] == "answer" && i["fields"] == serde_json::json!(["text"])),
        "{items:#?}"
    );
    let text = doxascope(&["diff", a, b]);
    assert_eq!(text.status.code(), Some(1));
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("tool calls that differ: 2")
            && text.contains("the first: #1 get_current_time at step 4"),
        "{text}"
    );
    for p in [a, b] {
        let same = doxascope(&["diff", p, p, "--json"]);
        assert_eq!(same.status.code(), Some(0), "{p}");
        let v: Value = serde_json::from_slice(&same.stdout).expect("json");
        assert_eq!(v["identical"], true);
        assert_eq!(v["items_differ"], serde_json::json!([]));
    }
}

/// Two v1 runs that differ only in what one tool call returned: no belief differs, yet the
/// runs differ, in that call's result and nothing else.
#[test]
fn v1_runs_differing_only_in_a_tool_result_differ() {
    let run = |result: &str| {
        vec![
            r#"{"kind":"announce","id":"f","formula":"up"}"#.to_string(),
            format!(
                r#"{{"kind":"tool_call","tool":"ping","args":{{"host":"example.com"}},"result":{result},"duration_ms":3}}"#
            ),
            r#"{"kind":"tool_call","tool":"dig","args":{"name":"example.com"},"result":"ok"}"#
                .to_string(),
            r#"{"kind":"answer","text":"the host is up"}"#.to_string(),
        ]
    };
    let dir = tempfile::tempdir().expect("tmp");
    let a = run(r#""64 bytes from 93.184.216.34""#);
    let b = run(r#""Request timeout""#);
    let pa = write(
        dir.path(),
        "a.jsonl",
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let pb = write(
        dir.path(),
        "b.jsonl",
        &b.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let (pa, pb) = (pa.to_str().unwrap(), pb.to_str().unwrap());
    let out = doxascope(&["diff", pa, pb, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["only_in_a"], serde_json::json!([]));
    assert!(v["divergence"].is_null());
    let items = v["items_differ"].as_array().expect("items_differ");
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!(items[0]["kind"], "tool_call");
    assert_eq!(items[0]["fields"], serde_json::json!(["result"]));
    assert_eq!(items[0]["a"]["fields"]["tool"], "ping");
    assert_eq!(items[0]["b"]["fields"]["result"], "Request timeout");
    let text = doxascope(&["diff", pa, pb]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains(r#"result: "#) && text.contains(r#""Request timeout""#),
        "{text}"
    );
    // Against itself: nothing.
    assert_eq!(doxascope(&["diff", pa, pa]).status.code(), Some(0));
}
