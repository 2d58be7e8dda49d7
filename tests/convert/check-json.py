#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# Checks a Chrome JSON trace against the Trace Event Format rules Perfetto's
# importer relies on and prints one canonical line per event for tests:
#   ph tid ts_ns name {args}
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
    bad = 0
    for ev in events:
        ph = ev['ph']
        if ph not in ('B', 'E', 'i', 'C', 'M'):
            print('bad phase %r' % ph)
            bad += 1
        if not isinstance(ev['pid'], int) or not isinstance(ev['tid'], int):
            print('pid/tid not ints: %r' % ev)
            bad += 1
        key = (ev['pid'], ev['tid'])
        if ph == 'M':
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
        elif ph == 'C':
            if not ev.get('args'):
                print('counter without args')
                bad += 1
        elif ph == 'i' and ev.get('s', 't') not in ('t', 'p', 'g'):
            bad += 1
        args = json.dumps(ev.get('args', {}), sort_keys=True)
        print('%s %d %d %s %s' % (ph, ev['tid'], ts_ns, ev.get('name', '-'),
                                 args))
    sys.exit(1 if bad else 0)


main()
