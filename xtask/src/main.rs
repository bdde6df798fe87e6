//! `cargo xtask WORKFLOW`: every developer workflow of the project in one
//! place (the cargo-xtask convention). Each runs what the README documents.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// nvtxr's developer workflows.
#[derive(Parser)]
#[command(name = "cargo xtask", version, about)]
struct Cli {
    #[command(subcommand)]
    workflow: Workflow,
}

#[derive(Subcommand)]
enum Workflow {
    /// Build nvtxr and record the example workloads with `nvtxr record` (the README's first command).
    Demo,
    /// Every test: format, lint, docs, the workspace's tests, the Haskell and Python packages
    /// (the README's second command, `bash tests/run-all.sh`).
    Test,
    /// Install the libraries, headers, pkg-config and CMake files, the drop-ins and `nvtxr`
    /// into PREFIX (default /usr/local; DESTDIR is honoured).
    Install {
        /// Where the files are meant to live (and what they refer to).
        #[arg(long, env = "PREFIX", default_value = "/usr/local")]
        prefix: PathBuf,
        /// A staging root the files go under instead (packaging).
        #[arg(long, env = "DESTDIR")]
        destdir: Option<PathBuf>,
    },
    /// The C ABI against NVIDIA's header and libnvtx3interop (ns and callgrind instructions).
    Bench,
    /// The recording tool's cost per event, beside the bare clock reads.
    BenchRecord,
    /// The 10^7- and 10^8-event loop: per-event tail latency while recording, each
    /// format's size, conversion time and memory.
    BenchScale,
    /// The Python package against NVIDIA's `nvtx` package.
    BenchPython,
    /// The `tracing` layer's cost.
    BenchTracing,
    /// Build nvtxr and its tools; print where they are, as shell assignments.
    Artifacts,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// `cargo run [--release] -q -p PACKAGE --bin NAME`.
fn cargo_run(package: &str, name: &str, release: bool) -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.arg("run");
    if release {
        c.arg("--release");
    }
    c.args(["-q", "-p", package, "--bin", name]);
    c
}

/// A workflow of `xtask/workflows` (the demo, the benchmarks).
fn workflow(name: &str, release: bool) -> Command {
    cargo_run("nvtxr-workflows", name, release)
}

/// Installs into `prefix` (under `destdir`, as staged packaging wants).
fn install(prefix: PathBuf, destdir: Option<PathBuf>) -> ExitCode {
    let base = xtask::install::install(&prefix, destdir.as_deref());
    println!(
        "installed nvtxr {} into {}",
        xtask::install::nvtxr_version(),
        base.display()
    );
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let mut command = match Cli::parse().workflow {
        Workflow::Install { prefix, destdir } => {
            return install(prefix, destdir.filter(|d| !d.as_os_str().is_empty()))
        }
        Workflow::Demo => workflow("demo", false),
        Workflow::Test => {
            let mut c = Command::new("bash");
            c.arg("tests/run-all.sh");
            c
        }
        Workflow::Bench => workflow("bench", true),
        Workflow::BenchRecord => workflow("bench_record", true),
        Workflow::BenchScale => workflow("bench_scale", true),
        Workflow::BenchPython => workflow("bench_python", true),
        Workflow::BenchTracing => workflow("bench_tracing", true),
        Workflow::Artifacts => cargo_run("nvtxr-harness", "artifacts", true),
    };
    match command.current_dir(root()).status() {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => ExitCode::from(s.code().unwrap_or(1) as u8),
        Err(e) => {
            eprintln!("cargo xtask: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
