//! A report that can be re-checked (`doxascope report`, `doxascope verify-report`).
//!
//! Every report carries a *record* of what it was made from and what it found: the SHA-256
//! and size of each input file, doxascope's version, the options (policy, timeout), every
//! finding as (session, step, code) and every recomputed verdict as (session, step, event,
//! verdict). The record is shown as a table and embedded as JSON in the report's
//! `<pre id="doxascope-recheck">`, with `<`, `>` and `&` written as JSON escapes so that the
//! text is inert HTML and still the exact JSON.
//!
//! [`verify`] reads the record back, hashes the files it is given, recomputes the audit with
//! the recorded options, and says what differs: an input whose hash changed, a finding or a
//! verdict that appeared, disappeared or changed. A report *holds* when nothing does.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::logic::revise::Policy;
use crate::trace::sha256::file_sha256;

use super::Model;
use super::audit::{AuditOptions, Report};
use super::recompute::{RecomputeOptions, Recomputed};

/// The id of the `<pre>` holding the record.
pub const RECORD_ID: &str = "doxascope-recheck";

/// One finding's key: session, step (`-` for none), code.
type Key = (String, String, String);

/// The record of a report made from `files` with `opts`, of which `rep` is the audit and
/// `rcs` the recomputations.
pub fn record(files: &[String], opts: &AuditOptions, rep: &Report, rcs: &[Recomputed]) -> Value {
    let inputs: Vec<Value> = files
        .iter()
        .map(|f| {
            if f == "-" {
                return json!({"file": f, "sha256": null, "error": "standard input is not hashed"});
            }
            match file_sha256(Path::new(f)) {
                Ok((h, n)) => json!({"file": f, "sha256": h, "bytes": n}),
                Err(e) => json!({"file": f, "sha256": null, "error": e.to_string()}),
            }
        })
        .collect();
    json!({
        "doxascope": env!("CARGO_PKG_VERSION"),
        "inputs": inputs,
        "options": {
            "policy": opts.policy.map(Policy::as_str),
            "timeout_secs": opts.recompute.timeout.as_secs_f64(),
        },
        "findings": findings(rep).iter().map(|(s, t, c)| json!([s, t, c])).collect::<Vec<_>>(),
        "verdicts": verdicts(rcs).iter().map(|(k, v)| json!([k.0, k.1, k.2, v])).collect::<Vec<_>>(),
    })
}

fn findings(rep: &Report) -> Vec<Key> {
    let mut out: Vec<Key> = rep
        .findings
        .iter()
        .map(|f| {
            (
                f.session.clone(),
                f.step.map_or_else(|| "-".to_string(), |s| s.to_string()),
                f.code.as_str().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Every recomputed verdict, keyed by (session, step, event kind).
fn verdicts(rcs: &[Recomputed]) -> BTreeMap<Key, String> {
    let mut out = BTreeMap::new();
    let unknown = |e: &super::recompute::Unknown| format!("not-checkable ({})", e.cause());
    for rc in rcs {
        let key = |step: u32, kind: &str| (rc.session.clone(), step.to_string(), kind.to_string());
        for v in &rc.verifies {
            let s = v
                .result
                .as_ref()
                .map_or_else(unknown, |g| g.outcome.as_str().to_string());
            out.insert(key(v.step, "verify"), s);
        }
        for q in &rc.queries {
            let s = q
                .result
                .as_ref()
                .map_or_else(unknown, |e| e.as_str().to_string());
            out.insert(key(q.step, "query"), s);
        }
        for a in &rc.answers {
            let s = a
                .result
                .as_ref()
                .map_or_else(unknown, |e| e.as_str().to_string());
            out.insert(key(a.step, "answer"), s);
        }
    }
    out
}

/// The JSON of the record as inert HTML text: the characters HTML would read as markup are
/// JSON escapes (they can only occur inside strings).
fn inert_json(v: &Value) -> String {
    let text = serde_json::to_string(v).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

/// The report's section showing the record: inputs with their SHA-256, version, options,
/// how to re-check, and the record itself.
pub fn section(record: &Value, esc: impl Fn(&str) -> String) -> String {
    let mut out = String::from(
        r#"<section id="recheck"><h2>Re-check this report</h2><p>Made from these inputs by doxascope "#,
    );
    let _ = write!(
        out,
        "{} with policy <code>{}</code> and a solver timeout of {} s. \
         <code>doxascope verify-report REPORT.html FILE…</code> hashes the files, recomputes \
         the audit and says whether every finding and verdict below still holds.</p>",
        esc(record["doxascope"].as_str().unwrap_or("?")),
        esc(record["options"]["policy"]
            .as_str()
            .unwrap_or("as each revise names")),
        record["options"]["timeout_secs"]
    );
    out.push_str("<table><tr><th>input</th><th>SHA-256</th><th>bytes</th></tr>");
    for i in record["inputs"].as_array().into_iter().flatten() {
        let hash = match i["sha256"].as_str() {
            Some(h) => format!("<code>{h}</code>"),
            None => esc(i["error"].as_str().unwrap_or("not hashed")),
        };
        let _ = write!(
            out,
            r#"<tr><td class="f">{}</td><td>{hash}</td><td class="n">{}</td></tr>"#,
            esc(i["file"].as_str().unwrap_or("")),
            i["bytes"]
                .as_u64()
                .map(|n| n.to_string())
                .unwrap_or_default()
        );
    }
    let _ = write!(
        out,
        r#"</table><details><summary>the record (JSON: {} findings, {} verdicts)</summary><pre class="f" id="{RECORD_ID}">{}</pre></details></section>"#,
        record["findings"].as_array().map_or(0, Vec::len),
        record["verdicts"].as_array().map_or(0, Vec::len),
        inert_json(record)
    );
    out
}

/// The record embedded in a report's HTML.
pub fn extract(html: &str) -> Result<Value, String> {
    let open = format!(r#"id="{RECORD_ID}">"#);
    let start = html
        .find(&open)
        .ok_or("the report holds no re-check record (made by an older doxascope?)")?
        + open.len();
    let end = html[start..]
        .find("</pre>")
        .ok_or("the report's re-check record is cut short")?;
    serde_json::from_str(&html[start..start + end])
        .map_err(|e| format!("the report's re-check record is not valid JSON: {e}"))
}

/// The outcome of [`verify`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verification {
    /// Whether the report still holds.
    pub holds: bool,
    /// What differs, one sentence each (empty when it holds).
    pub differences: Vec<String>,
    /// Remarks that do not decide (another doxascope version).
    pub notes: Vec<String>,
}

/// At most this many differences of one kind are named; the rest are counted.
const SHOWN: usize = 20;

/// Re-checks a report against `files` (paths as given): see the module docs. `Err` when the
/// report has no record or the files cannot be read at all.
pub fn verify(html: &str, files: &[String]) -> Result<Verification, String> {
    let rec = extract(html)?;
    let mut v = Verification::default();
    let version = rec["doxascope"].as_str().unwrap_or("?");
    if version != env!("CARGO_PKG_VERSION") {
        v.notes.push(format!(
            "the report was made by doxascope {version}, this is {}",
            env!("CARGO_PKG_VERSION")
        ));
    }
    compare_inputs(&rec, files, &mut v.differences);
    let model = Model::load(files).map_err(|e| e.to_string())?;
    let opts = options(&rec)?;
    let rcs: Vec<Recomputed> = model
        .timelines()
        .iter()
        .filter_map(|tl| model.recompute(tl.name(), &opts.recompute))
        .collect();
    let rep = super::audit::audit_recomputed(&model, &rcs, &opts);
    compare_findings(&rec, &findings(&rep), &mut v.differences);
    compare_verdicts(&rec, &verdicts(&rcs), &mut v.differences);
    v.holds = v.differences.is_empty();
    Ok(v)
}

/// The audit options the record names.
fn options(rec: &Value) -> Result<AuditOptions, String> {
    let o = &rec["options"];
    let policy = match o["policy"].as_str() {
        None => None,
        Some(p) => Some(Policy::parse(p).ok_or(format!("the record names an unknown policy {p}"))?),
    };
    let secs = o["timeout_secs"]
        .as_f64()
        .filter(|s| s.is_finite() && *s > 0.0)
        .ok_or("the record has no valid timeout")?;
    Ok(AuditOptions {
        policy,
        recompute: RecomputeOptions {
            timeout: std::time::Duration::from_secs_f64(secs.min(86_400.0)),
            ..RecomputeOptions::default()
        },
        ..AuditOptions::default()
    })
}

fn compare_inputs(rec: &Value, files: &[String], out: &mut Vec<String>) {
    let inputs = rec["inputs"].as_array().cloned().unwrap_or_default();
    if inputs.len() != files.len() {
        out.push(format!(
            "the report was made from {} input file(s), {} given",
            inputs.len(),
            files.len()
        ));
    }
    for (i, (input, file)) in inputs.iter().zip(files).enumerate() {
        let Some(want) = input["sha256"].as_str() else {
            out.push(format!(
                "input {} ({}) has no hash in the report: it cannot be re-checked",
                i + 1,
                input["file"].as_str().unwrap_or("?")
            ));
            continue;
        };
        match file_sha256(Path::new(file)) {
            Ok((got, _)) if got == want => {}
            Ok((got, _)) => out.push(format!(
                "input {} ({file}) changed: SHA-256 {got}, the report has {want} (for {})",
                i + 1,
                input["file"].as_str().unwrap_or("?")
            )),
            Err(e) => out.push(format!("input {} ({file}) cannot be read: {e}", i + 1)),
        }
    }
}

fn key_of(v: &Value) -> Option<Key> {
    let a = v.as_array()?;
    Some((
        a.first()?.as_str()?.to_string(),
        a.get(1)?.as_str()?.to_string(),
        a.get(2)?.as_str()?.to_string(),
    ))
}

/// Counts of each key.
fn multiset(keys: impl IntoIterator<Item = Key>) -> BTreeMap<Key, usize> {
    let mut m = BTreeMap::new();
    for k in keys {
        *m.entry(k).or_insert(0) += 1;
    }
    m
}

fn compare_findings(rec: &Value, now: &[Key], out: &mut Vec<String>) {
    let then = multiset(
        rec["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(key_of),
    );
    let now = multiset(now.iter().cloned());
    let mut lines = Vec::new();
    for (k, &n) in &then {
        let m = now.get(k).copied().unwrap_or(0);
        if m < n {
            lines.push(format!(
                "finding {} at step {} of session {} is in the report but not found now{}",
                k.2,
                k.1,
                k.0,
                times(n - m)
            ));
        }
    }
    for (k, &m) in &now {
        let n = then.get(k).copied().unwrap_or(0);
        if m > n {
            lines.push(format!(
                "finding {} at step {} of session {} is found now but not in the report{}",
                k.2,
                k.1,
                k.0,
                times(m - n)
            ));
        }
    }
    push_capped(out, lines, "finding");
}

fn times(n: usize) -> String {
    if n == 1 {
        String::new()
    } else {
        format!(" ({n} times)")
    }
}

fn compare_verdicts(rec: &Value, now: &BTreeMap<Key, String>, out: &mut Vec<String>) {
    let mut then: BTreeMap<Key, String> = BTreeMap::new();
    for v in rec["verdicts"].as_array().into_iter().flatten() {
        if let (Some(k), Some(s)) = (key_of(v), v.get(3).and_then(Value::as_str)) {
            then.insert(k, s.to_string());
        }
    }
    let mut lines = Vec::new();
    for (k, was) in &then {
        match now.get(k) {
            Some(is) if is == was => {}
            Some(is) => lines.push(format!(
                "the {} at step {} of session {}: the report says {was}, recomputed now {is}",
                k.2, k.1, k.0
            )),
            None => lines.push(format!(
                "the {} at step {} of session {} ({was} in the report) is not in the input now",
                k.2, k.1, k.0
            )),
        }
    }
    for (k, is) in now {
        if !then.contains_key(k) {
            lines.push(format!(
                "the {} at step {} of session {} ({is}) is not in the report",
                k.2, k.1, k.0
            ));
        }
    }
    push_capped(out, lines, "verdict");
}

fn push_capped(out: &mut Vec<String>, lines: Vec<String>, what: &str) {
    let n = lines.len();
    out.extend(lines.into_iter().take(SHOWN));
    if n > SHOWN {
        out.push(format!("… and {} more {what} difference(s)", n - SHOWN));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded JSON survives markup characters in file names and comes back exact.
    #[test]
    fn the_record_is_inert_and_exact() {
        let rec = json!({"doxascope": "0", "inputs": [{"file": "</pre><script>x&y", "sha256": "ab"}],
                         "options": {"policy": null, "timeout_secs": 10.0}, "findings": [], "verdicts": []});
        let html = section(&rec, |s| s.replace('<', "&lt;").replace('>', "&gt;"));
        assert!(!html.contains("<script>"));
        assert_eq!(extract(&html).unwrap(), rec);
    }

    #[test]
    fn differences_name_what_changed() {
        let rec = json!({"findings": [["s", "3", "parse-error"]], "verdicts": [["s", "4", "verify", "entailed"]]});
        let mut out = Vec::new();
        compare_findings(
            &rec,
            &[("s".into(), "5".into(), "parse-error".into())],
            &mut out,
        );
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[0].contains("step 3") && out[0].contains("not found now"));
        assert!(out[1].contains("step 5") && out[1].contains("not in the report"));
        let mut out = Vec::new();
        let now: BTreeMap<Key, String> = [(
            ("s".into(), "4".into(), "verify".into()),
            "newinfo".to_string(),
        )]
        .into();
        compare_verdicts(&rec, &now, &mut out);
        assert_eq!(out.len(), 1);
        assert!(
            out[0].contains("report says entailed, recomputed now newinfo"),
            "{out:?}"
        );
        let mut out = Vec::new();
        compare_verdicts(
            &rec,
            &[(
                ("s".into(), "4".into(), "verify".into()),
                "entailed".to_string(),
            )]
            .into(),
            &mut out,
        );
        assert!(out.is_empty());
    }
}
