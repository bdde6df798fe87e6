//! The second pass: each range and mark, complete, to a sink.

use super::files::read_part;
use super::gpu::{project, Projection};
use super::scan::{key, Image, Names, Scan};
use super::{
    add_fields, parse_fields, Details, Fields, Filter, GpuEvent, Launch, Launched, Mark, Payload,
    Process, Range, RangeName, Sample, Selection, Sink, Style,
};
use compact_str::CompactString;
use hashbrown::HashMap;
use nvtxr_record_format::{Kind, Record};
use std::borrow::Cow;

/// A record as decoded from its chunk.
type Decoded<'a> = Record<Cow<'a, str>>;

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
        let mut buffer = Vec::new();
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
            let gpu = self.gpu.get(&process.key);
            let placement = &self.placements[process.recording];
            // What launched each activity: an index into `launches`, plus 1
            // (0: not launched on a recorded thread).
            // As many as activities, usually: one allocation, not doubling.
            let mut launches: Vec<Launched> =
                Vec::with_capacity(gpu.map_or(0, |g| g.activities.len()));
            let mut launch_of = vec![0u32; gpu.map_or(0, |g| g.activities.len())];
            let mut caused = Vec::new();
            for ((tid, chunks), thread) in threads.iter().zip(&process.threads) {
                sink.thread_start(process, thread)?;
                let mut stacks = Stacks::default();
                // The start/end ranges this thread started and has not ended.
                let mut started_here: Vec<(u64, u64)> = Vec::new();
                let mut depth = 0;
                let mut last_launch = None;
                for part in chunks {
                    let bytes = read_part(part, &mut buffer)?;
                    let image = &self.images[part.image];
                    let (mut count, mut segment) = (0, 0);
                    for mut r in nvtxr_record_format::decode(bytes) {
                        count += 1;
                        image.convert(&mut r, &mut segment);
                        r.timestamp = self.placements[image.recording].place(r.timestamp);
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
                                                launches[i].range = instead;
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
                            Kind::Launch => {
                                let Some(gpu) = gpu else { continue };
                                let correlation = r.value as u32;
                                if last_launch == Some(correlation) {
                                    // A driver call inside a runtime call,
                                    // recorded just before it: one launch.
                                    continue;
                                }
                                last_launch = Some(correlation);
                                let entry = image.clock.ns_near(r.payload.1, &mut segment);
                                let launch = Launch {
                                    tid: *tid,
                                    start: placement.place(entry).min(r.timestamp),
                                    end: r.timestamp,
                                    correlation,
                                    api: gpu.api_name(r.string.unwrap_or(0)),
                                };
                                caused.clear();
                                for i in gpu.caused_by(correlation) {
                                    caused.push(placed(&gpu.activities[i], placement));
                                    launch_of[i] = launches.len() as u32 + 1;
                                }
                                project(&caused, stacks.open_mut().map(|d| &mut d.gpu));
                                for key in &started_here {
                                    if let Some(open) = starts.get_mut(key) {
                                        project(&caused, std::iter::once(&mut open.gpu));
                                    }
                                }
                                sink.launch(process, &launch)?;
                                let range = innermost(
                                    &stacks,
                                    &started_here,
                                    &mut starts,
                                    launches.len(),
                                    &resolve,
                                );
                                launches.push(Launched {
                                    tid: *tid,
                                    api: launch.api,
                                    range,
                                });
                            }
                            // Names were learned by the scan; anchors placed the
                            // timestamps; the scan split the chunks at handoffs.
                            Kind::DomainCreate
                            | Kind::Handoff
                            | Kind::CounterRegister
                            | Kind::RegisterString
                            | Kind::NameCategory
                            | Kind::NameThread
                            | Kind::OsThreadName
                            | Kind::Anchor
                            | Kind::WallClock => {}
                        }
                    }
                    crate::progress::advance(count);
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
            if let Some(gpu) = gpu {
                for (a, launch) in gpu.activities.iter().zip(&launch_of) {
                    let activity = placed(a, placement);
                    let name = gpu.name(a);
                    sink.gpu(
                        process,
                        &GpuEvent {
                            activity: &activity,
                            name: &name,
                            demangled: gpu.demangled(a, &name),
                            launch: launch.checked_sub(1).map(|i| &launches[i as usize]),
                            gpu: gpu.gpus.get(&a.device),
                        },
                    )?;
                }
                events += gpu.activities.len();
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
        if r.kind != Kind::Launch {
            r.string = r.string.map(tagged);
        }
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

    /// A counter's sample (`None` for one without a value), and its
    /// details as the selection sees them (the counter as the name).
    fn sample(&self, r: &Decoded, tid: u32) -> (Option<Sample>, Details) {
        let mut details = self.details(&Record {
            text: None,
            string: None,
            ..r.clone()
        });
        details.name = self
            .find(|n| n.counters.get(&(r.domain, r.value)))
            .map_or_else(|| format!("(counter {})", r.value).into(), Into::into);
        let sample = details.payload.map(|value| Sample {
            counter: details.name.to_string(),
            domain: details.domain.clone(),
            value,
            time: r.timestamp,
            tid,
        });
        (sample, details)
    }

    fn details(&self, r: &Decoded) -> Details {
        // Inline, not allocated, up to 24 bytes.
        let name = match (&r.string, &r.text) {
            (Some(id), _) => self
                .find(|n| n.strings.get(id))
                .map_or_else(|| format!("(string {id})").into(), Into::into),
            (None, Some(text)) => CompactString::from(&**text),
            (None, None) => CompactString::const_new("(unnamed)"),
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
            fields: r.fields.as_deref().map(parse_fields),
            gpu: None,
        }
    }
}

/// A thread's open push/pop ranges, per domain: their start and details
/// resolved at the push. The default domain's (most ranges) apart.
#[derive(Default)]
struct Stacks {
    default: Vec<(u64, Details)>,
    domains: HashMap<u64, Vec<(u64, Details)>>,
}

impl Stacks {
    #[inline(always)]
    fn of(&mut self, domain: u64) -> &mut Vec<(u64, Details)> {
        match domain {
            0 => &mut self.default,
            _ => self.domains.entry(domain).or_default(),
        }
    }

    /// Every open range, to add GPU work to.
    fn open_mut(&mut self) -> impl Iterator<Item = &mut Details> {
        self.default
            .iter_mut()
            .chain(self.domains.values_mut().flatten())
            .map(|(_, d)| d)
    }

    /// The innermost open push/pop range: the last opened, of any domain.
    fn innermost(&self) -> Option<&(u64, Details)> {
        (self.domains.values().filter_map(|s| s.last()))
            .chain(self.default.last())
            .max_by_key(|(start, _)| *start)
    }

    /// Every stack, the default domain's first, then by domain id.
    fn into_open(self) -> impl Iterator<Item = Vec<(u64, Details)>> {
        let mut domains: Vec<_> = self.domains.into_iter().collect();
        domains.sort_by_key(|(id, _)| *id);
        std::iter::once(self.default).chain(domains.into_iter().map(|(_, s)| s))
    }
}

/// A start/end range waiting for its end.
struct Started {
    /// The thread that started it.
    tid: u32,
    start: Decoded<'static>,
    /// Its name, once a launch needed it.
    name: Option<RangeName>,
    /// The GPU work launched on that thread since.
    gpu: Option<Projection>,
    /// The launches (indices) it is the innermost range of, each with the
    /// range named instead should it end on another thread.
    innermost_of: Vec<(usize, Option<RangeName>)>,
}

impl Started {
    fn name(&mut self, resolve: &Resolver) -> RangeName {
        (self.name.get_or_insert_with(|| {
            let d = resolve.details(&self.start);
            RangeName::new(&d.domain, &d.name)
        }))
        .clone()
    }
}

/// The name of the innermost range open around launch `index` on its
/// thread: the last opened of its open push/pop ranges (every domain) and
/// the start/end ranges it started and has not ended. A start/end range
/// counts only if it ends on this thread too (as for the GPU projection):
/// it keeps the launch, with the name to put back if it ends elsewhere
/// (the next range out; should that be a start/end range ending elsewhere
/// too, the launch keeps its name).
fn innermost(
    stacks: &Stacks,
    started_here: &[(u64, u64)],
    starts: &mut HashMap<(u64, u64), Started>,
    index: usize,
    resolve: &Resolver,
) -> Option<RangeName> {
    // The two start/end ranges opened last (start time, key).
    type Opened = Option<(u64, (u64, u64))>;
    let (mut last, mut before): (Opened, Opened) = (None, None);
    for key in started_here {
        let Some(open) = starts.get(key) else {
            continue;
        };
        let at = (open.start.timestamp, *key);
        if last.is_none_or(|l| at > l) {
            (before, last) = (last, Some(at));
        } else if before.is_none_or(|b| at > b) {
            before = Some(at);
        }
    }
    let pushed = stacks.innermost();
    let pushed_at = pushed.map(|(at, _)| *at);
    let pushed_name = || pushed.map(|(_, d)| RangeName::new(&d.domain, &d.name));
    let Some((_, key)) = last.filter(|(at, _)| pushed_at.is_none_or(|p| *at > p)) else {
        return pushed_name();
    };
    let instead = match before.filter(|(at, _)| pushed_at.is_none_or(|p| *at > p)) {
        Some((_, outer)) => starts.get_mut(&outer).map(|o| o.name(resolve)),
        None => pushed_name(),
    };
    let open = starts.get_mut(&key).expect("found above");
    open.innermost_of.push((index, instead));
    Some(open.name(resolve))
}

/// An activity with its times on the trace's timeline.
fn placed(
    a: &nvtxr_record_format::gpu::Activity,
    placement: &super::scan::Placement,
) -> nvtxr_record_format::gpu::Activity {
    nvtxr_record_format::gpu::Activity {
        start: placement.place(a.start),
        end: placement.place(a.end),
        ..*a
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
    gpu: Option<Projection>,
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
