#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds the demo firmware, runs it under QEMU (mps2-an385, Cortex-M3) in
# the deterministic icount mode with a time limit, writes the UART output
# to LOG and exits with QEMU's status (3: the deliberate fault, as meant).
#   examples/firmware/run.sh LOG [BUILD_DIR]
set -eu
log=${1:?usage: run.sh LOG [BUILD_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${2:-$root/build/firmware}
mkdir -p "$build"
CC=${ARM_CC:-arm-none-eabi-gcc}
# The core as the Linux library builds it, freestanding: no second copy.
core="src/producer/produce.c src/producer/produce-calls.c src/producer/region.c
      src/producer/registry.c src/producer/timebase.c src/producer/event-names.c
      src/producer/dump.c src/region/ring-reader.c src/region/stream-writer.c"
cflags="-mcpu=cortex-m3 -mthumb -std=c11 -Os -g -ffreestanding
        -ffunction-sections -fdata-sections -Wall -Wextra -Werror
        -D_POSIX_C_SOURCE=200809L -DFLIGHTREC_PORT_FIRMWARE -DFLIGHTREC_PORT_COUNTER
        -DFLIGHTREC_DRAIN_BUFFER=1024u -DFLIGHTREC_DUMP_BUFFER=256u
        -I$root/include -I$root/src/producer -I$here"
objects=""
for source in $core examples/firmware/port-cortexm.c \
              examples/firmware/startup-an385.c examples/firmware/demo.c; do
    object="$build/$(basename "$source" .c).o"
    # shellcheck disable=SC2086
    $CC $cflags -c "$root/$source" -o "$object"
    objects="$objects $object"
done
# shellcheck disable=SC2086
$CC -mcpu=cortex-m3 -mthumb -nostdlib -Wl,--gc-sections \
    -T "$here/link-an385.ld" -o "$build/demo.elf" $objects -lgcc
status=0
timeout 60 qemu-system-arm -M mps2-an385 -nographic -monitor none \
    -serial stdio -semihosting-config enable=on,target=native \
    -icount shift=7,align=off,sleep=off \
    -kernel "$build/demo.elf" >"$log" </dev/null || status=$?
exit $status
