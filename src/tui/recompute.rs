//! The verification pane's "recomputed" column: the model's solver recomputation of every
//! `verify` claim ([`crate::model::Model::recompute`]), run on its own thread.
//!
//! The UI hands over a copy of one session's events (the model owns its log) and goes on
//! drawing; the pane shows "…" until the verdicts arrive. A newer request supersedes an
//! older one: answers carry the data version and session they were computed for, and the
//! app keeps only the one matching what it shows.

use std::collections::HashMap;

use tokio::sync::mpsc::Sender;

use crate::model::{Model, RecomputeOptions};
use crate::trace::{Event, Item, TraceLog};

/// A recomputed gate verdict for one `verify` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The recomputed outcome (`contradiction`, `entailed`, `newinfo`, `ungrounded`), or why
    /// there is none (`unknown (timeout)`, ...).
    pub outcome: String,
    /// Whether the agent's claim agrees; `None` when either side is missing.
    pub agrees: Option<bool>,
}

/// Verdicts for one session at one data version, by event position in the UI's log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdicts {
    /// The store version the events were copied at.
    pub version: u64,
    /// The session index.
    pub session: usize,
    /// Verdicts by log position.
    pub by_pos: HashMap<u32, Verdict>,
}

impl Verdicts {
    /// How many claims disagree with the recomputation.
    pub fn mismatches(&self) -> usize {
        self.by_pos
            .values()
            .filter(|v| v.agrees == Some(false))
            .count()
    }
}

/// Recomputes the verdicts of `events` (one session, in order; `positions[i]` is the UI log
/// position of `events[i]`).
pub fn verdicts(events: Vec<Event>, positions: &[u32], version: u64, session: usize) -> Verdicts {
    let name = events
        .first()
        .map(|e| e.session.to_string())
        .unwrap_or_default();
    let mut log = TraceLog::new();
    log.extend(events.into_iter().map(Item::Event));
    let model = Model::from_log(log);
    let mut by_pos = HashMap::new();
    if let Some(r) = model.recompute(&name, &RecomputeOptions::default()) {
        for v in &r.verifies {
            let Some(&pos) = positions.get(v.event as usize) else {
                continue;
            };
            let outcome = match &v.result {
                Ok(g) => g.outcome.as_str().to_string(),
                Err(u) => u.to_string(),
            };
            by_pos.insert(
                pos,
                Verdict {
                    outcome,
                    agrees: v.agrees(),
                },
            );
        }
    }
    Verdicts {
        version,
        session,
        by_pos,
    }
}

/// Starts a recomputation on its own thread; the verdicts go to `tx`.
pub fn spawn(
    events: Vec<Event>,
    positions: Vec<u32>,
    version: u64,
    session: usize,
    tx: Sender<Verdicts>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("doxascope-recompute".into())
        .spawn(move || {
            let v = verdicts(events, &positions, version, session);
            let _ = tx.blocking_send(v);
        })
        .map(|_| ())
}
