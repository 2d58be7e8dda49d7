#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds flightrec and runs every test (installing missing Debian packages).
#   ./run-tests.sh         gcc build with -Werror, all tests
#   ./run-tests.sh --all   also clang, 32-bit ARM, big-endian s390x,
#                          aarch64 and 32-bit big-endian PowerPC (qemu),
#                          ASan+UBSan, TSan, the install check and a short
#                          fuzzing run (what CI runs)
set -eu
cd "$(dirname "$0")"
all=0
[ "${1:-}" = "--all" ] && all=1
if [ $all -eq 1 ]; then
    scripts/install-deps.sh all
else
    scripts/install-deps.sh test
fi

# run_preset NAME: configure, build and test with the preset NAME of
# CMakePresets.json (build/test-NAME); the cross presets armhf and s390x run
# every test but those that start the flightrec program or read machine code
# with the host's objdump, aarch64 the producer, round-trip and format
# tests, powerpc those and the registry, race and stress tests (where its
# 32-bit shared words matter) but the one that starts 2000 threads at once:
# under qemu-ppc a guest thread takes 8 MiB of the 4 GiB address space, and
# pthread_create fails from about 500 on.  Each cross build's
# cross-stream.host-decode decodes the stream its producer wrote with
# build/test-gcc's program (built first, below).
run_preset() {
    echo "=== build/test-$1 (preset $1)"
    cmake --preset "$1" >/dev/null
    cmake --build --preset "$1"
    ctest --preset "$1"
}

if [ $all -eq 1 ]; then
    # The firmware test runs only where these are: CI must have them.
    for tool in arm-none-eabi-gcc qemu-system-arm; do
        command -v $tool >/dev/null || {
            echo "run-tests.sh --all: $tool is missing (firmware test)" >&2
            exit 1
        }
    done
fi
run_preset gcc
if [ $all -eq 1 ] &&
    ! ctest --test-dir build/test-gcc -N -L firmware | grep -q firmware-demo; then
    echo "run-tests.sh --all: the firmware test was not registered" >&2
    exit 1
fi
if [ $all -eq 1 ]; then
    echo "=== install: pkg-config and find_package from an installed tree"
    tests/install/check-install.sh build/test-gcc
    echo "=== fuzz: short libFuzzer run of the decoder"
    cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang \
        -DFLIGHTREC_BUILD_FUZZ=ON -DFLIGHTREC_WERROR=ON >/dev/null
    fuzz/run-short.sh build/fuzz 60
    run_preset clang
    # Cross builds under qemu-user (cmake/cross-qemu.cmake): 32-bit
    # little-endian ARM, 64-bit big-endian s390x, aarch64 (cntvct_el0),
    # 32-bit big-endian PowerPC (no lock-free 64-bit atomics).
    run_preset armhf
    run_preset s390x
    run_preset aarch64
    run_preset powerpc
    run_preset asan
    run_preset tsan
fi
