//! Naming OS threads and CUDA objects.

use super::boundary::exported;
use super::codes::nvtxr_status_t;
use super::codes::{status, NVTXR_OK};
use nvtxr_engine::error::Error;
use nvtxr_engine::loader::tool_attached;
use nvtxr_engine::naming::{self, CudaObject, OpenClObject};
use std::ffi::{c_char, c_int, c_void};

/// The calling thread's OS id (Linux `gettid`), the id NVTX tools use.
#[unsafe(no_mangle)]
pub extern "C" fn nvtxr_current_os_thread_id() -> u32 {
    exported!({ nvtxr_engine::thread::current_os_thread_id() })
}

/// Checks `name`, then runs `f` when a tool is attached.
fn name_with(name: *const c_char, f: impl FnOnce()) -> nvtxr_status_t {
    if !tool_attached() {
        return NVTXR_OK;
    }
    if name.is_null() {
        return status(Err(Error::NullArgument));
    }
    f();
    NVTXR_OK
}

/// Names the calling OS thread (UTF-8 `name`, read during the call).
///
/// Returns `NVTXR_OK` or `NVTXR_ERROR_NULL_ARGUMENT`. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_current_thread(name: *const c_char) -> nvtxr_status_t {
    exported!(unsafe {
        name_with(name, || {
            naming::name_os_thread(nvtxr_engine::thread::current_os_thread_id(), name)
        })
    })
}

/// Names the OS thread `tid` (a Linux `gettid` value).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_os_thread(tid: u32, name: *const c_char) -> nvtxr_status_t {
    exported!(unsafe { name_with(name, || naming::name_os_thread(tid, name)) })
}

/// Names a CUDA driver device (`CUdevice` ordinal).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cu_device(
    device: c_int,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe {
        name_with(name, || {
            naming::name_cuda(CudaObject::CuDevice, device as usize, name)
        })
    })
}

/// Names a CUDA driver context (`CUcontext`); the handle is not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cu_context(
    context: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe {
        name_with(name, || {
            naming::name_cuda(CudaObject::CuContext, context as usize, name)
        })
    })
}

/// Names a CUDA driver stream (`CUstream`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cu_stream(
    stream: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe {
        name_with(name, || {
            naming::name_cuda(CudaObject::CuStream, stream as usize, name)
        })
    })
}

/// Names a CUDA driver event (`CUevent`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cu_event(
    event: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe {
        name_with(name, || {
            naming::name_cuda(CudaObject::CuEvent, event as usize, name)
        })
    })
}

/// Names a CUDA runtime device (ordinal).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cuda_device(
    device: c_int,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe {
        name_with(name, || {
            naming::name_cuda(CudaObject::CudaDevice, device as usize, name)
        })
    })
}

/// Names a CUDA runtime stream (`cudaStream_t`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cuda_stream(
    stream: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe {
        name_with(name, || {
            naming::name_cuda(CudaObject::CudaStream, stream as usize, name)
        })
    })
}

/// Names a CUDA runtime event (`cudaEvent_t`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cuda_event(
    event: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe {
        name_with(name, || {
            naming::name_cuda(CudaObject::CudaEvent, event as usize, name)
        })
    })
}

/// Names an OpenCL object of kind `kind` (`handle` is not dereferenced).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn name_cl(kind: OpenClObject, handle: *mut c_void, name: *const c_char) -> nvtxr_status_t {
    // SAFETY: `name` as this function requires, passed on.
    name_with(name, || unsafe { naming::name_opencl(kind, handle, name) })
}

/// Names an OpenCL device (`cl_device_id`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cl_device(
    device: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe { name_cl(OpenClObject::Device, device, name) })
}

/// Names an OpenCL context (`cl_context`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cl_context(
    context: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe { name_cl(OpenClObject::Context, context, name) })
}

/// Names an OpenCL command queue (`cl_command_queue`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cl_command_queue(
    queue: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe { name_cl(OpenClObject::CommandQueue, queue, name) })
}

/// Names an OpenCL memory object (`cl_mem`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cl_mem_object(
    object: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe { name_cl(OpenClObject::MemObject, object, name) })
}

/// Names an OpenCL sampler (`cl_sampler`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cl_sampler(
    sampler: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe { name_cl(OpenClObject::Sampler, sampler, name) })
}

/// Names an OpenCL program (`cl_program`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cl_program(
    program: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe { name_cl(OpenClObject::Program, program, name) })
}

/// Names an OpenCL event (`cl_event`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_name_cl_event(
    event: *mut c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe { name_cl(OpenClObject::Event, event, name) })
}
