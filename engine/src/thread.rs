//! The calling thread's identity (a leaf: everything may use it).

/// The calling thread's OS id (Linux `gettid`), as NVTX tools expect.
pub fn current_os_thread_id() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}
