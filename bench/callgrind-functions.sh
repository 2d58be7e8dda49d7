#!/bin/sh
# Instructions per traced call, from callgrind: each loop at two lengths,
# the difference divided by the difference in calls, so start-up drops
# out.  plain: the call alone; hooks: -finstrument-functions with
# libflightrec-functions (two events); produce: the same two events by
# hand.  hooks - produce is what the hooks add to flightrec's own cost.
# usage: bench/callgrind-functions.sh BUILD_DIR
set -eu
bin="$1/bench/bench-functions"
small=200000
large=1200000
count() {
    FLIGHTREC_SHM=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$bin" "$1" "$2" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for loop in plain hooks produce; do
    a=$(count "$loop" "$small")
    b=$(count "$loop" "$large")
    echo "$loop: $(( (b - a) / (large - small) )) instructions per call"
done
