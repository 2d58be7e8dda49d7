#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A fault in the middle of a drain, which the HardFault handler takes over
# (it ends the cut block and drains again): every log must decode to every
# event exactly once, with no loss (check-fault-in-drain.py).  Demo builds:
#   -DFW_FAULT_IN_DRAIN=K -DFW_DRAIN_DELAY=D  the K-th SysTick after tick
#       100 that comes while the logger task drains faults; D counter ticks
#       before each drain move where in it that tick lands (mostly while
#       the drain writes to the UART, which takes most of its time);
#   -DFW_FAULT_AFTER_COMMIT=N  a fault right after the drain's N-th commit
#       to its buffer (ring starts, chunk heads, blocks of items, ring
#       ends), counted from the first drain after tick 100: 16 of them
#       span its first two drains;
#   -DFW_TEST_POINTS -DFW_TEST_POINT=P -DFW_TEST_NTH=1  a fault at the core's
#       test point P (FR_TEST_POINT), with: an event named just before the
#       drain (FW_LATE_NAME: a fault inside its name record, points 1 and
#       2), a dump in the fault handler (FW_DUMP_IN_HANDLER, point 4:
#       between a copy and its commit); and a stream begun again
#       (FW_RESET_STREAM, flightrec_drain_reset()) with faults after
#       commits.
#   test-fault-in-drain.sh FLIGHTREC WORK_DIR [an385|an505]
set -eu
flightrec=$1
work=$2
board=${3:-an385}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$work"
variants=
for delay in 0 37 101 257 509; do
    for k in 1 2 3; do
        variants="$variants FW_FAULT_IN_DRAIN=$k,FW_DRAIN_DELAY=$delay"
    done
done
if [ "$board" = an385 ]; then
    for n in $(seq 1 16); do
        variants="$variants FW_FAULT_AFTER_COMMIT=$n"
    done
    at="FW_FAULT_AFTER_COMMIT=1000000,FW_TEST_POINTS,FW_TEST_NTH=1"
    variants="$variants $at,FW_TEST_POINT=1,FW_LATE_NAME"
    variants="$variants $at,FW_TEST_POINT=2,FW_LATE_NAME"
    variants="$variants $at,FW_TEST_POINT=4,FW_DUMP_IN_HANDLER"
    for n in 3 4 8; do
        variants="$variants FW_FAULT_AFTER_COMMIT=$n,FW_RESET_STREAM"
    done
fi
runs=0
for variant in $variants; do
    name=$(echo "$variant" | tr ',=' '-_')
    flags=$(echo "$variant" | tr ',' ' ' | sed 's/\([^ ]*\)/-D\1/g')
    status=0
    BOARD=$board FW_CFLAGS="$flags" \
        "$root/examples/firmware/run.sh" "$work/$name.log" \
        "$work/build-$name" || status=$?
    if [ "$status" -ne 3 ]; then
        echo "$name: QEMU exit status $status, expected 3 (the fault)" >&2
        exit 1
    fi
    set --
    case $variant in
    *FW_LATE_NAME*) set -- --once late ;;
    *FW_RESET_STREAM*) set -- --tail "flightrec-demo: new stream" ;;
    esac
    python3 "$here/check-fault-in-drain.py" "$flightrec" "$work/$name.log" \
        "$@" >"$work/$name.out" ||
        { cat "$work/$name.out"; echo "$name: $work/$name.log" >&2; exit 1; }
    rm -rf "$work/build-$name"
    runs=$((runs + 1))
done
echo "ok: $runs faults in drains"
