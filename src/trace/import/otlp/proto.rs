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

fn attrs(kvs: Vec<KeyValue>) -> Attrs<'static> {
    kvs.into_iter()
        .map(|kv| (Cow::Owned(kv.key), any(kv.value)))
        .collect()
}

fn any(v: Option<AnyValue>) -> Val<'static> {
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
