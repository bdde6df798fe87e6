//! Time domains (`nvtxTimeDomainRegister`) and how a timestamp of one
//! reaches the recording clock: through the domain's own timestamp type, or
//! through what the producer said relates it to another domain (sync
//! points, a conversion factor, a timer source), chained until a domain the
//! tool reads itself: its own clock (`nvtxTimestampGet`), CLOCK_MONOTONIC
//! ns, or the time-stamp counter.
//!
//! Everything is behind one lock that is only ever tried: a call that finds
//! it taken (a signal handler interrupting its own thread's registration, a
//! child forked while another thread held it) fails as a refused
//! registration, or a timestamp recorded at submission with the reason;
//! nothing waits.

use crate::{clock, probe};
use nvtx_protocol::payload::timestamp_type as tt;
use nvtx_protocol::time::time_domain_id::{DYNAMIC_START, STATIC_START};
use nvtx_protocol::time::{SyncPoint, TimeDomainAttr};
use std::ffi::c_void;
use std::sync::Mutex;

/// Links followed from a domain to one the tool reads, at most.
const MAX_HOPS: usize = 4;
/// Sync points kept per pair of domains (the latest, past that).
const MAX_POINTS: usize = 4096;

/// How timestamps of one domain give timestamps of another.
enum Map {
    /// `to = dst + slope * (from - src)`.
    Line { slope: f64, src: i64, dst: i64 },
    /// Instants read in both, sorted by the first: interpolated between
    /// the two around a timestamp, extrapolated from the nearest two.
    Points(Vec<(i64, i64)>),
}

struct Link {
    from: u64,
    to: u64,
    map: Map,
}

/// A function the producer gave that reads a domain's clock.
#[derive(Clone, Copy)]
enum Reader {
    Plain(unsafe extern "C" fn() -> i64),
    WithData(unsafe extern "C" fn(*mut c_void) -> i64, usize),
}

impl Reader {
    fn read(self) -> i64 {
        // SAFETY: the producer gave this function to be called for a
        // reading, with its data.
        unsafe {
            match self {
                Reader::Plain(f) => f(),
                Reader::WithData(f, data) => f(data as *mut c_void),
            }
        }
    }
}

struct Domains {
    /// Registered: id, timestamp type, ticks per second (0: unknown).
    registered: Vec<(u64, u64, i64)>,
    next: u64,
    links: Vec<Link>,
    /// Timer sources: a domain and how to read it.
    sources: Vec<(u64, Reader)>,
}

static DOMAINS: Mutex<Domains> = Mutex::new(Domains {
    registered: Vec::new(),
    next: DYNAMIC_START,
    links: Vec::new(),
    sources: Vec::new(),
});

fn domains() -> Option<std::sync::MutexGuard<'static, Domains>> {
    match DOMAINS.try_lock() {
        Ok(d) => Some(d),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// `nvtxTimeDomainRegister`: the domain's id (the static one asked for, or
/// the tool's); 0 for no attributes, a static id out of its range, or an
/// id already registered with other attributes.
pub(super) unsafe extern "C" fn register(_d: nvtx_protocol::Handle, attr: *const c_void) -> u64 {
    // SAFETY: the attributes are integers, read fault-safe.
    let Some(attr) = (unsafe { probe::read(attr.cast::<TimeDomainAttr>()) }) else {
        return 0;
    };
    let Some(mut domains) = domains() else {
        return 0;
    };
    let (kind, resolution) = (attr.timestamp_type_id, attr.timer_resolution);
    let id = match attr.time_domain_id {
        0 => {
            domains.next += 1;
            domains.next - 1
        }
        id if (STATIC_START..DYNAMIC_START).contains(&id) => id,
        _ => return 0,
    };
    match domains.registered.iter().find(|r| r.0 == id) {
        Some(&(_, k, r)) if (k, r) != (kind, resolution) => return 0,
        Some(_) => {}
        None => domains.registered.push((id, kind, resolution)),
    }
    id
}

fn add_points(from: u64, to: u64, points: impl Iterator<Item = (i64, i64)>) {
    let Some(mut domains) = domains() else {
        return;
    };
    let i = match domains
        .links
        .iter()
        .position(|l| l.from == from && l.to == to && matches!(l.map, Map::Points(_)))
    {
        Some(i) => i,
        None => {
            domains.links.push(Link {
                from,
                to,
                map: Map::Points(Vec::new()),
            });
            domains.links.len() - 1
        }
    };
    if let Map::Points(kept) = &mut domains.links[i].map {
        kept.extend(points);
        kept.sort_unstable();
        kept.dedup_by_key(|p| p.0);
        let past = kept.len().saturating_sub(MAX_POINTS);
        kept.drain(..past);
    }
}

/// `nvtxTimeSyncPoint`: one instant in two domains.
pub(super) unsafe extern "C" fn sync_point(
    _d: nvtx_protocol::Handle,
    domain_1: u64,
    domain_2: u64,
    t1: i64,
    t2: i64,
) {
    add_points(domain_1, domain_2, std::iter::once((t1, t2)));
}

/// `nvtxTimeSyncPointTable`: instants in two domains.
pub(super) unsafe extern "C" fn sync_point_table(
    _d: nvtx_protocol::Handle,
    src: u64,
    dst: u64,
    points: *const c_void,
    count: usize,
) {
    if points.is_null() {
        return;
    }
    // SAFETY: the producer passes `count` sync points.
    let points = unsafe { std::slice::from_raw_parts(points.cast::<SyncPoint>(), count) };
    add_points(src, dst, points.iter().map(|p| (p.src, p.dst)));
}

/// `nvtxTimestampConversionFactor`: `dst = tsDst + slope * (src - tsSrc)`.
pub(super) unsafe extern "C" fn conversion_factor(
    _d: nvtx_protocol::Handle,
    src: u64,
    dst: u64,
    slope: f64,
    ts_src: i64,
    ts_dst: i64,
) {
    if !slope.is_finite() || slope == 0.0 {
        return;
    }
    if let Some(mut domains) = domains() {
        domains
            .links
            .retain(|l| !(l.from == src && l.to == dst && matches!(l.map, Map::Line { .. })));
        domains.links.push(Link {
            from: src,
            to: dst,
            map: Map::Line {
                slope,
                src: ts_src,
                dst: ts_dst,
            },
        });
    }
}

fn add_source(domain: u64, reader: Reader) {
    if let Some(mut domains) = domains() {
        domains.sources.retain(|s| s.0 != domain);
        domains.sources.push((domain, reader));
    }
    // The reading now, as the first sync point with CLOCK_MONOTONIC; each
    // conversion adds another.
    add_points(
        domain,
        tt::CPU_CLOCK_GETTIME_MONOTONIC,
        std::iter::once(read_both(reader)),
    );
}

/// A reading of `reader` and of CLOCK_MONOTONIC at (about) the same instant.
fn read_both(reader: Reader) -> (i64, i64) {
    let before = clock::monotonic_ns() as i64;
    let value = reader.read();
    let after = clock::monotonic_ns() as i64;
    (value, before + (after - before) / 2)
}

/// `nvtxTimerSource`: a function that reads the domain's clock.
pub(super) unsafe extern "C" fn timer_source(
    _d: nvtx_protocol::Handle,
    domain: u64,
    _flags: u64,
    read: *const c_void,
) {
    if !read.is_null() {
        // SAFETY: the producer passes `int64_t (*)(void)`.
        let read: unsafe extern "C" fn() -> i64 = unsafe { std::mem::transmute(read) };
        add_source(domain, Reader::Plain(read));
    }
}

/// `nvtxTimerSourceWithData`: the same, the function taking `data`.
pub(super) unsafe extern "C" fn timer_source_with_data(
    _d: nvtx_protocol::Handle,
    domain: u64,
    _flags: u64,
    read: *const c_void,
    data: *const c_void,
) {
    if !read.is_null() {
        // SAFETY: the producer passes `int64_t (*)(void*)`.
        let read: unsafe extern "C" fn(*mut c_void) -> i64 = unsafe { std::mem::transmute(read) };
        add_source(domain, Reader::WithData(read, data as usize));
    }
}

impl Map {
    /// `t` mapped forward (`from` to `to`), or back.
    fn apply(&self, t: i64, forward: bool) -> Option<i64> {
        match self {
            Map::Line { slope, src, dst } => Some(if forward {
                *dst + (slope * (t - src) as f64).round() as i64
            } else {
                *src + ((t - dst) as f64 / slope).round() as i64
            }),
            Map::Points(points) => {
                // Sorted by the first; clocks only go forward, so by the second too.
                let key = |p: &(i64, i64)| if forward { p.0 } else { p.1 };
                let n = points.len();
                if n < 2 {
                    return None;
                }
                let i = points.partition_point(|p| key(p) <= t).clamp(1, n - 1);
                let (a, b) = (points[i - 1], points[i]);
                let (a, b) = if forward {
                    (a, b)
                } else {
                    ((a.1, a.0), (b.1, b.0))
                };
                if a.0 == b.0 {
                    return None;
                }
                let slope = (b.1 - a.1) as f64 / (b.0 - a.0) as f64;
                Some(a.1 + (slope * (t - a.0) as f64).round() as i64)
            }
        }
    }
}

/// `value` of `domain` on the recording clock, or why not.
pub(super) fn to_clock(domain: Option<u64>, value: i64) -> Result<u64, String> {
    let Some(domain) = domain else {
        return Ok(value as u64);
    };
    if let Some(t) = read_type(domain, value) {
        return t;
    }
    // A timer source's reading now, so that its points span the timestamp.
    let source = domains().and_then(|d| d.sources.iter().find(|s| s.0 == domain).map(|s| s.1));
    if let Some(reader) = source {
        add_points(
            domain,
            tt::CPU_CLOCK_GETTIME_MONOTONIC,
            std::iter::once(read_both(reader)),
        );
    }
    let Some(domains) = domains() else {
        return Err(format!("time domain {domain}: busy"));
    };
    // A registered domain of a type the tool reads is read as that type.
    let kind = |d: u64| {
        domains
            .registered
            .iter()
            .find(|r| r.0 == d)
            .map_or(d, |r| r.1)
    };
    if let Some(t) = read_type(kind(domain), value) {
        return t;
    }
    // Breadth first from the timestamp's domain, each link either way.
    let mut reached = vec![domain];
    let mut frontier = vec![(domain, value)];
    for _ in 0..MAX_HOPS {
        let mut next = Vec::new();
        for &(at, t) in &frontier {
            for link in &domains.links {
                let (other, mapped) = if link.from == at {
                    (link.to, link.map.apply(t, true))
                } else if link.to == at {
                    (link.from, link.map.apply(t, false))
                } else {
                    continue;
                };
                let Some(t) = mapped.filter(|_| !reached.contains(&other)) else {
                    continue;
                };
                if let Some(found) = read_type(kind(other), t) {
                    return found;
                }
                reached.push(other);
                next.push((other, t));
            }
        }
        frontier = next;
    }
    Err(if domains.registered.iter().any(|r| r.0 == domain) {
        format!("time domain {domain}: no sync points, conversion factor or timer source relate it to a clock nvtxr reads")
    } else {
        format!("time domain {domain} is not converted")
    })
}

/// A timestamp of a type the tool reads itself on the recording clock;
/// `None` for any other type.
fn read_type(kind: u64, value: i64) -> Option<Result<u64, String>> {
    Some(match kind {
        tt::TOOL_PROVIDED => Ok(value as u64),
        tt::CPU_CLOCK_GETTIME_MONOTONIC => Ok(clock::from_monotonic_ns(value.max(0) as u64)),
        tt::CPU_TSC | tt::CPU_TSC_NONVIRTUALIZED => clock::from_tsc(value as u64)
            .ok_or_else(|| "TSC timestamps on a CLOCK_MONOTONIC recording".to_string()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::Map;

    #[test]
    fn maps_go_both_ways() {
        let line = Map::Line {
            slope: 1000.0,
            src: 10,
            dst: 5_000,
        };
        assert_eq!(line.apply(12, true), Some(7_000));
        assert_eq!(line.apply(7_000, false), Some(12));
        let points = Map::Points(vec![(0, 100), (10, 200), (20, 400)]);
        assert_eq!(points.apply(5, true), Some(150), "between two");
        assert_eq!(
            points.apply(30, true),
            Some(600),
            "past the last: its segment"
        );
        assert_eq!(
            points.apply(-10, true),
            Some(0),
            "before the first: its segment"
        );
        assert_eq!(points.apply(300, false), Some(15));
        assert_eq!(Map::Points(vec![(0, 1)]).apply(3, true), None, "one point");
        assert_eq!(points.apply(150, false), Some(5));
    }
}
