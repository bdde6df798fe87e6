//! NVIDIA's NVTX3 tool-loading protocol: every number and struct layout that
//! a producer (nvtxr's loader) and a tool (nvtxr's event-log tool and recording
//! tool) must agree on, in one place. Read from NVIDIA's NVTX3 headers
//! (`nvtxDetail/nvtxTypes.h`, `nvtxInit.h`) and checked against
//! `libnvtx3interop.so.1`; see `shared/nvtx-protocol.md`.
//!
//! Loading: the producer reads [`INJECTION_PATH_VAR`], `dlopen`s the tool,
//! calls its [`ENTRY_POINT`] with a [`GetExportTable`]; the tool asks for the
//! [`Callbacks`] table and, per module, gets a table of slot addresses to
//! write its functions into.

use std::ffi::{c_int, c_uint, c_void};

/// The environment variable that names the tool library.
#[cfg(target_pointer_width = "64")]
pub const INJECTION_PATH_VAR: &str = "NVTX_INJECTION64_PATH";
#[cfg(not(target_pointer_width = "64"))]
pub const INJECTION_PATH_VAR: &str = "NVTX_INJECTION32_PATH";

/// The value of [`INJECTION_PATH_VAR`] that means "explicitly no tool".
pub const NO_TOOL_PATH: &str = "./.";

/// The tool's entry point, [`InitializeInjection`], NUL-terminated.
pub const ENTRY_POINT: &[u8] = b"InitializeInjectionNvtx2\0";

/// Export table ids a tool may ask for; every other id gives NULL.
pub const ETID_CALLBACKS: u32 = 1;
pub const ETID_VERSIONINFO: u32 = 3;

/// The NVTX API version (`NVTX_VERSION`).
pub const NVTX_VERSION: u32 = 3;

/// What push and pop return when nothing tracks depth (`NVTX_NO_PUSH_POP_TRACKING`).
pub const NO_PUSH_POP_TRACKING: i32 = -2;

/// A slot holds a tool function (or NULL): `void (*)(void)`, cast per slot.
pub type Slot = *const c_void;

/// `const void *(*getExportTable)(uint32_t id)`.
pub type GetExportTable = unsafe extern "C" fn(u32) -> *const c_void;

/// `int GetModuleFunctionTable(module, &table, &size)`: `table` is an array of
/// `size + 1` slot addresses, `[0]` and `[size]` NULL. Returns 1, or 0 (and
/// writes nothing) for an unknown module.
pub type GetModuleFunctionTable =
    unsafe extern "C" fn(c_int, *mut *mut *mut Slot, *mut c_uint) -> c_int;

/// `int InitializeInjectionNvtx2(getExportTable)`: nonzero when the tool attached.
pub type InitializeInjection = unsafe extern "C" fn(GetExportTable) -> c_int;

/// `NvtxExportTableCallbacks` (16 bytes), export table [`ETID_CALLBACKS`].
#[repr(C)]
pub struct Callbacks {
    pub struct_size: usize,
    pub get_module_function_table: GetModuleFunctionTable,
}

/// `NvtxExportTableVersionInfo` (24 bytes), export table [`ETID_VERSIONINFO`].
#[repr(C)]
pub struct VersionInfo {
    pub struct_size: usize,
    pub version: u32,
    pub reserved0: u32,
    pub set_injection_nvtx_version: unsafe extern "C" fn(u32),
}

/// The tool's side of a module table: writes `functions[i]` into slot `i + 1`
/// (the protocol's slot order), skipping NULL entries and whatever does not fit
/// the producer's table (its slots run from 1 to `size - 1`).
///
/// # Safety
/// `table` and `size` come from a successful `GetModuleFunctionTable` call, and
/// each function has the type the protocol gives its slot.
pub unsafe fn fill_slots(table: *mut *mut Slot, size: c_uint, functions: &[Slot]) {
    let slots = (size as usize).saturating_sub(1);
    for (i, f) in functions.iter().enumerate().take(slots) {
        if !f.is_null() {
            **table.add(i + 1) = *f;
        }
    }
}

const _: () = assert!(std::mem::size_of::<Callbacks>() == 16);
const _: () = assert!(std::mem::size_of::<VersionInfo>() == 24);

/// Callback modules: ids and sizes (a module's table has `size + 1` entries).
pub mod module {
    pub const CORE: i32 = 1;
    pub const CUDA: i32 = 2;
    pub const OPENCL: i32 = 3;
    pub const CUDART: i32 = 4;
    pub const CORE2: i32 = 5;
    pub const SYNC: i32 = 6;

    pub const CORE_SIZE: usize = 16;
    pub const CUDA_SIZE: usize = 9;
    pub const OPENCL_SIZE: usize = 15;
    pub const CUDART_SIZE: usize = 7;
    pub const CORE2_SIZE: usize = 16;
    pub const SYNC_SIZE: usize = 7;

    /// Every module, with its size.
    pub const ALL: [(i32, usize); 6] = [
        (CORE, CORE_SIZE),
        (CUDA, CUDA_SIZE),
        (OPENCL, OPENCL_SIZE),
        (CUDART, CUDART_SIZE),
        (CORE2, CORE2_SIZE),
        (SYNC, SYNC_SIZE),
    ];
}

/// Slot indices of the CORE module.
pub mod core {
    pub const MARK_EX: usize = 1;
    pub const MARK_A: usize = 2;
    pub const MARK_W: usize = 3;
    pub const RANGE_START_EX: usize = 4;
    pub const RANGE_START_A: usize = 5;
    pub const RANGE_START_W: usize = 6;
    pub const RANGE_END: usize = 7;
    pub const RANGE_PUSH_EX: usize = 8;
    pub const RANGE_PUSH_A: usize = 9;
    pub const RANGE_PUSH_W: usize = 10;
    pub const RANGE_POP: usize = 11;
    pub const NAME_CATEGORY_A: usize = 12;
    pub const NAME_CATEGORY_W: usize = 13;
    pub const NAME_OS_THREAD_A: usize = 14;
    pub const NAME_OS_THREAD_W: usize = 15;
}

/// Slot indices of the CORE2 (domain) module.
pub mod core2 {
    pub const DOMAIN_MARK_EX: usize = 1;
    pub const DOMAIN_RANGE_START_EX: usize = 2;
    pub const DOMAIN_RANGE_END: usize = 3;
    pub const DOMAIN_RANGE_PUSH_EX: usize = 4;
    pub const DOMAIN_RANGE_POP: usize = 5;
    pub const DOMAIN_RESOURCE_CREATE: usize = 6;
    pub const DOMAIN_RESOURCE_DESTROY: usize = 7;
    pub const DOMAIN_NAME_CATEGORY_A: usize = 8;
    pub const DOMAIN_NAME_CATEGORY_W: usize = 9;
    pub const DOMAIN_REGISTER_STRING_A: usize = 10;
    pub const DOMAIN_REGISTER_STRING_W: usize = 11;
    pub const DOMAIN_CREATE_A: usize = 12;
    pub const DOMAIN_CREATE_W: usize = 13;
    pub const DOMAIN_DESTROY: usize = 14;
    pub const INITIALIZE: usize = 15;
}

/// Slot indices of the CUDA driver naming module (A/W pairs).
pub mod cuda {
    pub const NAME_CU_DEVICE_A: usize = 1;
    pub const NAME_CU_CONTEXT_A: usize = 3;
    pub const NAME_CU_STREAM_A: usize = 5;
    pub const NAME_CU_EVENT_A: usize = 7;
}

/// Slot indices of the CUDA runtime naming module (A/W pairs).
pub mod cudart {
    pub const NAME_CUDA_DEVICE_A: usize = 1;
    pub const NAME_CUDA_STREAM_A: usize = 3;
    pub const NAME_CUDA_EVENT_A: usize = 5;
}

/// Slot indices of the OpenCL naming module (A/W pairs).
pub mod opencl {
    pub const NAME_CL_DEVICE_A: usize = 1;
    pub const NAME_CL_CONTEXT_A: usize = 3;
    pub const NAME_CL_COMMAND_QUEUE_A: usize = 5;
    pub const NAME_CL_MEM_OBJECT_A: usize = 7;
    pub const NAME_CL_SAMPLER_A: usize = 9;
    pub const NAME_CL_PROGRAM_A: usize = 11;
    pub const NAME_CL_EVENT_A: usize = 13;
}

/// Slot indices of the SYNC module (user-defined synchronization objects).
pub mod sync {
    pub const USER_CREATE: usize = 1;
    pub const USER_DESTROY: usize = 2;
    pub const USER_ACQUIRE_START: usize = 3;
    pub const USER_ACQUIRE_FAILED: usize = 4;
    pub const USER_ACQUIRE_SUCCESS: usize = 5;
    pub const USER_RELEASING: usize = 6;
    /// `nvtxSyncUserAttributes_t.version`.
    pub const ATTRIBUTES_VERSION: u16 = 3;
}

/// `nvtxEventAttributes_t` field values.
pub mod attr {
    pub const VERSION: u16 = 3;
    pub const COLOR_ARGB: i32 = 1;
    pub const MESSAGE_ASCII: i32 = 1;
    pub const MESSAGE_UNICODE: i32 = 2;
    pub const MESSAGE_REGISTERED: i32 = 3;
}

/// `nvtxEventAttributes_t` (version 3): 48 bytes, 8-aligned. Zero it, then
/// set version and size.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EventAttributes {
    pub version: u16,
    pub size: u16,
    /// 0 means none.
    pub category: u32,
    /// 0 unknown, 1 ARGB.
    pub color_type: i32,
    /// `0xAARRGGBB`.
    pub color: u32,
    /// 0 none, 1 u64, 2 i64, 3 f64, 4 u32, 5 i32, 6 f32.
    pub payload_type: i32,
    pub reserved0: i32,
    /// The payload union, as bits; 32-bit values sit in the low 4 bytes.
    pub payload: u64,
    /// 0 none, 1 ASCII (UTF-8 in practice), 2 `wchar_t`, 3 registered string handle.
    pub message_type: i32,
    /// Explicit, so the struct is fully initialized when a tool reads it.
    pub padding: i32,
    pub message: *const c_void,
}

/// `nvtxResourceAttributes_t` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResourceAttributes {
    pub version: u16,
    pub size: u16,
    /// `(class << 16) | index`: 0x10001 generic pointer, 0x10002 handle, ...
    pub identifier_type: i32,
    pub identifier: u64,
    pub message_type: i32,
    pub message: *const c_void,
}

/// `nvtxSyncUserAttributes_t` (16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SyncUserAttributes {
    pub version: u16,
    pub size: u16,
    pub message_type: i32,
    pub message: *const c_void,
}

const _: () = assert!(std::mem::size_of::<EventAttributes>() == 48);
const _: () = assert!(std::mem::align_of::<EventAttributes>() == 8);
const _: () = assert!(std::mem::size_of::<ResourceAttributes>() == 32);
const _: () = assert!(std::mem::size_of::<SyncUserAttributes>() == 16);
