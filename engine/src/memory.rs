//! The memory extension (`nvToolsExtMem.h`) from nvtxr's doors: a heap (a
//! pool of memory a sub-allocator hands out), the regions it hands out, and
//! their names, one region per call, by address.

use crate::domain::DomainState;
use crate::error::Error;
use crate::ext_call;
use crate::loader::extensions::MEM;
use nvtx_protocol::ext::cbid;
use nvtx_protocol::mem::{
    HeapDesc, RegionNameDesc, RegionsNameBatch, RegionsRegisterBatch, RegionsResizeBatch,
    RegionsUnregisterBatch, VirtualRange, COMPAT_ID, HEAP_USAGE_SUB_ALLOCATOR, REF_POINTER,
    TYPE_VIRTUAL_ADDRESS,
};
use nvtx_protocol::{attr, Handle};
use std::ffi::{c_void, CStr};

/// `T`'s size as the structs' `structSize` fields take it (u16).
fn struct_size<T>() -> u16 {
    std::mem::size_of::<T>() as u16
}

/// Calls the tool's function for `cbid` with the domain's tool handle and
/// `arg`; `None` with no tool or a tool without it.
///
/// # Safety
/// `cbid`'s function (the protocol's type) takes (handle, `A`) and returns `R`.
unsafe fn call<A, R>(
    domain: &'static DomainState,
    cbid: usize,
    arg: A,
) -> Result<Option<R>, Error> {
    ext_call::call(&MEM, domain, cbid, |f, handle| {
        // SAFETY: the caller names `cbid`'s type; the handle is the domain's.
        unsafe {
            std::mem::transmute_copy::<usize, unsafe extern "C" fn(Handle, A) -> R>(&f)(handle, arg)
        }
    })
}

/// Registers a heap of `size` bytes at `base`, named `name`; the tool's
/// handle for it (NULL with no tool: the region calls take NULL as the
/// process's memory).
pub fn heap_register(
    domain: &'static DomainState,
    base: *const c_void,
    size: usize,
    name: Option<&CStr>,
) -> Result<Handle, Error> {
    let range = VirtualRange { size, ptr: base };
    let desc = HeapDesc {
        ext_compat_id: COMPAT_ID,
        struct_size: struct_size::<HeapDesc>(),
        reserved0: 0,
        usage: HEAP_USAGE_SUB_ALLOCATOR,
        type_: TYPE_VIRTUAL_ADDRESS,
        type_specific_desc_size: std::mem::size_of::<VirtualRange>(),
        type_specific_desc: (&range as *const VirtualRange).cast(),
        category: 0,
        message_type: if name.is_some() {
            attr::MESSAGE_ASCII as u32
        } else {
            0
        },
        message: name.map_or(std::ptr::null(), |n| n.as_ptr().cast()),
    };
    // SAFETY: nvtxMemHeapRegister(handle, const nvtxMemHeapDesc_t*) -> heap.
    let heap = unsafe { call::<*const HeapDesc, Handle>(domain, cbid::MEM_HEAP_REGISTER, &desc) }?;
    Ok(heap.unwrap_or(std::ptr::null_mut()))
}

/// Unregisters `heap` (its regions with it).
///
/// # Safety
/// `heap` is one [`heap_register`] returned and not unregistered (the tool
/// reads it).
pub unsafe fn heap_unregister(domain: &'static DomainState, heap: Handle) -> Result<(), Error> {
    // SAFETY: nvtxMemHeapUnregister(handle, heap).
    unsafe { call::<Handle, ()>(domain, cbid::MEM_HEAP_UNREGISTER, heap) }.map(drop)
}

/// Resets `heap`: every region in it unregistered.
///
/// # Safety
/// As [`heap_unregister`].
pub unsafe fn heap_reset(domain: &'static DomainState, heap: Handle) -> Result<(), Error> {
    // SAFETY: nvtxMemHeapReset(handle, heap).
    unsafe { call::<Handle, ()>(domain, cbid::MEM_HEAP_RESET, heap) }.map(drop)
}

/// Registers the region of `size` bytes at `address` in `heap`.
///
/// # Safety
/// `heap` is NULL or as [`heap_unregister`] says.
pub unsafe fn region_register(
    domain: &'static DomainState,
    heap: Handle,
    address: *const c_void,
    size: usize,
) -> Result<(), Error> {
    let range = VirtualRange { size, ptr: address };
    let batch = RegionsRegisterBatch {
        ext_compat_id: COMPAT_ID,
        struct_size: struct_size::<RegionsRegisterBatch>(),
        region_type: TYPE_VIRTUAL_ADDRESS,
        heap,
        region_count: 1,
        region_desc_element_size: std::mem::size_of::<VirtualRange>(),
        region_desc_elements: (&range as *const VirtualRange).cast(),
        region_handle_elements_out: std::ptr::null_mut(),
    };
    // SAFETY: nvtxMemRegionsRegister(handle, const batch*).
    unsafe { call::<*const RegionsRegisterBatch, ()>(domain, cbid::MEM_REGIONS_REGISTER, &batch) }
        .map(drop)
}

/// The region at `address` is now `size` bytes.
pub fn region_resize(
    domain: &'static DomainState,
    address: *const c_void,
    size: usize,
) -> Result<(), Error> {
    let range = VirtualRange { size, ptr: address };
    let batch = RegionsResizeBatch {
        ext_compat_id: COMPAT_ID,
        struct_size: struct_size::<RegionsResizeBatch>(),
        region_type: TYPE_VIRTUAL_ADDRESS,
        region_count: 1,
        region_desc_element_size: std::mem::size_of::<VirtualRange>(),
        region_desc_elements: (&range as *const VirtualRange).cast(),
    };
    // SAFETY: nvtxMemRegionsResize(handle, const batch*).
    unsafe { call::<*const RegionsResizeBatch, ()>(domain, cbid::MEM_REGIONS_RESIZE, &batch) }
        .map(drop)
}

/// Names the region at `address`.
pub fn region_name(
    domain: &'static DomainState,
    address: *const c_void,
    name: &CStr,
) -> Result<(), Error> {
    let desc = RegionNameDesc {
        region_ref_type: REF_POINTER,
        name_type: attr::MESSAGE_ASCII as u32,
        region: address,
        name: name.as_ptr().cast(),
        category: 0,
        reserved0: 0,
    };
    let batch = RegionsNameBatch {
        ext_compat_id: COMPAT_ID,
        struct_size: struct_size::<RegionsNameBatch>(),
        reserved0: 0,
        region_count: 1,
        region_element_size: std::mem::size_of::<RegionNameDesc>(),
        region_elements: &desc,
        reserved1: 0,
    };
    // SAFETY: nvtxMemRegionsName(handle, const batch*).
    unsafe { call::<*const RegionsNameBatch, ()>(domain, cbid::MEM_REGIONS_NAME, &batch) }.map(drop)
}

/// Unregisters the region at `address`.
pub fn region_unregister(
    domain: &'static DomainState,
    address: *const c_void,
) -> Result<(), Error> {
    let batch = RegionsUnregisterBatch {
        ext_compat_id: COMPAT_ID,
        struct_size: struct_size::<RegionsUnregisterBatch>(),
        ref_type: REF_POINTER,
        ref_count: 1,
        ref_element_size: std::mem::size_of::<*const c_void>(),
        ref_elements: &address,
    };
    // SAFETY: nvtxMemRegionsUnregister(handle, const batch*).
    unsafe {
        call::<*const RegionsUnregisterBatch, ()>(domain, cbid::MEM_REGIONS_UNREGISTER, &batch)
    }
    .map(drop)
}
