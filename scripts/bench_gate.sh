#!/usr/bin/env bash
# The gate at the limit (issue 14): `doxascope audit` on the T1 workload side by side with
# PySAT (MiniSat 2.2, hard clauses) and Python with a fresh Z3 solver per check, in one run.
# Installs the peers (PyPI: python-sat, z3-solver) in a venv under target/, builds the
# release binary, then runs scripts/bench_gate.py (see its docstring for what is timed).
# Usage: scripts/bench_gate.sh [--runs N] [--z3-every N] [--no-z3]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-venv
if ! "$venv/bin/python" -c 'import pysat, z3' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q python-sat z3-solver
fi
cargo build --release --locked --bin doxascope
exec "$venv/bin/python" scripts/bench_gate.py target/release/doxascope "$@"
