//! The crates meant for users ship only what builds outside this
//! workspace: no file that needs the workspace's unpublished test helpers
//! (`nvtxr-harness`), which `cargo package` leaves out of their
//! dev-dependencies.

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
    assert!(
        out.status.success(),
        "cargo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
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
