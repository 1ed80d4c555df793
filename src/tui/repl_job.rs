//! The REPL job: the one command engine ([`crate::repl::Repl`]) on its own thread.
//!
//! The UI never waits for the solver: it sends a [`Request`] and keeps drawing (the REPL pane
//! shows "working…"); the [`Answer`] arrives on a channel the event loop polls after input.
//! Requests run in order. Each carries the step the UI shows, so commands always see Σ at
//! the selected step.
//!
//! Σ comes from the model, as in `doxascope repl`: the worker keeps one
//! [`crate::model::Model`] per session, grown with the [`Delta`]s it is sent (what
//! was read since the last one), and runs the REPL over it through
//! [`crate::repl::ModelSigma`], the same adapter the headless REPL uses. When the view moves
//! to another session the worker starts a fresh REPL over its model; when the shown session
//! grows, the REPL keeps its hand-issued layer (a log of effects, as valid on the grown trace).
//! Every answer carries the layer's effect on Σ ([`crate::repl::HandView`]) for the Σ pane.
//!
//! A big session reaches the worker in pieces ([`Msg::Data`], one per event-loop turn, like
//! the audit hand-over), so the first command on a million-event session never copies it all
//! on the UI thread in one stall; the command itself follows as [`Msg::Run`] with the last
//! piece. Messages are applied in order, so a command always sees every piece sent before it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender as StdSender, channel};

use tokio::sync::mpsc::Sender;

use super::data::Delta;
use crate::model::Model;
use crate::repl::{Command, EmptyTrace, HandView, ModelSigma, Repl, ReplError, Reply};

/// Why a command was sent to the REPL job (decides how the reply is shown).
#[derive(Debug, Clone, PartialEq)]
pub enum Purpose {
    /// Typed at the prompt: the reply goes to the scrollback.
    Prompt,
    /// `w` on a belief: the reply's support is highlighted in Σ.
    Why,
    /// Enter on a revision: show the conflict set of its trigger (a read-only `check`).
    Conflict,
    /// The step changed while the hand-issued layer is not empty: refresh its view in Σ.
    Hand,
    /// `H` on a belief: its history is marked on the strip under the timeline.
    History,
    /// `b`: a bookmark was written; the reply says where.
    Bookmark,
    /// `'`: the session's bookmarks and notes, for the overlay that jumps to one.
    Marks,
    /// New events arrived in a followed view with watchpoints: `continue` from the last step
    /// checked; a stop pauses following there.
    Watch {
        /// The session the check is about (the view may have moved on meanwhile).
        session: usize,
    },
}

/// One command for the worker.
#[derive(Debug)]
pub struct Request {
    /// The command line.
    pub line: String,
    /// The step the REPL must be at first.
    pub step: u64,
    /// Why it was sent.
    pub purpose: Purpose,
    /// What is new in the shown session since the last request (possibly nothing).
    pub data: Option<Delta>,
}

/// What the UI sends the worker, applied in order.
#[derive(Debug)]
pub enum Msg {
    /// A piece of a session (no command yet): the worker grows its model of it.
    Data(Delta),
    /// A command, with what is new in its session since the last message.
    Run(Request),
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
    /// The hand-issued layer's effect on Σ at the REPL's step after the command (`None`:
    /// the layer is empty), for the Σ pane.
    pub hand: Option<HandView>,
}

/// The UI's end of the worker.
pub struct ReplJob {
    tx: StdSender<Msg>,
}

impl ReplJob {
    /// Starts the worker thread; answers go to `answers`.
    pub fn spawn(answers: Sender<Answer>) -> std::io::Result<ReplJob> {
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("doxascope-repl".into())
            .spawn(move || serve(rx, answers))?;
        Ok(ReplJob { tx })
    }

    /// Queues a message; `Err` with a message when the worker is gone. The channel is
    /// unbounded on purpose, as the auditor's: a dropped piece would leave the worker's model
    /// behind the UI's, and the UI sends only what it read plus what the user typed.
    pub fn send(&self, msg: Msg) -> Result<(), String> {
        self.tx
            .send(msg)
            .map_err(|_| "the REPL worker stopped".to_string())
    }
}

/// Runs one request against `repl` (the worker loop's body, callable from tests).
pub fn handle(repl: &mut Repl, req: &Request) -> Answer {
    let answer = |repl: &mut Repl, result| Answer {
        purpose: req.purpose.clone(),
        result,
        notes: repl.take_notes(),
        hand: repl.hand_view(),
    };
    if repl.step() != req.step {
        // Moving Σ to the UI's step; an error here (a step past the end) shows on the command.
        if let Err(e) = repl.run(&Command::At(req.step)) {
            return answer(repl, Err(e));
        }
    }
    let result = repl.run_line(&req.line);
    answer(repl, result)
}

/// The worker's state: a model per session and the REPL over the shown one. The thread
/// runs [`ReplState::handle`]; tests call it directly.
pub struct ReplState {
    models: HashMap<usize, (Arc<Model>, Arc<str>)>,
    current: Option<usize>,
    /// The session whose REPL was taken off its model while the model grows.
    parked: Option<usize>,
    repl: Repl,
    /// Notes from pieces, told with the next answer.
    notes: Vec<String>,
}

impl Default for ReplState {
    fn default() -> Self {
        ReplState {
            models: HashMap::new(),
            current: None,
            parked: None,
            repl: Repl::new(Box::new(EmptyTrace)),
            notes: Vec::new(),
        }
    }
}

impl ReplState {
    /// Applies one message: a piece grows its session's model; a command runs after its
    /// data and is answered.
    pub fn apply(&mut self, msg: Msg) -> Option<Answer> {
        match msg {
            Msg::Data(d) => {
                if let Err(m) = self.grow(d) {
                    self.notes.push(m);
                }
                None
            }
            Msg::Run(req) => Some(self.handle(req)),
        }
    }

    /// Applies the request's data, then runs its command.
    pub fn handle(&mut self, mut req: Request) -> Answer {
        let mut notes = std::mem::take(&mut self.notes);
        if let Some(d) = req.data.take()
            && let Err(m) = self.add(d)
        {
            notes.push(m);
        }
        let mut a = if req.purpose == Purpose::Conflict {
            // A conflict popup explains the trace's own revision: ask a REPL over the trace
            // alone, so neither the hand-issued layer nor anything asked before can change
            // the answer, and asking changes nothing.
            match self.current.and_then(|c| self.models.get(&c)) {
                Some((model, name)) => {
                    let trace = ModelSigma::new(model.clone(), name.to_string());
                    let mut fresh = Repl::new(Box::new(trace));
                    let mut a = handle(&mut fresh, &req);
                    a.hand = self.repl.hand_view();
                    a
                }
                None => handle(&mut Repl::new(Box::new(EmptyTrace)), &req),
            }
        } else {
            handle(&mut self.repl, &req)
        };
        notes.append(&mut a.notes);
        a.notes = notes;
        a
    }

    /// Grows the session's model without putting a REPL over it (a piece of a hand-over: the
    /// REPL is built once, when the command arrives).
    fn grow(&mut self, d: Delta) -> Result<(), String> {
        // The REPL holds the model through an `Arc`: let go of it before growing the model.
        // Growing the session it is over keeps its hand-issued layer (a log of effects, valid
        // on the grown trace too); another session, or a session read afresh, starts clean.
        let same = (self.current == Some(d.session) || self.parked == Some(d.session)) && !d.reset;
        if same {
            self.repl.set_trace(Box::new(EmptyTrace));
            self.parked = Some(d.session);
        } else {
            self.repl = Repl::new(Box::new(EmptyTrace));
            self.parked = None;
        }
        self.current = None;
        if d.reset {
            self.models.remove(&d.session);
        }
        let (model, _) = self
            .models
            .entry(d.session)
            .or_insert_with(|| (Arc::new(Model::new()), d.name.clone()));
        if !d.items.is_empty() {
            let Some(m) = Arc::get_mut(model) else {
                return Err("the REPL's model is in use elsewhere; Σ is not up to date".into());
            };
            m.adopt_sources(&d.sources);
            m.extend(d.items);
        }
        Ok(())
    }

    /// Grows the session's model and puts a fresh REPL over it when anything changed.
    fn add(&mut self, d: Delta) -> Result<(), String> {
        if d.items.is_empty() && !d.reset && self.current == Some(d.session) {
            return Ok(());
        }
        let session = d.session;
        let grown = self.grow(d);
        if let Some((model, name)) = self.models.get(&session) {
            let trace = Box::new(ModelSigma::new(model.clone(), name.to_string()));
            if self.parked == Some(session) {
                self.repl.set_trace(trace);
            } else {
                self.repl = Repl::new(trace);
                // `:note` and `:notes` keep their marks beside the session's file.
                if let Some(f) = model.file_of(name) {
                    self.repl
                        .set_note_store(crate::trace::notes::NoteStore::open(f));
                }
            }
            self.parked = None;
            self.current = Some(session);
        }
        grown
    }
}

fn serve(rx: Receiver<Msg>, answers: Sender<Answer>) {
    let mut state = ReplState::default();
    while let Ok(msg) = rx.recv() {
        if let Some(answer) = state.apply(msg)
            && answers.blocking_send(answer).is_err()
        {
            return;
        }
    }
}
