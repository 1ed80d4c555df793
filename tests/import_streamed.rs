//! Imports read a piece at a time (issue 31) give what the whole-document import gives: the
//! same lines byte for byte and the same notes, or the same error at the same place, on the
//! samples, on generated downloads and on hostile text, with the splitter reading from 1
//! byte at a time up (every place a read can end).

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use doxascope::trace::import::write::V1Out;
use doxascope::trace::import::{
    Format, ImportError, ImportNote, import, inspect, langfuse, langsmith, letta,
};
use proptest::prelude::*;

/// A writer whose bytes the test keeps.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

type Outcome = Result<(Vec<u8>, Vec<ImportNote>), ImportError>;

fn whole(format: Format, bytes: &[u8]) -> Outcome {
    import(format, bytes, "f.json").map(|i| (i.v1, i.notes))
}

fn streamed(format: Format, bytes: &[u8], cap: usize) -> Outcome {
    let sink = Shared::default();
    let mut out = V1Out::to_writer(sink.clone());
    match format {
        Format::Langfuse => langfuse::import_at(bytes, "f.json", &mut out, cap)?,
        Format::Inspect => inspect::import_at(bytes, "f.json", &mut out, cap)?,
        Format::Letta => letta::import_at(bytes, "f.json", &mut out, cap)?,
        Format::LangSmith => langsmith::import_at(bytes, "f.json", &mut out, cap)?,
        other => panic!("{other} is not streamed"),
    }
    let notes = out.finish_written().expect("in memory");
    let v1 = sink.0.borrow().clone();
    Ok((v1, notes))
}

fn same(bytes: &[u8], caps: &[usize]) {
    same_as(Format::Langfuse, bytes, caps);
}

fn same_as(format: Format, bytes: &[u8], caps: &[usize]) {
    let want = whole(format, bytes);
    for &cap in caps {
        let got = streamed(format, bytes, cap);
        match (&want, &got) {
            (Ok((w, wn)), Ok((g, gn))) => {
                assert!(
                    w == g,
                    "cap {cap}: lines differ\nwhole:\n{}\nstreamed:\n{}",
                    String::from_utf8_lossy(w),
                    String::from_utf8_lossy(g)
                );
                assert_eq!(wn, gn, "cap {cap}: notes differ");
            }
            (Err(w), Err(g)) => assert_eq!(w, g, "cap {cap}"),
            _ => panic!(
                "cap {cap}: whole {:?} but streamed {:?} on {}",
                want.as_ref().map(|_| "ok"),
                got.as_ref().map(|_| "ok"),
                String::from_utf8_lossy(bytes)
            ),
        }
    }
}

/// Every file of a directory of `../shared/external-traces/`, imported whole and streamed.
fn samples(dir: &str, format: Format, caps: &[usize]) -> usize {
    let dir = format!(
        "{}/../shared/external-traces/{dir}",
        env!("CARGO_MANIFEST_DIR")
    );
    let Ok(entries) = std::fs::read_dir(&dir) else {
        panic!("{dir}: the shared samples are missing");
    };
    let mut n = 0;
    for e in entries {
        let p = e.expect("entry").path();
        let bytes = std::fs::read(&p).expect("read");
        let out = whole(format, &bytes);
        assert!(out.is_ok(), "{}: {:?}", p.display(), out.err());
        same_as(format, &bytes, caps);
        n += 1;
    }
    n
}

#[test]
fn the_samples_import_the_same_streamed() {
    let n = samples(
        "langfuse",
        Format::Langfuse,
        &[1, 2, 3, 5, 64, 1000, 1 << 16],
    );
    assert!(n >= 7, "{n} Langfuse samples");
    let n = samples("inspect", Format::Inspect, &[1, 7, 64, 1 << 16]);
    assert!(n >= 8, "{n} Inspect samples");
    let n = samples("letta", Format::Letta, &[1, 5, 64, 1 << 16]);
    assert!(n >= 3, "{n} Letta samples");
    let n = samples(
        "langsmith-langgraph",
        Format::LangSmith,
        &[1, 5, 64, 1 << 16],
    );
    assert!(n >= 4, "{n} LangSmith samples");
}

/// A LangSmith run: `k` its id, `parent` its parent's, created or patched.
fn ls_run(k: u8, parent: Option<u8>, patch: bool, x: u8) -> serde_json::Value {
    let mut r = serde_json::json!({"id": format!("r{k}")});
    if patch {
        r["outputs"] = serde_json::json!({"output": format!("done {k}")});
        r["end_time"] = "2025-01-01T00:01:00Z".into();
        if x % 3 == 0 {
            r["dotted_order"] = format!("20250101T000000{x:03}Zr{k}").into();
        }
        if x % 4 == 0 {
            r["extra"] =
                serde_json::json!({"metadata": {"thread_id": format!("th{x}"), "big": [1, 2]}});
        }
        r["error"] = if x % 5 == 0 {
            "boom".into()
        } else {
            serde_json::Value::Null
        };
    } else {
        r["run_type"] = ["chain", "llm", "tool", "retriever"][x as usize % 4].into();
        r["name"] = if x % 7 == 0 {
            "LangGraph".into()
        } else {
            format!("n{k}").into()
        };
        r["inputs"] = serde_json::json!({"messages": [{"content": format!("ask {k}")}]});
        r["start_time"] = if x % 2 == 0 {
            serde_json::Value::from(1_735_689_600_000u64 + x as u64)
        } else {
            format!("2025-01-01T00:00:{:02}Z", x % 60).into()
        };
        if let Some(pa) = parent {
            r["parent_run_id"] = format!("r{pa}").into();
        }
        if x % 6 == 0 {
            r["trace_id"] = format!("t{}", x % 2).into();
        }
        if x % 8 == 1 {
            r["extra"] = serde_json::json!({"metadata": {"langgraph_node": format!("n{k}"), "langgraph_step": 1}});
        }
        if x % 9 == 2 {
            r["feedback_stats"] = serde_json::json!({"correct": {"n": 2, "avg": 0.5}});
        }
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn generated_langsmith_runs_import_the_same_streamed(
        runs in prop::collection::vec((0u8..12, prop::option::of(0u8..12), any::<bool>(), any::<u8>()), 0..16),
        shape in 0u8..3,
        cut in any::<prop::sample::Index>(),
    ) {
        let all: Vec<(bool, serde_json::Value)> = runs.iter().map(|&(k, pa, patch, x)| (patch, ls_run(k, pa, patch, x))).collect();
        let text = match shape {
            0 => serde_json::json!({
                "post": all.iter().filter(|r| !r.0).map(|r| &r.1).collect::<Vec<_>>(),
                "patch": all.iter().filter(|r| r.0).map(|r| &r.1).collect::<Vec<_>>(),
            }).to_string(),
            1 => serde_json::Value::Array(all.iter().map(|r| r.1.clone()).collect()).to_string(),
            _ => {
                // A run tree: each run nests the next.
                let mut tree = serde_json::json!({"id": "root", "run_type": "chain", "name": "LangGraph", "outputs": {"messages": [], "x": 1}});
                let mut at = &mut tree;
                for (_, r) in &all {
                    at["child_runs"] = serde_json::json!([7, r.clone()]);
                    at = &mut at["child_runs"][1];
                }
                serde_json::to_string_pretty(&tree).expect("json")
            }
        };
        same_as(Format::LangSmith, text.as_bytes(), &[1, 3, 64, 1 << 16]);
        let at = cut.index(text.len());
        same_as(Format::LangSmith, &text.as_bytes()[..at], &[1, 1 << 16]);
    }
}

#[test]
fn langsmith_shapes_import_the_same_streamed() {
    for text in [
        r#"{"post": 3, "run_type": "x"}"#,
        r#"{"post": [1], "patch": null}"#,
        r#"{"post": null, "patch": [{"id": "a", "run_type": "llm"}]}"#,
        r#"[{"run_type": "chain"}, 3]"#,
        r#"[{"run_type": "chain"}, {"run_type": "chain", "dotted_order": "20250101T000000Zb"}]"#,
        r#""runs""#,
        r#"{"run_type": "chain", "id": "a", "child_runs": {"x": 1}}"#,
    ] {
        same_as(Format::LangSmith, text.as_bytes(), &[1, 1 << 16]);
    }
}

#[test]
fn letta_shapes_import_the_same_streamed() {
    let msgs = r#"[{"role": "system", "content": [{"type": "text", "text": "<persona>\nI am\n</persona>"}]},
        {"role": "user", "content": "hi", "created_at": "2025-01-01T00:00:01"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": {"name": "core_memory_append", "arguments": "{\"label\": \"persona\", \"content\": \"kind\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "core_memory_append", "content": "{\"status\": \"OK\"}"},
        [1], 7, {"role": "assistant", "content": "bye"}]"#;
    let current = format!(
        r#"{{"agents": [{{"name": "a", "block_ids": ["block-0", "block-9"], "messages": {msgs}, "llm_config": {{"model": "m"}}}}, {{"name": "b", "memory_blocks": [{{"label": "x", "value": "y"}}], "messages": 3}}],
            "blocks": [{{"id": "block-0", "label": "persona", "value": "I am kind"}}], "created_at": "2025-01-01T00:00:00"}}"#
    );
    let older = format!(
        r#"{{"agent_type": "memgpt", "name": "old", "core_memory": [{{"label": "persona", "value": "I am"}}], "messages": {msgs}}}"#
    );
    let double = serde_json::Value::from(older.clone()).to_string();
    for text in [&current, &older, &double] {
        same_as(Format::Letta, text.as_bytes(), &[1, 2, 7, 1 << 16]);
        for at in (0..text.len()).step_by(13) {
            same_as(Format::Letta, &text.as_bytes()[..at], &[1, 1 << 16]);
        }
    }
    for text in [
        "[]",
        r#"{"agents": {}}"#,
        r#"{"agents": [3]}"#,
        r#"{"x": 1}"#,
        r#""not json inside""#,
        r#"{"agents": [], "agents": [{"name": "twice"}]}"#,
    ] {
        same_as(Format::Letta, text.as_bytes(), &[1, 1 << 16]);
    }
}

/// An Inspect JSON log: a sample log's samples repeated `copies` times, in the given key
/// order (the samples first or last).
fn inspect_log(copies: usize, samples_first: bool) -> Vec<u8> {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/external-traces/inspect/log_read_sample.json"
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p).expect("read")).expect("json");
    let samples: Vec<String> = (0..copies)
        .flat_map(|k| {
            doc["samples"]
                .as_array()
                .expect("samples")
                .iter()
                .map(move |s| {
                    let mut s = s.clone();
                    s["id"] = format!("{}-{k}", s["id"]).into();
                    s.to_string()
                })
        })
        .collect();
    let rest: Vec<String> = doc
        .as_object()
        .expect("object")
        .iter()
        .filter(|(k, _)| *k != "samples")
        .map(|(k, v)| format!("{}: {v}", serde_json::Value::from(k.as_str())))
        .collect();
    let samples = format!("\"samples\" :\n[ {} ]", samples.join(" ,\n"));
    let body = if samples_first {
        format!("{{ {samples}, {} }}", rest.join(", "))
    } else {
        format!("{{{}, {samples}}}", rest.join(", "))
    };
    body.into_bytes()
}

#[test]
fn inspect_logs_import_the_same_streamed() {
    for copies in [0, 1, 3] {
        for first in [false, true] {
            same_as(
                Format::Inspect,
                &inspect_log(copies, first),
                &[1, 3, 64, 1 << 16],
            );
        }
    }
    let log = inspect_log(2, false);
    for at in (0..log.len()).step_by(97) {
        same_as(Format::Inspect, &log[..at], &[1, 1 << 16]);
    }
    for text in [
        r#"{"eval": {"task": "t"}, "samples": null}"#,
        r#"{"eval": {"task": "t"}, "samples": 3}"#,
        r#"{"eval": {"task": "t"}, "version": 99, "samples": [{}]}"#,
        r#"{"eval": {"task": "t"}, "samples": [[1], {"id": 1}, 7]}"#,
        r#"{"eval": {"task": "t"}, "samples": [{"id": 1}, {"id": 2}], "samples": []}"#,
        r#"[{"eval": 1}]"#,
    ] {
        same_as(Format::Inspect, text.as_bytes(), &[1, 2, 1 << 16]);
    }
}

/// A download: observations in both lists (some ids repeated, some starts missing or equal),
/// scores in both lists, written with the given whitespace between tokens.
fn download(obs: &[(u8, Option<u8>, bool, u8, u8)], scores: &[u8], pretty: bool) -> String {
    let o: Vec<serde_json::Value> = obs
        .iter()
        .map(|&(id, start, llm, level, x)| {
            let ty = if llm { "GENERATION" } else { ["SPAN", "TOOL", "AGENT", "EVENT"][id as usize % 4] };
            let lvl = ["DEFAULT", "WARNING", "ERROR"][level as usize % 3];
            let mut v = serde_json::json!({
                "id": format!("o{id}"),
                "type": ty,
                "name": format!("n\u{e9}\\\"{id}"),
                "level": lvl,
                "input": if x % 3 == 0 { serde_json::Value::Null } else { serde_json::json!({"messages": [{"role": "user", "content": format!("q{id}")}]}) },
                "output": format!("{{\"content\":\"a{id}\"}}"),
                "metadata": if x % 5 == 0 { serde_json::json!({"langgraph_node": "agent"}) } else { serde_json::json!({}) },
            });
            if let Some(s) = start {
                v["startTime"] = format!("2025-01-01T00:00:{:02}.000Z", s % 60).into();
            }
            if llm && x % 2 == 0 {
                v["model"] = format!("m{id}").into();
            }
            v
        })
        .collect();
    let (inner, top) = o.split_at(o.len() / 2);
    let sc: Vec<serde_json::Value> = scores
        .iter()
        .map(|&s| serde_json::json!({"id": format!("s{}", s % 4), "name": "q", "value": s, "observationId": format!("o{s}")}))
        .collect();
    let doc = serde_json::json!({
        "trace": {
            "id": "t1", "projectId": "p", "name": "LangGraph-ish", "timestamp": "2025-01-01T00:00:00Z",
            "input": "the goal", "output": {"messages": [{"type": "tool", "content": "r", "tool_call_id": "c1"}]},
            "metadata": "{\"a\": 1}", "observations": inner, "scores": &sc[..sc.len() / 2],
            "corrections": [1],
        },
        "observations": top,
        "scores": &sc[sc.len() / 2..],
    });
    if pretty {
        serde_json::to_string_pretty(&doc).expect("json")
    } else {
        doc.to_string()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn generated_downloads_import_the_same_streamed(
        obs in prop::collection::vec((0u8..40, prop::option::of(0u8..8), any::<bool>(), 0u8..3, any::<u8>()), 0..24),
        scores in prop::collection::vec(0u8..10, 0..6),
        pretty in any::<bool>(),
    ) {
        let text = download(&obs, &scores, pretty);
        same(text.as_bytes(), &[1, 2, 7, 64, 1 << 16]);
    }

    #[test]
    fn a_download_cut_or_damaged_anywhere_fails_the_same_streamed(
        obs in prop::collection::vec((0u8..10, prop::option::of(0u8..8), any::<bool>(), 0u8..3, any::<u8>()), 1..4),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(vec![b'"', b'{', b'}', b'[', b']', b',', b':', b'\\', 0xff, b'\n', b'x']),
    ) {
        let text = download(&obs, &[1], false).into_bytes();
        let at = at.index(text.len());
        same(&text[..at], &[1, 3, 1 << 16]);
        let mut damaged = text.clone();
        damaged[at] = byte;
        same(&damaged, &[1, 3, 1 << 16]);
    }
}

#[test]
fn hostile_shapes_import_the_same_streamed() {
    let deep = format!(
        "{{\"trace\":{{\"id\":\"t\",\"x\":{}{}}}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    for text in [
        "[]",
        "\"trace\"",
        "{\"trace\": 3, \"observations\": []}",
        "{\"trace\": {\"id\": \"a\"}, \"trace\": {\"id\": \"b\"}, \"observations\": 7}",
        "{\"tr\\u0061ce\": {\"id\": \"esc\"}, \"observations\": [1, \"x\", null, {}, {}]}",
        "{\"trace\": {\"id\": \"t\", \"observations\": [{\"id\": 1}, {\"id\": \"1\"}]}, \"observations\": [{\"id\": 1.0}]}",
        "{}",
        r#"{"trace": {"id": "t"}, "observations": [["x", "2025-01-01T00:00:00Z", "m", 1, 2, "langgraph_node"], {"id": "x", "id": "y", "model": "m", "startTime": "2025-01-01T00:00:00Z"}, {"id": "z", "input": null, "output": 0}]}"#,
        "{\"4f6535aaebcda355\": {\"input\": {\"success\": true, \"data\": [{\"role\":\"user\",\"content\":\"hi\"}]}}, \"4f6535aaebcda355\": {\"output\": {\"data\": \"x\"}}}",
        " \n{\"trace\":{\"id\":\"t\"}} \n",
        "{\"trace\":{\"id\":\"t\"}} x",
        "\u{feff}{\"trace\":{\"id\":\"t\"}}",
        "{\"trace\":{\"id\":\"t\",\"name\":\"\\ud800\"}}",
        &deep,
    ] {
        same(text.as_bytes(), &[1, 2, 5, 1 << 16]);
    }
}
