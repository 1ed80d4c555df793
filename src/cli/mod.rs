//! The headless command line: subcommands, their output and their exit codes.

use clap::Parser;

/// doxascope: inspect the belief states of LLM agents.
#[derive(Debug, Parser)]
#[command(name = "doxascope", version, about)]
struct Cli {}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    match Cli::try_parse() {
        Ok(Cli {}) => 0,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            code
        }
    }
}
