//! The view state and how input changes it.
//!
//! [`App`] owns the data read so far ([`Store`]) and everything about how it is shown:
//! session, selected step, follow mode, focus, per-pane selections, filters, the REPL line.
//! Input handlers change this state and return [`Effect`]s; the event loop performs them
//! (runs a command on the REPL worker, audits, suspends, quits). Nothing here blocks or
//! draws, so the whole interaction is testable by feeding key events to an `App`.
//!
//! The timeline cursor is a row: the session's events with its reader problems between them
//! at their place in file order ([`SessionData::row_item`]). The selected step is the row's
//! step, so every pane shows the state at the cursor, on a bad line too.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use super::data::{RowItem, SessionData, SessionSource, Store, enum_name};
use super::highlight;
use super::keys::{self, Action};
pub use super::repl_job::Purpose;
use super::theme::Theme;
use crate::repl::command::complete;
use crate::trace::event::Role;
use crate::trace::{Body, Event};

/// The panes, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    /// Σ: the belief set at the selected step.
    Sigma,
    /// The intention and the plan DAG.
    Plan,
    /// The verification log.
    Verify,
    /// Revisions and retractions.
    Retract,
    /// Every event of the session.
    Timeline,
    /// The selected item in full.
    Detail,
    /// The REPL command line and its scrollback.
    Repl,
}

impl Pane {
    /// Tab order.
    pub const ALL: [Pane; 7] = [
        Pane::Sigma,
        Pane::Plan,
        Pane::Verify,
        Pane::Retract,
        Pane::Timeline,
        Pane::Detail,
        Pane::Repl,
    ];

    /// The title drawn on the pane's border.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Sigma => "Σ beliefs",
            Pane::Plan => "intention & plan",
            Pane::Verify => "verification",
            Pane::Retract => "retractions",
            Pane::Timeline => "timeline",
            Pane::Detail => "detail",
            Pane::Repl => "REPL",
        }
    }

    /// A one-word name, for the hint bar.
    pub fn short(self) -> &'static str {
        match self {
            Pane::Sigma => "Σ",
            Pane::Plan => "plan",
            Pane::Verify => "verify",
            Pane::Retract => "retract",
            Pane::Timeline => "timeline",
            Pane::Detail => "detail",
            Pane::Repl => "REPL",
        }
    }

    fn index(self) -> usize {
        Pane::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }
}

/// What the event loop must do after an input.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Leave the TUI.
    Quit,
    /// Suspend to the shell.
    Suspend,
    /// Run a REPL command line on the worker at the given step.
    Run {
        /// The command line.
        line: String,
        /// The step the REPL must be at.
        step: u64,
        /// Why it was sent.
        purpose: Purpose,
    },
    /// Turn mouse capture on or off.
    Mouse(bool),
    /// Audit the shown session (off the UI thread): findings and the recomputed verdicts.
    Recompute,
}

/// Which line editor is active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Keys are bindings.
    Normal,
    /// Typing a search pattern.
    Search,
    /// Typing a Σ filter.
    Filter,
    /// Typing a REPL command.
    Command,
}

/// A one-line editor (search, filter, REPL), cursor counted in characters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEdit {
    /// The text.
    pub text: String,
    /// Cursor position in characters.
    pub cursor: usize,
}

impl LineEdit {
    fn byte_at(&self, char_idx: usize) -> usize {
        self.text
            .char_indices()
            .nth(char_idx)
            .map_or(self.text.len(), |(b, _)| b)
    }

    /// Applies an editing key; returns false when the key is not an editing key.
    pub fn edit(&mut self, key: &KeyEvent) -> bool {
        let n = self.text.chars().count();
        match key.code {
            KeyCode::Char('a') if key.modifiers.contains(KeyModifiers::CONTROL) => self.cursor = 0,
            KeyCode::Char('e') if key.modifiers.contains(KeyModifiers::CONTROL) => self.cursor = n,
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                let b = self.byte_at(self.cursor);
                self.text.replace_range(..b, "");
                self.cursor = 0;
            }
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                let b = self.byte_at(self.cursor);
                self.text.insert(b, c);
                self.cursor += 1;
            }
            KeyCode::Backspace if self.cursor > 0 => {
                let b = self.byte_at(self.cursor - 1);
                self.text.remove(b);
                self.cursor -= 1;
            }
            KeyCode::Delete if self.cursor < n => {
                let b = self.byte_at(self.cursor);
                self.text.remove(b);
            }
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(n),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = n,
            KeyCode::Backspace | KeyCode::Delete => {}
            _ => return false,
        }
        true
    }

    /// Replaces the text, cursor at the end.
    pub fn set(&mut self, s: &str) {
        self.text = s.to_string();
        self.cursor = s.chars().count();
    }
}

/// The Σ filter: every given part must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SigmaFilter {
    /// `role:R`.
    pub role: Option<String>,
    /// `source:S` (substring).
    pub source: Option<String>,
    /// `status:active` or `status:retracted`; without it retracted beliefs are shown too.
    pub status: Option<String>,
    /// Free text, matched against id and formula (case-insensitive substring).
    pub text: Option<String>,
}

impl SigmaFilter {
    /// Parses `role:rule source:user status:active some text`.
    pub fn parse(s: &str) -> SigmaFilter {
        let mut f = SigmaFilter::default();
        let mut words = Vec::new();
        for w in s.split_whitespace() {
            if let Some(v) = w.strip_prefix("role:") {
                f.role = Some(v.to_lowercase());
            } else if let Some(v) = w.strip_prefix("source:") {
                f.source = Some(v.to_lowercase());
            } else if let Some(v) = w.strip_prefix("status:") {
                f.status = Some(v.to_lowercase());
            } else {
                words.push(w);
            }
        }
        if !words.is_empty() {
            f.text = Some(words.join(" ").to_lowercase());
        }
        f
    }

    /// Whether no part is set.
    pub fn is_empty(&self) -> bool {
        *self == SigmaFilter::default()
    }
}

/// One line of the REPL scrollback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScrollLine {
    /// The text (already sanitized by the REPL; sanitized again when drawn).
    pub text: String,
    /// What kind of line it is.
    pub kind: ScrollKind,
}

/// The kinds of scrollback lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollKind {
    /// The echoed command.
    Input,
    /// A result.
    Output,
    /// An error.
    Error,
}

/// A row of the Σ pane after filtering: index into the session's beliefs.
pub type SigmaRow = u32;

/// The Σ pane's rows after the filter. Unfiltered, Σ at step t (retracted beliefs included)
/// is the prefix of the session's belief records announced by t, since records are in
/// announcement order: it is held as that prefix's length, so a frame over a million beliefs
/// (a follow burst changes the step every frame) builds only the rows it shows. Filtered,
/// the rows are views of the filter's index (see `SigmaIndex`): nothing per frame is as
/// long as Σ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigmaRows {
    /// Beliefs `0..n`.
    Prefix(u32),
    /// These beliefs, in announcement order.
    List(Vec<SigmaRow>),
    /// The first `k` of `matched` (of `0..` when `None`), without those in `minus` (all
    /// among them; both ascending).
    Matched {
        /// The beliefs matching the filter's record part, ascending.
        matched: Option<Rc<Vec<SigmaRow>>>,
        /// How many of them are announced by the step.
        k: u32,
        /// The ones left out (retracted by the step, for `status:active`).
        minus: Rc<Vec<SigmaRow>>,
    },
    /// These beliefs, ascending (the retracted ones, for `status:retracted`).
    Only(Rc<Vec<SigmaRow>>),
}

impl From<Vec<SigmaRow>> for SigmaRows {
    fn from(v: Vec<SigmaRow>) -> Self {
        SigmaRows::List(v)
    }
}

impl SigmaRows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            SigmaRows::Prefix(n) => *n as usize,
            SigmaRows::List(v) => v.len(),
            SigmaRows::Matched { k, minus, .. } => (*k as usize).saturating_sub(minus.len()),
            SigmaRows::Only(v) => v.len(),
        }
    }

    /// For `Matched`: the position in `matched` of row `i`, and how many of `minus` come
    /// before it. Positions of `minus` entries are found by search in `matched`; with `c`
    /// of them before row i, row i is at position i + c, so `c` is the number of entries
    /// whose position minus their rank is at most i (non-decreasing in the rank).
    fn matched_pos(matched: Option<&[SigmaRow]>, minus: &[SigmaRow], i: usize) -> (usize, usize) {
        let pos = |r: SigmaRow| matched.map_or(r as usize, |m| m.partition_point(|&x| x < r));
        let (mut lo, mut hi) = (0, minus.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pos(minus[mid]) - mid <= i {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (i + lo, lo)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`.
    pub fn get(&self, i: usize) -> Option<SigmaRow> {
        match self {
            SigmaRows::Prefix(n) => u32::try_from(i).ok().filter(|&i| i < *n),
            SigmaRows::List(v) => v.get(i).copied(),
            SigmaRows::Matched { matched, minus, .. } => {
                if i >= self.len() {
                    return None;
                }
                let (p, _) = Self::matched_pos(matched.as_deref().map(Vec::as_slice), minus, i);
                match matched {
                    Some(m) => m.get(p).copied(),
                    None => u32::try_from(p).ok(),
                }
            }
            SigmaRows::Only(v) => v.get(i).copied(),
        }
    }

    /// Rows `start..end` (clamped): one search for the first, then a walk.
    pub fn range(&self, start: usize, end: usize) -> Vec<SigmaRow> {
        let end = end.min(self.len());
        let start = start.min(end);
        let SigmaRows::Matched { matched, minus, .. } = self else {
            return (start..end).filter_map(|i| self.get(i)).collect();
        };
        let m = matched.as_deref().map(Vec::as_slice);
        let pos = |r: SigmaRow| m.map_or(r as usize, |m| m.partition_point(|&x| x < r));
        let at = |p: usize| match m {
            Some(m) => m.get(p).copied(),
            None => u32::try_from(p).ok(),
        };
        let (mut p, mut c) = Self::matched_pos(m, minus, start);
        let mut out = Vec::with_capacity(end - start);
        while out.len() < end - start {
            if minus.get(c).is_some_and(|&h| pos(h) == p) {
                c += 1;
            } else {
                match at(p) {
                    Some(r) => out.push(r),
                    None => break,
                }
            }
            p += 1;
        }
        out
    }
}

/// Whether `hay` contains `needle_lower` (already lowercase), ignoring case. ASCII text (the
/// usual case) is compared in place; other text is lowercased first, as `to_lowercase` would.
fn contains_ci(hay: &str, needle_lower: &str) -> bool {
    if needle_lower.is_empty() {
        return true;
    }
    if hay.is_ascii() && needle_lower.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle_lower.as_bytes());
        return h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n));
    }
    hay.to_lowercase().contains(needle_lower)
}

/// Records of Σ checked per look at the clock while a filter scans.
const SCAN_CHUNK: usize = 2048;

/// How long one call may spend scanning records against a new filter outside a frame (a
/// key handler asks for the rows). A frame gets one window of [`FRAME_SCAN`] for all its
/// calls ([`App::set_scan_window`]), and must stay within 10 ms in all. A filter over a
/// million records is then complete after a few dozen frames, the pane saying how far it
/// got meanwhile.
pub const FILTER_BUDGET: std::time::Duration = std::time::Duration::from_millis(1);

/// The scanning window of one frame.
pub const FRAME_SCAN: std::time::Duration = std::time::Duration::from_millis(3);

/// The Σ filter's state for one (session, filter), kept across steps and data versions so
/// that neither moving in time nor new data costs a pass over Σ.
///
/// The filter has a part that depends on the record alone (role, source, text) and a part
/// that depends on the step (status). The first is an incremental scan: `matched` lists the
/// matching records in announcement order, extended as records arrive, and a new filter
/// scans in budgeted pieces ([`FILTER_BUDGET`]) with the pane showing the progress. The
/// second uses the session's list of ended records ([`SessionData::ended`]), in which the
/// records retracted by step t are a prefix: `holes` holds the matching ones at `step`,
/// moved to another step by adding or removing only the records that ended in between.
/// Then at step t, the rows are the matching records announced by t (a prefix of
/// `matched`), without the holes for `status:active`, or the holes alone for
/// `status:retracted`.
#[derive(Debug, Clone)]
struct SigmaIndex {
    session: usize,
    filter: SigmaFilter,
    /// The filter has no part that depends on the record: every record matches, and
    /// `matched` stays empty (it would be `0..n`).
    all: bool,
    /// Records checked against the record part of the filter.
    scanned: u32,
    matched: Rc<Vec<u32>>,
    /// Whether each scanned record matched (one bit each), to test ended records.
    bits: Vec<u64>,
    /// The step `holes` is for, and how many entries of the ended list it took.
    step: u32,
    ended: usize,
    /// Scanned matching records retracted by `step`, ascending.
    holes: Rc<Vec<u32>>,
}

impl SigmaIndex {
    fn new(session: usize, filter: SigmaFilter) -> SigmaIndex {
        let all = filter.role.is_none() && filter.source.is_none() && filter.text.is_none();
        SigmaIndex {
            session,
            filter,
            all,
            scanned: 0,
            matched: Rc::new(Vec::new()),
            bits: Vec::new(),
            step: 0,
            ended: 0,
            holes: Rc::new(Vec::new()),
        }
    }

    fn is_match(&self, r: u32) -> bool {
        self.all
            || (r < self.scanned
                && self
                    .bits
                    .get(r as usize / 64)
                    .is_some_and(|w| w & (1 << (r % 64)) != 0))
    }

    /// Whether every record of the session has been checked.
    fn complete(&self, s: &SessionData) -> bool {
        self.all || self.scanned as usize >= s.tl.beliefs().len()
    }

    /// Checks more records against the record part of the filter, until all are checked or
    /// `budget` is spent. A new match retracted by `self.step` is a hole too; records are
    /// scanned in ascending order, so both lists stay sorted.
    fn scan(&mut self, store: &Store, s: &SessionData, budget: std::time::Duration) {
        if self.all {
            return;
        }
        let start = std::time::Instant::now();
        let beliefs = s.tl.beliefs();
        let f = &self.filter;
        let roles = [Role::Fact, Role::Rule, Role::Norm, Role::Assumption]
            .map(|r| f.role.as_ref().is_none_or(|want| enum_name(&r) == *want));
        let role_ok = |r: Role| match r {
            Role::Fact => roles[0],
            Role::Rule => roles[1],
            Role::Norm => roles[2],
            Role::Assumption => roles[3],
        };
        let matched = Rc::make_mut(&mut self.matched);
        let mut new_holes = Vec::new();
        while (self.scanned as usize) < beliefs.len() {
            let end = (self.scanned as usize + SCAN_CHUNK).min(beliefs.len());
            for (i, b) in beliefs
                .iter()
                .enumerate()
                .take(end)
                .skip(self.scanned as usize)
            {
                let ok = match store.event(b.event).map(|e| &e.body) {
                    Some(Body::Announce(a)) => {
                        role_ok(a.role)
                            && f.source.as_ref().is_none_or(|src| {
                                a.source.as_deref().is_some_and(|s| contains_ci(s, src))
                            })
                            && f.text
                                .as_ref()
                                .is_none_or(|t| contains_ci(&b.id, t) || contains_ci(&a.formula, t))
                    }
                    _ => false,
                };
                if i / 64 >= self.bits.len() {
                    self.bits.push(0);
                }
                if ok {
                    self.bits[i / 64] |= 1 << (i % 64);
                    matched.push(i as u32);
                    if b.retraction.is_some_and(|x| x.step <= self.step) {
                        new_holes.push(i as u32);
                    }
                }
            }
            self.scanned = end as u32;
            if start.elapsed() >= budget {
                break;
            }
        }
        if !new_holes.is_empty() {
            Rc::make_mut(&mut self.holes).extend(new_holes);
        }
    }

    /// Moves `holes` to step `t`: adds the matching records that ended after the old step
    /// and by `t`, or removes those that ended after `t`; either way only the records that
    /// ended in between are looked at (plus one linear merge of the holes).
    fn move_to(&mut self, s: &SessionData, t: u32) {
        let q = s.ended_by(t);
        if q == self.ended {
            self.step = t;
            return;
        }
        let (lo, hi) = (q.min(self.ended), q.max(self.ended));
        let mut delta: Vec<u32> = s.ended[lo..hi]
            .iter()
            .copied()
            .filter(|&r| self.is_match(r))
            .collect();
        delta.sort_unstable();
        let holes = Rc::make_mut(&mut self.holes);
        let old = std::mem::take(holes);
        let mut out = Vec::with_capacity(if q > self.ended {
            old.len() + delta.len()
        } else {
            old.len().saturating_sub(delta.len())
        });
        let (mut a, mut b) = (old.into_iter().peekable(), delta.into_iter().peekable());
        if q > self.ended {
            // Merge: the two lists are disjoint (the delta ended after the old step).
            loop {
                match (a.peek(), b.peek()) {
                    (Some(&x), Some(&y)) if x < y => out.extend(a.next()),
                    (_, Some(_)) => out.extend(b.next()),
                    (Some(_), None) => out.extend(a.next()),
                    (None, None) => break,
                }
            }
        } else {
            // Difference: the delta is a subset of the holes.
            for x in a {
                while b.peek().is_some_and(|&y| y < x) {
                    b.next();
                }
                if b.peek() == Some(&x) {
                    b.next();
                } else {
                    out.push(x);
                }
            }
        }
        *holes = out;
        self.ended = q;
        self.step = t;
    }

    /// The rows at step `t` (after [`Self::move_to`] `t`).
    fn rows(&self, s: &SessionData, t: u32) -> SigmaRows {
        let announced = s.sigma_at_len(t);
        let (matched, k) = if self.all {
            (None, announced)
        } else {
            let k = self.matched.partition_point(|&r| r < announced) as u32;
            (Some(self.matched.clone()), k)
        };
        match self.filter.status.as_deref() {
            Some("retracted") => SigmaRows::Only(self.holes.clone()),
            Some("active") => SigmaRows::Matched {
                matched,
                k,
                minus: self.holes.clone(),
            },
            _ => SigmaRows::Matched {
                matched,
                k,
                minus: Rc::new(Vec::new()),
            },
        }
    }
}

/// The demo's paced event stream as the TUI plays it.
pub type DemoPlayer = crate::demo::player::Player<crate::demo::DemoEvents>;

/// The whole view state.
pub struct App {
    /// The trace read so far.
    pub store: Store,
    /// The palette.
    pub theme: Theme,
    /// Index of the shown session.
    pub session: usize,
    /// The selected timeline row (events and reader problems, see
    /// [`SessionData::row_item`]); the selected step is the row's step.
    pub cursor: u32,
    /// Track the newest step.
    pub follow: bool,
    /// The focused pane.
    pub focus: Pane,
    /// The list pane whose selection the detail pane shows.
    pub detail_from: Pane,
    /// Show only the focused pane.
    pub zoom: bool,
    /// Show the help overlay.
    pub help: bool,
    /// The line editor mode.
    pub mode: Mode,
    /// The editor of the active mode (search, filter).
    pub edit: LineEdit,
    /// The REPL input.
    pub repl_input: LineEdit,
    /// REPL history, oldest first.
    pub history: Vec<String>,
    history_pos: Option<usize>,
    /// REPL scrollback.
    pub scrollback: Vec<ScrollLine>,
    /// Lines scrolled up from the bottom of the scrollback.
    pub scroll_up: usize,
    /// A command is running on the worker.
    pub working: Option<String>,
    /// The last search pattern.
    pub search: Option<String>,
    /// The Σ filter.
    pub filter: SigmaFilter,
    /// Selected row per pane.
    pub selected: [usize; 7],
    /// Belief ids highlighted as a minimal support (`w`).
    pub support: HashSet<String>,
    /// The belief `w` asked about.
    why_target: Option<String>,
    /// The conflict-set overlay (Enter on a revision): title and lines.
    pub popup: Option<(String, Vec<String>)>,
    /// The hand-issued layer's effect on Σ, as the REPL job last reported it (`None`: the
    /// layer is empty). The Σ pane draws it when it is for the shown step.
    pub hand: Option<crate::repl::HandView>,
    /// `Esc` hid the hand-issued layer from the Σ pane (it is kept; a command shows it again).
    pub hand_hidden: bool,
    /// A refresh of the hand view for the shown step was asked for and not answered yet.
    hand_pending: bool,
    /// A one-line status message.
    pub status: String,
    /// The config file's problems (also printed on stderr before the TUI starts), kept for a
    /// view of past messages: the status line shows them only until the next message.
    pub config_warnings: Vec<String>,
    /// The rows matching the last search: (pattern, session, rows scanned, matching rows).
    search_hits: Option<(String, usize, usize, Vec<usize>)>,
    /// Every message the status line has shown, oldest first (at most [`MESSAGES_KEPT`]),
    /// for `:messages`.
    pub messages: VecDeque<String>,
    /// Loading progress: bytes read and total (None when done).
    pub loading: Option<(u64, u64)>,
    /// Followed files and live sessions, with their states.
    pub sources: super::sources::Sources,
    /// Mouse capture is on.
    pub mouse: bool,
    /// The last frame used the compact layout (a small terminal: some panes hidden).
    pub compact: bool,
    /// Redraw needed.
    pub dirty: bool,
    /// Pane rectangles of the last frame (for mouse hits).
    pub areas: Vec<(Pane, Rect)>,
    /// Visible rows per pane in the last frame (for paging).
    pub page: usize,
    /// Highlighting cache.
    pub hl: highlight::Cache,
    /// Density strip cache: (session, events, width, audit version) and the bins.
    pub density: ((usize, u32, u16, u64), Vec<u8>),
    /// Σ rows of the last (version, session, step, filter), and the filter's index.
    sigma_cache: SigmaCache,
    sigma_index: RefCell<Option<SigmaIndex>>,
    /// While a frame draws Σ: until when the filter may scan (one window per frame, shared
    /// by every call in it). Outside frames each call gets [`FILTER_BUDGET`].
    scan_window: std::cell::Cell<Option<std::time::Instant>>,
    /// Sessions seen by the last [`App::on_data`] (to notice new re-read segments).
    known_sessions: usize,
    /// The audit of the shown session ([`crate::model::audit`]): findings and verdicts.
    pub analysis: Option<super::audit_job::Analysis>,
    /// An audit of the shown session is running.
    pub recomputing: bool,
    /// (session, version) of the last audit asked for.
    audit_sent: Option<(usize, u64)>,
    /// An audit is wanted and the session is still being handed over in pieces.
    handover: bool,
    /// Events per piece handed to the auditor ([`HANDOVER_CHUNK`]).
    pub handover_chunk: u32,
    /// What the auditor and the REPL worker have been sent.
    sent_audit: super::data::Sent,
    sent_repl: super::data::Sent,
    /// Commands waiting for the REPL worker to have the whole session (it is handed over in
    /// pieces first): line, step, purpose.
    repl_waiting: VecDeque<(String, u64, Purpose)>,
    /// While the shown session is handed to the REPL worker: events sent and the total (the
    /// REPL pane's "loading…" note).
    pub repl_loading: Option<(u32, u32)>,
    /// The paced demo stream when `doxascope demo` plays in the TUI (see [`App::demo_tick`]).
    pub demo: Option<DemoPlayer>,
}

/// Sessions up to this many events are audited automatically once loaded and as they grow;
/// larger ones on request (`R`), since the solver pass grows with the run.
pub const AUTO_RECOMPUTE_MAX: u32 = 200_000;

/// How many status messages `:messages` keeps.
pub const MESSAGES_KEPT: usize = 500;

/// Events handed to the audit worker per turn of the event loop (a few tens of
/// milliseconds of copying), so handing over a big session never freezes input.
pub const HANDOVER_CHUNK: u32 = 50_000;

type SigmaCache = RefCell<Option<((u64, usize, u32, SigmaFilter), Rc<SigmaRows>)>>;

impl App {
    /// A view over `store` with the given palette, following the newest step.
    pub fn new(store: Store, theme: Theme) -> App {
        let mut app = App {
            store,
            theme,
            session: 0,
            cursor: 0,
            follow: true,
            focus: Pane::Sigma,
            detail_from: Pane::Sigma,
            zoom: false,
            help: false,
            mode: Mode::Normal,
            edit: LineEdit::default(),
            repl_input: LineEdit::default(),
            history: Vec::new(),
            history_pos: None,
            config_warnings: Vec::new(),
            messages: VecDeque::new(),
            search_hits: None,
            scrollback: Vec::new(),
            scroll_up: 0,
            working: None,
            search: None,
            filter: SigmaFilter::default(),
            selected: [0; 7],
            support: HashSet::new(),
            why_target: None,
            popup: None,
            hand: None,
            hand_hidden: false,
            hand_pending: false,
            status: String::new(),
            loading: None,
            sources: super::sources::Sources::default(),
            mouse: false,
            compact: false,
            dirty: true,
            areas: Vec::new(),
            page: 10,
            hl: highlight::Cache::default(),
            density: ((usize::MAX, 0, 0, 0), Vec::new()),
            sigma_cache: RefCell::new(None),
            sigma_index: RefCell::new(None),
            scan_window: std::cell::Cell::new(None),
            known_sessions: 0,
            analysis: None,
            recomputing: false,
            audit_sent: None,
            handover: false,
            handover_chunk: HANDOVER_CHUNK,
            sent_audit: super::data::Sent::default(),
            sent_repl: super::data::Sent::default(),
            repl_waiting: VecDeque::new(),
            repl_loading: None,
            demo: None,
        };
        app.on_data();
        app
    }

    /// The shown session, if any.
    pub fn sess(&self) -> Option<&SessionData> {
        self.store.sessions.get(self.session)
    }

    /// The selected step (0..=N).
    pub fn step(&self) -> u32 {
        self.sess().map_or(0, |s| s.step_of_row(self.cursor))
    }

    /// What the timeline cursor is on.
    pub fn cursor_item(&self) -> Option<RowItem> {
        self.sess()?.row_item(self.cursor)
    }

    /// The event under the timeline cursor (none on a reader problem).
    pub fn cursor_event(&self) -> Option<(u32, &Event)> {
        let s = self.sess()?;
        let Some(RowItem::Event(i)) = s.row_item(self.cursor) else {
            return None;
        };
        let pos = *s.events().get(i as usize)?;
        Some((pos, self.store.event(pos)?))
    }

    /// Moves the cursor to the event of `step` (the first row at step 0).
    pub fn goto_step(&mut self, step: u64) {
        let row = match self.sess() {
            Some(s) if step > 0 => {
                let i = u32::try_from(step - 1)
                    .unwrap_or(u32::MAX)
                    .min(s.len().saturating_sub(1));
                s.row_of_event(i)
            }
            _ => 0,
        };
        self.goto(i64::from(row));
    }

    /// Moves the cursor to row `i` (clamped); leaving the last row pauses follow.
    pub fn goto(&mut self, i: i64) {
        let n = self.sess().map_or(0, |s| s.rows());
        let last = n.saturating_sub(1);
        self.cursor = i.clamp(0, i64::from(last)) as u32;
        self.follow = n > 0 && self.cursor == last && self.follow;
        self.dirty = true;
    }

    /// Called after the store grew: follow mode moves to the newest step.
    pub fn on_data(&mut self) {
        if self.session >= self.store.sessions.len() {
            self.session = 0;
        }
        // A followed file truncated or replaced is re-read into a new timeline; a following
        // view moves on to it, as it would have seen the new lines in a plain `tail -F`.
        let n = self.store.sessions.len();
        if self.follow
            && n > self.known_sessions
            && let Some(i) = (self.known_sessions..n)
                .rev()
                .find(|&i| matches!(self.store.sessions[i].origin, SessionSource::Segment { .. }))
        {
            self.session = i;
        }
        self.known_sessions = n;
        // The audit shown is always the shown session's.
        if self
            .analysis
            .as_ref()
            .is_some_and(|a| a.session != self.session)
        {
            self.analysis = None;
            self.recomputing = false;
            self.handover = false;
        }
        if self.follow {
            let n = self.sess().map_or(0, |s| s.rows());
            self.cursor = n.saturating_sub(1);
        }
        self.dirty = true;
    }

    /// Σ rows at the selected step after the filter (indices into the session's beliefs),
    /// computed once per (data version, session, step, filter). A filter new to the
    /// session scans Σ in pieces of [`FILTER_BUDGET`] per call, returning the rows found
    /// so far until it is done ([`App::sigma_filter_progress`]).
    pub fn sigma_rows(&self) -> Rc<SigmaRows> {
        let key = (
            self.store.version,
            self.session,
            self.step(),
            self.filter.clone(),
        );
        let complete = self.sigma_filter_progress().is_none();
        if let Some((k, rows)) = &*self.sigma_cache.borrow()
            && *k == key
            && complete
        {
            return rows.clone();
        }
        // The cached rows share the index's lists: let them go before the index grows them.
        *self.sigma_cache.borrow_mut() = None;
        let rows = Rc::new(self.compute_sigma_rows());
        *self.sigma_cache.borrow_mut() = Some((key, rows.clone()));
        rows
    }

    /// Opens (`Some(deadline)`) or closes the window in which Σ filter scans may run while
    /// a frame draws: the frame's scanning then ends by the deadline however often the
    /// rows are asked for.
    pub fn set_scan_window(&self, until: Option<std::time::Instant>) {
        self.scan_window.set(until);
    }

    /// While a Σ filter is still scanning the session: records checked and the total.
    pub fn sigma_filter_progress(&self) -> Option<(u32, u32)> {
        let s = self.sess()?;
        if self.filter.is_empty() {
            return None;
        }
        let total = s.tl.beliefs().len() as u32;
        match &*self.sigma_index.borrow() {
            Some(ix) if ix.session == self.session && ix.filter == self.filter => {
                (!ix.complete(s)).then_some((ix.scanned, total))
            }
            _ => (total > 0).then_some((0, total)),
        }
    }

    fn compute_sigma_rows(&self) -> SigmaRows {
        let Some(s) = self.sess() else {
            return SigmaRows::List(Vec::new());
        };
        let t = self.step();
        if self.filter.is_empty() {
            return SigmaRows::Prefix(s.sigma_at_len(t));
        }
        let mut slot = self.sigma_index.borrow_mut();
        let fresh = match &*slot {
            Some(ix) => {
                ix.session != self.session
                    || ix.filter != self.filter
                    || ix.scanned as usize > s.tl.beliefs().len()
                    || ix.ended > s.ended.len()
            }
            None => true,
        };
        if fresh {
            *slot = Some(SigmaIndex::new(self.session, self.filter.clone()));
        }
        let Some(ix) = slot.as_mut() else {
            return SigmaRows::List(Vec::new());
        };
        ix.move_to(s, t);
        let budget = self.scan_window.get().map_or(FILTER_BUDGET, |until| {
            until.saturating_duration_since(std::time::Instant::now())
        });
        ix.scan(&self.store, s, budget);
        ix.rows(s, t)
    }

    /// Rows of a (step, position) list at the selected step.
    pub fn rows_upto<'a>(&self, list: &'a [(u32, u32)]) -> &'a [(u32, u32)] {
        SessionData::upto(list, self.step())
    }

    /// The number of rows in a list pane (for selection clamping).
    pub fn row_count(&self, pane: Pane) -> usize {
        let Some(s) = self.sess() else { return 0 };
        match pane {
            Pane::Sigma => self.sigma_rows().len() + self.hand_shown().map_or(0, |h| h.added.len()),
            Pane::Verify => self.rows_upto(s.tl.verifies()).len(),
            Pane::Retract => s.revisions_upto(self.step()),
            Pane::Timeline => s.rows() as usize,
            Pane::Repl => self.scrollback.len(),
            // Plan and detail scroll by lines; the renderer clamps.
            Pane::Plan | Pane::Detail => 10_000,
        }
    }

    /// The log position of the item selected in the focused pane (what the detail pane shows).
    pub fn selected_event(&self) -> Option<u32> {
        let s = self.sess()?;
        let pane = self.detail_from;
        let sel = self.selected[pane.index()];
        match pane {
            Pane::Sigma => {
                let rows = self.sigma_rows();
                if sel >= rows.len() && self.hand_shown().is_some_and(|h| !h.added.is_empty()) {
                    // A belief of the hand-issued layer: no event of the trace.
                    return None;
                }
                let i = rows.get(sel.min(rows.len().saturating_sub(1)))?;
                Some(s.tl.beliefs()[i as usize].event)
            }
            Pane::Verify => self.latest_first(s.tl.verifies(), sel),
            Pane::Retract => {
                let n = s.revisions_upto(self.step());
                s.revision_newest(self.step(), sel.min(n.saturating_sub(1)))
                    .map(|(_, p)| p)
            }
            _ => self.cursor_event().map(|(p, _)| p),
        }
    }

    /// The `sel`-th row of a list shown newest first.
    fn latest_first(&self, list: &[(u32, u32)], sel: usize) -> Option<u32> {
        let rows = self.rows_upto(list);
        let n = rows.len();
        if n == 0 {
            return None;
        }
        rows.get(n - 1 - sel.min(n - 1)).map(|&(_, p)| p)
    }

    /// The audit's findings for the header (`None` until the shown session is audited).
    pub fn problem_count(&self) -> Option<usize> {
        self.analysis.as_ref().map(|a| a.findings.len())
    }

    /// `[Effect::Recompute]` when the shown session is small enough to audit unasked.
    pub fn auto_recompute(&self) -> Vec<Effect> {
        match self.sess() {
            Some(s) if s.rows() > 0 && s.len() <= AUTO_RECOMPUTE_MAX => vec![Effect::Recompute],
            _ => Vec::new(),
        }
    }

    /// The next piece of what the auditor has not seen of the shown session (a
    /// [`super::data::Delta`] of at most [`App::handover_chunk`] events); `run` asks for an audit
    /// once the last piece is in. While pieces remain, [`App::handover_pending`] says so and
    /// the event loop sends one per turn, after input.
    pub fn recompute_input(&mut self, run: bool) -> Option<super::audit_job::Request> {
        let delta = self
            .store
            .delta(self.session, &mut self.sent_audit, self.handover_chunk)?;
        let run_now = run && !delta.more;
        self.handover = run && delta.more;
        if run {
            self.recomputing = true;
        }
        if run_now {
            self.audit_sent = Some((self.session, self.store.version));
        }
        Some(super::audit_job::Request {
            delta,
            version: self.store.version,
            run: run_now,
        })
    }

    /// Whether an audit was asked for and the session is still being handed over.
    pub fn handover_pending(&self) -> bool {
        self.handover
    }

    /// What the REPL worker has not seen of the shown session yet, all at once (tests; the
    /// event loop hands it over in pieces with [`App::queue_command`] and [`App::repl_next`]).
    pub fn repl_input(&mut self) -> Option<super::data::Delta> {
        self.store
            .delta(self.session, &mut self.sent_repl, u32::MAX)
    }

    /// Queues a command for the REPL worker ([`Effect::Run`]); [`App::repl_next`] sends it
    /// once the worker has all of the shown session.
    pub fn queue_command(&mut self, line: String, step: u64, purpose: Purpose) {
        self.repl_waiting.push_back((line, step, purpose));
    }

    /// Whether commands wait to be sent to the REPL worker.
    pub fn repl_pending(&self) -> bool {
        !self.repl_waiting.is_empty()
    }

    /// The next message for the REPL worker while commands wait: a piece of at most
    /// [`App::handover_chunk`] events of what it has not seen of the shown session, or, once
    /// the rest fits in one piece, the first waiting command with that rest. The event loop
    /// sends one per turn, after input, so handing over a big session never freezes input.
    pub fn repl_next(&mut self) -> Option<super::repl_job::Msg> {
        use super::repl_job::{Msg, Request};
        if self.repl_waiting.is_empty() {
            return None;
        }
        let data = self
            .store
            .delta(self.session, &mut self.sent_repl, self.handover_chunk);
        if let Some(d) = data.as_ref().filter(|d| d.more) {
            let total = self.sess().map_or(0, |s| s.len());
            if self.repl_loading.is_none() {
                self.scrollback.push(ScrollLine {
                    text: format!(
                        "loading… the REPL is given the session's {total} events first; the command runs then"
                    ),
                    kind: ScrollKind::Output,
                });
            }
            let sent = self.sent_repl.events(d.session);
            self.repl_loading = Some((sent, total));
            self.dirty = true;
            return data.map(Msg::Data);
        }
        if self.repl_loading.take().is_some() {
            self.dirty = true;
        }
        let (line, step, purpose) = self.repl_waiting.pop_front()?;
        Some(Msg::Run(Request {
            line,
            step,
            purpose,
            data,
        }))
    }

    /// A message for the REPL worker was not delivered: the next delta starts afresh, and
    /// nothing waits any more.
    pub fn repl_lost(&mut self) {
        self.sent_repl.forget(self.session);
        self.repl_waiting.clear();
        self.repl_loading = None;
        self.working = None;
    }

    /// An audit arrived; kept when it is for the shown session.
    pub fn on_analysis(&mut self, a: super::audit_job::Analysis) {
        // The audit asked for last is done even when the view has moved on meanwhile (a
        // following view moves to a new session), so the next one can be asked for.
        if self.audit_sent == Some((a.session, a.version)) {
            self.recomputing = false;
        }
        if a.session != self.session {
            return;
        }
        self.status = format!(
            "audit: {} finding(s); {} of {} verification claim(s) disagree with the recomputation",
            a.findings.len(),
            a.mismatches(),
            a.by_pos.len()
        );
        self.analysis = Some(a);
        self.dirty = true;
    }

    /// Adds the demo events due at `now` to the store (nothing without a demo or while
    /// paused); returns whether any arrived. The event loop calls it when
    /// [`App::demo_next_due`] is reached.
    pub fn demo_tick(&mut self, now: std::time::Instant) -> bool {
        let evs = match self.demo.as_mut() {
            Some(p) => p.poll(now),
            None => return false,
        };
        self.demo_add(evs)
    }

    /// When the next demo event is due (`None` without a demo, while paused or when done).
    pub fn demo_next_due(&mut self, now: std::time::Instant) -> Option<std::time::Instant> {
        self.demo.as_mut().and_then(|p| p.next_due(now))
    }

    /// Performs a demo action (pause, step, faster, slower) at `now`; other actions and a
    /// view without a demo are ignored.
    pub fn demo_action(&mut self, a: Action, now: std::time::Instant) {
        let Some(p) = self.demo.as_mut() else { return };
        self.dirty = true;
        match a {
            Action::DemoPause => p.toggle_pause(now),
            Action::DemoFaster => p.faster(now),
            Action::DemoSlower => p.slower(now),
            Action::DemoStep => {
                let evs = p.step(now);
                self.demo_add(evs);
            }
            _ => {}
        }
    }

    fn demo_add(&mut self, evs: Vec<crate::trace::Event>) -> bool {
        if evs.is_empty() {
            return false;
        }
        let before = self.store.sessions.len();
        self.store
            .extend(evs.into_iter().map(crate::trace::Item::Event));
        // Each dialogue is a session of its own: a following view moves on to the new one.
        if self.follow && self.store.sessions.len() > before {
            self.session = self.store.sessions.len() - 1;
        }
        self.on_data();
        self.dirty = true;
        true
    }

    /// Handles a terminal key; returns what the loop must do.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind != KeyEventKind::Press && key.kind != KeyEventKind::Repeat {
            return Vec::new();
        }
        self.dirty = true;
        match self.mode {
            Mode::Normal => {}
            Mode::Command => return self.on_command_key(key),
            Mode::Search | Mode::Filter => {
                self.on_prompt_key(key);
                return Vec::new();
            }
        }
        if self.help || self.popup.is_some() {
            // Overlays close on any key; q still quits.
            self.help = false;
            self.popup = None;
            if keys::lookup_in(&key, self.demo.is_some()) != Some(Action::Quit) {
                return Vec::new();
            }
        }
        let mut fx = match keys::lookup_in(&key, self.demo.is_some()) {
            Some(a) => self.apply(a),
            None => Vec::new(),
        };
        self.track_detail();
        fx.extend(self.hand_refresh());
        fx
    }

    /// Keeps the status line's message in the history `:messages` shows (called once per
    /// frame; a message shown for several frames is kept once).
    pub fn keep_message(&mut self) {
        if self.status.is_empty() || self.messages.back() == Some(&self.status) {
            return;
        }
        if self.messages.len() >= MESSAGES_KEPT {
            self.messages.pop_front();
        }
        self.messages.push_back(self.status.clone());
    }

    /// Whether the last frame used the compact layout.
    pub fn last_compact(&self) -> bool {
        self.compact
    }

    /// The hand-issued layer's view when it applies to the shown step and is not hidden.
    pub fn hand_shown(&self) -> Option<&crate::repl::HandView> {
        self.hand
            .as_ref()
            .filter(|h| !self.hand_hidden && h.step == u64::from(self.step()))
    }

    /// When the shown step moved away from the hand view's, asks the REPL job for the layer's
    /// effect on Σ at the new step (the Σ pane shows the trace meanwhile, and says so).
    pub fn hand_refresh(&mut self) -> Vec<Effect> {
        let step = u64::from(self.step());
        match &self.hand {
            Some(h) if !self.hand_hidden && h.step != step && !self.hand_pending => {
                self.hand_pending = true;
                // `policy` changes nothing and builds no belief state: the answer's hand view
                // is what is wanted.
                vec![Effect::Run {
                    line: "policy".into(),
                    step,
                    purpose: Purpose::Hand,
                }]
            }
            _ => Vec::new(),
        }
    }

    /// The detail pane follows the last focused list pane.
    fn track_detail(&mut self) {
        if matches!(
            self.focus,
            Pane::Sigma | Pane::Verify | Pane::Retract | Pane::Timeline
        ) {
            self.detail_from = self.focus;
        }
    }

    /// Performs an action.
    pub fn apply(&mut self, a: Action) -> Vec<Effect> {
        self.dirty = true;
        let n = self.sess().map_or(0, |s| s.rows());
        match a {
            Action::Quit => return vec![Effect::Quit],
            Action::Suspend => return vec![Effect::Suspend],
            Action::NextPane => self.focus = Pane::ALL[(self.focus.index() + 1) % Pane::ALL.len()],
            Action::PrevPane => {
                self.focus = Pane::ALL[(self.focus.index() + Pane::ALL.len() - 1) % Pane::ALL.len()]
            }
            Action::Help => self.help = !self.help,
            Action::Search => {
                self.mode = Mode::Search;
                self.edit = LineEdit::default();
            }
            Action::Filter => {
                self.mode = Mode::Filter;
                self.edit = LineEdit::default();
            }
            Action::SearchNext => self.search_step(true),
            Action::SearchPrev => self.search_step(false),
            Action::NextFlag => self.flag_step(true),
            Action::PrevFlag => self.flag_step(false),
            Action::StepBack => {
                self.follow = false;
                self.goto(i64::from(self.cursor) - 1);
            }
            Action::StepForward => self.goto(i64::from(self.cursor) + 1),
            Action::First => {
                self.follow = false;
                self.goto(0);
            }
            Action::Last => self.goto(i64::from(n)),
            Action::Follow => {
                self.follow = !self.follow;
                if self.follow {
                    self.goto(i64::from(n));
                    self.follow = true;
                }
                self.status = if self.follow { "following" } else { "paused" }.into();
            }
            Action::Command => {
                self.mode = Mode::Command;
                self.focus = Pane::Repl;
            }
            Action::Zoom => self.zoom = !self.zoom,
            Action::Why => return self.why_selected(),
            Action::Enter => return self.open_selected(),
            Action::Up => self.move_sel(-1),
            Action::Down => self.move_sel(1),
            Action::PageUp => self.move_sel(-(self.page.max(1) as i64)),
            Action::PageDown => self.move_sel(self.page.max(1) as i64),
            Action::NextSession => {
                let k = self.store.sessions.len().max(1);
                let listed = self.store.listed();
                if listed < 2 {
                    self.status = "only one session: nothing to switch to".into();
                    return Vec::new();
                }
                self.session = (self.session + 1) % k;
                // Aged-out live sessions are not in the list.
                for _ in 0..k {
                    if !self
                        .store
                        .sessions
                        .get(self.session)
                        .is_some_and(|s| s.retired)
                    {
                        break;
                    }
                    self.session = (self.session + 1) % k;
                }
                let nth = self.store.sessions[..self.session]
                    .iter()
                    .filter(|s| !s.retired)
                    .count()
                    + 1;
                self.status = format!(
                    "session {nth} of {listed}: {}",
                    self.store.sessions[self.session].name
                );
                self.follow = true;
                self.support.clear();
                self.analysis = None;
                self.recomputing = false;
                self.handover = false;
                self.on_data();
                return self.auto_recompute();
            }
            Action::Mouse => {
                self.mouse = !self.mouse;
                self.status = if self.mouse {
                    "mouse on: wheel scrolls, click selects (m releases it to select text)"
                } else {
                    "mouse released: the terminal selects text (m captures it again)"
                }
                .into();
                return vec![Effect::Mouse(self.mouse)];
            }
            Action::Escape => {
                self.support.clear();
                self.status.clear();
                if let Some(h) = &self.hand
                    && !self.hand_hidden
                {
                    self.hand_hidden = true;
                    self.status = format!(
                        "Σ shows the trace; the hand-issued layer ({} command(s)) is kept: \
                         :sigma lists it, :reset drops it",
                        h.commands
                    );
                }
            }
            Action::Recompute => {
                self.status = "auditing the session…".into();
                return vec![Effect::Recompute];
            }
            Action::DemoPause | Action::DemoStep | Action::DemoFaster | Action::DemoSlower => {
                self.demo_action(a, std::time::Instant::now());
            }
        }
        Vec::new()
    }

    fn move_sel(&mut self, d: i64) {
        if self.focus == Pane::Timeline {
            if d < 0 {
                self.follow = false;
            }
            self.goto(i64::from(self.cursor) + d);
            return;
        }
        if self.focus == Pane::Repl {
            let n = self.scrollback.len();
            self.scroll_up = (self.scroll_up as i64 - d).clamp(0, n as i64) as usize;
            return;
        }
        let n = self.row_count(self.focus);
        let i = self.focus.index();
        self.selected[i] =
            (self.selected[i] as i64 + d).clamp(0, n.saturating_sub(1) as i64) as usize;
    }

    /// Rows the audit or the reader flagged, in order, each with a short label: every
    /// reader problem, and every event with a finding.
    pub fn flagged_rows(&self) -> Vec<(u32, String)> {
        let Some(s) = self.sess() else {
            return Vec::new();
        };
        let mut out: Vec<(u32, String)> = Vec::new();
        if let Some(a) = &self.analysis {
            for (at, f) in &a.findings {
                let row = match *at {
                    super::audit_job::At::Event(i) if i < s.len() => s.row_of_event(i),
                    super::audit_job::At::Problem(k) if (k as usize) < s.problems.len() => {
                        s.row_of_problem(k)
                    }
                    _ => continue,
                };
                out.push((row, format!("{}: {}", f.code, f.message)));
            }
        }
        for k in 0..s.problems.len() as u32 {
            if let Some(p) = self.store.problem(s.problems[k as usize].1) {
                out.push((
                    s.row_of_problem(k),
                    format!("parse-error: line {}: {}", p.origin.line, p.message),
                ));
            }
        }
        // One label per row: the first finding the audit lists for it.
        out.sort_by_key(|(r, _)| *r);
        out.dedup_by_key(|(r, _)| *r);
        out
    }

    /// `e` / `E`: the next or previous row with an error or finding.
    fn flag_step(&mut self, forward: bool) {
        let rows = self.flagged_rows();
        let cur = self.cursor;
        let hit = if forward {
            rows.into_iter().find(|(r, _)| *r > cur)
        } else {
            rows.into_iter().rev().find(|(r, _)| *r < cur)
        };
        match hit {
            Some((r, label)) => {
                self.follow = false;
                self.goto(i64::from(r));
                self.focus = Pane::Timeline;
                self.detail_from = Pane::Timeline;
                self.status = format!("step {}: {label}", self.step());
            }
            None if self.analysis.is_none() && self.recomputing => {
                self.status = "no more errors; the audit is still running".into()
            }
            None => self.status = "no more errors or findings".into(),
        }
    }

    /// A one-line summary of an event (kind-specific), raw: sanitize before drawing.
    pub fn summary(ev: &Event) -> String {
        match &ev.body {
            Body::Announce(a) => format!("{} {}", ev.id.as_deref().unwrap_or(""), a.formula),
            Body::Retract(r) => format!("{} {}", r.target, r.reason.as_deref().unwrap_or("")),
            Body::Verify(v) => format!(
                "{} ⇒ {}",
                v.all_formulas().collect::<Vec<_>>().join(", "),
                v.outcome.as_ref().map(enum_name).unwrap_or_default()
            ),
            Body::Revise(r) => format!(
                "trigger {} drop [{}] {}",
                r.trigger.as_deref().unwrap_or("?"),
                r.retracted.join(", "),
                r.policy.as_deref().unwrap_or("")
            ),
            Body::Query(q) => format!(
                "{} ? {}",
                q.formula,
                q.answer.as_ref().map(enum_name).unwrap_or_default()
            ),
            Body::Answer(a) => a
                .text
                .as_deref()
                .or(a.formula.as_deref())
                .unwrap_or_default()
                .to_string(),
            Body::Thought(t) => t.text.as_deref().unwrap_or_default().to_string(),
            Body::Turn(t) => format!(
                "{} → {}",
                t.question.as_deref().unwrap_or(""),
                t.reply.as_ref().map(enum_name).unwrap_or_default()
            ),
            Body::Belief(b) => format!(
                "{} = {}",
                b.name,
                b.value.as_ref().map(|v| v.to_string()).unwrap_or_default()
            ),
            Body::SchemaBelief(t) | Body::Desire(t) => {
                t.text.as_deref().unwrap_or_default().to_string()
            }
            Body::Intention(i) => format!(
                "{} {}",
                i.intention_type.as_deref().unwrap_or(""),
                i.goal.as_ref().map(|v| v.to_string()).unwrap_or_default()
            ),
            Body::Plan(p) => format!(
                "{} ({} steps)",
                ev.id.as_deref().unwrap_or(""),
                p.steps.len()
            ),
            Body::Step(s) => format!(
                "{}/{} {} {}",
                s.plan.as_deref().unwrap_or("?"),
                s.step.as_deref().unwrap_or("?"),
                s.status.as_ref().map(enum_name).unwrap_or_default(),
                s.summary.as_deref().unwrap_or("")
            ),
            Body::Postcondition(p) => format!(
                "{}/{} tier {} {}",
                p.plan.as_deref().unwrap_or("?"),
                p.step.as_deref().unwrap_or("?"),
                p.tier.map(|t| t.to_string()).unwrap_or_default(),
                match p.ok {
                    Some(true) => "ok",
                    Some(false) => "FAILED",
                    None => "",
                }
            ),
            Body::Satisfaction(s) => format!(
                "{} {}",
                s.intention.as_deref().unwrap_or(""),
                s.ok.map(|o| o.to_string()).unwrap_or_default()
            ),
            Body::Log(l) => format!(
                "{} {}",
                l.level.as_deref().unwrap_or(""),
                l.message.as_deref().unwrap_or("")
            ),
            Body::Session(s) => format!(
                "{} {}",
                s.agent.as_deref().unwrap_or(""),
                s.model.as_deref().unwrap_or("")
            ),
            Body::Score(sc) => {
                let mut t = format!("{} = ", sc.name);
                match (&sc.value, &sc.label) {
                    (Some(v), Some(l)) => t.push_str(&format!("{v} ({l})")),
                    (Some(v), None) => t.push_str(&v.to_string()),
                    (None, Some(l)) => t.push_str(l),
                    (None, None) => t.push('–'),
                }
                if let Some(target) = &sc.target {
                    t.push_str(&format!(" on {target}"));
                }
                if let Some(src) = &sc.source {
                    t.push_str(&format!(" by {src}"));
                }
                if let Some(e) = &sc.explanation {
                    t.push_str(&format!(": {e}"));
                }
                t
            }
            _ => String::new(),
        }
    }

    /// `n` / `N`: the next or previous event whose kind or summary contains the pattern.
    fn search_step(&mut self, forward: bool) {
        let Some(pat) = self.search.clone() else {
            self.status = "no search pattern (/ to search)".into();
            return;
        };
        let pat = pat.to_lowercase();
        // Every matching row, found once per pattern and session, and extended when the
        // session grows: the count ("3 of 41") and the wrap-around search read it.
        let cache = self.search_hits.take();
        let session = self.session;
        let Some(s) = self.sess() else { return };
        let n = s.rows() as usize;
        if n == 0 {
            return;
        }
        let cur = self.cursor as usize;
        let matches = |r: usize| match s.row_item(r as u32) {
            Some(RowItem::Event(i)) => s
                .events()
                .get(i as usize)
                .and_then(|&p| self.store.event(p))
                .is_some_and(|ev| {
                    ev.kind_name().contains(&pat) || App::summary(ev).to_lowercase().contains(&pat)
                }),
            Some(RowItem::Problem(k)) => s
                .problems
                .get(k as usize)
                .and_then(|&(_, q)| self.store.problem(q))
                .is_some_and(|p| {
                    "parse-error".contains(&pat) || p.message.to_lowercase().contains(&pat)
                }),
            None => false,
        };
        let (from, mut hits) = match cache {
            Some((p, sess, scanned, hits)) if p == pat && sess == session && scanned <= n => {
                (scanned, hits)
            }
            _ => (0, Vec::new()),
        };
        hits.extend((from..n).filter(|&i| matches(i)));
        // Wraps around, like lnav and less.
        let found = if hits.is_empty() {
            None
        } else if forward {
            let k = hits.partition_point(|&h| h <= cur);
            Some(if k == hits.len() { 0 } else { k })
        } else {
            let k = hits.partition_point(|&h| h < cur);
            Some(if k == 0 { hits.len() - 1 } else { k - 1 })
        };
        let total = hits.len();
        let at = found.map(|k| hits[k]);
        self.search_hits = Some((pat.clone(), session, n, hits));
        match (found, at) {
            (Some(k), Some(i)) => {
                self.follow = false;
                self.goto(i as i64);
                self.focus = Pane::Timeline;
                self.status = format!("/{} {} of {total} at step {}", pat, k + 1, self.step());
            }
            _ => self.status = format!("pattern not found: {pat}"),
        }
    }

    fn on_prompt_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Esc => self.mode = Mode::Normal,
            KeyCode::Enter => {
                let text = self.edit.text.trim().to_string();
                if self.mode == Mode::Search {
                    self.mode = Mode::Normal;
                    if !text.is_empty() {
                        self.search = Some(text);
                        self.search_step(true);
                    }
                } else {
                    self.mode = Mode::Normal;
                    self.filter = SigmaFilter::parse(&text);
                    self.selected[Pane::Sigma.index()] = 0;
                    self.focus = Pane::Sigma;
                }
            }
            _ => {
                self.edit.edit(&key);
            }
        }
    }

    fn on_command_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Esc => self.mode = Mode::Normal,
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.repl_input = LineEdit::default();
                self.mode = Mode::Normal;
            }
            KeyCode::Enter => {
                let line = self.repl_input.text.trim().to_string();
                self.repl_input = LineEdit::default();
                self.history_pos = None;
                if line.is_empty() {
                    return Vec::new();
                }
                if self.history.last() != Some(&line) {
                    self.history.push(line.clone());
                }
                if line == "messages" {
                    // The TUI's own command: the status history, config warnings first.
                    let mut lines: Vec<String> = self
                        .config_warnings
                        .iter()
                        .map(|w| format!("config: {w}"))
                        .collect();
                    lines.extend(self.messages.iter().cloned());
                    if lines.is_empty() {
                        lines.push("no messages yet".into());
                    }
                    let skip = lines.len().saturating_sub(40);
                    self.popup = Some(("messages".into(), lines.split_off(skip)));
                    self.mode = Mode::Normal;
                    return Vec::new();
                }
                self.scrollback.push(ScrollLine {
                    text: format!(": {line}"),
                    kind: ScrollKind::Input,
                });
                self.scroll_up = 0;
                self.working = Some(line.clone());
                return vec![Effect::Run {
                    line,
                    step: u64::from(self.step()),
                    purpose: Purpose::Prompt,
                }];
            }
            KeyCode::Up => {
                if self.history.is_empty() {
                    return Vec::new();
                }
                let i = match self.history_pos {
                    None => self.history.len() - 1,
                    Some(i) => i.saturating_sub(1),
                };
                self.history_pos = Some(i);
                let h = self.history[i].clone();
                self.repl_input.set(&h);
            }
            KeyCode::Down => match self.history_pos {
                Some(i) if i + 1 < self.history.len() => {
                    self.history_pos = Some(i + 1);
                    let h = self.history[i + 1].clone();
                    self.repl_input.set(&h);
                }
                _ => {
                    self.history_pos = None;
                    self.repl_input = LineEdit::default();
                }
            },
            KeyCode::PageUp => self.move_sel(-(self.page.max(1) as i64)),
            KeyCode::PageDown => self.move_sel(self.page.max(1) as i64),
            KeyCode::Tab => self.complete(),
            _ => {
                self.repl_input.edit(&key);
            }
        }
        Vec::new()
    }

    /// The completion pool: belief ids and atoms of Σ at the selected step.
    pub fn completion_pool(&self) -> Vec<String> {
        let mut out = std::collections::BTreeSet::new();
        let Some(s) = self.sess() else {
            return Vec::new();
        };
        for i in s.sigma_at(self.step(), false) {
            let b = &s.tl.beliefs()[i as usize];
            out.insert(b.id.to_string());
            if let Some(Body::Announce(a)) = self.store.event(b.event).map(|e| &e.body)
                && let Ok(f) = crate::logic::parse::parse(&a.formula)
            {
                let mut atoms = Vec::new();
                crate::logic::cnf::atoms_of(&f, &mut atoms);
                out.extend(atoms.iter().map(|a| a.to_string()));
            }
        }
        out.into_iter().collect()
    }

    /// Tab: complete the word under the cursor with `repl::command::complete`.
    fn complete(&mut self) {
        let pool = self.completion_pool();
        let line = self.repl_input.text.clone();
        let cands = complete(&line, &pool);
        let body_start = line.len()
            - line
                .rsplit(|c: char| c.is_whitespace() || "()&|!~,:".contains(c))
                .next()
                .map_or(0, str::len);
        match cands.as_slice() {
            [] => self.status = "no completion".into(),
            [one] => {
                let mut s = line[..body_start].to_string();
                s.push_str(one);
                s.push(' ');
                self.repl_input.set(&s);
            }
            many => {
                let prefix = common_prefix(many);
                let mut s = line[..body_start].to_string();
                s.push_str(&prefix);
                self.repl_input.set(&s);
                self.status = many.join("  ");
            }
        }
    }

    /// `w` on a belief of Σ: ask `why` for its formula.
    fn why_selected(&mut self) -> Vec<Effect> {
        if self.focus != Pane::Sigma {
            self.status = "w works on a belief: focus Σ (Tab)".into();
            return Vec::new();
        }
        let Some(pos) = self.selected_event() else {
            return Vec::new();
        };
        let Some(Body::Announce(a)) = self.store.event(pos).map(|e| &e.body) else {
            return Vec::new();
        };
        let line = format!("why {}", a.formula);
        self.why_target = self
            .store
            .event(pos)
            .and_then(|e| e.id.as_deref().map(str::to_string));
        self.working = Some(line.clone());
        vec![Effect::Run {
            line,
            step: u64::from(self.step()),
            purpose: Purpose::Why,
        }]
    }

    /// Enter on a revision: ask for the conflict set its trigger met just before it. On a
    /// `retract` row, the revision that retraction applies, if any. The question is a
    /// read-only `check` on the trace's Σ just before the trigger was announced, so opening a
    /// row never changes anything and gives the same answer in any order.
    fn open_selected(&mut self) -> Vec<Effect> {
        if self.focus != Pane::Retract {
            self.focus = Pane::Detail;
            return Vec::new();
        }
        let Some(s) = self.sess() else {
            return Vec::new();
        };
        let sel = self.selected[Pane::Retract.index()];
        let n = s.revisions_upto(self.step());
        let Some((step, pos)) = s.revision_newest(self.step(), sel.min(n.saturating_sub(1))) else {
            return Vec::new();
        };
        let popup = |lines: Vec<String>| Some(("conflict set".to_string(), lines));
        // The revision this row is, or the one a `retract` row applies.
        let revision = match self.store.event(pos).map(|e| &e.body) {
            Some(Body::Revise(_)) => s.tl.revisions().iter().find(|r| r.event == pos),
            Some(Body::Retract(r)) => {
                let entry = s.tl.retracts().iter().find(|x| x.event == pos);
                match entry.and_then(|x| x.revision) {
                    Some(k) => s.tl.revisions().get(k as usize),
                    None => {
                        let by = r.by.map_or("unspecified".to_string(), |b| enum_name(&b));
                        let mut lines = vec![format!(
                            "retract {} (by {by}) is not part of a revision: no conflict to show",
                            r.target
                        )];
                        if let Some(reason) = &r.reason {
                            lines.push(format!("reason: {reason}"));
                        }
                        self.popup = popup(lines);
                        return Vec::new();
                    }
                }
            }
            _ => None,
        };
        let Some(rv) = revision else {
            self.popup = popup(vec!["no revision at this row".into()]);
            return Vec::new();
        };
        let trigger = match self.store.event(rv.event).map(|e| &e.body) {
            Some(Body::Revise(r)) => r.trigger.clone(),
            _ => None,
        };
        // The trigger's record gives its formula and the step it entered Σ; a trigger that
        // names no record is taken as a formula, checked just before the revision.
        let found = rv.trigger_record.and_then(|i| {
            let b = s.tl.beliefs().get(i as usize)?;
            match self.store.event(b.event).map(|e| &e.body) {
                Some(Body::Announce(a)) => Some((a.formula.clone(), b.announced)),
                _ => None,
            }
        });
        let (formula, at) = match (found, trigger) {
            (Some((f, announced)), _) => (f, announced),
            (None, Some(t)) => (t, rv.step.max(step)),
            (None, None) => {
                self.popup = popup(vec!["this revision names no trigger".into()]);
                return Vec::new();
            }
        };
        self.working = Some(format!("conflict set of {formula}"));
        vec![Effect::Run {
            line: format!("check {formula}"),
            step: u64::from(at.saturating_sub(1)),
            purpose: Purpose::Conflict,
        }]
    }

    /// A reply from the REPL worker arrived.
    pub fn on_reply(&mut self, reply: super::repl_job::Answer) {
        use crate::repl::Reply;
        // A command still waiting for the hand-over is what the pane works on next.
        self.working = self.repl_waiting.front().map(|(l, _, _)| l.clone());
        self.dirty = true;
        if reply.purpose == Purpose::Prompt {
            // A command at the prompt shows the layer again if Esc had hidden it.
            self.hand_hidden = false;
        }
        self.hand = reply.hand.clone();
        if reply.purpose == Purpose::Hand {
            self.hand_pending = false;
        }
        match reply.purpose {
            Purpose::Prompt => {
                match &reply.result {
                    Ok(r) => {
                        for l in r.to_text().lines() {
                            self.scrollback.push(ScrollLine {
                                text: l.to_string(),
                                kind: ScrollKind::Output,
                            });
                        }
                        if let Reply::At { step, .. } = r {
                            self.follow = false;
                            self.goto_step(*step);
                        }
                    }
                    Err(e) => self.scrollback.push(ScrollLine {
                        text: e.to_text(),
                        kind: ScrollKind::Error,
                    }),
                }
                for n in reply.notes {
                    self.scrollback.push(ScrollLine {
                        text: n,
                        kind: ScrollKind::Output,
                    });
                }
                const MAX_SCROLLBACK: usize = 10_000;
                if self.scrollback.len() > MAX_SCROLLBACK {
                    let cut = self.scrollback.len() - MAX_SCROLLBACK;
                    self.scrollback.drain(..cut);
                }
            }
            Purpose::Why => match reply.result {
                Ok(Reply::Why { supports, .. }) => {
                    // A belief trivially supports itself; show how else Σ derives it.
                    let target = self.why_target.take();
                    let shown = supports
                        .iter()
                        .find(|s| !(s.len() == 1 && Some(&s[0].id) == target.as_ref()))
                        .or(supports.first());
                    self.support = shown
                        .map(|s| s.iter().map(|m| m.id.clone()).collect())
                        .unwrap_or_default();
                    self.status = match shown {
                        Some(s) => format!(
                            "why: minimal support of {} belief(s) highlighted ({} support set(s))",
                            s.len(),
                            supports.len()
                        ),
                        None => "why: not entailed by Σ (no support)".into(),
                    };
                }
                Ok(other) => self.status = other.to_text(),
                Err(e) => self.status = e.to_text(),
            },
            Purpose::Conflict => {
                let member = |m: &crate::repl::Member| format!("{}  {}", m.id, m.formula);
                let lines = match reply.result {
                    Ok(Reply::Check { prior_conflict, .. }) if !prior_conflict.is_empty() => {
                        let mut v = vec![
                            "Σ was already inconsistent just before the trigger; its own minimal conflict:".to_string(),
                        ];
                        v.extend(prior_conflict.iter().map(member));
                        v
                    }
                    Ok(Reply::Check {
                        outcome, conflict, ..
                    }) if !conflict.is_empty() => {
                        let mut v = vec![format!(
                            "{}: the trigger contradicts this minimal subset of Σ:",
                            outcome.as_str()
                        )];
                        v.extend(conflict.iter().map(member));
                        v
                    }
                    Ok(Reply::Check { outcome, .. }) => vec![format!(
                        "no conflict: the trigger was {} just before the revision",
                        outcome.as_str()
                    )],
                    Ok(other) => vec![other.to_text()],
                    Err(e) => vec![e.to_text()],
                };
                self.popup = Some(("conflict set".into(), lines));
            }
            Purpose::Hand => {
                if let Err(e) = reply.result {
                    self.status = e.to_text();
                }
            }
        }
    }

    /// Handles a mouse event: click focuses the pane (and selects the row), wheel scrolls.
    pub fn on_mouse(&mut self, m: MouseEvent) {
        let at = Position::new(m.column, m.row);
        let Some(&(pane, rect)) = self.areas.iter().find(|(_, r)| r.contains(at)) else {
            return;
        };
        self.dirty = true;
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus = pane;
                self.track_detail();
                let row = m.row.saturating_sub(rect.y + 1) as usize;
                if matches!(pane, Pane::Sigma | Pane::Verify | Pane::Retract) {
                    let n = self.row_count(pane);
                    if row < n {
                        self.selected[pane.index()] = row + self.scroll_of(pane);
                    }
                }
            }
            MouseEventKind::ScrollUp => {
                self.focus = pane;
                self.move_sel(-3);
            }
            MouseEventKind::ScrollDown => {
                self.focus = pane;
                self.move_sel(3);
            }
            _ => {}
        }
    }

    /// The first visible row of a list pane, derived from the selection and the page height
    /// the same way the renderer derives it.
    pub fn scroll_of(&self, pane: Pane) -> usize {
        let sel = self.selected[pane.index()];
        let h = self.page.max(1);
        sel.saturating_sub(h - 1)
    }
}

fn common_prefix(v: &[String]) -> String {
    let Some(first) = v.first() else {
        return String::new();
    };
    let mut end = first.len();
    for s in &v[1..] {
        end = end.min(
            first
                .char_indices()
                .zip(s.chars())
                .take_while(|((_, a), b)| a == b)
                .last()
                .map_or(0, |((i, a), _)| i + a.len_utf8()),
        );
    }
    first[..end].to_string()
}
