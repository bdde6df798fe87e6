//! NVTX's extended payloads (`nvtx3/nvToolsExtPayload.h`): the structs a
//! producer passes to describe binary data (schemas, enums) and to send it
//! (payload data), and their numbers: entry types, entry flags, schema
//! types and the fields masks.

use std::ffi::{c_char, c_void};

/// `nvtxPayloadData_t` (24 bytes): one payload of an event.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PayloadData {
    /// A predefined entry type ([`entry_type`]), a registered schema or
    /// enum, [`schema_id::REFERENCED`] or [`schema_id::RAW`].
    pub schema_id: u64,
    /// Bytes at `payload` (0: ignore this payload; `usize::MAX` for a
    /// string type: up to its NUL).
    pub size: usize,
    /// The data.
    pub payload: *const c_void,
}

/// `nvtxPayloadSchemaEntry_t` (64 bytes): one field of a schema.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SchemaEntry {
    /// [`entry_flag`]s.
    pub flags: u64,
    /// An [`entry_type`], or a registered schema or enum.
    pub type_: u64,
    /// Its name (a C string; NULL: none).
    pub name: *const c_char,
    /// Its description (a C string), or NULL.
    pub description: *const c_char,
    /// An inline string's length or an array's length (or the index of the
    /// entry holding it), by the flags.
    pub array_or_union_detail: u64,
    /// Its offset in the payload; 0 after the first entry: computed.
    pub offset: u64,
    /// Its semantics (a chain of `nvtxSemanticsHeader_t`), or NULL.
    pub semantics: *const c_void,
    /// Reserved.
    pub reserved: *const c_void,
}

/// `nvtxPayloadSchemaAttr_t` (80 bytes): a schema's registration. Only the
/// fields [`schema_field`] marks in `field_mask` are read.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SchemaAttr {
    /// Which fields are set ([`schema_field`]).
    pub field_mask: u64,
    /// Its name (a C string), or NULL.
    pub name: *const c_char,
    /// A [`schema_type`].
    pub type_: u64,
    /// [`schema_flag`]s.
    pub flags: u64,
    /// Its fields.
    pub entries: *const SchemaEntry,
    /// How many fields.
    pub num_entries: usize,
    /// A static schema's size in bytes (computed when not given).
    pub payload_static_size: usize,
    /// `#pragma pack(N)`'s N; 0: natural alignment.
    pub pack_align: usize,
    /// The id asked for: in [`schema_id::STATIC_START`], [`schema_id::DYNAMIC_START`]).
    pub schema_id: u64,
    /// Reserved.
    pub extension: *const c_void,
}

/// `nvtxPayloadEnum_t` (24 bytes): one value of an enum.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct EnumEntry {
    /// The value's name (a C string).
    pub name: *const c_char,
    /// The value.
    pub value: u64,
    /// Nonzero: a bit flag.
    pub is_flag: i8,
}

/// `nvtxPayloadEnumAttr_t` (56 bytes): an enum's registration. Only the
/// fields [`enum_field`] marks in `field_mask` are read.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct EnumAttr {
    /// Which fields are set ([`enum_field`]).
    pub field_mask: u64,
    /// Its name (a C string), or NULL.
    pub name: *const c_char,
    /// Its values.
    pub entries: *const EnumEntry,
    /// How many values.
    pub num_entries: usize,
    /// Bytes a value takes.
    pub size_of_enum: usize,
    /// The id asked for (as for schemas, with which enums share ids).
    pub schema_id: u64,
    /// Reserved.
    pub extension: *const c_void,
}

/// `NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_*`.
pub mod schema_field {
    /// `NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME`.
    pub const NAME: u64 = 1 << 1;
    /// `NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE`.
    pub const TYPE: u64 = 1 << 2;
    /// `NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS`.
    pub const FLAGS: u64 = 1 << 3;
    /// `NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES`.
    pub const ENTRIES: u64 = 1 << 4;
    /// `NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES`.
    pub const NUM_ENTRIES: u64 = 1 << 5;
    /// `NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE`.
    pub const STATIC_SIZE: u64 = 1 << 6;
    /// `NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ALIGNMENT`.
    pub const ALIGNMENT: u64 = 1 << 7;
    /// `NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID`.
    pub const SCHEMA_ID: u64 = 1 << 8;
}

/// `NVTX_PAYLOAD_SCHEMA_FLAG_*`: what a schema's payload is.
pub mod schema_flag {
    /// A counter group's layout.
    pub const COUNTER_GROUP: u64 = 1 << 3;
    /// A complete push/pop range.
    pub const RANGE_PUSHPOP: u64 = 2 << 3;
    /// A complete start/end range.
    pub const RANGE_STARTEND: u64 = 3 << 3;
    /// A mark.
    pub const MARK: u64 = 4 << 3;
    /// A push/pop range's push.
    pub const RANGE_PUSH: u64 = 5 << 3;
    /// A push/pop range's pop.
    pub const RANGE_POP: u64 = 6 << 3;
    /// A start/end range's start.
    pub const RANGE_START: u64 = 7 << 3;
    /// A start/end range's end.
    pub const RANGE_END: u64 = 8 << 3;
}

/// `NVTX_PAYLOAD_ENUM_ATTR_FIELD_*`.
pub mod enum_field {
    /// `NVTX_PAYLOAD_ENUM_ATTR_FIELD_NAME`.
    pub const NAME: u64 = 1 << 1;
    /// `NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES`.
    pub const ENTRIES: u64 = 1 << 2;
    /// `NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES`.
    pub const NUM_ENTRIES: u64 = 1 << 3;
    /// `NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE`.
    pub const SIZE: u64 = 1 << 4;
    /// `NVTX_PAYLOAD_ENUM_ATTR_FIELD_SCHEMA_ID`.
    pub const SCHEMA_ID: u64 = 1 << 5;
}

/// `NVTX_PAYLOAD_SCHEMA_TYPE_*`.
pub mod schema_type {
    /// `NVTX_PAYLOAD_SCHEMA_TYPE_STATIC`.
    pub const STATIC: u64 = 1;
    /// `NVTX_PAYLOAD_SCHEMA_TYPE_DYNAMIC`.
    pub const DYNAMIC: u64 = 2;
    /// A union whose member another entry selects.
    pub const UNION: u64 = 3;
    /// A union whose first entry selects the member.
    pub const UNION_WITH_INTERNAL_SELECTOR: u64 = 4;
}

/// Schema and payload ids (`NVTX_PAYLOAD_SCHEMA_ID_*`, `NVTX_TYPE_PAYLOAD_SCHEMA_*`).
pub mod schema_id {
    /// The first id a producer may choose.
    pub const STATIC_START: u64 = 1 << 24;
    /// The first id a tool gives.
    pub const DYNAMIC_START: u64 = 1 << 32;
    /// A blob other payloads of the event point into (not shown itself).
    pub const REFERENCED: u64 = 1022;
    /// Raw bytes.
    pub const RAW: u64 = 1023;
}

/// `NVTX_PAYLOAD_ENTRY_FLAG_*`.
pub mod entry_flag {
    /// `NVTX_PAYLOAD_ENTRY_FLAG_COUNTER`: a counter of a counter group.
    pub const COUNTER: u64 = 4 << 12;
    /// The entry holds a pointer to its value.
    pub const POINTER: u64 = 1 << 1;
    /// The entry holds an offset from the payload's start to its value.
    pub const OFFSET_FROM_BASE: u64 = 1 << 2;
    /// The entry holds an offset from itself to its value.
    pub const OFFSET_FROM_HERE: u64 = 1 << 3;
    /// The array kinds, in these bits.
    pub const ARRAY_MASK: u64 = 7 << 4;
    /// Length: `array_or_union_detail`.
    pub const ARRAY_FIXED_SIZE: u64 = 1 << 4;
    /// Ends at an element whose bytes are all zero.
    pub const ARRAY_ZERO_TERMINATED: u64 = 2 << 4;
    /// Length: the value of the earlier entry `array_or_union_detail`.
    pub const ARRAY_LENGTH_INDEX: u64 = 3 << 4;
    /// Length: in the event's payload `array_or_union_detail`.
    pub const ARRAY_LENGTH_PAYLOAD_INDEX: u64 = 4 << 4;
    /// `NVTX_PAYLOAD_ENTRY_FLAG_DEEP_COPY`.
    pub const DEEP_COPY: u64 = 1 << 8;
    /// Not to be shown.
    pub const HIDE: u64 = 1 << 9;
    /// The entry is the event's message.
    pub const EVENT_MESSAGE: u64 = 1 << 10;
    /// The entry is a timestamp (its time domain in its time semantics).
    pub const TIMESTAMP: u64 = 2 << 10;
    /// The event roles, in these bits.
    pub const ROLE_MASK: u64 = 7 << 12;
    /// Role: the timestamp where a range begins.
    pub const RANGE_BEGIN: u64 = 1 << 12;
    /// Role: the timestamp where a range ends.
    pub const RANGE_END: u64 = 2 << 12;
    /// Role: the timestamp of a mark.
    pub const MARK: u64 = 3 << 12;
}

/// `nvtxSemanticsHeader_t` (16 bytes): one link of an entry's semantics.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SemanticsHeader {
    /// `sizeof` the whole semantic struct.
    pub struct_size: u32,
    /// Which semantic ([`SEMANTIC_TIME`], ...).
    pub semantic_id: u16,
    /// Its version.
    pub version: u16,
    /// The next link, or NULL.
    pub next: *const SemanticsHeader,
}

/// `NVTX_SEMANTIC_ID_TIME_V1`: a [`SemanticsTime`].
pub const SEMANTIC_TIME: u16 = 2;

/// `nvtxSemanticsTime_t` (24 bytes): a timestamp entry's time domain.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SemanticsTime {
    /// The link.
    pub header: SemanticsHeader,
    /// A registered time domain, or a [`timestamp_type`].
    pub time_domain_id: u64,
}

/// `NVTX_TIMESTAMP_TYPE_*`: well-known time sources, usable as time domains.
pub mod timestamp_type {
    /// `nvtxTimestampGet()`'s: the tool's clock.
    pub const TOOL_PROVIDED: u64 = 1;
    /// The CPU's time-stamp counter.
    pub const CPU_TSC: u64 = 10;
    /// The CPU's time-stamp counter, not virtualized.
    pub const CPU_TSC_NONVIRTUALIZED: u64 = 11;
    /// `clock_gettime(CLOCK_MONOTONIC)`, in ns.
    pub const CPU_CLOCK_GETTIME_MONOTONIC: u64 = 14;
}

/// `NVTX_SEMANTIC_ID_TIME_V1`'s version (`NVTX_TIME_SEMANTIC_VERSION`).
pub const TIME_SEMANTIC_VERSION: u16 = 1;

/// `NVTX_SEMANTIC_ID_COUNTERS_V1`: a [`SemanticsCounter`].
pub const SEMANTIC_COUNTERS: u16 = 5;
/// `NVTX_COUNTER_SEMANTIC_VERSION`.
pub const COUNTER_SEMANTIC_VERSION: u16 = 2;

/// `nvtxSemanticsCounter_t` (72 bytes): how a counter's values are read.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SemanticsCounter {
    /// The link.
    pub header: SemanticsHeader,
    /// `NVTX_COUNTER_FLAG_*`: value type, interpolation, limits given.
    pub flags: u64,
    /// Its unit (a C string), or NULL.
    pub unit: *const std::ffi::c_char,
    /// The unit's scale: numerator.
    pub unit_scale_numerator: u64,
    /// The unit's scale: denominator.
    pub unit_scale_denominator: u64,
    /// `NVTX_COUNTER_LIMIT_*`: how `min` and `max` are read.
    pub limit_type: i64,
    /// The smallest value (bits of an i64, u64 or f64).
    pub min: u64,
    /// The largest value.
    pub max: u64,
}

/// `nvtxScopeAttr_t` (32 bytes): a scope to register, by path.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ScopeAttr {
    /// `sizeof(nvtxScopeAttr_t)`.
    pub struct_size: usize,
    /// Its path (a C string), e.g. `/node/gpu0`.
    pub path: *const std::ffi::c_char,
    /// The scope it is under (`NVTX_SCOPE_*`, 0: none).
    pub parent_scope: u64,
    /// The id asked for (0: the tool chooses).
    pub scope_id: u64,
}

/// `nvtxEventBatch_t` (64 bytes): deferred events of one schema.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct EventBatch {
    /// The events' schema.
    pub event_schema_id: u64,
    /// Bytes at `events`.
    pub size: usize,
    /// The events, one after another.
    pub events: *const c_void,
    /// Their default scope.
    pub scope: u64,
    /// `NVTX_BATCH_FLAG_*` (timestamp order).
    pub flags: u64,
    /// Data the events point into, or NULL.
    pub flex_data: *const c_void,
    /// Bytes of it used.
    pub flex_data_size: usize,
    /// Where its used part starts.
    pub flex_data_offset: usize,
}

/// `NVTX_PAYLOAD_ENTRY_TYPE_*`.
pub mod entry_type {
    /// `NVTX_PAYLOAD_ENTRY_TYPE_CHAR`.
    pub const CHAR: u64 = 1;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_UCHAR`.
    pub const UCHAR: u64 = 2;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_SHORT`.
    pub const SHORT: u64 = 3;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_USHORT`.
    pub const USHORT: u64 = 4;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_INT`.
    pub const INT: u64 = 5;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_UINT`.
    pub const UINT: u64 = 6;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_LONG`.
    pub const LONG: u64 = 7;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_ULONG`.
    pub const ULONG: u64 = 8;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_LONGLONG`.
    pub const LONGLONG: u64 = 9;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_ULONGLONG`.
    pub const ULONGLONG: u64 = 10;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_INT8`.
    pub const INT8: u64 = 11;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_UINT8`.
    pub const UINT8: u64 = 12;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_INT16`.
    pub const INT16: u64 = 13;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_UINT16`.
    pub const UINT16: u64 = 14;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_INT32`.
    pub const INT32: u64 = 15;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_UINT32`.
    pub const UINT32: u64 = 16;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_INT64`.
    pub const INT64: u64 = 17;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_UINT64`.
    pub const UINT64: u64 = 18;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT`.
    pub const FLOAT: u64 = 19;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE`.
    pub const DOUBLE: u64 = 20;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_LONGDOUBLE`.
    pub const LONGDOUBLE: u64 = 21;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_SIZE`.
    pub const SIZE: u64 = 22;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_ADDRESS`.
    pub const ADDRESS: u64 = 23;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_WCHAR`.
    pub const WCHAR: u64 = 24;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_CHAR8`.
    pub const CHAR8: u64 = 25;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_CHAR16`.
    pub const CHAR16: u64 = 26;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_CHAR32`.
    pub const CHAR32: u64 = 27;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_BYTE`.
    pub const BYTE: u64 = 32;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_INT128`.
    pub const INT128: u64 = 33;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_UINT128`.
    pub const UINT128: u64 = 34;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT16`.
    pub const FLOAT16: u64 = 42;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT32`.
    pub const FLOAT32: u64 = 43;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT64`.
    pub const FLOAT64: u64 = 44;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT128`.
    pub const FLOAT128: u64 = 45;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_BF16`.
    pub const BF16: u64 = 50;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_TF32`.
    pub const TF32: u64 = 52;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_RANGE_ID`.
    pub const RANGE_ID: u64 = 67;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_CATEGORY`.
    pub const CATEGORY: u64 = 68;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_COLOR_ARGB`.
    pub const COLOR_ARGB: u64 = 69;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_SCOPE_ID`.
    pub const SCOPE_ID: u64 = 70;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT32`.
    pub const PID_UINT32: u64 = 71;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT64`.
    pub const PID_UINT64: u64 = 72;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT32`.
    pub const TID_UINT32: u64 = 73;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT64`.
    pub const TID_UINT64: u64 = 74;
    /// `char*` strings (inline when `array_or_union_detail` > 0), in the
    /// locale's encoding, UTF-8, UTF-16 and UTF-32.
    pub const CSTRING: u64 = 75;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF8`.
    pub const CSTRING_UTF8: u64 = 76;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF16`.
    pub const CSTRING_UTF16: u64 = 77;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF32`.
    pub const CSTRING_UTF32: u64 = 78;
    /// An `nvtxStringHandle_t`.
    pub const REGISTERED_STRING_HANDLE: u64 = 80;
    /// `NVTX_PAYLOAD_ENTRY_TYPE_UNION_SELECTOR`.
    pub const UNION_SELECTOR: u64 = 100;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_nvidias() {
        assert_eq!(std::mem::size_of::<PayloadData>(), 24);
        assert_eq!(std::mem::size_of::<SchemaEntry>(), 64);
        assert_eq!(std::mem::size_of::<SchemaAttr>(), 80);
        assert_eq!(std::mem::size_of::<EnumEntry>(), 24);
        assert_eq!(std::mem::size_of::<EnumAttr>(), 56);
        assert_eq!(std::mem::size_of::<SemanticsTime>(), 24);
        assert_eq!(std::mem::size_of::<SemanticsCounter>(), 72);
        assert_eq!(std::mem::size_of::<ScopeAttr>(), 32);
        assert_eq!(std::mem::size_of::<EventBatch>(), 64);
    }
}
