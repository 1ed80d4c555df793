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
    assert!(s.contains("🥲⟨tone-1-2⟩"), "{s}");
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

/// The TUI's process, a child of the pane's shell.
fn tui_pid(t: &Tmux) -> Option<u32> {
    let sh = t.display("#{pane_pid}");
    let children = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).ok()?;
    children.split_whitespace().find_map(|p| {
        let cmd = std::fs::read(format!("/proc/{p}/cmdline")).ok()?;
        let cmd = String::from_utf8_lossy(&cmd);
        (cmd.contains("doxascope") && cmd.contains("view")).then(|| p.parse().ok())?
    })
}

/// SIGKILL cannot be caught and an abort (a failed allocation) does not unwind: the guardian
/// process gives the terminal back, cooked, on the main screen, cursor shown, mouse off.
#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn a_killed_or_aborted_tui_leaves_the_terminal_usable() {
    if tmux::missing("e2e_screen") {
        return;
    }
    for signal in ["KILL", "ABRT"] {
        // The shell learns of the death as the guardian does and may print before the
        // guardian has left the alternate screen (under load it did): what it prints then
        // goes with that screen, so the shell prints once the test saw the screen given back.
        let dir = tempfile::tempdir().unwrap();
        let go = dir.path().join("go");
        let t = Tmux::new(&format!("kill-{signal}"));
        t.start_sized(
            &format!(
                "sh -c '\"{}\" view --no-follow \"{}\"; s=$?; until [ -e \"{}\" ]; do sleep 0.05; done; echo EXIT=$s; stty -a; echo END-OF-RUN; exec sleep 600'",
                bin(),
                tmux::sample("treasure-hunt.jsonl").display(),
                go.display()
            ),
            120,
            40,
        );
        t.wait_for("the first frame", 20, |s| s.contains("step 23 of 23"));
        assert_eq!(t.display("#{alternate_on}|#{mouse_any_flag}"), "1|1");
        let pid = tui_pid(&t).expect("the TUI's pid");
        let ok = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(ok.success());
        let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while t.display("#{alternate_on}|#{mouse_any_flag}|#{cursor_flag}") != "0|0|1"
            && std::time::Instant::now() < end
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // The guardian sets the terminal's modes before it writes the reset: the screen
        // given back means both are done.
        std::fs::write(&go, b"").unwrap();
        let s = t.wait_for("the shell after the TUI", 20, |s| s.contains("END-OF-RUN"));
        assert!(s.contains("EXIT=1"), "killed by a signal: {s}");
        assert_eq!(
            t.display("#{alternate_on}|#{mouse_any_flag}|#{cursor_flag}"),
            "0|0|1",
            "SIG{signal}: {s}"
        );
        let words: Vec<&str> = s.split_whitespace().collect();
        for flag in ["icanon", "echo", "isig"] {
            assert!(
                words.contains(&flag),
                "SIG{signal}: stty shows {flag} off:\n{s}"
            );
        }
    }
}

/// A clean quit leaves no guardian behind and nothing for it to do.
#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn a_clean_quit_ends_the_guardian_too() {
    if tmux::missing("e2e_screen") {
        return;
    }
    let t = Tmux::new("guardian-quit");
    t.start_sized(
        &format!(
            "sh -c '\"{}\" view --no-follow \"{}\"; echo EXIT=$?; echo END-OF-RUN; exec sleep 600'",
            bin(),
            tmux::sample("treasure-hunt.jsonl").display()
        ),
        120,
        40,
    );
    t.wait_for("the first frame", 20, |s| s.contains("step 23 of 23"));
    let pid = tui_pid(&t).expect("the TUI's pid");
    let guardians =
        || std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    assert!(
        !guardians().trim().is_empty(),
        "a guardian runs beside the TUI"
    );
    let guardian: u32 = guardians()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    t.keys(&["q"]);
    let s = t.wait_for("exit", 20, |s| s.contains("END-OF-RUN"));
    assert!(s.contains("EXIT=0"), "{s}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !std::path::Path::new(&format!("/proc/{guardian}")).exists()
            || std::fs::read_to_string(format!("/proc/{guardian}/stat"))
                .is_ok_and(|st| st.contains(") Z ")),
        "the guardian exited"
    );
}
