//! `doxascope mcp`: doxascope's questions as tools of an MCP server over stdio, for a coding
//! agent that debugs another agent.
//!
//! Every tool takes `trace` (a path, in any format the CLI reads: v1 or an imported one) and
//! optionally `session` and `step`; the tools about a formula take `formula`. A result is the
//! answer as text a model reads well, with the same answer's JSON as structured content.
//!
//! Nothing here answers a question itself: `sigma`, `why`, `whynot`, `entails`, `history`,
//! `whatif` and `diff` between two steps are the REPL engine's commands ([`crate::repl`]);
//! `audit` and `findings` the audit's report; `export` and `diff` between two runs the
//! renderings the `export` and `diff` subcommands print. A question that cannot be answered
//! (a missing file, an unknown session, a formula that does not parse) is a tool error with
//! the reason, never a crash of the server: each call runs on a blocking thread, and a panic
//! there becomes a tool error too.
//!
//! `docs/mcp.md` shows how to wire the server into Claude Code, Cursor and other clients.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

use crate::logic::revise::Policy;
use crate::model::Model;
use crate::model::audit::{AuditOptions, Report, audit, render_text};
use crate::model::diff::{Align, Run, diff};
use crate::model::recompute::RecomputeOptions;
use crate::repl::{Command, FormulaArg, ModelSigma, Repl};

use super::{EXIT_OK, EXIT_USAGE};

/// Arguments of `mcp`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Seconds one solver request may take before its answer counts as not checkable.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
}

/// Runs the server on stdin/stdout until the client closes it; returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let Some(timeout) = super::timeout_arg("mcp", args.timeout) else {
        return EXIT_USAGE;
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("doxascope mcp: cannot start: {e}");
            return EXIT_USAGE;
        }
    };
    let served = rt.block_on(async move {
        let service = Server { timeout }
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| e.to_string())?;
        service.waiting().await.map_err(|e| e.to_string())?;
        Ok::<(), String>(())
    });
    // A pending read of stdin cannot be cancelled: do not wait for it at shutdown.
    rt.shutdown_background();
    match served {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("doxascope mcp: {e}");
            EXIT_USAGE
        }
    }
}

/// The server: stateless, every call loads the trace it names (so a trace that grows between
/// calls is read as it is now).
#[derive(Debug, Clone, Copy)]
struct Server {
    timeout: Duration,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("doxascope", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let timeout = self.timeout;
        // The solver and the loader block; a panic in them must not take the server down.
        let joined = tokio::task::spawn_blocking(move || answer(&name, &args, timeout)).await;
        let result = match joined {
            Ok(Ok(a)) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(a.text)]);
                r.structured_content = Some(a.json);
                r
            }
            Ok(Err(message)) => CallToolResult::error(vec![ContentBlock::text(message)]),
            Err(_) => CallToolResult::error(vec![ContentBlock::text(
                "internal error: the question could not be answered (please report it)",
            )]),
        };
        Ok(result.into())
    }
}

/// What the server tells the client about its tools, once.
const INSTRUCTIONS: &str = "doxascope inspects the belief states of LLM agents from their \
traces (doxascope v1 JSON Lines, or OpenTelemetry, Inspect AI, Langfuse, LangSmith, Letta, \
Graphiti, LangGraph and mem0 exports). Σ is the set of the agent's active beliefs at a step. \
Formulas: atoms like treasure_in_a or p(x), ¬ ∧ ∨ → ↔ (or ! & | -> <->), ∀x/∃x, key = value. \
Start with `audit` for what went wrong, then `sigma`, `why`, `history` at the steps it names.";

/// One answer: text for the model to read, and the same answer as JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    /// The answer as the CLI prints it.
    pub(crate) text: String,
    /// The answer as `--json` prints it.
    pub(crate) json: Value,
}

/// A tool's name, what it answers, and the arguments it takes beyond `trace`, `session` and
/// `step`.
struct ToolSpec {
    name: &'static str,
    description: &'static str,
    extra: &'static [(&'static str, &'static str, &'static str, bool)],
}

/// A formula argument, required.
const FORMULA: (&str, &str, &str, bool) = (
    "formula",
    "string",
    "A formula: atoms (treasure_in_a, p(x), key = value), ¬ ∧ ∨ → ↔ or ! & | -> <->, ∀x ∃x.",
    true,
);

/// Every tool, in the order `tools/list` gives them.
const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "sigma",
        description: "Σ, the agent's active beliefs at a step (default: the last): id, formula, role, source, confidence, the step that announced it.",
        extra: &[],
    },
    ToolSpec {
        name: "why",
        description: "Why Σ entails a formula at a step: its minimal support sets (subsets of Σ that entail it).",
        extra: &[FORMULA],
    },
    ToolSpec {
        name: "whynot",
        description: "Why Σ does not entail a formula at a step: a countermodel (an assignment satisfying Σ ∧ ¬φ) on the atoms that matter.",
        extra: &[FORMULA],
    },
    ToolSpec {
        name: "entails",
        description: "Whether Σ at a step entails the formula, contradicts it, or neither (unknown).",
        extra: &[FORMULA],
    },
    ToolSpec {
        name: "history",
        description: "Every step of the session at which the formula (or belief id) changed status (entailed, contradicted, unknown, Σ inconsistent; announced, retracted, re-derived), with the event that caused it and a minimal support for each entailed stretch. `step` is ignored: the whole session is read.",
        extra: &[(
            "formula",
            "string",
            "A formula, or the id of a belief of the trace.",
            true,
        )],
    },
    ToolSpec {
        name: "audit",
        description: "Replays the trace, recomputes every claim of the agent (verify verdicts, revisions, answers) with the solver, and summarizes the findings: counts by code and severity, claimed vs recomputed outcomes. `session` narrows the report; `step` is ignored.",
        extra: &[],
    },
    ToolSpec {
        name: "findings",
        description: "The audit's findings one by one (code, severity, step, message, the belief ids and formulas involved), optionally only those of one `code` or at one `step`.",
        extra: &[(
            "code",
            "string",
            "Only findings of this code (e.g. unhandled-contradiction, wrong-answer).",
            false,
        )],
    },
    ToolSpec {
        name: "diff",
        description: "Without `other`: what Σ gained and lost between step `from` (default 0) and `step` (default the last). With `other` (a second trace of the same task): what differs between the two runs (beliefs, verdicts, the first divergence, tool calls, answers).",
        extra: &[
            (
                "from",
                "integer",
                "The earlier step (without `other`).",
                false,
            ),
            (
                "other",
                "string",
                "A second run's trace file, to compare the runs.",
                false,
            ),
            (
                "other_session",
                "string",
                "The session of `other`, when it holds several.",
                false,
            ),
        ],
    },
    ToolSpec {
        name: "whatif",
        description: "Re-runs the session's revisions under another policy from `step` (default 0): the alternative Σ beside the real one, every later verdict or answer that would have changed, and the other minimal repairs of each revision.",
        extra: &[(
            "policy",
            "string",
            "greedy, greedy-paper, recency, confidence, reject or flag.",
            true,
        )],
    },
    ToolSpec {
        name: "export",
        description: "Σ at a step in a format: json (default), prompt, agent-prompt (seed 001's instructions with Σ), dimacs or smtlib.",
        extra: &[
            (
                "format",
                "string",
                "json, prompt, agent-prompt, dimacs or smtlib (default json).",
                false,
            ),
            (
                "formula",
                "string",
                "With agent-prompt: only the beliefs that bear on this formula.",
                false,
            ),
        ],
    },
];

/// The tools as MCP describes them, with their input schemas.
fn tools() -> Vec<Tool> {
    TOOLS.iter().map(tool).collect()
}

/// One tool's description and JSON Schema.
fn tool(spec: &ToolSpec) -> Tool {
    let mut props = Map::new();
    props.insert(
        "trace".into(),
        json!({"type": "string", "description": "Path of the trace file (doxascope v1 JSON Lines, or any format `doxascope import` reads)."}),
    );
    props.insert(
        "session".into(),
        json!({"type": "string", "description": "The session, when the trace holds several (the error lists them)."}),
    );
    props.insert(
        "step".into(),
        json!({"type": "integer", "minimum": 0, "description": "The step: Σ after the session's first `step` events (default: the last step)."}),
    );
    let mut required = vec![json!("trace")];
    for (name, ty, doc, req) in spec.extra {
        props.insert((*name).into(), json!({"type": ty, "description": doc}));
        if *req {
            required.push(json!(name));
        }
    }
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(props));
    schema.insert("required".into(), Value::Array(required));
    Tool::new(spec.name, spec.description, Arc::new(schema))
}

/// Answers one tool call; `Err` is the reason, as a tool error.
pub(crate) fn answer(
    tool: &str,
    args: &Map<String, Value>,
    timeout: Duration,
) -> Result<Answer, String> {
    if !TOOLS.iter().any(|t| t.name == tool) {
        return Err(format!("no tool named {tool:?}"));
    }
    let trace = PathBuf::from(string(args, "trace")?.ok_or("`trace` is required: a path")?);
    let session = string(args, "session")?;
    let step = integer(args, "step")?;
    let model = Model::load(std::slice::from_ref(&trace)).map_err(|e| e.to_string())?;
    let name = model
        .pick_session(session.as_deref())
        .map_err(|e| e.to_string())?
        .name()
        .to_string();
    let model = Arc::new(model);
    match tool {
        "audit" | "findings" => audited(tool, &model, &name, session.is_some(), args, timeout),
        "export" => exported(&model, &name, step, args),
        "diff" if args.contains_key("other") => runs_diff(&model, &name, &trace, args, timeout),
        _ => asked(tool, model, name, step, args, timeout),
    }
}

/// The tools that are one REPL command at a step.
fn asked(
    tool: &str,
    model: Arc<Model>,
    session: String,
    step: Option<u64>,
    args: &Map<String, Value>,
    timeout: Duration,
) -> Result<Answer, String> {
    let formula = || -> Result<FormulaArg, String> {
        let text = string(args, "formula")?.ok_or("`formula` is required")?;
        Ok(FormulaArg { text, column: 1 })
    };
    let command = match tool {
        "sigma" => Command::Sigma,
        "why" => Command::Why(formula()?),
        "whynot" => Command::WhyNot(formula()?),
        "entails" => Command::Entails {
            formula: formula()?,
            certificate: None,
        },
        "history" => Command::History(formula()?),
        "whatif" => {
            let p = string(args, "policy")?.ok_or("`policy` is required")?;
            let policy = Policy::parse(&p).ok_or_else(|| {
                format!("unknown policy {p:?}: greedy, greedy-paper, recency, confidence, reject or flag")
            })?;
            Command::WhatIf {
                policy,
                from: step.unwrap_or(0),
            }
        }
        "diff" => {
            let last = model.timeline(&session).map_or(0, |t| u64::from(t.len()));
            Command::Diff(integer(args, "from")?.unwrap_or(0), step.unwrap_or(last))
        }
        _ => return Err(format!("no tool named {tool:?}")),
    };
    let mut repl = Repl::new(Box::new(ModelSigma::new(model, session)));
    repl.set_walk_timeout(timeout);
    if let Some(at) = step.filter(|_| !matches!(tool, "whatif" | "diff" | "history")) {
        repl.run(&Command::At(at)).map_err(|e| e.to_text())?;
    }
    let reply = repl.run(&command).map_err(|e| e.to_text())?;
    let notes = repl.take_notes();
    let mut text = String::new();
    for n in &notes {
        text.push_str(&format!("note: {}\n", crate::sanitize::sanitize(n)));
    }
    text.push_str(&reply.to_text());
    let mut json = reply.to_json(command.name());
    if !notes.is_empty() {
        json["notes"] = json!(notes);
    }
    Ok(Answer { text, json })
}

/// `audit` (the summary) and `findings` (the list), from one audit of the trace.
fn audited(
    tool: &str,
    model: &Model,
    session: &str,
    one_session: bool,
    args: &Map<String, Value>,
    timeout: Duration,
) -> Result<Answer, String> {
    let opts = AuditOptions {
        recompute: RecomputeOptions {
            timeout,
            ..RecomputeOptions::default()
        },
        ..AuditOptions::default()
    };
    let mut report = audit(model, &opts);
    if one_session {
        report.findings.retain(|f| f.session == session);
    }
    if tool == "audit" {
        return Ok(Answer {
            text: render_text(&report),
            json: report.to_json(),
        });
    }
    let code = string(args, "code")?;
    let step = integer(args, "step")?;
    report.findings.retain(|f| {
        code.as_deref().is_none_or(|c| f.code.as_str() == c)
            && step.is_none_or(|s| f.step.map(u64::from) == Some(s))
    });
    Ok(findings_answer(&report))
}

/// The findings of a (filtered) report, one per line.
fn findings_answer(report: &Report) -> Answer {
    let mut text = format!("{} finding(s)\n", report.findings.len());
    for f in &report.findings {
        let at = f.step.map_or(String::new(), |s| format!(" at step {s}"));
        text.push_str(&format!(
            "{} {} [{}]{at}: {}\n",
            f.severity.as_str(),
            f.code.as_str(),
            crate::sanitize::sanitize(&f.session),
            f.message
        ));
    }
    let list: Vec<Value> = report.findings.iter().map(|f| f.to_json()).collect();
    Answer {
        text,
        json: json!({"findings": list}),
    }
}

/// `export`: Σ at the step in a format, as `doxascope export` prints it.
fn exported(
    model: &Model,
    session: &str,
    step: Option<u64>,
    args: &Map<String, Value>,
) -> Result<Answer, String> {
    use crate::model::export::Format;
    let tl = model.pick_session(Some(session))?;
    let step = match step {
        None => tl.len(),
        Some(s) if s <= u64::from(tl.len()) => s as u32,
        Some(s) => return Err(format!("step {s} is past the end ({} steps)", tl.len())),
    };
    let format = match string(args, "format")?.as_deref().unwrap_or("json") {
        "json" => Format::Json,
        "prompt" => Format::Prompt,
        "agent-prompt" => Format::AgentPrompt,
        "dimacs" => Format::Dimacs,
        "smtlib" => Format::Smtlib,
        other => {
            return Err(format!(
                "unknown format {other:?}: json, prompt, agent-prompt, dimacs or smtlib"
            ));
        }
    };
    let query = match string(args, "formula")? {
        Some(f) => Some(crate::logic::parse::parse(&f).map_err(|e| {
            format!(
                "`formula` does not parse at column {}: {}",
                e.column, e.message
            )
        })?),
        None => None,
    };
    let text = super::export::render(model, tl, step, format, query.as_ref());
    let json = match format {
        Format::Json => serde_json::from_str(&text).unwrap_or(Value::String(text.clone())),
        _ => json!({"format": format_name(format), "session": session, "step": step, "text": text}),
    };
    Ok(Answer { text, json })
}

/// A format's name as the tool takes it.
fn format_name(f: crate::model::export::Format) -> &'static str {
    use crate::model::export::Format;
    match f {
        Format::Json => "json",
        Format::Prompt => "prompt",
        Format::AgentPrompt => "agent-prompt",
        Format::Dimacs => "dimacs",
        Format::Smtlib => "smtlib",
    }
}

/// `diff` with `other`: what differs between two runs, as `doxascope diff` prints it.
fn runs_diff(
    model: &Model,
    session: &str,
    trace: &std::path::Path,
    args: &Map<String, Value>,
    timeout: Duration,
) -> Result<Answer, String> {
    let other = PathBuf::from(string(args, "other")?.ok_or("`other` must be a path")?);
    let mb = Model::load(std::slice::from_ref(&other)).map_err(|e| e.to_string())?;
    let ta = model.pick_session(Some(session))?;
    let tb = mb
        .pick_session(string(args, "other_session")?.as_deref())
        .map_err(|e| format!("other: {e}"))?;
    let opts = RecomputeOptions {
        timeout,
        audit: None,
        ..RecomputeOptions::default()
    };
    let (a, b) = (Run::of(model, ta), Run::of(&mb, tb));
    let d = diff(a, b, Align::Step, &opts);
    let names = [trace.display().to_string(), other.display().to_string()];
    Ok(Answer {
        text: super::diff::to_text(&d, a, b, &names),
        json: super::diff::to_json(&d, a, b, &names),
    })
}

/// An optional string argument; `Err` when it is there but not a string.
fn string(args: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{key}` must be a string, found {other}")),
    }
}

/// An optional step-like argument: a non-negative integer (a string of digits is taken too,
/// as some clients send every argument as a string).
fn integer(args: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(Value::String(s)) if s.trim().parse::<u64>().is_ok() => Ok(s.trim().parse().ok()),
        Some(other) => Err(format!(
            "`{key}` must be a non-negative integer, found {other}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn treasure() -> String {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/sample-traces/treasure-hunt.jsonl"
        )
        .to_string()
    }

    fn call(tool: &str, args: Value) -> Result<Answer, String> {
        let Value::Object(m) = args else { panic!() };
        answer(tool, &m, Duration::from_secs(10))
    }

    #[test]
    fn every_tool_takes_trace_session_and_step() {
        let names: Vec<_> = tools().iter().map(|t| t.name.to_string()).collect();
        assert_eq!(
            names,
            [
                "sigma", "why", "whynot", "entails", "history", "audit", "findings", "diff",
                "whatif", "export"
            ]
        );
        for t in tools() {
            let props = t.input_schema["properties"].as_object().unwrap();
            for k in ["trace", "session", "step"] {
                assert!(props.contains_key(k), "{} lacks {k}", t.name);
            }
        }
    }

    #[test]
    fn why_answers_as_the_repl_does() {
        let a = call(
            "why",
            json!({"trace": treasure(), "formula": "¬treasure_in_a", "step": 11}),
        )
        .unwrap();
        let mut repl = super::super::repl_on("t", &[treasure().into()], None).unwrap();
        repl.run(&Command::At(11)).unwrap();
        let r = repl.run_line("why ¬treasure_in_a").unwrap();
        assert_eq!(a.text, r.to_text());
        assert_eq!(a.json, r.to_json("why"));
        assert!(a.text.contains("t2-map-b"), "{}", a.text);
    }

    #[test]
    fn bad_questions_are_errors_not_panics() {
        assert!(
            call(
                "why",
                json!({"trace": "/nonexistent/x.jsonl", "formula": "p"})
            )
            .is_err()
        );
        assert!(call("why", json!({"trace": treasure(), "formula": "(("})).is_err());
        assert!(call("why", json!({"trace": treasure()})).is_err());
        assert!(call("sigma", json!({"trace": treasure(), "session": "nope"})).is_err());
        assert!(call("sigma", json!({"trace": treasure(), "step": -3})).is_err());
        assert!(call("sigma", json!({"trace": treasure(), "step": 10_000})).is_err());
        assert!(call("whatif", json!({"trace": treasure(), "policy": "vote"})).is_err());
        assert!(call("nope", json!({"trace": treasure()})).is_err());
    }
}
