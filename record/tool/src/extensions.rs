//! The tool's extension entry point (`InitializeInjectionNvtxExtension`):
//! fills the slots of the counters module (see [`crate::counters`]), the
//! payload module (see [`crate::payload`]) and the memory module (see
//! [`crate::memory`]).

use nvtx_protocol::ext::{self, ModuleInfo};
use std::ffi::c_int;

/// The tool's extension entry point: fills the slots of the modules it records.
///
/// # Safety
/// Called by a producer, as the protocol says, with its module description.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn InitializeInjectionNvtxExtension(info: *mut ModuleInfo) -> c_int {
    // SAFETY: the producer's description and its one segment, for the
    // duration of the call.
    unsafe {
        let Some(info) = info.as_mut() else { return 0 };
        if !crate::setup() {
            return 0;
        }
        let Some(segment) = info.segments.as_ref() else {
            return 0;
        };
        let functions = match (info.module_id, info.compat_id) {
            (m, c) if m == ext::COUNTERS.id && c == ext::COUNTERS.compat => {
                crate::counters::functions()
            }
            (m, c) if m == ext::PAYLOAD.id && c == ext::PAYLOAD.compat => {
                crate::payload::functions()
            }
            (m, c) if m == ext::MEM.id && c == ext::MEM.compat => crate::memory::functions(),
            _ => return 0,
        };
        functions.install(segment);
        1
    }
}
