//! Recording cost: `cargo run --release -p nvtxr-harness --bin bench_record`.
//!
//! Runs `bindings/c/record_bench.c` (push/pop pairs through nvtxr on 1, 2 and
//! 4 threads) with no tool and under `nvtxr record`'s tool, in one run, and
//! prints ns per event (each thread's own time per event, averaged over the
//! threads). The machine has 2 cores: 4 threads share them.

use nvtxr_harness::{artifacts, compile_c, work_dir, Producer};
use std::process::Command;

const EVENTS: &str = "4000000";

fn ns_per_event(exe: &std::path::Path, threads: usize, record: bool) -> f64 {
    let mut cmd = Command::new(exe);
    cmd.args([threads.to_string().as_str(), EVENTS])
        .env_remove("NVTX_INJECTION64_PATH");
    let dir = work_dir().join(format!("bench-record-{}", std::process::id()));
    if record {
        cmd.env("NVTX_INJECTION64_PATH", &artifacts().record_tool)
            .env("NVTXR_RECORD_DIR", &dir);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn main() {
    let exe = compile_c("record_bench.c", Producer::NvtxrShared, &[]);
    println!("| threads | no tool (ns/event) | recording (ns/event) | recording cost (ns/event) |");
    println!("|---|---|---|---|");
    for threads in [1, 2, 4] {
        let best = |record: bool| {
            (0..3)
                .map(|_| ns_per_event(&exe, threads, record))
                .fold(f64::INFINITY, f64::min)
        };
        let (plain, recorded) = (best(false), best(true));
        println!(
            "| {threads} | {plain:.2} | {recorded:.2} | {:.2} |",
            recorded - plain
        );
    }
}
