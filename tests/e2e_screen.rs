//! End-to-end, in a real terminal (tmux): what reaches the screen. Emoji whose width
//! terminals disagree on leave no stale glyph behind (issue 12 item 17). Skipped visibly
//! without tmux.

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, bin};

fn has_sequence_parts(s: &str) -> bool {
    s.chars().any(|c| {
        ('\u{1f1e6}'..='\u{1f1ff}').contains(&c) || ('\u{1f3fb}'..='\u{1f3ff}').contains(&c)
    })
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn skin_tones_and_flags_leave_no_stale_glyph_when_moving_to_a_short_row() {
    if tmux::missing("e2e_screen") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("emoji.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"kind":"thought","session":"s","text":"so 🥲🏻 and 🇺🇸 then more words after them"}"#,
            "\n",
            r#"{"kind":"thought","session":"s","text":"ok"}"#,
            "\n"
        ),
    )
    .unwrap();
    let t = Tmux::new("emoji");
    t.start_sized(
        &format!(
            "sh -c '\"{}\" view --no-follow \"{}\"; exec sleep 600'",
            bin(),
            file.display()
        ),
        100,
        30,
    );
    t.wait_for("the first frame", 20, |s| s.contains("step 2 of 2"));
    t.keys(&["g"]);
    let s = t.wait_for("the emoji row", 10, |s| {
        s.contains("step 1 of 2") && s.contains("⟨flag:US⟩")
    });
    assert!(s.contains("🥲⟨U+1F3FB⟩"), "{s}");
    assert!(!has_sequence_parts(&s), "{s}");
    t.keys(&["]"]);
    let s = t.wait_for("the short row", 10, |s| s.contains("step 2 of 2"));
    // Polled again after a moment: a stale cell would stay, not flicker.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let s2 = t.capture();
    assert!(!has_sequence_parts(&s2), "{s}\n{s2}");
    t.keys(&["q"]);
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn a_bad_line_is_shown_by_its_content_in_the_detail_pane() {
    if tmux::missing("e2e_screen") {
        return;
    }
    let t = Tmux::new("badline");
    t.start_sized(
        &format!(
            "sh -c 'cd \"{}\" && \"{}\" view --no-follow broken.jsonl; exec sleep 600'",
            tmux::sample("").display(),
            bin()
        ),
        200,
        45,
    );
    t.wait_for("the first frame", 20, |s| s.contains("parse errors: 15"));
    t.keys(&["g", "e"]);
    // Line 3 of broken.jsonl: `"formula":"rain" "wet"`, a missing comma.
    t.wait_for("the bad line's content", 10, |s| {
        s.contains("broken.jsonl:3:92: expected")
            && s.contains(r#"line       {"kind":"announce","seq":3,"#)
            && s.contains(r#"⟫ {"kind":"announce","seq":3,"#)
    });
    t.keys(&["q"]);
}
