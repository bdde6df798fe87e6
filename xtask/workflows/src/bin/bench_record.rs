//! Recording cost: `cargo xtask bench-record`.
//!
//! Runs `tests/c/record_bench.c` (push/pop pairs through nvtxr on 1, 2 and
//! 4 threads) with no tool, under a do-nothing tool (the event-log tool's
//! `null` mode: the round trip into a tool and back), under the reference,
//! a minimal tool keeping each thread's events in a ring in memory
//! (`tests/c/ring_tool.c`: the floor for a recorder), and under `nvtxr
//! record`'s tool (with the time-stamp counter and with CLOCK_MONOTONIC), in
//! one run, beside the bare cost of each clock read, and prints ns per event
//! (each thread's own time per event, averaged over the threads), the
//! recorder's ratio to the ring, the process's user and system CPU time per
//! event, and instructions per event (callgrind, one thread). Then every
//! call timed, recording and with no tool: the p50, p99.99 and maximum, and
//! the calls over 100 µs. Last, short-lived threads (each one range and one
//! mark, 8 at a time: `record_scenarios short_threads`): the program's time
//! alone and recording, and the recording's bytes on disk per event. The
//! machine has 2 cores: 4 threads share them. Pass `--quick` for a short
//! smoke run.

use nvtxr_harness::{artifacts, callgrind_total, compile_c, have_tool, work_dir, Producer};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Events per thread, and runs of which the best is kept: (full, `--quick`).
const EVENTS: (&str, &str) = ("4000000", "20000");
/// Short-lived threads: (full, `--quick`).
const SHORT_THREADS: (usize, usize) = (20000, 400);
const RUNS: (usize, usize) = (3, 1);

/// How the bench program runs.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    NoTool,
    /// A tool that does nothing with the events.
    NullTool,
    /// The reference: a minimal tool keeping events in a ring in memory.
    Ring,
    /// Recording with the time-stamp counter (the default where it is invariant).
    Record,
    /// Recording with CLOCK_MONOTONIC (the fallback).
    RecordMonotonic,
}

/// The programs: the bench program and the ring tool.
struct Programs {
    bench: PathBuf,
    ring: PathBuf,
}

/// `command` set to run `programs.bench` in `mode`; the recording goes to `dir`.
fn in_mode(command: &mut Command, programs: &Programs, mode: Mode, dir: &Path) {
    nvtxr_harness::with_do_nothing_tool(command, mode == Mode::NullTool);
    match mode {
        Mode::NoTool | Mode::NullTool => {}
        Mode::Ring => {
            command.env(nvtxr_harness::INJECTION_PATH_VAR, &programs.ring);
        }
        Mode::Record | Mode::RecordMonotonic => {
            command
                .env(nvtxr_harness::INJECTION_PATH_VAR, &artifacts().record_tool)
                .env("NVTXR_RECORD_DIR", dir);
        }
    }
    if mode == Mode::RecordMonotonic {
        command.env("NVTXR_RECORD_CLOCK", "monotonic");
    }
}

/// The bench program's output in `mode` (`args` after the program).
fn run(programs: &Programs, args: &[&str], mode: Mode) -> String {
    let mut cmd = Command::new(&programs.bench);
    cmd.args(args);
    let dir = work_dir().join(format!("bench-record-{}", std::process::id()));
    in_mode(&mut cmd, programs, mode, &dir);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// One run's figures per event, in ns: the threads' mean time, and the
/// process's user and system CPU time.
#[derive(Clone, Copy)]
struct PerEvent {
    time: f64,
    user: f64,
    system: f64,
}

fn per_event(programs: &Programs, threads: usize, events: &str, mode: Mode) -> PerEvent {
    let out = run(programs, &[threads.to_string().as_str(), events], mode);
    let f: Vec<f64> = out.split_whitespace().map(|v| v.parse().unwrap()).collect();
    PerEvent {
        time: f[0],
        user: f[1],
        system: f[2],
    }
}

/// Instructions per event on one thread in `mode` (callgrind, counting the
/// bench loop only: the difference between two runs' counts, so that
/// setup and warm-up cancel).
fn instructions(programs: &Programs, mode: Mode) -> f64 {
    let dir = work_dir().join(format!("bench-record-cg-{}", std::process::id()));
    let count = |events: u64| -> f64 {
        let out = dir.join(format!("cg-{events}"));
        let mut cmd = Command::new("valgrind");
        cmd.args(["--tool=callgrind", "-q", "--toggle-collect=work"])
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&programs.bench)
            .args(["1", &events.to_string()]);
        in_mode(&mut cmd, programs, mode, &dir.join("recording"));
        let status = cmd.output().unwrap().status;
        assert!(status.success(), "callgrind: {status}");
        callgrind_total(&out)
    };
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (small, large) = (20_000, 120_000);
    let per_event = (count(large) - count(small)) / (large - small) as f64;
    let _ = std::fs::remove_dir_all(&dir);
    per_event
}

/// Every call timed: "p50 / p99.99 / max" in ns, and how many took over 100 µs.
fn tails(programs: &Programs, threads: usize, events: &str, mode: Mode) -> (String, String) {
    let out = run(
        programs,
        &["tails", threads.to_string().as_str(), events],
        mode,
    );
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
    let programs = Programs {
        bench: compile_c("record_bench.c", Producer::NvtxrShared, &[]),
        ring: compile_c("ring_tool.c", Producer::NvidiaHeader, &["-shared", "-fPIC"]),
    };
    let clocks = Command::new(&programs.bench)
        .args(["clock", clock_reads])
        .output()
        .unwrap();
    let clocks = String::from_utf8_lossy(&clocks.stdout).into_owned();
    let (gettime, rdtsc) = clocks.trim().split_once(' ').expect("two figures");
    println!("bare clock reads: clock_gettime(CLOCK_MONOTONIC) {gettime} ns, rdtsc {rdtsc} ns\n");
    println!("| threads | no tool (ns/event) | do-nothing tool (ns/event) | ring tool, the reference (ns/event) | recording, TSC (ns/event) | recording / ring | recording, CLOCK_MONOTONIC (ns/event) |");
    println!("|---|---|---|---|---|---|---|");
    let mut cpu = Vec::new();
    for threads in [1, 2, 4] {
        let best = |mode: Mode| {
            (0..runs)
                .map(|_| per_event(&programs, threads, events, mode))
                .min_by(|a, b| a.time.total_cmp(&b.time))
                .unwrap()
        };
        let (plain, null, ring, tsc, monotonic) = (
            best(Mode::NoTool),
            best(Mode::NullTool),
            best(Mode::Ring),
            best(Mode::Record),
            best(Mode::RecordMonotonic),
        );
        println!(
            "| {threads} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            plain.time,
            null.time,
            ring.time,
            tsc.time,
            tsc.time / ring.time,
            monotonic.time
        );
        cpu.push((threads, ring, tsc));
    }
    // Where the time goes: the program's own code (user) or the kernel
    // (system: a recorder's page faults and file work).
    println!();
    println!("| threads | ring tool: user / system CPU (ns/event) | recording, TSC: user / system CPU (ns/event) |");
    println!("|---|---|---|");
    for (threads, ring, tsc) in cpu {
        println!(
            "| {threads} | {:.2} / {:.2} | {:.2} / {:.2} |",
            ring.user, ring.system, tsc.user, tsc.system
        );
    }
    if have_tool("valgrind") {
        let [null, ring, record] =
            [Mode::NullTool, Mode::Ring, Mode::Record].map(|m| instructions(&programs, m));
        println!(
            "\ninstructions per event, one thread (callgrind, the loop's own included): \
             do-nothing tool {null:.0}, ring tool {ring:.0}, recording {record:.0} ({:.2}x the ring)",
            record / ring
        );
    } else {
        println!("\ninstructions per event: not counted (no valgrind)");
    }
    // Each call timed (which adds two clock reads to each): the tail.
    println!();
    println!("| threads | recording, TSC: p50 / p99.99 / max (ns) | calls over 100 µs | no tool: p50 / p99.99 / max (ns) | calls over 100 µs |");
    println!("|---|---|---|---|---|");
    for threads in [1, 2, 4] {
        let (recorded, recorded_over) = tails(&programs, threads, events, Mode::Record);
        let (plain, plain_over) = tails(&programs, threads, events, Mode::NoTool);
        println!("| {threads} | {recorded} | {recorded_over} | {plain} | {plain_over} |");
    }
    short_threads(if quick {
        SHORT_THREADS.1
    } else {
        SHORT_THREADS.0
    });
}

/// Bytes a folder's files take on disk (their blocks), and how many files
/// it and the folders under it hold.
fn on_disk(dir: &Path) -> (u64, usize) {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(dir).map_or((0, 0), |entries| {
        entries
            .flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => on_disk(&e.path()),
                Ok(m) => (m.blocks() * 512, 1),
                Err(_) => (0, 0),
            })
            .fold((0, 0), |(b, f), (eb, ef)| (b + eb, f + ef))
    })
}

/// `threads` short-lived threads (3 events each: push, mark, pop), alone
/// and recorded: the seconds each run takes, the recording's disk use and
/// its files.
fn short_threads(threads: usize) {
    let program = compile_c("record_scenarios.c", Producer::NvtxrShared, &[]);
    let dir = work_dir().join(format!("bench-short-threads-{}", std::process::id()));
    let timed = |record: bool| {
        let _ = std::fs::remove_dir_all(&dir);
        let mut command = Command::new(&program);
        command
            .args(["short_threads", &threads.to_string()])
            .env_remove(nvtxr_harness::INJECTION_PATH_VAR);
        if record {
            command
                .env(nvtxr_harness::INJECTION_PATH_VAR, &artifacts().record_tool)
                .env("NVTXR_RECORD_DIR", &dir);
        }
        let started = std::time::Instant::now();
        assert!(command.status().unwrap().success());
        started.elapsed().as_secs_f64()
    };
    let alone = timed(false);
    let recording = timed(true);
    let (bytes, files) = on_disk(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    println!();
    println!("| short-lived threads | program alone (s) | recording (s) | recording on disk (bytes) | files | on disk per event (bytes) |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| {threads} | {alone:.2} | {recording:.2} | {bytes} | {files} | {:.0} |",
        bytes as f64 / (3 * threads) as f64
    );
}
