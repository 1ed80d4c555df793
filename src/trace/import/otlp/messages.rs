//! A model call's messages, from whichever encoding the instrumentation used:
//! - GenAI ≥ 1.37: `gen_ai.input.messages` / `gen_ai.output.messages` /
//!   `gen_ai.system_instructions` (JSON strings on spans, structured on events; `parts` of
//!   type text, reasoning, tool_call, tool_call_response, ...);
//! - GenAI ≤ 1.36: per-message span events (`gen_ai.user.message`, `gen_ai.choice`, ...);
//! - OpenLLMetry's indexed attributes `gen_ai.prompt.N.role/content`,
//!   `gen_ai.completion.N.*`, and the obsolete JSON `gen_ai.prompt` / `gen_ai.completion`;
//! - OpenInference's flattened `llm.input_messages.N.message.*` and `input.value` /
//!   `output.value`;
//! - the Vercel AI SDK's `ai.prompt.messages`, `ai.prompt`, `ai.response.text`,
//!   `ai.response.toolCalls`;
//! - any-agent's `gen_ai.output` with `gen_ai.output.type`.

use std::borrow::Cow;

use super::json_value::Json;
use super::span::{Span, Val};

mod frameworks;
pub(crate) use frameworks::blocks_text;

/// One part of a message. Strings borrow from the span (or from the JSON text it held).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part<'s> {
    /// Text.
    Text(Cow<'s, str>),
    /// Reasoning the model showed.
    Reasoning(Cow<'s, str>),
    /// A request to call a tool.
    ToolCall {
        /// The call id.
        id: Option<Cow<'s, str>>,
        /// The tool.
        name: Cow<'s, str>,
        /// Its arguments (decoded when they were a JSON string).
        args: Option<Json<'s>>,
    },
    /// A tool's response.
    ToolResult {
        /// The call id it answers.
        id: Option<Cow<'s, str>>,
        /// The response.
        response: Json<'s>,
    },
}

/// One message.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Msg<'s> {
    /// `system`, `user`, `assistant`, `tool`.
    pub role: Cow<'s, str>,
    /// Its parts.
    pub parts: Vec<Part<'s>>,
}

impl<'s> Msg<'s> {
    /// The text parts joined by newlines (an empty text adds no separator before the
    /// first non-empty one).
    pub(crate) fn text(&self) -> Cow<'s, str> {
        let mut out: Cow<'s, str> = Cow::Borrowed("");
        for p in &self.parts {
            if let Part::Text(t) = p {
                if out.is_empty() {
                    out = t.clone();
                } else {
                    let o = out.to_mut();
                    o.push('\n');
                    o.push_str(t);
                }
            }
        }
        out
    }
}

/// What a span says was sent to and received from a model.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Exchange<'s> {
    /// System instructions and input messages.
    pub input: Vec<Msg<'s>>,
    /// Output messages.
    pub output: Vec<Msg<'s>>,
}

/// Whether any of the messages has a part.
fn said_something(msgs: &[Msg<'_>]) -> bool {
    msgs.iter().any(|m| !m.parts.is_empty())
}

fn text_msg<'s>(role: &'s str, text: Cow<'s, str>) -> Msg<'s> {
    Msg {
        role: Cow::Borrowed(role),
        parts: vec![Part::Text(text)],
    }
}

/// Reads a span's messages from every encoding it carries; the first encoding found for
/// each direction wins (instrumentations that write two write the same messages twice).
pub(crate) fn exchange<'s>(span: &'s Span<'_>) -> Exchange<'s> {
    let mut ex = Exchange::default();
    if let Some(v) = genai_attr(span, "gen_ai.system_instructions").and_then(json_of) {
        let text = parts_text(&v);
        if !text.is_empty() {
            ex.input.push(text_msg("system", text));
        }
    }
    let input = [
        "gen_ai.input.messages",
        "gen_ai.prompt",
        "ai.prompt.messages",
        "ai.prompt",
    ]
    .iter()
    .find_map(|k| genai_attr(span, k).map(|v| messages_of(v, "user")))
    .filter(|m| !m.is_empty())
    .or_else(|| indexed(span, "gen_ai.prompt."))
    .or_else(|| openinference(span, "llm.input_messages."))
    .or_else(|| events(span, true))
    .or_else(|| {
        ["input.value", "input"]
            .iter()
            .find_map(|k| span.attr(k).map(|v| messages_of(v, "user")))
    })
    .unwrap_or_default();
    ex.input.extend(input);
    ex.output = [
        "gen_ai.output.messages",
        "gen_ai.completion",
        "ai.response.text",
        "ai.response.object",
    ]
    .iter()
    .find_map(|k| genai_attr(span, k).map(|v| messages_of(v, "assistant")))
    .filter(|m| !m.is_empty())
    .or_else(|| indexed(span, "gen_ai.completion."))
    // The OpenAI Agents SDK's OpenInference spans name the output message's role only, its
    // text being in `output.value` (Responses API items): a message of no part says nothing.
    .or_else(|| openinference(span, "llm.output_messages.").filter(|ms| said_something(ms)))
    .or_else(|| events(span, false))
    .or_else(|| {
        [
            "output.value",
            "gen_ai.output",
            "gen_ai.response.content",
            "output",
        ]
        .iter()
        .find_map(|k| span.attr(k).map(|v| messages_of(v, "assistant")))
    })
    .unwrap_or_default();
    frameworks::fill_call_args(&mut ex.output, || {
        span.attr("output.value")
            .map(|v| messages_of(v, "assistant"))
            .unwrap_or_default()
    });
    if let Some(calls) = span.attr("ai.response.toolCalls").and_then(json_of) {
        let parts = tool_calls(&calls);
        if !parts.is_empty() {
            match ex.output.iter_mut().rev().find(|m| m.role == "assistant") {
                Some(m) => m.parts.extend(parts),
                None => ex.output.push(Msg {
                    role: Cow::Borrowed("assistant"),
                    parts,
                }),
            }
        }
    }
    // A model whose whole output was a list of tool requests (any-agent's `gen_ai.output`
    // of type json): requests, not text.
    for m in &mut ex.output {
        if let [Part::Text(t)] = m.parts.as_slice()
            && t.trim_start().starts_with('[')
            && let Some(v @ Json::Arr(_)) = parse_text(t)
        {
            let calls = tool_calls(&v);
            if !calls.is_empty() {
                m.parts = calls;
            }
        }
    }
    ex
}

/// A span's attribute, else the same attribute of its
/// `gen_ai.client.inference.operation.details` span events (Strands with the latest GenAI
/// conventions writes the messages there, input and output in two events).
fn genai_attr<'s, 'a>(span: &'s Span<'a>, key: &str) -> Option<&'s Val<'a>> {
    span.attr(key).or_else(|| {
        span.events
            .iter()
            .filter(|e| e.name == "gen_ai.client.inference.operation.details")
            .find_map(|e| super::span::attr(&e.attrs, key))
    })
}

/// A whole text as JSON, owning what it borrowed from `t` when `t` owns it.
fn parse_text<'s>(t: &Cow<'s, str>) -> Option<Json<'s>> {
    match t {
        Cow::Borrowed(b) => Json::parse(b.trim()),
        Cow::Owned(o) => Json::parse(o.trim()).map(Json::into_owned),
    }
}

/// A value as JSON: structured values as they are, strings decoded when they hold JSON,
/// other strings as JSON strings.
fn json_of<'s>(v: &'s Val<'_>) -> Option<Json<'s>> {
    match v {
        Val::Null => None,
        Val::Str(s) => Some(v.decoded_json().unwrap_or(Json::Str(Cow::Borrowed(s)))),
        other => Some(other.to_json()),
    }
}

/// The messages of the span's attribute `key` alone (plain text is one message of `role`).
pub(crate) fn value_messages<'s>(
    span: &'s Span<'_>,
    key: &str,
    role: &'static str,
) -> Vec<Msg<'s>> {
    span.attr(key)
        .map(|v| messages_of(v, role))
        .unwrap_or_default()
}

/// Messages from an attribute value; plain text becomes one message of `role`.
fn messages_of<'s>(v: &'s Val<'_>, role: &'static str) -> Vec<Msg<'s>> {
    match json_of(v) {
        Some(j) => messages_json(&j, role),
        None => Vec::new(),
    }
}

/// Messages from JSON of any of the shapes above.
pub(crate) fn messages_json<'s>(j: &Json<'s>, role: &'static str) -> Vec<Msg<'s>> {
    match j {
        Json::Arr(items) if frameworks::is_block_list(items) => vec![Msg {
            role: Cow::Borrowed(role),
            parts: items.iter().filter_map(part).collect(),
        }],
        Json::Arr(items) => items.iter().filter_map(|m| message(m, role)).collect(),
        Json::Obj(_) => {
            if let Some(ms) = j.get("messages").filter(|m| m.is_array()) {
                let mut out = Vec::new();
                if let Some(Json::Str(sys)) = j.get("system") {
                    out.push(text_msg("system", sys.clone()));
                }
                out.extend(messages_json(ms, role));
                return out;
            }
            // smolagents' agent span input is `{"task": ...}`.
            if let Some(Json::Str(p)) = j.get("prompt").or_else(|| j.get("task")) {
                return vec![text_msg("user", p.clone())];
            }
            message(j, role).into_iter().collect()
        }
        Json::Str(s) if !s.is_empty() => vec![text_msg(role, s.clone())],
        Json::Null | Json::Str(_) => Vec::new(),
        other => vec![text_msg(role, Cow::Owned(other.to_json_string()))],
    }
}

/// A string value, or compact JSON of any other.
fn text_or_json<'s>(v: &Json<'s>) -> Cow<'s, str> {
    match v {
        Json::Str(s) => s.clone(),
        other => Cow::Owned(other.to_json_string()),
    }
}

/// One message object: `{role, parts}`, `{role, content}`, a choice `{message: {...}}`, a
/// completion `{text}`.
fn message<'s>(m: &Json<'s>, default_role: &'static str) -> Option<Msg<'s>> {
    match m {
        Json::Obj(_) => {}
        Json::Str(s) => return Some(text_msg(default_role, s.clone())),
        Json::Arr(items) => return frameworks::tuple(items),
        _ => return None,
    }
    if let Some(inner) = m.get("message").filter(|v| v.is_object()) {
        return message(inner, default_role);
    }
    if let Some((inner, role)) = frameworks::langchain(m) {
        return message(inner, role);
    }
    let role = match m.get("role") {
        Some(Json::Str(r)) => r.clone(),
        _ => Cow::Borrowed(default_role),
    };
    let mut parts = Vec::new();
    // A Responses API item that is a tool request or a tool's output, not a message.
    if let Some("function_call" | "function_call_output") = m.get("type").and_then(Json::as_str) {
        parts.extend(part(m));
    }
    if let Some(Json::Arr(ps)) = m.get("parts") {
        parts.extend(ps.iter().filter_map(part));
    }
    // Strands' `gen_ai.choice` event has its content (blocks or text) as `message`.
    let content = m
        .get("content")
        .or_else(|| m.get("message").filter(|v| !v.is_object()));
    match content {
        Some(Json::Str(s)) => parts.push(Part::Text(s.clone())),
        Some(Json::Arr(ps)) => parts.extend(ps.iter().filter_map(part)),
        Some(Json::Null) | None => {}
        Some(other) => parts.push(Part::Text(Cow::Owned(other.to_json_string()))),
    }
    if let Some(Json::Str(t)) = m.get("text") {
        parts.push(Part::Text(t.clone()));
    }
    if let Some(calls) = m.get("tool_calls") {
        parts.extend(tool_calls(calls));
    }
    if role == "tool"
        && let Some(Json::Str(id)) = m.get("tool_call_id").or_else(|| m.get("id"))
    {
        // A tool message: its text is the response to that call.
        let text: Vec<&str> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(&**t),
                _ => None,
            })
            .collect();
        if !text.is_empty() {
            let joined = text.join("\n");
            parts.retain(|p| !matches!(p, Part::Text(_)));
            parts.push(Part::ToolResult {
                id: Some(id.clone()),
                response: Json::Str(Cow::Owned(joined)),
            });
        }
    }
    Some(Msg { role, parts })
}

/// One part: GenAI `{type, content}` / `tool_call` / `tool_call_response`, Vercel
/// `{type: text, text}` / `tool-call` / `tool-result`, OpenAI-style `{type: text, text}`.
fn part<'s>(p: &Json<'s>) -> Option<Part<'s>> {
    match p {
        Json::Str(s) => return Some(Part::Text(s.clone())),
        Json::Obj(_) => {}
        _ => return None,
    }
    if let Some(b) = frameworks::strands_block(p) {
        return Some(b);
    }
    let ty = p.get("type").and_then(Json::as_str).unwrap_or("text");
    let text = || p.get("content").or_else(|| p.get("text")).map(text_or_json);
    // A Responses API item's `id` is the item's; its `call_id` is the call's.
    let id = || match p
        .get("call_id")
        .or_else(|| p.get("id"))
        .or_else(|| p.get("toolCallId"))
    {
        Some(Json::Str(s)) => Some(s.clone()),
        _ => None,
    };
    match ty {
        "text" | "input_text" | "output_text" => text().map(Part::Text),
        "reasoning" | "thinking" => text().map(Part::Reasoning),
        "tool_call" | "tool-call" | "function_call" => Some(Part::ToolCall {
            id: id(),
            name: match p.get("name").or_else(|| p.get("toolName")) {
                Some(Json::Str(s)) => s.clone(),
                _ => Cow::Borrowed(""),
            },
            args: p
                .get("arguments")
                .or_else(|| p.get("args"))
                .or_else(|| p.get("input"))
                .map(decode_string),
        }),
        "tool_call_response" | "tool-result" | "function_call_output" => Some(Part::ToolResult {
            id: id(),
            response: p
                .get("response")
                .or_else(|| p.get("result"))
                .or_else(|| p.get("output"))
                .cloned()
                .unwrap_or(Json::Null),
        }),
        // Blobs, URIs, files: kept as a marker, never their bytes.
        other => Some(Part::Text(Cow::Owned(format!("[{other}]")))),
    }
}

/// Tool-call requests from an OpenAI-style `tool_calls` list, a list of GenAI tool_call
/// parts, Vercel's `toolCalls`, or any-agent's `[{"tool.name", "tool.args"}]`.
fn tool_calls<'s>(v: &Json<'s>) -> Vec<Part<'s>> {
    let Json::Arr(items) = v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|c| {
            if !c.is_object() {
                return None;
            }
            let f = c.get("function").filter(|f| f.is_object());
            let name = f
                .and_then(|f| f.get("name"))
                .or_else(|| c.get("name"))
                .or_else(|| c.get("toolName"))
                .or_else(|| c.get("tool.name"));
            let Some(Json::Str(name)) = name else {
                return None;
            };
            let args = f
                .and_then(|f| f.get("arguments"))
                .or_else(|| c.get("arguments"))
                .or_else(|| c.get("args"))
                .or_else(|| c.get("input"))
                .or_else(|| c.get("tool.args"))
                .map(decode_string);
            Some(Part::ToolCall {
                id: match c.get("id").or_else(|| c.get("toolCallId")) {
                    Some(Json::Str(s)) => Some(s.clone()),
                    _ => None,
                },
                name: name.clone(),
                args,
            })
        })
        .collect()
}

/// A JSON string that holds JSON (double-encoded arguments), decoded once.
pub(crate) fn decode_string<'s>(v: &Json<'s>) -> Json<'s> {
    if let Json::Str(s) = v
        && let Some(d) = Json::parse_cow(s)
    {
        return d;
    }
    v.clone()
}

/// The text of system instructions: a string, or a list of parts.
fn parts_text<'s>(v: &Json<'s>) -> Cow<'s, str> {
    match v {
        Json::Str(s) => s.clone(),
        Json::Arr(ps) => {
            let texts: Vec<Cow<'s, str>> = ps
                .iter()
                .filter_map(part)
                .filter_map(|p| match p {
                    Part::Text(t) => Some(t),
                    _ => None,
                })
                .collect();
            if texts.len() == 1 {
                texts.into_iter().next().unwrap_or_default()
            } else {
                Cow::Owned(texts.join("\n"))
            }
        }
        other => Cow::Owned(other.to_json_string()),
    }
}

/// A message being gathered from indexed attributes: index, message, tool-call fields
/// (call index, field, value), the tool call it answers.
type Indexed<'s> = (
    u32,
    Msg<'s>,
    Vec<(u32, &'s str, Cow<'s, str>)>,
    Option<Cow<'s, str>>,
);

/// Indexed attributes: `PREFIX<N>.role`, `.content`, `.tool_calls.<M>.name|arguments|id`,
/// `.tool_call_id`, `.finish_reason`. Indices are sorted numerically (`10` after `2`).
fn indexed<'s>(span: &'s Span<'_>, prefix: &str) -> Option<Vec<Msg<'s>>> {
    let mut msgs: Vec<Indexed<'s>> = Vec::new();
    for (k, v) in &span.attrs {
        let Some(rest) = k.strip_prefix(prefix) else {
            continue;
        };
        let Some((n, field)) = rest.split_once('.') else {
            continue;
        };
        let Ok(n) = n.parse::<u32>() else { continue };
        let i = match msgs.iter().position(|m| m.0 == n) {
            Some(i) => i,
            None => {
                msgs.push((n, Msg::default(), Vec::new(), None));
                msgs.len() - 1
            }
        };
        let m = &mut msgs[i];
        match field {
            "role" => m.1.role = v.to_text(),
            "content" => {
                let t = v.to_text();
                if !t.is_empty() {
                    m.1.parts.push(Part::Text(t));
                }
            }
            "tool_call_id" => m.3 = Some(v.to_text()),
            f => {
                if let Some(tc) = f.strip_prefix("tool_calls.")
                    && let Some((j, sub)) = tc.split_once('.')
                    && let Ok(j) = j.parse::<u32>()
                {
                    m.2.push((j, sub, v.to_text()));
                }
            }
        }
    }
    if msgs.is_empty() {
        return None;
    }
    msgs.sort_by_key(|m| m.0);
    Some(
        msgs.into_iter()
            .map(|(_, mut m, calls, call_id)| {
                if m.role.is_empty() {
                    m.role = Cow::Borrowed(if prefix.contains("completion") {
                        "assistant"
                    } else {
                        "user"
                    });
                }
                m.parts.extend(collect_calls(calls));
                if let Some(id) = call_id {
                    let text = m.text().into_owned();
                    m.parts = vec![Part::ToolResult {
                        id: Some(id),
                        response: Json::Str(Cow::Owned(text)),
                    }];
                }
                m
            })
            .collect(),
    )
}

/// Flattened tool calls (index, field, value) into parts, in index order.
fn collect_calls<'s>(mut calls: Vec<(u32, &'s str, Cow<'s, str>)>) -> Vec<Part<'s>> {
    calls.sort_by_key(|c| c.0);
    type Call<'s> = (u32, Option<Cow<'s, str>>, Cow<'s, str>, Option<Json<'s>>);
    let mut out: Vec<Call<'s>> = Vec::new();
    for (j, field, v) in calls {
        if out.last().is_none_or(|l| l.0 != j) {
            out.push((j, None, Cow::Borrowed(""), None));
        }
        let Some(c) = out.last_mut() else { continue };
        match field {
            "id" | "tool_call.id" => c.1 = Some(v),
            "name" | "function.name" | "tool_call.function.name" => c.2 = v,
            "arguments" | "function.arguments" | "tool_call.function.arguments" => {
                c.3 = Some(Json::parse_cow(&v).unwrap_or(Json::Str(v)))
            }
            _ => {}
        }
    }
    out.into_iter()
        .map(|(_, id, name, args)| Part::ToolCall { id, name, args })
        .collect()
}

/// As [`Indexed`], with the text contents by index.
type Flattened<'s> = (
    u32,
    Msg<'s>,
    Vec<(u32, Cow<'s, str>)>,
    Vec<(u32, &'s str, Cow<'s, str>)>,
    Option<Cow<'s, str>>,
);

/// OpenInference's `PREFIX<N>.message.role|content|contents.<M>.message_content.text|
/// tool_calls.<M>.tool_call.*|tool_call_id`.
fn openinference<'s>(span: &'s Span<'_>, prefix: &str) -> Option<Vec<Msg<'s>>> {
    let mut msgs: Vec<Flattened<'s>> = Vec::new();
    for (k, v) in &span.attrs {
        let Some(rest) = k.strip_prefix(prefix) else {
            continue;
        };
        let Some((n, field)) = rest.split_once(".message.") else {
            continue;
        };
        let Ok(n) = n.parse::<u32>() else { continue };
        let i = match msgs.iter().position(|m| m.0 == n) {
            Some(i) => i,
            None => {
                msgs.push((n, Msg::default(), Vec::new(), Vec::new(), None));
                msgs.len() - 1
            }
        };
        let m = &mut msgs[i];
        match field {
            "role" => m.1.role = v.to_text(),
            // Sorts before every `contents.N` text, and is dropped when there are any.
            "content" => m.2.push((u32::MAX, v.to_text())),
            "tool_call_id" => m.4 = Some(v.to_text()),
            f => {
                if let Some(c) = f.strip_prefix("contents.")
                    && let Some((j, sub)) = c.split_once('.')
                    && sub == "message_content.text"
                    && let Ok(j) = j.parse::<u32>()
                {
                    m.2.push((j, v.to_text()));
                } else if let Some(tc) = f.strip_prefix("tool_calls.")
                    && let Some((j, sub)) = tc.split_once('.')
                    && let Ok(j) = j.parse::<u32>()
                {
                    m.3.push((j, sub, v.to_text()));
                }
            }
        }
    }
    if msgs.is_empty() {
        return None;
    }
    msgs.sort_by_key(|m| m.0);
    Some(
        msgs.into_iter()
            .map(|(_, mut m, mut texts, calls, call_id)| {
                // `message.content` and `message.contents.N.message_content.text` are two
                // encodings of one text (instrumentations write both): the parts win.
                if texts.iter().any(|t| t.0 != u32::MAX) {
                    texts.retain(|t| t.0 != u32::MAX);
                }
                texts.sort_by_key(|t| t.0);
                match call_id {
                    Some(id) => {
                        let text: Vec<&str> = texts.iter().map(|t| &*t.1).collect();
                        m.parts.push(Part::ToolResult {
                            id: Some(id),
                            response: Json::Str(Cow::Owned(text.join("\n"))),
                        });
                    }
                    None => m.parts.extend(texts.into_iter().map(|t| Part::Text(t.1))),
                }
                m.parts.extend(collect_calls(calls));
                m
            })
            .collect(),
    )
}

/// The message a GenAI log record carries (`gen_ai.user.message` and the like, with the body
/// `{content, tool_calls, id}`; `gen_ai.choice` with `{index, finish_reason, message}`).
/// `None` for other event names.
pub(crate) fn log_message<'s>(event: &str, body: &'s Val<'_>) -> Option<Msg<'s>> {
    let role = match event {
        "gen_ai.system.message" => "system",
        "gen_ai.user.message" => "user",
        "gen_ai.assistant.message" | "gen_ai.choice" => "assistant",
        "gen_ai.tool.message" => "tool",
        _ => return None,
    };
    match json_of(body) {
        Some(j) => message(&j, role),
        None => Some(text_msg(role, Cow::Borrowed(""))),
    }
}

/// GenAI ≤ 1.36 per-message span events: `gen_ai.system.message`, `gen_ai.user.message`,
/// `gen_ai.assistant.message`, `gen_ai.tool.message` (input), `gen_ai.choice` (output), with
/// the body in `content`/`message` attributes or a JSON `gen_ai.event.content`.
fn events<'s>(span: &'s Span<'_>, input: bool) -> Option<Vec<Msg<'s>>> {
    let mut out = Vec::new();
    for e in &span.events {
        let role = match &*e.name {
            "gen_ai.system.message" if input => "system",
            "gen_ai.user.message" if input => "user",
            "gen_ai.assistant.message" if input => "assistant",
            "gen_ai.tool.message" if input => "tool",
            "gen_ai.choice" if !input => "assistant",
            _ => continue,
        };
        let body = super::span::attr(&e.attrs, "gen_ai.event.content")
            .or_else(|| super::span::attr(&e.attrs, "body"))
            .and_then(json_of);
        let mut fields: Vec<(Cow<'s, str>, Json<'s>)> = match body {
            Some(Json::Obj(o)) => o,
            Some(other) => vec![(Cow::Borrowed("content"), other)],
            None => Vec::new(),
        };
        for (k, v) in &e.attrs {
            if matches!(&**k, "content" | "message" | "tool_calls" | "id" | "role")
                && !fields.iter().any(|(f, _)| f == k)
            {
                fields.push((
                    Cow::Borrowed(&**k),
                    v.decoded_json().unwrap_or_else(|| v.to_json()),
                ));
            }
        }
        if let Some(m) = message(&Json::Obj(fields), role) {
            out.push(m);
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::super::span::SpanEvent;
    use super::*;

    fn span(
        attrs: &[(&'static str, Val<'static>)],
        events: Vec<SpanEvent<'static>>,
    ) -> Span<'static> {
        Span::for_test("x", attrs.to_vec(), events)
    }

    fn s(v: &'static str) -> Val<'static> {
        Val::Str(Cow::Borrowed(v))
    }

    /// The same exchange in the three GenAI encodings gives the same messages.
    #[test]
    fn three_encodings_one_exchange() {
        let current = span(
            &[
                (
                    "gen_ai.input.messages",
                    s(
                        r#"[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]"#,
                    ),
                ),
                (
                    "gen_ai.output.messages",
                    s(
                        r#"[{"role":"assistant","parts":[{"type":"text","content":"Rainy."},{"type":"tool_call","id":"c1","name":"get_weather","arguments":{"city":"Paris"}}]}]"#,
                    ),
                ),
            ],
            vec![],
        );
        let indexed = span(
            &[
                ("gen_ai.prompt.0.role", s("user")),
                ("gen_ai.prompt.0.content", s("Weather in Paris?")),
                ("gen_ai.completion.0.role", s("assistant")),
                ("gen_ai.completion.0.content", s("Rainy.")),
                ("gen_ai.completion.0.tool_calls.0.id", s("c1")),
                ("gen_ai.completion.0.tool_calls.0.name", s("get_weather")),
                (
                    "gen_ai.completion.0.tool_calls.0.arguments",
                    s(r#"{"city":"Paris"}"#),
                ),
            ],
            vec![],
        );
        let per_event = span(
            &[],
            vec![
                SpanEvent {
                    name: Cow::Borrowed("gen_ai.user.message"),
                    time: None,
                    attrs: vec![(Cow::Borrowed("content"), s("Weather in Paris?"))],
                },
                SpanEvent {
                    name: Cow::Borrowed("gen_ai.choice"),
                    time: None,
                    attrs: vec![(
                        Cow::Borrowed("message"),
                        s(
                            r#"{"role":"assistant","content":"Rainy.","tool_calls":[{"id":"c1","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}"#,
                        ),
                    )],
                },
            ],
        );
        let want = exchange(&current);
        assert_eq!(want.input.len(), 1);
        assert_eq!(want.input[0].text(), "Weather in Paris?");
        assert_eq!(want.output[0].text(), "Rainy.");
        assert!(matches!(&want.output[0].parts[1],
            Part::ToolCall { id: Some(i), name, args: Some(a) } if i == "c1" && name == "get_weather" && a.get("city").and_then(Json::as_str) == Some("Paris")));
        assert_eq!(exchange(&indexed), want);
        assert_eq!(exchange(&per_event), want);
    }

    #[test]
    fn indices_sort_numerically() {
        let mut attrs = Vec::new();
        let texts: Vec<String> = (0..12).map(|i| format!("m{i}")).collect();
        let keys: Vec<String> = (0..12)
            .map(|i| format!("gen_ai.prompt.{i}.content"))
            .collect();
        for i in (0..12).rev() {
            attrs.push((
                Cow::Owned(keys[i].clone()),
                Val::Str(Cow::Owned(texts[i].clone())),
            ));
        }
        let mut sp = span(&[], vec![]);
        sp.attrs = attrs;
        let got: Vec<String> = exchange(&sp)
            .input
            .iter()
            .map(|m| m.text().into_owned())
            .collect();
        assert_eq!(got, texts);
    }
}
