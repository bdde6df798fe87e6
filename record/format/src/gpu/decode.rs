//! Reading a GPU file's records: in order, or one again at its position.

use super::{
    Activity, ApiCall, Device, GpuClock, GpuRecord, Limits, Peer, Tag, GPU_MAGIC, GPU_MAGIC_V1,
    GPU_MAGIC_V2, GPU_MAGIC_V3, GPU_MAGIC_V4, GPU_MAGIC_V5, LIMITS, LIMITS_V2,
};
use crate::cupti::PEER_TO_PEER;
use crate::varint::unzigzag;
use std::borrow::Cow;

/// Reads the records of a GPU file's bytes (its magic first, of any
/// version); stops at the first record cut short or unknown. `Err` when
/// the magic is wrong.
pub fn decode_gpu(bytes: &[u8]) -> Result<GpuRecords<'_>, String> {
    let (magic, bytes) = bytes
        .split_at_checked(GPU_MAGIC.len())
        .ok_or("not a GPU activity file (too short)")?;
    let version = [
        GPU_MAGIC_V1,
        GPU_MAGIC_V2,
        GPU_MAGIC_V3,
        GPU_MAGIC_V4,
        GPU_MAGIC_V5,
        GPU_MAGIC,
    ]
    .iter()
    .position(|m| m == magic)
    .ok_or("not a GPU activity file (bad magic)")? as u8
        + 1;
    Ok(GpuRecords {
        bytes,
        at: 0,
        version,
    })
}

/// The records of a GPU file, in order.
#[derive(Clone)]
pub struct GpuRecords<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The file's version: from 2 ([`GPU_MAGIC_V2`]), kernels, copies and
    /// sets end with their graph node, kernels then with their local
    /// memory, grid id and shared memory, peer-to-peer copies with their
    /// ends, devices with their limits; from 3 ([`GPU_MAGIC_V3`]), kernels
    /// then with their launch type and shared memory limit; from 4
    /// ([`GPU_MAGIC_V4`]), the tool marks its process's exit
    /// ([`Tag::Exited`]); from 5 ([`GPU_MAGIC_V5`]), devices end with nine
    /// more limits, their UUID, bus location and bandwidth; from 6
    /// ([`GPU_MAGIC`]), the clock may be [`GpuClock::RecordingClock`].
    version: u8,
}

impl<'a> GpuRecords<'a> {
    /// Whether a missing [`Tag::Exited`] record says the image ended
    /// without its exit handlers (files of version 4 on).
    pub fn marks_exit(&self) -> bool {
        self.version >= 4
    }

    /// Bytes after the last whole record (a file cut by a crash, or damage).
    pub fn unread(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// Where the next record starts, for [`GpuRecords::record_at`].
    pub fn position(&self) -> usize {
        self.at
    }

    /// The record at `position` (as [`GpuRecords::position`] gave it on the
    /// same file), read again.
    pub fn record_at(&self, position: usize) -> Option<GpuRecord<'a>> {
        GpuRecords {
            at: position,
            ..self.clone()
        }
        .record()
    }

    // Inlined: a kernel's record is 17 of them.
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        crate::varint::read(self.bytes, &mut self.at)
    }
    #[inline(always)]
    fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }
    #[inline(always)]
    fn i32(&mut self) -> Option<i32> {
        i32::try_from(unzigzag(self.varint()?)).ok()
    }
    /// A byte written plus one, 0 standing for unknown.
    fn known(&mut self) -> Option<Option<u8>> {
        match self.varint()? {
            0 => Some(None),
            v => Some(Some(u8::try_from(v - 1).ok()?)),
        }
    }
    fn text(&mut self) -> Option<Cow<'a, str>> {
        let n = usize::try_from(self.varint()?).ok()?;
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(String::from_utf8_lossy(s))
    }

    /// A kernel's, copy's or set's graph node and graph (see `encode`).
    fn graph_node(&mut self, a: &mut Activity) -> Option<()> {
        if self.version >= 2 {
            a.graph_node = self.varint()?;
            if a.graph_node != 0 {
                a.graph = self.u32()?;
            }
        }
        Some(())
    }

    fn record(&mut self) -> Option<GpuRecord<'a>> {
        let tag = Tag::from_byte(*self.bytes.get(self.at)?)?;
        self.at += 1;
        Some(match tag {
            Tag::Kernel | Tag::Memcpy | Tag::Memset | Tag::Sync => {
                let mut a = Activity {
                    tag: tag as u8,
                    start: self.varint()?,
                    ..Activity::default()
                };
                a.end = a.start.saturating_add(self.varint()?);
                a.device = self.u32()?;
                a.context = self.u32()?;
                a.stream = self.u32()?;
                a.correlation = self.u32()?;
                match tag {
                    Tag::Kernel => {
                        a.name = self.u32()?;
                        for v in a.grid.iter_mut().chain(a.block.iter_mut()) {
                            *v = self.i32()?;
                        }
                        a.registers = u16::try_from(self.varint()?).ok()?;
                        a.static_shared = self.i32()?;
                        a.dynamic_shared = self.i32()?;
                        self.graph_node(&mut a)?;
                        if self.version >= 2 {
                            a.local_per_thread = self.u32()?;
                            a.local_total = self.u32()?;
                            a.grid_id = unzigzag(self.varint()?);
                            a.shared_executed = self.u32()?;
                        }
                        if self.version >= 3 {
                            a.launch_type = self.known()?;
                            a.shared_limit = self.known()?;
                        }
                    }
                    Tag::Memcpy | Tag::Memset => {
                        a.bytes = self.varint()?;
                        a.copy_kind = self.u32()?;
                        a.src_kind = u16::try_from(self.varint()?).ok()?;
                        a.dst_kind = u16::try_from(self.varint()?).ok()?;
                        self.graph_node(&mut a)?;
                        if self.version >= 2 && tag == Tag::Memcpy && a.copy_kind == PEER_TO_PEER {
                            a.peer = Peer {
                                src_device: self.u32()?,
                                src_context: self.u32()?,
                                dst_device: self.u32()?,
                                dst_context: self.u32()?,
                            };
                        }
                    }
                    _ => {
                        a.sync_type = self.u32()?;
                        a.event = self.u32()?;
                    }
                }
                GpuRecord::Activity(a)
            }
            Tag::KernelName => GpuRecord::KernelName(self.u32()?, self.text()?),
            Tag::ApiName => GpuRecord::ApiName(self.varint()?, self.text()?),
            Tag::Context => GpuRecord::Context {
                context: self.u32()?,
                device: self.u32()?,
            },
            Tag::Dropped => GpuRecord::Dropped(self.varint()?),
            Tag::Clock => {
                let mode = self.varint()?;
                let offset = unzigzag(self.varint()?);
                GpuRecord::Clock(match mode {
                    0 => GpuClock::Monotonic,
                    1 => GpuClock::Offset(offset),
                    2 => GpuClock::RecordingClock,
                    _ => return None,
                })
            }
            Tag::Device => {
                let mut d = Device {
                    id: self.u32()?,
                    name: self.text()?,
                    compute_major: self.u32()?,
                    compute_minor: self.u32()?,
                    memory: self.varint()?,
                    multiprocessors: self.u32()?,
                    ..Device::default()
                };
                let held = match self.version {
                    1 => 0,
                    2..=4 => LIMITS_V2,
                    _ => LIMITS,
                };
                let mut limits = [0; LIMITS];
                for v in &mut limits[..held] {
                    *v = self.u32()?;
                }
                d.limits = Limits::from_values(limits);
                if self.version >= 5 {
                    d.uuid = self.text()?;
                    d.bus = self.text()?;
                    d.bandwidth_kbs = self.varint()?;
                }
                GpuRecord::Device(d)
            }
            Tag::Api => {
                let (api, tid, start) = (self.varint()?, self.u32()?, self.varint()?);
                GpuRecord::Api(ApiCall {
                    api,
                    tid,
                    start,
                    end: start.saturating_add(self.varint()?),
                    correlation: self.u32()?,
                })
            }
            Tag::ThreadName => GpuRecord::ThreadName(self.u32()?, self.text()?),
            Tag::Exited => GpuRecord::Exited,
        })
    }
}

impl<'a> Iterator for GpuRecords<'a> {
    type Item = GpuRecord<'a>;
    fn next(&mut self) -> Option<GpuRecord<'a>> {
        let at = self.at;
        let r = self.record();
        if r.is_none() {
            self.at = at;
        }
        r
    }
}
