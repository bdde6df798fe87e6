//! The HTML timeline's overview, for recordings past [`DETAILED`] events:
//! each thread's first [`OVERVIEW_DEPTHS`] nesting levels in [`BINS`] time
//! bins, a bar per run of bins that one name dominates.

use super::{Item, Page};
use crate::model::{css_color, Details};
use hashbrown::HashMap;

/// Events past which the page is an overview.
pub const DETAILED: u64 = 500_000;
/// Nesting levels an overview draws.
pub const OVERVIEW_DEPTHS: usize = 4;
/// Time bins across an overview.
pub const BINS: usize = 4000;

/// One bin of one level: how much of it each name covers (the few largest).
#[derive(Default, Clone)]
struct Bin {
    ranges: u64,
    names: Vec<(String, u64, Option<u32>)>,
}

impl Bin {
    /// Names kept per bin; past them the smallest share is dropped.
    const NAMES: usize = 8;

    fn add(&mut self, d: &Details, covered: u64) {
        self.ranges += 1;
        match self.names.iter_mut().find(|(n, _, _)| *n == d.name) {
            Some(entry) => entry.1 += covered,
            None => {
                self.names.push((d.name.to_string(), covered, d.color));
                if self.names.len() > Self::NAMES {
                    let smallest = (0..self.names.len())
                        .min_by_key(|&i| self.names[i].1)
                        .expect("not empty");
                    self.names.swap_remove(smallest);
                }
            }
        }
    }

    fn dominant(&self) -> Option<&(String, u64, Option<u32>)> {
        self.names.iter().max_by_key(|(_, t, _)| *t)
    }
}

/// A run of bins one name dominates, on one level.
pub(super) struct Bar {
    name: String,
    color: Option<u32>,
    start: u64,
    end: u64,
    depth: usize,
    ranges: u64,
    share: f64,
}

/// The current thread's bins.
pub(super) struct Overview {
    width: u64,
    pub(super) events: u64,
    levels: Vec<Vec<Bin>>,
    /// Names drawn so far, with their color and how many bars they got.
    pub(super) drawn: HashMap<String, (Option<u32>, u64)>,
}

/// What an overview keeps of the legend and the summary table.
pub(super) const OVERVIEW_LEGEND: usize = 500;
pub(super) const OVERVIEW_SUMMARY: usize = 1000;

impl Overview {
    pub(super) fn new(span: u64, events: u64) -> Overview {
        Overview {
            width: span.div_ceil(BINS as u64).max(1),
            events,
            levels: vec![vec![Bin::default(); BINS]; OVERVIEW_DEPTHS],
            drawn: HashMap::new(),
        }
    }

    /// An overview of one level (a GPU stream's), with `o`'s bins.
    pub(super) fn like(o: &Overview) -> Overview {
        Overview {
            width: o.width,
            events: 0,
            levels: vec![vec![Bin::default(); BINS]],
            drawn: HashMap::new(),
        }
    }

    /// Adds a range (or GPU activity) at `depth`, from `start` to `end`
    /// (ns from the page's origin).
    pub(super) fn add(&mut self, depth: usize, (start, end): (u64, u64), d: &Details) {
        let Some(level) = self.levels.get_mut(depth) else {
            return;
        };
        let first = (start / self.width) as usize;
        let last = ((end / self.width) as usize).min(BINS - 1);
        for (b, bin) in level.iter_mut().enumerate().take(last + 1).skip(first) {
            let (from, to) = (b as u64 * self.width, (b as u64 + 1) * self.width);
            bin.add(d, end.min(to) - start.max(from));
        }
    }

    /// The thread's bars, its bins emptied for the next thread.
    pub(super) fn drain(&mut self) -> Vec<Bar> {
        let mut bars: Vec<Bar> = Vec::new();
        for (depth, level) in self.levels.iter_mut().enumerate() {
            for (b, bin) in level.iter_mut().enumerate() {
                let bin = std::mem::take(bin);
                let Some((name, covered, color)) = bin.dominant() else {
                    continue;
                };
                let start = b as u64 * self.width;
                let share = *covered as f64 / self.width as f64;
                self.drawn.entry(name.clone()).or_insert((*color, 0)).1 += 1;
                match bars.last_mut() {
                    Some(bar) if bar.depth == depth && bar.end == start && bar.name == *name => {
                        bar.end = start + self.width;
                        bar.ranges += bin.ranges;
                    }
                    _ => bars.push(Bar {
                        name: name.clone(),
                        color: *color,
                        start,
                        end: start + self.width,
                        depth,
                        ranges: bin.ranges,
                        share,
                    }),
                }
            }
        }
        bars
    }
}

impl Page<'_> {
    /// Writes an overview bar.
    pub(super) fn bar(&mut self, bar: &Bar) -> std::io::Result<()> {
        self.write_item(&Item {
            n: &bar.name,
            i: format!(
                "{}\n{} ranges at level {} here (an overview); {} covers {:.0}% of its first bin",
                bar.name,
                bar.ranges,
                bar.depth,
                bar.name,
                100.0 * bar.share.min(1.0)
            ),
            c: bar.color.map(css_color),
            s: Some(bar.start),
            e: Some(bar.end),
            d: Some(bar.depth),
            ..Item::default()
        })
    }
}
