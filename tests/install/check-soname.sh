#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The shared libraries' sonames, and that the symbols whose removal made
# ABI 1 of libflightrec (flightrec__filter, flightrec__running) stay gone:
# a program linked against libflightrec.so.0 may use them.
#   check-soname.sh LIBFLIGHTREC LIBFLIGHTREC_CLIENT
set -eu
producer=$1
client=$2
status=0
check_soname() {
    got=$(readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
    if [ "$got" != "$2" ]; then
        echo "$1: soname '$got', expected '$2'" >&2
        status=1
    fi
}
check_soname "$producer" libflightrec.so.1
check_soname "$client" libflightrec-client.so.0
for symbol in flightrec__filter flightrec__running; do
    if nm -D --defined-only "$producer" | awk '{print $NF}' |
        grep -qx "$symbol"; then
        echo "$producer exports $symbol again: ABI 0's symbol" >&2
        status=1
    fi
done
[ $status -eq 0 ] && echo "sonames: libflightrec.so.1, libflightrec-client.so.0"
exit $status
