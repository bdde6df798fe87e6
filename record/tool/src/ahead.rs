//! Chunk files made ahead and retired off the program's threads: a helper
//! thread creates, reserves and faults in the chunks threads will need
//! next, and unmaps the chunks threads are done with, so that, while a CPU
//! is free for it, a recorded event never waits for `fallocate`, page
//! faults on a fresh chunk or `munmap` (each up to milliseconds for a 4 MiB
//! chunk). When it has fallen behind, a thread makes its next chunk itself
//! and takes its page faults one by one as it writes (see
//! `Writer::next_chunk`).
//!
//! Chunks come in size classes, a thread's first chunk ([`FIRST_CHUNK`])
//! doubling up to [`MAX_CHUNK`]. The helper keeps one first chunk ready (for
//! the next new thread); a thread that takes a chunk of one class asks for
//! one of the next, which the helper makes while the thread fills the one
//! it has (half the time it takes, at most, on a free CPU), and one of this
//! class when none was ready (the thread that loads the tool has its first
//! chunks made at setup); once a thread has asked for a full-size chunk,
//! the helper keeps [`MAX_READY`] of them ready. A recording ends with at most those chunks
//! no thread claimed (zeros, which the reader skips): one of each smaller
//! class asked for, [`MAX_READY`] full-size ones.
//!
//! Threads reach the helper only through atomic swaps and a futex wake
//! (async-signal-safe); when no helper runs in this process (a forked
//! child: threads do not survive `fork`), or it has nothing ready, a thread
//! makes or unmaps its chunk itself.

use crate::recording::{self, Mapping};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

/// A thread's first chunk, in bytes.
pub const FIRST_CHUNK: usize = 64 << 10;
/// The largest chunk.
pub const MAX_CHUNK: usize = 4 << 20;
/// Size classes: `FIRST_CHUNK << class`, up to `MAX_CHUNK`.
const CLASSES: usize = (MAX_CHUNK / FIRST_CHUNK).trailing_zeros() as usize + 1;
/// The full-size class.
const MAX_CLASS: usize = CLASSES - 1;
/// Full-size chunks kept ready (one of each smaller class).
const MAX_READY: usize = 2;
/// Classes made at setup, before the helper starts: the first chunks of
/// the thread that loads the tool (with the one kept for a new thread).
const SET_UP_CLASSES: usize = 3;
/// Retired chunks waiting to be unmapped.
const RETIRED_SLOTS: usize = 16;

/// Ready chunks by class; a smaller class uses its first slot only.
static READY: [[AtomicPtr<u8>; MAX_READY]; CLASSES] =
    [const { [const { AtomicPtr::new(null_mut()) }; MAX_READY] }; CLASSES];
/// Classes a thread has asked for since the helper last made one. The
/// first class is always wanted (new threads), the full-size class from
/// the first time it is asked for on.
static WANTED: [AtomicBool; CLASSES] = [const { AtomicBool::new(false) }; CLASSES];
/// Retired mappings, packed (`Mapping::pack`); 0: a free slot.
static RETIRED: [AtomicUsize; RETIRED_SLOTS] = [const { AtomicUsize::new(0) }; RETIRED_SLOTS];
/// The process whose helper runs (0: none).
static HELPER_PID: AtomicU32 = AtomicU32::new(0);
/// The helper's futex word: bumped to wake it.
static WAKE: AtomicU32 = AtomicU32::new(0);

/// Starts the helper in this process (at setup, on the thread whose first
/// event loads the tool). That thread's first chunks are made here: they
/// fill in a fraction of a millisecond each, too soon for a helper that has
/// only just started. Without a helper, threads do their own chunk work.
pub fn start() {
    for wanted in &WANTED[..SET_UP_CLASSES] {
        wanted.store(true, Ordering::Relaxed);
    }
    // On an error the threads make their own (and say why they cannot).
    let _ = fill_wanted();
    if crate::spawn_thread("nvtxr-record", helper).is_ok() {
        HELPER_PID.store(std::process::id(), Ordering::Release);
    }
}

/// Whether a helper runs in this process.
pub fn helping() -> bool {
    // SAFETY: getpid has no preconditions.
    HELPER_PID.load(Ordering::Acquire) == unsafe { libc::getpid() } as u32
}

/// The class of a chunk of `size` bytes, if it is one.
fn class_of(size: usize) -> Option<usize> {
    (size.is_power_of_two() && (FIRST_CHUNK..=MAX_CHUNK).contains(&size))
        .then(|| (size / FIRST_CHUNK).trailing_zeros() as usize)
}

/// The slots the helper keeps filled for `class`.
fn slots(class: usize) -> &'static [AtomicPtr<u8>] {
    let n = if class == MAX_CLASS { MAX_READY } else { 1 };
    &READY[class][..n]
}

/// A ready chunk of `size` bytes (header zero), if the helper has one.
/// Asks the helper for chunks of the next classes (this thread's next),
/// and, when it had none of this one, for one of this one too.
pub fn take(size: usize) -> Option<Mapping> {
    let class = class_of(size)?;
    if !helping() {
        return None;
    }
    let base = slots(class)
        .iter()
        .map(|slot| slot.swap(null_mut(), Ordering::AcqRel))
        .find(|p| !p.is_null());
    if base.is_none() {
        WANTED[class].store(true, Ordering::Relaxed);
    }
    WANTED[(class + 1).min(MAX_CLASS)].store(true, Ordering::Relaxed);
    wake();
    Some(Mapping { base: base?, size })
}

/// Hands a chunk the thread is done with to the helper to unmap (what it
/// holds stays in its file), or unmaps it here when the helper cannot.
pub fn retire(m: Mapping) {
    if helping()
        && m.pack().is_some_and(|entry| {
            RETIRED.iter().any(|slot| {
                slot.compare_exchange(0, entry, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            })
        })
    {
        wake();
        return;
    }
    recording::unmap(&m);
}

fn wake() {
    WAKE.fetch_add(1, Ordering::Release);
    // SAFETY: a futex wake on our own word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            WAKE.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        )
    };
}

/// The helper: keeps the wanted ready slots full and the retired ones
/// empty, sleeping until a thread takes or retires a chunk (or 100 ms pass).
///
/// It runs at `SCHED_IDLE` priority, on CPU time nothing else wants: a
/// thread it woke is never preempted by it (at normal priority, the
/// scheduler placed the helper on the waking thread's CPU and took turns
/// with it, stalling the program for the milliseconds a 4 MiB chunk takes
/// to make). Where the program keeps every CPU busy, the helper falls
/// behind and threads make their own chunks.
fn helper() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: this thread's own policy, with a valid parameter.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    loop {
        let seen = WAKE.load(Ordering::Acquire);
        unmap_retired();
        // On an error the threads make their own (and say why they cannot).
        let _ = fill_wanted();
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: Duration::from_millis(100).as_nanos() as i64,
        };
        // SAFETY: a futex wait on our own word, with a timeout.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                WAKE.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                seen,
                &timeout,
            )
        };
    }
}

/// Fills the empty slots of each wanted class: those threads asked for,
/// the smallest (soonest needed) first, then the first class (a new
/// thread's). A class stays wanted while it is one that is always kept
/// ready: the first and the full size.
fn fill_wanted() -> Result<(), recording::Errno> {
    for class in (1..CLASSES).chain([0]) {
        let wanted = &WANTED[class];
        let kept = class == 0 || class == MAX_CLASS;
        let asked = if kept {
            wanted.load(Ordering::Relaxed)
        } else {
            wanted.swap(false, Ordering::Relaxed)
        };
        if !asked {
            continue;
        }
        for slot in slots(class) {
            if slot.load(Ordering::Acquire).is_null() {
                let m = recording::make_chunk(FIRST_CHUNK << class, recording::Faults::Now)?;
                slot.store(m.base, Ordering::Release);
            }
        }
    }
    Ok(())
}

/// In a forked child: the helper did not come along, and the ready chunks
/// are the parent's files; the child's views of them are unmapped.
pub fn after_fork_in_child() {
    HELPER_PID.store(0, Ordering::Release);
    for (class, slots) in READY.iter().enumerate() {
        for slot in slots {
            let base = slot.swap(null_mut(), Ordering::AcqRel);
            if !base.is_null() {
                recording::unmap(&Mapping {
                    base,
                    size: FIRST_CHUNK << class,
                });
            }
        }
    }
    unmap_retired();
}

/// Unmaps every retired chunk.
fn unmap_retired() {
    for slot in &RETIRED {
        let entry = slot.swap(0, Ordering::AcqRel);
        if entry != 0 {
            recording::unmap(&Mapping::unpack(entry));
        }
    }
}
