//! The plan pane: seed 004's whole BDI state at the selected step, in three tabs (`←` `→`):
//!
//! - **plan**: the intention, its goal, open parameters and satisfaction (the record beside
//!   the condition re-run, [`crate::model::condition`]), and the latest plan as a DAG whose
//!   nodes show what was verified (see [`crate::model::bdi`]), then each step's
//!   description, postcondition and tier with the postcondition re-run at the step shown;
//! - **beliefs**: schema beliefs, desires, and every ground belief with its value, unit,
//!   source and the history of its writes (upserts by name);
//! - **library**: the plan library with use / success / failure counts, versions and the
//!   latest review decision of each plan, every review decision, and the satisfaction
//!   records.
//!
//! The same state `export --format json` writes under `"bdi"` ([`crate::model::bdi::state_at`]).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Cx, Scroll, block, fallback, json_text};
use crate::model::bdi::{PostCheck, StepView};
use crate::model::condition::{Rerun, rerun_any};
use crate::sanitize::sanitize;
use crate::trace::{Body, Event};
use crate::tui::app::{App, Effect, Pane};
use crate::tui::dag::{self, Node, Status};
use crate::tui::data::{SessionData, Store, enum_name};
use crate::tui::keys::Action;
use crate::tui::text::spans;
use crate::tui::theme::Theme;

/// The plan pane's tabs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum PlanTab {
    /// The intention and the plan DAG.
    #[default]
    Plan,
    /// Schema beliefs, desires, ground beliefs with their history.
    Beliefs,
    /// The plan library, reviews and satisfaction records.
    Library,
}

impl PlanTab {
    const ALL: [PlanTab; 3] = [PlanTab::Plan, PlanTab::Beliefs, PlanTab::Library];

    fn name(self) -> &'static str {
        match self {
            PlanTab::Plan => "plan",
            PlanTab::Beliefs => "beliefs",
            PlanTab::Library => "library",
        }
    }
}

/// The plan pane's state: its tab and scroll.
#[derive(Debug, Default)]
pub struct PlanPane {
    /// The scroll.
    pub scroll: Scroll,
    /// The tab shown.
    pub tab: PlanTab,
}

impl PlanPane {
    /// The selection keys scroll; `←` `→` switch the tab.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        let step = match a {
            Action::ScrollRight => 1,
            Action::ScrollLeft => PlanTab::ALL.len() - 1,
            _ => 0,
        };
        if step > 0 {
            let i = PlanTab::ALL
                .iter()
                .position(|x| *x == self.tab)
                .unwrap_or(0);
            self.tab = PlanTab::ALL[(i + step) % PlanTab::ALL.len()];
            self.scroll.top = 0;
            return Vec::new();
        }
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
        let tabs: Vec<String> = PlanTab::ALL
            .iter()
            .map(|x| {
                if *x == self.tab {
                    format!("‹{}›", x.name())
                } else {
                    x.name().to_string()
                }
            })
            .collect();
        let b = block(app, Pane::Plan, format!(" {} ", tabs.join(" ")));
        let inner = b.inner(area);
        f.render_widget(b, area);
        let Some(s) = app.sess() else { return };
        let t = app.step();
        let lines = match self.tab {
            PlanTab::Plan => plan_lines(app, s, t, inner.width, &th),
            PlanTab::Beliefs => belief_lines(app, s, t, &th),
            PlanTab::Library => library_lines(app, s, t, &th),
        };
        let top = self.scroll.shown(lines.len(), usize::from(inner.height));
        let p = Paragraph::new(lines).scroll((top as u16, 0));
        f.render_widget(p, inner);
    }
}

/// A section heading.
fn heading(th: &Theme, text: String) -> Line<'static> {
    Line::from(Span::styled(text, th.accent))
}

/// The beliefs tab: schema beliefs, desires, ground beliefs with every write.
fn belief_lines(app: &App, s: &SessionData, t: u32, th: &Theme) -> Vec<Line<'static>> {
    let bl = s.tl.bdi_log();
    let st = crate::model::bdi::state_at(bl, &app.store.log, t);
    let mut lines = Vec::new();
    lines.push(heading(
        th,
        format!("schema beliefs ({})", st.schema_beliefs.len()),
    ));
    for b in &st.schema_beliefs {
        let mut l = vec![Span::raw("  ")];
        l.extend(spans(b, th.text, th.marker));
        lines.push(Line::from(l));
    }
    lines.push(heading(th, format!("desires ({})", st.desires.len())));
    for d in &st.desires {
        let mut l = vec![Span::raw("  ")];
        l.extend(spans(d, th.text, th.marker));
        lines.push(Line::from(l));
    }
    lines.push(heading(th, format!("ground beliefs ({})", st.ground.len())));
    for g in &st.ground {
        let value = |v: Option<&serde_json::Value>, unit: Option<&str>| {
            let mut x = v.map_or_else(|| "?".to_string(), json_text);
            if let Some(u) = unit {
                x.push(' ');
                x.push_str(u);
            }
            x
        };
        let mut l = vec![Span::raw("  ")];
        l.extend(spans(g.name, th.accent, th.marker));
        l.push(Span::styled(" = ", th.dim));
        l.extend(spans(&value(g.value, g.unit), th.text, th.marker));
        let mut meta = match g.source {
            Some(src) => format!("  {src}, step {}", g.step),
            None => format!("  step {}", g.step),
        };
        if g.from_step_event {
            meta.push_str(", by a plan step");
        }
        if g.writes > 1 {
            meta.push_str(&format!(", {} writes", g.writes));
        }
        l.extend(spans(&meta, th.dim, th.marker));
        lines.push(Line::from(l));
        if g.writes > 1 {
            let hist = bl.history(&app.store.log, g.name, t);
            let earlier: Vec<String> = hist[..hist.len().saturating_sub(1)]
                .iter()
                .map(|h| format!("{} at step {}", value(h.value, h.unit), h.step))
                .collect();
            let mut l = vec![Span::styled("    before: ", th.dim)];
            l.extend(spans(&earlier.join(" → "), th.dim, th.marker));
            lines.push(Line::from(l));
        }
    }
    if st.schema_beliefs.is_empty() && st.desires.is_empty() && st.ground.is_empty() {
        lines.push(Line::from(Span::styled(
            "no BDI belief at this step",
            th.dim,
        )));
    }
    lines
}

/// The library tab: each plan with its counters and latest review, every review decision,
/// and the satisfaction records.
fn library_lines(app: &App, s: &SessionData, t: u32, th: &Theme) -> Vec<Line<'static>> {
    let st = crate::model::bdi::state_at(s.tl.bdi_log(), &app.store.log, t);
    let mut lines = Vec::new();
    lines.push(heading(th, format!("plan library ({})", st.library.len())));
    let n = |x: Option<u64>| x.map_or_else(|| "–".to_string(), |v| v.to_string());
    for e in &st.library {
        let mut l = vec![Span::raw("  ")];
        l.extend(spans(e.id, th.accent, th.marker));
        let origin = e.origin.map_or_else(|| "–".to_string(), |o| enum_name(&o));
        l.push(Span::styled(
            format!(
                "  {origin}, {} version{}  used {}  succeeded {}  failed {}",
                e.versions,
                if e.versions == 1 { "" } else { "s" },
                n(e.use_count),
                n(e.success_count),
                n(e.failure_count)
            ),
            th.text,
        ));
        if let Some(d) = e.decision {
            l.push(Span::styled(
                format!("  review: {}", enum_name(&d.action)),
                th.warn,
            ));
        }
        lines.push(Line::from(l));
    }
    lines.push(heading(
        th,
        format!("review decisions ({})", st.reviews.len()),
    ));
    for (step, d) in &st.reviews {
        let mut l = vec![Span::styled(format!("  {step:>4} "), th.dim)];
        l.extend(spans(
            d.plan.as_deref().unwrap_or("?"),
            th.accent,
            th.marker,
        ));
        l.push(Span::styled(format!(" {}", enum_name(&d.action)), th.warn));
        if let Some(note) = &d.note {
            l.push(Span::styled(": ", th.dim));
            l.extend(spans(note, th.text, th.marker));
        }
        lines.push(Line::from(l));
    }
    lines.push(heading(
        th,
        format!("satisfaction ({})", st.satisfaction.len()),
    ));
    for x in &st.satisfaction {
        let mut l = vec![Span::styled(format!("  {:>4} ", x.step), th.dim)];
        l.extend(spans(x.intention.unwrap_or("?"), th.accent, th.marker));
        let (word, style) = match x.ok {
            Some(true) => (" met", th.ok),
            Some(false) => (" NOT met", th.error),
            None => (" no verdict", th.dim),
        };
        l.push(Span::styled(word, style));
        lines.push(Line::from(l));
    }
    lines
}

/// The plan tab: the intention, its goal and satisfaction, the latest plan's DAG.
fn plan_lines(app: &App, s: &SessionData, t: u32, width: u16, th: &Theme) -> Vec<Line<'static>> {
    let th = th.clone();
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
        // A failed run says so in words and a glyph, not only in colour.
        if let Some(f) = crate::model::failure::failure_of(ev) {
            let mut l = vec![Span::styled("✗ FAILED ", th.error)];
            l.extend(spans(&f.message, th.error, th.marker));
            lines.push(Line::from(l));
        }
        if let Some(g) = &i.goal {
            let mut l = vec![Span::styled("goal ", th.dim)];
            l.extend(spans(&json_text(g), th.text, th.marker));
            lines.push(Line::from(l));
        }
        if let Some(p) = &i.open_parameters {
            let mut l = vec![Span::styled("open parameters ", th.dim)];
            l.extend(spans(&list_text(p), th.text, th.marker));
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
            .find_map(|&(step, p)| match app.store.event(p).map(|e| &e.body) {
                Some(Body::Satisfaction(x)) => x.ok.map(|ok| (step, ok)),
                _ => None,
            });
        if let Some((step, ok)) = sat {
            let mut l = vec![Span::styled(
                if ok {
                    "satisfaction: met"
                } else {
                    "satisfaction: NOT met"
                },
                if ok { th.ok } else { th.error },
            )];
            // The claim beside doxascope's own re-run of the condition at that step.
            let rerun = i
                .satisfaction
                .as_deref()
                .and_then(serde_json::Value::as_str)
                .and_then(|c| rerun_any(c, bl, &app.store.log, step));
            if let Some((_, r)) = rerun {
                l.extend(rerun_spans(&th, ok, &r));
            }
            lines.push(Line::from(l));
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
            match dag::layout(&nodes, width) {
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
                        let mut v = vec![Span::styled(dag::label(n), status_style(&th, n.status))];
                        if !n.deps.is_empty() {
                            v.push(Span::styled(format!(" ← {}", n.deps.join(", ")), th.dim));
                        }
                        lines.push(Line::from(v));
                    }
                }
            }
            lines.extend(step_lines(app, s, t, &th));
        }
    }
    lines
}

/// A list of parameters (or any JSON) as text: the items joined by commas.
fn list_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Array(xs) => xs.iter().map(json_text).collect::<Vec<_>>().join(", "),
        v => json_text(v),
    }
}

/// A condition re-run by the model, beside the claim about it (met or not):
/// `= recomputed true (x = 3)` when they agree, `≠ ...` when not, `? not checkable` when it
/// cannot be re-run.
fn rerun_spans(th: &Theme, claim: bool, r: &Result<Rerun, String>) -> Vec<Span<'static>> {
    match r {
        Ok(r) => {
            let (mark, st) = if claim == r.holds {
                ("=", th.ok)
            } else {
                ("≠", th.error)
            };
            let values = r.values_text();
            let values = if values.is_empty() {
                String::new()
            } else {
                format!(" ({values})")
            };
            let mut v = vec![Span::styled(format!("  {mark} recomputed {}", r.holds), st)];
            v.extend(spans(&values, th.dim, th.marker));
            v
        }
        Err(e) => {
            let mut v = vec![Span::styled("  ? not checkable: ", th.warn)];
            v.extend(spans(e, th.dim, th.marker));
            v
        }
    }
}

/// One line per step of the plan at `t`: its description, postcondition and tier, and the
/// postcondition re-run on the ground beliefs at `t` when doxascope can (tiers 1 and 2).
fn step_lines(app: &App, s: &SessionData, t: u32, th: &Theme) -> Vec<Line<'static>> {
    let bl = s.tl.bdi_log();
    let Some(rec) = bl
        .plans
        .partition_point(|p| p.step <= t)
        .checked_sub(1)
        .map(|k| &bl.plans[k])
    else {
        return Vec::new();
    };
    let Some(Body::Plan(plan)) = app.store.event(rec.event).map(|e| &e.body) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for def in &plan.steps {
        let mut l = vec![Span::styled(format!("{} ", sanitize(&def.id)), th.accent)];
        // Tier and re-run first, so a narrow pane still shows them.
        let post = def.post.as_deref();
        match post
            .and_then(serde_json::Value::as_str)
            .and_then(|p| rerun_any(p, bl, &app.store.log, t))
        {
            Some((tier, Ok(r))) => {
                let st = if r.holds { th.ok } else { th.warn };
                l.push(Span::styled(format!("tier {tier}: {} ", r.holds), st));
                if tier == 2 {
                    l.extend(spans(&format!("({}) ", r.values_text()), th.dim, th.marker));
                }
            }
            Some((tier, Err(e))) => {
                l.push(Span::styled(
                    format!("tier {tier}: not checkable "),
                    th.warn,
                ));
                l.extend(spans(&format!("({e}) "), th.dim, th.marker));
            }
            None if post.is_some() => l.push(Span::styled("tier 2/3, not re-run ", th.dim)),
            None => {}
        }
        if let Some(d) = def.description.as_deref() {
            l.extend(spans(d, th.text, th.marker));
        }
        if let Some(p) = post {
            l.push(Span::styled(" · post ", th.dim));
            l.extend(spans(&json_text(p), th.text, th.marker));
        }
        out.push(Line::from(l));
    }
    out
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
