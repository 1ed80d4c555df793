//! The one shape every OpenTelemetry source is read into (OTLP JSON, the SDKs' `to_json`
//! dumps, protobuf from the receiver): a span with decoded ids and nanosecond times, and its
//! attributes as typed values. The mapping to v1 (`map.rs`) sees only this.

use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine as _;

use super::json_value::{Json, push_i64, push_str, write_number, write_object};

/// An attribute value, as OTLP's `AnyValue` or plain JSON gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val<'a> {
    /// Absent or JSON `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Double(f64),
    /// A string.
    Str(Cow<'a, str>),
    /// Bytes (`bytesValue`).
    Bytes(Vec<u8>),
    /// An array.
    Array(Vec<Val<'a>>),
    /// A key-value list (or a JSON object).
    Map(Vec<(Cow<'a, str>, Val<'a>)>),
}

impl Val<'_> {
    /// The string, when it is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An integer, also from a float without fraction or a decimal string.
    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Double(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i64),
            Val::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// The value as JSON, borrowing its strings.
    pub(crate) fn to_json(&self) -> Json<'_> {
        match self {
            Val::Null => Json::Null,
            Val::Bool(b) => Json::Bool(*b),
            Val::Int(i) => Json::Num((*i).into()),
            Val::Double(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Num),
            Val::Str(s) => Json::Str(Cow::Borrowed(s)),
            Val::Bytes(b) => Json::Str(Cow::Owned(
                base64::engine::general_purpose::STANDARD.encode(b),
            )),
            Val::Array(a) => Json::Arr(a.iter().map(Val::to_json).collect()),
            Val::Map(m) => Json::Obj(
                m.iter()
                    .map(|(k, v)| (Cow::Borrowed(&**k), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// Writes the value as compact JSON (what [`Val::to_json`] would write, without
    /// building it).
    pub(crate) fn write_json(&self, buf: &mut Vec<u8>) {
        match self {
            Val::Null => buf.extend_from_slice(b"null"),
            Val::Bool(true) => buf.extend_from_slice(b"true"),
            Val::Bool(false) => buf.extend_from_slice(b"false"),
            Val::Int(i) => push_i64(buf, *i),
            Val::Double(f) => match serde_json::Number::from_f64(*f) {
                Some(n) => write_number(&n, buf),
                None => buf.extend_from_slice(b"null"),
            },
            Val::Str(s) => push_str(buf, s),
            Val::Bytes(b) => push_str(buf, &base64::engine::general_purpose::STANDARD.encode(b)),
            Val::Array(a) => {
                buf.push(b'[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    v.write_json(buf);
                }
                buf.push(b']');
            }
            Val::Map(m) => write_object(m, buf, |v, buf| v.write_json(buf)),
        }
    }

    /// A string attribute holding JSON (the GenAI conventions put message lists in strings)
    /// decoded, or the structured value as JSON.
    pub(crate) fn decoded_json(&self) -> Option<Json<'_>> {
        match self {
            Val::Str(s) => {
                let t = s.trim_start();
                if t.starts_with('{') || t.starts_with('[') {
                    Json::parse(t)
                } else {
                    None
                }
            }
            Val::Null => None,
            other => Some(other.to_json()),
        }
    }

    /// Text for display: a string as is, anything else as compact JSON.
    pub(crate) fn to_text(&self) -> Cow<'_, str> {
        match self {
            Val::Str(s) => Cow::Borrowed(s),
            other => {
                let mut buf = Vec::new();
                other.write_json(&mut buf);
                Cow::Owned(String::from_utf8(buf).unwrap_or_default())
            }
        }
    }
}

/// A list of attributes in source order.
pub(crate) type Attrs<'a> = Vec<(Cow<'a, str>, Val<'a>)>;

fn attrs_static(attrs: &Attrs<'_>) -> Attrs<'static> {
    attrs
        .iter()
        .map(|(k, v)| (Cow::Owned(k.to_string()), v.to_static()))
        .collect()
}

impl Val<'_> {
    /// The value owning its strings.
    pub(crate) fn to_static(&self) -> Val<'static> {
        match self {
            Val::Null => Val::Null,
            Val::Bool(b) => Val::Bool(*b),
            Val::Int(i) => Val::Int(*i),
            Val::Double(f) => Val::Double(*f),
            Val::Str(s) => Val::Str(Cow::Owned(s.to_string())),
            Val::Bytes(b) => Val::Bytes(b.clone()),
            Val::Array(xs) => Val::Array(xs.iter().map(Val::to_static).collect()),
            Val::Map(kv) => Val::Map(attrs_static(kv)),
        }
    }
}

/// The first attribute named `key`.
pub(crate) fn attr<'x, 'a>(attrs: &'x Attrs<'a>, key: &str) -> Option<&'x Val<'a>> {
    attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// What a span's resource says about who sent it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Resource {
    /// `service.name`.
    pub service: Option<String>,
    /// `gen_ai.agent.name` when the resource carries it.
    pub agent: Option<String>,
}

impl Resource {
    pub(crate) fn from_attrs(attrs: &Attrs<'_>) -> Resource {
        Resource {
            service: attr(attrs, "service.name")
                .and_then(Val::as_str)
                .map(str::to_string),
            agent: attr(attrs, "gen_ai.agent.name")
                .and_then(Val::as_str)
                .map(str::to_string),
        }
    }
}

/// An event recorded on a span.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpanEvent<'a> {
    /// Its name (`gen_ai.evaluation.result`, `exception`, `gen_ai.user.message`, ...).
    pub name: Cow<'a, str>,
    /// When, in nanoseconds since the Unix epoch.
    pub time: Option<i128>,
    /// Its attributes.
    pub attrs: Attrs<'a>,
}

/// One span, whatever wrote it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span<'a> {
    /// The trace id (128 bits).
    pub trace: Option<u128>,
    /// The span id (64 bits).
    pub id: Option<u64>,
    /// The parent's span id; `None` for a root.
    pub parent: Option<u64>,
    /// The span name.
    pub name: Cow<'a, str>,
    /// Start and end, in nanoseconds since the Unix epoch.
    pub start: Option<i128>,
    /// End time.
    pub end: Option<i128>,
    /// Status code ERROR.
    pub error: bool,
    /// The status message or description.
    pub status_message: Option<Cow<'a, str>>,
    /// Attributes.
    pub attrs: Attrs<'a>,
    /// Span events.
    pub events: Vec<SpanEvent<'a>>,
    /// Who sent it.
    pub resource: Arc<Resource>,
    /// Where it was in the source (`line 3`, a request number), for notes.
    pub location: Arc<str>,
}

#[cfg(test)]
impl Span<'static> {
    /// A span with only a name, attributes and events, as the mappings' unit tests build one.
    pub(crate) fn for_test(
        name: &'static str,
        attrs: Vec<(&'static str, Val<'static>)>,
        events: Vec<SpanEvent<'static>>,
    ) -> Self {
        Span {
            trace: None,
            id: None,
            parent: None,
            name: Cow::Borrowed(name),
            start: None,
            end: None,
            error: false,
            status_message: None,
            attrs: attrs
                .into_iter()
                .map(|(k, v)| (Cow::Borrowed(k), v))
                .collect(),
            events,
            resource: std::sync::Arc::new(Resource::default()),
            location: std::sync::Arc::from("test"),
        }
    }
}

impl<'a> Span<'a> {
    /// The first attribute named `key`.
    pub(crate) fn attr(&self, key: &str) -> Option<&Val<'a>> {
        attr(&self.attrs, key)
    }

    /// The span owning its strings, to be kept after the request it came in (the live
    /// receiver holds an agent's `create_agent` span until a session uses the agent).
    pub(crate) fn to_static(&self) -> Span<'static> {
        Span {
            trace: self.trace,
            id: self.id,
            parent: self.parent,
            name: Cow::Owned(self.name.to_string()),
            start: self.start,
            end: self.end,
            error: self.error,
            status_message: self
                .status_message
                .as_ref()
                .map(|m| Cow::Owned(m.to_string())),
            attrs: attrs_static(&self.attrs),
            events: self
                .events
                .iter()
                .map(|e| SpanEvent {
                    name: Cow::Owned(e.name.to_string()),
                    time: e.time,
                    attrs: attrs_static(&e.attrs),
                })
                .collect(),
            resource: self.resource.clone(),
            location: self.location.clone(),
        }
    }

    /// A string attribute.
    pub(crate) fn str_attr(&self, key: &str) -> Option<&str> {
        self.attr(key).and_then(Val::as_str)
    }
}

/// Why an id or a time could not be read.
pub(crate) type Bad = String;

/// A 128-bit trace id from its JSON text: a hex string (32 digits, optionally `0x`), base64
/// of 16 bytes (proto3 JSON's `bytes`), or a decimal number (the Python SDK's `int` ids,
/// which overflow 64-bit integers and doubles, so they are read from the digits).
pub(crate) fn trace_id_json(raw: &str) -> Result<Option<u128>, Bad> {
    id_json(raw, 16)
}

/// A 64-bit span id from its JSON text (as [`trace_id_json`], 16 hex digits or 8 bytes).
pub(crate) fn span_id_json(raw: &str) -> Result<Option<u64>, Bad> {
    id_json(raw, 8).map(|o| o.map(|v| v as u64))
}

fn id_json(raw: &str, width: usize) -> Result<Option<u128>, Bad> {
    // The usual spelling, a quoted hex string, read in one pass.
    if let Some(inner) = raw
        .as_bytes()
        .strip_prefix(b"\"")
        .and_then(|r| r.strip_suffix(b"\""))
        && (1..=width * 2).contains(&inner.len())
        && let Some(v) = hex_value(inner)
    {
        return Ok((v != 0).then_some(v));
    }
    let raw = raw.trim();
    if raw == "null" {
        return Ok(None);
    }
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        if inner.contains('\\') {
            let s: String = serde_json::from_str(raw).map_err(|e| format!("bad id string: {e}"))?;
            return id_str(&s, width);
        }
        return id_str(inner, width);
    }
    // A JSON number: decimal digits only (no sign, fraction or exponent).
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        let v: u128 = raw
            .parse()
            .map_err(|_| format!("id {raw} does not fit in 128 bits"))?;
        if width == 8 && v > u128::from(u64::MAX) {
            return Err(format!("span id {raw} does not fit in 64 bits"));
        }
        return Ok((v != 0).then_some(v));
    }
    Err(format!("an id must be a string or an integer, not {raw}"))
}

/// The value of 1 to 32 hex digits; `None` when a byte is not one.
fn hex_value(digits: &[u8]) -> Option<u128> {
    let (mut hi, mut lo) = (0u64, 0u64);
    for &b in digits {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        hi = (hi << 4) | (lo >> 60);
        lo = (lo << 4) | u64::from(d);
    }
    Some((u128::from(hi) << 64) | u128::from(lo))
}

/// An id from a string: hex (`width * 2` digits, `0x` allowed, shorter accepted) or base64 of
/// `width` bytes. Empty and all-zero ids are absent (OTLP's "no parent").
pub(crate) fn id_str(s: &str, width: usize) -> Result<Option<u128>, Bad> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let hex = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if hex.len() <= width * 2 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        let v = hex_value(hex.as_bytes())
            .filter(|_| !hex.is_empty())
            .ok_or_else(|| format!("bad hex id {s:?}: cannot parse integer from empty string"))?;
        return Ok((v != 0).then_some(v));
    }
    // Base64 ids (proto3 JSON's bytes, as the receiver gets them) decode on the stack; what
    // does not fit is no id of `width` bytes, and the general path says why.
    let mut small = [0u8; 32];
    let engines = [
        &base64::engine::general_purpose::STANDARD,
        &base64::engine::general_purpose::URL_SAFE,
    ];
    if let Some(n) = engines
        .iter()
        .find_map(|e| e.decode_slice(s, &mut small).ok())
    {
        return id_bytes(&small[..n], width);
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(s))
        .map_err(|_| format!("id {s:?} is neither {} hex digits nor base64", width * 2))?;
    id_bytes(&bytes, width)
}

/// An id from its bytes (protobuf, base64): `width` bytes big-endian; empty is absent.
pub(crate) fn id_bytes(bytes: &[u8], width: usize) -> Result<Option<u128>, Bad> {
    if bytes.is_empty() {
        return Ok(None);
    }
    if bytes.len() != width {
        return Err(format!(
            "an id of {} bytes where {width} were expected",
            bytes.len()
        ));
    }
    let v = bytes.iter().fold(0u128, |v, &b| (v << 8) | u128::from(b));
    Ok((v != 0).then_some(v))
}

/// A time from its JSON text, in nanoseconds since the Unix epoch: a string of digits
/// (OTLP JSON's `fixed64` as a decimal string) or an integer, both in nanoseconds; an
/// RFC 3339 string (the Python SDK's `to_json`); a `[seconds, nanoseconds]` pair (the JS
/// SDK's hrtime); a number with a fraction, in seconds. Integers are read by magnitude:
/// below 10^11 seconds, below 10^14 milliseconds, below 10^17 microseconds, else
/// nanoseconds (every writer seen uses nanoseconds; the others are a safety net).
pub(crate) fn time_json(raw: &str) -> Result<Option<i128>, Bad> {
    // The usual spelling, OTLP JSON's quoted nanoseconds, read in one pass.
    if let Some(inner) = raw
        .as_bytes()
        .strip_prefix(b"\"")
        .and_then(|r| r.strip_suffix(b"\""))
        && (1..=19).contains(&inner.len())
        && inner.iter().all(u8::is_ascii_digit)
    {
        let v = inner.iter().fold(0u64, |v, b| v * 10 + u64::from(b - b'0'));
        return Ok((v != 0).then(|| i128::from(v)));
    }
    let raw = raw.trim();
    if raw == "null" {
        return Ok(None);
    }
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        if inner.is_empty() {
            return Ok(None);
        }
        if inner.bytes().all(|b| b.is_ascii_digit()) {
            let v = digits(inner).ok_or_else(|| format!("time {inner:?} out of range"))?;
            return Ok((v != 0).then_some(v));
        }
        return rfc3339_ns(inner)
            .map(Some)
            .ok_or_else(|| format!("time {inner:?} is neither nanoseconds nor RFC 3339"));
    }
    if let Some(inner) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let mut it = inner.split(',').map(str::trim);
        let (Some(s), Some(ns), None) = (it.next(), it.next(), it.next()) else {
            return Err(format!("time {raw} is not a [seconds, nanoseconds] pair"));
        };
        let s: i128 = s.parse().map_err(|_| format!("bad seconds in {raw}"))?;
        let ns: i128 = ns
            .parse()
            .map_err(|_| format!("bad nanoseconds in {raw}"))?;
        return Ok(Some(s * 1_000_000_000 + ns));
    }
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        let v = digits(raw).ok_or_else(|| format!("time {raw} out of range"))?;
        return Ok(match v {
            0 => None,
            v if v < 100_000_000_000 => Some(v * 1_000_000_000),
            v if v < 100_000_000_000_000 => Some(v * 1_000_000),
            v if v < 100_000_000_000_000_000 => Some(v * 1_000),
            v => Some(v),
        });
    }
    let secs: f64 = raw
        .parse()
        .map_err(|_| format!("time {raw} is not a number, a string or a pair"))?;
    if !secs.is_finite() || secs.abs() > 1e13 {
        return Err(format!("time {raw} out of range"));
    }
    Ok(Some((secs * 1e9).round() as i128))
}

/// A non-empty string of ASCII digits as a number (`None` past `i128`). Nanosecond times
/// have 19 digits: they are summed in a `u64` (no 19-digit number overflows it), longer ones
/// parsed as `i128`.
fn digits(s: &str) -> Option<i128> {
    if s.len() <= 19 {
        let v = s
            .bytes()
            .fold(0u64, |v, b| v * 10 + u64::from(b.wrapping_sub(b'0')));
        return Some(i128::from(v));
    }
    s.parse().ok()
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` to nanoseconds, exactly (no float).
pub(crate) fn rfc3339_ns(s: &str) -> Option<i128> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac: i128 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 9 {
                frac = frac * 10 + i128::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start).min(9)..9 {
            frac *= 10;
        }
    }
    let offset: i64 = match b.get(i) {
        // No zone: taken as UTC (the any-agent and Letta writers omit it).
        None => 0,
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(&c @ (b'+' | b'-')) if b.len() == i + 6 && b[i + 3] == b':' => {
            let oh = num(i + 1..i + 3)?;
            let om = num(i + 4..i + 6)?;
            let o = oh * 3600 + om * 60;
            if c == b'+' { o } else { -o }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset;
    Some(i128::from(secs) * 1_000_000_000 + frac)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01 (inverse of [`days_from_civil`]).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Nanoseconds since the epoch as RFC 3339 UTC with all nine digits of the fraction (v1 reads
/// it; going through float seconds would lose the nanoseconds). `None` outside years
/// 0000-9999. (The mapping writes it with [`push_rfc3339`].)
#[cfg(test)]
pub(crate) fn rfc3339(ns: i128) -> Option<String> {
    let mut buf = Vec::with_capacity(30);
    push_rfc3339(&mut buf, ns).then(|| String::from_utf8(buf).unwrap_or_default())
}

/// Appends [`rfc3339`]'s text; `false` (nothing appended) outside years 0000-9999.
pub(crate) fn push_rfc3339(buf: &mut Vec<u8>, ns: i128) -> bool {
    let Ok(secs) = i64::try_from(ns.div_euclid(1_000_000_000)) else {
        return false;
    };
    let frac = ns.rem_euclid(1_000_000_000) as u32;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    if !(0..=9999).contains(&y) {
        return false;
    }
    let t = secs.rem_euclid(86_400) as u32;
    let mut out = *b"0000-00-00T00:00:00.000000000Z";
    let mut digits = |at: usize, width: usize, mut v: u32| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    digits(0, 4, y as u32);
    digits(5, 2, m as u32);
    digits(8, 2, d as u32);
    digits(11, 2, t / 3600);
    digits(14, 2, t / 60 % 60);
    digits(17, 2, t % 60);
    digits(20, 9, frac);
    buf.extend_from_slice(&out);
    true
}

/// Appends the low `digits` (at most 32) hex digits of `id`, lowercase.
pub(crate) fn push_hex(buf: &mut Vec<u8>, id: u128, digits: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 32];
    for (i, b) in id.to_be_bytes().into_iter().enumerate() {
        out[2 * i] = HEX[usize::from(b >> 4)];
        out[2 * i + 1] = HEX[usize::from(b & 0xf)];
    }
    buf.extend_from_slice(&out[32 - digits.min(32)..]);
}

/// A trace id as 32 lowercase hex digits.
pub(crate) fn trace_hex(id: u128) -> String {
    format!("{id:032x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_every_spelling_agree() {
        let hex = "5b8aa5a2d2c872e8321cf37308d69df2";
        let want = u128::from_str_radix(hex, 16).unwrap();
        assert_eq!(trace_id_json(&format!("\"{hex}\"")), Ok(Some(want)));
        assert_eq!(trace_id_json(&format!("\"0x{hex}\"")), Ok(Some(want)));
        assert_eq!(trace_id_json(&want.to_string()), Ok(Some(want)));
        let b64 = base64::engine::general_purpose::STANDARD.encode(want.to_be_bytes());
        assert_eq!(trace_id_json(&format!("\"{b64}\"")), Ok(Some(want)));
        assert_eq!(trace_id_json("\"\""), Ok(None));
        assert_eq!(trace_id_json("null"), Ok(None));
        assert_eq!(span_id_json("\"0000000000000000\""), Ok(None));
        assert_eq!(span_id_json("\"00000000000000AB\""), Ok(Some(0xab)));
        assert_eq!(span_id_json(" \"ab\" "), Ok(Some(0xab)));
        assert_eq!(span_id_json("\"0xAb\""), Ok(Some(0xab)));
        assert!(trace_id_json("\"0x\"").is_err_and(|e| e.contains("empty string")));
        // 17 hex digits are no span id (nor base64 of 8 bytes).
        assert!(span_id_json("\"00000000000000001\"").is_err());
        assert!(span_id_json("340282366920938463463374607431768211455").is_err());
        assert!(trace_id_json("1.5").is_err());
        assert!(trace_id_json("\"not an id!\"").is_err());
        // The any-agent file's 128-bit decimal, past u64 and f64 precision.
        assert_eq!(
            trace_id_json("100927429609276267646756448943279827607"),
            Ok(Some(100927429609276267646756448943279827607))
        );
    }

    #[test]
    fn times_in_every_spelling_agree() {
        let ns = 1_753_828_032_134_892_123i128;
        assert_eq!(time_json("\"1753828032134892123\""), Ok(Some(ns)));
        assert_eq!(time_json("1753828032134892123"), Ok(Some(ns)));
        assert_eq!(time_json("[1753828032, 134892123]"), Ok(Some(ns)));
        assert_eq!(
            time_json("\"2025-07-29T22:27:12.134892123Z\""),
            Ok(Some(ns))
        );
        assert_eq!(
            time_json("\"2025-07-29T18:27:12.134892123-04:00\""),
            Ok(Some(ns))
        );
        assert_eq!(time_json("1753828032"), Ok(Some(1_753_828_032_000_000_000)));
        assert_eq!(time_json("\"0\""), Ok(None));
        // Past 19 digits (u64's safe range), and past i128.
        assert_eq!(
            time_json("\"99999999999999999999\""),
            Ok(Some(99_999_999_999_999_999_999))
        );
        assert!(time_json(&format!("\"{}\"", "9".repeat(40))).is_err());
        assert!(time_json("\"yesterday\"").is_err());
        assert!(time_json("1e300").is_err());
    }

    #[test]
    fn rfc3339_round_trips_through_nanoseconds() {
        for ns in [
            0i128,
            1,
            1_753_828_032_134_892_123,
            951_782_400_000_000_000, // 2000-02-29
            -1,
            253_402_300_799_999_999_999, // 9999-12-31T23:59:59.999999999
        ] {
            let s = rfc3339(ns).expect("in range");
            assert_eq!(rfc3339_ns(&s), Some(ns), "{s}");
            let secs = crate::trace::time::parse_rfc3339(&s).expect("the v1 reader's parser");
            assert!((secs - ns as f64 / 1e9).abs() < 1e-3, "{s}");
        }
        assert_eq!(rfc3339(253_402_300_800_000_000_000), None);
        assert_eq!(rfc3339(-62_167_219_200_000_000_001), None);
        assert_eq!(
            rfc3339(1_753_828_032_004_892_123).as_deref(),
            Some("2025-07-29T22:27:12.004892123Z")
        );
    }

    #[test]
    fn hex_ids_are_zero_padded() {
        let mut buf = Vec::new();
        push_hex(&mut buf, 0xab, 16);
        assert_eq!(buf, b"00000000000000ab");
        buf.clear();
        push_hex(&mut buf, u128::MAX, 32);
        assert_eq!(buf, [b'f'; 32]);
    }
}
