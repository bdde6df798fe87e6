//! Scratch: prints scenario output for inspection.
use nvtxr_harness::*;
#[test]
fn scratch() {
    let exe = compile_c("scenarios.c", Producer::NvtxrShared, &[]);
    for s in [
        "basic",
        "attributes",
        "domains",
        "naming",
        "bad_input",
        "version",
        "status",
    ] {
        let r = run(&exe, &[s], Tool::Recorder("record"), &[]);
        println!(
            "=== {s} {}\n{}\n--- events\n{}\n--- stderr\n{}",
            r.success,
            r.stdout,
            r.events.join("\n"),
            r.stderr
        );
    }
}
