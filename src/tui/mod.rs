//! The terminal UI: panes over the trace, time travel, the REPL line, themes, and a
//! terminal that survives anything.
//!
//! # Design
//!
//! - [`data`] holds the trace as it is read ([`data::Store`]): per session, the model's own
//!   replay ([`crate::model::Timeline`], grown batch by batch) plus the reader problems at
//!   their place, so every pane reads what `export`, `audit` and the REPL read.
//! - [`audit_job`] audits the shown session on its own thread with [`crate::model::audit`]
//!   (findings, recomputed gate verdicts), over a model it extends with what is new.
//! - [`app`] is the view state ([`app::App`]: the screen's focus, mode, overlays and REPL
//!   line, one [`app::SessionView`] per session). Input handlers change it and return
//!   [`app::Effect`]s; the loop performs them. Nothing there draws or blocks, so interaction
//!   tests drive an `App` with key events directly.
//! - [`panes`] holds one component per pane: its selection and state, its keys
//!   (`on_action`) and its drawing.
//! - [`ui`] lays out the whole screen from an `App` and has each pane draw itself, building
//!   only visible rows.
//! - [`keys`] is the one key table: dispatch and the `?` overlay both read it.
//! - [`repl_job`] runs the REPL engine ([`crate::repl::Repl`]) on its own thread: the solver
//!   never blocks input; the pane shows "working…" until the answer arrives.
//! - [`terminal`] guards the terminal modes (restore on drop, error, panic, signals; Ctrl-Z);
//!   [`guardian`] is the child process that restores them after a SIGKILL or an abort.
//! - [`theme`] and [`highlight`] hold palettes (from `themes/`) and syntect highlighting;
//!   [`text`] is where untrusted text becomes spans, through [`crate::sanitize`].
//!
//! # The event loop
//!
//! One tokio `select!` with `biased` order: terminal input first, then signals, REPL
//! answers, and batches from the background loader. Input is read on a small thread that
//! waits in its own `poll` on the tty and calls crossterm's `read` only when there is input
//! (crossterm retries forever on a hung-up tty), and a watchdog thread waits for the tty to
//! hang up or fail; either reports a terminal that went away, and the loop then ends
//! through the normal restore path with [`TuiError::TerminalGone`] (SIGHUP too: the kernel
//! sends it to the session leader only, often a shell that ignores it, so the TUI cannot
//! count on it). Events are sent over a bounded channel; after any event the loop
//! drains what is already queued before drawing, and draws only when something changed, at
//! most once every 10 ms (or, when a frame took longer than that, after as long again).
//! Data from the loader, followers and live sessions is applied in slices of at most 8 ms,
//! with input looked at between them, and nothing a frame draws walks all of a session or
//! of Σ (unfiltered Σ rows are a prefix length, filtered ones views of an incremental index;
//! the density strip reads per-block summaries of the marks), so a follow burst never holds
//! a key for long. So a resize storm
//! or a flood of trace lines costs one frame per 10 ms, never one per event, and cannot
//! starve the keyboard. With `--no-follow`, files
//! are read once by a loader thread that decodes on every core (the header shows the progress).
//! A large file whose lines mostly belong to other sessions than its first is read once,
//! led by its first session (the one the view opens on, [`data::Store::lead`]): that
//! session is replayed as it is read, and the other sessions are indexed (their events'
//! places, their reader problems at their places) without a replay; their lines get lean
//! briefs, validated exactly but built into nothing ([`crate::trace::read_all_briefs_led`]).
//! A session is replayed when it is first shown, by a load of that session alone (the
//! header says `replaying`; see [`data::Store::begin_replay`]), so the whole file is in at
//! the cost of reading it once.
//! Otherwise each file has a [`crate::trace::follow::Follower`] thread (`tail -F`:
//! rotation, truncation, replacement, waiting for the file), and stdin (`-`) and `--listen`
//! feed a [`crate::trace::live::Live`] hub whose sessions are timelines of their own;
//! [`sources`] applies both to the store and keeps the states the header shows.
//!
//! `doxascope demo` plays in the same loop: [`app::App::demo`] holds the sans-IO
//! [`crate::demo::player::Player`], and one more `select!` branch sleeps until its next event
//! is due, then adds what is due to the store like any other source. The demo keys (space,
//! `.`, `+`, `-`) act on the player and are bound only then.

pub mod app;
pub mod audit_job;
pub mod dag;
pub mod data;
pub mod guardian;
pub mod highlight;
pub mod keys;
pub mod panes;
pub mod repl_job;
pub mod sources;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod ui;
pub mod waterfall;

use std::cell::Cell;
use std::fmt;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event as TermEvent};
use rustix::event::{PollFd, PollFlags};
use tokio::sync::mpsc;
use tokio::time::Instant;

use app::{App, Effect};
use data::Store;
use repl_job::ReplJob;
use theme::{Config, Theme};

/// What `doxascope view` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Trace files; `-` is standard input.
    pub files: Vec<PathBuf>,
    /// Keep reading the files as they grow.
    pub follow: bool,
    /// Open at this step instead of following the newest.
    pub at: Option<u64>,
    /// Open on the session of this name (`--session`), once it is read.
    pub session: Option<String>,
    /// Palette name (`--theme`), over the config file.
    pub theme: Option<String>,
    /// Accept live sessions here (`--listen`).
    pub listen: Option<crate::trace::live::ListenAddr>,
    /// Spool files of ended live sessions kept (`--spool-files`); `None`: the default.
    pub spool_files: Option<usize>,
    /// Refuse a followed path that is a symbolic link (`--no-follow-symlinks`).
    pub no_follow_symlinks: bool,
    /// Play the built-in demo instead of reading traces (`doxascope demo`).
    pub demo: Option<DemoOptions>,
    /// Two policies raced on the demo's dialogues (`demo --race`): shown in the race pane
    /// beside the demo, which plays the first policy's run.
    pub race: Option<crate::demo::race::Race>,
    /// Show two runs side by side (`doxascope diff RUN1 RUN2 --tui`).
    pub diff: Option<app::DiffRequest>,
    /// Files of other formats, already turned into v1 ([`crate::trace::import`]): read
    /// once (never followed), named by their path, and named with their format in the
    /// header. Their paths may also be in `files`; they are read only from here.
    pub imported: Vec<ImportedSource>,
}

/// A file of another format, turned into v1 before the view starts.
#[derive(Debug, Clone)]
pub struct ImportedSource {
    /// The path as given.
    pub path: PathBuf,
    /// The format it was read as.
    pub format: crate::trace::import::Format,
    /// The importer's output, spooled (read like a v1 file, never held in memory).
    pub v1: std::sync::Arc<crate::trace::import::Spooled>,
    /// How many notes the importer left (`doxascope import` lists them).
    pub notes: usize,
    /// The load of the spool begun while the importer wrote it ([`EarlyLoad`]), if any:
    /// the view hands on what it read instead of reading the spool again.
    pub early: Option<std::sync::Arc<EarlyLoad>>,
}

/// The view's load of an import's spool, begun while the importer writes it, before the
/// terminal is taken over: a thread reads the spool as it grows ([`Tail`]) exactly as the
/// view's loader reads a finished one, and another applies what it reads to a store as the
/// view does. The view then starts on that store ([`EarlyLoad::finish`]) and its loader
/// skips the spool. Only the first file the view loads is loaded early (the store takes
/// files in order), and only if the importer finished that spool: a stream that falls
/// back to the whole-file import, or fails, abandons it, and the view loads the spool it
/// gets as before.
///
/// [`Tail`]: crate::trace::import::Tail
pub struct EarlyLoad {
    built: std::sync::Mutex<Option<std::thread::JoinHandle<Option<Store>>>>,
    tail: crate::trace::import::Tail,
    used: std::sync::atomic::AtomicBool,
}

impl fmt::Debug for EarlyLoad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EarlyLoad")
            .field("complete", &self.tail.complete())
            .field("used", &self.used())
            .finish_non_exhaustive()
    }
}

impl EarlyLoad {
    /// Starts loading the spool `tail` follows, of the file `path`.
    pub fn start(
        path: &std::path::Path,
        tail: crate::trace::import::Tail,
    ) -> io::Result<std::sync::Arc<EarlyLoad>> {
        Self::start_with(path, tail, LEAD_MIN)
    }

    /// [`EarlyLoad::start`], with the led load's threshold (see [`load_with`]).
    fn start_with(
        path: &std::path::Path,
        tail: crate::trace::import::Tail,
        lead_min: u64,
    ) -> io::Result<std::sync::Arc<EarlyLoad>> {
        let name = path.to_string_lossy().into_owned();
        let reader = tail.try_clone()?;
        let built = std::thread::Builder::new()
            .name("doxascope-early".into())
            .spawn(move || build_early(name, reader, lead_min))?;
        Ok(std::sync::Arc::new(EarlyLoad {
            built: std::sync::Mutex::new(Some(built)),
            tail,
            used: std::sync::atomic::AtomicBool::new(false),
        }))
    }

    /// Whether the importer wrote the whole spool this load reads (else it is not used).
    pub fn complete(&self) -> bool {
        self.tail.complete() == Some(true)
    }

    /// The store of the spool, loaded, once the load is over; `None` if it cannot be used
    /// (the spool was abandoned, or its read failed). Once it gave the store, the view's
    /// loader skips the spool.
    pub fn finish(&self) -> Option<Store> {
        let handle = self
            .built
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()?;
        let store = handle.join().ok().flatten().filter(|_| self.complete())?;
        self.used.store(true, std::sync::atomic::Ordering::Release);
        Some(store)
    }

    /// Whether [`EarlyLoad::finish`] gave the store (the spool is loaded).
    fn used(&self) -> bool {
        self.used.load(std::sync::atomic::Ordering::Acquire)
    }
}

/// An [`EarlyLoad`]'s thread: runs [`load_tail`] and applies its messages to a store as
/// the view's event loop does; the store if the whole spool was read.
fn build_early(name: String, tail: crate::trace::import::Tail, lead_min: u64) -> Option<Store> {
    let (tx, mut rx) = mpsc::channel(64);
    let loader = std::thread::Builder::new()
        .name("doxascope-load".into())
        .spawn(move || load_tail(name, tail, tx, lead_min))
        .ok()?;
    let mut store = Store::new();
    while let Some(m) = rx.blocking_recv() {
        // Nothing shows progress or notes before the view.
        let _ = m.apply(&mut store);
    }
    loader.join().ok()?.ok()?;
    Some(store)
}

/// What [`load_with`] does with a finished import's spool, on the spool as it is written.
/// The choice of a led load waits until the spool is past the led load's threshold and the
/// prefix the lead is chosen from (or is complete), so it is the one the finished spool
/// gets. An error: the spool was abandoned (or could not be read) before its end.
fn load_tail(
    name: String,
    tail: crate::trace::import::Tail,
    tx: mpsc::Sender<Load>,
    lead_min: u64,
) -> io::Result<()> {
    let cfg = crate::trace::ReaderConfig::default();
    tail.wait_for(lead_min.max(LEAD_PREFIX as u64))?;
    let again = tail.file().try_clone()?;
    let read = Cell::new(0u64);
    let gone = Cell::new(false);
    let src = Counted {
        inner: io::BufReader::with_capacity(1 << 20, tail),
        read: &read,
        gone: &gone,
    };
    let res = send_briefs(name, again, src, cfg, lead_min, &tx, 0);
    if gone.get() {
        return Err(io::Error::other("the early load's store is gone"));
    }
    res
}

/// Sends a v1 source (`again`, a descriptor of the file `src` reads) and its events as
/// briefs: led by a session when it pays ([`lead_of`]), the others' briefs lean. A closed
/// store sets `src`'s `gone`; a read error ends the file, what was decoded before it sent.
fn send_briefs<R: Read>(
    name: String,
    again: File,
    src: Counted<'_, R>,
    cfg: crate::trace::ReaderConfig,
    lead_min: u64,
    tx: &mpsc::Sender<Load>,
    total: u64,
) -> io::Result<()> {
    use crate::trace::{read_all_briefs, read_all_briefs_led};
    let (read, gone) = (src.read, src.gone);
    let lead = lead_of(&name, &again, cfg, lead_min);
    let announced = tx.blocking_send(Load::Source(name.clone(), again)).is_ok()
        && match &lead {
            Some(lead) => tx.blocking_send(Load::Lead(lead.clone())).is_ok(),
            None => true,
        };
    if !announced {
        gone.set(true);
        return Ok(());
    }
    let mut batches = Batches::new(tx, read, gone, total, Load::Briefs);
    let res = match &lead {
        Some(lead) => read_all_briefs_led(&name, src, cfg, lead, |it| batches.push(it)),
        None => read_all_briefs(&name, src, cfg, |it| batches.push(it)),
    };
    batches.flush();
    res
}

/// What `doxascope demo` plays in the TUI.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// The demo configuration.
    pub config: crate::demo::DemoConfig,
    /// Number of dialogues.
    pub dialogues: usize,
    /// Initial play speed.
    pub speed: f64,
    /// Dialogues scripted before the TUI started (`demo --agent`: an external agent's
    /// replies, asked off the UI thread); `None`: the simulated agent scripts each in turn.
    pub scripted: Option<Vec<crate::demo::run::Dialogue>>,
}

/// A player over the demo's events, at the requested speed, ready for [`app::App::demo`].
pub fn demo_player(d: &DemoOptions) -> app::DemoPlayer {
    let events = match &d.scripted {
        Some(ds) => crate::demo::DemoEvents::from_dialogues(d.config, ds.clone()),
        None => crate::demo::DemoEvents::new(d.config, d.dialogues),
    };
    let mut p = crate::demo::player::Player::new(events);
    p.set_speed(d.speed, std::time::Instant::now());
    p
}

/// Why the TUI could not run.
#[derive(Debug)]
pub enum TuiError {
    /// Standard output is not a terminal.
    NotATty,
    /// A bad option (unknown theme, ...).
    Usage(String),
    /// A file could not be opened.
    Open(PathBuf, io::Error),
    /// The terminal failed.
    Io(io::Error),
    /// The terminal went away (hangup, or it fails on every read): why.
    TerminalGone(String),
}

impl fmt::Display for TuiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuiError::NotATty => write!(
                f,
                "the TUI needs a terminal, but standard output is not one; use `doxascope repl`, `audit` or `export` in scripts and pipes"
            ),
            TuiError::Usage(m) => f.write_str(m),
            TuiError::Open(p, e) => write!(
                f,
                "cannot read {}: {e}",
                crate::sanitize::sanitize(&p.to_string_lossy())
            ),
            TuiError::Io(e) => write!(f, "terminal error: {e}"),
            TuiError::TerminalGone(why) => write!(f, "the terminal went away: {why}"),
        }
    }
}

impl std::error::Error for TuiError {}

impl From<io::Error> for TuiError {
    fn from(e: io::Error) -> Self {
        TuiError::Io(e)
    }
}

/// What the loader sends to the UI.
#[derive(Debug)]
pub enum Load {
    /// Reader output (of a file the store cannot read again: events kept in memory).
    Items(Vec<crate::trace::Item>),
    /// Reader output, each event as its brief (the store keeps it as its place in the file
    /// announced by [`Load::Source`]).
    Briefs(Vec<crate::trace::BriefItem>),
    /// Bytes read so far and the total of the initial read.
    Progress(u64, u64),
    /// The initial read is complete.
    Done,
    /// Events of the session being replayed ([`data::Store::begin_replay`]), as briefs.
    Replay(Vec<crate::trace::BriefItem>),
    /// The replay of a session is over ([`data::Store::end_replay`]).
    Replayed,
    /// Something worth telling the user (a truncated file).
    Note(String),
    /// The file the next items are read from (its name as the items carry it, and a
    /// descriptor of the same open file): the store keeps those events as places in it.
    Source(String, File),
    /// The load of the file announced last is led by this session ([`data::Store::lead`]):
    /// it is replayed as it is read, the other sessions are indexed.
    Lead(String),
}

impl Load {
    /// Applies a message that carries data (a source, a lead, events, a replay's events) to
    /// `store`, as every reader of a load does; gives back any other message (progress, a
    /// note, the end of a load or of a replay) for the caller to act on.
    fn apply(self, store: &mut Store) -> Option<Load> {
        match self {
            Load::Source(name, f) => {
                store.add_source(&name, f, crate::trace::ReaderConfig::default())
            }
            Load::Lead(session) => store.lead(&session),
            Load::Briefs(items) => store.extend_briefs(items),
            Load::Items(items) => store.extend(items),
            Load::Replay(items) => store.replay_briefs(items),
            other => return Some(other),
        }
        None
    }
}

/// Items per batch sent to the UI: large enough that the channel is not the cost.
const BATCH: usize = 4096;

/// Items in the first batch of a file: the first frame shows them while the rest is read.
const FIRST_BATCH: usize = 256;

/// The time between frames that only show more of a file being loaded.
const LOADING_FRAME: Duration = Duration::from_millis(150);

/// The same in a load led by the shown session (a large file): a frame redraws the panes at the last step (their events read again from the file, Σ
/// filtered again since the data changed), which at [`LOADING_FRAME`] took a tenth of the
/// pass's CPU on a 10-million-event file.
const REST_FRAME: Duration = Duration::from_millis(1000);

/// Files at least this large are loaded led by the session the view opens on when most of
/// their lines belong to other sessions ([`crate::trace::lead_session`]): that session is
/// replayed as it is read, the others are indexed. Below it a load replaying every session
/// takes well under a second.
const LEAD_MIN: u64 = 64 << 20;

/// How much of a file's start the choice of a lead looks at.
const LEAD_PREFIX: usize = 4 << 20;

/// A reader that counts the bytes it hands out (for the progress shown in the header) and
/// fails once the UI is gone, which stops the load.
struct Counted<'a, R> {
    inner: R,
    read: &'a Cell<u64>,
    gone: &'a Cell<bool>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.gone.get() {
            return Err(io::Error::other("the viewer closed"));
        }
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// Reads files once (those not followed); runs on its own thread and decodes on every core
/// ([`crate::trace::read_all`], the same items in the same order as the streaming reader).
/// Standard input is a live session and followed files have their own followers, so neither
/// is read here.
fn load(files: Vec<PathBuf>, imported: Vec<ImportedSource>, tx: mpsc::Sender<Load>) {
    load_with(files, imported, tx, LEAD_MIN)
}

/// [`load`], loading files of `lead_min` bytes or more led by a session when it pays.
fn load_with(
    files: Vec<PathBuf>,
    imported: Vec<ImportedSource>,
    tx: mpsc::Sender<Load>,
    lead_min: u64,
) {
    use crate::trace::{ReaderConfig, read_all};
    let total: u64 = files
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .chain(imported.iter().map(|i| i.v1.len))
        .sum();
    let read = Cell::new(0u64);
    let gone = Cell::new(false);
    let cfg = ReaderConfig::default();
    let sources = imported
        .into_iter()
        .map(|i| (i.path, Some(i.v1), i.early))
        .chain(files.into_iter().map(|p| (p, None, None)));
    for (p, v1, early) in sources {
        // An import's spool loaded before the view started (the store it starts on).
        if let (Some(v1), Some(true)) = (&v1, early.map(|e| e.used())) {
            read.set(read.get() + v1.len);
            if tx.blocking_send(Load::Progress(read.get(), total)).is_err() {
                return;
            }
            continue;
        }
        let name = p.to_string_lossy().into_owned();
        // A file not imported before the view started (one opened with `:open`) is
        // detected here, and imported when it is not v1. A v1 file's events stay in it (the
        // store reads them again from a descriptor of the same open file, so what it shows
        // is what was read even if the path is renamed meanwhile); an importer's output is
        // read the same way from its spool (a temporary file).
        let (file, again): (Box<dyn Read>, Option<File>) = match v1 {
            Some(v1) => match spooled(&v1) {
                Ok(both) => both,
                Err(_) => {
                    let _ = tx.blocking_send(Load::Note(format!(
                        "cannot read the converted lines of {}",
                        crate::sanitize::sanitize(&name)
                    )));
                    continue;
                }
            },
            None if is_v1(&p) => match File::open(&p) {
                Ok(f) => {
                    let again = f.try_clone().ok();
                    (Box::new(f), again)
                }
                Err(_) => {
                    let _ = tx.blocking_send(Load::Note(format!(
                        "cannot read {}",
                        crate::sanitize::sanitize(&name)
                    )));
                    continue;
                }
            },
            None => match crate::trace::import::open_path(&p, None) {
                Ok(crate::trace::import::Opened::Imported(f, imp)) => {
                    let _ = tx.blocking_send(Load::Note(format!(
                        "{}: imported from {f} ({} notes)",
                        crate::sanitize::sanitize(&name),
                        imp.notes.len()
                    )));
                    match spooled(&imp) {
                        Ok(both) => both,
                        Err(_) => continue,
                    }
                }
                Ok(crate::trace::import::Opened::V1(r)) => (Box::new(r), None),
                Err(e) => {
                    let _ = tx.blocking_send(Load::Note(format!(
                        "{}: {}",
                        crate::sanitize::sanitize(&name),
                        crate::sanitize::sanitize(&e.to_string())
                    )));
                    continue;
                }
            },
        };
        let src = Counted {
            inner: file,
            read: &read,
            gone: &gone,
        };
        // With a second descriptor of a v1 file the store reads events again from it and the
        // load sends briefs. Without one (an import, or no descriptor left), events are sent
        // whole and kept in memory.
        match again {
            // An import's spool is loaded like a large v1 file: led by its first session,
            // the others indexed and replayed when shown (an OTLP file of 25,000 traces is
            // 25,000 sessions, which a replay of all would build). A read error ends this
            // file; what was decoded before it is kept.
            Some(again) => {
                let _ = send_briefs(name, again, src, cfg, lead_min, &tx, total);
            }
            None => {
                let mut batches = Batches::new(&tx, &read, &gone, total, Load::Items);
                let _ = read_all(&name, src, cfg, |it| batches.push(it));
                batches.flush();
            }
        }
        if gone.get() {
            return;
        }
    }
    let _ = tx.blocking_send(Load::Done);
}

/// Replays a session its file's load only indexed: reads and decodes the lines at its
/// events' places (`places`, [`data::Store::replay_places`]) on every core
/// ([`crate::trace::read_places_briefs`]), sending its events to the store
/// ([`data::Store::replay_briefs`]) and the progress to the header, then
/// [`Load::Replayed`].
fn replay(
    name: crate::trace::event::FileName,
    file: File,
    cfg: crate::trace::ReaderConfig,
    session: String,
    places: Vec<(u64, u64)>,
    tx: mpsc::Sender<Load>,
) {
    let read = Cell::new(0u64);
    let gone = Cell::new(false);
    let mut batches = Batches::new(&tx, &read, &gone, places.len() as u64, Load::Replay);
    let _ = crate::trace::read_places_briefs(
        &name,
        &file,
        cfg,
        &session,
        &places,
        |done| read.set(done),
        |it| {
            if !gone.get() {
                batches.push(it)
            }
        },
    );
    batches.flush();
    let _ = tx.blocking_send(Load::Replayed);
}

/// An importer's spool as a v1 file: a reader from its start, and a descriptor the store
/// reads events again from by place (an import's events are not kept in memory).
fn spooled(imp: &crate::trace::import::Spooled) -> io::Result<(Box<dyn Read>, Option<File>)> {
    let r = imp.reader()?;
    Ok((
        Box::new(io::BufReader::with_capacity(1 << 20, r)),
        Some(imp.v1.try_clone()?),
    ))
}

/// Whether to load the file `name` (open as `file`) led by the session the view opens
/// on ([`crate::trace::read_all_briefs_led`]), and if so that session.
fn lead_of(name: &str, file: &File, cfg: crate::trace::ReaderConfig, min: u64) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata().ok()?.len();
    if len < min {
        return None;
    }
    let mut prefix = vec![0u8; LEAD_PREFIX.min(len as usize)];
    let mut filled = 0;
    while filled < prefix.len() {
        match file.read_at(&mut prefix[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    prefix.truncate(filled);
    crate::trace::lead_session(name, &prefix, cfg)
}

/// The loader's batching of items for the UI, with the progress after each batch.
struct Batches<'a, T> {
    tx: &'a mpsc::Sender<Load>,
    read: &'a Cell<u64>,
    gone: &'a Cell<bool>,
    total: u64,
    wrap: fn(Vec<T>) -> Load,
    items: Vec<T>,
    limit: usize,
}

impl<'a, T> Batches<'a, T> {
    fn new(
        tx: &'a mpsc::Sender<Load>,
        read: &'a Cell<u64>,
        gone: &'a Cell<bool>,
        total: u64,
        wrap: fn(Vec<T>) -> Load,
    ) -> Self {
        Batches {
            tx,
            read,
            gone,
            total,
            wrap,
            items: Vec::with_capacity(FIRST_BATCH),
            limit: FIRST_BATCH,
        }
    }

    fn push(&mut self, item: T) {
        self.items.push(item);
        if self.items.len() >= self.limit {
            self.flush();
            self.limit = BATCH;
        }
    }

    /// Sends what is batched (a closed UI stops the load: see [`Counted`]).
    fn flush(&mut self) {
        let batch = std::mem::replace(&mut self.items, Vec::with_capacity(BATCH));
        if self.tx.blocking_send((self.wrap)(batch)).is_err()
            || self
                .tx
                .blocking_send(Load::Progress(self.read.get(), self.total))
                .is_err()
        {
            self.gone.set(true);
        }
    }
}

/// What the input thread and the terminal watchdog send to the event loop.
#[derive(Debug)]
enum Input {
    /// A terminal event.
    Event(TermEvent),
    /// The terminal is gone (hung up, closed, or failing on every read): why.
    Gone(String),
}

/// The terminal's descriptor crossterm reads: standard input when it is a terminal, else
/// its own `/dev/tty` (the same device).
fn tty_input() -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsFd;
    if io::stdin().is_terminal() {
        io::stdin().as_fd().try_clone_to_owned()
    } else {
        Ok(std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")?
            .into())
    }
}

/// Whether the terminal behind `fd` is gone, from the flags a poll on it returned and a
/// check that it still answers terminal ioctls: after a hangup (the tmux server killed, the
/// ssh connection dropped) every descriptor of the tty reports POLLHUP and fails with EIO.
fn tty_gone(fd: std::os::fd::BorrowedFd<'_>, revents: PollFlags) -> Option<String> {
    if revents.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) {
        return Some("the terminal hung up".into());
    }
    match rustix::termios::tcgetattr(fd) {
        Ok(_) => None,
        Err(e) => Some(format!("the terminal is gone ({e})")),
    }
}

/// Polls `fds`, retrying on EINTR.
fn poll_fds(fds: &mut [PollFd<'_>], timeout: Duration) -> io::Result<()> {
    let ts = rustix::event::Timespec {
        tv_sec: timeout.as_secs() as _,
        tv_nsec: timeout.subsec_nanos() as _,
    };
    loop {
        match rustix::event::poll(fds, Some(&ts)) {
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Reads terminal input on its own thread; stops when the UI is gone or the tty is.
///
/// crossterm's reader must never be entered on a tty that is gone: on a hung-up tty `read`
/// returns 0 (or EIO) forever and crossterm retries until it gets EAGAIN, which never comes,
/// so the thread would spin on a core for good. So the thread waits in its own `poll` on
/// the tty (and on a SIGWINCH pipe, so resizes are not delayed) and calls crossterm only
/// when there is something to read; a hangup is seen here first and reported as
/// [`Input::Gone`]. [`watch_tty`] covers a hangup that lands inside crossterm's read.
fn read_input(tx: mpsc::Sender<Input>) {
    use std::os::fd::AsFd;
    let gone = |why: String| {
        let _ = tx.blocking_send(Input::Gone(why));
    };
    let input = match tty_input() {
        Ok(f) => f,
        Err(e) => return gone(format!("the terminal cannot be read ({e})")),
    };
    // SIGWINCH wakes the poll through a pipe; crossterm turns it into a resize event.
    let winch = std::os::unix::net::UnixStream::pair()
        .ok()
        .and_then(|(r, w)| {
            r.set_nonblocking(true).ok()?;
            let id =
                signal_hook::low_level::pipe::register(signal_hook::consts::SIGWINCH, w).ok()?;
            Some((r, id))
        });
    let why = loop {
        let (tty_flags, winch_flags) = {
            let mut pfd = vec![PollFd::new(&input, PollFlags::IN)];
            if let Some((r, _)) = &winch {
                pfd.push(PollFd::new(r, PollFlags::IN));
            }
            // Without the SIGWINCH pipe, resizes are picked up on the timeout.
            let timeout = Duration::from_millis(if winch.is_some() { 250 } else { 50 });
            if let Err(e) = poll_fds(&mut pfd, timeout) {
                break format!("the terminal cannot be polled ({e})");
            }
            (
                pfd[0].revents(),
                pfd.get(1).map_or(PollFlags::empty(), |p| p.revents()),
            )
        };
        if let Some(why) = tty_gone(input.as_fd(), tty_flags) {
            break why;
        }
        if !winch_flags.is_empty()
            && let Some((r, _)) = &winch
        {
            let mut buf = [0u8; 64];
            while (&*r).read(&mut buf).is_ok_and(|n| n > 0) {}
        }
        if tx.is_closed() {
            return;
        }
        // Everything crossterm has ready now (it may parse several events from one read).
        let failed = loop {
            match event::poll(Duration::ZERO) {
                Ok(true) => match event::read() {
                    Ok(ev) => {
                        if tx.blocking_send(Input::Event(ev)).is_err() {
                            return;
                        }
                    }
                    Err(e) => break Some(format!("the terminal cannot be read ({e})")),
                },
                Ok(false) => break None,
                Err(e) => break Some(format!("the terminal cannot be read ({e})")),
            }
        };
        if let Some(why) = failed {
            break why;
        }
    };
    if let Some((_, id)) = winch {
        signal_hook::low_level::unregister(id);
    }
    gone(why);
}

/// Watches the terminal from a thread of its own: waits on its descriptors for a hangup or
/// an error (a poll for no events reports exactly those), checking every 250 ms as well, and
/// reports [`Input::Gone`]. This catches a hangup even while the input thread is inside
/// crossterm's reader, and a terminal that stops answering without a hangup.
fn watch_tty(tx: mpsc::Sender<Input>) {
    use std::os::fd::AsFd;
    let Ok(input) = tty_input() else {
        // The input thread reports this.
        return;
    };
    let stdout = io::stdout();
    loop {
        let (a, b) = {
            let mut pfd = [
                PollFd::new(&input, PollFlags::empty()),
                PollFd::new(&stdout, PollFlags::empty()),
            ];
            if let Err(e) = poll_fds(&mut pfd, Duration::from_millis(250)) {
                let _ =
                    tx.blocking_send(Input::Gone(format!("the terminal cannot be polled ({e})")));
                return;
            }
            (pfd[0].revents(), pfd[1].revents())
        };
        let gone = tty_gone(input.as_fd(), a).or_else(|| tty_gone(stdout.as_fd(), b));
        if let Some(why) = gone {
            let _ = tx.blocking_send(Input::Gone(why));
            return;
        }
        if tx.is_closed() {
            return;
        }
    }
}

/// Runs the TUI until the user quits or a signal ends it. The terminal is restored on every
/// path out, including panics.
pub fn run(opts: Options) -> Result<(), TuiError> {
    if !io::stdout().is_terminal() {
        return Err(TuiError::NotATty);
    }
    // A dumb terminal understands none of the escape sequences a full-screen view is made of
    // (it would print hundreds of them as garbage): refuse, and say what works instead.
    if std::env::var("TERM").is_ok_and(|t| t == "dumb") {
        return Err(TuiError::Usage(
            "TERM=dumb cannot show the full-screen view; use `doxascope audit`, `repl` or \
             `export` on the file, or run in a terminal that sets TERM (xterm-256color, ...)"
                .into(),
        ));
    }
    let config = Config::load();
    let theme = Theme::select(opts.theme.as_deref(), &config, theme::no_color_env())
        .map_err(TuiError::Usage)?;
    // A followed file that does not exist yet is waited for (`tail -F`); one read once must
    // be there now.
    for p in &opts.files {
        if !opts.follow && p.as_os_str() != "-" {
            File::open(p).map_err(|e| TuiError::Open(p.clone(), e))?;
        }
    }
    highlight::warm_up();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let sources = sources::Sources::default();
    // The hub exists only when something can feed it; the listener is bound before the
    // terminal is taken over, so a bad address is a plain error message.
    let stdin = opts.files.iter().any(|p| p.as_os_str() == "-");
    let live = (stdin || opts.listen.is_some()).then(|| {
        crate::trace::live::Live::new(crate::trace::live::LiveConfig {
            spool_dir: crate::trace::live::default_spool_dir(),
            max_spool_files: opts
                .spool_files
                .unwrap_or(crate::trace::live::DEFAULT_SPOOL_FILES),
            // A `gate` line on a socket gets its answer on the same connection.
            gatekeeper: Some(crate::repl::gate::ReplGate::factory()),
            ..crate::trace::live::LiveConfig::default()
        })
    });
    let mut listener = None;
    if let (Some(addr), Some((hub, _))) = (&opts.listen, &live) {
        let l = rt
            .block_on(hub.listen(addr))
            .map_err(|e| TuiError::Usage(format!("cannot listen on {addr}: {e}")))?;
        listener = Some(l);
    }
    let mut guard = terminal::Guard::enter(config.mouse)?;
    let mut term = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    term.clear()?;
    // The first file's store, when it was loaded as it was imported.
    let store = opts
        .imported
        .first()
        .and_then(|i| i.early.as_ref())
        .and_then(|e| e.finish())
        .unwrap_or_default();
    let mut app = App::new(store, theme);
    app.sources = sources;
    app.mouse = config.mouse;
    app.status = config.warnings.join("; ");
    app.config_warnings = config.warnings;
    if let Some(l) = &listener {
        sources::announce_listening(&mut app, l.local_addr());
    }
    app.demo = opts.demo.as_ref().map(demo_player);
    app.race = opts.race.clone().map(panes::race::RaceView::new);
    app.diff_request = opts.diff.clone();
    app.want_session = opts.session.clone();
    if let Some(at) = opts.at {
        let v = app.view_mut();
        v.follow = false;
        v.cursor = u32::try_from(at.saturating_sub(1)).unwrap_or(u32::MAX);
    }
    let res = rt.block_on(event_loop(&mut term, &mut guard, &mut app, opts, live));
    // Stop accepting (and remove the socket file) before the terminal is given back.
    drop(listener);
    // A blocking stdin read of a live session must not keep the process alive.
    rt.shutdown_background();
    // ratatui's Terminal shows the cursor when dropped and reports a failure with eprintln!,
    // which panics when standard error is the terminal that went away (exit 101 instead of
    // 2). Showing it here first makes that drop a no-op; if even that fails, the terminal is
    // gone and the value is left undropped (the guard below restores what can be restored).
    if term.show_cursor().is_ok() {
        drop(term);
    } else {
        std::mem::forget(term);
    }
    drop(guard);
    if let Some(m) = terminal::take_worker_panic() {
        // Standard error may be the terminal that went away: never panic on writing it.
        let _ = writeln!(io::stderr(), "{m}");
    }
    res
}

async fn event_loop(
    term: &mut Terminal<CrosstermBackend<io::Stdout>>,
    guard: &mut terminal::Guard,
    app: &mut App,
    opts: Options,
    live: Option<(
        crate::trace::live::Live,
        mpsc::Receiver<crate::trace::live::LiveEvent>,
    )>,
) -> Result<(), TuiError> {
    use crate::trace::follow::{FollowConfig, Follower};
    use tokio::signal::unix::{SignalKind, signal};
    let (in_tx, mut in_rx) = mpsc::channel(1024);
    let watch_tx = in_tx.clone();
    std::thread::Builder::new()
        .name("doxascope-input".into())
        .spawn(move || read_input(in_tx))?;
    std::thread::Builder::new()
        .name("doxascope-tty-watch".into())
        .spawn(move || watch_tty(watch_tx))?;
    let (load_tx, mut load_rx) = mpsc::channel(64);
    // `:open` reads more files later, through the same channels as the first ones.
    let open_load_tx = load_tx.clone();
    let files: Vec<PathBuf> = opts
        .files
        .iter()
        .filter(|p| p.as_os_str() != "-" && !opts.imported.iter().any(|i| i.path == **p))
        .cloned()
        .collect();
    for i in &opts.imported {
        app.sources.imported.push(sources::ImportedFile {
            name: i
                .path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            format: i.format,
            notes: i.notes,
        });
    }
    let imported = opts.imported.clone();
    let mut at = opts.at;
    // Followed files: one follower thread for all of them (tail -F semantics, see
    // trace::follow), its outputs tagged with the file's index.
    let mut handles: Vec<crate::trace::follow::FollowHandle> = Vec::new();
    // Per followed file (as `Sources::files` numbers them): its handle and its index there.
    let mut file_handle: Vec<(usize, usize)> = Vec::new();
    let (fol_tx, mut fol_rx) = mpsc::channel(256);
    let open_fol_tx = fol_tx.clone();
    let follow_cfg = FollowConfig {
        follow_symlinks: !opts.no_follow_symlinks,
        ..FollowConfig::default()
    };
    let once = if opts.follow {
        let base = app.sources.files.len();
        for (i, p) in files.iter().enumerate() {
            app.sources.add_file(p.clone());
            file_handle.push((0, i));
        }
        if !files.is_empty() {
            let (h, mut rx) = Follower::spawn_many(files, follow_cfg.clone())?;
            handles.push(h);
            let tx = fol_tx.clone();
            tokio::spawn(async move {
                while let Some((i, item)) = rx.recv().await {
                    if tx.send((base + i, item)).await.is_err() {
                        break;
                    }
                }
            });
        }
        Vec::new()
    } else {
        files
    };
    drop(fol_tx);
    std::thread::Builder::new()
        .name("doxascope-load".into())
        .spawn(move || load(once, imported, load_tx))?;
    let (_hub, mut live_rx) = match live {
        Some((hub, rx)) => (Some(hub), Some(rx)),
        None => (None, None),
    };
    let streaming = !handles.is_empty() || _hub.is_some();
    let mut fol_open = !handles.is_empty();
    if let Some(hub) = &_hub
        && opts.files.iter().any(|p| p.as_os_str() == "-")
    {
        hub.stdin();
    }
    let (ans_tx, mut ans_rx) = mpsc::channel(64);
    let (ver_tx, mut ver_rx) = mpsc::channel(4);
    let worker = ReplJob::spawn(ans_tx)?;
    let auditor = audit_job::AuditJob::spawn(ver_tx)?;
    // Debounced audits of streaming data: due 300 ms after the latest change, but at most
    // 2 s after the first one not yet audited, so a steady stream is audited every 2 s and a
    // burst once.
    let mut audit_first: Option<Instant> = None;
    let mut audit_due: Option<Instant> = None;
    let mut seen_version = app.store.version;
    let mut term_sig = signal(SignalKind::terminate())?;
    let mut hup_sig = signal(SignalKind::hangup())?;
    let mut int_sig = signal(SignalKind::interrupt())?;
    let mut tstp_sig = signal(SignalKind::from_raw(signal_hook::consts::SIGTSTP))?;
    let mut loading = true;
    // A file opened (`:open`) while a session is replayed: the replay's end does not end
    // that load.
    let mut opened_in_replay = false;
    // A large file loaded led by its first session ([`Load::Lead`]) is drawn at the slower
    // pace: a frame reads the panes' events at the last step again from the file and
    // filters Σ again, CPU the load needs.
    let mut led = false;
    app.loading = Some((0, 0));
    let frame = Duration::from_millis(10);
    let mut next_frame = Instant::now();
    // When the last frame was drawn and how long after it the next may come.
    let mut drawn = Instant::now();
    let mut gap = frame;
    // Whether a frame has shown loaded data yet: the first batch is drawn at once.
    let mut shown_data = false;
    loop {
        if app.dirty && Instant::now() >= next_frame {
            if let Some(m) = terminal::take_worker_panic() {
                app.status = m;
            }
            let began = Instant::now();
            app.store.trim();
            // Cleared before drawing: a frame that leaves work for the next one (a Σ filter
            // applied in pieces) sets it again.
            app.dirty = false;
            term.draw(|f| ui::draw(f, app))?;
            // A slow frame (a slow terminal, a huge filtered Σ) pushes the next one back by
            // as long as it took, so drawing never takes more than about half of the loop's
            // time and input and data keep their turns.
            drawn = Instant::now();
            gap = frame.max(began.elapsed());
            next_frame = drawn + gap;
            shown_data |= !app.store.sessions.is_empty();
        }
        let wake = next_frame;
        let demo_due = app
            .demo_next_due(std::time::Instant::now())
            .map(Instant::from_std);
        let mut effects = Vec::new();
        tokio::select! {
            biased;
            ev = in_rx.recv() => {
                let Some(mut ev) = ev else { break };
                // Drain what is already queued so a burst costs one frame.
                loop {
                    match ev {
                        Input::Event(ev) => {
                            if matches!(ev, TermEvent::Key(_)) {
                                // The user moved on: a pending `--at` no longer applies.
                                at = None;
                            }
                            effects.extend(on_term_event(app, ev));
                        }
                        Input::Gone(why) => return Err(TuiError::TerminalGone(why)),
                    }
                    match in_rx.try_recv() {
                        Ok(next) => ev = next,
                        Err(_) => break,
                    }
                }
                // Input is answered at the usual pace, even while a load slows the frames.
                next_frame = next_frame.min(drawn + gap);
            }
            _ = term_sig.recv() => break,
            _ = hup_sig.recv() => {
                return Err(TuiError::TerminalGone("hangup (SIGHUP)".into()));
            }
            _ = int_sig.recv() => break,
            _ = tstp_sig.recv() => effects.push(Effect::Suspend),
            Some(a) = ans_rx.recv() => app.on_reply(a),
            Some(v) = ver_rx.recv() => app.on_analysis(v),
            // After input and data: one more piece of a session being handed to the auditor
            // or to the REPL worker.
            _ = std::future::ready(()), if app.handover_pending() || app.repl_pending() => {
                if app.handover_pending() {
                    effects.push(Effect::Recompute);
                }
                feed_repl(app, &worker);
            }
            _ = sleep_until_opt(audit_due) => {
                if app.auditor_busy() {
                    // One audit at a time; look again when this one is likely done.
                    audit_due = Some(Instant::now() + Duration::from_millis(300));
                } else {
                    audit_first = None;
                    audit_due = None;
                    effects.extend(app.auto_recompute());
                }
            }
            msg = load_rx.recv(), if loading || !load_rx.is_closed() => {
                let Some(msg) = msg else {
                    loading = false;
                    app.loading = None;
                    continue;
                };
                let budget = Instant::now() + Duration::from_millis(8);
                let held = app.held_item();
                let mut next = Some(msg);
                while let Some(m) = next.take() {
                    led |= matches!(m, Load::Lead(_));
                    match m.apply(&mut app.store) {
                        None => {}
                        Some(Load::Progress(r, t)) => app.loading = Some((r, t)),
                        Some(Load::Done) => {
                            led = false;
                            loading = false;
                            // The end is drawn at once, not at the loading frames' pace.
                            next_frame = Instant::now();
                            app.loading = None;
                            app.wanted_missing();
                            effects.extend(app.auto_recompute());
                            seen_version = app.store.version;
                            // With followers or live sessions the data is still coming;
                            // `--at` then applies once the session is long enough.
                            if !streaming && let Some(step) = at.take() {
                                app.goto_step(step);
                            }
                        }
                        Some(Load::Replayed) => {
                            let ended = app.store.end_replay();
                            let name = |i: usize| {
                                app.store.sessions.get(i).map(|s| s.name.clone()).unwrap_or_default()
                            };
                            match ended {
                                Some(Ok(i)) => app.say_unasked(format!("{} replayed", crate::sanitize::sanitize(&name(i)))),
                                Some(Err(i)) => app.say_unasked(format!(
                                    "cannot replay {}: its file changed since it was read",
                                    crate::sanitize::sanitize(&name(i))
                                )),
                                None => {}
                            }
                            if !std::mem::take(&mut opened_in_replay) {
                                loading = false;
                                app.loading = None;
                            }
                            app.replaying = false;
                            effects.extend(app.auto_recompute());
                            seen_version = app.store.version;
                        }
                        Some(Load::Note(n)) => app.say_unasked(n),
                        // `apply` took the data.
                        Some(
                            Load::Items(_)
                            | Load::Briefs(_)
                            | Load::Replay(_)
                            | Load::Source(..)
                            | Load::Lead(_),
                        ) => {}
                    }
                    if Instant::now() < budget {
                        next = load_rx.try_recv().ok();
                    }
                }
                app.on_data_keeping(held);
                // While a file loads in bulk, new data alone redraws a few times a second
                // (the progress and the growing view), not a hundred: the load has the CPU.
                if loading && shown_data {
                    let pace = if led {
                        REST_FRAME
                    } else {
                        LOADING_FRAME
                    };
                    next_frame = next_frame.max(drawn + pace);
                }
            }
            item = fol_rx.recv(), if fol_open => {
                let Some((file, item)) = item else {
                    fol_open = false;
                    continue;
                };
                let budget = Instant::now() + Duration::from_millis(8);
                let mut next = Some((file, item));
                while let Some((file, item)) = next.take() {
                    if let Some(m) = app.sources.on_follow(&mut app.store, file, item) {
                        app.say_unasked(m);
                    }
                    if Instant::now() < budget {
                        next = fol_rx.try_recv().ok();
                    }
                }
                after_live_data(app, &mut at);
            }
            ev = recv_opt(&mut live_rx) => {
                let Some(ev) = ev else {
                    live_rx = None;
                    continue;
                };
                let budget = Instant::now() + Duration::from_millis(8);
                let mut next = Some(ev);
                while let Some(ev) = next.take() {
                    app.sources.shown = app.session();
                    if let Some(m) = app.sources.on_live(&mut app.store, ev) {
                        app.say_unasked(m);
                    }
                    if Instant::now() < budget {
                        next = live_rx.as_mut().and_then(|r| r.try_recv().ok());
                    }
                }
                after_live_data(app, &mut at);
            }
            _ = sleep_until_opt(demo_due) => {
                app.demo_tick(std::time::Instant::now());
            }
            _ = tokio::time::sleep_until(wake), if app.dirty => {}
        }
        // A session its file's load only indexed is replayed once it is shown (or a diff
        // needs it) and nothing else loads.
        if !loading
            && let Some(slot) = app.replay_wanted()
            && let Some((name, file, cfg)) = app.store.begin_replay(slot)
        {
            let tx = open_load_tx.clone();
            let session = app.store.sessions[slot].name.to_string();
            let places = app.store.replay_places(slot);
            std::thread::Builder::new()
                .name("doxascope-replay".into())
                .spawn(move || replay(name, file, cfg, session, places, tx))?;
            loading = true;
            app.loading = Some((0, 0));
            app.replaying = true;
        }
        // The side-by-side diff, once both runs are read (and when they grew).
        app.maybe_build_diff();
        // New data while nothing is loading in bulk: schedule an audit of what the view shows.
        if app.store.version != seen_version && !loading {
            seen_version = app.store.version;
            if !app.auto_recompute().is_empty() {
                let now = Instant::now();
                let first = *audit_first.get_or_insert(now);
                audit_due =
                    Some((now + Duration::from_millis(300)).min(first + Duration::from_secs(2)));
            }
        }
        for e in effects {
            match e {
                Effect::Quit => return Ok(()),
                Effect::Suspend => {
                    guard.suspend()?;
                    term.clear()?;
                    app.dirty = true;
                }
                Effect::Mouse(on) => guard.set_mouse(on)?,
                Effect::Recompute => {
                    if let Some(req) = app.recompute_input(true) {
                        app.dirty = true;
                        if let Err(m) = auditor.send(req) {
                            app.audit_failed();
                            app.status = m;
                        }
                    }
                }
                Effect::Run {
                    line,
                    step,
                    purpose,
                } => {
                    app.queue_command(line, step, purpose);
                    feed_repl(app, &worker);
                }
                Effect::ReadWhole(files) => {
                    for f in files {
                        if let Some(&(h, i)) = file_handle.get(f)
                            && let Some(handle) = handles.get(h)
                        {
                            handle.read_whole(i);
                        }
                    }
                }
                Effect::Open(path) => {
                    // Read as the view's own files are: followed, or once by a loader.
                    let name = path.to_string_lossy().into_owned();
                    match std::fs::metadata(&path) {
                        Err(e) => {
                            app.answer(format!(
                                "cannot open {}: {e}",
                                crate::sanitize::sanitize(&name)
                            ));
                        }
                        Ok(m) if !m.is_file() => {
                            app.answer(format!(
                                "cannot open {}: not a regular file",
                                crate::sanitize::sanitize(&name)
                            ));
                        }
                        // Followed only when it is v1: another tool's file is read once,
                        // through its importer.
                        Ok(_) if opts.follow && is_v1(&path) => {
                            let base = app.sources.add_file(path.clone());
                            let (h, mut rx) = Follower::spawn_many(vec![path], follow_cfg.clone())?;
                            file_handle.resize(base, (usize::MAX, 0));
                            file_handle.push((handles.len(), 0));
                            handles.push(h);
                            let tx = open_fol_tx.clone();
                            tokio::spawn(async move {
                                while let Some((i, item)) = rx.recv().await {
                                    if tx.send((base + i, item)).await.is_err() {
                                        break;
                                    }
                                }
                            });
                            fol_open = true;
                            app.opened(name);
                        }
                        Ok(_) => {
                            let tx = open_load_tx.clone();
                            std::thread::Builder::new()
                                .name("doxascope-load".into())
                                .spawn(move || load(vec![path], Vec::new(), tx))?;
                            opened_in_replay |= app.replaying;
                            loading = true;
                            app.loading = Some((0, 0));
                            app.opened(name);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether the file at `path` reads as v1 (from its first bytes; an unreadable file counts as
/// v1, whose follower reports it).
fn is_v1(path: &std::path::Path) -> bool {
    let mut head = Vec::new();
    match File::open(path) {
        Ok(f) => {
            let _ = f
                .take(crate::trace::import::HEAD_BYTES as u64)
                .read_to_end(&mut head);
            crate::trace::import::detect(path, &head) == crate::trace::import::Format::V1
        }
        Err(_) => true,
    }
}

/// Sends the REPL worker its next message (a piece of the session, or a waiting command).
fn feed_repl(app: &mut App, worker: &ReplJob) {
    if let Some(msg) = app.repl_next()
        && let Err(m) = worker.send(msg)
    {
        app.status = m;
        app.repl_lost();
    }
}

/// After data from a follower or a live session: follow mode moves to the newest step, and a
/// pending `--at STEP` applies once the shown session has that many events.
fn after_live_data(app: &mut App, at: &mut Option<u64>) {
    app.on_data();
    if let Some(step) = *at
        && app.sess().is_some_and(|s| u64::from(s.len()) >= step)
    {
        app.goto_step(step);
        *at = None;
    }
}

/// Sleeps until `due`; never resolves without one (the demo paused, finished or absent).
async fn sleep_until_opt(due: Option<Instant>) {
    match due {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Receives from an optional channel; never resolves when there is none.
async fn recv_opt<T>(rx: &mut Option<mpsc::Receiver<T>>) -> Option<T> {
    match rx {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}

fn on_term_event(app: &mut App, ev: TermEvent) -> Vec<Effect> {
    match ev {
        TermEvent::Key(k) => app.on_key(k),
        TermEvent::Mouse(m) => {
            app.on_mouse(m);
            Vec::new()
        }
        TermEvent::Paste(s) => {
            if app.mode == app::Mode::Command {
                // Pasted text is the user's own, but a paste may carry newlines or escapes:
                // keep printable characters only.
                for c in s.chars().filter(|c| !c.is_control()) {
                    let k =
                        event::KeyEvent::new(event::KeyCode::Char(c), event::KeyModifiers::NONE);
                    app.repl_input.edit(&k);
                }
                app.dirty = true;
            }
            Vec::new()
        }
        TermEvent::Resize(..) | TermEvent::FocusGained => {
            app.dirty = true;
            Vec::new()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::data::Store;
    use proptest::prelude::*;

    /// Runs the loader on `path` as the view does, loading led by a session from
    /// `lead_min` bytes on, and applies its messages to a store as the event loop does. Also
    /// says whether the load was led.
    fn loaded(paths: &[&std::path::Path], lead_min: u64) -> (Store, bool) {
        let files = paths.iter().map(|p| p.to_path_buf()).collect();
        loaded_with(files, Vec::new(), lead_min)
    }

    /// [`loaded`] of files and imported sources.
    fn loaded_with(
        files: Vec<std::path::PathBuf>,
        imported: Vec<ImportedSource>,
        lead_min: u64,
    ) -> (Store, bool) {
        loaded_into(Store::new(), files, imported, lead_min)
    }

    /// [`loaded_with`] into `store` (the store an [`EarlyLoad`] gave).
    fn loaded_into(
        mut store: Store,
        files: Vec<std::path::PathBuf>,
        imported: Vec<ImportedSource>,
        lead_min: u64,
    ) -> (Store, bool) {
        let (tx, mut rx) = mpsc::channel(16);
        let t = std::thread::spawn(move || load_with(files, imported, tx, lead_min));
        let mut two = false;
        while let Some(m) = rx.blocking_recv() {
            two |= matches!(m, Load::Lead(_));
            let _ = m.apply(&mut store);
        }
        t.join().expect("loader");
        (store, two)
    }

    /// Replays every session the store only indexed, as showing each would: how many.
    fn replay_all(store: &mut Store) -> usize {
        let deferred: Vec<usize> = (0..store.sessions.len())
            .filter(|&i| store.deferred(i))
            .collect();
        for &i in &deferred {
            assert!(store.replay_now(i), "session {i} replays");
        }
        deferred.len()
    }

    /// What a user can see of a store, with log positions (which differ between a load in
    /// one pass and one in two) replaced by line numbers.
    fn seen(store: &Store) -> Vec<String> {
        let line = |pos: u32| store.log.events.origin(pos as usize).map(|o| o.line);
        let mut out = Vec::new();
        for s in &store.sessions {
            let events: Vec<_> = s.events().iter().map(|&p| line(p)).collect();
            let beliefs: Vec<_> =
                s.tl.beliefs()
                    .iter()
                    .map(|b| {
                        (
                            b.id.to_string(),
                            line(b.event),
                            b.announced,
                            b.retraction
                                .map(|r| (r.step, line(r.event), format!("{:?}", r.by))),
                            b.formula_ok,
                        )
                    })
                    .collect();
            let errors: Vec<_> =
                s.tl.errors()
                    .iter()
                    .map(|e| (e.step, line(e.event), e.field, e.column, e.message.clone()))
                    .collect();
            let problems: Vec<_> = s
                .problems
                .iter()
                .map(|&(before, k)| {
                    let p = &store.log.problems[k as usize];
                    (before, p.origin.line, format!("{:?}", p.code))
                })
                .collect();
            assert!(s.deferred.is_none(), "{} is replayed", s.name);
            let sigma: Vec<_> = (0..=s.len())
                .step_by(7)
                .chain([s.len()])
                .map(|t| s.sigma_at(t, true).len())
                .collect();
            out.push(format!(
                "{} events={events:?} beliefs={beliefs:?} errors={errors:?} \
                 problems={problems:?} ({} errors) marks={:?} ended={} sigma={sigma:?} \
                 unknown={} reader_problems={}",
                s.name,
                s.errors,
                s.marks,
                s.ended.len(),
                s.tl.unknown_kinds(),
                s.tl.reader_problems(),
            ));
        }
        out.push(format!("problems: {}", store.log.problems.len()));
        out
    }

    /// An import's spool is loaded like a large v1 file: led by its first session, the
    /// others indexed; once each is replayed (as showing it does), the view holds what a
    /// one-pass load of the same converted lines holds.
    #[test]
    fn an_imports_spool_is_loaded_led_and_replays_as_one_pass() {
        // Five traces of a model call and a tool call under an agent, a request line each.
        let mut otlp = String::new();
        for t in 1..=5u32 {
            let span = |id: u32, parent: &str, op: &str| {
                format!(
                    r#"{{"traceId":"{t:032x}","spanId":"{id:016x}","parentSpanId":"{parent}","name":"{op} x","startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"{op}"}}}}]}}"#,
                    1_700_000_000_000_000_000u64 + u64::from(t * 100 + id),
                    1_700_000_000_000_000_050u64 + u64::from(t * 100 + id),
                )
            };
            let root = format!("{:016x}", 1);
            let spans = [
                span(1, "", "invoke_agent"),
                span(2, &root, "chat"),
                span(3, &root, "execute_tool"),
            ];
            otlp += &format!(
                r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"svc"}}}}]}},"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
                spans.join(",")
            );
            otlp.push('\n');
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("traces.otlp.jsonl");
        std::fs::write(&file, otlp).expect("written");
        let imported = |path: &std::path::Path| match crate::trace::import::open_path(path, None) {
            Ok(crate::trace::import::Opened::Imported(format, v1)) => ImportedSource {
                path: path.to_path_buf(),
                format,
                v1: std::sync::Arc::new(v1),
                notes: 0,
                early: None,
            },
            _ => panic!("an OTLP file is imported"),
        };
        let load = |min: u64| loaded_with(Vec::new(), vec![imported(&file)], min);
        let (whole, led) = load(u64::MAX);
        assert!(!led);
        assert!(whole.sessions.len() > 1, "the sample has several traces");
        let (mut store, led) = load(0);
        assert!(led, "the spool is loaded led by its first session");
        assert_eq!(replay_all(&mut store), whole.sessions.len() - 1);
        assert_eq!(seen(&store), seen(&whole));
    }

    /// OTLP request lines of `traces` traces (an agent, a model call with a reply, `tools`
    /// tool calls), `per_line` traces a line.
    fn otlp_lines(traces: u32, per_line: u32, tools: u32) -> String {
        let span = |t: u32, id: u32, parent: u32, op: &str| {
            let parent = if parent == 0 {
                String::new()
            } else {
                format!("{parent:016x}")
            };
            format!(
                r#"{{"traceId":"{t:032x}","spanId":"{id:016x}","parentSpanId":"{parent}","name":"{op} x","startTimeUnixNano":"{}","endTimeUnixNano":"{}","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"{op}"}}}},{{"key":"gen_ai.output.messages","value":{{"stringValue":"[{{\"role\":\"assistant\",\"parts\":[{{\"type\":\"text\",\"content\":\"trace {t} span {id} says p & q\"}}]}}]"}}}}]}}"#,
                1_700_000_000_000_000_000u64 + u64::from(t) * 1000 + u64::from(id),
                1_700_000_000_000_000_050u64 + u64::from(t) * 1000 + u64::from(id),
            )
        };
        let mut out = String::new();
        for first in (1..=traces).step_by(per_line as usize) {
            let spans: Vec<String> = (first..(first + per_line).min(traces + 1))
                .flat_map(|t| {
                    [span(t, 1, 0, "invoke_agent"), span(t, 2, 1, "chat")]
                        .into_iter()
                        .chain((0..tools).map(move |k| span(t, 3 + k, 1, "execute_tool")))
                })
                .collect();
            out += &format!(
                r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"svc"}}}}]}},"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
                spans.join(",")
            );
            out.push('\n');
        }
        out
    }

    /// The view's store of `path` opened as the view opens it: imported with the load of its
    /// spool begun as it is written ([`EarlyLoad`]) when `early`, else imported and then
    /// loaded; every session replayed. `Err`: the import's error. Also says whether the
    /// early load's store was used.
    fn opened(
        path: &std::path::Path,
        early: bool,
        lead_min: u64,
    ) -> Result<(Vec<String>, bool), String> {
        use crate::trace::import::{Opened, open_path_watched};
        let mut started = None;
        let mut watch =
            |tail| started = Some(EarlyLoad::start_with(path, tail, lead_min).expect("started"));
        let imp = match open_path_watched(path, None, early.then_some(&mut watch as _)) {
            Ok(Opened::Imported(format, v1)) => ImportedSource {
                path: path.to_path_buf(),
                format,
                v1: std::sync::Arc::new(v1),
                notes: 0,
                early: started.filter(|e| e.complete()),
            },
            Ok(Opened::V1(_)) => panic!("an OTLP file is imported"),
            Err(e) => return Err(e.to_string()),
        };
        let first = imp.early.as_ref().and_then(|e| e.finish());
        let used = first.is_some();
        let (mut store, _) =
            loaded_into(first.unwrap_or_default(), Vec::new(), vec![imp], lead_min);
        replay_all(&mut store);
        Ok((seen(&store), used))
    }

    /// A streamed OTLP file's spool loaded as it is imported leaves the view the store the
    /// import-then-load leaves, led or not, for a spool past the prefix the lead is chosen
    /// from; a file the stream gives up on (log records, a broken line: the whole-file
    /// import) opens as before, its early load unused, and one the import refuses once
    /// it has begun gives the same error.
    #[test]
    fn an_import_loaded_as_it_is_written_is_the_import_then_loaded() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).expect("written");
            p
        };
        // Over several 2 MiB chunks of the stream, past LEAD_PREFIX of converted lines (the
        // spans' attributes are most of the text).
        let large = write("large.otlp.jsonl", &otlp_lines(300, 2, 60));
        assert!(std::fs::metadata(&large).expect("there").len() > 2 * (LEAD_PREFIX as u64));
        let small = write("small.otlp.jsonl", &otlp_lines(40, 3, 1));
        let logs = otlp_lines(6, 2, 1)
            + r#"{"resourceLogs":[{"resource":{},"scopeLogs":[{"logRecords":[{"traceId":"00000000000000000000000000000001","body":{"stringValue":"hi"},"eventName":"gen_ai.user.message","timeUnixNano":"1700000000000000001"}]}]}]}"#
            + "\n";
        let logs = write("logs.otlp.jsonl", &logs);
        // A broken line is a note (the stream gives up on it).
        let mut broken = otlp_lines(30, 3, 1);
        broken.insert_str(broken.len() / 2, "\n{\"resourceSpans\":[{\"x");
        let broken = write("broken.otlp.jsonl", &broken);
        for (path, min, streamed) in [
            (&large, 0, true),
            (&small, 0, true),
            (&small, u64::MAX, true),
            (&logs, 0, false),
            (&broken, 0, false),
        ] {
            let (want, _) = opened(path, false, min).expect("imports");
            let (got, used) = opened(path, true, min).expect("imports");
            assert_eq!(used, streamed, "{path:?} at {min}: early store used");
            assert!(want.len() > 3, "{path:?}: several sessions");
            assert_eq!(got, want, "{path:?} at {min}");
        }
        // Over the import budget: an error once the stream has begun.
        use crate::trace::import::budget::{Budget, with_budget};
        let tight = Budget {
            max_bytes: 4096,
            ..Budget::DEFAULT
        };
        let want = with_budget(tight, || opened(&small, false, 0)).expect_err("too large");
        let got = with_budget(tight, || opened(&small, true, 0)).expect_err("too large");
        assert_eq!(got, want);
    }

    /// A file loaded led by its first session (the others indexed, then replayed) ends up
    /// as a load replaying everything leaves it: the same sessions in the same order, each
    /// with the same events, Σ, replay errors and reader problems at the same places.
    #[test]
    fn a_led_load_loads_what_one_pass_loads() {
        use std::io::Write;
        let mut generated = Vec::new();
        let cfg = crate::trace::generate::GenConfig {
            events: 4_000,
            seed: 11,
            sessions: 5,
            atoms: 12,
        };
        crate::trace::generate::write_mixed(&mut generated, &cfg).expect("in memory");
        // Lines that are not events, and events that trip the session checks or name
        // their session in ways only a decoder reads, among the generated ones.
        let hostile: [&[u8]; 9] = [
            b"not json at all",
            b"{\"kind\":\"log\",\"seq\":1,\"seq\":2}",
            b"{\"kind\":\"log\",\"message\":\"bad \xff\"}",
            br#"{"kind":"log","message":"x","seq":3,"session":"generated-\u0030"}"#,
            br#"{"kind":"announce","formula":"p1","sess\u0069on":"generated-1"}"#,
            br#"{"kind":"log","meta":{"session":"generated-2"},"session":"generated-0"}"#,
            br#"{"kind":"log","session" : "generated-3"}"#,
            br#"{"kind":"announce","formula":"p1 &","session":"generated-4"}"#,
            br#"{"kind":"log","message":"no session"}"#,
        ];
        let mut bytes = b"{\"kind\":\n".to_vec();
        for (i, l) in generated.split_inclusive(|&b| b == b'\n').enumerate() {
            bytes.extend_from_slice(l);
            if i % 37 == 5 {
                bytes.extend_from_slice(hostile[i / 37 % hostile.len()]);
                bytes.push(b'\n');
            }
        }
        bytes.extend_from_slice(b"trailing garbage");
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        f.write_all(&bytes).expect("write");
        let (one, one_two) = loaded(&[f.path()], u64::MAX);
        let (mut two, two_two) = loaded(&[f.path()], 0);
        assert!(
            !one_two && two_two,
            "the small file is loaded led only when asked"
        );
        // The led load indexes the other sessions without replaying them: each knows its
        // events and problems, and shows no step until it is replayed.
        for (s, o) in two.sessions.iter().zip(&one.sessions).skip(1) {
            let d = s.deferred.as_ref().expect("indexed only");
            assert_eq!((s.len(), d.events()), (0, o.len()), "{}", s.name);
            assert_eq!(
                (d.problems(), d.errors()),
                (o.problems.len() as u32, o.errors),
                "{}",
                s.name
            );
        }
        assert_eq!(replay_all(&mut two), one.sessions.len() - 1);
        assert_eq!(seen(&two), seen(&one));
        // Two files whose sessions share names: the second's lead adds to a session the
        // first file filled already, and its other sessions to sessions the first file only
        // indexed (replayed first, then extended).
        let twice = [f.path(), f.path()];
        let mut twice_two = loaded(&twice, 0).0;
        replay_all(&mut twice_two);
        assert_eq!(seen(&twice_two), seen(&loaded(&twice, u64::MAX).0));
        assert!(
            one.log.problems.len() > 40 && one.sessions.len() >= 5,
            "{} problems, {} sessions",
            one.log.problems.len(),
            one.sessions.len()
        );
    }

    /// How a test fills a store from a file.
    #[derive(Clone, Copy, PartialEq)]
    enum Pass {
        /// One load replaying everything.
        One,
        /// One load led by the first session, the rest indexed.
        Led,
    }

    /// A store filled from `path` as `pass` says, every session replayed after.
    fn store_of(path: &std::path::Path, pass: Pass) -> Store {
        use crate::trace::{BriefItem, read_all_briefs, read_all_briefs_led};
        let rc = crate::trace::ReaderConfig { max_line_bytes: 80 };
        let name = path.to_string_lossy().into_owned();
        let open = || File::open(path).expect("open");
        let mut all = Vec::new();
        read_all_briefs(&name, open(), rc, |it| all.push(it)).expect("read");
        let lead = all.iter().find_map(|it| match it {
            BriefItem::Session(s) => Some(s.to_string()),
            _ => None,
        });
        let mut store = Store::new();
        store.add_source(&name, open(), rc);
        if let (Pass::Led, Some(lead)) = (pass, lead) {
            store.lead(&lead);
            all.clear();
            read_all_briefs_led(&name, open(), rc, &lead, |it| all.push(it)).expect("read");
        }
        store.extend_briefs(all);
        replay_all(&mut store);
        store
    }

    /// A generated file of three interleaved sessions (600 events), and its bytes: a load
    /// leads with the first and indexes the other two.
    fn three_sessions() -> (tempfile::NamedTempFile, Vec<u8>) {
        use std::io::Write;
        let bytes = crate::trace::generate::GenConfig {
            events: 600,
            seed: 3,
            sessions: 3,
            atoms: 6,
        }
        .bytes();
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        f.write_all(&bytes).expect("write");
        (f, bytes)
    }

    /// A session indexed only whose file changed before it is shown is not replayed from
    /// the new bytes: the replay fails, says so, and leaves it indexed only.
    #[test]
    fn a_replay_of_a_changed_file_fails_and_shows_nothing_wrong() {
        let (f, bytes) = three_sessions();
        let (mut store, two) = loaded(&[f.path()], 0);
        assert!(two && store.deferred(1));
        // The same length, every line of session 1 moved by one line.
        let mut changed = b"\n".to_vec();
        changed.extend_from_slice(&bytes[..bytes.len() - 1]);
        std::fs::write(f.path(), &changed).expect("rewrite");
        assert!(!store.replay_now(1));
        assert!(store.deferred(1) && store.sessions[1].is_empty());
        assert_eq!(store.replaying(), None);
    }

    /// `diff --tui` of a run its file's load only indexed waits for that run's replay,
    /// which the event loop runs in the background (`replay_wanted`), instead of replaying
    /// every indexed session on the UI thread; the diff is built once the run is in, and
    /// the sessions it does not need stay indexed.
    #[test]
    fn a_diff_waits_for_the_background_replay_of_only_its_runs() {
        let (f, _) = three_sessions();
        let (store, led) = loaded(&[f.path()], 0);
        assert!(led && !store.deferred(0) && store.deferred(1) && store.deferred(2));
        let name = |i: usize| store.sessions[i].name.to_string();
        let file = f.path().to_string_lossy().into_owned();
        let req = app::DiffRequest {
            how: crate::model::diff::Align::Step,
            a: Some(name(0)),
            b: Some(name(2)),
            files: [file.clone(), file],
        };
        let theme = theme::Theme::builtin("dark").expect("theme");
        let mut app = App::new(store, theme);
        app.diff_request = Some(req);
        app.maybe_build_diff();
        assert!(app.diff.is_none(), "no diff before its run is in");
        assert!(app.store.deferred(2), "nothing replayed on this thread");
        assert!(app.status.contains("replaying"), "{}", app.status);
        assert_eq!(app.replay_wanted(), Some(2));
        // What the background replay does (`replay`, then `Load::Replayed`).
        assert!(app.store.replay_now(2));
        assert_eq!(app.replay_wanted(), None);
        app.maybe_build_diff();
        assert!(app.diff.is_some(), "{}", app.status);
        assert!(
            app.store.deferred(1),
            "a session the diff does not need stays indexed"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

        /// On any stream (every framing hazard, sessions written in every way, problems
        /// before the first event), a led load leaves the store as one replaying everything.
        #[test]
        fn a_led_load_equals_one_on_any_stream(bytes in crate::trace::streams::stream(80, 40)) {
            use std::io::Write;
            let mut f = tempfile::NamedTempFile::new().expect("temp file");
            f.write_all(&bytes).expect("write");
            let one = seen(&store_of(f.path(), Pass::One));
            prop_assert_eq!(seen(&store_of(f.path(), Pass::Led)), one);
        }
    }
}
