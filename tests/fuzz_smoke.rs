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

#[path = "support/external.rs"]
mod external;
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
    // A key's colon at the very end of the input (a line cut mid-write) once read past it.
    b"\"seq\":",
    b"\"confidence\":",
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

/// Small documents of one external format's shape, which byte mutations bend without
/// breaking at once, and its real files (../shared/external-traces/DIR) when they are here.
fn import_corpus(dir: &str, seeds: &[&str]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = seeds.iter().map(|s| s.as_bytes().to_vec()).collect();
    if let Some(root) = external::dir()
        && let Ok(d) = std::fs::read_dir(root.join(dir))
    {
        let mut files: Vec<PathBuf> = d.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files {
            if let Ok(b) = std::fs::read(&f) {
                out.push(b);
            }
        }
    }
    out
}

const INSPECT_SEEDS: &[&str] = &[
    r#"{"version":2,"eval":{"task":"t","model":"m"},"plan":{"steps":[{"solver":"use_tools"},{"solver":"generate"}]},"samples":[{"id":1,"epoch":1,"input":"q","attachments":{"h":"long text"},"message_pool":[{"role":"user","content":"attachment://h"}],"events":[{"event":"span_begin","id":"s","type":"solver","name":"generate","timestamp":"2025-01-01T00:00:00+00:00"},{"event":"model","model":"m","input":[],"input_refs":[[0,1]],"output":{"choices":[{"message":{"content":[{"type":"reasoning","reasoning":"hmm"},{"type":"text","text":"a"}],"tool_calls":[{"id":"c","function":"f","arguments":{}}]}}]}},{"event":"span_begin","id":"t","type":"tool","name":"f"},{"event":"tool","id":"c","function":"f","arguments":{"x":1},"result":"r"},{"event":"store","span_id":"t","changes":[{"op":"add","path":"/k","value":"a"},{"op":"replace","path":"/k","value":"b","replaced":"a"},{"op":"remove","path":"/k"}]},{"event":"span_end","id":"t"},{"event":"span_end","id":"s"},{"event":"span_begin","id":"sc","type":"scorer","name":"match"},{"event":"score","span_id":"sc","score":{"value":{"a":"C","b":0.5}}},{"event":"error","error":{"message":"boom"}},{"event":"checkpoint","x":1}],"output":{"completion":"a"},"scores":{"match":{"value":"C"}}}]}"#,
];
const LANGFUSE_SEEDS: &[&str] = &[
    r#"{"trace":{"id":"t1","projectId":"p","name":"n","timestamp":"2025-01-01T00:00:00.000Z","input":""{\"prompt\":\"hi\"}"","output":"{"content":[{"type":"text","text":"yo"}]}","metadata":"{}","scores":[{"id":"s1","name":"q","value":1,"dataType":"BOOLEAN","observationId":"o1","source":"EVAL"}],"observations":[]},"observations":[{"id":"o1","type":"GENERATION","name":"g","startTime":"2025-01-01T00:00:01.000Z","model":"m","input":"[1]","output":"{}","level":"ERROR","statusMessage":"x","parentObservationId":null},{"id":"o2","type":"ANNOUNCE","name":"a","startTime":"2025-01-01T00:00:02.000Z"},{"id":"o3","type":"TOOL","name":"t","startTime":"bad"}]}"#,
    r#"{"4f6535aaebcda355":{"input":{"success":true,"data":[{"role":"user","content":"x"}]},"output":{"success":true,"data":[{"role":"assistant","content":"","tool_calls":[{"id":"c"}]}]}}}"#,
];
const LANGSMITH_SEEDS: &[&str] = &[
    r#"{"post":[{"id":"r1","name":"root","run_type":"chain","start_time":1728803137170,"inputs":{"input":"q"},"dotted_order":"20241013T070537170001Zr1","trace_id":"r1"},{"id":"r2","name":"llm","run_type":"llm","parent_run_id":"r1","start_time":"2024-10-11T20:58:24.544431+00:00","dotted_order":"20241013T070537170001Zr1.20241013T070537170002Zr2","trace_id":"r1","events":[{"name":"new_token"}]}],"patch":[{"dotted_order":"20241013T070537170001Zr2","outputs":{"choices":[{"message":{"content":"a","tool_calls":[{"id":"x"}]}}]},"end_time":1728803138000},{"id":"r1","outputs":{"output":"done"},"error":"oops"}]}"#,
    r#"{"id":"a","name":"AgentExecutor","run_type":"chain","child_runs":[{"id":"b","run_type":"tool","name":"ls","parent_run_id":"a","inputs":{"input":"{"p":1}"},"child_runs":[{"id":"c","run_type":"announce","parent_run_id":"b"}]}]}"#,
];
const LETTA_SEEDS: &[&str] = &[
    r#"{"agent_type":"memgpt_agent","name":"a","core_memory":[{"label":"human","value":"First name: Sam"}],"tool_rules":[{"tool_name":"x","type":"run_first"},{"tool_name":"x","type":"constrain_child_tools","children":["y"]}],"messages":[{"role":"system","content":[{"type":"text","text":"<human characters="1/9">
First name: Chad
</human>"}],"created_at":"2025-04-01T03:47:27"},{"role":"assistant","content":[{"type":"text","text":"update"}],"tool_calls":[{"id":"c1","function":{"name":"core_memory_replace","arguments":"{"label":"human","old_content":"Chad","new_content":"Sam"}"}},{"id":"c2","function":{"name":"send_message","arguments":"{"message":"hi"}"}},{"id":"c3","function":{"name":"x","arguments":"{}"}}]},{"role":"system","content":[{"type":"text","text":"<human>
First name: Sam
</human>"}]},{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"{"status":"OK"}"}]},{"role":"user","content":[{"type":"text","text":"{"type":"heartbeat"}"}]}]}"#,
    r#""{"agents":[{"name":"b","block_ids":["block-0","block-9"],"messages":[]}],"blocks":[{"id":"block-0","label":"persona","value":"x"}]}""#,
];
const GRAPHITI_SEEDS: &[&str] = &[
    r#"{"group_id":"g","messages":[{"name":"a","role_type":"user","timestamp":"2026-05-04T14:00:00Z","content":"x"}]}"#,
    r#"{"episodes":[{"uuid":"e1","name":"a","created_at":"2026-05-04T14:00:00Z","content":"x"}],"nodes":[{"uuid":"n1","name":"A"}],"edges":[{"uuid":"x1","name":"R","fact":"f","source_node_uuid":"n1","target_node_uuid":"n1","episodes":["e1"],"created_at":"2026-05-04T14:00:01Z","expired_at":"2026-05-04T14:00:00Z"}]}"#,
];

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
    run_on(name, seed, target, corpus());
}

fn run_on(name: &str, seed: u64, target: fn(&[u8]), corpus: Vec<Vec<u8>>) {
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

#[test]
fn inspect_importer_survives_any_bytes() {
    run_on(
        "import_inspect",
        0x5eed_0011,
        targets::import_inspect,
        import_corpus("inspect", INSPECT_SEEDS),
    );
}

#[test]
fn langfuse_importer_survives_any_bytes() {
    run_on(
        "import_langfuse",
        0x5eed_0012,
        targets::import_langfuse,
        import_corpus("langfuse", LANGFUSE_SEEDS),
    );
}

#[test]
fn langsmith_importer_survives_any_bytes() {
    run_on(
        "import_langsmith",
        0x5eed_0013,
        targets::import_langsmith,
        import_corpus("langsmith-langgraph", LANGSMITH_SEEDS),
    );
}

#[test]
fn letta_importer_survives_any_bytes() {
    run_on(
        "import_letta",
        0x5eed_0014,
        targets::import_letta,
        import_corpus("letta", LETTA_SEEDS),
    );
}

#[test]
fn graphiti_importer_survives_any_bytes() {
    run_on(
        "import_graphiti",
        0x5eed_0015,
        targets::import_graphiti,
        import_corpus("memory", GRAPHITI_SEEDS),
    );
}

const MEM0_SEEDS: &[&str] = &[
    r#"[{"id":"h1","memory_id":"m1","old_memory":null,"new_memory":"x","event":"ADD","created_at":"2025-03-01T09:00:00Z"},{"id":"h2","memory_id":"m1","old_memory":"x","new_memory":"y","event":"UPDATE","updated_at":"2025-03-02T09:00:00Z"},{"id":"h3","memory_id":"m1","old_memory":"y","new_memory":null,"event":"DELETE","is_deleted":1}]"#,
];

/// msgpack blobs as LangGraph writes them (a map, an extension object) and an SQLite
/// header with the checkpoint schema.
fn langgraph_corpus() -> Vec<Vec<u8>> {
    vec![
        vec![0x81, 0xa1, b'a', 0x93, 0x01, 0xc0, 0xc3],
        vec![
            0xc7, 0x09, 0x05, 0x93, 0xa1, b'm', 0xa1, b'C', 0x81, 0xa1, b'k', 0x01,
        ],
        [
            &b"SQLite format 3\0"[..],
            &[0u8; 84][..],
            b"CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT)",
        ]
        .concat(),
    ]
}

#[test]
fn mem0_importer_survives_any_bytes() {
    run_on(
        "import_mem0",
        0x5eed_0017,
        targets::import_mem0,
        MEM0_SEEDS.iter().map(|s| s.as_bytes().to_vec()).collect(),
    );
}

#[test]
fn langgraph_importer_survives_any_bytes() {
    run_on(
        "import_langgraph",
        0x5eed_0018,
        targets::import_langgraph,
        langgraph_corpus(),
    );
}

#[test]
fn format_detection_survives_any_bytes() {
    let mut corpus = corpus();
    for (dir, seeds) in [
        ("inspect", INSPECT_SEEDS),
        ("langfuse", LANGFUSE_SEEDS),
        ("langsmith-langgraph", LANGSMITH_SEEDS),
        ("letta", LETTA_SEEDS),
        ("memory", GRAPHITI_SEEDS),
    ] {
        corpus.extend(import_corpus(dir, seeds));
    }
    run_on("import_detect", 0x5eed_0016, targets::import_detect, corpus);
}
