//! The human-readable report: a headline, the findings grouped by code (most severe first)
//! under a summary line ("2 postconditions were self-reported as met but are not"), and the
//! gate confusion matrix.
//!
//! Messages are sanitized when findings are made; ids, formulas and file names come straight
//! from the trace and are sanitized here, at the point they are printed.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use super::{CLAIMED, Code, Finding, RECOMPUTED, Report, Severity};
use crate::sanitize::sanitize;

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn location(f: &Finding) -> String {
    match &f.location {
        Some(l) => match l.column {
            Some(c) => format!("{}:{}:{}", sanitize(&l.file), l.line, c),
            None => format!("{}:{}", sanitize(&l.file), l.line),
        },
        None => sanitize(&f.session),
    }
}

fn evidence_line(f: &Finding) -> Option<String> {
    let mut parts = Vec::new();
    if !f.ids.is_empty() {
        parts.push(format!("ids: {}", sanitize(&f.ids.join(", "))));
    }
    if !f.formulas.is_empty() {
        parts.push(format!("formulas: {}", sanitize(&f.formulas.join("; "))));
    }
    for key in [
        "conflict",
        "supports",
        "conflicts",
        "restorable",
        "unfinished",
    ] {
        if let Some(v) = f.evidence.get(key) {
            parts.push(format!("{key}: {}", sanitize(&compact(v))));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" | "))
}

fn compact(v: &Value) -> String {
    match v {
        Value::Array(xs) => {
            let inner: Vec<String> = xs.iter().map(compact).collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The report as text, as `doxascope audit` prints it without `--json`.
pub fn render_text(r: &Report) -> String {
    let mut s = String::new();
    let sessions: Vec<String> = r.sessions.iter().map(|x| sanitize(&x.name)).collect();
    let _ = writeln!(
        s,
        "doxascope audit: {}, {}, {} in {} ({})",
        plural(r.count(Severity::Error), "error", "errors"),
        plural(r.count(Severity::Warning), "warning", "warnings"),
        plural(r.count(Severity::Info), "note", "notes"),
        plural(sessions.len(), "session", "sessions"),
        sessions.join(", ")
    );
    // Groups: most severe finding first, then code order.
    let mut groups: BTreeMap<Code, Vec<&Finding>> = BTreeMap::new();
    for f in &r.findings {
        groups.entry(f.code).or_default().push(f);
    }
    let mut order: Vec<(Severity, Code)> = groups
        .iter()
        .map(|(c, fs)| {
            (
                fs.iter()
                    .map(|f| f.severity)
                    .max()
                    .unwrap_or(Severity::Info),
                *c,
            )
        })
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (sev, code) in order {
        let fs = &groups[&code];
        let _ = writeln!(s);
        // Counts are of findings; with several sessions, say how many of them the findings
        // are in (two oscillations of one session are not "2 sessions").
        let mut in_sessions: Vec<&str> = fs.iter().map(|f| f.session.as_str()).collect();
        in_sessions.sort_unstable();
        in_sessions.dedup();
        let spread = if r.sessions.len() > 1 && fs.len() > 1 {
            format!(" in {}", plural(in_sessions.len(), "session", "sessions"))
        } else {
            String::new()
        };
        let _ = writeln!(s, "{sev}: {}{spread} [{code}]", code.summary(fs.len()));
        for f in fs {
            let step = match (f.step, f.seq) {
                (Some(st), Some(q)) if u64::from(st) == q => format!("step {st}"),
                (Some(st), Some(q)) => format!("step {st} (seq {q})"),
                (Some(st), None) => format!("step {st}"),
                _ => String::new(),
            };
            let head = format!("  {} {} {}", f.severity, location(f), step);
            let _ = writeln!(s, "{}", head.trim_end());
            let _ = writeln!(s, "    {}", f.message);
            if let Some(e) = evidence_line(f) {
                let _ = writeln!(s, "    {e}");
            }
        }
    }
    if r.matrix.total() > 0 {
        let _ = writeln!(s);
        let unchecked = if r.not_checkable > 0 {
            format!(", {} not checkable", r.not_checkable)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "gate verdicts, claimed (rows) against recomputed (columns), {} recomputed of \
             {}{unchecked}:",
            r.recomputed, r.verifies
        );
        let _ = write!(s, "  {:<14}", "");
        for c in RECOMPUTED {
            let _ = write!(s, "{c:>14}");
        }
        let _ = writeln!(s);
        for (i, c) in CLAIMED.iter().enumerate() {
            let _ = write!(s, "  {c:<14}");
            for j in 0..RECOMPUTED.len() {
                let _ = write!(s, "{:>14}", r.matrix.counts[i][j]);
            }
            let _ = writeln!(s);
        }
    }
    if r.findings.is_empty() {
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "No findings: every claim that could be recomputed agrees."
        );
    }
    s
}
