//! User-defined synchronization objects (NVTX's `nvtxDomainSyncUser*`).

use super::boundary::exported;
use super::codes::nvtxr_status_t;
use super::codes::NVTXR_OK;
use super::domain::{domain_ref, nvtxr_domain_t};
use nvtxr_engine::sync::{self, SyncEvent};
use std::ffi::c_char;
use std::ptr;

/// A synchronization object as the tool knows it (a lock, a barrier, a queue
/// the program implements itself). NULL when no tool is attached; every call
/// accepts NULL as a no-op. Owned by the tool: release it with
/// `nvtxr_sync_destroy`. The calls may come from any thread.
pub struct nvtxr_sync_t {
    _opaque: [u8; 0],
}

/// Creates the tool's object for a synchronization object named `name`
/// (UTF-8, read during the call) in `domain` (NULL: the default domain).
/// Returns NULL with no tool, for a NULL name, or for a destroyed domain.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_sync_create(
    domain: *const nvtxr_domain_t,
    name: *const c_char,
) -> *mut nvtxr_sync_t {
    exported!(unsafe {
        if name.is_null() {
            return ptr::null_mut();
        }
        domain_ref(domain)
            .and_then(|d| sync::create(d, name))
            .map_or(ptr::null_mut(), |h| h.cast())
    })
}

/// Destroys the tool's object (NULL: nothing). Returns `NVTXR_OK`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_sync_destroy(sync: *mut nvtxr_sync_t) -> nvtxr_status_t {
    exported!(unsafe {
        sync::destroy(sync.cast());
        NVTXR_OK
    })
}

fn report(sync: *mut nvtxr_sync_t, event: SyncEvent) -> nvtxr_status_t {
    exported!(unsafe {
        sync::report(sync.cast(), event);
        NVTXR_OK
    })
}

/// The program is about to try to acquire `sync`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_sync_acquire_start(sync: *mut nvtxr_sync_t) -> nvtxr_status_t {
    report(sync, SyncEvent::AcquireStart)
}

/// The attempt to acquire `sync` failed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_sync_acquire_failed(sync: *mut nvtxr_sync_t) -> nvtxr_status_t {
    report(sync, SyncEvent::AcquireFailed)
}

/// `sync` was acquired.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_sync_acquire_success(sync: *mut nvtxr_sync_t) -> nvtxr_status_t {
    report(sync, SyncEvent::AcquireSuccess)
}

/// The program is about to release `sync`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nvtxr_sync_releasing(sync: *mut nvtxr_sync_t) -> nvtxr_status_t {
    report(sync, SyncEvent::Releasing)
}
