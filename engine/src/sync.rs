//! User-defined synchronization objects (NVTX's SYNC module: a lock, a
//! barrier, a queue the program implements itself), so a tool can show who
//! waited for what. The object is the tool's: NULL with no tool.

use crate::domain::DomainState;
use crate::error::Error;
use crate::loader::{slots, tool_attached};
use nvtx_protocol::{attr, slot, Handle, SlotId, SyncUserAttributes, SYNC_ATTRIBUTES_VERSION};
use std::ffi::{c_char, c_void};
use std::ptr;

/// What a synchronization object reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncEvent {
    /// About to try to acquire it.
    AcquireStart,
    /// The attempt failed (a try-lock).
    AcquireFailed,
    /// Acquired.
    AcquireSuccess,
    /// About to release it.
    Releasing,
}

/// Creates the tool's object for a synchronization object named `name` in
/// `domain`; NULL with no tool (the other calls accept NULL as a no-op).
///
/// # Safety
/// `name` is a valid NUL-terminated string.
pub unsafe fn create(
    domain: &'static DomainState,
    name: *const c_char,
) -> Result<*mut c_void, Error> {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if !tool_attached() {
            return Ok(ptr::null_mut());
        }
        let entered = domain.enter()?;
        let attributes = SyncUserAttributes {
            version: SYNC_ATTRIBUTES_VERSION,
            size: std::mem::size_of::<SyncUserAttributes>() as u16,
            message_type: attr::MESSAGE_ASCII,
            message: name.cast(),
        };
        Ok(slots::get(slot::SYNC_USER_CREATE)
            .map_or(ptr::null_mut(), |f| f(entered.handle, &attributes)))
    }
}

/// Reports `event` on the tool's object `handle` (NULL: nothing).
///
/// # Safety
/// `handle` is NULL or came from [`create`] and was not destroyed.
pub unsafe fn report(handle: *mut c_void, event: SyncEvent) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        let slot = match event {
            SyncEvent::AcquireStart => slot::SYNC_USER_ACQUIRE_START,
            SyncEvent::AcquireFailed => slot::SYNC_USER_ACQUIRE_FAILED,
            SyncEvent::AcquireSuccess => slot::SYNC_USER_ACQUIRE_SUCCESS,
            SyncEvent::Releasing => slot::SYNC_USER_RELEASING,
        };
        call(handle, slot);
    }
}

/// Destroys the tool's object `handle` (NULL: nothing).
///
/// # Safety
/// As [`report`]; `handle` is not used afterwards.
pub unsafe fn destroy(handle: *mut c_void) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        call(handle, slot::SYNC_USER_DESTROY);
    }
}

unsafe fn call(handle: *mut c_void, slot: SlotId<unsafe extern "C" fn(Handle)>) {
    // SAFETY: the caller upholds this function's `# Safety` contract.
    unsafe {
        if handle.is_null() || !tool_attached() {
            return;
        }
        if let Some(f) = slots::get(slot) {
            f(handle);
        }
    }
}
