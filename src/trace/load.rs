//! Whole-stream loading on several threads, with output identical to the streaming reader's.
//!
//! Loading a file (the viewer, `audit`, the REPL) is dominated by decoding lines, and decoding a
//! line depends only on its bytes and position. The loader reads the stream in large chunks;
//! each chunk's run of complete lines (from just after its first LF to its last LF) is decoded
//! by a worker thread with its own [`Framer`] started at the right offset and line number,
//! while the main thread keeps one framer for the bytes around the cuts (the line that
//! straddles two chunks, an over-long line spanning many). Line numbers of a run are known
//! before it is decoded because the main thread counts its LFs.
//!
//! Everything that depends on earlier lines (session interning, duplicate `seq`, time going
//! backwards, and the log's event limit for [`TraceLog`](super::TraceLog)) runs on the main
//! thread, consuming the decoded batches strictly in stream order. So the items are
//! exactly those of [`Reader::feed`](super::Reader::feed) / `finish`, whatever the chunk size
//! or thread count; a differential property test checks this on hostile inputs.
//!
//! Memory stays bounded: at most a few chunks and their decoded lines are in flight.
//!
//! [`read_session_briefs`] is the same load keeping one session: every framer (the workers'
//! and the main thread's) passes over the lines a glance at their bytes places in another
//! session ([`other_session`]), and only that session's items are handed on. A viewer opening
//! a file of many sessions shows the first one from it in a fraction of the whole load's time
//! ([`lead_session`] says when that pays).

use std::collections::VecDeque;
use std::io::{self, Read};
use std::ops::Range;
use std::sync::{Arc, Mutex, mpsc};

use super::brief::BriefItem;
use super::event::FileName;
use super::reader::{
    Decoded, Framer, Item, Payload, PreBrief, PreEvent, ReaderConfig, Sessions, other_session,
};

/// How a load is cut up (tests use tiny chunks to put cuts everywhere).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadOptions {
    /// Bytes per read.
    pub chunk: usize,
    /// Decoder threads besides the main thread (0: decode everything on the main thread).
    pub workers: usize,
    /// A run of complete lines shorter than this is decoded on the main thread: handing it
    /// over would cost more than it saves.
    pub min_job: usize,
    /// Start no threads and decode the runs on the main thread (what happens when no thread
    /// can be started; tests use it to exercise that path).
    pub no_threads: bool,
    /// Make lean briefs ([`super::brief::lean`]).
    pub lean: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        LoadOptions {
            chunk: 256 << 10,
            // One decoder per core: the main thread's share (reading, session checks,
            // indexing) is small enough to interleave with them.
            workers: if cores > 1 { cores.min(8) } else { 0 },
            min_job: 16 << 10,
            no_threads: false,
            lean: false,
        }
    }
}

/// Which lines of the stream a load decodes, and how.
#[derive(Debug, Clone)]
pub(crate) enum Focus {
    /// Every line, as the load's options say.
    All,
    /// Only the lines that may belong to this session: the others are passed over
    /// ([`other_session`]).
    Only(Arc<[u8]>),
    /// Every line, but the events of another session than this one with lean briefs
    /// ([`super::brief::lean`]): a load that replays this session and indexes the rest.
    Lead(Arc<[u8]>),
}

impl Focus {
    /// `framer` set to decode as this focus says.
    fn framer(&self, framer: Framer) -> Framer {
        match self {
            Focus::All => framer,
            Focus::Only(s) => framer.only_session(Some(s.clone())),
            Focus::Lead(s) => framer.lean_others(Some(s.clone())),
        }
    }
}

/// Decoded lines of one piece of the stream, in order, with the bytes their JSON texts are in
/// (the session checks quote columns from them).
struct Batch<P> {
    bytes: Vec<u8>,
    /// Each line's output and the start of its text in `bytes` (unused for problems).
    items: Vec<(Decoded<P>, usize)>,
}

impl<P: Payload> Batch<P> {
    fn merge_into(&mut self, sessions: &mut Sessions, emit: &mut impl FnMut(P::Item)) {
        for (d, start) in self.items.drain(..) {
            let text: &[u8] = match &d {
                Decoded::Event(pre) => self
                    .bytes
                    .get(start..start + pre.head().text_len)
                    .unwrap_or(&[]),
                Decoded::Problem(_) => &[],
            };
            sessions.accept(d, text, emit);
        }
    }
}

/// Work for a decoder thread: the lines in `bytes[range]`, which start at stream offset
/// `base + range.start` on line number `line`.
struct Job<P> {
    bytes: Vec<u8>,
    range: Range<usize>,
    base: u64,
    line: u64,
    items: Vec<(Decoded<P>, usize)>,
    reply: mpsc::SyncSender<Batch<P>>,
}

enum Pending<P> {
    Ready(Batch<P>),
    Waiting(mpsc::Receiver<Batch<P>>),
}

fn decode_job<P: Payload>(
    file: &FileName,
    cfg: ReaderConfig,
    focus: &Focus,
    lean: bool,
    job: Job<P>,
) {
    let Job {
        bytes,
        range,
        base,
        line,
        mut items,
        reply,
    } = job;
    let mut framer =
        focus.framer(Framer::at(file.clone(), cfg, base + range.start as u64, line).lean(lean));
    framer.feed(&bytes[range], &mut |d: Decoded<P>, _| {
        let start = match &d {
            // The text lies inside `bytes`: a run holds complete lines only.
            Decoded::Event(pre) => (pre.head().text_at - base) as usize,
            Decoded::Problem(_) => 0,
        };
        items.push((d, start));
    });
    // The receiver is gone only if the load was abandoned; nothing to report then.
    let _ = reply.send(Batch { bytes, items });
}

/// Reads a whole stream (a file, standard input) on all cores and hands its items to `emit`
/// in stream order: exactly the items [`Reader::feed`](super::Reader::feed) and
/// [`Reader::finish`](super::Reader::finish) give for the same bytes. `emit` runs on the
/// calling thread. To stop early (a viewer closed while loading), make `r` return an error.
///
/// Use it for whole-stream loads with progress of your own (count bytes in `r`, batch the
/// items in `emit`); [`TraceLog::read_from`](super::TraceLog::read_from) is this into a log.
/// Followers and sockets keep using [`Reader`](super::Reader), which never waits for more
/// than it was given.
pub fn read_all(
    name: &str,
    r: impl Read,
    cfg: ReaderConfig,
    mut emit: impl FnMut(Item),
) -> io::Result<()> {
    load::<PreEvent>(name, r, cfg, LoadOptions::default(), Focus::All, &mut emit)
}

/// [`read_all`] giving a [`Brief`](super::Brief) of each event instead of the event: what
/// the log and the replay need, made on the decoder threads without building events (see
/// [`super::brief`]). The items are those of [`read_all`] for the same bytes, each event
/// briefed as [`Brief::of`](super::Brief::of) would.
pub fn read_all_briefs(
    name: &str,
    r: impl Read,
    cfg: ReaderConfig,
    mut emit: impl FnMut(BriefItem),
) -> io::Result<()> {
    load::<PreBrief>(name, r, cfg, LoadOptions::default(), Focus::All, &mut emit)
}

/// [`read_all_briefs`] with lean briefs ([`super::brief::lean`]): the same items, but no
/// event's brief may be replayed (its formulas are not parsed). For a load that only
/// indexes events (their places, kinds, sessions) and places problems, at a fraction of the
/// decoding cost ([`read_all_briefs_led`] is the same for all but one session).
pub fn read_all_briefs_lean(
    name: &str,
    r: impl Read,
    cfg: ReaderConfig,
    mut emit: impl FnMut(BriefItem),
) -> io::Result<()> {
    let opts = LoadOptions {
        lean: true,
        ..LoadOptions::default()
    };
    load::<PreBrief>(name, r, cfg, opts, Focus::All, &mut emit)
}

/// [`read_all_briefs`] for a viewer that replays the session `lead` and only indexes the
/// others: the same items, but the events whose lines name another session have lean
/// briefs ([`super::brief::lean`]), which must not be replayed. `lead`'s events (and
/// those without `session`) always have full ones. The brief scanner decides when it
/// reads the line's `session`, so no line is searched for it first. One read of the
/// stream gives the shown session complete and everything else indexed, every problem at
/// its place.
pub fn read_all_briefs_led(
    name: &str,
    r: impl Read,
    cfg: ReaderConfig,
    lead: &str,
    mut emit: impl FnMut(BriefItem),
) -> io::Result<()> {
    read_all_briefs_led_with(name, r, cfg, lead, LoadOptions::default(), &mut emit)
}

fn read_all_briefs_led_with(
    name: &str,
    r: impl Read,
    cfg: ReaderConfig,
    lead: &str,
    opts: LoadOptions,
    emit: &mut impl FnMut(BriefItem),
) -> io::Result<()> {
    let focus = Focus::Lead(Arc::from(lead.as_bytes()));
    load::<PreBrief>(name, r, cfg, opts, focus, emit)
}

/// [`read_all_briefs`] keeping one session's events only: the items are the `Session` and
/// `Event` items of `read_all_briefs` for the session `session` (numbered as the only
/// session, 0), and nothing else, problems included.
///
/// The lines of other sessions are mostly told apart by a glance at their bytes and never
/// decoded, which is what makes this several times cheaper than the whole load: a viewer
/// shows the session it opens on from it, then loads the rest (see `doxascope::tui`).
pub fn read_session_briefs(
    name: &str,
    r: impl Read,
    cfg: ReaderConfig,
    session: &str,
    emit: impl FnMut(BriefItem),
) -> io::Result<()> {
    read_session_briefs_with(name, r, cfg, session, LoadOptions::default(), emit)
}

/// Places per round of [`read_places_briefs`]: each round is cut in one part per core,
/// decoded on its own thread, and handed on in order.
const PLACES_ROUND: usize = 1 << 16;

/// Bytes read at a time by [`read_places_briefs`] (more when a line is longer).
const PLACES_WINDOW: usize = 1 << 20;

/// Reads the events of session `session` at `places` (each line's stream offset and line
/// number, in file order) of the file `file` named `name`, as a load of that session's
/// briefs gives them ([`read_session_briefs`], without its `Session` item): only those
/// lines are read and decoded, on every core, not the whole file. `progress` is told how
/// many places are done after each round.
///
/// Returns `Ok(false)`, having emitted the events before it, at the first place that is
/// not the start of a line holding an event of `session` (the file changed since the
/// places were taken).
pub fn read_places_briefs(
    name: &str,
    file: &std::fs::File,
    cfg: ReaderConfig,
    session: &str,
    places: &[(u64, u64)],
    progress: impl FnMut(u64),
    emit: impl FnMut(BriefItem),
) -> io::Result<bool> {
    let sizes = (PLACES_ROUND, PLACES_WINDOW);
    read_places_briefs_with(name, file, cfg, session, places, sizes, progress, emit)
}

/// [`read_places_briefs`] with `(places per round, bytes per read)` (tests make them tiny).
#[allow(clippy::too_many_arguments)]
fn read_places_briefs_with(
    name: &str,
    file: &std::fs::File,
    cfg: ReaderConfig,
    session: &str,
    places: &[(u64, u64)],
    (round_len, window): (usize, usize),
    mut progress: impl FnMut(u64),
    mut emit: impl FnMut(BriefItem),
) -> io::Result<bool> {
    let file_name = FileName::new(name);
    let parts = LoadOptions::default().workers.max(1);
    let mut done = 0u64;
    for round in places.chunks(round_len.max(1)) {
        let per = round.len().div_ceil(parts);
        let decoded: Vec<io::Result<(Vec<BriefItem>, bool)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = round
                .chunks(per)
                .map(|part| {
                    let file_name = &file_name;
                    scope.spawn(move || brief_places(file_name, file, cfg, session, part, window))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(io::Error::other("a decoder thread failed")))
                })
                .collect()
        });
        for part in decoded {
            let (items, whole) = part?;
            done += items.len() as u64;
            items.into_iter().for_each(&mut emit);
            if !whole {
                return Ok(false);
            }
        }
        progress(done);
    }
    Ok(true)
}

/// The events of `session` at `places` of `file`, and whether every place held one (the
/// events stop at the first that does not).
fn brief_places(
    name: &FileName,
    file: &std::fs::File,
    cfg: ReaderConfig,
    session: &str,
    places: &[(u64, u64)],
    window: usize,
) -> io::Result<(Vec<BriefItem>, bool)> {
    use std::os::unix::fs::FileExt;
    let default_session = {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        if base.is_empty() { &**name } else { base }
    };
    let mut out = Vec::with_capacity(places.len());
    // `buf` holds the file's bytes from `at` (one byte before a line, to check that the
    // place is a line's start).
    let (mut buf, mut at) = (Vec::new(), 0u64);
    for &(offset, line) in places {
        let want = offset.saturating_sub(1);
        let found = |buf: &[u8], at: u64| -> Option<(usize, usize)> {
            let start = usize::try_from(offset.checked_sub(at)?).ok()?;
            let rest = buf.get(start..)?;
            let end = memchr::memchr(b'\n', rest)?;
            Some((start, start + end))
        };
        let mut span = found(&buf, at).filter(|_| want >= at);
        if span.is_none() {
            let size = window.max(cfg.max_line_bytes + 3);
            buf.resize(size, 0);
            let mut filled = 0;
            while filled < size {
                match file.read_at(&mut buf[filled..], want + filled as u64) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            let eof = filled < size;
            buf.truncate(filled);
            at = want;
            span = found(&buf, at).or_else(|| {
                // The last line of the file may have no LF.
                let start = usize::try_from(offset - at).ok()?;
                (eof && start < buf.len()).then_some((start, buf.len()))
            });
        }
        let Some((start, end)) = span else {
            return Ok((out, false));
        };
        let starts_line = offset == 0 || (start > 0 && buf[start - 1] == b'\n');
        let ours = starts_line
            .then(|| super::reader::brief_one(name, cfg, offset, line, &buf[start..end]))
            .flatten()
            .filter(|(s, _)| s.as_deref().unwrap_or(default_session) == session);
        match ours {
            Some((_, item)) => out.push(item),
            None => return Ok((out, false)),
        }
    }
    Ok((out, true))
}

/// The session a viewer opening a stream starting with `prefix` shows first (that of its
/// first event), if loading it alone first is worth it: when a glance passes over at least
/// half of the prefix's complete lines as surely of other sessions, which is about the share
/// of the stream a load of that session alone leaves undecoded. `None` for a stream of one
/// session, or one whose lines the glance cannot place.
pub fn lead_session(name: &str, prefix: &[u8], cfg: ReaderConfig) -> Option<String> {
    let whole = &prefix[..memchr::memrchr(b'\n', prefix)? + 1];
    let mut framer = Framer::new(FileName::new(name), cfg);
    let mut lead: Option<String> = None;
    for line in whole.split_inclusive(|&b| b == b'\n') {
        framer.feed(line, &mut |d: Decoded<PreEvent>, _| {
            if let Decoded::Event(pre) = d {
                lead = Some(pre.head().session.unwrap_or("").to_owned());
            }
        });
        if lead.is_some() {
            break;
        }
    }
    // An event without `session` belongs to the file's own session, which a glance never
    // places: no gain.
    let lead = lead.filter(|s| !s.is_empty())?;
    let (mut lines, mut other) = (0usize, 0usize);
    for line in whole.split(|&b| b == b'\n') {
        lines += 1;
        other += usize::from(other_session(line, lead.as_bytes()));
    }
    (other * 2 >= lines).then_some(lead)
}

fn read_session_briefs_with(
    name: &str,
    r: impl Read,
    cfg: ReaderConfig,
    session: &str,
    opts: LoadOptions,
    mut emit: impl FnMut(BriefItem),
) -> io::Result<()> {
    // The load's number of the session, once it is met (lines the glance cannot place are
    // decoded, so other sessions may be met too).
    let mut ours: Option<u32> = None;
    let mut met = 0u32;
    let only: Arc<[u8]> = Arc::from(session.as_bytes());
    load::<PreBrief>(
        name,
        r,
        cfg,
        opts,
        Focus::Only(only),
        &mut |item| match item {
            BriefItem::Session(s) => {
                if ours.is_none() && *s == *session {
                    ours = Some(met);
                    emit(BriefItem::Session(s));
                }
                met += 1;
            }
            BriefItem::Event(mut ev) if Some(ev.session) == ours => {
                ev.session = 0;
                emit(BriefItem::Event(ev));
            }
            BriefItem::Event(_) | BriefItem::Problem(_) => {}
        },
    )
}

/// Reads the whole stream `r` named `name`, handing its items to `emit` in stream order.
pub(crate) fn load<P: Payload>(
    name: &str,
    r: impl Read,
    cfg: ReaderConfig,
    opts: LoadOptions,
    focus: Focus,
    emit: &mut impl FnMut(P::Item),
) -> io::Result<()> {
    let file = FileName::new(name);
    let (job_tx, job_rx) = mpsc::channel::<Job<P>>();
    let job_rx = Mutex::new(job_rx);
    std::thread::scope(|scope| {
        // Workers start with the first job, so small streams never start threads. If none can
        // be started (resource limits), jobs are decoded on this thread instead.
        let mut workers: Option<usize> = None;
        let mut spawn_workers = || {
            *workers.get_or_insert_with(|| {
                (0..if opts.no_threads { 0 } else { opts.workers })
                    .filter(|_| {
                        let (file, job_rx, focus) = (file.clone(), &job_rx, focus.clone());
                        std::thread::Builder::new()
                            .name("trace-decode".into())
                            .spawn_scoped(scope, move || {
                                loop {
                                    let job = match job_rx.lock() {
                                        Ok(rx) => rx.recv(),
                                        Err(_) => return,
                                    };
                                    match job {
                                        Ok(job) => decode_job(&file, cfg, &focus, opts.lean, job),
                                        Err(_) => return,
                                    }
                                }
                            })
                            .is_ok()
                    })
                    .count()
            })
        };
        let mut main = Main {
            framer: focus.framer(Framer::new(file.clone(), cfg).lean(opts.lean)),
            sessions: Sessions::new(file.clone()),
            queue: VecDeque::new(),
            spare_bytes: Vec::new(),
            spare_items: Vec::new(),
            waiting: 0,
            max_jobs: jobs_in_flight(opts.workers),
        };
        let res = main.run(emit, r, opts, &mut |job| {
            if spawn_workers() == 0 {
                // The reply channel holds the one batch until it is merged.
                decode_job(&file, cfg, &focus, opts.lean, job);
                return true;
            }
            // Workers stop only when this sender is dropped, after the load.
            job_tx.send(job).is_ok()
        });
        drop(job_tx);
        res
    })
}

/// The main thread's state: the framer for the bytes around the cuts, the session checks,
/// and the pieces decoded or being decoded, in stream order.
struct Main<P> {
    framer: Framer,
    sessions: Sessions,
    queue: VecDeque<Pending<P>>,
    spare_bytes: Vec<Vec<u8>>,
    spare_items: Vec<Vec<(Decoded<P>, usize)>>,
    /// How many pieces of `queue` a decoder has (or will have) in hand.
    waiting: usize,
    /// The most decoders' pieces left in flight after a merge ([`jobs_in_flight`]).
    max_jobs: usize,
}

/// How many chunks may be handed to `workers` decoders and not yet merged. Two per decoder
/// left the decoders waiting for work a fifth of the time on a 10-million-event open (the
/// reading thread merges a batch and reads the next chunk while both decoders finish theirs);
/// four keeps a queued chunk for each decoder while the reading thread is busy, for about
/// 2 MiB of chunks and their decoded lines.
fn jobs_in_flight(workers: usize) -> usize {
    4 * workers
}

impl<P: Payload> Main<P> {
    fn run(
        &mut self,
        emit: &mut impl FnMut(P::Item),
        mut r: impl Read,
        opts: LoadOptions,
        send: &mut impl FnMut(Job<P>) -> bool,
    ) -> io::Result<()> {
        let chunk_size = opts.chunk.max(1);
        loop {
            let mut chunk = self
                .spare_bytes
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(chunk_size));
            let read = fill(&mut r, &mut chunk, chunk_size);
            let n = chunk.len();
            let cut = match (
                memchr::memchr(b'\n', &chunk),
                memchr::memrchr(b'\n', &chunk),
            ) {
                (Some(first), Some(last)) if last - first >= opts.min_job && opts.workers > 0 => {
                    Some((first, last))
                }
                _ => None,
            };
            match cut {
                None => self.decode_here(&chunk, emit),
                Some((first, last)) => {
                    self.decode_here(&chunk[..=first], emit);
                    let run = first + 1..last + 1;
                    let lines = memchr::memchr_iter(b'\n', &chunk[run.clone()]).count() as u64;
                    let (pos, line) = self.framer.position();
                    let base = pos - run.start as u64;
                    self.framer.skip(run.len() as u64, lines);
                    // No LF in the tail: it only buffers (or counts an over-long line).
                    let mut tail = Batch {
                        bytes: Vec::new(),
                        items: Vec::new(),
                    };
                    self.framer
                        .feed(&chunk[last + 1..], &mut |d, text| tail.push_owned(d, text));
                    let (reply, rx) = mpsc::sync_channel(1);
                    let items = self.spare_items.pop().unwrap_or_default();
                    let job = Job {
                        bytes: chunk,
                        range: run,
                        base,
                        line,
                        items,
                        reply,
                    };
                    if !send(job) {
                        return Err(io::Error::other("the decoder threads stopped"));
                    }
                    self.queue.push_back(Pending::Waiting(rx));
                    self.waiting += 1;
                    if !tail.items.is_empty() {
                        self.queue.push_back(Pending::Ready(tail));
                    }
                }
            }
            self.merge(emit, false)?;
            // A read error ends the load after what was read before it is kept, like the
            // streaming reader fed chunk by chunk.
            read?;
            if n < chunk_size {
                break;
            }
        }
        let mut last = Batch {
            bytes: Vec::new(),
            items: Vec::new(),
        };
        self.framer.finish(&mut |d, text| last.push_owned(d, text));
        self.queue.push_back(Pending::Ready(last));
        self.merge(emit, true)
    }

    /// Decodes bytes on the main thread, straight into the log when nothing is pending.
    fn decode_here(&mut self, data: &[u8], emit: &mut impl FnMut(P::Item)) {
        if self.queue.is_empty() {
            let sessions = &mut self.sessions;
            self.framer.feed(data, &mut |d: Decoded<P>, text| {
                sessions.accept(d, text, emit)
            });
        } else {
            let mut b = Batch {
                bytes: Vec::new(),
                items: Vec::new(),
            };
            self.framer.feed(data, &mut |d, text| b.push_owned(d, text));
            if !b.items.is_empty() {
                self.queue.push_back(Pending::Ready(b));
            }
        }
    }

    /// Merges finished pieces from the front of the queue: all of them if `all`, else those
    /// already done plus as many as needed to bound the work in flight.
    fn merge(&mut self, emit: &mut impl FnMut(P::Item), all: bool) -> io::Result<()> {
        while let Some(front) = self.queue.pop_front() {
            let must_wait = all || self.waiting > self.max_jobs;
            // Only a decoder's piece gives its buffers back: the pieces decoded here (the
            // lines around the cuts) hold a few hundred bytes, and a chunk read into one of
            // those was grown and zeroed anew (8% of the reading thread's samples).
            let (mut batch, piece) = match front {
                Pending::Ready(b) => (b, false),
                Pending::Waiting(rx) => {
                    let got = if must_wait {
                        rx.recv().ok()
                    } else {
                        match rx.try_recv() {
                            Ok(b) => Some(b),
                            Err(mpsc::TryRecvError::Empty) => {
                                self.queue.push_front(Pending::Waiting(rx));
                                return Ok(());
                            }
                            Err(mpsc::TryRecvError::Disconnected) => None,
                        }
                    };
                    self.waiting -= 1;
                    match got {
                        Some(b) => (b, true),
                        None => return Err(io::Error::other("a decoder thread failed")),
                    }
                }
            };
            batch.merge_into(&mut self.sessions, emit);
            if piece && self.spare_bytes.len() <= self.max_jobs {
                self.spare_bytes.push(std::mem::take(&mut batch.bytes));
            }
            if piece && self.spare_items.len() <= self.max_jobs {
                self.spare_items.push(batch.items);
            }
        }
        Ok(())
    }
}

/// Reads `r` into `buf` until it holds `size` bytes or the stream ends, as
/// `take(size).read_to_end` does into an empty buffer, but reading over the bytes `buf`
/// already holds: a chunk buffer used again is not zeroed again (about 8% of the reading
/// thread's samples on a 10-million-event file).
fn fill(r: &mut impl Read, buf: &mut Vec<u8>, size: usize) -> io::Result<()> {
    buf.resize(size, 0);
    let mut filled = 0;
    let res = loop {
        if filled == size {
            break Ok(());
        }
        match r.read(&mut buf[filled..]) {
            Ok(0) => break Ok(()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    buf.truncate(filled);
    res
}

impl<P: Payload> Batch<P> {
    /// Adds a line decoded on the main thread, copying its text (such lines are few: the
    /// ones around the cuts, or all of a small stream).
    fn push_owned(&mut self, d: Decoded<P>, text: &[u8]) {
        let start = self.bytes.len();
        if let Decoded::Event(_) = d {
            self.bytes.extend_from_slice(text);
        }
        self.items.push((d, start));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::brief::Briefed;
    use crate::trace::{Brief, Event, Problem, Reader, TraceLog};
    use proptest::prelude::*;

    const CAP: usize = 80;

    fn stream() -> impl Strategy<Value = Vec<u8>> {
        crate::trace::streams::stream(CAP, 24)
    }

    /// A reader that returns at most `n` bytes per call, to exercise short reads.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// The streaming reader's output as a log holds it: events and problems, each in order.
    fn streamed(bytes: &[u8], cfg: ReaderConfig) -> (Vec<Event>, Vec<Problem>) {
        let mut r = Reader::new("dir/t.jsonl", cfg);
        let mut out = Vec::new();
        r.feed(bytes, &mut out);
        r.finish(&mut out);
        let mut log = TraceLog::new();
        log.extend(out);
        (log.events.to_vec(), log.problems)
    }

    fn loaded(
        bytes: &[u8],
        cfg: ReaderConfig,
        opts: LoadOptions,
        trickle: usize,
    ) -> (Vec<Event>, Vec<Problem>) {
        let mut log = TraceLog::new();
        let res = load::<PreEvent>(
            "dir/t.jsonl",
            Trickle(bytes, trickle),
            cfg,
            opts,
            Focus::All,
            &mut |i| log.push(i),
        );
        assert!(res.is_ok(), "{res:?}");
        (log.events.to_vec(), log.problems)
    }

    /// The streaming reader's output with each event briefed, and each session named
    /// before its first event.
    fn streamed_briefs(bytes: &[u8], cfg: ReaderConfig) -> Vec<BriefItem> {
        let mut r = Reader::new("dir/t.jsonl", cfg);
        let mut out = Vec::new();
        r.feed(bytes, &mut out);
        r.finish(&mut out);
        let mut sessions: Vec<String> = Vec::new();
        let mut briefs = Vec::new();
        for i in out {
            match i {
                Item::Event(ev) => {
                    let ix = match sessions.iter().position(|s| **s == *ev.session) {
                        Some(ix) => ix,
                        None => {
                            sessions.push(ev.session.to_string());
                            briefs.push(BriefItem::Session(ev.session.clone()));
                            sessions.len() - 1
                        }
                    };
                    briefs.push(BriefItem::Event(Briefed {
                        line: ev.origin.line,
                        offset: ev.origin.offset,
                        session: ix as u32,
                        brief: Brief::of(&ev),
                    }));
                }
                Item::Problem(p) => briefs.push(BriefItem::Problem(Box::new(p))),
            }
        }
        briefs
    }

    fn loaded_briefs(
        bytes: &[u8],
        cfg: ReaderConfig,
        opts: LoadOptions,
        trickle: usize,
    ) -> Vec<BriefItem> {
        let mut out = Vec::new();
        let res = load::<PreBrief>(
            "dir/t.jsonl",
            Trickle(bytes, trickle),
            cfg,
            opts,
            Focus::All,
            &mut |i| out.push(i),
        );
        assert!(res.is_ok(), "{res:?}");
        out
    }

    /// What a load of one session's briefs must give: the whole load's items for that
    /// session (its `Session` item and its events, numbered 0), nothing else.
    fn one_session(all: &[BriefItem], session: &str) -> Vec<BriefItem> {
        let mut ix = None;
        let mut met = 0;
        let mut out = Vec::new();
        for item in all {
            match item {
                BriefItem::Session(s) => {
                    if **s == *session {
                        ix = Some(met);
                        out.push(item.clone());
                    }
                    met += 1;
                }
                BriefItem::Event(ev) if Some(ev.session) == ix => {
                    let mut ev = ev.clone();
                    ev.session = 0;
                    out.push(BriefItem::Event(ev));
                }
                _ => {}
            }
        }
        out
    }

    fn sessions_of(all: &[BriefItem]) -> Vec<String> {
        let mut names: Vec<String> = all
            .iter()
            .filter_map(|i| match i {
                BriefItem::Session(s) => Some(s.to_string()),
                _ => None,
            })
            .collect();
        // A session no line names is empty, and must stay so.
        names.push("absent".into());
        names
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// A load of one session's briefs gives exactly that session's items of the whole
        /// load, whatever the lines hold (sessions written with escapes, nested `session`
        /// keys, duplicates, whitespace) and however the stream is cut.
        #[test]
        fn one_session_load_equals_the_whole_load_filtered(
            bytes in stream(),
            chunk in 1usize..200,
            workers in 0usize..4,
            min_job in 0usize..40,
        ) {
            let cfg = ReaderConfig { max_line_bytes: CAP };
            let all = streamed_briefs(&bytes, cfg);
            let opts = LoadOptions { chunk, workers, min_job, no_threads: false, lean: false };
            for s in sessions_of(&all) {
                let mut got = Vec::new();
                let res = read_session_briefs_with("dir/t.jsonl", &bytes[..], cfg, &s, opts, |i| got.push(i));
                prop_assert!(res.is_ok());
                prop_assert_eq!(got, one_session(&all, &s), "session {}", s);
            }
        }

        /// A load of briefs gives the streaming reader's items, each event briefed: the
        /// same problems in the same places, and for each event what `Brief::of` makes of it.
        #[test]
        fn brief_load_equals_the_streaming_reader_briefed(
            bytes in stream(),
            chunk in 1usize..200,
            workers in 0usize..4,
            min_job in 0usize..40,
            trickle in 1usize..300,
        ) {
            let cfg = ReaderConfig { max_line_bytes: CAP };
            let opts = LoadOptions { chunk, workers, min_job, no_threads: false, lean: false };
            prop_assert_eq!(loaded_briefs(&bytes, cfg, opts, trickle), streamed_briefs(&bytes, cfg));
        }

        /// A lean load gives the full load's items but for the formulas in its briefs: the
        /// same problems at the same places, the same events with the same places, sessions,
        /// `seq` and kinds (what an index of the file keeps), however the stream is cut.
        #[test]
        fn lean_load_equals_the_brief_load_but_formulas(
            bytes in stream(),
            chunk in 1usize..200,
            workers in 0usize..4,
            min_job in 0usize..40,
            trickle in 1usize..300,
        ) {
            let cfg = ReaderConfig { max_line_bytes: CAP };
            let opts = LoadOptions { chunk, workers, min_job, no_threads: false, lean: false };
            let index = |items: Vec<BriefItem>| -> Vec<String> {
                items
                    .into_iter()
                    .map(|i| match i {
                        BriefItem::Event(e) => format!(
                            "event {} {} {} {} {:?}",
                            e.line, e.offset, e.session, e.brief.seq, e.brief.kind()
                        ),
                        other => format!("{other:?}"),
                    })
                    .collect()
            };
            let lean = LoadOptions { lean: true, ..opts };
            prop_assert_eq!(
                index(loaded_briefs(&bytes, cfg, lean, trickle)),
                index(loaded_briefs(&bytes, cfg, opts, trickle))
            );
        }

        /// A load led by a session gives the full load's items, each event of that session
        /// with its full brief and every other event with its place, session, `seq` and
        /// kind: the same problems at the same places, however the stream is cut.
        #[test]
        fn led_load_equals_the_brief_load_but_others_formulas(
            bytes in stream(),
            chunk in 1usize..200,
            workers in 0usize..4,
            min_job in 0usize..40,
        ) {
            let cfg = ReaderConfig { max_line_bytes: CAP };
            let opts = LoadOptions { chunk, workers, min_job, no_threads: false, lean: false };
            let all = loaded_briefs(&bytes, cfg, opts, usize::MAX);
            for lead in sessions_of(&all) {
                let ix = all
                    .iter()
                    .filter_map(|i| match i {
                        BriefItem::Session(s) => Some(s.to_string()),
                        _ => None,
                    })
                    .position(|s| s == lead);
                let index = |items: &[BriefItem]| -> Vec<String> {
                    items
                        .iter()
                        .map(|i| match i {
                            BriefItem::Event(e) if Some(e.session as usize) != ix => format!(
                                "event {} {} {} {} {:?}",
                                e.line, e.offset, e.session, e.brief.seq, e.brief.kind()
                            ),
                            other => format!("{other:?}"),
                        })
                        .collect()
                };
                let mut got = Vec::new();
                let res = read_all_briefs_led_with("dir/t.jsonl", &bytes[..], cfg, &lead, opts, &mut |i| got.push(i));
                prop_assert!(res.is_ok());
                prop_assert_eq!(index(&got), index(&all), "led by {}", lead);
            }
        }

        /// A read of one session's events at their places gives the events a load of that
        /// session alone gives, and a place moved off its line, or to another session's
        /// line, stops it there.
        #[test]
        fn a_read_of_places_equals_the_session_load(
            bytes in stream(),
            moved in 0usize..50,
            round in 1usize..20,
            window in 0usize..300,
        ) {
            use std::io::Write;
            let cfg = ReaderConfig { max_line_bytes: CAP };
            let mut f = tempfile::NamedTempFile::new().expect("temp file");
            f.write_all(&bytes).expect("write");
            let file = std::fs::File::open(f.path()).expect("open");
            let all = streamed_briefs(&bytes, cfg);
            for s in sessions_of(&all) {
                let events: Vec<BriefItem> = one_session(&all, &s)
                    .into_iter()
                    .filter(|i| matches!(i, BriefItem::Event(_)))
                    .collect();
                let places: Vec<(u64, u64)> = events
                    .iter()
                    .filter_map(|i| match i {
                        BriefItem::Event(e) => Some((e.offset, e.line)),
                        _ => None,
                    })
                    .collect();
                let mut got = Vec::new();
                let whole = read_places_briefs_with("dir/t.jsonl", &file, cfg, &s, &places, (round, window), |_| {}, |i| got.push(i));
                prop_assert_eq!(whole.ok(), Some(true));
                prop_assert_eq!(&got, &events, "session {}", s);
                // One place moved: to the next byte, or to another line's start.
                if !places.is_empty() {
                    let k = moved % places.len();
                    let mut wrong = places.clone();
                    let other = all.iter().find_map(|i| match i {
                        BriefItem::Event(e) if e.offset != places[k].0 && !places.contains(&(e.offset, e.line)) => Some(e.offset),
                        _ => None,
                    });
                    wrong[k].0 = match (moved % 2, other) {
                        (0, Some(o)) => o,
                        _ => wrong[k].0 + 1,
                    };
                    let mut got = Vec::new();
                    let whole = read_places_briefs_with("dir/t.jsonl", &file, cfg, &s, &wrong, (round, window), |_| {}, |i| got.push(i));
                    prop_assert_eq!(whole.ok(), Some(false));
                    prop_assert_eq!(&got[..], &events[..k]);
                }
            }
        }

        /// The parallel load gives exactly the streaming reader's events and problems, for
        /// any chunk size, thread count and read sizes.
        #[test]
        fn parallel_load_equals_the_streaming_reader(
            bytes in stream(),
            chunk in 1usize..200,
            workers in 0usize..4,
            min_job in 0usize..40,
            trickle in 1usize..300,
            no_threads in prop::bool::weighted(0.2),
        ) {
            let cfg = ReaderConfig { max_line_bytes: CAP };
            let expected = streamed(&bytes, cfg);
            let opts = LoadOptions { chunk, workers, min_job, no_threads, lean: false };
            prop_assert_eq!(loaded(&bytes, cfg, opts, trickle), expected);
        }
    }

    /// A reader that notes, for each chunk it fills, whether the buffer it was given ends in
    /// zeros: a new (or newly grown) buffer, rather than a decoded chunk's given back.
    struct Noting<'a> {
        rest: &'a [u8],
        chunk: usize,
        fresh: Vec<bool>,
    }

    impl Read for Noting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if buf.len() == self.chunk {
                self.fresh
                    .push(buf[buf.len() / 2..].iter().all(|&b| b == 0));
            }
            let n = buf.len().min(self.rest.len());
            buf[..n].copy_from_slice(&self.rest[..n]);
            self.rest = &self.rest[n..];
            Ok(n)
        }
    }

    /// The reading thread reads each chunk into the buffer of a piece a decoder gave back,
    /// once the pieces in flight have theirs, never into a small one of the lines around a
    /// cut (which had to be grown and zeroed again for a whole chunk).
    #[test]
    fn the_reading_thread_reads_into_the_decoded_chunks_buffers() {
        let bytes = crate::trace::generate::GenConfig {
            events: 5_000,
            seed: 5,
            ..Default::default()
        }
        .bytes();
        let opts = LoadOptions {
            chunk: 8 << 10,
            workers: 2,
            min_job: 1024,
            no_threads: false,
            lean: false,
        };
        let cfg = ReaderConfig::default();
        let mut r = Noting {
            rest: &bytes,
            chunk: opts.chunk,
            fresh: Vec::new(),
        };
        let mut got = Vec::new();
        let res = load::<PreBrief>("dir/t.jsonl", &mut r, cfg, opts, Focus::All, &mut |i| {
            got.push(i)
        });
        assert!(res.is_ok(), "{res:?}");
        assert_eq!(got, streamed_briefs(&bytes, cfg));
        // Each piece in flight needs a buffer of its own; after those, every chunk is read
        // into one a decoded piece gave back.
        let in_flight = jobs_in_flight(opts.workers) + 2;
        let fresh = r.fresh.iter().filter(|&&f| f).count();
        assert!(r.fresh.len() > 8 * in_flight, "{} chunks", r.fresh.len());
        assert!(
            fresh <= in_flight,
            "{fresh} of {} chunks read into new buffers",
            r.fresh.len()
        );
    }

    #[test]
    fn a_large_generated_trace_loads_identically() {
        let bytes = crate::trace::generate::GenConfig {
            events: 20_000,
            seed: 3,
            ..Default::default()
        }
        .bytes();
        let cfg = ReaderConfig::default();
        let expected = streamed(&bytes, cfg);
        let opts = LoadOptions {
            chunk: 64 << 10,
            workers: 2,
            min_job: 1024,
            no_threads: false,
            lean: false,
        };
        assert_eq!(loaded(&bytes, cfg, opts, usize::MAX), expected);
        assert_eq!(expected.0.len(), 20_000);
        assert_eq!(
            loaded_briefs(&bytes, cfg, opts, usize::MAX),
            streamed_briefs(&bytes, cfg)
        );
        // The public entry point, with the machine's defaults.
        let mut log = TraceLog::new();
        let res = read_all("dir/t.jsonl", &bytes[..], cfg, |i| log.push(i));
        assert!(res.is_ok());
        assert_eq!((log.events.to_vec(), log.problems), expected);
        // One session at a time, each passing over the others' lines undecoded.
        let all = streamed_briefs(&bytes, cfg);
        for s in sessions_of(&all) {
            let mut got = Vec::new();
            let res = read_session_briefs("dir/t.jsonl", &bytes[..], cfg, &s, |i| got.push(i));
            assert!(res.is_ok());
            assert_eq!(got, one_session(&all, &s), "session {s}");
        }
    }

    #[test]
    fn a_glance_passes_over_only_lines_surely_of_another_session() {
        use crate::trace::reader::other_session;
        let other = |l: &str| other_session(l.as_bytes(), b"s1");
        assert!(other(r#"{"kind":"log","session":"s2","seq":1}"#));
        assert!(other(r#"{"kind":"session","session":"s11"}"#));
        assert!(other(r#"{"session":"","kind":"log"}"#));
        assert!(!other(r#"{"kind":"log","session":"s1"}"#));
        // Not sure: decoded.
        for l in [
            r#"{"kind":"log"}"#,
            r#"{"kind":"log","session" : "s2"}"#,
            r#"{"kind":"log","session":"s\u0032"}"#,
            r#"{"kind":"log","sess\u0069on":"s2"}"#,
            r#"{"kind":"log","meta":{"a":1},"session":"s2"}"#,
            r#"{"kind":"log","text":"{","session":"s2"}"#,
            r#"{"kind":"log","text":"\"session\":\"s2\"","session":"s1"}"#,
            r#"{"kind":"log","session":1}"#,
            "{\"kind\":\"log\",\"session\":\"s2",
        ] {
            assert!(!other(l), "{l}");
        }
    }

    #[test]
    fn read_errors_are_returned() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let mut log = TraceLog::new();
        let err = load::<PreEvent>(
            "x",
            Failing,
            ReaderConfig::default(),
            LoadOptions::default(),
            Focus::All,
            &mut |i| log.push(i),
        );
        assert_eq!(err.map_err(|e| e.to_string()), Err("disk on fire".into()));
    }
}
