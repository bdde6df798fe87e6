//! NVTX's time domains (the payload extension, `nvToolsExtPayload.h`): a
//! time domain's registration, its ids, its timer's flags and start, and
//! the points that relate two domains' clocks.

/// `nvtxTimeDomainAttr_t` (48 bytes): a time domain to register.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TimeDomainAttr {
    /// The NVTX scope its timestamps belong to (`NVTX_SCOPE_*`).
    pub scope_id: u64,
    /// A [`timestamp_type`](crate::payload::timestamp_type) its readings are, or 0.
    pub timestamp_type_id: u64,
    /// The static id wanted (in [`time_domain_id::STATIC_START`],
    /// [`time_domain_id::DYNAMIC_START`])), or 0: the tool's.
    pub time_domain_id: u64,
    /// [`timer_flag`]s.
    pub timer_flags: u64,
    /// Ticks per second (0: unknown).
    pub timer_resolution: i64,
    /// When the clock reads 0 (a [`timer_start`]).
    pub timer_start: u64,
}

/// `NVTX_TIME_DOMAIN_ID_*`: static ids are in [2^24, 2^32), the tool's from 2^32.
pub mod time_domain_id {
    /// `NVTX_TIME_DOMAIN_ID_STATIC_START`.
    pub const STATIC_START: u64 = 1 << 24;
    /// `NVTX_TIME_DOMAIN_ID_DYNAMIC_START`.
    pub const DYNAMIC_START: u64 = 1 << 32;
}

/// `NVTX_TIMER_FLAG_*`.
pub mod timer_flag {
    /// `NVTX_TIMER_FLAG_CLOCK_MONOTONIC`: never goes back.
    pub const MONOTONIC: u64 = 1 << 1;
    /// `NVTX_TIMER_FLAG_CLOCK_STEADY`: ticks at a constant rate.
    pub const STEADY: u64 = 1 << 2;
}

/// `NVTX_TIMER_START_*`: when a clock reads 0.
pub mod timer_start {
    /// `NVTX_TIMER_START_UNKNOWN`.
    pub const UNKNOWN: u64 = 0;
    /// `NVTX_TIMER_START_SYSTEM_BOOT`.
    pub const SYSTEM_BOOT: u64 = 1;
    /// `NVTX_TIMER_START_VM_BOOT`.
    pub const VM_BOOT: u64 = 2;
    /// `NVTX_TIMER_START_UNIX_EPOCH`.
    pub const UNIX_EPOCH: u64 = 3;
}

/// `NVTX_TIMER_SOURCE_UNSAFE_CALL_AFTER_PROCESS_TEARDOWN`: a timer source
/// the tool must not read once the process is tearing down.
pub const TIMER_SOURCE_UNSAFE_AFTER_TEARDOWN: u64 = 1;

/// `nvtxSyncPoint_t`: the same instant in two time domains.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SyncPoint {
    /// In the source domain.
    pub src: i64,
    /// In the destination domain.
    pub dst: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_nvidias() {
        assert_eq!(std::mem::size_of::<TimeDomainAttr>(), 48);
        assert_eq!(std::mem::size_of::<SyncPoint>(), 16);
    }
}
