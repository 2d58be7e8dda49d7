#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks the UART log of examples/firmware (demo.c) as the host decodes it.

usage: check-firmware-log.py FLIGHTREC LOG [an385|an505]

The demo prints its own counts in the fault line; the decoded recording
must show exactly those events, in the scheduler's order, timed by its
25 MHz timer, with the fault last and nothing lost.  The demo's parameters
are repeated here (from demo.c): 200 SysTicks at 1 kHz, TIMER1 every 3.3 ms.
"""
import base64
import csv
import re
import subprocess
import sys

# Per board: the system clock (TIMER0, the counter) and TIMER1's exception
# number (16 + its IRQ).
BOARDS = {"an385": (25_000_000, 16 + 9), "an505": (20_000_000, 16 + 4)}
SYSTICK_VECTOR = 15
SYSTICKS = 200
SYSTICK_NS = 1_000_000
TIMER1_NS = 3_300_000
# run.sh's -icount shift=7: one instruction every 128 ns of virtual time.
ICOUNT_NS_PER_INSTRUCTION = 128
# An interrupt's entry record waits for what runs before it: a handler of
# the same or a higher priority (TIMER1, or SysTick's own 200 us of work
# cannot delay the next tick: 1 ms apart), a recorder slow path.  Bound.
LATENCY_SPREAD_NS = 20_000
# From a higher-priority handler's exit time to the next handler's entry
# record: the exit's slow path (a sync pair) and the entry's, at most 500
# instructions.
SLOW_PATH_NS = 500 * ICOUNT_NS_PER_INSTRUCTION
TASK_ORDER = [1, 2, 3]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def main():
    flightrec, log = sys.argv[1], sys.argv[2]
    board = sys.argv[3] if len(sys.argv) > 3 else "an385"
    frequency, timer1_vector = BOARDS[board]
    text = open(log, "rb").read().decode("ascii", "replace")
    # The counter against the icount clock: ticks over a known number of
    # instructions (plus the few of the two counter reads) give the
    # frequency the stream must state.
    m = re.search(r"calibration: instructions=(\d+) ticks=(\d+) "
                  r"frequency=(\d+)", text)
    if m is None:
        sys.exit("no calibration line in " + log)
    instructions, ticks, stated = map(int, m.groups())
    expected = instructions * ICOUNT_NS_PER_INSTRUCTION * frequency // 10**9
    check(stated == frequency, "firmware states %d Hz, board %d Hz"
          % (stated, frequency))
    check(expected <= ticks <= expected + 100 * frequency // 10**6,
          "calibration: %d ticks for %d instructions, expected %d at %d Hz"
          % (ticks, instructions, expected, frequency))
    m = re.search(r"hard fault; counts: systick=(\d+) timer1=(\d+) "
                  r"nested=(\d+) switches=(\d+)", text)
    if m is None:
        sys.exit("no fault line with the firmware's counts in " + log)
    fw_systick, fw_timer1, fw_nested, fw_switches = map(int, m.groups())
    blocks = text.count("-----BEGIN FLIGHTREC STREAM-----")
    # One block every 20 ticks until the fault's (the last period's block
    # may come before or after the fault is requested).
    check(blocks >= SYSTICKS // 20,
          "blocks: %d, expected one every 20 ticks and the fault's" % blocks)

    out = subprocess.run([flightrec, "print", "--csv", log],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("print exit %d: %s" % (out.returncode, out.stderr))
    # The same blocks decoded by Python's base64 and joined: the stream
    # flightrec reads from the log must be exactly these bytes.
    raw = b"".join(base64.b64decode(block) for block in re.findall(
        r"^-----BEGIN FLIGHTREC STREAM-----\n(.*?)^-----END FLIGHTREC "
        r"STREAM-----$", text, re.M | re.S))
    with open(log + ".raw", "wb") as f:
        f.write(raw)
    direct = subprocess.run([flightrec, "print", "--csv", log + ".raw"],
                            capture_output=True, text=True)
    check(direct.returncode == 0 and direct.stdout == out.stdout,
          "the log and its blocks decoded by Python's base64 differ")
    rows = list(csv.DictReader(out.stdout.splitlines()))
    events = [r for r in rows if r["kind"] == "event"]
    if not events:
        sys.exit("no events decoded from " + log)
    losses = [r for r in rows if r["kind"] != "event"]
    check(not losses, "losses reported: %r" % losses[:3])

    def data(r):
        return int(r["data"], 0)

    untimed = [r for r in events if r["time_ns"] == ""]
    check(not untimed, "%d events the stream cannot time, the first: %r"
          % (len(untimed), untimed[:1]))
    events = [r for r in events if r["time_ns"] != ""]
    times = [int(r["time_ns"]) for r in events]
    check(times == sorted(times), "records not in time order")
    tick_ns = 10**9 // frequency
    check(all(t % tick_ns == 0 for t in times),
          "a time that is not a whole tick of the %d Hz counter" % frequency)

    # The fault is the last record.
    check(events[-1]["event"] == "fault", "last record: %r" % events[-1])
    check(sum(r["event"] == "fault" for r in events) == 1, "faults")

    # SysTick: 200 entries and exits, ticks 1..200 in order, 1 ms apart.
    check(fw_systick == SYSTICKS, "firmware systick count %d" % fw_systick)
    st_in = [int(r["time_ns"]) for r in events
             if r["event"] == "INTERRUPT_ENTRY" and data(r) == SYSTICK_VECTOR]
    st_out = [int(r["time_ns"]) for r in events
              if r["event"] == "INTERRUPT_EXIT" and data(r) == SYSTICK_VECTOR]
    check(len(st_in) == SYSTICKS and len(st_out) == SYSTICKS,
          "SysTick entries %d, exits %d" % (len(st_in), len(st_out)))
    ticks = [data(r) for r in events if r["event"] == "tick"]
    check(ticks == list(range(1, SYSTICKS + 1)), "tick numbers")
    # A tick due while TIMER1 (of a higher priority) runs waits for it.
    # Inside a task's record TIMER1's items go to the signal ring, where a
    # sync pair is nearly always due (the ring is rarely used): its exit
    # then takes the recorder's slow path, a few hundred instructions after
    # its time is taken.  Such a tick is checked against TIMER1's exit, the
    # others against the period.
    t1_in = [int(r["time_ns"]) for r in events
             if r["event"] == "INTERRUPT_ENTRY" and data(r) == timer1_vector]
    t1_out = [int(r["time_ns"]) for r in events
              if r["event"] == "INTERRUPT_EXIT" and data(r) == timer1_vector]
    late, waited = [], []
    for i, t in enumerate(st_in):
        due = st_in[0] + i * SYSTICK_NS
        exits = [b for a, b in zip(t1_in, t1_out)
                 if due - LATENCY_SPREAD_NS <= a <= t]
        if exits:
            waited.append(t - max(exits))
        else:
            late.append(t - due)
    if late:
        check(max(late) - min(late) <= LATENCY_SPREAD_NS,
              "SysTick period: spread %d ns" % (max(late) - min(late)))
    check(all(0 <= w <= SLOW_PATH_NS for w in waited),
          "SysTick after TIMER1's exit: %r ns" % waited)
    # The periods meet every 33 ms: 6 times in the 200 ms.
    check(len(waited) <= SYSTICKS * SYSTICK_NS // (10 * TIMER1_NS),
          "%d SysTicks waited for TIMER1" % len(waited))

    # TIMER1: as many as fit in the 200 ms, 3.3 ms apart; nesting as the
    # firmware counted it, found from the times.
    expected_t1 = SYSTICKS * SYSTICK_NS // TIMER1_NS
    check(fw_timer1 == expected_t1, "firmware timer1 count %d, expected %d"
          % (fw_timer1, expected_t1))
    check(len(t1_in) == fw_timer1 and len(t1_out) == fw_timer1,
          "TIMER1 entries %d, exits %d, firmware %d"
          % (len(t1_in), len(t1_out), fw_timer1))
    late = [t - t1_in[0] - i * TIMER1_NS for i, t in enumerate(t1_in)]
    if late:
        check(max(late) - min(late) <= LATENCY_SPREAD_NS,
              "TIMER1 period: spread %d ns" % (max(late) - min(late)))
    nested = sum(1 for t in t1_in
                 if any(a <= t <= b for a, b in zip(st_in, st_out)))
    check(fw_nested > 0, "no TIMER1 nested into SysTick")
    check(nested == fw_nested,
          "nested TIMER1: decoded %d, firmware %d" % (nested, fw_nested))

    # Interrupts that came inside a task's record went to the signal ring
    # (ring 1); only handlers' events are there, and the run has some.
    signal = [r["event"] for r in events if r["ring"] == "1"]
    check(signal and set(signal) <= {"INTERRUPT_ENTRY", "INTERRUPT_EXIT",
                                      "tick"},
          "signal ring events: %r" % sorted(set(signal)))

    # Task switches: round robin from task 1, each OUT the running task.
    sw = [(r["event"], data(r)) for r in events
          if r["event"].startswith("THREAD_SWITCH")]
    check(sw[:1] == [("THREAD_SWITCH_IN", 1)], "first switch: %r" % sw[:1])
    pairs = sw[1:]
    check(len(pairs) == 2 * fw_switches,
          "switch items %d, firmware switches %d" % (len(pairs), fw_switches))
    running = 1
    for i in range(0, len(pairs) - 1, 2):
        (e_out, t_out), (e_in, t_in) = pairs[i], pairs[i + 1]
        want = TASK_ORDER[(TASK_ORDER.index(running) + 1) % len(TASK_ORDER)]
        if (e_out, t_out, e_in, t_in) != ("THREAD_SWITCH_OUT", running,
                                          "THREAD_SWITCH_IN", want):
            check(False, "switch %d: %r %r after task %d"
                  % (i // 2, pairs[i], pairs[i + 1], running))
            break
        running = t_in

    # Every task's work turns are numbered 1, 2, ... in its own order.
    turns = {}
    current = 1
    for r in events:
        if r["event"] == "THREAD_SWITCH_IN":
            current = data(r)
        elif r["event"] == "work":
            turns.setdefault(current, []).append(data(r))
    for task, seen in sorted(turns.items()):
        check(seen == list(range(1, len(seen) + 1)),
              "task %d work turns out of order" % task)

    if failures:
        for f in failures:
            print("FAIL:", f)
        sys.exit(1)
    print("ok: %d records, %d blocks, %d SysTicks, %d TIMER1 (%d nested), "
          "%d switches" % (len(events), blocks, len(st_in), len(t1_in),
                           nested, fw_switches))


main()
