//! `doxascope man [COMMAND]`: the manual page (roff) on stdout, made from the same definition
//! that parses the command line.

use std::io::Write;

use super::{EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE};

/// Arguments of `man`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A command's own page (`doxascope-validate(1)`), instead of the overview.
    #[arg(value_name = "COMMAND")]
    command: Option<String>,
}

/// Writes the page: `doxascope man > doxascope.1`, `doxascope man audit > doxascope-audit.1`.
pub(crate) fn run(args: &Args, mut cmd: clap::Command) -> i32 {
    cmd.build();
    let (page, title) = match &args.command {
        None => (cmd, "doxascope".to_string()),
        Some(name) => {
            let Some(sub) = cmd.find_subcommand(name) else {
                eprintln!(
                    "doxascope man: no command {:?}",
                    crate::sanitize::sanitize(name)
                );
                return EXIT_USAGE;
            };
            // `build` gave it the bin name `doxascope NAME`, which the synopsis shows.
            (sub.clone(), format!("doxascope-{}", sub.get_name()))
        }
    };
    let mut roff = Vec::new();
    if let Err(e) = clap_mangen::Man::new(page).title(title).render(&mut roff) {
        eprintln!("doxascope man: {e}");
        return EXIT_PROBLEMS;
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(&roff).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("doxascope man: {e}");
            EXIT_PROBLEMS
        }
    }
}
