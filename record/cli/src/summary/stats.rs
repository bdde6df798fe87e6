//! A group's figures from its durations in ascending order (count, total,
//! minimum, maximum, exact median, mean and standard deviation by
//! Welford's method), streamed: nothing but the two middle durations kept.

use super::Row;
use crate::model::Style;

/// A group's statistics from its durations in ascending order.
pub(super) struct Stats {
    /// The sum of the durations seen.
    pub(super) total: u64,
    n: u64,
    seen: u64,
    min: u64,
    max: u64,
    /// Welford's running mean and sum of squared deviations.
    mean: f64,
    m2: f64,
    /// The one or two middle durations.
    middle: [u64; 2],
}

impl Stats {
    pub(super) fn new(n: u64) -> Stats {
        Stats {
            n,
            seen: 0,
            total: 0,
            min: u64::MAX,
            max: 0,
            mean: 0.0,
            m2: 0.0,
            middle: [0; 2],
        }
    }

    pub(super) fn push(&mut self, d: u64) {
        let i = self.seen;
        self.seen += 1;
        self.total = self.total.saturating_add(d);
        self.min = self.min.min(d);
        self.max = self.max.max(d);
        let x = d as f64;
        let delta = x - self.mean;
        self.mean += delta / self.seen as f64;
        self.m2 += delta * (x - self.mean);
        if i == (self.n - 1) / 2 {
            self.middle[0] = d;
        }
        if i == self.n / 2 {
            self.middle[1] = d;
        }
    }

    /// The group's row: `range` its `domain:name`; `grand` the time of
    /// every group, for its share.
    pub(super) fn row(&self, style: Style, range: String, color: Option<u32>, grand: u64) -> Row {
        let n = self.n.max(1);
        Row {
            time_percent: if grand > 0 {
                100.0 * self.total as f64 / grand as f64
            } else {
                0.0
            },
            total: self.total,
            instances: self.n as usize,
            avg: self.total as f64 / n as f64,
            median: (self.middle[0] as f64 + self.middle[1] as f64) / 2.0,
            min: self.min,
            max: self.max,
            stddev: if self.n > 1 {
                (self.m2 / (self.n - 1) as f64).sqrt()
            } else {
                0.0
            },
            style,
            range,
            color,
        }
    }
}
