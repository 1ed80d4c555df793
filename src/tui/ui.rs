//! Drawing: the whole screen from the [`App`] state, each pane by its own component
//! ([`super::panes`]). Nothing here changes what is shown, only how; the few things drawing
//! learns (pane rectangles for mouse hits, the page height) are written back to the app for
//! the next input, and the panes read the app without changing it.
//!
//! Every pane builds only the rows it can show (the visible window of Σ, the timeline, the
//! logs), so a frame costs the same for a hundred events as for a million; the density strip
//! is the one whole-run view: it reads per-block summaries of the marks and is cached per
//! (session, length, width, audit).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use super::app::{App, Mode, Pane};
use super::keys::BINDINGS;
use super::text::spans;
use super::theme::Theme;
use crate::repl::COMMANDS;
use crate::sanitize::sanitize;

/// Below this size only a notice is drawn.
const MIN_W: u16 = 20;
const MIN_H: u16 = 6;

/// Draws the whole screen.
pub fn draw(f: &mut Frame, app: &mut App) {
    app.keep_message();
    draw_screen(f, app);
    // The session list counts a big file over several frames.
    if app.picker.as_ref().is_some_and(|p| p.counting().is_some()) {
        app.dirty = true;
    }
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
    if let Some(d) = &app.diff {
        d.draw(f, app, body);
    } else if app.zoom || tiny {
        pane(f, app, app.focus, body);
    } else if let Some(r) = app.race.as_ref().filter(|_| !tiny) {
        // The race pane takes the upper half; the first policy's run plays below it.
        let [upper, lower] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Min(3)]).areas(body);
        r.draw(f, &app.theme, upper);
        if compact {
            pane(f, app, app.focus, lower);
        } else {
            // The timeline, and beside it the focused pane (the retractions while the
            // timeline has the focus).
            let [l, rt] =
                Layout::horizontal([Constraint::Percentage(55), Constraint::Min(10)]).areas(lower);
            pane(f, app, Pane::Timeline, l);
            let other = match app.focus {
                Pane::Timeline => Pane::Retract,
                p => p,
            };
            pane(f, app, other, rt);
        }
    } else if compact {
        compact_layout(f, app, body);
    } else {
        let repl_h = if app.focus == Pane::Repl || !app.panes.repl.scrollback.is_empty() {
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
        popup(f, &app.theme, &title, &lines, area, app.popup_scroll);
    }
    if let Some(m) = &app.marks {
        marks(f, &app.theme, m, area);
    }
    if let Some(p) = &app.picker {
        p.draw(f, app, area);
    }
    if app.help {
        let (scroll, page) = help(f, &app.theme, area, app.demo.is_some(), app.help_scroll);
        app.help_scroll = scroll;
        app.help_page = page;
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

/// Draws pane `p` in `area`, and records what input needs of the frame: the pane's
/// rectangle (mouse hits) and, for the focused pane, its page height (paging keys).
fn pane(f: &mut Frame, app: &mut App, p: Pane, area: Rect) {
    app.areas.push((p, area));
    if p == app.focus {
        app.page = usize::from(area.height.saturating_sub(3)).max(1);
    }
    let a = &*app;
    match p {
        Pane::Sigma => a.panes.sigma.draw(f, a, area),
        Pane::Plan => a.panes.plan.draw(f, a, area),
        Pane::Verify => a.panes.verify.draw(f, a, area),
        Pane::Retract => a.panes.retract.draw(f, a, area),
        Pane::Timeline => a.panes.timeline.draw(f, a, area),
        Pane::Detail => a.panes.detail.draw(f, a, area),
        Pane::Repl => a.panes.repl.draw(f, a, area),
    }
    // A new filter over a large Σ or timeline is applied over several frames: ask for the
    // next.
    let filtering = match p {
        Pane::Sigma => app.sigma_filter_progress().is_some(),
        Pane::Timeline => app
            .panes
            .timeline
            .filter_progress(&app.store, app.session())
            .is_some(),
        _ => false,
    };
    if filtering {
        app.dirty = true;
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

/// The rank of the header's title, the first part shortened.
const TITLE_RANK: u8 = 3;
/// The rank of a count that is zero (no parse errors): dropped first.
const ZERO_RANK: u8 = 1;

/// One part of the header: its spans, a shorter form for a narrow terminal, and how much it
/// matters (parts of lower rank are shortened, then dropped, first).
struct HeaderPart {
    rank: u8,
    full: Vec<Span<'static>>,
    short: Option<Vec<Span<'static>>>,
}

impl HeaderPart {
    fn new(rank: u8, full: Vec<Span<'static>>) -> Self {
        HeaderPart {
            rank,
            full,
            short: None,
        }
    }

    fn or_short(mut self, short: Vec<Span<'static>>) -> Self {
        self.short = Some(short);
        self
    }
}

fn spans_width(v: &[Span]) -> usize {
    v.iter().map(Span::width).sum()
}

/// Fits the parts in `width` cells, two spaces apart: the least important are shortened
/// first, then dropped, so what an auditor reads first (the step, the findings, the demo's
/// play state) stays when the terminal is narrow.
fn fit_header(mut parts: Vec<HeaderPart>, width: usize) -> Line<'static> {
    let fits = |parts: &[HeaderPart]| spans_width(&join_header(parts)) <= width;
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| parts[i].rank);
    for &i in &order {
        if fits(&parts) {
            break;
        }
        match parts[i].short.take() {
            // What only says "nothing to see" goes before anything is shortened.
            _ if parts[i].rank <= ZERO_RANK => parts[i].full.clear(),
            Some(short) => parts[i].full = short,
            None => {}
        }
    }
    for &i in &order {
        if fits(&parts) {
            break;
        }
        parts[i].full.clear();
    }
    Line::from(join_header(&parts))
}

/// The parts that are left, two spaces apart.
fn join_header(parts: &[HeaderPart]) -> Vec<Span<'static>> {
    let mut v = Vec::new();
    let mut after_title = false;
    for p in parts.iter().filter(|p| !p.full.is_empty()) {
        if !v.is_empty() {
            // The title's reversed block carries its own space.
            v.push(Span::raw(if after_title { " " } else { "  " }));
        }
        after_title = p.rank == TITLE_RANK;
        v.extend(p.full.iter().cloned());
    }
    v
}

/// The first `n` characters of `s`, with `…` when cut.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The header's "conversation X, part i of n" when the shown session is linked to others.
fn conversation_part(app: &App, t: &Theme) -> Option<HeaderPart> {
    let (conv, part) = app.conversation()?;
    let mut full = vec![Span::styled("conversation ", t.dim)];
    full.extend(spans(&cut(&conv, 24), t.accent, t.marker));
    full.push(Span::styled(
        format!(", part {} of {} (c next)", part.index, part.of),
        t.dim,
    ));
    let short = vec![Span::styled(
        format!("part {}/{}", part.index, part.of),
        t.accent,
    )];
    Some(HeaderPart::new(6, full).or_short(short))
}

fn header(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let mut parts = vec![
        HeaderPart::new(
            TITLE_RANK,
            vec![Span::styled(
                " doxascope ",
                t.accent.add_modifier(Modifier::REVERSED),
            )],
        )
        .or_short(vec![Span::styled(
            " dx ",
            t.accent.add_modifier(Modifier::REVERSED),
        )]),
    ];
    // Aged-out live sessions are not counted: they are not in the list any more.
    let nsess = app.store.listed();
    match app.sess() {
        Some(s) => {
            let count = if nsess > 1 {
                let k = app.store.sessions[..app.session().min(app.store.sessions.len())]
                    .iter()
                    .filter(|s| !s.retired)
                    .count();
                format!(" ({}/{nsess})", k + 1)
            } else {
                String::new()
            };
            let mut full = vec![Span::styled("session ", t.dim)];
            full.extend(spans(&s.name, t.text, t.marker));
            full.push(Span::styled(count.clone(), t.dim));
            let mut short = spans(&cut(&s.name, 16), t.text, t.marker);
            short.push(Span::styled(count, t.dim));
            parts.push(HeaderPart::new(5, full).or_short(short));
            parts.extend(conversation_part(app, t));
            parts.push(
                HeaderPart::new(
                    10,
                    vec![Span::styled(
                        format!("step {} of {}", app.step(), s.len()),
                        t.text,
                    )],
                )
                .or_short(vec![Span::styled(
                    format!("{}/{}", app.step(), s.len()),
                    t.text,
                )]),
            );
        }
        None => parts.push(HeaderPart::new(
            10,
            vec![Span::styled("no events yet", t.dim)],
        )),
    }
    parts.push(follow_part(app));
    // Both for the shown session: its reader problems (timeline rows of their own) and
    // what `doxascope audit` reports for it, once the audit has run.
    let pe = app.sess().map_or(0, |s| s.errors);
    parts.push(
        HeaderPart::new(
            if pe > 0 { 8 } else { ZERO_RANK },
            vec![Span::styled(
                format!("parse errors: {pe}"),
                if pe > 0 { t.error } else { t.dim },
            )],
        )
        .or_short(vec![Span::styled(
            format!("errors: {pe}"),
            if pe > 0 { t.error } else { t.dim },
        )]),
    );
    // Warnings are lines kept as events: counted apart, and only when there are some.
    let pw = app.sess().map_or(0, |s| s.warnings());
    if pw > 0 {
        parts.push(
            HeaderPart::new(6, vec![Span::styled(format!("warnings: {pw}"), t.warn)])
                .or_short(vec![Span::styled(format!("warn: {pw}"), t.warn)]),
        );
    }
    let (fc, st) = match app.problem_count() {
        Some(n) => (n.to_string(), if n > 0 { t.warn } else { t.dim }),
        None if app.recomputing() => ("…".to_string(), t.dim),
        None => ("– (R)".to_string(), t.dim),
    };
    parts.push(HeaderPart::new(
        9,
        vec![Span::styled(format!("findings: {fc}"), st)],
    ));
    if let Some(p) = &app.demo {
        let st = t.accent.add_modifier(Modifier::BOLD);
        let (full, short) = if p.has_finished() {
            ("demo ■ finished".to_string(), "■".to_string())
        } else if p.is_paused() {
            ("demo ⏸".to_string(), "⏸".to_string())
        } else {
            let x = speed_label(p.speed());
            (format!("demo ▶ x{x}"), format!("▶x{x}"))
        };
        parts.push(
            HeaderPart::new(9, vec![Span::styled(full, st)])
                .or_short(vec![Span::styled(short, st)]),
        );
    }
    let src = app.sources.header(&app.store, app.session());
    if !src.is_empty() {
        parts.push(
            HeaderPart::new(4, vec![Span::styled(src.clone(), t.accent)])
                .or_short(vec![Span::styled(cut(&src, 24), t.accent)]),
        );
    }
    if let Some((read, total)) = app.loading {
        let pct = read
            .saturating_mul(100)
            .checked_div(total)
            .unwrap_or(0)
            .min(100);
        let filled = (pct / 10) as usize;
        let what = if app.replaying {
            "replaying"
        } else {
            "loading"
        };
        parts.push(
            HeaderPart::new(
                7,
                vec![Span::styled(
                    format!(
                        "{what} {}{} {pct}%",
                        "▰".repeat(filled),
                        "▱".repeat(10 - filled)
                    ),
                    t.accent,
                )],
            )
            .or_short(vec![Span::styled(format!("{what} {pct}%"), t.accent)]),
        );
    }
    f.render_widget(
        Paragraph::new(fit_header(parts, usize::from(area.width))),
        area,
    );
}

/// Whether the view follows new events: `● FOLLOW` or `‖ PAUSED` for a source that can
/// grow (`⏸ watch` when a watchpoint paused it), `○ READ ONCE` at the end of one that cannot (a file read with `--no-follow`, an
/// imported trace), where following would promise events that never come.
fn follow_part(app: &App) -> HeaderPart {
    let t = &app.theme;
    let grows = app.demo.is_some() || app.sources.grows(&app.store, app.session());
    let v = app.view();
    let (full, short, st) = match (v.follow, grows) {
        (true, true) => ("● FOLLOW", "●", t.ok.add_modifier(Modifier::BOLD)),
        (true, false) => ("○ READ ONCE", "○", t.dim),
        // Paused by a watchpoint: the status line names it and the event.
        (false, _) if v.watch.paused.is_some() => {
            ("⏸ watch", "⏸", t.warn.add_modifier(Modifier::BOLD))
        }
        (false, _) => ("‖ PAUSED", "‖", t.warn),
    };
    HeaderPart::new(8, vec![Span::styled(full, st)]).or_short(vec![Span::styled(short, st)])
}

fn footer(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let [msg, hints] = if area.height >= 2 {
        Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area)
    } else {
        [area, area]
    };
    let editing = matches!(app.mode, Mode::Search | Mode::Filter | Mode::TimelineFilter);
    let line = match app.mode {
        Mode::Search | Mode::Filter | Mode::TimelineFilter => {
            let p = match app.mode {
                Mode::Search => "/",
                Mode::TimelineFilter => "filter timeline: ",
                _ => "filter Σ: ",
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
        Mode::Search => vec![("Enter", "apply"), ("Esc", "cancel")],
        Mode::Filter => vec![
            ("Enter", "apply"),
            ("Esc", "cancel"),
            ("role:R source:S status:active|retracted TEXT", ""),
        ],
        Mode::TimelineFilter => vec![
            ("Enter", "apply"),
            ("Esc", "cancel"),
            ("kind:K,K level:L TEXT", "keep"),
            ("-kind:K -level:L -WORD", "hide"),
        ],
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
            Pane::Plan => keys.push(("← →", "tab")),
            Pane::Retract => keys.extend([("← →", "tab"), ("Enter", "open")]),
            Pane::Timeline => keys.extend([("e/E", "errors"), ("F", "filter")]),
            _ => {}
        }
        if app.store.listed() > 1 {
            keys.push(("o", "sessions"));
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

pub(crate) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// The bookmarks overlay: the session's marks by step, one selected.
fn marks(f: &mut Frame, th: &Theme, m: &super::app::MarksOverlay, area: Rect) {
    let h = (m.items.len() as u16 + 3)
        .min(area.height.saturating_sub(2))
        .max(4);
    let r = centered(area, 90, h);
    f.render_widget(Clear, r);
    let room = usize::from(h.saturating_sub(3)).max(1);
    let start = m.sel.saturating_sub(room - 1);
    let mut lines: Vec<Line> = m
        .items
        .iter()
        .enumerate()
        .skip(start)
        .take(room)
        .map(|(i, n)| {
            let on = n
                .belief
                .as_deref()
                .map(|b| format!(" belief {}", sanitize(b)))
                .unwrap_or_default();
            let text = if n.text.is_empty() {
                "(bookmark)".to_string()
            } else {
                n.text.clone()
            };
            let mut v = vec![Span::styled(
                format!("#{:<3} step {:>6}{on}  ", n.id, n.step),
                th.accent,
            )];
            v.extend(spans(&text, th.text, th.marker));
            let l = Line::from(v);
            if i == m.sel { l.style(th.selection) } else { l }
        })
        .collect();
    if let Some(loc) = &m.location {
        lines.push(Line::from(Span::styled(
            format!("kept in {}", sanitize(loc)),
            th.dim,
        )));
    }
    let b = Block::bordered()
        .border_style(th.border_focus)
        .title(Span::styled(
            " bookmarks and notes (↑↓ choose, Enter jumps, Esc closes) ",
            th.title,
        ));
    f.render_widget(Paragraph::new(lines).block(b), r);
}

fn popup(f: &mut Frame, th: &Theme, title: &str, lines: &[String], area: Rect, scroll: u16) {
    // The waterfall's rows and a transcript's messages are wider than a message.
    let w = if title.starts_with("span tree")
        || title.starts_with("transcript")
        || title.starts_with("scores")
    {
        110
    } else {
        70
    };
    let r = centered(
        area,
        w,
        lines.len().min(usize::from(u16::MAX - 4)) as u16 + 4,
    );
    let more = lines.len() + 4 > usize::from(r.height);
    f.render_widget(Clear, r);
    let text: Vec<Line> = lines
        .iter()
        .map(|l| Line::from(spans(l, th.text, th.marker)))
        .collect();
    let b = Block::bordered()
        .border_style(th.border_focus)
        .title(Span::styled(
            if more || scroll > 0 {
                format!(" {title} (↑↓ PgUp PgDn scroll, any other key closes) ")
            } else {
                format!(" {title} (any key closes) ")
            },
            th.title,
        ));
    f.render_widget(
        Paragraph::new(text)
            .block(b)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0)),
        r,
    );
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
    v.push(Line::from(Span::styled(
        "the view's own commands (after :)",
        th.title,
    )));
    for (c, what) in TUI_COMMANDS {
        v.push(Line::from(vec![
            Span::styled(format!("  {c:<12}"), th.accent),
            Span::styled(*what, th.text),
        ]));
    }
    v
}

/// The `:` commands the view answers itself, not the REPL.
pub const TUI_COMMANDS: &[(&str, &str)] = &[
    (
        "open PATH",
        "read another trace file and show its first session",
    ),
    (
        "messages",
        "every message shown, and the config file's warnings",
    ),
    (
        "spans",
        "the span tree as a waterfall: calls and runs under their parents, start, duration",
    ),
    (
        "transcript",
        "the model call at the cursor as its messages: system, user, assistant, tool requests",
    ),
    (
        "tokens",
        "token totals of the session, per model and per agent run (beside what the run reports)",
    ),
    (
        "scores",
        "every score of the session, failed ones first, with what each scores",
    ),
    (
        "time WHEN",
        "the first step at or after a time: +12.5s after the start, 14:02:11 (UTC), a date-time",
    ),
    (
        "read-all",
        "read large files followed from their tail whole, in the background",
    ),
    (
        "sessions",
        "the session list (o): figures per session, Shift-letters sort, / filters, Enter opens",
    ),
];

/// Draws the help overlay from line `scroll` (clamped to the last page); returns the scroll
/// it used and how many lines it showed. What is above or below the window is said in the
/// frame, so a short terminal does not hide keys or commands without a word.
fn help(f: &mut Frame, th: &Theme, area: Rect, demo: bool, scroll: usize) -> (usize, usize) {
    let inner = usize::from(area.width.min(80).saturating_sub(2)).max(1);
    let lines: Vec<Line> = help_lines_for(th, demo)
        .into_iter()
        .flat_map(|l| wrap_help(l, inner))
        .collect();
    let r = centered(area, 80, (lines.len() as u16).saturating_add(2));
    let rows = usize::from(r.height.saturating_sub(2)).max(1);
    let scroll = scroll.min(lines.len().saturating_sub(rows));
    let below = lines.len().saturating_sub(scroll + rows);
    f.render_widget(Clear, r);
    let scrolls = scroll > 0 || below > 0;
    let title = if scrolls {
        " help (↑↓ PgUp PgDn scroll, any other key closes) "
    } else {
        " help (any key closes) "
    };
    let mut b = Block::bordered()
        .border_style(th.border_focus)
        .title(Span::styled(title, th.title));
    if scrolls {
        let more = match (scroll, below) {
            (0, n) => format!(" ↓ {n} more lines "),
            (k, 0) => format!(" ↑ {k} more lines "),
            (k, n) => format!(" ↑ {k} more  ↓ {n} more "),
        };
        b = b.title_bottom(Span::styled(more, th.warn));
    }
    let shown: Vec<Line> = lines.into_iter().skip(scroll).take(rows).collect();
    f.render_widget(Paragraph::new(shown).block(b), r);
    (scroll, rows)
}

/// A help line folded to `width` cells at spaces, the continuation indented under the text
/// (a binding's explanation under itself), so no explanation is cut at the frame.
fn wrap_help(line: Line<'static>, width: usize) -> Vec<Line<'static>> {
    if line.width() <= width || line.spans.is_empty() {
        return vec![line];
    }
    let mut spans = line.spans;
    let (head, text) = if spans.len() > 1 {
        let text = spans.pop().unwrap_or_default();
        (spans, text)
    } else {
        (Vec::new(), spans.remove(0))
    };
    let head_w: usize = head.iter().map(Span::width).sum();
    let indent = if head.is_empty() { 4 } else { head_w };
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut cur: Vec<Span<'static>> = head;
    let mut cur_w = head_w;
    let mut word_buf = String::new();
    for word in text.content.split(' ') {
        let w = Span::raw(word).width();
        let sep = usize::from(!word_buf.is_empty());
        if cur_w + word_buf.chars().count() + sep + w > width && !word_buf.is_empty() {
            cur.push(Span::styled(std::mem::take(&mut word_buf), text.style));
            out.push(Line::from(std::mem::take(&mut cur)));
            cur.push(Span::raw(" ".repeat(indent.min(width / 2))));
            cur_w = indent.min(width / 2);
        } else if sep == 1 {
            word_buf.push(' ');
        }
        word_buf.push_str(word);
    }
    cur.push(Span::styled(word_buf, text.style));
    out.push(Line::from(cur));
    out
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
