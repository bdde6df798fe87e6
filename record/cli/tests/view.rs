//! `nvtxr view` end to end: the server's answers checked against the JSON
//! trace of the same recording (every event of a zoomed-in window, bars
//! whose counts add up zoomed out), and the page in headless Chromium.
//! (Who may ask it, and what it refuses: `view_access.rs`.)

mod common;

use common::view::*;
use common::*;
use nvtxr_harness::{compile_c, have_tool, Producer};
use serde_json::Value;

fn scratch(name: &str) -> common::Scratch {
    scratch_in("view", name)
}

/// `nvtxr view` of a recording of `record_scenarios SCENARIO`, the JSON
/// trace's events, and the folder they are in.
fn viewed(scenario: &str) -> (Server, Vec<Event>, common::Scratch) {
    let dir = scratch(scenario);
    let exe = scenarios();
    let (rec, events) = recorded(&dir, &[exe.to_str().unwrap(), scenario]);
    (view(&["-q", rec.to_str().unwrap()]), events, dir)
}

/// The window's lanes of `row` as (start, end, name, ranges: None for an
/// event, Some(n) for a bar of n ranges).
fn lanes(answer: &Value, row: usize) -> Vec<(u64, u64, String, Option<u64>)> {
    answer["rows"][row]["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|lane| lane.as_array().unwrap())
        .map(|e| {
            let e: Vec<u64> = e
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            let name = answer["names"][e[2].to_string()].as_str().unwrap();
            assert!(answer["looks"][e[3].to_string()]["k"].is_string());
            (e[0], e[1], name.to_string(), e.get(4).copied())
        })
        .collect()
}

#[test]
fn zoomed_in_every_event_zoomed_out_bars_that_count_every_range() {
    let (server, events, _dir) = viewed("many");
    let meta = server.get("/meta");
    let rows = meta["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "a row per thread: {meta}");
    let end = meta["end"].as_u64().unwrap();
    assert_eq!(meta["count"].as_u64().unwrap() as usize, events.len());
    let thread_of = |row: &Value| {
        let label = row["label"].as_str().unwrap();
        let tid: u64 = label
            .rsplit_once('(')
            .unwrap()
            .1
            .trim_end_matches(')')
            .parse()
            .unwrap();
        tid
    };

    // Zoomed out, 300 pixels: bars, fewer than pixels, whose counts add up
    // to every range of the row; marks binned likewise.
    let all = server.get(&format!("/window?t0=0&t1={end}&w=300"));
    for (i, row) in rows.iter().enumerate() {
        let tid = thread_of(row);
        let ranges = events
            .iter()
            .filter(|e| e.ph == "X" && e.tid == tid)
            .count();
        let bars = lanes(&all, i);
        assert!(bars.len() <= 300, "{} bars", bars.len());
        assert_eq!(
            bars.iter().map(|b| b.3.unwrap()).sum::<u64>() as usize,
            ranges
        );
        let name = format!("busy {i}");
        assert!(bars.iter().all(|b| b.2 == name), "{bars:?}");
        let marks: u64 = all["rows"][i]["marks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m[3].as_u64().unwrap())
            .sum();
        let ticks = events
            .iter()
            .filter(|e| e.ph == "i" && e.tid == tid)
            .count();
        assert_eq!(marks as usize, ticks);
    }

    // Zoomed into 1 µs around a range in the middle: every range and mark
    // in it, as the JSON trace has them.
    let middle = events
        .iter()
        .filter(|e| e.ph == "X")
        .nth(events.len() / 4)
        .unwrap();
    let (t0, t1) = (middle.start as u64, middle.start as u64 + 1000);
    let window = server.get(&format!("/window?t0={t0}&t1={t1}&w=1000"));
    for (i, row) in rows.iter().enumerate() {
        let tid = thread_of(row);
        let mut expected: Vec<(u64, u64, String, Option<u64>)> = events
            .iter()
            .filter(|e| e.ph == "X" && e.tid == tid)
            .filter(|e| e.end as u64 >= t0 && e.start as u64 <= t1)
            .map(|e| (e.start as u64, e.end as u64, e.name.clone(), None))
            .collect();
        expected.sort();
        assert_eq!(lanes(&window, i), expected, "row {i}");
        let marks: Vec<u64> = window["rows"][i]["marks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m[0].as_u64().unwrap())
            .collect();
        let ticks: Vec<u64> = events
            .iter()
            .filter(|e| e.ph == "i" && e.tid == tid)
            .map(|e| e.start as u64)
            .filter(|&t| (t0..=t1).contains(&t))
            .collect();
        assert_eq!(marks, ticks, "row {i}");
    }
    let row = rows
        .iter()
        .position(|r| thread_of(r) == middle.tid)
        .unwrap();
    assert!(
        lanes(&window, row)
            .iter()
            .any(|l| l.0 == middle.start as u64 && l.2 == middle.name),
        "the window holds the range it was placed on"
    );

    // Find: the first "busy 2" range, then the next one after it.
    let mut busy: Vec<&Event> = events.iter().filter(|e| e.name == "busy 2").collect();
    busy.sort_by_key(|e| e.start);
    let first = server.get("/find?q=BUSY+2");
    assert_eq!(first["start"].as_i64().unwrap(), busy[0].start);
    let second = server.get(&format!("/find?q=busy%202&after={}", busy[0].start));
    assert_eq!(second["start"].as_i64().unwrap(), busy[1].start);
    assert_eq!(server.get("/find?q=nothing-like-it"), Value::Null);
}

/// More distinct names than the index remembers while indexing (65,536):
/// every window still shows each range with its own name, and find finds
/// names from before and after the index forgot the first ones.
#[test]
fn more_distinct_names_than_the_index_remembers() {
    let dir = scratch("names");
    let exe = compile_c("scale_loop.c", Producer::NvtxrShared, &[]);
    // 70,000 "step N" names and "inner": 70,001 distinct names.
    let (rec, events) = recorded(&dir, &[exe.to_str().unwrap(), "70000"]);
    let server = view(&["-q", rec.to_str().unwrap()]);
    let meta = server.get("/meta");
    assert_eq!(meta["count"].as_u64().unwrap() as usize, events.len());
    let mut ranges: Vec<&Event> = events.iter().filter(|e| e.ph == "X").collect();
    ranges.sort_by_key(|e| (e.start, -e.end));
    assert_eq!(ranges.len(), 140_000);
    // Zoomed into windows at the start, the middle and the end: every range
    // with its name.
    for at in [0, 70_000, 139_990] {
        let (t0, t1) = (ranges[at].start as u64, ranges[at + 8].end as u64);
        let window = server.get(&format!("/window?t0={t0}&t1={t1}&w=1000"));
        let mut expected: Vec<(u64, u64, String, Option<u64>)> = ranges
            .iter()
            .filter(|e| e.end as u64 >= t0 && e.start as u64 <= t1)
            .map(|e| (e.start as u64, e.end as u64, e.name.clone(), None))
            .collect();
        expected.sort();
        let mut got = lanes(&window, 0);
        got.sort();
        assert_eq!(got, expected, "at range {at}");
    }
    for name in ["step 3", "step 69999", "inner"] {
        let found = server.get(&format!("/find?q={}", name.replace(' ', "+")));
        let first = ranges.iter().find(|e| e.name.contains(name)).unwrap();
        assert_eq!(found["start"].as_i64().unwrap(), first.start, "{name}");
    }
    // After the last "inner": the first again.
    let last_inner = ranges.iter().rev().find(|e| e.name == "inner").unwrap();
    let again = server.get(&format!("/find?q=inner&after={}", last_inner.start));
    assert_eq!(again["start"].as_i64().unwrap(), ranges[1].start);
}

/// The index goes to a temporary file: a TMPDIR too small for it is a
/// clear error, not a crash or a hang.
#[test]
fn a_full_tmpdir_is_a_clear_error() {
    let dir = scratch("tmp-full");
    let exe = scenarios();
    // 80,000 ranges: an index of about 2 MB.
    let (rec, _) = recorded(&dir, &[exe.to_str().unwrap(), "many"]);
    let args = ["view", "-q", rec.to_str().unwrap()];
    let Some((out, small)) = nvtxr_with_small_tmpdir(&dir, "256k", &args) else {
        return;
    };
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    let expected = format!(
        "nvtxr: cannot keep the index in a temporary file in {} (TMPDIR): No space left on device",
        small.display()
    );
    assert!(msg.contains(&expected), "{msg}");
}

/// Start/end ranges that overlap: a row of their own, on lanes where no two
/// ranges overlap, every range with its name and look, the one never ended
/// said so.
#[test]
fn overlapping_start_end_ranges_on_lanes_of_their_own() {
    let (server, events, _dir) = viewed("overlapping");
    let meta = server.get("/meta");
    let rows = meta["rows"].as_array().unwrap();
    let row = rows
        .iter()
        .position(|r| r["async"] == true)
        .unwrap_or_else(|| panic!("a start/end row: {meta}"));
    assert!(rows[row]["depth"].as_u64().unwrap() >= 7, "8 open at once");
    let end = meta["end"].as_u64().unwrap();
    let window = server.get(&format!("/window?t0=0&t1={end}&w=100000"));
    let lanes = window["rows"][row]["lanes"].as_array().unwrap();
    let mut got = Vec::new();
    for lane in lanes {
        let mut last_end = 0;
        for e in lane.as_array().unwrap() {
            let (start, stop) = (e[0].as_u64().unwrap(), e[1].as_u64().unwrap());
            assert_eq!(e.as_array().unwrap().len(), 4, "every range, no bars: {e}");
            assert!(start >= last_end, "ranges on one lane do not overlap");
            last_end = stop;
            let name = window["names"][e[2].to_string()].as_str().unwrap();
            let kind = window["looks"][e[3].to_string()]["k"].as_str().unwrap();
            got.push((start, stop, name.to_string(), kind.to_string()));
        }
    }
    got.sort();
    let mut expected: Vec<(u64, u64, String, String)> = events
        .iter()
        .filter(|e| e.name.starts_with("async "))
        .map(|e| {
            (
                e.start as u64,
                e.end as u64,
                e.name.clone(),
                "start/end".to_string(),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(expected.len(), 5000);
    let never: Vec<usize> = got
        .iter()
        .enumerate()
        .filter(|(_, g)| g.3 == "start/end, never ended")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(never.len(), 1, "the one never ended");
    expected[never[0]].3 = "start/end, never ended".into();
    assert_eq!(got, expected);
}

/// Each range's look (its kind, color and tooltip lines), here one per
/// range: every range has its own payload.
#[test]
fn every_range_with_its_own_payload_and_color() {
    let (server, events, _dir) = viewed("payloads");
    let end = server.get("/meta")["end"].as_u64().unwrap();
    let window = server.get(&format!("/window?t0=0&t1={end}&w=100000"));
    let mut ranges: Vec<&Event> = events.iter().filter(|e| e.ph == "X").collect();
    ranges.sort_by_key(|e| e.start);
    let lane = window["rows"][0]["lanes"][0].as_array().unwrap();
    assert_eq!(lane.len(), 1000, "every range");
    for (i, (e, r)) in lane.iter().zip(&ranges).enumerate() {
        assert_eq!(e[0].as_u64().unwrap(), r.start as u64);
        let look = &window["looks"][e[3].to_string()];
        assert_eq!(look["k"], "push/pop");
        assert_eq!(
            look["c"],
            ["#ff0000", "#00ff00", "#0000ff"][i % 3],
            "{look}"
        );
        let about = look["a"].as_str().unwrap();
        assert!(
            about.lines().any(|l| l == format!("payload: {i}")),
            "{about}"
        );
        assert_eq!(r.args["payload"], i, "the JSON says the same");
    }
}

#[test]
fn the_served_timeline_in_headless_chromium() {
    if !have_tool("chromium") {
        return;
    }
    let dir = scratch("chromium");
    let exe = compile_c("example.c", Producer::NvtxrShared, &[]);
    let (rec, events) = recorded(&dir, &[exe.to_str().unwrap()]);
    let server = view(&["-q", rec.to_str().unwrap()]);
    let dom = dump_dom(&dir, &server.url());
    assert!(
        dom.contains("data-painted="),
        "the page drew its first window:\n{dom}"
    );
    assert_draws_the_example(&dom);
    assert!(dom.contains("<th>Instances</th>"), "the summary table");

    // Opened on the second "backward" range's window: it and nothing else
    // on its level, and its epoch around it.
    let mut backward: Vec<&Event> = events.iter().filter(|e| e.name == "backward").collect();
    backward.sort_by_key(|e| e.start);
    let b = backward[1];
    let url = format!("{}#t0={}&t1={}", server.url(), b.start + 10, b.end - 10);
    let dom = dump_dom(&dir, &url);
    assert_eq!(dom.matches("data-name=\"backward\"").count(), 1, "{dom}");
    assert_eq!(dom.matches("data-name=\"forward\"").count(), 0);
    assert_eq!(dom.matches("data-name=\"epoch\"").count(), 1);
}
