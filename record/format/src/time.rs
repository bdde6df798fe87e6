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
}
