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

use serde_json::Value as J;

use super::span::{Span, Val};

/// One part of a message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    /// Text.
    Text(String),
    /// Reasoning the model showed.
    Reasoning(String),
    /// A request to call a tool.
    ToolCall {
        /// The call id.
        id: Option<String>,
        /// The tool.
        name: String,
        /// Its arguments (decoded when they were a JSON string).
        args: Option<J>,
    },
    /// A tool's response.
    ToolResult {
        /// The call id it answers.
        id: Option<String>,
        /// The response.
        response: J,
    },
}

/// One message.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Msg {
    /// `system`, `user`, `assistant`, `tool`.
    pub role: String,
    /// Its parts.
    pub parts: Vec<Part>,
}

impl Msg {
    /// The text parts joined.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            if let Part::Text(t) = p {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(t);
            }
        }
        out
    }
}

/// What a span says was sent to and received from a model.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Exchange {
    /// System instructions and input messages.
    pub input: Vec<Msg>,
    /// Output messages.
    pub output: Vec<Msg>,
}

/// Reads a span's messages from every encoding it carries; the first encoding found for
/// each direction wins (instrumentations that write two write the same messages twice).
pub(crate) fn exchange(span: &Span<'_>) -> Exchange {
    let mut ex = Exchange::default();
    if let Some(v) = span.attr("gen_ai.system_instructions").and_then(json_of) {
        let text = parts_text(&v);
        if !text.is_empty() {
            ex.input.push(Msg {
                role: "system".into(),
                parts: vec![Part::Text(text)],
            });
        }
    }
    let input = [
        "gen_ai.input.messages",
        "gen_ai.prompt",
        "ai.prompt.messages",
        "ai.prompt",
    ]
    .iter()
    .find_map(|k| span.attr(k).map(|v| messages_of(v, "user")))
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
    .find_map(|k| span.attr(k).map(|v| messages_of(v, "assistant")))
    .filter(|m| !m.is_empty())
    .or_else(|| indexed(span, "gen_ai.completion."))
    .or_else(|| openinference(span, "llm.output_messages."))
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
    if let Some(calls) = span.attr("ai.response.toolCalls").and_then(json_of) {
        let parts = tool_calls(&calls);
        if !parts.is_empty() {
            match ex.output.iter_mut().rev().find(|m| m.role == "assistant") {
                Some(m) => m.parts.extend(parts),
                None => ex.output.push(Msg {
                    role: "assistant".into(),
                    parts,
                }),
            }
        }
    }
    // A model whose whole output was a list of tool requests (any-agent's `gen_ai.output`
    // of type json): requests, not text.
    for m in &mut ex.output {
        if let [Part::Text(t)] = m.parts.as_slice()
            && let Ok(v @ J::Array(_)) = serde_json::from_str::<J>(t.trim())
        {
            let calls = tool_calls(&v);
            if !calls.is_empty() {
                m.parts = calls;
            }
        }
    }
    ex
}

/// A value as JSON: structured values as they are, strings decoded when they hold JSON,
/// other strings as JSON strings.
fn json_of(v: &Val<'_>) -> Option<J> {
    match v {
        Val::Null => None,
        Val::Str(s) => Some(v.decoded_json().unwrap_or_else(|| J::String(s.to_string()))),
        other => Some(other.to_json()),
    }
}

/// Messages from an attribute value; plain text becomes one message of `role`.
fn messages_of(v: &Val<'_>, role: &str) -> Vec<Msg> {
    match json_of(v) {
        Some(j) => messages_json(&j, role),
        None => Vec::new(),
    }
}

/// Messages from JSON of any of the shapes above.
pub(crate) fn messages_json(j: &J, role: &str) -> Vec<Msg> {
    match j {
        J::Array(items) => items.iter().filter_map(|m| message(m, role)).collect(),
        J::Object(o) => {
            if let Some(ms) = o.get("messages").filter(|m| m.is_array()) {
                let mut out = Vec::new();
                if let Some(sys) = o.get("system").and_then(J::as_str) {
                    out.push(Msg {
                        role: "system".into(),
                        parts: vec![Part::Text(sys.to_string())],
                    });
                }
                out.extend(messages_json(ms, role));
                return out;
            }
            if let Some(p) = o.get("prompt").and_then(J::as_str) {
                return vec![Msg {
                    role: "user".into(),
                    parts: vec![Part::Text(p.to_string())],
                }];
            }
            message(j, role).into_iter().collect()
        }
        J::String(s) if !s.is_empty() => vec![Msg {
            role: role.to_string(),
            parts: vec![Part::Text(s.clone())],
        }],
        J::Null | J::String(_) => Vec::new(),
        other => vec![Msg {
            role: role.to_string(),
            parts: vec![Part::Text(other.to_string())],
        }],
    }
}

/// One message object: `{role, parts}`, `{role, content}`, a choice `{message: {...}}`, a
/// completion `{text}`.
fn message(m: &J, default_role: &str) -> Option<Msg> {
    let o = match m {
        J::Object(o) => o,
        J::String(s) => {
            return Some(Msg {
                role: default_role.to_string(),
                parts: vec![Part::Text(s.clone())],
            });
        }
        _ => return None,
    };
    if let Some(inner) = o.get("message").filter(|v| v.is_object()) {
        return message(inner, default_role);
    }
    let role = o
        .get("role")
        .and_then(J::as_str)
        .unwrap_or(default_role)
        .to_string();
    let mut parts = Vec::new();
    if let Some(J::Array(ps)) = o.get("parts") {
        parts.extend(ps.iter().filter_map(part));
    }
    match o.get("content") {
        Some(J::String(s)) => parts.push(Part::Text(s.clone())),
        Some(J::Array(ps)) => parts.extend(ps.iter().filter_map(part)),
        Some(J::Null) | None => {}
        Some(other) => parts.push(Part::Text(other.to_string())),
    }
    if let Some(t) = o.get("text").and_then(J::as_str) {
        parts.push(Part::Text(t.to_string()));
    }
    if let Some(calls) = o.get("tool_calls") {
        parts.extend(tool_calls(calls));
    }
    if role == "tool"
        && let Some(id) = o
            .get("tool_call_id")
            .or_else(|| o.get("id"))
            .and_then(J::as_str)
    {
        // A tool message: its text is the response to that call.
        let text: Vec<String> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.clone()),
                _ => None,
            })
            .collect();
        if !text.is_empty() {
            parts.retain(|p| !matches!(p, Part::Text(_)));
            parts.push(Part::ToolResult {
                id: Some(id.to_string()),
                response: J::String(text.join("\n")),
            });
        }
    }
    Some(Msg { role, parts })
}

/// One part: GenAI `{type, content}` / `tool_call` / `tool_call_response`, Vercel
/// `{type: text, text}` / `tool-call` / `tool-result`, OpenAI-style `{type: text, text}`.
fn part(p: &J) -> Option<Part> {
    let o = match p {
        J::String(s) => return Some(Part::Text(s.clone())),
        J::Object(o) => o,
        _ => return None,
    };
    let ty = o.get("type").and_then(J::as_str).unwrap_or("text");
    let text = || {
        o.get("content").or_else(|| o.get("text")).map(|c| match c {
            J::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let id = || {
        o.get("id")
            .or_else(|| o.get("toolCallId"))
            .and_then(J::as_str)
            .map(str::to_string)
    };
    match ty {
        "text" | "input_text" | "output_text" => text().map(Part::Text),
        "reasoning" | "thinking" => text().map(Part::Reasoning),
        "tool_call" | "tool-call" | "function_call" => Some(Part::ToolCall {
            id: id(),
            name: o
                .get("name")
                .or_else(|| o.get("toolName"))
                .and_then(J::as_str)
                .unwrap_or("")
                .to_string(),
            args: o
                .get("arguments")
                .or_else(|| o.get("args"))
                .or_else(|| o.get("input"))
                .map(decode_string),
        }),
        "tool_call_response" | "tool-result" | "function_call_output" => Some(Part::ToolResult {
            id: id(),
            response: o
                .get("response")
                .or_else(|| o.get("result"))
                .or_else(|| o.get("output"))
                .cloned()
                .unwrap_or(J::Null),
        }),
        // Blobs, URIs, files: kept as a marker, never their bytes.
        other => Some(Part::Text(format!("[{other}]"))),
    }
}

/// Tool-call requests from an OpenAI-style `tool_calls` list, a list of GenAI tool_call
/// parts, Vercel's `toolCalls`, or any-agent's `[{"tool.name", "tool.args"}]`.
fn tool_calls(v: &J) -> Vec<Part> {
    let J::Array(items) = v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|c| {
            let o = c.as_object()?;
            let f = o.get("function").and_then(J::as_object);
            let name = f
                .and_then(|f| f.get("name"))
                .or_else(|| o.get("name"))
                .or_else(|| o.get("toolName"))
                .or_else(|| o.get("tool.name"))
                .and_then(J::as_str)?;
            let args = f
                .and_then(|f| f.get("arguments"))
                .or_else(|| o.get("arguments"))
                .or_else(|| o.get("args"))
                .or_else(|| o.get("input"))
                .or_else(|| o.get("tool.args"))
                .map(decode_string);
            Some(Part::ToolCall {
                id: o
                    .get("id")
                    .or_else(|| o.get("toolCallId"))
                    .and_then(J::as_str)
                    .map(str::to_string),
                name: name.to_string(),
                args,
            })
        })
        .collect()
}

/// A JSON string that holds JSON (double-encoded arguments), decoded once.
pub(crate) fn decode_string(v: &J) -> J {
    if let J::String(s) = v {
        let t = s.trim_start();
        if (t.starts_with('{') || t.starts_with('['))
            && let Ok(d) = serde_json::from_str(t)
        {
            return d;
        }
    }
    v.clone()
}

/// The text of system instructions: a string, or a list of parts.
fn parts_text(v: &J) -> String {
    match v {
        J::String(s) => s.clone(),
        J::Array(ps) => ps
            .iter()
            .filter_map(part)
            .filter_map(|p| match p {
                Part::Text(t) => Some(t),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// A message being gathered from indexed attributes: index, message, tool-call fields
/// (call index, field, value), the tool call it answers.
type Indexed = (u32, Msg, Vec<(u32, String, J)>, Option<String>);

/// Indexed attributes: `PREFIX<N>.role`, `.content`, `.tool_calls.<M>.name|arguments|id`,
/// `.tool_call_id`, `.finish_reason`. Indices are sorted numerically (`10` after `2`).
fn indexed(span: &Span<'_>, prefix: &str) -> Option<Vec<Msg>> {
    let mut msgs: Vec<Indexed> = Vec::new();
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
                    m.2.push((j, sub.to_string(), J::String(v.to_text())));
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
                    m.role = if prefix.contains("completion") {
                        "assistant".into()
                    } else {
                        "user".into()
                    };
                }
                m.parts.extend(collect_calls(calls));
                if let Some(id) = call_id {
                    let text = m.text();
                    m.parts = vec![Part::ToolResult {
                        id: Some(id),
                        response: J::String(text),
                    }];
                }
                m
            })
            .collect(),
    )
}

/// Flattened tool calls (index, field, value) into parts, in index order.
fn collect_calls(mut calls: Vec<(u32, String, J)>) -> Vec<Part> {
    calls.sort_by_key(|c| c.0);
    let mut out: Vec<(u32, Option<String>, String, Option<J>)> = Vec::new();
    for (j, field, v) in calls {
        if out.last().is_none_or(|l| l.0 != j) {
            out.push((j, None, String::new(), None));
        }
        let Some(c) = out.last_mut() else { continue };
        let s = v.as_str().unwrap_or_default().to_string();
        match field.as_str() {
            "id" | "tool_call.id" => c.1 = Some(s),
            "name" | "function.name" | "tool_call.function.name" => c.2 = s,
            "arguments" | "function.arguments" | "tool_call.function.arguments" => {
                c.3 = Some(decode_string(&J::String(s)))
            }
            _ => {}
        }
    }
    out.into_iter()
        .map(|(_, id, name, args)| Part::ToolCall { id, name, args })
        .collect()
}

/// As [`Indexed`], with the text contents by index.
type Flattened = (
    u32,
    Msg,
    Vec<(u32, String)>,
    Vec<(u32, String, J)>,
    Option<String>,
);

/// OpenInference's `PREFIX<N>.message.role|content|contents.<M>.message_content.text|
/// tool_calls.<M>.tool_call.*|tool_call_id`.
fn openinference(span: &Span<'_>, prefix: &str) -> Option<Vec<Msg>> {
    let mut msgs: Vec<Flattened> = Vec::new();
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
            "content" => m.2.push((0, v.to_text())),
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
                    m.3.push((j, sub.to_string(), J::String(v.to_text())));
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
                texts.sort_by_key(|t| t.0);
                let text: Vec<String> = texts.into_iter().map(|t| t.1).collect();
                match call_id {
                    Some(id) => m.parts.push(Part::ToolResult {
                        id: Some(id),
                        response: J::String(text.join("\n")),
                    }),
                    None => m.parts.extend(text.into_iter().map(Part::Text)),
                }
                m.parts.extend(collect_calls(calls));
                m
            })
            .collect(),
    )
}

/// GenAI ≤ 1.36 per-message span events: `gen_ai.system.message`, `gen_ai.user.message`,
/// `gen_ai.assistant.message`, `gen_ai.tool.message` (input), `gen_ai.choice` (output), with
/// the body in `content`/`message` attributes or a JSON `gen_ai.event.content`.
fn events(span: &Span<'_>, input: bool) -> Option<Vec<Msg>> {
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
        let mut fields: serde_json::Map<String, J> = match body {
            Some(J::Object(o)) => o,
            Some(other) => [("content".to_string(), other)].into_iter().collect(),
            None => serde_json::Map::new(),
        };
        for (k, v) in &e.attrs {
            if matches!(&**k, "content" | "message" | "tool_calls" | "id" | "role") {
                fields
                    .entry(k.to_string())
                    .or_insert_with(|| v.decoded_json().unwrap_or_else(|| v.to_json()));
            }
        }
        if let Some(m) = message(&J::Object(fields), role) {
            out.push(m);
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::sync::Arc;

    use super::super::span::{Resource, SpanEvent};
    use super::*;

    fn span(
        attrs: &[(&'static str, Val<'static>)],
        events: Vec<SpanEvent<'static>>,
    ) -> Span<'static> {
        Span {
            trace: None,
            id: None,
            parent: None,
            name: Cow::Borrowed("x"),
            start: None,
            end: None,
            error: false,
            status_message: None,
            attrs: attrs
                .iter()
                .map(|(k, v)| (Cow::Borrowed(*k), v.clone()))
                .collect(),
            events,
            resource: Arc::new(Resource::default()),
            location: Arc::from("test"),
        }
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
            Part::ToolCall { id: Some(i), name, args: Some(a) } if i == "c1" && name == "get_weather" && a["city"] == "Paris"));
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
        let got: Vec<String> = exchange(&sp).input.iter().map(Msg::text).collect();
        assert_eq!(got, texts);
    }
}
