//! Graphiti memory: the episodes an agent feeds it (`{"group_id", "messages": [{name,
//! role_type, role, timestamp, content, source_description}]}`) and the temporal graph it
//! builds from them (`{"episodes": [...], "nodes": [...], "edges": [...]}`, the fields of
//! `graphiti_core`'s `EpisodicNode`, `EntityNode` and `EntityEdge`).
//!
//! Each group is a session. An episode is an `episode` event (its text). An entity edge (a
//! fact) is a ground belief written when Graphiti created it; an edge Graphiti invalidated
//! (its `expired_at` is set: a later episode contradicted it) is retracted at that time,
//! with the episode and the facts that superseded it as the reason. Graphiti is bi-temporal:
//! v1 has one time, so events are placed at transaction time (`created_at`, `expired_at`)
//! and the valid time (`valid_at`, `invalid_at`) is kept beside them. "Contradiction" here
//! is Graphiti's LLM's judgement, not a logical one: no formula is made up.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::write::{V1Out, as_text, rfc3339};
use super::{Format, ImportError, Imported, broken, json_error};
use crate::trace::time::parse_rfc3339;

/// Whether a head looks like Graphiti episodes or a Graphiti graph.
pub fn detect(head: &[u8]) -> bool {
    let s = super::sniff(head);
    let episodes_in = s.top("messages") && (s.has(2, "role_type") || s.top("group_id"));
    let graph = (s.top("edges") || s.top("entity_edges") || s.top("episodes"))
        && (s.has(2, "fact")
            || s.has(2, "source_node_uuid")
            || s.has(2, "expired_at")
            || s.has(2, "episode_body")
            || s.has(2, "entity_edges"));
    episodes_in || graph
}

/// Imports episodes or a graph.
pub fn import(bytes: &[u8], name: &str) -> Result<Imported, ImportError> {
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| json_error(Format::Graphiti, &e, "JSON"))?;
    let Value::Object(doc) = doc else {
        return Err(broken(
            Format::Graphiti,
            "the top level",
            "not a JSON object",
        ));
    };
    let stem = std::path::Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "graphiti".into());
    let mut out = V1Out::default();
    let mut items: Vec<Item> = Vec::new();
    let list = |k: &str| -> Result<Vec<&Value>, ImportError> {
        match doc.get(k) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.iter().collect()),
            Some(_) => Err(broken(Format::Graphiti, k, "not a list")),
        }
    };
    let group = doc.get("group_id").map(as_text);
    // Input episodes.
    for (i, m) in list("messages")?.into_iter().enumerate() {
        items.push(Item::episode(
            m,
            &format!("messages[{i}]"),
            group.as_deref(),
        ));
    }
    // A graph.
    for (i, e) in list("episodes")?.into_iter().enumerate() {
        items.push(Item::episode(
            e,
            &format!("episodes[{i}]"),
            group.as_deref(),
        ));
    }
    let nodes: HashMap<String, String> = list("nodes")?
        .into_iter()
        .filter_map(|n| {
            Some((
                n.get("uuid")?.as_str()?.to_string(),
                n.get("name").map(as_text)?,
            ))
        })
        .collect();
    let edges_key = if doc.contains_key("edges") {
        "edges"
    } else {
        "entity_edges"
    };
    let edges = list(edges_key)?;
    for (i, e) in edges.iter().enumerate() {
        let loc = format!("{edges_key}[{i}]");
        let Some(obj) = e.as_object() else {
            return Err(broken(
                Format::Graphiti,
                loc,
                "an edge that is not a JSON object",
            ));
        };
        let created = obj
            .get("created_at")
            .and_then(Value::as_str)
            .and_then(rfc3339);
        let uuid = obj
            .get("uuid")
            .map(as_text)
            .unwrap_or_else(|| format!("edge-{i}"));
        let session = format!(
            "graphiti:{}",
            obj.get("group_id")
                .map(as_text)
                .or_else(|| group.clone())
                .unwrap_or_else(|| stem.clone())
        );
        items.push(Item {
            at: created.as_ref().and_then(|c| parse_rfc3339(&c.0)),
            order: 2,
            ts: created.map(|c| c.0),
            session: session.clone(),
            what: What::Fact(obj.clone(), uuid.clone()),
            loc: loc.clone(),
        });
        if let Some((expired, _)) = obj
            .get("expired_at")
            .and_then(Value::as_str)
            .and_then(rfc3339)
        {
            items.push(Item {
                at: parse_rfc3339(&expired),
                order: 1,
                ts: Some(expired),
                session,
                what: What::Invalidated(obj.clone(), uuid),
                loc,
            });
        }
    }
    if items.is_empty() {
        return Err(broken(
            Format::Graphiti,
            "the top level",
            "no episodes (`messages`, `episodes`) and no edges",
        ));
    }
    // Transaction-time order; at one instant the episode first, then what it retired, then
    // what it added.
    items.sort_by(|a, b| {
        a.at.unwrap_or(f64::MAX)
            .total_cmp(&b.at.unwrap_or(f64::MAX))
            .then(a.order.cmp(&b.order))
    });
    let mut started: HashMap<String, ()> = HashMap::new();
    let mut episodes: Vec<(f64, String, String)> = Vec::new(); // (time, uuid/name, name)
    let fact_name = |e: &Map<String, Value>, uuid: &str| -> String {
        let rel = e.get("name").map(as_text).unwrap_or_else(|| "FACT".into());
        let end = |k: &str| {
            e.get(k)
                .and_then(Value::as_str)
                .and_then(|u| nodes.get(u))
                .cloned()
        };
        let short: String = uuid.chars().take(8).collect();
        match (end("source_node_uuid"), end("target_node_uuid")) {
            (Some(s), Some(t)) => format!("{s} {rel} {t} [{short}]"),
            _ => format!("{rel} [{short}]"),
        }
    };
    for it in &items {
        if started.insert(it.session.clone(), ()).is_none() {
            out.event(&it.session, "session")
                .ts(it.ts.clone())
                .text("agent", "graphiti")
                .field(
                    "meta",
                    serde_json::json!({"format": "graphiti", "group_id": it.session.trim_start_matches("graphiti:")}),
                )
                .from("the file")
                .emit();
        }
        match &it.what {
            What::Episode(e) => {
                let id = e.get("uuid").or_else(|| e.get("name")).map(as_text);
                let name = e.get("name").map(as_text).unwrap_or_default();
                if let Some(at) = it.at {
                    episodes.push((at, id.clone().unwrap_or_default(), name.clone()));
                }
                let text = e
                    .get("content")
                    .or_else(|| e.get("episode_body"))
                    .map(as_text)
                    .unwrap_or_default();
                out.event(&it.session, "episode")
                    .ts(it.ts.clone())
                    .id(id.as_deref())
                    .text("name", &name)
                    .text("text", &text)
                    .field("role", e.get("role").cloned().unwrap_or(Value::Null))
                    .field(
                        "role_type",
                        e.get("role_type").cloned().unwrap_or(Value::Null),
                    )
                    .field("source", e.get("source").cloned().unwrap_or(Value::Null))
                    .field(
                        "source_description",
                        e.get("source_description").cloned().unwrap_or(Value::Null),
                    )
                    .field(
                        "x_valid_at",
                        e.get("valid_at").cloned().unwrap_or(Value::Null),
                    )
                    .from(it.loc.clone())
                    .emit();
            }
            What::Fact(e, uuid) => {
                let from_episodes: Vec<String> = e
                    .get("episodes")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(as_text).collect())
                    .unwrap_or_default();
                out.event(&it.session, "belief")
                    .ts(it.ts.clone())
                    .text("name", &fact_name(e, uuid))
                    .text("value", &e.get("fact").map(as_text).unwrap_or_default())
                    .text(
                        "source",
                        &if from_episodes.is_empty() {
                            "graphiti".to_string()
                        } else {
                            format!("episode:{}", from_episodes.join(","))
                        },
                    )
                    .text("x_edge", uuid)
                    .field(
                        "x_valid_at",
                        e.get("valid_at").cloned().unwrap_or(Value::Null),
                    )
                    .field(
                        "x_invalid_at",
                        e.get("invalid_at").cloned().unwrap_or(Value::Null),
                    )
                    .from(it.loc.clone())
                    .emit();
            }
            What::Invalidated(e, uuid) => {
                // The episode Graphiti was ingesting when it retired the fact, and the facts
                // that episode added.
                let at = it.at.unwrap_or(f64::MAX);
                let cause = episodes.iter().rev().find(|(t, _, _)| *t <= at);
                let newer: Vec<String> = cause
                    .map(|(_, id, _)| {
                        edges
                            .iter()
                            .filter(|x| {
                                x.get("episodes")
                                    .and_then(Value::as_array)
                                    .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(id)))
                                    && x.get("uuid").map(as_text).as_deref() != Some(uuid)
                            })
                            .filter_map(|x| x.get("fact").map(as_text))
                            .collect()
                    })
                    .unwrap_or_default();
                let mut reason = String::from("Graphiti invalidated this fact");
                if let Some(v) = e.get("invalid_at").filter(|v| !v.is_null()) {
                    reason.push_str(&format!(" (no longer valid from {})", as_text(v)));
                }
                if let Some((_, id, name)) = cause {
                    reason.push_str(&format!(" while ingesting episode {name} ({id})"));
                }
                if !newer.is_empty() {
                    reason.push_str(&format!("; that episode added: {}", newer.join("; ")));
                }
                out.event(&it.session, "retract")
                    .ts(it.ts.clone())
                    .text("target", &fact_name(e, uuid))
                    .text("reason", &reason)
                    .field("by", "revision")
                    .field(
                        "x_invalid_at",
                        e.get("invalid_at").cloned().unwrap_or(Value::Null),
                    )
                    .from(it.loc.clone())
                    .emit();
            }
        }
    }
    Ok(out.finish())
}

enum What {
    Episode(Map<String, Value>),
    Fact(Map<String, Value>, String),
    Invalidated(Map<String, Value>, String),
}

struct Item {
    at: Option<f64>,
    order: u8,
    ts: Option<String>,
    session: String,
    what: What,
    loc: String,
}

impl Item {
    fn episode(e: &Value, loc: &str, group: Option<&str>) -> Item {
        let obj = e.as_object().cloned().unwrap_or_default();
        let ts = ["created_at", "timestamp", "reference_time", "valid_at"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_str).and_then(rfc3339))
            .map(|t| t.0);
        Item {
            at: ts.as_deref().and_then(parse_rfc3339),
            order: 0,
            session: format!(
                "graphiti:{}",
                obj.get("group_id")
                    .map(as_text)
                    .or_else(|| group.map(str::to_string))
                    .unwrap_or_else(|| "default".into())
            ),
            ts,
            what: What::Episode(obj),
            loc: loc.to_string(),
        }
    }
}
