//! A summary with the columns of Nsight Systems' `nvtx_sum` report: per
//! range name and style, time share, total, instances, average, median,
//! minimum, maximum and standard deviation of the durations (ns).

mod collect;
mod gpu;
mod groups;
mod legend;
mod names;
mod rows;
mod runs;
mod stats;

pub use collect::Collector;
pub use gpu::GpuSummary;
pub use legend::legend;
pub use names::Grouping;
pub use rows::Rows;

/// Runs `work` (the summary's replay) on a core of its own, beside what the
/// caller does meanwhile; the thread is named `nvtxr-summary`, so that a
/// profile (`perf report --sort comm`) tells its cost apart.
pub fn beside<'scope, T: Send + 'scope>(
    threads: &'scope std::thread::Scope<'scope, '_>,
    work: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    std::thread::Builder::new()
        .name("nvtxr-summary".into())
        .spawn_scoped(threads, work)
        .expect("a thread for the summary")
}

use crate::model::Style;
use std::io::Write;

/// One row of the summary; as JSON (the `--json` file and the HTML page's
/// table), times in ns under these names.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    pub time_percent: f64,
    #[serde(rename = "total_ns")]
    pub total: u64,
    pub instances: usize,
    #[serde(rename = "avg_ns")]
    pub avg: f64,
    #[serde(rename = "median_ns")]
    pub median: f64,
    #[serde(rename = "min_ns")]
    pub min: u64,
    #[serde(rename = "max_ns")]
    pub max: u64,
    #[serde(rename = "stddev_ns")]
    pub stddev: f64,
    #[serde(serialize_with = "style_label")]
    pub style: Style,
    /// `domain:name`; `:name` in the default domain (as `nvtx_sum` writes it).
    pub range: String,
    /// The first color its ranges had (the legend's).
    #[serde(skip)]
    pub color: Option<u32>,
}

fn style_label<S: serde::Serializer>(style: &Style, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(style.label())
}

/// `n` and the noun, singular for one: "1 instance", "3 instances".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The time unit of the table and CSV (`--time-unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Unit {
    Ns,
    Us,
    Ms,
    S,
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Us => "us",
            Unit::Ms => "ms",
            Unit::S => "s",
        }
    }

    fn per_ns(self) -> f64 {
        match self {
            Unit::Ns => 1.0,
            Unit::Us => 1e-3,
            Unit::Ms => 1e-6,
            Unit::S => 1e-9,
        }
    }
}

/// How the table and CSV write numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub unit: Unit,
    /// Thousands separators (`1,234,567`), as some `nvtx_sum` versions print.
    pub separators: bool,
}

impl Format {
    /// A whole number of ns in this unit: an integer in ns, else 3 decimals.
    pub fn time(&self, ns: u64) -> String {
        match self.unit {
            Unit::Ns => self.group(&ns.to_string()),
            _ => self.group(&format!("{:.3}", ns as f64 * self.unit.per_ns())),
        }
    }

    /// A statistic (average, median, deviation): one decimal in ns, else 3.
    fn stat(&self, ns: f64) -> String {
        let digits = if self.unit == Unit::Ns { 1 } else { 3 };
        self.group(&format!("{:.digits$}", ns * self.unit.per_ns()))
    }

    fn count(&self, n: usize) -> String {
        self.group(&n.to_string())
    }

    /// `1234567.5` as `1,234,567.5` when separators are on.
    fn group(&self, number: &str) -> String {
        if !self.separators {
            return number.to_string();
        }
        let (whole, fraction) = number
            .split_once('.')
            .map_or((number, None), |(w, f)| (w, Some(f)));
        let digits: Vec<char> = whole.chars().collect();
        let mut out = String::new();
        for (i, c) in digits.iter().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(*c);
        }
        match fraction {
            Some(f) => format!("{out}.{f}"),
            None => out,
        }
    }

    /// The column headers, with the unit.
    pub fn columns(&self) -> [String; 10] {
        let u = self.unit.label();
        [
            "Time (%)".into(),
            format!("Total Time ({u})"),
            "Instances".into(),
            format!("Avg ({u})"),
            format!("Med ({u})"),
            format!("Min ({u})"),
            format!("Max ({u})"),
            format!("StdDev ({u})"),
            "Style".into(),
            "Range".into(),
        ]
    }
}

impl Default for Format {
    fn default() -> Self {
        Format {
            unit: Unit::Ns,
            separators: false,
        }
    }
}

pub(super) fn cells(r: &Row, f: &Format) -> [String; 10] {
    [
        format!("{:.1}", r.time_percent),
        f.time(r.total),
        f.count(r.instances),
        f.stat(r.avg),
        f.stat(r.median),
        f.time(r.min),
        f.time(r.max),
        f.stat(r.stddev),
        r.style.label().to_string(),
        r.range.clone(),
    ]
}

/// The table as a terminal shows it: numbers right-aligned, the range left.
pub fn table(rows: &Rows, f: &Format, limit: usize, out: &mut dyn Write) -> std::io::Result<()> {
    let shown = if limit == 0 { rows.len() } else { limit };
    let top = rows.top(shown)?;
    let mut widths: Vec<usize> = f.columns().iter().map(|c| c.chars().count()).collect();
    for row in &top {
        for (w, c) in widths.iter_mut().zip(cells(row, f)) {
            *w = (*w).max(c.chars().count());
        }
    }
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.write_all(line(&f.columns(), &widths, &[8, 9]).as_bytes())?;
    out.write_all(line(&rule, &widths, &[8, 9]).as_bytes())?;
    for row in &top {
        out.write_all(line(&cells(row, f), &widths, &[8, 9]).as_bytes())?;
    }
    if rows.len() > top.len() {
        let more = rows.len() - top.len();
        writeln!(
            out,
            "... and {} (--rows 0 prints every one; --csv FILE writes them)",
            count(more as u64, "more row", "more rows")
        )?;
    }
    Ok(())
}

/// Cells as a line of text columns `widths` wide: right aligned, but for
/// the `left` columns.
fn line(cells: &[String], widths: &[usize], left: &[usize]) -> String {
    let mut s = String::new();
    for (i, c) in cells.iter().enumerate() {
        let w = widths[i];
        if left.contains(&i) {
            s.push_str(&format!("{c:<w$}  "));
        } else {
            s.push_str(&format!("{c:>w$}  "));
        }
    }
    s.trim_end().to_string() + "\n"
}

/// Lines of cells as text columns under a rule after the first line: right
/// aligned, but for the `left` columns.
pub fn grid(lines: &[Vec<String>], left: &[usize]) -> String {
    let count = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..count)
        .map(|i| {
            lines
                .iter()
                .filter_map(|l| l.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        out += &line(l, &widths, left);
        if i == 0 {
            out += &line(&rule, &widths, left);
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The summary as CSV, the table's columns.
pub fn csv(rows: &Rows, f: &Format, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", f.columns().join(","))?;
    for row in rows.iter() {
        let cells: Vec<String> = cells(&row?, f).iter().map(|c| csv_field(c)).collect();
        writeln!(out, "{}", cells.join(","))?;
    }
    Ok(())
}

/// The summary as JSON: an array of rows, times in ns.
pub fn json(rows: &Rows, out: &mut dyn Write) -> std::io::Result<()> {
    let mut error = None;
    let items = rows
        .iter()
        .map_while(|r| r.map_err(|e| error = Some(e)).ok());
    let mut json = serde_json::Serializer::pretty(&mut *out);
    serde::Serializer::collect_seq(&mut json, items).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    error.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_each_unit_with_and_without_separators() {
        let plain = Format::default();
        assert_eq!(plain.time(1_234_567), "1234567");
        assert_eq!(plain.stat(1_234_567.25), "1234567.2");
        let grouped = Format {
            separators: true,
            ..plain
        };
        assert_eq!(grouped.time(1_234_567), "1,234,567");
        assert_eq!(grouped.stat(1_234_567.25), "1,234,567.2");
        assert_eq!(grouped.count(999), "999");
        let ms = Format {
            unit: Unit::Ms,
            separators: true,
        };
        assert_eq!(ms.time(1_234_567_891), "1,234.568");
        assert_eq!(ms.columns()[1], "Total Time (ms)");
    }

    #[test]
    fn statistics_of_one_group() {
        use crate::model::{Details, Process, Range, Style};
        let range = |name: &str, start, end| Range {
            details: Details {
                name: name.into(),
                domain: Default::default(),
                color: None,
                category: None,
                payload: None,
                fields: None,
                gpu: None,
            },
            style: Style::PushPop,
            start,
            end,
            depth: 0,
            tid: 1,
            end_tid: 1,
            id: 0,
            unterminated: false,
        };
        let mut collector = Collector::default();
        let process = Process::default();
        use crate::model::Sink;
        for r in [
            range("a", 0, 10),
            range("a", 0, 20),
            range("a", 0, 60),
            range("b", 0, 10),
        ] {
            collector.range(&process, &r).unwrap();
        }
        let rows = collector.rows(None).unwrap().top(10).unwrap();
        assert_eq!(
            rows[0].range, ":a",
            "the default domain as nvtx_sum names it"
        );
        assert_eq!(
            (rows[0].total, rows[0].instances, rows[0].min, rows[0].max),
            (90, 3, 10, 60)
        );
        assert_eq!((rows[0].avg, rows[0].median), (30.0, 20.0));
        assert!(
            (rows[0].stddev - 26.457513).abs() < 1e-5,
            "sample deviation"
        );
        assert!((rows[0].time_percent - 90.0).abs() < 1e-9);
        assert_eq!((rows[1].range.as_str(), rows[1].median), (":b", 10.0));
    }
}
