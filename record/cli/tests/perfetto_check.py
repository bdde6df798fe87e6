"""Checks a .pftrace with Perfetto's own protos (PyPI `perfetto`), as
trace_processor would need it, then prints its ranges and marks as JSON
lines comparable to the Chrome trace's (times in ns from the trace's origin).

    python3 perfetto_check.py TRACE.pftrace

Checks: every packet parses; every sequence id is non-zero; no packet that
needs incremental state comes before its sequence's clear; every interned id
used was defined on its sequence since the last clear, none is 0; every
track used (explicitly or by default) and every parent was described
before; slice begins and ends balance on every track; each sequence's
delta-clock times never go back; every incremental clock has a snapshot
before its first use; every flow ended was started, no later than its end,
and is ended once. A failed check exits 1 saying which.
"""

import json
import sys
import zlib

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

TE = pb.TrackEvent


def fail(why):
    print(f"perfetto_check: {why}", file=sys.stderr)
    sys.exit(1)


def packets(path):
    trace = pb.Trace.FromString(open(path, "rb").read())
    for p in trace.packet:
        if p.HasField("compressed_packets"):
            yield from pb.Trace.FromString(zlib.decompress(p.compressed_packets)).packet
        else:
            yield p


def main(path):
    tracks = {0: None}  # uuid -> descriptor
    sequences = {}  # id -> state
    open_slices = {}  # track -> [(name, start, args, flows it ends)]
    events = []
    flow_starts = {}  # flow id -> the time of the event that starts it
    flow_ends = {}  # flow id -> the times of the events that end it
    origin = None
    for n, p in enumerate(packets(path)):
        seq_id = p.trusted_packet_sequence_id
        if not seq_id:
            fail(f"packet {n}: no trusted_packet_sequence_id")
        s = sequences.setdefault(
            seq_id, {"cleared": False, "names": {}, "strings": {}, "ann": {}, "clocks": {}, "track": None, "clock": None}
        )
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            s.update(cleared=True, names={}, strings={}, ann={}, track=None, clock=None)
        if p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE and not s["cleared"]:
            fail(f"packet {n}: needs incremental state before its sequence {seq_id} was cleared")
        if p.HasField("clock_snapshot"):
            for c in p.clock_snapshot.clocks:
                s["clocks"][c.clock_id] = c.timestamp
                if c.clock_id < 64:
                    origin = c.timestamp if origin is None else min(origin, c.timestamp)
        if p.HasField("trace_packet_defaults"):
            d = p.trace_packet_defaults
            s["clock"] = d.timestamp_clock_id or None
            if d.track_event_defaults.HasField("track_uuid"):
                s["track"] = d.track_event_defaults.track_uuid
        if p.HasField("interned_data"):
            i = p.interned_data
            for table, entries, value in (
                ("names", i.event_names, lambda e: e.name),
                ("ann", i.debug_annotation_names, lambda e: e.name),
                ("strings", i.debug_annotation_string_values, lambda e: e.str.decode()),
            ):
                for e in entries:
                    if e.iid == 0:
                        fail(f"packet {n}: interned id 0")
                    s[table][e.iid] = value(e)
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.HasField("parent_uuid") and d.parent_uuid not in tracks:
                fail(f"packet {n}: track {d.uuid} has an undescribed parent {d.parent_uuid}")
            tracks[d.uuid] = d
            continue
        if not p.HasField("track_event"):
            continue
        e = p.track_event
        # The time: a delta on the sequence's incremental clock, or absolute.
        clock = p.timestamp_clock_id or s["clock"]
        if clock is not None and clock >= 64:
            if clock not in s["clocks"]:
                fail(f"packet {n}: clock {clock} used before its snapshot")
            s["clocks"][clock] += p.timestamp
            t = s["clocks"][clock]
        else:
            t = p.timestamp
        if clock is not None and clock >= 64 and t < s.get("last", 0):
            fail(f"packet {n}: time goes back on sequence {seq_id}")
        s["last"] = max(t, s.get("last", 0))
        track = e.track_uuid if e.HasField("track_uuid") else s["track"]
        if track not in tracks or track == 0:
            fail(f"packet {n}: event on undescribed track {track}")

        def interned(table, iid, what):
            if iid not in s[table]:
                fail(f"packet {n}: {what} id {iid} not defined on sequence {seq_id}")
            return s[table][iid]

        name = e.name if e.HasField("name") else (interned("names", e.name_iid, "name") if e.HasField("name_iid") else None)
        args = {}
        def value(a):
            # Nested annotations (decoded payload fields): dicts and arrays.
            if a.dict_entries:
                return {
                    d.name if d.HasField("name") else interned("ann", d.name_iid, "annotation name"): value(d)
                    for d in a.dict_entries
                }
            if a.array_values:
                return [value(v) for v in a.array_values]
            kind = a.WhichOneof("value")
            if kind is None:
                return None
            return interned("strings", a.string_value_iid, "string") if kind == "string_value_iid" else getattr(a, kind)

        for a in e.debug_annotations:
            key = interned("ann", a.name_iid, "annotation name")
            args[key] = value(a)
        desc = tracks[track]
        for flow in e.flow_ids:
            flow_starts.setdefault(flow, t)
        for flow in e.terminating_flow_ids:
            flow_ends.setdefault(flow, []).append(t)
        if e.type == TE.TYPE_SLICE_BEGIN:
            open_slices.setdefault(track, []).append((name, t, args, list(e.terminating_flow_ids)))
        elif e.type == TE.TYPE_SLICE_END:
            stack = open_slices.get(track)
            if not stack:
                fail(f"packet {n}: slice end with no begin on track {track}")
            name, start, begin_args, ends = stack.pop()
            # The end's arguments are merged into the slice's.
            events.append(("slice", track, name, start, t, {**begin_args, **args}, ends))
        elif e.type == TE.TYPE_COUNTER:
            if not desc.HasField("counter"):
                fail(f"packet {n}: counter value on track {track}, not a counter track")
            value = e.counter_value if e.HasField("counter_value") else e.double_counter_value
            events.append(("counter", track, desc.name, t, t, {"value": value}, []))
        elif e.type == TE.TYPE_INSTANT:
            if list(e.categories) == ["flow"]:
                events.append(("flow", track, name, t, t, {"flow_ids": list(e.flow_ids), "terminating": list(e.terminating_flow_ids)}, []))
            else:
                events.append(("instant", track, name, t, t, args, []))
        else:
            fail(f"packet {n}: unexpected event type {e.type}")
    for track, stack in open_slices.items():
        if stack:
            fail(f"track {track}: {len(stack)} slices never ended")
    for flow, times in flow_ends.items():
        if flow not in flow_starts:
            fail(f"flow {flow} ended, never started")
        if len(times) > 1:
            fail(f"flow {flow} ended {len(times)} times (an arrow to the first only)")
        if times[0] < flow_starts[flow]:
            fail(f"flow {flow} ends before it starts")

    def thread_of(track):
        d = tracks[track]
        while d is not None and not d.HasField("thread") and d.HasField("parent_uuid"):
            d = tracks[d.parent_uuid]
        return d.thread if d is not None and d.HasField("thread") else None

    def process_of(track):
        d = tracks[track]
        while d is not None and not d.HasField("process"):
            d = tracks.get(d.parent_uuid) if d.HasField("parent_uuid") else None
        return d

    for d in tracks.values():
        if d is not None and d.HasField("process"):
            print(json.dumps({"process": d.process.pid, "name": d.process.process_name, "labels": list(d.process.process_labels), "rank": d.sibling_order_rank if d.HasField("sibling_order_rank") else None}))
        if d is not None and d.HasField("thread"):
            print(json.dumps({"thread": d.thread.tid, "pid": d.thread.pid, "name": d.thread.thread_name}))
    for kind, track, name, start, end, args, ends in events:
        thread = thread_of(track)
        process = process_of(track)
        args = dict(args)
        if kind not in ("flow", "counter"):
            args.setdefault("domain", "(default)")
        print(json.dumps({
            "kind": kind,
            "name": name,
            "pid": process.process.pid,
            "tid": thread.tid if thread is not None else None,
            "start": start - origin,
            "end": end - origin,
            "args": args,
            **({"flow_ends": ends} if ends else {}),
        }))


if __name__ == "__main__":
    main(sys.argv[1])
