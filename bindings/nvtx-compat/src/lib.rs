//! A drop-in for CUDA's `libnvToolsExt.so.1` and NVIDIA's `libnvtx3interop.so.1`:
//! the NVTX C API under its standard names (`nvtxMarkA`, `nvtxRangePushEx`,
//! `nvtxDomainCreateA`, ...), on nvtxr's tool loader.
//!
//! Each function does what NVIDIA's implementation does: initialize on first
//! use (through nvtxr's loader, with its fixes for re-entrant tools and fork),
//! then pass its arguments unchanged to the tool's function in the slot the
//! protocol gives it, or return the no-tool value (`-2` for push/pop, 0 for
//! range ids, NULL for handles). Arguments are never read here: attribute
//! structs, strings and handles are the tool's to interpret, exactly as with
//! NVIDIA's library. Every function runs inside nvtxr's panic guard.
//!
//! Built as a static library; `nvtxr_harness::compat_libraries` links it into
//! the two shared libraries with their SONAMEs and symbol versions.

#![allow(non_snake_case)]

use nvtxr::__compat::{guard, tool_attached, CORE, CORE2, CUDA, CUDART, OPENCL, SYNC};
use nvtxr::ffi::NVTXR_NO_PUSH_POP_TRACKING as NO_TRACKING;
use std::ffi::{c_char, c_int, c_void};
use std::ptr::null_mut;

/// `wchar_t` on Linux.
type WChar = i32;
type Handle = *mut c_void;
type Attributes = *const c_void;
type Str = *const c_char;
type WStr = *const WChar;

/// The value a function returns when no tool handles it: `()` unless given.
macro_rules! no_tool_value {
    () => {
        ()
    };
    ($e:expr) => {
        $e
    };
}

/// `MODULE INDEX name(args) [-> ret = no-tool value];` defines the exported
/// function `name`, forwarding to slot INDEX of MODULE.
macro_rules! nvtx_api {
    ($($module:ident $index:literal $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty = $none:expr)?;)*) => {$(
        /// NVIDIA's function of this name.
        ///
        /// # Safety
        /// The arguments must be valid as NVIDIA's NVTX API documents; they
        /// are passed to the tool unread.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($($arg: $ty),*) $(-> $ret)? {
            type Slot = unsafe extern "C" fn($($ty),*) $(-> $ret)?;
            guard(no_tool_value!($($none)?), || {
                if tool_attached() {
                    // SAFETY: the protocol gives this slot this type.
                    if let Some(f) = $module.get::<Slot>($index) {
                        return f($($arg),*);
                    }
                }
                no_tool_value!($($none)?)
            })
        }
    )*};
}

nvtx_api! {
    CORE 1 nvtxMarkEx(attributes: Attributes);
    CORE 2 nvtxMarkA(message: Str);
    CORE 3 nvtxMarkW(message: WStr);
    CORE 4 nvtxRangeStartEx(attributes: Attributes) -> u64 = 0;
    CORE 5 nvtxRangeStartA(message: Str) -> u64 = 0;
    CORE 6 nvtxRangeStartW(message: WStr) -> u64 = 0;
    CORE 7 nvtxRangeEnd(id: u64);
    CORE 8 nvtxRangePushEx(attributes: Attributes) -> c_int = NO_TRACKING;
    CORE 9 nvtxRangePushA(message: Str) -> c_int = NO_TRACKING;
    CORE 10 nvtxRangePushW(message: WStr) -> c_int = NO_TRACKING;
    CORE 11 nvtxRangePop() -> c_int = NO_TRACKING;
    CORE 12 nvtxNameCategoryA(category: u32, name: Str);
    CORE 13 nvtxNameCategoryW(category: u32, name: WStr);
    CORE 14 nvtxNameOsThreadA(thread_id: u32, name: Str);
    CORE 15 nvtxNameOsThreadW(thread_id: u32, name: WStr);

    CORE2 1 nvtxDomainMarkEx(domain: Handle, attributes: Attributes);
    CORE2 2 nvtxDomainRangeStartEx(domain: Handle, attributes: Attributes) -> u64 = 0;
    CORE2 3 nvtxDomainRangeEnd(domain: Handle, id: u64);
    CORE2 4 nvtxDomainRangePushEx(domain: Handle, attributes: Attributes) -> c_int = NO_TRACKING;
    CORE2 5 nvtxDomainRangePop(domain: Handle) -> c_int = NO_TRACKING;
    CORE2 6 nvtxDomainResourceCreate(domain: Handle, attributes: Attributes) -> Handle = null_mut();
    CORE2 7 nvtxDomainResourceDestroy(resource: Handle);
    CORE2 8 nvtxDomainNameCategoryA(domain: Handle, category: u32, name: Str);
    CORE2 9 nvtxDomainNameCategoryW(domain: Handle, category: u32, name: WStr);
    CORE2 10 nvtxDomainRegisterStringA(domain: Handle, text: Str) -> Handle = null_mut();
    CORE2 11 nvtxDomainRegisterStringW(domain: Handle, text: WStr) -> Handle = null_mut();
    CORE2 12 nvtxDomainCreateA(name: Str) -> Handle = null_mut();
    CORE2 13 nvtxDomainCreateW(name: WStr) -> Handle = null_mut();
    CORE2 14 nvtxDomainDestroy(domain: Handle);
    CORE2 15 nvtxInitialize(reserved: *const c_void);

    CUDA 1 nvtxNameCuDeviceA(device: c_int, name: Str);
    CUDA 2 nvtxNameCuDeviceW(device: c_int, name: WStr);
    CUDA 3 nvtxNameCuContextA(context: Handle, name: Str);
    CUDA 4 nvtxNameCuContextW(context: Handle, name: WStr);
    CUDA 5 nvtxNameCuStreamA(stream: Handle, name: Str);
    CUDA 6 nvtxNameCuStreamW(stream: Handle, name: WStr);
    CUDA 7 nvtxNameCuEventA(event: Handle, name: Str);
    CUDA 8 nvtxNameCuEventW(event: Handle, name: WStr);

    CUDART 1 nvtxNameCudaDeviceA(device: c_int, name: Str);
    CUDART 2 nvtxNameCudaDeviceW(device: c_int, name: WStr);
    CUDART 3 nvtxNameCudaStreamA(stream: Handle, name: Str);
    CUDART 4 nvtxNameCudaStreamW(stream: Handle, name: WStr);
    CUDART 5 nvtxNameCudaEventA(event: Handle, name: Str);
    CUDART 6 nvtxNameCudaEventW(event: Handle, name: WStr);

    OPENCL 1 nvtxNameClDeviceA(device: Handle, name: Str);
    OPENCL 2 nvtxNameClDeviceW(device: Handle, name: WStr);
    OPENCL 3 nvtxNameClContextA(context: Handle, name: Str);
    OPENCL 4 nvtxNameClContextW(context: Handle, name: WStr);
    OPENCL 5 nvtxNameClCommandQueueA(queue: Handle, name: Str);
    OPENCL 6 nvtxNameClCommandQueueW(queue: Handle, name: WStr);
    OPENCL 7 nvtxNameClMemObjectA(object: Handle, name: Str);
    OPENCL 8 nvtxNameClMemObjectW(object: Handle, name: WStr);
    OPENCL 9 nvtxNameClSamplerA(sampler: Handle, name: Str);
    OPENCL 10 nvtxNameClSamplerW(sampler: Handle, name: WStr);
    OPENCL 11 nvtxNameClProgramA(program: Handle, name: Str);
    OPENCL 12 nvtxNameClProgramW(program: Handle, name: WStr);
    OPENCL 13 nvtxNameClEventA(event: Handle, name: Str);
    OPENCL 14 nvtxNameClEventW(event: Handle, name: WStr);

    SYNC 1 nvtxDomainSyncUserCreate(domain: Handle, attributes: Attributes) -> Handle = null_mut();
    SYNC 2 nvtxDomainSyncUserDestroy(handle: Handle);
    SYNC 3 nvtxDomainSyncUserAcquireStart(handle: Handle);
    SYNC 4 nvtxDomainSyncUserAcquireFailed(handle: Handle);
    SYNC 5 nvtxDomainSyncUserAcquireSuccess(handle: Handle);
    SYNC 6 nvtxDomainSyncUserReleasing(handle: Handle);
}
