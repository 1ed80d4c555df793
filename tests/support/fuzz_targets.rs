//! The fuzz targets: one function per parser, each taking arbitrary bytes and checking what
//! must hold for every input (no panic, and the parser's own promises). Shared by the bounded
//! run in `cargo test` (`tests/fuzz_smoke.rs`) and the coverage-guided targets under `fuzz/`
//! that `scripts/fuzz.sh` runs for longer.
#![allow(dead_code)]

use doxascope::logic::parse::parse;
use doxascope::repl::command;
use doxascope::sanitize::sanitize;
use doxascope::trace::import::{Format, detect, import, refuse_unknown};
use doxascope::trace::{BriefItem, Item, Reader, ReaderConfig, read_all_briefs};

/// The trace reader: any bytes, in any chunking, give the same items, and every line is an
/// event or a problem (nothing is lost or invented).
pub fn trace_bytes(data: &[u8]) {
    let whole = read(data, &[data.len()]);
    // Split the same bytes at points the data itself picks.
    let cuts: Vec<usize> = data
        .iter()
        .take(8)
        .map(|&b| 1 + usize::from(b) % 17)
        .collect();
    let chunked = read(data, &cuts);
    assert_eq!(whole, chunked, "chunking changed the reader's output");
    // The briefing loader (what the headless commands and the viewer read with) scans the
    // usual shapes on a path of its own: it never panics and sees the same lines.
    let mut briefed = (0usize, 0usize);
    let _ = read_all_briefs("fuzz", data, ReaderConfig::default(), |it| match it {
        BriefItem::Event(_) => briefed.0 += 1,
        BriefItem::Problem(_) => briefed.1 += 1,
        BriefItem::Session(_) => {}
    });
    let events = whole.iter().filter(|i| i.starts_with("Event")).count();
    assert_eq!(
        briefed,
        (events, whole.len() - events),
        "briefs and events disagree"
    );
}

fn read(data: &[u8], cuts: &[usize]) -> Vec<String> {
    let mut r = Reader::new("fuzz", ReaderConfig::default());
    let mut out: Vec<Item> = Vec::new();
    let mut at = 0;
    let mut k = 0;
    while at < data.len() {
        let n = cuts
            .get(k % cuts.len().max(1))
            .copied()
            .unwrap_or(data.len())
            .max(1);
        let end = (at + n).min(data.len());
        r.feed(&data[at..end], &mut out);
        at = end;
        k += 1;
    }
    r.finish(&mut out);
    out.iter().map(|i| format!("{i:?}")).collect()
}

/// The formula parser: never panics on any text; what it accepts prints to text that parses
/// back to the same formula (contract: parse(print(φ)) = φ).
pub fn formula_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(f) = parse(text) {
        let printed = f.to_string();
        let again = parse(&printed).unwrap_or_else(|e| {
            panic!("{text:?} printed as {printed:?}, which does not parse: {e:?}")
        });
        assert_eq!(f, again, "{text:?} printed as {printed:?}");
    }
}

/// The REPL's command-line parser: never panics; an error points inside the line.
pub fn repl_line(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = command::parse(text) {
        assert!(
            e.column >= 1 && e.column <= text.chars().count() + 1,
            "column {} outside {text:?}",
            e.column
        );
    }
}

/// Every line an importer or the receiver writes reads back as v1 without a problem.
fn clean_v1(v1: &[u8], what: &str) {
    let mut r = Reader::new("fuzz", ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(v1, &mut items);
    r.finish(&mut items);
    for it in items {
        if let Item::Problem(p) = it {
            panic!("{what} wrote a line the v1 reader refuses: {p:?}");
        }
    }
}

/// The OpenTelemetry file importer (OTLP JSON and JSONL, SDK span dumps, attribute maps):
/// never panics, and what it writes is clean v1; an error names the format.
pub fn otlp_json(data: &[u8]) {
    use doxascope::trace::import::{self, Format};
    let _ = import::otlp::detect(data);
    match import::import(Format::Otlp, data, "fuzz") {
        Ok(imp) => clean_v1(&imp.v1, "the OTel importer"),
        Err(e) => assert_eq!(e.format, Some(Format::Otlp)),
    }
}

/// The OTLP/HTTP receiver's request path (gzip, protobuf or JSON decoding, the live
/// mapping): the first byte picks the content type and encoding, the rest is the body.
/// Never panics; a body is either mapped to clean v1 or refused with 400 or 413.
pub fn otlp_request(data: &[u8]) {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let json = mode & 1 == 1;
    let gzip = mode & 2 == 2;
    match doxascope::trace::otlp_http::request_to_v1(body, json, gzip, 1 << 20) {
        Ok(traces) => {
            for (_, lines) in traces {
                clean_v1(&lines, "the OTLP receiver");
            }
        }
        Err((status, _)) => assert!(status == 400 || status == 413, "status {status}"),
    }
}

/// An importer: never panics on any bytes. What it accepts becomes v1 that the reader takes
/// without a single problem (every line an event); what it refuses is one error that names
/// the format and stays one line on a terminal.
pub fn import_as(format: Format, data: &[u8]) {
    match import(format, data, "fuzz.json") {
        Ok(imp) => {
            let mut r = Reader::new("fuzz", ReaderConfig::default());
            let mut out: Vec<Item> = Vec::new();
            r.feed(&imp.v1, &mut out);
            r.finish(&mut out);
            for i in &out {
                if let Item::Problem(p) = i {
                    panic!("{format} import wrote a line the reader rejects: {p:?}");
                }
            }
        }
        Err(e) => {
            assert_eq!(e.format, Some(format), "{e}");
            assert!(!sanitize(&e.to_string()).contains('\n'), "{e}");
        }
    }
}

/// Inspect AI logs (JSON and `.eval` archives).
pub fn import_inspect(data: &[u8]) {
    import_as(Format::Inspect, data);
}

/// Langfuse downloads and ChatML companions.
pub fn import_langfuse(data: &[u8]) {
    import_as(Format::Langfuse, data);
}

/// LangSmith payloads and run trees.
pub fn import_langsmith(data: &[u8]) {
    import_as(Format::LangSmith, data);
}

/// Letta agent files.
pub fn import_letta(data: &[u8]) {
    import_as(Format::Letta, data);
}

/// Graphiti episodes and graphs.
pub fn import_graphiti(data: &[u8]) {
    import_as(Format::Graphiti, data);
}

/// mem0 memory histories.
pub fn import_mem0(data: &[u8]) {
    import_as(Format::Mem0, data);
}

/// LangGraph checkpoint databases: any bytes (a broken SQLite file is one error), and the
/// msgpack decoder the checkpoints go through: any blob is a value or an error.
pub fn import_langgraph(data: &[u8]) {
    let _ = doxascope::trace::import::msgpack::decode(data);
    import_as(Format::LangGraph, data);
}

/// Detection: any head gives a format; a source taken as v1 is refused or passed without a
/// panic, and a detected format's importer holds to `import_as`.
pub fn import_detect(data: &[u8]) {
    match detect(std::path::Path::new("fuzz"), data) {
        Format::V1 => {
            let _ = refuse_unknown(data);
        }
        f => import_as(f, data),
    }
}
