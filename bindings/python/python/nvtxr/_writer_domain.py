"""nvtxr.writer's domains and what is registered in them (strings,
scopes, counters, schemas).
"""

import itertools

from nvtxr import _payloads
from nvtxr._enums import (
    EventKind,
    PredefinedScope,
)
from nvtxr.counters import counter_dtype

try:
    import numpy as np
except ImportError:  # counters beyond int and float, and events by dtype, need NumPy
    np = None

from nvtxr._writer_base import _EVENT_SCHEMAS, _SCOPE_DYNAMIC_START, _SCOPE_STATIC_START, _as_bytes, _as_str, _check, _validate_counter_layout, _validate_event_dtype


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


