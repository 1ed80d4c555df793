//! End-to-end, in tmux: the questions across time and runs in the TUI. `H` on a Σ belief and
//! `:history φ` mark a history on the strip under the timeline, above Σ's size as a
//! sparkline; `doxascope diff A B --tui` shows two runs side by side with `]` `[` moving both
//! and `e` jumping to the first divergence; `b`, `:note` and `'` keep bookmarks and notes
//! beside the trace and jump back to them; `:whatif` answers on the REPL line.
//!
//! Skipped (ignored, with the reason) when tmux is missing; a failure under CI.

use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, bin, sample};

fn view(file: &Path) -> String {
    view_at(file, None)
}

/// The treasure hunt opened at step 17: the user's correction has made Σ inconsistent and
/// the revision (steps 19 to 21) has not yet retracted the map.
fn view_at(file: &Path, step: Option<u64>) -> String {
    let at = step.map(|s| format!("--at {s} ")).unwrap_or_default();
    format!(
        "sh -c '\"{}\" view --no-follow {at}\"{}\"; echo EXIT=$?; echo END-OF-RUN; exec sleep 600'",
        bin(),
        file.display()
    )
}

fn copy_sample(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(sample(name), &p).unwrap();
    p
}

/// The screen row holding `needle`, if any.
fn row_with<'a>(screen: &'a str, needle: &str) -> Option<&'a str> {
    screen.lines().find(|l| l.contains(needle))
}

fn quit(t: &Tmux) {
    t.leave_repl();
    t.keys(&["q"]);
    let s = t.wait_for("exit", 20, |s| s.contains("END-OF-RUN"));
    assert!(s.contains("EXIT=0"), "{s}");
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn history_strip_and_sigma_sparkline_under_the_timeline() {
    if tmux::missing("e2e_across") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = copy_sample(dir.path(), "treasure-hunt.jsonl");
    let t = Tmux::new("t17-history");
    t.start_sized(&view_at(&trace, Some(17)), 140, 60);
    // Before any history: the strip says how to get one; the sparkline is there.
    t.wait_for("the first frame with its strips", 20, |s| {
        s.contains("step 17 of 23")
            && s.contains("H on a Σ belief, or :history φ, marks its history here")
            && s.contains('█')
            && s.contains('▂')
    });
    // H on the second belief of Σ (t2-map-b, treasure_in_b).
    t.keys(&["j"]);
    std::thread::sleep(Duration::from_millis(200));
    t.keys(&["H"]);
    // A mark where it became entailed (step 8), where Σ went inconsistent (step 15), where
    // the revision retracted it (step 20, Σ still inconsistent) and where it became
    // contradicted (step 21), on the strip line (dashes elsewhere). A capture can catch a frame half drawn: wait for
    // the whole of it.
    let strip_of = |s: &str| -> Option<String> {
        s.lines()
            .find(|l| l.contains('─') && l.contains('●') && l.contains('│'))
            .map(str::to_string)
    };
    let s = t.wait_for("the history", 20, |s| {
        s.contains("history: t2-map-b (treasure_in_b)")
            && s.contains("marked on the strip under the timeline")
            && strip_of(s).is_some_and(|l| l.contains('×'))
    });
    // The marks on the strip, left to right (the detail pane beside it is cut off).
    let marks_of = |strip: &str| -> String {
        strip
            .split("││")
            .next()
            .unwrap()
            .chars()
            .filter(|c| matches!(c, '●' | '×' | '○' | '?'))
            .collect()
    };
    let strip = strip_of(&s).unwrap();
    assert_eq!(marks_of(&strip), "●××●", "{strip}");
    assert!(s.contains("marked on the strip under the timeline"), "{s}");
    // The REPL pane has the answer (its last lines: the last change and the cost).
    assert!(s.contains("→ contradicted (was inconsistent)"), "{s}");
    assert!(s.contains("cost: index of"), "{s}");
    // :history φ for a formula replaces it.
    t.keys(&[":"]);
    t.type_text("history treasure_in_a");
    t.keys(&["Enter"]);
    // Contradicted at step 8, Σ inconsistent at 15, entailed once the revision is done (21).
    // The strip is asked for whole: a capture can fall between the title and the strip.
    t.wait_for("the new history", 20, |s| {
        s.contains("history: treasure_in_a") && strip_of(s).is_some_and(|l| marks_of(&l) == "●×●")
    });
    quit(&t);
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn two_runs_side_by_side_move_together() {
    if tmux::missing("e2e_across") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = [
        r#"{"kind":"announce","id":"r1","formula":"a -> c","role":"rule"}"#,
        r#"{"kind":"announce","id":"f1","formula":"a"}"#,
        r#"{"kind":"verify","formula":"c","outcome":"entailed"}"#,
        r#"{"kind":"announce","id":"f2","formula":"b"}"#,
        r#"{"kind":"announce","id":"f3","formula":"~d"}"#,
    ];
    let mut b = a.to_vec();
    b.insert(2, r#"{"kind":"announce","id":"f9","formula":"c -> d"}"#);
    let (pa, pb) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&pa, a.join("\n") + "\n").unwrap();
    std::fs::write(&pb, b.join("\n") + "\n").unwrap();
    let t = Tmux::new("t17-diff");
    let cmd = format!(
        "sh -c 'cd \"{}\" && \"{}\" diff a.jsonl b.jsonl --tui; echo EXIT=$?; echo END-OF-RUN; exec sleep 600'",
        dir.path().display(),
        bin()
    );
    t.start_sized(&cmd, 140, 40);
    t.wait_for("the side-by-side view", 20, |s| {
        s.contains("A: a.jsonl")
            && s.contains("B: b.jsonl")
            && s.contains("pair 1 of")
            && s.contains("first divergence: step 3 of A, step 3 of B")
    });
    t.keys(&["e"]);
    let s = t.wait_for("the divergence", 10, |s| {
        s.contains("Σ differs here")
            && s.contains("A: a.jsonl step 3 of 5")
            && s.contains("B: b.jsonl step 3 of 6")
            && row_with(s, "f9").is_some()
    });
    let f9 = row_with(&s, "f9").unwrap_or_else(|| panic!("{s}"));
    // Only B holds it, marked, in B's (right) half.
    assert!(f9.contains("+ f9"), "{f9}");
    assert!(f9.find("+ f9") > f9.find("│"), "{f9}");
    assert!(s.contains("A: a.jsonl step 3 of 5"), "{s}");
    assert!(s.contains("B: b.jsonl step 3 of 6"), "{s}");
    // ] moves both runs.
    t.keys(&["]"]);
    t.wait_for("the next pair", 10, |s| {
        s.contains("A: a.jsonl step 4 of 5") && s.contains("B: b.jsonl step 4 of 6")
    });
    t.keys(&["["]);
    t.wait_for("the pair before", 10, |s| {
        s.contains("A: a.jsonl step 3 of 5") && s.contains("B: b.jsonl step 3 of 6")
    });
    t.keys(&["g"]);
    t.wait_for("the first pair", 10, |s| s.contains("Σ the same here"));
    // Esc: back to the panes.
    t.keys(&["Escape"]);
    t.wait_for("the panes", 10, |s| {
        s.contains("timeline") && !s.contains("A: a.jsonl")
    });
    quit(&t);
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn bookmarks_and_notes_are_kept_beside_the_trace_and_jumped_to() {
    if tmux::missing("e2e_across") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = copy_sample(dir.path(), "treasure-hunt.jsonl");
    let before = std::fs::read(&trace).unwrap();
    let t = Tmux::new("t17-marks");
    t.start_sized(&view_at(&trace, Some(17)), 140, 45);
    t.wait_for("the first frame", 20, |s| s.contains("step 17 of 23"));
    // A bookmark on the second Σ belief at step 17.
    t.keys(&["j"]);
    std::thread::sleep(Duration::from_millis(200));
    t.keys(&["b"]);
    t.wait_for("the bookmark", 20, |s| {
        s.contains("bookmarked step 17, belief t2-map-b")
    });
    // A note at step 8.
    for _ in 0..9 {
        t.keys(&["["]);
    }
    t.wait_for("step 8", 10, |s| s.contains("step 8 of 23"));
    t.keys(&[":"]);
    t.type_text("note the map is the only source");
    t.keys(&["Enter"]);
    t.wait_for("the note", 20, |s| s.contains("noted #2"));
    t.leave_repl();
    t.keys(&["G"]);
    t.wait_for("the last step", 10, |s| s.contains("step 23 of 23"));
    // ' lists both; the one before the shown step is selected; ↑ and Enter jump to step 8.
    t.keys(&["'"]);
    t.wait_for("the overlay", 20, |s| {
        s.contains("bookmarks and notes (↑↓")
            && s.contains("the map is the only source")
            && s.contains("belief t2-map-b  (bookmark)")
    });
    t.keys(&["Up", "Enter"]);
    t.wait_for("the jump", 10, |s| {
        s.contains("step 8 of 23") && !s.contains("(↑↓")
    });
    // Kept beside the trace; the trace untouched.
    let side = dir.path().join("treasure-hunt.jsonl.notes.json");
    let notes: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    let steps: Vec<u64> = notes["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [17, 8]);
    assert_eq!(std::fs::read(&trace).unwrap(), before);
    quit(&t);
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn whatif_answers_on_the_repl_line() {
    if tmux::missing("e2e_across") {
        return;
    }
    let t = Tmux::new("t17-whatif");
    t.start_sized(&view(&sample("greedysat-stress.jsonl")), 140, 60);
    t.wait_for("the first frame", 20, |s| s.contains("step 38 of 38"));
    t.keys(&[":"]);
    t.type_text("whatif reject");
    t.keys(&["Enter"]);
    // A long answer is shown from its command, the pane saying how much more there is.
    t.wait_for("whatif's answer", 30, |s| {
        s.contains("what if reject had decided from step 0") && s.contains(" more (PgDn)")
    });
    t.leave_repl();
    t.keys(&["z"]);
    // Zoomed on the REPL pane: the repairs of the run's revision at step 23.
    // Waiting for every line at once: a capture can catch a frame half drawn.
    t.wait_for("the zoomed REPL", 10, |s| {
        s.contains("step 23: b6 C")
            && s.contains("verify ¬F: entailed → contradiction")
            && s.contains("4 of 16 later verdicts or answers would have changed")
            && s.contains("turn E: YES → NO")
            && s.contains("give up b3  [the run's]")
            && s.contains("give up b6 (refuse it); keeps b3  [reject]")
    });
    t.keys(&["z"]);
    quit(&t);
}

/// A sidecar that cannot be written: `b` and `:note` say so on the screen, with what was not
/// saved, and nothing moves silently to the data directory.
#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn a_read_only_sidecar_is_said_on_the_screen() {
    use std::os::unix::fs::PermissionsExt;
    if tmux::missing("e2e_across") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = copy_sample(dir.path(), "treasure-hunt.jsonl");
    let side = dir.path().join("treasure-hunt.jsonl.notes.json");
    std::fs::write(&side, r#"{"doxascope_notes":1,"trace":"t","notes":[]}"#).unwrap();
    std::fs::set_permissions(&side, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = std::fs::read(&side).unwrap();
    let t = Tmux::new("t-ro-notes");
    t.start_sized(&view_at(&trace, Some(17)), 200, 45);
    t.wait_for("the first frame", 20, |s| s.contains("step 17 of 23"));
    t.keys(&["b"]);
    t.wait_for("the bookmark refused", 20, |s| {
        s.contains("read-only") && s.contains("bookmark was not saved")
    });
    t.keys(&[":"]);
    t.type_text("note keep this");
    t.keys(&["Enter"]);
    t.wait_for("the note refused", 20, |s| {
        s.contains("read-only") && s.contains("the note was not saved: keep this")
    });
    assert_eq!(std::fs::read(&side).unwrap(), before);
    quit(&t);
}
