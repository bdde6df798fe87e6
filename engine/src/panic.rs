//! The panic boundary every exported function runs inside.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; if it panics, returns `on_panic` instead of unwinding into C.
#[inline(always)]
pub fn guard<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(on_panic)
}
