//! The event store: where the events of a [`TraceLog`](super::TraceLog) live.
//!
//! A trace file is its own best store of events. For events read from a file (or a live
//! session's spool file) the store keeps only where each one is, a few bytes per event
//! ([`EventStore`]'s columns), and decodes an event from its line when something looks at it:
//! the file is read with positioned reads (`pread`, through the page cache; never
//! memory-mapped, which would need `unsafe` and dies with `SIGBUS` when someone truncates the
//! file), a window of several lines at a time (growing while a walk goes on through the file,
//! as the kernel's readahead does), and each thread keeps the last few windows it read: walks
//! read lines in file order or close to it, so one read serves many lines. Events with no
//! file behind them (a followed file, which may be truncated under us; standard input without
//! a spool; tests) are kept decoded in memory ("resident"). [`EventStore::release`] gives a
//! resident event's memory back (a live session's, once it ended: its spool file holds it);
//! its slot goes to the next resident event, and its position finds no event any more.
//!
//! # Two ways to look at an event
//!
//! - [`EventStore::get`] returns `&Event`: the decoded event is *pinned* (kept) until the
//!   owner of the store calls [`EventStore::unpin`], so views can borrow from it for as long
//!   as they hold the store borrowed. Use it for what is shown (a frame, an export of Σ at a
//!   step, a REPL answer): a bounded number of events. The TUI unpins between frames.
//! - [`EventStore::load`] returns the event without pinning it (borrowed when it is
//!   resident or already pinned, else freshly decoded and owned). Use it for walks that look
//!   at each event once (the replay, the recomputation, the audit): memory then stays at the
//!   columns whatever the walk touches.
//!
//! Decoding a line again gives exactly the event the streaming reader gave (a property test
//! compares the two on generated and hostile traces). If the file changed on disk since it
//! was read (since the window holding the line was read), so that the line at an event's
//! offset no longer decodes to an event of the kind read there, the store says so with an
//! `unreadable` event (an unknown kind whose `error` field explains); it never panics. (A
//! line rewritten into another event of the same kind is not detected: the store keeps no
//! copy of the bytes to compare with.)
//!
//! # Memory
//!
//! Per event: the byte offset of its line (4 bytes, and 8 more per 4 GiB of file; for a
//! resident event, its index among the resident ones), its line number (likewise) and its
//! kind (1 byte). Runs of consecutive events from one source cost 8 bytes per run. Pinned
//! events cost a slot of 16 bytes in a page of 16, pages allocated only where something was
//! pinned, and the page table 16 bytes per 16 events. Pages are small because what is
//! pinned tends to be spread thin: the audit once kept every plan, intention and
//! satisfaction (2% of a generated trace), which touched every page of 256 (16 bytes per
//! event, 160 MB at 10M events); a frame's pins are a few dozen events. Each thread also
//! keeps its last few windows of a file (at most 6 of 64 KiB).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use serde_json::value::RawValue;

use super::brief::Briefed;
use super::event::{Body, Event, Extra, FORMAT_VERSION, FileName, Kind, Origin, UnknownKind};
use super::reader::{ReaderConfig, decode_one};

mod gather;
pub use gather::Gathering;

/// The kind column's value for a kind this reader does not know.
const UNKNOWN_KIND: u8 = u8::MAX;
/// The kind column's value for a resident event given back ([`EventStore::release`]).
const RELEASED: u8 = u8::MAX - 1;
/// The source index of resident events.
const RESIDENT: u32 = u32::MAX;
/// Events per page of pin slots (see the module docs on memory).
const PAGE: usize = 16;

/// The file behind some events: a trace read once, or a live session's spool file.
#[derive(Debug)]
struct Source {
    /// The stream name events read from it carry in their [`Origin::file`].
    name: FileName,
    file: Arc<File>,
    cfg: ReaderConfig,
}

/// A file registered with a store, to register with another store too
/// ([`EventStore::adopt`]): the viewer's workers keep their own models of a session, and
/// with its files registered they keep its events as places in the files as well.
#[derive(Debug, Clone)]
pub struct SharedSource {
    name: FileName,
    file: Arc<File>,
    cfg: ReaderConfig,
}

/// Identifies a file registered with [`EventStore::add_source`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceId(u32);

/// One page of pin slots (an array, so that the page table holds thin pointers).
type PinPage = Box<[OnceLock<Box<Event>>; PAGE]>;

/// Decoded events handed out by reference, in pages of [`PAGE`] slots. Slots are filled
/// once (`OnceLock`), so a reference stays valid until the pages are dropped, which needs
/// `&mut` ([`EventStore::unpin`]).
#[derive(Debug, Default)]
struct Pins {
    pages: Vec<OnceLock<PinPage>>,
    /// The pages allocated so far, so that unpinning a long trace between two frames
    /// visits only those.
    made: Mutex<Vec<usize>>,
    count: AtomicUsize,
}

impl Pins {
    fn slot(&self, pos: usize) -> Option<&OnceLock<Box<Event>>> {
        let page = self.pages.get(pos / PAGE)?.get_or_init(|| {
            // Recorded even through a poisoned lock: a page unpin does not know of would
            // keep its events to the end.
            let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
            made.push(pos / PAGE);
            Box::new(std::array::from_fn(|_| OnceLock::new()))
        });
        page.get(pos % PAGE)
    }

    fn peek(&self, pos: usize) -> Option<&Event> {
        self.pages
            .get(pos / PAGE)?
            .get()?
            .get(pos % PAGE)?
            .get()
            .map(|b| &**b)
    }

    /// How many pages are allocated (the list of them, not a walk over the page table).
    fn made_pages(&self) -> usize {
        self.made.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    fn reserve_to(&mut self, len: usize) {
        let pages = len.div_ceil(PAGE);
        self.pages.reserve(pages.saturating_sub(self.pages.len()));
    }

    fn grow_to(&mut self, len: usize) {
        let pages = len.div_ceil(PAGE);
        while self.pages.len() < pages {
            self.pages.push(OnceLock::new());
        }
    }
}

/// A column of `u64`s that are almost always below 2³² (byte offsets, line numbers), in 4
/// bytes each: the low halves, and the high half where it changes (by first position), which
/// happens once per 4 GiB of file, or when a store's sources start over.
#[derive(Debug, Clone, Default)]
struct Wide {
    lo: Vec<u32>,
    /// (first position, high half) at each change of the high half; 0 before the first.
    hi: Vec<(u32, u32)>,
}

impl Wide {
    fn push(&mut self, v: u64) {
        let high = (v >> 32) as u32;
        if self.hi.last().map_or(0, |&(_, h)| h) != high {
            self.hi.push((self.lo.len() as u32, high));
        }
        self.lo.push(v as u32);
    }

    fn reserve(&mut self, additional: usize) {
        self.lo.reserve(additional);
    }

    fn get(&self, pos: usize) -> Option<u64> {
        let lo = *self.lo.get(pos)?;
        let high = match self.hi.partition_point(|&(p, _)| p as usize <= pos) {
            0 => 0,
            i => self.hi[i - 1].1,
        };
        Some(u64::from(high) << 32 | u64::from(lo))
    }

    fn heap_bytes(&self) -> usize {
        self.lo.capacity() * 4 + self.hi.capacity() * 8
    }
}

/// The events of a log: compact columns in memory, each event decoded from its line when it
/// is looked at (see the module documentation).
#[derive(Debug, Default)]
pub struct EventStore {
    /// Per event: the byte offset of its line in its source, or its index in `resident`.
    at: Wide,
    /// Per event: its line number (1-based).
    line: Wide,
    /// Per event: its kind ([`Kind::index`], or [`UNKNOWN_KIND`]).
    kind: Vec<u8>,
    /// Runs of consecutive events from one source: (first position, source index or
    /// [`RESIDENT`]).
    runs: Vec<(u32, u32)>,
    sources: Vec<Source>,
    /// Resident events by their index (`at`); `None` once released.
    resident: Vec<Option<Event>>,
    /// Indexes of `resident` released and free for the next resident event, so memory
    /// stays at what is held, not at what was ever held.
    free: Vec<u32>,
    pins: Pins,
    /// Lines gathered into spools of their own ([`EventStore::gather`]), and how many such
    /// spools there are (read without the lock: none, nearly always).
    gathered: RwLock<Vec<Arc<gather::Gathered>>>,
    gathering: AtomicUsize,
}

fn kind_tag(ev: &Event) -> u8 {
    ev.kind().map_or(UNKNOWN_KIND, |k| k.index() as u8)
}

impl EventStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.kind.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.kind.is_empty()
    }

    /// Makes room for `additional` more events in the columns at once, so that a load that
    /// knows about how many events are coming does not copy each column as it doubles.
    pub fn reserve(&mut self, additional: usize) {
        self.at.reserve(additional);
        self.line.reserve(additional);
        self.kind.reserve(additional);
        self.pins.reserve_to(self.kind.len() + additional);
    }

    /// Registers `file` as the store of the events whose [`Origin::file`] is `name` and that
    /// are added with [`EventStore::push_located`]; `cfg` must be the settings the stream was
    /// read with (the line cap decides what a line decodes to).
    pub fn add_source(&mut self, name: &str, file: File, cfg: ReaderConfig) -> SourceId {
        self.sources.push(Source {
            name: FileName::new(name),
            file: Arc::new(file),
            cfg,
        });
        SourceId(self.sources.len() as u32 - 1)
    }

    /// A descriptor of the registered file `id` (its own, read from the start), with the
    /// name and settings its events were read with: what a later read of some of its
    /// events needs (the viewer replays a session it only indexed at first).
    pub fn source_file(&self, id: SourceId) -> Option<(FileName, File, ReaderConfig)> {
        let src = self.sources.get(id.0 as usize)?;
        let mut file = src.file.try_clone().ok()?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0)).ok()?;
        Some((src.name.clone(), file, src.cfg))
    }

    /// Every registered file, for [`EventStore::adopt`] by another store.
    pub fn shared_sources(&self) -> Vec<SharedSource> {
        self.sources
            .iter()
            .map(|s| SharedSource {
                name: s.name.clone(),
                file: s.file.clone(),
                cfg: s.cfg,
            })
            .collect()
    }

    /// Registers the files of another store that this one does not have yet (by stream
    /// name), so events of those streams pushed here are kept as places in them too.
    pub fn adopt(&mut self, shared: &[SharedSource]) {
        for s in shared {
            if self.source_named(&s.name).is_none() {
                self.sources.push(s.clone().into_source());
            }
        }
    }

    /// The source registered for the stream `name`, if any (the latest, if several were).
    pub fn source_named(&self, name: &str) -> Option<SourceId> {
        self.sources
            .iter()
            .rposition(|s| &*s.name == name)
            .map(|i| SourceId(i as u32))
    }

    fn run_to(&mut self, source: u32) {
        let pos = self.len() as u32;
        if self.runs.last().is_none_or(|&(_, s)| s != source) {
            self.runs.push((pos, source));
        }
    }

    /// Appends an event kept decoded in memory.
    pub fn push_resident(&mut self, ev: Event) {
        self.run_to(RESIDENT);
        self.line.push(ev.origin.line);
        self.kind.push(kind_tag(&ev));
        match self.free.pop() {
            Some(i) => {
                self.at.push(u64::from(i));
                self.resident[i as usize] = Some(ev);
            }
            None => {
                self.at.push(self.resident.len() as u64);
                self.resident.push(Some(ev));
            }
        }
        self.pins.grow_to(self.len());
    }

    /// Gives back the memory of the resident event at `pos` (a live session that ended,
    /// whose events are in its spool file): the position stays, and looking at it finds no
    /// event from now on. Events kept as places in a file cost their columns only and are
    /// left as they are. Returns whether an event was released.
    pub fn release(&mut self, pos: usize) -> bool {
        if self.source_of(pos) != Some(RESIDENT) || self.kind.get(pos) == Some(&RELEASED) {
            return false;
        }
        let Some(i) = self.at.get(pos).and_then(|i| u32::try_from(i).ok()) else {
            return false;
        };
        let Some(slot) = self.resident.get_mut(i as usize) else {
            return false;
        };
        *slot = None;
        self.free.push(i);
        self.kind[pos] = RELEASED;
        true
    }

    /// The event at `pos` when it is kept in memory (not released), else `None`; never
    /// decodes or pins.
    pub fn get_resident(&self, pos: usize) -> Option<&Event> {
        if self.source_of(pos) != Some(RESIDENT) {
            return None;
        }
        self.resident_at(pos)
    }

    /// Resident events held (pushed and not released).
    pub fn resident(&self) -> usize {
        self.resident.len() - self.free.len()
    }

    /// Appends an event read from `source`, keeping only where it is: `ev` (what the reader
    /// gave for that line) is looked at for its place and kind and may then be dropped.
    pub fn push_located(&mut self, source: SourceId, ev: &Event) {
        self.push_place(source, &ev.origin, kind_tag(ev));
    }

    fn push_place(&mut self, source: SourceId, origin: &Origin, kind: u8) {
        self.run_to(source.0);
        self.at.push(origin.offset);
        self.line.push(origin.line);
        self.kind.push(kind);
        self.pins.grow_to(self.len());
    }

    /// Appends an event of a brief load ([`super::read_all_briefs`]) of the file registered
    /// as `source`: its place in the file.
    pub fn push_briefed(&mut self, source: SourceId, ev: &Briefed) {
        let kind = ev.brief.kind().map_or(UNKNOWN_KIND, |k| k.index() as u8);
        self.run_to(source.0);
        self.at.push(ev.offset);
        self.line.push(ev.line);
        self.kind.push(kind);
        self.pins.grow_to(self.len());
    }

    /// Appends an event: located in its file when its stream has a source registered (see
    /// [`EventStore::add_source`]), else resident.
    pub fn push(&mut self, ev: Event) {
        match self.source_for(&ev.origin.file) {
            Some(s) => self.push_located(s, &ev),
            None => self.push_resident(ev),
        }
    }

    /// The source of events from the stream `file`, looked up cheaply for the usual case
    /// (one source, or the same as the last event's).
    fn source_for(&self, file: &FileName) -> Option<SourceId> {
        if let Some(&(_, s)) = self.runs.last()
            && let Some(src) = self.sources.get(s as usize)
            && (FileName::ptr_eq(&src.name, file) || *src.name == **file)
        {
            return Some(SourceId(s));
        }
        self.source_named(file)
    }

    fn source_of(&self, pos: usize) -> Option<u32> {
        if pos >= self.len() {
            return None;
        }
        let i = self
            .runs
            .partition_point(|&(first, _)| first as usize <= pos);
        self.runs.get(i.checked_sub(1)?).map(|&(_, s)| s)
    }

    /// The kind of the event at `pos` without decoding it: `Some(None)` for an unknown kind.
    pub fn kind(&self, pos: usize) -> Option<Option<Kind>> {
        let k = *self.kind.get(pos)?;
        if k == RELEASED {
            return None;
        }
        Some(Kind::ALL.get(usize::from(k)).copied())
    }

    /// Where the event at `pos` was read, without decoding it.
    pub fn origin(&self, pos: usize) -> Option<Origin> {
        let src = self.source_of(pos)?;
        if src == RESIDENT {
            return self.get(pos).map(|e| e.origin.clone());
        }
        Some(Origin {
            file: self.sources.get(src as usize)?.name.clone(),
            line: self.line.get(pos)?,
            offset: self.at.get(pos)?,
        })
    }

    /// The event at `pos`, pinned until [`EventStore::unpin`] (see the module docs).
    pub fn get(&self, pos: usize) -> Option<&Event> {
        let src = self.source_of(pos)?;
        if src == RESIDENT {
            return self.resident_at(pos);
        }
        let slot = self.pins.slot(pos)?;
        Some(slot.get_or_init(|| {
            self.pins.count.fetch_add(1, Ordering::Relaxed);
            Box::new(self.decode(src, pos))
        }))
    }

    /// The resident event at `pos`, unless it was released (its slot may hold another
    /// event since).
    fn resident_at(&self, pos: usize) -> Option<&Event> {
        if self.kind.get(pos) == Some(&RELEASED) {
            return None;
        }
        self.resident.get(self.at.get(pos)? as usize)?.as_ref()
    }

    /// The event at `pos` without pinning it: borrowed when it is resident or pinned
    /// already, else decoded afresh (see the module docs).
    pub fn load(&self, pos: usize) -> Option<Cow<'_, Event>> {
        let src = self.source_of(pos)?;
        if src == RESIDENT {
            return self.resident_at(pos).map(Cow::Borrowed);
        }
        if let Some(ev) = self.pins.peek(pos) {
            return Some(Cow::Borrowed(ev));
        }
        Some(Cow::Owned(self.decode(src, pos)))
    }

    /// Whether every string the event at `pos` decodes to is ASCII, told from its line's
    /// bytes without decoding it: the line is ASCII and holds no `\u` escape. `None` when
    /// the event is not read from a file (it is resident, or decoded and pinned already) or
    /// its line cannot be read: the caller loads it then. A check that looks only at
    /// non-ASCII text skips the decode of nearly every line this way.
    pub fn plain_ascii(&self, pos: usize) -> Option<bool> {
        let src = self.source_of(pos)?;
        if src == RESIDENT || self.pins.peek(pos).is_some() {
            return None;
        }
        let (source, offset) = (self.sources.get(src as usize)?, self.at.get(pos)?);
        let plain = |b: &[u8]| b.is_ascii() && memchr::memmem::find(b, b"\\u").is_none();
        let cap = source.cfg.max_line_bytes;
        match self.gathered_line(pos) {
            Some((spool, at)) => with_line(&spool, at, cap, plain),
            None => with_line(&source.file, offset, cap, plain),
        }
        .ok()
    }

    /// Bytes the store holds on the heap for its columns, runs, resident events (their
    /// fixed part) and pin pages (not the decoded events' own allocations).
    pub fn heap_bytes(&self) -> usize {
        self.at.heap_bytes()
            + self.line.heap_bytes()
            + self.kind.capacity()
            + self.runs.capacity() * 8
            + self.resident.capacity() * std::mem::size_of::<Option<Event>>()
            + self.free.capacity() * 4
            + self.pins.pages.capacity() * std::mem::size_of::<OnceLock<PinPage>>()
            + self.pins.made_pages() * std::mem::size_of::<[OnceLock<Box<Event>>; PAGE]>()
    }

    /// Decoded events currently pinned.
    pub fn pinned(&self) -> usize {
        self.pins.count.load(Ordering::Relaxed)
    }

    /// Drops every pinned event (references handed out by [`EventStore::get`] end here).
    pub fn unpin(&mut self) {
        if self.pinned() == 0 {
            return;
        }
        let made = self.pins.made.get_mut().unwrap_or_else(|e| e.into_inner());
        for i in made.drain(..) {
            if let Some(p) = self.pins.pages.get_mut(i) {
                p.take();
            }
        }
        *self.pins.count.get_mut() = 0;
    }

    /// Every event in order, pinned (for tests and small logs).
    pub fn iter(&self) -> impl Iterator<Item = &Event> {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// Copies of every event in order (for tests and small logs).
    pub fn to_vec(&self) -> Vec<Event> {
        (0..self.len())
            .filter_map(|i| self.load(i).map(Cow::into_owned))
            .collect()
    }

    /// Decodes the event at `pos` from its line in source `src`.
    fn decode(&self, src: u32, pos: usize) -> Event {
        let (Some(source), Some(offset), Some(line), Some(&kind)) = (
            self.sources.get(src as usize),
            self.at.get(pos),
            self.line.get(pos),
            self.kind.get(pos),
        ) else {
            return unreadable(FileName::new("?"), 0, 0, "no such event");
        };
        let decode = |bytes: &[u8]| decode_one(&source.name, source.cfg, offset, line, bytes);
        let decoded = match self.gathered_line(pos) {
            Some((spool, at)) => with_line(&spool, at, source.cfg.max_line_bytes, decode),
            None => with_line(&source.file, offset, source.cfg.max_line_bytes, decode),
        };
        match decoded {
            Ok(Some(ev)) if kind_tag(&ev) == kind => ev,
            Ok(_) => unreadable(
                source.name.clone(),
                line,
                offset,
                "the file changed on disk since it was read: this line is no longer the event \
                 read here",
            ),
            Err(e) => unreadable(
                source.name.clone(),
                line,
                offset,
                &format!("the line cannot be read again: {e}"),
            ),
        }
    }
}

/// Bytes of a window read where nothing near was read before: two pages, about as cheap
/// to copy as the one line a lookup wants.
const WINDOW_MIN: usize = 8 << 10;
/// The most bytes of a window: a walk that goes on past a window reads one twice as large
/// (as the kernel's readahead does), up to this.
const WINDOW_MAX: usize = 64 << 10;
/// Windows kept per thread (at most `WINDOWS * WINDOW_MAX` bytes per thread).
const WINDOWS: usize = 6;

/// Bytes of a file read lately on this thread.
struct Window {
    /// The file: compared by address, and a `Weak` keeps that address from being reused by
    /// another file while the window exists (it does not keep the file open).
    file: Weak<File>,
    /// The file offset of `bytes[0]`.
    start: u64,
    bytes: Vec<u8>,
}

thread_local! {
    /// The windows read last on this thread, the newest first. Walks (the replay, the
    /// recomputation, the audit's checks, a frame's rows) read lines in file order or
    /// close to it, and one read per line was a system call per line: 27,719 of them for
    /// the audit of a 5,923-line trace, a sixth of its time.
    static RECENT: RefCell<Vec<Window>> = const { RefCell::new(Vec::new()) };
}

/// Calls `f` with the bytes of the line at `offset` of `file`, exactly those [`read_line`]
/// reads: from a window of the file read lately on this thread when the whole line is in
/// one, else from a new window, else (a line longer than a window, the last line without
/// its LF) from [`read_line`].
///
/// A window holds bytes as they were when it was read: a file rewritten in place meanwhile
/// shows the line read before (the event the trace had), where a new read would show the
/// new line or an `unreadable` event. Appended bytes are read when a line needs them.
fn with_line<R>(
    file: &Arc<File>,
    offset: u64,
    cap: usize,
    f: impl FnOnce(&[u8]) -> R,
) -> std::io::Result<R> {
    let limit = cap.saturating_add(2);
    // The line in `w`, if `w` holds all of it (up to its LF, within the cap).
    let line_in = |w: &Window| -> Option<std::ops::Range<usize>> {
        let from = usize::try_from(offset.checked_sub(w.start)?).ok()?;
        let rest = w.bytes.get(from..)?;
        let n = memchr::memchr(b'\n', rest)?;
        (n < limit).then_some(from..from + n)
    };
    let same = |w: &Window| std::ptr::eq(w.file.as_ptr(), Arc::as_ptr(file));
    // `f` runs with the windows borrowed: it only decodes bytes, and never reads a line.
    RECENT.with_borrow_mut(|recent| {
        let hit = recent
            .iter()
            .enumerate()
            .find_map(|(i, w)| same(w).then(|| line_in(w)).flatten().map(|r| (i, r)));
        if let Some((i, range)) = hit {
            // Newest first: a walk finds its window at once.
            recent[..=i].rotate_right(1);
            return Ok(f(recent[0].bytes.get(range).unwrap_or(&[])));
        }
        // A walk that goes on past a window it read reads a larger one (and is done with
        // the old one); a lookup elsewhere reads a small one, from the start of the line's
        // page. The buffer of the window that goes out is reused: a fresh one per read was
        // an allocation and a return of pages to the system per read.
        let grown = recent.iter().position(|w| {
            let len = w.bytes.len().max(4096) as u64;
            same(w) && offset >= w.start && offset < w.start + 2 * len
        });
        let (size, mut bytes) = match grown {
            Some(i) => {
                let old = recent.remove(i).bytes;
                ((old.len() * 2).clamp(WINDOW_MIN, WINDOW_MAX), old)
            }
            None if recent.len() >= WINDOWS => (
                WINDOW_MIN,
                recent.pop().map(|w| w.bytes).unwrap_or_default(),
            ),
            None => (WINDOW_MIN, Vec::new()),
        };
        let start = offset & !4095;
        read_into(file, start, size, &mut bytes)?;
        let w = Window {
            file: Arc::downgrade(file),
            start,
            bytes,
        };
        match line_in(&w) {
            Some(range) => {
                recent.insert(0, w);
                Ok(f(recent[0].bytes.get(range).unwrap_or(&[])))
            }
            None => read_line(file, offset, cap).map(|b| f(&b)),
        }
    })
}

/// Reads up to `n` bytes of `file` from `offset` (fewer at its end) into `buf`.
fn read_into(file: &File, offset: u64, n: usize, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    buf.resize(n, 0);
    let filled = fill(file, buf, offset)?;
    buf.truncate(filled);
    Ok(())
}

/// Fills `buf` from `offset` of `file`, short only at the file's end; returns how many bytes
/// were read.
fn fill(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The bytes of the line starting at `offset` (without its LF), reading at most a cap's
/// worth (plus a CR and the LF).
fn read_line(file: &File, offset: u64, cap: usize) -> std::io::Result<Vec<u8>> {
    let limit = cap.saturating_add(2);
    let mut buf = Vec::new();
    let mut want = 512usize.min(limit);
    loop {
        let start = buf.len();
        buf.resize(want, 0);
        let filled = start + fill(file, &mut buf[start..], offset + start as u64)?;
        buf.truncate(filled);
        if let Some(i) = memchr::memchr(b'\n', &buf[start..]) {
            buf.truncate(start + i);
            return Ok(buf);
        }
        // The last line of a file may end without a newline.
        if filled < want || want >= limit {
            return Ok(buf);
        }
        want = want.saturating_mul(4).min(limit);
    }
}

/// The event shown for a line that can no longer be decoded as the event read there.
fn unreadable(file: FileName, line: u64, offset: u64, why: &str) -> Event {
    let text = serde_json::to_string(why).unwrap_or_else(|_| "\"?\"".into());
    let extra: Vec<(String, Box<RawValue>)> = RawValue::from_string(text)
        .map(|v| vec![("error".to_string(), v)])
        .unwrap_or_default();
    let base = file.rsplit(['/', '\\']).next().unwrap_or_default();
    Event {
        session: FileName::new(base),
        origin: Origin { file, line, offset },
        v: FORMAT_VERSION,
        v_given: false,
        seq: line,
        seq_given: false,
        ts: None,
        session_given: false,
        id: None,
        body: Body::Unknown(Box::new(UnknownKind {
            kind: "unreadable".into(),
        })),
        extra: Extra::from(extra),
    }
}

impl SharedSource {
    fn into_source(self) -> Source {
        Source {
            name: self.name,
            file: self.file,
            cfg: self.cfg,
        }
    }
}

impl PartialEq for EventStore {
    /// Two stores are equal when they hold equal events in the same order, wherever the
    /// events are kept.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && (0..self.len()).all(|i| self.load(i).as_deref() == other.load(i).as_deref())
    }
}

impl Clone for EventStore {
    /// A copy holding the same events (file-backed ones still read from the same files);
    /// nothing is pinned in the copy.
    fn clone(&self) -> Self {
        let mut pins = Pins::default();
        pins.grow_to(self.len());
        EventStore {
            at: self.at.clone(),
            line: self.line.clone(),
            kind: self.kind.clone(),
            runs: self.runs.clone(),
            sources: self
                .sources
                .iter()
                .map(|s| Source {
                    name: s.name.clone(),
                    file: s.file.clone(),
                    cfg: s.cfg,
                })
                .collect(),
            resident: self.resident.clone(),
            free: self.free.clone(),
            pins,
            // A gathering belongs to the store it was made on.
            gathered: RwLock::default(),
            gathering: AtomicUsize::new(0),
        }
    }
}

impl PartialEq<[Event]> for EventStore {
    fn eq(&self, other: &[Event]) -> bool {
        self.len() == other.len()
            && other
                .iter()
                .enumerate()
                .all(|(i, e)| self.load(i).as_deref() == Some(e))
    }
}

impl PartialEq<Vec<Event>> for EventStore {
    fn eq(&self, other: &Vec<Event>) -> bool {
        *self == other[..]
    }
}

impl std::ops::Index<usize> for EventStore {
    type Output = Event;

    /// The event at `pos`, pinned like [`EventStore::get`]. Panics when there is no such
    /// position, as a `Vec` does: for tests and positions the log itself handed out.
    fn index(&self, pos: usize) -> &Event {
        match self.get(pos) {
            Some(ev) => ev,
            None => panic!("event {pos} out of range (the store has {})", self.len()),
        }
    }
}

impl<'a> IntoIterator for &'a EventStore {
    type Item = &'a Event;
    type IntoIter = Box<dyn Iterator<Item = &'a Event> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::Wide;

    /// Offsets past 4 GiB, line numbers starting over with a second source, and high halves
    /// going up and down: every value comes back as pushed.
    #[test]
    fn wide_columns_keep_every_value() {
        let g = 1u64 << 32;
        let values = [
            0,
            7,
            u64::from(u32::MAX),
            g,
            g + 5,
            3 * g + 1,
            3 * g + 1,
            1,
            2,
            g - 1,
            u64::MAX,
            9,
        ];
        let mut w = Wide::default();
        for &v in &values {
            w.push(v);
        }
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(w.get(i), Some(v), "position {i}");
        }
        assert_eq!(w.get(values.len()), None);
        // One entry per change of the high half, not per value.
        assert_eq!(w.hi.len(), 5);
        let mut small = Wide::default();
        (0..1000).for_each(|v| small.push(v * 1000));
        assert!(small.hi.is_empty());
        assert_eq!(small.get(999), Some(999_000));
    }

    fn events(name: &str, n: usize) -> Vec<crate::trace::Event> {
        let text: String = (0..n)
            .map(|i| format!("{{\"kind\":\"log\",\"message\":\"{name}{i}\"}}\n"))
            .collect();
        let mut r = crate::trace::Reader::new(name, crate::trace::ReaderConfig::default());
        let mut items = Vec::new();
        r.feed(text.as_bytes(), &mut items);
        items
            .into_iter()
            .filter_map(|it| match it {
                crate::trace::Item::Event(e) => Some(e),
                _ => None,
            })
            .collect()
    }

    /// Sessions that come and go, each released when it ends: the resident events are those
    /// of the sessions still held, however many came before, released positions find no
    /// event (not the one that took their slot) and the others keep theirs.
    #[test]
    fn released_events_give_their_memory_back_and_are_never_mistaken_for_others() {
        let mut st = super::EventStore::new();
        let mut kept = Vec::new();
        for round in 0..200 {
            let start = st.len();
            for ev in events(&format!("s{round}-"), 5) {
                st.push_resident(ev);
            }
            if round % 50 == 0 {
                kept.push((start, round));
                continue;
            }
            for pos in start..st.len() {
                assert!(st.release(pos));
                assert!(!st.release(pos), "released twice");
            }
        }
        assert_eq!(st.resident(), 5 * kept.len());
        assert!(
            st.resident.len() <= 5 * (kept.len() + 1),
            "{}",
            st.resident.len()
        );
        for pos in 0..st.len() {
            let ours = kept.iter().find(|(s, _)| (*s..s + 5).contains(&pos));
            match ours {
                Some((s, round)) => {
                    let ev = st.get(pos).expect("a kept event");
                    let want = format!("\"s{round}-{}\"", pos - s);
                    assert!(ev.to_json_line().contains(&want), "{pos}: {want}");
                    assert!(st.kind(pos).is_some());
                }
                None => {
                    assert!(st.get(pos).is_none() && st.load(pos).is_none(), "{pos}");
                    assert_eq!(st.kind(pos), None);
                }
            }
        }
    }
}
