//! Perfetto's native trace format (`.pftrace`), written as the recording is
//! replayed, in constant memory (what is held: the tracks described, and each
//! sequence's interned names, cleared past [`MAX_INTERNED`]).
//!
//! - A process track per process (named as the JSON names it, with its rank
//!   as a label and its sort order), a thread track per thread (its OS or
//!   NVTX name); ranges of a domain other than the default on a child track
//!   of their thread named after the domain (NVTX nests push/pop per domain).
//! - Each thread's events are one packet sequence, in time order: push/pop
//!   ranges as slice begin/end pairs, marks as instants; names interned, the
//!   track and the clock given by the sequence's defaults, timestamps as
//!   deltas on an incremental clock of the sequence's own.
//! - Start/end ranges, which may end on another thread, go on the process's
//!   sequence with absolute timestamps, each on an async track of its own
//!   (merged by name into one row per domain); one that ends on another
//!   thread gets a flow between two instants (category `flow`) on the
//!   threads that started and ended it.
//! - Domain (when not the default), category, category name, payload and
//!   color are debug annotations, named as the JSON's `args`.
//! - GPU activity: see `gpu`.
//! - Packets are deflated in blocks of at most [`BLOCK`] bytes
//!   (`compressed_packets`).

mod annotations;
mod gpu;
mod intern;
mod packets;
mod proto;
mod wire;

use crate::model::{Details, GpuEvent, Launch, Mark, Process, Range, Sample, Sink, Style, Thread};
use hashbrown::HashMap;
use packets::{slice, Event, Flow, Packets, Sequence, BLOCK, LEVEL};
use proto::*;
use std::io::Write;

/// Where a process's tracks stand.
struct ProcessTracks {
    key: u64,
    uuid: u64,
    /// Its sequence, for descriptors and start/end ranges.
    sequence: Sequence,
    /// Threads and domain child tracks described, by uuid.
    described: hashbrown::HashSet<u64>,
    /// Thread uuids by tid (for flows on start/end ranges).
    threads: HashMap<u32, u64>,
    /// Each GPU stream's sequence, by its track's uuid.
    streams: HashMap<u64, Sequence>,
}

pub struct Writer<'a> {
    packets: Packets<'a>,
    next_sequence: u32,
    process: Option<ProcessTracks>,
    thread: Option<Sequence>,
    /// Async tracks and flows made so far (their ids count from 1).
    next_async: u64,
}

/// A non-zero id from its parts (splitmix64 of a running hash).
fn uuid(parts: &[u64]) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64;
    for &p in parts {
        h ^= p;
        h = h.wrapping_add(0x9E37_79B9_7F4A_7C15);
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 31;
    }
    h.max(1)
}

/// Tags telling the uuids of kinds of tracks apart.
const PROCESS_TRACK: u64 = 1;
const THREAD_TRACK: u64 = 2;
const DOMAIN_TRACK: u64 = 3;
const ASYNC_TRACK: u64 = 4;
const COUNTER_TRACK: u64 = 5;

impl<'a> Writer<'a> {
    /// `origin`: the trace's first timestamp; `wall`: timestamps are on the wall clock.
    pub fn new(out: &'a mut dyn Write, origin: u64, wall: bool) -> std::io::Result<Self> {
        let mut w = Writer {
            packets: Packets {
                out,
                block: Vec::with_capacity(BLOCK + 4096),
                deflate: flate2::Compress::new(flate2::Compression::new(LEVEL), true),
                compressed: Vec::new(),
                framed: Vec::new(),
                origin,
                clock: if wall {
                    CLOCK_REALTIME
                } else {
                    CLOCK_MONOTONIC
                },
            },
            next_sequence: 1,
            process: None,
            thread: None,
            next_async: 1,
        };
        // Processes sort as their descriptors say (by rank).
        let root = TrackDescriptor {
            uuid: Some(0),
            process_ordering: Some(PROCESS_ORDER_EXPLICIT),
            ..Default::default()
        };
        // The first sequence declares the trace's clock and where it starts,
        // whatever comes after.
        let mut sequence = w.sequence(Some(origin), None);
        w.packets.clear(&mut sequence)?;
        w.packets.descriptor(&sequence, root)?;
        Ok(w)
    }

    fn sequence(&mut self, delta_from: Option<u64>, track: Option<u64>) -> Sequence {
        let id = self.next_sequence;
        self.next_sequence += 1;
        Sequence {
            id,
            delta_from,
            track,
            fresh: true,
            ..Default::default()
        }
    }
}

impl<'a> Writer<'a> {
    /// The process's track (and sequence), once, before its first event.
    fn describe_process(&mut self, p: &Process) -> std::io::Result<()> {
        if self.process.as_ref().is_some_and(|t| t.key == p.key) {
            return Ok(());
        }
        let track = uuid(&[PROCESS_TRACK, p.key]);
        let sequence = self.sequence(None, None);
        let mut labels = Vec::new();
        if let Some(rank) = p.rank {
            labels.push(match p.world {
                Some(world) => format!("rank {rank} of {world}; {}", p.command),
                None => format!("rank {rank}; {}", p.command),
            });
        }
        if p.parent != 0 {
            labels.push(format!("parent pid {}", p.parent));
        }
        self.packets.descriptor(
            &sequence,
            TrackDescriptor {
                uuid: Some(track),
                process: Some(ProcessDescriptor {
                    pid: Some(p.trace_pid as i32),
                    process_name: Some(p.label()),
                    process_labels: labels,
                }),
                sibling_order_rank: p.rank.map(|r| r as i32),
                ..Default::default()
            },
        )?;
        self.process = Some(ProcessTracks {
            key: p.key,
            uuid: track,
            sequence,
            described: Default::default(),
            threads: HashMap::new(),
            streams: HashMap::new(),
        });
        Ok(())
    }

    fn tracks(&mut self) -> &mut ProcessTracks {
        self.process.as_mut().expect("described before its events")
    }

    /// The track of `domain`'s push/pop ranges on thread `tid`, described
    /// the first time: `None` for the default domain (the thread's own track,
    /// its sequence's default), else a child track of the thread.
    #[inline(always)]
    fn range_track(&mut self, tid: u32, domain: &str) -> std::io::Result<Option<u64>> {
        if domain.is_empty() {
            return Ok(None);
        }
        self.domain_track(tid, domain).map(Some)
    }

    fn domain_track(&mut self, tid: u32, domain: &str) -> std::io::Result<u64> {
        let tracks = self.tracks();
        let thread = tracks.threads[&tid];
        let track = uuid(&[DOMAIN_TRACK, thread, hash_str(domain)]);
        if tracks.described.insert(track) {
            let descriptor = TrackDescriptor {
                uuid: Some(track),
                parent_uuid: Some(thread),
                name: Some(domain.to_string()),
                ..Default::default()
            };
            let (packets, s) = self.on_process();
            packets.descriptor(s, descriptor)?;
        }
        Ok(track)
    }

    /// The track of a counter: under its process, named after the counter
    /// (and its domain, unless the default), described once.
    fn counter_track(&mut self, s: &Sample) -> std::io::Result<u64> {
        let tracks = self.tracks();
        let track = uuid(&[
            COUNTER_TRACK,
            tracks.uuid,
            hash_str(&s.domain),
            hash_str(&s.counter),
        ]);
        if tracks.described.insert(track) {
            let descriptor = TrackDescriptor {
                uuid: Some(track),
                parent_uuid: Some(tracks.uuid),
                name: Some(match s.domain.is_empty() {
                    true => s.counter.clone(),
                    false => format!("{}: {}", s.domain, s.counter),
                }),
                counter: Some(CounterDescriptor {}),
                ..Default::default()
            };
            let (packets, s) = self.on_process();
            packets.descriptor(s, descriptor)?;
        }
        Ok(track)
    }

    /// The packets, and the current thread's sequence.
    fn on_thread(&mut self) -> (&mut Packets<'a>, &mut Sequence) {
        let s = self
            .thread
            .as_mut()
            .expect("a thread's events after its start");
        (&mut self.packets, s)
    }

    /// The packets, and the process's sequence.
    fn on_process(&mut self) -> (&mut Packets<'a>, &mut Sequence) {
        let tracks = self.process.as_mut().expect("described before its events");
        (&mut self.packets, &mut tracks.sequence)
    }

    /// Ends the trace.
    pub fn finish(self) -> std::io::Result<()> {
        self.packets.finish()
    }
}

fn hash_str(s: &str) -> u64 {
    // FNV-1a.
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Sink for Writer<'_> {
    fn wants_begin(&self) -> bool {
        true
    }

    fn thread_start(&mut self, p: &Process, t: &Thread) -> std::io::Result<()> {
        self.describe_process(p)?;
        let process = self.tracks().uuid;
        let track = uuid(&[THREAD_TRACK, p.key, u64::from(t.tid)]);
        self.tracks().threads.insert(t.tid, track);
        let name = t
            .name
            .clone()
            .unwrap_or_else(|| format!("thread {}", t.tid));
        let descriptor = TrackDescriptor {
            uuid: Some(track),
            parent_uuid: Some(process),
            thread: Some(ThreadDescriptor {
                pid: Some(p.trace_pid as i32),
                tid: Some(i64::from(t.tid)),
                thread_name: Some(name),
            }),
            ..Default::default()
        };
        let (packets, s) = self.on_process();
        packets.descriptor(s, descriptor)?;
        let origin = self.packets.origin;
        self.thread = Some(self.sequence(Some(origin), Some(track)));
        Ok(())
    }

    fn begin(&mut self, _: &Process, tid: u32, d: &Details, start: u64) -> std::io::Result<()> {
        let explicit = self.range_track(tid, &d.domain)?;
        let (packets, s) = self.on_thread();
        packets.event(
            s,
            start,
            slice(SLICE_BEGIN, explicit),
            Some(&d.name),
            Some(d),
        )
    }

    fn range(&mut self, p: &Process, r: &Range) -> std::io::Result<()> {
        match r.style {
            Style::PushPop => {
                let explicit = self.range_track(r.tid, &r.details.domain)?;
                // The fields again, with the pop's added (the end's arguments
                // are merged into the slice's).
                let end = r.details.fields.as_ref().map(|f| Details {
                    fields: Some(f.clone()),
                    ..Details::default()
                });
                let (packets, s) = self.on_thread();
                packets.event(s, r.end, slice(SLICE_END, explicit), None, end.as_ref())
            }
            Style::StartEnd => self.async_range(p, r),
        }
    }

    fn mark(&mut self, _: &Process, m: &Mark) -> std::io::Result<()> {
        let d = &m.details;
        let (packets, s) = self.on_thread();
        packets.event(s, m.time, slice(INSTANT, None), Some(&d.name), Some(d))
    }

    fn sample(&mut self, _: &Process, sample: &Sample) -> std::io::Result<()> {
        let track = self.counter_track(sample)?;
        let event = Event {
            value: Some(sample.value),
            ..slice(COUNTER, Some(track))
        };
        let (packets, s) = self.on_thread();
        packets.event(s, sample.time, event, None, None)
    }

    fn launch(&mut self, p: &Process, l: &Launch) -> std::io::Result<()> {
        self.launch_instant(p, l)
    }

    fn gpu(&mut self, p: &Process, g: &GpuEvent) -> std::io::Result<()> {
        self.gpu_slice(p, g)
    }

    fn process_end(&mut self, p: &Process) -> std::io::Result<()> {
        // A process with no events still gets its track (and its name).
        self.describe_process(p)
    }
}

impl Writer<'_> {
    /// A start/end range: on an async track of its own under the process,
    /// named after its domain; a flow between the threads that started and
    /// ended it when they differ.
    fn async_range(&mut self, p: &Process, r: &Range) -> std::io::Result<()> {
        self.describe_process(p)?;
        let n = self.next_async;
        self.next_async += 1;
        let track = uuid(&[ASYNC_TRACK, p.key, n]);
        let process = self.tracks().uuid;
        let row = if r.details.domain.is_empty() {
            "NVTX start/end ranges".to_string()
        } else {
            format!("{} (start/end)", r.details.domain)
        };
        let threads = (
            self.tracks().threads.get(&r.tid).copied(),
            self.tracks().threads.get(&r.end_tid).copied(),
        );
        let (packets, s) = self.on_process();
        packets.descriptor(
            s,
            TrackDescriptor {
                uuid: Some(track),
                parent_uuid: Some(process),
                name: Some(row),
                sibling_merge_behavior: Some(MERGE_BY_NAME),
                ..Default::default()
            },
        )?;
        let d = &r.details;
        packets.event(
            s,
            r.start,
            slice(SLICE_BEGIN, Some(track)),
            Some(&d.name),
            Some(d),
        )?;
        packets.event(s, r.end, slice(SLICE_END, Some(track)), None, None)?;
        if let (Some(from), Some(to)) = threads {
            if r.tid != r.end_tid {
                let flow = uuid(&[ASYNC_TRACK, p.key, n, 0xF]);
                let started = Event {
                    flow: Some(Flow::Starts(smallvec::smallvec![flow])),
                    ..slice(INSTANT, Some(from))
                };
                let ended = Event {
                    flow: Some(Flow::Ends(flow)),
                    ..slice(INSTANT, Some(to))
                };
                packets.event(s, r.start, started, Some(&d.name), None)?;
                packets.event(s, r.end, ended, Some(&d.name), None)?;
            }
        }
        Ok(())
    }
}
