//! End-to-end, in a real terminal (tmux): the timeline's lnav habits. A filter by kind with
//! filter-in then filter-out, horizontal scroll of a long row on an 80x24 terminal, mouse
//! clicks (SGR reports, as a terminal sends them) selecting a timeline row and a Σ row, and
//! `:open` reading a second file from inside the TUI. Skipped visibly without tmux.

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, bin, sample};

/// Opens `file` from the samples directory (relative names keep rows short and stable).
fn open_sample(t: &Tmux, file: &str, w: u16, h: u16, follow: bool) {
    t.start_sized(
        &format!(
            "sh -c 'cd \"{}\" && \"{}\" view {} {file}; exec sleep 600'",
            sample("").display(),
            bin(),
            if follow { "" } else { "--no-follow" }
        ),
        w,
        h,
    );
}

/// Timeline rows on screen: lines holding `"<step>   <kind>"` for this kind.
fn rows_of_kind(screen: &str, kind: &str) -> usize {
    screen
        .lines()
        .filter(|l| {
            l.split(['│', '┃']).any(|cell| {
                let c = cell.trim_start();
                c.split_whitespace().nth(1) == Some(kind)
                    && c.split_whitespace()
                        .next()
                        .is_some_and(|n| n.chars().all(|d| d.is_ascii_digit()))
            })
        })
        .count()
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn a_timeline_filter_keeps_then_hides_a_kind() {
    if tmux::missing("e2e_timeline") {
        return;
    }
    let t = Tmux::new("tl-filter");
    open_sample(&t, "treasure-hunt.jsonl", 160, 45, false);
    t.wait_for("the first frame", 20, |s| s.contains("step 23 of 23"));
    for _ in 0..4 {
        t.keys(&["Tab"]);
    }
    t.keys(&["g"]);
    // The rows are asked for with the header: a capture can fall inside a frame.
    t.wait_for("step 1 with its thoughts", 10, |s| {
        s.contains("step 1 of 23") && rows_of_kind(s, "thought") > 0
    });
    t.keys(&["F"]);
    t.wait_for("the prompt", 10, |s| s.contains("filter timeline:"));
    t.type_text("kind:announce");
    t.keys(&["Enter"]);
    // Polled as a whole: a capture can catch a frame half drawn.
    t.wait_for("the filtered timeline", 10, |s| {
        s.contains("of 23 rows, filter: kind:announce")
            && rows_of_kind(s, "thought") == 0
            && rows_of_kind(s, "announce") >= 3
    });
    // Filter out instead: edit the filter in force.
    t.keys(&["F", "C-u"]);
    // `--`: a leading `-` would be read as an option of send-keys.
    assert!(
        t.run(&["send-keys", "-t", "0", "-l", "--", "-kind:announce"])
            .status
            .success()
    );
    t.keys(&["Enter"]);
    t.wait_for("the filtered-out timeline", 10, |s| {
        s.contains("filter: -kind:announce")
            && rows_of_kind(s, "announce") == 0
            && rows_of_kind(s, "thought") > 0
    });
    t.keys(&["q"]);
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn right_arrow_scrolls_a_long_timeline_row_on_80x24() {
    if tmux::missing("e2e_timeline") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.jsonl");
    let text = format!("{}the-far-end-of-the-row", "x".repeat(150));
    std::fs::write(
        &file,
        format!("{{\"kind\":\"thought\",\"session\":\"s\",\"text\":\"{text}\"}}\n"),
    )
    .unwrap();
    let t = Tmux::new("tl-hscroll");
    t.start_sized(
        &format!(
            "sh -c '\"{}\" view --no-follow \"{}\"; exec sleep 600'",
            bin(),
            file.display()
        ),
        80,
        24,
    );
    t.wait_for("the first frame", 20, |s| s.contains("step 1 of 1"));
    t.keys(&["Tab", "Tab", "Tab", "Tab"]);
    let s = t.wait_for("the timeline focused", 10, |s| s.contains("┏ timeline"));
    assert!(!s.contains("far-end"), "{s}");
    for _ in 0..8 {
        t.keys(&["Right"]);
    }
    let s = t.wait_for("the row's end", 10, |s| {
        s.contains("the-far-end-of-the-row")
    });
    assert!(s.contains("→128"), "{s}");
    for _ in 0..8 {
        t.keys(&["Left"]);
    }
    t.wait_for("the row's start again", 10, |s| {
        !s.contains("far-end") && !s.contains("→")
    });
    t.keys(&["q"]);
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn a_click_selects_a_timeline_row_and_a_belief() {
    if tmux::missing("e2e_timeline") {
        return;
    }
    let t = Tmux::new("tl-click");
    open_sample(&t, "treasure-hunt.jsonl", 160, 45, false);
    let s = t.wait_for("the first frame", 20, |s| {
        s.contains("step 23 of 23") && s.contains("    15   announce") && s.contains("t2-map-b ")
    });
    // The mouse is captured by default: a click arrives as an SGR report (1-based cells).
    let at = |s: &str, text: &str| {
        s.lines()
            .enumerate()
            .find_map(|(y, l)| l.find(text).map(|b| (l[..b].chars().count() + 1, y + 1)))
    };
    let (x, y) = at(&s, "    15   announce").expect("step 15 shown");
    t.type_text(&format!("\x1b[<0;{};{}M\x1b[<0;{};{}m", x + 3, y, x + 3, y));
    t.wait_for("step 15 selected", 10, |s| s.contains("step 15 of 23"));
    let (x, y) = at(&s, "t2-map-b ").expect("a belief shown");
    t.type_text(&format!("\x1b[<0;{};{}M\x1b[<0;{};{}m", x + 1, y, x + 1, y));
    t.wait_for("its detail", 10, |s| s.contains("id         t2-map-b"));
    t.keys(&["q"]);
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn open_reads_another_file_from_inside_the_tui() {
    if tmux::missing("e2e_timeline") {
        return;
    }
    for follow in [true, false] {
        let t = Tmux::new(if follow { "tl-open-f" } else { "tl-open" });
        open_sample(&t, "treasure-hunt.jsonl", 160, 45, follow);
        // After the audit's own message, which would replace the refusal's.
        t.wait_for("the first audit", 20, |s| {
            s.contains("step 23 of 23") && s.contains("findings: 0")
        });
        t.keys(&[":"]);
        t.wait_for("the command line", 10, |s| s.contains("Enter run"));
        t.type_text("open no-such-file.jsonl");
        t.keys(&["Enter"]);
        t.wait_for("the refusal", 10, |s| {
            s.contains("cannot open no-such-file.jsonl")
        });
        t.type_text("open kipchoge-bdi.jsonl");
        t.keys(&["Enter"]);
        t.wait_for("the second file's session", 20, |s| {
            s.contains("session kipchoge-bdi.jsonl (2/2)") && s.contains("of 40")
        });
        // Both files stay: `s` goes back to the first.
        t.leave_repl();
        t.keys(&["s"]);
        t.wait_for("the first file again", 10, |s| {
            s.contains("session treasure-hunt.jsonl (1/2)")
        });
        t.keys(&["q"]);
    }
}
