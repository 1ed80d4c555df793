//! Scores that name only a model response (`gen_ai.evaluation.result` log records with
//! `gen_ai.response.id` and no trace id: an evaluator that ran outside the agent's trace).
//! Such a record joins the trace whose model call had that response id; one that arrives
//! before that call is held here until the call's span comes, and after
//! [`HOLD`] without it joins the session of untraced records, where it is shown unmatched.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::super::import::otlp::logs::LogRec;
use super::super::import::otlp::span::Span;
use super::State;

/// Response ids remembered (their traces); past it the map starts over.
const MAX_RESPONSES: usize = 16_384;
/// Untraced scores held for a response id not seen yet; past it they are not held.
const MAX_HELD: usize = 1024;
/// How long an untraced score waits for its model call.
pub(super) const HOLD: Duration = Duration::from_secs(30);

/// What [`State`] keeps for this.
#[derive(Default)]
pub(super) struct Responses {
    trace_of: HashMap<String, u128>,
    held: Vec<(Instant, SocketAddr, LogRec)>,
}

fn response_of(r: &LogRec) -> Option<&str> {
    (r.event == "gen_ai.evaluation.result" && r.trace.is_none())
        .then(|| r.str_attr("gen_ai.response.id"))
        .flatten()
}

impl State {
    fn responses(&self) -> std::sync::MutexGuard<'_, Responses> {
        self.responses.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers the response ids of trace `key`'s spans.
    pub(super) fn remember_responses(&self, key: u128, group: &[Span<'_>]) {
        if key == 0 {
            return;
        }
        let ids: Vec<&str> = group
            .iter()
            .filter_map(|s| s.str_attr("gen_ai.response.id"))
            .collect();
        if ids.is_empty() {
            return;
        }
        let mut r = self.responses();
        for id in ids {
            if r.trace_of.len() >= MAX_RESPONSES && !r.trace_of.contains_key(id) {
                r.trace_of.clear();
            }
            r.trace_of.insert(id.to_string(), key);
        }
    }

    /// The trace of the model call an untraced score names, if that call was seen.
    pub(super) fn trace_of_response(&self, r: &LogRec) -> Option<u128> {
        let id = response_of(r)?;
        self.responses().trace_of.get(id).copied()
    }

    /// Takes out of `recs` the untraced scores whose model call was not seen yet, to hold.
    pub(super) fn hold_unrouted(&self, recs: &mut Vec<LogRec>, peer: SocketAddr) {
        let mut r = self.responses();
        let mut i = 0;
        while i < recs.len() {
            let wait = response_of(&recs[i]).is_some_and(|id| !r.trace_of.contains_key(id));
            if wait && r.held.len() < MAX_HELD {
                let rec = recs.remove(i);
                r.held.push((Instant::now(), peer, rec));
            } else {
                i += 1;
            }
        }
    }

    /// The held scores whose model call came since, by trace.
    pub(super) fn release_routed(&self) -> Vec<(u128, SocketAddr, Vec<LogRec>)> {
        let mut r = self.responses();
        if r.held.is_empty() {
            return Vec::new();
        }
        let held = std::mem::take(&mut r.held);
        let mut out: Vec<(u128, SocketAddr, Vec<LogRec>)> = Vec::new();
        for (at, peer, rec) in held {
            match response_of(&rec).and_then(|id| r.trace_of.get(id).copied()) {
                Some(key) => match out.iter_mut().find(|(k, _, _)| *k == key) {
                    Some((_, _, g)) => g.push(rec),
                    None => out.push((key, peer, vec![rec])),
                },
                None => r.held.push((at, peer, rec)),
            }
        }
        out
    }

    /// The held scores that waited [`HOLD`] for their model call in vain.
    pub(super) fn expired_unrouted(&self) -> Vec<(SocketAddr, LogRec)> {
        let mut r = self.responses();
        let (old, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut r.held)
            .into_iter()
            .partition(|(at, _, _)| at.elapsed() >= HOLD);
        r.held = keep;
        old.into_iter().map(|(_, p, rec)| (p, rec)).collect()
    }
}
