//! The report to hand on: one self-contained HTML file (`doxascope report FILE -o
//! report.html`).
//!
//! It holds the run's summary, the claimed-vs-recomputed table, and per session a chart of Σ's
//! size, the verdicts, the retractions, Σ's inconsistent stretches and the findings over the
//! steps (inline SVG), every finding with its evidence and Σ at its step, the retraction
//! history, and the bookmarks and notes kept beside the trace; and, to re-check it, the
//! SHA-256 of each input, the version and the options, with every finding and verdict
//! ([`super::recheck`], `doxascope verify-report`).
//!
//! **Self-contained and inert.** Nothing is loaded from elsewhere (no scripts, fonts, styles or
//! images from the network), and the page's Content-Security-Policy forbids scripts and every
//! other source outright, so even a string that slipped through could not run. Every string
//! that comes from a trace or a notes file goes through [`crate::sanitize`] (control and format
//! characters made visible) and is then HTML-escaped ([`esc`]), in text and in attributes alike.
//! The test in `tests/report_browser.rs` loads a report of a hostile trace in headless Chromium
//! and checks that its `<script>` stayed text.
//!
//! **Bounded.** Charts have at most [`CHART_WIDTH`] columns whatever the length of the run (a
//! column stands for several steps on long runs: the largest Σ, the worst verdict); a Σ listed
//! under a finding shows [`MAX_SIGMA_ROWS`] beliefs, those the finding names first, and says how
//! many more there are, and the first [`MAX_SIGMA_FINDINGS`] findings of a session list their Σ.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::sanitize::sanitize;
use crate::trace::event::Body;
use crate::trace::notes::{Note, NoteStore};

use super::Model;
use super::audit::{self, AuditOptions, Finding, Report, Severity};
use super::recompute::Recomputed;
use super::timeline::Timeline;

/// Chart columns (pixels of the plot area).
pub const CHART_WIDTH: usize = 880;

/// Beliefs listed for the Σ under a finding (those the finding names first).
pub const MAX_SIGMA_ROWS: usize = 60;

/// Findings per session shown with their Σ (every finding is listed with its evidence; past
/// this many, a session's later findings name their step without listing Σ, which keeps the
/// report of a long, broken run readable and its size in megabytes rather than gigabytes).
pub const MAX_SIGMA_FINDINGS: usize = 200;

/// The chart's colours, shared with the legend (and with the browser test, which looks for
/// them in a screenshot).
pub mod colour {
    /// Σ's size.
    pub const SIGMA: &str = "#4e79a7";
    /// A verdict the recomputation agrees with.
    pub const AGREE: &str = "#59a14f";
    /// A verdict the recomputation disputes.
    pub const DISAGREE: &str = "#e15759";
    /// A verdict that was not checkable within the budget.
    pub const UNCHECKED: &str = "#f28e2b";
    /// A retraction.
    pub const RETRACT: &str = "#b07aa1";
    /// Σ inconsistent.
    pub const INCONSISTENT: &str = "#9c2f2f";
    /// A finding of severity error.
    pub const ERROR: &str = "#d62728";
    /// A finding of severity warning.
    pub const WARNING: &str = "#edc948";
    /// A finding of severity info.
    pub const INFO: &str = "#76b7b2";
}

/// HTML-escapes a string that came from a trace, after making its control and format
/// characters visible: safe in text and in double- or single-quoted attributes.
pub fn esc(s: &str) -> String {
    let s = sanitize(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1000px;padding:16px 24px;color:#222;background:#fff}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:28px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}th{background:#f3f3f3}
td.n{text-align:right;font-variant-numeric:tabular-nums}code,.f{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
.finding{border-left:4px solid #999;padding:4px 10px;margin:8px 0;background:#fafafa}
.sev-error{border-color:#d62728}.sev-warning{border-color:#edc948}.sev-info{border-color:#76b7b2}
.sev{font-weight:600;text-transform:uppercase;font-size:11px}.muted{color:#666}
details{margin:4px 0}summary{cursor:pointer;color:#335}
.legend span{display:inline-block;margin-right:14px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}
svg{display:block;margin:6px 0}svg text{font:11px system-ui,sans-serif;fill:#444}
";

/// Per-step figures of one session for its chart.
struct Series {
    /// Σ's size after each step (index = step).
    size: Vec<u32>,
    /// Σ inconsistent after each step (as the recomputation found).
    inconsistent: Vec<bool>,
    /// Verdicts: (step, 0 agree / 1 not checkable / 2 disagree).
    verdicts: Vec<(u32, u8)>,
    /// Retraction steps.
    retracts: Vec<u32>,
    /// Findings: (step, severity).
    findings: Vec<(u32, Severity)>,
}

fn series(tl: &Timeline, rc: Option<&Recomputed>, findings: &[&Finding]) -> Series {
    let n = tl.len() as usize;
    let mut delta = vec![0i64; n + 2];
    for r in tl.beliefs() {
        delta[r.announced as usize] += 1;
        if let Some(x) = r.retraction {
            delta[x.step as usize] -= 1;
        }
    }
    let mut size = Vec::with_capacity(n + 1);
    let mut s = 0i64;
    for d in delta.iter().take(n + 1) {
        s += d;
        size.push(s.max(0) as u32);
    }
    // Consistency changes only at announcements and retractions.
    let mut at: BTreeMap<u32, bool> = BTreeMap::new();
    let mut verdicts = Vec::new();
    if let Some(rc) = rc {
        for a in &rc.announces {
            if let Ok(r) = &a.result {
                at.insert(a.step, !r.consistent_after);
            }
        }
        for r in &rc.retracts {
            if let Ok(c) = r.consistent {
                at.insert(r.step, !c);
            }
        }
        for v in &rc.verifies {
            let k = match (v.agrees(), &v.result) {
                (Some(true), _) => 0,
                (Some(false), _) => 2,
                (None, Err(e)) if e.not_checkable() => 1,
                _ => continue,
            };
            verdicts.push((v.step, k));
        }
        for q in &rc.queries {
            let k = match (q.agrees(), &q.result) {
                (Some(true), _) => 0,
                (Some(false), _) => 2,
                (None, Err(e)) if e.not_checkable() => 1,
                _ => continue,
            };
            verdicts.push((q.step, k));
        }
    }
    let mut inconsistent = vec![false; n + 1];
    let mut cur = false;
    for (t, slot) in inconsistent.iter_mut().enumerate() {
        if let Some(&b) = at.get(&(t as u32)) {
            cur = b;
        }
        *slot = cur;
    }
    Series {
        size,
        inconsistent,
        verdicts,
        retracts: tl.retracts().iter().map(|r| r.step).collect(),
        findings: findings
            .iter()
            .filter_map(|f| f.step.map(|s| (s, f.severity)))
            .collect(),
    }
}

/// The chart of one session: Σ's size (area), Σ inconsistent (band), verdicts, retractions
/// and findings (ticks), over the steps.
fn chart(out: &mut String, s: &Series, title: &str) {
    let n = s.size.len().saturating_sub(1).max(1);
    let cols = n.min(CHART_WIDTH);
    let per = n.div_ceil(cols);
    let col_w = CHART_WIDTH as f64 / n.div_ceil(per) as f64;
    let (left, top) = (80.0, 10.0);
    let (h_sigma, h_band, h_tick) = (110.0, 10.0, 16.0);
    let y_band = top + h_sigma + 6.0;
    let y_verd = y_band + h_band + 8.0;
    let y_retr = y_verd + h_tick + 6.0;
    let y_find = y_retr + h_tick + 6.0;
    let height = y_find + h_tick + 26.0;
    let width = left + CHART_WIDTH as f64 + 20.0;
    let col_of = |step: u32| ((step.max(1) as usize - 1) / per).min(n.div_ceil(per) - 1);
    let max = s.size.iter().copied().max().unwrap_or(0).max(1);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" role="img" aria-label="{}">"#,
        esc(title)
    );
    let _ = write!(
        out,
        r##"<rect x="{left}" y="{top}" width="{}" height="{h_sigma}" fill="#f7f7f7"/>"##,
        CHART_WIDTH
    );
    // Σ's size: one bar per column, its height the largest Σ in the column.
    let mut path = String::new();
    let cols_n = n.div_ceil(per);
    for c in 0..cols_n {
        let lo = c * per + 1;
        let hi = ((c + 1) * per).min(n);
        let v = s.size[lo.min(s.size.len() - 1)..=hi.min(s.size.len() - 1)]
            .iter()
            .copied()
            .max()
            .unwrap_or(0);
        if v == 0 {
            continue;
        }
        let h = f64::from(v) / f64::from(max) * h_sigma;
        let x = left + c as f64 * col_w;
        let _ = write!(
            path,
            "M{x:.2} {:.2}h{:.2}v{h:.2}h-{:.2}z",
            top + h_sigma - h,
            col_w.max(0.6),
            col_w.max(0.6)
        );
    }
    let _ = write!(out, r#"<path d="{path}" fill="{}"/>"#, colour::SIGMA);
    let _ = write!(
        out,
        r#"<text x="{:.0}" y="{:.0}" text-anchor="end">{max}</text><text x="{:.0}" y="{:.0}" text-anchor="end">0</text><text x="{:.0}" y="{:.0}" text-anchor="end">|Σ|</text>"#,
        left - 6.0,
        top + 10.0,
        left - 6.0,
        top + h_sigma,
        left - 6.0,
        top + h_sigma / 2.0 + 4.0
    );
    // Σ inconsistent: a band of columns.
    let mut band = String::new();
    for c in 0..cols_n {
        let lo = c * per + 1;
        let hi = ((c + 1) * per).min(n);
        if s.inconsistent[lo.min(n)..=hi.min(n)].iter().any(|&b| b) {
            let _ = write!(
                band,
                "M{:.2} {y_band}h{:.2}v{h_band}h-{:.2}z",
                left + c as f64 * col_w,
                col_w.max(0.6),
                col_w.max(0.6)
            );
        }
    }
    let _ = write!(
        out,
        r#"<path d="{band}" fill="{}"/><text x="{:.0}" y="{:.0}" text-anchor="end">⊥</text>"#,
        colour::INCONSISTENT,
        left - 6.0,
        y_band + 9.0
    );
    // Ticks: verdicts (the worst of a column), retractions, findings (the most severe).
    let ticks = |out: &mut String, y: f64, marks: &BTreeMap<usize, &str>, label: &str| {
        let mut by: BTreeMap<&str, String> = BTreeMap::new();
        for (&c, &col) in marks {
            let _ = write!(
                by.entry(col).or_default(),
                "M{:.2} {y}h{:.2}v{h_tick}h-{:.2}z",
                left + c as f64 * col_w,
                col_w.max(1.5),
                col_w.max(1.5)
            );
        }
        for (col, d) in by {
            let _ = write!(out, r#"<path d="{d}" fill="{col}"/>"#);
        }
        let _ = write!(
            out,
            r#"<text x="{:.0}" y="{:.0}" text-anchor="end">{label}</text>"#,
            left - 6.0,
            y + 12.0
        );
    };
    let mut vm: BTreeMap<usize, u8> = BTreeMap::new();
    for &(step, k) in &s.verdicts {
        let e = vm.entry(col_of(step)).or_insert(k);
        *e = (*e).max(k);
    }
    let vm: BTreeMap<usize, &str> = vm
        .into_iter()
        .map(|(c, k)| {
            (
                c,
                match k {
                    0 => colour::AGREE,
                    1 => colour::UNCHECKED,
                    _ => colour::DISAGREE,
                },
            )
        })
        .collect();
    ticks(out, y_verd, &vm, "verdicts");
    let rm: BTreeMap<usize, &str> = s
        .retracts
        .iter()
        .map(|&t| (col_of(t), colour::RETRACT))
        .collect();
    ticks(out, y_retr, &rm, "retractions");
    let mut fm: BTreeMap<usize, Severity> = BTreeMap::new();
    for &(step, sev) in &s.findings {
        let e = fm.entry(col_of(step)).or_insert(sev);
        if sev > *e {
            *e = sev;
        }
    }
    let fm: BTreeMap<usize, &str> = fm
        .into_iter()
        .map(|(c, sev)| {
            (
                c,
                match sev {
                    Severity::Error => colour::ERROR,
                    Severity::Warning => colour::WARNING,
                    Severity::Info => colour::INFO,
                },
            )
        })
        .collect();
    ticks(out, y_find, &fm, "findings");
    let y_axis = y_find + h_tick + 16.0;
    let _ = write!(
        out,
        r#"<text x="{left}" y="{y_axis}">step 1</text><text x="{:.0}" y="{y_axis}" text-anchor="middle">{}</text><text x="{:.0}" y="{y_axis}" text-anchor="end">step {n}</text></svg>"#,
        left + CHART_WIDTH as f64 / 2.0,
        if per > 1 {
            format!("one column = {per} steps")
        } else {
            String::new()
        },
        left + CHART_WIDTH as f64
    );
}

fn legend(out: &mut String) {
    out.push_str(r#"<p class="legend">"#);
    for (c, label) in [
        (colour::SIGMA, "|Σ| (beliefs held)"),
        (colour::INCONSISTENT, "Σ inconsistent"),
        (colour::AGREE, "verdict confirmed"),
        (colour::DISAGREE, "verdict disputed"),
        (colour::UNCHECKED, "not checkable"),
        (colour::RETRACT, "retraction"),
        (colour::ERROR, "finding: error"),
        (colour::WARNING, "warning"),
        (colour::INFO, "info"),
    ] {
        let _ = write!(out, r#"<span><i style="background:{c}"></i>{label}</span>"#);
    }
    out.push_str("</p>");
}

fn sigma_table(out: &mut String, model: &Model, tl: &Timeline, step: u32, named: &[String]) {
    sigma_details(out, model, tl, step, named, false);
}

/// Σ at `step` as a table in a `<details>`, open when `open` (the final Σ of a session).
fn sigma_details(
    out: &mut String,
    model: &Model,
    tl: &Timeline,
    step: u32,
    named: &[String],
    open: bool,
) {
    let mut sigma = tl.sigma_at(model.log(), step);
    // The beliefs the finding names first: they are what the reader looks for.
    sigma.sort_by_key(|v| !named.iter().any(|n| n == v.id()));
    let _ = write!(
        out,
        "<details{}><summary>Σ at step {step} ({} belief{})</summary><table><tr><th>id</th><th>formula</th><th>role</th><th>source</th><th>step</th></tr>",
        if open { " open" } else { "" },
        sigma.len(),
        if sigma.len() == 1 { "" } else { "s" }
    );
    for v in sigma.iter().take(MAX_SIGMA_ROWS) {
        let _ = write!(
            out,
            r#"<tr><td class="f">{}</td><td class="f">{}</td><td>{}</td><td>{}</td><td class="n">{}</td></tr>"#,
            esc(v.id()),
            esc(v.formula_text()),
            role_name(v.role()),
            esc(v.source().unwrap_or("")),
            v.step()
        );
    }
    out.push_str("</table>");
    if sigma.len() > MAX_SIGMA_ROWS {
        let _ = write!(
            out,
            r#"<p class="muted">… and {} more (see <code>doxascope export --at {step}</code>)</p>"#,
            sigma.len() - MAX_SIGMA_ROWS
        );
    }
    out.push_str("</details>");
}

fn role_name(r: crate::trace::event::Role) -> &'static str {
    use crate::trace::event::Role;
    match r {
        Role::Fact => "fact",
        Role::Rule => "rule",
        Role::Norm => "norm",
        Role::Assumption => "assumption",
    }
}

fn finding_html(out: &mut String, model: &Model, tl: &Timeline, f: &Finding, with_sigma: bool) {
    let sev = f.severity.as_str();
    let _ = write!(
        out,
        r#"<div class="finding sev-{sev}"><p><span class="sev">{sev}</span> <code>{}</code> {}{}</p>"#,
        f.code.as_str(),
        f.step.map(|s| format!("step {s}: ")).unwrap_or_default(),
        esc(&f.message)
    );
    if let Some(l) = &f.location {
        let _ = write!(out, r#"<p class="muted">{}:{}</p>"#, esc(&l.file), l.line);
    }
    if !f.ids.is_empty() || !f.formulas.is_empty() || !f.evidence.is_empty() {
        out.push_str("<table>");
        if !f.ids.is_empty() {
            let _ = write!(
                out,
                r#"<tr><th>ids</th><td class="f">{}</td></tr>"#,
                esc(&f.ids.join(", "))
            );
        }
        if !f.formulas.is_empty() {
            let _ = write!(
                out,
                r#"<tr><th>formulas</th><td class="f">{}</td></tr>"#,
                f.formulas
                    .iter()
                    .map(|x| esc(x))
                    .collect::<Vec<_>>()
                    .join("<br>")
            );
        }
        for (k, v) in &f.evidence {
            let _ = write!(
                out,
                r#"<tr><th>{}</th><td class="f">{}</td></tr>"#,
                esc(k),
                evidence_html(v)
            );
        }
        out.push_str("</table>");
    }
    if let Some(step) = f.step {
        if with_sigma {
            sigma_table(out, model, tl, step, &f.ids);
        } else {
            let _ = write!(
                out,
                r#"<p class="muted">Σ: <code>doxascope export --at {step}</code></p>"#
            );
        }
    }
    out.push_str("</div>");
}

/// The session's model calls and their tokens, per model and per agent run (left out when
/// the session has none).
fn model_calls(out: &mut String, model: &Model, tl: &Timeline) {
    let t = super::usage::totals(model.log(), tl);
    if t.calls == 0 {
        return;
    }
    out.push_str("<h3>Model calls and tokens</h3><ul>");
    for line in t.lines() {
        let _ = write!(out, "<li>{}</li>", esc(line.trim_start()));
    }
    out.push_str("</ul>");
}

/// The session's scores (`model::scores`), failed ones first, each with what it scores.
fn scores_html(out: &mut String, model: &Model, tl: &Timeline) {
    if tl.scores().is_empty() {
        return;
    }
    let mut all = super::scores::of_session(model.log(), tl);
    all.sort_by_key(|s| (s.passed != Some(false), s.step));
    let failed = all.iter().filter(|s| s.passed == Some(false)).count();
    let _ = write!(out, "<h3>Scores ({}, {failed} failed)</h3><ul>", all.len());
    for s in &all {
        let class = if s.passed == Some(false) {
            r#" class="failed""#
        } else {
            ""
        };
        let line = super::scores::line(model.log(), tl, s);
        let _ = write!(out, "<li{class}>{}</li>", esc(line.trim_start()));
    }
    out.push_str("</ul>");
}

/// An evidence value as a reader reads it (escaped): a list of sets (the minimal supports or
/// conflicts) one `{a, b}` a line, a list comma-separated, an object as `key: value` pairs,
/// a string as itself; never raw JSON.
fn evidence_html(v: &serde_json::Value) -> String {
    use serde_json::Value;
    fn plain(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Array(xs) => xs.iter().map(plain).collect::<Vec<_>>().join(", "),
            Value::Object(m) => m
                .iter()
                .map(|(k, v)| format!("{k}: {}", plain(v)))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        }
    }
    match v {
        Value::Array(xs) if !xs.is_empty() && xs.iter().all(Value::is_array) => xs
            .iter()
            .map(|set| esc(&format!("{{{}}}", plain(set))))
            .collect::<Vec<_>>()
            .join("<br>"),
        other => esc(&plain(other)),
    }
}

/// How many claims a session's claim table lists; the rest are counted.
pub const MAX_CLAIM_ROWS: usize = 500;

/// Every `verify` claim of the session with its recomputed verdict, whether or not the
/// audit found anything: a clean report still shows what was checked.
fn claims_html(out: &mut String, model: &Model, rc: Option<&Recomputed>) {
    use crate::trace::event::Outcome as Claimed;
    let Some(rc) = rc.filter(|r| !r.verifies.is_empty()) else {
        out.push_str(r#"<p class="muted">No verify claims.</p>"#);
        return;
    };
    out.push_str(
        "<table><tr><th>step</th><th>formula</th><th>claimed</th><th>recomputed</th><th></th></tr>",
    );
    for v in rc.verifies.iter().take(MAX_CLAIM_ROWS) {
        let formula = match model
            .log()
            .events
            .load(v.event as usize)
            .as_deref()
            .map(|e| &e.body)
        {
            Some(Body::Verify(b)) => b.all_formulas().collect::<Vec<_>>().join(", "),
            _ => String::new(),
        };
        let claimed = match v.claimed {
            Some(Claimed::Contradiction) => "contradiction",
            Some(Claimed::Entailed) => "entailed",
            Some(Claimed::Newinfo) => "newinfo",
            Some(Claimed::Ungrounded) => "ungrounded",
            None => "–",
        };
        let recomputed = match &v.result {
            Ok(g) => g.outcome.as_str().to_string(),
            Err(e) => format!("not checkable ({e})"),
        };
        let (mark, style) = match v.agrees() {
            Some(true) => ("=", ""),
            Some(false) => ("≠", " style=\"background:#fde2e2\""),
            None => ("?", ""),
        };
        let _ = write!(
            out,
            r#"<tr{style}><td class="n">{}</td><td class="f">{}</td><td>{claimed}</td><td>{}</td><td>{mark}</td></tr>"#,
            v.step,
            esc(&formula),
            esc(&recomputed)
        );
    }
    out.push_str("</table>");
    if rc.verifies.len() > MAX_CLAIM_ROWS {
        let _ = write!(
            out,
            r#"<p class="muted">… and {} more (<code>doxascope audit --json</code> lists every one)</p>"#,
            rc.verifies.len() - MAX_CLAIM_ROWS
        );
    }
}

fn retractions(out: &mut String, model: &Model, tl: &Timeline) {
    if tl.retracts().is_empty() && tl.revisions().is_empty() {
        out.push_str(r#"<p class="muted">No retractions.</p>"#);
        return;
    }
    out.push_str(
        "<table><tr><th>step</th><th>event</th><th>belief</th><th>by</th><th>why / policy</th></tr>",
    );
    let mut rows: Vec<(u32, String)> = Vec::new();
    for rv in tl.revisions() {
        if let Some(ev) = model.event(rv.event)
            && let Body::Revise(b) = &ev.body
        {
            rows.push((
                rv.step,
                format!(
                    r#"<tr><td class="n">{}</td><td>revise</td><td class="f">trigger {}; gives up {}</td><td></td><td>{}</td></tr>"#,
                    rv.step,
                    esc(b.trigger.as_deref().unwrap_or("?")),
                    esc(&b.retracted.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")),
                    esc(b.policy.as_deref().unwrap_or(""))
                ),
            ));
        }
    }
    for r in tl.retracts() {
        if let Some(ev) = model.event(r.event)
            && let Body::Retract(b) = &ev.body
        {
            let by = r
                .record
                .and_then(|i| tl.beliefs()[i as usize].retraction)
                .map(|x| x.by.as_str())
                .unwrap_or("(no such belief)");
            rows.push((
                r.step,
                format!(
                    r#"<tr><td class="n">{}</td><td>retract</td><td class="f">{}</td><td>{}</td><td>{}</td></tr>"#,
                    r.step,
                    esc(&b.target),
                    by,
                    esc(b.reason.as_deref().unwrap_or(""))
                ),
            ));
        }
    }
    rows.sort_by_key(|r| r.0);
    for (_, row) in rows {
        out.push_str(&row);
    }
    out.push_str("</table>");
}

fn notes_html(out: &mut String, notes: &[&Note]) {
    if notes.is_empty() {
        out.push_str(r#"<p class="muted">No bookmarks or notes.</p>"#);
        return;
    }
    out.push_str(
        "<table><tr><th>#</th><th>step</th><th>belief</th><th>note</th><th>made</th></tr>",
    );
    for n in notes {
        let _ = write!(
            out,
            r#"<tr><td class="n">{}</td><td class="n">{}</td><td class="f">{}</td><td>{}</td><td class="muted">{}</td></tr>"#,
            n.id,
            n.step,
            esc(n.belief.as_deref().unwrap_or("")),
            if n.is_bookmark() {
                "<i>bookmark</i>".to_string()
            } else {
                esc(&n.text)
            },
            esc(&n.created)
        );
    }
    out.push_str("</table>");
}

fn matrix_html(out: &mut String, r: &Report) {
    out.push_str("<table><tr><th>claimed \\ recomputed</th>");
    for c in audit::RECOMPUTED {
        let _ = write!(out, "<th>{c}</th>");
    }
    out.push_str("</tr>");
    for (i, c) in audit::CLAIMED.iter().enumerate() {
        let _ = write!(out, "<tr><th>{c}</th>");
        for j in 0..4 {
            let agree = matches!((i, j), (0, 0) | (1, 1) | (2, 2) | (3, 2));
            let n = r.matrix.counts[i][j];
            let style = if n > 0 && !agree && j != 3 {
                " style=\"background:#fde2e2\""
            } else {
                ""
            };
            let _ = write!(out, r#"<td class="n"{style}>{n}</td>"#);
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

/// Writes the report of `model` as one HTML document. `files` are the trace files as given
/// (for the title and the notes beside them).
pub fn report(model: &Model, files: &[String], opts: &AuditOptions) -> String {
    let rcs: Vec<Recomputed> = model
        .timelines()
        .iter()
        .filter_map(|tl| model.recompute(tl.name(), &opts.recompute))
        .collect();
    let rep = audit::audit_recomputed(model, &rcs, opts);
    let stores: Vec<NoteStore> = files.iter().map(|f| NoteStore::open(f)).collect();
    let title = files.join(", ");
    let mut out = String::with_capacity(1 << 16);
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="generator" content="doxascope {}"><title>doxascope report: {}</title><style>{STYLE}</style></head><body>"#,
        env!("CARGO_PKG_VERSION"),
        esc(&title)
    );
    let _ = write!(
        out,
        r#"<header><h1>doxascope report</h1><p class="f">{}</p></header>"#,
        esc(&title)
    );
    // Summary.
    let _ = write!(
        out,
        r#"<section id="summary"><h2>Summary</h2><p>{} session{}, {} events; {} verify claims, {} recomputed, {} not checkable; {} finding{} ({} error{}, {} warning{}, {} info).</p>"#,
        rep.sessions.len(),
        if rep.sessions.len() == 1 { "" } else { "s" },
        model.log().events.len(),
        rep.verifies,
        rep.recomputed,
        rep.not_checkable,
        rep.findings.len(),
        if rep.findings.len() == 1 { "" } else { "s" },
        rep.count(Severity::Error),
        if rep.count(Severity::Error) == 1 {
            ""
        } else {
            "s"
        },
        rep.count(Severity::Warning),
        if rep.count(Severity::Warning) == 1 {
            ""
        } else {
            "s"
        },
        rep.count(Severity::Info)
    );
    out.push_str("<table><tr><th>session</th><th>steps</th><th>beliefs announced</th><th>|Σ| at the end</th><th>Σ at the end</th><th>retractions</th><th>findings</th></tr>");
    for tl in model.timelines() {
        let rc = rcs.iter().find(|r| r.session == tl.name());
        let end = match rc.and_then(|r| r.end.as_ref()) {
            Some(Ok((true, _))) => "consistent".to_string(),
            Some(Ok((false, c))) => format!("inconsistent ({})", esc(&c.join(", "))),
            Some(Err(e)) => format!("not checkable ({})", esc(&e.to_string())),
            None => String::new(),
        };
        let nf = rep
            .findings
            .iter()
            .filter(|f| f.session == tl.name())
            .count();
        let _ = write!(
            out,
            r##"<tr><td><a href="#s{}">{}</a></td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td>{end}</td><td class="n">{}</td><td class="n">{nf}</td></tr>"##,
            session_anchor(model, tl),
            esc(tl.name()),
            tl.len(),
            tl.beliefs().len(),
            tl.sigma_at(model.log(), tl.len()).len(),
            tl.retracts().len()
        );
    }
    out.push_str("</table>");
    let by_code = rep.by_code();
    if !by_code.is_empty() {
        out.push_str("<ul>");
        for (c, n) in by_code {
            let _ = write!(
                out,
                "<li><code>{}</code>: {}</li>",
                c.as_str(),
                esc(&c.summary(n))
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
    out.push_str(r#"<section id="matrix"><h2>Claimed vs recomputed</h2><p>Every <code>verify</code> claim against the gate recomputed on Σ just before it (<code>unknown</code>: not recomputed). Shaded cells disagree.</p>"#);
    matrix_html(&mut out, &rep);
    out.push_str("</section>");
    for tl in model.timelines() {
        let rc = rcs.iter().find(|r| r.session == tl.name());
        let findings: Vec<&Finding> = rep
            .findings
            .iter()
            .filter(|f| f.session == tl.name())
            .collect();
        let _ = write!(
            out,
            r#"<section class="session" id="s{}"><h2>Session {}</h2>"#,
            session_anchor(model, tl),
            esc(tl.name())
        );
        let s = series(tl, rc, &findings);
        chart(
            &mut out,
            &s,
            &format!("session {} over its steps", tl.name()),
        );
        legend(&mut out);
        let _ = write!(out, "<h3>Findings ({})</h3>", findings.len());
        if findings.is_empty() {
            out.push_str(r#"<p class="muted">No findings.</p>"#);
        }
        // Said once rather than under each of a long run's many thousand findings.
        if findings.len() > MAX_SIGMA_FINDINGS {
            let _ = write!(
                out,
                r#"<p class="muted">The first {MAX_SIGMA_FINDINGS} findings list Σ at their step; the other {} name the <code>doxascope export</code> that prints it.</p>"#,
                findings.len() - MAX_SIGMA_FINDINGS
            );
        }
        for (i, f) in findings.iter().enumerate() {
            finding_html(&mut out, model, tl, f, i < MAX_SIGMA_FINDINGS);
        }
        model_calls(&mut out, model, tl);
        scores_html(&mut out, model, tl);
        let _ = write!(
            out,
            "<h3>Verification claims ({})</h3>",
            rc.map_or(0, |r| r.verifies.len())
        );
        claims_html(&mut out, model, rc);
        out.push_str("<h3>Σ at the end</h3>");
        sigma_details(&mut out, model, tl, tl.len(), &[], true);
        out.push_str("<h3>Retraction history</h3>");
        retractions(&mut out, model, tl);
        out.push_str("<h3>Bookmarks and notes</h3>");
        let notes: Vec<&Note> = stores
            .iter()
            .flat_map(|s| s.of_session(tl.name()))
            .collect();
        notes_html(&mut out, &notes);
        out.push_str("</section>");
    }
    // Findings that belong to no session (unreadable lines).
    let loose: Vec<&Finding> = rep
        .findings
        .iter()
        .filter(|f| !model.timelines().iter().any(|t| t.name() == f.session))
        .collect();
    if !loose.is_empty() {
        out.push_str("<section><h2>Input problems</h2>");
        for f in loose {
            let _ = write!(
                out,
                r#"<div class="finding sev-{}"><p><code>{}</code> {}</p></div>"#,
                f.severity.as_str(),
                f.code.as_str(),
                esc(&f.message)
            );
        }
        out.push_str("</section>");
    }
    out.push_str(&super::recheck::section(
        &super::recheck::record(files, opts, &rep, &rcs),
        esc,
    ));
    let _ = write!(
        out,
        r#"<footer><p class="muted">Written by doxascope {} (<code>doxascope report</code>). Self-contained: no scripts, nothing loaded from elsewhere.</p></footer></body></html>"#,
        env!("CARGO_PKG_VERSION")
    );
    out.push('\n');
    out
}

/// A stable anchor for a session: its position (names may hold anything).
fn session_anchor(model: &Model, tl: &Timeline) -> usize {
    model
        .timelines()
        .iter()
        .position(|t| t.name() == tl.name())
        .unwrap_or(0)
}
