#!/usr/bin/env bash
# Installs Inspect AI (from PyPI, pinned) into a virtual environment under target/, for
# tests/inspect_client.rs, which runs a small task against Inspect's mock model and opens the
# logs it writes. Reused once made: the marker file says the install completed and imports.
# Exit 0 when ready; non-zero (with the reason on stderr) when the package index cannot be
# reached or Python cannot make a venv.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.3.285
VENV=${DOXASCOPE_INSPECT_VENV:-target/inspect-venv}
MARK="$VENV/.doxascope-ready-$VERSION"

if [ -f "$MARK" ] && "$VENV/bin/python" -c "import inspect_ai" 2>/dev/null; then
  exit 0
fi
if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
  echo "setup-inspect: python3 cannot make a venv (apt-get install python3-venv)" >&2
  exit 1
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --timeout 30 --retries 2 \
  "inspect-ai==$VERSION"
"$VENV/bin/python" -c "import inspect_ai" 
touch "$MARK"
# build.rs marks the test as ignored while Inspect is missing; make it look again.
touch build.rs
