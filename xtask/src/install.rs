//! `cargo xtask install`: installs nvtxr into a prefix for C and C++ users: the shared library (with its SONAME symlinks),
//! the static library, the headers, pkg-config files, a CMake package, the
//! drop-in `libnvToolsExt.so.1` / `libnvtx3interop.so.1`, and `nvtxr record`
//! (`bin/nvtxr` with its tool `lib/libnvtxr_record.so`).

use crate::artifacts::{artifacts, root, COMPAT_LIBRARIES, STATIC_LINK_FLAGS};
pub use crate::version::{nvtxr_version, soname, soname_of};
use std::path::{Path, PathBuf};

/// The headers C and C++ users get.
pub const HEADERS: [&str; 3] = ["nvtxr.h", "nvtxr_scope.h", "nvtxr.hpp"];

/// The static library's link dependencies as CMake library names (`-lm` -> `m`).
fn cmake_libraries() -> String {
    STATIC_LINK_FLAGS
        .iter()
        .map(|f| f.trim_start_matches("-l"))
        .collect::<Vec<_>>()
        .join(";")
}

fn write(path: &Path, contents: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(to);
    std::fs::copy(from, to)
        .unwrap_or_else(|e| panic!("copying {} to {}: {e}", from.display(), to.display()));
}

/// [`copy`], then the debug info taken out (`strip --strip-debug`: the
/// symbols stay), as distributions install: a 29 MB `nvtxr` becomes 6 MB.
/// With `keep_debug`, the debug info is split off first into
/// `.debug/NAME.debug` beside the file, where gdb looks for it (the file
/// names it in its `.gnu_debuglink`). A static library is only stripped.
fn copy_stripped(from: &Path, to: &Path, keep_debug: bool) {
    copy(from, to);
    let run = |what: &str, args: &[&std::ffi::OsStr]| {
        let done = std::process::Command::new(what).args(args).status();
        assert!(
            done.is_ok_and(|s| s.success()),
            "{what} {args:?} failed ({what} is in binutils)"
        );
    };
    let split = keep_debug && to.extension().is_none_or(|e| e != "a");
    let debug = to.parent().unwrap().join(".debug").join(format!(
        "{}.debug",
        to.file_name().unwrap().to_string_lossy()
    ));
    if split {
        std::fs::create_dir_all(debug.parent().unwrap()).unwrap();
        run(
            "objcopy",
            &[
                "--only-keep-debug".as_ref(),
                to.as_os_str(),
                debug.as_os_str(),
            ],
        );
    }
    run("strip", &["--strip-debug".as_ref(), to.as_os_str()]);
    if split {
        let link = format!("--add-gnu-debuglink={}", debug.display());
        run("objcopy", &[link.as_ref(), to.as_os_str()]);
    }
}

fn symlink(target: &str, link: &Path) {
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// The templates of the files that tell build systems where nvtxr is, and
/// where each goes under `lib/`.
const PACKAGING: [(&str, &str); 4] = [
    (
        include_str!("../../bindings/c/packaging/nvtxr.pc.in"),
        "pkgconfig/nvtxr.pc",
    ),
    (
        include_str!("../../bindings/c/packaging/nvtxr-static.pc.in"),
        "pkgconfig/nvtxr-static.pc",
    ),
    (
        include_str!("../../bindings/c/packaging/nvtxrConfig.cmake.in"),
        "cmake/nvtxr/nvtxrConfig.cmake",
    ),
    (
        include_str!("../../bindings/c/packaging/nvtxrConfigVersion.cmake.in"),
        "cmake/nvtxr/nvtxrConfigVersion.cmake",
    ),
];

/// Installs into `destdir` + `prefix` (files refer to `prefix`), without
/// debug info (kept in `.debug/` files with `keep_debug`); returns the root
/// the files went to.
pub fn install(prefix: &Path, destdir: Option<&Path>, keep_debug: bool) -> PathBuf {
    assert!(prefix.is_absolute(), "PREFIX must be an absolute path");
    let a = artifacts();
    let version = nvtxr_version();
    let soname = soname();
    let major = version.split('.').next().unwrap().to_string();
    let base = match destdir {
        Some(d) => d.join(prefix.strip_prefix("/").unwrap()),
        None => prefix.to_path_buf(),
    };
    let lib = base.join("lib");

    let real = format!("libnvtxr.so.{version}");
    copy_stripped(&a.lib_dir.join("libnvtxr.so"), &lib.join(&real), keep_debug);
    symlink(&real, &lib.join(&soname));
    symlink(&soname, &lib.join("libnvtxr.so"));
    copy_stripped(&a.static_lib, &lib.join("libnvtxr.a"), keep_debug);
    for (name, _) in COMPAT_LIBRARIES {
        copy_stripped(&a.compat_dir.join(name), &lib.join(name), keep_debug);
        symlink(name, &lib.join(name.trim_end_matches(".1")));
    }
    copy_stripped(&a.nvtxr, &base.join("bin/nvtxr"), keep_debug);
    copy_stripped(&a.record_tool, &lib.join("libnvtxr_record.so"), keep_debug);
    for header in HEADERS {
        copy(
            &root().join("include").join(header),
            &base.join("include").join(header),
        );
    }

    // The pkg-config and CMake files: bindings/c/packaging's templates.
    let prefix = prefix.display().to_string();
    let static_libs = STATIC_LINK_FLAGS.join(" ");
    let cmake_libs = cmake_libraries();
    let fill = |template: &str| {
        [
            ("@PREFIX@", prefix.as_str()),
            ("@VERSION@", version.as_str()),
            ("@MAJOR@", major.as_str()),
            ("@SONAME@", soname.as_str()),
            ("@REAL@", real.as_str()),
            ("@STATIC_LIBS@", static_libs.as_str()),
            ("@CMAKE_LIBS@", cmake_libs.as_str()),
        ]
        .iter()
        .fold(template.to_string(), |t, (key, value)| {
            t.replace(key, value)
        })
    };
    for (template, to) in PACKAGING {
        write(&lib.join(to), &fill(template));
    }
    base
}
