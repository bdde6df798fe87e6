//! The index `nvtxr view` answers from, built in one replay of the
//! recording: per timeline row (a thread, or a process's start/end ranges),
//! each nesting level (lane) as sorted arrays of start, end and details,
//! and the marks as sorted arrays of time and details. On one lane ranges
//! never overlap (push/pop ranges nest; start/end ranges get lanes of their
//! own), so the ranges a window holds are two binary searches away.
//!
//! A window with more events on a lane than it has pixels is answered with
//! bars instead: per pixel bin, the exact number of ranges it holds (found
//! by binary search, so a bin with anything in it always shows) and the
//! name that covers most of it (exact up to [`SAMPLES`] ranges in the bin,
//! else weighed on that many spread evenly across it).

use crate::html;
use crate::model::{Details, Mark, Process, Range, Sink, Style, Thread};
use crate::summary;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Ranges weighed per bin to find the name that dominates it.
pub const SAMPLES: usize = 16;

/// How an event is shown, shared by every event with the same name,
/// kind and details.
#[derive(Serialize)]
pub struct Detail {
    /// Index into [`Index::names`].
    #[serde(skip)]
    name: u32,
    /// Name, CSS color (if the program gave one), what it is ("push/pop",
    /// "start/end, never ended", "mark") and the tooltip's further lines.
    #[serde(rename = "n")]
    text: String,
    #[serde(rename = "c", skip_serializing_if = "Option::is_none")]
    color: Option<String>,
    #[serde(rename = "k")]
    kind: String,
    #[serde(rename = "a")]
    about: String,
}

/// A nesting level's ranges, sorted by start (and, as they never
/// overlap, by end).
#[derive(Default)]
struct Lane {
    start: Vec<u64>,
    end: Vec<u64>,
    detail: Vec<u32>,
}

/// A row's marks, sorted by time.
#[derive(Default)]
struct Marks {
    time: Vec<u64>,
    detail: Vec<u32>,
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

/// One lane's answer: every range as `[start, end, detail]`, or bars as
/// `[start, end, detail, ranges]`.
type Entries = Vec<Vec<u64>>;

#[derive(Serialize)]
pub struct RowWindow {
    lanes: Vec<Entries>,
    /// Every mark as `[time, detail]`, or bins as `[time, detail, marks]`.
    marks: Entries,
}

/// The answer to a [`Window`]: each row's lanes and marks, and the details
/// they use.
#[derive(Serialize)]
pub struct WindowAnswer<'a> {
    rows: Vec<RowWindow>,
    details: HashMap<u32, &'a Detail>,
}

/// A range that matched a search.
#[derive(Serialize, Debug, PartialEq)]
pub struct Found {
    pub row: usize,
    pub start: u64,
    pub end: u64,
}

/// The index of one recording (as filtered), with its summary.
pub struct Index {
    origin: u64,
    /// The trace's length (ns from its start).
    pub end: u64,
    /// Ranges and marks.
    pub items: u64,
    names: Vec<String>,
    details: Vec<Detail>,
    rows: Vec<Row>,
    /// Built along: the summary.
    pub summary: summary::Collector,
    name_ids: HashMap<String, u32>,
    detail_ids: HashMap<(u32, String, String, Option<u32>), u32>,
    /// The current process's start/end ranges.
    asynchronous: Vec<Range>,
}

impl Index {
    /// An empty index for a trace starting at `origin` and ending at `end`.
    pub fn new(origin: u64, end: u64) -> Index {
        Index {
            origin,
            end: end.saturating_sub(origin),
            items: 0,
            names: Vec::new(),
            details: Vec::new(),
            rows: Vec::new(),
            summary: summary::Collector::default(),
            name_ids: HashMap::new(),
            detail_ids: HashMap::new(),
            asynchronous: Vec::new(),
        }
    }

    /// The rows, as the page lists them.
    pub fn rows(&self) -> impl Iterator<Item = &RowInfo> {
        self.rows.iter().map(|r| &r.info)
    }

    /// The detail id of an event.
    fn detail(&mut self, d: &Details, kind: String) -> u32 {
        let about = html::about(d).join("\n");
        let name = match self.name_ids.get(&d.name) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32;
                self.names.push(d.name.clone());
                self.name_ids.insert(d.name.clone(), id);
                id
            }
        };
        let key = (name, kind, about, d.color);
        if let Some(&id) = self.detail_ids.get(&key) {
            return id;
        }
        let id = self.details.len() as u32;
        self.details.push(Detail {
            name,
            text: d.name.clone(),
            color: d.color.map(crate::chrome::css_color),
            kind: key.1.clone(),
            about: key.2.clone(),
        });
        self.detail_ids.insert(key, id);
        id
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
            },
            lanes: Vec::new(),
            marks: Marks::default(),
        });
        self.rows.last_mut().expect("just pushed")
    }

    /// Puts a range on its row's lane.
    fn place(&mut self, row: usize, lane: usize, r: &Range, kind: String) {
        let detail = self.detail(&r.details, kind);
        let (start, end) = (r.start - self.origin, r.end - self.origin);
        let row = &mut self.rows[row];
        if row.lanes.len() <= lane {
            row.lanes.resize_with(lane + 1, Lane::default);
            row.info.depth = lane;
        }
        let lane = &mut row.lanes[lane];
        lane.start.push(start);
        lane.end.push(end);
        lane.detail.push(detail);
    }

    /// Every row's events in `window`: each range and mark where a lane has
    /// no more of them than pixels, else bars (see the module's comment).
    pub fn window(&self, window: Window) -> WindowAnswer<'_> {
        let bins = window.width.clamp(1, 10_000) as u64;
        let (t0, t1) = (window.t0, window.t1.max(window.t0 + 1));
        let mut used: HashMap<u32, &Detail> = HashMap::new();
        let rows = self
            .rows
            .iter()
            .map(|row| RowWindow {
                lanes: row
                    .lanes
                    .iter()
                    .map(|lane| self.lane_window(lane, t0, t1, bins, &mut used))
                    .collect(),
                marks: self.marks_window(&row.marks, t0, t1, bins, &mut used),
            })
            .collect();
        WindowAnswer {
            rows,
            details: used,
        }
    }

    fn lane_window<'a>(
        &'a self,
        lane: &Lane,
        t0: u64,
        t1: u64,
        bins: u64,
        used: &mut HashMap<u32, &'a Detail>,
    ) -> Entries {
        let lo = lane.end.partition_point(|&e| e < t0);
        let hi = lane.start.partition_point(|&s| s <= t1);
        let mut out = Entries::new();
        if hi <= lo {
            return out;
        }
        if (hi - lo) as u64 <= bins {
            for i in lo..hi {
                let k = lane.detail[i];
                used.insert(k, &self.details[k as usize]);
                out.push(vec![lane.start[i], lane.end[i], u64::from(k)]);
            }
            return out;
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
            i += lane.end[i..hi].partition_point(|&e| e < a);
            let j = i + lane.start[i..hi].partition_point(|&s| s < z);
            if j == i {
                continue;
            }
            let k = self.dominant(lane, i, j, (a, z));
            let name = self.details[k as usize].name;
            // The bar covers the bin where ranges are.
            let (from, to) = (a.max(lane.start[i]), z.min(lane.end[j - 1]));
            let new = (j - counted.max(i)) as u64;
            counted = counted.max(j);
            match out.last_mut() {
                Some(bar)
                    if last.wrapping_add(1) == b && self.details[bar[2] as usize].name == name =>
                {
                    bar[1] = to;
                    bar[3] += new;
                }
                _ => {
                    used.insert(k, &self.details[k as usize]);
                    out.push(vec![from, to, u64::from(k), (j - i) as u64]);
                }
            }
            last = b;
        }
        out
    }

    /// The detail of the name covering most of `bin` among ranges `i..j`:
    /// all of them up to [`SAMPLES`], else that many spread evenly.
    fn dominant(&self, lane: &Lane, i: usize, j: usize, (a, z): (u64, u64)) -> u32 {
        let n = j - i;
        let picks = n.min(SAMPLES);
        let mut weights: Vec<(u32, u64, u32)> = Vec::with_capacity(picks);
        for p in 0..picks {
            let at = i + p * n / picks;
            let k = lane.detail[at];
            let covered = lane.end[at]
                .min(z)
                .saturating_sub(lane.start[at].max(a))
                .max(1);
            let name = self.details[k as usize].name;
            match weights.iter_mut().find(|(m, _, _)| *m == name) {
                Some(w) => w.1 += covered,
                None => weights.push((name, covered, k)),
            }
        }
        weights
            .iter()
            .max_by_key(|(_, w, _)| *w)
            .map_or(lane.detail[i], |w| w.2)
    }

    fn marks_window<'a>(
        &'a self,
        marks: &Marks,
        t0: u64,
        t1: u64,
        bins: u64,
        used: &mut HashMap<u32, &'a Detail>,
    ) -> Entries {
        let lo = marks.time.partition_point(|&t| t < t0);
        let hi = marks.time.partition_point(|&t| t <= t1);
        let mut out = Entries::new();
        if hi <= lo {
            return out;
        }
        let exact = (hi - lo) as u64 <= bins;
        let width = (t1 - t0).div_ceil(bins).max(1);
        let mut i = lo;
        while i < hi {
            let (j, time) = if exact {
                (i + 1, marks.time[i])
            } else {
                let bin = (marks.time[i] - t0) / width;
                let z = t0 + (bin + 1) * width;
                (
                    i + marks.time[i..hi].partition_point(|&t| t < z),
                    marks.time[i],
                )
            };
            let k = marks.detail[i];
            used.insert(k, &self.details[k as usize]);
            let mut entry = vec![time, u64::from(k)];
            if !exact {
                entry.push((j - i) as u64);
            }
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
        let wanted: Vec<bool> = self
            .names
            .iter()
            .map(|n| n.to_lowercase().contains(&query))
            .collect();
        let matches = |k: u32| wanted[self.details[k as usize].name as usize];
        let first_from = |from: u64| {
            let mut best: Option<Found> = None;
            for (row, r) in self.rows.iter().enumerate() {
                for lane in &r.lanes {
                    let lo = lane.start.partition_point(|&s| s < from);
                    let limit = best.as_ref().map_or(u64::MAX, |b| b.start);
                    if let Some(i) = (lo..lane.start.len())
                        .take_while(|&i| lane.start[i] < limit)
                        .find(|&i| matches(lane.detail[i]))
                    {
                        best = Some(Found {
                            row,
                            start: lane.start[i],
                            end: lane.end[i],
                        });
                    }
                }
            }
            best
        };
        first_from(from).or_else(|| first_from(0))
    }

    /// The legend: range names by most time (the summary's `rows`), then
    /// marks' names; at most `limit`, each with its first color (`colors`).
    pub fn legend<'a>(
        &'a self,
        rows: &'a [summary::Row],
        colors: &BTreeMap<String, Option<u32>>,
        limit: usize,
    ) -> Vec<html::Swatch<'a>> {
        let mut seen = HashSet::new();
        rows.iter()
            .map(|r| r.range.split_once(':').map_or(r.range.as_str(), |(_, n)| n))
            .chain(self.names.iter().map(String::as_str))
            .filter(|&n| seen.insert(n))
            .take(limit)
            .map(|n| html::Swatch::new(n, colors.get(n).copied().flatten()))
            .collect()
    }
}

impl Sink for Index {
    fn thread_start(&mut self, p: &Process, t: &Thread) -> std::io::Result<()> {
        self.row(p, html::thread_title(t), false);
        Ok(())
    }

    fn range(&mut self, p: &Process, r: &Range) -> std::io::Result<()> {
        self.items += 1;
        self.summary.range(p, r)?;
        if r.style == Style::StartEnd {
            self.asynchronous.push(r.clone());
            return Ok(());
        }
        let kind = match r.unterminated {
            true => "push/pop, never popped",
            false => "push/pop",
        };
        self.place(self.rows.len() - 1, r.depth as usize, r, kind.into());
        Ok(())
    }

    fn mark(&mut self, p: &Process, m: &Mark) -> std::io::Result<()> {
        self.items += 1;
        self.summary.mark(p, m)?;
        let detail = self.detail(&m.details, "mark".into());
        let marks = &mut self.rows.last_mut().expect("a thread's row").marks;
        marks.time.push(m.time - self.origin);
        marks.detail.push(detail);
        Ok(())
    }

    fn thread_end(&mut self, _: &Process, _: u32) -> std::io::Result<()> {
        let row = self.rows.last_mut().expect("a thread's row");
        for lane in &mut row.lanes {
            sort_lane(lane);
        }
        sort_marks(&mut row.marks);
        Ok(())
    }

    fn process_end(&mut self, p: &Process) -> std::io::Result<()> {
        if p.threads.is_empty() {
            self.row(p, html::NOTHING_RECORDED.into(), false).info.empty = true;
            return Ok(());
        }
        let mut ranges = std::mem::take(&mut self.asynchronous);
        if ranges.is_empty() {
            return Ok(());
        }
        ranges.sort_by_key(|r| r.start);
        self.row(p, "start/end ranges".into(), true);
        let row = self.rows.len() - 1;
        for (r, lane) in ranges.iter().zip(html::lanes(&ranges)) {
            let kind = match r.unterminated {
                true => "start/end, never ended",
                false => "start/end",
            };
            self.place(row, lane, r, kind.into());
        }
        Ok(())
    }
}

/// Sorts a lane by start, if the replay's order left it unsorted.
fn sort_lane(lane: &mut Lane) {
    if lane.start.is_sorted() {
        return;
    }
    let mut order: Vec<usize> = (0..lane.start.len()).collect();
    order.sort_by_key(|&i| lane.start[i]);
    lane.start = order.iter().map(|&i| lane.start[i]).collect();
    lane.end = order.iter().map(|&i| lane.end[i]).collect();
    lane.detail = order.iter().map(|&i| lane.detail[i]).collect();
}

fn sort_marks(marks: &mut Marks) {
    if marks.time.is_sorted() {
        return;
    }
    let mut order: Vec<usize> = (0..marks.time.len()).collect();
    order.sort_by_key(|&i| marks.time[i]);
    marks.time = order.iter().map(|&i| marks.time[i]).collect();
    marks.detail = order.iter().map(|&i| marks.detail[i]).collect();
}
