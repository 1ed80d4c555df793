//! `doxascope report FILE... -o report.html [--policy P] [--timeout SECS]`: one self-contained
//! HTML file to hand on (see [`crate::model::report`]): the summary, the claimed-vs-recomputed
//! table, per session a chart over the steps, every finding with its evidence and Σ at its
//! step, the retraction history and the notes kept beside the trace, and what it was made
//! from (each input's SHA-256, the version, the options) for `doxascope verify-report`.
//!
//! Exit 0 when the report was written, 2 for unusable input or arguments (a file that cannot
//! be read, a trace with no events, an output that cannot be written). Findings do not change
//! the exit status: `doxascope audit` is the check for CI.

use std::io::Write;
use std::path::PathBuf;

use crate::logic::revise::Policy;
use crate::model::Model;
use crate::model::audit::AuditOptions;
use crate::model::recompute::RecomputeOptions;
use crate::model::report::report;
use crate::sanitize::sanitize;

use super::{EXIT_OK, EXIT_USAGE};

/// Arguments of `report`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Trace files (JSON Lines).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The HTML file to write (`-`: standard output).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Re-run every revision with this policy (default: the policy each `revise` names).
    #[arg(long, value_name = "P", value_parser = ["greedy", "greedy-paper", "recency", "confidence", "reject", "flag"])]
    policy: Option<String>,
    /// Seconds one solver request may take before its verdict counts as not checkable.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
}

/// Runs `report` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let Some(timeout) = super::timeout_arg("report", args.timeout) else {
        return EXIT_USAGE;
    };
    let model = match Model::load(&args.files) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("doxascope report: {e}");
            return EXIT_USAGE;
        }
    };
    super::report_imports("report", &model);
    if model.timelines().is_empty() {
        eprintln!("doxascope report: no usable event in the input; run `doxascope validate`");
        return EXIT_USAGE;
    }
    let opts = AuditOptions {
        policy: args.policy.as_deref().and_then(Policy::parse),
        recompute: RecomputeOptions {
            timeout,
            ..RecomputeOptions::default()
        },
        ..AuditOptions::default()
    };
    let files: Vec<String> = args
        .files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let html = report(&model, &files, &opts);
    let written = if args.output.as_os_str() == "-" {
        std::io::stdout().lock().write_all(html.as_bytes())
    } else {
        std::fs::write(&args.output, html.as_bytes())
    };
    match written {
        Ok(()) => {
            if args.output.as_os_str() != "-" {
                eprintln!(
                    "doxascope report: wrote {} ({} bytes)",
                    sanitize(&args.output.display().to_string()),
                    html.len()
                );
            }
            EXIT_OK
        }
        Err(e) => {
            eprintln!(
                "doxascope report: cannot write {}: {e}",
                sanitize(&args.output.display().to_string())
            );
            EXIT_USAGE
        }
    }
}
