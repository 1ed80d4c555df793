//! What particular frameworks' spans mean beyond the conventions they follow, found on their
//! real traces (`tests/frameworks_b.rs`):
//! - LangGraph (OpenInference): the graph's root `CHAIN` span is the agent run; its `agent`
//!   node is marked `AGENT` but each pass through it is a step of that run;
//! - LlamaIndex (OpenInference): `_prepare_chat_with_tools` is marked `LLM` but only
//!   assembles the request: its `output.value` is no model output; the workflow's root
//!   `CHAIN` span (`FunctionAgent.run`) is the agent run;
//! - OpenInference tool spans: the call's arguments are `input.value` (smolagents and
//!   LlamaIndex wrap them as `{"args": [], "kwargs": {...}}`), never `tool.parameters` (the
//!   tool's schema); results wrapped in the framework's objects (LangChain's `ToolMessage`,
//!   LlamaIndex's `ToolOutput`, Strands' text blocks) are their content;
//! - Strands: a tool span's arguments and result are its `gen_ai.tool.message` and
//!   `gen_ai.choice` span events.

use super::super::json_value::Json;
use super::super::messages::blocks_text;
use super::super::span::{Span, Val};

/// OpenInference's span kind, upper case.
fn oi_kind(sp: &Span<'_>) -> Option<String> {
    sp.str_attr("openinference.span.kind")
        .map(str::to_ascii_uppercase)
}

/// A LangGraph node's span (its `metadata` names the node): a step of the graph's run.
pub(super) fn is_graph_node(sp: &Span<'_>) -> bool {
    sp.attr("metadata")
        .and_then(Val::decoded_json)
        .is_some_and(|m| m.get("langgraph_node").is_some())
}

/// The root `CHAIN` span of an OpenInference trace that called a model below it (a
/// LangGraph graph, a LlamaIndex workflow agent): the agent run those calls belong to.
pub(super) fn is_run_root(sp: &Span<'_>, models_below: bool) -> bool {
    models_below && sp.parent.is_none() && oi_kind(sp).as_deref() == Some("CHAIN")
}

/// LlamaIndex's request assembly, marked `LLM` without being a model call.
pub(super) fn is_request_assembly(sp: &Span<'_>) -> bool {
    sp.name.ends_with("._prepare_chat_with_tools") || sp.name == "_prepare_chat_with_tools"
}

/// A tool call a model requested, kept until a tool span takes it.
#[derive(Debug)]
pub(super) struct Request {
    pub id: Option<String>,
    pub name: String,
    pub args: Json<'static>,
}

/// Takes the request a tool span answers: the one with its call id; without an id, the
/// oldest request of that tool whose arguments hold the value the span shows (LangGraph's
/// tool span has the first argument's value as its input), else the oldest of that tool.
pub(super) fn take_request(
    reqs: &mut Vec<Request>,
    tool: &str,
    call_id: Option<&str>,
    shown: &Option<Json<'_>>,
) -> Option<Request> {
    let i = match call_id {
        Some(c) => reqs.iter().position(|r| r.id.as_deref() == Some(c))?,
        None => {
            let holds = |r: &Request| match (&r.args, shown) {
                (Json::Obj(fields), Some(v)) => fields.iter().any(|(_, a)| a == v),
                _ => false,
            };
            reqs.iter()
                .position(|r| r.name == tool && holds(r))
                .or_else(|| reqs.iter().position(|r| r.name == tool))?
        }
    };
    Some(reqs.remove(i))
}

/// An attribute as JSON, a string that holds JSON decoded.
fn json_of<'s>(v: &'s Val<'_>) -> Json<'s> {
    v.decoded_json().unwrap_or_else(|| v.to_json())
}

/// The span event `name`'s attribute `key`.
fn event_attr<'s, 'a>(sp: &'s Span<'a>, name: &str, key: &str) -> Option<&'s Val<'a>> {
    sp.events
        .iter()
        .filter(|e| e.name == name)
        .find_map(|e| super::super::span::attr(&e.attrs, key))
}

/// A tool call's arguments: the GenAI attributes, Strands' `gen_ai.tool.message` event,
/// then OpenInference's `input.value` (its `kwargs` when wrapped); the tool's schema
/// (`tool.parameters`) only when nothing else says what it was called with.
pub(super) fn tool_args<'s>(sp: &'s Span<'_>) -> Option<Json<'s>> {
    let first = [
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.args",
        "ai.toolCall.args",
        // pydantic-ai's data format 2.
        "tool_arguments",
    ]
    .iter()
    .find_map(|k| sp.attr(k))
    .or_else(|| event_attr(sp, "gen_ai.tool.message", "content"));
    if let Some(v) = first {
        return Some(json_of(v));
    }
    if let Some(v) = sp.attr("input.value").or_else(|| sp.attr("input")) {
        let j = json_of(v);
        return Some(match j.get("kwargs") {
            Some(kw @ Json::Obj(_))
                if j.get("args")
                    .is_none_or(|a| matches!(a, Json::Arr(x) if x.is_empty())) =>
            {
                kw.clone()
            }
            _ => j,
        });
    }
    sp.attr("tool.parameters").map(json_of)
}

/// A tool call's result, unwrapped from the framework's result object; and the call id the
/// result names (LangChain's `ToolMessage.tool_call_id`).
pub(super) fn tool_result<'s>(sp: &'s Span<'_>) -> Option<(Json<'s>, Option<String>)> {
    let v = [
        "gen_ai.tool.call.result",
        "gen_ai.output",
        "ai.toolCall.result",
        "tool_response",
        "output.value",
        "output",
    ]
    .iter()
    .find_map(|k| sp.attr(k))
    .or_else(|| event_attr(sp, "gen_ai.choice", "message"))?;
    let j = json_of(v);
    if let Some(t) = blocks_text(&j) {
        return Some((Json::Str(t), None));
    }
    // LangChain's ToolMessage, serialized.
    if j.get("type").and_then(Json::as_str) == Some("tool")
        && let Some(data) = j.get("data").filter(|d| d.is_object())
        && let Some(content) = data.get("content")
    {
        let id = data
            .get("tool_call_id")
            .and_then(Json::as_str)
            .map(str::to_string);
        return Some((content.clone(), id));
    }
    // LlamaIndex's ToolOutput.
    if let Some(raw) = j.get("raw_output")
        && j.get("tool_name").is_some()
    {
        return Some((raw.clone(), None));
    }
    Some((j, None))
}

/// An error text without the traceback some instrumentations append to it (LangChain's
/// status message is `RuntimeError('...')Traceback (most recent call last): ...`).
pub(super) fn without_traceback(s: &str) -> &str {
    match s.find("Traceback (most recent call last)") {
        Some(0) | None => s,
        Some(i) => s[..i].trim_end(),
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn span(attrs: &[(&'static str, &'static str)]) -> Span<'static> {
        let attrs = attrs.iter().map(|(k, v)| (*k, Val::Str(Cow::Borrowed(*v))));
        Span::for_test("tool", attrs.collect(), Vec::new())
    }

    /// smolagents' and LlamaIndex's tool spans: the call's kwargs, not the tool's schema.
    #[test]
    fn tool_arguments_are_the_call_not_the_schema() {
        let smol = span(&[
            ("tool.parameters", r#"{"city":{"type":"string"}}"#),
            (
                "input.value",
                r#"{"args":[],"sanitize_inputs_outputs":true,"kwargs":{"city":"Paris"}}"#,
            ),
        ]);
        let args = tool_args(&smol).expect("args");
        assert_eq!(args.to_json_string(), r#"{"city":"Paris"}"#);
        // Positional arguments are kept with the rest: nothing is dropped.
        let positional = span(&[("input.value", r#"{"args":["Paris"],"kwargs":{}}"#)]);
        assert!(
            tool_args(&positional)
                .expect("args")
                .to_json_string()
                .contains("Paris")
        );
        // The schema only when nothing says what the tool was called with.
        let bare = span(&[("tool.parameters", r#"{"city":{"type":"string"}}"#)]);
        assert!(tool_args(&bare).is_some());
    }

    /// LangChain's ToolMessage, LlamaIndex's ToolOutput and Strands' text blocks are their
    /// content; LangChain's names the call it answers.
    #[test]
    fn tool_results_are_their_content() {
        let lc = span(&[(
            "output.value",
            r#"{"type":"tool","data":{"content":"Rainy","tool_call_id":"c1","status":"success"}}"#,
        )]);
        let (r, id) = tool_result(&lc).expect("result");
        assert_eq!((r.as_str(), id.as_deref()), (Some("Rainy"), Some("c1")));
        let li = span(&[(
            "output.value",
            r#"{"blocks":[{"text":"Rainy"}],"tool_name":"get_weather","raw_output":"Rainy","is_error":false}"#,
        )]);
        assert_eq!(tool_result(&li).expect("result").0.as_str(), Some("Rainy"));
        let strands = span(&[("gen_ai.tool.call.result", r#"[{"text":"Rainy"}]"#)]);
        assert_eq!(
            tool_result(&strands).expect("result").0.as_str(),
            Some("Rainy")
        );
    }

    /// A request is taken by call id; without one, by the tool and the value shown.
    #[test]
    fn requests_are_matched_by_id_then_by_value() {
        let req = |id: &str, city: &str| {
            let text = format!(r#"{{"city":"{city}"}}"#);
            Request {
                id: Some(id.to_string()),
                name: "get_weather".into(),
                args: Json::parse(&text).expect("json").into_owned(),
            }
        };
        let mut reqs = vec![req("c1", "Paris"), req("c2", "Rome")];
        let shown = Some(Json::Str(Cow::Borrowed("Rome")));
        let r = take_request(&mut reqs, "get_weather", None, &shown).expect("Rome's");
        assert_eq!(r.id.as_deref(), Some("c2"));
        let r = take_request(&mut reqs, "get_weather", Some("c1"), &None).expect("c1");
        assert_eq!(r.id.as_deref(), Some("c1"));
        assert!(take_request(&mut reqs, "get_weather", None, &None).is_none());
    }

    #[test]
    fn tracebacks_are_cut_from_errors() {
        assert_eq!(
            without_traceback("RuntimeError('down')Traceback (most recent call last):\n  x"),
            "RuntimeError('down')"
        );
        assert_eq!(without_traceback("plain"), "plain");
    }
}
