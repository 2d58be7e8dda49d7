#!/bin/sh
# Instructions per recorded event, from callgrind: each loop runs at two
# lengths and the difference is divided by the difference in events, so
# start-up and attach costs drop out.  Multi-item loops also show the
# figure per call (items per call times the figure per item).
# usage: bench/callgrind-produce.sh BUILD_DIR
set -eu
bin="$1/bench/bench-produce"
small=200000
large=1200000
count() {
    out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" \
        --only "$1" "$2" 2>&1)
    n=$(echo "$out" | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p')
    if [ -z "$n" ]; then
        # e.g. clang 14's DWARF 5, which valgrind 3.19 cannot read:
        # configure with -DCMAKE_C_FLAGS=-gdwarf-4
        echo "callgrind-produce.sh: valgrind failed on $bin:" >&2
        echo "$out" | tail -3 >&2
        exit 1
    fi
    echo "$n"
}
# loop name, items per call
for entry in ideal:1 ideal_packed:1 produce:1 produce_2:2 produce_n:8 \
             produce_n_var:8 record_1:1 record_2:2 record_8:8 filtered:1 \
             stopped:1; do
    loop=${entry%%:*}
    per_call=${entry#*:}
    a=$(count "$loop" $small)
    b=$(count "$loop" $large)
    echo "$loop" "$a" "$b" | awk -v n=$((large - small)) -v k="$per_call" '
        { e = ($3 - $2) / n
          if (k > 1)
              printf "%-13s %6.2f instructions per item, %6.1f per call of %d\n", $1, e, e * k, k
          else
              printf "%-13s %6.2f instructions per event\n", $1, e }'
done
