//! Dialogues and the two systems of seed 003: the unchecked baseline and the solver-augmented
//! run (GreedySAT revision, or any other policy of the engine).
//!
//! A [`Dialogue`] is fixed before either system runs: world, questions, replies. Both systems
//! then consume the same replies, so any difference between them is the solver's doing.
//!
//! Metrics follow seed 003. *Raw accuracy* compares each reply with the correct label.
//! *Final accuracy* re-reads every question against the final belief state 𝓑_T: the atom's
//! last surviving commitment, or, when there is none and 𝓡 ∪ 𝓑_T is satisfiable, what that
//! theory entails (the "belief-state interpreter"). A dialogue is *inconsistent* when
//! 𝓡 ∪ 𝓑_T is unsatisfiable. These are judged by the world's own model checker, not by the
//! engine under test; the engine's own verdict is kept alongside so tests can compare them.

use crate::logic::engine::{BeliefSpec, BeliefState, EngineError, Outcome, Role};
use crate::logic::formula::Formula;
use crate::logic::parse::parse;
use crate::logic::revise::Policy;

use super::agent::Agent;
use super::rng::Rng;
use super::schedule::{Label, Question, Schedule, questions};
use super::world::{Lit, World};
use super::{DemoConfig, DemoError};

/// One turn of a dialogue as scripted before any system runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// 1-based turn number (τ in seed 003).
    pub index: usize,
    /// The question.
    pub question: Question,
    /// The question's text, as the agent saw it.
    pub text: String,
    /// The agent's reply.
    pub reply: Label,
    /// The correct answer (ground truth by model checking).
    pub correct: Label,
    /// The literal the reply commits to (`None` for UNKNOWN).
    pub literal: Option<Lit>,
}

/// A scripted dialogue: world, questions and the agent's replies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialogue {
    /// 0-based dialogue number within the run.
    pub index: usize,
    /// The schedule its questions follow.
    pub schedule: Schedule,
    /// The world.
    pub world: World,
    /// The turns, in order.
    pub turns: Vec<Turn>,
    /// The external agent that replied (`demo --agent CMD`: the command), `None` for the
    /// bundled simulated agent.
    pub agent: Option<String>,
}

/// What an agent is asked at one turn (see [`Dialogue::script_with`]).
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    /// 0-based dialogue number.
    pub dialogue: usize,
    /// 1-based turn number.
    pub turn: usize,
    /// Turns in the dialogue.
    pub turns: usize,
    /// The world (its atoms and the paraphrases of 𝓡 are what the agent may see).
    pub world: &'a World,
    /// The question.
    pub question: &'a Question,
    /// The question's text.
    pub text: &'a str,
    /// The commitments of the earlier replies, in order: the unchecked belief state, the same
    /// for both systems (they must consume identical replies).
    pub committed: &'a [Lit],
}

impl Ask<'_> {
    /// The paper's summary of the belief state: "So far, we believe that A is true, B is
    /// false, and we are unsure about C." (the last commitment about each atom counts).
    pub fn beliefs_summary(&self) -> String {
        let w = self.world;
        let mut believed: Vec<String> = Vec::new();
        let mut unsure: Vec<&str> = Vec::new();
        for (a, name) in w.atoms.iter().enumerate() {
            match self.committed.iter().rev().find(|l| l.atom == a) {
                Some(l) => believed.push(format!(
                    "{name} is {}",
                    if l.positive { "true" } else { "false" }
                )),
                None => unsure.push(name),
            }
        }
        let list = |xs: &[String]| match xs {
            [] => String::new(),
            [one] => one.clone(),
            [a, b] => format!("{a} and {b}"),
            [init @ .., last] => format!("{}, and {last}", init.join(", ")),
        };
        let unsure: Vec<String> = unsure.iter().map(|s| s.to_string()).collect();
        match (believed.is_empty(), unsure.is_empty()) {
            (true, _) => format!(
                "So far, we believe nothing; we are unsure about {}.",
                list(&unsure)
            ),
            (false, true) => format!("So far, we believe that {}.", list(&believed)),
            (false, false) => format!(
                "So far, we believe that {}; we are unsure about {}.",
                list(&believed),
                list(&unsure)
            ),
        }
    }
}

impl Dialogue {
    /// Scripts dialogue `index` of the run `cfg` describes. Deterministic in (`cfg.seed`,
    /// `index`, schedule, turns, error rate), independent of the other dialogues; the world
    /// depends on the seed and index only, so both schedules ask about the same worlds.
    pub fn script(cfg: &DemoConfig, index: usize) -> Dialogue {
        let mut ar = Rng::derive(cfg.seed, index as u64, 4 + cfg.schedule as u64);
        let mut agent: Option<Agent> = None;
        // The simulated agent never fails.
        Self::script_with(cfg, index, None, &mut |ask| {
            let a = agent.get_or_insert_with(|| Agent::new(ask.world, cfg.error_rate, &mut ar));
            Ok(a.answer(ask.world, ask.question, &mut ar))
        })
        .unwrap_or_else(|_| unreachable!("the simulated agent always answers"))
    }

    /// Scripts dialogue `index` with the replies of `answer` (an external agent: `demo
    /// --agent`; `agent` names it for the trace), asked turn by turn in order. The world and
    /// the questions are those of [`Dialogue::script`] for the same configuration.
    pub fn script_with(
        cfg: &DemoConfig,
        index: usize,
        agent: Option<&str>,
        answer: &mut dyn FnMut(&Ask<'_>) -> Result<Label, DemoError>,
    ) -> Result<Dialogue, DemoError> {
        let schedule = cfg.schedule;
        let i = index as u64;
        let mut wr = Rng::derive(cfg.seed, i, 1);
        let n_atoms = 5 + wr.below(4);
        let world = World::generate(&mut wr, n_atoms);
        // The schedule gets its own stream so both schedules share worlds for a seed.
        let mut qr = Rng::derive(cfg.seed, i, 2 + schedule as u64);
        let qs = questions(&world, schedule, cfg.turns, &mut qr);
        let mut turns: Vec<Turn> = Vec::with_capacity(qs.len());
        let mut committed: Vec<Lit> = Vec::new();
        let total = qs.len();
        for (k, question) in qs.into_iter().enumerate() {
            let text = question.text(&world);
            let reply = answer(&Ask {
                dialogue: index,
                turn: k + 1,
                turns: total,
                world: &world,
                question: &question,
                text: &text,
                committed: &committed,
            })?;
            let literal = question.literal(reply);
            committed.extend(literal);
            turns.push(Turn {
                index: k + 1,
                text,
                correct: question.correct(&world),
                literal,
                reply,
                question,
            });
        }
        Ok(Dialogue {
            index,
            schedule,
            world,
            turns,
            agent: agent.map(str::to_string),
        })
    }

    /// How many turns the final belief state `beliefs` (commitment order) answers correctly.
    pub fn final_correct(&self, beliefs: &[Lit]) -> usize {
        let consistent = self.world.consistent_with(beliefs);
        self.turns
            .iter()
            .filter(|t| {
                let atom = t.question.atom;
                let value = beliefs
                    .iter()
                    .rev()
                    .find(|l| l.atom == atom)
                    .map(|l| l.positive)
                    .or_else(|| {
                        if consistent {
                            self.world.entailed_value(beliefs, atom)
                        } else {
                            None
                        }
                    });
                t.question.label_for(value) == t.correct
            })
            .count()
    }

    /// How many replies were correct.
    pub fn raw_correct(&self) -> usize {
        self.turns.iter().filter(|t| t.reply == t.correct).count()
    }
}

/// The end state of one system on one dialogue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunSummary {
    /// Turns in the dialogue.
    pub turns: usize,
    /// Replies equal to the correct label.
    pub raw_correct: usize,
    /// Questions the final belief state answers correctly.
    pub final_correct: usize,
    /// Whether 𝓡 ∪ 𝓑_T is satisfiable (by model checking).
    pub consistent: bool,
    /// Prior commitments removed by revision.
    pub retractions: usize,
    /// New commitments not admitted (they contradict 𝓡 alone, or the policy rejected them).
    pub refused: usize,
    /// Greedy revisions where no single retraction sufficed and the recency fallback ran and
    /// kept the new commitment (refusals are counted in `refused` only).
    pub fallbacks: usize,
    /// Whether some atom received conflicting truth assignments across the dialogue: the
    /// commitments this system admitted hold both P and ¬P at some point (seed 003's
    /// *contradiction counts* are the dialogues where this holds).
    pub contradictory: bool,
    /// The final belief state 𝓑_T in commitment order.
    pub beliefs: Vec<Lit>,
}

/// The baseline: every commitment is appended, nothing is ever checked or retracted.
pub fn baseline(d: &Dialogue) -> RunSummary {
    let beliefs: Vec<Lit> = d.turns.iter().filter_map(|t| t.literal).collect();
    RunSummary {
        turns: d.turns.len(),
        raw_correct: d.raw_correct(),
        final_correct: d.final_correct(&beliefs),
        consistent: d.world.consistent_with(&beliefs),
        contradictory: conflicting(&beliefs),
        beliefs,
        ..RunSummary::default()
    }
}

/// Whether some atom has both polarities among `lits`.
pub fn conflicting(lits: &[Lit]) -> bool {
    lits.iter().any(|a| {
        lits.iter()
            .any(|b| a.atom == b.atom && a.positive != b.positive)
    })
}

/// What the engine did with one commitment.
#[derive(Debug, Clone, PartialEq)]
pub struct SolverStep {
    /// The belief id of the commitment (`b<turn>`).
    pub id: String,
    /// Θ(Σ, ℓ) before the update.
    pub theta: Outcome,
    /// Whether ℓ is in Σ afterwards.
    pub applied: bool,
    /// Prior commitments removed, oldest first.
    pub retracted: Vec<String>,
    /// Greedy found no single retraction and fell back to recency, which kept ℓ (a
    /// commitment the rules alone contradict is refused, not a fallback).
    pub fallback: bool,
    /// When ℓ contradicted Σ: a minimal conflicting set of ids, ℓ's included.
    pub conflict: Vec<String>,
}

/// The solver-augmented run of one dialogue.
#[derive(Debug, Clone, PartialEq)]
pub struct SolverRun {
    /// The end state, judged like the baseline's.
    pub summary: RunSummary,
    /// Per turn: what the engine did (`None` for UNKNOWN replies, which commit nothing).
    pub steps: Vec<Option<SolverStep>>,
    /// The engine's own verdict on the final Σ (the summary's comes from model checking).
    pub engine_consistent: bool,
}

/// The id of rule or fact `i` of the world (`r1`, `r2`, …).
pub fn rule_id(i: usize) -> String {
    format!("r{}", i + 1)
}

/// The id of the commitment made at turn `index` (`b1`, `b2`, …).
pub fn belief_id(index: usize) -> String {
    format!("b{index}")
}

fn formula(text: &str) -> Result<Formula, DemoError> {
    parse(text).map_err(|e| DemoError::Internal(format!("generated formula {text:?}: {e:?}")))
}

/// Runs the dialogue through the engine: 𝓡 as rules (never retracted, as in Algorithm 1),
/// each commitment announced under `policy`.
pub fn solver(d: &Dialogue, policy: Policy) -> Result<SolverRun, DemoError> {
    let mut st = BeliefState::new()?;
    for (i, r) in d.world.rules.iter().enumerate() {
        let f = formula(&r.formula(&d.world))?;
        st.add(BeliefSpec::new(rule_id(i), f).role(Role::Rule))?;
    }
    let mut active: Vec<(String, Lit)> = Vec::new();
    let mut summary = RunSummary {
        turns: d.turns.len(),
        raw_correct: d.raw_correct(),
        ..RunSummary::default()
    };
    let mut steps = Vec::with_capacity(d.turns.len());
    let mut admitted: Vec<Lit> = Vec::new();
    for t in &d.turns {
        let Some(lit) = t.literal else {
            steps.push(None);
            continue;
        };
        let id = belief_id(t.index);
        let spec =
            BeliefSpec::new(id.clone(), formula(&lit.formula(&d.world))?).step(t.index as u64);
        let rev = st.announce(spec, policy)?;
        active.retain(|(a, _)| !rev.retracted.contains(a));
        if rev.applied {
            active.push((id.clone(), lit));
            admitted.push(lit);
        } else {
            summary.refused += 1;
        }
        let prior: Vec<String> = rev
            .retracted
            .iter()
            .filter(|r| **r != id)
            .cloned()
            .collect();
        summary.retractions += prior.len();
        // A commitment the rules alone contradict goes through the fallback too (no single
        // retraction helps) and is refused there: a refusal, not a fallback revision.
        let fallback = rev.fallback && rev.applied;
        summary.fallbacks += usize::from(fallback);
        steps.push(Some(SolverStep {
            id,
            theta: rev.outcome,
            applied: rev.applied,
            retracted: prior,
            fallback,
            conflict: rev.conflict,
        }));
    }
    let engine_consistent = st.consistent()?.consistent;
    summary.beliefs = active.into_iter().map(|(_, l)| l).collect();
    summary.final_correct = d.final_correct(&summary.beliefs);
    summary.consistent = d.world.consistent_with(&summary.beliefs);
    summary.contradictory = conflicting(&admitted);
    Ok(SolverRun {
        summary,
        steps,
        engine_consistent,
    })
}

impl From<EngineError> for DemoError {
    fn from(e: EngineError) -> Self {
        DemoError::Engine(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's summary: "So far, we believe that A is true, B is false, and we are
    /// unsure about C.", from the last commitment about each atom.
    #[test]
    fn beliefs_summary_reads_like_the_papers() {
        let cfg = DemoConfig::default();
        let d = Dialogue::script(&cfg, 0);
        let w = &d.world;
        let q = &d.turns[0].question;
        let ask = |committed: &[Lit]| {
            Ask {
                dialogue: 0,
                turn: 1,
                turns: 1,
                world: w,
                question: q,
                text: "",
                committed,
            }
            .beliefs_summary()
        };
        let names = &w.atoms;
        let rest = |from: usize| -> String {
            let r: Vec<&str> = names[from..].iter().map(String::as_str).collect();
            format!("{}, and {}", r[..r.len() - 1].join(", "), r[r.len() - 1])
        };
        assert_eq!(
            ask(&[]),
            format!(
                "So far, we believe nothing; we are unsure about {}.",
                rest(0)
            )
        );
        let a = Lit {
            atom: 0,
            positive: true,
        };
        let not_b = Lit {
            atom: 1,
            positive: false,
        };
        let b = Lit {
            atom: 1,
            positive: true,
        };
        assert_eq!(
            ask(&[a, b, not_b]),
            format!(
                "So far, we believe that {} is true and {} is false; we are unsure about {}.",
                names[0],
                names[1],
                rest(2)
            )
        );
    }
}
