//! The JSON and Perfetto traces read back as the tests compare them: each
//! range and mark as [`Shown`] in both, the Perfetto trace checked by
//! `perfetto_check.py` against Perfetto's own protos.

use super::{events, load, text};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// One range or mark, as both formats can show it: kind (`slice`,
/// `instant`), name, pid, tid (`None` for start/end ranges, which Perfetto
/// puts on async tracks), start and end ns from the trace's origin, args.
pub type Shown = (String, String, u64, Option<u64>, i64, i64, String);

/// The JSON trace's ranges and marks as [`Shown`].
pub fn shown_in_json(trace: &Path) -> Vec<Shown> {
    let mut out: Vec<Shown> = events(&load(trace))
        .into_iter()
        .map(|e| {
            let kind = match e.ph.as_str() {
                "i" => "instant",
                "C" => "counter",
                _ => "slice",
            };
            // Counter tracks belong to the process, named with their domain.
            let tid = (e.ph != "b" && e.ph != "C").then_some(e.tid);
            let name = match e.ph.as_str() {
                "C" if e.cat != "nvtx" => format!("{}: {}", e.cat, e.name),
                _ => e.name,
            };
            (
                kind.into(),
                name,
                e.pid,
                tid,
                e.start,
                e.end,
                sorted(&e.args),
            )
        })
        .collect();
    out.sort();
    out
}

/// A `.pftrace` checked by `perfetto_check.py` with Perfetto's own protos:
/// its lines, as the script prints them (its processes and threads, then
/// its events).
pub fn perfetto_events(trace: &Path) -> Vec<Value> {
    let out = Command::new(nvtxr_harness::python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/perfetto_check.py"))
        .arg(trace)
        .env("PYTHONPATH", nvtxr_harness::perfetto_protos())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A `.pftrace` checked by `perfetto_check.py` with Perfetto's own protos;
/// its ranges and marks as [`Shown`], and its flows (from, to) by tid.
pub fn shown_in_perfetto(trace: &Path) -> (Vec<Shown>, Vec<(u64, u64)>) {
    let mut shown = Vec::new();
    let mut flows: HashMap<u64, (Option<u64>, Option<u64>)> = HashMap::new();
    for v in perfetto_events(trace) {
        let Some(kind) = v["kind"].as_str() else {
            continue; // a track
        };
        let tid = v["tid"].as_u64();
        if kind == "flow" {
            for (key, to) in [("flow_ids", false), ("terminating", true)] {
                for id in v["args"][key].as_array().unwrap() {
                    let ends = flows.entry(id.as_u64().unwrap()).or_default();
                    if to {
                        ends.1 = tid
                    } else {
                        ends.0 = tid
                    }
                }
            }
            continue;
        }
        shown.push((
            kind.to_string(),
            v["name"].as_str().unwrap().to_string(),
            v["pid"].as_u64().unwrap(),
            tid,
            v["start"].as_i64().unwrap(),
            v["end"].as_i64().unwrap(),
            sorted(&v["args"]),
        ));
    }
    shown.sort();
    let flows = flows
        .into_values()
        .map(|(from, to)| (from.expect("a flow's start"), to.expect("a flow's end")))
        .collect();
    (shown, flows)
}

/// `v` as JSON text with every object's keys sorted (the JSON trace keeps
/// its arguments in order, the Perfetto check in another).
fn sorted(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let members: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), sorted(&map[k])))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(sorted).collect::<Vec<_>>().join(",")
        ),
        v => v.to_string(),
    }
}
