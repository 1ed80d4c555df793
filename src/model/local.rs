//! A belief state driven on the calling thread, for the recomputation's long walks.
//!
//! [`BeliefState`](crate::logic::engine::BeliefState) keeps a `Vec` copy of Σ that it scans
//! on every add, retract and `belief(id)`, and moves its state to a solver thread for
//! formulas too deep for the caller's stack. That is the right shape for interactive use (the
//! REPL, the TUI), but a recomputation makes several requests per event over traces of
//! 100,000 events with thousands of active beliefs: measured on the audit bench, the scans of
//! the copy cost about a quarter of the walk. [`LocalEngine`] drives the same [`State`]
//! directly, keeps the active beliefs indexed by id, and enforces the per-request timeout
//! with the state's own deadline ([`Stop`]). After a timeout or a panic inside the engine the
//! state is rebuilt from the active beliefs, as `BeliefState` does.
//!
//! The engine recurses over formulas, so it must run on a thread with a large stack: the
//! caller arranges that ([`run_with_stack`]).

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::logic::engine::{
    Added, BeliefSpec, Check, Consistency, EngineError, Entails, Limits, State, Supports,
};
use crate::logic::formula::Formula;
use crate::logic::revise::{Policy, Revision};
use crate::logic::solver::Stop;

/// The stack the engine's solver thread gets (formulas are walked recursively).
const STACK: usize = 256 << 20;

/// Runs `f` on a fresh thread with the engine's stack size and returns its result (on the
/// calling thread when the OS refuses a thread). A panic in `f` is propagated.
pub(crate) fn run_with_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let mut f = Some(f);
    let spawned = thread::scope(|s| {
        let job = &mut f;
        let h = thread::Builder::new()
            .name("doxascope-recompute".into())
            .stack_size(STACK)
            .spawn_scoped(s, move || job.take().map(|f| f()));
        match h {
            Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            Err(_) => None,
        }
    });
    match (spawned, f) {
        (Some(r), _) => r,
        (None, Some(f)) => f(),
        // The thread took the job, so it returned its result above.
        (None, None) => unreachable!("the recomputation thread ran without a result"),
    }
}

/// A belief state on the calling thread (see the module docs). The API follows
/// [`BeliefState`](crate::logic::engine::BeliefState).
pub(crate) struct LocalEngine {
    state: State,
    stop: Arc<Stop>,
    limits: Limits,
    /// Active beliefs in commitment order (`None`: retracted, compacted now and then).
    specs: Vec<Option<BeliefSpec>>,
    by_id: HashMap<String, usize>,
    live: usize,
    rebuilds: u64,
}

impl LocalEngine {
    /// An empty state.
    pub(crate) fn with_limits(limits: Limits) -> LocalEngine {
        let stop = Stop::new();
        LocalEngine {
            state: State::new(Arc::clone(&stop), limits),
            stop,
            limits,
            specs: Vec::new(),
            by_id: HashMap::new(),
            live: 0,
            rebuilds: 0,
        }
    }

    /// The limits in force.
    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// How many times the state was rebuilt after a timeout or a panic.
    pub(crate) fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// The active belief `id`.
    pub(crate) fn belief(&self, id: &str) -> Option<&BeliefSpec> {
        self.by_id
            .get(id)
            .and_then(|&i| self.specs.get(i))
            .and_then(Option::as_ref)
    }

    /// The active beliefs in commitment order.
    pub(crate) fn beliefs(&self) -> impl Iterator<Item = &BeliefSpec> {
        self.specs.iter().flatten()
    }

    fn rebuild(&mut self) {
        self.rebuilds += 1;
        // The old state's solvers are stopped for good; the new one gets its own conditions.
        self.stop = Stop::new();
        let mut st = State::new(Arc::clone(&self.stop), self.limits);
        for spec in self.specs.iter().flatten() {
            // Every one of these was accepted before; the hard part is known consistent.
            let _ = st.add_inner(spec.clone(), false);
        }
        self.state = st;
    }

    /// One request under the deadline; a timeout or a panic rebuilds the state.
    fn call<R>(
        &mut self,
        f: impl FnOnce(&mut State) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        match Instant::now().checked_add(self.limits.timeout) {
            Some(d) => self.stop.set_deadline(d),
            None => self.stop.clear_deadline(),
        }
        let r = catch_unwind(AssertUnwindSafe(|| f(&mut self.state)));
        self.stop.clear_deadline();
        match r {
            Ok(Err(EngineError::Timeout)) => {
                self.rebuild();
                Err(EngineError::Timeout)
            }
            Ok(r) => r,
            Err(_) => {
                self.rebuild();
                Err(EngineError::Crashed)
            }
        }
    }

    fn remember(&mut self, spec: BeliefSpec, added: Added) {
        match added {
            Added::Merged => {
                if let Some(&i) = self.by_id.get(&spec.id)
                    && let Some(Some(b)) = self.specs.get_mut(i)
                {
                    b.step = spec.step;
                    b.confidence = spec.confidence;
                }
            }
            Added::New => {
                self.forget(&spec.id);
                self.by_id.insert(spec.id.clone(), self.specs.len());
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
                    self.by_id.insert(s.id.clone(), i);
                }
            }
        }
    }

    /// Adds a belief (see [`State::add`]).
    pub(crate) fn add(&mut self, spec: BeliefSpec) -> Result<Added, EngineError> {
        let s = spec.clone();
        let added = self.call(move |st| st.add(s))?;
        self.remember(spec, added);
        Ok(added)
    }

    /// Adds a belief without checking a rule or norm against the hard part (no solve): for
    /// a belief the trace says joined Σ after that check ran out of time.
    pub(crate) fn add_unchecked(&mut self, spec: BeliefSpec) -> Result<Added, EngineError> {
        let s = spec.clone();
        let added = self.call(move |st| st.add_inner(s, false))?;
        self.remember(spec, added);
        Ok(added)
    }

    /// Retracts the active belief `id`; `false` if there is none.
    pub(crate) fn retract(&mut self, id: &str) -> Result<bool, EngineError> {
        let done = self.call(|st| Ok(st.retract(id)))?;
        self.forget(id);
        Ok(done)
    }

    /// Is Σ consistent? If not, a minimal conflicting subset.
    pub(crate) fn consistent(&mut self) -> Result<Consistency, EngineError> {
        self.call(|st| st.consistent())
    }

    /// The gate Θ(Σ, Δ); `because` = the cited premise ids, if any.
    pub(crate) fn check(
        &mut self,
        delta: &Formula,
        because: Option<&[String]>,
    ) -> Result<Check, EngineError> {
        self.call(|st| st.check(delta, because))
    }

    /// Entailed / contradicted / unknown (without the necessity degree).
    pub(crate) fn entails(&mut self, phi: &Formula) -> Result<Entails, EngineError> {
        self.call(|st| st.entails_plain(phi))
    }

    /// All minimal support sets of φ (at most `max`, within `budget`).
    pub(crate) fn supports(
        &mut self,
        phi: &Formula,
        max: usize,
        budget: Duration,
    ) -> Result<Supports, EngineError> {
        self.call(|st| st.supports(phi, max, budget))
    }

    /// The gate, then the update under `policy` (see [`State::announce`]).
    pub(crate) fn announce(
        &mut self,
        spec: BeliefSpec,
        policy: Policy,
    ) -> Result<Revision, EngineError> {
        let s = spec.clone();
        let rev = self.call(move |st| st.announce(s, policy))?;
        for id in &rev.retracted {
            self.forget(id);
        }
        if let Some(added) = rev.added {
            self.remember(spec, added);
        }
        Ok(rev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::engine::{BeliefState, Outcome, Role};
    use crate::logic::parse::parse;

    fn spec(id: &str, f: &str, step: u64) -> BeliefSpec {
        BeliefSpec::new(id, parse(f).expect("formula")).step(step)
    }

    /// The local engine answers as the threaded one, step by step, on a walk with merges,
    /// replacements, retractions and rules.
    #[test]
    fn agrees_with_the_threaded_engine() {
        let mut a = LocalEngine::with_limits(Limits::default());
        let mut b = BeliefState::new().expect("engine");
        let walk: Vec<(&str, &str, Role)> = vec![
            ("p", "p", Role::Fact),
            ("r", "p -> q", Role::Rule),
            ("p", "p", Role::Fact),
            ("s", "!q | t", Role::Assumption),
            ("u", "!t", Role::Fact),
            ("p", "p & w", Role::Fact),
        ];
        for (i, (id, f, role)) in walk.into_iter().enumerate() {
            let s = spec(id, f, i as u64).role(role);
            assert_eq!(a.add(s.clone()).ok(), b.add(s).ok());
            let ids_a: Vec<&str> = a.beliefs().map(|s| s.id.as_str()).collect();
            let ids_b: Vec<&str> = b.beliefs().iter().map(|s| s.id.as_str()).collect();
            assert_eq!(ids_a, ids_b);
            assert_eq!(a.belief(id).map(|s| s.step), b.belief(id).map(|s| s.step));
            let (ca, cb) = (a.consistent().expect("a"), b.consistent().expect("b"));
            assert_eq!(ca.consistent, cb.consistent);
            for q in ["q", "t", "w", "!p"] {
                let q = parse(q).expect("query");
                assert_eq!(
                    a.check(&q, None).expect("a").theta,
                    b.check(&q, None).expect("b").theta
                );
            }
        }
        assert!(a.retract("u").expect("a"));
        assert!(!a.retract("u").expect("a"));
        assert!(a.belief("u").is_none());
        assert!(a.consistent().expect("a").consistent);
        let t = parse("t").expect("t");
        assert_eq!(a.check(&t, None).expect("a").theta, Outcome::Entailed);
    }

    /// Many retractions compact the index without losing an active belief.
    #[test]
    fn compaction_keeps_the_active_beliefs() {
        let mut a = LocalEngine::with_limits(Limits::default());
        for i in 0..200u64 {
            a.add(spec(&format!("b{i}"), &format!("x{i}"), i))
                .expect("add");
        }
        for i in (0..200u64).filter(|i| i % 3 != 0) {
            assert!(a.retract(&format!("b{i}")).expect("retract"));
        }
        let left: Vec<String> = a.beliefs().map(|s| s.id.clone()).collect();
        let want: Vec<String> = (0..200u64)
            .filter(|i| i % 3 == 0)
            .map(|i| format!("b{i}"))
            .collect();
        assert_eq!(left, want);
        for i in 0..200u64 {
            assert_eq!(a.belief(&format!("b{i}")).is_some(), i % 3 == 0);
        }
    }

    /// A request that outlives the timeout is cancelled, answered `Timeout`, and the state
    /// is rebuilt with Σ intact.
    #[test]
    fn timeout_rebuilds_the_state() {
        let mut a = LocalEngine::with_limits(Limits {
            timeout: Duration::from_millis(20),
            ..Limits::default()
        });
        a.add(spec("p", "p", 1)).expect("add");
        // A pigeonhole formula hard enough to outlive 20 ms: 9 pigeons, 8 holes.
        let (n, h) = (9, 8);
        let mut cs = Vec::new();
        for i in 0..n {
            let row: Vec<String> = (0..h).map(|j| format!("x{i}_{j}")).collect();
            cs.push(format!("({})", row.join(" | ")));
        }
        for j in 0..h {
            for i in 0..n {
                for k in (i + 1)..n {
                    cs.push(format!("!(x{i}_{j} & x{k}_{j})"));
                }
            }
        }
        let php = parse(&cs.join(" & ")).expect("php");
        let r = a.check(&php, None);
        assert_eq!(r.err(), Some(EngineError::Timeout));
        assert_eq!(a.rebuilds(), 1);
        assert!(a.belief("p").is_some());
        let p = parse("p").expect("p");
        assert_eq!(a.check(&p, None).expect("after").theta, Outcome::Entailed);
    }
}
