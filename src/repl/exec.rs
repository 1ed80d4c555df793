//! One function per REPL command; each row of [`super::COMMANDS`] carries its function.
//! Adding a command is one row, one function here and one [`Reply`] arm.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::logic::engine::{BeliefSpec, Outcome};
use crate::logic::formula::Formula;
use crate::logic::print::normalized;
use crate::logic::revise::Revision;
use crate::sanitize::sanitize;

use super::layer::{self, HandEntry, HandOp};
use super::{
    Command, FormulaArg, Member, Repl, ReplError, Reply, atom_text, engine_error, help_text,
    member_of, parse_arg,
};

/// `why` lists at most this many minimal supports...
const MAX_SUPPORTS: usize = 16;
/// ...found within this time; past either cap the answer says it is not complete.
const SUPPORTS_BUDGET: Duration = Duration::from_secs(2);

/// A command reached a function that is not its own (a table error, caught by a test).
fn mismatch(cmd: &Command) -> ReplError {
    ReplError::new(cmd.name(), "internal error: command table mismatch")
}

/// The formula argument of a command that has one.
fn formula_arg(cmd: &Command) -> Result<&FormulaArg, ReplError> {
    match cmd {
        Command::Check(a)
        | Command::Entails(a)
        | Command::Why(a)
        | Command::WhyNot(a)
        | Command::Retract(a) => Ok(a),
        Command::Announce { formula, .. } => Ok(formula),
        _ => Err(mismatch(cmd)),
    }
}

pub(crate) fn announce(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Announce {
        formula,
        confidence,
        role,
        source,
    } = cmd
    else {
        return Err(mismatch(cmd));
    };
    let name = cmd.name();
    let f = parse_arg(name, formula)?;
    let id = normalized(&f);
    let spec = BeliefSpec::new(id.clone(), f)
        .role(role.unwrap_or_default())
        .confidence(confidence.unwrap_or(1.0))
        .step(r.step);
    let source = source.clone().unwrap_or_else(|| "user".to_string());
    let policy = r.policy;
    let state = r.state_mut()?;
    // Policies repair the conflict an announcement creates; on a Σ that is inconsistent
    // already none of them is defined (seed 003 assumes B_{t-1} ∪ R satisfiable), and the
    // new formula must not be blamed for a conflict it is not part of.
    let prior = state.consistent().map_err(|e| engine_error(name, e))?;
    let rev = if prior.consistent {
        state
            .announce(spec.clone(), policy)
            .map_err(|e| engine_error(name, e))?
    } else {
        let outcome = state
            .check(&spec.formula, None)
            .map_err(|e| engine_error(name, e))?
            .theta;
        Revision {
            policy,
            outcome,
            applied: policy != crate::logic::revise::Policy::Reject,
            added: None,
            retracted: Vec::new(),
            conflict: Vec::new(),
            fallback: false,
            norm_violation: Vec::new(),
            sigma_inconsistent: true,
        }
    };
    r.layer.push(HandEntry {
        op: HandOp::Announce { spec, source },
        policy,
        step: r.step,
        applied: rev.applied,
        retracted: rev.retracted.clone(),
        outcome: Some(rev.outcome),
    });
    r.invalidate();
    Ok(Reply::Announce {
        id,
        outcome: rev.outcome,
        applied: rev.applied,
        retracted: rev.retracted,
        conflict: rev.conflict,
        policy,
        fallback: rev.fallback,
        norm_violation: rev.norm_violation,
        prior_conflict: if prior.consistent {
            Vec::new()
        } else {
            prior.conflict
        },
    })
}

pub(crate) fn check(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let name = cmd.name();
    let f = parse_arg(name, formula_arg(cmd)?)?;
    let state = r.state_mut()?;
    let outcome = state
        .check(&f, None)
        .map_err(|e| engine_error(name, e))?
        .theta;
    let mut conflict = Vec::new();
    let mut prior = Vec::new();
    if outcome == Outcome::Contradiction {
        let c = state.consistent().map_err(|e| engine_error(name, e))?;
        if !c.consistent {
            prior = c.conflict;
        } else {
            // A minimal subset of Σ entailing ¬φ is a minimal subset that φ contradicts.
            let not_f = Formula::Not(Box::new(f));
            conflict = state
                .why(&not_f)
                .map_err(|e| engine_error(name, e))?
                .support;
        }
    }
    Ok(Reply::Check {
        outcome,
        conflict: r.members_of(&conflict),
        prior_conflict: r.members_of(&prior),
    })
}

pub(crate) fn entails(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let name = cmd.name();
    let f = parse_arg(name, formula_arg(cmd)?)?;
    let e = r
        .state_mut()?
        .entails(&f)
        .map_err(|e| engine_error(name, e))?;
    Ok(Reply::Entails {
        result: e.result,
        degree: e.degree,
        consistent: e.sigma_consistent,
    })
}

pub(crate) fn why(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let name = cmd.name();
    let f = parse_arg(name, formula_arg(cmd)?)?;
    let s = r
        .state_mut()?
        .supports(&f, MAX_SUPPORTS, SUPPORTS_BUDGET)
        .map_err(|e| engine_error(name, e))?;
    let supports = s.supports.iter().map(|ids| r.members_of(ids)).collect();
    Ok(Reply::Why {
        supports,
        complete: s.complete,
    })
}

pub(crate) fn whynot(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let name = cmd.name();
    let f = parse_arg(name, formula_arg(cmd)?)?;
    let w = r
        .state_mut()?
        .whynot(&f)
        .map_err(|e| engine_error(name, e))?;
    Ok(Reply::WhyNot {
        countermodel: w.countermodel.map(|m| {
            m.into_iter()
                .map(|(atom, v)| (atom_text(&atom), v))
                .collect()
        }),
    })
}

pub(crate) fn consistent(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let c = r
        .state_mut()?
        .consistent()
        .map_err(|e| engine_error(cmd.name(), e))?;
    Ok(Reply::Consistent {
        consistent: c.consistent,
        conflict: r.members_of(&c.conflict),
    })
}

pub(crate) fn retract(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let name = cmd.name();
    let arg = formula_arg(cmd)?;
    r.ensure_state()?;
    // An id of Σ if one is named, else the normalized formula.
    let id = if r.members.contains_key(&arg.text) {
        arg.text.clone()
    } else {
        let f = parse_arg(name, arg).map_err(|mut e| {
            e.message = format!(
                "`{}` is neither a belief id nor a formula: {}",
                sanitize(&arg.text),
                e.message
            );
            e
        })?;
        normalized(&f)
    };
    if !r.members.contains_key(&id) {
        return Err(ReplError::new(
            name,
            format!("no active belief with id `{}`", sanitize(&id)),
        ));
    }
    r.layer.push(HandEntry {
        op: HandOp::Retract { id: id.clone() },
        policy: r.policy,
        step: r.step,
        applied: true,
        retracted: Vec::new(),
        outcome: None,
    });
    r.invalidate();
    Ok(Reply::Retract { id })
}

pub(crate) fn undo(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Some(entry) = r.layer.pop() else {
        return Err(ReplError::new(cmd.name(), "nothing to undo"));
    };
    r.invalidate();
    Ok(Reply::Undo {
        undone: entry.describe(),
        hand: r.layer.len(),
    })
}

pub(crate) fn reset(r: &mut Repl, _cmd: &Command) -> Result<Reply, ReplError> {
    let dropped = r.layer.len();
    r.layer.clear();
    r.invalidate();
    Ok(Reply::Reset { dropped })
}

pub(crate) fn policy(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Policy(p) = cmd else {
        return Err(mismatch(cmd));
    };
    if let Some(p) = p {
        r.set_policy(*p);
    }
    Ok(Reply::Policy { policy: r.policy })
}

pub(crate) fn at(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::At(step) = cmd else {
        return Err(mismatch(cmd));
    };
    let last = r.trace.last_step();
    if *step > last {
        return Err(ReplError::new(
            cmd.name(),
            format!("step {step} is past the end of the trace (last step {last})"),
        ));
    }
    r.step = *step;
    r.invalidate();
    r.ensure_state()?;
    Ok(Reply::At {
        step: *step,
        last,
        beliefs: r.held.len(),
        hand: r.layer.len(),
    })
}

pub(crate) fn diff(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Diff(a, b) = cmd else {
        return Err(mismatch(cmd));
    };
    let last = r.trace.last_step();
    if *a > last || *b > last {
        return Err(ReplError::new(
            cmd.name(),
            format!("steps must be at most {last}, the last step of the trace"),
        ));
    }
    // Σ at each step as the REPL holds it: the trace's, with the layer's effects.
    let at_a: Vec<Member> = r
        .sigma_held(*a)
        .iter()
        .map(|h| member_of(&h.belief, h.hand))
        .collect();
    let at_b: Vec<Member> = r
        .sigma_held(*b)
        .iter()
        .map(|h| member_of(&h.belief, h.hand))
        .collect();
    let key = |m: &Member| (m.id.clone(), m.step, m.formula.clone());
    let ka: BTreeSet<_> = at_a.iter().map(key).collect();
    let kb: BTreeSet<_> = at_b.iter().map(key).collect();
    let added = at_b
        .iter()
        .filter(|m| !ka.contains(&key(m)))
        .cloned()
        .collect();
    let removed = at_a
        .iter()
        .filter(|m| !kb.contains(&key(m)))
        .cloned()
        .collect();
    Ok(Reply::Diff {
        a: *a,
        b: *b,
        added,
        removed,
    })
}

pub(crate) fn sigma(r: &mut Repl, _cmd: &Command) -> Result<Reply, ReplError> {
    r.ensure_state()?;
    Ok(Reply::Sigma {
        beliefs: r.current_members(),
    })
}

pub(crate) fn help(_r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Help(which) = cmd else {
        return Err(mismatch(cmd));
    };
    Ok(Reply::Help {
        text: help_text(which.as_deref()),
    })
}

pub(crate) fn save(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Save(path) = cmd else {
        return Err(mismatch(cmd));
    };
    let base = r.trace.sigma_at(r.step);
    let (text, events) = layer::to_jsonl(r.trace.session(), r.step, &base, &r.layer);
    std::fs::write(path, text)
        .map_err(|e| ReplError::new(cmd.name(), format!("cannot write {}: {e}", sanitize(path))))?;
    Ok(Reply::Save {
        path: path.clone(),
        events,
    })
}
