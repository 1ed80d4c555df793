//! mem0 memory histories: what `Memory.history(memory_id)` returns (rows of mem0's SQLite
//! `history` table, `mem0/memory/storage.py`), saved as JSON. Accepted shapes: a list of rows
//! (the histories of several memories may be concatenated), or an object holding that list
//! under `history` or `results`. A row:
//!
//! ```json
//! {"id": "…", "memory_id": "m1", "old_memory": null, "new_memory": "Likes tea",
//!  "event": "ADD", "created_at": "2025-01-02T10:00:00+00:00", "updated_at": null,
//!  "is_deleted": 0, "actor_id": "alice", "role": "user"}
//! ```
//!
//! | row | v1 |
//! |---|---|
//! | `ADD` | a ground belief named by `memory_id` (value `new_memory`, source `memory:mem0`) |
//! | `UPDATE` | a revision: `retract` of the held value (`by: agent`, reason naming the history row and the old and new text), then the belief with `new_memory` |
//! | `DELETE` (or `is_deleted`) | `retract` of the memory |
//!
//! Rows are placed by when they happened (`updated_at`, else `created_at`: mem0 keeps the
//! memory's creation time in every row's `created_at`), ties and rows without a time in file
//! order. One file is
//! one session, `mem0:<file stem>`. mem0 decides ADD/UPDATE/DELETE with its LLM: an UPDATE is
//! that judgement, not a logical contradiction, and no formula is made.

use std::collections::HashMap;

use serde_json::Value;

use super::write::{V1Out, as_text, rfc3339};
use super::{Format, ImportError, Imported, broken, json_error};
use crate::trace::time::parse_rfc3339;

/// Whether the head looks like mem0 history rows.
pub fn detect(head: &[u8]) -> bool {
    let s = super::sniff(head);
    (1..=2).any(|d| s.has(d, "memory_id") && s.has(d, "new_memory") && s.has(d, "event"))
}

/// Imports a history.
pub fn import(bytes: &[u8], name: &str) -> Result<Imported, ImportError> {
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| json_error(Format::Mem0, &e, "JSON"))?;
    let (rows, path) = match &doc {
        Value::Array(a) => (a, ""),
        Value::Object(o) => match (o.get("history"), o.get("results")) {
            (Some(Value::Array(a)), _) => (a, "history"),
            (_, Some(Value::Array(a))) => (a, "results"),
            _ => {
                return Err(broken(
                    Format::Mem0,
                    "the top level",
                    "no list of history rows (a list, or one under `history` or `results`)",
                ));
            }
        },
        _ => {
            return Err(broken(
                Format::Mem0,
                "the top level",
                "not a list of history rows",
            ));
        }
    };
    let stem = std::path::Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mem0".into());
    let session = format!("mem0:{stem}");
    // mem0 keeps a memory's creation time in `created_at` of every row and the time of an
    // update or delete in `updated_at`: the row happened at the latter when it has one.
    let when = |r: &Value| {
        ["updated_at", "created_at"]
            .iter()
            .find_map(|k| r.get(*k).and_then(Value::as_str).and_then(rfc3339))
            .map(|t| t.0)
    };
    // A row without a time stays after the row before it.
    let mut last = f64::MIN;
    let mut order: Vec<(f64, usize)> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if let Some(t) = when(r).and_then(|t| parse_rfc3339(&t)) {
                last = t;
            }
            (last, i)
        })
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out = V1Out::default();
    out.event(&session, "session")
        .ts(order.first().and_then(|(_, i)| when(&rows[*i])))
        .field("agent", "mem0")
        .field("meta", serde_json::json!({"format": "mem0"}))
        .from("the file")
        .emit();
    let mut held: HashMap<String, Value> = HashMap::new();
    for (_, i) in order {
        let loc = if path.is_empty() {
            format!("[{i}]")
        } else {
            format!("{path}[{i}]")
        };
        row(
            &mut out,
            &session,
            &rows[i],
            when(&rows[i]),
            &loc,
            &mut held,
        );
    }
    Ok(out.finish())
}

fn row(
    out: &mut V1Out,
    session: &str,
    r: &Value,
    ts: Option<String>,
    loc: &str,
    held: &mut HashMap<String, Value>,
) {
    let Some(id) = r.get("memory_id").filter(|v| !v.is_null()).map(as_text) else {
        out.note(loc, "a history row without a memory_id: left out");
        return;
    };
    let event = r
        .get("event")
        .map(as_text)
        .unwrap_or_default()
        .to_uppercase();
    let deleted = event == "DELETE"
        || r.get("is_deleted")
            .is_some_and(|d| d.as_bool() == Some(true) || d.as_i64() == Some(1));
    let new = r.get("new_memory").filter(|v| !v.is_null()).cloned();
    let old = r.get("old_memory").filter(|v| !v.is_null()).cloned();
    let row_id = r.get("id").map(as_text).unwrap_or_default();
    let cause = match (&old, &new) {
        (Some(o), Some(n)) => format!(
            "mem0 {event} (history {row_id}): {} → {}",
            as_text(o),
            as_text(n)
        ),
        (Some(o), None) => format!("mem0 {event} (history {row_id}): {}", as_text(o)),
        _ => format!("mem0 {event} (history {row_id})"),
    };
    let retract = |out: &mut V1Out, held: &mut HashMap<String, Value>| {
        if let Some(was) = held.remove(&id) {
            out.event(session, "retract")
                .ts(ts.clone())
                .field("target", id.as_str())
                .field("by", "agent")
                .text("reason", &cause)
                .field("x_old_value", was)
                .from(loc.to_string())
                .emit();
        } else {
            out.note(
                loc,
                format!(
                    "{event} of memory {id}, which this history never added: nothing to retract"
                ),
            );
        }
    };
    if deleted {
        retract(out, held);
        return;
    }
    if !matches!(event.as_str(), "ADD" | "UPDATE") {
        out.note(
            loc,
            format!("history event {event:?} is not one mem0 writes: left out"),
        );
        return;
    }
    let Some(new) = new else {
        out.note(loc, format!("{event} without a new_memory: left out"));
        return;
    };
    match held.get(&id) {
        Some(v) if *v == new => {}
        Some(_) => retract(out, held),
        None if event == "UPDATE" => out.note(
            loc,
            format!("UPDATE of memory {id}, which this history never added: written as new"),
        ),
        None => {}
    }
    out.event(session, "belief")
        .ts(ts)
        .field("name", id.as_str())
        .field("value", new.clone())
        .field("source", "memory:mem0")
        .field("x_event", event.as_str())
        .field("x_history_id", r.get("id").cloned().unwrap_or(Value::Null))
        .field(
            "x_actor_id",
            r.get("actor_id").cloned().unwrap_or(Value::Null),
        )
        .field("x_role", r.get("role").cloned().unwrap_or(Value::Null))
        .from(loc.to_string())
        .emit();
    held.insert(id, new);
}
