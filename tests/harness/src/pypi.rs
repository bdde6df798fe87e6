//! What the tests fetch from PyPI, each unpacked once under
//! `target/harness/`: NVIDIA's NVTX3 headers and `libnvtx3interop.so.1`,
//! NVIDIA's Python `nvtx`, Perfetto's protos; and the tests' own Python.

use super::{check, work_dir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// NVIDIA's wheel with the NVTX3 headers and `libnvtx3interop.so.1`.
pub const NVIDIA_NVTX_WHEEL: &str = "nvidia-nvtx==13.5.25";

/// NVIDIA's reference material, from the `nvidia-nvtx` wheel.
pub struct Nvidia {
    /// Folder holding `nvtx3/`.
    pub include_dir: PathBuf,
    /// Folder holding `libnvtx3interop.so.1`.
    pub lib_dir: PathBuf,
}

/// The Python interpreter the tests use: `PYTHON`, else a virtual
/// environment of the tests' own (`target/harness/venv`, made once with
/// `python3 -m venv`), so nothing the tests install reaches the user's Python.
pub fn python() -> String {
    if let Ok(python) = std::env::var("PYTHON") {
        return python;
    }
    static VENV: OnceLock<PathBuf> = OnceLock::new();
    let venv = VENV.get_or_init(|| {
        filled_once("venv", "bin/python", |tmp| {
            check(
                "python3 -m venv",
                Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(tmp)
                    .output()
                    .unwrap(),
            );
        })
    });
    venv.join("bin/python").display().to_string()
}

/// `target/harness/<name>`, filled by `fill` unless `complete` already exists
/// in it. Processes (test binaries run side by side) take turns under a lock
/// file, so none fills, replaces or reads a folder another is filling; `fill`
/// works in a private folder that is renamed into place once complete.
pub(crate) fn filled_once(name: &str, complete: &str, fill: impl FnOnce(&Path)) -> PathBuf {
    let dir = work_dir().join(name);
    let lock = std::fs::File::create(work_dir().join(format!("{name}.lock"))).unwrap();
    lock.lock().unwrap();
    if !dir.join(complete).exists() {
        let tmp = work_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        fill(&tmp);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::rename(&tmp, &dir).unwrap();
    }
    dir
}

/// Downloads PyPI `wheels` (without their dependencies) into `dir` and
/// unpacks each there.
pub(crate) fn unpacked_wheels(dir: &Path, wheels: &[&str]) {
    check(
        &format!("pip download {}", wheels.join(" ")),
        Command::new(python())
            .args(["-m", "pip", "download", "-q", "--no-deps", "-d"])
            .arg(dir)
            .args(wheels)
            .output()
            .unwrap(),
    );
    for wheel in std::fs::read_dir(dir).unwrap() {
        let wheel = wheel.unwrap().path();
        if wheel.extension().is_some_and(|e| e == "whl") {
            check(
                &format!("unpack {}", wheel.display()),
                Command::new(python())
                    .args(["-m", "zipfile", "-e"])
                    .arg(&wheel)
                    .arg(dir)
                    .output()
                    .unwrap(),
            );
        }
    }
}

/// Downloads and unpacks NVIDIA's wheel once (kept under `target/harness/nvidia`).
pub fn nvidia() -> &'static Nvidia {
    static ONCE: OnceLock<Nvidia> = OnceLock::new();
    ONCE.get_or_init(|| {
        let dir = filled_once("nvidia", "nvidia/cu13/lib/libnvtx3interop.so.1", |tmp| {
            unpacked_wheels(tmp, &[NVIDIA_NVTX_WHEEL])
        });
        let base = dir.join("nvidia/cu13");
        Nvidia {
            include_dir: base.join("include"),
            lib_dir: base.join("lib"),
        }
    })
}

/// NVIDIA's Python `nvtx` package, installed once under `target/harness/python`;
/// returns the folder to put on `PYTHONPATH`.
pub fn python_nvtx() -> &'static Path {
    static ONCE: OnceLock<PathBuf> = OnceLock::new();
    ONCE.get_or_init(|| pip_target("python", "nvtx", &[PYTHON_NVTX], false))
}

/// Perfetto's trace protos for Python (`perfetto_trace_pb2`, with
/// `protobuf`), installed once under `target/harness/perfetto`; returns the
/// folder to put on `PYTHONPATH`. The tests parse every `.pftrace` with them.
pub fn perfetto_protos() -> &'static Path {
    static ONCE: OnceLock<PathBuf> = OnceLock::new();
    ONCE.get_or_init(|| pip_target("perfetto", "perfetto", &PERFETTO_PROTOS, true))
}

/// PyPI `packages` installed once under `target/harness/<folder>` (done when
/// `complete` is there), with or without their dependencies.
pub(crate) fn pip_target(folder: &str, complete: &str, packages: &[&str], deps: bool) -> PathBuf {
    filled_once(folder, complete, |tmp| {
        let mut pip = Command::new(python());
        pip.args(["-m", "pip", "install", "-q"]);
        if !deps {
            pip.arg("--no-deps");
        }
        check(
            &format!("pip install {}", packages.join(" ")),
            pip.arg("--target")
                .arg(tmp)
                .args(packages)
                .output()
                .unwrap(),
        );
    })
}

/// The PyPI packages holding Perfetto's trace protos.
pub const PERFETTO_PROTOS: [&str; 2] = ["perfetto==0.59.1", "protobuf==7.36.2"];

/// NVIDIA's Python binding, a reference producer for `nvtxr record`.
pub const PYTHON_NVTX: &str = "nvtx==0.2.17";
