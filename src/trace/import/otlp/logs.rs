//! OTLP log records (`ExportLogsServiceRequest`, protobuf or JSON) into one shape the mapping
//! reads ([`SessionMap::log_record`](super::map::SessionMap::log_record)). GenAI
//! instrumentations send message content as log records (`gen_ai.user.message`,
//! `gen_ai.choice`, the `gen_ai.client.inference.operation.details` event) and coding agents
//! send their events only as logs; a record carries the trace and span ids of the span it
//! was emitted in, so it joins that trace's session.

use std::borrow::Cow;
use std::sync::Arc;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use prost::Message as _;

use super::span::{Attrs, Resource, Val, attr, id_bytes, span_id_json, time_json, trace_id_json};

/// One log record, whatever encoding it came in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LogRec {
    /// The trace it was emitted in.
    pub trace: Option<u128>,
    /// The span it was emitted in.
    pub span: Option<u64>,
    /// When (ns since the Unix epoch): the event's time, else when it was observed.
    pub time: Option<i128>,
    /// 1-24 (TRACE to FATAL4); 0 when unset.
    pub severity: i32,
    /// The severity as the source spelled it.
    pub severity_text: String,
    /// The event name: the record's `event_name`, else its `event.name` attribute.
    pub event: String,
    /// The body.
    pub body: Val<'static>,
    /// Attributes.
    pub attrs: Attrs<'static>,
    /// Who sent it.
    pub resource: Arc<Resource>,
}

/// The conversation the records name (`gen_ai.conversation.id`, else `session.id`): what
/// links their session to the other sessions of the conversation when no span names it.
pub(crate) fn conversation(recs: &[LogRec]) -> Option<String> {
    recs.iter().find_map(|r| {
        r.str_attr("gen_ai.conversation.id")
            .or_else(|| r.str_attr("session.id"))
            .map(str::to_string)
    })
}

impl LogRec {
    /// A string attribute.
    pub(crate) fn str_attr(&self, key: &str) -> Option<&str> {
        attr(&self.attrs, key).and_then(Val::as_str)
    }

    /// A GenAI record that carries message content.
    pub(crate) fn carries_content(&self) -> bool {
        matches!(
            self.event.as_str(),
            "gen_ai.system.message"
                | "gen_ai.user.message"
                | "gen_ai.assistant.message"
                | "gen_ai.tool.message"
                | "gen_ai.choice"
                | "gen_ai.client.inference.operation.details"
        )
    }
}

/// Decodes a protobuf `ExportLogsServiceRequest`. Records with malformed ids keep the rest.
pub(crate) fn decode_proto(body: &[u8]) -> Result<Vec<LogRec>, String> {
    let req = ExportLogsServiceRequest::decode(body).map_err(|e| format!("protobuf: {e}"))?;
    let mut out = Vec::new();
    for rl in req.resource_logs {
        let res_attrs = rl
            .resource
            .map(|r| super::proto::attrs(r.attributes))
            .unwrap_or_default();
        let res = Arc::new(Resource::from_attrs(&res_attrs));
        for sl in rl.scope_logs {
            for r in sl.log_records {
                let time = |t: u64| (t != 0).then_some(i128::from(t));
                let attrs = super::proto::attrs(r.attributes);
                let event = if r.event_name.is_empty() {
                    attr(&attrs, "event.name")
                        .and_then(Val::as_str)
                        .unwrap_or("")
                        .to_string()
                } else {
                    r.event_name
                };
                out.push(LogRec {
                    trace: id_bytes(&r.trace_id, 16).ok().flatten(),
                    span: id_bytes(&r.span_id, 8).ok().flatten().map(|v| v as u64),
                    time: time(r.time_unix_nano).or(time(r.observed_time_unix_nano)),
                    severity: r.severity_number,
                    severity_text: r.severity_text,
                    event,
                    body: super::proto::any(r.body),
                    attrs,
                    resource: res.clone(),
                });
            }
        }
    }
    Ok(out)
}

/// The log records of one OTLP JSON value (`{"resourceLogs": [...]}`, proto3 JSON names in
/// lowerCamelCase or as in the proto). `None` when the value holds no `resourceLogs`.
pub(crate) fn from_json(v: &serde_json::Value) -> Option<Vec<LogRec>> {
    let rls = field(v, "resourceLogs", "resource_logs")?.as_array()?;
    let mut out = Vec::new();
    for rl in rls {
        let res_attrs = field(rl, "resource", "resource")
            .and_then(|r| field(r, "attributes", "attributes"))
            .map(kvs)
            .unwrap_or_default();
        let res = Arc::new(Resource::from_attrs(&res_attrs));
        let scopes = field(rl, "scopeLogs", "scope_logs").and_then(|s| s.as_array());
        for sl in scopes.into_iter().flatten() {
            let recs = field(sl, "logRecords", "log_records").and_then(|s| s.as_array());
            for r in recs.into_iter().flatten() {
                out.push(record_json(r, &res));
            }
        }
    }
    Some(out)
}

fn record_json(r: &serde_json::Value, res: &Arc<Resource>) -> LogRec {
    let raw = |a: &str, b: &str| field(r, a, b).map(|v| v.to_string());
    let time = |a: &str, b: &str| raw(a, b).and_then(|t| time_json(&t).ok().flatten());
    let attrs = field(r, "attributes", "attributes")
        .map(kvs)
        .unwrap_or_default();
    let event = field(r, "eventName", "event_name")
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
        .or_else(|| attr(&attrs, "event.name").and_then(Val::as_str))
        .unwrap_or("")
        .to_string();
    LogRec {
        trace: raw("traceId", "trace_id").and_then(|t| trace_id_json(&t).ok().flatten()),
        span: raw("spanId", "span_id").and_then(|t| span_id_json(&t).ok().flatten()),
        time: time("timeUnixNano", "time_unix_nano")
            .or_else(|| time("observedTimeUnixNano", "observed_time_unix_nano")),
        severity: field(r, "severityNumber", "severity_number")
            .and_then(severity_json)
            .unwrap_or(0),
        severity_text: field(r, "severityText", "severity_text")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string(),
        event,
        body: field(r, "body", "body").map_or(Val::Null, any_json),
        attrs,
        resource: res.clone(),
    }
}

/// proto3 JSON writes an enum as its number or its name (`SEVERITY_NUMBER_INFO`).
fn severity_json(v: &serde_json::Value) -> Option<i32> {
    if let Some(n) = v.as_i64() {
        return i32::try_from(n).ok();
    }
    const NAMES: [&str; 6] = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"];
    let s = v.as_str()?.strip_prefix("SEVERITY_NUMBER_")?;
    let base: String = s.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    let i = NAMES.iter().position(|n| *n == base)?;
    let extra: i32 = s[base.len()..].parse().unwrap_or(1);
    Some(i as i32 * 4 + extra.clamp(1, 4))
}

fn field<'v>(v: &'v serde_json::Value, camel: &str, snake: &str) -> Option<&'v serde_json::Value> {
    let o = v.as_object()?;
    o.get(camel)
        .or_else(|| o.get(snake))
        .filter(|v| !v.is_null())
}

fn kvs(v: &serde_json::Value) -> Attrs<'static> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|kv| {
            let k = kv.get("key")?.as_str()?;
            Some((
                Cow::Owned(k.to_string()),
                kv.get("value").map_or(Val::Null, any_json),
            ))
        })
        .collect()
}

/// An OTLP JSON `AnyValue` (`{"stringValue": ...}`, 64-bit integers as strings).
fn any_json(v: &serde_json::Value) -> Val<'static> {
    let Some(o) = v.as_object() else {
        return Val::Null;
    };
    let get = |a: &str, b: &str| o.get(a).or_else(|| o.get(b));
    if let Some(s) = get("stringValue", "string_value").and_then(|s| s.as_str()) {
        return Val::Str(Cow::Owned(s.to_string()));
    }
    if let Some(b) = get("boolValue", "bool_value").and_then(|b| b.as_bool()) {
        return Val::Bool(b);
    }
    if let Some(i) = get("intValue", "int_value") {
        let n = i
            .as_i64()
            .or_else(|| i.as_str().and_then(|s| s.parse().ok()));
        return n.map_or(Val::Null, Val::Int);
    }
    if let Some(f) = get("doubleValue", "double_value") {
        let n = f
            .as_f64()
            .or_else(|| f.as_str().and_then(|s| s.parse().ok()));
        return n.map_or(Val::Null, Val::Double);
    }
    if let Some(b) = get("bytesValue", "bytes_value").and_then(|b| b.as_str()) {
        use base64::Engine as _;
        return base64::engine::general_purpose::STANDARD
            .decode(b)
            .map_or(Val::Null, Val::Bytes);
    }
    if let Some(a) = get("arrayValue", "array_value") {
        let vals = a.get("values").and_then(|v| v.as_array());
        return Val::Array(vals.into_iter().flatten().map(any_json).collect());
    }
    if let Some(l) = get("kvlistValue", "kvlist_value") {
        return Val::Map(l.get("values").map(kvs).unwrap_or_default());
    }
    Val::Null
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_records_read_ids_times_severity_event_names_and_nested_bodies() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},
            "scopeLogs":[{"logRecords":[
              {"timeUnixNano":"1700000000000000000","severityNumber":"SEVERITY_NUMBER_WARN2",
               "traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331",
               "eventName":"gen_ai.user.message",
               "body":{"kvlistValue":{"values":[{"key":"content","value":{"stringValue":"hi"}}]}}},
              {"observedTimeUnixNano":"5","severityNumber":17,
               "attributes":[{"key":"event.name","value":{"stringValue":"gen_ai.choice"}},
                             {"key":"n","value":{"intValue":"7"}}]}
            ]}]}]}"#,
        )
        .expect("json");
        let recs = from_json(&v).expect("resourceLogs");
        assert_eq!(recs.len(), 2);
        let a = &recs[0];
        assert_eq!(a.trace, Some(0x0af7651916cd43dd8448eb211c80319c));
        assert_eq!(a.span, Some(0xb7ad6b7169203331));
        assert_eq!(a.time, Some(1_700_000_000_000_000_000));
        assert_eq!(a.severity, 14);
        assert_eq!(a.event, "gen_ai.user.message");
        assert_eq!(a.resource.service.as_deref(), Some("svc"));
        assert_eq!(
            a.body,
            Val::Map(vec![(
                Cow::Borrowed("content"),
                Val::Str(Cow::Borrowed("hi"))
            )])
        );
        let b = &recs[1];
        assert_eq!((b.trace, b.time, b.severity), (None, Some(5), 17));
        assert_eq!(b.event, "gen_ai.choice");
        assert_eq!(attr(&b.attrs, "n"), Some(&Val::Int(7)));
        assert!(from_json(&serde_json::json!({"resourceSpans": []})).is_none());
    }
}
