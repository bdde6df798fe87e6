"""nvtxr.writer's numbers, stream options, errors and the checks every
part of it makes (dtypes of counters and event schemas, batches of rows).
"""

import enum
import struct

from nvtxr import _payloads
from nvtxr._enums import (
    EntryKind,
    EventKind,
    PayloadEntryType,
)

try:
    import numpy as np
except ImportError:  # counters beyond int and float, and events by dtype, need NumPy
    np = None

try:
    import pandas as pd
except ImportError:
    pd = None


# NVTXW's numbers (nvtxw3.h), and NVTX's it uses.
_SUCCESS, _SYMBOL_MISSING = 0, 5
_RESULT_MESSAGES = {
    0: "success",
    1: "failed",
    2: "invalid argument",
    3: "library not found",
    4: "library load failed",
    5: "library symbol missing",
    6: "interface version not supported",
    7: "not supported by this backend",
}
_SCOPE_STATIC_START, _SCOPE_DYNAMIC_START = 1 << 24, 1 << 32
_EVENT_SCHEMAS = (
    "mark_utf8",
    "mark_reg",
    "pushpop_utf8",
    "pushpop_reg",
    "startend_utf8",
    "startend_reg",
    "push_utf8",
    "push_reg",
    "pop",
    "start_utf8",
    "start_reg",
    "end",
    "message",
)


class StreamInterleaving(enum.Enum):
    """Whether ordering guarantees apply across the whole stream or per scope."""

    NONE = 0
    SCOPE = 1


class StreamOrdering(enum.Enum):
    """How fully events are sorted in the stream."""

    UNKNOWN = 0
    STRICT = 1
    PACKED_RANGE_START = 2
    PACKED_RANGE_END = 3


class StreamSkid(enum.Enum):
    """How partial-sort "skid" is quantified (paired with ``skid_amount``)."""

    NONE = 0
    TIME_NS = 1
    EVENT_COUNT = 2


class WriterError(Exception):
    """Raised when an NVTXW backend call returns a non-success result code.

    ``result_code`` is the ``NVTXW_RESULT_*`` code, ``operation`` the
    backend call that failed (or None)."""

    def __init__(self, result_code, operation=None):
        self.result_code = result_code
        self.operation = operation
        message = _RESULT_MESSAGES.get(result_code, "unknown error")
        if operation:
            message = f"{operation} failed: {message} (code {result_code})"
        super().__init__(message)


def _check(rc, operation):
    if rc != _SUCCESS:
        raise WriterError(rc, operation)


def _as_bytes(s):
    if s is None or isinstance(s, bytes):
        return s
    if isinstance(s, str):
        return s.encode("utf-8")
    raise TypeError("expected a str or bytes")


def _as_str(s):
    if s is None or isinstance(s, str):
        return s
    if isinstance(s, bytes):
        return s.decode("utf-8")
    raise TypeError("expected a str or bytes")




def _validate_counter_layout(dtype):
    """Refuses event roles in a counter layout; the name of its embedded
    ``EntryKind.COUNTER_TIMESTAMP`` field, or None."""
    if dtype is int or dtype is float:
        return None
    if dtype.subdtype is not None:
        raise TypeError("Top-level fixed-size array counter dtypes are not supported.")
    _validate_native_byte_order(dtype, "a counter layout")
    if dtype.fields is None:
        return None
    timestamps = []
    for name in dtype.names:
        kind = getattr(_payloads._metadata(dtype.fields[name][0]), "entry_kind", None)
        if kind is None:
            continue
        if kind is EntryKind.COUNTER_TIMESTAMP:
            timestamps.append(name)
        else:
            raise ValueError(f"EntryKind.{kind.name} is not valid in a counter layout (field {name!r})")
    if len(timestamps) > 1:
        raise ValueError("a counter layout may embed at most one EntryKind.COUNTER_TIMESTAMP field")
    return timestamps[0] if timestamps else None


def _validate_native_byte_order(dt, operation):
    if dt.subdtype is not None:
        _validate_native_byte_order(dt.subdtype[0], operation)
    elif dt.fields is not None:
        for name in dt.names:
            _validate_native_byte_order(dt.fields[name][0], operation)
    elif not dt.isnative:
        raise TypeError(f"{operation} requires native byte order; got dtype {dt}")


_ROLES = (EntryKind.RANGE_BEGIN, EntryKind.RANGE_END, EntryKind.MARK, EntryKind.COUNTER_TIMESTAMP)


def _validate_event_dtype(kind, dt, operation):
    """The static layout and timestamp roles of an event dtype, as NVIDIA checks them."""
    if dt.fields is None:
        raise TypeError(f"{operation} requires a structured dtype")
    _validate_native_byte_order(dt, operation)
    roles = {role: [] for role in _ROLES}
    range_ids = []
    for name in dt.names:
        field = dt.fields[name][0]
        if field.hasobject:
            raise TypeError(
                f"{operation} requires fields with self-contained, "
                f"fixed-width storage; field {name!r} uses managed storage"
            )
        md = _payloads._metadata(field)
        role = getattr(md, "entry_kind", None)
        entry_type = getattr(md, "entry_type", None)
        if entry_type is PayloadEntryType.RANGE_ID:
            range_ids.append(name)
        if role in roles:
            if entry_type is not None:
                raise ValueError(
                    f"{operation} field {name!r} cannot combine the "
                    f"EntryKind.{role.name} timestamp role with "
                    f"PayloadEntryType.{entry_type.name}"
                )
            roles[role].append(name)
    if kind is EventKind.MARK:
        required = (EntryKind.MARK,)
    elif kind in (EventKind.RANGE_PUSH, EventKind.RANGE_START):
        required = (EntryKind.RANGE_BEGIN,)
    elif kind in (EventKind.RANGE_POP, EventKind.RANGE_END):
        required = (EntryKind.RANGE_END,)
    else:
        required = (EntryKind.RANGE_BEGIN, EntryKind.RANGE_END)
    for role, fields in roles.items():
        expected = 1 if role in required else 0
        if len(fields) != expected:
            if expected:
                raise ValueError(
                    f"{operation} dtype for {kind!s} must contain exactly one EntryKind.{role.name} field"
                )
            raise ValueError(f"EntryKind.{role.name} is not valid for {kind!s}")
    expected = 1 if kind in (EventKind.RANGE_START, EventKind.RANGE_END) else 0
    if len(range_ids) != expected:
        if expected:
            raise ValueError(
                f"{operation} dtype for {kind!s} must contain exactly one PayloadEntryType.RANGE_ID field"
            )
        raise ValueError(f"PayloadEntryType.RANGE_ID is not valid for {kind!s}")


def _batch_rows(data, dt):
    """Batch data as a flat, contiguous array of ``dt`` rows."""
    if isinstance(data, np.ndarray):
        if data.ndim != 1:
            raise ValueError("batch data must be one-dimensional")
        return np.ascontiguousarray(data, dtype=dt)
    if pd is not None and isinstance(data, pd.DataFrame):
        rows = np.empty(len(data), dtype=dt)
        for name in dt.names:
            try:
                column = data[name]
            except KeyError:
                raise ValueError(f"batch data is missing a column for dtype field {name!r}")
            rows[name] = column.to_numpy(copy=False)
        return rows
    return np.fromiter(data, dtype=dt)


_COMPLETE = (EventKind.MARK, EventKind.RANGE_PUSHPOP, EventKind.RANGE_STARTEND)

# The event helpers' payloads (nvtxw3_event_helpers.h): the timestamps (and
# range id) first, then color and category, then a registered string's
# handle; a UTF-8 message goes as a second payload, its bytes alone.
_AT = (struct.Struct("=qII"), struct.Struct("=qIIQ"))
_SPAN = (struct.Struct("=qqII"), struct.Struct("=qqIIQ"))
_ID_AT = (struct.Struct("=QqII"), struct.Struct("=QqIIQ"))
_TIME = struct.Struct("=q")
_ID_TIME = struct.Struct("=Qq")


