#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The consumer benchmarks of the sessions issue, all in one run, with two
# producer threads in discard mode (bench-sustained; see bench/README.md):
#
#  1. the highest total rate with zero loss at the default ring sizes, for
#     the in-process drain, `flightrec stream` from another process, and
#     LTTng-UST with buffers of the same total memory (SEARCHES searches,
#     consumers interleaved);
#  2. the smallest ring (FLIGHTREC_ITEMS, doubling from 65,536) at which
#     RATE events/s lose nothing in any of 3 trials, for each consumer; for
#     LTTng the same memory in its buffers.  The scan is run REPEATS times.
#
# With FLIGHTREC_B=PATH, another build of the flightrec CLI streams too
# (consumer stream-b): before and after a change, in the same run.
#
# LTTng needs bench-sustained-lttng (built where liblttng-ust-dev is
# installed) and lttng-tools; a session daemon is started for the run if
# none answers, and stopped afterwards.
#
#   bench/session-stream.sh BUILD_DIR [SEARCHES [REPEATS [RATE]]]
set -eu

build=${1:?usage: session-stream.sh BUILD_DIR [SEARCHES [REPEATS [RATE]]]}
searches=${2:-5}
repeats=${3:-3}
rate=${4:-10000000}
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

echo "== 1. zero-loss rate at the default sizes, 2 threads"
"$bench" --threads 2 --consumers "$consumers" --searches "$searches" $with_b

echo
echo "== 2. ring size for zero loss at $rate events/s, 2 threads, 3 trials each"
tmp=$(mktemp)
trap 'rm -f "$tmp"; cleanup' EXIT
for repeat in $(seq "$repeats"); do
    pending=$(echo "$consumers" | tr ',' ' ')
    items=65536
    while [ -n "$pending" ] && [ "$items" -le 16777216 ]; do
        list=$(echo $pending | tr ' ' ',')
        FLIGHTREC_ITEMS=$items "$bench" --threads 2 --consumers "$list" \
            --rate "$rate" --trials 3 --searches 1 $with_b > "$tmp"
        left=
        for consumer in $pending; do
            zero=$(awk -v c="$consumer" '
                $1 == c ":" && $2 == "dropped" { found = 1; next }
                found && /zero loss in/ { print $4 "/" $6; exit }' "$tmp")
            loss=$(awk -v c="$consumer" '$1 == c ":" && $2 == "dropped" { print $3 "%" }' "$tmp")
            bytes=$((2 * items * 16))
            printf 'repeat %s %-7s %9s items (%5s KiB buffers): zero loss in %s trials, median loss %s\n' \
                "$repeat" "$consumer" "$items" $((bytes / 1024)) "$zero" "$loss"
            case $zero in
            3/3) echo "repeat $repeat $consumer needs $items items, $((bytes / 1024)) KiB" ;;
            *) left="$left $consumer" ;;
            esac
        done
        pending=$left
        items=$((items * 2))
    done
    for consumer in $pending; do
        echo "repeat $repeat $consumer: loses events even at 16777216 items"
    done
done
