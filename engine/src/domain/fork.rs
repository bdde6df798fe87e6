//! Fork safety: the forking thread takes the registry lock just before
//! `fork()` (waiting for a holder to finish) and releases it just after, in
//! the parent and in the child. One lock: the cost does not grow with the
//! number of domains.

use super::{Registry, REGISTRY};
use std::cell::RefCell;
use std::sync::{MutexGuard, Once};

thread_local! {
    static HELD: RefCell<Option<MutexGuard<'static, Registry>>> = const { RefCell::new(None) };
}

extern "C" fn before() {
    let guard = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    HELD.with(|h| *h.borrow_mut() = Some(guard));
}

extern "C" fn after() {
    HELD.with(|h| drop(h.borrow_mut().take()));
}

/// Registers the handlers, once, before the lock is first taken.
pub(super) fn protect() {
    static ONCE: Once = Once::new();
    // SAFETY: registers two `extern "C"` functions with no preconditions.
    ONCE.call_once(|| unsafe {
        libc::pthread_atfork(Some(before), Some(after), Some(after));
    });
}
