//! nvtxr's own signals.
//!
//! While the program runs, SIGINT, SIGTERM and SIGHUP are passed on to it
//! (its end is recorded, then converted). Once nvtxr is converting, the
//! first of them stops the conversion at the next read or write (a write
//! blocked on a pipe returns at once: the handler does not restart calls):
//! nothing half-written is left (see `output`), the raw recording is kept,
//! and nvtxr says how to convert it. A second one ends nvtxr at once,
//! printing what [`on_second_signal`] was given. SIGXFSZ (`ulimit -f`) is
//! ignored while converting, so a write past the limit is an error nvtxr
//! reports instead of a death that leaves a broken trace; the program
//! itself runs with the disposition it was given.

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

/// The program nvtxr started, while it runs (0 otherwise).
static CHILD: AtomicI32 = AtomicI32::new(0);
static CONVERTING: AtomicBool = AtomicBool::new(false);
/// The signal that stopped the conversion, or 0.
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);
/// A SIGTERM or SIGHUP came while the program ran.
static TERMINATED: AtomicBool = AtomicBool::new(false);
/// What a second signal prints before nvtxr ends (a leaked C string), or null.
static LAST_WORDS: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

const HANDLED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(signal: libc::c_int) {
    if CONVERTING.load(Ordering::SeqCst) {
        if STOPPED_BY.swap(signal, Ordering::SeqCst) != 0 {
            let words = LAST_WORDS.load(Ordering::SeqCst);
            if !words.is_null() {
                // SAFETY: a NUL-terminated string that is never freed;
                // strlen and write are async-signal-safe.
                unsafe { libc::write(libc::STDERR_FILENO, words.cast(), libc::strlen(words)) };
            }
            // SAFETY: _exit is async-signal-safe. What is being written is an
            // unnamed file (see `output`): it goes with the process.
            unsafe { libc::_exit(128 + signal) };
        }
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
        // SAFETY: a zeroed sigaction is valid; the handler only touches
        // atomics and calls kill(), write() and _exit(). No SA_RESTART: a
        // blocked read or write returns EINTR, so a stop is seen at once.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
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

/// What a second signal prints (a line) before it ends nvtxr.
pub fn on_second_signal(words: &str) {
    if let Ok(c) = CString::new(words) {
        let old = LAST_WORDS.swap(c.into_raw(), Ordering::SeqCst);
        if !old.is_null() {
            // SAFETY: the string an earlier call leaked; a handler reading it
            // meanwhile would be ending the process.
            drop(unsafe { CString::from_raw(old) });
        }
    }
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

/// The error a stopped conversion fails with. Not `ErrorKind::Interrupted`:
/// `write_all`, `BufWriter` and `read_to_end` retry that forever.
#[derive(Debug)]
struct Stopped(i32);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stopped by signal {}", self.0)
    }
}

impl std::error::Error for Stopped {}

/// An error once a signal has stopped the conversion: checked between
/// chunks read and before each write.
pub fn check() -> std::io::Result<()> {
    match stopped_by() {
        None => Ok(()),
        Some(s) => Err(std::io::Error::other(Stopped(s))),
    }
}

/// Whether `e` is [`check`]'s error.
pub fn is_stop(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Stopped>())
}
