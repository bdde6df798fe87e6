//! Recording directories, read back in passes that hold one chunk at a time.
//!
//! [`scan`] reads every chunk once for what the outputs need up front: the
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

use nvtx_protocol::attr;
use nvtxr_record_format::time::{Anchor, Anchors, Converter, WallClock, WallPair};
use nvtxr_record_format::{Chunk, Kind, ProcessHeader, Record};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

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
#[derive(Debug, Clone, PartialEq)]
pub struct Details {
    pub name: String,
    /// The domain's name; empty for the default domain.
    pub domain: String,
    pub color: Option<u32>,
    pub category: Option<(u32, Option<String>)>,
    pub payload: Option<Payload>,
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

/// Names a process needs to resolve its events; a forked child falls back to its parent's.
#[derive(Default)]
struct Names {
    domains: HashMap<u64, String>,
    strings: HashMap<u64, String>,
    categories: HashMap<(u64, u32), String>,
    /// Names given through NVTX.
    threads: HashMap<u32, String>,
    /// Names the OS had for the threads (an NVTX name wins).
    os_threads: HashMap<u32, String>,
}

impl Names {
    /// Learns the name a record gives, if any; `tag` is its image's id tag.
    fn learn(&mut self, r: &Record, tag: u64) {
        let text = || r.text.clone().unwrap_or_default();
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
            _ => {}
        }
    }
}

/// One process image's folder (`<pid>.<n>`: `exec` starts a new one).
struct Image {
    clock: Converter,
    /// Ids count from 1 again in each image a pid execs: this keeps them apart.
    tag: u64,
    recording: usize,
    /// The process's key.
    key: u64,
    /// Its first and last timestamps, in its own clock (none if empty).
    span: Option<(u64, u64)>,
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
    fn place(&self, monotonic: u64) -> u64 {
        let wall = self.wall.unwrap_or(0);
        (monotonic as i64)
            .saturating_add(wall)
            .saturating_add(self.shift)
            .max(0) as u64
    }
}

/// A chunk file: its thread, its place among the thread's chunks (image,
/// then number) and the image it belongs to.
struct ChunkFile {
    path: PathBuf,
    tid: u32,
    order: (usize, u32),
    image: usize,
}

/// Everything but the ranges and marks: what the outputs need before them.
pub struct Scan {
    /// By recording, then pid.
    pub processes: Vec<Process>,
    /// Per recording.
    pub placements: Vec<Placement>,
    /// Per recording: its host's wall-clock offset (see [`WallClock::offset`]).
    walls: Vec<i64>,
    /// The earliest and latest timestamps (CLOCK_MONOTONIC ns).
    pub origin: u64,
    pub end: u64,
    images: Vec<Image>,
    /// Per pid (in `processes` order): each thread's chunks, in order.
    chunks: Vec<Vec<(u32, Vec<ChunkFile>)>>,
    /// By process key.
    names: HashMap<u64, Names>,
    /// Per process key: its last timestamp (where ranges left open are closed).
    last: HashMap<u64, u64>,
    /// What could not be read and was left out (the report fails after
    /// writing everything else).
    pub skipped: Vec<String>,
    /// What looks wrong but was kept.
    pub warnings: Vec<String>,
    /// Records in every chunk read (a replay's amount of work).
    pub records: u64,
}

/// What receives the ranges and marks of a replay, in reading order:
/// process by process, thread by thread.
pub trait Sink {
    /// Whether the sink wants [`Sink::begin`] (streaming writers that put
    /// each event in time order).
    fn wants_begin(&self) -> bool {
        false
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
    /// Before a thread's push/pop ranges and marks.
    fn thread_start(&mut self, _process: &Process, _thread: &Thread) -> std::io::Result<()> {
        Ok(())
    }
    /// After them, with the deepest nesting seen.
    fn thread_end(&mut self, _process: &Process, _depth: u32) -> std::io::Result<()> {
        Ok(())
    }
    /// After the process's start/end ranges, which come last.
    fn process_end(&mut self, _process: &Process) -> std::io::Result<()> {
        Ok(())
    }
}

fn invalid(what: &Path, e: String) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("{}: {e}", what.display()),
    )
}

/// Reads a file of a recording: only a regular file, never through a
/// symlink, never blocking (a FIFO), never more than its size.
fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => invalid(path, "a symlink, not a file of a recording".into()),
            _ => e,
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(invalid(path, "not a regular file".into()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(meta.len()).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads a chunk file; `None` for one created but never written (killed first).
fn read_chunk(path: &Path) -> std::io::Result<Option<Chunk>> {
    crate::signals::check()?;
    let bytes = read_file(path)?;
    match Chunk::decode(&bytes) {
        Ok(chunk) => Ok(Some(chunk)),
        Err(_) if bytes.iter().take(64).all(|&b| b == 0) => Ok(None),
        Err(e) => Err(invalid(path, e)),
    }
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
    };
    let mut threads: BTreeMap<u64, Vec<ChunkFile>> = BTreeMap::new();
    for (recording, dir) in dirs.iter().enumerate() {
        let before = scan.processes.len();
        let wall = scan.read_recording(recording, dir, &mut threads)?;
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
        let mut grouped: Vec<(u32, Vec<ChunkFile>)> = Vec::new();
        for chunk in list {
            match grouped.last_mut().filter(|(t, _)| *t == chunk.tid) {
                Some((_, chunks)) => chunks.push(chunk),
                None => grouped.push((chunk.tid, vec![chunk])),
            }
        }
        let names = scan.names.get(&process.key);
        process.threads = grouped
            .iter()
            .map(|(tid, _)| Thread {
                tid: *tid,
                name: names.and_then(|n| {
                    n.threads
                        .get(tid)
                        .or_else(|| n.os_threads.get(tid))
                        .cloned()
                }),
            })
            .collect();
        scan.chunks.push(grouped);
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
fn key(recording: usize, pid: u32) -> u64 {
    (recording as u64) << 32 | u64::from(pid)
}

impl Scan {
    /// Reads one recording directory's images; returns its wall-clock pairs.
    fn read_recording(
        &mut self,
        recording: usize,
        dir: &Path,
        threads: &mut BTreeMap<u64, Vec<ChunkFile>>,
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
        for (pid, n, folder) in folders {
            let key = key(recording, pid);
            let header_path = folder.join("process");
            let header = match read_file(&header_path)
                .and_then(|b| ProcessHeader::decode(&b).map_err(|e| invalid(&header_path, e)))
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
                let chunk = match read_chunk(&path) {
                    Ok(Some(chunk)) => chunk,
                    Ok(None) => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Err(e),
                    Err(e) => {
                        self.skipped.push(format!("{e}: left out"));
                        continue;
                    }
                };
                if chunk.unread > 0 {
                    self.skipped.push(format!(
                        "{}: {} bytes of recorded events cannot be read (a damaged or truncated file); the {} events before them are kept",
                        path.display(),
                        chunk.unread,
                        chunk.records.len()
                    ));
                }
                self.records += chunk.records.len() as u64;
                for r in &chunk.records {
                    names.learn(r, u64::from(n) << 48);
                    match r.kind {
                        Kind::Anchor => anchors.add(Anchor {
                            ticks: r.timestamp,
                            ns: r.value,
                        }),
                        Kind::WallClock => readings.push((r.timestamp, r.value)),
                        _ => {}
                    }
                    first = first.min(r.timestamp);
                    last = last.max(r.timestamp);
                }
                threads.entry(key).or_default().push(ChunkFile {
                    path,
                    tid: chunk.tid,
                    order: (image, chunk.seq),
                    image,
                });
            }
            let clock = Converter::new(&header.calibration, anchors.into_vec());
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
        self.origin = if origin == u64::MAX { 0 } else { origin };
        self.end = end;
        self.last = last;
    }
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

impl Scan {
    /// The process, its parent, its parent's parent... (keys) as far as its
    /// recording knows.
    fn lineage(&self, process: &Process) -> Vec<u64> {
        let parent_of = |k: u64| {
            self.processes
                .iter()
                .find(|p| p.key == k)
                .map(|p| key(p.recording, p.parent))
        };
        let mut chain = vec![process.key];
        while let Some(parent) = parent_of(*chain.last().unwrap()) {
            if chain.contains(&parent) || parent_of(parent).is_none() {
                break;
            }
            chain.push(parent);
        }
        chain
    }

    /// The windows of the capture range, if one is selected (a pass of its own).
    pub fn windows(&self, selection: &Selection) -> std::io::Result<Option<Vec<(u64, u64)>>> {
        let Some(wanted) = &selection.capture_range else {
            return Ok(None);
        };
        let (name, domain) = match wanted.rsplit_once('@') {
            Some((n, d)) => (
                n.to_string(),
                Some(if d == "default" {
                    String::new()
                } else {
                    d.to_string()
                }),
            ),
            None => (wanted.clone(), None),
        };
        struct Windows {
            name: String,
            domain: Option<String>,
            found: Vec<(u64, u64)>,
        }
        impl Sink for Windows {
            fn range(&mut self, _: &Process, r: &Range) -> std::io::Result<()> {
                if r.details.name == self.name
                    && self.domain.as_ref().is_none_or(|d| *d == r.details.domain)
                {
                    self.found.push((r.start, r.end));
                }
                Ok(())
            }
            fn mark(&mut self, _: &Process, _: &Mark) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut sink = Windows {
            name,
            domain,
            found: Vec::new(),
        };
        self.replay(&Filter::all(), &mut sink)?;
        Ok(Some(sink.found))
    }

    /// The second pass: every range and mark `filter` keeps, to `sink`;
    /// returns the number of events kept (a range is two).
    pub fn replay(&self, filter: &Filter, sink: &mut dyn Sink) -> std::io::Result<usize> {
        let mut events = 0;
        let wants_begin = sink.wants_begin();
        for (process, threads) in self.processes.iter().zip(&self.chunks) {
            let lineage = self.lineage(process);
            let resolve = Resolver {
                lineage: &lineage,
                names: &self.names,
            };
            let last = self.last.get(&process.key).copied().unwrap_or(0);
            let mut starts: HashMap<(u64, u64), (u32, Record)> = HashMap::new();
            let mut ends: HashMap<(u64, u64), (u32, u64)> = HashMap::new();
            let mut emit_range = |sink: &mut dyn Sink, r: Range| {
                if filter.keeps(&r.details, r.start) {
                    events += 2;
                    sink.range(process, &r)?;
                }
                Ok::<(), std::io::Error>(())
            };
            let mut marks = 0;
            for ((tid, chunks), thread) in threads.iter().zip(&process.threads) {
                sink.thread_start(process, thread)?;
                // Per domain: the open ranges, their details resolved at the push.
                let mut stacks: HashMap<u64, Vec<(Record, Details)>> = HashMap::new();
                let mut depth = 0;
                for file in chunks {
                    let Some(chunk) = read_chunk(&file.path)? else {
                        continue;
                    };
                    crate::progress::advance(chunk.records.len() as u64);
                    let image = &self.images[file.image];
                    for mut r in chunk.records {
                        image.convert(&mut r);
                        r.timestamp = self.placements[image.recording].place(r.timestamp);
                        match r.kind {
                            Kind::Push => {
                                let details = resolve.details(&r);
                                if wants_begin && filter.keeps(&details, r.timestamp) {
                                    sink.begin(process, *tid, &details, r.timestamp)?;
                                }
                                let stack = stacks.entry(r.domain).or_default();
                                depth = depth.max(stack.len() as u32);
                                stack.push((r, details));
                            }
                            Kind::Pop => {
                                let stack = stacks.entry(r.domain).or_default();
                                if let Some(open) = stack.pop() {
                                    let range =
                                        push_pop(open, r.timestamp, stack.len(), *tid, false);
                                    emit_range(sink, range)?;
                                }
                            }
                            Kind::Start => match ends.remove(&(r.domain, r.value)) {
                                Some(end) => emit_range(
                                    sink,
                                    start_end(&r, *tid, Some(end), last, &resolve),
                                )?,
                                None => drop(starts.insert((r.domain, r.value), (*tid, r))),
                            },
                            Kind::End => match starts.remove(&(r.domain, r.value)) {
                                Some((opener, open)) => emit_range(
                                    sink,
                                    start_end(
                                        &open,
                                        opener,
                                        Some((*tid, r.timestamp)),
                                        last,
                                        &resolve,
                                    ),
                                )?,
                                None => drop(ends.insert((r.domain, r.value), (*tid, r.timestamp))),
                            },
                            Kind::Mark => {
                                let mark = Mark {
                                    details: resolve.details(&r),
                                    time: r.timestamp,
                                    tid: *tid,
                                };
                                if filter.keeps(&mark.details, mark.time) {
                                    marks += 1;
                                    sink.mark(process, &mark)?;
                                }
                            }
                            // Names were learned by the scan; anchors placed the timestamps.
                            Kind::DomainCreate
                            | Kind::RegisterString
                            | Kind::NameCategory
                            | Kind::NameThread
                            | Kind::OsThreadName
                            | Kind::Anchor
                            | Kind::WallClock => {}
                        }
                    }
                }
                // Never popped: closed at the process's last event.
                for stack in stacks.into_values() {
                    for (d, open) in stack.into_iter().enumerate() {
                        emit_range(sink, push_pop(open, last, d, *tid, true))?;
                    }
                }
                sink.thread_end(process, depth)?;
            }
            // Never ended: closed at the process's last event.
            let mut open: Vec<_> = starts.into_values().collect();
            open.sort_by_key(|(_, r)| r.timestamp);
            for (tid, r) in open {
                emit_range(sink, start_end(&r, tid, None, last, &resolve))?;
            }
            events += marks;
            sink.process_end(process)?;
        }
        Ok(events)
    }
}

impl Image {
    /// The record's timestamp on CLOCK_MONOTONIC and its ids tagged.
    fn convert(&self, r: &mut Record) {
        r.timestamp = self.clock.ns(r.timestamp);
        let tagged = |id: u64| if id == 0 { 0 } else { id | self.tag };
        r.domain = tagged(r.domain);
        r.string = r.string.map(tagged);
        if matches!(r.kind, Kind::Start | Kind::End | Kind::RegisterString) {
            r.value = tagged(r.value);
        }
    }
}

struct Resolver<'a> {
    lineage: &'a [u64],
    names: &'a HashMap<u64, Names>,
}

impl Resolver<'_> {
    fn find<T: Clone>(&self, get: impl Fn(&Names) -> Option<&T>) -> Option<T> {
        self.lineage
            .iter()
            .find_map(|k| self.names.get(k).and_then(&get))
            .cloned()
    }

    fn details(&self, r: &Record) -> Details {
        let name = match (&r.string, &r.text) {
            (Some(id), _) => self
                .find(|n| n.strings.get(id))
                .unwrap_or_else(|| format!("(string {id})")),
            (None, Some(text)) => text.clone(),
            (None, None) => "(unnamed)".to_string(),
        };
        let domain = if r.domain == 0 {
            String::new()
        } else {
            self.find(|n| n.domains.get(&r.domain))
                .unwrap_or_else(|| format!("(domain {})", r.domain))
        };
        let category = (r.category != 0).then(|| {
            (
                r.category,
                self.find(|n| n.categories.get(&(r.domain, r.category))),
            )
        });
        Details {
            name,
            domain,
            color: r.color,
            category,
            payload: Payload::decode(r.payload.0, r.payload.1),
        }
    }
}

/// A push/pop range from its push (and the details resolved there).
fn push_pop(
    (open, details): (Record, Details),
    end: u64,
    depth: usize,
    tid: u32,
    unterminated: bool,
) -> Range {
    Range {
        details,
        style: Style::PushPop,
        start: open.timestamp,
        end: end.max(open.timestamp),
        depth: depth as u32,
        tid,
        end_tid: tid,
        id: 0,
        unterminated,
    }
}

/// A start/end range opened by `tid`; `end`: the thread that ended it and when.
fn start_end(
    open: &Record,
    tid: u32,
    end: Option<(u32, u64)>,
    last: u64,
    resolve: &Resolver,
) -> Range {
    Range {
        details: resolve.details(open),
        style: Style::StartEnd,
        start: open.timestamp,
        end: end.map_or(last, |(_, t)| t).max(open.timestamp),
        depth: 0,
        tid,
        end_tid: end.map_or(tid, |(t, _)| t),
        id: open.value,
        unterminated: end.is_none(),
    }
}

/// Which ranges and marks a report keeps (`--capture-range`, `--nvtx-domain-include`,
/// `--nvtx-domain-exclude`, as Nsight Systems names them).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Selection {
    /// Keep only what starts inside an instance of this NVTX range
    /// (`NAME` or `NAME@DOMAIN`, `default` for the default domain).
    #[arg(long, value_name = "NAME[@DOMAIN]")]
    pub capture_range: Option<String>,
    /// Keep only these domains (comma-separated; `default` is the default domain).
    #[arg(
        long = "nvtx-domain-include",
        value_name = "DOMAINS",
        value_delimiter = ','
    )]
    pub include: Vec<String>,
    /// Drop these domains (comma-separated; `default` is the default domain).
    #[arg(
        long = "nvtx-domain-exclude",
        value_name = "DOMAINS",
        value_delimiter = ','
    )]
    pub exclude: Vec<String>,
}

/// A selection, with the capture range's windows found.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    include: Vec<String>,
    exclude: Vec<String>,
    windows: Option<Vec<(u64, u64)>>,
}

impl Filter {
    /// Keeps everything.
    pub fn all() -> Filter {
        Filter::default()
    }

    /// The selection's filter (one replay of its own for a capture range).
    pub fn new(selection: &Selection, scan: &Scan) -> std::io::Result<Filter> {
        Ok(Filter {
            include: selection.include.clone(),
            exclude: selection.exclude.clone(),
            windows: scan.windows(selection)?,
        })
    }

    fn keeps(&self, d: &Details, start: u64) -> bool {
        let name = if d.domain.is_empty() {
            "default"
        } else {
            d.domain.as_str()
        };
        (self.include.is_empty() || self.include.iter().any(|i| i == name))
            && !self.exclude.iter().any(|e| e == name)
            && self
                .windows
                .as_ref()
                .is_none_or(|w| w.iter().any(|&(s, e)| s <= start && start <= e))
    }
}
