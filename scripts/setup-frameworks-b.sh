#!/usr/bin/env bash
# Installs LangGraph, smolagents, Strands Agents and LlamaIndex with their OpenTelemetry
# instrumentation (OpenInference for LangChain, smolagents and LlamaIndex; Strands' own
# tracer) and the OpenTelemetry SDK with its OTLP/HTTP exporter, pinned, into a venv under
# target/, for tests/frameworks_b.rs. Reused once made: the marker says the install
# completed and imports. Exit 0 when ready; non-zero (with the reason on stderr) when the
# package index cannot be reached or Python cannot make a venv.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${DOXASCOPE_FW_B_VENV:-target/fw-b-venv}
MARK="$VENV/.doxascope-ready-frameworks-b"
# The OpenTelemetry packages move in lock-step (SDK 1.45.1 = instrumentation 0.66b1); left
# free, pip backtracks through every release of them.
PINS="langgraph==1.2.24 langchain-core==1.8.3 openinference-instrumentation-langchain==0.1.80
smolagents==1.26.0 openinference-instrumentation-smolagents==0.1.43
strands-agents==1.62.0
llama-index-core==0.14.25 openinference-instrumentation-llama-index==4.6.1
opentelemetry-api==1.45.1 opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
opentelemetry-instrumentation==0.66b1 opentelemetry-instrumentation-threading==0.66b1
opentelemetry-semantic-conventions==0.66b1"
IMPORTS="import langgraph.prebuilt, smolagents, strands, llama_index.core.agent.workflow, \
openinference.instrumentation.langchain, openinference.instrumentation.smolagents, \
openinference.instrumentation.llama_index, opentelemetry.exporter.otlp.proto.http.trace_exporter"

if [ -f "$MARK" ] && "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
  exit 0
fi
if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
  echo "setup-frameworks-b: python3 cannot make a venv (apt-get install python3-venv)" >&2
  exit 1
fi
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# shellcheck disable=SC2086
"$VENV/bin/pip" install --quiet --disable-pip-version-check --timeout 30 --retries 2 $PINS
"$VENV/bin/python" -c "$IMPORTS"
touch "$MARK"
# build.rs marks the tests as ignored while the frameworks are missing; make it look again.
touch build.rs
