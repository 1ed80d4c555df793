#!/usr/bin/env python3
"""The research prototypes' way of running the gate, against doxascope's engine.

Workload: benches/data/trace_T1.txt (1,000 atoms, 4,000 candidate clauses). For each
candidate clause D: CONTRADICTION if Sigma & D is unsatisfiable, else ENTAILED if Sigma & ~D
is unsatisfiable, else NEWINFO and D joins Sigma.

The prototype style (seed 001's Z3 prototype, research notes section 5 "z3-fresh"): Python,
a *fresh* z3.Solver() per check that re-adds all of Sigma (clause ASTs are cached, which
flatters Z3). That takes minutes on the full trace, so by default the fresh-solver timing is
taken on a sample of the steps (every --every-th step): Sigma is evolved exactly by a single
push/pop Z3 solver over all steps (which also yields the class counts), and at each sampled
step the fresh-solver gate is timed against that step's Sigma. The cost of a fresh check
depends only on Sigma at that step, so the sampled mean is an unbiased estimate of the
full-run mean. --every 1 times every step (the complete prototype run).

Then it runs `cargo bench --bench logic -- --no-why` (or reads a saved output with
--rust-output FILE), takes its "gate checks/s" figure, and prints the ratio from this run.
Both sides are also reported per CPU second, which is steadier on a shared machine.

Usage: python3 scripts/z3_baseline.py [--every N] [--rust-output FILE]
Needs: pip install z3-solver
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

try:
    import z3
except ImportError:
    sys.exit("z3_baseline.py: needs the z3 Python bindings: pip install z3-solver")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "benches", "data", "trace_T1.txt")


def load(path):
    steps = []
    with open(path) as f:
        for line in f:
            if line.startswith("w "):
                lits = [int(t) for t in line.split()[2:]]
                steps.append(lits[: lits.index(0)])
    return steps


class Atoms:
    def __init__(self):
        self.v = {}

    def lit(self, n):
        a = abs(n)
        if a not in self.v:
            self.v[a] = z3.Bool("x%d" % a)
        return self.v[a] if n > 0 else z3.Not(self.v[a])


def fresh_gate(sigma_asts, delta, atoms):
    """One gate check, prototype style: a new solver per check, Sigma re-added."""
    s = z3.Solver()
    for c in sigma_asts:
        s.add(c)
    s.add(z3.Or([atoms.lit(n) for n in delta]))
    if s.check() == z3.unsat:
        return "C"
    s = z3.Solver()
    for c in sigma_asts:
        s.add(c)
    for n in delta:
        s.add(atoms.lit(-n))
    if s.check() == z3.unsat:
        return "E"
    return "N"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=int, default=10, help="time the fresh-solver gate on every N-th step (1 = all)")
    ap.add_argument("--rust-output", help="read the Rust bench output from this file instead of running it")
    args = ap.parse_args()

    steps = load(TRACE)
    atoms = Atoms()
    sigma = []  # cached clause ASTs
    inc = z3.Solver()
    counts = {"C": 0, "E": 0, "N": 0}
    fresh_times = []
    fresh_cpu = []
    mismatches = 0
    for i, delta in enumerate(steps):
        clause = z3.Or([atoms.lit(n) for n in delta]) if len(delta) > 1 else atoms.lit(delta[0])
        if i % args.every == 0:
            t0, c0 = time.perf_counter(), time.process_time()
            cls_fresh = fresh_gate(sigma, delta, atoms)
            fresh_times.append(time.perf_counter() - t0)
            fresh_cpu.append(time.process_time() - c0)
        else:
            cls_fresh = None
        inc.push()
        inc.add(clause)
        sat = inc.check() == z3.sat
        inc.pop()
        if not sat:
            cls = "C"
        else:
            inc.push()
            for n in delta:
                inc.add(atoms.lit(-n))
            ent = inc.check() == z3.unsat
            inc.pop()
            cls = "E" if ent else "N"
        if cls_fresh is not None and cls_fresh != cls:
            mismatches += 1
        counts[cls] += 1
        if cls == "N":
            sigma.append(clause)
            inc.add(clause)

    print("T1 classes (Z3): contradiction %d  entailed %d  newinfo %d" % (counts["C"], counts["E"], counts["N"]))
    if (counts["C"], counts["E"], counts["N"]) != (239, 1838, 1923):
        sys.exit("unexpected class counts")
    if mismatches:
        sys.exit("fresh-solver and incremental Z3 disagree on %d sampled steps" % mismatches)
    z3_rate = 1.0 / statistics.mean(fresh_times)
    z3_cpu_rate = 1.0 / max(statistics.mean(fresh_cpu), 1e-9)
    sampled = "all %d steps" % len(fresh_times) if args.every == 1 else \
        "a sample of %d of %d steps (every %d-th; --every 1 for all)" % (len(fresh_times), len(steps), args.every)
    print("Z3 %s, fresh solver per check (prototype style), timed on %s:" % (z3.get_version_string(), sampled))
    print("  %.0f gate checks/s (median %.2f ms, mean %.2f ms per gate check; %.0f per CPU second)" % (
        z3_rate, statistics.median(fresh_times) * 1e3, statistics.mean(fresh_times) * 1e3, z3_cpu_rate))

    if args.rust_output:
        with open(args.rust_output) as f:
            out = f.read()
    else:
        print("running: cargo bench --bench logic -- --no-why")
        out = subprocess.run(["cargo", "bench", "--bench", "logic", "--", "--no-why"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    m = re.search(r"gate checks/s: (\d+)", out)
    if not m:
        sys.exit("could not find 'gate checks/s' in the Rust bench output")
    rust_rate = float(m.group(1))
    mc = re.search(r"=> (\d+) gate steps per CPU second", out)
    print("doxascope (Rust, one incremental varisat solver, through the BeliefState handle): %.0f gate checks/s" % rust_rate)
    print("ratio: %.0fx (wall clock, this run)" % (rust_rate / z3_rate))
    if mc:
        rust_cpu = float(mc.group(1))
        print("ratio per CPU second: %.0fx (Rust %s gate steps incl. adds per CPU s vs Z3 %.0f)" % (
            rust_cpu / z3_cpu_rate, mc.group(1), z3_cpu_rate))


if __name__ == "__main__":
    main()
