//! What the replay hands sinks of a process's GPU: its launches at their
//! place on their threads, each activity with its arguments and what
//! launched it, and the ranges' GPU projections.

use super::gpu::Slot;
use compact_str::CompactString;
use nvtxr_record_format::cupti::{copy_kind_name, PEER_TO_PEER};
use nvtxr_record_format::gpu::{Activity, Device, Tag};

/// A traced CUDA API call, at its place on its thread.
#[derive(Debug, Clone)]
pub struct Launch<'g> {
    pub tid: u32,
    pub start: u64,
    pub end: u64,
    pub correlation: u32,
    /// The API's name (see [`Gpu::api_name`](super::Gpu::api_name)).
    pub api: &'g str,
    /// How many activities it caused: one for a kernel's launch, one per
    /// node for a graph's, none for a call that only waits.
    pub activities: u32,
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
    fn add(&mut self, a: &Slot) {
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
    caused: &[Slot],
    open: impl Iterator<Item = &'a mut Option<Box<Projection>>>,
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
    /// What people read: a kernel's name demangled (as Nsight Systems and
    /// torch.profiler show it), a copy's direction, a set, a sync's kind.
    pub name: &'a str,
    /// The name as CUPTI gave it: a kernel's mangled symbol; `name` for
    /// other activities and for names that are not C++ symbols.
    pub mangled: &'a str,
    /// Its launch: the thread, the API call's name, the innermost range open then.
    pub launch: Option<&'a Launched<'a>>,
    /// Its place among its launch's activities (0: the first; a graph's
    /// nodes count up): with the correlation id, it names the flow from
    /// the launch ([`Launch::activities`] flows start there).
    pub nth: u32,
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
    Mangled,
    Bytes,
    Kind,
    SourceDevice,
    DestinationDevice,
    Value,
    GraphNode,
    Graph,
    LaunchedBy,
    Api,
    Thread,
    Range,
}

impl Arg {
    /// Every argument, each at its own index (`arg as usize`).
    pub const ALL: [Arg; 21] = [
        Arg::Device,
        Arg::Context,
        Arg::Stream,
        Arg::Correlation,
        Arg::Grid,
        Arg::Block,
        Arg::Registers,
        Arg::StaticShared,
        Arg::DynamicShared,
        Arg::Mangled,
        Arg::Bytes,
        Arg::Kind,
        Arg::SourceDevice,
        Arg::DestinationDevice,
        Arg::Value,
        Arg::GraphNode,
        Arg::Graph,
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
            Arg::Mangled => "mangled",
            Arg::Bytes => "bytes",
            Arg::Kind => "kind",
            Arg::SourceDevice => "source device",
            Arg::DestinationDevice => "destination device",
            Arg::Value => "value",
            Arg::GraphNode => "graph node",
            Arg::Graph => "graph",
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
                if self.mangled != self.name {
                    arg(Arg::Mangled, Text(self.mangled));
                }
            }
            Some(Tag::Memcpy) => {
                arg(Arg::Bytes, Uint(a.bytes));
                arg(Arg::Kind, Text(copy_kind_name(a.copy_kind)));
                if a.copy_kind == PEER_TO_PEER {
                    arg(Arg::SourceDevice, Uint(a.peer.src_device.into()));
                    arg(Arg::DestinationDevice, Uint(a.peer.dst_device.into()));
                }
            }
            Some(Tag::Memset) => {
                arg(Arg::Bytes, Uint(a.bytes));
                arg(Arg::Value, Uint(a.copy_kind.into()));
            }
            _ => {}
        }
        if a.graph_node != 0 {
            arg(Arg::GraphNode, Uint(a.graph_node));
            arg(Arg::Graph, Uint(a.graph.into()));
        }
        if let Some(l) = self.launch {
            arg(Arg::LaunchedBy, Launch(l));
        }
    }
}

/// What the replay kept of a launch, for its activities: its thread, API
/// call and innermost open range.
#[derive(Debug, Clone, Copy)]
pub struct Launched<'g> {
    pub tid: u32,
    /// When the call started (on the trace's timeline): where the
    /// timelines' flow to its activities starts.
    pub start: u64,
    pub api: &'g str,
    pub range: Option<&'g RangeName>,
}

/// A range's name with its domain's (empty for the default domain), kept
/// in one string, `domain:name`, where the name starts: one launch's range
/// in 32 bytes and at most one allocation (two strings would take 48).
/// Hashed as its [`RangeKey`], which finds it in a set without making one.
#[derive(Debug, Clone, PartialEq, Eq)]
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

impl std::hash::Hash for RangeName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        RangeKey(self.domain(), self.name()).hash(state)
    }
}

/// A range's domain and name, borrowed: a [`RangeName`] to look up.
#[derive(Hash)]
pub struct RangeKey<'a>(pub &'a str, pub &'a str);

impl indexmap::Equivalent<RangeName> for RangeKey<'_> {
    fn equivalent(&self, r: &RangeName) -> bool {
        self.0 == r.domain() && self.1 == r.name()
    }
}

/// A process's GPU as the trace shows it: a process of its own, 32 bits,
/// apart from every Linux pid (they stay below 2^22) and from the numbers
/// given to equal pids of merged recordings (0x4000_0000 up).
pub fn gpu_pid(p: &super::Process, device: u32) -> u32 {
    0x6000_0000 | (p.trace_pid & 0xf_ffff) << 8 | (device & 0xff)
}

/// The label of a process's GPU: `GPU 0: NVIDIA H200 at 0000:19:00.0
/// (process)`, its bus location telling apart the GPUs that processes
/// under `CUDA_VISIBLE_DEVICES` all call 0; without the name or the bus
/// location when not known.
pub fn gpu_label(p: &super::Process, device: u32, gpu: Option<&Device>) -> String {
    let mut label = format!("GPU {device}");
    if let Some(g) = gpu.filter(|g| !g.name.is_empty()) {
        label += &format!(": {}", g.name);
    }
    if let Some(g) = gpu.filter(|g| !g.bus.is_empty()) {
        label += &format!(" at {}", g.bus);
    }
    label + &format!(" ({})", p.label())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpus_label_says_what_is_known_of_it() {
        let p = super::super::Process {
            pid: 7,
            rank: Some(3),
            host: "node1".into(),
            ..Default::default()
        };
        let h200 = Device {
            name: "NVIDIA H200".into(),
            bus: "0000:19:00.0".into(),
            ..Default::default()
        };
        let label = |gpu: Option<&Device>| gpu_label(&p, 0, gpu);
        assert_eq!(
            label(Some(&h200)),
            "GPU 0: NVIDIA H200 at 0000:19:00.0 (rank 3 (node1:7))"
        );
        let unplaced = Device {
            bus: "".into(),
            ..h200.clone()
        };
        assert_eq!(
            label(Some(&unplaced)),
            "GPU 0: NVIDIA H200 (rank 3 (node1:7))"
        );
        assert_eq!(label(None), "GPU 0 (rank 3 (node1:7))");
    }
}
