//! `sample-traces/broken.jsonl` produces exactly the expected problems, keeps every valid line
//! around them, and every other sample validates clean.

use std::path::Path;

use doxascope::trace::{Body, Kind, ProblemCode, ReaderConfig, Severity, TraceLog};

fn samples_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/sample-traces"))
}

/// The broken sample is read with a 512-byte line cap so that its one long line (698 bytes)
/// exercises the over-long path while the file stays small.
fn read_broken() -> TraceLog {
    let path = samples_dir().join("broken.jsonl");
    let bytes = std::fs::read(&path).expect("broken.jsonl is in the repository");
    let mut log = TraceLog::new();
    log.read_bytes(
        "broken.jsonl",
        &bytes,
        ReaderConfig {
            max_line_bytes: 512,
        },
    );
    log
}

#[test]
fn every_malformed_line_is_reported_where_it_is() {
    use ProblemCode as C;
    use Severity::{Error as E, Warning as W};
    let expected: &[(u64, Severity, ProblemCode, &str)] = &[
        (3, E, C::Json, "expected `,` or `}`"),
        (5, E, C::Json, "EOF while parsing a string"),
        (6, E, C::InvalidUtf8, "invalid UTF-8 at byte offset 820"),
        (
            8,
            E,
            C::LineTooLong,
            "698 bytes long, over the limit of 512",
        ),
        (9, E, C::MissingKind, "missing field `kind`"),
        (
            10,
            E,
            C::Field,
            "field `formula` must be a string, found a number",
        ),
        (
            11,
            E,
            C::Field,
            "field `confidence` must be a number greater than 0 and at most 1, found 1.5",
        ),
        (13, W, C::DuplicateSeq, "duplicate seq 12"),
        (14, W, C::TimeBackwards, "ts goes backwards"),
        (15, W, C::MisplacedBom, "byte-order mark"),
        (17, E, C::Json, "control character"),
        (21, E, C::Field, "duplicate field `role`"),
        (22, E, C::Json, "trailing characters"),
        (23, E, C::Field, "unknown variant `belief`"),
        (24, E, C::UnsupportedVersion, "format version 2 is newer"),
        (25, E, C::Json, "recursion limit exceeded"),
        (26, E, C::Json, "expected a JSON object"),
        (27, E, C::Field, "not an RFC 3339 date-time"),
        (28, E, C::Field, "field `target` is required"),
    ];
    let log = read_broken();
    let got: Vec<_> = log
        .problems
        .iter()
        .map(|p| (p.origin.line, p.severity, p.code, p.message.as_str()))
        .collect();
    assert_eq!(got.len(), expected.len(), "problems: {got:#?}");
    for (g, e) in got.iter().zip(expected) {
        assert_eq!((g.0, g.1, g.2), (e.0, e.1, e.2), "{g:?}");
        assert!(g.3.contains(e.3), "line {}: {:?} lacks {:?}", g.0, g.3, e.3);
    }
    // Locations point into the line: the JSON error on line 3 is at the second string.
    assert_eq!(log.problems[0].column, 92);
    assert_eq!(log.problems[2].byte_offset, Some(820));
    let bytes = std::fs::read(samples_dir().join("broken.jsonl")).expect("readable");
    assert_eq!(bytes[820], 0xFF, "the reported offset is the invalid byte");
    // The field error points at the field's key.
    let p10 = &log.problems[5];
    assert_eq!(p10.field.as_deref(), Some("formula"));
    let line10 = bytes.split(|b| *b == b'\n').nth(9).expect("line 10");
    let key_at = line10
        .windows(9)
        .position(|w| w == b"\"formula\"")
        .expect("key present");
    assert_eq!(p10.column, key_at as u64 + 1);
}

#[test]
fn every_valid_line_around_the_errors_is_kept() {
    let log = read_broken();
    let lines: Vec<u64> = log.events.iter().map(|e| e.origin.line).collect();
    assert_eq!(lines, [1, 2, 4, 7, 12, 13, 14, 15, 16, 18, 29, 30]);
    let seqs: Vec<u64> = log.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 4, 7, 12, 12, 14, 15, 16, 18, 29, 30]);
    // The unknown kind is kept with its fields.
    let unknown = &log.events[4];
    assert_eq!(unknown.kind(), None);
    assert_eq!(unknown.kind_name(), "tool_call");
    assert_eq!(
        unknown
            .extra
            .value("tool")
            .as_ref()
            .and_then(|v| v.as_str()),
        Some("ping")
    );
    assert_eq!(log.index.unknown_kinds().get("tool_call"), Some(&1));
    // Escaped controls are valid JSON and decode to the real characters (sanitized only at
    // display time).
    let Body::Log(l) = &log.events[8].body else {
        panic!("line 16 is a log event: {:?}", log.events[8]);
    };
    assert!(
        l.message
            .as_deref()
            .unwrap_or("")
            .contains("\u{1b}]0;pwned\u{7}")
    );
    // The CRLF line lost its CR, the BOM line its BOM, and unknown fields are kept.
    assert_eq!(log.events[9].kind(), Some(Kind::Answer));
    assert_eq!(log.events[7].kind(), Some(Kind::Log));
    assert_eq!(
        log.events[10]
            .extra
            .value("x_note")
            .as_ref()
            .and_then(|v| v.as_str()),
        Some("unknown fields are kept")
    );
    // The final line has no newline and is still read.
    assert_eq!(log.events[11].kind(), Some(Kind::Satisfaction));
    assert!(log.events.iter().all(|e| &*e.session == "broken"));
}

#[test]
fn the_long_line_is_valid_under_the_default_cap() {
    let bytes = std::fs::read(samples_dir().join("broken.jsonl")).expect("readable");
    let mut log = TraceLog::new();
    log.read_bytes("broken.jsonl", &bytes, ReaderConfig::default());
    assert!(log.events.iter().any(|e| e.origin.line == 8));
    assert!(log.problems.iter().all(|p| p.origin.line != 8));
}

#[test]
fn all_other_samples_validate_clean() {
    for entry in std::fs::read_dir(samples_dir()).expect("sample-traces exists") {
        let path = entry.expect("directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.ends_with(".jsonl") || name == "broken.jsonl" {
            continue;
        }
        let mut log = TraceLog::new();
        let f = std::fs::File::open(&path).expect("sample readable");
        log.read_from(name, f, ReaderConfig::default())
            .expect("sample readable");
        assert!(
            log.problems.is_empty(),
            "{name} has problems: {:#?}",
            log.problems
        );
        assert!(!log.events.is_empty(), "{name} has no events");
    }
}

#[test]
fn generated_traces_are_clean_and_cover_every_kind() {
    let mut buf = Vec::new();
    doxascope::trace::generate::write_mixed(
        &mut buf,
        &doxascope::trace::generate::GenConfig {
            events: 5000,
            seed: 3,
            ..Default::default()
        },
    )
    .expect("in-memory write");
    let mut log = TraceLog::new();
    log.read_bytes("gen.jsonl", &buf, ReaderConfig::default());
    assert!(
        log.problems.is_empty(),
        "{:#?}",
        &log.problems[..log.problems.len().min(5)]
    );
    assert_eq!(log.events.len(), 5000);
    for k in Kind::ALL {
        assert!(log.index.count(*k) > 0, "generator never wrote {k}");
    }
    assert!(!log.index.unknown_kinds().is_empty());
    // Every formula the generator writes is valid contract §3 syntax, as the logic layer's
    // parser sees it (an independent check: the generator only formats strings).
    let mut formulas = Vec::new();
    for e in &log.events {
        match &e.body {
            Body::Announce(a) => formulas.push(a.formula.as_str()),
            Body::Verify(v) => formulas.extend(v.all_formulas()),
            Body::Query(q) => formulas.push(q.formula.as_str()),
            Body::Answer(a) => formulas.extend(a.formula.as_deref()),
            Body::Thought(t) => formulas.extend(t.asserts.iter().map(|f| f.as_str())),
            Body::Revise(r) => formulas.extend(r.trigger.as_deref()),
            Body::World(w) => formulas.extend(w.rules.iter().map(|f| f.as_str())),
            _ => {}
        }
    }
    assert!(formulas.len() > 2000, "{}", formulas.len());
    let mut atoms = std::collections::BTreeSet::new();
    for f in formulas {
        let parsed = doxascope::logic::parse::parse(f)
            .unwrap_or_else(|e| panic!("generated formula {f:?} does not parse: {e:?}"));
        doxascope::logic::ground::atoms(&parsed, &mut atoms);
    }
    assert!(
        atoms.len() > 200,
        "a few hundred atoms, got {}",
        atoms.len()
    );
    // Deterministic by seed.
    let mut again = Vec::new();
    doxascope::trace::generate::write_mixed(
        &mut again,
        &doxascope::trace::generate::GenConfig {
            events: 5000,
            seed: 3,
            ..Default::default()
        },
    )
    .expect("in-memory write");
    assert_eq!(buf, again);
}
