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
    pub id: Option<String>,
    pub fields: Vec<(Cow<'de, str>, Value)>,
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

/// Decodes one line (already known to be valid UTF-8) into a [`RawLine`].
pub(crate) fn decode_line(line: &str) -> Result<RawLine<'_>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(line);
    let raw = LineSeed.deserialize(&mut de)?;
    de.end()?;
    Ok(raw)
}

struct LineSeed;

impl<'de> DeserializeSeed<'de> for LineSeed {
    type Value = RawLine<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

fn dup<E: de::Error>(name: &str) -> E {
    E::custom(format_args!("duplicate field `{name}`"))
}

impl<'de> Visitor<'de> for LineSeed {
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
            fields: Vec::with_capacity(map.size_hint().unwrap_or(8)),
        };
        while let Some(Str(key)) = map.next_key::<Str<'de>>()? {
            match &*key {
                "kind" => {
                    if raw.kind.is_some() {
                        return Err(dup("kind"));
                    }
                    let v: Value = map.next_value()?;
                    match v {
                        Value::String(s) => raw.kind = Some(Cow::Owned(s)),
                        other => {
                            return Err(de::Error::custom(format_args!(
                                "field `kind` must be a string, found {}",
                                type_name(&other)
                            )));
                        }
                    }
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
                    let v: Value = map.next_value()?;
                    raw.ts = Some(timestamp(v).map_err(de::Error::custom)?);
                }
                "session" => {
                    if raw.session.is_some() {
                        return Err(dup("session"));
                    }
                    let v: Value = map.next_value()?;
                    match v {
                        Value::String(s) => raw.session = Some(Cow::Owned(s)),
                        other => {
                            return Err(de::Error::custom(format_args!(
                                "field `session` must be a string, found {}",
                                type_name(&other)
                            )));
                        }
                    }
                }
                "id" => {
                    if raw.id.is_some() {
                        return Err(dup("id"));
                    }
                    let v: Value = map.next_value()?;
                    match v {
                        Value::String(s) => raw.id = Some(s),
                        other => {
                            return Err(de::Error::custom(format_args!(
                                "field `id` must be a string, found {}",
                                type_name(&other)
                            )));
                        }
                    }
                }
                _ => {
                    if raw.fields.iter().any(|(k, _)| *k == key) {
                        return Err(dup(&key));
                    }
                    let v: Value = map.next_value()?;
                    raw.fields.push((key, v));
                }
            }
        }
        Ok(raw)
    }
}

fn timestamp(v: Value) -> Result<Timestamp, String> {
    match v {
        Value::String(s) => match parse_rfc3339(&s) {
            Some(secs) => Ok(Timestamp {
                raw: TsRaw::Rfc3339(s),
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
struct Bag<'de> {
    fields: Vec<(Cow<'de, str>, Value)>,
}

impl Bag<'_> {
    fn take(&mut self, name: &str) -> Option<Value> {
        let i = self.fields.iter().position(|(k, _)| k == name)?;
        Some(self.fields.swap_remove(i).1)
    }

    fn string(&mut self, name: &str) -> Result<Option<String>, FieldError> {
        match self.take(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(FieldError::new(
                name,
                format!("must be a string, found {}", type_name(&other)),
            )),
        }
    }

    fn required_string(&mut self, name: &str, kind: Kind) -> Result<String, FieldError> {
        self.string(name)?.ok_or_else(|| {
            FieldError::new(name, format!("is required for kind `{}`", kind.as_str()))
        })
    }

    fn strings(&mut self, name: &str) -> Result<Vec<String>, FieldError> {
        match self.take(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s),
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

    fn value(&mut self, name: &str) -> Option<Value> {
        self.take(name)
    }

    /// Decodes a field through its serde type (enums, nested structures); serde's message
    /// ("unknown variant `x`, expected one of ...") is kept.
    fn typed<T: DeserializeOwned>(&mut self, name: &str) -> Result<Option<T>, FieldError> {
        match self.take(name) {
            None => Ok(None),
            Some(v) => serde_json::from_value(v)
                .map(Some)
                .map_err(|e| FieldError::new(name, e.to_string())),
        }
    }

    fn into_extra(self) -> Map<String, Value> {
        self.fields
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v))
            .collect()
    }
}

/// Builds the typed body of a line of kind `kind` (`None`: unknown kind, everything goes to
/// `extra`) from its non-envelope fields.
pub(crate) fn build_body(
    kind: Option<Kind>,
    kind_name: &str,
    fields: Vec<(Cow<'_, str>, Value)>,
) -> Result<(Body, Map<String, Value>), FieldError> {
    let mut b = Bag { fields };
    let Some(kind) = kind else {
        return Ok((
            Body::Unknown(UnknownKind {
                kind: kind_name.to_string(),
            }),
            b.into_extra(),
        ));
    };
    let body = match kind {
        Kind::Session => Body::Session(Session {
            agent: b.string("agent")?,
            model: b.string("model")?,
            meta: b.value("meta"),
        }),
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
            Body::Announce(Announce {
                formula,
                source,
                role,
                confidence,
                because: b.strings("because")?,
                text: b.string("text")?,
            })
        }
        Kind::Retract => Body::Retract(Retract {
            target: b.required_string("target", kind)?,
            reason: b.string("reason")?,
            by: b.typed("by")?,
        }),
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
        Kind::Revise => Body::Revise(Revise {
            trigger: b.string("trigger")?,
            retracted: b.strings("retracted")?,
            policy: b.string("policy")?,
        }),
        Kind::Query => Body::Query(Query {
            formula: b.required_string("formula", kind)?,
            answer: b.typed("answer")?,
        }),
        Kind::Answer => Body::Answer(Answer {
            text: b.string("text")?,
            formula: b.string("formula")?,
        }),
        Kind::Thought => Body::Thought(Thought {
            text: b.string("text")?,
            asserts: b.strings("asserts")?,
        }),
        Kind::World => Body::World(Box::new(World {
            atoms: b.strings("atoms")?,
            rules: b.strings("rules")?,
            truth: b.typed("truth")?.unwrap_or_default(),
        })),
        Kind::Turn => Body::Turn(Turn {
            question: b.string("question")?,
            reply: b.typed("reply")?,
            literal: b.string("literal")?,
            truth: b.value("truth"),
        }),
        Kind::Belief => Body::Belief(Belief {
            name: b.required_string("name", kind)?,
            value: b.value("value"),
            unit: b.string("unit")?,
            source: b.string("source")?,
            extra: Map::new(),
        }),
        Kind::SchemaBelief => Body::SchemaBelief(TextEvent {
            text: b.string("text")?,
        }),
        Kind::Desire => Body::Desire(TextEvent {
            text: b.string("text")?,
        }),
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
        Kind::Satisfaction => Body::Satisfaction(Satisfaction {
            intention: b.string("intention")?,
            ok: b.boolean("ok")?,
        }),
        Kind::Review => Body::Review(Review {
            decisions: b.typed("decisions")?.unwrap_or_default(),
        }),
        Kind::PlanStats => Body::PlanStats(PlanStats {
            plan: b.string("plan")?,
            use_count: b.count("use_count")?,
            success_count: b.count("success_count")?,
            failure_count: b.count("failure_count")?,
        }),
        Kind::Log => Body::Log(Log {
            level: b.string("level")?,
            message: b.string("message")?,
        }),
    };
    Ok((body, b.into_extra()))
}
