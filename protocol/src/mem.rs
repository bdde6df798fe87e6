//! NVTX's memory extension (`nvtx3/nvToolsExtMem.h`): the structs a
//! producer passes to describe memory heaps and the regions in them, and
//! their numbers. Every struct starts with [`COMPAT_ID`] and its size.

use std::ffi::c_void;

/// `NVTX_EXT_COMPATID_MEM`: the first field of every struct here.
pub const COMPAT_ID: u16 = crate::ext::MEM.compat;

/// `NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR`: the heap hands out its memory
/// as regions.
pub const HEAP_USAGE_SUB_ALLOCATOR: u32 = 1;
/// `NVTX_MEM_HEAP_USAGE_TYPE_LAYOUT`: the regions describe a layout.
pub const HEAP_USAGE_LAYOUT: u32 = 2;
/// `NVTX_MEM_TYPE_VIRTUAL_ADDRESS`: described by a [`VirtualRange`].
pub const TYPE_VIRTUAL_ADDRESS: u32 = 1;
/// `NVTX_MEM_REGION_REF_TYPE_POINTER`: a region referred to by its address.
pub const REF_POINTER: u32 = 1;

/// `NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ`: a region's permissions grant reads.
pub const ACCESS_READ: u32 = 0x1;
/// `NVTX_MEM_PERMISSIONS_REGION_FLAGS_WRITE`: writes.
pub const ACCESS_WRITE: u32 = 0x2;
/// `NVTX_MEM_PERMISSIONS_REGION_FLAGS_ATOMIC`: atomics.
pub const ACCESS_ATOMIC: u32 = 0x4;
/// `NVTX_MEM_PERMISSIONS_REGION_FLAGS_RESET`: back to the defaults.
pub const ACCESS_RESET: u32 = 0x8;
/// `NVTX_MEM_PERMISSIONS_CREATE_FLAGS_EXCLUDE_GLOBAL_*` (read, write,
/// atomic) and `NVTX_MEM_PERMISSIONS_BIND_FLAGS_STRICT_*` have the same
/// three bits as the access flags.
pub const ACCESS_KINDS: [(u32, &str); 3] = [
    (ACCESS_READ, "read"),
    (ACCESS_WRITE, "write"),
    (ACCESS_ATOMIC, "atomic"),
];
/// `NVTX_MEM_PERMISSIONS_BIND_SCOPE_CPU_THREAD`: permissions bound to the
/// calling thread's CPU code.
pub const BIND_SCOPE_CPU_THREAD: u32 = 0x1;
/// `NVTX_MEM_PERMISSIONS_BIND_SCOPE_CUDA_STREAM`: to the CUDA stream it uses.
pub const BIND_SCOPE_CUDA_STREAM: u32 = 0x2;

/// `nvtxMemVirtualRangeDesc_t` (16 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct VirtualRange {
    /// Bytes.
    pub size: usize,
    /// Its start.
    pub ptr: *const c_void,
}

/// `nvtxMemHeapDesc_t` (48 bytes): a heap's registration.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HeapDesc {
    /// [`COMPAT_ID`].
    pub ext_compat_id: u16,
    /// `sizeof` the struct.
    pub struct_size: u16,
    /// Reserved.
    pub reserved0: u32,
    /// `HEAP_USAGE_*` (0: unknown).
    pub usage: u32,
    /// `TYPE_*` (0: unknown).
    pub type_: u32,
    /// Bytes at `type_specific_desc`.
    pub type_specific_desc_size: usize,
    /// For [`TYPE_VIRTUAL_ADDRESS`], a [`VirtualRange`].
    pub type_specific_desc: *const c_void,
    /// A category (0: none).
    pub category: u32,
    /// The message's type (`nvtxMessageType_t`, as `EventAttributes`).
    pub message_type: u32,
    /// The heap's name.
    pub message: *const c_void,
}

/// `nvtxMemRegionsRegisterBatch_t` and `nvtxMemRegionsResizeBatch_t` (the
/// resize batch has no heap and no handles out: read through
/// [`RegionsResizeBatch`]).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RegionsRegisterBatch {
    /// [`COMPAT_ID`].
    pub ext_compat_id: u16,
    /// `sizeof` the struct.
    pub struct_size: u16,
    /// `TYPE_*`.
    pub region_type: u32,
    /// The heap (a handle the tool returned).
    pub heap: *const c_void,
    /// How many regions.
    pub region_count: usize,
    /// The stride between region descriptions.
    pub region_desc_element_size: usize,
    /// The regions' descriptions ([`VirtualRange`]s).
    pub region_desc_elements: *const c_void,
    /// Where the tool writes each region's handle, or NULL.
    pub region_handle_elements_out: *mut *const c_void,
}

/// `nvtxMemRegionsResizeBatch_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RegionsResizeBatch {
    /// [`COMPAT_ID`].
    pub ext_compat_id: u16,
    /// `sizeof` the struct.
    pub struct_size: u16,
    /// `TYPE_*`.
    pub region_type: u32,
    /// How many regions.
    pub region_count: usize,
    /// The stride between region descriptions.
    pub region_desc_element_size: usize,
    /// The regions' new descriptions ([`VirtualRange`]s).
    pub region_desc_elements: *const c_void,
}

/// `nvtxMemRegionsUnregisterBatch_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RegionsUnregisterBatch {
    /// [`COMPAT_ID`].
    pub ext_compat_id: u16,
    /// `sizeof` the struct.
    pub struct_size: u16,
    /// `REF_*`: what the references are.
    pub ref_type: u32,
    /// How many.
    pub ref_count: usize,
    /// The stride between references.
    pub ref_element_size: usize,
    /// The references (an address or a handle each).
    pub ref_elements: *const *const c_void,
}

/// `nvtxMemRegionNameDesc_t` (32 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RegionNameDesc {
    /// `REF_*`.
    pub region_ref_type: u32,
    /// The name's type (`nvtxMessageType_t`).
    pub name_type: u32,
    /// The region: an address or a handle.
    pub region: *const c_void,
    /// The name.
    pub name: *const c_void,
    /// A category (0: none).
    pub category: u32,
    /// Reserved.
    pub reserved0: u32,
}

/// `nvtxMemRegionsNameBatch_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RegionsNameBatch {
    /// [`COMPAT_ID`].
    pub ext_compat_id: u16,
    /// `sizeof` the struct.
    pub struct_size: u16,
    /// Reserved.
    pub reserved0: u32,
    /// How many.
    pub region_count: usize,
    /// The stride between names.
    pub region_element_size: usize,
    /// The names ([`RegionNameDesc`]s).
    pub region_elements: *const RegionNameDesc,
    /// Reserved.
    pub reserved1: usize,
}

/// `nvtxMemPermissionsAssignRegionDesc_t` (16 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PermissionsAssignRegionDesc {
    /// `ACCESS_*`.
    pub flags: u32,
    /// `REF_*`.
    pub region_ref_type: u32,
    /// The region: an address or a handle.
    pub region: *const c_void,
}

/// `nvtxMemPermissionsAssignBatch_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PermissionsAssignBatch {
    /// [`COMPAT_ID`].
    pub ext_compat_id: u16,
    /// `sizeof` the struct.
    pub struct_size: u16,
    /// Reserved.
    pub reserved0: u32,
    /// The permissions object (NULL: the process-wide one).
    pub permissions: *const c_void,
    /// How many.
    pub region_count: usize,
    /// The stride between regions.
    pub region_element_size: usize,
    /// The regions and their access.
    pub region_elements: *const PermissionsAssignRegionDesc,
    /// Reserved.
    pub reserved1: usize,
}

/// `NVTX_MEM_CUDA_PEER_ALL_DEVICES`: `nvtxMemCudaSetPeerAccess`'s "every device".
pub const CUDA_PEER_ALL_DEVICES: i32 = -1;

/// `nvtxMemMarkInitializedBatch_t` (`nvToolsExtMemCudaRt.h`): regions a
/// stream's work initializes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MarkInitializedBatch {
    /// [`COMPAT_ID`].
    pub ext_compat_id: u16,
    /// `sizeof` the struct.
    pub struct_size: u16,
    /// `TYPE_*`.
    pub region_type: u32,
    /// How many regions.
    pub region_desc_count: usize,
    /// The stride between region descriptions.
    pub region_desc_element_size: usize,
    /// The regions' descriptions ([`VirtualRange`]s).
    pub region_desc_elements: *const c_void,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_nvidias() {
        use std::mem::size_of;
        assert_eq!(size_of::<VirtualRange>(), 16);
        assert_eq!(size_of::<HeapDesc>(), 48);
        assert_eq!(size_of::<RegionsRegisterBatch>(), 48);
        assert_eq!(size_of::<RegionsResizeBatch>(), 32);
        assert_eq!(size_of::<RegionsUnregisterBatch>(), 32);
        assert_eq!(size_of::<RegionNameDesc>(), 32);
        assert_eq!(size_of::<RegionsNameBatch>(), 40);
        assert_eq!(size_of::<PermissionsAssignRegionDesc>(), 16);
        assert_eq!(size_of::<PermissionsAssignBatch>(), 48);
        assert_eq!(size_of::<MarkInitializedBatch>(), 32);
    }
}
