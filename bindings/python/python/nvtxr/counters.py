"""Counters, as NVIDIA's ``nvtx`` package has them (0.2.17): a named series
of numbers the tool plots over time, made by ``Domain.get_counter``.

>>> import nvtxr as nvtx
>>> loss = nvtx.get_domain("Training").get_counter("loss", float)
>>> loss.sample(0.42)
>>> nvtx.get_domain("Training").get_counter("loss", float) is loss
True

``int`` gives an :class:`Int64Counter`, ``float`` a :class:`Float64Counter`.
Samples go through NVTX's counters extension to the tool (``nvtxr record``
shows them as counter tracks); ``batch_submit`` sends values taken earlier
with ``Domain.get_timestamp()`` readings. Any other NumPy dtype gives an
:class:`ExtCounter`: a structured dtype is a counter group, a series per
field. ``description``, ``scope`` (a path, registered once per domain, or a
``PredefinedScope``), ``semantics`` and ``time_domain`` (default the tool's
clock) reach the tool as NVIDIA's package sends them. With no tool
attached, counters are made as usual and sampling does nothing.
"""

import array
import dataclasses
import warnings
from typing import Optional, Union

from nvtxr import _native, _payloads
from nvtxr._enums import (
    CounterInterpolation,
    CounterNoValueReason,
    CounterValueType,
    TimestampType,
)


_UINT64_MAX = (1 << 64) - 1


@dataclasses.dataclass(frozen=True)
class CounterSemantics:
    """How a counter's values should be read (``nvtxSemanticsCounter_t``)."""

    unit: Optional[Union[str, bytes]] = None
    value_type: CounterValueType = CounterValueType.ABSOLUTE
    interpolation: CounterInterpolation = CounterInterpolation.POINT
    min: Optional[Union[int, float]] = None
    max: Optional[Union[int, float]] = None
    unit_scale_numerator: int = 1
    unit_scale_denominator: int = 1

    def __post_init__(self):
        """Checks the fields as NVIDIA's package does; a ``str`` unit is
        kept encoded, as bytes (NVIDIA's too)."""
        if self.unit is not None and not isinstance(self.unit, (str, bytes)):
            raise TypeError("Counter semantic unit must be str, bytes, or None.")
        if not isinstance(self.value_type, CounterValueType):
            raise TypeError("Counter semantic value_type must be a CounterValueType.")
        if not isinstance(self.interpolation, CounterInterpolation):
            raise TypeError("Counter semantic interpolation must be a CounterInterpolation.")
        for name in ("unit_scale_numerator", "unit_scale_denominator"):
            value = getattr(self, name)
            if not isinstance(value, int):
                raise TypeError(f"Counter semantic {name} must be an int.")
            if value <= 0 or value > _UINT64_MAX:
                raise ValueError(f"Counter semantic {name} must be in range [1, 2**64 - 1].")
        if isinstance(self.unit, str):
            object.__setattr__(self, "unit", self.unit.encode())
        limits = [v for v in (self.min, self.max) if v is not None]
        if any(not isinstance(v, (int, float)) for v in limits):
            raise TypeError("Counter semantic limits must be int, float, or None.")
        if any(isinstance(v, float) for v in limits) and any(isinstance(v, int) for v in limits):
            raise ValueError("Counter semantic min and max must have the same type.")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("Counter semantic min cannot exceed max.")
        integers = [v for v in limits if isinstance(v, int)]
        if any(v < 0 for v in integers):
            if any(v < -(1 << 63) or v >= 1 << 63 for v in integers):
                raise ValueError("Signed counter semantic limits must fit in int64.")
        elif any(v > _UINT64_MAX for v in integers):
            raise ValueError("Unsigned counter semantic limits must fit in uint64.")


class Counter:
    """A registered counter; made by ``Domain.get_counter``."""

    __slots__ = ("domain", "name", "dtype", "description", "scope", "semantics", "time_domain", "_id")

    _float = False

    def __init__(self, domain, name, dtype, description=None, scope=None, semantics=None, time_domain=None):
        self.domain = domain
        self.name = name
        self.dtype = dtype
        self.description = description
        self.scope = scope
        self.semantics = semantics
        self.time_domain = time_domain
        self._id = self._register()

    def _register(self, schema=0):
        return _native._counter_register(
            self.domain,
            str(self.name),
            self._float,
            schema,
            None if self.description is None else str(self.description),
            _scope_id(self.domain, self.scope),
            _payloads.enum_value(self.time_domain),
            _payloads.counter_semantics(self.semantics),
        )

    def sample(self, value):
        """Records one value now."""
        raise NotImplementedError("use Domain.get_counter() for a concrete counter")

    def batch_submit(self, values, timestamps):
        """Records values taken earlier: ``values[i]`` at ``timestamps[i]``
        (readings of ``Domain.get_timestamp()``, the tool's clock). Lengths
        that differ are warned about and nothing is sent."""
        samples, count = self._samples(values)
        stamps = [int(t) for t in timestamps]
        if count != len(stamps):
            warnings.warn(
                f"nvtxr: counter {self.name!r}: {count} values and {len(stamps)} timestamps; nothing sent",
                RuntimeWarning,
                stacklevel=2,
            )
            return
        _native._counter_batch_bytes(self.domain, self._id, samples, stamps)

    def _samples(self, values):
        """``values`` in the counter's layout, one after another, and how many."""
        packed = array.array(self._typecode, values)
        return packed.tobytes(), len(packed)

    def sample_no_value(self, reason: CounterNoValueReason):
        """Records that there is no value now, and why."""
        _native._counter_sample_no_value(self.domain, self._id, CounterNoValueReason(reason).value)

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"


class Int64Counter(Counter):
    """A counter of signed 64-bit integers."""

    __slots__ = ()
    _typecode = "q"

    def sample(self, value: int):
        """Records one integer value now."""
        _native._counter_sample_int(self.domain, self._id, value)


class Float64Counter(Counter):
    """A counter of 64-bit floating-point values."""

    __slots__ = ()
    _float = True
    _typecode = "d"

    def sample(self, value: float):
        """Records one floating-point value now."""
        _native._counter_sample_float(self.domain, self._id, value)


class ExtCounter(Counter):
    """A counter of a NumPy dtype: a scalar type other than int64 and
    float64, or a structured dtype, whose fields are a counter group (a
    series per field)."""

    __slots__ = ("_np",)

    def _register(self):
        import numpy as np

        self._np = np
        found = _payloads.schemas(self.domain)
        schema = found.counter_group(self.dtype) if self.dtype.names else found.dtype(self.dtype)
        return Counter._register(self, schema)

    def sample(self, value):
        """Records one value of the counter's dtype now (a tuple of field
        values for a structured dtype)."""
        payload = self._np.ascontiguousarray(value, self.dtype)
        if payload.size != 1:
            raise ValueError(f"sample() takes one value of dtype {self.dtype}, not {payload.size}")
        _native._counter_sample_bytes(self.domain, self._id, payload.tobytes())

    def _samples(self, values):
        packed = self._np.ascontiguousarray(values, self.dtype).reshape(-1)
        return packed.tobytes(), packed.size


_made = {}
_scopes = {}


def _scope_id(domain, scope):
    """A scope as NVIDIA's package passes it: a path registered once per
    domain (``"/node/gpu0"``), a predefined scope's number, or 0."""
    if scope is None:
        return 0
    if isinstance(scope, str):
        key = (id(domain), scope)
        if key not in _scopes:
            _scopes[key] = _native._scope_register(domain, scope)
        return _scopes[key]
    return int(_payloads.enum_value(scope))


def counter_dtype(dtype):
    """A counter's dtype as NVIDIA's package keeps it: a NumPy dtype (``int``
    as int64) when NumPy is there. A counter group is flat: a nested group,
    an array of groups or an array field is a TypeError, as NVIDIA's."""
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is None:
        if dtype is int or dtype is float:
            return dtype
        raise RuntimeError("Install numpy to use dtype-based NVTX counters.")
    try:
        dtype = np.dtype(np.int64 if dtype is int else dtype)
    except TypeError as e:
        raise TypeError("Counter dtype must be int, float, or NumPy dtype-like.") from e
    _refuse_nested(dtype)
    return dtype


def _refuse_nested(dtype):
    """A counter group is flat: NVIDIA's TypeError for a nested group, an
    array of groups or an array field."""
    if dtype.subdtype is not None and dtype.subdtype[0].fields is not None:
        raise TypeError(
            "Nested counter groups are not supported. "
            "Counter dtype must not be a fixed-size array of a structured dtype."
        )
    for name in dtype.names or ():
        field = dtype.fields[name][0]
        if field.subdtype:
            raise TypeError(
                "Counter group array fields are not supported. "
                f"Field {name!r} must be a scalar dtype."
            )
        if field.fields is not None:
            raise TypeError(
                "Nested counter groups are not supported. "
                f"Field {name!r} must not have a structured dtype."
            )


def _counter_class(dtype):
    """The class and normalized dtype for ``dtype``, as NVIDIA's: ``int``
    and int64 give an :class:`Int64Counter`, ``float`` and float64 a
    :class:`Float64Counter`, any other NumPy dtype an :class:`ExtCounter`."""
    if dtype is int:
        return Int64Counter, int
    if dtype is float:
        return Float64Counter, float
    try:
        import numpy as np

        dt = np.dtype(dtype)
    except Exception:
        return None, dtype
    if dt == np.int64:
        return Int64Counter, dtype
    if dt == np.float64:
        return Float64Counter, dtype
    if not _payloads.representable(dt):
        return None, dtype
    return ExtCounter, dt


def get_counter(domain, name, dtype, description=None, scope=None, semantics=None, time_domain=None):
    """``Domain.get_counter``: the counter, made on first use and cached."""
    if time_domain is None:
        time_domain = TimestampType.TOOL_PROVIDED  # NVIDIA's default: the tool's clock
    cls, dtype = _counter_class(dtype)
    if cls is ExtCounter:
        _refuse_nested(dtype)  # as NVIDIA's; anything else unsupported is warned about below
    if cls is None:
        # Never raise for an annotation: say what is wrong, and record floats.
        warnings.warn(
            f"nvtxr: counter {name!r}: dtype {dtype!r} is not supported (int, float or a NumPy dtype); recording floats",
            RuntimeWarning,
            stacklevel=3,
        )
        cls = Float64Counter
    # One counter per name and everything it is registered with, as
    # NVIDIA's (the same name with other semantics is another counter).
    layout = _payloads._key(dtype) if cls is ExtCounter else None
    key = (id(domain), name, cls, layout, description, scope, semantics, _payloads.enum_value(time_domain))
    counter = _made.get(key)
    if counter is None:
        counter = _made[key] = cls(domain, name, dtype, description, scope, semantics, time_domain)
    return counter
