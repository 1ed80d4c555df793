//! `doxascope demo --eval`: baseline vs solver over many dialogues, in the shape of seed 003's
//! Table 1 (final accuracy, inconsistent final states x/N, retractions in total and per
//! dialogue), with raw accuracy and the solver's refusals and fallbacks alongside.

use std::fmt::Write as _;

use crate::logic::revise::Policy;

use super::run::{Dialogue, RunSummary, baseline, solver};
use super::schedule::Schedule;
use super::{DemoConfig, DemoError};

/// Totals of one system over a set of dialogues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SystemStats {
    /// Dialogues run.
    pub dialogues: usize,
    /// Turns over all dialogues.
    pub turns: usize,
    /// Replies equal to the correct label.
    pub raw_correct: usize,
    /// Questions the final belief states answer correctly.
    pub final_correct: usize,
    /// Dialogues whose final theory is unsatisfiable.
    pub inconsistent: usize,
    /// Prior commitments removed by revision.
    pub retractions: usize,
    /// Commitments not admitted.
    pub refused: usize,
    /// Greedy revisions that fell back to recency.
    pub fallbacks: usize,
}

impl SystemStats {
    fn add(&mut self, r: &RunSummary) {
        self.dialogues += 1;
        self.turns += r.turns;
        self.raw_correct += r.raw_correct;
        self.final_correct += r.final_correct;
        self.inconsistent += usize::from(!r.consistent);
        self.retractions += r.retractions;
        self.refused += r.refused;
        self.fallbacks += r.fallbacks;
    }

    /// Final accuracy (0 when there were no turns).
    pub fn final_accuracy(&self) -> f64 {
        ratio(self.final_correct, self.turns)
    }

    /// Raw accuracy (0 when there were no turns).
    pub fn raw_accuracy(&self) -> f64 {
        ratio(self.raw_correct, self.turns)
    }

    /// Retractions per dialogue (0 when there were no dialogues).
    pub fn retractions_per_dialogue(&self) -> f64 {
        ratio(self.retractions, self.dialogues)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// Baseline and solver on the same dialogues of one schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluation {
    /// The schedule.
    pub schedule: Schedule,
    /// The unchecked baseline.
    pub baseline: SystemStats,
    /// The solver-augmented system.
    pub solver: SystemStats,
}

/// Runs `dialogues` dialogues of `cfg` through both systems.
pub fn evaluate(cfg: &DemoConfig, dialogues: usize) -> Result<Evaluation, DemoError> {
    let mut ev = Evaluation {
        schedule: cfg.schedule,
        baseline: SystemStats::default(),
        solver: SystemStats::default(),
    };
    for i in 0..dialogues {
        let d = Dialogue::script(cfg, i);
        ev.baseline.add(&baseline(&d));
        ev.solver.add(&solver(&d, cfg.policy)?.summary);
    }
    Ok(ev)
}

/// The table: one row per schedule and system, then a legend.
pub fn table(cfg: &DemoConfig, evals: &[Evaluation]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Simulated agent, error rate {:.2}, seed {}, {} turns per dialogue, policy {}",
        cfg.error_rate,
        cfg.seed,
        cfg.turns,
        cfg.policy.as_str()
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<8} {:<9} {:>10} {:>9} {:>9} {:>10} {:>8} {:>8}",
        "Setting",
        "System",
        "Final Acc.",
        "Incons.",
        "Retracts",
        "Per dial.",
        "Raw Acc.",
        "Refused"
    );
    for e in evals {
        for (name, st) in [("Baseline", &e.baseline), ("Solver", &e.solver)] {
            let setting = match e.schedule {
                Schedule::Random => "Random",
                Schedule::Stress => "Stress",
            };
            let _ = writeln!(
                s,
                "{:<8} {:<9} {:>10.3} {:>9} {:>9} {:>10.3} {:>8.3} {:>8}",
                setting,
                name,
                st.final_accuracy(),
                format!("{}/{}", st.inconsistent, st.dialogues),
                st.retractions,
                st.retractions_per_dialogue(),
                st.raw_accuracy(),
                st.refused,
            );
        }
    }
    let fallbacks: usize = evals.iter().map(|e| e.solver.fallbacks).sum();
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "Final Acc.: questions the final belief state answers correctly. Incons.: dialogues whose\n\
         final theory (rules + commitments) is unsatisfiable. Retracts: prior commitments removed\n\
         by revision. Refused: commitments contradicting the world's rules alone, never admitted."
    );
    if cfg.policy == Policy::Greedy {
        let _ = writeln!(
            s,
            "Greedy revisions that needed the recency fallback: {fallbacks}."
        );
    }
    s
}
