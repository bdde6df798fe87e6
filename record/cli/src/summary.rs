//! A summary with the columns of Nsight Systems' `nvtx_sum` report: per
//! range name and style, time share, total, instances, average, median,
//! minimum, maximum and standard deviation of the durations (ns).

use crate::model::{Mark, Process, Range, Sink, Style};
use std::collections::BTreeMap;

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

/// What a replay leaves for the summary and the legend: each range
/// instance's duration (8 bytes each: the median is exact), per (style,
/// range); each name's first color.
#[derive(Debug, Default)]
pub struct Collector {
    groups: BTreeMap<(Style, String), Vec<u64>>,
    /// Name -> its first color (the timeline's legend).
    pub legend: BTreeMap<String, Option<u32>>,
}

impl Sink for Collector {
    fn range(&mut self, _: &Process, r: &Range) -> std::io::Result<()> {
        let d = &r.details;
        // As Nsight Systems names them: `domain:name`, `:name` in the default domain.
        let label = format!("{}:{}", d.domain, d.name);
        self.groups
            .entry((r.style, label))
            .or_default()
            .push(r.end - r.start);
        self.legend.entry(d.name.clone()).or_insert(d.color);
        Ok(())
    }

    fn mark(&mut self, _: &Process, m: &Mark) -> std::io::Result<()> {
        self.legend
            .entry(m.details.name.clone())
            .or_insert(m.details.color);
        Ok(())
    }
}

impl Collector {
    /// One row per (style, domain, name), largest total first.
    pub fn rows(self) -> Vec<Row> {
        rows(self.groups)
    }
}

fn rows(groups: BTreeMap<(Style, String), Vec<u64>>) -> Vec<Row> {
    let grand: u64 = groups.values().flatten().sum();
    let mut rows: Vec<Row> = groups
        .into_iter()
        .map(|((style, range), mut d)| {
            d.sort_unstable();
            let n = d.len();
            let total: u64 = d.iter().sum();
            let avg = total as f64 / n as f64;
            let median = if n % 2 == 1 {
                d[n / 2] as f64
            } else {
                (d[n / 2 - 1] + d[n / 2]) as f64 / 2.0
            };
            let var = if n > 1 {
                d.iter().map(|&x| (x as f64 - avg).powi(2)).sum::<f64>() / (n - 1) as f64
            } else {
                0.0
            };
            Row {
                time_percent: if grand > 0 {
                    100.0 * total as f64 / grand as f64
                } else {
                    0.0
                },
                total,
                instances: n,
                avg,
                median,
                min: d[0],
                max: d[n - 1],
                stddev: var.sqrt(),
                style,
                range,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.range.cmp(&b.range)));
    rows
}

fn cells(r: &Row, f: &Format) -> [String; 10] {
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
pub fn table(rows: &[Row], f: &Format) -> String {
    let mut lines = vec![f.columns().to_vec()];
    lines.extend(rows.iter().map(|r| cells(r, f).to_vec()));
    grid(&lines, &[8, 9])
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
    let line = |cells: &[String]| {
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
    };
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        out += &line(l);
        if i == 0 {
            out += &line(&rule);
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

pub fn csv(rows: &[Row], f: &Format) -> String {
    let mut out = f.columns().join(",") + "\n";
    for r in rows {
        out += &cells(r, f)
            .iter()
            .map(|c| csv_field(c))
            .collect::<Vec<_>>()
            .join(",");
        out.push('\n');
    }
    out
}

/// The summary as JSON: an array of rows, times in ns.
pub fn json(rows: &[Row]) -> String {
    serde_json::to_string_pretty(rows).expect("rows serialize") + "\n"
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
                domain: String::new(),
                color: None,
                category: None,
                payload: None,
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
        for r in [
            range("a", 0, 10),
            range("a", 0, 20),
            range("a", 0, 60),
            range("b", 0, 10),
        ] {
            collector.range(&process, &r).unwrap();
        }
        let rows = collector.rows();
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
