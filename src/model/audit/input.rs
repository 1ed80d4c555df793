//! `parse-error` and `unresolved-reference`: what the reader and the replay could not use;
//! `mixed-script-atom`: atoms that read like another name.
//!
//! Reader problems (a line that is not JSON, a field of the wrong type) come with
//! file:line:column from the reader. Formula parse errors come from the replay's per-event
//! errors, with the column inside the formula text. Reader warnings (a line kept despite,
//! say, a timestamp going backwards) are `info`: `validate` is the tool for them, and they do
//! not make the audit fail.

use serde_json::json;

use super::{Code, Cx, Finding, Location, Report, Severity};
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

/// Atoms whose letters mix scripts ([`crate::sanitize::mixed_script`]), once per atom and
/// session, at the first event whose formula uses it. Only formulas with non-ASCII text are
/// parsed again (a look-alike needs a letter outside ASCII); those that do not parse are
/// `parse-error`s already.
pub(super) fn mixed_scripts(cx: &mut Cx<'_>) {
    use crate::logic::formula::{Atom, Term};
    use crate::trace::event::Body;
    let mut seen = std::collections::HashSet::new();
    let mut found = Vec::new();
    for (k, &pos) in cx.tl.event_positions().iter().enumerate() {
        let Some(ev) = cx.log.events.get(pos as usize) else {
            continue;
        };
        let formulas: Vec<&str> = match &ev.body {
            Body::Announce(a) => vec![&a.formula],
            Body::Query(q) => vec![&q.formula],
            Body::Verify(v) => v.all_formulas().collect(),
            _ => continue,
        };
        for text in formulas.into_iter().filter(|f| !f.is_ascii()) {
            let Ok(f) = crate::logic::parse::parse(text) else {
                continue;
            };
            let mut atoms = Vec::new();
            crate::logic::cnf::atoms_of(&f, &mut atoms);
            for a in &atoms {
                let names: Vec<&str> = match a {
                    Atom::Prop(s) | Atom::Quoted(s) => vec![s],
                    Atom::Pred(p, args) => std::iter::once(p.as_str())
                        .chain(args.iter().filter_map(|t| match t {
                            Term::Const(c) => Some(c.as_str()),
                            Term::Var(_) => None,
                        }))
                        .collect(),
                };
                for name in names {
                    if crate::sanitize::mixed_script(name) && seen.insert(name.to_string()) {
                        found.push((k as u32 + 1, pos, name.to_string(), text.to_string()));
                    }
                }
            }
        }
    }
    for (step, pos, name, formula) in found {
        let runs = crate::sanitize::script_runs(&name);
        let parts: Vec<String> = runs
            .iter()
            .map(|(script, run)| format!("{script} \"{}\"", crate::sanitize::sanitize(run)))
            .collect();
        let message = format!(
            "Atom \"{}\" mixes scripts ({}): it renders like a name in one script but is a \
             different atom.",
            crate::sanitize::sanitize(&name),
            parts.join(", ")
        );
        let scripts: Vec<&str> = runs.iter().map(|(s, _)| *s).collect();
        let f = cx
            .finding(Code::MixedScriptAtom, step, pos, message)
            .formulas([formula])
            .with("atom", &name)
            .with("scripts", scripts);
        cx.push(f);
    }
}

/// The raw text of the field an error is about.
fn field_text(cx: &Cx<'_>, event: u32, field: &str) -> Option<String> {
    use crate::trace::event::Body;
    let ev = cx.log.events.get(event as usize)?;
    match (&ev.body, field) {
        (Body::Announce(a), "formula") => Some(a.formula.to_string()),
        (Body::Query(q), "formula") => Some(q.formula.to_string()),
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
pub(super) fn reader_problems(model: &Model, report: &mut Report) {
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
                        .and_then(|&e| log.events.get(e as usize))
                        .is_some_and(|e| &*e.origin.file == file)
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
    // Reader problems come first: they say what the rest of the audit could not see.
    out.append(&mut report.findings);
    report.findings = out;
}
