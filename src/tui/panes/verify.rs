//! The verification pane: every `verify` claim up to the selected step, newest first, with
//! the audit's recomputed verdict beside the agent's.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table};

use super::{Cx, block, fallback, json_text, moved, visible};
use crate::trace::{Body, Event};
use crate::tui::app::{App, Effect, Pane};
use crate::tui::data::{SessionData, enum_name};
use crate::tui::keys::Action;
use crate::tui::text::spans;
use crate::tui::theme::Theme;

/// The verification pane's state: its selection (0 is the newest claim).
#[derive(Debug, Default)]
pub struct VerifyPane {
    /// The selected row.
    pub sel: usize,
}

impl VerifyPane {
    /// Claims up to step `t`.
    fn rows_at(s: &SessionData, t: u32) -> &[(u32, u32)] {
        SessionData::upto(s.tl.verifies(), t)
    }

    /// The log position of the selected claim at step `t`.
    pub fn selected_event(&self, s: &SessionData, t: u32) -> Option<u32> {
        let rows = Self::rows_at(s, t);
        let n = rows.len();
        if n == 0 {
            return None;
        }
        rows.get(n - 1 - self.sel.min(n - 1)).map(|&(_, p)| p)
    }

    /// Selection keys.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        match cx.delta(a) {
            Some(d) => {
                let n = cx.sess().map_or(0, |s| Self::rows_at(s, cx.step()).len());
                self.sel = moved(self.sel, d, n);
                Vec::new()
            }
            None => fallback(a, cx),
        }
    }

    /// A click on the `row`-th of the `inner` lines inside the pane's borders.
    pub fn on_click(&mut self, row: usize, inner: usize, cx: &mut Cx) {
        // The first line is the table's header.
        let page = inner.saturating_sub(1);
        let Some(row) = row.checked_sub(1) else {
            return;
        };
        let n = cx.sess().map_or(0, |s| Self::rows_at(s, cx.step()).len());
        let first = visible(self.sel, n, page).0;
        if first + row < n {
            self.sel = first + row;
        }
    }

    /// Draws the pane.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        let th = app.theme.clone();
        let Some(s) = app.sess() else {
            f.render_widget(block(app, Pane::Verify, String::new()), area);
            return;
        };
        let total = Self::rows_at(s, app.step()).len();
        let b = block(app, Pane::Verify, format!("{total} "));
        let inner = b.inner(area);
        f.render_widget(b, area);
        let h = usize::from(inner.height.saturating_sub(1));
        let sel = self.sel.min(total.saturating_sub(1));
        let (start, end) = visible(sel, total, h);
        // Newest first; only the visible rows are copied out.
        let rows: Vec<(u32, u32)> = match app.sess() {
            Some(s) => {
                let all = Self::rows_at(s, app.step());
                (start..end).map(|k| all[total - 1 - k]).collect()
            }
            None => Vec::new(),
        };
        let mut out = Vec::new();
        for (k, &(step, pos)) in (start..end).zip(&rows) {
            let Some(Event {
                body: Body::Verify(v),
                ..
            }) = app.store.event(pos)
            else {
                continue;
            };
            let claimed = v
                .outcome
                .as_ref()
                .map(enum_name)
                .unwrap_or_else(|| "–".into());
            let cst = match claimed.as_str() {
                "contradiction" => th.error,
                "entailed" => th.ok,
                "ungrounded" => th.warn,
                _ => th.text,
            };
            let formulas = v.all_formulas().collect::<Vec<_>>().join(", ");
            let mut row = Row::new(vec![
                Cell::from(Span::styled(step.to_string(), th.dim)),
                Cell::from(Line::from(spans(&formulas, th.text, th.marker))),
                Cell::from(Span::styled(claimed, cst)),
                recomputed_cell(app, &th, pos),
                Cell::from(Line::from(spans(
                    &v.tier.as_deref().map(json_text).unwrap_or_default(),
                    th.dim,
                    th.marker,
                ))),
                Cell::from(Line::from(spans(
                    v.method.as_deref().unwrap_or(""),
                    th.dim,
                    th.marker,
                ))),
            ]);
            if k == sel && app.focus == Pane::Verify {
                row = row.style(th.selection);
            }
            out.push(row);
        }
        let table = Table::new(
            out,
            [
                Constraint::Length(5),
                Constraint::Fill(1),
                Constraint::Length(13),
                Constraint::Length(16),
                Constraint::Length(5),
                Constraint::Length(14),
            ],
        )
        .header(
            Row::new(["step", "formula", "claimed", "recomputed", "tier", "method"])
                .style(th.dim.add_modifier(Modifier::BOLD)),
        );
        f.render_widget(table, inner);
    }
}

/// The "recomputed" cell: the solver's verdict, marked `≠` in the error style when the
/// claim disagrees; `…` while the recomputation runs.
fn recomputed_cell(app: &App, th: &Theme, pos: u32) -> Cell<'static> {
    match app
        .view()
        .analysis
        .as_ref()
        .and_then(|v| v.by_pos.get(&pos))
    {
        Some(v) => match v.agrees {
            Some(false) => Cell::from(Span::styled(format!("≠ {}", v.outcome), th.error)),
            Some(true) => Cell::from(Span::styled(format!("= {}", v.outcome), th.ok)),
            None if v.outcome == crate::tui::audit_job::NOT_CHECKABLE => {
                Cell::from(Span::styled(format!("? {}", v.outcome), th.warn))
            }
            None => Cell::from(Line::from(spans(&v.outcome, th.dim, th.marker))),
        },
        None if app.recomputing() => Cell::from(Span::styled("…", th.dim)),
        None => Cell::from(Span::styled("– (R)", th.dim)),
    }
}
