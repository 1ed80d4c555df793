//! Another tool's trace in the TUI (the real binary in tmux): the header names the importer,
//! and the retractions pane shows each memory edit as the lines it changed, with its cause.

#[path = "support/external.rs"]
mod external;
#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, bin};

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn a_letta_agent_file_shows_its_memory_edits_as_retractions() {
    if tmux::missing("import_tui") {
        return;
    }
    let Some(file) = external::path("letta/memgpt_agent_with_convo.v1-2025-03.af") else {
        return;
    };
    let t = Tmux::new("import15-letta");
    t.start(&format!(
        "sh -c '\"{}\" \"{}\"; echo EXIT=$?; exec sleep 600'",
        bin(),
        file.display()
    ));
    let edits = [
        "retract human by agent - First name: Chad; + First name: Sarah",
        "retract persona by agent - I am Sam.; + I am BigChungus.",
        "retract human by agent + Favorite ice cream: Vanilla",
    ];
    // The header can count all 98 events a frame before the panes have drawn them (the
    // load redraws at most every few frames), so the wait is for the whole picture.
    t.wait_for("the loaded frame", 20, |s| {
        s.contains("step 98 of 98")
            && s.contains("retractions 5")
            && edits.iter().all(|e| s.contains(e))
            // The tool call that made the last edit is the row before its retraction.
            && s.contains("tool_call     core_memory_replace")
            // Only once the load has ended does the header give the name its room.
            && s.contains("memgpt_agent_with_convo.v1-2025-03.af: imported from letta")
    });
    t.keys(&["q"]);
    t.wait_for("exit", 10, |s| s.contains("EXIT=0"));
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
#[cfg_attr(
    doxascope_no_external,
    ignore = "the external traces are not beside the checkout (../shared/external-traces)"
)]
fn an_inspect_log_shows_its_score_on_the_timeline() {
    if tmux::missing("import_tui") {
        return;
    }
    let Some(file) = external::path("inspect/2025-05-12T20-27-36-04-00_browser.json") else {
        return;
    };
    let t = Tmux::new("import15-inspect");
    t.start(&format!(
        "sh -c '\"{}\" --no-follow \"{}\"; echo EXIT=$?; exec sleep 600'",
        bin(),
        file.display()
    ));
    // The two store replaces of the page the browser shows are memory edits (40 steps: the
    // four tool results are observations of their own). All 40 steps can be drawn a frame
    // before the load's end, while the header still gives its room to the progress bar and
    // shortens the file's name: the wait is for the whole picture, the importer's name too.
    t.wait_for("the loaded frame", 20, |s| {
        s.contains("step 40 of 40")
            && s.contains("score         includes = C on answer by scorer:includes")
            && s.contains("retractions 2")
            && s.contains("imported from inspect, 1 note")
    });
    t.keys(&["q"]);
    t.wait_for("exit", 10, |s| s.contains("EXIT=0"));
}
