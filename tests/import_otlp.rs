//! The OpenTelemetry importer (`doxascope::trace::import::otlp`):
//! - on the held-out real files of `../shared/external-traces/{otel-genai,
//!   openinference-phoenix}`: each is detected as OpenTelemetry and opens without an error,
//!   with its event counts per kind (the files are read where they are, not copied: see
//!   `external_dir`);
//! - on files written here for the pitfalls (`tests/data/otel/`): children before parents,
//!   a trace spread over three requests, the three GenAI message encodings, memory updates
//!   as retractions, evaluation events, errors, orphans, a broken line, base64 ids.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use doxascope::trace::import::{self, Format};

#[path = "support/external.rs"]
mod external;
use doxascope::trace::{Event, Item, Reader, ReaderConfig};

/// The v1 reader's events; panics on any problem (an importer must write clean v1).
fn events(v1: &[u8]) -> Vec<Event> {
    let mut r = Reader::new("t", ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(v1, &mut items);
    r.finish(&mut items);
    items
        .into_iter()
        .map(|it| match it {
            Item::Event(e) => e,
            Item::Problem(p) => panic!("the importer wrote a bad v1 line: {p:?}"),
        })
        .collect()
}

fn counts(evs: &[Event]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for e in evs {
        *m.entry(e.kind_name().to_string()).or_default() += 1;
    }
    m
}

fn field(e: &Event, name: &str) -> Option<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(&e.to_json_line())
        .ok()?
        .get(name)
        .cloned()
}

fn open(path: &Path) -> (Vec<Event>, Vec<import::ImportNote>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let head = &bytes[..bytes.len().min(8192)];
    assert_eq!(
        import::detect(path, head),
        Format::Otlp,
        "{} is not detected as OpenTelemetry",
        path.display()
    );
    let name = path
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into());
    let imp = import::import(Format::Otlp, &bytes, &name)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (events(&imp.v1), imp.notes)
}

/// Where the held-out external traces are (tests/support/external.rs).
fn external_dir() -> Option<PathBuf> {
    external::dir()
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn every_held_out_otel_file_opens_with_its_counts() {
    let Some(dir) = external_dir() else { return };
    // (file, [(kind, count)], sessions). Counts were checked against each file by hand:
    // spans per operation, messages captured or not (see the comments).
    let expected: &[(&str, &[(&str, usize)])] = &[
        // 2 traces (the plan LLM call is a trace of its own); 4 OpenInference AGENT spans
        // (the pipeline and three sub-agents), 2 CHAIN spans, one LLM call whose output is
        // in the custom gen_ai.response.content.
        (
            "otel-genai/agento_run.otlp.jsonl",
            &[
                ("intention", 4),
                ("llm_call", 1),
                ("session", 2),
                ("span", 2),
                ("thought", 1),
            ],
        ),
        // Two chat spans with indexed prompt/completion attributes, one tool span.
        (
            "otel-genai/agx_sample_otel_json_traces.json",
            &[
                ("belief", 1),
                ("llm_call", 2),
                ("session", 1),
                ("thought", 2),
                ("tool_call", 1),
            ],
        ),
        // any-agent: invoke_agent root (last in the file), call_llm and execute_tool spans;
        // the model outputs are tool requests (no thought) except where noted; the answer is
        // the wrapper's final_output when the agent's models gave no closing text.
        (
            "otel-genai/any-agent_GOOGLE_trace.json",
            &[
                ("answer", 1),
                ("belief", 3),
                ("intention", 1),
                ("llm_call", 3),
                ("session", 1),
                ("tool_call", 3),
            ],
        ),
        (
            "otel-genai/any-agent_LANGCHAIN_trace.json",
            &[
                ("answer", 1),
                ("belief", 2),
                ("intention", 1),
                ("llm_call", 4),
                ("session", 1),
                ("thought", 1),
                ("tool_call", 2),
            ],
        ),
        (
            "otel-genai/any-agent_OPENAI_trace.json",
            &[
                ("answer", 1),
                ("belief", 2),
                ("intention", 1),
                ("llm_call", 3),
                ("session", 1),
                ("tool_call", 2),
            ],
        ),
        (
            "otel-genai/any-agent_SMOLAGENTS_trace.json",
            &[
                ("answer", 1),
                ("belief", 3),
                ("intention", 1),
                ("llm_call", 3),
                ("session", 1),
                ("tool_call", 3),
            ],
        ),
        // Attribute maps: one span each, no ids, in the file's own session.
        (
            "otel-genai/openinference-fixture_otel_genai_client_span_tool_calls.attrs.json",
            &[
                ("belief", 1),
                ("llm_call", 1),
                ("session", 1),
                ("thought", 1),
            ],
        ),
        (
            "otel-genai/openinference-fixture_otel_genai_deprecated_client_span_tool_calls.attrs.json",
            &[
                ("belief", 1),
                ("llm_call", 1),
                ("session", 1),
                ("thought", 1),
            ],
        ),
        (
            "otel-genai/openinference-fixture_otel_genai_tool_execution_span.attrs.json",
            &[("belief", 1), ("session", 1), ("tool_call", 1)],
        ),
        // Vercel: 10 spans, each in its own trace; generateText/streamText/generateObject are
        // agent runs (intention + answer, generateObject's answer is its object), the
        // do* spans model calls, embed spans other spans.
        (
            "otel-genai/vercel-ai-v6_all-spans.json",
            &[
                ("answer", 3),
                ("intention", 4),
                ("llm_call", 4),
                ("session", 10),
                ("span", 2),
                ("thought", 3),
            ],
        ),
        (
            "openinference-phoenix/openinference_client_span_input_output_only.attrs.json",
            &[
                ("belief", 1),
                ("llm_call", 1),
                ("session", 1),
                ("thought", 1),
            ],
        ),
        (
            "openinference-phoenix/openinference_client_span_tool_calls.attrs.json",
            &[
                ("belief", 1),
                ("llm_call", 1),
                ("session", 1),
                ("thought", 1),
            ],
        ),
    ];
    for sub in ["otel-genai", "openinference-phoenix"] {
        for f in std::fs::read_dir(dir.join(sub)).expect("read dir") {
            let rel = format!("{sub}/{}", f.expect("entry").file_name().to_string_lossy());
            assert!(
                expected.iter().any(|(n, _)| *n == rel),
                "{rel} has no expected counts: add it"
            );
        }
    }
    for (file, want) in expected {
        let (evs, _notes) = open(&dir.join(file));
        let want: BTreeMap<String, usize> = want.iter().map(|(k, n)| (k.to_string(), *n)).collect();
        assert_eq!(counts(&evs), want, "{file}");
    }
}

#[test]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn the_text_lands_in_the_right_events() {
    let Some(dir) = external_dir() else { return };
    // OpenInference's flattened messages: the model's reply is a thought.
    let (evs, _) =
        open(&dir.join("openinference-phoenix/openinference_client_span_tool_calls.attrs.json"));
    let t = evs
        .iter()
        .find(|e| e.kind_name() == "thought")
        .expect("thought");
    assert_eq!(
        field(t, "text"),
        Some("The weather in Paris is currently rainy with a temperature of 57°F.".into())
    );
    let call = evs
        .iter()
        .find(|e| e.kind_name() == "llm_call")
        .expect("llm_call");
    assert_eq!(field(call, "model"), Some("gpt-4-0613".into()));
    assert_eq!(field(call, "input_tokens"), Some(97.into()));
    // any-agent's 128-bit decimal ids: the session is named by the trace id's hex digits.
    let (evs, _) = open(&dir.join("otel-genai/any-agent_OPENAI_trace.json"));
    let want = format!("{:032x}", 100927429609276267646756448943279827607u128);
    let s = &evs[0];
    assert_eq!(s.kind_name(), "session");
    assert_eq!(
        field(s, "meta").and_then(|m| m.get("trace_id").cloned()),
        Some(want.into())
    );
    let intention = evs
        .iter()
        .find(|e| e.kind_name() == "intention")
        .expect("intention");
    assert!(
        field(intention, "goal")
            .and_then(|g| g.as_str().map(str::to_string))
            .is_some_and(|g| g.starts_with("Find what year it is")),
        "{intention:?}"
    );
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/otel")
        .join(name)
}

/// A trace over three requests (one per line), the agent span last: every span mapped, in
/// time order, with the tree in x_span/x_parent.
#[test]
fn collector_file_exporter_output_maps_span_by_span() {
    let (evs, notes) = open(&data("collector-file-exporter.jsonl"));
    let kinds: Vec<&str> = evs.iter().map(|e| e.kind_name()).collect();
    assert_eq!(
        kinds,
        [
            "session",
            "intention",
            "llm_call",
            "thought",
            "tool_call",
            "belief",
            "belief",
            "retract",
            "belief",
            "tool_call",
            "log",
            "llm_call",
            "log",
            "llm_call",
            "thought",
            "thought",
            "score",
            "answer"
        ],
        "{evs:#?}"
    );
    let seqs: Vec<u64> = evs.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=evs.len() as u64).collect::<Vec<_>>());
    assert!(
        evs.iter()
            .all(|e| &*e.session == "trip-planner a3ce929d0e0e4736")
    );
    let ev = |i: usize, k: &str| field(&evs[i], k).unwrap_or(serde_json::Value::Null);
    assert_eq!(ev(0, "agent"), "trip_planner");
    assert_eq!(ev(0, "meta")["conversation_id"], "conv-1");
    assert_eq!(ev(1, "id"), "00f067aa0ba902b7");
    assert_eq!(ev(1, "goal"), "Plan a day in Lisbon for Ana.");
    // Per-message events (≤ 1.36): system + user in, the choice's text and tool request out.
    assert_eq!(ev(2, "input")[0]["text"], "You plan trips.");
    assert_eq!(ev(2, "tool_calls")[0]["name"], "get_weather");
    assert_eq!(ev(3, "text"), "I will check the weather first.");
    assert_eq!(ev(4, "args")["city"], "Lisbon");
    assert_eq!(ev(4, "result")["sky"], "sunny");
    // The tool's result is an observation, kept apart from memory by its name and source.
    assert_eq!(ev(5, "source"), "tool:get_weather");
    assert!(
        ev(5, "name")
            .as_str()
            .is_some_and(|n| n.starts_with("tool:get_weather#"))
    );
    assert_eq!(ev(5, "value")["sky"], "sunny");
    assert_eq!(ev(5, "x_observation"), "tool result");
    // The memory record changed: its old value retracted, the new one believed.
    assert_eq!(ev(6, "value"), "vegetarian");
    assert_eq!(ev(7, "target"), "prefs/ana.diet");
    assert_eq!(ev(7, "x_old_value"), "vegetarian");
    assert_eq!(ev(8, "value"), "vegan");
    // The failed tool: status and the exception, once.
    assert_eq!(ev(9, "status"), "error");
    assert_eq!(ev(10, "level"), "error");
    assert!(
        ev(10, "message")
            .as_str()
            .is_some_and(|m| m.contains("TimeoutError"))
    );
    // The orphan model call without content: said once.
    assert_eq!(ev(11, "x_parent"), "ffffffffffffff01");
    assert_eq!(ev(12, "level"), "warn");
    // Indexed prompt + output messages with reasoning.
    assert_eq!(ev(14, "x_part"), "reasoning");
    assert_eq!(ev(16, "name"), "relevance");
    assert_eq!(ev(16, "value"), 0.875);
    assert_eq!(ev(16, "label"), "relevant");
    // It scores the model call it was recorded on: that event's id.
    assert_eq!(ev(16, "target"), "1000000000000007");
    assert_eq!(ev(13, "id"), "1000000000000007");
    // The agent's answer is the last text its models produced.
    assert_eq!(ev(17, "text"), ev(15, "text"));
    assert!(
        notes
            .iter()
            .any(|n| n.message.contains("1 span(s) name a parent"))
    );
}

#[test]
fn a_broken_line_is_reported_and_the_next_request_still_read() {
    let (evs, notes) = open(&data("broken-line.jsonl"));
    let sessions: std::collections::BTreeSet<String> =
        evs.iter().map(|e| e.session.to_string()).collect();
    assert_eq!(
        sessions.into_iter().collect::<Vec<_>>(),
        [
            "trip-planner 8448eb211c80319c",
            "trip-planner a3ce929d0e0e4736"
        ]
    );
    let broken = notes
        .iter()
        .find(|n| n.message.contains("skipped to the next request"))
        .expect("a note for the broken line");
    assert_eq!(broken.location, "line 2, at its end");
    // The base64 ids of the third line decode to the same trace id as in hex.
    let answer = evs
        .iter()
        .find(|e| e.kind_name() == "answer")
        .expect("answer");
    assert_eq!(field(answer, "x_span"), Some("b7ad6b7169203331".into()));
}

#[test]
fn nothing_importable_is_an_error_naming_the_place() {
    let e = import::import(
        Format::Otlp,
        b"{\"resourceSpans\": [ {\"scopeSpans\": 5}]}",
        "x",
    )
    .expect_err("bad");
    assert_eq!(e.format, Some(Format::Otlp));
    assert!(e.location.starts_with("line 1, column"), "{e}");
    assert!(
        e.to_string()
            .starts_with("looks like OpenTelemetry spans (otlp), but at line 1"),
        "{e}"
    );
    let e = import::import(Format::Otlp, b"   ", "x").expect_err("empty");
    assert!(e.message.contains("no spans"), "{e}");
}
