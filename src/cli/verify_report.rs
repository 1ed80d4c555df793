//! `doxascope verify-report REPORT.html FILE...`: whether a report still holds (see
//! [`crate::model::recheck`]): the inputs' SHA-256 match the report's, and recomputing the
//! audit with the report's options gives the same findings and verdicts.
//!
//! Exit 0 when it holds, 1 when something differs (each difference named on stdout), 2 when
//! the report has no record or cannot be read, or the traces cannot be loaded.

use std::path::PathBuf;

use crate::model::recheck::verify;
use crate::sanitize::sanitize;

use super::{EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE};

/// Arguments of `verify-report`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 when the report holds, 1 when an input's hash, a finding or a \
verdict differs (each named), 2 when the report has no re-check record or a file cannot be read."
)]
pub(crate) struct Args {
    /// The HTML report written by `doxascope report`.
    #[arg(value_name = "REPORT")]
    report: PathBuf,
    /// The trace files the report was made from, in the same order.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Runs `verify-report` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let shown = sanitize(&args.report.display().to_string());
    let html = match std::fs::read_to_string(&args.report) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("doxascope verify-report: cannot read {shown}: {e}");
            return EXIT_USAGE;
        }
    };
    let files: Vec<String> = args
        .files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let v = match verify(&html, &files) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("doxascope verify-report: {shown}: {}", sanitize(&e));
            return EXIT_USAGE;
        }
    };
    for n in &v.notes {
        println!("note: {}", sanitize(n));
    }
    if v.holds {
        println!(
            "{shown} holds: the inputs' SHA-256 match and recomputing gives the same findings \
             and verdicts"
        );
        EXIT_OK
    } else {
        println!(
            "{shown} does not hold: {} difference(s)",
            v.differences.len()
        );
        for d in &v.differences {
            println!("  {}", sanitize(d));
        }
        EXIT_PROBLEMS
    }
}
