//! The slot functions of resources and user sync objects: each handle a
//! leaked box holding its description, logged at each use.

use crate::format::{c_str, domain, w_str};
use crate::record;
use nvtx_protocol::{Handle, ResourceAttributes, SyncUserAttributes};
use std::ffi::c_void;

/// A message of type ascii (1) or unicode (2), quoted.
unsafe fn message(message_type: i32, p: *const c_void) -> String {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        match message_type {
            1 => c_str(p.cast()),
            2 => w_str(p.cast()),
            t => format!("msgtype={t}"),
        }
    }
}

/// A resource or sync-object handle: a leaked box with its description.
fn new_object(description: String) -> Handle {
    Box::into_raw(Box::new(description)).cast()
}

unsafe fn object(h: Handle) -> String {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        if h.is_null() {
            "NULL".into()
        } else {
            (*h.cast::<String>()).clone()
        }
    }
}

pub(crate) unsafe extern "C" fn domain_resource_create(
    d: Handle,
    attr: *const ResourceAttributes,
) -> Handle {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let a = &*attr;
        let description = format!(
            "{{type=0x{:x} id=0x{:x} msg={} version={} size={}}}",
            a.identifier_type,
            a.identifier,
            message(a.message_type, a.message),
            a.version,
            a.size
        );
        record(format!("DomainResourceCreate {} {description}", domain(d)));
        new_object(description)
    }
}
pub(crate) unsafe extern "C" fn domain_resource_destroy(r: Handle) {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        record(format!("DomainResourceDestroy {}", object(r)));
    }
}

// SYNC
pub(crate) unsafe extern "C" fn sync_user_create(
    d: Handle,
    attr: *const SyncUserAttributes,
) -> Handle {
    // SAFETY: the caller upholds this function's contract (for a slot
    // function, the protocol's: valid arguments of the slot's types).
    unsafe {
        let a = &*attr;
        let description = format!(
            "{{msg={} version={} size={}}}",
            message(a.message_type, a.message),
            a.version,
            a.size
        );
        record(format!("DomainSyncUserCreate {} {description}", domain(d)));
        new_object(description)
    }
}
macro_rules! sync_fns {
    ($($f:ident: $label:literal;)*) => {$(
        pub(crate) unsafe extern "C" fn $f(h: Handle) {
            // SAFETY: the caller upholds this function's contract (for a slot
            // function, the protocol's: valid arguments of the slot's types).
            unsafe {
                record(format!(concat!($label, " {}"), object(h)));

            }
        }
    )*};
}
sync_fns! {
    sync_user_destroy: "DomainSyncUserDestroy";
    sync_user_acquire_start: "DomainSyncUserAcquireStart";
    sync_user_acquire_failed: "DomainSyncUserAcquireFailed";
    sync_user_acquire_success: "DomainSyncUserAcquireSuccess";
    sync_user_releasing: "DomainSyncUserReleasing";
}
