#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks the UART log of a demo built with -DFW_FAULT_IN_DRAIN=K: a
SysTick that faults while the logger task drains, so that the HardFault
handler's drain takes over the one it interrupted.

usage: check-fault-in-drain.py FLIGHTREC LOG [--tail MARKER] [--once NAME]

The log must decode without an error and without a loss, and hold every
event the firmware made exactly once: ticks 1..N in order (N the
firmware's own count), every task's work turns 1, 2, ... without a gap or
a repeat, as many TIMER1 entries as the firmware counted, every event
named, the fault last.  --tail MARKER: only the log after the line MARKER
(a stream begun again there, FW_RESET_STREAM), whose ticks go on without
a gap or a repeat from where they start (the new stream cannot time the
items its rings held before their next sync pair: they come untimed, at
the end, so order is not checked there).  --once NAME: an
event NAME is in the log exactly once (FW_LATE_NAME).
"""
import argparse
import csv
import json
import re
import subprocess
import sys

SYSTICK_VECTOR = 15
TIMER1_VECTORS = (16 + 9, 16 + 4)  # an385, an505

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("flightrec")
    parser.add_argument("log")
    parser.add_argument("--tail")
    parser.add_argument("--once")
    args = parser.parse_args()
    flightrec, log = args.flightrec, args.log
    text = open(log, "rb").read().decode("ascii", "replace")
    m = re.search(r"hard fault; counts: systick=(\d+) timer1=(\d+) "
                  r"nested=\d+ switches=\d+ region_bytes=\d+ in_drain=(\d)",
                  text)
    if m is None:
        sys.exit("no fault line with the firmware's counts in " + log)
    systicks, timer1, in_drain = map(int, m.groups())
    check(in_drain == 1, "the fault did not come during a drain")

    first = 1  # the first tick and turn the log holds
    if args.tail is not None:
        at = text.find(args.tail + "\n")
        check(at >= 0, "no line %r in the log" % args.tail)
        log = log + ".tail"
        with open(log, "w") as f:
            f.write(text[at:])
        first = None
    out = subprocess.run([flightrec, "print", "--csv", log],
                         capture_output=True, text=True)
    if out.returncode != 0 or out.stderr != "":
        sys.exit("print exit %d: %s" % (out.returncode, out.stderr))
    rows = list(csv.DictReader(out.stdout.splitlines()))
    events = [r for r in rows if r["kind"] == "event"]
    check(len(events) == len(rows), "records other than events: %s"
          % [r for r in rows if r["kind"] != "event"][:3])
    stats = subprocess.run([flightrec, "stats", "--json", log],
                           capture_output=True, text=True)
    if stats.returncode != 0:
        sys.exit("stats exit %d: %s" % (stats.returncode, stats.stderr))
    lost = json.loads(stats.stdout)["lost"]
    check(lost == {"overflow": 0, "discard": 0, "missing": 0},
          "losses reported: %s" % lost)

    def data(r):
        return int(r["data"], 16)

    ticks = [data(r) for r in events if r["event"] == "tick"]
    if first is None:
        ticks.sort()
    start = first if first is not None else (ticks[0] if ticks else 1)
    check(ticks == list(range(start, systicks + 1)),
          "tick numbers: %d of them, expected %d..%d; repeated %s, missing %s"
          % (len(ticks), start, systicks,
             sorted({t for t in ticks if ticks.count(t) > 1})[:10],
             sorted(set(range(start, systicks + 1)) - set(ticks))[:10]))
    if first is not None:
        timer1_entries = sum(1 for r in events
                             if r["event"] == "INTERRUPT_ENTRY" and
                             data(r) in TIMER1_VECTORS)
        check(timer1_entries == timer1,
              "TIMER1 entries %d, firmware counted %d"
              % (timer1_entries, timer1))
    unnamed = sorted({r["event"] for r in events
                      if r["event"].startswith("USER_")})
    check(unnamed == [], "events without their names: %s" % unnamed)
    if args.once is not None:
        n = sum(1 for r in events if r["event"] == args.once)
        check(n == 1, "event %s %d times, expected once" % (args.once, n))
    # Work turns by task: a task's turns run while it is switched in.
    if first is None:
        check(sum(1 for r in events if r["event"] == "fault") == 1,
              "not one fault")
        report(events, systicks, timer1)
        return
    turns = {}
    current = None
    for r in events:
        if r["event"] == "THREAD_SWITCH_IN":
            current = data(r)
        elif r["event"] == "work":
            turns.setdefault(current, []).append(data(r))
    check(sorted(turns) == [1, 2, 3], "tasks with work: %s" % sorted(turns))
    for task, seen in sorted(turns.items()):
        begin = first if first is not None else seen[0]
        check(seen == list(range(begin, begin + len(seen))),
              "task %s work turns not %d..%d once each"
              % (task, begin, begin + len(seen) - 1))
    check(events != [] and events[-1]["event"] == "fault",
          "the fault is not the last event")
    report(events, systicks, timer1)


def report(events, systicks, timer1):
    if failures:
        for f in failures:
            print("FAIL: " + f, file=sys.stderr)
        sys.exit(1)
    print("ok: %d events, %d ticks, %d TIMER1, the fault last"
          % (len(events), systicks, timer1))


if __name__ == "__main__":
    main()
