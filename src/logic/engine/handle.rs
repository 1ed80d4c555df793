//! The handles callers hold: [`BeliefState`] (`Send`, for the REPL, the TUI, the demo) and
//! the crate's [`LocalEngine`](super::LocalEngine) (for the recomputation's long walks, see
//! `local.rs`). Both are a [`Handle`] over a *seat*, the place its [`State`] lives, so every
//! engine operation is written once, here, as a one-line request to the state; what differs
//! is only where a request runs.
//!
//! A handle keeps its own copy of the active beliefs, indexed by id ([`Replica`]), to rebuild
//! its state after a timeout or a crash (the domain is a function of them). A request on the
//! caller's thread runs through [`run_here`], the one deadline-and-rebuild path: the state's
//! solvers stop themselves at the request's deadline ([`Stop`]), and a state that overran or
//! panicked is dropped and rebuilt from the copy at the next request.
//!
//! # Where a `BeliefState`'s requests run
//!
//! `Solver` is not `Send`, so a state lives on one thread. Normally that is the thread that
//! created the handle, and requests from it run **right there** (the state sits in a
//! thread-local registry). Shipping every gate check to a solver thread and waiting for the
//! answer cost two cross-thread wake-ups per check: measured about 10 µs on an idle 2-core
//! machine and far more on a loaded one, where each wake-up waits for a core.
//!
//! The deadline does not need a second thread: every solver of the state stops itself once
//! the request's deadline has passed ([`Stop`], checked by the proof writer varisat calls on
//! every learned clause and at the end of every solve, and before every solve), which answers
//! [`EngineError::Timeout`]; the state is then rebuilt from the handle's copy of Σ at the start
//! of the next request. So a caller waits at most about [`Limits::timeout`] for a solve, as
//! before.
//!
//! A deadline inside the solver cannot bound work outside it (encoding or grounding a huge
//! formula), and recursion over a deep formula needs a big stack. So the handle moves its
//! state, for good, to a dedicated solver thread ([`Worker`], 256 MiB stack; the caller waits
//! at most until the deadline and an overrun abandons and rebuilds the state) when a
//! request's formula does not pass [`fits_inline`], and also when the handle is used from
//! another thread than the one holding its state (the state cannot follow it; it is rebuilt
//! on the solver thread from the copy).

use compact_str::CompactString;
use hashbrown::HashMap;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use super::revise::{Policy, Revision};
use super::state::HardCheck;
use super::{
    Added, BeliefSpec, Check, Consistency, EngineError, Entailment, Entails, Limits, State,
    Supports, Why, WhyNot,
};
use crate::logic::formula::{Formula, MAX_DEPTH};
use crate::logic::solver::{Overrun, Stop, Worker};

/// Requests whose formulas have at most this many nodes (at most [`INLINE_DEPTH`] deep, no
/// quantifier) may run on the caller's thread; see [`BeliefState`].
const INLINE_NODES: usize = 20_000;

/// The deepest formula handled on the caller's thread. The engine's consumers recurse over
/// formulas; at the parser's [`MAX_DEPTH`] that overflows a 2 MiB thread in a debug build
/// (measured: grounding inside `whynot`), a quarter of it leaves ample room.
const INLINE_DEPTH: usize = MAX_DEPTH / 4;

/// Whether work on `f` is small and stack-safe enough for the caller's thread: at most
/// [`INLINE_NODES`] nodes, at most [`INLINE_DEPTH`] deep, no quantifier (grounding can
/// multiply a small formula by the instance cap, and a grown domain re-grounds it on any later
/// request). The walk stops at the first violation, so it costs at most `INLINE_NODES` steps.
fn fits_inline(f: &Formula) -> bool {
    let mut stack: Vec<(&Formula, usize)> = vec![(f, 0)];
    let mut nodes = 0usize;
    while let Some((g, d)) = stack.pop() {
        nodes += 1;
        if nodes > INLINE_NODES || d > INLINE_DEPTH {
            return false;
        }
        match g {
            Formula::True | Formula::False | Formula::Atom(_) => {}
            Formula::Forall(..) | Formula::Exists(..) => return false,
            Formula::Not(h) => stack.push((h, d + 1)),
            Formula::And(hs) | Formula::Or(hs) => stack.extend(hs.iter().map(|h| (h, d + 1))),
            Formula::Implies(x, y) | Formula::Iff(x, y) => {
                stack.push((x, d + 1));
                stack.push((y, d + 1));
            }
        }
    }
    true
}

thread_local! {
    /// The states of the handles living on this thread (see [`Home::Local`]), by handle id.
    static LOCAL: RefCell<HashMap<u64, Box<State>>> = RefCell::new(HashMap::new());
}

/// Handle ids.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// States orphaned in another thread's [`LOCAL`] (their handle was dropped or moved away
/// from that thread): each thread frees its own on its next visit to [`LOCAL`].
static GRAVEYARD: Mutex<Vec<(ThreadId, u64)>> = Mutex::new(Vec::new());
static BURIED: AtomicUsize = AtomicUsize::new(0);

fn bury(thread: ThreadId, id: u64) {
    if let Ok(mut g) = GRAVEYARD.lock() {
        g.push((thread, id));
        BURIED.store(g.len(), Ordering::Relaxed);
    }
}

/// Frees this thread's orphaned states.
fn sweep() {
    if BURIED.load(Ordering::Relaxed) == 0 {
        return;
    }
    let me = thread::current().id();
    let mine: Vec<u64> = match GRAVEYARD.lock() {
        Ok(mut g) => {
            let mine = g
                .iter()
                .filter(|(t, _)| *t == me)
                .map(|&(_, id)| id)
                .collect();
            g.retain(|(t, _)| *t != me);
            BURIED.store(g.len(), Ordering::Relaxed);
            mine
        }
        Err(_) => return,
    };
    let _ = LOCAL.try_with(|m| {
        let mut m = m.borrow_mut();
        for id in mine {
            m.remove(&id);
        }
    });
}

/// A handle's copy of Σ: the active beliefs in commitment order, indexed by id. Retracted
/// slots are emptied and compacted now and then, so every operation stays proportional to Σ
/// (a recomputation makes several requests per event over traces with thousands of active
/// beliefs; scanning a plain list on each cost a quarter of the walk, measured).
#[derive(Debug, Default)]
struct Replica {
    specs: Vec<Option<BeliefSpec>>,
    /// Keyed by a copy of each id, inline up to 24 bytes, as the state's own index is.
    by_id: HashMap<CompactString, usize>,
    live: usize,
}

impl Replica {
    fn belief(&self, id: &str) -> Option<&BeliefSpec> {
        self.by_id
            .get(id)
            .and_then(|&i| self.specs.get(i))
            .and_then(Option::as_ref)
    }

    fn iter(&self) -> impl Iterator<Item = &BeliefSpec> {
        self.specs.iter().flatten()
    }

    /// Records what the state did with `spec`.
    fn added(&mut self, spec: BeliefSpec, added: Added) {
        match added {
            Added::Merged => {
                if let Some(&i) = self.by_id.get(spec.id.as_str())
                    && let Some(Some(b)) = self.specs.get_mut(i)
                {
                    b.step = spec.step;
                    b.confidence = spec.confidence;
                }
            }
            Added::New => {
                self.forget(&spec.id);
                let id = CompactString::from(spec.id.as_str());
                self.by_id.insert(id, self.specs.len());
                self.specs.push(Some(spec));
                self.live += 1;
            }
        }
    }

    fn forget(&mut self, id: &str) {
        if let Some(i) = self.by_id.remove(id)
            && let Some(slot) = self.specs.get_mut(i)
            && slot.take().is_some()
        {
            self.live -= 1;
        }
        // Compact when most slots are empty, so iteration stays proportional to Σ.
        if self.specs.len() > 64 && self.live * 2 < self.specs.len() {
            self.specs.retain(Option::is_some);
            self.by_id.clear();
            for (i, s) in self.specs.iter().enumerate() {
                if let Some(s) = s {
                    self.by_id.insert(CompactString::from(s.id.as_str()), i);
                }
            }
        }
    }
}

/// A fresh state holding a copy of Σ (the domain is a function of Σ). Every one of these
/// beliefs was accepted before, so the hard part is known consistent and is not checked.
fn replay(stop: Arc<Stop>, limits: Limits, specs: Vec<BeliefSpec>) -> State {
    let mut s = State::new(stop, limits);
    for spec in specs {
        let _ = s.add_inner(spec, HardCheck::Skip);
    }
    s.built_from_sigma();
    s
}

/// Runs one request on a state held on this thread, under `deadline`: the one
/// deadline-and-rebuild path of every handle. `held` is the state (`None`: it overran or
/// panicked before and is rebuilt now from `specs`); the state comes back unless this
/// request overran or panicked, which may have left it half-updated.
pub(super) fn run_here<R>(
    held: Option<Box<State>>,
    limits: Limits,
    deadline: Option<Instant>,
    specs: &dyn Fn() -> Vec<BeliefSpec>,
    f: impl FnOnce(&mut State) -> Result<R, EngineError>,
) -> (Option<Box<State>>, Result<R, EngineError>) {
    let mut st = held.unwrap_or_else(|| Box::new(replay(Stop::new(), limits, specs())));
    match deadline {
        Some(d) => st.cancel.set_deadline(d),
        None => st.cancel.clear_deadline(),
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut st))) {
        // The state's solvers are stopped for good: drop it.
        Ok(Err(EngineError::Timeout)) => (None, Err(EngineError::Timeout)),
        Ok(r) => {
            st.cancel.clear_deadline();
            (Some(st), r)
        }
        Err(_) => (None, Err(EngineError::Crashed)),
    }
}

/// Where a handle's state lives and how a request reaches it: [`Shared`] for
/// [`BeliefState`], `Owned` for the local engine. Not nameable outside this module.
pub trait Seat {
    /// Runs `f` on the state under `deadline`, rebuilding the state from `specs` (the
    /// handle's copy of Σ) when it is gone; `fits` says whether the request may run on the
    /// caller's thread (seats that always run there need not ask). A request that overran
    /// answers [`EngineError::Timeout`] and one that panicked [`EngineError::Crashed`];
    /// either way the state is rebuilt before the next request runs.
    fn run<R: Send + 'static>(
        &mut self,
        limits: Limits,
        deadline: Option<Instant>,
        fits: &dyn Fn() -> bool,
        specs: &dyn Fn() -> Vec<BeliefSpec>,
        f: impl FnOnce(&mut State) -> Result<R, EngineError> + Send + 'static,
    ) -> Result<R, EngineError>;
}

/// A belief state behind a handle: every engine operation, written once for every seat
/// (see the module docs). Callers name it [`BeliefState`] or `LocalEngine`.
pub struct Handle<S> {
    pub(super) seat: S,
    copy: Replica,
    limits: Limits,
    rebuilds: u64,
}

/// The `Send` handle of a belief state (see the module docs for where its requests run).
pub type BeliefState = Handle<Shared>;

impl<S: Seat> Handle<S> {
    pub(super) fn with_seat(seat: S, limits: Limits) -> Self {
        Handle {
            seat,
            copy: Replica::default(),
            limits,
            rebuilds: 0,
        }
    }

    /// Runs `f` on the state (on the caller's thread when the seat allows it and `fits`).
    fn call<R: Send + 'static>(
        &mut self,
        fits: impl Fn() -> bool,
        f: impl FnOnce(&mut State) -> Result<R, EngineError> + Send + 'static,
    ) -> Result<R, EngineError> {
        let deadline = Instant::now().checked_add(self.limits.timeout);
        let copy = &self.copy;
        let specs = || copy.iter().cloned().collect::<Vec<_>>();
        let r = self.seat.run(self.limits, deadline, &fits, &specs, f);
        if let Err(EngineError::Timeout | EngineError::Crashed) = r {
            self.rebuilds += 1;
        }
        r
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Changes the per-request timeout.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.limits.timeout = timeout;
    }

    /// How many times the state was rebuilt after a timeout or crash.
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// The active beliefs in commitment order.
    pub fn beliefs(&self) -> impl Iterator<Item = &BeliefSpec> {
        self.copy.iter()
    }

    /// The active belief `id`.
    pub fn belief(&self, id: &str) -> Option<&BeliefSpec> {
        self.copy.belief(id)
    }

    /// Adds a belief without gate or revision (see [`State::add`]).
    pub fn add(&mut self, spec: BeliefSpec) -> Result<Added, EngineError> {
        let s = spec.clone();
        let added = self.call(|| fits_inline(&spec.formula), move |st| st.add(s))?;
        self.copy.added(spec, added);
        Ok(added)
    }

    /// Adds a belief; a rule or norm that contradicts the hard part joins as an assumption
    /// (`true` then), without the minimal conflict [`Handle::add`] would name (see
    /// [`State::add_or_demote`]).
    pub(crate) fn add_or_demote(&mut self, spec: BeliefSpec) -> Result<(Added, bool), EngineError> {
        let s = spec.clone();
        let (added, demoted) =
            self.call(|| fits_inline(&spec.formula), move |st| st.add_or_demote(s))?;
        let kept = if demoted {
            spec.role(super::Role::Assumption)
        } else {
            spec
        };
        self.copy.added(kept, added);
        Ok((added, demoted))
    }

    /// Adds a belief without checking a rule or norm against the hard part (no solve): for
    /// a belief a trace says joined Σ after that check ran out of time.
    pub(crate) fn add_unchecked(&mut self, spec: BeliefSpec) -> Result<Added, EngineError> {
        let s = spec.clone();
        let added = self.call(
            || fits_inline(&spec.formula),
            move |st| st.add_inner(s, HardCheck::Skip),
        )?;
        self.copy.added(spec, added);
        Ok(added)
    }

    /// Retracts the active belief `id`; `false` if there is none.
    pub fn retract(&mut self, id: &str) -> Result<bool, EngineError> {
        let i = id.to_string();
        let done = self.call(|| true, move |st| Ok(st.retract(&i)))?;
        self.copy.forget(id);
        Ok(done)
    }

    /// Is Σ consistent? If not, a minimal conflicting subset.
    pub fn consistent(&mut self) -> Result<Consistency, EngineError> {
        self.call(|| true, |st| st.consistent())
    }

    /// The gate Θ(Σ, Δ); `because` = the cited premise ids, if the claim cites any.
    pub fn check(
        &mut self,
        delta: &Formula,
        because: Option<&[String]>,
    ) -> Result<Check, EngineError> {
        let d = delta.clone();
        let b = because.map(|b| b.to_vec());
        self.call(|| fits_inline(delta), move |st| st.check(&d, b.as_deref()))
    }

    /// Entailed / contradicted / unknown, with N(φ) when graded.
    pub fn entails(&mut self, phi: &Formula) -> Result<Entailment, EngineError> {
        let f = phi.clone();
        self.call(|| fits_inline(phi), move |st| st.entails(&f))
    }

    /// Entailed / contradicted / unknown, without N(φ) (a solve per confidence level that
    /// callers reporting only the three-way answer should not pay).
    pub(crate) fn entails_plain(&mut self, phi: &Formula) -> Result<Entails, EngineError> {
        let f = phi.clone();
        self.call(|| fits_inline(phi), move |st| st.entails_plain(&f))
    }

    /// One minimal support set of φ.
    pub fn why(&mut self, phi: &Formula) -> Result<Why, EngineError> {
        let f = phi.clone();
        self.call(|| fits_inline(phi), move |st| st.why(&f))
    }

    /// All minimal support sets of φ (at most `max`, within `budget`).
    pub fn supports(
        &mut self,
        phi: &Formula,
        max: usize,
        budget: Duration,
    ) -> Result<Supports, EngineError> {
        let f = phi.clone();
        self.call(|| fits_inline(phi), move |st| st.supports(&f, max, budget))
    }

    /// A validated countermodel of Σ ⊨ φ.
    pub fn whynot(&mut self, phi: &Formula) -> Result<WhyNot, EngineError> {
        let f = phi.clone();
        self.call(|| fits_inline(phi), move |st| st.whynot(&f))
    }

    /// The gate, then the update: a consistent belief is added; a contradicting one is
    /// resolved by `policy` (see [`crate::logic::revise`]).
    pub fn announce(&mut self, spec: BeliefSpec, policy: Policy) -> Result<Revision, EngineError> {
        let s = spec.clone();
        let rev = self.call(
            || fits_inline(&spec.formula),
            move |st| st.announce(s, policy),
        )?;
        self.applied(spec, &rev);
        Ok(rev)
    }

    /// Announces many beliefs in one request (one channel round trip instead of one per
    /// belief: what a trace replay wants). Each gets its own result, in order; the whole
    /// batch shares one deadline, and on a timeout none of it is applied.
    pub fn announce_many(
        &mut self,
        specs: Vec<BeliefSpec>,
        policy: Policy,
    ) -> Result<Vec<Result<Revision, EngineError>>, EngineError> {
        let batch = specs.clone();
        let fits = || specs.iter().all(|s| fits_inline(&s.formula));
        let out = self.call(fits, move |st| {
            let mut out = Vec::with_capacity(batch.len());
            for spec in batch {
                match st.announce(spec, policy) {
                    Err(EngineError::Timeout) => return Err(EngineError::Timeout),
                    r => out.push(r),
                }
            }
            Ok(out)
        })?;
        for (spec, r) in specs.into_iter().zip(&out) {
            if let Ok(rev) = r {
                self.applied(spec, rev);
            }
        }
        Ok(out)
    }

    /// Brings the copy of Σ up to date with what an announcement did.
    fn applied(&mut self, spec: BeliefSpec, rev: &Revision) {
        for id in &rev.retracted {
            self.copy.forget(id);
        }
        if let Some(added) = rev.added {
            self.copy.added(spec, added);
        }
    }

    /// Inc(Σ): the highest confidence level whose cut is inconsistent (0 if consistent).
    pub fn inconsistency_degree(&mut self) -> Result<f64, EngineError> {
        self.call(|| true, |st| st.inconsistency_degree())
    }

    /// N(φ): the highest level above Inc(Σ) whose cut entails φ (0 if none).
    pub fn necessity(&mut self, phi: &Formula) -> Result<f64, EngineError> {
        let f = phi.clone();
        self.call(|| fits_inline(phi), move |st| st.necessity(&f))
    }

    /// B≥k φ: the cut at k entails φ and k is above Inc(Σ).
    pub fn believes_at_least(&mut self, phi: &Formula, k: f64) -> Result<bool, EngineError> {
        let f = phi.clone();
        self.call(|| fits_inline(phi), move |st| st.believes_at_least(&f, k))
    }

    /// The active beliefs as the state itself holds them (not the handle's copy), in
    /// commitment order: for cross-checking that every change to Σ was reported.
    pub fn held(&mut self) -> Result<Vec<BeliefSpec>, EngineError> {
        self.call(|| true, |st| Ok(st.held()))
    }

    /// (main-solver solves, invalid cores detected and replaced) so far.
    pub fn stats(&mut self) -> Result<(u64, u64), EngineError> {
        self.call(|| true, |st| Ok(st.stats()))
    }
}

impl BeliefState {
    /// An empty state with default limits.
    pub fn new() -> Result<Self, EngineError> {
        Self::with_limits(Limits::default())
    }

    /// An empty state with the given limits, living on this thread.
    pub fn with_limits(limits: Limits) -> Result<Self, EngineError> {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let st = Box::new(State::new(Stop::new(), limits));
        sweep();
        LOCAL
            .try_with(|m| m.borrow_mut().insert(id, st))
            .map_err(|_| EngineError::Internal("thread-local storage is gone".into()))?;
        let home = Home::Local {
            thread: thread::current().id(),
            id,
        };
        Ok(Handle::with_seat(Shared(home), limits))
    }
}

/// Where a [`BeliefState`]'s state lives (see the module docs).
pub struct Shared(Home);

enum Home {
    /// In [`LOCAL`] of `thread` under `id` (absent while a request runs, and after a
    /// request overran until the next request rebuilds it).
    Local { thread: ThreadId, id: u64 },
    /// On a dedicated solver thread.
    Worker(Worker<State>),
}

impl Shared {
    /// Moves the state to a dedicated solver thread, rebuilt there from `specs`.
    fn move_to_worker(
        &mut self,
        limits: Limits,
        specs: Vec<BeliefSpec>,
    ) -> Result<(), EngineError> {
        let w = Worker::spawn(move |c| replay(c, limits, specs))
            .map_err(|e| EngineError::Internal(format!("cannot start the solver thread: {e}")))?;
        if let Home::Local { thread, id } = std::mem::replace(&mut self.0, Home::Worker(w)) {
            if thread == thread::current().id() {
                let _ = LOCAL.try_with(|m| m.borrow_mut().remove(&id));
            } else {
                bury(thread, id);
            }
        }
        Ok(())
    }
}

impl Seat for Shared {
    fn run<R: Send + 'static>(
        &mut self,
        limits: Limits,
        deadline: Option<Instant>,
        fits: &dyn Fn() -> bool,
        specs: &dyn Fn() -> Vec<BeliefSpec>,
        f: impl FnOnce(&mut State) -> Result<R, EngineError> + Send + 'static,
    ) -> Result<R, EngineError> {
        if let Home::Local { thread, id } = self.0 {
            if thread == thread::current().id() && fits() {
                sweep();
                let held = LOCAL
                    .try_with(|m| m.borrow_mut().remove(&id))
                    .map_err(|_| EngineError::Internal("thread-local storage is gone".into()))?;
                let (back, r) = run_here(held, limits, deadline, specs, f);
                if let Some(st) = back {
                    let _ = LOCAL.try_with(|m| m.borrow_mut().insert(id, st));
                }
                return r;
            }
            self.move_to_worker(limits, specs())?;
        }
        let Home::Worker(w) = &self.0 else {
            return Err(EngineError::Internal("no solver thread".into()));
        };
        let r = match w.run(deadline, f) {
            Ok(Err(EngineError::Timeout)) | Err(Overrun::Timeout) => Err(EngineError::Timeout),
            Ok(r) => r,
            Err(Overrun::Crashed) => Err(EngineError::Crashed),
        };
        if let Err(EngineError::Timeout | EngineError::Crashed) = r {
            // A fresh state from the copy, on a new solver thread. If the thread cannot be
            // started, the cancelled worker stays: it answers Timeout until a later
            // rebuild succeeds.
            let _ = self.move_to_worker(limits, specs());
        }
        r
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Home::Local { thread, id } = self.0 {
            if thread == thread::current().id() {
                let _ = LOCAL.try_with(|m| m.borrow_mut().remove(&id));
            } else {
                bury(thread, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::engine::{Outcome, Role};
    use crate::logic::formula::Atom;
    use crate::logic::oracle;
    use proptest::prelude::*;

    fn lit(v: u8, positive: bool) -> Formula {
        let a = Formula::Atom(Atom::Prop(format!("a{v}")));
        if positive {
            a
        } else {
            Formula::Not(Box::new(a))
        }
    }

    /// One step of a T1-shaped stream: a clause of 1-3 literals and what to do with it.
    fn step() -> impl Strategy<Value = (Vec<(u8, bool)>, u8)> {
        (
            prop::collection::vec((0u8..7, any::<bool>()), 1..4),
            0u8..20,
        )
    }

    fn clause(lits: &[(u8, bool)]) -> Formula {
        if let [(v, p)] = lits {
            lit(*v, *p)
        } else {
            Formula::Or(lits.iter().map(|&(v, p)| lit(v, p)).collect())
        }
    }

    fn held_here(id: u64) -> bool {
        LOCAL.with(|m| m.borrow().contains_key(&id))
    }

    fn local_id(st: &BeliefState) -> Option<u64> {
        match st.seat.0 {
            Home::Local { id, .. } => Some(id),
            Home::Worker(_) => None,
        }
    }

    /// Requests run on the creating thread; a handle sent elsewhere takes its Σ along (its
    /// state is rebuilt on a solver thread) and the state left behind is freed.
    #[test]
    fn states_live_on_the_creating_thread_and_follow_the_handle() {
        let mut st = BeliefState::new().unwrap();
        st.add(BeliefSpec::new("a", lit(1, true))).unwrap();
        st.add(BeliefSpec::new(
            "r",
            Formula::Or(vec![lit(1, false), lit(2, true)]),
        ))
        .unwrap();
        assert_eq!(
            st.check(&lit(2, true), None).unwrap().outcome,
            Outcome::Entailed
        );
        let id = local_id(&st).expect("local");
        assert!(held_here(id));
        let st = thread::spawn(move || {
            assert_eq!(
                st.check(&lit(2, true), None).unwrap().outcome,
                Outcome::Entailed
            );
            assert_eq!(st.why(&lit(2, true)).unwrap().support, vec!["a", "r"]);
            assert!(local_id(&st).is_none());
            st
        })
        .join()
        .unwrap();
        // Sweeping happens on this thread's next visit.
        let _other = BeliefState::new().unwrap();
        assert!(!held_here(id));
        drop(st);
        let mut st = BeliefState::new().unwrap();
        let id = local_id(&st).expect("local");
        st.add(BeliefSpec::new("a", lit(1, true))).unwrap();
        thread::spawn(move || drop(st)).join().unwrap();
        let _other = BeliefState::new().unwrap();
        assert!(!held_here(id));
    }

    /// The domain is Σ's constants and witnesses plus the query's, whatever was asked before
    /// and on whichever thread. Over {a}, `∀x. ∃y. R(x, y)` (outside the exact fragment: its
    /// `∃` ranges over the domain) says `R(a, a)`; asking about `b` (domain {a, b} for that
    /// question alone) does not change that for later questions, before or after the state
    /// moves to the solver thread.
    #[test]
    fn the_domain_does_not_remember_queries() {
        use crate::logic::formula::Term;
        let r = |a: &str, b: &str| {
            Formula::Atom(Atom::Pred(
                "R".into(),
                vec![Term::Const(a.into()), Term::Const(b.into())],
            ))
        };
        let mut st = BeliefState::new().unwrap();
        st.add(BeliefSpec::new(
            "qa",
            Formula::Atom(Atom::Pred("Q".into(), vec![Term::Const("a".into())])),
        ))
        .unwrap();
        assert_eq!(
            st.check(&r("b", "b"), None).unwrap().outcome,
            Outcome::NewInfo
        );
        assert!(local_id(&st).is_some());
        let var = |v: &str| Term::Var(v.into());
        let total = Formula::Forall(
            vec!["x".into()],
            Box::new(Formula::Exists(
                vec!["y".into()],
                Box::new(Formula::Atom(Atom::Pred(
                    "R".into(),
                    vec![var("x"), var("y")],
                ))),
            )),
        );
        st.add(BeliefSpec::new("total", total)).unwrap();
        assert!(
            local_id(&st).is_none(),
            "quantified beliefs go to the solver thread"
        );
        assert_eq!(
            st.check(&r("a", "a"), None).unwrap().outcome,
            Outcome::Entailed
        );
        assert_eq!(
            st.check(&r("a", "b"), None).unwrap().outcome,
            Outcome::NewInfo
        );
        assert_eq!(
            st.check(&r("a", "a"), None).unwrap().outcome,
            Outcome::Entailed
        );
    }

    /// A hand-built formula deeper than the parser allows is handled on the big-stack
    /// solver thread, from a test thread with a small stack.
    /// A formula of `depth` nested connectives over three atoms.
    fn nested(depth: usize) -> Formula {
        let mut f = lit(3, true);
        let mut d = 0;
        while d + 2 <= depth {
            f = if d % 4 == 0 {
                Formula::Or(vec![Formula::Not(Box::new(f)), lit(4, d % 8 == 0)])
            } else {
                Formula::And(vec![Formula::Not(Box::new(f)), lit(5, true)])
            };
            d += 2;
        }
        f
    }

    /// Gate, why, why-not and add of `f` (over atoms 3-5) agree with the oracle; returns
    /// whether the state stayed on this thread.
    fn exercise(f: &Formula) -> bool {
        let mut st = BeliefState::new().unwrap();
        st.add(BeliefSpec::new("a", lit(3, true))).unwrap();
        st.add(BeliefSpec::new("b", lit(5, true))).unwrap();
        let (a, b) = (lit(3, true), lit(5, true));
        let expect = if !oracle::satisfiable(&[&a, &b, f]) {
            Outcome::Contradiction
        } else if oracle::entails(&[&a, &b], f) {
            Outcome::Entailed
        } else {
            Outcome::NewInfo
        };
        assert_eq!(st.check(f, None).unwrap().outcome, expect);
        assert_eq!(st.why(f).unwrap().entailed, expect == Outcome::Entailed);
        let cm = st.whynot(f).unwrap().countermodel;
        assert_eq!(cm.is_none(), expect == Outcome::Entailed);
        st.add(BeliefSpec::new("deep", f.clone())).unwrap();
        local_id(&st).is_some()
    }

    /// On the 2 MiB test thread of a debug build: formulas up to the inline depth run here,
    /// deeper ones (up to the parser's limit and beyond) on the solver thread.
    #[test]
    fn deep_formulas_run_where_the_stack_fits() {
        assert!(exercise(&nested(INLINE_DEPTH)));
        assert!(!exercise(&nested(MAX_DEPTH)));
    }

    #[test]
    fn deep_formulas_go_to_the_solver_thread() {
        let mut deep = lit(3, true);
        for _ in 0..MAX_DEPTH / 2 + 10 {
            deep = Formula::Not(Box::new(Formula::Not(Box::new(deep))));
        }
        assert!(!fits_inline(&deep));
        let mut st = BeliefState::new().unwrap();
        st.add(BeliefSpec::new("a", lit(3, true))).unwrap();
        assert_eq!(st.check(&deep, None).unwrap().outcome, Outcome::Entailed);
        assert!(local_id(&st).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// The gate-then-add stream the TUI, the audit and the benchmark run, long enough to
        /// cross several probe batches, with retractions (stale snapshot, selector solver,
        /// rebuilt snapshot), rules, announcements and explanations interleaved: every
        /// verdict agrees with the truth-table oracle on the beliefs actually held.
        #[test]
        fn gate_then_add_streams_agree_with_oracle(
            steps in prop::collection::vec(step(), 120..200),
        ) {
            let mut st = BeliefState::new().unwrap();
            for (i, (lits, op)) in steps.iter().enumerate() {
                let delta = clause(lits);
                let held: Vec<Formula> = st.beliefs().map(|b| (*b.formula).clone()).collect();
                let sigma: Vec<&Formula> = held.iter().collect();
                let expect = oracle::theta(&sigma, &delta);
                let id = format!("s{i}");
                // `entails` reads both sides: for a clause that retires a probe every step,
                // so the stream crosses several probe batches.
                if i % 2 == 0 {
                    let e = st.entails(&delta).unwrap().result;
                    let want = if expect == Outcome::Entailed && oracle::satisfiable(&sigma) {
                        Entails::Entailed
                    } else if expect == Outcome::Contradiction {
                        Entails::Contradicted
                    } else {
                        Entails::Unknown
                    };
                    prop_assert_eq!(e, want);
                }
                match op {
                    // Retract the oldest belief.
                    0 => {
                        let oldest = st.beliefs().next().map(|b| b.id.clone());
                        if let Some(b) = oldest {
                            prop_assert!(st.retract(&b).unwrap());
                        }
                    }
                    // A rule, when it keeps Σ consistent.
                    1 if expect != Outcome::Contradiction => {
                        let spec = BeliefSpec::new(id, delta.clone()).role(Role::Rule);
                        prop_assert!(st.add(spec).is_ok());
                    }
                    // The announce path (gate and update in one request).
                    2..=4 => {
                        let rev = st
                            .announce(BeliefSpec::new(id, delta.clone()).step(i as u64), Policy::Reject)
                            .unwrap();
                        prop_assert_eq!(rev.outcome, expect);
                        prop_assert_eq!(rev.applied, expect != Outcome::Contradiction);
                    }
                    _ => {
                        let got = st.check(&delta, None).unwrap().outcome;
                        prop_assert_eq!(got, expect);
                        match got {
                            Outcome::NewInfo => {
                                st.add(BeliefSpec::new(id, delta.clone()).step(i as u64)).unwrap();
                            }
                            Outcome::Entailed if op % 5 == 0 => {
                                let why = st.why(&delta).unwrap();
                                prop_assert!(why.entailed);
                                let support: Vec<&Formula> = st
                                    .beliefs()
                                    .filter(|b| why.support.contains(&b.id))
                                    .map(|b| &*b.formula)
                                    .collect();
                                prop_assert!(oracle::entails(&support, &delta));
                            }
                            _ => {}
                        }
                    }
                }
            }
            let held: Vec<Formula> = st.beliefs().map(|b| (*b.formula).clone()).collect();
            let sigma: Vec<&Formula> = held.iter().collect();
            prop_assert_eq!(st.consistent().unwrap().consistent, oracle::satisfiable(&sigma));
        }

        /// Rules and norms are accepted exactly when they keep the rules and norms held
        /// satisfiable, through replacements (same id, new formula) and retractions, with
        /// facts in between: the rules-only solver and the main solver's fallback together
        /// agree with the truth-table oracle in both directions, and a refusal names a
        /// conflict that contains the new rule.
        #[test]
        fn rules_are_accepted_exactly_when_the_hard_part_stays_satisfiable(
            steps in prop::collection::vec(step(), 30..80),
        ) {
            let mut st = BeliefState::new().unwrap();
            for (i, (lits, op)) in steps.iter().enumerate() {
                let f = clause(lits);
                let held: Vec<(String, Formula, Role)> = st
                    .beliefs()
                    .map(|b| (b.id.clone(), (*b.formula).clone(), b.role))
                    .collect();
                match op {
                    0..=2 => {
                        if let Some((id, _, _)) = held.get(usize::from(*op) * 7 % held.len().max(1)) {
                            prop_assert!(st.retract(id).unwrap());
                        }
                    }
                    3..=6 => {
                        st.add(BeliefSpec::new(format!("f{i}"), f)).unwrap();
                    }
                    _ => {
                        // Every third rule replaces an earlier one under its id.
                        let id = format!("r{}", if op % 3 == 0 { i / 4 } else { i });
                        let mut hard: Vec<&Formula> = held
                            .iter()
                            .filter(|(_, _, r)| r.is_hard())
                            .map(|(_, g, _)| g)
                            .collect();
                        hard.push(&f);
                        let fits = oracle::satisfiable(&hard);
                        let role = if op % 2 == 0 { Role::Rule } else { Role::Norm };
                        match st.add(BeliefSpec::new(id.clone(), f).role(role)) {
                            Ok(_) => prop_assert!(fits, "accepted a rule that contradicts the rules"),
                            Err(EngineError::HardConflict(ids)) => {
                                prop_assert!(!fits, "refused a rule that fits");
                                prop_assert!(ids.contains(&id));
                            }
                            Err(e) => return Err(TestCaseError::fail(e.to_string())),
                        }
                    }
                }
            }
        }
    }
}
