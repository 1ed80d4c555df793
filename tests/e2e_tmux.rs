//! End-to-end: the real binary in a real terminal (tmux), driven by keys and read back with
//! `capture-pane`. Skipped, with a message, when tmux is not installed.
//!
//! Scenarios: open a sample, step through time, run `:why` and `:entails`, quit and check the
//! terminal is restored (`stty` sane, no alternate screen, no mouse mode); open a hostile
//! trace whose strings carry OSC title, alternate-screen, mouse-mode, clipboard and clear
//! sequences, and check none of them took effect; SIGTERM restores the terminal too.
//!
//! Robustness: a unique server socket per test (`-L`), every wait polls with a timeout, and
//! the server is killed when the test ends, even on failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn available() -> bool {
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn new(tag: &str) -> Tmux {
        Tmux {
            socket: format!("doxascope-e2e-{tag}-{}", std::process::id()),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn start(&self, cmd: &str) {
        let o = self.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "160",
            "-y",
            "45",
            cmd,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    /// Types text literally (no key-name lookup).
    fn type_text(&self, text: &str) {
        assert!(
            self.run(&["send-keys", "-t", "0", "-l", text])
                .status
                .success()
        );
    }

    fn capture(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "0"]).stdout).into_owned()
    }

    fn display(&self, fmt: &str) -> String {
        String::from_utf8_lossy(&self.run(&["display-message", "-p", "-t", "0", fmt]).stdout)
            .trim()
            .to_string()
    }

    /// Polls the screen until `pred` holds; panics with the last screen after `secs`.
    fn wait_for(&self, what: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let s = self.capture();
            if pred(&s) {
                return s;
            }
            if Instant::now() > end {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_doxascope")
}

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(name)
}

fn shell_cmd(file: &Path) -> String {
    format!(
        "sh -c '\"{}\" view --no-follow \"{}\"; echo EXIT=$?; stty -a; echo END-OF-RUN; exec sleep 600'",
        bin(),
        file.display()
    )
}

fn assert_restored(t: &Tmux, screen: &str) {
    assert_eq!(
        t.display("#{alternate_on}|#{mouse_any_flag}"),
        "0|0",
        "{screen}"
    );
    let words: Vec<&str> = screen.split_whitespace().collect();
    for flag in ["icanon", "echo", "isig"] {
        assert!(words.contains(&flag), "stty shows {flag} on:\n{screen}");
    }
}

#[test]
fn open_step_why_entails_quit() {
    if !Tmux::available() {
        eprintln!("skipping e2e_tmux: tmux is not installed (apt-get install tmux)");
        return;
    }
    let t = Tmux::new("main");
    t.start(&shell_cmd(&sample("treasure-hunt.jsonl")));
    t.wait_for("the first frame", 20, |s| s.contains("step 17 of 17"));
    assert_eq!(t.display("#{alternate_on}"), "1");
    t.keys(&["["]);
    t.keys(&["["]);
    let s = t.wait_for("step 15", 10, |s| s.contains("step 15 of 17"));
    assert!(s.contains("PAUSED"), "{s}");
    t.keys(&["g"]);
    t.wait_for("step 1", 10, |s| s.contains("step 1 of 17"));
    t.keys(&["G"]);
    t.wait_for("step 17", 10, |s| s.contains("step 17 of 17"));
    t.keys(&[":"]);
    t.type_text("why ¬treasure_in_a");
    t.keys(&["Enter"]);
    t.wait_for("why's supports", 20, |s| {
        s.contains("t2-map-b") && s.contains("support")
    });
    t.type_text("entails treasure_in_b");
    t.keys(&["Enter"]);
    t.wait_for("entails' answer", 20, |s| s.contains("entailed"));
    t.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["q"]);
    let s = t.wait_for("exit", 20, |s| s.contains("END-OF-RUN"));
    assert!(s.contains("EXIT=0"), "{s}");
    assert_restored(&t, &s);
}

fn hostile_trace(dir: &Path) -> PathBuf {
    let evil = concat!(
        "\u{1b}]0;PWNED\u{7}",
        "\u{1b}]2;PWNED2\u{1b}\\",
        "\u{1b}[?1049l",
        "\u{1b}[?1000h\u{1b}[?1003h\u{1b}[?1006h",
        "\u{1b}]52;c;aGVsbG8=\u{7}",
        "\u{1b}[2J\u{1b}[H",
        "\u{202E}evil\u{202C}",
        "\u{9b}31m"
    );
    let e = serde_json::to_string(evil).unwrap();
    let lines = [
        format!(r#"{{"kind":"announce","id":{e},"formula":"p","source":{e},"text":{e}}}"#),
        format!(r#"{{"kind":"announce","formula":{e}}}"#),
        format!(r#"{{"kind":"log","level":"error","message":{e}}}"#),
        format!(r#"{{"kind":{e},"x":{e}}}"#),
        format!(r#"{{"kind":"revise","trigger":{e},"retracted":[{e}],"policy":{e}}}"#),
    ];
    let p = dir.join("hostile.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

#[test]
fn hostile_trace_does_not_reach_the_terminal() {
    if !Tmux::available() {
        eprintln!("skipping e2e_tmux: tmux is not installed (apt-get install tmux)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_trace(dir.path());
    let t = Tmux::new("hostile");
    t.start("sh -c 'exec sleep 600'");
    assert!(
        t.run(&["set-option", "-g", "set-clipboard", "on"])
            .status
            .success()
    );
    assert!(
        t.run(&["select-pane", "-t", "0", "-T", "e2e-title"])
            .status
            .success()
    );
    t.run(&["respawn-pane", "-k", "-t", "0", &shell_cmd(&file)]);
    let s = t.wait_for("the first frame", 20, |s| s.contains("step 5 of 5"));
    assert!(s.contains('␛'), "escapes are shown as markers:\n{s}");
    // Walk every event so each one is drawn in the detail pane.
    t.keys(&["g"]);
    for _ in 0..5 {
        t.keys(&["]"]);
        std::thread::sleep(Duration::from_millis(150));
    }
    t.wait_for("the last step again", 10, |s| s.contains("step 5 of 5"));
    // Our own alternate screen is still on; the data's ?1049l did not leave it, its mouse
    // modes did not switch on, its OSC titles did not change the title.
    assert_eq!(
        t.display("#{pane_title}|#{alternate_on}|#{mouse_any_flag}"),
        "e2e-title|1|0"
    );
    t.keys(&["q"]);
    let s = t.wait_for("exit", 20, |s| s.contains("END-OF-RUN"));
    assert!(s.contains("EXIT=0"), "{s}");
    assert_eq!(t.display("#{pane_title}"), "e2e-title");
    assert_restored(&t, &s);
    let buffers = String::from_utf8_lossy(&t.run(&["list-buffers"]).stdout).into_owned();
    assert!(
        buffers.trim().is_empty(),
        "no clipboard write (OSC 52): {buffers}"
    );
}

#[test]
fn sigterm_restores_the_terminal() {
    if !Tmux::available() {
        eprintln!("skipping e2e_tmux: tmux is not installed (apt-get install tmux)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let t = Tmux::new("term");
    let cmd = format!(
        "sh -c '\"{}\" view \"{}\" & echo $! > \"{}\"; wait $!; echo EXIT=$?; stty -a; echo END-OF-RUN; exec sleep 600'",
        bin(),
        sample("kipchoge-bdi.jsonl").display(),
        pidfile.display()
    );
    t.start(&cmd);
    t.wait_for("the first frame", 20, |s| s.contains("step 40 of 40"));
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    assert!(pid.chars().all(|c| c.is_ascii_digit()), "{pid}");
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let s = t.wait_for("exit", 20, |s| s.contains("END-OF-RUN"));
    assert!(s.contains("EXIT=0"), "{s}");
    assert_restored(&t, &s);
}

#[test]
fn resize_storm_and_tiny_sizes_survive() {
    if !Tmux::available() {
        eprintln!("skipping e2e_tmux: tmux is not installed (apt-get install tmux)");
        return;
    }
    let t = Tmux::new("resize");
    t.start(&shell_cmd(&sample("kipchoge-bdi.jsonl")));
    t.wait_for("the first frame", 20, |s| s.contains("step 40 of 40"));
    for i in 0..120u32 {
        let w = (1 + (i * 37) % 200).to_string();
        let h = (1 + (i * 13) % 60).to_string();
        t.run(&["resize-window", "-t", "0", "-x", &w, "-y", &h]);
    }
    t.run(&["resize-window", "-t", "0", "-x", "1", "-y", "1"]);
    std::thread::sleep(Duration::from_millis(200));
    t.run(&["resize-window", "-t", "0", "-x", "120", "-y", "40"]);
    // The last frame matches the last size: the header on the first row, the REPL box's
    // bottom border spanning the full width just above the status line, and the process is
    // still running.
    let s = t.wait_for("a frame at 120x40", 20, |s| {
        let rows: Vec<&str> = s.lines().collect();
        rows.len() >= 39
            && rows[0].contains("step 40 of 40")
            && rows[38].starts_with('└')
            && rows[38].ends_with('┘')
            && rows[38].chars().count() == 120
    });
    assert!(!s.contains("EXIT="), "{s}");
    t.keys(&["q"]);
    let s = t.wait_for("exit", 20, |s| s.contains("END-OF-RUN"));
    assert!(s.contains("EXIT=0"), "{s}");
}

#[test]
fn demo_plays_in_the_tui_with_pause_step_and_speed_keys() {
    if !Tmux::available() {
        eprintln!("skipping e2e_tmux: tmux is not installed (apt-get install tmux)");
        return;
    }
    let t = Tmux::new("demo");
    // At the slowest speed the first turn waits 12 s: the keys land while it plays.
    t.start(&format!(
        "sh -c '\"{}\" demo --turns 3 --speed 0.125; echo EXIT=$?; stty -a; echo END-OF-RUN; exec sleep 600'",
        bin()
    ));
    t.wait_for("the demo header", 20, |s| s.contains("demo ▶ x0.125"));
    for _ in 0..3 {
        t.keys(&["+"]);
    }
    t.wait_for("speed 1", 10, |s| s.contains("demo ▶ x1.0"));
    t.keys(&["Space"]);
    let s = t.wait_for("paused", 10, |s| s.contains("demo ⏸"));
    let steps = |s: &str| {
        s.split("step ")
            .nth(1)
            .and_then(|r| r.split(" of ").next())
            .and_then(|n| n.trim().parse::<u32>().ok())
            .unwrap_or(0)
    };
    let before = steps(&s);
    t.keys(&["."]);
    let s = t.wait_for("a step", 10, |s| steps(s) > before);
    assert!(s.contains("demo ⏸"), "stepping keeps the pause:\n{s}");
    t.keys(&["q"]);
    let s = t.wait_for("exit", 20, |s| s.contains("END-OF-RUN"));
    assert!(s.contains("EXIT=0"), "{s}");
    assert_restored(&t, &s);
}
