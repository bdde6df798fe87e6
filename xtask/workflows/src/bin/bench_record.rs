//! Recording cost: `cargo xtask bench-record`.
//!
//! Runs `tests/c/record_bench.c` (push/pop pairs through nvtxr on 1, 2 and
//! 4 threads) with no tool, under a do-nothing tool (the event-log tool's
//! `null` mode: the round trip into a tool and back) and under `nvtxr
//! record`'s tool (with the time-stamp counter and with CLOCK_MONOTONIC), in
//! one run, beside the bare cost of each clock read, and prints ns per event
//! (each thread's own time per event, averaged over the threads). The bare
//! counter read plus the do-nothing tool is the floor under a recorded
//! event. Then every call timed, recording and with no tool: the p50,
//! p99.99 and maximum, and the calls over 100 µs. The machine has 2 cores:
//! 4 threads share them. Pass `--quick` for a short smoke run.

use nvtxr_harness::{artifacts, compile_c, work_dir, Producer};
use std::process::Command;

/// Events per thread, and runs of which the best is kept: (full, `--quick`).
const EVENTS: (&str, &str) = ("4000000", "20000");
const RUNS: (usize, usize) = (3, 1);

/// How the bench program runs.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    NoTool,
    /// A tool that does nothing with the events.
    NullTool,
    /// Recording with the time-stamp counter (the default where it is invariant).
    Record,
    /// Recording with CLOCK_MONOTONIC (the fallback).
    RecordMonotonic,
}

/// The bench program's output in `mode` (`args` after the program).
fn run(exe: &std::path::Path, args: &[&str], mode: Mode) -> String {
    let mut cmd = Command::new(exe);
    cmd.args(args).env_remove(nvtxr_harness::INJECTION_PATH_VAR);
    let dir = work_dir().join(format!("bench-record-{}", std::process::id()));
    if mode == Mode::NullTool {
        cmd.env(nvtxr_harness::INJECTION_PATH_VAR, &artifacts().event_log)
            .env("NVTXR_EVENT_LOG_MODE", "null");
    } else if mode != Mode::NoTool {
        cmd.env(nvtxr_harness::INJECTION_PATH_VAR, &artifacts().record_tool)
            .env("NVTXR_RECORD_DIR", &dir);
    }
    if mode == Mode::RecordMonotonic {
        cmd.env("NVTXR_RECORD_CLOCK", "monotonic");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn ns_per_event(exe: &std::path::Path, threads: usize, events: &str, mode: Mode) -> f64 {
    run(exe, &[threads.to_string().as_str(), events], mode)
        .parse()
        .unwrap()
}

/// Every call timed: "p50 / p99.99 / max" in ns, and how many took over 100 µs.
fn tails(exe: &std::path::Path, threads: usize, events: &str, mode: Mode) -> (String, String) {
    let out = run(exe, &["tails", threads.to_string().as_str(), events], mode);
    let f: Vec<&str> = out.split_whitespace().collect();
    (format!("{} / {} / {}", f[0], f[1], f[2]), f[3].to_string())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (events, runs, clock_reads) = if quick {
        (EVENTS.1, RUNS.1, "100000")
    } else {
        (EVENTS.0, RUNS.0, "10000000")
    };
    let exe = compile_c("record_bench.c", Producer::NvtxrShared, &[]);
    let clocks = Command::new(&exe)
        .args(["clock", clock_reads])
        .output()
        .unwrap();
    let clocks = String::from_utf8_lossy(&clocks.stdout).into_owned();
    let (gettime, rdtsc) = clocks.trim().split_once(' ').expect("two figures");
    println!("bare clock reads: clock_gettime(CLOCK_MONOTONIC) {gettime} ns, rdtsc {rdtsc} ns\n");
    println!("| threads | no tool (ns/event) | do-nothing tool (ns/event) | recording, TSC (ns/event) | recording, CLOCK_MONOTONIC (ns/event) |");
    println!("|---|---|---|---|---|");
    for threads in [1, 2, 4] {
        let best = |mode: Mode| {
            (0..runs)
                .map(|_| ns_per_event(&exe, threads, events, mode))
                .fold(f64::INFINITY, f64::min)
        };
        let (plain, null, tsc, monotonic) = (
            best(Mode::NoTool),
            best(Mode::NullTool),
            best(Mode::Record),
            best(Mode::RecordMonotonic),
        );
        println!("| {threads} | {plain:.2} | {null:.2} | {tsc:.2} | {monotonic:.2} |");
    }
    // Each call timed (which adds two clock reads to each): the tail.
    println!();
    println!("| threads | recording, TSC: p50 / p99.99 / max (ns) | calls over 100 µs | no tool: p50 / p99.99 / max (ns) | calls over 100 µs |");
    println!("|---|---|---|---|---|");
    for threads in [1, 2, 4] {
        let (recorded, recorded_over) = tails(&exe, threads, events, Mode::Record);
        let (plain, plain_over) = tails(&exe, threads, events, Mode::NoTool);
        println!("| {threads} | {recorded} | {recorded_over} | {plain} | {plain_over} |");
    }
}
