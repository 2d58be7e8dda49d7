#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The consumer benchmarks of the sessions issue, all in one run, with two
# producer threads in discard mode (bench-sustained; see bench/README.md):
#
#  1. the highest total rate with zero loss at the default ring sizes, for
#     the in-process drain, `flightrec stream` from another process, and
#     LTTng-UST with buffers of the same total memory (SEARCHES searches,
#     consumers interleaved);
#     (SEARCHES 0 skips this part);
#  2. for each RATE (default 10 M events/s), the smallest ring
#     (FLIGHTREC_ITEMS, doubling from 65,536) at which RATE events/s lose
#     nothing in any of 3 trials, for each consumer; for LTTng the same
#     memory in its buffers.  A trial whose producers fall short of 95% of
#     the rate does not pass.  The scan is run REPEATS times.
#
# With FLIGHTREC_B=PATH, another build of the flightrec CLI streams too
# (consumer stream-b): before and after a change, in the same run.
#
# LTTng needs bench-sustained-lttng (built where liblttng-ust-dev is
# installed) and lttng-tools; a session daemon is started for the run if
# none answers, and stopped afterwards.
#
#   bench/session-stream.sh BUILD_DIR [SEARCHES [REPEATS [RATE...]]]
set -eu

build=${1:?usage: session-stream.sh BUILD_DIR [SEARCHES [REPEATS [RATE...]]]}
searches=${2:-5}
repeats=${3:-3}
shift $(($# < 3 ? $# : 3))
rates=${*:-10000000}
bench=$build/bench/bench-sustained
consumers=drain,stream
with_b=
if [ -n "${FLIGHTREC_B:-}" ]; then
    consumers=$consumers,stream-b
    with_b="--flightrec-b $FLIGHTREC_B"
fi
sessiond=
cleanup() {
    if [ -n "$sessiond" ]; then kill "$sessiond" 2>/dev/null || true; fi
}
trap cleanup EXIT

if [ -x "$build/bench/bench-sustained-lttng" ] && command -v lttng >/dev/null; then
    if ! lttng list >/dev/null 2>&1; then
        lttng-sessiond --daemonize >/dev/null 2>&1 || true
        sessiond=$(pgrep -o -x -u "$(id -u)" lttng-sessiond || true)
    fi
    if lttng list >/dev/null 2>&1; then
        consumers=$consumers,lttng
    else
        echo "lttng: no session daemon could be started; skipped" >&2
    fi
else
    echo "lttng: bench-sustained-lttng (liblttng-ust-dev) or lttng-tools missing; skipped" >&2
fi

# Other load makes wall-clock rates drop: say how much there was.
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$searches" -gt 0 ]; then
    echo "== 1. zero-loss rate at the default sizes, 2 threads"
    "$bench" --threads 2 --consumers "$consumers" --searches "$searches" $with_b ||
        echo "the search failed"
    echo
fi

# scan_sizes RATE REPEAT: doubles the ring until each consumer passes: no
# trial lost anything and at least 2 of 3 reached 95% of the rate.  A step
# where nothing was lost but the producers fell short (other load, or a
# recording call too slow for the rate) is run again, twice at most; a
# consumer still short then is reported as such.
scan_sizes() {
    rate=$1 repeat=$2
    pending=$(echo "$consumers" | tr ',' ' ')
    items=65536
    tries=0
    while [ -n "$pending" ] && [ "$items" -le 16777216 ]; do
        list=$(echo $pending | tr ' ' ',')
        # A consumer that fails (an old CLI, say) fails its step, and the
        # scan goes on.
        FLIGHTREC_ITEMS=$items "$bench" --threads 2 --consumers "$list" \
            --rate "$rate" --trials 3 --searches 1 $with_b > "$tmp" ||
            echo "repeat $repeat: the run at $items items failed"
        left= again=
        for consumer in $pending; do
            facts=$(awk -v c="$consumer" '
                $1 == c ":" && $2 == "at" { got = $7 }
                $1 == c ":" && $2 == "dropped" { loss = $3; found = 1; next }
                found && /zero loss in/ { zero = $4 }
                found && /events lost in/ { lost = $4 }
                found && /^[a-z]/ { found = 0 }
                END { print (got == "" ? "-" : got), (loss == "" ? "-" : loss),
                            (zero == "" ? 0 : zero), (lost == "" ? 3 : lost) }' "$tmp")
            set -- $facts
            kib=$((2 * items * 16 / 1024))
            printf 'repeat %s %-8s %8s items (%6s KiB): %s M events/s reached, zero loss at the rate in %s/3, lost in %s/3, median loss %s%%\n' \
                "$repeat" "$consumer" "$items" "$kib" "$1" "$3" "$4" "$2"
            if [ "$4" = 0 ] && [ "$3" -ge 2 ]; then
                echo "repeat $repeat $consumer needs $items items, $kib KiB"
            elif [ "$4" = 0 ] && [ "$tries" -lt 2 ]; then
                again="$again $consumer"
            elif [ "$4" = 0 ]; then
                echo "repeat $repeat $consumer: its producers do not reach $rate events/s here"
            else
                left="$left $consumer"
            fi
        done
        if [ -n "$again" ] && [ -z "$left" ]; then
            # The same size again, for those that fell short of the rate.
            pending=$(echo $again)
            tries=$((tries + 1))
        else
            # (Short of the rate beside one that lost: on to the next size,
            # which can only make it pass later than it might have.)
            pending=$(echo $left $again)
            items=$((items * 2))
            tries=0
        fi
    done
    for consumer in $pending; do
        echo "repeat $repeat $consumer: loses events even at 16777216 items"
    done
}

tmp=$(mktemp)
trap 'rm -f "$tmp"; cleanup' EXIT
for rate in $rates; do
    echo "== 2. ring size for zero loss at $rate events/s, 2 threads, 3 trials each"
    for repeat in $(seq "$repeats"); do
        scan_sizes "$rate" "$repeat"
    done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
