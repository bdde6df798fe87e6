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
fn drop_in_libraries_export_nvidias_core_api_and_nothing_else() {
    let nvidia = exports(&nvtxr_harness::nvidia().lib_dir.join("libnvtx3interop.so.1"));
    for (name, _) in COMPAT_LIBRARIES {
        let lib = artifacts().compat_dir.join(name);
        let ours = exports(&lib);
        assert_eq!(ours.len(), 64, "{name}: {ours:?}");
        let foreign: Vec<_> = ours.difference(&nvidia).collect();
        assert!(
            foreign.is_empty(),
            "{name} exports names NVIDIA's does not: {foreign:?}"
        );
        // What NVIDIA's library has beyond the core API: the extension
        // modules (payloads, counters, memory, time), not part of the drop-in yet.
        let missing: Vec<_> = nvidia.difference(&ours).collect();
        assert!(
            missing
                .iter()
                .all(|s| EXTENSION_PREFIXES.iter().any(|p| s.starts_with(p))),
            "{name} lacks core functions: {missing:?}"
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

/// NVIDIA's extension API (a second, lazily initialized protocol).
const EXTENSION_PREFIXES: &[&str] = &[
    "nvtxCounter",
    "nvtxMem",
    "nvtxPayload",
    "nvtxMarkPayload",
    "nvtxRangePushPayload",
    "nvtxRangePopPayload",
    "nvtxRangeStartPayload",
    "nvtxRangeEndPayload",
    "nvtxEvent",
    "nvtxScope",
    "nvtxTime",
    "nvtxTimer",
    "nvtxTimestamp",
    "nvtxDomainIsEnabled",
];
