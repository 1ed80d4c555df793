#!/usr/bin/env bash
# Installs dratify (an independent DRAT proof checker, pure Python) and PySAT (for
# scripts/t1_trace.py) from PyPI into a virtual environment under target/, for
# tests/certificates_dratify.rs, which checks doxascope's certificates with them. Reused once
# made: the marker file says the install completed and imports.
# Exit 0 when ready; non-zero (with the reason on stderr) when the package index cannot be
# reached or Python cannot make a venv.
set -euo pipefail
cd "$(dirname "$0")/.."

DRATIFY=0.1.10
VENV=${DOXASCOPE_DRAT_VENV:-target/drat-venv}
MARK="$VENV/.doxascope-ready-dratify-$DRATIFY"

if [ -f "$MARK" ] && "$VENV/bin/python" -c "import dratify, pysat" 2>/dev/null; then
  exit 0
fi
if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
  echo "setup-dratify: python3 cannot make a venv (apt-get install python3-venv)" >&2
  exit 1
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --timeout 30 --retries 2 \
  "dratify==$DRATIFY" python-sat
"$VENV/bin/python" -c "import dratify, pysat"
touch "$MARK"
# build.rs marks the test as ignored while dratify is missing; make it look again.
touch build.rs
