//! End-to-end, in a real terminal (tmux): `view --session NAME` opens on that session, `o`
//! lists the sessions, `/` filters the list, Enter opens a row and `-` goes back to the
//! session shown before. Skipped visibly without tmux.

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, bin};

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn the_session_list_opens_a_session_and_minus_goes_back() {
    if tmux::missing("e2e_sessions") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runs.jsonl");
    let mut lines = String::new();
    for s in ["first", "second", "third"] {
        lines.push_str(&format!(
            "{{\"kind\":\"thought\",\"session\":\"{s}\",\"text\":\"in {s}\"}}\n"
        ));
    }
    lines.push_str(
        "{\"kind\":\"tool_call\",\"session\":\"third\",\"tool\":\"t\",\"status\":\"error\"}\n",
    );
    std::fs::write(&file, lines).unwrap();
    let t = Tmux::new("sessions");
    t.start_sized(
        &format!(
            "sh -c '\"{}\" view --no-follow --session second \"{}\"; exec sleep 600'",
            bin(),
            file.display()
        ),
        140,
        40,
    );
    t.wait_for("the view on session second", 20, |s| {
        s.lines()
            .next()
            .unwrap_or_default()
            .contains("session second")
    });
    t.keys(&["o"]);
    // The list is drawn as the file is read: its rows fill in until the failed call is in.
    t.wait_for("the session list counting third's failed call", 10, |s| {
        s.contains("sessions (3)") && s.lines().any(|l| l.contains("third ") && l.contains("✗1"))
    });
    t.keys(&["/"]);
    t.type_text("thi");
    t.keys(&["Enter"]);
    t.wait_for("the filtered list", 10, |s| s.contains("sessions (1)"));
    t.keys(&["Enter"]);
    t.wait_for("session third", 10, |s| {
        s.lines()
            .next()
            .unwrap_or_default()
            .contains("session third")
            && !s.contains("sessions (")
    });
    t.keys(&["-"]);
    t.wait_for("back to session second", 10, |s| {
        s.lines()
            .next()
            .unwrap_or_default()
            .contains("session second")
    });
}
