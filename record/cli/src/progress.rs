//! A progress line on the terminal for conversions that take more than a
//! second (or [`AFTER_VAR`]): what is being written, events done of all,
//! rate, time left. Updated from the replay, a chunk at a time; cleared
//! when done.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Milliseconds a pass runs before its line shows (default 1000).
pub const AFTER_VAR: &str = "NVTXR_PROGRESS_AFTER_MS";

static ENABLED: AtomicBool = AtomicBool::new(false);
static AFTER_MS: AtomicU64 = AtomicU64::new(1000);
static LINE: Mutex<Option<Line>> = Mutex::new(None);

struct Line {
    /// The thread that began the pass: only its replay is counted (the
    /// summary's, on another core, would count the events twice).
    thread: std::thread::ThreadId,
    what: String,
    total: u64,
    done: u64,
    started: Instant,
    shown: Option<Instant>,
}

/// Shows progress from now on (on a terminal, without `-q`), for passes
/// longer than [`AFTER_VAR`] says (a value that is not a number: 1 s).
pub fn enable() {
    if let Some(ms) = std::env::var(AFTER_VAR).ok().and_then(|v| v.parse().ok()) {
        AFTER_MS.store(ms, Ordering::Relaxed);
    }
    ENABLED.store(true, Ordering::Relaxed);
}

/// A pass over `total` events begins.
pub fn begin(what: String, total: u64) {
    if ENABLED.load(Ordering::Relaxed) {
        *LINE.lock().unwrap_or_else(|e| e.into_inner()) = Some(Line {
            thread: std::thread::current().id(),
            what,
            total,
            done: 0,
            started: Instant::now(),
            shown: None,
        });
    }
}

/// `events` more are done.
pub fn advance(events: u64) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let mut line = LINE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(l) = line
        .as_mut()
        .filter(|l| l.thread == std::thread::current().id())
    else {
        return;
    };
    l.done += events;
    let elapsed = l.started.elapsed();
    if elapsed < Duration::from_millis(AFTER_MS.load(Ordering::Relaxed))
        || l.shown
            .is_some_and(|t| t.elapsed() < Duration::from_millis(250))
    {
        return;
    }
    l.shown = Some(Instant::now());
    let rate = l.done as f64 / elapsed.as_secs_f64();
    let left = l.total.saturating_sub(l.done) as f64 / rate.max(1.0);
    eprint!(
        "\r\x1b[Knvtxr: {}: {:.1}M of {:.1}M events, {:.1}M events/s, {:.0} s left",
        l.what,
        l.done as f64 / 1e6,
        l.total as f64 / 1e6,
        rate / 1e6,
        left
    );
    let _ = std::io::stderr().flush();
}

/// The pass is over: its line, if shown, is cleared.
pub fn end() {
    let mut line = LINE.lock().unwrap_or_else(|e| e.into_inner());
    if line.take().is_some_and(|l| l.shown.is_some()) {
        eprint!("\r\x1b[K");
        let _ = std::io::stderr().flush();
    }
}
