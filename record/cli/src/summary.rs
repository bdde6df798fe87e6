//! A summary with the columns of Nsight Systems' `nvtx_sum` report: per
//! range name and style, time share, total, instances, average, median,
//! minimum, maximum and standard deviation of the durations (ns).

use crate::json;
use crate::model::{Recording, Style};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub time_percent: f64,
    pub total: u64,
    pub instances: usize,
    pub avg: f64,
    pub median: f64,
    pub min: u64,
    pub max: u64,
    pub stddev: f64,
    pub style: Style,
    /// `domain:name`, or the name in the default domain.
    pub range: String,
}

pub const COLUMNS: [&str; 10] = [
    "Time (%)",
    "Total Time (ns)",
    "Instances",
    "Avg (ns)",
    "Med (ns)",
    "Min (ns)",
    "Max (ns)",
    "StdDev (ns)",
    "Style",
    "Range",
];

/// One row per (style, domain, name), largest total first.
pub fn rows(recording: &Recording) -> Vec<Row> {
    let mut groups: BTreeMap<(Style, String), Vec<u64>> = BTreeMap::new();
    for r in recording.processes.iter().flat_map(|p| &p.ranges) {
        let d = &r.details;
        let label = if d.domain.is_empty() {
            d.name.clone()
        } else {
            format!("{}:{}", d.domain, d.name)
        };
        groups
            .entry((r.style, label))
            .or_default()
            .push(r.end - r.start);
    }
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

fn cells(r: &Row) -> [String; 10] {
    [
        format!("{:.1}", r.time_percent),
        r.total.to_string(),
        r.instances.to_string(),
        format!("{:.1}", r.avg),
        format!("{:.1}", r.median),
        r.min.to_string(),
        r.max.to_string(),
        format!("{:.1}", r.stddev),
        r.style.label().to_string(),
        r.range.clone(),
    ]
}

/// The table as a terminal shows it: numbers right-aligned, the range left.
pub fn table(rows: &[Row]) -> String {
    let body: Vec<[String; 10]> = rows.iter().map(cells).collect();
    let widths: Vec<usize> = (0..10)
        .map(|i| {
            body.iter()
                .map(|c| c[i].chars().count())
                .chain([COLUMNS[i].len()])
                .max()
                .unwrap()
        })
        .collect();
    let line = |c: &[String]| {
        let mut s = String::new();
        for i in 0..10 {
            if i == 9 {
                s.push_str(&c[i]);
            } else if i == 8 {
                s.push_str(&format!("{:<w$}  ", c[i], w = widths[i]));
            } else {
                s.push_str(&format!("{:>w$}  ", c[i], w = widths[i]));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let header: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let mut out = line(&header) + &line(&rule);
    for c in &body {
        out += &line(c);
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

pub fn csv(rows: &[Row]) -> String {
    let mut out = COLUMNS.join(",") + "\n";
    for r in rows {
        out += &cells(r)
            .iter()
            .map(|c| csv_field(c))
            .collect::<Vec<_>>()
            .join(",");
        out.push('\n');
    }
    out
}

pub fn json(rows: &[Row]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            json::object(&[
                ("time_percent", json::number(r.time_percent)),
                ("total_ns", r.total.to_string()),
                ("instances", r.instances.to_string()),
                ("avg_ns", json::number(r.avg)),
                ("median_ns", json::number(r.median)),
                ("min_ns", r.min.to_string()),
                ("max_ns", r.max.to_string()),
                ("stddev_ns", json::number(r.stddev)),
                ("style", json::string(r.style.label())),
                ("range", json::string(&r.range)),
            ])
        })
        .collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}
