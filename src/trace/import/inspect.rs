//! Inspect AI eval logs: `.json` (one document) and `.eval` (a ZIP of `header.json`,
//! `samples/<id>_epoch_<n>.json`, ...; deflate or zstd members). Each sample × epoch becomes a
//! session; its events map as `docs/import.md` lists: the solver plan and solver spans give a
//! `plan` and its `step`s, model events `llm_call` (reasoning as `thought`), tool events
//! `tool_call`, store patches ground beliefs (a changed value: the old one retracted, then the
//! new one), scores `score`, errors and logs `log`, the sample's output the `answer`.
//!
//! Condensed logs keep messages in a `message_pool` that model events point into with
//! `input_refs`; strings may be `attachment://<hash>` references into the sample's
//! `attachments`. Both are resolved here.

use std::collections::HashMap;
use std::io::{Read, Seek};

use serde_json::{Map, Value};

use super::observe;
use super::scan::{At, Pieces};
use super::write::{V1Out, as_text, decode_nested, rfc3339, seconds_to_ms};
use super::{Format, ImportError, Imported, broken, json_error};

/// The log format versions this importer knows.
const VERSIONS: std::ops::RangeInclusive<u64> = 1..=3;

/// Whether a head looks like an Inspect log: a ZIP whose first entry is one Inspect writes,
/// or a JSON document with `version` and `eval` at the top.
pub fn detect(head: &[u8], name: &str) -> bool {
    let s = super::sniff(head);
    if let Some(entry) = &s.zip {
        return entry.starts_with("_journal/")
            || entry == "header.json"
            || entry.starts_with("samples/")
            || entry == "summaries.json"
            || entry == "reductions.json"
            || name.ends_with(".eval");
    }
    s.top("eval") && (s.top("version") || s.top("status") || s.top("samples"))
}

/// Imports a whole log (JSON or ZIP).
pub fn import(bytes: &[u8], name: &str) -> Result<Imported, ImportError> {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return import_zip(std::io::Cursor::new(bytes), name);
    }
    let doc: Value =
        serde_json::from_slice(bytes).map_err(|e| json_error(Format::Inspect, &e, "JSON"))?;
    let Value::Object(doc) = doc else {
        return Err(broken(
            Format::Inspect,
            "the top level",
            "not a JSON object",
        ));
    };
    check_version(&doc)?;
    let mut out = V1Out::default();
    let header = Header::of(&doc);
    match doc.get("samples") {
        Some(Value::Array(samples)) => {
            for (i, s) in samples.iter().enumerate() {
                sample(&mut out, &header, s, &format!("samples[{i}]"))?;
            }
        }
        Some(Value::Null) | None => out.note("samples", "the log holds no samples"),
        Some(_) => return Err(broken(Format::Inspect, "samples", "not a list")),
    }
    let _ = name;
    Ok(out.finish())
}

/// [`import`] of a source read by place, into `out`: an archive one member at a time
/// ([`import_zip_to`]), a JSON log one sample at a time (the log without its samples is the
/// header; each sample is parsed alone, within the budget). The lines are [`import`]'s.
pub fn import_at<S: At + ?Sized>(
    src: &S,
    name: &str,
    out: &mut V1Out,
    cap: usize,
) -> Result<(), ImportError> {
    let mut magic = [0u8; 4];
    let n = src
        .read_at(&mut magic, 0)
        .map_err(|e| broken(Format::Inspect, "the file", e.to_string()))?;
    if n == 4 && (magic == *b"PK\x03\x04" || magic == *b"PK\x05\x06") {
        let r = Positioned { src, off: 0 };
        return import_zip_to(std::io::BufReader::with_capacity(1 << 16, r), name, out);
    }
    let mut p = Pieces::open(src, Format::Inspect, cap)?;
    let top = p.top_members()?;
    let mut head = Map::new();
    for (k, &span) in top.iter().filter(|(k, _)| *k != "samples") {
        head.insert(k.clone(), p.piece(span, k)?);
    }
    check_version(&head)?;
    let header = Header::of(&head);
    match top.get("samples") {
        None => out.note("samples", "the log holds no samples"),
        Some(&list) => match p.first_byte(list)? {
            b'[' => p.each_item(Some(list), |p, i, span| {
                let loc = format!("samples[{i}]");
                let s = p.piece(span, &loc)?;
                sample(out, &header, &s, &loc)
            })?,
            b'n' => out.note("samples", "the log holds no samples"),
            _ => return Err(broken(Format::Inspect, "samples", "not a list")),
        },
    }
    Ok(())
}

/// An [`At`] source as a reader that seeks (what the ZIP reader wants).
struct Positioned<'a, S: At + ?Sized> {
    src: &'a S,
    off: u64,
}

impl<S: At + ?Sized> Read for Positioned<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.src.read_at(buf, self.off)?;
        self.off += n as u64;
        Ok(n)
    }
}

impl<S: At + ?Sized> Seek for Positioned<'_, S> {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        let to = match pos {
            std::io::SeekFrom::Start(n) => Some(n),
            std::io::SeekFrom::End(d) => self.src.len()?.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.off.checked_add_signed(d),
        };
        self.off = to.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.off)
    }
}

/// Imports an `.eval` archive.
pub fn import_zip<R: Read + Seek>(r: R, name: &str) -> Result<Imported, ImportError> {
    let mut out = V1Out::default();
    import_zip_to(r, name, &mut out)?;
    Ok(out.finish())
}

/// [`import_zip`] into `out`: one member inflated and parsed at a time, so with a writer's
/// [`V1Out`] what is held is the largest member's tree, not the archive's.
pub fn import_zip_to<R: Read + Seek>(
    r: R,
    _name: &str,
    out: &mut V1Out,
) -> Result<(), ImportError> {
    let mut zip = zip::ZipArchive::new(r)
        .map_err(|e| broken(Format::Inspect, "the ZIP directory", e.to_string()))?;
    let names: Vec<String> = zip.file_names().map(str::to_string).collect();
    let mut member = |name: &str| -> Result<Option<Value>, ImportError> {
        let mut f = match zip.by_name(name) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(broken(Format::Inspect, name, e.to_string())),
        };
        // The size the archive declares is refused before anything is inflated; a member
        // that lies about it is stopped at the budget while it is inflated.
        let max = super::budget::current().max_bytes;
        if f.size() > max {
            return Err(super::budget::too_many_bytes(Format::Inspect, name, max));
        }
        let mut buf = Vec::with_capacity(f.size().min(1 << 24) as usize);
        (&mut f)
            .take(max.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| broken(Format::Inspect, name, format!("cannot decompress: {e}")))?;
        if buf.len() as u64 > max {
            return Err(super::budget::too_many_bytes(Format::Inspect, name, max));
        }
        super::budget::check_json(Format::Inspect, name, &buf)?;
        serde_json::from_slice(&buf).map(Some).map_err(|e| {
            broken(
                Format::Inspect,
                format!("{name}, line {}, column {}", e.line(), e.column()),
                e.to_string(),
            )
        })
    };
    // A log still being written (or cut short) has no header yet: the journal's start has
    // the same `eval` and `plan`.
    let head = match member("header.json")? {
        Some(v) => v,
        None => member("_journal/start.json")?.ok_or_else(|| {
            broken(
                Format::Inspect,
                "the ZIP directory",
                "neither header.json nor _journal/start.json: not an Inspect log",
            )
        })?,
    };
    let Value::Object(head) = head else {
        return Err(broken(Format::Inspect, "header.json", "not a JSON object"));
    };
    check_version(&head)?;
    let header = Header::of(&head);
    let mut samples: Vec<(SampleKey, String)> = names
        .iter()
        .filter(|n| n.starts_with("samples/") && n.ends_with(".json"))
        .map(|n| (SampleKey::of(n), n.clone()))
        .collect();
    samples.sort();
    if samples.is_empty() {
        out.note("samples/", "the log holds no samples");
    }
    for (_, n) in samples {
        if let Some(s) = member(&n)? {
            sample(out, &header, &s, &n)?;
        }
    }
    Ok(())
}

/// Orders sample members by sample id (numerically when it is a number), then epoch.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct SampleKey(Option<u64>, String, u64);

impl SampleKey {
    fn of(name: &str) -> Self {
        let stem = name
            .trim_start_matches("samples/")
            .trim_end_matches(".json");
        let (id, epoch) = stem.rsplit_once("_epoch_").unwrap_or((stem, "0"));
        SampleKey(id.parse().ok(), id.to_string(), epoch.parse().unwrap_or(0))
    }
}

fn check_version(doc: &Map<String, Value>) -> Result<(), ImportError> {
    match doc.get("version") {
        None => Ok(()),
        Some(v) => match v.as_u64() {
            Some(n) if VERSIONS.contains(&n) => Ok(()),
            _ => Err(broken(
                Format::Inspect,
                "version",
                format!(
                    "log format version {v} is not one this importer knows ({}-{}); \
                     refusing rather than guessing",
                    VERSIONS.start(),
                    VERSIONS.end()
                ),
            )),
        },
    }
}

/// What the log's header says, shared by its samples.
struct Header {
    task: String,
    model: Option<String>,
    meta: Map<String, Value>,
    /// The solver plan: solver names in order.
    solvers: Vec<String>,
}

impl Header {
    fn of(doc: &Map<String, Value>) -> Self {
        let eval = doc.get("eval").and_then(Value::as_object);
        let get = |k: &str| eval.and_then(|e| e.get(k));
        let task = get("task_display_name")
            .or_else(|| get("task"))
            .and_then(Value::as_str)
            .unwrap_or("inspect")
            .to_string();
        let mut meta = Map::new();
        meta.insert("format".into(), "inspect".into());
        for k in ["run_id", "eval_id", "task_id", "created", "task_file"] {
            if let Some(v) = get(k) {
                meta.insert(k.into(), v.clone());
            }
        }
        if let Some(v) = doc.get("version") {
            meta.insert("log_version".into(), v.clone());
        }
        if let Some(v) = doc.get("status") {
            meta.insert("status".into(), v.clone());
        }
        let solvers = doc
            .get("plan")
            .and_then(|p| p.get("steps"))
            .and_then(Value::as_array)
            .map(|steps| {
                steps
                    .iter()
                    .filter_map(|s| s.get("solver").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Header {
            task,
            model: get("model").and_then(Value::as_str).map(str::to_string),
            meta,
            solvers,
        }
    }
}

/// The state of one sample's import.
struct Sample<'a> {
    session: String,
    attachments: Option<&'a Map<String, Value>>,
    pool: Option<&'a Vec<Value>>,
    /// Span id → (type, name).
    spans: HashMap<String, (String, String)>,
    /// The store as patched so far (its top-level keys are the ground beliefs).
    store: Value,
    /// The task state's other keys (`completed`, `metadata`) as patched so far, from the
    /// `sample_init` event's state.
    task: Value,
    /// The last tool call's result, written once the store changes it made are.
    observation: Option<Observation>,
    /// The task-state keys written as beliefs (only these are retracted when they change).
    task_written: std::collections::HashSet<String>,
    /// The last tool call by function name: (seq, call id).
    tools: HashMap<String, (u64, String)>,
    /// Plan step ids by solver name, in plan order, and the occurrence reached per name.
    steps: Vec<(String, String)>,
    step_seen: HashMap<String, usize>,
    /// Open solver steps, innermost last.
    open: Vec<String>,
    state_events: u64,
    scored: bool,
    /// Whether an `error` event was written (the sample's own `error` is then the same).
    errored: bool,
    /// The sample's intention id, named by its error log (`x_intention`): the log and the
    /// failed run are one failure.
    intention: String,
    last_ts: Option<String>,
    /// The sample's output, until it is written.
    answer: Option<String>,
}

impl Sample<'_> {
    /// A string with its `attachment://` reference resolved.
    fn resolve<'v>(&'v self, s: &'v str) -> &'v str {
        match s.strip_prefix("attachment://") {
            Some(hash) => self
                .attachments
                .and_then(|a| a.get(hash))
                .and_then(Value::as_str)
                .unwrap_or(s),
            None => s,
        }
    }

    /// A value with every `attachment://` string resolved.
    fn resolve_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.resolve(s).to_string()),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.resolve_value(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), self.resolve_value(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// Text and reasoning of a message `content` (a string or a list of parts).
    fn content(&self, v: &Value) -> (String, Vec<String>) {
        let mut text = String::new();
        let mut reasoning = Vec::new();
        match v {
            Value::String(s) => text.push_str(self.resolve(s)),
            Value::Array(parts) => {
                for p in parts {
                    match p.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = p.get("text").and_then(Value::as_str) {
                                if !text.is_empty() {
                                    text.push('\n');
                                }
                                text.push_str(self.resolve(t));
                            }
                        }
                        Some("reasoning") => {
                            let r = p
                                .get("reasoning")
                                .or_else(|| p.get("summary"))
                                .and_then(Value::as_str)
                                .map(|r| self.resolve(r).to_string());
                            match r {
                                Some(r) if !r.is_empty() => reasoning.push(r),
                                _ if p.get("redacted").and_then(Value::as_bool) == Some(true) => {
                                    reasoning.push("(reasoning redacted by the provider)".into())
                                }
                                _ => {}
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        (text, reasoning)
    }
}

/// A field of an event that may be written as a JSON string holding the value (condensed
/// logs, older writers) or as the value.
fn field<'v>(e: &'v Value, k: &str) -> std::borrow::Cow<'v, Value> {
    match e.get(k) {
        Some(v @ Value::String(_)) => match decode_nested(v) {
            Value::String(_) => std::borrow::Cow::Borrowed(v),
            decoded => std::borrow::Cow::Owned(decoded),
        },
        Some(v) => std::borrow::Cow::Borrowed(v),
        None => std::borrow::Cow::Owned(Value::Null),
    }
}

fn ts_of(e: &Value) -> Option<String> {
    e.get("timestamp")
        .and_then(Value::as_str)
        .and_then(rfc3339)
        .map(|(t, _)| t)
}

fn sample(out: &mut V1Out, h: &Header, s: &Value, loc: &str) -> Result<(), ImportError> {
    let Some(obj) = s.as_object() else {
        return Err(broken(
            Format::Inspect,
            loc,
            "a sample that is not a JSON object",
        ));
    };
    let id = obj.get("id").map(as_text).unwrap_or_default();
    let epoch = obj.get("epoch").and_then(Value::as_u64).unwrap_or(1);
    let mut st = Sample {
        session: format!("{}:{id}:{epoch}", h.task),
        attachments: obj.get("attachments").and_then(Value::as_object),
        // The message pool: `message_pool` in earlier condensed logs, `events_data.messages`
        // in later ones.
        pool: obj
            .get("message_pool")
            .or_else(|| obj.get("events_data").and_then(|d| d.get("messages")))
            .and_then(Value::as_array),
        spans: HashMap::new(),
        store: Value::Object(Map::new()),
        task: Value::Object(Map::new()),
        task_written: Default::default(),
        observation: None,
        tools: HashMap::new(),
        steps: Vec::new(),
        step_seen: HashMap::new(),
        open: Vec::new(),
        state_events: 0,
        scored: false,
        errored: false,
        intention: String::new(),
        last_ts: None,
        answer: None,
    };
    // The answer: the sample's output, shown before the scores that grade it.
    let output = field(s, "output");
    st.answer = output
        .get("completion")
        .and_then(Value::as_str)
        .map(|c| st.resolve(c).to_string())
        .filter(|c| !c.is_empty())
        .or_else(|| {
            output
                .pointer("/choices/0/message/content")
                .map(|c| st.content(c).0)
                .filter(|c| !c.is_empty())
        });
    let events = obj.get("events").and_then(Value::as_array);
    let first_ts = events.and_then(|e| e.first()).and_then(ts_of);
    let mut meta = h.meta.clone();
    meta.insert(
        "sample_id".into(),
        obj.get("id").cloned().unwrap_or(Value::Null),
    );
    meta.insert("epoch".into(), epoch.into());
    if let Some(t) = obj.get("target") {
        meta.insert("target".into(), st.resolve_value(t));
    }
    let sess = st.session.clone();
    out.event(&sess, "session")
        .ts(first_ts.clone())
        .text("agent", &h.task)
        .opt_text("model", h.model.as_deref())
        .field("meta", Value::Object(meta))
        .from(loc.to_string())
        .emit();
    // The sample's input is what the agent is asked to do.
    let goal = match obj.get("input") {
        Some(Value::String(s)) => Some(st.resolve(s).to_string()),
        Some(Value::Array(msgs)) => msgs
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .map(|m| st.content(m.get("content").unwrap_or(&Value::Null)).0),
        _ => None,
    };
    let intention = format!("sample-{id}");
    st.intention = intention.clone();
    // The sample's own error says the run failed (its `log` carries the traceback).
    let run_error = obj
        .get("error")
        .filter(|e| !e.is_null())
        .map(|e| e.get("message").map(as_text).unwrap_or_else(|| as_text(e)));
    out.event(&sess, "intention")
        .ts(first_ts.clone())
        .id(Some(&intention))
        .text("type", &h.task)
        .opt_text("goal", goal.as_deref())
        .field(
            "status",
            if run_error.is_some() {
                Value::from("error")
            } else {
                Value::Null
            },
        )
        .opt_text("error", run_error.as_deref())
        .field(
            "duration_ms",
            seconds_to_ms(obj.get("total_time").or_else(|| obj.get("working_time"))),
        )
        .from(format!("{loc}.input"))
        .emit();
    if !h.solvers.is_empty() {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let mut steps = Vec::new();
        let mut prev: Option<String> = None;
        for name in &h.solvers {
            let n = seen.entry(name).or_insert(0);
            *n += 1;
            let sid = if *n == 1 {
                name.clone()
            } else {
                format!("{name}#{n}")
            };
            let mut step = serde_json::json!({"id": sid, "kind": "solver", "description": name});
            if let Some(p) = &prev {
                step["deps"] = serde_json::json!([p]);
            }
            st.steps.push((name.clone(), sid.clone()));
            prev = Some(sid);
            steps.push(step);
        }
        out.event(&sess, "plan")
            .ts(first_ts.clone())
            .id(Some("solvers"))
            .text("intention_type", &h.task)
            .field("origin", "library")
            .field("steps", Value::Array(steps))
            .from("plan")
            .emit();
    }
    match events {
        Some(evs) if !evs.is_empty() => {
            for (i, e) in evs.iter().enumerate() {
                event(out, &mut st, e, &format!("{loc}.events[{i}]"));
            }
            observe_tool(out, &mut st);
        }
        _ => {
            out.note(
                loc,
                "the sample has no events (an older log): read from its messages",
            );
            if let Some(Value::Array(msgs)) = obj.get("messages") {
                for (i, m) in msgs.iter().enumerate() {
                    message(out, &mut st, m, &format!("{loc}.messages[{i}]"));
                }
            }
        }
    }
    if st.state_events > 0 {
        out.note(
            loc,
            format!(
                "{} state events left out (message bookkeeping; the messages are in the model \
                 and tool events, store changes in the store events)",
                st.state_events
            ),
        );
    }
    // Solver steps still open at the end did not finish.
    let failed = obj.get("error").is_some_and(|e| !e.is_null());
    while let Some(sid) = st.open.pop() {
        out.event(&sess, "step")
            .ts(st.last_ts.clone())
            .field("plan", "solvers")
            .text("step", &sid)
            .field("status", if failed { "failed" } else { "done" })
            .text("summary", "no end recorded")
            .from(loc.to_string())
            .emit();
    }
    if let Some(err) = obj.get("error").filter(|e| !e.is_null() && !st.errored) {
        let msg = err
            .get("message")
            .map(as_text)
            .unwrap_or_else(|| as_text(err));
        out.event(&sess, "log")
            .ts(st.last_ts.clone())
            .field("level", "error")
            .text("message", &msg)
            .opt_text("x_traceback", err.get("traceback").and_then(Value::as_str))
            .text("x_intention", &st.intention)
            .from(format!("{loc}.error"))
            .emit();
    }
    answer(out, &mut st, loc);
    // Scores recorded only on the sample (logs without score events).
    if !st.scored
        && let Some(Value::Object(scores)) = obj.get("scores")
    {
        for (name, sc) in scores {
            score(out, &st, name, sc, false, &format!("{loc}.scores.{name}"));
        }
    }
    Ok(())
}

/// One event of a sample.
fn event(out: &mut V1Out, st: &mut Sample<'_>, e: &Value, loc: &str) {
    let sess = st.session.clone();
    let ts = ts_of(e).or_else(|| st.last_ts.clone());
    st.last_ts = ts.clone();
    let kind = e.get("event").and_then(Value::as_str).unwrap_or("");
    if kind != "store" {
        observe_tool(out, st);
    }
    let working = e.get("working_start").cloned().unwrap_or(Value::Null);
    match kind {
        "span_begin" => {
            let sid = e.get("id").map(as_text).unwrap_or_default();
            let ty = e.get("type").map(as_text).unwrap_or_default();
            let name = e.get("name").map(as_text).unwrap_or_default();
            if ty == "solver" {
                solver_begin(out, st, &name, ts, loc);
            } else if ty == "scorers" || ty == "scorer" {
                answer(out, st, loc);
            }
            st.spans.insert(sid, (ty, name));
        }
        "span_end" => {
            let sid = e.get("id").map(as_text).unwrap_or_default();
            if st.spans.get(&sid).is_some_and(|(ty, _)| ty == "solver") {
                solver_end(out, st, ts, loc);
            }
        }
        // Pre-span logs mark solvers with begin/end steps.
        "step" => {
            let ty = e.get("type").map(as_text).unwrap_or_default();
            let name = e.get("name").map(as_text).unwrap_or_default();
            match (e.get("action").and_then(Value::as_str), ty.as_str()) {
                (Some("begin"), "solver") => solver_begin(out, st, &name, ts, loc),
                (Some("end"), "solver") => solver_end(out, st, ts, loc),
                (Some("begin"), "scorer") => {
                    answer(out, st, loc);
                    st.spans
                        .insert(format!("step:{name}"), ("scorer".into(), name));
                }
                _ => {}
            }
        }
        "model" => {
            let output = field(e, "output");
            let msg = output
                .pointer("/choices/0/message")
                .cloned()
                .unwrap_or(Value::Null);
            let (text, reasoning) = st.content(msg.get("content").unwrap_or(&Value::Null));
            for r in &reasoning {
                out.event(&sess, "thought")
                    .ts(ts.clone())
                    .text("text", r)
                    .from(format!("{loc}.output"))
                    .emit();
            }
            // The messages sent: inline, or (condensed logs) ranges of the message pool.
            let input = field(e, "input");
            let inline: Vec<&Value> = input
                .as_array()
                .map(|a| a.iter().collect())
                .unwrap_or_default();
            let msgs: Vec<&Value> = match (e.get("input_refs").and_then(Value::as_array), st.pool) {
                (Some(refs), Some(pool)) if inline.is_empty() => refs
                    .iter()
                    .filter_map(|r| {
                        let a = r.get(0)?.as_u64()? as usize;
                        let b = r.get(1)?.as_u64()? as usize;
                        pool.get(a..b.min(pool.len()))
                    })
                    .flatten()
                    .collect(),
                _ => inline,
            };
            let last_input = msgs.last().map(|m| {
                let role = m.get("role").map(as_text).unwrap_or_default();
                format!(
                    "{role}: {}",
                    st.content(m.get("content").unwrap_or(&Value::Null)).0
                )
            });
            let calls: Vec<Value> = msg
                .get("tool_calls")
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .map(|t| {
                            serde_json::json!({
                                "id": t.get("id"), "function": t.get("function"),
                                "arguments": st.resolve_value(t.get("arguments").unwrap_or(&Value::Null)),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            let error = e.get("error").filter(|x| !x.is_null()).map(as_text);
            out.event(&sess, "llm_call")
                .ts(ts.clone())
                .opt_text("model", e.get("model").and_then(Value::as_str))
                .field("input_messages", msgs.len())
                .opt_text("x_last_input", last_input.as_deref())
                .text("output", &text)
                .field(
                    "tool_calls",
                    if calls.is_empty() {
                        Value::Null
                    } else {
                        Value::Array(calls)
                    },
                )
                .field("usage", output.get("usage").cloned().unwrap_or(Value::Null))
                .field(
                    "stop_reason",
                    output
                        .pointer("/choices/0/stop_reason")
                        .cloned()
                        .unwrap_or(Value::Null),
                )
                .opt_text("error", error.as_deref())
                .field("duration_ms", seconds_to_ms(e.get("working_time")))
                .field("x_phase", phase(st, e))
                .field("x_working_start", working)
                .from(loc.to_string())
                .emit();
        }
        "tool" => {
            let func = e.get("function").map(as_text).unwrap_or_default();
            let call = e.get("id").map(as_text).unwrap_or_default();
            let result = field(e, "result");
            let error = e.get("error").filter(|x| !x.is_null());
            let seq = out.count(&sess) + 1;
            st.tools.insert(func.clone(), (seq, call.clone()));
            let text = st.content(&result).0;
            out.event(&sess, "tool_call")
                .ts(ts.clone())
                .id((!call.is_empty()).then_some(call.as_str()))
                .text("tool", &func)
                .field("args", st.resolve_value(&field(e, "arguments")))
                .text("result", &text)
                .field("error", error.map_or(Value::Null, |x| st.resolve_value(x)))
                .field("duration_ms", seconds_to_ms(e.get("working_time")))
                .field("x_working_start", working)
                .from(loc.to_string())
                .emit();
            let call = if call.is_empty() {
                seq.to_string()
            } else {
                call
            };
            // Written after the store changes the call made (they follow it in the log), so
            // that a store revision comes right after the call that caused it.
            st.observation = Some(Observation {
                tool: func,
                call,
                result: text,
                failed: error.is_some(),
                ts,
                loc: loc.to_string(),
            });
        }
        "store" => store(out, st, e, ts, loc),
        "state" => {
            // Changes to the messages, the output, the tools and the store repeat what the
            // model, tool and store events say; any other change of the task state is kept.
            let changes = field(e, "changes");
            state_as_beliefs(out, st, e, &changes, ts.clone(), loc);
            let other: Vec<Value> = changes
                .as_array()
                .into_iter()
                .flatten()
                .filter(|op| {
                    let path = op.get("path").and_then(Value::as_str).unwrap_or("");
                    !matches!(
                        top_key(path).as_deref(),
                        Some("messages" | "output" | "tools" | "tool_choice" | "store")
                    )
                })
                .map(|op| st.resolve_value(op))
                .collect();
            if other.is_empty() {
                st.state_events += 1;
            } else {
                out.event(&sess, "inspect_state")
                    .ts(ts)
                    .field("changes", Value::Array(other))
                    .from(loc.to_string())
                    .emit();
            }
        }
        "score" => {
            let name = st
                .spans
                .get(e.get("span_id").and_then(Value::as_str).unwrap_or(""))
                .filter(|(ty, _)| ty == "scorer")
                .or_else(|| {
                    st.spans
                        .iter()
                        .filter(|(k, (ty, _))| k.starts_with("step:") && ty == "scorer")
                        .map(|(_, v)| v)
                        .next()
                })
                .map(|(_, n)| n.clone())
                .unwrap_or_else(|| "score".into());
            let intermediate = e.get("intermediate").and_then(Value::as_bool) == Some(true);
            st.scored = true;
            answer(out, st, loc);
            score(out, st, &name, &field(e, "score"), intermediate, loc);
        }
        "error" => {
            st.errored = true;
            let err = e.get("error").unwrap_or(&Value::Null);
            out.event(&sess, "log")
                .ts(ts)
                .field("level", "error")
                .text(
                    "message",
                    &err.get("message")
                        .map(as_text)
                        .unwrap_or_else(|| as_text(err)),
                )
                .opt_text("x_traceback", err.get("traceback").and_then(Value::as_str))
                .text("x_intention", &st.intention)
                .from(loc.to_string())
                .emit();
        }
        "logger" => {
            let m = e.get("message").unwrap_or(&Value::Null);
            let level = m.get("level").map(as_text).unwrap_or_else(|| "info".into());
            out.event(&sess, "log")
                .ts(ts)
                .text("level", &level)
                .text(
                    "message",
                    &m.get("message").map(as_text).unwrap_or_else(|| as_text(m)),
                )
                .from(loc.to_string())
                .emit();
        }
        "info" => {
            let data = st.resolve_value(&field(e, "data"));
            out.event(&sess, "log")
                .ts(ts)
                .field("level", "info")
                .text("message", &as_text(&data))
                .opt_text("x_source", e.get("source").and_then(Value::as_str))
                .from(loc.to_string())
                .emit();
        }
        "sandbox" => {
            let cmd = e.get("cmd").map(as_text).unwrap_or_default();
            let action = e.get("action").map(as_text).unwrap_or_default();
            out.event(&sess, "log")
                .ts(ts)
                .field("level", "debug")
                .text(
                    "message",
                    format!("sandbox {action}: {cmd}").trim_end_matches(": "),
                )
                .field("x_result", e.get("result").cloned().unwrap_or(Value::Null))
                .text("x_output", &as_text(&field(e, "output")))
                .from(loc.to_string())
                .emit();
        }
        "input" | "approval" | "sample_limit" => {
            let (level, msg) = match kind {
                "input" => ("info", format!("input: {}", as_text(&field(e, "input")))),
                "approval" => (
                    "info",
                    format!(
                        "approval of {}: {} by {}",
                        e.pointer("/call/function").map(as_text).unwrap_or_default(),
                        e.get("decision").map(as_text).unwrap_or_default(),
                        e.get("approver").map(as_text).unwrap_or_default()
                    ),
                ),
                _ => (
                    "warn",
                    format!(
                        "{} limit reached: {}",
                        e.get("type").map(as_text).unwrap_or_default(),
                        e.get("message").map(as_text).unwrap_or_default()
                    ),
                ),
            };
            out.event(&sess, "log")
                .ts(ts)
                .field("level", level)
                .text("message", &msg)
                .from(loc.to_string())
                .emit();
        }
        // Tree structure (and the sample's own start) is carried by the session and the
        // spans: nothing to show on its own.
        "sample_init" => {
            if let Some(Value::Object(state)) = e.get("state") {
                st.task = Value::Object(
                    state
                        .iter()
                        .filter(|(k, _)| !DUPLICATED.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                );
            }
        }
        other => {
            // subtask, compaction, checkpoint, branch, ...: no v1 home; kept whole.
            let name = if other.is_empty() { "unknown" } else { other };
            out.event(&sess, &format!("inspect_{name}"))
                .ts(ts)
                .field("data", st.resolve_value(e))
                .from(loc.to_string())
                .emit();
        }
    }
}

/// Writes the sample's answer, once.
fn answer(out: &mut V1Out, st: &mut Sample<'_>, loc: &str) {
    if let Some(text) = st.answer.take() {
        let sess = st.session.clone();
        out.event(&sess, "answer")
            .ts(st.last_ts.clone())
            .id(Some("answer"))
            .text("text", &text)
            .from(format!(
                "{}.output",
                loc.split(".events[").next().unwrap_or(loc)
            ))
            .emit();
    }
}

/// Whether a model call belongs to the agent or to a scorer.
fn phase(st: &Sample<'_>, e: &Value) -> Value {
    let in_scorer = e
        .get("span_id")
        .and_then(Value::as_str)
        .and_then(|s| st.spans.get(s))
        .is_some_and(|(ty, _)| ty == "scorer" || ty == "scorers")
        || st.spans.keys().any(|k| k.starts_with("step:"));
    if in_scorer {
        "scorer".into()
    } else {
        Value::Null
    }
}

fn solver_begin(out: &mut V1Out, st: &mut Sample<'_>, name: &str, ts: Option<String>, loc: &str) {
    let n = st.step_seen.entry(name.to_string()).or_insert(0);
    *n += 1;
    let sid = st
        .steps
        .iter()
        .filter(|(solver, _)| solver == name)
        .nth(*n - 1)
        .map(|(_, s)| s.clone())
        .unwrap_or_else(|| name.to_string());
    out.event(&st.session, "step")
        .ts(ts)
        .field("plan", "solvers")
        .text("step", &sid)
        .field("status", "dispatched")
        .from(loc.to_string())
        .emit();
    st.open.push(sid);
}

fn solver_end(out: &mut V1Out, st: &mut Sample<'_>, ts: Option<String>, loc: &str) {
    if let Some(sid) = st.open.pop() {
        out.event(&st.session, "step")
            .ts(ts)
            .field("plan", "solvers")
            .text("step", &sid)
            .field("status", "done")
            .from(loc.to_string())
            .emit();
    }
}

/// A `score`: one event per value (a scorer may return a dict of values).
fn score(out: &mut V1Out, st: &Sample<'_>, name: &str, sc: &Value, intermediate: bool, loc: &str) {
    let value = sc.get("value").cloned().unwrap_or(Value::Null);
    let explanation = sc
        .get("explanation")
        .and_then(Value::as_str)
        .map(|x| st.resolve(x).to_string());
    let answer = sc
        .get("answer")
        .and_then(Value::as_str)
        .map(|x| st.resolve(x).to_string());
    let values: Vec<(String, Value)> = match value {
        Value::Object(m) => m
            .into_iter()
            .map(|(k, v)| (format!("{name}/{k}"), v))
            .collect(),
        Value::Array(a) => a
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("{name}/{i}"), v))
            .collect(),
        v => vec![(name.to_string(), v)],
    };
    for (n, v) in values {
        let v = match v {
            v @ (Value::Number(_) | Value::String(_) | Value::Bool(_)) => v,
            Value::Null => Value::Null,
            other => Value::String(other.to_string()),
        };
        let passed = inspect_passed(&v).map_or(Value::Null, Value::Bool);
        out.event(&st.session, "score")
            .ts(st.last_ts.clone())
            .text("name", &n)
            .field("value", v)
            .field("passed", passed)
            .opt_text("explanation", explanation.as_deref())
            .field("target", "answer")
            .text("source", &format!("scorer:{name}"))
            .opt_text("x_answer", answer.as_deref())
            .field(
                "x_intermediate",
                if intermediate {
                    Value::Bool(true)
                } else {
                    Value::Null
                },
            )
            .from(loc.to_string())
            .emit();
    }
}

/// Whether an Inspect score value says the sample passed, as Inspect's own `accuracy`
/// metric reads it (`value_to_float`): `C` (correct) and 1 pass; `I` (incorrect), `N` (no
/// answer) and 0 fail; `true`/`false` as they are. Anything else (`P` for partial, 0.5, a
/// free label) says nothing about passing.
fn inspect_passed(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.as_str() {
            "C" => Some(true),
            "I" | "N" => Some(false),
            _ => None,
        },
        Value::Number(n) => match n.as_f64() {
            Some(1.0) => Some(true),
            Some(0.0) => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A tool call's result waiting to be written as an observation.
struct Observation {
    tool: String,
    call: String,
    result: String,
    failed: bool,
    ts: Option<String>,
    loc: String,
}

/// Writes the last tool call's result as an observation (`observe.rs`), once.
fn observe_tool(out: &mut V1Out, st: &mut Sample<'_>) {
    if let Some(o) = st.observation.take() {
        observe::tool_result(
            out,
            observe::ToolResult {
                session: &st.session,
                tool: &o.tool,
                call: &o.call,
                result: &Value::String(o.result),
                failed: o.failed,
                ts: o.ts,
                from: &o.loc,
            },
        );
    }
}

/// A message of an older log without events.
fn message(out: &mut V1Out, st: &mut Sample<'_>, m: &Value, loc: &str) {
    let sess = st.session.clone();
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    let (text, reasoning) = st.content(m.get("content").unwrap_or(&Value::Null));
    match role {
        "assistant" => {
            for r in &reasoning {
                out.event(&sess, "thought")
                    .text("text", r)
                    .from(loc.to_string())
                    .emit();
            }
            out.event(&sess, "llm_call")
                .text("output", &text)
                .field(
                    "tool_calls",
                    m.get("tool_calls").cloned().unwrap_or(Value::Null),
                )
                .from(loc.to_string())
                .emit();
        }
        "tool" => {
            let func = m.get("function").map(as_text).unwrap_or_default();
            let call = m
                .get("tool_call_id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| (out.count(&sess) + 1).to_string());
            let error = m.get("error").filter(|e| !e.is_null());
            out.event(&sess, "tool_call")
                .id(m.get("tool_call_id").and_then(Value::as_str))
                .text("tool", &func)
                .text("result", &text)
                .field("error", error.cloned().unwrap_or(Value::Null))
                .from(loc.to_string())
                .emit();
            observe::tool_result(
                out,
                observe::ToolResult {
                    session: &sess,
                    tool: &func,
                    call: &call,
                    result: &Value::String(text),
                    failed: error.is_some(),
                    ts: None,
                    from: loc,
                },
            );
        }
        _ => {}
    }
}

/// A `store` event: a JSON Patch on the sample's store. Each top-level key is a ground
/// belief: a key written for the first time is a `belief`; a key whose value changes has
/// its old value retracted, then the new one written; a removed key is retracted.
fn store(out: &mut V1Out, st: &mut Sample<'_>, e: &Value, ts: Option<String>, loc: &str) {
    let sess = st.session.clone();
    let changes = field(e, "changes");
    let Some(ops) = changes.as_array() else {
        out.note(loc, "a store event without a list of changes");
        return;
    };
    // The tool call this store change happened in, when it happened in a tool's span.
    let cause = e
        .get("span_id")
        .and_then(Value::as_str)
        .and_then(|s| st.spans.get(s))
        .filter(|(ty, _)| ty == "tool")
        .and_then(|(_, name)| {
            st.tools
                .get(name)
                .map(|(seq, id)| (name.clone(), *seq, id.clone()))
        });
    for (k, op) in ops.iter().enumerate() {
        let here = format!("{loc}.changes[{k}]");
        let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
        let path = op.get("path").and_then(Value::as_str).unwrap_or("");
        let Some(key) = top_key(path) else {
            out.note(
                &here,
                format!("a store change of the whole store ({kind}) left out"),
            );
            continue;
        };
        let before = st.store.get(&key).cloned();
        if let Err(why) = apply(&mut st.store, op) {
            out.note(&here, format!("store change not applied: {why}"));
            continue;
        }
        let after = st.store.get(&key).cloned();
        if before == after {
            continue;
        }
        let mut reason = format!("store {kind} {path}");
        if let Some((name, seq, id)) = &cause {
            reason.push_str(&format!(" in tool call {name} ({id}, seq {seq})"));
        }
        if before.is_some() {
            out.event(&sess, "retract")
                .ts(ts.clone())
                .text("target", &key)
                .text("reason", &reason)
                .field("by", "agent")
                .field(
                    "x_replaced",
                    op.get("replaced")
                        .map_or(Value::Null, |r| st.resolve_value(r)),
                )
                .from(here.clone())
                .emit();
        }
        if let Some(v) = after {
            out.event(&sess, "belief")
                .ts(ts.clone())
                .text("name", &key)
                .field("value", st.resolve_value(&v))
                .field("source", "store")
                .text("x_change", &reason)
                .from(here)
                .emit();
        }
    }
}

/// Task-state keys whose changes repeat what other events say (the model, tool and store
/// events), or that hold the conversation rather than state.
const DUPLICATED: &[&str] = &["messages", "output", "tools", "tool_choice", "store"];

/// A `state` event's JSON Patch applied: changes under `/store` go through the store's own
/// mapping (a no-op when a `store` event already made them: older logs have only these), and
/// each other top-level key of the task state that changed (`completed`, `metadata`) is a
/// ground belief `state/KEY` (source `state:inspect`), revised like a store key.
fn state_as_beliefs(
    out: &mut V1Out,
    st: &mut Sample<'_>,
    e: &Value,
    changes: &Value,
    ts: Option<String>,
    loc: &str,
) {
    let ops = changes.as_array().map(Vec::as_slice).unwrap_or_default();
    let store_ops: Vec<Value> = ops
        .iter()
        .filter_map(|op| {
            let path = op.get("path").and_then(Value::as_str)?;
            let rest = path.strip_prefix("/store")?;
            if !rest.starts_with('/') {
                return None;
            }
            let mut op = op.clone();
            op["path"] = Value::String(rest.to_string());
            if let Some(from) = op.get("from").and_then(Value::as_str) {
                let from = from.strip_prefix("/store").unwrap_or(from).to_string();
                op["from"] = Value::String(from);
            }
            Some(op)
        })
        .collect();
    if !store_ops.is_empty() {
        let mut ev = serde_json::json!({ "changes": store_ops });
        if let Some(span) = e.get("span_id") {
            ev["span_id"] = span.clone();
        }
        store(out, st, &ev, ts.clone(), loc);
    }
    let sess = st.session.clone();
    for (k, op) in ops.iter().enumerate() {
        let path = op.get("path").and_then(Value::as_str).unwrap_or("");
        let Some(key) = top_key(path).filter(|k| !DUPLICATED.contains(&k.as_str())) else {
            continue;
        };
        let here = format!("{loc}.changes[{k}]");
        let before = st.task.get(&key).cloned();
        if let Err(why) = apply(&mut st.task, op) {
            out.note(&here, format!("task state change not applied: {why}"));
            continue;
        }
        let after = st.task.get(&key).cloned();
        if before == after {
            continue;
        }
        let name = format!("state/{key}");
        let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
        let reason = format!("task state {kind} {path}");
        if st.task_written.remove(&name) {
            out.event(&sess, "retract")
                .ts(ts.clone())
                .text("target", &name)
                .text("reason", &reason)
                .field("by", "agent")
                .from(here.clone())
                .emit();
        }
        if let Some(v) = after {
            out.event(&sess, "belief")
                .ts(ts.clone())
                .text("name", &name)
                .field("value", st.resolve_value(&v))
                .field("source", "state:inspect")
                .text("x_change", &reason)
                .from(here)
                .emit();
            st.task_written.insert(name);
        }
    }
}

/// The first segment of a JSON Pointer, unescaped; `None` for the whole document.
fn top_key(path: &str) -> Option<String> {
    let rest = path.strip_prefix('/')?;
    let seg = rest.split('/').next()?;
    Some(seg.replace("~1", "/").replace("~0", "~"))
}

fn pointer_parts(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let rest = path
        .strip_prefix('/')
        .ok_or_else(|| format!("path {path:?} is not a JSON Pointer"))?;
    Ok(rest
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect())
}

/// Applies one RFC 6902 operation (add, remove, replace, move, copy; test is a no-op).
fn apply(doc: &mut Value, op: &Value) -> Result<(), String> {
    let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
    let path = op.get("path").and_then(Value::as_str).unwrap_or("");
    match kind {
        "add" | "replace" => {
            let v = op.get("value").cloned().ok_or("no value")?;
            put(doc, &pointer_parts(path)?, v, kind == "add")
        }
        "remove" => take(doc, &pointer_parts(path)?).map(|_| ()),
        "move" | "copy" => {
            let from = op.get("from").and_then(Value::as_str).ok_or("no from")?;
            let parts = pointer_parts(from)?;
            let v = if kind == "move" {
                take(doc, &parts)?
            } else {
                doc.pointer(from).cloned().ok_or("from names nothing")?
            };
            put(doc, &pointer_parts(path)?, v, true)
        }
        "test" => Ok(()),
        other => Err(format!("unknown operation {other:?}")),
    }
}

fn parent<'v>(doc: &'v mut Value, parts: &[String]) -> Result<&'v mut Value, String> {
    let mut cur = doc;
    for p in parts {
        cur = match cur {
            Value::Object(m) => m.get_mut(p).ok_or_else(|| format!("no member {p:?}"))?,
            Value::Array(a) => {
                let i: usize = p.parse().map_err(|_| format!("bad index {p:?}"))?;
                a.get_mut(i)
                    .ok_or_else(|| format!("index {i} out of range"))?
            }
            _ => return Err(format!("{p:?} is inside a scalar")),
        };
    }
    Ok(cur)
}

fn put(doc: &mut Value, parts: &[String], v: Value, insert: bool) -> Result<(), String> {
    let Some((last, init)) = parts.split_last() else {
        *doc = v;
        return Ok(());
    };
    match parent(doc, init)? {
        Value::Object(m) => {
            m.insert(last.clone(), v);
            Ok(())
        }
        Value::Array(a) => {
            if last == "-" {
                a.push(v);
                return Ok(());
            }
            let i: usize = last.parse().map_err(|_| format!("bad index {last:?}"))?;
            if insert && i <= a.len() {
                a.insert(i, v);
                Ok(())
            } else if i < a.len() {
                a[i] = v;
                Ok(())
            } else {
                Err(format!("index {i} out of range"))
            }
        }
        _ => Err("the parent is a scalar".into()),
    }
}

fn take(doc: &mut Value, parts: &[String]) -> Result<Value, String> {
    let Some((last, init)) = parts.split_last() else {
        return Ok(std::mem::take(doc));
    };
    match parent(doc, init)? {
        Value::Object(m) => m.remove(last).ok_or_else(|| format!("no member {last:?}")),
        Value::Array(a) => {
            let i: usize = last.parse().map_err(|_| format!("bad index {last:?}"))?;
            (i < a.len())
                .then(|| a.remove(i))
                .ok_or_else(|| format!("index {i} out of range"))
        }
        _ => Err("the parent is a scalar".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_changes_outside_the_bookkeeping_are_kept() {
        let log = serde_json::json!({"version": 2, "eval": {"task": "t"}, "samples": [{
        "id": 1, "epoch": 1, "input": "q",
        "events": [
            {"event": "state", "changes": [{"op": "add", "path": "/messages/1", "value": {}}]},
            {"event": "state", "changes": "[{\"op\": \"replace\", \"path\": \"/metadata/x\", \"value\": 2}, {\"op\": \"add\", \"path\": \"/output/usage\", \"value\": 1}]"}
        ]}]});
        let imp = import(log.to_string().as_bytes(), "t.json").unwrap();
        let text = String::from_utf8(imp.v1).unwrap();
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("inspect_state"))
            .collect();
        assert_eq!(kept.len(), 1, "{text}");
        assert!(
            kept[0].contains("/metadata/x") && !kept[0].contains("/output"),
            "{}",
            kept[0]
        );
        assert!(
            imp.notes
                .iter()
                .any(|n| n.message.starts_with("1 state events left out"))
        );
    }

    /// Task-state keys other than the conversation become ground beliefs `state/KEY`,
    /// patched from the `sample_init` state and revised when they change; a store change only
    /// a `state` event shows (older logs) is a store key like any other.
    #[test]
    fn task_state_and_store_changes_in_state_events_are_ground_beliefs() {
        let log = serde_json::json!({"version": 2, "eval": {"task": "t"}, "samples": [{
        "id": 1, "epoch": 1, "input": "q",
        "events": [
            {"event": "sample_init", "sample": {}, "state": {"messages": [], "completed": false, "metadata": {}, "store": {}}},
            {"event": "state", "changes": [
                {"op": "add", "path": "/metadata/x", "value": 2},
                {"op": "add", "path": "/store/k", "value": "v"},
                {"op": "add", "path": "/messages/0", "value": {}}]},
            {"event": "state", "changes": [
                {"op": "replace", "path": "/metadata/x", "value": 3},
                {"op": "replace", "path": "/completed", "value": true}]}
        ]}]});
        let imp = import(log.to_string().as_bytes(), "t.json").unwrap();
        let lines: Vec<Value> = imp
            .v1
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .filter(|v: &Value| v["kind"] == "belief" || v["kind"] == "retract")
            .collect();
        let brief: Vec<String> = lines
            .iter()
            .map(|v| match v["kind"].as_str() {
                Some("belief") => format!("{} = {} ({})", v["name"], v["value"], v["source"]),
                _ => format!("retract {}", v["target"]),
            })
            .collect();
        assert_eq!(
            brief,
            [
                r#""k" = "v" ("store")"#,
                r#""state/metadata" = {"x":2} ("state:inspect")"#,
                r#"retract "state/metadata""#,
                r#""state/metadata" = {"x":3} ("state:inspect")"#,
                r#""state/completed" = true ("state:inspect")"#,
            ]
        );
    }

    #[test]
    fn json_patch_ops() {
        let mut d = serde_json::json!({"a": {"b": [1, 2]}, "c~/d": 1});
        for op in [
            serde_json::json!({"op": "add", "path": "/a/b/1", "value": 9}),
            serde_json::json!({"op": "replace", "path": "/c~0~1d", "value": 2}),
            serde_json::json!({"op": "move", "from": "/a/b/0", "path": "/x"}),
            serde_json::json!({"op": "copy", "from": "/x", "path": "/a/b/-"}),
            serde_json::json!({"op": "remove", "path": "/a/b/0"}),
        ] {
            apply(&mut d, &op).unwrap();
        }
        assert_eq!(
            d,
            serde_json::json!({"a": {"b": [2, 1]}, "c~/d": 2, "x": 1})
        );
        assert!(apply(&mut d, &serde_json::json!({"op": "remove", "path": "/zz"})).is_err());
        assert!(
            apply(
                &mut d,
                &serde_json::json!({"op": "add", "path": "/a/b/7", "value": 0})
            )
            .is_err()
        );
        assert_eq!(top_key("/a~1b/c").as_deref(), Some("a/b"));
        assert_eq!(top_key(""), None);
    }
}
