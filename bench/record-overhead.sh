#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Overhead of `flightrec record` on a lock-heavy and a malloc-heavy workload:
# each workload plain, under `flightrec record`, and, where installed, under
# LTTng-UST's libc/pthread wrappers (recording into a session), ltrace and
# uftrace.  Runs are interleaved; the median of RUNS is reported, all from
# the same run, as wall time per iteration and its ratio to plain, and as
# the process's CPU time per iteration (all its threads: the workload's, and
# a tracer's own in-process threads such as flightrec's drain thread), its
# ratio to plain and the CPU time added per wrapped call.  CPU time is the
# figure to trust on a loaded machine: waiting for a CPU does not count.
# "other cpu" is the part of it, per iteration, of the threads the workload
# did not start (flightrec's drain thread, a tracer's own).
# LTTng's consumer daemon and uftrace's writer are other processes, whose
# CPU time does not count either.
#
#   bench/record-overhead.sh BUILD_DIR [RUNS] [ITERATIONS]
#
# Each workload runs calls only ("locks"), and as "locks+N": with N steps
# of computation per iteration (about a nanosecond each), a program that
# computes between its calls.  The goal is stated for those where LTTng's
# wrappers slow the program down more than 3x: record at most 1.5x there.
# RECORD_BENCH_MODES overrides the list of modes.
#
# FLIGHTREC_PRELOAD_B=PATH adds a column "record-b": `flightrec record` with
# another build of libflightrec-preload.so (before/after in one run).
#
# Every recording is checked with `flightrec stats` before its figures
# count: nothing lost (overflow, discard, missing all 0) and every call of
# the workload delivered (locks: MUTEX_UNLOCK 2 x (N + ceil(N/16)); malloc:
# FREE_ENTRY N + 256, MALLOC_ENTRY at least N).  A drain that loses is a
# drain that did less work: such a run does not count and is run again (up
# to RECORD_TRIES times, default 5; on a machine this loaded the drain
# thread may wait for a CPU longer than the rings last); the script says
# how many it ran again, and exits non-zero if a run never got through.
# RECORD_ITEMS=N records with --items N (rings of N items; default the
# record command's).
# Each recording is removed right after its check, so that the kernel's
# writeback of one run's file does not load the next run; the tools run in
# a rotated order, one further on each run, so that whatever load one run
# leaves falls on every tool in turn.
# Packages: scripts/install-deps.sh all (liblttng-ust-dev, lttng-tools,
# ltrace, uftrace).
set -eu

build=${1:?usage: record-overhead.sh BUILD_DIR [RUNS] [ITERATIONS]}
runs=${2:-5}
iterations=${3:-1000000}
modes=${RECORD_BENCH_MODES:-"locks malloc locks+50 locks+100 locks+200 malloc+25 malloc+50 malloc+100"}
record_tries=${RECORD_TRIES:-5}
items_option=${RECORD_ITEMS:+--items $RECORD_ITEMS}
workload=$build/bench/bench-record-workload
flightrec=$build/tools/flightrec/flightrec
tmp=$(mktemp -d)
sessiond=
cleanup() {
    if [ -n "${lttng_started:-}" ]; then
        lttng destroy rec-bench-$$ >/dev/null 2>&1 || true
    fi
    if [ -n "$sessiond" ]; then kill "$sessiond" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

libdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
lttng_libc=$(ls "$libdir"/liblttng-ust-libc-wrapper.so* 2>/dev/null | head -n 1 || true)
lttng_pthread=$(ls "$libdir"/liblttng-ust-pthread-wrapper.so* 2>/dev/null | head -n 1 || true)

tools="plain record"
[ -n "${FLIGHTREC_PRELOAD_B:-}" ] && tools="$tools record-b"
if [ -n "$lttng_libc" ] && [ -n "$lttng_pthread" ] && command -v lttng >/dev/null; then
    if ! lttng list >/dev/null 2>&1; then
        lttng-sessiond --daemonize >/dev/null 2>&1 || true
        sessiond=$(pgrep -o -x -u "$(id -u)" lttng-sessiond || true)
    fi
    if lttng create rec-bench-$$ --output="$tmp/lttng" >/dev/null 2>&1 &&
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
if command -v ltrace >/dev/null; then tools="$tools ltrace"; else
    echo "ltrace: not installed; skipped" >&2; fi
if command -v uftrace >/dev/null; then tools="$tools uftrace"; else
    echo "uftrace: not installed; skipped" >&2; fi

# run TOOL MODE: the workload's output ("ns/op N", "calls/op N") of one run;
# MODE "locks+N" is "locks" with N steps of computation.
run() {
    work=0
    case $2 in *+*) work=${2#*+} ;; esac
    set -- "$1" "${2%%+*}"
    case $1 in
    plain) "$workload" "$2" "$iterations" "$work" ;;
    record) "$flightrec" -q record -f -o "$tmp/w.rec" $items_option --events locks,memory,threads \
                -- "$workload" "$2" "$iterations" "$work" ;;
    record-b) FLIGHTREC_PRELOAD=$FLIGHTREC_PRELOAD_B "$flightrec" -q record -f \
                  -o "$tmp/w.rec" $items_option --events locks,memory,threads \
                  -- "$workload" "$2" "$iterations" "$work" ;;
    lttng) LD_PRELOAD="$lttng_libc:$lttng_pthread" "$workload" "$2" "$iterations" "$work" ;;
    # ltrace stops at every call: a thousandth of the iterations (the
    # figures are per iteration all the same).
    ltrace) ltrace -f -o "$tmp/ltrace.out" -e malloc+free+pthread_mutex_lock+pthread_mutex_unlock \
                "$workload" "$2" $((iterations / 1000)) "$work" ;;
    uftrace) uftrace record -d "$tmp/uftrace.data" --force \
                 "$workload" "$2" "$iterations" "$work" ;;
    esac
}

# check_recording MODE: the last recording holds every call of MODE and
# reports no loss.
check_recording() {
    "$flightrec" stats "$tmp/w.rec" 2>/dev/null | awk -v mode="$1" -v n="$iterations" '
        /^lost:/ { lost = ($3 != "0," || $5 != "0," || $7 != "0") }
        $4 == "MUTEX_UNLOCK" { unlocks = $1 }
        $4 == "FREE_ENTRY" { frees = $1 }
        $4 == "MALLOC_ENTRY" { mallocs = $1 }
        END {
            if (mode == "locks") ok = unlocks == 2 * (n + int((n + 15) / 16))
            else ok = frees == n + 256 && mallocs >= n
            exit !(ok && lost == 0)
        }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

failed=0
lossy=0
printf '%-11s %-8s %12s %8s %12s %8s %14s %12s\n' workload tool "wall ns/it" ratio \
    "cpu ns/it" ratio "cpu ns/call+" "other cpu"
for mode in $modes; do
    for tool in $tools; do
        : > "$tmp/$tool.$mode"; : > "$tmp/$tool.$mode.cpu"; : > "$tmp/$tool.$mode.other"
    done
    calls=
    i=0
    while [ $i -lt "$runs" ]; do
        # Each run starts one tool further on: a tool that comes right
        # after another's output was removed pays for the kernel's
        # writeback or reclaim of it (a control run with the same library
        # as record and record-b showed 2.8x against 1.3x), so no column
        # may always take that place.
        order=$(echo $tools | awk -v k="$i" '{ for (j = 0; j < NF; j++)
            printf "%s ", $((j + k) % NF + 1) }')
        for tool in $order; do
            out=$(run "$tool" "$mode" 2>/dev/null || true)
            case $tool in record*)
                tries=1
                until check_recording "${mode%%+*}"; do
                    rm -f "$tmp"/w.rec*
                    lossy=$((lossy + 1))
                    if [ $tries -ge "$record_tries" ]; then
                        echo "$mode $tool: events lost in $tries runs in a row" >&2
                        failed=1
                        out=
                        break
                    fi
                    tries=$((tries + 1))
                    out=$(run "$tool" "$mode" 2>/dev/null || true)
                done
                rm -f "$tmp"/w.rec* ;;
            esac
            echo "$out" | awk '/^ns\/op/ { print $2 }' >> "$tmp/$tool.$mode"
            echo "$out" | awk '/^cpu-ns\/op/ { print $2 }' >> "$tmp/$tool.$mode.cpu"
            echo "$out" | awk '/^cpu-ns\/op/ { c = $2 } /^work-cpu-ns\/op/ { print c - $2 }' \
                >> "$tmp/$tool.$mode.other"
            c=$(echo "$out" | awk '/^calls\/op/ { print $2 }')
            [ -n "$c" ] && calls=$c
        done
        i=$((i + 1))
    done
    plain=$(median < "$tmp/plain.$mode")
    plain_cpu=$(median < "$tmp/plain.$mode.cpu")
    for tool in $tools; do
        m=$(median < "$tmp/$tool.$mode")
        mc=$(median < "$tmp/$tool.$mode.cpu")
        mo=$(median < "$tmp/$tool.$mode.other")
        if [ -z "$m" ] || [ -z "$mc" ] || [ -z "$plain" ]; then
            printf '%-11s %-8s failed\n' "$mode" "$tool"
            continue
        fi
        awk -v mode="$mode" -v tool="$tool" -v m="$m" -v p="$plain" -v mc="$mc" \
            -v pc="$plain_cpu" -v c="$calls" -v mo="$mo" 'BEGIN {
                printf "%-11s %-8s %12.1f %7.2fx %12.1f %7.2fx %14.1f %12.1f\n", mode, tool,
                       m, m / p, mc, mc / pc, (mc - pc) / c, mo }'
    done
done
if [ "$lossy" -gt 0 ]; then
    echo "record runs that lost events (not counted, run again): $lossy" >&2
fi
exit "$failed"
