//! Naming OS threads and CUDA objects (categories are named per domain, in `domain`).

use crate::loader::{slots, tool_attached};
use nvtx_protocol::slot;
use std::ffi::{c_char, c_int, c_void};

/// # Safety
/// `name` must be a valid NUL-terminated string.
pub unsafe fn name_os_thread(tid: u32, name: *const c_char) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if tool_attached() {
            if let Some(f) = slots::get(slot::NAME_OS_THREAD_A) {
                f(tid, name);
            }
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
pub unsafe fn name_cuda(object: CudaObject, id: usize, name: *const c_char) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if !tool_attached() {
            return;
        }
        let ordinal = id as c_int;
        let handle = id as *mut c_void;
        let _ = match object {
            CudaObject::CuDevice => slots::get(slot::NAME_CU_DEVICE_A).map(|f| f(ordinal, name)),
            CudaObject::CuContext => slots::get(slot::NAME_CU_CONTEXT_A).map(|f| f(handle, name)),
            CudaObject::CuStream => slots::get(slot::NAME_CU_STREAM_A).map(|f| f(handle, name)),
            CudaObject::CuEvent => slots::get(slot::NAME_CU_EVENT_A).map(|f| f(handle, name)),
            CudaObject::CudaDevice => {
                slots::get(slot::NAME_CUDA_DEVICE_A).map(|f| f(ordinal, name))
            }
            CudaObject::CudaStream => slots::get(slot::NAME_CUDA_STREAM_A).map(|f| f(handle, name)),
            CudaObject::CudaEvent => slots::get(slot::NAME_CUDA_EVENT_A).map(|f| f(handle, name)),
        };
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
pub unsafe fn name_opencl(object: OpenClObject, handle: *mut c_void, name: *const c_char) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if !tool_attached() {
            return;
        }
        let slot = match object {
            OpenClObject::Device => slot::NAME_CL_DEVICE_A,
            OpenClObject::Context => slot::NAME_CL_CONTEXT_A,
            OpenClObject::CommandQueue => slot::NAME_CL_COMMAND_QUEUE_A,
            OpenClObject::MemObject => slot::NAME_CL_MEM_OBJECT_A,
            OpenClObject::Sampler => slot::NAME_CL_SAMPLER_A,
            OpenClObject::Program => slot::NAME_CL_PROGRAM_A,
            OpenClObject::Event => slot::NAME_CL_EVENT_A,
        };
        if let Some(f) = slots::get(slot) {
            f(handle, name);
        }
    }
}
