"""Type stubs for nvtxr (see the module docstring)."""

from contextlib import AbstractContextManager
from typing import Any, Callable, Dict, Optional, Tuple, TypeVar, Union

_F = TypeVar("_F", bound=Callable[..., Any])
Color = Union[str, int, None]
Category = Union[str, int, None]
# An int or float in the event; anything else (a NumPy array or scalar, a list,
# tuple, range or bytes) as an extended payload, as NVIDIA's package sends it.
Payload = Union[int, float, list, tuple, range, bytes, Any, None]

class RegisteredString:
    """A string registered once in a domain."""
    @property
    def string(self) -> str: ...

class EventAttributes:
    """An event's message, color, category and payload, resolved once."""
    @property
    def message(self) -> Union[RegisteredString, str, None]: ...
    @property
    def color(self) -> Optional[int]: ...
    @property
    def category(self) -> int: ...
    @property
    def payload(self) -> Any: ...
    @property
    def domain(self) -> "Domain": ...

class Domain:
    """A named group of events, categories and registered strings."""
    @property
    def name(self) -> Optional[str]: ...
    def get_registered_string(self, string: str) -> Optional[RegisteredString]: ...
    def get_category_id(self, name: str) -> int: ...
    def get_event_attributes(
        self,
        message: Union[str, RegisteredString, None] = None,
        color: Color = None,
        category: Category = None,
        payload: Payload = None,
    ) -> EventAttributes: ...
    def set_event_attributes(
        self,
        attributes: EventAttributes,
        *,
        message: Union[str, RegisteredString, None] = ...,
        color: Color = ...,
        category: Category = ...,
        payload: Payload = ...,
    ) -> None:
        """Changes `attributes` in place: each keyword given is set (None clears it)."""
    def mark(
        self,
        attributes: Optional[EventAttributes] = None,
        *,
        message: Union[str, RegisteredString, None] = None,
        color: Color = None,
        category: Category = None,
        payload: Payload = None,
    ) -> None: ...
    def push_range(
        self,
        attributes: Optional[EventAttributes] = None,
        *,
        message: Union[str, RegisteredString, None] = None,
        color: Color = None,
        category: Category = None,
        payload: Payload = None,
    ) -> int: ...
    def pop_range(self) -> int: ...
    def get_counter(
        self,
        name: str,
        dtype: type,
        *,
        description: Optional[str] = None,
        scope: Any = None,
        semantics: Optional["CounterSemantics"] = None,
        time_domain: Any = None,
    ) -> "Counter": ...
    def get_timestamp(self) -> int:
        """A timestamp of the tool's clock, for ``Counter.batch_submit`` (0 with no tool)."""
    def start_range(
        self,
        attributes: Optional[EventAttributes] = None,
        *,
        message: Union[str, RegisteredString, None] = None,
        color: Color = None,
        category: Category = None,
        payload: Payload = None,
    ) -> int: ...
    def end_range(self, range_id: int) -> None: ...

class annotate(AbstractContextManager["annotate"]):
    """A code range: ``with annotate(...)`` or ``@annotate(...)``."""
    def __init__(
        self,
        message: Optional[str] = None,
        color: Color = None,
        domain: Optional[str] = None,
        category: Category = None,
        payload: Payload = None,
    ) -> None: ...
    @property
    def attributes(self) -> EventAttributes: ...
    def __enter__(self) -> "annotate": ...
    def __exit__(self, *exc: Any) -> bool: ...
    def __call__(self, func: _F) -> _F: ...

def get_domain(name: Optional[str] = None) -> Domain: ...
def mark(
    message: Optional[str] = None,
    color: Color = "blue",
    domain: Optional[str] = None,
    category: Category = None,
    payload: Payload = None,
) -> None: ...
def push_range(
    message: Optional[str] = None,
    color: Color = "blue",
    domain: Optional[str] = None,
    category: Category = None,
    payload: Payload = None,
) -> int: ...
def pop_range(domain: Optional[str] = None) -> int: ...
def start_range(
    message: Optional[str] = None,
    color: Color = None,
    domain: Optional[str] = None,
    category: Category = None,
    payload: Payload = None,
) -> Optional[Tuple[int, Domain]]: ...
def end_range(range_id: Optional[Tuple[int, Domain]]) -> None: ...
def enabled() -> bool:
    """False only when ``NVTX_DISABLE`` is set (non-empty), as NVIDIA's package means it."""
def tool_attached() -> bool:
    """Whether a tool is attached and NVTX not disabled: calls reach a tool."""
def name_threads(on: bool) -> None: ...
def name_current_thread(name: str) -> None: ...
def load_error() -> Optional[str]: ...
def range_push(msg: str) -> int: ...
def range_pop() -> int: ...
def range_start(msg: str) -> int: ...
def range_end(range_id: int) -> None: ...
def range(msg: str, *args: Any, **kwargs: Any) -> AbstractContextManager[None]: ...
def stats() -> Dict[str, Tuple[int, float]]: ...

def numpy_dtype(
    *args: Any,
    counter_semantics: Optional["CounterSemantics"] = None,
    entry_kind: Optional["EntryKind"] = None,
    entry_type: Optional["PayloadEntryType"] = None,
    **kwargs: Any,
) -> Any:
    """NVIDIA's ``nvtx.numpy_dtype``: a NumPy dtype carrying NVTX metadata."""

from nvtxr._enums import (
    BatchOrdering as BatchOrdering,
    EntryKind as EntryKind,
    EventKind as EventKind,
    PayloadEntryType as PayloadEntryType,
    PredefinedScope as PredefinedScope,
    TimestampType as TimestampType,
)
from nvtxr.counters import (
    Counter as Counter,
    CounterInterpolation as CounterInterpolation,
    CounterNoValueReason as CounterNoValueReason,
    CounterSemantics as CounterSemantics,
    CounterValueType as CounterValueType,
    ExtCounter as ExtCounter,
    Float64Counter as Float64Counter,
    Int64Counter as Int64Counter,
)

class Profile:
    """NVIDIA's ``nvtx.Profile``: function calls as ranges between enable() and disable()."""
    def __init__(self, linenos: bool = True, annotate_cfuncs: bool = True) -> None: ...
    def enable(self) -> None: ...
    def disable(self) -> None: ...
