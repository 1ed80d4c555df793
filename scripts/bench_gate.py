#!/usr/bin/env python3
"""The gate at the limit: `doxascope audit` on the T1 workload against its peers, one run.

Workload: benches/data/trace_T1.txt (1,000 atoms, 4,000 candidate clauses), written as a
doxascope trace by scripts/t1_trace.py: one `verify` per step claiming its class
(contradiction / entailed / newinfo against the growing Sigma), and an `announce` of every
newinfo clause. `doxascope audit` recomputes every claim, which is the peers' work: one gate
check per step against the same Sigma.

Measured in one run, interleaved so that a change in machine load hits every side alike:

* doxascope: `doxascope audit t1.jsonl` as a whole process (start-up, reading, replay,
  recomputation, report), wall clock and CPU (user + system) seconds; the run must report
  4000 recomputed claims, all agreeing.
* PySAT with MiniSat 2.2 and hard clauses (`scripts/peers/bench_py.py ... pysat-hard:m22`,
  the research notes' peer): its solver loop alone (`total_s`: no start-up, no import, no
  trace reading), with the process CPU seconds of that loop beside it.
* Python with a fresh Z3 solver per check (scripts/z3_baseline.py's `fresh_gate`, the
  papers' prototypes): timed on every N-th step (default 20) against that step's Sigma and
  scaled to 4,000 steps (the cost of a fresh check depends only on Sigma at that step, so
  the sampled mean is an unbiased estimate of the full run's).

Prints each side's median and the ratios (targets, issue 14: PySAT / doxascope >= 2,
Z3 fresh / doxascope >= 1000). Run it through scripts/bench_gate.sh, which installs the
peers in a venv under target/ and builds the release binary.

Usage: bench_gate.py BINARY [--runs N] [--z3-every N] [--no-z3]
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "scripts", "peers"))

import bench_py  # noqa: E402  (the research notes' peer loop)
import t1_trace  # noqa: E402

T1 = os.path.join(ROOT, "benches", "data", "trace_T1.txt")
STEPS = 4000


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def audit_once(binary, trace):
    c0, t0 = children_cpu(), time.perf_counter()
    p = subprocess.run([binary, "audit", trace], capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, children_cpu() - c0
    if p.returncode != 0 or "4000 recomputed of 4000" not in p.stdout \
            or "every claim that could be recomputed agrees" not in p.stdout:
        sys.exit("doxascope audit did not recompute and confirm all 4000 claims:\n" + p.stdout + p.stderr)
    return wall, cpu


def pysat_once(n, steps):
    c0 = time.process_time()
    r = bench_py.run_once("pysat-hard:m22", n, steps)
    if r["counts"] != {"C": 239, "E": 1838, "N": 1923}:
        sys.exit("PySAT classified T1 differently: %s" % r["counts"])
    return r["total_s"], time.process_time() - c0


def z3_fresh(every):
    import z3
    import z3_baseline
    steps = z3_baseline.load(T1)
    atoms = z3_baseline.Atoms()
    sigma, inc = [], z3.Solver()
    times, cpu = [], []
    for i, delta in enumerate(steps):
        clause = z3.Or([atoms.lit(n) for n in delta]) if len(delta) > 1 else atoms.lit(delta[0])
        if i % every == 0:
            t0, c0 = time.perf_counter(), time.process_time()
            z3_baseline.fresh_gate(sigma, delta, atoms)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        # Sigma evolves exactly, by an incremental solver (not timed).
        inc.push()
        inc.add(clause)
        sat = inc.check() == z3.sat
        inc.pop()
        if sat:
            inc.push()
            for n in delta:
                inc.add(atoms.lit(-n))
            newinfo = inc.check() == z3.sat
            inc.pop()
            if newinfo:
                sigma.append(clause)
                inc.add(clause)
    return statistics.mean(times) * len(steps), statistics.mean(cpu) * len(steps), len(times), z3.get_version_string()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--z3-every", type=int, default=20)
    ap.add_argument("--no-z3", action="store_true")
    args = ap.parse_args()

    out_dir = os.path.join(ROOT, "target", "bench-gate")
    os.makedirs(out_dir, exist_ok=True)
    trace = os.path.join(out_dir, "t1.jsonl")
    sys.argv = ["t1_trace.py", T1, trace]
    t1_trace.main()
    n, steps = bench_py.read_trace(T1, STEPS)

    dox, peer = [], []
    audit_once(args.binary, trace)  # warm the page cache
    for _ in range(args.runs):
        dox.append(audit_once(args.binary, trace))
        peer.append(pysat_once(n, steps))
    dw = statistics.median(w for w, _ in dox)
    dc = statistics.median(c for _, c in dox)
    pw = statistics.median(w for w, _ in peer)
    pc = statistics.median(c for _, c in peer)
    print("T1 (4,000 steps: 239 contradiction, 1,838 entailed, 1,923 newinfo), %d interleaved runs, medians:" % args.runs)
    print("  doxascope audit, whole process:        %.4f s wall, %.4f s CPU  (runs: %s)" % (
        dw, dc, " ".join("%.3f" % w for w, _ in dox)))
    print("  PySAT MiniSat 2.2, hard clauses, loop: %.4f s wall, %.4f s CPU  (runs: %s)" % (
        pw, pc, " ".join("%.3f" % w for w, _ in peer)))
    print("  ratio PySAT / doxascope: %.2fx wall, %.2fx CPU (target >= 2)" % (pw / dw, pc / dc))
    if not args.no_z3:
        zw, zc, sampled, version = z3_fresh(args.z3_every)
        print("  Z3 %s, fresh solver per check: %.1f s wall, %.1f s CPU for 4,000 steps "
              "(timed on %d sampled steps, every %d-th)" % (version, zw, zc, sampled, args.z3_every))
        print("  ratio Z3 fresh / doxascope: %.0fx wall, %.0fx CPU (target >= 1000)" % (zw / dw, zc / dc))


if __name__ == "__main__":
    main()
