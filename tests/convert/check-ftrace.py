#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# Reads an ftrace text file with the line patterns of the two readers that
# import it (Trace Compass's generic ftrace reader and Perfetto's systrace
# tokenizer) and prints one canonical line per event, so that tests compare
# what the readers would see.  Exits 1 on a line either reader rejects.
import re
import sys

TRACE_COMPASS = re.compile(
    r'^\s*(?P<comm>.*)-(?P<pid>\d+)(?:\s+\([^0-9]*(?P<tgid>\d+)?\))?'
    r'\s+\[(?P<cpu>\d+)\](?:\s+\S*)?\s+(?P<ts>[0-9]+(?:\.[0-9]+)?): '
    r'(?P<name>\w+)(?P<sep>:\s+|\(|\s+->\s+)(?P<data>[^)]*)\)?')
PERFETTO = re.compile(
    r'-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*'
    r'([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):')
LOST = re.compile(r'^CPU:(\d+) \[LOST (\d+) EVENTS\]$')


def main():
    lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
    if not lines[0].startswith('# tracer: nop'):
        sys.exit('first line is not "# tracer: nop"')
    bad = 0
    for n, line in enumerate(lines, 1):
        if line == '' or line.startswith('#'):
            continue
        m = LOST.match(line)
        if m:
            print('LOST cpu=%s count=%s' % m.groups())
            continue
        tc = TRACE_COMPASS.match(line)
        if tc is None:
            print('line %d: Trace Compass rejects: %s' % (n, line))
            bad += 1
            continue
        # Perfetto needs "event:" after the time, except for the syscall
        # lines, which it does not import (it reads raw_syscalls).
        pf = PERFETTO.search(line)
        syscall = tc.group('sep') != ': ' and tc.group('sep').strip() != ':'
        if pf is None and not syscall:
            print('line %d: Perfetto rejects: %s' % (n, line))
            bad += 1
            continue
        if pf is not None and not syscall:
            task = line[:pf.start()].strip()
            if (task != tc.group('comm').strip() or pf.group(1) !=
                    tc.group('pid') or pf.group(6) != tc.group('name')):
                print('line %d: readers disagree: %s' % (n, line))
                bad += 1
        if ' ' in tc.group('comm').strip():
            print('line %d: task name with a space: %s' % (n, line))
            bad += 1
        if tc.group('name') == 'sched_switch':
            body = dict(kv.split('=', 1) for kv in
                        tc.group('data').replace(' ==> ', ' ').split(' '))
            for key in ('prev_pid', 'prev_prio', 'next_pid', 'next_prio'):
                int(body[key])
        ts_ns = round(float(tc.group('ts')) * 1e9)
        print('%s %s %s %d %s%s%s' % (
            tc.group('comm').strip(), tc.group('pid'), tc.group('cpu'),
            ts_ns, tc.group('name'), tc.group('sep').strip() or ' ',
            tc.group('data')))
    sys.exit(1 if bad else 0)


main()
