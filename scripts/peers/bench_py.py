#!/usr/bin/env python3
# Copied unchanged (apart from this note) from the project's research notes,
# ../shared/research/peers/bench_py.py (logic-engine.md §5), so that scripts/bench_gate.py runs
# the peer the issues name without a checkout of the shared notes.
"""Peer baselines for the logic engine: classify each candidate Delta of a trace
against the growing theory Sigma as CONTRADICTION (Sigma & Delta UNSAT),
ENTAILED (Sigma & ~Delta UNSAT) or NEWINFO (then Delta joins Sigma).

Backends (all must produce the identical class sequence, checked by hash):
  z3-fresh       new z3.Solver() per check, re-add all of Sigma (research-prototype style;
                 clause ASTs are cached, which flatters z3)
  z3-pushpop     one z3.Solver, Sigma asserted, push/add/check/pop per check
  z3-assume      one z3.Solver, Sigma guarded by selector Bools, check(*assumptions)
  pysat-fresh:S  new PySAT solver S per check, bootstrapped with Sigma
  pysat-hard:S   one incremental solver; accepted Delta added as hard clause;
                 probe clause guarded by a fresh literal q (assume q), then retired
  pysat-mus:S    pysat-sel + deletion-based MUS for every C and E step
  pysat-sel:S    one incremental solver; every Sigma member guarded by selector s_i,
                 ALL active selectors passed as assumptions on every call
                 (the design where any member can later be retracted)
Usage: bench_py.py TRACE BACKEND [MAX_STEPS] [REPEATS]
Prints one JSON line per repeat-median.
"""
import hashlib
import json
import statistics
import sys
import time


def read_trace(path, max_steps):
    n = 0
    steps = []
    with open(path) as f:
        for line in f:
            if line.startswith("c atoms"):
                n = int(line.split()[2])
            elif line.startswith("w "):
                parts = list(map(int, line.split()[1:]))
                steps.append((parts[0], parts[1:-1]))
            if len(steps) >= max_steps:
                break
    return n, steps


class PysatFresh:
    def __init__(self, n, name):
        from pysat.solvers import Solver
        self.Solver = Solver
        self.name = name
        self.sigma = []

    def sat_with(self, delta):
        with self.Solver(name=self.name, bootstrap_with=self.sigma) as s:
            s.add_clause(delta)
            return s.solve()

    def sat_with_neg(self, delta):
        with self.Solver(name=self.name, bootstrap_with=self.sigma) as s:
            return s.solve(assumptions=[-l for l in delta])

    def accept(self, delta):
        self.sigma.append(delta)


class PysatHard:
    def __init__(self, n, name):
        from pysat.solvers import Solver
        self.s = Solver(name=name)
        self.next = n + 1
        self.q = None

    def sat_with(self, delta):
        q = self.next
        self.next += 1
        self.s.add_clause([-q] + delta)
        self.q = q
        r = self.s.solve(assumptions=[q])
        if not r:
            self.s.add_clause([-q])
        return r

    def sat_with_neg(self, delta):
        r = self.s.solve(assumptions=[-l for l in delta])
        if r:  # will be accepted by caller? caller decides; keep q pending
            pass
        return r

    def accept(self, delta):
        self.s.add_clause([self.q])   # make the guarded copy hard

    def reject_entailed(self):
        self.s.add_clause([-self.q])


class PysatSel:
    def __init__(self, n, name):
        from pysat.solvers import Solver
        self.s = Solver(name=name)
        self.next = n + 1
        self.active = []
        self.q = None

    def sat_with(self, delta):
        q = self.next
        self.next += 1
        self.s.add_clause([-q] + delta)
        self.q = q
        r = self.s.solve(assumptions=self.active + [q])
        if not r:
            self.s.add_clause([-q])
        return r

    def sat_with_neg(self, delta):
        return self.s.solve(assumptions=self.active + [-l for l in delta])

    def accept(self, delta):
        self.active.append(self.q)    # the probe guard becomes the selector

    def reject_entailed(self):
        self.s.add_clause([-self.q])


class PysatMus(PysatSel):
    """pysat-sel plus a MUS (deletion with core refinement, same as varisat 'mus' mode)
    for every CONTRADICTION and ENTAILED step."""

    def __init__(self, n, name):
        super().__init__(n, name)
        self.mus_lat = []
        self.mus_sizes = []
        self.mus_calls = 0

    def mus(self, hard, soft):
        t = time.perf_counter()
        assert not self.s.solve(assumptions=hard + soft)
        self.mus_calls += 1
        core = set(self.s.get_core())
        cand = [l for l in soft if l in core]
        needed = []
        while cand:
            c = cand.pop()
            self.mus_calls += 1
            if self.s.solve(assumptions=hard + needed + cand):
                needed.append(c)
            else:
                core = set(self.s.get_core())
                cand = [l for l in cand if l in core]
        self.mus_lat.append(time.perf_counter() - t)
        self.mus_sizes.append(len(needed))
        return needed

    def sat_with(self, delta):
        q = self.next
        self.next += 1
        self.s.add_clause([-q] + delta)
        self.q = q
        r = self.s.solve(assumptions=self.active + [q])
        if not r:
            self.mus([q], list(self.active))
            self.s.add_clause([-q])
        return r

    def sat_with_neg(self, delta):
        hard = [-l for l in delta]
        r = self.s.solve(assumptions=self.active + hard)
        if not r:
            self.mus(hard, list(self.active))
        return r


class Z3Base:
    def __init__(self, n):
        import z3
        self.z3 = z3
        self.atoms = [None] + [z3.Bool("p%d" % i) for i in range(1, n + 1)]

    def lit(self, l):
        a = self.atoms[abs(l)]
        return a if l > 0 else self.z3.Not(a)

    def clause(self, c):
        return self.z3.Or([self.lit(l) for l in c]) if len(c) > 1 else self.lit(c[0])


class Z3Fresh(Z3Base):
    def __init__(self, n):
        super().__init__(n)
        self.sigma = []

    def sat_with(self, delta):
        s = self.z3.Solver()
        for c in self.sigma:
            s.add(c)
        s.add(self.clause(delta))
        return s.check() == self.z3.sat

    def sat_with_neg(self, delta):
        s = self.z3.Solver()
        for c in self.sigma:
            s.add(c)
        for l in delta:
            s.add(self.lit(-l))
        return s.check() == self.z3.sat

    def accept(self, delta):
        self.sigma.append(self.clause(delta))


class Z3PushPop(Z3Base):
    def __init__(self, n):
        super().__init__(n)
        self.s = self.z3.Solver()

    def sat_with(self, delta):
        self.s.push()
        self.s.add(self.clause(delta))
        r = self.s.check() == self.z3.sat
        self.s.pop()
        return r

    def sat_with_neg(self, delta):
        self.s.push()
        for l in delta:
            self.s.add(self.lit(-l))
        r = self.s.check() == self.z3.sat
        self.s.pop()
        return r

    def accept(self, delta):
        self.s.add(self.clause(delta))


class Z3Assume(Z3Base):
    def __init__(self, n):
        super().__init__(n)
        self.s = self.z3.Solver()
        self.active = []
        self.k = 0
        self.q = None

    def sat_with(self, delta):
        self.k += 1
        q = self.z3.Bool("s%d" % self.k)
        self.s.add(self.z3.Implies(q, self.clause(delta)))
        self.q = q
        r = self.s.check(*(self.active + [q])) == self.z3.sat
        return r

    def sat_with_neg(self, delta):
        return self.s.check(*(self.active + [self.lit(-l) for l in delta])) == self.z3.sat

    def accept(self, delta):
        self.active.append(self.q)


def make(backend, n):
    if backend == "z3-fresh":
        return Z3Fresh(n)
    if backend == "z3-pushpop":
        return Z3PushPop(n)
    if backend == "z3-assume":
        return Z3Assume(n)
    kind, name = backend.split(":")
    return {"pysat-fresh": PysatFresh, "pysat-hard": PysatHard, "pysat-sel": PysatSel,
            "pysat-mus": PysatMus}[kind](n, name)


def run_once(backend, n, steps):
    b = make(backend, n)
    classes = []
    lat = []          # per-check latency in seconds
    checks = 0
    t0 = time.perf_counter()
    for _, delta in steps:
        t = time.perf_counter()
        ok = b.sat_with(delta)
        lat.append(time.perf_counter() - t)
        checks += 1
        if not ok:
            classes.append("C")
            continue
        t = time.perf_counter()
        ok = b.sat_with_neg(delta)
        lat.append(time.perf_counter() - t)
        checks += 1
        if not ok:
            classes.append("E")
            if hasattr(b, "reject_entailed"):
                b.reject_entailed()
        else:
            classes.append("N")
            b.accept(delta)
    total = time.perf_counter() - t0
    seq = "".join(classes)
    extra = {}
    if hasattr(b, "mus_lat") and b.mus_lat:
        extra = {"mus_count": len(b.mus_lat), "mus_sat_calls": b.mus_calls,
                 "mus_total_s": sum(b.mus_lat),
                 "mus_median_us": statistics.median(b.mus_lat) * 1e6,
                 "mus_p90_us": sorted(b.mus_lat)[int(0.9 * len(b.mus_lat))] * 1e6,
                 "avg_mus": sum(b.mus_sizes) / len(b.mus_sizes), "max_mus": max(b.mus_sizes)}
    h = 0xcbf29ce484222325
    for ch in seq.encode():
        h = ((h ^ ch) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return {**extra, "fnv": "%016x" % h,
        "total_s": total,
        "checks": checks,
        "checks_per_s": checks / total,
        "median_check_us": statistics.median(lat) * 1e6,
        "p90_check_us": sorted(lat)[int(0.9 * len(lat))] * 1e6,
        "last100_median_us": statistics.median(lat[-100:]) * 1e6,
        "counts": {k: seq.count(k) for k in "CEN"},
        "hash": hashlib.sha1(seq.encode()).hexdigest()[:12],
    }


def main():
    path, backend = sys.argv[1], sys.argv[2]
    max_steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10**9
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    n, steps = read_trace(path, max_steps)
    runs = [run_once(backend, n, steps) for _ in range(repeats)]
    runs.sort(key=lambda r: r["total_s"])
    med = runs[len(runs) // 2]
    med.update({"backend": backend, "steps": len(steps), "repeats": repeats,
                "all_total_s": [round(r["total_s"], 4) for r in runs]})
    print(json.dumps(med))


if __name__ == "__main__":
    main()
