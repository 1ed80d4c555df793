//! The bare form's view options take effect, not only parse: `doxascope --at 5 --theme light
//! --no-follow FILE` in a real terminal (tmux) opens at step 5, paused.

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, bin, sample};

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn options_before_the_file_take_effect() {
    if tmux::missing("cli_tui_options") {
        return;
    }
    let t = Tmux::new("opts");
    t.start(&format!(
        "sh -c '\"{}\" --at 5 --theme light --no-follow \"{}\"; echo EXIT=$?; exec sleep 600'",
        bin(),
        sample("treasure-hunt.jsonl").display()
    ));
    let s = t.wait_for("the first frame", 20, |s| s.contains("step 5 of 23"));
    assert!(s.contains("PAUSED"), "{s}");
    t.keys(&["q"]);
    let s = t.wait_for("exit", 20, |s| s.contains("EXIT="));
    assert!(s.contains("EXIT=0"), "{s}");
}
