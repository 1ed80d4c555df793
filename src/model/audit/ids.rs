//! Each id's belief records, for the checks that ask "which record of this id was in Σ at
//! step t": one index per session, built on first use.
//!
//! The timeline keeps its records in announcement order only; finding an id's records there
//! scans them all ([`crate::model::timeline::Timeline::records_of`]), and a check asking
//! it for every event grew with the session squared (issue 31: the 10M audit against the
//! 1M). Here an id's records are a slice found by bisection, and the record active at a step
//! is found by bisection in that slice whenever the id's records cannot overlap (the usual
//! case: an id is re-announced only after, or by, ending its previous record).

use hashbrown::HashMap;
use std::borrow::Cow;
use std::ops::Range;

use crate::model::timeline::BeliefRecord;
use crate::trace::event::Text;

/// The records of a session grouped by id (see the module's doc).
pub(crate) struct ById<'a> {
    beliefs: &'a [BeliefRecord],
    /// Record indices sorted by id, each id's records in announcement order.
    order: Vec<u32>,
    /// The step each record of `order` was announced at, beside it: a bisection of a group
    /// reads these rather than the records (60 bytes each, a cache miss a probe on a long
    /// session; the checks' lookups grew 20x from 1M to 10M events, issue 31).
    announced: Vec<u32>,
    /// The step each record of `order` left Σ at (`u64::MAX`: it did not).
    until: Vec<u64>,
    /// Where each id's records start in `order`, ids in ascending order: the checks that
    /// read every id's records walk these, where a map of their own keyed by a copy of each
    /// id cost a sort's worth of string comparisons and cache misses (issue 31).
    starts: Vec<u32>,
    /// Each id's records in `order`. A hash lookup: a bisection of `order` reads a record
    /// at every step, a cache miss each on a long session, and cost more than the scans
    /// it replaced. Keyed by a copy of the id (inline up to 24 bytes), not a reference to
    /// the record's: comparing the key then reads the table's own slot, where following
    /// the reference missed the cache once more on every lookup of a long session.
    groups: HashMap<Text, Group>,
}

/// Where an id's records are in [`ById::order`].
#[derive(Clone, Copy)]
struct Group {
    start: u32,
    len: u32,
    /// Its records may be active together, or are not in step order: asked by a scan of
    /// them, as the timeline would.
    overlapping: bool,
}

impl<'a> ById<'a> {
    /// The index of `beliefs`.
    pub(crate) fn new(beliefs: &'a [BeliefRecord]) -> ById<'a> {
        let mut order: Vec<u32> = (0..beliefs.len() as u32).collect();
        // Stable: each id's records stay in index (announcement) order.
        order.sort_by(|&a, &b| beliefs[a as usize].id.cmp(&beliefs[b as usize].id));
        let mut groups = HashMap::new();
        let mut starts = Vec::new();
        let mut start = 0;
        while start < order.len() {
            starts.push(start as u32);
            let id = beliefs[order[start] as usize].id.as_str();
            let len = order[start..].partition_point(|&i| beliefs[i as usize].id == id);
            let group = &order[start..start + len];
            // Disjoint and in step order: each record ends no later than the next begins.
            let disjoint = group.windows(2).all(|w| {
                let (a, b) = (&beliefs[w[0] as usize], &beliefs[w[1] as usize]);
                a.announced <= b.announced && a.retraction.is_some_and(|x| x.step <= b.announced)
            });
            groups.insert(
                Text::from(id),
                Group {
                    start: start as u32,
                    len: len as u32,
                    overlapping: !disjoint,
                },
            );
            start += len;
        }
        let announced = order
            .iter()
            .map(|&i| beliefs[i as usize].announced)
            .collect();
        let until = order
            .iter()
            .map(|&i| {
                beliefs[i as usize]
                    .retraction
                    .map_or(u64::MAX, |r| r.step.into())
            })
            .collect();
        ById {
            beliefs,
            order,
            announced,
            until,
            starts,
            groups,
        }
    }

    /// Every id with its records in announcement order, ids in ascending order.
    pub(crate) fn groups(&self) -> impl Iterator<Item = (&'a str, &[u32])> + '_ {
        let ends = self.starts.iter().skip(1).map(|&e| e as usize);
        let ends = ends.chain(std::iter::once(self.order.len()));
        self.starts.iter().zip(ends).map(|(&start, end)| {
            let group = &self.order[start as usize..end];
            (self.beliefs[group[0] as usize].id.as_str(), group)
        })
    }

    /// The first record of `id` (in announcement order) active at step `t`, as
    /// [`Timeline::active_record`](crate::model::timeline::Timeline::active_record).
    pub(crate) fn active(&self, id: &str, t: u32) -> Option<u32> {
        self.all_active(id, t).first().copied()
    }

    /// Every record of `id` active at step `t`, in announcement order.
    pub(crate) fn all_active(&self, id: &str, t: u32) -> Cow<'_, [u32]> {
        match self.announced_or_kept(id, t, |r| r.active_at(t)) {
            Ok(kept) => Cow::Owned(kept),
            // At most one is active at any step: the last one announced by `t`, if any (it
            // was announced by `t`, so it is active unless it left by then).
            Err(by) => match by.end.checked_sub(1) {
                Some(last) if last >= by.start && self.until[last] > u64::from(t) => {
                    Cow::Borrowed(&self.order[last..by.end])
                }
                _ => Cow::Borrowed(&[]),
            },
        }
    }

    /// The records of `id` announced at or before `t`, in announcement order.
    pub(crate) fn announced_by(&self, id: &str, t: u32) -> Cow<'_, [u32]> {
        match self.announced_or_kept(id, t, |r| r.announced <= t) {
            Ok(kept) => Cow::Owned(kept),
            Err(by) => Cow::Borrowed(&self.order[by]),
        }
    }

    /// `id`'s records that `keep` takes when they may overlap (`Ok`, a scan of the group),
    /// else those announced at or before `t` (`Err`, where they are in `order`: a prefix of
    /// the group found by bisection, as records that do not overlap are in step order).
    fn announced_or_kept(
        &self,
        id: &str,
        t: u32,
        keep: impl Fn(&BeliefRecord) -> bool,
    ) -> Result<Vec<u32>, Range<usize>> {
        let Some(g) = self.groups.get(id) else {
            return Err(0..0);
        };
        let group = g.start as usize..(g.start + g.len) as usize;
        if g.overlapping {
            let b = self.beliefs;
            return Ok(self.order[group]
                .iter()
                .copied()
                .filter(|&i| keep(&b[i as usize]))
                .collect());
        }
        let by = self.announced[group.clone()].partition_point(|&a| a <= t);
        Err(group.start..group.start + by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::timeline::{RetractedBy, Retraction};
    use crate::trace::event::Text;

    fn rec(id: &str, announced: u32, until: Option<u32>) -> BeliefRecord {
        BeliefRecord {
            id: Text::from(id),
            event: announced,
            announced,
            retraction: until.map(|step| Retraction {
                step,
                event: step,
                by: RetractedBy::Agent,
            }),
            formula_ok: true,
        }
    }

    /// Against a scan of every record, on random sessions (ids re-announced after, at or
    /// before their previous record ended, and some records announced out of step order).
    #[test]
    fn answers_as_a_scan_of_every_record() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as u32
        };
        for round in 0..200 {
            let mut beliefs = Vec::new();
            let mut step = 1;
            for _ in 0..next(40) {
                step += next(3);
                let id = ["a", "b", "c", "dd"][next(4) as usize];
                let until = match next(4) {
                    0 => None,
                    _ => Some(step + next(6)),
                };
                // A few rounds put records out of step order.
                let announced = if round % 5 == 0 && next(4) == 0 {
                    step.saturating_sub(next(5))
                } else {
                    step
                };
                beliefs.push(rec(id, announced, until));
            }
            let ix = ById::new(&beliefs);
            // Every id once, in ascending order, with its records in index order.
            let mut by_id = std::collections::BTreeMap::<&str, Vec<u32>>::new();
            for (i, r) in beliefs.iter().enumerate() {
                by_id.entry(r.id.as_str()).or_default().push(i as u32);
            }
            let groups: Vec<(&str, Vec<u32>)> =
                ix.groups().map(|(id, g)| (id, g.to_vec())).collect();
            assert_eq!(
                groups,
                by_id.into_iter().collect::<Vec<_>>(),
                "round {round}"
            );
            for id in ["a", "b", "c", "dd", "e"] {
                let scan: Vec<u32> = (0..beliefs.len() as u32)
                    .filter(|&i| beliefs[i as usize].id.as_str() == id)
                    .collect();
                assert_eq!(&*ix.announced_by(id, u32::MAX), scan.as_slice());
                // The last step there is: a record never retracted is still active.
                for t in (0..step + 8).chain([u32::MAX]) {
                    let active = scan
                        .iter()
                        .copied()
                        .find(|&i| beliefs[i as usize].active_at(t));
                    assert_eq!(ix.active(id, t), active, "round {round}, {id} at {t}");
                    let all: Vec<u32> = scan
                        .iter()
                        .copied()
                        .filter(|&i| beliefs[i as usize].active_at(t))
                        .collect();
                    assert_eq!(&*ix.all_active(id, t), all.as_slice());
                    let by: Vec<u32> = scan
                        .iter()
                        .copied()
                        .filter(|&i| beliefs[i as usize].announced <= t)
                        .collect();
                    assert_eq!(
                        &*ix.announced_by(id, t),
                        by.as_slice(),
                        "round {round}, {id} at {t}"
                    );
                }
            }
        }
    }
}
