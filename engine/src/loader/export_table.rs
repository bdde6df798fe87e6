//! `getExportTable`: what nvtxr hands a tool so it can find the slots.

use super::slots;
use nvtx_protocol::{Callbacks, Slot, VersionInfo, ETID_CALLBACKS, ETID_VERSIONINFO, NVTX_VERSION};
use std::ffi::{c_int, c_uint, c_void};
use std::ptr;

static CALLBACKS: Callbacks = Callbacks {
    struct_size: std::mem::size_of::<Callbacks>(),
    get_module_function_table,
};

static VERSION_INFO: VersionInfo = VersionInfo {
    struct_size: std::mem::size_of::<VersionInfo>(),
    version: NVTX_VERSION,
    reserved0: 0,
    set_injection_nvtx_version,
};

/// The getter passed to `InitializeInjectionNvtx2`.
///
/// # Safety
/// None: any id is answered (NULL for one it does not know); `unsafe` only
/// because the protocol's getter type is.
pub unsafe extern "C" fn get_export_table(id: u32) -> *const c_void {
    match id {
        ETID_CALLBACKS => &CALLBACKS as *const Callbacks as *const c_void,
        ETID_VERSIONINFO => &VERSION_INFO as *const VersionInfo as *const c_void,
        _ => ptr::null(),
    }
}

/// Writes a module's table and size; 0 (and nothing written) for unknown modules.
unsafe extern "C" fn get_module_function_table(
    module: c_int,
    out_table: *mut *mut *mut Slot,
    out_size: *mut c_uint,
) -> c_int {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let Some((table, size)) = slots::table(module) else {
            return 0;
        };
        if !out_table.is_null() {
            // The tool writes through the slot addresses, never into the table.
            *out_table = table.cast_mut().cast();
        }
        if !out_size.is_null() {
            *out_size = size as c_uint;
        }
        1
    }
}

/// Tools report the NVTX version they were built for; nvtxr needs nothing from it.
unsafe extern "C" fn set_injection_nvtx_version(_version: u32) {}
