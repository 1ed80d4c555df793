//! The cheap replay: one [`Timeline`] per session, built in one pass without the solver.
//!
//! # Steps
//!
//! A session's events are numbered in the order they were read (which is `seq` order for any
//! trace that validates without warnings). **Step t is the state after the session's first t
//! events**: step 0 is the empty state, and the event at (0-based) position i of the session
//! takes effect at step i + 1. For the bundled samples, whose `seq` runs 1, 2, 3, …, step t is
//! exactly "after the event with `seq` t", which is the convention `docs/samples.md` uses.
//! [`Timeline::step_of_seq`] and [`Timeline::seq_at`] translate when `seq` is not dense.
//!
//! # Σ as intervals
//!
//! Every announcement becomes a [`BeliefRecord`] valid over `[announced, retracted)`. Σ at t
//! is the records with `announced <= t` that are not retracted at or before t: a filter over
//! one vector, so moving to any step costs no replay at all. Records are stored in
//! announcement order, which is the order Σ is listed in (`export --format prompt`).
//!
//! An update overwrites the record of the same proposition (seed 000's `KnowledgeBase.update`):
//! announcing an id that is active ends the old record and starts a new one holding the new
//! event's formula, role, source, confidence and step. The old record ends as
//! [`RetractedBy::Reannounced`] when the formula and role are the same (the engine overwrites
//! that belief's confidence and step in place) and as [`RetractedBy::Superseded`] otherwise.
//! An id announced again after it was retracted is a new record.
//!
//! # Ground beliefs are members of Σ
//!
//! A ground belief written by a `belief` event or a done `step`'s `new_beliefs` (seed 004's
//! key-value beliefs, and what importers make of memory records, state channels and
//! observations) is a record of Σ too: its id is the belief's name, its formula the value
//! atom `name = value unit` ([`crate::logic::formula::ValueAtom`]), its source the belief's.
//! Its [`BeliefRecord::event`] is the writing event; the announcement it stands for is made
//! here and kept in the timeline ([`Timeline::ground_announce`]), so every reader of
//! [`BeliefView`] (the Σ pane, the REPL, `history`, `whatif`, `diff`, exports) sees it like
//! any belief. A write of a name that is held ends the old record: [`RetractedBy::Reannounced`]
//! for the same value, [`RetractedBy::Superseded`] for a new one, which is an overwrite (a
//! revision whose cause is the writing event, listed in [`Timeline::overwrites`]). A
//! `retract` naming the name ends the record and the BDI log's held value both.
//!
//! # What is kept
//!
//! Records hold positions into the [`TraceLog`]'s event vector rather than copies of the
//! events, so the model adds a few dozen bytes per event to what the reader already holds.
//! Formulas are parsed once while replaying (for the default id and to report parse errors)
//! and not kept: consumers parse the record's formula on demand ([`BeliefView::formula`]).

use crate::trace::event::body_of;
use hashbrown::HashMap;

use hashbrown::HashTable;
use std::sync::Arc;

use crate::logic::formula::Formula;
use crate::logic::parse::{ParseError, parse};
use crate::logic::print::normalized;
use crate::trace::brief::{
    AnnounceGist, Brief, FormulaGist, Gist, GroundWrite, Keyed, ReviseGist, Target, VerifyGist,
    formula_hash,
};
use crate::trace::event::{Announce, Body, RetractBy, Role, Text};
use crate::trace::{Event, Origin, TraceLog};

use super::bdi::BdiLog;

/// Who ended a belief record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetractedBy {
    /// A `retract` with `by: agent`.
    Agent,
    /// A `retract` with `by: revision`.
    Revision,
    /// A `retract` with `by: user`.
    User,
    /// A `retract` that did not say who.
    Unspecified,
    /// The same id was announced again with a different formula or role.
    Superseded,
    /// The same id was announced again with the same formula and role: the new record
    /// overwrites this one (its source, confidence and step), as seed 000's update does.
    Reannounced,
}

impl RetractedBy {
    /// A short name (`agent`, `revision`, `user`, `unspecified`, `superseded`,
    /// `reannounced`).
    pub fn as_str(self) -> &'static str {
        match self {
            RetractedBy::Agent => "agent",
            RetractedBy::Revision => "revision",
            RetractedBy::User => "user",
            RetractedBy::Unspecified => "unspecified",
            RetractedBy::Superseded => "superseded",
            RetractedBy::Reannounced => "reannounced",
        }
    }

    fn from_trace(by: Option<RetractBy>) -> Self {
        match by {
            Some(RetractBy::Agent) => RetractedBy::Agent,
            Some(RetractBy::Revision) => RetractedBy::Revision,
            Some(RetractBy::User) => RetractedBy::User,
            None => RetractedBy::Unspecified,
        }
    }
}

/// The end of a belief record's validity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retraction {
    /// The step at which the belief left Σ (it is not in Σ at this step).
    pub step: u32,
    /// The event that ended it (a `retract`, or the superseding `announce`), as a position in
    /// [`TraceLog::events`].
    pub event: u32,
    /// Who ended it.
    pub by: RetractedBy,
}

/// One announcement of a belief, valid over `[announced, retraction.step)`.
#[derive(Debug, Clone, PartialEq)]
pub struct BeliefRecord {
    /// The belief id (the `id` field, or the normalized formula). Kept inline (no heap
    /// allocation) when at most 24 bytes long, as most ids are: one record per announcement
    /// makes this the model's largest allocation on long traces.
    pub id: Text,
    /// The `announce` event, as a position in [`TraceLog::events`].
    pub event: u32,
    /// The step at which it entered Σ.
    pub announced: u32,
    /// When and how it left Σ, if it did.
    pub retraction: Option<Retraction>,
    /// Whether the formula parsed. A belief whose formula does not parse is still part of Σ
    /// (the agent believed it) but cannot be reasoned with; the error is in
    /// [`Timeline::errors`].
    pub formula_ok: bool,
}

impl BeliefRecord {
    /// Whether the record is in Σ at step `t`.
    pub fn active_at(&self, t: u32) -> bool {
        self.announced <= t && self.retraction.is_none_or(|r| r.step > t)
    }
}

/// A per-event problem found while replaying (never fatal).
#[derive(Debug, Clone, PartialEq)]
pub struct EventError {
    /// The step of the event (its 1-based position in the session).
    pub step: u32,
    /// The event, as a position in [`TraceLog::events`].
    pub event: u32,
    /// Which field is concerned (`formula`, `target`, `trigger`, ...).
    pub field: &'static str,
    /// 1-based column within the field's text, for formula parse errors.
    pub column: Option<usize>,
    /// What went wrong. May quote the input: sanitize before display.
    pub message: String,
}

/// A `retract` event and what it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetractEntry {
    /// Its step.
    pub step: u32,
    /// The event position.
    pub event: u32,
    /// The record it ended, as an index into [`Timeline::beliefs`]; `None` when the target
    /// named no active belief.
    pub record: Option<u32>,
    /// The ground belief it ended (a memory edit): an index into the BDI log's
    /// [`retractions`](super::bdi::BdiLog::retractions). A held ground belief is a record of
    /// Σ as well, so both are set when the target names it. When both are `None` the target
    /// named nothing held, and an error is recorded.
    pub ground: Option<u32>,
    /// The `revise` it carries out, as an index into [`Timeline::revisions`]: the latest
    /// earlier revise of the session that lists this target (convention 6 of
    /// `docs/samples.md`: the revise records the decision, retracts apply it).
    pub revision: Option<u32>,
}

/// A `revise` event and the retractions that applied it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionEntry {
    /// Its step.
    pub step: u32,
    /// The event position.
    pub event: u32,
    /// The record the trigger names (the active belief with that id, or with that formula),
    /// if any.
    pub trigger_record: Option<u32>,
    /// Indices into [`Timeline::retracts`] of the `retract` events that carried it out.
    pub retracts: Vec<u32>,
    /// Entries of the revise's `retracted` list that no later `retract` applied.
    pub unapplied: Vec<String>,
}

/// The replayed history of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    pub(crate) name: Arc<str>,
    pub(crate) events: Vec<u32>,
    pub(crate) beliefs: Vec<BeliefRecord>,
    pub(crate) retracts: Vec<RetractEntry>,
    pub(crate) revisions: Vec<RevisionEntry>,
    pub(crate) verifies: Vec<(u32, u32)>,
    pub(crate) queries: Vec<(u32, u32)>,
    pub(crate) scores: Vec<(u32, u32)>,
    pub(crate) errors: Vec<EventError>,
    pub(crate) unknown_kinds: u64,
    pub(crate) reader_problems: u64,
    pub(crate) seq_dense: bool,
    pub(crate) bdi: BdiLog,
    /// The announcement each ground-belief record stands for, by record index.
    pub(crate) ground: HashMap<u32, Box<Announce>>,
    /// Per key, its ground-belief records in order of writing: a key's values without a walk
    /// of Σ (the detail pane asks on every frame).
    ground_by_key: hashbrown::HashMap<Text, Vec<u32>>,
    /// Per `target` written, the scores naming it (indices into `scores`): an event's
    /// scores without reading every score (the detail pane asks on every frame).
    pub(crate) scores_by_target: hashbrown::HashMap<Text, Vec<u32>>,
    pub(crate) overwrites: Vec<Overwrite>,
}

/// A ground belief's value replaced by a new one: the old record ended by the write of the
/// new value (a revision whose cause is the writing event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overwrite {
    /// The step of the write.
    pub step: u32,
    /// The writing event (a `belief`, or a `step` with `new_beliefs`).
    pub event: u32,
    /// The record of the old value.
    pub old: u32,
    /// The record of the new value.
    pub new: u32,
}

/// A belief record together with its `announce` event: everything Σ shows about a belief.
#[derive(Debug, Clone, Copy)]
pub struct BeliefView<'a> {
    /// Index of the record in [`Timeline::beliefs`].
    pub index: u32,
    /// The record.
    pub record: &'a BeliefRecord,
    /// The `announce` event.
    pub event: &'a Event,
    /// Its body.
    pub announce: &'a Announce,
}

impl<'a> BeliefView<'a> {
    /// The belief id.
    pub fn id(&self) -> &'a str {
        &self.record.id
    }

    /// The formula as written.
    pub fn formula_text(&self) -> &'a str {
        &self.announce.formula
    }

    /// The parsed formula (parsed on each call; the text parsed once already during replay
    /// when [`BeliefRecord::formula_ok`] is true).
    pub fn formula(&self) -> Result<Formula, ParseError> {
        parse(&self.announce.formula)
    }

    /// The role (`fact` when absent).
    pub fn role(&self) -> Role {
        self.announce.role
    }

    /// The source, if given.
    pub fn source(&self) -> Option<&'a str> {
        self.announce.source.as_deref()
    }

    /// The confidence (1 when absent).
    pub fn confidence(&self) -> f64 {
        self.announce.confidence
    }

    /// The cited premises.
    pub fn because(&self) -> &'a [crate::trace::event::Text] {
        &self.announce.because
    }

    /// The natural-language original, if given.
    pub fn text(&self) -> Option<&'a str> {
        self.announce.text.as_deref()
    }

    /// Where it was announced (file, line).
    pub fn origin(&self) -> &'a Origin {
        &self.event.origin
    }

    /// The step at which it entered Σ.
    pub fn step(&self) -> u32 {
        self.record.announced
    }
}

/// Looks up the event at a log position; positions in a timeline always come from the log
/// they were built from. The event is pinned in the log's store (see
/// [`crate::trace::EventStore::get`]): for what is shown. A position the log does not have
/// gives an empty `unreadable` event rather than a panic.
pub(crate) fn event_at(log: &TraceLog, pos: u32) -> &Event {
    static MISSING: std::sync::LazyLock<Event> = std::sync::LazyLock::new(|| Event {
        origin: Origin {
            file: crate::trace::FileName::new("?"),
            line: 0,
            offset: 0,
        },
        v: crate::trace::FORMAT_VERSION,
        v_given: false,
        seq: 0,
        seq_given: false,
        ts: None,
        session: crate::trace::FileName::new("?"),
        session_given: false,
        id: None,
        body: Body::Unknown(Box::new(crate::trace::event::UnknownKind {
            kind: "unreadable".into(),
        })),
        extra: crate::trace::event::Extra::default(),
    });
    log.events.get(pos as usize).unwrap_or(&MISSING)
}

/// The event at a log position without pinning it (for walks that look at each event once;
/// see [`crate::trace::EventStore::load`]).
pub(crate) fn load_at(log: &TraceLog, pos: u32) -> Option<std::borrow::Cow<'_, Event>> {
    log.events.load(pos as usize)
}

impl Timeline {
    /// The session name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of events, i.e. the last step.
    pub fn len(&self) -> u32 {
        self.events.len() as u32
    }

    /// Whether the session has no events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The log positions of the session's events in step order (event i is at step i + 1).
    pub fn event_positions(&self) -> &[u32] {
        &self.events
    }

    /// The log position of the event that takes effect at `step` (1-based).
    pub fn event_pos_at(&self, step: u32) -> Option<u32> {
        step.checked_sub(1)
            .and_then(|i| self.events.get(i as usize).copied())
    }

    /// All belief records in announcement order.
    pub fn beliefs(&self) -> &[BeliefRecord] {
        &self.beliefs
    }

    /// Every `retract` event and what it ended.
    pub fn retracts(&self) -> &[RetractEntry] {
        &self.retracts
    }

    /// Every `revise` event with the retractions that applied it (the retraction log).
    pub fn revisions(&self) -> &[RevisionEntry] {
        &self.revisions
    }

    /// The verification log: `(step, event position)` of every `verify`, in order.
    pub fn verifies(&self) -> &[(u32, u32)] {
        &self.verifies
    }

    /// `(step, event position)` of every `query`, in order.
    pub fn queries(&self) -> &[(u32, u32)] {
        &self.queries
    }

    /// `(step, event position)` of every `score`, in order.
    pub fn scores(&self) -> &[(u32, u32)] {
        &self.scores
    }

    /// The scores whose `target` is written `target`, as (step, event), in order.
    pub fn scores_naming(&self, target: &str) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.scores_by_target
            .get(target)
            .into_iter()
            .flatten()
            .filter_map(|&k| self.scores.get(k as usize).copied())
    }

    /// The step of the event a `score` at `step` names as its `target`: the latest event
    /// of the session at or before the score whose `id` is the target, else the first one
    /// after it. `None` when the score names no target or no event of the session has that
    /// id (it may name something the trace does not hold, such as a span the exporter
    /// dropped).
    pub fn score_target(&self, log: &TraceLog, step: u32) -> Option<u32> {
        // Read without pinning (`load`, not `event_at`): the audit asks this of every score
        // of a long spooled trace, and a pinned event stays in memory for the run.
        let pos = self.event_pos_at(step)?;
        let score = log.events.load(pos as usize)?;
        let Body::Score(sc) = &score.body else {
            return None;
        };
        let target = sc.target.as_deref()?;
        let has = |i: &usize| {
            log.events
                .load(self.events[*i] as usize)
                .is_some_and(|e| e.id.as_deref() == Some(target))
        };
        let at = step as usize - 1;
        (0..at)
            .rev()
            .find(has)
            .or_else(|| (at + 1..self.events.len()).find(has))
            .map(|i| i as u32 + 1)
    }

    /// Per-event problems (formula parse errors, retractions of unknown beliefs, ...).
    pub fn errors(&self) -> &[EventError] {
        &self.errors
    }

    /// Events of a kind this version does not know.
    pub fn unknown_kinds(&self) -> u64 {
        self.unknown_kinds
    }

    /// Reader problems (bad lines) attributed to this session: those in files whose default
    /// session this is (a line that is not JSON cannot name its session).
    pub fn reader_problems(&self) -> u64 {
        self.reader_problems
    }

    /// The BDI history (seed 004); see [`super::bdi`].
    pub fn bdi_log(&self) -> &BdiLog {
        &self.bdi
    }

    /// The `seq` of the event at `step` (1-based).
    pub fn seq_at(&self, log: &TraceLog, step: u32) -> Option<u64> {
        self.event_pos_at(step).map(|p| event_at(log, p).seq)
    }

    /// The step of the first event with this `seq`.
    pub fn step_of_seq(&self, log: &TraceLog, seq: u64) -> Option<u32> {
        if self.seq_dense {
            // seq runs first, first + 1, ...: direct arithmetic.
            let first = self.events.first().map(|&p| event_at(log, p).seq)?;
            let i = seq.checked_sub(first)?;
            return (i < self.events.len() as u64).then_some(i as u32 + 1);
        }
        self.events
            .iter()
            .position(|&p| load_at(log, p).is_some_and(|e| e.seq == seq))
            .map(|i| i as u32 + 1)
    }

    /// Σ at step `t`: the active records, in announcement order.
    pub fn sigma_at<'a>(&'a self, log: &'a TraceLog, t: u32) -> Vec<BeliefView<'a>> {
        // Records are in announcement order, so everything after the first record announced
        // after t can be skipped.
        let end = self.beliefs.partition_point(|r| r.announced <= t);
        self.beliefs[..end]
            .iter()
            .enumerate()
            .filter(|(_, r)| r.active_at(t))
            .filter_map(|(i, r)| self.view(log, i as u32, r))
            .collect()
    }

    /// Σ at step `t` in the order of seed 000's `KnowledgeBase.facts` (a dictionary keyed by
    /// proposition): an update of a belief that is in Σ overwrites it in place, so a
    /// re-announced or superseded belief keeps the position its id first took; a belief that
    /// left Σ and came back is new, at the end. `export --format prompt` lists Σ in this order.
    pub fn sigma_in_kb_order<'a>(&'a self, log: &'a TraceLog, t: u32) -> Vec<BeliefView<'a>> {
        let end = self.beliefs.partition_point(|r| r.announced <= t);
        // The step each record's unbroken chain of overwrites started at.
        let mut last: HashMap<&str, (u32, u32)> = HashMap::new();
        let mut start = vec![0u32; end];
        for (i, r) in self.beliefs[..end].iter().enumerate() {
            let chained = last.get(r.id.as_str()).and_then(|&(p, s)| {
                let prev = &self.beliefs[p as usize];
                prev.retraction
                    .filter(|x| {
                        x.step == r.announced
                            && matches!(x.by, RetractedBy::Superseded | RetractedBy::Reannounced)
                    })
                    .map(|_| s)
            });
            start[i] = chained.unwrap_or(r.announced);
            last.insert(r.id.as_str(), (i as u32, start[i]));
        }
        let mut active: Vec<(u32, usize)> = self.beliefs[..end]
            .iter()
            .enumerate()
            .filter(|(_, r)| r.active_at(t))
            .map(|(i, _)| (start[i], i))
            .collect();
        active.sort_unstable();
        active
            .into_iter()
            .filter_map(|(_, i)| self.view(log, i as u32, &self.beliefs[i]))
            .collect()
    }

    /// The record with this index, with its event.
    pub fn belief<'a>(&'a self, log: &'a TraceLog, index: u32) -> Option<BeliefView<'a>> {
        self.beliefs
            .get(index as usize)
            .and_then(|r| self.view(log, index, r))
    }

    fn view<'a>(
        &'a self,
        log: &'a TraceLog,
        index: u32,
        record: &'a BeliefRecord,
    ) -> Option<BeliefView<'a>> {
        let event = log.events.get(record.event as usize)?;
        if let Some(a) = self.ground.get(&index) {
            return Some(BeliefView {
                index,
                record,
                event,
                announce: a,
            });
        }
        match &event.body {
            Body::Announce(a) => Some(BeliefView {
                index,
                record,
                event,
                announce: a,
            }),
            _ => None,
        }
    }

    /// The announcement a ground-belief record stands for (module docs), `None` for a
    /// record of an `announce` event.
    pub fn ground_announce(&self, record: u32) -> Option<&Announce> {
        self.ground.get(&record).map(|a| &**a)
    }

    /// Whether record `record` is a ground belief's (a `belief` or a step's `new_beliefs`).
    pub fn is_ground(&self, record: u32) -> bool {
        self.ground.contains_key(&record)
    }

    /// Every overwrite of a ground belief's value, in step order.
    pub fn overwrites(&self) -> &[Overwrite] {
        &self.overwrites
    }

    /// Whether any ground belief (a named value) was written.
    pub fn has_ground_records(&self) -> bool {
        !self.ground_by_key.is_empty()
    }

    /// The ground-belief records of key `key` (its values), in order of writing.
    pub fn ground_records_of(&self, key: &str) -> &[u32] {
        self.ground_by_key.get(key).map_or(&[], Vec::as_slice)
    }

    /// The records with this id (all announcements of it, in order).
    pub fn records_of<'a>(&'a self, id: &'a str) -> impl Iterator<Item = (u32, &'a BeliefRecord)> {
        self.beliefs
            .iter()
            .enumerate()
            .filter(move |(_, r)| r.id == id)
            .map(|(i, r)| (i as u32, r))
    }

    /// The record with this id active at step `t`.
    pub fn active_record(&self, id: &str, t: u32) -> Option<u32> {
        self.records_of(id)
            .find(|(_, r)| r.active_at(t))
            .map(|(i, _)| i)
    }
}

/// The replay state of one session kept between batches: what [`Timeline`] does not keep
/// but the next event may need (the active ids, a formula index, unapplied revisions). With
/// it, a timeline grows one event at a time from any number of batches, and the result is the
/// same as replaying everything at once (a property test in `model` checks this).
///
/// On long traces Σ holds most records (few beliefs are ever retracted), so the two indexes
/// of active records are as large as the timeline's record vector. They therefore hold no
/// keys of their own: an entry is a record index plus its formula hash (8 bytes), and the id
/// it is found by is read from the record when looking up or rehashing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Builder {
    /// Active records by id (hash of [`BeliefRecord::id`]). The formula hash is meaningful
    /// only when the record's formula parsed.
    active: Growing<ActiveEntry>,
    /// Active records with a formula that parsed, grouped by the hash of their normalized
    /// formula, so that a retract naming a formula (or an id that is not active) costs a
    /// lookup, not a scan of Σ (see [`FormulaGroups`]).
    by_formula: FormulaGroups,
    /// Revisions by the (trimmed) names in their `unapplied` list; a name leaves the map when
    /// no revision lists it any more.
    unapplied: HashMap<Text, Vec<u32>>,
    first_seq: Option<u64>,
    /// The record the last replayed event ended (a retract, or a superseding announce; an
    /// event ends at most one), for views that index retractions as they happen
    /// ([`Builder::take_ended`]).
    ended: Option<u32>,
    /// Active ground-belief records by their value atom (printed in ASCII, which is its
    /// normalized form), for a retract that names one by its formula.
    ground_formula: HashMap<Text, u32>,
}

/// Buckets of the old table moved to the new one per insert while a [`Growing`] table grows,
/// at least. The move must end before the new table (twice the entries) fills up, which
/// takes as many inserts as the old table held entries (7/8 of its buckets when it had no
/// tombstones): the step is twice what that needs (4 buckets for a table that doubled), and
/// more when tombstones made the old table sparse. A small step keeps each insert's share
/// of the move small (a bucket costs one hash of the entry's id, read from its record).
const MIGRATE_STEP: usize = 2;

/// A hash table that grows without a pause: when it is full, a table twice as large is
/// started, and every later insert moves [`MIGRATE_STEP`] buckets of the old table into it
/// (incremental rehashing, as Redis does), so no single insert rehashes everything. A plain
/// `HashTable` rehashes all its entries at once when it reaches 7/8 of a power of two: at
/// ~917k active beliefs that is a 0.3 s stop of whatever thread is replaying (the TUI's, for
/// followed files). Lookups look in both tables while a move is under way; memory at the
/// peak is what a plain table's rehash holds for a moment (the old table and one twice its
/// size), and the old table is freed as soon as it is empty.
#[derive(Debug, Clone, Default)]
pub(crate) struct Growing<T> {
    cur: HashTable<T>,
    old: HashTable<T>,
    /// The next bucket of `old` to move.
    cursor: usize,
    /// Buckets of `old` moved per insert (see [`MIGRATE_STEP`]).
    step: usize,
    /// Grow as a plain table does (all at once), for one-shot loads: nothing waits on them
    /// turn by turn, and the moment both tables exist is then as short as it can be.
    one_shot: bool,
}

impl<T> Growing<T> {
    /// The entry with this hash for which `eq` holds, if any.
    pub(crate) fn find(&self, hash: u64, mut eq: impl FnMut(&T) -> bool) -> Option<&T> {
        self.cur
            .find(hash, &mut eq)
            .or_else(|| self.old.find(hash, &mut eq))
    }

    /// Every entry with this hash (and maybe others: callers confirm).
    pub(crate) fn iter_hash(&self, hash: u64) -> impl Iterator<Item = &T> {
        self.cur.iter_hash(hash).chain(self.old.iter_hash(hash))
    }

    /// Removes the entry with this hash for which `eq` holds, if any.
    pub(crate) fn remove(&mut self, hash: u64, mut eq: impl FnMut(&T) -> bool) -> Option<T> {
        if let Ok(e) = self.cur.find_entry(hash, &mut eq) {
            return Some(e.remove().0);
        }
        let found = self
            .old
            .find_entry(hash, &mut eq)
            .ok()
            .map(|e| e.remove().0);
        if self.old.is_empty() {
            self.old = HashTable::new();
        }
        found
    }

    /// Inserts an entry known not to be there, moving a few buckets of a table being
    /// replaced first.
    pub(crate) fn insert_unique(&mut self, hash: u64, value: T, hasher: impl Fn(&T) -> u64) {
        self.migrate(self.step, &hasher);
        // `capacity` is what can be inserted before hashbrown rehashes the whole table
        // (entries plus free slots: removals may leave tombstones that are not free), so
        // this is the moment to start a new table instead.
        if !self.one_shot && self.cur.len() == self.cur.capacity() {
            // Finish any move still under way (the step is chosen so that there is none);
            // only two tables ever exist.
            self.migrate(usize::MAX, &hasher);
            let bigger = HashTable::with_capacity((self.cur.len() * 2).max(8));
            self.old = std::mem::replace(&mut self.cur, bigger);
            self.cursor = 0;
            // The move must end before the new table is full: it has room for this many
            // inserts once every old entry is in.
            let room = self.cur.capacity().saturating_sub(self.old.len()).max(1);
            self.step = (self.old.num_buckets().div_ceil(room) * 2).max(MIGRATE_STEP);
        }
        self.cur.insert_unique(hash, value, hasher);
    }

    /// Moves up to `buckets` buckets of the old table into the current one.
    fn migrate(&mut self, buckets: usize, hasher: &impl Fn(&T) -> u64) {
        if self.old.is_empty() {
            if self.old.capacity() > 0 {
                self.old = HashTable::new();
            }
            return;
        }
        let end = self
            .cursor
            .saturating_add(buckets)
            .min(self.old.num_buckets());
        for i in self.cursor..end {
            if let Ok(e) = self.old.get_bucket_entry(i) {
                let (v, _) = e.remove();
                self.cur.insert_unique(hasher(&v), v, hasher);
            }
        }
        self.cursor = end;
        if self.old.is_empty() {
            self.old = HashTable::new();
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.cur.len() + self.old.len()
    }
}

/// The active records whose formula parsed, grouped by the hash of their normalized
/// formula: what a retract or revise naming a belief by its formula is resolved against
/// ("the oldest active record with this formula").
///
/// One entry per distinct formula hash, never one per record: a formula announced a
/// million times (a literal such as `p5`) is one group, so lookups and inserts cost the same
/// however often a formula recurs (a table with one entry per record probed through every
/// record sharing a hash, and the lookup confirmed every one of them by parsing, which made
/// the replay grow faster than the trace). Members are kept in record order; a member that
/// ends is removed when it is the oldest, else left in place and counted, and the group is
/// compacted when the ended outnumber the active, so each member costs O(1) amortized.
///
/// Exactness: a group of two or more members knows its normalized formula (checked when
/// each member joined, decoding the first member's event once when the second joins), so a
/// lookup compares one string and decodes nothing. A group whose members differ (a 32-bit
/// hash collision) and a single-member group confirm candidates by decoding their event.
/// Normalized forms are equal exactly when the formulas parse to the same tree
/// ([`crate::logic::print::normalized`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct FormulaGroups {
    map: hashbrown::HashMap<u32, FormulaGroup>,
}

#[derive(Debug, Clone)]
enum FormulaGroup {
    One(u32),
    Many(Box<GroupMembers>),
}

#[derive(Debug, Clone)]
struct GroupMembers {
    /// Record indices in increasing order; the first is always active.
    recs: std::collections::VecDeque<u32>,
    /// Members that have ended but are still in `recs`.
    ended: u32,
    /// The normalized formula of every member, when they all have the same; `None` when
    /// they differ.
    text: Option<Text>,
}

fn is_active(beliefs: &[BeliefRecord], i: u32) -> bool {
    beliefs
        .get(i as usize)
        .is_some_and(|r| r.retraction.is_none())
}

/// The normalized formula of record `i`'s announce, decoded from the log without pinning.
fn normalized_of(log: &TraceLog, beliefs: &[BeliefRecord], i: u32) -> Option<String> {
    let r = beliefs.get(i as usize)?;
    match &load_at(log, r.event)?.body {
        Body::Announce(a) => parse(&a.formula).ok().map(|f| normalized(&f)),
        _ => None,
    }
}

impl FormulaGroups {
    /// Adds active record `idx` (the newest record) with normalized formula `n` of hash `h`.
    fn insert(&mut self, log: &TraceLog, beliefs: &[BeliefRecord], h: u32, idx: u32, n: &str) {
        match self.map.entry(h) {
            hashbrown::hash_map::Entry::Vacant(v) => {
                v.insert(FormulaGroup::One(idx));
            }
            hashbrown::hash_map::Entry::Occupied(mut o) => match o.get_mut() {
                FormulaGroup::One(first) => {
                    let first = *first;
                    let same = normalized_of(log, beliefs, first).is_some_and(|t| t == n);
                    o.insert(FormulaGroup::Many(Box::new(GroupMembers {
                        recs: [first, idx].into_iter().collect(),
                        ended: 0,
                        text: same.then(|| Text::from(n)),
                    })));
                }
                FormulaGroup::Many(g) => {
                    if g.text.as_deref().is_some_and(|t| t != n) {
                        g.text = None;
                    }
                    g.recs.push_back(idx);
                }
            },
        }
    }

    /// Removes record `i` of hash `h`, which has just ended.
    fn remove(&mut self, beliefs: &[BeliefRecord], h: u32, i: u32) {
        let hashbrown::hash_map::Entry::Occupied(mut o) = self.map.entry(h) else {
            return;
        };
        let empty = match o.get_mut() {
            FormulaGroup::One(r) => *r == i,
            FormulaGroup::Many(g) => {
                if g.recs.front() == Some(&i) {
                    g.recs.pop_front();
                    while let Some(&f) = g.recs.front() {
                        if is_active(beliefs, f) {
                            break;
                        }
                        g.recs.pop_front();
                        g.ended = g.ended.saturating_sub(1);
                    }
                } else {
                    g.ended += 1;
                    if g.ended as usize * 2 > g.recs.len() {
                        g.recs.retain(|&x| is_active(beliefs, x));
                        g.ended = 0;
                    }
                }
                g.recs.is_empty()
            }
        };
        if empty {
            o.remove();
        }
    }

    /// The oldest active record whose normalized formula is `n` (of hash `h`).
    fn oldest(&self, log: &TraceLog, beliefs: &[BeliefRecord], h: u32, n: &str) -> Option<u32> {
        let confirm = |i: u32| {
            is_active(beliefs, i) && normalized_of(log, beliefs, i).is_some_and(|t| t == n)
        };
        match self.map.get(&h)? {
            FormulaGroup::One(r) => confirm(*r).then_some(*r),
            FormulaGroup::Many(g) => match &g.text {
                Some(t) => (t == n).then(|| g.recs.front().copied()).flatten(),
                None => g.recs.iter().copied().find(|&i| confirm(i)),
            },
        }
    }
}

/// One step of the replay: the builder state with the timeline it extends and the log it
/// reads, borrowed for the duration of one event.
struct Pass<'a> {
    log: &'a TraceLog,
    tl: &'a mut Timeline,
    b: &'a mut Builder,
}

/// The hash ids are indexed by (see [`crate::trace::brief::name_hash`]).
pub(crate) use crate::trace::brief::name_hash as str_hash;

/// An entry of the index of active records: the record, the hash of its id (kept so that
/// growing the table and telling entries apart never reads the records, which are far
/// apart in memory), and the hash of its normalized formula.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ActiveEntry {
    hash: u64,
    record: u32,
    formula: u32,
}

/// The active record with the id `id` of hash `hash`, looked up in `active` against the
/// records' own ids.
fn find_keyed(
    active: &Growing<ActiveEntry>,
    beliefs: &[BeliefRecord],
    id: &str,
    hash: u64,
) -> Option<u32> {
    active
        .find(hash, |e| {
            e.hash == hash && beliefs.get(e.record as usize).is_some_and(|r| r.id == id)
        })
        .map(|e| e.record)
}

/// How many entries of each kind a session's replay will push: what [`Timeline::reserve`]
/// sizes the vectors from (one-shot loads know the whole log in advance).
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    events: usize,
    announces: usize,
    retracts: usize,
    revises: usize,
    verifies: usize,
    queries: usize,
    scores: usize,
    bdi: super::bdi::Counts,
}

impl Counts {
    /// Counts one event of the session.
    pub(crate) fn add(&mut self, body: &Body) {
        self.events += 1;
        match body {
            Body::Announce(_) => self.announces += 1,
            Body::Retract(_) => self.retracts += 1,
            Body::Revise(_) => self.revises += 1,
            Body::Verify(_) => self.verifies += 1,
            Body::Query(_) => self.queries += 1,
            Body::Score(_) => self.scores += 1,
            other => self.bdi.add(other),
        }
    }
}

impl Timeline {
    /// Reserves room for what replaying `c` will push. Every announce may start a record,
    /// so `beliefs` may be over-reserved; [`Timeline::shrink_to_fit`] trims it.
    pub(crate) fn reserve(&mut self, c: &Counts) {
        self.events.reserve_exact(c.events);
        self.beliefs.reserve_exact(c.announces);
        self.retracts.reserve_exact(c.retracts);
        self.revisions.reserve_exact(c.revises);
        self.verifies.reserve_exact(c.verifies);
        self.queries.reserve_exact(c.queries);
        self.scores.reserve_exact(c.scores);
        self.bdi.reserve(&c.bdi);
    }

    /// Releases spare capacity once a one-shot replay is done.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.events.shrink_to_fit();
        self.beliefs.shrink_to_fit();
        self.retracts.shrink_to_fit();
        self.revisions.shrink_to_fit();
        self.verifies.shrink_to_fit();
        self.queries.shrink_to_fit();
        self.scores.shrink_to_fit();
        self.errors.shrink_to_fit();
        self.bdi.shrink_to_fit();
        self.ground_by_key.shrink_to_fit();
        self.ground_by_key.values_mut().for_each(Vec::shrink_to_fit);
        self.scores_by_target.shrink_to_fit();
    }
}

impl Builder {
    /// Rebuilds the replay state of a timeline from the timeline alone, for a model whose
    /// builders were dropped after a one-shot load ([`super::Model::from_log`]) and which is
    /// now extended. Equivalent to the state the replay had at the end, because everything
    /// in it is a function of the records still active and the revisions' unapplied lists.
    pub(crate) fn rebuild(tl: &Timeline, log: &TraceLog) -> Builder {
        let mut b = Builder {
            first_seq: tl
                .events
                .first()
                .and_then(|&p| load_at(log, p))
                .map(|e| e.seq),
            ..Builder::default()
        };
        for (i, r) in tl.beliefs.iter().enumerate() {
            if r.retraction.is_some() {
                continue;
            }
            let norm = match body_of(&load_at(log, r.event)) {
                Some(Body::Announce(a)) if r.formula_ok => {
                    parse(&a.formula).ok().map(|f| normalized(&f))
                }
                _ => None,
            };
            let formula = norm.as_deref().map(|n| (n, formula_hash(n)));
            b.add_active(log, &tl.beliefs, i as u32, str_hash(&r.id), formula);
            if let Some(a) = tl.ground.get(&(i as u32)) {
                b.ground_formula.insert(a.formula.clone(), i as u32);
            }
        }
        for (k, rv) in tl.revisions.iter().enumerate() {
            for u in &rv.unapplied {
                let v = b.unapplied.entry(Text::from(u.trim())).or_default();
                // A revision listing a name twice is indexed once per listing, as in the replay.
                v.push(k as u32);
            }
        }
        b
    }

    /// Replays the event at log position `pos` onto `tl`, which this builder has built so
    /// far (and nothing else has changed).
    /// `ev` is the event at `pos` (the caller has it in hand: the log may keep only where
    /// it is).
    pub(crate) fn push(&mut self, tl: &mut Timeline, log: &TraceLog, pos: u32, ev: &Event) {
        self.push_brief(tl, log, pos, &Brief::of(ev));
    }

    /// Replays the event at log position `pos`, known by its brief (all the replay reads of
    /// an event; see [`crate::trace::brief`]).
    pub(crate) fn push_brief(&mut self, tl: &mut Timeline, log: &TraceLog, pos: u32, b: &Brief) {
        tl.events.push(pos);
        let step = tl.events.len() as u32;
        Pass { log, tl, b: self }.apply(step, pos, b);
    }

    /// Replays step `step` (1-based) of a timeline whose `events` already lists the
    /// session's positions (a one-shot load fills it in its counting pass, which spares a
    /// second copy); steps before it have been replayed by this builder.
    pub(crate) fn replay_listed(&mut self, tl: &mut Timeline, log: &TraceLog, step: u32) {
        if let Some(pos) = tl.event_pos_at(step)
            && let Some(ev) = load_at(log, pos)
        {
            Pass { log, tl, b: self }.apply(step, pos, &Brief::of(&ev));
        }
    }

    /// A builder for a one-shot replay of a whole log ([`super::Model::from_log`]): its maps
    /// grow as plain hash tables do, rehashing at once, which is what a load that nothing
    /// interactive waits on wants (peak memory as low as it gets). Builders that extend a
    /// timeline while someone waits (the TUI, [`super::Model::extend`]) grow incrementally.
    pub(crate) fn one_shot() -> Builder {
        let mut b = Builder::default();
        b.active.one_shot = true;
        b
    }

    /// The record the event replayed last ended, if it ended one (taken once). Records end
    /// in step order, so a caller that takes this after every push lists ended records by
    /// the step they ended at: the records retracted by step t are a prefix of that list.
    pub(crate) fn take_ended(&mut self) -> Option<u32> {
        self.ended.take()
    }

    /// Makes record `idx`, whose id has hash `hash`, active; `formula` is its normalized
    /// formula and that formula's hash when it parsed.
    fn add_active(
        &mut self,
        log: &TraceLog,
        beliefs: &[BeliefRecord],
        idx: u32,
        hash: u64,
        formula: Option<(&str, u32)>,
    ) {
        let entry = ActiveEntry {
            hash,
            record: idx,
            formula: formula.map_or(0, |(_, h)| h),
        };
        self.active.insert_unique(hash, entry, |e| e.hash);
        if let Some((n, h)) = formula {
            self.by_formula.insert(log, beliefs, h, idx, n);
        }
    }
}

impl Timeline {
    /// An empty timeline for the session `name`.
    pub(crate) fn empty(name: Arc<str>) -> Timeline {
        Timeline {
            name,
            events: Vec::new(),
            beliefs: Vec::new(),
            retracts: Vec::new(),
            revisions: Vec::new(),
            verifies: Vec::new(),
            queries: Vec::new(),
            scores: Vec::new(),
            errors: Vec::new(),
            unknown_kinds: 0,
            reader_problems: 0,
            seq_dense: true,
            bdi: BdiLog::default(),
            ground: HashMap::new(),
            ground_by_key: hashbrown::HashMap::new(),
            scores_by_target: hashbrown::HashMap::new(),
            overwrites: Vec::new(),
        }
    }
}

impl Pass<'_> {
    fn error(&mut self, step: u32, pos: u32, field: &'static str, e: Result<ParseError, String>) {
        let (column, message) = match e {
            Ok(pe) => (
                Some(pe.column),
                format!("{field} does not parse: {}", pe.message),
            ),
            Err(m) => (None, m),
        };
        self.tl.errors.push(EventError {
            step,
            event: pos,
            field,
            column,
            message,
        });
    }

    /// Replays the event at `pos`, which takes effect at `step`.
    fn apply(&mut self, step: u32, pos: u32, ev: &Brief) {
        let expected = self.b.first_seq.map(|f| f + u64::from(step - 1));
        match expected {
            None => self.b.first_seq = Some(ev.seq),
            Some(e) if e != ev.seq => self.tl.seq_dense = false,
            Some(_) => {}
        }
        match &ev.gist {
            Gist::Announce(a) => self.announce(step, pos, a),
            Gist::Retract(target, by) => self.retract(step, pos, target, *by),
            Gist::Revise(r) => self.revise(step, pos, r),
            Gist::Verify(v) => self.verify(step, pos, v),
            Gist::Query(e) => {
                self.tl.queries.push((step, pos));
                if let Some(e) = e {
                    self.error(step, pos, "formula", Ok((**e).clone()));
                }
            }
            Gist::Answer(e) => {
                if let Some(e) = e {
                    self.error(step, pos, "formula", Ok((**e).clone()));
                }
            }
            Gist::Score(target) => {
                if let Some(t) = target {
                    let k = self.tl.scores.len() as u32;
                    match self.tl.scores_by_target.get_mut(t.as_str()) {
                        Some(v) => v.push(k),
                        None => {
                            self.tl.scores_by_target.insert(t.clone(), vec![k]);
                        }
                    }
                }
                self.tl.scores.push((step, pos));
            }
            Gist::Unknown(_) => self.tl.unknown_kinds += 1,
            g => {
                self.tl.bdi.push(step, pos, g);
                let writes: &[GroundWrite] = match g {
                    Gist::Belief(w) => std::slice::from_ref(&**w),
                    Gist::Step(s) => &s.wrote,
                    _ => &[],
                };
                for w in writes {
                    self.ground_write(step, pos, w);
                }
            }
        }
    }

    /// Makes a ground belief's write a record of Σ (module docs).
    fn ground_write(&mut self, step: u32, pos: u32, w: &GroundWrite) {
        let name = w.name.clone();
        let a = Announce {
            formula: w.formula.clone(),
            source: w.source.clone(),
            role: Role::Fact,
            confidence: 1.0,
            because: Vec::new(),
            text: None,
        };
        let hash = str_hash(&name);
        let idx = self.tl.beliefs.len() as u32;
        if let Some(old) = find_keyed(&self.b.active, &self.tl.beliefs, &name, hash) {
            let same = self
                .tl
                .ground
                .get(&old)
                .is_some_and(|o| o.formula == a.formula);
            let by = if same {
                RetractedBy::Reannounced
            } else {
                RetractedBy::Superseded
            };
            self.end(old, step, pos, by);
            if !same {
                self.tl.overwrites.push(Overwrite {
                    step,
                    event: pos,
                    old,
                    new: idx,
                });
            }
        }
        let formula_ok = parse(&a.formula).is_ok();
        self.tl.beliefs.push(BeliefRecord {
            id: name,
            event: pos,
            announced: step,
            retraction: None,
            formula_ok,
        });
        self.b.ground_formula.insert(a.formula.clone(), idx);
        self.tl.ground.insert(idx, Box::new(a));
        match self.tl.ground_by_key.get_mut(w.name.as_str()) {
            Some(v) => v.push(idx),
            None => {
                self.tl.ground_by_key.insert(w.name.clone(), vec![idx]);
            }
        }
        // Not in the formula groups (whose members are read back from `announce` events):
        // `ground_formula` finds it by its value atom.
        self.b
            .add_active(self.log, &self.tl.beliefs, idx, hash, None);
    }

    fn announce(&mut self, step: u32, pos: u32, a: &AnnounceGist) {
        let norm = a.formula.normalized();
        let formula_ok = norm.is_some();
        if let FormulaGist::Unparsed(u) = &a.formula {
            self.error(step, pos, "formula", Ok(u.1.clone()));
        }
        let id = &a.id;
        if let Some(old) = find_keyed(&self.b.active, &self.tl.beliefs, &id.text, id.hash) {
            let by = if self.same_belief(old, a) {
                RetractedBy::Reannounced
            } else {
                RetractedBy::Superseded
            };
            self.end(old, step, pos, by);
        }
        let idx = self.tl.beliefs.len() as u32;
        self.tl.beliefs.push(BeliefRecord {
            id: id.text.clone(),
            event: pos,
            announced: step,
            retraction: None,
            formula_ok,
        });
        let formula = match &a.formula {
            FormulaGist::Parsed(n, h) => Some((n.as_str(), *h)),
            FormulaGist::Unparsed(_) => None,
        };
        self.b
            .add_active(self.log, &self.tl.beliefs, idx, id.hash, formula);
    }

    /// Whether the active record `old` and the new announcement `a` of its id hold the same
    /// belief: the same role, and the same formula as written or the same tree (equal
    /// normalized texts). Formulas of different hashes differ without looking further; else
    /// the old announcement is read again.
    fn same_belief(&self, old: u32, a: &AnnounceGist) -> bool {
        let Some(rec) = self.tl.beliefs.get(old as usize) else {
            return false;
        };
        let norm = a.formula.normalized();
        match &a.formula {
            // A formula that parses is never written like one that does not.
            FormulaGist::Parsed(..) if !rec.formula_ok => return false,
            FormulaGist::Parsed(_, fh) => {
                let h = self
                    .b
                    .active
                    .find(a.id.hash, |e| e.record == old)
                    .map(|e| e.formula);
                if h.is_some_and(|h| h != *fh) {
                    return false;
                }
            }
            FormulaGist::Unparsed(_) if rec.formula_ok => return false,
            FormulaGist::Unparsed(_) => {}
        }
        match body_of(&load_at(self.log, rec.event)) {
            Some(Body::Announce(o)) => {
                o.role == a.role
                    && match (&a.formula, norm) {
                        (_, Some(n)) => parse(&o.formula).is_ok_and(|f| normalized(&f) == n),
                        (FormulaGist::Unparsed(u), None) => o.formula == u.0,
                        (FormulaGist::Parsed(..), None) => false,
                    }
            }
            _ => false,
        }
    }

    /// Ends an active record.
    fn end(&mut self, i: u32, step: u32, pos: u32, by: RetractedBy) {
        if let Some(a) = self.tl.ground.get(&i)
            && self.b.ground_formula.get(&a.formula) == Some(&i)
        {
            self.b.ground_formula.remove(&a.formula);
        }
        let rec = &self.tl.beliefs[i as usize];
        let fhash = self
            .b
            .active
            .remove(str_hash(&rec.id), |e| e.record == i)
            .and_then(|e| rec.formula_ok.then_some(e.formula));
        self.b.ended = Some(i);
        self.tl.beliefs[i as usize].retraction = Some(Retraction {
            step,
            event: pos,
            by,
        });
        // After the retraction is set: the groups tell active members by it.
        if let Some(h) = fhash {
            self.b.by_formula.remove(&self.tl.beliefs, h, i);
        }
    }

    /// The active record a `target` (an id or a formula) names.
    fn resolve(&self, target: &Target) -> Option<u32> {
        let active = |k: &Keyed| find_keyed(&self.b.active, &self.tl.beliefs, &k.text, k.hash);
        if let Some(i) = active(&target.text) {
            return Some(i);
        }
        if let Some(t) = &target.trimmed
            && let Some(i) = active(t)
        {
            return Some(i);
        }
        let (n, fh) = target.normalized.as_ref()?;
        if let Some(i) = active(n) {
            return Some(i);
        }
        // A ground belief named by its value atom.
        if let Some(&i) = self.b.ground_formula.get(n.text.as_str()) {
            return Some(i);
        }
        // An explicit id with this formula: the oldest such active record.
        self.b
            .by_formula
            .oldest(self.log, &self.tl.beliefs, *fh, &n.text)
    }

    fn retract(&mut self, step: u32, pos: u32, target: &Target, by: Option<RetractBy>) {
        let record = self.resolve(target);
        // A target may name a held ground belief (a record of Σ too, by its name): a memory
        // edit takes the old value back before writing the new one.
        let ground = match record {
            Some(i) if self.tl.ground.contains_key(&i) => {
                let name = self.tl.beliefs[i as usize].id.clone();
                self.tl.bdi.retract_ground(step, pos, &name)
            }
            Some(_) => None,
            None => self.tl.bdi.retract_ground(step, pos, &target.text.text),
        };
        match (record, ground) {
            (Some(i), _) => self.end(i, step, pos, RetractedBy::from_trace(by)),
            (None, Some(_)) => {}
            (None, None) => self.error(
                step,
                pos,
                "target",
                Err(format!(
                    "retract target {:?} names no belief active at this step",
                    target.text.text
                )),
            ),
        }
        let t: &str = &target.text.text;
        let rec_id = record.map(|i| self.tl.beliefs[i as usize].id.clone());
        // The latest earlier revise listing this target (by id or as written) claims it.
        let names =
            |u: &String| *u == t || u.trim() == t.trim() || rec_id.as_deref() == Some(u.as_str());
        // Candidate revisions come from the index of unapplied names (latest first).
        let mut cands: Vec<u32> = [Some(t.trim()), rec_id.as_deref()]
            .into_iter()
            .flatten()
            .filter_map(|k| self.b.unapplied.get(k))
            .flatten()
            .copied()
            .collect();
        cands.sort_unstable();
        cands.dedup();
        let revision = cands
            .into_iter()
            .rev()
            .find(|&k| self.tl.revisions[k as usize].unapplied.iter().any(names))
            .map(|k| k as usize);
        let ri = self.tl.retracts.len() as u32;
        if let Some(k) = revision {
            let rv = &mut self.tl.revisions[k];
            rv.retracts.push(ri);
            if let Some(u) = rv.unapplied.iter().position(names) {
                let name = rv.unapplied.remove(u);
                let key = name.trim();
                // The revision stays indexed under a name it still lists (twice listed).
                if !rv.unapplied.iter().any(|x| x.trim() == key)
                    && let Some(v) = self.b.unapplied.get_mut(key)
                {
                    v.retain(|&x| x as usize != k);
                    if v.is_empty() {
                        self.b.unapplied.remove(key);
                    }
                }
            }
        }
        self.tl.retracts.push(RetractEntry {
            step,
            event: pos,
            record,
            ground,
            revision: revision.map(|k| k as u32),
        });
    }

    fn revise(&mut self, step: u32, pos: u32, r: &ReviseGist) {
        let trigger_record = r.trigger.as_ref().and_then(|t| self.resolve(t));
        if let Some(t) = &r.trigger
            && trigger_record.is_none()
            && find_keyed(&self.b.active, &self.tl.beliefs, &t.text.text, t.text.hash).is_none()
            && let Some(e) = &t.error
        {
            // Not an active id and not a formula either.
            self.error(step, pos, "trigger", Ok((**e).clone()));
        }
        // Entries that name beliefs by formula are stored under the id they resolve to, so
        // the retracts (which usually name ids) match them.
        let unapplied: Vec<String> = r
            .retracted
            .iter()
            .map(|x| match self.resolve(x) {
                Some(i) => self.tl.beliefs[i as usize].id.to_string(),
                None => x.text.text.to_string(),
            })
            .collect();
        let k = self.tl.revisions.len() as u32;
        for u in &unapplied {
            self.b
                .unapplied
                .entry(Text::from(u.trim()))
                .or_default()
                .push(k);
        }
        self.tl.revisions.push(RevisionEntry {
            step,
            event: pos,
            trigger_record,
            retracts: Vec::new(),
            unapplied,
        });
    }

    fn verify(&mut self, step: u32, pos: u32, v: &VerifyGist) {
        self.tl.verifies.push((step, pos));
        for e in &v.errors {
            self.error(step, pos, "formula", Ok(e.clone()));
        }
        if !v.any {
            self.error(
                step,
                pos,
                "formula",
                Err("verify names no formula".to_string()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap as StdMap;

    fn h(k: &u32) -> u64 {
        u64::from(*k).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// Inserts that must not make hashbrown grow a table itself: a table's bucket count
    /// changes only when `Growing` starts a new one, so no insert rehashes every entry.
    fn insert_checked(g: &mut Growing<u32>, k: u32) {
        let (before, old_before) = (g.cur.num_buckets(), g.old.num_buckets());
        g.insert_unique(h(&k), k, h);
        let switched = g.cursor <= g.step && g.old.num_buckets() == before && before > 0;
        assert!(
            g.cur.num_buckets() == before || switched || before == 0,
            "hashbrown grew the current table ({before} -> {} buckets, old {old_before})",
            g.cur.num_buckets()
        );
    }

    #[test]
    fn growing_never_rehashes_everything_in_one_insert() {
        let mut g = Growing::default();
        for k in 0..200_000u32 {
            insert_checked(&mut g, k);
            // The move of the old table ends well before the current one is full.
            assert!(g.old.len() <= g.cur.capacity() - g.cur.len(), "at {k}");
        }
        assert_eq!(g.len(), 200_000);
        for k in (0..200_000u32).step_by(997) {
            assert_eq!(g.find(h(&k), |&x| x == k), Some(&k));
        }
        assert!(g.old.is_empty() || g.cursor > 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Differential: inserts and removals (keys from a small range, so removals hit and
        /// tombstones pile up) against std's map; every key is found iff the map has it.
        #[test]
        fn growing_agrees_with_a_map(ops in proptest::collection::vec((any::<bool>(), 0u32..400), 0..3000)) {
            let mut g: Growing<u32> = Growing::default();
            // The one-shot kind (a plain table) on the same operations.
            let mut p: Growing<u32> = Growing { one_shot: true, ..Growing::default() };
            let mut m: StdMap<u32, ()> = StdMap::new();
            for (ins, k) in ops {
                if ins {
                    if g.find(h(&k), |&x| x == k).is_none() {
                        insert_checked(&mut g, k);
                    }
                    if p.find(h(&k), |&x| x == k).is_none() {
                        p.insert_unique(h(&k), k, h);
                    }
                    m.insert(k, ());
                } else {
                    prop_assert_eq!(g.remove(h(&k), |&x| x == k).is_some(), m.contains_key(&k));
                    prop_assert_eq!(p.remove(h(&k), |&x| x == k).is_some(), m.remove(&k).is_some());
                }
                prop_assert_eq!(g.len(), m.len());
                prop_assert_eq!(p.len(), m.len());
                prop_assert!(p.old.is_empty());
            }
            for k in 0..400u32 {
                prop_assert_eq!(g.find(h(&k), |&x| x == k).is_some(), m.contains_key(&k));
                prop_assert_eq!(g.iter_hash(h(&k)).filter(|&&x| x == k).count(), usize::from(m.contains_key(&k)));
            }
        }
    }
}
