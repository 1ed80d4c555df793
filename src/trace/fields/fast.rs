//! A fast path for the usual shape of a trace line.
//!
//! Nearly every line is one flat object whose keys and string values have no escapes, whose
//! numbers are small non-negative integers, and whose lists hold plain strings. For those, this
//! scanner produces exactly what the serde_json visitor in the parent module produces, at a
//! fraction of the cost (no visitor dispatch, no per-byte escape bookkeeping). Anything else —
//! an escape, a nested object, a float, a duplicate key, any syntax or envelope error — makes
//! it give up (`None`), and the line is decoded again by serde_json, which then also supplies
//! the error message and column. So the fast path can only ever agree with the reference or
//! step aside; a differential property test checks the agreement.

use std::borrow::Cow;

use serde_json::Value;
use serde_json::value::RawValue;

use super::{Entry, Fields, RawLine, Text, Val, timestamp};

/// Decodes `line` if it has the usual shape; `None` means "use the reference decoder" (the
/// caller clears whatever was added to `fields`).
pub(super) fn decode<'de>(line: &'de str, fields: &mut Fields<'de>) -> Option<RawLine<'de>> {
    let mut p = Scanner::of_str(line);
    let mut raw = RawLine {
        kind: None,
        v: None,
        seq: None,
        ts: None,
        session: None,
        id: None,
    };
    p.ws();
    p.eat(b'{')?;
    p.ws();
    if p.b.get(p.i) == Some(&b'}') {
        p.i += 1;
    } else {
        loop {
            let key = p.string()?;
            p.ws();
            p.eat(b':')?;
            p.ws();
            // A field no kind defines is kept as its text (see `Val::Raw`).
            let val = if unknown(&key) { p.raw()? } else { p.value()? };
            put(&mut raw, fields, key, val)?;
            p.ws();
            match p.next()? {
                b',' => p.ws(),
                b'}' => break,
                _ => return None,
            }
        }
    }
    p.ws();
    (p.i == p.b.len()).then_some(raw)
}

/// Whether `key` is neither an envelope field nor a field some kind defines.
fn unknown(key: &str) -> bool {
    super::key_of(key) == super::KeyOf::Other
}

/// A cursor over one line (shared with the brief scanner, [`super::scan`]).
///
/// The line is either text already checked as UTF-8 ([`Self::of_str`]) or raw bytes
/// ([`Self::of_bytes`]), which the brief scanner walks without a pass of its own to check
/// them: every string is checked as it is walked ([`plain_end`]: bytes from 0x80 on must
/// form UTF-8 characters), the grammar outside strings takes ASCII bytes only, and every
/// slice taken as text is checked again by `str::from_utf8` ([`Self::text`]), so a line of
/// bytes the scanner takes is UTF-8 (a property test checks it) and no text it hands out is
/// anything else.
pub(super) struct Scanner<'de> {
    /// The line as text, when it is known to be UTF-8.
    s: Option<&'de str>,
    pub(super) b: &'de [u8],
    pub(super) i: usize,
}

impl<'de> Scanner<'de> {
    /// A cursor at the start of `line`, text known to be UTF-8.
    pub(super) fn of_str(line: &'de str) -> Self {
        Scanner {
            s: Some(line),
            b: line.as_bytes(),
            i: 0,
        }
    }

    /// A cursor at the start of `line`, bytes not yet known to be UTF-8.
    pub(super) fn of_bytes(line: &'de [u8]) -> Self {
        Scanner {
            s: None,
            b: line,
            i: 0,
        }
    }

    /// A cursor over the same line at `i`.
    pub(super) fn at(&self, i: usize) -> Self {
        Scanner {
            s: self.s,
            b: self.b,
            i,
        }
    }

    /// The line's bytes in `r` as text: a slice of the checked text, or the bytes checked
    /// now. `None` if they are not UTF-8 (or `r` does not fall on character boundaries).
    #[inline]
    pub(super) fn text(&self, r: std::ops::Range<usize>) -> Option<&'de str> {
        match self.s {
            Some(s) => s.get(r),
            None => std::str::from_utf8(self.b.get(r)?).ok(),
        }
    }

    pub(super) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    pub(super) fn next(&mut self) -> Option<u8> {
        let c = *self.b.get(self.i)?;
        self.i += 1;
        Some(c)
    }

    pub(super) fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    /// A string, borrowed from the line unless it has escapes (decoded as serde_json does;
    /// a malformed escape or a lone surrogate gives up).
    #[inline]
    pub(super) fn string(&mut self) -> Option<Cow<'de, str>> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        let start = self.i + 1;
        let j = plain_end(self.b, start)?;
        if self.b[j] == b'\\' {
            return self.escaped(start, j);
        }
        self.i = j + 1;
        // Both ends are at ASCII bytes, hence at character boundaries.
        self.text(start..j).map(Cow::Borrowed)
    }

    /// A string checked as [`Self::string`] checks it (escapes, surrogate pairs, control
    /// characters), building nothing: for values the brief scanner does not keep.
    #[inline]
    pub(super) fn skip_string(&mut self) -> Option<()> {
        let b = self.b;
        if b.get(self.i) != Some(&b'"') {
            return None;
        }
        let mut j = plain_end(b, self.i + 1)?;
        while b[j] == b'\\' {
            j = plain_end(b, skip_escape(b, j)?)?;
        }
        self.i = j + 1;
        Some(())
    }

    /// The rest of a string from its first backslash at `j`.
    #[cold]
    #[inline(never)]
    fn escaped(&mut self, start: usize, mut j: usize) -> Option<Cow<'de, str>> {
        let b = self.b;
        let mut out = String::with_capacity(j - start + 16);
        out.push_str(self.text(start..j)?);
        loop {
            let esc = *b.get(j + 1)?;
            j += 2;
            let c = match esc {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\x08',
                b'f' => '\x0c',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let hi = hex4(b, j)?;
                    j += 4;
                    match hi {
                        0xD800..=0xDBFF => {
                            if b.get(j..j + 2)? != b"\\u" {
                                return None;
                            }
                            let lo = hex4(b, j + 2)?;
                            if !(0xDC00..=0xDFFF).contains(&lo) {
                                return None;
                            }
                            j += 6;
                            char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?
                        }
                        0xDC00..=0xDFFF => return None,
                        _ => char::from_u32(hi)?,
                    }
                }
                _ => return None,
            };
            out.push(c);
            let k = plain_end(b, j)?;
            out.push_str(self.text(j..k)?);
            if b[k] == b'"' {
                self.i = k + 1;
                return Some(Cow::Owned(out));
            }
            j = k;
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Option<Val<'de>> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word.as_bytes()).then(|| {
            self.i = end;
            Val::Json(v)
        })
    }

    pub(super) fn value(&mut self) -> Option<Val<'de>> {
        match *self.b.get(self.i)? {
            b'"' => self.string().map(Val::Str),
            b'[' => self.list().or_else(|| self.nested()),
            b'{' => self.nested(),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// A list of plain strings, decoded straight into its exactly sized final form. `None`
    /// (with the position unchanged) for anything else, which [`Self::nested`] then takes.
    fn list(&mut self) -> Option<Val<'de>> {
        let start = self.i;
        let texts = self.strings();
        if texts.is_none() {
            self.i = start;
        }
        texts.map(Val::Strs)
    }

    fn strings(&mut self) -> Option<Vec<Text>> {
        // Lists are short: up to eight items are gathered on the stack so the final vector
        // is allocated once, at its exact size (no growth, no shrink).
        const STACK: usize = 8;
        let mut head: [Option<Text>; STACK] = Default::default();
        let mut n = 0;
        let mut spill: Vec<Text> = Vec::new();
        self.i += 1;
        self.ws();
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Some(Vec::new());
        }
        loop {
            let text = match self.string()? {
                Cow::Borrowed(s) => Text::from(s),
                Cow::Owned(s) => Text::from(s),
            };
            if n < STACK {
                head[n] = Some(text);
                n += 1;
            } else {
                spill.push(text);
            }
            self.ws();
            match self.next()? {
                b',' => self.ws(),
                b']' => break,
                _ => return None,
            }
        }
        let mut texts = Vec::with_capacity(n + spill.len());
        texts.extend(head.into_iter().take(n).flatten());
        texts.append(&mut spill);
        Some(texts)
    }

    /// Any value, as its validated text (what the reference decoder keeps for a field no
    /// kind defines). Nothing is built: a list of a million numbers costs its own bytes.
    pub(super) fn raw(&mut self) -> Option<Val<'de>> {
        let start = self.i;
        match *self.b.get(self.i)? {
            b'{' | b'[' => self.i = self.extent(usize::MAX)? + 1,
            _ => {
                self.value()?;
            }
        }
        let text = self.text(start..self.i)?;
        // serde_json checks the syntax (the scan above only found the end) and borrows.
        serde_json::from_str::<&RawValue>(text).ok().map(Val::Raw)
    }

    /// The position of the bracket closing the object or array at the cursor (strings
    /// skipped, nesting counted); `None` past `max_depth` or at a raw control character.
    fn extent(&self, max_depth: usize) -> Option<usize> {
        let b = self.b;
        let mut depth = 0usize;
        let mut j = self.i;
        loop {
            match *b.get(j)? {
                b'{' | b'[' => {
                    depth += 1;
                    if depth > max_depth {
                        return None;
                    }
                }
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                b'"' => {
                    // Escapes are skipped, not checked: serde_json checks the text.
                    j = plain_end(b, j + 1)?;
                    while b[j] == b'\\' {
                        j = plain_end(b, j + 2)?;
                    }
                }
                _ => {}
            }
            j += 1;
        }
    }

    /// Any other object or array: its extent is found here (strings skipped, nesting
    /// counted) and the text is handed to serde_json alone, which builds the same value the
    /// reference visitor builds. Deep nesting gives up, so serde_json's depth limit is
    /// applied to the whole line by the reference decoder.
    fn nested(&mut self) -> Option<Val<'de>> {
        const MAX_DEPTH: usize = 64;
        let start = self.i;
        let j = self.extent(MAX_DEPTH)?;
        let value: Value = serde_json::from_str(self.text(start..j + 1)?).ok()?;
        // A list of strings is `Strs` for the reference; `list` declined it, so something
        // about it is unusual: let the reference decide.
        if let Value::Array(items) = &value
            && items.iter().all(Value::is_string)
        {
            return None;
        }
        self.i = j + 1;
        Some(Val::Json(value))
    }

    /// An object or array at the cursor decoded from its text straight into `T`, without
    /// the `Value` that [`Self::value`] builds and `typed_val` reads again. For a `T` none
    /// of whose fields serde ignores unchecked (the structures the brief scanner checks keep
    /// their unknown fields in a map), what this takes [`Self::value`] and `typed_val` take,
    /// into the same `T` (a property test compares them on hostile texts); it may decline
    /// more (a known field given twice). `None`, the cursor unchanged, for anything else or
    /// past [`Self::nested`]'s depth.
    pub(super) fn nested_as<T: serde::de::DeserializeOwned>(&mut self) -> Option<T> {
        const MAX_DEPTH: usize = 64;
        if !matches!(self.b.get(self.i), Some(b'{' | b'[')) {
            return None;
        }
        let j = self.extent(MAX_DEPTH)?;
        let t = serde_json::from_str(self.text(self.i..j + 1)?).ok()?;
        self.i = j + 1;
        Some(t)
    }

    /// A number. Plain non-negative integers are converted here; other well-formed numbers
    /// are handed to serde_json alone (its float conversion is the reference).
    pub(super) fn number(&mut self) -> Option<Val<'de>> {
        let b = self.b;
        let start = self.i;
        let digits = |mut j: usize| {
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            j
        };
        let int_start = start + usize::from(b.get(start) == Some(&b'-'));
        let mut j = digits(int_start);
        let int_len = j - int_start;
        if int_len == 0 || (int_len > 1 && b[int_start] == b'0') {
            return None;
        }
        let mut plain = int_start == start;
        if b.get(j) == Some(&b'.') {
            plain = false;
            let d = j + 1;
            j = digits(d);
            if j == d {
                return None;
            }
        }
        if let Some(b'e' | b'E') = b.get(j) {
            plain = false;
            j += 1;
            if let Some(b'+' | b'-') = b.get(j) {
                j += 1;
            }
            let d = j;
            j = digits(d);
            if j == d {
                return None;
            }
        }
        self.i = j;
        // 19 digits always fit in a u64.
        if plain && int_len <= 19 {
            let n = b[int_start..j]
                .iter()
                .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
            return Some(Val::Json(Value::from(n)));
        }
        if plain || int_start != start {
            // Integers too big for a u64, and negative ones: serde_json's own conversion.
            let text = self.text(start..j)?;
            return serde_json::from_str::<Value>(text).ok().map(Val::Json);
        }
        // A float: parsed by the same serde_json routine the reference visitor gets its
        // `f64` from, without building a deserializer for a whole `Value`, from the bytes
        // (a number is ASCII: no text to check).
        let n = serde_json::from_slice::<serde_json::Number>(&b[start..j]).ok()?;
        n.is_f64().then_some(Val::Json(Value::Number(n)))
    }
}

/// The position of the first quote or backslash from `j` in a string, the bytes before it
/// checked: `None` at a control character, at bytes that are not UTF-8, or at the end.
#[inline(always)]
pub(super) fn plain_end(b: &[u8], mut j: usize) -> Option<usize> {
    loop {
        j = scan_plain(b, j);
        match *b.get(j)? {
            b'"' | b'\\' => return Some(j),
            0x80..=0xFF => j = utf8_char(b, j)?,
            _ => return None,
        }
    }
}

/// The position after the UTF-8 character starting at `j` (a byte from 0x80 on), checked
/// as `str::from_utf8` checks it: `None` for a stray continuation byte, an overlong form, a
/// surrogate, a code point past U+10FFFF, or a sequence cut short. Out of line: most
/// strings are ASCII.
#[inline(never)]
pub(super) fn utf8_char(b: &[u8], j: usize) -> Option<usize> {
    // The sequence's length and the range of its second byte (Unicode's table 3-7).
    let (len, second) = match *b.get(j)? {
        0xC2..=0xDF => (2, 0x80..=0xBF),
        0xE0 => (3, 0xA0..=0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80..=0xBF),
        0xED => (3, 0x80..=0x9F),
        0xF0 => (4, 0x90..=0xBF),
        0xF1..=0xF3 => (4, 0x80..=0xBF),
        0xF4 => (4, 0x80..=0x8F),
        _ => return None,
    };
    let bytes = b.get(j + 1..j + len)?;
    (second.contains(&bytes[0]) && bytes[1..].iter().all(|&c| c & 0xC0 == 0x80)).then_some(j + len)
}

/// The first position from `j` holding a quote, a backslash, a control character or a
/// byte from 0x80 on (or the end). Eight bytes at a time: in each word, the lowest flagged
/// byte of each test is a true match (borrows only run upwards), so the lowest flag overall
/// is the first such byte.
fn scan_plain(b: &[u8], mut j: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(word) = b.get(j..j + 8).and_then(|c| <[u8; 8]>::try_from(c).ok()) {
        let w = u64::from_le_bytes(word);
        let quote = w ^ (ONES * u64::from(b'"'));
        let slash = w ^ (ONES * u64::from(b'\\'));
        let hits = (quote.wrapping_sub(ONES) & !quote)
            | (slash.wrapping_sub(ONES) & !slash)
            | (w.wrapping_sub(ONES * 0x20) & !w)
            | w;
        let hits = hits & HIGH;
        if hits != 0 {
            return j + (hits.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while let Some(&c) = b.get(j) {
        if c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c) {
            return j;
        }
        j += 1;
    }
    b.len()
}

/// The position after the escape at `j` (a backslash), checked as [`Scanner::string`]
/// decodes it: `None` for a malformed escape or a lone surrogate.
fn skip_escape(b: &[u8], j: usize) -> Option<usize> {
    match *b.get(j + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(j + 2),
        b'u' => match hex4(b, j + 2)? {
            0xD800..=0xDBFF => {
                if b.get(j + 6..j + 8)? != b"\\u" {
                    return None;
                }
                (0xDC00..=0xDFFF)
                    .contains(&hex4(b, j + 8)?)
                    .then_some(j + 12)
            }
            0xDC00..=0xDFFF => None,
            _ => Some(j + 6),
        },
        _ => None,
    }
}

fn hex4(b: &[u8], j: usize) -> Option<u32> {
    b.get(j..j + 4)?
        .iter()
        .try_fold(0, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
}

/// Files one key and value exactly as the reference visitor does; `None` where the reference
/// would report an error.
fn put<'de>(
    raw: &mut RawLine<'de>,
    fields: &mut Fields<'de>,
    key: Cow<'de, str>,
    val: Val<'de>,
) -> Option<()> {
    match &*key {
        "kind" => match (&raw.kind, val) {
            (None, Val::Str(s)) => raw.kind = Some(s),
            _ => return None,
        },
        "v" => match (raw.v, val) {
            (None, Val::Json(Value::Number(n))) => raw.v = Some(n.as_u64().filter(|v| *v >= 1)?),
            _ => return None,
        },
        "seq" => match (raw.seq, val) {
            (None, Val::Json(Value::Number(n))) => raw.seq = Some(n.as_u64()?),
            _ => return None,
        },
        "ts" => {
            if raw.ts.is_some() {
                return None;
            }
            raw.ts = Some(timestamp(val).ok()?);
        }
        "session" => match (&raw.session, val) {
            (None, Val::Str(s)) => raw.session = Some(s),
            _ => return None,
        },
        "id" => match (&raw.id, val) {
            (None, Val::Str(s)) => raw.id = Some(Text::from(&*s)),
            _ => return None,
        },
        _ => {
            let key = fields.claim(key).ok()?;
            fields.entries.push(Entry {
                key,
                val: Some(val),
            });
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::super::decode_line_serde;
    use super::*;
    use proptest::prelude::*;

    fn token(items: &'static [&'static str]) -> impl Strategy<Value = String> {
        prop::sample::select(items).prop_map(str::to_string)
    }

    fn ws() -> impl Strategy<Value = String> {
        token(&["", "", "", " ", "\t", "\r", "  \n"])
    }

    fn key() -> impl Strategy<Value = String> {
        token(&[
            "\"kind\"",
            "\"v\"",
            "\"seq\"",
            "\"ts\"",
            "\"session\"",
            "\"id\"",
            "\"formula\"",
            "\"because\"",
            "\"role\"",
            "\"confidence\"",
            "\"text\"",
            "\"x_trace\"",
            "\"tier\"",
            "\"k\\u0069nd\"",
            "\"s\\u0065q\"",
            "\"form\\u0075la\"",
            "\"a\\\"b\"",
            "\"λ\"",
            "kind",
            "\"\"",
        ])
    }

    fn value() -> impl Strategy<Value = String> {
        token(&[
            "\"announce\"",
            "\"log\"",
            "\"p1 -> p2\"",
            "\"caf\\u00e9\"",
            "\"tab\\there\"",
            "\"\\u00e9\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
            "\"\\ud83d\\ude00 x\"",
            "\"\\uD83D\\uDE00\"",
            "\"\\ud83d\"",
            "\"\\ud83d\\u0041\"",
            "\"\\udc00\"",
            "\"\\u12\"",
            "\"\\x\"",
            "\"a\\",
            "\"long plain string over eight bytes \\u0041 tail\"",
            "\"long plain string with \u{7f} and ünïcödé over eight\"",
            "\"eight by\u{1f}tes\"",
            "\"\u{1}\"",
            "\"λ ∀x\"",
            "\"\"",
            "0",
            "1",
            "2",
            "01",
            "-0",
            "-1",
            "1.5",
            "0.25",
            "1e3",
            "1E-2",
            "2.",
            "-",
            "18446744073709551615",
            "18446744073709551616",
            "9999999999999999999",
            "99999999999999999999999",
            "true",
            "false",
            "null",
            "nul",
            "tru",
            "[]",
            "[ ]",
            "[\"a\"]",
            "[\"a\",\"b\"]",
            "[ \"a\" , \"b\" ]",
            "[\"a\",1]",
            "[1]",
            "[\"a\",]",
            "[[\"a\"]]",
            "[\"a\\n\"]",
            "{}",
            "{\"a\":1}",
            "{\"a\":{\"b\":[1,\"x\",null]},\"c\":-2.5e3}",
            "{\"a\":1,\"a\":2}",
            "{\"k\":\"br}ace\\\"[\"}",
            "{\"k\":\"\\ud83d\"}",
            "{\"k\":\"tab\there\"}",
            "{\"k\": [ ] , \"l\" : { } }",
            "{\"a\":[}",
            "{\"a\":1,}",
            "[[[[[[[[[[1]]]]]]]]]]",
            "[\"a\",{\"b\":\"c\"}]",
            "[1.5,-0,1e400]",
            "[\"a\",\"b\\u00e9\"]",
            "[\"a\",\"\\ud83d\"]",
            "-2.5",
            "1.0e-7",
            "0.1e1",
            "1e400",
            "\"2026-01-01T00:00:00Z\"",
            "\"2026-01-01T00:00:00.123Z\"",
            "\"2026-01-01T01:00:00+01:00\"",
            "\"not a date\"",
            "1767225600.25",
            "1767225600",
            "\"fact\"",
            "\"rule\"",
        ])
    }

    fn line() -> impl Strategy<Value = String> {
        let pair = (ws(), key(), ws(), ws(), value(), ws())
            .prop_map(|(a, k, b, c, v, d)| format!("{a}{k}{b}:{c}{v}{d}"));
        (
            ws(),
            prop::collection::vec(pair, 0..8),
            token(&["", "", "", "", ",", ":"]),
            token(&["}", "}", "}", "}", "", "}}", "} x", "]"]),
            ws(),
            prop::bool::weighted(0.05),
        )
            .prop_map(|(a, pairs, extra, close, z, not_object)| {
                if not_object {
                    return format!("{a}[{}]", pairs.join(","));
                }
                format!("{a}{{{}{extra}{close}{z}", pairs.join(","))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// Whenever the fast path decodes a line, serde_json decodes it too, to the same
        /// envelope and fields.
        #[test]
        fn the_fast_path_agrees_with_serde_json(line in line()) {
            let mut fast_fields = Fields::new();
            if let Some(fast) = decode(&line, &mut fast_fields) {
                let mut ref_fields = Fields::new();
                match decode_line_serde(&line, &mut ref_fields) {
                    Ok(reference) => {
                        prop_assert_eq!(format!("{fast:?}"), format!("{reference:?}"));
                        prop_assert_eq!(format!("{fast_fields:?}"), format!("{ref_fields:?}"));
                    }
                    Err(e) => prop_assert!(false, "{:?} is an error: {}", line, e),
                }
            }
        }
    }

    /// A character is checked as `str::from_utf8` checks it: every lead byte from 0x80 on,
    /// every second byte, the edges of the continuation range after them, and sequences cut
    /// short by the end of the line.
    #[test]
    fn a_character_is_checked_as_std_checks_it() {
        let edges = [0x7F, 0x80, 0xBF, 0xC0];
        for b0 in 0x80..=0xFFu8 {
            for b1 in 0..=0xFFu8 {
                for b2 in edges {
                    for b3 in edges {
                        let all = [b0, b1, b2, b3];
                        for len in 1..=4 {
                            let b = &all[..len];
                            let want = (2..=len).find(|&n| std::str::from_utf8(&b[..n]).is_ok());
                            assert_eq!(utf8_char(b, 0), want, "{b:02x?}");
                        }
                    }
                }
            }
        }
    }

    proptest! {
        /// A float read from its bytes is the number serde_json reads from its text (the
        /// reference decoder's value), to the bit.
        #[test]
        fn a_float_from_its_bytes_is_the_float_from_its_text(
            int in "-?(0|[1-9][0-9]{0,19})",
            frac in "(\\.[0-9]{1,20})?",
            exp in "([eE][+-]?[0-9]{1,3})?",
        ) {
            let text = format!("{int}{frac}{exp}");
            let mut p = Scanner::of_bytes(text.as_bytes());
            let got = match p.number() {
                Some(Val::Json(v)) => Some(v),
                Some(_) => None,
                None => None,
            };
            let want = serde_json::from_str::<Value>(&text).ok();
            let bits = |v: &Option<Value>| v.as_ref().and_then(Value::as_f64).map(f64::to_bits);
            prop_assert_eq!(bits(&got), bits(&want), "{}", text);
            prop_assert_eq!(got, want, "{}", text);
        }
    }

    /// A string's end is found past its characters, and not past bytes that are not UTF-8,
    /// wherever they fall in the eight-byte words the search reads.
    #[test]
    fn a_string_ends_at_its_quote_and_not_past_bad_bytes() {
        for pad in 0..10 {
            let lead = "a".repeat(pad);
            for (text, ok) in [
                ("é—😀x".as_bytes(), true),
                (b"ok \\n", true),
                (b"\xff", false),
                (b"\xc3", false),
                (b"\xe2\x88\xff", false),
                (b"\xed\xa0\x80", false),
            ] {
                let mut b = br#"""#.to_vec();
                b.extend_from_slice(lead.as_bytes());
                b.extend_from_slice(text);
                b.extend_from_slice(br#"" tail"#);
                let mut p = Scanner::of_bytes(&b);
                let got = p.string().map(Cow::into_owned);
                let want = std::str::from_utf8(&b[1..b.len() - 6])
                    .ok()
                    .map(|s| s.replace("\\n", "\n"));
                assert_eq!(got.is_some(), ok, "{b:02x?}");
                assert_eq!(got, want, "{b:02x?}");
                let mut q = Scanner::of_bytes(&b);
                assert_eq!(q.skip_string().is_some(), ok, "{b:02x?}");
                if ok {
                    assert_eq!((p.i, q.i), (b.len() - 5, b.len() - 5));
                }
            }
        }
    }

    /// The fast path is worth having only if it takes the usual lines.
    #[test]
    fn the_fast_path_takes_almost_every_generated_line() {
        let bytes = crate::trace::generate::GenConfig {
            events: 5000,
            seed: 11,
            ..Default::default()
        }
        .bytes();
        let text = String::from_utf8(bytes).expect("generated traces are UTF-8");
        let taken = text
            .lines()
            .filter(|l| decode(l, &mut Fields::new()).is_some())
            .count();
        assert!(taken * 100 >= 5000 * 95, "only {taken} of 5000 lines");
        // Escapes stay on the fast path too.
        for line in [
            r#"{"kind":"log","message":"caf\u00e9 \"quoted\" \ud83d\ude00","k\u0065y":["a\n"]}"#,
            r#"{"kind":"announce","formula":"p","text":"The user said so \"explicitly\"."}"#,
        ] {
            assert!(decode(line, &mut Fields::new()).is_some(), "{line}");
        }
    }

    /// Objects and mixed lists inside a line stay on the fast path and agree with the
    /// reference; nesting deep enough to meet serde_json's limit is left to the reference,
    /// which counts the line's own object as a level.
    #[test]
    fn nested_values_are_decoded_and_deep_ones_step_aside() {
        let agree = |line: &str| {
            let mut fast_fields = Fields::new();
            let fast = decode(line, &mut fast_fields);
            let mut ref_fields = Fields::new();
            let reference = decode_line_serde(line, &mut ref_fields);
            (
                fast.map(|f| format!("{f:?} {fast_fields:?}")),
                reference.map(|r| format!("{r:?} {ref_fields:?}")),
            )
        };
        for line in [
            r#"{"kind":"tool_call","args":{"q":"a \"b\" [c]","n":[1,2.5,{"x":null}]},"seq":3}"#,
            r#"{"kind":"plan","steps":[{"id":"S1","deps":[]},{"id":"S2","deps":["S1"]}]}"#,
            r#"{"kind":"log","data":[["a"],"b"],"confidence":0.75,"ts":1767225600.25}"#,
        ] {
            let (fast, reference) = agree(line);
            let fast = fast.unwrap_or_else(|| panic!("fast path declined {line}"));
            assert_eq!(Some(fast), reference.ok(), "{line}");
        }
        for depth in [63, 64, 65, 126, 127, 128, 129, 300] {
            let line = format!(
                r#"{{"kind":"log","deep":{}1{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let (fast, reference) = agree(&line);
            match reference {
                Ok(r) => assert!(fast.is_none() || fast == Some(r), "depth {depth}"),
                Err(_) => assert!(fast.is_none(), "depth {depth}: fast path took an error"),
            }
        }
    }
}
