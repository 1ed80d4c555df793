#!/usr/bin/env bash
# Coverage-guided fuzzing of doxascope's parsers with cargo fuzz (libFuzzer).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Targets: trace_bytes (the trace reader, in any chunking), formula_text (the formula parser
# and its print/parse round trip), repl_line (the REPL's command parser), otlp_json (the
# OpenTelemetry importer), otlp_request (the OTLP/HTTP receiver's request path), and the other
# importers: import_inspect, import_langfuse, import_langsmith, import_letta, import_graphiti,
# import_mem0, import_langgraph (with the msgpack decoder), import_detect (format detection,
# then the detected importer). What each checks is
# in tests/support/fuzz_targets.rs; `cargo test --test fuzz_smoke` runs the same checks for a
# few seconds per target without coverage guidance (that is what CI runs).
#
# cargo fuzz needs nightly compiler flags; on a stable toolchain RUSTC_BOOTSTRAP=1 allows
# them. Crashes land in fuzz/artifacts/TARGET/; replay one with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET fuzz/artifacts/TARGET/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(trace_bytes formula_text repl_line otlp_json otlp_request
  import_inspect import_langfuse import_langsmith import_letta import_graphiti import_mem0
  import_langgraph import_detect)

command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
mkdir -p fuzz/corpus
for t in "${targets[@]}"; do
  corpus="fuzz/corpus/$t"
  mkdir -p "$corpus"
  # Seed each corpus with real inputs: the external traces for an importer, the sample
  # traces' lines for the others.
  seeds=""
  case "$t" in
    import_inspect) seeds=${DOXASCOPE_EXTERNAL_TRACES:-../shared/external-traces}/inspect ;;
    import_langfuse) seeds=${DOXASCOPE_EXTERNAL_TRACES:-../shared/external-traces}/langfuse ;;
    import_langsmith) seeds=${DOXASCOPE_EXTERNAL_TRACES:-../shared/external-traces}/langsmith-langgraph ;;
    import_letta) seeds=${DOXASCOPE_EXTERNAL_TRACES:-../shared/external-traces}/letta ;;
    import_graphiti) seeds=${DOXASCOPE_EXTERNAL_TRACES:-../shared/external-traces}/memory ;;
    import_detect) seeds=${DOXASCOPE_EXTERNAL_TRACES:-../shared/external-traces} ;;
  esac
  if [ -n "$seeds" ] && [ -z "$(ls -A "$corpus")" ]; then
    find "$seeds" -type f ! -name '*.md' -exec cp {} "$corpus/" \;
  fi
  if [ -z "$(ls -A "$corpus")" ]; then
    i=0
    for f in sample-traces/*.jsonl; do
      while IFS= read -r line; do
        printf '%s' "$line" > "$corpus/seed-$i"; i=$((i + 1))
      done < "$f"
    done
  fi
  echo "== fuzzing $t for ${secs}s"
  cargo fuzz run "$t" "$corpus" -- -max_total_time="$secs" -max_len=524288
done
