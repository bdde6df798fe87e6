//! Many ranks, one timeline: `nvtxr record --keep` per rank under a launcher
//! (Open MPI's `mpirun`, a torchrun-style launch), `nvtxr report` over the
//! recordings (one track per rank, labelled), the per-rank view. (Hosts
//! whose clocks disagree: `clocks.rs`.)

mod common;

use common::ranks::*;
use common::text;
use nvtxr_harness::{artifacts, compile_c, have_tool, Producer};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str) -> common::Scratch {
    common::scratch_in("ranks", name)
}

#[test]
fn open_mpi_ranks_merge_into_one_labelled_timeline_with_a_per_rank_view() {
    if !have_tool("mpirun") || !have_tool("mpicc") {
        return;
    }
    let _serial = serial();
    let dir = scratch("mpi");
    let flags = |what: &str| -> Vec<String> {
        let o = Command::new("mpicc").arg(what).output().unwrap();
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let mut extra = flags("--showme:compile");
    extra.extend(flags("--showme:link"));
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let exe = compile_c("mpi_steps.c", Producer::NvtxrShared, &extra);
    let out = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-n", "4"])
        .arg(&artifacts().nvtxr)
        .args(["record", "-q", "--keep"])
        .arg(dir.join("rec.%q{OMPI_COMM_WORLD_RANK}"))
        .arg("-o")
        .arg(dir.join("run.%q{OMPI_COMM_WORLD_RANK}.json"))
        .arg("--")
        .arg(&exe)
        .env_remove(nvtxr_harness::INJECTION_PATH_VAR)
        .env("OMPI_MCA_btl", "self,vader")
        // 4 ranks on 2 cores: ranks waiting in the barrier yield the CPU
        // instead of spinning, so the others' work runs on time.
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let dirs: Vec<PathBuf> = (0..4).map(|r| dir.join(format!("rec.{r}"))).collect();
    let merged = dir.join("merged.json");
    let o = report(
        &dirs,
        &merged,
        &["--html", "--per-rank", "compute", "--time-unit", "us"],
    );
    let shown = text(&o);
    let s = slices(&merged);
    let host = nvtxr_record_format::host_name();
    for rank in 0..4 {
        let label = format!("rank {rank} ({host}:");
        for name in ["step", "compute", "barrier"] {
            let n = s
                .iter()
                .filter(|x| x.0.starts_with(&label) && x.1 == name)
                .count();
            assert_eq!(n, 5, "rank {rank} has every {name} range:\n{shown}");
        }
    }
    // One timeline: no rank leaves a barrier before the last one entered it
    // (what a barrier means), on the merged clock, to 50 us.
    let flipped: Vec<_> = s
        .iter()
        .map(|(l, n, b, _)| (l.clone(), n.clone(), 0.0, *b))
        .collect();
    let (entered, left) = (ends(&flipped, "barrier"), ends(&s, "barrier"));
    assert_eq!((entered.len(), left.len()), (4, 4));
    for k in 0..5 {
        let last_in = entered.iter().map(|(_, v)| v[k]).fold(f64::MIN, f64::max);
        let first_out = left.iter().map(|(_, v)| v[k]).fold(f64::MAX, f64::min);
        assert!(
            first_out + 50.0 >= last_in,
            "barrier {k}: a rank left at {first_out} us, before the last entered at {last_in} us"
        );
    }
    // The per-rank view: rank 3 computes longest (20 ms a step, rank 0 5 ms).
    assert!(
        shown.contains("Per-rank view of \"compute\" (5 instances)"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("slowest most often: rank 3 ({host}:")),
        "{shown}"
    );
    assert!(merged.with_extension("html").is_file());
}

#[test]
fn torchrun_style_recordings_merge_with_a_labelled_track_per_rank() {
    let _serial = serial();
    let dir = scratch("merge");
    let dirs = torchrun_style(&dir, 2, BARRIER_SCRIPT);
    let merged = dir.join("merged.json");
    let o = report(&dirs, &merged, &["--per-rank", "compute"]);
    let s = slices(&merged);
    let host = nvtxr_record_format::host_name();
    for rank in 0..2 {
        let label = format!("rank {rank} ({host}:");
        assert_eq!(
            s.iter()
                .filter(|x| x.0.starts_with(&label) && x.1 == "compute")
                .count(),
            8
        );
        assert_eq!(
            s.iter()
                .filter(|x| x.0.starts_with(&label) && x.1 == "barrier")
                .count(),
            8
        );
    }
    assert!(
        text(&o).contains("slowest most often: rank 1"),
        "{}",
        text(&o)
    );
    // The same merge as a Perfetto trace: valid for Perfetto's own protos,
    // a process per rank, sorted by rank, with every range.
    let pftrace = dir.join("merged.pftrace");
    report(&dirs, &pftrace, &["-q"]);
    let lines = common::traces::perfetto_events(&pftrace);
    let processes: Vec<(i64, String)> = lines
        .iter()
        .filter(|l| l.get("process").is_some())
        .map(|l| {
            (
                l["rank"].as_i64().unwrap(),
                l["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(processes.len(), 2, "{processes:?}");
    for (rank, name) in &processes {
        assert!(name.starts_with(&format!("rank {rank} ({host}:")), "{name}");
        let pid = lines
            .iter()
            .find(|l| l["name"] == name.as_str() && l.get("process").is_some())
            .unwrap()["process"]
            .as_u64()
            .unwrap();
        let computes = lines
            .iter()
            .filter(|l| l["kind"] == "slice" && l["name"] == "compute" && l["pid"] == pid)
            .count();
        assert_eq!(computes, 8, "{name}");
    }
    // Equal pids from two recordings (two hosts: here a copy) stay two
    // tracks, each pid within 32 bits (Perfetto's JSON importer reads pids
    // past 2^32 as 0, collapsing the ranks into one process); the rank both
    // claim is warned about.
    let copy = dir.join("rec.copy");
    copy_tree(&dirs[0], &copy);
    let twice = dir.join("twice.json");
    let o = report(&[dirs[0].clone(), copy], &twice, &["-q"]);
    assert!(
        text(&o).contains("warning: rank 0 is in 2 recordings"),
        "{}",
        text(&o)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&twice).unwrap()).unwrap();
    let pids: std::collections::BTreeSet<u64> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert!(pids.iter().all(|&p| p < 1 << 31), "{pids:?}");
    // The same recording given twice would double every event: refused.
    let o = Command::new(&artifacts().nvtxr)
        .arg("report")
        .args([&dirs[0], &dirs[0]])
        .arg("-o")
        .arg(dir.join("doubled.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("are the same recording"), "{}", text(&o));
    assert!(!dir.join("doubled.json").exists());
    // A recording directory that --keep refuses: not empty.
    let again = Command::new(&artifacts().nvtxr)
        .args(["record", "-q", "--keep"])
        .arg(&dirs[0])
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(
        !again.status.success() && text(&again).contains("not empty"),
        "{}",
        text(&again)
    );
}
