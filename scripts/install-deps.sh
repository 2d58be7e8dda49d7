#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages flightrec needs that are missing.
#   scripts/install-deps.sh build     compiler, cmake, elfutils (libdw-dev:
#                                       symbol names in print and convert)
#   scripts/install-deps.sh test      + the readers the tests run
#                                       (babeltrace2, protoc, python3,
#                                       chromium for report's HTML page, and
#                                       from npm into build/npm the JSON
#                                       readers: the DevTools performance
#                                       engine and speedscope)
#   scripts/install-deps.sh all       + clang runtimes for the sanitizer
#                                       and fuzzing builds, cross compilers,
#                                       QEMU (user mode; mps2 boards for
#                                       the firmware test), the tracers
#                                       bench/record-overhead.sh compares
#                                       (LTTng-UST wrappers, ltrace, uftrace)
set -eu
packages="cmake gcc g++ make pkg-config libdw-dev libelf-dev"
case "${1:-build}" in
build) ;;
test) packages="$packages babeltrace2 protobuf-compiler python3 python3-lttnganalyses chromium" ;;
all) packages="$packages babeltrace2 protobuf-compiler python3 python3-lttnganalyses chromium clang libclang-rt-14-dev gcc-arm-linux-gnueabihf libc6-dev-armhf-cross gcc-s390x-linux-gnu libc6-dev-s390x-cross gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-powerpc-linux-gnu libc6-dev-powerpc-cross qemu-user valgrind gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm liblttng-ust-dev lttng-tools ltrace uftrace" ;;
*) echo "usage: $0 build|test|all" >&2; exit 2 ;;
esac
# The JSON readers are npm packages, installed with the project's own pinned
# versions into build/npm (ignored by git; the tests look there).
npm_packages="@paulirish/trace_engine@0.0.65 speedscope@1.25.0"
if [ "${1:-build}" != build ]; then
    command -v node >/dev/null 2>&1 || packages="$packages nodejs"
    command -v npm >/dev/null 2>&1 || packages="$packages npm"
fi
install_npm() {
    [ "${1:-build}" = build ] && return 0
    root="$(cd "$(dirname "$0")/.." && pwd)"
    [ -f "$root/build/npm/node_modules/speedscope/package.json" ] &&
        [ -f "$root/build/npm/node_modules/@paulirish/trace_engine/package.json" ] &&
        return 0
    echo "installing from npm into build/npm: $npm_packages" >&2
    mkdir -p "$root/build/npm"
    # shellcheck disable=SC2086
    npm install --prefix "$root/build/npm" --no-audit --no-fund \
        --ignore-scripts --loglevel=error $npm_packages >/dev/null
}
missing=""
for package in $packages; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
        grep -q "install ok installed" || missing="$missing $package"
done
if [ -z "$missing" ]; then
    install_npm "${1:-build}"
    exit 0
fi
echo "installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
else
    sudo="sudo"
fi
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
install_npm "${1:-build}"
