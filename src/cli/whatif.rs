//! `doxascope whatif POLICY FILE... [--from STEP] [--at STEP] [--session NAME] [--json]
//! [--timeout SECS]`: the session's revisions re-run under another policy from a step, the
//! alternative Σ beside the real one, every later verdict or answer that would have changed,
//! and for each revision the other minimal repairs. The same answer as the REPL's `whatif`
//! (see [`crate::model::whatif`]).
//!
//! Exit 0 with the answer printed, 2 for unusable input or arguments.

use std::io::Write;
use std::path::PathBuf;

use crate::logic::revise::Policy;
use crate::repl::Command;
use crate::sanitize::sanitize;

use super::{EXIT_OK, EXIT_USAGE};

/// Arguments of `whatif`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The alternative policy: greedy, greedy-paper, recency, confidence, reject or flag.
    #[arg(value_name = "POLICY", value_parser = ["greedy", "greedy-paper", "recency", "confidence", "reject", "flag"])]
    policy: String,
    /// Trace files (JSON Lines); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The step from which the alternative policy decides (default 0: the whole session).
    #[arg(long, value_name = "STEP", default_value_t = 0)]
    from: u64,
    /// Show both Σs at this step (default: the last step).
    #[arg(long, value_name = "STEP")]
    at: Option<u64>,
    /// The session, when the files hold several.
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// Print the answer as one JSON object (the REPL's `whatif` reply).
    #[arg(long)]
    json: bool,
    /// Seconds one solver request may take before its answer counts as not checkable.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
    /// Seconds the whole walk may take; past them it stops and says at which step.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    budget: f64,
}

/// Runs `whatif` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let Some(timeout) = super::timeout_arg("whatif", args.timeout) else {
        return EXIT_USAGE;
    };
    let Some(policy) = Policy::parse(&args.policy) else {
        eprintln!("doxascope whatif: unknown policy");
        return EXIT_USAGE;
    };
    let mut repl = match super::repl_on("whatif", &args.files, args.session.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    repl.set_walk_timeout(timeout);
    let Some(budget) = super::history::budget(args.budget) else {
        eprintln!("doxascope whatif: --budget must be a positive number of seconds");
        return EXIT_USAGE;
    };
    repl.set_whatif_budget(budget);
    if let Some(at) = args.at
        && let Err(e) = repl.run(&Command::At(at))
    {
        eprintln!("doxascope whatif: {}", sanitize(&e.message));
        return EXIT_USAGE;
    }
    match repl.run(&Command::WhatIf {
        policy,
        from: args.from,
    }) {
        Ok(reply) => {
            let text = if args.json {
                reply.to_json("whatif").to_string()
            } else {
                reply.to_text()
            };
            // A closed pipe (`| head`) is not an error of the answer.
            let _ = writeln!(std::io::stdout().lock(), "{text}");
            EXIT_OK
        }
        Err(e) => {
            eprintln!("doxascope whatif: {}", sanitize(&e.to_text()));
            EXIT_USAGE
        }
    }
}
