//! GPU activity on the HTML timeline, as `nvtxr view` shows it: under each
//! of a process's GPUs (`GPU n: NAME (process)`), a row per stream, each
//! kernel, copy, set and synchronization a bar (overlapping ones on lanes of
//! their own) with its arguments in the tooltip; on an overview, a stream's
//! bars are its bins, as a thread's are.

use super::overview::{Bar, Overview};
use super::{duration, lanes_of, script_json, tip, Item, Link, Page};
use crate::model::{gpu_label, gpu_pid, Details, GpuEvent, Process};
use nvtxr_record_format::gpu::tag_name;

/// An activity as the timelines describe it: its name, its kind (`kernel`,
/// `memcpy`, …) where a range has its domain, its arguments as fields.
pub fn gpu_details(g: &GpuEvent) -> Details {
    let fields = match crate::chrome::gpu_args(g) {
        serde_json::Value::Object(fields) => Some(Box::new(fields)),
        _ => None,
    };
    Details {
        name: g.name.into(),
        domain: tag_name(g.activity.tag).into(),
        color: None,
        category: None,
        payload: None,
        fields,
        gpu: None,
    }
}

/// One GPU stream's row, kept until its process ends: a process's
/// activities come in start order, every stream's together.
pub(super) struct Stream {
    /// Its GPU's process label and pid, and the pid of the process that
    /// launched its work.
    process: String,
    pid: u32,
    from: u32,
    /// A detailed page's bars, as the page writes them, and when each
    /// lane's last bar ends.
    items: Vec<String>,
    ends: Vec<u64>,
    /// An overview's bins.
    bins: Option<Overview>,
}

impl Page<'_> {
    /// Adds an activity to its stream's row.
    pub(super) fn gpu_activity(&mut self, p: &Process, g: &GpuEvent) {
        let a = g.activity;
        let (start, end) = (a.start - self.origin, a.end.max(a.start) - self.origin);
        let overview = self.overview.as_ref();
        let stream = (self.gpu.entry((a.device, a.stream))).or_insert_with(|| Stream {
            process: gpu_label(p, a.device, g.gpu),
            pid: gpu_pid(p, a.device),
            from: p.trace_pid,
            items: Vec::new(),
            ends: Vec::new(),
            bins: overview.map(Overview::like),
        });
        if let Some(bins) = stream.bins.as_mut() {
            // Bins count names alone.
            let named = Details {
                name: g.name.into(),
                ..Details::default()
            };
            bins.add(0, (start, end), &named);
            return;
        }
        let details = gpu_details(g);
        let lane = lanes_of(&mut stream.ends, (start, end));
        let launch = (g.launch).map(|l| [u64::from(l.tid), l.start.saturating_sub(self.origin)]);
        stream.items.push(script_json(&Item {
            n: &details.name,
            l: launch,
            i: tip(&details, &duration(end - start)),
            s: Some(start),
            e: Some(end),
            d: Some(lane),
            ..Item::default()
        }));
    }

    /// Writes the process's GPU streams' rows.
    pub(super) fn gpu_rows(&mut self) -> std::io::Result<()> {
        for ((_, stream), mut row) in std::mem::take(&mut self.gpu) {
            let label = format!("stream {stream}");
            let link = Link::LaunchedFrom(row.from);
            self.row_start_as(row.pid, &row.process, &label, false, link)?;
            // An overview's bars are on its one level; a detailed row's on its lanes.
            let bars: Vec<Bar> = row.bins.as_mut().map(Overview::drain).unwrap_or_default();
            for bar in &bars {
                self.bar(bar)?;
            }
            for item in &row.items {
                self.write_item_json(item)?;
            }
            self.row_end(row.ends.len().saturating_sub(1) as u32)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::DETAILED;
    use super::*;
    use crate::model::Sink;
    use nvtxr_record_format::gpu::{Activity, Tag};

    #[test]
    fn an_overviews_gpu_stream_is_a_row_of_bins_named_by_the_kernel_that_fills_them() {
        let mut out = Vec::new();
        let span = 10_000_000;
        let mut page = Page::new(&mut out, "app", 0, (DETAILED + 1, span)).unwrap();
        let p = Process {
            pid: 7,
            command: "app".into(),
            ..Default::default()
        };
        // 10,000 kernels on stream 3: a long one, then a short one, over and over.
        for i in 0..5_000u64 {
            for (name, start, ns) in [("long", i * 2000, 1500), ("short", i * 2000 + 1500, 400)] {
                let a = Activity {
                    tag: Tag::Kernel as u8,
                    start,
                    end: start + ns,
                    stream: 3,
                    ..Default::default()
                };
                let g = GpuEvent {
                    activity: &a,
                    name,
                    mangled: name,
                    launch: None,
                    nth: 0,
                    gpu: None,
                };
                page.gpu(&p, &g).unwrap();
            }
        }
        page.process_end(&p).unwrap();
        drop(page);
        let page = String::from_utf8(out).unwrap();
        let row = page
            .split("\"label\":\"stream 3\"")
            .nth(1)
            .expect("the stream's row");
        assert!(page.contains("\"process\":\"GPU 0 (app)\""), "{page}");
        // Bins, not kernels: one bar, the long kernel's, which fills three
        // quarters of every bin.
        assert_eq!(row.matches("\"n\":\"long\"").count(), 1, "{row}");
        assert!(!row.contains("\"n\":\"short\""), "{row}");
    }
}
