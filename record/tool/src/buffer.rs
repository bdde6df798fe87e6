//! Per-thread event buffers, streamed to per-thread files.
//!
//! The event path takes only its own thread's (uncontended) lock, never a
//! global one, and allocates nothing once the thread's 1 MiB buffer exists:
//! a record is encoded into the buffer, which is written to
//! `<dir>/<pid>-<tid>.events` when full, when the thread exits, at `exit()`
//! (from any thread), and on SIGINT/SIGTERM. After a `fork()`, the child
//! drops what it inherited (the parent writes it) and records to its own files.

use crate::format::{
    Kind, HAS_CATEGORY, HAS_COLOR, HAS_DOMAIN, HAS_PAYLOAD, HAS_STRING, HAS_TEXT, HAS_VALUE,
};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// Bytes buffered per thread before a write.
pub const CAPACITY: usize = 1 << 20;

/// Where recordings go (`NVTXR_RECORD_DIR`), set once at attach.
pub static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Bumped in a forked child: buffers of an older epoch belong to the parent.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Set after a write failed: recording stops; what was written stays.
static FAILED: AtomicBool = AtomicBool::new(false);

/// Every live thread's buffer, for flushing at exit and on signals. A spin
/// lock, so a child forked while another thread held it can reset it.
static REGISTRY: SpinLock<Vec<Arc<ThreadBuffer>>> = SpinLock::new(Vec::new());

/// An event's text, written after the header.
pub enum Text<'a> {
    None,
    Bytes(&'a [u8]),
    /// A NUL-terminated `wchar_t` (UTF-32) string, converted to UTF-8.
    Wide(*const i32),
}

/// One event, before encoding (see `format` for what each field means).
pub struct Event<'a> {
    pub kind: Kind,
    pub color: Option<u32>,
    /// 0 means none.
    pub category: u32,
    /// `(type, bits)`; type 0 means none.
    pub payload: (u8, u64),
    pub domain: u64,
    pub value: u64,
    pub string: Option<u64>,
    pub text: Text<'a>,
}

impl<'a> Event<'a> {
    /// An event with only a kind, domain, value and text.
    pub fn simple(kind: Kind, domain: u64, value: u64, text: Text<'a>) -> Self {
        Event {
            kind,
            color: None,
            category: 0,
            payload: (0, 0),
            domain,
            value,
            string: None,
            text,
        }
    }
}

/// The most bytes a record takes besides its text.
const MAX_FIXED: usize = 2 + 8 + 4 + 4 + 9 + 8 + 8 + 8 + 4;

pub struct ThreadBuffer {
    inner: Mutex<Inner>,
}

struct Inner {
    data: Vec<u8>,
    file: Option<File>,
    tid: u32,
    epoch: u64,
    /// Push depth per domain on this thread (what push and pop return).
    depths: Vec<(u64, i32)>,
}

impl Inner {
    /// Applies a push (+1) or pop (-1) in `domain`; returns the depth before a
    /// push, after a pop, or -1 for a pop with nothing open.
    fn step_depth(&mut self, domain: u64, delta: i32) -> i32 {
        let i = match self.depths.iter().position(|(d, _)| *d == domain) {
            Some(i) => i,
            None => {
                self.depths.push((domain, 0));
                self.depths.len() - 1
            }
        };
        let depth = &mut self.depths[i].1;
        if delta < 0 && *depth == 0 {
            return -1;
        }
        let before = *depth;
        *depth += delta;
        if delta > 0 {
            before
        } else {
            *depth
        }
    }
}

/// The calling thread's buffer, registered on first use and flushed when the thread exits.
struct Local {
    buffer: Arc<ThreadBuffer>,
    /// The epoch the buffer belongs to, readable without its lock (only this thread changes it).
    epoch: std::cell::Cell<u64>,
}

impl Drop for Local {
    fn drop(&mut self) {
        flush(&mut lock(&self.buffer.inner));
        REGISTRY.with(|r| r.retain(|b| !Arc::ptr_eq(b, &self.buffer)));
    }
}

thread_local! {
    static LOCAL: Local = Local::new();
}

impl Local {
    fn new() -> Local {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() } as u32;
        let buffer = Arc::new(ThreadBuffer {
            inner: Mutex::new(Inner {
                data: Vec::with_capacity(CAPACITY),
                file: open_file(tid),
                tid,
                epoch: EPOCH.load(Ordering::Acquire),
                depths: Vec::new(),
            }),
        });
        REGISTRY.with(|r| r.push(buffer.clone()));
        Local {
            buffer,
            epoch: std::cell::Cell::new(EPOCH.load(Ordering::Acquire)),
        }
    }
}

fn lock(m: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Nanoseconds on CLOCK_MONOTONIC, the clock every process shares.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Records one event on the calling thread. Returns, for a push or a pop,
/// the depth NVIDIA's tools return (see `Inner::step_depth`); else 0.
pub fn record(event: &Event) -> i32 {
    if FAILED.load(Ordering::Relaxed) {
        return -1;
    }
    let timestamp = now_ns();
    // try_with: events from thread-local destructors after ours ran are dropped.
    LOCAL
        .try_with(|local| {
            let epoch = EPOCH.load(Ordering::Acquire);
            if local.epoch.get() != epoch {
                // The first event in a forked child: what the buffer holds is
                // the parent's to write. (Registered without holding the
                // buffer's lock, in the order `flush_all` takes them.)
                local.epoch.set(epoch);
                let mut inner = lock(&local.buffer.inner);
                inner.data.clear();
                inner.epoch = epoch;
                // SAFETY: gettid has no preconditions.
                inner.tid = unsafe { libc::gettid() } as u32;
                inner.file = open_file(inner.tid);
                drop(inner);
                REGISTRY.with(|r| r.push(local.buffer.clone()));
            }
            let mut inner = lock(&local.buffer.inner);
            let text_len = match event.text {
                Text::None => 0,
                Text::Bytes(b) => b.len(),
                // SAFETY: the producer passes a NUL-terminated wide string.
                Text::Wide(w) => unsafe { wide_chars(w).map(char::len_utf8).sum() },
            };
            if inner.data.len() + MAX_FIXED + text_len > CAPACITY {
                flush(&mut inner);
            }
            encode(&mut inner.data, timestamp, event, text_len);
            match event.kind {
                Kind::Push => inner.step_depth(event.domain, 1),
                Kind::Pop => inner.step_depth(event.domain, -1),
                _ => 0,
            }
        })
        .unwrap_or(-1)
}

/// Appends one record: the fixed fields are assembled on the stack and
/// appended at once, then the text.
fn encode(data: &mut Vec<u8>, timestamp: u64, e: &Event, text_len: usize) {
    let mut head = [0u8; MAX_FIXED];
    let mut n = 2;
    let mut flags = 0;
    let mut put = |bit: u8, bytes: &[u8]| {
        flags |= bit;
        head[n..n + bytes.len()].copy_from_slice(bytes);
        n += bytes.len();
    };
    put(0, &timestamp.to_le_bytes());
    if let Some(c) = e.color {
        put(HAS_COLOR, &c.to_le_bytes());
    }
    if e.category != 0 {
        put(HAS_CATEGORY, &e.category.to_le_bytes());
    }
    if e.payload.0 != 0 {
        put(HAS_PAYLOAD, &[e.payload.0]);
        put(HAS_PAYLOAD, &e.payload.1.to_le_bytes());
    }
    if e.domain != 0 {
        put(HAS_DOMAIN, &e.domain.to_le_bytes());
    }
    if e.value != 0 {
        put(HAS_VALUE, &e.value.to_le_bytes());
    }
    if let Some(s) = e.string {
        put(HAS_STRING, &s.to_le_bytes());
    }
    if !matches!(e.text, Text::None) {
        put(HAS_TEXT, &(text_len as u32).to_le_bytes());
    }
    head[0] = e.kind as u8;
    head[1] = flags;
    data.extend_from_slice(&head[..n]);
    match e.text {
        Text::None => {}
        Text::Bytes(b) => data.extend_from_slice(b),
        Text::Wide(w) => {
            let mut utf8 = [0u8; 4];
            // SAFETY: as in `record`.
            for c in unsafe { wide_chars(w) } {
                data.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
    }
}

/// The characters of a NUL-terminated UTF-32 string (invalid ones as U+FFFD).
///
/// # Safety
/// `w` is NULL or NUL-terminated.
unsafe fn wide_chars(w: *const i32) -> impl Iterator<Item = char> {
    let mut i = 0;
    std::iter::from_fn(move || {
        if w.is_null() || *w.add(i) == 0 {
            return None;
        }
        let c = char::from_u32(*w.add(i) as u32).unwrap_or('\u{FFFD}');
        i += 1;
        Some(c)
    })
}

/// Opens `<dir>/<pid>-<tid>.events`, when a thread starts recording (so a
/// flush from a signal handler only has to `write`).
fn open_file(tid: u32) -> Option<File> {
    let dir = DIR.get()?;
    let path = dir.join(format!("{}-{tid}.events", std::process::id()));
    match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        Ok(f) => Some(f),
        Err(e) => {
            fail(&format!("cannot create {}: {e}", path.display()));
            None
        }
    }
}

/// Writes a buffer's contents to its thread's file (unless the buffer was
/// inherited through fork: then its contents are the parent's to write).
fn flush(inner: &mut Inner) {
    if inner.epoch != EPOCH.load(Ordering::Acquire) || FAILED.load(Ordering::Relaxed) {
        inner.data.clear();
        return;
    }
    let result = match inner.file.as_mut() {
        Some(file) if !inner.data.is_empty() => file.write_all(&inner.data),
        _ => Ok(()),
    };
    inner.data.clear();
    if let Err(e) = result {
        let dir = DIR
            .get()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        fail(&format!("cannot write to {dir}: {e}"));
    }
}

/// Stops recording after a write failure, saying so once on stderr.
pub fn fail(why: &str) {
    if !FAILED.swap(true, Ordering::Relaxed) {
        let _ = writeln!(
            std::io::stderr(),
            "nvtxr record: {why}; recording stopped, what was written is kept"
        );
    }
}

/// Flushes every thread's buffer: at exit, and on SIGINT/SIGTERM (with
/// `try_lock`, skipping a buffer the interrupted thread holds).
pub fn flush_all(from_signal: bool) {
    // No allocation here: this may run in a signal handler.
    let flush_each = |buffers: &mut Vec<Arc<ThreadBuffer>>| {
        for b in buffers.iter() {
            let guard = if from_signal {
                b.inner.try_lock().ok()
            } else {
                Some(lock(&b.inner))
            };
            if let Some(mut inner) = guard {
                flush(&mut inner);
            }
        }
    };
    if from_signal {
        REGISTRY.try_with(flush_each);
    } else {
        REGISTRY.with(flush_each);
    }
}

/// In a forked child: other threads' buffers are gone; start a new epoch.
pub fn after_fork_in_child() {
    REGISTRY.reset(Vec::new());
    EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// A minimal spin lock whose state a forked child can reset.
pub struct SpinLock<T> {
    locked: AtomicBool,
    value: std::cell::UnsafeCell<T>,
}

// SAFETY: access to `value` is serialized by `locked`.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T> SpinLock<T> {
    const fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: std::cell::UnsafeCell::new(value),
        }
    }

    fn acquire(&self) -> bool {
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        while !self.acquire() {
            std::hint::spin_loop();
        }
        // SAFETY: we hold the lock.
        let r = f(unsafe { &mut *self.value.get() });
        self.locked.store(false, Ordering::Release);
        r
    }

    fn try_with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        if !self.acquire() {
            return None;
        }
        // SAFETY: we hold the lock.
        let r = f(unsafe { &mut *self.value.get() });
        self.locked.store(false, Ordering::Release);
        Some(r)
    }

    /// Only in a forked child, where no other thread exists: replaces the
    /// value (leaking the old one) and unlocks.
    fn reset(&self, value: T) {
        // SAFETY: single-threaded (the fork child), so no one else holds it.
        unsafe { std::ptr::write(self.value.get(), value) };
        self.locked.store(false, Ordering::Release);
    }
}
