//! The index `nvtxr view` answers from, built in one replay of the
//! recording: per timeline row (a thread, or a process's start/end ranges),
//! each nesting level (lane) as sorted arrays of start, end and details,
//! and the marks as sorted arrays of time and details. On one lane ranges
//! never overlap (push/pop ranges nest; start/end ranges get lanes of their
//! own), so the ranges a window holds are two binary searches away.
//!
//! Names and looks (kind, tooltip lines, color) are numbered: an event
//! costs 24 bytes (start, end, name and look), a distinct name or look its
//! text and 8 bytes. Those are kept in a temporary file ([`store`]), not in
//! memory: a name seen among the last [`RECENT`] distinct ones gets its
//! number again, one seen before those a new number (see [`Texts`]).
//!
//! A window with more events on a lane than it has pixels is answered with
//! bars instead: per pixel bin, the exact number of ranges it holds (found
//! by binary search, so a bin with anything in it always shows) and the
//! name that covers most of it (exact up to [`SAMPLES`] ranges in the bin,
//! else weighed on that many spread evenly across it).

use super::lanes::{Lane, Marks, Shown};
use super::look::{look, look_answer, LookAnswer, What};
use super::store::{Store, Texts};
use crate::html;
use crate::model::{
    gpu_label, gpu_pid, Details, GpuEvent, Mark, Process, Range, Sink, Style, Thread,
};
use serde::Serialize;
use std::collections::HashMap;

/// Ranges weighed per bin to find the name that dominates it.
pub const SAMPLES: usize = 16;

/// Distinct names (and looks) remembered while indexing, to give one that
/// comes again the number it has: past this many, the oldest are forgotten.
pub const RECENT: usize = 1 << 16;

/// `row`'s lane `lane`, made (with those before it) if new.
fn lane_of(row: &mut Row, lane: usize) -> &mut Lane {
    if row.lanes.len() <= lane {
        row.lanes.resize_with(lane + 1, Lane::default);
        row.info.depth = lane;
    }
    &mut row.lanes[lane]
}

/// A timeline row as the page lists it.
#[derive(Serialize)]
pub struct RowInfo {
    pub pid: u32,
    pub process: String,
    pub label: String,
    #[serde(rename = "async")]
    pub is_async: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub empty: bool,
    /// The deepest lane.
    pub depth: usize,
    /// A thread's row: its tid (where its launches' flows start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tid: Option<u32>,
    /// A GPU stream's row: the pid of the process that launched its work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<u32>,
}

struct Row {
    info: RowInfo,
    lanes: Vec<Lane>,
    marks: Marks,
}

/// What the page asks for: the rows' events between `t0` and `t1` (ns
/// from the trace's start) for a timeline `width` pixels wide.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub t0: u64,
    pub t1: u64,
    pub width: u32,
}

/// One lane's answer: every range as `[start, end, name, look]`, or bars
/// as `[start, end, name, look, ranges]`.
type Entries = Vec<Vec<u64>>;

#[derive(Serialize)]
pub struct RowWindow {
    lanes: Vec<Entries>,
    /// Every mark as `[time, name, look]`, or bins as `[time, name, look, marks]`.
    marks: Entries,
    /// A GPU stream's row: per lane, each range's launch as `[tid, time]`
    /// (tid 0: none), where its lane lists every range (none for bars).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    launches: Vec<Vec<[u64; 2]>>,
}

/// The answer to a [`Window`]: each row's lanes and marks, and the names
/// and looks they use.
#[derive(Serialize, Default)]
pub struct WindowAnswer<'a> {
    rows: Vec<RowWindow>,
    names: HashMap<u32, &'a str>,
    looks: HashMap<u32, LookAnswer<'a>>,
}

impl<'a> WindowAnswer<'a> {
    /// `shown`'s entry: its name and look, noted for the answer.
    fn entry(&mut self, index: &'a Index, shown: Shown) -> [u64; 2] {
        let (name, look) = (shown.name, shown.look);
        self.names.entry(name).or_insert_with(|| index.name(name));
        self.looks
            .entry(look)
            .or_insert_with(|| look_answer(index.looks.get(&index.store, look)));
        [u64::from(name), u64::from(look)]
    }
}

/// A range that matched a search.
#[derive(Serialize, Debug, PartialEq)]
pub struct Found {
    pub row: usize,
    pub start: u64,
    pub end: u64,
}

/// The index of one recording (as filtered).
pub struct Index {
    origin: u64,
    /// The trace's length (ns from its start).
    pub end: u64,
    /// Ranges and marks.
    pub items: u64,
    store: Store,
    names: Texts,
    /// As [`look`] writes them.
    looks: Texts,
    /// A look being written.
    scratch: String,
    rows: Vec<Row>,
    /// The current process's start/end ranges, as they come: they may
    /// overlap, and get lanes once all are known (at the process's end).
    asynchronous: Lane,
    /// The current process's GPU activity, a lane per (device, stream): a
    /// stream runs one thing at a time. Rows of their own at its end.
    gpu: std::collections::BTreeMap<(u32, u32), Lane>,
    /// The current process's GPUs' labels, by device.
    gpu_labels: HashMap<u32, String>,
}

impl Index {
    /// An empty index for a trace starting at `origin` and ending at `end`.
    pub fn new(origin: u64, end: u64) -> std::io::Result<Index> {
        Ok(Index {
            origin,
            end: end.saturating_sub(origin),
            items: 0,
            store: Store::new()?,
            names: Texts::new(RECENT),
            looks: Texts::new(RECENT),
            scratch: String::new(),
            rows: Vec::new(),
            asynchronous: Lane::default(),
            gpu: Default::default(),
            gpu_labels: HashMap::new(),
        })
    }

    /// Ends the indexing: from here on the index answers.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.store.finish()
    }

    fn name(&self, name: u32) -> &str {
        self.names.get(&self.store, name)
    }

    /// The rows, as the page lists them.
    pub fn rows(&self) -> impl Iterator<Item = &RowInfo> {
        self.rows.iter().map(|r| &r.info)
    }

    /// How an event with these details is shown.
    fn shown(&mut self, d: &Details, what: What) -> std::io::Result<Shown> {
        let name = self.names.number(&mut self.store, &d.name)?;
        look(&mut self.scratch, what, d);
        let look = self.looks.number(&mut self.store, &self.scratch)?;
        Ok(Shown { name, look })
    }

    fn row(&mut self, p: &Process, label: String, is_async: bool) -> &mut Row {
        self.rows.push(Row {
            info: RowInfo {
                pid: p.trace_pid,
                process: html::process_title(p),
                label,
                is_async,
                empty: false,
                depth: 0,
                tid: None,
                from: None,
            },
            lanes: Vec::new(),
            marks: Marks::default(),
        });
        self.rows.last_mut().expect("just pushed")
    }

    /// Sorts the last row's lanes and marks and writes them out.
    fn complete_row(&mut self) -> std::io::Result<()> {
        let Some(row) = self.rows.last_mut() else {
            return Ok(());
        };
        for lane in &mut row.lanes {
            lane.complete(&mut self.store)?;
        }
        row.marks.complete(&mut self.store)
    }

    /// Every row's events in `window`: each range and mark where a lane has
    /// no more of them than pixels, else bars (see the module's comment).
    pub fn window(&self, window: Window) -> WindowAnswer<'_> {
        let bins = u64::from(window.width.clamp(1, 10_000));
        let (t0, t1) = (window.t0, window.t1.max(window.t0 + 1));
        let mut answer = WindowAnswer::default();
        for row in &self.rows {
            let (lanes, launches): (Vec<_>, Vec<_>) = row
                .lanes
                .iter()
                .map(|lane| self.lane_window(lane, (t0, t1), bins, &mut answer))
                .unzip();
            let marks = self.marks_window(&row.marks, (t0, t1), bins, &mut answer);
            let launches = match row.lanes.iter().any(Lane::launched) {
                true => launches,
                false => Vec::new(),
            };
            answer.rows.push(RowWindow {
                lanes,
                marks,
                launches,
            });
        }
        answer
    }

    fn lane_window<'a>(
        &'a self,
        lane: &Lane,
        (t0, t1): (u64, u64),
        bins: u64,
        answer: &mut WindowAnswer<'a>,
    ) -> (Entries, Vec<[u64; 2]>) {
        let s = &self.store;
        let (start, end) = (|i| s.get(&lane.start, i), |i| s.get(&lane.end, i));
        let shown = |i| Shown::from_bits(s.get(&lane.shown, i));
        let lo = s.partition_point(&lane.end, 0..lane.end.len(), |e| e < t0);
        let hi = s.partition_point(&lane.start, 0..lane.start.len(), |b| b <= t1);
        let mut out = Entries::new();
        if hi <= lo {
            return (out, Vec::new());
        }
        if (hi - lo) as u64 <= bins {
            let mut launches = Vec::new();
            for i in lo..hi {
                let [name, look] = answer.entry(self, shown(i));
                out.push(vec![start(i), end(i), name, look]);
                if lane.launched() {
                    launches.push([s.get(&lane.launch_tid, i), s.get(&lane.launch_at, i)]);
                }
            }
            return (out, launches);
        }
        let width = (t1 - t0).div_ceil(bins).max(1);
        // `counted`: ranges before it are in a bar already; `last`: the bin
        // the last bar ends in.
        let (mut i, mut counted, mut last) = (lo, lo, u64::MAX);
        for b in 0..bins {
            let (a, z) = (t0 + b * width, (t0 + (b + 1) * width).min(t1 + 1));
            if a > t1 {
                break;
            }
            i = s.partition_point(&lane.end, i..hi, |e| e < a);
            let j = s.partition_point(&lane.start, i..hi, |b| b < z);
            if j == i {
                continue;
            }
            let dominant = self.dominant(lane, i, j, (a, z));
            // The bar covers the bin where ranges are.
            let (from, to) = (a.max(start(i)), z.min(end(j - 1)));
            let new = (j - counted.max(i)) as u64;
            counted = counted.max(j);
            match out.last_mut() {
                Some(bar) if last.wrapping_add(1) == b && self.same_name(bar[2], dominant) => {
                    bar[1] = to;
                    bar[4] += new;
                }
                _ => {
                    let [name, look] = answer.entry(self, dominant);
                    out.push(vec![from, to, name, look, (j - i) as u64]);
                }
            }
            last = b;
        }
        (out, Vec::new())
    }

    fn marks_window<'a>(
        &'a self,
        marks: &Marks,
        (t0, t1): (u64, u64),
        bins: u64,
        answer: &mut WindowAnswer<'a>,
    ) -> Entries {
        let s = &self.store;
        let time = |i| s.get(&marks.time, i);
        let all = 0..marks.time.len();
        let lo = s.partition_point(&marks.time, all.clone(), |t| t < t0);
        let hi = s.partition_point(&marks.time, all, |t| t <= t1);
        let exact = ((hi.max(lo) - lo) as u64) <= bins;
        let width = (t1 - t0).div_ceil(bins).max(1);
        let mut out = Entries::new();
        let mut i = lo;
        while i < hi {
            let shown = Shown::from_bits(s.get(&marks.shown, i));
            let [name, look] = answer.entry(self, shown);
            let mut entry = vec![time(i), name, look];
            let j = if exact {
                i + 1
            } else {
                let z = t0 + ((time(i) - t0) / width + 1) * width;
                let j = s.partition_point(&marks.time, i..hi, |t| t < z);
                entry.push((j - i) as u64);
                j
            };
            out.push(entry);
            i = j;
        }
        out
    }

    /// The first range whose name contains `query` (case-insensitive) that
    /// starts at `from` or later, else the first of all; on any row.
    pub fn find(&self, query: &str, from: u64) -> Option<Found> {
        let query = query.to_lowercase();
        if query.is_empty() {
            return None;
        }
        let wanted: Vec<bool> = (0..self.names.len() as u32)
            .map(|n| self.name(n).to_lowercase().contains(&query))
            .collect();
        let s = &self.store;
        let first_from = |from: u64| {
            let mut best: Option<Found> = None;
            for (row, r) in self.rows.iter().enumerate() {
                for lane in &r.lanes {
                    let all = 0..lane.start.len();
                    let lo = s.partition_point(&lane.start, all.clone(), |b| b < from);
                    let limit = best.as_ref().map_or(u64::MAX, |b| b.start);
                    if let Some(i) = (lo..all.end)
                        .take_while(|&i| s.get(&lane.start, i) < limit)
                        .find(|&i| wanted[Shown::from_bits(s.get(&lane.shown, i)).name as usize])
                    {
                        best = Some(Found {
                            row,
                            start: s.get(&lane.start, i),
                            end: s.get(&lane.end, i),
                        });
                    }
                }
            }
            best
        };
        first_from(from).or_else(|| first_from(0))
    }

    /// Whether name number `name` has `shown`'s name (a name the index
    /// forgot has more than one number).
    fn same_name(&self, name: u64, shown: Shown) -> bool {
        name == u64::from(shown.name) || self.name(name as u32) == self.name(shown.name)
    }

    /// What the name covering most of `bin` among ranges `i..j` of `lane`
    /// shows: all of them up to [`SAMPLES`], else that many spread evenly.
    fn dominant(&self, lane: &Lane, i: usize, j: usize, (a, z): (u64, u64)) -> Shown {
        let s = &self.store;
        let shown = |at| Shown::from_bits(s.get(&lane.shown, at));
        let n = j - i;
        let picks = n.min(SAMPLES);
        let mut weights: Vec<(Shown, u64)> = Vec::with_capacity(picks);
        for p in 0..picks {
            let at = i + p * n / picks;
            let covered = s
                .get(&lane.end, at)
                .min(z)
                .saturating_sub(s.get(&lane.start, at).max(a))
                .max(1);
            let shown = shown(at);
            match weights
                .iter_mut()
                .find(|(s, _)| self.same_name(s.name.into(), shown))
            {
                Some(w) => w.1 += covered,
                None => weights.push((shown, covered)),
            }
        }
        weights
            .iter()
            .max_by_key(|(_, w)| *w)
            .map_or(shown(i), |w| w.0)
    }
}

impl Sink for Index {
    fn thread_start(&mut self, p: &Process, t: &Thread) -> std::io::Result<()> {
        self.row(p, html::thread_title(t), false).info.tid = Some(t.tid);
        Ok(())
    }

    fn range(&mut self, _: &Process, r: &Range) -> std::io::Result<()> {
        self.items += 1;
        let shown = self.shown(&r.details, What::of(r))?;
        let (start, end) = (r.start - self.origin, r.end - self.origin);
        let lane = match r.style {
            // Lanes given at the process's end.
            Style::StartEnd => &mut self.asynchronous,
            Style::PushPop => {
                let row = self.rows.last_mut().expect("a thread's row");
                lane_of(row, r.depth as usize)
            }
        };
        lane.push(&mut self.store, start, end, shown)
    }

    fn mark(&mut self, _: &Process, m: &Mark) -> std::io::Result<()> {
        self.items += 1;
        let shown = self.shown(&m.details, What::Mark)?;
        let marks = &mut self.rows.last_mut().expect("a thread's row").marks;
        marks.push(&mut self.store, m.time - self.origin, shown)
    }

    fn thread_end(&mut self, _: &Process, _: u32) -> std::io::Result<()> {
        self.complete_row()
    }

    fn gpu(&mut self, p: &Process, g: &GpuEvent) -> std::io::Result<()> {
        self.items += 1;
        let a = g.activity;
        self.gpu_labels
            .entry(a.device)
            .or_insert_with(|| gpu_label(p, a.device, g.gpu));
        let details = html::gpu_details(g);
        let shown = self.shown(&details, What::Gpu)?;
        let (start, end) = (a.start - self.origin, a.end.max(a.start) - self.origin);
        let launch = (g.launch).map(|l| (l.tid, l.start.saturating_sub(self.origin)));
        let lane = self.gpu.entry((a.device, a.stream)).or_default();
        lane.push_launched(&mut self.store, (start, end), shown, launch)
    }

    fn process_end(&mut self, p: &Process) -> std::io::Result<()> {
        let gpus = std::mem::take(&mut self.gpu);
        for ((device, stream), lane) in gpus {
            let label = self.gpu_labels[&device].clone();
            let row = self.row(p, format!("stream {stream}"), false);
            row.info.pid = gpu_pid(p, device);
            row.info.process = label;
            row.info.from = Some(p.trace_pid);
            row.lanes.push(lane);
            self.complete_row()?;
        }
        self.gpu_labels.clear();
        if p.threads.is_empty() {
            self.row(p, html::NOTHING_RECORDED.into(), false).info.empty = true;
            return Ok(());
        }
        let pending = std::mem::take(&mut self.asynchronous);
        if pending.start.len() == 0 {
            return Ok(());
        }
        // Read back (24 bytes a range), in the order of their starts.
        let s = &mut self.store;
        let (start, end) = (s.read_all(&pending.start)?, s.read_all(&pending.end)?);
        let shown = s.read_all(&pending.shown)?;
        let mut order: Vec<u32> = (0..start.len() as u32).collect();
        order.sort_by_key(|&i| start[i as usize]);
        let spans = order.iter().map(|&i| (start[i as usize], end[i as usize]));
        let lanes = html::lanes(spans);
        self.row(p, "start/end ranges".into(), true);
        let row = self.rows.last_mut().expect("just made");
        for (&i, lane) in order.iter().zip(lanes) {
            let i = i as usize;
            let shown = Shown::from_bits(shown[i]);
            lane_of(row, lane).push(&mut self.store, start[i], end[i], shown)?;
        }
        self.complete_row()
    }
}
