//! Question schedules (seed 003, "random" and "stress").
//!
//! Every question asks about one atom, possibly negated ("Is it the case that B is not
//! true?"), possibly with an uncertainty cue, and under the stress schedule possibly prefaced
//! by the paraphrase of a rule that bears on it.
//!
//! * **random**: atoms uniformly at random, a quarter of the questions negated, a few cues.
//! * **stress**: adversarial blocks over one target atom at a time, as the paper describes
//!   ("asking about P, then about ¬P, then about a rule that entails P"): `P?`, `¬P?`,
//!   `<rule concluding P>. P?`, then `¬b?` for an atom `b` in that rule's body. Targets are
//!   atoms that rules conclude something about (mostly facts that follow from rules, where
//!   slips concentrate) and undetermined atoms (where commitments are hallucinations).

use super::rng::Rng;
use super::world::{Lit, World};

/// Which schedule (`--schedule random|stress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// Questions without adversarial structure.
    Random,
    /// Adversarial blocks stressing negation and entailment.
    Stress,
}

impl Schedule {
    /// The contract name.
    pub fn as_str(self) -> &'static str {
        match self {
            Schedule::Random => "random",
            Schedule::Stress => "stress",
        }
    }

    /// Parses the contract name.
    pub fn parse(s: &str) -> Option<Schedule> {
        match s {
            "random" => Some(Schedule::Random),
            "stress" => Some(Schedule::Stress),
            _ => None,
        }
    }
}

/// A YES / NO / UNKNOWN label: a reply, or the correct answer to a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Label {
    /// YES
    Yes,
    /// NO
    No,
    /// UNKNOWN
    Unknown,
}

impl Label {
    /// `YES`, `NO` or `UNKNOWN`, as in the trace's `turn.reply`.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Yes => "YES",
            Label::No => "NO",
            Label::Unknown => "UNKNOWN",
        }
    }

    /// YES ↔ NO; UNKNOWN stays.
    pub fn flip(self) -> Label {
        match self {
            Label::Yes => Label::No,
            Label::No => Label::Yes,
            Label::Unknown => Label::Unknown,
        }
    }

    /// The label of a truth value (`None` = unknown).
    pub fn of(value: Option<bool>) -> Label {
        match value {
            Some(true) => Label::Yes,
            Some(false) => Label::No,
            None => Label::Unknown,
        }
    }
}

/// An uncertainty cue appended to a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cue {
    /// "(You may be unsure.)"
    MaybeUnsure,
    /// "(Answer UNKNOWN if unsure.)"
    UnknownIfUnsure,
}

/// One yes/no question about one atom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The atom asked about.
    pub atom: usize,
    /// "Is it the case that X is not true?" rather than "Is X true?".
    pub negated: bool,
    /// An optional uncertainty cue.
    pub cue: Option<Cue>,
    /// A rule (index into [`World::rules`]) whose paraphrase precedes the question.
    pub preface: Option<usize>,
}

impl Question {
    /// The question as the agent sees it.
    pub fn text(&self, world: &World) -> String {
        let name = world.atom_name(self.atom);
        let mut s = String::new();
        if let Some(r) = self.preface.and_then(|i| world.rules.get(i)) {
            s.push_str(&r.text);
            s.push(' ');
        }
        if self.negated {
            s.push_str(&format!("Is it the case that {name} is not true?"));
        } else {
            s.push_str(&format!("Is {name} true?"));
        }
        match self.cue {
            Some(Cue::MaybeUnsure) => s.push_str(" (You may be unsure.)"),
            Some(Cue::UnknownIfUnsure) => s.push_str(" (Answer UNKNOWN if unsure.)"),
            None => {}
        }
        s
    }

    /// The label a question gets when the atom has `value` (`None` = undetermined).
    pub fn label_for(&self, value: Option<bool>) -> Label {
        let l = Label::of(value);
        if self.negated { l.flip() } else { l }
    }

    /// The correct answer in `world` (ground truth by model checking).
    pub fn correct(&self, world: &World) -> Label {
        self.label_for(world.truth.get(self.atom).copied().flatten())
    }

    /// The literal a reply commits to; `None` for UNKNOWN (no commitment).
    pub fn literal(&self, reply: Label) -> Option<Lit> {
        let positive = match reply {
            Label::Yes => !self.negated,
            Label::No => self.negated,
            Label::Unknown => return None,
        };
        Some(Lit {
            atom: self.atom,
            positive,
        })
    }
}

/// The `turns` questions of one dialogue.
pub(crate) fn questions(
    world: &World,
    schedule: Schedule,
    turns: usize,
    rng: &mut Rng,
) -> Vec<Question> {
    match schedule {
        Schedule::Random => (0..turns).map(|_| random_question(world, rng)).collect(),
        Schedule::Stress => stress(world, turns, rng),
    }
}

fn random_cue(rng: &mut Rng, p: f64) -> Option<Cue> {
    if !rng.chance(p) {
        None
    } else if rng.chance(0.5) {
        Some(Cue::MaybeUnsure)
    } else {
        Some(Cue::UnknownIfUnsure)
    }
}

fn random_question(world: &World, rng: &mut Rng) -> Question {
    Question {
        atom: rng.below(world.atoms.len()),
        negated: rng.chance(0.25),
        cue: random_cue(rng, 0.1),
        preface: None,
    }
}

fn stress(world: &World, turns: usize, rng: &mut Rng) -> Vec<Question> {
    let targets: Vec<usize> = (0..world.atoms.len())
        .filter(|&a| world.rules_about(a).next().is_some() || world.truth[a].is_none())
        .collect();
    let mut out = Vec::with_capacity(turns);
    while out.len() < turns {
        if targets.is_empty() {
            out.push(random_question(world, rng));
            continue;
        }
        let p = targets[rng.below(targets.len())];
        let rules: Vec<usize> = world.rules_about(p).collect();
        let rule = (!rules.is_empty()).then(|| rules[rng.below(rules.len())]);
        let mut block = vec![
            Question {
                atom: p,
                negated: false,
                cue: None,
                preface: None,
            },
            Question {
                atom: p,
                negated: true,
                cue: random_cue(rng, 0.15),
                preface: None,
            },
        ];
        if let Some(r) = rule {
            block.push(Question {
                atom: p,
                negated: rng.chance(0.3),
                cue: None,
                preface: Some(r),
            });
            let body = &world.rules[r].body;
            if !body.is_empty() {
                block.push(Question {
                    atom: body[rng.below(body.len())],
                    negated: true,
                    cue: random_cue(rng, 0.15),
                    preface: None,
                });
            }
        }
        let room = turns - out.len();
        out.extend(block.into_iter().take(room));
    }
    out
}
