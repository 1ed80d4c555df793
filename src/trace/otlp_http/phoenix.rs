//! OpenInference (Phoenix) span annotations. Phoenix keeps annotations in its own store, and
//! its clients (`arize-phoenix-client`: `spans.add_span_annotation`, `log_span_annotations`)
//! send them over its REST API: `POST /v1/span_annotations` with `{"data": [{"span_id",
//! "name", "annotator_kind", "result": {"label", "score", "explanation"}, "metadata",
//! "identifier"}]}`. The receiver takes that route on its OTLP port, so an agent
//! instrumented for Phoenix can point its annotation client at doxascope: each annotation
//! is a `score` on the annotated span's event, in that span's trace's session.
//!
//! An annotation names a span id only: the receiver remembers the trace of the last
//! [`MAX_SPANS`] span ids it was sent. An annotation of a span it does not know is shown in
//! the session `otel (no trace id)`, its target "not in the session".

use std::collections::HashMap;
use std::net::SocketAddr;

use hyper::StatusCode;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use super::super::import::otlp::map::{Annotation, SessionInfo};
use super::super::import::otlp::{self, span::Span};
use super::{Limits, Refusal, Room, State, fit_line, gunzip, open_trace};

/// Span ids whose trace is remembered; past it the map starts over.
const MAX_SPANS: usize = 262_144;

/// What [`State`] keeps for this: the trace and service of each span id seen.
#[derive(Default)]
pub(super) struct Spans(HashMap<u64, (u128, Option<String>)>);

impl State {
    /// Remembers which trace (and service) trace `key`'s spans belong to.
    pub(super) fn remember_spans(&self, key: u128, group: &[Span<'_>]) {
        if key == 0 {
            return;
        }
        let mut m = self.span_traces.lock().unwrap_or_else(|e| e.into_inner());
        for sp in group {
            let Some(id) = sp.id else { continue };
            if m.0.len() >= MAX_SPANS && !m.0.contains_key(&id) {
                m.0.clear();
            }
            m.0.insert(id, (key, sp.resource.service.clone()));
        }
    }
}

/// Reads a request body's annotations; a refusal says which item is wrong and why.
pub(super) fn decode(bytes: &[u8], max: u64) -> Result<Vec<Annotation>, Refusal> {
    let bad = |why: String| (StatusCode::UNPROCESSABLE_ENTITY, why);
    // Every annotation is an object: their number is at most the braces', counted before
    // anything is built.
    let objects = memchr::memchr_iter(b'{', bytes).count() as u64;
    if objects > max.saturating_mul(4) {
        return Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("over {max} span annotations in one request: send smaller batches"),
        ));
    }
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| (StatusCode::BAD_REQUEST, format!("JSON: {e}")))?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("span annotations: the body has no \"data\" array".into()))?;
    if data.len() as u64 > max {
        return Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("over {max} span annotations in one request: send smaller batches"),
        ));
    }
    data.iter()
        .enumerate()
        .map(|(i, a)| one(a).map_err(|why| bad(format!("span annotation {i}: {why}"))))
        .collect()
}

fn one(a: &Value) -> Result<Annotation, String> {
    let s = |v: Option<&Value>, what: &str| -> Result<Option<String>, String> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(x)) => Ok(Some(x.clone())),
            Some(_) => Err(format!("{what} is not a string")),
        }
    };
    let span_id = s(a.get("span_id"), "span_id")?.ok_or("no span_id")?;
    let span = u64::from_str_radix(span_id.trim(), 16)
        .ok()
        .filter(|_| span_id.trim().len() == 16)
        .ok_or_else(|| format!("span_id {:?} is not 16 hex digits", cut(&span_id)))?;
    let name = s(a.get("name"), "name")?
        .filter(|n| !n.trim().is_empty())
        .ok_or("no name")?;
    let kind = s(a.get("annotator_kind"), "annotator_kind")?.ok_or("no annotator_kind")?;
    if !matches!(kind.as_str(), "HUMAN" | "LLM" | "CODE") {
        return Err(format!(
            "annotator_kind {:?} is not HUMAN, LLM or CODE",
            cut(&kind)
        ));
    }
    let result = match a.get("result") {
        None | Some(Value::Null) => None,
        Some(r @ Value::Object(_)) => Some(r),
        Some(_) => return Err("result is not an object".into()),
    };
    let field = |k: &str| result.and_then(|r| r.get(k));
    let score = match field("score") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(_) => return Err("result.score is not a number".into()),
    };
    let label = s(field("label"), "result.label")?;
    let explanation = s(field("explanation"), "result.explanation")?;
    if label.is_none() && score.is_none() && explanation.is_none() {
        return Err("no label, score or explanation in result".into());
    }
    let metadata = match a.get("metadata") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) if m.is_empty() => None,
        Some(m @ Value::Object(_)) => Some(m.to_string()),
        Some(_) => return Err("metadata is not an object".into()),
    };
    Ok(Annotation {
        span,
        name,
        annotator_kind: kind,
        label,
        score,
        explanation,
        identifier: s(a.get("identifier"), "identifier")?.filter(|i| !i.is_empty()),
        metadata,
    })
}

fn cut(s: &str) -> String {
    s.chars().take(64).collect()
}

/// Decodes and writes one `/v1/span_annotations` request: each annotation joins the session
/// of its span's trace. Returns the ids the answer gives, one per annotation.
pub(super) fn ingest(
    state: &State,
    rt: &tokio::runtime::Handle,
    body: &[u8],
    gzip: bool,
    peer: SocketAddr,
    room: &mut Room,
) -> Result<Vec<String>, Refusal> {
    let mut plain = Vec::new();
    let base = body.len();
    let mut grow = |n: usize| rt.block_on(room.grow_to(base.saturating_add(n)));
    let limits = Limits::of(state.cfg());
    let bytes: &[u8] = if gzip {
        gunzip(body, limits.decoded, &mut plain, &mut grow)?;
        &plain
    } else {
        body
    };
    let all = decode(bytes, limits.counts.spans)?;
    let ids = all
        .iter()
        .map(|a| format!("{:016x}:{}", a.span, a.name))
        .collect();
    let mut groups: Vec<(u128, Option<String>, Vec<Annotation>)> = Vec::new();
    {
        let known = state.span_traces.lock().unwrap_or_else(|e| e.into_inner());
        for a in all {
            let (key, service) = known.0.get(&a.span).cloned().unwrap_or((0, None));
            match groups.iter_mut().find(|(k, _, _)| *k == key) {
                Some((_, _, g)) => g.push(a),
                None => groups.push((key, service, vec![a])),
            }
        }
    }
    for (key, service, group) in groups {
        let trace = open_trace(state, key, service.clone(), false, peer);
        let mut t = trace.blocking_lock();
        if t.refused || t.writer.is_none() {
            return Err((
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the session of trace {key:032x} was closed by the viewer's limits"),
            ));
        }
        let mut out = Vec::with_capacity(group.len() + 1);
        let info = SessionInfo {
            service,
            ..SessionInfo::default()
        };
        t.map.start(&info, &mut out);
        for a in &group {
            t.map.annotation(a, &mut out);
        }
        let mut lines = Vec::new();
        for o in &mut out {
            fit_line(o, &t.map.name, state.cfg().max_message_bytes);
            otlp::line(o, &mut lines);
        }
        let Some(w) = t.writer.as_mut() else { continue };
        if rt.block_on(w.write_all(&lines)).is_err() {
            t.writer = None;
            t.refused = true;
            return Err((
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the session of trace {key:032x} was closed by the viewer's limits"),
            ));
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_are_read_and_bad_ones_refused_with_the_reason() {
        let ok = br#"{"data":[{"span_id":"00f067aa0ba902b7","name":"correctness",
            "annotator_kind":"LLM","result":{"label":"incorrect","score":0,"explanation":"no"},
            "metadata":{"model":"judge"},"identifier":"run-1"}]}"#;
        let a = decode(ok, 10).expect("decoded");
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].span, 0x00f067aa0ba902b7);
        assert_eq!(a[0].label.as_deref(), Some("incorrect"));
        assert_eq!(a[0].score, Some(0.0));
        assert_eq!(a[0].identifier.as_deref(), Some("run-1"));
        assert_eq!(a[0].metadata.as_deref(), Some(r#"{"model":"judge"}"#));
        for (body, status, says) in [
            (&b"not json"[..], 400, "JSON"),
            (br#"{"data":{}}"#, 422, "data"),
            (br#"{"data":[{"span_id":"xyz","name":"n","annotator_kind":"HUMAN","result":{"label":"a"}}]}"#, 422, "16 hex"),
            (br#"{"data":[{"span_id":"00f067aa0ba902b7","name":"n","annotator_kind":"ROBOT","result":{"label":"a"}}]}"#, 422, "annotator_kind"),
            (br#"{"data":[{"span_id":"00f067aa0ba902b7","name":"n","annotator_kind":"HUMAN"}]}"#, 422, "no label"),
            (br#"{"data":[{},{},{}]}"#, 413, "over 2"),
        ] {
            let (s, why) = decode(body, 2).expect_err("refused");
            assert_eq!(s.as_u16(), status, "{why}");
            assert!(why.contains(says), "{why}");
        }
    }
}
