#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# flightrec connect's receiving rate on loopback, against the same bytes
# received by a plain socket reader into a file, in the same run.
#
#   bench/connect-throughput.sh BUILD_DIR [EVENTS [RUNS]]
#   (FLIGHTREC=PATH: another flightrec program to measure)
#
# A stream of EVENTS events (4 rings, made by bench-print) is pushed as
# fast as the kernel takes it (sendfile) by a server played here, ended by
# STREAM_END.  Measured per run, wall time from the connection to the
# program's end: the plain reader (recv into a file: the loopback and the
# disk), `flightrec connect -o FILE` (saves and decodes), and
# `flightrec connect --print` to /dev/null (decodes, merges and prints).
# Prints the median over RUNS interleaved runs, events/s and the ratio to
# the plain reader, and for connect its CPU time (user + system, which a
# loaded machine disturbs less than wall time).  Needs python3.
set -eu
build=$1 events=${2:-5000000} runs=${3:-5}
bin=${FLIGHTREC:-$build/tools/flightrec/flightrec}
dir=$(mktemp -d "${TMPDIR:-/tmp}/connect-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$build/bench/bench-print" -n "$events" --keep "$dir/stream.rec" \
    --generate-only
python3 - "$bin" "$dir" "$events" "$runs" <<'EOF'
import os, resource, socket, statistics, subprocess, sys, threading, time

flightrec, work, events, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
stream = os.path.join(work, "stream.rec")
with open(stream, "rb") as f:
    head = f.read(4)
big = head[0] in (0x33, 0x44)
size = 12 if head[0] in (0x22, 0x44) else 8
word = (359).to_bytes(4, "big" if big else "little")
with open(stream, "ab") as f:        # STREAM_END: a clean end
    f.write(word + bytes(size - 4))
total = os.path.getsize(stream)

def serve(listener):
    conn, _ = listener.accept()
    with open(stream, "rb") as f:
        conn.sendfile(f)
    conn.close()

def once(kind):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    pusher = threading.Thread(target=serve, args=(listener,))
    pusher.start()
    out = os.path.join(work, "out.rec")
    if os.path.exists(out):
        os.unlink(out)
    start = time.monotonic()
    if kind == "reader":
        s = socket.create_connection(("127.0.0.1", port))
        with open(out, "wb") as f:
            while True:
                b = s.recv(1 << 20)
                if not b:
                    break
                f.write(b)
        s.close()
    else:
        args = [flightrec, "connect", "127.0.0.1:%d" % port, "-o", out]
        if kind == "print":
            args.append("--print")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[kind].append(after.ru_utime + after.ru_stime -
                         before.ru_utime - before.ru_stime)
    seconds = time.monotonic() - start
    pusher.join()
    listener.close()
    got = os.path.getsize(out)
    if got != total:
        sys.exit("%s saved %d bytes of %d" % (kind, got, total))
    return seconds

kinds = ["reader", "connect", "print"]
times = {k: [] for k in kinds}
cpu = {k: [] for k in kinds}
for _ in range(runs):
    for k in kinds:
        times[k].append(once(k))
base = statistics.median(times["reader"])
print("%d events, %d bytes, median of %d runs" % (events, total, runs))
for k, label in zip(kinds, ["plain socket reader to a file",
                            "flightrec connect -o FILE",
                            "flightrec connect --print >/dev/null"]):
    m = statistics.median(times[k])
    line = "%-38s %8.3f s  %12.0f events/s  x%.2f" % (label, m, events / m,
                                                      m / base)
    if cpu[k]:
        c = statistics.median(cpu[k])
        line += "   CPU %.3f s, %.0f events/CPU s" % (c, events / c)
    print(line)
EOF
