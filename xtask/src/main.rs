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
        /// Keep the debug info, split off into `.debug/NAME.debug` beside each
        /// installed program and library (the files themselves are stripped).
        #[arg(long)]
        debug_info: bool,
    },
    /// The C ABI against NVIDIA's header and libnvtx3interop (ns and callgrind instructions);
    /// with --markdown, every benchmark but the scale one, written to docs/performance.md.
    Bench {
        /// Run every suite (C ABI, recording, Python, tracing, Haskell) and write their tables to
        /// docs/performance.md instead of printing the C ABI's.
        #[arg(long)]
        markdown: bool,
    },
    /// The recording tool's cost per event, beside the bare clock reads.
    BenchRecord,
    /// The 10^7- and 10^8-event loop: per-event tail latency while recording, each
    /// format's size, conversion time and memory.
    BenchScale,
    /// 256 simulated ranks, 10^8 events: per-rank Parquet, and each recipe
    /// of `nvtxr.recipes` on DuckDB and on a Dask cluster.
    BenchRanks,
    /// GPU records with no GPU (the test CUPTI): how fast they convert beside
    /// NVTX events, and their bytes.
    BenchGpu,
    /// The Python package against NVIDIA's `nvtx` package.
    BenchPython,
    /// The `tracing` layer's cost.
    BenchTracing,
    /// The Haskell binding's cost, beside the raw foreign calls.
    BenchHaskell,
    /// Build nvtxr and its tools; print where they are, as shell assignments.
    Artifacts,
    /// Build the Python wheel carrying the `nvtxr` command and its recording tool
    /// (needs maturin: `pip install maturin`); print its path.
    Wheel {
        /// Where the wheel goes.
        #[arg(long, default_value = "target/wheels")]
        out: PathBuf,
    },
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
fn install(prefix: PathBuf, destdir: Option<PathBuf>, debug_info: bool) -> ExitCode {
    let base = xtask::install::install(&prefix, destdir.as_deref(), debug_info);
    println!(
        "installed nvtxr {} into {}",
        xtask::install::nvtxr_version(),
        base.display()
    );
    ExitCode::SUCCESS
}

/// The suites of docs/performance.md: title, what it compares, its binary.
const SUITES: [(&str, &str, &str); 5] = [
    (
        "The C ABI",
        "Each operation through nvtxr (shared and static), NVIDIA's header-only NVTX3, \
         `libnvtx3interop.so.1`, and NVIDIA's headers over nvtxr's drop-in `libnvToolsExt.so.1`, \
         with no tool and with a do-nothing tool (the event-log tool in `null` mode): ns per call \
         (best of 5) and instructions per call (callgrind), the benchmark loop's own call included. \
         Instruction counts are the stable figures; compare timings as ratios within the run.",
        "bench",
    ),
    (
        "Recording",
        "The recording tool's cost per event on 1, 2 and 4 threads, beside no tool and a \
         do-nothing tool, and each call's tail latency while recording.",
        "bench_record",
    ),
    (
        "Python",
        "The `nvtxr` Python package against NVIDIA's `nvtx` package, same calls, same run.",
        "bench_python",
    ),
    (
        "tracing",
        "The `tracing` layer against NVIDIA's `nvtx` crate's layer.",
        "bench_tracing",
    ),
    (
        "Haskell",
        "The Haskell binding (`import NVTX`) against the raw foreign calls to nvtxr, and the floor \
         under `withRange`: the raw push and pop inside the masking that keeps a range balanced \
         under asynchronous exceptions. ns and bytes allocated per call, best of 5.",
        "bench_haskell",
    ),
];

/// `cargo xtask bench --markdown`: runs every suite of [`SUITES`] and writes
/// docs/performance.md from what they print.
fn performance_page() -> ExitCode {
    let mut page = String::from(
        "# Performance\n\nWritten by `cargo xtask bench --markdown` (do not edit): every figure \
         below comes from one run on this machine (2 cores, shared: timings move by ±20% between \
         runs; each table's ratios are measured within the run). The scale benchmark (10^7 and \
         10^8 events) is `cargo xtask bench-scale`, in [scale.md](scale.md); why the costs are \
         what they are is in [design.md](design.md#costs).\n",
    );
    for (title, about, binary) in SUITES {
        let output = workflow(binary, true)
            .current_dir(root())
            .stderr(std::process::Stdio::inherit())
            .output();
        let output = match output {
            Ok(o) if o.status.success() => o,
            Ok(o) => {
                eprintln!("cargo xtask: {binary} failed ({})", o.status);
                return ExitCode::from(1);
            }
            Err(e) => {
                eprintln!("cargo xtask: {binary}: {e}");
                return ExitCode::from(1);
            }
        };
        page += &format!(
            "\n## {title}\n\n{about}\n\n{}\n",
            String::from_utf8_lossy(&output.stdout).trim_end()
        );
    }
    match std::fs::write(root().join("docs/performance.md"), page) {
        Ok(()) => {
            println!("wrote docs/performance.md");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cargo xtask: docs/performance.md: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let mut command = match Cli::parse().workflow {
        Workflow::Install {
            prefix,
            destdir,
            debug_info,
        } => {
            return install(
                prefix,
                destdir.filter(|d| !d.as_os_str().is_empty()),
                debug_info,
            )
        }
        Workflow::Demo => workflow("demo", false),
        Workflow::Test => {
            let mut c = Command::new("bash");
            c.arg("tests/run-all.sh");
            c
        }
        Workflow::Bench { markdown: true } => return performance_page(),
        Workflow::Bench { markdown: false } => workflow("bench", true),
        Workflow::BenchRecord => workflow("bench_record", true),
        Workflow::BenchScale => workflow("bench_scale", true),
        Workflow::BenchRanks => workflow("bench_ranks", true),
        Workflow::BenchGpu => workflow("bench_gpu", true),
        Workflow::BenchPython => workflow("bench_python", true),
        Workflow::BenchTracing => workflow("bench_tracing", true),
        Workflow::BenchHaskell => workflow("bench_haskell", true),
        Workflow::Artifacts => cargo_run("nvtxr-harness", "artifacts", true),
        Workflow::Wheel { out } => {
            return match xtask::wheel::wheel(&root().join(out)) {
                Ok(wheel) => {
                    println!("{}", wheel.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("cargo xtask wheel: {e}");
                    ExitCode::FAILURE
                }
            };
        }
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
