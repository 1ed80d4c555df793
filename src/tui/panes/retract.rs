//! The retractions pane, two tabs (`←` `→`): **revisions**, the revisions and retractions up
//! to the selected step, newest first (Enter opens a revision's conflict set); and
//! **inconsistencies**, seed 000's inconsistency log up to the step: every announcement that
//! contradicted Σ, the conflict it met, and what resolved it (or that nothing has yet), from
//! the background audit's recomputation ([`crate::model::inconsistency`]).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Cx, block, fallback, moved, visible};
use crate::model::inconsistency::{Inconsistency, ResolvedBy};
use crate::trace::Body;
use crate::tui::app::{App, Effect, Pane, Purpose};
use crate::tui::audit_job::Analysis;
use crate::tui::data::{SessionData, enum_name};
use crate::tui::keys::Action;
use crate::tui::text::spans;

/// The retractions pane's tabs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum RetractTab {
    /// Revisions and retractions.
    #[default]
    Revisions,
    /// Seed 000's inconsistency log.
    Inconsistencies,
}

/// The retractions pane's state: its tab and selection (0 is the newest row).
#[derive(Debug, Default)]
pub struct RetractPane {
    /// The selected row.
    pub sel: usize,
    /// The tab shown.
    pub tab: RetractTab,
}

/// The inconsistency log's entries announced by step `t`, newest first.
pub fn inconsistencies_upto(a: Option<&Analysis>, t: u32) -> Vec<&Inconsistency> {
    a.map(|a| {
        a.inconsistencies
            .iter()
            .filter(|e| e.step <= t)
            .rev()
            .collect()
    })
    .unwrap_or_default()
}

impl RetractPane {
    /// Rows of the tab shown at step `t`.
    fn rows(&self, s: &SessionData, t: u32, a: Option<&Analysis>) -> usize {
        match self.tab {
            RetractTab::Revisions => s.revisions_upto(t),
            RetractTab::Inconsistencies => inconsistencies_upto(a, t).len(),
        }
    }

    /// The log position of the selected row at step `t` (an inconsistency row: its
    /// announcement).
    pub fn selected_event(&self, s: &SessionData, t: u32, a: Option<&Analysis>) -> Option<u32> {
        let n = self.rows(s, t, a);
        let k = self.sel.min(n.saturating_sub(1));
        match self.tab {
            RetractTab::Revisions => s.revision_newest(t, k).map(|(_, p)| p),
            RetractTab::Inconsistencies => inconsistencies_upto(a, t).get(k).map(|e| e.event),
        }
    }

    /// Selection keys, `←` `→` for the tabs, and Enter.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        if let Some(d) = cx.delta(a) {
            let t = cx.step();
            let n = cx
                .sess()
                .map_or(0, |s| self.rows(s, t, cx.view.analysis.as_ref()));
            self.sel = moved(self.sel, d, n);
            return Vec::new();
        }
        match a {
            Action::ScrollLeft | Action::ScrollRight => {
                self.tab = match self.tab {
                    RetractTab::Revisions => RetractTab::Inconsistencies,
                    RetractTab::Inconsistencies => RetractTab::Revisions,
                };
                self.sel = 0;
                Vec::new()
            }
            Action::Enter if self.tab == RetractTab::Inconsistencies => {
                self.open_inconsistency(cx);
                Vec::new()
            }
            Action::Enter => self.open_selected(cx),
            _ => fallback(a, cx),
        }
    }

    /// Enter on an inconsistency: its conflict and what resolved it, as recomputed.
    fn open_inconsistency(&self, cx: &mut Cx) {
        let t = cx.step();
        let rows = inconsistencies_upto(cx.view.analysis.as_ref(), t);
        let Some(e) = rows.get(self.sel.min(rows.len().saturating_sub(1))) else {
            return;
        };
        let mut lines = vec![format!(
            "step {}: {} ({}) contradicted Σ{}",
            e.step,
            e.id,
            e.formula,
            if e.consistent_before {
                ""
            } else {
                ", which was inconsistent already"
            }
        )];
        if !e.conflict.is_empty() {
            lines.push(format!("a minimal conflict: {}", e.conflict.join(", ")));
        }
        lines.push(resolution_text(e, t));
        *cx.popup = Some(("inconsistency".to_string(), lines));
    }

    /// A click on the `row`-th of the `inner` lines inside the pane's borders.
    pub fn on_click(&mut self, row: usize, inner: usize, cx: &mut Cx) {
        let page = inner;
        let t = cx.step();
        let n = cx
            .sess()
            .map_or(0, |s| self.rows(s, t, cx.view.analysis.as_ref()));
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
            Some(Body::Belief(_) | Body::Step(_)) => {
                let mut lines = vec![format!(
                    "overwritten at step {step} by the write of a new value (a revision whose \
                     cause is that event):"
                )];
                lines.extend(overwrite_lines(&s.tl, step, pos));
                *cx.popup = Some(("overwrite".to_string(), lines));
                return Vec::new();
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
        if self.tab == RetractTab::Inconsistencies {
            return self.draw_inconsistencies(f, app, area);
        }
        let th = app.theme.clone();
        let Some(s) = app.sess() else {
            f.render_widget(block(app, Pane::Retract, String::new()), area);
            return;
        };
        let t = app.step();
        let total = s.revisions_upto(t);
        let b = block(
            app,
            Pane::Retract,
            format!("{total}  ‹revisions› inconsistencies "),
        );
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
                Body::Belief(_) | Body::Step(_) => {
                    v.push(Span::styled("overwrite ", th.warn));
                    let what = s
                        .map(|s| overwrite_lines(&s.tl, step, pos).join(", "))
                        .unwrap_or_default();
                    v.extend(spans(&what, th.retracted, th.marker));
                    if let Body::Step(st) = &ev.body {
                        v.push(Span::styled(" by step ", th.dim));
                        v.extend(spans(st.step.as_deref().unwrap_or("?"), th.text, th.marker));
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

impl RetractPane {
    fn draw_inconsistencies(&self, f: &mut Frame, app: &App, area: Rect) {
        let th = app.theme.clone();
        let t = app.step();
        let analysis = app.view().analysis.as_ref();
        let rows = inconsistencies_upto(analysis, t);
        let b = block(
            app,
            Pane::Retract,
            format!("{}  revisions ‹inconsistencies› ", rows.len()),
        );
        let inner = b.inner(area);
        f.render_widget(b, area);
        let sel = self.sel.min(rows.len().saturating_sub(1));
        let (start, end) = visible(sel, rows.len(), usize::from(inner.height));
        let mut lines = Vec::new();
        for (k, e) in rows.iter().enumerate().take(end).skip(start) {
            let mut v = vec![Span::styled(format!("{:>4} ", e.step), th.dim)];
            v.push(Span::styled("contradiction ", th.warn));
            v.extend(spans(&e.id, th.accent, th.marker));
            v.push(Span::raw(" "));
            v.extend(spans(&e.formula, th.text, th.marker));
            if !e.conflict.is_empty() {
                v.push(Span::styled(" conflict ", th.dim));
                v.extend(spans(&e.conflict.join(", "), th.text, th.marker));
            }
            v.push(Span::raw("  "));
            match e.resolved_by(t) {
                Some(_) => v.extend(spans(&resolution_text(e, t), th.ok, th.marker)),
                None => v.push(Span::styled(resolution_text(e, t), th.error)),
            }
            let mut line = Line::from(v);
            if k == sel && app.focus == Pane::Retract {
                line = line.style(th.selection);
            }
            lines.push(line);
        }
        if lines.is_empty() {
            let msg = match analysis {
                None => "inconsistency log: waiting for the audit (R runs it)",
                Some(_) => "no contradiction announced by this step",
            };
            lines.push(Line::from(Span::styled(msg, th.dim)));
        }
        f.render_widget(Paragraph::new(lines), inner);
    }
}

/// What resolved an inconsistency, as of step `t`, in words.
pub fn resolution_text(e: &Inconsistency, t: u32) -> String {
    match e.resolved_by(t) {
        None => format!("unresolved at step {t}"),
        Some(r) => {
            let how = match &r.by {
                ResolvedBy::Revision { policy } => format!(
                    "revision ({})",
                    policy.as_deref().unwrap_or("no policy named")
                ),
                ResolvedBy::Retraction => "retraction".to_string(),
                ResolvedBy::Overwrite => "an overwriting announcement".to_string(),
            };
            if r.retracted.is_empty() {
                format!("resolved at step {} by {how}", r.step)
            } else {
                format!(
                    "resolved at step {} by {how}, dropping {}",
                    r.step,
                    r.retracted.join(", ")
                )
            }
        }
    }
}

/// How a memory value changed, in one line: for multi-line text the lines taken out (`-`)
/// and put in (`+`); otherwise `old → new`; `old` alone when nothing was written after.
/// What the event at `pos` (step `step`) overwrote: `old formula → new formula` for each
/// ground belief whose value it replaced. The overwrites are in step order, so the event's
/// are found by a search, not a walk (a row is drawn on every frame).
fn overwrite_lines(tl: &crate::model::Timeline, step: u32, pos: u32) -> Vec<String> {
    let formula = |r: u32| {
        tl.ground_announce(r)
            .map(|a| a.formula.to_string())
            .unwrap_or_default()
    };
    let all = tl.overwrites();
    all[all.partition_point(|o| o.step < step)..]
        .iter()
        .take_while(|o| o.step == step)
        .filter(|o| o.event == pos)
        .map(|o| format!("{} → {}", formula(o.old), formula(o.new)))
        .collect()
}

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
