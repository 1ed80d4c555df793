//! Writing v1 lines: the one place importers turn what they mapped into trace text, so every
//! imported line has the same envelope (`kind`, `seq` per session from 1, `ts`, `session`,
//! `id`), stays under the reader's line cap, and says where in the source it came from.

use std::collections::HashMap;
use std::io::{self, Write};

use serde_json::Value;

use super::ImportNote;
use crate::trace::time::parse_rfc3339;

/// The longest text kept in one field; longer text is cut (at a character boundary) and the
/// event says how long it was in `x_truncated`. Agent logs hold whole web pages and tool
/// sources; a line must stay under the reader's 4 MiB cap with room for the rest.
pub const TEXT_MAX: usize = 256 << 10;

/// The longest line written; the reader's default cap is 4 MiB.
const LINE_MAX: usize = (4 << 20) - 1024;

/// The v1 text an importer writes, with its notes.
#[derive(Debug, Default)]
pub struct V1Out {
    buf: Vec<u8>,
    seq: HashMap<String, u64>,
    /// Per session, the latest timestamp written: (value, text).
    last_ts: HashMap<String, (f64, String)>,
    /// What could not be mapped exactly.
    pub notes: Vec<ImportNote>,
    /// Where the lines go as they are written ([`V1Out::to_writer`]); `None`: kept in `buf`.
    sink: Option<Sink>,
}

/// A writer the lines are spilled to, a batch at a time.
struct Sink {
    w: Box<dyn Write>,
    /// The first write error; later lines are dropped and [`V1Out::finish_written`] says it.
    failed: Option<io::Error>,
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

/// Bytes of lines kept before they are spilled to a sink.
const SPILL: usize = 1 << 20;

/// One event being written; [`Ev::emit`] appends it.
#[must_use = "an event is written only by emit()"]
pub struct Ev<'a> {
    out: &'a mut V1Out,
    kind: String,
    session: String,
    ts: Option<String>,
    id: Option<String>,
    fields: Vec<(String, Value)>,
    truncated: Vec<(String, Value)>,
}

impl V1Out {
    /// A new event of `kind` in `session`.
    pub fn event(&mut self, session: &str, kind: &str) -> Ev<'_> {
        Ev {
            out: self,
            kind: kind.to_string(),
            session: session.to_string(),
            ts: None,
            id: None,
            fields: Vec::new(),
            truncated: Vec::new(),
        }
    }

    /// Records a note.
    pub fn note(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.notes.push(ImportNote {
            location: location.into(),
            message: message.into(),
        });
    }

    /// How many events were written to `session` so far.
    pub fn count(&self, session: &str) -> u64 {
        self.seq.get(session).copied().unwrap_or(0)
    }

    /// Lines written to `w` a batch at a time instead of kept: an import's output held in
    /// memory is then at most about a MiB, whatever the source's size.
    pub fn to_writer(w: impl Write + 'static) -> V1Out {
        V1Out {
            sink: Some(Sink {
                w: Box::new(w),
                failed: None,
            }),
            ..V1Out::default()
        }
    }

    /// Writes the kept lines to the sink when there are `min` bytes or more of them.
    fn spill(&mut self, min: usize) {
        if let Some(sink) = &mut self.sink
            && self.buf.len() >= min
        {
            if sink.failed.is_none()
                && let Err(e) = sink.w.write_all(&self.buf)
            {
                sink.failed = Some(e);
            }
            self.buf.clear();
        }
    }

    /// For a writer's output ([`V1Out::to_writer`]): the last lines written and flushed,
    /// and the notes; the first write error if one failed.
    pub fn finish_written(mut self) -> io::Result<Vec<ImportNote>> {
        self.spill(0);
        match self.sink.take() {
            Some(Sink {
                failed: Some(e), ..
            }) => Err(e),
            Some(mut sink) => sink.w.flush().map(|()| self.notes),
            None => Ok(self.notes),
        }
    }

    /// The text and the notes.
    pub fn finish(self) -> super::Imported {
        super::Imported {
            v1: self.buf,
            notes: self.notes,
        }
    }
}

impl Ev<'_> {
    /// The timestamp, an RFC 3339 text (see [`rfc3339`]).
    pub fn ts(mut self, ts: Option<String>) -> Self {
        self.ts = ts;
        self
    }

    /// The envelope `id`.
    pub fn id(mut self, id: Option<&str>) -> Self {
        self.id = id.map(str::to_string);
        self
    }

    /// A field with any JSON value (`null` values are left out); strings inside it longer
    /// than [`TEXT_MAX`] are cut, and `x_truncated` says how many bytes they held.
    pub fn field(mut self, name: &str, v: impl Into<Value>) -> Self {
        let mut v = v.into();
        if !v.is_null() {
            let cut = clip_strings(&mut v);
            if cut > 0 {
                self.truncated.push((name.to_string(), Value::from(cut)));
            }
            self.fields.push((name.to_string(), v));
        }
        self
    }

    /// A text field, cut at [`TEXT_MAX`] bytes.
    pub fn text(mut self, name: &str, s: &str) -> Self {
        if s.len() > TEXT_MAX {
            let mut end = TEXT_MAX;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            self.truncated
                .push((name.to_string(), Value::from(s.len() as u64)));
            self.fields.push((name.to_string(), Value::from(&s[..end])));
        } else {
            self.fields.push((name.to_string(), Value::from(s)));
        }
        self
    }

    /// A text field when there is one.
    pub fn opt_text(self, name: &str, s: Option<&str>) -> Self {
        match s {
            Some(s) => self.text(name, s),
            None => self,
        }
    }

    /// Where in the source the event came from (`x_from`), for an auditor going back.
    pub fn from(self, loc: impl Into<String>) -> Self {
        self.field("x_from", Value::String(loc.into()))
    }

    /// Appends the line.
    pub fn emit(mut self) {
        let seq = {
            let n = self.out.seq.entry(self.session.clone()).or_insert(0);
            *n += 1;
            *n
        };
        // Timestamps never go back within a session (the reader would warn on every event
        // a source logged out of order, which sources do); the source's own is kept.
        if let Some(ts) = self.ts.take() {
            let secs = parse_rfc3339(&ts);
            let last = self.out.last_ts.get(&self.session);
            match (secs, last) {
                (Some(s), Some((l, text))) if s < *l => {
                    self.ts = Some(text.clone());
                    self.fields.push(("x_ts".into(), Value::String(ts)));
                }
                (Some(s), _) => {
                    self.out
                        .last_ts
                        .insert(self.session.clone(), (s, ts.clone()));
                    self.ts = Some(ts);
                }
                (None, _) => self.fields.push(("x_ts".into(), Value::String(ts))),
            }
        }
        if !self.truncated.is_empty() {
            let map: serde_json::Map<String, Value> = self.truncated.drain(..).collect();
            self.fields
                .push(("x_truncated".to_string(), Value::Object(map)));
        }
        let mut line = self.render(seq, |_| true);
        if line.len() > LINE_MAX {
            // Still too long (a huge structured extra): keep the mapped fields and drop the
            // kept-verbatim extras, saying which.
            let dropped: Vec<String> = self
                .fields
                .iter()
                .filter(|(k, _)| k.starts_with("x_") && k != "x_from")
                .map(|(k, _)| k.clone())
                .collect();
            line = self.render(seq, |k| !k.starts_with("x_") || k == "x_from");
            let from = self
                .fields
                .iter()
                .find(|(k, _)| k == "x_from")
                .and_then(|(_, v)| v.as_str())
                .unwrap_or("?")
                .to_string();
            self.out.note(
                from,
                format!(
                    "event too large for one line: {} left out",
                    dropped.join(", ")
                ),
            );
        }
        self.out.buf.extend_from_slice(line.as_bytes());
        self.out.buf.push(b'\n');
        self.out.spill(SPILL);
    }

    fn render(&self, seq: u64, keep: impl Fn(&str) -> bool) -> String {
        let mut s = String::with_capacity(256);
        let q = |v: &str| serde_json::to_string(v).unwrap_or_default();
        s.push_str("{\"kind\":");
        s.push_str(&q(&self.kind));
        s.push_str(&format!(",\"seq\":{seq}"));
        if let Some(ts) = &self.ts {
            s.push_str(",\"ts\":");
            s.push_str(&q(ts));
        }
        s.push_str(",\"session\":");
        s.push_str(&q(&self.session));
        if let Some(id) = &self.id {
            s.push_str(",\"id\":");
            s.push_str(&q(id));
        }
        for (k, v) in &self.fields {
            if !keep(k) {
                continue;
            }
            s.push(',');
            s.push_str(&q(k));
            s.push(':');
            s.push_str(&serde_json::to_string(v).unwrap_or_else(|_| "null".into()));
        }
        s.push('}');
        s
    }
}

/// Cuts every string in `v` longer than [`TEXT_MAX`]; returns the bytes the cut strings
/// held (0: nothing cut).
fn clip_strings(v: &mut Value) -> u64 {
    match v {
        Value::String(s) if s.len() > TEXT_MAX => {
            let n = s.len() as u64;
            let mut end = TEXT_MAX;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
            n
        }
        Value::Array(a) => a.iter_mut().map(clip_strings).sum(),
        Value::Object(o) => o.values_mut().map(clip_strings).sum(),
        _ => 0,
    }
}

/// A source timestamp as v1 writes it: RFC 3339 texts are kept as written; a date-time
/// without a zone (Letta, some Python exports) is taken as UTC with `Z` added, and the
/// second value says so (the event then carries `x_tz_assumed`). `None` for anything else.
pub fn rfc3339(s: &str) -> Option<(String, bool)> {
    let s = s.trim();
    if parse_rfc3339(s).is_some() {
        return Some((s.to_string(), false));
    }
    let utc = format!("{s}Z");
    parse_rfc3339(&utc).is_some().then_some((utc, true))
}

/// Milliseconds since the Unix epoch as an RFC 3339 UTC text with milliseconds.
pub fn from_unix_millis(ms: i64) -> Option<String> {
    // Years 0..=9999 only (what RFC 3339 can write).
    if !(-62_167_219_200_000..253_402_300_800_000).contains(&ms) {
        return None;
    }
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = crate::trace::time::civil_from_days(days);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    ))
}

/// Seconds since the Unix epoch (a float) as RFC 3339, to the millisecond.
pub fn from_unix_seconds(secs: f64) -> Option<String> {
    if !secs.is_finite() {
        return None;
    }
    from_unix_millis((secs * 1000.0).round() as i64)
}

/// `duration_ms` of an event from its start and end times (RFC 3339 texts, or epoch
/// milliseconds as LangSmith's JS SDK writes them): milliseconds rounded to the
/// microsecond; `null` when either is missing or the end is before the start.
pub fn duration_ms(start: Option<&Value>, end: Option<&Value>) -> Value {
    let secs = |v: Option<&Value>| match v? {
        Value::String(s) => crate::trace::time::parse_rfc3339(s.trim())
            .or_else(|| rfc3339(s).and_then(|(t, _)| crate::trace::time::parse_rfc3339(&t))),
        Value::Number(n) => n.as_f64().map(|ms| ms / 1000.0),
        _ => None,
    };
    match (secs(start), secs(end)) {
        (Some(a), Some(b)) if b >= a => ms_value((b - a) * 1000.0),
        _ => Value::Null,
    }
}

/// `duration_ms` from a number of seconds (Inspect's `working_time`, maybe written as a
/// string); `null` for anything else.
pub fn seconds_to_ms(v: Option<&Value>) -> Value {
    let secs = match v {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match secs {
        Some(s) if s.is_finite() && s >= 0.0 => ms_value(s * 1000.0),
        _ => Value::Null,
    }
}

/// Milliseconds as a JSON number: whole when they are, else to the microsecond.
fn ms_value(ms: f64) -> Value {
    let us = (ms * 1000.0).round();
    if us % 1000.0 == 0.0 {
        Value::from((us / 1000.0) as i64)
    } else {
        serde_json::Number::from_f64(us / 1000.0).map_or(Value::Null, Value::Number)
    }
}

/// A string that holds JSON (double-encoded, as many exporters write arguments, inputs and
/// metadata), decoded once; the string itself when it is not JSON.
pub fn decode_nested(v: &Value) -> Value {
    match v {
        Value::String(s) => {
            let t = s.trim_start();
            if t.starts_with('{') || t.starts_with('[') {
                serde_json::from_str(s).unwrap_or_else(|_| v.clone())
            } else {
                v.clone()
            }
        }
        other => other.clone(),
    }
}

/// The kind of an event named after a source's own category (a Langfuse observation type, a
/// LangSmith run type): the name, unless it is a v1 kind, whose fields the source's event
/// would not have (a run of type `announce` is no announcement): then `<source>_<name>`.
pub fn source_kind(source: &str, name: &str) -> String {
    if crate::trace::Kind::from_name(name).is_some() || name.is_empty() {
        format!("{source}_{name}")
    } else {
        name.to_string()
    }
}

/// A value as one line of text: strings as they are, anything else as compact JSON.
pub fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Item, Reader, ReaderConfig};

    #[test]
    fn written_lines_read_back_clean_with_seq_per_session() {
        let mut out = V1Out::default();
        out.event("a", "thought")
            .ts(Some("2025-01-01T00:00:00Z".into()))
            .text("text", "hello \u{1b}[2J")
            .from("messages[0]")
            .emit();
        out.event("b", "log").field("level", "info").emit();
        out.event("a", "belief")
            .id(Some("x"))
            .field("name", "n")
            .field("value", Value::Null)
            .emit();
        let text = out.finish().v1;
        let mut r = Reader::new("t", ReaderConfig::default());
        let mut items = Vec::new();
        r.feed(&text, &mut items);
        r.finish(&mut items);
        let evs: Vec<_> = items
            .iter()
            .map(|i| match i {
                Item::Event(e) => e,
                Item::Problem(p) => panic!("{p:?}"),
            })
            .collect();
        assert_eq!(evs.len(), 3);
        assert_eq!((&*evs[0].session, evs[0].seq), ("a", 1));
        assert_eq!((&*evs[1].session, evs[1].seq), ("b", 1));
        assert_eq!((&*evs[2].session, evs[2].seq), ("a", 2));
        assert_eq!(
            evs[0].extra.value("x_from"),
            Some(Value::from("messages[0]"))
        );
        assert!(evs[2].extra.get("value").is_none(), "null left out");
    }

    #[test]
    fn long_text_is_cut_and_said_so() {
        let mut out = V1Out::default();
        let long = "é".repeat(TEXT_MAX);
        out.event("s", "thought").text("text", &long).emit();
        let text = out.finish().v1;
        assert!(text.len() < TEXT_MAX + 200);
        let line: Value = serde_json::from_slice(&text).expect("one JSON line");
        assert_eq!(line["x_truncated"]["text"], long.len() as u64);
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            rfc3339("2025-04-01T03:47:27"),
            Some(("2025-04-01T03:47:27Z".into(), true))
        );
        assert_eq!(
            rfc3339("2024-10-11T20:58:24.544431+00:00"),
            Some(("2024-10-11T20:58:24.544431+00:00".into(), false))
        );
        assert_eq!(rfc3339("yesterday"), None);
        assert_eq!(
            from_unix_millis(1_728_803_137_170).as_deref(),
            Some("2024-10-13T07:05:37.170Z")
        );
        assert_eq!(from_unix_millis(i64::MAX), None);
        assert_eq!(
            from_unix_seconds(1_767_225_600.25).as_deref(),
            Some("2026-01-01T00:00:00.250Z")
        );
    }
}
