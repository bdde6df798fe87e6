//! The panic boundary of every door's exported functions (the C library,
//! the NVTX exports and drop-ins, the recording tool): a panic (a bug) never
//! unwinds into the C program that called. The function returns instead
//! the value its door gives for a panic: the slot's no-tool value for
//! NVIDIA's functions (the protocol's table), `NVTXR_ERROR_INTERNAL` or a
//! typed default for nvtxr's C functions (by return type, capi's
//! `OnPanic`), a dropped and counted event for the recording tool.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; if it panics, returns `on_panic` instead of unwinding.
#[inline(always)]
pub fn guard<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    guard_with(|| on_panic, body)
}

/// Runs `body`; if it panics, returns what `on_panic` makes instead of
/// unwinding. The panic's payload is leaked, not dropped: dropping it could
/// panic again, past the boundary.
#[inline(always)]
pub fn guard_with<T>(on_panic: impl FnOnce() -> T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            std::mem::forget(payload);
            on_panic()
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_panic_returns_the_doors_value() {
        assert_eq!(super::guard(-2, || 3), 3);
        assert_eq!(super::guard(-2, || panic!("a bug")), -2);
        assert_eq!(super::guard_with(|| 7u64, || panic!("a bug")), 7);
    }
}
