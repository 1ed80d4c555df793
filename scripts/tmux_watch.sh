# Sourced by scripts/bench_open.sh and scripts/bench_import.sh: watching a viewer's screen
# in a private tmux server (named by $SOCK) cheaply while it is timed.
#
# The screen is polled every 20 ms through one tmux client in control mode, started once
# (`watch_screen`), with bash's own tests and a `read` with a timeout for the pause, so a
# poll starts no process. Polling with a new tmux client and a pipeline of grep, awk, head
# and sleep each time took half a core of this 2-core machine on its own (0.2 cores with
# only the tmux client), while doxascope was timed and not while lnav was; now 0.03 cores.
exec {NAP_FD}<> <(:)
nap() { read -r -t 0.02 -u "$NAP_FD" _ || true; }
watch_screen() { # attach the control client to the server just started, and sync with it
    coproc TMUX_CC { exec tmux -L "$SOCK" -C attach -f ignore-size,no-output 2>/dev/null; }
    # Kept apart: bash unsets the array when the client exits.
    CC_IN=${TMUX_CC[1]} CC_OUT=${TMUX_CC[0]}
    echo "display-message -p synced" >&"$CC_IN"
    local line
    while IFS= read -r line <&"$CC_OUT"; do [ "$line" = synced ] && break; done
    # The reply's %end.
    IFS= read -r line <&"$CC_OUT" || true
}
header() { # sets `screen` to the header's two lines (nothing once the client is gone)
    local line out="" inside=0
    screen=""
    { echo "capture-pane -p -S 0 -E 1" >&"$CC_IN"; } 2>/dev/null || return 0
    while IFS= read -r line <&"$CC_OUT"; do
        case $line in
            %begin*) inside=1 ;;
            %end* | %error*) [ $inside = 1 ] && break ;;
            *) [ $inside = 1 ] && out+="$line"$'\n' ;;
        esac
    done
    screen=$out
}
