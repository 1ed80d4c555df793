//! Importers: the traces other tools already write, turned into trace format v1.
//!
//! Every importer reads the whole source (bytes, as found on disk or received) and writes
//! v1 JSON lines, one event per line. Everything downstream (the reader, the model, the
//! audit, the TUI, `doxascope import -o`) then sees an ordinary v1 trace, so an imported run
//! is replayed, checked and shown by exactly the code that handles doxascope's own traces.
//!
//! Rules every importer keeps:
//! - **No invented logic.** A source that holds no formulas gives `belief`, `thought`,
//!   `answer`, `tool_call` (and the like) events with text, never an `announce` formula the
//!   source did not state.
//! - **Nothing lost silently.** What an importer cannot map is kept in the event's unknown
//!   fields or reported as an [`ImportNote`]; a broken source is an [`ImportError`] naming the
//!   format it looked like and where it broke.
//! - **Untrusted text.** Source strings are copied into v1 fields as they are; they are
//!   sanitized where they are drawn, like any trace string.
//!
//! Adding a format: a module here with `detect` and `import`, a [`Format`] variant, its arm
//! in [`detect`] and [`import`], a sample under `../shared/external-traces/` or
//! `tests/data/`, and a line in `docs/import.md`.

pub mod otlp;

use std::fmt;
use std::path::Path;

/// A trace format doxascope can open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// doxascope's own trace format v1 (JSON lines); read as is.
    V1,
    /// OpenTelemetry spans: OTLP JSON (files and the Collector's file exporter) and the
    /// SDKs' JSON span dumps ([`otlp`]).
    Otlp,
}

impl Format {
    /// Every format, in the order detection tries them.
    pub const ALL: &'static [Format] = &[Format::Otlp, Format::V1];

    /// The short name used on the command line (`--format NAME`) and in the header.
    pub fn name(self) -> &'static str {
        match self {
            Format::V1 => "v1",
            Format::Otlp => "otlp",
        }
    }

    /// Looks a format up by its short name.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == name)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A source turned into v1.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// v1 JSON lines, each ending in `\n`.
    pub v1: Vec<u8>,
    /// What the importer could not map exactly, with where it was in the source.
    pub notes: Vec<ImportNote>,
}

/// Something an importer kept only in part, or had to guess.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportNote {
    /// Where in the source: `line 3`, `samples[2].events[14]`, a span id.
    pub location: String,
    /// What happened, in one sentence.
    pub message: String,
}

/// A source that could not be imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// The format the source looked like (`None` when it looked like nothing known).
    pub format: Option<Format>,
    /// Where it broke: `line 3, column 17`, `samples[2]`, an entry of a ZIP.
    pub location: String,
    /// What was wrong, in one sentence.
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.format {
            Some(fmt_) => write!(
                f,
                "looks like {fmt_}, but at {}: {}",
                self.location, self.message
            ),
            None => write!(f, "{}: {}", self.location, self.message),
        }
    }
}

impl std::error::Error for ImportError {}

/// The format of a source, from its content first and its file name second. `head` is the
/// start of the file (a few KiB is enough for every format). A source that matches nothing
/// else is taken as v1, whose reader reports its lines' errors one by one.
pub fn detect(_path: &Path, head: &[u8]) -> Format {
    if otlp::detect(head) {
        return Format::Otlp;
    }
    Format::V1
}

/// Turns a whole source of format `format` into v1. `name` is the file (or stream) name, used
/// for session names and notes. V1 itself is returned unchanged.
pub fn import(format: Format, bytes: &[u8], name: &str) -> Result<Imported, ImportError> {
    match format {
        Format::Otlp => otlp::import(bytes, name),
        Format::V1 => Ok(Imported {
            v1: bytes.to_vec(),
            notes: Vec::new(),
        }),
    }
}
