#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds flightrec and runs every test (installing missing Debian packages).
#   ./run-tests.sh         gcc build with -Werror, all tests
#   ./run-tests.sh --all   also clang, 32-bit ARM and big-endian s390x (qemu),
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

# build_and_test DIR [cmake options...]
build_and_test() {
    dir=$1
    shift
    echo "=== $dir: $*"
    cmake -S . -B "$dir" -DFLIGHTREC_WERROR=ON "$@" >/dev/null
    cmake --build "$dir" -j2
    ctest --test-dir "$dir" --output-on-failure -j2
}

# cross_test ARCH: cmake/ARCH-qemu.cmake; every test but those that start
# the flightrec program or read machine code with the host's objdump.
cross_test() {
    echo "=== build/test-$1: cross build, tests under qemu-user"
    cmake -S . -B "build/test-$1" -DFLIGHTREC_WERROR=ON \
        -DCMAKE_TOOLCHAIN_FILE="cmake/$1-qemu.cmake" \
        -DFLIGHTREC_BUILD_BENCH=OFF >/dev/null
    cmake --build "build/test-$1" -j2
    ctest --test-dir "build/test-$1" --output-on-failure -j2 \
        -E '^hot-path|^test-cli\.'
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
build_and_test build/test-gcc -DCMAKE_C_COMPILER=gcc
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
    build_and_test build/test-clang -DCMAKE_C_COMPILER=clang
    # Cross builds run under qemu-user: 32-bit little-endian ARM (32-bit
    # data words and heads, the LE_32 format) and 64-bit big-endian s390x.
    cross_test armhf
    cross_test s390x
    build_and_test build/test-asan -DCMAKE_C_COMPILER=clang \
        -DFLIGHTREC_SANITIZE=address,undefined
    build_and_test build/test-tsan -DCMAKE_C_COMPILER=clang \
        -DFLIGHTREC_SANITIZE=thread
fi
