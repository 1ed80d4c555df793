//! MessagePack to JSON, for the checkpoints LangGraph writes (`langgraph.rs`): its serializer
//! (`JsonPlusSerializer`) stores channel values as msgpack, with Python objects as extension
//! types whose payload is itself msgpack: `[module, class, data, method?]`.
//!
//! How values become JSON (nothing is dropped without a trace):
//! - maps with string keys are objects; other keys are written as their JSON text;
//! - binary data is a base64 string;
//! - a LangGraph object (extension codes 0 to 5) is its data: a keyword or pydantic object
//!   gives an object with `__class__` (`module.Class`) added, a single argument (a datetime's
//!   text, a UUID) is that argument, positional arguments are a list;
//! - any other extension is `{"__ext__": code, "data": base64}`.
//!
//! Input is untrusted: lengths are checked against what is left and nesting is bounded, so a
//! broken or hostile blob is an error, never a crash.

use base64::Engine;
use serde_json::{Map, Value};

/// Deepest nesting read (a hostile blob of nested arrays must not overflow the stack).
const MAX_DEPTH: usize = 200;

/// Decodes one msgpack value filling all of `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Value, String> {
    let mut r = Reader { b: bytes, at: 0 };
    let v = r.value(0)?;
    if r.at != bytes.len() {
        return Err(format!("{} bytes after the value", bytes.len() - r.at));
    }
    Ok(v)
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.b.len())
            .ok_or_else(|| format!("cut short at byte {} (wanted {n} more)", self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn uint(&mut self, n: usize) -> Result<u64, String> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn int(&mut self, n: usize) -> Result<i64, String> {
        let u = self.uint(n)?;
        let shift = 64 - 8 * n as u32;
        Ok(((u << shift) as i64) >> shift)
    }

    fn str(&mut self, n: usize) -> Result<Value, String> {
        let s = self.take(n)?;
        Ok(Value::String(String::from_utf8_lossy(s).into_owned()))
    }

    fn bin(&mut self, n: usize) -> Result<Value, String> {
        let s = self.take(n)?;
        Ok(Value::String(
            base64::engine::general_purpose::STANDARD.encode(s),
        ))
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Value, String> {
        // Each element takes at least a byte: a length beyond what is left is a lie.
        if n > self.b.len() - self.at {
            return Err(format!(
                "an array of {n} at byte {} is longer than the blob",
                self.at
            ));
        }
        (0..n)
            .map(|_| self.value(depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array)
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value, String> {
        if n > self.b.len() - self.at {
            return Err(format!(
                "a map of {n} at byte {} is longer than the blob",
                self.at
            ));
        }
        let mut m = Map::new();
        for _ in 0..n {
            let k = match self.value(depth + 1)? {
                Value::String(s) => s,
                other => key_text(&other),
            };
            let v = self.value(depth + 1)?;
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }

    fn ext(&mut self, n: usize, depth: usize) -> Result<Value, String> {
        let code = self.take(1)?[0] as i8;
        let data = self.take(n)?;
        if (0..=5).contains(&code) {
            let mut inner = Reader { b: data, at: 0 };
            if let Ok(Value::Array(parts)) = inner.value(depth + 1) {
                return Ok(object(code, parts));
            }
        }
        let mut m = Map::new();
        m.insert("__ext__".into(), Value::from(code));
        m.insert(
            "data".into(),
            Value::String(base64::engine::general_purpose::STANDARD.encode(data)),
        );
        Ok(Value::Object(m))
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "nested deeper than {MAX_DEPTH} at byte {}",
                self.at
            ));
        }
        let tag = self.take(1)?[0];
        Ok(match tag {
            0x00..=0x7f => Value::from(tag),
            0x80..=0x8f => self.map(usize::from(tag & 0x0f), depth)?,
            0x90..=0x9f => self.array(usize::from(tag & 0x0f), depth)?,
            0xa0..=0xbf => self.str(usize::from(tag & 0x1f))?,
            0xc0 => Value::Null,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.uint(1 << (tag - 0xc4))? as usize;
                self.bin(n)?
            }
            0xc7..=0xc9 => {
                let n = self.uint(1 << (tag - 0xc7))? as usize;
                self.ext(n, depth)?
            }
            0xca => {
                let bits = self.uint(4)? as u32;
                float(f64::from(f32::from_bits(bits)))
            }
            0xcb => float(f64::from_bits(self.uint(8)?)),
            0xcc..=0xcf => Value::from(self.uint(1 << (tag - 0xcc))?),
            0xd0..=0xd3 => Value::from(self.int(1 << (tag - 0xd0))?),
            0xd4..=0xd8 => self.ext(1 << (tag - 0xd4), depth)?,
            0xd9..=0xdb => {
                let n = self.uint(1 << (tag - 0xd9))? as usize;
                self.str(n)?
            }
            0xdc | 0xdd => {
                let n = self.uint(if tag == 0xdc { 2 } else { 4 })? as usize;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.uint(if tag == 0xde { 2 } else { 4 })? as usize;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::from(i64::from(tag as i8)),
            0xc1 => return Err(format!("byte 0xc1 (never used) at {}", self.at - 1)),
        })
    }
}

/// A key that is not a string, as its JSON text cut at [`MAX_KEY`] bytes: nested maps used
/// as keys would otherwise grow their escaped text exponentially with the nesting.
fn key_text(v: &Value) -> String {
    let mut t = v.to_string();
    if t.len() > MAX_KEY {
        let mut end = MAX_KEY;
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        t.truncate(end);
        t.push('…');
    }
    t
}

/// The longest key text kept for a key that is not a string.
const MAX_KEY: usize = 128;

/// A float as JSON (NaN and infinities have no JSON form: their text).
fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or_else(|| Value::String(f.to_string()), Value::Number)
}

/// A LangGraph object `[module, class, data, method?]` as JSON (see the module docs).
fn object(code: i8, mut parts: Vec<Value>) -> Value {
    let class = match (parts.first(), parts.get(1)) {
        (Some(Value::String(m)), Some(Value::String(c))) => format!("{m}.{c}"),
        _ => String::new(),
    };
    let data = if parts.len() > 2 {
        parts.swap_remove(2)
    } else {
        Value::Null
    };
    match (code, data) {
        (_, Value::Object(mut m)) => {
            if !class.is_empty() {
                m.insert("__class__".into(), Value::String(class));
            }
            Value::Object(m)
        }
        (0 | 3, single) => single,
        (_, other) => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_containers_and_objects() {
        // {"a": [1, -1, "x", nil, true, 1.5]}
        let b = [
            0x81, 0xa1, b'a', 0x96, 0x01, 0xff, 0xa1, b'x', 0xc0, 0xc3, 0xcb, 0x3f, 0xf8, 0, 0, 0,
            0, 0, 0,
        ];
        assert_eq!(
            decode(&b).unwrap(),
            json!({"a": [1, -1, "x", null, true, 1.5]})
        );
        assert_eq!(decode(&[0xd1, 0xff, 0x38]).unwrap(), json!(-200));
        assert_eq!(decode(&[0xcd, 0x01, 0x00]).unwrap(), json!(256));
        // ext 5: ["m", "C", {"k": 1}]
        let payload = [0x93, 0xa1, b'm', 0xa1, b'C', 0x81, 0xa1, b'k', 0x01];
        let mut b = vec![0xc7, payload.len() as u8, 5];
        b.extend_from_slice(&payload);
        assert_eq!(decode(&b).unwrap(), json!({"k": 1, "__class__": "m.C"}));
    }

    #[test]
    fn broken_and_hostile_blobs_are_errors() {
        assert!(decode(&[0xa5, b'a']).is_err());
        assert!(decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[0xc1]).is_err());
        assert!(decode(&[0x01, 0x02]).is_err());
        let deep = vec![0x91; 10_000];
        assert!(decode(&deep).is_err());
        // Maps as keys of maps, 60 deep: the key texts stay short (escaping each level's
        // text inside the next one would double it every level).
        let mut b = vec![0x81; 60];
        b.extend([0x00; 61]);
        let t = std::time::Instant::now();
        assert!(decode(&b).is_ok());
        assert!(t.elapsed().as_secs() < 1);
    }
}
