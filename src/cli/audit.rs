//! `doxascope audit FILE... [--json | --format text|json|sarif|junit] [--baseline FILE]
//! [--policy P]`: replay, recompute every claim, print the findings (contract §1 and §5),
//! for people, for programs, or for CI (`model::audit::ci`).
//!
//! Exit codes: 0 when no finding is a warning or an error (with `--baseline`: no such finding
//! the baseline lacks), 1 when one is, 2 when the input is
//! unusable (a file that cannot be read, a trace with no events at all) or the arguments are
//! bad (clap rejects an unknown `--policy`). Messages about unusable input go to stderr;
//! the report goes to stdout, human-readable or as one JSON document.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use crate::logic::revise::Policy;
use crate::model::Model;
use crate::model::audit::ci::{self, Baseline};
use crate::model::audit::{
    AuditOptions, Form, Severity, audit, audit_spooled, audit_spooled_releasing, render_text,
};
use crate::model::recompute::RecomputeOptions;
use crate::trace::import::Format;

use super::{EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE};

/// Arguments of `audit`.
#[derive(Debug, clap::Args)]
#[command(after_help = crate::model::audit::help_text())]
pub(crate) struct Args {
    /// Trace files (JSON Lines); `-` reads standard input.
    #[arg(required_unless_present = "list_checks", value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Print every check the audit makes (code, severity, summary, what it reports, what it
    /// needs, an example trace) and exit; with `--json`, as a JSON array.
    #[arg(long)]
    list_checks: bool,
    /// Print {findings, summary, claimed_vs_recomputed} as one JSON document.
    #[arg(long)]
    json: bool,
    /// Re-run every revision with this policy (default: the policy each `revise` names).
    #[arg(long, value_name = "P", value_parser = ["greedy", "greedy-paper", "recency", "confidence", "reject", "flag"])]
    policy: Option<String>,
    /// An output form (`text`, `json`, `sarif`: SARIF 2.1.0, `junit`: JUnit XML), or the
    /// input format to read the files as instead of detecting it (`v1` for a trace whose
    /// start looks like binary data, such as the NULs `copytruncate` leaves). Give it twice
    /// for both (`--format v1 --format sarif`).
    #[arg(long, value_name = "NAME", value_parser = parse_format_arg, action = clap::ArgAction::Append)]
    format: Vec<FormatArg>,
    /// A previous `audit --json` or `--format sarif` output: the exit status is 1 only for
    /// findings of severity warning or error that it does not hold (matched by code,
    /// session, the event's `seq` and the ids and formulas named; docs/ci.md).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Seconds one solver request may take before its verdict counts as not checkable.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
    /// Write a certificate of every recomputed verdict into DIR: per `verify`, `query` and
    /// `answer`, the CNF (DIMACS) of Σ ∧ ψ and of Σ ∧ ¬ψ, each with a DRAT proof when
    /// unsatisfiable or a model when satisfiable, listed in DIR/index.json (see
    /// docs/certificates.md). A DRAT checker (drat-trim, dratify) checks them without doxascope.
    #[arg(long, value_name = "DIR")]
    certificates: Option<PathBuf>,
    /// Sessions audited at once (default 0: one per core). The report is the same whatever
    /// the number; fewer holds less memory on a machine with many cores.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0)]
    threads: usize,
}

/// What the report is printed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    Text,
    Json,
    Sarif,
    Junit,
}

/// A value of `--format`: an output form or an input format (their names differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FormatArg {
    Output(Output),
    Input(Format),
}

fn parse_format_arg(s: &str) -> Result<FormatArg, String> {
    Ok(match s {
        "text" => FormatArg::Output(Output::Text),
        "json" => FormatArg::Output(Output::Json),
        "sarif" => FormatArg::Output(Output::Sarif),
        "junit" => FormatArg::Output(Output::Junit),
        _ => FormatArg::Input(
            super::import::parse_format(s)
                .map_err(|e| format!("{e}, or an output form: text, json, sarif, junit"))?,
        ),
    })
}

/// The output form and input format `--json` and the `--format`s ask for; an error when
/// they ask for two different ones.
fn formats(args: &Args) -> Result<(Output, Option<Format>), String> {
    let mut output = args.json.then_some(Output::Json);
    let mut input = None;
    for f in &args.format {
        match *f {
            FormatArg::Output(o) if output.is_some_and(|x| x != o) => {
                return Err("two different output forms".into());
            }
            FormatArg::Output(o) => output = Some(o),
            FormatArg::Input(i) if input.is_some_and(|x| x != i) => {
                return Err("two different input formats".into());
            }
            FormatArg::Input(i) => input = Some(i),
        }
    }
    Ok((output.unwrap_or(Output::Text), input))
}

/// Runs `audit` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    if args.list_checks {
        return list_checks(args.json);
    }
    let (output, input) = match formats(args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("doxascope audit: --format: {e}");
            return EXIT_USAGE;
        }
    };
    let baseline = match &args.baseline {
        None => None,
        Some(p) => match std::fs::read_to_string(p)
            .map_err(|e| e.to_string())
            .and_then(|t| Baseline::parse(&t))
        {
            Ok(b) => Some(b),
            Err(e) => {
                let shown = crate::sanitize::sanitize(&p.display().to_string());
                eprintln!(
                    "doxascope audit: baseline {shown}: {}",
                    crate::sanitize::sanitize(&e)
                );
                return EXIT_USAGE;
            }
        },
    };
    let policy = match args.policy.as_deref().map(Policy::parse) {
        Some(None) => {
            eprintln!("doxascope audit: unknown policy");
            return EXIT_USAGE;
        }
        Some(Some(p)) => Some(p),
        None => None,
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        eprintln!("doxascope audit: --timeout must be a positive number of seconds");
        return EXIT_USAGE;
    }
    let mut model = match Model::load_as(&args.files, input) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("doxascope audit: {e}");
            return EXIT_USAGE;
        }
    };
    super::report_imports("audit", &model);
    if model.timelines().is_empty() {
        let problems = model.log().problems.len();
        eprintln!(
            "doxascope audit: no usable event in the input ({problems} unreadable line{}); \
             run `doxascope validate` for details",
            if problems == 1 { "" } else { "s" }
        );
        return EXIT_USAGE;
    }
    let opts = AuditOptions {
        policy,
        recompute: RecomputeOptions {
            timeout: Duration::from_secs_f64(args.timeout.min(86_400.0)),
            ..RecomputeOptions::default()
        },
        threads: args.threads,
    };
    let stdout = io::stdout();
    // Block-buffered: a large report is thousands of lines, each a write on a line-buffered
    // stdout.
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let failed = match (output, &baseline) {
        (Output::Text | Output::Json, None) => {
            // Rendered session by session and kept deflated: a long trace's findings as
            // `Finding`s would take several times the memory of the trace.
            let form = if output == Output::Json {
                Form::Json
            } else {
                Form::Text
            };
            // Certificates walk the sessions again afterwards; otherwise each session's
            // timeline goes as soon as its audit ends.
            let report = if args.certificates.is_some() {
                audit_spooled(&model, &opts, form)
            } else {
                audit_spooled_releasing(&mut model, &opts, form)
            };
            if report.write(&mut out).and_then(|()| out.flush()).is_err() {
                // A closed pipe (`| head`) is not the trace's fault; the verdict still stands.
            }
            let failed = report.failed();
            std::mem::forget(report);
            failed
        }
        _ => {
            // SARIF, JUnit and a baseline need the findings whole.
            let report = audit(&model, &opts);
            let new = baseline.as_ref().map(|b| b.new_findings(&report.findings));
            let doc = match output {
                Output::Text => render_text(&report),
                Output::Json => pretty(&report.to_json()),
                Output::Sarif => pretty(&ci::to_sarif(&report, new.as_deref())),
                Output::Junit => ci::to_junit(&report, new.as_deref()),
            };
            if out
                .write_all(doc.as_bytes())
                .and_then(|()| out.flush())
                .is_err()
            {
                // As above: a closed pipe does not change the verdict.
            }
            let failing = |i: usize| {
                report.findings[i].severity >= Severity::Warning
                    && new.as_ref().is_none_or(|n| n[i])
            };
            let fresh = (0..report.findings.len()).filter(|&i| failing(i)).count();
            if let (Some(b), Some(n)) = (&baseline, &new) {
                let known = n.iter().filter(|x| !**x).count();
                eprintln!(
                    "doxascope audit: {fresh} new finding(s) of severity warning or error; {known} \
                     of {} finding(s) matched the baseline's {}",
                    report.findings.len(),
                    b.len()
                );
            }
            std::mem::forget(report);
            fresh > 0
        }
    };
    let mut code = if failed { EXIT_PROBLEMS } else { EXIT_OK };
    if let Some(dir) = &args.certificates
        && !write_certificates(dir, &model, &opts)
    {
        code = EXIT_USAGE;
    }
    // The process ends here: freeing a long trace's model and report piece by piece took
    // over a second on the 1,000,000-event trace, for memory the exit returns anyway.
    std::mem::forget(model);
    code
}

/// A JSON document pretty-printed with a final newline, as `--json` prints it.
fn pretty(v: &serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// `--list-checks`: the registry, as text or JSON, on stdout.
fn list_checks(json: bool) -> i32 {
    use crate::model::audit::{list_checks, list_checks_json};
    let text = if json {
        format!("{:#}\n", list_checks_json())
    } else {
        list_checks()
    };
    // A closed pipe (`| head`) is not an error of the listing.
    let _ = io::stdout().lock().write_all(text.as_bytes());
    EXIT_OK
}

/// Certifies every recomputed verdict into `dir` (only when asked: the audit itself never
/// builds a certificate) and says on stderr what was written; `false` when the directory
/// could not be written.
fn write_certificates(dir: &std::path::Path, model: &Model, opts: &AuditOptions) -> bool {
    use crate::model::certificates::{Options, write_all};
    use crate::sanitize::sanitize;
    // The plain recomputation: the verdicts, without the audit's further questions.
    let ro = RecomputeOptions {
        audit: None,
        ..opts.recompute
    };
    let recomputed: Vec<_> = model
        .timelines()
        .iter()
        .filter_map(|tl| model.recompute(tl.name(), &ro))
        .collect();
    let copts = Options {
        timeout: opts.recompute.timeout,
        instance_cap: opts.recompute.instance_cap,
    };
    let shown = sanitize(&dir.display().to_string());
    match write_all(dir, model, &recomputed, &copts) {
        Ok(t) => {
            eprintln!(
                "doxascope audit: {} certificate(s) of {} verdict(s) in {shown} (index.json); \
                 {} verdict(s) not recomputed, {} certificate(s) not made, {} disagreement(s)",
                t.certificates, t.verdicts, t.uncertified, t.failed, t.disagreements
            );
            true
        }
        Err(e) => {
            eprintln!("doxascope audit: cannot write certificates to {shown}: {e}");
            false
        }
    }
}
