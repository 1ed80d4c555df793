#!/usr/bin/env bash
# Opening large traces: doxascope's TUI beside lnav, the model's load at several sizes, and
# (with AUDIT=1) `doxascope audit` of the largest trace. Prints one line per measure.
#
#   scripts/bench_open.sh                  # 10M events for the TUI, 3M/5M/10M for the load
#   TUI_EVENTS=1000000 LOAD_EVENTS="1000000 2000000" scripts/bench_open.sh
#   AUDIT=1 scripts/bench_open.sh          # also audit 100k, 1M and the TUI trace (minutes)
#   AUDIT=1 TUI_EVENTS=1000000 LOAD_EVENTS= AUDIT_EVENTS="100000 1000000" scripts/bench_open.sh
#
# Traces are generated with `cargo run --release --example gentrace -- --events N --seed 7`
# into $BENCH_DIR (default /tmp/doxascope-bench), once, and reused while their size is
# right. lnav is installed from Debian's packages when missing (apt-get), tmux too.
#
# How "open until the last step is navigable" is timed: the real release binary runs in a
# private tmux server (250x50), `doxascope --no-follow FILE`, and the script polls the screen
# (through one control-mode client, see `watch_screen`)
# every 20 ms. The first frame is the first capture that shows the header (" session ");
# the last step is navigable once the header no longer shows the loading bar and reads
# "step N of N" (the view follows the newest step, so the last step is the one drawn).
# A large file whose lines mostly belong to other sessions than its first is read once, led
# by the session the view opens on: that session is replayed as it is read, the others are
# indexed without a replay. The time until the whole file is in is reported as well ("all
# loaded": once the header no longer says "reading the rest", which an older two-pass load
# showed while it read the file a second time; with one pass it is the last step's time).
# The script then shows the next session (key `s`) and times its replay until its last
# step is navigable ("next session shown"), with the peak RSS after it.
# CPU time (user + system, from /proc/PID/stat) is reported beside wall time: on a shared
# machine the wall time depends on what else runs, the CPU time much less.
# Peak RSS is the process's VmHWM, read from /proc when the last step is drawn (the
# background audit the view starts afterwards is not waited for; its memory at that moment
# is included). Both tools read the file from the page cache (it is read once before each
# run); nothing else should run meanwhile (2-core machine).
#
# lnav is timed as `lnav -n -c ':goto 100%' FILE` (headless: it indexes the file and moves
# to its last line), wall time and peak RSS from /usr/bin/time.
#
# Time travel is measured in-process by `cargo bench --bench open -- FILE` (benches/open.rs:
# the viewer's loader code on the same file, then 200x60 frames drawn at random steps);
# TIME_TRAVEL=0 leaves it out (its build is a second fat-LTO link).
set -euo pipefail

cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/doxascope-bench}
TUI_EVENTS=${TUI_EVENTS:-10000000}
LOAD_EVENTS=${LOAD_EVENTS-"3000000 5000000 10000000"}
SOCK="bench-open-$$"
mkdir -p "$BENCH_DIR"

need() {
    command -v "$1" >/dev/null 2>&1 && return 0
    echo "installing $2 (apt-get)" >&2
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq >/dev/null && apt-get install -y -qq "$2" >/dev/null
    else
        sudo apt-get update -qq >/dev/null && sudo apt-get install -y -qq "$2" >/dev/null
    fi
}
need lnav lnav
need tmux tmux
[ -x /usr/bin/time ] || need /usr/bin/time time

# BIN=path measures that binary instead of building the release one (a copy kept aside).
if [ -z "${BIN:-}" ]; then
    cargo build --release --locked --quiet --bin doxascope --example gentrace
    BIN=$PWD/target/release/doxascope
fi

trace() { # N -> path of the generated trace with N events
    local n=$1 f="$BENCH_DIR/gen-$1-seed7.jsonl"
    if [ ! -s "$f" ] || [ "$(wc -l <"$f")" != "$n" ]; then
        cargo run --release --locked --quiet --example gentrace -- \
            --events "$n" --seed 7 --out "$f" >&2
    fi
    echo "$f"
}

warm() { cat "$1" >/dev/null; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
now() { echo "$EPOCHREALTIME"; }

# Polling the screen: `watch_screen`, `header`, `nap`.
# shellcheck source=scripts/tmux_watch.sh
source scripts/tmux_watch.sh

cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; }
trap cleanup EXIT

tui_open() { # FILE -> "first_frame_s navigable_s peak_kib cpu_s all_loaded_s all_cpu_s all_peak_kib"
    local f=$1 start first="" done="" all="" pid hwm screen
    cleanup
    start=$(now)
    tmux -L "$SOCK" new-session -d -x 250 -y 50 "exec $BIN --no-follow $f"
    pid=$(tmux -L "$SOCK" display-message -p '#{pane_pid}')
    watch_screen
    while :; do
        header
        if [ -z "$first" ] && [[ $screen == *" session "* ]]; then
            first=$(now)
        fi
        if [ -n "$first" ] && [[ $screen != *loading* ]]; then
            if [[ $screen =~ step\ ([0-9]+)\ of\ ([0-9]+) ]] &&
                [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
                done=$(now)
                break
            fi
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "the viewer exited early" >&2
            return 1
        fi
        nap
    done
    hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
    local tck cpu all_cpu all_hwm
    tck=$(getconf CLK_TCK)
    cpu=$(awk -v t="$tck" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$pid/stat")
    while [[ $screen == *"reading the rest"* ]]; do
        nap
        header
    done
    all=$(now)
    all_hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
    all_cpu=$(awk -v t="$tck" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$pid/stat")
    # The next session: replayed when shown, navigable once the header says "step N of N"
    # with no progress bar.
    local next next_cpu next_hwm step
    tmux -L "$SOCK" send-keys s
    while :; do
        header
        # Until the header names the second session, it still shows the first.
        [[ $screen == *" (2/"* ]] || { nap; continue; }
        step=""
        [[ $screen =~ step\ [0-9]+\ of\ [0-9]+ ]] && step=${BASH_REMATCH[0]}
        if [[ $screen != *replaying* && $screen != *loading* ]] &&
            [[ $step =~ step\ ([0-9]+)\ of\ ([0-9]+) ]] && [ "${BASH_REMATCH[2]}" != 0 ] &&
            [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
            break
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "the viewer exited early" >&2
            return 1
        fi
        nap
    done
    next=$(now)
    next_hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
    next_cpu=$(awk -v t="$tck" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$pid/stat")
    cleanup
    echo "$(awk -v a="$first" -v b="$start" 'BEGIN{printf "%.3f", a-b}') \
$(awk -v a="$done" -v b="$start" 'BEGIN{printf "%.3f", a-b}') $hwm $cpu \
$(awk -v a="$all" -v b="$start" 'BEGIN{printf "%.3f", a-b}') $all_cpu $all_hwm \
$(awk -v a="$next" -v b="$all" 'BEGIN{printf "%.3f", a-b}') \
$(awk -v a="$next_cpu" -v b="$all_cpu" 'BEGIN{printf "%.2f", a-b}') $next_hwm $step"
}

lnav_open() { # FILE -> "wall_s peak_kib cpu_s"
    # time's own report goes to a file: lnav's stderr is silenced, and with it time's.
    local out="$BENCH_DIR/lnav.time"
    /usr/bin/time -o "$out" -f "%e %M %U %S" lnav -n -c ':goto 100%' "$1" >/dev/null 2>&1
    tail -n 1 "$out" | awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }'
}

f=$(trace "$TUI_EVENTS")
size=$(stat -L -c %s "$f")
echo "trace: $f, $TUI_EVENTS events, $(mib $((size / 1024))) MiB, load average $(cut -d' ' -f1-3 /proc/loadavg)"
warm "$f"
read -r lw lk lc < <(lnav_open "$f")
warm "$f"
read -r first nav hwm tc all ac ahwm nw nc nhwm _ nsteps _ nof < <(tui_open "$f")
echo "lnav -n -c ':goto 100%':   ${lw} s (CPU ${lc} s), peak RSS $(mib "$lk") MiB ($(ratio $((lk * 1024)) "$size")x file)"
echo "doxascope TUI open:        first frame ${first} s, last step navigable ${nav} s (CPU ${tc} s), peak RSS $(mib "$hwm") MiB ($(ratio $((hwm * 1024)) "$size")x file)"
echo "doxascope / lnav:          wall $(ratio "$nav" "$lw"), CPU $(ratio "$tc" "$lc")"
echo "doxascope all loaded:      ${all} s (CPU ${ac} s), peak RSS $(mib "$ahwm") MiB ($(ratio $((ahwm * 1024)) "$size")x file)"
echo "doxascope all / lnav:      wall $(ratio "$all" "$lw"), CPU $(ratio "$ac" "$lc")"
echo "next session shown:        replayed in ${nw} s (CPU ${nc} s), step ${nsteps} of ${nof}, peak RSS $(mib "$nhwm") MiB ($(ratio $((nhwm * 1024)) "$size")x file)"
echo "load average after:        $(cut -d' ' -f1-3 /proc/loadavg)"

# Time travel (and the loader's CPU time, in-process): benches/open.rs on the same file.
if [ "${TIME_TRAVEL:-1}" = 1 ]; then
    warm "$f"
    cargo bench --locked --quiet --bench open -- "$f" 2>/dev/null | sed 's/^/bench open: /'
fi

for n in $LOAD_EVENTS; do
    g=$(trace "$n")
    warm "$g"
    out=$( { /usr/bin/time -f "%e %M %U %S" "$BIN" export "$g" --session gen-0 --format prompt >/dev/null; } 2>&1 | tail -n 1)
    read -r s k u y <<<"$out"
    echo "export (model load) $n events: ${s} s (CPU $(awk -v u="$u" -v y="$y" 'BEGIN{printf "%.2f", u + y}') s), peak RSS $(mib "$k") MiB ($(ratio $((k * 1024)) "$(stat -L -c %s "$g")")x file), $(awk -v s="$s" -v n="$n" 'BEGIN{printf "%.2f", s / n * 1e6}') µs/event"
done

if [ "${AUDIT:-0}" = 1 ]; then
    # The 100k-event prefix, the 1M trace (the time target is their ratio) and the TUI's
    # trace (the memory target: peak RSS at most the file's size). `audit` exits 1 on these
    # traces (they have findings); the report goes to /dev/null.
    for n in ${AUDIT_EVENTS:-100000 1000000 $TUI_EVENTS}; do
        f=$(trace "$n")
        size=$(stat -c %s "$f")
        warm "$f"
        out=$( { /usr/bin/time -f "%e %U %S %M" "$BIN" audit "$f" >/dev/null; } 2>&1 | tail -n 1 || true)
        read -r s u sy k <<<"$out"
        cpu=$(awk -v a="$u" -v b="$sy" 'BEGIN { printf "%.2f", a + b }')
        echo "audit $n events: ${s} s wall, ${cpu} s CPU, peak RSS $(mib "$k") MiB ($(ratio $((k * 1024)) "$size")x file)"
    done
fi
