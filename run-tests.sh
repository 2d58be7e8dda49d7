#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds flightrec and runs every test (installing missing Debian packages).
#   ./run-tests.sh         gcc build with -Werror, all tests
#   ./run-tests.sh --all   also clang, 32-bit x86, big-endian s390x (qemu),
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

build_and_test build/test-gcc -DCMAKE_C_COMPILER=gcc
if [ $all -eq 1 ]; then
    echo "=== install: pkg-config and find_package from an installed tree"
    tests/install/check-install.sh build/test-gcc
    echo "=== fuzz: short libFuzzer run of the decoder"
    cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang \
        -DFLIGHTREC_BUILD_FUZZ=ON -DFLIGHTREC_WERROR=ON >/dev/null
    fuzz/run-short.sh build/fuzz 60
    build_and_test build/test-clang -DCMAKE_C_COMPILER=clang
    # 32-bit data words and heads (the LE_32 format, 32-bit positions).
    build_and_test build/test-m32 -DCMAKE_C_COMPILER=gcc \
        -DCMAKE_C_FLAGS=-m32 -DFLIGHTREC_BUILD_BENCH=OFF
    # Big-endian 64-bit (s390x) under qemu-user: producer, decoder,
    # converters.  Not the tests that start the flightrec program or read
    # machine code with the host's objdump.
    echo "=== build/test-s390x: big-endian under qemu"
    cmake -S . -B build/test-s390x -DFLIGHTREC_WERROR=ON \
        -DCMAKE_TOOLCHAIN_FILE=cmake/s390x-qemu.cmake \
        -DFLIGHTREC_BUILD_BENCH=OFF >/dev/null
    cmake --build build/test-s390x -j2
    ctest --test-dir build/test-s390x --output-on-failure -j2 \
        -E '^hot-path|^test-cli\.'
    build_and_test build/test-asan -DCMAKE_C_COMPILER=clang \
        -DFLIGHTREC_SANITIZE=address,undefined
    build_and_test build/test-tsan -DCMAKE_C_COMPILER=clang \
        -DFLIGHTREC_SANITIZE=thread
fi
