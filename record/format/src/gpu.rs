//! GPU activity, as the recording tool learns it from CUPTI and writes it to
//! an image's [`GPU_FILE`].
//!
//! The file is [`GPU_MAGIC`] followed by records, each a tag byte ([`Tag`])
//! and LEB128 varints (strings: a varint length and UTF-8). Every time is
//! CUPTI's: CLOCK_MONOTONIC ns when CUPTI took the tool's clock, else its
//! own, which a [`Tag::Clock`] record's offset (before the activities)
//! places on CLOCK_MONOTONIC; an activity's end is written as its duration. The tool
//! appends whole CUPTI buffers at a time, so a file cut short by a crash
//! ends after its last whole record.
//!
//! The launch that caused an activity is a [`Tag::Api`] record (CUPTI's
//! record of that API call) carrying the same correlation id, its thread and
//! its times: that is what places GPU work under the thread's open NVTX
//! ranges.
//!
//! The numbers kept as they are (copy kinds, memory kinds, synchronization
//! types) are CUPTI's (`cupti_activity.h`); [`crate::cupti`] names them as
//! Nsight Systems does.

use std::borrow::Cow;

/// An image's GPU activity file.
pub const GPU_FILE: &str = "gpu";
/// First bytes of a [`GPU_FILE`].
pub const GPU_MAGIC: [u8; 8] = *b"NVTXRGP1";
/// The variable carrying `nvtxr record --gpu-syncs` to the tool (`1`: CUPTI's
/// synchronization records too).
pub const GPU_SYNCS_VAR: &str = "NVTXR_GPU_SYNCS";
/// The variable naming the CUPTI library to load (`nvtxr record` and the tool).
pub const CUPTI_VAR: &str = "NVTXR_CUPTI";
/// The variable carrying `nvtxr record --gpu` to the tool (`on`, `off`, `auto`).
pub const GPU_VAR: &str = "NVTXR_GPU";
/// The variable the CUDA driver reads to load a profiling library at `cuInit`.
pub const CUDA_INJECTION_VAR: &str = "CUDA_INJECTION64_PATH";

/// What a record of the GPU file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Tag {
    /// A kernel's execution.
    Kernel = 1,
    /// A memory copy.
    Memcpy = 2,
    /// A memory set.
    Memset = 3,
    /// A synchronization (stream, event, context; a stream waiting for an event).
    Sync = 4,
    /// A kernel's name: `id`, the mangled text.
    KernelName = 5,
    /// A traced API (a launch or copy entry point): `id`, its name.
    ApiName = 6,
    /// A CUDA context's device: `context`, `device`.
    Context = 7,
    /// CUPTI dropped records: their count.
    Dropped = 8,
    /// How GPU times were placed on CLOCK_MONOTONIC: 0 when CUPTI read the
    /// tool's clock itself (`cuptiActivityRegisterTimestampCallback`), else
    /// 1 and the offset added to CUPTI's times, measured once.
    Clock = 9,
    /// A GPU: its id, name, compute capability (major, minor), global
    /// memory in bytes and multiprocessors.
    Device = 10,
    /// A traced API call: its API's id ([`Tag::ApiName`]), thread (the
    /// kernel's id, `gettid`), start, duration and correlation id.
    Api = 11,
    /// A thread that made traced calls: its id and the OS's name for it
    /// (for a thread that makes no NVTX call, which has no other).
    ThreadName = 12,
}

impl Tag {
    /// The tag a record's first byte (or an [`Activity`]'s `tag`) holds.
    pub fn from_byte(v: u8) -> Option<Tag> {
        Some(match v {
            1 => Tag::Kernel,
            2 => Tag::Memcpy,
            3 => Tag::Memset,
            4 => Tag::Sync,
            5 => Tag::KernelName,
            6 => Tag::ApiName,
            7 => Tag::Context,
            8 => Tag::Dropped,
            9 => Tag::Clock,
            10 => Tag::Device,
            11 => Tag::Api,
            12 => Tag::ThreadName,
            _ => return None,
        })
    }
}

/// One kernel, copy, set or synchronization. The fields a kind does not
/// have are 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Activity {
    /// [`Tag::Kernel`], [`Tag::Memcpy`], [`Tag::Memset`] or [`Tag::Sync`].
    pub tag: u8,
    pub start: u64,
    pub end: u64,
    pub device: u32,
    pub context: u32,
    pub stream: u32,
    pub correlation: u32,
    /// Kernels: the name's id ([`Tag::KernelName`]).
    pub name: u32,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub registers: u16,
    pub static_shared: i32,
    pub dynamic_shared: i32,
    /// Copies and sets.
    pub bytes: u64,
    /// Copies: CUPTI's `CUpti_ActivityMemcpyKind`; sets: the value.
    pub copy_kind: u32,
    /// Copies: source and destination memory kinds; sets: the memory kind in `src_kind`.
    pub src_kind: u16,
    pub dst_kind: u16,
    /// Synchronizations: CUPTI's `CUpti_ActivitySynchronizationType`, and the event's id.
    pub sync_type: u32,
    pub event: u32,
}

/// A record of the GPU file.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuRecord<'a> {
    Activity(Activity),
    KernelName(u32, Cow<'a, str>),
    ApiName(u64, Cow<'a, str>),
    Context { context: u32, device: u32 },
    Dropped(u64),
    Clock { measured: bool, offset: i64 },
    Device(Device<'a>),
    Api(ApiCall),
    ThreadName(u32, Cow<'a, str>),
}

/// A traced CUDA API call (a launch, copy, set, graph launch or
/// synchronization), as CUPTI recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ApiCall {
    /// CUPTI's callback domain and id: `domain << 32 | cbid`.
    pub api: u64,
    /// The calling thread (`gettid`).
    pub tid: u32,
    pub start: u64,
    pub end: u64,
    pub correlation: u32,
}

/// A GPU, as CUPTI describes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Device<'a> {
    pub id: u32,
    /// Its name, as `nvidia-smi` shows it ("NVIDIA H200").
    pub name: Cow<'a, str>,
    pub compute_major: u32,
    pub compute_minor: u32,
    /// Global memory, bytes.
    pub memory: u64,
    pub multiprocessors: u32,
}

/// Appends `v` as a LEB128 varint (the GPU file's; [`crate::decode`] reads them).
pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

fn string(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
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
                    }
                    Some(Tag::Memcpy | Tag::Memset) => {
                        varint(out, a.bytes);
                        varint(out, a.copy_kind.into());
                        varint(out, a.src_kind.into());
                        varint(out, a.dst_kind.into());
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
            GpuRecord::Clock { measured, offset } => {
                out.push(Tag::Clock as u8);
                varint(out, u64::from(*measured));
                varint(out, zigzag(*offset));
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
            }
            GpuRecord::Api(c) => {
                out.push(Tag::Api as u8);
                varint(out, c.api);
                varint(out, c.tid.into());
                varint(out, c.start);
                varint(out, c.end.saturating_sub(c.start));
                varint(out, c.correlation.into());
            }
            GpuRecord::ThreadName(tid, name) => {
                out.push(Tag::ThreadName as u8);
                varint(out, (*tid).into());
                string(out, name);
            }
        }
    }
}

/// Reads the records of a GPU file's bytes (its magic first); stops at the
/// first record cut short or unknown. `Err` when the magic is wrong.
pub fn decode_gpu(bytes: &[u8]) -> Result<GpuRecords<'_>, String> {
    match bytes.strip_prefix(&GPU_MAGIC[..]) {
        Some(rest) => Ok(GpuRecords { bytes: rest, at: 0 }),
        None => Err("not a GPU activity file (bad magic)".into()),
    }
}

/// The records of a GPU file, in order.
#[derive(Clone)]
pub struct GpuRecords<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> GpuRecords<'a> {
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
            bytes: self.bytes,
            at: position,
        }
        .record()
    }

    // Inlined: a kernel's record is 17 of them.
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        crate::decode::varint(self.bytes, &mut self.at)
    }
    #[inline(always)]
    fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }
    #[inline(always)]
    fn i32(&mut self) -> Option<i32> {
        i32::try_from(unzigzag(self.varint()?)).ok()
    }
    fn text(&mut self) -> Option<Cow<'a, str>> {
        let n = usize::try_from(self.varint()?).ok()?;
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(String::from_utf8_lossy(s))
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
                    }
                    Tag::Memcpy | Tag::Memset => {
                        a.bytes = self.varint()?;
                        a.copy_kind = self.u32()?;
                        a.src_kind = u16::try_from(self.varint()?).ok()?;
                        a.dst_kind = u16::try_from(self.varint()?).ok()?;
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
            Tag::Clock => GpuRecord::Clock {
                measured: self.varint()? != 0,
                offset: unzigzag(self.varint()?),
            },
            Tag::Device => GpuRecord::Device(Device {
                id: self.u32()?,
                name: self.text()?,
                compute_major: self.u32()?,
                compute_minor: self.u32()?,
                memory: self.varint()?,
                multiprocessors: self.u32()?,
            }),
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

/// An activity's kind, as the outputs name it.
pub fn tag_name(tag: u8) -> &'static str {
    match Tag::from_byte(tag) {
        Some(Tag::Kernel) => "kernel",
        Some(Tag::Memcpy) => "memcpy",
        Some(Tag::Memset) => "memset",
        Some(Tag::Sync) => "sync",
        _ => "gpu",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_records_round_trip_and_stop_at_a_cut() {
        let kernel = Activity {
            tag: Tag::Kernel as u8,
            start: 1_000_000_000_123,
            end: 1_000_000_004_000,
            device: 1,
            context: 3,
            stream: 13,
            correlation: 77,
            name: 2,
            grid: [128, 1, -1],
            block: [256, 1, 1],
            registers: 32,
            static_shared: 1024,
            dynamic_shared: 0,
            ..Activity::default()
        };
        let copy = Activity {
            tag: Tag::Memcpy as u8,
            start: 5,
            end: 9,
            bytes: 1 << 40,
            copy_kind: 1,
            src_kind: 1,
            dst_kind: 3,
            ..Activity::default()
        };
        let sync = Activity {
            tag: Tag::Sync as u8,
            start: 9,
            end: 19,
            sync_type: 3,
            event: 4,
            ..Activity::default()
        };
        let records = vec![
            GpuRecord::Clock {
                measured: true,
                offset: -42,
            },
            GpuRecord::KernelName(2, "_Z6kernelPfi".into()),
            GpuRecord::ApiName(2 << 32 | 211, "cudaLaunchKernel_v7000".into()),
            GpuRecord::Context {
                context: 3,
                device: 1,
            },
            GpuRecord::Activity(kernel),
            GpuRecord::Activity(copy),
            GpuRecord::Activity(sync),
            GpuRecord::Api(ApiCall {
                api: 2 << 32 | 211,
                tid: 4242,
                start: 1_000_000_000_000,
                end: 1_000_000_000_900,
                correlation: 77,
            }),
            GpuRecord::ThreadName(4242, "pt_autograd_0".into()),
            GpuRecord::Dropped(12),
            GpuRecord::Device(Device {
                id: 1,
                name: "NVIDIA H200".into(),
                compute_major: 9,
                compute_minor: 0,
                memory: 150_000_000_000,
                multiprocessors: 132,
            }),
        ];
        let mut bytes = GPU_MAGIC.to_vec();
        for r in &records {
            r.encode(&mut bytes);
        }
        let decoded: Vec<_> = decode_gpu(&bytes).unwrap().collect();
        assert_eq!(decoded, records);
        // Each record read again at its position.
        let mut it = decode_gpu(&bytes).unwrap();
        for r in &records {
            let position = it.position();
            assert_eq!(it.next().as_ref(), Some(r));
            assert_eq!(it.record_at(position).as_ref(), Some(r));
        }
        assert_eq!(it.record_at(it.position()), None);
        for cut in GPU_MAGIC.len()..bytes.len() {
            let mut it = decode_gpu(&bytes[..cut]).unwrap();
            let n = it.by_ref().count();
            assert!(n < records.len(), "cut at {cut}");
            assert_eq!(
                decode_gpu(&bytes[..cut]).unwrap().collect::<Vec<_>>(),
                records[..n]
            );
        }
        assert!(decode_gpu(b"NVTXRCK2").is_err());
    }
}
