//! Where the TUI's events come from while it runs: followed files and live sessions.
//!
//! [`Sources`] turns what the followers ([`crate::trace::follow`]) and the live hub
//! ([`crate::trace::live`]) send into [`Store`] updates and into the short texts the header
//! and status line show. It neither blocks nor draws, so tests feed it the same messages the
//! event loop does and check the store and the texts.
//!
//! Segments: after a followed file reports [`FollowStatus::Truncated`] or
//! [`FollowStatus::Replaced`], what follows is the file read again from its start, which
//! would repeat (or contradict) what is shown. Those events go to a new timeline (a new
//! [`SessionSource::Segment`], named "… · re-read N"); the earlier one stays as it was, so nothing
//! shown is lost or doubled. After [`FollowStatus::Rotated`] and [`FollowStatus::Deleted`]
//! the next file is the continuation of the log (logrotate, an agent restarting its file),
//! so its events extend the same timeline.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::sanitize::sanitize;
use crate::trace::follow::{FollowItem, FollowStatus};
use crate::trace::live::{LiveEvent, SessionId};

use super::data::{SessionSource, Store};

/// One followed file.
#[derive(Debug, Clone)]
pub struct FileSource {
    /// The path as given (shown sanitized).
    pub path: PathBuf,
    /// How many times it was re-read from its start.
    pub segment: u32,
    /// The follower's last status.
    pub status: Option<FollowStatus>,
    /// How many times the file was rotated, replaced or deleted under the follower: kept
    /// in the header after the follower is back to plain following, so a rotation seen only
    /// for a moment is not forgotten.
    pub rotations: u32,
    /// Why file notifications are unavailable for it, when they are (it is then followed by
    /// the periodic poll alone, which the header says).
    pub polling: Option<String>,
    /// The symbolic link's resolved target (sanitized) and whether it leaves the directory
    /// the user named.
    pub symlink: Option<(String, bool)>,
    /// Bytes at the start of a large file that were not loaded (reading began near its end).
    pub skipped: Option<u64>,
}

/// A file of another format, imported before the view started (read once, not followed).
#[derive(Debug, Clone)]
pub struct ImportedFile {
    /// The file name (raw; sanitized when shown).
    pub name: String,
    /// The format its importer read.
    pub format: crate::trace::import::Format,
    /// How many notes the importer left.
    pub notes: usize,
}

/// One live session as the UI knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveSource {
    /// Display name (sanitized).
    pub name: String,
    /// Whether the connection is still open.
    pub open: bool,
    /// The spool file holding its whole raw stream (sanitized for display).
    pub spool: Option<String>,
    /// The same file's path, to read it again once its events were given back; `None`
    /// also when the file could not be written whole (the viewer then keeps the events).
    pub spool_path: Option<PathBuf>,
    /// Once past the memory bound: how many of its events the viewer holds (the rest is in
    /// the spool file only).
    pub held: Option<u64>,
    /// Lines kept only in the spool file, known once it ended.
    pub spooled_only: u64,
    /// Why it ended, once it has.
    pub closed: Option<String>,
}

/// The TUI's running sources.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// Followed files, by the index the event loop gives them.
    pub files: Vec<FileSource>,
    /// Files imported from other formats.
    pub imported: Vec<ImportedFile>,
    /// Live sessions by their hub id.
    pub live: HashMap<SessionId, LiveSource>,
    /// The address `--listen` is bound to, when listening.
    pub listening: Option<String>,
    /// Connections refused so far.
    pub rejected: u64,
    /// Ended live sessions still in the session list, oldest first.
    pub ended: std::collections::VecDeque<SessionId>,
    /// Ended live sessions taken out of the list (their events are in their spool files).
    pub aged_out: u64,
    /// Spool files of ended sessions the hub deleted to keep the spool directory within
    /// its bounds (their events are gone).
    pub spool_removed: u64,
    /// The store index of the session on screen, which is never taken out of the list
    /// (the event loop keeps it current).
    pub shown: usize,
}

/// Ended live sessions kept in the session list; older ones are taken out of it (their
/// events stay in their spool files, which the header names).
pub const MAX_ENDED_LIVE: usize = 32;

impl Sources {
    /// Registers a followed file; returns its index for [`Sources::on_follow`].
    pub fn add_file(&mut self, path: PathBuf) -> usize {
        self.files.push(FileSource {
            path,
            segment: 0,
            status: None,
            rotations: 0,
            polling: None,
            symlink: None,
            skipped: None,
        });
        self.files.len() - 1
    }

    /// Applies one follower output for file `file`; returns a status-line message, if any.
    pub fn on_follow(
        &mut self,
        store: &mut Store,
        file: usize,
        item: FollowItem,
    ) -> Option<String> {
        let f = self.files.get_mut(file)?;
        match item {
            FollowItem::Items(items) => {
                let origin = SessionSource::Segment {
                    file: u32::try_from(file).unwrap_or(u32::MAX),
                    segment: f.segment,
                };
                store.extend_from(&origin, items);
                // Lines after a stall mean the pending line was completed (or flushed).
                if matches!(f.status, Some(FollowStatus::Pending { .. })) {
                    f.status = Some(FollowStatus::Following);
                }
                None
            }
            // Facts about the file rather than states: kept beside the state for the header.
            FollowItem::Status(s @ FollowStatus::PollingOnly(_)) => {
                if let FollowStatus::PollingOnly(why) = &s {
                    f.polling = Some(sanitize(why));
                }
                Some(format!("{}: {s}", sanitize(&f.path.to_string_lossy())))
            }
            FollowItem::Status(s @ FollowStatus::Symlink { .. }) => {
                if let FollowStatus::Symlink { target, outside } = &s {
                    f.symlink = Some((sanitize(&target.to_string_lossy()), *outside));
                }
                Some(sanitize(&format!("{}: {s}", f.path.to_string_lossy())))
            }
            FollowItem::Status(s @ FollowStatus::Tail { .. }) => {
                if let FollowStatus::Tail { skipped } = s {
                    f.skipped = Some(skipped);
                }
                Some(sanitize(&format!("{}: {s}", f.path.to_string_lossy())))
            }
            FollowItem::Status(s) => {
                if !matches!(s, FollowStatus::Following | FollowStatus::Pending { .. }) {
                    // A new file at the path: the old one's link and tail facts are void.
                    f.symlink = None;
                    f.skipped = None;
                }
                if matches!(
                    s,
                    FollowStatus::Truncated | FollowStatus::Replaced | FollowStatus::ReadWhole
                ) {
                    f.segment += 1;
                }
                if matches!(
                    s,
                    FollowStatus::Rotated | FollowStatus::Replaced | FollowStatus::Deleted
                ) {
                    f.rotations = f.rotations.saturating_add(1);
                }
                // Back to plain following right after a rotation: leave the status line on
                // what happened (the header says "following" anyway).
                let quiet = s == FollowStatus::Following
                    && matches!(
                        f.status,
                        Some(
                            FollowStatus::Rotated
                                | FollowStatus::Replaced
                                | FollowStatus::Truncated
                                | FollowStatus::Deleted
                        )
                    );
                let msg = format!("{}: {s}", sanitize(&f.path.to_string_lossy()));
                f.status = Some(s);
                (!quiet).then_some(msg)
            }
        }
    }

    /// Applies one live-hub output; returns a status-line message, if any.
    pub fn on_live(&mut self, store: &mut Store, ev: LiveEvent) -> Option<String> {
        match ev {
            LiveEvent::Opened {
                session,
                name,
                spool,
                ..
            } => {
                store.name_live(session, &name);
                let name = sanitize(&name);
                let msg = format!("live session {name} connected");
                self.live.insert(
                    session,
                    LiveSource {
                        name,
                        open: true,
                        spool: spool.as_ref().map(|p| sanitize(&p.to_string_lossy())),
                        spool_path: spool,
                        ..LiveSource::default()
                    },
                );
                Some(msg)
            }
            LiveEvent::Named { session, name } => {
                store.name_live(session, &name);
                self.live.entry(session).or_default().name = sanitize(&name);
                None
            }
            LiveEvent::Items { session, items, .. } => {
                store.extend_from(&SessionSource::Live(session), items);
                None
            }
            LiveEvent::Spilling { session, held } => {
                let s = self.live.entry(session).or_default();
                s.held = Some(held);
                Some(format!(
                    "live session {}: memory limit reached after {held} events; the rest is \
                     kept in {}",
                    s.name,
                    s.spool.as_deref().unwrap_or("?")
                ))
            }
            LiveEvent::Closed {
                session,
                reason,
                spooled_only,
            } => {
                let s = self.live.entry(session).or_default();
                s.open = false;
                s.spooled_only = spooled_only;
                let why = sanitize(&reason.to_string());
                let msg = format!("live session {} {why}", s.name);
                s.closed = Some(why);
                // Its events are in the spool file: memory keeps none of them unless it is
                // on screen (it is read again when shown). A file that could not be written
                // whole is not their only copy.
                if matches!(reason, crate::trace::live::CloseReason::SpoolError(_)) {
                    s.spool_path = None;
                }
                if s.spool_path.is_some()
                    && let Some(idx) = store.live_session(session)
                    && idx != self.shown
                {
                    store.unload(idx);
                }
                self.ended.push_back(session);
                self.age_out(store);
                Some(msg)
            }
            LiveEvent::SpoolRemoved {
                files,
                bytes,
                total,
            } => {
                self.spool_removed = total;
                self.spool_deleted(store, &files);
                Some(format!(
                    "spool: deleted the {} oldest file{} of ended sessions ({}) to stay within \
                     the spool bounds (--spool-files); {total} deleted so far",
                    files.len(),
                    if files.len() == 1 { "" } else { "s" },
                    crate::trace::follow::human_bytes(bytes)
                ))
            }
            LiveEvent::Rejected { reason, .. } => {
                self.rejected += 1;
                Some(format!("live connection refused: {reason}"))
            }
            LiveEvent::ServerError(e) => Some(format!("live listener: {}", sanitize(&e))),
        }
    }

    /// Takes the sessions whose spool files were deleted out of the list: their events are
    /// gone (unless one is on screen, which keeps what it holds).
    fn spool_deleted(&mut self, store: &mut Store, files: &[PathBuf]) {
        let gone: Vec<SessionId> = self
            .live
            .iter()
            .filter(|(_, l)| !l.open && l.spool_path.as_ref().is_some_and(|p| files.contains(p)))
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            match store.live_session(id) {
                Some(idx) if idx == self.shown => {}
                idx => {
                    if let Some(idx) = idx {
                        let name = self.live.get(&id).map_or("", |l| l.name.as_str());
                        store.retire(idx, &format!("{name} (ended; spool file deleted)"));
                    }
                    self.live.remove(&id);
                    self.ended.retain(|e| *e != id);
                    self.aged_out += 1;
                }
            }
        }
    }

    /// Reads the events of session `idx` of `store` again from its spool file when they were
    /// given back ([`Store::unload`]), as a file is read: kept as places in the file.
    /// Returns whether it did (the caller's views and workers of that session start over);
    /// a file that cannot be read leaves the session empty and says why on `status`.
    pub fn reload(&mut self, store: &mut Store, idx: usize, status: &mut String) -> bool {
        let Some(s) = store.sessions.get(idx) else {
            return false;
        };
        let (true, SessionSource::Live(id)) = (s.unloaded, &s.origin) else {
            return false;
        };
        let id = *id;
        let Some(path) = self.live.get(&id).and_then(|l| l.spool_path.clone()) else {
            return false;
        };
        let file = match std::fs::File::open(&path).and_then(|f| Ok((f.try_clone()?, f))) {
            Ok(f) => f,
            Err(e) => {
                *status = sanitize(&format!(
                    "cannot read the spool file {}: {e}",
                    path.to_string_lossy()
                ));
                return false;
            }
        };
        let cfg = crate::trace::ReaderConfig {
            max_line_bytes: crate::trace::live::LiveConfig::default().max_message_bytes,
        };
        // A name of its own, so its events are kept as places in this file.
        let name = format!("{}#{id}", path.to_string_lossy());
        store.log.events.add_source(&name, file.0, cfg);
        if let Some(sd) = store.sessions.get_mut(idx) {
            sd.unloaded = false;
        }
        let mut reader = crate::trace::Reader::new(&name, cfg);
        let mut read = std::io::BufReader::with_capacity(64 * 1024, file.1);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match std::io::Read::read(&mut read, &mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    *status = sanitize(&format!(
                        "the spool file {} was read in part: {e}",
                        path.to_string_lossy()
                    ));
                    break;
                }
            };
            let mut items = Vec::new();
            reader.feed(&buf[..n], &mut items);
            store.extend_from(&SessionSource::Live(id), items);
        }
        let mut items = Vec::new();
        reader.finish(&mut items);
        store.extend_from(&SessionSource::Live(id), items);
        true
    }

    /// Takes the oldest ended live sessions out of the list beyond [`MAX_ENDED_LIVE`]. Only
    /// sessions whose whole stream is in a spool file go; without one they stay (their
    /// events exist nowhere else).
    fn age_out(&mut self, store: &mut Store) {
        let mut keep = std::collections::VecDeque::new();
        while self.ended.len() + keep.len() > MAX_ENDED_LIVE {
            let Some(id) = self.ended.pop_front() else {
                break;
            };
            // Only a session whose spool file holds its whole stream leaves memory.
            let spool = self
                .live
                .get(&id)
                .filter(|l| l.spool_path.is_some())
                .and_then(|l| l.spool.clone());
            match (spool, store.live_session(id)) {
                (Some(file), Some(idx)) if idx != self.shown => {
                    let name = self
                        .live
                        .get(&id)
                        .map_or_else(String::new, |l| l.name.clone());
                    store.retire(idx, &format!("{name} (ended; events in {file})"));
                    self.live.remove(&id);
                    self.aged_out += 1;
                }
                _ => keep.push_back(id),
            }
        }
        keep.extend(self.ended.drain(..));
        self.ended = keep;
    }

    /// Whether session `session` of `store` can still grow: a live session, a segment of a
    /// followed file, or a trace while files are followed. A file read once (`--no-follow`)
    /// or imported from another format never grows, so the view does not claim to follow it.
    pub fn grows(&self, store: &Store, session: usize) -> bool {
        match store.sessions.get(session).map(|s| &s.origin) {
            Some(SessionSource::Live(_) | SessionSource::Segment { .. }) => true,
            _ => !self.files.is_empty() || self.listening.is_some() || !self.live.is_empty(),
        }
    }

    /// The header text for the shown session: its connection state and drops for a live
    /// session, the follow state of a file, and the listener.
    pub fn header(&self, store: &Store, session: usize) -> String {
        let mut out = Vec::new();
        match store.sessions.get(session).map(|s| &s.origin) {
            Some(SessionSource::Live(id)) => {
                if let Some(l) = self.live.get(id) {
                    out.push(match &l.closed {
                        None => "live: connected".to_string(),
                        Some(why) => format!("live: {why}"),
                    });
                    if let Some(held) = l.held {
                        let more = if l.spooled_only > 0 {
                            format!("{} more lines", l.spooled_only)
                        } else {
                            "the rest".to_string()
                        };
                        out.push(format!(
                            "first {held} events shown, {more} in {}",
                            l.spool.as_deref().unwrap_or("?")
                        ));
                    }
                }
            }
            _ => {
                // Which importer read which file: the user must know the trace was
                // converted (and that it is not followed).
                for i in &self.imported {
                    let notes = match i.notes {
                        0 => String::new(),
                        1 => ", 1 note".to_string(),
                        n => format!(", {n} notes"),
                    };
                    out.push(format!(
                        "{}: imported from {}{notes}",
                        sanitize(&i.name),
                        i.format.name()
                    ));
                }
                // Files whose state needs attention (anything but plain following).
                for f in &self.files {
                    let name = sanitize(&f.path.file_name().unwrap_or_default().to_string_lossy());
                    let mut history = Vec::new();
                    if f.rotations > 0 {
                        history.push(format!("rotated {}x", f.rotations));
                    }
                    if f.segment > 0 {
                        history.push(format!("re-read {}x", f.segment));
                    }
                    let mut parts = Vec::new();
                    match &f.status {
                        Some(s) if *s != FollowStatus::Following => parts.push(s.to_string()),
                        _ if !history.is_empty() => {
                            parts.push(format!("following ({})", history.join(", ")));
                        }
                        _ => {}
                    }
                    let mut notes = Vec::new();
                    if let Some((target, outside)) = &f.symlink {
                        notes.push(if *outside {
                            format!("→ {target} (outside its directory!)")
                        } else {
                            format!("→ {target}")
                        });
                    }
                    if let Some(n) = f.skipped {
                        notes.push(format!(
                            "first {} not loaded (:read-all reads it)",
                            crate::trace::follow::human_bytes(n)
                        ));
                    }
                    if f.polling.is_some() {
                        notes.push("polling (no file notifications)".to_string());
                    }
                    if !notes.is_empty() && parts.is_empty() {
                        parts.push("following".to_string());
                    }
                    parts.extend(notes);
                    if !parts.is_empty() {
                        out.push(format!("{name}: {}", parts.join("; ")));
                    }
                }
            }
        }
        if let Some(a) = &self.listening {
            let open = self.live.values().filter(|l| l.open).count();
            let exposed = a
                .parse::<crate::trace::live::ListenAddr>()
                .ok()
                .and_then(|addr| addr.exposure_warning())
                .is_some();
            // A receiver anyone on the network can write into is said where the address is.
            let shown = if exposed {
                format!("{} (reachable from the network!)", sanitize(a))
            } else {
                sanitize(a).to_string()
            };
            let removed = match self.spool_removed {
                0 => String::new(),
                n => format!(", {n} spool files deleted"),
            };
            if self.aged_out > 0 || self.spool_removed > 0 {
                out.push(format!(
                    "listening {shown} ({open} open, {} ended sessions only on disk{removed})",
                    self.aged_out
                ));
            } else {
                out.push(format!("listening {shown} ({open} open)"));
            }
        }
        out.join("  ")
    }
}

/// Records the address `--listen` is bound to for the header and, for an address reachable
/// from the network, says so on the status line and in `:messages`.
pub fn announce_listening(app: &mut super::app::App, addr: &crate::trace::live::ListenAddr) {
    app.sources.listening = Some(addr.to_string());
    if let Some(w) = addr.exposure_warning() {
        app.status = if app.status.is_empty() {
            w
        } else {
            format!("{w}; {}", app.status)
        };
        app.keep_message();
    }
}
