//! A domain's or registered string's handle in the tool: made once per life
//! of the domain, on first use, with no lock held; a tool that re-enters
//! from inside the making gets `None` instead of a deadlock.

use crate::claim::{self, Turn};
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// A domain's or string's handle in the tool, made once per life of the domain.
pub(crate) struct Attachment {
    pub(crate) claim: AtomicU64,
    pub(crate) handle: AtomicPtr<c_void>,
}

impl Attachment {
    pub(crate) const fn new() -> Self {
        Attachment {
            claim: AtomicU64::new(claim::FREE),
            handle: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The tool's handle, made by `attach` (with no lock held) if this is
    /// the first use. `None` when this thread is making it further up its
    /// stack (the tool re-entered from inside `attach`).
    #[inline(always)]
    pub(crate) fn get(&self, attach: impl FnOnce() -> *mut c_void) -> Option<*mut c_void> {
        if self.claim.load(Ordering::Acquire) == claim::DONE {
            return Some(self.handle.load(Ordering::Relaxed));
        }
        self.get_slow(attach)
    }

    #[cold]
    #[inline(never)]
    fn get_slow(&self, attach: impl FnOnce() -> *mut c_void) -> Option<*mut c_void> {
        match claim::take(&self.claim, &[]) {
            (Turn::Done, _) => Some(self.handle.load(Ordering::Relaxed)),
            (Turn::Mine, _) => {
                self.handle.store(attach(), Ordering::Relaxed);
                claim::finish(&self.claim, claim::DONE);
                Some(self.handle.load(Ordering::Relaxed))
            }
            (Turn::Reentered, _) => None,
        }
    }

    /// Forgets the handle (the domain was destroyed in the tool); returns it if there was one.
    pub(crate) fn reset(&self) -> Option<*mut c_void> {
        let was = self.claim.swap(claim::FREE, Ordering::AcqRel);
        let handle = self.handle.swap(ptr::null_mut(), Ordering::Relaxed);
        (was == claim::DONE).then_some(handle)
    }
}
