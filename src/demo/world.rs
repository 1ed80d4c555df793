//! Synthetic propositional worlds (seed 003, "Synthetic Propositional Worlds").
//!
//! A world is a handful of atoms `A, B, C, …` and a set 𝓡 of ground facts and Horn-like rules
//! (`A -> B`, `C & D -> E`, `E -> !F`). Generation starts from a hidden assignment and only
//! ever writes rules and facts that are true in it, so every world is consistent by
//! construction. The *ground truth* of an atom is then computed by classical model checking
//! over all 2ⁿ assignments: `true` when every model of 𝓡 makes it true, `false` when none
//! does, and undetermined otherwise. Undetermined atoms matter: the right answer about them is
//! UNKNOWN, and an agent that commits to them anyway (hallucinates) makes commitments that are
//! consistent with 𝓡 alone but can clash with each other later, which is exactly what
//! GreedySAT revision repairs. Atoms are capped at [`MAX_ATOMS`] so that model checking by
//! enumeration stays exact and cheap.

use super::rng::Rng;

/// The most atoms a world may have (model checking enumerates 2ⁿ assignments).
pub const MAX_ATOMS: usize = 16;

/// A literal: an atom (by index into [`World::atoms`]) or its negation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lit {
    /// Index of the atom.
    pub atom: usize,
    /// `true` for the atom, `false` for its negation.
    pub positive: bool,
}

impl Lit {
    /// Whether the assignment `mask` (bit i = atom i) makes the literal true.
    pub fn holds(self, mask: u32) -> bool {
        ((mask >> self.atom) & 1 == 1) == self.positive
    }

    /// The literal in the formula syntax of contract §3 (`D`, `!F`).
    pub fn formula(self, world: &World) -> String {
        let name = world.atom_name(self.atom);
        if self.positive {
            name.to_string()
        } else {
            format!("!{name}")
        }
    }
}

/// A fact (empty body) or a Horn-like rule `b₁ ∧ … ∧ bₖ → head` whose body atoms are positive
/// and whose head may be negative (a constraint such as `E -> !F`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Indices of the body atoms (empty for a fact).
    pub body: Vec<usize>,
    /// The conclusion.
    pub head: Lit,
    /// A natural-language paraphrase shown to the agent and written to the trace.
    pub text: String,
}

impl Rule {
    /// Whether the rule is a plain fact.
    pub fn is_fact(&self) -> bool {
        self.body.is_empty()
    }

    /// Whether the assignment `mask` satisfies the rule.
    pub fn holds(&self, mask: u32) -> bool {
        !self.body.iter().all(|&b| (mask >> b) & 1 == 1) || self.head.holds(mask)
    }

    /// The rule in contract §3 syntax (`C & D -> E`, `D`).
    pub fn formula(&self, world: &World) -> String {
        let head = self.head.formula(world);
        if self.body.is_empty() {
            return head;
        }
        let body: Vec<&str> = self.body.iter().map(|&b| world.atom_name(b)).collect();
        format!("{} -> {head}", body.join(" & "))
    }
}

/// A synthetic world: atoms, rules and facts 𝓡, and the ground truth model checking gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct World {
    /// Atom names (`A`, `B`, …), at most [`MAX_ATOMS`].
    pub atoms: Vec<String>,
    /// 𝓡: facts and rules, in the order they are described.
    pub rules: Vec<Rule>,
    /// The assignment generation started from; every rule holds in it.
    pub hidden: Vec<bool>,
    /// Per atom: `Some(v)` when 𝓡 entails the atom (`true`) or its negation (`false`),
    /// `None` when 𝓡 leaves it open. Computed by model checking, not taken from `hidden`.
    pub truth: Vec<Option<bool>>,
}

const NAMES: [&str; MAX_ATOMS] = [
    "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P",
];

impl World {
    /// Generates a world with `n_atoms` atoms (clamped to 3..=[`MAX_ATOMS`]) from `rng`.
    ///
    /// Worlds where 𝓡 decides fewer than two atoms, or decides all of them, are redrawn (from
    /// the same stream, so still deterministic): the first kind gives nothing to reason about,
    /// the second leaves no room for hallucinated commitments and hence for revision.
    pub(crate) fn generate(rng: &mut Rng, n_atoms: usize) -> World {
        let n = n_atoms.clamp(3, MAX_ATOMS);
        let mut last = None;
        for _ in 0..64 {
            let w = Self::draw(rng, n);
            let decided = w.truth.iter().filter(|t| t.is_some()).count();
            if decided >= 2 && decided < n {
                return w;
            }
            last = Some(w);
        }
        // Practically unreachable; any drawn world is still consistent and correctly labelled.
        last.unwrap_or_else(|| Self::draw(rng, n))
    }

    fn draw(rng: &mut Rng, n: usize) -> World {
        let atoms: Vec<String> = NAMES[..n].iter().map(|s| s.to_string()).collect();
        let hidden: Vec<bool> = (0..n).map(|_| rng.chance(0.6)).collect();
        let mut rules = Vec::new();
        // Facts come from the first atoms so that rules over later atoms can build on them.
        let n_facts = 1 + rng.below(2);
        let mut fact_atoms = Vec::new();
        for _ in 0..n_facts {
            let a = rng.below(n.div_ceil(3).max(1));
            if !fact_atoms.contains(&a) {
                fact_atoms.push(a);
            }
        }
        // At least one true fact: Horn bodies are positive, so a world whose facts are all
        // negative derives nothing.
        if !fact_atoms.iter().any(|&a| hidden[a]) {
            if let Some(a) = (0..n).find(|&a| hidden[a]) {
                fact_atoms.push(a);
            }
        }
        for &a in &fact_atoms {
            rules.push(Rule {
                body: Vec::new(),
                head: Lit {
                    atom: a,
                    positive: hidden[a],
                },
                text: String::new(),
            });
        }
        for head in 1..n {
            if fact_atoms.contains(&head) || !rng.chance(0.8) {
                continue;
            }
            let k = if head >= 2 && rng.chance(0.35) { 2 } else { 1 };
            let mut body: Vec<usize> = Vec::new();
            for _ in 0..k {
                // Mostly atoms that are true in the hidden world, so the rule fires; the rest
                // are rules that hold vacuously and only bite on a wrong commitment.
                let trues: Vec<usize> = (0..head).filter(|&b| hidden[b]).collect();
                let b = if !trues.is_empty() && rng.chance(0.75) {
                    trues[rng.below(trues.len())]
                } else {
                    rng.below(head)
                };
                if !body.contains(&b) {
                    body.push(b);
                }
            }
            body.sort_unstable();
            rules.push(Rule {
                body,
                head: Lit {
                    atom: head,
                    positive: hidden[head],
                },
                text: String::new(),
            });
        }
        let mut w = World {
            atoms,
            rules,
            hidden,
            truth: Vec::new(),
        };
        for i in 0..w.rules.len() {
            let variant = rng.below(2);
            let text = paraphrase(&w, &w.rules[i], variant);
            w.rules[i].text = text;
        }
        w.truth = (0..n).map(|a| w.entailed_value(&[], a)).collect();
        w
    }

    /// The name of atom `i` (`"?"` for an index out of range, which generated data never has).
    pub fn atom_name(&self, i: usize) -> &str {
        self.atoms.get(i).map(String::as_str).unwrap_or("?")
    }

    /// Whether the assignment `mask` satisfies every rule and fact of 𝓡 and every literal.
    pub fn satisfies(&self, mask: u32, lits: &[Lit]) -> bool {
        self.rules.iter().all(|r| r.holds(mask)) && lits.iter().all(|l| l.holds(mask))
    }

    /// Every model of 𝓡 ∪ `lits`, as bit masks (bit i = atom i).
    pub fn models(&self, lits: &[Lit]) -> impl Iterator<Item = u32> + '_ {
        let lits = lits.to_vec();
        let n = self.atoms.len().min(MAX_ATOMS);
        (0..(1u32 << n)).filter(move |&m| self.satisfies(m, &lits))
    }

    /// Whether 𝓡 ∪ `lits` is satisfiable (the induced theory 𝒯 of seed 003, eq. 1).
    pub fn consistent_with(&self, lits: &[Lit]) -> bool {
        self.models(lits).next().is_some()
    }

    /// What 𝓡 ∪ `lits` says about `atom`: `Some(v)` if every model gives it value `v`, `None`
    /// if models disagree or there is no model at all.
    pub fn entailed_value(&self, lits: &[Lit], atom: usize) -> Option<bool> {
        let mut seen = [false, false];
        for m in self.models(lits) {
            seen[((m >> atom) & 1) as usize] = true;
            if seen[0] && seen[1] {
                return None;
            }
        }
        match seen {
            [false, true] => Some(true),
            [true, false] => Some(false),
            _ => None,
        }
    }

    /// Whether `atom` is decided by 𝓡 without being stated as a fact: a fact "that follows
    /// from rules", where seed 003 observes most LLM slips.
    pub fn is_derived(&self, atom: usize) -> bool {
        self.truth.get(atom).is_some_and(Option::is_some)
            && !self
                .rules
                .iter()
                .any(|r| r.is_fact() && r.head.atom == atom)
    }

    /// Indices of the rules concluding something about `atom`.
    pub fn rules_about(&self, atom: usize) -> impl Iterator<Item = usize> + '_ {
        self.rules
            .iter()
            .enumerate()
            .filter(move |(_, r)| !r.is_fact() && r.head.atom == atom)
            .map(|(i, _)| i)
    }
}

/// One of two phrasings per rule shape, picked by `variant`.
fn paraphrase(w: &World, r: &Rule, variant: usize) -> String {
    let h = w.atom_name(r.head.atom);
    let pos = r.head.positive;
    match (r.body.as_slice(), pos, variant) {
        ([], true, _) => format!("{h} is known to be true."),
        ([], false, _) => format!("{h} is known to be false."),
        ([b], true, 0) => format!("If {} holds, then {h} holds.", w.atom_name(*b)),
        ([b], true, _) => format!("Whenever {} is true, {h} is true as well.", w.atom_name(*b)),
        ([b], false, 0) => format!("{} and {h} are never both true.", w.atom_name(*b)),
        ([b], false, _) => format!("If {} holds, then {h} does not hold.", w.atom_name(*b)),
        (body, true, 0) => format!("{} together guarantee {h}.", and_list(w, body)),
        (body, true, _) => format!(
            "If {} {} hold, then {h} holds.",
            and_list(w, body),
            both(body)
        ),
        (body, false, 0) => format!("{} together rule out {h}.", and_list(w, body)),
        (body, false, _) => {
            format!(
                "If {} {} hold, then {h} is false.",
                and_list(w, body),
                both(body)
            )
        }
    }
}

fn both(body: &[usize]) -> &'static str {
    if body.len() == 2 { "both" } else { "all" }
}

fn and_list(w: &World, body: &[usize]) -> String {
    let names: Vec<&str> = body.iter().map(|&b| w.atom_name(b)).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_holds_in_the_hidden_assignment() {
        for seed in 0..200 {
            let w = World::generate(&mut Rng::new(seed), 8);
            let mask = w
                .hidden
                .iter()
                .enumerate()
                .fold(0u32, |m, (i, &v)| m | (u32::from(v) << i));
            assert!(w.satisfies(mask, &[]), "seed {seed}: {w:?}");
            for (a, t) in w.truth.iter().enumerate() {
                if let Some(v) = t {
                    assert_eq!(
                        *v, w.hidden[a],
                        "seed {seed}: a decided atom equals the hidden value"
                    );
                }
            }
        }
    }

    #[test]
    fn rule_formulas_and_texts() {
        let w = World {
            atoms: vec!["A".into(), "B".into(), "C".into()],
            rules: vec![
                Rule {
                    body: vec![0, 1],
                    head: Lit {
                        atom: 2,
                        positive: false,
                    },
                    text: String::new(),
                },
                Rule {
                    body: vec![],
                    head: Lit {
                        atom: 0,
                        positive: true,
                    },
                    text: String::new(),
                },
            ],
            hidden: vec![true, false, false],
            truth: vec![],
        };
        assert_eq!(w.rules[0].formula(&w), "A & B -> !C");
        assert_eq!(w.rules[1].formula(&w), "A");
        assert_eq!(
            paraphrase(&w, &w.rules[0], 0),
            "A and B together rule out C."
        );
        // A holds, B open, C open: A -> true; with B committed, C is forced false.
        assert_eq!(w.entailed_value(&[], 0), Some(true));
        assert_eq!(w.entailed_value(&[], 2), None);
        let b = Lit {
            atom: 1,
            positive: true,
        };
        assert_eq!(w.entailed_value(&[b], 2), Some(false));
        let c = Lit {
            atom: 2,
            positive: true,
        };
        assert!(!w.consistent_with(&[b, c]));
        assert!(w.consistent_with(&[c]));
    }
}
