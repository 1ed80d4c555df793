//! `doxascope import FILE [-o OUT.jsonl] [--format NAME]`: another tool's trace as v1.
//!
//! The format is detected from the content (`--format` insists on one). The v1 lines go to
//! `OUT` (or stdout); what the importer could not map exactly is listed on stderr, one note a
//! line, then a summary. Exit 0 on success, 1 when the source is broken or of no format
//! doxascope reads (one line saying what it looked like and where it broke), 2 when a file
//! cannot be read or written or an argument is wrong.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use crate::sanitize::sanitize;
use crate::trace::import::{Format, OpenError, Opened, open_path};
use crate::trace::{Item, Reader, ReaderConfig};

use super::{EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE};

/// Arguments of `import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The source: an Inspect AI log (.eval or .json), a Langfuse trace download, LangSmith
    /// runs, a Letta agent file (.af), Graphiti episodes or edges, a LangGraph SQLite
    /// checkpoint database, a mem0 history, OpenTelemetry spans, or v1; `-` reads stdin.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Write the v1 lines here instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Read the source as this format instead of detecting it.
    #[arg(long, value_name = "NAME", value_parser = parse_format)]
    format: Option<Format>,
}

/// `--format NAME`.
pub(crate) fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).ok_or_else(|| format!("expected one of {}, found {s}", Format::names()))
}

/// Runs `import` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let shown = sanitize(&args.file.to_string_lossy());
    let (format, v1, notes) = match open_path(&args.file, args.format) {
        Ok(Opened::V1(mut r)) => {
            let mut bytes = Vec::new();
            if let Err(e) = r.read_to_end(&mut bytes) {
                eprintln!("doxascope import: {shown}: cannot read: {e}");
                return EXIT_USAGE;
            }
            (Format::V1, bytes, Vec::new())
        }
        Ok(Opened::Imported(f, imp)) => (f, imp.v1, imp.notes),
        Err(OpenError::Io(e)) => {
            eprintln!("doxascope import: {shown}: cannot read: {e}");
            return EXIT_USAGE;
        }
        Err(OpenError::Import(e)) => {
            eprintln!("doxascope import: {shown}: {}", sanitize(&e.to_string()));
            return EXIT_PROBLEMS;
        }
    };
    let written = match &args.output {
        Some(p) => std::fs::write(p, &v1),
        None => {
            let mut out = io::stdout().lock();
            out.write_all(&v1).and_then(|()| out.flush())
        }
    };
    match written {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return EXIT_OK,
        Err(e) => {
            let target = args
                .output
                .as_ref()
                .map_or("standard output".to_string(), |p| {
                    sanitize(&p.to_string_lossy())
                });
            eprintln!("doxascope import: cannot write {target}: {e}");
            return EXIT_USAGE;
        }
    }
    for n in &notes {
        eprintln!(
            "doxascope import: {shown}: note: {}: {}",
            sanitize(&n.location),
            sanitize(&n.message)
        );
    }
    let (events, sessions) = count(&v1);
    eprintln!(
        "doxascope import: {shown}: read as {} ({}): {events} event{} in {sessions} session{}, {} note{}",
        format.title(),
        format.name(),
        if events == 1 { "" } else { "s" },
        if sessions == 1 { "" } else { "s" },
        notes.len(),
        if notes.len() == 1 { "" } else { "s" },
    );
    EXIT_OK
}

/// Events and sessions of v1 text.
fn count(v1: &[u8]) -> (u64, usize) {
    let mut r = Reader::new("import", ReaderConfig::default());
    let mut items = Vec::new();
    r.feed(v1, &mut items);
    r.finish(&mut items);
    let mut sessions = std::collections::HashSet::new();
    let mut events = 0;
    for i in &items {
        if let Item::Event(e) = i {
            events += 1;
            sessions.insert(e.session.to_string());
        }
    }
    (events, sessions.len())
}
