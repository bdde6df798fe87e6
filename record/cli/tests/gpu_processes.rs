//! `nvtxr record`'s GPU activity across processes, with the test CUPTI
//! and program of `gpu.rs`: children forked before and after CUDA's
//! initialization, a process that execs itself (`EXEC_AGAIN=1`), two
//! ranks recorded apart and merged; each process's kernels its own, under
//! its ranges, on the GPUs its devices are.

mod common;

use common::cuda::*;
use common::{load, text};
use std::path::PathBuf;

#[test]
fn forked_children_record_their_own_gpu_work_and_never_the_parents() {
    // One child forked before the parent's cuInit initializes CUDA itself;
    // one forked from the CUDA process exits through exit() while the
    // parent's records wait in CUPTI's buffers.
    let (dir, out) = run("fork", &[], &[("FORK_CHILDREN", "1")]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let trace = load(&dir.join("trace.json"));
    // Each kernel once: the second child wrote none of its parent's.
    let mut expected = scripted_kernels();
    expected.push(kernel("child()", "child work", 0, 7));
    expected.sort();
    assert_eq!(kernels(&trace), expected);
    let events = trace["traceEvents"].as_array().unwrap();
    let pid_of = |name: &str| -> Vec<u64> {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["name"] == name)
            .map(|e| e["pid"].as_u64().unwrap())
            .collect()
    };
    let (parent, first, second) = (pid_of("forward"), pid_of("child work"), pid_of("forked"));
    assert_eq!((parent.len(), first.len(), second.len()), (1, 1, 1));
    assert!(
        parent[0] != first[0] && parent[0] != second[0] && first[0] != second[0],
        "three processes: {parent:?} {first:?} {second:?}"
    );
    // The child's kernel is on a GPU process of its own.
    let gpu_pid = |kernel: &str| {
        events
            .iter()
            .find(|e| e["cat"] == "kernel" && e["name"] == kernel)
            .map(|e| e["pid"].as_u64().unwrap())
            .unwrap()
    };
    assert_ne!(gpu_pid("child()"), gpu_pid("relu(float*, int)"));
    // The child's device 0 is its parent's GPU 1 (as under
    // CUDA_VISIBLE_DEVICES=1): one row per GPU, and the child's device
    // mapped to the parent's second, as Nsight's tables say it.
    let db = rusqlite::Connection::open(dir.join("trace.sqlite")).unwrap();
    let gpus: i64 = db
        .query_row("SELECT count(*) FROM TARGET_INFO_GPU", [], |r| r.get(0))
        .unwrap();
    assert_eq!(gpus, 2);
    let uuid = |n: u8| format!("9d5b0000-0000-0000-0000-00000000000{n}");
    let mut devices = cuda_devices(&db);
    // The parent's pid is the lower (forked after it).
    devices.sort_by_key(|d| (d.4, d.1));
    assert_eq!(
        devices,
        [
            (0, 0, uuid(0), 132, 0),
            (1, 1, uuid(1), 132, 0),
            (1, 0, uuid(1), 132, 1)
        ]
    );
    let child_kernel_gpu: String = db
        .query_row(
            "SELECT g.name FROM CUPTI_ACTIVITY_KIND_KERNEL k
               JOIN StringIds s ON s.id = k.shortName
               JOIN TARGET_INFO_CUDA_DEVICE c
                 ON c.pid = (k.globalPid >> 24) & 16777215 AND c.cudaId = k.deviceId
               JOIN TARGET_INFO_GPU g ON g.id = c.gpuId
              WHERE s.value = 'child'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(child_kernel_gpu, "NVIDIA H100 80GB HBM3");
}

#[test]
fn a_process_that_execs_keeps_each_images_launches_with_their_own_kernels() {
    // The new image's correlation ids start over at 1: its launch must
    // meet its own kernel, not the first image's of the same id.
    let (dir, out) = run("exec", &[], &[("EXEC_AGAIN", "1")]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    // The first image ran no exit handler.
    assert_eq!(said.matches(UNEXITED).count(), 1, "{said}");
    let mut expected = scripted_kernels();
    expected.push(kernel("after_exec()", "after exec", 0, 7));
    expected.sort();
    assert_eq!(kernels(&load(&dir.join("trace.json"))), expected);
    let db = rusqlite::Connection::open(dir.join("trace.sqlite")).unwrap();
    let unmatched: i64 = db
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE (SELECT count(*) FROM \
             CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId) != 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unmatched, 0, "each kernel joins exactly one launch");
}

#[test]
fn ranks_recorded_apart_merge_with_each_ranks_gpus() {
    // Two runs, as two ranks of a job each under its own `nvtxr record`,
    // merged by `nvtxr report`.
    let keep = common::scratch_in("gpu", "ranks-kept");
    let ranks: Vec<PathBuf> = (0..2).map(|r| keep.join(format!("rec.{r}"))).collect();
    let mut each_rank = Vec::new();
    for (r, rec) in ranks.iter().enumerate() {
        let (dir, out) = run(&format!("rank{r}"), &["--keep", rec.to_str().unwrap()], &[]);
        assert!(out.status.success(), "{}", text(&out));
        each_rank.extend(kernels(&load(&dir.join("trace.json"))));
    }
    each_rank.sort();
    let json = keep.join("merged.json");
    let mut args = vec!["report", "-q", "-o", json.to_str().unwrap()];
    args.extend(ranks.iter().map(|r| r.to_str().unwrap()));
    let out = common::nvtxr(&args, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let trace = load(&json);
    assert_eq!(each_rank.len(), 12);
    assert_eq!(
        kernels(&trace),
        each_rank,
        "every rank's kernels, each under its range"
    );
    // Two devices per rank: four GPU processes, each kernel's launch on its
    // own rank's process.
    let events = trace["traceEvents"].as_array().unwrap();
    let gpu_pids: std::collections::BTreeSet<u64> = events
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["ph"] == "X")
        .map(|e| e["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(gpu_pids.len(), 4, "{gpu_pids:?}");
    let launch_pids: std::collections::BTreeSet<u64> = events
        .iter()
        .filter(|e| e["cat"] == "cuda_api")
        .map(|e| e["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(launch_pids.len(), 2, "{launch_pids:?}");
    // Aligned on a range (a replay that reads no GPU activity), with the
    // summary beside the trace (two replays, each reading the second rank's
    // activity when it comes to it): the same kernels, and each rank's GPU
    // work projected onto the ranges.
    let aligned = keep.join("aligned.json");
    let mut args = vec![
        "report",
        "--align-on",
        "step",
        "-o",
        aligned.to_str().unwrap(),
    ];
    args.extend(ranks.iter().map(|r| r.to_str().unwrap()));
    let out = common::nvtxr(&args, &[]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert_eq!(kernels(&load(&aligned)), each_rank);
    // Each rank's :step holds 3 kernels, 6 activities.
    assert_eq!(projection_row(&said, ":step")[5..], ["6", "12"]);
    std::fs::remove_dir_all(keep).unwrap();
}
