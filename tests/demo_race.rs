//! `doxascope demo --race A,B`: two policies on the same dialogue. A race must not change
//! either policy's outcome, so every count it shows is checked against the trace a run of
//! that policy alone emits (an independent path: the emitter reads the solver's steps itself).

use std::process::Command;

use doxascope::demo::race::Race;
use doxascope::demo::run::Dialogue;
use doxascope::demo::{DemoConfig, DemoEvents, Schedule};
use doxascope::logic::revise::Policy;
use serde_json::Value;

/// What one dialogue of a run of one policy alone shows in its trace.
#[derive(Debug, Default, PartialEq)]
struct Alone {
    /// Per turn: the question, then the ids the turn retracted.
    turns: Vec<(String, Vec<String>)>,
    revisions: usize,
    refusals: usize,
}

/// Reads a single-policy trace (JSON lines, as `demo --headless` writes them), per dialogue.
fn alone_from_json(lines: &[Value]) -> Vec<Alone> {
    let mut out: Vec<Alone> = Vec::new();
    for v in lines {
        let kind = v["kind"].as_str().unwrap_or("");
        let cur = out.last_mut();
        match (kind, cur) {
            ("session", _) => out.push(Alone::default()),
            ("turn", Some(a)) => a
                .turns
                .push((v["question"].as_str().unwrap().to_string(), Vec::new())),
            ("revise", Some(a)) => a.revisions += 1,
            ("retract", Some(a)) => a
                .turns
                .last_mut()
                .expect("a retraction belongs to a turn")
                .1
                .push(v["target"].as_str().unwrap().to_string()),
            ("log", Some(a))
                if v["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("refused ")) =>
            {
                a.refusals += 1
            }
            _ => {}
        }
    }
    out
}

fn alone(cfg: DemoConfig, policy: Policy, n: usize) -> Vec<Alone> {
    let lines: Vec<Value> = DemoEvents::new(DemoConfig { policy, ..cfg }, n)
        .map(|e| serde_json::to_value(&e).unwrap())
        .collect();
    alone_from_json(&lines)
}

const PAIRS: [[Policy; 2]; 3] = [
    [Policy::Greedy, Policy::Recency],
    [Policy::Greedy, Policy::Reject],
    [Policy::GreedyPaper, Policy::Flag],
];

#[test]
fn both_sides_see_the_same_dialogue_and_match_each_policy_run_alone() {
    let mut differed = false;
    for seed in [1, 2, 7] {
        for schedule in [Schedule::Stress, Schedule::Random] {
            let cfg = DemoConfig {
                seed,
                schedule,
                error_rate: 0.3,
                ..DemoConfig::default()
            };
            for pair in PAIRS {
                let race = Race::new(cfg, 3, pair).expect("race");
                assert_eq!(race.dialogues.len(), 3);
                let solo = [alone(cfg, pair[0], 3), alone(cfg, pair[1], 3)];
                for (i, d) in race.dialogues.iter().enumerate() {
                    // The same dialogue as the demo scripts for this configuration.
                    assert_eq!(d.dialogue, Dialogue::script(&cfg, i));
                    for (side, s) in solo.iter().enumerate() {
                        let s = &s[i];
                        let questions: Vec<&str> =
                            s.turns.iter().map(|(q, _)| q.as_str()).collect();
                        let ours: Vec<&str> = d.rows.iter().map(|r| r.question.as_str()).collect();
                        assert_eq!(ours, questions, "seed {seed} {pair:?} side {side}");
                        for (r, (_, gone)) in d.rows.iter().zip(&s.turns) {
                            let dropped: Vec<&str> = r.sides[side]
                                .dropped
                                .iter()
                                .map(|(id, _)| id.as_str())
                                .collect();
                            assert_eq!(&dropped, gone, "turn {} of {pair:?}", r.turn);
                        }
                        let last = &d.rows.last().expect("turns").sides[side];
                        assert_eq!(last.revisions, s.revisions, "seed {seed} {pair:?} {side}");
                        assert_eq!(last.refusals, s.refusals, "seed {seed} {pair:?} {side}");
                        let sum = &d.runs[side].summary;
                        assert_eq!(last.dropped_total, sum.retractions);
                        assert_eq!(last.fallbacks, sum.fallbacks);
                        assert_eq!(last.sigma.len(), sum.beliefs.len());
                        assert_eq!(
                            last.sigma_size,
                            d.dialogue.world.rules.len() + sum.beliefs.len()
                        );
                    }
                    differed |=
                        d.rows.last().map(|r| &r.sides[0]) != d.rows.last().map(|r| &r.sides[1]);
                }
            }
        }
    }
    assert!(differed, "some race tells its two policies apart");
}

fn doxascope(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// `--headless` prints both sides per turn and a final comparison line whose counts are those
/// of each policy's own `demo --headless` trace.
#[test]
fn headless_race_prints_both_sides_and_the_counts_of_each_policy_alone() {
    let text = doxascope(&[
        "demo",
        "--race",
        "greedy,reject",
        "--headless",
        "--out",
        "-",
        "--dialogues",
        "2",
        "--seed",
        "3",
    ]);
    let mut summary = Vec::new();
    for p in ["greedy", "reject"] {
        let trace = doxascope(&[
            "demo",
            "--policy",
            p,
            "--headless",
            "--out",
            "-",
            "--dialogues",
            "2",
            "--seed",
            "3",
            "--error-rate",
            "0.3",
        ]);
        let lines: Vec<Value> = trace
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        let solo = alone_from_json(&lines);
        assert_eq!(solo.len(), 2);
        // The same dialogue: every question of the single run, in order, in the race text.
        let race_questions: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("turn "))
            .map(|l| l[2..].trim_start())
            .collect();
        let questions: Vec<&str> = solo
            .iter()
            .flat_map(|a| a.turns.iter().map(|(q, _)| q.as_str()))
            .collect();
        assert_eq!(race_questions, questions);
        // One line per side per turn.
        let prefix = format!("  [{p:<6}] Σ");
        assert_eq!(
            text.lines().filter(|l| l.starts_with(&prefix)).count(),
            questions.len()
        );
        let revisions: usize = solo.iter().map(|a| a.revisions).sum();
        let dropped: usize = solo
            .iter()
            .flat_map(|a| &a.turns)
            .map(|(_, g)| g.len())
            .sum();
        let refusals: usize = solo.iter().map(|a| a.refusals).sum();
        summary.push(format!(
            "{p}: revisions {revisions}, dropped beliefs {dropped}, refusals {refusals},"
        ));
    }
    let last = text.lines().last().expect("a final line");
    assert!(last.starts_with("race finished: "), "{last}");
    for s in summary {
        assert!(last.contains(&s), "{s:?} in {last:?}");
    }
}

#[test]
fn race_takes_exactly_two_known_policies() {
    for bad in ["greedy", "greedy,nope", "greedy,recency,flag"] {
        let out = Command::new(env!("CARGO_BIN_EXE_doxascope"))
            .args(["demo", "--race", bad, "--headless", "--out", "-"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(out.stdout.is_empty());
    }
}
