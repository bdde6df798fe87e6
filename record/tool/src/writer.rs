//! Each thread's event writer: records are encoded straight into the
//! thread's current chunk, a shared mapping of its file, and the chunk's
//! committed length is advanced after each one. Nothing is buffered in the
//! process, so nothing needs flushing: `_exit`, SIGKILL, `abort()` or a crash
//! lose at most the event being written.
//!
//! The event path takes no lock and never allocates with `malloc` (a
//! thread's writer and chunks are mappings of their own, found through an
//! initial-exec thread-local slot, `c/current.c`), so events are
//! async-signal-safe, a thread's first one included. A signal handler that interrupts
//! its own thread in the middle of a record encodes its event into the
//! thread's small side buffer, which the interrupted record appends after
//! itself (an event that does not fit there is dropped and counted). A
//! thread's first chunk is small (or the rest of one a thread that ended
//! left, see `handoff`) and each next one doubles, up to [`MAX_CHUNK`].
//! After `fork()` the child leaves the parent's chunks alone and starts its
//! own.

use crate::ahead::{self, FIRST_CHUNK, MAX_CHUNK};
use crate::clock;
use crate::handoff;
use crate::recording::{self, Mapping};
use crate::text::{Event, Text};
use nvtx_protocol::boundary::guard;
use nvtxr_record_format::{self as format, Kind, Stamp, CHUNK_COMMITTED, CHUNK_HEADER, MAX_FIXED};
use std::cell::{Cell, UnsafeCell};
use std::ffi::c_char;
use std::sync::atomic::{compiler_fence, AtomicU64, AtomicUsize, Ordering};

/// After a chunk could not be made, events dropped before trying again.
const RETRY_AFTER: u32 = 4096;
/// Domains whose push depth a thread tracks (what push and pop return).
const DEPTH_DOMAINS: usize = 16;
/// Bytes of events from signal handlers a thread holds while it is mid-record.
const SIDE_BUFFER: usize = 4096;

/// Bumped in a forked child: chunks of an older epoch are the parent's. Starts at 1,
/// so a new thread's writer (epoch 0) sets itself up on its first event.
static EPOCH: AtomicU64 = AtomicU64::new(1);

/// Room kept for an anchor, its wall-clock reading and the thread's OS name before each event.
const MAX_EXTRA: usize = 3 * MAX_FIXED + 16;

pub(crate) struct Writer {
    pub(crate) chunk: Cell<Option<(*mut u8, usize)>>,
    /// Record bytes committed in the current chunk.
    len: Cell<usize>,
    /// The timestamp of the chunk's last relative record.
    previous: Cell<u64>,
    /// The thread's next chunk size.
    next_size: Cell<usize>,
    epoch: Cell<u64>,
    tid: Cell<u32>,
    /// Inside `record` (a signal handler that re-enters sees it set).
    pub(crate) busy: Cell<bool>,
    /// Clock reading after which the next anchor (and OS-name check) is due.
    next_anchor: Cell<u64>,
    /// Events still to drop before retrying to make a chunk.
    retry_in: Cell<u32>,
    /// The OS thread name last written.
    os_name: Cell<[u8; 16]>,
    /// Push depth per domain id; entry 0 is the default domain's (id 0), in
    /// use from the start.
    depths: UnsafeCell<[(u64, i32); DEPTH_DOMAINS]>,
    used_depths: Cell<usize>,
    /// Events recorded by signal handlers while the thread was mid-record.
    side: UnsafeCell<[u8; SIDE_BUFFER]>,
    /// Bytes in `side`; atomic because a handler may change it between any
    /// two instructions of the thread it interrupted.
    side_len: AtomicUsize,
}

impl Writer {
    /// At the thread's end: its chunk left for a new thread when it has
    /// room (see `handoff`); otherwise its unused pages given back to the
    /// disk (see `recording::release_unused`), then unmapped.
    pub(crate) fn retire_chunk(&self) {
        if let Some((base, size)) = self.chunk.take() {
            let m = Mapping { base, size };
            let used = CHUNK_HEADER + self.len.get();
            let ours = self.epoch.get() == EPOCH.load(Ordering::Relaxed);
            let worth = size <= handoff::MAX_LEFT && size - used >= handoff::MIN_ROOM;
            if ours && worth && handoff::leave(&m) {
                return;
            }
            recording::release_unused(&m, used);
            recording::unmap(&m);
        }
    }

    pub(crate) const fn new() -> Writer {
        Writer {
            chunk: Cell::new(None),
            len: Cell::new(0),
            previous: Cell::new(0),
            next_size: Cell::new(FIRST_CHUNK),
            epoch: Cell::new(0),
            tid: Cell::new(0),
            busy: Cell::new(false),
            next_anchor: Cell::new(0),
            retry_in: Cell::new(0),
            os_name: Cell::new([0; 16]),
            depths: UnsafeCell::new([(0, 0); DEPTH_DOMAINS]),
            used_depths: Cell::new(1),
            side: UnsafeCell::new([0; SIDE_BUFFER]),
            side_len: AtomicUsize::new(0),
        }
    }
}

/// In a forked child: the chunks the threads hold are the parent's.
pub fn after_fork_in_child() {
    EPOCH.fetch_add(1, Ordering::Relaxed);
}

impl Writer {
    /// Runs `write` as this thread's one writer, then appends what signal
    /// handlers set aside meanwhile. `None` when a record is already being
    /// written on this thread (this is a signal handler that interrupted it).
    #[inline(always)]
    pub(crate) fn exclusive<R>(&self, write: impl FnOnce(&Writer) -> R) -> Option<R> {
        if self.busy.replace(true) {
            return None;
        }
        // The fences keep the compiler from moving the writes to the
        // chunk outside the `busy` window a signal handler checks.
        compiler_fence(Ordering::SeqCst);
        let result = write(self);
        if self.side_len.load(Ordering::Relaxed) != 0 {
            self.append_set_aside();
        }
        compiler_fence(Ordering::SeqCst);
        self.busy.set(false);
        compiler_fence(Ordering::SeqCst);
        // A handler that ran after the last check left its event aside.
        if self.side_len.load(Ordering::Relaxed) != 0 && !self.busy.replace(true) {
            compiler_fence(Ordering::SeqCst);
            self.append_set_aside();
            compiler_fence(Ordering::SeqCst);
            self.busy.set(false);
        }
        Some(result)
    }

    /// Appends what signal handlers set aside until none is left. Inside
    /// its own panic guard (a panic drops what was aside, counted as one
    /// event); `extern "C"`, so the compiler knows it cannot unwind, and the
    /// event path around it needs no guard of its own.
    #[cold]
    #[inline(never)]
    extern "C" fn append_set_aside(&self) {
        while self.side_len.load(Ordering::Relaxed) != 0 {
            let appended = guard(false, || {
                self.append_side();
                true
            });
            if !appended {
                self.side_len.store(0, Ordering::Relaxed);
                recording::count_dropped(1);
            }
        }
    }

    /// `write` for `events::record_simple`: `None` when the fast way does not
    /// cover the event (nothing written then).
    ///
    /// # Safety
    /// `text` is NULL or NUL-terminated.
    #[inline(always)]
    pub(crate) unsafe fn write_simple(
        &self,
        timestamp: u64,
        kind: Kind,
        domain: u64,
        value: u64,
        text: *const c_char,
    ) -> Option<i32> {
        let (base, size) = self.chunk.get()?;
        let len = self.len.get();
        if self.epoch.get() != EPOCH.load(Ordering::Relaxed)
            || CHUNK_HEADER + len + MAX_FIXED + format::SIMPLE_TEXT_MAX > size
            || timestamp >= self.next_anchor.get()
        {
            return None;
        }
        let mut previous = self.previous.get();
        // SAFETY: room checked above; `text` as this function's contract says.
        let n = unsafe {
            format::encode_simple(
                base.add(CHUNK_HEADER + len),
                &mut previous,
                timestamp,
                kind,
                domain,
                value,
                text,
            )?
        };
        self.previous.set(previous);
        self.commit(base, len + n);
        Some(self.depth_after(kind, domain))
    }

    /// Writes `e`; `absolute`: with its time as is, not relative to the
    /// previous record's (an event recorded after the fact).
    pub(crate) fn write(&self, e: &Event, absolute: bool) -> i32 {
        let need = MAX_EXTRA + format::max_len(e);
        let epoch = EPOCH.load(Ordering::Relaxed);
        if self.epoch.get() != epoch {
            self.start_epoch(epoch);
        }
        let (base, size) = match self.chunk.get() {
            Some((base, size)) if CHUNK_HEADER + self.len.get() + need <= size => (base, size),
            _ => match self.next_chunk(need) {
                Some(chunk) => chunk,
                None => {
                    recording::count_dropped(1);
                    return -1;
                }
            },
        };
        // SAFETY: the chunk is this thread's own mapping of `size` bytes,
        // with room for `need` more bytes checked above.
        let out =
            unsafe { std::slice::from_raw_parts_mut(base.add(CHUNK_HEADER), size - CHUNK_HEADER) };
        let mut len = self.len.get();
        let mut previous = self.previous.get();
        if absolute {
            len += format::encode(&mut out[len..], Stamp::Absolute, e);
        } else {
            if e.timestamp >= self.next_anchor.get() {
                len += self.anchor(&mut out[len..], &mut previous);
            }
            len += format::encode(&mut out[len..], Stamp::Relative(&mut previous), e);
        }
        self.previous.set(previous);
        self.commit(base, len);
        self.depth_after(e.kind, e.domain)
    }

    /// What recording an event of `kind` returns: for a push or a pop, the
    /// depth (see `step_depth`); else 0.
    #[inline(always)]
    fn depth_after(&self, kind: Kind, domain: u64) -> i32 {
        match kind {
            Kind::Push => self.step_depth(domain, 1),
            Kind::Pop => self.step_depth(domain, -1),
            _ => 0,
        }
    }

    /// From a signal handler that interrupted this thread mid-record: encodes
    /// the event into the side buffer. Returns 0 (no depth is tracked here),
    /// -1 if it does not fit.
    #[cold]
    #[inline(never)]
    pub(crate) fn set_aside(&self, e: &Event) -> i32 {
        let need = format::max_len(e);
        loop {
            let at = self.side_len.load(Ordering::Relaxed);
            if at + need > SIDE_BUFFER {
                recording::count_dropped(1);
                return -1;
            }
            let mut record = [0u8; SIDE_BUFFER];
            let n = format::encode(&mut record, Stamp::Absolute, e);
            // A nested handler may have set something aside meanwhile: claim
            // the space only if it is still free.
            if self
                .side_len
                .compare_exchange(at, at + n, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                // SAFETY: bytes `at..at + n` are ours alone now.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        record.as_ptr(),
                        self.side.get().cast::<u8>().add(at),
                        n,
                    )
                };
                return 0;
            }
        }
    }

    /// Appends what signal handlers set aside, after the record they interrupted.
    #[cold]
    #[inline(never)]
    fn append_side(&self) {
        let mut copy = [0u8; SIDE_BUFFER];
        let n = loop {
            let n = self.side_len.load(Ordering::Relaxed);
            // SAFETY: bytes below side_len are complete and never rewritten
            // until side_len is reset below.
            unsafe {
                std::ptr::copy_nonoverlapping(self.side.get().cast::<u8>(), copy.as_mut_ptr(), n)
            };
            if self
                .side_len
                .compare_exchange(n, 0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                break n;
            }
        };
        let fits = matches!(self.chunk.get(), Some((_, size)) if CHUNK_HEADER + self.len.get() + n <= size);
        let Some((base, _)) = (if fits {
            self.chunk.get()
        } else {
            self.next_chunk(n)
        }) else {
            recording::count_dropped(count_records(&copy[..n]));
            return;
        };
        let len = self.len.get();
        // SAFETY: this thread's own chunk, with room for `n` more bytes.
        unsafe { std::ptr::copy_nonoverlapping(copy.as_ptr(), base.add(CHUNK_HEADER + len), n) };
        self.commit(base, len + n);
    }

    /// Makes the first `len` record bytes of the chunk at `base` visible.
    fn commit(&self, base: *mut u8, len: usize) {
        self.len.set(len);
        // SAFETY: 8-aligned offset in a page-aligned mapping, only accessed atomically.
        let committed = unsafe { &*(base.add(CHUNK_COMMITTED) as *const AtomicU64) };
        committed.store(len as u64, Ordering::Release);
    }

    /// First event in this process (or in a forked child): forget the
    /// chunks of the process this thread was forked from.
    fn start_epoch(&self, epoch: u64) {
        if let Some((base, size)) = self.chunk.take() {
            recording::unmap(&Mapping { base, size });
        }
        self.epoch.set(epoch);
        // SAFETY: gettid has no preconditions.
        self.tid.set(unsafe { libc::gettid() } as u32);
        self.next_size.set(FIRST_CHUNK);
        self.retry_in.set(0);
        self.os_name.set([0; 16]);
    }

    /// Maps the thread's next chunk, big enough for `need` bytes.
    fn next_chunk(&self, need: usize) -> Option<(*mut u8, usize)> {
        if self.retry_in.get() > 0 {
            self.retry_in.set(self.retry_in.get() - 1);
            return None;
        }
        if self.chunk.get().is_none() {
            if let Some(chunk) = self.take_left(need) {
                return Some(chunk);
            }
        }
        let size = self.next_size.get().max(CHUNK_HEADER + need);
        let tid = self.tid.get();
        // Chunks come ready from the helper when it has one. When it has
        // fallen behind (the program keeps every CPU busy) or runs in no
        // process, the thread makes its own, of the same size, and takes
        // its pages' faults as it writes them: no stall longer than making
        // the file. (Making the smallest chunk instead, faulted in at once,
        // kept 2 threads on 2 CPUs making 64 KiB chunks: 386 chunks and
        // 24.9 ns per event for 8 million events, against 30 and 16.6.)
        let made = match ahead::take(size) {
            Some(m) => {
                recording::claim_chunk(&m, tid);
                Ok(m)
            }
            None => recording::map_chunk(tid, size),
        };
        match made {
            Ok(m) => {
                if let Some((base, size)) = self.chunk.replace(Some((m.base, m.size))) {
                    ahead::retire(Mapping { base, size });
                }
                self.next_size.set((size * 2).min(MAX_CHUNK));
                self.len.set(0);
                self.previous.set(0);
                self.next_anchor.set(0);
                Some((m.base, m.size))
            }
            Err(e) => {
                recording::warn_dropping(format_args!("cannot create a chunk file: {e}"));
                self.retry_in.set(RETRY_AFTER);
                None
            }
        }
    }

    /// This thread's first chunk, from one a thread that ended left (see
    /// `handoff`), if there is one with room for `need` bytes: it goes on
    /// after a handoff record naming this thread.
    fn take_left(&self, need: usize) -> Option<(*mut u8, usize)> {
        let m = handoff::take()?;
        // SAFETY: 8-aligned offset in a page-aligned mapping, only accessed
        // atomically; the thread that left it committed before leaving it.
        let committed = unsafe { &*(m.base.add(CHUNK_COMMITTED) as *const AtomicU64) };
        let len = committed.load(Ordering::Acquire) as usize;
        if CHUNK_HEADER + len + MAX_FIXED + need > m.size {
            if !handoff::leave(&m) {
                recording::release_unused(&m, CHUNK_HEADER + len);
                ahead::retire(m);
            }
            return None;
        }
        let mut handoff = Event::simple(Kind::Handoff, 0, self.tid.get().into(), None);
        handoff.timestamp = clock::now();
        // SAFETY: the chunk is ours alone now, with room for the handoff
        // record (at most MAX_FIXED bytes) checked above.
        let out =
            unsafe { std::slice::from_raw_parts_mut(m.base.add(CHUNK_HEADER + len), MAX_FIXED) };
        let n = format::encode(out, Stamp::Absolute, &handoff);
        self.chunk.set(Some((m.base, m.size)));
        self.next_size.set((m.size * 2).min(MAX_CHUNK));
        self.commit(m.base, len + n);
        // Relative times start again after a handoff; the anchor is due.
        self.previous.set(0);
        self.next_anchor.set(0);
        Some((m.base, m.size))
    }

    /// Writes an anchor, and the OS thread name if it changed; returns the bytes written.
    #[cold]
    #[inline(never)]
    fn anchor(&self, out: &mut [u8], previous: &mut u64) -> usize {
        let a = clock::anchor();
        self.next_anchor
            .set(a.ticks.saturating_add(clock::anchor_ticks()));
        let mut anchor = Event::simple(Kind::Anchor, 0, a.ns, None);
        anchor.timestamp = a.ticks;
        let mut n = format::encode(out, Stamp::Relative(previous), &anchor);
        let mut wall = Event::simple(Kind::WallClock, 0, clock::wall_ns(), None);
        wall.timestamp = a.ticks;
        n += format::encode(&mut out[n..], Stamp::Relative(previous), &wall);
        let mut name = [0u8; 16];
        // SAFETY: PR_GET_NAME writes at most 16 bytes, NUL included.
        unsafe { libc::prctl(libc::PR_GET_NAME, name.as_mut_ptr()) };
        if name != self.os_name.get() {
            self.os_name.set(name);
            let len = name.iter().position(|&b| b == 0).unwrap_or(16);
            let text = Some(Text::Bytes(&name[..len]));
            let mut event = Event::simple(Kind::OsThreadName, 0, self.tid.get().into(), text);
            event.timestamp = a.ticks;
            n += format::encode(&mut out[n..], Stamp::Relative(previous), &event);
        }
        n
    }

    /// Applies a push (+1) or pop (-1) in `domain`; returns the depth before a
    /// push, after a pop, or -1 for a pop with nothing open (0 past
    /// [`DEPTH_DOMAINS`] domains on one thread).
    #[inline(always)]
    fn step_depth(&self, domain: u64, delta: i32) -> i32 {
        // SAFETY: only this thread touches its writer, and not re-entrantly (`busy`).
        let depths = unsafe { &mut *self.depths.get() };
        let used = self.used_depths.get();
        let i = if domain == 0 {
            0 // the default domain's, the commonest: no search
        } else {
            depths
                .iter()
                .take(used)
                .position(|(d, _)| *d == domain)
                .unwrap_or(used)
        };
        // Past DEPTH_DOMAINS domains on one thread: untracked.
        let Some(entry) = depths.get_mut(i) else {
            return 0;
        };
        if i == used {
            *entry = (domain, 0);
            self.used_depths.set(used + 1);
        }
        let depth = &mut entry.1;
        if delta < 0 && *depth == 0 {
            return -1;
        }
        let before = *depth;
        *depth = depth.saturating_add(delta);
        if delta > 0 {
            before
        } else {
            *depth
        }
    }
}

/// How many records `bytes` holds (for counting what is dropped).
fn count_records(bytes: &[u8]) -> u64 {
    format::decode(bytes).count() as u64
}
