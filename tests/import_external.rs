//! Every real file of other tools in `tests/data/external/` opens without an error: its
//! format is detected from the content alone, the v1 it becomes reads clean, and the events
//! per kind are as listed (checked against the source itself where the source counts them).
//! Memory edits become retractions the model links to ground beliefs; broken inputs give one
//! error naming the format and the place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use doxascope::model::Model;
use doxascope::model::bdi::state_at;
use doxascope::trace::import::{Format, Imported, detect, import};
use doxascope::trace::{Item, Reader, ReaderConfig};
use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/external")
        .join(rel)
}

/// Detects the format from the content under a neutral name (no extension to go by), checks
/// the real name gives the same, and imports.
fn open(rel: &str) -> (Format, Imported) {
    let bytes = std::fs::read(data(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let head = &bytes[..bytes.len().min(doxascope::trace::import::HEAD_BYTES)];
    let format = detect(Path::new("trace.dat"), head);
    assert_eq!(format, detect(&data(rel), head), "{rel}");
    let imported = import(format, &bytes, rel).unwrap_or_else(|e| panic!("{rel}: {e}"));
    (format, imported)
}

/// Events per kind of v1 text, which must read without a problem.
fn kinds(rel: &str, v1: &[u8]) -> BTreeMap<String, usize> {
    let mut r = Reader::new(rel, ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(v1, &mut items);
    r.finish(&mut items);
    let mut out = BTreeMap::new();
    for i in items {
        match i {
            Item::Event(e) => *out.entry(e.kind_name().to_string()).or_insert(0) += 1,
            Item::Problem(p) => panic!("{rel}: the imported v1 has a problem: {p:?}"),
        }
    }
    out
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

fn model(rel: &str) -> Model {
    let (_, imp) = open(rel);
    Model::from_bytes(rel, &imp.v1)
}

/// The source's own count of Inspect events of a type, over all samples.
fn inspect_source_events(rel: &str, event: &str) -> usize {
    let bytes = std::fs::read(data(rel)).unwrap();
    let samples: Vec<Value> = if bytes.starts_with(b"PK") {
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let names: Vec<String> = z
            .file_names()
            .filter(|n| n.starts_with("samples/"))
            .map(str::to_string)
            .collect();
        names
            .iter()
            .map(|n| serde_json::from_reader(z.by_name(n).unwrap()).unwrap())
            .collect()
    } else {
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        doc["samples"].as_array().cloned().unwrap_or_default()
    };
    samples
        .iter()
        .flat_map(|s| s["events"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["event"] == event)
        .count()
}

#[test]
fn inspect_logs_open_with_their_events() {
    let table: &[(&str, &[(&str, usize)])] = &[
        (
            "inspect/2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json",
            &[
                ("answer", 1),
                ("intention", 1),
                ("llm_call", 2),
                ("log", 1),
                ("plan", 1),
                ("score", 1),
                ("session", 1),
                ("step", 4),
            ],
        ),
        (
            "inspect/2025-05-12T20-27-36-04-00_browser.json",
            &[
                ("answer", 1),
                ("belief", 6),
                ("intention", 1),
                ("llm_call", 5),
                ("log", 10),
                ("plan", 1),
                ("retract", 2),
                ("score", 1),
                ("session", 1),
                ("step", 4),
                ("tool_call", 4),
            ],
        ),
        (
            "inspect/2025-05-12T20-28-26-04-00_security-guide.json",
            &[
                ("answer", 3),
                ("intention", 3),
                ("llm_call", 6),
                ("plan", 3),
                ("score", 3),
                ("session", 3),
                ("step", 12),
            ],
        ),
        (
            "inspect/log_formats.eval",
            &[
                ("answer", 1),
                ("intention", 1),
                ("llm_call", 1),
                ("plan", 1),
                ("score", 1),
                ("session", 1),
                ("step", 4),
            ],
        ),
        (
            "inspect/log_message_deduplication.eval",
            &[
                ("answer", 1),
                ("intention", 1),
                ("llm_call", 6),
                ("log", 5),
                ("plan", 1),
                ("score", 1),
                ("session", 1),
                ("step", 4),
                ("tool_call", 5),
            ],
        ),
        (
            "inspect/log_read_sample.eval",
            &[
                ("answer", 1),
                ("intention", 1),
                ("llm_call", 1),
                ("plan", 1),
                ("score", 1),
                ("session", 1),
                ("step", 4),
            ],
        ),
        (
            "inspect/log_read_sample.json",
            &[
                ("answer", 1),
                ("intention", 1),
                ("llm_call", 1),
                ("plan", 1),
                ("score", 1),
                ("session", 1),
                ("step", 4),
            ],
        ),
        (
            "inspect/log_tool_call_error.json",
            &[
                ("intention", 1),
                ("plan", 1),
                ("session", 1),
                ("tool_call", 11),
            ],
        ),
    ];
    for (rel, want) in table {
        let (format, imp) = open(rel);
        assert_eq!(format, Format::Inspect, "{rel}");
        let got = kinds(rel, &imp.v1);
        assert_eq!(got, counts(want), "{rel}");
        // Against the source: one llm_call per model event, one tool_call per tool event,
        // one score per score event (logs with events).
        if !rel.contains("tool_call_error") {
            for (ev, kind) in [
                ("model", "llm_call"),
                ("tool", "tool_call"),
                ("score", "score"),
            ] {
                assert_eq!(
                    inspect_source_events(rel, ev),
                    got.get(kind).copied().unwrap_or(0),
                    "{rel}: {ev} events vs {kind}"
                );
            }
        }
    }
}

#[test]
fn inspect_store_patches_are_memory_revisions() {
    let rel = "inspect/2025-05-12T20-27-36-04-00_browser.json";
    let m = model(rel);
    let tl = &m.timelines()[0];
    let ground: Vec<_> = tl
        .retracts()
        .iter()
        .filter(|r| r.ground.is_some())
        .collect();
    assert_eq!(ground.len(), 2, "two store `replace`s of web_at");
    assert!(tl.errors().is_empty(), "{:?}", tl.errors());
    let bdi = tl.bdi_log();
    let key = "WebBrowserStore:4g6KtU22C8DUjmbCoiJCfR:web_at";
    // The value taken back at each replace is the value the store held before it (the
    // source's `replaced`, which the importer keeps beside the retraction).
    for r in &ground {
        let old = bdi.retracted(m.log(), r.ground.unwrap()).unwrap();
        assert_eq!(old.name, key);
        let ev = &m.log().events[r.event as usize];
        let replaced = ev.extra.value("x_replaced").unwrap();
        let old_text = old.value.unwrap().as_str().unwrap();
        let rep = replaced.as_str().unwrap();
        // The log clips `replaced` in the event (the full value is in the store patch).
        assert!(old_text.starts_with(rep.trim_end_matches("...")), "{rep:?}");
        // The reason names the tool call that made the change.
        let reason = match &ev.body {
            doxascope::trace::Body::Retract(x) => x.reason.clone().unwrap(),
            _ => unreachable!(),
        };
        assert!(
            reason.contains("in tool call web_browser_click"),
            "{reason}"
        );
    }
    let last = state_at(bdi, m.log(), tl.len());
    assert_eq!(last.ground.len(), 4);
    assert_eq!(bdi.history(m.log(), key, tl.len()).len(), 3);
}

#[test]
fn letta_files_open_with_their_events() {
    let table: &[(&str, &[(&str, usize)])] = &[
        (
            "letta/memgpt_agent_with_convo.v1-2025-03.af",
            &[
                ("answer", 23),
                ("belief", 7),
                ("log", 6),
                ("retract", 5),
                ("session", 1),
                ("thought", 28),
                ("tool_call", 5),
                ("user_message", 23),
            ],
        ),
        (
            "letta/outreach_workflow_agent.v1-2025-03.af",
            &[
                ("log", 2),
                ("plan", 1),
                ("session", 1),
                ("step", 3),
                ("thought", 3),
                ("tool_call", 3),
                ("user_message", 1),
            ],
        ),
        (
            "letta/loop.af",
            &[("answer", 1), ("belief", 9), ("session", 1)],
        ),
        (
            "letta/customer_service.double-encoded.af",
            &[("belief", 2), ("session", 1)],
        ),
    ];
    for (rel, want) in table {
        let (format, imp) = open(rel);
        assert_eq!(format, Format::Letta, "{rel}");
        assert_eq!(kinds(rel, &imp.v1), counts(want), "{rel}");
        // Replayed edits agree with every system prompt and with the exported blocks.
        let disagreements: Vec<_> = imp
            .notes
            .iter()
            .filter(|n| n.message.contains("differs"))
            .collect();
        assert!(disagreements.is_empty(), "{rel}: {disagreements:?}");
    }
    let (_, imp) = open("letta/customer_service.double-encoded.af");
    assert!(
        imp.notes
            .iter()
            .any(|n| n.message.contains("double-encoded"))
    );
}

/// The memgpt agent renames its user twice and itself once: "First name: Chad" → "Sarah" →
/// "Sam", "I am Sam." → "I am BigChungus.", and appends two facts. Each edit is a retraction
/// of the block's old value by the agent, right after the tool call that made it, then the
/// new value.
#[test]
fn letta_memory_edits_are_retractions_with_their_cause() {
    let m = model("letta/memgpt_agent_with_convo.v1-2025-03.af");
    let tl = &m.timelines()[0];
    assert!(tl.errors().is_empty(), "{:?}", tl.errors());
    let bdi = tl.bdi_log();
    let human = |t: u32| {
        state_at(bdi, m.log(), t)
            .ground_belief("human")
            .and_then(|g| g.value)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut names = Vec::new();
    let mut edits = Vec::new();
    for r in tl.retracts() {
        let k = r.ground.expect("every retraction is of a memory block");
        let g = bdi.retracted(m.log(), k).unwrap();
        edits.push(g.name.to_string());
        // The event before the retraction is the tool call that made the edit.
        let call = &m.log().events[tl.event_pos_at(r.step - 1).unwrap() as usize];
        assert_eq!(call.kind_name(), "tool_call");
        let after = human(r.step + 1).unwrap();
        let first = after
            .lines()
            .find(|l| l.starts_with("First name:"))
            .unwrap()
            .to_string();
        if names.last() != Some(&first) {
            names.push(first);
        }
    }
    assert_eq!(edits, ["human", "persona", "human", "human", "human"]);
    assert_eq!(
        names,
        ["First name: Sarah", "First name: Sam"],
        "the user's name after each edit"
    );
    let first = &bdi.history(m.log(), "human", tl.len())[0];
    assert!(
        first
            .value
            .unwrap()
            .as_str()
            .unwrap()
            .contains("First name: Chad")
    );
    assert_eq!(
        first.source,
        Some("core_memory"),
        "from the first system prompt"
    );
    assert!(
        human(tl.len())
            .unwrap()
            .contains("Sailing partner: Jean-Luc")
    );
}

#[test]
fn broken_inputs_give_one_error_naming_the_format_and_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let cut = |rel: &str, keep: usize| -> PathBuf {
        let bytes = std::fs::read(data(rel)).unwrap();
        let p = dir.path().join(Path::new(rel).file_name().unwrap());
        std::fs::write(&p, &bytes[..keep.min(bytes.len())]).unwrap();
        p
    };
    let cases = [
        (
            cut("inspect/log_read_sample.json", 3000),
            "looks like an Inspect AI eval log (inspect), but at line ",
        ),
        (
            cut("inspect/log_read_sample.eval", 2000),
            "looks like an Inspect AI eval log (inspect), but at the ZIP directory",
        ),
        (
            cut("letta/memgpt_agent_with_convo.v1-2025-03.af", 5000),
            "looks like a Letta agent file (letta), but at line 1, column 5000",
        ),
        (
            cut("letta/customer_service.double-encoded.af", 4000),
            "looks like a Letta agent file (letta), but at line 1, column 4000",
        ),
    ];
    for (p, want) in cases {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_doxascope"))
            .args(["import", p.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", p.display());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
}
