#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The firmware test: builds and runs examples/firmware under QEMU twice
# (icount mode: the two UART logs must be identical), expects the demo's
# fault status (3), and checks that the log decodes to exactly the events
# the demo made (check-firmware-log.py).
#   test-firmware.sh FLIGHTREC WORK_DIR
set -eu
flightrec=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$work"
for run in 1 2; do
    status=0
    "$root/examples/firmware/run.sh" "$work/uart-$run.log" "$work/build" ||
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
python3 "$here/check-firmware-log.py" "$flightrec" "$work/uart-1.log"
