#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Overhead of `flightrec record` on a lock-heavy and a malloc-heavy workload:
# each workload plain, under `flightrec record`, and, where installed, under
# LTTng-UST's libc/pthread wrappers (recording into a session), ltrace and
# uftrace.  Runs are interleaved; the median of RUNS is reported as ns per
# iteration and as a ratio to plain, all from the same run.
#
#   bench/record-overhead.sh BUILD_DIR [RUNS] [ITERATIONS]
set -eu

build=${1:?usage: record-overhead.sh BUILD_DIR [RUNS] [ITERATIONS]}
runs=${2:-5}
iterations=${3:-200000}
workload=$build/bench/bench-record-workload
flightrec=$build/tools/flightrec/flightrec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${lttng_started:-}" ] && lttng destroy -a >/dev/null 2>&1 || true' EXIT

libdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
lttng_libc=$(ls "$libdir"/liblttng-ust-libc-wrapper.so* 2>/dev/null | head -n 1 || true)
lttng_pthread=$(ls "$libdir"/liblttng-ust-pthread-wrapper.so* 2>/dev/null | head -n 1 || true)

tools="plain record"
if [ -n "$lttng_libc" ] && [ -n "$lttng_pthread" ] && command -v lttng >/dev/null; then
    if ! lttng list >/dev/null 2>&1; then
        lttng-sessiond --daemonize >/dev/null 2>&1 || true
    fi
    if lttng create rec-bench --output="$tmp/lttng" >/dev/null 2>&1 &&
       lttng enable-event -u 'lttng_ust_libc:*' >/dev/null 2>&1 &&
       lttng enable-event -u 'lttng_ust_pthread:*' >/dev/null 2>&1 &&
       lttng start >/dev/null 2>&1; then
        lttng_started=1
        tools="$tools lttng"
    else
        echo "lttng: no session could be started; skipped" >&2
    fi
else
    echo "lttng: liblttng-ust1 and lttng-tools not installed; skipped" >&2
fi
command -v ltrace >/dev/null && tools="$tools ltrace" ||
    echo "ltrace: not installed; skipped" >&2
command -v uftrace >/dev/null && tools="$tools uftrace" ||
    echo "uftrace: not installed; skipped" >&2

# run TOOL MODE: prints ns/op of one run.
run() {
    case $1 in
    plain) "$workload" "$2" "$iterations" ;;
    record) "$flightrec" -q record -f -o "$tmp/w.rec" --events locks,memory,threads \
                -- "$workload" "$2" "$iterations" ;;
    lttng) LD_PRELOAD="$lttng_libc:$lttng_pthread" "$workload" "$2" "$iterations" ;;
    # ltrace stops at every call: a hundredth of the iterations (the
    # figure is per iteration all the same).
    ltrace) ltrace -f -o "$tmp/ltrace.out" -e malloc+free+pthread_mutex_lock+pthread_mutex_unlock \
                "$workload" "$2" $((iterations / 100)) ;;
    uftrace) uftrace record -d "$tmp/uftrace.data" --force \
                 "$workload" "$2" "$iterations" ;;
    esac | awk '/^ns\/op/ { print $2 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for mode in locks malloc; do
    for tool in $tools; do : > "$tmp/$tool.$mode"; done
    i=0
    while [ $i -lt "$runs" ]; do
        for tool in $tools; do
            run "$tool" "$mode" >> "$tmp/$tool.$mode" || true
        done
        i=$((i + 1))
    done
    plain=$(median < "$tmp/plain.$mode")
    for tool in $tools; do
        m=$(median < "$tmp/$tool.$mode")
        if [ -z "$m" ]; then
            printf '%-7s %-8s failed\n' "$mode" "$tool"
            continue
        fi
        awk -v mode="$mode" -v tool="$tool" -v m="$m" -v p="$plain" \
            'BEGIN { printf "%-7s %-8s %10.1f ns/iteration  %6.2fx\n", mode, tool, m, m / p }'
    done
done
