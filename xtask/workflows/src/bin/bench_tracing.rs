//! The `tracing` layer's cost: `cargo xtask bench-tracing`. Runs `bindings/tracing/examples/bench.rs` and, beside it,
//! the same measurements of NVIDIA's `nvtx` crate's layer
//! (`bindings/tracing/compare`, built when libclang is installed), each with
//! no tool and with a do-nothing tool (the event-log tool in `null` mode), in
//! one run, and prints a Markdown table of ns per operation.

use nvtxr_harness::{artifacts, root};
use std::collections::BTreeMap;
use std::process::Command;

/// `cargo run --release -q ARGS` with or without the do-nothing tool; `None` if it fails.
fn run(args: &[&str], tool: bool) -> Option<BTreeMap<String, String>> {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root())
        .args(["run", "--release", "-q"])
        .args(args)
        .env_remove(nvtxr_harness::INJECTION_PATH_VAR);
    if tool {
        cmd.env(nvtxr_harness::INJECTION_PATH_VAR, &artifacts().event_log)
            .env("NVTXR_EVENT_LOG_MODE", "null");
    }
    let out = cmd.output().unwrap();
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.rsplit_once(' '))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

fn main() {
    let ours = ["-p", "nvtxr-tracing", "--example", "bench"];
    let (none, null) = (run(&ours, false).unwrap(), run(&ours, true).unwrap());
    let target = root().join("target/compare");
    let target = target.to_str().unwrap();
    let theirs = [
        "--manifest-path",
        "bindings/tracing/compare/Cargo.toml",
        "--target-dir",
        target,
    ];
    let nvidia = run(&theirs, false).zip(run(&theirs, true));
    if nvidia.is_none() {
        println!("(NVIDIA's nvtx crate did not build: it needs libclang, `apt-get install libclang-dev`)\n");
    }
    println!("| operation | nvtxr-tracing, no tool (ns) | nvtxr-tracing, do-nothing tool (ns) | NVIDIA nvtx, no tool (ns) | NVIDIA nvtx, do-nothing tool (ns) |");
    println!("|---|---|---|---|---|");
    for (name, ns) in &none {
        let (a, b) = nvidia
            .as_ref()
            .and_then(|(n, t)| Some((n.get(name)?.as_str(), t.get(name)?.as_str())))
            .unwrap_or(("-", "-"));
        println!("| {name} | {ns} | {} | {a} | {b} |", null[name]);
    }
}
