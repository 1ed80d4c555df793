//! LangGraph checkpoint databases (`langgraph-checkpoint-sqlite`'s `SqliteSaver`): the state
//! of a graph at every step, read directly.
//!
//! The database has a `checkpoints` table (one row per checkpoint: `thread_id`,
//! `checkpoint_ns`, `checkpoint_id`, `parent_checkpoint_id`, the serialized checkpoint and its
//! JSON metadata `{source, step, parents}`) and a `writes` table (what each task of the step
//! after a checkpoint wrote, channel by channel). A checkpoint holds the values of every
//! channel (`channel_values`), serialized by LangGraph's `JsonPlusSerializer` as msgpack
//! (`type` `msgpack`) or JSON.
//!
//! | source | v1 |
//! |---|---|
//! | a thread (and namespace, for a subgraph) | a session `langgraph:THREAD` (`langgraph:THREAD/NS`) |
//! | a checkpoint | `checkpoint` (id, parent, source `input`/`loop`/`update`/`fork`, step, the tasks that wrote it) |
//! | its channel values | a ground belief per channel (source `state:langgraph`), written when new or changed; a changed value is first retracted with the node that wrote it as the reason; a channel no longer held is retracted |
//! | tool responses in the `messages` channel | observations `tool:NAME#CALL` (`observe.rs`) |
//!
//! Internal channels (`__start__`, `branch:to:…`, names starting with `__`) are not state
//! and are left out. Checkpoints are read in id order (LangGraph's ids are time-ordered); a
//! checkpoint whose parent is not the one before it starts a branch (a fork or a replay),
//! which v1 cannot show as such: it is read in line and reported in a note.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{Connection, MAIN_DB, OpenFlags};
use serde_json::{Map, Value};

use super::observe::{self, Channels, StateWrite};
use super::write::{V1Out, rfc3339};
use super::{Format, ImportError, Imported, broken, msgpack};

/// Whether the head of a file is a LangGraph SQLite checkpoint database: an SQLite file
/// whose schema (on the first page) has the checkpoint tables.
pub fn detect(head: &[u8]) -> bool {
    head.starts_with(b"SQLite format 3\0")
        && memchr::memmem::find(head, b"CREATE TABLE checkpoints").is_some()
        && memchr::memmem::find(head, b"checkpoint_ns").is_some()
}

fn err(location: &str, e: impl std::fmt::Display) -> ImportError {
    broken(Format::LangGraph, location, e.to_string())
}

/// One row of `checkpoints`.
struct Row {
    thread: String,
    ns: String,
    id: String,
    parent: Option<String>,
    ty: Option<String>,
    blob: Vec<u8>,
    meta: Vec<u8>,
}

/// Reads a whole database (its bytes) into v1.
pub fn import(bytes: &[u8], _name: &str) -> Result<Imported, ImportError> {
    let mut conn = Connection::open_with_flags(
        ":memory:",
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| err("the database", e))?;
    // SqliteSaver puts the database in WAL mode (header bytes 18 and 19 are 2): opened from
    // memory, SQLite would then look for the `-wal` file beside it. What the bytes hold is
    // read as a rollback-journal database instead (what a closed connection checkpointed;
    // writes still in a `-wal` file of a running graph are not in these bytes).
    let mut image = bytes.to_vec();
    if image.len() > 19 && image[18] == 2 && image[19] == 2 {
        image[18] = 1;
        image[19] = 1;
    }
    conn.deserialize_read_exact(MAIN_DB, image.as_slice(), image.len(), true)
        .map_err(|e| err("the database", e))?;
    let rows = checkpoints(&conn)?;
    let writers = writers(&conn).unwrap_or_default();
    let mut out = V1Out::default();
    let mut threads: BTreeMap<(String, String), Vec<Row>> = BTreeMap::new();
    for r in rows {
        threads
            .entry((r.thread.clone(), r.ns.clone()))
            .or_default()
            .push(r);
    }
    for ((thread, ns), mut rows) in threads {
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        thread_to_v1(&mut out, &thread, &ns, &rows, &writers);
    }
    Ok(out.finish())
}

fn checkpoints(conn: &Connection) -> Result<Vec<Row>, ImportError> {
    let mut st = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
             checkpoint, metadata FROM checkpoints",
        )
        .map_err(|e| err("the checkpoints table", e))?;
    let blob = |r: &rusqlite::Row<'_>, i: usize| -> rusqlite::Result<Vec<u8>> {
        use rusqlite::types::ValueRef;
        Ok(match r.get_ref(i)? {
            ValueRef::Blob(b) | ValueRef::Text(b) => b.to_vec(),
            _ => Vec::new(),
        })
    };
    let rows = st
        .query_map([], |r| {
            Ok(Row {
                thread: r.get(0)?,
                ns: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                id: r.get(2)?,
                parent: r.get(3)?,
                ty: r.get(4)?,
                blob: blob(r, 5)?,
                meta: blob(r, 6)?,
            })
        })
        .map_err(|e| err("the checkpoints table", e))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(|e| err("the checkpoints table", e))
}

/// Checkpoint (thread, ns, id) → the nodes whose writes were made from it (the step after it).
type Writers = HashMap<(String, String, String), Vec<String>>;

fn writers(conn: &Connection) -> rusqlite::Result<Writers> {
    let mut st = conn.prepare(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_path, task_id FROM writes \
         ORDER BY task_id, idx",
    )?;
    let mut out: Writers = HashMap::new();
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?.unwrap_or_default(),
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?.unwrap_or_default(),
            r.get::<_, String>(4)?,
        ))
    })?;
    for row in rows.flatten() {
        let (thread, ns, id, path, task) = row;
        // `~__pregel_pull, NODE`: the node is the path's last part.
        let node = path
            .rsplit(", ")
            .next()
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .unwrap_or(task);
        let list = out.entry((thread, ns, id)).or_default();
        if !list.contains(&node) {
            list.push(node);
        }
    }
    Ok(out)
}

/// A checkpoint blob decoded: msgpack or JSON, by the row's `type`.
fn decode(ty: Option<&str>, blob: &[u8]) -> Result<Value, String> {
    match ty {
        Some("json") => serde_json::from_slice(blob).map_err(|e| e.to_string()),
        Some("msgpack") | None => msgpack::decode(blob),
        Some(other) => Err(format!("serialized as {other:?}, which is not read")),
    }
}

/// Not state: LangGraph's own bookkeeping channels.
fn internal(channel: &str) -> bool {
    channel.starts_with("__") || channel.starts_with("branch:")
}

fn thread_to_v1(out: &mut V1Out, thread: &str, ns: &str, rows: &[Row], writers: &Writers) {
    let session = if ns.is_empty() {
        format!("langgraph:{thread}")
    } else {
        format!("langgraph:{thread}/{ns}")
    };
    let mut meta = Map::new();
    meta.insert("format".into(), "langgraph-checkpoint-sqlite".into());
    meta.insert("thread_id".into(), thread.into());
    if !ns.is_empty() {
        meta.insert("checkpoint_ns".into(), ns.into());
    }
    let first_ts = rows.first().and_then(|r| {
        decode(r.ty.as_deref(), &r.blob)
            .ok()
            .and_then(|c| c.get("ts").and_then(Value::as_str).and_then(rfc3339))
            .map(|t| t.0)
    });
    out.event(&session, "session")
        .ts(first_ts)
        .field("agent", "langgraph")
        .field("meta", Value::Object(meta))
        .from(format!("checkpoints where thread_id = {thread:?}"))
        .emit();
    let mut channels = Channels::default();
    let mut seen_calls = HashSet::new();
    let mut prev: Option<&str> = None;
    for r in rows {
        let here = format!("checkpoint {}", r.id);
        let cp = match decode(r.ty.as_deref(), &r.blob) {
            Ok(v) => v,
            Err(e) => {
                out.note(&here, format!("checkpoint not decoded: {e}"));
                continue;
            }
        };
        let md: Value = serde_json::from_slice(&r.meta).unwrap_or(Value::Null);
        if r.parent.is_some() && r.parent.as_deref() != prev {
            out.note(
                &here,
                format!(
                    "a branch: its parent is {}, not the checkpoint before it; read in line",
                    r.parent.as_deref().unwrap_or("-")
                ),
            );
        }
        prev = Some(&r.id);
        let ts = cp
            .get("ts")
            .and_then(Value::as_str)
            .and_then(rfc3339)
            .map(|t| t.0);
        let nodes = r
            .parent
            .as_ref()
            .and_then(|p| writers.get(&(thread.to_string(), ns.to_string(), p.clone())))
            .cloned()
            .unwrap_or_default();
        let step = md.get("step").cloned().unwrap_or(Value::Null);
        let source = md.get("source").and_then(Value::as_str).unwrap_or("");
        out.event(&session, "checkpoint")
            .ts(ts.clone())
            .id(Some(&r.id))
            .field("parent", r.parent.clone())
            .field("source", source)
            .field("step", step.clone())
            .field(
                "written_by",
                Value::Array(nodes.iter().cloned().map(Value::String).collect()),
            )
            .field("x_metadata", md.clone())
            .from(here.clone())
            .emit();
        let values: Map<String, Value> = cp
            .get("channel_values")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| !internal(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(msgs) = values.get("messages").and_then(Value::as_array) {
            observe::tool_messages(
                out,
                &session,
                msgs,
                &mut seen_calls,
                ts.clone(),
                &format!("{here}.messages"),
            );
        }
        let writer = match (nodes.is_empty(), source) {
            (false, _) => format!(
                "node {} (step {step}, checkpoint {})",
                nodes.join(", "),
                r.id
            ),
            (true, "") => format!("checkpoint {}", r.id),
            (true, s) => format!("{s} (step {step}, checkpoint {})", r.id),
        };
        let w = StateWrite {
            session: &session,
            framework: "langgraph",
            writer: &writer,
            values: &values,
            ts,
            from: &here,
        };
        for gone in channels.held_keys() {
            if !values.contains_key(&gone) {
                channels.remove(out, &w, &gone);
            }
        }
        channels.write(out, w);
    }
}
