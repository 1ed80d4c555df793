//! The solver run of a dialogue as trace events (contract §2): `session`, `world`, the world's
//! rules and facts as `announce` with role `rule`, then per turn `turn`, and for a commitment
//! `verify` (the gate's outcome), `announce`, and when revision acted `revise` plus one
//! `retract` per belief given up (a refused commitment: `verify` and a `log`, below); a
//! closing `log` with the dialogue's figures.
//!
//! Events are built as JSON objects with the contract's field names and become [`Event`]s by
//! going through the trace reader, so what the TUI plays and what `--headless` writes are the
//! same bytes, valid by the reader's own definition, and independent of how `trace::event`
//! stores fields internally.
//!
//! A refused commitment (it contradicts the world's rules and facts alone, or the policy
//! rejects it) never enters Σ, and the trace says exactly that: the gate's `verify` with
//! outcome `contradiction`, then a `log` line naming the refused commitment and why, and no
//! `announce`. Writing it as an announce undone by a retract would claim Σ held it for a
//! step: the audit would rightly see Σ going back and forth (`oscillation`) when the agent
//! merely turned a claim down.

use std::collections::VecDeque;

use serde_json::{Map, Value, json};

use crate::logic::engine::Outcome;
use crate::logic::revise::Policy;
use crate::trace::{Event, Item, Reader, ReaderConfig};

use super::run::{Dialogue, SolverRun, rule_id, solver};
use super::schedule::Label;
use super::{DemoConfig, DemoError};

/// 2026-01-01T00:00:00Z in Unix milliseconds; demo traces start here so they are reproducible.
const EPOCH_MS: u64 = 1_767_225_600_000;

/// The session name of dialogue `index`.
pub fn session_name(cfg: &DemoConfig, index: usize) -> String {
    format!(
        "demo-{}-seed{}-d{}",
        cfg.schedule.as_str(),
        cfg.seed,
        index + 1
    )
}

/// Writes Unix milliseconds as RFC 3339 UTC with milliseconds.
fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = crate::trace::time::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Builds the lines of one session, numbering `seq` and spacing `ts`.
struct Lines {
    session: String,
    seq: u64,
    ms: u64,
    out: Vec<String>,
}

impl Lines {
    fn push(&mut self, kind: &str, step_ms: u64, fields: Value) {
        self.seq += 1;
        self.ms += step_ms;
        let mut m = Map::new();
        m.insert("kind".into(), kind.into());
        m.insert("seq".into(), self.seq.into());
        m.insert("ts".into(), rfc3339(self.ms).into());
        m.insert("session".into(), self.session.clone().into());
        if let Value::Object(f) = fields {
            m.extend(f);
        }
        self.out.push(Value::Object(m).to_string());
    }
}

fn reply_text(d: &Dialogue, t: &super::run::Turn) -> String {
    let Some(l) = t.literal else {
        return t.reply.as_str().to_string();
    };
    let name = d.world.atom_name(l.atom);
    let claim = if l.positive {
        format!("{name} is true.")
    } else {
        format!("{name} is not true.")
    };
    format!("{}: {claim}", t.reply.as_str())
}

/// The trace lines (without newlines) of the solver run `run` of dialogue `d`.
pub fn dialogue_lines(cfg: &DemoConfig, d: &Dialogue, run: &SolverRun) -> Vec<String> {
    let w = &d.world;
    let mut l = Lines {
        session: session_name(cfg, d.index),
        seq: 0,
        ms: EPOCH_MS + d.index as u64 * 600_000,
        out: Vec::new(),
    };
    let mut meta = json!({
        "seed_paper": "003 (Conversation as Belief Revision)",
        "schedule": cfg.schedule.as_str(),
        "seed": cfg.seed,
        "policy": cfg.policy.as_str(),
        "system": "solver",
        "dialogue": d.index + 1,
        "turns": d.turns.len(),
    });
    if let Value::Object(m) = &mut meta {
        match &d.agent {
            Some(cmd) => {
                m.insert("agent_command".into(), cmd.clone().into());
            }
            None => {
                m.insert("error_rate".into(), cfg.error_rate.into());
            }
        }
    }
    l.push(
        "session",
        0,
        json!({
            "agent": "doxascope-demo",
            "model": if d.agent.is_some() { "external" } else { "simulated" },
            "meta": meta,
        }),
    );
    let truth: Map<String, Value> = w
        .truth
        .iter()
        .enumerate()
        .filter_map(|(a, t)| t.map(|v| (w.atom_name(a).to_string(), Value::Bool(v))))
        .collect();
    let rules: Vec<String> = w.rules.iter().map(|r| r.formula(w)).collect();
    l.push(
        "world",
        10,
        json!({ "atoms": w.atoms, "rules": rules, "truth": truth }),
    );
    for (i, r) in w.rules.iter().enumerate() {
        l.push(
            "announce",
            10,
            json!({
                "id": rule_id(i),
                "formula": r.formula(w),
                "source": "world",
                "role": "rule",
                "text": r.text,
            }),
        );
    }
    let turn_start = l.ms;
    for (t, step) in d.turns.iter().zip(&run.steps) {
        l.ms = l.ms.max(turn_start + t.index as u64 * 2000);
        // `truth` is the truth value of the proposition the question asks about, so the
        // correct reply is YES iff it is true (the samples' convention); when the world
        // leaves it open it is the reply form "UNKNOWN", which the contract also allows.
        let truth = match t.correct {
            Label::Yes => Value::Bool(true),
            Label::No => Value::Bool(false),
            Label::Unknown => Value::from("UNKNOWN"),
        };
        let mut turn = json!({
            "question": t.text,
            "reply": t.reply.as_str(),
            "truth": truth,
        });
        if let (Some(lit), Value::Object(m)) = (t.literal, &mut turn) {
            m.insert("literal".into(), lit.formula(w).into());
        }
        l.push("turn", 0, turn);
        let (Some(lit), Some(s)) = (t.literal, step) else {
            continue;
        };
        let f = lit.formula(w);
        l.push(
            "verify",
            10,
            json!({ "formula": f, "outcome": s.theta.as_str(), "method": "sat" }),
        );
        if s.applied {
            l.push(
                "announce",
                10,
                json!({
                    "id": s.id,
                    "formula": f,
                    // Algorithm 1's commitments B_t: the audit's convention is source `llm`.
                    "source": "llm",
                    "role": "fact",
                    "text": reply_text(d, t),
                }),
            );
        } else {
            let why = if cfg.policy == Policy::Reject {
                "policy reject keeps Σ and drops the new commitment"
            } else if s.retracted.is_empty() {
                "it contradicts the world's rules and facts, which are never retracted"
            } else {
                "the policy's preferred consistent subset leaves it out"
            };
            l.push(
                "log",
                10,
                json!({
                    "level": "info",
                    "message": format!("refused {} ({f}): {why}", s.id),
                }),
            );
        }
        if s.applied
            && s.theta == Outcome::Contradiction
            && s.retracted.is_empty()
            && cfg.policy == Policy::GreedyPaper
        {
            l.push(
                "log",
                10,
                json!({
                    "level": "warn",
                    "message": format!(
                        "kept {} ({f}): no single retraction restores satisfiability, and \
                         Algorithm 1 as written neither refuses nor falls back; the theory is \
                         unsatisfiable",
                        s.id
                    ),
                }),
            );
        }
        let gone = &s.retracted;
        // Under `flag` a contradiction is kept, not repaired; the revise event records that
        // decision with nothing retracted. A refusal that gave nothing up is no revision.
        let revised = !gone.is_empty() || (s.applied && s.theta == Outcome::Contradiction);
        if !revised {
            continue;
        }
        // A refused commitment is not in Σ to be named by id; its formula is the trigger.
        let trigger = if s.applied { s.id.clone() } else { f.clone() };
        l.push(
            "revise",
            10,
            json!({ "trigger": trigger, "retracted": gone, "policy": cfg.policy.as_str() }),
        );
        for g in gone {
            let reason = if s.fallback {
                format!(
                    "{}: no single retraction restored satisfiability; recency fallback",
                    cfg.policy.as_str()
                )
            } else if matches!(cfg.policy, Policy::Greedy | Policy::GreedyPaper) {
                "GreedySAT: oldest commitment whose removal restores satisfiability".to_string()
            } else {
                format!(
                    "{}: not in the preferred consistent subset",
                    cfg.policy.as_str()
                )
            };
            l.push(
                "retract",
                10,
                json!({ "target": g, "reason": reason, "by": "revision" }),
            );
        }
    }
    let s = &run.summary;
    l.push(
        "log",
        100,
        json!({
            "level": "info",
            "message": format!(
                "dialogue {} done: raw accuracy {}/{}, final accuracy {}/{}, final theory {}, {} retraction{}, {} refused",
                d.index + 1,
                s.raw_correct,
                s.turns,
                s.final_correct,
                s.turns,
                if s.consistent { "satisfiable" } else { "unsatisfiable" },
                s.retractions,
                if s.retractions == 1 { "" } else { "s" },
                s.refused,
            ),
        }),
    );
    l.out
}

/// The lazy stream of demo events: dialogue after dialogue, each scripted, run through the
/// engine and turned into [`Event`]s only when the previous one has been consumed. This is
/// the producer the TUI plays (see [`super::player::Player`] for pacing).
///
/// An engine failure ends the stream with a `log` event of level `error` saying why. The
/// stream is `Send`; scripting and solving one dialogue takes about a millisecond in a
/// release build (see `benches/demo.rs`), so it can also run on a UI thread.
pub struct DemoEvents {
    cfg: DemoConfig,
    next: usize,
    dialogues: usize,
    /// Dialogues scripted beforehand (by an external agent); `None`: script each with the
    /// simulated agent when its turn comes.
    scripted: Option<VecDeque<Dialogue>>,
    reader: Reader,
    queue: VecDeque<Event>,
    problems: usize,
    done: bool,
}

impl DemoEvents {
    /// The events of `dialogues` dialogues of the run `cfg` describes.
    pub fn new(cfg: DemoConfig, dialogues: usize) -> Self {
        DemoEvents {
            cfg,
            next: 0,
            dialogues,
            scripted: None,
            reader: Reader::new("demo", ReaderConfig::default()),
            queue: VecDeque::new(),
            problems: 0,
            done: false,
        }
    }

    /// The events of dialogues scripted beforehand (`demo --agent`: the external agent's
    /// replies), each run through the engine when its turn comes.
    pub fn from_dialogues(cfg: DemoConfig, dialogues: Vec<Dialogue>) -> Self {
        let n = dialogues.len();
        DemoEvents {
            scripted: Some(dialogues.into()),
            ..DemoEvents::new(cfg, n)
        }
    }

    /// Lines the trace reader did not accept (0 unless the demo has a bug; tests assert it).
    pub fn problems(&self) -> usize {
        self.problems
    }

    fn feed(&mut self, lines: &[String]) {
        let mut items = Vec::new();
        for line in lines {
            self.reader.feed(line.as_bytes(), &mut items);
            self.reader.feed(b"\n", &mut items);
        }
        for it in items {
            match it {
                Item::Event(e) => self.queue.push_back(e),
                Item::Problem(_) => self.problems += 1,
            }
        }
    }
}

impl Iterator for DemoEvents {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        while self.queue.is_empty() && !self.done {
            if self.next >= self.dialogues {
                self.done = true;
                break;
            }
            let index = self.next;
            self.next += 1;
            let lines = match self.scripted.as_mut().and_then(VecDeque::pop_front) {
                Some(d) => lines_of(&self.cfg, &d),
                None => next_lines(&self.cfg, index),
            };
            match lines {
                Ok(lines) => self.feed(&lines),
                Err(e) => {
                    self.done = true;
                    let line = json!({
                        "kind": "log",
                        "session": session_name(&self.cfg, index),
                        "level": "error",
                        "message": format!("demo stopped: {e}"),
                    })
                    .to_string();
                    self.feed(&[line]);
                }
            }
        }
        self.queue.pop_front()
    }
}

fn next_lines(cfg: &DemoConfig, index: usize) -> Result<Vec<String>, DemoError> {
    lines_of(cfg, &Dialogue::script(cfg, index))
}

fn lines_of(cfg: &DemoConfig, d: &Dialogue) -> Result<Vec<String>, DemoError> {
    let run = solver(d, cfg.policy)?;
    Ok(dialogue_lines(cfg, d, &run))
}

/// Writes the solver runs of dialogues scripted beforehand (`demo --agent`) as a JSONL
/// trace; returns the number of lines written.
pub fn write_trace_of<W: std::io::Write>(
    cfg: &DemoConfig,
    dialogues: &[Dialogue],
    mut w: W,
) -> Result<usize, DemoError> {
    let mut n = 0;
    for d in dialogues {
        for line in lines_of(cfg, d)? {
            writeln!(w, "{line}").map_err(|e| DemoError::Io(e.to_string()))?;
            n += 1;
        }
    }
    w.flush().map_err(|e| DemoError::Io(e.to_string()))?;
    Ok(n)
}

/// Writes `dialogues` solver runs as a JSONL trace; returns the number of lines written.
pub fn write_trace<W: std::io::Write>(
    cfg: &DemoConfig,
    dialogues: usize,
    mut w: W,
) -> Result<usize, DemoError> {
    let mut n = 0;
    for index in 0..dialogues {
        for line in next_lines(cfg, index)? {
            writeln!(w, "{line}").map_err(|e| DemoError::Io(e.to_string()))?;
            n += 1;
        }
    }
    w.flush().map_err(|e| DemoError::Io(e.to_string()))?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(EPOCH_MS), "2026-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        // 2024-02-29T23:59:59.999Z, a leap day.
        assert_eq!(rfc3339(1_709_251_199_999), "2024-02-29T23:59:59.999Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
