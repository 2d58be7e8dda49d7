#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Runs LTTng's analyses (python3-lttnganalyses) on the CTF session that
test-convert-processors writes from known context switches, and checks
their figures: thread 101 ran 4000 of 8000 ns on CPU 0, thread 102 5500 ns
and thread 103 400 ns (until its exit) on CPU 1; after their preemptions 102 waited 2.5 us and 101 2 us.
Exit status 0 when all match.

usage: check-processor-analyses.py SESSION_DIR
"""
import json
import subprocess
import sys

session = sys.argv[1]
failures = []


def analyse(tool):
    # The thread streams start later than the CPU streams: the whole range.
    out = subprocess.run([tool, "--no-intersection", session], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    return {r["class"]: r["data"] for r in json.loads(out)["results"]}


def expect(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


top = analyse("lttng-cputop-mi")
usage = {row[0]["tid"]: (row[0]["name"], round(row[3]["value"], 6))
         for row in top["per-process"] if row[0]["tid"] != 0}
expect("per-thread usage", usage,
       {101: ("one", 0.5), 102: ("two", 0.6875), 103: ("three", 0.05)})
cpus = {row[0]["id"]: round(row[1]["value"], 6) for row in top["per-cpu"]}
expect("per-CPU usage", cpus, {0: 0.5, 1: 0.7375})
expect("total usage", round(top["total"][0][0]["value"], 6), 0.61875)

sched = analyse("lttng-schedtop-mi")
waits = sorted((row[5]["tid"], row[4]["id"], row[2]["value"])
               for row in sched["top"])
expect("wait after preemption (tid, CPU, ns)", waits,
       [(101, 0, 2000), (102, 1, 2500)])

for failure in failures:
    print("check-processor-analyses:", failure, file=sys.stderr)
sys.exit(1 if failures else 0)
