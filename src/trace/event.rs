//! The typed event schema of trace format v1 (contract §2).
//!
//! An [`Event`] is the envelope (`kind`, `v`, `seq`, `ts`, `session`, `id`), a typed [`Body`]
//! for the kind, the fields this reader does not know (`extra`, kept verbatim) and its
//! [`Origin`] (file, line, byte offset), so that any view can point back at the line.
//!
//! Formula fields stay strings here: parsing them is the `logic` layer's job and interpreting
//! them is the `model` layer's. Unknown kinds become [`Body::Unknown`] with every field in
//! `extra`, so nothing in a trace is lost.
//!
//! Defaults the contract fixes (role `fact`, confidence 1, ...) are materialized when a line
//! is read, so consumers never re-implement them. `seq` and `session` default to values that
//! depend on where the line was read (line number, file name); the `*_given` flags record
//! whether the line carried them, so that writing an event back reproduces the line's fields.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The string type of event fields: strings up to 24 bytes (ids, sources, most formulas,
/// timestamps) are stored inline, which halves the memory of a loaded trace and saves most
/// allocations while reading.
pub type Text = compact_str::CompactString;

/// The highest trace format version this reader understands.
pub const FORMAT_VERSION: u8 = 1;

/// A shared name: the stream events were read from, or an event's session. Every event holds
/// two and every problem one, so it is a single shared pointer (an `Arc<str>` would be two
/// words in each of millions of events). It reads as a `str`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
// The inner box is the point: it makes the shared pointer thin.
#[allow(clippy::redundant_allocation)]
pub struct FileName(Arc<Box<str>>);

impl FileName {
    /// A new shared name.
    pub fn new(name: &str) -> Self {
        FileName(Arc::new(Box::from(name)))
    }
}

impl FileName {
    /// The address of the shared name, equal for all clones of one name: a cache key that
    /// stays valid while a clone is held.
    pub fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// Whether `a` and `b` are clones of one shared name (a pointer comparison).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl From<&str> for FileName {
    fn from(name: &str) -> Self {
        FileName::new(name)
    }
}

impl std::ops::Deref for FileName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for FileName {
    fn as_ref(&self) -> &str {
        self
    }
}

impl std::borrow::Borrow<str> for FileName {
    fn borrow(&self) -> &str {
        self
    }
}

impl fmt::Display for FileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for FileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Where an event (or a problem) came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The file (or stream) name as given to the reader.
    pub file: FileName,
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the start of the line in the stream.
    pub offset: u64,
}

/// A timestamp: its value in Unix seconds for ordering, and how it was written, so that it is
/// written back unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct Timestamp {
    /// Seconds since the Unix epoch (UTC). `f64` keeps sub-microsecond precision for current
    /// dates, which is enough to order events.
    pub unix_seconds: f64,
    raw: TsRaw,
}

/// How a timestamp was written. Nearly every producer writes UTC with `Z` in whole seconds or
/// milliseconds, or plain Unix seconds; those spellings are re-created from the value, so a
/// timestamp costs no text (this keeps [`Event`] at 120 bytes). Anything else is kept as
/// written.
#[derive(Debug, Clone, PartialEq)]
enum TsRaw {
    /// RFC 3339 exactly as [`render_utc`] writes the value.
    Utc { millis: bool },
    /// A JSON integer equal to the value.
    UnixInt,
    /// A JSON float whose shortest form is the value.
    UnixFloat,
    /// Any other spelling, as written.
    Other(Box<Written>),
}

#[derive(Debug, Clone, PartialEq)]
enum Written {
    Rfc3339(Box<str>),
    Unix(serde_json::Number),
}

impl Timestamp {
    /// A timestamp written as the RFC 3339 string `text`, whose value is `unix_seconds`.
    pub(crate) fn from_rfc3339(text: &str, unix_seconds: f64) -> Self {
        let raw = match utc_shape(text.as_bytes()) {
            Some(millis) => TsRaw::Utc { millis },
            None => TsRaw::Other(Box::new(Written::Rfc3339(Box::from(text)))),
        };
        Timestamp { unix_seconds, raw }
    }

    /// A timestamp from an RFC 3339 text in the usual UTC spelling, without the general
    /// parser: `None` for any other text (including invalid dates), which the caller then
    /// parses in full. The value is computed with exactly the general parser's arithmetic (a
    /// property test compares the two on valid and invalid texts).
    pub(crate) fn from_utc_text(text: &str) -> Option<Self> {
        Self::from_utc_bytes(text.as_bytes())
    }

    /// [`Self::from_utc_text`] of the text's bytes (the brief scanner reads the usual
    /// timestamp straight from the line's bytes).
    pub(crate) fn from_utc_bytes(b: &[u8]) -> Option<Self> {
        let millis = utc_shape(b)?;
        let num =
            |r: std::ops::Range<usize>| b[r].iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
        let (hour, minute, second) = (num(11..13), num(14..16), num(17..19));
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        // The lines of a trace mostly share their date: the day number of the last date
        // read on this thread is taken again when the date's bytes are the same.
        let date: [u8; 10] = b.get(..10)?.try_into().ok()?;
        let days = match LAST_DATE.get() {
            (last, days) if last == date && days != i64::MIN => days,
            _ => {
                let days = days_of(num(0..4), num(5..7), num(8..10))?;
                LAST_DATE.set((date, days));
                days
            }
        };
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second;
        let frac = if millis {
            (num(20..23) as u64 * 1_000_000) as f64 / 1e9
        } else {
            0.0
        };
        Some(Timestamp {
            unix_seconds: secs as f64 + frac,
            raw: TsRaw::Utc { millis },
        })
    }

    /// A timestamp written as the JSON number `n`, whose value is `unix_seconds`.
    pub(crate) fn from_unix(n: serde_json::Number, unix_seconds: f64) -> Self {
        let raw = if n.is_f64() {
            if serde_json::Number::from_f64(unix_seconds).as_ref() == Some(&n) {
                TsRaw::UnixFloat
            } else {
                TsRaw::Other(Box::new(Written::Unix(n)))
            }
        } else if unix_seconds.abs() < 9e15 && serde_json::Number::from(unix_seconds as i64) == n {
            TsRaw::UnixInt
        } else {
            TsRaw::Other(Box::new(Written::Unix(n)))
        };
        Timestamp { unix_seconds, raw }
    }

    /// The timestamp as written in the trace: an RFC 3339 string or a number.
    pub fn as_written(&self) -> Value {
        let mut buf = [0u8; 24];
        match &self.raw {
            TsRaw::Utc { millis } => Value::String(
                render_utc(self.unix_seconds, *millis, &mut buf)
                    .unwrap_or_default()
                    .to_string(),
            ),
            TsRaw::UnixInt => Value::from(self.unix_seconds as i64),
            TsRaw::UnixFloat => Value::from(self.unix_seconds),
            TsRaw::Other(w) => match &**w {
                Written::Rfc3339(s) => Value::String(s.to_string()),
                Written::Unix(n) => Value::Number(n.clone()),
            },
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; 24];
        match &self.raw {
            // Only values that rendered before are stored this way, so this renders again.
            TsRaw::Utc { millis } => s.serialize_str(
                render_utc(self.unix_seconds, *millis, &mut buf).unwrap_or_default(),
            ),
            TsRaw::UnixInt => s.serialize_i64(self.unix_seconds as i64),
            TsRaw::UnixFloat => s.serialize_f64(self.unix_seconds),
            TsRaw::Other(w) => match &**w {
                Written::Rfc3339(t) => s.serialize_str(t),
                Written::Unix(n) => n.serialize(s),
            },
        }
    }
}

/// Whether a valid RFC 3339 text is spelled exactly as [`render_utc`] writes its value:
/// `YYYY-MM-DDTHH:MM:SSZ` or with `.mmm`, not a leap second; `Some(true)` with milliseconds.
/// Checking the shape is enough: such a text's value (whole seconds plus at most three
/// decimals, years 0..=9999) renders back to the same digits, as a property test checks.
fn utc_shape(t: &[u8]) -> Option<bool> {
    let millis = match t.len() {
        20 => false,
        24 => true,
        _ => return None,
    };
    let digit_at = |i: usize| t.get(i).is_some_and(u8::is_ascii_digit);
    let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];
    let marks = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    let ok = digits.iter().all(|&i| digit_at(i))
        && marks.iter().all(|&(i, c)| t.get(i) == Some(&c))
        && t.get(17..19) != Some(b"60")
        && if millis {
            t.get(19) == Some(&b'.') && (20..23).all(digit_at) && t.get(23) == Some(&b'Z')
        } else {
            t.get(19) == Some(&b'Z')
        };
    ok.then_some(millis)
}

std::thread_local! {
    /// The date (`YYYY-MM-DD`) of the last usual UTC time read on this thread and its day
    /// number ([`days_of`]); `i64::MIN` before any.
    static LAST_DATE: std::cell::Cell<([u8; 10], i64)> =
        const { std::cell::Cell::new(([0; 10], i64::MIN)) };
}

/// Days from 1970-01-01 to the date `year`-`month`-`day`, `None` for a date that does not
/// exist (Howard Hinnant's days_from_civil, as in the general parser).
fn days_of(year: i64, month: i64, day: i64) -> Option<i64> {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&month) || !(1..=month_days).contains(&day) {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    Some(era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468)
}

/// Writes `secs` as `YYYY-MM-DDTHH:MM:SSZ`, or with `.mmm` milliseconds, into `buf`. `None`
/// outside years 0..=9999 or for a fraction in whole-second form.
fn render_utc(secs: f64, millis: bool, buf: &mut [u8; 24]) -> Option<&str> {
    if !secs.is_finite() || !(-62_167_219_200.0..253_402_300_800.0).contains(&secs) {
        return None;
    }
    let (whole, ms) = if millis {
        let total = (secs * 1000.0).round() as i64;
        (total.div_euclid(1000), total.rem_euclid(1000))
    } else {
        if secs.fract() != 0.0 {
            return None;
        }
        (secs as i64, 0)
    };
    let days = whole.div_euclid(86_400);
    let rem = whole.rem_euclid(86_400);
    let (year, month, day) = super::time::civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return None;
    }
    let mut put = |at: usize, n: i64, width: usize| {
        let mut n = n;
        for i in (0..width).rev() {
            buf[at + i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, year, 4);
    put(5, month, 2);
    put(8, day, 2);
    put(11, rem / 3600, 2);
    put(14, rem % 3600 / 60, 2);
    put(17, rem % 60, 2);
    let len = if millis {
        put(20, ms, 3);
        buf[19] = b'.';
        buf[23] = b'Z';
        24
    } else {
        buf[19] = b'Z';
        20
    };
    for (i, c) in [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')] {
        buf[i] = c;
    }
    std::str::from_utf8(&buf[..len]).ok()
}

macro_rules! kinds {
    ($( $variant:ident => $name:literal ),* $(,)?) => {
        /// The event kinds of format v1. Unknown kinds are not in this enum; they are kept as
        /// [`Body::Unknown`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kind { $( #[doc = concat!("`", $name, "`")] $variant ),* }

        impl Kind {
            /// Every known kind, in contract order.
            pub const ALL: &'static [Kind] = &[ $( Kind::$variant ),* ];

            /// The name used in the `kind` field.
            pub fn as_str(self) -> &'static str {
                match self { $( Kind::$variant => $name ),* }
            }

            /// The kind with this name, if it is a v1 kind.
            pub fn from_name(name: &str) -> Option<Kind> {
                match name { $( $name => Some(Kind::$variant), )* _ => None }
            }
        }
    };
}

kinds! {
    Session => "session",
    Announce => "announce",
    Retract => "retract",
    Verify => "verify",
    Revise => "revise",
    Query => "query",
    Answer => "answer",
    Thought => "thought",
    World => "world",
    Turn => "turn",
    Belief => "belief",
    SchemaBelief => "schema_belief",
    Desire => "desire",
    Intention => "intention",
    Plan => "plan",
    Step => "step",
    Postcondition => "postcondition",
    Satisfaction => "satisfaction",
    Review => "review",
    PlanStats => "plan_stats",
    Log => "log",
    Score => "score",
    Gate => "gate",
}

impl Kind {
    /// Position of this kind in [`Kind::ALL`], for per-kind tables.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Where the line was read.
    pub origin: Origin,
    /// Format version (`v`); 1 when absent (lines with a newer version are rejected, so this is
    /// at most [`FORMAT_VERSION`]).
    pub v: u8,
    /// Whether the line carried `v`.
    pub v_given: bool,
    /// Sequence number within the session; the line number when absent.
    pub seq: u64,
    /// Whether the line carried `seq`.
    pub seq_given: bool,
    /// The timestamp, if any.
    pub ts: Option<Timestamp>,
    /// The session; the file name when absent.
    pub session: FileName,
    /// Whether the line carried `session`.
    pub session_given: bool,
    /// The optional `id` (a belief id for `announce`, the intention or plan id for those kinds).
    pub id: Option<Text>,
    /// The typed fields of the kind.
    pub body: Body,
    /// Fields this reader does not know, kept verbatim.
    pub extra: Extra,
}

/// The fields of an event this reader does not know, in line order, each as the JSON text
/// it was written with: numbers keep every digit (`123456789012345678901234567890` is not
/// rounded to an `f64`), and a value costs its own text, never a tree of nodes per element (a
/// 4 MiB list of numbers would be about 16 times that as a [`Value`]). The text is at most a
/// line, which the reader caps. Most events have none, so this is one pointer (8 bytes, no
/// allocation when empty) rather than a map (whose first node alone costs hundreds of bytes).
///
/// A field whose name this format version defines for other kinds (a `formula` on a
/// `session`) is kept as its parsed value written back as JSON.
#[derive(Debug, Clone, Default)]
// The box is the point: 8 bytes in every event instead of the 24 of an empty `Vec`.
#[allow(clippy::box_collection)]
pub struct Extra(Option<Box<Vec<RawField>>>);

/// One unknown field: its name and its JSON text.
pub type RawField = (String, Box<RawValue>);

impl PartialEq for Extra {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|((a, x), (b, y))| a == b && x.get() == y.get())
    }
}

impl Extra {
    /// The JSON text of an unknown field, as written.
    pub fn get(&self, name: &str) -> Option<&RawValue> {
        self.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    /// The value of an unknown field, parsed (numbers beyond `u64`/`i64` become `f64`;
    /// [`Extra::get`] has the exact text).
    pub fn value(&self, name: &str) -> Option<Value> {
        serde_json::from_str(self.get(name)?.get()).ok()
    }

    /// The unknown fields in line order, as written.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &RawValue)> {
        self.0
            .iter()
            .flat_map(|v| v.iter())
            .map(|(k, v)| (k.as_str(), &**v))
    }

    /// How many unknown fields there are.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |v| v.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl From<Vec<RawField>> for Extra {
    fn from(mut v: Vec<RawField>) -> Self {
        if v.is_empty() {
            return Extra(None);
        }
        v.shrink_to_fit();
        Extra(Some(Box::new(v)))
    }
}

impl Serialize for Extra {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// `text` (one JSON value, such as [`Event::to_json_line`] writes) indented by two spaces per
/// level, in the layout of `serde_json::to_string_pretty`, but token by token: keys stay in
/// line order and numbers and strings keep their exact text, which a round trip through a
/// [`Value`] would not (a 30-digit number would become an `f64`). Text that is not JSON is
/// re-indented all the same, never rejected.
///
/// Only the first [`PRETTY_DEPTH`] levels are laid out; anything deeper stays on the line of
/// the level that holds it, as written. Indenting every level would make the text grow with
/// the square of the nesting: a 40 KB field nested 20,000 deep became 800 MB of spaces.
pub fn pretty_json(text: &str) -> String {
    fn newline(out: &mut String, depth: usize) {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    }
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let mut depth = 0usize;
    let (mut in_str, mut esc) = (false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push(c);
            }
            '{' | '[' => {
                while chars.next_if(|c| c.is_ascii_whitespace()).is_some() {}
                let close = if c == '{' { '}' } else { ']' };
                out.push(c);
                if chars.next_if_eq(&close).is_some() {
                    out.push(close);
                } else {
                    depth += 1;
                    if depth <= PRETTY_DEPTH {
                        newline(&mut out, depth);
                    }
                }
            }
            '}' | ']' => {
                if depth <= PRETTY_DEPTH {
                    newline(&mut out, depth.saturating_sub(1));
                }
                depth = depth.saturating_sub(1);
                out.push(c);
            }
            ',' => {
                out.push(',');
                if depth <= PRETTY_DEPTH {
                    newline(&mut out, depth);
                }
            }
            ':' => out.push_str(": "),
            c if c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

/// The levels of nesting [`pretty_json`] lays out one item a line.
pub const PRETTY_DEPTH: usize = 16;

impl Event {
    /// The kind, or `None` for a kind this reader does not know.
    pub fn kind(&self) -> Option<Kind> {
        self.body.kind()
    }

    /// The kind's name as written in the trace (also for unknown kinds).
    pub fn kind_name(&self) -> &str {
        match &self.body {
            Body::Unknown(u) => &u.kind,
            b => b.kind().map(Kind::as_str).unwrap_or(""),
        }
    }

    /// Writes the event back as one JSON line (without the newline). Fields the line did not
    /// carry and that depend on where it was read (`v`, `seq`, `session`) are left out again;
    /// contract defaults that were materialized (role, confidence) are written explicitly.
    pub fn to_json_line(&self) -> String {
        // Serializing our own plain data cannot fail: all map keys are strings.
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out<'a> {
            kind: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            v: Option<u8>,
            #[serde(skip_serializing_if = "Option::is_none")]
            seq: Option<u64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            ts: Option<&'a Timestamp>,
            #[serde(skip_serializing_if = "Option::is_none")]
            session: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            id: Option<&'a str>,
            #[serde(flatten)]
            body: &'a Body,
            #[serde(flatten)]
            extra: &'a Extra,
        }
        Out {
            kind: self.kind_name(),
            v: self.v_given.then_some(self.v),
            seq: self.seq_given.then_some(self.seq),
            ts: self.ts.as_ref(),
            session: self.session_given.then_some(&*self.session),
            id: self.id.as_deref(),
            body: &self.body,
            extra: &self.extra,
        }
        .serialize(s)
    }
}

/// The typed fields of one event, by kind. Every variant is boxed: the enum is then 16 bytes
/// and each event pays only for its own kind's fields, instead of every event paying for the
/// largest kind (this cut the memory of a loaded mixed trace by about a quarter).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Body {
    /// `session`
    Session(Box<Session>),
    /// `announce`
    Announce(Box<Announce>),
    /// `retract`
    Retract(Box<Retract>),
    /// `verify`
    Verify(Box<Verify>),
    /// `revise`
    Revise(Box<Revise>),
    /// `query`
    Query(Box<Query>),
    /// `answer`
    Answer(Box<Answer>),
    /// `thought`
    Thought(Box<Thought>),
    /// `world`
    World(Box<World>),
    /// `turn`
    Turn(Box<Turn>),
    /// `belief`
    Belief(Box<Belief>),
    /// `schema_belief`
    SchemaBelief(Box<TextEvent>),
    /// `desire`
    Desire(Box<TextEvent>),
    /// `intention`
    Intention(Box<Intention>),
    /// `plan`
    Plan(Box<Plan>),
    /// `step`
    Step(Box<Step>),
    /// `postcondition`
    Postcondition(Box<Postcondition>),
    /// `satisfaction`
    Satisfaction(Box<Satisfaction>),
    /// `review`
    Review(Box<Review>),
    /// `plan_stats`
    PlanStats(Box<PlanStats>),
    /// `log`
    Log(Box<Log>),
    /// `score`
    Score(Box<Score>),
    /// `gate`
    Gate(Box<Gate>),
    /// A kind this reader does not know; all its fields are in [`Event::extra`].
    Unknown(Box<UnknownKind>),
}

impl Body {
    /// The kind, or `None` for [`Body::Unknown`].
    pub fn kind(&self) -> Option<Kind> {
        Some(match self {
            Body::Session(_) => Kind::Session,
            Body::Announce(_) => Kind::Announce,
            Body::Retract(_) => Kind::Retract,
            Body::Verify(_) => Kind::Verify,
            Body::Revise(_) => Kind::Revise,
            Body::Query(_) => Kind::Query,
            Body::Answer(_) => Kind::Answer,
            Body::Thought(_) => Kind::Thought,
            Body::World(_) => Kind::World,
            Body::Turn(_) => Kind::Turn,
            Body::Belief(_) => Kind::Belief,
            Body::SchemaBelief(_) => Kind::SchemaBelief,
            Body::Desire(_) => Kind::Desire,
            Body::Intention(_) => Kind::Intention,
            Body::Plan(_) => Kind::Plan,
            Body::Step(_) => Kind::Step,
            Body::Postcondition(_) => Kind::Postcondition,
            Body::Satisfaction(_) => Kind::Satisfaction,
            Body::Review(_) => Kind::Review,
            Body::PlanStats(_) => Kind::PlanStats,
            Body::Log(_) => Kind::Log,
            Body::Score(_) => Kind::Score,
            Body::Gate(_) => Kind::Gate,
            Body::Unknown(_) => return None,
        })
    }
}

/// The body of an event of unknown kind: only the name; the fields are in [`Event::extra`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnknownKind {
    /// The `kind` as written.
    #[serde(skip)]
    pub kind: String,
}

/// `session`: who is writing the trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Session {
    /// The agent's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<Text>,
    /// The model behind the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Text>,
    /// Free-form metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<Value>>,
}

/// The role of an announced formula.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A plain fact (default).
    #[default]
    Fact,
    /// A rule (usually an implication, possibly quantified).
    Rule,
    /// A norm: must never be given up by revision.
    Norm,
    /// An assumption: the first thing to give up.
    Assumption,
}

/// `announce`: the agent adds a formula to its belief set Σ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Announce {
    /// The formula (contract §3 syntax), required.
    pub formula: Text,
    /// Where it came from (`user`, `tool:ping_test`, `inference`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Text>,
    /// Its role; `fact` when absent.
    pub role: Role,
    /// Confidence in 0..1; 1 when absent.
    pub confidence: f64,
    /// Ids of the premises it was derived from.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub because: Vec<Text>,
    /// The natural-language original.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<Text>,
}

/// Who retracted a belief.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetractBy {
    /// The agent itself.
    Agent,
    /// A revision step.
    Revision,
    /// The user.
    User,
}

/// `retract`: a belief leaves Σ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retract {
    /// The belief id or formula retracted, required.
    pub target: Text,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Text>,
    /// Who retracted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<RetractBy>,
}

/// The outcome of the verification gate Θ(Σ, φ) as the agent claims it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Σ ∧ φ is unsatisfiable.
    Contradiction,
    /// Σ ⊨ φ.
    Entailed,
    /// Neither: φ is new information.
    Newinfo,
    /// φ cites premises that are not in Σ.
    Ungrounded,
}

/// `verify`: the agent ran its verification gate on one or more formulas.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verify {
    /// The formula checked (`formula`); at least one of `formula` / `formulas` is present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formula: Option<Text>,
    /// Several formulas checked together (`formulas`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formulas: Option<Vec<Text>>,
    /// The outcome the agent claims.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Ids of the beliefs cited.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub because: Vec<Text>,
    /// The method used (`sat`, `llm`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Text>,
    /// The verification tier (a number or a name), kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<Box<Value>>,
    /// Free-form detail (text or object).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<Box<Value>>,
}

impl Verify {
    /// All formulas checked, whichever field they were written in.
    pub fn all_formulas(&self) -> impl Iterator<Item = &str> {
        self.formula
            .iter()
            .chain(self.formulas.iter().flatten())
            .map(Text::as_str)
    }
}

/// `revise`: a revision step after a contradiction.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Revise {
    /// The formula or id that triggered it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<Text>,
    /// Ids or formulas given up.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retracted: Vec<Text>,
    /// The policy applied (`greedy`, `recency`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<Text>,
}

/// The answer of a solver QUERY.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryAnswer {
    /// Entailed.
    Yes,
    /// Its negation is entailed.
    No,
    /// Neither.
    Unknown,
}

/// `query`: a QUERY the agent put to its solver.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Query {
    /// The formula asked about, required.
    pub formula: Text,
    /// The answer the agent received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<QueryAnswer>,
}

/// `gate`: a live agent asks Θ(Σ, φ) before it commits to φ. On a live connection the
/// viewer replies on the same connection (see `docs/live.md`); in a file it records that the
/// question was asked. The event's `id` names the question, and the reply's `reply_to`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    /// The formula asked about, required.
    pub formula: Text,
    /// Ids of the premises the agent cites for φ (then `ungrounded` when they, with the rules
    /// and norms, do not entail it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub because: Vec<Text>,
}

/// `answer`: an ANSWER the agent gave.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Answer {
    /// The answer in natural language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<Text>,
    /// The answer as a formula.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub formula: Option<Text>,
    /// Whether the agent hedges the answer (a guess or an opinion, not presented as known):
    /// a hedged answer need not be entailed by Σ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hedged: Option<bool>,
}

/// `thought`: a chain-of-thought step.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Thought {
    /// The text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<Text>,
    /// Formulas the step asserts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub asserts: Vec<Text>,
}

/// `world`: a synthetic propositional world (seed 003).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct World {
    /// The atoms.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub atoms: Vec<Text>,
    /// The rules (formulas).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Text>,
    /// The true assignment: atom -> bool.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub truth: BTreeMap<String, bool>,
}

/// A dialogue reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Reply {
    /// `YES`
    Yes,
    /// `NO`
    No,
    /// `UNKNOWN`
    Unknown,
}

/// `turn`: one dialogue turn (seed 003).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Turn {
    /// The question asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<Text>,
    /// The agent's reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<Reply>,
    /// The literal the reply commits to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub literal: Option<Text>,
    /// The true answer in the world, kept as written (a bool or a reply).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truth: Option<Box<Value>>,
}

/// `belief`: a ground belief, upserted by name (seed 004). Also the shape of
/// [`Step::new_beliefs`] entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Belief {
    /// The belief's name, required (the upsert key).
    pub name: Text,
    /// Its value (any JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Box<Value>>,
    /// The unit of the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Text>,
    /// Where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Text>,
    /// Unknown fields inside a nested belief; always empty for a top-level `belief` event,
    /// whose unknown fields go to [`Event::extra`].
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `schema_belief` and `desire`: a piece of text.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TextEvent {
    /// The text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<Text>,
}

/// `intention`: the intention being pursued (its id is the envelope `id`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Intention {
    /// The intention type (matched against plan libraries).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub intention_type: Option<Text>,
    /// The goal (text or structure), kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal: Option<Box<Value>>,
    /// The satisfaction condition, kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub satisfaction: Option<Box<Value>>,
    /// Parameters still open, kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_parameters: Option<Box<Value>>,
    /// Local files the task names (its attachments): the data the answer needs is in them,
    /// so a step should read them (seed 004's "avoiding file read tool use").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<Text>,
}

/// The kind of a plan step. Open: kinds beyond the three named ones are kept by name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// Fetch information.
    Fetch,
    /// Compute something.
    Compute,
    /// Synthesize the answer.
    Synthesize,
    /// Any other kind, by name.
    #[serde(untagged)]
    Other(String),
}

/// One step of a plan DAG.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    /// The step id (`S1`, ...), required.
    pub id: Text,
    /// The step kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<StepKind>,
    /// What the step does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Text>,
    /// Ids of the steps it depends on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deps: Vec<Text>,
    /// Its postcondition(s), kept as written (a string or a list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post: Option<Box<Value>>,
    /// The arithmetic a compute step performs, over ground-belief names and numbers
    /// (`numerator / denominator`, `round(raw_result, -3)`): what the audit recomputes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute: Option<Text>,
    /// The ground belief the step's result is written to (default: the `X` of a
    /// `ground_belief(X) is known` postcondition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Text>,
    /// Unknown fields of the step.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where a plan came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanOrigin {
    /// Generated for this intention.
    Generated,
    /// Taken from the plan library.
    Library,
}

/// `plan`: a plan DAG (its id is the envelope `id`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plan {
    /// The intention type the plan serves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intention_type: Option<Text>,
    /// Conditions under which the plan applies.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_conditions: Vec<Text>,
    /// The steps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<PlanStep>,
    /// Generated or from the library.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<PlanOrigin>,
}

/// The status of a step execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// Sent to an executor.
    Dispatched,
    /// Finished.
    Done,
    /// Failed.
    Failed,
}

/// `step`: progress of one plan step.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Step {
    /// The plan id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Text>,
    /// The step id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<Text>,
    /// Its status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<StepStatus>,
    /// Whether the executor claims the postcondition holds (self-reported).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_met: Option<bool>,
    /// Ground beliefs the step wrote.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub new_beliefs: Vec<Belief>,
    /// A summary of what happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Text>,
    /// The tools the step called, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The values the step computed from, by ground-belief name (default: the ground
    /// beliefs at its dispatch, seed 004's snapshot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Box<Map<String, Value>>>,
}

/// One tool call of a step (`web_search`, `bash`, `read_file`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The tool's name, required.
    pub tool: Text,
    /// Its arguments, kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Box<Value>>,
    /// What it returned, kept as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Box<Value>>,
    /// The error it reported, if it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Text>,
    /// Unknown fields of the call.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `postcondition`: a check of a step's postcondition.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Postcondition {
    /// The plan id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Text>,
    /// The step id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<Text>,
    /// The verification tier: 1, 2 or 3.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<u8>,
    /// Whether the check passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// How it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_mode: Option<Text>,
    /// The check program run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<Text>,
    /// Free-form detail, kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<Box<Value>>,
}

/// `satisfaction`: whether an intention's satisfaction condition holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Satisfaction {
    /// The intention id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intention: Option<Text>,
    /// Whether it is satisfied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// The answer the harness extracted from the run, kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<Box<Value>>,
    /// The answer the task expects (a benchmark's reference answer), kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<Box<Value>>,
    /// The harness's own score of the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correct: Option<bool>,
    /// The harness's label of how the run failed (seed 004's taxonomy: `bad_retrieval`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_mode: Option<Text>,
}

/// What a review decided for a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReviewAction {
    /// Keep the plan in the library.
    Keep,
    /// Refine it.
    Refine,
    /// Remove it.
    Remove,
}

/// One decision of a review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The plan id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Text>,
    /// The action, required.
    pub action: ReviewAction,
    /// A note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<Text>,
    /// Unknown fields of the decision.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `review`: the plan library review.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Review {
    /// The decisions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
}

/// `plan_stats`: usage counters of a library plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlanStats {
    /// The plan id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Text>,
    /// How often it was used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_count: Option<u64>,
    /// How often it succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub success_count: Option<u64>,
    /// How often it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_count: Option<u64>,
}

/// `log`: a free-form log message.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Log {
    /// The level (`info`, `warn`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<Text>,
    /// The message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Text>,
}

/// The value of a `score`: a number, a label or a pass/fail.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ScoreValue {
    /// A number, with every digit as written.
    Number(serde_json::Number),
    /// A string (`C`, `I`, `correct`, a category).
    Text(Text),
    /// Pass or fail.
    Bool(bool),
}

impl fmt::Display for ScoreValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScoreValue::Number(n) => write!(f, "{n}"),
            ScoreValue::Text(t) => f.write_str(t),
            ScoreValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// `score`: a score or evaluation of the agent's work (an eval scorer, an LLM judge, a human
/// annotation). It holds no formula and changes no belief: it is shown, never reasoned with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    /// What is scored (`accuracy`, `helpfulness`, the scorer's metric), required.
    pub name: Text,
    /// The score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<ScoreValue>,
    /// A category label beside a numeric value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<Text>,
    /// Why the scorer gave it (an explanation, a reviewer's comment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Text>,
    /// What it scores: the `id` of an event of the session (an answer, a plan step, an
    /// imported span); absent for the session as a whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Text>,
    /// Who scored: `human`, `llm`, `code`, or the scorer's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Text>,
    /// Whether the scored work passed, when the scorer says so (an importer that knows the
    /// source's scale writes it: Inspect's `C`/`I`); absent when the source does not say
    /// what passing is. `false` is the audit's `score-failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
}

/// The body of an event the store may not have been able to read again: what
/// [`super::EventStore::load`] gives, looked at.
pub fn body_of<'a>(loaded: &'a Option<std::borrow::Cow<'_, Event>>) -> Option<&'a Body> {
    loaded.as_deref().map(|e| &e.body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::time::parse_rfc3339;
    use proptest::prelude::*;

    /// A loaded trace is mostly `Vec<Event>`: its size is the memory budget's biggest term.
    #[test]
    fn an_event_stays_at_120_bytes() {
        assert!(std::mem::size_of::<Event>() <= 120);
        assert!(std::mem::size_of::<Option<Timestamp>>() <= 24);
        assert_eq!(std::mem::size_of::<Origin>(), 24);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Every RFC 3339 spelling is written back exactly as read, whether it is stored as
        /// text or re-created from its value.
        #[test]
        fn rfc3339_timestamps_are_written_back_unchanged(
            y in 0i64..=9999, mo in 1u32..=12, d in 1u32..=28,
            h in 0u32..24, mi in 0u32..60, s in prop_oneof![0u32..60, Just(60)],
            frac in prop_oneof![Just(""), Just(".5"), Just(".000"), Just(".999"),
                Just(".123"), Just(".123456"), Just(".1234567890")],
            ms in 0u32..1000,
            zone in prop_oneof![Just("Z"), Just("z"), Just("+02:00"), Just("-00:30")],
            sep in prop_oneof![Just("T"), Just("t"), Just(" ")],
        ) {
            let frac = if frac == ".123" { format!(".{ms:03}") } else { frac.to_string() };
            let text = format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}{zone}");
            let secs = parse_rfc3339(&text);
            prop_assert!(secs.is_some(), "{}", text);
            let ts = Timestamp::from_rfc3339(&text, secs.unwrap_or_default());
            prop_assert_eq!(ts.as_written(), Value::String(text.clone()));
            // The usual spellings cost no text.
            if zone == "Z" && sep == "T" && (frac.is_empty() || frac.len() == 4) && s < 60 {
                prop_assert!(matches!(ts.raw, TsRaw::Utc { .. }), "{:?}", ts);
            }
            prop_assert_eq!(serde_json::to_string(&ts).ok(), serde_json::to_string(&text).ok());
        }

        /// The shortcut for the usual spelling agrees with the general parser bit for bit, and
        /// declines whatever the parser rejects (impossible dates, hours, leap seconds).
        #[test]
        fn the_utc_shortcut_agrees_with_the_parser(
            y in prop_oneof![0i64..=9999, Just(2000), Just(1900), Just(2024), Just(2026)],
            mo in prop_oneof![0u32..=13, Just(2)],
            d in prop_oneof![0u32..=32, 28u32..=31],
            h in 0u32..=24, mi in 0u32..=60, s in 0u32..=61, ms in 0u32..1000,
            millis in any::<bool>(),
        ) {
            let frac = if millis { format!(".{ms:03}") } else { String::new() };
            // Each date twice, at two times (the second read takes the day number of the
            // first), after a time of another date (whose day number it must not take).
            let other = format!("{:04}-01-01T00:00:00Z", (y + 1) % 10_000);
            let times = [
                other,
                format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{frac}Z"),
                format!("{y:04}-{mo:02}-{d:02}T{:02}:{mi:02}:{s:02}Z", (h + 7) % 25),
            ];
            for text in times {
                let parsed = parse_rfc3339(&text);
                match Timestamp::from_utc_text(&text) {
                    Some(ts) => {
                        prop_assert_eq!(
                            parsed.map(f64::to_bits),
                            Some(ts.unix_seconds.to_bits()),
                            "{}",
                            text
                        );
                        prop_assert_eq!(ts.as_written(), Value::String(text.clone()));
                    }
                    None => prop_assert!(
                        parsed.is_none() || text.get(17..19) == Some("60"),
                        "{}",
                        text
                    ),
                }
            }
        }

        /// Numeric timestamps are written back as the same JSON number.
        #[test]
        fn unix_timestamps_are_written_back_unchanged(
            n in prop_oneof![
                any::<i64>().prop_map(serde_json::Number::from),
                any::<u64>().prop_map(serde_json::Number::from),
                (-1e12f64..1e12).prop_filter_map("finite", serde_json::Number::from_f64),
                (0u64..4_000_000_000_000).prop_filter_map("ms", |ms| {
                    serde_json::from_str(&format!("{}.{:03}", ms / 1000, ms % 1000)).ok()
                }),
            ]
        ) {
            let secs = n.as_f64().unwrap_or_default();
            let ts = Timestamp::from_unix(n.clone(), secs);
            prop_assert_eq!(ts.as_written(), Value::Number(n.clone()));
            if n.as_i64().is_some_and(|i| i.unsigned_abs() < 1 << 53) || n.is_f64() {
                prop_assert!(!matches!(ts.raw, TsRaw::Other(_)), "{:?}", ts);
            }
            prop_assert_eq!(serde_json::to_string(&ts).ok(), serde_json::to_string(&n).ok());
        }
    }
}
