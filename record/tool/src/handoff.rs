//! Chunks handed on from threads that ended to new threads. A thread that
//! ends with room left in its chunk leaves the chunk here; the next thread
//! to record its first event takes it and goes on after the last record,
//! marked by a [`Kind::Handoff`](nvtxr_record_format::Kind) record naming
//! the new thread. So a program that runs many short threads (one range
//! and a mark each, as per-request threads or `std::async` do) costs the
//! disk its records take, not a chunk file and a page per thread.
//!
//! Threads reach the slots only through atomic swaps (async-signal-safe,
//! no lock). A chunk a thread leaves is complete (its records committed
//! before the slot is written, with release ordering), and only one thread
//! at a time writes to it, so a death at any moment loses at most the
//! record being written, as for any chunk.

use crate::ahead::FIRST_CHUNK;
use crate::recording::{self, Mapping};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Chunks waiting for a new thread (8 short threads at a time each find one).
const SLOTS: usize = 8;
/// A chunk with less room than this is retired, not left.
pub const MIN_ROOM: usize = 4096;
/// A bigger chunk (a long-lived thread's) is retired, its unused pages
/// given back to the disk: what waits here at the program's end stays
/// reserved, at most `SLOTS` chunks of this size.
pub const MAX_LEFT: usize = 2 * FIRST_CHUNK;

/// Left chunks, packed (`Mapping::pack`); 0: a free slot.
static LEFT: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

/// Leaves the chunk `m`, whose records are all committed, for a new
/// thread; `false` when every slot is taken (the caller retires it).
pub fn leave(m: &Mapping) -> bool {
    m.pack().is_some_and(|entry| {
        LEFT.iter().any(|slot| {
            slot.compare_exchange(0, entry, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })
    })
}

/// A chunk a thread that ended left, if any: the caller's alone from here.
pub fn take() -> Option<Mapping> {
    LEFT.iter()
        .map(|slot| slot.swap(0, Ordering::AcqRel))
        .find(|&entry| entry != 0)
        .map(Mapping::unpack)
}

/// In a forked child: the left chunks are the parent's files; the child's
/// views of them are unmapped.
pub fn after_fork_in_child() {
    for slot in &LEFT {
        let entry = slot.swap(0, Ordering::AcqRel);
        if entry != 0 {
            recording::unmap(&Mapping::unpack(entry));
        }
    }
}
