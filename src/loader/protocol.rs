//! The numbers of NVIDIA's NVTX3 tool-loading protocol (see `nvtx-protocol.md`):
//! module ids, table sizes, slot indices and the structs a tool reads.

use std::ffi::c_void;

/// The environment variable that names the tool library.
#[cfg(target_pointer_width = "64")]
pub(crate) const INJECTION_PATH_VAR: &str = "NVTX_INJECTION64_PATH";
#[cfg(not(target_pointer_width = "64"))]
pub(crate) const INJECTION_PATH_VAR: &str = "NVTX_INJECTION32_PATH";

/// The value of [`INJECTION_PATH_VAR`] that means "explicitly no tool".
pub(crate) const NO_TOOL_PATH: &str = "./.";

/// The tool's entry point, `int InitializeInjectionNvtx2(getExportTable)`.
pub(crate) const ENTRY_POINT: &[u8] = b"InitializeInjectionNvtx2\0";

/// Export table ids a tool may ask for.
pub(crate) const ETID_CALLBACKS: u32 = 1;
pub(crate) const ETID_VERSIONINFO: u32 = 3;

/// The NVTX API version nvtxr implements.
pub(crate) const NVTX_VERSION: u32 = 3;

/// Callback modules: `(module id, number of entries)`. A table for a module
/// has `size + 1` entries: `[0]` NULL, `[1..size]` slot addresses, `[size]` NULL.
pub(crate) mod module {
    pub(crate) const CORE: i32 = 1;
    pub(crate) const CUDA: i32 = 2;
    pub(crate) const OPENCL: i32 = 3;
    pub(crate) const CUDART: i32 = 4;
    pub(crate) const CORE2: i32 = 5;
    pub(crate) const SYNC: i32 = 6;

    pub(crate) const CORE_SIZE: usize = 16;
    pub(crate) const CUDA_SIZE: usize = 9;
    pub(crate) const OPENCL_SIZE: usize = 15;
    pub(crate) const CUDART_SIZE: usize = 7;
    pub(crate) const CORE2_SIZE: usize = 16;
    pub(crate) const SYNC_SIZE: usize = 7;
}

/// Slot indices of the CORE module.
pub(crate) mod core {
    pub(crate) const MARK_EX: usize = 1;
    pub(crate) const MARK_A: usize = 2;
    pub(crate) const RANGE_START_EX: usize = 4;
    pub(crate) const RANGE_START_A: usize = 5;
    pub(crate) const RANGE_END: usize = 7;
    pub(crate) const RANGE_PUSH_EX: usize = 8;
    pub(crate) const RANGE_PUSH_A: usize = 9;
    pub(crate) const RANGE_POP: usize = 11;
    pub(crate) const NAME_CATEGORY_A: usize = 12;
    pub(crate) const NAME_OS_THREAD_A: usize = 14;
}

/// Slot indices of the CORE2 (domain) module.
pub(crate) mod core2 {
    pub(crate) const DOMAIN_MARK_EX: usize = 1;
    pub(crate) const DOMAIN_RANGE_START_EX: usize = 2;
    pub(crate) const DOMAIN_RANGE_END: usize = 3;
    pub(crate) const DOMAIN_RANGE_PUSH_EX: usize = 4;
    pub(crate) const DOMAIN_RANGE_POP: usize = 5;
    pub(crate) const DOMAIN_NAME_CATEGORY_A: usize = 8;
    pub(crate) const DOMAIN_REGISTER_STRING_A: usize = 10;
    pub(crate) const DOMAIN_CREATE_A: usize = 12;
    pub(crate) const DOMAIN_DESTROY: usize = 14;
    pub(crate) const INITIALIZE: usize = 15;
}

/// Slot indices of the CUDA driver naming module.
pub(crate) mod cuda {
    pub(crate) const NAME_CU_DEVICE_A: usize = 1;
    pub(crate) const NAME_CU_CONTEXT_A: usize = 3;
    pub(crate) const NAME_CU_STREAM_A: usize = 5;
    pub(crate) const NAME_CU_EVENT_A: usize = 7;
}

/// Slot indices of the CUDA runtime naming module.
pub(crate) mod cudart {
    pub(crate) const NAME_CUDA_DEVICE_A: usize = 1;
    pub(crate) const NAME_CUDA_STREAM_A: usize = 3;
    pub(crate) const NAME_CUDA_EVENT_A: usize = 5;
}

/// `nvtxEventAttributes_t` field values.
pub(crate) mod attr {
    pub(crate) const VERSION: u16 = 3;
    pub(crate) const COLOR_ARGB: i32 = 1;
    pub(crate) const MESSAGE_ASCII: i32 = 1;
    pub(crate) const MESSAGE_REGISTERED: i32 = 3;
}

/// `nvtxEventAttributes_t` (version 3): 48 bytes, 8-aligned.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct EventAttributes {
    pub version: u16,
    pub size: u16,
    pub category: u32,
    pub color_type: i32,
    pub color: u32,
    pub payload_type: i32,
    pub reserved0: i32,
    /// The payload union, as bits; 32-bit values sit in the low 4 bytes.
    pub payload: u64,
    pub message_type: i32,
    /// Explicit so the struct is fully initialized when a tool reads it.
    pub padding: i32,
    pub message: *const c_void,
}

const _: () = assert!(std::mem::size_of::<EventAttributes>() == 48);
const _: () = assert!(std::mem::align_of::<EventAttributes>() == 8);

/// `NVTX_NO_PUSH_POP_TRACKING`: what push and pop return when no tool tracks depth.
pub(crate) const NO_PUSH_POP_TRACKING: i32 = -2;
