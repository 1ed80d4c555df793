//! JSON as the mapping reads and writes it, without `serde_json::Value`: a tree whose
//! strings borrow from the text it was parsed from (the GenAI conventions put whole message
//! lists in string attributes, so every model call parses one or two), and writers that put
//! v1 members straight into the output line.
//!
//! Written JSON is the text `serde_json::Value` would give for the same value (objects with
//! their keys sorted and a repeated key's last value, numbers as serde_json writes them), so
//! the importer's lines do not depend on which of the two built them.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

/// A JSON value borrowing its strings where the text had no escapes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as serde_json reads it.
    Num(Number),
    /// A string.
    Str(Cow<'a, str>),
    /// An array.
    Arr(Vec<Json<'a>>),
    /// An object, members in source order (a repeated key counts once: its last value).
    Obj(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Json<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Json<'de>, E> {
                Ok(Json::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Json<'de>, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json<'de>, E> {
                Ok(Json::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json<'de>, E> {
                Ok(Json::Num(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json<'de>, E> {
                Ok(Json::Num(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json<'de>, E> {
                Ok(Number::from_f64(v).map_or(Json::Null, Json::Num))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Json<'de>, E> {
                Ok(Json::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Json<'de>, E> {
                Ok(Json::Str(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Json<'de>, E> {
                Ok(Json::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json<'de>, A::Error> {
                let mut out = Vec::with_capacity(a.size_hint().unwrap_or(0).min(64));
                while let Some(v) = a.next_element()? {
                    out.push(v);
                }
                Ok(Json::Arr(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = a.next_key::<Key<'de>>()? {
                    out.push((k.0, a.next_value()?));
                }
                Ok(Json::Obj(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// An object key, borrowed where it can be.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'a> Json<'a> {
    /// Parses a whole text (surrounding whitespace allowed); `None` when it is not JSON.
    pub(crate) fn parse(text: &'a str) -> Option<Json<'a>> {
        serde_json::from_str(text).ok()
    }

    /// A string that holds JSON (`{` or `[` first), parsed; the string's owner is `s` itself
    /// when it is borrowed, else the parse is copied out.
    pub(crate) fn parse_cow(s: &Cow<'a, str>) -> Option<Json<'a>> {
        let t = s.trim_start();
        if !(t.starts_with('{') || t.starts_with('[')) {
            return None;
        }
        match s {
            Cow::Borrowed(b) => Json::parse(b.trim_start()),
            Cow::Owned(o) => Json::parse(o.trim_start()).map(Json::into_owned),
        }
    }

    /// The same value owning all its strings.
    pub(crate) fn into_owned(self) -> Json<'static> {
        match self {
            Json::Null => Json::Null,
            Json::Bool(b) => Json::Bool(b),
            Json::Num(n) => Json::Num(n),
            Json::Str(s) => Json::Str(Cow::Owned(s.into_owned())),
            Json::Arr(a) => Json::Arr(a.into_iter().map(Json::into_owned).collect()),
            Json::Obj(o) => Json::Obj(
                o.into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }

    /// A member of an object (the last one of that name, as a map would keep it).
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Obj(o) => o.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, when it is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether it is an object.
    pub(crate) fn is_object(&self) -> bool {
        matches!(self, Json::Obj(_))
    }

    /// Whether it is an array.
    pub(crate) fn is_array(&self) -> bool {
        matches!(self, Json::Arr(_))
    }

    /// Compact JSON text.
    pub(crate) fn write(&self, buf: &mut Vec<u8>) {
        match self {
            Json::Null => buf.extend_from_slice(b"null"),
            Json::Bool(true) => buf.extend_from_slice(b"true"),
            Json::Bool(false) => buf.extend_from_slice(b"false"),
            Json::Num(n) => write_number(n, buf),
            Json::Str(s) => push_str(buf, s),
            Json::Arr(a) => {
                buf.push(b'[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    v.write(buf);
                }
                buf.push(b']');
            }
            Json::Obj(o) => write_object(o, buf, |v, buf| v.write(buf)),
        }
    }

    /// Compact JSON text as a string.
    pub(crate) fn to_json_string(&self) -> String {
        let mut buf = Vec::new();
        self.write(&mut buf);
        // Only valid UTF-8 is ever written (strings come from `str`).
        String::from_utf8(buf).unwrap_or_default()
    }
}

/// An object's members, keys sorted byte-wise and a repeated key's last value only (what a
/// `serde_json::Map` would hold and write).
pub(crate) fn write_object<K: AsRef<str>, V>(
    members: &[(K, V)],
    buf: &mut Vec<u8>,
    mut write: impl FnMut(&V, &mut Vec<u8>),
) {
    buf.push(b'{');
    let sorted = members
        .windows(2)
        .all(|w| w[0].0.as_ref() < w[1].0.as_ref());
    if sorted {
        for (i, (k, v)) in members.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            push_str(buf, k.as_ref());
            buf.push(b':');
            write(v, buf);
        }
    } else {
        let mut order: Vec<usize> = (0..members.len()).collect();
        // Stable: among equal keys the later member stays later, and is the one kept.
        order.sort_by(|&a, &b| members[a].0.as_ref().cmp(members[b].0.as_ref()));
        let mut first = true;
        for (n, &i) in order.iter().enumerate() {
            let k = members[i].0.as_ref();
            if order
                .get(n + 1)
                .is_some_and(|&j| members[j].0.as_ref() == k)
            {
                continue;
            }
            if !first {
                buf.push(b',');
            }
            first = false;
            push_str(buf, k);
            buf.push(b':');
            write(&members[i].1, buf);
        }
    }
    buf.push(b'}');
}

/// A number as serde_json writes it.
pub(crate) fn write_number(n: &Number, buf: &mut Vec<u8>) {
    if let Some(u) = n.as_u64() {
        push_u64(buf, u);
    } else if let Some(i) = n.as_i64() {
        push_i64(buf, i);
    } else {
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *buf, n);
    }
}

/// Decimal digits of an unsigned integer.
pub(crate) fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Decimal digits of a signed integer.
pub(crate) fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// What each byte becomes in a JSON string: 0 as is, else the letter after the backslash
/// (`u` for `\u00XX`). The same escapes serde_json writes.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// A JSON string literal (quotes and escapes) of `s`.
pub(crate) fn push_str(buf: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    buf.reserve(bytes.len() + 2);
    buf.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Eight bytes at a time while none needs an escape (most text has none).
        if let Some(chunk) = bytes.get(i..i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            if !needs_escape(u64::from_le_bytes(word)) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        let e = ESCAPE[b as usize];
        if e != 0 {
            buf.extend_from_slice(&bytes[start..i]);
            buf.push(b'\\');
            buf.push(e);
            if e == b'u' {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                buf.extend_from_slice(b"00");
                buf.push(HEX[usize::from(b >> 4)]);
                buf.push(HEX[usize::from(b & 0xf)]);
            }
            start = i + 1;
        }
        i += 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// Whether any of eight bytes is below 0x20, a quote or a backslash (a byte-wise test
/// without carries between bytes: exact, no false positives or negatives).
fn needs_escape(w: u64) -> bool {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES << 7;
    // A byte is below 0x20 exactly when its low seven bits plus 0x60 stay below 0x80 and
    // its high bit is clear.
    let low7 = w & !HIGH;
    let ctrl = !(low7 + ONES * 0x60) & !w & HIGH;
    let q = w ^ (ONES * u64::from(b'"'));
    let quote = !((q & !HIGH) + !HIGH) & !q & HIGH;
    let bs = w ^ (ONES * u64::from(b'\\'));
    let back = !((bs & !HIGH) + !HIGH) & !bs & HIGH;
    (ctrl | quote | back) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The oracle: serde_json's own reading and writing.
    fn via_serde(text: &str) -> Option<String> {
        serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .map(|v| v.to_string())
    }

    #[test]
    fn writes_what_serde_json_value_writes() {
        for text in [
            r#"{"b":1,"a":[true,false,null],"c":{"z":"\u0001\n\"","y":-0.0}}"#,
            r#"{"k":1,"k":2,"a":{"k":[1],"k":"last"}}"#,
            r#"[18446744073709551615,-9223372036854775808,1e300,0.1,2.5e-8,100,1.0]"#,
            r#""\u001b[31m ünï \u202e \\ / \t""#,
            r#"{"":0,"é":1,"e":2,"E":3}"#,
            "  [ ]  ",
            "{}",
        ] {
            let ours = Json::parse(text).map(|j| j.to_json_string());
            assert_eq!(ours, via_serde(text), "{text}");
        }
        for bad in ["", "{", "[1,]", "1 2", "nul", "{\"a\" 1}"] {
            assert!(Json::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn every_control_character_escapes_like_serde_json() {
        let s: String = (0u8..0x80)
            .map(char::from)
            .chain("ÿ€\u{2028}".chars())
            .collect();
        let mut ours = Vec::new();
        push_str(&mut ours, &s);
        assert_eq!(ours, serde_json::to_vec(&s).expect("serializes"));
    }

    #[test]
    fn the_eight_byte_test_finds_exactly_the_bytes_to_escape() {
        for b in 0..=255u8 {
            for pos in 0..8 {
                let mut word = [b'a'; 8];
                word[pos] = b;
                let want = b < 0x20 || b == b'"' || b == b'\\';
                assert_eq!(
                    needs_escape(u64::from_le_bytes(word)),
                    want,
                    "{b:#x} at {pos}"
                );
                // Neighbours that need nothing, or the high bit set, change nothing.
                let mut word = [0xffu8; 8];
                word[pos] = b;
                assert_eq!(
                    needs_escape(u64::from_le_bytes(word)),
                    want,
                    "{b:#x} in 0xff"
                );
            }
        }
        let mut s = String::new();
        for i in 0..300u32 {
            s.push(char::from_u32(i % 0x90).unwrap_or('x'));
            let mut ours = Vec::new();
            push_str(&mut ours, &s);
            assert_eq!(ours, serde_json::to_vec(&s).expect("serializes"), "{s:?}");
        }
    }

    #[test]
    fn strings_borrow_when_they_can() {
        let text = r#"{"a":"plain","b":"esc\"aped"}"#;
        let j = Json::parse(text).expect("parses");
        assert!(matches!(
            j.get("a"),
            Some(Json::Str(Cow::Borrowed("plain")))
        ));
        assert!(matches!(j.get("b"), Some(Json::Str(Cow::Owned(s))) if s == "esc\"aped"));
    }
}
