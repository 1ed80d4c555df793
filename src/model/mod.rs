//! The model layer: the only place that interprets events.
//!
//! A [`Model`] owns the [`TraceLog`] the reader produced and one [`Timeline`] per session
//! (a file, socket or stdin stream may carry several sessions, and a session may span files).
//! It offers two passes over a session, kept apart on purpose:
//!
//! - the **replay** ([`timeline`], [`bdi`]) is cheap, runs no solver, and is built as the
//!   model is loaded or grown ([`Model::extend`]: only new events are replayed, the replay
//!   state is kept between batches; the TUI grows its timelines the same way as it reads).
//!   It gives Σ at every step (beliefs as validity intervals), the BDI
//!   state at every step, the verification and retraction logs, and per-event errors. Moving
//!   to any step costs a filter over append-only vectors, never a replay from the start;
//! - the **recomputation** ([`recompute`]) walks one session forward with a single
//!   [`crate::logic::engine::BeliefState`], mirroring announcements and retractions, and
//!   recomputes every claim it can (gate verdicts, consistency after each announcement, each
//!   revision). It runs the solver, so it is explicit: [`Model::recompute`].
//!
//! Steps are defined in [`timeline`]: step t is the state after the session's first t
//! events (step 0 is empty; for traces whose `seq` runs 1, 2, 3, … step t = seq t).
//!
//! Every record points back at its event by position in [`TraceLog::events`], and every event
//! carries its [`Origin`] (file, line, byte offset): provenance back to file:line is
//! [`Model::origin`].
//!
//! [`export`] renders Σ at a step as DIMACS, SMT-LIB, the prompt bullet list or JSON.

pub mod arith;
pub mod audit;
pub mod bdi;
pub mod certificates;
pub mod clock;
pub mod condition;
pub mod diff;
pub mod export;
pub mod failure;
pub mod history;
pub mod inconsistency;
pub mod keylife;
pub mod recheck;
pub mod recompute;
pub mod report;
pub mod scores;
pub mod sessions;
pub mod spans;
pub mod timeline;
pub mod usage;
pub mod whatif;

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;

use crate::trace::event::FileName;
use crate::trace::import::{Format, ImportError, ImportNote, OpenError, Opened};
use crate::trace::{BriefItem, Event, Item, Origin, ReaderConfig, TraceLog};

pub use bdi::{BdiLog, BdiState, PlanView, StepState, StepView};
pub use recompute::{RecomputeOptions, Recomputed};
pub use timeline::{
    BeliefRecord, BeliefView, EventError, RetractEntry, RetractedBy, Retraction, RevisionEntry,
    Timeline,
};

/// A file could not be loaded.
#[derive(Debug)]
pub struct LoadError {
    /// The path as given.
    pub path: String,
    /// The I/O error.
    pub error: io::Error,
}

impl LoadError {
    /// The importer's error, when the file was readable but broken or of no known format.
    pub fn import_error(&self) -> Option<&ImportError> {
        self.error.get_ref()?.downcast_ref::<ImportError>()
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = crate::sanitize::sanitize(&self.path);
        match self.import_error() {
            Some(e) => write!(f, "{path}: {}", crate::sanitize::sanitize(&e.to_string())),
            None => write!(f, "cannot read {path}: {}", self.error),
        }
    }
}

/// A file of another format that [`Model::load`] imported.
#[derive(Debug, Clone)]
pub struct ImportedFile {
    /// The path as given.
    pub path: String,
    /// The format it was read as.
    pub format: Format,
    /// What its importer could not map exactly.
    pub notes: Vec<ImportNote>,
}

impl std::error::Error for LoadError {}

/// The replayed traces: the events as read plus one timeline per session.
///
/// A model grows: [`Model::extend`] appends reader output (the background loader's chunks,
/// a followed file's new lines) and replays only what is new, keeping each session's replay
/// state between calls, so a model extended batch by batch equals [`Model::from_log`] of the
/// same items (a property test below checks this on random batches).
#[derive(Debug, Default)]
pub struct Model {
    log: TraceLog,
    timelines: Vec<Timeline>,
    /// The replay state of each timeline, kept between batches.
    builders: Vec<timeline::Builder>,
    by_name: HashMap<Arc<str>, usize>,
    /// Reader problems per file, in order of first problem, with the timeline they are
    /// attributed to (see [`Model::attribute`]).
    problem_files: Vec<(FileName, u64, Option<usize>)>,
    /// Files of other formats, imported as they were loaded.
    imported: Vec<ImportedFile>,
}

/// The timeline slot of session `name`, with an empty timeline created when the session is
/// new (`true`). A free function so callers can hold the log borrowed meanwhile.
fn session_slot(
    by_name: &mut HashMap<Arc<str>, usize>,
    timelines: &mut Vec<Timeline>,
    name: &str,
) -> (usize, bool) {
    if let Some(&i) = by_name.get(name) {
        return (i, false);
    }
    let i = timelines.len();
    let name: Arc<str> = Arc::from(name);
    by_name.insert(name.clone(), i);
    timelines.push(Timeline::empty(name));
    (i, true)
}

impl Model {
    /// Reads trace files (`-` is standard input) and replays them. Sessions appear in order of
    /// their first event. A file of another format (Inspect, Langfuse, ...) is detected from
    /// its content and imported first ([`crate::trace::import`]; [`Model::imported`] lists
    /// them). A file that cannot be read, or that is broken or of no known format, is an
    /// error; bad lines of a v1 file are not (they are problems in [`Model::log`], counted per
    /// session).
    ///
    /// Events of v1 files stay in the files: the log keeps where each one is
    /// ([`crate::trace::EventStore`]) and each event is replayed as it is read, so a load
    /// decodes every line once and holds a few dozen bytes per event. Standard input and an
    /// importer's output have no file to read again; their events are kept in memory.
    pub fn load<P: AsRef<Path>>(paths: &[P]) -> Result<Model, LoadError> {
        Model::load_as(paths, None)
    }

    /// [`Model::load`], reading every file as `format` when it is given (`--format`) instead
    /// of detecting it: a v1 file whose head looks like binary data (a log whose start was
    /// zeroed by `copytruncate`) is read as v1 all the same, its bad lines reported.
    pub fn load_as<P: AsRef<Path>>(
        paths: &[P],
        forced: Option<Format>,
    ) -> Result<Model, LoadError> {
        use crate::trace::import::{HEAD_BYTES, detect, open, open_path, refuse_unknown};
        use std::io::Read;
        let mut m = Model::new();
        let cfg = ReaderConfig::default();
        for p in paths {
            let p = p.as_ref();
            let name = p.to_string_lossy().into_owned();
            let (problems, sessions) = (m.log.problems.len(), m.timelines.len());
            let bad = |e: ImportError| io::Error::new(io::ErrorKind::InvalidData, e);
            let mut imported = None;
            let res: io::Result<()> = if name == "-" {
                match open("<stdin>", io::stdin().lock(), forced) {
                    Ok(Opened::V1(r)) => {
                        crate::trace::read_all("<stdin>", r, cfg, |it| m.push_item(it))
                    }
                    Ok(Opened::Imported(format, imp)) => {
                        let r = m.read_spooled("<stdin>", &imp, cfg);
                        imported = Some((format, imp.notes));
                        r
                    }
                    Err(OpenError::Io(e)) => Err(e),
                    Err(OpenError::Import(e)) => Err(bad(e)),
                }
            } else {
                // The first bytes say the format: v1 stays in its file, another format is
                // imported and its v1 kept in memory.
                (|| {
                    let mut head = Vec::new();
                    File::open(p)?
                        .take(HEAD_BYTES as u64)
                        .read_to_end(&mut head)?;
                    let format = forced.unwrap_or_else(|| detect(p, &head));
                    if format == Format::V1 {
                        if forced.is_none() {
                            refuse_unknown(&head).map_err(bad)?;
                        }
                        let f = File::open(p)?;
                        let reader = f.try_clone()?;
                        let source = m.log.events.add_source(&name, f, cfg);
                        let mut load = (source, FileName::new(&name), Vec::new());
                        return crate::trace::read_all_briefs(&name, reader, cfg, |it| {
                            m.push_brief(&mut load, it)
                        });
                    }
                    let imp = match open_path(p, Some(format)) {
                        Ok(Opened::Imported(_, imp)) => imp,
                        Ok(Opened::V1(_)) => {
                            return Err(io::Error::other("the importer handed back v1"));
                        }
                        Err(OpenError::Io(e)) => return Err(e),
                        Err(OpenError::Import(e)) => return Err(bad(e)),
                    };
                    let r = m.read_spooled(&name, &imp, cfg);
                    imported = Some((format, imp.notes));
                    r
                })()
            };
            m.after_batch(problems, sessions);
            res.map_err(|error| LoadError {
                path: name.clone(),
                error,
            })?;
            if let Some((format, notes)) = imported {
                m.imported.push(ImportedFile {
                    path: name,
                    format,
                    notes,
                });
            }
        }
        // Nothing extends a loaded model as a rule: the replay state goes (and is rebuilt
        // from the timelines if something does), and the vectors give back their slack.
        m.builders = Vec::new();
        for t in &mut m.timelines {
            t.shrink_to_fit();
        }
        Ok(m)
    }

    /// The files [`Model::load`] imported from other formats, in order.
    pub fn imported(&self) -> &[ImportedFile] {
        &self.imported
    }

    /// Replays an in-memory stream named `name` (tests, generated traces).
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Model {
        let mut log = TraceLog::new();
        log.read_bytes(name, bytes, ReaderConfig::default());
        Model::from_log(log)
    }

    /// Replays an importer's spooled v1 output named `name`, its events kept as places in
    /// the spool.
    pub fn from_spooled(name: &str, imp: &crate::trace::import::Spooled) -> io::Result<Model> {
        let mut m = Model::new();
        let (problems, sessions) = (m.log.problems.len(), m.timelines.len());
        let r = m.read_spooled(name, imp, ReaderConfig::default());
        m.after_batch(problems, sessions);
        r?;
        m.builders = Vec::new();
        Ok(m)
    }

    /// An empty model, to be grown with [`Model::extend`].
    pub fn new() -> Model {
        Model::default()
    }

    /// Replays everything in a log.
    ///
    /// The whole log is known, so each timeline's vectors are sized from a counting pass
    /// first (vectors grown by doubling would hold up to twice their length, eight sessions'
    /// worth at once), and sessions are replayed one after the other (they are independent),
    /// so only one session's replay state is alive at a time. That state is not kept: a
    /// one-shot load is rarely extended, and [`Model::extend`] rebuilds it from the
    /// timelines if it is.
    pub fn from_log(log: TraceLog) -> Model {
        let mut m = Model {
            log,
            ..Model::default()
        };
        m.presize();
        let log = &m.log;
        for t in &mut m.timelines {
            let mut b = timeline::Builder::one_shot();
            for step in 1..=t.len() {
                b.replay_listed(t, log, step);
            }
        }
        m.count_problems(0);
        m.attribute();
        for t in &mut m.timelines {
            t.shrink_to_fit();
        }
        m.builders = Vec::new();
        m
    }

    /// Creates the timelines of every session in the log, in order of first event, with
    /// their vectors reserved for what the replay will push, and lists each session's event
    /// positions in its (not yet replayed) `events`.
    fn presize(&mut self) {
        let mut counts: Vec<timeline::Counts> = Vec::new();
        let mut slots: Vec<u32> = Vec::with_capacity(self.log.events.len());
        for pos in 0..self.log.events.len() {
            let Some(ev) = self.log.events.load(pos) else {
                continue;
            };
            let (slot, new) = session_slot(&mut self.by_name, &mut self.timelines, &ev.session);
            if new {
                counts.push(timeline::Counts::default());
            }
            counts[slot].add(&ev.body);
            slots.push(slot as u32);
        }
        for (t, c) in self.timelines.iter_mut().zip(&counts) {
            t.reserve(c);
        }
        for (pos, &slot) in slots.iter().enumerate() {
            self.timelines[slot as usize].events.push(pos as u32);
        }
    }

    /// Appends reader output (events and problems, in read order) and replays the new events
    /// onto their sessions' timelines; earlier events are not looked at again.
    pub fn extend(&mut self, items: impl IntoIterator<Item = Item>) {
        let (problems, sessions) = (self.log.problems.len(), self.timelines.len());
        for item in items {
            self.push_item(item);
        }
        self.after_batch(problems, sessions);
    }

    /// Adds one item of reader output to the log, replaying an event onto its session's
    /// timeline first (the replay reads the event in hand, so the log may keep only where
    /// it is). Problems are counted by [`Model::after_batch`].
    /// Reads an importer's spooled v1 as a v1 file: its events stay in the spool, read
    /// again by place, and only their briefs are kept.
    fn read_spooled(
        &mut self,
        name: &str,
        imp: &crate::trace::import::Spooled,
        cfg: ReaderConfig,
    ) -> io::Result<()> {
        let reader = io::BufReader::with_capacity(1 << 20, imp.reader()?);
        let source = self.log.events.add_source(name, imp.v1.try_clone()?, cfg);
        let mut load = (source, FileName::new(name), Vec::new());
        crate::trace::read_all_briefs(name, reader, cfg, |it| self.push_brief(&mut load, it))
    }

    fn push_item(&mut self, item: Item) {
        let Item::Event(ev) = item else {
            self.log.push(item);
            return;
        };
        // A log full to the brim turns the event into a problem (see `TraceLog::push`).
        if let Ok(pos) = u32::try_from(self.log.events.len())
            && pos < u32::MAX
        {
            // Builders dropped after a one-shot load are rebuilt before anything is replayed.
            while self.builders.len() < self.timelines.len() {
                let t = &self.timelines[self.builders.len()];
                self.builders.push(timeline::Builder::rebuild(t, &self.log));
            }
            let (slot, new) = session_slot(&mut self.by_name, &mut self.timelines, &ev.session);
            if new {
                self.builders.push(timeline::Builder::default());
            }
            self.builders[slot].push(&mut self.timelines[slot], &self.log, pos, &ev);
        }
        self.log.push(Item::Event(ev));
    }

    /// Adds one item of a brief load ([`crate::trace::read_all_briefs`]) of the file
    /// registered as `load.0` (the stream `load.1`), like [`Model::push_item`]: the event is
    /// replayed from its brief and kept as its place in the file. `load.2` holds the load's
    /// sessions as it named them: their timeline slots and names.
    fn push_brief(
        &mut self,
        load: &mut (crate::trace::SourceId, FileName, Vec<(usize, FileName)>),
        item: BriefItem,
    ) {
        // Builders dropped after a one-shot load are rebuilt before anything is replayed.
        while self.builders.len() < self.timelines.len() {
            let t = &self.timelines[self.builders.len()];
            self.builders.push(timeline::Builder::rebuild(t, &self.log));
        }
        match item {
            BriefItem::Session(name) => {
                let (slot, new) = session_slot(&mut self.by_name, &mut self.timelines, &name);
                if new {
                    self.builders.push(timeline::Builder::default());
                }
                load.2.push((slot, name));
            }
            BriefItem::Problem(p) => self.log.problems.push(*p),
            BriefItem::Event(ev) => {
                // The load names a session before its first event.
                let Some((slot, name)) = load.2.get(ev.session as usize) else {
                    return;
                };
                if let Ok(pos) = u32::try_from(self.log.events.len())
                    && pos < u32::MAX
                {
                    self.builders[*slot].push_brief(
                        &mut self.timelines[*slot],
                        &self.log,
                        pos,
                        &ev.brief,
                    );
                }
                self.log.push_briefed(load.0, &load.1, name, &ev);
            }
        }
    }

    /// Counts the problems from index `problems` on and attributes them, after a batch
    /// that started with `sessions_before` timelines.
    fn after_batch(&mut self, problems: usize, sessions_before: usize) {
        self.count_problems(problems);
        // Attribution depends on which sessions exist: redo it when that changed. There are
        // few files, so this costs nothing next to the replay.
        if self.timelines.len() != sessions_before || problems < self.log.problems.len() {
            self.attribute();
        }
    }

    /// Counts the reader problems from index `problems` on, per file.
    fn count_problems(&mut self, problems: usize) {
        for pr in &self.log.problems[problems..] {
            match self
                .problem_files
                .iter_mut()
                .find(|(f, _, _)| **f == *pr.origin.file)
            {
                Some(entry) => entry.1 += 1,
                None => self.problem_files.push((pr.origin.file.clone(), 1, None)),
            }
        }
    }

    /// Attributes reader problems to timelines. A line that is not an event cannot name its
    /// session: it goes to the session named after its file (the default), else to the first
    /// session read from that file.
    fn attribute(&mut self) {
        let log = &self.log;
        for (file, _, slot) in &mut self.problem_files {
            let file: &str = file;
            let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
            *slot = self
                .timelines
                .iter()
                .position(|t| &*t.name == base)
                .or_else(|| {
                    self.timelines.iter().position(|t| {
                        t.events
                            .first()
                            .and_then(|&p| log.events.origin(p as usize))
                            .is_some_and(|o| &*o.file == file)
                    })
                });
        }
        for t in &mut self.timelines {
            t.reader_problems = 0;
        }
        for (_, n, slot) in &self.problem_files {
            if let Some(i) = *slot {
                self.timelines[i].reader_problems += n;
            }
        }
    }

    /// Registers files another log reads its events from (see
    /// [`crate::trace::EventStore::adopt`]): events of those streams added later are kept as
    /// places in the files.
    pub fn adopt_sources(&mut self, sources: &[crate::trace::SharedSource]) {
        self.log.events.adopt(sources);
    }

    /// The events and reader problems as read.
    pub fn log(&self) -> &TraceLog {
        &self.log
    }

    /// Session names, in order of first appearance.
    pub fn sessions(&self) -> Vec<&str> {
        self.timelines.iter().map(|t| t.name()).collect()
    }

    /// All timelines, in order of first appearance.
    pub fn timelines(&self) -> &[Timeline] {
        &self.timelines
    }

    /// Takes every timeline out, in order of first appearance, leaving the model with no
    /// session (its log stays): for a caller done with the sessions that would drop each as
    /// soon as it is through with it (`audit::audit_spooled_releasing`).
    pub fn take_timelines(&mut self) -> Vec<Timeline> {
        self.by_name.clear();
        self.builders.clear();
        for (_, _, slot) in &mut self.problem_files {
            *slot = None;
        }
        std::mem::take(&mut self.timelines)
    }

    /// The timeline of a session.
    pub fn timeline(&self, session: &str) -> Option<&Timeline> {
        self.timelines.iter().find(|t| t.name() == session)
    }

    /// The only session, or the named one: what a command with an optional `--session`
    /// means. `Err` lists the sessions when the choice is ambiguous or unknown.
    pub fn pick_session(&self, session: Option<&str>) -> Result<&Timeline, String> {
        match session {
            Some(s) => self.timeline(s).ok_or_else(|| {
                format!(
                    "no session named {:?}; sessions: {}",
                    crate::sanitize::sanitize(s),
                    self.session_list()
                )
            }),
            None => match self.timelines.as_slice() {
                [t] => Ok(t),
                [] => Err("the trace has no events".to_string()),
                _ => Err(format!(
                    "the trace has several sessions, choose one with --session: {}",
                    self.session_list()
                )),
            },
        }
    }

    fn session_list(&self) -> String {
        self.timelines
            .iter()
            .map(|t| crate::sanitize::sanitize(t.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The file (as given to the reader) a session's first event was read from: where its
    /// bookmarks and notes are kept beside ([`crate::trace::notes`]).
    pub fn file_of(&self, session: &str) -> Option<&str> {
        let tl = self.timeline(session)?;
        let pos = *tl.event_positions().first()?;
        self.event(pos).map(|e| &*e.origin.file)
    }

    /// Σ at step `t` of a session (active beliefs in announcement order).
    pub fn sigma_at(&self, session: &str, t: u32) -> Option<Vec<BeliefView<'_>>> {
        self.timeline(session).map(|tl| tl.sigma_at(&self.log, t))
    }

    /// The BDI state at step `t` of a session.
    pub fn bdi_at(&self, session: &str, t: u32) -> Option<BdiState<'_>> {
        self.timeline(session)
            .map(|tl| bdi::state_at(&tl.bdi, &self.log, t))
    }

    /// The event at a log position.
    pub fn event(&self, pos: u32) -> Option<&Event> {
        self.log.events.get(pos as usize)
    }

    /// Where the event at a log position was read (file, line, byte offset).
    pub fn origin(&self, pos: u32) -> Option<&Origin> {
        self.event(pos).map(|e| &e.origin)
    }

    /// Recomputes every claim of a session with the solver (see [`recompute`]).
    pub fn recompute(&self, session: &str, opts: &RecomputeOptions) -> Option<Recomputed> {
        self.timeline(session)
            .map(|tl| recompute::recompute(tl, &self.log, opts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Reader;
    use proptest::prelude::*;

    /// Lines that exercise every part of the replay state kept between batches: ids
    /// re-announced and superseded, retracts by id and by formula, revises applied later,
    /// several sessions, BDI plans and steps, and lines that are not events.
    const POOL: &[&str] = &[
        r#"{"kind":"announce","formula":"p","id":"a"}"#,
        r#"{"kind":"announce","formula":"p -> q","id":"r","role":"rule"}"#,
        r#"{"kind":"announce","formula":"q & s","id":"a"}"#,
        r#"{"kind":"announce","formula":"~q"}"#,
        r#"{"kind":"announce","formula":"p &","id":"bad"}"#,
        r#"{"kind":"retract","target":"a","by":"revision"}"#,
        r#"{"kind":"retract","target":"¬q"}"#,
        r#"{"kind":"retract","target":"ghost"}"#,
        r#"{"kind":"revise","trigger":"~q","retracted":["a","r"],"policy":"greedy"}"#,
        r#"{"kind":"verify","formula":"q","outcome":"entailed"}"#,
        r#"{"kind":"query","formula":"p | q","answer":"yes"}"#,
        r#"{"kind":"announce","session":"other","formula":"x","id":"a"}"#,
        r#"{"kind":"retract","session":"other","target":"a"}"#,
        r#"{"kind":"plan","id":"pl","steps":[{"id":"s1","kind":"fetch","deps":[]}]}"#,
        r#"{"kind":"step","plan":"pl","step":"s1","status":"done","new_beliefs":[{"name":"n","value":1}]}"#,
        r#"{"kind":"belief","name":"n","value":2}"#,
        r#"{"kind":"mystery","x":1}"#,
        "not json at all",
        r#"{"kind":"announce"}"#,
    ];

    fn items_of(name: &str, bytes: &[u8]) -> Vec<Item> {
        let mut r = Reader::new(name, ReaderConfig::default());
        let mut out = Vec::new();
        r.feed(bytes, &mut out);
        r.finish(&mut out);
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn extending_in_batches_equals_replaying_at_once(
            lines in proptest::collection::vec(0..POOL.len(), 0..40),
            cuts in proptest::collection::vec(0usize..60, 0..6),
        ) {
            let text: String = lines.iter().map(|&i| format!("{}\n", POOL[i])).collect();
            let items = items_of("t.jsonl", text.as_bytes());
            let whole = Model::from_bytes("t.jsonl", text.as_bytes());
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(items.len())).collect();
            cuts.sort_unstable();
            let mut m = Model::new();
            let mut rest = items.into_iter();
            let mut at = 0;
            for c in cuts {
                m.extend(rest.by_ref().take(c - at));
                at = c;
            }
            m.extend(rest);
            prop_assert_eq!(&m.log.events, &whole.log.events);
            prop_assert_eq!(&m.log.problems, &whole.log.problems);
            prop_assert_eq!(m.timelines(), whole.timelines());
        }

        #[test]
        fn extending_a_one_shot_load_equals_replaying_at_once(
            lines in proptest::collection::vec(0..POOL.len(), 0..40),
            cuts in proptest::collection::vec(0usize..60, 1..4),
        ) {
            // from_log drops the replay state; extend must rebuild it from the timelines.
            let text: String = lines.iter().map(|&i| format!("{}\n", POOL[i])).collect();
            let items = items_of("t.jsonl", text.as_bytes());
            let whole = Model::from_bytes("t.jsonl", text.as_bytes());
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(items.len())).collect();
            cuts.sort_unstable();
            let mut rest = items.into_iter();
            let mut log = TraceLog::new();
            log.extend(rest.by_ref().take(cuts[0]));
            let mut m = Model::from_log(log);
            let mut at = cuts[0];
            for &c in &cuts[1..] {
                m.extend(rest.by_ref().take(c - at));
                at = c;
            }
            m.extend(rest);
            prop_assert_eq!(&m.log.events, &whole.log.events);
            prop_assert_eq!(m.timelines(), whole.timelines());
        }
    }

    #[test]
    fn problems_before_their_session_appears_are_still_counted() {
        // The file's only session is named in the events, so the bad line is attributed to
        // the first session read from the file, which arrives in a later batch.
        let text = "oops\n{\"kind\":\"announce\",\"session\":\"s\",\"formula\":\"p\"}\n";
        let mut items = items_of("f.jsonl", text.as_bytes()).into_iter();
        let mut m = Model::new();
        m.extend(items.by_ref().take(1));
        assert!(m.timelines().is_empty());
        m.extend(items);
        assert_eq!(m.timelines()[0].reader_problems(), 1);
        assert_eq!(
            m.timelines(),
            Model::from_bytes("f.jsonl", text.as_bytes()).timelines()
        );
    }
}
