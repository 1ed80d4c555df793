//! The JSON shapes OpenTelemetry spans are written in, read with serde in one pass,
//! borrowing strings from the input where no escape forces a copy:
//! - OTLP JSON (`{"resourceSpans": [...]}`, an `ExportTraceServiceRequest`), one document or
//!   one per line as the Collector's file exporter writes them; proto3 JSON field names in
//!   lowerCamelCase or as in the proto;
//! - the Python SDK's `ReadableSpan.to_json()` (one object per span; `ConsoleSpanExporter`
//!   prints them one after another), lists of them, and `{"spans": [...]}` wrappers
//!   (any-agent), with ids in hex, `0x` hex or decimal;
//! - the JS SDK's spans as tests dump them (`spanContext`, hrtime pairs);
//! - a bare attribute map (what instrumentation tests keep as fixtures): one span.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::span::{Attrs, Resource, Span, SpanEvent, Val, span_id_json, time_json, trace_id_json};

/// A string borrowed from the input when it has no escapes.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Str<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v)))
            }
            // Span names and keys are strings by the spec; a writer that puts null there
            // loses nothing by reading it as empty.
            fn visit_unit<E: de::Error>(self) -> Result<Str<'de>, E> {
                Ok(Str::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// A plain JSON value as an attribute value (the SDK dumps' attribute maps).
struct PlainVal<'a>(Val<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for PlainVal<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PlainVal<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<PlainVal<'de>, E> {
                Ok(PlainVal(Val::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<PlainVal<'de>, E> {
                Ok(PlainVal(Val::Null))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<PlainVal<'de>, E> {
                Ok(PlainVal(Val::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PlainVal<'de>, E> {
                Ok(PlainVal(Val::Int(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PlainVal<'de>, E> {
                Ok(PlainVal(match i64::try_from(v) {
                    Ok(i) => Val::Int(i),
                    // Past i64: the digits, not a rounded float.
                    Err(_) => Val::Str(Cow::Owned(v.to_string())),
                }))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<PlainVal<'de>, E> {
                Ok(PlainVal(Val::Double(v)))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<PlainVal<'de>, E> {
                Ok(PlainVal(Val::Str(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PlainVal<'de>, E> {
                Ok(PlainVal(Val::Str(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<PlainVal<'de>, E> {
                Ok(PlainVal(Val::Str(Cow::Owned(v))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<PlainVal<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(PlainVal(v)) = a.next_element()? {
                    out.push(v);
                }
                Ok(PlainVal(Val::Array(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<PlainVal<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some((Str(k), PlainVal(v))) = a.next_entry()? {
                    out.push((k, v));
                }
                Ok(PlainVal(Val::Map(out)))
            }
        }
        d.deserialize_any(V)
    }
}

/// OTLP's `AnyValue` in proto3 JSON: `{"stringValue": ...}`, `{"intValue": "5"}`, ...
struct AnyVal<'a>(Val<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for AnyVal<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyVal<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an OTLP AnyValue object")
            }
            fn visit_unit<E: de::Error>(self) -> Result<AnyVal<'de>, E> {
                Ok(AnyVal(Val::Null))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<AnyVal<'de>, A::Error> {
                let mut out = Val::Null;
                while let Some(Str(k)) = a.next_key()? {
                    out = match &*k {
                        "stringValue" | "string_value" => {
                            Val::Str(a.next_value::<Option<Str>>()?.unwrap_or_default().0)
                        }
                        "boolValue" | "bool_value" => {
                            Val::Bool(a.next_value::<Option<bool>>()?.unwrap_or(false))
                        }
                        "intValue" | "int_value" => {
                            let raw: &RawValue = a.next_value()?;
                            let t = raw.get().trim().trim_matches('"');
                            Val::Int(t.parse().map_err(|_| {
                                de::Error::custom(format!("intValue {t:?} is not a 64-bit integer"))
                            })?)
                        }
                        "doubleValue" | "double_value" => {
                            let raw: &RawValue = a.next_value()?;
                            let t = raw.get().trim().trim_matches('"');
                            Val::Double(match t {
                                "NaN" => f64::NAN,
                                "Infinity" => f64::INFINITY,
                                "-Infinity" => f64::NEG_INFINITY,
                                t => t.parse().map_err(|_| {
                                    de::Error::custom(format!("doubleValue {t:?} is not a number"))
                                })?,
                            })
                        }
                        "arrayValue" | "array_value" => {
                            let l: ValueList = a.next_value()?;
                            Val::Array(l.values.into_iter().map(|v| v.0).collect())
                        }
                        "kvlistValue" | "kvlist_value" => {
                            let l: KvList = a.next_value()?;
                            Val::Map(l.values.0)
                        }
                        "bytesValue" | "bytes_value" => {
                            let Str(s) = a.next_value()?;
                            Val::Bytes(
                                base64::engine::general_purpose::STANDARD
                                    .decode(s.as_bytes())
                                    .map_err(|_| de::Error::custom("bytesValue is not base64"))?,
                            )
                        }
                        _ => {
                            a.next_value::<IgnoredAny>()?;
                            out
                        }
                    };
                }
                Ok(AnyVal(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
struct ValueList<'a> {
    #[serde(borrow, default)]
    values: Vec<AnyVal<'a>>,
}

#[derive(Deserialize)]
struct KvList<'a> {
    #[serde(borrow, default)]
    values: AttrList<'a>,
}

/// Attributes: OTLP's list of `{"key", "value"}` or a plain JSON object (SDK dumps).
#[derive(Default)]
pub(crate) struct AttrList<'a>(pub Attrs<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for AttrList<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Kv<'a> {
            #[serde(borrow)]
            key: Str<'a>,
            #[serde(borrow, default)]
            value: Option<AnyVal<'a>>,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AttrList<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of key-value pairs or an object")
            }
            fn visit_unit<E: de::Error>(self) -> Result<AttrList<'de>, E> {
                Ok(AttrList::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<AttrList<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = a.next_element::<Kv>()? {
                    out.push((kv.key.0, kv.value.map_or(Val::Null, |v| v.0)));
                }
                Ok(AttrList(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<AttrList<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some((Str(k), PlainVal(v))) = a.next_entry()? {
                    out.push((k, v));
                }
                Ok(AttrList(out))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Default)]
struct Resource_<'a> {
    #[serde(borrow, default)]
    attributes: AttrList<'a>,
}

#[derive(Deserialize)]
struct Scope<'a> {
    #[serde(borrow, default)]
    name: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct ResourceSpans<'a> {
    #[serde(borrow, default)]
    resource: Option<Resource_<'a>>,
    #[serde(
        borrow,
        default,
        rename = "scopeSpans",
        alias = "scope_spans",
        alias = "instrumentationLibrarySpans"
    )]
    scope_spans: Vec<ScopeSpans<'a>>,
}

#[derive(Deserialize)]
struct ScopeSpans<'a> {
    #[serde(borrow, default, alias = "instrumentationLibrary")]
    scope: Option<Scope<'a>>,
    #[serde(borrow, default)]
    spans: Vec<Obj<'a>>,
}

#[derive(Deserialize)]
struct Ctx<'a> {
    #[serde(borrow, default, rename = "traceId", alias = "trace_id")]
    trace_id: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "spanId", alias = "span_id")]
    span_id: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Status<'a> {
    #[serde(borrow, default)]
    code: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status_code: Option<Str<'a>>,
    #[serde(borrow, default)]
    message: Option<Str<'a>>,
    #[serde(borrow, default)]
    description: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(
        borrow,
        default,
        rename = "timeUnixNano",
        alias = "time_unix_nano",
        alias = "timestamp",
        alias = "time"
    )]
    time: Option<&'a RawValue>,
    #[serde(borrow, default)]
    attributes: AttrList<'a>,
}

/// Any top-level or span object. Which fields are set says what it is: an export request
/// (`resourceSpans`), a wrapper (`spans`), a span (ids, times, name), or none of these.
#[derive(Deserialize, Default)]
pub(crate) struct Obj<'a> {
    #[serde(borrow, default, rename = "resourceSpans", alias = "resource_spans")]
    resource_spans: Option<Vec<ResourceSpans<'a>>>,
    #[serde(default, rename = "resourceLogs", alias = "resource_logs")]
    resource_logs: Option<IgnoredAny>,
    #[serde(borrow, default)]
    spans: Option<Vec<Obj<'a>>>,
    #[serde(borrow, default)]
    final_output: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "traceId", alias = "trace_id")]
    trace_id: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "spanId", alias = "span_id")]
    span_id: Option<&'a RawValue>,
    #[serde(
        borrow,
        default,
        rename = "parentSpanId",
        alias = "parent_span_id",
        alias = "parent_id",
        alias = "parentId"
    )]
    parent_span_id: Option<&'a RawValue>,
    #[serde(borrow, default, alias = "spanContext")]
    context: Option<Ctx<'a>>,
    #[serde(borrow, default)]
    parent: Option<Ctx<'a>>,
    #[serde(borrow, default)]
    name: Option<Str<'a>>,
    #[serde(
        borrow,
        default,
        rename = "startTimeUnixNano",
        alias = "start_time_unix_nano",
        alias = "start_time",
        alias = "startTime"
    )]
    start: Option<&'a RawValue>,
    #[serde(
        borrow,
        default,
        rename = "endTimeUnixNano",
        alias = "end_time_unix_nano",
        alias = "end_time",
        alias = "endTime"
    )]
    end: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status: Option<Status<'a>>,
    #[serde(borrow, default)]
    attributes: Option<AttrList<'a>>,
    #[serde(borrow, default)]
    events: Option<Vec<Event<'a>>>,
    #[serde(borrow, default)]
    resource: Option<Resource_<'a>>,
}

impl Obj<'_> {
    fn looks_like_span(&self) -> bool {
        self.trace_id.is_some()
            || self.span_id.is_some()
            || self.context.is_some()
            || self.start.is_some()
            || (self.name.is_some() && self.attributes.is_some())
    }
}

/// One top-level JSON value: an object or a list of objects.
pub(crate) enum Top<'a> {
    One(Box<Obj<'a>>),
    Many(Vec<Obj<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Top<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an OTLP export request, a span, or a list of spans")
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Top<'de>, A::Error> {
                Obj::deserialize(de::value::MapAccessDeserializer::new(a))
                    .map(|o| Top::One(Box::new(o)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Top<'de>, A::Error> {
                Vec::<Obj>::deserialize(de::value::SeqAccessDeserializer::new(a)).map(Top::Many)
            }
        }
        d.deserialize_any(V)
    }
}

/// What one top-level value held.
#[derive(Default)]
pub(crate) struct Decoded<'a> {
    /// The spans, in the order written.
    pub spans: Vec<Span<'a>>,
    /// Problems with single spans (a bad id, a bad time): the span is kept without it.
    pub problems: Vec<String>,
    /// The any-agent wrapper's `final_output`, as JSON text.
    pub final_output: Option<&'a str>,
    /// Log records were present (read by `logs.rs`).
    pub had_logs: bool,
    /// An object with none of the fields of a span or request.
    pub unrecognised: bool,
}

/// Turns one top-level value into spans. `loc` names where it was (`line 3`).
pub(crate) fn decode<'a>(top: Top<'a>, loc: &Arc<str>, out: &mut Decoded<'a>) {
    let no_resource = Arc::new(Resource::default());
    match top {
        Top::One(obj) => {
            let obj = *obj;
            if obj.resource_logs.is_some() {
                out.had_logs = true;
            }
            if let Some(fo) = obj.final_output {
                out.final_output = Some(fo.get());
            }
            if let Some(rs) = obj.resource_spans {
                for r in rs {
                    let attrs = r.resource.map(|r| r.attributes.0).unwrap_or_default();
                    let res = Arc::new(Resource::from_attrs(&attrs));
                    for ss in r.scope_spans {
                        let _scope = ss.scope.and_then(|s| s.name);
                        for s in ss.spans {
                            span(s, &res, loc, out);
                        }
                    }
                }
            } else if let Some(list) = obj.spans {
                for s in list {
                    span(s, &no_resource, loc, out);
                }
            } else if obj.looks_like_span() {
                span(obj, &no_resource, loc, out);
            } else if obj.resource_logs.is_none() {
                out.unrecognised = true;
            }
        }
        Top::Many(list) => {
            for s in list {
                span(s, &no_resource, loc, out);
            }
        }
    }
}

fn span<'a>(o: Obj<'a>, res: &Arc<Resource>, loc: &Arc<str>, out: &mut Decoded<'a>) {
    let mut problem = |what: &str, e: String| {
        out.problems.push(format!(
            "span {:?}: {what}: {e}; kept without it",
            o.name.as_ref().map_or("", |n| &n.0)
        ))
    };
    let ctx_trace = o.context.as_ref().and_then(|c| c.trace_id);
    let ctx_span = o.context.as_ref().and_then(|c| c.span_id);
    let trace = match o.trace_id.or(ctx_trace).map(|r| trace_id_json(r.get())) {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            problem("trace id", e);
            None
        }
        None => None,
    };
    let id = match o.span_id.or(ctx_span).map(|r| span_id_json(r.get())) {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            problem("span id", e);
            None
        }
        None => None,
    };
    let parent_raw = o
        .parent_span_id
        .or_else(|| o.parent.as_ref().and_then(|p| p.span_id));
    let parent = match parent_raw.map(|r| span_id_json(r.get())) {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            problem("parent span id", e);
            None
        }
        None => None,
    };
    let mut time = |what: &str, r: Option<&RawValue>| match r.map(|r| time_json(r.get())) {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            problem(what, e);
            None
        }
        None => None,
    };
    let start = time("start time", o.start);
    let end = time("end time", o.end);
    let (error, status_message) = match &o.status {
        Some(s) => {
            let by_code = s.code.is_some_and(|c| {
                let t = c.get().trim().trim_matches('"');
                t == "2" || t.eq_ignore_ascii_case("STATUS_CODE_ERROR")
            });
            let by_name = s.status_code.as_ref().is_some_and(|c| {
                let c = c.0.rsplit('.').next().unwrap_or("");
                c.eq_ignore_ascii_case("error")
            });
            let msg = s.message.clone().or_else(|| s.description.clone());
            (
                by_code || by_name,
                msg.map(|m| m.0).filter(|m| !m.is_empty()),
            )
        }
        None => (false, None),
    };
    let resource = match &o.resource {
        Some(r) => Arc::new(Resource::from_attrs(&r.attributes.0)),
        None => res.clone(),
    };
    let events = o
        .events
        .unwrap_or_default()
        .into_iter()
        .map(|e| SpanEvent {
            name: e.name.0,
            time: e.time.and_then(|t| time_json(t.get()).ok().flatten()),
            attrs: e.attributes.0,
        })
        .collect();
    out.spans.push(Span {
        trace,
        id,
        parent,
        name: o.name.map(|n| n.0).unwrap_or_default(),
        start,
        end,
        error,
        status_message,
        attrs: o.attributes.map(|a| a.0).unwrap_or_default(),
        events,
        resource,
        location: loc.clone(),
    });
}

/// A bare attribute map (`{"gen_ai.operation.name": "chat", ...}`) as one span without
/// ids or times.
pub(crate) fn attribute_map<'a>(text: &'a str, loc: &Arc<str>) -> Option<Span<'a>> {
    let AttrList(attrs) = serde_json::from_str(text).ok()?;
    if !attrs.iter().any(|(k, _)| is_telemetry_key(k)) {
        return None;
    }
    Some(Span {
        trace: None,
        id: None,
        parent: None,
        name: Cow::Borrowed(""),
        start: None,
        end: None,
        error: false,
        status_message: None,
        attrs,
        events: Vec::new(),
        resource: Arc::new(Resource::default()),
        location: loc.clone(),
    })
}

/// An attribute key of the conventions this importer reads.
pub(crate) fn is_telemetry_key(k: &str) -> bool {
    k.starts_with("gen_ai.")
        || k.starts_with("llm.")
        || k.starts_with("openinference.")
        || k.starts_with("ai.")
        || k.starts_with("tool.")
}

/// What a walk of a JSON request counts under a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Elements are spans (`spans`).
    Spans,
    /// Elements or members are values (`attributes`, `values`, `events`, `links`).
    Values,
    /// Nothing counted.
    Other,
}

/// Walks any JSON value, counting by the role of the key it is under, without building it.
struct Walk<'c> {
    counts: &'c mut super::proto::Counts,
    max: super::proto::Counts,
    role: Role,
}

/// A key, read for its role only (borrowed or escaped, never kept).
struct KeyRole;

impl<'de> de::DeserializeSeed<'de> for KeyRole {
    type Value = Role;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Role, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Role;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Role, E> {
                Ok(match v {
                    "spans" => Role::Spans,
                    "attributes" | "values" | "events" | "links" => Role::Values,
                    _ => Role::Other,
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// The error a walk stops with once a count passes its limit.
const OVER: &str = "over the request's limits";

impl Walk<'_> {
    /// Counts one element under `role`; true once a count is past its limit.
    fn tick(&mut self, role: Role) -> bool {
        match role {
            Role::Spans => self.counts.spans += 1,
            Role::Values => self.counts.values += 1,
            Role::Other => {}
        }
        self.counts.spans > self.max.spans || self.counts.values > self.max.values
    }
}

impl<'de> de::DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let (counts, max, role) = (self.counts, self.max, self.role);
        loop {
            let w = Walk {
                counts: &mut *counts,
                max,
                role: Role::Other,
            };
            if a.next_element_seed(w)?.is_none() {
                return Ok(());
            }
            let mut w = Walk {
                counts: &mut *counts,
                max,
                role: Role::Other,
            };
            if w.tick(role) {
                return Err(de::Error::custom(OVER));
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let (counts, max, role) = (self.counts, self.max, self.role);
        while let Some(key) = a.next_key_seed(KeyRole)? {
            let mut w = Walk {
                counts: &mut *counts,
                max,
                role: key,
            };
            // A plain attribute map: each member is a value.
            if role == Role::Values && w.tick(Role::Values) {
                return Err(de::Error::custom(OVER));
            }
            a.next_value_seed(w)?;
        }
        Ok(())
    }
}

/// Counts the spans and values (attributes, array elements, span events, links) of a JSON
/// request without building it: `Err(None)` once a count passes `max`, `Err(Some(why))`
/// for a body that is not JSON.
pub(crate) fn count(
    body: &[u8],
    max: super::proto::Counts,
) -> Result<super::proto::Counts, Option<String>> {
    let mut counts = super::proto::Counts::default();
    let mut de = serde_json::Deserializer::from_slice(body);
    // A list at the top is a list of spans (the SDK dumps' shape, which the decoder takes).
    let w = Walk {
        counts: &mut counts,
        max,
        role: Role::Spans,
    };
    match de::DeserializeSeed::deserialize(w, &mut de).and_then(|()| de.end()) {
        Ok(()) => Ok(counts),
        Err(_) if counts.spans > max.spans || counts.values > max.values => Err(None),
        Err(e) => Err(Some(format!("JSON: {e}"))),
    }
}
