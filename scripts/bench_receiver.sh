#!/usr/bin/env bash
# The OTLP receiver's memory and disk over repeated loads (issues 28 and 31).
#
# Runs `doxascope view --listen otlp:127.0.0.1:PORT` (the TUI, in a private tmux server, with
# its own XDG_CACHE_HOME so the spool directory is ours), sends it batches of one-span and of
# 10-span traces (scripts/bench_receiver.py, OTLP/HTTP JSON, 100 traces per request), and after
# each batch, once every trace's session has ended (2 s after its root, swept every 250 ms),
# prints the viewer's VmRSS and VmHWM (/proc/PID/status) and the spool directory's files and
# bytes. Nothing is opened in the viewer: it shows the first session throughout.
#
# Usage: scripts/bench_receiver.sh [BIN...]   (default: target/debug/doxascope)
# Variables: BATCHES (traces per batch, default "10000 20000": 10,000 then 30,000 in all),
# SPANS (default "1 10"), PORT (default 43180), SETTLE (seconds after a batch, default 5).
set -euo pipefail

cd "$(dirname "$0")/.."
BINS=("$@")
[ ${#BINS[@]} -eq 0 ] && BINS=(target/debug/doxascope)
BATCHES=${BATCHES:-"10000 20000"}
SPANS=${SPANS:-"1 10"}
PORT=${PORT:-43180}
SETTLE=${SETTLE:-5}
SOCK=bench-receiver-$$
WORK=$(mktemp -d)
trap 'tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$WORK"' EXIT

kib() { awk -v k="$1" '/^'"$1"':/ {print $2}' "/proc/$2/status"; }

printf '%-34s %6s %9s %10s %10s %8s %10s\n' binary spans traces "VmRSS MB" "VmHWM MB" files "spool MB"
for bin in "${BINS[@]}"; do
  for spans in $SPANS; do
    cache="$WORK/cache-$spans-$(basename "$bin")"
    mkdir -p "$cache"
    tmux -L "$SOCK" new-session -d -x 160 -y 40 \
      "sh -c 'echo \$\$ > $WORK/pid; exec env XDG_CACHE_HOME=$cache $bin view --listen otlp:127.0.0.1:$PORT'"
    for _ in $(seq 100); do [ -s "$WORK/pid" ] && curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
    pid=$(cat "$WORK/pid")
    sleep 1
    printf '%-34s %6s %9s %10.1f %10.1f %8s %10s\n' "$(basename "$bin")" "$spans" 0 \
      "$(echo "$(kib VmRSS "$pid")/1024" | bc -l)" "$(echo "$(kib VmHWM "$pid")/1024" | bc -l)" 0 0
    sent=0
    first=1
    for n in $BATCHES; do
      python3 scripts/bench_receiver.py "http://127.0.0.1:$PORT/v1/traces" "$n" "$spans" "$first"
      first=$((first + n))
      sent=$((sent + n))
      sleep "$SETTLE"
      dir=$(find "$cache/doxascope/live" -mindepth 1 -maxdepth 1 -type d | head -1)
      files=$(find "$dir" -type f | wc -l)
      bytes=$(du -sb "$dir" | cut -f1)
      printf '%-34s %6s %9s %10.1f %10.1f %8s %10.1f\n' "$(basename "$bin")" "$spans" "$sent" \
        "$(echo "$(kib VmRSS "$pid")/1024" | bc -l)" "$(echo "$(kib VmHWM "$pid")/1024" | bc -l)" \
        "$files" "$(echo "$bytes/1048576" | bc -l)"
    done
    tmux -L "$SOCK" kill-server 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$WORK/pid"
  done
done
