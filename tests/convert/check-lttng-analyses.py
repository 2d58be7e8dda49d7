#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Runs LTTng's own analyses (python3-lttnganalyses) on the kernel-shaped CTF
trace of drv_kernel_scenario() and checks what they find: the interrupt,
its duration, the threads and CPUs.  Exit status 0 when all match.

usage: check-lttng-analyses.py TRACE_DIR
"""
import json
import subprocess
import sys

trace = sys.argv[1]


def analyse(tool):
    out = subprocess.run([tool, trace], check=True, capture_output=True,
                         text=True, timeout=120).stdout
    return {r["class"]: r["data"] for r in json.loads(out)["results"]}


failures = []


def expect(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


irq = analyse("lttng-irqstats-mi")["hard-stats"]
expect("hard IRQs", [row[0]["nr"] for row in irq], [11])
expect("IRQ 11 count", irq[0][1]["value"], 1)
expect("IRQ 11 min/avg/max ns",
       [irq[0][2]["value"], irq[0][3]["value"], irq[0][4]["value"]],
       [100, 100.0, 100])

top = analyse("lttng-cputop-mi")
processes = {row[0]["tid"]: row[0]["name"] for row in top["per-process"]}
expect("threads", processes,
       {0x0a010001: "WORK", 0x0a010002: "UART rx", 0: "swapper/1"})
expect("CPUs", [row[0]["id"] for row in top["per-cpu"]], [0, 1])

for failure in failures:
    print("check-lttng-analyses:", failure, file=sys.stderr)
sys.exit(1 if failures else 0)
