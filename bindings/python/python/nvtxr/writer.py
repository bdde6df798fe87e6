"""Write pre-collected trace data through an NVTXW backend: NVIDIA's
``nvtx.writer``, with the same classes, arguments, errors and calls.

Regular nvtxr calls annotate work as it runs. This module instead hands
events and counter samples with explicit timestamps to a writer backend
(NVIDIA's NVTX Writer API, ``nvtxw3.h``), a library that decides where the
data goes: Nsight Systems ships one (``nsys_writer``). Load it with
:func:`load_backend`, open a :class:`Session`, get a :class:`Domain` and a
:class:`Stream`, and write::

    backend = nvtxr.writer.load_backend("/path/to/libbackend.so")
    with nvtxr.writer.Session("run", backend=backend) as session:
        with session.create_stream("main", domain="train") as stream:
            stream.write_pushpop(1_000, 2_000, message="step", color="green")

Each backend call is made as NVIDIA's package makes it (the event helpers'
schemas registered once per domain at its first event, categories named on
first use), so a backend sees the same calls from either package.
"""

import enum
import itertools
import os
import struct
import threading
from pathlib import Path

from nvtxr import _native, _payloads
from nvtxr._enums import (
    BatchOrdering,
    EntryKind,
    EventKind,
    PayloadEntryType,
    PredefinedScope,
    TimestampType,
)
from nvtxr.counters import CounterNoValueReason, counter_dtype

__all__ = [
    "Backend",
    "Counter",
    "Domain",
    "PredefinedScope",
    "RegisteredString",
    "Schema",
    "Scope",
    "Session",
    "Stream",
    "StreamInterleaving",
    "StreamOrdering",
    "StreamSkid",
    "WriterError",
    "load_backend",
]

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


# Backends by their library's canonical path: one module per library, shared
# by every Backend loaded from it, finalized when the last is closed.
_MODULES = {}
_MODULES_LOCK = threading.RLock()


class _Module:
    """One backend library, loaded until the process exits."""

    def __init__(self, native):
        self.native = native
        self.refcount = 0

    def initialize(self):
        rc = self.native.get_interface()
        if rc == _SYMBOL_MISSING:
            raise WriterError(rc, "load_backend")
        _check(rc, "nvtxwGetInterface")

    def finalize(self):
        self.native.finalize()

    def release(self):
        with _MODULES_LOCK:
            if self.refcount <= 0:
                raise RuntimeError("backend module reference count underflow")
            self.refcount -= 1
            if self.refcount == 0:
                self.finalize()


def load_backend(path):
    """Loads and initializes the NVTXW backend at ``path`` (a library).

    Raises OSError if the library cannot be loaded, WriterError if it does
    not export ``nvtxwGetInterface`` or lacks this interface version."""
    canonical = os.path.normcase(os.fspath(Path(os.fsdecode(path)).expanduser().resolve()))
    with _MODULES_LOCK:
        module = _MODULES.get(canonical)
        if module is None:
            module = _MODULES[canonical] = _Module(_native._nvtxw_load(canonical))
        if module.refcount == 0:
            try:
                module.initialize()
            except Exception:
                module.finalize()
                raise
        module.refcount += 1
        return Backend(module)


class Backend:
    """A loaded NVTXW backend. Do not construct directly: use :func:`load_backend`."""

    def __init__(self, module):
        if not isinstance(module, _Module):
            raise ValueError(
                "module must be a loaded backend module; "
                "use nvtx.writer.load_backend to create a Backend"
            )
        self._module = module
        self._native = module.native
        self._lock = threading.RLock()
        self._active_sessions = set()

    def _ensure_open(self):
        if self._native is None:
            raise RuntimeError("backend is closed")

    def close(self):
        """Ends the active sessions (and their streams), then releases the
        backend: the last one closed of a library finalizes it. Optional;
        more than once does nothing."""
        error = None
        with self._lock:
            if self._module is None:
                return
            for session in list(self._active_sessions):
                try:
                    session.end()
                except Exception as exc:
                    if error is None:
                        error = exc
            if error is None:
                module = self._module
                self._native = None
                self._module = None
        if error is not None:
            raise error
        module.release()


class Session:
    """An NVTXW session: the container data is written into. A context
    manager, or call :meth:`begin` and :meth:`end`.

    ``config``: backend options, ``key=value`` per line."""

    def __init__(self, name, *, backend, config=None):
        if not isinstance(backend, Backend):
            raise TypeError("backend must be an nvtx.writer.Backend")
        self._backend = backend
        self._name = _as_bytes(name)
        self._config = _as_bytes(config)
        self._handle = 0
        self._lock = threading.RLock()
        # Closed in the order they were opened when the session ends.
        self._open_streams = {}
        self._domains = {}

    def begin(self):
        """Starts the session."""
        with self._backend._lock, self._lock:
            if self._handle:
                raise RuntimeError("session is already active")
            self._backend._ensure_open()
            self._backend._active_sessions.add(self)
            rc, handle = self._backend._native.session_begin(self._name, self._config)
            if rc != _SUCCESS:
                self._backend._active_sessions.discard(self)
                raise WriterError(rc, "SessionBegin")
            self._handle = handle

    def end(self):
        """Ends the session, closing its open streams first; its domains,
        streams, strings, scopes and counters become invalid."""
        error = None
        with self._backend._lock, self._lock:
            if not self._handle:
                raise RuntimeError("session is not active")
            self._backend._ensure_open()
            for stream in list(self._open_streams):
                try:
                    stream.close()
                except Exception as exc:
                    if error is None:
                        error = exc
            self._open_streams.clear()
            handle, self._handle = self._handle, 0
            for domain in self._domains.values():
                domain._valid = False
            self._domains.clear()
            self._backend._active_sessions.discard(self)
            rc = self._backend._native.session_end(handle)
            if rc != _SUCCESS:
                raise WriterError(rc, "SessionEnd") from error
        if error is not None:
            raise error

    def get_domain(self, name=None):
        """The domain ``name`` of this session (None or empty: its default
        domain), registered on first use."""
        with self._lock:
            if not self._handle:
                raise RuntimeError("session is not active")
            name = _as_str(name) or None
            domain = self._domains.get(name)
            if domain is None:
                self._backend._ensure_open()
                rc, handle = self._backend._native.domain_register(self._handle, _as_bytes(name))
                _check(rc, "DomainRegister")
                domain = self._domains[name] = Domain(self, handle)
            return domain

    def create_stream(
        self,
        name,
        *,
        domain=None,
        scope=None,
        time_domain_id=0,
        interleaving=StreamInterleaving.NONE,
        ordering=StreamOrdering.UNKNOWN,
        skid=StreamSkid.NONE,
        skid_amount=0,
    ):
        """A stream of this session, configured, not opened: use it as a
        context manager or call :meth:`Stream.open`. ``domain``: a Domain
        or a name (None: the default domain)."""
        if not isinstance(interleaving, StreamInterleaving):
            raise TypeError("interleaving must be an nvtx.writer.StreamInterleaving")
        if not isinstance(ordering, StreamOrdering):
            raise TypeError("ordering must be an nvtx.writer.StreamOrdering")
        if not isinstance(skid, StreamSkid):
            raise TypeError("skid must be an nvtx.writer.StreamSkid")
        if not isinstance(time_domain_id, (TimestampType, int)):
            raise TypeError("time_domain_id must be an nvtx.TimestampType or an int")
        with self._lock:
            if not self._handle:
                raise RuntimeError("session is not active")
            if not isinstance(domain, Domain):
                domain = self.get_domain(domain)
            elif domain._session is not self:
                raise ValueError("domain belongs to a different session")
            else:
                domain._ensure_valid()
            return Stream(
                self, name, domain, scope, time_domain_id, interleaving, ordering, skid, skid_amount
            )

    def __enter__(self):
        self.begin()
        return self

    def __exit__(self, *_):
        with self._backend._lock, self._lock:
            if self._handle:
                self.end()


class RegisteredString:
    """A string registered in a domain (:meth:`Domain.get_registered_string`):
    a message, or the value of a ``PayloadEntryType.REGISTERED_STRING`` field."""

    def __init__(self, domain, string, handle):
        self._domain = domain
        self._string = string
        self._handle = handle

    def __repr__(self):
        return f"RegisteredString({self._string!r})"

    @property
    def handle(self):
        return self._handle


class Scope:
    """A registered scope (:meth:`Domain.get_scope`)."""

    def __init__(self, scope_id, path=None, domain=None):
        self._scope_id = scope_id
        self._path = path
        self._domain = domain

    def __repr__(self):
        return f"Scope(scope_id={self._scope_id}, path={self._path!r})"

    @property
    def scope_id(self):
        return self._scope_id

    @property
    def path(self):
        return self._path


class Counter:
    """A counter or counter group of a domain (:meth:`Domain.get_counter`)."""

    def __init__(self, domain, name, dtype, description, semantics, scope_id, counter_id, schema_id, timestamp_field):
        self._domain = domain
        self._name = name
        self._dtype = dtype
        self._description = description
        self._semantics = semantics
        self._scope_id = scope_id
        self._counter_id = counter_id
        self._schema_id = schema_id
        self._timestamp_field = timestamp_field

    def __repr__(self):
        return f"Counter({self._name!r}, counter_id={self._counter_id})"

    counter_id = property(lambda self: self._counter_id)
    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    description = property(lambda self: self._description)
    semantics = property(lambda self: self._semantics)


class Schema:
    """A payload schema of a domain (:meth:`Domain.get_schema`)."""

    def __init__(self, domain, schema_id, dtype, kind):
        self._domain = domain
        self._schema_id = schema_id
        self._dtype = dtype
        self._kind = kind

    def __repr__(self):
        return f"Schema(schema_id={self._schema_id}, kind={self._kind}, dtype={self._dtype})"

    schema_id = property(lambda self: self._schema_id)
    dtype = property(lambda self: self._dtype)
    kind = property(lambda self: self._kind)


def _normalize_dtype(dtype):
    if np is None:
        raise RuntimeError("Install numpy to construct NVTX NumPy dtypes.")
    return _payloads.numpy_dtype(dtype)


class Domain:
    """A session's NVTX domain (:meth:`Session.get_domain`), valid until the
    session ends."""

    def __init__(self, session, handle):
        self._session = session
        self._backend = session._backend
        self._handle = handle
        self._valid = True
        self._strings = {}
        self._scopes = {}
        self._categories = {}
        # 0 is "no category": named categories count from 1, skipping the
        # integers already passed as categories.
        self._category_ids = itertools.count(1)
        self._user_category_ids = set()
        self._schemas = {}
        self._counters = {}
        self._event_schemas = None
        self._registrar = _payloads._Schemas(self)

    def _ensure_valid(self):
        if not self._valid:
            raise RuntimeError("domain is no longer valid: its owning session has ended")

    def _register_schema(self, kind, static_size, entries, flags, semantics):
        """For ``nvtxr._payloads``: registers one schema with the backend."""
        self._backend._ensure_open()
        rc, schema_id = self._backend._native.schema_register(
            self._handle, kind, static_size, entries, flags, semantics
        )
        _check(rc, "SchemaRegister")
        return schema_id

    def _event_schema_ids(self):
        with self._session._lock:
            self._ensure_valid()
            if self._event_schemas is None:
                rc, ids = self._backend._native.event_schemas_register(self._handle)
                _check(rc, "nvtxwEventSchemasRegister")
                self._event_schemas = dict(zip(_EVENT_SCHEMAS, ids))
            return self._event_schemas

    def get_registered_string(self, string):
        """``string`` registered in this domain, once (str and bytes alike)."""
        if not isinstance(string, (str, bytes)):
            raise TypeError("string must be a str or bytes")
        with self._session._lock:
            self._ensure_valid()
            string = _as_str(string)
            found = self._strings.get(string)
            if found is None:
                rc, handle = self._backend._native.string_register(self._handle, _as_bytes(string))
                _check(rc, "StringRegister")
                found = self._strings[string] = RegisteredString(self, string, handle)
            return found

    def get_category_id(self, name):
        """The id of category ``name`` in this domain, named on first use."""
        if not isinstance(name, (str, bytes)):
            raise TypeError("category name must be a str or bytes")
        self._ensure_valid()
        name = _as_str(name)
        with self._session._lock:
            self._ensure_valid()
            found = self._categories.get(name)
            if found is not None:
                return found
            category_id = next(self._category_ids)
            while category_id in self._user_category_ids:
                category_id = next(self._category_ids)
            rc = self._backend._native.category_register(self._handle, category_id, _as_bytes(name))
            _check(rc, "CategoryRegister")
            self._categories[name] = category_id
            return category_id

    def get_scope(self, path, *, parent=None):
        """The scope at ``path`` under ``parent`` (None: the domain's root;
        a Scope of this domain, or PredefinedScope NONE, ROOT,
        CURRENT_HW_MACHINE or CURRENT_VM), registered once."""
        if parent is None:
            parent_id = PredefinedScope.ROOT.value
        elif isinstance(parent, PredefinedScope):
            if parent not in (
                PredefinedScope.NONE,
                PredefinedScope.ROOT,
                PredefinedScope.CURRENT_HW_MACHINE,
                PredefinedScope.CURRENT_VM,
            ):
                raise ValueError(
                    "predefined parent scope must be NONE, ROOT, CURRENT_HW_MACHINE, or CURRENT_VM"
                )
            parent_id = parent.value
        elif isinstance(parent, Scope):
            if parent._domain is not self:
                raise ValueError("parent scope is registered in a different domain")
            parent_id = parent._scope_id
        else:
            raise TypeError("parent must be a PredefinedScope, a Scope, or None")
        with self._session._lock:
            self._ensure_valid()
            path = _as_str(path)
            key = (path, parent_id)
            found = self._scopes.get(key)
            if found is None:
                rc, scope_id = self._backend._native.scope_register(
                    self._handle, _as_bytes(path), parent_id
                )
                _check(rc, "ScopeRegister")
                found = self._scopes[key] = Scope(scope_id, path, self)
            return found

    def get_schema(self, dtype, *, kind=None):
        """The payload schema of NumPy ``dtype`` in this domain; with an
        EventKind ``kind``, an event schema for :meth:`Stream.write_event`
        (its fields' roles given by ``nvtx.numpy_dtype(entry_kind=...)``)."""
        if kind is not None and not isinstance(kind, EventKind):
            raise TypeError("kind must be an nvtx.EventKind or None")
        with self._session._lock:
            self._ensure_valid()
            dt = _normalize_dtype(dtype)
            key = (_payloads._key(dt), None if kind is None else kind.value)
            schema = self._schemas.get(key)
            if schema is None:
                if kind is None:
                    schema_id = self._registrar.dtype(dt)
                else:
                    _validate_event_dtype(kind, dt, "an event schema")
                    schema_id = self._registrar.flat(dt, kind.value)
                schema = self._schemas[key] = Schema(self, schema_id, dt, kind)
            return schema

    def get_counter(self, name, dtype, *, description=None, scope=None, semantics=None):
        """The counter ``name`` of this domain, registered once: ``int``,
        ``float`` or a NumPy dtype (a structured one: a counter group, at
        most one field ``EntryKind.COUNTER_TIMESTAMP``)."""
        dtype = counter_dtype(dtype)
        with self._session._lock:
            self._ensure_valid()
            scope_id = _resolve_scope_id(self, scope)
            key = (_as_str(name), dtype if dtype in (int, float) else _payloads._key(dtype),
                   _as_str(description), scope_id, semantics)
            counter = self._counters.get(key)
            if counter is None:
                counter = self._counters[key] = self._register_counter(
                    _as_str(name), dtype, _as_str(description), scope_id, semantics
                )
            return counter

    def _register_counter(self, name, dtype, description, scope_id, semantics):
        timestamp_field = _validate_counter_layout(dtype)
        if dtype is int or (dtype is not float and dtype.fields is None and dtype.subdtype is None
                            and dtype.kind == "i" and dtype.itemsize == 8):
            schema_id = _payloads._INT64
        elif dtype is float or (dtype.fields is None and dtype.subdtype is None
                                and dtype.kind == "f" and dtype.itemsize == 8):
            schema_id = _payloads._FLOAT64
        elif dtype.fields is not None:
            schema_id = self._registrar.counter_group(dtype)
        else:
            schema_id = self._registrar.dtype(dtype)
        rc, counter_id = self._backend._native.counter_register(
            self._handle,
            schema_id,
            _as_bytes(name),
            _as_bytes(description),
            scope_id,
            _payloads.counter_semantics(semantics),
        )
        _check(rc, "CounterRegister")
        return Counter(
            self, name, dtype, description, semantics, scope_id, counter_id, schema_id, timestamp_field
        )


def _resolve_scope_id(domain, scope):
    if scope is None:
        return PredefinedScope.NONE.value
    if isinstance(scope, PredefinedScope):
        return scope.value
    if isinstance(scope, Scope):
        if domain is None:
            raise ValueError("scope requires a registered stream domain")
        if scope._domain is not domain:
            raise ValueError("scope is not registered in this domain")
        return scope._scope_id
    if isinstance(scope, int) and not isinstance(scope, bool):
        if not _SCOPE_STATIC_START <= scope < _SCOPE_DYNAMIC_START:
            raise ValueError(
                "integer scope must be in the NVTX static scope ID range "
                f"[{_SCOPE_STATIC_START}, {_SCOPE_DYNAMIC_START})"
            )
        return scope
    raise TypeError("scope must be None, a PredefinedScope, a Scope, or an int")


def _resolve_category(domain, category):
    if category is None:
        return 0
    if isinstance(category, (str, bytes)):
        return domain.get_category_id(category)
    if isinstance(category, int):
        if category < 0 or category > 0xFFFFFFFF:
            raise ValueError("category must be in [0, 2**32 - 1]")
        if category not in domain._user_category_ids:
            with domain._session._lock:
                domain._ensure_valid()
                domain._user_category_ids.add(category)
        return category
    raise TypeError("category must be a str, bytes, int, or None")


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
