//! Timestamps: which clock a recording's readings count, and how they map
//! onto CLOCK_MONOTONIC nanoseconds, the clock every process on a host shares.

/// What event timestamps count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Clock {
    /// Nanoseconds on CLOCK_MONOTONIC.
    Monotonic = 0,
    /// Time-stamp counter ticks.
    Tsc = 1,
}

impl Clock {
    pub fn from_u8(v: u8) -> Option<Clock> {
        match v {
            0 => Some(Clock::Monotonic),
            1 => Some(Clock::Tsc),
            _ => None,
        }
    }
}

/// The clock and its calibration, as stored in each process's header.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub kind: Clock,
    /// Counter ticks per second (1e9 for CLOCK_MONOTONIC).
    pub ticks_per_second: f64,
    /// One reading of both clocks at the same instant.
    pub anchor: Anchor,
}

/// One (counter, CLOCK_MONOTONIC ns) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    pub ticks: u64,
    pub ns: u64,
}

/// Maps recording-clock readings of one process onto CLOCK_MONOTONIC ns.
#[derive(Debug, Clone)]
pub struct Converter {
    kind: Clock,
    ticks_per_ns: f64,
    /// Sorted by ticks.
    anchors: Vec<Anchor>,
}

impl Converter {
    /// From the process's calibration and every anchor found in its streams.
    pub fn new(calibration: &Calibration, mut anchors: Vec<Anchor>) -> Converter {
        anchors.push(calibration.anchor);
        anchors.sort_by_key(|a| a.ticks);
        anchors.dedup_by_key(|a| a.ticks);
        Converter {
            kind: calibration.kind,
            ticks_per_ns: calibration.ticks_per_second / 1e9,
            anchors,
        }
    }

    /// CLOCK_MONOTONIC ns for a reading: interpolated between the anchors
    /// around it, extrapolated at the measured rate beyond the last one.
    pub fn ns(&self, ticks: u64) -> u64 {
        if self.kind == Clock::Monotonic {
            return ticks;
        }
        let i = self.anchors.partition_point(|a| a.ticks <= ticks);
        let (base, rate) = match (i.checked_sub(1), self.anchors.get(i)) {
            (Some(b), Some(next)) => {
                let base = self.anchors[b];
                let rate = (next.ticks - base.ticks) as f64 / (next.ns - base.ns).max(1) as f64;
                (base, rate)
            }
            (Some(b), None) => (self.anchors[b], self.ticks_per_ns),
            (None, _) => (self.anchors[0], self.ticks_per_ns),
        };
        let delta = (ticks as f64 - base.ticks as f64) / rate;
        (base.ns as f64 + delta).max(0.0) as u64
    }
}

/// The anchors of one process image, thinned to at most [`Anchors::MAX`]:
/// one per time bucket, the bucket doubling whenever they would exceed it.
/// Memory stays constant however long the recording (a thread writes an
/// anchor each millisecond it records); the converter interpolates between
/// the anchors kept, whose rate changes (NTP slewing CLOCK_MONOTONIC) are
/// far too slow to matter over a bucket.
#[derive(Debug, Clone)]
pub struct Anchors {
    /// Ticks per bucket.
    bucket: u64,
    /// By bucket: the earliest anchor seen in it.
    kept: std::collections::BTreeMap<u64, Anchor>,
}

impl Default for Anchors {
    fn default() -> Self {
        Anchors {
            bucket: 1,
            kept: std::collections::BTreeMap::new(),
        }
    }
}

impl Anchors {
    /// The most anchors kept.
    pub const MAX: usize = 4096;

    pub fn add(&mut self, a: Anchor) {
        self.keep(a);
        while self.kept.len() > Self::MAX {
            self.bucket *= 2;
            let old = std::mem::take(&mut self.kept);
            for a in old.into_values() {
                self.keep(a);
            }
        }
    }

    /// Keeps `a` if it is the earliest of its bucket.
    fn keep(&mut self, a: Anchor) {
        let slot = self.kept.entry(a.ticks / self.bucket).or_insert(a);
        if a.ticks < slot.ticks {
            *slot = a;
        }
    }

    /// The anchors kept, by ticks.
    pub fn into_vec(self) -> Vec<Anchor> {
        self.kept.into_values().collect()
    }
}

/// CLOCK_MONOTONIC and CLOCK_REALTIME read at the same instant, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WallPair {
    pub monotonic: u64,
    pub wall: u64,
}

/// Maps one host's CLOCK_MONOTONIC ns onto the wall clock (CLOCK_REALTIME
/// ns), from the first and last pairs read on that host: linear between
/// them, so a wall clock slewed by NTP during the run is followed.
#[derive(Debug, Clone, Copy, Default)]
pub struct WallClock {
    first: Option<WallPair>,
    last: Option<WallPair>,
}

impl WallClock {
    /// Adds a pair (keeps only the earliest and the latest: constant memory).
    pub fn add(&mut self, pair: WallPair) {
        if pair.wall == 0 {
            return; // not read (a recording without wall-clock pairs)
        }
        if self.first.is_none_or(|f| pair.monotonic < f.monotonic) {
            self.first = Some(pair);
        }
        if self.last.is_none_or(|l| pair.monotonic > l.monotonic) {
            self.last = Some(pair);
        }
    }

    /// The pairs seen, earliest and latest.
    pub fn span(&self) -> Option<(WallPair, WallPair)> {
        Some((self.first?, self.last?))
    }

    /// Wall-clock ns minus monotonic ns at `monotonic`; 0 with no pair.
    pub fn offset(&self, monotonic: u64) -> i64 {
        let Some((first, last)) = self.span() else {
            return 0;
        };
        let offset = |p: WallPair| p.wall as i64 - p.monotonic as i64;
        if last.monotonic <= first.monotonic {
            return offset(first);
        }
        let f =
            (monotonic as f64 - first.monotonic as f64) / (last.monotonic - first.monotonic) as f64;
        let f = f.clamp(0.0, 1.0);
        offset(first) + ((offset(last) - offset(first)) as f64 * f).round() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calibration(anchor: Anchor) -> Calibration {
        Calibration {
            kind: Clock::Tsc,
            ticks_per_second: 2e9,
            anchor,
        }
    }

    #[test]
    fn extrapolates_at_the_measured_rate_from_one_anchor() {
        let c = Converter::new(
            &calibration(Anchor {
                ticks: 1000,
                ns: 500,
            }),
            vec![],
        );
        assert_eq!(c.ns(1000), 500);
        assert_eq!(c.ns(3000), 1500);
        assert_eq!(c.ns(0), 0);
    }

    #[test]
    fn interpolates_between_anchors_whatever_the_measured_rate() {
        let c = Converter::new(
            &calibration(Anchor { ticks: 0, ns: 0 }),
            vec![Anchor {
                ticks: 3_000,
                ns: 1_000,
            }],
        );
        assert_eq!(c.ns(1_500), 500, "the anchors' own rate (3 ticks/ns) wins");
        assert_eq!(c.ns(5_000), 2_000, "beyond the last: the measured rate");
    }

    #[test]
    fn monotonic_readings_pass_through() {
        let cal = Calibration {
            kind: Clock::Monotonic,
            ticks_per_second: 1e9,
            anchor: Anchor { ticks: 7, ns: 7 },
        };
        assert_eq!(Converter::new(&cal, vec![]).ns(123_456), 123_456);
    }

    #[test]
    fn the_wall_clock_follows_a_slewed_clock_between_its_first_and_last_pairs() {
        let mut w = WallClock::default();
        assert_eq!(w.offset(10), 0, "no pair: no offset");
        w.add(WallPair {
            monotonic: 1_000,
            wall: 11_000,
        });
        w.add(WallPair {
            monotonic: 5_000,
            wall: 15_010,
        });
        w.add(WallPair {
            monotonic: 3_000,
            wall: 13_005,
        });
        assert_eq!(w.offset(1_000), 10_000);
        assert_eq!(w.offset(3_000), 10_005, "halfway: half the slew");
        assert_eq!(w.offset(9_000), 10_010, "beyond the last pair: held");
        w.add(WallPair {
            monotonic: 7,
            wall: 0,
        });
        assert_eq!(w.offset(1_000), 10_000, "an unread pair is ignored");
    }

    #[test]
    fn anchors_stay_few_and_spread_however_many_are_added() {
        let mut anchors = Anchors::default();
        for i in 0..1_000_000u64 {
            anchors.add(Anchor {
                ticks: i * 3_000,
                ns: i * 1_000,
            });
        }
        let kept = anchors.into_vec();
        assert!(
            kept.len() <= Anchors::MAX && kept.len() > Anchors::MAX / 4,
            "{}",
            kept.len()
        );
        assert_eq!(kept[0].ticks, 0, "the first anchor is kept");
        assert!(kept.windows(2).all(|w| w[0].ticks < w[1].ticks));
        let c = Converter::new(&calibration(kept[0]), kept);
        assert_eq!(
            c.ns(1_500_000_000),
            500_000_000,
            "interpolation is unchanged"
        );
    }
}
