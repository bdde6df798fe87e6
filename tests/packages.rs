//! The crates meant for users ship only what builds outside this
//! workspace: no file that needs the workspace's unpublished test helpers
//! (`nvtxr-harness`), which `cargo package` leaves out of their
//! dev-dependencies; and the `nvtxr` command built from its packaged crate
//! records on its own.

use nvtxr_harness::root;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn cargo(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    String::from_utf8(nvtxr_harness::check(&format!("cargo {args:?}"), out).stdout).unwrap()
}

#[test]
fn published_crates_ship_nothing_that_needs_the_workspace() {
    let metadata: Value =
        serde_json::from_str(&cargo(&["metadata", "--no-deps", "--format-version", "1"])).unwrap();
    // `publish = false` is `[]` in cargo's metadata; publishable is null.
    let published: Vec<&Value> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["publish"].is_null())
        .collect();
    assert!(published.len() >= 6, "{} published crates", published.len());
    for package in published {
        let name = package["name"].as_str().unwrap();
        let dir = Path::new(package["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap();
        let listed = cargo(&["package", "--list", "--allow-dirty", "-q", "-p", name]);
        for file in listed.lines().filter(|f| f.ends_with(".rs")) {
            let Ok(text) = std::fs::read_to_string(dir.join(file)) else {
                continue; // made by cargo (none are .rs today)
            };
            assert!(
                !text.contains("nvtxr_harness"),
                "{name} ships {file}, which needs the workspace's nvtxr-harness"
            );
        }
    }
}

/// `cargo install nvtxr-record` gives an `nvtxr` that records on its own:
/// the command built from its packaged crate (and the packaged crates it
/// needs, the recording tool's among them) records a program with nothing
/// beside it and no `NVTXR_RECORD_TOOL`, from the tool library it carries.
#[test]
fn the_packaged_command_records_with_nothing_beside_it() {
    let work = nvtxr_harness::work_dir().join(format!("packaged-{}", std::process::id()));
    let target = work.join("target");
    cargo(&[
        "package",
        "--allow-dirty",
        "-q",
        "--target-dir",
        target.to_str().unwrap(),
        "-p",
        "nvtx-protocol",
        "-p",
        "nvtxr-record-format",
        "-p",
        "nvtxr-record-tool",
        "-p",
        "nvtxr-record",
    ]);
    // The command cargo built while verifying the packages, alone.
    let alone = work.join("bin");
    std::fs::create_dir_all(&alone).unwrap();
    let nvtxr = alone.join("nvtxr");
    std::fs::copy(target.join("debug/nvtxr"), &nvtxr).unwrap();
    let program =
        nvtxr_harness::compile_c("scenarios.c", nvtxr_harness::Producer::NvtxrShared, &[]);
    let trace = work.join("t.json");
    nvtxr_harness::check(
        "the packaged nvtxr record",
        Command::new(&nvtxr)
            .args(["record", "-q", "-o", trace.to_str().unwrap(), "--"])
            .arg(&program)
            .arg("basic")
            .env_remove("NVTXR_RECORD_TOOL")
            .output()
            .unwrap(),
    );
    let trace: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let mut names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] != "M")
        .filter_map(|e| e["name"].as_str())
        .collect();
    names.sort_unstable();
    // The "basic" scenario: a mark, two nested ranges, a start/end range.
    assert_eq!(names, ["async", "async", "hello", "inner", "outer"]);
    let _ = std::fs::remove_dir_all(&work);
}
