//! Counters: a named series of numbers the tool plots over time.

use super::boundary::exported;
use super::codes::nvtxr_status_t;
use super::codes::status;
use super::domain::{domain_ref, nvtxr_domain_t};
use nvtxr_engine::counters::{self, CounterType};
use std::ffi::{c_char, CStr};

/// `nvtxr_counter_register`'s type: 64-bit integer values.
pub const NVTXR_COUNTER_INT64: u32 = 1;
/// `nvtxr_counter_register`'s type: `double` values.
pub const NVTXR_COUNTER_FLOAT64: u32 = 2;

/// Registers a counter named `name` (UTF-8, copied) in `domain` (NULL: the
/// default domain), whose values are of `type` (`NVTXR_COUNTER_INT64` or
/// `NVTXR_COUNTER_FLOAT64`), through NVTX's counters extension.
///
/// Returns its id for the sample calls; 0 with no tool, a tool without
/// counters, or bad arguments (sampling id 0 does nothing, so callers never
/// need to branch). Thread-safe; not async-signal-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_counter_register(
    domain: *const nvtxr_domain_t,
    name: *const c_char,
    r#type: u32,
) -> u64 {
    exported!(unsafe {
        let kind = match r#type {
            NVTXR_COUNTER_INT64 => CounterType::Int64,
            NVTXR_COUNTER_FLOAT64 => CounterType::Float64,
            _ => return 0,
        };
        if name.is_null() {
            return 0;
        }
        domain_ref(domain)
            .and_then(|d| counters::register(d, CStr::from_ptr(name), kind))
            .unwrap_or(0)
    })
}

/// Samples an `NVTXR_COUNTER_INT64` counter of `domain`: `value`, at the
/// time of the call. Id 0 is a no-op.
///
/// Returns `NVTXR_OK`, or `NVTXR_ERROR_DESTROYED` / `NVTXR_ERROR_INVALID_ARGUMENT`
/// for a bad domain. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_counter_sample_int64(
    domain: *const nvtxr_domain_t,
    counter: u64,
    value: i64,
) -> nvtxr_status_t {
    exported!(unsafe {
        status(domain_ref(domain).and_then(|d| counters::sample_i64(d, counter, value)))
    })
}

/// `nvtxr_counter_sample_int64` for an `NVTXR_COUNTER_FLOAT64` counter.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_counter_sample_float64(
    domain: *const nvtxr_domain_t,
    counter: u64,
    value: f64,
) -> nvtxr_status_t {
    exported!(unsafe {
        status(domain_ref(domain).and_then(|d| counters::sample_f64(d, counter, value)))
    })
}

/// `nvtxr_counter_sample_no_value`'s reason: the value is 0.
pub const NVTXR_COUNTER_SAMPLE_ZERO: u8 = 0;
/// `nvtxr_counter_sample_no_value`'s reason: the value has not changed.
pub const NVTXR_COUNTER_SAMPLE_UNCHANGED: u8 = 1;
/// `nvtxr_counter_sample_no_value`'s reason: no value could be read.
pub const NVTXR_COUNTER_SAMPLE_UNAVAILABLE: u8 = 2;

/// Records that the counter has no value to sample now, for `reason`
/// (`NVTXR_COUNTER_SAMPLE_ZERO`, `_UNCHANGED` or `_UNAVAILABLE`). Id 0 is a
/// no-op. Returns as `nvtxr_counter_sample_int64`. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_counter_sample_no_value(
    domain: *const nvtxr_domain_t,
    counter: u64,
    reason: u8,
) -> nvtxr_status_t {
    exported!(unsafe {
        status(domain_ref(domain).and_then(|d| counters::sample_no_value(d, counter, reason)))
    })
}

/// Samples of an `NVTXR_COUNTER_INT64` counter of `domain` taken earlier:
/// `values[i]` at `timestamps[i]` (each a reading of `nvtxr_timestamp()`),
/// `count` of each; the arrays are read during the call only. Id 0 and
/// `count` 0 are no-ops.
///
/// Returns `NVTXR_OK`; `NVTXR_ERROR_NULL_ARGUMENT` for NULL arrays with a
/// `count`; `NVTXR_ERROR_DESTROYED` / `NVTXR_ERROR_INVALID_ARGUMENT` for a
/// bad domain. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_counter_batch_int64(
    domain: *const nvtxr_domain_t,
    counter: u64,
    values: *const i64,
    timestamps: *const i64,
    count: usize,
) -> nvtxr_status_t {
    exported!(unsafe { batch(domain, counter, values, timestamps, count) })
}

/// `nvtxr_counter_batch_int64` for an `NVTXR_COUNTER_FLOAT64` counter.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_counter_batch_float64(
    domain: *const nvtxr_domain_t,
    counter: u64,
    values: *const f64,
    timestamps: *const i64,
    count: usize,
) -> nvtxr_status_t {
    exported!(unsafe { batch(domain, counter, values, timestamps, count) })
}

/// The batch calls' body.
///
/// # Safety
/// `values` and `timestamps` are NULL or `count` elements each.
unsafe fn batch<T: Copy>(
    domain: *const nvtxr_domain_t,
    counter: u64,
    values: *const T,
    timestamps: *const i64,
    count: usize,
) -> nvtxr_status_t {
    // SAFETY: as the caller's domain pointer says (checked by `domain_ref`).
    let domain = unsafe { domain_ref(domain) };
    if count == 0 {
        return status(domain.map(drop));
    }
    if values.is_null() || timestamps.is_null() {
        return status(Err(nvtxr_engine::Error::NullArgument));
    }
    // SAFETY: the caller passes `count` of each.
    let (values, timestamps) = unsafe {
        (
            std::slice::from_raw_parts(values, count),
            std::slice::from_raw_parts(timestamps, count),
        )
    };
    status(domain.and_then(|d| counters::batch(d, counter, values, timestamps)))
}
