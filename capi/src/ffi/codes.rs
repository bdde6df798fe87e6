//! What status-returning functions return: the `nvtxr_status_t` codes,
//! their meaning (`nvtxr_status_string`) and the engine's errors as codes.

use nvtxr_engine::error::Error;

/// What status-returning functions return: `NVTXR_OK`, or one of the
/// `NVTXR_ERROR_*` codes, every one of them at or below `NVTXR_ERROR_BASE`.
/// Push and pop return a depth or `NVTXR_NO_PUSH_POP_TRACKING` (both above
/// it) or an error code: `NVTXR_IS_ERROR(v)` / `nvtxr_is_error(v)` tells them
/// apart; `nvtxr_status_string(v)` says what a code means.
pub type nvtxr_status_t = i32;

/// Success.
pub const NVTXR_OK: nvtxr_status_t = 0;
/// Every error code is at or below this value.
pub const NVTXR_ERROR_BASE: nvtxr_status_t = -100;
/// What push and pop return when no tool tracks nesting depth.
pub const NVTXR_NO_PUSH_POP_TRACKING: i32 = -2;
// The C ABI's constants are literals (cbindgen writes them into the header);
// they must equal the protocol's.
const _: () = assert!(NVTXR_NO_PUSH_POP_TRACKING == nvtx_protocol::NO_PUSH_POP_TRACKING);
/// A required pointer argument was NULL.
pub const NVTXR_ERROR_NULL_ARGUMENT: nvtxr_status_t = -101;
/// An argument was out of range (unknown payload or color type, both a text
/// and a registered message, a registered string of another domain).
pub const NVTXR_ERROR_INVALID_ARGUMENT: nvtxr_status_t = -102;
/// The domain (or the domain of a registered string) was already destroyed.
pub const NVTXR_ERROR_DESTROYED: nvtxr_status_t = -103;
/// nvtxr hit an internal error (a caught panic); nothing was forwarded.
pub const NVTXR_ERROR_INTERNAL: nvtxr_status_t = -104;
/// A domain or string call (create, register, destroy) from a signal handler
/// that interrupted another such call on the same thread: refused instead of
/// deadlocking; nothing was done.
pub const NVTXR_ERROR_REENTERED: nvtxr_status_t = -105;

pub(super) fn status(result: Result<(), Error>) -> nvtxr_status_t {
    match result {
        Ok(()) => NVTXR_OK,
        Err(e) => error_code(e),
    }
}

pub(super) fn error_code(e: Error) -> nvtxr_status_t {
    match e {
        Error::NullArgument => NVTXR_ERROR_NULL_ARGUMENT,
        Error::InvalidArgument(_) => NVTXR_ERROR_INVALID_ARGUMENT,
        Error::Destroyed => NVTXR_ERROR_DESTROYED,
        Error::Reentered => NVTXR_ERROR_REENTERED,
    }
}

/// Whether `value` (a status, or what push or pop returned) is an error code.
#[unsafe(no_mangle)]
pub extern "C" fn nvtxr_is_error(value: i32) -> bool {
    value <= NVTXR_ERROR_BASE
}

/// What a status code means, as a static NUL-terminated English sentence
/// (`"unknown status"` for a value that is not one); never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn nvtxr_status_string(status: nvtxr_status_t) -> *const std::ffi::c_char {
    let text: &'static std::ffi::CStr = match status {
        NVTXR_OK => c"success",
        NVTXR_ERROR_NULL_ARGUMENT => c"a required argument was NULL",
        NVTXR_ERROR_INVALID_ARGUMENT => c"an argument was invalid (an unknown color or payload type, two messages, both a payload and extended payloads, NULL payloads with a count, a string of another domain, an uninitialized nvtxr_event_t size)",
        NVTXR_ERROR_DESTROYED => c"the domain was already destroyed",
        NVTXR_ERROR_INTERNAL => c"nvtxr hit an internal error; nothing was forwarded",
        NVTXR_ERROR_REENTERED => c"called from a signal handler that interrupted a domain or string call on this thread",
        _ => c"unknown status",
    };
    text.as_ptr()
}
