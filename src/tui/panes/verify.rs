//! The verification pane: every `verify` claim, `postcondition` record and `satisfaction`
//! record up to the selected step, newest first, with the audit's recomputed verdict beside
//! the agent's (for the records: their condition re-run, [`crate::model::condition`]).

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Cell, Row, Table};

use super::{Cx, block, fallback, json_text, moved, visible};
use crate::sanitize::sanitize;
use crate::trace::{Body, Event};
use crate::tui::app::{App, Effect, Pane};
use crate::tui::data::{SessionData, enum_name};
use crate::tui::keys::Action;
use crate::tui::text::distinct_cuts;
use crate::tui::theme::Theme;

/// The verification pane's state: its selection (0 is the newest claim).
#[derive(Debug, Default)]
pub struct VerifyPane {
    /// The selected row.
    pub sel: usize,
}

/// The claims up to a step: three logs, each in step order, merged only as far as a frame
/// reads them (the newest first), so a frame costs the rows it shows, not the session.
struct Claims<'a> {
    verifies: &'a [(u32, u32)],
    posts: &'a [crate::model::bdi::StepRef],
    satisfactions: &'a [(u32, u32)],
}

impl Claims<'_> {
    fn len(&self) -> usize {
        self.verifies.len() + self.posts.len() + self.satisfactions.len()
    }

    /// The claims as (step, event), newest first: the order a sort of all three gives,
    /// reversed.
    fn newest_first(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let (mut a, mut b, mut c) = (
            self.verifies.len(),
            self.posts.len(),
            self.satisfactions.len(),
        );
        std::iter::from_fn(move || {
            let va = a.checked_sub(1).map(|i| self.verifies[i]);
            let vb = b
                .checked_sub(1)
                .map(|i| (self.posts[i].step, self.posts[i].event));
            let vc = c.checked_sub(1).map(|i| self.satisfactions[i]);
            let top = va.max(vb).max(vc)?;
            if va == Some(top) {
                a -= 1;
            } else if vb == Some(top) {
                b -= 1;
            } else {
                c -= 1;
            }
            Some(top)
        })
    }
}

impl VerifyPane {
    /// Claims up to step `t`: `verify` events, and the `postcondition` and `satisfaction`
    /// records, in step order.
    fn rows_at(s: &SessionData, t: u32) -> Claims<'_> {
        let bl = s.tl.bdi_log();
        Claims {
            verifies: SessionData::upto(s.tl.verifies(), t),
            posts: &bl.postconditions[..bl.postconditions.partition_point(|r| r.step <= t)],
            satisfactions: SessionData::upto(&bl.satisfactions, t),
        }
    }

    /// The log position of the selected claim at step `t`.
    pub fn selected_event(&self, s: &SessionData, t: u32) -> Option<u32> {
        let rows = Self::rows_at(s, t);
        let n = rows.len();
        if n == 0 {
            return None;
        }
        rows.newest_first().nth(self.sel.min(n - 1)).map(|(_, p)| p)
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
        // Newest first; only the rows up to the last visible one are walked.
        let rows: Vec<(u32, u32)> = Self::rows_at(s, app.step())
            .newest_first()
            .skip(start)
            .take(end - start)
            .collect();
        let mut cols = Columns::default();
        for &(step, pos) in &rows {
            let Some(row) = app.store.event(pos).and_then(|e| claim_row(e, &th)) else {
                continue;
            };
            cols.step.push(step.to_string());
            cols.formula.push(row.formula);
            cols.claimed.push(row.claimed);
            cols.recomputed.push(recomputed(app, &th, pos));
            cols.tier.push(row.tier);
            cols.method.push(row.method);
        }
        let widths = cols.widths(inner.width);
        let formulas = distinct_cuts(&cols.formula, usize::from(widths[1]));
        let mut out = Vec::new();
        for (i, k) in (start..end).take(cols.step.len()).enumerate() {
            let (claimed, cst) = cols.claimed[i].clone();
            let (rec, rst) = cols.recomputed[i].clone();
            let cells = [
                Span::styled(cols.step[i].clone(), th.dim),
                Span::styled(formulas[i].clone(), th.text),
                Span::styled(claimed, cst),
                Span::styled(rec, rst),
                Span::styled(cols.tier[i].clone(), th.dim),
                Span::styled(cols.method[i].clone(), th.dim),
            ];
            // A dropped column takes no cell (nor the space between columns).
            let mut row = Row::new(
                cells
                    .into_iter()
                    .zip(widths)
                    .filter(|(_, w)| *w > 0)
                    .map(|(c, _)| Cell::from(c)),
            );
            if k == sel && app.focus == Pane::Verify {
                row = row.style(th.selection);
            }
            out.push(row);
        }
        let shown = widths.into_iter().filter(|w| *w > 0);
        let titles = HEADERS.into_iter().zip(widths).filter(|(_, w)| *w > 0);
        let table = Table::new(out, shown.map(Constraint::Length))
            .header(Row::new(titles.map(|(t, _)| t)).style(th.dim.add_modifier(Modifier::BOLD)));
        f.render_widget(table, inner);
    }
}

/// What a claim's row shows of its event (sanitized).
struct ClaimRow {
    formula: String,
    claimed: (String, Style),
    tier: String,
    method: String,
}

/// A `verify` claim, or a `postcondition` or `satisfaction` record, as a row.
fn claim_row(e: &Event, th: &Theme) -> Option<ClaimRow> {
    let met = |ok: Option<bool>| match ok {
        Some(true) => ("met".to_string(), th.ok),
        Some(false) => ("not met".to_string(), th.error),
        None => ("–".to_string(), th.text),
    };
    Some(match &e.body {
        Body::Verify(v) => {
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
            ClaimRow {
                formula: sanitize(&v.all_formulas().collect::<Vec<_>>().join(", ")),
                claimed: (claimed, cst),
                tier: sanitize(&v.tier.as_deref().map(json_text).unwrap_or_default()),
                method: sanitize(v.method.as_deref().unwrap_or("")),
            }
        }
        Body::Postcondition(p) => {
            let at = format!(
                "{}/{}",
                p.plan.as_deref().unwrap_or("?"),
                p.step.as_deref().unwrap_or("?")
            );
            ClaimRow {
                formula: sanitize(
                    &p.program
                        .as_deref()
                        .map_or_else(|| format!("post of {at}"), str::to_string),
                ),
                claimed: met(p.ok),
                tier: p.tier.map(|t| t.to_string()).unwrap_or_default(),
                method: sanitize(&format!("postcondition {at}")),
            }
        }
        Body::Satisfaction(x) => ClaimRow {
            formula: sanitize(&format!(
                "satisfaction of {}",
                x.intention.as_deref().unwrap_or("the intention")
            )),
            claimed: met(x.ok),
            tier: String::new(),
            method: "satisfaction".to_string(),
        },
        _ => return None,
    })
}

/// The pane's column titles.
const HEADERS: [&str; 6] = ["step", "formula", "claimed", "recomputed", "tier", "method"];

/// The visible rows' cells by column (sanitized), to size the columns by what they hold.
#[derive(Default)]
struct Columns {
    step: Vec<String>,
    formula: Vec<String>,
    claimed: Vec<(String, Style)>,
    recomputed: Vec<(String, Style)>,
    tier: Vec<String>,
    method: Vec<String>,
}

impl Columns {
    /// The columns' widths in `width` cells: each as wide as its title and widest cell, an
    /// empty `tier` or `method` column dropped, and the formula given the rest; when that
    /// leaves the formula less than it needs (up to 20 cells), `method` then `tier` go first,
    /// then the verdicts are narrowed.
    fn widths(&self, width: u16) -> [u16; 6] {
        let w = |title: &str, cells: &mut dyn Iterator<Item = &str>| -> u16 {
            let cells: Vec<&str> = cells.collect();
            if cells.iter().all(|c| c.is_empty()) && matches!(title, "tier" | "method") {
                return 0;
            }
            cells
                .iter()
                .map(|c| Span::raw(*c).width())
                .chain([title.len()])
                .max()
                .unwrap_or(0) as u16
        };
        let mut ws = [
            w(HEADERS[0], &mut self.step.iter().map(String::as_str)),
            w(HEADERS[1], &mut self.formula.iter().map(String::as_str)),
            w(HEADERS[2], &mut self.claimed.iter().map(|c| c.0.as_str())),
            w(
                HEADERS[3],
                &mut self.recomputed.iter().map(|c| c.0.as_str()),
            ),
            w(HEADERS[4], &mut self.tier.iter().map(String::as_str)),
            w(HEADERS[5], &mut self.method.iter().map(String::as_str)),
        ];
        let need = ws[1].min(20);
        let room = |ws: &[u16; 6]| -> u16 {
            let others: u16 = ws
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != 1)
                .map(|(_, w)| *w)
                .sum();
            // One cell between shown columns.
            let gaps = ws.iter().filter(|w| **w > 0).count().saturating_sub(1) as u16;
            width.saturating_sub(others + gaps)
        };
        for drop in [5, 4] {
            if room(&ws) >= need {
                break;
            }
            ws[drop] = 0;
        }
        // Still narrow: the verdicts give up cells (they stay recognisable cut) before the
        // formula goes below a few cells.
        let least = ws[1].min(8);
        for col in [3, 2] {
            let short = least.saturating_sub(room(&ws));
            ws[col] = ws[col].saturating_sub(short).max(6);
        }
        ws[1] = room(&ws);
        ws
    }
}

/// The "recomputed" cell: the solver's verdict, marked `≠` in the error style when the
/// claim disagrees; `…` while the recomputation runs.
fn recomputed(app: &App, th: &Theme, pos: u32) -> (String, Style) {
    match app
        .view()
        .analysis
        .as_ref()
        .and_then(|v| v.by_pos.get(&pos))
    {
        Some(v) => match v.agrees {
            Some(false) => (format!("≠ {}", v.outcome), th.error),
            Some(true) => (format!("= {}", v.outcome), th.ok),
            None if v.outcome == crate::tui::audit_job::NOT_CHECKABLE => {
                (format!("? {}", v.outcome), th.warn)
            }
            None => (sanitize(&v.outcome), th.dim),
        },
        None if app.recomputing() => ("…".into(), th.dim),
        None => ("– (R)".into(), th.dim),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::bdi::StepRef;
    use proptest::prelude::*;

    fn sorted(v: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
        let mut v = v;
        v.sort_unstable();
        v
    }

    proptest! {
        /// The lazy merge gives the rows a sort of all three logs gives, newest first.
        #[test]
        fn newest_first_is_the_sorted_claims_reversed(
            a in proptest::collection::vec((0u32..20, 0u32..200), 0..12),
            b in proptest::collection::vec((0u32..20, 0u32..200), 0..12),
            c in proptest::collection::vec((0u32..20, 0u32..200), 0..12),
        ) {
            let (a, b, c) = (sorted(a), sorted(b), sorted(c));
            let posts: Vec<StepRef> = b
                .iter()
                .map(|&(step, event)| StepRef { step, event, plan: None })
                .collect();
            let claims = Claims { verifies: &a, posts: &posts, satisfactions: &c };
            let mut want: Vec<(u32, u32)> = a.iter().chain(&b).chain(&c).copied().collect();
            want.sort_unstable();
            want.reverse();
            prop_assert_eq!(claims.len(), want.len());
            prop_assert_eq!(claims.newest_first().collect::<Vec<_>>(), want);
        }
    }
}
