#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The README's "Reading" commands work as written after the quick start:
# runs the demo into a scratch demo-out/, then each "flightrec ..." line of
# the README's Reading block with the built flightrec first on PATH.  Each
# must exit 0 and warn about nothing (a pattern that matches nothing is a
# warning); print (but for a time range), stats and help must print
# something, convert must write its output.
#   check-readme.sh README.md FLIGHTREC_BIN DEMO_BIN SCRATCH_DIR
set -eu
readme=$1 bin=$2 demo=$3 dir=$4
rm -rf "$dir"
mkdir -p "$dir"
"$demo" "$dir/demo-out" >/dev/null
mkdir -p "$dir/bin"
ln -sf "$bin" "$dir/bin/flightrec"
PATH="$dir/bin:$PATH"
export PATH
cd "$dir"
awk '/^## Reading/ { on = 1; next } on && /^```sh/ { block = 1; next }
     block && /^```/ { exit } block && /^flightrec / { print }' "$readme" |
    sed 's/ *# .*$//' >commands
n=$(wc -l <commands)
[ "$n" -ge 5 ] || { echo "only $n commands found in $readme" >&2; exit 1; }
fail=0
while IFS= read -r cmd; do
    if ! sh -c "$cmd" >out 2>err; then
        echo "FAIL (exit status): $cmd" >&2; cat err >&2; fail=1; continue
    fi
    case $cmd in
    "flightrec convert"*)
        # The demo loses items on purpose; convert says so (a warning).
        grep -v 'items were lost in the recording' err >err2 || true
        mv err2 err ;;
    *--from*|*--to*)
        # The demo's timing varies with the machine's load: a time range
        # may hold no record, which is not a failure of the command.
        ;;
    *)
        [ -s out ] || { echo "FAIL (no output): $cmd" >&2; fail=1; } ;;
    esac
    if [ -s err ]; then
        echo "FAIL (stderr): $cmd" >&2; cat err >&2; fail=1
    fi
done <commands
[ -d trace-dir ] && [ -f trace-dir/metadata ] || { echo "FAIL: no trace-dir/metadata" >&2; fail=1; }
[ -s trace.pftrace ] || { echo "FAIL: no trace.pftrace" >&2; fail=1; }
[ $fail -eq 0 ] && echo "$n README commands work as written"
exit $fail
