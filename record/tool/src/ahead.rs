//! Chunk files made ahead and retired off the program's threads: once a
//! thread has asked for a full-size chunk (a process that records that
//! much), a helper thread keeps [`READY_SLOTS`] of them created, reserved
//! and faulted in, and it unmaps the chunks threads are done with, so that a
//! recorded event never waits for `fallocate`, page faults on a fresh chunk
//! or `munmap` (each up to milliseconds for a 4 MiB chunk). A recording
//! ends with at most that many full-size chunks no thread claimed (zeros,
//! which the reader skips).
//!
//! Threads reach the helper only through atomic swaps and a futex wake
//! (async-signal-safe); when no helper runs in this process (a forked
//! child: threads do not survive `fork`), or it has nothing ready, a thread
//! makes or unmaps its chunk itself, as before.

use crate::recording::{self, Mapping};
use crate::writer::MAX_CHUNK;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

/// Full-size chunks kept ready.
const READY_SLOTS: usize = 2;
/// Retired chunks waiting to be unmapped.
const RETIRED_SLOTS: usize = 16;

static READY: [AtomicPtr<u8>; READY_SLOTS] = [const { AtomicPtr::new(null_mut()) }; READY_SLOTS];
/// A retired mapping: its page-aligned base with log2 of its size in the low bits.
static RETIRED: [AtomicUsize; RETIRED_SLOTS] = [const { AtomicUsize::new(0) }; RETIRED_SLOTS];
/// The process whose helper runs (0: none).
static HELPER_PID: AtomicU32 = AtomicU32::new(0);
/// The helper's futex word: bumped to wake it.
static WAKE: AtomicU32 = AtomicU32::new(0);
/// Set once a thread has asked for a full-size chunk: the helper makes them from then on.
static WANTED: AtomicBool = AtomicBool::new(false);

/// Starts the helper in this process (at setup). Without it, threads do
/// their own chunk work.
pub fn start() {
    let started = std::thread::Builder::new()
        .name("nvtxr-record".into())
        .spawn(helper);
    if started.is_ok() {
        HELPER_PID.store(std::process::id(), Ordering::Release);
    }
}

fn helping_here() -> bool {
    // SAFETY: getpid has no preconditions.
    HELPER_PID.load(Ordering::Acquire) == unsafe { libc::getpid() } as u32
}

/// A ready chunk of [`MAX_CHUNK`] bytes (header zero), if the helper has one.
pub fn take() -> Option<Mapping> {
    if !helping_here() {
        return None;
    }
    WANTED.store(true, Ordering::Relaxed);
    let base = READY
        .iter()
        .map(|slot| slot.swap(null_mut(), Ordering::AcqRel))
        .find(|p| !p.is_null());
    wake();
    let base = base?;
    Some(Mapping {
        base,
        size: MAX_CHUNK,
    })
}

/// Hands a chunk the thread is done with to the helper to unmap (what it
/// holds stays in its file), or unmaps it here when the helper cannot.
pub fn retire(m: Mapping) {
    let entry = m.base as usize | m.size.trailing_zeros() as usize;
    if helping_here()
        && m.size.is_power_of_two()
        && RETIRED.iter().any(|slot| {
            slot.compare_exchange(0, entry, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
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

/// The helper: keeps the ready slots full and the retired ones empty,
/// sleeping until a thread takes or retires a chunk (or 100 ms pass).
fn helper() {
    loop {
        let seen = WAKE.load(Ordering::Acquire);
        unmap_retired();
        for slot in READY.iter().filter(|_| WANTED.load(Ordering::Relaxed)) {
            if slot.load(Ordering::Acquire).is_null() {
                match recording::make_chunk(MAX_CHUNK) {
                    Ok(m) => slot.store(m.base, Ordering::Release),
                    // The threads make their own (and say why they cannot).
                    Err(_) => break,
                }
            }
        }
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

/// In a forked child: the helper did not come along, and the ready chunks
/// are the parent's files; the child's views of them are unmapped.
pub fn after_fork_in_child() {
    HELPER_PID.store(0, Ordering::Release);
    for slot in &READY {
        let base = slot.swap(null_mut(), Ordering::AcqRel);
        if !base.is_null() {
            recording::unmap(&Mapping {
                base,
                size: MAX_CHUNK,
            });
        }
    }
    unmap_retired();
}

/// Unmaps every retired chunk.
fn unmap_retired() {
    for slot in &RETIRED {
        let entry = slot.swap(0, Ordering::AcqRel);
        if entry != 0 {
            recording::unmap(&Mapping {
                base: (entry & !0xFFF) as *mut u8,
                size: 1 << (entry & 0xFFF),
            });
        }
    }
}
