//! The `tracing` layer's cost: `cargo run --release -q -p nvtxr-harness --bin
//! bench_tracing`. Runs `bindings/tracing/examples/bench.rs` with no tool and
//! with a do-nothing tool (the event-log tool in `null` mode), in one run, and
//! prints a Markdown table of ns per operation.

use nvtxr_harness::{artifacts, root};
use std::collections::BTreeMap;
use std::process::Command;

fn run(tool: bool) -> BTreeMap<String, String> {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root())
        .args([
            "run",
            "--release",
            "-q",
            "-p",
            "nvtxr-tracing",
            "--example",
            "bench",
        ])
        .env_remove("NVTX_INJECTION64_PATH");
    if tool {
        cmd.env("NVTX_INJECTION64_PATH", &artifacts().event_log)
            .env("NVTXR_EVENT_LOG_MODE", "null");
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

fn main() {
    let (none, null) = (run(false), run(true));
    println!("| operation | no tool (ns) | do-nothing tool (ns) |");
    println!("|---|---|---|");
    for (name, ns) in &none {
        println!("| {name} | {ns} | {} |", null[name]);
    }
}
