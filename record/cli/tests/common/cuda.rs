//! The GPU tests' shared pieces: the test CUPTI (`tests/gpu/fake_cupti.c`,
//! built from NVIDIA's CUPTI 13 headers) and the program that loads the
//! tool as the CUDA driver does (`tests/gpu/cuda_app.c`), recorded; the
//! kernels a JSON trace shows.

use super::{record, scratch_in};
use nvtxr_harness::{compile_c, cupti_include, fake_cupti, Producer};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub fn source(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/gpu")
        .join(name)
        .display()
        .to_string()
}

/// The test CUPTI library and the program, built once.
pub fn built() -> &'static (PathBuf, PathBuf) {
    static ONCE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    ONCE.get_or_init(|| {
        let include_flag = format!("-I{}", cupti_include().display());
        let app = compile_c(
            &source("cuda_app.c"),
            Producer::NvidiaHeader,
            &[&include_flag, "-ldl"],
        );
        (fake_cupti().to_path_buf(), app)
    })
}

pub fn run(
    name: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (super::Scratch, std::process::Output) {
    record_app(scratch_in("gpu", name), extra, env)
}

/// [`run`], the recording kept (`--keep`) in its folder's `rec`, which is
/// returned too.
pub fn run_kept(
    name: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (super::Scratch, PathBuf, std::process::Output) {
    let dir = scratch_in("gpu", name);
    let rec = dir.join("rec");
    let mut args = vec!["--keep", rec.to_str().unwrap()];
    args.extend(extra);
    let (dir, out) = record_app(dir, &args, env);
    (dir, rec, out)
}

/// `cuda_app` under `nvtxr record` with the test CUPTI, its outputs in `dir`.
fn record_app(
    dir: super::Scratch,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (super::Scratch, std::process::Output) {
    let (cupti, app) = built();
    let cupti = cupti.display().to_string();
    let mut env = env.to_vec();
    env.push(("NVTXR_CUPTI", &cupti));
    env.push(("FAKE_CUPTI", &cupti));
    let mut args = vec!["--sqlite"];
    let sqlite = dir.join("trace.sqlite").display().to_string();
    args.push(&sqlite);
    // Buffers handed over when the script says (and at exit), unless the
    // test says otherwise.
    if !extra.contains(&"--gpu-flush-interval") {
        args.extend(["--gpu-flush-interval", "0"]);
    }
    args.extend(extra);
    let out = record(&dir, &args, &[app.to_str().unwrap()], &env);
    (dir, out)
}

/// Every kernel: (name, launching range, device, stream), from the JSON
/// trace; each is named as people read it, its mangled symbol beside.
pub fn kernels(trace: &serde_json::Value) -> Vec<Kernel> {
    let mut out: Vec<_> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["ph"] == "X")
        .map(|e| {
            let a = &e["args"];
            assert!(a["mangled"].as_str().unwrap().starts_with("_Z"), "{e}");
            (
                e["name"].as_str().unwrap().to_string(),
                a["launched by"]["range"].as_str().unwrap_or("").to_string(),
                a["device"].as_u64().unwrap(),
                a["stream"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

pub type Kernel = (String, String, u64, u64);

pub fn kernel(name: &str, range: &str, device: u64, stream: u64) -> Kernel {
    (name.to_string(), range.to_string(), device, stream)
}

/// The kernels `cuda_app.c` launches, as [`kernels`] lists them.
pub fn scripted_kernels() -> Vec<Kernel> {
    let gemm = "gemm(float const*, float const*, float*, int)";
    vec![
        kernel("fill(float*)", "", 0, 7),
        kernel(gemm, "backward", 1, 13),
        kernel(gemm, "forward", 0, 7),
        kernel(gemm, "last", 0, 7),
        kernel("reduce(float const*, float*, int)", "worker", 1, 15),
        kernel("relu(float*, int)", "backward", 1, 13),
    ]
}

/// The cells of `range`'s row in the summary's projection onto the GPU
/// (range, instances, range time, projected time, GPU busy time, kernels,
/// GPU ops: seven cells).
pub fn projection_row(said: &str, range: &str) -> Vec<String> {
    said.lines()
        .find(|l| l.starts_with(range) && l.split_whitespace().count() == 7)
        .unwrap_or_else(|| panic!("{range} in {said}"))
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The warning of a process that ended without its exit handlers.
pub const UNEXITED: &str = "ended without running its exit handlers (killed, `_exit` or `exec`): the GPU activity CUPTI still held then is missing";

/// `TARGET_INFO_CUDA_DEVICE`: (gpuId, cudaId, uuid, numMultiprocessors,
/// the row's process as its index among the pids, in order).
pub fn cuda_devices(db: &rusqlite::Connection) -> Vec<(i64, i64, String, i64, usize)> {
    let rows: Vec<(i64, i64, i64, String, i64, i64)> = db
        .prepare(
            "SELECT gpuId, cudaId, pid, uuid, numMultiprocessors, globalPid
               FROM TARGET_INFO_CUDA_DEVICE ORDER BY pid, cudaId",
        )
        .unwrap()
        .query_map([], |r| r.try_into())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut pids: Vec<i64> = rows.iter().map(|r| r.2).collect();
    pids.dedup();
    rows.into_iter()
        .map(|(gpu, cuda, pid, uuid, sms, global)| {
            assert_eq!((global >> 24) & 0xFF_FFFF, pid);
            (
                gpu,
                cuda,
                uuid,
                sms,
                pids.iter().position(|p| *p == pid).unwrap(),
            )
        })
        .collect()
}
