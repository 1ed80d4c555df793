//! The timeline pane: every event of the session with its reader problems at their place
//! in file order, the cursor (the selected step) and a density strip of the whole run. It
//! also owns the searches over it: `/` with `n`/`N`, and `e`/`E` over flagged rows.

use std::cell::RefCell;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Cx, block, fallback, visible};
use crate::model::audit::Severity as FindingSeverity;
use crate::model::clock::{duration_ms, format_duration, format_offset};
use crate::model::failure::failure_of;
use crate::model::usage::{first_words, model_call};
use crate::sanitize::sanitize;
use crate::trace::{Body, Event};
use crate::tui::app::{App, Effect, Pane};
use crate::tui::audit_job::{Analysis, At};
use crate::tui::data::{
    MARK_CONTRADICTION, MARK_PROBLEM, MARK_REVISION, RowItem, SessionData, Store, enum_name,
};
use crate::tui::keys::Action;
use crate::tui::text::spans;
use crate::tui::text::{bytes_spans, skip_columns};
use crate::tui::theme::Theme;

/// How many strip lines the timeline keeps at its bottom for `inner` lines: with room for
/// nine rows of events besides, the history strip (`H`, `:history`), Σ's size as a
/// sparkline and the density strip; on a shorter pane the density strip alone.
pub fn strip_lines(inner: u16) -> u16 {
    match inner {
        0..=2 => 0,
        3..=11 => 1,
        _ => 3,
    }
}

/// The bin of step `step` (1-based) among `w` bins for `n` events.
fn bin_of(step: u32, n: usize, w: usize) -> usize {
    ((step.max(1) as usize - 1) * w)
        .checked_div(n)
        .unwrap_or(0)
        .min(w.saturating_sub(1))
}

/// The history strip: a mark at each step where the history of the selected belief or
/// formula (`H`, `:history φ`) changed, coloured by φ's status from there on.
fn history_strip(app: &App, width: u16, th: &Theme) -> Line<'static> {
    let w = usize::from(width).max(1);
    let Some(h) = &app.view().history else {
        return Line::from(Span::styled(
            "H on a Σ belief, or :history φ, marks its history here",
            th.dim,
        ));
    };
    let n = app.sess().map_or(0, |s| s.len() as usize).max(1);
    let mut cells: Vec<(&str, Style)> = vec![("─", th.dim); w];
    for &(step, status) in &h.steps {
        if step == 0 {
            continue;
        }
        cells[bin_of(step, n, w)] = match status {
            "entailed" => ("●", th.ok),
            "contradicted" => ("●", th.error),
            "inconsistent" => ("×", th.warn),
            "not-checkable" => ("?", th.warn),
            _ => ("○", th.text),
        };
    }
    let cur = bin_of(app.step(), n, w);
    Line::from(
        cells
            .into_iter()
            .enumerate()
            .map(|(i, (c, st))| {
                let st = if i == cur {
                    st.add_modifier(Modifier::REVERSED)
                } else {
                    st
                };
                Span::styled(c, st)
            })
            .collect::<Vec<_>>(),
    )
}

/// Σ's size over the run as a sparkline: each cell the size at the last step it covers, on a
/// scale of eight heights up to the largest.
fn sigma_sparkline(app: &App, width: u16, th: &Theme) -> Line<'static> {
    const LEVELS: [&str; 8] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
    let Some(s) = app.sess() else {
        return Line::default();
    };
    let w = usize::from(width).max(1);
    let n = s.len() as usize;
    if n == 0 {
        return Line::default();
    }
    let size = |t: u32| s.sigma_at_len(t).saturating_sub(s.ended_by(t) as u32);
    let sizes: Vec<u32> = (0..w)
        .map(|j| {
            let t = (((j + 1) * n).div_ceil(w)).clamp(1, n) as u32;
            size(t)
        })
        .collect();
    let max = sizes.iter().copied().max().unwrap_or(0).max(1);
    let cur = bin_of(app.step(), n, w);
    Line::from(
        sizes
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let c = if v == 0 {
                    " "
                } else {
                    LEVELS[((v as usize * 8 - 1) / max as usize).min(7)]
                };
                let st = if i == cur {
                    th.accent.add_modifier(Modifier::REVERSED)
                } else {
                    th.accent
                };
                Span::styled(c, st)
            })
            .collect::<Vec<_>>(),
    )
}

/// The density strip's cache key: (session, rows, width, audit version).
type DensityKey = (usize, u32, u16, u64);

/// The timeline's filter (`F` with the timeline focused), lnav's filter-in and filter-out in
/// one line: `kind:K[,K..]` and `level:L[,L..]` keep only those rows, free text keeps the rows
/// containing it (its words as one phrase, case-insensitive, in the kind or the summary); a
/// term starting with `-` hides what it matches instead (`-kind:log`, `-level:debug`,
/// `-heartbeat`). A reader problem is of kind `parse-error` (level `error`: the line is not
/// an event) or `warning` (level `warn`: the line was kept), see [`problem_kind`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimelineFilter {
    /// The filter as typed.
    pub text: String,
    kinds: Vec<String>,
    not_kinds: Vec<String>,
    levels: Vec<String>,
    not_levels: Vec<String>,
    phrase: Option<String>,
    not_words: Vec<String>,
}

/// A log level as the filter compares it: lowercase, with the usual spellings folded
/// (`warning` is `warn`, `err` is `error`).
fn level_key(s: &str) -> String {
    let l = s.trim().to_lowercase();
    match l.as_str() {
        "warning" => "warn".into(),
        "err" => "error".into(),
        _ => l,
    }
}

impl TimelineFilter {
    /// Parses `kind:announce,retract level:error -kind:log some text -noise`.
    pub fn parse(s: &str) -> TimelineFilter {
        let mut f = TimelineFilter {
            text: s.trim().to_string(),
            ..TimelineFilter::default()
        };
        let list = |v: &str, level: bool| -> Vec<String> {
            v.split(',')
                .filter(|x| !x.is_empty())
                .map(|x| {
                    if level {
                        level_key(x)
                    } else {
                        x.to_lowercase()
                    }
                })
                .collect()
        };
        let mut words = Vec::new();
        for w in s.split_whitespace() {
            let (out, term) = match w.strip_prefix('-') {
                Some(rest) if !rest.is_empty() => (true, rest),
                _ => (false, w),
            };
            if let Some(v) = term.strip_prefix("kind:") {
                let l = list(v, false);
                if out { &mut f.not_kinds } else { &mut f.kinds }.extend(l);
            } else if let Some(v) = term.strip_prefix("level:") {
                let l = list(v, true);
                if out {
                    &mut f.not_levels
                } else {
                    &mut f.levels
                }
                .extend(l);
            } else if out {
                f.not_words.push(term.to_lowercase());
            } else {
                words.push(term);
            }
        }
        if !words.is_empty() {
            f.phrase = Some(words.join(" ").to_lowercase());
        }
        f
    }

    /// Whether the filter keeps every row.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
            && self.not_kinds.is_empty()
            && self.levels.is_empty()
            && self.not_levels.is_empty()
            && self.phrase.is_none()
            && self.not_words.is_empty()
    }

    /// Whether a row of kind `kind` and level `level` is kept; `text` gives the row's text
    /// (kind and summary, lowercase), asked for only when a text term needs it.
    pub fn keeps(&self, kind: &str, level: Option<&str>, text: impl FnOnce() -> String) -> bool {
        let kind = kind.to_lowercase();
        let level = level.map(level_key);
        if !self.kinds.is_empty() && !self.kinds.contains(&kind) {
            return false;
        }
        if self.not_kinds.contains(&kind) {
            return false;
        }
        if !self.levels.is_empty() && !level.as_ref().is_some_and(|l| self.levels.contains(l)) {
            return false;
        }
        if level.as_ref().is_some_and(|l| self.not_levels.contains(l)) {
            return false;
        }
        if self.phrase.is_none() && self.not_words.is_empty() {
            return true;
        }
        let text = text();
        self.phrase
            .as_ref()
            .is_none_or(|p| text.contains(p.as_str()))
            && !self.not_words.iter().any(|w| text.contains(w.as_str()))
    }

    /// Whether row `r` of `s` is kept.
    pub fn keeps_row(&self, store: &Store, s: &SessionData, r: u32) -> bool {
        match s.row_item(r) {
            Some(RowItem::Event(i)) => {
                let Some(ev) = s.events().get(i as usize).and_then(|&p| store.event(p)) else {
                    return false;
                };
                let by_level = !self.levels.is_empty() || !self.not_levels.is_empty();
                let level = match &ev.body {
                    Body::Log(l) => l.level.as_deref(),
                    // A failed call or run is an error row (the model says which failed).
                    _ if by_level && failure_of(ev).is_some() => Some("error"),
                    _ => None,
                };
                self.keeps(ev.kind_name(), level, || {
                    format!("{} {}", ev.kind_name(), summary(ev)).to_lowercase()
                })
            }
            Some(RowItem::Problem(k)) => {
                let Some(p) = s
                    .problems
                    .get(k as usize)
                    .and_then(|&(_, q)| store.problem(q))
                else {
                    return false;
                };
                let level = match p.severity {
                    crate::trace::Severity::Error => "error",
                    crate::trace::Severity::Warning => "warn",
                };
                self.keeps(problem_kind(p), Some(level), || {
                    format!("{} {}", problem_kind(p), p.message).to_lowercase()
                })
            }
            None => false,
        }
    }
}

/// The rows a filter keeps in one session, found incrementally: rows are only ever added at
/// the end of a session, so growing data extends the scan rather than starting it over.
#[derive(Debug, Clone)]
struct FilterHits {
    filter: TimelineFilter,
    session: usize,
    scanned: u32,
    rows: Vec<u32>,
}

/// How long one call may scan rows against a new filter outside a frame (a key); a frame
/// gets [`crate::tui::panes::sigma::FRAME_SCAN`] more, and shows the progress.
const FILTER_SCAN_BUDGET: std::time::Duration = std::time::Duration::from_millis(2);

/// Rows checked per look at the clock while a filter scans.
const FILTER_SCAN_CHUNK: u32 = 1024;

/// Columns the timeline's rows move per ← / →.
pub const HSCROLL_STEP: usize = 16;

/// The timeline pane's state. Its selection is the session's cursor
/// ([`crate::tui::app::SessionView::cursor`]): every pane shows the state at it.
#[derive(Debug)]
pub struct TimelinePane {
    /// The last search pattern.
    pub search: Option<String>,
    /// The rows matching the last search: (pattern, filter, session, rows scanned,
    /// matching rows).
    search_hits: Option<(String, String, usize, usize, Vec<usize>)>,
    /// The filter (`F` on the timeline).
    filter: TimelineFilter,
    /// The rows it keeps, as far as scanned.
    hits: RefCell<Option<FilterHits>>,
    /// Columns the rows' text is scrolled left by (← →).
    pub hscroll: usize,
    /// Density strip cache: its key and the bins.
    density: RefCell<(DensityKey, Vec<u8>)>,
    /// Whether the time columns show (`T`); `None`: when the session has durations.
    pub time_columns: Option<bool>,
    /// Per session: its first time, whether its events carry durations, and how many events
    /// it had when looked at.
    timing: RefCell<std::collections::HashMap<usize, Timing>>,
}

impl Default for TimelinePane {
    fn default() -> Self {
        TimelinePane {
            search: None,
            search_hits: None,
            filter: TimelineFilter::default(),
            hits: RefCell::new(None),
            hscroll: 0,
            density: RefCell::new(((usize::MAX, 0, 0, 0), Vec::new())),
            time_columns: None,
            timing: RefCell::new(std::collections::HashMap::new()),
        }
    }
}

/// The rows the pane lists: all of them, or the filter's with the cursor's row among them
/// even when the filter hides it (the cursor is the step every pane shows, so it is never
/// out of sight).
enum Listed<'a> {
    All(usize),
    Filtered {
        hits: &'a [u32],
        /// Where the cursor's row is in the list.
        at: usize,
        /// The cursor's row, when the filter hides it (it is listed at `at`).
        extra: Option<u32>,
    },
}

impl Listed<'_> {
    fn len(&self) -> usize {
        match self {
            Listed::All(n) => *n,
            Listed::Filtered { hits, extra, .. } => hits.len() + usize::from(extra.is_some()),
        }
    }

    fn row(&self, k: usize) -> Option<u32> {
        match self {
            Listed::All(n) => (k < *n).then_some(k as u32),
            Listed::Filtered { hits, at, extra } => match extra {
                Some(c) if k == *at => Some(*c),
                Some(_) if k > *at => hits.get(k - 1).copied(),
                _ => hits.get(k).copied(),
            },
        }
    }
}

/// What the time columns know of a session: its first time, whether its events carry
/// durations, and how many events it had when looked at.
type Timing = (Option<f64>, bool, u32);

/// Events looked at for whether a session carries durations.
const TIMED_PROBE: usize = 512;

impl TimelinePane {
    /// The session's first time when the time columns show (time since the start and
    /// duration): by default when the session's events carry `duration_ms` (imported agent
    /// traces), or as `T` says.
    fn timed(&self, app: &App, s: &SessionData) -> Option<f64> {
        let mut cache = self.timing.borrow_mut();
        let len = s.len();
        let entry = cache
            .entry(app.session())
            .or_insert((None, false, u32::MAX));
        // Looked at again while a growing session (a live one) is short and has shown
        // neither: its first events may be only the session's own.
        let settled = entry.2 != u32::MAX
            && (entry.1 && entry.0.is_some() || entry.2 as usize >= TIMED_PROBE);
        if !settled && entry.2 != len {
            let start = crate::model::clock::start_of(&app.store.log, &s.tl);
            let durations = s
                .events()
                .iter()
                .take(TIMED_PROBE)
                .any(|&p| app.store.event(p).is_some_and(|e| duration_ms(e).is_some()));
            *entry = (start, durations, len);
        }
        let (start, durations, _) = *entry;
        let on = self.time_columns.unwrap_or(durations);
        if on { Some(start.unwrap_or(0.0)) } else { None }
    }

    /// Whether the time columns show by default for `session` (its events carry durations).
    pub fn durations_in(&self, session: usize) -> bool {
        self.timing.borrow().get(&session).is_some_and(|t| t.1)
    }

    /// The filter.
    pub fn filter(&self) -> &TimelineFilter {
        &self.filter
    }

    /// Sets the filter (an empty one shows every row again).
    pub fn set_filter(&mut self, f: TimelineFilter) {
        self.filter = f;
        *self.hits.get_mut() = None;
    }

    /// Scans more rows of `session` against the filter, for at most `budget` (all of them
    /// when `budget` is `None`); returns whether every row has been checked.
    fn scan(&self, store: &Store, session: usize, budget: Option<std::time::Duration>) -> bool {
        let Some(s) = store.sessions.get(session) else {
            return true;
        };
        let mut slot = self.hits.borrow_mut();
        let n = s.rows();
        let fresh = slot
            .as_ref()
            .is_none_or(|h| h.session != session || h.filter != self.filter || h.scanned > n);
        if fresh {
            *slot = Some(FilterHits {
                filter: self.filter.clone(),
                session,
                scanned: 0,
                rows: Vec::new(),
            });
        }
        let Some(h) = slot.as_mut() else { return true };
        let start = std::time::Instant::now();
        while h.scanned < n {
            let end = (h.scanned + FILTER_SCAN_CHUNK).min(n);
            for r in h.scanned..end {
                if self.filter.keeps_row(store, s, r) {
                    h.rows.push(r);
                }
            }
            h.scanned = end;
            if budget.is_some_and(|b| start.elapsed() >= b) {
                break;
            }
        }
        h.scanned >= n
    }

    /// While the filter is still scanning the shown session: rows checked and the total.
    pub fn filter_progress(&self, store: &Store, session: usize) -> Option<(u32, u32)> {
        if self.filter.is_empty() {
            return None;
        }
        let n = store.sessions.get(session)?.rows();
        match &*self.hits.borrow() {
            Some(h) if h.session == session && h.filter == self.filter && h.scanned <= n => {
                (h.scanned < n).then_some((h.scanned, n))
            }
            _ => (n > 0).then_some((0, n)),
        }
    }

    /// The rows the filter keeps in `session` (scanning more within `budget` first).
    pub fn kept_rows(
        &self,
        store: &Store,
        session: usize,
        budget: Option<std::time::Duration>,
    ) -> Vec<u32> {
        if self.filter.is_empty() {
            let n = store.sessions.get(session).map_or(0, |s| s.rows());
            return (0..n).collect();
        }
        self.scan(store, session, budget);
        self.hits
            .borrow()
            .as_ref()
            .map(|h| h.rows.clone())
            .unwrap_or_default()
    }

    /// Calls `f` with the listed rows of `session` and the cursor's place among them.
    fn with_listed<R>(
        &self,
        store: &Store,
        session: usize,
        cursor: u32,
        budget: Option<std::time::Duration>,
        f: impl FnOnce(&Listed, usize) -> R,
    ) -> R {
        let n = store.sessions.get(session).map_or(0, |s| s.rows() as usize);
        if self.filter.is_empty() {
            return f(&Listed::All(n), cursor as usize);
        }
        self.scan(store, session, budget);
        let slot = self.hits.borrow();
        let hits: &[u32] = slot.as_ref().map_or(&[], |h| h.rows.as_slice());
        let at = hits.partition_point(|&h| h < cursor);
        let extra = (n > 0 && hits.get(at) != Some(&cursor)).then_some(cursor);
        f(&Listed::Filtered { hits, at, extra }, at)
    }

    /// Moving, searching, `e`/`E`, the filter's rows and ← →; moving and searching act on the
    /// timeline from any pane.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        if let Some(d) = cx.delta(a) {
            if d < 0 {
                cx.view.follow = false;
            }
            let cursor = cx.view.cursor;
            let target = self.with_listed(
                cx.store,
                cx.session,
                cursor,
                Some(FILTER_SCAN_BUDGET),
                |l, at| {
                    if l.len() == 0 {
                        return None;
                    }
                    let k = (at as i64 + d).clamp(0, l.len() as i64 - 1) as usize;
                    l.row(k)
                },
            );
            if let Some(r) = target {
                cx.goto(i64::from(r));
            }
            return Vec::new();
        }
        match a {
            Action::SearchNext => self.search_step(cx, true),
            Action::SearchPrev => self.search_step(cx, false),
            Action::NextFlag => flag_step(cx, true),
            Action::PrevFlag => flag_step(cx, false),
            Action::ScrollRight => self.hscroll += HSCROLL_STEP,
            Action::ScrollLeft => self.hscroll = self.hscroll.saturating_sub(HSCROLL_STEP),
            _ => return fallback(a, cx),
        }
        Vec::new()
    }

    /// A click on the `row`-th of the `inner` lines inside the pane's borders: that row
    /// becomes the cursor.
    pub fn on_click(&mut self, row: usize, inner: usize, cx: &mut Cx) {
        // The strips take the last lines of the pane.
        let page = inner - usize::from(strip_lines(inner as u16));
        if row >= page {
            return;
        }
        let cursor = cx.view.cursor;
        let target = self.with_listed(
            cx.store,
            cx.session,
            cursor,
            Some(FILTER_SCAN_BUDGET),
            |l, at| {
                let first = visible(at, l.len(), page).0;
                l.row(first + row)
            },
        );
        if let Some(r) = target {
            cx.view.follow = false;
            cx.goto(i64::from(r));
        }
    }

    /// The spans of row `r`: step, mark, kind, then the text scrolled by `hscroll`.
    fn row_spans(
        &self,
        app: &App,
        s: &SessionData,
        r: u32,
        th: &Theme,
    ) -> Option<Vec<Span<'static>>> {
        let item = s.row_item(r)?;
        let (mut v, text) = match item {
            RowItem::Event(i) => {
                let ev = s
                    .events()
                    .get(i as usize)
                    .and_then(|&p| app.store.event(p))?;
                let failed = failure_of(ev).is_some();
                let mark = match row_mark(app, s, item) {
                    // A failure is marked by a glyph of its own, before the audit says so.
                    _ if failed => Span::styled("✗ ", th.error),
                    Some(RowMark::Problem) => Span::styled("! ", th.error),
                    Some(RowMark::Info) => Span::styled("· ", th.warn),
                    Some(RowMark::Contradiction) => Span::styled("× ", th.warn),
                    None => Span::raw("  "),
                };
                let mut v = vec![Span::styled(format!("{:>6} ", i + 1), th.dim), mark];
                if let Some(start) = self.timed(app, s) {
                    let at = ev
                        .ts
                        .as_ref()
                        .map(|t| format_offset(t.unix_seconds - start))
                        .unwrap_or_default();
                    let took = duration_ms(ev).map(format_duration).unwrap_or_default();
                    v.push(Span::styled(format!("{at:>9} "), th.dim));
                    v.push(Span::styled(format!("{took:>6} "), th.text));
                }
                v.push(Span::styled(
                    format!("{:<13.13} ", sanitize(ev.kind_name())),
                    if failed { th.error } else { kind_style(th, ev) },
                ));
                let mut text = spans(&summary(ev), th.text, th.marker);
                for sc in self.row_scores(app, s, i + 1, ev) {
                    let st = match sc.passed {
                        Some(false) => th.error,
                        Some(true) => th.ok,
                        None => th.accent,
                    };
                    text.push(Span::raw("  "));
                    text.extend(spans(
                        &crate::model::scores::badge(&sc.score),
                        st,
                        th.marker,
                    ));
                }
                (v, text)
            }
            RowItem::Problem(k) => {
                let p = s
                    .problems
                    .get(k as usize)
                    .and_then(|&(_, q)| app.store.problem(q))?;
                // A warning's line was kept (its event is the next row): marked like an
                // info finding, not like a line that was lost.
                let (mark, st) = match p.severity {
                    crate::trace::Severity::Error => ("! ", th.error),
                    crate::trace::Severity::Warning => ("· ", th.warn),
                };
                let mut v = vec![Span::styled("       ", th.dim), Span::styled(mark, st)];
                // A bad line has no time: blank time columns keep the kinds aligned.
                if self.timed(app, s).is_some() {
                    v.push(Span::raw(" ".repeat(17)));
                }
                v.push(Span::styled(format!("{:<13.13} ", problem_kind(p)), st));
                let mut text = vec![Span::styled(
                    format!("line {}:{} ", p.origin.line, p.column),
                    th.dim,
                )];
                text.extend(spans(&p.message, st, th.marker));
                // What the line held, escaped: a bad line is recognised by its content.
                if let Some(e) = p.excerpt.as_ref().filter(|e| !e.bytes.is_empty()) {
                    text.push(Span::styled("  ⟫ ", th.dim));
                    text.extend(bytes_spans(&e.bytes, th.dim, th.marker));
                }
                (v, text)
            }
        };
        v.extend(skip_columns(text, self.hscroll));
        Some(v)
    }

    /// The scores whose target is the event at `step` (shown on its row beside what they
    /// score): only the scores that name the event's `id` are read, found in the replay's
    /// index of targets. (Building an index of its own from every score of the session,
    /// each time their number changed, read all of them from the file at every frame of a
    /// load: a tenth of the UI thread's CPU opening a 10-million-event trace.)
    fn row_scores(
        &self,
        app: &App,
        s: &SessionData,
        step: u32,
        ev: &Event,
    ) -> Vec<crate::model::scores::Scored> {
        let Some(id) = ev.id.as_deref() else {
            return Vec::new();
        };
        let log = &app.store.log;
        s.tl.scores_naming(id)
            .filter_map(|(st, pos)| crate::model::scores::score_at(log, &s.tl, st, pos))
            .filter(|sc| sc.target == Some(step))
            .collect()
    }

    /// Draws the pane.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        let th = app.theme.clone();
        let cursor = app.view().cursor;
        let n = app.sess().map_or(0, |s| s.rows());
        let mut extra = String::new();
        if !self.filter.is_empty() {
            // One scanning window per frame; `ui` asks for the next frame while it is not done.
            self.scan(
                &app.store,
                app.session(),
                Some(crate::tui::panes::sigma::FRAME_SCAN),
            );
            let kept = self.hits.borrow().as_ref().map_or(0, |h| h.rows.len());
            extra.push_str(&format!("{kept} of {n} rows, filter: "));
            extra.push_str(&sanitize(&self.filter.text));
            if let Some((done, total)) = self.filter_progress(&app.store, app.session()) {
                let pct = u64::from(done) * 100 / u64::from(total.max(1));
                extra.push_str(&format!(" (filtering… {pct}%)"));
            }
            extra.push(' ');
        }
        if self.hscroll > 0 {
            extra.push_str(&format!("→{} (← back) ", self.hscroll));
        }
        if strip_lines(area.height.saturating_sub(2)) == 3
            && let Some(h) = &app.view().history
        {
            extra.push_str(&format!("history: {} ", sanitize(&h.formula)));
        }
        let b = block(app, Pane::Timeline, extra);
        let inner = b.inner(area);
        f.render_widget(b, area);
        let Some(s) = app.sess() else { return };
        let strips = strip_lines(inner.height);
        let h = usize::from(inner.height - strips);
        let lines = self.with_listed(&app.store, app.session(), cursor, None, |l, at| {
            let (start, end) = visible(at, l.len(), h);
            let mut lines = Vec::with_capacity(end - start);
            for k in start..end {
                let Some(r) = l.row(k) else { continue };
                let Some(mut v) = self.row_spans(app, s, r, &th) else {
                    continue;
                };
                if r == cursor {
                    if matches!(l, Listed::Filtered { extra: Some(_), .. }) {
                        v.insert(0, Span::styled("(hidden by the filter) ", th.dim));
                    }
                    lines.push(Line::from(v).style(th.selection));
                } else {
                    lines.push(Line::from(v));
                }
            }
            lines
        });
        f.render_widget(
            Paragraph::new(lines),
            Rect {
                height: h as u16,
                ..inner
            },
        );
        if strips == 3 {
            let y = inner.y + inner.height - 3;
            f.render_widget(
                Paragraph::new(history_strip(app, inner.width, &th)),
                Rect {
                    y,
                    height: 1,
                    ..inner
                },
            );
            f.render_widget(
                Paragraph::new(sigma_sparkline(app, inner.width, &th)),
                Rect {
                    y: y + 1,
                    height: 1,
                    ..inner
                },
            );
        }
        if strips >= 1 {
            let bins = self.density(app, inner.width);
            let events = app.sess().map_or(0, |s| s.len() as usize);
            let cur_bin = (app.step().saturating_sub(1) as usize * bins.len())
                .checked_div(events)
                .unwrap_or(usize::MAX);
            let v: Vec<Span> = bins
                .iter()
                .enumerate()
                .map(|(i, &m)| {
                    let (c, st) = if m & MARK_CONTRADICTION != 0 {
                        ("█", th.error)
                    } else if m & MARK_PROBLEM != 0 {
                        ("▆", th.marker)
                    } else if m & MARK_REVISION != 0 {
                        ("▄", th.warn)
                    } else if m & 0x80 != 0 {
                        ("▁", th.dim)
                    } else {
                        (" ", th.dim)
                    };
                    let st = if i == cur_bin {
                        st.add_modifier(Modifier::REVERSED)
                    } else {
                        st
                    };
                    Span::styled(c, st)
                })
                .collect();
            let y = inner.y + inner.height - 1;
            f.render_widget(
                Paragraph::new(Line::from(v)),
                Rect {
                    y,
                    height: 1,
                    ..inner
                },
            );
        }
    }

    /// The density strip's bins for `width` cells (see the module doc of [`crate::tui::ui`]).
    pub fn density(&self, app: &App, width: u16) -> Vec<u8> {
        let Some(s) = app.sess() else {
            return Vec::new();
        };
        let audited = app.view().analysis.as_ref().map_or(u64::MAX, |a| a.version);
        let key = (app.session(), s.rows(), width, audited);
        // Cached per (session, length, width, audit). A recompute reads the block summary of the
        // marks ([`SessionData::marks_in`]): a few thousand blocks for a million events, so a
        // follow burst redraws an exact strip every frame.
        let mut cache = self.density.borrow_mut();
        if cache.0 != key {
            let n = s.marks.len();
            let w = usize::from(width).max(1);
            let mut bins = vec![0u8; w];
            // Each event covers the bins from its start to the next event's start, so a short
            // run still fills the strip.
            let span = |i: usize| {
                let a = (i * w).checked_div(n).unwrap_or(0);
                let b = ((i + 1) * w).checked_div(n).unwrap_or(0).max(a + 1).min(w);
                a.min(w - 1)..b
            };
            // 0x80: the bin holds at least one event.
            if n < w {
                for (i, &m) in s.marks.iter().enumerate() {
                    for bin in &mut bins[span(i)] {
                        *bin |= m | 0x80;
                    }
                }
            } else {
                // With at least one event per bin, event i is in bin floor(i * w / n) alone:
                // bin j holds events ceil(j * n / w) up to ceil((j + 1) * n / w).
                for (j, bin) in bins.iter_mut().enumerate() {
                    let lo = (j * n).div_ceil(w);
                    let hi = ((j + 1) * n).div_ceil(w);
                    *bin = s.marks_in(lo..hi) | 0x80;
                }
            }
            if n > 0 {
                // Reader problems at the event read after them; findings at their event.
                let flagged = s.problems.iter().map(|&(b, _)| b as usize).chain(
                    app.view()
                        .analysis
                        .iter()
                        .flat_map(|a| a.findings.iter())
                        .filter_map(|(at, _)| match *at {
                            At::Event(i) => Some(i as usize),
                            _ => None,
                        }),
                );
                for i in flagged {
                    for bin in &mut bins[span(i.min(n - 1))] {
                        *bin |= MARK_PROBLEM;
                    }
                }
            }
            *cache = (key, bins);
        }
        cache.1.clone()
    }

    /// `n` / `N`: the next or previous event whose kind or summary contains the pattern.
    fn search_step(&mut self, cx: &mut Cx, forward: bool) {
        let Some(pat) = self.search.clone() else {
            *cx.status = "no search pattern (/ to search)".into();
            return;
        };
        let pat = pat.to_lowercase();
        // Every matching row, found once per pattern and session, and extended when the
        // session grows: the count ("3 of 41") and the wrap-around search read it.
        let cache = self.search_hits.take();
        let session = cx.session;
        let Some(s) = cx.sess() else { return };
        let n = s.rows() as usize;
        if n == 0 {
            return;
        }
        let cur = cx.view.cursor as usize;
        // Only the rows the filter shows, as lnav searches only what it shows.
        let filter = &self.filter;
        let shown = |r: usize| filter.is_empty() || filter.keeps_row(cx.store, s, r as u32);
        let matches = |r: usize| match s.row_item(r as u32) {
            Some(RowItem::Event(i)) => s
                .events()
                .get(i as usize)
                .and_then(|&p| cx.store.event(p))
                .is_some_and(|ev| {
                    ev.kind_name().contains(&pat) || summary(ev).to_lowercase().contains(&pat)
                }),
            Some(RowItem::Problem(k)) => s
                .problems
                .get(k as usize)
                .and_then(|&(_, q)| cx.store.problem(q))
                .is_some_and(|p| {
                    problem_kind(p).contains(&pat) || p.message.to_lowercase().contains(&pat)
                }),
            None => false,
        };
        let (from, mut hits) = match cache {
            Some((p, f, sess, scanned, hits))
                if p == pat && f == filter.text && sess == session && scanned <= n =>
            {
                (scanned, hits)
            }
            _ => (0, Vec::new()),
        };
        hits.extend((from..n).filter(|&i| matches(i) && shown(i)));
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
        self.search_hits = Some((pat.clone(), filter.text.clone(), session, n, hits));
        match (found, at) {
            (Some(k), Some(i)) => {
                cx.view.follow = false;
                cx.goto(i as i64);
                *cx.focus = Pane::Timeline;
                *cx.status = format!("/{} {} of {total} at step {}", pat, k + 1, cx.step());
            }
            _ => *cx.status = format!("pattern not found: {pat}"),
        }
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
        // Kinds v1 keeps verbatim (an importer's `tool_call`, `llm_call`, `user_message`,
        // ...): their most telling fields.
        Body::Unknown(_) => {
            let text = |k: &str| match ev.extra.value(k) {
                Some(serde_json::Value::String(s)) => Some(s),
                Some(serde_json::Value::Null) | None => None,
                Some(v) => Some(v.to_string()),
            };
            if let Some(call) = model_call(ev) {
                return model_call_summary(&call, failure_of(ev).map(|f| f.message));
            }
            match text("tool") {
                Some(tool) => {
                    let mut t = tool;
                    // The failure first: long arguments would push it out of sight.
                    if let Some(f) = failure_of(ev) {
                        t.push_str(&format!(" ✗ FAILED: {}", f.message));
                    }
                    if let Some(a) = text("args") {
                        t.push_str(&format!(" {a}"));
                    }
                    if let Some(r) = text("result") {
                        t.push_str(&format!(" → {r}"));
                    }
                    t
                }
                None => ["text", "output", "message", "name"]
                    .iter()
                    .find_map(|k| text(k))
                    .unwrap_or_default(),
            }
        }
        _ => String::new(),
    }
}

/// An `llm_call` row: model, tokens, finish reason, the tools it asked for and the first
/// words of its output (`gpt-4o · in 1124 out 23 cache 0 · stop · "The capital is…"`).
fn model_call_summary(c: &crate::model::usage::ModelCall, failed: Option<String>) -> String {
    let mut parts: Vec<String> = Vec::new();
    parts.push(c.model.clone().unwrap_or_else(|| "(model?)".into()));
    if let Some(f) = failed {
        parts.push(format!("✗ FAILED: {f}"));
    }
    if let Some(t) = c
        .tokens
        .as_ref()
        .map(|t| t.brief())
        .filter(|b| !b.is_empty())
    {
        parts.push(t);
    }
    if let Some(f) = &c.finish {
        parts.push(f.clone());
    }
    if !c.tool_requests.is_empty() {
        parts.push(format!("calls {}", c.tool_requests.join(", ")));
    }
    if let Some(o) = c.output.as_deref().filter(|o| !o.trim().is_empty()) {
        parts.push(format!("\"{}\"", first_words(o, 12)));
    }
    parts.join(" · ")
}

/// Rows the audit or the reader flagged, in order, each with a short label: every
/// reader problem, and every event with a finding.
pub fn flagged_rows(
    store: &Store,
    s: &SessionData,
    analysis: Option<&Analysis>,
) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = Vec::new();
    if let Some(a) = analysis {
        for (at, f) in &a.findings {
            let row = match *at {
                At::Event(i) if i < s.len() => s.row_of_event(i),
                At::Problem(k) if (k as usize) < s.problems.len() => s.row_of_problem(k),
                _ => continue,
            };
            out.push((row, format!("{}: {}", f.code, f.message)));
        }
    }
    // Failures and failed scores the audit has not seen yet (it has not run, or the session
    // grew since): the audit's own finding, listed first, labels a row once it has.
    if analysis.is_none_or(|a| a.events < s.len()) {
        failure_rows(store, s, &mut out);
    }
    for k in 0..s.problems.len() as u32 {
        if let Some(p) = store.problem(s.problems[k as usize].1) {
            out.push((
                s.row_of_problem(k),
                format!("{}: line {}: {}", problem_kind(p), p.origin.line, p.message),
            ));
        }
    }
    // One label per row: the first finding the audit lists for it.
    out.sort_by_key(|(r, _)| *r);
    out.dedup_by_key(|(r, _)| *r);
    out
}

/// Rows of failed calls, runs, error logs and failed scores, labelled as the audit labels
/// them (`model::failure`, `model::scores`): cheap, so reachable before the audit has run.
fn failure_rows(store: &Store, s: &SessionData, out: &mut Vec<(u32, String)>) {
    for f in crate::model::failure::failures(&store.log, &s.tl) {
        if f.step <= s.len() {
            let (code, message) = crate::model::audit::failure_finding(&f.failure);
            out.push((s.row_of_event(f.step - 1), format!("{code}: {message}")));
        }
    }
    if s.tl.scores().is_empty() {
        return;
    }
    for sc in crate::model::scores::of_session(&store.log, &s.tl) {
        if sc.passed != Some(false) {
            continue;
        }
        let (step, message) = crate::model::audit::score_finding(&s.tl, &sc);
        if (1..=s.len()).contains(&step) {
            let code = crate::model::audit::Code::ScoreFailed;
            out.push((s.row_of_event(step - 1), format!("{code}: {message}")));
        }
    }
}

/// The kind a reader problem is shown and filtered as: `parse-error` for a line that is not
/// an event (an error), `warning` for a line kept as an event despite a problem (a duplicate
/// `seq`, time going backwards, a misplaced BOM).
pub fn problem_kind(p: &crate::trace::reader::Problem) -> &'static str {
    match p.severity {
        crate::trace::Severity::Error => "parse-error",
        crate::trace::Severity::Warning => "warning",
    }
}

/// `e` / `E`: the next or previous row with an error or finding.
fn flag_step(cx: &mut Cx, forward: bool) {
    let rows = match cx.sess() {
        Some(s) => flagged_rows(cx.store, s, cx.view.analysis.as_ref()),
        None => Vec::new(),
    };
    let cur = cx.view.cursor;
    let hit = if forward {
        rows.into_iter().find(|(r, _)| *r > cur)
    } else {
        rows.into_iter().rev().find(|(r, _)| *r < cur)
    };
    match hit {
        Some((r, label)) => {
            cx.view.follow = false;
            cx.goto(i64::from(r));
            *cx.focus = Pane::Timeline;
            *cx.detail_from = Pane::Timeline;
            *cx.status = format!("step {}: {label}", cx.step());
        }
        None if cx.view.analysis.is_none() && cx.recomputing => {
            *cx.status = "no more errors; the audit is still running".into()
        }
        None => *cx.status = "no more errors or findings".into(),
    }
}

fn kind_style(th: &Theme, ev: &Event) -> Style {
    match &ev.body {
        Body::Announce(_) => th.accent,
        Body::Retract(_) | Body::Revise(_) => th.warn,
        Body::Verify(_) | Body::Query(_) => th.running,
        Body::Plan(_) | Body::Step(_) | Body::Postcondition(_) | Body::Intention(_) => th.ok,
        Body::Score(sc) => score_style(th, sc),
        Body::Unknown(_) => th.marker,
        _ => th.dim,
    }
}

/// A score's colour: pass or fail only when the score says so (`model::scores::passed`);
/// neutral otherwise, since doxascope does not know the scale of a number or a label (1 may
/// be the best of 1 or the worst of 5).
fn score_style(th: &Theme, sc: &crate::trace::event::Score) -> Style {
    match crate::model::scores::passed(sc) {
        Some(true) => th.ok,
        Some(false) => th.error,
        None => th.accent,
    }
}

/// How a timeline row is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowMark {
    /// `!`: a reader problem, or a finding of severity warning or error.
    Problem,
    /// `·`: an info finding.
    Info,
    /// `×`: a contradiction the gate reported (notable, not a finding by itself).
    Contradiction,
}

fn row_mark(app: &App, s: &SessionData, item: RowItem) -> Option<RowMark> {
    match item {
        RowItem::Problem(_) => Some(RowMark::Problem),
        RowItem::Event(i) => {
            let worst = app
                .view()
                .analysis
                .as_ref()
                .and_then(|a| a.on_event(i).map(|f| f.severity).max());
            match worst {
                Some(sev) if sev >= FindingSeverity::Warning => Some(RowMark::Problem),
                Some(_) => Some(RowMark::Info),
                None => s
                    .marks
                    .get(i as usize)
                    .is_some_and(|m| m & MARK_CONTRADICTION != 0)
                    .then_some(RowMark::Contradiction),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::generate::{GenConfig, write_mixed};
    use crate::tui::data::Store;

    /// The strip by its definition: every event ORs its marks into the bins from its start
    /// to the next event's start (at least one), problems and findings likewise.
    fn naive(s: &SessionData, w: usize) -> Vec<u8> {
        let n = s.marks.len();
        let mut bins = vec![0u8; w];
        let span = |i: usize| {
            let a = (i * w).checked_div(n).unwrap_or(0);
            let b = ((i + 1) * w).checked_div(n).unwrap_or(0).max(a + 1).min(w);
            a.min(w - 1)..b
        };
        for (i, &m) in s.marks.iter().enumerate() {
            for bin in &mut bins[span(i)] {
                *bin |= m | 0x80;
            }
        }
        for &(b, _) in &s.problems {
            if n > 0 {
                for bin in &mut bins[span((b as usize).min(n - 1))] {
                    *bin |= MARK_PROBLEM;
                }
            }
        }
        bins
    }

    #[test]
    fn density_strip_from_block_summaries_is_the_per_event_strip() {
        for (events, seed) in [(0u64, 1u64), (1, 2), (5, 3), (199, 4), (200, 5), (4_321, 6)] {
            let mut bytes = Vec::new();
            let cfg = GenConfig {
                events,
                seed,
                sessions: 1,
                atoms: 8,
            };
            write_mixed(&mut bytes, &cfg).unwrap();
            // A bad line or two, so reader problems are marked too.
            bytes.extend_from_slice(b"not json\n");
            let theme = crate::tui::theme::Theme::builtin("dark").unwrap();
            let app = App::new(Store::from_bytes("t.jsonl", &bytes), theme);
            let Some(s) = app.sess() else { continue };
            let marked = s.marks.iter().filter(|&&m| m != 0).count();
            assert!(events < 1000 || marked > 10, "the trace must mark events");
            for w in [1u16, 3, 7, 64, 200, 257] {
                let want = naive(app.sess().unwrap(), usize::from(w));
                assert_eq!(
                    app.panes.timeline.density(&app, w),
                    want,
                    "{events} events, width {w}"
                );
            }
        }
    }

    /// A row's scores are those that reading every score of the session finds targeting
    /// its event: an id two events carry (the latest at or before the score, else the
    /// first after it), a score before its target, a target no event has, a score without
    /// a target, and another session's score naming the same id.
    #[test]
    fn a_rows_scores_are_those_of_every_score_that_target_it() {
        let lines = [
            r#"{"kind":"score","session":"s","name":"early","value":1,"target":"a"}"#,
            r#"{"kind":"announce","session":"s","id":"a","formula":"p"}"#,
            r#"{"kind":"score","session":"s","name":"n1","value":0.5,"target":"a"}"#,
            r#"{"kind":"announce","session":"s","id":"b","formula":"q"}"#,
            r#"{"kind":"score","session":"s","name":"n2","value":false,"target":"b"}"#,
            r#"{"kind":"announce","session":"s","id":"a","formula":"r"}"#,
            r#"{"kind":"score","session":"s","name":"n3","value":true,"target":"a"}"#,
            r#"{"kind":"score","session":"s","name":"n4","value":"x","target":"a"}"#,
            r#"{"kind":"score","session":"s","name":"ghost","value":1,"target":"zz"}"#,
            r#"{"kind":"score","session":"s","name":"run","value":1}"#,
            r#"{"kind":"score","session":"t","name":"other","value":1,"target":"a"}"#,
        ];
        let bytes = lines.join("\n") + "\n";
        let theme = crate::tui::theme::Theme::builtin("dark").unwrap();
        let app = App::new(Store::from_bytes("t.jsonl", bytes.as_bytes()), theme);
        let s = app.sess().unwrap();
        let every = crate::model::scores::of_session(&app.store.log, &s.tl);
        assert_eq!(every.len(), 7);
        let mut shown = 0;
        for (i, &p) in s.events().iter().enumerate() {
            let step = i as u32 + 1;
            let ev = app.store.event(p).unwrap();
            let want: Vec<_> = every
                .iter()
                .filter(|sc| sc.target == Some(step))
                .cloned()
                .collect();
            assert_eq!(
                app.panes.timeline.row_scores(&app, s, step, ev),
                want,
                "step {step}"
            );
            shown += want.len();
        }
        // early and n1 on the first `a`, n2 on `b`, n3 and n4 on the second `a`.
        assert_eq!(shown, 5);
    }
}
