//! JSON documents read a piece at a time: where an object's members and an array's items
//! are in the text (byte spans), found without building the document, so an importer parses
//! one observation, run or message at a time and holds only what it needs across them.
//!
//! The splitter is lenient: it trusts the text to be JSON, which [`validate`] checks first
//! with serde_json's own parser (so a broken file's error, line and column are the ones the
//! whole-document import gives). A piece is then parsed by serde_json from its span alone.

use std::fs::File;
use std::io;

use std::collections::BTreeMap;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{Format, ImportError, broken, budget, json_error};

/// A source read by place: a file (positional reads, no shared cursor) or bytes in memory.
pub trait At {
    /// Reads into `buf` from byte `off`; 0 at the end.
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize>;
    /// The source's length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Whether the source is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
}

impl At for File {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, off)
    }
    fn len(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }
}

impl At for [u8] {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        let start = (off as usize).min(<[u8]>::len(self));
        let n = buf.len().min(<[u8]>::len(self) - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
    fn len(&self) -> io::Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }
}

/// A sequential reader over an [`At`] from a place (for serde_json's reader).
struct Seq<'a, S: At + ?Sized> {
    src: &'a S,
    off: u64,
}

impl<S: At + ?Sized> io::Read for Seq<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.src.read_at(buf, self.off)?;
        self.off += n as u64;
        Ok(n)
    }
}

/// Where a value is in the source: its first byte and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Offset of the value's first byte.
    pub start: u64,
    /// Its length in bytes.
    pub len: u64,
}

/// Checks that the whole source is one JSON document (whitespace around it allowed), with
/// serde_json's parser and in bounded memory (nothing is kept). It walks the text as
/// parsing it into a `serde_json::Value` does (every string decoded, the same nesting
/// limit), so a broken source fails here with the error, line and column that parse gives.
pub fn validate<S: At + ?Sized>(src: &S) -> Result<(), serde_json::Error> {
    let r = io::BufReader::with_capacity(1 << 16, Seq { src, off: 0 });
    let mut de = serde_json::Deserializer::from_reader(r);
    Walk.deserialize(&mut de)?;
    de.end()
}

/// A value visited like a `serde_json::Value` is built, keeping nothing.
struct Walk;

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any valid JSON value")
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
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element_seed(Walk)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_key_seed(Key)?.is_some() {
            a.next_value_seed(Walk)?;
        }
        Ok(())
    }
}

/// A key, decoded and dropped.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(Walk)
    }
}

/// Reads the bytes of `span`.
pub fn bytes<S: At + ?Sized>(src: &S, span: Span) -> io::Result<Vec<u8>> {
    let mut out = vec![0u8; span.len as usize];
    let mut filled = 0;
    while filled < out.len() {
        match src.read_at(&mut out[filled..], span.start + filled as u64) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// A buffered cursor over a source of valid JSON.
pub struct Scanner<'a, S: At + ?Sized> {
    src: &'a S,
    buf: Vec<u8>,
    /// Source offset of `buf[0]`.
    base: u64,
    /// Bytes of `buf` filled.
    filled: usize,
    /// Index of the next byte in `buf`.
    at: usize,
}

impl<'a, S: At + ?Sized> Scanner<'a, S> {
    /// A scanner reading `cap` bytes at a time (at least 1), from the source's start.
    pub fn new(src: &'a S, cap: usize) -> Self {
        Scanner {
            src,
            buf: vec![0; cap.max(1)],
            base: 0,
            filled: 0,
            at: 0,
        }
    }

    /// The offset of the next byte.
    pub fn pos(&self) -> u64 {
        self.base + self.at as u64
    }

    /// Moves to offset `off`.
    pub fn seek(&mut self, off: u64) {
        if off >= self.base && off <= self.base + self.filled as u64 {
            self.at = (off - self.base) as usize;
        } else {
            self.base = off;
            self.filled = 0;
            self.at = 0;
        }
    }

    /// The next byte without taking it (`None` at the end).
    fn peek(&mut self) -> io::Result<Option<u8>> {
        if self.at == self.filled {
            self.base += self.filled as u64;
            self.at = 0;
            self.filled = 0;
            loop {
                match self.src.read_at(&mut self.buf, self.base) {
                    Ok(n) => {
                        self.filled = n;
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if self.filled == 0 {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[self.at]))
    }

    /// Takes the next byte; the end of the source is an error (the text was validated).
    fn next(&mut self) -> io::Result<u8> {
        let b = self.peek()?.ok_or_else(short)?;
        self.at += 1;
        Ok(b)
    }

    /// The next byte that is not whitespace, not taken.
    fn peek_token(&mut self) -> io::Result<Option<u8>> {
        while let Some(b) = self.peek()? {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.at += 1;
            } else {
                return Ok(Some(b));
            }
        }
        Ok(None)
    }

    /// Skips a string whose opening quote was taken.
    fn skip_string_rest(&mut self) -> io::Result<()> {
        loop {
            if self.at == self.filled && self.peek()?.is_none() {
                return Err(short());
            }
            let window = &self.buf[self.at..self.filled];
            match memchr::memchr2(b'"', b'\\', window) {
                Some(i) => {
                    self.at += i + 1;
                    if window[i] == b'"' {
                        return Ok(());
                    }
                    self.next()?;
                }
                None => self.at = self.filled,
            }
        }
    }

    /// Skips one value (after whitespace); returns its span.
    pub fn skip_value(&mut self) -> io::Result<Span> {
        self.peek_token()?.ok_or_else(short)?;
        let start = self.pos();
        let mut depth = 0usize;
        loop {
            let b = self.next()?;
            match b {
                b'"' => self.skip_string_rest()?,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth = depth.checked_sub(1).ok_or_else(short)?,
                _ => {}
            }
            if depth == 0 {
                // A scalar other than a string runs to the next delimiter.
                if !matches!(b, b'"' | b'}' | b']') {
                    while let Some(c) = self.peek()? {
                        if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                            break;
                        }
                        self.at += 1;
                    }
                }
                return Ok(Span {
                    start,
                    len: self.pos() - start,
                });
            }
        }
    }

    /// Calls `f` with each member of the object at `span` (its key's text as written, with
    /// its quotes, and its value's span), in the text's order. Not an object: nothing.
    pub fn members(
        &mut self,
        span: Span,
        mut f: impl FnMut(&[u8], Span) -> io::Result<()>,
    ) -> io::Result<()> {
        self.seek(span.start);
        if self.peek_token()? != Some(b'{') {
            return Ok(());
        }
        self.at += 1;
        let mut key = Vec::new();
        loop {
            match self.peek_token()?.ok_or_else(short)? {
                b'}' => return Ok(()),
                b',' => {
                    self.at += 1;
                    continue;
                }
                _ => {}
            }
            let k = self.skip_value()?;
            key.clear();
            key.extend_from_slice(&bytes(self.src, k)?);
            self.seek(k.start + k.len);
            if self.peek_token()? != Some(b':') {
                return Err(short());
            }
            self.at += 1;
            let v = self.skip_value()?;
            let after = v.start + v.len;
            f(&key, v)?;
            self.seek(after);
        }
    }

    /// Calls `f` with the span of each item of the array at `span`, in order. Not an
    /// array: nothing.
    pub fn items(
        &mut self,
        span: Span,
        mut f: impl FnMut(Span) -> io::Result<()>,
    ) -> io::Result<()> {
        self.items_from(span.start, false, |v| f(v).map(|()| true))
    }

    /// Like [`Scanner::items`] from `at`, the array's start, or with `inside` a place inside
    /// it (where an earlier walk stopped: an item, or a comma or whitespace before one); `f`
    /// returning `false` stops the walk before the item it was given.
    pub fn items_from(
        &mut self,
        at: u64,
        inside: bool,
        mut f: impl FnMut(Span) -> io::Result<bool>,
    ) -> io::Result<()> {
        self.seek(at);
        if !inside {
            if self.peek_token()? != Some(b'[') {
                return Ok(());
            }
            self.at += 1;
        }
        loop {
            match self.peek_token()?.ok_or_else(short)? {
                b']' => return Ok(()),
                b',' => {
                    self.at += 1;
                    continue;
                }
                _ => {}
            }
            let start = self.pos();
            let v = self.skip_value()?;
            let after = v.start + v.len;
            if !f(v)? {
                self.seek(start);
                return Ok(());
            }
            self.seek(after);
        }
    }

    /// The span of the whole document (after leading whitespace, to the end of its value).
    pub fn document(&mut self) -> io::Result<Span> {
        self.seek(0);
        self.skip_value()
    }
}

/// A validated JSON source read piece by piece for one importer: its errors name the
/// importer's format and the piece.
pub struct Pieces<'a, S: At + ?Sized> {
    src: &'a S,
    sc: Scanner<'a, S>,
    format: Format,
}

impl<'a, S: At + ?Sized> Pieces<'a, S> {
    /// Checks the whole source ([`validate`]; its error is the whole-document parse's, as
    /// `JSON: ...` at its line and column) and reads it `cap` bytes at a time.
    pub fn open(src: &'a S, format: Format, cap: usize) -> Result<Self, ImportError> {
        validate(src).map_err(|e| json_error(format, &e, "JSON"))?;
        Ok(Pieces {
            src,
            sc: Scanner::new(src, cap),
            format,
        })
    }

    /// The span of the whole document.
    pub fn document(&mut self) -> Result<Span, ImportError> {
        let f = self.format;
        self.sc.document().map_err(|e| reread(f, e))
    }

    /// The members of the document, which must be a JSON object (an error naming the top
    /// level when it is not).
    pub fn top_members(&mut self) -> Result<BTreeMap<String, Span>, ImportError> {
        let doc = self.document()?;
        if self.first_byte(doc)? != b'{' {
            return Err(broken(self.format, "the top level", "not a JSON object"));
        }
        self.members(doc)
    }

    /// The members of the object at `span` by key, the last of a repeated key kept (as
    /// serde_json's map keeps it). Not an object: none.
    pub fn members(&mut self, span: Span) -> Result<BTreeMap<String, Span>, ImportError> {
        let mut out = BTreeMap::new();
        let f = self.format;
        self.sc
            .members(span, |k, v| {
                if let Some(k) = key(k) {
                    out.insert(k, v);
                }
                Ok(())
            })
            .map_err(|e| reread(f, e))?;
        Ok(out)
    }

    /// Calls `f` with each item of the array at `list` and its place (nothing when there is
    /// no list or it is not an array); the first error ends the walk.
    pub fn each_item(
        &mut self,
        list: Option<Span>,
        mut f: impl FnMut(&mut Self, usize, Span) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        let Some(list) = list else { return Ok(()) };
        let mut spans = Vec::new();
        let fmt = self.format;
        // Items a batch at a time: the walk must not hold the scanner while `f` reads.
        let (mut at, mut inside) = (list.start, false);
        // Item spans found per scan before they are handed out: 1,024 with the usual
        // 64 KiB reads, fewer with smaller ones (tests walk every batch boundary).
        let batch = (self.sc.buf.len() / 64).clamp(1, 1024);
        let mut i = 0;
        loop {
            let mut resume = None;
            self.sc
                .items_from(at, inside, |sp| {
                    if spans.len() == batch {
                        resume = Some(sp.start);
                        return Ok(false);
                    }
                    spans.push(sp);
                    Ok(true)
                })
                .map_err(|e| reread(fmt, e))?;
            for sp in spans.drain(..) {
                f(self, i, sp)?;
                i += 1;
            }
            match resume {
                Some(next) => (at, inside) = (next, true),
                None => return Ok(()),
            }
        }
    }

    /// The object at `span` without its member `skip`, each member parsed alone (`loc`: the
    /// object's place, for errors), and where `skip` is.
    pub fn object_but(
        &mut self,
        span: Span,
        skip: &str,
        loc: &str,
    ) -> Result<(serde_json::Map<String, serde_json::Value>, Option<Span>), ImportError> {
        let mut obj = serde_json::Map::new();
        let mut skipped = None;
        for (k, sp) in self.members(span)? {
            if k == skip {
                skipped = Some(sp);
            } else {
                let v = self.piece(sp, &format!("{loc}.{k}"))?;
                obj.insert(k, v);
            }
        }
        Ok((obj, skipped))
    }

    /// The value at `span` parsed alone, within the budget (`what`: where it is, for
    /// errors and budget refusals).
    pub fn piece(&self, span: Span, what: &str) -> Result<serde_json::Value, ImportError> {
        let text = self.text(span, what)?;
        serde_json::from_slice(&text).map_err(|e| json_error(self.format, &e, what))
    }

    /// The text of the value at `span`, within the budget (as [`Pieces::piece`] checks it),
    /// for a parse of part of it.
    pub fn text(&self, span: Span, what: &str) -> Result<Vec<u8>, ImportError> {
        let max = budget::current().max_bytes;
        if span.len > max {
            return Err(budget::too_many_bytes(self.format, what, max));
        }
        let text = bytes(self.src, span).map_err(|e| reread(self.format, e))?;
        budget::check_json(self.format, what, &text)?;
        Ok(text)
    }

    /// The first byte of the value at `span`.
    pub fn first_byte(&self, span: Span) -> Result<u8, ImportError> {
        let mut b = [0u8; 1];
        match self.src.read_at(&mut b, span.start) {
            Ok(1) => Ok(b[0]),
            Ok(_) => Err(reread(self.format, io::ErrorKind::UnexpectedEof.into())),
            Err(e) => Err(reread(self.format, e)),
        }
    }
}

/// A read error of a source already checked whole (it changed, or the disk failed).
fn reread(format: Format, e: io::Error) -> ImportError {
    broken(format, "the file", format!("cannot read it again: {e}"))
}

fn short() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "the JSON ended inside a value it had checked whole",
    )
}

/// A key as written (with its quotes) decoded; `None` when it is not a JSON string.
pub fn key(text: &[u8]) -> Option<String> {
    serde_json::from_slice(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members_of(text: &str, cap: usize) -> Vec<(String, String)> {
        let src = text.as_bytes();
        let mut s = Scanner::new(src, cap);
        let doc = s.document().expect("doc");
        let mut out = Vec::new();
        s.members(doc, |k, v| {
            let v = bytes(src, v)?;
            out.push((key(k).expect("key"), String::from_utf8(v).expect("utf-8")));
            Ok(())
        })
        .expect("members");
        out
    }

    #[test]
    fn members_and_items_are_found_at_every_buffer_size() {
        let text = " {\"a\" : [1, {\"b\":\"]}\\\"\"}, -2.5e3 ] ,\"c\\u0041\":true,\"d\":\"x\\\\\",\"e\":{}}\n";
        let v: serde_json::Value = serde_json::from_str(text).expect("json");
        for cap in 1..=text.len() + 1 {
            let m = members_of(text, cap);
            let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, ["a", "cA", "d", "e"], "cap {cap}");
            for (k, text) in &m {
                let parsed: serde_json::Value = serde_json::from_str(text).expect("piece");
                assert_eq!(&parsed, &v[k.as_str()], "cap {cap}, {k}");
            }
            let src = text.as_bytes();
            let mut s = Scanner::new(src, cap);
            let a = m
                .iter()
                .find(|(k, _)| k == "a")
                .map(|(_, t)| text.find(t.as_str()).expect("found"))
                .expect("a");
            let span = s.document().expect("doc");
            assert_eq!(span.start, 1);
            let mut items = Vec::new();
            let at = Span {
                start: a as u64,
                len: 0,
            };
            s.items(at, |sp| {
                items.push(String::from_utf8(bytes(src, sp)?).expect("utf-8"));
                Ok(())
            })
            .expect("items");
            assert_eq!(items, ["1", "{\"b\":\"]}\\\"\"}", "-2.5e3"], "cap {cap}");
        }
    }

    #[test]
    fn validate_gives_the_parsers_own_error_and_place() {
        let bad = b"{\"a\": [1,\n 2,, 3]}";
        let whole = serde_json::from_slice::<serde_json::Value>(bad).expect_err("bad");
        let e = validate(&bad[..]).expect_err("bad");
        assert_eq!((e.line(), e.column()), (whole.line(), whole.column()));
        assert_eq!(e.to_string(), whole.to_string());
        assert!(validate(&b" {\"a\": 1} \n"[..]).is_ok());
        assert!(validate(&b"{} {}"[..]).is_err());
    }
}
