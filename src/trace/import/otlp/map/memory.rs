//! What a session holds and what it was told, as ground beliefs (`docs/import.md`, "Memory
//! edits are belief revisions" and "Observations"):
//!
//! - **memory operations** (`create_memory`, `update_memory`, `upsert_memory`,
//!   `delete_memory`, `delete_memory_store`): a `belief` per record written, named
//!   `STORE/RECORD` with source `memory:STORE`; a record that held another value is retracted
//!   first (the overwrite is a revision whose cause is the span); a deleted record is
//!   retracted; a `delete_memory` that names no record (the conventions' "delete all") or a
//!   `delete_memory_store` retracts every record of the store held so far;
//! - **searches** (`search_memory`, `retrieval`, OpenInference `RETRIEVER`): a `memory_query`
//!   with the query, the hit count and the records returned (id, score), and each returned
//!   record with content an observation `retrieval:STORE/RECORD` (source `retrieval:STORE`):
//!   what the search showed the agent, kept apart from the store's own records;
//! - **tool results** (an `execute_tool` span's result, a tool response in a model call's
//!   input): an observation `tool:NAME#CALL` with source `tool:NAME`, once per call (every
//!   later model call repeats the result).
//!
//! Observations carry `x_observation` saying what they are; nothing here is an assertion
//! of the agent, and no formula is made.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::super::json_value::Json;
use super::super::messages::{Msg, Part};
use super::super::span::{Span, Val, push_hex};
use super::{Class, Obj, Out, SessionMap};

/// The memory records and observations of one session so far.
#[derive(Debug, Default)]
pub(crate) struct Records {
    /// Record key (`STORE/RECORD`, or `RECORD` without a store) → what it holds.
    held: BTreeMap<String, Held>,
    /// Tool calls whose result was written (by call id).
    observed: HashSet<String>,
}

#[derive(Debug)]
struct Held {
    store: Option<String>,
    /// The value as JSON text (`None`: written without content).
    value: Option<String>,
}

/// One record of `gen_ai.memory.records`.
struct Record<'j> {
    id: Option<String>,
    content: Option<Json<'j>>,
    score: Option<Json<'j>>,
}

fn records<'j>(sp: &'j Span<'_>) -> Vec<Record<'j>> {
    let Some(Json::Arr(rs)) = sp
        .attr("gen_ai.memory.records")
        .and_then(|v| v.decoded_json().or_else(|| Some(v.to_json())))
    else {
        return Vec::new();
    };
    rs.into_iter()
        .map(|r| Record {
            id: r.get("id").map(|i| match i {
                Json::Str(s) => s.to_string(),
                other => other.to_json_string(),
            }),
            content: r.get("content").filter(|c| **c != Json::Null).cloned(),
            score: r.get("score").cloned(),
        })
        .collect()
}

/// A JSON value as the belief's `value`: a string that holds JSON is decoded (as the
/// `tool_call` event writes it), anything else is written as it is.
fn value_json(v: &Json<'_>) -> Json<'static> {
    match v {
        Json::Str(s) => Json::parse_cow(s)
            .map(|j| j.into_owned())
            .unwrap_or_else(|| Json::Str(std::borrow::Cow::Owned(s.to_string()))),
        other => other.clone().into_owned(),
    }
}

/// Nothing to observe: no value, or an empty one.
fn empty(v: &Json<'_>) -> bool {
    match v {
        Json::Null => true,
        Json::Str(s) => s.trim().is_empty(),
        _ => false,
    }
}

impl SessionMap {
    fn retract_held(
        &mut self,
        sp: &Span<'_>,
        key: &str,
        reason: &str,
        ts: Option<i128>,
        out: &mut Vec<Out>,
    ) {
        let Some(old) = self.memory.held.remove(key) else {
            return;
        };
        let mut o = Obj::new("retract", &self.name);
        o.str("target", key);
        o.str("by", "agent");
        o.text("reason", reason);
        if let Some(v) = &old.value {
            o.text("x_old_value", v);
        }
        o.span_ids(sp);
        self.emit(o, ts, out);
    }

    /// Memory writes and deletes (see the module docs).
    pub(super) fn memory(&mut self, sp: &Span<'_>, class: Class, out: &mut Vec<Out>) {
        let store = sp.str_attr("gen_ai.memory.store.id").map(str::to_string);
        let op = sp
            .str_attr("gen_ai.operation.name")
            .unwrap_or(&sp.name)
            .to_string();
        let ts = sp.end.or(sp.start);
        let reason = format!("{op} ({})", sp.name);
        let mut recs = records(sp);
        let record_id = sp
            .attr("gen_ai.memory.record.id")
            .map(|v| v.to_text().into_owned());
        for r in &mut recs {
            if r.id.is_none() {
                r.id.clone_from(&record_id);
            }
        }
        recs.retain(|r| r.id.is_some());
        if recs.is_empty()
            && let Some(id) = &record_id
        {
            recs.push(Record {
                id: Some(id.clone()),
                content: None,
                score: None,
            });
        }
        let key_of = |id: &str| match &store {
            Some(s) => format!("{s}/{id}"),
            None => id.to_string(),
        };
        if class == Class::MemoryDelete {
            if recs.is_empty() || op == "delete_memory_store" {
                // No record named: the whole store is emptied.
                let keys: Vec<String> = self
                    .memory
                    .held
                    .iter()
                    .filter(|(_, h)| h.store == store)
                    .map(|(k, _)| k.clone())
                    .collect();
                let why = format!(
                    "{reason}: no record named, the store {} is emptied",
                    store.as_deref().unwrap_or("(default)")
                );
                for k in keys {
                    self.retract_held(sp, &k, &why, ts, out);
                }
            }
            for r in &recs {
                let key = key_of(r.id.as_deref().unwrap_or_default());
                self.retract_held(sp, &key, &reason, ts, out);
            }
            return;
        }
        let source = format!("memory:{}", store.as_deref().unwrap_or("default"));
        for r in recs {
            let key = key_of(r.id.as_deref().unwrap_or_default());
            let text = r.content.as_ref().map(|c| match c {
                Json::Str(s) => s.to_string(),
                other => other.to_json_string(),
            });
            let changed = self
                .memory
                .held
                .get(&key)
                .is_some_and(|h| h.value.is_some() && text.is_some() && h.value != text);
            if changed {
                self.retract_held(sp, &key, &reason, ts, out);
            }
            let mut o = Obj::new("belief", &self.name);
            o.str("name", &key);
            if let Some(c) = &r.content {
                match c {
                    Json::Str(s) => o.text("value", s),
                    other => o.json("value", other),
                }
            }
            o.str("source", &source);
            o.str("x_operation", &op);
            o.span_ids(sp);
            self.emit(o, ts, out);
            let keep = text.or_else(|| self.memory.held.get(&key).and_then(|h| h.value.clone()));
            self.memory.held.insert(
                key,
                Held {
                    store: store.clone(),
                    value: keep,
                },
            );
        }
    }

    /// A search: the query with its hits, then what it returned as observations.
    pub(super) fn search(&mut self, sp: &Span<'_>, out: &mut Vec<Out>) {
        let mut o = Obj::new("memory_query", &self.name);
        o.id(sp);
        if let Some(q) = sp
            .str_attr("gen_ai.memory.query.text")
            .or_else(|| sp.str_attr("gen_ai.retrieval.query.text"))
            .or_else(|| sp.str_attr("input.value"))
        {
            o.text("query", q);
        }
        let store = sp
            .str_attr("gen_ai.memory.store.id")
            .or_else(|| sp.str_attr("gen_ai.data_source.id"));
        o.opt("store", store);
        let recs = records(sp);
        let docs = sp
            .attr("gen_ai.retrieval.documents")
            .and_then(|v| v.decoded_json().or_else(|| Some(v.to_json())));
        let returned = match &docs {
            _ if !recs.is_empty() => Some(recs.len() as i64),
            Some(Json::Arr(a)) => Some(a.len() as i64),
            _ => None,
        };
        // The conventions' count of records returned, else what the span lists.
        let hits = sp
            .attr("gen_ai.memory.record.count")
            .and_then(Val::as_i64)
            .or(returned);
        if let Some(n) = hits {
            o.int("hits", n);
        }
        if !recs.is_empty() {
            // Ids and scores; the contents are the observations below.
            let list = Json::Arr(
                recs.iter()
                    .map(|r| {
                        let mut m = Vec::new();
                        if let Some(id) = &r.id {
                            m.push(("id".into(), Json::Str(id.clone().into())));
                        }
                        if let Some(s) = &r.score {
                            m.push(("score".into(), s.clone()));
                        }
                        Json::Obj(m)
                    })
                    .collect(),
            );
            o.json("records", &list);
        } else if let Some(d) = &docs {
            o.json("records", d);
        }
        o.span_ids(sp);
        self.emit(o, sp.start, out);
        let ts = sp.end.or(sp.start);
        let store = store.unwrap_or("default").to_string();
        for (i, r) in recs.iter().enumerate() {
            let Some(c) = r.content.as_ref().filter(|c| !empty(c)) else {
                continue;
            };
            let rec = match (&r.id, sp.id) {
                (Some(id), _) => id.clone(),
                (None, Some(s)) => {
                    let mut b = Vec::new();
                    push_hex(&mut b, s.into(), 16);
                    format!("{}#{i}", String::from_utf8(b).unwrap_or_default())
                }
                (None, None) => format!("#{i}"),
            };
            let mut o = Obj::new("belief", &self.name);
            o.str("name", &format!("retrieval:{store}/{rec}"));
            match c {
                Json::Str(s) => o.text("value", s),
                other => o.json("value", other),
            }
            o.str("source", &format!("retrieval:{store}"));
            o.str("x_observation", "search result");
            if let Some(s) = &r.score {
                o.json("x_score", s);
            }
            o.span_ids(sp);
            self.emit(o, ts, out);
        }
    }

    /// A tool span's result as an observation (not when the call failed or returned
    /// nothing).
    pub(super) fn observe_tool(
        &mut self,
        sp: &Span<'_>,
        tool: &str,
        call: Option<&str>,
        result: Option<Json<'_>>,
        out: &mut Vec<Out>,
    ) {
        if sp.error {
            return;
        }
        let Some(r) = result.filter(|r| !empty(r)) else {
            return;
        };
        let call = match (call, sp.id) {
            (Some(c), _) => c.to_string(),
            (None, Some(id)) => {
                let mut b = Vec::new();
                push_hex(&mut b, id.into(), 16);
                String::from_utf8(b).unwrap_or_default()
            }
            (None, None) => return,
        };
        if !self.memory.observed.insert(call.clone()) {
            return;
        }
        let mut o = Obj::new("belief", &self.name);
        o.str("name", &format!("tool:{tool}#{call}"));
        o.json("value", &r);
        o.str("source", &format!("tool:{tool}"));
        o.str("x_observation", "tool result");
        o.str("x_call", &call);
        o.span_ids(sp);
        self.emit(o, sp.end.or(sp.start), out);
    }

    /// Tool responses in a model call's input (the agent was shown them), each call once.
    pub(super) fn observe_messages(
        &mut self,
        sp: &Span<'_>,
        input: &[Msg<'_>],
        out: &mut Vec<Out>,
    ) {
        let names: HashMap<&str, &str> = input
            .iter()
            .flat_map(|m| &m.parts)
            .filter_map(|p| match p {
                Part::ToolCall {
                    id: Some(id), name, ..
                } => Some((&**id, &**name)),
                _ => None,
            })
            .collect();
        for p in input.iter().flat_map(|m| &m.parts) {
            let Part::ToolResult {
                id: Some(id),
                response,
            } = p
            else {
                continue;
            };
            if empty(response) || self.memory.observed.contains(&**id) {
                continue;
            }
            self.memory.observed.insert(id.to_string());
            let tool = names.get(&**id).copied().unwrap_or("tool");
            let mut o = Obj::new("belief", &self.name);
            o.str("name", &format!("tool:{tool}#{id}"));
            let v = value_json(response);
            o.json("value", &v);
            o.str("source", &format!("tool:{tool}"));
            o.str("x_observation", "tool result in the input of a model call");
            o.str("x_call", id);
            o.span_ids(sp);
            self.emit(o, sp.start, out);
        }
    }
}
