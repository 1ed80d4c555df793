//! `doxascope import FILE [-o OUT.jsonl] [--format NAME]`: another tool's trace as v1.
//!
//! The format is detected from the content (`--format` insists on one). The v1 lines go to
//! `OUT` (or stdout); what the importer could not map exactly is listed on stderr, one note a
//! line, then a summary. Exit 0 on success, 1 when the source is broken or of no format
//! doxascope reads (one line saying what it looked like and where it broke), 2 when a file
//! cannot be read or written or an argument is wrong.

use std::fs::File;
use std::io::{self, BufRead, IsTerminal, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use crate::sanitize::sanitize;
use crate::trace::import::{Format, OpenError, Opened, open_path};
use crate::trace::{Item, ReaderConfig};

use super::{EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE};

/// Arguments of `import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The source: OpenTelemetry OTLP JSON (spans and log records; the Collector's file
    /// exporter), an Inspect AI log (.eval or .json), a Langfuse trace download, LangSmith
    /// runs, a Letta agent file (.af), Graphiti episodes or edges, a LangGraph SQLite
    /// checkpoint database, a mem0 history, or v1; `-` reads stdin.
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

/// Where the v1 lines are: in memory (a v1 source read as it came) or spooled by an
/// importer (read again from the spool, never held whole).
enum V1Text {
    Bytes(Vec<u8>),
    Spool(File),
}

impl V1Text {
    /// A reader from the start.
    fn reader(&mut self) -> io::Result<Box<dyn Read + '_>> {
        Ok(match self {
            V1Text::Bytes(b) => Box::new(&b[..]),
            V1Text::Spool(f) => {
                f.seek(SeekFrom::Start(0))?;
                Box::new(io::BufReader::with_capacity(1 << 20, &*f))
            }
        })
    }
}

/// Runs `import` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let shown = sanitize(&args.file.to_string_lossy());
    let (format, mut v1, notes) = match open_path(&args.file, args.format) {
        Ok(Opened::V1(mut r)) => {
            let mut bytes = Vec::new();
            if let Err(e) = r.read_to_end(&mut bytes) {
                eprintln!(
                    "doxascope import: {shown}: cannot read: {}",
                    sanitize(&e.to_string())
                );
                return EXIT_USAGE;
            }
            (Format::V1, V1Text::Bytes(bytes), Vec::new())
        }
        Ok(Opened::Imported(f, sp)) => (f, V1Text::Spool(sp.v1), sp.notes),
        Err(OpenError::Io(e)) => {
            eprintln!(
                "doxascope import: {shown}: cannot read: {}",
                sanitize(&e.to_string())
            );
            return EXIT_USAGE;
        }
        Err(OpenError::Import(e)) => {
            eprintln!("doxascope import: {shown}: {}", sanitize(&e.to_string()));
            return EXIT_PROBLEMS;
        }
    };
    match write_out(args, &mut v1) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return EXIT_OK,
        Err(e) => {
            let target = args
                .output
                .as_ref()
                .map_or("standard output".to_string(), |p| {
                    sanitize(&p.to_string_lossy())
                });
            eprintln!(
                "doxascope import: cannot write {target}: {}",
                sanitize(&e.to_string())
            );
            return EXIT_USAGE;
        }
    }
    let (events, sessions, bad_lines) = match v1.reader().map(count) {
        Ok(c) => c,
        Err(e) => {
            eprintln!(
                "doxascope import: {shown}: cannot read the converted lines again: {}",
                sanitize(&e.to_string())
            );
            return EXIT_USAGE;
        }
    };
    let notes: Vec<(String, String)> = notes
        .into_iter()
        .map(|n| (n.location, n.message))
        .chain(bad_lines)
        .collect();
    for (location, message) in &notes {
        eprintln!(
            "doxascope import: {shown}: note: {}: {}",
            sanitize(location),
            sanitize(message)
        );
    }
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

/// Writes the v1 lines to `-o OUT` or standard output (a terminal sees them sanitized).
fn write_out(args: &Args, v1: &mut V1Text) -> io::Result<()> {
    let mut src = v1.reader()?;
    match &args.output {
        Some(p) => {
            let mut f = io::BufWriter::new(File::create(p)?);
            io::copy(&mut src, &mut f)?;
            f.flush()
        }
        None => {
            let mut out = io::stdout().lock();
            if out.is_terminal() {
                // A person reads it: a bad line's raw escape sequence must not reach the
                // terminal (a file or a pipe gets the exact bytes).
                let mut src = io::BufReader::new(src);
                let mut line = Vec::new();
                while src.read_until(b'\n', &mut line)? > 0 {
                    out.write_all(shown_on_terminal(&line).as_bytes())?;
                    line.clear();
                }
            } else {
                io::copy(&mut src, &mut out)?;
            }
            out.flush()
        }
    }
}

/// Events and sessions of v1 text, and its lines that are not events (as notes: where, what):
/// a v1 source passes through unchanged, bad lines included, and they are said.
fn count(v1: impl Read) -> (u64, usize, Vec<(String, String)>) {
    let mut sessions = std::collections::HashSet::new();
    let mut events = 0;
    let mut bad = Vec::new();
    let _ = crate::trace::read_all("import", v1, ReaderConfig::default(), |i| match i {
        Item::Event(e) => {
            events += 1;
            if !sessions.contains(&*e.session) {
                sessions.insert(e.session.to_string());
            }
        }
        Item::Problem(p) => bad.push((
            format!("line {}, column {}", p.origin.line, p.column),
            match p.severity {
                crate::trace::Severity::Error => format!("not an event: {}", p.message),
                crate::trace::Severity::Warning => p.message.clone(),
            },
        )),
    });
    (events, sessions.len(), bad)
}

/// v1 text as shown on a terminal: each line whole (no length cap), its control characters
/// and escape sequences as visible markers, bytes that are not UTF-8 as `\xNN`.
fn shown_on_terminal(v1: &[u8]) -> String {
    let opts = crate::sanitize::Options {
        keep_newlines: false,
        max_bytes: usize::MAX,
    };
    let mut out = String::with_capacity(v1.len());
    for line in v1.split_inclusive(|&b| b == b'\n') {
        let (body, end) = match line.strip_suffix(b"\n") {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        for chunk in body.utf8_chunks() {
            out.push_str(&crate::sanitize::sanitize_with(chunk.valid(), opts));
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02X}"));
            }
        }
        out.push_str(end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_sees_escape_sequences_as_markers_and_every_line() {
        let v1 = b"{\"kind\":\"log\"}\nbad\x1b]0;pwned\x07 \xff\n";
        let shown = shown_on_terminal(v1);
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown:?}"
        );
        assert!(shown.starts_with("{\"kind\":\"log\"}\nbad"), "{shown:?}");
        assert!(shown.contains("\\xFF"), "{shown:?}");
        assert_eq!(shown.matches('\n').count(), 2);
    }
}
