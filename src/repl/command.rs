//! The command language shared by the TUI command line and `doxascope repl`.
//!
//! One table ([`COMMANDS`]) names every command with its arguments, a one-line summary and
//! the function that runs it; dispatch, `help`, Tab completion and the docs are generated
//! from it, so they cannot drift from what the parser accepts.

use std::fmt;

use crate::logic::engine::Role;
use crate::logic::revise::Policy;

use super::exec;
use super::{Repl, ReplError, Reply};

/// The function a command runs.
pub type Run = fn(&mut Repl, &Command) -> Result<Reply, ReplError>;

/// One entry of the command table.
#[derive(Clone, Copy)]
pub struct CommandSpec {
    /// The command word.
    pub name: &'static str,
    /// The argument synopsis, e.g. `φ [@C] [as ROLE] [from SOURCE]`.
    pub args: &'static str,
    /// What the command does, one line.
    pub summary: &'static str,
    /// What the arguments complete to.
    pub completes: Completes,
    /// The function that runs it.
    pub run: Run,
}

impl std::fmt::Debug for CommandSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandSpec")
            .field("name", &self.name)
            .field("args", &self.args)
            .finish_non_exhaustive()
    }
}

/// What Tab completes a command's argument to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completes {
    /// Nothing to complete.
    Nothing,
    /// Atoms of Σ (formula arguments).
    Formula,
    /// Belief ids or atoms.
    BeliefId,
    /// Policy names.
    Policy,
    /// Command names.
    Command,
}

/// Every command, in the order `help` lists them.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "announce",
        args: "φ [@C] [as ROLE] [from SOURCE]",
        summary: "show Θ(Σ, φ), then apply Σ := Σ ∪ {φ}; a contradiction is resolved by the current policy",
        completes: Completes::Formula,
        run: exec::announce,
    },
    CommandSpec {
        name: "check",
        args: "φ [because ID...] [--certificate DIR]",
        summary: "Θ(Σ, φ): contradiction, entailed or newinfo (ungrounded when the cited premises with the rules and norms do not entail φ); nothing is applied; --certificate DIR writes the CNFs of Σ ∧ φ and Σ ∧ ¬φ with a DRAT proof or a model each",
        completes: Completes::Formula,
        run: exec::check,
    },
    CommandSpec {
        name: "entails",
        args: "φ [--certificate DIR]",
        summary: "entailed (Σ ⊨ φ), contradicted (Σ ⊨ ¬φ) or unknown, with the degree N(φ) when Σ is graded; --certificate DIR writes the CNFs of Σ ∧ φ and Σ ∧ ¬φ with a DRAT proof or a model each",
        completes: Completes::Formula,
        run: exec::entails,
    },
    CommandSpec {
        name: "believes",
        args: "φ @K",
        summary: "graded belief B≥K φ: whether Σ believes φ with degree at least K, and N(φ)",
        completes: Completes::Formula,
        run: exec::believes,
    },
    CommandSpec {
        name: "why",
        args: "φ",
        summary: "minimal support sets: subsets of Σ that entail φ",
        completes: Completes::Formula,
        run: exec::why,
    },
    CommandSpec {
        name: "whynot",
        args: "φ",
        summary: "a countermodel: an assignment satisfying Σ ∧ ¬φ, on the atoms that matter",
        completes: Completes::Formula,
        run: exec::whynot,
    },
    CommandSpec {
        name: "consistent",
        args: "",
        summary: "yes, or a minimal conflicting subset of Σ",
        completes: Completes::Nothing,
        run: exec::consistent,
    },
    CommandSpec {
        name: "retract",
        args: "ID-or-φ [--cascade]",
        summary: "retract a belief in the hand-issued layer (the trace is never modified); --cascade also retracts the beliefs derived from it that nothing else in Σ supports",
        completes: Completes::BeliefId,
        run: exec::retract,
    },
    CommandSpec {
        name: "dependents",
        args: "ID",
        summary: "the beliefs of Σ that cite ID in their `because`, directly or through others",
        completes: Completes::BeliefId,
        run: exec::dependents,
    },
    CommandSpec {
        name: "undo",
        args: "",
        summary: "undo the last announce or retract of the hand-issued layer",
        completes: Completes::Nothing,
        run: exec::undo,
    },
    CommandSpec {
        name: "reset",
        args: "",
        summary: "drop the whole hand-issued layer",
        completes: Completes::Nothing,
        run: exec::reset,
    },
    CommandSpec {
        name: "policy",
        args: "greedy|greedy-paper|recency|confidence|reject|flag",
        summary: "how contradictions are resolved (no argument: show the current policy)",
        completes: Completes::Policy,
        run: exec::policy,
    },
    CommandSpec {
        name: "at",
        args: "STEP",
        summary: "time travel: fork the hand-issued layer at this step of the trace",
        completes: Completes::Nothing,
        run: exec::at,
    },
    CommandSpec {
        name: "diff",
        args: "A B",
        summary: "what Σ gained and lost between steps A and B of the trace",
        completes: Completes::Nothing,
        run: exec::diff,
    },
    CommandSpec {
        name: "history",
        args: "φ|ID",
        summary: "every step at which φ (or belief ID's formula) changed status: entailed, contradicted, unknown, Σ inconsistent; announced, retracted, re-derived; with the event that caused it and a minimal support for each entailed stretch",
        completes: Completes::Formula,
        run: exec::history,
    },
    CommandSpec {
        name: "whatif",
        args: "POLICY [from STEP]",
        summary: "re-run the session's revisions under another policy from a step (default 0): the alternative Σ beside the real one, every later verdict or answer that would have changed, and for each revision the other minimal repairs",
        completes: Completes::Policy,
        run: exec::whatif,
    },
    CommandSpec {
        name: "note",
        args: "[--belief ID] [TEXT]",
        summary: "mark the current step (or belief ID of Σ) with a note, kept in a file beside the trace and never in it; without TEXT a bookmark",
        completes: Completes::Nothing,
        run: exec::note,
    },
    CommandSpec {
        name: "notes",
        args: "",
        summary: "list the session's bookmarks and notes by step, and where they are kept",
        completes: Completes::Nothing,
        run: exec::notes,
    },
    CommandSpec {
        name: "unnote",
        args: "N",
        summary: "remove note N (its number in `notes`)",
        completes: Completes::Nothing,
        run: exec::unnote,
    },
    CommandSpec {
        name: "sigma",
        args: "",
        summary: "list Σ: the trace's beliefs at the current step plus the hand-issued layer",
        completes: Completes::Nothing,
        run: exec::sigma,
    },
    CommandSpec {
        name: "prompt",
        args: "[φ]",
        summary: "seed 001's export_prompt: the ASSERT / QUERY / ANSWER instructions, every norm, and the beliefs of Σ sharing a predicate, constant or atom with φ",
        completes: Completes::Formula,
        run: exec::prompt,
    },
    CommandSpec {
        name: "watch",
        args: "[φ|KEY]",
        summary: "a watchpoint: `continue` stops where φ changes status (or the ground belief KEY changes value), naming the event; without an argument, list the points set and where each last stopped",
        completes: Completes::Formula,
        run: super::watch::watch,
    },
    CommandSpec {
        name: "break",
        args: "CODE",
        summary: "a breakpoint: `continue` stops at the steps of the session's audit findings of this code",
        completes: Completes::Nothing,
        run: super::watch::brk,
    },
    CommandSpec {
        name: "unwatch",
        args: "[N]",
        summary: "remove watchpoint or breakpoint N (its number in the list), or all of them",
        completes: Completes::Nothing,
        run: super::watch::unwatch,
    },
    CommandSpec {
        name: "continue",
        args: "[back]",
        summary: "time travel to the next (or previous) step where a watchpoint or breakpoint triggers, naming the event",
        completes: Completes::Nothing,
        run: super::watch::cont,
    },
    CommandSpec {
        name: "help",
        args: "[CMD]",
        summary: "list the commands, or explain one",
        completes: Completes::Command,
        run: exec::help,
    },
    CommandSpec {
        name: "save",
        args: "FILE",
        summary: "write the hand-issued announcements and retractions as trace JSONL",
        completes: Completes::Nothing,
        run: exec::save,
    },
];

/// Looks a command up by name.
pub fn spec(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// A formula argument with the column (1-based, in characters) where it starts in the line,
/// so that a parse error inside it can point at the right column of the whole line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormulaArg {
    /// The formula's source text.
    pub text: String,
    /// Column of its first character in the command line.
    pub column: usize,
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `announce φ [@C] [as ROLE] [from SOURCE]`
    Announce {
        /// The formula.
        formula: FormulaArg,
        /// `@C`, the confidence.
        confidence: Option<f64>,
        /// `as ROLE`.
        role: Option<Role>,
        /// `from SOURCE`.
        source: Option<String>,
    },
    /// `check φ [because ID...] [--certificate DIR]`
    Check {
        /// The formula.
        formula: FormulaArg,
        /// Cited premises (`because`); empty when none.
        because: Vec<String>,
        /// `--certificate DIR`: where to write the certificates of the verdict.
        certificate: Option<String>,
    },
    /// `believes φ @K`
    Believes {
        /// The formula.
        formula: FormulaArg,
        /// The degree K.
        k: f64,
    },
    /// `entails φ [--certificate DIR]`
    Entails {
        /// The formula.
        formula: FormulaArg,
        /// `--certificate DIR`: where to write the certificates of the answer.
        certificate: Option<String>,
    },
    /// `why φ`
    Why(FormulaArg),
    /// `whynot φ`
    WhyNot(FormulaArg),
    /// `consistent`
    Consistent,
    /// `retract ID-or-φ [--cascade]`
    Retract {
        /// The id or formula.
        target: FormulaArg,
        /// Also retract what was derived from it and has no other support.
        cascade: bool,
    },
    /// `dependents ID`
    Dependents(FormulaArg),
    /// `undo`
    Undo,
    /// `reset`
    Reset,
    /// `policy [P]`
    Policy(Option<Policy>),
    /// `at STEP`
    At(u64),
    /// `diff A B`
    Diff(u64, u64),
    /// `history φ|ID`
    History(FormulaArg),
    /// `note [--belief ID] [TEXT]`
    Note {
        /// The belief marked, if any.
        belief: Option<String>,
        /// The text (empty: a bookmark).
        text: String,
    },
    /// `notes`
    Notes,
    /// `unnote N`
    Unnote(u64),
    /// `whatif POLICY [from STEP]`
    WhatIf {
        /// The alternative policy.
        policy: Policy,
        /// The step it decides from (0 when not given).
        from: u64,
    },
    /// `sigma`
    Sigma,
    /// `prompt [φ]`
    Prompt(Option<FormulaArg>),
    /// `help [CMD]`
    Help(Option<String>),
    /// `save FILE`
    Save(String),
    /// `watch [φ|KEY]` (without an argument: list the points set)
    Watch(Option<FormulaArg>),
    /// `break CODE`
    Break(String),
    /// `unwatch [N]`
    Unwatch(Option<u64>),
    /// `continue [back]`
    Continue {
        /// Travel backwards.
        back: bool,
    },
}

impl Command {
    /// The command word, as used in results (`"command": "entails"`).
    pub fn name(&self) -> &'static str {
        match self {
            Command::Announce { .. } => "announce",
            Command::Check { .. } => "check",
            Command::Believes { .. } => "believes",
            Command::Entails { .. } => "entails",
            Command::Why(_) => "why",
            Command::WhyNot(_) => "whynot",
            Command::Consistent => "consistent",
            Command::Retract { .. } => "retract",
            Command::Dependents(_) => "dependents",
            Command::Undo => "undo",
            Command::Reset => "reset",
            Command::Policy(_) => "policy",
            Command::At(_) => "at",
            Command::Diff(..) => "diff",
            Command::History(_) => "history",
            Command::WhatIf { .. } => "whatif",
            Command::Note { .. } => "note",
            Command::Notes => "notes",
            Command::Unnote(_) => "unnote",
            Command::Sigma => "sigma",
            Command::Prompt(_) => "prompt",
            Command::Help(_) => "help",
            Command::Save(_) => "save",
            Command::Watch(_) => "watch",
            Command::Break(_) => "break",
            Command::Unwatch(_) => "unwatch",
            Command::Continue { .. } => "continue",
        }
    }
}

/// A command line that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandError {
    /// The command word, when one was recognized (else empty).
    pub command: String,
    /// What is wrong and what was expected.
    pub message: String,
    /// 1-based column in the line, in characters.
    pub column: usize,
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for CommandError {}

/// Column (1-based, characters) of byte offset `at` in `line`.
fn column_of(line: &str, at: usize) -> usize {
    line[..at].chars().count() + 1
}

/// The option that writes a verdict's certificates (`check`, `entails`).
const CERTIFICATE: &str = "--certificate";

/// Splits `φ --certificate DIR` into φ and DIR (the rest of the line, spaces included);
/// `f` unchanged without the option.
fn split_certificate(
    name: &str,
    f: FormulaArg,
    line: &str,
    arg_at: usize,
) -> Result<(FormulaArg, Option<String>), CommandError> {
    let err = |message: String, at: usize| CommandError {
        command: name.to_string(),
        message,
        column: column_of(line, at),
    };
    let at = if f.text.starts_with(CERTIFICATE) {
        0
    } else {
        match f.text.rfind(&format!(" {CERTIFICATE}")) {
            Some(i) => i + 1,
            None => return Ok((f, None)),
        }
    };
    let after = &f.text[at + CERTIFICATE.len()..];
    if !after.is_empty() && !after.starts_with(char::is_whitespace) {
        // `--certificates` or the like: not the option, left to the formula's parser.
        return Ok((f, None));
    }
    let dir = after.trim();
    if dir.is_empty() {
        return Err(err(
            format!("expected a directory after `{CERTIFICATE}`"),
            arg_at + f.text.len(),
        ));
    }
    let phi = f.text[..at].trim_end();
    if phi.is_empty() {
        return Err(err(format!("expected a formula after `{name}`"), arg_at));
    }
    Ok((
        FormulaArg {
            text: phi.to_string(),
            column: f.column,
        },
        Some(dir.to_string()),
    ))
}

/// Parses one command line. Leading `:` (the TUI's command prefix) is accepted and ignored.
pub fn parse(line: &str) -> Result<Command, CommandError> {
    let start = line.len() - line.trim_start().len();
    let mut start = start;
    if line[start..].starts_with(':') {
        start += 1;
    }
    let body = &line[start..];
    let word_len = body.find(|c: char| c.is_whitespace()).unwrap_or(body.len());
    let word = &body[..word_len];
    let rest_at = start + word_len;
    let rest = &line[rest_at..];
    let arg_at = rest_at + (rest.len() - rest.trim_start().len());
    let arg = line[arg_at..].trim_end();
    let err = |command: &str, message: String, at: usize| CommandError {
        command: command.to_string(),
        message,
        column: column_of(line, at),
    };
    let Some(found) = spec(word) else {
        if word.is_empty() {
            return Err(err("", "expected a command; try `help`".into(), start));
        }
        let hint = COMMANDS
            .iter()
            .filter(|c| c.name.starts_with(word) || edit_distance(c.name, word) <= 2)
            .min_by_key(|c| edit_distance(c.name, word))
            .map(|c| format!(" (did you mean `{}`?)", c.name))
            .unwrap_or_default();
        return Err(err(
            "",
            format!("unknown command `{word}`{hint}; try `help`"),
            start,
        ));
    };
    let name = found.name;
    let formula_arg = || -> Result<FormulaArg, CommandError> {
        if arg.is_empty() {
            return Err(err(
                name,
                format!("expected a formula after `{name}`"),
                arg_at,
            ));
        }
        Ok(FormulaArg {
            text: arg.to_string(),
            column: column_of(line, arg_at),
        })
    };
    let no_args = |c: Command| -> Result<Command, CommandError> {
        if arg.is_empty() {
            Ok(c)
        } else {
            Err(err(
                name,
                format!("`{name}` takes no arguments, found `{arg}`"),
                arg_at,
            ))
        }
    };
    let step_at = |text: &str, at: usize| -> Result<u64, CommandError> {
        text.parse::<u64>().map_err(|_| {
            err(
                name,
                format!("expected a step number (0 or more), found `{text}`"),
                at,
            )
        })
    };
    match name {
        "announce" => parse_announce(line, arg_at, arg),
        "check" => {
            // `--certificate DIR` ends the line, `because` the formula: the ids after it are
            // the cited premises.
            let (f, certificate) = split_certificate(name, formula_arg()?, line, arg_at)?;
            match f.text.rfind(" because ") {
                Some(at) => {
                    let ids: Vec<String> = f.text[at + 9..]
                        .split(|c: char| c.is_whitespace() || c == ',')
                        .filter(|w| !w.is_empty())
                        .map(str::to_string)
                        .collect();
                    if ids.is_empty() {
                        return Err(err(
                            name,
                            "expected belief ids after `because`".into(),
                            arg_at + at + 1,
                        ));
                    }
                    Ok(Command::Check {
                        formula: FormulaArg {
                            text: f.text[..at].trim_end().to_string(),
                            column: f.column,
                        },
                        because: ids,
                        certificate,
                    })
                }
                None => Ok(Command::Check {
                    formula: f,
                    because: Vec::new(),
                    certificate,
                }),
            }
        }
        "believes" => {
            let f = formula_arg()?;
            let trimmed = f.text.trim_end();
            let split = trimmed.rfind(char::is_whitespace);
            let (phi, k_text, k_at) = match split {
                Some(i) if trimmed[i + 1..].starts_with('@') => {
                    (trimmed[..i].trim_end(), &trimmed[i + 2..], arg_at + i + 1)
                }
                _ => {
                    return Err(err(
                        name,
                        "expected `believes φ @K` with a degree K in (0, 1]".into(),
                        arg_at + trimmed.len(),
                    ));
                }
            };
            let k: f64 = k_text
                .parse()
                .ok()
                .filter(|k: &f64| *k > 0.0 && *k <= 1.0)
                .ok_or_else(|| {
                    err(
                        name,
                        format!("expected a degree in (0, 1] after `@`, found `{k_text}`"),
                        k_at,
                    )
                })?;
            Ok(Command::Believes {
                formula: FormulaArg {
                    text: phi.to_string(),
                    column: f.column,
                },
                k,
            })
        }
        "entails" => {
            let (formula, certificate) = split_certificate(name, formula_arg()?, line, arg_at)?;
            Ok(Command::Entails {
                formula,
                certificate,
            })
        }
        "why" => Ok(Command::Why(formula_arg()?)),
        "whynot" => Ok(Command::WhyNot(formula_arg()?)),
        "retract" => {
            let f = formula_arg()?;
            let trimmed = f.text.trim_end();
            match trimmed.strip_suffix("--cascade") {
                Some(rest) if rest.ends_with(char::is_whitespace) => Ok(Command::Retract {
                    target: FormulaArg {
                        text: rest.trim_end().to_string(),
                        column: f.column,
                    },
                    cascade: true,
                }),
                _ => Ok(Command::Retract {
                    target: f,
                    cascade: false,
                }),
            }
        }
        "dependents" => Ok(Command::Dependents(formula_arg()?)),
        "history" => Ok(Command::History(formula_arg()?)),
        "note" => {
            let (belief, text) = match arg.strip_prefix("--belief") {
                Some(rest) if rest.starts_with(char::is_whitespace) => {
                    let rest = rest.trim_start();
                    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                    (
                        Some(rest[..end].to_string()),
                        rest[end..].trim().to_string(),
                    )
                }
                Some("") => {
                    return Err(err(
                        name,
                        "expected a belief id after `--belief`".into(),
                        arg_at + arg.len(),
                    ));
                }
                _ => (None, arg.to_string()),
            };
            Ok(Command::Note { belief, text })
        }
        "notes" => no_args(Command::Notes),
        "unnote" => {
            if arg.is_empty() {
                return Err(err(name, "expected a note number".into(), arg_at));
            }
            arg.parse::<u64>().map(Command::Unnote).map_err(|_| {
                err(
                    name,
                    format!("expected a note number (see `notes`), found `{arg}`"),
                    arg_at,
                )
            })
        }
        "whatif" => {
            let mut words = arg.split_whitespace();
            let usage = || {
                err(
                    name,
                    "expected `whatif POLICY [from STEP]` with POLICY one of greedy, recency, \
                     confidence, reject, flag"
                        .into(),
                    arg_at,
                )
            };
            let policy = words.next().and_then(Policy::parse).ok_or_else(usage)?;
            let from = match (words.next(), words.next(), words.next()) {
                (None, _, _) => 0,
                (Some("from"), Some(s), None) => {
                    let at = arg_at + arg.rfind(s).unwrap_or(0);
                    step_at(s, at)?
                }
                _ => return Err(usage()),
            };
            Ok(Command::WhatIf { policy, from })
        }
        "consistent" => no_args(Command::Consistent),
        "undo" => no_args(Command::Undo),
        "reset" => no_args(Command::Reset),
        "sigma" => no_args(Command::Sigma),
        "prompt" => {
            if arg.is_empty() {
                Ok(Command::Prompt(None))
            } else {
                Ok(Command::Prompt(Some(formula_arg()?)))
            }
        }
        "policy" => {
            if arg.is_empty() {
                return Ok(Command::Policy(None));
            }
            Policy::parse(arg).map(|p| Command::Policy(Some(p))).ok_or_else(|| {
                err(
                    name,
                    format!(
                        "expected one of greedy, greedy-paper, recency, confidence, reject, flag; \
                         found `{arg}`"
                    ),
                    arg_at,
                )
            })
        }
        "at" => {
            if arg.is_empty() {
                return Err(err(name, "expected a step number".into(), arg_at));
            }
            Ok(Command::At(step_at(arg, arg_at)?))
        }
        "diff" => {
            let mut parts = arg.split_whitespace();
            let (Some(a), Some(b), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(err(
                    name,
                    "expected two step numbers: diff A B".into(),
                    arg_at,
                ));
            };
            let b_at = arg_at + arg.rfind(b).unwrap_or(0);
            Ok(Command::Diff(step_at(a, arg_at)?, step_at(b, b_at)?))
        }
        "help" => {
            if arg.is_empty() {
                Ok(Command::Help(None))
            } else if spec(arg).is_some() {
                Ok(Command::Help(Some(arg.to_string())))
            } else {
                Err(err(name, format!("no command named `{arg}`"), arg_at))
            }
        }
        "save" => {
            if arg.is_empty() {
                Err(err(name, "expected a file name".into(), arg_at))
            } else {
                Ok(Command::Save(arg.to_string()))
            }
        }
        "watch" | "break" | "unwatch" | "continue" => {
            super::watch::parse_args(name, arg, formula_arg, |m| err(name, m, arg_at))
        }
        _ => unreachable!("every table entry is matched above"),
    }
}

/// Levenshtein distance, for "did you mean" on mistyped command words.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != *cb)).min(row[j] + 1).min(up + 1);
            diag = up;
        }
    }
    row[b.len()]
}

/// Parses `φ [@C] [as ROLE] [from SOURCE]`. The options are peeled off the end, in any order,
/// so that the formula itself may contain spaces.
fn parse_announce(line: &str, arg_at: usize, arg: &str) -> Result<Command, CommandError> {
    let err = |message: String, at: usize| CommandError {
        command: "announce".into(),
        message,
        column: column_of(line, at),
    };
    let mut formula = arg;
    let mut confidence = None;
    let mut role = None;
    let mut source = None;
    loop {
        let trimmed = formula.trim_end();
        let Some(split) = trimmed.rfind(char::is_whitespace) else {
            break;
        };
        let last = &trimmed[split + 1..];
        let before = trimmed[..split].trim_end();
        let last_at = arg_at + split + 1;
        if let Some(c) = last.strip_prefix('@') {
            if confidence.is_some() {
                return Err(err("`@C` given twice".into(), last_at));
            }
            let value: f64 = c.parse().map_err(|_| {
                err(
                    format!("expected a confidence after `@`, found `{c}`"),
                    last_at,
                )
            })?;
            if !(value > 0.0 && value <= 1.0) {
                return Err(err(
                    format!("confidence must be in (0, 1], found {c}"),
                    last_at,
                ));
            }
            confidence = Some(value);
            formula = before;
            continue;
        }
        let Some(kw_split) = before.rfind(char::is_whitespace) else {
            break;
        };
        let kw = &before[kw_split + 1..];
        match kw {
            "as" if role.is_none() => {
                role = Some(match last {
                    "fact" => Role::Fact,
                    "rule" => Role::Rule,
                    "norm" => Role::Norm,
                    "assumption" => Role::Assumption,
                    _ => {
                        return Err(err(
                            format!(
                                "expected a role (fact, rule, norm, assumption) after `as`, found `{last}`"
                            ),
                            last_at,
                        ));
                    }
                });
            }
            "from" if source.is_none() => source = Some(last.to_string()),
            _ => break,
        }
        formula = before[..kw_split].trim_end();
    }
    if formula.trim().is_empty() {
        return Err(err("expected a formula after `announce`".into(), arg_at));
    }
    Ok(Command::Announce {
        formula: FormulaArg {
            text: formula.to_string(),
            column: column_of(line, arg_at),
        },
        confidence,
        role,
        source,
    })
}

/// Completes the word under the cursor (the end of `line`): command names first, then the
/// candidates the command's argument takes (`atoms_and_ids` supplies Σ's atoms and belief ids).
/// Returns the full candidate words that start with the partial word.
pub fn complete(line: &str, atoms_and_ids: &[String]) -> Vec<String> {
    let body = line.trim_start().trim_start_matches(':');
    let Some(space) = body.find(char::is_whitespace) else {
        return COMMANDS
            .iter()
            .filter(|c| c.name.starts_with(body))
            .map(|c| c.name.to_string())
            .collect();
    };
    let word = &body[..space];
    let partial = body
        .rsplit(|c: char| c.is_whitespace() || "()&|!~,".contains(c))
        .next()
        .unwrap_or("");
    let Some(found) = spec(word) else {
        return Vec::new();
    };
    let pool: Vec<String> = match found.completes {
        Completes::Nothing => Vec::new(),
        Completes::Policy => Policy::ALL.iter().map(|p| p.as_str().to_string()).collect(),
        Completes::Command => COMMANDS.iter().map(|c| c.name.to_string()).collect(),
        Completes::Formula | Completes::BeliefId => atoms_and_ids.to_vec(),
    };
    let mut out: Vec<String> = pool
        .into_iter()
        .filter(|c| c.starts_with(partial))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announce_options_in_any_order() {
        let c = parse("announce p & q @0.8 as assumption from user").unwrap();
        assert_eq!(
            c,
            Command::Announce {
                formula: FormulaArg {
                    text: "p & q".into(),
                    column: 10
                },
                confidence: Some(0.8),
                role: Some(Role::Assumption),
                source: Some("user".into()),
            }
        );
        let c = parse("announce ∀x. Parent(x, bob) -> Older(x, bob) from kb as rule").unwrap();
        let Command::Announce {
            formula,
            role,
            source,
            confidence,
        } = c
        else {
            panic!("not an announce")
        };
        assert_eq!(formula.text, "∀x. Parent(x, bob) -> Older(x, bob)");
        assert_eq!(role, Some(Role::Rule));
        assert_eq!(source.as_deref(), Some("kb"));
        assert_eq!(confidence, None);
    }

    #[test]
    fn errors_point_at_the_column() {
        let e = parse("announce p @1.5").unwrap_err();
        assert_eq!(e.column, 12);
        assert!(e.message.contains("(0, 1]"));
        let e = parse("annouce p").unwrap_err();
        assert!(e.message.contains("did you mean `announce`"), "{e}");
        assert_eq!(e.column, 1);
        let e = parse("  at x").unwrap_err();
        assert_eq!(e.column, 6);
        let e = parse("why").unwrap_err();
        assert_eq!(e.command, "why");
        assert!(e.message.contains("expected a formula"));
        let e = parse("consistent now").unwrap_err();
        assert!(e.message.contains("takes no arguments"));
        let e = parse("announce p as boss").unwrap_err();
        assert!(e.message.contains("expected a role"));
        assert!(parse("").is_err());
    }

    #[test]
    fn every_table_command_parses() {
        for c in COMMANDS {
            let line = match c.name {
                "at" => "at 3".to_string(),
                "diff" => "diff 1 2".to_string(),
                "save" => "save out.jsonl".to_string(),
                "policy" => "policy flag".to_string(),
                "help" => "help why".to_string(),
                "believes" => "believes p @0.5".to_string(),
                "whatif" => "whatif recency from 2".to_string(),
                "unnote" => "unnote 3".to_string(),
                "unwatch" => "unwatch 1".to_string(),
                "continue" => "continue back".to_string(),
                "break" => "break dag-cycle".to_string(),
                n if c.args.is_empty() => n.to_string(),
                n => format!("{n} p"),
            };
            let cmd = parse(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(cmd.name(), c.name);
        }
        assert_eq!(parse(":diff 2 10").unwrap(), Command::Diff(2, 10));
    }

    /// `--certificate DIR` ends the line of `check` and `entails` (after `because`), the
    /// directory may hold spaces, and a missing formula or directory is an error at its
    /// column.
    #[test]
    fn certificate_option() {
        let f = |text: &str, column: usize| FormulaArg {
            text: text.into(),
            column,
        };
        assert_eq!(
            parse("check p & q --certificate out/certs").unwrap(),
            Command::Check {
                formula: f("p & q", 7),
                because: Vec::new(),
                certificate: Some("out/certs".into()),
            }
        );
        assert_eq!(
            parse("check p because a b --certificate my dir").unwrap(),
            Command::Check {
                formula: f("p", 7),
                because: vec!["a".into(), "b".into()],
                certificate: Some("my dir".into()),
            }
        );
        assert_eq!(
            parse("entails p --certificate d").unwrap(),
            Command::Entails {
                formula: f("p", 9),
                certificate: Some("d".into()),
            }
        );
        assert_eq!(
            parse("entails p").unwrap(),
            Command::Entails {
                formula: f("p", 9),
                certificate: None,
            }
        );
        let e = parse("entails --certificate d").unwrap_err();
        assert!(e.message.contains("expected a formula"), "{e}");
        let e = parse("check p --certificate").unwrap_err();
        assert!(e.message.contains("expected a directory"), "{e}");
        assert_eq!(e.column, 22);
    }

    #[test]
    fn every_row_carries_its_own_function() {
        let dir = std::env::temp_dir().join(format!("dx-rows-{}.jsonl", std::process::id()));
        for c in COMMANDS {
            let line = match c.name {
                "at" => "at 0".to_string(),
                "diff" => "diff 0 0".to_string(),
                "save" => format!("save {}", dir.display()),
                "policy" => "policy flag".to_string(),
                "help" => "help why".to_string(),
                "believes" => "believes p @0.5".to_string(),
                "whatif" => "whatif flag".to_string(),
                "unnote" => "unnote 1".to_string(),
                n if c.args.is_empty() => n.to_string(),
                n => format!("{n} p"),
            };
            let mut r = super::super::Repl::new(Box::new(super::super::EmptyTrace));
            r.run_line("announce p").unwrap();
            if let Err(e) = r.run_line(&line) {
                assert!(!e.message.contains("table mismatch"), "{line}: {e:?}");
            }
        }
        let _ = std::fs::remove_file(dir);
    }

    #[test]
    fn completion() {
        assert_eq!(complete("wh", &[]), vec!["why", "whynot", "whatif"]);
        assert_eq!(complete("whe", &[]), Vec::<String>::new());
        let pool = vec![
            "rain".to_string(),
            "road_wet".to_string(),
            "sun".to_string(),
        ];
        assert_eq!(complete("why r", &pool), vec!["rain", "road_wet"]);
        assert_eq!(
            complete("entails sun & (r", &pool),
            vec!["rain", "road_wet"]
        );
        assert_eq!(complete("policy re", &pool), vec!["recency", "reject"]);
        assert!(complete("consistent ", &pool).is_empty());
    }
}
