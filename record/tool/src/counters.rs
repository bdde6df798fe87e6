//! NVTX's counters extension (`nvToolsExtCounters.h`): each counter's
//! registration (its name and value type) and its samples, recorded like
//! any event: int64 and double samples, samples in the counter's layout (a
//! group of counters: one series per numeric field, named `counter field`),
//! "no value" samples (zero as 0; unchanged and unavailable leave the series
//! as it is), and batches of samples taken earlier, at their own times.

use crate::clock;
use crate::handles::id_of;
use crate::payload::decode_values;
use crate::text::{Event, Text};
use crate::{events, probe};
use nvtx_protocol::ext::{
    self as ext, slot, CounterAttr, CounterBatch, ExtFunctions, COUNTER_BATCH_BEGIN_INTERVAL,
    COUNTER_BATCH_END_INTERVAL, COUNTER_SAMPLE_ZERO,
};
use nvtx_protocol::payload::{entry_type, schema_id};
use nvtx_protocol::{attr, Handle};
use nvtxr_record_format::Kind;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

/// Counter ids the tool gives (the protocol's dynamic ids start at 2^32).
static NEXT_COUNTER: AtomicU64 = AtomicU64::new(1 << 32);

/// A registered counter.
struct Counter {
    name: String,
    /// Its values' type: an entry type or a registered schema.
    schema: u64,
    /// A group's fields' series, by field name: their counter ids.
    fields: HashMap<String, u64>,
}

/// Every counter, by (domain, id).
fn counters() -> &'static RwLock<HashMap<(u64, u64), Counter>> {
    static COUNTERS: std::sync::OnceLock<RwLock<HashMap<(u64, u64), Counter>>> =
        std::sync::OnceLock::new();
    COUNTERS.get_or_init(Default::default)
}

/// Records that counter `id` of `domain` is named `name`.
fn record_name(domain: u64, id: u64, name: &str) {
    events::record(&mut Event::simple(
        Kind::CounterRegister,
        domain,
        id,
        Some(Text::Bytes(name.as_bytes())),
    ));
}

/// `nvtxCounterRegister`: records the counter's name; returns its id (the
/// one asked for, or a new one), 0 for unreadable attributes.
unsafe extern "C" fn counter_register(d: Handle, a: *const c_void) -> u64 {
    // SAFETY: a domain handle this tool made; the attributes are integers
    // and pointers, read fault-safe.
    let (domain, a) = unsafe { (id_of(d), probe::read(a.cast::<CounterAttr>())) };
    let Some(a) = a.filter(|a| a.struct_size >= std::mem::size_of::<CounterAttr>()) else {
        return 0;
    };
    let id = match a.counter_id {
        0 => NEXT_COUNTER.fetch_add(1, Ordering::Relaxed),
        asked => asked,
    };
    let name = probe::string(a.name).unwrap_or_else(|| format!("(counter {id})"));
    record_name(domain, id, &name);
    if let Ok(mut all) = counters().write() {
        all.insert(
            (domain, id),
            Counter {
                name,
                schema: a.schema_id,
                fields: HashMap::new(),
            },
        );
    }
    id
}

/// Records one sample of counter `id`, now or at `at` (the recording clock).
fn sample_at(domain: u64, id: u64, payload: (u8, u64), at: Option<u64>) {
    let mut e = Event::simple(Kind::CounterSample, domain, id, None);
    e.payload = payload;
    match at {
        Some(t) => events::record_at(&mut e, t),
        None => events::record(&mut e),
    };
}

unsafe extern "C" fn counter_sample_int64(d: Handle, counter: u64, value: i64) {
    // SAFETY: a domain handle this tool made (or NULL).
    let domain = unsafe { id_of(d) };
    sample_at(
        domain,
        counter,
        (attr::PAYLOAD_I64 as u8, value as u64),
        None,
    );
}

unsafe extern "C" fn counter_sample_float64(d: Handle, counter: u64, value: f64) {
    // SAFETY: as above.
    let domain = unsafe { id_of(d) };
    sample_at(
        domain,
        counter,
        (attr::PAYLOAD_F64 as u8, value.to_bits()),
        None,
    );
}

/// A JSON number as a sample's payload.
fn number(v: &Value) -> Option<(u8, u64)> {
    if let Some(i) = v.as_i64() {
        return Some((attr::PAYLOAD_I64 as u8, i as u64));
    }
    if let Some(u) = v.as_u64() {
        return Some((attr::PAYLOAD_U64 as u8, u));
    }
    v.as_f64().map(|f| (attr::PAYLOAD_F64 as u8, f.to_bits()))
}

/// One sample in counter `id`'s layout (`size` bytes at `values`): a
/// number for a counter of a predefined type, a series per numeric field
/// for a group.
///
/// # Safety
/// `values` holds `size` bytes of the counter's layout.
unsafe fn sample_values(domain: u64, id: u64, values: *const c_void, size: usize, at: Option<u64>) {
    let Some(schema) = counters()
        .read()
        .ok()
        .and_then(|all| all.get(&(domain, id)).map(|c| c.schema))
    else {
        return;
    };
    // SAFETY: the caller upholds this function's `# Safety` contract.
    let decoded = unsafe { decode_values(domain, schema, values, size) };
    if schema < schema_id::STATIC_START {
        if let Some(p) = decoded.get("payload").and_then(number) {
            sample_at(domain, id, p, at);
        }
        return;
    }
    for (field, value) in &decoded {
        let Some(p) = number(value) else { continue };
        sample_at(domain, field_series(domain, id, field), p, at);
    }
}

/// The series of field `field` of group counter `id`: its id (made, and
/// its name recorded, the first time).
fn field_series(domain: u64, id: u64, field: &str) -> u64 {
    let Ok(mut all) = counters().write() else {
        return id;
    };
    let Some(counter) = all.get_mut(&(domain, id)) else {
        return id;
    };
    if let Some(&series) = counter.fields.get(field) {
        return series;
    }
    let series = NEXT_COUNTER.fetch_add(1, Ordering::Relaxed);
    counter.fields.insert(field.to_string(), series);
    let name = format!("{} {field}", counter.name);
    drop(all);
    record_name(domain, series, &name);
    series
}

unsafe extern "C" fn counter_sample(d: Handle, counter: u64, values: *const c_void, size: usize) {
    // SAFETY: the producer passes its domain and `size` bytes at `values`.
    unsafe { sample_values(id_of(d), counter, values, size, None) };
}

unsafe extern "C" fn counter_sample_no_value(d: Handle, counter: u64, reason: u8) {
    if reason != COUNTER_SAMPLE_ZERO {
        return;
    }
    // SAFETY: a domain handle this tool made (or NULL).
    let domain = unsafe { id_of(d) };
    let schema = counters()
        .read()
        .ok()
        .and_then(|all| all.get(&(domain, counter)).map(|c| c.schema));
    let zero = match schema {
        Some(
            entry_type::DOUBLE
            | entry_type::FLOAT
            | entry_type::FLOAT16
            | entry_type::FLOAT32
            | entry_type::FLOAT64,
        ) => (attr::PAYLOAD_F64 as u8, 0f64.to_bits()),
        _ => (attr::PAYLOAD_I64 as u8, 0),
    };
    sample_at(domain, counter, zero, None);
}

unsafe extern "C" fn counter_batch_submit(d: Handle, batch: *const c_void) {
    // SAFETY: the producer passes its domain and NULL or its batch.
    let (domain, Some(b)) = (unsafe { id_of(d) }, unsafe {
        batch.cast::<CounterBatch>().as_ref()
    }) else {
        return;
    };
    let schema = counters()
        .read()
        .ok()
        .and_then(|all| all.get(&(domain, b.counter_id)).map(|c| c.schema));
    let Some(stride) = schema.and_then(|s| crate::payload::value_size(domain, s)) else {
        return;
    };
    if b.counters.is_null() || stride == 0 {
        return;
    }
    let count = (b.counters_size / stride).min(1 << 20);
    let stamps: &[i64] = if b.timestamps.is_null() {
        &[]
    } else {
        // SAFETY: `timestamps_size` bytes of timestamps, as promised.
        unsafe { std::slice::from_raw_parts(b.timestamps, b.timestamps_size / 8) }
    };
    for i in 0..count {
        let at = match (b.flags, stamps) {
            (COUNTER_BATCH_BEGIN_INTERVAL, [t, interval]) => t + i as i64 * interval,
            (COUNTER_BATCH_END_INTERVAL, [t, interval]) => t - (count - 1 - i) as i64 * interval,
            (_, stamps) => stamps.get(i).copied().unwrap_or(clock::now() as i64),
        };
        // SAFETY: sample `i` of the batch.
        unsafe {
            let values = b.counters.cast::<u8>().add(i * stride).cast();
            sample_values(domain, b.counter_id, values, stride, Some(at.max(0) as u64));
        }
    }
}

/// The counters module's functions.
pub(crate) fn functions() -> ExtFunctions {
    let mut f = ExtFunctions::new(ext::COUNTERS);
    f.set(slot::COUNTER_REGISTER, counter_register)
        .set(slot::COUNTER_SAMPLE_INT64, counter_sample_int64)
        .set(slot::COUNTER_SAMPLE_FLOAT64, counter_sample_float64)
        .set(slot::COUNTER_SAMPLE, counter_sample)
        .set(slot::COUNTER_SAMPLE_NO_VALUE, counter_sample_no_value)
        .set(slot::COUNTER_BATCH_SUBMIT, counter_batch_submit);
    f
}
