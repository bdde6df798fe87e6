//! The Python package against NVIDIA's `nvtx`: `cargo xtask bench-python`. Builds the event-log tool (the
//! do-nothing tool), fetches NVIDIA's package, installs `bindings/python`
//! with pip, then runs `bindings/python/bench.py` (`--quick` passed on: a
//! short smoke run).

use nvtxr_harness::{artifacts, python, python_nvtx, root};
use std::process::Command;

fn main() {
    let status = Command::new(python())
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .arg(root().join("bindings/python"))
        .status()
        .unwrap();
    assert!(status.success(), "pip install ./bindings/python failed");
    let quick = std::env::args().skip(1).filter(|a| a == "--quick");
    let status = Command::new(python())
        .arg(root().join("bindings/python/bench.py"))
        .args(quick)
        .env("NVTXR_EVENT_LOG", &artifacts().event_log)
        .env("NVIDIA_PYTHON_NVTX", python_nvtx())
        .status()
        .unwrap();
    assert!(status.success());
}
