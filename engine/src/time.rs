//! Time domains of deferred events (NVTX's payload extension): a clock the
//! program stamps events with, registered once, and what relates it to a
//! clock the tool reads: sync points, a conversion factor or a timer source.
//! A timestamp entry names its time domain in its time semantics.

use crate::domain::DomainState;
use crate::error::Error;
use crate::ext_call;
use crate::loader::extensions::PAYLOAD;
use crate::payloads::register;
use nvtx_protocol::ext::cbid;
use nvtx_protocol::time::{SyncPoint, TimeDomainAttr};
use nvtx_protocol::Handle;
use std::ffi::c_void;
use std::mem::transmute;

/// A clock the tool reads itself (`nvtxTimerSource`).
pub type Timer = unsafe extern "C" fn() -> i64;
/// A clock the tool reads itself, given `data` (`nvtxTimerSourceWithData`).
pub type TimerWithData = unsafe extern "C" fn(*mut c_void) -> i64;

/// Registers the time domain `attributes` describes in `domain`; its id
/// (the static one asked for, or the tool's), 0 with no tool or when the
/// tool refuses it.
pub fn register_time_domain(
    domain: &'static DomainState,
    attributes: &TimeDomainAttr,
) -> Result<u64, Error> {
    register(
        domain,
        cbid::TIME_DOMAIN_REGISTER,
        (attributes as *const TimeDomainAttr).cast(),
    )
}

/// `nvtxTimeSyncPoint`: `first` in time domain `a` and `second` in `b`
/// were read at the same instant.
pub fn sync_point(
    domain: &'static DomainState,
    a: u64,
    b: u64,
    first: i64,
    second: i64,
) -> Result<(), Error> {
    ext_call::call(&PAYLOAD, domain, cbid::TIME_SYNC_POINT, |f, handle| {
        // SAFETY: the tool's function for this callback id, of the protocol's type.
        unsafe {
            transmute::<usize, unsafe extern "C" fn(Handle, u64, u64, i64, i64)>(f)(
                handle, a, b, first, second,
            )
        }
    })?;
    Ok(())
}

/// `nvtxTimeSyncPointTable`: instants read in both `source` and `destination`.
pub fn sync_points(
    domain: &'static DomainState,
    source: u64,
    destination: u64,
    points: &[SyncPoint],
) -> Result<(), Error> {
    ext_call::call(
        &PAYLOAD,
        domain,
        cbid::TIME_SYNC_POINT_TABLE,
        |f, handle| {
            // SAFETY: the tool's function for this callback id, of the
            // protocol's type; `points` lives through the call.
            unsafe {
                transmute::<usize, unsafe extern "C" fn(Handle, u64, u64, *const c_void, usize)>(f)(
                    handle,
                    source,
                    destination,
                    points.as_ptr().cast(),
                    points.len(),
                )
            }
        },
    )?;
    Ok(())
}

/// `nvtxTimestampConversionFactor`: `destination = at_destination + slope
/// * (source - at_source)`.
pub fn conversion_factor(
    domain: &'static DomainState,
    source: u64,
    destination: u64,
    slope: f64,
    at_source: i64,
    at_destination: i64,
) -> Result<(), Error> {
    ext_call::call(
        &PAYLOAD,
        domain,
        cbid::TIMESTAMP_CONVERSION_FACTOR,
        |f, handle| {
            // SAFETY: the tool's function for this callback id, of the protocol's type.
            unsafe {
                transmute::<usize, unsafe extern "C" fn(Handle, u64, u64, f64, i64, i64)>(f)(
                    handle,
                    source,
                    destination,
                    slope,
                    at_source,
                    at_destination,
                )
            }
        },
    )?;
    Ok(())
}

/// `nvtxTimerSource`: the tool may call `read` for the current time of
/// `time_domain` whenever it wants. `flags`:
/// [`nvtx_protocol::time::TIMER_SOURCE_UNSAFE_AFTER_TEARDOWN`] or 0.
///
/// # Safety
/// `read` is callable from any thread for as long as the tool may call it
/// (past process teardown unless `flags` says otherwise).
pub unsafe fn timer_source(
    domain: &'static DomainState,
    time_domain: u64,
    flags: u64,
    read: Timer,
) -> Result<(), Error> {
    ext_call::call(&PAYLOAD, domain, cbid::TIMER_SOURCE, |f, handle| {
        // SAFETY: the tool's function for this callback id, of the protocol's type.
        unsafe {
            transmute::<usize, unsafe extern "C" fn(Handle, u64, u64, *const c_void)>(f)(
                handle,
                time_domain,
                flags,
                read as *const c_void,
            )
        }
    })?;
    Ok(())
}

/// `nvtxTimerSourceWithData`: [`timer_source`] with `data` given to `read`.
///
/// # Safety
/// As [`timer_source`]; `data` stays valid as long as `read` may be called.
pub unsafe fn timer_source_with_data(
    domain: &'static DomainState,
    time_domain: u64,
    flags: u64,
    read: TimerWithData,
    data: *mut c_void,
) -> Result<(), Error> {
    ext_call::call(
        &PAYLOAD,
        domain,
        cbid::TIMER_SOURCE_WITH_DATA,
        |f, handle| {
            // SAFETY: the tool's function for this callback id, of the protocol's type.
            unsafe {
                transmute::<
                    usize,
                    unsafe extern "C" fn(Handle, u64, u64, *const c_void, *const c_void),
                >(f)(
                    handle,
                    time_domain,
                    flags,
                    read as *const c_void,
                    data.cast_const(),
                )
            }
        },
    )?;
    Ok(())
}
