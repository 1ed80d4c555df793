//! What the walk asks of the session's belief records at every step (the record an
//! announce made, the records an event ended, the ground records a step wrote), answered
//! from flat columns of `u32` found by bisection.
//!
//! The records themselves are 60-byte structs, hundreds of thousands of them in a long
//! session: bisecting them touched a new cache line at every probe, and the map from event
//! to the records it ended cost a hash and a miss at every step. On the 10M trace those
//! lookups were the walk's own hottest lines, 30 times the 1M trace's for 10 times the
//! events (issue 31). The columns are 4 bytes a record, and the walk's positions only grow,
//! so each bisection ends near the last one, in lines still cached.

use std::collections::HashMap;
use std::ops::Range;

use crate::model::timeline::BeliefRecord;

/// The columns of one session's belief records (see the module docs).
pub(super) struct Records {
    /// How the record of an announce event is found.
    made: Made,
    /// Each record's step of entry into Σ (records are made in step order).
    announced: Vec<u32>,
    /// The events that ended a record, sorted (stably: an event's records stay in order),
    /// beside the record each ended.
    ended_events: Vec<u32>,
    ended_records: Vec<u32>,
}

/// The record an announce event made: by bisection over the records' events when the
/// records are in event order (a timeline built from a trace), else by a map.
enum Made {
    InOrder(Vec<u32>),
    Map(HashMap<u32, u32>),
}

impl Records {
    /// The columns of `beliefs`, a timeline's records in the order it made them.
    pub(super) fn new(beliefs: &[BeliefRecord]) -> Records {
        let events: Vec<u32> = beliefs.iter().map(|r| r.event).collect();
        let made = if events.is_sorted() {
            Made::InOrder(events)
        } else {
            // The last record of an event wins, as the walk always took.
            Made::Map(
                events
                    .iter()
                    .enumerate()
                    .map(|(i, &e)| (e, i as u32))
                    .collect(),
            )
        };
        let mut ended: Vec<(u32, u32)> = beliefs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.retraction.map(|x| (x.event, i as u32)))
            .collect();
        ended.sort_by_key(|&(event, _)| event);
        Records {
            made,
            announced: beliefs.iter().map(|r| r.announced).collect(),
            ended_events: ended.iter().map(|&(e, _)| e).collect(),
            ended_records: ended.iter().map(|&(_, r)| r).collect(),
        }
    }

    /// The last record the announce event at `pos` made, if it made one.
    pub(super) fn made_by(&self, pos: u32) -> Option<u32> {
        match &self.made {
            Made::InOrder(events) => match events.partition_point(|&e| e <= pos) {
                0 => None,
                i => (events[i - 1] == pos).then_some(i as u32 - 1),
            },
            Made::Map(map) => map.get(&pos).copied(),
        }
    }

    /// The records the event at `pos` ended (retracted or superseded), in record order.
    pub(super) fn ended_by(&self, pos: u32) -> &[u32] {
        let lo = self.ended_events.partition_point(|&e| e < pos);
        let n = self.ended_events[lo..].partition_point(|&e| e == pos);
        &self.ended_records[lo..lo + n]
    }

    /// Whether the event at `pos` ended any record.
    pub(super) fn ends(&self, pos: u32) -> bool {
        !self.ended_by(pos).is_empty()
    }

    /// The records that entered Σ at `step`.
    pub(super) fn announced_at(&self, step: u32) -> Range<u32> {
        let lo = self.announced.partition_point(|&a| a < step);
        let n = self.announced[lo..].partition_point(|&a| a == step);
        lo as u32..(lo + n) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::timeline::{RetractedBy, Retraction};

    /// A small deterministic generator (the tests need no crate for it).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u32) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % u64::from(n)) as u32
        }
    }

    /// Records as a timeline makes them: steps that only grow, several records an event at
    /// times, retractions by later events (several records ended by one event at times);
    /// `shuffled` gives events out of order, as a timeline built otherwise may.
    fn records(seed: u64, n: usize, shuffled: bool) -> Vec<BeliefRecord> {
        let mut g = Lcg(seed);
        let mut out = Vec::with_capacity(n);
        let (mut event, mut step) = (0u32, 1u32);
        for i in 0..n {
            if g.below(3) > 0 {
                event += 1 + g.below(3);
                step += 1;
            }
            let retraction = (g.below(2) == 0).then(|| Retraction {
                step: step + 1 + g.below(4),
                event: event + 1 + g.below(6),
                by: RetractedBy::Agent,
            });
            out.push(BeliefRecord {
                id: format!("b{i}").into(),
                event: if shuffled { g.below(60) } else { event },
                announced: step,
                retraction,
                formula_ok: true,
            });
        }
        out
    }

    /// Every answer equals a scan of all the records, in order (the oracle), at every
    /// position and step the walk could ask about and some it never would.
    #[test]
    fn the_columns_answer_as_a_scan_of_the_records() {
        for seed in 0..40 {
            for shuffled in [false, true] {
                let beliefs = records(seed, (seed as usize * 7) % 90, shuffled);
                let cols = Records::new(&beliefs);
                let top = beliefs.iter().map(|r| r.event + 8).max().unwrap_or(8);
                for pos in 0..top {
                    let made = beliefs.iter().rposition(|r| r.event == pos);
                    assert_eq!(cols.made_by(pos), made.map(|i| i as u32), "seed {seed}");
                    let ended: Vec<u32> = (0..beliefs.len() as u32)
                        .filter(|&i| {
                            beliefs[i as usize]
                                .retraction
                                .is_some_and(|x| x.event == pos)
                        })
                        .collect();
                    assert_eq!(cols.ended_by(pos), ended.as_slice(), "seed {seed}");
                    assert_eq!(cols.ends(pos), !ended.is_empty());
                }
                for step in 0..beliefs.len() as u32 + 3 {
                    let at: Vec<u32> = (0..beliefs.len() as u32)
                        .filter(|&i| beliefs[i as usize].announced == step)
                        .collect();
                    assert_eq!(cols.announced_at(step).collect::<Vec<_>>(), at);
                }
            }
        }
    }
}
