//! The demo: builds nvtxr, its recording tool and the `nvtxr` command, runs
//! the annotated example workloads (the C training loop in
//! `examples/c/example.c` and, when GHC is installed, the Haskell training
//! example) under `nvtxr record`, and prints the summary and where the trace
//! and the HTML timeline are.

use nvtxr_harness::{artifacts, compile_c, root, work_dir, Producer};
use std::path::PathBuf;
use std::process::Command;

/// Builds the Haskell training example against the in-tree nvtxr, if GHC and
/// cabal are installed; says why not otherwise.
fn haskell_example() -> Option<PathBuf> {
    let have = |p: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !(have("ghc") && have("cabal") && have("pkg-config")) {
        println!("(GHC, cabal or pkg-config not installed: the Haskell example is skipped; `bash bindings/haskell/test.sh` installs them)");
        return None;
    }
    let dir = root().join("bindings/haskell");
    let pkgconfig = artifacts().lib_dir.join("pkgconfig");
    let cabal = |args: &[&str]| {
        let out = Command::new("cabal")
            .args(["--offline", "-v0"])
            .args(args)
            .current_dir(&dir)
            .env("CABAL_CONFIG", dir.join("cabal.config"))
            .env("PKG_CONFIG_PATH", &pkgconfig)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    };
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
