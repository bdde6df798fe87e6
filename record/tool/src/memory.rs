//! NVTX's memory extension (`nvToolsExtMem.h`): heaps and the regions in
//! them, recorded as marks in their domain whose fields say what happened
//! (`memory heap registered`, `memory regions registered`, ...): addresses
//! in hex, sizes in bytes, names as given; permissions objects created,
//! assigned to regions, bound to a scope, reset and destroyed likewise
//! (`memory permissions assigned`, ...), and the CUDA runtime's
//! (`nvToolsExtMemCudaRt.h`): its process- and device-wide permissions
//! objects, peer access and regions marked initialized by a stream.

use crate::handles::{id_of, message_text, new_handle, next_id};
use crate::text::{Event, Text};
use crate::{events, probe};
use nvtx_protocol::ext::{self, slot, ExtFunctions};
use nvtx_protocol::mem::{
    HeapDesc, MarkInitializedBatch, PermissionsAssignBatch, PermissionsAssignRegionDesc,
    RegionNameDesc, RegionsNameBatch, RegionsRegisterBatch, RegionsResizeBatch,
    RegionsUnregisterBatch, VirtualRange, ACCESS_KINDS, ACCESS_RESET, BIND_SCOPE_CPU_THREAD,
    BIND_SCOPE_CUDA_STREAM, COMPAT_ID, CUDA_PEER_ALL_DEVICES, HEAP_USAGE_LAYOUT,
    HEAP_USAGE_SUB_ALLOCATOR, TYPE_VIRTUAL_ADDRESS,
};
use nvtx_protocol::Handle;
use nvtxr_record_format::Kind;
use serde_json::{json, Map, Value};
use std::ffi::c_void;

/// The most regions one mark lists (the rest are counted).
const MAX_LISTED: usize = 1024;

/// Records a mark named `what` in domain `d` with `fields`.
fn mark(d: Handle, what: &str, fields: Map<String, Value>) {
    // SAFETY: a domain handle this tool made (or NULL).
    let domain = unsafe { id_of(d) };
    let mut e = Event::simple(Kind::Mark, domain, 0, Some(Text::Bytes(what.as_bytes())));
    e.fields = Some(Text::Owned(Value::Object(fields).to_string()));
    events::record(&mut e);
}

/// A copy of a struct of this extension: `None` for NULL, unreadable
/// memory, another compatibility id, or a size that does not cover `T`.
///
/// # Safety
/// Any bytes are a valid `T` (see `probe::read`).
unsafe fn read<T: Copy>(p: *const c_void) -> Option<T> {
    // SAFETY: the first 4 bytes are the compatibility id and the size; any
    // bytes are a valid `T` (the caller's promise).
    unsafe {
        let header = probe::read(p.cast::<[u16; 2]>())?;
        if header[0] != COMPAT_ID || usize::from(header[1]) < std::mem::size_of::<T>() {
            return None;
        }
        probe::read(p.cast::<T>())
    }
}

fn hex(address: *const c_void) -> Value {
    Value::String(format!("{:#x}", address as usize))
}

/// What a virtual-address description says.
fn range(r: &VirtualRange) -> Value {
    json!({"address": hex(r.ptr), "size": r.size})
}

/// The regions of a batch: `count` descriptions `stride` bytes apart.
fn ranges(region_type: u32, count: usize, stride: usize, elements: *const c_void) -> Value {
    if region_type != TYPE_VIRTUAL_ADDRESS || stride < std::mem::size_of::<VirtualRange>() {
        return Value::Array(Vec::new());
    }
    // SAFETY: a range is two integers.
    Value::Array(unsafe { listed(elements.cast::<VirtualRange>(), count, stride, range) })
}

/// The first [`MAX_LISTED`] of a batch's `count` elements of type `T`,
/// `stride` bytes apart (at least `T`'s size), each as `show` gives it
/// (`"(unreadable)"` for one that cannot be read); none when `elements` is
/// NULL.
///
/// # Safety
/// Any bytes are a valid `T` (see `probe::read`).
unsafe fn listed<T: Copy>(
    elements: *const T,
    count: usize,
    stride: usize,
    show: impl Fn(&T) -> Value,
) -> Vec<Value> {
    if elements.is_null() {
        return Vec::new();
    }
    let stride = stride.max(std::mem::size_of::<T>());
    (0..count.min(MAX_LISTED))
        .map(|i| {
            let at = elements.cast::<u8>().wrapping_add(i * stride).cast::<T>();
            // SAFETY: any bytes are a valid `T` (the caller's promise).
            match unsafe { probe::read(at) } {
                Some(element) => show(&element),
                None => probe::UNREADABLE.into(),
            }
        })
        .collect()
}

/// The id of a heap or permissions handle (`0` for the process-wide one, NULL).
fn handle_id(handle: *const c_void) -> u64 {
    // SAFETY: NULL or a handle this tool made.
    unsafe { id_of(handle) }
}

unsafe extern "C" fn heap_register(d: Handle, desc: *const c_void) -> Handle {
    // SAFETY: the producer passes its heap description.
    let Some(h) = (unsafe { read::<HeapDesc>(desc) }) else {
        return std::ptr::null_mut();
    };
    let id = next_id();
    let mut fields = Map::new();
    fields.insert("heap".into(), id.into());
    if let Some(name) = message_text(h.message_type as i32, h.message) {
        fields.insert("name".into(), name.into());
    }
    fields.insert(
        "usage".into(),
        match h.usage {
            HEAP_USAGE_SUB_ALLOCATOR => "sub-allocator".into(),
            HEAP_USAGE_LAYOUT => "layout".into(),
            other => other.into(),
        },
    );
    if h.type_ == TYPE_VIRTUAL_ADDRESS
        && h.type_specific_desc_size >= std::mem::size_of::<VirtualRange>()
    {
        // SAFETY: a virtual-address heap's description is a range: two integers.
        if let Some(r) = unsafe { probe::read(h.type_specific_desc.cast::<VirtualRange>()) } {
            fields.insert("address".into(), hex(r.ptr));
            fields.insert("size".into(), r.size.into());
        }
    }
    if h.category != 0 {
        fields.insert("category".into(), h.category.into());
    }
    mark(d, "memory heap registered", fields);
    new_handle(id, None)
}

unsafe extern "C" fn heap_unregister(d: Handle, heap: Handle) {
    mark(
        d,
        "memory heap unregistered",
        Map::from_iter([("heap".into(), handle_id(heap).into())]),
    );
}

unsafe extern "C" fn heap_reset(d: Handle, heap: Handle) {
    mark(
        d,
        "memory heap reset",
        Map::from_iter([("heap".into(), handle_id(heap).into())]),
    );
}

unsafe extern "C" fn regions_register(d: Handle, batch: *const c_void) {
    // SAFETY: the producer passes its batch.
    let Some(b) = (unsafe { read::<RegionsRegisterBatch>(batch) }) else {
        return;
    };
    let regions = ranges(
        b.region_type,
        b.region_count,
        b.region_desc_element_size,
        b.region_desc_elements,
    );
    // A region's handle is its start address: a later reference by handle
    // names the same address, with nothing kept here.
    if let Value::Array(listed) = &regions {
        for i in 0..b.region_count.min(listed.len()) {
            let desc = b
                .region_desc_elements
                .cast::<u8>()
                .wrapping_add(i * b.region_desc_element_size)
                .cast::<VirtualRange>();
            // SAFETY: a range is two integers.
            if let Some(r) = unsafe { probe::read(desc) } {
                probe::write(b.region_handle_elements_out.wrapping_add(i), r.ptr);
            }
        }
    }
    mark(
        d,
        "memory regions registered",
        Map::from_iter([
            ("heap".into(), handle_id(b.heap).into()),
            ("count".into(), b.region_count.into()),
            ("regions".into(), regions),
        ]),
    );
}

unsafe extern "C" fn regions_resize(d: Handle, batch: *const c_void) {
    // SAFETY: the producer passes its batch.
    let Some(b) = (unsafe { read::<RegionsResizeBatch>(batch) }) else {
        return;
    };
    let regions = ranges(
        b.region_type,
        b.region_count,
        b.region_desc_element_size,
        b.region_desc_elements,
    );
    mark(
        d,
        "memory regions resized",
        Map::from_iter([
            ("count".into(), b.region_count.into()),
            ("regions".into(), regions),
        ]),
    );
}

/// A region reference, an address or a handle (which this tool makes the
/// region's address): the address.
fn region(reference: *const c_void) -> Value {
    hex(reference)
}

unsafe extern "C" fn regions_unregister(d: Handle, batch: *const c_void) {
    // SAFETY: the producer passes its batch.
    let Some(b) = (unsafe { read::<RegionsUnregisterBatch>(batch) }) else {
        return;
    };
    // SAFETY: a reference is a pointer.
    let regions = unsafe {
        listed(
            b.ref_elements.cast::<*const c_void>(),
            b.ref_count,
            b.ref_element_size,
            |r| region(*r),
        )
    };
    mark(
        d,
        "memory regions unregistered",
        Map::from_iter([
            ("count".into(), b.ref_count.into()),
            ("regions".into(), Value::Array(regions)),
        ]),
    );
}

unsafe extern "C" fn regions_name(d: Handle, batch: *const c_void) {
    // SAFETY: the producer passes its batch.
    let Some(b) = (unsafe { read::<RegionsNameBatch>(batch) }) else {
        return;
    };
    // SAFETY: a name's description is integers and pointers.
    let names = unsafe {
        listed(
            b.region_elements,
            b.region_count,
            b.region_element_size,
            |n: &RegionNameDesc| {
                json!({
                    "region": region(n.region),
                    "name": message_text(n.name_type as i32, n.name),
                })
            },
        )
    };
    mark(
        d,
        "memory regions named",
        Map::from_iter([("regions".into(), Value::Array(names))]),
    );
}

/// Access flags as words (`["read", "write"]`); `reset` for a reset.
fn access(flags: u32) -> Value {
    let mut words: Vec<Value> = ACCESS_KINDS
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, word)| (*word).into())
        .collect();
    if flags & ACCESS_RESET != 0 {
        words.push("reset".into());
    }
    Value::Array(words)
}

/// A bind scope by name (another value as its number).
fn scope(scope: u32) -> Value {
    match scope {
        BIND_SCOPE_CPU_THREAD => "cpu thread".into(),
        BIND_SCOPE_CUDA_STREAM => "cuda stream".into(),
        other => other.into(),
    }
}

/// `{"permissions": id}`.
fn permissions(handle: Handle) -> Map<String, Value> {
    Map::from_iter([("permissions".into(), handle_id(handle).into())])
}

unsafe extern "C" fn permissions_create(d: Handle, flags: i32) -> Handle {
    let id = next_id();
    let mut fields = Map::from_iter([("permissions".into(), id.into())]);
    if flags != 0 {
        fields.insert("exclude global".into(), access(flags as u32));
    }
    mark(d, "memory permissions created", fields);
    new_handle(id, None)
}

unsafe extern "C" fn permissions_destroy(d: Handle, handle: Handle) {
    mark(d, "memory permissions destroyed", permissions(handle));
}

unsafe extern "C" fn permissions_reset(d: Handle, handle: Handle) {
    mark(d, "memory permissions reset", permissions(handle));
}

unsafe extern "C" fn permissions_assign(d: Handle, batch: *const c_void) {
    // SAFETY: the producer passes its batch.
    let Some(b) = (unsafe { read::<PermissionsAssignBatch>(batch) }) else {
        return;
    };
    // SAFETY: the batch's regions, as the producer promises.
    let regions = unsafe {
        listed(
            b.region_elements,
            b.region_count,
            b.region_element_size,
            |r: &PermissionsAssignRegionDesc| json!({"region": region(r.region), "access": access(r.flags)}),
        )
    };
    let mut fields = permissions(b.permissions.cast_mut());
    fields.insert("count".into(), b.region_count.into());
    fields.insert("regions".into(), Value::Array(regions));
    mark(d, "memory permissions assigned", fields);
}

unsafe extern "C" fn permissions_bind(d: Handle, handle: Handle, bind_scope: u32, flags: u32) {
    let mut fields = permissions(handle);
    fields.insert("scope".into(), scope(bind_scope));
    if flags != 0 {
        fields.insert("strict".into(), access(flags));
    }
    mark(d, "memory permissions bound", fields);
}

unsafe extern "C" fn permissions_unbind(d: Handle, bind_scope: u32) {
    mark(
        d,
        "memory permissions unbound",
        Map::from_iter([("scope".into(), scope(bind_scope))]),
    );
}

/// A new permissions object standing for CUDA's permissions of `scope`
/// (`"process"`, or a device number).
fn cuda_permissions(d: Handle, scope: Value) -> Handle {
    let id = next_id();
    let fields = Map::from_iter([("permissions".into(), id.into()), ("cuda".into(), scope)]);
    mark(d, "memory cuda permissions", fields);
    new_handle(id, None)
}

unsafe extern "C" fn cuda_process_permissions(d: Handle) -> Handle {
    cuda_permissions(d, "process".into())
}

unsafe extern "C" fn cuda_device_permissions(d: Handle, device: i32) -> Handle {
    cuda_permissions(d, json!({ "device": device }))
}

unsafe extern "C" fn cuda_peer_access(d: Handle, handle: Handle, peer: i32, flags: u32) {
    let mut fields = permissions(handle);
    fields.insert(
        "peer".into(),
        match peer {
            CUDA_PEER_ALL_DEVICES => "all devices".into(),
            device => device.into(),
        },
    );
    fields.insert("access".into(), access(flags));
    mark(d, "memory cuda peer access", fields);
}

unsafe extern "C" fn cuda_mark_initialized(
    d: Handle,
    stream: *const c_void,
    per_thread_stream: u8,
    batch: *const c_void,
) {
    // SAFETY: the producer passes its batch.
    let Some(b) = (unsafe { read::<MarkInitializedBatch>(batch) }) else {
        return;
    };
    let mut fields = Map::from_iter([("stream".into(), hex(stream))]);
    if per_thread_stream != 0 {
        fields.insert("per-thread stream".into(), true.into());
    }
    fields.insert("count".into(), b.region_desc_count.into());
    let regions = ranges(
        b.region_type,
        b.region_desc_count,
        b.region_desc_element_size,
        b.region_desc_elements,
    );
    fields.insert("regions".into(), regions);
    mark(d, "memory cuda initialized", fields);
}

/// The memory module's functions.
pub(crate) fn functions() -> ExtFunctions {
    let mut f = ExtFunctions::new(ext::MEM);
    f.set(slot::MEM_HEAP_REGISTER, heap_register)
        .set(slot::MEM_HEAP_UNREGISTER, heap_unregister)
        .set(slot::MEM_HEAP_RESET, heap_reset)
        .set(slot::MEM_REGIONS_REGISTER, regions_register)
        .set(slot::MEM_REGIONS_RESIZE, regions_resize)
        .set(slot::MEM_REGIONS_UNREGISTER, regions_unregister)
        .set(slot::MEM_REGIONS_NAME, regions_name)
        .set(slot::MEM_PERMISSIONS_ASSIGN, permissions_assign)
        .set(slot::MEM_PERMISSIONS_CREATE, permissions_create)
        .set(slot::MEM_PERMISSIONS_DESTROY, permissions_destroy)
        .set(slot::MEM_PERMISSIONS_RESET, permissions_reset)
        .set(slot::MEM_PERMISSIONS_BIND, permissions_bind)
        .set(slot::MEM_PERMISSIONS_UNBIND, permissions_unbind)
        .set(
            slot::MEM_CUDA_GET_PROCESS_WIDE_PERMISSIONS,
            cuda_process_permissions,
        )
        .set(
            slot::MEM_CUDA_GET_DEVICE_WIDE_PERMISSIONS,
            cuda_device_permissions,
        )
        .set(slot::MEM_CUDA_SET_PEER_ACCESS, cuda_peer_access)
        .set(slot::MEM_CUDA_MARK_INITIALIZED, cuda_mark_initialized);
    f
}
