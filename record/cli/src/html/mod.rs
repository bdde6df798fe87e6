//! A self-contained HTML timeline (no network access, one file): threads as
//! rows, nested push/pop ranges as colored bars (outlined, so a white bar
//! shows; labels black or white by the bar's brightness), start/end ranges
//! on a row per process, marks, GPU activity on a row per stream
//! (`gpu.rs`); hover for details; wheel to zoom, drag to pan; find a range
//! by name; a legend and the summary table below.
//!
//! A recording of more than [`DETAILED`] events is drawn as an overview, so
//! the page stays small and opens at once whatever the trace's length: each
//! thread's first [`OVERVIEW_DEPTHS`] nesting levels (and each GPU stream)
//! in [`BINS`] time bins, a bar per run of bins that one name dominates (its tooltip: how many
//! ranges the bin holds and the dominant one's share), marks left out. The
//! page says so, and that the `.pftrace` (Perfetto) has every event.

use crate::model::css_color;
use crate::model::{Details, GpuEvent, Mark, Process, Range, Scan, Sink, Style, Thread};
use crate::summary;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

mod gpu;
mod overview;

pub use gpu::gpu_details;
use overview::{Overview, OVERVIEW_LEGEND, OVERVIEW_SUMMARY};
pub use overview::{BINS, DETAILED, OVERVIEW_DEPTHS};

const TEMPLATE: &str = include_str!("timeline.html");

/// The tooltip text of a range or mark.
fn tip(d: &Details, when: &str) -> String {
    let mut lines = vec![d.name.to_string(), when.to_string()];
    lines.extend(about(d));
    lines.join("\n")
}

/// A tooltip's lines after the name and the time: domain, category,
/// payload, color and decoded payload fields, those the event has.
pub fn about(d: &Details) -> Vec<String> {
    let mut lines = Vec::new();
    if !d.domain.is_empty() {
        lines.push(format!("domain: {}", d.domain));
    }
    if let Some((id, name)) = &d.category {
        lines.push(format!(
            "category: {id}{}",
            name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()
        ));
    }
    if let Some(p) = d.payload {
        lines.push(format!("payload: {}", script_json(&p)));
    }
    if let Some(c) = d.color {
        lines.push(format!("color: {}", css_color(c)));
    }
    for (name, value) in d.fields.iter().flat_map(|f| f.iter()) {
        lines.push(match value {
            serde_json::Value::String(s) => format!("{name}: {s}"),
            v => format!("{name}: {v}"),
        });
    }
    lines
}

/// Lanes for start/end ranges, given as (start, end) sorted by start, which
/// may overlap: each one's lane, the first whose last range has ended.
pub fn lanes(spans: impl IntoIterator<Item = (u64, u64)>) -> Vec<usize> {
    let mut ends: Vec<u64> = Vec::new();
    spans
        .into_iter()
        .map(|span| lanes_of(&mut ends, span))
        .collect()
}

/// The lane of the next span of [`lanes`], given when each lane's last span
/// ends (`ends`, updated).
fn lanes_of(ends: &mut Vec<u64>, (start, end): (u64, u64)) -> usize {
    let lane = ends
        .iter()
        .position(|&free| free <= start)
        .unwrap_or_else(|| {
            ends.push(0);
            ends.len() - 1
        });
    ends[lane] = end;
    lane
}

fn duration(ns: u64) -> String {
    format!("{:.3} µs", ns as f64 / 1000.0)
}

/// `value` as JSON that is safe inside an HTML `<script>` element (`<`
/// only occurs in JSON strings, where `\u003c` means the same).
fn script_json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value)
        .expect("plain data serializes")
        .replace('<', "\\u003c")
}

/// A legend swatch: a range or mark name and its first color.
#[derive(Serialize)]
pub struct Swatch<'a> {
    n: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    c: Option<String>,
}

impl<'a> Swatch<'a> {
    pub fn new(name: &'a str, color: Option<u32>) -> Swatch<'a> {
        Swatch {
            n: name,
            c: color.map(css_color),
        }
    }
}

/// A bar or mark of a row: name, tooltip, color, and where it is: start,
/// end and depth (lane) of a range, or the time of a mark.
#[derive(Serialize, Default)]
struct Item<'a> {
    n: &'a str,
    /// A GPU activity's launch: its thread and time (on the row's `from`
    /// process), where its flow starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    l: Option<[u64; 2]>,
    i: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    c: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    e: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    d: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    t: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    m: Option<u8>,
}

/// What ties a row to another for the flows from launches to GPU work: a
/// thread's row is found by its tid, a GPU stream's row names the process
/// whose threads launched its work.
enum Link {
    None,
    Thread(u32),
    LaunchedFrom(u32),
}

/// The page in its served mode (`nvtxr view`): it asks its server for
/// what is on screen.
pub fn served_page(title: &str) -> String {
    TEMPLATE
        .replace("__TITLE__", &html_escape(title))
        .replace("__DATA__", "null")
}

/// Writes the page as a replay goes: a row per thread (its push/pop ranges
/// and marks as they come), then a row of each process's start/end ranges
/// on lanes (kept until the process ends, to place them).
pub struct Page<'a> {
    out: &'a mut dyn Write,
    origin: u64,
    /// Set for a recording too long to draw every event.
    overview: Option<Overview>,
    first_row: bool,
    first_item: bool,
    count: usize,
    /// The current process's start/end ranges.
    asynchronous: Vec<Range>,
    /// The current process's GPU streams, by device and stream.
    gpu: BTreeMap<(u32, u32), gpu::Stream>,
}

impl<'a> Page<'a> {
    /// Writes the page up to its rows; `events` and `end` (the recording's
    /// count and last timestamp) choose the overview.
    pub fn new(
        out: &'a mut dyn Write,
        title: &str,
        origin: u64,
        (events, end): (u64, u64),
    ) -> std::io::Result<Self> {
        let (head, _) = TEMPLATE
            .split_once("__DATA__")
            .expect("the template has a data slot");
        writeln!(
            out,
            "{}{{\"rows\":[",
            head.replace("__TITLE__", &html_escape(title))
        )?;
        Ok(Page {
            out,
            origin,
            overview: (events > DETAILED)
                .then(|| Overview::new(end.saturating_sub(origin), events)),
            first_row: true,
            first_item: true,
            count: 0,
            asynchronous: Vec::new(),
            gpu: BTreeMap::new(),
        })
    }

    fn row_start(&mut self, p: &Process, label: &str, is_async: bool) -> std::io::Result<()> {
        self.row_start_as(p.trace_pid, &process_title(p), label, is_async, Link::None)
    }

    /// Starts a row under process `process` (a GPU's, or a process's title).
    fn row_start_as(
        &mut self,
        pid: u32,
        process: &str,
        label: &str,
        is_async: bool,
        link: Link,
    ) -> std::io::Result<()> {
        let comma = if self.first_row { "" } else { ",\n" };
        self.first_row = false;
        self.first_item = true;
        let link = match link {
            Link::None => String::new(),
            Link::Thread(tid) => format!("\"tid\":{tid},"),
            Link::LaunchedFrom(pid) => format!("\"from\":{pid},"),
        };
        write!(
            self.out,
            "{comma}{{\"pid\":{pid},\"process\":{},\"label\":{},\"async\":{is_async},{link}\"items\":[",
            script_json(process),
            script_json(label)
        )
    }

    /// Writes a bar or mark; `item` has its place, `d` its name and details.
    fn item(&mut self, d: &Details, item: Item, when: &str) -> std::io::Result<()> {
        self.write_item(&Item {
            n: &d.name,
            i: tip(d, when),
            c: d.color.map(css_color),
            ..item
        })
    }

    /// Writes one item of the current row.
    fn write_item(&mut self, item: &Item) -> std::io::Result<()> {
        self.write_item_json(&script_json(item))
    }

    /// Writes one item of the current row, already as JSON.
    fn write_item_json(&mut self, item: &str) -> std::io::Result<()> {
        let comma = if self.first_item { "" } else { "," };
        self.first_item = false;
        self.count += 1;
        write!(self.out, "{comma}{item}")
    }

    fn row_end(&mut self, depth: u32) -> std::io::Result<()> {
        write!(self.out, "],\"depth\":{depth}}}")
    }

    /// Writes the rest: the time span, the summary table (`rows`, grouped
    /// as `grouping` says) and the legend (the rows' names, then the
    /// `marks`').
    pub fn finish(
        self,
        scan: &Scan,
        rows: &summary::Rows,
        grouping: &summary::Grouping,
        marks: &BTreeMap<String, Option<u32>>,
    ) -> std::io::Result<()> {
        let (_, tail) = TEMPLATE.split_once("__DATA__").expect("a data slot");
        let overview = self.overview.as_ref().map(|o| {
            format!(
                "an overview of {} events: each thread's first {OVERVIEW_DEPTHS} levels and each GPU stream, by the name that dominates each of {BINS} time bins (the summary's top {OVERVIEW_SUMMARY} rows, the legend's {OVERVIEW_LEGEND} most drawn names); to see every event, run `nvtxr view` on the recording (`nvtxr record --keep DIR`), or open the .pftrace trace in https://ui.perfetto.dev",
                o.events
            )
        });
        // An overview's legend: the names it drew most; its table: the top rows.
        let (legend, summary) = match &self.overview {
            Some(o) => {
                let mut names: Vec<_> = o.drawn.iter().collect();
                names.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then_with(|| a.0.cmp(b.0)));
                let drawn = names
                    .into_iter()
                    .take(OVERVIEW_LEGEND)
                    .map(|(n, (c, _))| (n.clone(), *c))
                    .collect();
                (drawn, rows.top(OVERVIEW_SUMMARY)?)
            }
            None => (
                summary::legend(rows, marks, usize::MAX)?,
                rows.top(usize::MAX)?,
            ),
        };
        write!(
            self.out,
            "\n],\"end\":{},\"count\":{},\"overview\":{},\"processes\":{},\"grouping\":\"{}\",\"summary\":{},\"legend\":{}}}{tail}",
            scan.end.saturating_sub(self.origin),
            self.count,
            script_json(&overview),
            scan.processes.len(),
            grouping.label(),
            script_json(&summary),
            script_json(
                &legend
                    .iter()
                    .map(|(n, c)| Swatch::new(n, *c))
                    .collect::<Vec<_>>()
            )
        )?;
        self.out.flush()
    }
}

impl Sink for Page<'_> {
    fn thread_start(&mut self, p: &Process, t: &Thread) -> std::io::Result<()> {
        let title = process_title(p);
        self.row_start_as(
            p.trace_pid,
            &title,
            &thread_title(t),
            false,
            Link::Thread(t.tid),
        )
    }

    fn range(&mut self, _: &Process, r: &Range) -> std::io::Result<()> {
        if r.style == Style::StartEnd {
            self.asynchronous.push(r.clone());
            return Ok(());
        }
        if let Some(o) = self.overview.as_mut() {
            o.add(
                r.depth as usize,
                (r.start - self.origin, r.end - self.origin),
                &r.details,
            );
            return Ok(());
        }
        let when = format!(
            "{} (push/pop{})",
            duration(r.end - r.start),
            if r.unterminated { ", never popped" } else { "" }
        );
        let o = self.origin;
        let place = Item {
            s: Some(r.start - o),
            e: Some(r.end - o),
            d: Some(r.depth as usize),
            ..Item::default()
        };
        self.item(&r.details, place, &when)
    }

    fn mark(&mut self, _: &Process, m: &Mark) -> std::io::Result<()> {
        if self.overview.is_some() {
            return Ok(());
        }
        let o = self.origin;
        let place = Item {
            t: Some(m.time - o),
            m: Some(1),
            ..Item::default()
        };
        self.item(
            &m.details,
            place,
            &format!("mark at {}", duration(m.time - o)),
        )
    }

    fn thread_end(&mut self, _: &Process, depth: u32) -> std::io::Result<()> {
        if let Some(bars) = self.overview.as_mut().map(Overview::drain) {
            bars.iter().try_for_each(|bar| self.bar(bar))?;
            return self.row_end(depth.min(OVERVIEW_DEPTHS as u32 - 1));
        }
        self.row_end(depth)
    }

    /// An activity, kept for its stream's row (`gpu.rs`).
    fn gpu(&mut self, p: &Process, g: &GpuEvent) -> std::io::Result<()> {
        self.gpu_activity(p, g);
        Ok(())
    }

    /// The process's GPU streams' rows, then its start/end ranges,
    /// overlapping ones on separate lanes; or, for a process that recorded
    /// nothing, a line that says so.
    fn process_end(&mut self, p: &Process) -> std::io::Result<()> {
        self.gpu_rows()?;
        if p.threads.is_empty() {
            self.row_start(p, NOTHING_RECORDED, false)?;
            return write!(self.out, "],\"empty\":true,\"depth\":0}}");
        }
        let mut ranges = std::mem::take(&mut self.asynchronous);
        if ranges.is_empty() {
            return Ok(());
        }
        ranges.sort_by_key(|r| r.start);
        self.row_start(p, "start/end ranges", true)?;
        let lanes = lanes(ranges.iter().map(|r| (r.start, r.end)));
        let o = self.origin;
        for (r, &lane) in ranges.iter().zip(&lanes) {
            let when = format!(
                "{} (start/end{})",
                duration(r.end - r.start),
                if r.unterminated { ", never ended" } else { "" }
            );
            let place = Item {
                s: Some(r.start - o),
                e: Some(r.end - o),
                d: Some(lane),
                ..Item::default()
            };
            self.item(&r.details, place, &when)?;
        }
        self.row_end(lanes.iter().max().copied().unwrap_or(0) as u32)
    }
}

/// A process row's title: its rank and command, or its command and pid.
pub fn process_title(p: &Process) -> String {
    match p.rank {
        Some(_) => format!("{} {}", p.label(), short_command(&p.command)),
        None => format!("{} (pid {})", short_command(&p.command), p.pid),
    }
}

/// A thread row's title: its name and tid, or `thread TID`.
pub fn thread_title(t: &Thread) -> String {
    t.name
        .as_ref()
        .map_or(format!("thread {}", t.tid), |n| format!("{n} ({})", t.tid))
}

/// A row's text for a process that recorded nothing.
pub const NOTHING_RECORDED: &str = "no NVTX events: the process made no NVTX call while recorded";

/// The command with its program's directory dropped, at most 80 characters.
fn short_command(command: &str) -> String {
    if command.is_empty() {
        return "process".into();
    }
    let (program, args) = command.split_once(' ').unwrap_or((command, ""));
    let program = program.rsplit('/').next().unwrap_or(program);
    let short = if args.is_empty() {
        program.to_string()
    } else {
        format!("{program} {args}")
    };
    if short.chars().count() > 80 {
        short.chars().take(77).collect::<String>() + "..."
    } else {
        short
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
