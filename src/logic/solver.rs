//! The varisat wrapper and the per-state solver thread.
//!
//! Two measured varisat hazards shape this module (see `shared/research/logic-engine.md` §1):
//!
//! 1. **Cores can be wrong.** After long incremental runs `failed_core()` occasionally returns
//!    a set of assumptions that is *satisfiable*. [`Sat::validated_core`] therefore re-solves
//!    under the core alone and falls back to the full assumption set when the core does not
//!    hold up; callers never see an unvalidated core.
//! 2. **A solve cannot be bounded from outside, and `Solver` is not `Send`.** varisat has no
//!    conflict limit and no interrupt, but it stops a solve as soon as writing its proof fails.
//!    Every solver made here writes a (discarded) native-format proof (DRAT cannot express
//!    assumptions) into a [`CancelWriter`] that fails once the shared [`Stop`] is raised *or
//!    the deadline it holds has passed*. varisat writes the proof on every learned clause and
//!    flushes it at the end of every solve, so a runaway search stops itself a few
//!    milliseconds after its deadline on whatever thread it runs. A stopped solver is never
//!    used again: the owner rebuilds its state from its own log. A solver is created on the
//!    thread that uses it: the caller's own thread (the engine's fast path) or a dedicated
//!    [`Worker`] thread that callers talk to over channels, waiting at most until their
//!    deadline.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, mpsc};
use std::thread;
use std::time::Instant;

use varisat::{ExtendFormula, Lit, ProofFormat, Solver};

/// Why a solve produced no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SolveError {
    /// The owner raised the cancel flag (deadline passed); the solver is now unusable.
    Cancelled,
    /// varisat reported an internal error; the solver is unusable.
    Solver(String),
}

impl std::fmt::Display for SolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolveError::Cancelled => write!(f, "solve cancelled"),
            SolveError::Solver(m) => write!(f, "SAT solver error: {m}"),
        }
    }
}

impl std::error::Error for SolveError {}

/// The stop conditions shared by every solver of one belief state: a flag raised by the owner
/// (a request was abandoned) and the deadline of the request in progress.
#[derive(Debug)]
pub struct Stop {
    flag: AtomicBool,
    /// Nanoseconds after [`epoch`]; `u64::MAX` = no deadline.
    deadline: AtomicU64,
}

/// The reference point deadlines are stored against (an `Instant` does not fit an atomic).
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

impl Stop {
    /// Not raised, no deadline.
    pub fn new() -> Arc<Stop> {
        Arc::new(Stop {
            flag: AtomicBool::new(false),
            deadline: AtomicU64::new(u64::MAX),
        })
    }

    /// Stops every solve from now on, for good.
    pub fn raise(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Solves still running at `deadline` stop (until [`Stop::clear_deadline`]).
    pub fn set_deadline(&self, deadline: Instant) {
        let ns = deadline.saturating_duration_since(epoch()).as_nanos();
        let ns = u64::try_from(ns).unwrap_or(u64::MAX - 1);
        self.deadline.store(ns, Ordering::Relaxed);
    }

    /// No deadline (between requests, and while a state is rebuilt).
    pub fn clear_deadline(&self) {
        self.deadline.store(u64::MAX, Ordering::Relaxed);
    }

    /// Whether solving must stop: raised, or past the deadline.
    pub fn stopped(&self) -> bool {
        if self.flag.load(Ordering::Relaxed) {
            return true;
        }
        let d = self.deadline.load(Ordering::Relaxed);
        d != u64::MAX && epoch().elapsed().as_nanos() >= u128::from(d)
    }
}

/// A proof sink that discards everything and fails once its [`Stop`] says so, which makes
/// varisat abandon the running solve.
pub struct CancelWriter {
    stop: Arc<Stop>,
}

impl io::Write for CancelWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.stop.stopped() {
            Err(io::Error::other("cancelled"))
        } else {
            Ok(buf.len())
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One varisat solver with a cancel switch, validated cores and bookkeeping.
pub struct Sat {
    solver: Solver<'static>,
    stop: Arc<Stop>,
    broken: bool,
    clauses: usize,
    solves: u64,
    invalid_cores: u64,
    disabled: Vec<Lit>,
    buf: Vec<Lit>,
    /// For a solver that sees only some of its owner's variables: their numbering here.
    dense: Option<Dense>,
}

/// A dense renumbering of the variables a solver sees. varisat makes every variable below
/// the highest index it is given exist, and writes each into the proof's model on every
/// satisfiable answer and into every model it returns; a solver that is given a few of its
/// owner's variables under their own indices pays for all the others on every answer.
#[derive(Debug, Default)]
struct Dense {
    /// Owner's variable index -> this solver's, `u32::MAX` when not seen yet.
    inner: Vec<u32>,
    /// This solver's variable index -> the owner's.
    outer: Vec<u32>,
}

impl Dense {
    fn inside(&mut self, l: Lit) -> Lit {
        let v = l.index();
        if self.inner.len() <= v {
            self.inner.resize(v + 1, u32::MAX);
        }
        if self.inner[v] == u32::MAX {
            self.inner[v] = self.outer.len() as u32;
            self.outer.push(v as u32);
        }
        Lit::from_index(self.inner[v] as usize, l.is_positive())
    }

    fn outside(&self, l: Lit) -> Lit {
        Lit::from_index(self.outer[l.index()] as usize, l.is_positive())
    }
}

impl Sat {
    /// A fresh solver that stops solving once `stop` says so.
    pub fn new(stop: Arc<Stop>) -> Self {
        let mut solver = Solver::new();
        solver.write_proof(CancelWriter { stop: stop.clone() }, ProofFormat::Varisat);
        Sat {
            solver,
            stop,
            broken: false,
            clauses: 0,
            solves: 0,
            invalid_cores: 0,
            disabled: Vec::new(),
            buf: Vec::new(),
            dense: None,
        }
    }

    /// Like [`Sat::new`], for a solver that will see only some of its owner's variables:
    /// they are numbered densely inside (see [`Dense`]); clauses, assumptions, models and
    /// cores keep the owner's numbering outside.
    pub fn new_dense(stop: Arc<Stop>) -> Self {
        Sat {
            dense: Some(Dense::default()),
            ..Sat::new(stop)
        }
    }

    /// Adds a hard clause.
    pub fn add_clause(&mut self, clause: &[Lit]) {
        self.clauses += 1;
        match &mut self.dense {
            None => self.solver.add_clause(clause),
            Some(d) => {
                self.buf.clear();
                self.buf.extend(clause.iter().map(|&l| d.inside(l)));
                self.solver.add_clause(&self.buf);
            }
        }
    }

    /// Number of clauses added so far.
    pub fn num_clauses(&self) -> usize {
        self.clauses
    }

    /// Number of `solve` calls so far.
    pub fn num_solves(&self) -> u64 {
        self.solves
    }

    /// Number of invalid cores detected (and replaced) so far.
    pub fn invalid_cores(&self) -> u64 {
        self.invalid_cores
    }

    /// Literals assumed on every solve in addition to the caller's (negated retired probes
    /// waiting for their batch to be turned into units).
    pub fn set_disabled(&mut self, mut lits: Vec<Lit>) {
        if let Some(d) = &mut self.dense {
            for l in &mut lits {
                *l = d.inside(*l);
            }
        }
        self.disabled = lits;
    }

    /// Solves under `assumptions`: `Ok(true)` = satisfiable.
    pub fn solve(&mut self, assumptions: &[Lit]) -> Result<bool, SolveError> {
        if self.broken || self.stop.stopped() {
            self.broken = true;
            return Err(SolveError::Cancelled);
        }
        self.solves += 1;
        if self.disabled.is_empty() && self.dense.is_none() {
            self.solver.assume(assumptions);
        } else {
            self.buf.clear();
            self.buf.extend_from_slice(&self.disabled);
            match &mut self.dense {
                None => self.buf.extend_from_slice(assumptions),
                Some(d) => self.buf.extend(assumptions.iter().map(|&l| d.inside(l))),
            }
            self.solver.assume(&self.buf);
        }
        match self.solver.solve() {
            Ok(sat) => Ok(sat),
            Err(e) => {
                self.broken = true;
                if self.stop.stopped() {
                    Err(SolveError::Cancelled)
                } else {
                    Err(SolveError::Solver(e.to_string()))
                }
            }
        }
    }

    /// The model of the last satisfiable solve.
    pub fn model(&self) -> Option<Vec<Lit>> {
        let m = self.solver.model()?;
        Some(match &self.dense {
            None => m,
            Some(d) => m.into_iter().map(|l| d.outside(l)).collect(),
        })
    }

    /// varisat's failed core of the last solve, in the owner's numbering.
    fn failed_core(&self) -> Vec<Lit> {
        let core = self.solver.failed_core().unwrap_or(&[]);
        match &self.dense {
            None => core.to_vec(),
            Some(d) => core.iter().map(|&l| d.outside(l)).collect(),
        }
    }

    /// Solves under `assumptions`; when unsatisfiable returns a core (a subset of the
    /// assumptions that is itself unsatisfiable, checked by a re-solve). Returns `None` when
    /// satisfiable. When varisat's core fails the check, the whole assumption set is returned
    /// (it is unsatisfiable, just not refined).
    ///
    /// During the re-solve every literal of `universe` (selectors: they occur only negated
    /// in clauses, so switching them off never removes a model) outside the core is assumed
    /// false: selectors left free would be switched on by saved phases and turn a
    /// propagation check into a search.
    pub fn validated_core(
        &mut self,
        assumptions: &[Lit],
        universe: &[Lit],
    ) -> Result<Option<Vec<Lit>>, SolveError> {
        if self.solve(assumptions)? {
            return Ok(None);
        }
        let core: Vec<Lit> = self.failed_core();
        if core.len() == assumptions.len() {
            return Ok(Some(core));
        }
        let in_core: std::collections::HashSet<Lit> = core.iter().copied().collect();
        let mut check = core.clone();
        check.extend(
            universe
                .iter()
                .filter(|l| !in_core.contains(l))
                .map(|&l| !l),
        );
        if self.solve(&check)? {
            self.invalid_cores += 1;
            return Ok(Some(assumptions.to_vec()));
        }
        Ok(Some(core))
    }

    /// The unvalidated core of the last unsatisfiable solve. Only for callers that validate
    /// the final result themselves (deletion-based MUS does).
    pub fn raw_core(&self) -> Vec<Lit> {
        self.failed_core()
    }
}

/// A job run on a worker thread against its state.
type Job<S> = Box<dyn FnOnce(&mut S) + Send>;

/// Why a request to a worker produced no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// The deadline passed; the worker was told to stop and must be replaced.
    Timeout,
    /// The worker thread is gone (it panicked); it must be replaced.
    Crashed,
}

/// A thread owning one non-`Send` state `S` (built on that thread) and running jobs on it in
/// order. The handle is `Send`; dropping it stops the thread.
pub struct Worker<S> {
    tx: Option<mpsc::Sender<Job<S>>>,
    cancel: Arc<Stop>,
}

impl<S: 'static> Worker<S> {
    /// Spawns the thread and builds the state on it with `init`, which receives the stop
    /// switch to hand to every [`Sat`] it creates.
    pub fn spawn(init: impl FnOnce(Arc<Stop>) -> S + Send + 'static) -> io::Result<Self> {
        let cancel = Stop::new();
        let (tx, rx) = mpsc::channel::<Job<S>>();
        let flag = cancel.clone();
        thread::Builder::new()
            .name("doxascope-solver".into())
            // Deeply nested formulas are evaluated recursively.
            .stack_size(256 << 20)
            .spawn(move || {
                let mut state = init(flag);
                while let Ok(job) = rx.recv() {
                    job(&mut state);
                }
            })?;
        Ok(Worker {
            tx: Some(tx),
            cancel,
        })
    }

    /// Runs `f` on the worker and waits for its result until `deadline` (`None`: for as long
    /// as it takes). On [`Overrun::Timeout`] the worker has been cancelled and must be
    /// replaced.
    pub fn run<R: Send + 'static>(
        &self,
        deadline: Option<Instant>,
        f: impl FnOnce(&mut S) -> R + Send + 'static,
    ) -> Result<R, Overrun> {
        let (rtx, rrx) = mpsc::sync_channel(1);
        let job: Job<S> = Box::new(move |s| {
            // The receiver may be gone after a timeout; nothing to do then.
            let _ = rtx.send(f(s));
        });
        let Some(tx) = &self.tx else {
            return Err(Overrun::Crashed);
        };
        if tx.send(job).is_err() {
            return Err(Overrun::Crashed);
        }
        let got = match deadline {
            Some(d) => rrx.recv_timeout(d.saturating_duration_since(Instant::now())),
            None => rrx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        match got {
            Ok(r) => Ok(r),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.cancel.raise();
                Err(Overrun::Timeout)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(Overrun::Crashed),
        }
    }

    /// Sends `f` without waiting for it (used to replay a log into a fresh worker).
    pub fn post(&self, f: impl FnOnce(&mut S) + Send + 'static) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Box::new(f));
        }
    }
}

impl<S> Drop for Worker<S> {
    fn drop(&mut self) {
        // Stop an in-flight solve and let the thread end; never join (that could block).
        self.cancel.raise();
        self.tx.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use varisat::Var;

    fn lit(i: isize) -> Lit {
        Lit::from_dimacs(i)
    }

    #[test]
    fn cores_are_unsat_and_models_satisfy() {
        let mut s = Sat::new(Stop::new());
        // a -> b, b -> c, selectors 4,5,6 guard a, ¬c, d.
        s.add_clause(&[lit(-1), lit(2)]);
        s.add_clause(&[lit(-2), lit(3)]);
        s.add_clause(&[lit(-4), lit(1)]);
        s.add_clause(&[lit(-5), lit(-3)]);
        s.add_clause(&[lit(-6), lit(7)]);
        let core = s
            .validated_core(&[lit(4), lit(5), lit(6)], &[lit(4), lit(5), lit(6)])
            .unwrap()
            .expect("unsat");
        assert!(!s.solve(&core).unwrap());
        assert!(!core.contains(&lit(6)));
        assert!(s.validated_core(&[lit(4), lit(6)], &[]).unwrap().is_none());
        let m = s.model().unwrap();
        assert!(m.contains(&lit(1)) && m.contains(&lit(3)));
    }

    /// A dense solver speaks its owner's numbering: models and cores name the variables it
    /// was given, however sparse, and it answers as a plain solver does.
    #[test]
    fn dense_solvers_keep_the_owners_numbering() {
        let mut plain = Sat::new(Stop::new());
        let mut dense = Sat::new_dense(Stop::new());
        // x900 -> x7, selectors x5000 (guards x900) and x3 (guards ¬x7).
        let cls = [
            vec![lit(-900), lit(7)],
            vec![lit(-5000), lit(900)],
            vec![lit(-3), lit(-7)],
        ];
        for c in &cls {
            plain.add_clause(c);
            dense.add_clause(c);
        }
        let a = [lit(5000), lit(3)];
        assert_eq!(plain.solve(&a), dense.solve(&a));
        let mut core = dense.validated_core(&a, &a).unwrap().expect("unsat");
        core.sort();
        let mut want = a.to_vec();
        want.sort();
        assert_eq!(core, want);
        assert!(dense.solve(&[lit(5000)]).unwrap());
        let m = dense.model().unwrap();
        assert!(m.contains(&lit(900)) && m.contains(&lit(7)) && m.contains(&lit(5000)));
        assert!(
            m.iter()
                .all(|l| [900, 7, 5000, 3].contains(&l.var().to_dimacs()))
        );
    }

    #[test]
    fn cancelled_solver_refuses_work() {
        let stop = Stop::new();
        let mut s = Sat::new(stop.clone());
        s.add_clause(&[Var::from_index(0).positive()]);
        assert_eq!(s.solve(&[]), Ok(true));
        stop.raise();
        assert_eq!(s.solve(&[]), Err(SolveError::Cancelled));
    }

    #[test]
    fn deadlines_come_and_go() {
        let stop = Stop::new();
        assert!(!stop.stopped());
        stop.set_deadline(Instant::now());
        assert!(stop.stopped());
        stop.clear_deadline();
        assert!(!stop.stopped());
        stop.set_deadline(Instant::now() + Duration::from_secs(3600));
        assert!(!stop.stopped());
    }

    /// A pigeonhole instance varisat cannot finish stops itself at its deadline on the
    /// calling thread, and the solver refuses work afterwards.
    #[test]
    fn a_runaway_solve_stops_at_its_deadline() {
        let (pigeons, holes) = (12isize, 11isize);
        let v = |p: isize, h: isize| lit(p * holes + h + 1);
        let stop = Stop::new();
        let mut s = Sat::new(stop.clone());
        for p in 0..pigeons {
            let c: Vec<Lit> = (0..holes).map(|h| v(p, h)).collect();
            s.add_clause(&c);
        }
        for h in 0..holes {
            for p in 0..pigeons {
                for q in p + 1..pigeons {
                    s.add_clause(&[!v(p, h), !v(q, h)]);
                }
            }
        }
        let t = Instant::now();
        stop.set_deadline(t + Duration::from_millis(100));
        assert_eq!(s.solve(&[]), Err(SolveError::Cancelled));
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        stop.clear_deadline();
        assert_eq!(s.solve(&[]), Err(SolveError::Cancelled));
    }

    #[test]
    fn worker_runs_jobs_in_order_and_times_out() {
        let w = Worker::spawn(|_| 0u64).unwrap();
        let far = Instant::now() + Duration::from_secs(30);
        w.post(|s| *s += 1);
        assert_eq!(w.run(Some(far), |s| *s + 1), Ok(2));
        let r = w.run(Some(Instant::now() + Duration::from_millis(20)), |_| {
            thread::sleep(Duration::from_millis(300));
        });
        assert_eq!(r, Err(Overrun::Timeout));
        let w2 = Worker::spawn(|_| ()).unwrap();
        let r = w2.run(Some(far), |_: &mut ()| -> u8 { panic!("boom") });
        assert_eq!(r, Err(Overrun::Crashed));
    }
}
