//! The model layer: the only place that interprets events.
//!
//! A [`Model`] owns the [`TraceLog`] the reader produced and one [`Timeline`] per session
//! (a file, socket or stdin stream may carry several sessions, and a session may span files).
//! It offers two passes over a session, kept apart on purpose:
//!
//! - the **replay** ([`timeline`], [`bdi`]) is cheap, runs no solver, and is built once when
//!   the model is loaded. It gives Σ at every step (beliefs as validity intervals), the BDI
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

pub mod audit;
pub mod bdi;
pub mod export;
mod local;
pub mod recompute;
pub mod timeline;

use std::fmt;
use std::fs::File;
use std::io;
use std::path::Path;

use crate::trace::{Event, Origin, ReaderConfig, TraceLog};

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

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot read {}: {}",
            crate::sanitize::sanitize(&self.path),
            self.error
        )
    }
}

impl std::error::Error for LoadError {}

/// The replayed traces: the events as read plus one timeline per session.
#[derive(Debug)]
pub struct Model {
    log: TraceLog,
    timelines: Vec<Timeline>,
}

impl Model {
    /// Reads trace files (`-` is standard input) and replays them. Sessions appear in order of
    /// their first event. A file that cannot be read is an error; bad lines are not (they are
    /// problems in [`Model::log`], counted per session).
    pub fn load<P: AsRef<Path>>(paths: &[P]) -> Result<Model, LoadError> {
        let mut log = TraceLog::new();
        for p in paths {
            let p = p.as_ref();
            let name = p.to_string_lossy().into_owned();
            let res = if name == "-" {
                log.read_from("<stdin>", io::stdin().lock(), ReaderConfig::default())
            } else {
                File::open(p).and_then(|f| log.read_from(&name, f, ReaderConfig::default()))
            };
            res.map_err(|error| LoadError {
                path: name.clone(),
                error,
            })?;
        }
        Ok(Model::from_log(log))
    }

    /// Replays an in-memory stream named `name` (tests, generated traces).
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Model {
        let mut log = TraceLog::new();
        log.read_bytes(name, bytes, ReaderConfig::default());
        Model::from_log(log)
    }

    /// Replays everything in a log.
    pub fn from_log(log: TraceLog) -> Model {
        let mut timelines: Vec<Timeline> = log
            .index
            .sessions()
            .map(|(name, positions)| {
                let arc = log.events[positions[0] as usize].session.clone();
                let mut b = timeline::Builder::new(&log, arc);
                let _ = name;
                for &p in positions {
                    b.push(p);
                }
                b.finish()
            })
            .collect();
        // A line that is not an event cannot name its session: attribute it to the session
        // named after its file (the default), else to the first session read from that file.
        for pr in &log.problems {
            let file = &*pr.origin.file;
            let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
            let slot = timelines.iter().position(|t| &*t.name == base).or_else(|| {
                timelines.iter().position(|t| {
                    t.events
                        .first()
                        .is_some_and(|&p| &*log.events[p as usize].origin.file == file)
                })
            });
            if let Some(i) = slot {
                timelines[i].reader_problems += 1;
            }
        }
        Model { log, timelines }
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
