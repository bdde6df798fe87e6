//! Counters (NVTX's counters extension): a named series of numbers the
//! tool plots over time (loss, queue depth, bytes in flight), registered
//! once in a domain, then sampled; each sample timestamped by the tool.

use crate::domain::DomainState;
use crate::error::Error;
use crate::loader::extensions::COUNTERS;
use nvtx_protocol::ext::{cbid, CounterAttr, CounterBatch};
use nvtx_protocol::payload::entry_type;
use nvtx_protocol::Handle;
use std::ffi::CStr;

/// The type of a counter's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterType {
    Int64,
    Float64,
    /// Values laid out as a registered payload schema says (a counter
    /// group when the schema has NVTX's counter-group flag).
    Schema(u64),
}

/// Registers counter `name` of `kind` in `domain`; its id, 0 with no tool
/// (or a tool without counters): sampling id 0 does nothing.
pub fn register(
    domain: &'static DomainState,
    name: &CStr,
    kind: CounterType,
) -> Result<u64, Error> {
    if !crate::loader::tool_attached() {
        return Ok(0);
    }
    let entered = domain.enter()?;
    let Some(f) = COUNTERS.get(cbid::COUNTER_REGISTER) else {
        return Ok(0);
    };
    let attributes = CounterAttr {
        struct_size: std::mem::size_of::<CounterAttr>(),
        schema_id: match kind {
            CounterType::Int64 => entry_type::INT64,
            CounterType::Float64 => entry_type::DOUBLE,
            CounterType::Schema(id) => id,
        },
        name: name.as_ptr(),
        description: std::ptr::null(),
        scope_id: 0,
        semantics: std::ptr::null(),
        counter_id: 0,
    };
    // SAFETY: the tool's function for this callback id, of the protocol's
    // type, with the domain's tool handle and attributes that live through
    // the call.
    Ok(unsafe {
        let f = std::mem::transmute::<usize, unsafe extern "C" fn(Handle, *const CounterAttr) -> u64>(
            f,
        );
        f(entered.handle, &attributes)
    })
}

/// Samples counter `id` (from [`register`]) of `domain`: `value`, as the
/// tool's function for `cbid` takes it.
fn sample<T>(domain: &'static DomainState, id: u64, value: T, cbid: usize) -> Result<(), Error> {
    if id == 0 || !crate::loader::tool_attached() {
        return Ok(());
    }
    let entered = domain.enter()?;
    if let Some(f) = COUNTERS.get(cbid) {
        // SAFETY: the tool's function for this callback id, whose value
        // argument is `T` (the caller's choice of id matches it).
        unsafe {
            let f = std::mem::transmute::<usize, unsafe extern "C" fn(Handle, u64, T)>(f);
            f(entered.handle, id, value);
        }
    }
    Ok(())
}

/// Samples an `Int64` counter.
pub fn sample_i64(domain: &'static DomainState, id: u64, value: i64) -> Result<(), Error> {
    sample(domain, id, value, cbid::COUNTER_SAMPLE_INT64)
}

/// Samples a `Float64` counter.
pub fn sample_f64(domain: &'static DomainState, id: u64, value: f64) -> Result<(), Error> {
    sample(domain, id, value, cbid::COUNTER_SAMPLE_FLOAT64)
}

/// Records that counter `id` has no value now: `reason` 0 (zero), 1
/// (unchanged) or 2 (unavailable), as NVTX's `NVTX_COUNTER_SAMPLE_*`.
pub fn sample_no_value(domain: &'static DomainState, id: u64, reason: u8) -> Result<(), Error> {
    sample(domain, id, reason, cbid::COUNTER_SAMPLE_NO_VALUE)
}

/// Samples a [`CounterType::Schema`] counter: one value, as its bytes.
pub fn sample_bytes(domain: &'static DomainState, id: u64, value: &[u8]) -> Result<(), Error> {
    if id == 0 || !crate::loader::tool_attached() {
        return Ok(());
    }
    let entered = domain.enter()?;
    if let Some(f) = COUNTERS.get(cbid::COUNTER_SAMPLE) {
        // SAFETY: the tool's function for this callback id, of the
        // protocol's type; the bytes live through the call.
        unsafe {
            let f = std::mem::transmute::<
                usize,
                unsafe extern "C" fn(Handle, u64, *const std::ffi::c_void, usize),
            >(f);
            f(entered.handle, id, value.as_ptr().cast(), value.len());
        }
    }
    Ok(())
}

/// Samples of counter `id` taken earlier: `values[i]` at `timestamps[i]`
/// (readings of [`crate::payloads::timestamp`], the tool's clock), `T` the
/// counter's type. Values and timestamps of different lengths are refused.
pub fn batch<T: Copy>(
    domain: &'static DomainState,
    id: u64,
    values: &[T],
    timestamps: &[i64],
) -> Result<(), Error> {
    if values.len() != timestamps.len() {
        return Err(Error::InvalidArgument(
            "a batch needs one timestamp per value",
        ));
    }
    // SAFETY: the values' own bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    };
    batch_bytes(domain, id, bytes, timestamps)
}

/// [`batch`] of samples given as bytes: `samples` holds one value per
/// timestamp, each of the counter's size (the caller's to lay out).
pub fn batch_bytes(
    domain: &'static DomainState,
    id: u64,
    samples: &[u8],
    timestamps: &[i64],
) -> Result<(), Error> {
    if id == 0 || samples.is_empty() || !crate::loader::tool_attached() {
        return Ok(());
    }
    let entered = domain.enter()?;
    let batch = CounterBatch {
        counter_id: id,
        counters: samples.as_ptr().cast(),
        counters_size: samples.len(),
        flags: 0,
        timestamps: timestamps.as_ptr(),
        timestamps_size: std::mem::size_of_val(timestamps),
    };
    if let Some(f) = COUNTERS.get(cbid::COUNTER_BATCH_SUBMIT) {
        // SAFETY: the tool's function for this callback id, with the
        // domain's tool handle and a batch whose arrays live through the call.
        unsafe {
            let f =
                std::mem::transmute::<usize, unsafe extern "C" fn(Handle, *const CounterBatch)>(f);
            f(entered.handle, &batch);
        }
    }
    Ok(())
}
