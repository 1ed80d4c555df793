//! `doxascope history FORMULA FILE... [--session NAME] [--json] [--timeout SECS]`: every step
//! at which a formula (or a belief id's formula) changed status over a session, with the event
//! that caused each change and a minimal support for each entailed stretch. The same answer as
//! the REPL's `history` (see [`crate::model::history`]).
//!
//! Exit 0 with the history printed, 2 for unusable input or arguments (a formula that does not
//! parse, an unknown session).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use crate::repl::{Command, FormulaArg};
use crate::sanitize::sanitize;

use super::{EXIT_OK, EXIT_USAGE};

/// Arguments of `history`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The formula (contract §3 syntax), or a belief id of the session.
    #[arg(value_name = "FORMULA")]
    formula: String,
    /// Trace files (JSON Lines); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The session, when the files hold several.
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// Print the history as one JSON object (the REPL's `history` reply).
    #[arg(long)]
    json: bool,
    /// Seconds one solver request may take before that step counts as not checkable.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,
}

/// Runs `history` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let Some(timeout) = super::timeout_arg("history", args.timeout) else {
        return EXIT_USAGE;
    };
    let mut repl = match super::repl_on("history", &args.files, args.session.as_deref()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    repl.set_walk_timeout(timeout);
    let cmd = Command::History(FormulaArg {
        text: args.formula.clone(),
        column: 1,
    });
    match repl.run(&cmd) {
        Ok(reply) => {
            let text = if args.json {
                reply.to_json("history").to_string()
            } else {
                reply.to_text()
            };
            // A closed pipe (`| head`) is not an error of the answer.
            let _ = writeln!(std::io::stdout().lock(), "{text}");
            EXIT_OK
        }
        Err(e) => {
            eprintln!("doxascope history: {}", sanitize(&e.to_text()));
            EXIT_USAGE
        }
    }
}

/// Seconds as a budget, or `None` (with a message) when they are not a positive number.
pub(crate) fn budget(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs > 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}
