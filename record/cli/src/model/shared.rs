//! The surveyed processes' GPU activity as replays running side by side
//! (the trace's and the summary's) share it: each process read once and
//! held until every replay has taken it. A replay that would read a
//! process more while as many are held as replays run, none yet taken by
//! them all, waits for the others to take one: no replay runs more than a
//! process per replay ahead of the slowest, and memory holds that many
//! processes' activity whatever the number of ranks.
//!
//! No wait lasts: replays take the processes in the same order, so the
//! one that reads a new process is ahead of every other, and the others
//! only take what is held; a replay that ends (done, or failed) no longer
//! counts.

use super::Gpu;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

#[derive(Default)]
pub(super) struct SharedGpu {
    state: Mutex<State>,
    /// Signalled when a replay takes a process or ends.
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The replays running that read GPU activity.
    replays: usize,
    /// Processes read: key, activity, and how many replays took it.
    held: Vec<(u64, Arc<Gpu>, usize)>,
}

impl SharedGpu {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A replay that reads GPU activity starts; it counts until dropped.
    pub(super) fn replay(&self) -> Replaying<'_> {
        self.lock().replays += 1;
        Replaying(self)
    }

    /// Process `key`'s activity, read from its survey (see [`Gpu::load`])
    /// unless another replay has read it.
    pub(super) fn take(&self, key: u64, survey: &Gpu) -> std::io::Result<Arc<Gpu>> {
        let mut state = self.lock();
        loop {
            if let Some((_, gpu, takers)) = state.held.iter_mut().find(|(k, ..)| *k == key) {
                *takers += 1;
                let gpu = Arc::clone(gpu);
                self.changed.notify_all();
                return Ok(gpu);
            }
            let replays = state.replays.max(1);
            if state.held.len() < replays {
                break;
            }
            // Let go of a process every replay has taken, before the next is read.
            if let Some(i) = state.held.iter().position(|(.., t)| *t >= replays) {
                drop(state.held.remove(i));
                break;
            }
            state = (self.changed.wait(state)).unwrap_or_else(PoisonError::into_inner);
        }
        let gpu = survey
            .load()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        let gpu = Arc::new(gpu);
        state.held.push((key, Arc::clone(&gpu), 1));
        Ok(gpu)
    }
}

/// A replay reading GPU activity, counted while it runs.
pub(super) struct Replaying<'a>(&'a SharedGpu);

impl Drop for Replaying<'_> {
    fn drop(&mut self) {
        self.0.lock().replays -= 1;
        self.0.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_side_by_side_read_each_process_once_and_hold_one_each() {
        let shared = SharedGpu::default();
        let survey = Gpu::default();
        let (a, b) = (shared.replay(), shared.replay());
        // The first replay runs two processes ahead: both held.
        let first = shared.take(1, &survey).unwrap();
        let second = shared.take(2, &survey).unwrap();
        // The second takes what the first read.
        assert!(Arc::ptr_eq(&first, &shared.take(1, &survey).unwrap()));
        // The first may now read a third, letting go of the process both took.
        let third = shared.take(3, &survey).unwrap();
        let held: Vec<u64> = shared.lock().held.iter().map(|(k, ..)| *k).collect();
        assert_eq!(held, [2, 3]);
        assert!(Arc::ptr_eq(&second, &shared.take(2, &survey).unwrap()));
        assert!(Arc::ptr_eq(&third, &shared.take(3, &survey).unwrap()));
        drop((a, b));
        assert_eq!(shared.lock().replays, 0);
    }

    #[test]
    fn a_replay_ahead_waits_for_the_slower_and_never_for_one_that_ended() {
        let shared = SharedGpu::default();
        let survey = Gpu::default();
        std::thread::scope(|threads| {
            let (ahead, behind) = (shared.replay(), shared.replay());
            shared.take(1, &survey).unwrap();
            shared.take(2, &survey).unwrap();
            // Two held, neither taken by both: the third waits...
            let waiting = threads.spawn(|| {
                let _ahead = ahead;
                shared.take(3, &survey).map(|_| ())
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!waiting.is_finished());
            // ... until the replay behind ends.
            drop(behind);
            waiting.join().unwrap().unwrap();
        });
    }
}
