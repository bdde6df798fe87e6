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

/// The variable choosing the recording clock: unset, empty or `auto` (the
/// time-stamp counter where it is invariant, else CLOCK_MONOTONIC), or
/// `monotonic` (CLOCK_MONOTONIC always).
pub const CLOCK_VAR: &str = "NVTXR_RECORD_CLOCK";

/// What [`CLOCK_VAR`] asks for: `Some(Clock::Monotonic)` when forced, `None`
/// for the automatic choice; an error names the values it takes.
pub fn clock_choice(value: Option<&std::ffi::OsStr>) -> Result<Option<Clock>, String> {
    match value.map(|v| v.to_str()) {
        None => Ok(None),
        Some(Some("" | "auto")) => Ok(None),
        Some(Some("monotonic")) => Ok(Some(Clock::Monotonic)),
        Some(other) => Err(format!(
            "{CLOCK_VAR}={}: unknown clock (use auto or monotonic)",
            other.unwrap_or("(not UTF-8)")
        )),
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

impl Calibration {
    /// The calibration's straight line: the ns of counter reading `ticks`
    /// at the measured rate from the anchor (the reading itself on a
    /// CLOCK_MONOTONIC recording). The recording tool gives CUPTI its
    /// timestamps on this line, and the converter takes them back to
    /// counter readings ([`Calibration::line_ticks`]), so that GPU times
    /// and NVTX events are placed by one mapping (see [`Converter`]).
    pub fn line_ns(&self, ticks: u64) -> u64 {
        self.along(
            ticks,
            self.anchor.ticks,
            self.anchor.ns,
            1e9 / self.ticks_per_second,
        )
    }

    /// The counter reading at `ns` on [`Calibration::line_ns`]'s line.
    pub fn line_ticks(&self, ns: u64) -> u64 {
        self.along(
            ns,
            self.anchor.ns,
            self.anchor.ticks,
            self.ticks_per_second / 1e9,
        )
    }

    /// `to + (value - from) * rate`, the difference taken exactly, the
    /// product to the unit below (so that it never decreases as `value`
    /// grows, and costs no call: a conversion runs for every GPU time).
    fn along(&self, value: u64, from: u64, to: u64, rate: f64) -> u64 {
        if self.kind == Clock::Monotonic {
            return value;
        }
        let moved = (value.wrapping_sub(from) as i64) as f64 * rate;
        (to as i64).saturating_add(moved as i64).max(0) as u64
    }
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
    calibration: Calibration,
    /// Sorted by ticks.
    anchors: Vec<Anchor>,
    /// By the anchors' segments: segment i from anchor i - 1 (included, or
    /// from 0) to anchor i (excluded, or to the end).
    segments: Vec<Segment>,
}

/// A stretch of readings converted alike: `base` plus `rate` ns per tick.
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// Its first and last readings (`first > last`: none).
    first: u64,
    last: u64,
    base: Anchor,
    rate: f64,
}

impl Converter {
    /// From the process's calibration and every anchor found in its streams.
    pub fn new(calibration: &Calibration, mut anchors: Vec<Anchor>) -> Converter {
        anchors.push(calibration.anchor);
        anchors.sort_by_key(|a| a.ticks);
        anchors.dedup_by_key(|a| a.ticks);
        let measured = anchors.windows(2).map(|w| {
            let (base, next) = (w[0], w[1]);
            next.ns.saturating_sub(base.ns).max(1) as f64 / (next.ticks - base.ticks) as f64
        });
        // Ns per tick from each anchor on: to the next one, measured; past
        // the last, the calibration's rate.
        let rates: Vec<f64> = measured
            .chain([1e9 / calibration.ticks_per_second])
            .collect();
        let segments = (0..=anchors.len())
            .map(|i| {
                // Before the first anchor: extrapolated back at the calibration's rate.
                let (base, rate) = match i.checked_sub(1) {
                    Some(b) => (anchors[b], rates[b]),
                    None => (anchors[0], rates[rates.len() - 1]),
                };
                let first = i.checked_sub(1).map_or(0, |b| anchors[b].ticks);
                let last = anchors
                    .get(i)
                    .map_or(Some(u64::MAX), |a| a.ticks.checked_sub(1));
                Segment {
                    first: if last.is_some() { first } else { 1 },
                    last: last.unwrap_or(0),
                    base,
                    rate,
                }
            })
            .collect();
        Converter {
            calibration: *calibration,
            anchors,
            segments,
        }
    }

    /// CLOCK_MONOTONIC ns for a time on the calibration's line (CUPTI's:
    /// see [`Calibration::line_ns`]): taken back to its counter reading,
    /// then placed as [`Converter::ns_near`] places that reading, so that it
    /// keeps its order among the NVTX events' readings to the tick.
    pub fn line_ns_near(&self, line: u64, segment: &mut usize) -> u64 {
        self.ns_near(self.calibration.line_ticks(line), segment)
    }

    /// CLOCK_MONOTONIC ns for a reading: interpolated between the anchors
    /// around it, extrapolated at the measured rate beyond the last one.
    pub fn ns(&self, ticks: u64) -> u64 {
        self.ns_near(ticks, &mut 0)
    }

    /// [`Converter::ns`], starting from `segment`, the anchors' segment the
    /// previous reading fell in (updated): a thread's readings come in
    /// order, so most need no search.
    pub fn ns_near(&self, ticks: u64, segment: &mut usize) -> u64 {
        if self.calibration.kind == Clock::Monotonic {
            return ticks;
        }
        let fits = |s: &Segment| s.first <= ticks && ticks <= s.last;
        let s = match self.segments.get(*segment) {
            Some(s) if fits(s) => s,
            _ => {
                *segment = self.anchors.partition_point(|a| a.ticks <= ticks);
                &self.segments[*segment]
            }
        };
        let (base, rate) = (s.base, s.rate);
        // Signed (the first segment reaches back), in i64's range at any
        // reading a recording holds, and converted to and from f64 as
        // signed integers: one instruction each, where u64's take several.
        // Rounded to the nearest ns.
        let delta = (ticks.wrapping_sub(base.ticks) as i64) as f64 * rate;
        let delta = (delta + 0.5f64.copysign(delta)) as i64;
        (base.ns as i64).saturating_add(delta).max(0) as u64
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

/// Places one host's CLOCK_MONOTONIC ns on the wall clock (CLOCK_REALTIME
/// ns) by one offset: the median of `wall - monotonic` over the pairs read
/// on that host. Durations stay the monotonic clock's: a wall clock stepped
/// or slewed during the run (NTP) moves the recording by at most its median
/// offset, never stretches it, and pairs read across a step are outvoted.
#[derive(Debug, Clone, Default)]
pub struct WallClock {
    offsets: Vec<i64>,
}

impl WallClock {
    /// Offsets kept: past this, every other one is dropped (bounded memory,
    /// about the same median).
    const MAX: usize = 4096;

    /// Adds a pair.
    pub fn add(&mut self, pair: WallPair) {
        if pair.wall == 0 {
            return; // not read (a recording without wall-clock pairs)
        }
        self.offsets.push(pair.wall as i64 - pair.monotonic as i64);
        if self.offsets.len() > Self::MAX {
            self.offsets.sort_unstable();
            let mut i = 0;
            self.offsets.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
    }

    /// Wall-clock ns minus monotonic ns: the median offset; 0 with no pair.
    pub fn offset(&self) -> i64 {
        let mut sorted = self.offsets.clone();
        sorted.sort_unstable();
        sorted.get(sorted.len() / 2).copied().unwrap_or(0)
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
    fn the_calibrations_line_goes_both_ways() {
        // A counter at 2.6 GHz read some days after boot.
        let c = Calibration {
            kind: Clock::Tsc,
            ticks_per_second: 2.6e9 * (1.0 + 2e-4),
            anchor: Anchor {
                ticks: 900_000_000_000_000,
                ns: 346_000_000_000_000,
            },
        };
        for ticks in [
            899_999_999_000_000,
            900_000_000_000_000,
            900_003_600_000_000_000,
        ] {
            let ns = c.line_ns(ticks);
            assert!(c.line_ticks(ns).abs_diff(ticks) <= 2, "{ticks} -> {ns}");
        }
        // Ordered as the readings are, a tick apart.
        let t = 900_000_123_456_789;
        assert!(c.line_ns(t) <= c.line_ns(t + 3) && c.line_ns(t + 3) < c.line_ns(t + 6));
        // On a CLOCK_MONOTONIC recording, the reading itself.
        let m = Calibration {
            kind: Clock::Monotonic,
            ticks_per_second: 1e9,
            anchor: Anchor { ticks: 5, ns: 5 },
        };
        assert_eq!((m.line_ns(123), m.line_ticks(123)), (123, 123));
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
    fn converting_near_the_previous_reading_gives_what_a_search_gives() {
        let anchors: Vec<Anchor> = (1..50)
            .map(|i| Anchor {
                ticks: i * 1000,
                ns: i * 400 + i * i,
            })
            .collect();
        let c = Converter::new(&calibration(Anchor { ticks: 0, ns: 0 }), anchors);
        let mut segment = 0;
        let mut x: u64 = 7;
        for step in 0..20_000u64 {
            // Mostly in order, sometimes anywhere (a signal handler's reading).
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let ticks = if x % 7 == 0 {
                (x >> 33) % 60_000
            } else {
                step * 3
            };
            assert_eq!(c.ns_near(ticks, &mut segment), c.ns(ticks), "{ticks}");
        }
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
    fn a_stepped_wall_clock_moves_the_recording_and_never_stretches_it() {
        let mut w = WallClock::default();
        assert_eq!(w.offset(), 0, "no pair: no offset");
        // Five pairs 10 us apart; the wall clock steps back 100 ms after the third.
        for (i, step) in [(0, 0), (1, 0), (2, 0), (3, 100_000_000), (4, 100_000_000)] {
            w.add(WallPair {
                monotonic: 1_000 + i * 10_000,
                wall: 1_000_011_000 + i * 10_000 - step,
            });
        }
        assert_eq!(
            w.offset(),
            1_000_010_000,
            "the majority's offset, one for the whole run"
        );
        w.add(WallPair {
            monotonic: 7,
            wall: 0,
        });
        assert_eq!(w.offset(), 1_000_010_000, "an unread pair is ignored");
        for i in 0..10_000u64 {
            w.add(WallPair {
                monotonic: i,
                wall: i + 5,
            });
        }
        assert!(w.offsets.len() <= WallClock::MAX);
        assert_eq!(w.offset(), 5);
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
