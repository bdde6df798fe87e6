//! GPU activity in the Perfetto trace: a process track per GPU of each
//! process (named `GPU n: NAME (process)`), a child track per stream, kernels,
//! copies, sets and synchronizations as slices on it with their arguments
//! (as [`GpuEvent::args`] lists them, the JSON's `args`), and a flow from
//! each launch (an instant named after the API on the launching thread) to
//! what it launched.
//!
//! Each stream's slices are a packet sequence of their own, as a thread's
//! events are: the stream's track as its default, times as deltas, names
//! and texts interned, the arguments' names defined once per sequence
//! (their encoding: `annotations`).

use super::packets::{Args, Sequence};
use super::proto::{ProcessDescriptor, TrackDescriptor};
use super::{slice, uuid, Event, Flow, Writer, INSTANT, SLICE_BEGIN, SLICE_END};
use crate::model::{gpu_label, gpu_pid, GpuEvent, Launch, Process};

const GPU_TRACK: u64 = 6;
const STREAM_TRACK: u64 = 7;
const LAUNCH_FLOW: u64 = 8;

/// The flow id from a launch to its `nth` activity: unique per process,
/// correlation id and activity. The three packed, plus one, below 2^63
/// where they fit (a process index below 2^22, `nth` below 2^8: all but
/// the nodes of large graphs), so that consecutive launches' ids share
/// all but a byte or two and compress; hashed (8 random bytes, written
/// twice: they were 40% of a compressed GPU trace) with the top bit set
/// otherwise.
fn flow(p: &Process, correlation: u32, nth: u32) -> u64 {
    if p.index < 1 << 22 && nth < 1 << 8 {
        (u64::from(p.index) << 40 | u64::from(correlation) << 8 | u64::from(nth)) + 1
    } else {
        uuid(&[LAUNCH_FLOW, p.key, u64::from(correlation), u64::from(nth)]) | 1 << 63
    }
}

impl Writer<'_> {
    /// The launch, as an instant on its thread starting a flow to each
    /// activity it caused.
    pub(super) fn launch_instant(&mut self, p: &Process, l: &Launch) -> std::io::Result<()> {
        let flows = (0..l.activities).map(|nth| flow(p, l.correlation, nth));
        let event = Event {
            flow: Some(Flow::Starts(flows.collect())),
            ..slice(INSTANT, None)
        };
        let (packets, s) = self.on_thread();
        packets.event(s, l.start, event, Some(l.api), None)
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
            flow: g.launch.map(|_| Flow::Ends(flow(p, a.correlation, g.nth))),
            ..slice(SLICE_BEGIN, None)
        };
        let packets = &mut self.packets;
        packets.event_with(s, a.start, begin, Some(g.name), Args::Gpu(g))?;
        packets.event(s, a.end, slice(SLICE_END, None), None, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_ids_are_unique_packed_where_they_fit_and_hashed_apart_elsewhere() {
        let mut seen = std::collections::HashSet::new();
        for index in [0, 1, (1 << 22) - 1, 1 << 22] {
            let p = Process {
                index,
                key: u64::from(index),
                ..Default::default()
            };
            for correlation in [0, 1, 255, 256, u32::MAX] {
                for nth in [0, 1, 255, 256, u32::MAX] {
                    let id = flow(&p, correlation, nth);
                    assert!(seen.insert(id), "{index} {correlation} {nth}");
                    let packed = index < 1 << 22 && nth < 1 << 8;
                    assert_eq!(id < 1 << 63, packed, "{index} {correlation} {nth}");
                    assert_ne!(id, 0);
                }
            }
        }
    }
}
