//! `doxascope export FILE --at STEP --format dimacs|smtlib|prompt|agent-prompt|json
//! [--query φ] [--session NAME]`.
//!
//! Prints Σ, the beliefs active at the step, on stdout in the chosen format (see
//! [`crate::model::export`]). Steps are those of [`crate::model::timeline`]: step t is the
//! state after the session's first t events (for a trace whose `seq` runs 1, 2, 3, … that is
//! "after seq t"); `--at` defaults to the last step. Exit 0 on success, 2 for an unreadable
//! file, an unknown session, a step past the end or a bad option. Bad lines in the trace do
//! not stop the export: they are counted on stderr.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::model::Model;
use crate::model::export::{Format, Header, export};
use crate::sanitize::sanitize;

use super::{EXIT_OK, EXIT_USAGE};

/// The export formats on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormatArg {
    /// DIMACS CNF (Tseitin encoding, `c` comments map atoms and belief ids).
    Dimacs,
    /// SMT-LIB 2 (`declare-const` per atom, `assert` per belief).
    Smtlib,
    /// `- φ (source=S, p=0.90)` per belief (seed 000's export_prompt).
    Prompt,
    /// Seed 001's export_prompt: the ASSERT / QUERY / ANSWER instructions, every norm, and
    /// the beliefs relevant to --query.
    AgentPrompt,
    /// A JSON object with the beliefs.
    Json,
}

/// Arguments of `export`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The trace file (JSON Lines); `-` reads standard input.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The step: Σ after the session's first STEP events (default: the last step).
    #[arg(long, value_name = "STEP")]
    at: Option<u32>,
    /// The output format.
    #[arg(long, value_enum)]
    format: FormatArg,
    /// The session, when the file holds several.
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// With `--format agent-prompt`: list only the beliefs sharing a predicate, a constant or
    /// an atom with this formula (norms are always listed).
    #[arg(long, value_name = "φ")]
    query: Option<String>,
}

/// Runs `export` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let model = match Model::load(std::slice::from_ref(&args.file)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("doxascope export: {e}");
            return EXIT_USAGE;
        }
    };
    super::report_imports("export", &model);
    let tl = match model.pick_session(args.session.as_deref()) {
        Ok(t) => t,
        Err(m) => {
            eprintln!("doxascope export: {m}");
            return EXIT_USAGE;
        }
    };
    let step = args.at.unwrap_or(tl.len());
    if step > tl.len() {
        eprintln!(
            "doxascope export: step {step} is past the end of session {} ({} steps)",
            sanitize(tl.name()),
            tl.len()
        );
        return EXIT_USAGE;
    }
    if args.query.is_some() && args.format != FormatArg::AgentPrompt {
        eprintln!("doxascope export: --query only applies to --format agent-prompt");
        return EXIT_USAGE;
    }
    let query = match args.query.as_deref().map(crate::logic::parse::parse) {
        None => None,
        Some(Ok(f)) => Some(f),
        Some(Err(e)) => {
            eprintln!(
                "doxascope export: --query does not parse at column {}: {}",
                e.column,
                sanitize(&e.message)
            );
            return EXIT_USAGE;
        }
    };
    let problems = model.log().problems.len();
    if problems > 0 {
        eprintln!(
            "doxascope export: warning: {problems} line(s) of the trace have problems (see \
             `doxascope validate`)"
        );
    }
    let format = match args.format {
        FormatArg::Dimacs => Format::Dimacs,
        FormatArg::Smtlib => Format::Smtlib,
        FormatArg::Prompt => Format::Prompt,
        FormatArg::AgentPrompt => Format::AgentPrompt,
        FormatArg::Json => Format::Json,
    };
    let text = render(&model, tl, step, format, query.as_ref());
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => EXIT_OK,
        // A closed pipe (`| head`) is not an error worth a message.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            eprintln!("doxascope export: cannot write: {e}");
            EXIT_USAGE
        }
    }
}

/// Σ of session `tl` at `step` in `format`, as `export` prints it (prompt lines sanitized);
/// `query` narrows an agent prompt to the beliefs that bear on it. The MCP server's `export`
/// answers with the same text.
pub(crate) fn render(
    model: &Model,
    tl: &crate::model::Timeline,
    step: u32,
    format: Format,
    query: Option<&crate::logic::formula::Formula>,
) -> String {
    // Seed 000's export_prompt lists its KnowledgeBase, where an update overwrites in place.
    let sigma = match format {
        Format::Prompt => tl.sigma_in_kb_order(model.log(), step),
        _ => tl.sigma_at(model.log(), step),
    };
    let header = Header {
        session: tl.name(),
        step,
    };
    let text = match format {
        // A BDI session's JSON carries its whole BDI state beside Σ, and a session with
        // announcements seed 000's inconsistency log up to the step (one recomputation).
        Format::Json => {
            let bdi = (!tl.bdi_log().is_empty()).then(|| {
                let st = crate::model::bdi::state_at(tl.bdi_log(), model.log(), step);
                crate::model::export::bdi_json(&st, tl.bdi_log(), model.log())
            });
            let inconsistencies = (!tl.beliefs().is_empty())
                .then(|| model.recompute(tl.name(), &crate::model::RecomputeOptions::default()))
                .flatten()
                .map(|rc| {
                    let entries: Vec<serde_json::Value> =
                        crate::model::inconsistency::log(tl, model.log(), &rc)
                            .iter()
                            .filter(|e| e.step <= step)
                            .map(|e| e.to_json(step))
                            .collect();
                    serde_json::Value::Array(entries)
                });
            crate::model::export::json_full(&sigma, header, bdi, inconsistencies)
        }
        Format::AgentPrompt => crate::model::export::agent_prompt_of(&sigma, query),
        _ => export(&sigma, format, header),
    };
    // Prompt lines carry the agent's own text to a terminal: sanitize them. The other
    // formats are for tools and sanitize their free-text comments themselves; JSON escapes.
    match format {
        Format::Prompt | Format::AgentPrompt => {
            text.lines().map(|l| sanitize(l) + "\n").collect::<String>()
        }
        _ => text,
    }
}
