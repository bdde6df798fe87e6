//! NVTX's payload extension (`nvToolsExtPayload.h`): schemas and enums are
//! registered here, and events carrying payloads (the `*Payload` calls, or
//! core events whose payload type is `NVTX_PAYLOAD_TYPE_EXT`, as NCCL sends
//! them) are recorded with their payloads decoded into named values (see
//! [`decode`]); deferred events are recorded at their own times (see
//! [`deferred`]), their timestamps placed through the time domains the
//! producer registered and related to a clock (see [`time`]). Scopes are
//! not recorded: their slot stays empty.

mod decode;
mod deferred;
mod schema;
mod time;
mod values;

use crate::events;
use crate::handles::{id_of, next_id};
use crate::text::{Event, Text, MAX_TEXT};
use nvtx_protocol::boundary::guard;
use nvtx_protocol::ext::{self, slot, ExtFunctions};
use nvtx_protocol::payload::{EnumAttr, PayloadData, SchemaAttr};
use nvtx_protocol::Handle;
use nvtxr_record_format::Kind;
use std::ffi::{c_int, c_void};

/// The event's payloads decoded into `e`: its fields (a JSON object), and
/// its message when it has none (an entry flagged as the message, or the
/// schema's name). A panic while decoding (a bug) leaves the event as it is.
///
/// # Safety
/// `data` is NULL or `count` payloads as `nvToolsExtPayload.h` says.
pub(crate) unsafe fn attach(e: &mut Event, data: *const PayloadData, count: usize) {
    let domain = e.domain;
    let decoded = guard(None, || {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        Some(unsafe { decode::decode(domain, data, count) })
    });
    let Some(decoded) = decoded else {
        warn("a payload could not be decoded (a bug in nvtxr)");
        return;
    };
    let mut json = serde_json::Value::Object(decoded.fields).to_string();
    if json.len() > MAX_TEXT {
        json = format!(
            r#"{{"payload error":"{} bytes of fields, past {MAX_TEXT}"}}"#,
            json.len()
        );
    }
    e.fields = Some(Text::Owned(json));
    if e.text.is_none() && e.string.is_none() {
        e.text = decoded.message.map(Text::Owned);
    }
}

/// `size` bytes at `values` of type `schema` (a predefined type or a
/// registered schema of `domain`), decoded: a predefined type's value under
/// `payload`, a schema's fields by name.
///
/// # Safety
/// `values` holds `size` bytes of that type.
pub(crate) unsafe fn decode_values(
    domain: u64,
    schema: u64,
    values: *const c_void,
    size: usize,
) -> serde_json::Map<String, serde_json::Value> {
    let data = PayloadData {
        schema_id: schema,
        size,
        payload: values,
    };
    let decoded = guard(None, || {
        // SAFETY: the caller upholds this function's `# Safety` contract.
        Some(unsafe { decode::decode(domain, &data, 1) })
    });
    decoded.map(|d| d.fields).unwrap_or_default()
}

/// Bytes one value of type `schema` takes (a predefined type's, or a
/// static schema's size); `None` when it has no fixed size.
pub(crate) fn value_size(domain: u64, schema: u64) -> Option<usize> {
    schema::element(domain, schema).ok().map(|(size, _)| size)
}

fn warn(what: &str) {
    crate::say(format_args!("{what}"));
}

/// An event of `kind` with the payloads, recorded; returns what the writer returns.
///
/// # Safety
/// As [`attach`]'s; `d` is NULL or a domain handle this tool made.
unsafe fn record(kind: Kind, d: Handle, value: u64, data: *const c_void, count: usize) -> i32 {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let mut e = Event::simple(kind, id_of(d), value, None);
        attach(&mut e, data.cast(), count);
        events::record(&mut e)
    }
}

unsafe extern "C" fn schema_register(d: Handle, a: *const c_void) -> u64 {
    // SAFETY: the producer passes its domain (the description is read fault-safe).
    let registered = schema::register_schema(unsafe { id_of(d) }, a.cast::<SchemaAttr>());
    registered.unwrap_or_else(|why| {
        warn(&format!("a payload schema was refused: {why}"));
        0
    })
}

unsafe extern "C" fn enum_register(d: Handle, a: *const c_void) -> u64 {
    // SAFETY: the producer passes its domain (the description is read fault-safe).
    let registered = schema::register_enum(unsafe { id_of(d) }, a.cast::<EnumAttr>());
    registered.unwrap_or_else(|why| {
        warn(&format!("a payload enum was refused: {why}"));
        0
    })
}

unsafe extern "C" fn mark_payload(d: Handle, p: *const c_void, n: usize) {
    // SAFETY: the producer passes its domain and `n` payloads.
    unsafe { record(Kind::Mark, d, 0, p, n) };
}

unsafe extern "C" fn range_push_payload(d: Handle, p: *const c_void, n: usize) -> c_int {
    // SAFETY: as above.
    unsafe { record(Kind::Push, d, 0, p, n) }
}

unsafe extern "C" fn range_pop_payload(d: Handle, p: *const c_void, n: usize) -> c_int {
    // SAFETY: as above.
    unsafe { record(Kind::Pop, d, 0, p, n) }
}

unsafe extern "C" fn range_start_payload(d: Handle, p: *const c_void, n: usize) -> u64 {
    let id = next_id();
    // SAFETY: as above.
    unsafe { record(Kind::Start, d, id, p, n) };
    id
}

unsafe extern "C" fn range_end_payload(d: Handle, id: u64, p: *const c_void, n: usize) {
    // SAFETY: as above.
    unsafe { record(Kind::End, d, id, p, n) };
}

/// Every domain's events are wanted.
unsafe extern "C" fn domain_is_enabled(_d: Handle) -> u8 {
    1
}

/// The payload module's functions.
pub(crate) fn functions() -> ExtFunctions {
    let mut f = ExtFunctions::new(ext::PAYLOAD);
    f.set(slot::TIME_DOMAIN_REGISTER, time::register)
        .set(slot::TIME_SYNC_POINT, time::sync_point)
        .set(slot::TIME_SYNC_POINT_TABLE, time::sync_point_table)
        .set(slot::TIMESTAMP_CONVERSION_FACTOR, time::conversion_factor)
        .set(slot::TIMER_SOURCE, time::timer_source)
        .set(slot::TIMER_SOURCE_WITH_DATA, time::timer_source_with_data)
        .set(slot::TIMESTAMP_GET, deferred::timestamp_get)
        .set(slot::EVENT_SUBMIT, deferred::event_submit)
        .set(slot::EVENT_BATCH_SUBMIT, deferred::event_batch_submit)
        .set(slot::PAYLOAD_SCHEMA_REGISTER, schema_register)
        .set(slot::PAYLOAD_ENUM_REGISTER, enum_register)
        .set(slot::MARK_PAYLOAD, mark_payload)
        .set(slot::RANGE_PUSH_PAYLOAD, range_push_payload)
        .set(slot::RANGE_POP_PAYLOAD, range_pop_payload)
        .set(slot::RANGE_START_PAYLOAD, range_start_payload)
        .set(slot::RANGE_END_PAYLOAD, range_end_payload)
        .set(slot::DOMAIN_IS_ENABLED, domain_is_enabled);
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvtx_protocol::payload::{entry_flag as f, schema_field, schema_id, SchemaEntry};

    /// Random schemas (every kind of entry that holds no pointer, random
    /// details, offsets and sizes, nested earlier schemas) registered and
    /// random payloads decoded: each is refused or decoded, or shown raw
    /// with a reason; nothing panics (an out-of-bounds read of a payload
    /// would).
    #[test]
    fn random_schemas_and_payloads_are_refused_or_decoded_never_read_out_of_bounds() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        const DOMAIN: u64 = 7;
        let mut types: Vec<u64> = vec![
            1, 2, 5, 7, 11, 16, 17, 18, 19, 20, 21, 22, 23, 24, 27, 32, 33, 34, 42, 45, 50, 52, 67,
            68, 69, 71, 74, 75, 76, 77, 78, 999, 1022,
        ];
        let flags = [
            0,
            f::ARRAY_FIXED_SIZE,
            f::ARRAY_ZERO_TERMINATED,
            f::ARRAY_LENGTH_INDEX,
            f::ARRAY_LENGTH_PAYLOAD_INDEX,
            f::HIDE,
            f::EVENT_MESSAGE,
        ];
        let (mut registered, mut decoded, mut raw) = (0, 0, 0);
        for _ in 0..3000 {
            let n = 1 + next() as usize % 6;
            let entries: Vec<SchemaEntry> = (0..n)
                .map(|_| {
                    let type_ = types[next() as usize % types.len()];
                    let flags = flags[next() as usize % flags.len()];
                    let mut detail = match next() % 4 {
                        0 => next(),
                        _ => next() % 6,
                    };
                    // Strings in place: a length of at least one unit.
                    if (75..=78).contains(&type_) && flags & f::ARRAY_MASK == 0 {
                        detail = detail.max(1);
                    }
                    SchemaEntry {
                        flags,
                        type_,
                        name: std::ptr::null(),
                        description: std::ptr::null(),
                        array_or_union_detail: detail,
                        offset: if next() % 3 == 0 { next() % 80 } else { 0 },
                        semantics: std::ptr::null(),
                        reserved: std::ptr::null(),
                    }
                })
                .collect();
            let attr = SchemaAttr {
                field_mask: schema_field::TYPE
                    | schema_field::ENTRIES
                    | schema_field::NUM_ENTRIES
                    | schema_field::STATIC_SIZE,
                name: std::ptr::null(),
                type_: 1 + next() % 2,
                flags: 0,
                entries: entries.as_ptr(),
                num_entries: entries.len(),
                payload_static_size: if next() % 2 == 0 {
                    next() as usize % 64
                } else {
                    0
                },
                pack_align: 0,
                schema_id: 0,
                extension: std::ptr::null(),
            };
            let Ok(id) = schema::register_schema(DOMAIN, &attr) else {
                continue;
            };
            registered += 1;
            types.push(id);
            let blob: Vec<u8> = (0..next() % 160).map(|_| next() as u8).collect();
            let data = PayloadData {
                schema_id: id,
                size: blob.len(),
                payload: blob.as_ptr().cast(),
            };
            // SAFETY: `size` bytes, and a schema of no pointers.
            let d = unsafe { decode::decode(DOMAIN, &data, 1) };
            if d.fields.contains_key("payload error") {
                raw += 1;
            } else {
                decoded += 1;
            }
        }
        assert!(registered > 200, "{registered} registered");
        assert!(decoded > 50 && raw > 50, "{decoded} decoded, {raw} raw");
        assert!(schema_id::DYNAMIC_START < types[types.len() - 1]);
    }
}
