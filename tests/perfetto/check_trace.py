#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Checks a trace decoded by `protoc --decode=perfetto.protos.Trace` (text
on stdin): interned ids defined on their sequence since its last clear,
tracks declared, slices balanced and nested per track, and every flow
started on one slice and ended on another that exists (with --forward,
one that begins no earlier: Perfetto reads events in time order and drops
a flow whose end it reads first).  Prints the idle slices of device
tracks as "ts dur name" lines, one per slice, for the caller to compare,
and exits 1 with a reason on the first problem.  With --dump FILE (after
--forward, if given) it also writes every slice as JSON (ts, dur, name,
track and its name, the pid of the process the track is drawn under,
flows out and in), and the tracks, for a caller's own checks."""
import json
import re
import sys

FORWARD = sys.argv[1:2] == ['--forward']
ARGS = sys.argv[1 + FORWARD:]

TOKEN = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s{}]+))|(\}))')


def parse(text):
    root, stack, pos = {}, [], 0
    cur = root
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                fail("unparsed text at %d: %r" % (pos, text[pos:pos + 40]))
            return root
        pos = m.end()
        if m.group(4):
            cur = stack.pop()
        elif m.group(2) == '{':
            child = {}
            cur.setdefault(m.group(1), []).append(child)
            stack.append(cur)
            cur = child
        else:
            v = m.group(3)
            v = bytes(v[1:-1], 'ascii').decode('unicode_escape').encode('latin-1').decode() \
                if v.startswith('"') else v
            cur.setdefault(m.group(1), []).append(v)


def fail(why):
    print("check_trace: " + why, file=sys.stderr)
    sys.exit(1)


def one(d, k, default=None):
    return d.get(k, [default])[0]


TABLES = {'event_names': 'name', 'debug_annotation_names': 'name',
          'debug_annotation_string_values': 'str'}


def intern(state, p):
    flags = int(one(p, 'sequence_flags', 0))
    if flags & 1:
        state.clear()
        state['cleared'] = True
    if 'track_event' in p and not (flags & 2):
        fail("a track event without SEQ_NEEDS_INCREMENTAL_STATE")
    if 'track_event' in p and not state.get('cleared'):
        fail("a track event before the incremental state was cleared")
    for idata in p.get('interned_data', []):
        for table, field in TABLES.items():
            for e in idata.get(table, []):
                state.setdefault(table, {})[int(one(e, 'iid'))] = one(e, field)


def lookup(state, table, iid):
    v = state.get(table, {}).get(int(iid))
    if v is None:
        fail("%s iid %s used but not defined on its sequence" % (table, iid))
    return v


def annots(state, ev):
    out = {}
    for a in ev.get('debug_annotations', []):
        name = one(a, 'name') or lookup(state, 'debug_annotation_names', one(a, 'name_iid'))
        if 'string_value_iid' in a:
            v = lookup(state, 'debug_annotation_string_values', one(a, 'string_value_iid'))
        else:
            v = next(one(a, k) for k in ('string_value', 'uint_value', 'int_value',
                                         'pointer_value', 'double_value',
                                         'bool_value') if k in a)
        out[name] = v
    return out


def main():
    trace = parse(sys.stdin.read())
    tracks, state, slices, open_ = {}, {}, [], {}
    packets = trace.get('packet', [])
    if not packets or one(packets[0], 'first_packet_on_sequence') != 'true' \
            or not int(one(packets[0], 'sequence_flags', 0)) & 1:
        fail("the first packet does not start its sequence and clear its state")
    for p in packets:
        if one(p, 'trusted_packet_sequence_id') is None:
            fail("a packet without a sequence id")
        for td in p.get('track_descriptor', []):
            tracks[one(td, 'uuid')] = td
        intern(state, p)
        for ev in p.get('track_event', []):
            event(state, tracks, open_, slices, int(one(p, 'timestamp')), ev)
    for track, st in open_.items():
        if st:
            fail("track %s: %d slices never end" % (track, len(st)))
    nesting(slices)
    flows(slices)
    if len(ARGS) > 1 and ARGS[0] == '--dump':
        dump(ARGS[1], tracks, slices)
    for s in slices:
        if s['device'] and s['name'].startswith('idle'):
            print(s['ts'], s['dur'], s['name'], ' '.join(
                '%s=%s' % kv for kv in sorted(s['annots'].items())))
    print("# slices=%d tracks=%d" % (len(slices), len(tracks)), file=sys.stderr)


def dump(path, tracks, slices):
    """The slices as JSON, each with its track's name and process."""
    pids = {}
    for uuid, td in tracks.items():
        for d in td.get('process', []) + td.get('thread', []):
            pids[uuid] = int(one(d, 'pid'))
    info = {}
    for uuid, td in tracks.items():
        parent = one(td, 'parent_uuid')
        info[uuid] = {'name': one(td, 'name'), 'pid': pids.get(uuid, pids.get(parent))}
    out = [{'ts': s['ts'], 'dur': s['dur'], 'name': s['name'], 'track': s['track'],
            'track_name': info[s['track']]['name'], 'pid': info[s['track']]['pid'],
            'out': s['out'], 'in': s['in'], 'annots': s['annots']} for s in slices]
    with open(path, 'w') as f:
        json.dump({'tracks': info, 'slices': out}, f)


def event(state, tracks, open_, slices, ts, ev):
    track, kind = one(ev, 'track_uuid'), one(ev, 'type')
    if track not in tracks:
        fail("event on undeclared track %s" % track)
    st = open_.setdefault(track, [])
    if kind == 'TYPE_SLICE_END':
        if not st:
            fail("track %s: end at %d with no open slice" % (track, ts))
        s = st.pop()
        if ts < s['ts']:
            fail("track %s: slice %s ends before it begins" % (track, s['name']))
        s['dur'] = ts - s['ts']
        return
    name = one(ev, 'name') or lookup(state, 'event_names', one(ev, 'name_iid'))
    s = {'ts': ts, 'dur': 0, 'name': name, 'track': track, 'annots': annots(state, ev),
         'device': 'thread' not in tracks[track] and 'process' not in tracks[track],
         'out': ev.get('flow_ids', []), 'in': ev.get('terminating_flow_ids', [])}
    slices.append(s)
    if kind == 'TYPE_SLICE_BEGIN':
        st.append(s)
    elif kind != 'TYPE_INSTANT':
        fail("unexpected event type %s" % kind)


def nesting(slices):
    """Slices on one track nest or follow each other, as the UI draws them."""
    by_track = {}
    for s in slices:
        by_track.setdefault(s['track'], []).append(s)
    for track, ss in by_track.items():
        stack = []
        for s in sorted(ss, key=lambda s: (s['ts'], -s['dur'])):
            while stack and stack[-1]['ts'] + stack[-1]['dur'] <= s['ts']:
                stack.pop()
            if stack and s['ts'] + s['dur'] > stack[-1]['ts'] + stack[-1]['dur']:
                fail("track %s: %s at %d overlaps %s at %d without nesting" % (
                    track, s['name'], s['ts'], stack[-1]['name'], stack[-1]['ts']))
            stack.append(s)


def flows(slices):
    starts, ends = {}, {}
    for s in slices:
        for f in s['out']:
            if f in starts:
                fail("flow %s starts twice" % f)
            starts[f] = s
        for f in s['in']:
            if f in ends:
                fail("flow %s ends twice" % f)
            ends[f] = s
    for f in starts:
        if f not in ends:
            fail("flow %s from %s ends on no slice" % (f, starts[f]['name']))
    for f in ends:
        if f not in starts:
            fail("flow %s into %s starts on no slice" % (f, ends[f]['name']))
        if ends[f] is starts[f]:
            fail("flow %s starts and ends on one slice" % f)
        # Perfetto reads events in time order: an end seen before its start
        # belongs to no flow and the flow is dropped
        if FORWARD and ends[f]['ts'] < starts[f]['ts']:
            fail("flow %s into %s at %d starts later, at %d on %s" % (
                f, ends[f]['name'], ends[f]['ts'], starts[f]['ts'], starts[f]['name']))
    print("# flows=%d" % len(starts), file=sys.stderr)


if __name__ == '__main__':
    main()
