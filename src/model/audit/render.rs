//! The human-readable report: a headline, the findings grouped by code (most severe first)
//! under a summary line ("2 postconditions were self-reported as met but are not"), and the
//! gate confusion matrix.
//!
//! Messages are sanitized when findings are made; ids, formulas and file names come straight
//! from the trace and are sanitized here, at the point they are printed.
//!
//! Both forms are written from a [`Spool`]: each finding rendered once, grouped as printed,
//! and kept deflated until the totals the report starts with are known. The CLI fills it
//! session by session ([`super::audit_spooled`]), so a trace with millions of findings never
//! holds them as [`Finding`]s at once; [`render_text`] goes through the same code, so the two
//! cannot differ.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::{self, Write};

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
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
    let mut s = SessionSpool::new(Form::Text);
    for f in &r.findings {
        s.push(f);
    }
    let mut spool = Spool::new(Form::Text);
    spool.append(s.finish_in_order());
    let mut out = Vec::new();
    // Writing to memory cannot fail, and what is written is UTF-8 (text and decompressed
    // text).
    let _ = spool.write(r, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The output form a spooled audit is rendered for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// As [`render_text`].
    Text,
    /// As [`Report::to_json`], pretty-printed.
    Json,
}

/// One finding's lines under its group's header.
fn finding_text(f: &Finding) -> String {
    let mut s = String::new();
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
    s
}

/// One finding as an element of the pretty-printed `findings` array, with the separator
/// before it (`,` and the new line; the first element's `,` is dropped when written).
fn finding_json(f: &Finding) -> String {
    let pretty = serde_json::to_string_pretty(&f.to_json()).unwrap_or_default();
    let mut s = String::with_capacity(pretty.len() + pretty.len() / 8);
    s.push(',');
    // JSON strings hold no raw new line, so every line break is the formatter's and the
    // element reads as it would nested two levels deep.
    for line in pretty.split('\n') {
        s.push_str("\n    ");
        s.push_str(line);
    }
    s
}

/// A session's findings, rendered as they are made.
pub(super) struct SessionSpool {
    form: Form,
    entries: Vec<Entry>,
    sessions: BTreeMap<Code, BTreeSet<String>>,
}

struct Entry {
    key: (Option<u32>, Code, Option<u64>),
    severity: Severity,
    text: Box<str>,
}

impl SessionSpool {
    pub(super) fn new(form: Form) -> SessionSpool {
        SessionSpool {
            form,
            entries: Vec::new(),
            sessions: BTreeMap::new(),
        }
    }

    pub(super) fn push(&mut self, f: &Finding) {
        let text = match self.form {
            Form::Text => finding_text(f),
            Form::Json => finding_json(f),
        };
        self.entries.push(Entry {
            key: (f.step, f.code, f.seq),
            severity: f.severity,
            text: text.into_boxed_str(),
        });
        let names = self.sessions.entry(f.code).or_default();
        if !names.contains(&f.session) {
            names.insert(f.session.clone());
        }
    }

    /// The session's findings in report order (step, then code, then `seq`), grouped and
    /// deflated.
    pub(super) fn finish(mut self) -> Spool {
        self.entries.sort_by_key(|e| e.key);
        self.finish_in_order()
    }

    /// The findings in the order they were pushed, grouped and deflated.
    pub(super) fn finish_in_order(self) -> Spool {
        let mut spool = Spool::new(self.form);
        let mut by_code: BTreeMap<Code, Vec<&Entry>> = BTreeMap::new();
        for e in &self.entries {
            by_code.entry(e.key.1).or_default().push(e);
            spool.by_severity[e.severity as usize] += 1;
        }
        for (code, es) in by_code {
            let group = Group {
                max: es
                    .iter()
                    .map(|e| e.severity)
                    .max()
                    .unwrap_or(Severity::Info),
                count: es.len(),
                sessions: self.sessions.get(&code).cloned().unwrap_or_default(),
                chunks: match self.form {
                    Form::Text => vec![Chunk::of(es.iter().map(|e| &*e.text))],
                    Form::Json => Vec::new(),
                },
            };
            spool.groups.insert(code, group);
        }
        if self.form == Form::Json && !self.entries.is_empty() {
            spool
                .json
                .push(Chunk::of(self.entries.iter().map(|e| &*e.text)));
        }
        spool
    }
}

/// Rendered findings, deflated (or, should deflating fail, as they are).
struct Chunk {
    deflated: bool,
    bytes: Vec<u8>,
}

impl Chunk {
    fn of<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> Chunk {
        let mut enc = DeflateEncoder::new(Vec::new(), Compression::fast());
        let deflated = texts
            .clone()
            .try_for_each(|t| enc.write_all(t.as_bytes()))
            .and_then(|()| enc.finish());
        match deflated {
            Ok(bytes) => Chunk {
                deflated: true,
                bytes,
            },
            Err(_) => Chunk {
                deflated: false,
                bytes: texts.collect::<String>().into_bytes(),
            },
        }
    }

    fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.deflated {
            io::copy(&mut DeflateDecoder::new(&self.bytes[..]), out).map(drop)
        } else {
            out.write_all(&self.bytes)
        }
    }
}

/// The findings of one code, in report order.
struct Group {
    max: Severity,
    count: usize,
    sessions: BTreeSet<String>,
    chunks: Vec<Chunk>,
}

/// Findings rendered for one form, in report order, with what the report's header and
/// summary say about them.
pub(super) struct Spool {
    form: Form,
    groups: BTreeMap<Code, Group>,
    /// Findings per severity (as `Severity as usize`).
    by_severity: [usize; 3],
    /// `Form::Json`: the `findings` array's elements.
    json: Vec<Chunk>,
}

impl Spool {
    pub(super) fn new(form: Form) -> Spool {
        Spool {
            form,
            groups: BTreeMap::new(),
            by_severity: [0; 3],
            json: Vec::new(),
        }
    }

    /// Appends findings that come after these in the report.
    pub(super) fn append(&mut self, o: Spool) {
        for (code, g) in o.groups {
            match self.groups.get_mut(&code) {
                Some(mine) => {
                    mine.max = mine.max.max(g.max);
                    mine.count += g.count;
                    mine.sessions.extend(g.sessions);
                    mine.chunks.extend(g.chunks);
                }
                None => {
                    self.groups.insert(code, g);
                }
            }
        }
        for (n, m) in self.by_severity.iter_mut().zip(o.by_severity) {
            *n += m;
        }
        self.json.extend(o.json);
    }

    pub(super) fn len(&self) -> usize {
        self.by_severity.iter().sum()
    }

    pub(super) fn failed(&self) -> bool {
        self.by_severity[Severity::Warning as usize] + self.by_severity[Severity::Error as usize]
            > 0
    }

    /// Writes the report, taking everything but the findings from `r`.
    pub(super) fn write(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        match self.form {
            Form::Text => self.write_text(r, out),
            Form::Json => self.write_json(r, out),
        }
    }

    fn write_json(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        let by_code: BTreeMap<Code, usize> =
            self.groups.iter().map(|(c, g)| (*c, g.count)).collect();
        let doc = serde_json::json!({
            "findings": [],
            "summary": r.summary_of(self.len(), &by_code, self.by_severity),
            "claimed_vs_recomputed": r.matrix.to_json(),
        });
        let doc = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
        const EMPTY: &str = "\"findings\": []";
        match doc.find(EMPTY).filter(|_| !self.json.is_empty()) {
            Some(at) => {
                out.write_all(&doc.as_bytes()[..at])?;
                out.write_all(b"\"findings\": [")?;
                // The first element's separator is a new line alone.
                let mut skip = SkipFirst { out, skip: 1 };
                for c in &self.json {
                    c.write(&mut skip)?;
                }
                out.write_all(b"\n  ]")?;
                out.write_all(&doc.as_bytes()[at + EMPTY.len()..])?;
            }
            None => out.write_all(doc.as_bytes())?,
        }
        out.write_all(b"\n")
    }

    fn write_text(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        let count = |s: Severity| self.by_severity[s as usize];
        let sessions: Vec<String> = r.sessions.iter().map(|x| sanitize(&x.name)).collect();
        writeln!(
            out,
            "doxascope audit: {}, {}, {} in {} ({})",
            plural(count(Severity::Error), "error", "errors"),
            plural(count(Severity::Warning), "warning", "warnings"),
            plural(count(Severity::Info), "note", "notes"),
            plural(sessions.len(), "session", "sessions"),
            sessions.join(", ")
        )?;
        // Groups: most severe finding first, then code order.
        let mut order: Vec<(Severity, Code)> =
            self.groups.iter().map(|(c, g)| (g.max, *c)).collect();
        order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (sev, code) in order {
            let g = &self.groups[&code];
            writeln!(out)?;
            // Counts are of findings; with several sessions, say how many of them the findings
            // are in (two oscillations of one session are not "2 sessions").
            let spread = if r.sessions.len() > 1 && g.count > 1 {
                format!(" in {}", plural(g.sessions.len(), "session", "sessions"))
            } else {
                String::new()
            };
            writeln!(out, "{sev}: {}{spread} [{code}]", code.summary(g.count))?;
            for c in &g.chunks {
                c.write(out)?;
            }
        }
        let mut s = String::new();
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
        if self.len() == 0 {
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "No findings: every claim that could be recomputed agrees."
            );
        }
        out.write_all(s.as_bytes())
    }
}

/// A writer that drops the first `skip` bytes written to it.
struct SkipFirst<'a> {
    out: &'a mut dyn Write,
    skip: usize,
}

impl Write for SkipFirst<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let drop = self.skip.min(buf.len());
        self.skip -= drop;
        self.out.write_all(&buf[drop..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
