//! What the index keeps per row: lanes of ranges and the marks, as sorted
//! columns in the store, and an event's name and look as one number.

use super::store::{Column, Store};

/// An event's name and look, as indices into [`Index::names`] and
/// [`Index::looks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shown {
    pub(super) name: u32,
    pub(super) look: u32,
}

impl Shown {
    pub(super) fn bits(self) -> u64 {
        u64::from(self.name) << 32 | u64::from(self.look)
    }

    pub(super) fn from_bits(bits: u64) -> Shown {
        Shown {
            name: (bits >> 32) as u32,
            look: bits as u32,
        }
    }
}

/// A nesting level's ranges, sorted by start (and, as they never
/// overlap, by end) once its row is complete.
#[derive(Default)]
pub(super) struct Lane {
    pub(super) start: Column,
    pub(super) end: Column,
    /// [`Shown::bits`].
    pub(super) shown: Column,
    /// A GPU stream's lanes: each activity's launch, its thread (0: none)
    /// and start, where its flow starts; empty on other rows.
    pub(super) launch_tid: Column,
    pub(super) launch_at: Column,
    pub(super) order: Order,
}

impl Lane {
    pub(super) fn push(
        &mut self,
        store: &mut Store,
        start: u64,
        end: u64,
        shown: Shown,
    ) -> std::io::Result<()> {
        self.order.note(start);
        store.push(&mut self.start, start)?;
        store.push(&mut self.end, end)?;
        store.push(&mut self.shown, shown.bits())
    }

    /// [`Lane::push`] for a GPU activity, with its launch's thread and time.
    pub(super) fn push_launched(
        &mut self,
        store: &mut Store,
        (start, end): (u64, u64),
        shown: Shown,
        launch: Option<(u32, u64)>,
    ) -> std::io::Result<()> {
        self.push(store, start, end, shown)?;
        let (tid, at) = launch.unwrap_or((0, 0));
        store.push(&mut self.launch_tid, tid.into())?;
        store.push(&mut self.launch_at, at)
    }

    /// Whether its events have their launches ([`Lane::push_launched`]).
    pub(super) fn launched(&self) -> bool {
        self.launch_tid.len() > 0
    }

    /// Sorted by start (if they came out of order) and written out.
    pub(super) fn complete(&mut self, store: &mut Store) -> std::io::Result<()> {
        let launched = self.launched();
        let mut columns = vec![&mut self.start, &mut self.end, &mut self.shown];
        if launched {
            columns.extend([&mut self.launch_tid, &mut self.launch_at]);
        }
        complete(store, self.order.unsorted, &mut columns)
    }
}

/// Whether the values pushed one after another came in order.
#[derive(Default)]
pub(super) struct Order {
    pub(super) last: Option<u64>,
    pub(super) unsorted: bool,
}

impl Order {
    pub(super) fn note(&mut self, v: u64) {
        self.unsorted |= self.last.is_some_and(|last| last > v);
        self.last = Some(v);
    }
}

/// A row's marks, sorted by time once its row is complete.
#[derive(Default)]
pub(super) struct Marks {
    pub(super) time: Column,
    /// [`Shown::bits`].
    pub(super) shown: Column,
    pub(super) order: Order,
}

impl Marks {
    pub(super) fn push(
        &mut self,
        store: &mut Store,
        time: u64,
        shown: Shown,
    ) -> std::io::Result<()> {
        self.order.note(time);
        store.push(&mut self.time, time)?;
        store.push(&mut self.shown, shown.bits())
    }

    /// Sorted by time (if they came out of order) and written out.
    pub(super) fn complete(&mut self, store: &mut Store) -> std::io::Result<()> {
        let columns = &mut [&mut self.time, &mut self.shown];
        complete(store, self.order.unsorted, columns)
    }
}

/// Puts `columns` in the order of the first one's values, if they came out
/// of order (rare: held in memory to be sorted, then written as new
/// columns), and writes them out.
pub(super) fn complete(
    store: &mut Store,
    unsorted: bool,
    columns: &mut [&mut Column],
) -> std::io::Result<()> {
    if unsorted {
        let keys = store.read_all(columns[0])?;
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by_key(|&i| keys[i]);
        for column in columns.iter_mut() {
            let values = store.read_all(column)?;
            let mut sorted = Column::default();
            for &i in &order {
                store.push(&mut sorted, values[i])?;
            }
            **column = sorted;
        }
    }
    for column in columns.iter_mut() {
        store.seal(column)?;
    }
    Ok(())
}
