//! GPU activity, as the recording tool learns it from CUPTI and writes it to
//! an image's [`GPU_FILE`].
//!
//! The file is [`GPU_MAGIC`] followed by records, each a tag byte ([`Tag`])
//! and LEB128 varints (strings: a varint length and UTF-8). Files of the
//! earlier versions are read as well: written before the exit marker
//! ([`GPU_MAGIC_V3`]: whether the process ran its exit handlers is not
//! known), before kernels' launch types
//! and shared memory limits ([`GPU_MAGIC_V2`]: unknown), or before graph
//! nodes and peer-to-peer copies' ends ([`GPU_MAGIC_V1`]: their work is in
//! no graph). Every time is
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
//! types, launch types, shared memory limits) are CUPTI's
//! (`cupti_activity.h`); [`crate::cupti`] gives Nsight Systems' ids and
//! names of them.

mod decode;
mod encode;

pub use decode::{decode_gpu, GpuRecords};
use std::borrow::Cow;

/// An image's GPU activity file.
pub const GPU_FILE: &str = "gpu";
/// First bytes of a [`GPU_FILE`].
pub const GPU_MAGIC: [u8; 8] = *b"NVTXRGP4";
/// First bytes of a [`GPU_FILE`] written before [`Tag::Exited`] records.
pub const GPU_MAGIC_V3: [u8; 8] = *b"NVTXRGP3";
/// First bytes of a [`GPU_FILE`] written before kernels' launch types and
/// shared memory limits were recorded (a kernel's record ends with the
/// shared memory the driver set).
pub const GPU_MAGIC_V2: [u8; 8] = *b"NVTXRGP2";
/// First bytes of a [`GPU_FILE`] written before graph nodes and peer-to-peer
/// copies' ends were recorded (a kernel's, copy's and set's record ends
/// before its graph node).
pub const GPU_MAGIC_V1: [u8; 8] = *b"NVTXRGP1";
/// The variable carrying `nvtxr record --gpu-syncs` to the tool (`1`: CUPTI's
/// synchronization records too).
pub const GPU_SYNCS_VAR: &str = "NVTXR_GPU_SYNCS";
/// The variable carrying `nvtxr record --gpu-flush-interval` to the tool:
/// milliseconds between the hand-overs of CUPTI's completed records while
/// the program runs (`0`: at exit, and as CUPTI's buffers fill, only).
pub const GPU_FLUSH_VAR: &str = "NVTXR_GPU_FLUSH_MS";
/// The interval of [`GPU_FLUSH_VAR`] when none is given: a process that
/// ends without its exit handlers (killed, `_exit`, `exec`) loses at most
/// about this much of its GPU activity.
pub const GPU_FLUSH_DEFAULT_MS: u64 = 1000;
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
    /// The process ran its exit handlers, the tool's among them, which
    /// asked CUPTI for every record it still held. A file of this version
    /// without one, from a tool that recorded, is of an image that ended
    /// otherwise (killed, `_exit`, `exec`): what CUPTI held then is missing.
    Exited = 13,
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
            13 => Tag::Exited,
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
    /// Kernels: local memory per thread and in all (bytes), the grid's id
    /// (unique in the process, CUPTI's `gridId`) and the shared memory the
    /// driver set (bytes).
    pub local_per_thread: u32,
    pub local_total: u32,
    pub grid_id: i64,
    pub shared_executed: u32,
    /// Kernels: CUPTI's `launchType` (`CUpti_ActivityLaunchType`) and
    /// `shmemLimitConfig` (`CUpti_FuncShmemLimitConfig`); `None` in files
    /// written before they were recorded.
    pub launch_type: Option<u8>,
    pub shared_limit: Option<u8>,
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
    /// Peer-to-peer copies ([`crate::cupti::PEER_TO_PEER`]): the source's
    /// and the destination's device and context.
    pub peer: Peer,
    /// Kernels, copies and sets run as a node of a CUDA graph: CUPTI's
    /// `graphNodeId` (unique in the process) and `graphId`; 0 for work
    /// launched on its own.
    pub graph_node: u64,
    pub graph: u32,
}

/// The two ends of a peer-to-peer copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Peer {
    pub src_device: u32,
    pub src_context: u32,
    pub dst_device: u32,
    pub dst_context: u32,
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
    Exited,
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
    pub limits: Limits,
}

/// A GPU's sizes and limits, as CUPTI's device record gives them (what an
/// occupancy is computed from); 0 where not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// L2 cache, bytes.
    pub l2_cache: u32,
    pub clock_khz: u32,
    pub threads_per_warp: u32,
    pub threads_per_block: u32,
    pub registers_per_block: u32,
    /// Shared memory per block, bytes.
    pub shared_per_block: u32,
    pub warps_per_sm: u32,
    pub blocks_per_sm: u32,
    /// Shared memory per multiprocessor, bytes.
    pub shared_per_sm: u32,
    pub registers_per_sm: u32,
}

impl Limits {
    /// Every limit, in the order of the fields (the GPU file's order).
    pub fn values(&self) -> [u32; 10] {
        [
            self.l2_cache,
            self.clock_khz,
            self.threads_per_warp,
            self.threads_per_block,
            self.registers_per_block,
            self.shared_per_block,
            self.warps_per_sm,
            self.blocks_per_sm,
            self.shared_per_sm,
            self.registers_per_sm,
        ]
    }

    /// The limits [`Limits::values`] gave.
    pub fn from_values(v: [u32; 10]) -> Limits {
        let [l2_cache, clock_khz, threads_per_warp, threads_per_block, registers_per_block, shared_per_block, warps_per_sm, blocks_per_sm, shared_per_sm, registers_per_sm] =
            v;
        Limits {
            l2_cache,
            clock_khz,
            threads_per_warp,
            threads_per_block,
            registers_per_block,
            shared_per_block,
            warps_per_sm,
            blocks_per_sm,
            shared_per_sm,
            registers_per_sm,
        }
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
            local_per_thread: 16,
            local_total: 1 << 22,
            grid_id: 1 << 40,
            shared_executed: 102_400,
            launch_type: Some(1),
            shared_limit: Some(1),
            ..Activity::default()
        };
        let node = Activity {
            graph_node: 1 << 33,
            graph: 7,
            // As read from an older file: unknown.
            launch_type: None,
            shared_limit: None,
            ..kernel
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
        let peer = Activity {
            copy_kind: crate::cupti::PEER_TO_PEER,
            peer: Peer {
                src_device: 1,
                src_context: 2,
                dst_device: 0,
                dst_context: 1,
            },
            ..copy
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
            GpuRecord::Activity(node),
            GpuRecord::Activity(copy),
            GpuRecord::Activity(peer),
            GpuRecord::Activity(sync),
            GpuRecord::Api(ApiCall {
                api: 2 << 32 | 211,
                tid: 4242,
                start: 1_000_000_000_000,
                end: 1_000_000_000_900,
                correlation: 77,
            }),
            GpuRecord::ThreadName(4242, "pt_autograd_0".into()),
            GpuRecord::Exited,
            GpuRecord::Dropped(12),
            GpuRecord::Device(Device {
                id: 1,
                name: "NVIDIA H200".into(),
                compute_major: 9,
                compute_minor: 0,
                memory: 150_000_000_000,
                multiprocessors: 132,
                limits: Limits::from_values([1, 2, 3, 4, 5, 6, 7, 8, 9, 1 << 31]),
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

    /// Damaged files of any version: read up to the damage, never a
    /// panic (random bytes after the magic, each record read again at its
    /// position).
    #[test]
    fn damaged_files_are_read_without_a_panic() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..20_000 {
            let magic = [GPU_MAGIC, GPU_MAGIC_V3, GPU_MAGIC_V2, GPU_MAGIC_V1][round % 4];
            let mut bytes = magic.to_vec();
            let len = next() % 64;
            for _ in 0..len {
                // Mostly tags and small varints, as a file's bytes are.
                let b = next();
                bytes.push(if b % 3 == 0 {
                    (b >> 8) as u8 % 14
                } else {
                    (b >> 8) as u8
                });
            }
            let mut records = decode_gpu(&bytes).unwrap();
            let mut positions = Vec::new();
            loop {
                let at = records.position();
                if records.next().is_none() {
                    break;
                }
                positions.push(at);
            }
            assert!(records.unread() <= bytes.len() - GPU_MAGIC.len());
            for at in positions {
                assert!(records.record_at(at).is_some());
            }
        }
    }

    /// Only files of the fourth version on say, by a missing exit marker,
    /// that their image ended without its exit handlers.
    #[test]
    fn only_the_fourth_version_marks_exits() {
        let marks = |magic: [u8; 8]| decode_gpu(&magic).unwrap().marks_exit();
        assert!(marks(GPU_MAGIC));
        assert!(![GPU_MAGIC_V3, GPU_MAGIC_V2, GPU_MAGIC_V1]
            .into_iter()
            .any(marks));
    }

    /// A kernel of the second version (no launch type, no shared memory
    /// limit) is read with both unknown.
    #[test]
    fn a_second_version_kernel_is_read_with_its_launch_type_unknown() {
        let kernel = Activity {
            tag: Tag::Kernel as u8,
            start: 5,
            end: 9,
            correlation: 3,
            name: 1,
            ..Activity::default()
        };
        let mut v3 = GPU_MAGIC.to_vec();
        GpuRecord::Activity(kernel).encode(&mut v3);
        // The same record without its last two fields.
        let mut v2 = GPU_MAGIC_V2.to_vec();
        v2.extend(&v3[GPU_MAGIC.len()..v3.len() - 2]);
        GpuRecord::Dropped(2).encode(&mut v2);
        let decoded: Vec<_> = decode_gpu(&v2).unwrap().collect();
        assert_eq!(
            decoded,
            [GpuRecord::Activity(kernel), GpuRecord::Dropped(2)]
        );
    }

    /// A file of the first version (no graph nodes) is read as written.
    #[test]
    fn a_first_version_file_is_read() {
        let copy = Activity {
            tag: Tag::Memcpy as u8,
            start: 5,
            end: 9,
            correlation: 3,
            bytes: 4096,
            copy_kind: 1,
            ..Activity::default()
        };
        let mut v1 = GPU_MAGIC_V1.to_vec();
        v1.push(Tag::Memcpy as u8);
        // start, duration, device, context, stream, correlation; bytes
        // (4096: two bytes), kind, source and destination kinds.
        v1.extend([5, 4, 0, 0, 0, 3, 0x80, 0x20, 1, 0, 0]);
        GpuRecord::Dropped(2).encode(&mut v1);
        let decoded: Vec<_> = decode_gpu(&v1).unwrap().collect();
        assert_eq!(decoded, [GpuRecord::Activity(copy), GpuRecord::Dropped(2)]);
    }
}
