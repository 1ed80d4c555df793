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

use std::fs::File;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use super::{EventStore, RESIDENT, Wide, with_line};

/// Sessions with fewer events are not worth a spool: their walks are short.
const GATHER_MIN: usize = 4096;

/// The lines of some events, copied in order into a spool file of their own.
#[derive(Debug)]
pub(super) struct Gathered {
    /// The events' positions, ascending.
    positions: Vec<u32>,
    /// Where each one's line starts in `file`.
    offsets: Wide,
    file: Arc<File>,
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
            positions: kept,
            offsets,
            file: Arc::new(file),
        });
        let mut all = self
            .gathered
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        all.push(copy.clone());
        self.gathering.store(all.len(), Ordering::Release);
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
        let all = self.gathered.read().unwrap_or_else(PoisonError::into_inner);
        all.iter().find_map(|g| {
            let i = g.positions.binary_search(&pos).ok()?;
            Some((g.file.clone(), g.offsets.get(i)?))
        })
    }
}
