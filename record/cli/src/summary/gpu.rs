//! The summary's GPU tables, under the NVTX table when the recording has
//! GPU activity: the kernels by total time (Nsight's `cuda_gpu_kern_sum`),
//! the ranges projected onto the GPU (`nvtx_gpu_proj_sum`: per range, from
//! its first launched activity's start to its last's end), and the kernels
//! grouped by the innermost range open at their launch (`nvtx_kern_sum`).

use super::groups::{Groups, KeyRef};
use super::names::Grouping;
use super::{cells, grid, Format, Row};
use crate::model::{GpuEvent, Projection, Range, RangeName, Style};
use hashbrown::HashMap;
use nvtxr_record_format::gpu::Tag;

/// The kinds of the kernels' groups: by kernel name (the kernel table),
/// and by range and kernel name (the table by range).
const KERNEL: u8 = 0;
const BY_RANGE: u8 = 1;

/// The cells of [`FIGURES`] columns of `row`.
fn figure_cells(row: &Row, f: &Format) -> Vec<String> {
    cells(row, f)[..FIGURES].to_vec()
}

/// The columns of the NVTX table that the kernel tables show too, as
/// Nsight's `cuda_gpu_kern_sum` and `nvtx_kern_sum` do: time share, total,
/// instances, average, median, minimum, maximum, standard deviation.
const FIGURES: usize = 8;

/// A range name's GPU projection, over its instances.
#[derive(Debug, Clone, Copy, Default)]
struct Projected {
    instances: u64,
    range_time: u64,
    projected: u64,
    busy: u64,
    kernels: u64,
    activities: u64,
}

#[derive(Default)]
pub struct GpuSummary {
    ranges: HashMap<String, Projected>,
    /// The kernels' durations, each twice: under its name ([`KERNEL`]),
    /// and under its launch's range and its name ([`BY_RANGE`]) when it
    /// was launched inside a range. Past a budget, on disk.
    kernels: Groups,
    /// Every kernel's time: the base of the shares.
    grand: u64,
    /// A range's group name, built here for each lookup.
    key: String,
    /// The range of the last kernel and its group name (most kernels share
    /// the range of the one before: grouped once for them all).
    last_range: Option<(RangeName, String)>,
}

impl GpuSummary {
    /// A range that launched GPU work, its name grouped as the NVTX table's
    /// rows (`name`).
    pub fn range(&mut self, r: &Range, p: &Projection, name: &str) {
        self.set_key(&r.details.domain, name);
        let e = self.ranges.entry_ref(&self.key).or_default();
        e.instances += 1;
        e.range_time += r.end - r.start;
        e.projected += p.end - p.start;
        e.busy += p.busy;
        e.kernels += p.kernels;
        e.activities += p.activities;
    }

    /// A kernel (other activities are not in these tables), under its
    /// launch's range grouped as the NVTX table's rows.
    pub fn activity(&mut self, g: &GpuEvent, grouping: &Grouping) -> std::io::Result<()> {
        let a = g.activity;
        if a.tag != Tag::Kernel as u8 {
            return Ok(());
        }
        let ns = a.end - a.start;
        self.grand = self.grand.saturating_add(ns);
        self.kernels.push(KeyRef(KERNEL, "", g.name), ns, None)?;
        if let Some(range) = g.launch.and_then(|l| l.range) {
            let key = match &self.last_range {
                Some((last, key)) if last == range => key,
                _ => {
                    self.set_key(range.domain(), &grouping.name(range.name(), None));
                    let key = std::mem::take(&mut self.key);
                    &self.last_range.insert((range.clone(), key)).1
                }
            };
            self.kernels.push(KeyRef(BY_RANGE, key, g.name), ns, None)?;
        }
        Ok(())
    }

    /// `key` made `domain:name`, as the NVTX table names ranges.
    fn set_key(&mut self, domain: &str, name: &str) {
        self.key.clear();
        self.key += domain;
        self.key.push(':');
        self.key += name;
    }

    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty() && self.ranges.is_empty()
    }

    /// The tables as text, each at most `limit` rows (0: every one).
    pub fn text(self, f: &Format, limit: usize) -> std::io::Result<String> {
        let take = |n: usize| if limit == 0 { n } else { n.min(limit) };
        let unit = f.unit.label();
        let figure_columns = || f.columns()[..FIGURES].to_vec();
        let mut kernels = Vec::new();
        let mut pairs = Vec::new();
        self.kernels.each(|key, _, stats| {
            // Style and range are the NVTX table's cells; these tables name their own.
            let row = stats.row(Style::PushPop, String::new(), None, self.grand);
            match key.kind {
                KERNEL => kernels.push((key.second, row)),
                _ => pairs.push(((key.first, key.second), row)),
            }
            Ok(())
        })?;
        let mut out = String::new();
        kernels.sort_by(|a, b| b.1.total.cmp(&a.1.total).then(a.0.cmp(&b.0)));
        let mut lines = vec![figure_columns()];
        lines[0].push("Kernel".to_string());
        for (name, row) in kernels.iter().take(take(kernels.len())) {
            let mut l = figure_cells(row, f);
            l.push(name.to_string());
            lines.push(l);
        }
        out += "\nGPU kernel summary (by total time):\n\n";
        out += &grid(&lines, &[FIGURES]);

        let mut ranges: Vec<_> = self.ranges.iter().collect();
        ranges.sort_by(|a, b| b.1.projected.cmp(&a.1.projected).then(a.0.cmp(b.0)));
        let mut lines = vec![vec![
            "Range".to_string(),
            "Instances".to_string(),
            format!("Range Time ({unit})"),
            format!("Projected Time ({unit})"),
            format!("GPU Busy ({unit})"),
            "Kernels".to_string(),
            "GPU Ops".to_string(),
        ]];
        for (name, p) in ranges.iter().take(take(ranges.len())) {
            lines.push(vec![
                name.to_string(),
                p.instances.to_string(),
                f.time(p.range_time),
                f.time(p.projected),
                f.time(p.busy),
                p.kernels.to_string(),
                p.activities.to_string(),
            ]);
        }
        out += "\nNVTX ranges projected onto the GPU (the work each launched, nested ranges included):\n\n";
        out += &grid(&lines, &[0]);

        pairs.sort_by(|a, b| {
            (a.0 .0.cmp(&b.0 .0))
                .then(b.1.total.cmp(&a.1.total))
                .then(a.0 .1.cmp(&b.0 .1))
        });
        // The kernel's name last, as in the kernel table: PyTorch's run to
        // hundreds of characters, and would push the figures off the line.
        let mut lines = vec![vec!["Range".to_string()]];
        lines[0].extend(figure_columns());
        lines[0].push("Kernel".to_string());
        for ((range, kernel), row) in pairs.iter().take(take(pairs.len())) {
            let mut l = vec![range.to_string()];
            l.extend(figure_cells(row, f));
            l.push(kernel.to_string());
            lines.push(l);
        }
        out += "\nGPU kernels by the NVTX range that launched them (the innermost):\n\n";
        out += &grid(&lines, &[0, FIGURES + 1]);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Launched, RangeName};
    use nvtxr_record_format::gpu::Activity;

    /// Kernel `name` of `ns`, launched under `range` of `domain`, or
    /// outside every range (`None`).
    fn kernel(
        s: &mut GpuSummary,
        grouping: &Grouping,
        range: Option<(&str, &str)>,
        name: &str,
        ns: u64,
    ) {
        let activity = Activity {
            tag: Tag::Kernel as u8,
            end: ns,
            ..Default::default()
        };
        let range = range.map(|(domain, range)| RangeName::new(domain, range));
        let launch = Launched {
            tid: 1,
            start: 0,
            api: "cudaLaunchKernel",
            range: range.as_ref(),
        };
        let g = GpuEvent {
            activity: &activity,
            name,
            mangled: name,
            launch: Some(&launch),
            nth: 0,
            gpu: None,
        };
        s.activity(&g, grouping).unwrap();
    }

    #[test]
    fn kernel_tables_have_the_nvtx_tables_figures_as_nsights_cuda_gpu_kern_sum() {
        let mut s = GpuSummary::default();
        for ns in [60, 10, 20] {
            kernel(&mut s, &Grouping::Numbers, Some(("", "step")), "k", ns);
        }
        // One more of the same kernel, launched outside every range.
        kernel(&mut s, &Grouping::Numbers, None, "k", 30);
        let text = s.text(&Format::default(), 0).unwrap();
        let rows: Vec<Vec<&str>> = (text.lines())
            .filter(|l| l.ends_with(" k") || l.contains(" k "))
            .map(|l| l.split_whitespace().collect())
            .collect();
        // Time (%), total, instances, average, median, min, max, standard
        // deviation: of all four in the kernel table, of the range's three
        // (three quarters of the kernel time) in the table by range.
        let all = ["100.0", "120", "4", "30.0", "25.0", "10", "60", "21.6", "k"];
        assert_eq!(rows[0], all, "{text}");
        let step = [
            ":step", "75.0", "90", "3", "30.0", "20.0", "10", "60", "26.5", "k",
        ];
        assert_eq!(rows[1], step, "{text}");
    }

    #[test]
    fn kernels_by_range_group_names_as_the_nvtx_table_and_keep_domains_apart() {
        let rows = |grouping: Grouping| {
            let mut s = GpuSummary::default();
            for (domain, range) in [
                ("", "step 1"),
                ("", "step 2"),
                ("a", "step 3"),
                ("b", "fwd"),
            ] {
                kernel(&mut s, &grouping, Some((domain, range)), "k", 10);
            }
            let mut rows = Vec::new();
            (s.kernels.each(|key, _, stats| {
                let row = stats.row(Style::PushPop, String::new(), None, 1);
                if key.kind == BY_RANGE {
                    rows.push((key.first.to_string(), row.instances));
                }
                Ok(())
            }))
            .unwrap();
            rows.sort();
            rows
        };
        let row = |r: &str, n| (r.to_string(), n);
        assert_eq!(
            rows(Grouping::Numbers),
            [row(":step {n}", 2), row("a:step {n}", 1), row("b:fwd", 1)]
        );
        assert_eq!(
            rows(Grouping::Exact),
            [
                row(":step 1", 1),
                row(":step 2", 1),
                row("a:step 3", 1),
                row("b:fwd", 1)
            ]
        );
    }

    #[test]
    fn kernels_past_the_budget_give_the_tables_held_ones_give() {
        // Kernels of a few names under many ranges and none, durations in
        // no order: held, and in many runs on disk.
        let tables = |budget: usize| {
            let mut s = GpuSummary {
                kernels: Groups::with_budget(budget),
                ..GpuSummary::default()
            };
            let mut x: u64 = 12345;
            for i in 0..30_000u64 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let name = format!("kernel_{}", x % 7);
                let range = format!("layer {}", (x >> 8) % 50);
                let range = (i % 5 != 0).then_some(("", range.as_str()));
                kernel(&mut s, &Grouping::Exact, range, &name, (x >> 20) % 100_000);
            }
            let spilled = s.kernels.spilled();
            (spilled, s.text(&Format::default(), 0).unwrap())
        };
        let (none, held) = tables(0);
        let (spilled, runs) = tables(16 << 10);
        assert_eq!(none, 0);
        assert!(spilled > 5, "{spilled} runs");
        assert_eq!(runs, held);
        // Every kernel name, and every range with some of them.
        assert_eq!(held.lines().filter(|l| l.contains(":layer ")).count(), 350);
    }
}
