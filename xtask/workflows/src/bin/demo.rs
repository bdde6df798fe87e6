//! The demo: builds nvtxr, its recording tool and the `nvtxr` command, runs
//! the annotated example workloads (the C training loop in
//! `bindings/c/examples/example.c` and, when GHC is installed, the Haskell training
//! example) under `nvtxr record`, and prints the summary and where the trace
//! and the HTML timeline are.

use nvtxr_harness::{artifacts, cabal, compile_c, have_haskell, work_dir, Producer};
use std::path::PathBuf;
use std::process::Command;

/// Builds the Haskell training example against the in-tree nvtxr, if GHC and
/// cabal are installed; says why not otherwise.
fn haskell_example() -> Option<PathBuf> {
    if !have_haskell() {
        println!("(GHC, cabal or pkg-config not installed: the Haskell example is skipped; `bash bindings/haskell/test.sh` installs them)");
        return None;
    }
    println!("building the Haskell example (cabal build nvtxr-training)...");
    // The example alone: not the test suites and benchmarks the project
    // enables, whose dependencies a fresh machine may not have.
    let only = ["--disable-tests", "--disable-benchmarks"];
    let built = cabal(&[&["build", "nvtxr-training"][..], &only].concat())
        .and_then(|_| cabal(&[&["list-bin", "nvtxr-training"][..], &only].concat()));
    match built {
        Ok(bin) => Some(PathBuf::from(String::from_utf8_lossy(&bin.stdout).trim())),
        Err(why) => {
            println!(
                "(the Haskell example could not be built, so it is not recorded; cabal said:\n{why}\n\
                 `bash bindings/haskell/test.sh` installs what the package needs from Debian)"
            );
            None
        }
    }
}

fn main() {
    let out = work_dir().join("demo");
    std::fs::create_dir_all(&out).unwrap();
    // Named as a user would name it: the trace's process is "example".
    let c_example = out.join("example");
    std::fs::copy(
        compile_c("example.c", Producer::NvtxrShared, &[]),
        &c_example,
    )
    .unwrap();
    let mut workload = vec![c_example];
    workload.extend(haskell_example());
    let trace = out.join("trace.pftrace");
    // One recording of every workload: each process gets its own track.
    let script = workload
        .iter()
        .map(|p| format!("'{}'", p.display()))
        .collect::<Vec<_>>()
        .join(" && ");
    println!(
        "\n$ nvtxr record --html -o {} -- sh -c \"{script}\"\n",
        trace.display()
    );
    let status = Command::new(&artifacts().nvtxr)
        .args(["record", "--html", "-o"])
        .arg(&trace)
        .args(["--", "sh", "-c", &script])
        .status()
        .unwrap();
    std::process::exit(status.code().unwrap_or(1));
}
