//! NVTX's extensions recorded: memory heaps and regions (NVIDIA's, CUDA
//! runtime's, nvtxr's C API), deferred events and time domains, counters.

mod common;

use common::traces::{shown_in_json, shown_in_perfetto};
use common::*;
use nvtxr_harness::{compile_c, Producer};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn scratch(name: &str) -> common::Scratch {
    scratch_in("record", name)
}

#[test]
fn memory_heaps_and_regions_are_recorded_as_marks() {
    // NVIDIA's memory extension, header-only and over nvtxr's drop-in.
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, out) = recorded_program(
            "memory_regions.c",
            producer,
            &format!("memory-{producer:?}"),
        );
        assert!(text(&out).contains("handles addresses"), "{}", text(&out));
        let (marks, id) = memory_marks(&dir);
        // The permissions object's id, as its creation says.
        let perm = marks[3].1.split(',').next().unwrap();
        let perm = perm.trim_start_matches(r#"{"permissions":"#);
        let expected = [
            ("memory heap registered", format!(r#"{{"heap":{id},"name":"pool","usage":"sub-allocator","address":"0x10000000","size":1048576}}"#)),
            ("memory regions registered", format!(r#"{{"heap":{id},"count":2,"regions":[{{"address":"0x10000000","size":4096}},{{"address":"0x10001000","size":256}}]}}"#)),
            ("memory regions named", r#"{"regions":[{"region":"0x10000000","name":"weights"},{"region":"0x10001000","name":"bias"}]}"#.to_string()),
            ("memory permissions created", format!(r#"{{"permissions":{perm},"exclude global":["write"]}}"#)),
            ("memory permissions assigned", format!(r#"{{"permissions":{perm},"count":2,"regions":[{{"region":"0x10000000","access":["read"]}},{{"region":"0x10001000","access":["read","write"]}}]}}"#)),
            ("memory permissions bound", format!(r#"{{"permissions":{perm},"scope":"cpu thread","strict":["write"]}}"#)),
            ("memory permissions unbound", r#"{"scope":"cpu thread"}"#.to_string()),
            ("memory permissions reset", format!(r#"{{"permissions":{perm}}}"#)),
            ("memory permissions destroyed", format!(r#"{{"permissions":{perm}}}"#)),
            ("memory permissions reset", r#"{"permissions":0}"#.to_string()),
            ("memory regions resized", r#"{"count":1,"regions":[{"address":"0x10000000","size":8192}]}"#.to_string()),
            ("memory regions unregistered", r#"{"count":2,"regions":["0x10000000","0x10001000"]}"#.to_string()),
            ("memory heap reset", format!(r#"{{"heap":{id}}}"#)),
            ("memory heap unregistered", format!(r#"{{"heap":{id}}}"#)),
        ];
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(n, f)| (n.to_string(), f))
            .collect();
        assert_eq!(marks, expected, "{producer:?}");
    }
}

#[test]
fn cuda_runtime_memory_calls_are_recorded() {
    // NVIDIA's header needs CUDA's for two handle types: stubs stand in.
    let stubs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/c/cuda-stubs");
    let include = format!("-I{}", stubs.display());
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let name = format!("memory-cuda-{producer:?}");
        let (dir, out) = recorded_program_with("memory_cuda.c", producer, &name, &[&include]);
        assert!(text(&out).contains("handles distinct"), "{}", text(&out));
        let (marks, process) = memory_marks(&dir);
        let process: u64 = process
            .trim_start_matches(r#"{"permissions":"#)
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let device = process + 1;
        let expected = [
            ("memory cuda permissions", format!(r#"{{"permissions":{process},"cuda":"process"}}"#)),
            ("memory cuda permissions", format!(r#"{{"permissions":{device},"cuda":{{"device":1}}}}"#)),
            ("memory cuda peer access", format!(r#"{{"permissions":{device},"peer":0,"access":["read"]}}"#)),
            ("memory cuda peer access", format!(r#"{{"permissions":{process},"peer":"all devices","access":["read","write"]}}"#)),
            ("memory cuda initialized", r#"{"stream":"0x5000","per-thread stream":true,"count":2,"regions":[{"address":"0x20000000","size":4096},{"address":"0x20001000","size":512}]}"#.to_string()),
        ];
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(n, f)| (n.to_string(), f))
            .collect();
        assert_eq!(marks, expected, "{producer:?}");
    }
}

/// The memory marks of the trace `t.json` in `dir` (name, fields), every
/// one an instant of domain "memory", and the heap's id (the first's).
fn memory_marks(dir: &Path) -> (Vec<(String, String)>, String) {
    let marks: Vec<(String, String)> = events(&load(&dir.join("t.json")))
        .iter()
        .map(|e| {
            assert_eq!((e.ph.as_str(), e.cat.as_str()), ("i", "memory"), "{e:?}");
            (e.name.clone(), e.args["fields"].to_string())
        })
        .collect();
    let heap = marks[0].1.split(',').next().unwrap().to_string();
    let id = heap.trim_start_matches(r#"{"heap":"#).to_string();
    (marks, id)
}

#[test]
fn nvtxr_c_memory_calls_are_recorded_as_nvidias_are() {
    let (dir, out) = recorded_program("nvtxr_memory.c", Producer::NvtxrShared, "nvtxr-memory");
    assert!(text(&out).contains("refused -101 0 -102"), "{}", text(&out));
    let (marks, id) = memory_marks(&dir);
    let region = |address: &str, size: u32| {
        format!(r#"{{"heap":{id},"count":1,"regions":[{{"address":"{address}","size":{size}}}]}}"#)
    };
    let named = |address: &str, name: &str| {
        format!(r#"{{"regions":[{{"region":"{address}","name":"{name}"}}]}}"#)
    };
    let gone = |address: &str| format!(r#"{{"count":1,"regions":["{address}"]}}"#);
    let expected = [
        (
            "memory heap registered",
            format!(
                r#"{{"heap":{id},"name":"pool","usage":"sub-allocator","address":"0x10000000","size":1048576}}"#
            ),
        ),
        ("memory regions registered", region("0x10000000", 4096)),
        ("memory regions registered", region("0x10001000", 256)),
        ("memory regions named", named("0x10000000", "weights")),
        ("memory regions named", named("0x10001000", "bias")),
        (
            "memory regions resized",
            r#"{"count":1,"regions":[{"address":"0x10000000","size":8192}]}"#.to_string(),
        ),
        ("memory regions unregistered", gone("0x10000000")),
        ("memory regions unregistered", gone("0x10001000")),
        ("memory heap reset", format!(r#"{{"heap":{id}}}"#)),
        ("memory heap unregistered", format!(r#"{{"heap":{id}}}"#)),
    ];
    let expected: Vec<(String, String)> = expected
        .into_iter()
        .map(|(n, f)| (n.to_string(), f))
        .collect();
    assert_eq!(marks, expected);
}

#[test]
fn deferred_events_land_at_their_own_times() {
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, out) = recorded_program(
            "deferred_events.c",
            producer,
            &format!("deferred-{producer:?}"),
        );
        assert!(
            text(&out).contains("time domains: dynamic 1, static 1, again 1, refused 1"),
            "{}",
            text(&out)
        );
        let (json, rec) = (dir.join("t.json"), dir.join("rec"));
        let ev = events(&load(&json));
        let one = |name: &str| -> &Event {
            let found: Vec<&Event> = ev.iter().filter(|e| e.name == name).collect();
            assert_eq!(found.len(), 1, "{name}: {ev:?}");
            found[0]
        };
        // The range spans the mark made between its two timestamps, and ends
        // before the mark made before it was submitted.
        let span = one("deferred work");
        let (between, before) = (one("in between"), one("before submit"));
        assert_eq!(span.ph, "b", "a start/end range: {span:?}");
        assert!(
            span.start <= between.start && between.start <= span.end,
            "{span:?} {between:?}"
        );
        assert!(span.end <= before.start, "{span:?} {before:?}");
        assert_eq!(
            span.args["fields"],
            serde_json::json!({"name": "deferred work", "step": 7})
        );
        // The batch's marks: 1 ms apart, 10 ms before the submission.
        let samples: Vec<&Event> = ev.iter().filter(|e| e.name == "sample").collect();
        let values: Vec<&Value> = samples.iter().map(|e| &e.args["fields"]["value"]).collect();
        assert_eq!(values, [1, 2, 3], "{samples:?}");
        for pair in samples.windows(2) {
            let gap = pair[1].start - pair[0].start;
            assert!((gap - 1_000_000).abs() <= 5_000, "1 ms apart (ns): {gap}");
        }
        assert!(samples[2].start < before.start, "{samples:?} {before:?}");
        // A time domain nvtxr does not convert: recorded when submitted.
        assert_eq!(
            one("realtime").args["fields"],
            serde_json::json!({"value": 4, "timestamp error": "time domain 12 is not converted"})
        );
        check_registered_time_domains(&ev);
        // Perfetto shows the same, the events before others on their thread included.
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let (shown, _) = shown_in_perfetto(&pftrace);
        assert_eq!(shown, shown_in_json(&json), "{producer:?}");
    }
}

/// Marks stamped in registered time domains at the reference mark's instant
/// (in microseconds for three of them) land there; the one in a domain
/// nothing relates is recorded at its submission, with the reason.
fn check_registered_time_domains(ev: &[Event]) {
    let one = |name: &str| -> &Event {
        let found: Vec<&Event> = ev.iter().filter(|e| e.name == name).collect();
        assert_eq!(found.len(), 1, "{name}: {ev:?}");
        found[0]
    };
    let reference = one("reference");
    for (name, value) in [
        ("in us", 1),
        ("in half ns", 2),
        ("chained", 3),
        ("from a timer", 4),
        ("from a timer with data", 5),
    ] {
        let mark = one(name);
        assert_eq!(mark.args["fields"], serde_json::json!({"value": value}));
        let off = mark.start - reference.start;
        assert!(off.abs() <= 10_000, "{name}: {off} ns from the reference");
    }
    let unrelated = &one("unrelated").args["fields"];
    assert!(
        unrelated["timestamp error"].as_str().is_some_and(|e| {
            e.ends_with(
                "no sync points, conversion factor or timer source relate it to a clock nvtxr reads",
            )
        }),
        "{unrelated}"
    );
}

#[test]
fn nvtxr_c_time_domains_place_deferred_events() {
    let source = "nvtxr_time_domains.c";
    let (dir, out) = recorded_program(source, Producer::NvtxrShared, "nvtxr-time-domains");
    for line in [
        "time domains: dynamic 1, static 1, again 1",
        "statuses 0 0 0 0 0 0",
        "refused 0 0 0 -101 -101 -101",
    ] {
        assert!(text(&out).contains(line), "{line}: {}", text(&out));
    }
    check_registered_time_domains(&events(&load(&dir.join("t.json"))));
    // With no tool: no ids, every call a no-op but for the NULL checks.
    let alone = Command::new(compile_c(source, Producer::NvtxrShared, &[]))
        .output()
        .unwrap();
    assert!(alone.status.success(), "{}", text(&alone));
    assert_eq!(
        text(&alone).lines().collect::<Vec<_>>(),
        [
            "time domains: dynamic 0, static 0, again 1",
            "statuses 0 0 0 0 0 0",
            "refused 0 0 0 -101 -101 -101",
        ]
    );
}

#[test]
fn counters_are_recorded_and_shown_as_counter_tracks() {
    // NVIDIA's header-only counters, NVIDIA's API over nvtxr's drop-in,
    // and nvtxr's own C API.
    for (source, producer) in [
        ("counters.c", Producer::NvidiaHeader),
        ("counters.c", Producer::NvtxrCompat),
        ("nvtxr_counters.c", Producer::NvtxrShared),
    ] {
        let exe = compile_c(source, producer, &[]);
        let dir = scratch(&format!("counters-{producer:?}"));
        let rec = kept(
            &dir,
            &["-o", dir.join("t.json").to_str().unwrap()],
            &[exe.to_str().unwrap()],
        );
        let json = dir.join("t.json");
        let ev = events(&load(&json));
        let values = |name: &str| -> Vec<String> {
            ev.iter()
                .filter(|e| e.ph == "C" && e.name == name)
                .map(|e| {
                    assert_eq!(e.cat, "train", "{e:?}");
                    e.args["value"].to_string()
                })
                .collect()
        };
        assert_eq!(
            values("batches"),
            ["0", "10", "20", "30", "40"],
            "{producer:?}"
        );
        assert_eq!(
            values("loss"),
            ["1.0", "0.5", "0.3333333333333333", "0.25", "0.2"],
            "{producer:?}"
        );
        if producer == Producer::NvtxrShared {
            // The batch: each sample at its own time, right after its "taken"
            // mark, before the submission; bad arrays refused.
            let times = |name: &str| -> Vec<i64> {
                ev.iter()
                    .filter(|e| e.name == name)
                    .map(|e| e.start)
                    .collect()
            };
            assert_eq!(values("queue"), ["100", "101", "102"]);
            let (taken, queue) = (times("taken"), times("queue"));
            let mut after = taken[1..].to_vec();
            after.extend(times("submitted"));
            for ((t, q), next) in taken.iter().zip(&queue).zip(&after) {
                assert!(t <= q && q <= next, "{taken:?} {queue:?} {after:?}");
            }
            let alone = Command::new(&exe)
                .env_remove(nvtxr_harness::INJECTION_PATH_VAR)
                .output()
                .unwrap();
            assert!(
                text(&alone).contains("batch 0 -101 0"),
                "NULL arrays with a count refused: {}",
                text(&alone)
            );
        }
        // Each sample inside its "step" range, on the thread that took it.
        let steps: Vec<&Event> = ev.iter().filter(|e| e.name == "step").collect();
        assert_eq!(steps.len(), 5);
        for (step, sample) in steps.iter().zip(ev.iter().filter(|e| e.name == "batches")) {
            assert!(step.start <= sample.start && sample.start <= step.end);
            assert_eq!(step.tid, sample.tid);
        }
        // The Perfetto trace: counter tracks with the same values and times.
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let (shown, _) = shown_in_perfetto(&pftrace);
        assert_eq!(shown, shown_in_json(&json), "{producer:?}");
        assert_eq!(
            shown
                .iter()
                .filter(|s| s.0 == "counter" && s.1 == "train: loss")
                .count(),
            5
        );
    }
}

#[test]
fn counter_groups_no_value_samples_and_batches_are_recorded() {
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, _) = recorded_program(
            "counter_groups.c",
            producer,
            &format!("counter-groups-{producer:?}"),
        );
        let (json, rec) = (dir.join("t.json"), dir.join("rec"));
        let ev = events(&load(&json));
        let series = |name: &str| -> Vec<(i64, String)> {
            ev.iter()
                .filter(|e| e.ph == "C" && e.name == name)
                .map(|e| (e.start, e.args["value"].to_string()))
                .collect()
        };
        let values =
            |name: &str| -> Vec<String> { series(name).into_iter().map(|s| s.1).collect() };
        // A group: a series per field.
        assert_eq!(values("gpu util"), ["50", "60"], "{producer:?}");
        assert_eq!(values("gpu temp"), ["70.5", "71.5"], "{producer:?}");
        // "No value": zero is 0, unchanged adds nothing.
        assert_eq!(values("queue"), ["5", "0"], "{producer:?}");
        // A batch: each sample at its own time, right after its mark.
        let steps: Vec<i64> = ev
            .iter()
            .filter(|e| e.name == "step")
            .map(|e| e.start)
            .collect();
        let losses = series("loss");
        assert_eq!(
            losses.iter().map(|l| l.1.as_str()).collect::<Vec<_>>(),
            ["0.5", "0.25", "0.125"]
        );
        for (i, (t, _)) in losses.iter().enumerate() {
            assert!(steps[i] <= *t, "{losses:?} {steps:?}");
            if let Some(next) = steps.get(i + 1) {
                assert!(t < next, "{losses:?} {steps:?}");
            }
        }
        // A first time and an interval: evenly spaced.
        let rates = series("rate");
        assert_eq!(
            rates.iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
            ["10", "20", "30", "40"]
        );
        let gaps: Vec<i64> = rates.windows(2).map(|w| w[1].0 - w[0].0).collect();
        assert!(
            gaps.iter()
                .all(|g| (g - gaps[0]).abs() <= 2 && *g >= 1_000_000),
            "{gaps:?}"
        );
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let (shown, _) = shown_in_perfetto(&pftrace);
        assert_eq!(shown, shown_in_json(&json), "{producer:?}");
    }
}
