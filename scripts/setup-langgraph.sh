#!/usr/bin/env bash
# Installs LangGraph with its SQLite checkpointer and langchain-core (from PyPI, pinned) into
# a virtual environment under target/, for tests/import_sources.rs, which runs a small graph
# with a fake chat model and opens the checkpoint database LangGraph writes. Reused once
# made: the marker file says the install completed and imports.
# Exit 0 when ready; non-zero (with the reason on stderr) when the package index cannot be
# reached or Python cannot make a venv.
set -euo pipefail
cd "$(dirname "$0")/.."

PINS="langgraph==1.2.24 langgraph-checkpoint-sqlite==3.1.2 langchain-core==1.8.3"
VENV=${DOXASCOPE_LANGGRAPH_VENV:-target/langgraph-venv}
MARK="$VENV/.doxascope-ready-langgraph-1.2.24"

if [ -f "$MARK" ] && "$VENV/bin/python" -c "import langgraph.checkpoint.sqlite" 2>/dev/null; then
  exit 0
fi
if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
  echo "setup-langgraph: python3 cannot make a venv (apt-get install python3-venv)" >&2
  exit 1
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
# shellcheck disable=SC2086
"$VENV/bin/pip" install --quiet --disable-pip-version-check --timeout 30 --retries 2 $PINS
"$VENV/bin/python" -c "import langgraph.checkpoint.sqlite, langchain_core.language_models.fake_chat_models"
touch "$MARK"
# build.rs marks the test as ignored while LangGraph is missing; make it look again.
touch build.rs
