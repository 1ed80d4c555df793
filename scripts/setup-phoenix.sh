#!/usr/bin/env bash
# Installs arize-phoenix-client (Phoenix's REST client, which sends span annotations) and the
# OpenTelemetry Python SDK (pinned, from PyPI) into a virtual environment under target/, for
# tests/phoenix_annotations.rs. Reused once made: the marker file says the install completed
# and imports. Exit 0 when ready; non-zero (with the reason on stderr) when the package index
# cannot be reached or Python cannot make a venv.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=target/phoenix-venv
MARK="$VENV/.doxascope-ready-phoenix-3.5.0"
IMPORTS="import phoenix.client, opentelemetry.sdk, opentelemetry.exporter.otlp.proto.http"

if [ -f "$MARK" ] && "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
  exit 0
fi
if ! "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
  if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
    echo "setup-phoenix: python3 cannot make a venv (apt-get install python3-venv)" >&2
    exit 1
  fi
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --timeout 30 --retries 2 \
    arize-phoenix-client==3.5.0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
  "$VENV/bin/python" -c "$IMPORTS"
fi
touch "$MARK"
# build.rs marks the test as ignored while the client is missing; make it look again.
touch build.rs
