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

# scan_sizes RATE REPEAT: doubles the ring until each consumer passes.
scan_sizes() {
    pending=$(echo "$consumers" | tr ',' ' ')
    items=65536
    while [ -n "$pending" ] && [ "$items" -le 16777216 ]; do
        list=$(echo $pending | tr ' ' ',')
        # A consumer that fails (an old CLI, say) fails its step, and the
        # scan goes on.
        FLIGHTREC_ITEMS=$items "$bench" --threads 2 --consumers "$list" \
            --rate "$1" --trials 3 --searches 1 $with_b > "$tmp" ||
            echo "repeat $2: the run at $items items failed"
        left=
        for consumer in $pending; do
            facts=$(awk -v c="$consumer" '
                $1 == c ":" && $2 == "at" { got = $7 }
                $1 == c ":" && $2 == "dropped" { loss = $3; found = 1; next }
                found && /zero loss in/ { zero = $4 "/" $6 }
                found && /too slow in/ { slow = $5 }
                found && /^[a-z]/ { found = 0 }
                END { print got, loss, zero, slow + 0 }' "$tmp")
            set -- "$1" $facts
            kib=$((2 * items * 16 / 1024))
            printf 'repeat %s %-8s %8s items (%6s KiB): %s M events/s reached, zero loss in %s trials, median loss %s%%\n' \
                "$repeat" "$consumer" "$items" "$kib" "$2" "$4" "$3"
            if [ "$4" = 3/3 ]; then
                echo "repeat $repeat $consumer needs $items items, $kib KiB"
            elif [ "$5" = 3 ] && [ "$3" = 0.00 ]; then
                # Short of the rate without losing: the recording call
                # itself is the limit, a larger buffer would not help.
                echo "repeat $repeat $consumer: its producers cannot reach $1 events/s here"
            else
                left="$left $consumer"
            fi
        done
        pending=$left
        items=$((items * 2))
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
