//! Counters (NVTX's counters extension): a named series of numbers the
//! tool plots over time (loss, queue depth, bytes in flight), registered
//! once in a domain, then sampled; each sample timestamped by the tool.

use crate::domain::DomainState;
use crate::error::Error;
use crate::ext_call;
use crate::loader::extensions::COUNTERS;
use nvtx_protocol::ext::{cbid, CounterAttr, CounterBatch};
use nvtx_protocol::payload::{
    entry_type, SemanticsCounter, SemanticsHeader, SemanticsTime, COUNTER_SEMANTIC_VERSION,
    SEMANTIC_COUNTERS, SEMANTIC_TIME, TIME_SEMANTIC_VERSION,
};
use nvtx_protocol::Handle;
use std::ffi::{c_char, CStr};

/// The type of a counter's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterType {
    Int64,
    Float64,
    /// Values laid out as a registered payload schema says (a counter
    /// group when the schema has NVTX's counter-group flag).
    Schema(u64),
}

/// What a counter's registration may say besides its name and type.
#[derive(Debug, Clone, Copy, Default)]
pub struct CounterOptions<'a> {
    /// What it counts.
    pub description: Option<&'a CStr>,
    /// The scope its values belong to (an id from [`crate::payloads`]'s
    /// scope registration, or `NVTX_SCOPE_*`; 0: none).
    pub scope: u64,
    /// The time domain of its batches' timestamps (a time semantic).
    pub time_domain: Option<u64>,
    /// How its values are read (a counter semantic).
    pub semantics: Option<CounterSemantics<'a>>,
}

/// `nvtxSemanticsCounter_t`'s fields.
#[derive(Debug, Clone, Copy)]
pub struct CounterSemantics<'a> {
    /// `NVTX_COUNTER_FLAG_*`.
    pub flags: u64,
    /// Its unit.
    pub unit: Option<&'a CStr>,
    /// The unit's scale, numerator and denominator.
    pub unit_scale: (u64, u64),
    /// `NVTX_COUNTER_LIMIT_*`.
    pub limit_type: i64,
    /// The limits' bits (as `limit_type` says).
    pub min: u64,
    /// See `min`.
    pub max: u64,
}

impl CounterSemantics<'_> {
    /// As NVTX's struct: a link of a semantics chain (the next one NULL),
    /// valid while `self`'s unit is.
    pub fn to_nvtx(&self) -> SemanticsCounter {
        SemanticsCounter {
            header: SemanticsHeader {
                struct_size: std::mem::size_of::<SemanticsCounter>() as u32,
                semantic_id: SEMANTIC_COUNTERS,
                version: COUNTER_SEMANTIC_VERSION,
                next: std::ptr::null(),
            },
            flags: self.flags,
            unit: self.unit.map_or(std::ptr::null(), |u| u.as_ptr()),
            unit_scale_numerator: self.unit_scale.0,
            unit_scale_denominator: self.unit_scale.1,
            limit_type: self.limit_type,
            min: self.min,
            max: self.max,
        }
    }
}

/// Registers counter `name` of `kind` in `domain`; its id, 0 with no tool
/// (or a tool without counters): sampling id 0 does nothing.
pub fn register(
    domain: &'static DomainState,
    name: &CStr,
    kind: CounterType,
) -> Result<u64, Error> {
    register_with(domain, name, kind, &CounterOptions::default())
}

/// [`register`] with a description, scope, time domain and semantics, as
/// NVIDIA's Python package registers counters (the time semantic first,
/// then the counter semantic).
pub fn register_with(
    domain: &'static DomainState,
    name: &CStr,
    kind: CounterType,
    options: &CounterOptions,
) -> Result<u64, Error> {
    let id = ext_call::call(&COUNTERS, domain, cbid::COUNTER_REGISTER, |f, handle| {
        let counter = options.semantics.map(|s| s.to_nvtx());
        let counter_link = counter
            .as_ref()
            .map_or(std::ptr::null(), |c| &c.header as *const SemanticsHeader);
        let time = options.time_domain.map(|id| SemanticsTime {
            header: SemanticsHeader {
                struct_size: std::mem::size_of::<SemanticsTime>() as u32,
                semantic_id: SEMANTIC_TIME,
                version: TIME_SEMANTIC_VERSION,
                next: counter_link,
            },
            time_domain_id: id,
        });
        let semantics = match &time {
            Some(t) => &t.header as *const SemanticsHeader,
            None => counter_link,
        };
        let attributes = CounterAttr {
            struct_size: std::mem::size_of::<CounterAttr>(),
            schema_id: match kind {
                CounterType::Int64 => entry_type::INT64,
                // As NVIDIA's Python package registers them.
                CounterType::Float64 => entry_type::FLOAT64,
                CounterType::Schema(id) => id,
            },
            name: name.as_ptr(),
            description: options
                .description
                .map_or(std::ptr::null::<c_char>(), |d| d.as_ptr()),
            scope_id: options.scope,
            semantics: semantics.cast(),
            counter_id: 0,
        };
        // SAFETY: the tool's function for this callback id, of the protocol's
        // type, with attributes that live through the call.
        unsafe {
            let f = std::mem::transmute::<
                usize,
                unsafe extern "C" fn(Handle, *const CounterAttr) -> u64,
            >(f);
            f(handle, &attributes)
        }
    })?;
    Ok(id.unwrap_or(0))
}

/// Samples counter `id` (from [`register`]) of `domain`: `value`, as the
/// tool's function for `cbid` takes it.
fn sample<T>(domain: &'static DomainState, id: u64, value: T, cbid: usize) -> Result<(), Error> {
    if id == 0 {
        return Ok(());
    }
    ext_call::call(&COUNTERS, domain, cbid, |f, handle| {
        // SAFETY: the tool's function for this callback id, whose value
        // argument is `T` (the caller's choice of id matches it).
        unsafe {
            let f = std::mem::transmute::<usize, unsafe extern "C" fn(Handle, u64, T)>(f);
            f(handle, id, value);
        }
    })?;
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
    if id == 0 {
        return Ok(());
    }
    ext_call::call(&COUNTERS, domain, cbid::COUNTER_SAMPLE, |f, handle| {
        // SAFETY: the tool's function for this callback id, of the
        // protocol's type; the bytes live through the call.
        unsafe {
            let f = std::mem::transmute::<
                usize,
                unsafe extern "C" fn(Handle, u64, *const std::ffi::c_void, usize),
            >(f);
            f(handle, id, value.as_ptr().cast(), value.len());
        }
    })?;
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
    if id == 0 || samples.is_empty() {
        return Ok(());
    }
    let batch = CounterBatch {
        counter_id: id,
        counters: samples.as_ptr().cast(),
        counters_size: samples.len(),
        flags: 0,
        timestamps: timestamps.as_ptr(),
        timestamps_size: std::mem::size_of_val(timestamps),
    };
    ext_call::call(
        &COUNTERS,
        domain,
        cbid::COUNTER_BATCH_SUBMIT,
        |f, handle| {
            // SAFETY: the tool's function for this callback id, with a batch
            // whose arrays live through the call.
            unsafe {
                let f = std::mem::transmute::<
                    usize,
                    unsafe extern "C" fn(Handle, *const CounterBatch),
                >(f);
                f(handle, &batch);
            }
        },
    )?;
    Ok(())
}
