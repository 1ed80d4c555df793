//! Seed 003's Algorithm 1 exactly as written, implemented here from the paper's pseudo-code on
//! a truth table of the world's rules, against `doxascope demo --eval` with the paper's
//! algorithm (`greedy-paper`) on 200 dialogues: every figure of the table must agree.

use std::process::Command;

use doxascope::demo::run::{Dialogue, solver};
use doxascope::demo::world::{Lit, World};
use doxascope::demo::{DemoConfig, Schedule};
use doxascope::logic::revise::Policy;

/// R ∪ lits satisfiable, by enumerating every assignment of the world's atoms (written from
/// the rules' body and head, not through the world's own model checker).
fn sat(w: &World, lits: &[Lit]) -> bool {
    let n = w.atoms.len();
    (0u32..(1 << n)).any(|m| {
        let holds = |l: &Lit| ((m >> l.atom) & 1 == 1) == l.positive;
        let rules = w
            .rules
            .iter()
            .all(|r| !r.body.iter().all(|&b| (m >> b) & 1 == 1) || holds(&r.head));
        rules && lits.iter().all(holds)
    })
}

/// What R ∪ lits says about `atom` (None when models disagree or there is none).
fn value(w: &World, lits: &[Lit], atom: usize) -> Option<bool> {
    let n = w.atoms.len();
    let mut seen = (false, false);
    for m in 0u32..(1 << n) {
        let holds = |l: &Lit| ((m >> l.atom) & 1 == 1) == l.positive;
        let ok = w
            .rules
            .iter()
            .all(|r| !r.body.iter().all(|&b| (m >> b) & 1 == 1) || holds(&r.head))
            && lits.iter().all(holds);
        if ok {
            if (m >> atom) & 1 == 1 {
                seen.1 = true;
            } else {
                seen.0 = true;
            }
        }
    }
    match seen {
        (false, true) => Some(true),
        (true, false) => Some(false),
        _ => None,
    }
}

/// Totals of one system: (final correct, inconsistent, contradictory, retractions, turns).
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Totals {
    final_correct: usize,
    inconsistent: usize,
    contradictory: usize,
    retractions: usize,
    turns: usize,
    dialogues: usize,
}

/// Algorithm 1 on one dialogue, line by line; returns its final 𝓑_T and its totals.
fn algorithm_1(d: &Dialogue) -> (Vec<Lit>, Totals) {
    let w = &d.world;
    let mut b: Vec<Lit> = Vec::new(); // 𝓑, in commitment order
    let mut admitted: Vec<Lit> = Vec::new();
    let mut t = Totals {
        turns: d.turns.len(),
        dialogues: 1,
        ..Totals::default()
    };
    for turn in &d.turns {
        let Some(l) = turn.literal else { continue };
        admitted.push(l);
        // 1: B̃ ← B_{t-1} ∪ {(ℓ_t, t)}
        let mut bt: Vec<Lit> = b.clone();
        bt.push(l);
        // 2-4: SAT → return (B̃, ∅)
        if !sat(w, &bt) {
            // 6: candidates: prior commitments, oldest first.
            for j in 0..b.len() {
                // 8: tentatively drop (ℓ_j, τ_j)
                let mut dropped = bt.clone();
                dropped.remove(j);
                // 9-12: keep the drop if it restores SAT
                if sat(w, &dropped) {
                    bt = dropped;
                    t.retractions += 1;
                }
                // 13-15: stop once R ∪ B̃ is SAT
                if sat(w, &bt) {
                    break;
                }
            }
        }
        // 17: return B̃ (satisfiable or not)
        b = bt;
    }
    let consistent = sat(w, &b);
    t.inconsistent = usize::from(!consistent);
    t.contradictory = usize::from(admitted.iter().any(|x| {
        admitted
            .iter()
            .any(|y| x.atom == y.atom && x.positive != y.positive)
    }));
    // Final labels: the atom's last commitment in 𝓑_T, else what R ∪ 𝓑_T entails.
    for turn in &d.turns {
        let atom = turn.question.atom;
        let v = b
            .iter()
            .rev()
            .find(|l| l.atom == atom)
            .map(|l| l.positive)
            .or_else(|| if consistent { value(w, &b, atom) } else { None });
        if turn.question.label_for(v) == turn.correct {
            t.final_correct += 1;
        }
    }
    (b, t)
}

fn cfg(schedule: Schedule) -> DemoConfig {
    DemoConfig {
        schedule,
        seed: 3,
        turns: 10,
        error_rate: 0.2,
        policy: Policy::GreedyPaper,
    }
}

/// The figures of the `Solver Alg. 1` row of `demo --eval` for a setting.
fn row(out: &str, setting: &str) -> Vec<String> {
    let line = out
        .lines()
        .find(|l| l.starts_with(setting) && l.contains("Solver Alg. 1"))
        .unwrap_or_else(|| panic!("no Alg. 1 row for {setting}:\n{out}"));
    line.split_whitespace()
        .skip(4)
        .map(str::to_string)
        .collect()
}

#[test]
fn demo_eval_with_the_papers_algorithm_agrees_with_algorithm_1_on_200_dialogues() {
    // The table as a user gets it: both variants, 100 dialogues of each schedule.
    let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args([
            "demo",
            "--eval",
            "--dialogues",
            "100",
            "--seed",
            "3",
            "--error-rate",
            "0.2",
        ])
        .output()
        .expect("run demo --eval");
    assert!(out.status.success());
    let out = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        out.contains("Solver greedy") && out.contains("Solver Alg. 1"),
        "{out}"
    );
    assert!(out.contains("Algorithm 1 exactly as written"), "{out}");
    let mut revisions = 0;
    let mut kept_inconsistent = 0;
    for schedule in [Schedule::Random, Schedule::Stress] {
        let c = cfg(schedule);
        let mut oracle = Totals::default();
        for i in 0..100 {
            let d = Dialogue::script(&c, i);
            let (b, t) = algorithm_1(&d);
            // Dialogue by dialogue, the engine's policy ends in the same 𝓑_T.
            let run = solver(&d, Policy::GreedyPaper).expect("engine");
            assert_eq!(run.summary.beliefs, b, "{schedule:?} dialogue {i}");
            assert_eq!(
                run.summary.retractions, t.retractions,
                "{schedule:?} dialogue {i}"
            );
            assert_eq!(run.engine_consistent, t.inconsistent == 0, "dialogue {i}");
            oracle.final_correct += t.final_correct;
            oracle.inconsistent += t.inconsistent;
            oracle.contradictory += t.contradictory;
            oracle.retractions += t.retractions;
            oracle.turns += t.turns;
            oracle.dialogues += 1;
        }
        revisions += oracle.retractions;
        kept_inconsistent += oracle.inconsistent;
        let setting = match schedule {
            Schedule::Random => "Random",
            Schedule::Stress => "Stress",
        };
        let want = [
            format!("{:.3}", oracle.final_correct as f64 / oracle.turns as f64),
            format!("{}/100", oracle.inconsistent),
            format!("{}/100", oracle.contradictory),
            oracle.retractions.to_string(),
            format!("{:.3}", oracle.retractions as f64 / 100.0),
        ];
        assert_eq!(row(&out, setting)[..5], want[..], "{setting}:\n{out}");
        // And the refusals column: Algorithm 1 never refuses.
        assert_eq!(row(&out, setting)[6], "0");
    }
    // The comparison exercised both of the algorithm's outcomes.
    assert!(
        revisions > 10 && kept_inconsistent > 0,
        "{revisions} {kept_inconsistent}"
    );
}
