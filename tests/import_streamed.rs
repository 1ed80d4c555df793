//! Imports read a piece at a time (issue 31) give what the whole-document import gives: the
//! same lines byte for byte and the same notes, or the same error at the same place, on the
//! samples, on generated downloads and on hostile text, with the splitter reading from 1
//! byte at a time up (every place a read can end).

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use doxascope::trace::import::write::V1Out;
use doxascope::trace::import::{Format, ImportError, ImportNote, import, langfuse};
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

fn whole(bytes: &[u8]) -> Outcome {
    import(Format::Langfuse, bytes, "lf.json").map(|i| (i.v1, i.notes))
}

fn streamed(bytes: &[u8], cap: usize) -> Outcome {
    let sink = Shared::default();
    let mut out = V1Out::to_writer(sink.clone());
    langfuse::import_at(bytes, "lf.json", &mut out, cap)?;
    let notes = out.finish_written().expect("in memory");
    let v1 = sink.0.borrow().clone();
    Ok((v1, notes))
}

fn same(bytes: &[u8], caps: &[usize]) {
    let want = whole(bytes);
    for &cap in caps {
        let got = streamed(bytes, cap);
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

#[test]
fn the_samples_import_the_same_streamed() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/external-traces/langfuse"
    );
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("{dir}: the shared samples are missing");
    };
    let mut n = 0;
    for e in entries {
        let p = e.expect("entry").path();
        let bytes = std::fs::read(&p).expect("read");
        let out = whole(&bytes);
        assert!(out.is_ok(), "{}: {:?}", p.display(), out.err());
        same(&bytes, &[1, 2, 3, 5, 64, 1000, 1 << 16]);
        n += 1;
    }
    assert!(n >= 7, "{n} samples");
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
