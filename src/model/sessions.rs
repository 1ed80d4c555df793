//! What the session list says about each session (its size, failures, scores, time) and
//! which sessions are parts of one conversation.
//!
//! A [`Tally`] is kept up to date as a session grows: it reads only the events added since
//! it last looked, so a live list costs each event one more decode, once.
//!
//! Sessions are linked as one conversation when their `session` event's `meta` names the
//! same `conversation_id` (the OpenTelemetry importer writes it from
//! `gen_ai.conversation.id` or `session.id`), `session_id` or `thread_id`. Langfuse's
//! `sessionId` and LangSmith's `thread_id` already name the session itself, so their traces
//! of one conversation are one session.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::failure::{What, failure_of};
use super::timeline::{Timeline, load_at};
use crate::trace::event::{Body, Score};
use crate::trace::{Event, TraceLog};

/// The `meta` keys that name a session's conversation, in the order they are looked for.
pub const CONVERSATION_KEYS: [&str; 3] = ["conversation_id", "session_id", "thread_id"];

/// How many of a session's first events are looked at for its `session` event.
const SESSION_EVENT_WITHIN: usize = 8;

/// Per-session figures for the session list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Events read so far.
    pub events: u32,
    /// The agent's steps: plan `step`s, model calls (`llm_call`) and tool calls.
    pub steps: u32,
    /// Scores (`score` events).
    pub scores: u32,
    /// Of those, the ones that say the work failed ([`score_fails`]).
    pub failing_scores: u32,
    /// The first event's time (Unix seconds).
    pub first: Option<f64>,
    /// The latest event time (Unix seconds).
    pub last: Option<f64>,
    /// The latest time an event ends at: its time plus its `duration_ms`.
    end: Option<f64>,
    /// The conversation the session is part of ([`conversation_of_event`]).
    pub conversation: Option<String>,
    /// Failures of calls and runs ([`failure_of`]).
    calls_failed: u32,
    /// What identifies each failed call or run to a log that repeats it.
    call_links: HashSet<String>,
    /// The links of each error log's failure, to leave out those that repeat a call's.
    error_logs: Vec<Vec<String>>,
}

impl Tally {
    /// The tally of a whole session.
    pub fn of(log: &TraceLog, tl: &Timeline) -> Tally {
        let mut t = Tally::default();
        t.update(log, tl);
        t
    }

    /// Reads the events the session gained since the last call (a session only grows).
    pub fn update(&mut self, log: &TraceLog, tl: &Timeline) {
        self.update_within(log, tl, usize::MAX);
    }

    /// [`Tally::update`], reading at most `max` events (a view counts a big file over
    /// several frames); returns how many it read.
    pub fn update_within(&mut self, log: &TraceLog, tl: &Timeline, max: usize) -> usize {
        let from = self.events as usize;
        let mut read = 0;
        for &pos in tl.event_positions().iter().skip(from).take(max) {
            match load_at(log, pos) {
                Some(ev) => self.add(&ev),
                // An event the store cannot read again still counts as one.
                None => self.events += 1,
            }
            read += 1;
        }
        read
    }

    /// The figures as the session list shows them.
    pub fn figures(&self) -> Figures {
        Figures {
            events: self.events,
            steps: self.steps,
            errors: self.errors(),
            scores: self.scores,
            failing_scores: self.failing_scores,
            duration: self.duration(),
            last: self.last,
            conversation: self.conversation.clone(),
        }
    }

    /// Counts one event.
    pub fn add(&mut self, ev: &Event) {
        self.events += 1;
        match (&ev.body, ev.kind_name()) {
            (Body::Unknown(_), "llm_call") if crate::model::usage::is_amendment(ev) => {}
            (Body::Step(_), _) | (Body::Unknown(_), "llm_call" | "tool_call") => self.steps += 1,
            (Body::Score(s), _) => {
                self.scores += 1;
                self.failing_scores += u32::from(score_fails(s));
            }
            _ => {}
        }
        if self.conversation.is_none() && self.events as usize <= SESSION_EVENT_WITHIN {
            self.conversation = conversation_of_event(ev);
        }
        if let Some(t) = ev.ts.as_ref().map(|t| t.unix_seconds) {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            self.last = Some(self.last.map_or(t, |l| l.max(t)));
            let end = t + super::clock::duration_ms(ev).unwrap_or(0.0) / 1000.0;
            self.end = Some(self.end.map_or(end, |e| e.max(end)));
        }
        if let Some(f) = failure_of(ev) {
            if f.what == What::ErrorLog {
                self.error_logs.push(f.links);
            } else {
                self.calls_failed += 1;
                self.call_links.extend(f.links);
            }
        }
    }

    /// Failed tool calls, model calls and agent runs, and error logs that do not repeat one
    /// of them (one failure written twice counts once, as in the audit).
    pub fn errors(&self) -> u32 {
        let logs = self
            .error_logs
            .iter()
            .filter(|links| !links.iter().any(|l| self.call_links.contains(l)))
            .count();
        self.calls_failed + logs as u32
    }

    /// From the first event's time to the latest time an event ends, in seconds.
    pub fn duration(&self) -> Option<f64> {
        Some((self.end? - self.first?).max(0.0))
    }
}

/// A session's figures at one moment ([`Tally::figures`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Events counted.
    pub events: u32,
    /// The agent's steps: plan `step`s, model calls and tool calls.
    pub steps: u32,
    /// Failures ([`Tally::errors`]).
    pub errors: u32,
    /// Scores.
    pub scores: u32,
    /// Scores that say the work failed.
    pub failing_scores: u32,
    /// From the first event's time to the end of the last, in seconds.
    pub duration: Option<f64>,
    /// The latest event time (Unix seconds).
    pub last: Option<f64>,
    /// The conversation the session is part of.
    pub conversation: Option<String>,
}

/// Whether a score says the work failed, by the one rule of [`crate::model::scores::passed`]
/// (a bare number is not read as pass or fail: its scale is the scorer's).
pub fn score_fails(s: &Score) -> bool {
    crate::model::scores::passed(s) == Some(false)
}

/// The conversation a `session` event names in its `meta` ([`CONVERSATION_KEYS`]); `None`
/// for any other event.
pub fn conversation_of_event(ev: &Event) -> Option<String> {
    let Body::Session(s) = &ev.body else {
        return None;
    };
    let meta = s.meta.as_deref()?;
    CONVERSATION_KEYS.iter().find_map(|k| match meta.get(k)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// The conversation a session is part of, from its `session` event (looked for among its
/// first few events, where a session starts).
pub fn conversation_of(log: &TraceLog, tl: &Timeline) -> Option<String> {
    tl.event_positions()
        .iter()
        .take(SESSION_EVENT_WITHIN)
        .find_map(|&p| conversation_of_event(&*load_at(log, p)?))
}

/// Where a session is in its conversation: part `index` (1-based) of `of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// Which part, from 1.
    pub index: usize,
    /// How many parts the conversation has.
    pub of: usize,
}

/// For each session (by its conversation id, in the order the sessions are listed), its
/// place in its conversation; `None` for a session alone in its conversation or in none.
/// The parts of a conversation are in list order (the order the sessions started in).
pub fn parts(ids: &[Option<&str>]) -> Vec<Option<Part>> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for c in ids.iter().flatten() {
        *count.entry(c).or_default() += 1;
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    ids.iter()
        .map(|c| {
            let c = (*c)?;
            let of = count[c];
            let k = seen.entry(c).or_default();
            *k += 1;
            (of > 1).then_some(Part { index: *k, of })
        })
        .collect()
}

/// The session after `i` in its conversation, the first part again after the last; `None`
/// when session `i` is alone in its conversation or in none.
pub fn next_part(ids: &[Option<&str>], i: usize) -> Option<usize> {
    let c = (*ids.get(i)?)?;
    let same = |j: &usize| ids[*j] == Some(c);
    (i + 1..ids.len()).find(same).or_else(|| (0..i).find(same))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;

    fn tally(lines: &[&str]) -> Tally {
        let m = Model::from_bytes("t.jsonl", (lines.join("\n") + "\n").as_bytes());
        Tally::of(m.log(), &m.timelines()[0])
    }

    #[test]
    fn a_failure_written_twice_counts_once_and_a_lone_error_log_counts() {
        let t = tally(&[
            r#"{"kind":"tool_call","tool":"t","status":"error","x_span":"s1"}"#,
            r#"{"kind":"log","level":"error","message":"boom","x_span":"s1"}"#,
            r#"{"kind":"log","level":"error","message":"other"}"#,
            r#"{"kind":"tool_call","tool":"t","status":"ok"}"#,
        ]);
        assert_eq!((t.events, t.steps, t.errors()), (4, 2, 2));
    }

    #[test]
    fn counting_in_pieces_gives_the_figures_of_counting_at_once() {
        let lines = [
            r#"{"kind":"session","meta":{"conversation_id":"c"}}"#,
            r#"{"kind":"tool_call","tool":"t","status":"error","ts":"2026-01-01T00:00:00Z"}"#,
            r#"{"kind":"score","name":"s","value":"I"}"#,
            r#"{"kind":"log","level":"error","message":"m","ts":"2026-01-01T00:00:03Z"}"#,
        ];
        let m = Model::from_bytes("t.jsonl", (lines.join("\n") + "\n").as_bytes());
        let (log, tl) = (m.log(), &m.timelines()[0]);
        let mut t = Tally::default();
        assert_eq!(t.update_within(log, tl, 3), 3);
        assert_eq!(t.figures().events, 3);
        assert_eq!(t.update_within(log, tl, 3), 1);
        assert_eq!(t.update_within(log, tl, 3), 0);
        assert_eq!(t.figures(), Tally::of(log, tl).figures());
        assert_eq!(t.figures().errors, 2);
    }

    #[test]
    fn scores_fail_only_when_their_value_says_so() {
        let t = tally(&[
            r#"{"kind":"score","name":"a","value":false}"#,
            r#"{"kind":"score","name":"b","value":"I"}"#,
            r#"{"kind":"score","name":"c","value":"C"}"#,
            r#"{"kind":"score","name":"d","value":0}"#,
        ]);
        assert_eq!((t.scores, t.failing_scores), (4, 2));
    }

    #[test]
    fn duration_runs_to_the_end_of_the_last_call() {
        let t = tally(&[
            r#"{"kind":"thought","text":"x","ts":"2026-01-01T00:00:00Z"}"#,
            r#"{"kind":"tool_call","tool":"t","ts":"2026-01-01T00:00:10Z","duration_ms":2500}"#,
        ]);
        assert_eq!(t.duration(), Some(12.5));
        assert_eq!(t.last.zip(t.first).map(|(l, f)| l - f), Some(10.0));
    }

    #[test]
    fn the_session_event_names_the_conversation() {
        let t = tally(&[
            r#"{"kind":"session","meta":{"conversation_id":"c-1"}}"#,
            r#"{"kind":"thought","text":"x"}"#,
        ]);
        assert_eq!(t.conversation.as_deref(), Some("c-1"));
        let t = tally(&[r#"{"kind":"session","meta":{"thread_id":"th"}}"#]);
        assert_eq!(t.conversation.as_deref(), Some("th"));
        assert_eq!(tally(&[r#"{"kind":"session"}"#]).conversation, None);
    }

    #[test]
    fn parts_number_each_conversation_in_list_order() {
        let ids = [Some("a"), None, Some("b"), Some("a"), Some("a")];
        let p = parts(&ids);
        let at = |i: usize| p[i].map(|p| (p.index, p.of));
        assert_eq!(at(0), Some((1, 3)));
        assert_eq!(at(1), None);
        assert_eq!(at(2), None, "a conversation of one session is not linked");
        assert_eq!(at(3), Some((2, 3)));
        assert_eq!(at(4), Some((3, 3)));
        assert_eq!(next_part(&ids, 0), Some(3));
        assert_eq!(next_part(&ids, 4), Some(0));
        assert_eq!(next_part(&ids, 1), None);
        assert_eq!(next_part(&ids, 2), None);
    }
}
