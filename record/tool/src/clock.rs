//! The recording clock: the time-stamp counter where it is invariant (one
//! `rdtsc`, ~8 ns here, against ~25 ns for `clock_gettime`), else
//! CLOCK_MONOTONIC in nanoseconds.
//!
//! Counter readings stay comparable across processes because the recording
//! also holds anchors, pairs of (counter, CLOCK_MONOTONIC ns): one per process
//! at setup with the counter's measured frequency, and one in the stream at
//! least every [`ANCHOR_INTERVAL_NS`] per thread while it records (one
//! `clock_gettime` per millisecond). The converter maps each
//! reading onto CLOCK_MONOTONIC by interpolating between anchors.

use nvtxr_record_format::time::{Anchor, Calibration, Clock, WallPair};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// How often, at most, a thread writes an anchor into its stream.
pub const ANCHOR_INTERVAL_NS: u64 = 1_000_000;
/// How long setup measures the counter's rate (a spin, not a sleep).
const CALIBRATION_NS: u64 = 200_000;

static KIND: AtomicU8 = AtomicU8::new(Clock::Monotonic as u8);
/// Clock ticks between a thread's anchors.
static ANCHOR_TICKS: AtomicU64 = AtomicU64::new(0);

/// Nanoseconds on `clock`.
fn read_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds on CLOCK_MONOTONIC, the clock every process shares.
pub fn monotonic_ns() -> u64 {
    read_ns(libc::CLOCK_MONOTONIC)
}

/// Nanoseconds since the epoch on CLOCK_REALTIME, the wall clock.
pub fn wall_ns() -> u64 {
    read_ns(libc::CLOCK_REALTIME)
}

/// CLOCK_MONOTONIC and CLOCK_REALTIME read back to back.
pub fn wall_pair() -> WallPair {
    WallPair {
        monotonic: monotonic_ns(),
        wall: wall_ns(),
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86-64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn tsc() -> u64 {
    monotonic_ns()
}

/// The current reading of the recording clock.
#[inline(always)]
pub fn now() -> u64 {
    if KIND.load(Ordering::Relaxed) == Clock::Tsc as u8 {
        tsc()
    } else {
        monotonic_ns()
    }
}

/// Ticks after which a thread writes a new anchor.
#[inline(always)]
pub fn anchor_ticks() -> u64 {
    ANCHOR_TICKS.load(Ordering::Relaxed)
}

/// An anchor read now: the counter reading closest in time to a
/// CLOCK_MONOTONIC reading (the best of three brackets).
pub fn anchor() -> Anchor {
    if KIND.load(Ordering::Relaxed) != Clock::Tsc as u8 {
        let ns = monotonic_ns();
        return Anchor { ticks: ns, ns };
    }
    (0..3)
        .map(|_| {
            let before = tsc();
            let ns = monotonic_ns();
            let after = tsc();
            (
                after - before,
                Anchor {
                    ticks: before + (after - before) / 2,
                    ns,
                },
            )
        })
        .min_by_key(|(width, _)| *width)
        .map(|(_, a)| a)
        .expect("three samples")
}

/// The recording clock's reading at CLOCK_MONOTONIC time `ns` (a deferred
/// event's): exact on a CLOCK_MONOTONIC recording; on a counter one,
/// placed from an anchor read now at the measured rate.
pub fn from_monotonic_ns(ns: u64) -> u64 {
    if KIND.load(Ordering::Relaxed) != Clock::Tsc as u8 {
        return ns;
    }
    let a = anchor();
    let ticks_per_ns = anchor_ticks() as f64 / ANCHOR_INTERVAL_NS as f64;
    let ticks = a.ticks as f64 + (ns as f64 - a.ns as f64) * ticks_per_ns;
    ticks.max(0.0) as u64
}

/// The recording clock's reading for time-stamp counter reading `ticks`:
/// itself on a counter recording; `None` on a CLOCK_MONOTONIC one.
pub fn from_tsc(ticks: u64) -> Option<u64> {
    (KIND.load(Ordering::Relaxed) == Clock::Tsc as u8).then_some(ticks)
}

/// Whether this CPU's counter runs at a constant rate in every power state
/// and on every core (CPUID 0x8000_0007, EDX bit 8).
#[cfg(target_arch = "x86_64")]
fn invariant_tsc() -> bool {
    use core::arch::x86_64::__cpuid;
    let max_extended = __cpuid(0x8000_0000).eax;
    max_extended >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn invariant_tsc() -> bool {
    false
}

/// Chooses the clock and measures the counter's rate (200 µs: a rate off
/// by 3e-4 at worst, over the at most 1 ms after a thread's last anchor),
/// once per process; `monotonic` forces CLOCK_MONOTONIC. `inherited` (a
/// forked child) reuses the parent's measurement.
pub fn setup(inherited: Option<Calibration>, monotonic: bool) -> Calibration {
    let calibration = inherited.unwrap_or_else(|| {
        if monotonic || !invariant_tsc() {
            let ns = monotonic_ns();
            return Calibration {
                kind: Clock::Monotonic,
                ticks_per_second: 1e9,
                anchor: Anchor { ticks: ns, ns },
            };
        }
        KIND.store(Clock::Tsc as u8, Ordering::Relaxed);
        let first = anchor();
        while monotonic_ns() < first.ns + CALIBRATION_NS {
            std::hint::spin_loop();
        }
        let second = anchor();
        let ticks_per_second =
            (second.ticks - first.ticks) as f64 * 1e9 / (second.ns - first.ns).max(1) as f64;
        Calibration {
            kind: Clock::Tsc,
            ticks_per_second,
            anchor: second,
        }
    });
    KIND.store(calibration.kind as u8, Ordering::Relaxed);
    let ticks = match calibration.kind {
        Clock::Tsc => (calibration.ticks_per_second * ANCHOR_INTERVAL_NS as f64 / 1e9) as u64,
        Clock::Monotonic => ANCHOR_INTERVAL_NS,
    };
    ANCHOR_TICKS.store(ticks, Ordering::Relaxed);
    calibration
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvtxr_record_format::time::Converter;

    #[test]
    fn the_counter_tracks_the_monotonic_clock() {
        let cal = setup(None, false);
        let start = (now(), monotonic_ns());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let end = (now(), monotonic_ns());
        let c = Converter::new(&cal, vec![]);
        let measured = c.ns(end.0) as i64 - c.ns(start.0) as i64;
        let truth = (end.1 - start.1) as i64;
        assert!((measured - truth).abs() < 100_000, "{measured} vs {truth}");
    }
}
