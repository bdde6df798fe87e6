//! The summary's statistics, exact at any size in bounded memory.
//!
//! [`Collector`] keeps each (style, domain, name) group's durations (8
//! bytes each, so the median is exact). Past [`Collector::BUDGET`] bytes it
//! sorts what it holds and writes it out as a run (see `runs`), then starts
//! again; at the end the runs are merged group by group, each group's
//! durations streamed in order from every run, so no group (not even one
//! with 10^8 instances) is ever held whole. The rows are kept the same way:
//! sorted runs past [`Rows::BUDGET`], merged as they are read.

use super::names::Grouping;
use super::rows::Rows;
use super::runs::{RunReader, RunWriter};
use super::stats::Stats;
use crate::model::{Mark, Process, Range, Sink, Style};
use hashbrown::{DefaultHashBuilder, HashTable};
use smallvec::SmallVec;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;
use std::hash::BuildHasher;

/// A group: how `nvtx_sum` tells ranges apart.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    style: Style,
    domain: Box<str>,
    name: Box<str>,
}

impl Key {
    /// Its row's `domain:name`.
    fn range(&self) -> String {
        format!("{}:{}", self.domain, self.name)
    }
}

/// A [`Key`] borrowed from a range: looked up without allocating.
#[derive(Hash)]
struct KeyRef<'a>(Style, &'a str, &'a str);

impl KeyRef<'_> {
    fn is(&self, k: &Key) -> bool {
        self.0 == k.style && self.1 == &*k.domain && self.2 == &*k.name
    }
}

#[derive(Default)]
struct Group {
    /// Its key's hash (the collector's `hasher`): runs are sorted by it,
    /// then by the key.
    hash: u64,
    /// Inline while there is one (most names in a trace of distinct
    /// names, "step 1", "step 2"...: no allocation for those).
    durations: SmallVec<[u64; 1]>,
    /// The first color its ranges had.
    color: Option<u32>,
}

/// What a replay leaves for the summary and the legend: the ranges' groups
/// (see the module's comment) and the marks' names with their first color
/// (at most [`Collector::MARK_NAMES`]).
#[derive(Default)]
pub struct Collector {
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
    /// Every duration's sum: the base of the time percentages.
    grand: u64,
    pub marks: BTreeMap<String, Option<u32>>,
    /// Bytes past which groups go to a run ([`Collector::BUDGET`] if 0).
    budget: usize,
    /// How ranges' names make their groups (see `names`).
    grouping: Grouping,
    /// The GPU tables' figures.
    pub gpu: super::GpuSummary,
}

impl Sink for Collector {
    fn gpu(&mut self, _: &Process, g: &crate::model::GpuEvent) -> std::io::Result<()> {
        self.gpu.activity(g, &self.grouping);
        Ok(())
    }

    fn range(&mut self, _: &Process, r: &Range) -> std::io::Result<()> {
        let d = &r.details;
        let duration = r.end - r.start;
        self.grand = self.grand.saturating_add(duration);
        let grouped = self.grouping.name(&d.name, d.fields.as_deref());
        let name: &str = &grouped;
        if let Some(p) = &d.gpu {
            self.gpu.range(r, p, name);
        }
        let key = KeyRef(r.style, &d.domain, name);
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
                self.bytes += d.domain.len() + name.len() + Self::GROUP_BYTES;
                let key = Key {
                    style: r.style,
                    domain: d.domain.as_str().into(),
                    name: name.into(),
                };
                let i = self.entries.len();
                self.entries.push((
                    key,
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
        group.color = group.color.or(d.color);
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

    fn mark(&mut self, _: &Process, m: &Mark) -> std::io::Result<()> {
        if self.marks.len() < Self::MARK_NAMES || self.marks.contains_key(m.details.name.as_str()) {
            self.marks
                .entry(m.details.name.to_string())
                .or_insert(m.details.color);
        }
        Ok(())
    }
}

impl Collector {
    /// A collector grouping ranges as `grouping` says.
    pub fn grouped(grouping: Grouping) -> Collector {
        Collector {
            grouping,
            ..Collector::default()
        }
    }

    /// Bytes of groups held before they go to a run.
    pub const BUDGET: usize = 64 << 20;
    /// A group's bytes in memory besides its names and durations, about.
    const GROUP_BYTES: usize = 96;
    /// Groups past which the table makes room for the budget's worth.
    const MANY: usize = 1 << 16;
    /// Marks' names kept for the legend.
    pub const MARK_NAMES: usize = 500_000;

    fn budget(&self) -> usize {
        if self.budget == 0 {
            Self::BUDGET
        } else {
            self.budget
        }
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
            run.u8(key.style as u8)?;
            run.text(&key.domain)?;
            run.text(&key.name)?;
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

    /// One row per (style, domain, name), largest total first; only the
    /// first `keep` of them when that is all that is wanted (the terminal's
    /// table), though [`Rows::len`] counts every one.
    pub fn rows(mut self, keep: Option<usize>) -> std::io::Result<Rows> {
        let mut rows = Rows::collect(self.budget / 2, keep);
        if self.runs.is_empty() {
            for (key, mut group) in std::mem::take(&mut self.entries) {
                group.durations.sort_unstable();
                let mut stats = Stats::new(group.durations.len() as u64);
                group.durations.iter().for_each(|&d| stats.push(d));
                rows.offer(stats.total, || {
                    stats.row(key.style, key.range(), group.color, self.grand)
                })?;
            }
            return rows.finish();
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
        while let Some(Reverse((key, first))) = next.pop() {
            parts.clear();
            parts.push(first);
            while next.peek().is_some_and(|Reverse((k, _))| *k == key) {
                parts.push(next.pop().expect("peeked").0 .1);
            }
            parts.sort_unstable();
            // The earliest run's color: the first in replay order.
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
            rows.offer(stats.total, || {
                stats.row(key.1.style, key.1.range(), color, self.grand)
            })?;
            for &i in &parts {
                if let Some(head) = group_head(&mut readers[i])? {
                    heads[i] = (head.color, head.count);
                    next.push(Reverse((head.order, i)));
                }
            }
        }
        rows.finish()
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
    let style = match r.u8()? {
        0 => Style::PushPop,
        _ => Style::StartEnd,
    };
    let key = Key {
        style,
        domain: r.text()?.into(),
        name: r.text()?.into(),
    };
    Ok(Some(Head {
        order: (hash, key),
        color: r.color()?,
        count: r.u64()?,
    }))
}

#[cfg(test)]
impl Collector {
    /// Exact names (many groups), past `budget` bytes to runs.
    fn with_budget(budget: usize) -> Collector {
        Collector {
            budget,
            grouping: Grouping::Exact,
            ..Collector::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Details;
    use crate::summary::Row;

    fn range(name: &str, style: Style, duration: u64, color: Option<u32>) -> Range {
        Range {
            details: Details {
                name: name.into(),
                domain: if name.len() % 3 == 0 {
                    "d".into()
                } else {
                    Default::default()
                },
                color,
                category: None,
                payload: None,
                fields: None,
                gpu: None,
            },
            style,
            start: 1000,
            end: 1000 + duration,
            depth: 0,
            tid: 1,
            end_tid: 1,
            id: 0,
            unterminated: false,
        }
    }

    #[test]
    fn spilled_runs_give_the_same_rows_as_memory() {
        // Many names, a few of them very common, durations in no order.
        let mut x: u64 = 12345;
        let mut ranges = Vec::new();
        for i in 0..40_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let name = match x % 4 {
                0 => "inner".to_string(),
                1 => format!("step {}", i / 3),
                _ => format!("n{}", x % 97),
            };
            let style = if x % 11 == 0 {
                Style::StartEnd
            } else {
                Style::PushPop
            };
            let color = (i % 1000 == 7).then_some(i as u32);
            ranges.push(range(&name, style, (x >> 20) % 100_000, color));
        }
        let process = Process::default();
        let all = |mut c: Collector, keep: Option<usize>| {
            for r in &ranges {
                c.range(&process, r).unwrap();
            }
            let spilled = c.runs.len();
            let rows = c.rows(keep).unwrap();
            let count = rows.len();
            (
                spilled,
                rows.iter().map(Result::unwrap).collect::<Vec<_>>(),
                count,
            )
        };
        let (none, memory, count) = all(Collector::with_budget(0), None);
        let (spilled, disk, _) = all(Collector::with_budget(64 << 10), None);
        assert_eq!(count, memory.len());
        // Only the first rows kept: the same first rows, every row counted.
        for (budget, keep) in [(0, 100), (64 << 10, 2500), (64 << 10, 1)] {
            let (_, first, counted) = all(Collector::with_budget(budget), Some(keep));
            assert_eq!((first.len(), counted), (keep, memory.len()));
            let names = |rows: &[Row]| rows.iter().map(|r| r.range.clone()).collect::<Vec<_>>();
            assert_eq!(names(&first), names(&memory[..keep]));
        }
        assert_eq!(none, 0);
        assert!(spilled > 5, "{spilled} runs");
        assert_eq!(memory.len(), disk.len());
        for (m, d) in memory.iter().zip(&disk) {
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
            assert_eq!(
                (
                    &m.range,
                    m.style,
                    m.total,
                    m.instances,
                    m.min,
                    m.max,
                    m.median,
                    m.color
                ),
                (
                    &d.range,
                    d.style,
                    d.total,
                    d.instances,
                    d.min,
                    d.max,
                    d.median,
                    d.color
                )
            );
            assert!(
                close(m.stddev, d.stddev) && close(m.avg, d.avg),
                "{m:?} {d:?}"
            );
        }
        // Sorted by total, largest first.
        assert!(memory.windows(2).all(|w| w[0].total >= w[1].total));
    }
}
