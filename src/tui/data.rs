//! What the panes show, derived from the trace as it is read.
//!
//! [`Store`] owns the [`TraceLog`] and, per session, a small index of the events each pane
//! needs (announcements as validity intervals, verifications, revisions and retractions,
//! plans, step reports, intentions, flagged events). It is built incrementally, one batch of
//! reader items at a time, so the background loader and follow mode extend it without ever
//! re-reading what came before, and every per-step question is answered from these vectors
//! without replaying the session.
//!
//! Step t of a session is the state after its first t events (step 0 is empty), the same
//! convention the replay model uses; the timeline cursor on the event at position i (0-based)
//! shows step i + 1.
//!
//! This module interprets only what the views need to lay out rows; the logic (recomputing
//! claimed outcomes, audits) stays in the model and the REPL, which run off the UI thread.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use crate::logic::parse::parse as parse_formula;
use crate::logic::print::normalized;
use crate::repl::{TraceBelief, TraceSigma};
use crate::trace::event::{Announce, StepStatus};
use crate::trace::{Body, Event, Item, Severity, TraceLog};

/// The name of a serializable unit enum value (`fact`, `contradiction`, ...).
pub fn enum_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::from("?"),
    }
}

/// One announcement, valid over `[announced, retracted)`.
#[derive(Debug, Clone, PartialEq)]
pub struct BeliefRec {
    /// The belief id (the `id` field, else the normalized formula, else the text as written).
    pub id: String,
    /// The `announce` event (position in the log).
    pub pos: u32,
    /// The step it entered Σ.
    pub announced: u32,
    /// The step it left Σ and the event that removed it.
    pub retracted: Option<(u32, u32)>,
    /// Whether the formula parses.
    pub formula_ok: bool,
    /// The normalized formula, when the record is also reachable by it.
    key2: Option<String>,
}

impl BeliefRec {
    /// Whether the belief is in Σ at step `t`.
    pub fn active_at(&self, t: u32) -> bool {
        self.announced <= t && self.retracted.is_none_or(|(s, _)| s > t)
    }
}

/// Why an event is flagged in the timeline (`e` / `E` jump between flagged events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// A formula in the event does not parse.
    FormulaError,
    /// A `retract` names no active belief.
    UnknownTarget,
    /// A `log` at level error or warn.
    LogProblem,
    /// A step that failed or a postcondition that did not hold.
    Failure,
    /// The agent's gate reported a contradiction.
    Contradiction,
}

impl Flag {
    /// A short label for the timeline and detail panes.
    pub fn label(self) -> &'static str {
        match self {
            Flag::FormulaError => "formula error",
            Flag::UnknownTarget => "unknown target",
            Flag::LogProblem => "log warning",
            Flag::Failure => "failure",
            Flag::Contradiction => "contradiction",
        }
    }

    /// Whether the flag counts as an error or finding (rather than a notable event).
    pub fn is_problem(self) -> bool {
        !matches!(self, Flag::Contradiction)
    }
}

/// Everything the views need about one session.
#[derive(Debug, Clone, Default)]
pub struct SessionData {
    /// The session name.
    pub name: Arc<str>,
    /// Its events as positions in the log; step i + 1 is after `events[i]`.
    pub events: Vec<u32>,
    /// Announcements in order.
    pub beliefs: Vec<BeliefRec>,
    /// Active belief ids (and normalized formulas) to record indices.
    active: HashMap<String, u32>,
    /// `verify` events as (step, position).
    pub verifies: Vec<(u32, u32)>,
    /// `revise` and `retract` events as (step, position).
    pub revisions: Vec<(u32, u32)>,
    /// `plan`, `step`, `postcondition` events as (step, position).
    pub plan_events: Vec<(u32, u32)>,
    /// `intention` and `satisfaction` events as (step, position).
    pub intentions: Vec<(u32, u32)>,
    /// Flagged events as (index into `events`, flag), in order.
    pub flags: Vec<(u32, Flag)>,
    /// Contradictions (gate verdicts) and revisions per event index, for the density strip.
    pub marks: Vec<u8>,
    /// How many flags are errors or findings.
    pub problems: usize,
    /// Where the events come from (a file, a re-read segment of one, a live session).
    pub origin: Origin,
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
pub enum Origin {
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

impl SessionData {
    fn new(name: Arc<str>) -> Self {
        SessionData {
            name,
            ..SessionData::default()
        }
    }

    /// The last step (number of events).
    pub fn len(&self) -> u32 {
        self.events.len() as u32
    }

    /// Whether the session has no events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Indices into `beliefs` of Σ at step `t`, in announcement order; retracted beliefs
    /// (announced at or before t) are included when `with_retracted`.
    pub fn sigma_at(&self, t: u32, with_retracted: bool) -> Vec<u32> {
        // Beliefs are in announcement order, so the prefix announced by t is found by search.
        let end = self.beliefs.partition_point(|b| b.announced <= t);
        (0..end as u32)
            .filter(|&i| with_retracted || self.beliefs[i as usize].active_at(t))
            .collect()
    }

    /// Entries of an (step, position) list that happened at or before step `t`.
    pub fn upto(list: &[(u32, u32)], t: u32) -> &[(u32, u32)] {
        &list[..list.partition_point(|&(s, _)| s <= t)]
    }

    fn push(&mut self, pos: u32, ev: &Event) {
        self.events.push(pos);
        let step = self.len();
        let idx = step - 1;
        let mut mark = 0u8;
        let mut flag = None;
        match &ev.body {
            Body::Announce(a) if !self.announce(pos, step, ev, a) => {
                flag = Some(Flag::FormulaError);
            }
            Body::Retract(r) => {
                mark |= MARK_REVISION;
                self.revisions.push((step, pos));
                let key = self.resolve(&r.target);
                match key.and_then(|k| self.active.get(&k).copied()) {
                    Some(i) => self.end(i, step, pos),
                    None => flag = Some(Flag::UnknownTarget),
                }
            }
            Body::Revise(_) => {
                mark |= MARK_REVISION;
                self.revisions.push((step, pos));
            }
            Body::Verify(v) => {
                self.verifies.push((step, pos));
                if v.all_formulas().any(|f| parse_formula(f).is_err()) {
                    flag = Some(Flag::FormulaError);
                }
                if matches!(v.outcome, Some(crate::trace::event::Outcome::Contradiction)) {
                    mark |= MARK_CONTRADICTION;
                    flag = flag.or(Some(Flag::Contradiction));
                }
            }
            Body::Plan(_) => self.plan_events.push((step, pos)),
            Body::Step(s) => {
                self.plan_events.push((step, pos));
                if matches!(s.status, Some(StepStatus::Failed)) {
                    flag = Some(Flag::Failure);
                }
            }
            Body::Postcondition(p) => {
                self.plan_events.push((step, pos));
                if p.ok == Some(false) {
                    flag = Some(Flag::Failure);
                }
            }
            Body::Intention(_) | Body::Satisfaction(_) => self.intentions.push((step, pos)),
            Body::Log(l) => {
                if matches!(l.level.as_deref(), Some("error" | "warn" | "warning")) {
                    flag = Some(Flag::LogProblem);
                }
            }
            Body::Query(q) if parse_formula(&q.formula).is_err() => {
                flag = Some(Flag::FormulaError);
            }
            _ => {}
        }
        if let Some(f) = flag {
            if f.is_problem() {
                mark |= MARK_PROBLEM;
                self.problems += 1;
            }
            self.flags.push((idx, f));
        }
        self.marks.push(mark);
    }

    /// The key a belief is stored under: its id when one is active under that name, else
    /// the normalized formula.
    fn resolve(&self, target: &str) -> Option<String> {
        if self.active.contains_key(target) {
            return Some(target.to_string());
        }
        parse_formula(target).ok().map(|f| normalized(&f))
    }

    fn end(&mut self, i: u32, step: u32, pos: u32) {
        let Some(rec) = self.beliefs.get_mut(i as usize) else {
            return;
        };
        rec.retracted = Some((step, pos));
        // Only the keys this record was stored under, and only if they still point at it.
        for k in [Some(&rec.id), rec.key2.as_ref()].into_iter().flatten() {
            if self.active.get(k) == Some(&i) {
                self.active.remove(k);
            }
        }
    }

    /// Records an announcement; returns whether its formula parsed.
    fn announce(&mut self, pos: u32, step: u32, ev: &Event, a: &Announce) -> bool {
        let parsed = parse_formula(&a.formula).ok();
        let norm = parsed.as_ref().map(normalized);
        let id = ev
            .id
            .as_deref()
            .map(str::to_string)
            .or_else(|| norm.clone())
            .unwrap_or_else(|| a.formula.to_string());
        if let Some(&old) = self.active.get(&id) {
            // Re-announcing an active id ends the old record (the new one supersedes it).
            self.end(old, step, pos);
        }
        let i = self.beliefs.len() as u32;
        let key2 = norm.filter(|n| *n != id && !self.active.contains_key(n));
        if let Some(n) = &key2 {
            self.active.insert(n.clone(), i);
        }
        self.active.insert(id.clone(), i);
        self.beliefs.push(BeliefRec {
            id,
            pos,
            announced: step,
            retracted: None,
            formula_ok: parsed.is_some(),
            key2,
        });
        parsed.is_some()
    }
}

/// The trace as read so far, with the per-session indexes.
#[derive(Debug, Default)]
pub struct Store {
    /// The events and reader problems.
    pub log: TraceLog,
    /// Sessions in order of first appearance.
    pub sessions: Vec<SessionData>,
    by_name: HashMap<Arc<str>, usize>,
    /// Sessions that are not grouped by name alone: (origin, session name or none).
    by_origin: HashMap<(Origin, Option<Arc<str>>), usize>,
    /// Bumped whenever anything is added, so views can cache by it.
    pub version: u64,
    /// Reader problems of severity error, counted as they arrive.
    errors: usize,
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
        self.extend_from(&Origin::Trace, items);
    }

    /// Adds a batch of reader output from `origin` (see [`Origin`] for how sessions are
    /// told apart). Segment 0 of a followed file is the same as [`Origin::Trace`].
    pub fn extend_from(&mut self, origin: &Origin, items: impl IntoIterator<Item = Item>) {
        let origin = match origin {
            Origin::Segment { segment: 0, .. } => &Origin::Trace,
            o => o,
        };
        let start = self.log.events.len();
        let pstart = self.log.problems.len();
        self.log.extend(items);
        self.errors += self.log.problems[pstart..]
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        for pos in start..self.log.events.len() {
            let ev = &self.log.events[pos];
            let slot = match origin {
                Origin::Trace => match self.by_name.get(&ev.session) {
                    Some(&i) => i,
                    None => {
                        self.by_name.insert(ev.session.clone(), self.sessions.len());
                        self.sessions.push(SessionData::new(ev.session.clone()));
                        self.sessions.len() - 1
                    }
                },
                Origin::Segment { segment, .. } => {
                    let key = (origin.clone(), Some(ev.session.clone()));
                    match self.by_origin.get(&key) {
                        Some(&i) => i,
                        None => {
                            let name: Arc<str> =
                                format!("{} · re-read {segment}", ev.session).into();
                            let mut d = SessionData::new(name);
                            d.origin = origin.clone();
                            self.by_origin.insert(key, self.sessions.len());
                            self.sessions.push(d);
                            self.sessions.len() - 1
                        }
                    }
                }
                Origin::Live(id) => match self.by_origin.get(&(origin.clone(), None)) {
                    Some(&i) => i,
                    None => {
                        let mut d = SessionData::new(format!("live-{id}").into());
                        d.origin = origin.clone();
                        self.by_origin
                            .insert((origin.clone(), None), self.sessions.len());
                        self.sessions.push(d);
                        self.sessions.len() - 1
                    }
                },
            };
            let ev = &self.log.events[pos];
            self.sessions[slot].push(pos as u32, ev);
        }
        self.version += 1;
    }

    /// Sets the display name of a live session (untrusted: it is sanitized here), creating
    /// its timeline if it has none yet, so a session is listed as soon as it connects.
    pub fn name_live(&mut self, id: u64, name: &str) {
        let key = (Origin::Live(id), None);
        let name: Arc<str> = crate::sanitize::sanitize(name).into();
        match self.by_origin.get(&key) {
            Some(&i) => self.sessions[i].name = name,
            None => {
                let mut d = SessionData::new(name);
                d.origin = Origin::Live(id);
                self.by_origin.insert(key, self.sessions.len());
                self.sessions.push(d);
            }
        }
        self.version += 1;
    }

    /// The event at a log position.
    pub fn event(&self, pos: u32) -> Option<&Event> {
        self.log.events.get(pos as usize)
    }

    /// Reader problems of severity error (lines that are not events).
    pub fn parse_errors(&self) -> usize {
        self.errors
    }

    /// Σ's history of a session as owned rows (cheap clones): the REPL worker parses the
    /// formulas ([`SigmaSnapshot::from`]), so the UI thread never does.
    pub fn sigma_source(&self, session: usize) -> RawSigma {
        let Some(s) = self.sessions.get(session) else {
            return RawSigma::default();
        };
        let rows = s
            .beliefs
            .iter()
            .filter(|b| b.formula_ok)
            .filter_map(|b| {
                let Body::Announce(a) = &self.event(b.pos)?.body else {
                    return None;
                };
                Some(RawBelief {
                    id: b.id.clone(),
                    formula: a.formula.to_string(),
                    role: a.role,
                    source: a.source.as_deref().unwrap_or_default().to_string(),
                    confidence: a.confidence,
                    announced: b.announced,
                    retracted: b.retracted.map(|(s, _)| s),
                })
            })
            .collect();
        RawSigma {
            session: s.name.to_string(),
            last: s.len(),
            rows,
        }
    }
}

/// One announcement as owned data.
#[derive(Debug, Clone, PartialEq)]
pub struct RawBelief {
    /// The belief id.
    pub id: String,
    /// The formula as written.
    pub formula: String,
    /// The role.
    pub role: crate::trace::event::Role,
    /// The source.
    pub source: String,
    /// The confidence.
    pub confidence: f64,
    /// The step it entered Σ.
    pub announced: u32,
    /// The step it left Σ.
    pub retracted: Option<u32>,
}

/// Σ's history of one session, unparsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawSigma {
    /// The session name.
    pub session: String,
    /// Its last step.
    pub last: u32,
    /// Its announcements.
    pub rows: Vec<RawBelief>,
}

/// Σ's history of one session, parsed and `Send`: what the REPL worker reasons over.
#[derive(Debug, Clone, Default)]
pub struct SigmaSnapshot {
    session: String,
    last: u32,
    beliefs: Vec<(TraceBelief, Option<u32>)>,
}

impl From<RawSigma> for SigmaSnapshot {
    fn from(raw: RawSigma) -> Self {
        use crate::logic::engine::Role as R;
        use crate::trace::event::Role as T;
        let beliefs = raw
            .rows
            .into_iter()
            .filter_map(|b| {
                let formula = parse_formula(&b.formula).ok()?;
                let role = match b.role {
                    T::Fact => R::Fact,
                    T::Rule => R::Rule,
                    T::Norm => R::Norm,
                    T::Assumption => R::Assumption,
                };
                Some((
                    TraceBelief {
                        id: b.id,
                        formula,
                        role,
                        source: b.source,
                        confidence: b.confidence,
                        step: u64::from(b.announced),
                    },
                    b.retracted,
                ))
            })
            .collect();
        SigmaSnapshot {
            session: raw.session,
            last: raw.last,
            beliefs,
        }
    }
}

impl TraceSigma for SigmaSnapshot {
    fn session(&self) -> &str {
        &self.session
    }
    fn last_step(&self) -> u64 {
        u64::from(self.last)
    }
    fn sigma_at(&self, step: u64) -> Vec<TraceBelief> {
        self.beliefs
            .iter()
            .filter(|(b, r)| b.step <= step && r.is_none_or(|r| u64::from(r) > step))
            .map(|(b, _)| b.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = r#"{"kind":"announce","formula":"p","id":"b1"}
{"kind":"announce","formula":"p -> q","id":"b2","role":"rule"}
{"kind":"retract","target":"b1"}
{"kind":"announce","formula":"r &"}
{"kind":"retract","target":"nope"}
{"kind":"verify","formula":"q","outcome":"contradiction"}
"#;

    #[test]
    fn sigma_intervals_follow_announce_and_retract() {
        let s = Store::from_bytes("t.jsonl", T.as_bytes());
        let d = &s.sessions[0];
        assert_eq!(d.len(), 6);
        assert_eq!(d.sigma_at(0, false), Vec::<u32>::new());
        assert_eq!(d.sigma_at(2, false), vec![0, 1]);
        assert_eq!(d.sigma_at(3, false), vec![1]);
        assert_eq!(d.sigma_at(3, true), vec![0, 1]);
        assert_eq!(d.beliefs[0].retracted, Some((3, 2)));
        assert!(!d.beliefs[2].formula_ok);
        let flags: Vec<_> = d.flags.iter().map(|&(i, f)| (i, f)).collect();
        assert_eq!(
            flags,
            vec![
                (3, Flag::FormulaError),
                (4, Flag::UnknownTarget),
                (5, Flag::Contradiction)
            ]
        );
    }

    #[test]
    fn retract_by_formula_finds_the_belief() {
        let t = "{\"kind\":\"announce\",\"formula\":\"a & b\",\"id\":\"x\"}\n{\"kind\":\"retract\",\"target\":\"b ∧ a\"}\n{\"kind\":\"retract\",\"target\":\"a ∧ b\"}\n";
        let s = Store::from_bytes("t", t.as_bytes());
        let d = &s.sessions[0];
        // "b ∧ a" is a different formula; "a ∧ b" is the normalized one.
        assert_eq!(d.flags.first().map(|f| f.0), Some(1));
        assert_eq!(d.beliefs[0].retracted.map(|r| r.0), Some(3));
    }

    #[test]
    fn repl_snapshot_matches_sigma() {
        let s = Store::from_bytes("t.jsonl", T.as_bytes());
        let snap = SigmaSnapshot::from(s.sigma_source(0));
        let ids: Vec<_> = snap.sigma_at(2).into_iter().map(|b| b.id).collect();
        assert_eq!(ids, vec!["b1", "b2"]);
        let ids: Vec<_> = snap.sigma_at(6).into_iter().map(|b| b.id).collect();
        assert_eq!(ids, vec!["b2"]);
        assert_eq!(snap.last_step(), 6);
    }
}
