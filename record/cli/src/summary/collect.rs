//! The summary's statistics, exact at any size in bounded memory: the
//! ranges' durations by (style, domain, name) in [`Groups`], the rows
//! from them in [`Rows`], both past their budgets in sorted runs on disk.

use super::groups::{Groups, Key, KeyRef};
use super::names::Grouping;
use super::rows::Rows;
use crate::model::{Mark, Process, Range, Sink, Style};
use std::collections::BTreeMap;

/// What a replay leaves for the summary and the legend: the ranges' groups
/// (how `nvtx_sum` tells ranges apart: style, domain and name) and the
/// marks' names with their first color (at most [`Collector::MARK_NAMES`]).
#[derive(Default)]
pub struct Collector {
    groups: Groups,
    /// Every duration's sum: the base of the time percentages.
    grand: u64,
    pub marks: BTreeMap<String, Option<u32>>,
    /// Bytes past which groups go to a run (the defaults if 0): the
    /// groups' budget, and half of it the rows'.
    budget: usize,
    /// How ranges' names make their groups (see `names`).
    grouping: Grouping,
    /// The GPU tables' figures.
    pub gpu: super::GpuSummary,
}

impl Sink for Collector {
    fn gpu(&mut self, _: &Process, g: &crate::model::GpuEvent) -> std::io::Result<()> {
        self.gpu.activity(g, &self.grouping)
    }

    fn range(&mut self, _: &Process, r: &Range) -> std::io::Result<()> {
        let d = &r.details;
        let duration = r.end - r.start;
        self.grand = self.grand.saturating_add(duration);
        let grouped = self.grouping.name(&d.name, d.fields.as_deref());
        if let Some(p) = &d.gpu {
            self.gpu.range(r, p, &grouped);
        }
        let key = KeyRef(r.style as u8, &d.domain, &grouped);
        self.groups.push(key, duration, d.color)
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

    /// Marks' names kept for the legend.
    pub const MARK_NAMES: usize = 500_000;

    /// One row per (style, domain, name), largest total first; only the
    /// first `keep` of them when that is all that is wanted (the terminal's
    /// table), though [`Rows::len`] counts every one.
    pub fn rows(self, keep: Option<usize>) -> std::io::Result<Rows> {
        let mut rows = Rows::collect(self.budget / 2, keep);
        let grand = self.grand;
        self.groups.each(|key: Key, color, stats| {
            let style = if key.kind == Style::PushPop as u8 {
                Style::PushPop
            } else {
                Style::StartEnd
            };
            rows.offer(stats.total, || {
                let range = format!("{}:{}", key.first, key.second);
                stats.row(style, range, color, grand)
            })
        })?;
        rows.finish()
    }
}

#[cfg(test)]
impl Collector {
    /// Exact names (many groups), past `budget` bytes to runs.
    fn with_budget(budget: usize) -> Collector {
        Collector {
            groups: Groups::with_budget(budget),
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
            let spilled = c.groups.spilled();
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
