//! `nvtxr record` with GPU activity, without a GPU: a test CUPTI written
//! from NVIDIA's CUPTI 13 headers (`tests/gpu/fake_cupti.c`, loaded through
//! `NVTXR_CUPTI`) and a program that loads the tool as the CUDA driver does
//! (`tests/gpu/cuda_app.c`) script launches and activity buffers: five
//! kernels on two devices and three streams, copies both ways, a set, a
//! synchronization, buffers out of order, 2 dropped records, a kernel
//! launched from another thread, one from a thread that makes no NVTX call,
//! a call that is not traced, a buffer flushed at exit, a process killed
//! with records waiting in CUPTI (`LINGER_MS`, `KILL`). (Each output's GPU
//! rows and flows, a CUDA graph's launch among them: `gpu_outputs.rs`;
//! Nsight's SQL over the SQLite tables: `gpu_nsight.rs`; forked children,
//! an `exec`, ranks merged: `gpu_processes.rs`; when GPU recording cannot
//! work, or a CUPTI cannot record launches alone: `gpu_cannot.rs`.)

mod common;

use common::cuda::*;
use common::{load, record_command, scratch_in, text};
use std::path::Path;

#[test]
fn every_kernel_copy_and_sync_is_under_the_range_that_launched_it() {
    let (dir, out) = run("all", &["--gpu-syncs"], &[]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains(UNEXITED), "{said}");
    assert!(
        said.contains("CUPTI dropped 2 GPU activity records"),
        "{said}"
    );
    let trace = load(&dir.join("trace.json"));
    assert_eq!(kernels(&trace), scripted_kernels());
    let events = trace["traceEvents"].as_array().unwrap();
    // Each kernel starts after its launch, inside the range's thread; every
    // activity has its flow from its launch.
    let starts: Vec<_> = events.iter().filter(|e| e["ph"] == "s").collect();
    let ends: Vec<_> = events.iter().filter(|e| e["ph"] == "f").collect();
    assert_eq!((starts.len(), ends.len()), (10, 10));
    for end in &ends {
        let start = starts
            .iter()
            .find(|s| s["id"] == end["id"])
            .expect("its launch");
        assert!(start["ts"].as_f64() <= end["ts"].as_f64(), "{start} {end}");
    }
    let worker_launch = events
        .iter()
        .find(|e| e["cat"] == "cuda_api" && e["args"]["correlation"] == 6)
        .unwrap();
    let main_launch = events
        .iter()
        .find(|e| e["cat"] == "cuda_api" && e["args"]["correlation"] == 1)
        .unwrap();
    assert_ne!(
        worker_launch["tid"], main_launch["tid"],
        "launched on its own thread"
    );
    // The thread that made no NVTX call: its launch on a thread of its own,
    // under no range.
    let fill = events
        .iter()
        .find(|e| e["cat"] == "kernel" && e["name"] == "fill(float*)")
        .unwrap();
    let silent = &fill["args"]["launched by"];
    assert!(silent["range"].is_null(), "{fill}");
    assert!(
        silent["thread"] != worker_launch["tid"] && silent["thread"] != main_launch["tid"],
        "{fill}"
    );
    // Named as the OS names it (the tool read it when the thread launched).
    let named_silent = events.iter().any(|e| {
        e["ph"] == "M"
            && e["name"] == "thread_name"
            && e["tid"] == silent["thread"]
            && e["args"]["name"] == "silent"
    });
    assert!(named_silent, "the silent thread's name");
    let copies: Vec<_> = events
        .iter()
        .filter(|e| e["cat"] == "memcpy" && e["ph"] == "X")
        .map(|e| {
            (
                e["args"]["kind"].as_str().unwrap(),
                e["args"]["launched by"]["range"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        copies,
        [
            ("Host-to-Device", "forward"),
            ("Device-to-Host", "backward")
        ]
    );
    // The synchronization's innermost range is "epoch": "handoff", started
    // later on that thread, was ended by the worker before it.
    let sync = events
        .iter()
        .find(|e| e["cat"] == "sync" && e["ph"] == "X")
        .expect("the synchronization");
    assert_eq!(sync["args"]["launched by"]["range"], "epoch", "{sync}");
    // A process per GPU, named with the name CUPTI gave it.
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .filter(|name| name.starts_with("GPU "))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("GPU 0: NVIDIA H200 ("), "{names:?}");
    assert!(
        names[1].starts_with("GPU 1: NVIDIA H100 80GB HBM3 ("),
        "{names:?}"
    );

    // Nsight's tables: SQL written for them joins kernels to their launches
    // and the launches to the NVTX ranges around them.
    let db = rusqlite::Connection::open(dir.join("trace.sqlite")).unwrap();
    let mut q = db
        .prepare(
            "SELECT s.value, COALESCE((SELECT t.value FROM NVTX_EVENTS n JOIN StringIds t ON t.id = n.textId
                     WHERE n.globalTid = r.globalTid AND n.start <= r.start AND n.end >= r.end
                     ORDER BY n.start DESC LIMIT 1), '')
             FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId
             ORDER BY k.start",
        )
        .unwrap();
    let rows: Vec<(String, String)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let rows: Vec<(&str, &str)> = rows.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    assert_eq!(
        rows,
        [
            ("gemm", "forward"),
            ("gemm", "backward"),
            ("relu", "backward"),
            ("reduce", "worker"),
            ("fill", ""),
            ("gemm", "last")
        ]
    );
    let count = |table: &str| -> i64 {
        db.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count("CUPTI_ACTIVITY_KIND_MEMCPY"), 2);
    assert_eq!(count("CUPTI_ACTIVITY_KIND_MEMSET"), 1);
    assert_eq!(count("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"), 1);
    // The traced calls (not cudaMalloc): 6 launches, 2 copies, a set, a sync.
    assert_eq!(count("CUPTI_ACTIVITY_KIND_RUNTIME"), 10);
    let gpus: Vec<(i64, String, i64, i64, i64, i64)> = db
        .prepare("SELECT id, name, totalMemory, smCount, computeMajor, computeMinor FROM TARGET_INFO_GPU ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        gpus,
        [
            (0, "NVIDIA H200".to_string(), 150 << 30, 132, 9, 0),
            (1, "NVIDIA H100 80GB HBM3".to_string(), 80 << 30, 132, 9, 0)
        ]
    );
    // The rest of CUPTI's description, as Nsight's columns have it (the
    // bus location NULL: no NVIDIA driver here to read it from).
    type Described = (String, Option<String>, Option<String>, i64, i64, i64, i64);
    let described: Described = db
        .query_row(
            "SELECT uuid, busLocation, chipName, memoryBandwidth, constantMemory,
                    maxBlockDimZ * 1000 + maxIPC * 100 + asyncEngines, maxGridDimX
               FROM TARGET_INFO_GPU WHERE id = 1",
            [],
            |r| r.try_into(),
        )
        .unwrap();
    assert_eq!(
        described,
        (
            "9d5b0000-0000-0000-0000-000000000001".to_string(),
            None,
            None,
            4_800_000_000_000,
            65536,
            64_402,
            (1 << 31) - 1
        )
    );
    // Each CUDA device of the process is the GPU of its number.
    let uuid = |n: u8| format!("9d5b0000-0000-0000-0000-00000000000{n}");
    assert_eq!(
        cuda_devices(&db),
        [(0, 0, uuid(0), 132, 0), (1, 1, uuid(1), 132, 0)]
    );

    // The summary's GPU tables.
    for line in [
        "GPU kernel summary",
        "NVTX ranges projected onto the GPU",
        "GPU kernels by the NVTX range that launched them",
    ] {
        assert!(said.contains(line), "{said}");
    }
    let row = |range: &str| projection_row(&said, range);
    // :step holds forward's and backward's work: 3 kernels, 6 activities.
    assert_eq!(row(":step")[5..], ["3", "6"]);
    assert_eq!(row(":backward")[5..], ["2", "4"]);
    assert_eq!(row(":worker")[5..], ["1", "1"]);
    // The start/end range on the main thread holds that thread's launches
    // (the worker's is on another thread): 4 kernels, 7 activities. The one
    // ended on another thread than the one that started it is not projected.
    assert_eq!(row(":epoch")[5..], ["4", "7"]);
    let projected = said
        .split("NVTX ranges projected onto the GPU")
        .nth(1)
        .and_then(|t| t.split("\n\n").nth(1))
        .unwrap();
    assert!(!projected.contains(":handoff"), "{projected}");
    assert!(projected.contains(":epoch"), "{projected}");
    // Kernels by range: the innermost, of either kind.
    let by_range = said
        .split("GPU kernels by the NVTX range that launched them")
        .nth(1)
        .unwrap();
    let ranges: Vec<&str> = (by_range.lines().skip(4))
        .map_while(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        ranges,
        [":backward", ":backward", ":forward", ":last", ":worker"]
    );
}

#[test]
fn a_capture_range_keeps_the_launches_inside_it_and_their_work() {
    let (dir, rec, out) = run_kept("capture", &[], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let json = dir.join("step.json");
    let args = [
        "report",
        "-q",
        "--capture-range",
        "step",
        "-o",
        json.to_str().unwrap(),
    ];
    let out = common::nvtxr(&[&args[..], &[rec.to_str().unwrap()]].concat(), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let trace = load(&json);
    // The kernels launched inside `step` (not the worker's, the silent
    // thread's or the tail's), each with its launch.
    let gemm = "gemm(float const*, float const*, float*, int)";
    assert_eq!(
        kernels(&trace),
        [
            kernel(gemm, "backward", 1, 13),
            kernel(gemm, "forward", 0, 7),
            kernel("relu(float*, int)", "backward", 1, 13),
        ]
    );
    let events = trace["traceEvents"].as_array().unwrap();
    let step = events.iter().find(|e| e["name"] == "step").unwrap();
    let (from, to) = (
        step["ts"].as_f64().unwrap(),
        step["ts"].as_f64().unwrap() + step["dur"].as_f64().unwrap(),
    );
    let launches: Vec<f64> = (events.iter())
        .filter(|e| e["cat"] == "cuda_api")
        .map(|e| e["ts"].as_f64().unwrap())
        .collect();
    // The launch, the copy and the launches, copy and set of `backward`.
    assert_eq!(launches.len(), 6, "{launches:?}");
    assert!(
        launches.iter().all(|t| (from..=to).contains(t)),
        "{launches:?} in {from}..{to}"
    );
    // Every flow left in has both its ends.
    let ids = |ph: &str| -> std::collections::BTreeSet<String> {
        (events.iter())
            .filter(|e| e["ph"] == ph)
            .map(|e| e["id"].to_string())
            .collect()
    };
    assert_eq!(ids("s"), ids("f"));
    assert_eq!(ids("s").len(), 6);
    std::fs::remove_dir_all(&rec).unwrap();
}

/// What the rows of the NVTX range around each synchronizing call (by SQL
/// over Nsight's tables) and the count of synchronization records are.
fn syncs(dir: &Path) -> (Vec<(String, String)>, i64) {
    let db = rusqlite::Connection::open(dir.join("trace.sqlite")).unwrap();
    let calls = db
        .prepare(
            "SELECT s.value, (SELECT t.value FROM NVTX_EVENTS n JOIN StringIds t ON t.id = n.textId
                     WHERE n.globalTid = r.globalTid AND n.start <= r.start AND n.end >= r.end
                     ORDER BY n.start DESC LIMIT 1)
             FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
             WHERE s.value LIKE '%Synchronize%'",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let records = db
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
            [],
            |r| r.get(0),
        )
        .unwrap();
    (calls, records)
}

#[test]
fn synchronizing_calls_are_recorded_and_cuptis_sync_records_only_when_asked() {
    let sync_call = vec![("cudaStreamSynchronize".to_string(), "epoch".to_string())];
    let (dir, out) = run("nosync", &[], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(kernels(&load(&dir.join("trace.json"))), scripted_kernels());
    assert_eq!(syncs(&dir), (sync_call.clone(), 0));
    let (dir, out) = run("syncs", &["--gpu-syncs"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(syncs(&dir), (sync_call, 1));
}

/// A program that loaded libcupti itself (as PyTorch does, for its
/// profiler) has its copy used, not one found elsewhere: one CUPTI per
/// process.
#[test]
fn a_libcupti_the_program_loaded_is_the_one_used() {
    let (cupti, app) = built();
    let dir = scratch_in("gpu", "loaded-cupti");
    // The test CUPTI under libcupti's name, in a folder nothing searches,
    // loaded by the program; other copies, which load and have every entry
    // point but drive no launch, where the toolkit's would be and beside
    // it under a newer version's name (found first in its folder).
    let own = dir.join("own/libcupti.so.13");
    let toolkit = dir.join("toolkit");
    let others = [
        dir.join("own/libcupti.so.13.9"),
        toolkit.join("lib64/libcupti.so.13"),
    ];
    for copy in [&own, &others[0], &others[1]] {
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(cupti, copy).unwrap();
    }
    let out = record_command(
        &dir,
        &["--gpu-flush-interval", "0"],
        &[app.to_str().unwrap()],
    )
    .env_remove("NVTXR_CUPTI")
    .env("FAKE_CUPTI", &own)
    .env("CUDA_HOME", &toolkit)
    .output()
    .unwrap();
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("GPU activity not recorded"), "{said}");
    assert_eq!(kernels(&load(&dir.join("trace.json"))), scripted_kernels());
}

#[test]
fn a_kernel_name_whose_memory_is_reused_for_another_is_read_anew() {
    let (dir, out) = run("reused-name", &[], &[("NAME_REUSED", "1")]);
    assert!(out.status.success(), "{}", text(&out));
    let mut expected = scripted_kernels();
    expected.push(kernel("first()", "reused", 0, 7));
    expected.push(kernel("second()", "reused", 0, 7));
    expected.sort();
    assert_eq!(kernels(&load(&dir.join("trace.json"))), expected);
}

#[test]
fn a_process_killed_keeps_what_the_flushing_thread_handed_over() {
    // SIGKILL runs no exit handler: the last buffer and the launches wait
    // in CUPTI's buffers until the tool's thread asks for them.
    let kill = [("LINGER_MS", "1000"), ("KILL", "1")];
    let (dir, out) = run("killed", &["--gpu-flush-interval", "200"], &kill);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(137), "{said}");
    assert_eq!(kernels(&load(&dir.join("trace.json"))), scripted_kernels());
    // Said, as it cannot be known what CUPTI still held.
    assert_eq!(said.matches(UNEXITED).count(), 1, "{said}");
    // With no flushing thread, the buffers the script completed are all
    // there is: the last kernel's buffer is lost.
    let (dir, out) = run("killed-unflushed", &["--gpu-flush-interval", "0"], &kill);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(137), "{said}");
    assert_eq!(said.matches(UNEXITED).count(), 1, "{said}");
    let mut expected = scripted_kernels();
    expected.retain(|k| k.1 != "last");
    assert_eq!(kernels(&load(&dir.join("trace.json"))), expected);
}

#[test]
fn flushes_racing_the_programs_own_buffers_lose_and_double_nothing() {
    // The benchmark's loop hands over a buffer a step while the flushing
    // thread asks for one every millisecond: every record once.
    let include = format!("-I{}", nvtxr_harness::cupti_include().display());
    let program = nvtxr_harness::compile_c(
        "gpu_loop.c",
        nvtxr_harness::Producer::NvidiaHeader,
        &[&include, "-ldl"],
    );
    let cupti = nvtxr_harness::fake_cupti().display().to_string();
    let dir = common::scratch_in("gpu", "racing-flushes");
    let db = dir.join("t.sqlite");
    let args = [
        "--sqlite",
        db.to_str().unwrap(),
        "--gpu-flush-interval",
        "1",
    ];
    let env = [
        ("NVTXR_CUPTI", cupti.as_str()),
        ("FAKE_CUPTI", cupti.as_str()),
    ];
    let out = common::record(&dir, &args, &[program.to_str().unwrap(), "2000"], &env);
    assert!(out.status.success(), "{}", text(&out));
    let db = rusqlite::Connection::open(&db).unwrap();
    let count = |table: &str| -> i64 {
        let q = format!("SELECT count(*), count(DISTINCT correlationId) FROM {table}");
        let (all, distinct): (i64, i64) = db
            .query_row(&q, [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(all, distinct, "{table}: a record written twice");
        all
    };
    // Per step 36 kernels, a copy and 38 traced calls (gpu_loop.c).
    assert_eq!(count("CUPTI_ACTIVITY_KIND_KERNEL"), 2000 * 36);
    assert_eq!(count("CUPTI_ACTIVITY_KIND_MEMCPY"), 2000);
    assert_eq!(count("CUPTI_ACTIVITY_KIND_RUNTIME"), 2000 * 38);
}

#[test]
fn the_tools_threads_leave_every_signal_to_the_programs_threads() {
    // A signal sent to the process goes to a thread that does not block
    // it: never to the chunk helper or the GPU flusher.
    let (_, out) = run(
        "threads",
        &["--gpu-flush-interval", "1000"],
        &[("SHOW_TOOL_THREADS", "1")],
    );
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut names = Vec::new();
    for line in shown.lines().filter(|l| l.starts_with("nvtxr-")) {
        let (name, mask) = line.split_once(' ').unwrap();
        let mask = u64::from_str_radix(mask.trim(), 16).unwrap();
        for signal in [
            libc::SIGHUP,
            libc::SIGINT,
            libc::SIGUSR1,
            libc::SIGALRM,
            libc::SIGTERM,
            libc::SIGCHLD,
            libc::SIGPROF,
        ] {
            assert_ne!(
                mask & 1 << (signal - 1),
                0,
                "{name} takes signal {signal}: {shown}"
            );
        }
        names.push(name.to_string());
    }
    names.sort();
    assert_eq!(names, ["nvtxr-gpu", "nvtxr-record"], "{shown}");
}
