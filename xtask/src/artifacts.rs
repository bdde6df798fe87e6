//! Building nvtxr's production artifacts: the C library (shared, with its
//! SONAME link, and static), the drop-in `libnvToolsExt.so.1` /
//! `libnvtx3interop.so.1`, `nvtxr` with its recording tool, and the
//! event-log tool the tests use; in `target/harness/cargo`, once per process.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// Link flags the static library needs: exactly what `rustc --print
/// native-static-libs` reports on Linux (`tests/install.rs` keeps them equal).
/// The installed `nvtxr.pc`, `nvtxr-static.pc` and CMake package carry them.
pub const STATIC_LINK_FLAGS: &[&str] = &[
    "-ldl",
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// `target/harness`, where the harness builds and runs things.
pub fn work_dir() -> PathBuf {
    let dir = root().join("target/harness");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `output`, after checking that its command succeeded (else a panic with
/// what it printed).
pub fn check(what: &str, output: Output) -> Output {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The built libraries.
pub struct Artifacts {
    /// Folder with `libnvtxr.so` (and its SONAME link), `libnvtxr.a`.
    pub lib_dir: PathBuf,
    pub static_lib: PathBuf,
    /// The event-log tool (tests only), `libnvtxr_event_log.so`.
    pub event_log: PathBuf,
    /// Folder with the drop-in `libnvToolsExt.so.1` and `libnvtx3interop.so.1`.
    pub compat_dir: PathBuf,
    /// The `nvtxr` command (`nvtxr record`, `nvtxr report`); its tool library lies beside it.
    pub nvtxr: PathBuf,
    /// The recording tool, `libnvtxr_record.so`.
    pub record_tool: PathBuf,
}

/// Builds nvtxr, its tools and the event-log tool (release profile), once
/// per process.
pub fn artifacts() -> &'static Artifacts {
    static ONCE: OnceLock<Artifacts> = OnceLock::new();
    ONCE.get_or_init(|| {
        let target = work_dir().join("cargo");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        check(
            "cargo build",
            Command::new(cargo)
                .current_dir(root())
                .args([
                    "build",
                    "--release",
                    "-p",
                    "nvtxr-capi",
                    "-p",
                    "nvtxr-event-log",
                    "-p",
                    "nvtxr-nvtx-compat",
                    "-p",
                    "nvtxr-record",
                    "-p",
                    "nvtxr-record-tool",
                    "--target-dir",
                ])
                .arg(&target)
                .stdout(Stdio::inherit())
                .stderr(Stdio::inherit())
                .output()
                .unwrap(),
        );
        let lib_dir = target.join("release");
        // Programs linked with -lnvtxr look for the SONAME.
        let soname = lib_dir.join(crate::version::soname());
        let _ = std::fs::remove_file(&soname);
        std::os::unix::fs::symlink("libnvtxr.so", &soname).unwrap();
        write_uninstalled_pc(&lib_dir);
        link_compat_libraries(&lib_dir);
        Artifacts {
            static_lib: lib_dir.join("libnvtxr.a"),
            event_log: lib_dir.join("libnvtxr_event_log.so"),
            compat_dir: lib_dir.join("compat"),
            nvtxr: lib_dir.join("nvtxr"),
            record_tool: lib_dir.join("libnvtxr_record.so"),
            lib_dir,
        }
    })
}

/// The drop-in NVTX libraries: `(file name, symbol version node or None)`.
/// CUDA's `libnvToolsExt.so.1` had unversioned symbols; NVIDIA's
/// `libnvtx3interop.so.1` versions them with its SONAME.
pub const COMPAT_LIBRARIES: [(&str, Option<&str>); 2] = [
    ("libnvToolsExt.so.1", None),
    ("libnvtx3interop.so.1", Some("libnvtx3interop.so.1")),
];

/// Links `libnvtx_compat.a` into the drop-in libraries, in `<lib_dir>/compat/`,
/// each exporting only the NVTX API (`nvtx[A-Z]*`).
fn link_compat_libraries(lib_dir: &Path) {
    let dir = lib_dir.join("compat");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, version) in COMPAT_LIBRARIES {
        let script = dir.join(format!("{name}.map"));
        std::fs::write(
            &script,
            format!(
                "{} {{ global: nvtx[A-Z]*; local: *; }};\n",
                version.unwrap_or("")
            ),
        )
        .unwrap();
        check(
            &format!("linking {name}"),
            Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()))
                .args([
                    "-shared",
                    "-Wl,--gc-sections",
                    "-Wl,--strip-debug",
                    "-Wl,--whole-archive",
                ])
                .arg(lib_dir.join("libnvtx_compat.a"))
                .arg("-Wl,--no-whole-archive")
                .arg(format!("-Wl,-soname,{name}"))
                .arg(format!("-Wl,--version-script,{}", script.display()))
                .args(STATIC_LINK_FLAGS)
                .arg("-o")
                .arg(dir.join(name))
                .output()
                .unwrap(),
        );
    }
}

/// Writes `<lib_dir>/pkgconfig/nvtxr.pc` for the in-tree build, with an rpath
/// so programs linked through it run without `LD_LIBRARY_PATH`.
fn write_uninstalled_pc(lib_dir: &Path) {
    let dir = lib_dir.join("pkgconfig");
    std::fs::create_dir_all(&dir).unwrap();
    let pc = format!(
        "# nvtxr, uninstalled (the source tree's build)\n\
         libdir={lib}\nincludedir={inc}\n\n\
         Name: nvtxr\nDescription: NVTX annotations with NVIDIA's NVTX3 tool-loading protocol\n\
         Version: {version}\nLibs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lnvtxr\nCflags: -I${{includedir}}\n",
        lib = lib_dir.display(),
        inc = root().join("include").display(),
        version = crate::version::nvtxr_version(),
    );
    std::fs::write(dir.join("nvtxr.pc"), pc).unwrap();
}
