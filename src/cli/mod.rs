//! The headless command line: subcommands, their output and their exit codes.
//!
//! Exit codes are shared by all subcommands: 0 success, 1 the input has problems (for
//! `validate`: at least one error; warnings alone do not fail), 2 unusable input or
//! arguments (a missing file, a bad option).
//!
//! Everything printed that came from a trace (file names, messages quoting the input) goes
//! through [`crate::sanitize`] first, so a hostile trace cannot drive the terminal.

mod audit;
mod completions;
mod demo;
mod diff;
mod export;
mod history;
mod import;
mod man;
mod mcp;
mod notes;
mod race;
mod repl;
mod report;
mod validate;
mod verify_report;
mod view;
mod whatif;

use std::ffi::OsString;

use clap::{Parser, Subcommand};

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: the input has problems.
pub const EXIT_PROBLEMS: i32 = 1;
/// Exit code: unusable input or arguments.
pub const EXIT_USAGE: i32 = 2;

/// doxascope: inspect the belief states of LLM agents.
///
/// Without a subcommand, `doxascope [OPTIONS] FILE...` is `doxascope view [OPTIONS] FILE...`:
/// the view's options are the top level's, in any order around the files.
#[derive(Debug, Parser)]
#[command(
    name = "doxascope",
    version,
    about,
    args_conflicts_with_subcommands = true,
    subcommand_value_name = "COMMAND",
    after_help = "Reads: doxascope's trace format v1 (JSON Lines); OpenTelemetry (OTLP JSON files \
of spans and log records, one request or one per line as the Collector's file exporter writes \
them, and the SDKs' span dumps; GenAI, OpenInference and Vercel AI SDK conventions); Inspect AI \
eval logs; Langfuse trace downloads; LangSmith runs; Letta agent files; Graphiti episodes and \
edges; LangGraph SQLite checkpoint databases; mem0 memory histories. Live: `--listen otlp:127.0.0.1:4318` is an OTLP/HTTP receiver (POST /v1/traces and \
/v1/logs, protobuf or JSON, gzip; Phoenix span annotations on POST /v1/span_annotations), `--listen unix:PATH` and `--listen tcp:127.0.0.1:PORT` take \
v1 lines.\n\n\
Run `doxascope FILE...` (or `doxascope view FILE...`) for the TUI; \
`doxascope COMMAND --help` for a command's options."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The default command's (`view`'s) arguments.
    #[command(flatten)]
    view: view::Args,
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
    /// Commands: announce, check, entails, why, whynot, consistent, retract, undo, reset,
    /// policy, at, diff, history, whatif, sigma, help, save (`help COMMAND` in the REPL
    /// explains each). With --json, exactly one JSON object per input line. When the files
    /// hold several sessions, --session NAME picks one (the error lists them).
    Repl(repl::Args),
    /// Replay traces, recompute every claim, and print the findings (exit 1 on any warning).
    Audit(audit::Args),
    /// Every step at which a formula changed status (entailed, contradicted, unknown, Σ
    /// inconsistent; announced, retracted, re-derived), with the event that caused it.
    ///
    /// For each entailed stretch a minimal support is shown. The session's change points are
    /// indexed once and only the steps that can change the formula's status are solved.
    History(history::Args),
    /// What differs between two runs of the same task (exit 1 when something does).
    ///
    /// Aligns the runs by step, plan step or formula, then lists beliefs only in one run,
    /// beliefs with another status at the end, verdicts that differ, the first step where
    /// the runs' Σ diverge, and the tool calls (tool, args, result, status), model calls,
    /// thoughts, answers, scores and errors that differ. `--json` for CI.
    Diff(diff::Args),
    /// Re-run a session's revisions under another policy from a step.
    ///
    /// Shows the alternative Σ beside the real one, every later verdict or answer that would
    /// have changed, and for each revision the other minimal repairs with what each keeps.
    Whatif(whatif::Args),
    /// List, add or remove the bookmarks and notes kept beside a trace (never in it).
    ///
    /// Notes live in FILE.notes.json next to the trace, or in the user's data directory when
    /// the trace's directory is not writable.
    Notes(notes::Args),
    /// Write one self-contained HTML report to hand on (no network, no scripts).
    ///
    /// The summary, the claimed-vs-recomputed table, per session a chart of Σ's size,
    /// verdicts, retractions and findings over the steps, every finding with its evidence and
    /// Σ at its step, the retraction history, and the notes kept beside the trace; then the
    /// SHA-256 of each input, the version and the options, with a record of every finding
    /// and verdict that `doxascope verify-report` re-checks.
    Report(report::Args),
    /// Say whether a report still holds: its inputs' SHA-256 and the recomputed findings
    /// and verdicts.
    ///
    /// Hashes the trace files, recomputes the audit with the options the report names, and
    /// lists every input, finding or verdict that differs. Exit 0 when the report holds, 1
    /// when something differs, 2 when the report has no re-check record or a file cannot be
    /// read.
    VerifyReport(verify_report::Args),
    /// The TUI over trace files (the default: `doxascope FILE...`).
    View(view::Args),
    /// Write another tool's trace (OpenTelemetry/OTLP, Inspect AI, Langfuse, LangSmith,
    /// Letta, Graphiti, LangGraph checkpoints, mem0) as v1.
    ///
    /// The format is detected from the content; notes on what could not be mapped exactly
    /// go to stderr. OpenTelemetry: OTLP JSON of spans and log records (one
    /// `ExportTraceServiceRequest` / `ExportLogsServiceRequest` document, or one per line as
    /// the Collector's file exporter writes them) and the SDKs' span dumps. Exit 0 on success, 1 when the source is broken or of an unknown
    /// format, 2 when a file cannot be read or written.
    Import(import::Args),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    ///
    /// bash: `doxascope completions bash > ~/.local/share/bash-completion/completions/doxascope`;
    /// zsh: `doxascope completions zsh > ~/.zfunc/_doxascope` (with `~/.zfunc` in `fpath`);
    /// fish: `doxascope completions fish > ~/.config/fish/completions/doxascope.fish`.
    Completions(completions::Args),
    /// Serve doxascope's questions to a coding agent: an MCP server over stdio.
    ///
    /// Tools: sigma, why, whynot, entails, history, audit, findings, diff, whatif, export;
    /// each takes `trace` (a path, any format doxascope reads), optional `session` and
    /// `step`. Results are text with the JSON alongside. See docs/mcp.md for the wiring.
    Mcp(mcp::Args),
    /// Print the manual page (roff): `doxascope man > doxascope.1`; `doxascope man COMMAND`
    /// for one command's page.
    Man(man::Args),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    run(std::env::args_os().collect())
}

/// Runs the command line on `args` (the program name first) and returns the exit code.
fn run(args: Vec<OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Some(Command::Validate(args)) => validate::run(&args),
        Some(Command::Demo(args)) => demo::run(&args),
        Some(Command::Export(args)) => export::run(&args),
        Some(Command::Repl(args)) => repl::run(&args),
        Some(Command::Audit(args)) => audit::run(&args),
        Some(Command::History(args)) => history::run(&args),
        Some(Command::Diff(args)) => diff::run(&args),
        Some(Command::Whatif(args)) => whatif::run(&args),
        Some(Command::Notes(args)) => notes::run(&args),
        Some(Command::Report(args)) => report::run(&args),
        Some(Command::VerifyReport(args)) => verify_report::run(&args),
        Some(Command::View(args)) => view::run(args),
        Some(Command::Import(args)) => import::run(&args),
        Some(Command::Completions(args)) => completions::run(&args, command()),
        Some(Command::Man(args)) => man::run(&args, command()),
        Some(Command::Mcp(args)) => mcp::run(&args),
        None if cli.view.is_empty() => {
            // Bare `doxascope`: the overview, as a usage error (nothing was asked).
            let _ = command().write_help(&mut std::io::stderr());
            EXIT_USAGE
        }
        None => match view::typo_of_command(&cli.view, &subcommand_names()) {
            Some(msg) => {
                eprintln!("doxascope: {msg}");
                EXIT_USAGE
            }
            None => view::run(cli.view),
        },
    }
}

/// Prints the config file's problems on stderr, before a TUI takes the screen: on the
/// status line they would be overwritten within a frame. They stay readable above the shell
/// prompt once the TUI exits, and the TUI keeps them too ([`crate::tui::app::App`]'s
/// `config_warnings`).
fn config_warnings_to_stderr() {
    let config = crate::tui::theme::Config::load();
    if config.warnings.is_empty() {
        return;
    }
    let path = crate::tui::theme::Config::path()
        .map(|p| crate::sanitize::sanitize(&p.display().to_string()))
        .unwrap_or_default();
    for w in &config.warnings {
        let w = w.strip_prefix("config: ").unwrap_or(w);
        eprintln!("doxascope: warning: {path}: {w}");
    }
}

/// `--timeout SECS` as a budget; prints the error and returns `None` when it is not a positive
/// number of seconds.
fn timeout_arg(command: &str, secs: f64) -> Option<std::time::Duration> {
    let b = history::budget(secs);
    if b.is_none() {
        eprintln!("doxascope {command}: --timeout must be a positive number of seconds");
    }
    b
}

/// A REPL over one session of trace files, for the subcommands that answer one REPL question
/// (`history`, `whatif`); `Err` is the exit code after the message was printed.
fn repl_on(
    command: &str,
    files: &[std::path::PathBuf],
    session: Option<&str>,
) -> Result<crate::repl::Repl, i32> {
    let model = crate::model::Model::load(files).map_err(|e| {
        eprintln!("doxascope {command}: {e}");
        EXIT_USAGE
    })?;
    report_imports(command, &model);
    let name = model
        .pick_session(session)
        .map(|t| t.name().to_string())
        .map_err(|m| {
            eprintln!("doxascope {command}: {m}");
            EXIT_USAGE
        })?;
    let problems = model.log().problems.len();
    if problems > 0 {
        eprintln!(
            "doxascope {command}: warning: {problems} line(s) of the trace have problems (see \
             `doxascope validate`)"
        );
    }
    Ok(crate::repl::Repl::new(Box::new(
        crate::repl::ModelSigma::new(std::sync::Arc::new(model), name),
    )))
}

/// Says on stderr which files `cmd` read through an importer, with their notes' count.
fn report_imports(cmd: &str, model: &crate::model::Model) {
    for f in model.imported() {
        let n = f.notes.len();
        eprintln!(
            "doxascope {cmd}: {}: read as {} ({}){}",
            crate::sanitize::sanitize(&f.path),
            f.format.title(),
            f.format.name(),
            if n == 0 {
                String::new()
            } else {
                format!(
                    ", {n} note{} (`doxascope import` lists them)",
                    if n == 1 { "" } else { "s" }
                )
            }
        );
    }
}

/// The whole command-line definition (for help, completions and the typo check).
fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// The subcommands' names, `help` included.
fn subcommand_names() -> Vec<String> {
    command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .chain(["help".to_string()])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        let mut v = vec!["doxascope"];
        v.extend_from_slice(args);
        Cli::try_parse_from(v).expect("parses")
    }

    #[test]
    fn view_options_go_anywhere_in_the_bare_form() {
        for args in [
            &["--theme", "light", "--at", "5", "--no-follow", "t.jsonl"][..],
            &["t.jsonl", "--no-follow", "--at", "5", "--theme", "light"],
            &["--at", "5", "t.jsonl", "--theme=light", "--no-follow"],
        ] {
            let cli = parse(args);
            assert!(cli.command.is_none(), "{args:?}");
            assert_eq!(
                cli.view.debug_summary(),
                "[t.jsonl] no_follow at=5 theme=light"
            );
        }
        let cli = parse(&[
            "view",
            "--at",
            "5",
            "--theme",
            "light",
            "--no-follow",
            "t.jsonl",
        ]);
        match cli.command {
            Some(Command::View(v)) => {
                assert_eq!(v.debug_summary(), "[t.jsonl] no_follow at=5 theme=light")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn subcommands_still_win_over_files() {
        assert!(matches!(
            parse(&["validate", "x"]).command,
            Some(Command::Validate(_))
        ));
        assert!(matches!(
            parse(&["completions", "bash"]).command,
            Some(Command::Completions(_))
        ));
        let cli = parse(&["-"]);
        assert!(cli.command.is_none());
        assert_eq!(cli.view.debug_summary(), "[-]");
    }
}
