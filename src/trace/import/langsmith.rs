//! LangSmith runs: the SDKs' ingest payloads (`{"post": [...], "patch": [...]}`, a run created
//! and later completed, merged here by id), LangChain run trees (`child_runs` nested), or a
//! plain list of runs. Runs are ordered by `dotted_order` (start time and ancestry in one
//! sortable string) where they have it, else by start time; each trace is a session.
//!
//! The root run gives the intention (its inputs) and the answer (its outputs); `llm` and
//! `chat_model` runs give `llm_call`s, `tool` runs `tool_call`s, other run types (`chain`,
//! `retriever`, `prompt`, `parser`, ...) events of their own kind; a run with an `error` also
//! gives a `log`. Start times are epoch milliseconds (JS SDK) or ISO texts (Python SDK).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::observe::{self, Channels, StateWrite};
use super::scan::{At, Pieces, Span};
use super::write::{V1Out, as_text, decode_nested, duration_ms, from_unix_millis, rfc3339};
use super::{Format, ImportError, Imported, broken, json_error};

/// Whether a head looks like LangSmith runs.
pub fn detect(head: &[u8]) -> bool {
    let s = super::sniff(head);
    let payload = (s.top("post") || s.top("patch"))
        && (s.has(2, "run_type") || s.has(2, "dotted_order") || s.has(2, "trace_id"));
    let run = s.top("run_type") && (s.top("id") || s.top("child_runs") || s.top("inputs"));
    let list = s.first == Some(b'[') && s.has(1, "run_type");
    payload || run || list
}

/// Imports runs.
pub fn import(bytes: &[u8], _name: &str) -> Result<Imported, ImportError> {
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| json_error(Format::LangSmith, &e, "JSON"))?;
    let mut out = V1Out::default();
    let mut runs: Vec<(Map<String, Value>, String)> = Vec::new();
    match &doc {
        Value::Object(o) if o.contains_key("post") || o.contains_key("patch") => {
            for (k, list) in ["post", "patch"].iter().map(|k| (*k, o.get(*k))) {
                match list {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(items)) => {
                        for (i, r) in items.iter().enumerate() {
                            let here = format!("{k}[{i}]");
                            let Value::Object(r) = r else {
                                return Err(broken(
                                    Format::LangSmith,
                                    here,
                                    "a run that is not a JSON object",
                                ));
                            };
                            flatten(r, &here, &mut runs);
                        }
                    }
                    Some(_) => return Err(broken(Format::LangSmith, k, "not a list")),
                }
            }
        }
        Value::Object(o) => flatten(o, "the run", &mut runs),
        Value::Array(items) => {
            for (i, r) in items.iter().enumerate() {
                let Value::Object(r) = r else {
                    return Err(broken(
                        Format::LangSmith,
                        format!("[{i}]"),
                        "a run that is not a JSON object",
                    ));
                };
                flatten(r, &format!("[{i}]"), &mut runs);
            }
        }
        _ => {
            return Err(broken(
                Format::LangSmith,
                "the top level",
                "neither runs nor a payload",
            ));
        }
    }
    // Create and patch records of one run, merged by id (a patch without an id names its
    // run by the end of its dotted order).
    let mut merged: Vec<(Map<String, Value>, String)> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for (r, loc) in runs {
        let id = run_id(&r);
        match id.as_ref().and_then(|i| by_id.get(i)) {
            Some(&k) => {
                for (key, v) in r {
                    if !v.is_null() {
                        merged[k].0.insert(key, v);
                    }
                }
                merged[k].1.push_str(&format!(" + {loc}"));
            }
            None => {
                if let Some(i) = id {
                    by_id.insert(i, merged.len());
                } else {
                    out.note(&loc, "a run without an id or dotted order: kept on its own");
                }
                merged.push((r, loc));
            }
        }
    }
    merged.sort_by_key(|a| order_key(&a.0));
    let maps: Vec<&Map<String, Value>> = merged.iter().map(|(r, _)| r).collect();
    let tree = Tree::of(&maps);
    let mut w = Writer::default();
    for (k, (r, loc)) in merged.iter().enumerate() {
        w.run(&mut out, r, loc, tree.trace_of(k), tree.is_root(r));
    }
    w.finish(&mut out);
    Ok(out.finish())
}

/// The runs' ancestry: which run has which id, to find a run's trace and whether it is a
/// root. Built from the merged runs in order (or, streamed, from the keys it needs).
struct Tree<'a> {
    maps: &'a [&'a Map<String, Value>],
    ids: HashMap<String, usize>,
}

impl<'a> Tree<'a> {
    fn of(maps: &'a [&'a Map<String, Value>]) -> Self {
        let ids = maps
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some((run_id(r)?, i)))
            .collect();
        Tree { maps, ids }
    }

    /// The trace of a run: its `trace_id`, else its root's (run trees carry no trace ids).
    fn trace_of(&self, mut i: usize) -> String {
        for _ in 0..=self.maps.len() {
            let r = self.maps[i];
            if let Some(t) = r.get("trace_id").filter(|v| !v.is_null()) {
                return as_text(t);
            }
            match r
                .get("parent_run_id")
                .filter(|v| !v.is_null())
                .and_then(|p| self.ids.get(&as_text(p)))
            {
                Some(&p) if p != i => i = p,
                _ => break,
            }
        }
        run_id(self.maps[i]).unwrap_or_else(|| "trace".into())
    }

    /// Whether a run is a root: it has no parent in the file.
    fn is_root(&self, r: &Map<String, Value>) -> bool {
        let parent = r.get("parent_run_id").filter(|v| !v.is_null()).map(as_text);
        parent.as_ref().is_none_or(|p| !self.ids.contains_key(p))
    }
}

/// A root's answer: its text, time and place in the source.
type Answer = (String, Option<String>, String);

/// The merged runs written in order: each trace's session, the answers (written last).
#[derive(Default)]
struct Writer {
    sessions: HashMap<String, String>,
    /// Per root: its session, and its answer (text, time, where).
    answers: Vec<(String, Answer)>,
    graph: Graph,
}

impl Writer {
    fn run(
        &mut self,
        out: &mut V1Out,
        r: &Map<String, Value>,
        loc: &str,
        trace: String,
        is_root: bool,
    ) {
        let fresh = !self.sessions.contains_key(&trace);
        let session = self
            .sessions
            .entry(trace.clone())
            .or_insert_with(|| {
                ptr(r, "/extra/metadata/thread_id")
                    .map(as_text)
                    .unwrap_or_else(|| format!("langsmith:{trace}"))
            })
            .clone();
        if let Some(a) = run(out, &session, r, loc, is_root, fresh, &trace) {
            self.answers.push((session.clone(), a));
        }
        self.graph.run(out, &session, r, loc, is_root);
        feedback(out, &session, r, loc);
    }

    fn finish(mut self, out: &mut V1Out) {
        self.graph.finish(out);
        for (session, (text, ts, loc)) in self.answers {
            out.event(&session, "answer")
                .ts(ts)
                .id(Some("answer"))
                .text("text", &text)
                .from(loc)
                .emit();
        }
    }
}

/// A JSON Pointer into an object.
fn ptr<'a>(m: &'a Map<String, Value>, p: &str) -> Option<&'a Value> {
    let rest = p.strip_prefix('/')?;
    let (first, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let v = m.get(first)?;
    if tail.is_empty() {
        Some(v)
    } else {
        v.pointer(&format!("/{tail}"))
    }
}

/// A run and its nested `child_runs`, in that order.
fn flatten(r: &Map<String, Value>, loc: &str, into: &mut Vec<(Map<String, Value>, String)>) {
    let mut own = r.clone();
    let children = own.remove("child_runs");
    into.push((own, loc.to_string()));
    for (i, c) in children
        .as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Value::Object(c) = c {
            flatten(c, &format!("{loc}.child_runs[{i}]"), into);
        }
    }
}

/// A run's feedback as the API returns runs (`feedback_stats`: per key the count `n` and the
/// mean `avg` of the scores given, or the `values` of categorical feedback): one `score` per
/// key, aimed at the run. A mean has no pass mark, so it is shown and never a failure.
fn feedback(out: &mut V1Out, session: &str, r: &Map<String, Value>, loc: &str) {
    let Some(Value::Object(stats)) = r.get("feedback_stats") else {
        return;
    };
    let id = run_id(r);
    for (key, st) in stats {
        let n = st.get("n").and_then(Value::as_u64);
        let value = match st.get("avg") {
            Some(v @ Value::Number(_)) => v.clone(),
            _ => Value::Null,
        };
        // Categorical feedback: its one value when all agree (so `fail` reads as failed),
        // else its values with their counts, most given first.
        let label = st.get("values").and_then(Value::as_object).and_then(|m| {
            if m.len() == 1 {
                return m.keys().next().cloned();
            }
            let mut vs: Vec<(&String, u64)> = m
                .iter()
                .map(|(k, c)| (k, c.as_u64().unwrap_or(0)))
                .collect();
            vs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            (!vs.is_empty()).then(|| {
                vs.iter()
                    .map(|(k, c)| format!("{k} ×{c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        });
        out.event(session, "score")
            .text("name", key)
            .field("value", value)
            .opt_text("label", label.as_deref())
            .opt_text(
                "explanation",
                n.map(|n| {
                    format!(
                        "mean of {n} feedback score{}",
                        if n == 1 { "" } else { "s" }
                    )
                })
                .as_deref(),
            )
            .opt_text("target", id.as_deref())
            .field("source", "langsmith feedback")
            .from(format!("{loc}.feedback_stats.{key}"))
            .emit();
    }
}

fn run_id(r: &Map<String, Value>) -> Option<String> {
    r.get("id")
        .filter(|v| !v.is_null())
        .map(as_text)
        .or_else(|| {
            let d = r.get("dotted_order")?.as_str()?;
            let last = d.rsplit('.').next()?;
            // `<timestamp>Z<run id>`
            last.split_once('Z').map(|(_, id)| id.to_string())
        })
}

/// The sort key of a run: its dotted order, else its start time.
fn order_key(r: &Map<String, Value>) -> (String, String) {
    let dotted = r
        .get("dotted_order")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let start = time(r.get("start_time")).unwrap_or_default();
    if dotted.is_empty() {
        (start, String::new())
    } else {
        (dotted, start)
    }
}

/// A start or end time: epoch milliseconds or an ISO text.
fn time(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Number(n) => n.as_i64().and_then(from_unix_millis),
        Value::String(s) => rfc3339(s).map(|t| t.0),
        _ => None,
    }
}

/// The readable text of inputs or outputs.
fn text_of(v: &Value) -> Option<String> {
    let v = decode_nested(v);
    let t = match &v {
        Value::Null => return None,
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            if let Some(c) = ptr(o, "/choices/0/message/content") {
                return text_of(c);
            }
            if let Some(g) = ptr(o, "/generations/0/0") {
                return g
                    .get("text")
                    .and_then(text_of)
                    .or_else(|| g.pointer("/message/data/content").and_then(text_of));
            }
            if let Some(m) = o.get("messages").and_then(Value::as_array) {
                let last = m.last()?;
                let last = last.as_array().and_then(|a| a.last()).unwrap_or(last);
                return last
                    .pointer("/data/content")
                    .or_else(|| last.get("content"))
                    .and_then(text_of);
            }
            match ["output", "input", "content", "text", "question", "query"]
                .iter()
                .find_map(|k| o.get(*k))
            {
                Some(x) => return text_of(x),
                None => v.to_string(),
            }
        }
        Value::Array(a) => {
            let parts: Vec<String> = a
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_string))
                .collect();
            if parts.is_empty() {
                v.to_string()
            } else {
                parts.join("\n")
            }
        }
        other => other.to_string(),
    };
    (!t.is_empty()).then_some(t)
}

#[allow(clippy::too_many_arguments)]
fn run(
    out: &mut V1Out,
    session: &str,
    r: &Map<String, Value>,
    loc: &str,
    is_root: bool,
    fresh: bool,
    trace: &str,
) -> Option<(String, Option<String>, String)> {
    let ty = r
        .get("run_type")
        .map(as_text)
        .unwrap_or_else(|| "chain".into());
    let name = r.get("name").map(as_text).unwrap_or_default();
    let id = run_id(r);
    let ts = time(r.get("start_time"));
    let end = time(r.get("end_time"));
    let took = duration_ms(r.get("start_time"), r.get("end_time"));
    // A run's `error` is kept on the event that stands for it (and logged below).
    let error = r.get("error").filter(|e| !e.is_null()).cloned();
    let inputs = r.get("inputs").cloned().unwrap_or(Value::Null);
    let outputs = r.get("outputs").cloned().unwrap_or(Value::Null);
    let model = ptr(r, "/extra/invocation_params/model")
        .or_else(|| ptr(r, "/extra/metadata/ls_model_name"))
        .or_else(|| outputs.get("model"))
        .or_else(|| outputs.pointer("/llm_output/model_name"))
        .map(as_text);
    if fresh {
        let mut meta = Map::new();
        meta.insert("format".into(), "langsmith".into());
        meta.insert("trace_id".into(), trace.into());
        if let Some(s) = r.get("session_name") {
            meta.insert("project".into(), s.clone());
        }
        out.event(session, "session")
            .ts(ts.clone())
            .text("agent", &name)
            .opt_text("model", model.as_deref())
            .field("meta", Value::Object(meta))
            .from(loc.to_string())
            .emit();
    }
    if is_root && let Some(goal) = text_of(&inputs) {
        out.event(session, "intention")
            .ts(ts.clone())
            .id(id.as_deref())
            .text("type", &name)
            .text("goal", &goal)
            .field(
                "status",
                error.as_ref().map_or(Value::Null, |_| Value::from("error")),
            )
            .field("error", error.clone().unwrap_or(Value::Null))
            .field("duration_ms", took.clone())
            .from(format!("{loc}.inputs"))
            .emit();
    }
    let parent = r.get("parent_run_id").cloned().unwrap_or(Value::Null);
    let tokens = r
        .get("events")
        .and_then(Value::as_array)
        .map(|e| {
            e.iter()
                .filter(|x| x.get("name").and_then(Value::as_str) == Some("new_token"))
                .count()
        })
        .filter(|n| *n > 0);
    match ty.as_str() {
        "llm" | "chat_model" => {
            let calls = outputs
                .pointer("/choices/0/message/tool_calls")
                .or_else(|| outputs.pointer("/generations/0/0/message/data/tool_calls"))
                .cloned()
                .filter(|c| c.as_array().is_some_and(|a| !a.is_empty()))
                .unwrap_or(Value::Null);
            if let Some(reasoning) = outputs
                .pointer("/choices/0/message/reasoning_content")
                .or_else(|| outputs.pointer("/choices/0/message/reasoning"))
                .and_then(text_of)
            {
                out.event(session, "thought")
                    .ts(ts.clone())
                    .text("text", &reasoning)
                    .from(format!("{loc}.outputs"))
                    .emit();
            }
            out.event(session, "llm_call")
                .ts(ts.clone())
                .id(id.as_deref())
                .text("name", &name)
                .opt_text("model", model.as_deref())
                .opt_text("output", text_of(&outputs).as_deref())
                .field("tool_calls", calls)
                .field(
                    "usage",
                    outputs
                        .get("usage")
                        .or_else(|| outputs.get("usage_metadata"))
                        .or_else(|| outputs.pointer("/llm_output/token_usage"))
                        .cloned()
                        .unwrap_or(Value::Null),
                )
                .field(
                    "finish_reason",
                    outputs
                        .pointer("/choices/0/finish_reason")
                        .cloned()
                        .unwrap_or(Value::Null),
                )
                .field("x_streamed_tokens", tokens)
                .field("error", error.clone().unwrap_or(Value::Null))
                .field("duration_ms", took.clone())
                .field("x_parent", parent)
                .field("x_end", end)
                .from(loc.to_string())
                .emit();
        }
        "tool" => {
            let result = text_of(&outputs);
            out.event(session, "tool_call")
                .ts(ts.clone())
                .id(id.as_deref())
                .text("tool", &name)
                .field("args", decode_nested(&inputs))
                .opt_text("result", result.as_deref())
                .field("error", error.clone().unwrap_or(Value::Null))
                .field("duration_ms", took.clone())
                .field("x_parent", parent)
                .field("x_end", end)
                .from(loc.to_string())
                .emit();
            if let Some(result) = result {
                let call = ptr(r, "/extra/metadata/tool_call_id")
                    .or_else(|| inputs.get("tool_call_id"))
                    .map(as_text)
                    .or_else(|| id.clone())
                    .unwrap_or_else(|| out.count(session).to_string());
                observe::tool_result(
                    out,
                    observe::ToolResult {
                        session,
                        tool: &name,
                        call: &call,
                        result: &Value::String(result),
                        failed: r.get("error").is_some_and(|e| !e.is_null()),
                        ts: ts.clone(),
                        from: loc,
                    },
                );
            }
        }
        other => {
            out.event(session, &super::write::source_kind("langsmith", other))
                .ts(ts.clone())
                .id(id.as_deref())
                .text("name", &name)
                .field("x_inputs", inputs.clone())
                .field("x_outputs", outputs.clone())
                .field("x_parent", parent)
                .field("x_end", end)
                .from(loc.to_string())
                .emit();
        }
    }
    if let Some(err) = r.get("error").filter(|e| !e.is_null()) {
        out.event(session, "log")
            .ts(ts.clone())
            .field("level", "error")
            .text("message", &format!("{name}: {}", as_text(err)))
            // The run it repeats: its event (and a root's intention) has the run's id.
            .opt_text("x_run", id.as_deref())
            .from(loc.to_string())
            .emit();
    }
    // The root's outputs are the answer, written after the runs inside it.
    if is_root {
        text_of(&outputs).map(|a| (a, time(r.get("end_time")).or(ts), format!("{loc}.outputs")))
    } else {
        None
    }
}

/// A graph's final state: (session, the state, when, where).
type Final = (String, Map<String, Value>, Option<String>, String);

/// LangGraph state in a LangSmith trace: a node's run (`extra.metadata.langgraph_node`)
/// outputs the channels it updates, and the graph's root run outputs the state it ended
/// with. A node's update of a channel replaces the value unless the channel has a reducer,
/// which the trace does not say: `messages` (and any list) is usually appended to
/// (`add_messages`), so list updates are not taken as values; the root's output, the whole
/// state, gives every channel's final value.
#[derive(Default)]
struct Graph {
    channels: HashMap<String, Channels>,
    /// Root runs of graphs: their outputs are written after everything inside them.
    finals: Vec<Final>,
    /// Tool calls observed per session.
    seen: HashMap<String, std::collections::HashSet<String>>,
}

impl Graph {
    fn run(
        &mut self,
        out: &mut V1Out,
        session: &str,
        r: &Map<String, Value>,
        loc: &str,
        is_root: bool,
    ) {
        let Some(Value::Object(outputs)) = r.get("outputs").map(decode_nested) else {
            return;
        };
        let node = ptr(r, "/extra/metadata/langgraph_node").and_then(Value::as_str);
        let ts = time(r.get("end_time")).or_else(|| time(r.get("start_time")));
        if is_root && r.get("name").and_then(Value::as_str) == Some("LangGraph") {
            self.finals
                .push((session.to_string(), outputs, ts, format!("{loc}.outputs")));
            return;
        }
        let Some(node) = node else { return };
        // The node's own run (not a run inside it, which carries the same metadata).
        if r.get("name").and_then(Value::as_str) != Some(node) {
            return;
        }
        let values: Map<String, Value> =
            outputs.into_iter().filter(|(_, v)| !v.is_array()).collect();
        let step = ptr(r, "/extra/metadata/langgraph_step").map(as_text);
        let writer = match step {
            Some(s) => format!("node {node} (step {s})"),
            None => format!("node {node}"),
        };
        self.channels.entry(session.to_string()).or_default().write(
            out,
            StateWrite {
                session,
                framework: "langgraph",
                writer: &writer,
                values: &values,
                ts,
                from: &format!("{loc}.outputs"),
            },
        );
    }

    fn finish(&mut self, out: &mut V1Out) {
        for (session, state, ts, loc) in std::mem::take(&mut self.finals) {
            if let Some(msgs) = state.get("messages").and_then(Value::as_array) {
                let seen = self.seen.entry(session.clone()).or_default();
                observe::tool_messages(
                    out,
                    &session,
                    msgs,
                    seen,
                    ts.clone(),
                    &format!("{loc}.messages"),
                );
            }
            self.channels.entry(session.clone()).or_default().write(
                out,
                StateWrite {
                    session: &session,
                    framework: "langgraph",
                    writer: "the graph's output (its root run)",
                    values: &state,
                    ts,
                    from: &loc,
                },
            );
        }
    }
}

/// The keys of a run the ancestry and the order need: what the streamed import holds per
/// run.
const TRACKED: [&str; 5] = [
    "id",
    "dotted_order",
    "start_time",
    "parent_run_id",
    "trace_id",
];

/// A run read a piece at a time: its records (create, then patches: their places and
/// source locations), and the merged values of its [`TRACKED`] keys.
struct Indexed {
    records: Vec<(Span, String)>,
    tracked: Map<String, Value>,
    loc: String,
}

/// [`import`] of a source read by place, into `out`: an index of the runs (their records'
/// places and the few keys that order them and tie them into traces) is built, then each
/// run is parsed again alone (its records merged) in order. The lines are [`import`]'s.
pub fn import_at<S: At + ?Sized>(
    src: &S,
    _name: &str,
    out: &mut V1Out,
    cap: usize,
) -> Result<(), ImportError> {
    let mut p = Pieces::open(src, Format::LangSmith, cap)?;
    let doc = p.document()?;
    let mut records: Vec<(Span, String, Map<String, Value>)> = Vec::new();
    let not_object =
        |here: String| broken(Format::LangSmith, here, "a run that is not a JSON object");
    match p.first_byte(doc)? {
        b'{' => {
            let top = p.members(doc)?;
            if top.contains_key("post") || top.contains_key("patch") {
                for k in ["post", "patch"] {
                    let Some(&list) = top.get(k) else { continue };
                    match p.first_byte(list)? {
                        b'n' => {}
                        b'[' => p.each_item(Some(list), |p, i, span| {
                            let here = format!("{k}[{i}]");
                            if p.first_byte(span)? != b'{' {
                                return Err(not_object(here));
                            }
                            flatten_at(p, span, &here, &mut records)
                        })?,
                        _ => return Err(broken(Format::LangSmith, k, "not a list")),
                    }
                }
            } else {
                flatten_at(&mut p, doc, "the run", &mut records)?;
            }
        }
        b'[' => p.each_item(Some(doc), |p, i, span| {
            let here = format!("[{i}]");
            if p.first_byte(span)? != b'{' {
                return Err(not_object(here));
            }
            flatten_at(p, span, &here, &mut records)
        })?,
        _ => {
            return Err(broken(
                Format::LangSmith,
                "the top level",
                "neither runs nor a payload",
            ));
        }
    }
    let mut merged = merge_index(out, records);
    merged.sort_by_key(|a| order_key(&a.tracked));
    let maps: Vec<&Map<String, Value>> = merged.iter().map(|m| &m.tracked).collect();
    let tree = Tree::of(&maps);
    let mut w = Writer::default();
    for (k, m) in merged.iter().enumerate() {
        let mut r = Map::new();
        for (n, (span, loc)) in m.records.iter().enumerate() {
            let (rec, _) = p.object_but(*span, "child_runs", loc)?;
            if n == 0 {
                r = rec;
            } else {
                r.extend(rec.into_iter().filter(|(_, v)| !v.is_null()));
            }
        }
        w.run(out, &r, &m.loc, tree.trace_of(k), tree.is_root(&m.tracked));
    }
    w.finish(out);
    Ok(())
}

/// Create and patch records of one run merged by id, as [`import`] merges them, keeping
/// each record's place instead of its values.
fn merge_index(out: &mut V1Out, records: Vec<(Span, String, Map<String, Value>)>) -> Vec<Indexed> {
    let mut merged: Vec<Indexed> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for (span, loc, tracked) in records {
        let id = run_id(&tracked);
        match id.as_ref().and_then(|i| by_id.get(i)) {
            Some(&k) => {
                let m = &mut merged[k];
                m.tracked
                    .extend(tracked.into_iter().filter(|(_, v)| !v.is_null()));
                m.loc.push_str(&format!(" + {loc}"));
                m.records.push((span, loc));
            }
            None => {
                if let Some(i) = id {
                    by_id.insert(i, merged.len());
                } else {
                    out.note(&loc, "a run without an id or dotted order: kept on its own");
                }
                merged.push(Indexed {
                    records: vec![(span, loc.clone())],
                    tracked,
                    loc,
                });
            }
        }
    }
    merged
}

/// A run and its nested `child_runs`, in that order ([`flatten`]), as places and the
/// [`TRACKED`] keys of each.
fn flatten_at<S: At + ?Sized>(
    p: &mut Pieces<'_, S>,
    span: Span,
    loc: &str,
    into: &mut Vec<(Span, String, Map<String, Value>)>,
) -> Result<(), ImportError> {
    let members = p.members(span)?;
    let mut tracked = Map::new();
    for k in TRACKED {
        if let Some(&sp) = members.get(k) {
            tracked.insert(k.to_string(), p.piece(sp, &format!("{loc}.{k}"))?);
        }
    }
    into.push((span, loc.to_string(), tracked));
    let Some(&children) = members.get("child_runs") else {
        return Ok(());
    };
    p.each_item(Some(children), |p, i, c| {
        if p.first_byte(c)? == b'{' {
            flatten_at(p, c, &format!("{loc}.child_runs[{i}]"), into)?;
        }
        Ok(())
    })
}
