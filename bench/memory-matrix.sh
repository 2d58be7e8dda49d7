#!/bin/sh
# Max RSS and CPU time of flightrec print / stats / convert (ftrace) over
# generated streams (bench-print --generate-only): 1 M, 10 M and 100 M
# events of 4 rings, and 10 M events of 10 to 5,000 rings.  Give several
# flightrec programs to compare them on the same files in the same run.
#
#   bench/memory-matrix.sh BENCH_PRINT DIR FLIGHTREC... > figures.txt
#
# DIR holds the streams (1.2 GB at 100 M events).  GNU time reports max RSS
# (KiB) and user + system CPU seconds, which stay comparable on a loaded
# machine where wall time does not.
set -eu
gen=$1 dir=$2
shift 2
mkdir -p "$dir"
stream() { # events rings
    f="$dir/e$1-r$2.rec"
    [ -f "$f" ] || "$gen" -n "$1" --rings "$2" --keep "$f" --generate-only
    echo "$f"
}
measure() { # label file program...
    label=$1 file=$2
    shift 2
    for bin in "$@"; do
        for cmd in print stats convert; do
            case $cmd in
            convert) set -- "$bin" convert --to ftrace -o "$dir/out.txt" "$file" ;;
            *) set -- "$bin" "$cmd" "$file" ;;
            esac
            /usr/bin/time -f "%M %U %S %x" -o "$dir/time.txt" "$@" > /dev/null 2>&1 || true
            read -r rss user sys status < "$dir/time.txt"
            printf '%-14s %-8s %-40s rss %8d KiB  cpu %7.2f s  exit %s\n' \
                "$label" "$cmd" "$bin" "$rss" \
                "$(echo "$user + $sys" | bc)" "$status"
        done
    done
}
for n in 1000000 10000000 100000000; do
    measure "${n}ev-4r" "$(stream $n 4)" "$@"
done
for r in 10 100 1000 5000; do
    measure "10Mev-${r}r" "$(stream 10000000 $r)" "$@"
done
measure "1Mev-1Mr" "$(stream 1000000 1000000)" "$@"
rm -f "$dir/out.txt" "$dir/time.txt"
