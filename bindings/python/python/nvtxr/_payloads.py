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

Schemas are registered once per domain and dtype. The numbers are NVTX's
(``nvToolsExtPayload.h``).
"""

import struct
import warnings

try:
    import numpy as np
except ImportError:  # extended payloads need NumPy, as NVIDIA's do
    np = None

_STATIC, _DYNAMIC = 1, 2
_FIXED_SIZE, _LENGTH_INDEX = 1 << 4, 3 << 4
_COUNTER, _COUNTER_GROUP = 4 << 12, 1 << 3
_UINT64, _BYTE, _UTF32 = 18, 32, 78

if np is not None:
    _ENTRY_TYPES = {
        np.int8: 11,
        np.int16: 13,
        np.int32: 15,
        np.int64: 17,
        np.uint8: 12,
        np.uint16: 14,
        np.uint32: 16,
        np.uint64: _UINT64,
        np.float16: 42,
        np.float32: 43,
        np.float64: 44,
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

    def _register(self, kind, static_size, entries, flags=0):
        return self._domain._register_schema(kind, static_size, entries, flags)

    def dtype(self, dt):
        schema = self._dtypes.get(dt)
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
            self._dtypes[dt] = schema
        return schema

    def _builtin(self, dt):
        entry_type = _ENTRY_TYPES[dt.type]
        flags, length = 0, 0
        if entry_type == _UTF32:
            length = dt.itemsize // 4
        elif entry_type == _BYTE:
            flags, length = _FIXED_SIZE, dt.itemsize
        return self._register(_STATIC, dt.itemsize, [(flags, entry_type, dt.name, length, 0)])

    def _structured(self, dt):
        entries = []
        for name in dt.names:
            field, offset = dt.fields[name][:2]
            entries.append((0, self.dtype(field), name, 0, offset))
        return self._register(_STATIC, dt.itemsize, entries)

    def counter_group(self, dt):
        """A structured dtype as NVIDIA's counter groups are: flat (built-in
        fields typed directly, sub-arrays as fixed arrays), each field a
        counter, the schema flagged as a counter group."""
        key = ("counter group", dt)
        schema = self._dtypes.get(key)
        if schema is None:
            entries = []
            for name in dt.names:
                field, offset = dt.fields[name][:2]
                flags, length = _COUNTER, 0
                if field.subdtype and field.subdtype[0].type in _ENTRY_TYPES:
                    entry_type = _ENTRY_TYPES[field.subdtype[0].type]
                    flags, length = flags | _FIXED_SIZE, int(np.prod(field.subdtype[1]))
                elif field.type in _ENTRY_TYPES:
                    entry_type = _ENTRY_TYPES[field.type]
                else:
                    entry_type = self.dtype(field)
                entries.append((flags, entry_type, name, length, offset))
            schema = self._register(_STATIC, dt.itemsize, entries, _COUNTER_GROUP)
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
