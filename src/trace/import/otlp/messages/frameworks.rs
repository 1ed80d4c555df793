//! Message shapes particular to one framework, read where the generic shapes are not:
//! - Strands Agents' (Bedrock Converse) content blocks `{"text"}`, `{"toolUse"}`,
//!   `{"toolResult"}`, `{"reasoningContent"}`, in per-message events whose `message` or
//!   `content` attribute is a list of blocks (or plain text);
//! - LangChain's serialized messages as LangGraph's OpenInference spans carry them:
//!   `{"type": "human"|"ai"|"tool"|"system", "data": {...}}`, the constructor form
//!   `{"lc": 1, "id": [..., "HumanMessage"], "kwargs": {...}}`, and `["user", "text"]` tuples.

use std::borrow::Cow;

use super::super::json_value::Json;
use super::{Msg, Part, decode_string};

/// A Strands content block as a part; `None` when `p` is not one.
pub(super) fn strands_block<'s>(p: &Json<'s>) -> Option<Part<'s>> {
    if p.get("type").is_some() {
        return None;
    }
    if let Some(u) = p.get("toolUse").filter(|u| u.is_object()) {
        return Some(Part::ToolCall {
            id: u.get("toolUseId").and_then(str_cow),
            name: u.get("name").and_then(str_cow).unwrap_or_default(),
            args: u.get("input").map(decode_string),
        });
    }
    if let Some(r) = p.get("toolResult").filter(|r| r.is_object()) {
        let response = match r.get("content") {
            Some(c) => blocks_text(c).map(Json::Str).unwrap_or_else(|| c.clone()),
            None => Json::Null,
        };
        return Some(Part::ToolResult {
            id: r.get("toolUseId").and_then(str_cow),
            response,
        });
    }
    if let Some(rc) = p.get("reasoningContent") {
        let text = rc
            .get("reasoningText")
            .and_then(|t| t.get("text"))
            .and_then(str_cow)?;
        return Some(Part::Reasoning(text));
    }
    None
}

/// A list of Strands content blocks (one message's content), not a list of messages.
pub(super) fn is_block_list(items: &[Json<'_>]) -> bool {
    !items.is_empty()
        && items.iter().all(|b| match b {
            Json::Obj(fields) => fields.iter().all(|(k, _)| {
                matches!(&**k, "text" | "toolUse" | "toolResult" | "reasoningContent")
            }),
            _ => false,
        })
        && items.iter().any(|b| b.get("text").is_none())
}

/// The text of a list of `{"text": ...}` blocks (Strands' tool results, `[{"text": "Rainy"}]`),
/// joined by newlines; `None` unless every block is text.
pub(crate) fn blocks_text<'s>(v: &Json<'s>) -> Option<Cow<'s, str>> {
    let Json::Arr(items) = v else { return None };
    if items.is_empty() {
        return None;
    }
    let mut out: Vec<Cow<'s, str>> = Vec::with_capacity(items.len());
    for b in items {
        match b {
            Json::Obj(fields) if fields.len() == 1 => out.push(b.get("text").and_then(str_cow)?),
            _ => return None,
        }
    }
    Some(if out.len() == 1 {
        out.swap_remove(0)
    } else {
        Cow::Owned(out.join("\n"))
    })
}

fn str_cow<'s>(v: &Json<'s>) -> Option<Cow<'s, str>> {
    match v {
        Json::Str(s) => Some(s.clone()),
        _ => None,
    }
}

/// Tool requests read without their arguments (OpenInference's smolagents instrumentation
/// writes `llm.output_messages.N.message.tool_calls` with the id and name only) take them
/// from the same requests in `fallback` (the span's `output.value`), matched by call id.
pub(super) fn fill_call_args<'s>(output: &mut [Msg<'s>], fallback: impl FnOnce() -> Vec<Msg<'s>>) {
    let missing = |p: &Part<'_>| {
        matches!(
            p,
            Part::ToolCall {
                id: Some(_),
                args: None,
                ..
            }
        )
    };
    if !output.iter().flat_map(|m| &m.parts).any(missing) {
        return;
    }
    let known = fallback();
    for p in output.iter_mut().flat_map(|m| m.parts.iter_mut()) {
        let Part::ToolCall {
            id: Some(id),
            args: args @ None,
            ..
        } = p
        else {
            continue;
        };
        *args = known.iter().flat_map(|m| &m.parts).find_map(|k| match k {
            Part::ToolCall {
                id: Some(kid),
                args: Some(a),
                ..
            } if kid == id => Some(a.clone()),
            _ => None,
        });
    }
}

/// The role a LangChain message type stands for.
fn langchain_role(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "human" | "HumanMessage" | "HumanMessageChunk" => "user",
        "ai" | "AIMessage" | "AIMessageChunk" => "assistant",
        "tool" | "ToolMessage" | "ToolMessageChunk" => "tool",
        "system" | "SystemMessage" => "system",
        _ => return None,
    })
}

/// A LangChain serialized message: the message object inside and its role; `None` when `m`
/// is not one.
pub(super) fn langchain<'a, 's>(m: &'a Json<'s>) -> Option<(&'a Json<'s>, &'static str)> {
    if let Some(data) = m.get("data").filter(|d| d.is_object())
        && let Some(role) = m
            .get("type")
            .and_then(Json::as_str)
            .and_then(langchain_role)
    {
        return Some((data, role));
    }
    if let Some(kwargs) = m.get("kwargs").filter(|d| d.is_object())
        && let Some(Json::Arr(id)) = m.get("id")
        && let Some(role) = id.last().and_then(Json::as_str).and_then(langchain_role)
    {
        return Some((kwargs, role));
    }
    None
}

/// A `("role", "text")` tuple, as LangGraph's inputs are often written.
pub(super) fn tuple<'s>(items: &[Json<'s>]) -> Option<Msg<'s>> {
    let [Json::Str(role), Json::Str(text)] = items else {
        return None;
    };
    let role = match langchain_role(role) {
        Some(r) => Cow::Borrowed(r),
        None => role.clone(),
    };
    Some(Msg {
        role,
        parts: vec![Part::Text(text.clone())],
    })
}

#[cfg(test)]
mod tests {
    use super::super::messages_json;
    use super::*;

    fn parse(s: &'static str) -> Json<'static> {
        Json::parse(s).expect("json")
    }

    /// Strands' `gen_ai.choice` blocks: the text, the tool request with its input, a result.
    #[test]
    fn strands_blocks_are_text_tool_calls_and_results() {
        let v = parse(
            r#"[{"text":"Let me check."},{"toolUse":{"toolUseId":"c1","name":"get_weather","input":{"city":"Paris"}}}]"#,
        );
        let msgs = messages_json(&v, "assistant");
        // One message of two blocks, not two messages.
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert_eq!(msgs[0].text(), "Let me check.");
        assert!(matches!(&msgs[0].parts[1],
            Part::ToolCall { id: Some(i), name, args: Some(a) }
                if i == "c1" && name == "get_weather" && a.get("city").and_then(Json::as_str) == Some("Paris")));
        let r = parse(
            r#"[{"toolResult":{"toolUseId":"c1","status":"success","content":[{"text":"Rainy"}]}}]"#,
        );
        let msgs = messages_json(&r, "tool");
        assert_eq!(
            msgs[0].parts,
            vec![Part::ToolResult {
                id: Some(Cow::Borrowed("c1")),
                response: Json::Str(Cow::Borrowed("Rainy"))
            }]
        );
    }

    fn span(
        attrs: &[(&'static str, &'static str)],
    ) -> crate::trace::import::otlp::span::Span<'static> {
        use crate::trace::import::otlp::span::{Span, Val};
        let attrs = attrs.iter().map(|(k, v)| (*k, Val::Str(Cow::Borrowed(*v))));
        Span::for_test("x", attrs.collect(), Vec::new())
    }

    /// OpenInference's `message.content` and `message.contents.N.message_content.text` are
    /// two encodings of one text: the output is said once.
    #[test]
    fn openinference_content_and_contents_are_one_text() {
        let sp = span(&[
            ("llm.output_messages.0.message.role", "assistant"),
            ("llm.output_messages.0.message.content", "Rainy."),
            (
                "llm.output_messages.0.message.contents.0.message_content.type",
                "text",
            ),
            (
                "llm.output_messages.0.message.contents.0.message_content.text",
                "Rainy.",
            ),
            ("llm.input_messages.0.message.role", "user"),
            ("llm.input_messages.0.message.content", "Weather?"),
        ]);
        let ex = super::super::exchange(&sp);
        assert_eq!(ex.output.len(), 1);
        assert_eq!(
            ex.output[0].parts,
            vec![Part::Text(Cow::Borrowed("Rainy."))]
        );
        // `content` alone is still the text.
        assert_eq!(ex.input[0].text(), "Weather?");
    }

    /// LangGraph's state messages: serialized, constructor and tuple forms, with roles.
    #[test]
    fn langchain_messages_have_their_roles_and_text() {
        let v = parse(
            r#"{"messages":[["user","Q1"],{"type":"ai","data":{"content":"A1","tool_calls":[{"name":"t","args":{"x":1},"id":"c"}]}},{"lc":1,"type":"constructor","id":["langchain","schema","messages","HumanMessage"],"kwargs":{"content":"Q2"}}]}"#,
        );
        let msgs = messages_json(&v, "assistant");
        let roles: Vec<&str> = msgs.iter().map(|m| &*m.role).collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(msgs[2].text(), "Q2");
        assert!(matches!(&msgs[1].parts[1], Part::ToolCall { name, .. } if name == "t"));
    }
}
