//! Reading whole streams into memory, and the index over what was read.
//!
//! [`TraceLog`] holds the events and problems of one or more streams in read order, and an
//! [`Index`]: the events of each session (as positions into `events`) and counts per kind.
//! The index is built as events arrive, so a follower can keep extending it.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read};

use super::brief::Briefed;
use super::event::{Event, FileName, Kind};
use super::load::{Focus, LoadOptions};
use super::reader::{Item, PreEvent, Problem, ReaderConfig, Severity};
use super::store::{EventStore, SourceId};

/// Counts of the events in a [`TraceLog`]: per session and per kind.
#[derive(Debug, Clone, Default)]
pub struct Index {
    session_pos: HashMap<FileName, usize>,
    /// Recently seen sessions by the address of their interned name: the reader gives every
    /// event of a session the same `Arc`, so a pointer comparison usually replaces hashing
    /// the name. The index keeps those `Arc`s alive, so an address cannot be reused.
    recent: Vec<(usize, usize)>,
    /// Sessions in order of first appearance with their numbers of events (which events
    /// are whose is the model's timelines' to list: a second list here would cost 4 bytes
    /// per event).
    sessions: Vec<(FileName, u64)>,
    kind_counts: [u64; Kind::ALL.len()],
    unknown_kinds: BTreeMap<String, u64>,
    /// Entries of `sessions` forgotten and not yet compacted away.
    forgotten: usize,
}

/// The count of a forgotten session's entry until it is compacted away.
const FORGOTTEN: u64 = u64::MAX;

impl Index {
    /// Counts an event added to the log.
    pub fn add(&mut self, ev: &Event) {
        self.add_parts(&ev.session, ev.kind(), ev.kind_name());
    }

    /// Counts an event of session `session` and kind `kind` (`kind_name` as written).
    fn add_parts(&mut self, session: &FileName, kind: Option<Kind>, kind_name: &str) {
        const RECENT: usize = 16;
        let addr = session.addr();
        let slot = match self.recent.iter().find(|(a, _)| *a == addr) {
            Some(&(_, slot)) => slot,
            None => {
                let slot = match self.session_pos.get(session) {
                    Some(&i) => i,
                    None => {
                        self.session_pos
                            .insert(session.clone(), self.sessions.len());
                        self.sessions.push((session.clone(), 0));
                        self.sessions.len() - 1
                    }
                };
                // Only an Arc the index itself holds may be cached (its address stays valid).
                if FileName::ptr_eq(&self.sessions[slot].0, session) {
                    if self.recent.len() == RECENT {
                        self.recent.remove(0);
                    }
                    self.recent.push((addr, slot));
                }
                slot
            }
        };
        self.sessions[slot].1 += 1;
        match kind {
            Some(k) => self.kind_counts[k.index()] += 1,
            None => *self.unknown_kinds.entry(kind_name.to_string()).or_default() += 1,
        }
    }

    /// Forgets session `name` (a live session whose events were given back, see
    /// [`super::EventStore::release`]): it is no longer listed or counted, so a viewer that
    /// takes sessions for ever keeps an index of those it holds. The kind counts stay.
    pub fn forget(&mut self, name: &str) {
        let Some(i) = self.session_pos.remove(name) else {
            return;
        };
        self.sessions[i].1 = FORGOTTEN;
        self.forgotten += 1;
        // The cache holds slots, which compaction moves.
        self.recent.clear();
        if self.forgotten * 2 > self.sessions.len() {
            self.sessions.retain(|(_, n)| *n != FORGOTTEN);
            self.session_pos = self
                .sessions
                .iter()
                .enumerate()
                .map(|(i, (s, _))| (s.clone(), i))
                .collect();
            self.forgotten = 0;
        }
    }

    /// The sessions in order of first appearance, each with its number of events.
    pub fn sessions(&self) -> impl Iterator<Item = (&str, u64)> {
        self.sessions
            .iter()
            .filter(|(_, n)| *n != FORGOTTEN)
            .map(|(s, n)| (&**s, *n))
    }

    /// The number of events of one session.
    pub fn session(&self, name: &str) -> Option<u64> {
        self.session_pos.get(name).map(|&i| self.sessions[i].1)
    }

    /// How many events of a known kind were read.
    pub fn count(&self, kind: Kind) -> u64 {
        self.kind_counts[kind.index()]
    }

    /// How many events of each unknown kind were read.
    pub fn unknown_kinds(&self) -> &BTreeMap<String, u64> {
        &self.unknown_kinds
    }
}

/// The problem an event becomes when the log is full.
fn too_many(origin: super::event::Origin) -> Problem {
    Problem {
        severity: Severity::Error,
        code: super::reader::ProblemCode::TooManyEvents,
        origin,
        column: 1,
        byte_offset: None,
        field: None,
        message: "too many events in one log; event dropped".into(),
        excerpt: None,
    }
}

/// Everything read from one or more streams.
#[derive(Debug, Default)]
pub struct TraceLog {
    /// The events, in read order: compact columns, each event decoded from its line when it
    /// is looked at, or kept in memory when it has no file behind it (see [`EventStore`]).
    pub events: EventStore,
    /// The problems, in read order.
    pub problems: Vec<Problem>,
    /// The index over `events`.
    pub index: Index,
}

impl TraceLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the reader's output to the log. Positions are `u32` (half the memory of `usize`
    /// for the per-session lists), so a log holds at most `u32::MAX` events; beyond that an
    /// event is replaced by an error problem rather than dropped silently.
    pub fn extend(&mut self, items: impl IntoIterator<Item = Item>) {
        for item in items {
            self.push(item);
        }
    }

    /// Adds one item of reader output (see [`TraceLog::extend`]).
    pub fn push(&mut self, item: Item) {
        match item {
            Item::Event(ev) => match u32::try_from(self.events.len()) {
                Ok(pos) if pos < u32::MAX => {
                    self.index.add(&ev);
                    self.events.push(ev);
                }
                _ => self.problems.push(too_many(ev.origin)),
            },
            Item::Problem(p) => self.problems.push(p),
        }
    }

    /// Adds an event of a brief load ([`super::read_all_briefs`]) of the stream `file`,
    /// whose file is registered with the store as `source`: `session` is the event's
    /// session. The event is kept as its place in the file. Like [`TraceLog::push`], a full
    /// log turns it into a problem.
    pub fn push_briefed(
        &mut self,
        source: SourceId,
        file: &FileName,
        session: &FileName,
        ev: &Briefed,
    ) {
        match u32::try_from(self.events.len()) {
            Ok(pos) if pos < u32::MAX => {
                let g = &ev.brief.gist;
                self.index.add_parts(session, g.kind(), g.kind_name());
                self.events.push_briefed(source, ev);
            }
            _ => self.problems.push(too_many(super::event::Origin {
                file: file.clone(),
                line: ev.line,
                offset: ev.offset,
            })),
        }
    }

    /// Reads a whole stream named `name` into the log. The result is exactly what a
    /// [`Reader`](super::Reader) fed the same bytes gives, but lines are decoded on all cores
    /// (worker threads decode runs of complete lines; this thread reads, checks sessions and
    /// indexes, in stream order). Memory beyond the log stays at a few 256 KiB chunks.
    pub fn read_from(&mut self, name: &str, r: impl Read, cfg: ReaderConfig) -> io::Result<()> {
        super::load::load::<PreEvent>(
            name,
            r,
            cfg,
            LoadOptions::default(),
            Focus::All,
            &mut |item| self.push(item),
        )
    }

    /// Reads a whole file into the log, decoding on all cores like
    /// [`TraceLog::read_from`]; the events stay in the file (the log keeps where each one
    /// is, see [`EventStore`]) and are decoded again when looked at.
    pub fn read_file(&mut self, path: &std::path::Path, cfg: ReaderConfig) -> io::Result<()> {
        let name = path.to_string_lossy().into_owned();
        let file = std::fs::File::open(path)?;
        let reader = file.try_clone()?;
        self.events.add_source(&name, file, cfg);
        super::load::load::<PreEvent>(
            &name,
            reader,
            cfg,
            LoadOptions::default(),
            Focus::All,
            &mut |item| self.push(item),
        )
    }

    /// Reads a whole in-memory stream named `name` into the log.
    pub fn read_bytes(&mut self, name: &str, bytes: &[u8], cfg: ReaderConfig) {
        // Reading from a slice cannot fail, and the decoder threads only stop with the load.
        let _ = self.read_from(name, bytes, cfg);
    }

    /// Number of problems of the given severity.
    pub fn count(&self, severity: Severity) -> usize {
        self.problems
            .iter()
            .filter(|p| p.severity == severity)
            .count()
    }
}
