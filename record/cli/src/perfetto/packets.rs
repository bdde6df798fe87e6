//! The trace's packets: framed into blocks, each compressed and written
//! out; the sequences they belong to, with their interned names and delta
//! clocks; and the track events written into them.

use super::annotations::{
    annotations, encode_gpu_annotations, gpu_annotations, gpu_arg_iid, GpuArgs, ANNOTATIONS,
};
use super::intern::{intern, Interner};
use super::proto::*;
use super::wire::{interned, packet, track_event, Fields, TRACE_PACKET};
use crate::model::{Arg, Details, GpuEvent, Payload};
use smallvec::SmallVec;
use std::io::Write;

/// Uncompressed bytes of packets per compressed block (Perfetto reads up to 512 KB).
pub(super) const BLOCK: usize = 256 << 10;
/// zlib's level: 1, 4.0 bytes per event on the scale loop (the budget is 6) at a
/// fifth less CPU than level 2 (2.7 bytes per event).
pub(super) const LEVEL: u32 = 1;
/// Names interned on one sequence before its interned state is cleared.
pub(super) const MAX_INTERNED: usize = 16384;
/// The incremental clock each thread sequence defines.
pub(super) const DELTA_CLOCK: u32 = CLOCK_SEQUENCE_FIRST;

/// A packet sequence: its id, interned names and strings, delta clock.
#[derive(Default)]
pub(super) struct Sequence {
    pub(super) id: u32,
    /// Thread sequences: the delta clock's last value; process sequences
    /// write absolute timestamps.
    pub(super) delta_from: Option<u64>,
    /// The track events default to.
    pub(super) track: Option<u64>,
    pub(super) names: Interner,
    pub(super) strings: Interner,
    /// A GPU stream's: the GPU's argument names are defined too.
    pub(super) gpu: bool,
    /// Set when the next packet must clear the incremental state first.
    pub(super) fresh: bool,
}

/// The trace's packets: framed into a block, each block compressed and
/// written out.
pub(super) struct Packets<'a> {
    pub(super) out: &'a mut dyn Write,
    /// Framed packets waiting to be compressed.
    pub(super) block: Vec<u8>,
    pub(super) deflate: flate2::Compress,
    /// The last block, compressed; then framed as a packet.
    pub(super) compressed: Vec<u8>,
    pub(super) framed: Vec<u8>,
    /// Where the trace's clock starts; the delta clocks start there.
    pub(super) origin: u64,
    /// The clock timestamps are on: CLOCK_MONOTONIC, or CLOCK_REALTIME
    /// when recordings are merged on the wall clock.
    pub(super) clock: u32,
}

impl Packets<'_> {
    /// Appends one packet, whose fields `body` writes, to the block.
    pub(super) fn packet(&mut self, body: impl FnOnce(&mut Fields)) -> std::io::Result<()> {
        Fields(&mut self.block).message(TRACE_PACKET, body);
        if self.block.len() >= BLOCK {
            self.flush_block()?;
        }
        Ok(())
    }

    pub(super) fn flush_block(&mut self) -> std::io::Result<()> {
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

    pub(super) fn descriptor(
        &mut self,
        sequence: &Sequence,
        d: TrackDescriptor,
    ) -> std::io::Result<()> {
        self.packet(|p| {
            p.uint(packet::TRUSTED_PACKET_SEQUENCE_ID, sequence.id.into());
            p.encoded(packet::TRACK_DESCRIPTOR, &d);
        })
    }

    /// The first packet of a sequence (or the one after its state was
    /// cleared): the clock, the defaults, the annotation names.
    pub(super) fn clear(&mut self, s: &mut Sequence) -> std::io::Result<()> {
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
                if s.gpu {
                    for arg in Arg::ALL {
                        let name = arg.name().as_bytes();
                        i.interned(interned::DEBUG_ANNOTATION_NAMES, gpu_arg_iid(arg), name);
                    }
                }
            });
        })
    }

    /// Writes one track event at `time` on sequence `s`, interning its name
    /// and annotation strings there.
    pub(super) fn event(
        &mut self,
        s: &mut Sequence,
        time: u64,
        event: Event,
        name: Option<&str>,
        details: Option<&Details>,
    ) -> std::io::Result<()> {
        let args = details.map_or(Args::None, Args::Details);
        self.event_with(s, time, event, name, args)
    }

    /// [`Packets::event`] with its arguments from `args`.
    pub(super) fn event_with(
        &mut self,
        s: &mut Sequence,
        time: u64,
        event: Event,
        name: Option<&str>,
        args: Args,
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
            let mut annotated = Vec::new();
            let mut gpu = GpuArgs::new();
            if name.is_some() || !matches!(args, Args::None) {
                p.message_if_any(packet::INTERNED_DATA, |i| {
                    name_iid =
                        name.map(|name| intern(&mut s.names, name, i, interned::EVENT_NAMES));
                    match args {
                        Args::None => {}
                        Args::Details(d) => {
                            annotated = annotations(d, |text| {
                                intern(
                                    &mut s.strings,
                                    text,
                                    i,
                                    interned::DEBUG_ANNOTATION_STRING_VALUES,
                                )
                            })
                        }
                        Args::Gpu(g) => gpu_annotations(g, &mut s.strings, i, &mut gpu),
                    }
                });
            }
            p.message(packet::TRACK_EVENT, |t| {
                event.encode(t, name_iid, &annotated);
                encode_gpu_annotations(t, &gpu);
            });
        })
    }

    /// Ends the trace.
    pub(super) fn finish(mut self) -> std::io::Result<()> {
        self.flush_block()?;
        self.out.flush()
    }
}

/// An event's arguments: none, an NVTX event's details, a GPU activity's.
pub(super) enum Args<'x> {
    None,
    Details(&'x Details),
    Gpu(&'x GpuEvent<'x>),
}

/// A track event, beyond its time, name and details.
pub(super) struct Event {
    /// `TrackEvent.type`: [`SLICE_BEGIN`], [`SLICE_END`], [`INSTANT`], [`COUNTER`].
    pub(super) kind: u64,
    /// Its track, when not its sequence's default.
    pub(super) track: Option<u64>,
    /// A counter's value.
    pub(super) value: Option<Payload>,
    /// A flow it starts or ends (category `flow`).
    pub(super) flow: Option<Flow>,
}

pub(super) enum Flow {
    /// The flows that start here: one, or a launch's, one per activity it
    /// caused (a graph's nodes each have theirs; none for a call that
    /// only waits).
    Starts(SmallVec<[u64; 1]>),
    Ends(u64),
}

pub(super) fn slice(kind: u64, track: Option<u64>) -> Event {
    Event {
        kind,
        track,
        value: None,
        flow: None,
    }
}

impl Event {
    /// Its `TrackEvent` fields.
    pub(super) fn encode(&self, t: &mut Fields, name_iid: Option<u64>, args: &[DebugAnnotation]) {
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
                Flow::Starts(ids) => {
                    for id in ids {
                        t.fixed64(track_event::FLOW_IDS, *id)
                    }
                }
                Flow::Ends(id) => t.fixed64(track_event::TERMINATING_FLOW_IDS, *id),
            }
        }
    }
}
