//! A process's launches (its traced CUDA API calls) as the replay meets
//! them on their threads: the GPU work each caused, projected onto the
//! ranges open around it, and the innermost of them, kept for its
//! activities.

use super::gpu::Slot;
use super::gpu_event::project;
use super::gpu_event::RangeKey;
use super::open::{innermost, Innermost, Stacks, Started};
use super::resolve::Resolver;
use super::scan::Placement;
use super::{Filter, Gpu, GpuEvent, Launch, Launched, Process, RangeName, Sink};
use hashbrown::HashMap;
use nvtxr_record_format::gpu::Activity;

/// A process's launches (its traced CUDA API calls), as the replay meets
/// them on their threads, and the GPU work each caused.
pub(super) struct Launches<'g> {
    gpu: &'g Gpu,
    placement: &'g Placement,
    /// The capture range: launches outside it are left out, with their work.
    filter: &'g Filter,
    /// What each launch was, in the order met.
    launched: Vec<Met>,
    /// The innermost ranges of the launches, each name once.
    ranges: indexmap::IndexSet<RangeName, hashbrown::DefaultHashBuilder>,
    /// Per activity: its launch's index in `launched`, plus 1 (0: none
    /// met; [`LEFT_OUT`]: its launch was outside the capture range), and
    /// its place among that launch's activities.
    launch_of: Vec<(u32, u32)>,
    /// The last launch's correlation id (a driver call inside a runtime
    /// call, should CUPTI report both, is one launch).
    last: Option<u32>,
    /// The activities of the launch being met, their times placed.
    caused: Vec<Slot>,
    /// The thread being replayed, and where its calls not yet met are in
    /// `Gpu::calls` (in start order).
    tid: u32,
    pending: std::ops::Range<usize>,
}

/// `Launches::launch_of`'s mark of an activity whose launch the capture
/// range left out.
const LEFT_OUT: u32 = u32::MAX;

/// A launch met: its call's index in `Gpu::calls`, and its innermost
/// range's index in `Launches::ranges` plus 1 (0: none); 8 bytes per
/// launch (its range's name in each took 56, its API, thread and start 32).
struct Met {
    call: u32,
    range: u32,
}

/// What is open on the launching thread: its push/pop ranges, the
/// start/end ranges it started and has not ended, every waiting start.
type OpenRanges<'o> = (
    &'o mut Stacks,
    &'o [(u64, u64)],
    &'o mut HashMap<(u64, u64), Started>,
);

impl<'g> Launches<'g> {
    pub(super) fn new(gpu: &'g Gpu, placement: &'g Placement, filter: &'g Filter) -> Self {
        Launches {
            gpu,
            placement,
            filter,
            // One per traced call at most: one allocation, not doubling.
            launched: Vec::with_capacity(gpu.calls.len()),
            ranges: Default::default(),
            launch_of: vec![(0, 0); gpu.activity_count()],
            last: None,
            caused: Vec::new(),
            tid: 0,
            pending: 0..0,
        }
    }

    /// Thread `tid`'s replay starts: its calls are met among its events.
    pub(super) fn start_thread(&mut self, tid: u32) {
        self.tid = tid;
        self.pending = self.gpu.calls_of(tid);
    }

    /// Meets the thread's calls that start before an event at `until`'s
    /// time (every one left for `None`). A call at the very time a range
    /// opens or closes (`until`'s flag: it closes) counts as inside it.
    pub(super) fn meet_before(
        &mut self,
        until: Option<(u64, bool)>,
        (stacks, started_here, starts): OpenRanges,
        resolve: &Resolver,
        sink: &mut dyn Sink,
        process: &Process,
    ) -> std::io::Result<()> {
        while !self.pending.is_empty() {
            let index = self.pending.start;
            let call = &self.gpu.calls[index];
            if let Some((time, closes)) = until {
                let at = self.placement.place(call.start);
                if at > time || (at == time && !closes) {
                    break;
                }
            }
            self.pending.start += 1;
            let open = (&mut *stacks, started_here, &mut *starts);
            self.meet(index, open, resolve, sink, process)?;
        }
        Ok(())
    }

    /// A launch on the thread being replayed, inside the ranges open there:
    /// its work is projected onto each, and it is remembered with the
    /// innermost.
    fn meet(
        &mut self,
        index: usize,
        (stacks, started_here, starts): OpenRanges,
        resolve: &Resolver,
        sink: &mut dyn Sink,
        process: &Process,
    ) -> std::io::Result<()> {
        let call = &self.gpu.calls[index];
        if self.last == Some(call.correlation) {
            return Ok(());
        }
        self.last = Some(call.correlation);
        let start = self.placement.place(call.start);
        let kept = self.filter.keeps_time(start);
        self.caused.clear();
        for (nth, i) in self.gpu.caused_by(call.correlation).enumerate() {
            let a = self.gpu.slot(i);
            let placed = (self.placement.place(a.start), self.placement.place(a.end));
            self.caused.push(a.with_times(placed));
            self.launch_of[i] = match kept {
                true => (self.launched.len() as u32 + 1, nth as u32),
                false => (LEFT_OUT, 0),
            };
        }
        let launch = Launch {
            tid: self.tid,
            start,
            end: self.placement.place(call.end),
            correlation: call.correlation,
            api: self.gpu.api_name(call.api),
            activities: self.caused.len() as u32,
        };
        project(&self.caused, stacks.open_mut().map(|d| &mut d.gpu));
        for key in started_here {
            if let Some(open) = starts.get_mut(key) {
                project(&self.caused, std::iter::once(&mut open.gpu));
            }
        }
        if kept {
            sink.launch(process, &launch)?;
        }
        let met = self.launched.len();
        let range = match innermost(stacks, started_here, starts, met, resolve) {
            Some(Innermost::Pushed(d)) => {
                let key = RangeKey(&d.domain, &d.name);
                match self.ranges.get_index_of(&key) {
                    Some(i) => i as u32 + 1,
                    None => self.range_index(Some(RangeName::new(key.0, key.1))),
                }
            }
            Some(Innermost::Started(name)) => self.range_index(Some(name)),
            None => 0,
        };
        self.launched.push(Met {
            call: index as u32,
            range,
        });
        Ok(())
    }

    /// A launch's innermost range as `Met::range` holds it (each name
    /// kept once: most launches of a loop are under names seen before).
    fn range_index(&mut self, range: Option<RangeName>) -> u32 {
        range.map_or(0, |range| self.ranges.insert_full(range).0 as u32 + 1)
    }

    /// Launch `index`'s innermost range is `range` after all (its start/end
    /// range ended on another thread).
    pub(super) fn rename(&mut self, index: usize, range: Option<RangeName>) {
        self.launched[index].range = self.range_index(range);
    }

    /// Launch `index` (in the order met), for its activities.
    fn launched(&self, index: usize) -> Launched<'_> {
        let met = &self.launched[index];
        let call = &self.gpu.calls[met.call as usize];
        Launched {
            tid: call.tid,
            start: self.placement.place(call.start),
            api: self.gpu.api_name(call.api),
            range: (met.range.checked_sub(1)).and_then(|r| self.ranges.get_index(r as usize)),
        }
    }

    /// Every activity of the process the capture range keeps (those of
    /// the launches it kept, and those of no launch met that start inside
    /// it), in start order, with its launch, to `sink` (after the
    /// process's threads); returns their number.
    pub(super) fn activities(
        &self,
        sink: &mut dyn Sink,
        process: &Process,
    ) -> std::io::Result<usize> {
        let gpu = self.gpu;
        let mut written = 0;
        for (i, &(launch, nth)) in self.launch_of.iter().enumerate() {
            let kept = match launch {
                LEFT_OUT => false,
                0 => (self.filter).keeps_time(self.placement.place(gpu.slot(i).start)),
                _ => true,
            };
            if !kept {
                continue;
            }
            written += 1;
            let a = gpu.activity(i);
            let activity = Activity {
                start: self.placement.place(a.start),
                end: self.placement.place(a.end),
                ..a
            };
            let mangled = gpu.name(&a);
            let launch = launch.checked_sub(1).map(|l| self.launched(l as usize));
            sink.gpu(
                process,
                &GpuEvent {
                    activity: &activity,
                    name: gpu.demangled(&a, &mangled),
                    mangled: &mangled,
                    launch: launch.as_ref(),
                    nth,
                    gpu: gpu.gpus.get(&a.device),
                },
            )?;
        }
        Ok(written)
    }
}
