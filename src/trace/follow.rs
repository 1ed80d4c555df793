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
//! Non-regular files (FIFOs, devices, directories) are refused after a `stat`, without being
//! opened: opening one fires the directory watch the follower listens to, which made a FIFO
//! at the path spin a core. Opening is non-blocking anyway, so a FIFO that slips in between
//! cannot hang the follower, and notifications of our own opens and reads are ignored.
//!
//! - **Symbolic links** at the path are resolved and their target reported
//!   ([`FollowStatus::Symlink`], with `outside` when it leaves the directory the path names);
//!   [`FollowConfig::follow_symlinks`] off refuses them (`O_NOFOLLOW`).
//! - **Large files** are started near their end: a file over
//!   [`FollowConfig::tail_threshold`] when first opened is read from the first line in its
//!   last [`FollowConfig::tail_bytes`] ([`FollowStatus::Tail`] says how much was skipped).
//! - **Many files** share one thread and one watcher ([`Follower::spawn_many`]), and at
//!   most [`FollowConfig::max_open`] descriptors: idle files are *parked* (descriptor closed,
//!   reopened by path when their size or mtime changes), and "too many open files" makes the
//!   set hold fewer until opening works again. A parked file cannot be drained after a
//!   rotation (nothing holds it open); that is the price of a bounded descriptor count.
//!
//! Two ways to drive it:
//! - [`Follower::poll_once`] does one synchronous poll and returns what it found: tests script
//!   file operations between polls and assert exact outputs;
//! - [`Follower::spawn`] (one path) and [`Follower::spawn_many`] (any number, items tagged
//!   with the path's index) run the loop on one thread and deliver [`FollowItem`]s over a
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
    /// Follow a symbolic link at the path (its target is reported, with a warning when it
    /// leaves the directory the path names). Off (`--no-follow-symlinks`): a link at the path
    /// is refused and never opened.
    pub follow_symlinks: bool,
    /// A file larger than this when the follower first opens it is not read from its start
    /// but from [`FollowConfig::tail_bytes`] before its end (as `tail` and lnav do).
    pub tail_threshold: u64,
    /// How much of the end of such a file is read (from the first line starting in it).
    pub tail_bytes: u64,
    /// Descriptors a set of followers ([`Follower::spawn_many`]) keeps open at once; idle
    /// files beyond it are closed and reopened when they change. Lowered further while
    /// opening fails with "too many open files".
    pub max_open: usize,
}

/// Default of [`FollowConfig::tail_threshold`]: 64 MiB.
pub const TAIL_THRESHOLD: u64 = 64 << 20;
/// Default of [`FollowConfig::tail_bytes`]: 16 MiB.
pub const TAIL_BYTES: u64 = 16 << 20;

impl Default for FollowConfig {
    fn default() -> Self {
        FollowConfig {
            poll_interval: Duration::from_millis(250),
            reader: ReaderConfig::default(),
            read_chunk: 64 * 1024,
            max_bytes_per_poll: 16 * 1024 * 1024,
            channel_capacity: 64,
            notify: true,
            follow_symlinks: true,
            tail_threshold: TAIL_THRESHOLD,
            tail_bytes: TAIL_BYTES,
            max_open: 128,
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
    /// The path is a symbolic link to `target` (reported when the follower first sees it
    /// and whenever the target changes). `outside`: the target is not inside the directory
    /// the path names, e.g. `traces/t.jsonl -> ../secret/key`.
    Symlink {
        /// The fully resolved target.
        target: PathBuf,
        /// The target leaves the directory the path names.
        outside: bool,
    },
    /// The path is a symbolic link and [`FollowConfig::follow_symlinks`] is off: not opened;
    /// the follower waits for a regular file.
    SymlinkRefused,
    /// The file was larger than [`FollowConfig::tail_threshold`] when first opened: reading
    /// started `skipped` bytes into it (at a line start); the bytes before were not read.
    Tail {
        /// Bytes not read at the start of the file.
        skipped: u64,
    },
    /// Asked for by the user after a [`Tail`](FollowStatus::Tail) start: the file is read
    /// again from its start, in the background (at most
    /// [`FollowConfig::max_bytes_per_poll`] per poll), and following goes on at its end.
    /// What follows is a new reading of the file, as after a truncation.
    ReadWhole,
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
            FollowStatus::Symlink { target, outside } => {
                if *outside {
                    write!(
                        f,
                        "warning: symbolic link leaves its directory, to {}",
                        target.display()
                    )
                } else {
                    write!(f, "symbolic link to {}", target.display())
                }
            }
            FollowStatus::SymlinkRefused => {
                f.write_str("a symbolic link; not followed (--no-follow-symlinks)")
            }
            FollowStatus::Tail { skipped } => write!(
                f,
                "large file: its first {} not loaded, following its end \
                 (`:read-all` reads it in the background; `doxascope view --no-follow` \
                 reads it all at the start)",
                human_bytes(*skipped)
            ),
            FollowStatus::ReadWhole => f.write_str("reading the whole file from its start"),
            FollowStatus::Error(e) => write!(f, "error: {e}"),
        }
    }
}

/// A byte count for people: `512 B`, `3.2 KiB`, `9.8 GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
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

/// Opens without blocking (a FIFO that slipped in between `stat` and `open` cannot hang
/// the follower); `nofollow` refuses a symbolic link in the last component.
#[cfg(unix)]
fn open_nonblocking(path: &Path, nofollow: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NONBLOCK;
    if nofollow {
        flags |= libc::O_NOFOLLOW;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    file.read_at(buf, pos)
}

/// Whether an `open` failed for want of descriptors (the process's or the system's).
fn out_of_descriptors(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}

/// The status for a failed `open`.
fn open_error(e: &io::Error) -> FollowStatus {
    if out_of_descriptors(e) {
        FollowStatus::Error(format!("cannot open: {e}; retrying as descriptors free up"))
    } else {
        FollowStatus::Error(format!("cannot open: {e}"))
    }
}

/// The file being followed. Its descriptor may be closed ("parked") to bound the
/// descriptors a set of followers holds; it is reopened by path when the file changes.
#[derive(Debug)]
struct Open {
    /// The descriptor; `None` while parked.
    file: Option<File>,
    id: FileId,
    /// Bytes of this file delivered to the reader.
    pos: u64,
    /// The modification time seen by the last poll (a parked file is reopened when it moves).
    mtime: Option<std::time::SystemTime>,
    /// The first bytes of the file as read (up to [`FINGERPRINT_LEN`]).
    fingerprint: Vec<u8>,
    reader: Reader,
    /// Bytes read after the last newline.
    partial: u64,
    /// Whether the current stall of `partial` was reported.
    pending_reported: bool,
    /// Where this reading of the file began: 0, or the tail start of a large file.
    started_at: u64,
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
    /// A file was opened before: only the first one is started from its tail when large.
    opened_once: bool,
    /// The symbolic link target last reported.
    last_target: Option<PathBuf>,
    /// When bytes were last read (for closing the least recently active descriptors first).
    last_active: std::time::Instant,
    /// An `open` failed with "too many open files" since the owner last asked.
    starved: bool,
    /// The user asked for the whole file after a tail start ([`Follower::read_whole`]).
    whole: bool,
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
            opened_once: false,
            last_target: None,
            last_active: std::time::Instant::now(),
            starved: false,
            whole: false,
        }
    }

    /// Asks for the whole file to be read from its start on the next poll (after a
    /// [`FollowStatus::Tail`] start left its beginning unread), announced by
    /// [`FollowStatus::ReadWhole`]. Nothing happens when no file is open or when it was
    /// read from its start anyway.
    pub fn read_whole(&mut self) {
        self.whole = true;
    }

    /// The followed path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the follower holds an open descriptor now.
    pub fn holds_descriptor(&self) -> bool {
        matches!(&self.state, State::Open(o) if o.file.is_some())
    }

    /// Closes the descriptor of the followed file, keeping everything needed to go on: the
    /// file is reopened by path on a later poll when its size or modification time changed.
    /// Bytes written to the file after it is parked and before it is renamed away or
    /// deleted cannot be read (nothing holds it open any more). Returns whether a
    /// descriptor was closed.
    pub fn park(&mut self) -> bool {
        match &mut self.state {
            State::Open(o) => o.file.take().is_some(),
            State::Idle => false,
        }
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

    /// The path's metadata, through a final symbolic link unless links are refused.
    fn path_meta(&self) -> io::Result<std::fs::Metadata> {
        if self.cfg.follow_symlinks {
            std::fs::metadata(&self.path)
        } else {
            std::fs::symlink_metadata(&self.path)
        }
    }

    /// The directory the user named (the path's parent), resolved, for the symlink warning.
    fn named_dir(&self) -> PathBuf {
        let parent = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::canonicalize(&parent).unwrap_or(parent)
    }

    /// Looks at the path without opening it: opening a FIFO or a directory would fire the
    /// directory watch this follower listens to, and a FIFO could block. Ok: a regular file
    /// is there (reported symlink targets on the way). Err: why nothing is followed.
    /// `None` inside Err means the sink is gone.
    fn inspect_path(
        &mut self,
        sink: &mut dyn FnMut(FollowItem) -> bool,
    ) -> Result<(), Option<FollowStatus>> {
        let link = match std::fs::symlink_metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(Some(FollowStatus::Waiting));
            }
            Err(e) => return Err(Some(FollowStatus::Error(format!("cannot stat: {e}")))),
        };
        let meta = if link.file_type().is_symlink() {
            if !self.cfg.follow_symlinks {
                return Err(Some(FollowStatus::SymlinkRefused));
            }
            let target = match std::fs::canonicalize(&self.path) {
                Ok(t) => t,
                // A dangling link: wait for its target to appear.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(Some(FollowStatus::Waiting));
                }
                Err(e) => {
                    return Err(Some(FollowStatus::Error(format!(
                        "cannot resolve the symbolic link: {e}"
                    ))));
                }
            };
            if self.last_target.as_ref() != Some(&target) {
                let outside = !target.starts_with(self.named_dir());
                self.last_target = Some(target.clone());
                if !sink(FollowItem::Status(FollowStatus::Symlink {
                    target,
                    outside,
                })) {
                    return Err(None);
                }
            }
            match std::fs::metadata(&self.path) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(Some(FollowStatus::Waiting));
                }
                Err(e) => return Err(Some(FollowStatus::Error(format!("cannot stat: {e}")))),
            }
        } else {
            self.last_target = None;
            link
        };
        if meta.is_file() {
            Ok(())
        } else {
            Err(Some(FollowStatus::NotRegular))
        }
    }

    /// Where to start reading a large file: `tail_bytes` before its end, moved forward to
    /// the start of the next line unless a line starts right there.
    fn tail_start(&mut self, file: &File, size: u64) -> u64 {
        let start = size.saturating_sub(self.cfg.tail_bytes.max(1));
        if start == 0 {
            return 0;
        }
        let mut prev = [0u8; 1];
        if matches!(read_at(file, &mut prev, start - 1), Ok(1)) && prev[0] == b'\n' {
            return start;
        }
        let mut pos = start;
        while pos < size {
            let n = match read_at(file, &mut self.buf, pos) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if let Some(i) = memchr::memchr(b'\n', &self.buf[..n]) {
                return pos + i as u64 + 1;
            }
            pos += n as u64;
        }
        // No line starts in the tail: read it as it is (the reader reports what it is).
        start
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
        let idle = match self.inspect_path(sink) {
            Err(None) => return false,
            Err(Some(why)) => why,
            Ok(()) => match open_nonblocking(&self.path, !self.cfg.follow_symlinks) {
                Ok(file) => match file.metadata() {
                    Ok(meta) if meta.is_file() => return self.start(file, meta, sink),
                    Ok(_) => FollowStatus::NotRegular,
                    Err(e) => FollowStatus::Error(format!("cannot stat the open file: {e}")),
                },
                Err(e) if e.kind() == io::ErrorKind::NotFound => FollowStatus::Waiting,
                Err(e) if e.raw_os_error() == Some(libc::ELOOP) && !self.cfg.follow_symlinks => {
                    FollowStatus::SymlinkRefused
                }
                Err(e) => {
                    self.starved |= out_of_descriptors(&e);
                    open_error(&e)
                }
            },
        };
        self.state = State::Idle;
        if first || self.last_idle.as_ref() != Some(&idle) {
            self.last_idle = Some(idle.clone());
            sink(FollowItem::Status(idle));
        }
        false
    }

    /// Starts following a freshly opened regular file.
    fn start(
        &mut self,
        file: File,
        meta: std::fs::Metadata,
        sink: &mut dyn FnMut(FollowItem) -> bool,
    ) -> bool {
        self.last_idle = None;
        self.last_active = std::time::Instant::now();
        let size = meta.len();
        let tail = (!self.opened_once && size > self.cfg.tail_threshold)
            .then(|| self.tail_start(&file, size))
            .filter(|&s| s > 0);
        self.opened_once = true;
        let mut open = Box::new(Open {
            id: file_id(&meta),
            mtime: None,
            file: Some(file),
            pos: 0,
            fingerprint: Vec::new(),
            reader: Reader::new(&self.name, self.cfg.reader),
            partial: 0,
            pending_reported: false,
            started_at: 0,
        });
        if let Some(start) = tail {
            // The fingerprint is always the file's first bytes, read separately here.
            let mut head = vec![0u8; FINGERPRINT_LEN];
            let got = open
                .file
                .as_ref()
                .and_then(|f| read_at(f, &mut head, 0).ok())
                .unwrap_or(0);
            head.truncate(got);
            open.fingerprint = head;
            open.pos = start;
            open.started_at = start;
        }
        if !sink(FollowItem::Status(FollowStatus::Following)) {
            self.state = State::Open(open);
            return false;
        }
        if let Some(skipped) = tail {
            if !sink(FollowItem::Status(FollowStatus::Tail { skipped })) {
                self.state = State::Open(open);
                return false;
            }
        }
        // Read what is there now; later polls continue.
        self.poll_open(open, sink)
    }

    fn path_now(&self, open: &Open) -> PathNow {
        match self.path_meta() {
            Ok(meta) if file_id(&meta) == open.id => PathNow::Same,
            Ok(_) => PathNow::Other,
            Err(e) if e.kind() == io::ErrorKind::NotFound => PathNow::Missing,
            Err(e) => PathNow::Error(e),
        }
    }

    /// A parked file: decides from the path alone whether it needs its descriptor back.
    /// Ok(true): reopened. Ok(false): unchanged, nothing to do. Err(change): the path now
    /// names something else (the parked file cannot be drained: nothing holds it open).
    fn unpark(
        &mut self,
        open: &mut Open,
        sink: &mut dyn FnMut(FollowItem) -> bool,
    ) -> Result<bool, FollowStatus> {
        let meta = match self.path_meta() {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(FollowStatus::Deleted),
            Err(e) => {
                self.report_error(format!("cannot stat the path: {e}"), sink);
                return Ok(false);
            }
        };
        if file_id(&meta) != open.id {
            // Renamed away or replaced while parked; a rename is what log rotation does.
            return Err(FollowStatus::Rotated);
        }
        if meta.len() == open.pos && meta.modified().ok() == open.mtime {
            return Ok(false);
        }
        match open_nonblocking(&self.path, !self.cfg.follow_symlinks) {
            Ok(f) => match f.metadata() {
                Ok(m) if file_id(&m) == open.id => {
                    open.file = Some(f);
                    Ok(true)
                }
                Ok(_) => Err(FollowStatus::Rotated),
                Err(e) => {
                    self.report_error(format!("cannot stat the open file: {e}"), sink);
                    Ok(false)
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(FollowStatus::Deleted),
            Err(e) => {
                self.starved |= out_of_descriptors(&e);
                let FollowStatus::Error(msg) = open_error(&e) else {
                    return Ok(false);
                };
                self.report_error(msg, sink);
                Ok(false)
            }
        }
    }

    /// Reports a stall of the unterminated last line once.
    fn stalled(&mut self, mut open: Box<Open>, sink: &mut dyn FnMut(FollowItem) -> bool) {
        let report = open.partial > 0 && !open.pending_reported;
        let bytes = open.partial;
        open.pending_reported |= report;
        self.state = State::Open(open);
        if report {
            sink(FollowItem::Status(FollowStatus::Pending { bytes }));
        }
    }

    fn poll_open(&mut self, mut open: Box<Open>, sink: &mut dyn FnMut(FollowItem) -> bool) -> bool {
        self.poll_error = false;
        if std::mem::take(&mut self.whole) && open.pos > 0 && open.started_at > 0 {
            // What was read stays delivered; the new reading starts clean at byte 0.
            let mut items = Vec::new();
            open.reader.finish(&mut items);
            if !items.is_empty() && !sink(FollowItem::Items(items)) {
                self.state = State::Open(open);
                return false;
            }
            open.reader = Reader::new(&self.name, self.cfg.reader);
            open.pos = 0;
            open.started_at = 0;
            open.partial = 0;
            open.pending_reported = false;
            if !sink(FollowItem::Status(FollowStatus::ReadWhole)) {
                self.state = State::Open(open);
                return false;
            }
        }
        if open.file.is_none() {
            match self.unpark(&mut open, sink) {
                Ok(true) => {}
                Ok(false) => {
                    if !self.poll_error {
                        self.last_idle = None;
                        self.stalled(open, sink);
                    } else {
                        self.state = State::Open(open);
                    }
                    return false;
                }
                Err(change) => return self.switch(open, change, sink),
            }
        }
        let Some(meta) = open.file.as_ref().map(File::metadata) else {
            self.state = State::Open(open);
            return false;
        };
        let meta = match meta {
            Ok(m) => m,
            Err(e) => {
                self.state = State::Open(open);
                self.report_error(format!("cannot stat the open file: {e}"), sink);
                return false;
            }
        };
        open.mtime = meta.modified().ok();
        if self.rewritten(&open, meta.len()) {
            let mut items = Vec::new();
            open.reader.finish(&mut items);
            if !items.is_empty() && !sink(FollowItem::Items(items)) {
                self.state = State::Open(open);
                return false;
            }
            open.reader = Reader::new(&self.name, self.cfg.reader);
            open.pos = 0;
            open.started_at = 0;
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
        if open.pos != pos_before {
            self.last_active = std::time::Instant::now();
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
                let linked = open
                    .file
                    .as_ref()
                    .map(|f| f.metadata().map(|m| link_count(&m) > 0));
                Some(match (now, linked) {
                    (_, Some(Ok(true))) => FollowStatus::Rotated,
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
                if open.pos == pos_before {
                    self.stalled(open, sink);
                } else {
                    self.state = State::Open(open);
                }
                more
            }
            Some(change) => self.switch(open, change, sink),
        }
    }

    /// Leaves the old file (its last unterminated line flushed) for whatever is at the path.
    fn switch(
        &mut self,
        mut open: Box<Open>,
        change: FollowStatus,
        sink: &mut dyn FnMut(FollowItem) -> bool,
    ) -> bool {
        let mut items = Vec::new();
        open.reader.finish(&mut items);
        drop(open);
        self.state = State::Idle;
        if !items.is_empty() && !sink(FollowItem::Items(items)) {
            return false;
        }
        self.try_open(sink, Some(change))
    }

    /// Whether the open file was truncated or rewritten since it was read.
    fn rewritten(&self, open: &Open, size: u64) -> bool {
        if size < open.pos {
            return true;
        }
        let Some(file) = open.file.as_ref() else {
            return false;
        };
        if open.fingerprint.is_empty() {
            return false;
        }
        let mut head = [0u8; FINGERPRINT_LEN];
        let want = open.fingerprint.len();
        let mut got = 0;
        while got < want {
            match read_at(file, &mut head[got..want], got as u64) {
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
        let Some(file) = open.file.as_ref() else {
            return (false, true);
        };
        loop {
            let n = match read_at(file, &mut self.buf, open.pos) {
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
        spawn_set(vec![path.into()], cfg, |_, item| item)
    }

    /// Follows every path in `paths` on **one** thread with one notification watcher (one
    /// watch per distinct directory), keeping at most [`FollowConfig::max_open`] descriptors
    /// open: idle files are closed and reopened when they change, and a follower that could
    /// not open its file for want of descriptors ("too many open files") retries once others
    /// are closed. Items arrive tagged with the path's index in `paths`.
    pub fn spawn_many(
        paths: Vec<PathBuf>,
        cfg: FollowConfig,
    ) -> io::Result<(FollowHandle, mpsc::Receiver<(usize, FollowItem)>)> {
        spawn_set(paths, cfg, |i, item| (i, item))
    }
}

/// Hints from the watcher: which followers to poll early.
#[derive(Debug, Default)]
struct Hints {
    /// Follower indices named by events since the last look.
    which: Vec<usize>,
    /// Poll every follower (an overflow, an event without a path, an explicit request).
    all: bool,
    /// Followers asked to read their whole file ([`FollowHandle::read_whole`]).
    whole: Vec<usize>,
}

/// The soft limit on open descriptors, where the platform says (Linux: `/proc/self/limits`,
/// read without `unsafe`).
fn descriptor_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn spawn_set<T: Send + 'static>(
    paths: Vec<PathBuf>,
    cfg: FollowConfig,
    wrap: fn(usize, FollowItem) -> T,
) -> io::Result<(FollowHandle, mpsc::Receiver<T>)> {
    let (tx, rx) = mpsc::channel(cfg.channel_capacity.max(1));
    let (wake_tx, wake_rx) = std_mpsc::sync_channel::<()>(1);
    let hints = Arc::new(std::sync::Mutex::new(Hints::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut followers: Vec<Follower> = paths
        .into_iter()
        .map(|p| Follower::new(p, cfg.clone()))
        .collect();
    // Half the descriptor limit at most: the rest of the process (terminal, sockets, the
    // watcher, the loader) needs some too.
    let mut full_cap = cfg.max_open.max(1);
    if let Some(limit) = descriptor_limit() {
        full_cap = full_cap.min((limit / 2).max(1));
    }
    let mut cap = full_cap;
    let (watcher, unwatched) = if cfg.notify {
        watch_dirs(&followers, hints.clone(), wake_tx.clone())
    } else {
        (None, vec![Some("turned off".to_string()); followers.len()])
    };
    let thread_stop = stop.clone();
    let thread_hints = hints.clone();
    let interval = cfg.poll_interval;
    let thread = thread::Builder::new()
        .name("doxascope-follow".into())
        .spawn(move || {
            let _watcher = watcher;
            let emit = |i: usize, item: FollowItem| tx.blocking_send(wrap(i, item)).is_ok();
            for (i, why) in unwatched.into_iter().enumerate() {
                if let Some(why) = why {
                    if !emit(i, FollowItem::Status(FollowStatus::PollingOnly(why))) {
                        return;
                    }
                }
            }
            let mut open = 0usize;
            let mut again: Vec<usize> = Vec::new();
            let mut due: Vec<usize> = (0..followers.len()).collect();
            let mut next_full = std::time::Instant::now() + interval;
            let mut starved_round = false;
            while !thread_stop.load(Ordering::Relaxed) {
                let full_round = due.len() == followers.len();
                let mut more_next = Vec::new();
                for i in due.drain(..) {
                    let f = &mut followers[i];
                    let had = f.holds_descriptor();
                    let mut alive = true;
                    let more = f.poll_into(&mut |item| {
                        alive = emit(i, item);
                        alive
                    });
                    if !alive {
                        return;
                    }
                    if more {
                        more_next.push(i);
                    }
                    if std::mem::take(&mut f.starved) {
                        // Out of descriptors: hold fewer for a while.
                        cap = (open * 3 / 4).max(1).min(cap);
                        starved_round = true;
                    }
                    let has = f.holds_descriptor();
                    open = open + usize::from(has) - usize::from(had);
                    while open > cap {
                        let lru = followers
                            .iter()
                            .enumerate()
                            .filter(|(j, g)| *j != i && g.holds_descriptor())
                            .min_by_key(|(_, g)| g.last_active)
                            .map(|(j, _)| j)
                            .unwrap_or(i);
                        if !followers[lru].park() {
                            break;
                        }
                        open -= 1;
                    }
                }
                // A whole round without running out: hold a few more again, up to the cap.
                if full_round {
                    if !starved_round {
                        cap = (cap + cap / 8 + 1).min(full_cap);
                    }
                    starved_round = false;
                }
                again.clear();
                again.append(&mut more_next);
                // Unread bytes remain: go on at once; otherwise wait for a hint or the timer.
                if again.is_empty() {
                    let wait = next_full.saturating_duration_since(std::time::Instant::now());
                    match wake_rx.recv_timeout(wait) {
                        Ok(()) | Err(std_mpsc::RecvTimeoutError::Timeout) => {}
                        Err(std_mpsc::RecvTimeoutError::Disconnected) => thread::sleep(wait),
                    }
                }
                let now = std::time::Instant::now();
                let hinted =
                    std::mem::take(&mut *thread_hints.lock().unwrap_or_else(|e| e.into_inner()));
                for &i in &hinted.whole {
                    if let Some(f) = followers.get_mut(i) {
                        f.read_whole();
                    }
                }
                if now >= next_full || hinted.all {
                    next_full = now + interval;
                    due.extend(0..followers.len());
                } else {
                    let mut d: Vec<usize> = again
                        .iter()
                        .copied()
                        .chain(hinted.which)
                        .chain(hinted.whole)
                        .collect();
                    d.sort_unstable();
                    d.dedup();
                    due = d;
                }
            }
        })?;
    Ok((
        FollowHandle {
            stop,
            hint: wake_tx,
            hints,
            thread: Some(thread),
        },
        rx,
    ))
}

/// Watches the parent directory of every path (once per directory) with one watcher and
/// turns the events that concern a followed name into hints. Returns the watcher (if one
/// could be made) and, per path, why it has no watch (it is then followed by polling).
#[allow(clippy::type_complexity)]
fn watch_dirs(
    followers: &[Follower],
    hints: Arc<std::sync::Mutex<Hints>>,
    wake: std_mpsc::SyncSender<()>,
) -> (Option<notify::RecommendedWatcher>, Vec<Option<String>>) {
    use notify::Watcher;
    use std::collections::HashMap;
    let parent = |p: &Path| match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut by_name: HashMap<std::ffi::OsString, Vec<usize>> = HashMap::new();
    for (i, f) in followers.iter().enumerate() {
        if let Some(n) = f.path.file_name() {
            by_name.entry(n.to_os_string()).or_default().push(i);
        }
    }
    let handler = move |res: notify::Result<notify::Event>| {
        let mut h = hints.lock().unwrap_or_else(|e| e.into_inner());
        match &res {
            // Our own opens and reads show up as access events: never a reason to look
            // again (reacting to them made a FIFO at the path spin a core).
            Ok(ev) if matches!(ev.kind, notify::EventKind::Access(_)) => return,
            Ok(ev) if !ev.need_rescan() && !ev.paths.is_empty() => {
                let before = h.which.len();
                for p in &ev.paths {
                    if let Some(ix) = p.file_name().and_then(|n| by_name.get(n)) {
                        h.which.extend_from_slice(ix);
                    }
                }
                if h.which.len() == before {
                    return;
                }
            }
            _ => h.all = true,
        }
        drop(h);
        // A full wake channel already holds a pending wake-up: coalesce.
        let _ = wake.try_send(());
    };
    let mut why = vec![None; followers.len()];
    let mut watcher = match notify::recommended_watcher(handler) {
        Ok(w) => w,
        Err(e) => return (None, vec![Some(e.to_string()); followers.len()]),
    };
    let mut done: HashMap<PathBuf, Option<String>> = HashMap::new();
    for (i, f) in followers.iter().enumerate() {
        let dir = parent(&f.path);
        let res = done.entry(dir.clone()).or_insert_with(|| {
            watcher
                .watch(&dir, notify::RecursiveMode::NonRecursive)
                .err()
                .map(|e| e.to_string())
        });
        why[i] = res.clone();
    }
    (Some(watcher), why)
}

/// Controls a follower thread started by [`Follower::spawn`] or [`Follower::spawn_many`].
/// Dropping it stops the thread.
#[derive(Debug)]
pub struct FollowHandle {
    stop: Arc<AtomicBool>,
    hint: std_mpsc::SyncSender<()>,
    hints: Arc<std::sync::Mutex<Hints>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl FollowHandle {
    /// Asks for an immediate poll of every file (e.g. after the user pressed "reload").
    pub fn poll_now(&self) {
        self.hints.lock().unwrap_or_else(|e| e.into_inner()).all = true;
        let _ = self.hint.try_send(());
    }

    /// Asks follower `i` (its index in the paths given to [`Follower::spawn_many`]) to read
    /// its whole file from the start, in the background ([`Follower::read_whole`]).
    pub fn read_whole(&self, i: usize) {
        self.hints
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .whole
            .push(i);
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
