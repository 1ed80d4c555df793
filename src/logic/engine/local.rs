//! The second handle: a belief state driven on the calling thread, for the recomputation's
//! long walks.
//!
//! [`BeliefState`](super::BeliefState) moves its state to a solver thread for formulas too
//! deep for the caller's stack or too big to bound, and looks its state up in a thread-local
//! registry on every request: the right shape for interactive use (the REPL, the TUI), where
//! a handle may be sent between threads. A recomputation makes several requests per event
//! over traces of 100,000 events with thousands of active beliefs, on a thread of its own
//! with the engine's stack ([`run_with_stack`]). [`LocalEngine`] is the same [`Handle`] with
//! an `Owned` seat: the state is a field, every request runs right here under the state's own
//! deadline ([`Stop`](crate::logic::solver::Stop)), and after a timeout or a panic the state
//! is rebuilt from the handle's copy of Σ, through the same code as `BeliefState`'s. It is not
//! `Send`, so it cannot leave the big stack it was made for.

use std::thread;
use std::time::Instant;

use super::handle::{Handle, Seat};
use super::{BeliefSpec, EngineError, Limits, State};

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

/// A belief state on the calling thread (see the module docs). Its operations are
/// [`Handle`]'s, as for [`BeliefState`](super::BeliefState).
pub(crate) type LocalEngine = Handle<Owned>;

/// The seat of a [`LocalEngine`]: the state itself (`None` after a request overran or
/// panicked, or once it outgrew Σ, until the next request rebuilds it), and how many times
/// it was dropped for outgrowing Σ.
pub(crate) struct Owned(Option<Box<State>>, u64);

impl LocalEngine {
    /// An empty state.
    pub(crate) fn with_limits(limits: Limits) -> LocalEngine {
        let st = Box::new(State::new(crate::logic::solver::Stop::new(), limits));
        Handle::with_seat(Owned(Some(st), 0), limits)
    }
}

impl Seat for Owned {
    fn run<R: Send + 'static>(
        &mut self,
        limits: Limits,
        deadline: Option<Instant>,
        _fits: &dyn Fn() -> bool,
        specs: &dyn Fn() -> Vec<BeliefSpec>,
        f: impl FnOnce(&mut State) -> Result<R, EngineError> + Send + 'static,
    ) -> Result<R, EngineError> {
        let (back, r) = super::handle::run_here(self.0.take(), limits, deadline, specs, f);
        // A state grown far past Σ is dropped and the next request builds it again from Σ
        // (`State::outgrown`): what a long walk costs per question stays proportional to Σ,
        // not to the session so far, and so does the memory it holds (issue 31).
        self.0 = match back {
            Some(st) if st.outgrown() => {
                self.1 += 1;
                None
            }
            back => back,
        };
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::logic::engine::{BeliefState, Outcome, Role};
    use crate::logic::formula::Formula;
    use crate::logic::parse::parse;

    fn spec(id: &str, f: &str, step: u64) -> BeliefSpec {
        BeliefSpec::new(id, parse(f).expect("formula")).step(step)
    }

    /// A long walk makes the local engine's state outgrow Σ again and again; rebuilt from Σ
    /// each time, it answers as the threaded engine (which is never rebuilt), minimal
    /// conflicts and supports included: they depend on Σ and its order only.
    #[test]
    fn rebuilt_from_sigma_it_answers_the_same() {
        let mut a = LocalEngine::with_limits(Limits::default());
        let mut b = BeliefState::new().expect("engine");
        let mut x: u64 = 7;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let atoms = ["p", "q", "r", "s", "t"];
        for step in 0..240u64 {
            let (i, j) = (next(5) as usize, next(5) as usize);
            let f = match next(4) {
                0 => atoms[i].to_string(),
                1 => format!("!{}", atoms[i]),
                2 => format!("{} -> {}", atoms[i], atoms[j]),
                _ => format!("{} | !{}", atoms[i], atoms[j]),
            };
            let id = format!("b{}", next(9));
            if next(4) == 0 {
                assert_eq!(a.retract(&id).ok(), b.retract(&id).ok());
            } else {
                let role = if next(6) == 0 { Role::Rule } else { Role::Fact };
                let s = spec(&id, &f, step).role(role);
                assert_eq!(
                    a.add_or_demote(s.clone()).ok(),
                    b.add_or_demote(s).ok(),
                    "{step}"
                );
            }
            let (ca, cb) = (a.consistent().expect("a"), b.consistent().expect("b"));
            assert_eq!(
                (ca.consistent, &ca.conflict),
                (cb.consistent, &cb.conflict),
                "{step}"
            );
            let q = parse(&format!("{} & {}", atoms[j], atoms[i])).expect("query");
            assert_eq!(
                a.check(&q, None).expect("a").theta,
                b.check(&q, None).expect("b").theta,
                "{step}"
            );
            let sa = a.supports(&q, 2, Duration::from_secs(2)).expect("a");
            let sb = b.supports(&q, 2, Duration::from_secs(2)).expect("b");
            assert_eq!(sa.supports, sb.supports, "{step}");
        }
        assert!(a.seat.1 > 3, "rebuilt {} times", a.seat.1);
        assert_eq!(a.rebuilds(), 0, "no rebuild counts as a timeout's");
    }

    /// What a state holds beyond Σ is what makes it outgrown, not Σ's own growth: a walk
    /// that only adds beliefs is rebuilt once at most (the first time its variables pass
    /// the floor, before it knows what Σ needs), however large Σ grows; the same walk with
    /// every third belief retracted and a question asked at every step is rebuilt again
    /// and again.
    #[test]
    fn sigma_growing_alone_does_not_outgrow_the_state() {
        let walk = |garbage: bool| {
            let mut a = LocalEngine::with_limits(Limits::default());
            for i in 0..600u64 {
                let f = format!("p{i} | (q{i} & !r{i})");
                let id = format!("b{i}");
                a.add(spec(&id, &f, i)).expect("add");
                if garbage {
                    if i % 3 == 0 {
                        assert!(a.retract(&id).expect("retract"));
                    }
                    let q = parse(&format!("p{i} & s{i}")).expect("query");
                    a.check(&q, None).expect("check");
                }
            }
            a.seat.1
        };
        let (grown, littered) = (walk(false), walk(true));
        assert!(grown <= 1, "rebuilt {grown} times");
        assert!(littered > 3, "rebuilt {littered} times");
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
            let ids_b: Vec<&str> = b.beliefs().map(|s| s.id.as_str()).collect();
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

    /// `add_or_demote` demotes a rule or norm exactly when the rules and norms held with it
    /// are unsatisfiable (truth-table oracle), and leaves the engine as `add` followed by a
    /// re-add as an assumption does, in the engine and in the copy it rebuilds from.
    #[test]
    fn demoting_adds_agree_with_refusals_and_the_oracle() {
        let atoms = ["p", "q", "r", "s"];
        let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let mut demotions = 0;
        for _ in 0..12 {
            let mut a = LocalEngine::with_limits(Limits::default());
            let mut b = LocalEngine::with_limits(Limits::default());
            for i in 0..24u64 {
                let mut lits = [(); 2].map(|_| {
                    let x = atoms[next(4) as usize];
                    if next(2) == 0 {
                        format!("!{x}")
                    } else {
                        x.to_string()
                    }
                });
                let [l1, l2] = std::mem::take(&mut lits);
                let text = match next(3) {
                    0 => l1,
                    1 => format!("{l1} | {l2}"),
                    _ => format!("{l1} -> {l2}"),
                };
                let role = [Role::Rule, Role::Norm, Role::Fact][next(3) as usize];
                let s = spec(&format!("b{}", next(10)), &text, i).role(role);
                let hard: Vec<Formula> = a
                    .beliefs()
                    // A replacement is checked against what it replaces too (as `add` is).
                    .filter(|b| b.role.is_hard())
                    .map(|b| (*b.formula).clone())
                    .chain([(*s.formula).clone()])
                    .collect();
                let refs: Vec<&Formula> = hard.iter().collect();
                let conflict = role.is_hard() && !crate::logic::oracle::satisfiable(&refs);
                let (_, demoted) = a.add_or_demote(s.clone()).expect("add_or_demote");
                assert_eq!(demoted, conflict, "{text} as {role:?}");
                demotions += usize::from(demoted);
                match b.add(s.clone()) {
                    Err(EngineError::HardConflict(_)) => {
                        b.add(s.role(Role::Assumption)).expect("re-add");
                    }
                    r => {
                        r.expect("add");
                    }
                }
                let held = |e: &mut LocalEngine| {
                    let mut v: Vec<(String, String, Role)> = e
                        .held()
                        .expect("held")
                        .into_iter()
                        .map(|b| (b.id, b.formula.to_string(), b.role))
                        .collect();
                    v.sort_by(|x, y| x.0.cmp(&y.0));
                    v
                };
                assert_eq!(held(&mut a), held(&mut b));
                let copy = |e: &LocalEngine| {
                    let mut v: Vec<(String, Role)> =
                        e.beliefs().map(|b| (b.id.clone(), b.role)).collect();
                    v.sort_by(|x, y| x.0.cmp(&y.0));
                    v
                };
                assert_eq!(copy(&a), copy(&b));
            }
        }
        assert!(
            demotions > 0,
            "the walk never demoted: the test proves nothing"
        );
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
