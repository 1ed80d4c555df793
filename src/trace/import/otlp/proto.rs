//! OTLP protobuf (`application/x-protobuf`), decoded by prost with the message types of
//! `opentelemetry-proto`, into the common span shape.

use std::borrow::Cow;
use std::sync::Arc;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message as _;

use super::span::{Attrs, Resource, Span, SpanEvent, Val, id_bytes};

/// Decodes an `ExportTraceServiceRequest`. Spans with malformed ids keep the rest and are
/// counted in the second value (they are still mapped, without the bad id).
pub(crate) fn decode(body: &[u8], loc: &Arc<str>) -> Result<(Vec<Span<'static>>, u64), String> {
    let req = ExportTraceServiceRequest::decode(body).map_err(|e| format!("protobuf: {e}"))?;
    let mut out = Vec::new();
    let mut bad = 0u64;
    for rs in req.resource_spans {
        let res_attrs = rs.resource.map(|r| attrs(r.attributes)).unwrap_or_default();
        let res = Arc::new(Resource::from_attrs(&res_attrs));
        for ss in rs.scope_spans {
            for s in ss.spans {
                let trace = id_bytes(&s.trace_id, 16).unwrap_or_else(|_| {
                    bad += 1;
                    None
                });
                let id = id_bytes(&s.span_id, 8)
                    .map(|v| v.map(|v| v as u64))
                    .unwrap_or_else(|_| {
                        bad += 1;
                        None
                    });
                let parent = id_bytes(&s.parent_span_id, 8)
                    .map(|v| v.map(|v| v as u64))
                    .unwrap_or_else(|_| {
                        bad += 1;
                        None
                    });
                let time = |t: u64| (t != 0).then_some(i128::from(t));
                let (error, status_message) = match s.status {
                    Some(st) => (st.code == 2, Some(st.message).filter(|m| !m.is_empty())),
                    None => (false, None),
                };
                out.push(Span {
                    trace,
                    id,
                    parent,
                    name: Cow::Owned(s.name),
                    start: time(s.start_time_unix_nano),
                    end: time(s.end_time_unix_nano),
                    error,
                    status_message: status_message.map(Cow::Owned),
                    attrs: attrs(s.attributes),
                    events: s
                        .events
                        .into_iter()
                        .map(|e| SpanEvent {
                            name: Cow::Owned(e.name),
                            time: time(e.time_unix_nano),
                            attrs: attrs(e.attributes),
                        })
                        .collect(),
                    resource: res.clone(),
                    location: loc.clone(),
                });
            }
        }
    }
    Ok((out, bad))
}

pub(crate) fn attrs(kvs: Vec<KeyValue>) -> Attrs<'static> {
    kvs.into_iter()
        .map(|kv| (Cow::Owned(kv.key), any(kv.value)))
        .collect()
}

pub(crate) fn any(v: Option<AnyValue>) -> Val<'static> {
    use any_value::Value as V;
    match v.and_then(|v| v.value) {
        None => Val::Null,
        Some(V::StringValue(s)) => Val::Str(Cow::Owned(s)),
        Some(V::BoolValue(b)) => Val::Bool(b),
        Some(V::IntValue(i)) => Val::Int(i),
        Some(V::DoubleValue(f)) => Val::Double(f),
        Some(V::BytesValue(b)) => Val::Bytes(b),
        Some(V::ArrayValue(a)) => Val::Array(a.values.into_iter().map(|v| any(Some(v))).collect()),
        Some(V::KvlistValue(l)) => Val::Map(attrs(l.values)),
        // A profiling-only field: as absent (the proto says so).
        Some(V::StringValueStrindex(_)) => Val::Null,
    }
}

/// What an encoded request would cost once decoded: its spans, and its attribute values
/// (every key-value, array element, span event and link, at any depth).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Spans.
    pub spans: u64,
    /// Attribute values, span events and links.
    pub values: u64,
}

/// Deeper nesting is refused (prost refuses past 100 levels anyway).
const MAX_DEPTH: u32 = 64;

/// Which message a length-delimited payload holds, for [`count`].
#[derive(Clone, Copy)]
enum Msg {
    Request,
    ResourceSpans,
    Resource,
    ScopeSpans,
    Scope,
    Span,
    Event,
    Link,
    KeyValue,
    AnyValue,
    ArrayValue,
    KvList,
    LogsRequest,
    ResourceLogs,
    ScopeLogs,
    LogRecord,
}

/// The field of `m` numbered `f`, if it is a message this walk looks into, and whether each
/// occurrence counts as a span or a value.
fn child(m: Msg, f: u64) -> Option<(Msg, Option<bool>)> {
    use Msg::*;
    let value = Some(false);
    Some(match (m, f) {
        (Request, 1) => (ResourceSpans, None),
        (ResourceSpans, 1) => (Resource, None),
        (ResourceSpans, 2) => (ScopeSpans, None),
        (Resource, 1) | (Scope, 3) | (Span, 9) | (Event, 3) | (Link, 4) => (KeyValue, value),
        (ScopeSpans, 1) => (Scope, None),
        (ScopeSpans, 2) => (Span, Some(true)),
        (Span, 11) => (Event, value),
        (Span, 13) => (Link, value),
        (KeyValue, 2) => (AnyValue, None),
        (AnyValue, 5) => (ArrayValue, None),
        (AnyValue, 6) => (KvList, None),
        (ArrayValue, 1) => (AnyValue, value),
        (KvList, 1) => (KeyValue, value),
        // `ExportLogsServiceRequest`: a log record counts as a span, its body as a value.
        (LogsRequest, 1) => (ResourceLogs, None),
        (ResourceLogs, 1) => (Resource, None),
        (ResourceLogs, 2) => (ScopeLogs, None),
        (ScopeLogs, 1) => (Scope, None),
        (ScopeLogs, 2) => (LogRecord, Some(true)),
        (LogRecord, 5) => (AnyValue, value),
        (LogRecord, 6) => (KeyValue, value),
        _ => return None,
    })
}

/// Counts the spans and values of an encoded `ExportTraceServiceRequest` by walking its wire
/// format, without allocating: a request of 8 million empty spans is measured in its 16 MiB,
/// not in the gigabytes its decoded messages would take. Stops once a count passes its
/// limit (the counts returned are then past it). Malformed wire data is left for the
/// decoder to report.
pub(crate) fn count(body: &[u8], max: Counts) -> Result<Counts, String> {
    let mut c = Counts::default();
    walk(body, Msg::Request, 0, &mut c, max)?;
    Ok(c)
}

/// [`count`] for an encoded `ExportLogsServiceRequest`: its log records (as `spans`) and
/// values.
pub(crate) fn count_logs(body: &[u8], max: Counts) -> Result<Counts, String> {
    let mut c = Counts::default();
    walk(body, Msg::LogsRequest, 0, &mut c, max)?;
    Ok(c)
}

fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*i)?;
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Walks one message; `Ok` also when the data is malformed (the decoder says why).
fn walk(b: &[u8], m: Msg, depth: u32, c: &mut Counts, max: Counts) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("protobuf: nested deeper than {MAX_DEPTH} levels"));
    }
    let mut i = 0;
    while i < b.len() {
        let Some(key) = varint(b, &mut i) else {
            return Ok(());
        };
        let len = match key & 7 {
            0 => {
                if varint(b, &mut i).is_none() {
                    return Ok(());
                }
                continue;
            }
            1 => 8,
            5 => 4,
            2 => match varint(b, &mut i).and_then(|l| usize::try_from(l).ok()) {
                Some(l) => l,
                None => return Ok(()),
            },
            _ => return Ok(()),
        };
        let Some(end) = i.checked_add(len).filter(|e| *e <= b.len()) else {
            return Ok(());
        };
        if key & 7 == 2
            && let Some((sub, counted)) = child(m, key >> 3)
        {
            match counted {
                Some(true) => c.spans += 1,
                Some(false) => c.values += 1,
                None => {}
            }
            if c.spans > max.spans || c.values > max.values {
                return Ok(());
            }
            walk(&b[i..end], sub, depth + 1, c, max)?;
            if c.spans > max.spans || c.values > max.values {
                return Ok(());
            }
        }
        i = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::{ArrayValue, KeyValueList};
    use opentelemetry_proto::tonic::resource::v1::Resource as PbResource;
    use opentelemetry_proto::tonic::trace::v1::span::{Event, Link};
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span as PbSpan};

    /// A small deterministic generator (xorshift), so failures replay.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn value(r: &mut Rng, depth: u32) -> AnyValue {
        use any_value::Value as V;
        let v = match (r.below(4), depth) {
            (0, d) if d < 3 => V::ArrayValue(ArrayValue {
                values: (0..r.below(4)).map(|_| value(r, d + 1)).collect(),
            }),
            (1, d) if d < 3 => V::KvlistValue(KeyValueList {
                values: (0..r.below(4)).map(|_| kv(r, d + 1)).collect(),
            }),
            (2, _) => V::IntValue(7),
            _ => V::StringValue("s".into()),
        };
        AnyValue { value: Some(v) }
    }

    fn kv(r: &mut Rng, depth: u32) -> KeyValue {
        KeyValue {
            key: "k".into(),
            value: Some(value(r, depth)),
            ..Default::default()
        }
    }

    /// The oracle: the same counts over the decoded message.
    fn values_of(v: &AnyValue) -> u64 {
        use any_value::Value as V;
        match &v.value {
            Some(V::ArrayValue(a)) => a.values.iter().map(|v| 1 + values_of(v)).sum(),
            Some(V::KvlistValue(l)) => l.values.iter().map(kv_values).sum(),
            _ => 0,
        }
    }

    fn kv_values(k: &KeyValue) -> u64 {
        1 + k.value.as_ref().map_or(0, values_of)
    }

    #[test]
    fn the_wire_walk_counts_what_the_decoded_request_holds() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200 {
            let attrs = |r: &mut Rng| (0..r.below(4)).map(|_| kv(r, 0)).collect::<Vec<_>>();
            let req = ExportTraceServiceRequest {
                resource_spans: (0..r.below(3))
                    .map(|_| ResourceSpans {
                        resource: Some(PbResource {
                            attributes: attrs(&mut r),
                            ..Default::default()
                        }),
                        scope_spans: (0..r.below(3))
                            .map(|_| ScopeSpans {
                                spans: (0..r.below(4))
                                    .map(|_| PbSpan {
                                        name: "n".into(),
                                        attributes: attrs(&mut r),
                                        events: (0..r.below(3))
                                            .map(|_| Event {
                                                attributes: attrs(&mut r),
                                                ..Default::default()
                                            })
                                            .collect(),
                                        links: (0..r.below(2))
                                            .map(|_| Link {
                                                attributes: attrs(&mut r),
                                                ..Default::default()
                                            })
                                            .collect(),
                                        ..Default::default()
                                    })
                                    .collect(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
            };
            let mut want = Counts::default();
            for rs in &req.resource_spans {
                if let Some(res) = &rs.resource {
                    want.values += res.attributes.iter().map(kv_values).sum::<u64>();
                }
                for ss in &rs.scope_spans {
                    for sp in &ss.spans {
                        want.spans += 1;
                        want.values += sp.attributes.iter().map(kv_values).sum::<u64>();
                        for e in &sp.events {
                            want.values += 1 + e.attributes.iter().map(kv_values).sum::<u64>();
                        }
                        for l in &sp.links {
                            want.values += 1 + l.attributes.iter().map(kv_values).sum::<u64>();
                        }
                    }
                }
            }
            let big = Counts {
                spans: u64::MAX,
                values: u64::MAX,
            };
            let got = count(&req.encode_to_vec(), big).expect("walks");
            assert_eq!(got, want);
            // With limits below the counts, the walk stops past one of them.
            if want.spans > 0 {
                let tight = Counts {
                    spans: want.spans - 1,
                    values: u64::MAX,
                };
                assert!(count(&req.encode_to_vec(), tight).expect("walks").spans > tight.spans);
            }
        }
    }
}
