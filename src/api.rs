//! The safe Rust API: a door over nvtxr's engine (`nvtxr-engine`), as the C
//! ABI (`nvtxr-capi`) is another.

use crate::attributes::{with_c_str, EventAttributes};
use crate::domain::{Domain, LocalRange, Range};
use nvtxr_engine::loader;
use nvtxr_engine::naming::{self, CudaObject};
use nvtxr_engine::thread::current_os_thread_id;
use std::borrow::Cow;

/// Loads and attaches the tool now (otherwise the first call does it);
/// returns whether a tool is attached.
pub fn initialize() -> bool {
    loader::initialize_and_forward()
}

/// Whether a tool is attached (initializes first if needed).
pub fn is_tool_attached() -> bool {
    loader::tool_attached()
}

/// Why the tool named in `NVTX_INJECTION64_PATH` did not attach, if it did not.
pub fn load_error() -> Option<Cow<'static, str>> {
    loader::tool_attached();
    loader::load_error().map(|e| e.to_string_lossy())
}

/// A mark in the default domain.
pub fn mark<'a>(attributes: impl Into<EventAttributes<'a>>) {
    Domain::global().mark(attributes)
}

/// A push/pop range in the default domain.
pub fn push<'a>(attributes: impl Into<EventAttributes<'a>>) -> LocalRange<'static> {
    Domain::global().push(attributes)
}

/// A start/end range in the default domain.
pub fn start<'a>(attributes: impl Into<EventAttributes<'a>>) -> Range<'static> {
    Domain::global().start(attributes)
}

/// Names a category of the default domain.
pub fn name_category(id: u32, name: &str) {
    Domain::global().name_category(id, name)
}

/// Names the calling OS thread.
pub fn name_current_thread(name: &str) {
    name_os_thread(current_os_thread_id(), name)
}

/// Names an OS thread by its id (Linux `gettid`).
pub fn name_os_thread(tid: u32, name: &str) {
    if loader::tool_attached() {
        // SAFETY: the pointer is a valid C string for the call.
        with_c_str(name, |c| unsafe { naming::name_os_thread(tid, c.as_ptr()) })
    }
}

/// Names a CUDA device (by ordinal) or a CUDA object (by handle value).
pub fn name_cuda(object: CudaObject, id: usize, name: &str) {
    if loader::tool_attached() {
        // SAFETY: the pointer is a valid C string for the call.
        with_c_str(name, |c| unsafe {
            naming::name_cuda(object, id, c.as_ptr())
        })
    }
}

/// A push/pop range in the default domain whose message is registered once
/// per call site (in a `static`), then passed by handle: the cheapest way to
/// annotate a hot Rust function. Evaluates to a [`LocalRange`] guard.
///
/// ```
/// fn step() {
///     let _r = nvtxr::range!("step");
///     // ...
/// }
/// step();
/// ```
#[macro_export]
macro_rules! range {
    ($message:expr) => {{
        static MESSAGE: ::std::sync::OnceLock<$crate::RegisteredString<'static>> =
            ::std::sync::OnceLock::new();
        let domain = $crate::Domain::global();
        domain.push(MESSAGE.get_or_init(|| domain.register($message)))
    }};
}

/// A push/pop range, as [`range!`], that lasts until the end of the
/// enclosing block: the macro binds the guard itself, so it cannot be
/// dropped at once by mistake (as `let _ = nvtxr::range!(...)` is).
/// With no argument, it is named after the enclosing function.
///
/// ```
/// fn step(batch: u32) {
///     nvtxr::scope!();                  // "step" (its path), until step returns
///     for _ in 0..batch {
///         nvtxr::scope!("inner loop");  // until the end of this iteration
///     }
/// }
/// step(2);
/// ```
#[macro_export]
macro_rules! scope {
    () => {
        let _nvtxr_scope = $crate::function_range!();
    };
    ($message:expr) => {
        let _nvtxr_scope = $crate::range!($message);
    };
}

/// [`range!`] named after the enclosing function (its path, e.g. `crate::module::function`).
///
/// ```
/// fn forward() {
///     let _r = nvtxr::function_range!();
/// }
/// forward();
/// ```
#[macro_export]
macro_rules! function_range {
    () => {{
        fn here() {}
        fn name_of<T>(_: T) -> &'static str {
            ::std::any::type_name::<T>()
        }
        $crate::range!(name_of(here).trim_end_matches("::here"))
    }};
}

/// Names an OpenCL object: `handle` is the `cl_*` handle's address (never
/// dereferenced), as `name_cuda` takes CUDA handles.
pub fn name_opencl(object: crate::OpenClObject, handle: usize, name: &str) {
    if loader::tool_attached() {
        // SAFETY: the pointer is a valid C string for the call.
        with_c_str(name, |c| unsafe {
            naming::name_opencl(object, handle as *mut std::ffi::c_void, c.as_ptr())
        })
    }
}

/// A reading of the tool's clock, for samples and events recorded later
/// ([`Counter::batch`](crate::Counter::batch); NVTX's `nvtxTimestampGet`); 0 with no tool.
pub fn timestamp() -> i64 {
    nvtxr_engine::payloads::timestamp()
}
