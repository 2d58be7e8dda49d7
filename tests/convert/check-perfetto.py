#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks what Perfetto's importer relies on in a Perfetto trace, beyond the
schema (protoc --decode checks field numbers and wire types):

  * a packet sets at most one member of TracePacket's `data` oneof;
  * track events carry a non-zero trusted_packet_sequence_id, and their
    timestamps never decrease on a sequence;
  * every track uuid (and parent uuid) is described before it is used;
  * interned names are defined on the sequence, after the state was
    cleared, before they are used;
  * slice begin/end are balanced per track; counters go to counter tracks;
  * a clock snapshot (BOOTTIME and REALTIME) comes before any timed packet.

Prints a summary for tests (the snapshot, and per track its name and
slices), and exits 1 after printing each violation.

With --detail it also prints every slice, counter value and instant with
text, for tests that check exact names, times, depths and values:

  slice TRACK NAME BEGIN..END depth D
  counter TRACK TIME VALUE
  instant TRACK NAME TIME text="TEXT"    (instants with a "text" argument,
                                         the text as a JSON string)

usage: check-perfetto.py TRACE.pftrace [--detail]
"""
import json
import sys

# TracePacket fields in its `data` oneof (Perfetto's trace_packet.proto).
DATA_ONEOF = {
    1, 2, 4, 5, 6, 7, 9, 11, 33, 34, 35, 36, 37, 38, 39, 40, 43, 44, 45, 46,
    47, 48, 49, 50, 51, 52, 53, 54, 57, 60, 61, 62, 63, 64, 65, 66, 67, 68,
    69, 70, 71, 72, 73, 74, 75, 77, 78, 82, 83, 84, 86, 89, 90, 91, 95, 99,
    100, 101, 102, 103, 107, 109, 110, 111, 113, 115, 117, 118, 119, 120,
    122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135,
    138, 139, 140, 900,
}
BOOTTIME, REALTIME = 6, 1
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4


def varint(buf, pos):
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def fields(buf):
    """(number, wire type, value) of a message; length-delimited values are
    bytes, the others integers."""
    pos, out = 0, []
    while pos < len(buf):
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos:pos + 8], 'little'), pos + 8
        elif wire == 2:
            n, pos = varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos:pos + 4], 'little'), pos + 4
        else:
            raise ValueError('wire type %d' % wire)
        out.append((number, wire, value))
    return out


def first(msg, number, default=None):
    for n, _, v in msg:
        if n == number:
            return v
    return default


def signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def text_argument(event):
    """The string value of a debug annotation named "text", or None."""
    for n, _, ann in event:
        if n != 4:
            continue
        ann = fields(ann)
        if first(ann, 10) == b'text' and first(ann, 6) is not None:
            return first(ann, 6).decode('utf-8', 'replace')
    return None


def main():
    data = open(sys.argv[1], 'rb').read()
    detail = '--detail' in sys.argv[2:]
    details = []
    stacks = {}           # uuid -> [(name, begin)]
    problems = []
    described = {}        # uuid -> name
    counter_tracks = set()
    open_slices = {}      # uuid -> depth
    slices = {}           # uuid -> count
    last_ts = {}          # sequence -> timestamp
    interned = {}         # sequence -> set of event name iids
    cleared = set()       # sequences whose state was cleared
    snapshot = None
    timed_before_snapshot = False
    for index, (number, wire, packet_bytes) in enumerate(fields(data)):
        where = 'packet %d' % index
        if number != 1 or wire != 2:
            problems.append('%s: not a Trace.packet field' % where)
            continue
        packet = fields(packet_bytes)
        members = [n for n, _, _ in packet if n in DATA_ONEOF]
        if len(members) > 1:
            problems.append('%s: sets %d members of the data oneof %s' %
                            (where, len(members), members))
        ts = first(packet, 8)
        seq = first(packet, 10, 0)
        flags = first(packet, 13, 0)
        if flags & 1:
            cleared.add(seq)
            interned[seq] = set()
        if flags & 2 and seq not in cleared:
            problems.append('%s: needs incremental state never cleared on '
                            'sequence %d' % (where, seq))
        names = first(packet, 12)
        if names is not None:
            for n, _, entry in fields(names):
                if n == 2:
                    interned.setdefault(seq, set()).add(first(fields(entry), 1))
        clock = first(packet, 6)
        if clock is not None:
            clocks = {first(fields(c), 1): first(fields(c), 2, 0)
                      for n, _, c in fields(clock) if n == 1}
            if BOOTTIME not in clocks or REALTIME not in clocks:
                problems.append('%s: snapshot without BOOTTIME and REALTIME'
                                % where)
            elif snapshot is None:
                snapshot = clocks
        elif ts is not None and snapshot is None:
            timed_before_snapshot = True
        desc = first(packet, 60)
        if desc is not None:
            desc = fields(desc)
            uuid = first(desc, 1)
            parent = first(desc, 5)
            if parent is not None and parent not in described:
                problems.append('%s: track %d has undescribed parent %d' %
                                (where, uuid, parent))
            name = first(desc, 2)
            thread = first(desc, 4)
            process = first(desc, 3)
            if thread is not None:
                name = first(fields(thread), 5, b'')
            elif process is not None:
                name = first(fields(process), 6, b'')
            described[uuid] = (name or b'').decode('utf-8', 'replace')
            if first(desc, 8) is not None:
                counter_tracks.add(uuid)
        event = first(packet, 11)
        if event is None:
            continue
        event = fields(event)
        if seq == 0:
            problems.append('%s: track event without a sequence id' % where)
        if ts is None:
            problems.append('%s: track event without a timestamp' % where)
        elif ts < last_ts.get(seq, 0):
            problems.append('%s: time %d before %d on sequence %d' %
                            (where, ts, last_ts[seq], seq))
        else:
            last_ts[seq] = ts
        uuid = first(event, 11, 0)
        if uuid not in described:
            problems.append('%s: track %d used before it is described' %
                            (where, uuid))
        iid = first(event, 10)
        if iid is not None and iid not in interned.get(seq, set()):
            problems.append('%s: name iid %d not interned on sequence %d' %
                            (where, iid, seq))
        kind = first(event, 9, 0)
        if detail and ts is not None:
            track = described.get(uuid, '?')
            name = first(event, 23)
            name = name.decode('utf-8', 'replace') if name is not None else ''
            if kind == SLICE_BEGIN:
                stacks.setdefault(uuid, []).append((name, ts))
            elif kind == SLICE_END and stacks.get(uuid):
                began_name, began = stacks[uuid].pop()
                details.append('slice %s %s %d..%d depth %d' % (
                    track, began_name, began, ts, len(stacks[uuid])))
            elif kind == COUNTER:
                details.append('counter %s %d %d' % (
                    track, ts, signed64(first(event, 30, 0))))
            elif kind == INSTANT and text_argument(event) is not None:
                details.append('instant %s %s %d text=%s' % (
                    track, name, ts, json.dumps(text_argument(event))))
        if (kind == COUNTER) != (uuid in counter_tracks):
            problems.append('%s: event type %d on track %d' %
                            (where, kind, uuid))
        if kind == SLICE_BEGIN:
            open_slices[uuid] = open_slices.get(uuid, 0) + 1
            slices[uuid] = slices.get(uuid, 0) + 1
        elif kind == SLICE_END:
            if open_slices.get(uuid, 0) == 0:
                problems.append('%s: slice end without begin on track %d' %
                                (where, uuid))
            else:
                open_slices[uuid] -= 1
    for uuid, depth in sorted(open_slices.items()):
        if depth:
            problems.append('track %d: %d slices never end' % (uuid, depth))
    if timed_before_snapshot and snapshot is not None:
        problems.append('timed packets before the clock snapshot')
    if snapshot is None:
        print('clock snapshot: none')
    else:
        print('clock snapshot: BOOTTIME %d = REALTIME %d' %
              (snapshot[BOOTTIME], snapshot[REALTIME]))
    for uuid in sorted(described):
        print('track %d %s: slices %d' % (uuid, described[uuid],
                                          slices.get(uuid, 0)))
    for line in details:
        print(line)
    for problem in problems:
        print('check-perfetto:', problem)
    sys.exit(1 if problems else 0)


main()
