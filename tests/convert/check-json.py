#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# Checks a Chrome JSON trace against the Trace Event Format rules Perfetto's
# importer relies on and prints one canonical line per event for tests:
#   ph tid ts_ns name {args}       (X: ph tid ts_ns+dur_ns name {args})
# Complete (X) slices of one thread must nest strictly, in nanoseconds.
# Exits 1 on a rule violation.
import json
import sys


def main():
    text = open(sys.argv[1], encoding='utf-8').read()
    if not text.replace(' ', '').replace('\n', '').startswith('{"'):
        sys.exit('not a JSON object trace')
    doc = json.loads(text)
    events = doc['traceEvents']
    stacks = {}
    slices = {}
    bad = 0
    for ev in events:
        ph = ev['ph']
        if ph not in ('B', 'E', 'X', 'i', 'C', 'M'):
            print('bad phase %r' % ph)
            bad += 1
        if not isinstance(ev['pid'], int) or not isinstance(ev['tid'], int):
            print('pid/tid not ints: %r' % ev)
            bad += 1
        key = (ev['pid'], ev['tid'])
        if ph == 'M':
            if ev['name'] == 'process_sort_index':
                continue
            assert ev['name'] in ('process_name', 'thread_name')
            print('M %d %s' % (ev['tid'], ev['args']['name']))
            continue
        ts = ev['ts']
        ts_ns = round(ts * 1000)
        if ph == 'B':
            stacks.setdefault(key, []).append(ev['name'])
        elif ph == 'E':
            if not stacks.get(key):
                print('E without B: %r' % ev)
                bad += 1
            else:
                stacks[key].pop()
        elif ph == 'X':
            if 'name' not in ev or 'cat' not in ev or ev['dur'] < 0:
                print('X without name, cat or dur: %r' % ev)
                bad += 1
            dur_ns = round(ev['dur'] * 1000)
            slices.setdefault(key, []).append((ts_ns, dur_ns, ev['name']))
            ts_ns = '%d+%d' % (ts_ns, dur_ns)
        elif ph == 'C':
            if not ev.get('args'):
                print('counter without args')
                bad += 1
        elif ph == 'i' and ev.get('s', 't') not in ('t', 'p', 'g'):
            bad += 1
        args = json.dumps(ev.get('args', {}), sort_keys=True)
        print('%s %d %s %s %s' % (ph, ev['tid'], ts_ns, ev.get('name', '-'),
                                 args))
    for key, spans in slices.items():
        open_ends = []
        for ts, dur, name in sorted(spans, key=lambda s: (s[0], -s[1])):
            while open_ends and open_ends[-1] <= ts:
                open_ends.pop()
            if open_ends and ts + dur > open_ends[-1]:
                print('slice %s at %d overlaps its parent on %r' %
                      (name, ts, key))
                bad += 1
            open_ends.append(ts + dur)
    sys.exit(1 if bad else 0)


main()
