//! Reading whole streams into memory, and the index over what was read.
//!
//! [`TraceLog`] holds the events and problems of one or more streams in read order, and an
//! [`Index`]: the events of each session (as positions into `events`) and counts per kind.
//! The index is built as events arrive, so a follower can keep extending it.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Read};

use super::event::{Event, FileName, Kind};
use super::load::LoadOptions;
use super::reader::{Item, Problem, ReaderConfig, Severity};
use super::store::EventStore;

/// Counts and per-session positions of the events in a [`TraceLog`].
#[derive(Debug, Clone, Default)]
pub struct Index {
    session_pos: HashMap<FileName, usize>,
    /// Recently seen sessions by the address of their interned name: the reader gives every
    /// event of a session the same `Arc`, so a pointer comparison usually replaces hashing
    /// the name. The index keeps those `Arc`s alive, so an address cannot be reused.
    recent: Vec<(usize, usize)>,
    sessions: Vec<(FileName, Vec<u32>)>,
    kind_counts: [u64; Kind::ALL.len()],
    unknown_kinds: BTreeMap<String, u64>,
}

impl Index {
    /// Records the event stored at position `pos` of the log.
    pub fn add(&mut self, pos: u32, ev: &Event) {
        const RECENT: usize = 16;
        let addr = ev.session.addr();
        let slot = match self.recent.iter().find(|(a, _)| *a == addr) {
            Some(&(_, slot)) => slot,
            None => {
                let slot = match self.session_pos.get(&ev.session) {
                    Some(&i) => i,
                    None => {
                        self.session_pos
                            .insert(ev.session.clone(), self.sessions.len());
                        self.sessions.push((ev.session.clone(), Vec::new()));
                        self.sessions.len() - 1
                    }
                };
                // Only an Arc the index itself holds may be cached (its address stays valid).
                if FileName::ptr_eq(&self.sessions[slot].0, &ev.session) {
                    if self.recent.len() == RECENT {
                        self.recent.remove(0);
                    }
                    self.recent.push((addr, slot));
                }
                slot
            }
        };
        self.sessions[slot].1.push(pos);
        match ev.kind() {
            Some(k) => self.kind_counts[k.index()] += 1,
            None => {
                *self
                    .unknown_kinds
                    .entry(ev.kind_name().to_string())
                    .or_default() += 1
            }
        }
    }

    /// The sessions in order of first appearance, each with the positions of its events.
    pub fn sessions(&self) -> impl Iterator<Item = (&str, &[u32])> {
        self.sessions.iter().map(|(s, v)| (&**s, v.as_slice()))
    }

    /// The positions of the events of one session.
    pub fn session(&self, name: &str) -> Option<&[u32]> {
        self.session_pos
            .get(name)
            .map(|&i| self.sessions[i].1.as_slice())
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
                    self.index.add(pos, &ev);
                    self.events.push(ev);
                }
                _ => self.problems.push(Problem {
                    severity: Severity::Error,
                    code: super::reader::ProblemCode::TooManyEvents,
                    origin: ev.origin.clone(),
                    column: 1,
                    byte_offset: None,
                    field: None,
                    message: "too many events in one log; event dropped".into(),
                    excerpt: None,
                }),
            },
            Item::Problem(p) => self.problems.push(p),
        }
    }

    /// Reads a whole stream named `name` into the log. The result is exactly what a
    /// [`Reader`](super::Reader) fed the same bytes gives, but lines are decoded on all cores
    /// (worker threads decode runs of complete lines; this thread reads, checks sessions and
    /// indexes, in stream order). Memory beyond the log stays at a few 256 KiB chunks.
    pub fn read_from(&mut self, name: &str, r: impl Read, cfg: ReaderConfig) -> io::Result<()> {
        super::load::load(name, r, cfg, LoadOptions::default(), &mut |item| {
            self.push(item)
        })
    }

    /// Reads a whole file into the log, decoding on all cores like
    /// [`TraceLog::read_from`]; the events stay in the file (the log keeps where each one
    /// is, see [`EventStore`]) and are decoded again when looked at.
    pub fn read_file(&mut self, path: &std::path::Path, cfg: ReaderConfig) -> io::Result<()> {
        let name = path.to_string_lossy().into_owned();
        let file = std::fs::File::open(path)?;
        let reader = file.try_clone()?;
        self.events.add_source(&name, file, cfg);
        super::load::load(&name, reader, cfg, LoadOptions::default(), &mut |item| {
            self.push(item)
        })
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
