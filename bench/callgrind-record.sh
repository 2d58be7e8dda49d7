#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Instructions per iteration of bench-record-workload under `flightrec
# record`, from callgrind (valgrind): the workload's own threads, plain and
# recorded, and the preload library's drain thread apart.  Each run is made
# at two lengths and differenced, so start-up drops out.  Instruction
# counts do not depend on the machine's load, as times do.
#
#   bench/callgrind-record.sh BUILD_DIR [PRELOAD_LIBRARY]
#
# PRELOAD_LIBRARY: another libflightrec-preload.so (before/after).
# CALLGRIND_TOP=N also lists, for each workload, the N functions with the
# most instructions in the workload's main thread and in the drain thread
# (the longer run; each function's own instructions, start-up included).
set -eu
build=${1:?usage: callgrind-record.sh BUILD_DIR [PRELOAD_LIBRARY]}
preload=${2:-$build/src/preload/libflightrec-preload.so}
workload=$build/bench/bench-record-workload
flightrec=$build/tools/flightrec/flightrec
small=20000
large=120000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The recorded runs' sessions (valgrind's runs may leave theirs behind) go
# to this run's directory, not the user's.
mkdir -m 700 "$tmp/run"
export XDG_RUNTIME_DIR="$tmp/run"

total() { sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$1"; }
# thread_sum RUN drain|program: instructions of the drain thread (the
# second thread: the library's constructor starts it before main) or of
# all others.
thread_sum() {
    for f in "$tmp/rec.$1"-*; do
        n=${f##*-}
        v=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p;s/^totals: *\([0-9]*\).*/\1/p' "$f" | head -n 1)
        echo "$n $v"
    done | awk -v want="$2" '($1 == "02") == (want == "drain") { s += $2 } END { print s + 0 }'
}

printf '%-7s %12s %12s %12s %12s\n' workload plain recorded added drain
for mode in locks malloc; do
    for n in $small $large; do
        valgrind --tool=callgrind --callgrind-out-file=/dev/null \
            "$workload" "$mode" "$n" > "$tmp/plain.$n" 2>&1
        FLIGHTREC_PRELOAD=$preload "$flightrec" -q record -f -o "$tmp/w.rec" \
            --events locks,memory,threads -- valgrind --tool=callgrind \
            --separate-threads=yes --callgrind-out-file="$tmp/rec.$n" \
            "$workload" "$mode" "$n" > /dev/null 2>&1
    done
    awk -v p1="$(total "$tmp/plain.$small")" -v p2="$(total "$tmp/plain.$large")" \
        -v r1="$(thread_sum $small program)" -v r2="$(thread_sum $large program)" \
        -v d1="$(thread_sum $small drain)" -v d2="$(thread_sum $large drain)" \
        -v n=$((large - small)) -v mode="$mode" 'BEGIN {
            plain = (p2 - p1) / n; rec = (r2 - r1) / n
            printf "%-7s %12.1f %12.1f %12.1f %12.1f\n", mode, plain, rec,
                   rec - plain, (d2 - d1) / n }'
    if [ "${CALLGRIND_TOP:-0}" -gt 0 ]; then
        for part in 01:main 02:drain; do
            echo "  $mode, ${part#*:} thread, instructions per iteration:"
            callgrind_annotate "$tmp/rec.$large-${part%%:*}" 2>/dev/null |
                awk -v n="$large" -v top="$CALLGRIND_TOP" '
                    /file:function/ { on = 1; next }
                    on && NF >= 2 && $1 ~ /^[0-9,]+$/ && shown < top {
                        v = $1; gsub(",", "", v)
                        name = ""
                        for (i = 2; i <= NF && name == ""; i++)
                            if ($i ~ /%\)$/) name = $(i + 1)
                        printf "    %10.1f  %s\n", v / n, name; shown++ }'
        done
    fi
    rm -f "$tmp"/rec.*
done
