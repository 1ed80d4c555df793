//! Failures the run itself records: `tool-call-failed`, `model-call-failed`,
//! `agent-run-failed` and `error-logged` (issue 26: "what failed, where" before anything
//! else about an agent's trace).
//!
//! What counts as failed is [`crate::model::failure`]'s one reading of the sources' ways of
//! saying it. An error log that repeats a call's or a run's failure (the same span, the same
//! Langfuse observation, the same place in the source) is folded into that finding as its
//! evidence (`log_steps`) rather than reported twice, so `e` stops once per failure.

use super::{Code, Cx};
use crate::model::failure::{Failure, Found, What, failures};

fn code_of(w: What) -> Code {
    match w {
        What::ToolCall => Code::ToolCallFailed,
        What::ModelCall => Code::ModelCallFailed,
        What::AgentRun => Code::AgentRunFailed,
        What::ErrorLog => Code::ErrorLogged,
    }
}

/// The code and one-sentence message of the finding a failure is.
pub(super) fn describe(f: &Failure) -> (Code, String) {
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
    (code_of(f.what), message)
}

pub(super) fn check(cx: &mut Cx<'_>) {
    for Found {
        step,
        pos,
        failure: f,
        log_steps,
    } in failures(cx.log, cx.tl)
    {
        let (code, message) = describe(&f);
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
