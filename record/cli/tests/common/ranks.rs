//! The rank tests' shared pieces: run one at a time, torchrun-style
//! recordings, `nvtxr report` over them, the merged trace's slices.

use super::text;
use nvtxr_harness::{artifacts, python_nvtx};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The tests here run one at a time: each starts as many busy processes as
/// this machine has cores, and timing across ranks is what they check.
pub static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn copy_tree(from: &Path, to: &Path) {
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
pub fn report(dirs: &[PathBuf], out: &Path, extra: &[&str]) -> Output {
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
pub fn slices(trace: &Path) -> Vec<(String, String, f64, f64)> {
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
pub fn ends(slices: &[(String, String, f64, f64)], name: &str) -> Vec<(String, Vec<f64>)> {
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

/// Runs `rank.py` as ranks 0..n under `nvtxr record --keep`, torchrun's way
/// (plain processes with RANK and WORLD_SIZE); returns the recordings.
pub fn torchrun_style(dir: &Path, n: usize, script: &str) -> Vec<PathBuf> {
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
pub const BARRIER_SCRIPT: &str = "\
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
