//! A forward-only solver mirror of Σ for the questions a recomputation did not answer.
//!
//! [`super::super::recompute`] walks every session once with one engine and answers the
//! questions every event raises (gate verdicts, consistency after each announcement,
//! consistency around each revision) and, when asked to (the default, and always in
//! [`super::audit`]), the audit's further ones: "could this retracted belief be restored?",
//! "which premises support this entailment?", "was Σ consistent after these plain
//! retractions?", "what would policy P have retracted?", "was Σ consistent before this
//! retraction by revision?", "what does Θ say of this thought's assertion?". For a
//! recomputation made without
//! them, or an answer it could not give, a [`Probe`] answers them. It does not read events: it mirrors Σ from the
//! timeline's belief records (validity intervals), so it agrees with the replay by
//! construction, and it only moves forward, so a check that asks its questions in step order
//! pays for one walk over the session, adds and retractions only, no solve per event.
//!
//! Quantified beliefs are grounded over the active domain exactly as the recomputation does
//! (contract §3): the constants and witnesses of the active beliefs (held in their witnessed
//! form, see [`crate::logic::ground`]) plus those of the formula asked about, re-grounding
//! the quantified beliefs whenever that domain changes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::logic::engine::{BeliefSpec, BeliefState, EngineError, Outcome, Role as ERole};
use crate::logic::formula::Formula;
use crate::logic::ground;
use crate::logic::revise::{Policy, Revision};
use crate::model::recompute::RecomputeOptions;
use crate::model::timeline::Timeline;
use crate::trace::TraceLog;
use crate::trace::event::{Body, Role, body_of};

/// A change of Σ at a step: a record leaves or enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    /// Record index leaves Σ (ordered first so a superseding announce can reuse the id).
    Out(u32),
    /// Record index enters Σ.
    In(u32),
}

/// A quantified belief: its formula as written and its spec as currently grounded.
struct Quantified {
    raw: Formula,
    spec: BeliefSpec,
}

/// Σ of one session mirrored into one engine, moving forward only.
pub(crate) struct Probe<'a> {
    tl: &'a Timeline,
    log: &'a TraceLog,
    engine: BeliefState,
    changes: Vec<(u32, Change)>,
    next: usize,
    at: u32,
    /// Active beliefs the engine holds: id -> (parsed formula, spec as added).
    active: HashMap<String, (Formula, BeliefSpec)>,
    quantified: BTreeMap<String, Quantified>,
    consts: BTreeMap<String, u32>,
    grounded: BTreeSet<String>,
    cap: u64,
    /// Why the engine can no longer be trusted, if it cannot (a failed add or retract).
    broken: Option<String>,
}

fn engine_role(r: Role) -> ERole {
    match r {
        Role::Fact => ERole::Fact,
        Role::Rule => ERole::Rule,
        Role::Norm => ERole::Norm,
        Role::Assumption => ERole::Assumption,
    }
}

fn err(e: EngineError) -> String {
    match e {
        EngineError::Timeout => "unknown (timeout)".to_string(),
        e => format!("solver error: {e}"),
    }
}

impl<'a> Probe<'a> {
    /// A probe at step 0 (Σ empty).
    pub(crate) fn new(
        tl: &'a Timeline,
        log: &'a TraceLog,
        opts: &RecomputeOptions,
    ) -> Result<Self, String> {
        let engine = BeliefState::with_limits(opts.limits()).map_err(err)?;
        let mut changes = Vec::new();
        for (i, r) in tl.beliefs().iter().enumerate() {
            if !r.formula_ok {
                // The engine cannot hold what does not parse; the parse error is a finding
                // of its own.
                continue;
            }
            changes.push((r.announced, Change::In(i as u32)));
            if let Some(x) = r.retraction {
                changes.push((x.step, Change::Out(i as u32)));
            }
        }
        changes.sort_unstable();
        Ok(Probe {
            tl,
            log,
            engine,
            changes,
            next: 0,
            at: 0,
            active: HashMap::new(),
            quantified: BTreeMap::new(),
            consts: BTreeMap::new(),
            grounded: BTreeSet::new(),
            cap: opts.instance_cap,
            broken: None,
        })
    }

    /// The step Σ is mirrored at.
    pub(crate) fn step(&self) -> u32 {
        self.at
    }

    /// Moves to Σ at step `t` (never backwards: asking for an earlier step is a caller bug
    /// and leaves Σ where it is, which the caller detects with [`Probe::step`]).
    pub(crate) fn seek(&mut self, t: u32) -> Result<(), String> {
        while let Some(&(s, c)) = self.changes.get(self.next) {
            if s > t {
                break;
            }
            self.next += 1;
            if let Err(e) = self.apply(c) {
                self.broken.get_or_insert(e);
            }
        }
        self.at = self.at.max(t);
        match &self.broken {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn apply(&mut self, c: Change) -> Result<(), String> {
        match c {
            Change::Out(i) => {
                let id = self.tl.beliefs()[i as usize].id.as_str();
                if let Some((raw, _)) = self.active.remove(id) {
                    self.quantified.remove(id);
                    self.forget(&raw);
                    self.engine.retract(id).map_err(err)?;
                }
                Ok(())
            }
            Change::In(i) => {
                let r = &self.tl.beliefs()[i as usize];
                // Decoded for this step only, never pinned: a probe walks every belief of a
                // long session.
                let loaded;
                let announce = match self.tl.ground_announce(i) {
                    Some(a) => a,
                    None => {
                        loaded = self.log.events.load(r.event as usize);
                        match body_of(&loaded) {
                            Some(Body::Announce(a)) => &**a,
                            _ => return Ok(()),
                        }
                    }
                };
                let Ok(raw) = crate::logic::parse::parse(&announce.formula) else {
                    return Ok(());
                };
                let c = announce.confidence;
                // The engine needs a confidence in (0, 1]; 0 means "no confidence at all".
                let conf = if c.is_finite() && c > 0.0 {
                    c.min(1.0)
                } else {
                    f64::MIN_POSITIVE
                };
                let spec = BeliefSpec::new(r.id.as_str(), Formula::True)
                    .role(engine_role(announce.role))
                    .confidence(conf)
                    .step(u64::from(r.announced));
                self.add(spec, raw)
            }
        }
    }

    fn domain_with(&self, f: Option<&Formula>) -> BTreeSet<String> {
        let mut d: BTreeSet<String> = self.consts.keys().cloned().collect();
        if let Some(f) = f {
            ground::question_constants(f, &mut d);
        }
        d
    }

    fn ground(&self, f: &Formula, domain: &BTreeSet<String>) -> Result<Formula, String> {
        let d: Vec<String> = domain.iter().cloned().collect();
        ground::ground(f, &d, self.cap).map_err(|e| e.to_string())
    }

    /// Adds a spec, demoting a rule or norm that contradicts the hard part to an assumption
    /// (as the recomputation does: Σ is then inconsistent, which is what the trace says).
    ///
    /// `add_or_demote`, not `add` and a second `add` on refusal: the refusal's minimal
    /// conflict, which `add` searches over the whole hard part and this caller drops, was
    /// most of the reasoning audit's time and grew with the hard part (issue 31).
    fn engine_add(&mut self, mut spec: BeliefSpec) -> Result<BeliefSpec, String> {
        if self.engine.add_or_demote(spec.clone()).map_err(err)?.1 {
            spec.role = ERole::Assumption;
        }
        Ok(spec)
    }

    /// Grounds the quantified beliefs over `domain`.
    fn sync(&mut self, domain: &BTreeSet<String>) -> Result<(), String> {
        if self.quantified.is_empty() || *domain == self.grounded {
            // Nothing to re-ground; `grounded` is only meaningful while quantified beliefs
            // are held, and is set when the first one arrives.
            return Ok(());
        }
        let ids: Vec<String> = self.quantified.keys().cloned().collect();
        for id in ids {
            let Some(q) = self.quantified.get(&id) else {
                continue;
            };
            let mut spec = q.spec.clone();
            spec.formula = self.ground(&q.raw, domain)?.into();
            let spec = self.engine_add(spec)?;
            if let Some(q) = self.quantified.get_mut(&id) {
                q.spec = spec;
            }
        }
        self.grounded = domain.clone();
        Ok(())
    }

    fn add(&mut self, spec: BeliefSpec, raw: Formula) -> Result<(), String> {
        // A belief is held in its witnessed form (`logic::ground`): its witnesses are
        // constants of the domain like any other.
        let raw = match ground::witnessed(&raw) {
            std::borrow::Cow::Owned(w) => w,
            std::borrow::Cow::Borrowed(_) => raw,
        };
        let id = spec.id.clone();
        let mut cs = BTreeSet::new();
        ground::constants(&raw, &mut cs);
        for c in cs {
            *self.consts.entry(c).or_default() += 1;
        }
        let quantified = ground::has_quantifier(&raw);
        let mut spec = spec;
        if quantified || !self.quantified.is_empty() {
            let domain = self.domain_with(None);
            self.sync(&domain)?;
            spec.formula = self.ground(&raw, &domain)?.into();
            if self.quantified.is_empty() {
                self.grounded = domain;
            }
        } else {
            // A ground belief among ground beliefs: no domain to compute (the common case,
            // and the one long traces are made of).
            spec.formula = raw.clone().into();
        }
        let spec = self.engine_add(spec)?;
        if quantified {
            self.quantified.insert(
                id.clone(),
                Quantified {
                    raw: raw.clone(),
                    spec: spec.clone(),
                },
            );
        }
        self.active.insert(id, (raw, spec));
        Ok(())
    }

    /// Drops the grounding bookkeeping of a formula that left Σ.
    fn forget(&mut self, raw: &Formula) {
        let mut cs = BTreeSet::new();
        ground::constants(raw, &mut cs);
        for c in cs {
            if let Some(n) = self.consts.get_mut(&c) {
                *n -= 1;
                if *n == 0 {
                    self.consts.remove(&c);
                }
            }
        }
    }

    /// Grounds `f` and brings Σ's grounding to the same domain.
    fn prepare(&mut self, f: &Formula) -> Result<Formula, String> {
        if self.quantified.is_empty() && !ground::has_quantifier(f) {
            return Ok(f.clone());
        }
        let domain = self.domain_with(Some(f));
        self.sync(&domain)?;
        self.ground(f, &domain)
    }

    /// Whether Σ is consistent, with a minimal conflict (ids) when it is not.
    pub(crate) fn consistent(&mut self) -> Result<(bool, Vec<String>), String> {
        if !self.quantified.is_empty() {
            let domain = self.domain_with(None);
            self.sync(&domain)?;
        }
        let c = self.engine.consistent().map_err(err)?;
        Ok((c.consistent, c.conflict))
    }

    /// Whether Σ is consistent (one solve; no conflict is extracted).
    pub(crate) fn is_consistent(&mut self) -> Result<bool, String> {
        Ok(self.theta(&Formula::True)? != Outcome::Contradiction)
    }

    /// Θ(Σ, f), the plain three-way gate.
    pub(crate) fn theta(&mut self, f: &Formula) -> Result<Outcome, String> {
        let g = self.prepare(f)?;
        Ok(self.engine.check(&g, None).map_err(err)?.theta)
    }

    /// Up to `max` minimal subsets of Σ entailing `f` (empty when Σ does not entail it), and
    /// whether they are provably all of them.
    pub(crate) fn supports(
        &mut self,
        f: &Formula,
        max: usize,
    ) -> Result<(Vec<Vec<String>>, bool), String> {
        let g = self.prepare(f)?;
        let s = self
            .engine
            .supports(&g, max, std::time::Duration::from_secs(2))
            .map_err(err)?;
        Ok((s.supports, s.complete))
    }

    /// Whether an id is active in the mirror.
    pub(crate) fn is_active(&self, id: &str) -> bool {
        self.active.contains_key(id)
    }

    /// Whether the cited beliefs, with every rule and norm, entail `f` (the engine's
    /// UNGROUNDED refinement, seed 001 §5). `Ok(true)` also when Σ contradicts `f`, which the
    /// engine does not refine.
    pub(crate) fn grounded_by(&mut self, f: &Formula, because: &[String]) -> Result<bool, String> {
        let g = self.prepare(f)?;
        let c = self.engine.check(&g, Some(because)).map_err(err)?;
        Ok(c.outcome != Outcome::Ungrounded)
    }

    /// What `policy` does when `spec` (its formula as parsed; it is grounded here) is
    /// announced into the current Σ. Runs on a throwaway copy of Σ,
    /// so the mirror is untouched.
    pub(crate) fn rerun(&mut self, spec: BeliefSpec, policy: Policy) -> Result<Revision, String> {
        let domain = self.domain_with(Some(&spec.formula));
        self.sync(&domain)?;
        let mut copy = BeliefState::with_limits(self.engine.limits()).map_err(err)?;
        let mut specs: Vec<&BeliefSpec> = self.active.values().map(|(_, s)| s).collect();
        // Revision policies break ties by recency: keep the trace's order.
        specs.sort_by_key(|s| s.step);
        for s in specs {
            // Quantified beliefs are held in their current grounding.
            let s = self.quantified.get(&s.id).map_or(s, |q| &q.spec);
            // Demoted as the trace's Σ holds it, without naming the conflict (see
            // `engine_add`).
            copy.add_or_demote(s.clone()).map_err(err)?;
        }
        let g = self.ground(&ground::witnessed(&spec.formula), &domain)?;
        let spec = BeliefSpec {
            formula: g.into(),
            ..spec
        };
        copy.announce(spec, policy).map_err(err)
    }
}
