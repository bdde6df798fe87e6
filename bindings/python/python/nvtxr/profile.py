"""Annotate a program without editing it: every Python function call becomes
a push/pop range named after the function (its qualified name, registered
once per code object).

    python -m nvtxr.profile [--include MODULE_PREFIX ...] script.py [args ...]
    python -m nvtxr.profile [--include MODULE_PREFIX ...] -m module [args ...]

``--include`` keeps only functions of modules whose name starts with one of
the prefixes (``--include mypkg`` covers ``mypkg`` and ``mypkg.sub``). On
Python 3.12+ it uses ``sys.monitoring`` (every thread, those started before
included; excluded code is switched off where it is, costing nothing after
its first call); before 3.12, ``sys.setprofile`` and ``threading.setprofile``
(the main thread and threads started after). Generators and coroutines: a
range per resumption (from resume, or an exception thrown in, to yield), so
ranges nest on their thread.

Each thread's ranges balance: a return is a pop only when the same code's
push is the thread's innermost open one, so functions already running when
``start()`` is called (on any thread), generators closed or thrown into, and
cancelled tasks never pop what they did not push. After ``stop()``, returns
keep closing the ranges still open, each on its own thread, until none is
left; a later ``start()`` begins afresh.

The per-call work is native (``nvtxr._native._Profiler``): before 3.12 a
profile function in C, from 3.12 ``sys.monitoring`` callbacks that are its
methods. This module picks the tool id, registers them, and decides once
per code object whether and how its calls are named.
"""

import argparse
import os
import runpy
import sys
import threading

from nvtxr._native import get_domain, tool_attached
from nvtxr._native import _Profiler as _NativeProfiler

__all__ = ["start", "stop"]


def _qualified_name(code):
    return getattr(code, "co_qualname", code.co_name)


class _Profiler:
    def __init__(self, include, domain=None, name=_qualified_name):
        self.include = tuple(include)
        self.domain = get_domain(domain)
        self.name = name
        # code object -> EventAttributes, or None when excluded.
        self.attributes = {}

    def attributes_for(self, code, module):
        try:
            return self.attributes[code]
        except KeyError:
            pass
        wanted = not self.include or (
            module is not None
            and any(module == p or module.startswith(p + ".") for p in self.include)
        )
        if wanted:
            attrs = self.domain.get_event_attributes(message=self.name(code))
        else:
            attrs = None
        self.attributes[code] = attrs
        return attrs


if sys.version_info >= (3, 12):
    _monitoring = sys.monitoring
    _E = _monitoring.events

    class _Monitor(_Profiler):
        """From 3.12: ``sys.monitoring``, every thread; the callbacks are
        the native profiler's methods (``nvtxr._native._Profiler``), which
        ask :meth:`attributes_for` once per code object."""

        def __init__(self, include, **naming):
            super().__init__(include, **naming)
            self.tool = next(
                i for i in range(6) if _monitoring.get_tool(i) is None
            )
            native = _NativeProfiler(self.attributes_for, self.release, _monitoring.DISABLE)
            self.native = native
            self.starts = {
                _E.PY_START: native.enter,
                _E.PY_RESUME: native.enter,
                _E.PY_THROW: native.thrown,
            }
            self.ends = {
                _E.PY_RETURN: native.leave,
                _E.PY_YIELD: native.leave,
                _E.PY_UNWIND: native.unwind,
            }

        def start(self):
            _monitoring.use_tool_id(self.tool, "nvtxr.profile")
            # Code an earlier window switched off is watched again.
            _monitoring.restart_events()
            events = 0
            for event, callback in {**self.starts, **self.ends}.items():
                _monitoring.register_callback(self.tool, event, callback)
                events |= event
            _monitoring.set_events(self.tool, events)

        def stop(self):
            if self.native.stop():
                # No new ranges; ends close the open ones, then release.
                ends = 0
                for event in self.ends:
                    ends |= event
                _monitoring.set_events(self.tool, ends)
            else:
                self.release()

        def release(self):
            if _monitoring.get_tool(self.tool) != "nvtxr.profile":
                return
            _monitoring.set_events(self.tool, 0)
            for event in {**self.starts, **self.ends}:
                _monitoring.register_callback(self.tool, event, None)
            _monitoring.free_tool_id(self.tool)

    _Implementation = _Monitor
else:

    class _SetProfile(_Profiler):
        """Before 3.12: a profile function in C (``nvtxr._native._Profiler``),
        on this thread and, through ``threading.setprofile``, on each thread
        started after; it asks :meth:`attributes_for` once per code object."""

        def __init__(self, include, **naming):
            super().__init__(include, **naming)
            self.native = _NativeProfiler(self.attributes_for)

        def start(self):
            threading.setprofile(self.native)
            self.native.install()

        def stop(self):
            # Threads keep closing their open ranges, then stop profiling.
            threading.setprofile(None)
            self.native.stop()

    _Implementation = _SetProfile


_active = None


def start(include=(), **naming):
    """Starts annotating function calls (of modules under the ``include``
    prefixes); ``domain`` and ``name`` (code object to range name) may
    replace the default domain and the qualified name."""
    global _active
    if _active is None and tool_attached():
        _active = _Implementation(include, **naming)
        _active.start()


def stop():
    """Stops annotating function calls."""
    global _active
    if _active is not None:
        _active.stop()
        _active = None


class Profile:
    """NVIDIA's ``nvtx.Profile``: every Python function call between
    :meth:`enable` and :meth:`disable` as an NVTX range in domain
    ``nvtx.py``, named as NVIDIA's are: ``file.py:LINE(name)``, or with
    ``linenos=False`` the function's name.

    >>> import nvtxr as nvtx
    >>> profile = nvtx.Profile()
    >>> profile.enable()
    >>> profile.disable()

    ``annotate_cfuncs`` is accepted and kept, but calls of C functions are
    not annotated.
    """

    def __init__(self, linenos: bool = True, annotate_cfuncs: bool = True):
        self.linenos = linenos
        self.annotate_cfuncs = annotate_cfuncs

    def _name(self, code):
        if not self.linenos:
            return code.co_name
        file = os.path.basename(code.co_filename)
        return f"{file}:{code.co_firstlineno}({code.co_name})"

    def enable(self):
        """Starts annotating function calls."""
        start(domain="nvtx.py", name=self._name)

    def disable(self):
        """Stops annotating function calls."""
        stop()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m nvtxr.profile",
        description="Run a Python program with every function call as an NVTX range.",
    )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="MODULE_PREFIX",
        help="only functions of modules under this prefix (repeatable)",
    )
    parser.add_argument("-m", dest="module", help="run a module as a script")
    parser.add_argument("target", nargs="?", help="the script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    if options.module is None and options.target is None:
        parser.error("give a script or -m module")
    if options.module is not None:
        args = [options.target] if options.target else []
        sys.argv = [options.module, *args, *options.args]
    else:
        sys.argv = [options.target, *options.args]
    start(options.include)
    try:
        if options.module is not None:
            runpy.run_module(options.module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(options.target, run_name="__main__")
    finally:
        stop()


if __name__ == "__main__":
    main()
