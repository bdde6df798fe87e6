//! The `tracing` layer's cost: `cargo xtask bench-tracing`. Runs `bindings/tracing/examples/bench.rs` and, beside it,
//! the same measurements of NVIDIA's `nvtx` crate's layer
//! (`bindings/tracing/compare`, built when libclang is installed), each with
//! no tool and with a do-nothing tool (the event-log tool in `null` mode), in
//! one run, and prints a Markdown table of ns per operation and, with the
//! tool, instructions per operation (callgrind, where valgrind is installed).
//! Pass `--quick` for a short smoke run (20,000 calls per operation, once).

use nvtxr_harness::{callgrind_total, have_tool, root, with_do_nothing_tool, work_dir};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// Calls per operation under callgrind.
const COUNTED_CALLS: u32 = 20_000;

/// One benchmark program: how cargo builds it and where the binary lands.
struct Program {
    cargo: Vec<String>,
    binary: PathBuf,
    /// Its crate's name, as callgrind names its `timing::time`.
    krate: &'static str,
}

/// Builds `program`; `false` if it does not build.
fn build(program: &Program) -> bool {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(root())
        .args(["build", "--release", "-q"])
        .args(&program.cargo)
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    out.status.success()
}

/// `name -> ns` from one timed run (short with `quick`).
fn timings(program: &Program, tool: bool, quick: bool) -> BTreeMap<String, String> {
    let mut cmd = Command::new(&program.binary);
    with_do_nothing_tool(&mut cmd, tool);
    if quick {
        cmd.env("BENCH_CALLS", COUNTED_CALLS.to_string());
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `name -> instructions per call` with the tool: callgrind dumps its
/// counts after each `timing::time`, which prints the operation's name.
fn instructions(program: &Program) -> BTreeMap<String, f64> {
    let dir = work_dir().join(format!("bench-tracing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let time = format!("{}::timing::time", program.krate);
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", "-q", "--collect-atstart=no"])
        .arg(format!("--toggle-collect={time}"))
        .arg(format!("--dump-after={time}"))
        .arg(format!("--callgrind-out-file={}", dir.join("cg").display()))
        .arg(&program.binary)
        .env("BENCH_CALLS", COUNTED_CALLS.to_string());
    with_do_nothing_tool(&mut cmd, true);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(k, _)| k.to_string())
        .collect();
    // cg.1, cg.2, ...: one dump per operation, in order.
    let counts = (1..=names.len()).map(|i| callgrind_total(&dir.join(format!("cg.{i}"))));
    let figures = names
        .iter()
        .cloned()
        .zip(counts.map(|n| n / f64::from(COUNTED_CALLS + 1)))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    figures
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let target = |dir: &str| root().join(dir);
    let ours = Program {
        cargo: ["-p", "nvtxr-tracing", "--example", "bench", "--target-dir"]
            .map(String::from)
            .into_iter()
            .chain([target("target").display().to_string()])
            .collect(),
        binary: target("target/release/examples/bench"),
        krate: "bench",
    };
    let theirs = Program {
        cargo: [
            "--manifest-path",
            "bindings/tracing/compare/Cargo.toml",
            "--target-dir",
        ]
        .map(String::from)
        .into_iter()
        .chain([target("target/compare").display().to_string()])
        .collect(),
        binary: target("target/compare/release/nvtx-layer-bench"),
        krate: "nvtx_layer_bench",
    };
    assert!(build(&ours), "nvtxr-tracing's bench does not build");
    let (none, null) = (timings(&ours, false, quick), timings(&ours, true, quick));
    let nvidia = build(&theirs).then(|| {
        (
            timings(&theirs, false, quick),
            timings(&theirs, true, quick),
        )
    });
    if nvidia.is_none() {
        println!("(NVIDIA's nvtx crate did not build: it needs libclang, `apt-get install libclang-dev`)\n");
    }
    let counted = have_tool("valgrind");
    let counts = counted.then(|| {
        (
            instructions(&ours),
            nvidia.as_ref().map(|_| instructions(&theirs)),
        )
    });
    if !counted {
        println!("(instructions not counted: no valgrind)\n");
    }
    println!("| operation | nvtxr-tracing, no tool (ns) | nvtxr-tracing, do-nothing tool (ns) | NVIDIA nvtx, no tool (ns) | NVIDIA nvtx, do-nothing tool (ns) | instructions with the tool: nvtxr-tracing / NVIDIA nvtx |");
    println!("|---|---|---|---|---|---|");
    for (name, ns) in &none {
        let (a, b) = nvidia
            .as_ref()
            .and_then(|(n, t)| Some((n.get(name)?.as_str(), t.get(name)?.as_str())))
            .unwrap_or(("-", "-"));
        let instructions = match &counts {
            None => "-".to_string(),
            Some((ours, theirs)) => {
                let o = ours[name];
                match theirs.as_ref().and_then(|t| t.get(name)) {
                    Some(t) => format!("{o:.0} / {t:.0} ({:.2}x)", o / t),
                    None => format!("{o:.0} / -"),
                }
            }
        };
        println!(
            "| {name} | {ns} | {} | {a} | {b} | {instructions} |",
            null[name]
        );
    }
}
