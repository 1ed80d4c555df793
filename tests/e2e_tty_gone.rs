//! End-to-end: the TUI exits when its terminal goes away, instead of spinning on a dead tty.
//!
//! The TUI runs in a tmux server of its own under a shell that ignores SIGHUP and outlives
//! it, as a login shell with `huponexit` off or a `nohup` wrapper would: when the tmux server
//! is killed the kernel hangs the tty up and sends SIGHUP to the session leader (the shell)
//! only, so the TUI must notice the hangup on its own. The test kills the server and asserts
//! the doxascope process exits within a few seconds, with a non-zero status. A second test
//! covers SIGHUP itself (the TUI as the session leader). Whatever happens, the process is
//! killed at the end so none survives the test. Skipped, with a message, when tmux is not
//! installed.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/tmux.rs"]
mod tmux;
use tmux::{Tmux, bin, sample};

/// A process id read from a file the wrapper wrote; the process is SIGKILLed on drop if it
/// is still alive, so a failing test leaves nothing running.
struct Proc(u32);

impl Proc {
    fn read(path: &Path) -> Proc {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(s) = std::fs::read_to_string(path)
                && let Ok(pid) = s.trim().parse::<u32>()
            {
                return Proc(pid);
            }
            assert!(Instant::now() < end, "no pid in {}", path.display());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the process exists and is not a zombie (an exited child not yet reaped).
    fn alive(&self) -> bool {
        match std::fs::read_to_string(format!("/proc/{}/stat", self.0)) {
            // The state follows the parenthesized command name.
            Ok(stat) => stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state != "Z" && state != "X"),
            Err(_) => false,
        }
    }

    /// CPU time (user + system) in clock ticks.
    fn cpu_ticks(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.0)).ok()?;
        let (_, rest) = stat.rsplit_once(')')?;
        let f: Vec<&str> = rest.split_whitespace().collect();
        // Fields after the name: state is 3, utime 14, stime 15 (1-based in proc(5)).
        Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
    }

    /// Polls until the process is gone; whether it went within `secs`.
    fn exits_within(&self, secs: u64) -> bool {
        let end = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < end {
            if !self.alive() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        !self.alive()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.alive() {
            let _ = Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
}

/// Reads the exit status the wrapper wrote once the TUI exited.
fn exit_status(path: &Path) -> Option<i32> {
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(s) = std::fs::read_to_string(path)
            && let Ok(code) = s.trim().parse()
        {
            return Some(code);
        }
        if Instant::now() > end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Writes a shell script from `template` (`{pid}`, `{shell}`, `{exit}`: files in a fresh
/// temporary directory; `{bin}`: the binary; `{file}`: the treasure-hunt sample) and runs
/// it in a tmux server of its own. `None`, with a message, when tmux is not installed.
fn in_tmux(tag: &str, template: &str) -> Option<(tempfile::TempDir, Tmux)> {
    if tmux::missing("e2e_tty_gone") {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    let script = template
        .replace("{pid}", &at("pid"))
        .replace("{shell}", &at("shell"))
        .replace("{exit}", &at("exit"))
        .replace("{bin}", bin())
        .replace(
            "{file}",
            &sample("treasure-hunt.jsonl").display().to_string(),
        );
    let path = dir.path().join("run.sh");
    std::fs::write(&path, script).unwrap();
    let t = Tmux::new(tag);
    t.start(&format!("sh \"{}\"", path.display()));
    Some((dir, t))
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn killing_the_tmux_server_ends_the_tui() {
    // The outer shell ignores SIGHUP and waits for the TUI (which inherits the ignored
    // SIGHUP, as under `nohup`, and installs its own handler anyway); the inner one writes
    // its pid and becomes the TUI, in the foreground of the tty. The shell then ends, so
    // nothing is left behind.
    let Some((dir, t)) = in_tmux(
        "ttygone",
        "trap '' HUP\nsh -c 'echo $$ > \"{pid}\"; exec \"{bin}\" view \"{file}\"'\necho $? > \"{exit}\"\n",
    ) else {
        return;
    };
    let (pidfile, exitfile) = (dir.path().join("pid"), dir.path().join("exit"));
    let p = Proc::read(&pidfile);
    t.wait_for("the first frame", 20, |s| s.contains("step 23 of 23"));
    // Let it go idle (the automatic audit arrives and is drawn): a TUI that still draws
    // fails on its first write to the dead tty anyway; an idle one is the case that spun.
    std::thread::sleep(Duration::from_secs(2));
    assert!(p.alive());
    let before = p.cpu_ticks().unwrap_or(0);
    t.run(&["kill-server"]);
    let exited = p.exits_within(5);
    // A spinning survivor is also reported by how much CPU it burnt meanwhile.
    let burnt = p.cpu_ticks().map(|c| c.saturating_sub(before));
    assert!(
        exited,
        "doxascope (pid {}) still runs 5 s after its terminal went away (cpu ticks since: {burnt:?})",
        p.0
    );
    let code = exit_status(&exitfile);
    // Exactly 2, the documented status: 101 would be a panic on writing to the dead
    // terminal (ratatui's "Failed to show the cursor" through eprintln!).
    assert_eq!(code, Some(2), "a vanished terminal exits with status 2");
}

#[test]
#[cfg_attr(
    doxascope_no_tmux,
    ignore = "tmux is not installed (apt-get install tmux)"
)]
fn sighup_ends_the_tui_with_a_failure_status() {
    let Some((dir, t)) = in_tmux(
        "sighup",
        "echo $$ > \"{shell}\"\n\"{bin}\" view \"{file}\"\necho $? > \"{exit}\"\n",
    ) else {
        return;
    };
    let (pidfile, exitfile) = (dir.path().join("pid"), dir.path().join("exit"));
    t.wait_for("the first frame", 20, |s| s.contains("step 23 of 23"));
    let shell = Proc::read(&dir.path().join("shell"));
    // The TUI is the shell's child; send it SIGHUP as a terminal emulator closing would.
    let out = Command::new("pgrep")
        .args(["-P", &shell.0.to_string()])
        .output()
        .unwrap();
    let pid: u32 = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .expect("the TUI's pid");
    std::fs::write(&pidfile, format!("{pid}")).unwrap();
    let p = Proc::read(&pidfile);
    assert!(
        Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    assert!(p.exits_within(5), "doxascope still runs 5 s after SIGHUP");
    let code = exit_status(&exitfile);
    assert_eq!(code, Some(2), "SIGHUP exits with status 2");
    drop(t);
    drop(shell);
}
