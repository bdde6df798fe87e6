//! The benchmark: `cargo xtask bench`.
//!
//! Runs `tests/c/bench.c` through five producers (nvtxr shared, nvtxr
//! static, NVIDIA's header-only NVTX3, NVIDIA's `libnvtx3interop.so.1`, and
//! NVIDIA's headers over nvtxr's drop-in `libnvToolsExt.so.1`), with no tool
//! and with a do-nothing tool, in one run; prints ns per call, the ratios of
//! nvtxr to NVIDIA's two, and instructions per call (callgrind).
//! Pass `--quick` for a short smoke run.

use nvtxr_harness::{compile_c, run, run_under, work_dir, Producer, Tool};
use std::collections::BTreeMap;

const PRODUCERS: [Producer; 5] = [
    Producer::NvtxrShared,
    Producer::NvtxrStatic,
    Producer::NvidiaHeader,
    Producer::NvidiaInterop,
    Producer::NvtxrCompat,
];

/// `op -> value` from one bench run.
type Figures = BTreeMap<String, f64>;

fn timings(exe: &std::path::Path, tool: Tool, iterations: &str) -> Vec<(String, f64)> {
    let r = run(exe, &[iterations], tool, &[]);
    assert!(r.success, "{r:?}");
    r.stdout
        .lines()
        .map(|l| {
            let (op, ns) = l.split_once('\t').expect("op\\tns");
            (op.to_string(), ns.parse().unwrap())
        })
        .collect()
}

fn instructions(exe: &std::path::Path, tool: Tool, iterations: u64) -> Figures {
    let dir = work_dir().join(format!("callgrind-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = format!("--callgrind-out-file={}/cg", dir.display());
    let r = run_under(
        &["valgrind", "--tool=callgrind", "-q", &out],
        exe,
        &[&iterations.to_string()],
        tool,
        &[],
    );
    assert!(r.success, "{r:?}");
    let mut figures = Figures::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let op = text
            .lines()
            .find_map(|l| l.strip_prefix("desc: Trigger: Client Request: "));
        let total = text.lines().find_map(|l| {
            l.strip_prefix("totals: ")
                .or_else(|| l.strip_prefix("summary: "))
        });
        if let (Some(op), Some(total)) = (op, total) {
            let ir: f64 = total.split_whitespace().next().unwrap().parse().unwrap();
            figures.insert(op.to_string(), ir / iterations as f64);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    figures
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (iterations, cg_iterations) = if quick {
        ("20000", 1000)
    } else {
        ("2000000", 100000)
    };
    let exes: Vec<_> = PRODUCERS
        .iter()
        .map(|&p| (p, compile_c("bench.c", p, &[])))
        .collect();
    for (tool_name, tool) in [
        ("no tool", Tool::None),
        ("do-nothing tool", Tool::EventLog("null")),
    ] {
        let mut ns: BTreeMap<Producer, Figures> = BTreeMap::new();
        let mut ir: BTreeMap<Producer, Figures> = BTreeMap::new();
        let mut ops = Vec::new();
        for (producer, exe) in &exes {
            let t = timings(exe, tool, iterations);
            ops = t.iter().map(|(op, _)| op.clone()).collect();
            ns.insert(*producer, t.into_iter().collect());
            ir.insert(*producer, instructions(exe, tool, cg_iterations));
        }
        println!("\n### {tool_name}: ns per call (instructions per call)\n");
        println!(
            "| operation | {} | nvtxr shared / interop | nvtxr static / header | drop-in / interop |",
            PRODUCERS.map(Producer::label).join(" | ")
        );
        println!("|---{}|", "|---".repeat(PRODUCERS.len() + 3));
        for op in &ops {
            let cell = |p: Producer| {
                format!(
                    "{:.2} ({:.0})",
                    ns[&p][op],
                    ir[&p].get(op).copied().unwrap_or(f64::NAN)
                )
            };
            let ratio = |a: Producer, b: Producer| {
                format!(
                    "{:.2}x ({:.2}x)",
                    ns[&a][op] / ns[&b][op],
                    ir[&a].get(op).copied().unwrap_or(f64::NAN)
                        / ir[&b].get(op).copied().unwrap_or(f64::NAN)
                )
            };
            println!(
                "| {op} | {} | {} | {} | {} |",
                PRODUCERS.map(cell).join(" | "),
                ratio(Producer::NvtxrShared, Producer::NvidiaInterop),
                ratio(Producer::NvtxrStatic, Producer::NvidiaHeader),
                ratio(Producer::NvtxrCompat, Producer::NvidiaInterop),
            );
        }
    }
}
