//! Extended payloads (NVTX's payload extension): schemas that describe a
//! struct's fields, registered once per domain, and the structs events
//! carry (`nvtxr_event_t.payloads`), which the tool shows field by field.
//!
//! The entry types, entry flags and the layouts of `nvtxr_payload_data_t`,
//! `nvtxr_payload_entry_t` and `nvtxr_payload_enum_value_t` are NVIDIA's
//! (`nvToolsExtPayload.h`), checked at compile time; the registration
//! structs are nvtxr's, sized like `nvtxr_event_t` so that they can grow.

use super::boundary::exported;
use super::codes::{nvtxr_status_t, status, NVTXR_ERROR_NULL_ARGUMENT};
use super::domain::{domain_ref, nvtxr_domain_t};
use super::sized::read_sized;
use nvtx_protocol::payload::{
    enum_field, schema_field, EnumAttr, EnumEntry, PayloadData, SchemaAttr, SchemaEntry,
};
use nvtxr_engine::payloads;
use std::ffi::{c_char, c_void};

/// One payload of an event: `size` bytes at `data`, laid out as the schema
/// `schema_id` says (an id from `nvtxr_payload_schema_register`, or a
/// `NVTXR_TYPE_*` for an array of that type). Read during the call only.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvtxr_payload_data_t {
    /// The schema (or `NVTXR_TYPE_*`) the data follows.
    pub schema_id: u64,
    /// Bytes at `data`.
    pub size: usize,
    /// The data.
    pub data: *const c_void,
}

/// One field of a schema (NVIDIA's `nvtxPayloadSchemaEntry_t`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvtxr_payload_entry_t {
    /// `NVTXR_ENTRY_*` flags, or 0.
    pub flags: u64,
    /// A `NVTXR_TYPE_*`, or the id of a registered schema (a nested struct)
    /// or enum.
    pub r#type: u64,
    /// Its name (UTF-8), or NULL.
    pub name: *const c_char,
    /// Its description, or NULL.
    pub description: *const c_char,
    /// A fixed array's length, an in-place string's length in code units,
    /// or (`NVTXR_ENTRY_ARRAY_LENGTH_INDEX`) the index of the earlier entry
    /// holding the length.
    pub length: u64,
    /// Its offset in the struct (`offsetof`); 0 after the first entry:
    /// computed by natural alignment.
    pub offset: u64,
    /// NULL, or for a `NVTXR_ENTRY_TIMESTAMP` field read on another clock
    /// than the tool's, its `nvtxr_time_semantics_t` (read when the schema
    /// is registered).
    pub semantics: *const c_void,
    /// NULL.
    pub reserved: *const c_void,
}

/// A schema to register. Initialize it with `NVTXR_PAYLOAD_SCHEMA_INIT`
/// (size set, every other field zero), then set `kind`, `entries` and
/// `entry_count`. It can grow as `nvtxr_event_t` does.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvtxr_payload_schema_t {
    /// `sizeof(nvtxr_payload_schema_t)` in the caller's header.
    pub size: u32,
    /// `NVTXR_SCHEMA_STATIC` (a C struct) or `NVTXR_SCHEMA_DYNAMIC` (fields
    /// one after another, variable-length ones included).
    pub kind: u32,
    /// Its name (UTF-8), or NULL; the tool may name an event after it.
    pub name: *const c_char,
    /// Its fields, in order.
    pub entries: *const nvtxr_payload_entry_t,
    /// How many.
    pub entry_count: usize,
    /// A static schema's `sizeof`; 0: computed.
    pub static_size: usize,
    /// `#pragma pack(N)`'s N; 0: natural alignment.
    pub pack_align: usize,
    /// The id wanted, at or above `NVTXR_SCHEMA_ID_STATIC_START` and below
    /// 2^32; 0: the tool chooses.
    pub schema_id: u64,
}

/// One value of an enum (NVIDIA's `nvtxPayloadEnum_t`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvtxr_payload_enum_value_t {
    /// Its name (UTF-8).
    pub name: *const c_char,
    /// Its value.
    pub value: u64,
    /// 1 for a bit flag (values shown as `A|B`), else 0.
    pub is_flag: i8,
}

/// An enum to register, as a schema entry's type. Initialize it with
/// `NVTXR_PAYLOAD_ENUM_INIT`; it can grow as `nvtxr_event_t` does.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvtxr_payload_enum_t {
    /// `sizeof(nvtxr_payload_enum_t)` in the caller's header.
    pub size: u32,
    /// Bytes a value takes: 1, 2, 4 or 8.
    pub value_size: u32,
    /// Its name (UTF-8), or NULL.
    pub name: *const c_char,
    /// Its values.
    pub values: *const nvtxr_payload_enum_value_t,
    /// How many.
    pub value_count: usize,
    /// The id wanted, as `nvtxr_payload_schema_t.schema_id`.
    pub schema_id: u64,
}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<nvtxr_payload_data_t>() == size_of::<PayloadData>());
    assert!(offset_of!(nvtxr_payload_data_t, data) == offset_of!(PayloadData, payload));
    assert!(size_of::<nvtxr_payload_entry_t>() == size_of::<SchemaEntry>());
    assert!(
        offset_of!(nvtxr_payload_entry_t, length) == offset_of!(SchemaEntry, array_or_union_detail)
    );
    assert!(offset_of!(nvtxr_payload_entry_t, offset) == offset_of!(SchemaEntry, offset));
    assert!(size_of::<nvtxr_payload_enum_value_t>() == size_of::<EnumEntry>());
    assert!(offset_of!(nvtxr_payload_enum_value_t, is_flag) == offset_of!(EnumEntry, is_flag));
};

/// `nvtxr_payload_schema_t.kind`: a C struct of a fixed size.
pub const NVTXR_SCHEMA_STATIC: u32 = 1;
/// `nvtxr_payload_schema_t.kind`: fields one after another, each aligned,
/// variable-length arrays and strings included.
pub const NVTXR_SCHEMA_DYNAMIC: u32 = 2;
/// The first schema id a program may ask for.
pub const NVTXR_SCHEMA_ID_STATIC_START: u64 = 1 << 24;
/// `nvtxr_payload_entry_t.flags`: the field is a pointer to its value (or array).
pub const NVTXR_ENTRY_POINTER: u64 = 1 << 1;
/// `nvtxr_payload_entry_t.flags`: an array of `length` elements.
pub const NVTXR_ENTRY_ARRAY_FIXED_SIZE: u64 = 1 << 4;
/// `nvtxr_payload_entry_t.flags`: an array ending at an all-zero element.
pub const NVTXR_ENTRY_ARRAY_ZERO_TERMINATED: u64 = 2 << 4;
/// `nvtxr_payload_entry_t.flags`: an array whose length is the value of
/// the earlier entry number `length`.
pub const NVTXR_ENTRY_ARRAY_LENGTH_INDEX: u64 = 3 << 4;
/// `nvtxr_payload_entry_t.flags`: not shown.
pub const NVTXR_ENTRY_HIDE: u64 = 1 << 9;
/// `nvtxr_payload_entry_t.flags`: the field's value is the event's message.
pub const NVTXR_ENTRY_EVENT_MESSAGE: u64 = 1 << 10;
/// `nvtxr_payload_entry_t.flags`: a timestamp (from `nvtxr_timestamp`) of
/// a deferred event: with `NVTXR_ENTRY_RANGE_BEGIN`, `_RANGE_END` or
/// `_MARK`, where the event begins, ends or happens.
pub const NVTXR_ENTRY_TIMESTAMP: u64 = 2 << 10;
/// `nvtxr_payload_entry_t.flags`: with `NVTXR_ENTRY_TIMESTAMP`, a range's begin.
pub const NVTXR_ENTRY_RANGE_BEGIN: u64 = 1 << 12;
/// `nvtxr_payload_entry_t.flags`: with `NVTXR_ENTRY_TIMESTAMP`, a range's end.
pub const NVTXR_ENTRY_RANGE_END: u64 = 2 << 12;
/// `nvtxr_payload_entry_t.flags`: with `NVTXR_ENTRY_TIMESTAMP`, a mark's time.
pub const NVTXR_ENTRY_MARK: u64 = 3 << 12;
const _: () = {
    use nvtx_protocol::payload::{entry_flag as f, schema_id, schema_type};
    assert!(NVTXR_SCHEMA_STATIC as u64 == schema_type::STATIC);
    assert!(NVTXR_SCHEMA_DYNAMIC as u64 == schema_type::DYNAMIC);
    assert!(NVTXR_SCHEMA_ID_STATIC_START == schema_id::STATIC_START);
    assert!(NVTXR_ENTRY_POINTER == f::POINTER);
    assert!(NVTXR_ENTRY_ARRAY_FIXED_SIZE == f::ARRAY_FIXED_SIZE);
    assert!(NVTXR_ENTRY_ARRAY_ZERO_TERMINATED == f::ARRAY_ZERO_TERMINATED);
    assert!(NVTXR_ENTRY_ARRAY_LENGTH_INDEX == f::ARRAY_LENGTH_INDEX);
    assert!(NVTXR_ENTRY_HIDE == f::HIDE);
    assert!(NVTXR_ENTRY_EVENT_MESSAGE == f::EVENT_MESSAGE);
    assert!(NVTXR_ENTRY_TIMESTAMP == f::TIMESTAMP);
    assert!(NVTXR_ENTRY_RANGE_BEGIN == f::RANGE_BEGIN);
    assert!(NVTXR_ENTRY_RANGE_END == f::RANGE_END);
    assert!(NVTXR_ENTRY_MARK == f::MARK);
};

/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_CHAR`.
pub const NVTXR_TYPE_CHAR: u64 = 1;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_UCHAR`.
pub const NVTXR_TYPE_UCHAR: u64 = 2;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_SHORT`.
pub const NVTXR_TYPE_SHORT: u64 = 3;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_USHORT`.
pub const NVTXR_TYPE_USHORT: u64 = 4;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_INT`.
pub const NVTXR_TYPE_INT: u64 = 5;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_UINT`.
pub const NVTXR_TYPE_UINT: u64 = 6;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_LONG`.
pub const NVTXR_TYPE_LONG: u64 = 7;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_ULONG`.
pub const NVTXR_TYPE_ULONG: u64 = 8;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_LONGLONG`.
pub const NVTXR_TYPE_LONGLONG: u64 = 9;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_ULONGLONG`.
pub const NVTXR_TYPE_ULONGLONG: u64 = 10;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_INT8`.
pub const NVTXR_TYPE_INT8: u64 = 11;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_UINT8`.
pub const NVTXR_TYPE_UINT8: u64 = 12;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_INT16`.
pub const NVTXR_TYPE_INT16: u64 = 13;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_UINT16`.
pub const NVTXR_TYPE_UINT16: u64 = 14;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_INT32`.
pub const NVTXR_TYPE_INT32: u64 = 15;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_UINT32`.
pub const NVTXR_TYPE_UINT32: u64 = 16;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_INT64`.
pub const NVTXR_TYPE_INT64: u64 = 17;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_UINT64`.
pub const NVTXR_TYPE_UINT64: u64 = 18;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT`.
pub const NVTXR_TYPE_FLOAT: u64 = 19;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_DOUBLE`.
pub const NVTXR_TYPE_DOUBLE: u64 = 20;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_LONGDOUBLE`.
pub const NVTXR_TYPE_LONGDOUBLE: u64 = 21;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_SIZE`.
pub const NVTXR_TYPE_SIZE: u64 = 22;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_ADDRESS`.
pub const NVTXR_TYPE_ADDRESS: u64 = 23;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_WCHAR`.
pub const NVTXR_TYPE_WCHAR: u64 = 24;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_CHAR8`.
pub const NVTXR_TYPE_CHAR8: u64 = 25;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_CHAR16`.
pub const NVTXR_TYPE_CHAR16: u64 = 26;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_CHAR32`.
pub const NVTXR_TYPE_CHAR32: u64 = 27;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_BYTE`.
pub const NVTXR_TYPE_BYTE: u64 = 32;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_INT128`.
pub const NVTXR_TYPE_INT128: u64 = 33;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_UINT128`.
pub const NVTXR_TYPE_UINT128: u64 = 34;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT16`.
pub const NVTXR_TYPE_FLOAT16: u64 = 42;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT32`.
pub const NVTXR_TYPE_FLOAT32: u64 = 43;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT64`.
pub const NVTXR_TYPE_FLOAT64: u64 = 44;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_FLOAT128`.
pub const NVTXR_TYPE_FLOAT128: u64 = 45;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_BF16`.
pub const NVTXR_TYPE_BF16: u64 = 50;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_TF32`.
pub const NVTXR_TYPE_TF32: u64 = 52;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_RANGE_ID`.
pub const NVTXR_TYPE_RANGE_ID: u64 = 67;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_CATEGORY`.
pub const NVTXR_TYPE_CATEGORY: u64 = 68;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_COLOR_ARGB`.
pub const NVTXR_TYPE_COLOR_ARGB: u64 = 69;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_SCOPE_ID`.
pub const NVTXR_TYPE_SCOPE_ID: u64 = 70;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT32`.
pub const NVTXR_TYPE_PID_UINT32: u64 = 71;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_PID_UINT64`.
pub const NVTXR_TYPE_PID_UINT64: u64 = 72;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT32`.
pub const NVTXR_TYPE_TID_UINT32: u64 = 73;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_TID_UINT64`.
pub const NVTXR_TYPE_TID_UINT64: u64 = 74;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_CSTRING`: `char` strings in the locale's encoding: in place (`length` code units) or, with `length` 0 or `NVTXR_ENTRY_POINTER`, a pointer to a NUL-terminated one.
pub const NVTXR_TYPE_CSTRING: u64 = 75;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF8`: UTF-8 strings, as `NVTXR_TYPE_CSTRING`.
pub const NVTXR_TYPE_CSTRING_UTF8: u64 = 76;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF16`: UTF-16 strings, as `NVTXR_TYPE_CSTRING`.
pub const NVTXR_TYPE_CSTRING_UTF16: u64 = 77;
/// Entry type `NVTX_PAYLOAD_ENTRY_TYPE_CSTRING_UTF32`: UTF-32 strings, as `NVTXR_TYPE_CSTRING`.
pub const NVTXR_TYPE_CSTRING_UTF32: u64 = 78;
const _: () = {
    use nvtx_protocol::payload::entry_type as t;
    assert!(NVTXR_TYPE_CHAR == t::CHAR);
    assert!(NVTXR_TYPE_UCHAR == t::UCHAR);
    assert!(NVTXR_TYPE_SHORT == t::SHORT);
    assert!(NVTXR_TYPE_USHORT == t::USHORT);
    assert!(NVTXR_TYPE_INT == t::INT);
    assert!(NVTXR_TYPE_UINT == t::UINT);
    assert!(NVTXR_TYPE_LONG == t::LONG);
    assert!(NVTXR_TYPE_ULONG == t::ULONG);
    assert!(NVTXR_TYPE_LONGLONG == t::LONGLONG);
    assert!(NVTXR_TYPE_ULONGLONG == t::ULONGLONG);
    assert!(NVTXR_TYPE_INT8 == t::INT8);
    assert!(NVTXR_TYPE_UINT8 == t::UINT8);
    assert!(NVTXR_TYPE_INT16 == t::INT16);
    assert!(NVTXR_TYPE_UINT16 == t::UINT16);
    assert!(NVTXR_TYPE_INT32 == t::INT32);
    assert!(NVTXR_TYPE_UINT32 == t::UINT32);
    assert!(NVTXR_TYPE_INT64 == t::INT64);
    assert!(NVTXR_TYPE_UINT64 == t::UINT64);
    assert!(NVTXR_TYPE_FLOAT == t::FLOAT);
    assert!(NVTXR_TYPE_DOUBLE == t::DOUBLE);
    assert!(NVTXR_TYPE_LONGDOUBLE == t::LONGDOUBLE);
    assert!(NVTXR_TYPE_SIZE == t::SIZE);
    assert!(NVTXR_TYPE_ADDRESS == t::ADDRESS);
    assert!(NVTXR_TYPE_WCHAR == t::WCHAR);
    assert!(NVTXR_TYPE_CHAR8 == t::CHAR8);
    assert!(NVTXR_TYPE_CHAR16 == t::CHAR16);
    assert!(NVTXR_TYPE_CHAR32 == t::CHAR32);
    assert!(NVTXR_TYPE_BYTE == t::BYTE);
    assert!(NVTXR_TYPE_INT128 == t::INT128);
    assert!(NVTXR_TYPE_UINT128 == t::UINT128);
    assert!(NVTXR_TYPE_FLOAT16 == t::FLOAT16);
    assert!(NVTXR_TYPE_FLOAT32 == t::FLOAT32);
    assert!(NVTXR_TYPE_FLOAT64 == t::FLOAT64);
    assert!(NVTXR_TYPE_FLOAT128 == t::FLOAT128);
    assert!(NVTXR_TYPE_BF16 == t::BF16);
    assert!(NVTXR_TYPE_TF32 == t::TF32);
    assert!(NVTXR_TYPE_RANGE_ID == t::RANGE_ID);
    assert!(NVTXR_TYPE_CATEGORY == t::CATEGORY);
    assert!(NVTXR_TYPE_COLOR_ARGB == t::COLOR_ARGB);
    assert!(NVTXR_TYPE_SCOPE_ID == t::SCOPE_ID);
    assert!(NVTXR_TYPE_PID_UINT32 == t::PID_UINT32);
    assert!(NVTXR_TYPE_PID_UINT64 == t::PID_UINT64);
    assert!(NVTXR_TYPE_TID_UINT32 == t::TID_UINT32);
    assert!(NVTXR_TYPE_TID_UINT64 == t::TID_UINT64);
    assert!(NVTXR_TYPE_CSTRING == t::CSTRING);
    assert!(NVTXR_TYPE_CSTRING_UTF8 == t::CSTRING_UTF8);
    assert!(NVTXR_TYPE_CSTRING_UTF16 == t::CSTRING_UTF16);
    assert!(NVTXR_TYPE_CSTRING_UTF32 == t::CSTRING_UTF32);
};

/// Registers a schema in `domain` (NULL: the default domain): the tool
/// learns the fields of structs that events will carry
/// (`nvtxr_event_t.payloads`). Everything is read during the call only.
///
/// Returns the schema's id (the one asked for, or the tool's); 0 with no
/// tool, a tool without the payload extension, a schema the tool refuses,
/// or bad arguments (NULL, an uninitialized size, no entries). An event
/// whose payload names schema 0 shows raw bytes, so callers never need to
/// branch. Thread-safe; not async-signal-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_payload_schema_register(
    domain: *const nvtxr_domain_t,
    schema: *const nvtxr_payload_schema_t,
) -> u64 {
    exported!(unsafe {
        let Ok(s) = read_sized(
            schema,
            std::mem::offset_of!(nvtxr_payload_schema_t, entry_count) + 8,
            "nvtxr_payload_schema_t.size is not set",
        ) else {
            return 0;
        };
        if s.entries.is_null() || s.entry_count == 0 {
            return 0;
        }
        let set = |bit: u64, present: bool| if present { bit } else { 0 };
        let attributes = SchemaAttr {
            field_mask: schema_field::TYPE
                | schema_field::ENTRIES
                | schema_field::NUM_ENTRIES
                | set(schema_field::NAME, !s.name.is_null())
                | set(schema_field::STATIC_SIZE, s.static_size != 0)
                | set(schema_field::ALIGNMENT, s.pack_align != 0)
                | set(schema_field::SCHEMA_ID, s.schema_id != 0),
            name: s.name,
            type_: u64::from(s.kind),
            flags: 0,
            entries: s.entries.cast::<SchemaEntry>(),
            num_entries: s.entry_count,
            payload_static_size: s.static_size,
            pack_align: s.pack_align,
            schema_id: s.schema_id,
            extension: std::ptr::null(),
        };
        domain_ref(domain)
            .and_then(|d| payloads::register_schema(d, &attributes))
            .unwrap_or(0)
    })
}

/// Registers an enum in `domain`, for schema entries of its id (values
/// shown by name). As `nvtxr_payload_schema_register`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_payload_enum_register(
    domain: *const nvtxr_domain_t,
    e: *const nvtxr_payload_enum_t,
) -> u64 {
    exported!(unsafe {
        let Ok(e) = read_sized(
            e,
            std::mem::offset_of!(nvtxr_payload_enum_t, value_count) + 8,
            "nvtxr_payload_enum_t.size is not set",
        ) else {
            return 0;
        };
        if e.values.is_null() {
            return 0;
        }
        let attributes = EnumAttr {
            field_mask: enum_field::ENTRIES
                | enum_field::NUM_ENTRIES
                | enum_field::SIZE
                | if e.name.is_null() {
                    0
                } else {
                    enum_field::NAME
                }
                | if e.schema_id == 0 {
                    0
                } else {
                    enum_field::SCHEMA_ID
                },
            name: e.name,
            entries: e.values.cast::<EnumEntry>(),
            num_entries: e.value_count,
            size_of_enum: e.value_size as usize,
            schema_id: e.schema_id,
            extension: std::ptr::null(),
        };
        domain_ref(domain)
            .and_then(|d| payloads::register_enum(d, &attributes))
            .unwrap_or(0)
    })
}

/// A timestamp for deferred events: the tool's clock now, to put in a
/// payload's `NVTXR_ENTRY_TIMESTAMP` field and submit later with
/// `nvtxr_event_submit`. 0 with no tool. Thread-safe and
/// async-signal-safe when the tool's clock is.
#[unsafe(no_mangle)]
pub extern "C" fn nvtxr_timestamp() -> i64 {
    exported!({ payloads::timestamp() })
}

/// Submits a deferred event of `domain` (NULL: the default domain): an
/// event that happened earlier, `count` payloads at `payloads` whose
/// `NVTXR_ENTRY_TIMESTAMP` fields say when (a range from its
/// `NVTXR_ENTRY_RANGE_BEGIN` to its `NVTXR_ENTRY_RANGE_END`, or a mark at
/// its `NVTXR_ENTRY_MARK`). Read during the call only.
///
/// Returns `NVTXR_OK`, `NVTXR_ERROR_NULL_ARGUMENT` for NULL payloads with a
/// count, or a bad domain's error. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_event_submit(
    domain: *const nvtxr_domain_t,
    payloads: *const nvtxr_payload_data_t,
    count: usize,
) -> nvtxr_status_t {
    exported!(unsafe {
        if payloads.is_null() && count > 0 {
            return NVTXR_ERROR_NULL_ARGUMENT;
        }
        status(domain_ref(domain).and_then(|d| payloads::submit(d, payload_data(payloads), count)))
    })
}

/// The engine's form of an event's payloads.
pub(super) fn payload_data(p: *const nvtxr_payload_data_t) -> *const PayloadData {
    p.cast()
}
