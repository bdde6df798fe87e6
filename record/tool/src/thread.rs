//! Finding the calling thread's writer: an initial-exec thread-local slot
//! (`c/current.c`, nothing allocated), a writer mapped for a thread at its
//! first event, and unmapped when the thread exits.

use crate::writer::Writer;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

extern "C" {
    /// The calling thread's writer (NULL before its first event); `c/current.c`.
    fn nvtxr_record_current() -> *mut c_void;
    /// Sets the calling thread's writer to `writer` if it is still `expected`.
    fn nvtxr_record_install(expected: *mut c_void, writer: *mut c_void) -> bool;
}

/// The calling thread's writer, made on its first event; `None` only when
/// no memory can be mapped for it.
#[inline(always)]
pub(crate) fn current() -> Option<&'static Writer> {
    // SAFETY: reads this thread's own slot.
    let writer = unsafe { nvtxr_record_current() };
    if writer.is_null() {
        return new_writer();
    }
    // SAFETY: a writer stays mapped until `retire` clears the slot and
    // unmaps it, on this thread; only this thread (and its signal handlers,
    // which `busy` keeps apart) uses it.
    Some(unsafe { &*writer.cast::<Writer>() })
}

/// Maps a writer for this thread (not with `malloc`: this may be a signal
/// handler that interrupted `malloc`) and installs it, unless a signal
/// handler installed one meanwhile.
#[cold]
#[inline(never)]
fn new_writer() -> Option<&'static Writer> {
    let size = std::mem::size_of::<Writer>();
    // SAFETY: a fresh anonymous mapping.
    let mapped = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if mapped == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: page-aligned fresh memory of the writer's size.
    unsafe { mapped.cast::<Writer>().write(Writer::new()) };
    // SAFETY: this thread's own slot.
    if !unsafe { nvtxr_record_install(std::ptr::null_mut(), mapped) } {
        // SAFETY: our unused mapping.
        unsafe { libc::munmap(mapped, size) };
        return current();
    }
    let key = THREAD_EXIT.load(Ordering::Relaxed);
    if key != NO_KEY {
        // SAFETY: a key made by `setup`, below PTHREAD_KEY_2NDLEVEL_SIZE, so
        // glibc stores the value in the thread's descriptor (no allocation).
        unsafe { libc::pthread_setspecific(key as libc::pthread_key_t, mapped) };
    }
    // SAFETY: installed above, as in `current`.
    Some(unsafe { &*mapped.cast::<Writer>() })
}

/// The key whose destructor retires a thread's writer when the thread exits.
static THREAD_EXIT: AtomicUsize = AtomicUsize::new(NO_KEY);
const NO_KEY: usize = usize::MAX;

/// Once per process, before any event: arranges for each thread's writer
/// and chunk to be unmapped when the thread exits. A key glibc would store
/// outside the thread's descriptor (32 or more keys in use) is given back:
/// setting it could allocate, and writers then stay mapped.
pub fn setup() {
    let mut key: libc::pthread_key_t = 0;
    // SAFETY: a key with an `extern "C"` destructor.
    if unsafe { libc::pthread_key_create(&mut key, Some(retire)) } != 0 {
        return;
    }
    if key < 32 {
        THREAD_EXIT.store(key as usize, Ordering::Relaxed);
    } else {
        // SAFETY: our key, never set.
        unsafe { libc::pthread_key_delete(key) };
    }
}

/// At thread exit: clears the thread's slot (an event from a later
/// destructor makes a new writer, retired in glibc's next round), then
/// unmaps the writer's chunk and the writer.
extern "C" fn retire(writer: *mut c_void) {
    // SAFETY: this thread's own slot.
    if !unsafe { nvtxr_record_install(writer, std::ptr::null_mut()) } {
        return;
    }
    // SAFETY: the writer this thread installed, no longer reachable.
    let w = unsafe { &*writer.cast::<Writer>() };
    w.retire_chunk();
    // SAFETY: the writer's own mapping, unused from here on.
    unsafe { libc::munmap(writer, std::mem::size_of::<Writer>()) };
}
