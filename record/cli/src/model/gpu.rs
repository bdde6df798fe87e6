//! GPU activity in a recording: what each image's `gpu` file holds (read by
//! the scan, its times placed on the trace's timeline), and how the replay
//! ties each kernel, copy and set to its launch and to the NVTX ranges open
//! around that launch.

use compact_str::CompactString;
use hashbrown::HashMap;
use nvtxr_record_format::gpu::{
    copy_kind_name, decode_gpu, sync_type_name, Activity, ApiCall, Device, GpuRecord, Tag, GPU_FILE,
};
use std::borrow::Cow;
use std::path::Path;

/// One process's GPU activity.
#[derive(Debug, Default)]
pub struct Gpu {
    /// In start order, times CLOCK_MONOTONIC ns (placed by the replay).
    pub activities: Vec<Activity>,
    /// The traced API calls (launches), by thread then start (after
    /// [`Gpu::seal`]); times CLOCK_MONOTONIC ns, placed by the replay.
    pub calls: Vec<ApiCall>,
    pub kernel_names: HashMap<u32, String>,
    /// The traced APIs' names, by id.
    pub apis: HashMap<u64, String>,
    /// The OS's names of the threads that made traced calls, by tid.
    pub thread_names: HashMap<u32, String>,
    /// Each CUDA context's device.
    pub devices: HashMap<u32, u32>,
    /// Each GPU's description (name, compute capability, memory), by device id.
    pub gpus: HashMap<u32, Device<'static>>,
    /// Records CUPTI said it dropped.
    pub dropped: u64,
    /// The offset added to CUPTI's own clock's times (CLOCK_MONOTONIC minus
    /// CUPTI's, measured once by the tool), when CUPTI could not read
    /// CLOCK_MONOTONIC itself.
    pub measured_offset: Option<i64>,
    /// Each kernel name demangled, by name id (see [`Gpu::seal`]).
    demangled: HashMap<u32, String>,
    /// (correlation id, activity index) of every activity, in that order.
    by_correlation: Vec<(u32, u32)>,
}

impl Gpu {
    /// Reads an image's GPU file, adding to `self`: `None` when the image
    /// has none, else the bytes left unread after its last whole record (a
    /// file cut short by a crash).
    pub(super) fn read(
        &mut self,
        folder: &Path,
        bytes: &mut Vec<u8>,
    ) -> Result<Option<usize>, String> {
        let path = folder.join(GPU_FILE);
        if !path.exists() {
            return Ok(None);
        }
        super::files::read_file(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut records = decode_gpu(bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        // Counted first: growing by doubling copies and touches twice the
        // memory (page faults were a quarter of a GPU recording's conversion).
        let (mut activities, mut calls) = (0, 0);
        for r in records.clone() {
            match r {
                GpuRecord::Activity(_) => activities += 1,
                GpuRecord::Api(_) => calls += 1,
                _ => {}
            }
        }
        self.activities.reserve_exact(activities);
        self.calls.reserve_exact(calls);
        let on_monotonic = |t: u64, offset: Option<i64>| match offset {
            Some(offset) => t.saturating_add_signed(offset),
            None => t,
        };
        for r in records.by_ref() {
            match r {
                GpuRecord::Activity(mut a) => {
                    a.start = on_monotonic(a.start, self.measured_offset);
                    a.end = on_monotonic(a.end, self.measured_offset);
                    self.activities.push(a)
                }
                GpuRecord::Api(mut c) => {
                    c.start = on_monotonic(c.start, self.measured_offset);
                    c.end = on_monotonic(c.end, self.measured_offset);
                    self.calls.push(c)
                }
                GpuRecord::KernelName(id, name) => drop(self.kernel_names.insert(id, name.into())),
                GpuRecord::ApiName(id, name) => drop(self.apis.insert(id, name.into())),
                GpuRecord::Context { context, device } => {
                    let _ = self.devices.insert(context, device);
                }
                GpuRecord::ThreadName(tid, name) => {
                    drop(self.thread_names.insert(tid, name.into()))
                }
                GpuRecord::Dropped(n) => self.dropped += n,
                GpuRecord::Device(d) => {
                    let name = d.name.into_owned().into();
                    let _ = self.gpus.insert(d.id, Device { name, ..d });
                }
                GpuRecord::Clock { measured, offset } => {
                    self.measured_offset = measured.then_some(offset)
                }
            }
        }
        Ok(Some(records.unread()))
    }

    /// Sorts the activities by start and indexes them (after every image is read).
    pub(super) fn seal(&mut self) {
        for a in &mut self.activities {
            if a.tag == Tag::Sync as u8 {
                a.device = self.devices.get(&a.context).copied().unwrap_or(a.device);
            }
        }
        self.activities.sort_by_key(|a| (a.start, a.end));
        self.calls
            .sort_unstable_by_key(|c| (c.tid, c.start, c.correlation));
        self.by_correlation = (self.activities.iter().enumerate())
            .map(|(i, a)| (a.correlation, i as u32))
            .collect();
        self.by_correlation.sort_unstable();
        // Demangled once per name, not once per kernel.
        self.demangled = (self.kernel_names.iter())
            .map(|(id, name)| (*id, crate::demangle::demangle(name)))
            .collect();
    }

    /// The indexes of the activities a launch with this correlation id caused.
    pub fn caused_by(&self, correlation: u32) -> impl Iterator<Item = usize> + '_ {
        let from = self
            .by_correlation
            .partition_point(|(c, _)| *c < correlation);
        self.by_correlation[from..]
            .iter()
            .take_while(move |(c, _)| *c == correlation)
            .map(|(_, i)| *i as usize)
    }

    /// Thread `tid`'s traced calls, in start order.
    pub fn calls_of(&self, tid: u32) -> &[ApiCall] {
        let from = self.calls.partition_point(|c| c.tid < tid);
        let to = self.calls.partition_point(|c| c.tid <= tid);
        &self.calls[from..to]
    }

    /// The GPU times of the activities, first and last (CLOCK_MONOTONIC ns).
    pub(super) fn span(&self) -> Option<(u64, u64)> {
        let first = self.activities.iter().map(|a| a.start).min()?;
        let last = self.activities.iter().map(|a| a.end).max()?;
        Some((first, last))
    }

    /// What an activity is called: a kernel's (mangled) name, a copy's
    /// direction, a set, a synchronization's kind.
    pub fn name(&self, a: &Activity) -> Cow<'_, str> {
        match Tag::from_byte(a.tag) {
            Some(Tag::Kernel) => match self.kernel_names.get(&a.name) {
                Some(name) => Cow::Borrowed(name),
                None => Cow::Owned(format!("(kernel {})", a.name)),
            },
            Some(Tag::Memcpy) => {
                Cow::Owned(format!("[CUDA memcpy {}]", copy_kind_name(a.copy_kind)))
            }
            Some(Tag::Memset) => Cow::Borrowed("[CUDA memset]"),
            _ => Cow::Borrowed(sync_type_name(a.sync_type)),
        }
    }

    /// A kernel's name as people read it (the name itself when it is not a
    /// C++ symbol, and for other activities).
    pub fn demangled<'a>(&'a self, a: &Activity, name: &'a str) -> &'a str {
        match a.tag == Tag::Kernel as u8 {
            true => self.demangled.get(&a.name).map_or(name, String::as_str),
            false => name,
        }
    }

    /// A traced API's name without CUPTI's version suffix (`cudaLaunchKernel`).
    pub fn api_name(&self, id: u64) -> &str {
        let name = self.apis.get(&id).map_or("(CUDA API)", String::as_str);
        match name.rfind("_v") {
            Some(at)
                if name[at + 2..].chars().all(|c| c.is_ascii_digit()) && at + 2 < name.len() =>
            {
                &name[..at]
            }
            _ => name,
        }
    }
}

/// A traced CUDA API call, at its place on its thread.
#[derive(Debug, Clone)]
pub struct Launch<'g> {
    pub tid: u32,
    pub start: u64,
    pub end: u64,
    pub correlation: u32,
    /// The API's name (see [`Gpu::api_name`]).
    pub api: &'g str,
}

/// The GPU time of a range: its launches' activities (kernels, copies and
/// sets) from the first's start to the last's end, as Nsight's
/// `nvtx_gpu_proj_sum` projects ranges onto the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Projection {
    pub start: u64,
    pub end: u64,
    /// Time the GPU was busy with them (overlaps counted once).
    pub busy: u64,
    pub kernels: u64,
    pub activities: u64,
}

impl Projection {
    /// Adds an activity (in launch order, its times placed).
    pub fn add(&mut self, a: &Activity) {
        if self.activities == 0 {
            (self.start, self.end) = (a.start, a.end);
            self.busy = a.end - a.start;
        } else {
            let from = a.start.max(self.end);
            self.busy += a.end.saturating_sub(from);
            self.start = self.start.min(a.start);
            self.end = self.end.max(a.end);
        }
        self.activities += 1;
        self.kernels += u64::from(a.tag == Tag::Kernel as u8);
    }
}

/// Adds a launch's activities to the projections of the ranges open around it.
pub(super) fn project<'a>(
    caused: &[Activity],
    open: impl Iterator<Item = &'a mut Option<Projection>>,
) {
    for projection in open {
        let p = projection.get_or_insert_with(Default::default);
        for a in caused.iter().filter(|a| a.tag != Tag::Sync as u8) {
            p.add(a);
        }
    }
}

/// An activity with what caused it, as sinks get it at the end of its process.
#[derive(Debug, Clone, Copy)]
pub struct GpuEvent<'a> {
    pub activity: &'a Activity,
    pub name: &'a str,
    /// A kernel's name demangled; `name` for other activities and names
    /// that are not C++ symbols.
    pub demangled: &'a str,
    /// Its launch: the thread, the API call's name, the innermost range open then.
    pub launch: Option<&'a Launched<'a>>,
    /// Its GPU's description, when CUPTI gave one.
    pub gpu: Option<&'a Device<'static>>,
}

/// The arguments an activity may have, in the order every output shows
/// them (the last three are `LaunchedBy`'s entries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    Device,
    Context,
    Stream,
    Correlation,
    Grid,
    Block,
    Registers,
    StaticShared,
    DynamicShared,
    Demangled,
    Bytes,
    Kind,
    Value,
    LaunchedBy,
    Api,
    Thread,
    Range,
}

impl Arg {
    /// Every argument, each at its own index (`arg as usize`).
    pub const ALL: [Arg; 17] = [
        Arg::Device,
        Arg::Context,
        Arg::Stream,
        Arg::Correlation,
        Arg::Grid,
        Arg::Block,
        Arg::Registers,
        Arg::StaticShared,
        Arg::DynamicShared,
        Arg::Demangled,
        Arg::Bytes,
        Arg::Kind,
        Arg::Value,
        Arg::LaunchedBy,
        Arg::Api,
        Arg::Thread,
        Arg::Range,
    ];

    /// Its name in the outputs.
    pub fn name(self) -> &'static str {
        match self {
            Arg::Device => "device",
            Arg::Context => "context",
            Arg::Stream => "stream",
            Arg::Correlation => "correlation",
            Arg::Grid => "grid",
            Arg::Block => "block",
            Arg::Registers => "registers per thread",
            Arg::StaticShared => "static shared memory",
            Arg::DynamicShared => "dynamic shared memory",
            Arg::Demangled => "demangled",
            Arg::Bytes => "bytes",
            Arg::Kind => "kind",
            Arg::Value => "value",
            Arg::LaunchedBy => "launched by",
            Arg::Api => "api",
            Arg::Thread => "thread",
            Arg::Range => "range",
        }
    }
}

/// An activity's argument's value.
#[derive(Debug, Clone, Copy)]
pub enum ArgValue<'a> {
    Uint(u64),
    Int(i64),
    Text(&'a str),
    /// A grid's or block's dimensions (x, y, z).
    Dims([i32; 3]),
    /// What launched it: the API call ([`Arg::Api`]), its thread
    /// ([`Arg::Thread`]) and the innermost range open there ([`Arg::Range`]),
    /// a nested dictionary.
    Launch(&'a Launched<'a>),
}

impl<'a> GpuEvent<'a> {
    /// Its arguments, in the order every output shows them (the JSON's
    /// `args`, Perfetto's debug annotations, `nvtxr view`'s tooltip).
    pub fn args(&self, mut arg: impl FnMut(Arg, ArgValue<'a>)) {
        use ArgValue::*;
        let a = self.activity;
        arg(Arg::Device, Uint(a.device.into()));
        arg(Arg::Context, Uint(a.context.into()));
        arg(Arg::Stream, Uint(a.stream.into()));
        arg(Arg::Correlation, Uint(a.correlation.into()));
        match Tag::from_byte(a.tag) {
            Some(Tag::Kernel) => {
                arg(Arg::Grid, Dims(a.grid));
                arg(Arg::Block, Dims(a.block));
                arg(Arg::Registers, Uint(a.registers.into()));
                arg(Arg::StaticShared, Int(a.static_shared.into()));
                arg(Arg::DynamicShared, Int(a.dynamic_shared.into()));
                if self.demangled != self.name {
                    arg(Arg::Demangled, Text(self.demangled));
                }
            }
            Some(Tag::Memcpy) => {
                arg(Arg::Bytes, Uint(a.bytes));
                arg(Arg::Kind, Text(copy_kind_name(a.copy_kind)));
            }
            Some(Tag::Memset) => {
                arg(Arg::Bytes, Uint(a.bytes));
                arg(Arg::Value, Uint(a.copy_kind.into()));
            }
            _ => {}
        }
        if let Some(l) = self.launch {
            arg(Arg::LaunchedBy, Launch(l));
        }
    }
}

/// What the replay kept of a launch, for its activities: its thread, API
/// call and innermost open range.
#[derive(Debug, Clone)]
pub struct Launched<'g> {
    pub tid: u32,
    pub api: &'g str,
    pub range: Option<RangeName>,
}

/// A range's name with its domain's (empty for the default domain), kept
/// in one string, `domain:name`, where the name starts: one launch's range
/// in 32 bytes and at most one allocation (two strings would take 48).
#[derive(Debug, Clone, PartialEq)]
pub struct RangeName {
    key: CompactString,
    /// Where the name starts in `key`.
    name_at: usize,
}

impl RangeName {
    pub fn new(domain: &str, name: &str) -> RangeName {
        let mut key = CompactString::with_capacity(domain.len() + 1 + name.len());
        key.push_str(domain);
        key.push(':');
        key.push_str(name);
        RangeName {
            key,
            name_at: domain.len() + 1,
        }
    }

    pub fn domain(&self) -> &str {
        &self.key[..self.name_at - 1]
    }

    pub fn name(&self) -> &str {
        &self.key[self.name_at..]
    }
}

/// A process's GPU as the trace shows it: a process of its own, 32 bits,
/// apart from every Linux pid (they stay below 2^22) and from the numbers
/// given to equal pids of merged recordings (0x4000_0000 up).
pub fn gpu_pid(p: &super::Process, device: u32) -> u32 {
    0x6000_0000 | (p.trace_pid & 0xf_ffff) << 8 | (device & 0xff)
}

/// The label of a process's GPU: `GPU 0: NVIDIA H200 (process)`, or
/// without its name when CUPTI gave none.
pub fn gpu_label(p: &super::Process, device: u32, gpu: Option<&Device>) -> String {
    match gpu.filter(|g| !g.name.is_empty()) {
        Some(g) => format!("GPU {device}: {} ({})", g.name, p.label()),
        None => format!("GPU {device} ({})", p.label()),
    }
}
