//! Work done once by one thread while others wait, safe against re-entry and
//! `fork()`: the loader's initialization and the attachment of each domain
//! and registered string to the tool.
//!
//! A claim word is `FREE`, `DONE`, or the claiming thread's
//! `(pid << 32) | tid`. A thread that finds its own id there is re-entering
//! (a tool calling nvtxr from inside the callback being run for it) and must
//! not wait; a thread that finds another process's id is in a child forked
//! mid-work, where that thread does not exist, and takes the work over.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Nobody has done the work.
pub(crate) const FREE: u64 = 0;
/// The work is done.
pub(crate) const DONE: u64 = 1;

/// What a thread should do about a claim word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// The work is done.
    Done,
    /// This thread now owns the work: do it, then call [`finish`].
    Mine,
    /// This thread is already doing the work further up its own stack.
    Reentered,
}

/// This thread's identity across processes: `(pid << 32) | tid`.
pub(crate) fn me() -> u64 {
    let tid = crate::thread::current_os_thread_id();
    (u64::from(std::process::id()) << 32) | u64::from(tid)
}

/// Waits until the work in `word` is done, or claims it. `other` is a value
/// besides `DONE` that also ends the wait (the loader's "no tool").
pub(crate) fn take(word: &AtomicU64, other_done: &[u64]) -> (Turn, u64) {
    let me = me();
    let mut spins = 0u32;
    loop {
        let owner = match word.compare_exchange(FREE, me, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return (Turn::Mine, FREE),
            Err(v) if v == DONE || other_done.contains(&v) => return (Turn::Done, v),
            Err(owner) => owner,
        };
        if owner == me {
            return (Turn::Reentered, owner);
        }
        if (owner >> 32) as u32 != std::process::id() {
            // Forked while a thread of the parent was at it: take over.
            if word
                .compare_exchange(owner, me, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return (Turn::Mine, owner);
            }
            continue;
        }
        spins += 1;
        if spins < 64 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

/// Publishes the outcome of work claimed with [`take`].
pub(crate) fn finish(word: &AtomicU64, outcome: u64) {
    word.store(outcome, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Barrier;

    #[test]
    fn one_thread_does_the_work_while_the_others_wait_for_it() {
        for _ in 0..50 {
            let word = AtomicU64::new(FREE);
            let workers = AtomicUsize::new(0);
            let done_before_return = AtomicUsize::new(0);
            let start = Barrier::new(8);
            std::thread::scope(|s| {
                for _ in 0..8 {
                    s.spawn(|| {
                        start.wait();
                        match take(&word, &[]) {
                            (Turn::Mine, FREE) => {
                                workers.fetch_add(1, Ordering::SeqCst);
                                std::thread::sleep(Duration::from_millis(2));
                                finish(&word, DONE);
                            }
                            (Turn::Done, DONE) => {
                                // Returned only once the work was published.
                                assert_eq!(word.load(Ordering::Acquire), DONE);
                                done_before_return.fetch_add(1, Ordering::SeqCst);
                            }
                            other => panic!("unexpected {other:?}"),
                        }
                    });
                }
            });
            assert_eq!(workers.load(Ordering::SeqCst), 1, "exactly one worker");
            assert_eq!(done_before_return.load(Ordering::SeqCst), 7);
        }
    }

    #[test]
    fn the_claiming_thread_reentering_does_not_wait() {
        let word = AtomicU64::new(FREE);
        assert_eq!(take(&word, &[]).0, Turn::Mine);
        assert_eq!(take(&word, &[]), (Turn::Reentered, me()));
        finish(&word, 7);
        assert_eq!(
            take(&word, &[7]),
            (Turn::Done, 7),
            "another done value ends the wait"
        );
    }

    #[test]
    fn work_claimed_by_another_process_is_taken_over() {
        // What a child forked mid-work finds: a thread id of its parent.
        let parent = (u64::from(std::process::id()) + 1) << 32 | 1234;
        let word = AtomicU64::new(parent);
        assert_eq!(take(&word, &[]), (Turn::Mine, parent));
        assert_eq!(word.load(Ordering::Acquire), me());
    }
}
