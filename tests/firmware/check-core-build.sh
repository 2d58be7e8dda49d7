#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Build check: the recording core and the Cortex-M port compile
# freestanding for CPU (cortex-m3, cortex-m33) with -Werror.
#   check-core-build.sh CPU WORK_DIR
set -eu
cpu=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$work"
CPU=$cpu "$root/examples/firmware/build.sh" "$work" core
