//! Two revision policies raced on the same dialogues (`doxascope demo --race A,B`).
//!
//! Each dialogue is scripted once ([`Dialogue`]): the same world, questions and replies feed
//! two independent solver runs ([`solver`]), one per policy, so every difference between the
//! sides is the policy's doing. [`Race`] keeps, per turn and per side, what a viewer shows in
//! lockstep: Σ, how many revisions so far, what the turn dropped, refusals and fallbacks.
//! Views (the text play in `cli`, the TUI's race pane) only display it.

use crate::logic::engine::Outcome;
use crate::logic::revise::Policy;

use super::run::{Dialogue, SolverRun, SolverStep, belief_id, solver};
use super::schedule::Label;
use super::{DemoConfig, DemoError};

/// One side of one turn: that policy's state once the turn's commitment was handled.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Side {
    /// The commitments in Σ after the turn, oldest first: `(id, formula)`.
    pub sigma: Vec<(String, String)>,
    /// |Σ|: the world's rules and facts plus the commitments.
    pub sigma_size: usize,
    /// Revisions so far in this dialogue, this turn's included.
    pub revisions: usize,
    /// Whether this turn's commitment made the policy revise.
    pub revised: bool,
    /// Prior commitments this turn dropped: `(id, formula)`.
    pub dropped: Vec<(String, String)>,
    /// Whether this turn's commitment was refused.
    pub refused: bool,
    /// Whether this turn went through greedy's recency fallback (and kept the commitment).
    pub fallback: bool,
    /// Prior commitments dropped so far in this dialogue.
    pub dropped_total: usize,
    /// Refusals so far in this dialogue.
    pub refusals: usize,
    /// Fallbacks so far in this dialogue.
    pub fallbacks: usize,
}

/// One turn, as both sides saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// 1-based turn number.
    pub turn: usize,
    /// The question.
    pub question: String,
    /// The agent's reply, the same for both sides.
    pub reply: Label,
    /// The correct answer.
    pub correct: Label,
    /// The commitment the reply makes (`None` for UNKNOWN): `(id, formula)`.
    pub commitment: Option<(String, String)>,
    /// The two sides, in the order of [`Race::policies`].
    pub sides: [Side; 2],
}

/// One dialogue of the race.
#[derive(Debug, Clone, PartialEq)]
pub struct RaceDialogue {
    /// The dialogue both sides consumed.
    pub dialogue: Dialogue,
    /// The solver run of each side.
    pub runs: [SolverRun; 2],
    /// Per turn, in order.
    pub rows: Vec<Row>,
}

/// A side's totals over every dialogue (the final comparison line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Revisions (turns where the policy revised).
    pub revisions: usize,
    /// Prior commitments dropped.
    pub dropped: usize,
    /// Commitments refused.
    pub refusals: usize,
    /// Greedy recency fallbacks.
    pub fallbacks: usize,
    /// Dialogues whose final theory is satisfiable (by model checking).
    pub consistent: usize,
    /// Questions the final belief states answer correctly.
    pub final_correct: usize,
}

/// Two policies raced on the same dialogues.
#[derive(Debug, Clone, PartialEq)]
pub struct Race {
    /// The demo configuration (its `policy` is ignored: each side has its own).
    pub config: DemoConfig,
    /// The two policies, left and right.
    pub policies: [Policy; 2],
    /// The dialogues, in order.
    pub dialogues: Vec<RaceDialogue>,
}

impl Race {
    /// Races `policies` on `n` dialogues the simulated agent scripts for `config`.
    pub fn new(config: DemoConfig, n: usize, policies: [Policy; 2]) -> Result<Race, DemoError> {
        let ds = (0..n).map(|i| Dialogue::script(&config, i)).collect();
        Race::from_dialogues(config, ds, policies)
    }

    /// Races `policies` on dialogues already scripted (an external agent's replies).
    pub fn from_dialogues(
        config: DemoConfig,
        dialogues: Vec<Dialogue>,
        policies: [Policy; 2],
    ) -> Result<Race, DemoError> {
        let mut out = Vec::with_capacity(dialogues.len());
        for d in dialogues {
            let runs = [solver(&d, policies[0])?, solver(&d, policies[1])?];
            let rows = rows(&d, &runs)?;
            out.push(RaceDialogue {
                dialogue: d,
                runs,
                rows,
            });
        }
        Ok(Race {
            config,
            policies,
            dialogues: out,
        })
    }

    /// Side `side`'s totals over every dialogue.
    pub fn totals(&self, side: usize) -> Totals {
        let mut t = Totals::default();
        for d in &self.dialogues {
            if let Some(last) = d.rows.last() {
                let s = &last.sides[side];
                t.revisions += s.revisions;
                t.dropped += s.dropped_total;
                t.refusals += s.refusals;
                t.fallbacks += s.fallbacks;
            }
            let sum = &d.runs[side].summary;
            t.consistent += usize::from(sum.consistent);
            t.final_correct += sum.final_correct;
        }
        t
    }

    /// The row of `turn` (1-based) of dialogue `dialogue` (0-based), if there is one.
    pub fn row(&self, dialogue: usize, turn: usize) -> Option<&Row> {
        self.dialogues.get(dialogue)?.rows.get(turn.checked_sub(1)?)
    }
}

/// Whether `s` made the policy revise: it dropped something, or (`flag`, greedy-paper) kept a
/// contradiction. The trace's `revise` events follow the same rule.
pub fn revised(s: &SolverStep) -> bool {
    !s.retracted.is_empty() || (s.applied && s.theta == Outcome::Contradiction)
}

/// Replays each side's steps into per-turn rows.
fn rows(d: &Dialogue, runs: &[SolverRun; 2]) -> Result<Vec<Row>, DemoError> {
    let rules = d.world.rules.len();
    let mut state: [Side; 2] = Default::default();
    let mut out = Vec::with_capacity(d.turns.len());
    for (k, t) in d.turns.iter().enumerate() {
        let commitment = t.literal.map(|l| (belief_id(t.index), l.formula(&d.world)));
        for (side, run) in state.iter_mut().zip(runs) {
            side.revised = false;
            side.dropped.clear();
            side.refused = false;
            side.fallback = false;
            let step = run
                .steps
                .get(k)
                .ok_or_else(|| DemoError::Internal(format!("solver run lacks turn {}", t.index)))?;
            if let (Some(s), Some(c)) = (step, &commitment) {
                let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut side.sigma)
                    .into_iter()
                    .partition(|(id, _)| s.retracted.contains(id));
                side.sigma = kept;
                side.dropped = gone;
                if s.applied {
                    side.sigma.push(c.clone());
                }
                side.revised = revised(s);
                side.refused = !s.applied;
                side.fallback = s.fallback;
                side.revisions += usize::from(side.revised);
                side.dropped_total += side.dropped.len();
                side.refusals += usize::from(side.refused);
                side.fallbacks += usize::from(side.fallback);
            }
            side.sigma_size = rules + side.sigma.len();
        }
        out.push(Row {
            turn: t.index,
            question: t.text.clone(),
            reply: t.reply,
            correct: t.correct,
            commitment,
            sides: state.clone(),
        });
    }
    Ok(out)
}
