//! The panic boundary every exported function runs inside, and what a
//! caught panic returns: chosen by the function's return type, the same for
//! every function ([`OnPanic`]), so no call site picks its own.

use super::codes::NVTXR_ERROR_INTERNAL;

/// What an exported function returns when its body panicked.
pub trait OnPanic {
    fn on_panic() -> Self;
}

/// A status, or a depth (push, pop): `NVTXR_ERROR_INTERNAL`.
impl OnPanic for i32 {
    fn on_panic() -> Self {
        NVTXR_ERROR_INTERNAL
    }
}

/// A range id, a thread id, a version: 0 (ending range 0 is a no-op).
impl OnPanic for u64 {
    fn on_panic() -> Self {
        0
    }
}

/// A timestamp: 0, as with no tool.
impl OnPanic for i64 {
    fn on_panic() -> Self {
        0
    }
}

impl OnPanic for u32 {
    fn on_panic() -> Self {
        0
    }
}

/// Whether something holds: no.
impl OnPanic for bool {
    fn on_panic() -> Self {
        false
    }
}

impl OnPanic for () {
    fn on_panic() -> Self {}
}

/// A handle or a string: NULL.
impl<T> OnPanic for *const T {
    fn on_panic() -> Self {
        std::ptr::null()
    }
}

impl<T> OnPanic for *mut T {
    fn on_panic() -> Self {
        std::ptr::null_mut()
    }
}

/// A fast path's answer: none (the slow path then runs, and reports).
impl<T> OnPanic for Option<T> {
    fn on_panic() -> Self {
        None
    }
}

/// Runs `body`; if it panics, returns `T::on_panic()` instead of unwinding
/// into C.
#[inline(always)]
pub fn boundary<T: OnPanic>(body: impl FnOnce() -> T) -> T {
    nvtx_protocol::boundary::guard_with(T::on_panic, body)
}

/// The body of an exported function, inside [`boundary`]. `exported!(unsafe
/// { ... })` for a function whose pointer arguments the body uses: the
/// module's `# Safety` contract (every pointer NULL or valid as documented)
/// is what makes it sound, once for every function.
macro_rules! exported {
    (unsafe $body:block) => {
        $crate::ffi::boundary::boundary(|| {
            // SAFETY: the caller upholds the module's `# Safety` contract for
            // every pointer argument (see `ffi`).
            #[allow(unused_unsafe)]
            unsafe {
                $body
            }
        })
    };
    ($body:block) => {
        $crate::ffi::boundary::boundary(|| $body)
    };
}
pub(crate) use exported;
