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
    let mut s = SessionSpool::in_order(Form::Text);
    for f in &r.findings {
        s.push(f);
    }
    let mut spool = Spool::new(Form::Text);
    spool.append(s.finish());
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

/// The order findings are kept in: step, code, then `seq` (the report's order within a
/// session).
type Key = (Option<u32>, Code, Option<u64>);

/// How much rendered text a session's findings may hold uncompressed before it is sorted and
/// deflated as a run (see [`SessionSpool`]).
const SPILL: usize = 4 << 20;

/// A session's findings, rendered as they are made and deflated in sorted runs.
///
/// A session of a long trace renders hundreds of megabytes of findings (256 MB of JSON per
/// session of the 10-million-event trace), and its report order is only known once its last
/// check has run. Holding the text uncompressed until then made the checks of the sessions in
/// flight a large part of the audit's peak; now whenever [`SPILL`] bytes are waiting, each
/// stream's waiting findings are sorted (stably) and deflated as one run, keeping only their
/// keys and lengths. [`SessionSpool::finish`] merges the runs' keys (ties go to the earlier
/// run: a stable sort of everything) into the order [`Chunk::write`] follows, so each finding
/// is deflated once and inflated once, as before.
pub(super) struct SessionSpool {
    form: Form,
    /// Sorted by key (a session's audit), or kept in the order pushed ([`render_text`]).
    sorted: bool,
    /// The text form's findings per code (printed grouped by code); the JSON form's under
    /// `None`.
    streams: BTreeMap<Option<Code>, Stream>,
    /// Text bytes waiting in the streams.
    waiting: usize,
    spill: usize,
    sessions: BTreeMap<Code, BTreeSet<String>>,
    /// Per code: the most severe finding and how many there are.
    codes: BTreeMap<Code, (Severity, usize)>,
    by_severity: [usize; 3],
}

struct Entry {
    key: Key,
    text: Box<str>,
}

/// One stream's findings: deflated runs (each with its findings' keys, in run order) and
/// the findings waiting for the next run.
#[derive(Default)]
struct Stream {
    runs: Vec<(Vec<Key>, Run)>,
    waiting: Vec<Entry>,
}

impl SessionSpool {
    /// Findings of one session, printed in report order whatever order they come in.
    pub(super) fn new(form: Form) -> SessionSpool {
        SessionSpool {
            form,
            sorted: true,
            streams: BTreeMap::new(),
            waiting: 0,
            spill: SPILL,
            sessions: BTreeMap::new(),
            codes: BTreeMap::new(),
            by_severity: [0; 3],
        }
    }

    /// Findings already in report order (a whole report's), printed as pushed.
    fn in_order(form: Form) -> SessionSpool {
        SessionSpool {
            sorted: false,
            ..SessionSpool::new(form)
        }
    }

    pub(super) fn push(&mut self, f: &Finding) {
        let text = match self.form {
            Form::Text => finding_text(f),
            Form::Json => finding_json(f),
        };
        let stream = match self.form {
            Form::Text => Some(f.code),
            Form::Json => None,
        };
        self.waiting += text.len();
        self.streams.entry(stream).or_default().waiting.push(Entry {
            key: (f.step, f.code, f.seq),
            text: text.into_boxed_str(),
        });
        let names = self.sessions.entry(f.code).or_default();
        if !names.contains(&f.session) {
            names.insert(f.session.clone());
        }
        let c = self.codes.entry(f.code).or_insert((f.severity, 0));
        c.0 = c.0.max(f.severity);
        c.1 += 1;
        self.by_severity[f.severity as usize] += 1;
        if self.waiting > self.spill {
            self.spill_runs();
        }
    }

    /// Sorts (when sorted) and deflates every stream's waiting findings as a run.
    fn spill_runs(&mut self) {
        for s in self.streams.values_mut() {
            if s.waiting.is_empty() {
                continue;
            }
            let mut entries = std::mem::take(&mut s.waiting);
            if self.sorted {
                entries.sort_by_key(|e| e.key);
            }
            let run = Run::of(entries.iter().map(|e| &*e.text));
            s.runs.push((entries.iter().map(|e| e.key).collect(), run));
        }
        self.waiting = 0;
    }

    /// The session's findings in report order, grouped and deflated.
    pub(super) fn finish(mut self) -> Spool {
        self.spill_runs();
        let mut spool = Spool::new(self.form);
        spool.by_severity = self.by_severity;
        for (stream, s) in std::mem::take(&mut self.streams) {
            let order = if self.sorted {
                merge_order(s.runs.iter().map(|(keys, _)| &keys[..]))
            } else {
                None
            };
            let chunk = Chunk {
                runs: s.runs.into_iter().map(|(_, r)| r).collect(),
                order,
            };
            match stream {
                Some(code) => {
                    let (max, count) = self
                        .codes
                        .get(&code)
                        .copied()
                        .unwrap_or((Severity::Info, 0));
                    let group = Group {
                        max,
                        count,
                        sessions: self.sessions.remove(&code).unwrap_or_default(),
                        chunks: vec![chunk],
                    };
                    spool.groups.insert(code, group);
                }
                None => spool.json.push(chunk),
            }
        }
        if self.form == Form::Json {
            for (code, (max, count)) in self.codes {
                spool.groups.insert(
                    code,
                    Group {
                        max,
                        count,
                        sessions: self.sessions.remove(&code).unwrap_or_default(),
                        chunks: Vec::new(),
                    },
                );
            }
        }
        spool
    }
}

/// The order of a stable sort of every run's findings by key, as the run each next finding
/// comes from (each run already sorted): `None` when that is one run after the other.
fn merge_order<'a>(runs: impl Iterator<Item = &'a [Key]>) -> Option<Vec<u32>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let runs: Vec<&[Key]> = runs.collect();
    if runs.len() < 2 {
        return None;
    }
    let mut at = vec![0usize; runs.len()];
    let mut heap: BinaryHeap<Reverse<(Key, u32)>> = runs
        .iter()
        .enumerate()
        .filter_map(|(r, keys)| Some(Reverse((*keys.first()?, r as u32))))
        .collect();
    let mut order = Vec::with_capacity(runs.iter().map(|k| k.len()).sum());
    while let Some(Reverse((_, r))) = heap.pop() {
        order.push(r);
        let i = r as usize;
        at[i] += 1;
        if let Some(k) = runs[i].get(at[i]) {
            heap.push(Reverse((*k, r)));
        }
    }
    Some(order)
}

/// Rendered findings, deflated (or, should deflating fail, as they are), with each one's
/// length.
struct Run {
    deflated: bool,
    bytes: Vec<u8>,
    lens: Vec<u32>,
}

impl Run {
    fn of<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> Run {
        let lens = texts
            .clone()
            .map(|t| u32::try_from(t.len()).unwrap_or(u32::MAX))
            .collect();
        let mut enc = DeflateEncoder::new(Vec::new(), Compression::fast());
        let deflated = texts
            .clone()
            .try_for_each(|t| enc.write_all(t.as_bytes()))
            .and_then(|()| enc.finish());
        match deflated {
            Ok(bytes) => Run {
                deflated: true,
                bytes,
                lens,
            },
            Err(_) => Run {
                deflated: false,
                bytes: texts.collect::<String>().into_bytes(),
                lens,
            },
        }
    }

    fn reader(&self) -> Box<dyn io::Read + '_> {
        if self.deflated {
            Box::new(DeflateDecoder::new(&self.bytes[..]))
        } else {
            Box::new(&self.bytes[..])
        }
    }
}

/// Findings in report order: runs, one after the other or in the order of a merge.
struct Chunk {
    runs: Vec<Run>,
    /// For each finding in report order, the run it comes from (`None`: each run whole, in
    /// turn).
    order: Option<Vec<u32>>,
}

impl Chunk {
    fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let Some(order) = &self.order else {
            for r in &self.runs {
                io::copy(&mut r.reader(), out)?;
            }
            return Ok(());
        };
        let mut readers: Vec<_> = self.runs.iter().map(|r| (r.reader(), 0usize)).collect();
        for &r in order {
            let run = &self.runs[r as usize];
            let (reader, next) = &mut readers[r as usize];
            let len = run.lens.get(*next).copied().unwrap_or(0);
            *next += 1;
            io::copy(&mut io::Read::take(&mut **reader, u64::from(len)), out)?;
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::audit::{Matrix, SessionSummary};

    /// Findings with many equal keys, in a scrambled order, each with a message that says
    /// which it was.
    fn scrambled(n: usize, seed: u64) -> Vec<Finding> {
        let mut x = seed;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let codes = &Code::ALL[..5];
        (0..n)
            .map(|i| {
                let step = (next(8) > 0).then(|| next(40) as u32);
                Finding {
                    code: codes[next(codes.len() as u64) as usize],
                    severity: [Severity::Info, Severity::Warning, Severity::Error]
                        [next(3) as usize],
                    session: format!("s{}", next(2)),
                    step,
                    seq: step.map(|s| u64::from(s) + next(2)),
                    message: format!("Finding {i}."),
                    location: None,
                    ids: vec![format!("b{}", next(9))],
                    formulas: Vec::new(),
                    evidence: serde_json::Map::new(),
                }
            })
            .collect()
    }

    fn report(findings: Vec<Finding>) -> Report {
        Report {
            findings,
            matrix: Matrix::default(),
            sessions: vec![SessionSummary {
                name: "s0".into(),
                events: 40,
            }],
            verifies: 0,
            recomputed: 0,
            not_checkable: 0,
            policy: None,
        }
    }

    fn spooled(fs: &[Finding], form: Form, spill: usize) -> String {
        let mut s = SessionSpool::new(form);
        s.spill = spill;
        for f in fs {
            s.push(f);
        }
        let mut all = Spool::new(form);
        all.append(s.finish());
        let mut out = Vec::new();
        all.write(&report(Vec::new()), &mut out).expect("memory");
        String::from_utf8(out).expect("UTF-8")
    }

    /// A session's findings spilled in many sorted runs print as a stable sort of all of
    /// them by (step, code, seq) would: the JSON as serde_json pretty-prints the sorted
    /// report, the text as the same findings spooled without a spill (one run, no merge).
    /// Equal keys are frequent, so a merge that breaks ties by anything but the order the
    /// findings came in fails.
    #[test]
    fn spilled_runs_print_as_one_stable_sort() {
        for seed in [1, 7, 42] {
            let fs = scrambled(600, seed);
            let mut sorted = fs.clone();
            sorted.sort_by_key(|f| (f.step, f.code, f.seq));
            let want = serde_json::to_string_pretty(&report(sorted.clone()).to_json())
                .expect("JSON")
                + "\n";
            for spill in [0, 150, 1000, 7000] {
                assert_eq!(spooled(&fs, Form::Json, spill), want, "JSON, spill {spill}");
                assert_eq!(
                    spooled(&fs, Form::Text, spill),
                    spooled(&sorted, Form::Text, usize::MAX),
                    "text, spill {spill}"
                );
            }
        }
    }
}
