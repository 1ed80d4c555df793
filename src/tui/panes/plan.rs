//! The plan pane: the intention, its goal and satisfaction, and the latest plan as a DAG
//! whose nodes show what was verified (see [`crate::model::bdi`]).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Cx, Scroll, block, fallback, json_text};
use crate::model::bdi::{PostCheck, StepView};
use crate::sanitize::sanitize;
use crate::trace::{Body, Event};
use crate::tui::app::{App, Effect, Pane};
use crate::tui::dag::{self, Node, Status};
use crate::tui::data::{SessionData, Store, enum_name};
use crate::tui::keys::Action;
use crate::tui::text::spans;
use crate::tui::theme::Theme;

/// The plan pane's state: its scroll.
#[derive(Debug, Default)]
pub struct PlanPane {
    /// The scroll.
    pub scroll: Scroll,
}

impl PlanPane {
    /// The selection keys scroll.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        match cx.delta(a) {
            Some(d) => {
                self.scroll.by(d);
                Vec::new()
            }
            None => fallback(a, cx),
        }
    }

    /// Draws the pane.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        let th = app.theme.clone();
        let b = block(app, Pane::Plan, String::new());
        let inner = b.inner(area);
        f.render_widget(b, area);
        let Some(s) = app.sess() else { return };
        let t = app.step();
        let mut lines: Vec<Line> = Vec::new();
        let bl = s.tl.bdi_log();
        let intention = SessionData::upto(&bl.intentions, t)
            .last()
            .and_then(|&(_, p)| match app.store.event(p) {
                Some(
                    ev @ Event {
                        body: Body::Intention(i),
                        ..
                    },
                ) => Some((ev, i)),
                _ => None,
            });
        if let Some((ev, i)) = intention {
            let mut l = vec![Span::styled("intention ", th.dim)];
            l.extend(spans(ev.id.as_deref().unwrap_or(""), th.accent, th.marker));
            l.push(Span::raw(" "));
            l.extend(spans(
                i.intention_type.as_deref().unwrap_or(""),
                th.text,
                th.marker,
            ));
            lines.push(Line::from(l));
            if let Some(g) = &i.goal {
                let mut l = vec![Span::styled("goal ", th.dim)];
                l.extend(spans(&json_text(g), th.text, th.marker));
                lines.push(Line::from(l));
            }
            if let Some(g) = &i.satisfaction {
                let mut l = vec![Span::styled("satisfied when ", th.dim)];
                l.extend(spans(&json_text(g), th.text, th.marker));
                lines.push(Line::from(l));
            }
            let sat = SessionData::upto(&bl.satisfactions, t)
                .iter()
                .rev()
                .find_map(|&(_, p)| match app.store.event(p).map(|e| &e.body) {
                    Some(Body::Satisfaction(x)) => x.ok,
                    _ => None,
                });
            if let Some(ok) = sat {
                lines.push(Line::from(Span::styled(
                    if ok {
                        "satisfaction: met"
                    } else {
                        "satisfaction: NOT met"
                    },
                    if ok { th.ok } else { th.error },
                )));
            }
        }
        match plan_at(&app.store, s, t) {
            None => {
                if lines.is_empty() {
                    lines.push(Line::from(Span::styled(
                        "no intention or plan at this step",
                        th.dim,
                    )));
                }
            }
            Some((id, nodes)) => {
                let mut l = vec![Span::styled("plan ", th.dim)];
                l.extend(spans(&id, th.accent, th.marker));
                l.push(Span::styled(format!("  {}", plan_tally(&nodes)), th.dim));
                lines.push(Line::from(l));
                match dag::layout(&nodes, inner.width) {
                    Some(d) => {
                        for row in d {
                            let mut v = Vec::new();
                            let mut col = 0u16;
                            for p in row {
                                if p.x > col {
                                    v.push(Span::raw(" ".repeat(usize::from(p.x - col))));
                                    col = p.x;
                                }
                                col = col.saturating_add(Span::raw(p.text.as_str()).width() as u16);
                                let st = match p.node {
                                    Some(i) => status_style(&th, nodes[i].status),
                                    None => th.dim,
                                };
                                v.push(Span::styled(p.text, st));
                            }
                            lines.push(Line::from(v));
                        }
                    }
                    None => {
                        // Narrow fallback: one line per step.
                        for n in &nodes {
                            let mut v =
                                vec![Span::styled(dag::label(n), status_style(&th, n.status))];
                            if !n.deps.is_empty() {
                                v.push(Span::styled(format!(" ← {}", n.deps.join(", ")), th.dim));
                            }
                            lines.push(Line::from(v));
                        }
                    }
                }
            }
        }
        let top = self.scroll.shown(lines.len(), usize::from(inner.height));
        let p = Paragraph::new(lines).scroll((top as u16, 0));
        f.render_widget(p, inner);
    }
}

/// The plan of the latest `plan` event at step `t`, with step statuses at `t`, from the
/// model's BDI log.
pub fn plan_at(store: &Store, s: &SessionData, t: u32) -> Option<(String, Vec<Node>)> {
    let bl = s.tl.bdi_log();
    // Only the latest plan and the step reports after it: the cost does not grow with the
    // run's history.
    let k = bl.plans.partition_point(|p| p.step <= t).checked_sub(1)?;
    let rec = &bl.plans[k];
    let Some(Body::Plan(plan)) = store.event(rec.event).map(|e| &e.body) else {
        return None;
    };
    let mut views: Vec<StepView> = plan.steps.iter().map(StepView::pending).collect();
    // A report naming no plan is about the current one.
    let ours = |r: Option<u32>, named: bool| r == Some(k as u32) || !named;
    let steps = &bl.steps[bl.steps.partition_point(|r| r.step <= rec.step)
        ..bl.steps.partition_point(|r| r.step <= t)];
    for r in steps {
        if let Some(Event {
            body: Body::Step(st),
            ..
        }) = store.event(r.event)
            && ours(r.plan, st.plan.is_some())
            && let Some(sv) = st
                .step
                .as_deref()
                .and_then(|id| views.iter_mut().find(|v| v.def.id == id))
        {
            sv.apply(st, r.step, r.event);
        }
    }
    let posts = &bl.postconditions[bl.postconditions.partition_point(|r| r.step <= rec.step)
        ..bl.postconditions.partition_point(|r| r.step <= t)];
    for r in posts {
        if let Some(Event {
            body: Body::Postcondition(pc),
            ..
        }) = store.event(r.event)
            && ours(r.plan, pc.plan.is_some())
            && let Some(sv) = pc
                .step
                .as_deref()
                .and_then(|id| views.iter_mut().find(|v| v.def.id == id))
        {
            sv.checks.push(PostCheck {
                tier: pc.tier,
                ok: pc.ok,
                failure_mode: pc.failure_mode.as_deref(),
                program: pc.program.as_deref(),
                step: r.step,
                event: r.event,
            });
        }
    }
    let nodes = views
        .iter()
        .map(|sv| Node {
            id: sanitize(&sv.def.id),
            kind: sv
                .def
                .kind
                .as_ref()
                .map(|k| sanitize(&enum_name(k)))
                .unwrap_or_default(),
            deps: sv.def.deps.iter().map(|d| sanitize(d)).collect(),
            status: sv.verdict_given(bl.recompute_post(sv)),
        })
        .collect();
    Some((rec.id.clone(), nodes))
}

/// The plan line's tally: verified steps out of all, then every other outcome that occurs
/// ("2/5 verified, 1 disputed"), so a claim nobody checked is never counted as done.
pub fn plan_tally(nodes: &[Node]) -> String {
    let count = |s: Status| nodes.iter().filter(|n| n.status == s).count();
    let mut out = format!("{}/{} verified", count(Status::Passed), nodes.len());
    for s in [
        Status::Disputed,
        Status::Failed,
        Status::SelfReported,
        Status::Unchecked,
        Status::Running,
    ] {
        let c = count(s);
        if c > 0 {
            out.push_str(&format!(", {c} {}", s.as_str()));
        }
    }
    out
}

fn status_style(th: &Theme, s: Status) -> Style {
    match s {
        Status::Pending => th.pending,
        Status::Running => th.running.add_modifier(Modifier::REVERSED),
        Status::Passed => th.ok,
        Status::SelfReported | Status::Unchecked => th.running,
        Status::Disputed => th.error.add_modifier(Modifier::BOLD),
        Status::Failed => th.error,
    }
}
