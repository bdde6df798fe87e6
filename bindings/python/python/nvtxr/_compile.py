"""``torch.compile`` support for the ``torch.cuda.nvtx``-style calls
(``nvtxr.range_push``, ``range_pop``, ``range_start``, ``range_end``,
``range`` and ``nvtxr.torch.mark``) and for NVIDIA's API: ``with
annotate(...)`` and ``@annotate``, ``mark``, ``push_range``/``pop_range`` and
``start_range``/``end_range`` (message, color, domain and category; a
payload is sent in eager code only).

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
from typing import Optional

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

    # NVIDIA's API: a color or category is a name or a number.
    @torch.library.custom_op("nvtxr::push", mutates_args=())
    def push(
        message: Optional[str],
        color: Optional[str],
        color_value: Optional[int],
        domain: Optional[str],
        category: Optional[str],
        category_value: Optional[int],
    ) -> None:
        _event(_native.push_range, message, color, color_value, domain, category, category_value)

    @torch.library.custom_op("nvtxr::pop", mutates_args=())
    def pop(domain: Optional[str]) -> None:
        _native.pop_range(domain)

    @torch.library.custom_op("nvtxr::mark", mutates_args=())
    def mark(
        message: Optional[str],
        color: Optional[str],
        color_value: Optional[int],
        domain: Optional[str],
        category: Optional[str],
        category_value: Optional[int],
    ) -> None:
        _event(_native.mark, message, color, color_value, domain, category, category_value)

    @torch.library.custom_op("nvtxr::start", mutates_args=())
    def start(
        message: Optional[str],
        color: Optional[str],
        color_value: Optional[int],
        domain: Optional[str],
        category: Optional[str],
        category_value: Optional[int],
    ) -> torch.Tensor:
        started = _event(_native.start_range, message, color, color_value, domain, category, category_value)
        return torch.tensor(_as_signed(started[0] if started else 0), dtype=torch.int64)

    @torch.library.custom_op("nvtxr::end", mutates_args=())
    def end(range_id: torch.Tensor, domain: Optional[str]) -> None:
        rid = int(range_id) & ((1 << 64) - 1)
        if rid:
            _native.end_range((rid, _native.get_domain(domain)))

    for op in (text_push, text_pop, text_mark, text_end, push, pop, mark, end):
        op.register_fake(lambda *args: None)
    for op in (text_start, start):
        op.register_fake(lambda *args: torch.empty((), dtype=torch.int64))
    for op in (text_push, text_pop, text_mark, text_start, text_end, push, pop, mark, start, end):
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
    for native, polyfill in [
        (_native.push_range, _push_range),
        (_native.pop_range, _pop_range),
        (_native.mark, _mark_ex),
        (_native.start_range, _start_range),
        (_native.end_range, _end_range),
        # `annotate(...)` makes, in compiled code, an `_Annotation`.
        (_native.annotate.__new__, _annotate),
        # A function decorated with `@annotate` calls this.
        (_native._call, _call),
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


def _event(call, message, color, color_value, domain, category, category_value):
    """An operator's arguments (a color or category as a name or a number,
    whichever was given: see `_split`) passed to `call`, an event call of
    NVIDIA's API."""
    color = color if color is not None else color_value
    category = category if category is not None else category_value
    return call(message, color, domain, category)


def _split(value):
    """A color or category as (name, number) for the operators."""
    if value is None or isinstance(value, str):
        return value, None
    return None, int(value)


def _attributes(message, color, domain, category):
    return (message, *_split(color), domain, *_split(category))


def _push_range(message=None, color=None, domain=None, category=None, payload=None):
    _torch.ops.nvtxr.push(*_attributes(message, color, domain, category))
    return 0


def _pop_range(domain=None):
    _torch.ops.nvtxr.pop(domain)
    return 0


def _mark_ex(message=None, color=None, domain=None, category=None, payload=None):
    _torch.ops.nvtxr.mark(*_attributes(message, color, domain, category))


def _start_range(message=None, color=None, domain=None, category=None, payload=None):
    # The id, with its domain for `end_range`, as eager code's (id, domain).
    return _torch.ops.nvtxr.start(*_attributes(message, color, domain, category)), domain


def _end_range(range_id):
    if range_id is None:
        return
    rid, domain = range_id
    _torch.ops.nvtxr.end(rid, domain)


class _Annotation:
    """``annotate(...)`` in compiled code: the same push and pop, as operators."""

    def __init__(self, message=None, color=None, domain=None, category=None, payload=None):
        self.message, self.color, self.domain, self.category = message, color, domain, category

    def __enter__(self):
        _push_range(self.message, self.color, self.domain, self.category)
        return self

    def __exit__(self, *exc):
        _pop_range(self.domain)
        return False


def _annotate(cls, message=None, color=None, domain=None, category=None, payload=None):
    return _Annotation(message, color, domain, category)


def _call(attributes, func, args, kwargs=None, spec=None):
    message, color, domain, category = spec
    _push_range(message, color, domain, category)
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _pop_range(domain)


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
