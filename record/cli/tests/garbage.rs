//! A producer's garbage never kills the program under the recorder: every
//! registration call of the counters, payload and memory extensions with
//! structs, names and arrays in memory that cannot be read (as NVIDIA's own
//! `CoverageCounter.c` passes an uninitialized `nvtxCountersAttr_t`). The
//! program lives on, what cannot be read is recorded as `(unreadable)`, and
//! a refused registration says why.

mod common;

use common::*;
use nvtxr_harness::{compile_c, Producer};

#[test]
fn registrations_of_unreadable_memory_are_recorded_as_unreadable() {
    let exe = compile_c("garbage_registrations.c", Producer::NvidiaHeader, &[]);
    let dir = scratch_in("garbage", "registrations");
    let out = record(&dir, &["-q"], &[exe.to_str().unwrap()], &[]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("survived"), "{said}");
    for refused in [
        "a payload schema was refused: unreadable entries",
        "a payload schema was refused: no readable attributes",
        "a payload enum was refused: unreadable entries",
        "a payload enum was refused: no readable attributes",
    ] {
        assert!(said.contains(refused), "{refused}: {said}");
    }
    let ev = events(&load(&dir.join("trace.json")));
    assert_eq!(count(&ev, "X", "after"), 1);
    let counter: Vec<_> = ev.iter().filter(|e| e.ph == "C").collect();
    assert_eq!(counter.len(), 1, "{ev:?}");
    assert_eq!(
        (counter[0].name.as_str(), counter[0].args["value"].as_i64()),
        ("(unreadable)", Some(42))
    );
    let fields = |name: &str| -> Vec<serde_json::Value> {
        ev.iter()
            .filter(|e| e.ph == "i" && e.name == name)
            .map(|e| e.args["fields"].clone())
            .collect()
    };
    let heaps = fields("memory heap registered");
    assert_eq!(heaps.len(), 1, "the heap in the hole is not registered");
    assert_eq!(heaps[0]["name"], "(unreadable)");
    assert!(heaps[0].get("address").is_none(), "{}", heaps[0]);
    let regions = fields("memory regions registered");
    assert_eq!(regions.len(), 2, "{regions:?}");
    assert_eq!(
        regions[0]["regions"],
        serde_json::json!(["(unreadable)", "(unreadable)"])
    );
    assert_eq!(regions[1]["regions"][0]["size"], 4096);
    let named = fields("memory regions named");
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(named[0]["regions"][0]["name"], "(unreadable)");
}
