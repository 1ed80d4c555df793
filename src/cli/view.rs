//! `doxascope view [FILE...]` and the default form `doxascope FILE...`: the TUI.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{EXIT_OK, EXIT_USAGE};

/// Arguments of `view`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Trace files (JSON Lines); `-` reads standard input.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Read the files once instead of following them as they grow.
    #[arg(long)]
    no_follow: bool,
    /// Refuse to follow a path that is a symbolic link (by default a link is followed and
    /// its target shown, with a warning when it leaves the link's directory).
    #[arg(long)]
    no_follow_symlinks: bool,
    /// Open at this step (and pause following).
    #[arg(long, value_name = "STEP")]
    at: Option<u64>,
    /// Accept live sessions: `unix:PATH` (in a private directory) or `tcp:127.0.0.1:PORT`.
    #[arg(long, value_name = "ADDR")]
    listen: Option<crate::trace::live::ListenAddr>,
    /// The palette: dark or light (default: the config file's `theme`, else dark).
    #[arg(long, value_name = "NAME")]
    theme: Option<String>,
}

/// What the TUI is asked to do.
fn options(args: Args) -> crate::tui::Options {
    crate::tui::Options {
        files: args.files,
        follow: !args.no_follow,
        at: args.at,
        theme: args.theme,
        listen: args.listen,
        no_follow_symlinks: args.no_follow_symlinks,
        demo: None,
    }
}

/// Runs the TUI and returns the exit code.
pub(crate) fn run(args: Args) -> i32 {
    match crate::tui::run(options(args)) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            // Standard error may be the terminal that went away: never panic on it.
            let _ =
                std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("doxascope: {e}\n"));
            EXIT_USAGE
        }
    }
}

/// The default form: `doxascope FILE...` means `doxascope view FILE...`. The arguments are
/// rewritten when the first one is neither a subcommand nor an option.
pub(crate) fn with_default_view(mut args: Vec<OsString>, subcommands: &[&str]) -> Vec<OsString> {
    let first = args.get(1).and_then(|a| a.to_str()).map(str::to_string);
    if let Some(a) = first
        && (!a.starts_with('-') || a == "-")
        && !subcommands.contains(&a.as_str())
    {
        args.insert(1, "view".into());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn no_follow_symlinks_reaches_the_tui_options() {
        use clap::Parser;
        let on = Cli::parse_from(["view", "--no-follow-symlinks", "t.jsonl"]);
        assert!(options(on.args).no_follow_symlinks);
        let off = Cli::parse_from(["view", "t.jsonl"]);
        let o = options(off.args);
        assert!(!o.no_follow_symlinks && o.follow);
    }

    #[test]
    fn files_alone_mean_view() {
        let subs = ["view", "validate", "help"];
        assert_eq!(
            with_default_view(v(&["d", "t.jsonl"]), &subs),
            v(&["d", "view", "t.jsonl"])
        );
        assert_eq!(
            with_default_view(v(&["d", "-"]), &subs),
            v(&["d", "view", "-"])
        );
        assert_eq!(
            with_default_view(v(&["d", "validate", "x"]), &subs),
            v(&["d", "validate", "x"])
        );
        assert_eq!(
            with_default_view(v(&["d", "--help"]), &subs),
            v(&["d", "--help"])
        );
        assert_eq!(with_default_view(v(&["d"]), &subs), v(&["d"]));
    }
}
