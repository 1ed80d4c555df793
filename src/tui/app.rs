//! The view state and how input changes it.
//!
//! [`App`] owns the data read so far ([`Store`]) and everything about how it is shown: the
//! screen (focus, mode, overlays, the REPL line), one [`SessionView`] per session (cursor,
//! follow mode, audit, `w` support, hand-issued layer) and the panes' components
//! ([`Panes`], see [`super::panes`]), which own their selections, filters and drawing.
//! Input handlers change this state and return [`Effect`]s; the event loop performs them
//! (runs a command on the REPL worker, audits, suspends, quits). Nothing here blocks or
//! draws, so the whole interaction is testable by feeding key events to an `App`.
//!
//! The timeline cursor is a row: the session's events with its reader problems between them
//! at their place in file order ([`SessionData::row_item`]). The selected step is the row's
//! step, so every pane shows the state at the cursor, on a bad line too.

use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

mod watch;
pub use watch::WatchState;

use super::data::{RowItem, SessionData, SessionSource, Store};
use super::highlight;
use super::keys::{self, Action};
use super::panes::repl::ScrollKind;
use super::panes::sigma::{SigmaFilter, SigmaRows};
use super::panes::timeline::TimelineFilter;
use super::panes::{Cx, Panes};
pub use super::repl_job::Purpose;
use super::theme::Theme;
use crate::repl::command::complete;
use crate::trace::Event;

/// The panes, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    /// Σ: the belief set at the selected step.
    Sigma,
    /// The intention and the plan DAG.
    Plan,
    /// The verification log.
    Verify,
    /// Revisions and retractions.
    Retract,
    /// Every event of the session.
    Timeline,
    /// The selected item in full.
    Detail,
    /// The REPL command line and its scrollback.
    Repl,
}

impl Pane {
    /// Tab order.
    pub const ALL: [Pane; 7] = [
        Pane::Sigma,
        Pane::Plan,
        Pane::Verify,
        Pane::Retract,
        Pane::Timeline,
        Pane::Detail,
        Pane::Repl,
    ];

    /// The title drawn on the pane's border.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Sigma => "Σ beliefs",
            Pane::Plan => "intention & plan",
            Pane::Verify => "verification",
            Pane::Retract => "retractions",
            Pane::Timeline => "timeline",
            Pane::Detail => "detail",
            Pane::Repl => "REPL",
        }
    }

    /// A one-word name, for the hint bar.
    pub fn short(self) -> &'static str {
        match self {
            Pane::Sigma => "Σ",
            Pane::Plan => "plan",
            Pane::Verify => "verify",
            Pane::Retract => "retract",
            Pane::Timeline => "timeline",
            Pane::Detail => "detail",
            Pane::Repl => "REPL",
        }
    }

    fn index(self) -> usize {
        Pane::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }
}

/// What the event loop must do after an input.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Leave the TUI.
    Quit,
    /// Suspend to the shell.
    Suspend,
    /// Run a REPL command line on the worker at the given step.
    Run {
        /// The command line.
        line: String,
        /// The step the REPL must be at.
        step: u64,
        /// Why it was sent.
        purpose: Purpose,
    },
    /// Turn mouse capture on or off.
    Mouse(bool),
    /// Audit the shown session (off the UI thread): findings and the recomputed verdicts.
    Recompute,
    /// Read another trace file (`:open PATH`), followed or read once as the view's files
    /// are; the view moves to its first session once its first event is in.
    Open(std::path::PathBuf),
    /// Read these followed files (indices into `Sources::files`) whole, from their start:
    /// they were large and followed from their tail (`:read-all`).
    ReadWhole(Vec<usize>),
}

/// Which line editor is active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Keys are bindings.
    Normal,
    /// Typing a search pattern.
    Search,
    /// Typing a Σ filter.
    Filter,
    /// Typing a timeline filter.
    TimelineFilter,
    /// Typing a REPL command.
    Command,
}

/// A one-line editor (search, filter, REPL), cursor counted in characters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEdit {
    /// The text.
    pub text: String,
    /// Cursor position in characters.
    pub cursor: usize,
}

impl LineEdit {
    fn byte_at(&self, char_idx: usize) -> usize {
        self.text
            .char_indices()
            .nth(char_idx)
            .map_or(self.text.len(), |(b, _)| b)
    }

    /// Applies an editing key; returns false when the key is not an editing key.
    pub fn edit(&mut self, key: &KeyEvent) -> bool {
        let n = self.text.chars().count();
        match key.code {
            KeyCode::Char('a') if key.modifiers.contains(KeyModifiers::CONTROL) => self.cursor = 0,
            KeyCode::Char('e') if key.modifiers.contains(KeyModifiers::CONTROL) => self.cursor = n,
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                let b = self.byte_at(self.cursor);
                self.text.replace_range(..b, "");
                self.cursor = 0;
            }
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                let b = self.byte_at(self.cursor);
                self.text.insert(b, c);
                self.cursor += 1;
            }
            KeyCode::Backspace if self.cursor > 0 => {
                let b = self.byte_at(self.cursor - 1);
                self.text.remove(b);
                self.cursor -= 1;
            }
            KeyCode::Delete if self.cursor < n => {
                let b = self.byte_at(self.cursor);
                self.text.remove(b);
            }
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(n),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = n,
            KeyCode::Backspace | KeyCode::Delete => {}
            _ => return false,
        }
        true
    }

    /// Replaces the text, cursor at the end.
    pub fn set(&mut self, s: &str) {
        self.text = s.to_string();
        self.cursor = s.chars().count();
    }
}

/// The demo's paced event stream as the TUI plays it.
pub type DemoPlayer = crate::demo::player::Player<crate::demo::DemoEvents>;

/// What the view holds for one session (the way helix keeps per-view state keyed by view):
/// where its cursor is, whether it follows, its audit, the `w` support and the hand-issued
/// layer. Switching sessions switches views; each keeps its own until the user comes back.
#[derive(Debug, Clone)]
pub struct SessionView {
    /// The selected timeline row (events and reader problems, see
    /// [`SessionData::row_item`]); the selected step is the row's step.
    pub cursor: u32,
    /// Track the newest step.
    pub follow: bool,
    /// Belief ids highlighted as a minimal support (`w`).
    pub support: HashSet<String>,
    /// The belief `w` asked about.
    pub why_target: Option<String>,
    /// The session's audit ([`crate::model::audit`]): findings and verdicts.
    pub analysis: Option<super::audit_job::Analysis>,
    /// An audit is wanted and the session is still being handed over in pieces.
    pub handover: bool,
    /// The hand-issued layer's effect on Σ, as the REPL job last reported it (`None`: the
    /// layer is empty). The Σ pane draws it when it is for the shown step.
    pub hand: Option<crate::repl::HandView>,
    /// `Esc` hid the hand-issued layer from the Σ pane (it is kept; a command shows it again).
    pub hand_hidden: bool,
    /// A refresh of the hand view for the shown step was asked for and not answered yet.
    pub hand_pending: bool,
    /// The history marked on the strip under the timeline (`H`, `:history φ`).
    pub history: Option<HistoryMarks>,
    /// Watchpoints while following: how many, what was checked, why following paused.
    pub watch: WatchState,
}

/// A history as the strip under the timeline marks it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryMarks {
    /// The formula asked about, printed (the belief id too when one was named).
    pub formula: String,
    /// Each step at which something changed, with φ's status from there on.
    pub steps: Vec<(u32, &'static str)>,
}

/// The bookmarks overlay (`'`): the session's marks, one selected; Enter jumps to its step.
#[derive(Debug, Clone, PartialEq)]
pub struct MarksOverlay {
    /// The marks by step.
    pub items: Vec<crate::repl::NoteLine>,
    /// The selected one.
    pub sel: usize,
    /// The file they are kept in.
    pub location: Option<String>,
}

/// The side-by-side diff asked for on the command line (`doxascope diff A B --tui`): built
/// once both runs are read.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffRequest {
    /// How to align.
    pub how: crate::model::diff::Align,
    /// The first run's session, when named.
    pub a: Option<String>,
    /// The second run's.
    pub b: Option<String>,
    /// The runs' files as given: without a name, a run is the first session read from its
    /// file (the two files may be read in either order).
    pub files: [String; 2],
}

impl Default for SessionView {
    fn default() -> Self {
        SessionView {
            cursor: 0,
            follow: true,
            support: HashSet::new(),
            why_target: None,
            analysis: None,
            handover: false,
            hand: None,
            hand_hidden: false,
            hand_pending: false,
            history: None,
            watch: WatchState::default(),
        }
    }
}

impl SessionView {
    /// Moves the cursor to row `i` of `s` (clamped); leaving the last row pauses follow.
    pub fn goto(&mut self, s: Option<&SessionData>, i: i64) {
        let n = s.map_or(0, |s| s.rows());
        let last = n.saturating_sub(1);
        self.cursor = i.clamp(0, i64::from(last)) as u32;
        self.follow = n > 0 && self.cursor == last && self.follow;
    }

    /// The hand-issued layer's view when it applies to step `t` and is not hidden.
    pub fn hand_shown(&self, t: u32) -> Option<&crate::repl::HandView> {
        self.hand
            .as_ref()
            .filter(|h| !self.hand_hidden && h.step == u64::from(t))
    }
}

/// The whole view state: the data, the screen (focus, mode, overlays, the REPL line), one
/// [`SessionView`] per session and the panes' components ([`Panes`]).
pub struct App {
    /// The trace read so far.
    pub store: Store,
    /// The palette.
    pub theme: Theme,
    /// Index of the shown session ([`App::session`], [`App::show_session`]).
    session: usize,
    /// One view per session, by index (grown as sessions appear).
    views: Vec<SessionView>,
    /// The panes.
    pub panes: Panes,
    /// The focused pane.
    pub focus: Pane,
    /// The list pane whose selection the detail pane shows.
    pub detail_from: Pane,
    /// Show only the focused pane.
    pub zoom: bool,
    /// Show the help overlay.
    pub help: bool,
    /// The first line of the help overlay shown (its scroll; drawing clamps it).
    pub help_scroll: usize,
    /// How many help lines the overlay showed at the last frame (the page of PgUp/PgDn).
    pub help_page: usize,
    /// The line editor mode.
    pub mode: Mode,
    /// The editor of the active mode (search, filter).
    pub edit: LineEdit,
    /// The REPL input.
    pub repl_input: LineEdit,
    /// REPL history, oldest first.
    pub history: Vec<String>,
    history_pos: Option<usize>,
    /// A command is running on the worker.
    pub working: Option<String>,
    /// The conflict-set overlay (Enter on a revision): title and lines.
    pub popup: Option<(String, Vec<String>)>,
    /// Lines the popup is scrolled down by (↑ ↓ PgUp PgDn while it is open).
    pub popup_scroll: u16,
    /// A one-line status message.
    pub status: String,
    /// The config file's problems (also printed on stderr before the TUI starts), kept for a
    /// view of past messages: the status line shows them only until the next message.
    pub config_warnings: Vec<String>,
    /// Every message the status line has shown, oldest first (at most [`MESSAGES_KEPT`]),
    /// for `:messages`, with those [`App::say_unasked`] kept here instead.
    pub messages: VecDeque<String>,
    /// The status line answers the user's last key or REPL command: a message nobody
    /// asked for then waits in `messages` until the next key, so a refusal (a bookmark not
    /// saved) is not replaced by an audit's summary before it could be read.
    answering: bool,
    /// The status message last put in `messages` (a message shown for several frames, or
    /// shown again after one kept unasked, is kept once).
    kept: String,
    /// Loading progress: bytes read and total (None when done).
    pub loading: Option<(u64, u64)>,
    /// A session indexed only is being replayed ([`crate::tui::data::Store::begin_replay`]):
    /// the header says `replaying` beside the progress.
    pub replaying: bool,
    /// Followed files and live sessions, with their states.
    pub sources: super::sources::Sources,
    /// Mouse capture is on.
    pub mouse: bool,
    /// The last frame used the compact layout (a small terminal: some panes hidden).
    pub compact: bool,
    /// Redraw needed.
    pub dirty: bool,
    /// Pane rectangles of the last frame (for mouse hits).
    pub areas: Vec<(Pane, Rect)>,
    /// Visible rows of the focused pane in the last frame (for paging).
    pub page: usize,
    /// Highlighting cache.
    pub hl: highlight::Cache,
    /// Sessions seen by the last [`App::on_data`] (to notice new re-read segments).
    known_sessions: usize,
    /// (session, version) of the audit asked for last and not answered yet: the auditor runs
    /// one at a time.
    audit_sent: Option<(usize, u64)>,
    /// Events per piece handed to the auditor ([`HANDOVER_CHUNK`]).
    pub handover_chunk: u32,
    /// What the auditor and the REPL worker have been sent.
    sent_audit: super::data::Sent,
    sent_repl: super::data::Sent,
    /// Commands waiting for the REPL worker to have the whole session (it is handed over in
    /// pieces first): line, step, purpose.
    repl_waiting: VecDeque<(String, u64, Purpose)>,
    /// While the shown session is handed to the REPL worker: events sent and the total (the
    /// REPL pane's "loading…" note).
    pub repl_loading: Option<(u32, u32)>,
    /// The paced demo stream when `doxascope demo` plays in the TUI (see [`App::demo_tick`]).
    pub demo: Option<DemoPlayer>,
    /// Two policies raced on the demo's dialogues (`demo --race`): the race pane follows the
    /// demo's turns.
    pub race: Option<super::panes::race::RaceView>,
    /// A file opened with `:open` whose first event has not arrived yet: its name as the
    /// reader records it, and how far the log has been looked through for it.
    opening: Option<(String, usize)>,
    /// The bookmarks overlay, while open.
    pub marks: Option<MarksOverlay>,
    /// The side-by-side diff of two runs, while it is on.
    pub diff: Option<super::panes::diff::DiffView>,
    /// A diff to show once the runs are read.
    pub diff_request: Option<DiffRequest>,
    /// The session list, while open (`o`, `:sessions`).
    pub picker: Option<super::panes::sessions::SessionsPicker>,
    /// The session shown before the shown one (`-` goes back to it).
    last_session: Option<usize>,
    /// The session asked for by name (`view --session NAME`), until it is read.
    pub want_session: Option<String>,
}

/// Sessions up to this many events are audited automatically once loaded and as they grow;
/// larger ones on request (`R`), since the solver pass grows with the run.
pub const AUTO_RECOMPUTE_MAX: u32 = 200_000;

/// The steps of a `history` reply, for the strip under the timeline.
fn history_marks(r: &crate::repl::Reply) -> Option<HistoryMarks> {
    let crate::repl::Reply::History {
        formula, id, rows, ..
    } = r
    else {
        return None;
    };
    Some(HistoryMarks {
        formula: match id {
            Some(i) => format!("{i} ({formula})"),
            None => formula.clone(),
        },
        steps: rows
            .iter()
            .map(|l| (u32::try_from(l.step).unwrap_or(u32::MAX), l.status))
            .collect(),
    })
}

/// How many status messages `:messages` keeps.
pub const MESSAGES_KEPT: usize = 500;

/// Events handed to the audit worker per turn of the event loop (a few tens of
/// milliseconds of copying), so handing over a big session never freezes input.
pub const HANDOVER_CHUNK: u32 = 50_000;

impl App {
    /// A view over `store` with the given palette, following the newest step.
    pub fn new(store: Store, theme: Theme) -> App {
        let mut app = App {
            store,
            theme,
            session: 0,
            views: vec![SessionView::default()],
            panes: Panes::default(),
            focus: Pane::Sigma,
            detail_from: Pane::Sigma,
            zoom: false,
            help: false,
            help_scroll: 0,
            help_page: 1,
            mode: Mode::Normal,
            edit: LineEdit::default(),
            repl_input: LineEdit::default(),
            history: Vec::new(),
            history_pos: None,
            config_warnings: Vec::new(),
            messages: VecDeque::new(),
            answering: false,
            kept: String::new(),
            working: None,
            popup: None,
            popup_scroll: 0,
            status: String::new(),
            loading: None,
            replaying: false,
            sources: super::sources::Sources::default(),
            mouse: false,
            compact: false,
            dirty: true,
            areas: Vec::new(),
            page: 10,
            hl: highlight::Cache::default(),
            known_sessions: 0,
            audit_sent: None,
            handover_chunk: HANDOVER_CHUNK,
            sent_audit: super::data::Sent::default(),
            sent_repl: super::data::Sent::default(),
            repl_waiting: VecDeque::new(),
            repl_loading: None,
            demo: None,
            race: None,
            opening: None,
            marks: None,
            diff: None,
            diff_request: None,
            picker: None,
            last_session: None,
            want_session: None,
        };
        app.on_data();
        app
    }

    /// The index of the shown session.
    pub fn session(&self) -> usize {
        self.session
    }

    /// Shows session `i` (its own view: cursor, follow, audit, as it was left). The REPL job
    /// starts a fresh REPL over the session it is sent next, so the hand-issued layer of the
    /// session left behind is gone: its view forgets it too.
    pub fn show_session(&mut self, i: usize) {
        if i != self.session {
            let left = self.view_mut();
            left.hand = None;
            left.hand_pending = false;
            // The REPL job starts afresh for the next session: the points set here go with
            // it, and a check not sent yet would ask the new session's REPL.
            left.watch = WatchState::default();
            self.repl_waiting
                .retain(|(_, _, p)| !matches!(p, Purpose::Watch { .. }));
            self.last_session = Some(self.session);
        }
        self.session = i;
        if self.views.len() <= i {
            self.views.resize_with(i + 1, SessionView::default);
        }
        // An ended live session whose events were given back is read again from its spool
        // file; its events have new places, so its view and workers start over.
        if self.sources.reload(&mut self.store, i, &mut self.status) {
            self.forget_session(i);
        }
        self.dirty = true;
    }

    /// Starts session `i`'s view and workers afresh (its events are new to them).
    fn forget_session(&mut self, i: usize) {
        if let Some(v) = self.views.get_mut(i) {
            *v = SessionView::default();
        }
        self.sent_audit.forget(i);
        self.sent_repl.forget(i);
        if self.audit_sent.is_some_and(|(s, _)| s == i) {
            self.audit_sent = None;
        }
        // The index now names another session: "previous session" must not lead there.
        if self.last_session == Some(i) {
            self.last_session = None;
        }
    }

    /// The shown session's view.
    pub fn view(&self) -> &SessionView {
        // `show_session` grows the views to cover the shown session.
        &self.views[self.session.min(self.views.len() - 1)]
    }

    /// The shown session's view, to change.
    pub fn view_mut(&mut self) -> &mut SessionView {
        if self.views.len() <= self.session {
            self.views
                .resize_with(self.session + 1, SessionView::default);
        }
        &mut self.views[self.session]
    }

    /// The view of session `i`, if it has one.
    pub fn view_of(&self, i: usize) -> Option<&SessionView> {
        self.views.get(i)
    }

    /// The shown session, if any.
    pub fn sess(&self) -> Option<&SessionData> {
        self.store.sessions.get(self.session)
    }

    /// The selected step (0..=N).
    pub fn step(&self) -> u32 {
        self.sess().map_or(0, |s| s.step_of_row(self.view().cursor))
    }

    /// What the timeline cursor is on.
    pub fn cursor_item(&self) -> Option<RowItem> {
        self.sess()?.row_item(self.view().cursor)
    }

    /// The event under the timeline cursor (none on a reader problem).
    pub fn cursor_event(&self) -> Option<(u32, &Event)> {
        let s = self.sess()?;
        let Some(RowItem::Event(i)) = s.row_item(self.view().cursor) else {
            return None;
        };
        let pos = *s.events().get(i as usize)?;
        Some((pos, self.store.event(pos)?))
    }

    /// Moves the cursor to the event of `step` (the first row at step 0).
    pub fn goto_step(&mut self, step: u64) {
        let row = match self.sess() {
            Some(s) if step > 0 => {
                let i = u32::try_from(step - 1)
                    .unwrap_or(u32::MAX)
                    .min(s.len().saturating_sub(1));
                s.row_of_event(i)
            }
            _ => 0,
        };
        self.goto(i64::from(row));
    }

    /// Moves the cursor to row `i` (clamped); leaving the last row pauses follow.
    pub fn goto(&mut self, i: i64) {
        let session = self.session;
        let s = self.store.sessions.get(session);
        if self.views.len() <= session {
            self.views.resize_with(session + 1, SessionView::default);
        }
        self.views[session].goto(s, i);
        self.dirty = true;
    }

    /// Called after the store grew: follow mode moves to the newest step.
    pub fn on_data(&mut self) {
        self.on_data_keeping(None);
    }

    /// What the shown session's cursor is on when it does not follow the newest step: the
    /// anchor [`App::on_data_keeping`] keeps it on.
    pub fn held_item(&self) -> Option<RowItem> {
        if self.views.get(self.session)?.follow {
            return None;
        }
        self.cursor_item()
    }

    /// [`App::on_data`], keeping the shown session's cursor on the row `held` (from
    /// [`App::held_item`] before the data came). Data usually only adds rows at the end, but
    /// the end of a replay ([`crate::tui::data::Store::end_replay`]) places the shown
    /// session's reader problems between events already shown, which would otherwise move
    /// the cursor off its event.
    pub fn on_data_keeping(&mut self, held: Option<RowItem>) {
        if let Some(item) = held
            && let Some(s) = self.sess()
        {
            let row = match item {
                RowItem::Event(i) => s.row_of_event(i),
                RowItem::Problem(k) => s.row_of_problem(k),
            };
            if let Some(v) = self.views.get_mut(self.session) {
                v.cursor = row;
            }
        }
        if self.session >= self.store.sessions.len() {
            self.session = 0;
        }
        let n = self.store.sessions.len();
        if self.views.len() < n {
            self.views.resize_with(n, SessionView::default);
        }
        // A retired live session's slot now holds a new session: nothing of the old one's
        // view or workers carries over.
        for i in self.store.take_reused() {
            self.forget_session(i);
        }
        // A followed file truncated or replaced is re-read into a new timeline; a following
        // view moves on to it, as it would have seen the new lines in a plain `tail -F`.
        if self.view().follow
            && n > self.known_sessions
            && let Some(i) = (self.known_sessions..n)
                .rev()
                .find(|&i| matches!(self.store.sessions[i].origin, SessionSource::Segment { .. }))
        {
            self.show_session(i);
        }
        self.known_sessions = n;
        self.show_opened();
        self.show_wanted();
        if self.view().follow {
            let n = self.sess().map_or(0, |s| s.rows());
            self.view_mut().cursor = n.saturating_sub(1);
        }
        self.watch_check();
        self.dirty = true;
    }

    /// Σ rows at the selected step after the filter (see [`super::panes::sigma::SigmaPane::rows`]).
    pub fn sigma_rows(&self) -> Rc<SigmaRows> {
        self.panes
            .sigma
            .rows(&self.store, self.session, self.step())
    }

    /// Opens (`Some(deadline)`) or closes the window in which Σ filter scans may run while
    /// a frame draws (see [`super::panes::sigma::SigmaPane::set_scan_window`]).
    pub fn set_scan_window(&self, until: Option<std::time::Instant>) {
        self.panes.sigma.set_scan_window(until);
    }

    /// While a Σ filter is still scanning the session: records checked and the total.
    pub fn sigma_filter_progress(&self) -> Option<(u32, u32)> {
        self.panes.sigma.filter_progress(&self.store, self.session)
    }

    /// What `b` bookmarks: the focused pane's item. Σ: the selected belief, at the step Σ is
    /// shown at; the verification and retractions panes: the step of their selected claim
    /// or retraction; any other pane: the timeline's step.
    fn bookmark_target(&self) -> (u64, Option<String>) {
        let here = u64::from(self.step());
        let step_of = |pos: Option<u32>| -> u64 {
            pos.and_then(|p| self.sess()?.event_index(p))
                .map_or(here, |i| u64::from(i) + 1)
        };
        let Some(s) = self.sess() else {
            return (here, None);
        };
        let t = self.step();
        match self.focus {
            Pane::Sigma => (
                here,
                self.panes
                    .sigma
                    .selected_id(&self.store, self.session, self.view()),
            ),
            Pane::Verify => (step_of(self.panes.verify.selected_event(s, t)), None),
            Pane::Retract => (
                step_of(
                    self.panes
                        .retract
                        .selected_event(s, t, self.view().analysis.as_ref()),
                ),
                None,
            ),
            _ => (here, None),
        }
    }

    /// The log position of the item selected in the last focused list pane (what the detail
    /// pane shows).
    pub fn selected_event(&self) -> Option<u32> {
        let s = self.sess()?;
        let t = self.step();
        match self.detail_from {
            Pane::Sigma => self
                .panes
                .sigma
                .selected_event(&self.store, self.session, self.view()),
            Pane::Verify => self.panes.verify.selected_event(s, t),
            Pane::Retract => self
                .panes
                .retract
                .selected_event(s, t, self.view().analysis.as_ref()),
            _ => self.cursor_event().map(|(p, _)| p),
        }
    }

    /// The audit's findings for the header (`None` until the shown session is audited).
    pub fn problem_count(&self) -> Option<usize> {
        self.view().analysis.as_ref().map(|a| a.findings.len())
    }

    /// Whether an audit of the shown session is on its way (being handed over, or asked
    /// for and not answered yet).
    pub fn recomputing(&self) -> bool {
        self.view().handover || self.audit_sent.is_some_and(|(s, _)| s == self.session)
    }

    /// Whether the auditor has an audit to answer (it runs one at a time).
    pub fn auditor_busy(&self) -> bool {
        self.audit_sent.is_some()
    }

    /// The audit request could not be sent: nothing is on its way.
    pub fn audit_failed(&mut self) {
        self.audit_sent = None;
        self.view_mut().handover = false;
    }

    /// `[Effect::Recompute]` when the shown session is small enough to audit unasked.
    pub fn auto_recompute(&self) -> Vec<Effect> {
        match self.sess() {
            Some(s) if s.rows() > 0 && s.len() <= AUTO_RECOMPUTE_MAX => vec![Effect::Recompute],
            _ => Vec::new(),
        }
    }

    /// The next piece of what the auditor has not seen of the shown session (a
    /// [`super::data::Delta`] of at most [`App::handover_chunk`] events); `run` asks for an audit
    /// once the last piece is in. While pieces remain, [`App::handover_pending`] says so and
    /// the event loop sends one per turn, after input.
    pub fn recompute_input(&mut self, run: bool) -> Option<super::audit_job::Request> {
        let delta = self
            .store
            .delta(self.session, &mut self.sent_audit, self.handover_chunk)?;
        let run_now = run && !delta.more;
        self.view_mut().handover = run && delta.more;
        if run_now {
            self.audit_sent = Some((self.session, self.store.version));
        }
        Some(super::audit_job::Request {
            delta,
            version: self.store.version,
            run: run_now,
        })
    }

    /// Whether an audit was asked for and the session is still being handed over.
    pub fn handover_pending(&self) -> bool {
        self.view().handover
    }

    /// What the REPL worker has not seen of the shown session yet, all at once (tests; the
    /// event loop hands it over in pieces with [`App::queue_command`] and [`App::repl_next`]).
    pub fn repl_input(&mut self) -> Option<super::data::Delta> {
        self.store
            .delta(self.session, &mut self.sent_repl, u32::MAX)
    }

    /// Queues a command for the REPL worker ([`Effect::Run`]); [`App::repl_next`] sends it
    /// once the worker has all of the shown session.
    pub fn queue_command(&mut self, line: String, step: u64, purpose: Purpose) {
        self.repl_waiting.push_back((line, step, purpose));
    }

    /// Whether commands wait to be sent to the REPL worker.
    pub fn repl_pending(&self) -> bool {
        !self.repl_waiting.is_empty()
    }

    /// The next message for the REPL worker while commands wait: a piece of at most
    /// [`App::handover_chunk`] events of what it has not seen of the shown session, or, once
    /// the rest fits in one piece, the first waiting command with that rest. The event loop
    /// sends one per turn, after input, so handing over a big session never freezes input.
    pub fn repl_next(&mut self) -> Option<super::repl_job::Msg> {
        use super::repl_job::{Msg, Request};
        if self.repl_waiting.is_empty() {
            return None;
        }
        let data = self
            .store
            .delta(self.session, &mut self.sent_repl, self.handover_chunk);
        if let Some(d) = data.as_ref().filter(|d| d.more) {
            let total = self.sess().map_or(0, |s| s.len());
            if self.repl_loading.is_none() {
                self.panes.repl.push(
                    ScrollKind::Output,
                    format!(
                        "loading… the REPL is given the session's {total} events first; the command runs then"
                    ),
                );
            }
            let sent = self.sent_repl.events(d.session);
            self.repl_loading = Some((sent, total));
            self.dirty = true;
            return data.map(Msg::Data);
        }
        if self.repl_loading.take().is_some() {
            self.dirty = true;
        }
        let (line, step, purpose) = self.repl_waiting.pop_front()?;
        Some(Msg::Run(Request {
            line,
            step,
            purpose,
            data,
        }))
    }

    /// A message for the REPL worker was not delivered: the next delta starts afresh, and
    /// nothing waits any more.
    pub fn repl_lost(&mut self) {
        self.sent_repl.forget(self.session);
        self.repl_waiting.clear();
        self.repl_loading = None;
        self.working = None;
    }

    /// An audit arrived: kept in its session's view (the header and panes show the shown
    /// session's).
    pub fn on_analysis(&mut self, a: super::audit_job::Analysis) {
        // The audit asked for last is done even when the view has moved on meanwhile (a
        // following view moves to a new session), so the next one can be asked for.
        if self.audit_sent == Some((a.session, a.version)) {
            self.audit_sent = None;
        }
        if a.session >= self.views.len() {
            return;
        }
        if a.session == self.session {
            self.say_unasked(format!(
                "audit: {} finding(s); {} of {} verification claim(s) disagree with the recomputation",
                a.findings.len(),
                a.mismatches(),
                a.by_pos.len()
            ));
        }
        let at = a.session;
        self.views[at].analysis = Some(a);
    }

    /// Adds the demo events due at `now` to the store (nothing without a demo or while
    /// paused); returns whether any arrived. The event loop calls it when
    /// [`App::demo_next_due`] is reached.
    pub fn demo_tick(&mut self, now: std::time::Instant) -> bool {
        let evs = match self.demo.as_mut() {
            Some(p) => p.poll(now),
            None => return false,
        };
        self.demo_add(evs)
    }

    /// When the next demo event is due (`None` without a demo, while paused or when done).
    pub fn demo_next_due(&mut self, now: std::time::Instant) -> Option<std::time::Instant> {
        self.demo.as_mut().and_then(|p| p.next_due(now))
    }

    /// Performs a demo action (pause, step, faster, slower) at `now`; other actions and a
    /// view without a demo are ignored.
    pub fn demo_action(&mut self, a: Action, now: std::time::Instant) {
        let Some(p) = self.demo.as_mut() else { return };
        self.dirty = true;
        match a {
            Action::DemoPause => p.toggle_pause(now),
            Action::DemoFaster => p.faster(now),
            Action::DemoSlower => p.slower(now),
            Action::DemoStep => {
                let evs = p.step(now);
                self.demo_add(evs);
            }
            _ => {}
        }
    }

    fn demo_add(&mut self, evs: Vec<crate::trace::Event>) -> bool {
        if evs.is_empty() {
            return false;
        }
        if let Some(r) = self.race.as_mut() {
            evs.iter().for_each(|e| r.observe(e));
        }
        let before = self.store.sessions.len();
        self.store
            .extend(evs.into_iter().map(crate::trace::Item::Event));
        // Each dialogue is a session of its own: a following view moves on to the new one.
        if self.view().follow && self.store.sessions.len() > before {
            self.show_session(self.store.sessions.len() - 1);
        }
        self.on_data();
        self.dirty = true;
        true
    }

    /// Handles a terminal key; returns what the loop must do.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind != KeyEventKind::Press && key.kind != KeyEventKind::Repeat {
            return Vec::new();
        }
        let before = self.status.clone();
        let fx = self.key_pressed(key);
        self.answering = self.status != before;
        fx
    }

    /// [`App::on_key`] for a press or repeat.
    fn key_pressed(&mut self, key: KeyEvent) -> Vec<Effect> {
        self.dirty = true;
        match self.mode {
            Mode::Normal => {}
            Mode::Command => return self.on_command_key(key),
            Mode::Search | Mode::Filter | Mode::TimelineFilter => {
                self.on_prompt_key(key);
                return Vec::new();
            }
        }
        if self.marks.is_some() {
            return self.on_marks_key(key);
        }
        if self.picker.is_some() && !self.help {
            return self.on_picker_key(key);
        }
        if self.help && self.popup.is_none() && self.scroll_help(&key) {
            return Vec::new();
        }
        if self.popup.is_some() && !self.help {
            // A long popup (a transcript, the span tree) scrolls; any other key closes it.
            let by: i32 = match key.code {
                KeyCode::Down | KeyCode::Char('j') => 1,
                KeyCode::Up | KeyCode::Char('k') => -1,
                KeyCode::PageDown => self.page as i32,
                KeyCode::PageUp => -(self.page as i32),
                _ => 0,
            };
            if by != 0 {
                let max = self.popup.as_ref().map_or(0, |p| p.1.len()) as i32;
                self.popup_scroll = (i32::from(self.popup_scroll) + by).clamp(0, max.max(0)) as u16;
                return Vec::new();
            }
            self.popup_scroll = 0;
        }
        if self.help || self.popup.is_some() {
            // Overlays close on any key; q still quits.
            self.help = false;
            self.popup = None;
            if keys::lookup_in(&key, self.demo.is_some()) != Some(Action::Quit) {
                return Vec::new();
            }
        }
        let mut fx = match keys::lookup_in(&key, self.demo.is_some()) {
            Some(a) => self.apply(a),
            None => Vec::new(),
        };
        self.track_detail();
        fx.extend(self.hand_refresh());
        fx
    }

    /// Scrolls the help overlay for ↑↓ (j k), PgUp PgDn, Home End (g G); false for any
    /// other key, which closes it. Drawing clamps the scroll to the last page.
    fn scroll_help(&mut self, key: &KeyEvent) -> bool {
        let page = self.help_page.max(1);
        let s = self.help_scroll;
        self.help_scroll = match key.code {
            KeyCode::Up | KeyCode::Char('k') => s.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => s + 1,
            KeyCode::PageUp => s.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ') => s + page,
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => usize::MAX / 2,
            _ => return false,
        };
        true
    }

    /// A key while the bookmarks overlay is open: ↑↓ (j k) choose, Enter jumps to the step,
    /// Esc (or ', or q) closes.
    fn on_marks_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(m) = self.marks.as_mut() else {
            return Vec::new();
        };
        let n = m.items.len();
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => m.sel = m.sel.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => m.sel = (m.sel + 1).min(n.saturating_sub(1)),
            KeyCode::Enter => {
                let pick = m.items.get(m.sel).map(|n| (n.step, n.belief.clone()));
                self.marks = None;
                if let Some((step, belief)) = pick {
                    self.view_mut().follow = false;
                    self.goto_step(step);
                    self.status = match belief {
                        Some(b) => format!("step {step} (bookmarked belief {b})"),
                        None => format!("step {step}"),
                    };
                }
            }
            _ => self.marks = None,
        }
        Vec::new()
    }

    /// Shows session `i` and says which it is; audits it when it is small enough.
    fn switch_to(&mut self, i: usize) -> Vec<Effect> {
        self.show_session(i);
        let listed = self.store.listed();
        let nth = self.store.sessions[..i.min(self.store.sessions.len())]
            .iter()
            .filter(|s| !s.retired)
            .count()
            + 1;
        let name = self.sess().map(|s| s.name.clone()).unwrap_or_default();
        self.status = format!("session {nth} of {listed}: {name}");
        if let Some(d) = self.store.sessions.get(i).and_then(|s| s.deferred.as_ref()) {
            self.status.push_str(&format!(
                " ({} events, not replayed yet: replayed when the file is read)",
                d.events()
            ));
        }
        if let Some(p) = self.conversation_part() {
            self.status.push_str(&format!(
                " (part {} of {} of its conversation)",
                p.index, p.of
            ));
        }
        self.on_data();
        self.auto_recompute()
    }

    /// Each session's conversation (`None` for aged-out live sessions), in store order.
    fn conversation_ids(&self) -> Vec<Option<String>> {
        self.store
            .sessions
            .iter()
            .map(|s| {
                if s.retired {
                    return None;
                }
                crate::model::sessions::conversation_of(&self.store.log, &s.tl)
            })
            .collect()
    }

    /// The shown session's conversation and its place in it, when it is linked to other
    /// sessions (the header's "conversation X, part i of n").
    pub fn conversation(&self) -> Option<(String, crate::model::sessions::Part)> {
        // Most sessions name no conversation: the others are read only when this one does.
        let s = self.sess()?;
        crate::model::sessions::conversation_of(&self.store.log, &s.tl)?;
        let ids = self.conversation_ids();
        let refs: Vec<Option<&str>> = ids.iter().map(Option::as_deref).collect();
        let part = crate::model::sessions::parts(&refs)
            .get(self.session)
            .copied()
            .flatten()?;
        Some((ids[self.session].clone()?, part))
    }

    fn conversation_part(&self) -> Option<crate::model::sessions::Part> {
        self.conversation().map(|c| c.1)
    }

    /// `c`: the next part of the shown session's conversation.
    fn next_part(&mut self) -> Vec<Effect> {
        let ids = self.conversation_ids();
        let refs: Vec<Option<&str>> = ids.iter().map(Option::as_deref).collect();
        match crate::model::sessions::next_part(&refs, self.session) {
            Some(i) => self.switch_to(i),
            None => {
                self.status = "this session is not linked to another (no other session \
                               shares its conversation id)"
                    .into();
                Vec::new()
            }
        }
    }

    /// A key while the session list is open.
    fn on_picker_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        use super::panes::sessions::Outcome;
        let Some(mut p) = self.picker.take() else {
            return Vec::new();
        };
        let rows = p.rows(self);
        match p.on_key(&key, &rows) {
            Outcome::Stay => self.picker = Some(p),
            Outcome::Close => {}
            Outcome::Open(i) => {
                let mut fx = self.switch_to(i);
                fx.extend(self.hand_refresh());
                return fx;
            }
        }
        Vec::new()
    }

    /// Moves to the session `view --session NAME` asked for, once it is read.
    fn show_wanted(&mut self) {
        let Some(name) = self.want_session.as_deref() else {
            return;
        };
        if let Some(i) = self.store.sessions.iter().position(|s| *s.name == *name) {
            self.want_session = None;
            self.show_session(i);
            self.status = format!("session {}", self.store.sessions[i].name);
        }
    }

    /// Everything of the files is read: a session asked for by name that is not among them
    /// is said, with the names there are (a followed file or a live source may still bring
    /// it: the view moves to it then).
    pub fn wanted_missing(&mut self) {
        self.show_wanted();
        let Some(name) = self.want_session.as_deref() else {
            return;
        };
        let names: Vec<String> = self
            .store
            .sessions
            .iter()
            .filter(|s| !s.retired)
            .map(|s| crate::sanitize::sanitize(&s.name))
            .collect();
        self.status = format!(
            "no session named {:?} (yet); sessions: {}",
            crate::sanitize::sanitize(name),
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
    }

    /// The two sessions `req` names, or without names the first session read from each
    /// file, replayed or only indexed; `None` (saying why when it is not a wait) while
    /// they cannot be told.
    fn diff_runs(&mut self, req: &DiffRequest) -> Option<(usize, usize)> {
        let store = &self.store;
        let n = store.sessions.len();
        let from_file = |i: usize, file: &str| store.first_file(i).is_some_and(|f| *f == *file);
        let find = |name: &Option<String>, file: &str, skip: Option<usize>| -> Option<usize> {
            match name {
                Some(name) => store.sessions.iter().position(|s| *s.name == **name),
                None => (0..n)
                    .find(|&i| Some(i) != skip && from_file(i, file))
                    .or_else(|| (0..n).find(|&i| Some(i) != skip)),
            }
        };
        let a = find(&req.a, &req.files[0], None)?;
        let Some(b) = find(&req.b, &req.files[1], Some(a)).filter(|&b| b != a) else {
            self.status = "diff: the files hold one session; two runs are needed".into();
            return None;
        };
        Some((a, b))
    }

    /// The session to replay next in the background, when one was only indexed by its
    /// file's load: the shown session, else a run the diff asked for waits for.
    pub fn replay_wanted(&mut self) -> Option<usize> {
        let shown = self.session();
        if self.store.deferred(shown) {
            return Some(shown);
        }
        let req = self.diff_request.clone()?;
        if self.loading.is_some() {
            return None;
        }
        let (a, b) = self.diff_runs(&req)?;
        [a, b].into_iter().find(|&i| self.store.deferred(i))
    }

    /// Builds the side-by-side diff asked for on the command line once both runs are read
    /// (and again when they grew); called by the event loop between frames.
    pub fn maybe_build_diff(&mut self) {
        let Some(req) = self.diff_request.clone() else {
            return;
        };
        if self.loading.is_some()
            || self
                .diff
                .as_ref()
                .is_some_and(|d| d.version == self.store.version)
        {
            return;
        }
        let Some((a, b)) = self.diff_runs(&req) else {
            return;
        };
        // A diff reads both runs whole: a run its file's load only indexed is replayed
        // first, in the background like a session shown ([`App::replay_wanted`]); the diff
        // is built once the store has it.
        if let Some(i) = [a, b].into_iter().find(|&i| self.store.deferred(i)) {
            self.status = format!(
                "diff: replaying {} first",
                crate::sanitize::sanitize(&self.store.sessions[i].name)
            );
            return;
        }
        let at = self.diff.as_ref().map_or(0, |d| d.at);
        let kept = self.diff.as_ref().map(|d| (d.tab, d.events_scroll));
        if let Some(mut d) = super::panes::diff::DiffView::build(&self.store, a, b, req.how) {
            d.at = at.min(d.alignment.pairs.len().saturating_sub(1));
            if let Some((tab, scroll)) = kept {
                (d.tab, d.events_scroll) = (tab, scroll);
            }
            self.status = match &d.alignment.divergence {
                Some(v) => format!(
                    "diff: {} aligned pairs; Σ first diverges at step {} / step {} (e)",
                    d.alignment.pairs.len(),
                    v.a,
                    v.b
                ),
                None => format!(
                    "diff: {} aligned pairs; Σ never diverges",
                    d.alignment.pairs.len()
                ),
            };
            self.status.push_str(&format!(
                "; {} other item(s) differ (Tab shows them)",
                d.items.len()
            ));
            self.diff = Some(d);
            self.dirty = true;
        }
    }

    /// Keeps the status line's message in the history `:messages` shows (called once per
    /// frame; a message shown for several frames is kept once).
    pub fn keep_message(&mut self) {
        if self.status.is_empty() || self.status == self.kept {
            return;
        }
        self.kept.clone_from(&self.status);
        self.remember(self.status.clone());
    }

    fn remember(&mut self, msg: String) {
        if self.messages.len() >= MESSAGES_KEPT {
            self.messages.pop_front();
        }
        self.messages.push_back(msg);
    }

    /// Shows the answer to a key or command the event loop carried out after [`App::on_key`]
    /// returned (a file `:open` refused): kept on the status line as the key's own answer.
    pub fn answer(&mut self, msg: String) {
        self.status = msg;
        self.answering = true;
        self.dirty = true;
    }

    /// Shows a message nobody asked for at this moment (an audit's summary, a replay ended, a
    /// loader's note, a followed file's or a live session's news) unless the status line
    /// answers the user's last key or command: then the message goes to `:messages` only,
    /// after the answer, until the next key.
    pub fn say_unasked(&mut self, msg: String) {
        if self.answering {
            self.keep_message();
            self.remember(msg);
        } else {
            self.status = msg;
        }
        self.dirty = true;
    }

    /// Whether the last frame used the compact layout.
    pub fn last_compact(&self) -> bool {
        self.compact
    }

    /// The hand-issued layer's view when it applies to the shown step and is not hidden.
    pub fn hand_shown(&self) -> Option<&crate::repl::HandView> {
        self.view().hand_shown(self.step())
    }

    /// When the shown step moved away from the hand view's, asks the REPL job for the layer's
    /// effect on Σ at the new step (the Σ pane shows the trace meanwhile, and says so).
    pub fn hand_refresh(&mut self) -> Vec<Effect> {
        let step = u64::from(self.step());
        let v = self.view_mut();
        match &v.hand {
            Some(h) if !v.hand_hidden && h.step != step && !v.hand_pending => {
                v.hand_pending = true;
                // `policy` changes nothing and builds no belief state: the answer's hand view
                // is what is wanted.
                vec![Effect::Run {
                    line: "policy".into(),
                    step,
                    purpose: Purpose::Hand,
                }]
            }
            _ => Vec::new(),
        }
    }

    /// The detail pane follows the last focused list pane.
    fn track_detail(&mut self) {
        if matches!(
            self.focus,
            Pane::Sigma | Pane::Verify | Pane::Retract | Pane::Timeline
        ) {
            self.detail_from = self.focus;
        }
    }

    /// `:open PATH`: asks the event loop to read another file (`~/` is the home directory).
    fn open_command(&mut self, path: &str) -> Vec<Effect> {
        if path.is_empty() {
            self.status = "open: give a file, as in :open traces/run-2.jsonl".into();
            return Vec::new();
        }
        let path = match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => std::path::PathBuf::from(home).join(rest),
            _ => std::path::PathBuf::from(path),
        };
        vec![Effect::Open(path)]
    }

    /// `:read-all`: the followed files started from their tail are read again from their
    /// start, in the background; their sessions continue as new readings (`· re-read N`).
    fn read_all_command(&mut self) -> Vec<Effect> {
        let files: Vec<usize> = (self.sources.files.iter().enumerate())
            .filter(|(_, f)| f.skipped.is_some())
            .map(|(i, _)| i)
            .collect();
        if files.is_empty() {
            self.status = "read-all: every file is read from its start already".into();
            return Vec::new();
        }
        self.status = format!(
            "reading {} file(s) from their start in the background; their sessions continue \
             as \"· re-read\"",
            files.len()
        );
        vec![Effect::ReadWhole(files)]
    }

    /// The event loop started reading `name` (as the reader names its events' file): the
    /// view moves to its first session once its first event is in.
    pub fn opened(&mut self, name: String) {
        self.status = format!("reading {name}…");
        self.opening = Some((name, self.store.log.events.len()));
        self.show_opened();
    }

    /// Moves to the session of the first event of the file `:open` asked for, once it is in.
    fn show_opened(&mut self) {
        let Some((name, from)) = self.opening.take() else {
            return;
        };
        let events = &self.store.log.events;
        // Origins are known without decoding the event; only the match is decoded.
        let found = (from..events.len())
            .find(|&pos| events.origin(pos).is_some_and(|o| *o.file == *name))
            .and_then(|pos| events.load(pos))
            .map(|e| e.session.clone());
        let Some(session) = found else {
            self.opening = Some((name, events.len()));
            return;
        };
        if let Some(i) = self.store.sessions.iter().position(|s| *s.name == *session) {
            self.show_session(i);
            self.status = format!("opened {name}: session {}", &*session);
        }
    }

    /// The context a pane's `on_action` works in, and the panes apart from it.
    fn split(&mut self) -> (&mut Panes, Cx<'_>) {
        let recomputing = self.recomputing();
        if self.views.len() <= self.session {
            self.views
                .resize_with(self.session + 1, SessionView::default);
        }
        let cx = Cx {
            store: &self.store,
            session: self.session,
            view: &mut self.views[self.session],
            focus: &mut self.focus,
            detail_from: &mut self.detail_from,
            status: &mut self.status,
            popup: &mut self.popup,
            working: &mut self.working,
            page: self.page,
            recomputing,
        };
        (&mut self.panes, cx)
    }

    /// Hands an action to pane `p`.
    pub fn pane_action(&mut self, p: Pane, a: Action) -> Vec<Effect> {
        let (panes, mut cx) = self.split();
        match p {
            Pane::Sigma => panes.sigma.on_action(a, &mut cx),
            Pane::Plan => panes.plan.on_action(a, &mut cx),
            Pane::Verify => panes.verify.on_action(a, &mut cx),
            Pane::Retract => panes.retract.on_action(a, &mut cx),
            Pane::Timeline => panes.timeline.on_action(a, &mut cx),
            Pane::Detail => panes.detail.on_action(a, &mut cx),
            Pane::Repl => panes.repl.on_action(a, &mut cx),
        }
    }

    /// Performs an action: those about the whole screen here, the rest by the focused pane
    /// (the timeline's searches from any pane).
    pub fn apply(&mut self, a: Action) -> Vec<Effect> {
        self.dirty = true;
        if let Some(d) = self.diff.as_mut() {
            match a {
                Action::Quit | Action::Suspend | Action::Help | Action::Mouse => {}
                Action::Escape => {
                    self.diff = None;
                    self.diff_request = None;
                    self.status = "back to the panes (the diff is `doxascope diff` again)".into();
                    return Vec::new();
                }
                _ => {
                    let page = self.page;
                    self.status = d.on_action(a, page);
                    let (sa, _) = d.pair();
                    let a_session = d.a;
                    if self.session != a_session {
                        self.show_session(a_session);
                    }
                    self.view_mut().follow = false;
                    self.goto_step(u64::from(sa));
                    return Vec::new();
                }
            }
        }
        let n = self.sess().map_or(0, |s| s.rows());
        let cursor = i64::from(self.view().cursor);
        match a {
            Action::Quit => return vec![Effect::Quit],
            Action::Suspend => return vec![Effect::Suspend],
            Action::NextPane => self.focus = Pane::ALL[(self.focus.index() + 1) % Pane::ALL.len()],
            Action::PrevPane => {
                self.focus = Pane::ALL[(self.focus.index() + Pane::ALL.len() - 1) % Pane::ALL.len()]
            }
            Action::Help => {
                self.help = !self.help;
                self.help_scroll = 0;
            }
            Action::Search => {
                self.mode = Mode::Search;
                self.edit = LineEdit::default();
            }
            Action::Filter if self.focus == Pane::Timeline => {
                // The filter in force, to edit (lnav lists its filters the same way).
                self.mode = Mode::TimelineFilter;
                self.edit = LineEdit::default();
                let current = self.panes.timeline.filter().text.clone();
                self.edit.set(&current);
            }
            Action::Filter => {
                self.mode = Mode::Filter;
                self.edit = LineEdit::default();
            }
            Action::ScrollLeft | Action::ScrollRight => return self.pane_action(self.focus, a),
            Action::SearchNext | Action::SearchPrev | Action::NextFlag | Action::PrevFlag => {
                return self.pane_action(Pane::Timeline, a);
            }
            Action::StepBack => {
                self.view_mut().follow = false;
                self.goto(cursor - 1);
            }
            Action::StepForward => self.goto(cursor + 1),
            Action::First => {
                self.view_mut().follow = false;
                self.goto(0);
            }
            Action::Last => self.goto(i64::from(n)),
            Action::Follow => {
                let follow = !self.view().follow;
                self.view_mut().follow = follow;
                if follow {
                    self.goto(i64::from(n));
                    self.view_mut().follow = true;
                    self.watch_resume();
                }
                self.status = if follow { "following" } else { "paused" }.into();
            }
            Action::Command => {
                self.mode = Mode::Command;
                self.focus = Pane::Repl;
            }
            Action::Zoom => self.zoom = !self.zoom,
            Action::Why
            | Action::Enter
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown => return self.pane_action(self.focus, a),
            Action::NextSession | Action::PrevSession => {
                let k = self.store.sessions.len().max(1);
                let listed = self.store.listed();
                if listed < 2 {
                    self.status = "only one session: nothing to switch to".into();
                    return Vec::new();
                }
                // `S` goes the other way round: k - 1 steps forward is one back.
                let by = if a == Action::PrevSession { k - 1 } else { 1 };
                let mut next = (self.session + by) % k;
                // Aged-out live sessions are not in the list.
                for _ in 0..k {
                    if !self.store.sessions.get(next).is_some_and(|s| s.retired) {
                        break;
                    }
                    next = (next + by) % k;
                }
                return self.switch_to(next);
            }
            Action::Sessions => {
                self.picker = Some(super::panes::sessions::SessionsPicker::new(self.session));
            }
            Action::LastSession => {
                return match self
                    .last_session
                    .filter(|&i| self.store.sessions.get(i).is_some_and(|s| !s.retired))
                {
                    Some(i) => self.switch_to(i),
                    None => {
                        self.status = "no session shown before this one".into();
                        Vec::new()
                    }
                };
            }
            Action::NextPart => return self.next_part(),
            Action::Mouse => {
                self.mouse = !self.mouse;
                self.status = if self.mouse {
                    "mouse on: wheel scrolls, click selects (m releases it to select text)"
                } else {
                    "mouse released: the terminal selects text (m captures it again)"
                }
                .into();
                return vec![Effect::Mouse(self.mouse)];
            }
            Action::Escape => {
                self.status.clear();
                // A Σ filter is what Esc undoes first (the hint bar said `F filter`).
                if !self.panes.sigma.filter.is_empty() {
                    self.panes.sigma.set_filter(SigmaFilter::default());
                    self.status = "Σ filter cleared".into();
                    return Vec::new();
                }
                let v = self.view_mut();
                v.support.clear();
                if let Some(h) = &v.hand
                    && !v.hand_hidden
                {
                    v.hand_hidden = true;
                    self.status = format!(
                        "Σ shows the trace; the hand-issued layer ({} command(s)) is kept: \
                         :sigma lists it, :reset drops it",
                        h.commands
                    );
                }
            }
            Action::TimeColumns => {
                let tl = &mut self.panes.timeline;
                let on = !tl
                    .time_columns
                    .unwrap_or_else(|| tl.durations_in(self.session));
                tl.time_columns = Some(on);
                self.status = if on {
                    "time columns on: time since the session's start, duration (T hides them)"
                } else {
                    "time columns off (T shows them)"
                }
                .into();
            }
            Action::Recompute => {
                self.status = "auditing the session…".into();
                return vec![Effect::Recompute];
            }
            Action::History => {
                if self.focus != Pane::Sigma {
                    self.status =
                        "H works on a belief: focus Σ (Tab), or type :history φ for any formula"
                            .into();
                    return Vec::new();
                }
                return self.pane_action(Pane::Sigma, a);
            }
            Action::Bookmark => {
                let (step, belief) = self.bookmark_target();
                let line = match belief.filter(|b| !b.contains(char::is_whitespace)) {
                    Some(b) => format!("note --belief {b}"),
                    None => "note".to_string(),
                };
                return vec![Effect::Run {
                    line,
                    step,
                    purpose: Purpose::Bookmark,
                }];
            }
            Action::Bookmarks => {
                return vec![Effect::Run {
                    line: "notes".into(),
                    step: u64::from(self.step()),
                    purpose: Purpose::Marks,
                }];
            }
            Action::DemoPause | Action::DemoStep | Action::DemoFaster | Action::DemoSlower => {
                self.demo_action(a, std::time::Instant::now());
            }
        }
        Vec::new()
    }

    fn on_prompt_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Esc => self.mode = Mode::Normal,
            KeyCode::Enter => {
                let text = self.edit.text.trim().to_string();
                let mode = std::mem::replace(&mut self.mode, Mode::Normal);
                match mode {
                    Mode::Search => {
                        if !text.is_empty() {
                            self.panes.timeline.search = Some(text);
                            self.pane_action(Pane::Timeline, Action::SearchNext);
                        }
                    }
                    Mode::TimelineFilter => {
                        let f = TimelineFilter::parse(&text);
                        let empty = f.is_empty();
                        self.panes.timeline.set_filter(f);
                        self.focus = Pane::Timeline;
                        self.status = if empty {
                            "timeline: every row shown (no filter)".into()
                        } else {
                            let tl = &self.panes.timeline;
                            let budget = std::time::Duration::from_millis(2);
                            let kept = tl.kept_rows(&self.store, self.session, Some(budget)).len();
                            let more = tl.filter_progress(&self.store, self.session).is_some();
                            let n = self.sess().map_or(0, |s| s.rows());
                            format!(
                                "timeline filter {text}: {kept} of {n} rows{} (F edits it, \
                                 F Enter on an empty line clears it)",
                                if more { " so far" } else { "" }
                            )
                        };
                    }
                    _ => {
                        self.panes.sigma.set_filter(SigmaFilter::parse(&text));
                        self.focus = Pane::Sigma;
                    }
                }
            }
            _ => {
                self.edit.edit(&key);
            }
        }
    }

    fn on_command_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Esc => self.mode = Mode::Normal,
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.repl_input = LineEdit::default();
                self.mode = Mode::Normal;
            }
            KeyCode::Enter => {
                let line = self.repl_input.text.trim().to_string();
                self.repl_input = LineEdit::default();
                self.history_pos = None;
                if line.is_empty() {
                    return Vec::new();
                }
                if self.history.last() != Some(&line) {
                    self.history.push(line.clone());
                }
                if line == "open" || line.starts_with("open ") {
                    // The line stays open for the next command, as after a REPL command.
                    self.panes.repl.push(ScrollKind::Input, format!(": {line}"));
                    return self.open_command(line["open".len()..].trim());
                }
                if line == "spans" {
                    // The TUI's own command: the span tree as a waterfall around the step.
                    let rows = match self.sess() {
                        Some(s) => crate::model::spans::span_tree(&self.store.log, &s.tl),
                        None => Vec::new(),
                    };
                    let height = self.page.max(10);
                    let (title, lines) = super::waterfall::lines(&rows, self.step(), height);
                    self.popup = Some((title, lines));
                    self.mode = Mode::Normal;
                    return Vec::new();
                }
                if line == "sessions" {
                    self.picker = Some(super::panes::sessions::SessionsPicker::new(self.session));
                    self.mode = Mode::Normal;
                    return Vec::new();
                }
                if line == "transcript" {
                    self.popup = Some(self.transcript_popup());
                    self.popup_scroll = 0;
                    self.mode = Mode::Normal;
                    return Vec::new();
                }
                if line == "tokens" {
                    // The TUI's own command: the shown session's token totals.
                    let lines = match self.sess() {
                        Some(s) => crate::model::usage::totals(&self.store.log, &s.tl).lines(),
                        None => vec!["no session".into()],
                    };
                    self.popup = Some(("tokens".into(), lines));
                    self.mode = Mode::Normal;
                    return Vec::new();
                }
                if line == "scores" {
                    // The TUI's own command: every score of the shown session.
                    let lines = match self.sess() {
                        Some(s) => crate::model::scores::lines(&self.store.log, &s.tl),
                        None => vec!["no session".into()],
                    };
                    self.popup = Some(("scores".into(), lines));
                    self.popup_scroll = 0;
                    self.mode = Mode::Normal;
                    return Vec::new();
                }
                if line == "time" || line.starts_with("time ") {
                    self.panes.repl.push(ScrollKind::Input, format!(": {line}"));
                    self.time_command(line["time".len()..].trim());
                    return Vec::new();
                }
                if line == "read-all" {
                    self.panes.repl.push(ScrollKind::Input, format!(": {line}"));
                    return self.read_all_command();
                }
                if line == "messages" {
                    // The TUI's own command: the status history, config warnings first.
                    let mut lines: Vec<String> = self
                        .config_warnings
                        .iter()
                        .map(|w| format!("config: {w}"))
                        .collect();
                    lines.extend(self.messages.iter().cloned());
                    if lines.is_empty() {
                        lines.push("no messages yet".into());
                    }
                    let skip = lines.len().saturating_sub(40);
                    self.popup = Some(("messages".into(), lines.split_off(skip)));
                    self.mode = Mode::Normal;
                    return Vec::new();
                }
                self.panes.repl.push(ScrollKind::Input, format!(": {line}"));
                self.panes.repl.to_bottom();
                self.working = Some(line.clone());
                return vec![Effect::Run {
                    line,
                    step: u64::from(self.step()),
                    purpose: Purpose::Prompt,
                }];
            }
            KeyCode::Up => {
                if self.history.is_empty() {
                    return Vec::new();
                }
                let i = match self.history_pos {
                    None => self.history.len() - 1,
                    Some(i) => i.saturating_sub(1),
                };
                self.history_pos = Some(i);
                let h = self.history[i].clone();
                self.repl_input.set(&h);
            }
            KeyCode::Down => match self.history_pos {
                Some(i) if i + 1 < self.history.len() => {
                    self.history_pos = Some(i + 1);
                    let h = self.history[i + 1].clone();
                    self.repl_input.set(&h);
                }
                _ => {
                    self.history_pos = None;
                    self.repl_input = LineEdit::default();
                }
            },
            KeyCode::PageUp => return self.pane_action(self.focus, Action::PageUp),
            KeyCode::PageDown => return self.pane_action(self.focus, Action::PageDown),
            KeyCode::Tab => self.complete(),
            _ => {
                self.repl_input.edit(&key);
            }
        }
        Vec::new()
    }

    /// `:transcript`: the model call at the cursor (or the last one before it) as its
    /// messages: what it was sent, what it answered, the tools it asked for.
    fn transcript_popup(&self) -> (String, Vec<String>) {
        let Some(s) = self.sess() else {
            return ("transcript".into(), vec!["no session".into()]);
        };
        let upto = self.step() as usize;
        let found = s.events()[..upto.min(s.events().len())]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, &p)| {
                let ev = self.store.event(p)?;
                crate::model::usage::model_call(ev).map(|_| (i + 1, ev))
            });
        let Some((step, ev)) = found else {
            return (
                "transcript".into(),
                vec!["no model call (llm_call) at or before this step".into()],
            );
        };
        let mut lines = Vec::new();
        for (who, text) in crate::model::usage::transcript(ev) {
            lines.push(format!("── {who}"));
            lines.extend(text.lines().map(str::to_string));
        }
        if lines.is_empty() {
            lines.push("the call carries no messages (content was not captured)".into());
        }
        (
            format!("transcript of the model call at step {step}"),
            lines,
        )
    }

    /// `:time WHEN`: the first step at or after a time (`+12.5s` after the session's start,
    /// `14:02:11` UTC, a date-time).
    fn time_command(&mut self, arg: &str) {
        let target = match crate::model::clock::parse_target(arg) {
            Ok(t) => t,
            Err(e) => {
                self.status = format!("time: {e}");
                self.panes.repl.push(ScrollKind::Error, self.status.clone());
                return;
            }
        };
        let found = self
            .sess()
            .map(|s| crate::model::clock::step_at(&self.store.log, &s.tl, target));
        self.status = match found {
            Some(Some(step)) => {
                self.view_mut().follow = false;
                self.goto_step(u64::from(step));
                format!("step {step}: the first event at or after {arg}")
            }
            Some(None) => format!("time: no event at or after {arg} (or the events have no times)"),
            None => "time: no session".into(),
        };
        self.panes
            .repl
            .push(ScrollKind::Output, self.status.clone());
    }

    /// The completion pool: belief ids and atoms of Σ at the selected step.
    pub fn completion_pool(&self) -> Vec<String> {
        let mut out = std::collections::BTreeSet::new();
        let Some(s) = self.sess() else {
            return Vec::new();
        };
        for i in s.sigma_at(self.step(), false) {
            let b = &s.tl.beliefs()[i as usize];
            out.insert(b.id.to_string());
            if let Some(a) = super::panes::sigma::announce_of(s, &self.store, i)
                && let Ok(f) = crate::logic::parse::parse(&a.formula)
            {
                let mut atoms = Vec::new();
                crate::logic::cnf::atoms_of(&f, &mut atoms);
                out.extend(atoms.iter().map(|a| a.to_string()));
            }
        }
        out.into_iter().collect()
    }

    /// Tab: complete the word under the cursor with `repl::command::complete`.
    fn complete(&mut self) {
        let pool = self.completion_pool();
        let line = self.repl_input.text.clone();
        let cands = complete(&line, &pool);
        let body_start = line.len()
            - line
                .rsplit(|c: char| c.is_whitespace() || "()&|!~,:".contains(c))
                .next()
                .map_or(0, str::len);
        match cands.as_slice() {
            [] => self.status = "no completion".into(),
            [one] => {
                let mut s = line[..body_start].to_string();
                s.push_str(one);
                s.push(' ');
                self.repl_input.set(&s);
            }
            many => {
                let prefix = common_prefix(many);
                let mut s = line[..body_start].to_string();
                s.push_str(&prefix);
                self.repl_input.set(&s);
                self.status = many.join("  ");
            }
        }
    }

    /// A reply from the REPL worker arrived.
    pub fn on_reply(&mut self, reply: super::repl_job::Answer) {
        let before = self.status.clone();
        self.reply_arrived(reply);
        // An answer to a command typed is read as a key's answer is.
        self.answering |= self.status != before;
    }

    /// [`App::on_reply`]'s work.
    fn reply_arrived(&mut self, reply: super::repl_job::Answer) {
        use crate::repl::Reply;
        // A command still waiting for the hand-over is what the pane works on next.
        // A watch check is not something typed: the pane does not say it works on it.
        self.working = self
            .repl_waiting
            .iter()
            .find(|(_, _, p)| !matches!(p, Purpose::Watch { .. }))
            .map(|(l, _, _)| l.clone());
        self.dirty = true;
        let v = self.view_mut();
        if reply.purpose == Purpose::Prompt {
            // A command at the prompt shows the layer again if Esc had hidden it.
            v.hand_hidden = false;
        }
        v.hand = reply.hand.clone();
        if reply.purpose == Purpose::Hand {
            v.hand_pending = false;
        }
        match reply.purpose {
            Purpose::Prompt => self.on_prompt_reply(reply.result, reply.notes),
            Purpose::Why => match reply.result {
                Ok(Reply::Why { supports, .. }) => {
                    // A belief trivially supports itself; show how else Σ derives it.
                    let v = self.view_mut();
                    let target = v.why_target.take();
                    let shown = supports
                        .iter()
                        .find(|s| !(s.len() == 1 && Some(&s[0].id) == target.as_ref()))
                        .or(supports.first());
                    v.support = shown
                        .map(|s| s.iter().map(|m| m.id.clone()).collect())
                        .unwrap_or_default();
                    self.status = match shown {
                        Some(s) => format!(
                            "why: minimal support of {} belief(s) highlighted ({} support set(s))",
                            s.len(),
                            supports.len()
                        ),
                        None => "why: not entailed by Σ (no support)".into(),
                    };
                }
                Ok(other) => self.status = other.to_text(),
                Err(e) => self.status = e.to_text(),
            },
            Purpose::Conflict => {
                self.popup = Some(("conflict set".into(), conflict_lines(reply.result)));
            }
            Purpose::Hand => {
                if let Err(e) = reply.result {
                    self.status = e.to_text();
                }
            }
            Purpose::History => match reply.result {
                Ok(r) => {
                    for l in r.to_text().lines() {
                        self.panes.repl.push(ScrollKind::Output, l.to_string());
                    }
                    if let Some(h) = history_marks(&r) {
                        self.status = format!(
                            "history of {}: {} change(s), marked on the strip under the timeline",
                            h.formula,
                            h.steps.iter().filter(|(s, _)| *s > 0).count()
                        );
                        self.view_mut().history = Some(h);
                    }
                }
                Err(e) => self.status = e.to_text(),
            },
            Purpose::Bookmark => {
                self.status = match reply.result {
                    Ok(Reply::Note { note, location, .. }) => format!(
                        "bookmarked step {}{} (#{}, kept in {location}); ' lists the marks",
                        note.step,
                        note.belief
                            .as_deref()
                            .map(|b| format!(", belief {b}"))
                            .unwrap_or_default(),
                        note.id
                    ),
                    Ok(other) => other.to_text(),
                    Err(e) => e.to_text(),
                };
            }
            Purpose::Watch { session } => self.on_watch_reply(session, reply.result),
            Purpose::Marks => match reply.result {
                Ok(Reply::Notes {
                    notes, location, ..
                }) if !notes.is_empty() => {
                    let step = u64::from(self.step());
                    // The mark at or just before the shown step is selected first.
                    let sel = notes.iter().rposition(|n| n.step <= step).unwrap_or(0);
                    self.marks = Some(MarksOverlay {
                        items: notes,
                        sel,
                        location,
                    });
                }
                Ok(Reply::Notes { .. }) => {
                    self.status =
                        "no bookmarks or notes in this session yet: b bookmarks the step, \
                         :note TEXT adds a note"
                            .into();
                }
                Ok(other) => self.status = other.to_text(),
                Err(e) => self.status = e.to_text(),
            },
        }
    }

    /// A command typed at the prompt: its answer in the REPL pane (from its command on), and
    /// a `go`/`:continue` moves the view to its step.
    fn on_prompt_reply(
        &mut self,
        result: Result<crate::repl::Reply, crate::repl::ReplError>,
        notes: Vec<String>,
    ) {
        use crate::repl::Reply;
        let first = self.panes.repl.scrollback.len();
        match &result {
            Ok(r) => {
                for l in r.to_text().lines() {
                    self.panes.repl.push(ScrollKind::Output, l.to_string());
                }
                if let Reply::At { step, .. } = r {
                    self.view_mut().follow = false;
                    self.goto_step(*step);
                }
                self.watch_prompt_reply(r);
                if let Some(h) = history_marks(r) {
                    self.view_mut().history = Some(h);
                }
            }
            Err(e) => self.panes.repl.push(ScrollKind::Error, e.to_text()),
        }
        for n in notes {
            self.panes.repl.push(ScrollKind::Output, n);
        }
        self.panes.repl.show_answer(first);
    }

    /// Handles a mouse event: a click focuses the pane and selects the row under it, the
    /// wheel scrolls the pane under the pointer.
    pub fn on_mouse(&mut self, m: MouseEvent) {
        // The session list covers the panes: a click or the wheel there is not theirs.
        if self.picker.is_some() {
            return;
        }
        let at = Position::new(m.column, m.row);
        let Some(&(pane, rect)) = self.areas.iter().find(|(_, r)| r.contains(at)) else {
            return;
        };
        self.dirty = true;
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.focus = pane;
                self.track_detail();
                // The row below the top border, and the rows inside the borders.
                let Some(row) = m.row.checked_sub(rect.y + 1).map(usize::from) else {
                    return;
                };
                let inner = usize::from(rect.height.saturating_sub(2));
                if row >= inner {
                    return;
                }
                let (panes, mut cx) = self.split();
                match pane {
                    Pane::Sigma => panes.sigma.on_click(row, inner, &mut cx),
                    Pane::Verify => panes.verify.on_click(row, inner, &mut cx),
                    Pane::Retract => panes.retract.on_click(row, inner, &mut cx),
                    Pane::Timeline => panes.timeline.on_click(row, inner, &mut cx),
                    Pane::Plan | Pane::Detail | Pane::Repl => {}
                }
            }
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
                self.focus = pane;
                let a = if m.kind == MouseEventKind::ScrollUp {
                    Action::Up
                } else {
                    Action::Down
                };
                for _ in 0..3 {
                    self.pane_action(pane, a);
                }
            }
            _ => {}
        }
    }
}

fn common_prefix(v: &[String]) -> String {
    let Some(first) = v.first() else {
        return String::new();
    };
    let mut end = first.len();
    for s in &v[1..] {
        end = end.min(
            first
                .char_indices()
                .zip(s.chars())
                .take_while(|((_, a), b)| a == b)
                .last()
                .map_or(0, |((i, a), _)| i + a.len_utf8()),
        );
    }
    first[..end].to_string()
}

/// The conflict popup's lines for a `check` of a revision's trigger just before it.
fn conflict_lines(result: Result<crate::repl::Reply, crate::repl::ReplError>) -> Vec<String> {
    use crate::repl::Reply;
    let member = |m: &crate::repl::Member| format!("{}  {}", m.id, m.formula);
    match result {
        Ok(Reply::Check { prior_conflict, .. }) if !prior_conflict.is_empty() => {
            let mut v = vec![
                "Σ was already inconsistent just before the trigger; its own minimal conflict:"
                    .to_string(),
            ];
            v.extend(prior_conflict.iter().map(member));
            v
        }
        Ok(Reply::Check {
            outcome, conflict, ..
        }) if !conflict.is_empty() => {
            let mut v = vec![format!(
                "{}: the trigger contradicts this minimal subset of Σ:",
                outcome.as_str()
            )];
            v.extend(conflict.iter().map(member));
            v
        }
        Ok(Reply::Check { outcome, .. }) => vec![format!(
            "no conflict: the trigger was {} just before the revision",
            outcome.as_str()
        )],
        Ok(other) => vec![other.to_text()],
        Err(e) => vec![e.to_text()],
    }
}
