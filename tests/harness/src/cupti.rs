//! CUDA without a GPU: NVIDIA's CUPTI headers from PyPI, and the test CUPTI
//! library written from them (`record/cli/tests/gpu/fake_cupti.c`), which
//! scripts what a CUDA driver and GPU would hand nvtxr's recording tool.

use super::pypi::{filled_once, unpacked_wheels};
use super::{check, root, work_dir};
use std::hash::{Hash, Hasher};
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

/// The test CUPTI library, built from the current source under
/// `target/harness/` (see [`cupti_library`]); its path.
pub fn fake_cupti() -> &'static Path {
    static ONCE: OnceLock<PathBuf> = OnceLock::new();
    ONCE.get_or_init(|| cupti_library("record/cli/tests/gpu/fake_cupti.c", "libfakecupti.so"))
}

/// The compiler's flags for [`cupti_library`].
const FLAGS: [&str; 7] = [
    "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread",
];

/// A shared library written against NVIDIA's CUPTI headers (`source`, from
/// the repository's root: the test CUPTI, the GPU check's probe); its path.
/// Built once per version of its source (it includes only system and
/// CUPTI headers) into `target/harness/cupti-libraries/`, under a name
/// that says which version, and used from there by every test process
/// and by the Python tests (which get its path from `artifacts`): no
/// process rebuilds or removes another's, and none leaves one behind.
pub fn cupti_library(source: &str, name: &str) -> PathBuf {
    let text = std::fs::read(root().join(source)).unwrap();
    let mut hasher = std::hash::DefaultHasher::new();
    (&text, CUPTI_WHEELS, FLAGS).hash(&mut hasher);
    let dir = work_dir().join("cupti-libraries");
    std::fs::create_dir_all(&dir).unwrap();
    let library = dir.join(format!("{:016x}-{name}", hasher.finish()));
    if library.exists() {
        return library;
    }
    // Built aside, then renamed into place: a process that finds it finds it whole.
    let building = dir.join(format!(".{name}-{}", std::process::id()));
    check(
        &format!("compiling {source}"),
        Command::new("gcc")
            .args(FLAGS)
            .arg("-I")
            .arg(cupti_include())
            .arg(root().join(source))
            .args(["-ldl", "-o"])
            .arg(&building)
            .output()
            .unwrap(),
    );
    std::fs::rename(&building, &library).unwrap();
    library
}
