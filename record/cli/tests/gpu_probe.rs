//! The GPU check's CUPTI probe (`tests/gpu/cupti_probe.c`, the cost split
//! of `tests/gpu/check.sh`) against the test CUPTI: it builds from NVIDIA's
//! headers, and it gets from CUPTI what each configuration asks for, so
//! that a device's figures measure what they say.

use nvtxr_harness::{compile_c, cupti_include, cupti_library, fake_cupti, Producer};
use std::process::Command;

#[test]
fn the_cupti_probe_gets_the_records_each_configuration_asks_for() {
    let include = format!("-I{}", cupti_include().display());
    let probe = cupti_library("tests/gpu/cupti_probe.c", "libcupti_probe.so");
    // 10 steps of the benchmark's loop: 37 activities (no synchronization
    // records: the probe, as the tool, asks for none) and 38 traced calls
    // a step, and the device's and the context's records (the test CUPTI
    // names seven traced APIs).
    let program = compile_c("gpu_loop.c", Producer::NvidiaHeader, &[&include, "-ldl"]);
    let cupti = fake_cupti();
    // The runtime's APIs alone: six of the seven (every call of the loop
    // is a runtime call).
    for (parts, api_records, apis) in [
        ("", 0, 0),
        ("runtime_apis", 380, 6),
        ("apis", 380, 7),
        ("apis,subscribe", 380, 7),
        ("apis,subscribe,clock,tid", 380, 7),
        ("apis,subscribe,clock,tid,overhead", 380, 7),
        ("apis,subscribe,unsubscribe,clock,tid", 380, 7),
    ] {
        let out = Command::new(&program)
            .arg("10")
            .env("CUDA_INJECTION64_PATH", &probe)
            .env("PROBE_CUPTI", cupti)
            .env("FAKE_CUPTI", cupti)
            .env("PROBE", parts)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{parts}: {said}");
        let expected = format!(
            "PROBE {parts}: 372 activity records, {api_records} API records ({apis} APIs enabled)"
        );
        assert!(said.contains(&expected), "{parts}: {said}");
        assert!(!said.contains("refused"), "{parts}: {said}");
        // CUPTI's overhead records, summed by kind: the test CUPTI's one
        // flush (at exit) says it took 1 us.
        let overhead = said.contains("PROBE overhead buffer flush: 1 records, 1000 ns");
        assert_eq!(overhead, parts.ends_with("overhead"), "{parts}: {said}");
    }
}
