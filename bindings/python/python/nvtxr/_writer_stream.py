"""nvtxr.writer's streams: events written through an NVTXW backend.
"""

import struct

from nvtxr import _native, _payloads
from nvtxr._enums import (
    BatchOrdering,
    PredefinedScope,
    TimestampType,
)
from nvtxr.counters import CounterNoValueReason

try:
    import numpy as np
except ImportError:  # counters beyond int and float, and events by dtype, need NumPy
    np = None

from nvtxr._writer_base import _AT, _COMPLETE, _ID_AT, _ID_TIME, _SPAN, _TIME, _as_bytes, _check, _batch_rows
from nvtxr._writer_domain import Counter, RegisteredString, Schema, _resolve_category, _resolve_scope_id


class Stream:
    """An NVTXW stream: what events and counter samples are written to
    (:meth:`Session.create_stream`). A context manager, or call
    :meth:`open` and :meth:`close`."""

    def __init__(self, session, name, domain, scope, time_domain_id, interleaving, ordering, skid, skid_amount):
        if domain._session is not session:
            raise RuntimeError(
                f"domain '{domain}' is not registered in this session. "
                "Do not construct streams directly; use Session.create_stream()."
            )
        self._session = session
        self._backend = session._backend
        self._domain = domain
        self._name = _as_bytes(name)
        if isinstance(scope, PredefinedScope) and scope not in (PredefinedScope.NONE, PredefinedScope.ROOT):
            raise ValueError("runtime-resolved scopes are not valid as stream defaults")
        self._scope_id = _resolve_scope_id(domain, scope)
        if isinstance(time_domain_id, TimestampType):
            time_domain_id = time_domain_id.value
        self._time_domain_id = time_domain_id
        self._layout = (interleaving.value, ordering.value, skid.value, skid_amount)
        self._handle = 0

    def open(self):
        """Opens the stream for writing."""
        with self._session._lock:
            if self._handle:
                raise RuntimeError("stream is already open")
            if not self._session._handle:
                raise RuntimeError("session is not active")
            self._domain._ensure_valid()
            rc, handle = self._backend._native.stream_open(
                self._session._handle,
                self._name,
                self._domain._handle,
                self._scope_id,
                self._time_domain_id,
                *self._layout,
            )
            _check(rc, "StreamOpen")
            self._handle = handle
            self._session._open_streams[self] = None

    def close(self):
        """Closes the stream, not its session."""
        with self._session._lock:
            if not self._handle:
                raise RuntimeError("stream is not open")
            self._backend._ensure_open()
            handle, self._handle = self._handle, 0
            self._session._open_streams.pop(self, None)
            _check(self._backend._native.stream_close(handle), "StreamClose")

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *_):
        with self._session._lock:
            if self._handle:
                self.close()

    def _ensure_writable(self):
        if not self._handle:
            raise RuntimeError("stream is not open")
        self._backend._ensure_open()

    def _write(self, payloads, operation):
        _check(self._backend._native.event_write(self._handle, payloads), operation)

    def _event(self, name, fixed, layouts, operation, message, color, category):
        """One helper event (``nvtxw<operation>Write`` or ``...WriteUtf8``):
        ``fixed`` its leading fields (times, range id), ``layouts`` its
        payload's with a UTF-8 message and with a registered string."""
        self._ensure_writable()
        ids = self._domain._event_schema_ids()
        color = _native._nvtxw_color(color)
        category = _resolve_category(self._domain, category)
        if message is None:
            message = b""
        if isinstance(message, RegisteredString):
            if message._domain is not self._domain:
                raise ValueError("message is a RegisteredString from a different domain")
            payload = layouts[1].pack(*fixed, color, category, message._handle)
            self._write([(ids[name + "_reg"], payload)], f"nvtxw{operation}Write")
        elif isinstance(message, (str, bytes)):
            # The message's bytes are the second payload; an empty one is a NUL.
            text = _as_bytes(message) or b"\0"
            header = layouts[0].pack(*fixed, color, category)
            self._write(
                [(ids[name + "_utf8"], header), (ids["message"], text)],
                f"nvtxw{operation}WriteUtf8",
            )
        else:
            raise TypeError("message must be a str, bytes, RegisteredString, or None")

    def write_mark(self, timestamp, *, message=None, color=None, category=None):
        """A mark at ``timestamp`` (the stream's time domain)."""
        self._event("mark", (timestamp,), _AT, "Mark", message, color, category)

    def write_pushpop(self, start, end, *, message=None, color=None, category=None):
        """A complete push/pop range."""
        self._event("pushpop", (start, end), _SPAN, "RangePushPop", message, color, category)

    def write_startend(self, start, end, *, message=None, color=None, category=None):
        """A complete start/end range."""
        self._event("startend", (start, end), _SPAN, "RangeStartEnd", message, color, category)

    def write_push(self, timestamp, *, message=None, color=None, category=None):
        """The beginning of a push/pop range (they pair last in, first out)."""
        self._event("push", (timestamp,), _AT, "RangePush", message, color, category)

    def write_pop(self, timestamp):
        """The end of the most recently pushed range."""
        self._ensure_writable()
        ids = self._domain._event_schema_ids()
        self._write([(ids["pop"], _TIME.pack(timestamp))], "nvtxwRangePopWrite")

    def write_start(self, timestamp, range_id, *, message=None, color=None, category=None):
        """The beginning of a start/end range, ended by :meth:`write_end`
        with the same nonzero ``range_id``."""
        if range_id == 0:
            raise ValueError("range_id must be non-zero")
        self._event("start", (range_id, timestamp), _ID_AT, "RangeStart", message, color, category)

    def write_end(self, timestamp, range_id):
        """The end of the start/end range ``range_id``."""
        if range_id == 0:
            raise ValueError("range_id must be non-zero")
        self._ensure_writable()
        ids = self._domain._event_schema_ids()
        self._write([(ids["end"], _ID_TIME.pack(range_id, timestamp))], "nvtxwRangeEndWrite")

    def write_event(self, schema, row):
        """One event of an event schema (:meth:`Domain.get_schema` with a
        ``kind``): ``row``, one row of its dtype."""
        if not isinstance(schema, Schema):
            raise TypeError("schema must be an nvtx.writer.Schema")
        if schema._domain is not self._domain:
            raise ValueError("schema is not registered in this stream's domain")
        if schema._kind is None:
            raise ValueError("write_event requires an event schema; pass kind= to Domain.get_schema")
        self._ensure_writable()
        payload = np.ascontiguousarray(row, schema._dtype)
        if payload.size != 1:
            raise ValueError(f"write_event expects one row of dtype {schema._dtype}; got {payload.size}")
        self._write([(schema._schema_id, payload.tobytes())], "EventWrite")

    def write_event_batch(self, schema, rows, *, ordering=BatchOrdering.SORTED):
        """Complete events (mark, push/pop or start/end schemas): a NumPy
        array, a pandas DataFrame (columns by field name) or an iterable of rows."""
        if not isinstance(ordering, BatchOrdering):
            raise TypeError("ordering must be an nvtx.BatchOrdering")
        if not isinstance(schema, Schema):
            raise TypeError("schema must be an nvtx.writer.Schema")
        if schema._domain is not self._domain:
            raise ValueError("schema is not registered in this stream's domain")
        if schema._kind not in _COMPLETE:
            raise ValueError(
                "write_event_batch accepts only complete-event schemas; "
                "pass kind=EventKind.MARK, EventKind.RANGE_PUSHPOP, or "
                "EventKind.RANGE_STARTEND to Domain.get_schema"
            )
        self._ensure_writable()
        events = _batch_rows(rows, schema._dtype)
        if events.size == 0:
            raise ValueError("batch rows must contain at least one event")
        _check(
            self._backend._native.event_batch_write(
                self._handle, schema._schema_id, events.tobytes(), self._scope_id, ordering.value
            ),
            "EventBatchWrite",
        )

    def _ensure_counter(self, counter):
        if not isinstance(counter, Counter):
            raise TypeError("counter must be an nvtx.writer.Counter")
        if counter._domain is not self._domain:
            raise ValueError("counter is not registered in this stream's domain")

    def write_counter_sample(self, counter, timestamp, value):
        """One sample of ``counter`` (for a group: one row of its fields)."""
        self._ensure_counter(counter)
        self._ensure_writable()
        if counter._timestamp_field is not None:
            raise ValueError(
                "write_counter_sample does not support a counter layout that "
                "embeds an EntryKind.COUNTER_TIMESTAMP field; use "
                "write_counter_batch instead"
            )
        if counter._schema_id == _payloads._INT64:
            data = struct.pack("=q", value)
        elif counter._schema_id == _payloads._FLOAT64:
            data = struct.pack("=d", value)
        else:
            payload = np.ascontiguousarray(value, counter._dtype)
            if payload.size != 1:
                raise ValueError(
                    f"write_counter_sample expects one sample of dtype {counter._dtype}; got {payload.size}"
                )
            data = payload.tobytes()
        _check(
            self._backend._native.counter_write(self._handle, timestamp, counter._counter_id, data),
            "CounterWrite",
        )

    def write_counter_sample_no_value(self, counter, timestamp, reason):
        """A sample of ``counter`` with no value, for ``reason`` (a CounterNoValueReason)."""
        self._ensure_counter(counter)
        if not isinstance(reason, CounterNoValueReason):
            raise TypeError("reason must be an nvtx.CounterNoValueReason")
        self._ensure_writable()
        _check(
            self._backend._native.counter_no_value_write(
                self._handle, timestamp, counter._counter_id, reason.value
            ),
            "CounterNoValueWrite",
        )

    def write_counter_batch(self, counter, data, *, timestamps=None, ordering=BatchOrdering.SORTED):
        """Samples of ``counter`` taken earlier, with one timestamp each in
        ``timestamps``, or in the layout's COUNTER_TIMESTAMP field (then no
        ``timestamps``)."""
        if not isinstance(ordering, BatchOrdering):
            raise TypeError("ordering must be an nvtx.BatchOrdering")
        self._ensure_counter(counter)
        self._ensure_writable()
        if np is None:
            raise RuntimeError("Install numpy to use write_counter_batch.")
        dt = counter._dtype
        if counter._timestamp_field is not None:
            if timestamps is not None:
                raise ValueError(
                    "timestamps is mutually exclusive with a counter layout "
                    "that embeds an EntryKind.COUNTER_TIMESTAMP field"
                )
        elif timestamps is None:
            raise ValueError(
                "write_counter_batch requires timestamps unless the counter "
                "layout embeds an EntryKind.COUNTER_TIMESTAMP field"
            )
        if dt is int or dt is float:
            dt = np.dtype(np.int64 if dt is int else np.float64)
        if dt.fields is not None:
            samples = _batch_rows(data, dt)
        else:
            if isinstance(data, np.ndarray):
                samples = np.ascontiguousarray(data, dt)
            else:
                samples = np.fromiter(data, dtype=dt)
            if samples.ndim != 1:
                raise ValueError("batch data must be one-dimensional")
        if samples.size == 0:
            raise ValueError("batch data must contain at least one sample")
        times = None
        if timestamps is not None:
            if isinstance(timestamps, np.ndarray):
                times = np.ascontiguousarray(timestamps, dtype=np.int64)
            else:
                times = np.fromiter(timestamps, dtype=np.int64)
            if times.ndim != 1:
                raise ValueError("timestamps must be one-dimensional")
            if times.size != samples.size:
                raise ValueError("data and timestamps must have the same length")
            times = times.tobytes()
        _check(
            self._backend._native.counter_batch_write(
                self._handle, counter._counter_id, samples.tobytes(), times, ordering.value
            ),
            "CounterBatchWrite",
        )

