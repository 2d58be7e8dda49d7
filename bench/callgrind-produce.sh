#!/bin/sh
# Instructions per recorded event, from callgrind: each loop runs at two
# lengths and the difference is divided by the difference in events, so
# start-up and attach costs drop out.  Multi-item loops also show the
# figure per call (items per call times the figure per item).  The
# recording loops run twice: rings in a session file (the default) and
# private rings (FLIGHTREC_SHM=0); the next column is the difference.
# Every figure includes the benchmark's loop (counter, compare, branch):
# the loops of one event a call (empty, ideal, produce, record_1,
# filtered, stopped) make four calls a turn (bench-produce.c, UNROLL), so
# that it is 3/4 of an instruction per event there, and once per call in
# the multi-item loops.  The "empty" loop measures it alone, and the last
# column is the default figure less it: the recording call's own
# instructions.
# usage: bench/callgrind-produce.sh BUILD_DIR
set -eu
bin="$1/bench/bench-produce"
small=200000
large=1200000
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# count LOOP EVENTS [FLIGHTREC_SHM]: instructions of one run, after checking
# that the rings were where they were meant to be.
count() {
    if [ $# -ge 3 ]; then
        want=private
        FLIGHTREC_SHM="$3" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
            "$bin" --only "$1" "$2" > "$out" 2>&1
    else
        want="in a session file"
        env -u FLIGHTREC_SHM valgrind --tool=callgrind --callgrind-out-file=/dev/null \
            "$bin" --only "$1" "$2" > "$out" 2>&1
    fi
    if ! grep -q "rings $want" "$out"; then
        echo "callgrind-produce.sh: $1: rings not $want" >&2
        exit 1
    fi
    n=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$out")
    if [ -z "$n" ]; then
        # e.g. clang 14's DWARF 5, which valgrind 3.19 cannot read:
        # configure with -DCMAKE_C_FLAGS=-gdwarf-4
        echo "callgrind-produce.sh: valgrind failed on $bin:" >&2
        tail -3 "$out" >&2
        exit 1
    fi
    echo "$n"
}
per_event() {
    awk -v a="$1" -v b="$2" -v n=$((large - small)) 'BEGIN { printf "%.3f", (b - a) / n }'
}
a=$(count empty $small)
b=$(count empty $large)
loop_cost=$(per_event "$a" "$b")
unroll=4 # calls a turn in the loops of one event a call
echo "empty loop (counter, compare, branch): $loop_cost per event, $unroll events a turn"
printf '%-13s %-30s %-30s %-10s %s\n' loop "session file (default)" "private (FLIGHTREC_SHM=0)" "difference" "less the loop"
# loop name, items per call
for entry in ideal:1 ideal_packed:1 produce:1 produce_2:2 produce_n:8 \
             produce_n_var:8 record_1:1 record_2:2 record_8:8 filtered:1 \
             stopped:1; do
    loop=${entry%%:*}
    per_call=${entry#*:}
    a=$(count "$loop" $small)
    b=$(count "$loop" $large)
    shared=$(per_event "$a" "$b")
    private=$shared # the ideal loops record nothing
    case $loop in
    ideal*) ;;
    *) a=$(count "$loop" $small 0)
       b=$(count "$loop" $large 0)
       private=$(per_event "$a" "$b") ;;
    esac
    echo "$loop" "$shared" "$private" | awk -v k="$per_call" -v l="$loop_cost" -v u="$unroll" '
        function show(e) {
            if (k > 1)
                return sprintf("%6.2f per item, %6.1f per call", e, e * k)
            return sprintf("%6.2f per event", e)
        }
        # one event a call: the loop turns once per u events, as in the
        # empty loop; multi-item calls: once per call, per item l * u / k
        { share = k > 1 ? l * u / k : l
          printf "%-13s %-30s %-30s %+-10.2f %s\n", $1, show($2), show($3),
                 $2 - $3, show($2 - share) }'
done
