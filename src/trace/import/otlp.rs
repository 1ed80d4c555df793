//! OpenTelemetry traces (GenAI semantic conventions, OpenInference, Vercel AI SDK) to v1.
//!
//! Files: OTLP JSON (one `ExportTraceServiceRequest` document, or one per line as the
//! Collector's file exporter writes them), the Python SDK's `to_json` spans (one after
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

mod json;
pub(crate) mod map;
mod messages;
pub(crate) mod proto;
pub(crate) mod span;

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
    if has_key("resourceSpans") || has_key("resource_spans") || has_key("spanContext") {
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
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut notes = Vec::new();
    let mut spans: Vec<Span<'_>> = Vec::new();
    let mut final_output = None;
    let mut had_logs = false;
    let mut first_error: Option<ImportError> = None;
    let mut pos = 0usize;
    let mut line = 1usize;
    let mut values = 0usize;
    // Reads values from `pos`; on a broken one, resumes at the next line that starts (in
    // column 1) with `{` or `[`: the next request of a file-exporter file.
    'outer: while pos < bytes.len() {
        let rest = &bytes[pos..];
        let mut stream = serde_json::Deserializer::from_slice(rest).into_iter::<json::Top>();
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
                    values += 1;
                    let end = stream.byte_offset();
                    let loc: Arc<str> = Arc::from(format!("line {at_line}"));
                    let mut d = json::Decoded::default();
                    json::decode(top, &loc, &mut d);
                    if d.unrecognised {
                        let text = std::str::from_utf8(&rest[start..end]).unwrap_or("");
                        match json::attribute_map(text, &loc) {
                            Some(sp) => d.spans.push(sp),
                            None => notes.push(ImportNote {
                                location: loc.to_string(),
                                message: "a JSON value that is neither an OTLP request nor a \
                                          span; skipped"
                                    .into(),
                            }),
                        }
                    }
                    notes.extend(d.problems.into_iter().map(|m| ImportNote {
                        location: loc.to_string(),
                        message: m,
                    }));
                    had_logs |= d.had_logs;
                    if d.final_output.is_some() {
                        final_output = d.final_output;
                    }
                    spans.extend(d.spans);
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
                    notes.push(ImportNote {
                        location: err.location.clone(),
                        message: format!("{}; skipped to the next request", err.message),
                    });
                    first_error.get_or_insert(err);
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
    if had_logs {
        notes.push(ImportNote {
            location: "resourceLogs".into(),
            message: "OTLP log records are not imported (only spans are)".into(),
        });
    }
    let mut v1 = Vec::with_capacity(bytes.len() / 2);
    map_file(spans, name, final_output, &mut v1, &mut notes);
    Ok(Imported { v1, notes })
}

/// A session's name: `SERVICE TRACEID16` (the service `otel` when unknown), with the last 16
/// hex digits of the trace id (W3C's random part; the whole id when `full`).
pub(crate) fn session_name(service: Option<&str>, trace: u128, full: bool) -> String {
    let service = service
        .filter(|s| !s.is_empty() && !s.starts_with("unknown_service"))
        .unwrap_or("otel");
    let hex = trace_hex(trace);
    if full {
        format!("{service} {hex}")
    } else {
        format!("{service} {}", &hex[16..])
    }
}

/// Maps every span of a file: grouped by trace, each trace in the order its spans ended,
/// then each session's events sorted by time (the session event first) with `seq` 1, 2, ...
fn map_file(
    spans: Vec<Span<'_>>,
    name: &str,
    final_output: Option<&str>,
    v1: &mut Vec<u8>,
    notes: &mut Vec<ImportNote>,
) -> usize {
    // Sessions in the order their first span appears.
    let mut order: Vec<Option<u128>> = Vec::new();
    let mut groups: HashMap<Option<u128>, Vec<Span<'_>>> = HashMap::new();
    for sp in spans {
        let g = groups.entry(sp.trace).or_insert_with(|| {
            order.push(sp.trace);
            Vec::new()
        });
        g.push(sp);
    }
    let mut short: HashMap<String, usize> = HashMap::new();
    for t in order.iter().flatten() {
        let service = groups[&Some(*t)]
            .iter()
            .find_map(|s| s.resource.service.clone());
        *short
            .entry(session_name(service.as_deref(), *t, false))
            .or_default() += 1;
    }
    let mut root_session: Option<usize> = None;
    let mut outs: Vec<(SessionMap, Vec<Out>, Option<i128>)> = Vec::new();
    for key in &order {
        let Some(mut group) = groups.remove(key) else {
            continue;
        };
        group.sort_by_key(|s| s.start.unwrap_or(i128::MAX));
        let info = SessionInfo::of(group.iter());
        let sname = match key {
            Some(t) => {
                let n = session_name(info.service.as_deref(), *t, false);
                if short.get(&n).copied().unwrap_or(0) > 1 {
                    session_name(info.service.as_deref(), *t, true)
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
        if orphans > 0 {
            notes.push(ImportNote {
                location: format!("session {sname}"),
                message: format!(
                    "{orphans} span(s) name a parent that is not in the file (an incomplete \
                     trace); they are kept"
                ),
            });
        }
        let is_root_agent = group
            .iter()
            .any(|s| s.parent.is_none() && classify(s) == Class::Agent);
        if is_root_agent && root_session.is_none() {
            root_session = Some(outs.len());
        }
        // Children before parents: by end time, a later start first on ties.
        group.sort_by(|a, b| {
            let ka = (a.end.or(a.start), std::cmp::Reverse(a.start));
            let kb = (b.end.or(b.start), std::cmp::Reverse(b.start));
            ka.cmp(&kb)
        });
        let mut sm = SessionMap::new(sname, *key);
        let mut out = Vec::with_capacity(group.len() * 2);
        sm.start(&info, &mut out);
        for sp in &group {
            sm.span(sp, &mut out);
        }
        let last_end = group.iter().filter_map(|s| s.end.or(s.start)).max();
        outs.push((sm, out, last_end));
    }
    if let Some(fo) = final_output {
        let idx = root_session.unwrap_or(0);
        if let Some((sm, out, end)) = outs.get_mut(idx)
            && !sm.root_answered
        {
            let text = match serde_json::from_str::<serde_json::Value>(fo) {
                Ok(serde_json::Value::String(s)) => s,
                _ => fo.to_string(),
            };
            let end = *end;
            sm.answer_text(&text, end, out);
        }
    }
    let mut total = 0;
    let mut other_events = 0;
    for (sm, mut out, _) in outs {
        other_events += sm.other_events;
        // The session event (ord 1) first, then by time; untimed events keep their order.
        out.sort_by_key(|o| (o.ord != 1, o.ts.unwrap_or(i128::MIN), o.ord));
        for (i, o) in out.iter().enumerate() {
            v1.extend_from_slice(b"{\"seq\":");
            v1.extend_from_slice((i + 1).to_string().as_bytes());
            v1.push(b',');
            v1.extend_from_slice(&o.body);
            v1.extend_from_slice(b"}\n");
        }
        total += out.len();
    }
    if other_events > 0 {
        notes.push(ImportNote {
            location: "spans".into(),
            message: format!(
                "{other_events} span event(s) of names this importer does not map were left out"
            ),
        });
    }
    total
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
    let top: json::Top = serde_json::from_slice(body).map_err(|e| format!("JSON: {e}"))?;
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
}
