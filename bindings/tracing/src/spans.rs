//! Live spans by id: their metadata and registered name, so that entering
//! a span (each poll of an instrumented future) needs no registry lookup
//! and no name lookup, and their life's start/end range, so that a span's
//! creation and close need no registry lookup or allocation either.
//!
//! A direct-mapped table of `(id, metadata, name, range)` entries. A new
//! span claims an empty entry by swapping its id for [`BUSY`], writes the
//! rest, then publishes its id; a reader takes the metadata and name only
//! if it read the same id before and after them (a seqlock). An entry is
//! never taken from a live span (its range would be lost): a span whose
//! entry is taken is not in the table, and the caller keeps it in the
//! registry instead. Ids are unique for as long as a span lives, so an
//! entry never answers for another span.

use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use tracing::span::Id;
use tracing::Metadata;

/// Entries in the table (a power of two).
const ENTRIES: usize = 4096;
/// An entry being written. Span ids are non-zero and never this large.
const BUSY: u64 = u64::MAX;
/// An empty entry.
const EMPTY: u64 = 0;
/// A span whose name is not registered.
const NO_NAME: usize = usize::MAX;

struct Entry {
    id: AtomicU64,
    metadata: AtomicPtr<Metadata<'static>>,
    /// The layer's slot holding the span's registered name, or [`NO_NAME`].
    name: AtomicUsize,
    /// The id of the span's life's start/end range.
    range: AtomicU64,
}

/// What the table knows of a live span.
#[derive(Clone, Copy)]
pub struct Span {
    pub metadata: &'static Metadata<'static>,
    /// The layer's slot holding its registered name, if it has one.
    pub name: Option<usize>,
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
                    name: AtomicUsize::new(NO_NAME),
                    range: AtomicU64::new(0),
                })
                .collect(),
        }
    }

    fn entry(&self, id: u64) -> &Entry {
        let hash = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52;
        &self.entries[hash as usize % ENTRIES]
    }

    /// Remembers a new span and its life's range; `false` when its entry
    /// is taken (by a live span, or a writer right now).
    pub fn insert(&self, id: &Id, span: Span, range: u64) -> bool {
        let entry = self.entry(id.into_u64());
        if entry
            .id
            .compare_exchange(EMPTY, BUSY, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        entry
            .metadata
            .store(span.metadata as *const _ as *mut _, Ordering::Release);
        entry
            .name
            .store(span.name.unwrap_or(NO_NAME), Ordering::Release);
        entry.range.store(range, Ordering::Relaxed);
        entry.id.store(id.into_u64(), Ordering::Release);
        true
    }

    /// Live span `id`, if its entry still holds it.
    pub fn get(&self, id: &Id) -> Option<Span> {
        let entry = self.entry(id.into_u64());
        if entry.id.load(Ordering::Acquire) != id.into_u64() {
            return None;
        }
        let metadata = entry.metadata.load(Ordering::Acquire);
        let name = entry.name.load(Ordering::Acquire);
        std::sync::atomic::fence(Ordering::Acquire);
        if entry.id.load(Ordering::Relaxed) != id.into_u64() {
            return None;
        }
        Some(Span {
            // SAFETY: only `insert` writes the pointer, from a `&'static Metadata`.
            metadata: unsafe { &*metadata },
            name: (name != NO_NAME).then_some(name),
        })
    }

    /// Forgets a closed span (its id may be given to a new span later);
    /// returns its life's range, if the table held it.
    pub fn remove(&self, id: &Id) -> Option<u64> {
        let entry = self.entry(id.into_u64());
        entry
            .id
            .compare_exchange(id.into_u64(), BUSY, Ordering::Acquire, Ordering::Relaxed)
            .ok()?;
        let range = entry.range.load(Ordering::Relaxed);
        entry.id.store(EMPTY, Ordering::Release);
        Some(range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_while_live_never_taken_from_a_live_span_and_gone_after_close() {
        let spans = Spans::new();
        let metadata = tracing::subscriber::with_default(tracing_subscriber::registry(), || {
            tracing::info_span!("span").metadata().unwrap()
        });
        let span = Span {
            metadata,
            name: Some(3),
        };
        let a = Id::from_u64(7);
        assert!(spans.get(&a).is_none());
        assert!(spans.insert(&a, span, 41));
        let found = spans.get(&a).unwrap();
        assert!(std::ptr::eq(found.metadata, metadata));
        assert_eq!(found.name, Some(3));
        assert_eq!(spans.remove(&a), Some(41));
        assert!(spans.get(&a).is_none());
        assert_eq!(spans.remove(&a), None);
        // A span whose entry a live span holds is not taken in.
        assert!(spans.insert(&a, span, 42));
        let b = (1..u64::MAX)
            .map(Id::from_u64)
            .find(|b| *b != a && std::ptr::eq(spans.entry(b.into_u64()), spans.entry(7)))
            .unwrap();
        assert!(!spans.insert(
            &b,
            Span {
                metadata,
                name: None
            },
            43
        ));
        assert!(spans.get(&b).is_none());
        assert_eq!(spans.remove(&b), None);
        assert_eq!(spans.get(&a).unwrap().name, Some(3));
        // Once the first closes, the entry is free again.
        assert_eq!(spans.remove(&a), Some(42));
        assert!(spans.insert(
            &b,
            Span {
                metadata,
                name: None
            },
            43
        ));
        assert_eq!(spans.get(&b).unwrap().name, None);
        assert_eq!(spans.remove(&b), Some(43));
    }
}
