//! The Σ pane: the belief set at the selected step, filtered (`F`), with the `w` support
//! highlighted and the hand-issued layer's beliefs after the trace's.
//!
//! The filter's rows are an incremental index (`SigmaIndex`) so neither moving in time nor
//! new data costs a pass over Σ, and a new filter over a million beliefs is applied in
//! budgeted pieces across frames.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell as TableCell, Row, Table};

use super::{Cx, block, fallback, moved, visible};
use crate::sanitize::sanitize;
use crate::trace::Body;
use crate::trace::event::Role;
use crate::tui::app::{App, Effect, Pane, Purpose, SessionView};
use crate::tui::data::{SessionData, Store, enum_name};
use crate::tui::highlight::Lang;
use crate::tui::keys::Action;
use crate::tui::text::spans;

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
                let ok = match announce_of(s, store, i as u32) {
                    Some(a) => {
                        role_ok(a.role)
                            && f.source.as_ref().is_none_or(|src| {
                                a.source.as_deref().is_some_and(|s| contains_ci(s, src))
                            })
                            && f.text
                                .as_ref()
                                .is_none_or(|t| contains_ci(&b.id, t) || contains_ci(&a.formula, t))
                    }
                    None => false,
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

type SigmaCache = RefCell<Option<((u64, usize, u32, SigmaFilter), Rc<SigmaRows>)>>;

/// The Σ pane's state.
#[derive(Debug, Default)]
pub struct SigmaPane {
    /// The selected row (the trace's rows, then the hand-issued layer's).
    pub sel: usize,
    /// The filter (`F`).
    pub filter: SigmaFilter,
    /// Σ rows of the last (version, session, step, filter).
    cache: SigmaCache,
    /// The filter's index.
    index: RefCell<Option<SigmaIndex>>,
    /// While a frame draws Σ: until when the filter may scan (one window per frame, shared
    /// by every call in it). Outside frames each call gets [`FILTER_BUDGET`].
    scan_window: Cell<Option<std::time::Instant>>,
}

impl SigmaPane {
    /// Σ rows at step `t` of `session` after the filter (indices into the session's
    /// beliefs), computed once per (data version, session, step, filter). A filter new to
    /// the session scans Σ in pieces of [`FILTER_BUDGET`] per call, returning the rows found
    /// so far until it is done ([`SigmaPane::filter_progress`]).
    pub fn rows(&self, store: &Store, session: usize, t: u32) -> Rc<SigmaRows> {
        let key = (store.version, session, t, self.filter.clone());
        let complete = self.filter_progress(store, session).is_none();
        if let Some((k, rows)) = &*self.cache.borrow()
            && *k == key
            && complete
        {
            return rows.clone();
        }
        // The cached rows share the index's lists: let them go before the index grows them.
        *self.cache.borrow_mut() = None;
        let rows = Rc::new(self.compute_rows(store, session, t));
        *self.cache.borrow_mut() = Some((key, rows.clone()));
        rows
    }

    /// Opens (`Some(deadline)`) or closes the window in which filter scans may run while a
    /// frame draws: the frame's scanning then ends by the deadline however often the rows
    /// are asked for.
    pub fn set_scan_window(&self, until: Option<std::time::Instant>) {
        self.scan_window.set(until);
    }

    /// While the filter is still scanning `session`: records checked and the total.
    pub fn filter_progress(&self, store: &Store, session: usize) -> Option<(u32, u32)> {
        let s = store.sessions.get(session)?;
        if self.filter.is_empty() {
            return None;
        }
        let total = s.tl.beliefs().len() as u32;
        match &*self.index.borrow() {
            Some(ix) if ix.session == session && ix.filter == self.filter => {
                (!ix.complete(s)).then_some((ix.scanned, total))
            }
            _ => (total > 0).then_some((0, total)),
        }
    }

    fn compute_rows(&self, store: &Store, session: usize, t: u32) -> SigmaRows {
        let Some(s) = store.sessions.get(session) else {
            return SigmaRows::List(Vec::new());
        };
        if self.filter.is_empty() {
            return SigmaRows::Prefix(s.sigma_at_len(t));
        }
        let mut slot = self.index.borrow_mut();
        let fresh = match &*slot {
            Some(ix) => {
                ix.session != session
                    || ix.filter != self.filter
                    || ix.scanned as usize > s.tl.beliefs().len()
                    || ix.ended > s.ended.len()
            }
            None => true,
        };
        if fresh {
            *slot = Some(SigmaIndex::new(session, self.filter.clone()));
        }
        let Some(ix) = slot.as_mut() else {
            return SigmaRows::List(Vec::new());
        };
        ix.move_to(s, t);
        let budget = self.scan_window.get().map_or(FILTER_BUDGET, |until| {
            until.saturating_duration_since(std::time::Instant::now())
        });
        ix.scan(store, s, budget);
        ix.rows(s, t)
    }

    /// Rows of the pane: Σ after the filter, then the hand-issued layer's beliefs.
    fn row_count(&self, cx: &Cx) -> usize {
        let t = cx.step();
        self.rows(cx.store, cx.session, t).len()
            + cx.view.hand_shown(t).map_or(0, |h| h.added.len())
    }

    /// The log position of the selected belief's `announce` (none on a belief of the
    /// hand-issued layer: it has no event in the trace).
    pub fn selected_event(&self, store: &Store, session: usize, view: &SessionView) -> Option<u32> {
        let s = store.sessions.get(session)?;
        let i = self.selected_record(store, session, view)?;
        Some(s.tl.beliefs()[i as usize].event)
    }

    /// The record of the selected row, if a trace belief is selected.
    fn selected_record(&self, store: &Store, session: usize, view: &SessionView) -> Option<u32> {
        let s = store.sessions.get(session)?;
        let t = s.step_of_row(view.cursor);
        let rows = self.rows(store, session, t);
        let sel = self.sel;
        if sel >= rows.len() && view.hand_shown(t).is_some_and(|h| !h.added.is_empty()) {
            return None;
        }
        rows.get(sel.min(rows.len().saturating_sub(1)))
    }

    /// The id of the selected belief, if a trace belief is selected.
    pub fn selected_id(&self, store: &Store, session: usize, view: &SessionView) -> Option<String> {
        let pos = self.selected_event(store, session, view)?;
        let s = store.sessions.get(session)?;
        let t = s.step_of_row(view.cursor);
        s.tl.beliefs()
            .iter()
            .find(|b| b.event == pos && b.active_at(t))
            .map(|b| b.id.to_string())
    }

    /// `H` on a belief: ask `history` for it (its steps go on the strip under the timeline).
    fn history_selected(&mut self, cx: &mut Cx) -> Vec<Effect> {
        let Some(id) = self.selected_id(cx.store, cx.session, cx.view) else {
            *cx.status = "H: no belief selected in Σ".into();
            return Vec::new();
        };
        let line = format!("history {id}");
        *cx.working = Some(line.clone());
        *cx.status = format!("history of {id}…");
        vec![Effect::Run {
            line,
            step: u64::from(cx.step()),
            purpose: Purpose::History,
        }]
    }

    /// A new filter: the selection goes back to the first row.
    pub fn set_filter(&mut self, f: SigmaFilter) {
        self.filter = f;
        self.sel = 0;
    }

    /// Selection keys and `w`.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        if let Some(d) = cx.delta(a) {
            self.sel = moved(self.sel, d, self.row_count(cx));
            return Vec::new();
        }
        match a {
            Action::Why => self.why_selected(cx),
            Action::History => self.history_selected(cx),
            _ => fallback(a, cx),
        }
    }

    /// A click on the `row`-th of the `inner` lines inside the pane's borders.
    pub fn on_click(&mut self, row: usize, inner: usize, cx: &mut Cx) {
        // The first line is the table's header.
        let page = inner.saturating_sub(1);
        let Some(row) = row.checked_sub(1) else {
            return;
        };
        let first = visible(self.sel, self.row_count(cx), page).0;
        if first + row < self.row_count(cx) {
            self.sel = first + row;
        }
    }

    /// `w` on a belief: ask `why` for its formula.
    fn why_selected(&mut self, cx: &mut Cx) -> Vec<Effect> {
        let Some(rec) = self.selected_record(cx.store, cx.session, cx.view) else {
            return Vec::new();
        };
        let Some(s) = cx.store.sessions.get(cx.session) else {
            return Vec::new();
        };
        let Some(a) = announce_of(s, cx.store, rec) else {
            return Vec::new();
        };
        let line = format!("why {}", a.formula);
        let record = &s.tl.beliefs()[rec as usize];
        // An announcement's envelope id, or a ground belief's name.
        cx.view.why_target = match cx.store.event(record.event) {
            Some(ev) if !s.tl.is_ground(rec) => ev.id.as_deref().map(str::to_string),
            _ => Some(record.id.to_string()),
        };
        *cx.working = Some(line.clone());
        vec![Effect::Run {
            line,
            step: u64::from(cx.step()),
            purpose: Purpose::Why,
        }]
    }

    /// Draws the pane.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        // One scanning window per frame for a filter still applying (closed by `draw`).
        self.set_scan_window(Some(std::time::Instant::now() + FRAME_SCAN));
        let rows = app.sigma_rows();
        let t = app.step();
        // The hand-issued layer: its beliefs follow the trace's rows, and the trace's beliefs it
        // retracted or overwrote are drawn as such.
        let hand = app.hand_shown().cloned();
        let hand_rows = hand.as_ref().map_or(0, |h| h.added.len());
        let removed: std::collections::HashSet<&str> = hand
            .as_ref()
            .map(|h| h.removed.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let hand_note = match (&hand, &app.view().hand) {
            (Some(h), _) => format!(
                "+ hand layer: {} command(s), {} added, {} retracted ",
                h.commands,
                h.added.len(),
                h.removed.len()
            ),
            (None, Some(_)) if app.view().hand_hidden => "(hand layer hidden: Esc) ".to_string(),
            (None, Some(_)) => "(hand layer: updating…) ".to_string(),
            (None, None) => String::new(),
        };
        let extra = if self.filter.is_empty() {
            format!("{} at step {t} ", rows.len())
        } else if let Some((done, total)) = app.sigma_filter_progress() {
            // A new filter over a large Σ is applied over several frames: `ui` asks for the
            // next while this shows the progress.
            let pct = u64::from(done) * 100 / u64::from(total.max(1));
            format!("{} at step {t} (filtering… {pct}%) ", rows.len())
        } else {
            format!("{} at step {t} (filtered) ", rows.len())
        };
        let extra = format!("{extra}{hand_note}");
        let b = block(app, Pane::Sigma, extra);
        let inner = b.inner(area);
        f.render_widget(b, area);
        let h = usize::from(inner.height.saturating_sub(1));
        let total = rows.len() + hand_rows;
        let sel = self.sel.min(total.saturating_sub(1));
        let (start, end) = visible(sel, total, h);
        let th = app.theme.clone();
        let wide = inner.width >= 90;
        let cols = NarrowCols::measure(app, &rows, start, end, inner.width);
        let mut out = Vec::new();
        for (k, i) in rows
            .range(start.min(rows.len()), end.min(rows.len()))
            .into_iter()
            .enumerate()
        {
            let Some(s) = app.sess() else {
                break;
            };
            let rec = s.tl.beliefs()[i as usize].clone();
            let Some(a) = announce_of(s, &app.store, i) else {
                continue;
            };
            let (role, source, conf, formula) = (
                enum_name(&a.role),
                a.source.clone().unwrap_or_default(),
                a.confidence,
                a.formula.clone(),
            );
            let by_hand = removed.contains(rec.id.as_str());
            let active = rec.active_at(t) && !by_hand;
            let supported = app.view().support.contains(rec.id.as_str());
            let base = if !active {
                th.retracted
            } else if supported {
                th.support
            } else {
                th.text
            };
            let formula_line = if active && rec.formula_ok {
                app.hl
                    .get(Lang::Formula, &formula, &th.syntax, th.marker)
                    .and_then(|l| l.into_iter().next())
                    .map(|l| {
                        if supported {
                            Line::from(
                                l.spans
                                    .into_iter()
                                    .map(|s| {
                                        s.patch_style(
                                            Style::new().add_modifier(Modifier::UNDERLINED),
                                        )
                                    })
                                    .collect::<Vec<_>>(),
                            )
                        } else {
                            l
                        }
                    })
                    .unwrap_or_else(|| Line::from(spans(&formula, base, th.marker)))
            } else {
                Line::from(spans(&formula, base, th.marker))
            };
            let status = if by_hand && rec.active_at(t) {
                if wide {
                    "retracted [hand]"
                } else {
                    "retr. [hand]"
                }
                .into()
            } else if !active {
                match rec.retraction {
                    Some(r) => format!("retracted@{}", r.step),
                    None => "retracted".into(),
                }
            } else if !rec.formula_ok {
                "unparsed".into()
            } else if supported {
                "support".into()
            } else {
                "active".into()
            };
            let status_style = if !active {
                th.retracted
            } else if !rec.formula_ok {
                th.error
            } else if supported {
                th.support
            } else {
                th.ok
            };
            let id_cell = TableCell::from(Line::from(spans(
                &rec.id,
                if supported { th.support } else { th.accent },
                th.marker,
            )));
            let status_cell = TableCell::from(Span::styled(status, status_style));
            let mut row = if wide {
                Row::new(vec![
                    id_cell,
                    TableCell::from(formula_line),
                    TableCell::from(Span::styled(role, th.dim)),
                    TableCell::from(Line::from(spans(&source, th.dim, th.marker))),
                    TableCell::from(Line::from(vec![
                        Span::styled(bar(conf, 5), th.bar),
                        Span::styled(format!(" {conf:.2}"), th.dim),
                    ])),
                    status_cell,
                    TableCell::from(Span::styled(format!("{}", rec.announced), th.dim)),
                ])
            } else {
                cols.row([
                    id_cell,
                    TableCell::from(formula_line),
                    TableCell::from(Span::styled(role, th.dim)),
                    TableCell::from(Line::from(spans(&source, th.dim, th.marker))),
                    TableCell::from(Span::styled(format!("{conf:.2}"), th.dim)),
                    status_cell,
                ])
            };
            if start + k == sel && app.focus == Pane::Sigma {
                row = row.style(th.selection);
            }
            out.push(row);
        }
        if let Some(hv) = &hand {
            let first = start.max(rows.len()) - rows.len();
            let last = end.saturating_sub(rows.len()).min(hv.added.len());
            for (k, m) in hv.added.iter().enumerate().take(last).skip(first) {
                let supported = app.view().support.contains(m.id.as_str());
                let base = if supported { th.support } else { th.text };
                let id_cell = TableCell::from(Line::from(spans(&m.id, th.accent, th.marker)));
                let formula_cell = TableCell::from(Line::from(spans(&m.formula, base, th.marker)));
                let status_cell = TableCell::from(Span::styled("active [hand]", th.ok));
                // (13 columns: it fits the narrow status column too)
                let mut row = if wide {
                    Row::new(vec![
                        id_cell,
                        formula_cell,
                        TableCell::from(Span::styled(role_label(m.role), th.dim)),
                        TableCell::from(Line::from(spans(&m.source, th.dim, th.marker))),
                        TableCell::from(Line::from(vec![
                            Span::styled(bar(m.confidence, 5), th.bar),
                            Span::styled(format!(" {:.2}", m.confidence), th.dim),
                        ])),
                        status_cell,
                        TableCell::from(Span::styled(format!("{}", m.step), th.dim)),
                    ])
                } else {
                    cols.row([
                        id_cell,
                        formula_cell,
                        TableCell::from(Span::styled(role_label(m.role), th.dim)),
                        TableCell::from(Line::from(spans(&m.source, th.dim, th.marker))),
                        TableCell::from(Span::styled(format!("{:.2}", m.confidence), th.dim)),
                        status_cell,
                    ])
                };
                if rows.len() + k == sel && app.focus == Pane::Sigma {
                    row = row.style(th.selection);
                }
                out.push(row);
            }
        }
        // Narrow panes keep what identifies a belief and its status; role, source, confidence
        // and step are in the detail pane.
        let table = if wide {
            Table::new(
                out,
                [
                    Constraint::Length(cols.id.max(12)),
                    Constraint::Fill(1),
                    Constraint::Length(10),
                    Constraint::Length(12),
                    Constraint::Length(10),
                    Constraint::Length(16),
                    Constraint::Length(5),
                ],
            )
            .header(
                Row::new([
                    "id",
                    "formula",
                    "role",
                    "source",
                    "confidence",
                    "status",
                    "step",
                ])
                .style(th.dim.add_modifier(Modifier::BOLD)),
            )
        } else {
            cols.table(out).header(
                cols.row(NARROW_HEADERS.map(TableCell::from))
                    .style(th.dim.add_modifier(Modifier::BOLD)),
            )
        };
        f.render_widget(table, inner);
    }
}

/// The narrow table's columns (below 90 cells): id, formula, role, source, confidence,
/// status.
const NARROW_HEADERS: [&str; 6] = ["id", "formula", "role", "source", "conf", "status"];

/// The narrow table's column widths (0: not shown), sized by the visible rows: ids whole
/// when there is room (up to a third of the pane), then confidence, role and source each
/// shown while the formula keeps at least [`NarrowCols::FORMULA`] cells.
struct NarrowCols {
    id: u16,
    widths: [u16; 6],
}

impl NarrowCols {
    const FORMULA: u16 = 20;

    fn measure(app: &App, rows: &SigmaRows, start: usize, end: usize, width: u16) -> Self {
        let w = |s: &str| Span::raw(sanitize(s)).width() as u16;
        let (mut id, mut role, mut source) = (2u16, 4u16, 6u16);
        if let Some(s) = app.sess() {
            for i in rows.range(start.min(rows.len()), end.min(rows.len())) {
                let rec = &s.tl.beliefs()[i as usize];
                id = id.max(w(&rec.id));
                if let Some(a) = announce_of(s, &app.store, i) {
                    role = role.max(w(&enum_name(&a.role)));
                    source = source.max(w(a.source.as_deref().unwrap_or("")));
                }
            }
        }
        let id = id.min((width / 3).max(10));
        // id, status and the gap between them and the formula.
        let mut used = id + 13 + 2;
        let mut widths = [id, 0, 0, 0, 0, 13];
        for (col, cw) in [(4, 4), (2, role.min(10)), (3, source.min(14))] {
            if width.saturating_sub(used + cw + 1) >= Self::FORMULA {
                widths[col] = cw;
                used += cw + 1;
            }
        }
        widths[1] = width.saturating_sub(used);
        NarrowCols { id, widths }
    }

    /// A row of the shown columns' cells.
    fn row<'a>(&self, cells: [TableCell<'a>; 6]) -> Row<'a> {
        Row::new(
            cells
                .into_iter()
                .zip(self.widths)
                .filter(|(_, w)| *w > 0)
                .map(|(c, _)| c),
        )
    }

    fn table<'a>(&self, rows: Vec<Row<'a>>) -> Table<'a> {
        let shown = self.widths.into_iter().filter(|w| *w > 0);
        Table::new(rows, shown.map(Constraint::Length))
    }
}

fn role_label(role: crate::logic::engine::Role) -> &'static str {
    use crate::logic::engine::Role;
    match role {
        Role::Fact => "fact",
        Role::Rule => "rule",
        Role::Norm => "norm",
        Role::Assumption => "assumption",
    }
}

/// A confidence bar of `w` cells.
fn bar(c: f64, w: usize) -> String {
    let c = if c.is_finite() {
        c.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let full = (c * w as f64).round() as usize;
    format!("{}{}", "█".repeat(full), "░".repeat(w - full.min(w)))
}

/// The announcement record `i` stands for: its `announce` event's, or the value atom of a
/// ground belief (`model::timeline`, "Ground beliefs are members of Σ").
pub(crate) fn announce_of<'a>(
    s: &'a SessionData,
    store: &'a Store,
    i: u32,
) -> Option<&'a crate::trace::event::Announce> {
    if let Some(a) = s.tl.ground_announce(i) {
        return Some(a);
    }
    let r = s.tl.beliefs().get(i as usize)?;
    match &store.event(r.event)?.body {
        Body::Announce(a) => Some(a),
        _ => None,
    }
}
