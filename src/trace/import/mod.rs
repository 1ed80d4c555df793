//! Importers: the traces other tools already write, turned into trace format v1.
//!
//! Every importer reads the whole source (bytes, as found on disk or received) and writes
//! v1 JSON lines, one event per line; OTLP JSON lines, Inspect, Langfuse, LangSmith and
//! Letta also read a file in bounded memory ([`open_path`]: a chunk or a piece at a time,
//! [`scan`]), writing the same lines. Everything downstream (the reader, the model, the
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
pub mod scan;
pub mod sniff;
pub mod write;

use std::fmt;
use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

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

/// An importer's v1 output, in an unnamed temporary file: it is not held in memory, and a
/// reader reads it again by place as it does a v1 file's events.
#[derive(Debug)]
pub struct Spooled {
    /// The v1 lines (the file is deleted already; this descriptor keeps it).
    pub v1: File,
    /// How many bytes of v1 it holds.
    pub len: u64,
    /// What the importer could not map exactly, with where it was in the source.
    pub notes: Vec<ImportNote>,
}

impl Spooled {
    /// The v1 lines of `imp`, spooled.
    pub fn of(imp: Imported) -> io::Result<Spooled> {
        let mut v1 = spool_file()?;
        v1.write_all(&imp.v1)?;
        Ok(Spooled {
            v1,
            len: imp.v1.len() as u64,
            notes: imp.notes,
        })
    }

    /// A reader of the v1 lines from their start. It shares its place with every other
    /// descriptor of the spool: read one at a time (by place, `read_at`, is always safe).
    pub fn reader(&self) -> io::Result<File> {
        let mut f = self.v1.try_clone()?;
        f.seek(SeekFrom::Start(0))?;
        Ok(f)
    }

    /// The whole v1 text, in memory (for small outputs and tests).
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.len as usize);
        self.reader()?.read_to_end(&mut out)?;
        Ok(out)
    }
}

/// A new temporary file, already deleted: only its descriptor reaches it, and the space goes
/// when the last one is closed.
pub fn spool_file() -> io::Result<File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir();
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!(
            ".doxascope-import-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                std::fs::remove_file(&path)?;
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

/// A source as [`open`] found it.
#[derive(Debug)]
pub enum Opened<R> {
    /// v1: read it as it comes (the head [`open`] looked at, then the rest), with the
    /// streaming reader, which reports bad lines one by one.
    V1(io::Chain<Cursor<Vec<u8>>, R>),
    /// Another format, turned into v1 by its importer (spooled, not in memory).
    Imported(Format, Spooled),
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

/// The head of a source ([`HEAD_BYTES`]) and its format (`forced`, or detected).
fn look<R: Read>(
    name: &str,
    input: &mut R,
    forced: Option<Format>,
) -> Result<(Vec<u8>, Format), OpenError> {
    let mut head = Vec::with_capacity(8192);
    input.take(HEAD_BYTES as u64).read_to_end(&mut head)?;
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
    Ok((head, format))
}

/// Opens a source: looks at its head, detects its format (or takes `forced`), and either
/// hands back a v1 stream (nothing read twice, nothing held) or imports it into a spool.
/// OTLP is imported as it is read, and the formats that [`streams`] a piece at a time from
/// a temporary copy of the source (OTLP's in case it must be read whole); other formats are
/// read whole. `name` is the file name as given, used by detection and for sessions.
pub fn open<R: Read>(
    name: &str,
    mut input: R,
    forced: Option<Format>,
) -> Result<Opened<R>, OpenError> {
    let (head, format) = look(name, &mut input, forced)?;
    if format == Format::V1 {
        return Ok(Opened::V1(Cursor::new(head).chain(input)));
    }
    if format == Format::Otlp || streams(format) {
        let mut src = spool_file()?;
        src.write_all(&head)?;
        io::copy(&mut input, &mut src)?;
        src.seek(SeekFrom::Start(0))?;
        let sp = if format == Format::Otlp {
            otlp_file(src, name, None)?
        } else {
            streamed(format, &src, name)?
        };
        return Ok(Opened::Imported(format, sp));
    }
    Ok(Opened::Imported(format, whole(name, format, head, input)?))
}

/// Reads the rest of a source after its `head` and imports it whole (within the budget).
fn whole<R: Read>(
    name: &str,
    format: Format,
    head: Vec<u8>,
    input: R,
) -> Result<Spooled, OpenError> {
    let mut all = head;
    let max = budget::current().max_bytes;
    input.take(max.saturating_add(1)).read_to_end(&mut all)?;
    if all.len() as u64 > max {
        return Err(budget::too_many_bytes(format, name, max).into());
    }
    let imported = import(format, &all, name)?;
    drop(all);
    Ok(Spooled::of(imported)?)
}

/// Whether `format` is imported a piece at a time from a file ([`streamed`]).
fn streams(format: Format) -> bool {
    matches!(
        format,
        Format::Langfuse | Format::Inspect | Format::Letta | Format::LangSmith
    )
}

/// Bytes a streamed import's splitter reads at a time.
const SCAN_CAP: usize = 1 << 16;

/// Imports a file of a format that [`streams`], a piece at a time, into a spool: memory holds
/// the importer's index and one piece, not the file.
fn streamed(format: Format, src: &File, name: &str) -> Result<Spooled, OpenError> {
    let mut v1 = spool_file()?;
    let mut out = write::V1Out::to_writer(v1.try_clone()?);
    match format {
        Format::Langfuse => langfuse::import_at(src, name, &mut out, SCAN_CAP)?,
        Format::Inspect => inspect::import_at(src, name, &mut out, SCAN_CAP)?,
        Format::Letta => letta::import_at(src, name, &mut out, SCAN_CAP)?,
        Format::LangSmith => langsmith::import_at(src, name, &mut out, SCAN_CAP)?,
        other => unreachable!("{other} is not streamed"),
    }
    let notes = out.finish_written()?;
    let len = v1.seek(SeekFrom::End(0))?;
    v1.seek(SeekFrom::Start(0))?;
    Ok(Spooled { v1, len, notes })
}

/// Imports an OTLP file streamed ([`otlp::import_stream`]), or whole when it must be.
/// `watch`, if any, gets a [`Tail`] of the streamed spool before the first chunk is read.
fn otlp_file(mut src: File, name: &str, watch: Option<Watch<'_>>) -> Result<Spooled, OpenError> {
    let v1 = spool_file()?;
    let shared = Arc::new(TailShared::default());
    if let Some(watch) = watch {
        watch(Tail {
            file: v1.try_clone()?,
            shared: Arc::clone(&shared),
            pos: 0,
        });
    }
    // An error or the fall-back below drops the writer unfinished: the tail is abandoned.
    let mut w = io::BufWriter::with_capacity(1 << 20, Publish::new(v1, shared));
    let streamed = otlp::import_stream(&mut src, name, &mut w)?;
    let published = w.into_inner().map_err(io::IntoInnerError::into_error)?;
    let Some(notes) = streamed else {
        // The part written is dropped with its spool.
        drop(published);
        src.seek(SeekFrom::Start(0))?;
        return whole(name, Format::Otlp, Vec::new(), &mut src);
    };
    let mut v1 = published.finish();
    let len = v1.seek(SeekFrom::End(0))?;
    v1.seek(SeekFrom::Start(0))?;
    Ok(Spooled { v1, len, notes })
}

/// What [`open_path_watched`] hands a spool's [`Tail`] to.
pub type Watch<'a> = &'a mut dyn FnMut(Tail);

/// How far a spool's writer got, shared with its [`Tail`]s.
#[derive(Debug, Default)]
struct TailShared {
    /// Bytes written, and how the writer ended: `Some(true)` with the whole output,
    /// `Some(false)` abandoned (an error, or a fall-back to another spool).
    state: Mutex<(u64, Option<bool>)>,
    changed: Condvar,
}

impl TailShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, Option<bool>)> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set(&self, f: impl FnOnce(&mut (u64, Option<bool>))) {
        f(&mut self.lock());
        self.changed.notify_all();
    }

    /// Waits until more than `pos` bytes are written or the writer ended: what it got to.
    fn wait_past(&self, pos: u64) -> (u64, Option<bool>) {
        let mut s = self.lock();
        while s.0 <= pos && s.1.is_none() {
            s = self
                .changed
                .wait(s)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *s
    }
}

/// The writer of a spool a [`Tail`] follows: every write is published to it, and dropped
/// unfinished it abandons the tail.
struct Publish {
    file: Option<File>,
    shared: Arc<TailShared>,
    written: u64,
}

impl Publish {
    fn new(file: File, shared: Arc<TailShared>) -> Publish {
        Publish {
            file: Some(file),
            shared,
            written: 0,
        }
    }

    /// The whole output is written: the tail reads to its end.
    fn finish(mut self) -> File {
        self.shared.set(|s| s.1 = Some(true));
        self.file.take().expect("a spool until finished")
    }
}

impl Write for Publish {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("finished"))?;
        let n = file.write(buf)?;
        self.written += n as u64;
        let written = self.written;
        self.shared.set(|s| s.0 = written);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Publish {
    fn drop(&mut self) {
        if self.file.is_some() {
            self.shared.set(|s| s.1 = Some(false));
        }
    }
}

/// The v1 lines of an import read while its importer writes them: a read waits for more
/// until the importer is done (then the end of the lines is the end of the stream), and
/// fails when the importer gave up on this spool (an error, or a stream that falls back
/// to the whole-file import, whose output goes elsewhere). Reads by place: the writer's
/// offset is never moved.
#[derive(Debug)]
pub struct Tail {
    file: File,
    shared: Arc<TailShared>,
    pos: u64,
}

impl Tail {
    /// Another reader of the same spool, from its start.
    pub fn try_clone(&self) -> io::Result<Tail> {
        Ok(Tail {
            file: self.file.try_clone()?,
            shared: Arc::clone(&self.shared),
            pos: 0,
        })
    }

    /// The spool (a descriptor of the same file, to read events again by place once it is
    /// complete).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Waits until `bytes` are written or the importer is done: how many are written then;
    /// an error if the importer gave up on this spool.
    pub fn wait_for(&self, bytes: u64) -> io::Result<u64> {
        loop {
            match self.shared.wait_past(bytes.saturating_sub(1)) {
                (_, Some(false)) => return Err(abandoned()),
                (n, Some(true)) => return Ok(n),
                (n, None) if n >= bytes => return Ok(n),
                _ => {}
            }
        }
    }

    /// Whether the importer finished this spool: `Some(true)` with all its output,
    /// `Some(false)` when it gave up on it, `None` while it writes.
    pub fn complete(&self) -> Option<bool> {
        self.shared.lock().1
    }
}

fn abandoned() -> io::Error {
    io::Error::other("the import was abandoned")
}

impl Read for Tail {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        if buf.is_empty() {
            return Ok(0);
        }
        let (written, end) = self.shared.wait_past(self.pos);
        if end == Some(false) {
            return Err(abandoned());
        }
        let ready = written.saturating_sub(self.pos);
        if ready == 0 {
            return Ok(0);
        }
        let want = buf.len().min(usize::try_from(ready).unwrap_or(usize::MAX));
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// [`open`] on a file (`-` is standard input). A regular OTLP file, or one of a format that
/// [`streams`], is read from where it is, without a copy.
pub fn open_path(
    path: &Path,
    forced: Option<Format>,
) -> Result<Opened<Box<dyn Read + Send>>, OpenError> {
    open_path_watched(path, forced, None)
}

/// [`open_path`], handing `watch` a [`Tail`] of the spool a regular OTLP file is streamed
/// into, when it is, before the import starts: a viewer reads the lines as they are
/// written. The tail reads to the end of the lines of the [`Opened::Imported`] returned
/// when it is [`Tail::complete`]; otherwise (an error, or the fall-back to the whole-file
/// import) its reads fail and its lines are not the output.
pub fn open_path_watched(
    path: &Path,
    forced: Option<Format>,
    watch: Option<Watch<'_>>,
) -> Result<Opened<Box<dyn Read + Send>>, OpenError> {
    let name = path.to_string_lossy();
    if name == "-" {
        return open(
            "<stdin>",
            Box::new(io::stdin()) as Box<dyn Read + Send>,
            forced,
        );
    }
    let mut f = File::open(path)?;
    if !f.metadata()?.is_file() {
        return open(&name, Box::new(f) as Box<dyn Read + Send>, forced);
    }
    let (head, format) = look(&name, &mut f, forced)?;
    match format {
        Format::V1 => Ok(Opened::V1(
            Cursor::new(head).chain(Box::new(f) as Box<dyn Read + Send>),
        )),
        Format::Otlp => {
            f.seek(SeekFrom::Start(0))?;
            Ok(Opened::Imported(format, otlp_file(f, &name, watch)?))
        }
        _ if streams(format) => Ok(Opened::Imported(format, streamed(format, &f, &name)?)),
        _ => Ok(Opened::Imported(format, whole(&name, format, head, f)?)),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A tail read while its writer writes gets every byte, in order, and its end only
    /// once the writer finished; a writer dropped unfinished fails the read after what it
    /// wrote, and a finished one reads to the end again from a clone.
    #[test]
    fn a_tail_reads_what_its_writer_writes_as_it_writes() {
        for finish in [true, false] {
            let file = spool_file().expect("spool");
            let shared = Arc::new(TailShared::default());
            let mut tail = Tail {
                file: file.try_clone().expect("clone"),
                shared: Arc::clone(&shared),
                pos: 0,
            };
            let writer = std::thread::spawn(move || {
                let mut w = Publish::new(file, shared);
                let mut all = Vec::new();
                for k in 0..200u32 {
                    let piece = format!("line {k} {}\n", "x".repeat(k as usize % 37));
                    w.write_all(piece.as_bytes()).expect("written");
                    all.extend_from_slice(piece.as_bytes());
                    if k % 50 == 0 {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                }
                if finish {
                    w.finish();
                }
                all
            });
            let mut got = Vec::new();
            let mut buf = [0u8; 7];
            let end = loop {
                match tail.read(&mut buf) {
                    Ok(0) => break Ok(()),
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) => break Err(e),
                }
            };
            let all = writer.join().expect("writer");
            assert_eq!(end.is_ok(), finish, "the end is the writer's");
            assert_eq!(tail.complete(), Some(finish));
            if finish {
                assert!(got == all, "every byte in order");
                let mut again = Vec::new();
                tail.try_clone()
                    .expect("clone")
                    .read_to_end(&mut again)
                    .expect("read");
                assert!(again == all);
                assert_eq!(tail.wait_for(u64::MAX).expect("done"), all.len() as u64);
            } else {
                assert!(all.starts_with(&got), "a prefix of what was written");
                assert!(tail.wait_for(1).is_err(), "abandoned");
            }
        }
    }
}
