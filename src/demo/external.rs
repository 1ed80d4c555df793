//! `doxascope demo --agent CMD`: the dialogue's replies come from an external process, so a
//! real LLM can stand in for the simulated agent.
//!
//! The protocol is JSON Lines over the process's standard streams (`docs/demo.md`, *Plug in a
//! real agent*). For every question doxascope writes one line to the agent's stdin:
//!
//! ```json
//! {"dialogue":1,"turn":3,"turns":10,"atoms":["A","B","C"],"rules":["If A holds, then B holds."],
//!  "beliefs":"So far, we believe that A is true; we are unsure about B, and C.",
//!  "question":"Is B true?","answers":["YES","NO","UNKNOWN"]}
//! ```
//!
//! and reads one line from its stdout: `{"reply":"YES"}` (any case; a bare JSON string such as
//! `"no"` is accepted too, and other fields are ignored). A line that names none of the three
//! answers counts as UNKNOWN, the paper's reading of an unparsable label, and is reported on
//! stderr and in [`ExternalAgent::unparsed`]. Each line carries the whole context, so an agent
//! may be stateless. The agent's stderr goes to doxascope's stderr.
//!
//! Failures are values: a command that cannot start, an agent that exits, closes its output
//! or does not answer within the timeout ends the run with a [`DemoError::Agent`] that says
//! which dialogue and turn. Replies longer than [`MAX_REPLY`] bytes are refused.
//!
//! Memory stays bounded whatever the agent writes: at most [`QUEUED_LINES`] lines wait to be
//! asked for (the reader stops reading until they are, so a flooding agent blocks on its
//! own output), and lines the agent wrote unasked are dropped (and said) before each
//! question; more than [`MAX_UNASKED`] of them in a run (`yes '{"reply":"YES"}'`) end it.
//!
//! The agent runs in a process group of its own. When the run ends its stdin is closed; two
//! seconds later (or at once if the agent has exited) the whole group is ended, TERM then
//! KILL, so nothing it started in the background outlives the demo. A watcher in the group
//! does the same if doxascope dies without cleaning up (Ctrl-C, SIGKILL).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::DemoError;
use super::run::Ask;
use super::schedule::Label;

/// The longest reply line read, in bytes.
pub const MAX_REPLY: usize = 1 << 20;

/// The lines read from the agent and not yet asked for, at most.
pub const QUEUED_LINES: usize = 8;

/// The lines an agent may write without being asked in one run (beyond them the run ends:
/// the agent is flooding, and its replies no longer match the questions).
pub const MAX_UNASKED: usize = 64;

/// A running external agent.
pub struct ExternalAgent {
    command: String,
    child: Child,
    stdin: Option<ChildStdin>,
    /// The watcher in the agent's group (see [`watch_group`]).
    watcher: Option<Child>,
    lines: Receiver<Result<String, String>>,
    unasked: usize,
    timeout: Duration,
    unparsed: usize,
}

impl std::fmt::Debug for ExternalAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalAgent")
            .field("command", &self.command)
            .field("unparsed", &self.unparsed)
            .finish_non_exhaustive()
    }
}

/// One line of the agent's output, at most [`MAX_REPLY`] bytes (the rest of a longer line is
/// read and thrown away, so a runaway agent cannot exhaust memory).
fn read_line<R: BufRead>(r: &mut R) -> Result<Option<String>, String> {
    let mut buf = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = r.fill_buf().map_err(|e| e.to_string())?;
        if chunk.is_empty() {
            return if buf.is_empty() && !too_long {
                Ok(None)
            } else if too_long {
                Err(format!("a reply longer than {MAX_REPLY} bytes"))
            } else {
                Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
            };
        }
        let (take, end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > MAX_REPLY {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(take + usize::from(end));
        if end {
            return if too_long {
                Err(format!("a reply longer than {MAX_REPLY} bytes"))
            } else {
                Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
            };
        }
    }
}

/// Starts a watcher in the agent's process group `pgid`: a shell that waits for its standard
/// input, which only this process writes to, to close. That happens when the run ends, and
/// also when doxascope dies without running any cleanup (Ctrl-C, SIGKILL, an abort): then it
/// ends the group itself, TERM and a second later KILL, so the agent and whatever it started
/// in the background never outlive doxascope. `None` if it cannot start (the group is still
/// ended at a normal end of the run).
fn watch_group(pgid: u32) -> Option<Child> {
    use std::os::unix::process::CommandExt;
    let pgid = i32::try_from(pgid).ok()?;
    Command::new("sh")
        .arg("-c")
        .arg("trap '' INT TERM HUP; read -r _; kill -TERM 0; sleep 1; kill -KILL 0")
        .process_group(pgid)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

/// The label a reply line names, if any.
pub fn parse_reply(line: &str) -> Option<Label> {
    let v: Value = serde_json::from_str(line.trim()).ok()?;
    let s = match &v {
        Value::String(s) => s.as_str(),
        Value::Object(m) => m.get("reply")?.as_str()?,
        _ => return None,
    };
    match s.trim().to_ascii_uppercase().as_str() {
        "YES" => Some(Label::Yes),
        "NO" => Some(Label::No),
        "UNKNOWN" => Some(Label::Unknown),
        _ => None,
    }
}

/// The question line for one turn.
pub fn question_line(ask: &Ask<'_>) -> String {
    let w = ask.world;
    json!({
        "dialogue": ask.dialogue + 1,
        "turn": ask.turn,
        "turns": ask.turns,
        "atoms": w.atoms,
        "rules": w.rules.iter().map(|r| r.text.as_str()).collect::<Vec<_>>(),
        "beliefs": ask.beliefs_summary(),
        "question": ask.text,
        "answers": ["YES", "NO", "UNKNOWN"],
    })
    .to_string()
}

impl ExternalAgent {
    /// Starts `command` through `sh -c`, with `timeout` for each reply.
    pub fn spawn(command: &str, timeout: Duration) -> Result<ExternalAgent, DemoError> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| DemoError::Agent(format!("cannot start `{command}`: {e}")))?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| DemoError::Agent("the agent has no standard output".into()))?;
        let (tx, rx) = sync_channel(QUEUED_LINES);
        // The reader thread ends when the agent closes its output (or exits), or when the
        // run is over (the receiver is gone). While QUEUED_LINES wait, it waits too.
        thread::Builder::new()
            .name("doxascope-demo-agent".into())
            .spawn(move || {
                let mut r = BufReader::new(stdout);
                loop {
                    match read_line(&mut r) {
                        Ok(Some(l)) => {
                            if tx.send(Ok(l)).is_err() {
                                return;
                            }
                        }
                        Ok(None) => return,
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            // Keep draining so the agent never blocks on a full pipe.
                            let _ = std::io::copy(&mut r.take(u64::MAX), &mut std::io::sink());
                            return;
                        }
                    }
                }
            })
            .map_err(|e| DemoError::Agent(format!("cannot start a reader thread: {e}")))?;
        let watcher = watch_group(child.id());
        Ok(ExternalAgent {
            command: command.to_string(),
            child,
            stdin,
            watcher,
            lines: rx,
            unasked: 0,
            timeout,
            unparsed: 0,
        })
    }

    /// How many replies named none of YES, NO, UNKNOWN (each counted as UNKNOWN).
    pub fn unparsed(&self) -> usize {
        self.unparsed
    }

    fn exit_note(&mut self) -> String {
        // The agent may be exiting right now: give it a moment to say how.
        let until = Instant::now() + Duration::from_millis(200);
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) => return format!(" (it exited: {st})"),
                Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(10)),
                _ => return String::new(),
            }
        }
    }

    /// How many lines the agent wrote without being asked (each dropped).
    pub fn unasked(&self) -> usize {
        self.unasked
    }

    /// Drops the lines that arrived before the question at `at` was sent (no question was
    /// waiting for them); more than [`MAX_UNASKED`] in the run is a flood and ends it.
    fn drop_unasked(&mut self, at: &str) -> Result<(), DemoError> {
        let mut n = 0;
        while self.lines.try_recv().is_ok() {
            n += 1;
            if self.unasked + n > MAX_UNASKED {
                return Err(DemoError::Agent(format!(
                    "{at}: the agent wrote more than {MAX_UNASKED} lines without being asked \
                     (one reply line per question)"
                )));
            }
        }
        if n > 0 {
            self.unasked += n;
            eprintln!(
                "doxascope demo: {at}: {n} line{} the agent wrote without being asked {} \
                 ignored",
                if n == 1 { "" } else { "s" },
                if n == 1 { "was" } else { "were" }
            );
        }
        Ok(())
    }

    /// Asks one question and returns the label the agent replied.
    pub fn ask(&mut self, ask: &Ask<'_>) -> Result<Label, DemoError> {
        let at = format!("dialogue {}, turn {}", ask.dialogue + 1, ask.turn);
        self.drop_unasked(&at)?;
        let line = question_line(ask) + "\n";
        let sent = match self.stdin.as_mut() {
            Some(w) => w.write_all(line.as_bytes()).and_then(|_| w.flush()),
            None => Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        };
        if let Err(e) = sent {
            let note = self.exit_note();
            return Err(DemoError::Agent(format!(
                "{at}: cannot send the question to the agent: {e}{note}"
            )));
        }
        let reply = match self.lines.recv_timeout(self.timeout) {
            Ok(Ok(l)) => l,
            Ok(Err(e)) => return Err(DemoError::Agent(format!("{at}: the agent sent {e}"))),
            Err(RecvTimeoutError::Timeout) => {
                return Err(DemoError::Agent(format!(
                    "{at}: no reply within {:.0} s (--agent-timeout)",
                    self.timeout.as_secs_f64()
                )));
            }
            Err(RecvTimeoutError::Disconnected) => {
                let note = self.exit_note();
                return Err(DemoError::Agent(format!(
                    "{at}: the agent closed its output without replying{note}"
                )));
            }
        };
        match parse_reply(&reply) {
            Some(l) => Ok(l),
            None => {
                self.unparsed += 1;
                let mut shown: String = reply.chars().take(80).collect();
                if shown.len() < reply.len() {
                    shown.push('…');
                }
                eprintln!(
                    "doxascope demo: {at}: the agent's reply names none of YES, NO, UNKNOWN; \
                     counted as UNKNOWN: {}",
                    crate::sanitize::sanitize(&shown)
                );
                Ok(Label::Unknown)
            }
        }
    }
}

impl ExternalAgent {
    /// Whether the agent has exited, without reaping it: while it is a zombie its pid, which
    /// is its group's id, cannot be given to another process, so the group can still be
    /// signalled safely.
    fn leader_exited(&self) -> bool {
        use rustix::process::{WaitId, WaitIdOptions, waitid};
        let pid = rustix::process::Pid::from_child(&self.child);
        let opts = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        !matches!(waitid(WaitId::Pid(pid), opts), Ok(None))
    }

    /// Ends the agent's process group: TERM, and KILL for what is left after a moment.
    fn end_group(&self) {
        use rustix::process::{Signal, kill_process_group};
        let pid = rustix::process::Pid::from_child(&self.child);
        if pid.as_raw_nonzero().get() <= 1 {
            return;
        }
        if kill_process_group(pid, Signal::TERM).is_err() {
            return; // No process is left in the group.
        }
        // A moment to end cleanly; then KILL, harmless to a group left with the zombie
        // leader alone.
        let until = Instant::now() + Duration::from_millis(300);
        while Instant::now() < until && !self.leader_exited() {
            thread::sleep(Duration::from_millis(10));
        }
        thread::sleep(Duration::from_millis(20));
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

impl Drop for ExternalAgent {
    fn drop(&mut self) {
        // Closing stdin tells a well-behaved agent the run is over.
        drop(self.stdin.take());
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until && !self.leader_exited() {
            thread::sleep(Duration::from_millis(10));
        }
        // Whether it exited or not, whatever it started in its group goes too (the watcher
        // included); it is reaped only after that.
        self.end_group();
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(mut w) = self.watcher.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_loosely_but_only_as_the_three_labels() {
        assert_eq!(parse_reply(r#"{"reply":"YES"}"#), Some(Label::Yes));
        assert_eq!(
            parse_reply(r#"{"reply":" no ","why":"B is false"}"#),
            Some(Label::No)
        );
        assert_eq!(parse_reply(r#""unknown""#), Some(Label::Unknown));
        assert_eq!(parse_reply(r#"{"reply":"maybe"}"#), None);
        assert_eq!(parse_reply("YES"), None);
        assert_eq!(parse_reply(r#"{"answer":"YES"}"#), None);
        assert_eq!(parse_reply(""), None);
    }

    #[test]
    fn long_lines_are_refused_without_being_kept() {
        let mut big = vec![b'x'; MAX_REPLY + 10];
        big.push(b'\n');
        big.extend_from_slice(b"{\"reply\":\"YES\"}\n");
        let mut r = BufReader::new(&big[..]);
        assert!(read_line(&mut r).is_err());
        assert_eq!(
            read_line(&mut r),
            Ok(Some("{\"reply\":\"YES\"}".to_string()))
        );
        assert_eq!(read_line(&mut r), Ok(None));
    }
}
