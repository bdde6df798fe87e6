"""``torch.cuda.nvtx``'s API, working without CUDA: ``import nvtxr.torch as nvtx``.

Text-only events in the default domain, as PyTorch sends them. Every call
here is compile-safe: inside ``torch.compile(fullgraph=True)`` code it
breaks no graph and sends the same events in the same order as in eager
code (there ``range_push`` and ``range_pop`` return 0, and ``range_start``
a 0-d tensor holding the id; see :mod:`nvtxr._compile`).
"""

import contextlib

from nvtxr import _compile
from nvtxr._native import _text_end, _text_mark, _text_pop, _text_push, _text_start

_compile.install()

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def range_push(msg: str) -> int:
    """Pushes a range on this OS thread; returns its zero-based depth (-2 with no tool)."""
    return _text_push(msg)


def range_pop() -> int:
    """Pops this OS thread's innermost range; returns the depth left (-2 with no tool)."""
    return _text_pop()


def range_start(msg: str) -> int:
    """Starts a range any thread may end; returns its id for :func:`range_end` (0 with no tool)."""
    return _text_start(msg)


def range_end(range_id: int) -> None:
    """Ends a range started by :func:`range_start`."""
    _text_end(range_id)


def mark(msg: str) -> None:
    """An instantaneous event."""
    _text_mark(msg)


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):
    """Context manager (and decorator) pushing ``msg.format(*args, **kwargs)``."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
