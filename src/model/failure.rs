//! What failed in a run: a tool call, a model call or an agent run that says it failed, and
//! a log at level error.
//!
//! Agent frameworks say "this failed" in several ways, and the importers keep each as the
//! source wrote it (`docs/import.md`), so the one reading of them is here and every face
//! (the audit's findings, the timeline's `level:error` filter and its mark, the plan pane)
//! asks [`failure_of`]:
//!
//! - `status` is `error`, `failed` or `failure` (OpenTelemetry span status ERROR, a failed
//!   agent run);
//! - `error` holds something: a message, or an object such as Inspect's `{type, message}`
//!   (`null`, `false` and `""` say there was none);
//! - `ok` is `false` (Letta's tool results);
//! - `x_level` is `ERROR` (Langfuse's observation level);
//! - for a `log`, `level` is `error`, `err`, `fatal`, `critical`, `alert` or `emergency`.
//!
//! Only `tool_call`, `llm_call` and `intention` events are read for the first four: a plan
//! `step` that failed has seed 004's own findings, and the other kinds an importer keeps
//! (`span`, `chain`, ...) say their failure through an error `log`.
//!
//! One failure is often written twice: an OpenTelemetry span with status ERROR gives its
//! `tool_call` (status `error`) and an error `log` with the same span (`x_span`); Langfuse
//! gives the observation (`x_level`) and a log naming it (`x_observation`); LangSmith gives
//! the run and a log naming it (`x_run`); Inspect's sample error fails its run
//! and is logged naming it (`x_intention`). [`Failure::links`] and
//! [`Failure::refers_to`] let the audit fold such a log into the failure it repeats.

use serde_json::Value;

use crate::trace::Event;
use crate::trace::event::Body;

/// What failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum What {
    /// A `tool_call`.
    ToolCall,
    /// An `llm_call`: a model call.
    ModelCall,
    /// An `intention`: an agent run.
    AgentRun,
    /// A `log` at level error.
    ErrorLog,
}

impl What {
    /// What it is called in a sentence ("tool call", "model call", ...).
    pub fn noun(self) -> &'static str {
        match self {
            What::ToolCall => "tool call",
            What::ModelCall => "model call",
            What::AgentRun => "agent run",
            What::ErrorLog => "error log",
        }
    }
}

/// A failure an event records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What failed.
    pub what: What,
    /// The name of what failed: the tool, the model, the agent (empty when the event has
    /// none).
    pub name: String,
    /// Why, as the source says it (raw; sanitize before showing).
    pub message: String,
    /// What identifies the failed event to a log that repeats it: its `id`, `x_span` and
    /// `x_from`. For a log, the event it names: `x_span`, `x_observation`, `x_intention`
    /// (Inspect's sample error names its run), `x_run` (LangSmith's), `x_from`.
    pub links: Vec<String>,
}

impl Failure {
    /// Whether this (a log's failure) repeats `other` (the failure of a call or a run):
    /// they share a span, an observation or the place in the source they were read from.
    pub fn refers_to(&self, other: &Failure) -> bool {
        self.links.iter().any(|l| other.links.contains(l))
    }
}

/// Log levels that say something failed.
fn is_error_level(level: &str) -> bool {
    matches!(
        level.trim().to_ascii_lowercase().as_str(),
        "error" | "err" | "fatal" | "critical" | "crit" | "alert" | "emergency" | "severe"
    )
}

/// The text of an `error` value: a string as is; an object's `message` (with its `type`
/// before it); anything else as JSON. `None` when it says there was no error.
fn error_text(v: &Value) -> Option<String> {
    match v {
        Value::Null | Value::Bool(false) => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(true) => Some(String::new()),
        Value::Object(m) => {
            let field = |k: &str| m.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
            let msg = field("message").or_else(|| field("msg"));
            let ty = field("type").or_else(|| field("name"));
            Some(match (ty, msg) {
                (Some(t), Some(m)) => format!("{t}: {m}"),
                (Some(x), None) | (None, Some(x)) => x.to_string(),
                (None, None) => v.to_string(),
            })
        }
        other => Some(other.to_string()),
    }
}

/// What a failed result says: the `message` of a result that is a JSON object holding one
/// (Letta's `{"status": "Failed", "message": ...}`), else the result as written.
fn result_message(ev: &Event) -> Option<String> {
    let r = text(ev, "result")?;
    let msg = serde_json::from_str::<Value>(&r)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .filter(|m| !m.trim().is_empty() && m != "None");
    Some(msg.unwrap_or(r))
}

/// A field of the event as a string.
fn text(ev: &Event, k: &str) -> Option<String> {
    match ev.extra.value(k)? {
        Value::String(s) => Some(s),
        Value::Null => None,
        v => Some(v.to_string()),
    }
}

/// The failure `ev` records, if it records one.
pub fn failure_of(ev: &Event) -> Option<Failure> {
    let what = match (&ev.body, ev.kind_name()) {
        (Body::Log(l), _) => {
            if !l.level.as_deref().is_some_and(is_error_level) {
                return None;
            }
            let links = ["x_span", "x_observation", "x_intention", "x_run", "x_from"]
                .iter()
                .filter_map(|k| text(ev, k))
                .collect();
            return Some(Failure {
                what: What::ErrorLog,
                name: String::new(),
                message: l.message.as_deref().unwrap_or("").to_string(),
                links,
            });
        }
        (Body::Intention(_), _) => What::AgentRun,
        (Body::Unknown(_), "tool_call") => What::ToolCall,
        (Body::Unknown(_), "llm_call") => What::ModelCall,
        _ => return None,
    };
    let status = text(ev, "status").filter(|s| {
        matches!(
            s.trim().to_ascii_lowercase().as_str(),
            "error" | "failed" | "failure" | "fail"
        )
    });
    let error = ev.extra.value("error").as_ref().and_then(error_text);
    let not_ok = ev.extra.value("ok") == Some(Value::Bool(false));
    let level = text(ev, "x_level").filter(|l| is_error_level(l));
    if status.is_none() && error.is_none() && !not_ok && level.is_none() {
        return None;
    }
    let message = error
        .filter(|e| !e.is_empty())
        .or_else(|| text(ev, "status_message"))
        .or_else(|| text(ev, "x_status_message"))
        .or_else(|| not_ok.then(|| result_message(ev)).flatten())
        .or_else(|| status.map(|s| format!("status {s}")))
        .or_else(|| level.map(|l| format!("level {l}")))
        .unwrap_or_default();
    let name = match (&ev.body, what) {
        (Body::Intention(i), _) => i.intention_type.as_deref().unwrap_or("").to_string(),
        (_, What::ToolCall) => text(ev, "tool").unwrap_or_default(),
        _ => text(ev, "model")
            .or_else(|| text(ev, "name"))
            .unwrap_or_default(),
    };
    let mut links: Vec<String> = ev.id.iter().map(|s| s.to_string()).collect();
    links.extend(["x_span", "x_from"].iter().filter_map(|k| text(ev, k)));
    Some(Failure {
        what,
        name,
        message,
        links,
    })
}

/// A failure of a session, with the error logs that repeat it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The step of the failed event (1-based).
    pub step: u32,
    /// Its log position.
    pub pos: u32,
    /// What failed.
    pub failure: Failure,
    /// The steps of error logs that repeat it ([`Failure::refers_to`]), folded into it.
    pub log_steps: Vec<u32>,
}

/// Every failure of the session `tl` replays from `log`, in step order of the calls and
/// runs, then the error logs that repeat none of them. An error log that repeats a call's
/// or a run's failure is folded into it, so each failure is listed once: the audit's
/// findings and the TUI's `e` before the audit has run both read this one list.
///
/// Cheap: only the kinds that can record a failure are decoded.
pub fn failures(log: &crate::trace::TraceLog, tl: &crate::model::Timeline) -> Vec<Found> {
    use crate::trace::Kind;
    let mut found: Vec<Found> = Vec::new();
    let mut logs: Vec<(u32, u32, Failure)> = Vec::new();
    for (i, &pos) in tl.event_positions().iter().enumerate() {
        match log.events.kind(pos as usize) {
            Some(None | Some(Kind::Log | Kind::Intention)) => {}
            _ => continue,
        }
        let Some(ev) = log.events.load(pos as usize) else {
            continue;
        };
        let Some(failure) = failure_of(&ev) else {
            continue;
        };
        let step = i as u32 + 1;
        if failure.what == What::ErrorLog {
            logs.push((step, pos, failure));
        } else {
            found.push(Found {
                step,
                pos,
                failure,
                log_steps: Vec::new(),
            });
        }
    }
    for (step, pos, failure) in logs {
        match found.iter().position(|f| failure.refers_to(&f.failure)) {
            Some(k) => found[k].log_steps.push(step),
            None => found.push(Found {
                step,
                pos,
                failure,
                log_steps: Vec::new(),
            }),
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Item, Reader, ReaderConfig};

    fn ev(line: &str) -> Event {
        let mut r = Reader::new("t.jsonl", ReaderConfig::default());
        let mut out = Vec::new();
        r.feed(line.as_bytes(), &mut out);
        r.feed(b"\n", &mut out);
        r.finish(&mut out);
        match out.into_iter().next() {
            Some(Item::Event(e)) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_way_a_source_says_failed_is_read() {
        let failed = [
            (
                r#"{"kind":"tool_call","tool":"bash","status":"error"}"#,
                What::ToolCall,
                "status error",
            ),
            (
                r#"{"kind":"tool_call","tool":"bash","error":{"type":"timeout","message":"took too long"}}"#,
                What::ToolCall,
                "timeout: took too long",
            ),
            (
                r#"{"kind":"tool_call","tool":"send","ok":false,"result":"{\"status\":\"Failed\"}"}"#,
                What::ToolCall,
                "{\"status\":\"Failed\"}",
            ),
            (
                r#"{"kind":"tool_call","tool":"send","ok":false,"result":"{\"status\":\"Failed\",\"message\":\"no such block\"}"}"#,
                What::ToolCall,
                "no such block",
            ),
            (
                r#"{"kind":"tool_call","tool":"t","x_level":"ERROR"}"#,
                What::ToolCall,
                "level ERROR",
            ),
            (
                r#"{"kind":"llm_call","model":"m","error":"rate limited"}"#,
                What::ModelCall,
                "rate limited",
            ),
            (
                r#"{"kind":"intention","type":"agent","status":"failed"}"#,
                What::AgentRun,
                "status failed",
            ),
            (
                r#"{"kind":"log","level":"ERROR","message":"boom"}"#,
                What::ErrorLog,
                "boom",
            ),
            (
                r#"{"kind":"log","level":"fatal","message":"down"}"#,
                What::ErrorLog,
                "down",
            ),
        ];
        for (line, what, msg) in failed {
            let f = failure_of(&ev(line)).unwrap_or_else(|| panic!("{line}"));
            assert_eq!((f.what, f.message.as_str()), (what, msg), "{line}");
        }
    }

    #[test]
    fn what_did_not_fail_is_no_failure() {
        for line in [
            r#"{"kind":"tool_call","tool":"bash","status":"ok","error":null}"#,
            r#"{"kind":"tool_call","tool":"bash","error":""}"#,
            r#"{"kind":"tool_call","tool":"bash","ok":true}"#,
            r#"{"kind":"tool_call","tool":"bash","x_level":"WARNING"}"#,
            r#"{"kind":"llm_call","model":"m","error":false}"#,
            r#"{"kind":"log","level":"warn","message":"slow"}"#,
            r#"{"kind":"log","message":"no level"}"#,
            r#"{"kind":"span","status":"error"}"#,
            r#"{"kind":"step","plan":"p","step":"s","status":"failed"}"#,
            r#"{"kind":"intention","type":"agent"}"#,
        ] {
            assert_eq!(failure_of(&ev(line)), None, "{line}");
        }
    }

    #[test]
    fn a_log_repeating_a_failure_is_linked_to_it() {
        let call = failure_of(&ev(
            r#"{"kind":"tool_call","id":"ab12","tool":"t","status":"error","x_span":"ab12"}"#,
        ))
        .unwrap();
        let same = failure_of(&ev(
            r#"{"kind":"log","level":"error","message":"t failed","x_span":"ab12"}"#,
        ))
        .unwrap();
        let other = failure_of(&ev(
            r#"{"kind":"log","level":"error","message":"t failed","x_span":"cd34"}"#,
        ))
        .unwrap();
        assert!(same.refers_to(&call));
        assert!(!other.refers_to(&call));
    }
}
