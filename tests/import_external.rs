//! Every real file of other tools in `../shared/external-traces/` opens without an error: its
//! format is detected from the content alone, the v1 it becomes reads clean, and the events
//! per kind are as listed (checked against the source itself where the source counts them).
//! Memory edits become retractions the model links to ground beliefs; broken inputs give one
//! error naming the format and the place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use doxascope::model::Model;
use doxascope::model::bdi::state_at;
use doxascope::trace::import::{Format, Imported, detect, import};
use doxascope::trace::{Body, Item, Reader, ReaderConfig};
use serde_json::Value;

#[path = "support/external.rs"]
mod external;

/// A real file of another tool, or the one graph written for these tests.
fn data(rel: &str) -> PathBuf {
    if rel == "memory/graphiti_edges.json" {
        return Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphiti_edges.json");
    }
    external::dir()
        .expect(
            "the external traces (../shared/external-traces); without them this test is ignored",
        )
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
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
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
                ("belief", 10),
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
                ("belief", 5),
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
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
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
            Body::Retract(x) => x.reason.clone().unwrap(),
            _ => unreachable!(),
        };
        assert!(
            reason.contains("in tool call web_browser_click"),
            "{reason}"
        );
    }
    let last = state_at(bdi, m.log(), tl.len());
    // The four store keys, and the four tool results as observations beside them.
    let (observed, stored): (Vec<&_>, Vec<&_>) = last
        .ground
        .iter()
        .partition(|g| g.name.starts_with("tool:"));
    assert_eq!(stored.len(), 4);
    assert_eq!(observed.len(), 4);
    assert_eq!(bdi.history(m.log(), key, tl.len()).len(), 3);
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
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
                ("belief", 3),
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
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
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

fn check_table(format: Format, table: &[(&str, &[(&str, usize)])]) {
    for (rel, want) in table {
        let (f, imp) = open(rel);
        assert_eq!(f, format, "{rel}");
        assert_eq!(kinds(rel, &imp.v1), counts(want), "{rel}");
    }
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn langfuse_exports_open_with_their_events() {
    let table: &[(&str, &[(&str, usize)])] = &[
        (
            "langfuse/claude-agent-2025-12-22.trace.json",
            &[
                ("answer", 1),
                ("belief", 2),
                ("intention", 1),
                ("llm_call", 4),
                ("score", 3),
                ("session", 1),
                ("span", 1),
                ("tool_call", 2),
            ],
        ),
        (
            "langfuse/crewai-2025-07-11.trace.json",
            &[("llm_call", 1), ("score", 2), ("session", 1), ("span", 5)],
        ),
        (
            "langfuse/google-adk-2025-08-28.trace.json",
            &[
                ("answer", 1),
                ("belief", 1),
                ("chain", 1),
                ("intention", 2),
                ("llm_call", 2),
                ("score", 2),
                ("session", 1),
                ("tool_call", 1),
            ],
        ),
        (
            "langfuse/langgraph-js-2025-10-30.trace.json",
            &[
                ("answer", 1),
                ("belief", 2),
                ("intention", 1),
                ("llm_call", 2),
                ("score", 2),
                ("session", 1),
                ("span", 18),
            ],
        ),
        (
            "langfuse/langgraph-python-2025-08-22.chatml.json",
            &[("belief", 1), ("observation", 9), ("session", 1)],
        ),
        (
            "langfuse/langgraph-python-2025-08-22.trace.json",
            &[
                ("answer", 1),
                ("belief", 2),
                ("intention", 1),
                ("llm_call", 2),
                ("score", 2),
                ("session", 1),
                ("span", 7),
            ],
        ),
        (
            "langfuse/openai-agents-2025-09-30.trace.json",
            &[
                ("belief", 1),
                ("intention", 2),
                ("llm_call", 2),
                ("score", 2),
                ("session", 1),
                ("tool_call", 1),
            ],
        ),
    ];
    check_table(Format::Langfuse, table);
    // Against the source: observations are listed twice (inside `trace` and at the top)
    // and imported once; one llm_call per GENERATION, one tool_call per TOOL, one score per
    // score; every score that names an observation finds it in the session.
    for (rel, _) in table.iter().filter(|(r, _)| r.ends_with(".trace.json")) {
        let doc: Value = serde_json::from_slice(&std::fs::read(data(rel)).unwrap()).unwrap();
        let obs = doc["observations"].as_array().unwrap();
        let of = |t: &str| obs.iter().filter(|o| o["type"] == t).count();
        let (_, imp) = open(rel);
        let got = kinds(rel, &imp.v1);
        assert_eq!(
            got.get("llm_call").copied().unwrap_or(0),
            of("GENERATION"),
            "{rel}"
        );
        assert_eq!(
            got.get("tool_call").copied().unwrap_or(0),
            of("TOOL"),
            "{rel}"
        );
        assert_eq!(
            got["score"],
            doc["trace"]["scores"].as_array().unwrap().len(),
            "{rel}"
        );
        let m = Model::from_bytes(rel, &imp.v1);
        let tl = &m.timelines()[0];
        for &(step, pos) in tl.scores() {
            let ev = &m.log().events[pos as usize];
            let named = matches!(&ev.body, Body::Score(s) if s.target.is_some());
            assert_eq!(
                tl.score_target(m.log(), step).is_some(),
                named,
                "{rel}: {ev:?}"
            );
        }
    }
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn langsmith_runs_open_with_their_events() {
    check_table(
        Format::LangSmith,
        &[
            (
                "langsmith-langgraph/agx_sample_langchain_export.json",
                &[
                    ("answer", 1),
                    ("belief", 1),
                    ("chain", 1),
                    ("intention", 1),
                    ("llm_call", 2),
                    ("session", 1),
                    ("tool_call", 1),
                ],
            ),
            (
                "langsmith-langgraph/langsmith_js_wrap_openai_default.json",
                &[
                    ("answer", 1),
                    ("intention", 1),
                    ("llm_call", 1),
                    ("session", 1),
                ],
            ),
            (
                "langsmith-langgraph/langsmith_py_wrap_openai_reasoning.json",
                &[
                    ("answer", 1),
                    ("intention", 1),
                    ("llm_call", 1),
                    ("session", 1),
                ],
            ),
            (
                "langsmith-langgraph/langsmith_py_wrap_openai_stream.json",
                &[
                    ("answer", 1),
                    ("intention", 1),
                    ("llm_call", 1),
                    ("session", 1),
                ],
            ),
        ],
    );
    // The JS SDK's create (epoch ms, no outputs) and patch (no id: named by its dotted
    // order) are one run: its start from the create, its output from the patch.
    let (_, imp) = open("langsmith-langgraph/langsmith_js_wrap_openai_default.json");
    let lines: Vec<Value> = imp
        .v1
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let call = lines.iter().find(|l| l["kind"] == "llm_call").unwrap();
    assert_eq!(call["ts"], "2024-10-13T07:05:37.170Z");
    assert_eq!(call["output"], "Howdy! How can I assist you today?");
    assert_eq!(call["id"], "dc34609e-3eeb-459d-bc2a-6fedb01d2e6e");
    assert_eq!(call["x_from"], "post[0] + patch[0]");
}

/// The Graphiti sample is the input episodes only; `graphiti_edges.json` is the graph those
/// episodes give (written for this test from `graphiti_core`'s edge fields; see
/// docs/import.md): "Alex leads payments" is invalidated by the handover episode.
#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn graphiti_invalidation_is_a_retraction_caused_by_an_episode() {
    check_table(
        Format::Graphiti,
        &[
            (
                "memory/graphiti_edges.json",
                &[
                    ("belief", 5),
                    ("episode", 3),
                    ("retract", 1),
                    ("session", 1),
                ],
            ),
            (
                "memory/graphiti_sample-episode.json",
                &[("episode", 3), ("session", 1)],
            ),
        ],
    );
    let m = model("memory/graphiti_edges.json");
    let tl = &m.timelines()[0];
    assert!(tl.errors().is_empty(), "{:?}", tl.errors());
    let r = &tl.retracts()[0];
    let old = tl.bdi_log().retracted(m.log(), r.ground.unwrap()).unwrap();
    assert_eq!(
        old.value,
        Some(&Value::from("Alex leads the payments team at Acme"))
    );
    let Body::Retract(x) = &m.log().events[r.event as usize].body else {
        panic!()
    };
    let reason = x.reason.as_deref().unwrap();
    assert!(
        reason.contains("while ingesting episode handover"),
        "{reason}"
    );
    assert!(
        reason.contains("Priya leads the payments team at Acme"),
        "{reason}"
    );
    let held: Vec<String> = state_at(tl.bdi_log(), m.log(), tl.len())
        .ground
        .iter()
        .map(|g| g.value.unwrap().as_str().unwrap().to_string())
        .collect();
    assert!(held.contains(&"Priya leads the payments team at Acme".to_string()));
    assert!(!held.iter().any(|v| v.starts_with("Alex leads")));
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
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
        (
            cut("langfuse/crewai-2025-07-11.trace.json", 6000),
            "looks like a Langfuse trace export (langfuse), but at line ",
        ),
        (
            cut(
                "langsmith-langgraph/langsmith_py_wrap_openai_stream.json",
                3000,
            ),
            "looks like LangSmith runs (langsmith), but at line ",
        ),
        (
            cut("memory/graphiti_sample-episode.json", 500),
            "looks like Graphiti memory (graphiti), but at line ",
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

/// Issue 25's measure: every real trace that holds memory, state or tool results ends with
/// at least one held ground belief (memory records and blocks, store keys, state channels,
/// observations of tool results), and the ones that hold none end with none: nothing is
/// made up for them. Every file of the directory is listed, so a new one must be placed.
#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn traces_that_hold_memory_state_or_tool_results_end_with_held_ground_beliefs() {
    // (file, what it ends holding: the names' shapes, empty for none)
    let table: &[(&str, &[&str])] = &[
        // Inspect: the store's keys and the tool results; the others ran no tool and
        // kept no store, and every tool call of log_tool_call_error failed.
        (
            "inspect/2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json",
            &[],
        ),
        (
            "inspect/2025-05-12T20-27-36-04-00_browser.json",
            &["WebBrowserStore:", "tool:web_browser_"],
        ),
        ("inspect/2025-05-12T20-28-26-04-00_security-guide.json", &[]),
        ("inspect/log_formats.eval", &[]),
        ("inspect/log_message_deduplication.eval", &["tool:bash#"]),
        ("inspect/log_read_sample.eval", &[]),
        ("inspect/log_read_sample.json", &[]),
        ("inspect/log_tool_call_error.json", &[]),
        // Langfuse: tool observations with output (ADK's only in its model call's input);
        // LangGraph's state channels from the trace's output; the CrewAI export carries no
        // tool output or state.
        (
            "langfuse/claude-agent-2025-12-22.trace.json",
            &["tool:mcp__weather__get_weather#"],
        ),
        ("langfuse/crewai-2025-07-11.trace.json", &[]),
        (
            "langfuse/google-adk-2025-08-28.trace.json",
            &["tool:say_hello#"],
        ),
        (
            "langfuse/langgraph-js-2025-10-30.trace.json",
            &["messages", "tool:get_weather#call_"],
        ),
        (
            "langfuse/langgraph-python-2025-08-22.chatml.json",
            &["tool:Web-Search#call_"],
        ),
        (
            "langfuse/langgraph-python-2025-08-22.trace.json",
            &["messages", "tool:Web-Search#call_"],
        ),
        (
            "langfuse/openai-agents-2025-09-30.trace.json",
            &["tool:get_weather#"],
        ),
        // LangSmith: the run tree's tool run; the SDK payloads are single model calls.
        (
            "langsmith-langgraph/agx_sample_langchain_export.json",
            &["tool:list_dir#"],
        ),
        (
            "langsmith-langgraph/langsmith_js_wrap_openai_default.json",
            &[],
        ),
        (
            "langsmith-langgraph/langsmith_py_wrap_openai_reasoning.json",
            &[],
        ),
        (
            "langsmith-langgraph/langsmith_py_wrap_openai_stream.json",
            &[],
        ),
        // Letta: memory blocks (and the workflow agent's tool results).
        (
            "letta/customer_service.double-encoded.af",
            &["human", "persona"],
        ),
        (
            "letta/loop.af",
            &["active_hypotheses", "learned_corrections", "persona"],
        ),
        (
            "letta/memgpt_agent_with_convo.v1-2025-03.af",
            &["human", "persona"],
        ),
        (
            "letta/outreach_workflow_agent.v1-2025-03.af",
            &["tool:retrieve_candidate#", "tool:evaluate_candidate#"],
        ),
        // Graphiti's sample is input episodes only.
        ("memory/graphiti_sample-episode.json", &[]),
        // OpenTelemetry: tool spans' results and tool responses in model calls' input;
        // agento's pipeline and the Vercel fixture ran no tool.
        (
            "openinference-phoenix/openinference_client_span_input_output_only.attrs.json",
            &["tool:get_weather#1234"],
        ),
        (
            "openinference-phoenix/openinference_client_span_tool_calls.attrs.json",
            &["tool:get_weather#1234"],
        ),
        ("otel-genai/agento_run.otlp.jsonl", &[]),
        (
            "otel-genai/agx_sample_otel_json_traces.json",
            &["tool:list_dir#call_synth_001"],
        ),
        (
            "otel-genai/any-agent_GOOGLE_trace.json",
            &["tool:get_current_time#", "tool:write_file#"],
        ),
        (
            "otel-genai/any-agent_LANGCHAIN_trace.json",
            &["tool:get_current_time#", "tool:write_file#"],
        ),
        (
            "otel-genai/any-agent_OPENAI_trace.json",
            &["tool:get_current_time#", "tool:write_file#"],
        ),
        (
            "otel-genai/any-agent_SMOLAGENTS_trace.json",
            &["tool:get_current_time#", "tool:write_file#"],
        ),
        (
            "otel-genai/openinference-fixture_otel_genai_client_span_tool_calls.attrs.json",
            &["tool:get_weather#1234"],
        ),
        (
            "otel-genai/openinference-fixture_otel_genai_deprecated_client_span_tool_calls.attrs.json",
            &["tool:get_weather#1234"],
        ),
        (
            "otel-genai/openinference-fixture_otel_genai_tool_execution_span.attrs.json",
            &["tool:get_weather#1234"],
        ),
        ("otel-genai/vercel-ai-v6_all-spans.json", &[]),
    ];
    let dir = external::dir().expect("the external traces");
    for sub in std::fs::read_dir(&dir).expect("the directory") {
        let sub = sub.expect("an entry").path();
        if !sub.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&sub).expect("a folder") {
            let p = f.expect("an entry").path();
            let rel = p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
            assert!(
                table.iter().any(|(n, _)| *n == rel),
                "{rel} is not in the table: add it"
            );
        }
    }
    let mut non_empty = 0;
    for (rel, want) in table {
        let m = model(rel);
        let mut held: Vec<(String, String)> = Vec::new();
        let mut sigma: Vec<String> = Vec::new();
        for tl in m.timelines() {
            assert!(tl.errors().is_empty(), "{rel}: {:?}", tl.errors());
            for g in state_at(tl.bdi_log(), m.log(), tl.len()).ground {
                held.push((g.name.to_string(), g.source.unwrap_or("").to_string()));
            }
            // What the issue measures: Σ itself at the last step, whose rows the ground
            // beliefs are (value atoms `name = value`).
            sigma.extend(
                tl.sigma_at(m.log(), tl.len())
                    .iter()
                    .map(|b| b.id().to_string()),
            );
        }
        assert_eq!(held.is_empty(), want.is_empty(), "{rel}: {held:?}");
        for (n, _) in &held {
            assert!(
                sigma.contains(n),
                "{rel}: {n} is held but not a row of Σ: {sigma:?}"
            );
        }
        non_empty += usize::from(!held.is_empty());
        for w in *want {
            assert!(
                held.iter().any(|(n, _)| n.starts_with(w)),
                "{rel}: nothing held named {w}…: {held:?}"
            );
        }
        // An observation is named and sourced as one, never as memory or an assertion.
        for (n, source) in &held {
            if let Some(rest) = n.strip_prefix("tool:") {
                let tool = rest.split('#').next().unwrap();
                assert_eq!(source, &format!("tool:{tool}"), "{rel}: {n}");
            }
        }
    }
    assert!(
        non_empty >= 16,
        "{non_empty} of {} end with held ground beliefs (rows of Σ)",
        table.len()
    );
    assert_eq!(non_empty, 23);
    // Letta's edits: the block holds the value of the last edit, not an earlier one.
    let m = model("letta/memgpt_agent_with_convo.v1-2025-03.af");
    let tl = &m.timelines()[0];
    let last = state_at(tl.bdi_log(), m.log(), tl.len());
    let human = last
        .ground
        .iter()
        .find(|g| g.name == "human")
        .expect("human");
    let text = human.value.and_then(Value::as_str).unwrap_or("");
    assert!(text.contains("First name: Sam"), "{text}");
    assert!(
        !text.contains("First name: Chad") && !text.contains("First name: Sarah"),
        "{text}"
    );
}
