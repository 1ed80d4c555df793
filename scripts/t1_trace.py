#!/usr/bin/env python3
"""Writes the T1 classification workload (benches/data/trace_T1.txt) as a doxascope trace.

Each step's candidate clause D becomes one `verify` event claiming its class against the
growing Sigma (contradiction, entailed or newinfo, decided here with PySAT's MiniSat, an
oracle independent of doxascope's engine); a newinfo D is then announced, so it joins Sigma
exactly as in the peers' loop (research/peers/bench_py.py). `doxascope audit` on the result
recomputes every verdict, which is the same work as the peers' classification: one gate
check per step against the same Sigma.

Usage: t1_trace.py [T1] [OUT.jsonl] [MAX_STEPS]
Needs: PySAT (pip install python-sat).
"""

import json
import os
import sys

from pysat.solvers import Solver

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "benches", "data", "trace_T1.txt")
    out = sys.argv[2] if len(sys.argv) > 2 else "-"
    max_steps = int(sys.argv[3]) if len(sys.argv) > 3 else 10**9
    steps = []
    with open(src) as f:
        for line in f:
            if line.startswith("w "):
                lits = [int(t) for t in line.split()[2:]]
                steps.append(lits[: lits.index(0)])
                if len(steps) >= max_steps:
                    break
    s = Solver(name="m22")
    counts = {"contradiction": 0, "entailed": 0, "newinfo": 0}
    lines = []
    for i, d in enumerate(steps):
        text = " | ".join(("!x%d" % -n) if n < 0 else ("x%d" % n) for n in d)
        # Sigma & D: a fresh guard q keeps D retractable for this one question.
        q = 10_000 + 2 * i + 1
        s.add_clause([-q] + d)
        if not s.solve(assumptions=[q]):
            cls = "contradiction"
        elif not s.solve(assumptions=[-n for n in d]):
            cls = "entailed"
        else:
            cls = "newinfo"
        s.add_clause([q] if cls == "newinfo" else [-q])
        counts[cls] += 1
        lines.append(json.dumps({"kind": "verify", "session": "t1", "formula": text, "outcome": cls}))
        if cls == "newinfo":
            lines.append(json.dumps({"kind": "announce", "session": "t1", "id": "s%d" % i, "formula": text}))
    data = "\n".join(lines) + "\n"
    if out == "-":
        sys.stdout.write(data)
    else:
        with open(out, "w") as f:
            f.write(data)
    print("T1 as a trace: %d steps, %s" % (len(steps), counts), file=sys.stderr)


if __name__ == "__main__":
    main()
