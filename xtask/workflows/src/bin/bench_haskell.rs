//! The Haskell binding's cost: `cargo xtask bench-haskell`. Builds and runs
//! `bindings/haskell/bench/Bench.hs` (cabal's `overhead` benchmark) with no
//! tool and with a do-nothing tool (the event-log tool in `null` mode), in
//! one run, and prints a Markdown table of ns and bytes allocated per call,
//! beside the raw foreign calls and the floor under `withRange` (the raw
//! push and pop inside the masking that keeps a range balanced). Says so
//! and prints no table when GHC or cabal is missing. Pass `--quick` for a
//! short smoke run (10,000 calls per operation).

use nvtxr_harness::{cabal, have_haskell, with_do_nothing_tool};
use std::process::Command;

/// `(operation, ns, bytes)` per line of one run of `calls` calls per operation.
fn run(bench: &str, tool: bool, calls: &str) -> Vec<(String, f64, f64)> {
    let mut cmd = Command::new(bench);
    cmd.arg(calls);
    with_do_nothing_tool(&mut cmd, tool);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "  name    12.34 ns    16.0 B"
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.strip_suffix(" B")?;
            let (rest, bytes) = l.rsplit_once(' ')?;
            let (name, ns) = rest.trim_end().strip_suffix(" ns")?.rsplit_once(' ')?;
            Some((
                name.trim().to_string(),
                ns.parse().ok()?,
                bytes.parse().ok()?,
            ))
        })
        .collect()
}

fn main() {
    let calls = if std::env::args().any(|a| a == "--quick") {
        "10000"
    } else {
        "1000000"
    };
    if !have_haskell() {
        println!("(GHC, cabal or pkg-config not installed: no Haskell figures; `bash bindings/haskell/test.sh` installs them)");
        return;
    }
    let built = cabal(&["build", "overhead"]).and_then(|_| cabal(&["list-bin", "overhead"]));
    let bench = match built {
        Ok(out) => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Err(why) => panic!("the Haskell benchmark does not build: {why}"),
    };
    let (none, null) = (run(&bench, false, calls), run(&bench, true, calls));
    let raw = null
        .iter()
        .find(|(name, ..)| name == "raw foreign calls: push+pop")
        .map(|&(_, ns, _)| ns)
        .expect("the raw push+pop row");
    println!("| operation | no tool: ns (bytes) | do-nothing tool: ns (bytes) | with the tool / raw push+pop |");
    println!("|---|---|---|---|");
    for ((name, ns, bytes), (_, tool_ns, tool_bytes)) in none.iter().zip(&null) {
        println!(
            "| {name} | {ns:.2} ({bytes:.0}) | {tool_ns:.2} ({tool_bytes:.0}) | {:.2}x |",
            tool_ns / raw
        );
    }
}
