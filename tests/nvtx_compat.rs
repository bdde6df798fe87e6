//! The drop-in `libnvToolsExt.so.1` / `libnvtx3interop.so.1`: a program built
//! against NVIDIA's headers and `libnvtx3interop.so.1` runs unchanged on
//! nvtxr's library (swapped in, or linked as `-lnvToolsExt`), and the tool
//! receives exactly the same calls, with and without a tool attached.

use nvtxr_harness::{artifacts, compile_c, run, Producer, Run, Tool, COMPAT_LIBRARIES, INIT_OK};
use std::collections::BTreeSet;
use std::process::Command;

/// Runs `exe` with `LD_LIBRARY_PATH` set, so a library of that name there replaces the linked one.
fn with_library_path(exe: &std::path::Path, dir: &std::path::Path, tool: Tool) -> Run {
    run(
        exe,
        &[],
        tool,
        &[("LD_LIBRARY_PATH", dir.to_str().unwrap())],
    )
}

#[test]
fn every_nvtx_call_reaches_the_tool_as_with_nvidias_library() {
    let nvidia_exe = compile_c("nvtx_api.c", Producer::NvidiaInterop, &[]);
    let compat_exe = compile_c("nvtx_api.c", Producer::NvtxrCompat, &[]);
    let compat_dir = &artifacts().compat_dir;
    for tool in [Tool::EventLog("record"), Tool::None] {
        let expected = run(&nvidia_exe, &[], tool, &[]);
        assert!(expected.success, "{expected:?}");
        if matches!(tool, Tool::EventLog(_)) {
            assert_eq!(expected.events[0], INIT_OK);
            assert!(expected.calls().len() > 60, "{:?}", expected.events);
        }
        for (what, got) in [
            (
                "NVIDIA's binary, nvtxr's libnvtx3interop.so.1 swapped in",
                with_library_path(&nvidia_exe, compat_dir, tool),
            ),
            (
                "linked to nvtxr's libnvToolsExt.so.1",
                run(&compat_exe, &[], tool, &[]),
            ),
        ] {
            assert!(got.success, "{what}: {got:?}");
            assert_eq!(
                got.stderr, expected.stderr,
                "{what}: stderr (e.g. a symbol-version warning)"
            );
            assert_eq!(got.events, expected.events, "{what}: events differ");
            assert_eq!(got.stdout, expected.stdout, "{what}: return values differ");
        }
    }
}

#[test]
fn the_swap_really_uses_nvtxrs_library() {
    let exe = compile_c("nvtx_api.c", Producer::NvidiaInterop, &[]);
    let out = Command::new("ldd")
        .arg(&exe)
        .env("LD_LIBRARY_PATH", &artifacts().compat_dir)
        .output()
        .unwrap();
    let ldd = String::from_utf8_lossy(&out.stdout);
    let want = format!(
        "libnvtx3interop.so.1 => {}",
        artifacts()
            .compat_dir
            .join("libnvtx3interop.so.1")
            .display()
    );
    assert!(ldd.contains(&want), "{ldd}");
}

/// The dynamic symbols a library defines, less its version-node symbol.
fn exports(lib: &std::path::Path) -> BTreeSet<String> {
    let nm = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .unwrap();
    String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter(|l| !l.contains(" A ")) // version nodes and linker-defined absolutes
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(|s| s.split('@').next().unwrap().to_owned()) // nm shows name@@VERSION
        .filter(|s| !["__bss_start", "_edata", "_end"].contains(&s.as_str())) // linker-defined
        .collect()
}

#[test]
fn drop_in_libraries_export_nvidias_api_and_nothing_else() {
    let nvidia = exports(&nvtxr_harness::nvidia().lib_dir.join("libnvtx3interop.so.1"));
    assert_eq!(nvidia.len(), 105, "NVIDIA's interop: {nvidia:?}");
    for (name, _) in COMPAT_LIBRARIES {
        let lib = artifacts().compat_dir.join(name);
        assert_eq!(
            exports(&lib),
            nvidia,
            "{name}: every function NVIDIA's exports, no other"
        );
        let readelf = Command::new("readelf")
            .arg("-d")
            .arg(&lib)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&readelf.stdout).contains(&format!("Library soname: [{name}]"))
        );
    }
}

/// `tests/c/core_only_tool.c` built as a shared library: a tool with no
/// extension entry point.
fn core_only_tool() -> String {
    let lib = nvtxr_harness::work_dir().join(format!("core-only-tool-{}.so", std::process::id()));
    let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "gcc".into()))
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o"])
        .arg(&lib)
        .arg(nvtxr_harness::root().join("tests/c/core_only_tool.c"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib.to_str().unwrap().to_string()
}

#[test]
fn extension_calls_behave_as_with_nvidias_library() {
    let nvidia_exe = compile_c("nvtx_extensions.c", Producer::NvidiaInterop, &[]);
    let compat_exe = compile_c("nvtx_extensions.c", Producer::NvtxrCompat, &[]);
    let compat_dir = &artifacts().compat_dir;
    let no_extensions = core_only_tool();
    // No tool; a tool whose extension entry point fills every slot, declines,
    // or fills one slot; a tool with no extension entry point.
    let tools = [
        Tool::None,
        Tool::EventLog("record"),
        Tool::EventLog("ext-decline"),
        Tool::EventLog("ext-partial"),
        Tool::Path(&no_extensions),
    ];
    let mut seen = Vec::new();
    for tool in tools {
        let expected = run(&nvidia_exe, &[], tool, &[]);
        assert!(expected.success, "{tool:?}: {expected:?}");
        for (what, got) in [
            (
                "NVIDIA's binary, nvtxr's libnvtx3interop.so.1 swapped in",
                with_library_path(&nvidia_exe, compat_dir, tool),
            ),
            (
                "linked to nvtxr's libnvToolsExt.so.1",
                run(&compat_exe, &[], tool, &[]),
            ),
        ] {
            assert!(got.success, "{tool:?}, {what}: {got:?}");
            assert_eq!(
                got.stdout, expected.stdout,
                "{tool:?}, {what}: return values differ"
            );
            assert_eq!(
                got.events, expected.events,
                "{tool:?}, {what}: calls differ"
            );
        }
        seen.push((tool, expected));
    }
    // What they agree on, spelled out: the no-tool values, the tool's values.
    let line = |run: &Run, what: &str| {
        run.stdout
            .lines()
            .find(|l| l.starts_with(what))
            .unwrap_or_else(|| panic!("{what} in {}", run.stdout))
            .to_string()
    };
    let none = &seen[0].1;
    for (what, value) in [
        ("enabled", "enabled 0 0"),
        ("schema", "schema 0"),
        ("push", "push -2"),
        ("start", "start 0"),
        ("timestamp", "timestamp 0"),
        ("heap", "heap NULL"),
    ] {
        assert_eq!(line(none, what), value);
    }
    let logged = &seen[1].1;
    assert_eq!(line(logged, "schema"), "schema 4294967303");
    assert_eq!(line(logged, "timestamp"), "timestamp 42");
    assert_eq!(line(logged, "heap"), "heap handle");
    let calls = logged.calls();
    for call in [
        "ExtInit module=2 compat=0x0104 version=3 size=40 segments=1 segment=0 slots=63 types=28x4",
        "ExtInit module=4 compat=0x0102 version=3 size=40 segments=1 segment=0 slots=63 types=none",
        "ExtInit module=1 compat=0x0102 version=3 size=40 segments=1 segment=1 slots=63 types=none",
        "MarkPayload domain=\"ext\" payload=ptr count=1",
        "CounterSampleFloat64 domain=\"ext\" counter=4294967303 value=2.25",
        "MemHeapUnregister domain=\"ext\" heap=handle",
        "TimerSourceWithData domain=\"ext\" time_domain=4294967303 flags=1 provider=ptr data=ptr",
        "MarkA \"core still works\"",
    ] {
        assert!(calls.contains(&call), "{call} not in {calls:#?}");
    }
    assert_eq!(
        line(&seen[2].1, "enabled"),
        "enabled 0 0",
        "declined: as no tool"
    );
    assert_eq!(
        line(&seen[3].1, "enabled"),
        "enabled 1 1",
        "its function left empty"
    );
    assert_eq!(
        line(&seen[4].1, "enabled"),
        "enabled 1 1",
        "no extension entry point"
    );
}

/// NVIDIA's own coverage tests (`tests/c/nvidia-coverage`, vendored from
/// NVIDIA/NVTX): each built `-DNVTX_NO_IMPL` against NVIDIA's
/// `libnvtx3interop.so.1` and run by NVIDIA's runner, with no tool and under
/// NVIDIA's printing sample tool, on NVIDIA's library and with nvtxr's copy
/// swapped in: the same exit code and the same output.
#[test]
fn nvidias_coverage_tests_pass_on_nvtxrs_library_as_on_nvidias() {
    let source = nvtxr_harness::root().join("tests/c/nvidia-coverage");
    let nvidia = nvtxr_harness::nvidia();
    let dir = nvtxr_harness::work_dir().join(format!("nvidia-coverage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Libraries after the source: linkers drop those that come first.
    let build = |compiler: &str, args: &[&str], file: &str, out: &str, libraries: &[&str]| {
        let mut cc = Command::new(compiler);
        cc.args(args)
            .arg("-I")
            .arg(&nvidia.include_dir)
            .arg(source.join(file))
            .args(libraries)
            .arg("-o")
            .arg(dir.join(out));
        nvtxr_harness::check(&format!("building {file}"), cc.output().unwrap());
    };
    build("g++", &["-std=c++14"], "RunTest.cpp", "runtest", &["-ldl"]);
    build(
        "g++",
        &["-std=c++14", "-shared", "-fPIC"],
        "PrintInjection.cpp",
        "libinj.so",
        &[],
    );
    let interop = nvidia.lib_dir.join("libnvtx3interop.so.1");
    let tests = [
        "CoverageC",
        "CoverageMem",
        "CoveragePayload",
        "CoverageExtCounter",
        "CoverageExtMem",
        "CoverageExtPayload",
    ];
    for test in tests {
        build(
            "gcc",
            &["-shared", "-fPIC", "-fvisibility=hidden", "-DNVTX_NO_IMPL"],
            &format!("{test}.c"),
            &format!("lib{test}.so"),
            &[interop.to_str().unwrap()],
        );
        for injection in [&[][..], &["-i", "inj"][..]] {
            let runs: Vec<(Option<i32>, String)> = [&nvidia.lib_dir, &artifacts().compat_dir]
                .iter()
                .map(|library| {
                    let out = Command::new(dir.join("runtest"))
                        .args(["-t", test])
                        .args(injection)
                        .env("LD_LIBRARY_PATH", library)
                        .env_remove(nvtxr_harness::INJECTION_PATH_VAR)
                        .output()
                        .unwrap();
                    (
                        out.status.code(),
                        String::from_utf8_lossy(&out.stdout).into_owned()
                            + &String::from_utf8_lossy(&out.stderr),
                    )
                })
                .collect();
            let (nvidias, ours) = (&runs[0], &runs[1]);
            assert_eq!(nvidias.0, Some(0), "{test} {injection:?}: {}", nvidias.1);
            assert!(nvidias.1.contains("RunTest PASSED"), "{}", nvidias.1);
            assert_eq!(ours, nvidias, "{test} {injection:?} on nvtxr's library");
        }
    }
    // Under the printing tool, the core calls were printed.
    let printed = Command::new(dir.join("runtest"))
        .args(["-t", "CoverageC", "-i", "inj"])
        .env("LD_LIBRARY_PATH", &artifacts().compat_dir)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&printed.stderr);
    assert!(
        printed.contains("InitializeInjectionNvtx2")
            && printed.contains("[inj] nvtxDomainRangePushEx"),
        "{printed}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
