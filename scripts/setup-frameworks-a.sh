#!/usr/bin/env bash
# Installs the agent frameworks of tests/frameworks_a.rs (from PyPI, pinned) into a virtual
# environment under target/: pydantic-ai (slim: no model providers; its FunctionModel runs
# offline), the OpenAI Agents SDK with OpenInference's instrumentation for it, and the OpenAI
# client with the openai-v2 instrumentation, plus the OpenTelemetry SDK and its OTLP/HTTP
# exporter. Reused once made: the marker file says the install completed and imports.
# Exit 0 when ready; non-zero (with the reason on stderr) when the package index cannot be
# reached or Python cannot make a venv.
set -euo pipefail
cd "$(dirname "$0")/.."

# opentelemetry-util-genai is pinned below 1.2: openai-v2 2.4b0 imports a module 1.2 renamed.
PINS="pydantic-ai-slim==2.68.0 openai-agents==0.24.0 openinference-instrumentation-openai-agents==2.6.0 \
opentelemetry-instrumentation-openai-v2==2.4b0 opentelemetry-util-genai==1.1b0 httpx==0.28.1 \
opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2"
VENV=target/fw-a-venv
MARK="$VENV/.doxascope-ready-fw-a-1"
IMPORTS="import pydantic_ai, agents, openinference.instrumentation.openai_agents, opentelemetry.instrumentation.openai_v2, opentelemetry.exporter.otlp.proto.http"

if [ -f "$MARK" ] && "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
  exit 0
fi
if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
  echo "setup-frameworks-a: python3 cannot make a venv (apt-get install python3-venv)" >&2
  exit 1
fi
if ! "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --timeout 30 --retries 2 $PINS
  "$VENV/bin/python" -c "$IMPORTS"
fi
touch "$MARK"
# build.rs marks the tests as ignored while the frameworks are missing; make it look again.
touch build.rs
