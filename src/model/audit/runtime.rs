//! Failures the run itself records: `tool-call-failed`, `model-call-failed`,
//! `agent-run-failed` and `error-logged` (issue 26: "what failed, where" before anything
//! else about an agent's trace).
//!
//! What counts as failed is [`crate::model::failure`]'s one reading of the sources' ways of
//! saying it. An error log that repeats a call's or a run's failure (the same span, the same
//! Langfuse observation, the same place in the source) is folded into that finding as its
//! evidence (`log_steps`) rather than reported twice, so `e` stops once per failure.

use super::{Code, Cx};
use crate::model::failure::{Failure, What, failure_of};
use crate::trace::Kind;

fn code_of(w: What) -> Code {
    match w {
        What::ToolCall => Code::ToolCallFailed,
        What::ModelCall => Code::ModelCallFailed,
        What::AgentRun => Code::AgentRunFailed,
        What::ErrorLog => Code::ErrorLogged,
    }
}

pub(super) fn check(cx: &mut Cx<'_>) {
    // (step, event position, failure); logs are matched against the calls and runs.
    let mut found: Vec<(u32, u32, Failure)> = Vec::new();
    let mut logs: Vec<(u32, u32, Failure)> = Vec::new();
    for (i, &pos) in cx.tl.event_positions().iter().enumerate() {
        // Only the kinds that can record a failure are decoded.
        match cx.log.events.kind(pos as usize) {
            Some(None | Some(Kind::Log | Kind::Intention)) => {}
            _ => continue,
        }
        let Some(ev) = cx.log.events.load(pos as usize) else {
            continue;
        };
        let Some(f) = failure_of(&ev) else { continue };
        let step = i as u32 + 1;
        if f.what == What::ErrorLog {
            logs.push((step, pos, f));
        } else {
            found.push((step, pos, f));
        }
    }
    let mut folded: Vec<Vec<u32>> = vec![Vec::new(); found.len()];
    for (step, pos, log) in logs {
        match found.iter().position(|(_, _, f)| log.refers_to(f)) {
            Some(k) => folded[k].push(step),
            None => found.push((step, pos, log)),
        }
    }
    folded.resize(found.len(), Vec::new());
    for ((step, pos, f), log_steps) in found.into_iter().zip(folded) {
        let code = code_of(f.what);
        let named = if f.name.is_empty() {
            String::new()
        } else {
            format!(" {}", f.name)
        };
        let why = if f.message.is_empty() {
            String::new()
        } else {
            format!(": {}", one_line(&f.message))
        };
        let mut message = match f.what {
            What::ErrorLog => format!("an error was logged{why}"),
            w => format!("the {}{named} failed{why}", w.noun()),
        };
        // A finding's message is one sentence.
        if !message.ends_with('.') {
            message.push('.');
        }
        let mut finding = cx
            .finding(code, step, pos, message)
            .with("failed", f.what.noun())
            .with("error", &f.message);
        if !f.name.is_empty() {
            finding = finding.with("name", &f.name);
        }
        if !log_steps.is_empty() {
            finding = finding.with("log_steps", log_steps);
        }
        cx.push(finding);
    }
}

/// The first line of a message, at most 200 characters: a traceback's first line says
/// what it is; the finding's evidence keeps the whole text.
fn one_line(s: &str) -> String {
    let line = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut out: String = line.chars().take(200).collect();
    if out.len() < line.len() || s.trim().lines().nth(1).is_some() {
        out.push('…');
    }
    out
}
