//! The REPL worker: the one command engine ([`crate::repl::Repl`]) on its own thread.
//!
//! The UI never waits for the solver: it sends a [`Request`] and keeps drawing (the REPL pane
//! shows "working…"); the [`Answer`] arrives on a channel the event loop polls after input.
//! Requests run in order. Each carries the step the UI shows, so commands always see Σ at
//! the selected step; when the trace has grown, the UI attaches a new Σ history and the
//! worker starts a fresh session over it (the hand-issued layer does not survive new data).

use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

use tokio::sync::mpsc::Sender;

use super::app::Purpose;
use super::data::{RawSigma, SigmaSnapshot};
use crate::logic::revise::Policy;
use crate::repl::{Command, Repl, ReplError, Reply};

/// One command for the worker.
#[derive(Debug)]
pub struct Request {
    /// The command line.
    pub line: String,
    /// The step the REPL must be at first.
    pub step: u64,
    /// Why it was sent.
    pub purpose: Purpose,
    /// A new Σ history, when the trace changed since the last request.
    pub sigma: Option<RawSigma>,
}

/// The worker's reply.
#[derive(Debug)]
pub struct Answer {
    /// Why the command was sent.
    pub purpose: Purpose,
    /// The result.
    pub result: Result<Reply, ReplError>,
    /// Notes the REPL produced while building Σ.
    pub notes: Vec<String>,
}

/// The UI's end of the worker.
pub struct Worker {
    tx: SyncSender<Request>,
}

/// Requests queued at most; beyond that the UI reports "busy" rather than block.
const QUEUE: usize = 32;

impl Worker {
    /// Starts the worker thread; answers go to `answers`.
    pub fn spawn(answers: Sender<Answer>) -> std::io::Result<Worker> {
        let (tx, rx) = sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("doxascope-repl".into())
            .spawn(move || serve(rx, answers))?;
        Ok(Worker { tx })
    }

    /// Queues a request; `Err` with a message when the worker is busy or gone.
    pub fn send(&self, req: Request) -> Result<(), String> {
        match self.tx.try_send(req) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err("the REPL is busy; try again".into()),
            Err(TrySendError::Disconnected(_)) => Err("the REPL worker stopped".into()),
        }
    }
}

/// Runs one request against `repl` (the worker loop's body, callable from tests).
pub fn handle(repl: &mut Repl, req: &Request) -> Answer {
    if repl.step() != req.step {
        // Moving Σ to the UI's step; an error here (a step past the end) shows on the command.
        if let Err(e) = repl.run(&Command::At(req.step)) {
            return Answer {
                purpose: req.purpose.clone(),
                result: Err(e),
                notes: repl.take_notes(),
            };
        }
    }
    let result = if req.purpose == Purpose::Conflict {
        // Announce under `reject` to learn the conflict set without changing Σ, then put the
        // policy back; undo in case the formula was consistent and got applied.
        let prev = repl.policy();
        repl.set_policy(Policy::Reject);
        let r = repl.run_line(&req.line);
        if matches!(r, Ok(Reply::Announce { applied: true, .. })) {
            let _ = repl.run(&Command::Undo);
        }
        repl.set_policy(prev);
        r
    } else {
        repl.run_line(&req.line)
    };
    Answer {
        purpose: req.purpose.clone(),
        result,
        notes: repl.take_notes(),
    }
}

fn serve(rx: Receiver<Request>, answers: Sender<Answer>) {
    let mut repl = Repl::new(Box::new(SigmaSnapshot::default()));
    while let Ok(mut req) = rx.recv() {
        if let Some(raw) = req.sigma.take() {
            repl = Repl::new(Box::new(SigmaSnapshot::from(raw)));
        }
        let answer = handle(&mut repl, &req);
        if answers.blocking_send(answer).is_err() {
            return;
        }
    }
}
