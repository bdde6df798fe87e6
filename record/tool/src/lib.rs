//! nvtxr's recording tool (`libnvtxr_record.so`): an NVTX tool that attaches
//! through NVIDIA's NVTX3 protocol to every producer (nvtxr, NVIDIA's headers
//! and `libnvtx3interop.so.1`, NVIDIA's Python `nvtx`, PyTorch) and streams
//! timestamped events to `NVTXR_RECORD_DIR`, which `nvtxr record` / `nvtxr
//! report` turn into a trace, an HTML timeline and a summary.
//!
//! Use it through `nvtxr record -- COMMAND`, or by hand:
//! `NVTX_INJECTION64_PATH=libnvtxr_record.so NVTXR_RECORD_DIR=dir COMMAND`,
//! then `nvtxr report dir`.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod ahead;
mod callbacks;
mod clock;
mod counters;
mod events;
mod extensions;
mod gpu;
mod handles;
mod handoff;
mod memory;
mod payload;
mod probe;
mod recording;
mod text;
mod thread;
mod writer;

use std::ffi::c_int;
use std::io::Write;
use std::sync::OnceLock;

use nvtx_protocol::{Callbacks, GetExportTable, ETID_CALLBACKS};
use nvtxr_record_format::time::{clock_choice, Clock, CLOCK_VAR};
use nvtxr_record_format::DIR_VAR;

/// Process-wide setup, once (every producer in the process calls the entry
/// point). Nothing is registered to run at exit or on signals: events are in
/// their files as soon as they are recorded.
pub(crate) fn setup() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| {
        let Some(dir) = std::env::var_os(DIR_VAR).filter(|d| !d.is_empty()) else {
            say(format_args!("{DIR_VAR} is not set; not recording"));
            return false;
        };
        let clock = std::env::var_os(CLOCK_VAR);
        let started = clock_choice(clock.as_deref()).and_then(|forced| {
            recording::open_root(std::path::Path::new(&dir))?;
            let monotonic = forced == Some(Clock::Monotonic);
            recording::start_image(clock::setup(None, monotonic))
        });
        if let Err(e) = started {
            say(format_args!("{e}; not recording"));
            return false;
        }
        thread::setup();
        ahead::start();
        // SAFETY: registers an `extern "C"` handler with no preconditions.
        unsafe { libc::pthread_atfork(None, None, Some(in_fork_child)) };
        true
    })
}

/// Starts one of the tool's own threads, named `name`, with every signal
/// blocked in it: a signal sent to the process goes to one of the
/// program's threads, whose handlers expect it there, never to the tool's.
pub(crate) fn spawn_thread(
    name: &str,
    body: impl FnOnce() + Send + 'static,
) -> std::io::Result<()> {
    // SAFETY: a signal set is plain data; sigfillset fills it.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut before = all;
    // SAFETY: a valid set, then this thread's own mask swapped for it.
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut before);
    }
    // The new thread starts with the mask in force here.
    let started = std::thread::Builder::new().name(name.into()).spawn(body);
    // SAFETY: this thread's mask back as it was.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut()) };
    started.map(drop)
}

pub(crate) fn say(what: std::fmt::Arguments) {
    let _ = writeln!(std::io::stderr(), "nvtxr record: {what}");
}

/// A forked child records into a new process folder of its own.
extern "C" fn in_fork_child() {
    writer::after_fork_in_child();
    ahead::after_fork_in_child();
    handoff::after_fork_in_child();
    gpu::after_fork_in_child();
    if let Some(calibration) = recording::calibration() {
        if let Err(e) = recording::start_image(calibration) {
            recording::warn_dropping(format_args!("{e}"));
        }
    }
}

/// The tool's entry point.
///
/// # Safety
/// Called by an NVTX producer with its export-table getter.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn InitializeInjectionNvtx2(get_export_table: GetExportTable) -> c_int {
    // SAFETY: called by a producer, as the protocol says, with its export-table getter.
    unsafe {
        if !setup() {
            return 0;
        }
        let callbacks = get_export_table(ETID_CALLBACKS).cast::<Callbacks>();
        let Some(callbacks) = callbacks.as_ref() else {
            return 0;
        };
        if !callbacks::functions().install(callbacks) {
            return 0;
        }
        1
    }
}
