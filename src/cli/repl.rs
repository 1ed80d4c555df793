//! `doxascope repl [FILE...] [--at STEP] [--json] [--session NAME] [--policy P]`.
//!
//! Reads commands (contract §4) from standard input, one per line, and answers each on
//! standard output: human-readable text, or with `--json` exactly one JSON object per input
//! line (a blank line gets an error object too, so that answers and questions stay aligned).
//! A failing command is an answer with `ok: false`; the session goes on. Exit 0 at end of
//! input, 2 when the trace cannot be loaded or the arguments are wrong.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use crate::logic::revise::Policy;
use crate::model::Model;
use crate::repl::{Command, EmptyTrace, ModelSigma, Repl};
use crate::sanitize::sanitize;
use crate::trace::notes::NoteStore;

use super::{EXIT_OK, EXIT_USAGE};

/// Arguments of `repl`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Trace files (JSON Lines); none starts from an empty Σ.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Start at this step (default: the last step of the session).
    #[arg(long, value_name = "STEP")]
    at: Option<u64>,
    /// One JSON object per input line.
    #[arg(long)]
    json: bool,
    /// The session, when the trace holds several.
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// The revision policy for contradicting announcements.
    #[arg(long, value_name = "POLICY", value_parser = parse_policy, default_value = "greedy")]
    policy: Policy,
}

fn parse_policy(s: &str) -> Result<Policy, String> {
    Policy::parse(s)
        .ok_or_else(|| format!("expected greedy, recency, confidence, reject or flag, found {s}"))
}

/// Runs `repl` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    if args.files.is_empty() {
        return serve(args, Repl::new(Box::new(EmptyTrace)));
    }
    let model = match Model::load(&args.files) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("doxascope repl: {e}");
            return EXIT_USAGE;
        }
    };
    super::report_imports("repl", &model);
    let session = match model.pick_session(args.session.as_deref()) {
        Ok(t) => t.name().to_string(),
        Err(m) => {
            eprintln!("doxascope repl: {m}");
            return EXIT_USAGE;
        }
    };
    let problems = model.log().problems.len();
    if problems > 0 {
        eprintln!(
            "doxascope repl: warning: {problems} line(s) of the trace have problems (see \
             `doxascope validate`)"
        );
    }
    // Bookmarks and notes are kept beside the file the session was read from.
    let notes = model.file_of(&session).map(NoteStore::open);
    let mut repl = Repl::new(Box::new(ModelSigma::new(Arc::new(model), session)));
    if let Some(n) = notes {
        repl.set_note_store(n);
    }
    serve(args, repl)
}

/// Answers the commands on standard input.
fn serve(args: &Args, mut repl: Repl) -> i32 {
    repl.set_policy(args.policy);
    if let Some(at) = args.at {
        if let Err(e) = repl.run(&Command::At(at)) {
            eprintln!("doxascope repl: {}", sanitize(&e.message));
            return EXIT_USAGE;
        }
    }
    let interactive = io::stdin().is_terminal() && !args.json;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let prompt = |repl: &Repl| {
        if interactive {
            eprint!("doxascope [step {}]> ", repl.step());
            let _ = io::stderr().flush();
        }
    };
    prompt(&repl);
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else {
            eprintln!("doxascope repl: standard input is not valid UTF-8");
            return EXIT_USAGE;
        };
        let trimmed = line.trim();
        if !args.json && (trimmed.is_empty() || trimmed.starts_with('#')) {
            prompt(&repl);
            continue;
        }
        if matches!(trimmed, "quit" | "exit") && !args.json {
            break;
        }
        let result = repl.run_line(&line);
        let notes = repl.take_notes();
        let text = if args.json {
            let mut v = match &result {
                Ok(reply) => reply.to_json(command_word(&line)),
                Err(e) => e.to_json(),
            };
            if !notes.is_empty() {
                v["notes"] = serde_json::json!(notes);
            }
            v.to_string()
        } else {
            let mut s = String::new();
            for n in &notes {
                s.push_str(&format!("note: {}\n", sanitize(n)));
            }
            s.push_str(&match &result {
                Ok(reply) => reply.to_text(),
                Err(e) => e.to_text(),
            });
            s
        };
        if writeln!(out, "{text}").and_then(|()| out.flush()).is_err() {
            // The reader went away (a closed pipe): nothing more to answer.
            return EXIT_OK;
        }
        prompt(&repl);
    }
    EXIT_OK
}

/// The command word of a line (for the `command` field of a reply).
fn command_word(line: &str) -> &str {
    line.trim_start()
        .trim_start_matches(':')
        .split_whitespace()
        .next()
        .unwrap_or("")
}
