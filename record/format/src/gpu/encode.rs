//! Writing the GPU file's records.

use super::{Activity, GpuClock, GpuRecord, Tag};
use crate::cupti::PEER_TO_PEER;
use crate::varint::{write as varint, zigzag};

fn string(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A kernel's, copy's or set's graph node, and its graph when it has one
/// (one byte for work launched on its own).
fn graph_node(out: &mut Vec<u8>, a: &Activity) {
    varint(out, a.graph_node);
    if a.graph_node != 0 {
        varint(out, a.graph.into());
    }
}

impl GpuRecord<'_> {
    /// Appends the record's bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            GpuRecord::Activity(a) => {
                out.push(a.tag);
                varint(out, a.start);
                varint(out, a.end.saturating_sub(a.start));
                for v in [a.device, a.context, a.stream, a.correlation] {
                    varint(out, v.into());
                }
                match Tag::from_byte(a.tag) {
                    Some(Tag::Kernel) => {
                        varint(out, a.name.into());
                        for v in a.grid.iter().chain(&a.block) {
                            varint(out, zigzag((*v).into()));
                        }
                        varint(out, a.registers.into());
                        varint(out, zigzag(a.static_shared.into()));
                        varint(out, zigzag(a.dynamic_shared.into()));
                        graph_node(out, a);
                        varint(out, a.local_per_thread.into());
                        varint(out, a.local_total.into());
                        varint(out, zigzag(a.grid_id));
                        varint(out, a.shared_executed.into());
                        // Each plus one: 0 when unknown.
                        for v in [a.launch_type, a.shared_limit] {
                            varint(out, v.map_or(0, |v| u64::from(v) + 1));
                        }
                    }
                    Some(Tag::Memcpy | Tag::Memset) => {
                        varint(out, a.bytes);
                        varint(out, a.copy_kind.into());
                        varint(out, a.src_kind.into());
                        varint(out, a.dst_kind.into());
                        graph_node(out, a);
                        if a.copy_kind == PEER_TO_PEER && a.tag == Tag::Memcpy as u8 {
                            let p = &a.peer;
                            for v in [p.src_device, p.src_context, p.dst_device, p.dst_context] {
                                varint(out, v.into());
                            }
                        }
                    }
                    _ => {
                        varint(out, a.sync_type.into());
                        varint(out, a.event.into());
                    }
                }
            }
            GpuRecord::KernelName(id, text) => {
                out.push(Tag::KernelName as u8);
                varint(out, (*id).into());
                string(out, text);
            }
            GpuRecord::ApiName(id, text) => {
                out.push(Tag::ApiName as u8);
                varint(out, *id);
                string(out, text);
            }
            GpuRecord::Context { context, device } => {
                out.push(Tag::Context as u8);
                varint(out, (*context).into());
                varint(out, (*device).into());
            }
            GpuRecord::Dropped(n) => {
                out.push(Tag::Dropped as u8);
                varint(out, *n);
            }
            GpuRecord::Clock(clock) => {
                out.push(Tag::Clock as u8);
                let (mode, offset) = match clock {
                    GpuClock::Monotonic => (0, 0),
                    GpuClock::Offset(offset) => (1, *offset),
                    GpuClock::RecordingClock => (2, 0),
                };
                varint(out, mode);
                varint(out, zigzag(offset));
            }
            GpuRecord::Device(d) => {
                out.push(Tag::Device as u8);
                varint(out, d.id.into());
                string(out, &d.name);
                for v in [d.compute_major, d.compute_minor] {
                    varint(out, v.into());
                }
                varint(out, d.memory);
                varint(out, d.multiprocessors.into());
                for v in d.limits.values() {
                    varint(out, v.into());
                }
                string(out, &d.uuid);
                string(out, &d.bus);
                varint(out, d.bandwidth_kbs);
            }
            GpuRecord::Api(c) => {
                out.push(Tag::Api as u8);
                varint(out, c.api);
                varint(out, c.tid.into());
                varint(out, c.start);
                varint(out, c.end.saturating_sub(c.start));
                varint(out, c.correlation.into());
            }
            GpuRecord::Exited => out.push(Tag::Exited as u8),
            GpuRecord::ThreadName(tid, name) => {
                out.push(Tag::ThreadName as u8);
                varint(out, (*tid).into());
                string(out, name);
            }
        }
    }
}
