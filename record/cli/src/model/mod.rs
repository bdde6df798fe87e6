//! Recording directories, read back in passes that hold one chunk at a time.
//!
//! [`scan()`] reads every chunk once for what the outputs need up front: the
//! processes and their threads, the names (domains, registered strings,
//! categories, threads), the clock anchors and the time span. Then
//! [`Scan::replay`] reads the chunks again, thread by thread, and hands each
//! range and mark to a [`Sink`] as soon as it is complete. Memory is bounded
//! by the distinct names, the open ranges, and the start/end ranges whose
//! end comes before their start in reading order, not by the trace's length
//! (a process's clock anchors are thinned to at most `Anchors::MAX`, its
//! wall-clock readings to the first and last).
//!
//! One recording's times are CLOCK_MONOTONIC ns. Several recordings (one per
//! rank of a job, on several hosts) are merged on the wall clock: each
//! host's monotonic clock is placed on CLOCK_REALTIME by the pairs its
//! recording holds, then shifted by what `ranks::align_on` estimates.

mod files;
mod filter;
mod gpu;
mod gpu_event;
mod launches;
mod open;
mod replay;
mod resolve;
mod scan;
mod shared;
mod tee;

pub use filter::{Filter, Selection};
pub use gpu::Gpu;
pub use gpu_event::{
    gpu_label, gpu_pid, Arg, ArgValue, GpuEvent, Launch, Launched, Projection, RangeName,
};
pub use scan::{scan, Scan};
pub use tee::Tee;

use compact_str::CompactString;
use nvtx_protocol::attr;

/// How a range was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Style {
    PushPop,
    StartEnd,
}

impl Style {
    pub fn label(self) -> &'static str {
        match self {
            Style::PushPop => "PushPop",
            Style::StartEnd => "StartEnd",
        }
    }
}

/// A payload value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Payload {
    U64(u64),
    I64(i64),
    F64(f64),
}

impl Payload {
    fn decode(kind: u8, bits: u64) -> Option<Payload> {
        Some(match i32::from(kind) {
            attr::PAYLOAD_U64 => Payload::U64(bits),
            attr::PAYLOAD_I64 => Payload::I64(bits as i64),
            attr::PAYLOAD_F64 => Payload::F64(f64::from_bits(bits)),
            attr::PAYLOAD_U32 => Payload::U64(u64::from(bits as u32)),
            attr::PAYLOAD_I32 => Payload::I64(i64::from(bits as u32 as i32)),
            attr::PAYLOAD_F32 => Payload::F64(f64::from(f32::from_bits(bits as u32))),
            _ => return None,
        })
    }
}

/// What ranges and marks carry besides their time.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Details {
    pub name: CompactString,
    /// The domain's name; empty for the default domain.
    pub domain: CompactString,
    pub color: Option<u32>,
    pub category: Option<(u32, Option<String>)>,
    pub payload: Option<Payload>,
    /// Extended payloads (NVTX's payload extension), decoded by the tool:
    /// named values, a pop's or an end's added to its range's.
    pub fields: Option<Box<Fields>>,
    /// The GPU work launched inside the range, projected: push/pop ranges,
    /// and start/end ranges that end on the thread that started them
    /// (boxed: most ranges have none, and every range's details move).
    pub gpu: Option<Box<Projection>>,
}

/// An event's color (ARGB, as NVTX gives it) as every output shows it:
/// `#rrggbb`, the alpha dropped.
pub fn css_color(argb: u32) -> String {
    format!("#{:06x}", argb & 0xFF_FFFF)
}

/// Decoded extended payloads: names and values, in order.
pub type Fields = serde_json::Map<String, serde_json::Value>;

/// A record's fields text as [`Fields`] (text that is not a JSON object
/// is kept as it is, under "payload error").
fn parse_fields(text: &str) -> Box<Fields> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(fields)) => Box::new(fields),
        _ => Box::new(Fields::from_iter([(
            "payload error".to_string(),
            serde_json::Value::String(text.to_string()),
        )])),
    }
}

/// `more` added to `fields` (a later value of the same name wins).
fn add_fields(fields: &mut Option<Box<Fields>>, more: Option<Box<Fields>>) {
    match (fields.as_mut(), more) {
        (Some(f), Some(more)) => f.extend(*more),
        (None, more) => *fields = more,
        (Some(_), None) => {}
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub details: Details,
    pub style: Style,
    pub start: u64,
    pub end: u64,
    /// Nesting depth on its thread (push/pop ranges); 0 for start/end ranges.
    pub depth: u32,
    /// The thread that opened it.
    pub tid: u32,
    /// The thread that closed it (start/end ranges may end on another one).
    pub end_tid: u32,
    /// Start/end ranges: the id the tool gave it.
    pub id: u64,
    /// Still open when the process ended (closed at the process's last event).
    pub unterminated: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub details: Details,
    pub time: u64,
    pub tid: u32,
}

/// A counter's sample (NVTX's counters extension).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The counter's name.
    pub counter: String,
    /// Its domain's name; empty for the default domain.
    pub domain: String,
    pub value: Payload,
    pub time: u64,
    pub tid: u32,
}

#[derive(Debug, Clone, Default)]
pub struct Thread {
    pub tid: u32,
    pub name: Option<String>,
}

/// A process, as the scan found it.
#[derive(Debug, Clone, Default)]
pub struct Process {
    /// Unique in the trace: the pid, tagged with its recording's index.
    pub key: u64,
    /// Its place among the trace's processes, from 0.
    pub index: u32,
    /// Its pid in the trace: the pid, unless another recording has the same
    /// one (then a number above any Linux pid); 32 bits, as Perfetto reads them.
    pub trace_pid: u32,
    /// The recording (directory) it came from, from 0.
    pub recording: usize,
    pub pid: u32,
    pub parent: u32,
    pub command: String,
    /// Rank and world size under a parallel launcher, if it set them.
    pub rank: Option<u32>,
    pub world: Option<u32>,
    pub host: String,
    pub threads: Vec<Thread>,
    /// Events the tool could not record (see the tool's stderr for why).
    pub dropped: u64,
}

impl Process {
    /// How the process is shown: `rank N (host:pid)` under a parallel
    /// launcher, else its command (or `pid N`).
    pub fn label(&self) -> String {
        match self.rank {
            Some(rank) => format!("rank {rank} ({}:{})", self.host, self.pid),
            None if self.command.is_empty() => format!("pid {}", self.pid),
            None => self.command.clone(),
        }
    }
}

/// What receives the ranges and marks of a replay, in reading order:
/// process by process, thread by thread.
pub trait Sink {
    /// Whether the sink wants [`Sink::begin`] (streaming writers that put
    /// each event in time order).
    fn wants_begin(&self) -> bool {
        false
    }
    /// Whether the sink wants the GPU activity: its launches, activities
    /// and the ranges' projections onto the GPU (sinks that only time
    /// ranges and marks spare the replay reading it).
    fn wants_gpu(&self) -> bool {
        true
    }
    /// A push/pop range that will be kept, at its push: before the ranges
    /// nested in it and the marks inside it. `range` follows at its pop.
    fn begin(
        &mut self,
        _process: &Process,
        _tid: u32,
        _details: &Details,
        _start: u64,
    ) -> std::io::Result<()> {
        Ok(())
    }
    /// A range, complete: at its pop (push/pop), or once both its start and
    /// end are read (start/end).
    fn range(&mut self, process: &Process, range: &Range) -> std::io::Result<()>;
    fn mark(&mut self, process: &Process, mark: &Mark) -> std::io::Result<()>;
    /// A counter's sample, in time order on its thread.
    fn sample(&mut self, _process: &Process, _sample: &Sample) -> std::io::Result<()> {
        Ok(())
    }
    /// Before a thread's push/pop ranges and marks.
    fn thread_start(&mut self, _process: &Process, _thread: &Thread) -> std::io::Result<()> {
        Ok(())
    }
    /// After them, with the deepest nesting seen.
    fn thread_end(&mut self, _process: &Process, _depth: u32) -> std::io::Result<()> {
        Ok(())
    }
    /// A traced CUDA API call (a launch, copy, set or synchronization), at
    /// its place among its thread's events.
    fn launch(&mut self, _process: &Process, _launch: &Launch) -> std::io::Result<()> {
        Ok(())
    }
    /// The process's GPU activity, in start order, after its threads.
    fn gpu(&mut self, _process: &Process, _event: &GpuEvent) -> std::io::Result<()> {
        Ok(())
    }
    /// After the process's start/end ranges, which come last.
    fn process_end(&mut self, _process: &Process) -> std::io::Result<()> {
        Ok(())
    }
}
