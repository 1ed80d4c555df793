//! The race pane (`doxascope demo --race A,B`): two Σ columns, one per policy, in lockstep
//! with the demo's turns. The panes below play the first policy's run; this one shows, for
//! the turn just played, each side's Σ, revisions so far, what the turn dropped, and the
//! refusals and fallbacks. Everything shown was computed by [`crate::demo::race`]; the pane
//! only follows which turn the player has reached.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::demo::race::{Race, Row, Side};
use crate::trace::{Event, Kind};
use crate::tui::text::spans;
use crate::tui::theme::Theme;

/// The race and how far the demo's player has played it.
#[derive(Debug, Clone)]
pub struct RaceView {
    /// The precomputed race.
    pub race: Race,
    /// Sessions (dialogues) started so far.
    sessions: usize,
    /// Turns played in the current dialogue.
    turn: usize,
}

impl RaceView {
    /// A view before any event has played.
    pub fn new(race: Race) -> Self {
        RaceView {
            race,
            sessions: 0,
            turn: 0,
        }
    }

    /// Follows the demo's stream: a session starts a dialogue, a turn moves one turn on.
    pub fn observe(&mut self, ev: &Event) {
        match ev.kind() {
            Some(Kind::Session) => {
                self.sessions += 1;
                self.turn = 0;
            }
            Some(Kind::Turn) => self.turn += 1,
            _ => {}
        }
    }

    /// The 0-based dialogue and 1-based turn shown (turn 0: none played yet).
    pub fn position(&self) -> (usize, usize) {
        (self.sessions.saturating_sub(1), self.turn)
    }

    fn row(&self) -> Option<&Row> {
        let (d, t) = self.position();
        self.race.row(d, t)
    }

    /// Draws both sides in `area`.
    pub fn draw(&self, f: &mut Frame, th: &Theme, area: Rect) {
        let (d, t) = self.position();
        let turns = self.race.dialogues.get(d).map_or(0, |x| x.rows.len());
        let title = match self.row() {
            Some(r) => {
                let commit = r.commitment.as_ref().map_or_else(
                    || "commits nothing".to_string(),
                    |(id, f)| format!("commit {id}: {f}"),
                );
                format!(
                    " dialogue {} · turn {t}/{turns} · reply {} · {commit} ",
                    d + 1,
                    r.reply.as_str()
                )
            }
            None => format!(" dialogue {} · waiting for turn 1 ", d + 1),
        };
        let outer = Block::default()
            .borders(Borders::ALL)
            .border_style(th.border)
            .title(Line::from(vec![
                Span::styled(" race ", th.title),
                Span::styled(crate::sanitize::sanitize(&title), th.dim),
            ]));
        let inner = outer.inner(area);
        f.render_widget(outer, area);
        let cols = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .split(inner);
        // Before the first turn Σ holds the world's rules and facts only.
        let start = Side {
            sigma_size: self
                .race
                .dialogues
                .get(d)
                .map_or(0, |x| x.dialogue.world.rules.len()),
            ..Side::default()
        };
        for (i, col) in cols.iter().enumerate() {
            let side = self.row().map_or(&start, |r| &r.sides[i]);
            let lines = side_lines(th, self.race.policies[i].as_str(), side);
            let block = Block::default().borders(if i == 0 {
                Borders::RIGHT
            } else {
                Borders::NONE
            });
            f.render_widget(
                Paragraph::new(lines).block(block.border_style(th.border)),
                *col,
            );
        }
    }
}

/// One column: the policy, its counts, what this turn did, then its Σ commitments.
fn side_lines<'a>(th: &Theme, policy: &str, s: &Side) -> Vec<Line<'a>> {
    let mut lines = vec![
        Line::from(vec![
            Span::styled(format!("Σ {policy}"), th.title),
            Span::styled(format!("  |Σ| {}", s.sigma_size), th.text),
        ]),
        Line::from(Span::styled(
            format!(
                "revisions {}  dropped {}  refusals {}  fallbacks {}",
                s.revisions, s.dropped_total, s.refusals, s.fallbacks
            ),
            th.text,
        )),
    ];
    let now = if !s.dropped.is_empty() {
        let v: Vec<String> = s
            .dropped
            .iter()
            .map(|(id, f)| format!("{id} ({f})"))
            .collect();
        Some((format!("this turn dropped {}", v.join(", ")), th.retracted))
    } else if s.refused {
        Some(("this turn refused the commitment".to_string(), th.warn))
    } else if s.revised {
        Some(("this turn kept a contradiction".to_string(), th.error))
    } else {
        None
    };
    if let Some((text, style)) = now {
        let fb = if s.fallback {
            " (recency fallback)"
        } else {
            ""
        };
        lines.push(Line::from(spans(&format!("{text}{fb}"), style, th.marker)));
    }
    for (id, f) in s.sigma.iter().rev() {
        lines.push(Line::from(spans(
            &format!("{id:<4} {f}"),
            th.text,
            th.marker,
        )));
    }
    lines
}
