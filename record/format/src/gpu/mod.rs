//! GPU activity, as the recording tool learns it from CUPTI and writes it to
//! an image's [`GPU_FILE`].
//!
//! The file is [`GPU_MAGIC`] followed by records, each a tag byte ([`Tag`])
//! and LEB128 varints (strings: a varint length and UTF-8). Files of the
//! earlier versions are read as well: written before CUPTI's times could
//! be on the recording clock ([`GPU_MAGIC_V5`]), before a GPU's UUID, bus
//! location and further sizes ([`GPU_MAGIC_V4`]: not known), before the
//! exit marker ([`GPU_MAGIC_V3`]: whether the process ran its exit
//! handlers is not known), before kernels' launch types
//! and shared memory limits ([`GPU_MAGIC_V2`]: unknown), or before graph
//! nodes and peer-to-peer copies' ends ([`GPU_MAGIC_V1`]: their work is in
//! no graph). Every time is
//! CUPTI's, in ns on the clock a [`Tag::Clock`] record (before the
//! activities) names ([`GpuClock`]): the recording clock on its
//! calibration's line when CUPTI took the tool's clock (mode 2; earlier
//! tools wrote mode 0, CLOCK_MONOTONIC), else CUPTI's own plus a measured
//! offset; an activity's end is written as its duration. The tool
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
pub const GPU_MAGIC: [u8; 8] = *b"NVTXRGP6";
/// First bytes of a [`GPU_FILE`] written before CUPTI's times could be on
/// the recording clock ([`GpuClock::RecordingClock`]): the same records,
/// a new version only so that readers of this one refuse such a file
/// rather than take its times for CLOCK_MONOTONIC.
pub const GPU_MAGIC_V5: [u8; 8] = *b"NVTXRGP5";
/// First bytes of a [`GPU_FILE`] written before a [`Device`]'s UUID, bus
/// location, bandwidth and the limits after its first ten.
pub const GPU_MAGIC_V4: [u8; 8] = *b"NVTXRGP4";
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
    /// How GPU times are placed on CLOCK_MONOTONIC ([`GpuClock`]): its
    /// mode and an offset (0 but in mode 1).
    Clock = 9,
    /// A GPU: its id, name, compute capability (major, minor), global
    /// memory in bytes, multiprocessors, [`Limits`], UUID, bus location and
    /// memory bandwidth.
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

/// How a GPU file's times are placed on CLOCK_MONOTONIC (its
/// [`Tag::Clock`] record: a mode, 0, 1 or 2, and an offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuClock {
    /// 0: CUPTI read CLOCK_MONOTONIC through the tool's callback (what
    /// earlier versions of the tool recorded).
    Monotonic,
    /// 1: CUPTI read its own clock; the offset to CLOCK_MONOTONIC was
    /// measured once and is added.
    Offset(i64),
    /// 2: CUPTI read the recording clock on its calibration's line
    /// ([`Calibration::line_ns`](crate::time::Calibration::line_ns)): the
    /// converter takes each time back to a counter reading and places it
    /// through the image's anchors, as it places the NVTX events.
    RecordingClock,
}

/// A record of the GPU file.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuRecord<'a> {
    Activity(Activity),
    KernelName(u32, Cow<'a, str>),
    ApiName(u64, Cow<'a, str>),
    Context { context: u32, device: u32 },
    Dropped(u64),
    Clock(GpuClock),
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
    /// Its UUID, as `nvidia-smi -L` shows it without `GPU-`
    /// ([`uuid_text`]): the same GPU's in every process, on any host; empty
    /// where not known (files before version 5).
    pub uuid: Cow<'a, str>,
    /// Its PCI bus location, as the NVIDIA driver shows it
    /// (`0000:19:00.0`); empty where the tool could not read it.
    pub bus: Cow<'a, str>,
    /// Global memory bandwidth, kB/s (CUPTI's); 0 where not known.
    pub bandwidth_kbs: u64,
}

impl Device<'_> {
    /// The same description, owning its texts.
    pub fn into_owned(self) -> Device<'static> {
        Device {
            name: self.name.into_owned().into(),
            uuid: self.uuid.into_owned().into(),
            bus: self.bus.into_owned().into(),
            ..self
        }
    }
}

/// A UUID's 16 bytes as `nvidia-smi -L` writes them after `GPU-`
/// (`2d5b5b7a-0a1c-...`: hex, grouped 8-4-4-4-12); empty for all zero (a
/// CUPTI that gave none).
pub fn uuid_text(bytes: &[u8; 16]) -> String {
    if bytes.iter().all(|b| *b == 0) {
        return String::new();
    }
    let mut text = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            text.push('-');
        }
        text.push_str(&format!("{b:02x}"));
    }
    text
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
    /// Memory for `__constant__` variables, bytes.
    pub constant_memory: u32,
    /// Instructions a multiprocessor issues per cycle at most.
    pub max_ipc: u32,
    /// Copy engines (asynchronous engines).
    pub copy_engines: u32,
    /// A block's and a grid's largest x, y, z.
    pub block_dims: [u32; 3],
    pub grid_dims: [u32; 3],
}

/// How many [`Limits`] a [`Tag::Device`] record holds: files of versions
/// 2 to 4 hold the first [`LIMITS_V2`].
pub const LIMITS: usize = 19;
pub const LIMITS_V2: usize = 10;

impl Limits {
    /// Every limit, in the order of the fields (the GPU file's order).
    pub fn values(&self) -> [u32; LIMITS] {
        let [bx, by, bz] = self.block_dims;
        let [gx, gy, gz] = self.grid_dims;
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
            self.constant_memory,
            self.max_ipc,
            self.copy_engines,
            bx,
            by,
            bz,
            gx,
            gy,
            gz,
        ]
    }

    /// The limits [`Limits::values`] gave.
    pub fn from_values(v: [u32; LIMITS]) -> Limits {
        let [l2_cache, clock_khz, threads_per_warp, threads_per_block, registers_per_block, shared_per_block, warps_per_sm, blocks_per_sm, shared_per_sm, registers_per_sm, constant_memory, max_ipc, copy_engines, bx, by, bz, gx, gy, gz] =
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
            constant_memory,
            max_ipc,
            copy_engines,
            block_dims: [bx, by, bz],
            grid_dims: [gx, gy, gz],
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
mod tests;
