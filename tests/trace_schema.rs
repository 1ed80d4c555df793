//! The three descriptions of the format (the reference page, the JSON Schema and the Rust
//! schema) cannot drift apart: same kinds, same fields, and every documented example reads
//! clean.

use std::collections::BTreeSet;

use doxascope::trace::{Item, Kind, Reader, ReaderConfig};
use serde_json::Value;

fn doc() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/trace-format.md"))
        .expect("docs/trace-format.md exists")
}

fn schema() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/trace-format.schema.json"
    ))
    .expect("docs/trace-format.schema.json exists");
    serde_json::from_str(&text).expect("the schema is JSON")
}

fn rust_kinds() -> BTreeSet<String> {
    Kind::ALL.iter().map(|k| k.as_str().to_string()).collect()
}

/// The section of the reference page about one kind: from its heading to the next heading.
fn section<'a>(doc: &'a str, kind: &str) -> &'a str {
    let head = format!("### `{kind}`\n");
    let start = doc
        .find(&head)
        .unwrap_or_else(|| panic!("no section for {kind}"));
    let rest = &doc[start + head.len()..];
    let end = rest.find("\n#").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn same_kinds_everywhere() {
    let s = schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    let defs: BTreeSet<String> = s["$defs"]
        .as_object()
        .expect("$defs")
        .keys()
        .cloned()
        .collect();
    let dispatched: BTreeSet<String> = s["allOf"]
        .as_array()
        .expect("allOf")
        .iter()
        .filter_map(|c| c["if"]["properties"]["kind"]["const"].as_str())
        .map(str::to_string)
        .collect();
    let d = doc();
    let documented: BTreeSet<String> = d
        .lines()
        .filter_map(|l| l.strip_prefix("### `")?.strip_suffix('`'))
        .map(str::to_string)
        .collect();
    assert_eq!(defs, rust_kinds(), "schema $defs vs Kind::ALL");
    assert_eq!(dispatched, rust_kinds(), "schema allOf vs Kind::ALL");
    assert_eq!(documented, rust_kinds(), "docs headings vs Kind::ALL");
}

#[test]
fn every_schema_field_is_documented_and_read_by_the_reader() {
    let s = schema();
    let d = doc();
    for kind in rust_kinds() {
        let sec = section(&d, &kind);
        let props = s["$defs"][&kind]["properties"]
            .as_object()
            .expect("properties");
        for name in props.keys() {
            assert!(
                sec.contains(&format!("| `{name}` |")),
                "{kind}.{name} is in the schema but not in the docs"
            );
        }
        // The documented example reads clean, is of this kind, and every one of its fields is
        // one the reader knows (nothing lands in `extra`).
        let example = sec
            .split("```jsonl\n")
            .nth(1)
            .and_then(|r| r.split("```").next())
            .unwrap_or_else(|| panic!("no example for {kind}"));
        let mut r = Reader::new("doc.jsonl", ReaderConfig::default());
        let mut out = Vec::new();
        r.feed(example.as_bytes(), &mut out);
        r.finish(&mut out);
        assert_eq!(out.len(), 1, "{kind}: {out:?}");
        let Item::Event(ev) = &out[0] else {
            panic!("{kind} example has a problem: {out:?}")
        };
        assert_eq!(ev.kind_name(), kind);
        assert!(
            ev.extra.is_empty(),
            "{kind}: undocumented fields {:?}",
            ev.extra
        );
        // Everything the reader writes back is in the schema (envelope or the kind's fields).
        let back: Value = serde_json::from_str(&ev.to_json_line()).expect("json");
        let envelope = s["properties"].as_object().expect("envelope");
        for key in back.as_object().expect("object").keys() {
            assert!(
                envelope.contains_key(key) || props.contains_key(key),
                "{kind}: the reader writes `{key}`, which the schema does not describe"
            );
        }
    }
}

#[test]
fn required_fields_agree_with_the_reader() {
    let s = schema();
    for kind in rust_kinds() {
        let required: Vec<&str> = s["$defs"][&kind]["required"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // A line with only the kind is accepted exactly when the schema requires nothing
        // (verify needs `formula` or `formulas`, expressed with anyOf).
        let line = format!("{{\"kind\":\"{kind}\"}}");
        let mut r = Reader::new("req.jsonl", ReaderConfig::default());
        let mut out = Vec::new();
        r.feed(line.as_bytes(), &mut out);
        r.finish(&mut out);
        let accepted = matches!(out.as_slice(), [Item::Event(_)]);
        let needs_something = !required.is_empty() || s["$defs"][&kind].get("anyOf").is_some();
        assert_eq!(accepted, !needs_something, "{kind}: {out:?}");
    }
}
