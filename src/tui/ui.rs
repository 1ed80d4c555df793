//! Drawing: the whole screen from the [`App`] state. Nothing here changes what is shown,
//! only how; the few things drawing learns (pane rectangles for mouse hits, the page height)
//! are written back to the app for the next input.
//!
//! Every pane builds only the rows it can show (the visible window of Σ, the timeline, the
//! logs), so a frame costs the same for a hundred events as for a million; the density strip
//! is the one whole-run view: it reads per-block summaries of the marks and is cached per
//! (session, length, width, audit).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Cell, Clear, Paragraph, Row, Table, Wrap};

use super::app::{App, Mode, Pane, ScrollKind};
use super::audit_job::At;
use super::dag::{self, Node, Status};
use super::data::{
    MARK_CONTRADICTION, MARK_PROBLEM, MARK_REVISION, RowItem, SessionData, enum_name,
};
use super::highlight::Lang;
use super::keys::BINDINGS;
use super::text::{lines as text_lines, spans};
use super::theme::Theme;
use crate::model::audit::Severity as FindingSeverity;
use crate::model::bdi::{PostCheck, StepView};
use crate::repl::COMMANDS;
use crate::sanitize::sanitize;
use crate::trace::{Body, Event};

/// Below this size only a notice is drawn.
const MIN_W: u16 = 20;
const MIN_H: u16 = 6;

/// Draws the whole screen.
pub fn draw(f: &mut Frame, app: &mut App) {
    app.keep_message();
    draw_screen(f, app);
    // Calls for Σ rows between frames (keys) get their own small budget again.
    app.set_scan_window(None);
}

fn draw_screen(f: &mut Frame, app: &mut App) {
    let area = f.area();
    app.areas.clear();
    if area.width < MIN_W || area.height < MIN_H {
        let p = Paragraph::new("terminal too small").style(app.theme.warn);
        f.render_widget(p, area);
        return;
    }
    // A message line above a hint bar that is always there (k9s style): messages never
    // replace the hints. On a very short terminal the two share one line.
    let two_lines = area.height >= 12;
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(if two_lines { 2 } else { 1 }),
    ])
    .areas(area);
    let compact = body.width < 90 || body.height < 22;
    let tiny = body.width < 50 || body.height < 12;
    app.compact = compact && !tiny;
    header(f, app, head);
    footer(f, app, foot);
    if app.zoom || tiny {
        pane(f, app, app.focus, body);
    } else if compact {
        compact_layout(f, app, body);
    } else {
        let repl_h = if app.focus == Pane::Repl || !app.scrollback.is_empty() {
            7
        } else {
            3
        };
        let [top, mid, bot, repl] = Layout::vertical([
            Constraint::Percentage(38),
            Constraint::Percentage(24),
            Constraint::Min(5),
            Constraint::Length(repl_h),
        ])
        .areas(body);
        let [a, b] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(top);
        let [c, d] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(mid);
        let [e, g] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(bot);
        pane(f, app, Pane::Sigma, a);
        pane(f, app, Pane::Plan, b);
        pane(f, app, Pane::Verify, c);
        pane(f, app, Pane::Retract, d);
        pane(f, app, Pane::Timeline, e);
        pane(f, app, Pane::Detail, g);
        pane(f, app, Pane::Repl, repl);
    }
    if let Some((title, lines)) = app.popup.clone() {
        popup(f, &app.theme, &title, &lines, area);
    }
    if app.help {
        help(f, &app.theme, area, app.demo.is_some());
    }
}

/// The panes drawn on a small terminal (80x24 and the like): Σ and the timeline, the REPL
/// line below them. A pane Tab reaches that is not among them (plan, verification,
/// retractions, detail) takes Σ's place while it has the focus; the hint bar names them.
pub const COMPACT_PANES: [Pane; 3] = [Pane::Sigma, Pane::Timeline, Pane::Repl];

fn compact_layout(f: &mut Frame, app: &mut App, body: Rect) {
    let repl_h = if app.focus == Pane::Repl && body.height >= 18 {
        5
    } else {
        3
    };
    let [upper, lower, repl] = Layout::vertical([
        Constraint::Percentage(50),
        Constraint::Min(3),
        Constraint::Length(repl_h),
    ])
    .areas(body);
    let top = if COMPACT_PANES.contains(&app.focus) {
        Pane::Sigma
    } else {
        app.focus
    };
    pane(f, app, top, upper);
    pane(f, app, Pane::Timeline, lower);
    pane(f, app, Pane::Repl, repl);
}

fn block<'a>(app: &App, p: Pane, extra: String) -> Block<'a> {
    let t = &app.theme;
    let focused = app.focus == p;
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if focused { t.border_focus } else { t.border })
        .title(Line::from(vec![
            Span::styled(format!(" {} ", p.title()), t.title),
            Span::styled(extra, t.dim),
        ]))
}

fn pane(f: &mut Frame, app: &mut App, p: Pane, area: Rect) {
    app.areas.push((p, area));
    if p == app.focus {
        app.page = usize::from(area.height.saturating_sub(3)).max(1);
    }
    match p {
        Pane::Sigma => sigma(f, app, area),
        Pane::Plan => plan(f, app, area),
        Pane::Verify => verify(f, app, area),
        Pane::Retract => retract(f, app, area),
        Pane::Timeline => timeline(f, app, area),
        Pane::Detail => detail(f, app, area),
        Pane::Repl => repl(f, app, area),
    }
}

/// A speed factor as the header shows it: `1.0`, `2.0`, `0.5`, `0.125`.
fn speed_label(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

fn header(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let mut v = vec![Span::styled(
        " doxascope ",
        t.accent.add_modifier(Modifier::REVERSED),
    )];
    // Aged-out live sessions are not counted: they are not in the list any more.
    let nsess = app.store.listed();
    match app.sess() {
        Some(s) => {
            v.push(Span::styled(" session ", t.dim));
            v.extend(spans(&s.name, t.text, t.marker));
            if nsess > 1 {
                let k = app.store.sessions[..app.session.min(app.store.sessions.len())]
                    .iter()
                    .filter(|s| !s.retired)
                    .count();
                v.push(Span::styled(format!(" ({}/{nsess})", k + 1), t.dim));
            }
            v.push(Span::styled(
                format!("  step {} of {}", app.step(), s.len()),
                t.text,
            ));
        }
        None => v.push(Span::styled(" no events yet", t.dim)),
    }
    v.push(Span::raw("  "));
    v.push(if app.follow {
        Span::styled("● FOLLOW", t.ok.add_modifier(Modifier::BOLD))
    } else {
        Span::styled("‖ PAUSED", t.warn)
    });
    // Both for the shown session: its reader problems (timeline rows of their own) and
    // what `doxascope audit` reports for it, once the audit has run.
    let pe = app.sess().map_or(0, |s| s.errors);
    v.push(Span::styled(
        format!("  parse errors: {pe}"),
        if pe > 0 { t.error } else { t.dim },
    ));
    let (fc, st) = match app.problem_count() {
        Some(n) => (n.to_string(), if n > 0 { t.warn } else { t.dim }),
        None if app.recomputing => ("…".to_string(), t.dim),
        None => ("– (R)".to_string(), t.dim),
    };
    v.push(Span::styled(format!("  findings: {fc}"), st));
    if let Some(p) = &app.demo {
        v.push(Span::styled(
            if p.is_paused() {
                "  demo ⏸".to_string()
            } else {
                format!("  demo ▶ x{}", speed_label(p.speed()))
            },
            t.accent.add_modifier(Modifier::BOLD),
        ));
    }
    let src = app.sources.header(&app.store, app.session);
    if !src.is_empty() {
        v.push(Span::styled(format!("  {src}"), t.accent));
    }
    if let Some((read, total)) = app.loading {
        let pct = read
            .saturating_mul(100)
            .checked_div(total)
            .unwrap_or(0)
            .min(100);
        let filled = (pct / 10) as usize;
        v.push(Span::styled(
            format!(
                "  loading {}{} {pct}%",
                "▰".repeat(filled),
                "▱".repeat(10 - filled)
            ),
            t.accent,
        ));
    }
    f.render_widget(Paragraph::new(Line::from(v)), area);
}

fn footer(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let [msg, hints] = if area.height >= 2 {
        Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area)
    } else {
        [area, area]
    };
    let editing = matches!(app.mode, Mode::Search | Mode::Filter);
    let line = match app.mode {
        Mode::Search | Mode::Filter => {
            let p = if app.mode == Mode::Search {
                "/"
            } else {
                "filter Σ: "
            };
            let mut v = vec![Span::styled(p, t.accent)];
            v.extend(spans(&app.edit.text, t.text, t.marker));
            let x = msg.x
                + Span::raw(p).width() as u16
                + Span::raw(
                    app.edit
                        .text
                        .chars()
                        .take(app.edit.cursor)
                        .collect::<String>(),
                )
                .width() as u16;
            f.set_cursor_position((x.min(msg.right().saturating_sub(1)), msg.y));
            Line::from(v)
        }
        _ => Line::from(spans(&app.status, t.text, t.marker)),
    };
    let one_line = msg == hints;
    if !(one_line && !editing && app.status.is_empty()) {
        f.render_widget(Paragraph::new(line), msg);
    }
    if !one_line || (!editing && app.status.is_empty()) {
        f.render_widget(Paragraph::new(hint_line(app, hints.width)), hints);
    }
}

/// The hint bar: the keys that matter now, and on a small terminal the panes it hides.
fn hint_line(app: &App, width: u16) -> Line<'static> {
    let t = &app.theme;
    let mut keys: Vec<(&str, &str)> = match app.mode {
        Mode::Command => vec![
            ("Enter", "run"),
            ("↑↓", "history"),
            ("Tab", "complete"),
            ("Esc", "leave"),
        ],
        Mode::Search | Mode::Filter => vec![("Enter", "apply"), ("Esc", "cancel")],
        _ => vec![
            ("?", "help"),
            ("Tab", "pane"),
            ("[ ]", "step"),
            ("f", "follow"),
            ("/", "search"),
        ],
    };
    if app.mode == Mode::Normal {
        match app.focus {
            Pane::Sigma => keys.extend([("w", "why"), ("F", "filter")]),
            Pane::Retract => keys.push(("Enter", "conflict")),
            Pane::Timeline => keys.push(("e/E", "errors")),
            _ => {}
        }
        keys.extend([(":", "REPL"), ("z", "zoom"), ("q", "quit")]);
    }
    let mut v: Vec<Span<'static>> = Vec::new();
    for (k, what) in keys {
        v.push(Span::styled(k.to_string(), t.accent));
        v.push(Span::styled(format!(" {what}  "), t.dim));
    }
    let compact = app.last_compact();
    if compact && app.mode == Mode::Normal && !app.zoom {
        let hidden: Vec<&str> = Pane::ALL
            .iter()
            .filter(|p| !COMPACT_PANES.contains(p) && **p != app.focus)
            .map(|p| p.short())
            .collect();
        let note = format!("hidden: {} (Tab)", hidden.join(", "));
        let used: usize = v.iter().map(|s| s.width()).sum();
        if used + note.chars().count() <= usize::from(width) {
            v.push(Span::styled(note, t.warn));
        } else {
            // The hidden panes matter more than the last hints on a narrow terminal: whole
            // hints (key and word) are dropped from the end until the note fits.
            let budget = usize::from(width).saturating_sub(note.chars().count());
            while v.len() >= 2 && v.iter().map(|s| s.width()).sum::<usize>() > budget {
                v.truncate(v.len() - 2);
            }
            v.push(Span::styled(note, t.warn));
        }
    }
    Line::from(v)
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

fn visible(sel: usize, n: usize, h: usize) -> (usize, usize) {
    let h = h.max(1);
    let start = sel.min(n.saturating_sub(1)).saturating_sub(h - 1);
    (start, (start + h).min(n))
}

fn sigma(f: &mut Frame, app: &mut App, area: Rect) {
    // One scanning window per frame for a filter still applying (closed by `draw`).
    app.set_scan_window(Some(std::time::Instant::now() + super::app::FRAME_SCAN));
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
    let hand_note = match (&hand, &app.hand) {
        (Some(h), _) => format!(
            "+ hand layer: {} command(s), {} added, {} retracted ",
            h.commands,
            h.added.len(),
            h.removed.len()
        ),
        (None, Some(_)) if app.hand_hidden => "(hand layer hidden: Esc) ".to_string(),
        (None, Some(_)) => "(hand layer: updating…) ".to_string(),
        (None, None) => String::new(),
    };
    let extra = if app.filter.is_empty() {
        format!("{} at step {t} ", rows.len())
    } else if let Some((done, total)) = app.sigma_filter_progress() {
        // A new filter over a large Σ is applied over several frames; ask for the next.
        app.dirty = true;
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
    let sel = app.selected[0].min(total.saturating_sub(1));
    app.selected[0] = sel;
    let (start, end) = visible(sel, total, h);
    let th = app.theme.clone();
    let wide = inner.width >= 90;
    let mut out = Vec::new();
    for (k, i) in rows
        .range(start.min(rows.len()), end.min(rows.len()))
        .into_iter()
        .enumerate()
    {
        let Some(s) = app.store.sessions.get(app.session) else {
            break;
        };
        let rec = s.tl.beliefs()[i as usize].clone();
        let Some(ev) = app.store.event(rec.event) else {
            continue;
        };
        let Body::Announce(a) = &ev.body else {
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
        let supported = app.support.contains(rec.id.as_str());
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
                .and_then(|l| l.first().cloned())
                .map(|l| {
                    if supported {
                        Line::from(
                            l.spans
                                .into_iter()
                                .map(|s| {
                                    s.patch_style(Style::new().add_modifier(Modifier::UNDERLINED))
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
        let id_cell = Cell::from(Line::from(spans(
            &rec.id,
            if supported { th.support } else { th.accent },
            th.marker,
        )));
        let status_cell = Cell::from(Span::styled(status, status_style));
        let mut row = if wide {
            Row::new(vec![
                id_cell,
                Cell::from(formula_line),
                Cell::from(Span::styled(role, th.dim)),
                Cell::from(Line::from(spans(&source, th.dim, th.marker))),
                Cell::from(Line::from(vec![
                    Span::styled(bar(conf, 5), th.bar),
                    Span::styled(format!(" {conf:.2}"), th.dim),
                ])),
                status_cell,
                Cell::from(Span::styled(format!("{}", rec.announced), th.dim)),
            ])
        } else {
            Row::new(vec![id_cell, Cell::from(formula_line), status_cell])
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
            let supported = app.support.contains(m.id.as_str());
            let base = if supported { th.support } else { th.text };
            let id_cell = Cell::from(Line::from(spans(&m.id, th.accent, th.marker)));
            let formula_cell = Cell::from(Line::from(spans(&m.formula, base, th.marker)));
            let status_cell = Cell::from(Span::styled("active [hand]", th.ok));
            // (13 columns: it fits the narrow status column too)
            let mut row = if wide {
                Row::new(vec![
                    id_cell,
                    formula_cell,
                    Cell::from(Span::styled(role_label(m.role), th.dim)),
                    Cell::from(Line::from(spans(&m.source, th.dim, th.marker))),
                    Cell::from(Line::from(vec![
                        Span::styled(bar(m.confidence, 5), th.bar),
                        Span::styled(format!(" {:.2}", m.confidence), th.dim),
                    ])),
                    status_cell,
                    Cell::from(Span::styled(format!("{}", m.step), th.dim)),
                ])
            } else {
                Row::new(vec![id_cell, formula_cell, status_cell])
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
                Constraint::Length(12),
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
        Table::new(
            out,
            [
                Constraint::Length(10),
                Constraint::Fill(1),
                Constraint::Length(13),
            ],
        )
        .header(Row::new(["id", "formula", "status"]).style(th.dim.add_modifier(Modifier::BOLD)))
    };
    f.render_widget(table, inner);
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

/// The plan of the latest `plan` event at step `t`, with step statuses at `t`, from the
/// model's BDI log.
pub fn plan_at(store: &super::data::Store, s: &SessionData, t: u32) -> Option<(String, Vec<Node>)> {
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

fn plan(f: &mut Frame, app: &mut App, area: Rect) {
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
                        let mut v = vec![Span::styled(dag::label(n), status_style(&th, n.status))];
                        if !n.deps.is_empty() {
                            v.push(Span::styled(format!(" ← {}", n.deps.join(", ")), th.dim));
                        }
                        lines.push(Line::from(v));
                    }
                }
            }
        }
    }
    let max_scroll = lines.len().saturating_sub(usize::from(inner.height));
    app.selected[1] = app.selected[1].min(max_scroll);
    let p = Paragraph::new(lines).scroll((app.selected[1] as u16, 0));
    f.render_widget(p, inner);
}

fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn verify(f: &mut Frame, app: &mut App, area: Rect) {
    let th = app.theme.clone();
    let Some(s) = app.sess() else {
        f.render_widget(block(app, Pane::Verify, String::new()), area);
        return;
    };
    let total = app.rows_upto(s.tl.verifies()).len();
    let b = block(app, Pane::Verify, format!("{total} "));
    let inner = b.inner(area);
    f.render_widget(b, area);
    let h = usize::from(inner.height.saturating_sub(1));
    let sel = app.selected[2].min(total.saturating_sub(1));
    app.selected[2] = sel;
    let (start, end) = visible(sel, total, h);
    // Newest first; only the visible rows are copied out.
    let rows: Vec<(u32, u32)> = match app.sess() {
        Some(s) => {
            let all = app.rows_upto(s.tl.verifies());
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

/// The "recomputed" cell: the solver's verdict, marked `≠` in the error style when the
/// claim disagrees; `…` while the recomputation runs.
fn recomputed_cell(app: &App, th: &Theme, pos: u32) -> Cell<'static> {
    match app.analysis.as_ref().and_then(|v| v.by_pos.get(&pos)) {
        Some(v) => match v.agrees {
            Some(false) => Cell::from(Span::styled(format!("≠ {}", v.outcome), th.error)),
            Some(true) => Cell::from(Span::styled(format!("= {}", v.outcome), th.ok)),
            None if v.outcome == super::audit_job::NOT_CHECKABLE => {
                Cell::from(Span::styled(format!("? {}", v.outcome), th.warn))
            }
            None => Cell::from(Line::from(spans(&v.outcome, th.dim, th.marker))),
        },
        None if app.recomputing => Cell::from(Span::styled("…", th.dim)),
        None => Cell::from(Span::styled("– (R)", th.dim)),
    }
}

fn retract(f: &mut Frame, app: &mut App, area: Rect) {
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
    let sel = app.selected[3].min(total.saturating_sub(1));
    app.selected[3] = sel;
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
                if let Some(reason) = &r.reason {
                    v.push(Span::raw(" "));
                    v.extend(spans(reason, th.dim, th.marker));
                }
                let entry = s.and_then(|s| {
                    let rt = s.tl.retracts();
                    let i = rt.binary_search_by_key(&step, |e| e.step).ok()?;
                    Some((s, rt[i].clone()))
                });
                match entry {
                    Some((s, e)) if e.record.is_none() => match e.ground {
                        // A memory edit: the ground belief's value it took back.
                        Some(k) => {
                            let was =
                                s.tl.bdi_log()
                                    .retracted(&app.store.log, k)
                                    .and_then(|g| g.value)
                                    .map(crate::trace::import::write::as_text)
                                    .unwrap_or_default();
                            v.push(Span::styled(" was ", th.dim));
                            v.extend(spans(&was, th.retracted, th.marker));
                        }
                        None => v.push(Span::styled(" (names no active belief)", th.error)),
                    },
                    _ => {}
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

/// A score's colour: pass or fail only when its value says so (a boolean, or Inspect's
/// `C`/`I` for correct/incorrect); neutral otherwise, since doxascope does not know the
/// scale of a number or a label (1 may be the best of 1 or the worst of 5).
fn score_style(th: &Theme, sc: &crate::trace::event::Score) -> Style {
    use crate::trace::event::ScoreValue;
    match &sc.value {
        Some(ScoreValue::Bool(true)) => th.ok,
        Some(ScoreValue::Bool(false)) => th.error,
        Some(ScoreValue::Text(t)) if t == "C" => th.ok,
        Some(ScoreValue::Text(t)) if t == "I" => th.error,
        _ => th.accent,
    }
}

fn density(app: &mut App, width: u16) -> Vec<u8> {
    let Some(s) = app.store.sessions.get(app.session) else {
        return Vec::new();
    };
    let audited = app.analysis.as_ref().map_or(u64::MAX, |a| a.version);
    let key = (app.session, s.rows(), width, audited);
    // Cached per (session, length, width, audit). A recompute reads the block summary of the
    // marks ([`SessionData::marks_in`]): a few thousand blocks for a million events, so a
    // follow burst redraws an exact strip every frame.
    if app.density.0 != key {
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
                app.analysis
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
        app.density = (key, bins);
    }
    app.density.1.clone()
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

fn timeline(f: &mut Frame, app: &mut App, area: Rect) {
    let th = app.theme.clone();
    let b = block(app, Pane::Timeline, String::new());
    let inner = b.inner(area);
    f.render_widget(b, area);
    let Some(s) = app.sess() else { return };
    let n = s.rows() as usize;
    let strip_h = u16::from(inner.height >= 3);
    let h = usize::from(inner.height - strip_h);
    let (start, end) = visible(app.cursor as usize, n, h);
    let mut lines = Vec::with_capacity(end - start);
    for r in start..end {
        let Some(item) = s.row_item(r as u32) else {
            continue;
        };
        let mut v = match item {
            RowItem::Event(i) => {
                let Some(ev) = s.events().get(i as usize).and_then(|&p| app.store.event(p)) else {
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
                v.extend(spans(&App::summary(ev), th.text, th.marker));
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
        if r == app.cursor as usize {
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
        let bins = density(app, inner.width);
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

fn origin_text(ev: &Event) -> String {
    format!("{}:{}", sanitize(&ev.origin.file), ev.origin.line)
}

/// One `key  value` row of the detail pane; the value is sanitized by [`spans`].
fn kv_line(th: &Theme, k: &str, v: &str, st: Style) -> Line<'static> {
    let mut l = vec![Span::styled(format!("{k:<11}"), th.dim)];
    l.extend(spans(v, st, th.marker));
    Line::from(l)
}

/// The lines of the detail pane for the event at `pos`.
pub fn detail_lines(app: &mut App, pos: u32) -> Vec<Line<'static>> {
    let th = app.theme.clone();
    let Some(ev) = app.store.event(pos).cloned() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut kv = |k: &str, v: &str, st: Style| out.push(kv_line(&th, k, v, st));
    kv("kind", ev.kind_name(), th.accent);
    kv("session", &ev.session, th.text);
    kv("seq", &ev.seq.to_string(), th.text);
    kv(
        "from",
        &format!(
            "{}:{} (byte {})",
            ev.origin.file, ev.origin.line, ev.origin.offset
        ),
        th.text,
    );
    if let Some(id) = &ev.id {
        kv("id", id, th.accent);
    }
    if let Body::Announce(a) = &ev.body {
        kv("role", &enum_name(&a.role), th.text);
        kv("source", a.source.as_deref().unwrap_or("–"), th.text);
        kv("confidence", &format!("{:.2}", a.confidence), th.text);
        if let Some(t) = &a.text {
            kv("text", t, th.text);
        }
    }
    let formula = match &ev.body {
        Body::Announce(a) => Some(a.formula.to_string()),
        Body::Query(q) => Some(q.formula.to_string()),
        Body::Verify(v) => Some(v.all_formulas().collect::<Vec<_>>().join(", ")),
        _ => None,
    };
    if let Some(fm) = formula {
        let hl = app
            .hl
            .get(Lang::Formula, &fm, &th.syntax, th.marker)
            .map(|l| l.to_vec());
        let mut l = vec![Span::styled(format!("{:<11}", "formula"), th.dim)];
        match hl.and_then(|v| v.into_iter().next()) {
            Some(line) => l.extend(line.spans),
            None => l.extend(spans(&fm, th.text, th.marker)),
        }
        out.push(Line::from(l));
    }
    // Provenance: the cited premises back to the lines that announced them.
    let because = match &ev.body {
        Body::Announce(a) => a.because.clone(),
        Body::Verify(v) => v.because.clone(),
        _ => Vec::new(),
    };
    if !because.is_empty() {
        out.push(Line::from(Span::styled("because", th.dim)));
        let s = app.store.sessions.get(app.session);
        for c in because {
            // By the id index: a cited id that was never announced must not cost a pass
            // over Σ every frame.
            let found = s.and_then(|s| {
                s.record_before(&c, pos)
                    .and_then(|r| s.tl.beliefs().get(r as usize))
            });
            let mut l = vec![Span::raw("  ")];
            l.extend(spans(&c, th.accent, th.marker));
            match found.and_then(|b| app.store.event(b.event)) {
                Some(pe) => l.push(Span::styled(format!("  ← {}", origin_text(pe)), th.dim)),
                None => l.push(Span::styled(
                    "  ← not announced before (ungrounded)",
                    th.error,
                )),
            }
            out.push(Line::from(l));
        }
    }
    // What the audit found about this event, in its own words.
    let found: Vec<(String, FindingSeverity, String)> = app
        .sess()
        .and_then(|s| s.event_index(pos))
        .zip(app.analysis.as_ref())
        .map(|(i, a)| {
            a.on_event(i)
                .map(|f| (f.code.to_string(), f.severity, f.message.clone()))
                .collect()
        })
        .unwrap_or_default();
    for (code, sev, message) in found {
        let st = if sev >= FindingSeverity::Warning {
            th.error
        } else {
            th.warn
        };
        let mut l = vec![Span::styled(format!("{:<11}", "finding"), th.dim)];
        l.extend(spans(&format!("{code} ({sev}) "), st, th.marker));
        l.extend(spans(&message, th.text, th.marker));
        out.push(Line::from(l));
    }
    out.push(Line::from(Span::styled("raw event", th.dim)));
    // Laid out token by token: fields in line order, numbers exactly as written. Only the
    // first RAW_SHOWN bytes: a 4 MiB list in one field would be two million lines to lay
    // out and highlight on every frame.
    let raw = ev.to_json_line();
    let mut cut = raw.len().min(RAW_SHOWN);
    while !raw.is_char_boundary(cut) {
        cut -= 1;
    }
    let pretty = crate::trace::event::pretty_json(&raw[..cut]);
    match app.hl.get(Lang::Json, &pretty, &th.syntax, th.marker) {
        Some(l) => out.extend(l.iter().cloned()),
        None => out.extend(text_lines(&pretty, th.text, th.marker)),
    }
    if cut < raw.len() {
        out.push(Line::from(Span::styled(
            format!(
                "… {} more bytes of the raw event not shown",
                raw.len() - cut
            ),
            th.dim,
        )));
    }
    out
}

/// How much of a raw event the detail pane lays out (see `docs/reliability.md`).
const RAW_SHOWN: usize = 64 * 1024;

/// The lines of the detail pane for the reader problem at index `k` of the shown session:
/// `file:line:column: message`, as `doxascope validate` prints it, and the audit's finding.
pub fn problem_lines(app: &App, k: u32) -> Vec<Line<'static>> {
    let th = &app.theme;
    let Some(s) = app.sess() else {
        return Vec::new();
    };
    let Some(p) = s
        .problems
        .get(k as usize)
        .and_then(|&(_, q)| app.store.problem(q))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut kv = |k: &str, v: &str, st: Style| out.push(kv_line(th, k, v, st));
    let sev = match p.severity {
        crate::trace::Severity::Error => "error: the line is not an event",
        crate::trace::Severity::Warning => "warning: the line was kept",
    };
    kv("kind", "parse-error", th.error);
    kv("severity", sev, th.text);
    kv(
        "at",
        &format!(
            "{}:{}:{}: {}",
            p.origin.file, p.origin.line, p.column, p.message
        ),
        th.error,
    );
    if let Some(field) = &p.field {
        kv("field", field, th.text);
    }
    kv(
        "step",
        &format!("read after step {}", s.problems[k as usize].0),
        th.text,
    );
    if let Some(a) = &app.analysis {
        for f in a
            .findings
            .iter()
            .filter(|(at, _)| *at == At::Problem(k))
            .map(|(_, f)| f)
        {
            kv(
                "finding",
                &format!("{} ({}) {}", f.code, f.severity, f.message),
                th.text,
            );
        }
    }
    out
}

fn detail(f: &mut Frame, app: &mut App, area: Rect) {
    let b = block(app, Pane::Detail, String::new());
    let inner = b.inner(area);
    f.render_widget(b, area);
    let on_timeline = !matches!(app.detail_from, Pane::Sigma | Pane::Verify | Pane::Retract);
    let lines = match app.cursor_item() {
        Some(RowItem::Problem(k)) if on_timeline => problem_lines(app, k),
        _ => {
            let Some(pos) = app
                .selected_event()
                .or_else(|| app.cursor_event().map(|(p, _)| p))
            else {
                return;
            };
            detail_lines(app, pos)
        }
    };
    let max_scroll = lines.len().saturating_sub(usize::from(inner.height));
    app.selected[5] = app.selected[5].min(max_scroll);
    let p = Paragraph::new(lines).scroll((app.selected[5] as u16, 0));
    f.render_widget(p, inner);
}

fn repl(f: &mut Frame, app: &mut App, area: Rect) {
    let th = app.theme.clone();
    let extra = match (&app.working, app.repl_loading) {
        (Some(w), Some((sent, total))) => {
            format!("loading… {sent} of {total} events, then {} ", sanitize(w))
        }
        (Some(w), None) => format!("working… {} ", sanitize(w)),
        (None, _) => String::new(),
    };
    let b = block(app, Pane::Repl, extra);
    let inner = b.inner(area);
    f.render_widget(b, area);
    if inner.height == 0 {
        return;
    }
    let h = usize::from(inner.height - 1);
    let n = app.scrollback.len();
    let end = n.saturating_sub(app.scroll_up);
    let start = end.saturating_sub(h);
    let lines: Vec<Line> = app.scrollback[start..end]
        .iter()
        .map(|l| {
            let st = match l.kind {
                ScrollKind::Input => th.accent,
                ScrollKind::Output => th.text,
                ScrollKind::Error => th.error,
            };
            Line::from(spans(&l.text, st, th.marker))
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines),
        Rect {
            height: h as u16,
            ..inner
        },
    );
    let y = inner.y + inner.height - 1;
    let prompt = if app.mode == Mode::Command {
        ": "
    } else {
        "  "
    };
    let mut v = vec![Span::styled(prompt, th.accent)];
    if app.mode == Mode::Command || !app.repl_input.text.is_empty() {
        v.extend(spans(&app.repl_input.text, th.text, th.marker));
    } else {
        v.push(Span::styled(
            "press : to type a command (why φ, entails φ, at STEP, help)",
            th.dim,
        ));
    }
    f.render_widget(
        Paragraph::new(Line::from(v)),
        Rect {
            y,
            height: 1,
            ..inner
        },
    );
    if app.mode == Mode::Command {
        let before: String = app
            .repl_input
            .text
            .chars()
            .take(app.repl_input.cursor)
            .collect();
        let x = inner.x + 2 + Span::raw(sanitize(&before)).width() as u16;
        f.set_cursor_position((x.min(inner.right().saturating_sub(1)), y));
    }
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn popup(f: &mut Frame, th: &Theme, title: &str, lines: &[String], area: Rect) {
    let r = centered(area, 70, lines.len() as u16 + 4);
    f.render_widget(Clear, r);
    let text: Vec<Line> = lines
        .iter()
        .map(|l| Line::from(spans(l, th.text, th.marker)))
        .collect();
    let b = Block::bordered()
        .border_style(th.border_focus)
        .title(Span::styled(
            format!(" {title} (any key closes) "),
            th.title,
        ));
    f.render_widget(Paragraph::new(text).block(b).wrap(Wrap { trim: false }), r);
}

/// The help overlay's text, generated from the key table and the REPL command table (the
/// demo's keys are left out; see [`help_lines_for`]).
pub fn help_lines(th: &Theme) -> Vec<Line<'static>> {
    help_lines_for(th, false)
}

/// The help overlay's text; the demo's keys are listed only when `demo` is set, as they are
/// bound only then.
pub fn help_lines_for(th: &Theme, demo: bool) -> Vec<Line<'static>> {
    let mut v = vec![Line::from(Span::styled("keys", th.title))];
    for b in BINDINGS.iter().filter(|b| demo || !b.action.demo_only()) {
        v.push(Line::from(vec![
            Span::styled(format!("  {:<12}", b.label), th.accent),
            Span::styled(b.help, th.text),
        ]));
    }
    v.push(Line::from(Span::styled(
        "REPL commands (after :)",
        th.title,
    )));
    for c in COMMANDS {
        v.push(Line::from(vec![Span::styled(
            format!("  {} {}", c.name, c.args),
            th.accent,
        )]));
    }
    v
}

fn help(f: &mut Frame, th: &Theme, area: Rect, demo: bool) {
    let lines = help_lines_for(th, demo);
    let r = centered(area, 80, lines.len() as u16 + 2);
    f.render_widget(Clear, r);
    let b = Block::bordered()
        .border_style(th.border_focus)
        .title(Span::styled(" help (any key closes) ", th.title));
    f.render_widget(Paragraph::new(lines).block(b), r);
}

/// Draws the app into an off-screen buffer of `w` × `h` cells and returns the text, one line
/// per row (render tests, text captures for the docs).
pub fn render_text(app: &mut App, w: u16, h: u16) -> String {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    let Ok(mut term) = Terminal::new(TestBackend::new(w, h));
    if term.draw(|f| draw(f, app)).is_err() {
        return String::new();
    }
    buffer_text(term.backend().buffer())
}

/// The text of a buffer, one line per row, trailing spaces kept.
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let w = usize::from(buf.area.width).max(1);
    let mut out = String::new();
    for row in buf.content.chunks(w) {
        for c in row {
            out.push_str(c.symbol());
        }
        out.push('\n');
    }
    out
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
            let mut app = App::new(Store::from_bytes("t.jsonl", &bytes), theme);
            let Some(s) = app.sess() else { continue };
            let marked = s.marks.iter().filter(|&&m| m != 0).count();
            assert!(events < 1000 || marked > 10, "the trace must mark events");
            for w in [1u16, 3, 7, 64, 200, 257] {
                let want = naive(app.sess().unwrap(), usize::from(w));
                assert_eq!(density(&mut app, w), want, "{events} events, width {w}");
            }
        }
    }
}
