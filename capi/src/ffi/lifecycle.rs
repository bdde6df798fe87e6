//! Initialization, tool status and version.

use super::boundary::exported;
use nvtxr_engine::loader;
use std::ffi::c_char;
use std::ptr;

/// Loads and attaches the tool named by `NVTX_INJECTION64_PATH` now, instead of
/// on the first call, and forwards `nvtxInitialize(NULL)` to it.
///
/// Returns whether a tool is attached. May block while a tool initializes
/// (on this or another thread). Thread-safe; initialization runs once.
#[unsafe(no_mangle)]
pub extern "C" fn nvtxr_initialize() -> bool {
    exported!({ loader::initialize_and_forward() })
}

/// Whether a tool is attached (initializing first if nobody has yet).
#[unsafe(no_mangle)]
pub extern "C" fn nvtxr_tool_attached() -> bool {
    exported!({ loader::tool_attached() })
}

/// Why the tool named by `NVTX_INJECTION64_PATH` failed to attach, as one line
/// of UTF-8 text, or NULL if it attached or none was named.
///
/// The string is owned by nvtxr and valid for the life of the process.
#[unsafe(no_mangle)]
pub extern "C" fn nvtxr_load_error() -> *const c_char {
    exported!({
        loader::tool_attached();
        loader::load_error().map_or(ptr::null(), |e| e.as_ptr())
    })
}

/// nvtxr's version as `major * 1000000 + minor * 1000 + patch`; equal to
/// `NVTXR_VERSION` of the header it was built with.
#[unsafe(no_mangle)]
pub extern "C" fn nvtxr_version() -> u32 {
    const fn parse(s: &str) -> u32 {
        let b = s.as_bytes();
        let mut n = 0;
        let mut i = 0;
        while i < b.len() {
            n = n * 10 + (b[i] - b'0') as u32;
            i += 1;
        }
        n
    }
    const VERSION: u32 = parse(env!("CARGO_PKG_VERSION_MAJOR")) * 1_000_000
        + parse(env!("CARGO_PKG_VERSION_MINOR")) * 1_000
        + parse(env!("CARGO_PKG_VERSION_PATCH"));
    VERSION
}

/// nvtxr's version as text (`"MAJOR.MINOR.PATCH"`); static storage.
#[unsafe(no_mangle)]
pub extern "C" fn nvtxr_version_string() -> *const c_char {
    const TEXT: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    TEXT.as_ptr().cast()
}
