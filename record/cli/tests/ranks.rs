//! Many ranks, one timeline: `nvtxr record --keep` per rank under a launcher
//! (Open MPI's `mpirun`, a torchrun-style launch), `nvtxr report` over the
//! recordings (one track per rank, labelled), the per-rank view, and the
//! alignment of recordings whose hosts' clocks disagree.

mod common;

use common::text;
use nvtxr_harness::{artifacts, compile_c, have_tool, python_nvtx, Producer};
use nvtxr_record_format::{
    encode, Chunk, Kind, ProcessHeader, Stamp, CHUNK_COMMITTED, CHUNK_HEADER,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The tests here run one at a time: each starts as many busy processes as
/// this machine has cores, and timing across ranks is what they check.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn scratch(name: &str) -> PathBuf {
    common::scratch_in("ranks", name)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `nvtxr report DIRS... -o OUT [extra]`.
fn report(dirs: &[PathBuf], out: &Path, extra: &[&str]) -> Output {
    let o = Command::new(&artifacts().nvtxr)
        .arg("report")
        .args(dirs)
        .arg("-o")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    o
}

/// (process label, name, start us, end us) of every complete range; marks have end == start.
fn slices(trace: &Path) -> Vec<(String, String, f64, f64)> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let label = |pid: &Value| {
        events
            .iter()
            .find(|m| m["name"] == "process_name" && &m["pid"] == pid)
            .map(|m| m["args"]["name"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    events
        .iter()
        .filter(|e| e["ph"] == "X" || e["ph"] == "i")
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            let dur = e["dur"].as_f64().unwrap_or(0.0);
            (
                label(&e["pid"]),
                e["name"].as_str().unwrap().to_string(),
                ts,
                ts + dur,
            )
        })
        .collect()
}

/// The times (us) each rank's ranges or marks named `name` end, by rank label.
fn ends(slices: &[(String, String, f64, f64)], name: &str) -> Vec<(String, Vec<f64>)> {
    let mut by: Vec<(String, Vec<f64>)> = Vec::new();
    for (label, _, _, end) in slices.iter().filter(|s| s.1 == name) {
        match by.iter_mut().find(|(l, _)| l == label) {
            Some((_, v)) => v.push(*end),
            None => by.push((label.clone(), vec![*end])),
        }
    }
    for (_, v) in &mut by {
        v.sort_by(f64::total_cmp);
    }
    by.sort_by(|a, b| a.0.cmp(&b.0));
    by
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

/// Runs `rank.py` as ranks 0..n under `nvtxr record --keep`, torchrun's way
/// (plain processes with RANK and WORLD_SIZE); returns the recordings.
fn torchrun_style(dir: &Path, n: usize, script: &str) -> Vec<PathBuf> {
    let python = nvtxr_harness::python();
    let path = dir.join("rank.py");
    std::fs::write(&path, script).unwrap();
    // A common start, so that the ranks' time-based barriers line up.
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
        + 3_000_000_000;
    let runs: Vec<_> = (0..n)
        .map(|rank| {
            Command::new(&artifacts().nvtxr)
                .args(["record", "-q", "--keep"])
                .arg(dir.join("rec.%q{RANK}"))
                .arg("-o")
                .arg(dir.join("run.%q{RANK}.json"))
                .arg("--")
                .arg(&python)
                .arg(&path)
                .env_remove(nvtxr_harness::INJECTION_PATH_VAR)
                .env("PYTHONPATH", python_nvtx())
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", n.to_string())
                .env("START_NS", start.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut run in runs {
        assert!(run.wait().unwrap().success());
    }
    (0..n).map(|r| dir.join(format!("rec.{r}"))).collect()
}

/// Each rank marks "barrier" at the same wall-clock instants (a sleep, then
/// a busy wait for the last 300 us), 10 ms apart, from a start 3 s after the
/// launch (Python, the `nvtx` import and the tool are loaded by then).
const BARRIER_SCRIPT: &str = "\
import nvtx, os, time
start = int(os.environ['START_NS'])
rank = int(os.environ['RANK'])
for step in range(8):
    with nvtx.annotate('compute'):
        time.sleep(0.001 * (rank + 1))
    target = start + step * 10_000_000
    time.sleep(max(0, target - time.time_ns() - 300_000) / 1e9)
    while time.time_ns() < target:
        pass
    nvtx.mark('barrier')
";

/// Moves a recording's wall-clock readings by `ns`, as if its host's clock
/// were off by that much (a test-only rewrite through the format crate):
/// all of them, or (`Some(ticks)`) those read from that timestamp on, as if
/// the clock stepped then.
fn shift_wall_clock(recording: &Path, ns: i64, from: Option<u64>) {
    for folder in std::fs::read_dir(recording).unwrap() {
        let folder = folder.unwrap().path();
        let header_path = folder.join("process");
        if from.is_some() {
            rewrite_chunks(&folder, ns, from);
            continue;
        }
        let mut header = ProcessHeader::decode(&std::fs::read(&header_path).unwrap()).unwrap();
        header.wall.wall = (header.wall.wall as i64 + ns) as u64;
        let mut bytes = std::fs::read(&header_path).unwrap();
        let fresh = header.encode();
        // Keep the live dropped counter and the rest as written.
        bytes[..].copy_from_slice(&fresh);
        std::fs::write(&header_path, bytes).unwrap();
        rewrite_chunks(&folder, ns, from);
    }
}

/// The chunk files of a process folder, their wall-clock readings from `from` on shifted by `ns`.
fn rewrite_chunks(folder: &Path, ns: i64, from: Option<u64>) {
    for file in std::fs::read_dir(folder).unwrap() {
        let file = file.unwrap().path();
        if file.extension().is_none_or(|e| e != "events") {
            continue;
        }
        let mut bytes = std::fs::read(&file).unwrap();
        // A chunk made ahead that no thread claimed is all zeros.
        let Ok(chunk) = Chunk::parse(&bytes) else {
            continue;
        };
        let mut out = vec![0u8; bytes.len() - CHUNK_HEADER];
        let (mut at, mut previous) = (0, 0);
        for mut r in chunk.records() {
            if r.kind == Kind::WallClock && from.is_none_or(|t| r.timestamp >= t) {
                r.value = (r.value as i64 + ns) as u64;
            }
            at += encode(&mut out[at..], Stamp::Relative(&mut previous), &r);
        }
        bytes[CHUNK_HEADER..].copy_from_slice(&out);
        bytes[CHUNK_COMMITTED..CHUNK_COMMITTED + 8].copy_from_slice(&(at as u64).to_le_bytes());
        std::fs::write(&file, bytes).unwrap();
    }
}

/// The timestamps of a recording's wall-clock readings, in order.
fn wall_readings(recording: &Path) -> Vec<u64> {
    let mut ticks = Vec::new();
    for folder in std::fs::read_dir(recording).unwrap() {
        for file in std::fs::read_dir(folder.unwrap().path()).unwrap() {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|e| e == "events") {
                let bytes = std::fs::read(&file).unwrap();
                let Ok(chunk) = Chunk::parse(&bytes) else {
                    continue; // made ahead, never claimed
                };
                ticks.extend(
                    chunk
                        .records()
                        .filter(|r| r.kind == Kind::WallClock)
                        .map(|r| r.timestamp),
                );
            }
        }
    }
    ticks.sort_unstable();
    ticks
}

/// The offsets (us) `--align-on` printed, for recordings 1.. in order.
fn offsets(o: &Output) -> Vec<f64> {
    text(o)
        .lines()
        .filter_map(|l| l.split(" shifted by ").nth(1))
        .map(|rest| rest.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

/// Per instance k, the spread (us) of the ranks' "barrier" marks; the median over instances.
fn barrier_spread(trace: &Path) -> f64 {
    let b = ends(&slices(trace), "barrier");
    let mut spreads: Vec<f64> = (0..b[0].1.len())
        .map(|k| {
            let t: Vec<f64> = b.iter().map(|(_, v)| v[k]).collect();
            t.iter().cloned().fold(f64::MIN, f64::max) - t.iter().cloned().fold(f64::MAX, f64::min)
        })
        .collect();
    spreads.sort_by(f64::total_cmp);
    spreads[spreads.len() / 2]
}

#[test]
fn recordings_from_hosts_with_disagreeing_clocks_are_aligned_on_a_barrier() {
    let _serial = serial();
    let dir = scratch("align");
    let dirs = torchrun_style(&dir, 3, BARRIER_SCRIPT);
    // As recorded (one host, one clock): where the barriers really were.
    let truth = dir.join("truth.json");
    let o = report(&dirs, &truth, &["-q", "--align-on", "barrier"]);
    let true_offsets = offsets(&o);
    let plain = dir.join("plain.json");
    report(&dirs, &plain, &["-q"]);
    assert_eq!(true_offsets.len(), 2, "{}", text(&o));
    // Rank 1's host clock runs 700 us ahead, rank 2's 400 us behind.
    shift_wall_clock(&dirs[1], 700_000, None);
    shift_wall_clock(&dirs[2], -400_000, None);
    let on_clocks = dir.join("clocks.json");
    report(&dirs, &on_clocks, &["-q"]);
    let before = barrier_spread(&on_clocks);
    // On the wall clock, each rank moves by exactly its host's error (against
    // rank 0: the trace's times count from its earliest event).
    let (was, is) = (
        ends(&slices(&plain), "barrier"),
        ends(&slices(&on_clocks), "barrier"),
    );
    let moved = |rank: usize| (is[rank].1[0] - is[0].1[0]) - (was[rank].1[0] - was[0].1[0]);
    assert!(
        (moved(1) - 700.0).abs() < 1.0 && (moved(2) + 400.0).abs() < 1.0,
        "moved by {} and {} us",
        moved(1),
        moved(2)
    );
    let aligned = dir.join("aligned.json");
    let o = report(&dirs, &aligned, &["-q", "--align-on", "barrier"]);
    let found = offsets(&o);
    let after = barrier_spread(&aligned);
    // The alignment undoes each clock error to the microsecond (the trace
    // writes us with 3 decimals): the barriers land where they really were.
    let undone = [
        found[0] - true_offsets[0] - -700.0,
        found[1] - true_offsets[1] - 400.0,
    ];
    assert!(
        undone.iter().all(|e| e.abs() < 1.0),
        "offsets {found:?}, as recorded {true_offsets:?}"
    );
    let real = barrier_spread(&truth);
    assert!(
        (after - real).abs() < 1.0,
        "aligned {after} us, as recorded {real} us"
    );
    // How far apart the ranks' barriers are is this machine's scheduling
    // (busy waits to one instant on 2 shared cores), not the alignment's
    // error: reported, not asserted.
    eprintln!(
        "alignment: barriers {before:.1} us apart (median) on the disagreeing clocks, {after:.1} us after --align-on \
         ({real:.1} us as recorded); estimated offsets {found:?} us, errors {undone:?} us"
    );
}

#[test]
fn a_wall_clock_step_during_a_run_never_changes_its_durations() {
    let _serial = serial();
    let dir = scratch("step");
    let dirs = torchrun_style(&dir, 2, BARRIER_SCRIPT);
    let durations = |trace: &Path| -> Vec<(String, i64)> {
        let mut d: Vec<(String, i64)> = slices(trace)
            .into_iter()
            .filter(|x| x.1 == "compute")
            .map(|x| (x.0, ((x.3 - x.2) * 1000.0).round() as i64))
            .collect();
        d.sort();
        d
    };
    let before = dir.join("before.json");
    report(&dirs, &before, &["-q"]);
    // Rank 0's clock steps back 100 ms (NTP) for its last quarter of readings.
    let readings = wall_readings(&dirs[0]);
    assert!(readings.len() >= 8, "{} readings", readings.len());
    let step_at = readings[readings.len() * 3 / 4];
    shift_wall_clock(&dirs[0], -100_000_000, Some(step_at));
    let after = dir.join("after.json");
    report(&dirs, &after, &["-q"]);
    let (before, after) = (durations(&before), durations(&after));
    assert_eq!(before.len(), 16);
    // Durations come from the monotonic clock alone (a fit through the first
    // and last pairs scaled them by 1 - 0.1 s / the run's length).
    assert_eq!(before, after);
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
    let checked = Command::new(nvtxr_harness::python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/perfetto_check.py"))
        .arg(&pftrace)
        .env("PYTHONPATH", nvtxr_harness::perfetto_protos())
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", text(&checked));
    let lines: Vec<Value> = String::from_utf8_lossy(&checked.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
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
