#!/bin/sh
# Instructions per recorded event, from callgrind: each loop runs at two
# lengths and the difference is divided by the difference in events, so
# start-up and attach costs drop out.
# usage: bench/callgrind-produce.sh BUILD_DIR
set -eu
bin="$1/bench/bench-produce"
small=200000
large=1200000
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" \
        --only "$1" "$2" 2>&1 | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
for loop in ideal produce produce_n filtered stopped; do
    a=$(count "$loop" $small)
    b=$(count "$loop" $large)
    echo "$loop" "$a" "$b" | awk -v n=$((large - small)) \
        '{ printf "%-10s %6.2f instructions per event\n", $1, ($3 - $2) / n }'
done
