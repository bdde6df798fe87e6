//! NVTXW, NVIDIA's NVTX Writer API (`nvtxw3/nvtxw3.h`): a backend library
//! that takes pre-collected events (with their own timestamps) and writes
//! them where it decides. A producer resolves the backend's
//! [`GET_INTERFACE`] symbol, asks it for [`INTERFACE_VERSION`]'s function
//! table ([`Interface`]) and calls through it. Also the layouts of
//! `nvtxw3_event_helpers.h`'s event payloads, whose schemas
//! [`EVENT_SCHEMAS`] lists entry by entry.

use crate::payload::{entry_flag, entry_type, schema_flag, schema_type, SchemaEntry};
use crate::Handle;
use std::ffi::{c_char, c_void};

/// `NVTXW_GET_INTERFACE_SYMBOL_NAME`.
pub const GET_INTERFACE: &[u8] = b"nvtxwGetInterface\0";
/// `NVTXW_FINALIZE_SYMBOL_NAME`: an optional whole-backend cleanup.
pub const FINALIZE: &[u8] = b"nvtxwFinalize\0";
/// `NVTXW_INTERFACE_VERSION`: [`Interface`]'s.
pub const INTERFACE_VERSION: i32 = 2;

/// `nvtxwGetInterface_t`.
pub type GetInterface = unsafe extern "C" fn(version: i32, out: *mut *const c_void) -> i32;
/// `nvtxwFinalize_t`.
pub type Finalize = unsafe extern "C" fn();

/// `NVTXW_RESULT_*`.
pub mod result {
    /// `NVTXW_RESULT_SUCCESS`.
    pub const SUCCESS: i32 = 0;
    /// `NVTXW_RESULT_FAILED`.
    pub const FAILED: i32 = 1;
    /// `NVTXW_RESULT_INVALID_ARGUMENT`.
    pub const INVALID_ARGUMENT: i32 = 2;
    /// `NVTXW_RESULT_LIBRARY_NOT_FOUND`.
    pub const LIBRARY_NOT_FOUND: i32 = 3;
    /// `NVTXW_RESULT_LIBRARY_LOAD_FAILED`.
    pub const LIBRARY_LOAD_FAILED: i32 = 4;
    /// `NVTXW_RESULT_LIBRARY_SYMBOL_MISSING`.
    pub const LIBRARY_SYMBOL_MISSING: i32 = 5;
    /// `NVTXW_RESULT_INTERFACE_VERSION_NOT_SUPPORTED`.
    pub const INTERFACE_VERSION_NOT_SUPPORTED: i32 = 6;
    /// `NVTXW_RESULT_NOT_SUPPORTED`: a valid call the backend does not support.
    pub const NOT_SUPPORTED: i32 = 7;
}

/// An opaque session or stream handle.
pub type Object = *mut c_void;

/// `nvtxwSessionAttributes_t` (24 bytes).
#[repr(C)]
pub struct SessionAttributes {
    /// `sizeof` the struct.
    pub struct_size: usize,
    /// Its name (a C string), or NULL.
    pub name: *const c_char,
    /// `key=value` options separated by `\r`, `\n` or `|`.
    pub config_string: *const c_char,
}

/// `nvtxwDomainAttributes_t` (16 bytes).
#[repr(C)]
pub struct DomainAttributes {
    /// `sizeof` the struct.
    pub struct_size: usize,
    /// NULL or empty: the session's default domain.
    pub name: *const c_char,
}

/// `nvtxwStreamAttributes_t` (56 bytes).
#[repr(C)]
pub struct StreamAttributes {
    /// `sizeof` the struct.
    pub struct_size: usize,
    /// Its name (a C string), or NULL.
    pub name: *const c_char,
    /// NULL: the session's default domain.
    pub domain: Handle,
    /// Its default scope.
    pub scope_id: u64,
    /// Its default time domain (`NVTX_TIMESTAMP_TYPE_*` or a registered one).
    pub time_domain_id: u64,
    /// `NVTXW_STREAM_ORDER_INTERLEAVING_*`.
    pub order_interleaving: i16,
    /// `NVTXW_STREAM_ORDERING_TYPE_*`.
    pub ordering_type: i16,
    /// `NVTXW_STREAM_ORDERING_SKID_*`.
    pub ordering_skid: i32,
    /// The skid, in `ordering_skid`'s unit.
    pub ordering_skid_amount: i64,
}

/// `nvtxEventBatch_t`: events of one schema (the payload extension's).
pub use crate::payload::EventBatch;

type R = i32;

/// `nvtxwInterface_v2_t`: the backend's functions (the trailing reserved
/// slots are not read).
#[repr(C)]
pub struct Interface {
    /// `SessionBegin`.
    pub session_begin: unsafe extern "C" fn(*const SessionAttributes, *mut Object) -> R,
    /// `SessionEnd`.
    pub session_end: unsafe extern "C" fn(Object) -> R,
    /// `DomainRegister`.
    pub domain_register: unsafe extern "C" fn(Object, *const DomainAttributes, *mut Handle) -> R,
    /// `CategoryRegister`.
    pub category_register: unsafe extern "C" fn(Handle, u32, *const c_char) -> R,
    /// `StringRegister`.
    pub string_register: unsafe extern "C" fn(Handle, *const c_char, *mut Handle) -> R,
    /// `ResourceRegister`.
    pub resource_register: unsafe extern "C" fn(Handle, *const c_void) -> R,
    /// `ScopeRegister`.
    pub scope_register:
        unsafe extern "C" fn(Handle, *const crate::payload::ScopeAttr, *mut u64) -> R,
    /// `SchemaRegister`.
    pub schema_register:
        unsafe extern "C" fn(Handle, *const crate::payload::SchemaAttr, *mut u64) -> R,
    /// `EnumRegister`.
    pub enum_register: unsafe extern "C" fn(Handle, *const crate::payload::EnumAttr, *mut u64) -> R,
    /// `CounterRegister`.
    pub counter_register:
        unsafe extern "C" fn(Handle, *const crate::ext::CounterAttr, *mut u64) -> R,
    /// `TimeDomainRegister`.
    pub time_domain_register:
        unsafe extern "C" fn(Handle, *const crate::time::TimeDomainAttr, *mut u64) -> R,
    /// `StreamOpen`.
    pub stream_open: unsafe extern "C" fn(Object, *const StreamAttributes, *mut Object) -> R,
    /// `StreamClose`.
    pub stream_close: unsafe extern "C" fn(Object) -> R,
    /// `EventWrite`.
    pub event_write: unsafe extern "C" fn(Object, *const crate::payload::PayloadData, usize) -> R,
    /// `EventBatchWrite`.
    pub event_batch_write: unsafe extern "C" fn(Object, *const EventBatch) -> R,
    /// `CounterWrite`.
    pub counter_write: unsafe extern "C" fn(Object, i64, u64, *const c_void, usize) -> R,
    /// `CounterNoValueWrite`.
    pub counter_no_value_write: unsafe extern "C" fn(Object, i64, u64, u8) -> R,
    /// `CounterBatchWrite`.
    pub counter_batch_write: unsafe extern "C" fn(Object, *const crate::ext::CounterBatch) -> R,
}

/// One of `nvtxw3_event_helpers.h`'s event schemas.
pub struct EventSchema {
    /// `NVTX_PAYLOAD_SCHEMA_FLAG_*`, 0 for the message schema.
    pub flags: u64,
    /// `NVTX_PAYLOAD_SCHEMA_TYPE_*`.
    pub type_: u64,
    /// Its entries.
    pub entries: &'static [Entry],
    /// The payload's size (0 for the dynamic message schema).
    pub static_size: usize,
}

/// A schema entry: flags, type, name (NUL-terminated), offset.
#[allow(missing_docs)]
pub struct Entry(pub u64, pub u64, pub &'static [u8], pub u64);

impl Entry {
    /// As `nvtxPayloadSchemaEntry_t`.
    pub fn raw(&self) -> SchemaEntry {
        SchemaEntry {
            flags: self.0,
            type_: self.1,
            name: self.2.as_ptr().cast(),
            description: std::ptr::null(),
            array_or_union_detail: 0,
            offset: self.3,
            semantics: std::ptr::null(),
            reserved: std::ptr::null(),
        }
    }
}

const TS: u64 = entry_flag::TIMESTAMP;
const fn timestamp(role: u64, offset: u64, name: &'static [u8]) -> Entry {
    Entry(TS | role, entry_type::INT64, name, offset)
}
const fn color(offset: u64) -> Entry {
    Entry(0, entry_type::COLOR_ARGB, b"color\0", offset)
}
const fn category(offset: u64) -> Entry {
    Entry(0, entry_type::CATEGORY, b"category\0", offset)
}
const RANGE_ID: Entry = Entry(0, entry_type::RANGE_ID, b"rangeId\0", 0);
const fn message(offset: u64) -> Entry {
    Entry(
        entry_flag::EVENT_MESSAGE,
        entry_type::REGISTERED_STRING_HANDLE,
        b"message\0",
        offset,
    )
}
const BEGIN: u64 = entry_flag::RANGE_BEGIN;
const END: u64 = entry_flag::RANGE_END;

/// The helpers' payload layouts: `{timestamp, color, category}` (16 bytes)
/// or with a registered string's handle (24); a complete range's two
/// timestamps first (24, 32); a start's or end's range id first (24, 32, 16);
/// a pop's timestamp alone (8).
static MARK_UTF8: [Entry; 3] = [
    timestamp(entry_flag::MARK, 0, b"timestamp\0"),
    color(8),
    category(12),
];
static MARK_REG: [Entry; 4] = [
    timestamp(entry_flag::MARK, 0, b"timestamp\0"),
    color(8),
    category(12),
    message(16),
];
static COMPLETE_UTF8: [Entry; 4] = [
    timestamp(BEGIN, 0, b"timestampBegin\0"),
    timestamp(END, 8, b"timestampEnd\0"),
    color(16),
    category(20),
];
static COMPLETE_REG: [Entry; 5] = [
    timestamp(BEGIN, 0, b"timestampBegin\0"),
    timestamp(END, 8, b"timestampEnd\0"),
    color(16),
    category(20),
    message(24),
];
static PUSH_UTF8: [Entry; 3] = [timestamp(BEGIN, 0, b"timestamp\0"), color(8), category(12)];
static PUSH_REG: [Entry; 4] = [
    timestamp(BEGIN, 0, b"timestamp\0"),
    color(8),
    category(12),
    message(16),
];
static POP: [Entry; 1] = [timestamp(END, 0, b"timestamp\0")];
static START_UTF8: [Entry; 4] = [
    RANGE_ID,
    timestamp(BEGIN, 8, b"timestamp\0"),
    color(16),
    category(20),
];
static START_REG: [Entry; 5] = [
    RANGE_ID,
    timestamp(BEGIN, 8, b"timestamp\0"),
    color(16),
    category(20),
    message(24),
];
static END_ENTRIES: [Entry; 2] = [RANGE_ID, timestamp(END, 8, b"timestamp\0")];
/// A UTF-8 event's message: the second payload, its bytes alone.
static MESSAGE_UTF8: [Entry; 1] = [Entry(
    entry_flag::EVENT_MESSAGE | entry_flag::ARRAY_ZERO_TERMINATED,
    entry_type::CSTRING_UTF8,
    b"message\0",
    0,
)];

const fn schema(flags: u64, entries: &'static [Entry], static_size: usize) -> EventSchema {
    EventSchema {
        flags,
        type_: schema_type::STATIC,
        entries,
        static_size,
    }
}

/// `nvtxwEventSchemasRegister`'s schemas, in its order (that of
/// `nvtxwEventHelperSchemaIds_t`'s fields): mark (UTF-8, registered
/// string), push/pop (UTF-8, registered), start/end (UTF-8, registered),
/// push (UTF-8, registered), pop, start (UTF-8, registered), end, and the
/// UTF-8 message schema the UTF-8 ones pair with.
pub static EVENT_SCHEMAS: [EventSchema; 13] = [
    schema(schema_flag::MARK, &MARK_UTF8, 16),
    schema(schema_flag::MARK, &MARK_REG, 24),
    schema(schema_flag::RANGE_PUSHPOP, &COMPLETE_UTF8, 24),
    schema(schema_flag::RANGE_PUSHPOP, &COMPLETE_REG, 32),
    schema(schema_flag::RANGE_STARTEND, &COMPLETE_UTF8, 24),
    schema(schema_flag::RANGE_STARTEND, &COMPLETE_REG, 32),
    schema(schema_flag::RANGE_PUSH, &PUSH_UTF8, 16),
    schema(schema_flag::RANGE_PUSH, &PUSH_REG, 24),
    schema(schema_flag::RANGE_POP, &POP, 8),
    schema(schema_flag::RANGE_START, &START_UTF8, 24),
    schema(schema_flag::RANGE_START, &START_REG, 32),
    schema(schema_flag::RANGE_END, &END_ENTRIES, 16),
    EventSchema {
        flags: 0,
        type_: schema_type::DYNAMIC,
        entries: &MESSAGE_UTF8,
        static_size: 0,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_nvidias() {
        assert_eq!(std::mem::size_of::<SessionAttributes>(), 24);
        assert_eq!(std::mem::size_of::<DomainAttributes>(), 16);
        assert_eq!(std::mem::size_of::<StreamAttributes>(), 56);
        assert_eq!(std::mem::size_of::<EventBatch>(), 64);
        assert_eq!(std::mem::size_of::<Interface>(), 18 * 8);
    }
}
