#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Build check: the recording core, the Cortex-M port and the hot path's
# header alone (produce-probe.c) compile freestanding for CPU (cortex-m3,
# cortex-m33) with -Werror.
#   check-core-build.sh CPU WORK_DIR
set -eu
cpu=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$work"
CPU=$cpu "$root/examples/firmware/build.sh" "$work" core
${ARM_CC:-arm-none-eabi-gcc} -mcpu="$cpu" -mthumb -mfloat-abi=soft -std=c11 \
    -O2 -ffreestanding -Wall -Wextra -Werror -DFLIGHTREC_PORT_FIRMWARE \
    -DFLIGHTREC_PORT_COUNTER -I"$root/include" \
    -c "$here/produce-probe.c" -o "$work/produce-probe.o"
echo "$cpu: core, port and hot path build freestanding"
