"""Extended payloads: NumPy values (and lists, tuples, ranges and bytes,
through ``numpy.array``) sent as NVIDIA's ``nvtx`` package sends them, so
that a tool decodes them the same way.

- A scalar of a built-in dtype: a static schema of one entry named after
  the dtype (``"float64"``), the value's bytes.
- A structured dtype: a static schema with an entry per field, each typed
  by the field's own schema (nested), at the field's offset.
- A sub-array dtype: a static schema of one fixed-size array entry.
- An array (``ndim`` >= 1): a dynamic schema ``{size: uint64, data: [size]}``
  of the element's schema; the bytes are the length then the elements, in
  C order.

Schemas are registered once per domain and dtype (with its NVTX metadata).
The numbers are NVTX's (``nvToolsExtPayload.h``). :func:`numpy_dtype`
attaches NVTX metadata to a dtype as NVIDIA's package does, under the same
key, so dtypes made by either package mean the same here.
"""

import dataclasses
import struct
import sys
import warnings
from enum import Enum

from nvtxr._enums import EntryKind, PayloadEntryType

try:
    import numpy as np
except ImportError:  # extended payloads need NumPy, as NVIDIA's do
    np = None

_STATIC, _DYNAMIC = 1, 2
_FIXED_SIZE, _LENGTH_INDEX = 1 << 4, 3 << 4
_COUNTER, _COUNTER_GROUP = 4 << 12, 1 << 3
_TIMESTAMP = 2 << 10
#: NVIDIA's key for NVTX metadata on a NumPy dtype.
METADATA_KEY = "nvidia_nvtx_payload_metadata"


@dataclasses.dataclass(frozen=True)
class _Metadata:
    """What :func:`numpy_dtype` attaches to a dtype."""

    counter_semantics: object = None
    entry_kind: object = None
    entry_type: object = None


def _metadata(dt):
    """A dtype's NVTX metadata (nvtxr's or NVIDIA's), or None."""
    return (dt.metadata or {}).get(METADATA_KEY) if dt.metadata else None


def enum_value(member):
    """An enum member's value; anything else as it is."""
    return member.value if isinstance(member, Enum) else member


def _key(dt):
    """A dtype's identity for its schema: itself and the NVTX metadata of it
    and its parts (NumPy's equality ignores metadata)."""
    fields = tuple((n, _key(dt.fields[n][0])) for n in dt.names) if dt.names else ()
    sub = _key(dt.subdtype[0]) if dt.subdtype else None
    return dt, _metadata(dt), sub, fields


# What a field's storage must be for an entry role or type, as NVIDIA's.
_STORAGE = {
    EntryKind.RANGE_BEGIN: ("iu", 8),
    EntryKind.RANGE_END: ("iu", 8),
    EntryKind.MARK: ("iu", 8),
    EntryKind.COUNTER_TIMESTAMP: ("iu", 8),
    PayloadEntryType.RANGE_ID: ("u", 8),
    PayloadEntryType.CATEGORY: ("u", 4),
    PayloadEntryType.COLOR_ARGB: ("u", 4),
    PayloadEntryType.SCOPE_ID: ("u", 8),
    PayloadEntryType.REGISTERED_STRING: ("u", struct.calcsize("P")),
}


def numpy_dtype(*args, counter_semantics=None, entry_kind=None, entry_type=None, **kwargs):
    """NVIDIA's ``nvtx.numpy_dtype``: ``numpy.dtype(*args, **kwargs)``
    carrying NVTX metadata: a field's counter semantics (in a counter
    group), its role (``EntryKind``: a range's begin or end, a mark's time,
    the message, a counter group's timestamp) or its NVTX type
    (``PayloadEntryType``). Raises TypeError for a role or type the field's
    storage cannot hold."""
    if np is None:
        raise RuntimeError("Install numpy to construct NVTX NumPy dtypes.")
    if entry_kind is not None and not isinstance(entry_kind, EntryKind):
        raise TypeError("entry_kind must be an nvtxr.EntryKind or None")
    if entry_type is not None and not isinstance(entry_type, PayloadEntryType):
        raise TypeError("entry_type must be an nvtxr.PayloadEntryType or None")
    base = np.dtype(*args, **kwargs)
    for member in (entry_kind, entry_type):
        kinds, size = _STORAGE.get(member, (None, None))
        native = base.byteorder in "=|" or base.byteorder == ("<" if sys.byteorder == "little" else ">")
        if kinds and (base.kind not in kinds or base.itemsize != size or (kinds == "u" and not native)):
            raise TypeError(f"{member} needs {size * 8}-bit integer storage, not {base}")
    if counter_semantics is None and entry_kind is None and entry_type is None:
        return base
    metadata = dict(base.metadata or {})
    if METADATA_KEY in metadata:
        warnings.warn("NVTX dtype metadata key already exists; leaving it unchanged.", stacklevel=2)
        return base
    metadata[METADATA_KEY] = _Metadata(counter_semantics, entry_kind, entry_type)
    return np.dtype(base, metadata=metadata)


_LIMIT_MIN, _LIMIT_MAX = 1 << 2, 1 << 3
_LIMIT_UNDEFINED, _LIMIT_I64, _LIMIT_U64, _LIMIT_F64 = 0, 1, 2, 3


def counter_semantics(s):
    """``CounterSemantics`` as ``nvtxSemanticsCounter_t``'s fields (flags,
    unit, scale numerator and denominator, limit type, min and max bits), as
    NVIDIA's package fills them, or None."""
    if s is None:
        return None
    flags = enum_value(s.value_type) | enum_value(s.interpolation)
    limits = [v for v in (s.min, s.max) if v is not None]
    if any(isinstance(v, float) for v in limits):
        limit_type = _LIMIT_F64
    elif any(v < 0 for v in limits):
        limit_type = _LIMIT_I64
    elif limits:
        limit_type = _LIMIT_U64
    else:
        limit_type = _LIMIT_UNDEFINED

    def bits(value):
        if value is None:
            return 0
        if limit_type == _LIMIT_F64:
            return struct.unpack("<Q", struct.pack("<d", float(value)))[0]
        return int(value) & ((1 << 64) - 1)

    if s.min is not None:
        flags |= _LIMIT_MIN
    if s.max is not None:
        flags |= _LIMIT_MAX
    return (flags, s.unit, s.unit_scale_numerator, s.unit_scale_denominator, limit_type, bits(s.min), bits(s.max))

_INT64, _UINT64, _FLOAT64, _BYTE, _UTF32 = 17, 18, 44, 32, 78

if np is not None:
    _ENTRY_TYPES = {
        np.int8: 11,
        np.int16: 13,
        np.int32: 15,
        np.int64: _INT64,
        np.uint8: 12,
        np.uint16: 14,
        np.uint32: 16,
        np.uint64: _UINT64,
        np.float16: 42,
        np.float32: 43,
        np.float64: _FLOAT64,
        np.str_: _UTF32,
        np.bytes_: _BYTE,
    }


class _Schemas:
    """One domain's schemas, by dtype."""

    def __init__(self, domain):
        self._domain = domain
        self._dtypes = {}
        self._arrays = {}
        self._fixed = {}

    def _register(self, kind, static_size, entries, flags=0, semantics=()):
        return self._domain._register_schema(kind, static_size, entries, flags, list(semantics))

    def dtype(self, dt):
        key = _key(dt)
        schema = self._dtypes.get(key)
        if schema is None:
            if dt.subdtype:
                element, shape = dt.subdtype
                schema = self.fixed(self.dtype(element), int(np.prod(shape)), dt.itemsize)
            elif dt.type in _ENTRY_TYPES:
                schema = self._builtin(dt)
            elif dt.names:
                schema = self._structured(dt)
            else:
                raise TypeError(f"dtype {dt} has no NVTX payload type")
            self._dtypes[key] = schema
        return schema

    def _builtin(self, dt):
        entry_type, flags, length = self._entry(dt)
        return self._register(_STATIC, dt.itemsize, [(flags, entry_type, dt.name, length, 0)])

    @staticmethod
    def _entry(dt):
        """A built-in dtype's entry type, flags and length (its metadata's
        type and role first)."""
        md = _metadata(dt)
        entry_type = enum_value(getattr(md, "entry_type", None)) or _ENTRY_TYPES[dt.type]
        flags, length = 0, 0
        if entry_type == _UTF32:
            length = dt.itemsize // 4
        elif entry_type == _BYTE:
            flags, length = _FIXED_SIZE, dt.itemsize
        return entry_type, flags | (enum_value(getattr(md, "entry_kind", None)) or 0), length

    def _structured(self, dt):
        entries = []
        for name in dt.names:
            field, offset = dt.fields[name][:2]
            entries.append((0, self.dtype(field), name, 0, offset))
        return self._register(_STATIC, dt.itemsize, entries)

    def counter_group(self, dt):
        """A structured dtype as NVIDIA's counter groups are: flat, each
        field a counter (but its timestamp), the schema flagged as a counter
        group."""
        return self.flat(dt, _COUNTER_GROUP, counters=True)

    def flat(self, dt, flags, counters=False):
        """A structured dtype as NVIDIA's counter groups and writer event
        schemas (``flags``: their ``NVTX_PAYLOAD_SCHEMA_FLAG_*``) are: flat
        (built-in fields typed directly, sub-arrays as fixed arrays), each
        field a counter when ``counters``."""
        key = ("flat", flags, counters, _key(dt))
        schema = self._dtypes.get(key)
        if schema is None:
            entries, semantics = [], []
            for name in dt.names:
                field, offset = dt.fields[name][:2]
                md = _metadata(field)
                if field.subdtype and field.subdtype[0].type in _ENTRY_TYPES:
                    entry_type = _ENTRY_TYPES[field.subdtype[0].type]
                    entry_flags, length = _FIXED_SIZE, int(np.prod(field.subdtype[1]))
                elif field.type in _ENTRY_TYPES:
                    entry_type, entry_flags, length = self._entry(field)
                else:
                    entry_type, entry_flags, length = self.dtype(field), 0, 0
                # Every field is a counter, but its timestamp.
                if counters and not entry_flags & _TIMESTAMP:
                    entry_flags |= _COUNTER
                entries.append((entry_flags, entry_type, name, length, offset))
                semantics.append(counter_semantics(getattr(md, "counter_semantics", None)))
            schema = self._register(_STATIC, dt.itemsize, entries, flags, semantics)
            self._dtypes[key] = schema
        return schema

    def array(self, element):
        schema = self._arrays.get(element)
        if schema is None:
            schema = self._register(
                _DYNAMIC,
                0,
                [(0, _UINT64, "size", 0, 0), (_LENGTH_INDEX, element, "data", 0, 0)],
            )
            self._arrays[element] = schema
        return schema

    def fixed(self, element, length, size):
        key = (element, length, size)
        schema = self._fixed.get(key)
        if schema is None:
            schema = self._register(_STATIC, size, [(_FIXED_SIZE, element, None, length, 0)])
            self._fixed[key] = schema
        return schema


_domains = {}


def representable(dt):
    """Whether NVTX has a payload type for every part of dtype ``dt``."""
    if dt.subdtype:
        return representable(dt.subdtype[0])
    if dt.names:
        return all(representable(dt.fields[name][0]) for name in dt.names)
    return dt.type in _ENTRY_TYPES


def schemas(domain):
    """``domain``'s schemas, made on first use."""
    found = _domains.get(domain.name)
    if found is None:
        found = _domains[domain.name] = _Schemas(domain)
    return found


def _warn(why):
    warnings.warn(f"nvtxr: {why}; the event is sent without it", stacklevel=4)


def encode(domain, value):
    """``(schema id, bytes)`` of ``value`` as an extended payload of
    ``domain``, or ``None`` (with a warning when it cannot be sent)."""
    if np is None:
        _warn(f"a payload of type {type(value).__name__} needs NumPy (pip install numpy)")
        return None
    if isinstance(value, (list, tuple, range, bytes, np.generic)):
        try:
            value = np.array(value)
        except Exception as e:  # ragged lists and the like
            _warn(f"payload {value!r} is not an array ({e})")
            return None
    if not isinstance(value, np.ndarray):
        _warn(
            f"unsupported payload of type {type(value).__name__} (int, float, a NumPy array "
            "or scalar, list, tuple, range or bytes)"
        )
        return None
    if value.nbytes == 0:
        return None
    found = schemas(domain)
    try:
        schema = found.dtype(value.dtype)
    except TypeError as e:
        _warn(str(e))
        return None
    if value.ndim:
        value = np.ascontiguousarray(value)
        return found.array(schema), struct.pack("<Q", value.size) + value.tobytes()
    return schema, value.tobytes()
