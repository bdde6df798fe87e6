"""nvtxpy's API: ranges that also count their runs and total time per name,
with or without a tool (timing needs no profiler).

>>> import nvtxr.nvtxpy as nvtxpy
>>> for i in range(3):
...     with nvtxpy.profile_range("step"):
...         pass
>>> nvtxpy.getstats()["step"][0]
3
"""

import contextlib
import functools
import threading
import time

from nvtxr._native import mark as _mark, pop_range as _pop, push_range as _push

__all__ = [
    "colors",
    "getstats",
    "profile_mark",
    "profile_range",
    "profile_range_nvtx_only",
    "profile_range_pop",
    "profile_range_push",
    "profiled",
]


class colors:
    """nvtxpy's predefined ARGB colors."""

    red = 0xFFFF0000
    green = 0xFF00FF00
    blue = 0xFF0000FF
    yellow = 0xFFFFFF00
    magenta = 0xFFFF00FF
    cyan = 0xFF00FFFF
    white = 0xFFFFFFFF
    black = 0xFF000000


_stats = {}
_lock = threading.Lock()


def _record(name, elapsed):
    with _lock:
        count, total = _stats.get(name, (0, 0.0))
        _stats[name] = (count + 1, total + elapsed)


def getstats():
    """``{name: (runs, total seconds)}`` for every :func:`profile_range` and :func:`profiled` name."""
    with _lock:
        return dict(_stats)


def profile_range_push(message, color=None, payload=None, category=None):
    """Pushes a range on this OS thread."""
    return _push(message, color, None, category, payload)


def profile_range_pop():
    """Pops this OS thread's innermost range."""
    return _pop()


def profile_mark(message, color=None, payload=None, category=None):
    """An instantaneous event."""
    _mark(message, color, None, category, payload)


@contextlib.contextmanager
def profile_range_nvtx_only(name, color=None, payload=None, category=None):
    """A range, without statistics."""
    _push(name, color, None, category, payload)
    try:
        yield
    finally:
        _pop()


@contextlib.contextmanager
def profile_range(name, color=None, payload=None, category=None):
    """A range that also counts its runs and time (see :func:`getstats`)."""
    start = time.perf_counter()
    _push(name, color, None, category, payload)
    try:
        yield
    finally:
        _pop()
        _record(name, time.perf_counter() - start)


def profiled(name=None, color=None, payload=None, category=None):
    """Decorator: the function's calls as timed ranges (name defaults to its qualified name)."""

    def decorate(func):
        label = name or func.__qualname__

        @functools.wraps(func)
        def call(*args, **kwargs):
            with profile_range(label, color, payload, category):
                return func(*args, **kwargs)

        return call

    return decorate
