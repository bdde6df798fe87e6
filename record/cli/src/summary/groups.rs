//! Durations by group, exact at any size in bounded memory: the store
//! under the NVTX table (a group per style, domain and name) and the GPU
//! tables (a group per kernel, and per range and kernel).
//!
//! [`Groups`] keeps each group's durations (8 bytes each, so the median is
//! exact). Past its budget it sorts what it holds and writes it out as a
//! run (see `runs`), then starts again; at the end the runs are merged
//! group by group, each group's durations streamed in order from every
//! run, so no group (not even one with 10^8 instances) is ever held whole.

use super::runs::{RunReader, RunWriter};
use super::stats::Stats;
use hashbrown::{DefaultHashBuilder, HashTable};
use smallvec::SmallVec;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::hash::BuildHasher;

/// A group: a kind (which table, or which style) and two names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub kind: u8,
    pub first: Box<str>,
    pub second: Box<str>,
}

/// A [`Key`] borrowed: looked up without allocating.
#[derive(Hash)]
pub struct KeyRef<'a>(pub u8, pub &'a str, pub &'a str);

impl KeyRef<'_> {
    fn is(&self, k: &Key) -> bool {
        self.0 == k.kind && self.1 == &*k.first && self.2 == &*k.second
    }
}

#[derive(Default)]
struct Group {
    /// Its key's hash (the store's `hasher`): runs are sorted by it, then
    /// by the key.
    hash: u64,
    /// Inline while there is one (most names in a trace of distinct
    /// names, "step 1", "step 2"...: no allocation for those).
    durations: SmallVec<[u64; 1]>,
    /// The first color given with its durations.
    color: Option<u32>,
}

/// Durations by group, held or in sorted runs (see the module's comment).
#[derive(Default)]
pub struct Groups {
    /// The groups held: `entries`' indices by their hash. (Indices keep
    /// the table small; both are cleared, not freed, by a spill, so the
    /// memory is made once: new memory is slow to fault in.)
    table: HashTable<u32>,
    entries: Vec<(Key, Group)>,
    /// A spill's order of `entries` (hash, index), kept between spills.
    order: Vec<(u64, u32)>,
    /// The same in every run of one process.
    hasher: DefaultHashBuilder,
    /// The groups' bytes in memory, about.
    bytes: usize,
    runs: Vec<File>,
    /// Bytes past which groups go to a run ([`Groups::BUDGET`] if 0).
    budget: usize,
}

impl Groups {
    /// Bytes of groups held before they go to a run.
    pub const BUDGET: usize = 64 << 20;
    /// A group's bytes in memory besides its names and durations, about.
    const GROUP_BYTES: usize = 96;
    /// Groups past which the table makes room for the budget's worth.
    const MANY: usize = 1 << 16;

    /// Groups that go to runs past `budget` bytes ([`Groups::BUDGET`] if 0).
    #[cfg(test)]
    pub fn with_budget(budget: usize) -> Groups {
        Groups {
            budget,
            ..Groups::default()
        }
    }

    fn budget(&self) -> usize {
        if self.budget == 0 {
            Self::BUDGET
        } else {
            self.budget
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.runs.is_empty()
    }

    /// The runs written so far.
    #[cfg(test)]
    pub fn spilled(&self) -> usize {
        self.runs.len()
    }

    /// A duration of group `key`; `color` is kept if the group has none yet.
    pub fn push(&mut self, key: KeyRef, duration: u64, color: Option<u32>) -> std::io::Result<()> {
        let hash = self.hasher.hash_one(&key);
        let entries = &self.entries;
        let found = self
            .table
            .find(hash, |&i| key.is(&entries[i as usize].0))
            .copied();
        let at = match found {
            Some(i) => i as usize,
            None => {
                if self.entries.len() == Self::MANY {
                    // A trace of many names ("step N" for every N): room for
                    // as many as the budget holds, at once, rather than
                    // growing by doubling, which moves every group each time.
                    let more = (self.budget() / Self::GROUP_BYTES).saturating_sub(Self::MANY);
                    self.entries.reserve(more);
                    let entries = &self.entries;
                    self.table.reserve(more, |&i| entries[i as usize].1.hash);
                }
                self.bytes += key.1.len() + key.2.len() + Self::GROUP_BYTES;
                let i = self.entries.len();
                self.entries.push((
                    Key {
                        kind: key.0,
                        first: key.1.into(),
                        second: key.2.into(),
                    },
                    Group {
                        hash,
                        ..Group::default()
                    },
                ));
                let entries = &self.entries;
                self.table
                    .insert_unique(hash, i as u32, |&j| entries[j as usize].1.hash);
                i
            }
        };
        let group = &mut self.entries[at].1;
        group.color = group.color.or(color);
        if group.durations.len() == group.durations.capacity() {
            // The push moves them to the heap, or doubles it.
            self.bytes += 8 * group.durations.capacity().max(2);
        }
        group.durations.push(duration);
        if self.bytes > self.budget() {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes the groups held, sorted, as a run: per group its key, color,
    /// count and sorted durations.
    fn spill(&mut self) -> std::io::Result<()> {
        // By hash first: most comparisons never read the names. What is
        // sorted is each group's hash and place, not the groups, which are
        // several times bigger to move.
        let entries = &self.entries;
        self.order.clear();
        self.order.extend(
            entries
                .iter()
                .enumerate()
                .map(|(i, (_, g))| (g.hash, i as u32)),
        );
        self.order.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| entries[a.1 as usize].0.cmp(&entries[b.1 as usize].0))
        });
        let mut run = RunWriter::new()?;
        for &(_, i) in &self.order {
            let (key, group) = &mut self.entries[i as usize];
            group.durations.sort_unstable();
            run.u64(group.hash)?;
            run.u8(key.kind)?;
            run.text(&key.first)?;
            run.text(&key.second)?;
            run.color(group.color)?;
            run.u64(group.durations.len() as u64)?;
            for &d in &group.durations {
                run.u64(d)?;
            }
        }
        self.entries.clear();
        self.table.clear();
        self.runs.push(run.finish()?);
        self.bytes = 0;
        Ok(())
    }

    /// Every group's figures, each group once, in no particular order:
    /// `group(key, its first color, its statistics)`.
    pub fn each(
        mut self,
        mut group: impl FnMut(Key, Option<u32>, Stats) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if self.runs.is_empty() {
            for (key, mut g) in std::mem::take(&mut self.entries) {
                g.durations.sort_unstable();
                let mut stats = Stats::new(g.durations.len() as u64);
                g.durations.iter().for_each(|&d| stats.push(d));
                group(key, g.color, stats)?;
            }
            return Ok(());
        }
        self.spill()?;
        let mut readers: Vec<RunReader> = self.runs.iter().map(RunReader::new).collect();
        // Each run's next group: its key, color and count, in the runs' order.
        let mut next: BinaryHeap<Reverse<((u64, Key), usize)>> = BinaryHeap::new();
        let mut heads: Vec<(Option<u32>, u64)> = vec![(None, 0); readers.len()];
        for (i, reader) in readers.iter_mut().enumerate() {
            if let Some(head) = group_head(reader)? {
                heads[i] = (head.color, head.count);
                next.push(Reverse((head.order, i)));
            }
        }
        // Reused from group to group (most groups, one per distinct name,
        // are in one run only, with one duration).
        let mut parts = Vec::new();
        let mut left: Vec<u64> = Vec::new();
        let mut smallest: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
        while let Some(Reverse(((_, key), first))) = next.pop() {
            parts.clear();
            parts.push(first);
            while next.peek().is_some_and(|Reverse(((_, k), _))| *k == key) {
                parts.push(next.pop().expect("peeked").0 .1);
            }
            parts.sort_unstable();
            // The earliest run's color: the first in the order pushed.
            let color = parts.iter().find_map(|&i| heads[i].0);
            let mut stats = Stats::new(parts.iter().map(|&i| heads[i].1).sum());
            if let [only] = parts[..] {
                // Already in order.
                for _ in 0..heads[only].1 {
                    stats.push(readers[only].u64()?);
                }
            } else {
                // Merges the parts' sorted durations.
                left.clear();
                left.extend(parts.iter().map(|&i| heads[i].1));
                for (p, &i) in parts.iter().enumerate() {
                    if left[p] > 0 {
                        left[p] -= 1;
                        smallest.push(Reverse((readers[i].u64()?, p)));
                    }
                }
                while let Some(Reverse((d, p))) = smallest.pop() {
                    stats.push(d);
                    if left[p] > 0 {
                        left[p] -= 1;
                        smallest.push(Reverse((readers[parts[p]].u64()?, p)));
                    }
                }
            }
            for &i in &parts {
                if let Some(head) = group_head(&mut readers[i])? {
                    heads[i] = (head.color, head.count);
                    next.push(Reverse((head.order, i)));
                }
            }
            group(key, color, stats)?;
        }
        Ok(())
    }
}

/// A group as a run starts it: where it goes in the runs' order (its hash,
/// then its key), its color and its number of durations (which follow).
struct Head {
    order: (u64, Key),
    color: Option<u32>,
    count: u64,
}

/// A run's next group; `None` at its end.
fn group_head(r: &mut RunReader) -> std::io::Result<Option<Head>> {
    if r.done()? {
        return Ok(None);
    }
    let hash = r.u64()?;
    let key = Key {
        kind: r.u8()?,
        first: r.text()?.into(),
        second: r.text()?.into(),
    };
    Ok(Some(Head {
        order: (hash, key),
        color: r.color()?,
        count: r.u64()?,
    }))
}
