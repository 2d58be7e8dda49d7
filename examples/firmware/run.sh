#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds the demo firmware, runs it under QEMU (BOARD=an385: mps2-an385,
# Cortex-M3, the default; BOARD=an505: mps2-an505, Cortex-M33) in
# the deterministic icount mode with a time limit, writes the UART output
# to LOG and exits with QEMU's status (3: the demo's deliberate fault).
#   examples/firmware/run.sh LOG [BUILD_DIR]
# Decode the log with: flightrec print LOG
set -eu
log=${1:?usage: run.sh LOG [BUILD_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
build=${2:-$here/../../build/firmware}
"$here/build.sh" "$build" demo
status=0
# icount: one instruction every 2^7 ns of virtual time, the same on every
# run whatever the host's load.  The demo idles by busy-waiting: WFI loses
# SysTicks in this mode (QEMU 7.2).
timeout 120 qemu-system-arm -M "mps2-${BOARD:-an385}" -nographic -monitor none \
    -serial stdio -semihosting-config enable=on,target=native \
    -icount shift=7,align=off,sleep=off \
    -kernel "$build/demo.elf" >"$log" </dev/null || status=$?
exit $status
