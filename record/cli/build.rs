//! Builds the recording tool (crate nvtxr-record-tool) as the shared library
//! `nvtxr record` injects, so that the `nvtxr` command carries it: an
//! installed `nvtxr` records with nothing beside it (see `record::Tool`).
//!
//! The tool's build script says where its source is; a second cargo builds
//! it there, released and stripped, into this build's own directory. Source
//! outside this workspace (a registry's) is copied first (cargo writes a
//! lock file beside the manifest it builds).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let source = PathBuf::from(
        env::var("DEP_NVTXR_RECORD_TOOL_SOURCE").expect("the tool's build script says"),
    );
    let out = PathBuf::from(env::var("OUT_DIR").expect("set by cargo"));
    let manifest = if !in_workspace(&source) {
        let copy = out.join("tool-source");
        let _ = std::fs::remove_dir_all(&copy);
        copy_dir(&source, &copy);
        // A workspace of its own, wherever OUT_DIR lies.
        let manifest = copy.join("Cargo.toml");
        let mut text = std::fs::read_to_string(&manifest).expect("the tool's manifest");
        text.push_str("\n[workspace]\n");
        std::fs::write(&manifest, text).expect("writing the tool's manifest");
        manifest
    } else {
        source.join("Cargo.toml")
    };
    let target = out.join("tool-target");
    let mut cargo = Command::new(env::var_os("CARGO").expect("set by cargo"));
    cargo
        .args(["build", "--release", "--lib", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    if env::var_os("CARGO_NET_OFFLINE").is_some() {
        cargo.arg("--offline");
    }
    // A copy resolves the tool's own crates to the copies beside it (those
    // this build uses), not to whatever a registry has under their names.
    if manifest.starts_with(&out) {
        for (name, dir) in siblings(&source) {
            cargo.arg("--config").arg(format!(
                "patch.crates-io.{name}.path={:?}",
                dir.display().to_string()
            ));
        }
    }
    let status = cargo
        .status()
        .expect("running cargo for the recording tool");
    assert!(status.success(), "building the recording tool failed");
    let library = target.join("release/libnvtxr_record.so");
    assert!(library.is_file(), "{} was not built", library.display());
    // Built again when any source it was built from changes (the tool's
    // and the crates it uses), as cargo's dependency file lists them.
    let listed = std::fs::read_to_string(target.join("release/libnvtxr_record.d"))
        .expect("cargo's dependency file for the tool");
    let sources = listed.split_once(": ").map_or("", |(_, s)| s);
    for file in sources.replace("\\ ", "\0").split_whitespace() {
        println!("cargo:rerun-if-changed={}", file.replace('\0', " "));
    }
    for own in ["Cargo.toml", "build.rs", "c"] {
        println!("cargo:rerun-if-changed={}", source.join(own).display());
    }
    println!(
        "cargo:rustc-env=NVTXR_RECORD_TOOL_EMBEDDED={}",
        library.display()
    );
}

/// Whether `dir` is this workspace's copy of the tool (built in place).
fn in_workspace(dir: &Path) -> bool {
    let here = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    here.parent().is_some_and(|p| p.join("tool") == dir)
}

/// The tool's sibling crates of this project (`nvtx-protocol`,
/// `nvtxr-record-format`) unpacked beside its source, by name.
fn siblings(source: &Path) -> Vec<(&'static str, PathBuf)> {
    let version = env::var("CARGO_PKG_VERSION").expect("set by cargo");
    let parent = source.parent().unwrap_or(Path::new("."));
    ["nvtx-protocol", "nvtxr-record-format"]
        .into_iter()
        .map(|name| (name, parent.join(format!("{name}-{version}"))))
        .filter(|(_, dir)| dir.join("Cargo.toml").is_file())
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("creating the tool's copy");
    for entry in std::fs::read_dir(from).expect("reading the tool's source") {
        let entry = entry.expect("reading the tool's source");
        let path = entry.path();
        if entry.file_type().expect("a file type").is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&path, &to.join(entry.file_name()));
            }
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copying the tool's source");
        }
    }
}
