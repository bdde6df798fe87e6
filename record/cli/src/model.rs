//! A recording directory, read back: processes, threads, ranges and marks.

use nvtxr_record::clock::{Anchor, Converter};
use nvtxr_record::format::{Chunk, Kind, ProcessHeader, Record};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

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
        Some(match kind {
            1 => Payload::U64(bits),
            2 => Payload::I64(bits as i64),
            3 => Payload::F64(f64::from_bits(bits)),
            4 => Payload::U64(u64::from(bits as u32)),
            5 => Payload::I64(i64::from(bits as u32 as i32)),
            6 => Payload::F64(f64::from(f32::from_bits(bits as u32))),
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

#[derive(Debug, Default)]
pub struct Thread {
    pub tid: u32,
    pub name: Option<String>,
}

#[derive(Debug, Default)]
pub struct Process {
    pub pid: u32,
    pub parent: u32,
    pub command: String,
    pub threads: Vec<Thread>,
    /// Push/pop and start/end ranges, by start time.
    pub ranges: Vec<Range>,
    pub marks: Vec<Mark>,
    /// Events the tool could not record (see the tool's stderr for why).
    pub dropped: u64,
}

#[derive(Debug, Default)]
pub struct Recording {
    pub processes: Vec<Process>,
    /// The earliest timestamp, the trace's zero.
    pub origin: u64,
    pub events: usize,
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

/// One process image's folder, read back.
struct Image {
    pid: u32,
    /// The image's number among its pid's (`exec` starts a new one).
    n: u32,
    header: ProcessHeader,
    chunks: Vec<Chunk>,
}

/// Reads a `<pid>.<n>` folder; timestamps converted to CLOCK_MONOTONIC ns.
fn read_image(path: &Path, pid: u32, n: u32) -> std::io::Result<Image> {
    let bad = |what: &Path, e: String| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {e}", what.display()),
        )
    };
    let header_path = path.join("process");
    let header =
        ProcessHeader::decode(&std::fs::read(&header_path)?).map_err(|e| bad(&header_path, e))?;
    let mut chunks = Vec::new();
    for entry in std::fs::read_dir(path)? {
        let file = entry?.path();
        if file.extension().is_some_and(|e| e == "events") {
            let bytes = std::fs::read(&file)?;
            match Chunk::decode(&bytes) {
                Ok(chunk) => chunks.push(chunk),
                // Created, but killed before its header was written: empty.
                Err(_) if bytes.iter().take(64).all(|&b| b == 0) => {}
                Err(e) => return Err(bad(&file, e)),
            }
        }
    }
    let anchors = chunks
        .iter()
        .flat_map(|c| &c.records)
        .filter(|r| r.kind == Kind::Anchor)
        .map(|r| Anchor {
            ticks: r.timestamp,
            ns: r.value,
        })
        .collect();
    let clock = Converter::new(&header.calibration, anchors);
    // Ids count from 1 again in each image a pid execs: keep them apart.
    let tag = u64::from(n) << 48;
    let tagged = |id: u64| if id == 0 { 0 } else { id | tag };
    for r in chunks.iter_mut().flat_map(|c| &mut c.records) {
        r.timestamp = clock.ns(r.timestamp);
        r.domain = tagged(r.domain);
        r.string = r.string.map(tagged);
        if matches!(r.kind, Kind::Start | Kind::End | Kind::RegisterString) {
            r.value = tagged(r.value);
        }
    }
    Ok(Image {
        pid,
        n,
        header,
        chunks,
    })
}

/// Reads every process folder (`<pid>.<n>`) in `dir`.
pub fn load(dir: &Path) -> std::io::Result<Recording> {
    let mut images = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let Some((pid, n)) = path
            .file_name()
            .and_then(|f| f.to_str())
            .and_then(|f| f.split_once('.'))
            .and_then(|(p, n)| Some((p.parse().ok()?, n.parse().ok()?)))
        else {
            continue;
        };
        if path.is_dir() {
            images.push(read_image(&path, pid, n)?);
        }
    }
    images.sort_by_key(|i| (i.pid, i.n));
    // Per pid: the first image's command and parent; every image's threads,
    // a thread's chunks in order.
    let mut commands: BTreeMap<u32, (String, u32)> = BTreeMap::new();
    let mut dropped: BTreeMap<u32, u64> = BTreeMap::new();
    let mut files: BTreeMap<u32, Vec<(u32, Vec<Record>)>> = BTreeMap::new();
    for image in images {
        let h = &image.header;
        let command = String::from_utf8_lossy(&h.command)
            .trim_end_matches('\0')
            .replace('\0', " ");
        commands.entry(image.pid).or_insert((command, h.parent));
        *dropped.entry(image.pid).or_default() += h.dropped;
        let mut chunks = image.chunks;
        chunks.sort_by_key(|c| (c.tid, c.seq));
        let threads = files.entry(image.pid).or_default();
        for chunk in chunks {
            match threads.iter_mut().find(|(tid, _)| *tid == chunk.tid) {
                Some((_, records)) => records.extend(chunk.records),
                None => threads.push((chunk.tid, chunk.records)),
            }
        }
    }
    let mut names: HashMap<u32, Names> = HashMap::new();
    for (&pid, threads) in &files {
        let n = names.entry(pid).or_default();
        for (_, records) in threads {
            for r in records {
                match r.kind {
                    Kind::DomainCreate => drop(
                        n.domains
                            .insert(r.domain, r.text.clone().unwrap_or_default()),
                    ),
                    Kind::RegisterString => drop(
                        n.strings
                            .insert(r.value, r.text.clone().unwrap_or_default()),
                    ),
                    Kind::NameCategory => drop(n.categories.insert(
                        (r.domain, r.value as u32),
                        r.text.clone().unwrap_or_default(),
                    )),
                    Kind::NameThread => drop(
                        n.threads
                            .insert(r.value as u32, r.text.clone().unwrap_or_default()),
                    ),
                    Kind::OsThreadName => drop(
                        n.os_threads
                            .insert(r.value as u32, r.text.clone().unwrap_or_default()),
                    ),
                    _ => {}
                }
            }
        }
    }
    let mut recording = Recording {
        origin: files
            .values()
            .flatten()
            .flat_map(|(_, rs)| rs.iter().map(|r| r.timestamp))
            .min()
            .unwrap_or(0),
        ..Recording::default()
    };
    let pids: Vec<u32> = commands
        .keys()
        .chain(files.keys())
        .copied()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for pid in pids {
        let (command, parent) = commands.get(&pid).cloned().unwrap_or_default();
        let lineage = lineage(pid, &commands);
        let resolve = Resolver {
            lineage: &lineage,
            names: &names,
        };
        let mut process = Process {
            pid,
            parent,
            command,
            dropped: dropped.get(&pid).copied().unwrap_or(0),
            ..Process::default()
        };
        build(
            &mut process,
            files.get(&pid).map(Vec::as_slice).unwrap_or(&[]),
            &resolve,
            &mut recording.events,
        );
        recording.processes.push(process);
    }
    Ok(recording)
}

/// `pid`, its parent, its parent's parent... as far as the recording knows.
fn lineage(pid: u32, commands: &BTreeMap<u32, (String, u32)>) -> Vec<u32> {
    let mut chain = vec![pid];
    while let Some((_, parent)) = commands.get(chain.last().unwrap()) {
        if chain.contains(parent) || !commands.contains_key(parent) {
            break;
        }
        chain.push(*parent);
    }
    chain
}

struct Resolver<'a> {
    lineage: &'a [u32],
    names: &'a HashMap<u32, Names>,
}

impl Resolver<'_> {
    fn find<T: Clone>(&self, get: impl Fn(&Names) -> Option<&T>) -> Option<T> {
        self.lineage
            .iter()
            .find_map(|pid| self.names.get(pid).and_then(&get))
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

fn build(
    process: &mut Process,
    threads: &[(u32, Vec<Record>)],
    resolve: &Resolver,
    events: &mut usize,
) {
    let last = threads
        .iter()
        .flat_map(|(_, rs)| rs.iter().map(|r| r.timestamp))
        .max()
        .unwrap_or(0);
    let mut starts: HashMap<(u64, u64), (u32, &Record)> = HashMap::new();
    let mut ends: HashMap<(u64, u64), u64> = HashMap::new();
    for (tid, records) in threads {
        process.threads.push(Thread {
            tid: *tid,
            name: resolve.find(|n| n.threads.get(tid)).or_else(|| {
                resolve
                    .names
                    .get(&process.pid)?
                    .os_threads
                    .get(tid)
                    .cloned()
            }),
        });
        let mut stacks: HashMap<u64, Vec<&Record>> = HashMap::new();
        for r in records {
            if matches!(
                r.kind,
                Kind::Push | Kind::Pop | Kind::Start | Kind::End | Kind::Mark
            ) {
                *events += 1;
            }
            match r.kind {
                Kind::Push => stacks.entry(r.domain).or_default().push(r),
                Kind::Pop => {
                    let stack = stacks.entry(r.domain).or_default();
                    if let Some(open) = stack.pop() {
                        process.ranges.push(push_pop(
                            open,
                            r.timestamp,
                            stack.len(),
                            *tid,
                            resolve,
                            false,
                        ));
                    }
                }
                Kind::Start => drop(starts.insert((r.domain, r.value), (*tid, r))),
                Kind::End => drop(ends.insert((r.domain, r.value), r.timestamp)),
                Kind::Mark => process.marks.push(Mark {
                    details: resolve.details(r),
                    time: r.timestamp,
                    tid: *tid,
                }),
                // Names: resolved in `load` before ranges are built.
                Kind::DomainCreate
                | Kind::RegisterString
                | Kind::NameCategory
                | Kind::NameThread
                | Kind::OsThreadName
                | Kind::Anchor => {}
            }
        }
        for stack in stacks.into_values() {
            for (depth, open) in stack.iter().enumerate() {
                process
                    .ranges
                    .push(push_pop(open, last, depth, *tid, resolve, true));
            }
        }
    }
    for (key, (tid, r)) in starts {
        let end = ends.get(&key).copied();
        process.ranges.push(Range {
            details: resolve.details(r),
            style: Style::StartEnd,
            start: r.timestamp,
            end: end.unwrap_or(last).max(r.timestamp),
            depth: 0,
            tid,
            id: r.value,
            unterminated: end.is_none(),
        });
    }
    process.threads.sort_by_key(|t| t.tid);
    process.ranges.sort_by_key(|r| (r.start, r.depth, r.tid));
    process.marks.sort_by_key(|m| m.time);
}

fn push_pop(
    open: &Record,
    end: u64,
    depth: usize,
    tid: u32,
    resolve: &Resolver,
    unterminated: bool,
) -> Range {
    Range {
        details: resolve.details(open),
        style: Style::PushPop,
        start: open.timestamp,
        end: end.max(open.timestamp),
        depth: depth as u32,
        tid,
        id: 0,
        unterminated,
    }
}

/// Which ranges and marks a report keeps (`--capture-range`, `--nvtx-domain-include`,
/// `--nvtx-domain-exclude`, as Nsight Systems names them).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `NAME` or `NAME@DOMAIN`: keep only what starts inside an instance of that range.
    pub capture_range: Option<String>,
    /// Keep only these domains (`default` is the default domain); empty: all.
    pub include: Vec<String>,
    /// Drop these domains.
    pub exclude: Vec<String>,
}

impl Selection {
    fn domain_kept(&self, domain: &str) -> bool {
        let name = if domain.is_empty() { "default" } else { domain };
        (self.include.is_empty() || self.include.iter().any(|d| d == name))
            && !self.exclude.iter().any(|d| d == name)
    }

    /// The instances of the capture range, as (start, end), across processes.
    fn windows(&self, recording: &Recording) -> Option<Vec<(u64, u64)>> {
        let wanted = self.capture_range.as_ref()?;
        let (name, domain) = match wanted.rsplit_once('@') {
            Some((n, d)) => (n, Some(if d == "default" { "" } else { d })),
            None => (wanted.as_str(), None),
        };
        Some(
            recording
                .processes
                .iter()
                .flat_map(|p| &p.ranges)
                .filter(|r| r.details.name == name && domain.is_none_or(|d| r.details.domain == d))
                .map(|r| (r.start, r.end))
                .collect(),
        )
    }
}

impl Recording {
    /// Keeps what `selection` selects; the event count follows.
    pub fn select(&mut self, selection: &Selection) {
        let windows = selection.windows(self);
        let inside = |t: u64| {
            windows
                .as_ref()
                .is_none_or(|w| w.iter().any(|&(s, e)| s <= t && t <= e))
        };
        let mut dropped = 0;
        for p in &mut self.processes {
            let before = p.ranges.len() * 2 + p.marks.len();
            p.ranges
                .retain(|r| selection.domain_kept(&r.details.domain) && inside(r.start));
            p.marks
                .retain(|m| selection.domain_kept(&m.details.domain) && inside(m.time));
            dropped += before - (p.ranges.len() * 2 + p.marks.len());
        }
        self.events = self.events.saturating_sub(dropped);
    }
}
