//! The headless command line: subcommands, their output and their exit codes.
//!
//! Exit codes are shared by all subcommands: 0 success, 1 the input has problems (for
//! `validate`: at least one error; warnings alone do not fail), 2 unusable input or
//! arguments (a missing file, a bad option).
//!
//! Everything printed that came from a trace (file names, messages quoting the input) goes
//! through [`crate::sanitize`] first, so a hostile trace cannot drive the terminal.

mod audit;
mod demo;
mod export;
mod repl;
mod validate;

use clap::{Parser, Subcommand};

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: the input has problems.
pub const EXIT_PROBLEMS: i32 = 1;
/// Exit code: unusable input or arguments.
pub const EXIT_USAGE: i32 = 2;

/// doxascope: inspect the belief states of LLM agents.
#[derive(Debug, Parser)]
#[command(name = "doxascope", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check every line of trace files against the trace format v1.
    ///
    /// Prints `FILE:LINE:COLUMN: error|warning: MESSAGE` for every problem and a summary line.
    /// Exit 0 when there are no errors (warnings allowed), 1 if any line has an error, 2 if a
    /// file cannot be read.
    Validate(validate::Args),
    /// The belief-revision demo (seed 003): a synthetic world and a simulated agent.
    ///
    /// Plays a dialogue live, writes it as a trace (`--headless --out FILE`), or prints
    /// baseline vs solver in the shape of seed 003's Table 1 (`--eval --dialogues N`).
    Demo(demo::Args),
    /// Print Σ (the active beliefs) at a step as DIMACS, SMT-LIB, a prompt list or JSON.
    Export(export::Args),
    /// The REPL without the TUI: commands on stdin, one result per command on stdout.
    ///
    /// Commands (contract §4): announce, check, entails, why, whynot, consistent, retract,
    /// undo, reset, policy, at, diff, sigma, help, save. With --json, exactly one JSON object
    /// per input line.
    Repl(repl::Args),
    /// Replay traces, recompute every claim, and print the findings (exit 1 on any warning).
    Audit(audit::Args),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::Demo(args) => demo::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Repl(args) => repl::run(&args),
        Command::Audit(args) => audit::run(&args),
    }
}
