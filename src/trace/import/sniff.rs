//! What the start of a file says about its format, without parsing it: the keys of the
//! outer JSON objects, whether it is an archive or binary, whether it is one JSON document
//! rather than JSON lines. Detection sees only a head (the first [`super::HEAD_BYTES`]), so
//! every scan here tolerates input cut anywhere.

/// The shape of a file's head.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sniff {
    /// The first byte that is not JSON whitespace (after a UTF-8 byte-order mark).
    pub first: Option<u8>,
    /// Object keys in the order met, with their object depth (1: the outer object; arrays
    /// do not count, so the keys of `{"a": [{"b": 1}]}` are `(1, a)` and `(2, b)`). Only
    /// depths 1 to 3 are kept.
    pub keys: Vec<(u8, String)>,
    /// Whether the whole head was a JSON string holding JSON (a double-encoded document);
    /// `keys` are then those of the decoded text.
    pub double_encoded: bool,
    /// A ZIP archive: the name of its first entry, when the head holds its header.
    pub zip: Option<String>,
    /// Binary content that is no JSON at all (NUL bytes, a compressed stream), by name.
    pub binary: Option<&'static str>,
    /// Whether the first line is a JSON value complete on that line (as in JSON lines).
    pub first_line_complete: bool,
    /// Whether the head holds more than one line.
    pub multiline: bool,
    /// How many of the first 64 lines are complete JSON objects (JSON lines have them; a
    /// pretty-printed document has none, or only small objects on a line of their own).
    pub object_lines: usize,
}

impl Sniff {
    /// Whether the key `key` occurs at object depth `depth`.
    pub fn has(&self, depth: u8, key: &str) -> bool {
        self.keys.iter().any(|(d, k)| *d == depth && k == key)
    }

    /// Whether the key occurs at the outer level.
    pub fn top(&self, key: &str) -> bool {
        self.has(1, key)
    }

    /// The outer keys, in order.
    pub fn top_keys(&self) -> impl Iterator<Item = &str> {
        self.keys
            .iter()
            .filter(|(d, _)| *d == 1)
            .map(|(_, k)| k.as_str())
    }

    /// Whether the head is a JSON object or array spread over several lines (a pretty
    /// printed document), not JSON lines: the first line is not complete and no line among
    /// the first ones is a whole object (JSON lines with a broken first line have those).
    pub fn json_document(&self) -> bool {
        matches!(self.first, Some(b'{' | b'['))
            && self.multiline
            && !self.first_line_complete
            && self.object_lines == 0
    }
}

const MAX_KEYS: usize = 2048;

/// Looks at a head.
pub fn sniff(head: &[u8]) -> Sniff {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let mut s = Sniff::default();
    if let Some(name) = zip_first_entry(head) {
        s.zip = Some(name);
        s.binary = Some("a ZIP archive");
        return s;
    }
    s.binary = binary_kind(head);
    if s.binary.is_some() {
        return s;
    }
    s.first = head.iter().copied().find(|b| !is_ws(*b));
    let body = trim_start(head);
    s.multiline = body.contains(&b'\n');
    let first_line = body.split(|&b| b == b'\n').next().unwrap_or(&[]);
    s.first_line_complete = serde_json::from_slice::<serde::de::IgnoredAny>(first_line).is_ok();
    s.object_lines = body
        .split(|&b| b == b'\n')
        .take(64)
        // JSON lines start at the margin; a one-line object indented inside a
        // pretty-printed document does not count.
        .filter(|l| {
            l.starts_with(b"{") && serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok()
        })
        .count();
    if s.first == Some(b'"') {
        let decoded = unescape_prefix(body);
        let inner = sniff_json(&decoded);
        if matches!(inner.first, Some(b'{' | b'[')) {
            s.keys = inner.keys;
            s.double_encoded = true;
        }
        return s;
    }
    s.keys = sniff_json(body).keys;
    s
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn trim_start(b: &[u8]) -> &[u8] {
    let i = b.iter().position(|&c| !is_ws(c)).unwrap_or(b.len());
    &b[i..]
}

/// The keys of a (possibly cut) JSON text.
fn sniff_json(text: &[u8]) -> Sniff {
    let mut s = Sniff {
        first: text.iter().copied().find(|b| !is_ws(*b)),
        ..Sniff::default()
    };
    // The open containers: true for an object. Per object, whether the next string is a key.
    let mut stack: Vec<bool> = Vec::new();
    let mut want_key: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < text.len() && s.keys.len() < MAX_KEYS {
        match text[i] {
            b'{' => {
                stack.push(true);
                want_key.push(true);
            }
            b'[' => {
                stack.push(false);
                want_key.push(false);
            }
            b'}' | b']' => {
                stack.pop();
                want_key.pop();
                if stack.is_empty() {
                    break;
                }
            }
            b',' => {
                if let (Some(true), Some(w)) = (stack.last(), want_key.last_mut()) {
                    *w = true;
                }
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < text.len() && text[j] != b'"' {
                    j += if text[j] == b'\\' { 2 } else { 1 };
                }
                if j >= text.len() {
                    break;
                }
                if let (Some(true), Some(w)) = (stack.last(), want_key.last_mut())
                    && *w
                {
                    *w = false;
                    let depth = stack.iter().filter(|o| **o).count();
                    if (1..=3).contains(&depth) {
                        let key = String::from_utf8_lossy(&text[start..j]).into_owned();
                        s.keys.push((depth as u8, key));
                    }
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    s
}

/// The text of a JSON string that starts `text`, decoded as far as the text goes (a cut
/// escape ends it). Surrogate pairs and bad escapes become U+FFFD: only keys are wanted.
fn unescape_prefix(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 1;
    while i < text.len() {
        match text[i] {
            b'"' => break,
            b'\\' => {
                let Some(&c) = text.get(i + 1) else { break };
                match c {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'b' | b'f' => out.push(b' '),
                    b'u' => {
                        let Some(hex) = text.get(i + 2..i + 6) else {
                            break;
                        };
                        let ch = std::str::from_utf8(hex)
                            .ok()
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                            .and_then(char::from_u32)
                            .unwrap_or('\u{FFFD}');
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        i += 4;
                    }
                    other => out.push(other),
                }
                i += 2;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// The name of the first entry of a ZIP archive, read from its local file header.
fn zip_first_entry(head: &[u8]) -> Option<String> {
    if !head.starts_with(b"PK\x03\x04") {
        return None;
    }
    let len = |at: usize| -> Option<usize> {
        let b = head.get(at..at + 2)?;
        Some(usize::from(u16::from_le_bytes([b[0], b[1]])))
    };
    let n = len(26)?;
    let name = head.get(30..30 + n).unwrap_or(&head[head.len().min(30)..]);
    Some(String::from_utf8_lossy(name).into_owned())
}

/// What binary content the head is, if it is not text.
fn binary_kind(head: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x1f\x8b", "gzip-compressed data"),
        (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
        (b"BZh", "bzip2-compressed data"),
        (b"\xfd7zXZ\x00", "xz-compressed data"),
        (b"%PDF", "a PDF document"),
        (b"\x89PNG", "a PNG image"),
        (b"PAR1", "a Parquet file"),
        (b"SQLite format 3\x00", "an SQLite database"),
    ];
    if let Some((_, name)) = MAGIC.iter().find(|(m, _)| head.starts_with(m)) {
        return Some(name);
    }
    head[..head.len().min(8192)]
        .contains(&0)
        .then_some("binary data (NUL bytes)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_by_depth_in_a_cut_document() {
        let s = sniff(b"{\n  \"version\": 2,\n  \"eval\": {\"task\": \"x\", \"a\": [{\"b\": 1}]},\n  \"samples\": [ {\"id\": \"cut here");
        assert_eq!(
            s.keys,
            [
                (1, "version".to_string()),
                (1, "eval".to_string()),
                (2, "task".to_string()),
                (2, "a".to_string()),
                (3, "b".to_string()),
                (1, "samples".to_string()),
                (2, "id".to_string()),
            ]
        );
        assert!(s.json_document());
        assert!(!s.first_line_complete);
    }

    #[test]
    fn string_values_and_escapes_are_not_keys() {
        let s = sniff(br#"{"a": "x\", \"fake\": 1", "b": {"c": "}"}, "d": 2}"#);
        let keys: Vec<&str> = s.keys.iter().map(|(_, k)| k.as_str()).collect();
        assert_eq!(keys, ["a", "b", "c", "d"]);
        assert!(s.first_line_complete);
        assert!(!s.json_document());
    }

    #[test]
    fn double_encoded_documents_are_looked_into() {
        let s = sniff(br#""{\n  \"agents\": [\n    {\n      \"name\": \"cs\", \"u\": \"\u00e9"#);
        assert!(s.double_encoded);
        assert!(s.top("agents"));
        assert!(s.has(2, "name"));
    }

    #[test]
    fn archives_and_binaries() {
        let mut zip = b"PK\x03\x04".to_vec();
        zip.extend_from_slice(&[0; 22]);
        zip.extend_from_slice(&[19, 0, 0, 0]);
        zip.extend_from_slice(b"_journal/start.json");
        assert_eq!(sniff(&zip).zip.as_deref(), Some("_journal/start.json"));
        assert_eq!(sniff(b"\x1f\x8b\x08").binary, Some("gzip-compressed data"));
        assert!(sniff(b"{\"kind\":\"log\"}\x00").binary.is_some());
        assert!(
            sniff(b"PK\x03").binary.is_none(),
            "too short to be an archive"
        );
        // Cut anywhere, nothing panics.
        for n in 0..zip.len() {
            let _ = sniff(&zip[..n]);
        }
    }
}
