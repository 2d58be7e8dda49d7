#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The firmware's UART log converted to CTF takes the kernel shape: checks
with babeltrace2 that every task switch of the log is one sched_switch (the
same tasks, in the same order, at the same times) and every interrupt one
irq_handler_entry/exit, and that LTTng's analyses (lttng-irqstats,
lttng-cputop) count them and name the tasks.  The reference is the log
itself, decoded by `flightrec print`.  Exit status 0 when all match.

usage: check-firmware-ctf.py FLIGHTREC UART_LOG OUT_DIR
"""
import json
import re
import subprocess
import sys

flightrec, log, out = sys.argv[1:4]
failures = []


def run(*args):
    return subprocess.run(list(args), check=True, capture_output=True,
                          text=True, timeout=300).stdout


def expect(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, str(got)[:300],
                                                 str(want)[:300]))


# The log's own records: "TIME [RING] TID NAME EVENT DATA".
# print shows times from the first record; CTF from uptime 0.
first = re.search(r"first record: (\d+)\.(\d+) s", run(flightrec, "stats", log))
origin = int(first.group(1)) * 1000000000 + int(first.group(2))
switches, irqs, pending_out = [], [], None
stack, nested_into = [], {}
for line in run(flightrec, "print", log).splitlines():
    f = line.split()
    event, data = f[4], int(f[5], 16)
    ns = origin + round(float(f[0]) * 1e9)
    if event == "THREAD_SWITCH_OUT":
        pending_out = data
    elif event == "THREAD_SWITCH_IN":
        if pending_out is not None:
            switches.append((ns, pending_out, data))
        pending_out = None
    elif event == "INTERRUPT_ENTRY":
        irqs.append(data)
        if stack:
            nested_into[stack[-1]] = nested_into.get(stack[-1], 0) + 1
        stack.append(data)
    elif event == "INTERRUPT_EXIT" and stack:
        stack.pop()

run(flightrec, "convert", "--to", "ctf", "-o", out, log)
text = run("babeltrace2", "--clock-seconds", "--no-delta", out)
got_switches, got_irqs = [], []
for line in text.splitlines():
    m = re.match(r"\[(\d+)\.(\d+)\] \S+ sched_switch: .*prev_tid = (\d+),.*"
                 r"next_tid = (\d+),", line)
    if m:
        ns = int(m.group(1)) * 1000000000 + int(m.group(2))
        got_switches.append((ns, int(m.group(3)), int(m.group(4))))
    m = re.search(r"irq_handler_entry: .*irq = (\d+),", line)
    if m:
        got_irqs.append(int(m.group(1)))
expect("switches in the log", len(switches) > 100, True)
# print shows nanoseconds rounded to its 9 digits, as babeltrace2 does.
expect("sched_switch (time, prev, next)", got_switches, switches)
expect("irq_handler_entry", got_irqs, irqs)
expect("irq_handler_exit count", text.count("irq_handler_exit:"), len(irqs))


def analyse(tool):
    res = run(tool, "--no-intersection", out)
    return {r["class"]: r["data"] for r in json.loads(res)["results"]}


# Linux's hard interrupts do not nest: lttng-irqstats drops an interrupt
# another one nested into (the SysTick the second timer preempts).
stats = analyse("lttng-irqstats-mi")["hard-stats"]
expect("IRQ counts", {row[0]["nr"]: row[1]["value"] for row in stats},
       {n: irqs.count(n) - nested_into.get(n, 0) for n in set(irqs)})
expect("interrupts that nest", sum(nested_into.values()) > 0, True)
top = analyse("lttng-cputop-mi")
expect("tasks", sorted((row[0]["tid"], row[0]["name"])
                       for row in top["per-process"]),
       [(1, "sensor"), (2, "control"), (3, "logger")])

for failure in failures:
    print("check-firmware-ctf:", failure, file=sys.stderr)
sys.exit(1 if failures else 0)
