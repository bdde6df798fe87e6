//! Installs nvtxr for C and C++ users:
//! `PREFIX=/usr/local DESTDIR= cargo run --release -p nvtxr-harness --bin install`.

use std::path::PathBuf;

fn main() {
    let prefix = PathBuf::from(std::env::var("PREFIX").unwrap_or_else(|_| "/usr/local".into()));
    let destdir = std::env::var_os("DESTDIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let base = nvtxr_harness::install::install(&prefix, destdir.as_deref());
    println!(
        "installed nvtxr {} into {}",
        nvtxr_harness::install::nvtxr_version(),
        base.display()
    );
}
