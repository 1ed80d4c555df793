//! OpenTelemetry traces (GenAI semantic conventions, OpenInference, Vercel AI SDK) to v1.
//!
//! Files: OTLP JSON (one `ExportTraceServiceRequest` or `ExportLogsServiceRequest` document,
//! or one per line as the Collector's file exporter writes them; log records join the
//! session of their trace, or without a trace id the one whose spans name the same
//! `gen_ai.conversation.id`, see `logs.rs`), the Python SDK's `to_json` spans (one after
//! another as `ConsoleSpanExporter` prints them, or in a list, or under `"spans"`), the JS
//! SDK's span dumps, and bare attribute maps. The live receiver
//! ([`crate::trace::otlp_http`]) feeds protobuf and JSON request bodies through the same
//! decoding and mapping.
//!
//! Each trace is a session, named `SERVICE TRACEID` (the last 16 hex digits of the trace
//! id; the whole id when two traces of a file share them). Spans are mapped in the order
//! they ended, children before parents, as exporters send them (`map.rs` has the table).
//! Pitfalls handled: children before parents and missing parents (orphans are kept, and
//! said once per session), traces spread over several requests or lines, ids in hex, `0x`
//! hex, base64 or 128-bit decimals, times as nanosecond strings or integers, RFC 3339 or
//! hrtime pairs, and the three GenAI message encodings (`messages.rs`).

pub(crate) mod json;
mod json_value;
pub(crate) mod logs;
pub(crate) mod map;
mod messages;
pub(crate) mod proto;
pub(crate) mod span;
mod stream;

pub(crate) use stream::import_stream;

use std::collections::HashMap;
use std::sync::Arc;

use super::{Format, ImportError, ImportNote, Imported};
use map::{Class, Out, SessionInfo, SessionMap, classify};
use span::{Span, trace_hex};

/// Whether the start of a file looks like OpenTelemetry spans: an export request
/// (`"resourceSpans"`), SDK spans (`"context"`/`"spanContext"` with trace and span ids), or
/// an attribute map of the GenAI, OpenInference or Vercel conventions. A v1 trace has none
/// of these keys at the top of its first object.
pub fn detect(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let Some(&first) = head.iter().find(|b| !b.is_ascii_whitespace()) else {
        return false;
    };
    if first != b'{' && first != b'[' {
        return false;
    }
    let has_key = |k: &str| {
        let pat = format!("\"{k}\"");
        memchr::memmem::find_iter(head, pat.as_bytes()).any(|i| {
            head[i + pat.len()..]
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|&b| b == b':')
        })
    };
    if has_key("resourceSpans")
        || has_key("resource_spans")
        || has_key("resourceLogs")
        || has_key("resource_logs")
        || has_key("spanContext")
    {
        return true;
    }
    let ids =
        (has_key("trace_id") || has_key("traceId")) && (has_key("span_id") || has_key("spanId"));
    if ids && !has_key("seq") {
        return true;
    }
    // An attribute map: telemetry keys and no v1 `kind` string at the top.
    let telemetry = [
        "gen_ai.operation.name",
        "gen_ai.request.model",
        "gen_ai.input.messages",
        "gen_ai.prompt",
        "gen_ai.tool.name",
        "openinference.span.kind",
        "llm.model_name",
    ]
    .iter()
    .any(|k| has_key(k));
    telemetry && !has_key("kind")
}

/// Imports a whole file (see the module docs). `name` names the session of spans that
/// carry no trace id.
pub fn import(bytes: &[u8], name: &str) -> Result<Imported, ImportError> {
    import_with(bytes, name, Par::of_machine())
}

/// How much of an import runs in parallel. The result never depends on it: a file is split
/// only where every part reads cleanly on its own (else it is read in one piece), and traces
/// are mapped independently.
#[derive(Debug, Clone, Copy)]
struct Par {
    /// Threads to use (1: everything on the caller's thread).
    threads: usize,
    /// No part of a file is read by a thread of its own below this many bytes.
    min_chunk: usize,
    /// Traces are mapped on one thread below this many spans.
    min_spans: usize,
}

impl Par {
    /// The machine's cores (at most 8); parallel only for files of several MB.
    fn of_machine() -> Par {
        Par {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
            min_chunk: 2 << 20,
            min_spans: 4096,
        }
    }
}

fn import_with(bytes: &[u8], name: &str, par: Par) -> Result<Imported, ImportError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // Valid UTF-8 (the usual case) is checked once here rather than string by string.
    let text = std::str::from_utf8(bytes).ok();
    let read = text
        .and_then(|t| read_parallel(t, 1, par))
        .unwrap_or_else(|| read_values(bytes, text, 1));
    let Read {
        spans,
        mut notes,
        final_output,
        had_logs,
        first_error,
        values,
    } = read;
    if spans.is_empty() {
        if let Some(e) = first_error {
            return Err(e);
        }
        if values == 0 && !had_logs {
            return Err(ImportError {
                format: Some(Format::Otlp),
                location: "line 1".into(),
                message: "no spans and no JSON value".into(),
            });
        }
    }
    let logs = if had_logs {
        read_logs(bytes)
    } else {
        Vec::new()
    };
    let mut v1 = Vec::with_capacity(bytes.len() / 2);
    map_file(spans, logs, name, final_output, &mut v1, &mut notes, par);
    Ok(Imported { v1, notes })
}

/// What reading (part of) a file gave.
#[derive(Default)]
struct Read<'a> {
    spans: Vec<Span<'a>>,
    notes: Vec<ImportNote>,
    final_output: Option<&'a str>,
    had_logs: bool,
    first_error: Option<ImportError>,
    values: usize,
}

/// Reads a large file in parts on several threads, each part starting at a line that starts
/// with `{` or `[` (the file exporter writes one request per line). `None` when the file is
/// too small to split, or when a part does not read cleanly on its own (a value running
/// across a split, a broken value): reading it in one piece then gives the exact result,
/// errors and their recovery included.
fn read_parallel(text: &str, first_line: usize, par: Par) -> Option<Read<'_>> {
    let bytes = text.as_bytes();
    let parts = par.threads.min(bytes.len() / par.min_chunk.max(1)).max(1);
    if parts < 2 {
        return None;
    }
    let mut bounds = vec![0usize];
    for i in 1..parts {
        let target = bytes.len() / parts * i;
        let last = bounds.last().copied().unwrap_or(0);
        if target <= last {
            continue;
        }
        let next = memchr::memchr_iter(b'\n', &bytes[target..])
            .map(|nl| target + nl + 1)
            .find(|&at| matches!(bytes.get(at), Some(b'{' | b'[')));
        match next {
            Some(at) => bounds.push(at),
            None => break,
        }
    }
    bounds.push(bytes.len());
    bounds.dedup();
    if bounds.len() < 3 {
        return None;
    }
    // The line each part starts on.
    let mut firsts = Vec::with_capacity(bounds.len() - 1);
    let mut line = first_line;
    for w in bounds.windows(2) {
        firsts.push(line);
        line += memchr::memchr_iter(b'\n', &bytes[w[0]..w[1]]).count();
    }
    let chunks: Vec<(&str, usize)> = bounds
        .windows(2)
        .zip(firsts)
        .map(|(w, first)| (&text[w[0]..w[1]], first))
        .collect();
    let reads = in_parallel(chunks, chunks_len_weight, |(t, first)| {
        read_values(t.as_bytes(), Some(t), first)
    });
    if reads.iter().any(|r| r.first_error.is_some()) {
        return None;
    }
    let mut all = Read::default();
    for r in reads {
        all.spans.extend(r.spans);
        all.notes.extend(r.notes);
        if r.final_output.is_some() {
            all.final_output = r.final_output;
        }
        all.had_logs |= r.had_logs;
        all.values += r.values;
    }
    Some(all)
}

fn chunks_len_weight(c: &(&str, usize)) -> usize {
    c.0.len()
}

/// `f` applied to every item, on up to as many threads as there are items, each thread
/// taking a run of consecutive items of about equal `weight`; the results in item order.
fn in_parallel<T: Send, R: Send>(
    items: Vec<T>,
    weight: impl Fn(&T) -> usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    in_parallel_on(items.len(), items, weight, f)
}

/// [`in_parallel`] on at most `threads` threads.
fn in_parallel_on<T: Send, R: Send>(
    threads: usize,
    items: Vec<T>,
    weight: impl Fn(&T) -> usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.min(items.len()).max(1);
    if threads == 1 {
        return items.into_iter().map(f).collect();
    }
    let total: usize = items.iter().map(&weight).sum::<usize>().max(1);
    let mut runs: Vec<Vec<T>> = (0..threads).map(|_| Vec::new()).collect();
    let mut acc = 0usize;
    for it in items {
        let w = weight(&it);
        // The run this item's midpoint falls in.
        let k = ((acc + w / 2) * threads / total).min(threads - 1);
        acc += w;
        runs[k].push(it);
    }
    let f = &f;
    std::thread::scope(|scope| {
        let mut runs = runs.into_iter();
        let first = runs.next().unwrap_or_default();
        // A run whose thread cannot be started (out of threads) is done here instead.
        let handles: Vec<Result<_, Vec<T>>> = runs
            .map(|run| {
                let shared = std::sync::Arc::new(std::sync::Mutex::new(Some(run)));
                let theirs = shared.clone();
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || {
                        let run = theirs.lock().ok().and_then(|mut r| r.take());
                        run.unwrap_or_default()
                            .into_iter()
                            .map(f)
                            .collect::<Vec<R>>()
                    })
                    .map_err(|_| {
                        shared
                            .lock()
                            .ok()
                            .and_then(|mut r| r.take())
                            .unwrap_or_default()
                    })
            })
            .collect();
        let mut out: Vec<R> = first.into_iter().map(f).collect();
        for h in handles {
            match h {
                Ok(h) => match h.join() {
                    Ok(part) => out.extend(part),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                Err(run) => out.extend(run.into_iter().map(f)),
            }
        }
        out
    })
}

/// Reads the values of `bytes` (`text` when it is valid UTF-8), the first on line
/// `first_line`; on a broken one, resumes at the next line that starts (in column 1) with
/// `{` or `[`: the next request of a file-exporter file.
fn read_values<'a>(bytes: &'a [u8], text: Option<&'a str>, first_line: usize) -> Read<'a> {
    let mut r = Read::default();
    let mut pos = 0usize;
    let mut line = first_line;
    'outer: while pos < bytes.len() {
        let rest = &bytes[pos..];
        // `pos` is 0 or just after a newline: a character boundary.
        let mut stream = match text.and_then(|t| t.get(pos..)) {
            Some(t) => Values::Str(serde_json::Deserializer::from_str(t).into_iter()),
            None => Values::Slice(serde_json::Deserializer::from_slice(rest).into_iter()),
        };
        let mut last = 0usize;
        let mut counted_to = 0usize;
        let mut at_line = line;
        loop {
            let start = last
                + rest[last..]
                    .iter()
                    .position(|b| !b.is_ascii_whitespace())
                    .unwrap_or(rest.len() - last);
            at_line += memchr::memchr_iter(b'\n', &rest[counted_to..start]).count();
            counted_to = start;
            match stream.next() {
                None => break 'outer,
                Some(Ok(top)) => {
                    r.values += 1;
                    let end = stream.byte_offset();
                    let loc: Arc<str> = Arc::from(format!("line {at_line}"));
                    let mut d = json::Decoded::default();
                    json::decode(top, &loc, &mut d);
                    if d.unrecognised {
                        let text = std::str::from_utf8(&rest[start..end]).unwrap_or("");
                        match json::attribute_map(text, &loc) {
                            Some(sp) => d.spans.push(sp),
                            None => r.notes.push(ImportNote {
                                location: loc.to_string(),
                                message: "a JSON value that is neither an OTLP request nor a \
                                          span; skipped"
                                    .into(),
                            }),
                        }
                    }
                    r.notes.extend(d.problems.into_iter().map(|m| ImportNote {
                        location: loc.to_string(),
                        message: m,
                    }));
                    r.had_logs |= d.had_logs;
                    if d.final_output.is_some() {
                        r.final_output = d.final_output;
                    }
                    r.spans.extend(d.spans);
                    last = end;
                }
                Some(Err(e)) => {
                    let err_line = line + e.line().saturating_sub(1);
                    // serde_json puts an error found at a newline at column 0 of the next
                    // line; the user's line is the one that ended.
                    let location = if e.column() == 0 && err_line > 1 {
                        format!("line {}, at its end", err_line - 1)
                    } else {
                        format!("line {err_line}, column {}", e.column())
                    };
                    let err = ImportError {
                        format: Some(Format::Otlp),
                        location,
                        message: e.to_string().split(" at line").next().unwrap_or("").into(),
                    };
                    r.notes.push(ImportNote {
                        location: err.location.clone(),
                        message: format!("{}; skipped to the next request", err.message),
                    });
                    r.first_error.get_or_insert(err);
                    // The next line after the broken value's start that starts (in column 1)
                    // with `{` or `[`: the next request of a file-exporter file.
                    let from = pos + start;
                    let mut l = at_line;
                    let mut next = None;
                    for nl in memchr::memchr_iter(b'\n', &bytes[from..]) {
                        l += 1;
                        let at = from + nl + 1;
                        if matches!(bytes.get(at), Some(b'{' | b'[')) {
                            next = Some((at, l));
                            break;
                        }
                    }
                    match next {
                        Some((at, l)) => {
                            pos = at;
                            line = l;
                            continue 'outer;
                        }
                        None => break 'outer,
                    }
                }
            }
        }
    }
    r
}

/// A request of which only the log records are wanted.
#[derive(serde::Deserialize)]
struct LogsOnly {
    #[serde(default, rename = "resourceLogs", alias = "resource_logs")]
    resource_logs: Option<serde_json::Value>,
}

/// The log records of a file's `resourceLogs` requests (one per line as the Collector's file
/// exporter writes them, or one document). A broken value is skipped to the next line that
/// starts with `{`, as spans are (the span reading has said so already).
fn read_logs(bytes: &[u8]) -> Vec<logs::LogRec> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        // Only `resourceLogs` is built; the spans of the same requests are skipped unbuilt.
        let mut stream =
            serde_json::Deserializer::from_slice(&bytes[pos..]).into_iter::<LogsOnly>();
        let broken_at = loop {
            match stream.next() {
                None => return out,
                Some(Ok(LogsOnly {
                    resource_logs: Some(rl),
                })) => {
                    let doc = serde_json::json!({ "resourceLogs": rl });
                    out.extend(logs::from_json(&doc).into_iter().flatten());
                }
                Some(Ok(_)) => {}
                Some(Err(_)) => break pos + stream.byte_offset(),
            }
        };
        let next = memchr::memchr_iter(b'\n', &bytes[broken_at..])
            .map(|nl| broken_at + nl + 1)
            .find(|&at| matches!(bytes.get(at), Some(b'{' | b'[')));
        match next {
            Some(at) => pos = at,
            None => break,
        }
    }
    out
}

/// The values of a file, read from validated UTF-8 or, when the file is not, from bytes.
enum Values<'a> {
    Str(serde_json::StreamDeserializer<'a, serde_json::de::StrRead<'a>, json::Top<'a>>),
    Slice(serde_json::StreamDeserializer<'a, serde_json::de::SliceRead<'a>, json::Top<'a>>),
}

impl<'a> Values<'a> {
    fn next(&mut self) -> Option<serde_json::Result<json::Top<'a>>> {
        match self {
            Values::Str(s) => s.next(),
            Values::Slice(s) => s.next(),
        }
    }

    fn byte_offset(&self) -> usize {
        match self {
            Values::Str(s) => s.byte_offset(),
            Values::Slice(s) => s.byte_offset(),
        }
    }
}

/// A session's name: `SERVICE TRACEID16` (the service `otel` when unknown), with the last 16
/// hex digits of the trace id (W3C's random part; the whole id when `full`).
pub(crate) fn session_name(service: Option<&str>, trace: u128, full: bool) -> String {
    let service = service
        .filter(|s| !s.is_empty() && !s.starts_with("unknown_service"))
        .unwrap_or("otel");
    // A name is shown in headers and lists and written on every line: a service name of
    // megabytes is cut (at a character boundary).
    let mut end = service.len().min(200);
    while !service.is_char_boundary(end) {
        end -= 1;
    }
    let service = &service[..end];
    let hex = trace_hex(trace);
    if full {
        format!("{service} {hex}")
    } else {
        format!("{service} {}", &hex[16..])
    }
}

/// One trace of a file, mapped.
struct Mapped {
    sm: SessionMap,
    out: Vec<Out>,
    last_end: Option<i128>,
    orphans: Option<ImportNote>,
    root_agent: bool,
}

/// Maps every span of a file: grouped by trace, each trace in the order its spans ended,
/// then each session's events sorted by time (the session event first) with `seq` 1, 2, ...
fn map_file(
    spans: Vec<Span<'_>>,
    logs: Vec<logs::LogRec>,
    name: &str,
    final_output: Option<&str>,
    v1: &mut Vec<u8>,
    notes: &mut Vec<ImportNote>,
    par: Par,
) -> usize {
    let (mut order, mut groups) = group_spans(spans);
    adopt_creations(&mut order, &mut groups);
    let by_trace = group_logs(logs, &groups, &mut order);
    let short = short_names(&order, &groups, &by_trace);
    let mapped = map_sessions(order, groups, by_trace, name, &short, final_output, par);
    v1.reserve(mapped.lines.iter().map(Vec::len).sum());
    for lines in &mapped.lines {
        v1.extend_from_slice(lines);
    }
    notes.extend(mapped.orphans);
    if let Some(n) = other_events_note(mapped.other_events) {
        notes.push(n);
    }
    mapped.events
}

/// Spans by trace, and the traces in the order their first span appears.
type Groups<'a> = (Vec<Option<u128>>, HashMap<Option<u128>, Vec<Span<'a>>>);

/// Groups spans by trace (see [`Groups`]).
fn group_spans(spans: Vec<Span<'_>>) -> Groups<'_> {
    let mut order: Vec<Option<u128>> = Vec::new();
    let mut groups: HashMap<Option<u128>, Vec<Span<'_>>> = HashMap::new();
    for sp in spans {
        let g = groups.entry(sp.trace).or_insert_with(|| {
            order.push(sp.trace);
            Vec::new()
        });
        g.push(sp);
    }
    (order, groups)
}

/// How many traces share each short session name (see [`session_name`]).
fn short_names(
    order: &[Option<u128>],
    groups: &HashMap<Option<u128>, Vec<Span<'_>>>,
    by_trace: &HashMap<Option<u128>, Vec<logs::LogRec>>,
) -> HashMap<String, usize> {
    let mut short: HashMap<String, usize> = HashMap::new();
    for t in order.iter().flatten() {
        let service = groups
            .get(&Some(*t))
            .and_then(|g| g.iter().find_map(|s| s.resource.service.clone()))
            .or_else(|| by_trace.get(&Some(*t)).and_then(|l| log_service(l)));
        *short
            .entry(session_name(service.as_deref(), *t, false))
            .or_default() += 1;
    }
    short
}

/// The note for span events left out, when there were some.
fn other_events_note(other_events: u64) -> Option<ImportNote> {
    (other_events > 0).then(|| ImportNote {
        location: "spans".into(),
        message: format!(
            "{other_events} span event(s) of names this importer does not map were left out"
        ),
    })
}

/// Sessions mapped to v1 lines (see [`map_sessions`]).
struct Written {
    /// Each session's lines, in session order.
    lines: Vec<Vec<u8>>,
    /// Events written.
    events: usize,
    /// The notes on spans whose parent is missing, in session order.
    orphans: Vec<ImportNote>,
    /// Span events of names not mapped.
    other_events: u64,
}

/// Maps the sessions `order` names, in that order; `short` counts the short session names
/// of the whole file.
fn map_sessions(
    order: Vec<Option<u128>>,
    mut groups: HashMap<Option<u128>, Vec<Span<'_>>>,
    mut by_trace: HashMap<Option<u128>, Vec<logs::LogRec>>,
    name: &str,
    short: &HashMap<String, usize>,
    final_output: Option<&str>,
    par: Par,
) -> Written {
    let spans: usize = groups.values().map(Vec::len).sum();
    let threads = if spans >= par.min_spans {
        par.threads
    } else {
        1
    };
    let sessions: Vec<Session<'_>> = order
        .iter()
        .map(|k| {
            (
                *k,
                groups.remove(k).unwrap_or_default(),
                by_trace.remove(k).unwrap_or_default(),
            )
        })
        .collect();
    let mut mapped = in_parallel_on(
        threads,
        sessions,
        |s| s.1.len() + s.2.len(),
        |(key, group, logs)| map_trace(key, group, &logs, name, short),
    );
    let orphans = mapped.iter_mut().filter_map(|m| m.orphans.take()).collect();
    if let Some(fo) = final_output {
        let idx = mapped.iter().position(|m| m.root_agent).unwrap_or(0);
        if let Some(m) = mapped.get_mut(idx)
            && !m.sm.root_answered
        {
            let text = match serde_json::from_str::<serde_json::Value>(fo) {
                Ok(serde_json::Value::String(s)) => s,
                _ => fo.to_string(),
            };
            m.sm.answer_text(&text, m.last_end, &mut m.out);
        }
    }
    let other_events: u64 = mapped.iter().map(|m| m.sm.other_events).sum();
    let written = in_parallel_on(
        threads,
        mapped,
        |m| m.out.len(),
        |m| {
            let mut out = m.out;
            // The session event (ord 1) first, then by time; untimed events keep their order.
            out.sort_by_key(|o| (o.ord != 1, o.ts.unwrap_or(i128::MIN), o.ord));
            let mut lines = Vec::with_capacity(out.iter().map(|o| o.body.len() + 16).sum());
            for (i, o) in out.iter().enumerate() {
                lines.extend_from_slice(b"{\"seq\":");
                json_value::push_u64(&mut lines, i as u64 + 1);
                lines.push(b',');
                lines.extend_from_slice(&o.body);
                lines.extend_from_slice(b"}\n");
            }
            (lines, out.len())
        },
    );
    let events = written.iter().map(|w| w.1).sum();
    Written {
        lines: written.into_iter().map(|w| w.0).collect(),
        events,
        orphans,
        other_events,
    }
}

/// Moves each trace that only creates agents (`create_agent` spans) into the first trace
/// whose runs invoke one of those agents: the creation is part of that session, not one of
/// its own. A creation no run uses stays a session.
fn adopt_creations(
    order: &mut Vec<Option<u128>>,
    groups: &mut HashMap<Option<u128>, Vec<Span<'_>>>,
) {
    use map::create_agent::{creations_only, invoked};
    let mut user: HashMap<String, Option<u128>> = HashMap::new();
    for k in order.iter() {
        if let Some(g) = groups.get(k)
            && creations_only(g.iter()).is_none()
        {
            for agent in invoked(g.iter()) {
                user.entry(agent).or_insert(*k);
            }
        }
    }
    if user.is_empty() {
        return;
    }
    for k in order.clone() {
        let to = groups
            .get(&k)
            .and_then(|g| creations_only(g.iter()))
            .and_then(|agents| agents.iter().find_map(|a| user.get(a).copied()));
        if let Some(to) = to
            && let Some(moved) = groups.remove(&k)
        {
            groups.entry(to).or_default().extend(moved);
            order.retain(|o| *o != k);
        }
    }
}

/// One session of a file: its trace id, spans and log records.
type Session<'a> = (Option<u128>, Vec<Span<'a>>, Vec<logs::LogRec>);

/// Log records by the session they join: their trace's; without a trace id, the trace of the
/// model call whose `gen_ai.response.id` a score names, else the trace whose
/// spans name the same `gen_ai.conversation.id` (or `session.id`), else the file's session
/// of untraced spans. Traces only logs speak of are added to `order`.
fn group_logs(
    logs: Vec<logs::LogRec>,
    groups: &HashMap<Option<u128>, Vec<Span<'_>>>,
    order: &mut Vec<Option<u128>>,
) -> HashMap<Option<u128>, Vec<logs::LogRec>> {
    let mut by_conv: HashMap<&str, u128> = HashMap::new();
    // A score that names only a model response joins the trace of the call that gave it.
    let mut by_response: HashMap<&str, u128> = HashMap::new();
    if logs.iter().any(|r| r.trace.is_none()) {
        for (k, g) in groups {
            let Some(t) = k else { continue };
            for sp in g {
                if let Some(r) = sp.str_attr("gen_ai.response.id") {
                    by_response.entry(r).or_insert(*t);
                }
                if let Some(c) = sp
                    .str_attr("gen_ai.conversation.id")
                    .or_else(|| sp.str_attr("session.id"))
                {
                    by_conv.entry(c).or_insert(*t);
                }
            }
        }
    }
    let mut out: HashMap<Option<u128>, Vec<logs::LogRec>> = HashMap::new();
    for r in logs {
        let key = r.trace.or_else(|| {
            (r.event == "gen_ai.evaluation.result")
                .then(|| r.str_attr("gen_ai.response.id"))
                .flatten()
                .and_then(|id| by_response.get(id).copied())
        });
        let key = key.or_else(|| {
            r.str_attr("gen_ai.conversation.id")
                .or_else(|| r.str_attr("session.id"))
                .and_then(|c| by_conv.get(c).copied())
        });
        if !groups.contains_key(&key) && !out.contains_key(&key) {
            order.push(key);
        }
        out.entry(key).or_default().push(r);
    }
    out
}

/// The service that sent a session's log records.
fn log_service(logs: &[logs::LogRec]) -> Option<String> {
    logs.iter().find_map(|r| r.resource.service.clone())
}

/// Maps one trace's spans and log records (see [`map_file`]).
fn map_trace(
    key: Option<u128>,
    mut group: Vec<Span<'_>>,
    logs: &[logs::LogRec],
    name: &str,
    short: &HashMap<String, usize>,
) -> Mapped {
    group.sort_by_key(|s| s.start.unwrap_or(i128::MAX));
    let mut info = SessionInfo::of(group.iter());
    if info.service.is_none() {
        info.service = log_service(logs);
    }
    if info.conversation.is_none() {
        info.conversation = logs::conversation(logs);
    }
    let sname = match key {
        Some(t) => {
            let n = session_name(info.service.as_deref(), t, false);
            if short.get(&n).copied().unwrap_or(0) > 1 {
                session_name(info.service.as_deref(), t, true)
            } else {
                n
            }
        }
        None => name.to_string(),
    };
    let ids: std::collections::HashSet<u64> = group.iter().filter_map(|s| s.id).collect();
    let orphans = group
        .iter()
        .filter(|s| s.parent.is_some_and(|p| !ids.contains(&p)))
        .count();
    let orphans = (orphans > 0).then(|| ImportNote {
        location: format!("session {sname}"),
        message: format!(
            "{orphans} span(s) name a parent that is not in the file (an incomplete trace); \
             they are kept"
        ),
    });
    let root_agent = group
        .iter()
        .any(|s| s.parent.is_none() && classify(s) == Class::Agent);
    // Children before parents: by end time, a later start first on ties.
    group.sort_by(|a, b| {
        let ka = (a.end.or(a.start), std::cmp::Reverse(a.start));
        let kb = (b.end.or(b.start), std::cmp::Reverse(b.start));
        ka.cmp(&kb)
    });
    let mut sm = SessionMap::new(sname, key);
    let mut out = Vec::with_capacity(group.len() * 2);
    sm.start(&info, &mut out);
    if logs.iter().any(logs::LogRec::carries_content) {
        sm.content_in_logs();
    }
    // A model call's details record first: held, it is read with its span (`details.rs`).
    let (details, other): (Vec<_>, Vec<_>) = logs.iter().partition(|r| r.event == map::DETAILS);
    for r in details {
        sm.log_record(r, &mut out);
    }
    for sp in &group {
        sm.span(sp, &mut out);
    }
    for r in other {
        sm.log_record(r, &mut out);
    }
    sm.flush_details(&mut out);
    let last_end = group.iter().filter_map(|s| s.end.or(s.start)).max();
    Mapped {
        sm,
        out,
        last_end,
        orphans,
        root_agent,
    }
}

/// A live event line: the members in braces and a newline (no `seq`: the line order is the
/// order).
pub(crate) fn line(o: &Out, buf: &mut Vec<u8>) {
    buf.push(b'{');
    buf.extend_from_slice(&o.body);
    buf.extend_from_slice(b"}\n");
}

/// Decodes one OTLP JSON request body (the receiver's `application/json`): exactly one
/// export request.
pub(crate) fn decode_json_request<'a>(
    body: &'a [u8],
    loc: &Arc<str>,
) -> Result<(Vec<Span<'a>>, Vec<String>), String> {
    let top: json::Top = match std::str::from_utf8(body) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(body),
    }
    .map_err(|e| format!("JSON: {e}"))?;
    let mut d = json::Decoded::default();
    json::decode(top, loc, &mut d);
    if d.unrecognised {
        return Err("JSON: not an ExportTraceServiceRequest (no resourceSpans)".into());
    }
    Ok((d.spans, d.problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/otel")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// A request line per trace piece: `traces` traces, each spread over three lines far
    /// apart (so every split of the file cuts through traces), one line broken when asked.
    fn many_lines(traces: u32, broken: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in 0..3u32 {
            for t in 0..traces {
                let (name, op, parent) = match piece {
                    0 => ("chat m", "chat", "0000000000000001"),
                    1 => ("execute_tool f", "execute_tool", "0000000000000001"),
                    _ => ("invoke_agent a", "invoke_agent", ""),
                };
                let line = format!(
                    r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"s"}}}}]}},"scopeSpans":[{{"spans":[{{"traceId":"{t:032x}","spanId":"{:016x}","parentSpanId":"{parent}","name":"{name}","startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"{op}"}}}},{{"key":"gen_ai.output.messages","value":{{"stringValue":"[{{\"role\":\"assistant\",\"parts\":[{{\"type\":\"text\",\"content\":\"t{t} p{piece}\"}}]}}]"}}}}]}}]}}]}}]}}"#,
                    if piece == 2 { 1 } else { 2 + piece },
                    1_700_000_000_000_000_000u64 + u64::from(t) * 10 + u64::from(2 - piece),
                    1_700_000_000_000_000_100u64 + u64::from(t) * 10 + u64::from(piece),
                );
                out.extend_from_slice(line.as_bytes());
                if broken && t == traces / 2 && piece == 1 {
                    out.truncate(out.len() - 7);
                }
                out.push(b'\n');
            }
        }
        out
    }

    /// Splitting the reading and the mapping over threads changes nothing: same lines, same
    /// notes, same errors, whether the file splits cleanly, or a split falls inside a value
    /// (a pretty-printed list) or next to a broken line (both read in one piece).
    #[test]
    fn threads_change_nothing() {
        let one = Par {
            threads: 1,
            min_chunk: 1,
            min_spans: 1,
        };
        let pretty = {
            let lines = many_lines(3, false);
            let first = lines.split(|&b| b == b'\n').next().unwrap_or_default();
            let v: serde_json::Value = serde_json::from_slice(first).expect("a request");
            let list = format!("[\n{}\n]", v);
            let mut text = serde_json::to_string_pretty(&serde_json::json!([v, v]))
                .unwrap_or_default()
                .into_bytes();
            text.extend_from_slice(list.as_bytes());
            text
        };
        let inputs = [
            many_lines(40, false),
            many_lines(40, true),
            fixture("collector-file-exporter.jsonl").repeat(5),
            fixture("broken-line.jsonl").repeat(3),
            pretty,
        ];
        for (i, input) in inputs.iter().enumerate() {
            let want = import_with(input, "t", one);
            for threads in [2, 3, 7] {
                let par = Par {
                    threads,
                    min_chunk: 1,
                    min_spans: 1,
                };
                let got = import_with(input, "t", par);
                match (&want, &got) {
                    (Ok(w), Ok(g)) => {
                        assert!(w.v1 == g.v1, "input {i}, {threads} threads: other lines");
                        assert_eq!(w.notes, g.notes, "input {i}, {threads} threads");
                    }
                    (Err(w), Err(g)) => assert_eq!(w, g, "input {i}"),
                    _ => panic!("input {i}, {threads} threads: {want:?} vs {got:?}"),
                }
            }
        }
        // The clean many-line file is really read in parts (else this test proves little).
        let text = std::str::from_utf8(&inputs[0]).expect("UTF-8");
        let par = Par {
            threads: 3,
            min_chunk: 1,
            min_spans: 1,
        };
        assert!(read_parallel(text, 1, par).is_some());
        let broken = std::str::from_utf8(&inputs[1]).expect("UTF-8");
        assert!(read_parallel(broken, 1, par).is_none());
        let w = import_with(&inputs[0], "t", one).expect("imports");
        // Per trace: session, intention, answer, llm_call, thought, tool_call.
        assert_eq!(w.v1.iter().filter(|&&b| b == b'\n').count(), 40 * 6);
    }

    #[test]
    fn detects_otel_shapes_and_not_v1() {
        assert!(detect(br#"{"resourceSpans":[]}"#));
        assert!(detect(b"  {\n \"resourceSpans\" : [{}]}"));
        assert!(detect(br#"[{"name":"x","spanContext":{"traceId":"a"}}]"#));
        assert!(detect(
            br#"{"name":"x","context":{"trace_id":"0x1","span_id":"0x2"}}"#
        ));
        assert!(detect(br#"{"gen_ai.operation.name":"chat"}"#));
        assert!(!detect(br#"{"kind":"session","seq":1}"#));
        assert!(!detect(
            br#"{"kind":"thought","seq":2,"text":"the key \"resourceSpans\" is OTLP's"}"#
        ));
        assert!(!detect(b""));
        assert!(!detect(b"resourceSpans"));
    }

    /// An OTLP JSON span (ids in hex, times in ns) with string and integer attributes.
    fn otlp_span(
        trace: &str,
        id: &str,
        parent: &str,
        name: &str,
        t: (u64, u64),
        attrs: &[(&str, serde_json::Value)],
    ) -> serde_json::Value {
        serde_json::json!({
            "traceId": trace, "spanId": id, "parentSpanId": parent, "name": name,
            "startTimeUnixNano": t.0.to_string(), "endTimeUnixNano": t.1.to_string(),
            "attributes": otlp_attrs(attrs),
        })
    }

    fn otlp_attrs(attrs: &[(&str, serde_json::Value)]) -> serde_json::Value {
        attrs
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::Number(n) => {
                    serde_json::json!({"key": k, "value": {"intValue": n.to_string()}})
                }
                other => serde_json::json!({"key": k, "value": {"stringValue": other
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| other.to_string())}}),
            })
            .collect()
    }

    /// The v1 events a file of these spans (one request) and log records imports as.
    fn import_spans(
        spans: Vec<serde_json::Value>,
        logs: Vec<serde_json::Value>,
    ) -> Vec<serde_json::Value> {
        let mut text = serde_json::json!({"resourceSpans": [{"resource": {"attributes": []},
            "scopeSpans": [{"spans": spans}]}]})
        .to_string();
        if !logs.is_empty() {
            text.push('\n');
            text.push_str(
                &serde_json::json!({"resourceLogs": [{"resource": {"attributes": []},
                    "scopeLogs": [{"logRecords": logs}]}]})
                .to_string(),
            );
        }
        let imported = import(text.as_bytes(), "t.jsonl").expect("imports");
        String::from_utf8_lossy(&imported.v1)
            .lines()
            .map(|l| serde_json::from_str(l).expect("v1"))
            .collect()
    }

    const T1: &str = "0102030405060708090a0b0c0d0e0f10";
    const T2: &str = "1112131415161718191a1b1c1d1e1f20";

    fn user_then(history: &[(&str, &str)]) -> serde_json::Value {
        let msgs: Vec<serde_json::Value> = history
            .iter()
            .map(|(role, text)| {
                serde_json::json!({"role": role, "parts": [{"type": "text", "content": text}]})
            })
            .collect();
        serde_json::Value::String(serde_json::Value::Array(msgs).to_string())
    }

    #[test]
    fn a_later_turn_is_asked_its_own_question_not_the_replayed_first() {
        let input = user_then(&[
            ("user", "first?"),
            ("assistant", "one."),
            ("user", "second?"),
        ]);
        let evs = import_spans(
            vec![
                otlp_span(
                    T1,
                    "00000000000000a1",
                    "",
                    "invoke_agent a",
                    (1, 10),
                    &[("gen_ai.operation.name", "invoke_agent".into())],
                ),
                otlp_span(
                    T1,
                    "00000000000000a2",
                    "00000000000000a1",
                    "chat m",
                    (2, 3),
                    &[
                        ("gen_ai.operation.name", "chat".into()),
                        ("gen_ai.input.messages", input),
                    ],
                ),
            ],
            vec![],
        );
        let goals: Vec<&serde_json::Value> = evs
            .iter()
            .filter(|e| e["kind"] == "intention")
            .map(|e| &e["goal"])
            .collect();
        assert_eq!(goals, ["second?"], "{evs:#?}");
    }

    #[test]
    fn pydantic_ai_format_2_and_openinference_tool_arguments_and_run_totals() {
        let evs = import_spans(
            vec![
                otlp_span(
                    T1,
                    "00000000000000b1",
                    "",
                    "agent run",
                    (1, 10),
                    &[
                        ("gen_ai.operation.name", "invoke_agent".into()),
                        ("gen_ai.aggregated_usage.input_tokens", 7.into()),
                        ("final_result", r#"{"city":"Oslo"}"#.into()),
                    ],
                ),
                otlp_span(
                    T1,
                    "00000000000000b2",
                    "00000000000000b1",
                    "running tool",
                    (2, 3),
                    &[
                        ("gen_ai.operation.name", "execute_tool".into()),
                        ("gen_ai.tool.name", "look".into()),
                        ("tool_arguments", r#"{"q":1}"#.into()),
                        ("tool_response", "found".into()),
                    ],
                ),
                otlp_span(
                    T1,
                    "00000000000000b3",
                    "00000000000000b1",
                    "look2",
                    (4, 5),
                    &[
                        ("openinference.span.kind", "TOOL".into()),
                        ("tool.name", "look2".into()),
                        ("tool.parameters", r#"{"type":"object"}"#.into()),
                        ("input.value", r#"{"q":2}"#.into()),
                    ],
                ),
            ],
            vec![],
        );
        let kind = |k: &'static str| evs.iter().filter(move |e| e["kind"] == k);
        let args: Vec<&serde_json::Value> = kind("tool_call").map(|e| &e["args"]).collect();
        assert_eq!(
            args,
            [&serde_json::json!({"q": 1}), &serde_json::json!({"q": 2})]
        );
        assert_eq!(kind("tool_call").next().expect("call")["result"], "found");
        let run = kind("intention").next().expect("the run");
        assert_eq!(run["input_tokens"], 7, "{run}");
        let answer = kind("answer").next().expect("the answer");
        assert_eq!(answer["text"], r#"{"city":"Oslo"}"#);
    }

    #[test]
    fn an_agents_creation_joins_the_session_of_the_run_that_invokes_it() {
        let agent = |op: &str| -> Vec<(&'static str, serde_json::Value)> {
            vec![
                ("gen_ai.operation.name", op.to_string().into()),
                ("gen_ai.agent.id", "asst-1".into()),
                ("gen_ai.request.model", "m".into()),
            ]
        };
        let evs = import_spans(
            vec![
                otlp_span(
                    T1,
                    "00000000000000c1",
                    "",
                    "create_agent a",
                    (1, 2),
                    &agent("create_agent"),
                ),
                otlp_span(
                    T2,
                    "00000000000000c2",
                    "",
                    "invoke_agent a",
                    (3, 4),
                    &agent("invoke_agent"),
                ),
            ],
            vec![],
        );
        let sessions: std::collections::BTreeSet<&str> =
            evs.iter().filter_map(|e| e["session"].as_str()).collect();
        assert_eq!(sessions.len(), 1, "{evs:#?}");
        let created: Vec<&serde_json::Value> = evs
            .iter()
            .filter(|e| e["operation"] == "create_agent")
            .collect();
        assert_eq!(created.len(), 1, "{evs:#?}");
        assert_eq!(created[0]["kind"], "span");
        assert_eq!(created[0]["x_trace"], T1);
        assert!(!evs.iter().any(|e| e["kind"] == "llm_call"), "{evs:#?}");
        // Alone, it stays a session: nothing is lost.
        let alone = import_spans(
            vec![otlp_span(
                T1,
                "00000000000000c1",
                "",
                "create_agent a",
                (1, 2),
                &agent("create_agent"),
            )],
            vec![],
        );
        assert!(
            alone.iter().any(|e| e["operation"] == "create_agent"),
            "{alone:#?}"
        );
    }

    #[test]
    fn a_model_calls_details_record_is_read_with_its_span_once() {
        let out = user_then(&[("assistant", "Blue.")]);
        let question = user_then(&[("user", "Sky?")]);
        let record = serde_json::json!({
            "timeUnixNano": "3", "traceId": T1, "spanId": "00000000000000d2",
            "eventName": "gen_ai.client.inference.operation.details",
            "attributes": otlp_attrs(&[
                ("gen_ai.operation.name", "chat".into()),
                ("gen_ai.usage.input_tokens", 12.into()),
                ("gen_ai.input.messages", question),
                ("gen_ai.output.messages", out),
            ]),
        });
        let evs = import_spans(
            vec![
                otlp_span(
                    T1,
                    "00000000000000d1",
                    "",
                    "invoke_agent a",
                    (1, 10),
                    &[("gen_ai.operation.name", "invoke_agent".into())],
                ),
                otlp_span(
                    T1,
                    "00000000000000d2",
                    "00000000000000d1",
                    "chat m",
                    (2, 4),
                    &[
                        ("gen_ai.operation.name", "chat".into()),
                        ("gen_ai.usage.input_tokens", 12.into()),
                    ],
                ),
            ],
            vec![record],
        );
        let calls: Vec<&serde_json::Value> =
            evs.iter().filter(|e| e["kind"] == "llm_call").collect();
        assert_eq!(calls.len(), 1, "{evs:#?}");
        assert_eq!(calls[0]["id"], "00000000000000d2");
        assert_eq!(calls[0]["output"], "Blue.");
        let run = evs.iter().find(|e| e["kind"] == "intention").expect("run");
        assert_eq!(run["goal"], "Sky?");
    }
}
