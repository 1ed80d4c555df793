//! The simulated agent: answers YES / NO / UNKNOWN with a configurable error rate.
//!
//! It stands in for the LLM of seed 003 and reproduces where the paper observes LLM errors:
//! slips concentrate on negated questions and on facts that follow from rules, and an agent
//! asked about an atom the world leaves open tends to commit anyway (hallucinate) rather than
//! say UNKNOWN.
//!
//! For question q the slip probability is `min(1, X · w(q))`, X = `--error-rate`, with weight
//! `w = 0.5 + 1.0·[q negated] + 1.0·[atom derived by rules] + 1.5·[atom undetermined]`. A slip
//! is, depending on the question:
//!
//! * with an uncertainty cue: a hedge, UNKNOWN (cues make the agent careful);
//! * on a decided atom: the wrong polarity, or UNKNOWN; on a negated question ignoring the
//!   negation also gives the wrong polarity, so it is 80% wrong polarity there, 50% otherwise;
//! * on an undetermined atom: a commitment to the agent's *misbelief* about that atom, drawn
//!   once per dialogue, so hallucinations are stable across a dialogue; on a negated question
//!   the negation is ignored half of the time, which makes the agent contradict itself.
//!
//! Replies depend only on the world, the question and the seed, never on which system wraps
//! the agent, so baseline and solver runs of a dialogue see identical replies (seed 003 keeps
//! decoding identical across systems for the same reason).

use super::rng::Rng;
use super::schedule::{Label, Question};
use super::world::World;

/// The simulated agent of one dialogue.
#[derive(Debug, Clone)]
pub struct Agent {
    error_rate: f64,
    misbelief: Vec<bool>,
}

impl Agent {
    /// An agent for `world` slipping at `error_rate` (clamped to [0, 1]).
    pub(crate) fn new(world: &World, error_rate: f64, rng: &mut Rng) -> Agent {
        let error_rate = if error_rate.is_finite() {
            error_rate.clamp(0.0, 1.0)
        } else {
            0.0
        };
        Agent {
            error_rate,
            misbelief: (0..world.atoms.len()).map(|_| rng.chance(0.5)).collect(),
        }
    }

    /// The probability of a slip on `q` (see the module documentation).
    pub fn slip_probability(&self, world: &World, q: &Question) -> f64 {
        let decided = world.truth.get(q.atom).copied().flatten().is_some();
        let mut w = 0.5;
        if q.negated {
            w += 1.0;
        }
        if world.is_derived(q.atom) {
            w += 1.0;
        }
        if !decided {
            w += 1.5;
        }
        (self.error_rate * w).min(1.0)
    }

    /// The agent's reply to `q`.
    pub(crate) fn answer(&self, world: &World, q: &Question, rng: &mut Rng) -> Label {
        let correct = q.correct(world);
        // Draw both numbers unconditionally so the stream does not depend on the outcome.
        let slip = rng.chance(self.slip_probability(world, q));
        let u = rng.unit();
        if !slip {
            return correct;
        }
        if q.cue.is_some() {
            return Label::Unknown;
        }
        match world.truth.get(q.atom).copied().flatten() {
            Some(_) => {
                // Ignoring the negation of a negated question gives the wrong polarity too,
                // which is why negated questions commit to a wrong answer more often.
                let wrong = if q.negated { 0.8 } else { 0.5 };
                if u < wrong {
                    correct.flip()
                } else {
                    Label::Unknown
                }
            }
            None => {
                let m = self.misbelief.get(q.atom).copied().unwrap_or(true);
                if q.negated && u < 0.5 {
                    Label::of(Some(m))
                } else {
                    q.label_for(Some(m))
                }
            }
        }
    }
}
