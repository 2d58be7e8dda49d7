#!/bin/sh
# `flightrec convert --to ctf` across ring counts: events/s (of CPU time,
# user + system), wall seconds and max RSS (GNU time -v) of the command
# itself, the cost of creating that many empty files in the same place
# (this file system's price for one stream file per ring), and
# bench-convert's writer-alone and decode+write figures.  Give several
# BUILD directories (holding bench/bench-convert and tools/flightrec/
# flightrec, or both files directly) to compare them in the same run.
#
#   bench/ctf-rings.sh DIR EVENTS BUILD... > figures.txt
#
# 10 to 5,000 rings take EVENTS events; 50,000 rings take EVENTS / 5 under
# `ulimit -n 1024` (Debian's default soft limit).
set -eu
dir=$1 events=$2
shift 2
mkdir -p "$dir"
tool() { # build name
    for p in "$1/$2" "$1/bench/$2" "$1/tools/flightrec/$2"; do
        [ -x "$p" ] && { echo "$p"; return; }
    done
    echo "no $2 in $1" >&2
    exit 1
}
gen=$(tool "$1" bench-convert)
# Empty files created and closed in a fresh directory: microseconds each.
create_cost() { # count
    d="$dir/create-test"
    rm -rf "$d"
    mkdir "$d"
    t0=$(date +%s%N)
    (cd "$d" && seq 0 $(($1 - 1)) | sed 's/^/stream_/' | xargs touch)
    t1=$(date +%s%N)
    rm -rf "$d"
    echo "scale=1; ($t1 - $t0) / 1000 / $1" | bc
}
measure() { # rings events build...
    rings=$1 n=$2
    shift 2
    f="$dir/e$n-r$rings.rec"
    # The stream (written by the ftrace run: one output file, cheap).
    BENCH_CONVERT_SAVE="$f" "$gen" "$n" 0 "$rings" ftrace > /dev/null
    for build in "$@"; do
        b=$(tool "$build" bench-convert)
        fl=$(tool "$build" flightrec)
        w="- -"
        if [ "$rings" -le 5000 ]; then
            "$b" "$n" 0 "$rings" ctf > "$dir/bench.txt"
            w=$(awk '$1 == "ctf" { print $2 " " $3 }' "$dir/bench.txt")
        fi
        rm -rf "$dir/out"
        /usr/bin/time -v -o "$dir/time.txt" \
            "$fl" convert --to ctf -o "$dir/out" "$f" > /dev/null 2>&1 ||
            echo "convert failed: $build at $rings rings" >&2
        files=$(ls "$dir/out" | grep -c '^stream_' || true)
        rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$dir/time.txt")
        cpu=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 }
                          END { print u + s }' "$dir/time.txt")
        wall=$(awk '/Elapsed/ { n = split($NF, p, ":"); s = 0;
                    for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' \
                    "$dir/time.txt")
        rm -rf "$dir/out"
        printf '%6d rings %9d ev  %-28s convert %6.2f Mev/s cpu %6.2f s wall %7.2f s rss %7.1f MiB files %6d | bench writer %s decode+write %s Mev/s\n' \
            "$rings" "$n" "$build" "$(echo "$n / $cpu / 1000000" | bc -l)" \
            "$cpu" "$wall" "$(echo "$rss / 1024" | bc -l)" "$files" $w
    done
    echo "$rings rings: creating $rings empty files here: $(create_cost "$rings") us/file"
}
for r in 10 100 1000 5000; do
    measure "$r" "$events" "$@"
done
small=$((events / 5))
(ulimit -n 1024 && measure 50000 "$small" "$@")
rm -f "$dir"/*.rec "$dir/bench.txt" "$dir/time.txt"
