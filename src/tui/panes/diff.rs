//! The side-by-side diff of two runs (`doxascope diff RUN1 RUN2 --tui`): Σ of one run beside
//! Σ of the other at a pair of aligned steps ([`crate::model::diff::align`], by step, plan step
//! or formula), the beliefs only one side holds first and marked, and `]` `[` moving both runs
//! to the next or previous aligned pair. It takes the whole body of the screen while it is on;
//! `Esc` goes back to the panes.
//!
//! Nothing here runs the solver: the alignment and the comparison read the two timelines
//! (what differs in verdicts and final statuses is `doxascope diff`'s headless answer). The
//! alignment is computed once both runs are read, and again only when they grow.
//!
//! Tab shows the other tab: everything else the runs did, as `doxascope diff` compares it
//! ([`crate::model::diff::events`]): per kind (tool calls, model calls, thoughts, answers,
//! scores, errors) how many each run has and every aligned item that differs, field by
//! field, scrolled with ↑↓ PgUp PgDn.

use std::cell::RefCell;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::model::diff::events::{
    Counts, Item, ItemDiff, diff_items, field, occurrence_text, value_text,
};
use crate::model::diff::{Align, Alignment, Run, align, sigma_keys};
use crate::sanitize::sanitize;
use crate::tui::app::App;
use crate::tui::data::Store;
use crate::tui::keys::Action;
use crate::tui::text::spans;

/// One belief of one side at the pair shown.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    id: String,
    formula: String,
    /// Only this side holds its formula.
    only: bool,
}

/// What a line of the events tab is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventLine {
    /// A kind with items that differ.
    Kind,
    /// A kind the runs agree on.
    Same,
    /// An item that differs: where it is in each run.
    Item,
    /// A field of it that differs.
    Field,
}

/// Both sides' rows at one pair (its index).
type PairRows = (usize, Vec<Row>, Vec<Row>);

/// Which comparison the diff shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffTab {
    /// Σ side by side at a pair of aligned steps.
    Sigma,
    /// The tool calls, model calls, answers, scores and errors that differ.
    Events,
}

/// What the side-by-side mode shows and where it is.
#[derive(Debug)]
pub struct DiffView {
    /// The tab shown.
    pub tab: DiffTab,
    /// The items that differ, kind by kind ([`diff_items`]).
    pub items: Vec<ItemDiff>,
    /// How many items of each kind each run has.
    pub counts: Counts,
    /// The first line of the events tab shown.
    pub events_scroll: usize,
    /// The first run's session (index into the store's sessions).
    pub a: usize,
    /// The second run's.
    pub b: usize,
    /// How the runs are aligned.
    pub how: Align,
    /// The aligned pairs and the first divergence.
    pub alignment: Alignment,
    /// The pair shown (index into the pairs).
    pub at: usize,
    /// The first row shown of both lists (they scroll together).
    pub scroll: usize,
    /// The store version the alignment was computed at.
    pub version: u64,
    /// Rows of both sides at the pair shown, computed once per pair.
    rows: RefCell<Option<PairRows>>,
}

impl DiffView {
    /// Aligns sessions `a` and `b` of the store.
    pub fn build(store: &Store, a: usize, b: usize, how: Align) -> Option<DiffView> {
        let (sa, sb) = (store.sessions.get(a)?, store.sessions.get(b)?);
        let (ra, rb) = (
            Run {
                log: &store.log,
                tl: &sa.tl,
            },
            Run {
                log: &store.log,
                tl: &sb.tl,
            },
        );
        let alignment = align(ra, rb, how);
        let (items, counts) = diff_items(ra, rb);
        Some(DiffView {
            tab: DiffTab::Sigma,
            items,
            counts,
            events_scroll: 0,
            a,
            b,
            how,
            alignment,
            at: 0,
            scroll: 0,
            version: store.version,
            rows: RefCell::new(None),
        })
    }

    /// The pair of steps shown.
    pub fn pair(&self) -> (u32, u32) {
        self.alignment.pairs.get(self.at).copied().unwrap_or((0, 0))
    }

    /// The index of the pair where Σ first diverges, if it does.
    pub fn divergence_at(&self) -> Option<usize> {
        let d = self.alignment.divergence.as_ref()?;
        self.alignment.pairs.iter().position(|&p| p == (d.a, d.b))
    }

    /// The events tab's lines: per kind, the counts and every item that differs with its
    /// differing fields (raw text is sanitized here).
    pub fn event_lines(&self) -> Vec<(EventLine, String)> {
        let mut out = Vec::new();
        for item in Item::ALL {
            let (x, y) = self
                .counts
                .iter()
                .find(|c| c.0 == item)
                .map_or((0, 0), |c| (c.1, c.2));
            let of_kind: Vec<&ItemDiff> = self.items.iter().filter(|i| i.item == item).collect();
            let verdict = match of_kind.len() {
                0 => "the same".to_string(),
                n => format!("{n} differ"),
            };
            out.push((
                if of_kind.is_empty() {
                    EventLine::Same
                } else {
                    EventLine::Kind
                },
                format!("{}s: A has {x}, B has {y}; {verdict}", item.noun()),
            ));
            for d in of_kind {
                out.push((
                    EventLine::Item,
                    format!(
                        "  A {} · B {}",
                        occurrence_text(&d.a),
                        occurrence_text(&d.b)
                    ),
                ));
                for f in &d.fields {
                    out.push((
                        EventLine::Field,
                        format!(
                            "    {f}: A: {} · B: {}",
                            value_text(d.a.as_ref().and_then(|o| field(o, f))),
                            value_text(d.b.as_ref().and_then(|o| field(o, f)))
                        ),
                    ));
                }
            }
        }
        out
    }

    /// A key in the events tab.
    fn on_events_action(&mut self, a: Action, page: usize) -> String {
        let last = self.event_lines().len().saturating_sub(1);
        let s = &mut self.events_scroll;
        match a {
            Action::Up => *s = s.saturating_sub(1),
            Action::Down => *s = (*s + 1).min(last),
            Action::PageUp => *s = s.saturating_sub(page),
            Action::PageDown => *s = (*s + page).min(last),
            Action::First => *s = 0,
            Action::Last => *s = last,
            _ => {
                return "diff events: ↑↓ PgUp PgDn g G scroll, Tab back to Σ, Esc back to the panes"
                    .into();
            }
        }
        format!("diff events: line {} of {}", *s + 1, last + 1)
    }

    /// A key in diff mode; returns the message for the status line.
    pub fn on_action(&mut self, a: Action, page: usize) -> String {
        if matches!(a, Action::NextPane | Action::PrevPane) {
            self.tab = match self.tab {
                DiffTab::Sigma => DiffTab::Events,
                DiffTab::Events => DiffTab::Sigma,
            };
            return match self.tab {
                DiffTab::Events => format!(
                    "diff events: {} item(s) differ (Tab back to Σ)",
                    self.items.len()
                ),
                DiffTab::Sigma => "diff Σ (Tab: the events)".into(),
            };
        }
        if self.tab == DiffTab::Events {
            return self.on_events_action(a, page);
        }
        let last = self.alignment.pairs.len().saturating_sub(1);
        let before = self.at;
        match a {
            Action::StepForward => self.at = (self.at + 1).min(last),
            Action::StepBack => self.at = self.at.saturating_sub(1),
            Action::First => self.at = 0,
            Action::Last => self.at = last,
            Action::NextFlag | Action::PrevFlag => match self.divergence_at() {
                Some(k) => self.at = k,
                None => return "the runs' Σ never diverge under this alignment".into(),
            },
            Action::Up => self.scroll = self.scroll.saturating_sub(1),
            Action::Down => self.scroll += 1,
            Action::PageUp => self.scroll = self.scroll.saturating_sub(page),
            Action::PageDown => self.scroll += page,
            _ => {
                return "diff mode: ] [ move both runs, g G first and last pair, e the first \
                        divergence, ↑↓ scroll, Tab the events, Esc back to the panes"
                    .into();
            }
        }
        if self.at != before {
            self.scroll = 0;
        }
        let (sa, sb) = self.pair();
        format!(
            "pair {} of {}: step {sa} and step {sb}",
            self.at + 1,
            self.alignment.pairs.len()
        )
    }

    fn rows(&self, store: &Store) -> (Vec<Row>, Vec<Row>) {
        if let Some((k, a, b)) = self.rows.borrow().as_ref()
            && *k == self.at
        {
            return (a.clone(), b.clone());
        }
        let (sa, sb) = self.pair();
        let side = |i: usize, step: u32| -> Vec<(String, String, String)> {
            let Some(s) = store.sessions.get(i) else {
                return Vec::new();
            };
            let run = Run {
                log: &store.log,
                tl: &s.tl,
            };
            sigma_keys(run, step)
                .into_iter()
                .map(|(rec, key)| {
                    let v = s.tl.belief(&store.log, rec);
                    let id = v.map(|v| v.id().to_string()).unwrap_or_default();
                    let text = v.map(|v| v.formula_text().to_string()).unwrap_or_default();
                    (id, text, key)
                })
                .collect()
        };
        let (xa, xb) = (side(self.a, sa), side(self.b, sb));
        let count = |xs: &[(String, String, String)]| {
            let mut m: std::collections::HashMap<String, i64> = Default::default();
            for x in xs {
                *m.entry(x.2.clone()).or_default() += 1;
            }
            m
        };
        let (ca, cb) = (count(&xa), count(&xb));
        let mk = |xs: Vec<(String, String, String)>,
                  other: &std::collections::HashMap<String, i64>| {
            let mut rows: Vec<Row> = xs
                .into_iter()
                .map(|(id, formula, key)| Row {
                    only: !other.contains_key(&key),
                    id,
                    formula,
                })
                .collect();
            // What differs first, so it is on screen without scrolling.
            rows.sort_by_key(|r| !r.only);
            rows
        };
        let (ra, rb) = (mk(xa, &cb), mk(xb, &ca));
        *self.rows.borrow_mut() = Some((self.at, ra.clone(), rb.clone()));
        (ra, rb)
    }

    /// Draws the events tab: the comparison of everything but Σ, scrolled.
    fn draw_events(&self, f: &mut Frame, app: &App, area: Rect) {
        let th = &app.theme;
        let name = |i: usize| {
            app.store
                .sessions
                .get(i)
                .map(|s| sanitize(&s.name))
                .unwrap_or_default()
        };
        let lines = self.event_lines();
        let title = Line::from(vec![
            Span::styled(" events: ", th.title),
            Span::styled(
                format!(
                    "A {} · B {} · {} item(s) differ ",
                    name(self.a),
                    name(self.b),
                    self.items.len()
                ),
                th.dim,
            ),
        ]);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(th.border)
            .title(title)
            .title_bottom(Span::styled(
                " ↑↓ PgUp PgDn g G scroll · Tab Σ side by side · Esc back to the panes ",
                th.dim,
            ));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let shown: Vec<Line> = lines
            .iter()
            .skip(self.events_scroll.min(lines.len().saturating_sub(1)))
            .take(usize::from(inner.height))
            .map(|(kind, text)| {
                let st = match kind {
                    EventLine::Kind => th.warn,
                    EventLine::Same => th.ok,
                    EventLine::Item => th.title,
                    EventLine::Field => th.text,
                };
                // Already sanitized; `spans` keeps it on one line.
                Line::from(spans(text, st, th.marker))
            })
            .collect();
        f.render_widget(Paragraph::new(shown), inner);
    }

    /// Draws the tab shown: Σ side by side and the line that says where they are, or the
    /// events.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        if self.tab == DiffTab::Events {
            return self.draw_events(f, app, area);
        }
        let th = &app.theme;
        let [sides, info] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(3)]).areas(area);
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(sides);
        let (ra, rb) = self.rows(&app.store);
        let (sa, sb) = self.pair();
        for (rect, rows, idx, step, tag) in
            [(left, &ra, self.a, sa, "A"), (right, &rb, self.b, sb, "B")]
        {
            let s = app.store.sessions.get(idx);
            let name = s.map(|s| sanitize(&s.name)).unwrap_or_default();
            let len = s.map_or(0, |s| s.len());
            let only = rows.iter().filter(|r| r.only).count();
            let title = Line::from(vec![
                Span::styled(format!(" {tag}: {name} "), th.title),
                Span::styled(
                    format!(
                        "step {step} of {len} · |Σ| {} · {only} only here ",
                        rows.len()
                    ),
                    th.dim,
                ),
            ]);
            let block = Block::default()
                .borders(Borders::ALL)
                .border_style(th.border)
                .title(title);
            let inner = block.inner(rect);
            f.render_widget(block, rect);
            let h = usize::from(inner.height);
            let lines: Vec<Line> = rows
                .iter()
                .skip(self.scroll.min(rows.len().saturating_sub(1)))
                .take(h)
                .map(|r| {
                    let (mark, st) = if r.only {
                        ("+ ", th.warn)
                    } else {
                        ("  ", th.text)
                    };
                    let mut v = vec![
                        Span::styled(mark, st),
                        Span::styled(format!("{:<14.14} ", sanitize(&r.id)), th.dim),
                    ];
                    v.extend(spans(&r.formula, st, th.marker));
                    Line::from(v)
                })
                .collect();
            f.render_widget(Paragraph::new(lines), inner);
        }
        let div = match &self.alignment.divergence {
            Some(d) => format!("first divergence: step {} of A, step {} of B (e)", d.a, d.b),
            None => "Σ never diverges under this alignment".into(),
        };
        let same = ra.iter().all(|r| !r.only) && rb.iter().all(|r| !r.only);
        let text = vec![
            Line::from(vec![
                Span::styled(
                    format!(
                        " pair {} of {} (aligned by {}) ",
                        self.at + 1,
                        self.alignment.pairs.len(),
                        self.how.as_str()
                    ),
                    th.title,
                ),
                Span::styled(
                    if same {
                        "· Σ the same here "
                    } else {
                        "· Σ differs here "
                    },
                    if same { th.ok } else { th.warn },
                ),
                Span::styled(format!("· {div}"), th.dim),
            ]),
            Line::from(Span::styled(
                " ] [ move both runs · g G first and last pair · e first divergence · ↑↓ scroll · Tab the events · Esc back to the panes",
                th.dim,
            )),
        ];
        let block = Block::default()
            .borders(Borders::TOP)
            .border_style(th.border);
        f.render_widget(Paragraph::new(text).block(block), info);
    }
}
