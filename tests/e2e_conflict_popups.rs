//! End-to-end (tmux): the conflict-set popup of every row of the retractions pane is the same
//! whatever was opened before. Opening a popup asks a read-only question, so the order in
//! which a user opens them cannot change what they say. Skipped, with a message, when tmux is
//! not installed.

use std::collections::BTreeMap;

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, bin, sample};

/// The text inside the popup box on `screen`, or `None` when no popup is drawn.
fn popup_text(screen: &str) -> Option<String> {
    let rows: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let (top, title) = rows.iter().enumerate().find_map(|(i, r)| {
        let s: String = r.iter().collect();
        s.find("conflict set (any key closes)").map(|_| (i, r))
    })?;
    let title_at = {
        let s: String = title.iter().collect();
        s[..s.find("conflict set")?].chars().count()
    };
    let left = (0..title_at).rev().find(|&c| title[c] == '┌')?;
    let right = (title_at..title.len()).find(|&c| title[c] == '┐')?;
    let mut out = Vec::new();
    for r in &rows[top + 1..] {
        if r.get(left) == Some(&'└') && r.get(right) == Some(&'┘') {
            // A whole box: drawn completely (a capture can catch a frame half written).
            while out.last().is_some_and(|l: &String| l.is_empty()) {
                out.pop();
            }
            return Some(out.join("\n"));
        }
        if r.get(left) != Some(&'│') || r.get(right) != Some(&'│') {
            return None;
        }
        let inner: String = r[left + 1..right].iter().collect();
        out.push(inner.trim_end().to_string());
    }
    None
}

/// Opens the rows in `order` in a fresh TUI and returns each row's popup.
fn popups(tag: &str, order: &[usize]) -> BTreeMap<usize, String> {
    let t = Tmux::new(tag);
    let cmd = format!(
        "{} view --no-follow {}",
        bin(),
        sample("greedysat-stress.jsonl").display()
    );
    t.start_sized(&cmd, 180, 50);
    t.wait_for("the first frame", 20, |s| s.contains("step 38 of 38"));
    // Σ → plan → verification → retractions.
    t.keys(&["Tab", "Tab", "Tab"]);
    t.wait_for("the retractions pane focused", 10, |s| {
        s.contains("retractions")
    });
    let mut out = BTreeMap::new();
    for &row in order {
        for _ in 0..6 {
            t.keys(&["k"]);
        }
        for _ in 0..row {
            t.keys(&["j"]);
        }
        t.keys(&["Enter"]);
        let s = t.wait_for("a conflict popup", 20, |s| {
            popup_text(s).is_some_and(|p| !p.trim().is_empty())
        });
        let text = popup_text(&s).unwrap_or_default();
        if let Some(before) = out.insert(row, text.clone()) {
            assert_eq!(before, text, "row {row} opened twice gave two answers");
        }
        t.keys(&["x"]);
        t.wait_for("the popup closed", 10, |s| popup_text(s).is_none());
    }
    t.keys(&["q"]);
    out
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn conflict_popups_are_the_same_in_every_order() {
    if tmux::missing("e2e_conflict_popups") {
        return;
    }
    // The sample's pane lists 4 rows: two revisions, each with the retraction applying it.
    let forward = popups("popups-fwd", &[0, 1, 2, 3]);
    let backward = popups("popups-back", &[3, 2, 1, 0, 3]);
    let jumping = popups("popups-jump", &[2, 0, 3, 1, 0, 2]);
    assert_eq!(forward.len(), 4);
    assert_eq!(forward, backward);
    assert_eq!(forward, jumping);
    for (row, text) in &forward {
        assert!(
            text.contains("contradiction") && !text.contains("entailed just before"),
            "row {row}: {text}"
        );
    }
}
