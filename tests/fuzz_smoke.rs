//! The fuzz targets (`tests/support/fuzz_targets.rs`) run for a bounded time in every
//! `cargo test`: a seeded mutation fuzzer over a corpus of real inputs (the sample traces'
//! lines, the documented formulas and REPL commands, the OpenTelemetry fixtures as files and
//! as receiver requests) plus hostile fragments. A failure prints
//! the seed and the input, hex-escaped, so it can be replayed. `scripts/fuzz.sh` runs the
//! same targets coverage-guided (cargo fuzz) for as long as asked.
//!
//! Budget: `DOXASCOPE_FUZZ_SECS` seconds per target (default 4) or `DOXASCOPE_FUZZ_ITERS`
//! inputs (default 40,000), whichever ends first.

use std::path::PathBuf;
use std::time::{Duration, Instant};

#[path = "support/fuzz_targets.rs"]
mod targets;

/// A small deterministic generator (xorshift64*): the run is reproducible from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that break parsers: control characters, escapes, invalid UTF-8, deep nesting,
/// huge numbers, bidi and zero-width characters.
const HOSTILE: &[&[u8]] = &[
    b"\x1b]0;pwned\x07",
    b"\x1b[?1049l",
    b"\xff\xfe",
    b"\xc3",
    b"\r\n",
    b"\n",
    b"\0",
    "\u{202e}".as_bytes(),
    "\u{200b}".as_bytes(),
    "\u{fe0f}".as_bytes(),
    "\u{0301}\u{0301}\u{0301}".as_bytes(),
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
    b"123456789012345678901234567890",
    b"1e999",
    b"-0.0",
    b"\\u0000",
    b"\\ud800",
    b"\"",
    b"forall x, y, z.",
    b" & | -> <-> ~ ",
    b"{\"kind\":\"announce\",\"formula\":\"p\"}",
    b"@0",
    b" as norm from ",
    b" because ",
    b" --cascade",
];

fn corpus() -> Vec<Vec<u8>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<Vec<u8>> = Vec::new();
    if let Ok(dir) = std::fs::read_dir(root.join("sample-traces")) {
        let mut files: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            if let Ok(bytes) = std::fs::read(&f) {
                out.extend(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec));
                out.push(bytes);
            }
        }
    }
    // The OpenTelemetry inputs: the OTLP fixtures whole and line by line, and each line as a
    // receiver request (mode byte: 1 = JSON, 3 = gzip'd JSON); a protobuf request (mode 0).
    if let Ok(dir) = std::fs::read_dir(root.join("tests/data/otel")) {
        let mut files: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            if let Ok(bytes) = std::fs::read(&f) {
                for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    out.push(line.to_vec());
                    out.push([&[1u8][..], line].concat());
                    let mut gz =
                        flate2::write::GzEncoder::new(vec![3u8], flate2::Compression::fast());
                    let _ = std::io::Write::write_all(&mut gz, line);
                    if let Ok(g) = gz.finish() {
                        out.push(g);
                    }
                }
                out.push(bytes);
            }
        }
    }
    out.push([&[0u8][..], &otlp_proto_request()].concat());
    for f in [
        "p",
        "~p & (q | r) -> s",
        "forall x. Q(x) -> P(x)",
        "exists x, y. Older(x, y) & ~Older(y, x)",
        "\"dns failure example.com\" <-> ¬ping_ok",
        "⊤ ∧ ⊥ → (a ↔ b)",
        "announce p -> q @0.7 as rule from user",
        "check wet because r f",
        "believes wet @0.5",
        "retract f --cascade",
        "why ~treasure_in_a",
        "at 3",
        "diff 1 2",
    ] {
        out.push(f.as_bytes().to_vec());
    }
    out
}

/// A protobuf `ExportTraceServiceRequest` with a GenAI chat span.
fn otlp_proto_request() -> Vec<u8> {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
    use prost::Message as _;
    let kv = |k: &str, v: &str| KeyValue {
        key: k.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(v.into())),
        }),
        ..Default::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans {
                spans: vec![Span {
                    trace_id: vec![7; 16],
                    span_id: vec![1; 8],
                    name: "chat m".into(),
                    start_time_unix_nano: 1,
                    end_time_unix_nano: 2,
                    attributes: vec![
                        kv("gen_ai.operation.name", "chat"),
                        kv(
                            "gen_ai.output.messages",
                            r#"[{"role":"assistant","parts":[{"type":"text","content":"hi"}]}]"#,
                        ),
                    ],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
    .encode_to_vec()
}

fn mutate(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut v = corpus[rng.below(corpus.len())].clone();
    for _ in 0..1 + rng.below(4) {
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let frag = HOSTILE[rng.below(HOSTILE.len())];
                let i = rng.below(v.len() + 1);
                v.splice(i..i, frag.iter().copied());
            }
            2 if !v.is_empty() => {
                let i = rng.below(v.len());
                let n = rng.below(v.len() - i + 1);
                v.drain(i..i + n);
            }
            3 => {
                let other = &corpus[rng.below(corpus.len())];
                let i = rng.below(v.len() + 1);
                let j = rng.below(other.len() + 1);
                v.truncate(i);
                v.extend_from_slice(&other[j..]);
            }
            4 if !v.is_empty() => {
                // Repeat a slice: long runs and deep nesting.
                let i = rng.below(v.len());
                let n = 1 + rng.below((v.len() - i).min(8));
                let piece = v[i..i + n].to_vec();
                for _ in 0..rng.below(64) {
                    v.splice(i..i, piece.iter().copied());
                }
            }
            _ => v.push(rng.next() as u8),
        }
    }
    v
}

fn budget() -> (Duration, u64) {
    let secs = std::env::var("DOXASCOPE_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let iters = std::env::var("DOXASCOPE_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40_000);
    (Duration::from_secs(secs), iters)
}

fn run(name: &str, seed: u64, target: fn(&[u8])) {
    let corpus = corpus();
    let (time, iters) = budget();
    let mut rng = Rng(seed);
    let end = Instant::now() + time;
    let mut n = 0u64;
    // Every corpus entry as it is first, then mutations until the budget runs out.
    let inputs = corpus.iter().cloned().chain(std::iter::from_fn(|| {
        (Instant::now() < end && n < iters).then(|| {
            n += 1;
            mutate(&mut rng, &corpus)
        })
    }));
    for input in inputs {
        let caught = std::panic::catch_unwind(|| target(&input));
        if let Err(e) = caught {
            let shown: String = input.escape_ascii().to_string();
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("fuzz target {name} (seed {seed}) failed on b\"{shown}\": {msg}");
        }
    }
    eprintln!("fuzz target {name}: {n} mutated inputs");
}

#[test]
fn trace_reader_survives_any_bytes_in_any_chunking() {
    run("trace_bytes", 0x5eed_0001, targets::trace_bytes);
}

#[test]
fn formula_parser_round_trips_whatever_it_accepts() {
    run("formula_text", 0x5eed_0002, targets::formula_text);
}

#[test]
fn repl_command_parser_never_panics() {
    run("repl_line", 0x5eed_0003, targets::repl_line);
}

#[test]
fn otlp_importer_writes_clean_v1_from_any_bytes() {
    run("otlp_json", 0x5eed_0004, targets::otlp_json);
}

#[test]
fn otlp_receiver_request_path_never_panics() {
    run("otlp_request", 0x5eed_0005, targets::otlp_request);
}
