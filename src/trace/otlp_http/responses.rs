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

/// Response ids per generation of [`ResponseTraces`]: the last this many are always known.
const GENERATION: usize = 8_192;
/// Untraced scores held for a response id not seen yet; past it they are not held.
const MAX_HELD: usize = 1024;
/// How long an untraced score waits for its model call.
pub(super) const HOLD: Duration = Duration::from_secs(30);

/// What [`State`] keeps for this.
#[derive(Default)]
pub(super) struct Responses {
    trace_of: ResponseTraces,
    held: Vec<(Instant, SocketAddr, LogRec)>,
}

/// The trace of each response id seen, in two generations: when the newer is full, the
/// older is dropped and the newer takes its place, so the last [`GENERATION`] ids are always
/// known and at most twice that are kept. A single map emptied when full forgot every id at
/// once, and a score arriving just after that found no trace for a call seen just before.
struct ResponseTraces {
    newer: HashMap<String, u128>,
    older: HashMap<String, u128>,
    /// Ids per generation ([`GENERATION`]; smaller in tests).
    size: usize,
}

impl Default for ResponseTraces {
    fn default() -> Self {
        ResponseTraces::with_generation(GENERATION)
    }
}

impl ResponseTraces {
    fn with_generation(size: usize) -> ResponseTraces {
        ResponseTraces {
            newer: HashMap::new(),
            older: HashMap::new(),
            size: size.max(1),
        }
    }

    fn insert(&mut self, id: &str, key: u128) {
        if let Some(k) = self.newer.get_mut(id) {
            *k = key;
            return;
        }
        if self.newer.len() >= self.size {
            self.older = std::mem::take(&mut self.newer);
        }
        self.newer.insert(id.to_string(), key);
    }

    fn get(&self, id: &str) -> Option<u128> {
        self.newer.get(id).or_else(|| self.older.get(id)).copied()
    }

    fn contains(&self, id: &str) -> bool {
        self.get(id).is_some()
    }
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
            r.trace_of.insert(id, key);
        }
    }

    /// The trace of the model call an untraced score names, if that call was seen.
    pub(super) fn trace_of_response(&self, r: &LogRec) -> Option<u128> {
        let id = response_of(r)?;
        self.responses().trace_of.get(id)
    }

    /// Takes out of `recs` the untraced scores whose model call was not seen yet, to hold.
    pub(super) fn hold_unrouted(&self, recs: &mut Vec<LogRec>, peer: SocketAddr) {
        let mut r = self.responses();
        let mut i = 0;
        while i < recs.len() {
            let wait = response_of(&recs[i]).is_some_and(|id| !r.trace_of.contains(id));
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
            match response_of(&rec).and_then(|id| r.trace_of.get(id)) {
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

#[cfg(test)]
mod tests {
    use super::ResponseTraces;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        /// Against a map that keeps every id: the last `size` distinct ids are always found
        /// with their latest trace, an older one is never given another id's trace, and no
        /// more than two generations are kept.
        #[test]
        fn the_last_generation_of_responses_is_always_known(
            size in 1usize..8,
            sent in prop::collection::vec((0u8..24, 1u128..6), 0..120),
        ) {
            let mut r = ResponseTraces::with_generation(size);
            let mut all: HashMap<String, u128> = HashMap::new();
            let mut order: Vec<String> = Vec::new();
            for (id, key) in sent {
                let id = format!("resp-{id}");
                r.insert(&id, key);
                all.insert(id.clone(), key);
                order.retain(|o| *o != id);
                order.push(id);
                prop_assert!(r.newer.len() <= size && r.older.len() <= size);
                for recent in order.iter().rev().take(size) {
                    prop_assert_eq!(r.get(recent), Some(all[recent]));
                }
                for (id, key) in &all {
                    prop_assert!(r.get(id).is_none_or(|k| k == *key), "{} has a stale trace", id);
                }
            }
        }
    }
}
