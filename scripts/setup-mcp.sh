#!/usr/bin/env bash
# Installs the official MCP Python SDK (`mcp` from PyPI) into a virtual environment under
# target/, for tests/mcp_python.rs, whose stdio client lists and calls `doxascope mcp`'s
# tools. Reused once made: the marker file says the install completed and imports. Exit 0
# when ready; non-zero (with the reason on stderr) when the package index cannot be reached
# or Python cannot make a venv.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_VERSION=2.3.0
VENV=target/mcp-venv
MARK="$VENV/.doxascope-ready-mcp"
IMPORTS="import mcp, mcp.client.stdio"

if [ -f "$MARK" ] && "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
  exit 0
fi
if ! "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
  if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
    echo "setup-mcp: python3 cannot make a venv (apt-get install python3-venv)" >&2
    exit 1
  fi
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --timeout 30 --retries 2 \
    "mcp==$MCP_VERSION"
  "$VENV/bin/python" -c "$IMPORTS"
fi
touch "$MARK"
# build.rs marks the tests as ignored while the SDK is missing; make it look again.
touch build.rs
