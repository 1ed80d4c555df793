//! `doxascope audit FILE... [--json] [--policy P]`: replay, recompute every claim, print the
//! findings (contract §1 and §5).
//!
//! Exit codes: 0 when no finding is a warning or an error, 1 when one is, 2 when the input is
//! unusable (a file that cannot be read, a trace with no events at all) or the arguments are
//! bad (clap rejects an unknown `--policy`). Messages about unusable input go to stderr;
//! the report goes to stdout, human-readable or as one JSON document.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use crate::logic::revise::Policy;
use crate::model::Model;
use crate::model::audit::{AuditOptions, Form, audit_spooled};
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
    /// Read the files as this format instead of detecting it (`v1` for a trace whose start
    /// looks like binary data, such as the NULs `copytruncate` leaves).
    #[arg(long, value_name = "NAME", value_parser = super::import::parse_format)]
    format: Option<Format>,
    /// Seconds one solver request may take before its verdict counts as not checkable.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
    /// Write a certificate of every recomputed verdict into DIR: per `verify`, `query` and
    /// `answer`, the CNF (DIMACS) of Σ ∧ ψ and of Σ ∧ ¬ψ, each with a DRAT proof when
    /// unsatisfiable or a model when satisfiable, listed in DIR/index.json (see
    /// docs/certificates.md). A DRAT checker (drat-trim, dratify) checks them without doxascope.
    #[arg(long, value_name = "DIR")]
    certificates: Option<PathBuf>,
}

/// Runs `audit` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    if args.list_checks {
        return list_checks(args.json);
    }
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
    let model = match Model::load_as(&args.files, args.format) {
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
        ..AuditOptions::default()
    };
    // Rendered session by session and kept deflated: a long trace's findings as `Finding`s
    // would take several times the memory of the trace.
    let form = if args.json { Form::Json } else { Form::Text };
    let report = audit_spooled(&model, &opts, form);
    let stdout = io::stdout();
    // Block-buffered: a large report is thousands of lines, each a write on a line-buffered
    // stdout.
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    if report.write(&mut out).and_then(|()| out.flush()).is_err() {
        // A closed pipe (`| head`) is not the trace's fault; the verdict still stands.
    }
    let mut code = if report.failed() {
        EXIT_PROBLEMS
    } else {
        EXIT_OK
    };
    if let Some(dir) = &args.certificates
        && !write_certificates(dir, &model, &opts)
    {
        code = EXIT_USAGE;
    }
    // The process ends here: freeing a long trace's model and report piece by piece took
    // over a second on the 1,000,000-event trace, for memory the exit returns anyway.
    std::mem::forget(report);
    std::mem::forget(model);
    code
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
