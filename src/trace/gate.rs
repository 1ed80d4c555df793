//! The live gate's seam: how a live connection asks Θ(Σ, φ) and gets one reply line on the
//! same connection, without the trace layer knowing what Σ is.
//!
//! The layer that owns the replay and the engine hands the hub a [`GateFactory`]
//! ([`super::live::LiveConfig::gatekeeper`]). Every socket session gets its own
//! [`Gatekeeper`], which sees every item of the session in order ([`Gatekeeper::observe`])
//! and answers each `gate` event ([`Gatekeeper::answer`]) on what it has seen before it: the
//! session's Σ at that moment. The hub writes the reply line back to the client and hands
//! the consumer the gate followed by the answer's record (a `verify` line), so a viewer
//! shows the verification the agent asked for. Answers run on a blocking thread.

use std::fmt;
use std::sync::Arc;

use super::event::Event;
use super::reader::Item;

/// Answers the gates of one live session.
pub trait Gatekeeper: Send + Sync {
    /// Takes in one item of the session (called for every item, in order, gates included
    /// after their answer).
    fn observe(&mut self, item: &Item);
    /// Answers a `gate` event on the items observed so far.
    fn answer(&mut self, gate: &Event) -> GateAnswer;
}

/// A gate's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateAnswer {
    /// The reply line for the client (one JSON object, without the newline).
    pub reply: String,
    /// A v1 line recording the answer in the session (a `verify`), shown after the gate.
    pub record: Option<String>,
}

/// Makes one [`Gatekeeper`] per live session.
#[derive(Clone)]
pub struct GateFactory(pub Arc<dyn Fn() -> Box<dyn Gatekeeper> + Send + Sync>);

impl fmt::Debug for GateFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GateFactory")
    }
}
