"""``torch.compile`` support for the ``torch.cuda.nvtx``-style calls
(``nvtxr.range_push``, ``range_pop``, ``range_start``, ``range_end``,
``range`` and ``nvtxr.torch.mark``).

Dynamo cannot trace a call into a C extension: it breaks the graph there
(an error under ``fullgraph=True``). So nvtxr defines its calls as PyTorch
custom operators with an ordered side effect (``nvtxr::text_push``, ...),
which compiled code keeps and runs in program order, and tells Dynamo to
trace its native calls as those operators. Eager code is not touched: it
calls nvtxr directly, as before.

This happens when ``torch`` is imported, whether before or after nvtxr (a
one-shot import hook waits for it). A PyTorch without what it needs
(custom operators with effects, ``torch._dynamo.substitute_in_graph``:
PyTorch 2.5 and later) leaves the calls eager-only; :data:`reason` then
says why.
"""

import importlib.abc
import importlib.util
import sys

from nvtxr import _native

#: Why the calls are not compile-safe (``None`` once they are, or before
#: ``torch`` is imported).
reason = None
_registered = False


def _as_signed(range_id):
    """A 64-bit range id as the int64 a tensor holds."""
    return range_id - (1 << 64) if range_id >= 1 << 63 else range_id


def _define(torch):
    from torch._higher_order_ops import effects

    def ordered(op):
        if hasattr(op, "register_effect"):
            op.register_effect(effects.EffectType.ORDERED)
        else:
            effects._register_effectful_op(op._opoverload, effects._EffectType.ORDERED)
        return op

    @torch.library.custom_op("nvtxr::text_push", mutates_args=())
    def text_push(message: str) -> None:
        _native._text_push(message)

    @torch.library.custom_op("nvtxr::text_pop", mutates_args=())
    def text_pop() -> None:
        _native._text_pop()

    @torch.library.custom_op("nvtxr::text_mark", mutates_args=())
    def text_mark(message: str) -> None:
        _native._text_mark(message)

    # A start/end range's id travels through the graph as a 0-d tensor.
    @torch.library.custom_op("nvtxr::text_start", mutates_args=())
    def text_start(message: str) -> torch.Tensor:
        return torch.tensor(_as_signed(_native._text_start(message)), dtype=torch.int64)

    @torch.library.custom_op("nvtxr::text_end", mutates_args=())
    def text_end(range_id: torch.Tensor) -> None:
        _native._text_end(int(range_id) & ((1 << 64) - 1))

    for op in (text_push, text_pop, text_mark, text_end):
        op.register_fake(lambda *args: None)
    text_start.register_fake(lambda message: torch.empty((), dtype=torch.int64))
    for op in (text_push, text_pop, text_mark, text_start, text_end):
        ordered(op)

    global _torch
    _torch = torch
    for native, polyfill in [
        (_native._text_push, _push),
        (_native._text_pop, _pop),
        (_native._text_mark, _mark),
        (_native._text_start, _start),
        (_native._text_end, _end),
    ]:
        torch._dynamo.substitute_in_graph(native, skip_signature_check=True)(polyfill)


# What Dynamo traces in place of each native call (module functions that
# reach torch through the global `_torch`, which Dynamo can follow).
# Compiled code cannot return the tool's depth: push and pop give 0 there.
_torch = None


def _push(message):
    _torch.ops.nvtxr.text_push(message)
    return 0


def _pop():
    _torch.ops.nvtxr.text_pop()
    return 0


def _mark(message):
    _torch.ops.nvtxr.text_mark(message)


def _start(message):
    return _torch.ops.nvtxr.text_start(message)


def _end(range_id):
    if not isinstance(range_id, _torch.Tensor):
        range_id = _torch.tensor(_as_signed(range_id), dtype=_torch.int64)
    _torch.ops.nvtxr.text_end(range_id)


def register():
    """Makes the calls compile-safe, once; never raises."""
    global _registered, reason
    if _registered:
        return
    _registered = True
    try:
        _define(sys.modules["torch"])
    except Exception as error:  # an older or unusual PyTorch: eager-only
        reason = f"{type(error).__name__}: {error}"


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Registers once ``torch`` has been imported, then steps aside."""

    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_register(module):
            exec_module(module)
            register()

        loader.exec_module = exec_then_register
        return spec


def install():
    """Registers now if ``torch`` is imported, else when it is."""
    if "torch" in sys.modules:
        register()
    elif not any(isinstance(f, _AfterTorch) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTorch())
