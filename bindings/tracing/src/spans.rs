//! Live spans' metadata by id, so that entering a span (each poll of an
//! instrumented future) needs no registry lookup.
//!
//! A direct-mapped table of `(id, metadata)` entries. A writer claims an
//! entry by swapping its id for [`BUSY`], writes the metadata, then
//! publishes the new id; a reader takes the metadata only if it read the
//! same id before and after it (a seqlock). Ids are unique for as long as a
//! span lives, so an entry never answers for another span. A span whose
//! entry was taken by another span with the same hash, or was being written,
//! is not found: the caller asks the registry instead.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use tracing::span::Id;
use tracing::Metadata;

/// Entries in the table (a power of two).
const ENTRIES: usize = 4096;
/// An entry being written. Span ids are non-zero and never this large.
const BUSY: u64 = u64::MAX;
/// An empty entry.
const EMPTY: u64 = 0;

struct Entry {
    id: AtomicU64,
    metadata: AtomicPtr<Metadata<'static>>,
}

/// The table. See the module documentation.
pub(crate) struct Spans {
    entries: Box<[Entry]>,
}

impl Spans {
    pub fn new() -> Self {
        Spans {
            entries: (0..ENTRIES)
                .map(|_| Entry {
                    id: AtomicU64::new(EMPTY),
                    metadata: AtomicPtr::new(std::ptr::null_mut()),
                })
                .collect(),
        }
    }

    fn entry(&self, id: u64) -> &Entry {
        let hash = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52;
        &self.entries[hash as usize % ENTRIES]
    }

    /// Remembers a new span's metadata (unless another writer holds its entry).
    pub fn insert(&self, id: &Id, metadata: &'static Metadata<'static>) {
        let entry = self.entry(id.into_u64());
        let current = entry.id.load(Ordering::Relaxed);
        if current == BUSY
            || entry
                .id
                .compare_exchange(current, BUSY, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        entry
            .metadata
            .store(metadata as *const _ as *mut _, Ordering::Release);
        entry.id.store(id.into_u64(), Ordering::Release);
    }

    /// The metadata of live span `id`, if its entry still holds it.
    pub fn get(&self, id: &Id) -> Option<&'static Metadata<'static>> {
        let entry = self.entry(id.into_u64());
        if entry.id.load(Ordering::Acquire) != id.into_u64() {
            return None;
        }
        let metadata = entry.metadata.load(Ordering::Acquire);
        std::sync::atomic::fence(Ordering::Acquire);
        if entry.id.load(Ordering::Relaxed) != id.into_u64() {
            return None;
        }
        // SAFETY: only `insert` writes the pointer, from a `&'static Metadata`.
        Some(unsafe { &*metadata })
    }

    /// Forgets a closed span (its id may be given to a new span later).
    pub fn remove(&self, id: &Id) {
        let _ = self.entry(id.into_u64()).id.compare_exchange(
            id.into_u64(),
            EMPTY,
            Ordering::Release,
            Ordering::Relaxed,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_while_live_and_not_after_close_or_eviction() {
        let spans = Spans::new();
        let metadata = tracing::subscriber::with_default(tracing_subscriber::registry(), || {
            tracing::info_span!("span").metadata().unwrap()
        });
        let a = Id::from_u64(7);
        assert!(spans.get(&a).is_none());
        spans.insert(&a, metadata);
        assert!(std::ptr::eq(spans.get(&a).unwrap(), metadata));
        spans.remove(&a);
        assert!(spans.get(&a).is_none());
        // A span that lands on a taken entry takes it; the other is not found.
        spans.insert(&a, metadata);
        let b = (1..u64::MAX)
            .map(Id::from_u64)
            .find(|b| *b != a && std::ptr::eq(spans.entry(b.into_u64()), spans.entry(7)))
            .unwrap();
        spans.insert(&b, metadata);
        assert!(spans.get(&a).is_none());
        assert!(spans.get(&b).is_some());
        // Removing a span that no longer holds the entry leaves it alone.
        spans.remove(&a);
        assert!(spans.get(&b).is_some());
    }
}
