//! Naming OS threads and CUDA objects (categories are named per domain, in `domain`).

use crate::loader::protocol::{core, cuda, cudart, opencl};
use crate::loader::{slots, tool_attached};
use std::ffi::{c_char, c_int, c_void};

/// The calling thread's OS id (Linux `gettid`), as NVTX tools expect.
pub fn current_os_thread_id() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

/// # Safety
/// `name` must be a valid NUL-terminated string.
pub(crate) unsafe fn name_os_thread(tid: u32, name: *const c_char) {
    if tool_attached() {
        if let Some(f) =
            slots::CORE.get::<unsafe extern "C" fn(u32, *const c_char)>(core::NAME_OS_THREAD_A)
        {
            f(tid, name);
        }
    }
}

/// A CUDA object kind that can be named: its module and slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CudaObject {
    /// A driver `CUdevice` (an ordinal).
    CuDevice,
    /// A driver `CUcontext`.
    CuContext,
    /// A driver `CUstream`.
    CuStream,
    /// A driver `CUevent`.
    CuEvent,
    /// A runtime device ordinal.
    CudaDevice,
    /// A runtime `cudaStream_t`.
    CudaStream,
    /// A runtime `cudaEvent_t`.
    CudaEvent,
}

/// Names a CUDA object. Devices are identified by ordinal, the rest by handle;
/// nvtxr never dereferences the handle.
///
/// # Safety
/// `name` must be a valid NUL-terminated string.
pub(crate) unsafe fn name_cuda(object: CudaObject, id: usize, name: *const c_char) {
    if !tool_attached() {
        return;
    }
    type ByOrdinal = unsafe extern "C" fn(c_int, *const c_char);
    type ByHandle = unsafe extern "C" fn(*mut c_void, *const c_char);
    let slot = match object {
        CudaObject::CuDevice => slots::CUDA.get::<*mut c_void>(cuda::NAME_CU_DEVICE_A),
        CudaObject::CuContext => slots::CUDA.get::<*mut c_void>(cuda::NAME_CU_CONTEXT_A),
        CudaObject::CuStream => slots::CUDA.get::<*mut c_void>(cuda::NAME_CU_STREAM_A),
        CudaObject::CuEvent => slots::CUDA.get::<*mut c_void>(cuda::NAME_CU_EVENT_A),
        CudaObject::CudaDevice => slots::CUDART.get::<*mut c_void>(cudart::NAME_CUDA_DEVICE_A),
        CudaObject::CudaStream => slots::CUDART.get::<*mut c_void>(cudart::NAME_CUDA_STREAM_A),
        CudaObject::CudaEvent => slots::CUDART.get::<*mut c_void>(cudart::NAME_CUDA_EVENT_A),
    };
    let Some(f) = slot else { return };
    if matches!(object, CudaObject::CuDevice | CudaObject::CudaDevice) {
        std::mem::transmute::<*mut c_void, ByOrdinal>(f)(id as c_int, name);
    } else {
        std::mem::transmute::<*mut c_void, ByHandle>(f)(id as *mut c_void, name);
    }
}

/// An OpenCL object kind that can be named (by handle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenClObject {
    /// `cl_device_id`.
    Device,
    /// `cl_context`.
    Context,
    /// `cl_command_queue`.
    CommandQueue,
    /// `cl_mem`.
    MemObject,
    /// `cl_sampler`.
    Sampler,
    /// `cl_program`.
    Program,
    /// `cl_event`.
    Event,
}

/// Names an OpenCL object; nvtxr never dereferences the handle.
///
/// # Safety
/// `name` must be a valid NUL-terminated string.
pub(crate) unsafe fn name_opencl(object: OpenClObject, handle: *mut c_void, name: *const c_char) {
    if !tool_attached() {
        return;
    }
    let slot = match object {
        OpenClObject::Device => opencl::NAME_CL_DEVICE_A,
        OpenClObject::Context => opencl::NAME_CL_CONTEXT_A,
        OpenClObject::CommandQueue => opencl::NAME_CL_COMMAND_QUEUE_A,
        OpenClObject::MemObject => opencl::NAME_CL_MEM_OBJECT_A,
        OpenClObject::Sampler => opencl::NAME_CL_SAMPLER_A,
        OpenClObject::Program => opencl::NAME_CL_PROGRAM_A,
        OpenClObject::Event => opencl::NAME_CL_EVENT_A,
    };
    if let Some(f) = slots::OPENCL.get::<unsafe extern "C" fn(*mut c_void, *const c_char)>(slot) {
        f(handle, name);
    }
}
