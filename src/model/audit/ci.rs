//! The audit for CI: SARIF 2.1.0 (code scanning), JUnit XML (test reports), and a baseline
//! so a pipeline fails only on findings it has not seen before.
//!
//! **SARIF**: one run whose `tool.driver.rules` lists every finding code (its `id` the code,
//! its default level from the code's severity), and one result per finding: `ruleId` the
//! code, `level` from the finding's severity (`error`, `warning`, `note` for info), the
//! message, a `physicalLocation` with the trace file and the event's line (`region.startLine`,
//! and `startColumn` when the finding has one; columns count characters, hence
//! `columnKind: unicodeCodePoints`), the session as a logical location, and a
//! `partialFingerprints` entry (below). Everything else a finding carries (step, seq, ids,
//! formulas, evidence) is in the result's `properties`.
//!
//! **JUnit**: one `testcase` per finding code, in code order, so passing checks are listed
//! too. A code with findings of severity warning or error (new ones, under a baseline) is a
//! `failure` whose text lists them; info findings and findings the baseline already had are
//! the test case's `system-out`.
//!
//! **Baseline**: a previous `audit --json` or `audit --format sarif` output. A finding is
//! matched by its fingerprint: the SHA-256 of its code, session, the `seq` of its event and
//! the ids and formulas it names. None of these depend on the line a trace's event is on, so
//! a trace re-generated with events added before (or a file renamed) keeps its findings'
//! identities, while a finding on another event, or about other beliefs, is new. Matching
//! counts: a baseline with one instance of a fingerprint absorbs one finding of it.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::{Code, Finding, Report, Severity};
use crate::sanitize::sanitize;
use crate::trace::sha256::sha256_hex;

/// The key of the fingerprint in a SARIF result's `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "doxascopeFinding/v1";

/// The SARIF level of a severity.
pub fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The identity of a finding across re-runs (see the module docs), from its parts.
fn fingerprint_of(
    code: &str,
    session: &str,
    seq: Option<u64>,
    ids: &[&str],
    fs: &[&str],
) -> String {
    // Unit and record separators keep the parts apart whatever they hold.
    let mut s = String::from("v1");
    for part in [
        code,
        session,
        &seq.map_or_else(String::new, |q| q.to_string()),
    ] {
        s.push('\u{1e}');
        s.push_str(part);
    }
    for list in [ids, fs] {
        s.push('\u{1e}');
        for x in list {
            s.push_str(x);
            s.push('\u{1f}');
        }
    }
    sha256_hex(s.as_bytes())
}

/// A finding's fingerprint (see the module docs).
pub fn fingerprint(f: &Finding) -> String {
    let ids: Vec<&str> = f.ids.iter().map(String::as_str).collect();
    let fs: Vec<&str> = f.formulas.iter().map(String::as_str).collect();
    fingerprint_of(f.code.as_str(), &f.session, f.seq, &ids, &fs)
}

/// The fingerprint of a finding as JSON (an element of `audit --json`'s `findings`, or the
/// `properties` of a SARIF result with its `ruleId` as `code`).
fn fingerprint_json(code: &str, v: &Value) -> Option<String> {
    let strs = |k: &str| -> Vec<&str> {
        v.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let session = v.get("session")?.as_str()?;
    let seq = v.get("seq").and_then(Value::as_u64);
    Some(fingerprint_of(
        code,
        session,
        seq,
        &strs("ids"),
        &strs("formulas"),
    ))
}

/// The findings of a previous audit, by fingerprint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    counts: HashMap<String, usize>,
}

impl Baseline {
    /// Reads a previous `audit --json` or `audit --format sarif` document.
    pub fn parse(text: &str) -> Result<Baseline, String> {
        let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let mut counts: HashMap<String, usize> = HashMap::new();
        let mut add = |fp: String| *counts.entry(fp).or_default() += 1;
        if let Some(runs) = doc.get("runs").and_then(Value::as_array) {
            for r in runs.iter().filter_map(|r| r.get("results")?.as_array()) {
                for res in r {
                    let given = res
                        .get("partialFingerprints")
                        .and_then(|p| p.get(FINGERPRINT_KEY))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    let computed = || {
                        let code = res.get("ruleId")?.as_str()?;
                        fingerprint_json(code, res.get("properties")?)
                    };
                    match given.or_else(computed) {
                        Some(fp) => add(fp),
                        None => return Err("a SARIF result without a doxascope fingerprint".into()),
                    }
                }
            }
        } else if let Some(fs) = doc.get("findings").and_then(Value::as_array) {
            for f in fs {
                let fp = f
                    .get("code")
                    .and_then(Value::as_str)
                    .and_then(|c| fingerprint_json(c, f));
                match fp {
                    Some(fp) => add(fp),
                    None => return Err("a finding without code or session".into()),
                }
            }
        } else {
            return Err("neither `audit --json` output (findings) nor SARIF (runs)".into());
        }
        Ok(Baseline { counts })
    }

    /// Per finding, whether it is new: not absorbed by an instance of its fingerprint in the
    /// baseline (each instance absorbs one finding, in order).
    pub fn new_findings(&self, findings: &[Finding]) -> Vec<bool> {
        let mut left = self.counts.clone();
        findings
            .iter()
            .map(|f| match left.get_mut(&fingerprint(f)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            })
            .collect()
    }

    /// How many findings the baseline holds.
    pub fn len(&self) -> usize {
        self.counts.values().sum()
    }

    /// Whether the baseline holds no finding.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file name as a SARIF URI reference: relative paths stay relative, absolute ones become
/// `file://` URIs, and every byte outside the unreserved set and `/` is percent-encoded.
pub fn uri_of(file: &str) -> String {
    let mut out = String::new();
    if file.starts_with('/') {
        out.push_str("file://");
    }
    for b in file.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn rule(code: Code) -> Value {
    let (one, _) = code.fragments();
    let mut text: String = one.chars().take(1).flat_map(char::to_uppercase).collect();
    text.push_str(&one[one.chars().next().map_or(0, char::len_utf8)..]);
    text.push('.');
    json!({
        "id": code.as_str(),
        "shortDescription": {"text": text},
        "defaultConfiguration": {"level": sarif_level(code.default_severity())},
        "properties": {"severity": code.default_severity().as_str()},
    })
}

fn result(f: &Finding, rule_index: usize, new: Option<bool>) -> Value {
    let mut r = Map::new();
    r.insert("ruleId".into(), json!(f.code.as_str()));
    r.insert("ruleIndex".into(), json!(rule_index));
    r.insert("level".into(), json!(sarif_level(f.severity)));
    r.insert("message".into(), json!({"text": f.message}));
    let mut loc = Map::new();
    if let Some(l) = &f.location {
        let mut region = json!({"startLine": l.line.max(1)});
        if let Some(c) = l.column {
            region["startColumn"] = json!(c.max(1));
        }
        loc.insert(
            "physicalLocation".into(),
            json!({"artifactLocation": {"uri": uri_of(&l.file)}, "region": region}),
        );
    }
    loc.insert(
        "logicalLocations".into(),
        json!([{"name": f.session, "kind": "module"}]),
    );
    r.insert("locations".into(), json!([Value::Object(loc)]));
    r.insert(
        "partialFingerprints".into(),
        json!({FINGERPRINT_KEY: fingerprint(f)}),
    );
    if let Some(new) = new {
        r.insert(
            "baselineState".into(),
            json!(if new { "new" } else { "unchanged" }),
        );
    }
    r.insert(
        "properties".into(),
        json!({
            "session": f.session,
            "step": f.step,
            "seq": f.seq,
            "ids": f.ids,
            "formulas": f.formulas,
            "evidence": Value::Object(f.evidence.clone()),
        }),
    );
    Value::Object(r)
}

/// The report as a SARIF 2.1.0 log; `new` (from [`Baseline::new_findings`]) sets each
/// result's `baselineState`.
pub fn to_sarif(r: &Report, new: Option<&[bool]>) -> Value {
    let rules: Vec<Value> = Code::ALL.iter().map(|&c| rule(c)).collect();
    let index: HashMap<Code, usize> = Code::ALL.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let results: Vec<Value> = r
        .findings
        .iter()
        .enumerate()
        .map(|(i, f)| result(f, index[&f.code], new.and_then(|n| n.get(i).copied())))
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "doxascope",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// Text for an XML attribute or element: sanitized for a terminal's eyes already, escaped,
/// and without the characters XML 1.0 forbids.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

fn junit_line(f: &Finding) -> String {
    let at = match &f.location {
        Some(l) => format!("{}:{}", sanitize(&l.file), l.line),
        None => sanitize(&f.session),
    };
    let step = f.step.map_or_else(String::new, |s| format!(" step {s}"));
    format!("{} {at}{step}: {}\n", f.severity, f.message)
}

/// The report as JUnit XML: one test case per finding code (see the module docs).
pub fn to_junit(r: &Report, new: Option<&[bool]>) -> String {
    let mut by_code: HashMap<Code, Vec<(usize, &Finding)>> = HashMap::new();
    for (i, f) in r.findings.iter().enumerate() {
        by_code.entry(f.code).or_default().push((i, f));
    }
    let is_new = |i: usize| new.is_none_or(|n| n.get(i).copied().unwrap_or(true));
    let mut cases = String::new();
    let mut failures = 0;
    for &code in Code::ALL {
        let fs = by_code.remove(&code).unwrap_or_default();
        let (failing, other): (Vec<_>, Vec<_>) = fs
            .iter()
            .partition(|(i, f)| f.severity >= Severity::Warning && is_new(*i));
        let _ = write!(
            cases,
            "    <testcase classname=\"doxascope.audit\" name=\"{}\"",
            code.as_str()
        );
        if failing.is_empty() && other.is_empty() {
            cases.push_str("/>\n");
            continue;
        }
        cases.push_str(">\n");
        if !failing.is_empty() {
            failures += 1;
            let worst = failing
                .iter()
                .map(|(_, f)| f.severity)
                .max()
                .unwrap_or(Severity::Warning);
            let text: String = failing.iter().map(|(_, f)| junit_line(f)).collect();
            let _ = writeln!(
                cases,
                "      <failure type=\"{worst}\" message=\"{}\">{}</failure>",
                xml(&code.summary(failing.len())),
                xml(&text)
            );
        }
        if !other.is_empty() {
            let text: String = other
                .iter()
                .map(|(i, f)| {
                    let known = if is_new(*i) { "" } else { "(in the baseline) " };
                    format!("{known}{}", junit_line(f))
                })
                .collect();
            let _ = writeln!(cases, "      <system-out>{}</system-out>", xml(&text));
        }
        cases.push_str("    </testcase>\n");
    }
    let tests = Code::ALL.len();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"doxascope audit\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">"
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"doxascope audit\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">"
    );
    out.push_str(&cases);
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
