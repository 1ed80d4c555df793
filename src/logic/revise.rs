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
//! * [`Policy::Recency`] keeps the newest-first maximal consistent subset (Brewka's preferred
//!   subtheory); what it drops is a minimal correction set.
//! * [`Policy::Confidence`] does the same with the highest confidence first (ties: newer
//!   first); the new formula itself may lose.
//! * [`Policy::Reject`] refuses the new formula. [`Policy::Flag`] keeps both and marks Σ
//!   inconsistent (seed 000's third option).
//!
//! Rules and norms are never retracted. A new formula that contradicts the rules and norms
//! alone cannot be admitted by any retraction and is refused (under `flag`, a fact or
//! assumption is still kept); a conflict that involves a norm is reported in
//! [`Revision::norm_violation`].

use std::collections::HashSet;

use varisat::Lit;

use crate::logic::cnf;
use crate::logic::engine::{
    Added, BeliefSpec, EngineError, Outcome, Query, Role, State, switch_off,
};

/// How contradictions are resolved (contract: `policy greedy|recency|confidence|reject|flag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// Seed 003 Algorithm 1, with the recency fallback.
    #[default]
    Greedy,
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
    /// Parses the contract name.
    pub fn parse(s: &str) -> Option<Policy> {
        Some(match s {
            "greedy" => Policy::Greedy,
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
            Policy::Recency => "recency",
            Policy::Confidence => "confidence",
            Policy::Reject => "reject",
            Policy::Flag => "flag",
        }
    }
}

/// What an announcement did.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// The policy applied.
    pub policy: Policy,
    /// Θ(Σ, φ) before the update.
    pub outcome: Outcome,
    /// Whether φ is in Σ afterwards.
    pub applied: bool,
    /// How φ was added, when it was.
    pub added: Option<Added>,
    /// Ids retracted by the revision, oldest first.
    pub retracted: Vec<String>,
    /// A minimal conflicting set (ids, φ's included) when φ contradicted Σ.
    pub conflict: Vec<String>,
    /// Greedy only: no single retraction restored consistency and the recency subset was
    /// used instead.
    pub fallback: bool,
    /// Ids of norms involved in the conflict (φ's own id if φ is a norm).
    pub norm_violation: Vec<String>,
    /// Σ is inconsistent afterwards (only under `flag`).
    pub sigma_inconsistent: bool,
}

pub(crate) fn announce(
    st: &mut State,
    spec: BeliefSpec,
    policy: Policy,
) -> Result<Revision, EngineError> {
    if !(spec.confidence > 0.0 && spec.confidence <= 1.0) {
        return Err(EngineError::BadConfidence(spec.confidence));
    }
    let mut q = st.query(&spec.formula)?;
    let outcome = st.theta(&spec.formula, &mut q)?;
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
    };
    if outcome != Outcome::Contradiction {
        st.finish(q);
        rev.added = Some(st.add(spec)?);
        rev.applied = true;
        return Ok(rev);
    }
    let conflict = st.conflict_with(&mut q)?;
    rev.conflict = st.ids_of(&conflict);
    rev.conflict.push(spec.id.clone());
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
    match policy {
        Policy::Reject => return Ok(rev),
        Policy::Flag => {
            if hard_ok || !hard {
                rev.added = Some(st.add_inner(spec, false)?);
                rev.applied = true;
            }
            rev.sigma_inconsistent = !st.sat_with(&[], true)?;
            return Ok(rev);
        }
        _ => {}
    }
    if !hard_ok {
        return Ok(rev);
    }
    let id = spec.id.clone();
    rev.added = Some(st.add_inner(spec, false)?);
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
    let mut retracted = retracted;
    retracted.sort_by_key(|&i| (st.beliefs[i].spec.step, st.beliefs[i].seq));
    rev.applied = !retracted.contains(&new);
    if !rev.applied {
        rev.added = None;
    }
    for &i in &retracted {
        if i != new {
            rev.retracted.push(st.beliefs[i].spec.id.clone());
        }
        st.retract_index(i);
    }
    if !st.sat_with(&[], true)? {
        return Err(EngineError::Internal(
            "revision left the belief state inconsistent".into(),
        ));
    }
    Ok(rev)
}

impl State {
    /// A minimal set of active beliefs conflicting with the query `q` (made true).
    pub(crate) fn conflict_with(&mut self, q: &mut Query) -> Result<Vec<Lit>, EngineError> {
        let pos = self.pos(q).to_vec();
        let soft: Vec<Lit> = self
            .beliefs
            .iter()
            .filter(|b| b.active)
            .map(|b| b.sel)
            .collect();
        let m = self.explain_mus(&pos, soft, Some((&q.formula, true)))?;
        Ok(m.unwrap_or_default())
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
