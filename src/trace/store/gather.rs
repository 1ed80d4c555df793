//! One session's lines gathered into a file of their own while it is walked again and again.
//!
//! The audit walks each session about twenty times (the recomputation, then each check), and
//! every walk decodes the session's events from their lines. In a file whose sessions
//! interleave (eight agents writing one trace), a session's lines are spread over the whole
//! file, so each of those walks read the whole file through the store's windows to find its
//! eighth of the lines: the 100,000-event generated trace's audit read 270 times its size,
//! and the copying was a quarter of the audit's time. [`EventStore::gather`] reads the
//! session's lines once, in order, into an unlinked spool file; while the [`Gathering`] it
//! returns lives, the store reads those events' lines from the spool (the windows then hold
//! that session's lines only), and decodes them exactly as from their file: the same bytes,
//! the same place ([`Origin`](crate::trace::Origin)) and line number. The spool is on disk, in
//! the page cache, not in the process's memory; the store keeps 12 bytes per gathered event.
//!
//! Like a window, the spool holds the lines as they were when they were read: a file
//! rewritten meanwhile shows, for the gathered events, the lines read before.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, Weak};

use super::{EventStore, RESIDENT, Wide, with_line};

/// Sessions with fewer events are not worth a spool: their walks are short.
const GATHER_MIN: usize = 4096;

/// The lines of some events, copied in order into a spool file of their own.
#[derive(Debug)]
pub(super) struct Gathered {
    /// The events' positions.
    positions: Positions,
    /// Where each one's line starts in `file`.
    offsets: Wide,
    file: Arc<File>,
    /// The store it was made on, by address: compared only while the gathering lives, when
    /// that store is borrowed and cannot move.
    store: usize,
}

thread_local! {
    /// The gathering made last on this thread. A session's walks run on the thread that
    /// gathered it and find their lines here, without the store's lock: two threads taking
    /// it for every event they decode kept its cache line moving between their cores. Weak:
    /// a gathering ends when its [`Gathering`] is dropped, wherever this points.
    static MINE: RefCell<Weak<Gathered>> = const { RefCell::new(Weak::new()) };
}

/// Ascending event positions, and where each bucket of [`BUCKET`] positions starts among
/// them: a lookup bisects one bucket's few entries, where a bisection of all of them (a
/// million on a long session) missed the cache at most of its steps, for every event decoded.
#[derive(Debug)]
struct Positions {
    sorted: Vec<u32>,
    /// The first position a bucket may hold.
    lo: u32,
    /// Bucket `b` is `sorted[starts[b]..starts[b + 1]]`: positions from `lo + b * BUCKET`.
    starts: Vec<u32>,
}

/// Positions per bucket of [`Positions`]. A session among eight interleaved ones has about
/// a hundred and twenty-eight events in a bucket; the index costs four bytes per bucket, a
/// 256th of a byte per position of the file spanned.
const BUCKET: u32 = 1 << 10;

impl Positions {
    /// The index of `sorted` (ascending).
    fn new(sorted: Vec<u32>) -> Self {
        let lo = sorted.first().copied().unwrap_or(0);
        let buckets = sorted.last().map_or(0, |&hi| (hi - lo) / BUCKET + 1);
        let mut starts = Vec::with_capacity(buckets as usize + 1);
        let mut at = 0;
        for b in 0..buckets {
            let from = lo + b * BUCKET;
            at += sorted[at..].partition_point(|&p| p < from);
            starts.push(at as u32);
        }
        starts.push(sorted.len() as u32);
        Positions { sorted, lo, starts }
    }

    fn len(&self) -> usize {
        self.sorted.len()
    }

    fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// Where `pos` is in the sorted positions, if it is one of them.
    fn index_of(&self, pos: u32) -> Option<usize> {
        let b = (pos.checked_sub(self.lo)? / BUCKET) as usize;
        let (from, to) = (
            *self.starts.get(b)? as usize,
            *self.starts.get(b + 1)? as usize,
        );
        let i = self.sorted.get(from..to)?.binary_search(&pos).ok()?;
        Some(from + i)
    }
}

impl Gathered {
    /// The spool and offset of the line of the event at `pos`, if it is here.
    fn line_of(&self, pos: u32) -> Option<(Arc<File>, u64)> {
        let i = self.positions.index_of(pos)?;
        Some((self.file.clone(), self.offsets.get(i)?))
    }
}

/// Lines gathered by [`EventStore::gather`]: the store reads them from their spool until this
/// is dropped.
#[derive(Debug)]
#[must_use = "the store reads the gathered lines from their spool only while this lives"]
pub struct Gathering<'a> {
    store: &'a EventStore,
    copy: Arc<Gathered>,
}

impl Gathering<'_> {
    /// How many events' lines are in the spool.
    pub fn len(&self) -> usize {
        self.copy.positions.len()
    }

    /// Whether none are (every event at the positions given was resident, or unreadable).
    pub fn is_empty(&self) -> bool {
        self.copy.positions.is_empty()
    }
}

impl Drop for Gathering<'_> {
    fn drop(&mut self) {
        let mut all = self
            .store
            .gathered
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        all.retain(|g| !Arc::ptr_eq(g, &self.copy));
        self.store.gathering.store(all.len(), Ordering::Release);
    }
}

impl EventStore {
    /// Copies the lines of the events at `positions` (a session's, in any order) into a
    /// spool file, which the store reads them from while the returned [`Gathering`] lives
    /// (see the module docs). Resident events, and lines that cannot be read now, are left
    /// where they are. An error: the spool could not be made or written (the store is then
    /// unchanged).
    pub fn gather(&self, positions: &[u32]) -> std::io::Result<Gathering<'_>> {
        let mut sorted;
        let positions = if positions.is_sorted() {
            positions
        } else {
            sorted = positions.to_vec();
            sorted.sort_unstable();
            &sorted[..]
        };
        let file = crate::trace::import::spool_file()?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, &file);
        let mut kept = Vec::with_capacity(positions.len());
        let mut offsets = Wide::default();
        let mut at = 0u64;
        for &pos in positions {
            let src = match self.source_of(pos as usize) {
                Some(s) if s != RESIDENT => s,
                _ => continue,
            };
            let (Some(source), Some(offset)) =
                (self.sources.get(src as usize), self.at.get(pos as usize))
            else {
                continue;
            };
            let copied = with_line(&source.file, offset, source.cfg.max_line_bytes, |line| {
                out.write_all(line)?;
                out.write_all(b"\n")?;
                Ok::<_, std::io::Error>(line.len() as u64 + 1)
            });
            match copied {
                Ok(written) => {
                    let written = written?;
                    kept.push(pos);
                    offsets.push(at);
                    at += written;
                }
                // Read from the file, it says what is wrong with it at each look.
                Err(_) => continue,
            }
        }
        out.flush()?;
        drop(out);
        let copy = Arc::new(Gathered {
            positions: Positions::new(kept),
            offsets,
            file: Arc::new(file),
            store: std::ptr::from_ref(self) as usize,
        });
        let mut all = self
            .gathered
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        all.push(copy.clone());
        self.gathering.store(all.len(), Ordering::Release);
        drop(all);
        MINE.with_borrow_mut(|mine| *mine = Arc::downgrade(&copy));
        Ok(Gathering { store: self, copy })
    }

    /// [`EventStore::gather`] when it pays: the events are many and their lines spread (at
    /// most half of the events between the first and the last are theirs). `None` when it
    /// does not pay, or the spool cannot be written (the walks then read the file).
    pub fn gather_sparse(&self, positions: &[u32]) -> Option<Gathering<'_>> {
        let (Some(&lo), Some(&hi)) = (positions.iter().min(), positions.iter().max()) else {
            return None;
        };
        let span = (hi - lo) as usize + 1;
        if positions.len() < GATHER_MIN || positions.len() * 2 > span {
            return None;
        }
        self.gather(positions).ok()
    }

    /// The spool and offset of the line of the event at `pos`, if it is gathered.
    pub(super) fn gathered_line(&self, pos: usize) -> Option<(Arc<File>, u64)> {
        if self.gathering.load(Ordering::Acquire) == 0 {
            return None;
        }
        let pos = u32::try_from(pos).ok()?;
        // A gathering that can be upgraded is alive, so its store is where it was made.
        let mine = MINE.with_borrow(Weak::upgrade);
        if let Some(g) = mine.filter(|g| g.store == std::ptr::from_ref(self) as usize)
            && let Some(line) = g.line_of(pos)
        {
            return Some(line);
        }
        let all = self.gathered.read().unwrap_or_else(PoisonError::into_inner);
        all.iter().find_map(|g| g.line_of(pos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A lookup through the buckets finds what a bisection of all the positions finds,
        /// for positions spread over many buckets (a gap of up to three buckets between
        /// two), and for every position in and around their span.
        #[test]
        fn bucket_lookup_agrees_with_a_bisection(
            start in 0u32..5000,
            gaps in proptest::collection::vec(1u32..3 * BUCKET, 0..300),
        ) {
            let mut sorted = vec![start];
            for g in gaps {
                let last = *sorted.last().unwrap_or(&start);
                sorted.push(last + g);
            }
            let index = Positions::new(sorted.clone());
            let hi = *sorted.last().unwrap_or(&0);
            let near = sorted.iter().flat_map(|&p| [p.saturating_sub(1), p, p + 1]);
            for pos in near.chain([0, start.saturating_sub(BUCKET), hi + BUCKET, u32::MAX]) {
                prop_assert_eq!(index.index_of(pos), sorted.binary_search(&pos).ok(), "{}", pos);
            }
        }
    }

    #[test]
    fn no_positions_find_nothing() {
        let index = Positions::new(Vec::new());
        assert_eq!((index.len(), index.index_of(0)), (0, None));
    }
}
