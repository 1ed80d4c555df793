//! The audit of the shown session, off the UI thread: the verification pane's "recomputed"
//! column, the header's findings count, the timeline's finding marks and `e` / `E` all come
//! from [`crate::model::audit`], the code `doxascope audit` runs, so they show the same codes
//! on the same events.
//!
//! # Design
//!
//! The [`Auditor`] keeps one [`Model`] per TUI session and grows it with
//! [`Model::extend`]: the UI sends only what was read since its last request (copies of the
//! new events and reader problems, a [`Delta`]), never the
//! whole session again, so follow mode costs the UI thread a copy of the new lines. Each
//! request that asks for it then runs the solver pass ([`Model::recompute`]) and the audit
//! over that pass ([`audit::audit_recomputed`]), and answers with an [`Analysis`]. Requests
//! queued while an audit runs are applied together and audited once (a burst of appends
//! costs one audit).
//!
//! The copies carry the TUI session's name as their `session`, so one TUI timeline (a live
//! connection, a re-read segment) is one session of the auditor's model, and its steps are
//! the TUI's steps. Answers carry the data version and session they were computed for; the
//! app keeps only the one matching what it shows.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender as StdSender, channel};

use tokio::sync::mpsc::Sender;

use super::data::Delta;
use crate::model::Model;
use crate::model::audit::{self, AuditOptions, Finding};
use crate::trace::Item;
use crate::trace::event::FileName;

/// [`Verdict::outcome`] of a verdict that could not be recomputed within the solver's budget
/// (a timeout, a cap): the audit's `not-checkable`.
pub const NOT_CHECKABLE: &str = "not checkable";

/// A recomputed verdict for one `verify` event (the gate's class), or for one
/// `postcondition` or `satisfaction` record (`met`, `not met`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The recomputed outcome (`contradiction`, `entailed`, `newinfo`, `ungrounded`),
    /// [`NOT_CHECKABLE`], or why there is none (a formula that does not parse, ...).
    pub outcome: String,
    /// Whether the agent's claim agrees; `None` when either side is missing.
    pub agrees: Option<bool>,
}

/// What a finding is about in the TUI session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum At {
    /// The event at this index of the session (step index + 1).
    Event(u32),
    /// The reader problem at this index of the session's
    /// [`problems`](crate::tui::data::SessionData::problems).
    Problem(u32),
    /// The session as a whole (no event or line to point at).
    Session,
}

/// The audit of one session at one data version.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Analysis {
    /// The store version the request was made at.
    pub version: u64,
    /// The session index.
    pub session: usize,
    /// Events audited.
    pub events: u32,
    /// Verdicts by log position (of the UI's log).
    pub by_pos: HashMap<u32, Verdict>,
    /// The findings, in the audit's order (step, then code), each with what it is about.
    pub findings: Vec<(At, Finding)>,
    /// Seed 000's inconsistency log of the whole session ([`crate::model::inconsistency`]),
    /// event positions those of the UI's log; the retractions pane shows it up to its step.
    pub inconsistencies: Vec<crate::model::inconsistency::Inconsistency>,
}

impl Analysis {
    /// How many claims disagree with the recomputation.
    pub fn mismatches(&self) -> usize {
        self.by_pos
            .values()
            .filter(|v| v.agrees == Some(false))
            .count()
    }

    /// The findings about the event at index `i` of the session.
    pub fn on_event(&self, i: u32) -> impl Iterator<Item = &Finding> {
        let k = self.findings.partition_point(|(a, _)| match a {
            At::Event(j) => *j < i,
            _ => false,
        });
        self.findings[k..]
            .iter()
            .take_while(move |(a, _)| *a == At::Event(i))
            .map(|(_, f)| f)
    }
}

/// New data for one session, and whether to audit it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// What is new in the session.
    pub delta: Delta,
    /// The store version the copies were taken at.
    pub version: u64,
    /// Run the audit after adding the data.
    pub run: bool,
}

/// One session as the auditor holds it.
#[derive(Default)]
struct Held {
    model: Model,
    positions: Vec<u32>,
    /// (file, line) of each problem to its index in the session's problem list.
    problems: HashMap<(FileName, u64), u32>,
}

/// The audit worker's state: one growing model per session. The thread runs
/// [`Auditor::add`] and [`Auditor::analyse`]; tests call them directly.
#[derive(Default)]
pub struct Auditor {
    held: HashMap<usize, Held>,
}

impl Auditor {
    /// Adds a request's data to its session's model.
    pub fn add(&mut self, req: Request) {
        let d = req.delta;
        if d.reset {
            self.held.remove(&d.session);
        }
        let h = self.held.entry(d.session).or_default();
        let mut k = d.problem_index.iter();
        for it in &d.items {
            if let Item::Problem(p) = it
                && let Some(&i) = k.next()
            {
                h.problems.insert((p.origin.file.clone(), p.origin.line), i);
            }
        }
        h.positions.extend(d.positions);
        h.model.adopt_sources(&d.sources);
        h.model.extend(d.items);
    }

    /// Audits a session as held now.
    pub fn analyse(&self, session: usize, version: u64) -> Analysis {
        let mut out = Analysis {
            version,
            session,
            ..Analysis::default()
        };
        let Some(h) = self.held.get(&session) else {
            return out;
        };
        let opts = AuditOptions::default();
        // One session per model, so the first timeline is the one (a model holding only
        // problems has none, and its audit lists just those).
        let rc: Vec<_> = h
            .model
            .timelines()
            .first()
            .and_then(|tl| h.model.recompute(tl.name(), &opts.recompute))
            .into_iter()
            .collect();
        out.events = h.model.log().events.len() as u32;
        if let Some(rc) = rc.first() {
            for v in &rc.verifies {
                let Some(&pos) = h.positions.get(v.event as usize) else {
                    continue;
                };
                // A verdict the solver could not reach within its budget is "not checkable"
                // (the finding on the event says why), never a class.
                let outcome = match &v.result {
                    Ok(g) => g.outcome.as_str().to_string(),
                    Err(u) if u.not_checkable() => NOT_CHECKABLE.to_string(),
                    Err(u) => u.to_string(),
                };
                out.by_pos.insert(
                    pos,
                    Verdict {
                        outcome,
                        agrees: v.agrees(),
                    },
                );
            }
        }
        // Postcondition and satisfaction records beside their conditions re-run: listed with
        // the gate claims and counted among the disagreements.
        if let Some(tl) = h.model.timelines().first() {
            for c in crate::model::condition::recorded_checks(tl.bdi_log(), h.model.log()) {
                let Some(&pos) = h.positions.get(c.event as usize) else {
                    continue;
                };
                let outcome = match &c.rerun {
                    Some((_, Ok(r))) if r.holds => "met".to_string(),
                    Some((_, Ok(_))) => "not met".to_string(),
                    _ => NOT_CHECKABLE.to_string(),
                };
                out.by_pos.insert(
                    pos,
                    Verdict {
                        outcome,
                        agrees: c.agrees(),
                    },
                );
            }
        }
        if let (Some(rc), Some(tl)) = (rc.first(), h.model.timelines().first()) {
            let ui = |p: u32| h.positions.get(p as usize).copied().unwrap_or(p);
            out.inconsistencies = crate::model::inconsistency::log(tl, h.model.log(), rc)
                .into_iter()
                .map(|mut e| {
                    e.event = ui(e.event);
                    if let Some(r) = e.resolution.as_mut() {
                        r.event = ui(r.event);
                    }
                    e
                })
                .collect();
        }
        let report = audit::audit_recomputed(&h.model, &rc, &opts);
        out.findings = report
            .findings
            .into_iter()
            .map(|f| {
                let at = match (f.step, &f.location) {
                    (Some(s), _) if s > 0 => At::Event(s - 1),
                    (None, Some(l)) => h
                        .problems
                        .get(&(FileName::new(&l.file), l.line))
                        .map_or(At::Session, |&k| At::Problem(k)),
                    _ => At::Session,
                };
                (at, f)
            })
            .collect();
        // Sorted by what they are about, so a row finds its findings by binary search; the
        // sort is stable, so the audit's order stays within a row.
        out.findings.sort_by_key(|(a, _)| *a);
        out
    }
}

/// The UI's end of the audit worker.
pub struct AuditJob {
    tx: StdSender<Request>,
}

impl AuditJob {
    /// Starts the worker thread; analyses go to `answers`.
    pub fn spawn(answers: Sender<Analysis>) -> std::io::Result<AuditJob> {
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("doxascope-audit".into())
            .spawn(move || serve(rx, answers))?;
        Ok(AuditJob { tx })
    }

    /// Queues a request. The channel is unbounded on purpose: a dropped request would leave
    /// the auditor's model behind the UI's for good, and the UI only sends what it read.
    /// `Err` when the worker is gone.
    pub fn send(&self, req: Request) -> Result<(), String> {
        self.tx
            .send(req)
            .map_err(|_| "the audit worker stopped".to_string())
    }
}

fn serve(rx: Receiver<Request>, answers: Sender<Analysis>) {
    let mut auditor = Auditor::default();
    while let Ok(req) = rx.recv() {
        let mut runs: Vec<(usize, u64)> = Vec::new();
        let note = |r: &Request, runs: &mut Vec<(usize, u64)>| {
            if r.run {
                runs.retain(|(s, _)| *s != r.delta.session);
                runs.push((r.delta.session, r.version));
            }
        };
        note(&req, &mut runs);
        auditor.add(req);
        // Everything already queued joins this audit.
        while let Ok(more) = rx.try_recv() {
            note(&more, &mut runs);
            auditor.add(more);
        }
        for (session, version) in runs {
            if answers
                .blocking_send(auditor.analyse(session, version))
                .is_err()
            {
                return;
            }
        }
    }
}
