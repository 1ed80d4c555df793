#!/usr/bin/env bash
# Imports of other tools' traces: peak memory of `doxascope import FILE -o OUT`, `audit` and
# `export` beside the file's size, and the TUI opening the file beside lnav, in the same run.
#
#   scripts/bench_import.sh FILE [BIN...]     # BIN defaults to target/release/doxascope
#   TUI_ONLY=1 scripts/bench_import.sh FILE [BIN...]   # only the TUI open beside lnav
#
# The TUI is timed as scripts/bench_open.sh does (a private tmux server, 250x50, the screen
# polled every 20 ms through one control-mode client: scripts/tmux_watch.sh): "opened" is the first capture whose header shows no loading bar and
# reads "step N of N". lnav: `lnav -n -c ':goto 100%' FILE`, right before each binary. Every
# line ends with the load average (`uptime`): the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:?usage: scripts/bench_import.sh FILE [BIN...]}
shift
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=("$PWD/target/release/doxascope")
SOCK="bench-import-$$"
OUT=$(mktemp -d)
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$OUT"; }
trap cleanup EXIT
size=$(stat -L -c %s "$FILE")
load() { uptime | sed 's/.*load average: //'; }
now() { echo "$EPOCHREALTIME"; }
# Polling the screen: `watch_screen`, `header`, `nap` (as scripts/bench_open.sh does).
# shellcheck source=scripts/tmux_watch.sh
source scripts/tmux_watch.sh
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

timed() { # LABEL CMD... -> one line: wall, CPU, peak RSS / file
    local label=$1
    shift
    /usr/bin/time -o "$OUT/t" -f "%e %M %U %S" "$@" >/dev/null 2>&1 || true
    read -r s k u y < <(tail -n 1 "$OUT/t")
    echo "$label: ${s} s (CPU $(awk -v u="$u" -v y="$y" 'BEGIN{printf "%.2f", u + y}') s), peak RSS $(mib "$k") MiB ($(ratio $((k * 1024)) "$size")x file) [load $(load)]"
}

tui_open() { # BIN -> seconds until the last step is navigable, and the peak RSS (KiB)
    local bin=$1 start screen pid
    tmux -L "$SOCK" kill-server 2>/dev/null || true
    start=$(now)
    tmux -L "$SOCK" new-session -d -x 250 -y 50 "exec $bin --no-follow $FILE"
    pid=$(tmux -L "$SOCK" display-message -p '#{pane_pid}')
    watch_screen
    while :; do
        header
        if [[ $screen == *" session "* && $screen != *loading* && $screen != *"reading the rest"* ]] &&
            [[ $screen =~ step\ ([0-9]+)\ of\ ([0-9]+) ]] &&
            [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
            break
        fi
        kill -0 "$pid" 2>/dev/null || { echo "the viewer exited early" >&2; return 1; }
        nap
    done
    echo "$(awk -v a="$(now)" -v b="$start" 'BEGIN{printf "%.3f", a-b}') $(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")"
    tmux -L "$SOCK" kill-server 2>/dev/null || true
}

echo "file: $FILE, $(mib $((size / 1024))) MiB"
for bin in "${BINS[@]}"; do
    echo "binary: $bin"
    cat "$FILE" >/dev/null
    if [ -z "${TUI_ONLY:-}" ]; then
        timed "  import -o" "$bin" import "$FILE" -o "$OUT/v1.jsonl"
        timed "  audit" "$bin" audit "$FILE"
        timed "  export --format prompt" "$bin" export "$FILE" --format prompt
    fi
    cat "$FILE" >/dev/null
    /usr/bin/time -o "$OUT/l" -f "%e %M" lnav -n -c ':goto 100%' "$FILE" >/dev/null 2>&1 || true
    read -r lw lk < <(tail -n 1 "$OUT/l")
    read -r tw tk < <(tui_open "$bin")
    echo "  lnav :goto 100%: ${lw} s, peak RSS $(mib "$lk") MiB; TUI open: ${tw} s, peak RSS $(mib "$tk") MiB ($(ratio $((tk * 1024)) "$size")x file); TUI / lnav $(ratio "$tw" "$lw") [load $(load)]"
done
