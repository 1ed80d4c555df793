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

pub mod budget;
pub mod graphiti;
pub mod inspect;
pub mod langfuse;
pub mod langgraph;
pub mod langsmith;
pub mod letta;
pub mod mem0;
pub mod msgpack;
pub mod observe;
pub mod otlp;
pub mod sniff;
pub mod write;

use std::fmt;
use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::Path;

use sniff::sniff;

/// A trace format doxascope can open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// doxascope's own trace format v1 (JSON lines); read as is.
    V1,
    /// Inspect AI eval logs (`.eval` archives and `.json`).
    Inspect,
    /// Letta agent files (`.af`), both schemas.
    Letta,
    /// Langfuse trace downloads (and their ChatML companions).
    Langfuse,
    /// LangSmith runs: SDK ingest payloads (create + patch), run trees, run lists.
    LangSmith,
    /// Graphiti episodes and temporal graphs (facts and their invalidation).
    Graphiti,
    /// LangGraph checkpoint databases (`langgraph-checkpoint-sqlite`): the state at every
    /// step.
    LangGraph,
    /// mem0 memory histories (`Memory.history()` as JSON).
    Mem0,
    /// OpenTelemetry spans: OTLP JSON (files and the Collector's file exporter) and the
    /// SDKs' JSON span dumps ([`otlp`]).
    Otlp,
}

impl Format {
    /// Every format, in the order detection tries them.
    pub const ALL: &'static [Format] = &[
        Format::Otlp,
        Format::V1,
        Format::Inspect,
        Format::Langfuse,
        Format::LangSmith,
        Format::Letta,
        Format::Graphiti,
        Format::LangGraph,
        Format::Mem0,
    ];

    /// The short name used on the command line (`--format NAME`) and in the header.
    pub fn name(self) -> &'static str {
        match self {
            Format::V1 => "v1",
            Format::Inspect => "inspect",
            Format::Letta => "letta",
            Format::Langfuse => "langfuse",
            Format::LangSmith => "langsmith",
            Format::Graphiti => "graphiti",
            Format::LangGraph => "langgraph",
            Format::Mem0 => "mem0",
            Format::Otlp => "otlp",
        }
    }

    /// What the format is, for messages: "doxascope trace v1", "Inspect AI eval log".
    pub fn title(self) -> &'static str {
        match self {
            Format::V1 => "doxascope trace v1 (JSON lines)",
            Format::Inspect => "an Inspect AI eval log",
            Format::Letta => "a Letta agent file",
            Format::Langfuse => "a Langfuse trace export",
            Format::LangSmith => "LangSmith runs",
            Format::Graphiti => "Graphiti memory",
            Format::LangGraph => "a LangGraph checkpoint database",
            Format::Mem0 => "a mem0 memory history",
            Format::Otlp => "OpenTelemetry spans",
        }
    }

    /// Every short name, for messages (`v1, inspect, ...`).
    pub fn names() -> String {
        Format::ALL
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
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
                "looks like {} ({fmt_}), but at {}: {}",
                fmt_.title(),
                self.location,
                self.message
            ),
            None => write!(f, "{}: {}", self.location, self.message),
        }
    }
}

impl std::error::Error for ImportError {}

/// How many bytes of a source [`detect`] wants to see.
pub const HEAD_BYTES: usize = 64 << 10;

/// The format of a source, from its content first and its file name second. `head` is the
/// start of the file (a few KiB is enough for every format; [`HEAD_BYTES`] is what
/// [`open`] reads). A source that matches nothing else is taken as v1, whose reader reports
/// its lines' errors one by one; [`refuse_unknown`] tells apart what cannot be v1 at all.
pub fn detect(path: &Path, head: &[u8]) -> Format {
    let name = path.to_string_lossy();
    if otlp::detect(head) {
        Format::Otlp
    } else if inspect::detect(head, &name) {
        Format::Inspect
    } else if langfuse::detect(head) {
        Format::Langfuse
    } else if langsmith::detect(head) {
        Format::LangSmith
    } else if letta::detect(head, &name) {
        Format::Letta
    } else if graphiti::detect(head) {
        Format::Graphiti
    } else if langgraph::detect(head) {
        Format::LangGraph
    } else if mem0::detect(head) {
        Format::Mem0
    } else {
        Format::V1
    }
}

/// For a source [`detect`] found no format for: an error when it cannot be v1 either (an
/// archive, binary data, a JSON document spread over lines, a JSON string), naming what it
/// looks like. v1 JSON lines, even broken ones, pass: their reader reports every bad line.
pub fn refuse_unknown(head: &[u8]) -> Result<(), ImportError> {
    let s = sniff(head);
    let what = if let Some(entry) = &s.zip {
        format!("a ZIP archive (first entry {entry:?}) that is no Inspect AI log")
    } else if let Some(kind) = s.binary {
        kind.to_string()
    } else if s.first == Some(b'"') {
        "a JSON string, not JSON lines of objects".to_string()
    } else if s.first == Some(b'[') || s.json_document() {
        let keys: Vec<&str> = s.top_keys().take(8).collect();
        if keys.is_empty() {
            "a JSON document, not JSON lines".to_string()
        } else {
            format!(
                "a JSON document with the keys {}",
                keys.iter()
                    .map(|k| format!("{k:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    } else {
        return Ok(());
    };
    Err(ImportError {
        format: None,
        location: "the start of the file".into(),
        message: format!(
            "{what}: not a format doxascope reads ({}; `--format NAME` to insist)",
            Format::names()
        ),
    })
}

/// Turns a whole source of format `format` into v1. `name` is the file (or stream) name, used
/// for session names and notes. V1 itself is returned unchanged.
pub fn import(format: Format, bytes: &[u8], name: &str) -> Result<Imported, ImportError> {
    // An `.eval` archive is budgeted member by member; every other import is one document
    // (or lines of them) held whole.
    let zip = bytes.starts_with(b"PK");
    if format != Format::V1 && !zip {
        budget::check_json(format, "the file", bytes)?;
    }
    match format {
        Format::V1 => Ok(Imported {
            v1: bytes.to_vec(),
            notes: Vec::new(),
        }),
        Format::Inspect => inspect::import(bytes, name),
        Format::Letta => letta::import(bytes, name),
        Format::Langfuse => langfuse::import(bytes, name),
        Format::LangSmith => langsmith::import(bytes, name),
        Format::Graphiti => graphiti::import(bytes, name),
        Format::LangGraph => langgraph::import(bytes, name),
        Format::Mem0 => mem0::import(bytes, name),
        Format::Otlp => otlp::import(bytes, name),
    }
}

/// A source that could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// It could not be read.
    Io(io::Error),
    /// It is broken, or of no format doxascope reads.
    Import(ImportError),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Io(e) => write!(f, "cannot read: {e}"),
            OpenError::Import(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for OpenError {}

impl From<io::Error> for OpenError {
    fn from(e: io::Error) -> Self {
        OpenError::Io(e)
    }
}

impl From<ImportError> for OpenError {
    fn from(e: ImportError) -> Self {
        OpenError::Import(e)
    }
}

/// A source as [`open`] found it.
#[derive(Debug)]
pub enum Opened<R> {
    /// v1: read it as it comes (the head [`open`] looked at, then the rest), with the
    /// streaming reader, which reports bad lines one by one.
    V1(io::Chain<Cursor<Vec<u8>>, R>),
    /// Another format, turned into v1 by its importer.
    Imported(Format, Imported),
}

impl<R> Opened<R> {
    /// The format the source was read as.
    pub fn format(&self) -> Format {
        match self {
            Opened::V1(_) => Format::V1,
            Opened::Imported(f, _) => *f,
        }
    }
}

/// Opens a source: looks at its head, detects its format (or takes `forced`), and either
/// hands back a v1 stream (nothing read twice, nothing held) or reads the whole source and
/// imports it. `name` is the file name as given, used by detection and for sessions.
pub fn open<R: Read>(
    name: &str,
    mut input: R,
    forced: Option<Format>,
) -> Result<Opened<R>, OpenError> {
    let mut head = Vec::with_capacity(8192);
    (&mut input)
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)?;
    let format = match forced {
        Some(f) => f,
        None => {
            let f = detect(Path::new(name), &head);
            if f == Format::V1 {
                refuse_unknown(&head)?;
            }
            f
        }
    };
    if format == Format::V1 {
        return Ok(Opened::V1(Cursor::new(head).chain(input)));
    }
    let mut all = head;
    let max = budget::current().max_bytes;
    input.take(max.saturating_add(1)).read_to_end(&mut all)?;
    if all.len() as u64 > max {
        return Err(budget::too_many_bytes(format, name, max).into());
    }
    let imported = import(format, &all, name)?;
    Ok(Opened::Imported(format, imported))
}

/// [`open`] on a file (`-` is standard input, read whole when it is not v1).
pub fn open_path(
    path: &Path,
    forced: Option<Format>,
) -> Result<Opened<Box<dyn Read + Send>>, OpenError> {
    let name = path.to_string_lossy();
    if name == "-" {
        return open(
            "<stdin>",
            Box::new(io::stdin()) as Box<dyn Read + Send>,
            forced,
        );
    }
    let f = File::open(path)?;
    open(&name, Box::new(f) as Box<dyn Read + Send>, forced)
}

/// A JSON parse error of an importer, located in the source (`what`: what was being read).
pub fn json_error(format: Format, e: &serde_json::Error, what: &str) -> ImportError {
    ImportError {
        format: Some(format),
        location: format!("line {}, column {}", e.line(), e.column()),
        message: format!("{what}: {e}"),
    }
}

/// An error of an importer at a place in the source's structure.
pub fn broken(
    format: Format,
    location: impl Into<String>,
    message: impl Into<String>,
) -> ImportError {
    ImportError {
        format: Some(format),
        location: location.into(),
        message: message.into(),
    }
}
