//! Decoding one JSON line into an envelope and a typed body.
//!
//! The line is parsed in one pass by a hand-written visitor: envelope fields are decoded and
//! checked on the spot (so serde_json attaches the exact line and column to their errors), all
//! other fields are collected as `(name, Value)` pairs. Once the kind is known (it need not be
//! the first key), the kind's fields are moved out of that bag into the typed body and what
//! remains becomes [`Event::extra`](super::Event::extra). Strings move out of the `Value`s
//! without copying, so the cost per event is close to a direct typed decode, without serde's
//! buffering of `flatten` / internally tagged enums.
//!
//! Duplicate keys are an error (serde_json would silently keep the last one, letting a line
//! show one `role` to one tool and another to the next).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::event::*;
use super::time::parse_rfc3339;

/// A problem with one field of an otherwise well-formed line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldError {
    /// The field's name (the top-level key the problem is in).
    pub field: String,
    /// What is wrong, without the field name.
    pub message: String,
}

impl FieldError {
    fn new(field: &str, message: impl Into<String>) -> Self {
        FieldError {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// The envelope as decoded from a line, borrowing from it where possible.
pub(crate) struct RawLine<'de> {
    pub kind: Option<Cow<'de, str>>,
    pub v: Option<u64>,
    pub seq: Option<u64>,
    pub ts: Option<Timestamp>,
    pub session: Option<Cow<'de, str>>,
    pub id: Option<Text>,
}

/// The non-envelope fields of a line. Names of fields some kind knows are `'static` (no
/// allocation); string values borrow from the line when they have no escapes, so a short
/// field goes straight into an inline [`Text`] without touching the allocator.
pub(crate) type Fields<'de> = Vec<(Cow<'static, str>, Val<'de>)>;

/// A field value: a string (borrowed when possible) or any other JSON value.
pub(crate) enum Val<'de> {
    Str(Cow<'de, str>),
    Json(Value),
}

impl Val<'_> {
    fn into_value(self) -> Value {
        match self {
            Val::Str(s) => Value::String(s.into_owned()),
            Val::Json(v) => v,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Val::Str(_) => "a string",
            Val::Json(v) => type_name(v),
        }
    }
}

impl<'de> de::Deserialize<'de> for Val<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Val<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Val::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Val::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Val::Str(Cow::Owned(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::from(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Val::Json(Value::Null))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                use serde::Deserialize as _;
                Value::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(Val::Json)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                use serde::Deserialize as _;
                Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(Val::Json)
            }
        }
        d.deserialize_any(V)
    }
}

/// The `'static` spelling of a field name that some v1 kind knows, so known names cost no
/// allocation.
fn static_name(k: &str) -> Option<&'static str> {
    Some(match k {
        "agent" => "agent",
        "model" => "model",
        "meta" => "meta",
        "formula" => "formula",
        "formulas" => "formulas",
        "source" => "source",
        "role" => "role",
        "confidence" => "confidence",
        "because" => "because",
        "text" => "text",
        "target" => "target",
        "reason" => "reason",
        "by" => "by",
        "outcome" => "outcome",
        "method" => "method",
        "tier" => "tier",
        "detail" => "detail",
        "trigger" => "trigger",
        "retracted" => "retracted",
        "policy" => "policy",
        "answer" => "answer",
        "asserts" => "asserts",
        "atoms" => "atoms",
        "rules" => "rules",
        "truth" => "truth",
        "question" => "question",
        "reply" => "reply",
        "literal" => "literal",
        "name" => "name",
        "value" => "value",
        "unit" => "unit",
        "type" => "type",
        "goal" => "goal",
        "satisfaction" => "satisfaction",
        "open_parameters" => "open_parameters",
        "intention_type" => "intention_type",
        "context_conditions" => "context_conditions",
        "steps" => "steps",
        "origin" => "origin",
        "plan" => "plan",
        "step" => "step",
        "status" => "status",
        "post_met" => "post_met",
        "new_beliefs" => "new_beliefs",
        "summary" => "summary",
        "ok" => "ok",
        "failure_mode" => "failure_mode",
        "program" => "program",
        "intention" => "intention",
        "decisions" => "decisions",
        "use_count" => "use_count",
        "success_count" => "success_count",
        "failure_count" => "failure_count",
        "level" => "level",
        "message" => "message",
        _ => return None,
    })
}

/// A string key or value that borrows from the input when it has no escapes.
struct Str<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Str<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A string with an expectation message naming the field, borrowing when it can.
struct StrSeed(&'static str);

impl<'de> DeserializeSeed<'de> for StrSeed {
    type Value = Cow<'de, str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for StrSeed {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}

/// Decodes one line (already known to be valid UTF-8) into a [`RawLine`]; the other fields
/// are appended to `fields` (which the caller clears).
pub(crate) fn decode_line<'de>(
    line: &'de str,
    fields: &mut Fields<'de>,
) -> Result<RawLine<'de>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(line);
    let raw = LineSeed { fields }.deserialize(&mut de)?;
    de.end()?;
    Ok(raw)
}

struct LineSeed<'f, 'de> {
    fields: &'f mut Fields<'de>,
}

impl<'de> DeserializeSeed<'de> for LineSeed<'_, 'de> {
    type Value = RawLine<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

fn dup<E: de::Error>(name: &str) -> E {
    E::custom(format_args!("duplicate field `{name}`"))
}

impl<'de> Visitor<'de> for LineSeed<'_, 'de> {
    type Value = RawLine<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object (one trace event per line)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut raw = RawLine {
            kind: None,
            v: None,
            seq: None,
            ts: None,
            session: None,
            id: None,
        };
        let fields = self.fields;
        while let Some(Str(key)) = map.next_key::<Str<'de>>()? {
            match &*key {
                "kind" => {
                    if raw.kind.is_some() {
                        return Err(dup("kind"));
                    }
                    raw.kind = Some(map.next_value_seed(StrSeed("field `kind` to be a string"))?);
                }
                "v" => {
                    if raw.v.is_some() {
                        return Err(dup("v"));
                    }
                    let v: Value = map.next_value()?;
                    match v.as_u64() {
                        Some(n) if n >= 1 => raw.v = Some(n),
                        _ => {
                            return Err(de::Error::custom(format_args!(
                                "field `v` must be a positive integer (the format version), found {v}"
                            )));
                        }
                    }
                }
                "seq" => {
                    if raw.seq.is_some() {
                        return Err(dup("seq"));
                    }
                    let v: Value = map.next_value()?;
                    match v.as_u64() {
                        Some(n) => raw.seq = Some(n),
                        None => {
                            return Err(de::Error::custom(format_args!(
                                "field `seq` must be a non-negative integer, found {}",
                                short(&v)
                            )));
                        }
                    }
                }
                "ts" => {
                    if raw.ts.is_some() {
                        return Err(dup("ts"));
                    }
                    let v: Val<'de> = map.next_value()?;
                    raw.ts = Some(timestamp(v).map_err(de::Error::custom)?);
                }
                "session" => {
                    if raw.session.is_some() {
                        return Err(dup("session"));
                    }
                    raw.session =
                        Some(map.next_value_seed(StrSeed("field `session` to be a string"))?);
                }
                "id" => {
                    if raw.id.is_some() {
                        return Err(dup("id"));
                    }
                    let id = map.next_value_seed(StrSeed("field `id` to be a string"))?;
                    raw.id = Some(Text::from(&*id));
                }
                _ => {
                    if fields.iter().any(|(k, _)| *k == key) {
                        return Err(dup(&key));
                    }
                    let v: Val<'de> = map.next_value()?;
                    let key = match static_name(&key) {
                        Some(k) => Cow::Borrowed(k),
                        None => Cow::Owned(key.into_owned()),
                    };
                    fields.push((key, v));
                }
            }
        }
        Ok(raw)
    }
}

fn timestamp(v: Val<'_>) -> Result<Timestamp, String> {
    let v = match v {
        Val::Str(s) => {
            return match parse_rfc3339(&s) {
                Some(secs) => Ok(Timestamp {
                    raw: TsRaw::Rfc3339(Text::from(&*s)),
                    unix_seconds: secs,
                }),
                None => Err(format!(
                    "field `ts` is not an RFC 3339 date-time (like 2026-01-31T12:00:00Z): {:?}",
                    truncate(&s, 64)
                )),
            };
        }
        Val::Json(v) => v,
    };
    match v {
        Value::String(s) => match parse_rfc3339(&s) {
            Some(secs) => Ok(Timestamp {
                raw: TsRaw::Rfc3339(Text::from(s)),
                unix_seconds: secs,
            }),
            None => Err(format!(
                "field `ts` is not an RFC 3339 date-time (like 2026-01-31T12:00:00Z): {:?}",
                truncate(&s, 64)
            )),
        },
        Value::Number(n) => match n.as_f64() {
            Some(secs) if secs.is_finite() => Ok(Timestamp {
                raw: TsRaw::Unix(n),
                unix_seconds: secs,
            }),
            _ => Err(format!("field `ts` is not a usable number of seconds: {n}")),
        },
        other => Err(format!(
            "field `ts` must be an RFC 3339 string or Unix seconds, found {}",
            type_name(&other)
        )),
    }
}

/// The JSON type name of a value, for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A short rendering of a value for messages (never the whole of a large value).
fn short(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::String(s) => format!("{:?}", truncate(s, 64)),
        other => type_name(other).into(),
    }
}

/// The non-envelope fields of a line, consumed by the kind's decoder.
struct Bag<'f, 'de> {
    fields: &'f mut Fields<'de>,
}

impl Bag<'_, '_> {
    fn take_val(&mut self, name: &str) -> Option<Val<'_>> {
        let i = self.fields.iter().position(|(k, _)| k == name)?;
        // `remove`, not `swap_remove`: what is left becomes `extra`, which keeps line order.
        Some(self.fields.remove(i).1)
    }

    fn take(&mut self, name: &str) -> Option<Value> {
        self.take_val(name).map(Val::into_value)
    }

    fn string(&mut self, name: &str) -> Result<Option<Text>, FieldError> {
        match self.take_val(name) {
            None => Ok(None),
            Some(Val::Str(s)) => Ok(Some(Text::from(&*s))),
            Some(other) => Err(FieldError::new(
                name,
                format!("must be a string, found {}", other.type_name()),
            )),
        }
    }

    fn required_string(&mut self, name: &str, kind: Kind) -> Result<Text, FieldError> {
        self.string(name)?.ok_or_else(|| {
            FieldError::new(name, format!("is required for kind `{}`", kind.as_str()))
        })
    }

    fn strings(&mut self, name: &str) -> Result<Vec<Text>, FieldError> {
        match self.take(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(Text::from(s)),
                    other => Err(FieldError::new(
                        name,
                        format!(
                            "must be a list of strings; item {i} is {}",
                            type_name(&other)
                        ),
                    )),
                })
                .collect(),
            Some(other) => Err(FieldError::new(
                name,
                format!("must be a list of strings, found {}", type_name(&other)),
            )),
        }
    }

    fn boolean(&mut self, name: &str) -> Result<Option<bool>, FieldError> {
        match self.take(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(other) => Err(FieldError::new(
                name,
                format!("must be true or false, found {}", short(&other)),
            )),
        }
    }

    fn count(&mut self, name: &str) -> Result<Option<u64>, FieldError> {
        match self.take(name) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                FieldError::new(
                    name,
                    format!("must be a non-negative integer, found {}", short(&v)),
                )
            }),
        }
    }

    /// Any JSON value, boxed: such fields are rare and a `Value` is 32 bytes inline.
    fn value(&mut self, name: &str) -> Option<Box<Value>> {
        self.take(name).map(Box::new)
    }

    /// Decodes a field through its serde type (enums, nested structures); serde's message
    /// ("unknown variant `x`, expected one of ...") is kept.
    fn typed<T: DeserializeOwned>(&mut self, name: &str) -> Result<Option<T>, FieldError> {
        match self.take(name) {
            None => Ok(None),
            Some(v) => serde_json::from_value(v)
                .map(Some)
                .map_err(|e| FieldError::new(name, format!("has an unexpected value: {e}"))),
        }
    }

    fn into_extra(self) -> Extra {
        if self.fields.is_empty() {
            return Extra::default();
        }
        let v: Vec<(String, Value)> = self
            .fields
            .drain(..)
            .map(|(k, v)| (k.into_owned(), v.into_value()))
            .collect();
        Extra::from(v)
    }
}

/// Builds the typed body of a line of kind `kind` (`None`: unknown kind, everything goes to
/// `extra`) from its non-envelope fields.
pub(crate) fn build_body(
    kind: Option<Kind>,
    kind_name: &str,
    fields: &mut Fields<'_>,
) -> Result<(Body, Extra), FieldError> {
    let mut b = Bag { fields };
    let Some(kind) = kind else {
        return Ok((
            Body::Unknown(Box::new(UnknownKind {
                kind: kind_name.to_string(),
            })),
            b.into_extra(),
        ));
    };
    let body = match kind {
        Kind::Session => Body::Session(Box::new(Session {
            agent: b.string("agent")?,
            model: b.string("model")?,
            meta: b.value("meta"),
        })),
        Kind::Announce => {
            let formula = b.required_string("formula", kind)?;
            let source = b.string("source")?;
            let role = b.typed::<Role>("role")?.unwrap_or_default();
            let confidence = match b.take("confidence") {
                None => 1.0,
                Some(v) => match v.as_f64() {
                    Some(c) if (0.0..=1.0).contains(&c) => c,
                    _ => {
                        return Err(FieldError::new(
                            "confidence",
                            format!("must be a number from 0 to 1, found {}", short(&v)),
                        ));
                    }
                },
            };
            Body::Announce(Box::new(Announce {
                formula,
                source,
                role,
                confidence,
                because: b.strings("because")?,
                text: b.string("text")?,
            }))
        }
        Kind::Retract => Body::Retract(Box::new(Retract {
            target: b.required_string("target", kind)?,
            reason: b.string("reason")?,
            by: b.typed("by")?,
        })),
        Kind::Verify => {
            let formula = b.string("formula")?;
            let formulas = if b.fields.iter().any(|(k, _)| k == "formulas") {
                Some(b.strings("formulas")?)
            } else {
                None
            };
            if formula.is_none() && formulas.is_none() {
                return Err(FieldError::new(
                    "formula",
                    "is required for kind `verify` (or `formulas`)",
                ));
            }
            Body::Verify(Box::new(Verify {
                formula,
                formulas,
                outcome: b.typed("outcome")?,
                because: b.strings("because")?,
                method: b.string("method")?,
                tier: b.value("tier"),
                detail: b.value("detail"),
            }))
        }
        Kind::Revise => Body::Revise(Box::new(Revise {
            trigger: b.string("trigger")?,
            retracted: b.strings("retracted")?,
            policy: b.string("policy")?,
        })),
        Kind::Query => Body::Query(Box::new(Query {
            formula: b.required_string("formula", kind)?,
            answer: b.typed("answer")?,
        })),
        Kind::Answer => Body::Answer(Box::new(Answer {
            text: b.string("text")?,
            formula: b.string("formula")?,
        })),
        Kind::Thought => Body::Thought(Box::new(Thought {
            text: b.string("text")?,
            asserts: b.strings("asserts")?,
        })),
        Kind::World => Body::World(Box::new(World {
            atoms: b.strings("atoms")?,
            rules: b.strings("rules")?,
            truth: b.typed("truth")?.unwrap_or_default(),
        })),
        Kind::Turn => Body::Turn(Box::new(Turn {
            question: b.string("question")?,
            reply: b.typed("reply")?,
            literal: b.string("literal")?,
            truth: b.value("truth"),
        })),
        Kind::Belief => Body::Belief(Box::new(Belief {
            name: b.required_string("name", kind)?,
            value: b.value("value"),
            unit: b.string("unit")?,
            source: b.string("source")?,
            extra: Map::new(),
        })),
        Kind::SchemaBelief => Body::SchemaBelief(Box::new(TextEvent {
            text: b.string("text")?,
        })),
        Kind::Desire => Body::Desire(Box::new(TextEvent {
            text: b.string("text")?,
        })),
        Kind::Intention => Body::Intention(Box::new(Intention {
            intention_type: b.string("type")?,
            goal: b.value("goal"),
            satisfaction: b.value("satisfaction"),
            open_parameters: b.value("open_parameters"),
        })),
        Kind::Plan => Body::Plan(Box::new(Plan {
            intention_type: b.string("intention_type")?,
            context_conditions: b.strings("context_conditions")?,
            steps: b.typed("steps")?.unwrap_or_default(),
            origin: b.typed("origin")?,
        })),
        Kind::Step => Body::Step(Box::new(Step {
            plan: b.string("plan")?,
            step: b.string("step")?,
            status: b.typed("status")?,
            post_met: b.boolean("post_met")?,
            new_beliefs: b.typed("new_beliefs")?.unwrap_or_default(),
            summary: b.string("summary")?,
        })),
        Kind::Postcondition => {
            let plan = b.string("plan")?;
            let step = b.string("step")?;
            let tier = match b.count("tier")? {
                None => None,
                Some(t @ 1..=3) => Some(t as u8),
                Some(t) => {
                    return Err(FieldError::new(
                        "tier",
                        format!("must be 1, 2 or 3, found {t}"),
                    ));
                }
            };
            Body::Postcondition(Box::new(Postcondition {
                plan,
                step,
                tier,
                ok: b.boolean("ok")?,
                failure_mode: b.string("failure_mode")?,
                program: b.string("program")?,
                detail: b.value("detail"),
            }))
        }
        Kind::Satisfaction => Body::Satisfaction(Box::new(Satisfaction {
            intention: b.string("intention")?,
            ok: b.boolean("ok")?,
        })),
        Kind::Review => Body::Review(Box::new(Review {
            decisions: b.typed("decisions")?.unwrap_or_default(),
        })),
        Kind::PlanStats => Body::PlanStats(Box::new(PlanStats {
            plan: b.string("plan")?,
            use_count: b.count("use_count")?,
            success_count: b.count("success_count")?,
            failure_count: b.count("failure_count")?,
        })),
        Kind::Log => Body::Log(Box::new(Log {
            level: b.string("level")?,
            message: b.string("message")?,
        })),
    };
    Ok((body, b.into_extra()))
}
