//! The installed nvtxr, as C and C++ users find it: a consumer project outside
//! the source tree builds and runs against the prefix through pkg-config and
//! through CMake, shared and static; DESTDIR staging; static link flags in
//! sync with what rustc reports.

use nvtxr_harness::install::{install, nvtxr_version, soname, HEADERS};
use nvtxr_harness::{have_tool, root, run, Tool, STATIC_LINK_FLAGS};
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// A fresh directory outside the source tree, removed when dropped (the
/// test's end, passed or failed).
fn outside(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("nvtxr-{name}-"))
        .tempdir()
        .unwrap()
}

/// nvtxr installed into a fresh prefix (one per test: installing is copying files).
fn installed() -> TempDir {
    let prefix = outside("prefix");
    install(prefix.path(), None, false);
    prefix
}

/// The consumer project, copied out of the source tree (one copy per test).
fn consumer(name: &str) -> TempDir {
    let dir = outside(name);
    for f in ["main.c", "main.cpp", "CMakeLists.txt"] {
        std::fs::copy(
            root().join("bindings/c/examples/consumer").join(f),
            dir.path().join(f),
        )
        .unwrap();
    }
    dir
}

fn sh(cmd: &str, cwd: &Path, prefix: &Path) -> String {
    let out = Command::new("sh")
        .args(["-c", cmd])
        .current_dir(cwd)
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs a consumer program under the event-log tool; checks its events and how it links.
fn check_consumer(exe: &Path, statically: bool, prefix: &Path) {
    let r = run(exe, &[], Tool::EventLog("record"), &[]);
    assert!(r.success, "{r:?}");
    assert_eq!(r.stdout, format!("nvtxr {}\n", nvtxr_version()));
    assert_eq!(
        r.calls(),
        [
            "DomainRegisterStringA default \"main\"",
            "DomainRangePushEx default {msg=reg:\"main\"} -> 0",
            "MarkA \"consumer\"",
            "RangePop -> 0"
        ]
    );
    let ldd = sh(&format!("ldd {}", exe.display()), Path::new("/"), prefix);
    if statically {
        assert!(!ldd.contains("libnvtxr"), "{ldd}");
    } else {
        let soname = soname();
        let want = format!("{soname} => {}", prefix.join("lib").join(&soname).display());
        assert!(ldd.contains(&want), "{ldd}");
    }
}

#[test]
fn installs_libraries_headers_and_package_files() {
    let prefix = installed();
    let prefix = prefix.path();
    let lib = prefix.join("lib");
    let version = nvtxr_version();
    assert_eq!(
        std::fs::read_link(lib.join("libnvtxr.so")).unwrap(),
        Path::new(&soname())
    );
    assert_eq!(
        std::fs::read_link(lib.join(soname())).unwrap(),
        PathBuf::from(format!("libnvtxr.so.{version}"))
    );
    for f in [
        "libnvtxr.a",
        "libnvToolsExt.so.1",
        "libnvtx3interop.so.1",
        "pkgconfig/nvtxr.pc",
        "pkgconfig/nvtxr-static.pc",
    ] {
        assert!(lib.join(f).is_file(), "{f}");
    }
    assert!(lib.join("cmake/nvtxr/nvtxrConfig.cmake").is_file());
    assert!(lib.join("libnvtxr_record.so").is_file());
    // The installed nvtxr finds its tool in ../lib (a program that makes
    // no NVTX call records nothing, which is an error).
    let producer = nvtxr_harness::compile_c(
        "record_scenarios.c",
        nvtxr_harness::Producer::NvtxrShared,
        &[],
    );
    let out_dir = outside("installed-record");
    let trace = out_dir.path().join("t.json");
    let out = Command::new(prefix.join("bin/nvtxr"))
        .args(["record", "-q", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&producer)
        .arg("worker")
        .env_remove("NVTXR_RECORD_TOOL")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&trace)
        .unwrap()
        .contains("exec'd worker"));
    for h in HEADERS {
        let installed = std::fs::read(prefix.join("include").join(h)).unwrap();
        assert_eq!(
            installed,
            std::fs::read(root().join("include").join(h)).unwrap(),
            "{h}"
        );
    }
}

#[test]
fn destdir_stages_files_that_refer_to_the_prefix() {
    let stage = outside("stage");
    let stage = stage.path();
    install(Path::new("/opt/nvtxr"), Some(stage), true);
    let pc = std::fs::read_to_string(stage.join("opt/nvtxr/lib/pkgconfig/nvtxr.pc")).unwrap();
    assert!(pc.starts_with("prefix=/opt/nvtxr\n"), "{pc}");
    assert!(stage.join("opt/nvtxr/lib/libnvtxr.a").is_file());
    assert!(stage.join("opt/nvtxr/include/nvtxr.h").is_file());
    // Installed without debug info, as distributions install; asked to keep
    // it (`--debug-info`), split off beside each file.
    for file in [
        "bin/nvtxr",
        "lib/libnvtxr_record.so",
        "lib/libnvtxr.a",
        "lib/libnvToolsExt.so.1",
    ] {
        let path = stage.join("opt/nvtxr").join(file);
        let sections = std::process::Command::new("readelf")
            .arg("-S")
            .arg(&path)
            .output()
            .unwrap();
        let sections = String::from_utf8_lossy(&sections.stdout);
        assert!(sections.contains(".text"), "{file}: {sections}");
        assert!(!sections.contains(".debug_info"), "{file} has debug info");
        // Asked to keep it: split off beside it, and linked.
        if !file.ends_with(".a") {
            let name = path.file_name().unwrap().to_string_lossy();
            let debug = path.parent().unwrap().join(format!(".debug/{name}.debug"));
            let kept = std::process::Command::new("readelf")
                .arg("-S")
                .arg(&debug)
                .output()
                .unwrap();
            assert!(kept.status.success(), "{}", debug.display());
            // The command is built with debug info (the drop-ins have little).
            if file == "bin/nvtxr" {
                let kept = String::from_utf8_lossy(&kept.stdout);
                assert!(kept.contains(".debug_info"), "{}", debug.display());
            }
            assert!(sections.contains(".gnu_debuglink"), "{file}: {sections}");
        }
    }
}

#[test]
fn pkg_config_consumer_shared_and_static() {
    if !have_tool("pkg-config") {
        return;
    }
    let prefix = installed();
    let prefix = prefix.path();
    let dir = consumer("pkg-config-consumer");
    let dir = dir.path();
    // nvtxr.pc carries an rpath: the program runs without LD_LIBRARY_PATH.
    sh(
        "gcc -Wall -Wextra -Werror main.c $(pkg-config --cflags --libs nvtxr) -o shared",
        dir,
        prefix,
    );
    check_consumer(&dir.join("shared"), false, prefix);
    sh(
        "gcc -Wall -Wextra -Werror main.c $(pkg-config --cflags --libs nvtxr-static) -o static",
        dir,
        prefix,
    );
    check_consumer(&dir.join("static"), true, prefix);
    // nvtxr.pc carries the same flags for `pkg-config --static`.
    let libs = sh("pkg-config --static --libs nvtxr", dir, prefix);
    assert!(
        libs.trim_end().ends_with(&STATIC_LINK_FLAGS.join(" ")),
        "{libs}"
    );
}

#[test]
fn cmake_consumer_shared_and_static() {
    if !have_tool("cmake") {
        return;
    }
    let prefix = installed();
    let prefix = prefix.path();
    let dir = consumer("cmake-consumer");
    let dir = dir.path();
    for (build, statically) in [("build-shared", false), ("build-static", true)] {
        sh(
            &format!(
                "cmake -S . -B {build} -DCMAKE_PREFIX_PATH={} -Dnvtxr_USE_STATIC_LIBS={} >/dev/null && cmake --build {build} >/dev/null",
                prefix.display(),
                if statically { "ON" } else { "OFF" }
            ),
            dir,
            prefix,
        );
        check_consumer(&dir.join(build).join("consumer_c"), statically, prefix);
        check_consumer(&dir.join(build).join("consumer_cpp"), statically, prefix);
    }
}

#[test]
fn static_link_flags_match_what_rustc_reports() {
    // A private target dir, and nvtxr cleaned there, so rustc really runs and prints the note.
    let target = nvtxr_harness::work_dir().join("native-static-libs");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let clean = Command::new(&cargo)
        .current_dir(root())
        .args(["clean", "--release", "-p", "nvtxr", "--target-dir"])
        .arg(&target)
        .output()
        .unwrap();
    assert!(clean.status.success());
    let out = Command::new(&cargo)
        .current_dir(root())
        .args([
            "rustc",
            "--release",
            "-p",
            "nvtxr",
            "--lib",
            "--crate-type",
            "staticlib",
            "--target-dir",
        ])
        .arg(&target)
        .args(["--", "--print", "native-static-libs"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let reported = stderr
        .lines()
        .find_map(|l| l.split("native-static-libs: ").nth(1))
        .unwrap_or_else(|| panic!("no native-static-libs note in: {stderr}"));
    assert_eq!(
        reported.split_whitespace().collect::<Vec<_>>(),
        STATIC_LINK_FLAGS
    );
}
