//! The first pass: what a recording holds besides its ranges and marks.

use super::files::{invalid, read_chunk, read_file};
use super::shared::SharedGpu;
use super::{Gpu, Process, Thread};
use hashbrown::HashMap;
use nvtxr_record_format::time::{Anchor, Anchors, Converter, WallClock, WallPair};
use nvtxr_record_format::{Kind, ProcessHeader, Record};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Names a process needs to resolve its events; a forked child falls back to its parent's.
#[derive(Default)]
pub(super) struct Names {
    pub(super) domains: HashMap<u64, String>,
    pub(super) strings: HashMap<u64, String>,
    pub(super) categories: HashMap<(u64, u32), String>,
    /// Names given through NVTX.
    pub(super) threads: HashMap<u32, String>,
    /// Names the OS had for the threads (an NVTX name wins).
    pub(super) os_threads: HashMap<u32, String>,
    /// Counters, by domain and id.
    pub(super) counters: HashMap<(u64, u64), String>,
}

impl Names {
    /// Learns the name a record gives, if any; `tag` is its image's id tag.
    fn learn(&mut self, r: &Record<Cow<str>>, tag: u64) {
        let text = || r.text.as_deref().unwrap_or_default().to_string();
        let tagged = |id: u64| if id == 0 { 0 } else { id | tag };
        match r.kind {
            Kind::DomainCreate => drop(self.domains.insert(tagged(r.domain), text())),
            Kind::RegisterString => drop(self.strings.insert(tagged(r.value), text())),
            Kind::NameCategory => drop(
                self.categories
                    .insert((tagged(r.domain), r.value as u32), text()),
            ),
            Kind::NameThread => drop(self.threads.insert(r.value as u32, text())),
            Kind::OsThreadName => drop(self.os_threads.insert(r.value as u32, text())),
            Kind::CounterRegister => {
                drop(self.counters.insert((tagged(r.domain), r.value), text()))
            }
            _ => {}
        }
    }
}

/// One process image's folder (`<pid>.<n>`: `exec` starts a new one).
pub(super) struct Image {
    /// Its clock's readings placed on CLOCK_MONOTONIC (its GPU file's
    /// times too: shared with the process's [`Gpu`]).
    pub(super) clock: Arc<Converter>,
    /// Ids count from 1 again in each image a pid execs: this keeps them apart.
    pub(super) tag: u64,
    pub(super) recording: usize,
    /// The process's key.
    pub(super) key: u64,
    /// Its first and last timestamps, in its own clock (none if empty).
    pub(super) span: Option<(u64, u64)>,
}

/// How one recording's CLOCK_MONOTONIC ns are placed on the trace's timeline.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// On the wall clock (merging several recordings): the recording's
    /// wall-clock offset (see [`WallClock::offset`]), computed once; or as
    /// they are.
    pub wall: Option<i64>,
    /// Added after: the alignment's estimate (see `ranks::align_on`).
    pub shift: i64,
}

impl Placement {
    pub(super) fn place(&self, monotonic: u64) -> u64 {
        let wall = self.wall.unwrap_or(0);
        (monotonic as i64)
            .saturating_add(wall)
            .saturating_add(self.shift)
            .max(0) as u64
    }
}

/// One thread's records in a chunk file (all of it, or its part between
/// handoffs): its thread, its place among the thread's records (image, the
/// chunk's number, the part's) and the image it belongs to.
pub(super) struct ChunkPart {
    pub(super) path: PathBuf,
    pub(super) tid: u32,
    pub(super) order: (usize, u32, usize),
    pub(super) image: usize,
    /// Its bytes' offset in the file, and their length.
    pub(super) offset: usize,
    pub(super) len: usize,
}

/// Everything but the ranges and marks: what the outputs need before them.
pub struct Scan {
    /// By recording, then pid.
    pub processes: Vec<Process>,
    /// Per recording.
    pub placements: Vec<Placement>,
    /// Per recording: its host's wall-clock offset (see [`WallClock::offset`]).
    pub(super) walls: Vec<i64>,
    /// The earliest and latest timestamps (CLOCK_MONOTONIC ns).
    pub origin: u64,
    pub end: u64,
    pub(super) images: Vec<Image>,
    /// Per pid (in `processes` order): each thread's chunks, in order.
    pub(super) chunks: Vec<Vec<(u32, Vec<ChunkPart>)>>,
    /// By process key.
    pub(super) names: HashMap<u64, Names>,
    /// Per process key: its last timestamp (where ranges left open are closed).
    pub(super) last: HashMap<u64, u64>,
    /// What could not be read and was left out (the report fails after
    /// writing everything else).
    pub skipped: Vec<String>,
    /// What looks wrong but was kept.
    pub warnings: Vec<String>,
    /// Records in every chunk read (a replay's amount of work).
    pub records: u64,
    /// GPU activity, by process key (processes that recorded some): the
    /// first's whole, the others' surveyed (see `gpu.rs`).
    pub gpu: HashMap<u64, Gpu>,
    /// The surveyed processes' GPU activity, as replays read it.
    pub(super) shared: SharedGpu,
}

/// The first pass over recording directories: one directory, or several to
/// merge (placed on the wall clock).
pub fn scan(dirs: &[PathBuf]) -> std::io::Result<Scan> {
    let mut seen: Vec<(PathBuf, &PathBuf)> = Vec::new();
    for dir in dirs {
        let real = std::fs::canonicalize(dir).map_err(|e| invalid(dir, e.to_string()))?;
        if let Some((_, first)) = seen.iter().find(|(r, _)| *r == real) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{} and {} are the same recording: give each once",
                    first.display(),
                    dir.display()
                ),
            ));
        }
        seen.push((real, dir));
    }
    let mut scan = Scan {
        processes: Vec::new(),
        placements: Vec::new(),
        walls: Vec::new(),
        origin: 0,
        end: 0,
        images: Vec::new(),
        chunks: Vec::new(),
        names: HashMap::new(),
        last: HashMap::new(),
        skipped: Vec::new(),
        warnings: Vec::new(),
        records: 0,
        gpu: HashMap::new(),
        shared: SharedGpu::default(),
    };
    let mut threads: BTreeMap<u64, Vec<ChunkPart>> = BTreeMap::new();
    for (recording, dir) in dirs.iter().enumerate() {
        let before = scan.processes.len();
        let wall = scan.read_recording(recording, dir, &mut threads, dirs.len() > 1)?;
        if scan.processes.len() == before {
            let why = format!(
                "{}: no recorded process (not an nvtxr recording, or no process in it loaded the recording tool)",
                dir.display()
            );
            if dirs.len() == 1 {
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why));
            }
            scan.skipped.push(why);
        }
        let offset = wall.offset();
        scan.walls.push(offset);
        scan.placements.push(Placement {
            wall: (dirs.len() > 1).then_some(offset),
            shift: 0,
        });
    }
    scan.number_processes(dirs);
    for process in &mut scan.processes {
        let mut list = threads.remove(&process.key).unwrap_or_default();
        list.sort_by_key(|c| (c.tid, c.order));
        let mut grouped: Vec<(u32, Vec<ChunkPart>)> = Vec::new();
        for chunk in list {
            match grouped.last_mut().filter(|(t, _)| *t == chunk.tid) {
                Some((_, chunks)) => chunks.push(chunk),
                None => grouped.push((chunk.tid, vec![chunk])),
            }
        }
        // Threads that launched GPU work but made no NVTX call.
        let gpu = scan.gpu.get(&process.key);
        if let Some(gpu) = gpu {
            let mut callers: Vec<u32> = gpu.callers.iter().copied().collect();
            callers.sort_unstable();
            callers.dedup();
            callers.retain(|t| grouped.binary_search_by_key(t, |(tid, _)| *tid).is_err());
            grouped.extend(callers.into_iter().map(|t| (t, Vec::new())));
            grouped.sort_by_key(|(tid, _)| *tid);
        }
        let names = scan.names.get(&process.key);
        process.threads = grouped
            .iter()
            .map(|(tid, _)| Thread {
                tid: *tid,
                name: names
                    .and_then(|n| n.threads.get(tid).or_else(|| n.os_threads.get(tid)))
                    .or_else(|| gpu.and_then(|g| g.thread_names.get(tid)))
                    .cloned(),
            })
            .collect();
        scan.chunks.push(grouped);
    }
    for (key, gpu) in &mut scan.gpu {
        if gpu.whole {
            gpu.seal();
        }
        if gpu.dropped > 0 {
            scan.warnings.push(format!(
                "process {}: CUPTI dropped {} GPU activity records (they are missing from the GPU rows)",
                key & 0xffff_ffff,
                gpu.dropped
            ));
        }
        if gpu.unexited > 0 {
            let times = match gpu.unexited {
                1 => String::new(),
                n => format!(" {n} times (each `exec` is one)"),
            };
            scan.warnings.push(format!(
                "process {} ended without running its exit handlers{times} (killed, `_exit` or `exec`): the GPU activity CUPTI still held then is missing (at most its last `--gpu-flush-interval`)",
                key & 0xffff_ffff,
            ));
        }
    }
    scan.place();
    Ok(scan)
}

impl Scan {
    /// Gives each process its trace pid (see [`Process::trace_pid`]) and
    /// warns about a rank found in more than one recording.
    fn number_processes(&mut self, dirs: &[PathBuf]) {
        let mut count: HashMap<u32, usize> = HashMap::new();
        for p in &self.processes {
            *count.entry(p.pid).or_default() += 1;
        }
        for (i, p) in self.processes.iter_mut().enumerate() {
            p.index = i as u32;
            p.trace_pid = if count[&p.pid] == 1 {
                p.pid
            } else {
                // Linux pids stay below 2^22.
                0x4000_0000 + i as u32
            };
        }
        let mut ranks: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for p in &self.processes {
            if let Some(rank) = p.rank {
                let seen = ranks.entry(rank).or_default();
                if !seen.contains(&p.recording) {
                    seen.push(p.recording);
                }
            }
        }
        for (rank, recordings) in ranks.into_iter().filter(|(_, r)| r.len() > 1) {
            let shown: Vec<String> = recordings
                .iter()
                .map(|&r| dirs[r].display().to_string())
                .collect();
            self.warnings.push(format!(
                "rank {rank} is in {} recordings ({}): were they made by different jobs?",
                recordings.len(),
                shown.join(", ")
            ));
        }
    }
}

/// A process's key: its pid, tagged with its recording.
pub(super) fn key(recording: usize, pid: u32) -> u64 {
    (recording as u64) << 32 | u64::from(pid)
}

impl Scan {
    /// Reads one recording directory's images (`merging`: one of several
    /// ranks'); returns its wall-clock pairs.
    fn read_recording(
        &mut self,
        recording: usize,
        dir: &Path,
        threads: &mut BTreeMap<u64, Vec<ChunkPart>>,
        merging: bool,
    ) -> std::io::Result<WallClock> {
        let mut folders = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| invalid(dir, e.to_string()))? {
            let entry = entry?;
            let path = entry.path();
            let parsed = path
                .file_name()
                .and_then(|f| f.to_str())
                .and_then(|f| f.split_once('.'))
                .and_then(|(p, n)| Some((p.parse::<u32>().ok()?, n.parse::<u32>().ok()?)));
            let Some((pid, n)) = parsed else { continue };
            // Not followed: the tool makes real folders only.
            if entry.file_type()?.is_dir() {
                folders.push((pid, n, path));
            } else {
                self.skipped
                    .push(format!("{}: not a folder of the recording", path.display()));
            }
        }
        folders.sort();
        let mut wall = WallClock::default();
        let (mut buffer, mut map) = (Vec::new(), None);
        for (pid, n, folder) in folders {
            let key = key(recording, pid);
            let header_path = folder.join("process");
            let header = match read_file(&header_path, &mut buffer)
                .and_then(|()| ProcessHeader::decode(&buffer).map_err(|e| invalid(&header_path, e)))
            {
                Ok(h) => h,
                Err(e) => {
                    self.skipped.push(format!(
                        "process {pid} (image {n}): its header cannot be read ({e}); its events are left out"
                    ));
                    continue;
                }
            };
            wall.add(header.wall);
            let image = self.images.len();
            let names = self.names.entry(key).or_default();
            let mut anchors = Anchors::default();
            // Wall-clock readings (ticks, ns), placed once the anchors are known.
            let mut readings: Vec<(u64, u64)> = Vec::new();
            let (mut first, mut last) = (u64::MAX, 0);
            for entry in std::fs::read_dir(&folder)? {
                let path = entry?.path();
                if path.extension().is_none_or(|e| e != "events") {
                    continue;
                }
                let chunk = match read_chunk(&path, &mut map) {
                    Ok(Some(chunk)) => chunk,
                    Ok(None) => continue,
                    Err(e) if crate::signals::is_stop(&e) => return Err(e),
                    Err(e) => {
                        self.skipped.push(format!("{e}: left out"));
                        continue;
                    }
                };
                // Names, clocks and times: events' texts are not needed here.
                let time = |t: u64| {
                    first = first.min(t);
                    last = last.max(t);
                };
                let other = |r: Record<Cow<str>>| {
                    names.learn(&r, u64::from(n) << 48);
                    match r.kind {
                        Kind::Anchor => anchors.add(Anchor {
                            ticks: r.timestamp,
                            ns: r.value,
                        }),
                        Kind::WallClock => readings.push((r.timestamp, r.value)),
                        _ => {}
                    }
                };
                let skim = chunk.skim(time, other);
                let count = skim.records;
                self.records += count as u64;
                let unread = skim.unread as u64 + chunk.missing;
                if unread > 0 {
                    self.skipped.push(format!(
                        "{}: {unread} bytes of recorded events cannot be read (a damaged or truncated file); the {count} events before them are kept",
                        path.display(),
                    ));
                }
                let parts = threads.entry(key).or_default();
                for (i, segment) in skim.segments.iter().enumerate() {
                    parts.push(ChunkPart {
                        path: path.clone(),
                        tid: segment.tid,
                        order: (image, chunk.seq, i),
                        image,
                        offset: segment.offset,
                        len: segment.len,
                    });
                }
            }
            let clock = Arc::new(Converter::new(&header.calibration, anchors.into_vec()));
            // A recording's first process with GPU activity read whole (most
            // recordings have one); the others, and every rank merged, surveyed.
            let whole = !merging && self.gpu.is_empty();
            let gpu = self.gpu.entry(key).or_insert_with(|| Gpu::new(whole));
            match gpu.read(&folder, None, &clock) {
                Ok(Some(unread)) if unread > 0 => self.skipped.push(format!(
                    "{}: {unread} bytes of GPU activity cannot be read (a damaged or truncated file); the records before them are kept",
                    folder.join(nvtxr_record_format::gpu::GPU_FILE).display()
                )),
                Ok(_) => {}
                Err(e) => self.skipped.push(format!("{e}: left out")),
            }
            if gpu.is_empty() {
                self.gpu.remove(&key);
            }
            for (ticks, ns) in readings {
                wall.add(WallPair {
                    monotonic: clock.ns(ticks),
                    wall: ns,
                });
            }
            let command = String::from_utf8_lossy(&header.command)
                .trim_end_matches('\0')
                .replace('\0', " ");
            match self.processes.last_mut().filter(|p| p.key == key) {
                // A later image of the same pid: its drops count too.
                Some(p) => p.dropped += header.dropped,
                None => self.processes.push(Process {
                    key,
                    index: 0,
                    trace_pid: pid,
                    recording,
                    pid,
                    parent: header.parent,
                    command,
                    rank: header.rank,
                    world: header.world,
                    host: header.host.clone(),
                    threads: Vec::new(),
                    dropped: header.dropped,
                }),
            }
            self.images.push(Image {
                clock,
                tag: u64::from(n) << 48,
                recording,
                key,
                span: (first <= last).then_some((first, last)),
            });
        }
        Ok(wall)
    }

    /// The wall-clock time (ns since the epoch) of the trace's origin, when
    /// the recording has wall-clock readings.
    pub fn session_start_utc(&self) -> Option<u64> {
        if self.on_wall_clock() {
            return Some(self.origin);
        }
        let offset = *self.walls.first()?;
        (offset != 0).then(|| (self.origin as i64).saturating_add(offset).max(0) as u64)
    }

    /// Whether the trace's timestamps are on the wall clock (several
    /// recordings merged), not one host's CLOCK_MONOTONIC.
    pub fn on_wall_clock(&self) -> bool {
        self.placements.iter().any(|p| p.wall.is_some())
    }

    /// A timestamp of `image`, placed on the trace's timeline.
    fn time(&self, image: &Image, ticks: u64) -> u64 {
        self.placements[image.recording].place(image.clock.ns(ticks))
    }

    /// Recomputes the time span and each process's last timestamp from the
    /// placements (after the scan, and after an alignment changes them).
    pub fn place(&mut self) {
        let (mut origin, mut end) = (u64::MAX, 0);
        let mut last: HashMap<u64, u64> = HashMap::new();
        for image in &self.images {
            if let Some((first, l)) = image.span {
                let (first, l) = (self.time(image, first), self.time(image, l));
                origin = origin.min(first);
                end = end.max(l);
                let entry = last.entry(image.key).or_default();
                *entry = (*entry).max(l);
            }
        }
        for p in &self.processes {
            if let Some((first, l)) = self.gpu.get(&p.key).and_then(Gpu::span) {
                let placement = &self.placements[p.recording];
                origin = origin.min(placement.place(first));
                end = end.max(placement.place(l));
            }
        }
        self.origin = if origin == u64::MAX { 0 } else { origin };
        self.end = end;
        self.last = last;
    }
}
