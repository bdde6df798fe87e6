//! nvtxr's own signals.
//!
//! While the program runs, SIGINT, SIGTERM and SIGHUP are passed on to it
//! (its end is recorded, then converted). Once nvtxr is converting, any of
//! them stops the conversion: nothing half-written is left (see `output`),
//! the raw recording is kept, and nvtxr says how to convert it. SIGXFSZ
//! (`ulimit -f`) is ignored while converting, so a write past the limit is
//! an error nvtxr reports instead of a death that leaves a broken trace; the
//! program itself runs with the disposition it was given.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The program nvtxr started, while it runs (0 otherwise).
static CHILD: AtomicI32 = AtomicI32::new(0);
static CONVERTING: AtomicBool = AtomicBool::new(false);
/// The signal that stopped the conversion, or 0.
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);
/// A SIGTERM or SIGHUP came while the program ran.
static TERMINATED: AtomicBool = AtomicBool::new(false);

const HANDLED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(signal: libc::c_int) {
    if CONVERTING.load(Ordering::SeqCst) {
        STOPPED_BY.store(signal, Ordering::SeqCst);
        return;
    }
    if signal != libc::SIGINT {
        TERMINATED.store(true, Ordering::SeqCst);
    }
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe; the pid is our unreaped child.
        unsafe { libc::kill(child, signal) };
    }
}

/// Installs the handler (before the program starts, or before a report).
pub fn install() {
    for signal in HANDLED {
        // SAFETY: a handler that only touches atomics and calls kill().
        unsafe {
            libc::signal(
                signal,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
    }
}

/// The program is running as `pid` (0: it has been reaped).
pub fn set_child(pid: i32) {
    CHILD.store(pid, Ordering::SeqCst);
}

/// From here on a signal stops nvtxr's own work, and SIGXFSZ is ignored.
pub fn converting() {
    CHILD.store(0, Ordering::SeqCst);
    CONVERTING.store(true, Ordering::SeqCst);
    // SAFETY: setting a disposition.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

/// Whether a SIGTERM or SIGHUP came while the program ran.
pub fn terminated() -> bool {
    TERMINATED.load(Ordering::SeqCst)
}

/// The signal that stopped the conversion, if one did.
pub fn stopped_by() -> Option<i32> {
    match STOPPED_BY.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// An error once a signal has stopped the conversion: checked between
/// chunks read and before each write.
pub fn check() -> std::io::Result<()> {
    match stopped_by() {
        None => Ok(()),
        Some(s) => Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            format!("stopped by signal {s}"),
        )),
    }
}
