//! CUDA without a GPU: NVIDIA's CUPTI headers from PyPI, and the test CUPTI
//! library written from them (`record/cli/tests/gpu/fake_cupti.c`), which
//! scripts what a CUDA driver and GPU would hand nvtxr's recording tool.

use super::pypi::{filled_once, unpacked_wheels};
use super::{check, root, work_dir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// NVIDIA's CUPTI headers (with the `cuda.h` and `crt/` they include), from
/// PyPI's `nvidia-cuda-cupti`, `nvidia-cuda-runtime` and `nvidia-cuda-crt`,
/// unpacked once under `target/harness/cupti`; returns the include folder.
/// Code against them compiles with no CUDA installed.
pub fn cupti_include() -> &'static Path {
    static ONCE: OnceLock<PathBuf> = OnceLock::new();
    ONCE.get_or_init(|| {
        let dir = filled_once("cupti", "nvidia/cu13/include/cupti.h", |tmp| {
            unpacked_wheels(tmp, &CUPTI_WHEELS)
        });
        dir.join("nvidia/cu13/include")
    })
}

/// The PyPI packages of NVIDIA's CUPTI headers and the CUDA headers they include.
pub const CUPTI_WHEELS: [&str; 3] = [
    "nvidia-cuda-cupti==13.5.25",
    "nvidia-cuda-runtime==13.5.37",
    "nvidia-cuda-crt==13.5.37",
];

/// The test CUPTI library, built once per test process (from the current
/// source) under `target/harness/`; its path.
pub fn fake_cupti() -> &'static Path {
    static ONCE: OnceLock<PathBuf> = OnceLock::new();
    ONCE.get_or_init(|| cupti_library("record/cli/tests/gpu/fake_cupti.c", "libfakecupti.so"))
}

/// A shared library written against NVIDIA's CUPTI headers (`source`, from
/// the repository's root: the test CUPTI, the GPU check's probe), built
/// under `target/harness/` for this test process; its path.
pub fn cupti_library(source: &str, name: &str) -> PathBuf {
    let dir = work_dir().join(format!("cupti-libraries-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let library = dir.join(name);
    check(
        &format!("compiling {source}"),
        Command::new("gcc")
            .args([
                "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-I",
            ])
            .arg(cupti_include())
            .arg(root().join(source))
            .args(["-ldl", "-o"])
            .arg(&library)
            .output()
            .unwrap(),
    );
    library
}
