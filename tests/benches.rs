//! The benchmarks still run and print every figure (`--quick` runs; no
//! timing is checked, only that each figure is there), and what is stable
//! in them holds: NVIDIA's API over nvtxr's drop-in library takes exactly
//! `libnvtx3interop.so.1`'s instructions per call (callgrind).

use nvtxr_harness::{have_tool, root, work_dir};
use std::process::Command;

/// The table rows of a benchmark's `--quick` run, cells split.
fn rows(bin: &str) -> Vec<Vec<String>> {
    table(&quick_run(bin))
}

/// What a benchmark's `--quick` run prints.
fn quick_run(bin: &str) -> String {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root())
        .args([
            "run",
            "--release",
            "-q",
            "-p",
            "nvtxr-workflows",
            "--bin",
            bin,
        ])
        .arg("--target-dir")
        .arg(work_dir().join("cargo"))
        .args(["--", "--quick"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{bin}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The table rows of a benchmark's output, cells split.
fn table(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// `"4.03 (13)"` or `"1.01x (1.18x)"`: the figure and the one in brackets.
fn figures(cell: &str) -> (f64, f64) {
    let (a, b) = cell
        .split_once(" (")
        .unwrap_or_else(|| panic!("two figures: {cell:?}"));
    let number = |s: &str| -> f64 {
        s.trim_end_matches(')')
            .trim_end_matches('x')
            .parse()
            .unwrap_or_else(|_| panic!("{cell:?}"))
    };
    (number(a), number(b))
}

#[test]
fn the_call_benchmark_prints_every_figure_and_the_drop_in_costs_interops_instructions() {
    if !have_tool("valgrind") {
        return; // instructions are counted under callgrind
    }
    let rows = rows("bench");
    let headers: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == "operation").collect();
    assert_eq!(
        headers.len(),
        2,
        "a table with no tool and one with a tool: {rows:?}"
    );
    let header = headers[0];
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name:?}: {header:?}"))
    };
    let (interop, drop_in) = (column("NVIDIA interop"), column("nvtxr libnvToolsExt"));
    let ops: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] != "operation").collect();
    assert_eq!(ops.len(), 10, "5 operations × 2 tables: {ops:?}");
    for op in ops {
        assert_eq!(op.len(), header.len(), "{op:?}");
        for cell in &op[1..] {
            let (a, b) = figures(cell);
            assert!(
                a.is_finite() && a > 0.0 && b.is_finite() && b > 0.0,
                "{op:?}"
            );
        }
        assert_eq!(
            figures(&op[drop_in]).1,
            figures(&op[interop]).1,
            "instructions per call, drop-in and interop: {op:?}"
        );
    }
}

#[test]
fn the_recording_benchmark_prints_every_figure() {
    let stdout = quick_run("bench_record");
    if have_tool("valgrind") {
        let line = stdout
            .lines()
            .find(|l| l.starts_with("instructions per event"))
            .unwrap_or_else(|| panic!("{stdout}"));
        let counts: Vec<f64> = ["do-nothing tool ", "ring tool ", "recording "]
            .iter()
            .map(|name| {
                let at = line.find(name).unwrap_or_else(|| panic!("{line}")) + name.len();
                let digits: String = line[at..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().unwrap_or_else(|_| panic!("{line}"))
            })
            .collect();
        // Each tool does more than the one before it.
        assert!(
            counts[0] > 0.0 && counts[0] < counts[1] && counts[1] < counts[2],
            "{line}"
        );
    }
    let all = table(&stdout);
    let (rows, rest) = all.split_at(4);
    let (cpu, rest) = rest.split_at(4);
    let (tails, short) = rest.split_at(4);
    // Short-lived threads: a header and one row of figures.
    assert_eq!(short.len(), 2, "{all:?}");
    assert_eq!(short[1].len(), 6, "{:?}", short[1]);
    for cell in &short[1] {
        let v: f64 = cell.parse().unwrap_or_else(|_| panic!("{:?}", short[1]));
        assert!(v.is_finite() && v > 0.0, "{:?}", short[1]);
    }
    // Every call timed: p50 / p99.99 / max, and the calls over 100 µs.
    assert_eq!(tails.len(), 4, "a header and 1, 2 and 4 threads: {all:?}");
    for row in &tails[1..] {
        for cell in [&row[1], &row[3]] {
            let ns: Vec<u64> = cell.split(" / ").map(|n| n.parse().unwrap()).collect();
            assert!(ns.len() == 3 && ns[0] <= ns[1] && ns[1] <= ns[2], "{row:?}");
        }
        for cell in [&row[2], &row[4]] {
            cell.parse::<u64>().unwrap_or_else(|_| panic!("{row:?}"));
        }
    }
    // ns per event by tool, and the recorder's ratio to the ring tool.
    assert_eq!(rows[0].len(), 7, "{:?}", rows[0]);
    for (row, threads) in rows[1..].iter().zip(["1", "2", "4"]) {
        assert_eq!(row[0], threads);
        assert_eq!(row.len(), 7, "{row:?}");
        for cell in &row[1..] {
            let ns: f64 = cell.parse().unwrap_or_else(|_| panic!("{row:?}"));
            assert!(ns.is_finite() && ns > 0.0, "{row:?}");
        }
    }
    // User and system CPU per event (0 in a run this short, at the clock's
    // granularity).
    assert_eq!(cpu[0].len(), 3, "{:?}", cpu[0]);
    for (row, threads) in cpu[1..].iter().zip(["1", "2", "4"]) {
        assert_eq!(row[0], threads);
        for cell in &row[1..] {
            let ns: Vec<f64> = cell.split(" / ").map(|n| n.parse().unwrap()).collect();
            assert!(ns.len() == 2 && ns.iter().all(|v| *v >= 0.0), "{row:?}");
        }
    }
}

#[test]
fn the_tracing_benchmark_prints_every_figure() {
    let stdout = quick_run("bench_tracing");
    let rows = table(&stdout);
    assert_eq!(rows[0][0], "operation", "{stdout}");
    let ops: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        ops,
        [
            "event",
            "event with a changing field",
            "event with a field",
            "nvtxr push+pop (reference)",
            "span enter+exit",
            "span new+close"
        ]
    );
    // NVIDIA's layer is there where its crate builds (it needs libclang).
    let nvidia = !stdout.contains("NVIDIA's nvtx crate did not build");
    let counted = have_tool("valgrind");
    for row in &rows[1..] {
        assert_eq!(row.len(), 6, "{row:?}");
        for cell in &row[1..3] {
            assert!(cell.parse::<f64>().is_ok_and(|ns| ns > 0.0), "{row:?}");
        }
        let reference = row[0] == "nvtxr push+pop (reference)";
        for cell in &row[3..5] {
            assert!(
                cell.parse::<f64>().is_ok_and(|ns| ns > 0.0) == (nvidia && !reference),
                "{row:?}"
            );
        }
        // "ours / theirs (ratio)", "ours / -" without NVIDIA's layer, "-" uncounted.
        if !counted {
            assert_eq!(row[5], "-", "{row:?}");
            continue;
        }
        let (ours, theirs) = row[5]
            .split_once(" / ")
            .unwrap_or_else(|| panic!("{row:?}"));
        assert!(ours.parse::<f64>().is_ok_and(|n| n > 0.0), "{row:?}");
        assert_eq!(theirs.ends_with("x)"), nvidia && !reference, "{row:?}");
    }
}

#[test]
fn the_scale_benchmark_prints_every_figure() {
    let rows = rows("bench_scale");
    let recording: Vec<&Vec<String>> = rows.iter().filter(|r| r.len() == 4).collect();
    assert_eq!(
        recording.len(),
        2,
        "a header and the 10^5-event row: {rows:?}"
    );
    assert_eq!(recording[1][0], "100000");
    let formats: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r.len() == 8 && r[0] != "events")
        .collect();
    let names: Vec<&str> = formats.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(
        names,
        [
            "raw recording",
            "Perfetto",
            "Perfetto, -q (no summary)",
            "SQLite",
            "Chrome JSON",
            "HTML"
        ]
    );
    for row in &formats {
        let bytes: u64 = row[2].parse().unwrap_or_else(|_| panic!("{row:?}"));
        assert!(bytes > 0, "{row:?}");
        for cell in &row[4..] {
            assert!(
                cell == "–" || cell.parse::<f64>().is_ok_and(|v| v >= 0.0),
                "{row:?}"
            );
        }
    }
}

#[test]
fn the_ranks_benchmark_prints_every_figure_and_dask_agrees() {
    let rows = rows("bench_ranks");
    let export = rows
        .iter()
        .find(|r| r.len() == 7 && r[0] == "4")
        .unwrap_or_else(|| panic!("the 4-rank row: {rows:?}"));
    assert_eq!(export[1], "40000");
    for cell in &export[2..] {
        assert!(cell.parse::<f64>().is_ok_and(|v| v > 0.0), "{export:?}");
    }
    let recipes = ["pace", "stragglers", "summary", "gpu_projection"];
    let duckdb: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r.len() == 5 && recipes.contains(&r[0].as_str()))
        .collect();
    let rows_of: Vec<(&str, &str)> = duckdb
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    // 4 ranks × 25 steps; 25 steps; two range names; no GPU work.
    assert_eq!(
        rows_of,
        [
            ("pace", "100"),
            ("stragglers", "25"),
            ("summary", "2"),
            ("gpu_projection", "0")
        ]
    );
    let dask: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r.len() == 3 && recipes.contains(&r[0].as_str()))
        .collect();
    assert_eq!(dask.len(), 4, "{rows:?}");
    assert!(dask.iter().all(|r| r[2] == "same as on DuckDB"), "{dask:?}");
}

#[test]
fn the_gpu_benchmark_prints_every_figure() {
    let rows = rows("bench_gpu");
    let recorded: Vec<&Vec<String>> = rows.iter().filter(|r| r.len() == 8).collect();
    // The header, `--gpu off`, GPU recorded; 200 steps of 50 NVTX events,
    // 38 activities and 38 launches.
    assert_eq!(recorded.len(), 3, "{rows:?}");
    assert_eq!(recorded[1][1..3], ["10000", "0"], "{rows:?}");
    assert_eq!(recorded[2][1..3], ["10000", "15200"], "{rows:?}");
    for row in &recorded[1..] {
        for cell in &row[3..] {
            assert!(cell.parse::<f64>().is_ok(), "{row:?}");
        }
    }
    let bytes = |r: &Vec<String>| r[3].parse::<u64>().unwrap();
    assert!(bytes(recorded[2]) > bytes(recorded[1]), "{rows:?}");
    let figures: Vec<&Vec<String>> = rows.iter().filter(|r| r.len() == 3).collect();
    let names: Vec<&str> = figures.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        [
            "figure",
            "NVTX events per CPU-s",
            "GPU records per CPU-s",
            "bytes per GPU activity record, raw (`.pftrace`)"
        ]
    );
}
