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

mod gpu;
mod intern;
mod proto;
mod wire;

use crate::model::css_color;
use crate::model::{
    Details, GpuEvent, Launch, Mark, Payload, Process, Range, Sample, Sink, Style, Thread,
};
use hashbrown::HashMap;
use intern::Interner;
use proto::*;
use std::io::Write;
use wire::{interned, packet, track_event, Fields, TRACE_PACKET};

/// Uncompressed bytes of packets per compressed block (Perfetto reads up to 512 KB).
const BLOCK: usize = 256 << 10;
/// zlib's level: 1, 4.0 bytes per event on the scale loop (the budget is 6) at a
/// fifth less CPU than level 2 (2.7 bytes per event).
const LEVEL: u32 = 1;
/// Names interned on one sequence before its interned state is cleared.
const MAX_INTERNED: usize = 16384;
/// The incremental clock each thread sequence defines.
const DELTA_CLOCK: u32 = CLOCK_SEQUENCE_FIRST;

/// Debug annotation names, interned on every sequence with these ids.
const ANNOTATIONS: [&str; 6] = [
    "domain",
    "category",
    "category_name",
    "payload",
    "color",
    "fields",
];
const DOMAIN: u64 = 1;
const CATEGORY: u64 = 2;
const CATEGORY_NAME: u64 = 3;
const PAYLOAD: u64 = 4;
const COLOR: u64 = 5;
const FIELDS: u64 = 6;

/// A packet sequence: its id, interned names and strings, delta clock.
#[derive(Default)]
struct Sequence {
    id: u32,
    /// Thread sequences: the delta clock's last value; process sequences
    /// write absolute timestamps.
    delta_from: Option<u64>,
    /// The track events default to.
    track: Option<u64>,
    names: Interner,
    strings: Interner,
    /// Set when the next packet must clear the incremental state first.
    fresh: bool,
}

/// Where a process's tracks stand.
struct ProcessTracks {
    key: u64,
    uuid: u64,
    /// Its sequence, for descriptors and start/end ranges.
    sequence: Sequence,
    /// Threads and domain child tracks described, by uuid.
    described: std::collections::HashSet<u64>,
    /// Thread uuids by tid (for flows on start/end ranges).
    threads: HashMap<u32, u64>,
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

/// The trace's packets: framed into a block, each block compressed and
/// written out.
struct Packets<'a> {
    out: &'a mut dyn Write,
    /// Framed packets waiting to be compressed.
    block: Vec<u8>,
    deflate: flate2::Compress,
    /// The last block, compressed; then framed as a packet.
    compressed: Vec<u8>,
    framed: Vec<u8>,
    /// Where the trace's clock starts; the delta clocks start there.
    origin: u64,
    /// The clock timestamps are on: CLOCK_MONOTONIC, or CLOCK_REALTIME
    /// when recordings are merged on the wall clock.
    clock: u32,
}

impl Packets<'_> {
    /// Appends one packet, whose fields `body` writes, to the block.
    fn packet(&mut self, body: impl FnOnce(&mut Fields)) -> std::io::Result<()> {
        Fields(&mut self.block).message(TRACE_PACKET, body);
        if self.block.len() >= BLOCK {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> std::io::Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        // One compressor and one output buffer for every block: a new
        // compressor's tables are hundreds of KB to allocate and zero.
        self.deflate.reset();
        let mut compressed = std::mem::take(&mut self.compressed);
        compressed.clear();
        loop {
            compressed.reserve(self.block.len() / 2 + 4096);
            let done = self.deflate.total_in() as usize;
            let status = self
                .deflate
                .compress_vec(
                    &self.block[done..],
                    &mut compressed,
                    flate2::FlushCompress::Finish,
                )
                .map_err(std::io::Error::other)?;
            if status == flate2::Status::StreamEnd {
                break;
            }
        }
        self.block.clear();
        let mut framed = std::mem::take(&mut self.framed);
        framed.clear();
        Fields(&mut framed).message(TRACE_PACKET, |p| {
            p.bytes(packet::COMPRESSED_PACKETS, &compressed)
        });
        let written = self.out.write_all(&framed);
        self.compressed = compressed;
        self.framed = framed;
        written
    }

    fn descriptor(&mut self, sequence: &Sequence, d: TrackDescriptor) -> std::io::Result<()> {
        self.packet(|p| {
            p.uint(packet::TRUSTED_PACKET_SEQUENCE_ID, sequence.id.into());
            p.encoded(packet::TRACK_DESCRIPTOR, &d);
        })
    }

    /// The first packet of a sequence (or the one after its state was
    /// cleared): the clock, the defaults, the annotation names.
    fn clear(&mut self, s: &mut Sequence) -> std::io::Result<()> {
        s.names.clear();
        s.strings.clear();
        s.fresh = false;
        let delta = s.delta_from.is_some();
        if delta {
            let snapshot = ClockSnapshot {
                clocks: vec![
                    Clock {
                        clock_id: Some(self.clock),
                        timestamp: Some(self.origin),
                        is_incremental: None,
                    },
                    Clock {
                        clock_id: Some(DELTA_CLOCK),
                        timestamp: Some(self.origin),
                        is_incremental: Some(true),
                    },
                ],
                primary_trace_clock: Some(self.clock as i32),
            };
            self.packet(|p| {
                p.uint(packet::TRUSTED_PACKET_SEQUENCE_ID, s.id.into());
                p.encoded(packet::CLOCK_SNAPSHOT, &snapshot);
            })?;
            s.delta_from = Some(self.origin);
        }
        let defaults = TracePacketDefaults {
            timestamp_clock_id: Some(if delta { DELTA_CLOCK } else { self.clock }),
            track_event_defaults: s.track.map(|t| TrackEventDefaults {
                track_uuid: Some(t),
            }),
        };
        self.packet(|p| {
            p.uint(packet::TRUSTED_PACKET_SEQUENCE_ID, s.id.into());
            p.uint(packet::SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
            p.uint(packet::FIRST_PACKET_ON_SEQUENCE, 1);
            p.encoded(packet::TRACE_PACKET_DEFAULTS, &defaults);
            p.message(packet::INTERNED_DATA, |i| {
                for (name, iid) in ANNOTATIONS.iter().zip(1..) {
                    i.interned(interned::DEBUG_ANNOTATION_NAMES, iid, name.as_bytes());
                }
            });
        })
    }

    /// Writes one track event at `time` on sequence `s`, interning its name
    /// and annotation strings there.
    fn event(
        &mut self,
        s: &mut Sequence,
        time: u64,
        event: Event,
        name: Option<&str>,
        details: Option<&Details>,
    ) -> std::io::Result<()> {
        if s.fresh || s.names.len() + s.strings.len() > MAX_INTERNED {
            self.clear(s)?;
        }
        let (timestamp, clock) = match s.delta_from {
            Some(last) if time >= last => {
                s.delta_from = Some(time);
                (time - last, None)
            }
            // Earlier than the sequence's last event (or no delta clock): absolute.
            _ => (time, s.delta_from.map(|_| self.clock)),
        };
        self.packet(|p| {
            p.uint(packet::TIMESTAMP, timestamp);
            if let Some(clock) = clock {
                p.uint(packet::TIMESTAMP_CLOCK_ID, clock.into());
            }
            p.uint(packet::TRUSTED_PACKET_SEQUENCE_ID, s.id.into());
            p.uint(packet::SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
            let mut name_iid = None;
            let mut args = Vec::new();
            if name.is_some() || details.is_some() {
                p.message_if_any(packet::INTERNED_DATA, |i| {
                    name_iid =
                        name.map(|name| intern(&mut s.names, name, i, interned::EVENT_NAMES));
                    if let Some(d) = details {
                        args = annotations(d, |text| {
                            intern(
                                &mut s.strings,
                                text,
                                i,
                                interned::DEBUG_ANNOTATION_STRING_VALUES,
                            )
                        });
                    }
                });
            }
            p.message(packet::TRACK_EVENT, |t| event.encode(t, name_iid, &args));
        })
    }

    /// Ends the trace.
    fn finish(mut self) -> std::io::Result<()> {
        self.flush_block()?;
        self.out.flush()
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

/// The iid of `text` in `table`, defined in `interned_data`'s field `field`
/// the first time.
fn intern(table: &mut Interner, text: &str, interned_data: &mut Fields, field: u32) -> u64 {
    let (iid, new) = table.intern(text.as_bytes());
    if new {
        interned_data.interned(field, iid, text.as_bytes());
    }
    iid
}

/// The JSON's `args` as debug annotations (the default domain left out);
/// `string` interns a string value.
fn annotations(d: &Details, mut string: impl FnMut(&str) -> u64) -> Vec<DebugAnnotation> {
    let mut out = Vec::new();
    let named = |iid: u64| DebugAnnotation {
        name_iid: Some(iid),
        ..Default::default()
    };
    if !d.domain.is_empty() {
        out.push(DebugAnnotation {
            string_value_iid: Some(string(&d.domain)),
            ..named(DOMAIN)
        });
    }
    if let Some((id, name)) = &d.category {
        out.push(DebugAnnotation {
            uint_value: Some(u64::from(*id)),
            ..named(CATEGORY)
        });
        if let Some(name) = name {
            out.push(DebugAnnotation {
                string_value_iid: Some(string(name)),
                ..named(CATEGORY_NAME)
            });
        }
    }
    if let Some(p) = d.payload {
        out.push(match p {
            Payload::U64(v) => DebugAnnotation {
                uint_value: Some(v),
                ..named(PAYLOAD)
            },
            Payload::I64(v) => DebugAnnotation {
                int_value: Some(v),
                ..named(PAYLOAD)
            },
            Payload::F64(v) => DebugAnnotation {
                double_value: Some(v),
                ..named(PAYLOAD)
            },
        });
    }
    if let Some(color) = d.color {
        out.push(DebugAnnotation {
            string_value_iid: Some(string(&css_color(color))),
            ..named(COLOR)
        });
    }
    if let Some(fields) = &d.fields {
        out.push(DebugAnnotation {
            dict_entries: dict(fields),
            ..named(FIELDS)
        });
    }
    out
}

/// Decoded payload fields as nested debug annotations (names not interned:
/// they are many and rarely repeat within a block).
fn dict(fields: &crate::model::Fields) -> Vec<DebugAnnotation> {
    fields
        .iter()
        .map(|(name, value)| DebugAnnotation {
            name: Some(name.clone()),
            ..value_annotation(value)
        })
        .collect()
}

/// A JSON value as a debug annotation's value (null: none).
fn value_annotation(v: &serde_json::Value) -> DebugAnnotation {
    use serde_json::Value;
    let mut a = DebugAnnotation::default();
    match v {
        Value::Null => {}
        Value::Bool(b) => a.bool_value = Some(*b),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                a.uint_value = Some(u);
            } else if let Some(i) = n.as_i64() {
                a.int_value = Some(i);
            } else {
                a.double_value = n.as_f64();
            }
        }
        Value::String(s) => a.string_value = Some(s.clone()),
        Value::Array(items) => a.array_values = items.iter().map(value_annotation).collect(),
        Value::Object(fields) => a.dict_entries = dict(fields),
    }
    a
}

/// A track event, beyond its time, name and details.
struct Event {
    /// `TrackEvent.type`: [`SLICE_BEGIN`], [`SLICE_END`], [`INSTANT`], [`COUNTER`].
    kind: u64,
    /// Its track, when not its sequence's default.
    track: Option<u64>,
    /// A counter's value.
    value: Option<Payload>,
    /// A flow it starts or ends (category `flow`).
    flow: Option<Flow>,
}

enum Flow {
    Starts(u64),
    Ends(u64),
}

fn slice(kind: u64, track: Option<u64>) -> Event {
    Event {
        kind,
        track,
        value: None,
        flow: None,
    }
}

impl Event {
    /// Its `TrackEvent` fields.
    fn encode(&self, t: &mut Fields, name_iid: Option<u64>, args: &[DebugAnnotation]) {
        t.uint(track_event::TYPE, self.kind);
        if let Some(iid) = name_iid {
            t.uint(track_event::NAME_IID, iid);
        }
        if let Some(track) = self.track {
            t.uint(track_event::TRACK_UUID, track);
        }
        for a in args {
            t.encoded(track_event::DEBUG_ANNOTATIONS, a);
        }
        // int64 counters as their two's complement; a u64 past i64 as a double.
        match self.value {
            Some(Payload::I64(v)) => t.uint(track_event::COUNTER_VALUE, v as u64),
            Some(Payload::U64(v)) if v <= i64::MAX as u64 => t.uint(track_event::COUNTER_VALUE, v),
            Some(Payload::U64(v)) => {
                t.fixed64(track_event::DOUBLE_COUNTER_VALUE, (v as f64).to_bits())
            }
            Some(Payload::F64(v)) => t.fixed64(track_event::DOUBLE_COUNTER_VALUE, v.to_bits()),
            None => {}
        }
        if let Some(flow) = &self.flow {
            t.bytes(track_event::CATEGORIES, b"flow");
            match flow {
                Flow::Starts(id) => t.fixed64(track_event::FLOW_IDS, *id),
                Flow::Ends(id) => t.fixed64(track_event::TERMINATING_FLOW_IDS, *id),
            }
        }
    }
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
                    flow: Some(Flow::Starts(flow)),
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
