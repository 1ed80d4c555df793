//! Checks over Σ: gate verdicts, QUERY and ANSWER, citations, contradictions, revisions and
//! norms.
//!
//! Everything here reads the recomputation pass ([`crate::model::recompute`]), including
//! its answers to the audit's questions; the [`Probe`] is only asked what a recomputation
//! made without them (or one that failed at that event) does not record.
//!
//! **Contradictions** (convention 6 of `docs/samples.md`). An announcement that takes Σ from
//! consistent to inconsistent opens a contradiction. It is *handled* when a `revise` naming it
//! follows (whether that revise restored consistency is then the revision's own finding), or
//! when the retractions that follow restore consistency, before the next announcement or the
//! end of the session. Otherwise it is an `unhandled-contradiction`, at the announcement. A
//! session that *ends* with Σ inconsistent also gets an `inconsistent-sigma` at its last event
//! (`docs/samples.md`, treasure hunt: two errors about one conflict, one saying where it
//! came from, one saying what the agent was left believing).
//!
//! **QUERY and ANSWER** (seed 001, §4: "if it contains ANSWER, verify that the final answer is
//! consistent with Σ"; "if it contains QUERY, run the query on Σ"). A `query`'s claimed answer
//! is compared with `entails` recomputed on Σ at that step (`yes` = entailed, `no` =
//! contradicted, `unknown` = neither): a difference is a `query-answer-mismatch`. An `answer`
//! whose formula Σ contradicts is `answer-contradicts-sigma`; one Σ does not entail is
//! `answer-not-entailed` unless the agent marked it `hedged` (an ANSWER is presented as
//! known otherwise). Evidence: the minimal subsets of Σ behind the recomputed answer.
//!
//! **Derivations** (truth maintenance, seed 001's record of how a fact was derived). A belief
//! announced with `because` premises that were in Σ, which stays in Σ after some of them are
//! retracted, with nothing else in Σ entailing it, is an `unsupported-derivation`: it should
//! have fallen with its premises. The recomputation decides it once the retractions settle
//! ([`crate::model::recompute::DerivationCheck`]).
//!
//! **Revisions.** A revise is settled once the `retract` events that apply it have happened.
//! If Σ is still inconsistent then, it is `revision-incomplete`. If Σ is consistent and some
//! retracted belief could be put back alone without breaking consistency, it retracted more
//! than needed: `revision-not-minimal`. With a policy (the revise's own, or `--policy`), the
//! policy is re-run on Σ just before the trigger's announcement and its retractions compared.

use crate::trace::event::body_of;
use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::json;

use super::probe::Probe;
use super::{Code, Cx, Severity};
use crate::logic::engine::Entails;
use crate::logic::engine::{BeliefSpec, Outcome, Role as ERole};
use crate::logic::formula::Formula;
use crate::logic::parse::parse;
use crate::logic::revise::Policy;
use crate::model::recompute::{EVIDENCE_CAP, Unknown};
use crate::model::timeline::RetractedBy;
use crate::trace::event::{Body, Outcome as Claimed, QueryAnswer, Role, Verify};

pub(super) fn check(cx: &mut Cx<'_>) {
    gate(cx);
    queries_and_answers(cx);
    derivations(cx);
    citations(cx);
    contradictions(cx);
    revisions(cx);
    norms(cx);
    role_changes(cx);
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Fact => "fact",
        Role::Rule => "rule",
        Role::Norm => "norm",
        Role::Assumption => "assumption",
    }
}

/// A record superseded by an announcement of the same id with another role: the role
/// changed (its gate verdict was computed on Σ with the old record, `logic::revise`).
fn role_changes(cx: &mut Cx<'_>) {
    let mut out = Vec::new();
    for r in cx.tl.beliefs() {
        let Some(x) = r.retraction else { continue };
        if x.by != RetractedBy::Superseded {
            continue;
        }
        let old = cx.log.events.load(r.event as usize);
        let new = cx.log.events.load(x.event as usize);
        let (Some(Body::Announce(a)), Some(Body::Announce(b))) = (body_of(&old), body_of(&new))
        else {
            continue;
        };
        if a.role == b.role {
            continue;
        }
        let (from, to) = (role_name(a.role), role_name(b.role));
        let same = match (parse(&a.formula), parse(&b.formula)) {
            (Ok(f), Ok(g)) => f == g,
            _ => a.formula == b.formula,
        };
        let message = if same {
            format!(
                "{} ({}) was announced again as a {to}: its role changed from {from} to {to}.",
                r.id, b.formula
            )
        } else {
            format!(
                "{} was replaced by {} as a {to}: its role changed from {from} to {to}.",
                r.id, b.formula
            )
        };
        out.push(
            cx.finding(Code::RoleChanged, x.step, x.event, message)
                .ids([r.id.clone()])
                .formulas([b.formula.to_string()])
                .with("from", from)
                .with("to", to)
                .with("same_formula", same)
                .with("announced_at", r.announced),
        );
    }
    for f in out {
        cx.push(f);
    }
}

fn claimed_str(c: Claimed) -> &'static str {
    match c {
        Claimed::Contradiction => "contradiction",
        Claimed::Entailed => "entailed",
        Claimed::Newinfo => "newinfo",
        Claimed::Ungrounded => "ungrounded",
    }
}

fn column(o: Outcome) -> usize {
    match o {
        Outcome::Contradiction => 0,
        Outcome::Entailed => 1,
        Outcome::NewInfo | Outcome::Ungrounded => 2,
    }
}

/// The formulas of the `verify` at log position `event` as written (decoded for them).
fn verify_texts(cx: &Cx<'_>, event: u32) -> Vec<String> {
    match body_of(&cx.log.events.load(event as usize)) {
        Some(Body::Verify(v)) => texts_of(v),
        _ => Vec::new(),
    }
}

/// The formulas of a decoded `verify` as written.
fn texts_of(v: &Verify) -> Vec<String> {
    v.all_formulas().map(str::to_string).collect()
}

fn conjunction(texts: &[String]) -> Option<Formula> {
    let mut fs = Vec::new();
    for t in texts {
        fs.push(parse(t).ok()?);
    }
    match fs.len() {
        0 => None,
        1 => fs.pop(),
        _ => Some(Formula::And(fs)),
    }
}

fn shown(texts: &[String]) -> String {
    texts.join(" ∧ ")
}

fn list(ids: &[String]) -> String {
    if ids.is_empty() {
        "nothing".to_string()
    } else {
        ids.join(", ")
    }
}

/// A `not-checkable` finding for a question the solver could not answer within its budget
/// (or about a Σ it could not hold): `what` says which check did not happen, `reason` why,
/// and `cause` is [`Unknown::cause`] (`timeout`, `too-large`, ...).
fn unanswered(
    cx: &Cx<'_>,
    step: u32,
    event: u32,
    what: &str,
    reason: &str,
    cause: &str,
) -> super::Finding {
    cx.finding(
        Code::NotCheckable,
        step,
        event,
        format!("{what} could not be decided: {reason}."),
    )
    .with("reason", reason)
    .with("cause", cause)
}

/// The cause of a probe's failure (its errors are text): a timeout or something else.
fn probe_cause(reason: &str) -> &'static str {
    if reason == Unknown::Timeout.to_string() {
        "timeout"
    } else {
        "engine"
    }
}

/// Lazily creates a probe, or a fresh one when `t` lies behind the current one.
fn probe_at<'p, 'a: 'p>(
    slot: &'p mut Option<Probe<'a>>,
    cx: &Cx<'a>,
    t: u32,
) -> Result<&'p mut Probe<'a>, String> {
    if slot.as_ref().is_none_or(|p| p.step() > t) {
        *slot = Some(Probe::new(cx.tl, cx.log, &cx.opts.recompute)?);
    }
    match slot.as_mut() {
        Some(p) => {
            p.seek(t)?;
            Ok(p)
        }
        None => Err("no probe".to_string()),
    }
}

/// `claimed-outcome-mismatch`, the confusion matrix, and verdicts that cannot be recomputed.
fn gate(cx: &mut Cx<'_>) {
    let mut probe: Option<Probe<'_>> = None;
    let mut explained = 0;
    // The recomputation's results are borrowed for as long as the session's audit, not
    // through `cx`: a copy of them, so that `cx` could take findings, was a 10M session's
    // largest allocation after its engine (issue 31).
    let (rc, log) = (cx.rc, cx.log);
    for v in &rc.verifies {
        let gate = match &v.result {
            Ok(g) => g,
            Err(Unknown::Parse { .. }) => {
                if let Some(c) = v.claimed {
                    cx.matrix.add(c, 3);
                }
                continue;
            }
            Err(e) => {
                if let Some(c) = v.claimed {
                    cx.matrix.add(c, 3);
                }
                let texts = verify_texts(cx, v.event);
                let f = cx
                    .finding(
                        Code::NotCheckable,
                        v.step,
                        v.event,
                        format!("The verdict on {} could not be recomputed: {e}.", {
                            if texts.is_empty() {
                                "this verify".to_string()
                            } else {
                                shown(&texts)
                            }
                        }),
                    )
                    .formulas(texts.clone())
                    .with("reason", e.to_string())
                    .with("cause", e.cause());
                cx.push(f);
                continue;
            }
        };
        let Some(claimed) = v.claimed else { continue };
        cx.matrix.add(claimed, column(gate.theta));
        if v.agrees() != Some(false) {
            continue;
        }
        // Decoded once, and only for a finding: most verdicts agree.
        let loaded = log.events.load(v.event as usize);
        let written = match body_of(&loaded) {
            Some(Body::Verify(b)) => Some(&**b),
            _ => None,
        };
        let texts = written.map(texts_of).unwrap_or_default();
        let recomputed = gate.theta.as_str();
        let mut f = cx
            .finding(
                Code::ClaimedOutcomeMismatch,
                v.step,
                v.event,
                format!(
                    "The gate claimed {} for {} but recomputing Θ on Σ gives {}.",
                    claimed_str(claimed),
                    shown(&texts),
                    recomputed
                ),
            )
            .formulas(texts.clone())
            .with("claimed", claimed_str(claimed))
            .with("recomputed", recomputed);
        if let Some(b) = written {
            if let Some(t) = &b.tier {
                f = f.with("tier", t);
            }
            if let Some(m) = &b.method {
                f = f.with("method", m.as_str());
            }
            if !b.because.is_empty() {
                f = f.with("because", b.because.clone());
            }
        }
        // The evidence a reader needs to see who is right: the premises that entail Δ (or
        // its negation, for a contradiction).
        if explained >= EVIDENCE_CAP {
            f = f.with("evidence_omitted", true);
        } else if let Some(delta) = conjunction(&texts) {
            explained += 1;
            let target = match gate.theta {
                Outcome::Entailed => Some(("supports", delta)),
                Outcome::Contradiction => Some(("conflicts", Formula::Not(Box::new(delta)))),
                _ => None,
            };
            if let Some((key, phi)) = target {
                // Answered by the recomputation when it was asked to; else by a probe.
                let answer = match v.evidence.as_deref() {
                    Some(r) => r.clone().map_err(|e| e.to_string()),
                    None => probe_at(&mut probe, cx, v.step)
                        .and_then(|p| p.supports(&phi, 3))
                        .map(|(sets, _)| sets),
                };
                match answer {
                    Ok(sets) => {
                        let ids: BTreeSet<&String> = sets.iter().flatten().collect();
                        f = f.ids(ids.into_iter().cloned()).with(key, json!(sets));
                    }
                    Err(e) => f = f.with("evidence_error", e),
                }
            }
        }
        cx.push(f);
    }
}

fn entails_str(e: Entails) -> &'static str {
    match e {
        Entails::Entailed => "entailed",
        Entails::Contradicted => "contradicted",
        Entails::Unknown => "unknown",
    }
}

fn query_str(a: QueryAnswer) -> &'static str {
    match a {
        QueryAnswer::Yes => "yes",
        QueryAnswer::No => "no",
        QueryAnswer::Unknown => "unknown",
    }
}

/// The answer a query should have received.
fn expected_reply(e: Entails) -> &'static str {
    match e {
        Entails::Entailed => "yes",
        Entails::Contradicted => "no",
        Entails::Unknown => "unknown",
    }
}

/// `unsupported-derivation`: derived beliefs left in Σ without support after their premises
/// went, and those the solver could not decide (`not-checkable`).
fn derivations(cx: &mut Cx<'_>) {
    let mut out = Vec::new();
    for d in &cx.rc.derivations {
        let rec = &cx.tl.beliefs()[d.record as usize];
        let formula = match cx
            .log
            .events
            .load(rec.event as usize)
            .as_deref()
            .map(|e| &e.body)
        {
            Some(Body::Announce(a)) => a.formula.to_string(),
            _ => String::new(),
        };
        let what = format!("Whether {} ({formula}) still has support", d.id);
        match &d.supported {
            Ok(true) => {}
            Err(e) => out.push(
                unanswered(cx, d.step, d.event, &what, &e.to_string(), e.cause())
                    .ids([d.id.clone()])
                    .formulas([formula.clone()]),
            ),
            Ok(false) => {
                // When and how each premise went.
                let how: Vec<serde_json::Value> = d
                    .gone
                    .iter()
                    .map(|g| {
                        let beliefs = cx.tl.beliefs();
                        let end = cx
                            .ids()
                            .all_active(g, rec.announced)
                            .iter()
                            .find_map(|&i| beliefs[i as usize].retraction);
                        json!({
                            "id": g,
                            "step": end.map(|x| x.step),
                            "by": end.map(|x| x.by.as_str()),
                        })
                    })
                    .collect();
                let left = if d.left.is_empty() {
                    String::new()
                } else {
                    format!(" (its other premises {} do not suffice)", list(&d.left))
                };
                out.push(
                    cx.finding(
                        Code::UnsupportedDerivation,
                        d.step,
                        d.event,
                        format!(
                            "{} ({formula}) was derived from {}, which left Σ, yet it is still \
                             in Σ and nothing else in Σ entails it{left}.",
                            d.id,
                            list(&d.gone)
                        ),
                    )
                    .ids(std::iter::once(d.id.clone()).chain(d.gone.iter().cloned()))
                    .formulas([formula.clone()])
                    .with("belief", d.id.as_str())
                    .with("announced_at", rec.announced)
                    .with("premises_gone", json!(how))
                    .with("premises_left", &d.left),
                );
            }
        }
    }
    for f in out {
        cx.push(f);
    }
}

/// The minimal sets behind a recomputed answer: the recomputation's, else a probe's.
fn evidence<'a>(
    probe: &mut Option<Probe<'a>>,
    cx: &Cx<'a>,
    given: &Option<Result<Vec<Vec<String>>, Unknown>>,
    step: u32,
    phi: Formula,
) -> Result<Vec<Vec<String>>, String> {
    match given {
        Some(r) => r.clone().map_err(|e| e.to_string()),
        None => probe_at(probe, cx, step)
            .and_then(|p| p.supports(&phi, 3))
            .map(|(sets, _)| sets),
    }
}

/// `query-answer-mismatch`, `answer-contradicts-sigma`, `answer-not-entailed`, and the
/// queries and answers the solver could not decide (`not-checkable`).
fn queries_and_answers(cx: &mut Cx<'_>) {
    let mut probe: Option<Probe<'_>> = None;
    let mut out = Vec::new();
    // Counted as the recomputation counts them (see `recompute::walk`), so the evidence it
    // computed is there for each finding within the cap and no probe is needed.
    let (mut explained, mut explained_answers) = (0, 0);
    let rc = cx.rc;
    for q in &rc.queries {
        let loaded = cx.log.events.load(q.event as usize);
        let Some(Body::Query(b)) = body_of(&loaded) else {
            continue;
        };
        let text = b.formula.to_string();
        let r = match &q.result {
            Ok(r) => *r,
            Err(Unknown::Parse { .. }) => continue,
            Err(e) => {
                if q.claimed.is_some() {
                    out.push(
                        unanswered(
                            cx,
                            q.step,
                            q.event,
                            &format!("The query {text}"),
                            &e.to_string(),
                            e.cause(),
                        )
                        .formulas([text.clone()]),
                    );
                }
                continue;
            }
        };
        let (Some(claimed), Some(false)) = (q.claimed, q.agrees()) else {
            continue;
        };
        let mut f = cx
            .finding(
                Code::QueryAnswerMismatch,
                q.step,
                q.event,
                format!(
                    "The query {text} was answered {}, but on Σ at that step it is {} (the                      answer should have been {}).",
                    query_str(claimed),
                    entails_str(r),
                    expected_reply(r)
                ),
            )
            .formulas([text.clone()])
            .with("claimed", query_str(claimed))
            .with("recomputed", entails_str(r))
            .with("expected_answer", expected_reply(r));
        let phi = parse(&text).ok().and_then(|phi| match r {
            Entails::Entailed => Some(("supports", phi)),
            Entails::Contradicted => Some(("conflicts", Formula::Not(Box::new(phi)))),
            Entails::Unknown => None,
        });
        if let Some((key, phi)) = phi {
            if explained >= EVIDENCE_CAP {
                f = f.with("evidence_omitted", true);
            } else {
                explained += 1;
                match evidence(&mut probe, cx, &q.evidence, q.step, phi) {
                    Ok(sets) => {
                        let ids: BTreeSet<&String> = sets.iter().flatten().collect();
                        f = f.ids(ids.into_iter().cloned()).with(key, json!(sets));
                    }
                    Err(e) => f = f.with("evidence_error", e),
                }
            }
        }
        out.push(f);
    }
    for a in &rc.answers {
        let loaded = cx.log.events.load(a.event as usize);
        let Some(Body::Answer(b)) = body_of(&loaded) else {
            continue;
        };
        let Some(text) = b.formula.as_ref().map(|t| t.to_string()) else {
            continue;
        };
        let said = b
            .text
            .as_deref()
            .map_or_else(String::new, |t| format!(" (\"{t}\")"));
        let r = match &a.result {
            Ok(r) => *r,
            Err(Unknown::Parse { .. }) => continue,
            Err(e) => {
                out.push(
                    unanswered(
                        cx,
                        a.step,
                        a.event,
                        &format!("The answer {text}"),
                        &e.to_string(),
                        e.cause(),
                    )
                    .formulas([text.clone()]),
                );
                continue;
            }
        };
        let f = match r {
            Entails::Entailed => continue,
            Entails::Unknown if a.hedged => continue,
            Entails::Unknown => cx
                .finding(
                    Code::AnswerNotEntailed,
                    a.step,
                    a.event,
                    format!(
                        "The answer {text}{said} is given as known, but Σ at that step does not                          entail it (nor its negation)."
                    ),
                )
                .formulas([text.clone()])
                .with("recomputed", entails_str(r))
                .with("hedged", false),
            Entails::Contradicted => {
                let mut f = cx
                    .finding(
                        Code::AnswerContradictsSigma,
                        a.step,
                        a.event,
                        format!(
                            "The answer {text}{said} contradicts Σ at that step: Σ entails its                              negation."
                        ),
                    )
                    .formulas([text.clone()])
                    .with("recomputed", entails_str(r))
                    .with("hedged", a.hedged);
                if let Ok(phi) = parse(&text) {
                    if explained_answers >= EVIDENCE_CAP {
                        f = f.with("evidence_omitted", true);
                    } else {
                        explained_answers += 1;
                        match evidence(&mut probe, cx, &a.evidence, a.step, Formula::Not(Box::new(phi))) {
                            Ok(sets) => {
                                let ids: BTreeSet<&String> = sets.iter().flatten().collect();
                                f = f.ids(ids.into_iter().cloned()).with("conflicts", json!(sets));
                            }
                            Err(e) => f = f.with("evidence_error", e),
                        }
                    }
                }
                f
            }
        };
        out.push(f);
    }
    for f in out {
        cx.push(f);
    }
}

/// `ungrounded-citation`: cited ids not in Σ, or cited premises (with the rules and norms)
/// that do not entail what they justify (for a verified contradiction: that do not entail its
/// negation, convention 3 of `docs/samples.md`). A verify that itself claims `ungrounded` is not
/// reported: the agent already says its citation does not ground the claim.
fn citations(cx: &mut Cx<'_>) {
    let mut out = Vec::new();
    for a in &cx.rc.announces {
        let Ok(res) = &a.result else { continue };
        // Not pinned: every announcement with a citation passes here.
        let loaded = cx.log.events.load(a.event as usize);
        let Some(Body::Announce(b)) = body_of(&loaded) else {
            continue;
        };
        if b.because.is_empty() {
            continue;
        }
        let because: Vec<String> = b.because.iter().map(|c| c.to_string()).collect();
        let what = format!("The announcement of {} ({})", a.id, b.formula);
        if let Some(f) = cite(
            cx,
            a.step,
            a.event,
            &what,
            &because,
            &res.gate.missing_citations,
            res.gate.outcome == Outcome::Ungrounded,
        ) {
            out.push(f.ids([a.id.clone()]).formulas([b.formula.clone()]));
        }
    }
    // Verified contradictions: the engine checks citations only for consistent claims, so
    // "the cited premises (with the rules and norms) are inconsistent with Δ", i.e. they
    // entail ¬Δ, is a question of its own: answered by the recomputation, else asked of the
    // probe in step order.
    let mut contra: Vec<(u32, u32, Vec<String>, Vec<String>)> = Vec::new();
    for v in &cx.rc.verifies {
        let Ok(g) = &v.result else { continue };
        if v.claimed == Some(Claimed::Ungrounded) {
            continue;
        }
        let loaded = cx.log.events.load(v.event as usize);
        let Some(Body::Verify(b)) = body_of(&loaded) else {
            continue;
        };
        if b.because.is_empty() {
            continue;
        }
        // From the body at hand: `verify_texts` would decode the event again.
        let texts = texts_of(b);
        let because: Vec<String> = b.because.iter().map(|c| c.to_string()).collect();
        if g.theta == Outcome::Contradiction {
            if let Some(c) = &v.contradiction_citation {
                let what = format!("The verification of {} as a contradiction", shown(&texts));
                if let (true, Err(e)) = (c.missing.is_empty(), &c.grounded) {
                    let q = format!("Whether the premises {what} cites ground it");
                    out.push(
                        unanswered(cx, v.step, v.event, &q, &e.to_string(), e.cause())
                            .ids(because.iter().cloned())
                            .formulas(texts),
                    );
                    continue;
                }
                let grounded = c.missing.is_empty() && c.grounded.clone().unwrap_or(true);
                if let Some(f) = cite(cx, v.step, v.event, &what, &because, &c.missing, !grounded) {
                    out.push(f.formulas(texts));
                }
            } else {
                contra.push((v.step, v.event, because, texts));
            }
            continue;
        }
        let what = format!("The verification of {}", shown(&texts));
        if let Some(f) = cite(
            cx,
            v.step,
            v.event,
            &what,
            &because,
            &g.missing_citations,
            g.outcome == Outcome::Ungrounded,
        ) {
            out.push(f.formulas(texts));
        }
    }
    let mut probe: Option<Probe<'_>> = None;
    for (step, event, because, texts) in contra {
        let Some(delta) = conjunction(&texts) else {
            continue;
        };
        let p = match probe_at(&mut probe, cx, step) {
            Ok(p) => p,
            Err(e) => {
                let what = format!(
                    "Whether the premises the verification of {} as a contradiction cites ground it",
                    shown(&texts)
                );
                out.push(
                    unanswered(cx, step, event, &what, &e, probe_cause(&e))
                        .ids(because.iter().cloned())
                        .formulas(texts),
                );
                continue;
            }
        };
        let missing: Vec<String> = because
            .iter()
            .filter(|c| !p.is_active(c))
            .cloned()
            .collect();
        let what = format!("The verification of {} as a contradiction", shown(&texts));
        let grounded = if missing.is_empty() {
            match p.grounded_by(&Formula::Not(Box::new(delta)), &because) {
                Ok(g) => g,
                Err(e) => {
                    let q = format!("Whether the premises {what} cites ground it");
                    out.push(
                        unanswered(cx, step, event, &q, &e, probe_cause(&e))
                            .ids(because.iter().cloned())
                            .formulas(texts),
                    );
                    continue;
                }
            }
        } else {
            false
        };
        if let Some(f) = cite(cx, step, event, &what, &because, &missing, !grounded) {
            out.push(f.formulas(texts));
        }
    }
    for f in out {
        cx.push(f);
    }
}

fn cite(
    cx: &Cx<'_>,
    step: u32,
    event: u32,
    what: &str,
    because: &[String],
    missing: &[String],
    ungrounded: bool,
) -> Option<super::Finding> {
    if !missing.is_empty() {
        let f = cx
            .finding(
                Code::UngroundedCitation,
                step,
                event,
                format!(
                    "{what} cites {}, which {} not in Σ at that step.",
                    list(missing),
                    if missing.len() == 1 { "is" } else { "are" }
                ),
            )
            .severity(Severity::Error)
            .ids(because.iter().cloned())
            .with("because", because.to_vec())
            .with("missing", missing.to_vec());
        return Some(f);
    }
    if ungrounded {
        let f = cx
            .finding(
                Code::UngroundedCitation,
                step,
                event,
                format!(
                    "{what} cites {}, but those premises, with the rules and norms, do not \
                     entail it.",
                    list(because)
                ),
            )
            .ids(because.iter().cloned())
            .with("because", because.to_vec());
        return Some(f);
    }
    None
}

/// An open contradiction: the announcement that made Σ inconsistent.
struct Open {
    step: u32,
    event: u32,
    id: String,
    record: Option<u32>,
    formula: String,
    conflict: Vec<String>,
    /// A retract or revise followed.
    acted: bool,
    /// A revise naming it followed.
    revised: bool,
}

#[derive(Clone, Copy)]
enum Happening {
    Announce(usize),
    Retract,
    Revise(usize),
    Settle(usize),
}

/// Walks the session's consistency: `unhandled-contradiction`, `revision-incomplete`,
/// `inconsistent-sigma`.
fn contradictions(cx: &mut Cx<'_>) {
    let rc = cx.rc;
    let tl = cx.tl;
    let mut hs: Vec<(u32, u8, Happening)> = Vec::new();
    for (i, a) in rc.announces.iter().enumerate() {
        hs.push((a.step, 0, Happening::Announce(i)));
    }
    for r in tl.retracts() {
        if r.record.is_some() {
            hs.push((r.step, 0, Happening::Retract));
        }
    }
    for (k, r) in tl.revisions().iter().enumerate() {
        hs.push((r.step, 0, Happening::Revise(k)));
    }
    for (i, r) in rc.revisions.iter().enumerate() {
        hs.push((r.settled_at, 1, Happening::Settle(i)));
    }
    hs.sort_by_key(|&(s, o, _)| (s, o));

    let mut probe: Option<Probe<'_>> = None;
    let mut known: Option<bool> = Some(true);
    // Shared with the announcement's result, not copied at each one while Σ stays inconsistent.
    let mut last_conflict: Arc<[String]> = Arc::new([]);
    let mut open: Option<Open> = None;
    let mut reported = false;
    let mut out = Vec::new();

    // While Σ's consistency is unknown because of retractions, the step of the last one:
    // the recomputation recorded Σ's consistency right after each `retract`, and nothing
    // changes Σ until the next announcement.
    let after_retract: Cell<Option<u32>> = Cell::new(None);
    let recorded = |s: u32| {
        rc.retracts
            .binary_search_by_key(&s, |r| r.step)
            .ok()
            .map(|i| &rc.retracts[i].consistent)
    };
    // Σ's consistency at step t, from what is known, recorded, or asked of the probe; `Err`
    // (why) when the solver could not decide it.
    let mut consistent_at = |known: Option<bool>, t: u32| -> Result<bool, String> {
        match known {
            Some(k) => Ok(k),
            None => match after_retract.get().and_then(recorded) {
                Some(c) => c.clone().map_err(|e| e.to_string()),
                None => probe_at(&mut probe, cx, t).and_then(|p| p.is_consistent()),
            },
        }
    };

    for &(step, _, h) in &hs {
        match h {
            Happening::Announce(i) => {
                let a = &rc.announces[i];
                let before = step.saturating_sub(1);
                if let Some(o) = open.take() {
                    close(
                        cx,
                        o,
                        known,
                        before,
                        Some(step),
                        &mut consistent_at,
                        &mut out,
                        &mut reported,
                    );
                }
                let res = match &a.result {
                    Ok(res) => res,
                    Err(e) => {
                        // A formula that does not parse is a `parse-error` of its own; anything
                        // else left Σ's consistency after this announcement undecided.
                        if e.not_checkable() {
                            let formula = match cx
                                .log
                                .events
                                .load(a.event as usize)
                                .as_deref()
                                .map(|e| &e.body)
                            {
                                Some(Body::Announce(b)) => b.formula.to_string(),
                                _ => String::new(),
                            };
                            let what = format!(
                                "Whether the announcement of {} made Σ inconsistent, and so \
                                 whether a contradiction was left unhandled,",
                                a.id
                            );
                            out.push(
                                unanswered(cx, step, a.event, &what, &e.to_string(), e.cause())
                                    .ids([a.id.clone()])
                                    .formulas([formula]),
                            );
                        }
                        known = None;
                        after_retract.set(None);
                        continue;
                    }
                };
                let prior = if res.gate.theta != Outcome::Contradiction {
                    // Σ ∧ φ satisfiable: Σ was consistent.
                    Ok(true)
                } else {
                    consistent_at(known, before)
                };
                if !res.consistent_after {
                    last_conflict = Arc::clone(&res.conflict);
                    if let Err(e) = &prior {
                        let what = format!(
                            "Whether Σ was consistent before the announcement of {}, and so \
                             whether this announcement opened a contradiction,",
                            a.id
                        );
                        out.push(
                            unanswered(cx, step, a.event, &what, e, probe_cause(e))
                                .ids([a.id.clone()]),
                        );
                    }
                    if prior == Ok(true) {
                        let formula = match cx
                            .log
                            .events
                            .load(a.event as usize)
                            .as_deref()
                            .map(|e| &e.body)
                        {
                            Some(Body::Announce(b)) => b.formula.to_string(),
                            _ => String::new(),
                        };
                        open = Some(Open {
                            step,
                            event: a.event,
                            id: a.id.clone(),
                            record: a.record,
                            formula,
                            conflict: res.conflict.to_vec(),
                            acted: false,
                            revised: false,
                        });
                        reported = false;
                    }
                }
                known = Some(res.consistent_after);
                after_retract.set(None);
            }
            Happening::Retract => {
                if known == Some(false) {
                    known = None;
                    after_retract.set(Some(step));
                } else if known.is_none() && after_retract.get().is_some() {
                    after_retract.set(Some(step));
                }
                if let Some(o) = open.as_mut() {
                    o.acted = true;
                }
            }
            Happening::Revise(k) => {
                let r = &tl.revisions()[k];
                if let Some(o) = open.as_mut() {
                    o.acted = true;
                    let trigger = match cx
                        .log
                        .events
                        .load(r.event as usize)
                        .as_deref()
                        .map(|e| &e.body)
                    {
                        Some(Body::Revise(b)) => b.trigger.clone(),
                        _ => None,
                    };
                    if (r.trigger_record.is_some() && r.trigger_record == o.record)
                        || trigger.as_deref().map(str::trim) == Some(o.id.as_str())
                    {
                        o.revised = true;
                    }
                }
            }
            Happening::Settle(i) => {
                let rv = &rc.revisions[i];
                match &rv.after {
                    Ok((c, conflict)) => {
                        known = Some(*c);
                        after_retract.set(None);
                        if !*c {
                            last_conflict = conflict.as_slice().into();
                            let retracted: Vec<String> =
                                rv.retracted.iter().map(|r| r.id.clone()).collect();
                            let (trigger, trigger_id) = trigger_of(cx, rv.revision);
                            let mut f = cx
                                .finding(
                                    Code::RevisionIncomplete,
                                    rv.step,
                                    rv.event,
                                    format!(
                                        "The revision triggered by {} retracted {}, but Σ is \
                                         still inconsistent afterwards (step {}).",
                                        trigger.as_deref().unwrap_or("an unnamed trigger"),
                                        list(&retracted),
                                        rv.settled_at
                                    ),
                                )
                                .ids(trigger_id.clone())
                                .ids(retracted.clone())
                                .with("retracted", retracted)
                                .with("conflict_after", conflict.clone())
                                .with("settled_at", rv.settled_at);
                            if let Some(t) = trigger {
                                f = f.with("trigger", t);
                            }
                            let unapplied = tl.revisions()[rv.revision as usize].unapplied.clone();
                            if !unapplied.is_empty() {
                                f = f.with("unapplied", unapplied);
                            }
                            out.push(f);
                            reported = true;
                        }
                    }
                    Err(e) => {
                        let (trigger, trigger_id) = trigger_of(cx, rv.revision);
                        let what = format!(
                            "Whether Σ is consistent after the revision triggered by {} \
                             (step {})",
                            trigger.as_deref().unwrap_or("an unnamed trigger"),
                            rv.settled_at
                        );
                        out.push(
                            unanswered(cx, rv.step, rv.event, &what, &e.to_string(), e.cause())
                                .ids(trigger_id),
                        );
                        known = None;
                        after_retract.set(None);
                    }
                }
            }
        }
    }
    let end = tl.len();
    if let Some(o) = open.take() {
        close(
            cx,
            o,
            known,
            end,
            None,
            &mut consistent_at,
            &mut out,
            &mut reported,
        );
    }
    // The recomputation asked the same question at the end of its walk: when it could not
    // decide it, a probe would spend the same budget on it again.
    let mut at_end = match (known, &rc.end) {
        (None, Some(Err(e))) if e.not_checkable() => Err(e.to_string()),
        _ => consistent_at(known, end),
    };
    // A probe stops at the first belief it cannot hold, even once that belief is retracted;
    // the recomputation's own answer at the end is then the one to use.
    let mut end_conflict = None;
    if let (Err(_), Some(Ok((c, conflict)))) = (&at_end, &rc.end) {
        at_end = Ok(*c);
        end_conflict = Some(conflict.clone());
    }
    if let Err(e) = &at_end {
        let pos = tl.event_pos_at(end).unwrap_or(0);
        let cause = match &rc.end {
            Some(Err(u)) => u.cause(),
            _ => probe_cause(e),
        };
        out.push(unanswered(
            cx,
            end,
            pos,
            "Whether Σ is consistent at the end of the session",
            e,
            cause,
        ));
    }
    if at_end == Ok(false) {
        // A known inconsistency has its conflict recorded; one found by the probe (after
        // retractions) is extracted now.
        let conflict = match (known, &rc.end, probe.as_mut()) {
            _ if end_conflict.is_some() => end_conflict.unwrap_or_default(),
            (None, Some(end), _) if after_retract.get().is_some() => {
                end.clone().map(|c| c.1).unwrap_or(last_conflict.to_vec())
            }
            (None, _, Some(p)) => p
                .consistent()
                .map(|c| c.1)
                .unwrap_or(last_conflict.to_vec()),
            _ => last_conflict.to_vec(),
        };
        let pos = tl.event_pos_at(end).unwrap_or(0);
        out.push(
            cx.finding(
                Code::InconsistentSigma,
                end,
                pos,
                format!(
                    "Σ is inconsistent at the end of the session (a minimal conflict: {}).",
                    list(&conflict)
                ),
            )
            .ids(conflict.clone())
            .with("conflict", conflict),
        );
    }
    for f in out {
        cx.push(f);
    }
}

/// The trigger of a revision as written, and the id it resolves to.
fn trigger_of(cx: &Cx<'_>, revision: u32) -> (Option<String>, Option<String>) {
    let Some(r) = cx.tl.revisions().get(revision as usize) else {
        return (None, None);
    };
    let written = match cx
        .log
        .events
        .load(r.event as usize)
        .as_deref()
        .map(|e| &e.body)
    {
        Some(Body::Revise(b)) => b.trigger.as_ref().map(|t| t.to_string()),
        _ => None,
    };
    let id = r
        .trigger_record
        .and_then(|i| cx.tl.beliefs().get(i as usize))
        .map(|b| b.id.to_string());
    (written, id)
}

/// Decides an open contradiction at a boundary (the next announcement, or the end).
#[allow(clippy::too_many_arguments)]
fn close(
    cx: &Cx<'_>,
    o: Open,
    known: Option<bool>,
    at: u32,
    next_announce: Option<u32>,
    consistent_at: &mut impl FnMut(Option<bool>, u32) -> Result<bool, String>,
    out: &mut Vec<super::Finding>,
    reported: &mut bool,
) {
    if o.revised {
        // Handled by a revise; whether it succeeded is that revise's finding.
        return;
    }
    match consistent_at(known, at) {
        Ok(false) => {}
        Ok(true) => return,
        Err(e) => {
            let what = format!(
                "Whether the contradiction the announcement of {} made was handled",
                o.id
            );
            out.push(
                unanswered(cx, o.step, o.event, &what, &e, probe_cause(&e))
                    .ids([o.id.clone()])
                    .formulas([o.formula.clone()]),
            );
            return;
        }
    }
    let until = match next_announce {
        Some(s) => format!("before the next announcement (step {s})"),
        None => "before the end of the session".to_string(),
    };
    let what = if o.acted {
        format!("the retractions that followed {until} did not restore consistency")
    } else {
        format!("no revise or retract followed {until}")
    };
    let mut f = cx
        .finding(
            Code::UnhandledContradiction,
            o.step,
            o.event,
            format!(
                "The announcement of {} ({}) made Σ inconsistent, and {what}.",
                o.id, o.formula
            ),
        )
        .ids([o.id.clone()])
        .ids(o.conflict.iter().filter(|c| **c != o.id).cloned())
        .formulas([o.formula.clone()])
        .with("trigger", o.id.clone())
        .with("conflict", o.conflict.clone());
    if let Some(s) = gate_warned(cx, o.step, &o.formula) {
        f = f.with("gate_reported_at", s);
    }
    out.push(f);
    *reported = true;
}

/// The step of a `verify` just before `step` (after the previous announcement) that claimed
/// `contradiction` for the same formula: the agent's own gate saw it coming.
fn gate_warned(cx: &Cx<'_>, step: u32, formula: &str) -> Option<u32> {
    let want = parse(formula).ok()?;
    let prev_announce = cx
        .rc
        .announces
        .iter()
        .map(|a| a.step)
        .filter(|&s| s < step)
        .max()
        .unwrap_or(0);
    cx.rc
        .verifies
        .iter()
        .rev()
        .filter(|v| v.step < step && v.step > prev_announce)
        .find(|v| {
            v.claimed == Some(Claimed::Contradiction)
                && conjunction(&verify_texts(cx, v.event)).as_ref() == Some(&want)
        })
        .map(|v| v.step)
}

enum Ask {
    /// Could retracted belief `id` (formula) be restored with Σ staying consistent?
    Restore(usize, String, Formula),
    /// Re-run `policy` for the trigger record.
    Rerun(usize, u32, Policy),
}

/// `revision-not-minimal` and `revision-policy-mismatch`.
fn revisions(cx: &mut Cx<'_>) {
    let rc = cx.rc;
    let tl = cx.tl;
    let mut asks: Vec<(u32, Ask)> = Vec::new();
    let mut restorable: Vec<Vec<String>> = vec![Vec::new(); rc.revisions.len()];
    // Restorations the solver could not decide: (revision, id, why, cause).
    let mut undecided: Vec<(usize, String, String, &'static str)> = Vec::new();
    for (i, rv) in rc.revisions.iter().enumerate() {
        if matches!(rv.after, Ok((true, _))) {
            for r in rv.retracted.iter().filter(|r| r.was_active) {
                // Answered by the recomputation when it was asked to.
                match &r.restorable {
                    Some(Ok(true)) => {
                        restorable[i].push(r.id.clone());
                        continue;
                    }
                    Some(Ok(false)) => continue,
                    Some(Err(e)) => {
                        undecided.push((i, r.id.clone(), e.to_string(), e.cause()));
                        continue;
                    }
                    None => {}
                }
                let rec = cx.ids().announced_by(&r.id, rv.step).last().copied();
                let Some(f) = rec
                    .and_then(|ix| tl.belief(cx.log, ix))
                    .and_then(|v| v.formula().ok())
                else {
                    continue;
                };
                asks.push((rv.settled_at, Ask::Restore(i, r.id.clone(), f)));
            }
        }
        let entry = &tl.revisions()[rv.revision as usize];
        let stated = match cx
            .log
            .events
            .load(rv.event as usize)
            .as_deref()
            .map(|e| &e.body)
        {
            Some(Body::Revise(b)) => b.policy.as_deref().and_then(Policy::parse),
            _ => None,
        };
        if let (Some(p), Some(rec)) = (cx.opts.policy.or(stated), entry.trigger_record)
            && let Some(b) = tl.beliefs().get(rec as usize)
        {
            asks.push((b.announced.saturating_sub(1), Ask::Rerun(i, rec, p)));
        }
    }
    asks.sort_by_key(|(s, _)| *s);
    let mut probe: Option<Probe<'_>> = None;
    let mut out = Vec::new();
    for (t, ask) in asks {
        match ask {
            Ask::Restore(i, id, f) => match probe_at(&mut probe, cx, t).and_then(|p| p.theta(&f)) {
                Ok(o) if o != Outcome::Contradiction => restorable[i].push(id),
                Ok(_) => {}
                Err(e) => {
                    let cause = probe_cause(&e);
                    undecided.push((i, id, e, cause));
                }
            },
            Ask::Rerun(i, rec, policy) => {
                let rv = &rc.revisions[i];
                let redo = match &rv.rerun {
                    // Answered by the recomputation (for this policy).
                    Some(r) if r.policy == policy => match r.revision.clone() {
                        None => Ok(None),
                        Some(Ok(x)) => Ok(Some(x)),
                        Some(Err(e)) => Err((e.to_string(), e.cause())),
                    },
                    _ => probe_at(&mut probe, cx, t)
                        .and_then(|p| rerun_on_probe(cx, p, rec, policy))
                        .map_err(|e| {
                            let cause = probe_cause(&e);
                            (e, cause)
                        }),
                };
                let redo = match redo {
                    Ok(Some(x)) => x,
                    Ok(None) => continue,
                    Err((e, cause)) => {
                        let (trigger, trigger_id) = trigger_of(cx, rv.revision);
                        let what = format!(
                            "What policy {} retracts for the revision triggered by {}",
                            policy.as_str(),
                            trigger.as_deref().unwrap_or("an unnamed trigger")
                        );
                        out.push(
                            unanswered(cx, rv.step, rv.event, &what, &e, cause).ids(trigger_id),
                        );
                        continue;
                    }
                };
                let Some(view) = tl.belief(cx.log, rec) else {
                    continue;
                };
                if redo.outcome != Outcome::Contradiction {
                    continue;
                }
                let mut want: BTreeSet<String> = redo.retracted.iter().cloned().collect();
                if !redo.applied {
                    want.insert(view.id().to_string());
                }
                let did: BTreeSet<String> = rv.retracted.iter().map(|r| r.id.clone()).collect();
                if want == did {
                    continue;
                }
                let stated = match cx
                    .log
                    .events
                    .load(rv.event as usize)
                    .as_deref()
                    .map(|e| &e.body)
                {
                    Some(Body::Revise(b)) => b.policy.clone(),
                    _ => None,
                };
                let hypothetical = cx.opts.policy.is_some()
                    && stated.as_deref().and_then(Policy::parse) != Some(policy);
                let want: Vec<String> = want.into_iter().collect();
                let did: Vec<String> = did.into_iter().collect();
                let mut f = cx
                    .finding(
                        Code::RevisionPolicyMismatch,
                        rv.step,
                        rv.event,
                        format!(
                            "The revision triggered by {} retracted {}, but policy {} re-run on \
                             Σ before the trigger retracts {}.",
                            view.id(),
                            list(&did),
                            policy.as_str(),
                            list(&want)
                        ),
                    )
                    .ids([view.id().to_string()])
                    .with("policy", policy.as_str())
                    .with("retracted", did)
                    .with("policy_retracts", want)
                    .with("fallback", redo.fallback);
                if let Some(s) = stated {
                    f = f.with("stated_policy", s);
                }
                if hypothetical {
                    f = f.severity(Severity::Info);
                }
                out.push(f);
            }
        }
    }
    for (i, id, e, cause) in undecided {
        let rv = &rc.revisions[i];
        let (trigger, trigger_id) = trigger_of(cx, rv.revision);
        let what = format!(
            "Whether {id}, retracted by the revision triggered by {}, could have stayed",
            trigger.as_deref().unwrap_or("an unnamed trigger")
        );
        out.push(
            unanswered(cx, rv.step, rv.event, &what, &e, cause)
                .ids(trigger_id)
                .ids([id]),
        );
    }
    for (i, ids) in restorable.into_iter().enumerate() {
        if ids.is_empty() {
            continue;
        }
        let rv = &rc.revisions[i];
        let retracted: Vec<String> = rv.retracted.iter().map(|r| r.id.clone()).collect();
        let (trigger, trigger_id) = trigger_of(cx, rv.revision);
        let mut f = cx
            .finding(
                Code::RevisionNotMinimal,
                rv.step,
                rv.event,
                format!(
                    "The revision triggered by {} retracted {}, but {} could be restored with Σ \
                     staying consistent.",
                    trigger.as_deref().unwrap_or("an unnamed trigger"),
                    list(&retracted),
                    list(&ids)
                ),
            )
            .ids(trigger_id)
            .ids(ids.clone())
            .with("retracted", retracted)
            .with("restorable", ids);
        if let Some(t) = trigger {
            f = f.with("trigger", t);
        }
        out.push(f);
    }
    for f in out {
        cx.push(f);
    }
}

/// Re-runs `policy` for the trigger record `rec` on the probe's Σ (just before the trigger).
/// Only a trigger that met a consistent Σ is a revision a policy decides; on an already
/// inconsistent Σ every policy is undefined (`None`).
fn rerun_on_probe(
    cx: &Cx<'_>,
    p: &mut Probe<'_>,
    rec: u32,
    policy: Policy,
) -> Result<Option<crate::logic::revise::Revision>, String> {
    if !p.is_consistent()? {
        return Ok(None);
    }
    let Some(view) = cx.tl.belief(cx.log, rec) else {
        return Ok(None);
    };
    let Ok(raw) = view.formula() else {
        return Ok(None);
    };
    let role = match view.role() {
        Role::Fact => ERole::Fact,
        Role::Rule => ERole::Rule,
        Role::Norm => ERole::Norm,
        Role::Assumption => ERole::Assumption,
    };
    let c = view.confidence();
    let spec = BeliefSpec::new(view.id(), raw)
        .role(role)
        .confidence(if c.is_finite() && c > 0.0 {
            c.min(1.0)
        } else {
            f64::MIN_POSITIVE
        })
        .step(u64::from(view.step()));
    p.rerun(spec, policy).map(Some)
}

/// `norm-retracted`: a norm left Σ. Retracted by the user it is a warning (the user may
/// change the rules); by the agent or a revision it is an error (norms are not revisable).
fn norms(cx: &mut Cx<'_>) {
    let mut out = Vec::new();
    for r in cx.tl.beliefs() {
        let Some(x) = r.retraction else { continue };
        // Not a pinned view: most beliefs of a long trace are retracted sooner or later.
        let loaded = cx.log.events.load(r.event as usize);
        let Some(Body::Announce(a)) = body_of(&loaded) else {
            continue;
        };
        if a.role != Role::Norm {
            continue;
        }
        let formula_text: &str = &a.formula;
        let (how, severity) = match x.by {
            RetractedBy::User => ("retracted by the user", Severity::Warning),
            RetractedBy::Superseded => ("replaced by a different formula", Severity::Error),
            // The same norm announced again: it never left Σ.
            RetractedBy::Reannounced => continue,
            RetractedBy::Revision => ("retracted by a revision", Severity::Error),
            RetractedBy::Agent => ("retracted by the agent", Severity::Error),
            RetractedBy::Unspecified => ("retracted", Severity::Error),
        };
        let mut f = cx
            .finding(
                Code::NormRetracted,
                x.step,
                x.event,
                format!("The norm {} ({}) was {how}.", r.id, formula_text),
            )
            .severity(severity)
            .ids([r.id.clone()])
            .formulas([formula_text.to_string()])
            .with("by", x.by.as_str())
            .with("announced_at", r.announced);
        if let Some(Body::Retract(b)) = cx
            .log
            .events
            .load(x.event as usize)
            .as_deref()
            .map(|e| &e.body)
            && let Some(reason) = &b.reason
        {
            f = f.with("reason", reason.as_str());
        }
        out.push(f);
    }
    for f in out {
        cx.push(f);
    }
}
