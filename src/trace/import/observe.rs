//! Observations and state: what an agent was told by its tools and what its framework held,
//! written as ordinary ground beliefs by the importers that write through [`V1Out`].
//!
//! - A **tool result** is an observation, not an assertion: a `belief` named
//!   `tool:NAME#CALL` (the call id, else the `tool_call` event's `seq`), value the result as
//!   the tool returned it, source `tool:NAME`, and `x_observation` saying what it is. A call
//!   that failed or returned nothing observed nothing and writes no belief. The names keep
//!   observations apart from what the agent asserted or remembered (`memory:…` records,
//!   state channels, its own `belief` events): a `tool:` name is only ever written here.
//! - **State channels** (LangGraph's state as a run's output): a `belief` per top-level key,
//!   source `state:FRAMEWORK`; a key whose value changes is retracted first (a revision,
//!   with the run that wrote it as the reason), as memory edits are.
//!
//! `docs/import.md` ("Observations" and "LangGraph state") describes both.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::write::{V1Out, decode_nested};

/// The name of the observation of one tool call.
pub fn tool_key(tool: &str, call: &str) -> String {
    format!("tool:{tool}#{call}")
}

/// Nothing was observed: no result, or an empty one.
pub fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// A tool call as an importer saw it.
pub struct ToolResult<'a> {
    /// The session.
    pub session: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The call id, or what stands for it (the `tool_call` event's seq).
    pub call: &'a str,
    /// The result as the source holds it.
    pub result: &'a Value,
    /// The call failed (an error, a non-ok status): nothing was observed.
    pub failed: bool,
    /// When the result came back.
    pub ts: Option<String>,
    /// Where in the source.
    pub from: &'a str,
}

/// Writes the observation of a tool call's result, when there is one (see the module docs);
/// whether it wrote one.
pub fn tool_result(out: &mut V1Out, t: ToolResult<'_>) -> bool {
    if t.failed || is_empty(t.result) || t.tool.is_empty() {
        return false;
    }
    out.event(t.session, "belief")
        .ts(t.ts)
        .field("name", tool_key(t.tool, t.call))
        .field("value", t.result.clone())
        .field("source", format!("tool:{}", t.tool))
        .field("x_observation", "tool result")
        .field("x_call", t.call)
        .from(t.from.to_string())
        .emit();
    true
}

/// The state channels of one session as written so far, for telling a new value from a
/// repeated one.
#[derive(Debug, Default)]
pub struct Channels {
    held: HashMap<String, Value>,
}

/// A step's state as an importer saw it: the channels' values after the step.
pub struct StateWrite<'a> {
    /// The session.
    pub session: &'a str,
    /// The framework (`langgraph`): the source is `state:FRAMEWORK`.
    pub framework: &'a str,
    /// Who wrote it, for the reason of a revision (`node agent (run 3f2a…)`).
    pub writer: &'a str,
    /// The channels and their values.
    pub values: &'a serde_json::Map<String, Value>,
    /// When.
    pub ts: Option<String>,
    /// Where in the source.
    pub from: &'a str,
}

impl Channels {
    /// Writes each channel whose value is new or changed: a changed one is first retracted,
    /// naming the writer. Channels absent from `values` are left as they are (a step writes
    /// only the channels it updates). Returns how many beliefs were written.
    pub fn write(&mut self, out: &mut V1Out, w: StateWrite<'_>) -> usize {
        let mut n = 0;
        for (key, raw) in w.values {
            let v = decode_nested(raw);
            match self.held.get(key) {
                Some(old) if *old == v => continue,
                Some(old) => {
                    out.event(w.session, "retract")
                        .ts(w.ts.clone())
                        .field("target", key.as_str())
                        .field("by", "agent")
                        .text(
                            "reason",
                            &format!("state channel {key} written by {}", w.writer),
                        )
                        .field("x_old_value", old.clone())
                        .from(w.from.to_string())
                        .emit();
                }
                None => {}
            }
            out.event(w.session, "belief")
                .ts(w.ts.clone())
                .field("name", key.as_str())
                .field("value", v.clone())
                .field("source", format!("state:{}", w.framework))
                .text("x_writer", w.writer)
                .from(w.from.to_string())
                .emit();
            self.held.insert(key.clone(), v);
            n += 1;
        }
        n
    }

    /// The channels written so far (sorted).
    pub fn held_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.held.keys().cloned().collect();
        keys.sort();
        keys
    }

    /// Retracts a channel that a checkpoint no longer holds.
    pub fn remove(&mut self, out: &mut V1Out, w: &StateWrite<'_>, key: &str) {
        if let Some(old) = self.held.remove(key) {
            out.event(w.session, "retract")
                .ts(w.ts.clone())
                .field("target", key)
                .field("by", "agent")
                .text(
                    "reason",
                    &format!("state channel {key} removed by {}", w.writer),
                )
                .field("x_old_value", old)
                .from(w.from.to_string())
                .emit();
        }
    }
}

/// A tool's response among chat messages, in the shapes frameworks write them: OpenAI's
/// (`{"role": "tool", "tool_call_id", "name"?, "content"}`), LangChain's dict
/// (`{"type": "tool", ...}`) and its constructor form (`{"lc": 1, "id": [..,
/// "ToolMessage"], "kwargs": {...}}`): (call id, tool name, content, failed).
fn tool_message(m: &Value) -> Option<(String, Option<String>, Value, bool)> {
    let body = match m.get("lc") {
        Some(_) => {
            let class = m.get("id")?.as_array()?.last()?.as_str()?;
            if class != "ToolMessage" {
                return None;
            }
            m.get("kwargs")?
        }
        None => {
            let role = m.get("role").or_else(|| m.get("type"))?.as_str()?;
            if role != "tool" {
                return None;
            }
            m
        }
    };
    let call = body.get("tool_call_id")?.as_str()?.to_string();
    let name = body.get("name").and_then(Value::as_str).map(str::to_string);
    let failed = body.get("status").and_then(Value::as_str) == Some("error");
    Some((call, name, body.get("content")?.clone(), failed))
}

/// The tool calls an assistant message asked for, by call id: their tool names (to name a
/// response that does not say its tool).
fn requested(messages: &[Value]) -> HashMap<String, String> {
    let mut names = HashMap::new();
    for m in messages {
        let body = m.get("kwargs").unwrap_or(m);
        let lists = [
            body.get("tool_calls"),
            body.pointer("/additional_kwargs/tool_calls"),
        ];
        for c in lists
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
            .flatten()
        {
            let id = c.get("id").and_then(Value::as_str);
            let name = c
                .get("name")
                .or_else(|| c.pointer("/function/name"))
                .and_then(Value::as_str);
            if let (Some(id), Some(name)) = (id, name) {
                names.insert(id.to_string(), name.to_string());
            }
        }
    }
    names
}

/// Tool responses among `messages` (a model call's input, a conversation state) as
/// observations, each call once per session (`seen` holds the calls already written: every
/// later model call repeats them). Returns how many were written.
pub fn tool_messages(
    out: &mut V1Out,
    session: &str,
    messages: &[Value],
    seen: &mut HashSet<String>,
    ts: Option<String>,
    from: &str,
) -> usize {
    let names = requested(messages);
    let mut n = 0;
    for (i, m) in messages.iter().enumerate() {
        let Some((call, name, content, failed)) = tool_message(m) else {
            continue;
        };
        let Some(tool) = name.or_else(|| names.get(&call).cloned()) else {
            continue;
        };
        if seen.contains(&call) {
            continue;
        }
        let written = tool_result(
            out,
            ToolResult {
                session,
                tool: &tool,
                call: &call,
                result: &content,
                failed,
                ts: ts.clone(),
                from: &format!("{from}[{i}]"),
            },
        );
        if written {
            seen.insert(call);
            n += 1;
        }
    }
    n
}

/// Tool responses in a model call's input, whatever the input's shape: a list of messages,
/// or an object holding them under `messages` (OpenAI, LangChain) or `contents` (Gemini,
/// whose `function_response` parts name their tool and may have no call id: such a response
/// is named by `call`, the model call's own id, and its position). Each call once per
/// session (`seen`). Returns how many observations were written.
pub fn input_tool_results(
    out: &mut V1Out,
    session: &str,
    input: &Value,
    seen: &mut HashSet<String>,
    call: &str,
    ts: Option<String>,
    from: &str,
) -> usize {
    let (list, at) = match input {
        Value::Array(a) => (a, from.to_string()),
        Value::Object(o) => match (o.get("messages"), o.get("contents")) {
            (Some(Value::Array(a)), _) => (a, format!("{from}.messages")),
            (_, Some(Value::Array(a))) => (a, format!("{from}.contents")),
            _ => return 0,
        },
        _ => return 0,
    };
    let mut n = tool_messages(out, session, list, seen, ts.clone(), &at);
    for (i, m) in list.iter().enumerate() {
        let parts = m.get("parts").and_then(Value::as_array);
        for (j, p) in parts.into_iter().flatten().enumerate() {
            let Some(r) = p
                .get("function_response")
                .or_else(|| p.get("functionResponse"))
            else {
                continue;
            };
            let Some(tool) = r.get("name").and_then(Value::as_str) else {
                continue;
            };
            let response = r.get("response").cloned().unwrap_or(Value::Null);
            // Without an id, the same response repeated in a later call's input is the
            // same observation.
            let id = r.get("id").and_then(Value::as_str).map(str::to_string);
            let key = id.clone().unwrap_or_else(|| format!("{tool} {response}"));
            if seen.contains(&key) {
                continue;
            }
            let name = id.unwrap_or_else(|| format!("{call}/{i}.{j}"));
            let written = tool_result(
                out,
                ToolResult {
                    session,
                    tool,
                    call: &name,
                    result: &response,
                    failed: false,
                    ts: ts.clone(),
                    from: &format!("{at}[{i}].parts[{j}]"),
                },
            );
            if written {
                seen.insert(key);
                n += 1;
            }
        }
    }
    n
}
