//! OpenInference (Phoenix) span annotations. Phoenix keeps annotations in its own store, and
//! its clients (`arize-phoenix-client`: `spans.add_span_annotation`, `log_span_annotations`)
//! send them over its REST API: `POST /v1/span_annotations` with `{"data": [{"span_id",
//! "name", "annotator_kind", "result": {"label", "score", "explanation"}, "metadata",
//! "identifier"}]}`. The receiver takes that route on its OTLP port, so an agent
//! instrumented for Phoenix can point its annotation client at doxascope: each annotation
//! is a `score` on the annotated span's event, in that span's trace's session.
//!
//! An annotation names a span id only: the receiver remembers the trace of at least the last
//! [`GENERATION`] span ids it was sent ([`Spans`]). An annotation of a span it does not know
//! is shown in the session `otel (no trace id)`, its target "not in the session".

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::StatusCode;
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use super::super::import::otlp::map::{Annotation, SessionInfo};
use super::super::import::otlp::{self, span::Span};
use super::{Limits, Refusal, Room, State, fit_line, gunzip, open_trace};

/// Span ids remembered per generation: the receiver knows the trace of at least the last
/// this many span ids it was sent, and of at most twice as many.
const GENERATION: usize = 65_536;

/// What [`State`] keeps for this: the trace and service of each span id seen, in two
/// generations. When the newer one is full the older one is emptied and becomes the newer,
/// so a lookup always finds the last [`GENERATION`] span ids (a single map emptied when full
/// forgot every span at once). Each generation's map is made at its full size when first
/// used and kept when emptied: its memory is fixed from then on. A span is 16 bytes there
/// (its id and the index of its trace and service in the generation's list, one entry per
/// run of spans of the same trace and service), where a map of the span to its trace and a
/// copy of its service name took about 130 bytes and grew to 51 MB before starting over:
/// the viewer held 27 MB more after 30,000 ten-span traces than after 10,000 (issue 31).
pub(super) struct Spans {
    generations: [Generation; 2],
    /// The generation spans go to.
    newer: usize,
    /// Spans per generation ([`GENERATION`]; smaller in tests).
    size: usize,
}

/// One generation of [`Spans`].
#[derive(Default)]
struct Generation {
    /// Each span id's entry in `traces`.
    spans: HashMap<u64, u32>,
    /// The trace and service of runs of spans.
    traces: Vec<(u128, Option<Arc<str>>)>,
}

impl Default for Spans {
    fn default() -> Self {
        Spans::with_generation(GENERATION)
    }
}

impl Spans {
    fn with_generation(size: usize) -> Spans {
        Spans {
            generations: Default::default(),
            newer: 0,
            size: size.max(1),
        }
    }

    /// Remembers that span `id` is in trace `key`, of `service`.
    fn remember(&mut self, id: u64, key: u128, service: Option<&str>) {
        if self.generations[self.newer].spans.len() >= self.size {
            self.newer = 1 - self.newer;
            let g = &mut self.generations[self.newer];
            g.spans.clear();
            g.traces.clear();
        }
        let size = self.size;
        let g = &mut self.generations[self.newer];
        if g.spans.capacity() < size {
            g.spans.reserve(size - g.spans.len());
        }
        let last = g.traces.last();
        if !last.is_some_and(|(k, s)| *k == key && s.as_deref() == service) {
            // The service's name shared with the run before when it is the same (traces
            // of one service follow one another): one-span traces are a run each.
            let service = match last {
                Some((_, s @ Some(_))) if s.as_deref() == service => s.clone(),
                _ => service.map(Arc::from),
            };
            g.traces.push((key, service));
        }
        g.spans.insert(id, (g.traces.len() - 1) as u32);
    }

    /// The trace and service of span `id`, as last remembered.
    fn trace_of(&self, id: u64) -> Option<(u128, Option<String>)> {
        [self.newer, 1 - self.newer].into_iter().find_map(|i| {
            let g = &self.generations[i];
            let (key, service) = g.traces.get(*g.spans.get(&id)? as usize)?;
            Some((*key, service.as_deref().map(str::to_string)))
        })
    }
}

impl State {
    /// Remembers which trace (and service) trace `key`'s spans belong to.
    pub(super) fn remember_spans(&self, key: u128, group: &[Span<'_>]) {
        if key == 0 {
            return;
        }
        let mut m = self.span_traces.lock().unwrap_or_else(|e| e.into_inner());
        for sp in group {
            if let Some(id) = sp.id {
                m.remember(id, key, sp.resource.service.as_deref());
            }
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
            let (key, service) = known.trace_of(a.span).unwrap_or((0, None));
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

    /// The last `size` span ids are always found with the trace and service they were
    /// last sent with, against a model that keeps every span; older ones may be forgotten
    /// but are never given another span's trace; and the generations' maps do not grow
    /// once made.
    #[test]
    fn the_last_generation_of_spans_is_always_known() {
        use proptest::prelude::*;
        let groups = proptest::collection::vec(
            (
                1u128..6,
                proptest::option::of(0u8..3),
                proptest::collection::vec(0u64..300, 1..40),
            ),
            1..60,
        );
        proptest!(ProptestConfig::with_cases(200), |(groups in groups, size in 1usize..70)| {
            let mut spans = Spans::with_generation(size);
            // Every span id with what it was last sent with, and the order they were sent.
            let mut all: HashMap<u64, (u128, Option<String>)> = HashMap::new();
            let mut sent: Vec<u64> = Vec::new();
            let mut capacity = [0, 0];
            for (key, service, ids) in &groups {
                let service = service.map(|s| format!("svc-{s}"));
                for &id in ids {
                    spans.remember(id, *key, service.as_deref());
                    all.insert(id, (*key, service.clone()));
                    sent.push(id);
                }
                for (g, c) in spans.generations.iter().zip(&mut capacity) {
                    if *c == 0 {
                        *c = g.spans.capacity();
                    }
                    prop_assert!(g.spans.capacity() == *c || g.spans.is_empty());
                }
            }
            let mut recent = std::collections::HashSet::new();
            for &id in sent.iter().rev().take(size) {
                recent.insert(id);
            }
            for id in 0..300 {
                match spans.trace_of(id) {
                    Some(got) => prop_assert_eq!(Some(&got), all.get(&id), "span {}", id),
                    None => prop_assert!(!recent.contains(&id), "span {} forgotten", id),
                }
            }
        });
    }

    /// A span sent again with another trace is found with the newer one, also when the
    /// older one is still in the older generation.
    #[test]
    fn a_span_sent_again_has_its_newer_trace() {
        let mut spans = Spans::with_generation(2);
        spans.remember(7, 1, Some("a"));
        spans.remember(8, 1, Some("a"));
        spans.remember(7, 2, None);
        assert_eq!(spans.trace_of(7), Some((2, None)));
        assert_eq!(spans.trace_of(8), Some((1, Some("a".into()))));
        assert_eq!(spans.trace_of(9), None);
    }
}
