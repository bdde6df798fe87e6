//! GPU activity in the Perfetto trace: a process track per GPU of each
//! process (named `GPU n: NAME (process)`), a child track per stream, kernels,
//! copies, sets and synchronizations as slices on it with their arguments
//! (as [`GpuEvent::args`] lists them, the JSON's `args`), and a flow from
//! each launch (an instant named after the API on the launching thread) to
//! what it launched.
//!
//! Each stream's slices are a packet sequence of their own, as a thread's
//! events are: the stream's track as its default, times as deltas, names
//! and texts interned, the arguments' names defined once per sequence. The
//! arguments are encoded by hand (prost messages per kernel cost 4 times as
//! much, `docs/gpu.md`).

use super::packets::{gpu_arg_iid, intern, Args, Sequence};
use super::proto::{ProcessDescriptor, TrackDescriptor};
use super::wire::{debug_annotation as da, interned, track_event, Fields};
use super::{slice, uuid, Event, Flow, Writer, INSTANT, SLICE_BEGIN, SLICE_END};
use crate::model::{gpu_label, gpu_pid, Arg, ArgValue, GpuEvent, Launch, Process};
use smallvec::SmallVec;

const GPU_TRACK: u64 = 6;
const STREAM_TRACK: u64 = 7;
const LAUNCH_FLOW: u64 = 8;

/// A launch's flow id: unique per process and correlation id.
fn flow(p: &Process, correlation: u32) -> u64 {
    uuid(&[LAUNCH_FLOW, p.key, u64::from(correlation)])
}

impl Writer<'_> {
    /// The launch, as an instant starting its flow on its thread.
    pub(super) fn launch_instant(&mut self, p: &Process, l: &Launch) -> std::io::Result<()> {
        let event = Event {
            flow: Some(Flow::Starts(flow(p, l.correlation))),
            ..slice(INSTANT, None)
        };
        let (packets, s) = self.on_thread();
        packets.event(s, l.start, event, Some(&l.api), None)
    }

    /// An activity as a slice on its GPU's stream track, ending its launch's flow.
    pub(super) fn gpu_slice(&mut self, p: &Process, g: &GpuEvent) -> std::io::Result<()> {
        self.describe_process(p)?;
        let a = g.activity;
        let gpu = uuid(&[GPU_TRACK, p.key, u64::from(a.device)]);
        let stream = uuid(&[
            STREAM_TRACK,
            p.key,
            u64::from(a.device),
            u64::from(a.stream),
        ]);
        let new_gpu = self.tracks().described.insert(gpu);
        let new_stream = self.tracks().described.insert(stream);
        let (packets, s) = self.on_process();
        if new_gpu {
            packets.descriptor(
                s,
                TrackDescriptor {
                    uuid: Some(gpu),
                    process: Some(ProcessDescriptor {
                        pid: Some(gpu_pid(p, a.device) as i32),
                        process_name: Some(gpu_label(p, a.device, g.gpu)),
                        process_labels: Vec::new(),
                    }),
                    ..Default::default()
                },
            )?;
        }
        if new_stream {
            packets.descriptor(
                s,
                TrackDescriptor {
                    uuid: Some(stream),
                    parent_uuid: Some(gpu),
                    name: Some(format!("stream {}", a.stream)),
                    ..Default::default()
                },
            )?;
        }
        if new_stream {
            let origin = self.packets.origin;
            let sequence = Sequence {
                gpu: true,
                ..self.sequence(Some(origin), Some(stream))
            };
            self.tracks().streams.insert(stream, sequence);
        }
        let tracks = self.process.as_mut().expect("described before its events");
        let s = tracks
            .streams
            .get_mut(&stream)
            .expect("made with its track");
        let begin = Event {
            flow: g.launch.map(|_| Flow::Ends(flow(p, a.correlation))),
            ..slice(SLICE_BEGIN, None)
        };
        let packets = &mut self.packets;
        packets.event_with(s, a.start, begin, Some(g.name), Args::Gpu(g))?;
        packets.event(s, a.end, slice(SLICE_END, None), None, None)
    }
}

/// A GPU argument ready to encode: its name's iid and its value, texts
/// interned.
pub(super) struct Annotation {
    name: u64,
    value: Value,
}

enum Value {
    Uint(u64),
    Int(i64),
    /// An interned text.
    Text(u64),
    Dims([i32; 3]),
    /// `launched by`: `api`, `thread`, `range` (names and values interned).
    Launch([(u64, Option<Value2>); 3]),
}

/// A value inside `launched by`.
#[derive(Clone, Copy)]
enum Value2 {
    Uint(u64),
    Text(u64),
}

pub(super) type GpuArgs = SmallVec<[Annotation; 12]>;

/// The activity's arguments, their names and texts interned on `s` (new
/// ones defined in `interned_data`).
pub(super) fn interned_args(g: &GpuEvent, s: &mut Sequence, i: &mut Fields) -> GpuArgs {
    let mut out = GpuArgs::new();
    let text = |s: &mut Sequence, i: &mut Fields, t: &str| {
        intern(
            &mut s.strings,
            t,
            i,
            interned::DEBUG_ANNOTATION_STRING_VALUES,
        )
    };
    g.args(|n, v| {
        let value = match v {
            ArgValue::Uint(v) => Value::Uint(v),
            ArgValue::Int(v) => Value::Int(v),
            ArgValue::Text(t) => Value::Text(text(s, i, t)),
            ArgValue::Dims(d) => Value::Dims(d),
            ArgValue::Launch(l) => Value::Launch([
                (
                    gpu_arg_iid(Arg::Api),
                    Some(Value2::Text(text(s, i, &l.api))),
                ),
                (gpu_arg_iid(Arg::Thread), Some(Value2::Uint(l.tid.into()))),
                (
                    gpu_arg_iid(Arg::Range),
                    l.range.as_deref().map(|r| Value2::Text(text(s, i, r))),
                ),
            ]),
        };
        out.push(Annotation {
            name: gpu_arg_iid(n),
            value,
        });
    });
    out
}

/// Writes the arguments into a `TrackEvent`.
pub(super) fn encode_args(t: &mut Fields, args: &GpuArgs) {
    for a in args {
        t.message(track_event::DEBUG_ANNOTATIONS, |d| {
            d.uint(da::NAME_IID, a.name);
            match &a.value {
                Value::Uint(v) => d.uint(da::UINT_VALUE, *v),
                Value::Int(v) => int(d, *v),
                Value::Text(iid) => d.uint(da::STRING_VALUE_IID, *iid),
                Value::Dims(dims) => {
                    for v in dims {
                        d.message(da::ARRAY_VALUES, |e| int(e, i64::from(*v)));
                    }
                }
                Value::Launch(entries) => {
                    for (name, value) in entries {
                        d.message(da::DICT_ENTRIES, |e| {
                            e.uint(da::NAME_IID, *name);
                            match value {
                                Some(Value2::Uint(v)) => e.uint(da::UINT_VALUE, *v),
                                Some(Value2::Text(iid)) => e.uint(da::STRING_VALUE_IID, *iid),
                                None => {}
                            }
                        });
                    }
                }
            }
        });
    }
}

/// An integer as the JSON-built annotations wrote it: `uint_value` when
/// not negative.
fn int(d: &mut Fields, v: i64) {
    match u64::try_from(v) {
        Ok(u) => d.uint(da::UINT_VALUE, u),
        Err(_) => d.uint(da::INT_VALUE, v as u64),
    }
}
