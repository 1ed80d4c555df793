//! The panes, one component per file (the way ratatui's demo2 keeps one file per tab and
//! gitui one per component): each pane's struct owns its selection, scroll and state, takes
//! its share of the key actions in `on_action` and draws itself in `draw`.
//!
//! # How a pane is put together
//!
//! - **State**: the pane's struct (`SigmaPane`, ...) holds what only it needs: its selection
//!   or scroll, its filter and caches. What belongs to a session (the timeline cursor,
//!   follow mode, the audit, the `w` support, the hand-issued layer) is in that session's
//!   [`SessionView`]; what belongs to the screen (focus, mode, overlays, the REPL line) is
//!   in [`App`].
//! - **Input**: [`crate::tui::keys`] is the one key table. [`App::apply`] performs the
//!   actions about the whole screen and hands the rest (selection, `w`, Enter, the
//!   timeline's search and flags) to the focused pane's `on_action(action, &mut Cx)`, which
//!   changes the pane and, through [`Cx`], the session's view and the screen's status, and
//!   returns the [`Effect`]s the event loop performs.
//! - **Drawing**: `draw(&self, frame, &App, area)` reads the pane and the app; what drawing
//!   learns (the most a text pane can scroll) is kept in a `Cell` for the next key.
//!
//! A new pane: a file here with its struct, `on_action` and `draw`; a variant of [`Pane`]
//! (Tab order, title); a field of [`Panes`]; its arms in `App::pane_action` and
//! `ui::pane`; and its place in the layouts of `ui.rs`.

pub mod detail;
pub mod diff;
pub mod plan;
pub mod race;
pub mod repl;
pub mod retract;
pub mod sessions;
pub mod sigma;
pub mod timeline;
pub mod verify;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};

use super::app::{App, Effect, Pane, SessionView};
use super::data::{SessionData, Store};
use super::keys::Action;
use super::text::spans;
use super::theme::Theme;

/// Every pane's component.
#[derive(Debug, Default)]
pub struct Panes {
    /// Σ beliefs.
    pub sigma: sigma::SigmaPane,
    /// The intention and the plan DAG.
    pub plan: plan::PlanPane,
    /// The verification log.
    pub verify: verify::VerifyPane,
    /// Revisions and retractions.
    pub retract: retract::RetractPane,
    /// Every event of the session.
    pub timeline: timeline::TimelinePane,
    /// The selected item in full.
    pub detail: detail::DetailPane,
    /// The REPL's scrollback.
    pub repl: repl::ReplPane,
}

/// What a pane's `on_action` may read and change besides the pane itself: the data, the
/// shown session's view, and the few screen-wide things a pane's key may set.
pub struct Cx<'a> {
    /// The trace read so far.
    pub store: &'a Store,
    /// The shown session's index.
    pub session: usize,
    /// The shown session's view (cursor, follow, audit, support, hand-issued layer).
    pub view: &'a mut SessionView,
    /// The focused pane.
    pub focus: &'a mut Pane,
    /// The list pane whose selection the detail pane shows.
    pub detail_from: &'a mut Pane,
    /// The message line.
    pub status: &'a mut String,
    /// The overlay (a conflict set).
    pub popup: &'a mut Option<(String, Vec<String>)>,
    /// What the REPL job works on (the REPL pane's title).
    pub working: &'a mut Option<String>,
    /// Visible rows of the focused pane in the last frame (for paging).
    pub page: usize,
    /// Whether an audit of the shown session is on its way.
    pub recomputing: bool,
}

impl Cx<'_> {
    /// The shown session, if any.
    pub fn sess(&self) -> Option<&SessionData> {
        self.store.sessions.get(self.session)
    }

    /// The selected step (the timeline cursor's step).
    pub fn step(&self) -> u32 {
        self.sess().map_or(0, |s| s.step_of_row(self.view.cursor))
    }

    /// Moves the timeline cursor to row `i` (clamped); leaving the last row pauses follow.
    pub fn goto(&mut self, i: i64) {
        let s = self.store.sessions.get(self.session);
        self.view.goto(s, i);
    }

    /// The rows of `d` for the paging keys, the single-row keys as ±1.
    pub fn delta(&self, a: Action) -> Option<i64> {
        let page = self.page.max(1) as i64;
        match a {
            Action::Up => Some(-1),
            Action::Down => Some(1),
            Action::PageUp => Some(-page),
            Action::PageDown => Some(page),
            _ => None,
        }
    }
}

/// What a pane does with an action it has no use for: `w` says where it works, Enter opens
/// the detail pane; everything else is nothing.
pub fn fallback(a: Action, cx: &mut Cx) -> Vec<Effect> {
    match a {
        Action::Why => *cx.status = "w works on a belief: focus Σ (Tab)".into(),
        Action::Enter => *cx.focus = Pane::Detail,
        _ => {}
    }
    Vec::new()
}

/// A selection moved by `d` rows within `n` (the old one clamped first: the list may have
/// shrunk since, when the step moved back).
pub fn moved(sel: usize, d: i64, n: usize) -> usize {
    let last = n.saturating_sub(1);
    (sel.min(last) as i64 + d).clamp(0, last as i64) as usize
}

/// The first and one-past-last row shown of `n` rows in `h` lines with `sel` selected: the
/// selection is kept on screen, at the bottom once it is past the first page.
pub fn visible(sel: usize, n: usize, h: usize) -> (usize, usize) {
    let h = h.max(1);
    let start = sel.min(n.saturating_sub(1)).saturating_sub(h - 1);
    (start, (start + h).min(n))
}

/// A pane's border and title, thick when it has the focus.
pub fn block<'a>(app: &App, p: Pane, extra: String) -> Block<'a> {
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

/// A JSON value as text: a string without its quotes, anything else as JSON.
pub fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One `key  value` row of the detail pane; the value is sanitized by [`spans`].
pub fn kv_line(th: &Theme, k: &str, v: &str, st: Style) -> Line<'static> {
    let mut l = vec![Span::styled(format!("{k:<11}"), th.dim)];
    l.extend(spans(v, st, th.marker));
    Line::from(l)
}

/// The scroll of a text pane (plan, detail): the first line shown. Drawing records how far
/// the text can scroll; the keys stay within that once a frame has been drawn.
#[derive(Debug, Default)]
pub struct Scroll {
    /// The first line shown, as the keys left it (drawing clamps it to the text).
    pub top: usize,
    max: std::cell::Cell<Option<usize>>,
}

/// How far a text pane may scroll before any frame has measured its text.
const SCROLL_UNMEASURED: usize = 9_999;

impl Scroll {
    /// Scrolls by `d` lines.
    pub fn by(&mut self, d: i64) {
        let max = self.max.get().unwrap_or(SCROLL_UNMEASURED);
        self.top = (self.top.min(max) as i64 + d).clamp(0, max as i64) as usize;
    }

    /// The first line to show of `lines` in `height` rows (recorded as the limit for the
    /// keys).
    pub fn shown(&self, lines: usize, height: usize) -> usize {
        let max = lines.saturating_sub(height);
        self.max.set(Some(max));
        self.top.min(max)
    }
}
