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

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![deny(missing_docs)]

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::marker::PhantomData;

/// The environment variable that names the tool library.
#[cfg(target_pointer_width = "64")]
pub const INJECTION_PATH_VAR: &str = "NVTX_INJECTION64_PATH";
#[cfg(not(target_pointer_width = "64"))]
pub const INJECTION_PATH_VAR: &str = "NVTX_INJECTION32_PATH";

/// The value of [`INJECTION_PATH_VAR`] that means "explicitly no tool".
pub const NO_TOOL_PATH: &str = "./.";

/// The tool's entry point, [`InitializeInjection`], NUL-terminated.
pub const ENTRY_POINT: &[u8] = b"InitializeInjectionNvtx2\0";

/// Export table id of [`Callbacks`] (every id but the two gives NULL).
pub const ETID_CALLBACKS: u32 = 1;
/// Export table id of [`VersionInfo`].
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
    /// `sizeof` the struct.
    pub struct_size: usize,
    /// Gives a module's table of slot addresses.
    pub get_module_function_table: GetModuleFunctionTable,
}

/// `NvtxExportTableVersionInfo` (24 bytes), export table [`ETID_VERSIONINFO`].
#[repr(C)]
pub struct VersionInfo {
    /// `sizeof` the struct.
    pub struct_size: usize,
    /// The producer's NVTX version ([`NVTX_VERSION`]).
    pub version: u32,
    /// Zero.
    pub reserved0: u32,
    /// The tool tells the producer which version it implements.
    pub set_injection_nvtx_version: unsafe extern "C" fn(u32),
}

const _: () = assert!(std::mem::size_of::<Callbacks>() == 16);
const _: () = assert!(std::mem::size_of::<VersionInfo>() == 24);

pub mod boundary;
pub mod ext;
pub mod mem;
pub mod nvtxw;
pub mod payload;
pub mod time;

/// Callback modules: ids and sizes (a module's table has `size + 1` entries).
pub mod module {
    /// Default-domain events and naming (`nvtxMarkA`, ...).
    pub const CORE: i32 = 1;
    /// Naming CUDA driver objects.
    pub const CUDA: i32 = 2;
    /// Naming OpenCL objects.
    pub const OPENCL: i32 = 3;
    /// Naming CUDA runtime objects.
    pub const CUDART: i32 = 4;
    /// Domains, registered strings, resources (`nvtxDomainMarkEx`, ...).
    pub const CORE2: i32 = 5;
    /// User-defined synchronization objects.
    pub const SYNC: i32 = 6;

    /// Size of [`CORE`]'s table.
    pub const CORE_SIZE: usize = 16;
    /// Size of [`CUDA`]'s table.
    pub const CUDA_SIZE: usize = 9;
    /// Size of [`OPENCL`]'s table.
    pub const OPENCL_SIZE: usize = 15;
    /// Size of [`CUDART`]'s table.
    pub const CUDART_SIZE: usize = 7;
    /// Size of [`CORE2`]'s table.
    pub const CORE2_SIZE: usize = 16;
    /// Size of [`SYNC`]'s table.
    pub const SYNC_SIZE: usize = 7;

    /// A module's size (0 for an unknown module).
    pub const fn size(module: i32) -> usize {
        match module {
            CORE => CORE_SIZE,
            CUDA => CUDA_SIZE,
            OPENCL => OPENCL_SIZE,
            CUDART => CUDART_SIZE,
            CORE2 => CORE2_SIZE,
            SYNC => SYNC_SIZE,
            _ => 0,
        }
    }

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

/// `wchar_t` on Linux: UTF-32.
pub type WChar = i32;
/// An opaque handle: a domain, registered string, resource or sync object,
/// or a CUDA or OpenCL object being named (`nvtxDomainHandle_t`, ...).
pub type Handle = *mut c_void;
/// `const nvtxEventAttributes_t *`.
pub type Attributes = *const EventAttributes;
/// A NUL-terminated string (`const char *`).
pub type Str = *const c_char;
/// A NUL-terminated wide string (`const wchar_t *`).
pub type WStr = *const WChar;

/// Every slot of every module, in one list, the only place slot numbers
/// and signatures are written:
/// `MODULE INDEX CONST nvtxName(arg: Type, ...) [-> Ret = value with no tool];`.
///
/// Calls `$callback!` with the list; this crate makes the typed [`slot`]
/// constants from it, nvtxr's loader each slot's first-call and absent
/// functions, nvtxr's drop-in library its exported functions.
#[macro_export]
macro_rules! for_each_slot {
    ($callback:ident) => {
        $callback! {
            CORE 1 MARK_EX nvtxMarkEx(attributes: $crate::Attributes);
            CORE 2 MARK_A nvtxMarkA(message: $crate::Str);
            CORE 3 MARK_W nvtxMarkW(message: $crate::WStr);
            CORE 4 RANGE_START_EX nvtxRangeStartEx(attributes: $crate::Attributes) -> u64 = 0;
            CORE 5 RANGE_START_A nvtxRangeStartA(message: $crate::Str) -> u64 = 0;
            CORE 6 RANGE_START_W nvtxRangeStartW(message: $crate::WStr) -> u64 = 0;
            CORE 7 RANGE_END nvtxRangeEnd(id: u64);
            CORE 8 RANGE_PUSH_EX nvtxRangePushEx(attributes: $crate::Attributes) -> ::std::ffi::c_int = $crate::NO_PUSH_POP_TRACKING;
            CORE 9 RANGE_PUSH_A nvtxRangePushA(message: $crate::Str) -> ::std::ffi::c_int = $crate::NO_PUSH_POP_TRACKING;
            CORE 10 RANGE_PUSH_W nvtxRangePushW(message: $crate::WStr) -> ::std::ffi::c_int = $crate::NO_PUSH_POP_TRACKING;
            CORE 11 RANGE_POP nvtxRangePop() -> ::std::ffi::c_int = $crate::NO_PUSH_POP_TRACKING;
            CORE 12 NAME_CATEGORY_A nvtxNameCategoryA(category: u32, name: $crate::Str);
            CORE 13 NAME_CATEGORY_W nvtxNameCategoryW(category: u32, name: $crate::WStr);
            CORE 14 NAME_OS_THREAD_A nvtxNameOsThreadA(thread_id: u32, name: $crate::Str);
            CORE 15 NAME_OS_THREAD_W nvtxNameOsThreadW(thread_id: u32, name: $crate::WStr);

            CORE2 1 DOMAIN_MARK_EX nvtxDomainMarkEx(domain: $crate::Handle, attributes: $crate::Attributes);
            CORE2 2 DOMAIN_RANGE_START_EX nvtxDomainRangeStartEx(domain: $crate::Handle, attributes: $crate::Attributes) -> u64 = 0;
            CORE2 3 DOMAIN_RANGE_END nvtxDomainRangeEnd(domain: $crate::Handle, id: u64);
            CORE2 4 DOMAIN_RANGE_PUSH_EX nvtxDomainRangePushEx(domain: $crate::Handle, attributes: $crate::Attributes) -> ::std::ffi::c_int = $crate::NO_PUSH_POP_TRACKING;
            CORE2 5 DOMAIN_RANGE_POP nvtxDomainRangePop(domain: $crate::Handle) -> ::std::ffi::c_int = $crate::NO_PUSH_POP_TRACKING;
            CORE2 6 DOMAIN_RESOURCE_CREATE nvtxDomainResourceCreate(domain: $crate::Handle, attributes: *const $crate::ResourceAttributes) -> $crate::Handle = ::std::ptr::null_mut();
            CORE2 7 DOMAIN_RESOURCE_DESTROY nvtxDomainResourceDestroy(resource: $crate::Handle);
            CORE2 8 DOMAIN_NAME_CATEGORY_A nvtxDomainNameCategoryA(domain: $crate::Handle, category: u32, name: $crate::Str);
            CORE2 9 DOMAIN_NAME_CATEGORY_W nvtxDomainNameCategoryW(domain: $crate::Handle, category: u32, name: $crate::WStr);
            CORE2 10 DOMAIN_REGISTER_STRING_A nvtxDomainRegisterStringA(domain: $crate::Handle, text: $crate::Str) -> $crate::Handle = ::std::ptr::null_mut();
            CORE2 11 DOMAIN_REGISTER_STRING_W nvtxDomainRegisterStringW(domain: $crate::Handle, text: $crate::WStr) -> $crate::Handle = ::std::ptr::null_mut();
            CORE2 12 DOMAIN_CREATE_A nvtxDomainCreateA(name: $crate::Str) -> $crate::Handle = ::std::ptr::null_mut();
            CORE2 13 DOMAIN_CREATE_W nvtxDomainCreateW(name: $crate::WStr) -> $crate::Handle = ::std::ptr::null_mut();
            CORE2 14 DOMAIN_DESTROY nvtxDomainDestroy(domain: $crate::Handle);
            CORE2 15 INITIALIZE nvtxInitialize(reserved: *const ::std::ffi::c_void);

            CUDA 1 NAME_CU_DEVICE_A nvtxNameCuDeviceA(device: ::std::ffi::c_int, name: $crate::Str);
            CUDA 2 NAME_CU_DEVICE_W nvtxNameCuDeviceW(device: ::std::ffi::c_int, name: $crate::WStr);
            CUDA 3 NAME_CU_CONTEXT_A nvtxNameCuContextA(context: $crate::Handle, name: $crate::Str);
            CUDA 4 NAME_CU_CONTEXT_W nvtxNameCuContextW(context: $crate::Handle, name: $crate::WStr);
            CUDA 5 NAME_CU_STREAM_A nvtxNameCuStreamA(stream: $crate::Handle, name: $crate::Str);
            CUDA 6 NAME_CU_STREAM_W nvtxNameCuStreamW(stream: $crate::Handle, name: $crate::WStr);
            CUDA 7 NAME_CU_EVENT_A nvtxNameCuEventA(event: $crate::Handle, name: $crate::Str);
            CUDA 8 NAME_CU_EVENT_W nvtxNameCuEventW(event: $crate::Handle, name: $crate::WStr);

            CUDART 1 NAME_CUDA_DEVICE_A nvtxNameCudaDeviceA(device: ::std::ffi::c_int, name: $crate::Str);
            CUDART 2 NAME_CUDA_DEVICE_W nvtxNameCudaDeviceW(device: ::std::ffi::c_int, name: $crate::WStr);
            CUDART 3 NAME_CUDA_STREAM_A nvtxNameCudaStreamA(stream: $crate::Handle, name: $crate::Str);
            CUDART 4 NAME_CUDA_STREAM_W nvtxNameCudaStreamW(stream: $crate::Handle, name: $crate::WStr);
            CUDART 5 NAME_CUDA_EVENT_A nvtxNameCudaEventA(event: $crate::Handle, name: $crate::Str);
            CUDART 6 NAME_CUDA_EVENT_W nvtxNameCudaEventW(event: $crate::Handle, name: $crate::WStr);

            OPENCL 1 NAME_CL_DEVICE_A nvtxNameClDeviceA(device: $crate::Handle, name: $crate::Str);
            OPENCL 2 NAME_CL_DEVICE_W nvtxNameClDeviceW(device: $crate::Handle, name: $crate::WStr);
            OPENCL 3 NAME_CL_CONTEXT_A nvtxNameClContextA(context: $crate::Handle, name: $crate::Str);
            OPENCL 4 NAME_CL_CONTEXT_W nvtxNameClContextW(context: $crate::Handle, name: $crate::WStr);
            OPENCL 5 NAME_CL_COMMAND_QUEUE_A nvtxNameClCommandQueueA(queue: $crate::Handle, name: $crate::Str);
            OPENCL 6 NAME_CL_COMMAND_QUEUE_W nvtxNameClCommandQueueW(queue: $crate::Handle, name: $crate::WStr);
            OPENCL 7 NAME_CL_MEM_OBJECT_A nvtxNameClMemObjectA(object: $crate::Handle, name: $crate::Str);
            OPENCL 8 NAME_CL_MEM_OBJECT_W nvtxNameClMemObjectW(object: $crate::Handle, name: $crate::WStr);
            OPENCL 9 NAME_CL_SAMPLER_A nvtxNameClSamplerA(sampler: $crate::Handle, name: $crate::Str);
            OPENCL 10 NAME_CL_SAMPLER_W nvtxNameClSamplerW(sampler: $crate::Handle, name: $crate::WStr);
            OPENCL 11 NAME_CL_PROGRAM_A nvtxNameClProgramA(program: $crate::Handle, name: $crate::Str);
            OPENCL 12 NAME_CL_PROGRAM_W nvtxNameClProgramW(program: $crate::Handle, name: $crate::WStr);
            OPENCL 13 NAME_CL_EVENT_A nvtxNameClEventA(event: $crate::Handle, name: $crate::Str);
            OPENCL 14 NAME_CL_EVENT_W nvtxNameClEventW(event: $crate::Handle, name: $crate::WStr);

            SYNC 1 SYNC_USER_CREATE nvtxDomainSyncUserCreate(domain: $crate::Handle, attributes: *const $crate::SyncUserAttributes) -> $crate::Handle = ::std::ptr::null_mut();
            SYNC 2 SYNC_USER_DESTROY nvtxDomainSyncUserDestroy(handle: $crate::Handle);
            SYNC 3 SYNC_USER_ACQUIRE_START nvtxDomainSyncUserAcquireStart(handle: $crate::Handle);
            SYNC 4 SYNC_USER_ACQUIRE_FAILED nvtxDomainSyncUserAcquireFailed(handle: $crate::Handle);
            SYNC 5 SYNC_USER_ACQUIRE_SUCCESS nvtxDomainSyncUserAcquireSuccess(handle: $crate::Handle);
            SYNC 6 SYNC_USER_RELEASING nvtxDomainSyncUserReleasing(handle: $crate::Handle);
        }
    };
}

/// A slot's no-tool value as [`for_each_slot!`] gives it (`= value`, or
/// nothing for `()`): `no_tool_value!($($none)?)`.
#[macro_export]
macro_rules! no_tool_value {
    () => {
        ()
    };
    ($e:expr) => {
        $e
    };
}

/// One slot: its module, its index in the module's table, and `F`, the
/// type of the function a tool writes there. Only this crate makes them
/// (the [`slot`] constants), so `F` is always the slot's protocol type.
pub struct SlotId<F> {
    /// The module (see [`module`]).
    pub module: i32,
    /// The index in the module's table, from 1.
    pub index: usize,
    function: PhantomData<F>,
}

impl<F> Clone for SlotId<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for SlotId<F> {}

impl<F> SlotId<F> {
    const fn new(module: i32, index: usize) -> Self {
        assert!(
            index >= 1 && index < module::size(module),
            "slot outside its module"
        );
        assert!(std::mem::size_of::<F>() == std::mem::size_of::<Slot>());
        SlotId {
            module,
            index,
            function: PhantomData,
        }
    }

    /// The function in a slot's raw value, or `None` for NULL.
    ///
    /// # Safety
    /// `raw` is NULL or a function of this slot's type.
    #[inline(always)]
    pub unsafe fn from_raw(self, raw: Slot) -> Option<F> {
        if raw.is_null() {
            None
        } else {
            // SAFETY: F is a function pointer type of a pointer's size (checked in `new`).
            Some(unsafe { std::mem::transmute_copy::<Slot, F>(&raw) })
        }
    }
}

/// The typed slots, one constant per NVTX function, named after it
/// (`MARK_A` is `nvtxMarkA`'s slot).
pub mod slot {
    use super::*;

    macro_rules! slot_constants {
        ($($module:ident $index:literal $name:ident $api:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty = $none:expr)?;)*) => {$(
            #[doc = concat!("The slot of `", stringify!($api), "`.")]
            pub const $name: SlotId<unsafe extern "C" fn($($ty),*) $(-> $ret)?> =
                SlotId::new(module::$module, $index);
        )*};
    }
    for_each_slot!(slot_constants);
}

/// A tool's functions for the producer's slots, set slot by slot with the
/// slot's own type (a function of the wrong type does not compile).
#[derive(Default)]
pub struct ToolFunctions {
    entries: Vec<(i32, usize, Slot)>,
}

impl ToolFunctions {
    /// No functions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the function for `slot`.
    pub fn set<F: Copy>(&mut self, slot: SlotId<F>, function: F) -> &mut Self {
        // SAFETY: F is the slot's function pointer type (see `SlotId`).
        let raw = unsafe { std::mem::transmute_copy::<F, Slot>(&function) };
        self.entries.push((slot.module, slot.index, raw));
        self
    }

    /// Writes the functions into the producer's tables (asked for once per
    /// module used); slots beyond a producer's table are skipped. Returns
    /// false, having written nothing more, if the producer refuses a module.
    ///
    /// # Safety
    /// `callbacks` is the producer's [`Callbacks`] table, during the tool's
    /// entry point.
    pub unsafe fn install(&self, callbacks: &Callbacks) -> bool {
        let mut modules: Vec<i32> = self.entries.iter().map(|e| e.0).collect();
        modules.sort_unstable();
        modules.dedup();
        for module in modules {
            let mut table: *mut *mut Slot = std::ptr::null_mut();
            let mut size: c_uint = 0;
            // SAFETY: the producer's function, with valid out-pointers.
            let ok =
                unsafe { (callbacks.get_module_function_table)(module, &mut table, &mut size) };
            if ok == 0 || table.is_null() {
                return false;
            }
            for &(_, index, f) in self.entries.iter().filter(|e| e.0 == module) {
                if index < size as usize {
                    // SAFETY: entries 1 to size - 1 of the table are slot addresses.
                    unsafe { **table.add(index) = f };
                }
            }
        }
        true
    }
}

/// `nvtxEventAttributes_t` field values.
pub mod attr {
    /// `version`.
    pub const VERSION: u16 = 3;
    /// `colorType`: `color` is ARGB.
    pub const COLOR_ARGB: i32 = 1;
    /// `messageType`: `const char *`.
    pub const MESSAGE_ASCII: i32 = 1;
    /// `messageType`: `const wchar_t *`.
    pub const MESSAGE_UNICODE: i32 = 2;
    /// `messageType`: a registered-string handle.
    pub const MESSAGE_REGISTERED: i32 = 3;
    /// `payloadType`: none.
    pub const PAYLOAD_NONE: i32 = 0;
    /// `payloadType`: `uint64_t`.
    pub const PAYLOAD_U64: i32 = 1;
    /// `payloadType`: `int64_t`.
    pub const PAYLOAD_I64: i32 = 2;
    /// `payloadType`: `double`.
    pub const PAYLOAD_F64: i32 = 3;
    /// `payloadType`: `uint32_t`.
    pub const PAYLOAD_U32: i32 = 4;
    /// `payloadType`: `int32_t`.
    pub const PAYLOAD_I32: i32 = 5;
    /// `payloadType`: `float`.
    pub const PAYLOAD_F32: i32 = 6;
    /// `payloadType`: extended payloads (`NVTX_PAYLOAD_TYPE_EXT`): `payload`
    /// is the address of an array of [`crate::payload::PayloadData`],
    /// `reserved0` its length.
    pub const PAYLOAD_EXT: i32 = 0xDFBD0009_u32 as i32;
}

/// `nvtxSyncUserAttributes_t.version`.
pub const SYNC_ATTRIBUTES_VERSION: u16 = 3;

/// `nvtxEventAttributes_t` (version 3): 48 bytes, 8-aligned. Zero it, then
/// set version and size.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EventAttributes {
    /// [`attr::VERSION`].
    pub version: u16,
    /// `sizeof` the struct (48).
    pub size: u16,
    /// 0 means none.
    pub category: u32,
    /// 0 unknown, 1 ARGB.
    pub color_type: i32,
    /// `0xAARRGGBB`.
    pub color: u32,
    /// 0 none, 1 u64, 2 i64, 3 f64, 4 u32, 5 i32, 6 f32.
    pub payload_type: i32,
    /// Zero.
    pub reserved0: i32,
    /// The payload union, as bits; 32-bit values sit in the low 4 bytes.
    pub payload: u64,
    /// 0 none, 1 ASCII (UTF-8 in practice), 2 `wchar_t`, 3 registered string handle.
    pub message_type: i32,
    /// Explicit, so the struct is fully initialized when a tool reads it.
    pub padding: i32,
    /// The message, as `message_type` says.
    pub message: *const c_void,
}

impl EventAttributes {
    /// Attributes whose only field is the registered string `handle` (the
    /// tool's), version and size set.
    pub const fn registered(handle: *const c_void) -> EventAttributes {
        EventAttributes {
            version: attr::VERSION,
            size: std::mem::size_of::<EventAttributes>() as u16,
            category: 0,
            color_type: 0,
            color: 0,
            payload_type: attr::PAYLOAD_NONE,
            reserved0: 0,
            payload: 0,
            message_type: attr::MESSAGE_REGISTERED,
            padding: 0,
            message: handle,
        }
    }
}

/// `nvtxResourceAttributes_t` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResourceAttributes {
    /// 3.
    pub version: u16,
    /// `sizeof` the struct (32).
    pub size: u16,
    /// `(class << 16) | index`: 0x10001 generic pointer, 0x10002 handle, ...
    pub identifier_type: i32,
    /// The resource's identifier (a pointer or handle value).
    pub identifier: u64,
    /// As in [`EventAttributes`].
    pub message_type: i32,
    /// The resource's name, as `message_type` says.
    pub message: *const c_void,
}

/// `nvtxSyncUserAttributes_t` (16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SyncUserAttributes {
    /// [`SYNC_ATTRIBUTES_VERSION`].
    pub version: u16,
    /// `sizeof` the struct (16).
    pub size: u16,
    /// As in [`EventAttributes`].
    pub message_type: i32,
    /// The object's name, as `message_type` says.
    pub message: *const c_void,
}

const _: () = assert!(std::mem::size_of::<EventAttributes>() == 48);
const _: () = assert!(std::mem::align_of::<EventAttributes>() == 8);
const _: () = assert!(std::mem::size_of::<ResourceAttributes>() == 32);
const _: () = assert!(std::mem::size_of::<SyncUserAttributes>() == 16);
