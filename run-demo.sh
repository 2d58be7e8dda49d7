#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Builds flightrec, installs it into ./prefix (inside the tree, no root
# needed), runs the demo, prints its recording and statistics and converts
# it for Trace Compass / babeltrace2 (CTF) and Perfetto.  Afterwards
#   export PATH="$PWD/prefix/bin:$PATH"
# makes the README's flightrec commands work as written.
set -eu
cd "$(dirname "$0")"
scripts/install-deps.sh build
cmake -S . -B build/demo -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/demo -j2 >/dev/null
prefix="$PWD/prefix"
cmake --install build/demo --prefix "$prefix" >/dev/null
out=demo-out
tool="$prefix/bin/flightrec"
build/demo/examples/flightrec-demo "$out"
echo
echo "--- flightrec print $out/demo.rec (first and last lines)"
"$tool" print "$out/demo.rec" >"$out/demo.txt"
head -n 20 "$out/demo.txt"
echo "..."
tail -n 5 "$out/demo.txt"
echo "($(wc -l <"$out/demo.txt") lines in $out/demo.txt)"
echo
echo "--- flightrec stats $out/demo.rec"
"$tool" stats "$out/demo.rec"
echo
"$tool" convert --to ctf -o "$out/ctf" "$out/demo.rec"
"$tool" convert --to perfetto -o "$out/demo.pftrace" "$out/demo.rec"
cat <<MSG
--- viewer formats
CTF:      $out/ctf        babeltrace2 $out/ctf | less
                          Trace Compass: File > Open Trace..., pick $out/ctf/metadata
Perfetto: $out/demo.pftrace  open https://ui.perfetto.dev and load the file
Streamed recording (drained while running): $out/stream.rec

--- flightrec is installed in $prefix; to run the README's commands:
export PATH="$prefix/bin:\$PATH"
export MANPATH="$prefix/share/man:\$MANPATH"   # for 'man flightrec'
MSG
