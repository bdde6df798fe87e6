//! The memory extension: a heap a sub-allocator hands out, its regions and
//! their names (NVTX's `nvtxMem*`), one region per call, by address.

use super::boundary::exported;
use super::codes::{nvtxr_status_t, status};
use super::domain::{domain_ref, nvtxr_domain_t};
use nvtxr_engine::memory;
use std::ffi::{c_char, c_void, CStr};
use std::ptr;

/// A heap as the tool knows it: NULL when no tool is attached, and the
/// region calls take NULL as "the process's memory". Owned by the tool:
/// release it with `nvtxr_mem_heap_unregister`.
pub struct nvtxr_mem_heap_t {
    _opaque: [u8; 0],
}

/// Registers a heap: `size` bytes at `base` that the program's allocator
/// hands out as regions, named `name` (UTF-8, read during the call; NULL:
/// unnamed), in `domain` (NULL: the default domain). Nothing at `base` is
/// read. Returns its handle for the region calls; NULL with no tool, a tool
/// without the memory extension, or a bad domain. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mem_heap_register(
    domain: *const nvtxr_domain_t,
    base: *const c_void,
    size: usize,
    name: *const c_char,
) -> *mut nvtxr_mem_heap_t {
    exported!(unsafe {
        let name = (!name.is_null()).then(|| CStr::from_ptr(name));
        domain_ref(domain)
            .and_then(|d| memory::heap_register(d, base, size, name))
            .map_or(ptr::null_mut(), |h| h.cast())
    })
}

/// Unregisters `heap` (NULL, or one `nvtxr_mem_heap_register` returned and
/// not unregistered) and its regions (NULL: nothing is sent). Returns
/// `NVTXR_OK`, or `NVTXR_ERROR_DESTROYED` / `NVTXR_ERROR_INVALID_ARGUMENT`
/// for a bad domain; so do the calls below. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mem_heap_unregister(
    domain: *const nvtxr_domain_t,
    heap: *mut nvtxr_mem_heap_t,
) -> nvtxr_status_t {
    exported!(unsafe { on_heap(domain, heap, memory::heap_unregister) })
}

/// Unregisters every region of `heap` (NULL: nothing is sent). Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mem_heap_reset(
    domain: *const nvtxr_domain_t,
    heap: *mut nvtxr_mem_heap_t,
) -> nvtxr_status_t {
    exported!(unsafe { on_heap(domain, heap, memory::heap_reset) })
}

/// `call` on a heap of `domain`; NULL sends nothing.
///
/// # Safety
/// `domain` as every call takes it; `heap` NULL or one the tool returned.
unsafe fn on_heap(
    domain: *const nvtxr_domain_t,
    heap: *mut nvtxr_mem_heap_t,
    call: unsafe fn(
        &'static nvtxr_engine::domain::DomainState,
        nvtx_protocol::Handle,
    ) -> Result<(), nvtxr_engine::Error>,
) -> nvtxr_status_t {
    // SAFETY: as the caller promises.
    status(
        unsafe { domain_ref(domain) }.and_then(|d| match heap.is_null() {
            true => Ok(()),
            // SAFETY: a heap the tool returned.
            false => unsafe { call(d, heap.cast()) },
        }),
    )
}

/// Registers the region of `size` bytes at `address` (nothing there is
/// read) handed out from `heap` (NULL: the process's memory). Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mem_region_register(
    domain: *const nvtxr_domain_t,
    heap: *mut nvtxr_mem_heap_t,
    address: *const c_void,
    size: usize,
) -> nvtxr_status_t {
    exported!(unsafe {
        status(
            domain_ref(domain).and_then(|d| memory::region_register(d, heap.cast(), address, size)),
        )
    })
}

/// The region registered at `address` is now `size` bytes. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mem_region_resize(
    domain: *const nvtxr_domain_t,
    address: *const c_void,
    size: usize,
) -> nvtxr_status_t {
    exported!(unsafe {
        status(domain_ref(domain).and_then(|d| memory::region_resize(d, address, size)))
    })
}

/// Names the region registered at `address` (`name`: UTF-8, read during
/// the call). Returns `NVTXR_ERROR_NULL_ARGUMENT` for a NULL name.
/// Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mem_region_name(
    domain: *const nvtxr_domain_t,
    address: *const c_void,
    name: *const c_char,
) -> nvtxr_status_t {
    exported!(unsafe {
        if name.is_null() {
            return status(Err(nvtxr_engine::Error::NullArgument));
        }
        let name = CStr::from_ptr(name);
        status(domain_ref(domain).and_then(|d| memory::region_name(d, address, name)))
    })
}

/// Unregisters the region registered at `address`. Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_mem_region_unregister(
    domain: *const nvtxr_domain_t,
    address: *const c_void,
) -> nvtxr_status_t {
    exported!(unsafe {
        status(domain_ref(domain).and_then(|d| memory::region_unregister(d, address)))
    })
}
