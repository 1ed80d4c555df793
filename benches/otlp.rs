//! OpenTelemetry figures:
//!
//! 1. *File import*: a generated OTLP JSON Lines file of about 100 MB (GenAI agent traces:
//!    an invoke_agent root, chat spans with input and output messages, execute_tool spans,
//!    one request of 50 traces per line, as the Collector's file exporter writes) imported
//!    with `import::import`; MB/s over the best of 3 runs (target >= 100 MB/s).
//! 2. *Receiver rate*: the real binary's TUI in tmux with `--listen otlp:`, and the
//!    OpenTelemetry Python SDK's BatchSpanProcessor + OTLP/HTTP protobuf exporter sending as
//!    fast as it can (`tests/support/otel_agent.py`); spans/s over the agent's whole run
//!    (shutdown included: every span exported and answered), then every span counted in the
//!    spool files (target >= 5,000 spans/s, nothing lost).
//! 3. *Latency*: one trace at a time, flushed; from the moment the exporter starts its POST
//!    (stamped in the agent) until the trace's session name is on the tmux screen (polled
//!    with `capture-pane`, which adds a few ms). Median, p95, max (target <= 100 ms).
//!
//! Run: `cargo bench --bench otlp [import] [rate] [latency]` (all three without a name).
//! `OTLP_BENCH_MB`, `OTLP_BENCH_TRACES`, `OTLP_BENCH_SAMPLES` change the sizes;
//! `OTLP_BENCH_FILE=PATH` also writes the generated file there (to time `doxascope import`
//! on it). Parts 2 and 3 need tmux and the SDK in target/otel-venv (installed on first use,
//! see tests/support/otel_venv.rs); they are skipped, with a message, without them.

use std::process::Command;
use std::time::{Duration, Instant};

use doxascope::trace::import::{self, Format};

#[path = "support/proc.rs"]
mod proc;
#[path = "../tests/support/tmux.rs"]
mod tmux;
#[path = "../tests/support/otel_venv.rs"]
mod venv;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn kv(k: &str, v: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"key": k, "value": v})
}

fn s(v: &str) -> serde_json::Value {
    serde_json::json!({ "stringValue": v })
}

/// One request line of `traces` agent traces.
fn request(first: u64, traces: u64) -> String {
    let mut spans = Vec::new();
    for t in first..first + traces {
        let trace = format!("{:032x}", 0x4bf9_2f35_77b3_4da6_u128 << 64 | u128::from(t));
        let root = format!("{:016x}", t * 16 + 1);
        let base = 1_767_225_600_000_000_000u64 + t * 10_000_000;
        let mut add = |i: u64, name: &str, attrs: Vec<serde_json::Value>| {
            let id = if i == 0 {
                root.clone()
            } else {
                format!("{:016x}", t * 16 + 1 + i)
            };
            spans.push(serde_json::json!({
                "traceId": trace, "spanId": id,
                "parentSpanId": if i == 0 { String::new() } else { root.clone() },
                "name": name, "kind": 1,
                "startTimeUnixNano": (base + i * 1000).to_string(),
                "endTimeUnixNano": (base + i * 1000 + 900).to_string(),
                "attributes": attrs, "status": {"code": 1}
            }));
        };
        for step in 1..=4u64 {
            let msgs = serde_json::json!([
                {"role": "system", "parts": [{"type": "text", "content": "You are a careful research agent. Use the tools; cite what you find."}]},
                {"role": "user", "parts": [{"type": "text", "content": format!("Question {t}: how long would a marathon runner take to reach the Moon at race pace?")}]}
            ]);
            let out = serde_json::json!([{"role": "assistant", "parts": [
                {"type": "text", "content": format!("Step {step}: I need the distance and the pace; looking it up.")},
                {"type": "tool_call", "id": format!("call_{t}_{step}"), "name": "search", "arguments": {"q": "marathon world record pace"}}
            ], "finish_reason": "tool_call"}]);
            add(
                step * 2 - 1,
                "chat gpt-4o",
                vec![
                    kv("gen_ai.operation.name", s("chat")),
                    kv("gen_ai.request.model", s("gpt-4o")),
                    kv(
                        "gen_ai.usage.input_tokens",
                        serde_json::json!({"intValue": "812"}),
                    ),
                    kv(
                        "gen_ai.usage.output_tokens",
                        serde_json::json!({"intValue": "64"}),
                    ),
                    kv("gen_ai.input.messages", s(&msgs.to_string())),
                    kv("gen_ai.output.messages", s(&out.to_string())),
                ],
            );
            add(
                step * 2,
                "execute_tool search",
                vec![
                    kv("gen_ai.operation.name", s("execute_tool")),
                    kv("gen_ai.tool.name", s("search")),
                    kv("gen_ai.tool.call.id", s(&format!("call_{t}_{step}"))),
                    kv(
                        "gen_ai.tool.call.arguments",
                        s("{\"q\":\"marathon world record pace\"}"),
                    ),
                    kv(
                        "gen_ai.tool.call.result",
                        s("{\"record\":\"2:00:35\",\"distance_km\":42.195}"),
                    ),
                ],
            );
        }
        add(
            0,
            "invoke_agent researcher",
            vec![
                kv("gen_ai.operation.name", s("invoke_agent")),
                kv("gen_ai.agent.name", s("researcher")),
            ],
        );
    }
    let req = serde_json::json!({"resourceSpans": [{
        "resource": {"attributes": [kv("service.name", s("bench-agent"))]},
        "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]
    }]});
    let mut line = req.to_string();
    line.push('\n');
    line
}

fn file_import() {
    let target = env_or("OTLP_BENCH_MB", 100) * 1_000_000;
    let mut data = String::new();
    let mut t = 0;
    let mut spans = 0u64;
    while (data.len() as u64) < target {
        data.push_str(&request(t, 50));
        t += 50;
        spans += 50 * 9;
    }
    if let Some(path) = std::env::var_os("OTLP_BENCH_FILE") {
        std::fs::write(&path, &data).expect("write OTLP_BENCH_FILE");
    }
    let mb = data.len() as f64 / 1e6;
    let mut best = f64::MAX;
    let mut best_cpu = f64::MAX;
    let mut events = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let cpu = proc::cpu_seconds();
        // Over the import budget the in-memory import refuses; `doxascope import FILE`
        // streams instead (`scripts/bench_import.sh` measures it), and a file asked for by
        // `OTLP_BENCH_FILE` (`scripts/bench_scale.sh`) is written by then.
        let imp = match import::import(Format::Otlp, data.as_bytes(), "bench") {
            Ok(imp) => imp,
            Err(e) => {
                println!(
                    "file import: {mb:.1} MB in memory refused ({}): see bench_import.sh",
                    e.message
                );
                return;
            }
        };
        best = best.min(start.elapsed().as_secs_f64());
        best_cpu = best_cpu.min(proc::cpu_seconds() - cpu);
        events = imp.v1.iter().filter(|&&b| b == b'\n').count();
        assert!(
            imp.notes.is_empty(),
            "{:?}",
            &imp.notes[..imp.notes.len().min(3)]
        );
    }
    println!(
        "file import: {mb:.1} MB, {spans} spans, {events} v1 events in {best:.3} s (best of 3): \
         {:.0} MB/s, {:.0} spans/s; CPU time {best_cpu:.2} s (best of 3, 10 ms ticks): {:.0} MB/s",
        mb / best,
        spans as f64 / best,
        mb / best_cpu.max(0.01)
    );
}

fn spool_lines(cache: &std::path::Path) -> (usize, usize) {
    let mut files = 0;
    let mut lines = 0;
    for run in std::fs::read_dir(cache.join("doxascope/live"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for f in std::fs::read_dir(run.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            files += 1;
            lines += std::fs::read(f.path())
                .map(|b| b.iter().filter(|&&c| c == b'\n').count())
                .unwrap_or(0);
        }
    }
    (files, lines)
}

fn start_tui(tag: &str, cache: &std::path::Path, port: u16) -> tmux::Tmux {
    let t = tmux::Tmux::new(tag);
    t.start_sized(
        &format!(
            "env XDG_CACHE_HOME='{}' '{}' view --listen otlp:127.0.0.1:{port}",
            cache.display(),
            tmux::bin()
        ),
        200,
        60,
    );
    t.wait_for("the receiver", 20, |s| s.contains("listening otlp:"));
    t
}

fn receiver_rate(py: &std::path::Path) {
    let traces = env_or("OTLP_BENCH_TRACES", 4000);
    let tools = 4;
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let port = venv::free_port();
    let t = start_tui("otlp15-bench-rate", &cache, port);
    // Per trace: the root, per tool a chat and a tool span, and the closing chat.
    let spans_per_trace = 1 + 2 * tools + 1;
    let start = Instant::now();
    let out = Command::new(py)
        .arg(venv::agent_script())
        .arg(format!("http://127.0.0.1:{port}"))
        .arg("proto")
        .arg(traces.to_string())
        .args(["--tools", &tools.to_string()])
        // A queue that holds every span: the SDK's default (2,048) drops spans on the
        // agent's side when its exporter lags, and this measures the receiver's losses.
        .args(["--queue", &(traces * spans_per_trace).to_string()])
        .output()
        .expect("agent");
    let secs = start.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut words = stdout.split_whitespace();
    let (sent, exported): (u64, u64) =
        match (words.next(), words.next(), words.next(), words.next()) {
            (Some("sent"), Some(a), Some("exported"), Some(b)) => {
                (a.parse().expect("sent N"), b.parse().expect("exported N"))
            }
            _ => panic!("the agent said {stdout:?}"),
        };
    // Every trace ends 2 s after its root: wait for all, then count what was spooled. A
    // trace whose root never came would stay open until the idle timeout: stop waiting
    // once the spool stops growing and say what is missing.
    let per_trace = 4 + 2 * (tools + 1) + tools;
    let want = traces as usize * per_trace as usize;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = (0, 0);
    let mut still = Instant::now();
    loop {
        if t.capture().contains(" (0 open") {
            break;
        }
        let now = spool_lines(&cache);
        if now != last {
            last = now;
            still = Instant::now();
        }
        if Instant::now() > deadline || still.elapsed() > Duration::from_secs(15) {
            println!(
                "receiver: {} traces still open after the spool stopped growing",
                t.capture()
                    .lines()
                    .find(|l| l.contains("listening otlp:"))
                    .unwrap_or("")
                    .trim()
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));
    let (files, lines) = spool_lines(&cache);
    println!(
        "receiver (Python SDK BatchSpanProcessor, protobuf, into the TUI): {sent} spans made, \
         {exported} exported in {secs:.2} s = {:.0} spans/s; {files} sessions spooled (want \
         {traces}), {lines} v1 events (want {want}){}",
        exported as f64 / secs,
        if files as u64 == traces && lines == want && exported == sent {
            ", none lost"
        } else if exported < sent {
            ", THE SDK DROPPED SOME"
        } else {
            ", LOST SOME"
        }
    );
}

fn latency(py: &std::path::Path) {
    let samples = env_or("OTLP_BENCH_SAMPLES", 30);
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let port = venv::free_port();
    let t = start_tui("otlp15-bench-lat", &cache, port);
    let stamps = dir.path().join("stamps");
    let mut lat = Vec::new();
    for i in 0..samples {
        // One trace per run: the agent's POST time is stamped, the screen polled until the
        // session appears (its name is the trace id's last 16 hex digits).
        let mut child = Command::new(py)
            .arg(venv::agent_script())
            .arg(format!("http://127.0.0.1:{port}"))
            .arg("proto")
            .arg("1")
            .args(["--tools", "0", "--stamps"])
            .arg(&stamps)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("agent");
        let deadline = Instant::now() + Duration::from_secs(20);
        let (trace, sent_ns) = loop {
            if let Ok(s) = std::fs::read_to_string(&stamps)
                && let Some((a, b)) = s.trim().split_once(' ')
                && let Ok(ns) = b.parse::<u128>()
            {
                break (a.to_string(), ns);
            }
            assert!(Instant::now() < deadline, "no stamp from the agent");
            std::thread::sleep(Duration::from_micros(200));
        };
        let short = &trace[16..];
        let seen_ns = loop {
            if t.capture().contains(short) {
                break std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos());
            }
            assert!(
                Instant::now() < deadline,
                "trace {short} not on screen (sample {i})"
            );
        };
        let _ = child.wait();
        let _ = std::fs::remove_file(&stamps);
        lat.push(Duration::from_nanos(seen_ns.saturating_sub(sent_ns) as u64));
        // The TUI shows the newest session when following; move on after it settles.
        std::thread::sleep(Duration::from_millis(50));
    }
    t.keys(&["q"]);
    lat.sort();
    let pick = |p: f64| lat[((lat.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "latency export -> on screen ({samples} traces): median {:?}, p95 {:?}, max {:?}",
        pick(0.5),
        pick(0.95),
        lat[lat.len() - 1]
    );
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument names a part to run.
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |p: &str| parts.is_empty() || parts.iter().any(|a| a == p);
    if run("import") {
        file_import();
    }
    if !run("rate") && !run("latency") {
        return;
    }
    if !tmux::Tmux::available() {
        println!("receiver and latency skipped: tmux is not installed");
        return;
    }
    let Some(py) = venv::python("otlp bench") else {
        return;
    };
    if run("rate") {
        receiver_rate(&py);
    }
    if run("latency") {
        latency(&py);
    }
}
