//! A tmux server driven from tests and benches: the real binary in a real terminal, keys in,
//! screen back out with `capture-pane`.
//!
//! Each user gets a unique server socket (`-L`), so parallel tests never share a server, and
//! the server is killed when the value is dropped, even when a test fails. Included with
//! `#[path]` by `tests/e2e_tmux.rs` and `benches/tui_follow.rs`; each uses a subset.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The `doxascope` binary cargo built for this test or bench.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_doxascope")
}

/// A bundled sample trace.
pub fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(name)
}

/// Whether tmux is missing: a test of `suite` then returns early. Under CI (`CI` set and not
/// `false`/`0`) a missing tmux is a failure instead, since a CI run that skips the end-to-end
/// tests proves nothing.
///
/// Every test that calls this must also carry
/// `#[cfg_attr(doxascope_no_tmux, ignore = "tmux is not installed (apt-get install tmux)")]`:
/// `build.rs` sets that cfg when tmux is missing outside CI, so `cargo test` lists the test as
/// ignored, with the reason, instead of as passed. The early return here covers only a tmux
/// removed after the build.
pub fn missing(suite: &str) -> bool {
    if Tmux::available() {
        return false;
    }
    assert!(
        !in_ci(),
        "{suite}: tmux is not installed, and under CI the end-to-end tests must run \
         (apt-get install tmux)"
    );
    eprintln!("skipping {suite}: tmux is not installed (apt-get install tmux)");
    true
}

/// Whether this runs under CI, as `build.rs` decides it.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// One private tmux server with one session.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Whether a working tmux is installed.
    pub fn available() -> bool {
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// A server named after `tag` and this process (not started yet).
    pub fn new(tag: &str) -> Tmux {
        Tmux {
            socket: format!("doxascope-e2e-{tag}-{}", std::process::id()),
        }
    }

    /// Runs one tmux command against this server.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// Starts the server with `cmd` in a `width` x `height` pane, ignoring user config.
    pub fn start_sized(&self, cmd: &str, width: u16, height: u16) {
        let (w, h) = (width.to_string(), height.to_string());
        let o = self.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            &w,
            "-y",
            &h,
            cmd,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    /// Starts the server with `cmd` in a 160x45 pane.
    pub fn start(&self, cmd: &str) {
        self.start_sized(cmd, 160, 45);
    }

    /// Sends key names (`Enter`, `Escape`, `q`...).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    /// Types text literally (no key-name lookup).
    pub fn type_text(&self, text: &str) {
        assert!(
            self.run(&["send-keys", "-t", "0", "-l", text])
                .status
                .success()
        );
    }

    /// The whole visible screen.
    pub fn capture(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "0"]).stdout).into_owned()
    }

    /// The first screen row only (cheaper to read back than the whole screen).
    pub fn header(&self) -> String {
        let o = self.run(&["capture-pane", "-p", "-t", "0", "-S", "0", "-E", "0"]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// A tmux format (`#{alternate_on}`...) evaluated for the pane.
    pub fn display(&self, fmt: &str) -> String {
        String::from_utf8_lossy(&self.run(&["display-message", "-p", "-t", "0", fmt]).stdout)
            .trim()
            .to_string()
    }

    /// Leaves the REPL line for the panes: Escape, then a wait until the hint bar is the
    /// panes' again. A key sent right after an Escape the app has not read yet reads as Alt
    /// and that key (both lost), so the next key waits for the Escape to be seen. Nothing is
    /// sent when the REPL line is not open.
    #[allow(dead_code)]
    pub fn leave_repl(&self) {
        if !self.capture().contains("Esc leave") {
            return;
        }
        self.keys(&["Escape"]);
        self.wait_for("the panes' keys", 20, |s| {
            s.contains("q quit") && !s.contains("Esc leave")
        });
    }

    /// Polls the screen until `pred` holds; panics with the last screen after `secs`.
    pub fn wait_for(&self, what: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
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

/// The N of the header's "step t of N" (the session's event count), if shown.
pub fn event_count(screen: &str) -> Option<u64> {
    let rest = &screen[screen.find(" of ")? + 4..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}
