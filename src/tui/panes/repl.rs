//! The REPL pane: the scrollback of the `:` line's commands and replies, and the line
//! itself (its text and history belong to the app, which owns the modes).

use std::cell::Cell;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Cx, block, fallback};
use crate::sanitize::sanitize;
use crate::tui::app::{App, Effect, Mode, Pane};
use crate::tui::keys::Action;
use crate::tui::text::spans;

/// One line of the REPL scrollback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScrollLine {
    /// The text (already sanitized by the REPL; sanitized again when drawn).
    pub text: String,
    /// What kind of line it is.
    pub kind: ScrollKind,
}

/// The kinds of scrollback lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollKind {
    /// The echoed command.
    Input,
    /// A result.
    Output,
    /// An error.
    Error,
}

/// Lines of scrollback kept; older ones are dropped.
const MAX_SCROLLBACK: usize = 10_000;

/// The REPL pane's state: the scrollback and how far it is scrolled up.
#[derive(Debug, Default)]
pub struct ReplPane {
    /// REPL scrollback.
    pub scrollback: Vec<ScrollLine>,
    /// Lines scrolled up from the bottom of the scrollback.
    pub scroll_up: usize,
    /// How many scrollback lines the last frame showed (0 before the first).
    shown: Cell<usize>,
    /// The line shown at the top until the user scrolls (the command of a long answer),
    /// resolved at drawing, when the pane's height is known.
    anchor: Option<usize>,
}

impl ReplPane {
    /// Adds a line to the scrollback.
    pub fn push(&mut self, kind: ScrollKind, text: String) {
        self.scrollback.push(ScrollLine { text, kind });
        if self.scrollback.len() > MAX_SCROLLBACK {
            let cut = self.scrollback.len() - MAX_SCROLLBACK;
            self.scrollback.drain(..cut);
            self.anchor = self.anchor.map(|a| a.saturating_sub(cut));
        }
    }

    /// Scrolls the scrollback by `d` lines (down is positive).
    pub fn scroll(&mut self, d: i64) {
        let n = self.scrollback.len();
        let up = self.lines_below(self.shown.get());
        self.anchor = None;
        self.scroll_up =
            (up as i64 - d).clamp(0, n.saturating_sub(self.shown.get()) as i64) as usize;
    }

    /// Shows the newest lines (a new command was typed).
    pub fn to_bottom(&mut self) {
        self.scroll_up = 0;
        self.anchor = None;
    }

    /// How many lines are below a window of `h` lines, never leaving the window part empty.
    fn lines_below(&self, h: usize) -> usize {
        let n = self.scrollback.len();
        let up = match self.anchor {
            Some(top) => n.saturating_sub(top + h),
            None => self.scroll_up,
        };
        up.min(n.saturating_sub(h))
    }

    /// After an answer that ends the scrollback: shows it from its command (the last input
    /// line before `first`, the answer's first line) when it is longer than the pane, so
    /// its beginning (where `history` says a belief entered) is not scrolled away; the
    /// pane's frame then says how much more is below.
    pub fn show_answer(&mut self, first: usize) {
        let n = self.scrollback.len();
        let top = self.scrollback[..first.min(n)]
            .iter()
            .rposition(|l| l.kind == ScrollKind::Input)
            .unwrap_or(first.min(n));
        self.anchor = Some(top);
    }

    /// The selection keys scroll the scrollback.
    pub fn on_action(&mut self, a: Action, cx: &mut Cx) -> Vec<Effect> {
        match cx.delta(a) {
            Some(d) => {
                self.scroll(d);
                Vec::new()
            }
            None => fallback(a, cx),
        }
    }

    /// Draws the pane.
    pub fn draw(&self, f: &mut Frame, app: &App, area: Rect) {
        let th = &app.theme;
        let extra = match (&app.working, app.repl_loading) {
            (Some(w), Some((sent, total))) => {
                format!("loading… {sent} of {total} events, then {} ", sanitize(w))
            }
            (Some(w), None) => format!("working… {} ", sanitize(w)),
            (None, _) => String::new(),
        };
        let h = usize::from(area.height.saturating_sub(3));
        self.shown.set(h);
        let n = self.scrollback.len();
        let end = n.saturating_sub(self.lines_below(h));
        let start = end.saturating_sub(h);
        let mut b = block(app, Pane::Repl, extra);
        if let Some(more) = more_note(start, n - end) {
            b = b.title_bottom(Span::styled(more, th.warn));
        }
        let inner = b.inner(area);
        f.render_widget(b, area);
        if inner.height == 0 {
            return;
        }
        let lines: Vec<Line> = self.scrollback[start..end]
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
}

/// What the REPL pane's frame says when the scrollback does not fit: how many lines are
/// above and below the window, and the keys that reach them.
fn more_note(above: usize, below: usize) -> Option<String> {
    match (above, below) {
        (0, 0) => None,
        (a, 0) => Some(format!(" ↑ {a} more (PgUp) ")),
        (0, b) => Some(format!(" ↓ {b} more (PgDn) ")),
        (a, b) => Some(format!(" ↑ {a} more  ↓ {b} more (PgUp PgDn) ")),
    }
}
