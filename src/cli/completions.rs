//! `doxascope completions SHELL`: a completion script for the shell on stdout.

use std::io::Write;

use clap_complete::Shell;

use super::{EXIT_OK, EXIT_PROBLEMS};

/// Arguments of `completions`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

/// Writes the script for `args.shell`, generated from the same definition that parses the
/// command line, so completions never drift from the options.
pub(crate) fn run(args: &Args, mut cmd: clap::Command) -> i32 {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "doxascope", &mut script);
    let mut out = std::io::stdout().lock();
    match out.write_all(&script).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        // A closed pipe or a full disk: the script is incomplete, which the caller must know.
        Err(e) => {
            eprintln!("doxascope completions: {e}");
            EXIT_PROBLEMS
        }
    }
}
