//! Following a trace file by name, the way GNU `tail -F` does.
//!
//! A [`Follower`] watches one path. Whatever happens to the file behind that path, the
//! follower keeps delivering the events of whatever file is there now, without losing or
//! repeating what it already delivered:
//!
//! - **appends** are read and fed to the streaming [`Reader`]; a partial last line stays in the
//!   reader until its newline arrives, so a record split across writes is one record;
//! - **truncation** (the file got shorter than what was read, as with `: > f` or logrotate's
//!   `copytruncate`) or **rewriting in place** (its first bytes changed) is reported as
//!   [`FollowStatus::Truncated`] and the file is re-read from offset 0;
//! - **rotation** (the file was renamed away and another created), **replacement** (another
//!   file renamed over it, or it was deleted and re-created) and **deletion** are detected by
//!   comparing the identity of the open file (device and inode) with what the path names now.
//!   The old file's tail is drained through the still-open descriptor first, then its last
//!   unterminated line (if any) is flushed, and only then does the follower switch;
//! - a path that does not exist (yet, or any more) is **waited for**.
//! - a last line that stays unterminated for a whole poll is reported once as
//!   [`FollowStatus::Pending`] (the writer may have died mid-record), never parsed early.
//!
//! Identity is (device, inode) plus a fingerprint: the first [`FINGERPRINT_LEN`] bytes read from
//! the file. Holding the old descriptor open keeps its inode number from being reused, so a
//! different inode at the path really is a different file; the fingerprint catches what inodes
//! cannot: truncate-and-rewrite past the old offset between two polls (GNU tail's documented
//! blind spot). A rewrite that reproduces the first bytes exactly and grows past the old offset
//! between two polls is still undetectable; nothing short of re-reading the file could see it.
//!
//! The truth is a poll: `fstat` on the open descriptor, `stat` on the path, `pread` of the
//! fingerprint and of new bytes. File-system notifications (the `notify` crate, watching the
//! parent directory, because single-file watches break on atomic saves) are only hints that
//! trigger an early poll; a periodic poll ([`FollowConfig::poll_interval`]) runs regardless, so
//! lost, coalesced or unavailable notifications (NFS, exhausted inotify watches, a removed
//! parent directory) only cost latency, never data. Files are read with `pread`, never memory
//! mapped: a mapped file truncated by someone else would kill the process with `SIGBUS`.
//! Non-regular files (FIFOs, devices, directories) are refused, and opening is non-blocking so
//! a FIFO at the path cannot hang the follower.
//!
//! Two ways to drive it:
//! - [`Follower::poll_once`] does one synchronous poll and returns what it found: tests script
//!   file operations between polls and assert exact outputs;
//! - [`Follower::spawn`] runs the loop on its own thread and delivers [`FollowItem`]s over a
//!   bounded tokio channel (usable from async code with `recv().await` or from a UI loop with
//!   `try_recv`). A full channel blocks the follower, not the file's writer: unread bytes wait
//!   on disk, so back-pressure never loses data.
//!
//! ```no_run
//! use doxascope::trace::follow::{FollowConfig, FollowItem, Follower};
//!
//! let (handle, mut rx) = Follower::spawn("agent.jsonl", FollowConfig::default())?;
//! while let Some(item) = rx.blocking_recv() {
//!     match item {
//!         FollowItem::Items(items) => { /* hand the events and problems to the model */ }
//!         FollowItem::Status(status) => eprintln!("agent.jsonl: {status}"),
//!     }
//! }
//! handle.stop();
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::thread;
use std::time::Duration;

use tokio::sync::mpsc;

use super::reader::{Item, Reader, ReaderConfig};

/// How many leading bytes of a file form its fingerprint.
pub const FINGERPRINT_LEN: usize = 64;

/// Settings of a follower.
#[derive(Debug, Clone)]
pub struct FollowConfig {
    /// How often the file is checked even without any notification.
    pub poll_interval: Duration,
    /// Settings of the JSONL reader (line-length cap).
    pub reader: ReaderConfig,
    /// Bytes read per `pread`; also the most input behind one [`FollowItem::Items`] batch.
    pub read_chunk: usize,
    /// The most bytes read in one poll before rotation and truncation are checked again, so a
    /// file growing faster than it is read still gets its identity checked.
    pub max_bytes_per_poll: u64,
    /// Capacity of the output channel of [`Follower::spawn`], in items (batches).
    pub channel_capacity: usize,
    /// Use file-system notifications as hints (the periodic poll runs either way).
    pub notify: bool,
}

impl Default for FollowConfig {
    fn default() -> Self {
        FollowConfig {
            poll_interval: Duration::from_millis(250),
            reader: ReaderConfig::default(),
            read_chunk: 64 * 1024,
            max_bytes_per_poll: 16 * 1024 * 1024,
            channel_capacity: 64,
            notify: true,
        }
    }
}

/// A change in what the follower is following, for the UI's status line.
///
/// [`Truncated`](FollowStatus::Truncated), [`Rotated`](FollowStatus::Rotated),
/// [`Replaced`](FollowStatus::Replaced) and [`Deleted`](FollowStatus::Deleted) say what happened
/// to the old file; every item delivered before them came from it (its tail included). Items
/// after them come from a fresh [`Reader`] (line numbers restart at 1). After `Rotated`,
/// `Replaced` or `Deleted` comes either [`Following`](FollowStatus::Following) (a file is at the
/// path) or [`Waiting`](FollowStatus::Waiting) (none yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowStatus {
    /// Nothing is at the path; the follower waits for a file to appear.
    Waiting,
    /// A file was opened at the path and is read from its start.
    Following,
    /// The file shrank below what was read, or its first bytes changed: re-read from 0.
    Truncated,
    /// The file was renamed away (it is still linked elsewhere); its tail was read.
    Rotated,
    /// The file was unlinked and another file is at the path (atomic replace, or delete and
    /// re-create between two polls); the old file's tail was read.
    Replaced,
    /// The file was unlinked and nothing is at the path; its tail was read.
    Deleted,
    /// The path names something that is not a regular file (FIFO, device, directory); it is
    /// not read, and the follower waits for a regular file.
    NotRegular,
    /// The file ends in a line without its newline, and a whole poll passed without more
    /// bytes: the writer may have died mid-record. Shown once per stall; the line is decoded
    /// when its newline arrives, or flushed (decoded or reported) when the file is switched.
    Pending {
        /// Bytes of the unterminated line.
        bytes: u64,
    },
    /// File-system notifications are unavailable; changes are seen by the periodic poll only.
    PollingOnly(String),
    /// An I/O error (shown once until the situation changes); the follower keeps retrying.
    Error(String),
}

impl std::fmt::Display for FollowStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FollowStatus::Waiting => f.write_str("waiting for the file to appear"),
            FollowStatus::Following => f.write_str("following"),
            FollowStatus::Truncated => f.write_str("truncated, re-read"),
            FollowStatus::Rotated => f.write_str("rotated"),
            FollowStatus::Replaced => f.write_str("replaced; following new file"),
            FollowStatus::Deleted => f.write_str("deleted"),
            FollowStatus::NotRegular => f.write_str("not a regular file; not followed"),
            FollowStatus::Pending { bytes } => {
                write!(f, "incomplete line pending ({bytes} bytes)")
            }
            FollowStatus::PollingOnly(why) => {
                write!(f, "file notifications unavailable ({why}); polling")
            }
            FollowStatus::Error(e) => write!(f, "error: {e}"),
        }
    }
}

/// One output of a follower, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum FollowItem {
    /// Events and problems read, in line order (never empty).
    Items(Vec<Item>),
    /// A change of state.
    Status(FollowStatus),
}

/// (device, inode): what a path or descriptor refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    FileId {
        dev: meta.dev(),
        ino: meta.ino(),
    }
}

#[cfg(unix)]
fn link_count(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    file.read_at(buf, pos)
}

/// The file currently open.
#[derive(Debug)]
struct Open {
    file: File,
    id: FileId,
    /// Bytes of this file delivered to the reader.
    pos: u64,
    /// The first bytes of the file as read (up to [`FINGERPRINT_LEN`]).
    fingerprint: Vec<u8>,
    reader: Reader,
    /// Bytes read after the last newline.
    partial: u64,
    /// Whether the current stall of `partial` was reported.
    pending_reported: bool,
}

#[derive(Debug)]
enum State {
    /// No regular file at the path; the last status told the user why (nothing is reported
    /// yet before the first poll).
    Idle,
    Open(Box<Open>),
}

/// What the path names now, compared with the open file.
enum PathNow {
    Same,
    Missing,
    Other,
    Error(io::Error),
}

/// Follows one path; see the module docs.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    name: String,
    cfg: FollowConfig,
    state: State,
    buf: Vec<u8>,
    /// The last error or refusal reported, so a persisting condition is shown once.
    last_idle: Option<FollowStatus>,
    /// Whether the current poll hit an error (reported or not): only an error-free poll
    /// forgets the last error, so a persisting error is not repeated every poll.
    poll_error: bool,
}

impl Follower {
    /// A follower of `path`. Nothing is opened until the first poll.
    pub fn new(path: impl Into<PathBuf>, cfg: FollowConfig) -> Self {
        let path = path.into();
        let name = path.to_string_lossy().into_owned();
        let chunk = cfg.read_chunk.max(1);
        Follower {
            path,
            name,
            cfg,
            state: State::Idle,
            buf: vec![0; chunk],
            last_idle: None,
            poll_error: false,
        }
    }

    /// The followed path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Polls once and returns everything found, in order.
    pub fn poll_once(&mut self) -> Vec<FollowItem> {
        let mut out = Vec::new();
        loop {
            let more = self.poll_into(&mut |item| {
                out.push(item);
                true
            });
            // A test's poll should see the whole file, however large the per-poll cap.
            if !more {
                return out;
            }
        }
    }

    /// Polls once, handing every item to `sink` in order. Returns true when unread bytes
    /// remain (the per-poll cap was hit) so the caller should poll again without waiting.
    /// `sink` returns false when nobody listens any more; the poll then stops early (the
    /// follower's position stays consistent: what was read was handed over).
    pub fn poll_into(&mut self, sink: &mut dyn FnMut(FollowItem) -> bool) -> bool {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Idle => self.try_open(sink, None),
            State::Open(open) => self.poll_open(open, sink),
        }
    }

    /// Opens the path if a regular file is there. `change` is the status describing what
    /// happened to the previous file, emitted before the new state. Returns true when unread
    /// bytes remain.
    fn try_open(
        &mut self,
        sink: &mut dyn FnMut(FollowItem) -> bool,
        change: Option<FollowStatus>,
    ) -> bool {
        // After a switch the new state is always reported; otherwise only when it differs from
        // the last one reported (so a missing file says "waiting" once, not every poll).
        let first = change.is_some();
        if let Some(c) = change {
            if !sink(FollowItem::Status(c)) {
                return false;
            }
        }
        let idle = match open_nonblocking(&self.path) {
            Ok(file) => match file.metadata() {
                Ok(meta) if meta.is_file() => {
                    self.last_idle = None;
                    let open = Box::new(Open {
                        id: file_id(&meta),
                        file,
                        pos: 0,
                        fingerprint: Vec::new(),
                        reader: Reader::new(&self.name, self.cfg.reader),
                        partial: 0,
                        pending_reported: false,
                    });
                    if !sink(FollowItem::Status(FollowStatus::Following)) {
                        self.state = State::Open(open);
                        return false;
                    }
                    // Read what is there now; later polls continue.
                    return self.poll_open(open, sink);
                }
                Ok(_) => FollowStatus::NotRegular,
                Err(e) => FollowStatus::Error(format!("cannot stat the open file: {e}")),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => FollowStatus::Waiting,
            Err(e) => FollowStatus::Error(format!("cannot open: {e}")),
        };
        self.state = State::Idle;
        if first || self.last_idle.as_ref() != Some(&idle) {
            self.last_idle = Some(idle.clone());
            sink(FollowItem::Status(idle));
        }
        false
    }

    fn path_now(&self, open: &Open) -> PathNow {
        match std::fs::metadata(&self.path) {
            Ok(meta) if file_id(&meta) == open.id => PathNow::Same,
            Ok(_) => PathNow::Other,
            Err(e) if e.kind() == io::ErrorKind::NotFound => PathNow::Missing,
            Err(e) => PathNow::Error(e),
        }
    }

    fn poll_open(&mut self, mut open: Box<Open>, sink: &mut dyn FnMut(FollowItem) -> bool) -> bool {
        self.poll_error = false;
        let meta = match open.file.metadata() {
            Ok(m) => m,
            Err(e) => {
                self.state = State::Open(open);
                self.report_error(format!("cannot stat the open file: {e}"), sink);
                return false;
            }
        };
        if self.rewritten(&open, meta.len()) {
            let mut items = Vec::new();
            open.reader.finish(&mut items);
            if !items.is_empty() && !sink(FollowItem::Items(items)) {
                self.state = State::Open(open);
                return false;
            }
            open.reader = Reader::new(&self.name, self.cfg.reader);
            open.pos = 0;
            open.fingerprint.clear();
            open.partial = 0;
            open.pending_reported = false;
            if !sink(FollowItem::Status(FollowStatus::Truncated)) {
                self.state = State::Open(open);
                return false;
            }
        }
        // Look at the path before draining: whatever the writer put into the old file up to
        // now is read below, before any switch.
        let now = self.path_now(&open);
        let pos_before = open.pos;
        let (more, alive) = self.drain(&mut open, sink);
        if !alive {
            self.state = State::Open(open);
            return false;
        }
        let change = match now {
            PathNow::Same => None,
            PathNow::Error(e) => {
                // Keep reading through the descriptor; the path may come back.
                self.state = State::Open(open);
                self.report_error(format!("cannot stat the path: {e}"), sink);
                return more;
            }
            PathNow::Missing | PathNow::Other if more => {
                // Drain the old file completely before switching.
                self.state = State::Open(open);
                return true;
            }
            PathNow::Missing | PathNow::Other => {
                let linked = open.file.metadata().map(|m| link_count(&m) > 0);
                Some(match (now, linked) {
                    (_, Ok(true)) => FollowStatus::Rotated,
                    (PathNow::Other, _) => FollowStatus::Replaced,
                    _ => FollowStatus::Deleted,
                })
            }
        };
        match change {
            None => {
                if !self.poll_error {
                    self.last_idle = None;
                }
                let stalled = open.pos == pos_before && open.partial > 0;
                let report = stalled && !open.pending_reported;
                let bytes = open.partial;
                if report {
                    open.pending_reported = true;
                }
                self.state = State::Open(open);
                if report {
                    sink(FollowItem::Status(FollowStatus::Pending { bytes }));
                }
                more
            }
            Some(change) => {
                let mut items = Vec::new();
                open.reader.finish(&mut items);
                drop(open);
                if !items.is_empty() && !sink(FollowItem::Items(items)) {
                    self.state = State::Idle;
                    return false;
                }
                self.state = State::Idle;
                self.try_open(sink, Some(change))
            }
        }
    }

    /// Whether the open file was truncated or rewritten since it was read.
    fn rewritten(&self, open: &Open, size: u64) -> bool {
        if size < open.pos {
            return true;
        }
        if open.fingerprint.is_empty() {
            return false;
        }
        let mut head = [0u8; FINGERPRINT_LEN];
        let want = open.fingerprint.len();
        let mut got = 0;
        while got < want {
            match read_at(&open.file, &mut head[got..want], got as u64) {
                Ok(0) => return true,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The next read reports the error; do not restart on a transient failure.
                Err(_) => return false,
            }
        }
        head[..want] != open.fingerprint[..]
    }

    /// Reads new bytes (up to the per-poll cap). Returns (more bytes may remain, sink alive).
    fn drain(&mut self, open: &mut Open, sink: &mut dyn FnMut(FollowItem) -> bool) -> (bool, bool) {
        let mut budget = self.cfg.max_bytes_per_poll.max(1);
        let mut items = Vec::new();
        loop {
            let n = match read_at(&open.file, &mut self.buf, open.pos) {
                Ok(0) => return (false, true),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let alive = self.report_error(format!("read error: {e}"), sink);
                    return (false, alive);
                }
            };
            let chunk = &self.buf[..n];
            if open.fingerprint.len() < FINGERPRINT_LEN {
                let take = (FINGERPRINT_LEN - open.fingerprint.len()).min(n);
                open.fingerprint.extend_from_slice(&chunk[..take]);
            }
            open.pos += n as u64;
            open.pending_reported = false;
            open.partial = match memchr::memrchr(b'\n', chunk) {
                Some(i) => (n - i - 1) as u64,
                None => open.partial + n as u64,
            };
            open.reader.feed(chunk, &mut items);
            if !items.is_empty() && !sink(FollowItem::Items(std::mem::take(&mut items))) {
                return (true, false);
            }
            budget = budget.saturating_sub(n as u64);
            if budget == 0 {
                return (true, true);
            }
        }
    }

    fn report_error(&mut self, msg: String, sink: &mut dyn FnMut(FollowItem) -> bool) -> bool {
        self.poll_error = true;
        let status = FollowStatus::Error(msg);
        if self.last_idle.as_ref() == Some(&status) {
            return true;
        }
        self.last_idle = Some(status.clone());
        sink(FollowItem::Status(status))
    }

    /// Follows `path` on a new thread. Items arrive on the returned receiver; the thread ends
    /// when the handle is dropped (or [`FollowHandle::stop`] is called) or the receiver is
    /// dropped.
    pub fn spawn(
        path: impl Into<PathBuf>,
        cfg: FollowConfig,
    ) -> io::Result<(FollowHandle, mpsc::Receiver<FollowItem>)> {
        let mut follower = Follower::new(path, cfg);
        let (tx, rx) = mpsc::channel(follower.cfg.channel_capacity.max(1));
        let (hint_tx, hint_rx) = std_mpsc::sync_channel::<()>(1);
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = if follower.cfg.notify {
            Some(watch_parent(&follower.path, hint_tx.clone()))
        } else {
            None
        };
        let thread_stop = stop.clone();
        let interval = follower.cfg.poll_interval;
        let thread = thread::Builder::new()
            .name("doxascope-follow".into())
            .spawn(move || {
                let _watcher = match watcher {
                    Some(Ok(w)) => Some(w),
                    Some(Err(why)) => {
                        if tx
                            .blocking_send(FollowItem::Status(FollowStatus::PollingOnly(why)))
                            .is_err()
                        {
                            return;
                        }
                        None
                    }
                    None => None,
                };
                while !thread_stop.load(Ordering::Relaxed) {
                    let mut alive = true;
                    let more = follower.poll_into(&mut |item| {
                        alive = tx.blocking_send(item).is_ok();
                        alive
                    });
                    if !alive {
                        return;
                    }
                    if !more {
                        match hint_rx.recv_timeout(interval) {
                            Ok(()) | Err(std_mpsc::RecvTimeoutError::Timeout) => {}
                            // The watcher and handle are gone: poll on the timer alone.
                            Err(std_mpsc::RecvTimeoutError::Disconnected) => {
                                thread::sleep(interval)
                            }
                        }
                    }
                }
            })?;
        Ok((
            FollowHandle {
                stop,
                hint: hint_tx,
                thread: Some(thread),
            },
            rx,
        ))
    }
}

/// Watches the parent directory of `path` and turns events that concern the file into hints.
fn watch_parent(
    path: &Path,
    hint: std_mpsc::SyncSender<()>,
) -> Result<notify::RecommendedWatcher, String> {
    use notify::Watcher;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().map(|n| n.to_os_string());
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let relevant = match &res {
            Ok(ev) => {
                ev.need_rescan()
                    || ev.paths.is_empty()
                    || ev
                        .paths
                        .iter()
                        .any(|p| p.file_name().map(|n| n.to_os_string()) == name)
            }
            Err(_) => true,
        };
        if relevant {
            // A full hint channel already holds a pending wake-up: coalesce.
            let _ = hint.try_send(());
        }
    })
    .map_err(|e| e.to_string())?;
    watcher
        .watch(&parent, notify::RecursiveMode::NonRecursive)
        .map_err(|e| e.to_string())?;
    Ok(watcher)
}

/// Controls a follower thread started by [`Follower::spawn`]. Dropping it stops the thread.
#[derive(Debug)]
pub struct FollowHandle {
    stop: Arc<AtomicBool>,
    hint: std_mpsc::SyncSender<()>,
    thread: Option<thread::JoinHandle<()>>,
}

impl FollowHandle {
    /// Asks for an immediate poll (e.g. after the user pressed "reload").
    pub fn poll_now(&self) {
        let _ = self.hint.try_send(());
    }

    /// Stops the thread and waits for it. Items already sent stay in the receiver. If the
    /// channel is full, this waits until the receiver takes an item or is dropped.
    pub fn stop(mut self) {
        self.signal_stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    fn signal_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.hint.try_send(());
    }
}

impl Drop for FollowHandle {
    fn drop(&mut self) {
        // No join here: the consumer may still hold a full receiver it will never drain.
        self.signal_stop();
    }
}
