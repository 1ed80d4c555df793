//! `parse-error` and `unresolved-reference`: what the reader and the replay could not use.
//!
//! Reader problems (a line that is not JSON, a field of the wrong type) come with
//! file:line:column from the reader. Formula parse errors come from the replay's per-event
//! errors, with the column inside the formula text. Reader warnings (a line kept despite,
//! say, a timestamp going backwards) are `info`: `validate` is the tool for them, and they do
//! not make the audit fail.

use serde_json::json;

use super::{Code, Cx, Finding, Location, Severity};
use crate::model::Model;
use crate::trace::Severity as ReaderSeverity;

/// Per-event errors of the replay.
pub(super) fn check(cx: &mut Cx<'_>) {
    for e in cx.tl.errors() {
        let (code, severity) = match (e.field, e.column) {
            ("formula", Some(_)) => (Code::ParseError, Severity::Error),
            ("target" | "trigger", _) => (Code::UnresolvedReference, Severity::Warning),
            // "verify names no formula": reported by the gate check as not checkable.
            _ => continue,
        };
        let mut f = cx
            .finding(
                code,
                e.step,
                e.event,
                format!("{}.", e.message.trim_end_matches('.')),
            )
            .severity(severity)
            .with("field", e.field);
        if let (Some(col), Some(loc)) = (e.column, f.location.as_mut()) {
            loc.column = Some(col as u64);
        }
        if let Some(text) = field_text(cx, e.event, e.field) {
            f = if e.field == "formula" {
                f.formulas([text])
            } else {
                f.ids([text])
            };
        }
        cx.push(f);
    }
}

/// The raw text of the field an error is about.
fn field_text(cx: &Cx<'_>, event: u32, field: &str) -> Option<String> {
    use crate::trace::event::Body;
    let ev = cx.log.events.load(event as usize)?;
    match (&ev.body, field) {
        (Body::Announce(a), "formula") => Some(a.formula.to_string()),
        (Body::Query(q), "formula") => Some(q.formula.to_string()),
        (Body::Answer(a), "formula") => a.formula.as_ref().map(|f| f.to_string()),
        (Body::Verify(v), "formula") => {
            let fs: Vec<&str> = v.all_formulas().collect();
            // The first one that does not parse is the one the error is about.
            fs.iter()
                .find(|f| crate::logic::parse::parse(f).is_err())
                .map(|s| s.to_string())
        }
        (Body::Retract(r), "target") => Some(r.target.to_string()),
        (Body::Revise(r), "trigger") => r.trigger.as_ref().map(|t| t.to_string()),
        _ => None,
    }
}

/// Reader problems, as findings of the session their file carries (the first one read from
/// it; a line that is not JSON cannot name its session), or of the file itself.
pub(super) fn reader_problems(model: &Model) -> Vec<Finding> {
    let log = model.log();
    let mut out = Vec::new();
    for p in &log.problems {
        let file = &*p.origin.file;
        let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
        let session = model
            .timelines()
            .iter()
            .find(|t| t.name() == base)
            .or_else(|| {
                model.timelines().iter().find(|t| {
                    t.event_positions()
                        .first()
                        .and_then(|&e| log.events.origin(e as usize))
                        .is_some_and(|o| &*o.file == file)
                })
            })
            .map_or_else(|| base.to_string(), |t| t.name().to_string());
        let severity = match p.severity {
            ReaderSeverity::Error => Severity::Error,
            ReaderSeverity::Warning => Severity::Info,
        };
        let what = match p.severity {
            ReaderSeverity::Error => "could not be read",
            ReaderSeverity::Warning => "was kept with a problem",
        };
        let mut evidence = serde_json::Map::new();
        evidence.insert("reader_code".into(), json!(format!("{:?}", p.code)));
        if let Some(field) = &p.field {
            evidence.insert("field".into(), json!(field));
        }
        out.push(Finding {
            code: Code::ParseError,
            severity,
            session,
            step: None,
            seq: None,
            message: crate::sanitize::sanitize(&format!(
                "Line {} {what}: {}.",
                p.origin.line,
                p.message.trim_end_matches('.')
            )),
            location: Some(Location {
                file: file.to_string(),
                line: p.origin.line,
                column: Some(p.column),
            }),
            ids: Vec::new(),
            formulas: Vec::new(),
            evidence,
        });
    }
    out
}
