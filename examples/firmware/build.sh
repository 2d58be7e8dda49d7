#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds the recording core freestanding for a Cortex-M CPU, and the demo.
#   build.sh BUILD_DIR [demo|core]
#   BOARD=an385 (default: mps2-an385, Cortex-M3) or an505 (mps2-an505,
#   Cortex-M33); CPU overrides the board's CPU for a core build;
#   ARM_CC=arm-none-eabi-gcc
# The core is the Linux library's own files, no second copy; the port
# (port-cortexm.c) provides what the hosted files (start-up, settings,
# control) do on Linux.
set -eu
build=${1:?usage: build.sh BUILD_DIR [demo|core]}
what=${2:-demo}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
board=${BOARD:-an385}
case $board in
an385) board_cpu=cortex-m3 board_flags="" ;;
an505) board_cpu=cortex-m33 board_flags="-DFW_BOARD_AN505" ;;
*) echo "build.sh: unknown BOARD $board (an385, an505)" >&2; exit 2 ;;
esac
cpu=${CPU:-$board_cpu}
CC=${ARM_CC:-arm-none-eabi-gcc}
mkdir -p "$build"
core="src/producer/produce.c src/producer/produce-calls.c src/producer/produce-multi.c src/producer/region.c
      src/producer/registry.c src/producer/timebase.c src/producer/event-names.c
      src/producer/dump.c src/region/ring-reader.c src/region/stream-writer.c"
cflags="-mcpu=$cpu -mthumb -mfloat-abi=soft -std=c11 -Os -g -ffreestanding
        -ffunction-sections -fdata-sections -Wall -Wextra -Werror
        -D_POSIX_C_SOURCE=200809L -DFLIGHTREC_PORT_FIRMWARE
        -DFLIGHTREC_PORT_COUNTER
        -DFLIGHTREC_DRAIN_BUFFER=1024u -DFLIGHTREC_DUMP_BUFFER=256u
        $board_flags ${FW_CFLAGS:-}
        -I$root/include -I$root/src/producer -I$here"
sources="$core examples/firmware/port-cortexm.c"
[ "$what" = demo ] &&
    sources="$sources examples/firmware/startup-mps2.c examples/firmware/demo.c"
# The core with -fbuiltin after -ffreestanding: copies of a few constant
# bytes (items, names) are inlined instead of calls to the port's memcpy,
# and what is called stays the port's.  Not the port itself: its own
# memcpy and memset loops would become calls to themselves.
# shellcheck disable=SC2086
core_words=$(echo $core)
objects=""
for source in $sources; do
    object="$build/$(basename "$source" .c).o"
    case " $core_words " in
    *" $source "*) builtins=-fbuiltin ;;
    *) builtins= ;;
    esac
    # shellcheck disable=SC2086
    $CC $cflags $builtins -c "$root/$source" -o "$object"
    objects="$objects $object"
done
if [ "$what" = demo ]; then
    # shellcheck disable=SC2086
    $CC -mcpu="$cpu" -mthumb -nostdlib -Wl,--gc-sections \
        -T "$here/link-$board.ld" -Wl,-Map="$build/demo.map" \
        -o "$build/demo.elf" $objects -lgcc
fi
