//! The retractions pane: revisions and retractions up to the selected step, newest first;
//! Enter opens a revision's conflict set.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Cx, block, fallback, moved, visible};
use crate::trace::Body;
use crate::tui::app::{App, Effect, Pane, Purpose};
use crate::tui::data::{SessionData, enum_name};
use crate::tui::keys::Action;
use crate::tui::text::spans;

/// The retractions pane's state: its selection (0 is the newest row).
#[derive(Debug, Default)]
pub struct RetractPane {
    /// The selected row.
    pub sel: usize,
}

impl RetractPane {
    /// The log position of the selected row at step `t`.
    pub fn selected_event(&self, s: &SessionData, t: u32) -> Option<u32> {
        let n = s.revisions_upto(t);
        s.revision_newest(t, self.sel.min(n.saturating_sub(1)))
            .map(|(_, p)| p)
    }

    /// Selection keys, and Enter.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        if let Some(d) = cx.delta(a) {
            let n = cx.sess().map_or(0, |s| s.revisions_upto(cx.step()));
            self.sel = moved(self.sel, d, n);
            return Vec::new();
        }
        match a {
            Action::Enter => self.open_selected(cx),
            _ => fallback(a, cx),
        }
    }

    /// A click on the `row`-th of the `inner` lines inside the pane's borders.
    pub fn on_click(&mut self, row: usize, inner: usize, cx: &mut Cx) {
        let page = inner;
        let n = cx.sess().map_or(0, |s| s.revisions_upto(cx.step()));
        let first = visible(self.sel, n, page).0;
        if first + row < n {
            self.sel = first + row;
        }
    }

    /// Enter on a revision: ask for the conflict set its trigger met just before it. On a
    /// `retract` row, the revision that retraction applies, if any. The question is a
    /// read-only `check` on the trace's Σ just before the trigger was announced, so opening a
    /// row never changes anything and gives the same answer in any order.
    fn open_selected(&mut self, cx: &mut Cx) -> Vec<Effect> {
        let t = cx.step();
        let Some(s) = cx.sess() else {
            return Vec::new();
        };
        let n = s.revisions_upto(t);
        let Some((step, pos)) = s.revision_newest(t, self.sel.min(n.saturating_sub(1))) else {
            return Vec::new();
        };
        let popup = |lines: Vec<String>| Some(("conflict set".to_string(), lines));
        // The revision this row is, or the one a `retract` row applies.
        let revision = match cx.store.event(pos).map(|e| &e.body) {
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
                        *cx.popup = popup(lines);
                        return Vec::new();
                    }
                }
            }
            _ => None,
        };
        let Some(rv) = revision else {
            *cx.popup = popup(vec!["no revision at this row".into()]);
            return Vec::new();
        };
        let trigger = match cx.store.event(rv.event).map(|e| &e.body) {
            Some(Body::Revise(r)) => r.trigger.clone(),
            _ => None,
        };
        // The trigger's record gives its formula and the step it entered Σ; a trigger that
        // names no record is taken as a formula, checked just before the revision.
        let found = rv.trigger_record.and_then(|i| {
            let b = s.tl.beliefs().get(i as usize)?;
            match cx.store.event(b.event).map(|e| &e.body) {
                Some(Body::Announce(a)) => Some((a.formula.clone(), b.announced)),
                _ => None,
            }
        });
        let (formula, at) = match (found, trigger) {
            (Some((f, announced)), _) => (f, announced),
            (None, Some(t)) => (t, rv.step.max(step)),
            (None, None) => {
                *cx.popup = popup(vec!["this revision names no trigger".into()]);
                return Vec::new();
            }
        };
        *cx.working = Some(format!("conflict set of {formula}"));
        vec![Effect::Run {
            line: format!("check {formula}"),
            step: u64::from(at.saturating_sub(1)),
            purpose: Purpose::Conflict,
        }]
    }

    /// Draws the pane.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        let th = app.theme.clone();
        let Some(s) = app.sess() else {
            f.render_widget(block(app, Pane::Retract, String::new()), area);
            return;
        };
        let t = app.step();
        let total = s.revisions_upto(t);
        let b = block(app, Pane::Retract, format!("{total} "));
        let inner = b.inner(area);
        f.render_widget(b, area);
        let h = usize::from(inner.height);
        let sel = self.sel.min(total.saturating_sub(1));
        let (start, end) = visible(sel, total, h);
        // Newest first; only the visible rows are copied out.
        let rows: Vec<(u32, u32)> = match app.sess() {
            Some(s) => s.revisions_newest(t, start, end - start),
            None => Vec::new(),
        };
        let s = app.sess();
        let mut lines = Vec::new();
        for (k, &(step, pos)) in (start..end).zip(&rows) {
            let Some(ev) = app.store.event(pos) else {
                continue;
            };
            let mut v = vec![Span::styled(format!("{step:>4} "), th.dim)];
            match &ev.body {
                Body::Revise(r) => {
                    v.push(Span::styled("revise ", th.warn));
                    v.push(Span::styled("trigger ", th.dim));
                    v.extend(spans(
                        r.trigger.as_deref().unwrap_or("?"),
                        th.text,
                        th.marker,
                    ));
                    v.push(Span::styled(" dropped ", th.dim));
                    v.extend(spans(&r.retracted.join(", "), th.retracted, th.marker));
                    v.push(Span::styled(" policy ", th.dim));
                    v.extend(spans(
                        r.policy.as_deref().unwrap_or("–"),
                        th.text,
                        th.marker,
                    ));
                    if ev.extra.value("fallback").and_then(|x| x.as_bool()) == Some(true) {
                        v.push(Span::styled(" fallback", th.warn));
                    }
                    // The model links each revise to the retracts that carried it out: what it
                    // listed and no retract has applied by this step is still pending.
                    let pending = s
                        .map(|s| revision_pending(app, s, step, t))
                        .unwrap_or_default();
                    if !pending.is_empty() {
                        v.push(Span::styled(" pending ", th.warn));
                        v.extend(spans(&pending.join(", "), th.warn, th.marker));
                    }
                }
                Body::Retract(r) => {
                    v.push(Span::styled("retract ", th.error));
                    v.extend(spans(&r.target, th.retracted, th.marker));
                    if let Some(by) = &r.by {
                        v.push(Span::styled(format!(" by {}", enum_name(by)), th.dim));
                    }
                    let entry = s.and_then(|s| {
                        let rt = s.tl.retracts();
                        let i = rt.binary_search_by_key(&step, |e| e.step).ok()?;
                        Some((s, rt[i].clone()))
                    });
                    // A memory edit: what changed from the value it took back to the value
                    // written next (the lines of a multi-line block), or the old value.
                    let was = entry.as_ref().and_then(|(s, e)| {
                        let bdi = s.tl.bdi_log();
                        let g = bdi.retracted(&app.store.log, e.ground?)?;
                        let old = g.value.map(crate::trace::import::write::as_text);
                        let next = bdi
                            .history(&app.store.log, g.name, s.tl.len())
                            .into_iter()
                            .find(|w| w.step > e.step)
                            .and_then(|w| w.value.map(crate::trace::import::write::as_text));
                        Some(edit_summary(old.as_deref().unwrap_or(""), next.as_deref()))
                    });
                    let dangling = entry
                        .as_ref()
                        .is_some_and(|(_, e)| e.record.is_none() && e.ground.is_none());
                    if let Some(was) = &was {
                        v.push(Span::styled(" ", th.dim));
                        v.extend(spans(was, th.retracted, th.marker));
                    }
                    if let Some(reason) = &r.reason {
                        // After the old value, a separator tells the two apart.
                        v.push(Span::styled(
                            if was.is_some() { " · " } else { " " },
                            th.dim,
                        ));
                        v.extend(spans(reason, th.dim, th.marker));
                    }
                    if dangling {
                        v.push(Span::styled(" (names no active belief)", th.error));
                    }
                }
                _ => {}
            }
            let mut line = Line::from(v);
            if k == sel && app.focus == Pane::Retract {
                line = line.style(th.selection);
            }
            lines.push(line);
        }
        if lines.is_empty() {
            lines.push(Line::from(Span::styled(
                "no revisions at this step",
                th.dim,
            )));
        }
        f.render_widget(Paragraph::new(lines), inner);
    }
}

/// How a memory value changed, in one line: for multi-line text the lines taken out (`-`)
/// and put in (`+`); otherwise `old → new`; `old` alone when nothing was written after.
pub(crate) fn edit_summary(old: &str, new: Option<&str>) -> String {
    let Some(new) = new else {
        return old.to_string();
    };
    if !old.contains('\n') && !new.contains('\n') {
        return format!("{old} → {new}");
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut parts: Vec<String> = a
        .iter()
        .filter(|l| !l.trim().is_empty() && !b.contains(l))
        .map(|l| format!("- {l}"))
        .collect();
    parts.extend(
        b.iter()
            .filter(|l| !l.trim().is_empty() && !a.contains(l))
            .map(|l| format!("+ {l}")),
    );
    if parts.is_empty() {
        "(whitespace only)".to_string()
    } else {
        parts.join("; ")
    }
}

/// What the `revise` at `step` listed that no retract had applied by step `t` (from the
/// model's retraction log).
fn revision_pending(app: &App, s: &SessionData, step: u32, t: u32) -> Vec<String> {
    let rv = s.tl.revisions();
    let Ok(i) = rv.binary_search_by_key(&step, |e| e.step) else {
        return Vec::new();
    };
    let e = &rv[i];
    let later = e.retracts.iter().filter_map(|&ri| {
        let r = s.tl.retracts().get(ri as usize)?;
        match app.store.event(r.event).map(|ev| &ev.body) {
            Some(Body::Retract(x)) if r.step > t => Some(x.target.to_string()),
            _ => None,
        }
    });
    e.unapplied.iter().cloned().chain(later).collect()
}
