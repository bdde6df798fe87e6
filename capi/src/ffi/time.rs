//! Time domains of deferred events: a clock of the program's own that
//! `NVTXR_ENTRY_TIMESTAMP` fields may be read on, registered once, and
//! what relates it to a clock the tool reads (sync points, a conversion
//! factor, a timer source). A field names its clock in its `semantics`: a
//! `nvtxr_time_semantics_t`.

use super::boundary::exported;
use super::codes::{nvtxr_status_t, status, NVTXR_ERROR_NULL_ARGUMENT};
use super::domain::{domain_ref, nvtxr_domain_t};
use super::sized::read_sized;
use nvtx_protocol::payload::{timestamp_type, SemanticsTime, SEMANTIC_TIME, TIME_SEMANTIC_VERSION};
use nvtx_protocol::time::{
    time_domain_id, timer_flag, timer_start, SyncPoint, TimeDomainAttr,
    TIMER_SOURCE_UNSAFE_AFTER_TEARDOWN,
};
use nvtxr_engine::time;
use std::ffi::c_void;

/// A time domain: the tool's clock (`nvtxr_timestamp`).
pub const NVTXR_TIMESTAMP_TOOL: u64 = 1;
/// A time domain: the CPU's time-stamp counter (`rdtsc`).
pub const NVTXR_TIMESTAMP_TSC: u64 = 10;
/// A time domain: `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds.
pub const NVTXR_TIMESTAMP_MONOTONIC: u64 = 14;
/// `nvtxr_time_domain_t.id` of the first static id; below it, ids are
/// refused (0 asks the tool for one).
pub const NVTXR_TIME_DOMAIN_ID_STATIC_START: u64 = 1 << 24;
/// `nvtxr_time_domain_t.flags`: the clock never goes back.
pub const NVTXR_TIMER_MONOTONIC: u64 = 1 << 1;
/// `nvtxr_time_domain_t.flags`: the clock ticks at a constant rate.
pub const NVTXR_TIMER_STEADY: u64 = 1 << 2;
/// `nvtxr_time_domain_t.start`: when the clock reads 0 is unknown.
pub const NVTXR_TIMER_START_UNKNOWN: u64 = 0;
/// `nvtxr_time_domain_t.start`: the clock reads 0 at boot.
pub const NVTXR_TIMER_START_BOOT: u64 = 1;
/// `nvtxr_time_domain_t.start`: the clock reads 0 when the virtual machine booted.
pub const NVTXR_TIMER_START_VM_BOOT: u64 = 2;
/// `nvtxr_time_domain_t.start`: the clock reads 0 at 1970-01-01 00:00 UTC.
pub const NVTXR_TIMER_START_UNIX_EPOCH: u64 = 3;
/// `nvtxr_timer_source` flag: the tool must not read the clock once the
/// process is tearing down.
pub const NVTXR_TIMER_SOURCE_UNSAFE_AFTER_TEARDOWN: u64 = 1;
/// `nvtxr_time_semantics_t.semantic`: time semantics.
pub const NVTXR_SEMANTIC_TIME: u16 = 2;
/// `nvtxr_time_semantics_t.version`.
pub const NVTXR_TIME_SEMANTICS_VERSION: u16 = 1;

const _: () = {
    assert!(NVTXR_TIMESTAMP_TOOL == timestamp_type::TOOL_PROVIDED);
    assert!(NVTXR_TIMESTAMP_TSC == timestamp_type::CPU_TSC);
    assert!(NVTXR_TIMESTAMP_MONOTONIC == timestamp_type::CPU_CLOCK_GETTIME_MONOTONIC);
    assert!(NVTXR_TIME_DOMAIN_ID_STATIC_START == time_domain_id::STATIC_START);
    assert!(NVTXR_TIMER_MONOTONIC == timer_flag::MONOTONIC);
    assert!(NVTXR_TIMER_STEADY == timer_flag::STEADY);
    assert!(NVTXR_TIMER_START_UNKNOWN == timer_start::UNKNOWN);
    assert!(NVTXR_TIMER_START_BOOT == timer_start::SYSTEM_BOOT);
    assert!(NVTXR_TIMER_START_VM_BOOT == timer_start::VM_BOOT);
    assert!(NVTXR_TIMER_START_UNIX_EPOCH == timer_start::UNIX_EPOCH);
    assert!(NVTXR_TIMER_SOURCE_UNSAFE_AFTER_TEARDOWN == TIMER_SOURCE_UNSAFE_AFTER_TEARDOWN);
    assert!(NVTXR_SEMANTIC_TIME == SEMANTIC_TIME);
    assert!(NVTXR_TIME_SEMANTICS_VERSION == TIME_SEMANTIC_VERSION);
};

/// A time domain to register. Initialize it with `NVTXR_TIME_DOMAIN_INIT`
/// (size set, every other field zero), then set what you know of the
/// clock. It can grow as `nvtxr_event_t` does.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvtxr_time_domain_t {
    /// `sizeof(nvtxr_time_domain_t)` in the caller's header.
    pub size: u32,
    /// 0.
    pub reserved: u32,
    /// The id wanted, at or above `NVTXR_TIME_DOMAIN_ID_STATIC_START` and
    /// below 2^32; 0: the tool chooses.
    pub id: u64,
    /// A `NVTXR_TIMESTAMP_*` if the clock is one of those (then the tool
    /// needs nothing more to place its readings), else 0.
    pub timestamp_type: u64,
    /// `NVTXR_TIMER_MONOTONIC`, `NVTXR_TIMER_STEADY`, or 0.
    pub flags: u64,
    /// Ticks per second; 0: unknown.
    pub resolution: i64,
    /// When the clock reads 0: a `NVTXR_TIMER_START_*`.
    pub start: u64,
    /// The scope its readings belong to (NVIDIA's `NVTX_SCOPE_*`); 0: none.
    pub scope: u64,
}

/// The same instant read in two time domains.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvtxr_time_pair_t {
    /// In the source domain.
    pub source: i64,
    /// In the destination domain.
    pub destination: i64,
}

/// What a timestamp field's `semantics` points to (NVIDIA's
/// `nvtxSemanticsTime_t`): the time domain its value is read on.
/// `nvtxr_time_semantics_t t = NVTXR_TIME_SEMANTICS(id);`
#[repr(C)]
#[derive(Clone, Copy)]
pub struct nvtxr_time_semantics_t {
    /// `sizeof(nvtxr_time_semantics_t)`.
    pub size: u32,
    /// `NVTXR_SEMANTIC_TIME`.
    pub semantic: u16,
    /// `NVTXR_TIME_SEMANTICS_VERSION`.
    pub version: u16,
    /// NULL.
    pub next: *const c_void,
    /// A registered time domain's id, or a `NVTXR_TIMESTAMP_*`.
    pub time_domain: u64,
}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<nvtxr_time_pair_t>() == size_of::<SyncPoint>());
    assert!(offset_of!(nvtxr_time_pair_t, destination) == offset_of!(SyncPoint, dst));
    assert!(size_of::<nvtxr_time_semantics_t>() == size_of::<SemanticsTime>());
    assert!(
        offset_of!(nvtxr_time_semantics_t, time_domain)
            == offset_of!(SemanticsTime, time_domain_id)
    );
};

/// Registers a time domain in `domain` (NULL: the default domain), as
/// `time_domain` describes it (read during the call only).
///
/// Returns its id, for `NVTXR_TIME_SEMANTICS` and the calls below: the
/// static id asked for, or the tool's. 0 with no tool, a tool without
/// deferred events, a NULL or uninitialized `time_domain`, or an id the
/// tool refuses (below `NVTXR_TIME_DOMAIN_ID_STATIC_START`, or registered
/// before with other attributes). Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_time_domain_register(
    domain: *const nvtxr_domain_t,
    time_domain: *const nvtxr_time_domain_t,
) -> u64 {
    exported!(unsafe {
        let covers_id = std::mem::offset_of!(nvtxr_time_domain_t, id) + 8;
        let Ok(t) = read_sized(time_domain, covers_id, "time domain not initialized") else {
            return 0;
        };
        let attributes = TimeDomainAttr {
            scope_id: t.scope,
            timestamp_type_id: t.timestamp_type,
            time_domain_id: t.id,
            timer_flags: t.flags,
            timer_resolution: t.resolution,
            timer_start: t.start,
        };
        domain_ref(domain)
            .and_then(|d| time::register_time_domain(d, &attributes))
            .unwrap_or(0)
    })
}

/// Tells the tool that `first` in time domain `a` and `second` in time
/// domain `b` were read at the same instant (each a registered id or a
/// `NVTXR_TIMESTAMP_*`). Two such points relate the two clocks.
///
/// Returns `NVTXR_OK`, or a bad domain's error. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_time_sync_point(
    domain: *const nvtxr_domain_t,
    a: u64,
    b: u64,
    first: i64,
    second: i64,
) -> nvtxr_status_t {
    exported!(unsafe {
        status(domain_ref(domain).and_then(|d| time::sync_point(d, a, b, first, second)))
    })
}

/// `count` instants read in both `source` and `destination` (read during
/// the call only).
///
/// Returns `NVTXR_OK`, `NVTXR_ERROR_NULL_ARGUMENT` for NULL `pairs` with a
/// count, or a bad domain's error. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_time_sync_points(
    domain: *const nvtxr_domain_t,
    source: u64,
    destination: u64,
    pairs: *const nvtxr_time_pair_t,
    count: usize,
) -> nvtxr_status_t {
    exported!(unsafe {
        if pairs.is_null() && count > 0 {
            return NVTXR_ERROR_NULL_ARGUMENT;
        }
        let points: &[SyncPoint] = match count {
            0 => &[],
            n => std::slice::from_raw_parts(pairs.cast(), n),
        };
        status(domain_ref(domain).and_then(|d| time::sync_points(d, source, destination, points)))
    })
}

/// Relates two time domains by a line: a reading `t` of `source` is
/// `at_destination + slope * (t - at_source)` in `destination`.
///
/// Returns `NVTXR_OK`, or a bad domain's error. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_time_conversion_factor(
    domain: *const nvtxr_domain_t,
    source: u64,
    destination: u64,
    slope: f64,
    at_source: i64,
    at_destination: i64,
) -> nvtxr_status_t {
    exported!(unsafe {
        status(domain_ref(domain).and_then(|d| {
            time::conversion_factor(d, source, destination, slope, at_source, at_destination)
        }))
    })
}

/// Gives the tool `read`, the current time of `time_domain`, to call when
/// it wants (it may relate the clocks itself). `flags`:
/// `NVTXR_TIMER_SOURCE_UNSAFE_AFTER_TEARDOWN` or 0. `read` must stay
/// callable from any thread while the tool may call it.
///
/// Returns `NVTXR_OK`, `NVTXR_ERROR_NULL_ARGUMENT` for a NULL `read`, or a
/// bad domain's error. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_timer_source(
    domain: *const nvtxr_domain_t,
    time_domain: u64,
    flags: u64,
    read: Option<unsafe extern "C" fn() -> i64>,
) -> nvtxr_status_t {
    exported!(unsafe {
        let Some(read) = read else {
            return NVTXR_ERROR_NULL_ARGUMENT;
        };
        status(domain_ref(domain).and_then(|d| time::timer_source(d, time_domain, flags, read)))
    })
}

/// `nvtxr_timer_source` with `data` passed to each call of `read`; `data`
/// must stay valid while the tool may call it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_timer_source_with_data(
    domain: *const nvtxr_domain_t,
    time_domain: u64,
    flags: u64,
    read: Option<unsafe extern "C" fn(*mut c_void) -> i64>,
    data: *mut c_void,
) -> nvtxr_status_t {
    exported!(unsafe {
        let Some(read) = read else {
            return NVTXR_ERROR_NULL_ARGUMENT;
        };
        status(
            domain_ref(domain)
                .and_then(|d| time::timer_source_with_data(d, time_domain, flags, read, data)),
        )
    })
}
