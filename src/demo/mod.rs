//! The built-in belief-revision demo (seed 003, "Conversation as Belief Revision").
//!
//! A synthetic propositional world ([`world`]), a question schedule ([`schedule`]) and a
//! simulated agent ([`agent`]) script a dialogue; two systems then consume the same replies
//! ([`run`]): the baseline, which appends every commitment unchecked, and the
//! solver-augmented run, which announces each commitment through
//! [`crate::logic::engine::BeliefState`] under a revision policy (GreedySAT by default).
//!
//! The demo is a *producer* of trace events. It sits beside `model` and uses only `logic`
//! and `trace`: [`emit`] turns the solver run into contract §2 events, [`DemoEvents`] is the
//! lazy event stream a viewer plays, and [`player::Player`] paces it (pause, step, speed).
//! [`eval`] prints the Table 1 comparison; [`race`] runs two policies on the same dialogues.
//!
//! Everything is deterministic in the configuration: same seed, same worlds, questions,
//! replies, revisions and bytes.
//!
//! ```
//! use doxascope::demo::{DemoConfig, run::{Dialogue, baseline, solver}};
//!
//! let cfg = DemoConfig { error_rate: 0.3, ..DemoConfig::default() };
//! let d = Dialogue::script(&cfg, 0);
//! let s = solver(&d, cfg.policy).unwrap();
//! assert!(s.summary.consistent); // GreedySAT keeps the theory satisfiable
//! let _ = baseline(&d);          // which the baseline may not
//! ```

pub mod agent;
pub mod emit;
pub mod eval;
pub mod external;
pub mod player;
pub mod race;
mod rng;
pub mod run;
pub mod schedule;
pub mod world;

use std::fmt;

use crate::logic::engine::EngineError;
use crate::logic::revise::Policy;

pub use emit::{DemoEvents, write_trace, write_trace_of};
pub use schedule::{Label, Schedule};

/// What a demo run does (the `doxascope demo` flags).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DemoConfig {
    /// The question schedule.
    pub schedule: Schedule,
    /// The random seed: worlds, questions and replies follow from it.
    pub seed: u64,
    /// Turns per dialogue (T in seed 003; 10 there).
    pub turns: usize,
    /// The agent's error rate X (see [`agent`]).
    pub error_rate: f64,
    /// The revision policy of the solver-augmented run.
    pub policy: Policy,
}

impl Default for DemoConfig {
    /// Stress schedule, seed 1, 10 turns, error rate 0.1, greedy.
    fn default() -> Self {
        DemoConfig {
            schedule: Schedule::Stress,
            seed: 1,
            turns: 10,
            error_rate: 0.1,
            policy: Policy::Greedy,
        }
    }
}

/// Why a demo run failed.
#[derive(Debug, Clone, PartialEq)]
pub enum DemoError {
    /// The engine failed (timeout, internal error).
    Engine(EngineError),
    /// Writing the trace failed.
    Io(String),
    /// The demo produced something it should not have (a bug).
    Internal(String),
    /// The external agent (`demo --agent`) failed: it could not start, exited, or did not
    /// answer in time.
    Agent(String),
}

impl fmt::Display for DemoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DemoError::Engine(e) => write!(f, "engine: {e}"),
            DemoError::Io(e) => write!(f, "writing the trace: {e}"),
            DemoError::Internal(e) => write!(f, "internal error: {e}"),
            DemoError::Agent(e) => write!(f, "agent: {}", crate::sanitize::sanitize(e)),
        }
    }
}

impl std::error::Error for DemoError {}
