"""NVIDIA's ``nvtx`` enums of NVTX numbers (0.2.17's public names, same
members and values), for code written against NVIDIA's package."""

from enum import Enum


class PredefinedScope(Enum):
    """Predefined NVTX execution scopes (``NVTX_SCOPE_*``)."""

    NONE = 0
    ROOT = 1
    CURRENT_HW_MACHINE = 2
    CURRENT_HW_SOCKET = 3
    CURRENT_HW_CPU_PHYSICAL = 4
    CURRENT_HW_CPU_LOGICAL = 5
    CURRENT_HW_INNERMOST = 15
    CURRENT_HYPERVISOR = 16
    CURRENT_VM = 17
    CURRENT_KERNEL = 18
    CURRENT_CONTAINER = 19
    CURRENT_OS = 20
    CURRENT_SW_PROCESS = 21
    CURRENT_SW_THREAD = 22
    CURRENT_SW_INNERMOST = 31


class TimestampType(Enum):
    """Timestamp domains (``NVTX_TIMESTAMP_TYPE_*``)."""

    NONE = 0
    TOOL_PROVIDED = 1
    CPU_TSC = 10
    CPU_TSC_NONVIRTUALIZED = 11
    CPU_CLOCK_GETTIME_REALTIME = 12
    CPU_CLOCK_GETTIME_REALTIME_COARSE = 13
    CPU_CLOCK_GETTIME_MONOTONIC = 14
    CPU_CLOCK_GETTIME_MONOTONIC_RAW = 15
    CPU_CLOCK_GETTIME_MONOTONIC_COARSE = 16
    CPU_CLOCK_GETTIME_BOOTTIME = 17
    CPU_CLOCK_GETTIME_PROCESS_CPUTIME_ID = 18
    CPU_CLOCK_GETTIME_THREAD_CPUTIME_ID = 19
    WIN_QPC = 30
    WIN_GSTAFT = 31
    WIN_GSTAFTP = 32
    C_TIME = 40
    C_CLOCK = 41
    C_TIMESPEC_GET = 42
    CPP_STEADY_CLOCK = 50
    CPP_HIGH_RESOLUTION_CLOCK = 51
    CPP_SYSTEM_CLOCK = 52
    CPP_UTC_CLOCK = 53
    CPP_TAI_CLOCK = 54
    CPP_GPS_CLOCK = 55
    CPP_FILE_CLOCK = 56
    GPU_GLOBALTIMER = 80


_TIMESTAMP = 2 << 10


class EntryKind(Enum):
    """Role of a field in a structured payload dtype (entry flags)."""

    RANGE_BEGIN = (1 << 12) | _TIMESTAMP
    RANGE_END = (2 << 12) | _TIMESTAMP
    MARK = (3 << 12) | _TIMESTAMP
    MESSAGE = 1 << 10
    COUNTER_TIMESTAMP = _TIMESTAMP


class PayloadEntryType(Enum):
    """NVTX interpretation of a specially typed payload field."""

    RANGE_ID = 67
    CATEGORY = 68
    COLOR_ARGB = 69
    SCOPE_ID = 70
    REGISTERED_STRING = 80


class EventKind(Enum):
    """An event schema's kind (``NVTX_PAYLOAD_SCHEMA_FLAG_*``)."""

    MARK = 4 << 3
    RANGE_PUSHPOP = 2 << 3
    RANGE_STARTEND = 3 << 3
    RANGE_PUSH = 5 << 3
    RANGE_POP = 6 << 3
    RANGE_START = 7 << 3
    RANGE_END = 8 << 3


class BatchOrdering(Enum):
    """Timestamp ordering within a batch (``NVTX_BATCH_FLAG_*``)."""

    SORTED = 0
    PARTIALLY_SORTED = 1 << 1
    SORTED_PER_SCOPE = 2 << 1
    UNSORTED = 3 << 1


class CounterNoValueReason(Enum):
    """Why a sample has no value (``NVTX_COUNTER_SAMPLE_*``)."""

    ZERO = 0
    UNCHANGED = 1
    UNAVAILABLE = 2


class CounterValueType(Enum):
    """How samples relate to earlier ones (``NVTX_COUNTER_FLAG_VALUETYPE_*``)."""

    ABSOLUTE = 1 << 4
    DELTA = 2 << 4
    DELTA_SINCE_START = 3 << 4


class CounterInterpolation(Enum):
    """How tools interpolate between samples (``NVTX_COUNTER_FLAG_INTERPOLATION_*``)."""

    POINT = 1 << 8
    SINCE_LAST = 2 << 8
    UNTIL_NEXT = 3 << 8
    LINEAR = 4 << 8
