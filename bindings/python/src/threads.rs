//! Python threads named on the timeline: each OS thread after its Python
//! thread, at its first NVTX call, and again after `os.fork`.

use crate::c_string;
use nvtxr_engine::{naming, thread};
use pyo3::prelude::*;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether each Python thread's OS thread is named after it on its first event.
pub(crate) static NAME_THREADS: AtomicBool = AtomicBool::new(true);

/// Bumped in a child `os.fork` made: its threads are named again (a tool
/// records each process apart, and the child's thread inherited the flag).
pub(crate) static FORK_GENERATION: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The fork generation in which this thread was named (0: never).
    static THREAD_NAMED: Cell<u64> = const { Cell::new(0) };
}

/// Names this OS thread after `threading.current_thread().name`, once per
/// process, at its first NVTX call of any kind (with a tool: without one
/// there is nobody to tell).
pub(crate) fn name_thread_once(py: Python<'_>) {
    // The common case first: this thread was named in this process.
    let generation = FORK_GENERATION.load(Ordering::Relaxed);
    if THREAD_NAMED.get() == generation || !crate::active() {
        return;
    }
    THREAD_NAMED.set(generation);
    if !NAME_THREADS.load(Ordering::Relaxed) {
        return;
    }
    let name = py
        .import("threading")
        .and_then(|t| t.call_method0("current_thread"))
        .and_then(|t| t.getattr("name"))
        .and_then(|n| n.extract::<String>());
    if let Ok(name) = name {
        name_os_thread(&name);
    }
}

/// Names the calling OS thread (when a tool is attached).
pub(crate) fn name_os_thread(name: &str) {
    if crate::active() {
        let name = c_string(name);
        // SAFETY: a valid C string for the call.
        unsafe { naming::name_os_thread(thread::current_os_thread_id(), name.as_ptr()) }
    }
}

/// Turns the naming of OS threads after Python threads on or off (on by default).
#[pyfunction]
pub(crate) fn name_threads(on: bool) {
    NAME_THREADS.store(on, Ordering::Relaxed);
}

/// Names the calling OS thread (what the timeline shows for it).
#[pyfunction]
pub(crate) fn name_current_thread(name: &str) {
    THREAD_NAMED.with(|n| n.set(FORK_GENERATION.load(Ordering::Relaxed)));
    name_os_thread(name);
}

/// Run by Python in a child `os.fork` made (see `FORK_GENERATION`).
#[pyfunction]
pub(crate) fn _forked() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}
