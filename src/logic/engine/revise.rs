//! Belief revision: what happens when an announced formula contradicts Σ.
//!
//! * [`Policy::Greedy`] is seed 003's Algorithm 1 ("GreedySAT Revision"): try prior
//!   commitments oldest first and keep the first *single* retraction that restores
//!   satisfiability. A single retraction restores consistency exactly when the retracted
//!   commitment lies in every minimal conflict, hence in every unsatisfiable core, so only the
//!   members of one validated core are tried: same answer, far fewer solves. When no single
//!   retraction works (the algorithm as written would leave Σ inconsistent; measured in about
//!   40% of revisions on a synthetic workload) it falls back to the recency policy and says
//!   so in [`Revision::fallback`].
//! * [`Policy::GreedyPaper`] is Algorithm 1 exactly as the paper writes it: the same oldest
//!   single retraction, and nothing else. No fallback: when no single retraction restores
//!   satisfiability, the new commitment is kept and Σ stays inconsistent
//!   ([`Revision::sigma_inconsistent`]). No refusal: a literal that contradicts the rules
//!   alone is kept the same way. No special case for a Σ that was inconsistent already: the
//!   algorithm's own test (`R ∪ B̃` satisfiable?) fails, so it looks for a single retraction
//!   that makes everything satisfiable, and takes it if there is one. Only a new *rule or
//!   norm* contradicting the rules is still refused: the engine cannot hold it as hard (the
//!   algorithm only ever sees literals).
//! * [`Policy::Recency`] keeps the newest-first maximal consistent subset (Brewka's preferred
//!   subtheory); what it drops is a minimal correction set.
//! * [`Policy::Confidence`] does the same with the highest confidence first (ties: newer
//!   first); the new formula itself may lose.
//! * [`Policy::Reject`] refuses the new formula. [`Policy::Flag`] keeps both and marks Σ
//!   inconsistent (seed 000's third option).
//!
//! Policies repair the conflict an announcement creates: seed 003 assumes `B ∪ R`
//! satisfiable before the revision. So when Σ is inconsistent *before* the announcement,
//! [`Revision::sigma_was_inconsistent`] says so and [`Revision::prior_conflict`] names Σ's own
//! preferred minimal conflict; no policy retracts anything; φ is added under every policy but
//! `reject` (which refuses it, since Θ says contradiction); and the announced formula is
//! never blamed: [`Revision::conflict`] lists only a minimal conflict that genuinely needs φ
//! (its other members are satisfiable together), or nothing. When Σ was consistent, the
//! conflict is Σ's preferred minimal unsatisfiable subset containing φ.
//!
//! An announcement overwrites the record of the same id (seed 000): with the same formula and
//! role, confidence and step are replaced ([`Added::Merged`], the belief keeps its place);
//! with another formula or role, the gate and the policy see Σ without the old record, which
//! goes back in its place if φ ends up not in Σ. Either way, Σ afterwards is exactly
//! `(Σ before − Revision::retracted) ∪ {φ if Revision::applied}`.
//!
//! Θ is computed on Σ as it stood before the update, the record φ replaces included: a
//! re-announcement of a formula Σ holds is `entailed`, whatever else changes. When the same
//! id was held with another role, [`Revision::role_change`] says so (a rule re-announced as
//! a fact becomes retractable).
//!
//! A revision is decided over the domain of the request (Σ's constants and witnesses and
//! φ's). A retraction can shrink the domain; under the quantifier semantics of
//! [`crate::logic::ground`] that never makes a consistent Σ of `∃*∀*` sentences
//! inconsistent. A belief with an existential below a universal (`∀x. ∃y. R(x, y)`) is not
//! so protected, so after every repair Σ is checked over its own domain, and the repairing
//! policies (`greedy`, `recency`, `confidence`) repair again, by their own order, until it
//! is consistent there. [`Revision::sigma_inconsistent`] is always that check's answer, the
//! one `consistent` gives next.
//!
//! Rules and norms are never retracted. A new formula that contradicts the rules and norms
//! alone cannot be admitted by any retraction and is refused (under `flag`, a fact or
//! assumption is still kept); a conflict that involves a norm is reported in
//! [`Revision::norm_violation`].

use std::collections::HashSet;

use varisat::Lit;

use super::explain::{Fresh, preferred_mus};
use super::state::{HardCheck, State, switch_off};
use super::{Added, BeliefSpec, EngineError, Outcome, Role};
use crate::logic::cnf;
use crate::logic::formula::Formula;

/// How contradictions are resolved (contract: `policy greedy|recency|confidence|reject|flag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// Seed 003 Algorithm 1, with the recency fallback.
    #[default]
    Greedy,
    /// Seed 003 Algorithm 1 exactly as written: no fallback, no refusal.
    GreedyPaper,
    /// Newest-first maximal consistent subset.
    Recency,
    /// Highest-confidence-first maximal consistent subset.
    Confidence,
    /// Refuse the new formula.
    Reject,
    /// Keep everything, mark Σ inconsistent.
    Flag,
}

impl Policy {
    /// Every policy, in the order the docs list them.
    pub const ALL: [Policy; 6] = [
        Policy::Greedy,
        Policy::GreedyPaper,
        Policy::Recency,
        Policy::Confidence,
        Policy::Reject,
        Policy::Flag,
    ];

    /// Parses the contract name.
    pub fn parse(s: &str) -> Option<Policy> {
        Some(match s {
            "greedy" => Policy::Greedy,
            "greedy-paper" => Policy::GreedyPaper,
            "recency" => Policy::Recency,
            "confidence" => Policy::Confidence,
            "reject" => Policy::Reject,
            "flag" => Policy::Flag,
            _ => return None,
        })
    }

    /// The contract name.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Greedy => "greedy",
            Policy::GreedyPaper => "greedy-paper",
            Policy::Recency => "recency",
            Policy::Confidence => "confidence",
            Policy::Reject => "reject",
            Policy::Flag => "flag",
        }
    }
}

/// What an announcement did.
///
/// Whatever the policy, Σ afterwards is `(Σ before − retracted) ∪ {φ if applied}`, where φ
/// takes the place of an active belief with the same id (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// The policy applied.
    pub policy: Policy,
    /// Θ(Σ, φ) before the update, on Σ as it stood (a record φ replaces included: the
    /// policy then works on Σ without it, so a contradiction with that record alone needs no
    /// repair).
    pub outcome: Outcome,
    /// Whether φ is in Σ afterwards.
    pub applied: bool,
    /// How φ was added, when it was.
    pub added: Option<Added>,
    /// Ids retracted by the revision, oldest first (never φ's own id).
    pub retracted: Vec<String>,
    /// When φ contradicted Σ: a minimal unsatisfiable subset that contains φ (ids, φ's last),
    /// Σ's preferred one (see `State::explain`). When Σ was already
    /// inconsistent: a minimal conflict that genuinely needs φ (its other members are
    /// satisfiable together), or empty when there is none.
    pub conflict: Vec<String>,
    /// Greedy only: no single retraction restored consistency and the recency subset was
    /// used instead.
    pub fallback: bool,
    /// Ids of norms involved in the conflict (φ's own id if φ is a norm).
    pub norm_violation: Vec<String>,
    /// Σ is inconsistent afterwards (under `flag`, and whenever Σ was already inconsistent
    /// and φ was added).
    pub sigma_inconsistent: bool,
    /// Σ was inconsistent before the announcement: no policy retracted anything (policies
    /// repair the conflict an announcement creates, seed 003 assumes `B ∪ R` satisfiable).
    pub sigma_was_inconsistent: bool,
    /// When `sigma_was_inconsistent`: Σ's own preferred minimal conflict (ids in commitment
    /// order), which φ is not part of.
    pub prior_conflict: Vec<String>,
    /// When φ replaced an active belief of the same id held with another role: (the old
    /// role, the new one). Only when φ was applied.
    pub role_change: Option<(Role, Role)>,
}

impl State {
    /// Applies a revision policy to a new belief (see the module docs).
    pub fn announce(&mut self, spec: BeliefSpec, policy: Policy) -> Result<Revision, EngineError> {
        announce(self, spec, policy)
    }
}

fn announce(st: &mut State, spec: BeliefSpec, policy: Policy) -> Result<Revision, EngineError> {
    if !(spec.confidence > 0.0 && spec.confidence <= 1.0) {
        return Err(EngineError::BadConfidence(spec.confidence));
    }
    // The same id with another formula or role: the update overwrites that record, so the
    // gate and the policy see Σ without it; it comes back in its place whenever φ is not in
    // Σ afterwards (refused, or added and then dropped under `confidence`).
    let replaced = st.index_of(&spec.id).filter(|&i| {
        let b = &st.beliefs[i].spec;
        b.formula != spec.formula || b.role != spec.role
    });
    // Θ is the verdict on Σ as it stood, the record about to be replaced included (a
    // re-announcement of what Σ holds is entailed).
    let before = match replaced {
        Some(_) => {
            let mut q = st.query(&spec.formula)?;
            let o = st.theta(&mut q);
            st.finish(q);
            Some(o?)
        }
        None => None,
    };
    if let Some(i) = replaced {
        st.retract_index(i);
    }
    let new_role = spec.role;
    let mut r = revise(st, spec, policy);
    if let Some(i) = replaced {
        match &mut r {
            Ok(rev) if rev.applied => {
                let old = st.beliefs[i].spec.role;
                rev.role_change = (old != new_role).then_some((old, new_role));
            }
            Ok(rev) => {
                st.reactivate(i)?;
                rev.sigma_inconsistent = settled_inconsistent(st)?;
            }
            Err(_) => st.reactivate(i)?,
        }
        if let (Ok(rev), Some(o)) = (&mut r, before) {
            rev.outcome = o;
        }
    }
    r
}

/// Whether Σ is inconsistent over its own domain (the quantified beliefs brought to it): the
/// answer `consistent` gives next.
fn settled_inconsistent(st: &mut State) -> Result<bool, EngineError> {
    st.sync_active()?;
    Ok(!st.sat_with(&[], true)?)
}

/// After a repair: while Σ is inconsistent over its own domain (a retraction shrank it under
/// a belief outside the exact fragment, see the module docs), the policy's maximal consistent
/// subset is taken again (`new` forced in under recency, ranked under confidence). Each round
/// retracts at least one belief or stops; returns the beliefs retracted and whether Σ is
/// still inconsistent (only when the rules and norms alone are, over the shrunken domain).
fn settle(
    st: &mut State,
    new: usize,
    by_confidence: bool,
) -> Result<(Vec<usize>, bool), EngineError> {
    let mut dropped = Vec::new();
    loop {
        if !settled_inconsistent(st)? {
            return Ok((dropped, false));
        }
        let more = mss(st, new, by_confidence)?;
        if more.is_empty() {
            return Ok((dropped, true));
        }
        for &i in &more {
            st.retract_index(i);
        }
        dropped.extend(more);
    }
}

fn revise(st: &mut State, spec: BeliefSpec, policy: Policy) -> Result<Revision, EngineError> {
    let mut q = st.query(&spec.formula)?;
    let outcome = st.theta(&mut q)?;
    let mut rev = Revision {
        policy,
        outcome,
        applied: false,
        added: None,
        retracted: Vec::new(),
        conflict: Vec::new(),
        fallback: false,
        norm_violation: Vec::new(),
        sigma_inconsistent: false,
        sigma_was_inconsistent: false,
        prior_conflict: Vec::new(),
        role_change: None,
    };
    let repairs = matches!(
        policy,
        Policy::Greedy | Policy::Recency | Policy::Confidence
    );
    if outcome != Outcome::Contradiction {
        st.finish(q);
        let id = spec.id.clone();
        rev.added = Some(st.add(spec)?);
        rev.applied = true;
        // Σ ∧ φ was satisfiable over this request's domain; with quantified beliefs, Σ is
        // checked over its own (outside the exact fragment the two can differ).
        if st.quantified_active > 0 {
            if repairs && let Some(new) = st.index_of(&id) {
                let (dropped, bad) = settle(st, new, policy == Policy::Confidence)?;
                record_retracted(st, &mut rev, new, dropped);
                rev.sigma_inconsistent = bad;
            } else {
                rev.sigma_inconsistent = settled_inconsistent(st)?;
            }
        }
        return Ok(rev);
    }
    let g = q.formula.clone();
    let before_sat = st.sigma_sat()?;
    let active = st.active();
    let conflict = if before_sat {
        // Every minimal conflict contains φ, and lies in φ's cone.
        let members = st.cone(&[&g], &active);
        let pos = st.pos(&mut q).to_vec();
        st.explain(&[(&g, true)], &pos, &members)?.ok_or_else(|| {
            EngineError::Internal("Θ says contradiction but no conflict was found".into())
        })?
    } else {
        rev.sigma_was_inconsistent = true;
        let prior = st.sigma_conflict()?;
        rev.prior_conflict = st.names(&prior);
        st.blame(&g)?.unwrap_or_default()
    };
    rev.conflict = st.names(&conflict);
    if before_sat || !rev.conflict.is_empty() {
        rev.conflict.push(spec.id.clone());
    }
    rev.norm_violation = rev
        .conflict
        .iter()
        .filter(|id| match st.index_of(id) {
            Some(i) => st.beliefs[i].spec.role == Role::Norm,
            None => **id == spec.id && spec.role == Role::Norm,
        })
        .cloned()
        .collect();
    // Do the rules and norms admit the new belief? The rules-only solver answers without
    // switching off every other selector of Σ on the main solver.
    let hard_ok = match st.rules_fit(&q.formula)? {
        Some(ok) => ok,
        None => {
            let mut hard_part = st.fixed_selectors();
            hard_part.extend_from_slice(st.pos(&mut q));
            let universe = st.assumptions();
            switch_off(&mut hard_part, &universe);
            st.main_sat().solve(&hard_part)?
        }
    };
    st.finish(q);
    let hard = spec.role.is_hard();
    if policy == Policy::Reject || (hard && !hard_ok) {
        // Σ is unchanged: inconsistent exactly when it was (over its own domain).
        rev.sigma_inconsistent = if st.quantified_active > 0 {
            settled_inconsistent(st)?
        } else {
            !before_sat
        };
        return Ok(rev);
    }
    if policy == Policy::GreedyPaper {
        // Algorithm 1 as written: B̃ = B ∪ {ℓ}; drop the oldest prior commitment whose single
        // removal makes R ∪ B̃ satisfiable, if there is one; return B̃ either way.
        let id = spec.id.clone();
        rev.added = Some(st.add_inner(spec, HardCheck::Skip)?);
        rev.applied = true;
        let new = st
            .index_of(&id)
            .ok_or_else(|| EngineError::Internal("announced belief vanished".into()))?;
        if let Some(i) = greedy_single(st, new)? {
            rev.retracted.push(st.beliefs[i].spec.id.clone());
            st.retract_index(i);
        }
        rev.sigma_inconsistent = settled_inconsistent(st)?;
        return Ok(rev);
    }
    if policy == Policy::Flag || !before_sat {
        // Nothing to repair: flag keeps both, and a Σ that was already inconsistent is not
        // the announcement's doing (seed 003 assumes B ∪ R satisfiable before it).
        rev.added = Some(st.add_inner(spec, HardCheck::Skip)?);
        rev.applied = true;
        rev.sigma_inconsistent = settled_inconsistent(st)?;
        return Ok(rev);
    }
    let id = spec.id.clone();
    rev.added = Some(st.add_inner(spec, HardCheck::Skip)?);
    rev.applied = true;
    let new = st
        .index_of(&id)
        .ok_or_else(|| EngineError::Internal("announced belief vanished".into()))?;
    let retracted = match policy {
        Policy::Greedy => match greedy_single(st, new)? {
            Some(i) => vec![i],
            None => {
                rev.fallback = true;
                mss(st, new, false)?
            }
        },
        Policy::Recency => mss(st, new, false)?,
        _ => mss(st, new, true)?,
    };
    for &i in &retracted {
        st.retract_index(i);
    }
    // Consistent over the request's domain by construction; over Σ's own domain (smaller
    // when a retraction took the last mention of a constant) it is checked, and repaired.
    let (more, bad) = settle(st, new, policy == Policy::Confidence)?;
    let mut retracted = retracted;
    retracted.extend(more);
    record_retracted(st, &mut rev, new, retracted);
    if bad && st.quantified_active == 0 {
        return Err(EngineError::Internal(
            "revision left the belief state inconsistent".into(),
        ));
    }
    rev.sigma_inconsistent = bad;
    Ok(rev)
}

/// Records retracted beliefs in `rev`, oldest first (the announced belief `new` among them
/// means φ was not applied).
fn record_retracted(st: &State, rev: &mut Revision, new: usize, mut retracted: Vec<usize>) {
    retracted.sort_by_key(|&i| (st.beliefs[i].spec.step, st.beliefs[i].seq));
    if retracted.contains(&new) {
        rev.applied = false;
        rev.added = None;
    }
    for &i in &retracted {
        if i != new {
            rev.retracted.push(st.beliefs[i].spec.id.clone());
        }
    }
}

impl State {
    /// When Σ is inconsistent already: a minimal conflict that genuinely needs `g` (ground),
    /// or `None`. Σ's canonical maximal consistent subset among the beliefs connected to `g`
    /// (earliest first) is the one looked at: if it contradicts `g`, its preferred minimal
    /// subset that does is the answer, and it is satisfiable without `g` by construction
    /// (checked anyway, like every explanation).
    pub(super) fn blame(&self, g: &Formula) -> Result<Option<Vec<usize>>, EngineError> {
        let members = self.cone(&[g], &self.active());
        let mut fresh = Fresh::new(self, &[(g, true)], &members)?;
        let all: Vec<usize> = (0..members.len()).collect();
        let kept = if fresh.sat(false, &all, usize::MAX)? {
            all
        } else {
            let mut kept = Vec::new();
            for k in 0..members.len() {
                kept.push(k);
                if !fresh.sat(false, &kept, usize::MAX)? {
                    kept.pop();
                }
            }
            kept
        };
        let Some(m) = preferred_mus(&mut fresh, &kept)? else {
            return Ok(None);
        };
        let m: Vec<usize> = m.into_iter().map(|k| members[k]).collect();
        self.verify_mus(&[(g, true)], &m)?;
        let mut alone = Fresh::new(self, &[], &m)?;
        let every: Vec<usize> = (0..m.len()).collect();
        if !alone.sat(false, &every, usize::MAX)? {
            return Err(EngineError::Internal(
                "a conflict blamed on the announcement does not need it".into(),
            ));
        }
        Ok(Some(m))
    }
}

/// Seed 003 Algorithm 1 restricted to a validated core: the oldest prior commitment whose
/// single retraction makes Σ (with the new belief `new`) consistent.
fn greedy_single(st: &mut State, new: usize) -> Result<Option<usize>, EngineError> {
    let all = st.assumptions();
    let core = match st.main_sat().validated_core(&all, &all)? {
        Some(c) => c,
        None => return Ok(None),
    };
    let core: HashSet<Lit> = core.into_iter().collect();
    let mut cands: Vec<usize> = st
        .active()
        .into_iter()
        .filter(|&i| {
            i != new && !st.beliefs[i].spec.role.is_hard() && core.contains(&st.beliefs[i].sel)
        })
        .collect();
    cands.sort_by_key(|&i| (st.beliefs[i].spec.step, st.beliefs[i].seq));
    for c in cands {
        let sel = st.beliefs[c].sel;
        let mut a: Vec<Lit> = all.iter().copied().filter(|&l| l != sel).collect();
        a.push(!sel);
        if st.main_sat().solve(&a)? {
            return Ok(Some(c));
        }
    }
    Ok(None)
}

/// A maximal consistent subset of the retractable beliefs, built greedily in priority order
/// (newest first, or highest confidence first then newest); returns the complement (a
/// minimal correction set). The new belief is forced in under recency and ranked like the
/// others under confidence.
fn mss(st: &mut State, new: usize, by_confidence: bool) -> Result<Vec<usize>, EngineError> {
    let mut order: Vec<usize> = st
        .active()
        .into_iter()
        .filter(|&i| !st.beliefs[i].spec.role.is_hard())
        .collect();
    let key = |st: &State, i: usize| (st.beliefs[i].spec.step, st.beliefs[i].seq);
    if by_confidence {
        order.sort_by(|&a, &b| {
            st.beliefs[b]
                .spec
                .confidence
                .total_cmp(&st.beliefs[a].spec.confidence)
                .then(key(st, b).cmp(&key(st, a)))
        });
    } else {
        order.sort_by_key(|&i| std::cmp::Reverse(key(st, i)));
        // Recency forces the new belief in (it is the newest anyway).
        if let Some(p) = order.iter().position(|&i| i == new) {
            order.remove(p);
            order.insert(0, new);
        }
    }
    let universe = st.assumptions();
    let mut kept: Vec<Lit> = st.fixed_selectors();
    let mut dropped = Vec::new();
    let mut model: Option<Vec<bool>> = None;
    for i in order {
        let b = &st.beliefs[i];
        // Skip the call when the last model of the kept set already satisfies b.
        if let Some(m) = &model {
            let ok = cnf::eval(b.formula(), &mut |a| {
                st.enc
                    .atom_var(a)
                    .and_then(|v| m.get(v.index()).copied())
                    .unwrap_or(false)
            });
            if ok == Some(true) {
                kept.push(b.sel);
                continue;
            }
        }
        kept.push(b.sel);
        let mut a = kept.clone();
        switch_off(&mut a, &universe);
        if st.main_sat().solve(&a)? {
            let mut vals = vec![false; st.enc.num_vars()];
            for l in st.main.model().unwrap_or_default() {
                if let Some(v) = vals.get_mut(l.index()) {
                    *v = l.is_positive();
                }
            }
            model = Some(vals);
        } else {
            kept.pop();
            dropped.push(i);
        }
    }
    Ok(dropped)
}
