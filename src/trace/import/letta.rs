//! Letta agent files (`.af`): the older single-agent schema (`core_memory`, `messages`) and
//! the current one (`agents`, `blocks`, `tools` joined by ids such as `block-0`), including
//! files whose whole document is a JSON string holding the JSON (double-encoded).
//!
//! Memory blocks are ground beliefs (name = the block label, value = its text). A memory
//! edit (`core_memory_replace`, `core_memory_append`, `memory_replace`, `memory_insert`,
//! `memory_rethink`) that succeeded retracts the block's old value and writes the new one,
//! right after the tool call that made it; the reason names the call and the agent's inner
//! thought before it. Letta rebuilds the system prompt with the blocks after each edit, so
//! every system message is a snapshot of memory at that point: the replayed value is
//! checked against it, and against the file's final blocks, and any difference is both
//! written (as one more revision) and reported in a note.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use super::observe;
use super::scan::{At, Pieces};
use super::write::{V1Out, as_text, decode_nested, rfc3339};

/// Tools that edit memory: their results are status lines, and their effect is the edit
/// itself (a revision of the block), not an observation.
const MEMORY_EDITS: &[&str] = &[
    "core_memory_replace",
    "core_memory_append",
    "memory_replace",
    "memory_insert",
    "memory_rethink",
    "archival_memory_insert",
];
use super::{Format, ImportError, Imported, broken};

/// Whether a head looks like a Letta agent file.
pub fn detect(head: &[u8], name: &str) -> bool {
    let s = super::sniff(head);
    let v1 =
        s.top("agent_type") && (s.top("core_memory") || s.top("messages") || s.top("llm_config"));
    let v2 = s.top("agents")
        && (s.has(2, "memory_blocks")
            || s.has(2, "block_ids")
            || s.has(2, "agent_type")
            || s.has(2, "llm_config"));
    v1 || v2
        || (name.ends_with(".af") && matches!(s.first, Some(b'{' | b'"')) && !s.keys.is_empty())
}

/// Imports an agent file.
pub fn import(bytes: &[u8], name: &str) -> Result<Imported, ImportError> {
    let mut out = V1Out::default();
    import_into(bytes, name, &mut out)?;
    Ok(out.finish())
}

/// [`import`] into `out`.
fn import_into(bytes: &[u8], name: &str, out: &mut V1Out) -> Result<(), ImportError> {
    let mut doc: Value =
        serde_json::from_slice(bytes).map_err(|e| super::json_error(Format::Letta, &e, "JSON"))?;
    if let Value::String(inner) = &doc {
        super::budget::check_json(
            Format::Letta,
            "the JSON string the file holds",
            inner.as_bytes(),
        )?;
        doc = serde_json::from_str(inner).map_err(|e| {
            broken(
                Format::Letta,
                format!(
                    "inside the JSON string the file holds, line {}, column {}",
                    e.line(),
                    e.column()
                ),
                e.to_string(),
            )
        })?;
        out.note(
            "the file",
            "the document is a JSON string holding the JSON (double-encoded); decoded once more",
        );
    }
    let Value::Object(doc) = doc else {
        return Err(broken(Format::Letta, "the top level", "not a JSON object"));
    };
    let stem = stem_of(name);
    if let Some(agents) = doc.get("agents") {
        let Some(agents) = agents.as_array() else {
            return Err(broken(Format::Letta, "agents", "not a list"));
        };
        let blocks = block_index(doc.get("blocks").unwrap_or(&Value::Null));
        for (i, a) in agents.iter().enumerate() {
            let Some(obj) = a.as_object() else {
                return Err(broken(
                    Format::Letta,
                    format!("agents[{i}]"),
                    "not a JSON object",
                ));
            };
            let mem = agent_memory(out, obj, &blocks, i);
            let created = doc.get("created_at").and_then(Value::as_str);
            agent(out, obj, mem, created, &format!("agents[{i}]"), &stem, 2);
        }
    } else if doc.contains_key("agent_type") || doc.contains_key("core_memory") {
        let mem = doc
            .get("core_memory")
            .and_then(Value::as_array)
            .map(|b| b.iter().map(block).collect())
            .unwrap_or_default();
        let created = doc.get("created_at").and_then(Value::as_str);
        agent(out, &doc, mem, created, "the agent", &stem, 1);
    } else {
        return Err(broken(
            Format::Letta,
            "the top level",
            "neither `agents` (current schema) nor `agent_type`/`core_memory` (older schema)",
        ));
    }
    Ok(())
}

/// The session name's fallback: the file's name without its extension.
fn stem_of(name: &str) -> String {
    std::path::Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "letta".into())
}

/// The file's blocks by id (current schema).
fn block_index(blocks: &Value) -> HashMap<&str, &Value> {
    blocks
        .as_array()
        .map(|b| {
            b.iter()
                .filter_map(|x| Some((x.get("id")?.as_str()?, x)))
                .collect()
        })
        .unwrap_or_default()
}

/// An agent's memory blocks (current schema): those its `block_ids` name, then its own
/// `memory_blocks`; a missing block is a note.
fn agent_memory(
    out: &mut V1Out,
    obj: &Map<String, Value>,
    blocks: &HashMap<&str, &Value>,
    i: usize,
) -> Vec<(String, String)> {
    let mut mem: Vec<(String, String)> = Vec::new();
    for id in obj
        .get("block_ids")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = as_text(id);
        match blocks.get(id.as_str()) {
            Some(b) => mem.push(block(b)),
            None => out.note(
                format!("agents[{i}].block_ids"),
                format!("block {id:?} is not in the file's blocks"),
            ),
        }
    }
    for b in obj
        .get("memory_blocks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        mem.push(block(b));
    }
    mem
}

/// [`import`] of a source read by place, into `out`: an agent at a time, and within it a
/// message at a time (the agent without its messages, the file's blocks and the replayed
/// memory are what is held). A double-encoded file (a JSON string) is read whole, within
/// the budget, as [`import`] reads it. The lines are [`import`]'s.
pub fn import_at<S: At + ?Sized>(
    src: &S,
    name: &str,
    out: &mut V1Out,
    cap: usize,
) -> Result<(), ImportError> {
    let mut p = Pieces::open(src, Format::Letta, cap)?;
    let doc = p.document()?;
    match p.first_byte(doc)? {
        b'"' => {
            let max = super::budget::current().max_bytes;
            let len = src
                .len()
                .map_err(|e| broken(Format::Letta, "the file", e.to_string()))?;
            if len > max {
                return Err(super::budget::too_many_bytes(Format::Letta, name, max));
            }
            let all = super::scan::bytes(src, super::scan::Span { start: 0, len })
                .map_err(|e| broken(Format::Letta, "the file", e.to_string()))?;
            super::budget::check_json(Format::Letta, "the file", &all)?;
            return import_into(&all, name, out);
        }
        b'{' => {}
        _ => return Err(broken(Format::Letta, "the top level", "not a JSON object")),
    }
    let stem = stem_of(name);
    let top = p.members(doc)?;
    if let Some(&agents) = top.get("agents") {
        if p.first_byte(agents)? != b'[' {
            return Err(broken(Format::Letta, "agents", "not a list"));
        }
        let blocks = match top.get("blocks") {
            Some(&b) => p.piece(b, "blocks")?,
            None => Value::Null,
        };
        let blocks = block_index(&blocks);
        let created = match top.get("created_at") {
            Some(&c) => p.piece(c, "created_at")?,
            None => Value::Null,
        };
        p.each_item(Some(agents), |p, i, span| {
            let loc = format!("agents[{i}]");
            if p.first_byte(span)? != b'{' {
                return Err(broken(Format::Letta, loc, "not a JSON object"));
            }
            let (obj, messages) = p.object_but(span, "messages", &loc)?;
            let mem = agent_memory(out, &obj, &blocks, i);
            let a = Streamed {
                obj: &obj,
                messages,
                created: created.as_str(),
                schema: 2,
            };
            a.import(p, out, mem, &loc, &stem)
        })
    } else if top.contains_key("agent_type") || top.contains_key("core_memory") {
        let (obj, messages) = p.object_but(doc, "messages", "the agent")?;
        let mem = obj
            .get("core_memory")
            .and_then(Value::as_array)
            .map(|b| b.iter().map(block).collect())
            .unwrap_or_default();
        let created = obj.get("created_at").and_then(Value::as_str);
        let a = Streamed {
            obj: &obj,
            messages,
            created,
            schema: 1,
        };
        a.import(&mut p, out, mem, "the agent", &stem)
    } else {
        Err(broken(
            Format::Letta,
            "the top level",
            "neither `agents` (current schema) nor `agent_type`/`core_memory` (older schema)",
        ))
    }
}

/// An agent read a piece at a time: the agent without its messages, and where they are.
struct Streamed<'a> {
    obj: &'a Map<String, Value>,
    messages: Option<super::scan::Span>,
    created: Option<&'a str>,
    schema: u8,
}

impl Streamed<'_> {
    /// The agent's events, its messages parsed one at a time.
    fn import<S: At + ?Sized>(
        self,
        p: &mut Pieces<'_, S>,
        out: &mut V1Out,
        mem: Vec<(String, String)>,
        loc: &str,
        stem: &str,
    ) -> Result<(), ImportError> {
        let (mut ag, ts) = agent_start(out, self.obj, &mem, self.created, loc, stem, self.schema);
        p.each_item(self.messages, |p, i, span| {
            let here = format!("{loc}.messages[{i}]");
            ag.message(&p.piece(span, &here)?, &here);
            Ok(())
        })?;
        ag.end(mem, ts, loc);
        Ok(())
    }
}

/// A block's (label, value).
fn block(b: &Value) -> (String, String) {
    (
        b.get("label").map(as_text).unwrap_or_default(),
        b.get("value").map(as_text).unwrap_or_default(),
    )
}

/// Text of a message's `content` (a string, or a list of parts) or its older `text`.
fn content_text(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| {
                p.get("text")
                    .or_else(|| p.get("reasoning"))
                    .and_then(Value::as_str)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => m.get("text").map(as_text).unwrap_or_default(),
    }
}

/// The memory blocks a system prompt shows: `<label ...>\nVALUE\n</label>` for each known
/// label.
fn snapshot(text: &str, labels: &[String]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for l in labels {
        let open = format!("<{l}");
        let close = format!("\n</{l}>");
        let mut from = 0;
        while let Some(i) = text[from..].find(&open).map(|i| i + from) {
            let after = &text[i + open.len()..];
            // `<label>` or `<label attr="...">`, then a newline.
            let Some(gt) = after.find('>') else { break };
            let tag_rest = &after[..gt];
            if !(tag_rest.is_empty() || tag_rest.starts_with(' '))
                || !after[gt + 1..].starts_with('\n')
            {
                from = i + open.len();
                continue;
            }
            let body = &after[gt + 2..];
            if let Some(end) = body.find(&close) {
                let inner = &body[..end];
                // Newer prompts wrap the value with its description and metadata.
                let value = match (inner.find("<value>\n"), inner.rfind("\n</value>")) {
                    (Some(a), Some(b)) if a + 8 <= b => &inner[a + 8..b],
                    _ => inner,
                };
                out.insert(l.clone(), value.to_string());
            }
            break;
        }
    }
    out
}

struct Agent<'a> {
    out: &'a mut V1Out,
    session: String,
    labels: Vec<String>,
    /// The value of each block as replayed so far.
    mem: BTreeMap<String, String>,
    /// The agent's latest inner thought, for the reason of a memory edit.
    thought: Option<String>,
    /// Tool calls waiting for their result: id → (name, arguments, seq of the thought).
    pending: Vec<(String, String, Value, Option<String>, String)>,
    plan: Option<Vec<String>>,
    archival: u64,
    /// A system prompt rebuilt while tool calls were still waiting for their results (Letta
    /// writes the new prompt before the tool's result): compared once they are in.
    deferred: Option<(BTreeMap<String, String>, Option<String>, String)>,
    seen_snapshot: bool,
}

fn ts_of(m: &Value) -> (Option<String>, bool) {
    match m
        .get("created_at")
        .and_then(Value::as_str)
        .and_then(rfc3339)
    {
        Some((t, assumed)) => (Some(t), assumed),
        None => (None, false),
    }
}

/// An agent's session and plan, before its messages; the agent being replayed and the
/// session's start.
fn agent_start<'o>(
    out: &'o mut V1Out,
    a: &Map<String, Value>,
    final_mem: &[(String, String)],
    file_created: Option<&str>,
    loc: &str,
    stem: &str,
    schema: u8,
) -> (Agent<'o>, Option<String>) {
    let name = a
        .get("name")
        .map(as_text)
        .unwrap_or_else(|| stem.to_string());
    let session = format!("letta:{name}");
    let created = a
        .get("created_at")
        .and_then(Value::as_str)
        .or(file_created)
        .and_then(rfc3339);
    let model = a
        .get("llm_config")
        .and_then(|c| c.get("model"))
        .or_else(|| a.get("model"))
        .filter(|m| !m.is_null())
        .map(as_text);
    let mut meta = Map::new();
    meta.insert("format".into(), "letta".into());
    meta.insert("schema".into(), schema.into());
    for k in ["agent_type", "description", "id", "version"] {
        if let Some(v) = a.get(k).filter(|v| !v.is_null()) {
            meta.insert(k.into(), v.clone());
        }
    }
    if let Some(r) = a
        .get("tool_rules")
        .filter(|r| r.as_array().is_some_and(|x| !x.is_empty()))
    {
        meta.insert("tool_rules".into(), r.clone());
    }
    let ts = created.as_ref().map(|(t, _)| t.clone());
    out.event(&session, "session")
        .ts(ts.clone())
        .text("agent", &name)
        .opt_text("model", model.as_deref())
        .field("meta", Value::Object(meta))
        .field(
            "x_tz_assumed",
            created.as_ref().is_some_and(|c| c.1).then_some(true),
        )
        .from(loc.to_string())
        .emit();
    let mut ag = Agent {
        out,
        session,
        labels: final_mem.iter().map(|(l, _)| l.clone()).collect(),
        mem: BTreeMap::new(),
        thought: None,
        pending: Vec::new(),
        plan: None,
        archival: 0,
        deferred: None,
        seen_snapshot: false,
    };
    ag.plan_of(a.get("tool_rules"), ts.clone(), loc);
    (ag, ts)
}

/// An agent and its messages in memory (the whole-document import).
fn agent(
    out: &mut V1Out,
    a: &Map<String, Value>,
    final_mem: Vec<(String, String)>,
    file_created: Option<&str>,
    loc: &str,
    stem: &str,
    schema: u8,
) {
    let (mut ag, ts) = agent_start(out, a, &final_mem, file_created, loc, stem, schema);
    for (i, m) in a
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        ag.message(m, &format!("{loc}.messages[{i}]"));
    }
    ag.end(final_mem, ts, loc);
}

impl Agent<'_> {
    /// The next message of the agent's history.
    fn message(&mut self, m: &Value, here: &str) {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let (ts, _) = ts_of(m);
        if role == "user" || role == "assistant" {
            self.flush(ts.clone(), here);
        }
        match role {
            "system" => {
                let snap = snapshot(&content_text(m), &self.labels);
                if !snap.is_empty() {
                    self.deferred = Some((snap, ts, here.to_string()));
                    if self.pending.is_empty() {
                        self.settle();
                    }
                }
            }
            "user" => self.user(m, ts, here),
            "assistant" => self.assistant(m, ts, here),
            "tool" => {
                self.tool(m, ts, here);
                if self.pending.is_empty() {
                    self.settle();
                }
            }
            _ => {}
        }
    }

    /// After the last message: what is still waiting, and the file's blocks, which are
    /// memory at export time.
    fn end(mut self, final_mem: Vec<(String, String)>, ts: Option<String>, loc: &str) {
        self.flush(None, loc);
        let fin: BTreeMap<String, String> = final_mem.into_iter().collect();
        let first = self.mem.is_empty();
        self.reconcile(
            &fin,
            ts,
            &format!("{loc} (memory blocks at export)"),
            first,
            "the exported blocks",
        );
    }
}

impl Agent<'_> {
    /// Takes memory as some snapshot shows it. The first snapshot writes every block; a
    /// later one that disagrees with the replayed value is one more revision, and a note.
    fn reconcile(
        &mut self,
        snap: &BTreeMap<String, String>,
        ts: Option<String>,
        loc: &str,
        first: bool,
        what: &str,
    ) {
        for (label, value) in snap {
            match self.mem.get(label) {
                Some(v) if v == value => {}
                Some(_) => {
                    self.out.note(
                        loc,
                        format!(
                            "memory block {label:?} in {what} differs from the value replayed from \
                             the messages' edits; taken from {what}"
                        ),
                    );
                    self.out
                        .event(&self.session, "retract")
                        .ts(ts.clone())
                        .text("target", label)
                        .text("reason", &format!("{what} shows another value"))
                        .field("by", "revision")
                        .from(loc.to_string())
                        .emit();
                    self.write(label, value, what, ts.clone(), loc);
                }
                None => {
                    if !first {
                        self.out.note(
                            loc,
                            format!("memory block {label:?} appears first in {what}"),
                        );
                    }
                    let src = if first && what == "the system prompt" {
                        "core_memory"
                    } else {
                        "snapshot"
                    };
                    self.write(label, value, src, ts.clone(), loc);
                }
            }
        }
    }

    fn write(&mut self, label: &str, value: &str, source: &str, ts: Option<String>, loc: &str) {
        self.mem.insert(label.to_string(), value.to_string());
        self.out
            .event(&self.session, "belief")
            .ts(ts)
            .text("name", label)
            .text("value", value)
            .text("source", source)
            .from(loc.to_string())
            .emit();
    }

    fn plan_of(&mut self, rules: Option<&Value>, ts: Option<String>, loc: &str) {
        let Some(rules) = rules.and_then(Value::as_array) else {
            return;
        };
        // Only rules that order tools make a plan; loop rules alone are not one.
        let structural = rules.iter().any(|r| {
            matches!(
                r.get("type").and_then(Value::as_str),
                Some(
                    "run_first"
                        | "constrain_child_tools"
                        | "conditional"
                        | "InitToolRule"
                        | "ToolRule"
                        | "conditional_tool_rule"
                )
            )
        });
        if !structural {
            return;
        }
        let mut order: Vec<String> = Vec::new();
        let mut deps: HashMap<String, Vec<String>> = HashMap::new();
        let mut kinds: HashMap<String, Vec<String>> = HashMap::new();
        let add = |t: &str, order: &mut Vec<String>| {
            if !order.iter().any(|x| x == t) {
                order.push(t.to_string());
            }
        };
        for r in rules {
            let Some(tool) = r.get("tool_name").and_then(Value::as_str) else {
                continue;
            };
            add(tool, &mut order);
            let ty = r.get("type").map(as_text).unwrap_or_default();
            kinds.entry(tool.to_string()).or_default().push(ty);
            let mut children: Vec<String> = r
                .get("children")
                .and_then(Value::as_array)
                .map(|c| c.iter().map(as_text).collect())
                .unwrap_or_default();
            if let Some(Value::Object(m)) = r.get("child_output_mapping") {
                children.extend(m.values().map(as_text));
            }
            if let Some(d) = r.get("default_child").and_then(Value::as_str) {
                children.push(d.to_string());
            }
            for c in children {
                add(&c, &mut order);
                let d = deps.entry(c).or_default();
                if !d.iter().any(|x| x == tool) {
                    d.push(tool.to_string());
                }
            }
        }
        let steps: Vec<Value> = order
            .iter()
            .map(|t| {
                let mut s = serde_json::json!({"id": t, "kind": "tool", "description": t});
                if let Some(d) = deps.get(t) {
                    s["deps"] = serde_json::json!(d);
                }
                if let Some(k) = kinds.get(t) {
                    s["x_rules"] = serde_json::json!(k);
                }
                s
            })
            .collect();
        self.out
            .event(&self.session, "plan")
            .ts(ts)
            .id(Some("tool_rules"))
            .field("origin", "library")
            .field("steps", Value::Array(steps))
            .from(format!("{loc}.tool_rules"))
            .emit();
        self.plan = Some(order);
    }

    fn user(&mut self, m: &Value, ts: Option<String>, loc: &str) {
        let text = content_text(m);
        // Letta wraps what reaches the agent in JSON: user messages, logins, heartbeats.
        let parsed = decode_nested(&Value::String(text.clone()));
        let ty = parsed.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "user_message" | "" => {
                let msg = parsed.get("message").map(as_text).unwrap_or(text);
                self.out
                    .event(&self.session, "user_message")
                    .ts(ts)
                    .text("text", &msg)
                    .from(loc.to_string())
                    .emit();
            }
            other => {
                let detail = parsed
                    .get("reason")
                    .or_else(|| parsed.get("message"))
                    .map(as_text)
                    .unwrap_or_default();
                self.out
                    .event(&self.session, "log")
                    .ts(ts)
                    .field("level", "info")
                    .text("message", format!("{other} {detail}").trim())
                    .from(loc.to_string())
                    .emit();
            }
        }
    }

    fn assistant(&mut self, m: &Value, ts: Option<String>, loc: &str) {
        let text = content_text(m);
        if !text.trim().is_empty() {
            self.out
                .event(&self.session, "thought")
                .ts(ts.clone())
                .text("text", &text)
                .from(loc.to_string())
                .emit();
            self.thought = Some(text);
        }
        for (k, tc) in m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let id = tc.get("id").map(as_text).unwrap_or_default();
            let f = tc.get("function").unwrap_or(tc);
            let name = f.get("name").map(as_text).unwrap_or_default();
            let args = decode_nested(f.get("arguments").unwrap_or(&Value::Null));
            if name == "send_message" {
                let msg = args.get("message").map(as_text).unwrap_or_default();
                self.out
                    .event(&self.session, "answer")
                    .ts(ts.clone())
                    .text("text", &msg)
                    .field("x_tool_call_id", id)
                    .from(format!("{loc}.tool_calls[{k}]"))
                    .emit();
                continue;
            }
            self.pending.push((
                id,
                name,
                args,
                self.thought.clone(),
                format!("{loc}.tool_calls[{k}]"),
            ));
        }
    }

    /// A tool's result: the call it answers is written with it, then what it did to memory.
    fn tool(&mut self, m: &Value, ts: Option<String>, loc: &str) {
        let id = m.get("tool_call_id").map(as_text).unwrap_or_default();
        let Some(i) = self.pending.iter().position(|p| p.0 == id) else {
            return;
        };
        let (id, name, args, thought, call_loc) = self.pending.remove(i);
        let result = content_text(m);
        let parsed = decode_nested(&Value::String(result.clone()));
        let status = parsed.get("status").map(as_text);
        let ok = status
            .as_deref()
            .is_none_or(|s| s.eq_ignore_ascii_case("ok"));
        self.call(
            id,
            name,
            args,
            thought,
            Some((result, ok)),
            ts,
            &call_loc,
            loc,
        );
    }

    /// Writes tool calls whose result never came, then compares a waiting snapshot.
    fn flush(&mut self, ts: Option<String>, loc: &str) {
        for (id, name, args, thought, call_loc) in std::mem::take(&mut self.pending) {
            self.call(id, name, args, thought, None, ts.clone(), &call_loc, loc);
        }
        self.settle();
    }

    /// Compares the waiting system-prompt snapshot, if any, with memory as replayed.
    fn settle(&mut self) {
        if let Some((snap, ts, here)) = self.deferred.take() {
            let first = !self.seen_snapshot;
            self.seen_snapshot = true;
            self.reconcile(&snap, ts, &here, first, "the system prompt");
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        id: String,
        name: String,
        args: Value,
        thought: Option<String>,
        result: Option<(String, bool)>,
        ts: Option<String>,
        call_loc: &str,
        loc: &str,
    ) {
        let seq = self.out.count(&self.session) + 1;
        let ok = result.as_ref().map(|r| r.1);
        self.out
            .event(&self.session, "tool_call")
            .ts(ts.clone())
            .id((!id.is_empty()).then_some(id.as_str()))
            .text("tool", &name)
            .field("args", args.clone())
            .opt_text("result", result.as_ref().map(|r| r.0.as_str()))
            .field("ok", ok)
            .from(call_loc.to_string())
            .emit();
        if let Some(plan) = &self.plan
            && plan.contains(&name)
        {
            self.out
                .event(&self.session, "step")
                .ts(ts.clone())
                .field("plan", "tool_rules")
                .text("step", &name)
                .field(
                    "status",
                    match ok {
                        Some(true) => "done",
                        Some(false) => "failed",
                        None => "dispatched",
                    },
                )
                .from(loc.to_string())
                .emit();
        }
        if !MEMORY_EDITS.contains(&name.as_str())
            && let Some((text, ok)) = &result
        {
            let call = if id.is_empty() {
                seq.to_string()
            } else {
                id.clone()
            };
            observe::tool_result(
                self.out,
                observe::ToolResult {
                    session: &self.session,
                    tool: &name,
                    call: &call,
                    result: &Value::String(text.clone()),
                    failed: !ok,
                    ts: ts.clone(),
                    from: call_loc,
                },
            );
        }
        if ok != Some(true) {
            return;
        }
        self.memory_edit(&name, &args, thought.as_deref(), seq, &id, ts, loc);
    }

    #[allow(clippy::too_many_arguments)]
    fn memory_edit(
        &mut self,
        name: &str,
        args: &Value,
        thought: Option<&str>,
        seq: u64,
        id: &str,
        ts: Option<String>,
        loc: &str,
    ) {
        let arg = |k: &str| args.get(k).map(as_text);
        if name == "archival_memory_insert" {
            self.archival += 1;
            let label = format!("archival:{}", self.archival);
            let content = arg("content").unwrap_or_default();
            self.write(&label, &content, &format!("tool:{name}"), ts, loc);
            return;
        }
        let Some(label) = arg("label") else { return };
        let old = self.mem.get(&label).cloned();
        let new = match (name, &old) {
            ("core_memory_replace" | "memory_replace", Some(v)) => {
                let from = arg("old_content")
                    .or_else(|| arg("old_str"))
                    .unwrap_or_default();
                let to = arg("new_content")
                    .or_else(|| arg("new_str"))
                    .unwrap_or_default();
                if from.is_empty() || !v.contains(&from) {
                    self.out.note(
                        loc,
                        format!(
                            "{name} on {label:?}: the old text is not in the block as replayed"
                        ),
                    );
                    return;
                }
                v.replacen(&from, &to, 1)
            }
            ("core_memory_append", Some(v)) => {
                format!("{v}\n{}", arg("content").unwrap_or_default())
            }
            ("memory_insert", Some(v)) => {
                let text = arg("new_str")
                    .or_else(|| arg("content"))
                    .unwrap_or_default();
                let at = args
                    .get("insert_line")
                    .and_then(Value::as_i64)
                    .unwrap_or(-1);
                let mut lines: Vec<&str> = v.split('\n').collect();
                let at = if at < 0 || at as usize > lines.len() {
                    lines.len()
                } else {
                    at as usize
                };
                lines.insert(at, &text);
                lines.join("\n")
            }
            ("memory_rethink", _) => arg("new_memory").unwrap_or_default(),
            (
                "core_memory_replace" | "memory_replace" | "core_memory_append" | "memory_insert",
                None,
            ) => {
                self.out.note(
                    loc,
                    format!("{name} on {label:?}, a block not known at this point: not replayed"),
                );
                return;
            }
            _ => return,
        };
        let mut reason = format!("{name} (tool call {id}, seq {seq})");
        if let Some(t) = thought {
            reason.push_str(": ");
            reason.push_str(t);
        }
        if old.is_some() {
            self.out
                .event(&self.session, "retract")
                .ts(ts.clone())
                .text("target", &label)
                .text("reason", &reason)
                .field("by", "agent")
                .from(loc.to_string())
                .emit();
        }
        self.write(&label, &new, &format!("tool:{name}"), ts, loc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_read_blocks_with_and_without_attributes() {
        let labels = vec![
            "persona".to_string(),
            "human".to_string(),
            "none".to_string(),
        ];
        let text = "intro <persona> mention\n<persona characters=\"3/9\">\n\nI am\n</persona>\n<human>\nSam\n</human>";
        let s = snapshot(text, &labels);
        assert_eq!(s.get("persona").map(String::as_str), Some("\nI am"));
        assert_eq!(s.get("human").map(String::as_str), Some("Sam"));
        assert!(!s.contains_key("none"));
    }
}
