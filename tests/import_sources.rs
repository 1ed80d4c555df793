//! Sources of key-value beliefs (issue 25, item 3), each with a real or recorded client:
//!
//! - OpenTelemetry GenAI memory operations emitted by the real OpenTelemetry Python SDK
//!   (`tests/support/otel_memory_agent.py`, in `target/otel-venv`): at the end the updated
//!   record is held with its new value, the overwritten value and the deleted record are not,
//!   a delete naming no record empties its store, and a search keeps its hits and records;
//! - LangGraph's own SQLite checkpointer with a fake chat model
//!   (`tests/data/langgraph/checkpoint_graph.py`, in `target/langgraph-venv`, made by
//!   `scripts/setup-langgraph.sh`): each checkpoint a step, each channel a key, a changed
//!   channel a revision caused by the node that wrote it, the tool's answer an observation;
//! - mem0's history (`tests/data/mem0/history.json`, rows in the shape `Memory.history()`
//!   returns, written by hand: running mem0 needs an LLM);
//! - the observation and state helpers every importer shares.
//!
//! The Python clients are ignored, with the reason, when their venv is missing (build.rs for
//! LangGraph; the OpenTelemetry SDK is installed on first use); under CI they must run.

use std::path::{Path, PathBuf};
use std::process::Command;

use doxascope::model::Model;
use doxascope::model::bdi::state_at;
use doxascope::trace::import::observe::{self, Channels, StateWrite, ToolResult};
use doxascope::trace::import::write::V1Out;
use doxascope::trace::import::{Format, detect, import};
use doxascope::trace::{Body, Item, Reader, ReaderConfig};
use serde_json::{Value, json};

#[path = "support/otel_venv.rs"]
mod otel;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Detects the format of a file by its content (under a neutral name) and imports it.
fn open(path: &Path) -> (Format, Vec<u8>) {
    let bytes = std::fs::read(path).expect("read");
    let head = &bytes[..bytes.len().min(doxascope::trace::import::HEAD_BYTES)];
    let format = detect(Path::new("trace.dat"), head);
    let imp = import(format, &bytes, &path.to_string_lossy())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (format, imp.v1)
}

/// The events of v1 text, which must read without a problem.
fn events(v1: &[u8]) -> Vec<doxascope::trace::Event> {
    let mut r = Reader::new("t", ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(v1, &mut items);
    r.finish(&mut items);
    items
        .into_iter()
        .map(|i| match i {
            Item::Event(e) => e,
            Item::Problem(p) => panic!("the imported v1 has a problem: {p:?}"),
        })
        .collect()
}

/// (name, value) of every ground belief held at the end of each session, and the model.
fn held(v1: &[u8]) -> (Vec<(String, Value)>, Model) {
    let m = Model::from_bytes("t", v1);
    let mut out = Vec::new();
    for tl in m.timelines() {
        assert!(tl.errors().is_empty(), "{:?}", tl.errors());
        for g in state_at(tl.bdi_log(), m.log(), tl.len()).ground {
            out.push((g.name.to_string(), g.value.cloned().unwrap_or(Value::Null)));
        }
    }
    (out, m)
}

fn value_of<'a>(held: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    held.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn field(e: &doxascope::trace::Event, k: &str) -> Value {
    e.extra.value(k).unwrap_or(Value::Null)
}

#[test]
fn otel_memory_operations_from_the_python_sdk_end_in_the_right_records() {
    let Some(py) = otel::python("import_sources") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("spans.json");
    let o = Command::new(&py)
        .arg(root().join("tests/support/otel_memory_agent.py"))
        .arg(&file)
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "the agent failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (format, v1) = open(&file);
    assert_eq!(format, Format::Otlp);
    let (held, m) = held(&v1);
    // The updated record with its new value; neither the overwritten value nor the deleted
    // record; the scratch store emptied by a delete naming no record.
    assert_eq!(value_of(&held, "prefs/seat"), Some(&json!("window")));
    assert_eq!(value_of(&held, "prefs/meal_time"), Some(&json!("19:00")));
    assert!(value_of(&held, "prefs/diet").is_none(), "{held:?}");
    assert!(
        !held.iter().any(|(n, _)| n.starts_with("scratch/")),
        "{held:?}"
    );
    assert!(!held.iter().any(|(_, v)| v == "aisle"), "{held:?}");
    // The search's result and the tool's result are observations beside the records.
    assert_eq!(
        value_of(&held, "retrieval:prefs/seat"),
        Some(&json!("window"))
    );
    assert_eq!(
        value_of(&held, "tool:get_weather#call_w1"),
        Some(&json!({"sky": "sunny"}))
    );
    assert_eq!(held.len(), 4, "{held:?}");
    // The overwrite is a revision: the old value taken back, the span its cause.
    let tl = &m.timelines()[0];
    let seat: Vec<_> = tl
        .retracts()
        .iter()
        .filter_map(|r| r.ground)
        .filter_map(|g| tl.bdi_log().retracted(m.log(), g))
        .filter(|g| g.name == "prefs/seat")
        .collect();
    assert_eq!(seat.len(), 1);
    assert_eq!(seat[0].value, Some(&json!("aisle")));
    let evs = events(&v1);
    let reasons: Vec<String> = evs
        .iter()
        .filter_map(|e| match &e.body {
            Body::Retract(r) => Some(format!(
                "{} {}",
                r.target,
                r.reason.clone().unwrap_or_default()
            )),
            _ => None,
        })
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("prefs/seat update_memory")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .filter(|r| r.contains("the store scratch is emptied"))
            .count()
            == 2,
        "{reasons:?}"
    );
    // The search keeps its hit count and what it returned.
    let q = evs
        .iter()
        .find(|e| e.kind_name() == "memory_query")
        .expect("memory_query");
    assert_eq!(field(q, "hits"), json!(1));
    assert_eq!(field(q, "query"), json!("seat preference"));
    assert_eq!(field(q, "records"), json!([{"id": "seat", "score": 0.92}]));
}

/// Makes sure LangGraph is installed (a no-op once it is).
fn setup_langgraph() -> PathBuf {
    let o = Command::new("bash")
        .arg(root().join("scripts/setup-langgraph.sh"))
        .current_dir(root())
        .output()
        .expect("bash runs");
    assert!(
        o.status.success(),
        "langgraph could not be installed (is the package index reachable?): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::env::var_os("DOXASCOPE_LANGGRAPH_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/langgraph-venv"))
        .join("bin/python")
}

#[test]
#[cfg_attr(
    doxascope_no_langgraph,
    ignore = "LangGraph is not installed (scripts/setup-langgraph.sh installs it into target/langgraph-venv)"
)]
fn a_langgraph_sqlite_checkpointer_gives_a_step_per_checkpoint_and_a_key_per_channel() {
    let py = setup_langgraph();
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("checkpoints.sqlite");
    let o = Command::new(&py)
        .arg(root().join("tests/data/langgraph/checkpoint_graph.py"))
        .arg(&db)
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "the graph failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (format, v1) = open(&db);
    assert_eq!(format, Format::LangGraph);
    let evs = events(&v1);
    assert!(evs.iter().all(|e| &*e.session == "langgraph:trip-1"));
    // The input, the input written to the state (by LangGraph's __start__ node), then one
    // checkpoint per node: think, tools, decide.
    let cps: Vec<_> = evs
        .iter()
        .filter(|e| e.kind_name() == "checkpoint")
        .collect();
    let writers: Vec<Value> = cps.iter().map(|e| field(e, "written_by")).collect();
    assert_eq!(
        writers,
        [
            json!([]),
            json!(["__start__"]),
            json!(["think"]),
            json!(["tools"]),
            json!(["decide"])
        ]
    );
    let steps: Vec<Value> = cps.iter().map(|e| field(e, "step")).collect();
    assert_eq!(steps, [json!(-1), json!(0), json!(1), json!(2), json!(3)]);
    let (held, m) = held(&v1);
    assert_eq!(value_of(&held, "plan"), Some(&json!("answer")));
    assert_eq!(value_of(&held, "count"), Some(&json!(3)));
    let msgs = value_of(&held, "messages")
        .and_then(Value::as_array)
        .expect("messages");
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[3]["content"], "It is sunny in Lisbon.");
    // The tool's answer is an observation.
    assert_eq!(
        value_of(&held, "tool:lookup#call_1"),
        Some(&json!("Lisbon: sunny"))
    );
    // plan: search, then answer: one revision, caused by the node decide.
    let tl = &m.timelines()[0];
    let hist = tl.bdi_log().history(m.log(), "plan", tl.len());
    assert_eq!(hist.len(), 2);
    let reasons: Vec<String> = evs
        .iter()
        .filter_map(|e| match &e.body {
            Body::Retract(r) if r.target == "plan" => r.reason.as_deref().map(str::to_string),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 1);
    assert!(reasons[0].contains("node decide"), "{reasons:?}");
    // Internal channels are not state.
    assert!(
        !held
            .iter()
            .any(|(n, _)| n.starts_with("__") || n.starts_with("branch:"))
    );
}

/// The same graph traced by LangChain's tracer (the runs the LangSmith tracer sends): the
/// channels come from the node runs' outputs and the graph's final output.
#[test]
#[cfg_attr(
    doxascope_no_langgraph,
    ignore = "LangGraph is not installed (scripts/setup-langgraph.sh installs it into target/langgraph-venv)"
)]
fn langgraph_runs_traced_by_langchain_give_the_channels_at_each_node() {
    let py = setup_langgraph();
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = dir.path().join("runs.json");
    let o = Command::new(&py)
        .arg(root().join("tests/data/langgraph/checkpoint_graph.py"))
        .arg(dir.path().join("checkpoints.sqlite"))
        .arg(&runs)
        .output()
        .expect("python runs");
    assert!(
        o.status.success(),
        "the graph failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (format, v1) = open(&runs);
    assert_eq!(format, Format::LangSmith);
    let (held, m) = held(&v1);
    assert_eq!(value_of(&held, "plan"), Some(&json!("answer")));
    assert_eq!(value_of(&held, "count"), Some(&json!(3)));
    // The messages channel only from the graph's output (a node's list is an update that
    // add_messages appends), with the tool's answer among them an observation.
    assert_eq!(
        value_of(&held, "messages")
            .and_then(Value::as_array)
            .map(Vec::len),
        Some(4)
    );
    assert_eq!(
        value_of(&held, "tool:lookup#call_1"),
        Some(&json!("Lisbon: sunny"))
    );
    let tl = &m.timelines()[0];
    assert_eq!(tl.bdi_log().history(m.log(), "count", tl.len()).len(), 3);
    assert_eq!(tl.bdi_log().history(m.log(), "messages", tl.len()).len(), 1);
    let evs = events(&v1);
    let reasons: Vec<String> = evs
        .iter()
        .filter_map(|e| match &e.body {
            Body::Retract(r) if r.target == "plan" => r.reason.as_deref().map(str::to_string),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        ["state channel plan written by node decide (step 3)"]
    );
}

#[test]
fn a_mem0_history_is_memory_with_its_revisions() {
    let (format, v1) = open(&root().join("tests/data/mem0/history.json"));
    assert_eq!(format, Format::Mem0);
    let (held, m) = held(&v1);
    assert_eq!(
        held,
        vec![("m-seat".to_string(), json!("Prefers a window seat"))]
    );
    let evs = events(&v1);
    let kinds: Vec<&str> = evs.iter().map(|e| e.kind_name()).collect();
    // In the order things happened (the DELETE row comes before the UPDATE in the file,
    // but happened after it).
    assert_eq!(
        kinds,
        [
            "session", "belief", "belief", "retract", "belief", "retract"
        ]
    );
    let Body::Retract(r) = &evs[3].body else {
        panic!()
    };
    assert_eq!(r.target, "m-seat");
    assert_eq!(
        r.reason.as_deref(),
        Some("mem0 UPDATE (history h3): Prefers an aisle seat → Prefers a window seat")
    );
    let Body::Retract(r) = &evs[5].body else {
        panic!()
    };
    assert_eq!(r.target, "m-diet");
    let tl = &m.timelines()[0];
    assert_eq!(tl.bdi_log().history(m.log(), "m-seat", tl.len()).len(), 2);
}

#[test]
fn tool_results_are_observations_and_failed_calls_observe_nothing() {
    let mut out = V1Out::default();
    let ok = json!("72F and sunny");
    let blank = json!(" ");
    let t = |call, result, failed| ToolResult {
        session: "s",
        tool: "weather",
        call,
        result,
        failed,
        ts: None,
        from: "here",
    };
    assert!(observe::tool_result(&mut out, t("c1", &ok, false)));
    assert!(!observe::tool_result(&mut out, t("c2", &ok, true)));
    assert!(!observe::tool_result(&mut out, t("c3", &blank, false)));
    assert!(!observe::tool_result(
        &mut out,
        t("c4", &Value::Null, false)
    ));
    // A tool response among messages, in LangChain's constructor form, once per call.
    let msgs = [
        json!({"role": "assistant", "tool_calls": [{"id": "c9", "function": {"name": "lookup"}}]}),
        json!({"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "ToolMessage"],
               "kwargs": {"content": "found", "tool_call_id": "c9", "status": "success"}}),
    ];
    let mut seen = Default::default();
    assert_eq!(
        observe::tool_messages(&mut out, "s", &msgs, &mut seen, None, "m"),
        1
    );
    assert_eq!(
        observe::tool_messages(&mut out, "s", &msgs, &mut seen, None, "m"),
        0
    );
    let v1 = out.finish().v1;
    let (held, _) = held(&v1);
    assert_eq!(
        held,
        vec![
            ("tool:lookup#c9".to_string(), json!("found")),
            ("tool:weather#c1".to_string(), json!("72F and sunny")),
        ]
    );
    for e in events(&v1) {
        assert_eq!(field(&e, "x_observation"), json!("tool result"));
        let Body::Belief(b) = &e.body else { panic!() };
        assert!(b.source.as_deref().unwrap().starts_with("tool:"));
    }
}

#[test]
fn a_changed_state_channel_is_a_revision_and_an_unchanged_one_is_not_written_again() {
    let mut out = V1Out::default();
    let mut ch = Channels::default();
    let obj = |v: Value| v.as_object().cloned().unwrap();
    let s1 = obj(json!({"plan": "search", "count": 1}));
    let s2 = obj(json!({"plan": "answer", "count": 1}));
    let w = |values| StateWrite {
        session: "s",
        framework: "langgraph",
        writer: "node agent",
        values,
        ts: None,
        from: "x",
    };
    assert_eq!(ch.write(&mut out, w(&s1)), 2);
    assert_eq!(ch.write(&mut out, w(&s2)), 1);
    ch.remove(&mut out, &w(&s2), "count");
    let v1 = out.finish().v1;
    let evs = events(&v1);
    let retracts: Vec<String> = evs
        .iter()
        .filter_map(|e| match &e.body {
            Body::Retract(r) => Some(format!("{}: {}", r.target, r.reason.clone().unwrap())),
            _ => None,
        })
        .collect();
    assert_eq!(
        retracts,
        [
            "plan: state channel plan written by node agent",
            "count: state channel count removed by node agent"
        ]
    );
    let (held, _) = held(&v1);
    assert_eq!(held, vec![("plan".to_string(), json!("answer"))]);
}
