//! The terminal guardian: a tiny child process that gives the terminal back when the TUI
//! dies without doing it itself.
//!
//! The TUI restores the terminal on every exit it sees (quit, error, panic, SIGTERM, SIGHUP;
//! see [`super::terminal`]). It cannot on the exits it does not see: SIGKILL (the OOM killer
//! among others) and an abort (a failed allocation aborts without unwinding). An abort
//! handler would need `unsafe` signal code, and SIGKILL cannot be caught at all; a second
//! process can do both. Before taking the terminal over, the TUI starts its own binary as a
//! guardian ([`GUARD_ARG`]) through `/bin/sh`, whose `trap ''` leaves the guardian ignoring
//! the job-control and termination signals (ignored signals survive `exec`; ignoring
//! SIGTTOU is what lets it reset the terminal once the shell has taken it back).
//!
//! The guardian reads the terminal's settings (cooked, as the shell left them), says it is
//! ready, then only waits on a pipe from the TUI: `a` when the TUI's modes are on, `s` when
//! it has restored them itself (suspend, clean exit, panic), `d` when it is done. The pipe
//! closing is the TUI's death, whatever killed it; if the modes were on then, the guardian
//! puts the settings back and writes the sequences that leave the alternate screen, show the
//! cursor and turn mouse reporting and bracketed paste off. Without `/bin/sh` or with no
//! terminal, there is no guardian and the TUI runs as before (the README says how to
//! `reset` by hand).

use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The hidden first argument that runs the binary as a guardian.
pub const GUARD_ARG: &str = "__terminal-guardian";

/// What the guardian writes on the terminal after a death: mouse reporting (every mode
/// crossterm enables), bracketed paste, the alternate screen, then the cursor shown.
const RESET: &[u8] =
    b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?2004l\x1b[?1049l\x1b[?25h";

/// How long the TUI waits for the guardian to have read the terminal's settings.
const READY_WAIT: Duration = Duration::from_secs(2);

/// The body of the guardian process (standard output is the TUI's terminal, standard input
/// the pipe from the TUI); returns the exit status.
pub fn main() -> i32 {
    let tty = io::stdout();
    let Ok(saved) = rustix::termios::tcgetattr(&tty) else {
        return 2;
    };
    // Ready: the settings to restore are the ones before the TUI changed them.
    if io::stderr().write_all(b"r").is_err() {
        return 2;
    }
    let mut active = false;
    let mut buf = [0u8; 64];
    let mut stdin = io::stdin().lock();
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                for &b in &buf[..n] {
                    match b {
                        b'a' => active = true,
                        b's' => active = false,
                        b'd' => return 0,
                        _ => {}
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    if active {
        let _ = rustix::termios::tcsetattr(&tty, rustix::termios::OptionalActions::Now, &saved);
        let mut out = tty.lock();
        let _ = out.write_all(RESET);
        let _ = out.flush();
    }
    0
}

/// The TUI's end of a running guardian.
pub struct Guardian {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Guardian {
    /// Starts a guardian for the terminal on standard output, and waits (briefly) until it
    /// has read the terminal's settings. `None` when it cannot run (no `/bin/sh`, no
    /// terminal, `DOXASCOPE_NO_GUARDIAN` set).
    pub fn spawn() -> Option<Guardian> {
        if std::env::var_os("DOXASCOPE_NO_GUARDIAN").is_some() {
            return None;
        }
        let exe = std::env::current_exe().ok()?;
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!(
                "trap '' INT TERM HUP QUIT TSTP TTIN TTOU; exec \"$0\" {GUARD_ARG}"
            ))
            .arg(exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::inherit())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        let mut err = child.stderr.take()?;
        let (tx, rx) = mpsc::channel();
        let _ = std::thread::Builder::new()
            .name("doxascope-guardian-ready".into())
            .spawn(move || {
                let mut b = [0u8; 1];
                let _ = tx.send(err.read(&mut b).is_ok_and(|n| n == 1 && b[0] == b'r'));
            });
        if rx.recv_timeout(READY_WAIT) != Ok(true) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        let pipe = child.stdin.take();
        Some(Guardian { child, pipe })
    }

    /// Tells the guardian the TUI's modes are on (`true`) or restored (`false`).
    pub fn modes(&mut self, on: bool) {
        if let Some(p) = self.pipe.as_mut() {
            let _ = p.write_all(if on { b"a" } else { b"s" });
            let _ = p.flush();
        }
    }

    /// The TUI gave the terminal back itself: the guardian leaves it alone and exits.
    pub fn finish(mut self) {
        if let Some(mut p) = self.pipe.take() {
            let _ = p.write_all(b"sd");
        }
        let _ = self.child.wait();
    }
}
