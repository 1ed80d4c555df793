//! The terminal guardian: a small child process that gives the terminal back when the TUI
//! dies in a way no code in the TUI can handle.
//!
//! Stack overflow, allocation failure and SIGKILL end a process without unwinding, without
//! the panic hook and without signal handlers, so [`super::terminal::restore`] never runs and
//! the user's shell is left in the alternate screen with the cursor hidden and mouse
//! reporting on (the raw mode itself is undone by bash and zsh for a job killed by a signal,
//! but not by `sh` or by a program that started doxascope). Nothing inside the dying
//! process can help, so the guard lives outside it.
//!
//! Before the TUI changes any terminal mode it starts a copy of its own executable in
//! guardian mode ([`ENV`] set). The guardian opens `/dev/tty`, records its settings (still
//! the shell's, cooked), answers "ready" on its stdout and then blocks reading its stdin,
//! a pipe whose write end only the TUI holds. When the TUI ends normally it restores the
//! terminal itself and writes [`DISMISS`] before closing the pipe; the guardian then exits
//! without touching anything. If the pipe closes without that word, the TUI died: the
//! guardian puts back the recorded settings and writes the sequences that leave the
//! alternate screen, show the cursor and turn off mouse and paste reporting.
//!
//! The guardian holds no lock and reads nothing from the trace. If it cannot be started (no
//! `/dev/tty`, the executable deleted), the TUI runs without it: only the unrecoverable exits
//! lose their safety net.

use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The environment variable that starts the binary in guardian mode.
pub const ENV: &str = "DOXASCOPE_TTY_GUARDIAN";

/// What the TUI writes to the guardian after restoring the terminal itself.
const DISMISS: &[u8] = b"ok\n";

/// Mouse reporting (every mode a TUI library may turn on), bracketed paste, the alternate
/// screen and the cursor, in the order `terminal::restore` undoes them.
const RESTORE: &[u8] =
    b"\x1b[?1006l\x1b[?1015l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?2004l\x1b[?1049l\x1b[?25h";

struct Held {
    child: Child,
    stdin: ChildStdin,
}

static HELD: Mutex<Option<Held>> = Mutex::new(None);

/// Starts the guardian and waits (briefly) until it has recorded the terminal's settings.
/// Must run before any terminal mode changes. Errors mean the TUI runs unguarded.
pub fn start() -> io::Result<()> {
    let exe = std::env::current_exe()?;
    // Only the doxascope binary knows guardian mode; another program embedding the TUI (a
    // test harness, a bench) would run its own main again.
    if !exe
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("doxascope"))
    {
        return Err(io::Error::other("not the doxascope binary: no guardian"));
    }
    let mut child = Command::new(exe)
        .env(ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let (Some(stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io::Error::other("the guardian's pipes were not created"));
    };
    // The answer arrives in milliseconds; a guardian that cannot open the tty says so by
    // exiting, which closes the pipe.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        let _ = tx.send(stdout.read(&mut byte).map(|n| n == 1 && byte[0] == b'r'));
    });
    match rx.recv_timeout(Duration::from_secs(2)) {
        Ok(Ok(true)) => {
            if let Ok(mut g) = HELD.lock() {
                *g = Some(Held { child, stdin });
            }
            Ok(())
        }
        _ => {
            drop(stdin);
            let _ = child.kill();
            let _ = child.wait();
            Err(io::Error::other("the terminal guardian did not start"))
        }
    }
}

/// Tells the guardian the terminal has been restored by the TUI itself, and lets it exit.
/// Idempotent; call it only after a full restore.
pub fn dismiss() {
    let held = HELD.lock().ok().and_then(|mut g| g.take());
    if let Some(mut h) = held {
        let _ = h.stdin.write_all(DISMISS);
        let _ = h.stdin.flush();
        drop(h.stdin);
        let _ = h.child.wait();
    }
}

/// Whether this process was started as a guardian (see [`ENV`]).
pub fn requested() -> bool {
    std::env::var_os(ENV).is_some()
}

/// The guardian's own life: record, wait, restore unless dismissed. Returns the exit code.
pub fn run() -> i32 {
    use rustix::termios::{OptionalActions, tcgetattr, tcsetattr};
    let Ok(mut tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return 1;
    };
    let Ok(saved) = tcgetattr(&tty) else {
        return 1;
    };
    let mut out = io::stdout();
    if out.write_all(b"r").and_then(|_| out.flush()).is_err() {
        return 1;
    }
    // Read until the TUI closes its end; whatever arrived decides.
    let mut said = Vec::new();
    let mut buf = [0u8; 64];
    let mut stdin = io::stdin().lock();
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                // Only the first few bytes matter; never grow without bound.
                if said.len() < 16 {
                    said.extend_from_slice(&buf[..n.min(16)]);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if said.starts_with(DISMISS) {
        return 0;
    }
    let _ = tcsetattr(&tty, OptionalActions::Now, &saved);
    let _ = tty.write_all(RESTORE);
    let _ = tty.flush();
    0
}
