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

import os
import threading
from pathlib import Path

from nvtxr import _native
from nvtxr._enums import (
    PredefinedScope,
    TimestampType,
)
from nvtxr._writer_base import (
    StreamInterleaving,
    StreamOrdering,
    StreamSkid,
    WriterError,
    _SUCCESS,
    _SYMBOL_MISSING,
    _as_bytes,
    _as_str,
    _check,
)
from nvtxr._writer_domain import Counter, Domain, RegisteredString, Schema, Scope
from nvtxr._writer_stream import Stream

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


