"""NVTX annotations for Python, on nvtxr's NVTX core.

A drop-in for NVIDIA's ``nvtx`` package (``import nvtxr as nvtx``):

>>> import nvtxr as nvtx
>>> with nvtx.annotate("load data", color="green"):
...     pass
>>> @nvtx.annotate(color="red")          # message: the function's name
... def step():
...     pass
>>> nvtx.mark("checkpoint", payload=3)

With no NVTX tool attached (``NVTX_INJECTION64_PATH`` unset), or with
``NVTX_DISABLE`` set to anything but an empty string, every call returns
after one check, and nothing raises for lack of a tool, a GPU or CUDA.
``enabled()`` is NVIDIA's: false only under ``NVTX_DISABLE``;
``tool_attached()`` says whether calls reach a tool. ``annotate`` on an ``async def``, a generator or an async generator
covers its whole execution with a start/end range (coroutines interleave on
one thread, where push/pop ranges would nest wrongly); for the same reason
``with annotate(...)`` inside a running asyncio event loop opens a start/end
range kept per task, so concurrent tasks awaiting inside it keep their own
durations. Each Python thread's
OS thread is named after ``threading.current_thread().name`` at its first
NVTX call of any kind, and again in a child ``os.fork`` made
(``name_threads(False)`` turns that off).

Also here: ``torch.cuda.nvtx``'s calls (``range_push``, ``range_pop``,
``range_start``, ``range_end``, ``range``; or ``import nvtxr.torch``),
nvtxpy-style timed ranges (:mod:`nvtxr.nvtxpy`, :func:`stats`), counters
(``Domain.get_counter``, :mod:`nvtxr.counters`), and
``python -m nvtxr.profile script.py`` to annotate every Python function call.
"""

def _refuse_subinterpreters():
    """PyO3 extensions live in one interpreter, the first that imports them:
    imported in a subinterpreter first, nvtxr would be lost to the main one.
    So a subinterpreter gets an ImportError, before the extension loads."""
    try:
        import _interpreters as interpreters  # 3.13+
    except ImportError:
        try:
            import _xxsubinterpreters as interpreters  # 3.12
        except ImportError:
            return
    if interpreters.get_current() != interpreters.get_main():
        raise ImportError(
            "nvtxr cannot be imported in a subinterpreter (its native module lives in the main "
            "interpreter); import it in the main one"
        )


_refuse_subinterpreters()

from nvtxr._native import (  # noqa: E402
    Domain,
    EventAttributes,
    RegisteredString,
    annotate,
    enabled,
    end_range,
    get_domain,
    load_error,
    mark,
    name_current_thread,
    name_threads,
    pop_range,
    push_range,
    start_range,
    tool_attached,
)
from nvtxr._enums import (
    BatchOrdering,
    EntryKind,
    EventKind,
    PayloadEntryType,
    PredefinedScope,
    TimestampType,
)
from nvtxr._payloads import numpy_dtype
from nvtxr.counters import (
    Counter,
    CounterInterpolation,
    CounterNoValueReason,
    CounterSemantics,
    CounterValueType,
    Float64Counter,
    ExtCounter,
    Int64Counter,
)
from nvtxr.nvtxpy import getstats as stats
from nvtxr.profile import Profile
from nvtxr.torch import range, range_end, range_pop, range_push, range_start

__all__ = [
    "BatchOrdering",
    "EntryKind",
    "EventKind",
    "PayloadEntryType",
    "PredefinedScope",
    "TimestampType",
    "Counter",
    "CounterInterpolation",
    "CounterNoValueReason",
    "CounterSemantics",
    "CounterValueType",
    "Domain",
    "EventAttributes",
    "ExtCounter",
    "Float64Counter",
    "Int64Counter",
    "Profile",
    "RegisteredString",
    "annotate",
    "enabled",
    "end_range",
    "get_domain",
    "load_error",
    "mark",
    "name_current_thread",
    "name_threads",
    "numpy_dtype",
    "pop_range",
    "push_range",
    "range",
    "range_end",
    "range_pop",
    "range_push",
    "range_start",
    "start_range",
    "stats",
    "tool_attached",
]
