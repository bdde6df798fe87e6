//! User-defined synchronization objects (NVTX's sync extension).

use crate::attributes::with_c_str;
use crate::domain::Domain;
use std::marker::PhantomData;

/// A user-defined synchronization object (a lock, a barrier, a queue the
/// program implements itself) as the tool knows it, so the tool can show who
/// waited for it. Destroyed in the tool when dropped. `Send` and `Sync`: its
/// events may come from any thread.
///
/// ```
/// let lock = nvtxr::SyncUser::new(nvtxr::Domain::global(), "work queue");
/// lock.acquire_start();
/// lock.acquire_success();
/// lock.releasing();
/// ```
pub struct SyncUser<'d> {
    /// The tool's object; NULL with no tool.
    handle: *mut std::ffi::c_void,
    _domain: PhantomData<&'d Domain>,
}

// SAFETY: the handle is the tool's, which NVTX lets any thread use.
unsafe impl Send for SyncUser<'_> {}
// SAFETY: as above; nvtxr only passes the handle along.
unsafe impl Sync for SyncUser<'_> {}

impl<'d> SyncUser<'d> {
    /// Creates the tool's object for a synchronization object named `name` in `domain`.
    pub fn new(domain: &'d Domain, name: &str) -> Self {
        // SAFETY: the pointer is a valid C string for the call.
        let handle = with_c_str(name, |c| unsafe {
            nvtxr_engine::sync::create(domain.state(), c.as_ptr())
        })
        .unwrap_or(std::ptr::null_mut());
        SyncUser {
            handle,
            _domain: PhantomData,
        }
    }

    fn report(&self, event: nvtxr_engine::sync::SyncEvent) {
        // SAFETY: the handle is NULL or the live object from `new`.
        unsafe { nvtxr_engine::sync::report(self.handle, event) }
    }

    /// About to try to acquire it.
    pub fn acquire_start(&self) {
        self.report(nvtxr_engine::sync::SyncEvent::AcquireStart)
    }

    /// The attempt failed.
    pub fn acquire_failed(&self) {
        self.report(nvtxr_engine::sync::SyncEvent::AcquireFailed)
    }

    /// Acquired.
    pub fn acquire_success(&self) {
        self.report(nvtxr_engine::sync::SyncEvent::AcquireSuccess)
    }

    /// About to release it.
    pub fn releasing(&self) {
        self.report(nvtxr_engine::sync::SyncEvent::Releasing)
    }
}

impl Drop for SyncUser<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle is NULL or the live object from `new`, not used again.
        unsafe { nvtxr_engine::sync::destroy(self.handle) }
    }
}
