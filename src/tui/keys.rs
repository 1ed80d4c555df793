//! The key table: one list of bindings from which both dispatch and the `?` overlay are built,
//! so help cannot drift from behaviour.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key asks for. Input handling maps keys to actions; [`super::app::App::apply`]
/// performs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Quit.
    Quit,
    /// Suspend to the shell (Ctrl-Z).
    Suspend,
    /// Focus the next pane.
    NextPane,
    /// Focus the previous pane.
    PrevPane,
    /// Toggle the help overlay.
    Help,
    /// Start a search.
    Search,
    /// Next search match.
    SearchNext,
    /// Previous search match.
    SearchPrev,
    /// Next error or finding.
    NextFlag,
    /// Previous error or finding.
    PrevFlag,
    /// One step back.
    StepBack,
    /// One step forward.
    StepForward,
    /// First step.
    First,
    /// Last step.
    Last,
    /// Follow the newest step on or off.
    Follow,
    /// Open the REPL command line.
    Command,
    /// Zoom the focused pane.
    Zoom,
    /// `why` on the selected belief; highlight its support in Σ.
    Why,
    /// Open the selected item (a retraction's conflict set).
    Enter,
    /// Selection up.
    Up,
    /// Selection down.
    Down,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Filter the focused pane: the timeline (kind:, level:, text, `-` filters out) when it
    /// has the focus, else Σ (role:, source:, status:, text).
    Filter,
    /// Scroll the timeline's rows left.
    ScrollLeft,
    /// Scroll the timeline's rows right (long rows).
    ScrollRight,
    /// Next session.
    NextSession,
    /// Previous session.
    PrevSession,
    /// The session list (`:sessions`): every session with its figures, to open one.
    Sessions,
    /// The session shown before this one (`cd -`).
    LastSession,
    /// The next part of the shown session's conversation.
    NextPart,
    /// Toggle mouse capture.
    Mouse,
    /// Show or hide the timeline's time columns (time since the start, duration).
    TimeColumns,
    /// Close an overlay, clear highlights.
    Escape,
    /// Audit the shown session now (findings and recomputed verification claims).
    Recompute,
    /// The history of the selected belief: its steps marked on the strip under the
    /// timeline (`:history φ` for any formula).
    History,
    /// Bookmark the selected step, or the selected belief when Σ has the focus.
    Bookmark,
    /// The bookmarks and notes of the session, to jump to one.
    Bookmarks,
    /// Demo only: pause or resume play.
    DemoPause,
    /// Demo only: release the rest of the current turn.
    DemoStep,
    /// Demo only: double the play speed.
    DemoFaster,
    /// Demo only: halve the play speed.
    DemoSlower,
}

impl Action {
    /// Whether the action exists only while `doxascope demo` plays in the TUI; its keys do
    /// nothing (and are not listed in the help) otherwise.
    pub fn demo_only(self) -> bool {
        matches!(
            self,
            Action::DemoPause | Action::DemoStep | Action::DemoFaster | Action::DemoSlower
        )
    }
}

/// One binding: the keys, the action and the help text.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// The keys (code, required modifiers).
    pub keys: &'static [(KeyCode, KeyModifiers)],
    /// How the keys are written in the help overlay.
    pub label: &'static str,
    /// The action.
    pub action: Action,
    /// What it does.
    pub help: &'static str,
}

const N: KeyModifiers = KeyModifiers::NONE;
const C: KeyModifiers = KeyModifiers::CONTROL;
const S: KeyModifiers = KeyModifiers::SHIFT;

/// Every binding of the normal mode, in the order the help overlay lists them.
pub const BINDINGS: &[Binding] = &[
    Binding {
        keys: &[(KeyCode::Tab, N)],
        label: "Tab",
        action: Action::NextPane,
        help: "next pane",
    },
    Binding {
        keys: &[(KeyCode::BackTab, S), (KeyCode::BackTab, N)],
        label: "Shift-Tab",
        action: Action::PrevPane,
        help: "previous pane",
    },
    Binding {
        keys: &[(KeyCode::Char('?'), N), (KeyCode::Char('?'), S)],
        label: "?",
        action: Action::Help,
        help: "this help",
    },
    Binding {
        keys: &[(KeyCode::Char('/'), N)],
        label: "/",
        action: Action::Search,
        help: "search events",
    },
    Binding {
        keys: &[(KeyCode::Char('n'), N)],
        label: "n",
        action: Action::SearchNext,
        help: "next match",
    },
    Binding {
        keys: &[(KeyCode::Char('N'), S), (KeyCode::Char('N'), N)],
        label: "N",
        action: Action::SearchPrev,
        help: "previous match",
    },
    Binding {
        keys: &[(KeyCode::Char('e'), N)],
        label: "e",
        action: Action::NextFlag,
        help: "next error or finding",
    },
    Binding {
        keys: &[(KeyCode::Char('E'), S), (KeyCode::Char('E'), N)],
        label: "E",
        action: Action::PrevFlag,
        help: "previous error or finding",
    },
    Binding {
        keys: &[(KeyCode::Char('['), N)],
        label: "[",
        action: Action::StepBack,
        help: "step back",
    },
    Binding {
        keys: &[(KeyCode::Char(']'), N)],
        label: "]",
        action: Action::StepForward,
        help: "step forward",
    },
    Binding {
        keys: &[(KeyCode::Char('g'), N), (KeyCode::Home, N)],
        label: "g Home",
        action: Action::First,
        help: "first step",
    },
    Binding {
        keys: &[
            (KeyCode::Char('G'), S),
            (KeyCode::Char('G'), N),
            (KeyCode::End, N),
        ],
        label: "G End",
        action: Action::Last,
        help: "last step",
    },
    Binding {
        keys: &[(KeyCode::Char('f'), N)],
        label: "f",
        action: Action::Follow,
        help: "follow the newest step on/off",
    },
    Binding {
        keys: &[(KeyCode::Char(':'), N), (KeyCode::Char(':'), S)],
        label: ":",
        action: Action::Command,
        help: "REPL command line (Esc leaves)",
    },
    Binding {
        keys: &[(KeyCode::Char('z'), N)],
        label: "z",
        action: Action::Zoom,
        help: "zoom the focused pane",
    },
    Binding {
        keys: &[(KeyCode::Char('w'), N)],
        label: "w",
        action: Action::Why,
        help: "why: highlight the selected belief's minimal support",
    },
    Binding {
        keys: &[(KeyCode::Enter, N)],
        label: "Enter",
        action: Action::Enter,
        help: "open: a retraction's conflict set",
    },
    Binding {
        keys: &[(KeyCode::Up, N), (KeyCode::Char('k'), N)],
        label: "↑ k",
        action: Action::Up,
        help: "select up",
    },
    Binding {
        keys: &[(KeyCode::Down, N), (KeyCode::Char('j'), N)],
        label: "↓ j",
        action: Action::Down,
        help: "select down",
    },
    Binding {
        keys: &[(KeyCode::PageUp, N)],
        label: "PgUp",
        action: Action::PageUp,
        help: "page up",
    },
    Binding {
        keys: &[(KeyCode::PageDown, N)],
        label: "PgDn",
        action: Action::PageDown,
        help: "page down",
    },
    Binding {
        keys: &[(KeyCode::Char('F'), S), (KeyCode::Char('F'), N)],
        label: "F",
        action: Action::Filter,
        help: "filter the focused pane: timeline or Σ (the hint bar shows how)",
    },
    Binding {
        keys: &[(KeyCode::Left, N), (KeyCode::Char('h'), N)],
        label: "← h",
        action: Action::ScrollLeft,
        help: "scroll the timeline's rows left; the previous tab of the plan and retractions panes",
    },
    Binding {
        keys: &[(KeyCode::Right, N), (KeyCode::Char('l'), N)],
        label: "→ l",
        action: Action::ScrollRight,
        help: "scroll the timeline's rows right (long rows); the next tab of the plan and retractions panes",
    },
    Binding {
        keys: &[(KeyCode::Char('R'), S), (KeyCode::Char('R'), N)],
        label: "R",
        action: Action::Recompute,
        help: "audit the session now (findings, recomputed verification claims)",
    },
    Binding {
        keys: &[(KeyCode::Char('H'), S), (KeyCode::Char('H'), N)],
        label: "H",
        action: Action::History,
        help: "history of the selected Σ belief: its steps on the strip under the timeline",
    },
    Binding {
        keys: &[(KeyCode::Char('b'), N)],
        label: "b",
        action: Action::Bookmark,
        help: "bookmark the focused pane's item: Σ's belief, a claim's or a retraction's step, else the step; :note TEXT adds a note",
    },
    Binding {
        keys: &[(KeyCode::Char('\''), N)],
        label: "'",
        action: Action::Bookmarks,
        help: "bookmarks and notes: Enter jumps to one",
    },
    Binding {
        keys: &[(KeyCode::Char('s'), N)],
        label: "s",
        action: Action::NextSession,
        help: "next session",
    },
    Binding {
        keys: &[(KeyCode::Char('T'), S), (KeyCode::Char('T'), N)],
        label: "T",
        action: Action::TimeColumns,
        help: "timeline: time since the start and duration columns on/off (:time +12.5s jumps)",
    },
    Binding {
        keys: &[(KeyCode::Char('S'), S), (KeyCode::Char('S'), N)],
        label: "S",
        action: Action::PrevSession,
        help: "previous session",
    },
    Binding {
        keys: &[(KeyCode::Char('o'), N)],
        label: "o",
        action: Action::Sessions,
        help: "the session list (:sessions): figures per session, sort, / filters, Enter opens",
    },
    Binding {
        keys: &[(KeyCode::Backspace, N), (KeyCode::Char('-'), N)],
        label: "- Bksp",
        action: Action::LastSession,
        help: "the session shown before this one (like cd -; Backspace in the demo)",
    },
    Binding {
        keys: &[(KeyCode::Char('c'), N)],
        label: "c",
        action: Action::NextPart,
        help: "the next part of the shown session's conversation (linked sessions)",
    },
    Binding {
        keys: &[(KeyCode::Char('m'), N)],
        label: "m",
        action: Action::Mouse,
        help: "mouse capture on/off (off lets you select text)",
    },
    Binding {
        keys: &[(KeyCode::Esc, N)],
        label: "Esc",
        action: Action::Escape,
        help: "close overlay, clear the Σ filter, clear highlights",
    },
    Binding {
        keys: &[(KeyCode::Char(' '), N)],
        label: "Space",
        action: Action::DemoPause,
        help: "demo: pause / play",
    },
    Binding {
        keys: &[(KeyCode::Char('.'), N)],
        label: ".",
        action: Action::DemoStep,
        help: "demo: step (the rest of the current turn)",
    },
    Binding {
        keys: &[(KeyCode::Char('+'), N), (KeyCode::Char('+'), S)],
        label: "+",
        action: Action::DemoFaster,
        help: "demo: faster (x2)",
    },
    Binding {
        keys: &[(KeyCode::Char('-'), N)],
        label: "-",
        action: Action::DemoSlower,
        help: "demo: slower (/2)",
    },
    Binding {
        keys: &[(KeyCode::Char('z'), C)],
        label: "Ctrl-Z",
        action: Action::Suspend,
        help: "suspend (fg resumes)",
    },
    Binding {
        keys: &[(KeyCode::Char('q'), N), (KeyCode::Char('c'), C)],
        label: "q Ctrl-C",
        action: Action::Quit,
        help: "quit",
    },
];

/// The action bound to a key in normal mode, outside the demo (demo keys are unbound).
pub fn lookup(key: &KeyEvent) -> Option<Action> {
    lookup_in(key, false)
}

/// The action bound to a key in normal mode; the demo's keys count only when `demo` is set,
/// and then before another meaning of the same key (`-`: slower in the demo, the last
/// session outside it).
pub fn lookup_in(key: &KeyEvent, demo: bool) -> Option<Action> {
    // Ctrl-Z and Ctrl-C are matched on CONTROL alone; other keys ignore SHIFT noise that some
    // terminals add to symbols.
    let mods = key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::SHIFT | KeyModifiers::ALT);
    let bound = |b: &&Binding| b.keys.iter().any(|&(c, m)| c == key.code && m == mods);
    let demo_first = BINDINGS
        .iter()
        .filter(|b| demo && b.action.demo_only())
        .find(bound);
    demo_first
        .or_else(|| {
            BINDINGS
                .iter()
                .filter(|b| !b.action.demo_only())
                .find(bound)
        })
        .map(|b| b.action)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_in_the_table_is_reachable_and_unambiguous() {
        let mut seen = std::collections::HashSet::new();
        for b in BINDINGS {
            for &(c, m) in b.keys {
                // A key may have one meaning in the demo and another outside it.
                assert!(
                    seen.insert((c, m, b.action.demo_only())),
                    "{:?} bound twice",
                    (c, m)
                );
                let in_demo = lookup_in(&KeyEvent::new(c, m), true);
                let demo_twin = BINDINGS.iter().any(|o| {
                    o.action.demo_only() && o.keys.contains(&(c, m)) && o.action != b.action
                });
                if demo_twin {
                    assert_ne!(in_demo, Some(b.action), "the demo's meaning of {c:?} wins");
                } else {
                    assert_eq!(in_demo, Some(b.action));
                }
                let outside = lookup(&KeyEvent::new(c, m));
                if b.action.demo_only() {
                    assert!(
                        outside.is_none_or(|a| !a.demo_only()),
                        "{:?} is bound outside the demo",
                        (c, m)
                    );
                } else {
                    assert_eq!(outside, Some(b.action));
                }
            }
        }
        assert_eq!(lookup(&KeyEvent::new(KeyCode::Char('x'), N)), None);
    }
}
