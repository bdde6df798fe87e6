//! GPU activity in a recording: what each image's `gpu` file holds. The
//! scan reads a recording's first process's whole (most recordings have
//! one process on a GPU), and surveys the others' and every merged rank's
//! for what it needs (threads, names, the time span, drops), keeping
//! nothing per activity; a replay reads a surveyed process's again, whole
//! ([`Gpu::load`]), when it comes to it. So a merged report of many ranks
//! holds one rank's GPU activity per replay running (`shared.rs`), not
//! every rank's. The replay places the times on the trace's
//! timeline and ties each kernel, copy and set to its launch
//! (`launches.rs`).

use hashbrown::{HashMap, HashSet};
use memmap2::Mmap;
use nvtxr_record_format::cupti::{copy_kind_name, sync_type_name};
use nvtxr_record_format::gpu::{
    decode_gpu, Activity, ApiCall, Device, GpuClock, GpuRecord, Tag, GPU_FILE,
};
use nvtxr_record_format::time::Converter;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One process's GPU activity: read whole, or surveyed (its activities
/// and calls counted, not kept; [`Gpu::load`] reads them).
#[derive(Debug, Default)]
pub struct Gpu {
    /// Whether the activities and calls are kept.
    pub(super) whole: bool,
    /// Each image's folder, the bytes of its GPU file the survey read (a
    /// replay reads as many: a file still being written reads as the scan
    /// found it), and its clock.
    folders: Vec<(PathBuf, usize, Arc<Converter>)>,
    /// Its images' GPU files, mapped: an activity is read from its record
    /// when an output needs it, not held (its 104 bytes, for every
    /// activity of the process, were most of a GPU recording's conversion:
    /// the kernel zeroing the memory that held them).
    files: Vec<Mmap>,
    /// The highest correlation id read so far. A later image's ids (after
    /// an `exec`, CUDA initialized anew) start over at CUPTI's first (1):
    /// each file's are read as counting on from there, so that they are
    /// unique in the process and its launches meet their own activities.
    last_correlation: u32,
    /// The same for kernel name ids (each image's tool numbers its names
    /// from 1), and what each file's are read with (added to its own).
    last_name: u32,
    name_bases: Vec<u32>,
    /// Where each activity is, in start order (after [`Gpu::seal`]).
    activities: Vec<Slot>,
    /// The traced API calls (launches), by thread then start (after
    /// [`Gpu::seal`]); times CLOCK_MONOTONIC ns, placed by the replay.
    pub calls: Vec<ApiCall>,
    /// The threads that made traced calls.
    pub callers: HashSet<u32>,
    /// The GPU times of the activities, first and last (CLOCK_MONOTONIC ns).
    span: Option<(u64, u64)>,
    pub kernel_names: HashMap<u32, String>,
    /// The traced APIs' names, by id, without CUPTI's version suffix
    /// (`cudaLaunchKernel`, not `cudaLaunchKernel_v7000`).
    pub apis: HashMap<u64, String>,
    /// The OS's names of the threads that made traced calls, by tid.
    pub thread_names: HashMap<u32, String>,
    /// Each CUDA context's device.
    pub devices: HashMap<u32, u32>,
    /// Each GPU's description (name, compute capability, memory), by device id.
    pub gpus: HashMap<u32, Device<'static>>,
    /// Records CUPTI said it dropped.
    pub dropped: u64,
    /// Images that recorded GPU activity and ended without running their
    /// exit handlers (killed, `_exit`, `exec`): what CUPTI held then is
    /// missing.
    pub unexited: usize,
    /// Each kernel name demangled, by name id (see [`Gpu::seal`]).
    demangled: HashMap<u32, String>,
    /// (correlation id, activity index) of every activity, in that order.
    by_correlation: Vec<(u32, u32)>,
}

/// An activity as the replay holds it: its times (CLOCK_MONOTONIC ns), its
/// correlation id and kind, and where its record is (32 bytes).
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub start: u64,
    pub end: u64,
    /// The file's index in `files` << 48 | the record's position in it.
    record: u64,
    pub correlation: u32,
    pub tag: u8,
}

impl Slot {
    /// The same activity at other times (placed on the trace's timeline).
    pub fn with_times(&self, (start, end): (u64, u64)) -> Slot {
        Slot {
            start,
            end,
            ..*self
        }
    }
}

/// Bytes per activity, or per call, under which a GPU file is unlikely to
/// go (a kernel's record and its launch's take 48 in the test CUPTI's
/// loop, a copy's and its call's 45).
const BYTES_PER_RECORD: usize = 20;

/// Bits of [`Slot::record`] that hold the record's position.
const POSITION_BITS: u32 = 48;

impl Gpu {
    /// A process's GPU activity, before its files are read: kept `whole`,
    /// or surveyed.
    pub(super) fn new(whole: bool) -> Gpu {
        Gpu {
            whole,
            ..Gpu::default()
        }
    }

    /// A surveyed process's activities and calls, read from the files the
    /// survey read (as far as it read them), sorted and indexed.
    pub(super) fn load(&self) -> Result<Gpu, String> {
        let mut gpu = Gpu::new(true);
        for (folder, length, clock) in &self.folders {
            gpu.read(folder, Some(*length), clock)?;
        }
        gpu.seal();
        Ok(gpu)
    }

    /// Reads an image's GPU file (its first `length` bytes, when given),
    /// adding to `self`, its times placed on CLOCK_MONOTONIC as its
    /// [`GpuRecord::Clock`] says (CUPTI's times on the recording clock's
    /// line: through the image's `clock`, as its NVTX events are): `None`
    /// when the image has none, else the bytes left unread after its last
    /// whole record (a file cut short by a crash).
    pub(super) fn read(
        &mut self,
        folder: &Path,
        length: Option<usize>,
        clock: &Arc<Converter>,
    ) -> Result<Option<usize>, String> {
        let path = folder.join(GPU_FILE);
        let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let file = match std::fs::File::open(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            file => file.map_err(|e| failed(&e))?,
        };
        // SAFETY: the recording tool only appends to a GPU file (a
        // recording still being written maps what it had), and nothing
        // truncates one.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| failed(&e))?;
        let file_index = self.files.len() as u64;
        if file_index >= 1 << (64 - POSITION_BITS) || map.len() as u64 >= 1 << POSITION_BITS {
            return Err(failed(
                &"more GPU files, or a larger one, than a report reads",
            ));
        }
        let length = length.unwrap_or(map.len()).min(map.len());
        let mut records = decode_gpu(&map[..length]).map_err(|e| failed(&e))?;
        let (base, names) = (self.last_correlation, self.last_name);
        let mut correlation = |c: u32| {
            let c = c.wrapping_add(base);
            self.last_correlation = self.last_correlation.max(c);
            c
        };
        // Room for as many activities and calls as the file is likely to
        // hold: memory reserved is not touched until used, where growing by
        // doubling copies and touches twice what is used (the kernel
        // providing memory was a quarter of a conversion). Should the
        // system refuse that much, they grow as they need.
        if self.whole {
            let likely = length / BYTES_PER_RECORD;
            let _ = self.activities.try_reserve(likely);
            let _ = self.calls.try_reserve(likely);
        }
        // Files of earlier tools without a clock record: CLOCK_MONOTONIC.
        let mut mode = GpuClock::Monotonic;
        // The anchors' segment of the last time placed (most come in order).
        let mut segment = 0;
        let mut on_monotonic = |t: u64, mode: GpuClock| match mode {
            GpuClock::Monotonic => t,
            GpuClock::Offset(offset) => t.saturating_add_signed(offset),
            GpuClock::RecordingClock => clock.line_ns_near(t, &mut segment),
        };
        let (mut recorded, mut exited) = (false, false);
        loop {
            let position = records.position() as u64;
            let Some(r) = records.next() else { break };
            match r {
                GpuRecord::Activity(a) => {
                    recorded = true;
                    let start = on_monotonic(a.start, mode);
                    let end = on_monotonic(a.end, mode);
                    let (first, last) = self.span.get_or_insert((start, end));
                    (*first, *last) = ((*first).min(start), (*last).max(end));
                    let correlation = correlation(a.correlation);
                    if self.whole {
                        self.activities.push(Slot {
                            start,
                            end,
                            record: file_index << POSITION_BITS | position,
                            correlation,
                            tag: a.tag,
                        })
                    }
                }
                GpuRecord::Api(mut c) => {
                    recorded = true;
                    c.start = on_monotonic(c.start, mode);
                    c.end = on_monotonic(c.end, mode);
                    c.correlation = correlation(c.correlation);
                    self.callers.insert(c.tid);
                    if self.whole {
                        self.calls.push(c)
                    }
                }
                GpuRecord::KernelName(id, name) => {
                    let id = id.wrapping_add(names);
                    self.last_name = self.last_name.max(id);
                    drop(self.kernel_names.insert(id, name.into()))
                }
                GpuRecord::ApiName(id, name) => {
                    drop(self.apis.insert(id, without_version(&name).into()))
                }
                GpuRecord::Context { context, device } => {
                    let _ = self.devices.insert(context, device);
                }
                GpuRecord::ThreadName(tid, name) => {
                    drop(self.thread_names.insert(tid, name.into()))
                }
                GpuRecord::Dropped(n) => self.dropped += n,
                GpuRecord::Device(d) => drop(self.gpus.insert(d.id, d.into_owned())),
                GpuRecord::Clock(clock) => mode = clock,
                GpuRecord::Exited => exited = true,
            }
        }
        if recorded && records.marks_exit() && !exited {
            self.unexited += 1;
        }
        let unread = records.unread();
        self.folders
            .push((folder.to_path_buf(), length, clock.clone()));
        if self.whole {
            self.files.push(map);
            self.name_bases.push(names);
        }
        Ok(Some(unread))
    }

    /// Whether the process recorded nothing of its GPU.
    pub(super) fn is_empty(&self) -> bool {
        self.span.is_none() && self.apis.is_empty()
    }

    /// Sorts the activities by start and indexes them (after every image is read).
    pub(super) fn seal(&mut self) {
        self.activities.sort_by_key(|a| (a.start, a.end, a.record));
        self.calls.sort_by_key(|c| (c.tid, c.start, c.correlation));
        self.by_correlation = (self.activities.iter().enumerate())
            .map(|(i, a)| (a.correlation, i as u32))
            .collect();
        self.by_correlation.sort();
        // Demangled once per name, not once per kernel.
        self.demangled = (self.kernel_names.iter())
            .map(|(id, name)| (*id, crate::demangle::demangle(name)))
            .collect();
    }

    /// The number of activities.
    pub(super) fn activity_count(&self) -> usize {
        self.activities.len()
    }

    /// Activity `i` (in start order) as the replay holds it.
    pub(super) fn slot(&self, i: usize) -> &Slot {
        &self.activities[i]
    }

    /// Activity `i` (in start order), read from its record; times
    /// CLOCK_MONOTONIC ns, its correlation id and kernel name id as read
    /// (see [`Gpu::last_correlation`]), a synchronization's device that of
    /// its context.
    pub(super) fn activity(&self, i: usize) -> Activity {
        let slot = &self.activities[i];
        let file_index = (slot.record >> POSITION_BITS) as usize;
        let file = &self.files[file_index];
        let position = (slot.record & ((1 << POSITION_BITS) - 1)) as usize;
        let record = decode_gpu(file).ok().and_then(|r| r.record_at(position));
        let Some(GpuRecord::Activity(mut a)) = record else {
            unreachable!("an activity's record, read before")
        };
        (a.start, a.end, a.correlation) = (slot.start, slot.end, slot.correlation);
        if a.tag == Tag::Kernel as u8 {
            a.name = a.name.wrapping_add(self.name_bases[file_index]);
        }
        if a.tag == Tag::Sync as u8 {
            a.device = self.devices.get(&a.context).copied().unwrap_or(a.device);
        }
        a
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

    /// Where thread `tid`'s traced calls are in [`Gpu::calls`] (in start order).
    pub fn calls_of(&self, tid: u32) -> std::ops::Range<usize> {
        let from = self.calls.partition_point(|c| c.tid < tid);
        let to = self.calls.partition_point(|c| c.tid <= tid);
        from..to
    }

    /// The GPU times of the activities, first and last (CLOCK_MONOTONIC ns).
    pub(super) fn span(&self) -> Option<(u64, u64)> {
        self.span
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

    /// A traced API's name (see [`Gpu::apis`]).
    pub fn api_name(&self, id: u64) -> &str {
        self.apis.get(&id).map_or("(CUDA API)", String::as_str)
    }
}

/// An API's name without CUPTI's version suffix (`_v7000`).
fn without_version(name: &str) -> &str {
    match name.rfind("_v") {
        Some(at) if name[at + 2..].chars().all(|c| c.is_ascii_digit()) && at + 2 < name.len() => {
            &name[..at]
        }
        _ => name,
    }
}

#[cfg(test)]
mod tests;
