//! The session list (`o` or `:sessions`, k9s's resource list): one row per session of the
//! files and live sources with its events, steps, errors, findings, scores, duration and
//! last activity; sortable by a column (the column's capital letter, again to reverse),
//! filtered by `/`, Enter opens a session, Esc closes. Sessions that are parts of one
//! conversation ([`crate::model::sessions`]) stay together, in part order, wherever the sort
//! puts their first part.
//!
//! The rows are built from the store at every frame, so live sessions appear as they
//! arrive; each session's figures ([`Tally`]) read only the events added since the last
//! frame.

use std::cell::RefCell;
use std::cmp::Ordering;

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use crate::model::clock::format_duration;
use crate::model::sessions::{Figures, Part, Tally, parts};
use crate::sanitize::sanitize;
use crate::tui::app::App;
use crate::tui::data::Store;

/// A column the list can be sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// The order the sessions were read in.
    Read,
    /// The name.
    Name,
    /// Events.
    Events,
    /// The agent's steps.
    Steps,
    /// Errors (failures).
    Errors,
    /// Audit findings (sessions not audited yet before those with none).
    Findings,
    /// Failing scores, then scores.
    Scores,
    /// Duration.
    Duration,
    /// Last activity.
    Last,
}

impl SortBy {
    /// The sort keys: the key that picks each column, and its name.
    pub const KEYS: [(char, SortBy, &'static str); 9] = [
        ('R', SortBy::Read, "read order"),
        ('N', SortBy::Name, "name"),
        ('V', SortBy::Events, "events"),
        ('P', SortBy::Steps, "steps"),
        ('E', SortBy::Errors, "errors"),
        ('F', SortBy::Findings, "findings"),
        ('C', SortBy::Scores, "scores"),
        ('D', SortBy::Duration, "duration"),
        ('L', SortBy::Last, "last activity"),
    ];

    fn name(self) -> &'static str {
        SortBy::KEYS
            .iter()
            .find(|k| k.1 == self)
            .map_or("", |k| k.2)
    }
}

/// One row of the list.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The session's index in the store.
    pub session: usize,
    /// Its name (raw; sanitized when drawn).
    pub name: String,
    /// Its figures (counted so far).
    pub tally: Figures,
    /// The audit's findings, once it has run.
    pub findings: Option<usize>,
    /// Its place in its conversation, when it is linked to other sessions.
    pub part: Option<Part>,
}

/// What a key did to the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The list stays open.
    Stay,
    /// Close the list.
    Close,
    /// Show this session (and close the list).
    Open(usize),
}

/// The session list while it is open.
#[derive(Debug)]
pub struct SessionsPicker {
    /// The selected session (its index in the store: the selection stays on it while rows
    /// arrive or move).
    pub sel: usize,
    /// Rows whose name or conversation contain this (case-insensitive).
    pub filter: String,
    /// `/` was pressed: keys type the filter.
    pub editing: bool,
    /// The sort column.
    pub sort: SortBy,
    /// Largest first (or Z to A).
    pub reverse: bool,
    /// Rows the last frame showed (the page of PgUp/PgDn).
    page: std::cell::Cell<usize>,
    /// Per session, its figures so far.
    tallies: RefCell<Vec<Tally>>,
    /// Events counted and events in all, while the list is still counting.
    counting: std::cell::Cell<Option<(u64, u64)>>,
}

/// Events a frame of the list reads to count (a big file is counted over several frames,
/// the rows filling in, so keys are never held).
const COUNT_PER_FRAME: usize = 50_000;

impl SessionsPicker {
    /// The list, the shown session selected.
    pub fn new(shown: usize) -> Self {
        SessionsPicker {
            sel: shown,
            filter: String::new(),
            editing: false,
            sort: SortBy::Read,
            reverse: false,
            page: std::cell::Cell::new(10),
            tallies: RefCell::new(Vec::new()),
            counting: std::cell::Cell::new(None),
        }
    }

    /// Brings every session's figures up to date, within [`COUNT_PER_FRAME`] events, and
    /// returns them.
    fn tallies(&self, store: &Store) -> Vec<Figures> {
        let mut t = self.tallies.borrow_mut();
        t.resize_with(store.sessions.len(), Tally::default);
        let mut budget = COUNT_PER_FRAME;
        let (mut done, mut total) = (0u64, 0u64);
        for (tally, s) in t.iter_mut().zip(&store.sessions) {
            // An ended session whose events went back to its spool keeps the figures counted
            // while they were here; a session index taken by a new session starts again.
            if s.unloaded {
                continue;
            }
            if tally.events > s.len() {
                *tally = Tally::default();
            }
            budget -= tally.update_within(&store.log, &s.tl, budget);
            done += u64::from(tally.events);
            total += u64::from(s.len());
        }
        self.counting.set((done < total).then_some((done, total)));
        t.iter().map(Tally::figures).collect()
    }

    /// While the figures are still being counted: events counted and in all (the next
    /// frame counts on).
    pub fn counting(&self) -> Option<(u64, u64)> {
        self.counting.get()
    }

    /// The rows in the order shown: sorted, filtered, each conversation's parts together.
    pub fn rows(&self, app: &App) -> Vec<Row> {
        let store = &app.store;
        let tallies = self.tallies(store);
        let listed: Vec<usize> = (0..store.sessions.len())
            .filter(|&i| !store.sessions[i].retired)
            .collect();
        let ids: Vec<Option<&str>> = listed
            .iter()
            .map(|&i| tallies[i].conversation.as_deref())
            .collect();
        let places = parts(&ids);
        let mut rows: Vec<Row> = listed
            .iter()
            .zip(places)
            .map(|(&i, part)| Row {
                session: i,
                name: match &store.sessions[i].deferred {
                    // Indexed only: what is known without a replay, said as such.
                    Some(d) => format!(
                        "{} (not replayed yet: {} events)",
                        store.sessions[i].name,
                        d.events()
                    ),
                    None => store.sessions[i].name.to_string(),
                },
                tally: tallies[i].clone(),
                findings: app
                    .view_of(i)
                    .and_then(|v| v.analysis.as_ref())
                    .map(|a| a.findings.len()),
                part,
            })
            .collect();
        let needle = self.filter.to_lowercase();
        if !needle.is_empty() {
            rows.retain(|r| {
                r.name.to_lowercase().contains(&needle)
                    || r.tally
                        .conversation
                        .as_deref()
                        .is_some_and(|c| c.to_lowercase().contains(&needle))
            });
        }
        rows.sort_by(|a, b| {
            let o = compare(self.sort, a, b);
            if self.reverse { o.reverse() } else { o }
        });
        group(rows)
    }

    /// A key while the list is open.
    pub fn on_key(&mut self, key: &KeyEvent, rows: &[Row]) -> Outcome {
        if self.editing {
            match key.code {
                KeyCode::Esc => {
                    self.filter.clear();
                    self.editing = false;
                }
                KeyCode::Enter => self.editing = false,
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                    self.filter.push(c)
                }
                _ => {}
            }
            return Outcome::Stay;
        }
        let at = rows.iter().position(|r| r.session == self.sel);
        let n = rows.len();
        let move_to = |k: usize| rows.get(k.min(n.saturating_sub(1))).map(|r| r.session);
        let here = at.unwrap_or(0);
        let page = self.page.get().max(1);
        let target = match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('o') => return Outcome::Close,
            KeyCode::Enter => {
                return match at.or((n > 0).then_some(0)) {
                    Some(k) => Outcome::Open(rows[k].session),
                    None => Outcome::Stay,
                };
            }
            KeyCode::Char('/') => {
                self.editing = true;
                return Outcome::Stay;
            }
            KeyCode::Up | KeyCode::Char('k') => move_to(here.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => move_to(if at.is_some() { here + 1 } else { 0 }),
            KeyCode::PageUp => move_to(here.saturating_sub(page)),
            KeyCode::PageDown => move_to(here + page),
            KeyCode::Home | KeyCode::Char('g') => move_to(0),
            KeyCode::End | KeyCode::Char('G') => move_to(n),
            KeyCode::Char(c) => {
                if let Some(&(_, by, _)) = SortBy::KEYS.iter().find(|k| k.0 == c) {
                    self.reverse = self.sort == by && !self.reverse;
                    self.sort = by;
                }
                None
            }
            _ => None,
        };
        if let Some(s) = target {
            self.sel = s;
        }
        Outcome::Stay
    }

    /// Draws the list over the panes.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        let th = &app.theme;
        let rows = self.rows(app);
        let w = area.width.min(130);
        let h = (rows.len() as u16 + 5).clamp(7, area.height.max(7));
        let r = super::super::ui::centered(area, w, h);
        f.render_widget(Clear, r);
        let room = usize::from(r.height.saturating_sub(5)).max(1);
        self.page.set(room);
        let at = rows.iter().position(|x| x.session == self.sel).unwrap_or(0);
        let start = at.saturating_sub(room - 1);
        // The figures take 70 columns; the conversation column keeps about 28.
        let name_w = usize::from(w).saturating_sub(2 + 70 + 28).clamp(12, 40);
        // What a row leaves after the marks, the name and the figures.
        let conv_w = usize::from(w).saturating_sub(2 + 64 + name_w);
        let mut lines = vec![Line::from(Span::styled(
            format!(
                "  {:<name_w$} {:>7} {:>6} {:>6} {:>8} {:>9} {:>8} {:>9}  conversation",
                "NAME", "EVENTS", "STEPS", "ERRORS", "FINDINGS", "SCORES", "DURATION", "LAST",
            ),
            th.title,
        ))];
        for (k, row) in rows.iter().enumerate().skip(start).take(room) {
            lines.push(row_line(
                th,
                row,
                (name_w, conv_w),
                k == at,
                row.session == app.session(),
            ));
        }
        if rows.is_empty() {
            lines.push(Line::from(Span::styled(
                if self.filter.is_empty() {
                    "  no sessions yet"
                } else {
                    "  no session matches the filter"
                },
                th.dim,
            )));
        }
        let filter = if self.editing {
            format!("/{}▏", sanitize(&self.filter))
        } else if self.filter.is_empty() {
            "/ filters".to_string()
        } else {
            format!("/{} (/ edits, / Esc clears)", sanitize(&self.filter))
        };
        lines.push(Line::from(Span::styled(
            format!(
                " {filter} · sort: {}{} (R N V P E F C D L; again reverses)",
                self.sort.name(),
                if self.reverse { " ↓" } else { "" }
            ),
            th.dim,
        )));
        let b = Block::bordered()
            .border_style(th.border_focus)
            .title(Span::styled(
                format!(
                    " sessions ({}) · Enter opens · - the previous one · Esc closes ",
                    rows.len()
                ),
                th.title,
            ));
        f.render_widget(Paragraph::new(lines).block(b), r);
    }
}

/// Orders two rows by a column (ties in read order).
fn compare(by: SortBy, a: &Row, b: &Row) -> Ordering {
    let opt = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (x, y) => x.is_some().cmp(&y.is_some()),
    };
    let (ta, tb) = (&a.tally, &b.tally);
    let o = match by {
        SortBy::Read => Ordering::Equal,
        SortBy::Name => a.name.cmp(&b.name),
        SortBy::Events => ta.events.cmp(&tb.events),
        SortBy::Steps => ta.steps.cmp(&tb.steps),
        SortBy::Errors => ta.errors.cmp(&tb.errors),
        SortBy::Findings => a.findings.cmp(&b.findings),
        SortBy::Scores => (ta.failing_scores, ta.scores).cmp(&(tb.failing_scores, tb.scores)),
        SortBy::Duration => opt(ta.duration, tb.duration),
        SortBy::Last => opt(ta.last, tb.last),
    };
    o.then(a.session.cmp(&b.session))
}

/// Pulls each conversation's parts together at the place of the first of them, in part
/// order.
fn group(rows: Vec<Row>) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::with_capacity(rows.len());
    let mut done = vec![false; rows.len()];
    for k in 0..rows.len() {
        if done[k] {
            continue;
        }
        let conv = rows[k].part.and(rows[k].tally.conversation.clone());
        let mut members: Vec<usize> = match &conv {
            Some(c) => (k..rows.len())
                .filter(|&j| {
                    rows[j].part.is_some() && rows[j].tally.conversation.as_ref() == Some(c)
                })
                .collect(),
            None => vec![k],
        };
        members.sort_by_key(|&j| rows[j].part.map_or(0, |p| p.index));
        for j in members {
            done[j] = true;
            out.push(rows[j].clone());
        }
    }
    out
}

/// A time of day, UTC: `14:02:11`.
fn clock(secs: f64) -> String {
    let s = secs.rem_euclid(86_400.0) as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn row_line(
    th: &crate::tui::theme::Theme,
    r: &Row,
    (name_w, conv_w): (usize, usize),
    selected: bool,
    shown: bool,
) -> Line<'static> {
    let t = &r.tally;
    let tree = match r.part {
        Some(p) if p.index == 1 => "┌",
        Some(p) if p.index == p.of => "└",
        Some(_) => "├",
        None => " ",
    };
    let name: String = sanitize(&r.name).chars().take(name_w).collect();
    let errors = t.errors;
    let scores = match (t.scores, t.failing_scores) {
        (0, _) => "–".to_string(),
        (n, 0) => n.to_string(),
        (n, k) => format!("{n} ({k}✗)"),
    };
    let findings = r.findings.map_or("…".to_string(), |n| n.to_string());
    let duration = t
        .duration
        .map_or("–".into(), |d| format_duration(d * 1000.0));
    let last = t.last.map_or("–".into(), clock);
    // A narrow list keeps the part and as much of the conversation as fits.
    let conv = match (r.part, &t.conversation) {
        (Some(p), Some(c)) => {
            let full = format!("{} · part {} of {}", sanitize(c), p.index, p.of);
            if full.chars().count() <= conv_w {
                full
            } else {
                let short = format!("{}/{} {}", p.index, p.of, sanitize(c));
                let mut cut: String = short.chars().take(conv_w.saturating_sub(1)).collect();
                if cut.chars().count() < short.chars().count() {
                    cut.push('…');
                }
                cut
            }
        }
        _ => String::new(),
    };
    let bad = |n: bool| if n { th.error } else { th.text };
    let mut v = vec![
        Span::styled(if shown { "▶" } else { " " }, th.accent),
        Span::styled(tree, th.dim),
        Span::styled(format!("{name:<name_w$} "), th.text),
        Span::styled(format!("{:>7} {:>6} ", t.events, t.steps), th.text),
        Span::styled(
            format!(
                "{:>6} ",
                if errors > 0 {
                    format!("✗{errors}")
                } else {
                    "0".into()
                }
            ),
            bad(errors > 0),
        ),
        Span::styled(
            format!("{findings:>8} "),
            if r.findings.is_some_and(|n| n > 0) {
                th.warn
            } else {
                th.text
            },
        ),
        Span::styled(format!("{scores:>9} "), bad(t.failing_scores > 0)),
        Span::styled(format!("{duration:>8} {last:>9}  "), th.dim),
        Span::styled(conv, th.accent),
    ];
    if selected {
        v = v.into_iter().map(|s| s.patch_style(th.selection)).collect();
    }
    Line::from(v)
}
