//! A self-contained HTML timeline (no network access, one file): threads as
//! rows, nested push/pop ranges as colored bars, start/end ranges on a row
//! per process, marks; hover for details; wheel to zoom, drag to pan.

use crate::chrome::{css_color, payload_json};
use crate::json;
use crate::model::{Details, Recording, Style};

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

/// The page for a recording.
pub fn page(recording: &Recording, title: &str) -> String {
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
    }
    let data = json::object(&[
        ("end", end.to_string()),
        ("count", count.to_string()),
        ("processes", recording.processes.len().to_string()),
        ("rows", format!("[\n{}\n]", rows.join(",\n"))),
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
