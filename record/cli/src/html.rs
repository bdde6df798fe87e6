//! A self-contained HTML timeline (no network access, one file): threads as
//! rows, nested push/pop ranges as colored bars (outlined, so a white bar
//! shows; labels black or white by the bar's brightness), start/end ranges
//! on a row per process, marks; hover for details; wheel to zoom, drag to
//! pan; find a range by name; a legend and the summary table below.

use crate::chrome::{css_color, payload_json};
use crate::json;
use crate::model::{Details, Recording, Style};
use crate::summary::Row;

const TEMPLATE: &str = include_str!("timeline.html");

/// The tooltip text of a range or mark.
fn tip(d: &Details, when: &str) -> String {
    let mut lines = vec![d.name.clone(), when.to_string()];
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
        lines.push(format!("payload: {}", payload_json(p)));
    }
    if let Some(c) = d.color {
        lines.push(format!("color: {}", css_color(c)));
    }
    lines.join("\n")
}

fn item(d: &Details, fields: Vec<(&str, String)>, when: &str) -> String {
    let mut f = vec![
        ("n", json::string(&d.name)),
        ("i", json::string(&tip(d, when))),
    ];
    if let Some(c) = d.color {
        f.push(("c", json::string(&css_color(c))));
    }
    f.extend(fields);
    json::object(&f)
}

fn duration(ns: u64) -> String {
    format!("{:.3} µs", ns as f64 / 1000.0)
}

/// The summary rows, for the table under the timeline.
fn summary_json(rows: &[Row]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            json::object(&[
                ("p", json::number(r.time_percent)),
                ("t", r.total.to_string()),
                ("n", r.instances.to_string()),
                ("a", json::number(r.avg)),
                ("m", json::number(r.median)),
                ("lo", r.min.to_string()),
                ("hi", r.max.to_string()),
                ("sd", json::number(r.stddev)),
                ("s", json::string(r.style.label())),
                ("r", json::string(&r.range)),
            ])
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// One swatch per range and mark name (its color: the first one given, or the page's own).
fn legend_json(recording: &Recording) -> String {
    let mut seen = std::collections::BTreeMap::new();
    for p in &recording.processes {
        let details = p
            .ranges
            .iter()
            .map(|r| &r.details)
            .chain(p.marks.iter().map(|m| &m.details));
        for d in details {
            seen.entry(d.name.clone()).or_insert(d.color);
        }
    }
    let items: Vec<String> = seen
        .iter()
        .map(|(name, color)| {
            let mut f = vec![("n", json::string(name))];
            if let Some(c) = color {
                f.push(("c", json::string(&css_color(*c))));
            }
            json::object(&f)
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// The page for a recording, with its summary rows.
pub fn page(recording: &Recording, title: &str, summary: &[Row]) -> String {
    let o = recording.origin;
    let mut rows = Vec::new();
    let mut end = 0;
    let mut count = 0;
    for p in &recording.processes {
        let process = format!("{} (pid {})", short_command(&p.command), p.pid);
        let mut row =
            |label: String, is_async: bool, ranges: Vec<String>, marks: Vec<String>, depth: u32| {
                count += ranges.len() + marks.len();
                rows.push(json::object(&[
                    ("pid", p.pid.to_string()),
                    ("process", json::string(&process)),
                    ("label", json::string(&label)),
                    ("async", is_async.to_string()),
                    ("depth", depth.to_string()),
                    ("ranges", format!("[{}]", ranges.join(","))),
                    ("marks", format!("[{}]", marks.join(","))),
                ]));
            };
        for t in &p.threads {
            let mine: Vec<_> = p
                .ranges
                .iter()
                .filter(|r| r.style == Style::PushPop && r.tid == t.tid)
                .collect();
            let marks: Vec<String> = p
                .marks
                .iter()
                .filter(|m| m.tid == t.tid)
                .map(|m| {
                    item(
                        &m.details,
                        vec![("t", (m.time - o).to_string())],
                        &format!("mark at {}", duration(m.time - o)),
                    )
                })
                .collect();
            let depth = mine.iter().map(|r| r.depth).max().unwrap_or(0);
            let ranges = mine
                .iter()
                .map(|r| {
                    end = end.max(r.end - o);
                    let when = format!(
                        "{} (push/pop{})",
                        duration(r.end - r.start),
                        if r.unterminated { ", never popped" } else { "" }
                    );
                    item(
                        &r.details,
                        vec![
                            ("s", (r.start - o).to_string()),
                            ("e", (r.end - o).to_string()),
                            ("d", r.depth.to_string()),
                        ],
                        &when,
                    )
                })
                .collect();
            let label = t
                .name
                .clone()
                .map_or(format!("thread {}", t.tid), |n| format!("{n} ({})", t.tid));
            row(label, false, ranges, marks, depth);
        }
        // Start/end ranges: one row per process, overlapping ones on separate lanes.
        let mut lanes: Vec<u64> = Vec::new();
        let mut ranges = Vec::new();
        for r in p.ranges.iter().filter(|r| r.style == Style::StartEnd) {
            let lane = lanes
                .iter()
                .position(|&free| free <= r.start)
                .unwrap_or_else(|| {
                    lanes.push(0);
                    lanes.len() - 1
                });
            lanes[lane] = r.end;
            end = end.max(r.end - o);
            let when = format!(
                "{} (start/end{})",
                duration(r.end - r.start),
                if r.unterminated { ", never ended" } else { "" }
            );
            ranges.push(item(
                &r.details,
                vec![
                    ("s", (r.start - o).to_string()),
                    ("e", (r.end - o).to_string()),
                    ("d", lane.to_string()),
                ],
                &when,
            ));
        }
        if !ranges.is_empty() {
            row(
                "start/end ranges".into(),
                true,
                ranges,
                Vec::new(),
                lanes.len() as u32 - 1,
            );
        }
        for m in &p.marks {
            end = end.max(m.time - o);
        }
        if p.threads.is_empty() {
            rows.push(json::object(&[
                ("pid", p.pid.to_string()),
                ("process", json::string(&process)),
                (
                    "label",
                    json::string("no NVTX events: the process made no NVTX call while recorded"),
                ),
                ("empty", "true".into()),
            ]));
        }
    }
    let data = json::object(&[
        ("end", end.to_string()),
        ("count", count.to_string()),
        ("processes", recording.processes.len().to_string()),
        ("rows", format!("[\n{}\n]", rows.join(",\n"))),
        ("summary", summary_json(summary)),
        ("legend", legend_json(recording)),
    ]);
    let (head, tail) = TEMPLATE
        .split_once("__DATA__")
        .expect("the template has a data slot");
    format!(
        "{}{data}{tail}",
        head.replace("__TITLE__", &html_escape(title))
    )
}

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
