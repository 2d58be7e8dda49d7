#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Installs a build into a scratch prefix and builds two small programs
# against it: one with pkg-config, one with find_package(flightrec).  Both
# record an event, dump it and decode it back; the installed libraries
# carry the sonames of their ABIs (libflightrec.so.1, libflightrec-client.so.0)
# and the programs need those.  A third, static, is linked with
# flightrec_wrap() and recorded by `flightrec record`.
#   tests/install/check-install.sh BUILD_DIR
set -eu
build=$1
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig:$prefix/lib/$(gcc -print-multiarch)/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -o "$prefix/with-pkg-config" "$here/consumer/main.c" \
    $(pkg-config --cflags flightrec flightrec-client) \
    $(pkg-config --libs --static flightrec flightrec-client) \
    -Wl,-rpath,"$prefix/lib" -Wl,-rpath,"$prefix/lib/$(gcc -print-multiarch)"
"$prefix/with-pkg-config"
for lib in libflightrec.so.1 libflightrec-client.so.0; do
    found=$(find "$prefix" -name "$lib" | head -n 1)
    [ -n "$found" ] || { echo "$lib not installed" >&2; exit 1; }
    readelf -d "$found" | grep -q "(SONAME).*\[$lib\]" ||
        { echo "$found: soname is not $lib" >&2; exit 1; }
    readelf -d "$prefix/with-pkg-config" | grep -q "(NEEDED).*\[$lib\]" ||
        { echo "with-pkg-config does not need $lib" >&2; exit 1; }
done
if [ -n "$(find "$prefix" -name 'libflightrec.so.0*')" ]; then
    echo "libflightrec.so.0 installed: ABI 0 is gone" >&2
    exit 1
fi
cmake -S "$here/consumer" -B "$prefix/consumer-build" \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
"$prefix/consumer-build/with-find-package"
# flightrec_wrap(): a static program recorded through the --wrap wrappers.
"$prefix/bin/flightrec" -q record -o "$prefix/with-wrap.rec" -- \
    "$prefix/consumer-build/with-wrap" >/dev/null
"$prefix/bin/flightrec" print "$prefix/with-wrap.rec" | grep -q ' MALLOC_ENTRY 0x4d2$' ||
    { echo "flightrec_wrap(): malloc(1234) not recorded" >&2; exit 1; }
[ -f "$prefix/share/man/man1/flightrec.1" ] || { echo "man page not installed" >&2; exit 1; }
[ -x "$prefix/bin/flightrec" ] || { echo "flightrec not installed" >&2; exit 1; }
echo "install check: pkg-config, find_package(flightrec) and flightrec_wrap() work"
