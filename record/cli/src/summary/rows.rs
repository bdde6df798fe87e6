//! The summary's rows, kept in bounded memory: held, or past
//! [`Rows::BUDGET`] in sorted runs merged as they are read.

use super::runs::{RunReader, RunWriter};
use super::Row;
use crate::model::Style;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;

/// The summary's rows, largest total first (then by range and style):
/// held, or in sorted runs merged as they are read.
pub struct Rows {
    /// Every row, held, in a run or left out past `keep`.
    count: usize,
    /// Only the first rows wanted: no more are held, none go to runs.
    keep: Option<usize>,
    /// With `keep`, once that many are held: the least total among them.
    floor: Option<u64>,
    held: Vec<Row>,
    runs: Vec<File>,
    bytes: usize,
    budget: usize,
}

/// The rows' order.
fn order(a: &Row, b: &Row) -> Ordering {
    b.total
        .cmp(&a.total)
        .then_with(|| a.range.cmp(&b.range))
        .then_with(|| a.style.cmp(&b.style))
}

/// A row from run `run`, ordered for a min-heap merge.
struct Pending(Row, usize);

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> Ordering {
        order(&other.0, &self.0).then_with(|| other.1.cmp(&self.1))
    }
}

impl Rows {
    /// Bytes of rows held before they go to a run.
    pub const BUDGET: usize = 32 << 20;

    pub(super) fn collect(budget: usize, keep: Option<usize>) -> Rows {
        Rows {
            count: 0,
            keep,
            floor: None,
            held: Vec::new(),
            runs: Vec::new(),
            bytes: 0,
            budget: if budget == 0 { Self::BUDGET } else { budget },
        }
    }

    /// A row of `total`, made by `row` unless it cannot be among the
    /// first `keep` (a total below the least of those kept so far).
    pub(super) fn offer(&mut self, total: u64, row: impl FnOnce() -> Row) -> std::io::Result<()> {
        self.count += 1;
        if let Some(keep) = self.keep {
            if self.floor.is_some_and(|floor| total < floor) {
                return Ok(());
            }
            self.held.push(row());
            // The first `keep`, from time to time.
            if self.held.len() >= 2 * keep.max(1024) {
                self.held.sort_unstable_by(order);
                self.held.truncate(keep);
                self.floor = self.held.last().map(|r| r.total);
            }
            return Ok(());
        }
        self.held.push(row());
        self.bytes += self.held.last().map_or(0, |r| r.range.len()) + 160;
        if self.bytes > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> std::io::Result<()> {
        self.held.sort_unstable_by(order);
        let mut run = RunWriter::new()?;
        for r in self.held.drain(..) {
            for v in [r.total, r.instances as u64, r.min, r.max] {
                run.u64(v)?;
            }
            for v in [r.time_percent, r.avg, r.median, r.stddev] {
                run.f64(v)?;
            }
            run.u8(r.style as u8)?;
            run.color(r.color)?;
            run.text(&r.range)?;
        }
        self.runs.push(run.finish()?);
        self.bytes = 0;
        Ok(())
    }

    pub(super) fn finish(mut self) -> std::io::Result<Rows> {
        if self.runs.is_empty() {
            self.held.sort_unstable_by(order);
            self.held.truncate(self.keep.unwrap_or(usize::MAX));
        } else if !self.held.is_empty() {
            self.spill()?;
        }
        Ok(self)
    }

    /// The rows in order.
    pub fn iter(&self) -> RowIter<'_> {
        let mut readers: Vec<RunReader> = self.runs.iter().map(RunReader::new).collect();
        let mut next = BinaryHeap::new();
        let mut error = None;
        for (i, r) in readers.iter_mut().enumerate() {
            match read_row(r) {
                Ok(Some(row)) => next.push(Pending(row, i)),
                Ok(None) => {}
                Err(e) => error = Some(e),
            }
        }
        RowIter {
            held: self.held.iter(),
            readers,
            next,
            error,
        }
    }

    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.count
    }

    /// The first `n` rows.
    pub fn top(&self, n: usize) -> std::io::Result<Vec<Row>> {
        self.iter().take(n).collect()
    }
}

fn read_row(r: &mut RunReader) -> std::io::Result<Option<Row>> {
    if r.done()? {
        return Ok(None);
    }
    let (total, instances, min, max) = (r.u64()?, r.u64()? as usize, r.u64()?, r.u64()?);
    let (time_percent, avg, median, stddev) = (r.f64()?, r.f64()?, r.f64()?, r.f64()?);
    let style = match r.u8()? {
        0 => Style::PushPop,
        _ => Style::StartEnd,
    };
    Ok(Some(Row {
        time_percent,
        total,
        instances,
        avg,
        median,
        min,
        max,
        stddev,
        style,
        color: r.color()?,
        range: r.text()?,
    }))
}

/// The rows of [`Rows::iter`]: an error reading a run back ends them.
pub struct RowIter<'a> {
    held: std::slice::Iter<'a, Row>,
    readers: Vec<RunReader<'a>>,
    next: BinaryHeap<Pending>,
    error: Option<std::io::Error>,
}

impl Iterator for RowIter<'_> {
    type Item = std::io::Result<Row>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.error.take() {
            return Some(Err(e));
        }
        if self.readers.is_empty() {
            return self.held.next().cloned().map(Ok);
        }
        let Pending(row, i) = self.next.pop()?;
        match read_row(&mut self.readers[i]) {
            Ok(Some(r)) => self.next.push(Pending(r, i)),
            Ok(None) => {}
            Err(e) => self.error = Some(e),
        }
        Some(Ok(row))
    }
}
