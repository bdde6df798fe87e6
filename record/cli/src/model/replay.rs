//! The second pass: each range and mark, complete, to a sink.

use super::files::read_part;
use super::gpu_event::Projection;
use super::launches::Launches;
use super::open::{Stacks, Started};
use super::resolve::Resolver;
use super::scan::{key, Image, Scan};
use super::{
    add_fields, parse_fields, Details, Fields, Filter, Mark, Process, Range, Selection, Sink, Style,
};
use hashbrown::HashMap;
use nvtxr_record_format::{Kind, Record};
use std::borrow::Cow;

/// A record as decoded from its chunk.
pub(super) type Decoded<'a> = Record<Cow<'a, str>>;

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
            fn wants_gpu(&self) -> bool {
                false
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
        // Counted among the replays sharing the surveyed processes' GPU activity.
        let _replaying = sink.wants_gpu().then(|| self.shared.replay());
        let mut events = 0;
        let wants_begin = sink.wants_begin();
        let mut map = None;
        for (process, threads) in self.processes.iter().zip(&self.chunks) {
            let lineage = self.lineage(process);
            let resolve = Resolver {
                lineage: &lineage,
                names: &self.names,
            };
            let last = self.last.get(&process.key).copied().unwrap_or(0);
            // Start/end ranges waiting for their end.
            let mut starts: HashMap<(u64, u64), Started> = HashMap::new();
            let mut ends: HashMap<(u64, u64), End> = HashMap::new();
            let mut emit_range = |sink: &mut dyn Sink, r: Range| {
                if filter.keeps(&r.details, r.start) {
                    events += 2;
                    sink.range(process, &r)?;
                }
                Ok::<(), std::io::Error>(())
            };
            let mut marks = 0;
            let loaded;
            let gpu = match self.gpu.get(&process.key) {
                Some(_) if !sink.wants_gpu() => None,
                Some(gpu) if gpu.whole => Some(gpu),
                Some(survey) => {
                    loaded = self.shared.take(process.key, survey)?;
                    Some(&*loaded)
                }
                None => None,
            };
            let placement = &self.placements[process.recording];
            let mut launches = gpu.map(|gpu| Launches::new(gpu, placement, filter));
            for ((tid, chunks), thread) in threads.iter().zip(&process.threads) {
                sink.thread_start(process, thread)?;
                let mut stacks = Stacks::default();
                // The start/end ranges this thread started and has not ended.
                let mut started_here: Vec<(u64, u64)> = Vec::new();
                let mut depth = 0;
                if let Some(launches) = &mut launches {
                    launches.start_thread(*tid);
                }
                for part in chunks {
                    let bytes = read_part(part, &mut map)?;
                    let image = &self.images[part.image];
                    let (mut count, mut segment) = (0, 0);
                    for mut r in nvtxr_record_format::decode(bytes) {
                        count += 1;
                        image.convert(&mut r, &mut segment);
                        r.timestamp = self.placements[image.recording].place(r.timestamp);
                        if let Some(launches) = &mut launches {
                            let closes = matches!(r.kind, Kind::Pop | Kind::End);
                            let open = (&mut stacks, &started_here[..], &mut starts);
                            let until = Some((r.timestamp, closes));
                            launches.meet_before(until, open, &resolve, sink, process)?;
                        }
                        match r.kind {
                            Kind::Push => {
                                let details = resolve.details(&r);
                                if wants_begin && filter.keeps(&details, r.timestamp) {
                                    sink.begin(process, *tid, &details, r.timestamp)?;
                                }
                                let stack = stacks.of(r.domain);
                                depth = depth.max(stack.len() as u32);
                                stack.push((r.timestamp, details));
                            }
                            Kind::Pop => {
                                let stack = stacks.of(r.domain);
                                if let Some(mut open) = stack.pop() {
                                    add_fields(
                                        &mut open.1.fields,
                                        r.fields.as_deref().map(parse_fields),
                                    );
                                    let range =
                                        push_pop(open, r.timestamp, stack.len(), *tid, false);
                                    emit_range(sink, range)?;
                                }
                            }
                            Kind::Start => match ends.remove(&(r.domain, r.value)) {
                                Some(end) => emit_range(
                                    sink,
                                    start_end(&r, *tid, Some(end), last, None, &resolve),
                                )?,
                                None => {
                                    let key = (r.domain, r.value);
                                    started_here.push(key);
                                    let started = Started {
                                        tid: *tid,
                                        start: r.into_owned(),
                                        name: None,
                                        gpu: None,
                                        innermost_of: Vec::new(),
                                    };
                                    drop(starts.insert(key, started))
                                }
                            },
                            Kind::End => {
                                let end = End {
                                    tid: *tid,
                                    time: r.timestamp,
                                    fields: r.fields.as_deref().map(parse_fields),
                                };
                                let key = (r.domain, r.value);
                                match starts.remove(&key) {
                                    Some(open) => {
                                        // Projected, and the innermost range of
                                        // launches, only when it ends on the
                                        // thread that started it.
                                        let gpu = if open.tid == *tid {
                                            started_here.retain(|k| *k != key);
                                            open.gpu
                                        } else {
                                            for (i, instead) in open.innermost_of {
                                                if let Some(l) = &mut launches {
                                                    l.rename(i, instead);
                                                }
                                            }
                                            None
                                        };
                                        let range = start_end(
                                            &open.start,
                                            open.tid,
                                            Some(end),
                                            last,
                                            gpu,
                                            &resolve,
                                        );
                                        emit_range(sink, range)?
                                    }
                                    None => drop(ends.insert((r.domain, r.value), end)),
                                }
                            }
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
                            Kind::CounterSample => {
                                let (sample, details) = resolve.sample(&r, *tid);
                                if let Some(sample) = sample {
                                    if filter.keeps(&details, sample.time) {
                                        marks += 1;
                                        sink.sample(process, &sample)?;
                                    }
                                }
                            }
                            // Names were learned by the scan; anchors placed the
                            // timestamps; the scan split the chunks at handoffs;
                            // an older nvtxr's launch records are not launches.
                            Kind::DomainCreate
                            | Kind::Handoff
                            | Kind::CounterRegister
                            | Kind::RegisterString
                            | Kind::NameCategory
                            | Kind::NameThread
                            | Kind::OsThreadName
                            | Kind::Anchor
                            | Kind::WallClock
                            | Kind::Launch => {}
                        }
                    }
                    crate::progress::advance(count);
                }
                // Launched after the thread's last event.
                if let Some(launches) = &mut launches {
                    let open = (&mut stacks, &started_here[..], &mut starts);
                    launches.meet_before(None, open, &resolve, sink, process)?;
                }
                // Never popped: closed at the process's last event.
                for stack in stacks.into_open() {
                    for (d, open) in stack.into_iter().enumerate() {
                        emit_range(sink, push_pop(open, last, d, *tid, true))?;
                    }
                }
                sink.thread_end(process, depth)?;
            }
            // Never ended: closed at the process's last event.
            let mut open: Vec<_> = starts.into_values().collect();
            open.sort_by_key(|open| open.start.timestamp);
            for open in open {
                let range = start_end(&open.start, open.tid, None, last, open.gpu, &resolve);
                emit_range(sink, range)?;
            }
            if let Some(launches) = launches {
                events += launches.activities(sink, process)?;
            }
            events += marks;
            sink.process_end(process)?;
        }
        Ok(events)
    }
}

impl Image {
    /// The record's timestamp on CLOCK_MONOTONIC and its ids tagged;
    /// `segment`: see
    /// [`nvtxr_record_format::time::Converter::ns_near`].
    fn convert(&self, r: &mut Decoded, segment: &mut usize) {
        r.timestamp = self.clock.ns_near(r.timestamp, segment);
        let tagged = |id: u64| if id == 0 { 0 } else { id | self.tag };
        r.domain = tagged(r.domain);
        r.string = r.string.map(tagged);
        if matches!(r.kind, Kind::Start | Kind::End | Kind::RegisterString) {
            r.value = tagged(r.value);
        }
    }
}

/// A push/pop range from its push (and the details resolved there).
fn push_pop(
    (start, details): (u64, Details),
    end: u64,
    depth: usize,
    tid: u32,
    unterminated: bool,
) -> Range {
    Range {
        details,
        style: Style::PushPop,
        start,
        end: end.max(start),
        depth: depth as u32,
        tid,
        end_tid: tid,
        id: 0,
        unterminated,
    }
}

/// A start/end range's end, as its end record says.
struct End {
    /// The thread that ended it.
    tid: u32,
    time: u64,
    fields: Option<Box<Fields>>,
}

/// A start/end range opened by `tid`, ended by `end` (`None`: never), with
/// the GPU work projected onto it.
fn start_end(
    open: &Decoded,
    tid: u32,
    end: Option<End>,
    last: u64,
    gpu: Option<Box<Projection>>,
    resolve: &Resolver,
) -> Range {
    let mut details = resolve.details(open);
    details.gpu = gpu;
    let unterminated = end.is_none();
    let (end_tid, end_time) = match end {
        Some(end) => {
            add_fields(&mut details.fields, end.fields);
            (end.tid, end.time)
        }
        None => (tid, last),
    };
    Range {
        details,
        style: Style::StartEnd,
        start: open.timestamp,
        end: end_time.max(open.timestamp),
        depth: 0,
        tid,
        end_tid,
        id: open.value,
        unterminated,
    }
}
