//! GPU records, with no GPU: `cargo xtask bench-gpu`.
//!
//! Records `tests/c/gpu_loop.c` (a training loop's shape: per step 50 NVTX
//! events, 38 kernels, copies and syncs and their 38 launches, handed to the
//! recording tool by the test CUPTI built from NVIDIA's headers) twice in one
//! run: with GPU recording, and with `--gpu off` (the same NVTX events
//! alone). Each recording is converted to a `.pftrace` (`-q`, the trace
//! alone) and with the summary, as a user gets it. The NVTX rate is the
//! `--gpu off` recording's events per CPU-second; the GPU rate is the GPU
//! records (activity and launch records) over the extra CPU time they take.
//! The bytes per GPU record compare with torch.profiler's JSON on the GPU
//! machine (311 MB for 163,500 kernels, copies and sets: 1,900 bytes each,
//! `../shared/cupti-notes.md`).

use nvtxr_harness::{
    artifacts, bytes_on_disk, compile_c, cupti_include, fake_cupti, measured, work_dir, Producer,
};
use std::path::Path;
use std::process::Command;

/// Steps: (full, `--quick`). 26,316 steps are 10^6 GPU activity records.
const STEPS: (u64, u64) = (26_316, 200);
/// Per step (see `gpu_loop.c`).
const NVTX_PER_STEP: u64 = 50;
const ACTIVITY_PER_STEP: u64 = 38;
const LAUNCHES_PER_STEP: u64 = 38;
/// torch.profiler's JSON per kernel, copy or set on the GPU machine.
const TORCH_PROFILER_BYTES_PER_GPU_OP: f64 = 311e6 / 163_500.0;

/// A recording's conversions: (trace alone, with the summary), and the sizes.
struct Converted {
    raw: u64,
    trace: u64,
    quiet_cpu: f64,
    summary_cpu: f64,
    summary_rss: f64,
}

fn convert(nvtxr: &Path, rec: &Path, dir: &Path) -> Converted {
    let out = dir.join("t.pftrace");
    let (quiet, _) = measured(
        Command::new(nvtxr)
            .args(["report", "-q", "-o"])
            .arg(&out)
            .arg(rec),
    );
    let trace = bytes_on_disk(&out);
    let (summary, _) = measured(
        Command::new(nvtxr)
            .args(["report", "-o"])
            .arg(&out)
            .arg(rec),
    );
    Converted {
        raw: bytes_on_disk(rec),
        trace,
        quiet_cpu: quiet.cpu,
        summary_cpu: summary.cpu,
        summary_rss: summary.rss_mb,
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let steps = if quick { STEPS.1 } else { STEPS.0 };
    let include = format!("-I{}", cupti_include().display());
    let exe = compile_c("gpu_loop.c", Producer::NvidiaHeader, &[&include, "-ldl"]);
    let cupti = fake_cupti();
    let nvtxr = &artifacts().nvtxr;
    let dir = work_dir().join(format!("bench-gpu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let record = |gpu: &str| {
        let rec = dir.join(format!("rec-{gpu}"));
        measured(
            Command::new(nvtxr)
                .args(["record", "-q", "--gpu", gpu, "--keep"])
                .arg(&rec)
                .args(["-o", "/dev/null", "--"])
                .arg(&exe)
                .arg(steps.to_string())
                .env("NVTXR_CUPTI", cupti)
                .env("FAKE_CUPTI", cupti),
        );
        let converted = convert(nvtxr, &rec, &dir);
        std::fs::remove_dir_all(&rec).unwrap();
        converted
    };
    let nvtx_only = record("off");
    let with_gpu = record("on");
    let nvtx = steps * NVTX_PER_STEP;
    let activity = steps * ACTIVITY_PER_STEP;
    let gpu = activity + steps * LAUNCHES_PER_STEP;

    println!("| recording | NVTX events | GPU records (activity + launches) | raw bytes | `.pftrace` bytes | CPU-s, trace alone (`-q`) | CPU-s with the summary | peak RSS with the summary (MB) |");
    println!("|---|---|---|---|---|---|---|---|");
    for (name, c, records) in [
        ("`--gpu off`", &nvtx_only, 0),
        ("GPU recorded", &with_gpu, gpu),
    ] {
        println!(
            "| {name} | {nvtx} | {records} | {} | {} | {:.2} | {:.2} | {:.0} |",
            c.raw, c.trace, c.quiet_cpu, c.summary_cpu, c.summary_rss
        );
    }
    let extra = |a: f64, b: f64| (b - a).max(1e-3);
    let rate = |n: u64, cpu: f64| n as f64 / cpu.max(1e-3);
    let per_op = |a: u64, b: u64| (b as f64 - a as f64) / activity as f64;
    println!();
    println!("| figure | trace alone (`-q`) | with the summary |");
    println!("|---|---|---|");
    println!(
        "| NVTX events per CPU-s | {:.2e} | {:.2e} |",
        rate(nvtx, nvtx_only.quiet_cpu),
        rate(nvtx, nvtx_only.summary_cpu)
    );
    println!(
        "| GPU records per CPU-s | {:.2e} | {:.2e} |",
        rate(gpu, extra(nvtx_only.quiet_cpu, with_gpu.quiet_cpu)),
        rate(gpu, extra(nvtx_only.summary_cpu, with_gpu.summary_cpu))
    );
    println!(
        "| bytes per GPU activity record, raw (`.pftrace`) | {:.0} ({:.0}) | torch.profiler's JSON: {:.0} |",
        per_op(nvtx_only.raw, with_gpu.raw),
        per_op(nvtx_only.trace, with_gpu.trace),
        TORCH_PROFILER_BYTES_PER_GPU_OP
    );
    let _ = std::fs::remove_dir_all(&dir);
}
