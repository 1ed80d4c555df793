//! Spans to v1 events. One [`SessionMap`] per session (a trace) keeps what the mapping
//! needs across spans; spans are fed in the order they *ended* (children before parents),
//! which is the order an exporter sends them, so a file and the live receiver map a trace
//! the same way. What a parent needs from its children (the last text a model produced, the
//! first user message) is carried up as the children arrive.
//!
//! | span | v1 |
//! |---|---|
//! | `invoke_agent` / `invoke_workflow`, OpenInference `AGENT` (a root `CHAIN` with models below), Vercel `ai.generateText` | `intention` (id = span id, type = agent name, goal = the turn's question: the last user message of its input, else of its first model call's), then `answer` (its output, pydantic-ai's `final_result`, else the last text its models produced without requesting a tool) |
//! | `chat` / `text_completion` / `generate_content` / `call_llm`, OpenInference `LLM`, Vercel `*.doGenerate` | `llm_call` (model, tokens, input, tool requests), a `thought` per text and reasoning part of the output |
//! | `execute_tool`, OpenInference `TOOL`, Vercel `ai.toolCall` | `tool_call` (tool, call id, arguments, result, status), and its result as an observation `tool:NAME#CALL` (`memory.rs`) |
//! | `create_agent` | `span` (`operation: create_agent`, the agent's name and id), in the session of the run that invokes that agent (`create_agent.rs`) |
//! | `plan` | `plan` (`origin: generated`, no steps: the plan text is kept, never parsed into steps) |
//! | `create_memory` / `update_memory` / `upsert_memory` / `delete_memory` / `delete_memory_store` | `belief` per record; a changed or deleted record first gets a `retract` of its old value; a delete naming no record empties the store (`memory.rs`) |
//! | `search_memory`, `retrieval`, OpenInference `RETRIEVER` | `memory_query` (query, hits, records), and each record returned with content an observation `retrieval:STORE/RECORD` |
//! | span event `gen_ai.evaluation.result` | `score` (`target` = the span's event, or the `llm_call` of the `gen_ai.response.id` it names) |
//! | span status ERROR, span event `exception` | `log` (`level: error`; `warn` on a plain span failing with a call's failure below it) |
//! | anything else | `span` (name, operation, timing) so the structure stays visible |
//! | log record `gen_ai.client.inference.operation.details` | read with its model-call span; after that span was mapped, an `llm_call` with `x_amends` (`details.rs`); without it, an `llm_call` and `thought`s, as a model-call span with its attributes |
//! | log record `gen_ai.*.message`, `gen_ai.choice` | `log` (`ROLE: TEXT`, `x_role`, `x_event`) |
//! | any other log record | `log` at its severity (`x_event`, `x_attributes`) |
//!
//! Frameworks' own readings of these (LangGraph, smolagents, Strands, LlamaIndex) are in
//! `frameworks.rs`.
//!
//! Every event carries `x_span` (the span id) and `x_parent` (its parent's) so the tree can
//! be rebuilt; text is never turned into formulas.

use std::borrow::Cow;
use std::collections::HashMap;

use super::json_value::{Json, push_i64, push_str, push_u64, write_object};
use super::logs::LogRec;
use super::messages::{Msg, Part, decode_string, exchange, log_message, value_messages};
use super::span::{Span, Val, push_hex, push_rfc3339};

pub(crate) mod create_agent;
mod details;
mod evaluation;
pub(crate) use evaluation::Annotation;
mod frameworks;
mod memory;

/// Longest text kept in one field; longer text is cut (at a character boundary) and the
/// event says how long it was (`x_truncated`). Keeps every line far below the live
/// receiver's 1 MiB message cap.
pub(crate) const MAX_TEXT: usize = 64 * 1024;

/// One v1 event: its JSON members without the braces, and where it sorts.
#[derive(Debug, Clone)]
pub(crate) struct Out {
    /// When it happened (ns), for ordering a file's events.
    pub ts: Option<i128>,
    /// Emission order, the tie-breaker.
    pub ord: u64,
    /// `"kind":"...",...` (no braces, no `seq`).
    pub body: Vec<u8>,
}

/// Writes one event's members.
struct Obj {
    buf: Vec<u8>,
    truncated: Vec<(&'static str, usize)>,
}

thread_local! {
    /// The buffer events are written in (one per thread, reused): an event's body is then
    /// allocated once, at its size, instead of grown as it is written.
    static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Obj {
    fn new(kind: &str, session: &str) -> Obj {
        let mut buf = SCRATCH.take();
        buf.clear();
        let mut o = Obj {
            buf,
            truncated: Vec::new(),
        };
        o.buf.extend_from_slice(b"\"kind\":");
        push_str(&mut o.buf, kind);
        o.str("session", session);
        o
    }

    /// A member's key. Keys are this module's own names (plain ASCII, nothing to escape).
    fn key(&mut self, k: &str) {
        debug_assert!(
            k.bytes()
                .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
        );
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(k.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    /// A string, cut at [`MAX_TEXT`] like any text: a span's name or an attribute can be
    /// as long as a request, and an event must stay one line the reader takes.
    fn str(&mut self, k: &'static str, v: &str) {
        self.text(k, v);
    }

    /// Text that may be long: cut at [`MAX_TEXT`], the event saying how long it was.
    fn text(&mut self, k: &'static str, v: &str) {
        let cut = cut(v, MAX_TEXT);
        if cut.len() < v.len() {
            self.truncated.push((k, v.len()));
        }
        self.key(k);
        push_str(&mut self.buf, cut);
    }

    fn opt(&mut self, k: &'static str, v: Option<&str>) {
        if let Some(v) = v {
            self.str(k, v);
        }
    }

    fn int(&mut self, k: &str, v: i64) {
        self.key(k);
        push_i64(&mut self.buf, v);
    }

    /// A JSON value written by `write`; one whose text is longer than [`MAX_TEXT`] is kept
    /// as its cut text.
    fn json_with(&mut self, k: &'static str, write: impl FnOnce(&mut Vec<u8>)) {
        self.key(k);
        let at = self.buf.len();
        write(&mut self.buf);
        let n = self.buf.len() - at;
        if n > MAX_TEXT {
            let text = self.buf.split_off(at);
            // The writers put only UTF-8 there.
            let text = String::from_utf8(text).unwrap_or_default();
            self.truncated.push((k, n));
            push_str(&mut self.buf, cut(&text, MAX_TEXT));
        }
    }

    /// A JSON value (see [`Obj::json_with`]).
    fn json(&mut self, k: &'static str, v: &Json<'_>) {
        self.json_with(k, |buf| v.write(buf));
    }

    /// An id as lowercase hex digits (`digits` of them).
    fn hex(&mut self, k: &str, id: u128, digits: usize) {
        self.key(k);
        self.buf.push(b'"');
        push_hex(&mut self.buf, id, digits);
        self.buf.push(b'"');
    }

    /// A time as RFC 3339 (left out when it cannot be written, outside years 0-9999).
    fn time(&mut self, k: &str, ns: i128) {
        let at = self.buf.len();
        self.key(k);
        self.buf.push(b'"');
        if push_rfc3339(&mut self.buf, ns) {
            self.buf.push(b'"');
        } else {
            self.buf.truncate(at);
        }
    }

    /// The envelope `id`: the span id, on the one event that stands for the span (scores
    /// name it as their `target`).
    fn id(&mut self, sp: &Span<'_>) {
        if let Some(id) = sp.id {
            self.hex("id", id.into(), 16);
        }
    }

    /// `duration_ms`: the span's length in milliseconds (fractions kept to the microsecond).
    fn duration(&mut self, sp: &Span<'_>) {
        if let (Some(s), Some(e)) = (sp.start, sp.end)
            && e >= s
        {
            let us = (e - s) / 1_000;
            self.key("duration_ms");
            push_i64(&mut self.buf, i64::try_from(us / 1_000).unwrap_or(i64::MAX));
            let frac = (us % 1_000) as u32;
            if frac != 0 {
                let digits = format!(".{frac:03}");
                self.buf
                    .extend_from_slice(digits.trim_end_matches('0').as_bytes());
            }
        }
    }

    /// `status: "error"` and the `error` the span gives (its status message, else
    /// `error.type`) when its status is ERROR.
    fn failure(&mut self, sp: &Span<'_>) {
        if !sp.error {
            return;
        }
        self.str("status", "error");
        let why = sp
            .status_message
            .as_deref()
            .filter(|m| !m.is_empty())
            .or_else(|| sp.str_attr("error.type"))
            .or_else(|| exception_text(sp))
            .unwrap_or("status ERROR");
        self.text("error", why);
    }

    /// Token counts under the names v1's `llm_call` and `intention` use, from whichever
    /// convention the span follows (GenAI `gen_ai.usage.*`, OpenInference
    /// `llm.token_count.*`, the Vercel AI SDK's `ai.usage.*`).
    fn tokens(&mut self, sp: &Span<'_>) {
        for (k, keys) in TOKEN_KEYS {
            if let Some(n) = keys.iter().find_map(|k| sp.attr(k).and_then(Val::as_i64)) {
                self.int(k, n);
            }
        }
    }

    fn span_ids(&mut self, sp: &Span<'_>) {
        if let Some(id) = sp.id {
            self.hex("x_span", id.into(), 16);
        }
        if let Some(p) = sp.parent {
            self.hex("x_parent", p.into(), 16);
        }
        self.source_place(sp);
    }

    /// `x_from`: the span's line in the source file and its id (`line 3, span 00f0…`), so the
    /// detail pane names the file's line, not the converted stream's. Only for a file (a live
    /// request has no place to go back to), and only with a span id: a failure's links use
    /// `x_from`, and spans of one line without ids would look like one.
    fn source_place(&mut self, sp: &Span<'_>) {
        if let (true, Some(id)) = (sp.location.starts_with("line "), sp.id) {
            self.str("x_from", &format!("{}, span {id:016x}", sp.location));
        }
    }

    fn finish(mut self, ts: Option<i128>, ord: u64) -> Out {
        if !self.truncated.is_empty() {
            let t = std::mem::take(&mut self.truncated);
            self.key("x_truncated");
            write_object(&t, &mut self.buf, |n, buf| push_u64(buf, *n as u64));
        }
        let body = self.buf.as_slice().to_vec();
        // An exceptionally large event's buffer is not kept for the thread's lifetime.
        if self.buf.capacity() <= 1 << 20 {
            SCRATCH.set(self.buf);
        }
        Out { ts, ord, body }
    }
}

/// v1's token fields and the attributes they are read from, first found wins.
const TOKEN_KEYS: &[(&str, &[&str])] = &[
    (
        "input_tokens",
        &[
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            // pydantic-ai's run totals on its agent span.
            "gen_ai.aggregated_usage.input_tokens",
            "llm.token_count.prompt",
            "ai.usage.inputTokens",
            "ai.usage.promptTokens",
        ],
    ),
    (
        "output_tokens",
        &[
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "gen_ai.aggregated_usage.output_tokens",
            "llm.token_count.completion",
            "ai.usage.outputTokens",
            "ai.usage.completionTokens",
        ],
    ),
    (
        "cache_read_tokens",
        &[
            "gen_ai.usage.cache_read.input_tokens",
            "gen_ai.usage.cache_read_input_tokens",
            "llm.token_count.prompt_details.cache_read",
            "ai.usage.cachedInputTokens",
        ],
    ),
    (
        "cache_write_tokens",
        &[
            "gen_ai.usage.cache_creation.input_tokens",
            "gen_ai.usage.cache_creation_input_tokens",
            "llm.token_count.prompt_details.cache_write",
        ],
    ),
    (
        "reasoning_tokens",
        &[
            "gen_ai.usage.reasoning.output_tokens",
            "gen_ai.usage.reasoning_tokens",
            "llm.token_count.completion_details.reasoning",
            "ai.usage.reasoningTokens",
        ],
    ),
    (
        "total_tokens",
        &[
            "gen_ai.usage.total_tokens",
            "llm.token_count.total",
            "ai.usage.totalTokens",
        ],
    ),
];

/// The longest prefix of `s` of at most `max` bytes ending at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

/// What a span is, by its attributes first and its name second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Agent,
    /// A client creating an agent (`create_agent`, see `create_agent.rs`).
    CreateAgent,
    Llm,
    Tool,
    Plan,
    MemoryWrite,
    MemoryDelete,
    MemorySearch,
    Other,
}

pub(crate) fn classify(sp: &Span<'_>) -> Class {
    let by_op = |op: &str| match op {
        "invoke_agent" | "invoke_workflow" => Some(Class::Agent),
        "create_agent" => Some(Class::CreateAgent),
        "chat" | "text_completion" | "generate_content" | "call_llm" | "completion" => {
            Some(Class::Llm)
        }
        "execute_tool" => Some(Class::Tool),
        "plan" => Some(Class::Plan),
        "create_memory" | "update_memory" | "upsert_memory" => Some(Class::MemoryWrite),
        "delete_memory" | "delete_memory_store" => Some(Class::MemoryDelete),
        "search_memory" | "retrieval" => Some(Class::MemorySearch),
        _ => None,
    };
    if let Some(c) = sp.str_attr("gen_ai.operation.name").and_then(by_op) {
        return c;
    }
    if let Some(k) = sp.str_attr("openinference.span.kind") {
        match k.to_ascii_uppercase().as_str() {
            "AGENT" => return Class::Agent,
            "LLM" => return Class::Llm,
            "TOOL" => return Class::Tool,
            "RETRIEVER" => return Class::MemorySearch,
            _ => {}
        }
    }
    let vercel = sp.str_attr("ai.operationId").unwrap_or(&sp.name);
    match vercel {
        "ai.generateText" | "ai.streamText" | "ai.generateObject" | "ai.streamObject" => {
            return Class::Agent;
        }
        "ai.toolCall" => return Class::Tool,
        v if v.starts_with("ai.") && (v.ends_with(".doGenerate") || v.ends_with(".doStream")) => {
            return Class::Llm;
        }
        _ => {}
    }
    if let Some(c) = sp.name.split(' ').next().and_then(by_op) {
        return c;
    }
    if sp.attr("gen_ai.tool.name").is_some() {
        return Class::Tool;
    }
    if sp.attr("gen_ai.request.model").is_some() || sp.attr("llm.model_name").is_some() {
        return Class::Llm;
    }
    Class::Other
}

/// The model a span names.
pub(crate) fn model_of<'s>(sp: &'s Span<'_>) -> Option<&'s str> {
    [
        "gen_ai.request.model",
        "gen_ai.response.model",
        "llm.model_name",
        "ai.model.id",
    ]
    .iter()
    .find_map(|k| sp.str_attr(k))
}

/// The agent a span names (for agent spans).
pub(crate) fn agent_name(sp: &Span<'_>) -> String {
    if let Some(n) = sp
        .str_attr("gen_ai.agent.name")
        .or_else(|| sp.str_attr("gen_ai.workflow.name"))
        .or_else(|| sp.str_attr("agent.name"))
        .or_else(|| sp.str_attr("ai.telemetry.functionId"))
    {
        return n.to_string();
    }
    let name = sp
        .name
        .strip_prefix("invoke_agent ")
        .or_else(|| sp.name.strip_prefix("invoke_workflow "))
        .unwrap_or(&sp.name);
    name.trim().to_string()
}

/// What children hand up to their parent.
#[derive(Debug, Default)]
struct Pending {
    /// The last text a model produced below, with its end time.
    last_text: Option<(i128, String)>,
    /// The question of the first model call below (see [`question`]), with its start time.
    first_user: Option<(i128, String)>,
    /// A model was called below.
    models: bool,
    /// A tool or model call below failed.
    failed_below: bool,
}

impl Pending {
    fn merge(&mut self, other: Pending) {
        if let Some((t, s)) = other.last_text
            && self.last_text.as_ref().is_none_or(|(u, _)| t >= *u)
        {
            self.last_text = Some((t, s));
        }
        if let Some((t, s)) = other.first_user
            && self.first_user.as_ref().is_none_or(|(u, _)| t < *u)
        {
            self.first_user = Some((t, s));
        }
        self.models |= other.models;
        self.failed_below |= other.failed_below;
    }
}

/// Spans above this many waiting for their parent are forgotten (a live trace whose parents
/// never come must not grow without bound).
const MAX_PENDING: usize = 100_000;

/// The mapping state of one session.
#[derive(Debug)]
pub(crate) struct SessionMap {
    /// The session's name (every event's `session`).
    pub name: String,
    /// The trace id, when there is one.
    pub trace: Option<u128>,
    /// The `session` event was written.
    started: bool,
    pending: HashMap<u64, Pending>,
    /// Memory records held so far (see `memory.rs`).
    memory: memory::Records,
    /// A model call without captured content was seen (said once).
    said_no_content: bool,
    /// Model-call details records waiting for their span (`details.rs`).
    held: HashMap<u64, LogRec>,
    /// Details records displaced by a later one for the same span, shown apart.
    early: Vec<LogRec>,
    /// Model-call spans mapped so far, with their parents (`details.rs`).
    calls_seen: HashMap<u64, Option<u64>>,
    /// The model calls' span ids by their response id (`evaluation.rs`).
    responses: HashMap<String, u64>,
    /// Scores waiting for the model call of their response id (`evaluation.rs`).
    waiting: Vec<evaluation::Waiting>,
    ord: u64,
    /// Span events of other names, counted.
    pub other_events: u64,
    /// An agent span without a parent gave an answer.
    pub root_answered: bool,
    /// Live: lines are written as spans arrive, so `ts` is kept from going backwards.
    monotone: bool,
    /// The arguments of the tool calls models requested, by call id: a tool span that
    /// does not hold them (LangGraph's has the first argument's value only) takes them
    /// from the request. Bounded by [`MAX_PENDING`].
    requested: Vec<frameworks::Request>,
    last_ts: Option<i128>,
}

/// What the `session` event says; in a file it is known from all spans, live from the first.
#[derive(Debug, Default, Clone)]
pub(crate) struct SessionInfo {
    pub agent: Option<String>,
    pub model: Option<String>,
    pub service: Option<String>,
    pub conversation: Option<String>,
}

impl SessionInfo {
    /// What a set of spans (in start order) says about their session.
    pub(crate) fn of<'s, 'a: 's>(spans: impl Iterator<Item = &'s Span<'a>> + Clone) -> Self {
        let mut info = SessionInfo::default();
        for sp in spans {
            if info.agent.is_none()
                && classify(sp) == Class::Agent
                && !frameworks::is_graph_node(sp)
            {
                info.agent = Some(agent_name(sp));
            }
            if info.agent.is_none() {
                info.agent = sp.resource.agent.clone();
            }
            if info.model.is_none() {
                info.model = model_of(sp).map(str::to_string);
            }
            if info.service.is_none() {
                info.service = sp.resource.service.clone();
            }
            if info.conversation.is_none() {
                info.conversation = sp
                    .str_attr("gen_ai.conversation.id")
                    .or_else(|| sp.str_attr("session.id"))
                    .map(str::to_string);
            }
        }
        info
    }
}

impl SessionMap {
    /// A session named `name` for trace `trace`.
    pub(crate) fn new(name: String, trace: Option<u128>) -> Self {
        SessionMap {
            name,
            trace,
            started: false,
            pending: HashMap::new(),
            memory: memory::Records::default(),
            said_no_content: false,
            held: HashMap::new(),
            early: Vec::new(),
            calls_seen: HashMap::new(),
            responses: HashMap::new(),
            waiting: Vec::new(),
            ord: 0,
            other_events: 0,
            root_answered: false,
            monotone: false,
            last_ts: None,
            requested: Vec::new(),
        }
    }

    /// A session whose lines are written as spans arrive (the live receiver): a line whose
    /// time is earlier than the one before gets that one's `ts` and its own in `x_ts`, so
    /// the stream's times never go backwards.
    pub(crate) fn new_live(name: String, trace: Option<u128>) -> Self {
        SessionMap {
            monotone: true,
            ..SessionMap::new(name, trace)
        }
    }

    fn next_ord(&mut self) -> u64 {
        self.ord += 1;
        self.ord
    }

    fn emit(&mut self, mut o: Obj, ts: Option<i128>, out: &mut Vec<Out>) {
        let ord = self.next_ord();
        let mut shown = ts;
        if self.monotone
            && let (Some(t), Some(last)) = (ts, self.last_ts)
            && t < last
        {
            // A live stream is in arrival order (a parent arrives after its children, with
            // an earlier start): the line's `ts` stays in order, the span's time is kept.
            shown = Some(last);
            o.time("x_ts", t);
        }
        if let Some(t) = shown {
            self.last_ts = Some(t);
            o.time("ts", t);
        }
        out.push(o.finish(ts, ord));
    }

    /// The `session` event, once (before anything else of the session).
    pub(crate) fn start(&mut self, info: &SessionInfo, out: &mut Vec<Out>) {
        if self.started {
            return;
        }
        self.started = true;
        let mut o = Obj::new("session", &self.name);
        o.opt("agent", info.agent.as_deref().or(info.service.as_deref()));
        o.opt("model", info.model.as_deref());
        // In key order, as a JSON object is written.
        let trace = self.trace.map(|t| {
            let mut hex = Vec::with_capacity(32);
            push_hex(&mut hex, t, 32);
            String::from_utf8(hex).unwrap_or_default()
        });
        let meta: Vec<(&str, &str)> = [
            ("conversation_id", info.conversation.as_deref()),
            ("service", info.service.as_deref()),
            ("source", Some("opentelemetry")),
            ("trace_id", trace.as_deref()),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect();
        o.json_with("meta", |buf| {
            write_object(&meta, buf, |v, buf| push_str(buf, v));
        });
        // Sorts before every span's events.
        self.emit(o, None, out);
    }

    /// Maps one span (children first, see the module docs).
    pub(crate) fn span(&mut self, sp: &Span<'_>, out: &mut Vec<Out>) {
        let mut mine = sp
            .id
            .and_then(|id| self.pending.remove(&id))
            .unwrap_or_default();
        let promoted = classify(sp) == Class::Other && frameworks::is_run_root(sp, mine.models);
        let class = match classify(sp) {
            Class::Agent if frameworks::is_graph_node(sp) => Class::Other,
            Class::Llm if frameworks::is_request_assembly(sp) => Class::Other,
            _ if promoted => Class::Agent,
            c => c,
        };
        match class {
            Class::Agent => self.agent(sp, &mut mine, promoted, out),
            Class::CreateAgent => self.create_agent(sp, out),
            Class::Llm => match self.with_details(sp) {
                Some(merged) => self.llm(&merged, &mut mine, None, out),
                None => self.llm(sp, &mut mine, None, out),
            },
            Class::Tool => self.tool(sp, out),
            Class::Plan => self.plan(sp, &mine, out),
            Class::MemoryWrite | Class::MemoryDelete => self.memory(sp, class, out),
            Class::MemorySearch => self.search(sp, out),
            Class::Other => self.other(sp, out),
        }
        // A plain span (smolagents' step) failing with the failure of a call below it
        // repeats that failure: said at `warn`, so one raising tool is one finding.
        let echo = class == Class::Other && mine.failed_below;
        self.span_events(sp, echo, out);
        // An `exception` event already said why (as a log of its own).
        if sp.error && !sp.events.iter().any(|e| e.name == "exception") {
            let mut o = Obj::new("log", &self.name);
            o.str("level", if echo { "warn" } else { "error" });
            let why = sp
                .status_message
                .as_deref()
                .or_else(|| sp.str_attr("error.type"))
                .unwrap_or("status ERROR");
            o.text("message", &format!("{} failed: {why}", sp.name));
            o.span_ids(sp);
            self.emit(o, sp.end.or(sp.start), out);
        }
        mine.failed_below |= sp.error && matches!(class, Class::Tool | Class::Llm);
        if let Some(p) = sp.parent {
            if self.pending.len() >= MAX_PENDING && !self.pending.contains_key(&p) {
                self.pending.clear();
            }
            self.pending.entry(p).or_default().merge(mine);
        }
    }

    /// An agent run. `promoted`: a framework's root span read as the run (its own output
    /// is the framework's object, its models' last final text the answer).
    fn agent(&mut self, sp: &Span<'_>, mine: &mut Pending, promoted: bool, out: &mut Vec<Out>) {
        let ex = exchange(sp);
        // OpenInference's `input.value` first: its `llm.input_messages` on a chain hold
        // the first message only.
        let goal = question(&value_messages(sp, "input.value", "user"))
            .or_else(|| question(&ex.input))
            .or_else(|| mine.first_user.take().map(|(_, t)| Cow::Owned(t)));
        let mut o = Obj::new("intention", &self.name);
        o.id(sp);
        o.str("type", &agent_name(sp));
        if let Some(g) = &goal {
            o.text("goal", g);
        }
        if let Some(id) = sp.str_attr("gen_ai.agent.id") {
            o.str("x_agent_id", id);
        }
        if let Some(d) = sp.str_attr("gen_ai.agent.description") {
            o.text("x_description", d);
        }
        o.duration(sp);
        o.failure(sp);
        // The run's totals, when the framework sends them on the agent span.
        o.tokens(sp);
        o.span_ids(sp);
        self.emit(o, sp.start, out);
        // pydantic-ai's `final_result` is the run's output, also when it is structured (given
        // by an output tool, with no text from the model).
        let own = final_text(&ex.output).or_else(|| final_result(sp).map(Cow::Owned));
        let below = mine.last_text.take().map(|(_, t)| Cow::Owned(t));
        let answer = if promoted {
            below.or(own)
        } else {
            own.or(below)
        };
        if let Some(text) = answer.as_deref().map(str::trim_end) {
            self.root_answered |= sp.parent.is_none();
            let mut o = Obj::new("answer", &self.name);
            o.text("text", text);
            o.span_ids(sp);
            self.emit(o, sp.end, out);
        }
        // What the run was asked is what an enclosing run without a question of its own was
        // asked (the OpenAI Agents SDK's workflow span around its agent's). Its answer is
        // its own: given once, not again by the enclosing run.
        // The run is the one its models belong to, and its failures are its own.
        *mine = Pending {
            first_user: goal.map(|g| (sp.start.unwrap_or(i128::MAX), g.into_owned())),
            last_text: None,
            models: false,
            failed_below: false,
        };
    }

    /// A model call; with `amends`, the details of the call of that span shown before them
    /// (`details.rs`): its content and what it lacked, not its tokens, time or failure,
    /// which the call already counts.
    fn llm(&mut self, sp: &Span<'_>, mine: &mut Pending, amends: Option<u64>, out: &mut Vec<Out>) {
        let ex = exchange(sp);
        let mut o = Obj::new("llm_call", &self.name);
        match amends {
            Some(call) => o.hex("x_amends", call.into(), 16),
            None => o.id(sp),
        }
        o.opt("model", model_of(sp));
        o.opt(
            "provider",
            sp.str_attr("gen_ai.provider.name")
                .or_else(|| sp.str_attr("gen_ai.system"))
                .or_else(|| sp.str_attr("llm.provider"))
                .or_else(|| sp.str_attr("ai.model.provider")),
        );
        o.opt("operation", sp.str_attr("gen_ai.operation.name"));
        if let Some(m) = sp.str_attr("gen_ai.response.model") {
            o.str("response_model", m);
        }
        if amends.is_none() {
            o.tokens(sp);
            o.duration(sp);
            o.failure(sp);
        }
        if let Some(f) = sp.attr("gen_ai.response.finish_reasons") {
            o.json_with("finish_reasons", |buf| f.write_json(buf));
        }
        if let Some(id) = sp.str_attr("gen_ai.response.id") {
            o.str("response_id", id);
        }
        if !ex.input.is_empty() {
            o.json_with("input", |buf| write_brief(&ex.input, buf));
        }
        let mut calls = ex
            .output
            .iter()
            .flat_map(|m| &m.parts)
            .filter(|p| matches!(p, Part::ToolCall { .. }))
            .peekable();
        if calls.peek().is_some() {
            o.json_with("tool_calls", |buf| {
                buf.push(b'[');
                for (i, p) in calls.enumerate() {
                    let Part::ToolCall { id, name, args } = p else {
                        continue;
                    };
                    if i > 0 {
                        buf.push(b',');
                    }
                    // In key order, as a JSON object is written.
                    buf.extend_from_slice(b"{\"args\":");
                    match args {
                        Some(a) => a.write(buf),
                        None => buf.extend_from_slice(b"null"),
                    }
                    buf.extend_from_slice(b",\"id\":");
                    match id {
                        Some(id) => push_str(buf, id),
                        None => buf.extend_from_slice(b"null"),
                    }
                    buf.extend_from_slice(b",\"name\":");
                    push_str(buf, name);
                    buf.push(b'}');
                }
                buf.push(b']');
            });
        }
        // The text the call produced, for its row (its `thought`s hold each part).
        if let Some(t) = last_text(&ex.output) {
            o.text("output", &t);
        }
        o.span_ids(sp);
        self.emit(o, sp.start, out);
        if let Some(id) = sp.id {
            self.call_mapped(id, sp.str_attr("gen_ai.response.id"), out);
        }
        self.observe_messages(sp, &ex.input, out);
        if ex.input.is_empty() && ex.output.is_empty() && !self.said_no_content {
            self.said_no_content = true;
            let mut o = Obj::new("log", &self.name);
            o.str("level", "warn");
            o.str(
                "message",
                "message content was not captured by the instrumentation (GenAI \
                 instrumentations leave it out unless asked): model calls are shown without \
                 their text",
            );
            o.span_ids(sp);
            self.emit(o, sp.start, out);
        }
        if let Some(t) = question(&ex.input) {
            mine.merge(Pending {
                first_user: Some((sp.start.unwrap_or(i128::MAX), t.into_owned())),
                last_text: None,
                models: true,
                failed_below: false,
            });
        }
        mine.models = true;
        self.remember_requests(&ex.output);
        for m in ex.output.iter().filter(|m| m.role != "user") {
            for p in &m.parts {
                let (text, reasoning) = match p {
                    Part::Text(t) if !t.trim().is_empty() => (t, false),
                    Part::Reasoning(t) if !t.trim().is_empty() => (t, true),
                    _ => continue,
                };
                let mut o = Obj::new("thought", &self.name);
                o.text("text", text);
                if reasoning {
                    o.str("x_part", "reasoning");
                }
                o.span_ids(sp);
                self.emit(o, sp.end, out);
            }
        }
        // Text that comes with a tool request is the model thinking aloud, not an answer.
        if let Some(t) = final_text(&ex.output) {
            mine.merge(Pending {
                last_text: Some((sp.end.unwrap_or(i128::MIN), t.into_owned())),
                first_user: None,
                models: true,
                failed_below: false,
            });
        }
    }

    /// Keeps the tool calls a model requested (with their arguments) until a tool span
    /// takes them.
    fn remember_requests(&mut self, output: &[Msg<'_>]) {
        for p in output.iter().flat_map(|m| &m.parts) {
            if let Part::ToolCall {
                id,
                name,
                args: Some(a),
            } = p
            {
                if self.requested.len() >= MAX_PENDING {
                    self.requested.clear();
                }
                self.requested.push(frameworks::Request {
                    id: id.as_deref().map(str::to_string),
                    name: name.to_string(),
                    args: a.clone().into_owned(),
                });
            }
        }
    }

    fn tool(&mut self, sp: &Span<'_>, out: &mut Vec<Out>) {
        let mut o = Obj::new("tool_call", &self.name);
        o.id(sp);
        let name = sp
            .str_attr("gen_ai.tool.name")
            .or_else(|| sp.str_attr("tool.name"))
            .or_else(|| sp.str_attr("ai.toolCall.name"))
            .map(str::to_string)
            .unwrap_or_else(|| {
                sp.name
                    .strip_prefix("execute_tool ")
                    .unwrap_or(&sp.name)
                    .to_string()
            });
        o.str("tool", &name);
        let result = frameworks::tool_result(sp);
        let call_id = sp
            .str_attr("gen_ai.tool.call.id")
            .or_else(|| sp.str_attr("tool.id"))
            .or_else(|| sp.str_attr("tool_call.id"))
            .or_else(|| sp.str_attr("ai.toolCall.id"))
            .or_else(|| result.as_ref().and_then(|r| r.1.as_deref()));
        o.opt("call_id", call_id);
        let args = frameworks::tool_args(sp);
        let requested = frameworks::take_request(&mut self.requested, &name, call_id, &args);
        // Arguments that are not an object (LangGraph's span has the first one's value) are
        // the model's request, when it is known.
        let args = match (requested, args) {
            (Some(r), a) if !matches!(a, Some(Json::Obj(_))) => Some(r.args),
            (_, a) => a,
        };
        if let Some(a) = &args {
            o.json("args", a);
        }
        if let Some((r, _)) = &result {
            o.json("result", r);
        }
        o.str("status", if sp.error { "error" } else { "ok" });
        if sp.error {
            let why = sp
                .status_message
                .as_deref()
                .filter(|m| !m.is_empty())
                .or_else(|| sp.str_attr("error.type"))
                .or_else(|| exception_text(sp))
                .unwrap_or("status ERROR");
            o.text("error", frameworks::without_traceback(why));
        }
        o.duration(sp);
        if let Some(d) = sp.str_attr("gen_ai.tool.description") {
            o.text("x_description", d);
        }
        o.span_ids(sp);
        self.emit(o, sp.start, out);
        let call_id = call_id.map(str::to_string);
        self.observe_tool(sp, &name, call_id.as_deref(), result.map(|r| r.0), out);
    }

    fn plan(&mut self, sp: &Span<'_>, mine: &Pending, out: &mut Vec<Out>) {
        let ex = exchange(sp);
        let mut o = Obj::new("plan", &self.name);
        o.id(sp);
        o.str("origin", "generated");
        let text =
            last_text(&ex.output).or_else(|| mine.last_text.as_ref().map(|t| Cow::Borrowed(&*t.1)));
        if let Some(t) = text {
            o.text("x_plan_text", &t);
        }
        o.span_ids(sp);
        self.emit(o, sp.start, out);
    }

    fn other(&mut self, sp: &Span<'_>, out: &mut Vec<Out>) {
        let mut o = Obj::new("span", &self.name);
        o.id(sp);
        o.str("name", &sp.name);
        o.opt(
            "operation",
            sp.str_attr("gen_ai.operation.name")
                .or_else(|| sp.str_attr("openinference.span.kind"))
                .or_else(|| sp.str_attr("ai.operationId")),
        );
        if let (Some(s), Some(e)) = (sp.start, sp.end) {
            o.int(
                "duration_ms",
                i64::try_from((e - s) / 1_000_000).unwrap_or(i64::MAX),
            );
        }
        o.span_ids(sp);
        self.emit(o, sp.start, out);
    }

    fn span_events(&mut self, sp: &Span<'_>, echo: bool, out: &mut Vec<Out>) {
        // smolagents records one exception twice on a step's span: said once.
        let mut said: Vec<String> = Vec::new();
        for e in &sp.events {
            let ts = e.time.or(sp.end);
            match &*e.name {
                "gen_ai.evaluation.result" => {
                    // The span's own event (its `id` is the span id) is what was scored,
                    // unless the event names a model call's response.
                    self.evaluation(&e.attrs, evaluation::Place::of(sp), ts, out);
                }
                "exception" => {
                    let a = |k: &str| super::span::attr(&e.attrs, k).and_then(Val::as_str);
                    let mut o = Obj::new("log", &self.name);
                    o.str("level", if echo { "warn" } else { "error" });
                    let msg = match (a("exception.type"), a("exception.message")) {
                        (Some(t), Some(m)) => format!("{t}: {m}"),
                        (Some(x), None) | (None, Some(x)) => x.to_string(),
                        (None, None) => "exception".to_string(),
                    };
                    let msg = format!("{}: {msg}", sp.name);
                    if said.contains(&msg) {
                        continue;
                    }
                    o.text("message", &msg);
                    said.push(msg);
                    o.span_ids(sp);
                    self.emit(o, ts, out);
                }
                n if n.starts_with("gen_ai.") && n.ends_with(".message")
                    || n == "gen_ai.choice"
                    || n == "gen_ai.client.inference.operation.details" =>
                {
                    // Read as the span's messages (messages.rs).
                }
                _ => self.other_events += 1,
            }
        }
    }

    /// Maps one OTLP log record: the `gen_ai.client.inference.operation.details` event as the
    /// model call it describes (its attributes are the inference span's), a GenAI message
    /// record (`gen_ai.user.message`, `gen_ai.choice`, ...) as a `log` naming its role, and
    /// any other record (a coding agent's events) as a `log` at its severity. Each keeps the
    /// span it was emitted in as `x_span`.
    pub(crate) fn log_record(&mut self, rec: &LogRec, out: &mut Vec<Out>) {
        if rec.carries_content() {
            // The content came, as log records: no warning that it is missing.
            self.said_no_content = true;
        }
        if rec.event == DETAILS {
            if let Some((call, parent)) = rec
                .span
                .and_then(|s| self.calls_seen.get(&s).map(|p| (s, *p)))
            {
                self.amend(rec, call, parent, out);
            } else if !self.hold_details(rec) {
                self.details_call(rec, out);
            }
            return;
        }
        if rec.event == "gen_ai.evaluation.result" {
            // The span the record was emitted in is the one evaluated, unless the record
            // names a model call's response.
            let place = evaluation::Place {
                span: rec.span,
                parent: None,
                from: None,
            };
            self.evaluation(&rec.attrs, place, rec.time, out);
            return;
        }
        let mut o = Obj::new("log", &self.name);
        o.str("level", severity_level(rec.severity, &rec.severity_text));
        let text = match log_message(&rec.event, &rec.body) {
            Some(m) => {
                let mut t = format!("{}: {}", m.role, m.text());
                for p in &m.parts {
                    if let Part::ToolCall { name, .. } = p {
                        t.push_str(&format!(" [calls {name}]"));
                    }
                }
                o.str("x_role", &m.role);
                t
            }
            None => {
                let body = rec.body.to_text();
                match (rec.event.as_str(), body.trim()) {
                    ("", b) => b.to_string(),
                    (e, b) if b.is_empty() || b == e => e.to_string(),
                    (e, b) => format!("{e}: {b}"),
                }
            }
        };
        o.text("message", &text);
        if !rec.event.is_empty() {
            o.str("x_event", &rec.event);
        }
        if !rec.attrs.is_empty() {
            let mut attrs = Vec::new();
            write_object(&rec.attrs, &mut attrs, |v, buf| v.write_json(buf));
            // Within the line bound: past it, kept as (cut) text.
            if attrs.len() <= MAX_TEXT {
                o.json_with("x_attributes", |buf| buf.extend_from_slice(&attrs));
            } else {
                o.text("x_attributes_text", &String::from_utf8_lossy(&attrs));
            }
        }
        if let Some(id) = rec.span {
            o.hex("x_span", id.into(), 16);
        }
        self.emit(o, rec.time, out);
    }

    /// Message content arrives as log records for this session (a file's, known before its
    /// spans are mapped): a model call without content is then no cause for a warning.
    pub(crate) fn content_in_logs(&mut self) {
        self.said_no_content = true;
    }

    /// An answer the source gives outside its spans (any-agent's `final_output`).
    pub(crate) fn answer_text(&mut self, text: &str, ts: Option<i128>, out: &mut Vec<Out>) {
        let mut o = Obj::new("answer", &self.name);
        o.text("text", text);
        o.str("x_source", "final_output");
        self.emit(o, ts, out);
    }
}

/// The log record that describes a model call (content, tokens) when its instrumentation
/// sends content as log records.
pub(crate) const DETAILS: &str = "gen_ai.client.inference.operation.details";

/// The message of the span's first `exception` event.
fn exception_text<'s>(sp: &'s Span<'_>) -> Option<&'s str> {
    sp.events
        .iter()
        .filter(|e| e.name == "exception")
        .find_map(|e| super::span::attr(&e.attrs, "exception.message").and_then(Val::as_str))
}

/// The question a model call or an agent run was given: the last user message with text in
/// its input. A later turn replays the conversation so far before its own question, so the
/// first user message would be the first turn's.
fn question<'s>(input: &[Msg<'s>]) -> Option<Cow<'s, str>> {
    input
        .iter()
        .rev()
        .filter(|m| m.role == "user")
        .map(Msg::text)
        .find(|t| !t.trim().is_empty())
}

/// The last text of the assistant's messages that requested no tool: a final text, not
/// text said on the way to a tool call.
fn final_text<'s>(msgs: &[Msg<'s>]) -> Option<Cow<'s, str>> {
    let last = msgs
        .iter()
        .rev()
        .find(|m| m.role != "user" && m.role != "system" && m.role != "tool")?;
    if last
        .parts
        .iter()
        .any(|p| matches!(p, Part::ToolCall { .. }))
    {
        return None;
    }
    Some(last.text()).filter(|t| !t.trim().is_empty())
}

/// pydantic-ai's `final_result` on its agent span: text as it is, structured output as JSON.
fn final_result(sp: &Span<'_>) -> Option<String> {
    match decode_string(&sp.attr("final_result")?.to_json()) {
        Json::Str(s) if s.trim().is_empty() => None,
        Json::Str(s) => Some(s.into_owned()),
        Json::Null => None,
        other => Some(other.to_json_string()),
    }
}

/// The last non-empty text of the assistant's messages.
fn last_text<'s>(msgs: &[Msg<'s>]) -> Option<Cow<'s, str>> {
    msgs.iter()
        .rev()
        .filter(|m| m.role != "user" && m.role != "system" && m.role != "tool")
        .map(Msg::text)
        .find(|t| !t.trim().is_empty())
}

/// Messages as `[{role, text}]` (tool requests and results named, not expanded), cut to
/// [`MAX_TEXT`] in all: every model call repeats the whole history.
fn write_brief(msgs: &[Msg<'_>], buf: &mut Vec<u8>) {
    let mut budget = MAX_TEXT;
    // (role, text, its whole length when cut)
    let mut kept: Vec<(&str, Cow<'_, str>, Option<usize>)> = Vec::new();
    // The latest messages matter most: keep from the end.
    for m in msgs.iter().rev() {
        let mut text = m.text();
        for p in &m.parts {
            match p {
                Part::ToolCall { name, .. } => {
                    let t = text.to_mut();
                    t.push_str("[call ");
                    t.push_str(name);
                    t.push(']');
                }
                Part::ToolResult { response, .. } => match response {
                    Json::Str(s) => text.to_mut().push_str(s),
                    other => text.to_mut().push_str(&other.to_json_string()),
                },
                _ => {}
            }
        }
        if text.len() > budget {
            let whole = text.len();
            let cut_text = match text {
                Cow::Borrowed(b) => Cow::Borrowed(cut(b, budget)),
                Cow::Owned(o) => Cow::Owned(cut(&o, budget).to_string()),
            };
            kept.push((&m.role, cut_text, Some(whole)));
            break;
        }
        budget -= text.len();
        kept.push((&m.role, text, None));
    }
    buf.push(b'[');
    for (i, (role, text, whole)) in kept.iter().rev().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        // In key order, as a JSON object is written.
        buf.extend_from_slice(b"{\"role\":");
        push_str(buf, role);
        buf.extend_from_slice(b",\"text\":");
        push_str(buf, text);
        if let Some(n) = whole {
            buf.extend_from_slice(b",\"truncated\":");
            push_u64(buf, *n as u64);
        }
        buf.push(b'}');
    }
    buf.push(b']');
}

/// The v1 `level` of an OTLP severity (1-4 TRACE, 5-8 DEBUG, 9-12 INFO, 13-16 WARN, 17-24
/// ERROR and FATAL); the severity text when the number is unset; `info` when neither is.
fn severity_level(number: i32, text: &str) -> &'static str {
    match number {
        1..=8 => "debug",
        9..=12 => "info",
        13..=16 => "warn",
        17.. => "error",
        _ => match text.to_ascii_lowercase().as_str() {
            t if t.starts_with("err") || t.starts_with("fatal") || t.starts_with("crit") => "error",
            t if t.starts_with("warn") => "warn",
            t if t.starts_with("debug") || t.starts_with("trace") => "debug",
            _ => "info",
        },
    }
}
