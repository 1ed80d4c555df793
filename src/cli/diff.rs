//! `doxascope diff RUN1 RUN2 [--align step|plan|formula] [--session1 NAME] [--session2 NAME]
//! [--json] [--timeout SECS]`: what differs between two runs of the same task (see
//! [`crate::model::diff`]): beliefs only in one, beliefs with another status at the end,
//! verdicts that differ, the first step where the runs' Σ diverge, and the tool calls, model
//! calls, thoughts, answers, scores and errors that differ (the first of each kind shown
//! with both sides).
//!
//! Exit codes follow diff(1): 0 when nothing differs, 1 when something does, 2 for unusable
//! input or arguments. `--json` prints one JSON object, for CI.

use std::io::{self, Write};
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::model::Model;
use crate::model::diff::events::{Item, ItemDiff, Occurrence, field, occurrence_text, value_text};
use crate::model::diff::{Align, EndStatus, OnlyIn, Run, RunDiff, VerdictSide, diff};
use crate::model::recompute::RecomputeOptions;
use crate::sanitize::sanitize;

use super::{EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE};

/// How the runs are aligned on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AlignArg {
    /// Step t with step t.
    Step,
    /// By plan step (plan and step id of each finished BDI step).
    Plan,
    /// By Σ's changes, matched by their formulas.
    Formula,
}

/// Arguments of `diff`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when the runs do not differ, 1 when they do, 2 for \
unusable input or arguments."
)]
pub(crate) struct Args {
    /// The first run (a trace file, JSON Lines).
    #[arg(value_name = "RUN1")]
    run1: PathBuf,
    /// The second run.
    #[arg(value_name = "RUN2")]
    run2: PathBuf,
    /// How to align the runs before comparing Σ.
    #[arg(long, value_enum, default_value = "step")]
    align: AlignArg,
    /// The session of RUN1, when the file holds several.
    #[arg(long, value_name = "NAME")]
    session1: Option<String>,
    /// The session of RUN2, when the file holds several.
    #[arg(long, value_name = "NAME")]
    session2: Option<String>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Seconds one solver request may take before its verdict counts as not checkable.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
    /// Show the two runs side by side in the TUI (`]` `[` move both, `e` the first
    /// divergence, `Esc` back to the panes).
    #[arg(long, conflicts_with = "json")]
    tui: bool,
}

fn load(path: &PathBuf) -> Result<Model, i32> {
    let m = Model::load(std::slice::from_ref(path)).map_err(|e| {
        eprintln!("doxascope diff: {e}");
        EXIT_USAGE
    })?;
    super::report_imports("diff", &m);
    Ok(m)
}

/// Runs `diff` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let Some(timeout) = super::timeout_arg("diff", args.timeout) else {
        return EXIT_USAGE;
    };
    let align = match args.align {
        AlignArg::Step => Align::Step,
        AlignArg::Plan => Align::Plan,
        AlignArg::Formula => Align::Formula,
    };
    if args.tui {
        return tui(args, align);
    }
    let (ma, mb) = match (load(&args.run1), load(&args.run2)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    fn pick<'m>(
        m: &'m Model,
        s: Option<&str>,
        which: &str,
    ) -> Result<&'m crate::model::Timeline, i32> {
        m.pick_session(s).map_err(|e| {
            eprintln!("doxascope diff: {which}: {e}");
            EXIT_USAGE
        })
    }
    let (ta, tb) = match (
        pick(&ma, args.session1.as_deref(), "RUN1"),
        pick(&mb, args.session2.as_deref(), "RUN2"),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    let opts = RecomputeOptions {
        timeout,
        audit: None,
        ..RecomputeOptions::default()
    };
    let a = Run::of(&ma, ta);
    let b = Run::of(&mb, tb);
    let d = diff(a, b, align, &opts);
    let names = [
        args.run1.display().to_string(),
        args.run2.display().to_string(),
    ];
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let written = if args.json {
        writeln!(out, "{}", to_json(&d, a, b, &names))
    } else {
        out.write_all(to_text(&d, a, b, &names).as_bytes())
    };
    let _ = written.and_then(|()| out.flush());
    if d.is_empty() { EXIT_OK } else { EXIT_PROBLEMS }
}

/// `--tui`: both runs in the view, side by side.
fn tui(args: &Args, how: Align) -> i32 {
    for p in [&args.run1, &args.run2] {
        if let Err(e) = std::fs::File::open(p) {
            eprintln!(
                "doxascope diff: cannot read {}: {e}",
                sanitize(&p.display().to_string())
            );
            return EXIT_USAGE;
        }
    }
    let mut files = vec![args.run1.clone()];
    // The same file twice is one file holding both sessions.
    if args.run2 != args.run1 {
        files.push(args.run2.clone());
    }
    // Files of other tools are imported before the terminal is taken over, as the view does.
    let imported = match super::view::import_files(&files, None) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("doxascope diff: {e}");
            return EXIT_USAGE;
        }
    };
    super::config_warnings_to_stderr();
    let opts = crate::tui::Options {
        files,
        imported,
        follow: false,
        diff: Some(crate::tui::app::DiffRequest {
            how,
            a: args.session1.clone(),
            b: args.session2.clone(),
            files: [
                args.run1.to_string_lossy().into_owned(),
                args.run2.to_string_lossy().into_owned(),
            ],
        }),
        ..crate::tui::Options::default()
    };
    match crate::tui::run(opts) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "doxascope diff: {e}");
            EXIT_USAGE
        }
    }
}

fn belief_id(run: Run<'_>, record: Option<u32>) -> Option<String> {
    record
        .and_then(|r| run.tl.beliefs().get(r as usize))
        .map(|r| r.id.to_string())
}

fn end_json(run: Run<'_>, e: &EndStatus) -> Value {
    json!({
        "id": belief_id(run, e.record),
        "held": e.held,
        "left": e.left.map(|(step, by)| json!({"step": step, "by": by.as_str()})),
        "status": e.status.as_str(),
    })
}

fn only_json(run: Run<'_>, o: &OnlyIn) -> Value {
    let step = run.tl.beliefs().get(o.record as usize).map(|r| r.announced);
    json!({
        "formula": o.formula,
        "id": belief_id(run, Some(o.record)),
        "step": step,
        "end": end_json(run, &o.here),
        "other_status": o.other.as_str(),
    })
}

fn side_json(s: &Option<VerdictSide>) -> Value {
    match s {
        None => Value::Null,
        Some(s) => json!({
            "step": s.step,
            "claimed": s.claimed,
            "recomputed": s.recomputed.as_ref().ok(),
            "not_checkable": s.recomputed.as_ref().err(),
        }),
    }
}

/// The JSON object `--json` prints.
pub(super) fn to_json(d: &RunDiff, a: Run<'_>, b: Run<'_>, names: &[String; 2]) -> Value {
    let run = |r: Run<'_>, n: &str| json!({"file": n, "session": r.tl.name(), "steps": r.tl.len()});
    json!({
        "align": d.align.as_str(),
        "a": run(a, &names[0]),
        "b": run(b, &names[1]),
        "identical": d.is_empty(),
        "aligned_pairs": d.pairs.len(),
        "divergence": d.divergence.as_ref().map(|v| json!({
            "a": v.a, "b": v.b, "changes_a": v.changes_a, "changes_b": v.changes_b,
            "only_in_a": v.only_a, "only_in_b": v.only_b,
        })),
        "only_in_a": d.only_a.iter().map(|o| only_json(a, o)).collect::<Vec<_>>(),
        "only_in_b": d.only_b.iter().map(|o| only_json(b, o)).collect::<Vec<_>>(),
        "status_differs": d.status.iter().map(|s| json!({
            "formula": s.formula, "a": end_json(a, &s.a), "b": end_json(b, &s.b),
        })).collect::<Vec<_>>(),
        "verdicts_differ": d.verdicts.iter().map(|v| json!({
            "kind": v.kind, "formula": v.formula, "occurrence": v.occurrence + 1,
            "a": side_json(&v.a), "b": side_json(&v.b),
        })).collect::<Vec<_>>(),
        "items": d.counts.iter().map(|(item, x, y)| {
            (item.as_str().to_string(), json!({"a": x, "b": y}))
        }).collect::<serde_json::Map<_, _>>(),
        "items_differ": d.items.iter().map(item_json).collect::<Vec<_>>(),
    })
}

fn occurrence_json(o: &Option<Occurrence>) -> Value {
    match o {
        None => Value::Null,
        Some(o) => json!({
            "number": o.index + 1,
            "step": o.step,
            "fields": o.fields.iter().map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<serde_json::Map<_, _>>(),
        }),
    }
}

fn item_json(i: &ItemDiff) -> Value {
    json!({
        "kind": i.item.as_str(),
        "fields": i.fields,
        "a": occurrence_json(&i.a),
        "b": occurrence_json(&i.b),
    })
}

/// Per kind: how many differ, and the first with both sides, field by field.
fn items_text(out: &mut String, d: &RunDiff, na: &str, nb: &str) {
    use std::fmt::Write as _;
    for item in Item::ALL {
        let mut of_kind = d.items.iter().filter(|i| i.item == item);
        let Some(first) = of_kind.next() else {
            continue;
        };
        let (x, y) = d
            .counts
            .iter()
            .find(|c| c.0 == item)
            .map_or((0, 0), |c| (c.1, c.2));
        let _ = writeln!(
            out,
            "{}s that differ: {} ({na} has {x}, {nb} has {y}); the first: {} of {na} · {} of {nb}",
            item.noun(),
            1 + of_kind.count(),
            occurrence_text(&first.a),
            occurrence_text(&first.b)
        );
        for f in &first.fields {
            let _ = writeln!(
                out,
                "  {f}: {na}: {} · {nb}: {}",
                value_text(first.a.as_ref().and_then(|o| field(o, f))),
                value_text(first.b.as_ref().and_then(|o| field(o, f)))
            );
        }
    }
}

fn end_text(e: &EndStatus) -> String {
    let held = if e.held {
        "held".to_string()
    } else {
        match e.left {
            Some((step, by)) => format!("given up at step {step} ({})", by.as_str()),
            None => "not held".to_string(),
        }
    };
    format!("{held}, {}", e.status.as_str())
}

fn side_text(s: &Option<VerdictSide>) -> String {
    match s {
        None => "absent".to_string(),
        Some(s) => format!(
            "step {}: claimed {}, recomputed {}",
            s.step,
            s.claimed.as_deref().unwrap_or("nothing"),
            match &s.recomputed {
                Ok(r) => r.clone(),
                Err(e) => format!("not checkable ({})", sanitize(e)),
            }
        ),
    }
}

/// The human-readable report.
pub(super) fn to_text(d: &RunDiff, a: Run<'_>, b: Run<'_>, names: &[String; 2]) -> String {
    use std::fmt::Write as _;
    let (na, nb) = (sanitize(&names[0]), sanitize(&names[1]));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "diff of {na} (session {}, {} steps) and {nb} (session {}, {} steps), aligned by {} \
         ({} aligned pairs)",
        sanitize(a.tl.name()),
        a.tl.len(),
        sanitize(b.tl.name()),
        b.tl.len(),
        d.align.as_str(),
        d.pairs.len()
    );
    if d.is_empty() {
        out.push_str("no differences\n");
        return out;
    }
    items_text(&mut out, d, &na, &nb);
    match &d.divergence {
        Some(v) => {
            let _ = writeln!(
                out,
                "first divergence of Σ: step {} of {na}, step {} of {nb}",
                v.a, v.b
            );
            let steps = |s: &[u32]| {
                if s.is_empty() {
                    "none".to_string()
                } else {
                    s.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                }
            };
            let _ = writeln!(
                out,
                "  Σ changed at step(s) {} of {na} and {} of {nb} since the last aligned pair",
                steps(&v.changes_a),
                steps(&v.changes_b)
            );
            for f in &v.only_a {
                let _ = writeln!(out, "  only in {na}'s Σ: {}", sanitize(f));
            }
            for f in &v.only_b {
                let _ = writeln!(out, "  only in {nb}'s Σ: {}", sanitize(f));
            }
        }
        None => out.push_str("Σ never diverges under this alignment\n"),
    }
    for (name, run, other, list) in [(&na, a, &nb, &d.only_a), (&nb, b, &na, &d.only_b)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "beliefs only in {name}:");
        for o in list {
            let rec = run.tl.beliefs().get(o.record as usize);
            let _ = writeln!(
                out,
                "  {}  ({} at step {}; {}; on {other}'s final Σ: {})",
                sanitize(&o.formula),
                sanitize(rec.map_or("", |r| r.id.as_str())),
                rec.map_or(0, |r| r.announced),
                end_text(&o.here),
                o.other.as_str()
            );
        }
    }
    if !d.status.is_empty() {
        out.push_str("beliefs with another status at the end:\n");
        for s in &d.status {
            let _ = writeln!(
                out,
                "  {}  {na}: {} · {nb}: {}",
                sanitize(&s.formula),
                end_text(&s.a),
                end_text(&s.b)
            );
        }
    }
    if !d.verdicts.is_empty() {
        out.push_str("verdicts that differ:\n");
        for v in &d.verdicts {
            let _ = writeln!(
                out,
                "  {} {} (#{})  {na}: {} · {nb}: {}",
                v.kind,
                sanitize(&v.formula),
                v.occurrence + 1,
                side_text(&v.a),
                side_text(&v.b)
            );
        }
    }
    out
}
