//! The handles the tool gives producers (domains, registered strings) and
//! the ids behind them, and a message's text as NVTX passes it.

use crate::probe;
use nvtx_protocol::attr;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ids for domains, registered strings and start/end ranges (0 is the default domain).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// What a domain or registered-string handle points to.
#[repr(C)]
struct Object {
    id: u64,
    /// A registered string's text (payloads may hold its handle).
    text: Option<String>,
}

pub(crate) fn new_handle(id: u64, text: Option<String>) -> *mut c_void {
    Box::into_raw(Box::new(Object { id, text })).cast()
}

/// The text of a registered string's handle; `None` for NULL.
pub(crate) unsafe fn text_of(h: *const c_void) -> Option<String> {
    // SAFETY: NULL or a handle this tool made, as the producer promises.
    unsafe { h.cast::<Object>().as_ref().and_then(|h| h.text.clone()) }
}

/// The id behind a handle; 0 (the default domain) for NULL.
pub(crate) unsafe fn id_of(h: *const c_void) -> u64 {
    // SAFETY: the producer passes what the protocol says: NULL or NUL-terminated strings, NULL or valid attributes, handles this tool made.
    unsafe { h.cast::<Object>().as_ref().map_or(0, |h| h.id) }
}

/// The text of a message given as NVTX's message type and value (a memory
/// heap's or region's name), read fault-safe (see `probe`): `(unreadable)`
/// for a string that cannot be read.
pub(crate) fn message_text(message_type: i32, message: *const c_void) -> Option<String> {
    match message_type {
        attr::MESSAGE_ASCII => probe::string(message.cast()),
        attr::MESSAGE_UNICODE => probe::wide(message.cast()),
        // SAFETY: a registered string is a handle this tool made.
        attr::MESSAGE_REGISTERED => unsafe { text_of(message) },
        _ => None,
    }
}
