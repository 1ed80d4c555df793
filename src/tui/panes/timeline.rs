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
use crate::sanitize::sanitize;
use crate::trace::{Body, Event};
use crate::tui::app::{App, Effect, Pane};
use crate::tui::audit_job::{Analysis, At};
use crate::tui::data::{
    MARK_CONTRADICTION, MARK_PROBLEM, MARK_REVISION, RowItem, SessionData, Store, enum_name,
};
use crate::tui::keys::Action;
use crate::tui::text::spans;
use crate::tui::theme::Theme;

/// The density strip's cache key: (session, rows, width, audit version).
type DensityKey = (usize, u32, u16, u64);

/// The timeline pane's state. Its selection is the session's cursor
/// ([`crate::tui::app::SessionView::cursor`]): every pane shows the state at it.
#[derive(Debug)]
pub struct TimelinePane {
    /// The last search pattern.
    pub search: Option<String>,
    /// The rows matching the last search: (pattern, session, rows scanned, matching rows).
    search_hits: Option<(String, usize, usize, Vec<usize>)>,
    /// Density strip cache: its key and the bins.
    density: RefCell<(DensityKey, Vec<u8>)>,
}

impl Default for TimelinePane {
    fn default() -> Self {
        TimelinePane {
            search: None,
            search_hits: None,
            density: RefCell::new(((usize::MAX, 0, 0, 0), Vec::new())),
        }
    }
}

impl TimelinePane {
    /// Moving, searching and `e`/`E`; these act on the timeline from any pane.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        if let Some(d) = cx.delta(a) {
            if d < 0 {
                cx.view.follow = false;
            }
            cx.goto(i64::from(cx.view.cursor) + d);
            return Vec::new();
        }
        match a {
            Action::SearchNext => self.search_step(cx, true),
            Action::SearchPrev => self.search_step(cx, false),
            Action::NextFlag => flag_step(cx, true),
            Action::PrevFlag => flag_step(cx, false),
            _ => return fallback(a, cx),
        }
        Vec::new()
    }

    /// A click on the `row`-th of the `inner` lines inside the pane's borders: that row
    /// becomes the cursor.
    pub fn on_click(&mut self, row: usize, inner: usize, cx: &mut Cx) {
        // The density strip takes the last line of a pane of three lines or more.
        let page = inner - usize::from(inner >= 3);
        let n = cx.sess().map_or(0, |s| s.rows() as usize);
        let first = visible(cx.view.cursor as usize, n, page).0;
        if first + row < n {
            cx.view.follow = false;
            cx.goto((first + row) as i64);
        }
    }

    /// Draws the pane.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        let th = app.theme.clone();
        let b = block(app, Pane::Timeline, String::new());
        let inner = b.inner(area);
        f.render_widget(b, area);
        let Some(s) = app.sess() else { return };
        let n = s.rows() as usize;
        let strip_h = u16::from(inner.height >= 3);
        let h = usize::from(inner.height - strip_h);
        let cursor = app.view().cursor as usize;
        let (start, end) = visible(cursor, n, h);
        let mut lines = Vec::with_capacity(end - start);
        for r in start..end {
            let Some(item) = s.row_item(r as u32) else {
                continue;
            };
            let mut v = match item {
                RowItem::Event(i) => {
                    let Some(ev) = s.events().get(i as usize).and_then(|&p| app.store.event(p))
                    else {
                        continue;
                    };
                    let mark = match row_mark(app, s, item) {
                        Some(RowMark::Problem) => Span::styled("! ", th.error),
                        Some(RowMark::Info) => Span::styled("· ", th.warn),
                        Some(RowMark::Contradiction) => Span::styled("× ", th.warn),
                        None => Span::raw("  "),
                    };
                    let mut v = vec![
                        Span::styled(format!("{:>6} ", i + 1), th.dim),
                        mark,
                        Span::styled(
                            format!("{:<13.13} ", sanitize(ev.kind_name())),
                            kind_style(&th, ev),
                        ),
                    ];
                    v.extend(spans(&summary(ev), th.text, th.marker));
                    v
                }
                RowItem::Problem(k) => {
                    let Some(p) = s
                        .problems
                        .get(k as usize)
                        .and_then(|&(_, q)| app.store.problem(q))
                    else {
                        continue;
                    };
                    let mut v = vec![
                        Span::styled("       ", th.dim),
                        Span::styled("! ", th.error),
                        Span::styled(format!("{:<13.13} ", "parse-error"), th.error),
                        Span::styled(format!("line {}:{} ", p.origin.line, p.column), th.dim),
                    ];
                    v.extend(spans(&p.message, th.error, th.marker));
                    v
                }
            };
            if r == cursor {
                let line = Line::from(std::mem::take(&mut v)).style(th.selection);
                lines.push(line);
            } else {
                lines.push(Line::from(v));
            }
        }
        f.render_widget(
            Paragraph::new(lines),
            Rect {
                height: h as u16,
                ..inner
            },
        );
        if strip_h == 1 {
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
        _ => String::new(),
    }
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
    for k in 0..s.problems.len() as u32 {
        if let Some(p) = store.problem(s.problems[k as usize].1) {
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
        Body::Unknown(_) => th.marker,
        _ => th.dim,
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
}
