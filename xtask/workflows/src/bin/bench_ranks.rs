//! Many ranks: `cargo xtask bench-ranks`.
//!
//! Records 256 simulated ranks of `tests/c/rank_steps.c` (4×10^5 events
//! each, 10^8 in all; 4 ranks of 10^4 with `--quick`), each under its own
//! `nvtxr record` with `RANK` set as torchrun sets it, and converts each
//! rank's recording as its `nvtxr record --parquet` would: the `.pftrace`
//! alone, and with its Parquet part (in turn first), so the Parquet
//! export's own CPU time is the difference. Then runs each recipe of
//! `nvtxr.recipes` on DuckDB over the whole directory (its wall time and
//! peak memory, a process each), and every recipe on a Dask `LocalCluster`
//! of 2 workers, checked equal to DuckDB's answers. Each rank's raw
//! recording is removed once converted (10^8 events of them would not fit
//! this machine's disk).

use nvtxr_harness::{
    artifacts, bytes_on_disk, check, compile_c, measured, python, root, work_dir, Producer,
};
use std::path::Path;
use std::process::Command;

/// (ranks, steps per rank, layers per step): full and `--quick`.
const SIZES: [(usize, u64, u64); 2] = [(256, 1000, 199), (4, 25, 199)];

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (ranks, steps, layers) = SIZES[usize::from(quick)];
    let per_rank = steps * (2 + 2 * layers);
    let events = per_rank * ranks as u64;
    let exe = compile_c("rank_steps.c", Producer::NvtxrShared, &[]);
    let nvtxr = &artifacts().nvtxr;
    let dir = work_dir().join(format!("bench-ranks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let parquet = dir.join("pq");
    let (mut pftrace_cpu, mut both_cpu, mut both_rss) = (0.0, 0.0, 0f64);
    for rank in 0..ranks {
        let rec = dir.join("rec");
        let (_, _) = measured(
            Command::new(nvtxr)
                .args(["record", "-q", "--keep"])
                .arg(&rec)
                .args(["-o", "/dev/null", "--"])
                .arg(&exe)
                .args([steps.to_string(), layers.to_string()])
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", ranks.to_string()),
        );
        let report = |parquet: Option<&Path>| {
            let mut cmd = Command::new(nvtxr);
            cmd.args(["report", "-q", "-o"]).arg(dir.join("t.pftrace"));
            if let Some(p) = parquet {
                cmd.arg("--parquet").arg(p);
            }
            measured(cmd.arg(&rec)).0
        };
        // Whichever conversion runs second costs more (about 7 ms a rank
        // here, system time, most of it the kernel zeroing fresh memory),
        // so they take turns.
        let (pftrace, both) = if rank % 2 == 0 {
            (report(None), report(Some(&parquet)))
        } else {
            let both = report(Some(&parquet));
            (report(None), both)
        };
        pftrace_cpu += pftrace.cpu;
        both_cpu += both.cpu;
        both_rss = both_rss.max(both.rss_mb);
        std::fs::remove_dir_all(&rec).unwrap();
    }
    let parquet_cpu = (both_cpu - pftrace_cpu).max(1e-3);
    let bytes = bytes_on_disk(&parquet);
    println!("| ranks | events | `.pftrace` events per CPU-s | Parquet events per CPU-s | Parquet bytes | bytes per event | peak RSS of a rank's report (MB) |");
    println!("|---|---|---|---|---|---|---|");
    println!(
        "| {ranks} | {events} | {:.2e} | {:.2e} | {bytes} | {:.2} | {both_rss:.0} |",
        events as f64 / pftrace_cpu,
        events as f64 / parquet_cpu,
        bytes as f64 / events as f64
    );

    // The recipes, from nvtxr's source (its recipes module on PYTHONPATH
    // under a name of its own: no native module needed), in the tests'
    // Python with DuckDB, pandas and Dask.
    let python = python();
    check(
        "pip install duckdb pandas dask[distributed]",
        Command::new(&python)
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(["duckdb", "pandas", "dask[distributed]"])
            .output()
            .unwrap(),
    );
    let modules = dir.join("modules");
    std::fs::create_dir_all(&modules).unwrap();
    std::os::unix::fs::symlink(
        root().join("bindings/python/python/nvtxr/recipes.py"),
        modules.join("nvtxr_recipes.py"),
    )
    .unwrap();
    let script = root().join("xtask/workflows/bench_ranks.py");
    let run = |what: &str| {
        measured(
            Command::new(&python)
                .arg(&script)
                .arg(&parquet)
                .arg(what)
                .env("PYTHONPATH", &modules)
                // Dask's scratch folder in the benchmark's own, not /tmp.
                .env("TMPDIR", &dir),
        )
    };
    println!();
    println!("| recipe on DuckDB | rows | wall (s) | CPU (s) | peak RSS (MB) |");
    println!("|---|---|---|---|---|");
    for recipe in ["pace", "stragglers", "summary", "gpu_projection"] {
        let (cost, out) = run(recipe);
        println!(
            "| {recipe} | {} | {:.1} | {:.1} | {:.0} |",
            out.trim(),
            cost.wall,
            cost.cpu,
            cost.rss_mb
        );
    }
    println!();
    println!("| recipe on a Dask LocalCluster (2 workers) | wall (s) | answer |");
    println!("|---|---|---|");
    let (_, out) = run("dask");
    for line in out.lines() {
        let cells: Vec<&str> = line.split_whitespace().collect();
        println!(
            "| {} | {} | {} as on DuckDB |",
            cells[0], cells[1], cells[2]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
