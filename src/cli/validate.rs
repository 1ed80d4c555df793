//! `doxascope validate FILE...`: every problem of every line, then a summary.
//!
//! Problems go to stdout (they are the command's result), one per line, as
//! `FILE:LINE:COLUMN: SEVERITY: MESSAGE`, the shape compilers use so editors can jump to them.
//! Files that cannot be opened are reported on stderr and make the exit code 2, but the other
//! files are still checked. Files of other tools are read through their importer
//! ([`crate::trace::import`]): which one is printed with its notes, then the v1 it made is
//! checked; a broken or unknown file is one error line.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use crate::sanitize::{sanitize, sanitize_bytes};
use crate::trace::import::{Format, OpenError, Opened, open_path};
use crate::trace::{Item, Reader, ReaderConfig, Severity};

use super::{EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE};

/// Arguments of `validate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Trace files: v1 JSON Lines, or another tool's trace (read through its importer, see
    /// `doxascope import`); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Lines longer than this many bytes are reported and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = crate::trace::DEFAULT_MAX_LINE_BYTES,
          value_parser = clap::value_parser!(usize))]
    max_line_bytes: usize,
    /// Read the files as this format instead of detecting it (`v1` for a trace whose start
    /// looks like binary data, such as the NULs `copytruncate` leaves).
    #[arg(long, value_name = "NAME", value_parser = super::import::parse_format)]
    format: Option<Format>,
}

/// Why checking one stream stopped early.
enum Failure {
    /// The input could not be read (the file is unusable).
    Read(io::Error),
    /// The report could not be written.
    Write(io::Error),
}

#[derive(Default)]
struct Totals {
    events: u64,
    errors: u64,
    warnings: u64,
    files: u64,
    unreadable: u64,
    /// The formats of the files read through an importer.
    imported: Vec<&'static str>,
}

/// Runs `validate` and returns the exit code.
pub(crate) fn run(args: &Args) -> i32 {
    let cfg = ReaderConfig {
        max_line_bytes: args.max_line_bytes.max(1),
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut totals = Totals::default();
    for path in &args.files {
        let stdin = path.as_os_str() == "-";
        let shown = if stdin {
            "<stdin>".to_string()
        } else {
            sanitize_bytes(path.as_os_str().as_encoded_bytes())
        };
        let name = if stdin {
            "<stdin>".to_string()
        } else {
            path.to_string_lossy().into_owned()
        };
        let result = match open_path(path, args.format) {
            Ok(Opened::V1(r)) => check(&name, &shown, r, cfg, &mut out, &mut totals),
            Ok(Opened::Imported(format, imp)) => {
                totals.imported.push(format.name());
                imported(&shown, format, &imp.notes, &mut out)
                    .map_err(Failure::Write)
                    .and_then(|()| {
                        // The importer's output is checked like any v1 (it should be
                        // clean); its problems name the file as converted.
                        let as_v1 = format!("{name} (as v1)");
                        let shown_v1 = format!("{shown} (as v1)");
                        let r = imp.reader().map_err(Failure::Read)?;
                        let r = std::io::BufReader::with_capacity(1 << 20, r);
                        check(&as_v1, &shown_v1, r, cfg, &mut out, &mut totals)
                    })
            }
            Err(OpenError::Io(e)) => Err(Failure::Read(e)),
            Err(OpenError::Import(e)) => {
                totals.errors += 1;
                writeln!(out, "{shown}: error: {}", sanitize(&e.to_string()))
                    .map_err(Failure::Write)
            }
        };
        match result {
            Ok(()) => totals.files += 1,
            Err(Failure::Read(e)) => {
                let _ = out.flush();
                eprintln!("{shown}: cannot read: {}", sanitize(&e.to_string()));
                totals.unreadable += 1;
            }
            // The reader of our output went away (`validate ... | head`): nothing left to do.
            Err(Failure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => return EXIT_USAGE,
            Err(Failure::Write(e)) => {
                eprintln!("doxascope: cannot write the report: {e}");
                return EXIT_USAGE;
            }
        }
    }
    let plural = |n: u64, one: &str, many: &str| {
        if n == 1 {
            format!("{n} {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let mut summary = format!(
        "{}, {}, {} in {}",
        plural(totals.events, "event", "events"),
        plural(totals.errors, "error", "errors"),
        plural(totals.warnings, "warning", "warnings"),
        plural(totals.files, "file", "files"),
    );
    if !totals.imported.is_empty() {
        let mut names = totals.imported.clone();
        names.sort_unstable();
        names.dedup();
        summary.push_str(&format!(
            " ({} imported: {})",
            plural(totals.imported.len() as u64, "file", "files"),
            names.join(", ")
        ));
    }
    if totals.unreadable > 0 {
        summary.push_str(&format!(
            " ({} could not be read)",
            plural(totals.unreadable, "file", "files")
        ));
    }
    let _ = writeln!(out, "{summary}");
    let _ = out.flush();
    if totals.unreadable > 0 {
        EXIT_USAGE
    } else if totals.errors > 0 {
        EXIT_PROBLEMS
    } else {
        EXIT_OK
    }
}

/// Says which importer read a file, and its notes (`FILE: note: WHERE: WHAT`; notes are
/// neither errors nor warnings: the source was read, with these caveats).
fn imported(
    shown: &str,
    format: crate::trace::import::Format,
    notes: &[crate::trace::import::ImportNote],
    out: &mut impl Write,
) -> io::Result<()> {
    writeln!(
        out,
        "{shown}: read as {} ({})",
        format.title(),
        format.name()
    )?;
    for n in notes {
        writeln!(
            out,
            "{shown}: note: {}: {}",
            sanitize(&n.location),
            sanitize(&n.message)
        )?;
    }
    Ok(())
}

/// Reads one stream, printing its problems as they are found (memory stays flat whatever the
/// file size: events are counted, not kept).
fn check(
    name: &str,
    shown: &str,
    mut input: impl io::Read,
    cfg: ReaderConfig,
    out: &mut impl Write,
    totals: &mut Totals,
) -> Result<(), Failure> {
    let mut reader = Reader::new(name, cfg);
    let mut buf = vec![0u8; 1 << 20];
    let mut items = Vec::new();
    let mut done = false;
    while !done {
        let n = match input.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Read(e)),
        };
        if n == 0 {
            reader.finish(&mut items);
            done = true;
        } else {
            reader.feed(&buf[..n], &mut items);
        }
        for item in items.drain(..) {
            match item {
                Item::Event(_) => totals.events += 1,
                Item::Problem(p) => {
                    match p.severity {
                        Severity::Error => totals.errors += 1,
                        Severity::Warning => totals.warnings += 1,
                    }
                    writeln!(
                        out,
                        "{shown}:{}:{}: {}: {}",
                        p.origin.line,
                        p.column,
                        p.severity,
                        sanitize(&p.message)
                    )
                    .map_err(Failure::Write)?;
                }
            }
        }
    }
    Ok(())
}
