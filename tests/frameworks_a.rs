//! Real agent frameworks, run offline by their own test models with their real OpenTelemetry
//! instrumentation (`tests/support/fw_a_agent.py`): pydantic-ai (FunctionModel; its default
//! data format and format 2), the OpenAI Agents SDK (a custom Model; OpenInference's
//! instrumentation), and the OpenAI client instrumented by openai-v2 (message content as log
//! records, a local fake OpenAI server). Each runs two turns: a question answered with a tool,
//! then a second question, with the first turn as history, whose tool raises.
//!
//! Every run is read twice, as a user would: LIVE (the SDK's OTLP/HTTP exporters to the
//! receiver behind `--listen otlp:`) and by IMPORT (the same spans and records as an OTLP JSON
//! file). Both must show each turn's own question, the tool calls with their arguments and
//! results, the failing tool call as an audit finding, the token totals and the answers.
//!
//! Listed as ignored, with the reason, while the frameworks are not installed
//! (`scripts/setup-frameworks-a.sh`); failing then under CI.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use doxascope::model::Model;
use doxascope::model::usage::{Tokens, totals};
use doxascope::trace::Item;
use doxascope::trace::import::{self, Format};
use doxascope::trace::live::{ListenAddr, Live, LiveConfig, LiveEvent};
use serde_json::{Value, json};

const Q1: &str = "What is the weather in Oslo?";
const Q2: &str = "And what about Bergen?";

/// Sessions by name, each its v1 events as JSON.
type Sessions = BTreeMap<String, Vec<Value>>;

fn venv_python() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let py = root.join("target/fw-a-venv/bin/python");
    let ready = |py: &PathBuf| {
        Command::new(py)
            .args([
                "-c",
                "import pydantic_ai, agents, openinference.instrumentation.openai_agents, \
                 opentelemetry.instrumentation.openai_v2, opentelemetry.exporter.otlp.proto.http",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ready(&py) {
        let _ = Command::new("bash")
            .arg(root.join("scripts/setup-frameworks-a.sh"))
            .status();
    }
    if ready(&py) {
        return Some(py);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "frameworks_a: the frameworks could not be installed (scripts/setup-frameworks-a.sh), \
         and under CI this test must run"
    );
    eprintln!("skipping frameworks_a: run scripts/setup-frameworks-a.sh (needs PyPI)");
    None
}

fn as_json(ev: &doxascope::trace::Event) -> Value {
    serde_json::from_str(&ev.to_json_line()).expect("an event as JSON")
}

/// Runs `framework` against a live receiver, and returns what the receiver showed and what
/// the file the same run wrote imports as.
fn run(framework: &str) -> Option<(Sessions, Sessions)> {
    let py = venv_python()?;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("otlp.jsonl");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/fw_a_agent.py");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let live = rt.block_on(async {
        let (live, mut rx) = Live::new(LiveConfig::default());
        let addr: ListenAddr = "otlp:127.0.0.1:0".parse().expect("addr");
        let l = live.listen(&addr).await.expect("listen");
        let ListenAddr::Otlp(a) = l.local_addr().clone() else {
            panic!("not otlp")
        };
        let (fw, path) = (framework.to_string(), file.clone());
        let child = tokio::task::spawn_blocking(move || {
            Command::new(&py)
                .arg(script)
                .arg(fw)
                .arg(format!("http://{a}"))
                .arg(path)
                .output()
                .expect("run the agent")
        });
        let mut names = BTreeMap::new();
        let mut by: Sessions = BTreeMap::new();
        let mut out = None;
        let mut child = Some(child);
        loop {
            // Until the agent is done and the receiver has been quiet a while (a trace's
            // session ends some time after its root span).
            let wait = if out.is_some() { 3 } else { 120 };
            tokio::select! {
                done = async { child.as_mut().expect("child").await }, if child.is_some() => {
                    out = Some(done.expect("join"));
                    child = None;
                }
                ev = tokio::time::timeout(Duration::from_secs(wait), rx.recv()) => {
                    match ev {
                        Err(_) if out.is_some() => break,
                        Err(_) => panic!("timed out; so far: {by:#?}"),
                        Ok(None) => break,
                        Ok(Some(LiveEvent::Opened { session, name, .. }))
                        | Ok(Some(LiveEvent::Named { session, name })) => {
                            names.insert(session, name);
                        }
                        Ok(Some(LiveEvent::Items { session, items, .. })) => {
                            for it in items {
                                let Item::Event(e) = it else { panic!("bad line: {it:?}") };
                                by.entry(names.get(&session).cloned().unwrap_or_default())
                                    .or_default()
                                    .push(as_json(&e));
                            }
                        }
                        Ok(Some(LiveEvent::Rejected { reason, .. })) => {
                            panic!("refused: {reason:?}")
                        }
                        Ok(Some(_)) => {}
                    }
                }
            }
        }
        let out = out.expect("the agent ran");
        assert!(
            out.status.success(),
            "{framework} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // The SDK's exporters delivered everything the framework made.
        let said = String::from_utf8_lossy(&out.stdout);
        let n: Vec<&str> = said.split_whitespace().collect();
        assert!(n.len() == 8 && n[1] == n[3] && n[5] == n[7], "{said}");
        drop(l);
        by
    });
    let bytes = std::fs::read(&file).expect("the file");
    assert_eq!(import::detect(&file, &bytes), Format::Otlp);
    let imported = import::import(Format::Otlp, &bytes, "otlp.jsonl").expect("import");
    let mut file_sessions: Sessions = BTreeMap::new();
    for line in String::from_utf8_lossy(&imported.v1).lines() {
        let v: Value = serde_json::from_str(line).expect("a v1 line");
        let s = v["session"].as_str().unwrap_or("").to_string();
        file_sessions.entry(s).or_default().push(v);
    }
    Some((live, file_sessions))
}

fn of_kind<'e>(evs: &'e [Value], kind: &str) -> Vec<&'e Value> {
    evs.iter().filter(|e| e["kind"] == kind).collect()
}

/// The session whose (innermost) intention was asked `q`.
fn asked<'s>(s: &'s Sessions, q: &str, how: &str) -> &'s [Value] {
    let found: Vec<&Vec<Value>> = s
        .values()
        .filter(|evs| of_kind(evs, "intention").iter().any(|i| i["goal"] == q))
        .collect();
    assert_eq!(found.len(), 1, "{how}: one session asked {q:?}: {s:#?}");
    found[0]
}

/// What a user reads of the session: the token totals the TUI and the report show.
fn tokens(evs: &[Value]) -> (u64, Tokens, Vec<Option<Tokens>>) {
    let mut bytes = Vec::new();
    for e in evs {
        bytes.extend_from_slice(e.to_string().as_bytes());
        bytes.push(b'\n');
    }
    let model = Model::from_bytes("s.jsonl", &bytes);
    let name = model.sessions()[0].to_string();
    let t = totals(model.log(), model.timeline(&name).expect("the session"));
    let reported = t.by_run.iter().map(|r| r.reported).collect();
    (t.calls, t.session, reported)
}

/// The findings `doxascope audit --json` gives on the session.
fn findings(evs: &[Value]) -> Vec<Value> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let mut text = String::new();
    for e in evs {
        text.push_str(&e.to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(["audit", "--json"])
        .arg(&path)
        .output()
        .expect("audit");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    v["findings"].as_array().cloned().unwrap_or_default()
}

fn tool_call<'e>(evs: &'e [Value], tool: &str, how: &str) -> &'e Value {
    let calls: Vec<&Value> = of_kind(evs, "tool_call")
        .into_iter()
        .filter(|c| c["tool"] == tool)
        .collect();
    assert_eq!(calls.len(), 1, "{how}: one call of {tool}: {evs:#?}");
    calls[0]
}

fn answers(evs: &[Value]) -> Vec<&str> {
    of_kind(evs, "answer")
        .iter()
        .filter_map(|a| a["text"].as_str())
        .collect()
}

/// The failing tool call is a finding naming the tool and why.
fn assert_failed_tool(evs: &[Value], tool: &str, how: &str) {
    let c = tool_call(evs, tool, how);
    assert_eq!(c["status"], "error", "{how}: {c}");
    assert_eq!(c["args"], json!({"city": "Bergen"}), "{how}: {c}");
    let f = findings(evs);
    assert!(
        f.iter().any(|f| f["code"] == "tool-call-failed"
            && f["message"].as_str().is_some_and(|m| m.contains(tool))),
        "{how}: {f:#?}"
    );
}

fn check_pydantic_ai(s: &Sessions, how: &str) {
    // One session per run (a trace each), linked by pydantic-ai's conversation id.
    assert_eq!(s.len(), 2, "{how}: {s:#?}");
    let first = asked(s, Q1, how);
    let call = tool_call(first, "get_weather", how);
    assert_eq!(call["args"], json!({"city": "Oslo"}), "{how}: {call}");
    assert_eq!(call["result"], "sunny in Oslo", "{how}: {call}");
    assert_eq!(answers(first), ["It is sunny in Oslo."], "{how}");
    // pydantic-ai's aggregated usage on the run is the sum of its model calls.
    let (calls, counted, reported) = tokens(first);
    assert_eq!(calls, 2, "{how}");
    assert!(counted.input.is_some_and(|n| n > 0), "{how}: {counted:?}");
    let io = |t: &Tokens| (t.input, t.output);
    assert_eq!(
        reported
            .iter()
            .map(|r| r.as_ref().map(io))
            .collect::<Vec<_>>(),
        [Some(io(&counted))],
        "{how}"
    );
    // The second turn: its own question, though the first turn's is replayed before it.
    let second = asked(s, Q2, how);
    assert_failed_tool(second, "broken", how);
    let run = of_kind(second, "intention")[0];
    assert_eq!(run["status"], "error", "{how}: {run}");
    assert!(answers(second).is_empty(), "{how}");
}

fn check_openai_agents(s: &Sessions, how: &str) {
    assert_eq!(s.len(), 2, "{how}: {s:#?}");
    let first = asked(s, Q1, how);
    let call = tool_call(first, "get_weather", how);
    // The call's arguments, not the tool's JSON schema.
    assert_eq!(call["args"], json!({"city": "Oslo"}), "{how}: {call}");
    assert_eq!(call["result"], "sunny in Oslo", "{how}: {call}");
    assert_eq!(answers(first), ["It is sunny in Oslo."], "{how}");
    let (calls, counted, _) = tokens(first);
    assert_eq!(
        (calls, counted.input, counted.output),
        (2, Some(30), Some(3)),
        "{how}"
    );
    let second = asked(s, Q2, how);
    assert_failed_tool(second, "broken", how);
    assert_eq!(answers(second), ["The weather service is down."], "{how}");
    let (calls, counted, _) = tokens(second);
    assert_eq!(
        (calls, counted.input, counted.output),
        (2, Some(70), Some(7)),
        "{how}"
    );
    // The workflow around the agent was asked what its agent was.
    for evs in [first, second] {
        let runs = of_kind(evs, "intention");
        assert_eq!(runs.len(), 2, "{how}: {runs:#?}");
        assert_eq!(runs[0]["goal"], runs[1]["goal"], "{how}: {runs:#?}");
    }
}

fn check_openai_v2(s: &Sessions, how: &str) {
    // The agent's creation (a trace of its own) is in the session of the run using it.
    assert_eq!(s.len(), 1, "{how}: {s:#?}");
    let evs = asked(s, Q1, how);
    let created: Vec<&Value> = of_kind(evs, "span")
        .into_iter()
        .filter(|e| e["operation"] == "create_agent")
        .collect();
    assert_eq!(created.len(), 1, "{how}: {evs:#?}");
    assert_eq!(created[0]["x_agent_id"], "asst-weather", "{how}");
    // Each model call once, with its content from the log record (not a second call).
    let calls = of_kind(evs, "llm_call");
    assert_eq!(calls.len(), 2, "{how}: {calls:#?}");
    assert_eq!(
        calls[0]["tool_calls"],
        json!([{"args": {"city": "Oslo"}, "id": "call-1", "name": "get_weather"}]),
        "{how}: {calls:#?}"
    );
    assert_eq!(calls[1]["output"], "It is sunny in Oslo.", "{how}");
    let (n, counted, _) = tokens(evs);
    assert_eq!(
        (n, counted.input, counted.output),
        (2, Some(24), Some(10)),
        "{how}"
    );
    assert_eq!(answers(evs), ["It is sunny in Oslo."], "{how}");
}

fn both(framework: &str, check: fn(&Sessions, &str)) {
    let Some((live, file)) = run(framework) else {
        return;
    };
    check(&live, &format!("{framework} live"));
    check(&file, &format!("{framework} import"));
}

#[cfg_attr(
    doxascope_no_fw_a,
    ignore = "pydantic-ai, openai-agents and openai-v2 are not installed: run scripts/setup-frameworks-a.sh (needs PyPI; CI installs them)"
)]
#[test]
fn pydantic_ai_default_format_live_and_imported() {
    both("pydantic-ai", check_pydantic_ai);
}

#[cfg_attr(
    doxascope_no_fw_a,
    ignore = "pydantic-ai, openai-agents and openai-v2 are not installed: run scripts/setup-frameworks-a.sh (needs PyPI; CI installs them)"
)]
#[test]
fn pydantic_ai_format_2_live_and_imported() {
    both("pydantic-ai-v2", check_pydantic_ai);
}

#[cfg_attr(
    doxascope_no_fw_a,
    ignore = "pydantic-ai, openai-agents and openai-v2 are not installed: run scripts/setup-frameworks-a.sh (needs PyPI; CI installs them)"
)]
#[test]
fn openai_agents_sdk_live_and_imported() {
    both("openai-agents", check_openai_agents);
}

#[cfg_attr(
    doxascope_no_fw_a,
    ignore = "pydantic-ai, openai-agents and openai-v2 are not installed: run scripts/setup-frameworks-a.sh (needs PyPI; CI installs them)"
)]
#[test]
fn openai_v2_content_as_log_records_live_and_imported() {
    both("openai-v2", check_openai_v2);
}
