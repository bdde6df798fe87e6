//! Builds nvtxr and the recording tool and prints, as shell assignments, where
//! they are: `eval "$(cargo run -q -p nvtxr-harness --bin artifacts)"`.
//! Used by the Haskell and Python builds and tests (`tests/run-all.sh`).

fn main() {
    let a = nvtxr_harness::artifacts();
    println!("export NVTXR_LIB_DIR='{}'", a.lib_dir.display());
    // The tests' own Python (a virtual environment unless PYTHON names one).
    println!("export PYTHON='{}'", nvtxr_harness::python());
    println!("export NVTXR_EVENT_LOG='{}'", a.event_log.display());
    println!("export NVTXR_COMMAND='{}'", a.nvtxr.display());
    println!(
        "export NVIDIA_PYTHON_NVTX='{}'",
        nvtxr_harness::python_nvtx().display()
    );
    println!(
        "export NVIDIA_NVTX_INCLUDE='{}'",
        nvtxr_harness::nvidia().include_dir.display()
    );
    // The test CUPTI library (tests/gpu's fake), for the Python GPU tests.
    println!(
        "export FAKE_CUPTI='{}'",
        nvtxr_harness::fake_cupti().display()
    );
    println!(
        "export PKG_CONFIG_PATH='{}'${{PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}}",
        a.lib_dir.join("pkgconfig").display()
    );
}
