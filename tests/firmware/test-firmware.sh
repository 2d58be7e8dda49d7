#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The firmware test: builds and runs examples/firmware under QEMU twice
# (icount mode: the two UART logs must be identical), expects the demo's
# fault status (3), and checks that the log decodes to exactly the events
# the demo made (check-firmware-log.py), and to a kernel-shaped CTF trace
# (check-firmware-ctf.py).
#   test-firmware.sh FLIGHTREC WORK_DIR [an385|an505]
set -eu
flightrec=$1
work=$2
board=${3:-an385}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$work"
for run in 1 2; do
    status=0
    BOARD=$board "$root/examples/firmware/run.sh" "$work/uart-$run.log" \
        "$work/build" ||
        status=$?
    if [ "$status" -ne 3 ]; then
        echo "run $run: QEMU exit status $status, expected 3 (the fault)" >&2
        exit 1
    fi
done
if ! cmp "$work/uart-1.log" "$work/uart-2.log"; then
    echo "the two runs differ: icount mode should make them identical" >&2
    exit 1
fi
python3 "$here/check-firmware-log.py" "$flightrec" "$work/uart-1.log" "$board"
# CTF takes the kernel shape: sched_switch and irq_handler_*, read by
# babeltrace2 and LTTng's analyses.
python3 "$here/check-firmware-ctf.py" "$flightrec" "$work/uart-1.log" \
    "$work/ctf"
# The check must see a loss: the same log without its third block.
awk '/^-----BEGIN FLIGHTREC STREAM-----/ { n++ } n != 3 { print }
     n == 3 && /^-----END FLIGHTREC STREAM-----/ { n++ }' \
    "$work/uart-1.log" >"$work/uart-dropped.log"
if python3 "$here/check-firmware-log.py" "$flightrec" \
        "$work/uart-dropped.log" "$board" >"$work/dropped.out" 2>&1; then
    echo "the check accepted a log with a block removed" >&2
    exit 1
fi
grep -q "losses reported" "$work/dropped.out" || {
    echo "a removed block was not reported as a loss:" >&2
    cat "$work/dropped.out" >&2
    exit 1
}
