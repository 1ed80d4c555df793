//! One function per REPL command; each row of [`super::COMMANDS`] carries its function.
//! Adding a command is one row, one function here and one [`Reply`] arm.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::logic::engine::{BeliefSpec, Outcome};
use crate::logic::formula::Formula;
use crate::logic::print::normalized;
use crate::sanitize::sanitize;

use crate::logic::certificate::Premise;
use crate::model::certificates::{self, Item, Verdict};

use super::layer::{self, HandEntry, HandOp};
use super::reply::Certified;
use super::{
    Command, FormulaArg, Repl, ReplError, Reply, atom_text, engine_error, help_text, member_of,
    parse_arg,
};

/// `why` lists at most this many minimal supports...
const MAX_SUPPORTS: usize = 16;
/// ...found within this time; past either cap the answer says it is not complete.
const SUPPORTS_BUDGET: Duration = Duration::from_secs(2);
/// `whynot` shows the least countermodel (independent of what was asked before) for at
/// most this many atoms that matter; past it, the solver's own model.
const CANONICAL_ATOMS: usize = 256;

/// A command reached a function that is not its own (a table error, caught by a test).
fn mismatch(cmd: &Command) -> ReplError {
    ReplError::new(cmd.name(), "internal error: command table mismatch")
}

/// The formula argument of a command that has one.
fn formula_arg(cmd: &Command) -> Result<&FormulaArg, ReplError> {
    match cmd {
        Command::Why(a) | Command::WhyNot(a) | Command::Dependents(a) | Command::History(a) => {
            Ok(a)
        }
        Command::Check { formula, .. }
        | Command::Entails { formula, .. }
        | Command::Believes { formula, .. }
        | Command::Announce { formula, .. }
        | Command::Retract {
            target: formula, ..
        } => Ok(formula),
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
    // The engine decides everything, an already inconsistent Σ included (no policy runs
    // then, and φ is not blamed: `Revision::prior_conflict`).
    let rev = r
        .state_mut()?
        .announce(spec.clone(), policy)
        .map_err(|e| engine_error(name, e))?;
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
        prior_conflict: if rev.sigma_was_inconsistent {
            rev.prior_conflict
        } else {
            Vec::new()
        },
        inconsistent_after: rev.sigma_inconsistent,
        role_change: rev.role_change,
    })
}

pub(crate) fn check(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Check {
        because,
        certificate,
        ..
    } = cmd
    else {
        return Err(mismatch(cmd));
    };
    let name = cmd.name();
    let f = parse_arg(name, formula_arg(cmd)?)?;
    let cited = (!because.is_empty()).then_some(because.as_slice());
    let gate = r
        .state_mut()?
        .check(&f, cited)
        .map_err(|e| engine_error(name, e))?;
    let outcome = gate.theta;
    let certificate = certificate
        .as_ref()
        .map(|dir| certify(r, cmd, dir, &f, Verdict::Gate, gate.outcome.as_str()));
    let mut conflict = Vec::new();
    let mut prior = Vec::new();
    if outcome == Outcome::Contradiction {
        let state = r.state_mut()?;
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
        outcome: gate.outcome,
        theta: outcome,
        missing: gate.missing_citations,
        conflict: r.members_of(&conflict),
        prior_conflict: r.members_of(&prior),
        certificate,
    })
}

pub(crate) fn entails(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Entails { certificate, .. } = cmd else {
        return Err(mismatch(cmd));
    };
    let name = cmd.name();
    let f = parse_arg(name, formula_arg(cmd)?)?;
    let e = r
        .state_mut()?
        .entails(&f)
        .map_err(|e| engine_error(name, e))?;
    let certificate = certificate
        .as_ref()
        .map(|dir| certify(r, cmd, dir, &f, Verdict::Entails, e.result.as_str()));
    Ok(Reply::Entails {
        result: e.result,
        degree: e.degree,
        consistent: e.sigma_consistent,
        certificate,
    })
}

/// Writes the certificates of a verdict the REPL just gave on Σ at its step (the layer
/// included) into `dir`: both questions, built from scratch, and their index entries. A
/// failure to write is part of the reply, not an error of the command: the verdict stands.
fn certify(
    r: &Repl,
    cmd: &Command,
    dir: &str,
    f: &Formula,
    kind: Verdict,
    verdict: &str,
) -> Certified {
    let sigma: Vec<Premise> = r
        .held
        .iter()
        .map(|h| Premise {
            id: &h.belief.id,
            formula: &h.belief.formula,
        })
        .collect();
    // With cited premises (`check φ because ID...`), the third question: those of Σ with
    // every rule and norm.
    let premises: Option<Vec<Premise>> = match cmd {
        Command::Check { because, .. } if !because.is_empty() => Some(
            r.held
                .iter()
                .filter(|h| h.belief.role.is_hard() || because.contains(&h.belief.id))
                .map(|h| Premise {
                    id: &h.belief.id,
                    formula: &h.belief.formula,
                })
                .collect(),
        ),
        _ => None,
    };
    let text = formula_arg(cmd).map(|a| a.text.clone()).unwrap_or_default();
    let session = r.trace.session().to_string();
    let item = Item {
        session: &session,
        step: r.step,
        event: cmd.name(),
        text: &text,
        formula: f,
        sigma: &sigma,
        premises: premises.as_deref(),
        kind,
        verdict,
        claimed: None,
        stem: format!("repl-step{}-{}", r.step, cmd.name()),
        context: vec![format!("REPL: {} {}", cmd.name(), text)],
    };
    let opts = certificates::Options {
        timeout: r.walk_timeout,
        ..certificates::Options::default()
    };
    let written = certificates::write_one(std::path::Path::new(dir), item, &opts);
    Certified::from_entries(dir, written)
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
    let state = r.state_mut()?;
    let w = state.whynot(&f).map_err(|e| engine_error(name, e))?;
    let Some(model) = w.countermodel else {
        return Ok(Reply::WhyNot { countermodel: None });
    };
    // Any model of Σ ∧ ¬φ is a countermodel, and which one the solver finds depends on what
    // it was asked before. The answer must depend on Σ and φ alone, so the one shown is the
    // least in a fixed order: atoms by name, each false when Σ ∧ ¬φ allows it given the ones
    // before (one satisfiability question per atom).
    let mut atoms: Vec<(String, crate::logic::formula::Atom, bool)> = model
        .into_iter()
        .map(|(a, v)| (atom_text(&a), a, v))
        .collect();
    atoms.sort_by(|x, y| x.0.cmp(&y.0));
    if atoms.len() > CANONICAL_ATOMS {
        // Past the cap the solver's own model is shown: one question per atom, each with its
        // own deadline, would take too long to wait for.
        return Ok(Reply::WhyNot {
            countermodel: Some(atoms.into_iter().map(|(t, _, v)| (t, v)).collect()),
        });
    }
    let mut fixed = vec![Formula::Not(Box::new(f))];
    let mut out = std::collections::BTreeMap::new();
    for (text, atom, _) in atoms {
        let atom = Formula::Atom(atom);
        let mut try_false = fixed.clone();
        try_false.push(Formula::Not(Box::new(atom.clone())));
        let theta = state
            .check(&Formula::And(try_false.clone()), None)
            .map_err(|e| engine_error(name, e))?
            .theta;
        let value = theta == Outcome::Contradiction;
        if value {
            fixed.push(atom);
        } else {
            fixed = try_false;
        }
        out.insert(text, value);
    }
    Ok(Reply::WhyNot {
        countermodel: Some(out),
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
    let Command::Retract { cascade, .. } = cmd else {
        return Err(mismatch(cmd));
    };
    let name = cmd.name();
    let id = resolve_id(r, cmd)?;
    let warning = r
        .members
        .get(&id)
        .filter(|m| m.role == crate::logic::engine::Role::Norm)
        .map(|_| {
            format!(
                "{id} is a norm: norms are inviolable (seed 001), and `audit` reports a norm \
                 retracted by the user (norm-retracted)"
            )
        });
    let (cascaded, kept) = if *cascade {
        cascade_from(r, name, &id)?
    } else {
        (Vec::new(), Vec::new())
    };
    r.layer.push(HandEntry {
        op: HandOp::Retract { id: id.clone() },
        policy: r.policy,
        step: r.step,
        applied: true,
        retracted: cascaded.clone(),
        outcome: None,
    });
    r.invalidate();
    Ok(Reply::Retract {
        id,
        cascaded,
        kept,
        warning,
    })
}

/// The id a `retract` or `dependents` argument names in Σ: an id if one is named, else the
/// normalized formula.
fn resolve_id(r: &mut Repl, cmd: &Command) -> Result<String, ReplError> {
    let name = cmd.name();
    let arg = formula_arg(cmd)?;
    r.ensure_state()?;
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
    Ok(id)
}

/// The beliefs of Σ citing `id` in their `because`, directly or through each other, in Σ's
/// order, each with the id it cites.
fn dependents_of(r: &Repl, id: &str) -> Vec<(usize, String)> {
    let mut fallen: BTreeSet<String> = BTreeSet::from([id.to_string()]);
    let mut out: Vec<(usize, String)> = Vec::new();
    // A fixpoint: a belief citing a dependent is a dependent too, wherever it sits in Σ.
    loop {
        let before = out.len();
        for (i, h) in r.held.iter().enumerate() {
            if fallen.contains(&h.belief.id) {
                continue;
            }
            if let Some(c) = h.belief.because.iter().find(|c| fallen.contains(*c)) {
                out.push((i, c.clone()));
                fallen.insert(h.belief.id.clone());
            }
        }
        if out.len() == before {
            break;
        }
    }
    out.sort();
    out
}

/// `retract --cascade`: truth maintenance. A belief derived (through `because`) from a
/// belief that falls falls with it, unless Σ without it still entails it: then it has another
/// support and is kept (and what cites only it does not fall on its account). Returns
/// (fallen, kept).
fn cascade_from(
    r: &mut Repl,
    name: &str,
    id: &str,
) -> Result<(Vec<String>, Vec<String>), ReplError> {
    let candidates: Vec<(String, Vec<String>, BeliefSpec)> = dependents_of(r, id)
        .into_iter()
        .map(|(i, _)| {
            let b = &r.held[i].belief;
            let spec = BeliefSpec::new(b.id.clone(), b.formula.clone())
                .role(b.role)
                .confidence(b.confidence)
                .step(b.step);
            (b.id.clone(), b.because.clone(), spec)
        })
        .collect();
    let mut fallen: BTreeSet<String> = BTreeSet::from([id.to_string()]);
    let mut order: Vec<String> = Vec::new();
    let mut kept = Vec::new();
    let mut decided: BTreeSet<String> = BTreeSet::new();
    let state = r.state_mut()?;
    state.retract(id).map_err(|e| engine_error(name, e))?;
    // Until nothing changes: a belief is decided once one of its premises has fallen.
    loop {
        let mut changed = false;
        for (dep, because, spec) in &candidates {
            if decided.contains(dep) || !because.iter().any(|c| fallen.contains(c)) {
                continue;
            }
            decided.insert(dep.clone());
            changed = true;
            state.retract(dep).map_err(|e| engine_error(name, e))?;
            let e = state
                .entails(&spec.formula)
                .map_err(|e| engine_error(name, e))?;
            if e.result == crate::logic::engine::Entails::Entailed && e.sigma_consistent {
                kept.push(dep.clone());
                state.add(spec.clone()).map_err(|e| engine_error(name, e))?;
            } else {
                fallen.insert(dep.clone());
                order.push(dep.clone());
            }
        }
        if !changed {
            break;
        }
    }
    // The state was edited to ask; the layer's entry decides Σ from here.
    r.invalidate();
    Ok((order, kept))
}

pub(crate) fn dependents(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let id = resolve_id(r, cmd)?;
    let deps = dependents_of(r, &id);
    let dependents = deps
        .into_iter()
        .map(|(i, cites)| (member_of(&r.held[i].belief, r.held[i].hand), cites))
        .collect();
    Ok(Reply::Dependents { id, dependents })
}

pub(crate) fn believes(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Believes { k, .. } = cmd else {
        return Err(mismatch(cmd));
    };
    let name = cmd.name();
    let f = parse_arg(name, formula_arg(cmd)?)?;
    let state = r.state_mut()?;
    let holds = state
        .believes_at_least(&f, *k)
        .map_err(|e| engine_error(name, e))?;
    let degree = state.necessity(&f).map_err(|e| engine_error(name, e))?;
    Ok(Reply::Believes {
        k: *k,
        holds,
        degree,
    })
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
    // Σ is counted from the replay; the belief state is built by the first question that
    // needs it (the TUI moves the REPL to its step before every command, and a move alone
    // must not cost an engine build of the whole Σ).
    let beliefs = r.sigma_held(*step).len();
    Ok(Reply::At {
        step: *step,
        last,
        beliefs,
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
    super::across::diff(r, cmd.name(), *a, *b)
}

pub(crate) fn sigma(r: &mut Repl, _cmd: &Command) -> Result<Reply, ReplError> {
    r.ensure_state()?;
    Ok(Reply::Sigma {
        beliefs: r.current_members(),
    })
}

pub(crate) fn prompt(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Prompt(arg) = cmd else {
        return Err(mismatch(cmd));
    };
    let query = match arg {
        Some(a) => Some(parse_arg(cmd.name(), a)?),
        None => None,
    };
    r.ensure_state()?;
    let items: Vec<crate::model::export::PromptBelief<'_>> = r
        .held
        .iter()
        .map(|h| crate::model::export::PromptBelief {
            formula: Some(h.belief.formula.clone()),
            text: h.belief.formula.to_string(),
            source: h.belief.source.as_str(),
            confidence: h.belief.confidence,
            norm: h.belief.role == crate::logic::engine::Role::Norm,
        })
        .collect();
    Ok(Reply::Prompt {
        text: crate::model::export::agent_prompt(&items, query.as_ref()),
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

pub(crate) fn history(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let arg = formula_arg(cmd)?.clone();
    super::across::history(r, cmd.name(), &arg)
}

pub(crate) fn whatif(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::WhatIf { policy, from } = cmd else {
        return Err(mismatch(cmd));
    };
    let last = r.trace.last_step();
    if *from > last {
        return Err(ReplError::new(
            cmd.name(),
            format!("step {from} is past the end of the trace (last step {last})"),
        ));
    }
    super::across::whatif(r, cmd.name(), *policy, *from)
}

fn note_line(n: &crate::trace::notes::Note) -> crate::repl::NoteLine {
    crate::repl::NoteLine {
        id: n.id,
        step: u64::from(n.step),
        belief: n.belief.clone(),
        text: n.text.clone(),
        created: n.created.clone(),
    }
}

fn no_store(cmd: &Command) -> ReplError {
    ReplError::new(
        cmd.name(),
        "bookmarks and notes are kept beside a trace file: start the REPL on one",
    )
}

pub(crate) fn note(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Note { belief, text } = cmd else {
        return Err(mismatch(cmd));
    };
    if let Some(b) = belief
        && !r.sigma_held(r.step).iter().any(|h| h.belief.id == *b)
    {
        return Err(ReplError::new(
            cmd.name(),
            format!("no belief `{}` in Σ at step {}", sanitize(b), r.step),
        ));
    }
    let session = r.trace.session().to_string();
    let step = u32::try_from(r.step).unwrap_or(u32::MAX);
    let store = r.note_store.as_mut().ok_or_else(|| no_store(cmd))?;
    let n = store
        .add(&session, step, belief.as_deref(), text)
        .map_err(|e| ReplError::new(cmd.name(), crate::trace::notes::not_saved(&e, text)))?;
    Ok(Reply::Note {
        note: note_line(&n),
        location: store
            .location()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        in_data_dir: store.in_data_dir(),
    })
}

pub(crate) fn notes(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let session = r.trace.session().to_string();
    let store = r.note_store.as_mut().ok_or_else(|| no_store(cmd))?;
    store.reload();
    Ok(Reply::Notes {
        notes: store
            .of_session(&session)
            .into_iter()
            .map(note_line)
            .collect(),
        location: store.location().map(|p| p.display().to_string()),
        problems: store.problems().to_vec(),
    })
}

pub(crate) fn unnote(r: &mut Repl, cmd: &Command) -> Result<Reply, ReplError> {
    let Command::Unnote(id) = cmd else {
        return Err(mismatch(cmd));
    };
    let store = r.note_store.as_mut().ok_or_else(|| no_store(cmd))?;
    match store.remove(*id) {
        Ok(true) => Ok(Reply::Unnote { id: *id }),
        Ok(false) => Err(ReplError::new(cmd.name(), format!("no note #{id}"))),
        Err(e) => Err(ReplError::new(
            cmd.name(),
            format!("cannot write the notes: {e}"),
        )),
    }
}
