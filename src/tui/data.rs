//! What the panes show: the trace as it is read, replayed by the model.
//!
//! [`Store`] owns the [`TraceLog`] and one [`SessionData`] per timeline. Each holds the
//! model's own replay of the session ([`crate::model::Timeline`], built incrementally with
//! the model's builder, the same code `export`, `audit` and the headless REPL read), so Σ,
//! the retraction log, the verification log and the BDI log the panes draw are the model's,
//! never a second interpretation. What this module adds is only what a view needs and the
//! model has no notion of:
//!
//! - how sessions are told apart while the TUI runs ([`SessionSource`]: files, re-read segments of
//!   a followed file, live connections);
//! - the reader's problems (lines that are not events) at their place in file order, so the
//!   timeline shows them as rows between the events they were read between;
//! - one byte per event for the density strip (gate contradictions, revisions).
//!
//! It grows one batch of reader items at a time, so the background loader and follow mode
//! extend it without re-reading what came before, and every per-step question is answered
//! from the model's append-only vectors without replaying the session.
//!
//! Step t of a session is the state after its first t events (step 0 is empty), the
//! model's convention. Timeline rows are events and reader problems interleaved; a problem
//! row shows the step of the events read before it ([`SessionData::step_of_row`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use crate::model::Timeline;
use crate::model::timeline::{Builder, Growing, str_hash};
use crate::trace::event::FileName;
use crate::trace::reader::Problem;
use crate::trace::{Brief, BriefItem, Event, Gist, Item, Severity, TraceLog};

/// The name of a serializable unit enum value (`fact`, `contradiction`, ...).
pub fn enum_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::from("?"),
    }
}

/// A timeline row: an event of the session or a reader problem read between its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowItem {
    /// The event at this index of the session (it takes effect at step index + 1).
    Event(u32),
    /// The problem at this index of [`SessionData::problems`].
    Problem(u32),
}

/// Everything the views need about one session.
#[derive(Debug, Clone)]
pub struct SessionData {
    /// The session name (sanitized for live sessions, whose names are client-chosen).
    pub name: Arc<str>,
    /// The model's replay of the session.
    pub tl: Timeline,
    builder: Builder,
    /// Reader problems of this session in read order, as (events of the session read before
    /// it, index into [`TraceLog::problems`]).
    pub problems: Vec<(u32, u32)>,
    /// Of those, how many are errors (lines that are not events); the rest are warnings
    /// (lines kept as events, see [`SessionData::warnings`]).
    pub errors: u32,
    /// Gate contradictions and revisions per event, for the density strip.
    pub marks: Vec<u8>,
    /// The OR of `marks` per block of [`MARK_BLOCK`] events, kept as events arrive, so the
    /// density strip of a million events reads a few thousand blocks instead of every mark.
    mark_blocks: Vec<u8>,
    /// Belief records in the order they were ended (retracted or superseded), which is
    /// the order of their retraction steps: the records retracted by step t are a prefix.
    /// The Σ filter finds the records a status filter drops at t from it without a pass
    /// over Σ.
    pub ended: Vec<u32>,
    /// Belief records by the hash of their id (several per id when it was announced again),
    /// so the detail pane finds the record a `because` cites without a pass over Σ. Grows
    /// without rehashing pauses, like the model's own indexes; entries keep the hash, so
    /// growing never reads the records. Brought up to date when asked, not at each event:
    /// indexing every record while a file loaded was 2% of the open of a 10M-event trace
    /// (issue 31), for a pane that asks only about the events it shows.
    by_id: RefCell<IdIndex>,
    /// Where the events come from (a file, a re-read segment of one, a live session).
    pub origin: SessionSource,
    /// Aged out of the session list ([`Store::retire`]): its events are in a file only.
    pub retired: bool,
    /// An ended live session still listed whose events were given back ([`Store::unload`]):
    /// they are in its spool file, read again when it is shown.
    pub unloaded: bool,
    /// A session of a file loaded led by another session ([`Store::lead`]), indexed
    /// without replaying it: its events are in the log, its timeline is empty until it is
    /// replayed ([`Store::begin_replay`]), which happens when it is shown.
    pub deferred: Option<Box<Deferred>>,
}

/// What is known of a session indexed but not replayed yet ([`SessionData::deferred`]):
/// its events' places and its reader problems, each at its place, so that the replay gives
/// the session exactly what a one-pass load gives it.
#[derive(Debug, Clone)]
pub struct Deferred {
    /// The log positions of its events, in read order.
    positions: Vec<u32>,
    /// Its reader problems as (events of the session read before it, index into
    /// [`TraceLog::problems`]), added to the session when its replay ends.
    problems: Vec<(u32, u32)>,
    /// Of those, how many are errors.
    errors: u32,
    /// Events replayed so far by a replay under way.
    replayed: usize,
    /// The file its events were read from.
    source: crate::trace::SourceId,
}

impl Deferred {
    /// Its events (the session's steps once replayed).
    pub fn events(&self) -> u32 {
        self.positions.len() as u32
    }

    /// Of those, how many a replay under way has replayed.
    pub fn replayed(&self) -> u32 {
        self.replayed as u32
    }

    /// Its reader problems that are errors (lines that are not events).
    pub fn errors(&self) -> u32 {
        self.errors
    }

    /// All its reader problems.
    pub fn problems(&self) -> u32 {
        self.problems.len() as u32
    }
}

/// Where a session's events come from, which decides what identifies the session.
///
/// Events read from files are grouped by their `session` field, as they always were. Live
/// sessions are keyed by the hub's [`SessionId`](crate::trace::live::SessionId), never by
/// the name a client claims, so two clients claiming one name stay two timelines. A followed
/// file that was truncated or replaced starts a new segment: what is read afterwards is a
/// new timeline (its `session` plus " · re-read N"), and the timeline shown before stays
/// complete and unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum SessionSource {
    /// Grouped by the events' `session` field (files, stdin read as a file).
    #[default]
    Trace,
    /// Segment `segment` (1 or more) of the followed file number `file`.
    Segment {
        /// Index of the file among the followed files.
        file: u32,
        /// How many times the file was re-read from its start.
        segment: u32,
    },
    /// A live session.
    Live(u64),
}

/// Density-strip mark: a contradiction reported by the gate.
pub const MARK_CONTRADICTION: u8 = 1;
/// Density-strip mark: a revision or retraction.
pub const MARK_REVISION: u8 = 2;
/// Density-strip mark: an error or finding.
pub const MARK_PROBLEM: u8 = 4;

/// [`SessionData`]'s records by the hash of their id, and how many of them it holds.
#[derive(Debug, Clone, Default)]
struct IdIndex {
    table: Growing<(u64, u32)>,
    /// Records indexed: the first `len` of the timeline's.
    len: usize,
}

impl SessionData {
    fn new(name: Arc<str>, origin: SessionSource) -> Self {
        SessionData {
            tl: Timeline::empty(name.clone()),
            name,
            builder: Builder::default(),
            problems: Vec::new(),
            errors: 0,
            marks: Vec::new(),
            mark_blocks: Vec::new(),
            ended: Vec::new(),
            by_id: RefCell::default(),
            origin,
            retired: false,
            unloaded: false,
            deferred: None,
        }
    }

    /// The last step (number of events).
    pub fn len(&self) -> u32 {
        self.tl.len()
    }

    /// Whether the session has no events.
    pub fn is_empty(&self) -> bool {
        self.tl.is_empty()
    }

    /// The log positions of the events; event i takes effect at step i + 1.
    pub fn events(&self) -> &[u32] {
        self.tl.event_positions()
    }

    /// Timeline rows: events and reader problems.
    pub fn rows(&self) -> u32 {
        self.len() + self.problems.len() as u32
    }

    /// The row of the problem at index `k` of [`SessionData::problems`].
    pub fn row_of_problem(&self, k: u32) -> u32 {
        self.problems.get(k as usize).map_or(0, |&(b, _)| b) + k
    }

    /// The row of the event at index `i` (problems read before it come first).
    pub fn row_of_event(&self, i: u32) -> u32 {
        i + self.problems.partition_point(|&(b, _)| b <= i) as u32
    }

    /// What row `r` shows (rows past the end show the last one).
    pub fn row_item(&self, r: u32) -> Option<RowItem> {
        let n = self.rows();
        if n == 0 {
            return None;
        }
        let r = r.min(n - 1);
        // Problem k sits at row before_k + k, which grows with k: binary search for the
        // number of problems on rows before r.
        let (mut lo, mut hi) = (0usize, self.problems.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.row_of_problem(mid as u32) < r {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo < self.problems.len() && self.row_of_problem(lo as u32) == r {
            Some(RowItem::Problem(lo as u32))
        } else {
            Some(RowItem::Event(r - lo as u32))
        }
    }

    /// The step a row shows: an event's own step, or for a problem the step of the events
    /// read before it.
    pub fn step_of_row(&self, r: u32) -> u32 {
        match self.row_item(r) {
            Some(RowItem::Event(i)) => i + 1,
            Some(RowItem::Problem(k)) => self.problems[k as usize].0,
            None => 0,
        }
    }

    /// Indices into the timeline's belief records of Σ at step `t`, in announcement order;
    /// retracted beliefs (announced at or before t) are included when `with_retracted`.
    pub fn sigma_at(&self, t: u32, with_retracted: bool) -> Vec<u32> {
        let beliefs = self.tl.beliefs();
        // Records are in announcement order, so the prefix announced by t is found by search.
        let end = beliefs.partition_point(|b| b.announced <= t);
        (0..end as u32)
            .filter(|&i| with_retracted || beliefs[i as usize].active_at(t))
            .collect()
    }

    /// How many belief records were announced by step `t`: Σ at `t` with retracted beliefs
    /// is records `0..n` ([`SessionData::sigma_at`] with them, without building the list).
    pub fn sigma_at_len(&self, t: u32) -> u32 {
        self.tl.beliefs().partition_point(|b| b.announced <= t) as u32
    }

    /// Entries of an (step, position) list that happened at or before step `t`.
    pub fn upto(list: &[(u32, u32)], t: u32) -> &[(u32, u32)] {
        &list[..list.partition_point(|&(s, _)| s <= t)]
    }

    /// How many `revise` and `retract` events, and events that overwrote a ground belief's
    /// value, happened at or before step `t`.
    pub fn revisions_upto(&self, t: u32) -> usize {
        self.tl.revisions().partition_point(|r| r.step <= t)
            + self.tl.retracts().partition_point(|r| r.step <= t)
            + self.overwrite_events(t).count()
    }

    /// The events that overwrote a ground belief's value at or before step `t`, newest
    /// first, each once (one `step` may overwrite several).
    fn overwrite_events(&self, t: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let ow = self.tl.overwrites();
        let ow = &ow[..ow.partition_point(|o| o.step <= t)];
        ow.iter()
            .enumerate()
            .rev()
            .filter(move |&(i, o)| i == 0 || ow[i - 1].event != o.event)
            .map(|(_, o)| (o.step, o.event))
    }

    /// The `k`-th newest `revise` or `retract` at or before step `t` as (step, position).
    pub fn revision_newest(&self, t: u32, k: usize) -> Option<(u32, u32)> {
        self.revisions_newest(t, k, 1).first().copied()
    }

    /// `take` of the `revise` and `retract` events and the overwrites at or before step `t`,
    /// newest first, skipping the `skip` newest: the model keeps the logs apart, the pane
    /// lists them merged. Costs `skip + take` steps of each log.
    pub fn revisions_newest(&self, t: u32, skip: usize, take: usize) -> Vec<(u32, u32)> {
        let n = skip.saturating_add(take);
        let rv = &self.tl.revisions()[..self.tl.revisions().partition_point(|r| r.step <= t)];
        let rt = &self.tl.retracts()[..self.tl.retracts().partition_point(|r| r.step <= t)];
        // The newest n of all are among the newest n of each.
        let mut all: Vec<(u32, u32)> = rv
            .iter()
            .rev()
            .take(n)
            .map(|r| (r.step, r.event))
            .chain(rt.iter().rev().take(n).map(|r| (r.step, r.event)))
            .chain(self.overwrite_events(t).take(n))
            .collect();
        // One event per step, so no two entries tie.
        all.sort_unstable_by(|x, y| y.cmp(x));
        all.into_iter().skip(skip).take(take).collect()
    }

    /// The index in the session of the event at log position `pos`.
    pub fn event_index(&self, pos: u32) -> Option<u32> {
        // Positions grow in read order.
        self.events().binary_search(&pos).ok().map(|i| i as u32)
    }

    /// Reader warnings of this session: lines kept as events despite a problem (a duplicate
    /// `seq`, time going backwards, a misplaced BOM), counted apart from the errors.
    pub fn warnings(&self) -> u32 {
        (self.problems.len() as u32).saturating_sub(self.errors)
    }

    fn add_problem(&mut self, before: u32, k: u32, log: &TraceLog) {
        let error = log.problems[k as usize].severity == Severity::Error;
        if let Some(d) = &mut self.deferred {
            d.problems.push((before, k));
            d.errors += u32::from(error);
            return;
        }
        if error {
            self.errors += 1;
        }
        self.problems.push((before, k));
        // The model's count of the session's reader problems, by this view's attribution.
        self.tl.reader_problems = self.problems.len() as u64;
    }

    /// Replays the event that goes to log position `pos`, known by its brief (the log may
    /// keep only where it is, so the replay reads the brief in hand).
    fn push(&mut self, log: &TraceLog, pos: u32, ev: &Brief) {
        self.builder.push_brief(&mut self.tl, log, pos, ev);
        let mark = match &ev.gist {
            Gist::Retract(..) | Gist::Revise(_) => MARK_REVISION,
            Gist::Verify(v) if v.contradiction => MARK_CONTRADICTION,
            _ => 0,
        };
        if let Some(r) = self.builder.take_ended() {
            self.ended.push(r);
        }
        if self.marks.len() % MARK_BLOCK == 0 {
            self.mark_blocks.push(0);
        }
        self.marks.push(mark);
        if let Some(b) = self.mark_blocks.last_mut() {
            *b |= mark;
        }
    }

    /// The latest belief record with this id announced by an event before log position
    /// `pos` (what a `because` citing `id` in the event at `pos` refers to).
    pub fn record_before(&self, id: &str, pos: u32) -> Option<u32> {
        let beliefs = self.tl.beliefs();
        let mut index = self.by_id.borrow_mut();
        for (i, b) in beliefs.iter().enumerate().skip(index.len) {
            let hash = str_hash(&b.id);
            index.table.insert_unique(hash, (hash, i as u32), |e| e.0);
        }
        index.len = beliefs.len();
        let hash = str_hash(id);
        index
            .table
            .iter_hash(hash)
            .filter(|&&(h, r)| {
                h == hash
                    && beliefs
                        .get(r as usize)
                        .is_some_and(|b| b.id == id && b.event < pos)
            })
            .map(|&(_, r)| r)
            .max()
    }

    /// How many ended records ended at or before step `t` (a prefix of [`Self::ended`]).
    pub fn ended_by(&self, t: u32) -> usize {
        let beliefs = self.tl.beliefs();
        self.ended.partition_point(|&r| {
            beliefs
                .get(r as usize)
                .and_then(|b| b.retraction)
                .is_some_and(|x| x.step <= t)
        })
    }

    /// The OR of the marks of events `range` (clamped), reading whole blocks from the block
    /// summary and only the partial blocks at its ends mark by mark.
    pub fn marks_in(&self, range: std::ops::Range<usize>) -> u8 {
        let end = range.end.min(self.marks.len());
        let mut i = range.start.min(end);
        let mut acc = 0u8;
        while i < end {
            if i % MARK_BLOCK == 0 && i + MARK_BLOCK <= end {
                acc |= self.mark_blocks.get(i / MARK_BLOCK).copied().unwrap_or(0);
                i += MARK_BLOCK;
            } else {
                let stop = ((i / MARK_BLOCK + 1) * MARK_BLOCK).min(end);
                acc |= self.marks[i..stop].iter().fold(0, |a, &m| a | m);
                i = stop;
            }
        }
        acc
    }
}

/// Decoded events kept pinned between frames before [`Store::trim`] drops them: far more
/// than a frame shows, so moving around a step decodes nothing twice.
pub const TRIM_PINNED: usize = 20_000;

/// Events per block of the density marks' summary ([`SessionData::marks_in`]).
pub const MARK_BLOCK: usize = 256;

/// The trace as read so far, with the per-session replays.
#[derive(Debug, Default)]
pub struct Store {
    /// The events and reader problems.
    pub log: TraceLog,
    /// Sessions in order of first appearance.
    pub sessions: Vec<SessionData>,
    by_name: HashMap<Arc<str>, usize>,
    /// Sessions that are not grouped by name alone: (origin, session name or none).
    by_origin: HashMap<(SessionSource, Option<FileName>), usize>,
    /// The session the last event of each (origin, file) went to: where a bad line read
    /// after it belongs.
    last_of_file: HashMap<(SessionSource, FileName), usize>,
    /// Bumped whenever anything is added, so views can cache by it.
    pub version: u64,
    /// Reader problems of severity error, counted as they arrive.
    errors: usize,
    /// The brief load under way: its file and its sessions.
    brief_load: Option<BriefLoad>,
    /// Slots of live sessions taken out of the list ([`Store::retire`]), given to the next
    /// live sessions, so a viewer that takes sessions for ever keeps as many slots as it
    /// lists.
    spare: Vec<usize>,
    /// The session a replay is under way for ([`Store::begin_replay`]).
    replaying: Option<usize>,
    /// Slots given to a new session since the owner last took them ([`Store::take_reused`]):
    /// what the owner keeps per slot belongs to the session that had it before.
    reused: Vec<usize>,
}

/// The file of a brief load and its sessions (their slots and names), in the order the load
/// named them.
#[derive(Debug)]
struct BriefLoad {
    source: crate::trace::SourceId,
    file: FileName,
    sessions: Vec<(usize, FileName)>,
    /// In a load led by a session ([`Store::lead`]): its name, and its slot once named.
    /// Every other session met first in the load is indexed, not replayed.
    lead: Option<(FileName, Option<usize>)>,
    /// The file's size when the load began, the log's length then, and whether room for the
    /// rest of the file was made ([`Store::reserve_rest`]).
    size: u64,
    first: usize,
    reserved: bool,
}

/// The length of session `slot` as a problem read now sees it: an indexed session's
/// events, else its steps.
fn len_for(sessions: &[SessionData], slot: usize) -> u32 {
    match &sessions[slot].deferred {
        Some(d) => d.events(),
        None => sessions[slot].len(),
    }
}

impl Store {
    /// An empty store.
    pub fn new() -> Self {
        Store::default()
    }

    /// A store holding one in-memory trace (tests, benchmarks).
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Self {
        let mut r = crate::trace::Reader::new(name, crate::trace::ReaderConfig::default());
        let mut items = Vec::new();
        r.feed(bytes, &mut items);
        r.finish(&mut items);
        let mut s = Store::new();
        s.extend(items);
        s
    }

    /// Adds a batch of reader output.
    pub fn extend(&mut self, items: impl IntoIterator<Item = Item>) {
        self.extend_from(&SessionSource::Trace, items);
    }

    /// The session for events named `session` from `origin`, created when new.
    fn slot(&mut self, origin: &SessionSource, session: &FileName) -> usize {
        match origin {
            SessionSource::Trace => match self.by_name.get(&**session) {
                Some(&i) => i,
                None => {
                    let name: Arc<str> = Arc::from(&**session);
                    self.by_name.insert(name.clone(), self.sessions.len());
                    self.sessions
                        .push(SessionData::new(name, SessionSource::Trace));
                    self.sessions.len() - 1
                }
            },
            SessionSource::Segment { segment, .. } => {
                let key = (origin.clone(), Some(session.clone()));
                match self.by_origin.get(&key) {
                    Some(&i) => i,
                    None => {
                        let name: Arc<str> = format!("{session} · re-read {segment}").into();
                        self.by_origin.insert(key, self.sessions.len());
                        self.sessions.push(SessionData::new(name, origin.clone()));
                        self.sessions.len() - 1
                    }
                }
            }
            SessionSource::Live(id) => match self.by_origin.get(&(origin.clone(), None)) {
                Some(&i) => i,
                None => self.new_live(*id, format!("live-{id}").into()),
            },
        }
    }

    /// Adds a batch of reader output from `origin` (see [`SessionSource`] for how sessions are
    /// told apart). Segment 0 of a followed file is the same as [`SessionSource::Trace`].
    ///
    /// A reader problem goes to the session of the last event read before it from the same
    /// file, at that place; a line that is not an event cannot name its session. When no
    /// event of its file came before it, it waits for the next one in the batch (its session
    /// gets the problem before that event), and at the end of the batch it goes to the
    /// session named after the file, the default session of its events.
    pub fn extend_from(&mut self, origin: &SessionSource, items: impl IntoIterator<Item = Item>) {
        let origin = match origin {
            SessionSource::Segment { segment: 0, .. } => &SessionSource::Trace,
            o => o,
        };
        let mut waiting: Vec<u32> = Vec::new();
        // The reader gives every event of a session (and of a file) the same shared name,
        // so consecutive events are matched by pointer instead of hashing names per event.
        let mut last_session: Option<(FileName, usize)> = None;
        let mut last_file: Option<(FileName, usize, bool)> = None;
        for item in items {
            let (events, problems) = (self.log.events.len(), self.log.problems.len());
            // A full log turns the event into a problem (see `TraceLog::push`).
            if let Item::Event(ev) = &item
                && events < u32::MAX as usize
            {
                let slot = match &last_session {
                    Some((name, slot)) if FileName::ptr_eq(name, &ev.session) => *slot,
                    _ => {
                        let slot = self.slot(origin, &ev.session);
                        last_session = Some((ev.session.clone(), slot));
                        slot
                    }
                };
                self.settle(slot);
                self.take_waiting(slot, &ev.origin.file, &mut waiting);
                self.sessions[slot].push(&self.log, events as u32, &Brief::of(ev));
                self.note_file(origin, slot, &ev.origin.file, &mut last_file);
            }
            self.log.push(item);
            if self.log.problems.len() > problems {
                self.flush_file(origin, &mut last_file);
                self.place_problems(origin, problems, &mut waiting);
            }
        }
        self.flush_file(origin, &mut last_file);
        self.place_waiting(origin, waiting);
    }

    /// Registers the file a stream is read from, so its events are kept as places in that
    /// file rather than in memory, and makes it the file of the brief load that follows
    /// ([`Store::extend_briefs`]; the background loader sends it before the stream's
    /// items). `cfg` is the settings the stream is read with.
    pub fn add_source(&mut self, name: &str, file: std::fs::File, cfg: crate::trace::ReaderConfig) {
        let size = file.metadata().map_or(0, |m| m.len());
        let source = self.log.events.add_source(name, file, cfg);
        let file = FileName::new(name);
        self.brief_load = Some(BriefLoad {
            source,
            file,
            sessions: Vec::new(),
            lead: None,
            size,
            first: self.log.events.len(),
            reserved: false,
        });
    }

    /// Makes the brief load of the file registered last ([`Store::add_source`]) one led by
    /// the session `session` ([`crate::trace::read_all_briefs_led`]): that session is
    /// replayed as it is read, and every other session the load meets first is indexed
    /// only (its events' places and its problems at their places, see [`Deferred`]) and
    /// replayed when it is shown. So the whole file is read once, and what the views read
    /// of it is what a load replaying everything gives.
    pub fn lead(&mut self, session: &str) {
        if let Some(load) = &mut self.brief_load {
            load.lead = Some((FileName::new(session), None));
        }
    }

    /// Adds a batch of the brief load ([`crate::trace::read_all_briefs`]) of the file
    /// registered last with [`Store::add_source`]: like [`Store::extend`], with each event
    /// replayed from its brief and kept as its place in the file.
    pub fn extend_briefs(&mut self, items: impl IntoIterator<Item = BriefItem>) {
        let origin = &SessionSource::Trace;
        let Some(mut load) = self.brief_load.take() else {
            // Without a file the events cannot be kept: none is ever sent so.
            return;
        };
        let mut waiting: Vec<u32> = Vec::new();
        let mut last_file: Option<(FileName, usize, bool)> = None;
        // Where the file has been read up to: the place of the last event.
        let mut reached = 0;
        for item in items {
            let problems = self.log.problems.len();
            match item {
                BriefItem::Session(name) => {
                    let slot = self.slot(origin, &name);
                    if let Some((lead, at @ None)) = &mut load.lead
                        && **lead == *name
                    {
                        *at = Some(slot);
                    }
                    load.sessions.push((slot, name));
                }
                BriefItem::Event(ev) => {
                    reached = ev.offset;
                    let Some((slot, name)) = load.sessions.get(ev.session as usize) else {
                        // The load names a session before its first event.
                        continue;
                    };
                    let events = self.log.events.len();
                    // A led load's briefs may be lean (their formulas are not parsed) but
                    // for its lead's: an event it does not defer is replayed from its line,
                    // once in the log.
                    let mut from_line = None;
                    if events < u32::MAX as usize {
                        let slot = *slot;
                        // In a led load, a session met first now (not the lead) is indexed,
                        // not replayed: it is replayed when it is shown.
                        let indexing = match &load.lead {
                            Some((_, lead)) => *lead != Some(slot),
                            None => false,
                        };
                        let defer = indexing && self.defer(slot, load.source);
                        if !defer {
                            self.settle(slot);
                        }
                        self.take_waiting(slot, &load.file, &mut waiting);
                        match &mut self.sessions[slot].deferred {
                            Some(d) if defer => d.positions.push(events as u32),
                            _ if indexing => from_line = Some(slot),
                            _ => self.sessions[slot].push(&self.log, events as u32, &ev.brief),
                        }
                        self.note_file(origin, slot, &load.file, &mut last_file);
                    }
                    self.log.push_briefed(load.source, &load.file, name, &ev);
                    if let Some(slot) = from_line {
                        let brief = self.log.events.load(events).map(|e| Brief::of(&e));
                        // A file gone meanwhile: the lean brief is all there is.
                        let brief = brief.as_ref().unwrap_or(&ev.brief);
                        self.sessions[slot].push(&self.log, events as u32, brief);
                    }
                }
                BriefItem::Problem(p) => self.log.problems.push(*p),
            }
            if self.log.problems.len() > problems {
                self.flush_file(origin, &mut last_file);
                self.place_problems(origin, problems, &mut waiting);
            }
        }
        self.flush_file(origin, &mut last_file);
        self.place_waiting(origin, waiting);
        self.reserve_rest(&mut load, reached);
        self.brief_load = Some(load);
    }

    /// Once a sixteenth of the file of the brief load `load` is in (up to byte `reached`),
    /// makes room for the rest at once: the events of the log's columns and of each indexed
    /// session's positions, estimated from the rate so far plus an eighth. Growing by
    /// doubling instead copied every column several times on the UI thread (3% of its
    /// samples on a 10-million-event file). Room beyond what comes is address space only:
    /// untouched pages are not resident. An estimate short of the end only means the
    /// columns grow again at the end as before.
    fn reserve_rest(&mut self, load: &mut BriefLoad, reached: u64) {
        if load.reserved || reached == 0 || reached < load.size / 16 || reached >= load.size {
            return;
        }
        load.reserved = true;
        // From the rate so far: `n` items for `reached` bytes, so many more for the rest.
        let rest = |n: usize| -> usize {
            let more = u128::from(load.size - reached) * n as u128 / u128::from(reached);
            let more = more + more / 8;
            usize::try_from(more.min(u128::from(u32::MAX))).unwrap_or(usize::MAX)
        };
        let events = self.log.events.len();
        let room =
            rest(events.saturating_sub(load.first)).min((u32::MAX as usize).saturating_sub(events));
        self.log.events.reserve(room);
        for &(slot, _) in &load.sessions {
            if let Some(d) = &mut self.sessions[slot].deferred
                && d.source == load.source
            {
                let more = rest(d.positions.len());
                d.positions.reserve(more);
            }
        }
    }

    /// Whether a led load of a file read from `source` indexes session `slot` without
    /// replaying it, marking it so: a session that has nothing yet, or is so marked for this
    /// file. A session that already has events or problems (of an earlier file, of this
    /// file before its first event) is replayed as it is read.
    fn defer(&mut self, slot: usize, source: crate::trace::SourceId) -> bool {
        let s = &mut self.sessions[slot];
        match &s.deferred {
            Some(d) => d.source == source,
            None if s.is_empty()
                && s.problems.is_empty()
                && s.origin == SessionSource::Trace
                && !s.retired
                && !s.unloaded =>
            {
                s.deferred = Some(Box::new(Deferred {
                    positions: Vec::new(),
                    problems: Vec::new(),
                    errors: 0,
                    replayed: 0,
                    source,
                }));
                self.version += 1;
                true
            }
            None => false,
        }
    }

    /// Replays session `slot` now if it was only indexed, before events read from elsewhere
    /// (another file, a follower) are added to it: they come after its indexed ones.
    fn settle(&mut self, slot: usize) {
        if self.sessions[slot].deferred.is_some() && self.replaying != Some(slot) {
            self.replay_now(slot);
        }
    }

    /// Starts the replay of session `slot` when it was indexed without a replay: the file
    /// to read it from (named as its events were read, a descriptor of its own) and the
    /// settings, for a read of that session's lines ([`crate::trace::read_places_briefs`]
    /// at [`Store::replay_places`]) whose items go to [`Store::replay_briefs`], then
    /// [`Store::end_replay`]. `None` when
    /// there is nothing to replay or a replay is under way.
    pub fn begin_replay(
        &mut self,
        slot: usize,
    ) -> Option<(FileName, std::fs::File, crate::trace::ReaderConfig)> {
        if self.replaying.is_some() {
            return None;
        }
        let d = self.sessions.get(slot)?.deferred.as_ref()?;
        let found = self.log.events.source_file(d.source)?;
        self.replaying = Some(slot);
        Some(found)
    }

    /// The places (stream offset and line number) of the events of session `slot`, indexed
    /// and not replayed yet, in read order: what a replay reads
    /// ([`crate::trace::read_places_briefs`]). Empty when it is not indexed only.
    pub fn replay_places(&self, slot: usize) -> Vec<(u64, u64)> {
        let Some(d) = self.sessions.get(slot).and_then(|s| s.deferred.as_ref()) else {
            return Vec::new();
        };
        d.positions
            .iter()
            .filter_map(|&p| self.log.events.origin(p as usize))
            .map(|o| (o.offset, o.line))
            .collect()
    }

    /// The file the first event of session `slot` was read from, whether the session was
    /// replayed or only indexed (so a run can be found by its file before it is replayed).
    pub fn first_file(&self, slot: usize) -> Option<FileName> {
        let s = self.sessions.get(slot)?;
        let first = match &s.deferred {
            Some(d) => *d.positions.first()?,
            None => *s.events().first()?,
        };
        self.log.events.origin(first as usize).map(|o| o.file)
    }

    /// Whether session `slot` was indexed and not replayed yet (a replay under way counts).
    pub fn deferred(&self, slot: usize) -> bool {
        self.sessions
            .get(slot)
            .is_some_and(|s| s.deferred.is_some())
    }

    /// The session a replay is under way for.
    pub fn replaying(&self) -> Option<usize> {
        self.replaying
    }

    /// Adds a batch of the replay begun with [`Store::begin_replay`]: the session's events in
    /// read order, each replayed at the log position the index gave it. An event that is not
    /// the one indexed there (the file changed since) ends the replay as failed.
    pub fn replay_briefs(&mut self, items: impl IntoIterator<Item = BriefItem>) {
        let Some(slot) = self.replaying else {
            return;
        };
        let Some(mut d) = self.sessions[slot].deferred.take() else {
            return;
        };
        for item in items {
            let BriefItem::Event(ev) = item else {
                continue;
            };
            let Some(&pos) = d.positions.get(d.replayed) else {
                // More than was indexed: the file changed.
                d.replayed = usize::MAX;
                break;
            };
            if d.replayed == usize::MAX
                || self.log.events.origin(pos as usize).map(|o| o.line) != Some(ev.line)
            {
                d.replayed = usize::MAX;
                break;
            }
            self.sessions[slot].push(&self.log, pos, &ev.brief);
            d.replayed += 1;
        }
        self.sessions[slot].deferred = Some(d);
        self.version += 1;
    }

    /// Ends the replay under way: when every indexed event was replayed, the session's
    /// problems join it and it is a session like any other (`Ok(slot)`); otherwise
    /// (the file changed or could not be read) it goes back to not replayed (`Err(slot)`).
    pub fn end_replay(&mut self) -> Option<Result<usize, usize>> {
        let slot = self.replaying.take()?;
        self.version += 1;
        let s = &mut self.sessions[slot];
        let d = s.deferred.take()?;
        if d.replayed == d.positions.len() {
            for (before, k) in d.problems {
                s.add_problem(before, k, &self.log);
            }
            return Some(Ok(slot));
        }
        let mut fresh = SessionData::new(s.name.clone(), s.origin.clone());
        fresh.deferred = Some(Box::new(Deferred { replayed: 0, ..*d }));
        *s = fresh;
        Some(Err(slot))
    }

    /// Replays session `slot` now, on this thread and every core, if it was indexed only
    /// (tests, and what the viewer does in the background): whether it is replayed after.
    pub fn replay_now(&mut self, slot: usize) -> bool {
        let Some((name, file, cfg)) = self.begin_replay(slot) else {
            return self
                .sessions
                .get(slot)
                .is_some_and(|s| s.deferred.is_none());
        };
        let session = self.sessions[slot].name.to_string();
        let places = self.replay_places(slot);
        let mut items = Vec::new();
        let _ = crate::trace::read_places_briefs(
            &name,
            &file,
            cfg,
            &session,
            &places,
            |_| {},
            |it| items.push(it),
        );
        self.replay_briefs(items);
        matches!(self.end_replay(), Some(Ok(_)))
    }

    /// Problems of `file` waiting for an event land just before it (in session `slot`).
    fn take_waiting(&mut self, slot: usize, file: &FileName, waiting: &mut Vec<u32>) {
        if waiting.is_empty() {
            return;
        }
        let before = len_for(&self.sessions, slot);
        let s = &mut self.sessions[slot];
        waiting.retain(|&k| {
            let same = self.log.problems[k as usize].origin.file == *file;
            if same {
                s.add_problem(before, k, &self.log);
            }
            !same
        });
    }

    /// Remembers that the last event of `file` went to session `slot`: in `last` (the file,
    /// the slot, and whether [`Store::last_of_file`] has it), written to the map only when a
    /// problem needs it or the batch ends ([`Store::flush_file`]), not per event.
    fn note_file(
        &mut self,
        origin: &SessionSource,
        slot: usize,
        file: &FileName,
        last: &mut Option<(FileName, usize, bool)>,
    ) {
        match last {
            Some((f, sl, written)) if FileName::ptr_eq(f, file) => {
                if *sl != slot {
                    *sl = slot;
                    *written = false;
                }
            }
            _ => {
                self.flush_file(origin, last);
                *last = Some((file.clone(), slot, false));
            }
        }
    }

    /// Writes what [`Store::note_file`] remembered to [`Store::last_of_file`].
    fn flush_file(&mut self, origin: &SessionSource, last: &mut Option<(FileName, usize, bool)>) {
        if let Some((f, sl, written)) = last
            && !*written
        {
            self.last_of_file.insert((origin.clone(), f.clone()), *sl);
            *written = true;
        }
    }

    /// Places the problems added to the log from index `from` on: in the session of the
    /// last event of their file, or waiting for the next one.
    fn place_problems(&mut self, origin: &SessionSource, from: usize, waiting: &mut Vec<u32>) {
        for k in from..self.log.problems.len() {
            let p = &self.log.problems[k];
            if p.severity == Severity::Error {
                self.errors += 1;
            }
            let k = k as u32;
            match self
                .last_of_file
                .get(&(origin.clone(), p.origin.file.clone()))
            {
                Some(&slot) => {
                    let before = len_for(&self.sessions, slot);
                    self.sessions[slot].add_problem(before, k, &self.log);
                }
                None => waiting.push(k),
            }
        }
    }

    /// At the end of a batch, problems still waiting go to the session named after their
    /// file.
    fn place_waiting(&mut self, origin: &SessionSource, waiting: Vec<u32>) {
        for k in waiting {
            let file = self.log.problems[k as usize].origin.file.clone();
            let base = FileName::new(file.rsplit(['/', '\\']).next().unwrap_or(&file));
            let slot = self.slot(origin, &base);
            let before = len_for(&self.sessions, slot);
            self.sessions[slot].add_problem(before, k, &self.log);
        }
        self.version += 1;
    }

    /// Sets the display name of a live session (untrusted: it is sanitized here), creating
    /// its timeline if it has none yet, so a session is listed as soon as it connects.
    pub fn name_live(&mut self, id: u64, name: &str) {
        let key = (SessionSource::Live(id), None);
        let name: Arc<str> = crate::sanitize::sanitize(name).into();
        match self.by_origin.get(&key) {
            Some(&i) => self.sessions[i].name = name,
            None => {
                self.new_live(id, name);
            }
        }
        self.version += 1;
    }

    /// A slot for the new live session `id`: a spare one (of a session taken out of the
    /// list), else a new one at the end.
    fn new_live(&mut self, id: u64, name: Arc<str>) -> usize {
        let origin = SessionSource::Live(id);
        let i = match self.spare.pop() {
            Some(i) => {
                let old = (self.sessions[i].origin.clone(), None);
                self.by_origin.remove(&old);
                self.last_of_file.retain(|(o, _), _| *o != old.0);
                self.sessions[i] = SessionData::new(name, origin.clone());
                self.reused.push(i);
                i
            }
            None => {
                self.sessions.push(SessionData::new(name, origin.clone()));
                self.sessions.len() - 1
            }
        };
        self.by_origin.insert((origin, None), i);
        i
    }

    /// The slots given to new sessions since the last call (see [`Store::retire`]).
    pub fn take_reused(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.reused)
    }

    /// The session of live session `id`, if it has one.
    pub fn live_session(&self, id: u64) -> Option<usize> {
        self.by_origin
            .get(&(SessionSource::Live(id), None))
            .copied()
    }

    /// Takes session `idx` out of the session list: its timeline and indexes are freed, its
    /// events kept in memory are released (those of a live session are in its spool file)
    /// and it is skipped when moving between sessions; `name` says where its events are
    /// now. Its index stays valid (an empty session), so nothing that refers to sessions by
    /// index shifts, until a new live session takes the slot of a retired live one (the
    /// owner learns which from [`Store::take_reused`]).
    pub fn retire(&mut self, idx: usize, name: &str) {
        self.release_events(idx);
        if let Some(s) = self.sessions.get_mut(idx) {
            let mut gone =
                SessionData::new(crate::sanitize::sanitize(name).into(), s.origin.clone());
            gone.retired = true;
            if matches!(s.origin, SessionSource::Live(_)) && !s.retired {
                self.spare.push(idx);
            }
            *s = gone;
            self.version += 1;
        }
    }

    /// Gives back the memory of session `idx`'s events (an ended live session whose spool
    /// file holds them): it stays listed, empty, under its name, until its events are read
    /// again from the file ([`Store::extend_from`] with its origin refills it).
    pub fn unload(&mut self, idx: usize) {
        self.release_events(idx);
        if let Some(s) = self.sessions.get_mut(idx) {
            let mut gone = SessionData::new(s.name.clone(), s.origin.clone());
            gone.unloaded = true;
            *s = gone;
            self.version += 1;
        }
    }

    /// Releases the events of session `idx` that the store keeps in memory, and forgets
    /// their session names in the log's index.
    fn release_events(&mut self, idx: usize) {
        let Some(s) = self.sessions.get(idx) else {
            return;
        };
        let mut names: Vec<FileName> = Vec::new();
        for &pos in s.events() {
            let pos = pos as usize;
            if let Some(ev) = self.log.events.get_resident(pos)
                && !names.iter().any(|n| FileName::ptr_eq(n, &ev.session))
            {
                names.push(ev.session.clone());
            }
            self.log.events.release(pos);
        }
        for n in names {
            self.log.index.forget(&n);
        }
    }

    /// Sessions in the list (not retired).
    pub fn listed(&self) -> usize {
        self.sessions.iter().filter(|s| !s.retired).count()
    }

    /// The event at a log position. Events of files are decoded from their line and pinned
    /// until [`Store::trim`] (see [`crate::trace::EventStore`]); a frame looks at a bounded
    /// number of them.
    pub fn event(&self, pos: u32) -> Option<&Event> {
        self.log.events.get(pos as usize)
    }

    /// Forgets decoded events once many are pinned (between frames: nothing borrows them
    /// then), so what the view looked at does not pile up in memory.
    pub fn trim(&mut self) {
        if self.log.events.pinned() > TRIM_PINNED {
            self.log.events.unpin();
        }
    }

    /// The reader problem at an index of [`TraceLog::problems`].
    pub fn problem(&self, k: u32) -> Option<&Problem> {
        self.log.problems.get(k as usize)
    }

    /// Reader problems of severity error (lines that are not events), in all sessions.
    pub fn parse_errors(&self) -> usize {
        self.errors
    }
}

/// New data of one session for a worker that keeps its own [`crate::model::Model`] of it
/// (the auditor, the REPL worker): copies of the events and reader problems read since the
/// worker's last delta, in read order. Events carry the session's name as their `session`, so
/// one TUI timeline (a live connection, a re-read segment) is one session of the worker's
/// model, whose steps are then the TUI's steps.
#[derive(Debug, Clone, Default)]
pub struct Delta {
    /// The session index in the store.
    pub session: usize,
    /// The name the copies carry (the session's name when it was first sent, so a live
    /// session renamed later stays one session).
    pub name: Arc<str>,
    /// Start the worker's model of this session afresh (the first delta, or after one was
    /// lost).
    pub reset: bool,
    /// The new events and problems.
    pub items: Vec<Item>,
    /// The store's log positions of the new events, in order.
    pub positions: Vec<u32>,
    /// For each new problem, its index in the session's [`SessionData::problems`].
    pub problem_index: Vec<u32>,
    /// Whether more remains to be sent (the delta was cut at its size limit).
    pub more: bool,
    /// The files the store reads events from: a worker registers them with its model
    /// ([`crate::model::Model::adopt_sources`]) so its copies of their events are kept as
    /// places in them too.
    pub sources: Vec<crate::trace::SharedSource>,
}

/// What one worker has been sent so far, per session: (events, problems, name).
#[derive(Debug, Clone, Default)]
pub struct Sent(HashMap<usize, (u32, u32, Arc<str>)>);

impl Sent {
    /// Forgets what was sent for `session`: the next delta starts it afresh (after a delta
    /// could not be delivered).
    pub fn forget(&mut self, session: usize) {
        self.0.remove(&session);
    }

    /// Events of `session` sent so far.
    pub fn events(&self, session: usize) -> u32 {
        self.0.get(&session).map_or(0, |s| s.0)
    }
}

impl Store {
    /// The data of `session` that `sent` says its worker has not seen, at most `max_events`
    /// events of it (with the problems read before them), marked as sent. Copying costs the
    /// UI thread about a microsecond per event, so a big session is handed over in pieces
    /// between frames rather than in one stall.
    pub fn delta(&self, session: usize, sent: &mut Sent, max_events: u32) -> Option<Delta> {
        let s = self.sessions.get(session)?;
        let (e0, p0, name, reset) = match sent.0.get(&session) {
            Some((e, p, n)) => (*e, *p, n.clone(), false),
            None => (0, 0, s.name.clone(), true),
        };
        let e1 = s.len().min(e0.saturating_add(max_events.max(1)));
        // Problems read before event e1, or all of them once every event is sent.
        let p1 = if e1 == s.len() {
            s.problems.len() as u32
        } else {
            s.problems.partition_point(|&(b, _)| b < e1) as u32
        };
        let mut items = Vec::new();
        let mut problem_index = Vec::new();
        let mut problem = |k: u32, items: &mut Vec<Item>| {
            if let Some(p) = self.problem(s.problems[k as usize].1) {
                items.push(Item::Problem(p.clone()));
                problem_index.push(k);
            }
        };
        // Merged in read order: problem k was read after `before_k` events.
        let mut k = p0;
        // One shared name for the copies (the session's own name, which a re-read segment's
        // events do not carry).
        let shared = FileName::new(&name);
        for i in e0..e1 {
            while k < p1 && s.problems[k as usize].0 <= i {
                problem(k, &mut items);
                k += 1;
            }
            // Copies are decoded without pinning: a hand-over walks the whole session.
            if let Some(ev) = s
                .events()
                .get(i as usize)
                .and_then(|&p| self.log.events.load(p as usize))
            {
                let mut ev = ev.into_owned();
                ev.session = shared.clone();
                items.push(Item::Event(ev));
            }
        }
        for k in k..p1 {
            problem(k, &mut items);
        }
        sent.0.insert(session, (e1, p1, name.clone()));
        Some(Delta {
            session,
            name,
            reset,
            items,
            positions: s.events()[e0 as usize..e1 as usize].to_vec(),
            problem_index,
            more: e1 < s.len(),
            sources: self.log.events.shared_sources(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A generated trace (`events`, `seed`, `sessions`, `atoms`) written to a temporary
    /// file: its bytes, the file, and the file's name.
    fn generated_file(
        events: u64,
        seed: u64,
        sessions: u32,
        atoms: u32,
    ) -> (Vec<u8>, tempfile::NamedTempFile, String) {
        use std::io::Write;
        let bytes = crate::trace::generate::GenConfig {
            events,
            seed,
            sessions,
            atoms,
        }
        .bytes();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&bytes).unwrap();
        let name = f.path().to_string_lossy().into_owned();
        (bytes, f, name)
    }

    /// The id index is brought up to date when asked: asked after part of a trace, it
    /// still finds the records of events that came after it.
    #[test]
    fn record_before_finds_records_added_after_it_was_asked() {
        let bytes = crate::trace::generate::GenConfig {
            events: 2_000,
            seed: 4,
            sessions: 1,
            atoms: 6,
        }
        .bytes();
        let half = bytes[..bytes.len() / 2]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let mut r = crate::trace::Reader::new("t.jsonl", crate::trace::ReaderConfig::default());
        let mut s = Store::new();
        for part in [&bytes[..half], &bytes[half..]] {
            let mut items = Vec::new();
            r.feed(part, &mut items);
            s.extend(items);
            let d = &s.sessions[0];
            let beliefs = d.tl.beliefs();
            let n = s.log.events.len() as u32;
            for b in beliefs.iter().step_by(7) {
                let want = beliefs
                    .iter()
                    .rposition(|x| x.id == b.id && x.event < n)
                    .map(|i| i as u32);
                assert_eq!(d.record_before(&b.id, n), want, "{} before {n}", b.id);
            }
        }
        assert!(s.sessions[0].tl.beliefs().len() > 10, "the trace announces");
    }

    /// The id index against the definition (the latest record with the id announced before
    /// the position), on a generated trace whose ids repeat (re-announced, superseded) and
    /// for ids never announced; and the ended list against the records' retraction steps.
    #[test]
    fn record_before_and_ended_agree_with_a_scan() {
        let mut bytes = crate::trace::generate::GenConfig {
            events: 3_000,
            seed: 9,
            sessions: 1,
            atoms: 6,
        }
        .bytes();
        // Ids announced again: superseded, retracted and re-announced, in the same session.
        let name = Store::from_bytes("t.jsonl", &bytes).sessions[0]
            .name
            .to_string();
        for (k, f) in ["p0", "p1", "p0", "p2"].iter().enumerate() {
            let line = format!(
                "{{\"kind\":\"announce\",\"session\":{name:?},\"formula\":\"{f}\",\"id\":\"dup\"}}\n"
            );
            bytes.extend_from_slice(line.as_bytes());
            if k == 1 {
                let r =
                    format!("{{\"kind\":\"retract\",\"session\":{name:?},\"target\":\"dup\"}}\n");
                bytes.extend_from_slice(r.as_bytes());
            }
        }
        let s = Store::from_bytes("t.jsonl", &bytes);
        let d = &s.sessions[0];
        let beliefs = d.tl.beliefs();
        let mut ids: Vec<&str> = beliefs.iter().map(|b| b.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert!(ids.len() < beliefs.len(), "some id is announced again");
        ids.extend(["never-announced", ""]);
        let n = s.log.events.len() as u32;
        for id in &ids {
            for pos in (0..=n).step_by(97).chain([n]) {
                let want = beliefs
                    .iter()
                    .rposition(|b| b.id == *id && b.event < pos)
                    .map(|i| i as u32);
                assert_eq!(d.record_before(id, pos), want, "{id} before {pos}");
            }
        }
        let mut want: Vec<(u32, u32)> = beliefs
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.retraction.map(|r| (r.step, i as u32)))
            .collect();
        want.sort_unstable();
        let got: Vec<(u32, u32)> = d
            .ended
            .iter()
            .map(|&r| (beliefs[r as usize].retraction.unwrap().step, r))
            .collect();
        assert_eq!(got, want);
        for t in (0..=d.len()).step_by(31) {
            assert_eq!(d.ended_by(t), want.partition_point(|&(st, _)| st <= t));
        }
    }

    /// A brief load makes room for the rest of its file once a sixteenth of it is in: from
    /// then on the log's columns and the indexed sessions' positions are not reallocated
    /// (copied) as they fill, and what they hold is what a load without the room holds.
    #[test]
    fn a_brief_load_makes_room_for_the_rest_of_its_file_once() {
        let (bytes, f, name) = generated_file(6_000, 3, 4, 12);
        let rc = crate::trace::ReaderConfig::default();
        let lead = crate::trace::lead_session(&name, &bytes, rc).expect("interleaved");
        let mut items = Vec::new();
        crate::trace::read_all_briefs_led(&name, &bytes[..], rc, &lead, |it| items.push(it))
            .unwrap();
        let open = || {
            let mut store = Store::new();
            store.add_source(&name, std::fs::File::open(f.path()).unwrap(), rc);
            store.lead(&lead);
            store
        };
        let positions = |store: &Store| -> Vec<(usize, usize)> {
            let d = store.sessions.iter().filter_map(|s| s.deferred.as_ref());
            d.map(|d| (d.positions.len(), d.positions.capacity()))
                .collect()
        };
        let mut store = open();
        let mut room = None;
        for (i, batch) in items.chunks(64).enumerate() {
            store.extend_briefs(batch.to_vec());
            let reserved = store.brief_load.as_ref().is_some_and(|l| l.reserved);
            if reserved && room.is_none() {
                room = Some((i, store.log.events.heap_bytes(), positions(&store)));
            }
        }
        let (at, heap, room) = room.expect("room made");
        assert!(at * 64 <= items.len() / 8, "made at item {}", at * 64);
        assert_eq!(
            store.log.events.heap_bytes(),
            heap,
            "the columns grew again"
        );
        let end = positions(&store);
        assert!(end.len() >= 3, "indexed sessions: {end:?}");
        for ((n, cap), (_, had)) in end.iter().zip(&room) {
            assert_eq!(cap, had, "positions reallocated");
            assert!(n <= cap);
        }
        // The same store as a load given everything at once.
        let mut whole = open();
        whole.extend_briefs(items);
        assert_eq!(whole.log.events, store.log.events);
        let counts = |s: &Store| -> Vec<u32> {
            let d = s.sessions.iter().filter_map(|s| s.deferred.as_ref());
            d.map(|d| d.events()).collect()
        };
        assert_eq!(counts(&whole), counts(&store));
    }

    /// The workers' copies of a loaded file's session (a delta) are kept as places in the
    /// file once the worker's model adopts the store's files: the same events, a few bytes
    /// each instead of a decoded event each.
    #[test]
    fn workers_keep_a_loaded_files_events_as_places_in_it() {
        let (bytes, f, name) = generated_file(2_000, 5, 1, 20);
        let rc = crate::trace::ReaderConfig::default();
        let mut store = Store::new();
        store.add_source(&name, std::fs::File::open(f.path()).unwrap(), rc);
        let mut r = crate::trace::Reader::new(&name, rc);
        let mut items = Vec::new();
        r.feed(&bytes, &mut items);
        r.finish(&mut items);
        store.extend(items);
        let n = store.log.events.len();
        assert_eq!(n, 2_000);
        let d = store.delta(0, &mut Sent::default(), u32::MAX).unwrap();
        assert!(!d.sources.is_empty());
        let mut adopted = crate::model::Model::new();
        adopted.adopt_sources(&d.sources);
        adopted.extend(d.items.clone());
        let mut resident = crate::model::Model::new();
        resident.extend(d.items);
        assert_eq!(adopted.log().events, resident.log().events);
        assert_eq!(adopted.timelines(), resident.timelines());
        let per_event = |m: &crate::model::Model| m.log().events.heap_bytes() / n;
        assert!(per_event(&adopted) <= 40, "{} bytes", per_event(&adopted));
        assert!(per_event(&resident) >= std::mem::size_of::<Event>());
    }

    const T: &str = r#"{"kind":"announce","formula":"p","id":"b1"}
{"kind":"announce","formula":"p -> q","id":"b2","role":"rule"}
{"kind":"retract","target":"b1"}
not json
{"kind":"announce","formula":"r &"}
{"kind":"retract","target":"nope"}
{"kind":"verify","formula":"q","outcome":"contradiction"}
"#;

    #[test]
    fn sigma_is_the_models() {
        let s = Store::from_bytes("t.jsonl", T.as_bytes());
        let d = &s.sessions[0];
        let m = crate::model::Model::from_bytes("t.jsonl", T.as_bytes());
        let tl = &m.timelines()[0];
        assert_eq!(d.tl.beliefs(), tl.beliefs());
        assert_eq!(d.tl.errors(), tl.errors());
        assert_eq!(d.len(), 6);
        assert_eq!(d.sigma_at(0, false), Vec::<u32>::new());
        assert_eq!(d.sigma_at(2, false), vec![0, 1]);
        assert_eq!(d.sigma_at(3, false), vec![1]);
        assert_eq!(d.sigma_at(3, true), vec![0, 1]);
        assert_eq!(
            d.marks,
            vec![0, 0, MARK_REVISION, 0, MARK_REVISION, MARK_CONTRADICTION]
        );
    }

    #[test]
    fn problems_are_rows_at_their_place_in_file_order() {
        let s = Store::from_bytes("t.jsonl", T.as_bytes());
        let d = &s.sessions[0];
        assert_eq!(d.problems, vec![(3, 0)]);
        assert_eq!(d.rows(), 7);
        let items: Vec<_> = (0..7).map(|r| d.row_item(r).unwrap()).collect();
        use RowItem::{Event as E, Problem as P};
        assert_eq!(items, vec![E(0), E(1), E(2), P(0), E(3), E(4), E(5)]);
        assert_eq!(d.row_of_problem(0), 3);
        assert_eq!(d.row_of_event(3), 4);
        assert_eq!(d.row_of_event(2), 2);
        assert_eq!(
            d.step_of_row(3),
            3,
            "a problem shows the step read before it"
        );
        assert_eq!(d.step_of_row(4), 4);
        for r in 0..7 {
            if let Some(E(i)) = d.row_item(r) {
                assert_eq!(d.row_of_event(i), r);
            }
        }
    }

    #[test]
    fn a_problem_before_any_event_waits_for_its_file_and_batches_do_not_matter() {
        let t = "oops\n{\"kind\":\"announce\",\"session\":\"s\",\"formula\":\"p\"}\nbad\n";
        let whole = Store::from_bytes("f.jsonl", t.as_bytes());
        assert_eq!(whole.sessions.len(), 1);
        assert_eq!(whole.sessions[0].problems, vec![(0, 0), (1, 1)]);
        // One item at a time: the first bad line has no session yet and goes to the
        // file's default session.
        let mut r = crate::trace::Reader::new("f.jsonl", crate::trace::ReaderConfig::default());
        let mut items = Vec::new();
        r.feed(t.as_bytes(), &mut items);
        r.finish(&mut items);
        let mut one = Store::new();
        for it in items {
            one.extend([it]);
        }
        let names: Vec<_> = one.sessions.iter().map(|s| s.name.to_string()).collect();
        assert_eq!(names, vec!["f.jsonl", "s"]);
        assert_eq!(one.sessions[0].problems, vec![(0, 0)]);
        assert_eq!(one.sessions[1].problems, vec![(1, 1)]);
        assert_eq!(one.parse_errors(), 2);
    }

    #[test]
    fn revisions_are_merged_newest_first() {
        let t = r#"{"kind":"announce","formula":"p","id":"a"}
{"kind":"revise","trigger":"p","retracted":["a"]}
{"kind":"retract","target":"a","by":"revision"}
{"kind":"announce","formula":"q","id":"b"}
{"kind":"retract","target":"b"}
"#;
        let s = Store::from_bytes("t", t.as_bytes());
        let d = &s.sessions[0];
        assert_eq!(d.revisions_upto(5), 3);
        assert_eq!(d.revisions_upto(2), 1);
        let steps: Vec<_> = (0..4)
            .map(|k| d.revision_newest(5, k).map(|x| x.0))
            .collect();
        assert_eq!(steps, vec![Some(5), Some(3), Some(2), None]);
        assert_eq!(d.revision_newest(2, 0).map(|x| x.0), Some(2));
    }

    #[test]
    fn deltas_carry_only_what_is_new_in_read_order() {
        let mut s = Store::from_bytes("t.jsonl", T.as_bytes());
        let mut sent = Sent::default();
        let d = s.delta(0, &mut sent, u32::MAX).unwrap();
        assert!(d.reset);
        let kinds: Vec<_> = d
            .items
            .iter()
            .map(|i| match i {
                Item::Event(e) => e.kind_name().to_string(),
                Item::Problem(_) => "problem".to_string(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "announce", "announce", "retract", "problem", "announce", "retract", "verify"
            ]
        );
        assert_eq!(d.positions, s.sessions[0].events());
        assert_eq!(d.problem_index, vec![0]);
        let more = "{\"kind\":\"announce\",\"formula\":\"z\"}\n";
        let mut r = crate::trace::Reader::new("t.jsonl", crate::trace::ReaderConfig::default());
        let mut items = Vec::new();
        r.feed(more.as_bytes(), &mut items);
        s.extend(items);
        let d = s.delta(0, &mut sent, u32::MAX).unwrap();
        assert!(!d.reset);
        assert_eq!(d.items.len(), 1);
        assert_eq!(d.positions, vec![6]);
        sent.forget(0);
        let whole = s.delta(0, &mut sent, u32::MAX).unwrap();
        assert_eq!(whole.items.len(), 8);
        // In pieces of two events: the same items in the same order, the last piece final.
        let mut sent = Sent::default();
        let mut items = Vec::new();
        let mut pieces = 0;
        loop {
            let d = s.delta(0, &mut sent, 2).unwrap();
            assert_eq!(d.reset, pieces == 0);
            pieces += 1;
            items.extend(d.items);
            if !d.more {
                break;
            }
        }
        assert_eq!(pieces, 4);
        assert_eq!(items, whole.items);
    }

    const POOL: &[&str] = &[
        r#"{"kind":"announce","formula":"p","id":"a"}"#,
        r#"{"kind":"announce","formula":"q & s","id":"a"}"#,
        r#"{"kind":"announce","formula":"~q"}"#,
        r#"{"kind":"retract","target":"a","by":"revision"}"#,
        r#"{"kind":"retract","target":"¬q"}"#,
        r#"{"kind":"retract","target":"ghost"}"#,
        r#"{"kind":"revise","trigger":"~q","retracted":["a"],"policy":"greedy"}"#,
        r#"{"kind":"verify","formula":"q","outcome":"contradiction"}"#,
        r#"{"kind":"announce","session":"other","formula":"x","id":"a"}"#,
        r#"{"kind":"plan","id":"pl","steps":[{"id":"s1","deps":[]}]}"#,
        r#"{"kind":"step","plan":"pl","step":"s1","status":"done"}"#,
        "not json",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Whatever the batches, every session's replay is the model's, and every reader
        /// problem is a row exactly once, in read order.
        #[test]
        fn store_timelines_are_the_models_in_any_batches(
            lines in proptest::collection::vec(0..POOL.len(), 0..40),
            cuts in proptest::collection::vec(0usize..60, 0..6),
        ) {
            let text: String = lines.iter().map(|&i| format!("{}\n", POOL[i])).collect();
            let mut r = crate::trace::Reader::new("t.jsonl", crate::trace::ReaderConfig::default());
            let mut items = Vec::new();
            r.feed(text.as_bytes(), &mut items);
            r.finish(&mut items);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(items.len())).collect();
            cuts.sort_unstable();
            let mut store = Store::new();
            let mut rest = items.into_iter();
            let mut at = 0;
            for c in cuts {
                store.extend(rest.by_ref().take(c - at));
                at = c;
            }
            store.extend(rest);
            let model = crate::model::Model::from_bytes("t.jsonl", text.as_bytes());
            let bare = |t: &Timeline| {
                let mut t = t.clone();
                t.reader_problems = 0;
                t
            };
            for tl in model.timelines() {
                let s = store.sessions.iter().find(|s| *s.name == *tl.name());
                proptest::prop_assert!(s.is_some(), "session {} missing", tl.name());
                if let Some(s) = s {
                    proptest::prop_assert_eq!(bare(&s.tl), bare(tl));
                }
            }
            let mut seen: Vec<u32> = store
                .sessions
                .iter()
                .flat_map(|s| s.problems.iter().map(|&(_, k)| k))
                .collect();
            seen.sort_unstable();
            let all: Vec<u32> = (0..store.log.problems.len() as u32).collect();
            proptest::prop_assert_eq!(seen, all);
            for s in &store.sessions {
                for (k, &(before, _)) in s.problems.iter().enumerate() {
                    let row = s.row_of_problem(k as u32);
                    proptest::prop_assert_eq!(s.row_item(row), Some(RowItem::Problem(k as u32)));
                    proptest::prop_assert_eq!(s.step_of_row(row), before);
                }
            }
        }
    }
}
