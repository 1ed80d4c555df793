//! Langfuse trace downloads (`{"trace": {...}, "observations": [...]}` as the UI's download
//! and the public API give them) and the per-observation ChatML companion files
//! (`{"<observation id>": {"input": {"success", "data"}, "output": ...}}`).
//!
//! A trace is a session; its observations, which the download lists twice (inside `trace`
//! and at the top) and in no particular order, are deduplicated by id and ordered by start
//! time. `AGENT` observations become intentions, `GENERATION`s `llm_call`s, `TOOL`s
//! `tool_call`s, the others (`SPAN`, `CHAIN`, ...) events of their own kind in lower case; an
//! observation at level `WARNING` or `ERROR` also gives a `log`. Scores (evaluations, human
//! annotations) become `score` events aimed at the observation they grade. Inputs, outputs
//! and metadata are often JSON written as a string, sometimes twice: they are decoded.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::observe;
use super::scan::{At, Pieces, Span};
use super::write::{V1Out, as_text, duration_ms, rfc3339};
use super::{Format, ImportError, Imported, broken, json_error};

/// Whether a head looks like a Langfuse download or ChatML companion.
pub fn detect(head: &[u8]) -> bool {
    let s = super::sniff(head);
    let download = s.top("trace")
        && (s.has(2, "projectId") || s.has(2, "observations") || s.top("observations"));
    download || chatml(&s)
}

/// The ChatML companion: observation ids at the top, each with `input`/`output` holding
/// `success` and `data`.
fn chatml(s: &super::sniff::Sniff) -> bool {
    let top: Vec<&str> = s.top_keys().collect();
    !top.is_empty()
        && top
            .iter()
            .all(|k| k.len() >= 8 && k.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
        && (s.has(2, "input") || s.has(2, "output"))
        && (s.has(3, "success") || s.has(3, "data"))
}

/// Imports a download or a ChatML companion.
pub fn import(bytes: &[u8], name: &str) -> Result<Imported, ImportError> {
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| json_error(Format::Langfuse, &e, "JSON"))?;
    let Value::Object(doc) = doc else {
        return Err(broken(
            Format::Langfuse,
            "the top level",
            "not a JSON object",
        ));
    };
    let mut out = V1Out::default();
    match doc.get("trace") {
        Some(Value::Object(trace)) => download(&mut out, &doc, trace),
        Some(_) => return Err(broken(Format::Langfuse, "trace", "not a JSON object")),
        None => companion(&mut out, &doc, name)?,
    }
    Ok(out.finish())
}

/// A value decoded while it is JSON written as a string (at most three times).
fn decoded(v: &Value) -> Value {
    let mut v = v.clone();
    for _ in 0..3 {
        match &v {
            // Text whose tree would pass the import budget stays text.
            Value::String(s)
                if super::budget::check_json(Format::Langfuse, "", s.as_bytes()).is_err() =>
            {
                break;
            }
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(inner) if !inner.is_number() && !inner.is_boolean() => v = inner,
                _ => break,
            },
            _ => break,
        }
    }
    v
}

/// The readable text of an input or output: a message's content, a prompt, an output.
fn text_of(v: &Value) -> Option<String> {
    let v = decoded(v);
    let t = match &v {
        Value::Null => return None,
        Value::String(s) => s.clone(),
        Value::Array(items) => match items.last() {
            Some(last) => return text_of(last),
            None => return None,
        },
        Value::Object(o) => {
            if let Some(m) = o.get("messages").and_then(Value::as_array) {
                return m.last().and_then(text_of);
            }
            match o
                .get("content")
                .or_else(|| o.get("text"))
                .or_else(|| o.get("output"))
                .or_else(|| o.get("prompt"))
                .or_else(|| o.get("input"))
            {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str).or(p.as_str()))
                    .collect::<Vec<_>>()
                    .join("\n"),
                Some(other) => return text_of(other),
                None => v.to_string(),
            }
        }
        other => other.to_string(),
    };
    (!t.is_empty()).then_some(t)
}

/// What the whole list of observations decides before the first is written.
#[derive(Debug, Default)]
struct Facts {
    /// The first model named, in start-time order.
    model: Option<String>,
    /// Whether any observation holds an input or an output.
    captured: bool,
    /// Whether there is any observation.
    any: bool,
    /// Whether any observation's metadata names a LangGraph node.
    langgraph_node: bool,
}

impl Facts {
    /// Counts one (deduplicated) observation in.
    fn add(&mut self, o: &Value) {
        self.any = true;
        self.captured |= o.get("input").is_some_and(|v| !v.is_null())
            || o.get("output").is_some_and(|v| !v.is_null());
        self.langgraph_node |= o
            .get("metadata")
            .is_some_and(|m| as_text(m).contains("langgraph_node"));
    }
}

/// An observation's model, when it names one.
fn model_of(o: &Value) -> Option<String> {
    o.get("model").and_then(Value::as_str).map(str::to_string)
}

/// An observation's start, for ordering (no start: last).
fn start_of(o: &Value) -> f64 {
    o.get("startTime")
        .and_then(Value::as_str)
        .and_then(crate::trace::time::parse_rfc3339)
        .unwrap_or(f64::MAX)
}

/// The observations' and scores' lists, where they are in a download.
const OBS_LISTS: [&str; 2] = ["observations", "trace.observations"];
const SCORE_LISTS: [&str; 2] = ["scores", "trace.scores"];

fn download(out: &mut V1Out, doc: &Map<String, Value>, trace: &Map<String, Value>) {
    // Observations: listed inside the trace and at the top; one per id.
    let mut seen = HashSet::new();
    let mut obs: Vec<(&Value, String)> = Vec::new();
    let mut facts = Facts::default();
    for (where_, list) in OBS_LISTS
        .into_iter()
        .zip([doc.get("observations"), trace.get("observations")])
    {
        for (i, o) in list
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let id = o.get("id").map(as_text).unwrap_or_default();
            if seen.insert(id) {
                facts.add(o);
                obs.push((o, format!("{where_}[{i}]")));
            }
        }
    }
    obs.sort_by(|a, b| start_of(a.0).total_cmp(&start_of(b.0)));
    facts.model = obs.iter().find_map(|(o, _)| model_of(o));
    let mut run = Run::start(out, trace, &facts);
    for (o, loc) in &obs {
        run.observation(out, o, loc);
    }
    run.end(out, trace, &facts);
    let mut scores_seen = HashSet::new();
    for (where_, list) in SCORE_LISTS
        .into_iter()
        .zip([doc.get("scores"), trace.get("scores")])
    {
        for (i, s) in list
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let id = s.get("id").map(as_text).unwrap_or_default();
            if scores_seen.insert(id) {
                score(out, &run.session, s, &format!("{where_}[{i}]"));
            }
        }
    }
    corrections(out, trace);
}

/// The note for a trace's corrections, which v1 has no place for.
fn corrections(out: &mut V1Out, trace: &Map<String, Value>) {
    if trace
        .get("corrections")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty())
    {
        out.note("trace.corrections", "corrections have no v1 home; left out");
    }
}

/// A download being written: its session, the latest timestamp and the tool calls seen.
struct Run {
    session: String,
    last_ts: Option<String>,
    /// Tool calls observed in the session (a model call's input repeats earlier results).
    observed: HashSet<String>,
}

impl Run {
    /// The session and what the trace itself says (its input as the goal), before the
    /// observations (`trace` without its lists is enough).
    fn start(out: &mut V1Out, trace: &Map<String, Value>, facts: &Facts) -> Run {
        let trace_id = trace.get("id").map(as_text).unwrap_or_default();
        let session = trace
            .get("sessionId")
            .filter(|s| !s.is_null())
            .map(as_text)
            .unwrap_or_else(|| format!("langfuse:{trace_id}"));
        let ts = trace
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(rfc3339)
            .map(|t| t.0);
        let mut meta = Map::new();
        meta.insert("format".into(), "langfuse".into());
        meta.insert("trace_id".into(), trace_id.clone().into());
        for k in [
            "name",
            "userId",
            "tags",
            "environment",
            "release",
            "version",
            "projectId",
        ] {
            if let Some(v) = trace.get(k).filter(|v| !v.is_null()) {
                meta.insert(k.into(), v.clone());
            }
        }
        if let Some(m) = trace.get("metadata").filter(|v| !v.is_null()) {
            meta.insert("metadata".into(), decoded(m));
        }
        out.event(&session, "session")
            .ts(ts.clone())
            .opt_text("agent", trace.get("name").and_then(Value::as_str))
            .opt_text("model", facts.model.as_deref())
            .field("meta", Value::Object(meta))
            .from("trace")
            .emit();
        if let Some(goal) = trace.get("input").and_then(text_of) {
            out.event(&session, "intention")
                .ts(ts.clone())
                .id(Some(&trace_id))
                .opt_text("type", trace.get("name").and_then(Value::as_str))
                .text("goal", &goal)
                .from("trace.input")
                .emit();
        }
        if facts.any && !facts.captured {
            out.event(&session, "log")
                .ts(ts.clone())
                .field("level", "warn")
                .text(
                    "message",
                    "content not captured: every observation's input and output is empty in this export",
                )
                .from("observations")
                .emit();
        }
        Run {
            session,
            last_ts: ts,
            observed: HashSet::new(),
        }
    }

    /// The next observation, in start-time order.
    fn observation(&mut self, out: &mut V1Out, o: &Value, loc: &str) {
        self.last_ts =
            observation(out, &self.session, o, loc, &mut self.observed).or(self.last_ts.take());
    }

    /// After the observations: a LangGraph run's final state, and the trace's output as the
    /// answer.
    fn end(&mut self, out: &mut V1Out, trace: &Map<String, Value>, facts: &Facts) {
        if is_langgraph(trace, facts) {
            langgraph_state(
                out,
                &self.session,
                trace,
                self.last_ts.clone(),
                &mut self.observed,
            );
        }
        if let Some(answer) = trace.get("output").and_then(text_of) {
            out.event(&self.session, "answer")
                .ts(self.last_ts.clone())
                .id(Some("answer"))
                .text("text", &answer)
                .from("trace.output")
                .emit();
        }
    }
}

/// Whether a trace is a LangGraph run: LangGraph's callback names the root `LangGraph` and
/// puts `langgraph_*` keys in the metadata of its nodes.
fn is_langgraph(trace: &Map<String, Value>, facts: &Facts) -> bool {
    trace.get("name").and_then(Value::as_str) == Some("LangGraph")
        || trace
            .get("metadata")
            .is_some_and(|m| as_text(m).contains("\"langgraph_node\""))
        || facts.langgraph_node
}

/// A LangGraph run's output is the graph's state when it finished: each channel a ground
/// belief (source `state:langgraph`), and the tool responses among its messages
/// observations.
fn langgraph_state(
    out: &mut V1Out,
    session: &str,
    trace: &Map<String, Value>,
    ts: Option<String>,
    observed: &mut HashSet<String>,
) {
    let Some(Value::Object(state)) = trace.get("output").map(decoded) else {
        return;
    };
    if let Some(msgs) = state.get("messages").and_then(Value::as_array) {
        let msgs: Vec<Value> = msgs.iter().map(decoded).collect();
        observe::tool_messages(
            out,
            session,
            &msgs,
            observed,
            ts.clone(),
            "trace.output.messages",
        );
    }
    observe::Channels::default().write(
        out,
        observe::StateWrite {
            session,
            framework: "langgraph",
            writer: "the graph's output (the trace's output)",
            values: &state,
            ts,
            from: "trace.output",
        },
    );
}

/// One observation; returns its timestamp.
fn observation(
    out: &mut V1Out,
    session: &str,
    o: &Value,
    loc: &str,
    seen: &mut HashSet<String>,
) -> Option<String> {
    let ty = o.get("type").map(as_text).unwrap_or_default();
    let id = o.get("id").map(as_text);
    let name = o.get("name").map(as_text).unwrap_or_default();
    let ts = o
        .get("startTime")
        .and_then(Value::as_str)
        .and_then(rfc3339)
        .map(|t| t.0);
    let end = o.get("endTime").cloned().unwrap_or(Value::Null);
    let parent = o.get("parentObservationId").cloned().unwrap_or(Value::Null);
    let input = o.get("input").filter(|v| !v.is_null()).map(decoded);
    let output = o.get("output").filter(|v| !v.is_null()).map(decoded);
    let level = o.get("level").map(as_text).unwrap_or_default();
    let ev = match ty.as_str() {
        "AGENT" => out
            .event(session, "intention")
            .ts(ts.clone())
            .id(id.as_deref())
            .text("type", &name)
            .opt_text("goal", input.as_ref().and_then(text_of).as_deref()),
        "GENERATION" => out
            .event(session, "llm_call")
            .ts(ts.clone())
            .id(id.as_deref())
            .text("name", &name)
            .opt_text("model", o.get("model").and_then(Value::as_str))
            .opt_text("output", output.as_ref().and_then(text_of).as_deref())
            .field(
                "tool_calls",
                o.get("toolCallNames")
                    .cloned()
                    .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
                    .unwrap_or(Value::Null),
            )
            .field(
                "usage",
                o.get("usageDetails").cloned().unwrap_or(Value::Null),
            )
            .field("cost", o.get("costDetails").cloned().unwrap_or(Value::Null))
            .field(
                "x_model_parameters",
                o.get("modelParameters").cloned().unwrap_or(Value::Null),
            ),
        "TOOL" => out
            .event(session, "tool_call")
            .ts(ts.clone())
            .id(id.as_deref())
            .text("tool", &name)
            .field("args", input.clone().unwrap_or(Value::Null))
            .opt_text("result", output.as_ref().and_then(text_of).as_deref()),
        other => {
            let kind = if other.is_empty() {
                "span".to_string()
            } else {
                super::write::source_kind("langfuse", &other.to_lowercase())
            };
            out.event(session, &kind)
                .ts(ts.clone())
                .id(id.as_deref())
                .text("name", &name)
                .field("x_input", input.clone().unwrap_or(Value::Null))
                .field("x_output", output.clone().unwrap_or(Value::Null))
        }
    };
    let status_message = o
        .get("statusMessage")
        .filter(|_| level == "ERROR" || level == "WARNING")
        .cloned()
        .unwrap_or(Value::Null);
    ev.field(
        "duration_ms",
        duration_ms(o.get("startTime"), o.get("endTime")),
    )
    .field("x_status_message", status_message)
    .field("x_parent", parent)
    .field("x_end", end)
    .field(
        "x_level",
        if level == "DEFAULT" || level.is_empty() {
            Value::Null
        } else {
            Value::String(level.clone())
        },
    )
    .from(loc.to_string())
    .emit();
    if ty == "GENERATION"
        && let Some(input) = &input
    {
        let call = id.clone().unwrap_or_else(|| out.count(session).to_string());
        observe::input_tool_results(
            out,
            session,
            input,
            seen,
            &call,
            ts.clone(),
            &format!("{loc}.input"),
        );
    }
    if ty == "TOOL"
        && let Some(result) = &output
    {
        let call = id.clone().unwrap_or_else(|| out.count(session).to_string());
        observe::tool_result(
            out,
            observe::ToolResult {
                session,
                tool: &name,
                call: &call,
                result,
                failed: level == "ERROR",
                ts: ts.clone(),
                from: loc,
            },
        );
    }
    if level == "WARNING" || level == "ERROR" {
        let msg = o
            .get("statusMessage")
            .map(as_text)
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| format!("{name} at level {level}"));
        out.event(session, "log")
            .ts(ts.clone())
            .field("level", if level == "ERROR" { "error" } else { "warn" })
            .text("message", &msg)
            .field(
                "x_observation",
                id.map(Value::String).unwrap_or(Value::Null),
            )
            .from(loc.to_string())
            .emit();
    }
    ts
}

fn score(out: &mut V1Out, session: &str, s: &Value, loc: &str) {
    let data_type = s.get("dataType").map(as_text).unwrap_or_default();
    let value = match (data_type.as_str(), s.get("value"), s.get("stringValue")) {
        ("BOOLEAN", Some(v), _) => v
            .as_f64()
            .map(|x| Value::Bool(x != 0.0))
            .unwrap_or(Value::Null),
        ("CATEGORICAL", _, Some(Value::String(t))) => Value::String(t.clone()),
        (_, Some(v @ (Value::Number(_) | Value::String(_) | Value::Bool(_))), _) => v.clone(),
        (_, _, Some(Value::String(t))) => Value::String(t.clone()),
        _ => Value::Null,
    };
    let label = match (data_type.as_str(), s.get("stringValue")) {
        ("NUMERIC" | "", Some(Value::String(t))) if !t.is_empty() => Some(t.clone()),
        _ => None,
    };
    let ts = s
        .get("timestamp")
        .or_else(|| s.get("createdAt"))
        .and_then(Value::as_str)
        .and_then(rfc3339)
        .map(|t| t.0);
    out.event(session, "score")
        .ts(ts)
        .id(s.get("id").and_then(Value::as_str))
        .text("name", &s.get("name").map(as_text).unwrap_or_default())
        .field("value", value)
        .opt_text("label", label.as_deref())
        .opt_text("explanation", s.get("comment").and_then(Value::as_str))
        .opt_text("target", s.get("observationId").and_then(Value::as_str))
        .opt_text(
            "source",
            s.get("source")
                .and_then(Value::as_str)
                .map(str::to_lowercase)
                .as_deref(),
        )
        .field(
            "x_data_type",
            s.get("dataType").cloned().unwrap_or(Value::Null),
        )
        .from(loc.to_string())
        .emit();
}

/// The ChatML companion: one `observation` per observation (an LLM call or a framework
/// step; the file does not say which), with its last input message and its output.
fn companion(out: &mut V1Out, doc: &Map<String, Value>, name: &str) -> Result<(), ImportError> {
    let session = std::path::Path::new(name)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "langfuse".into());
    if doc.is_empty() {
        return Err(broken(Format::Langfuse, "the top level", "no observations"));
    }
    out.event(&session, "session")
        .field(
            "meta",
            serde_json::json!({"format": "langfuse", "variant": "chatml"}),
        )
        .from("the file")
        .emit();
    out.note(
        "the file",
        "a ChatML companion holds no times or tree: observations are in the file's order",
    );
    let mut seen = HashSet::new();
    for (id, v) in doc {
        let data = |k: &str| {
            v.get(k)
                .and_then(|x| x.get("data"))
                .cloned()
                .unwrap_or(Value::Null)
        };
        let input = data("input");
        let output = data("output");
        if let Some(msgs) = input.as_array() {
            observe::tool_messages(
                out,
                &session,
                msgs,
                &mut seen,
                None,
                &format!("{id}.input.data"),
            );
        }
        let calls: Vec<Value> = output
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.get("tool_calls"))
            .filter(|c| c.as_array().is_some_and(|a| !a.is_empty()))
            .cloned()
            .collect();
        out.event(&session, "observation")
            .id(Some(id))
            .field("input_messages", input.as_array().map_or(0, Vec::len))
            .opt_text("x_last_input", text_of(&input).as_deref())
            .opt_text("output", text_of(&output).as_deref())
            .field(
                "tool_calls",
                if calls.is_empty() {
                    Value::Null
                } else {
                    Value::Array(calls)
                },
            )
            .from(id.clone())
            .emit();
    }
    Ok(())
}

/// [`import`] of a source read by place, a piece at a time: the document is checked whole
/// by the JSON parser (in bounded memory), then an index of the observations (id, start,
/// place) is built and each observation parsed again alone, in start-time order. What is
/// held is the index, one observation and the trace without its lists; the budget applies
/// to each piece instead of the file. The lines written are [`import`]'s, byte for byte.
pub fn import_at<S: At + ?Sized>(
    src: &S,
    name: &str,
    out: &mut V1Out,
    cap: usize,
) -> Result<(), ImportError> {
    let mut p = Pieces::open(src, Format::Langfuse, cap)?;
    let top = p.top_members()?;
    let Some(&trace_span) = top.get("trace") else {
        let mut doc = Map::new();
        for (k, span) in top {
            let v = p.piece(span, &k)?;
            doc.insert(k, v);
        }
        return companion(out, &doc, name);
    };
    if p.first_byte(trace_span)? != b'{' {
        return Err(broken(Format::Langfuse, "trace", "not a JSON object"));
    }
    let mut trace = Map::new();
    let mut trace_lists = (None, None);
    for (k, span) in p.members(trace_span)? {
        match k.as_str() {
            "observations" => trace_lists.0 = Some(span),
            "scores" => trace_lists.1 = Some(span),
            _ => {
                let v = p.piece(span, &format!("trace.{k}"))?;
                trace.insert(k, v);
            }
        }
    }
    let obs_lists = [top.get("observations").copied(), trace_lists.0];
    let (mut index, mut facts) = observations(&mut p, obs_lists)?;
    index.sort_by(|a, b| a.start.total_cmp(&b.start));
    if let Some(e) = index.iter().find(|e| e.has_model) {
        facts.model = model_of(&p.piece(e.span, &e.loc())?);
    }
    let mut run = Run::start(out, &trace, &facts);
    for e in &index {
        let loc = e.loc();
        let o = p.piece(e.span, &loc)?;
        run.observation(out, &o, &loc);
    }
    run.end(out, &trace, &facts);
    let mut seen = HashSet::new();
    let score_lists = [top.get("scores").copied(), trace_lists.1];
    for (where_, list) in SCORE_LISTS.into_iter().zip(score_lists) {
        p.each_item(list, |p, i, span| {
            let loc = format!("{where_}[{i}]");
            let s = p.piece(span, &loc)?;
            if seen.insert(s.get("id").map(as_text).unwrap_or_default()) {
                score(out, &run.session, &s, &loc);
            }
            Ok(())
        })?;
    }
    corrections(out, &trace);
    Ok(())
}

/// What the index needs of an observation ([`Facts::add`], [`start_of`], [`model_of`] and
/// its id), parsed without building its input and output: `null` and a missing key are both
/// `None`, as `Value::get(..).filter(non-null)` sees them.
#[derive(serde::Deserialize)]
struct Brief<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default, rename = "startTime")]
    start: Option<Value>,
    #[serde(default)]
    model: Option<Value>,
    #[serde(default, borrow)]
    input: Option<&'a serde_json::value::RawValue>,
    #[serde(default, borrow)]
    output: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    metadata: Option<Value>,
}

impl<'a> Brief<'a> {
    /// The brief of an observation's text; one that is no object or repeats a key (which
    /// a derived struct refuses) is read from its whole tree instead.
    fn of(text: &'a [u8]) -> Result<Self, serde_json::Error> {
        // A derived struct also reads an array (its items as the fields, in order): only an
        // object is read as one.
        let object = text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        if object && let Ok(b) = serde_json::from_slice(text) {
            return Ok(b);
        }
        let o: Value = serde_json::from_slice(text)?;
        let get = |k: &str| o.get(k).filter(|v| !v.is_null()).cloned();
        let present = |k: &str| o.get(k).is_some_and(|v| !v.is_null());
        let null: &'a serde_json::value::RawValue =
            serde_json::from_str("null").expect("null is JSON");
        Ok(Brief {
            id: get("id"),
            start: get("startTime"),
            model: get("model"),
            input: present("input").then_some(null),
            output: present("output").then_some(null),
            metadata: get("metadata"),
        })
    }
}

/// An observation as the index keeps it: where it is, where it was listed, its start.
struct Entry {
    span: Span,
    /// Which of [`OBS_LISTS`], and the place in it.
    list: u8,
    i: u32,
    start: f64,
    has_model: bool,
}

impl Entry {
    fn loc(&self) -> String {
        format!("{}[{}]", OBS_LISTS[self.list as usize], self.i)
    }
}

/// The index of the observations of both lists (deduplicated by id, the first kept, in list
/// order) and what they decide together. The index is held whole, so it is budgeted like a
/// tree: past the budget's tree size the file is refused.
fn observations<S: At + ?Sized>(
    p: &mut Pieces<'_, S>,
    lists: [Option<Span>; 2],
) -> Result<(Vec<Entry>, Facts), ImportError> {
    let max = super::budget::current().max_tree;
    let mut used = 0u64;
    let mut seen = HashSet::new();
    let mut index = Vec::new();
    let mut facts = Facts::default();
    for (list, span) in lists.into_iter().enumerate() {
        p.each_item(span, |p, i, span| {
            let loc = format!("{}[{i}]", OBS_LISTS[list]);
            let text = p.text(span, &loc)?;
            let o = Brief::of(&text).map_err(|e| json_error(Format::Langfuse, &e, &loc))?;
            let id = o.id.as_ref().map(as_text).unwrap_or_default();
            used += (id.len() + std::mem::size_of::<Entry>() + 48) as u64;
            if used > max {
                return Err(broken(
                    Format::Langfuse,
                    loc,
                    format!(
                        "the index of the observations would take over {} MiB, more than \
                         the import budget; refusing",
                        max >> 20
                    ),
                ));
            }
            if seen.insert(id) {
                facts.any = true;
                facts.captured |= o.input.is_some() || o.output.is_some();
                facts.langgraph_node |= o
                    .metadata
                    .as_ref()
                    .is_some_and(|m| as_text(m).contains("langgraph_node"));
                index.push(Entry {
                    span,
                    list: list as u8,
                    i: i as u32,
                    start: o
                        .start
                        .as_ref()
                        .and_then(Value::as_str)
                        .and_then(crate::trace::time::parse_rfc3339)
                        .unwrap_or(f64::MAX),
                    has_model: o.model.as_ref().and_then(Value::as_str).is_some(),
                });
            }
            Ok(())
        })?;
    }
    Ok((index, facts))
}
