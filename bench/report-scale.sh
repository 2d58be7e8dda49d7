#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Time and peak memory of `flightrec report` (text and --json) on
# recordings of N events written by bench-report-gen (locks, heap and read
# calls, no loss), against `flightrec stats` on the same file in the same
# run (a pass that decodes every event and keeps counts only).  Median of
# RUNS runs each; CPU time is user + system.
#
#   bench/report-scale.sh BUILD_DIR [RUNS [N...]]   (default 3, 1e6 4e6 16e6)
set -eu
build=${1:?usage: report-scale.sh BUILD_DIR [RUNS [N...]]}
runs=${2:-3}
if [ $# -ge 2 ]; then shift 2; else shift $#; fi
sizes=${*:-1000000 4000000 16000000}
flightrec=$build/tools/flightrec/flightrec
gen=$build/bench/bench-report-gen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%10s %-12s %10s %12s %12s %10s\n' events command "cpu s" "events/s" \
    "max RSS MiB" "file MiB"
for n in $sizes; do
    n=$(awk -v n="$n" 'BEGIN { printf "%d", n }')
    events=$("$gen" "$n" "$tmp/r.rec" | awk '/^events/ { print $2 }')
    bytes=$(wc -c < "$tmp/r.rec")
    for cmd in stats report report-json; do
        : > "$tmp/cpu"; : > "$tmp/rss"
        i=0
        while [ $i -lt "$runs" ]; do
            case $cmd in
            stats) set -- stats ;;
            report) set -- report ;;
            report-json) set -- report --json ;;
            esac
            /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$flightrec" "$@" \
                "$tmp/r.rec" > /dev/null
            awk '{ print $1 + $2 }' "$tmp/time" >> "$tmp/cpu"
            awk '{ print $3 }' "$tmp/time" >> "$tmp/rss"
            i=$((i + 1))
        done
        cpu=$(median < "$tmp/cpu")
        rss=$(median < "$tmp/rss")
        awk -v e="$events" -v c="$cmd" -v cpu="$cpu" -v rss="$rss" -v b="$bytes" \
            'BEGIN { printf "%10d %-12s %10.2f %12.0f %12.1f %10.1f\n", e, c, cpu,
                     (cpu > 0 ? e / cpu : 0), rss / 1024, b / 1048576 }'
    done
done
