//! `nvtxr record` end to end: producers other than nvtxr (NVIDIA's NVTX3
//! headers, NVIDIA's Python `nvtx`), a valid and properly nested trace, a
//! summary that matches it, several processes and threads, ranks, use
//! without the launcher, capture ranges and the terminal's table.

mod common;

use common::*;
use nvtxr_harness::{artifacts, compile_c, have_tool, python_nvtx, Producer};
use std::collections::BTreeMap;
use std::process::Command;

fn scratch(name: &str) -> common::Scratch {
    scratch_in("record", name)
}

#[test]
fn records_a_c_program_on_nvidias_header_only_nvtx3() {
    let exe = compile_c("differential.c", Producer::NvidiaHeader, &[]);
    let dir = scratch("nvidia-header");
    let out = record(&dir, &[], &[exe.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let trace = load(&dir.join("trace.json"));
    let ev = events(&trace);
    assert_eq!(
        names(&ev, "X"),
        ["epoch 1", "forward", "step", "load"],
        "push/pop ranges, by start"
    );
    assert_eq!(
        names(&ev, "i"),
        ["start", "checkpoint", "domain mark", "step"]
    );
    assert_eq!(names(&ev, "b"), ["async", "async full", "step"]);
    let forward = ev.iter().find(|e| e.name == "forward").unwrap();
    assert_eq!(forward.args["color"], "#ff0000");
    assert_eq!(forward.args["payload"], 3.0);
    assert_eq!(forward.args["category"], 1);
    assert_eq!(forward.args["category_name"], "compute");
    let epoch = ev.iter().find(|e| e.name == "epoch 1").unwrap();
    assert!(
        epoch.start <= forward.start && forward.end <= epoch.end,
        "forward nests in epoch 1"
    );
    let load_range = ev.iter().find(|e| e.name == "load").unwrap();
    assert_eq!(load_range.cat, "trainer");
    assert_eq!(load_range.args["domain"], "trainer");
    assert_eq!(load_range.args["category_name"], "io");
    let meta = trace["traceEvents"].as_array().unwrap();
    assert!(
        meta.iter()
            .any(|m| m["name"] == "thread_name" && m["args"]["name"] == "main"),
        "{trace}"
    );
    check_summary(&dir, &ev);
    // Columns are as wide as their widest figure: compare words, not spacing.
    let table = String::from_utf8_lossy(&out.stdout);
    let header: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("Time (%)"))
        .unwrap_or_else(|| panic!("{table}"))
        .split_whitespace()
        .collect();
    assert_eq!(
        header.join(" "),
        "Time (%) Total Time (ns) Instances Avg (ns) Med (ns) Min (ns) Max (ns) StdDev (ns) Style Range"
    );
    assert!(
        table.lines().any(|l| l
            .split_whitespace()
            .rev()
            .take(2)
            .eq(["trainer:load", "PushPop"])),
        "{table}"
    );
}

#[test]
fn the_terminal_table_shows_the_largest_rows_and_says_how_many_more() {
    let (dir, _) = recorded_program("differential.c", Producer::NvtxrShared, "rows");
    let report = |rows: &str| {
        let out = nvtxr(
            &[
                "report",
                "--rows",
                rows,
                "-o",
                dir.join("again.pftrace").to_str().unwrap(),
                "--csv",
                dir.join("all.csv").to_str().unwrap(),
                dir.join("rec").to_str().unwrap(),
            ],
            &[],
        );
        assert!(out.status.success(), "{}", text(&out));
        // The table: the lines after the rule under its header, cells
        // apart (the columns are as wide as the rows shown need).
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .skip_while(|l| !l.starts_with("---"))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    let every = report("0");
    let csv = std::fs::read_to_string(dir.join("all.csv")).unwrap();
    let n = csv.lines().count() - 1;
    assert!(n >= 4, "{csv}");
    assert_eq!(every.len(), n, "{every:?}");
    let two = report("2");
    assert_eq!(two[..2], every[..2], "the largest first, as with every row");
    assert_eq!(
        two[2..],
        [format!(
            "... and {} more rows (--rows 0 prints every one; --csv FILE writes them)",
            n - 2
        )],
    );
    assert_eq!(report(&n.to_string()), every, "nothing more to say");
}

#[test]
fn records_nvidias_python_nvtx_package() {
    let dir = scratch("python");
    let script = nvtxr_harness::root().join("record/cli/tests/nvtx_python_example.py");
    let python = nvtxr_harness::python();
    let out = record(
        &dir,
        &[],
        &[&python, script.to_str().unwrap()],
        &[("PYTHONPATH", python_nvtx().to_str().unwrap())],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("python workload: done"));
    let ev = events(&load(&dir.join("trace.json")));
    let ranges: Vec<(&str, &str)> = ev
        .iter()
        .filter(|e| e.ph == "X")
        .map(|e| (e.cat.as_str(), e.name.as_str()))
        .collect();
    let mut expected = vec![("python", "outer")];
    for _ in 0..3 {
        expected.extend([("python", "inner"), ("nvtx", "decorated")]);
    }
    expected.push(("nvtx", "pushed"));
    assert_eq!(ranges, expected);
    let inner: Vec<&Event> = ev.iter().filter(|e| e.name == "inner").collect();
    for (i, e) in inner.iter().enumerate() {
        assert_eq!(e.args["payload"], i as i64);
        assert_eq!(e.args["category_name"], "loop");
        assert_eq!(e.args["color"], "#ff0000");
    }
    let outer = ev.iter().find(|e| e.name == "outer").unwrap();
    assert_eq!(outer.args["payload"], 7);
    assert!(inner
        .iter()
        .all(|e| outer.start <= e.start && e.end <= outer.end));
    let mark = ev.iter().find(|e| e.ph == "i").unwrap();
    assert_eq!(
        (mark.name.as_str(), mark.args["payload"].as_f64()),
        ("a mark", Some(2.5))
    );
    assert_eq!(names(&ev, "b"), ["cross"]);
    check_summary(&dir, &ev);
}

#[test]
fn several_processes_give_one_trace_with_a_track_each() {
    let dir = scratch("processes");
    let out = record(
        &dir,
        &["-q"],
        &[scenarios().to_str().unwrap(), "processes"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let trace = load(&dir.join("trace.json"));
    let ev = events(&trace);
    let mut per_process: BTreeMap<u64, BTreeMap<String, usize>> = BTreeMap::new();
    for e in &ev {
        *per_process
            .entry(e.pid)
            .or_default()
            .entry(format!("{} {}", e.ph, e.name))
            .or_default() += 1;
    }
    let mut shapes: Vec<String> = per_process.values().map(|m| format!("{m:?}")).collect();
    shapes.sort();
    let worker = |name: &str| format!("{{\"X {name}\": 50, \"i tick\": 50}}");
    let mut expected = vec![
        "{\"X parent\": 1}".to_string(),
        worker("exec'd worker"),
        worker("forked worker 0"),
        worker("forked worker 1"),
        worker("forked worker 2"),
    ];
    expected.sort();
    assert_eq!(shapes, expected, "one process each, nothing lost or mixed");
    let process_names = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] == "process_name")
        .count();
    assert_eq!(process_names, 5);
}

#[test]
fn many_events_on_many_threads_are_all_written() {
    let dir = scratch("many");
    let out = record(&dir, &["-q"], &[scenarios().to_str().unwrap(), "many"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let ev = events(&load(&dir.join("trace.json")));
    for t in 0..4 {
        assert_eq!(count(&ev, "X", &format!("busy {t}")), 20000);
    }
    assert_eq!(count(&ev, "i", "tick"), 80000);
}

#[test]
fn works_without_the_launcher() {
    let dir = scratch("by-hand");
    let raw = dir.join("raw");
    let out = Command::new(scenarios())
        .arg("worker")
        .env(nvtxr_harness::INJECTION_PATH_VAR, &artifacts().record_tool)
        .env("NVTXR_RECORD_DIR", &raw)
        .output()
        .unwrap();
    assert!(out.status.success());
    let report = Command::new(&artifacts().nvtxr)
        .args(["report", "-q", "-o"])
        .arg(dir.join("trace.json"))
        .arg("--csv")
        .arg(dir.join("summary.csv"))
        .arg(&raw)
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report));
    let csv = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range");
    assert_eq!(lines.len(), 2, "{csv}");
    let cells: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(
        (cells[0], cells[2], cells[8], cells[9]),
        ("100.0", "50", "PushPop", ":exec'd worker"),
        "{csv}"
    );
}

#[test]
fn progress_line_on_a_terminal_only() {
    if !have_tool("script") {
        return;
    }
    let dir = scratch("progress");
    let nvtxr = artifacts().nvtxr.display().to_string();
    let trace = dir.join("trace.json").display().to_string();
    let command = format!("{nvtxr} record -o {trace} -- sleep 1.5");
    // `script` runs the command on a pseudo-terminal.
    let on_tty = Command::new("script")
        .args(["-qc", &command, "/dev/null"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&on_tty.stdout);
    assert!(
        shown.contains("\rnvtxr record: 1 s, 0.0 MiB recorded"),
        "{shown:?}"
    );
    assert!(
        shown.contains("\r\x1b[K"),
        "the line is cleared at the end: {shown:?}"
    );
    let piped = Command::new("sh").args(["-c", &command]).output().unwrap();
    assert!(
        !text(&piped).contains("MiB recorded"),
        "no progress line when not on a terminal"
    );
}

#[test]
fn threads_carry_their_os_name_unless_named_through_nvtx() {
    let (out, ev, dir) = scenario("thread_names", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let trace = load(&dir.join("trace.json"));
    let name_of = |range: &str| {
        let e = ev.iter().find(|e| e.name == range).unwrap();
        trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "thread_name" && m["tid"] == e.tid)
            .map(|m| m["args"]["name"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(name_of("os only"), "os-named");
    assert_eq!(name_of("both"), "nvtx-named");
}

#[test]
fn async_ids_are_unique_across_processes() {
    // `events` (in `scenario`) fails on a duplicate async id; both processes'
    // first range has tool id 1.
    let (out, ev, _) = scenario("async_ids", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(names(&ev, "b").len(), 2);
}

#[test]
fn python_multiprocessing_workers_lose_nothing_however_they_end() {
    let script = nvtxr_harness::root().join("record/cli/tests/multiprocessing_workload.py");
    let python = nvtxr_harness::python();
    for (context, pattern, tasks) in [
        ("fork", "with", 80),
        ("fork", "close", 80),
        ("forkserver", "with", 80),
        ("forkserver", "close", 80),
        ("spawn", "with", 80),
        ("spawn", "close", 80),
        ("fork", "bare", 20),
    ] {
        let dir = scratch(&format!("mp-{context}-{pattern}"));
        let out = record(
            &dir,
            &["-q"],
            &[&python, script.to_str().unwrap(), context, pattern],
            &[("PYTHONPATH", python_nvtx().to_str().unwrap())],
        );
        assert!(out.status.success(), "{context} {pattern}: {}", text(&out));
        assert!(text(&out).contains("workload done"));
        let ev = events(&load(&dir.join("trace.json")));
        let mut seen: Vec<usize> = ev
            .iter()
            .filter(|e| e.cat == "workers")
            .map(|e| e.name.strip_prefix("task ").unwrap().parse().unwrap())
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            (0..tasks).collect::<Vec<_>>(),
            "{context} {pattern}: every task's range, once"
        );
        assert_eq!(count(&ev, "X", "main"), 1);
    }
}

#[test]
fn capture_range_and_domain_selection_as_nsight_systems_has_them() {
    let exe = compile_c("differential.c", Producer::NvidiaHeader, &[]);
    let dir = scratch("select");
    let out = record(
        &dir,
        &[
            "--capture-range",
            "epoch 1",
            "--time-unit",
            "us",
            "--separators",
        ],
        &[exe.to_str().unwrap()],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let ev = events(&load(&dir.join("trace.json")));
    assert_eq!(
        names(&ev, "X"),
        ["epoch 1", "forward"],
        "only what starts inside epoch 1"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("Total Time (us)"), "{table}");
    assert!(
        table.contains("PushPop  :epoch 1"),
        "default-domain ranges named as nvtx_sum names them: {table}"
    );
    check_summary(&dir, &ev);
    let out = record(
        &dir,
        &["-q", "--nvtx-domain-exclude", "default"],
        &[exe.to_str().unwrap()],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let ev = events(&load(&dir.join("trace.json")));
    assert!(ev.iter().all(|e| e.cat == "trainer"), "{ev:?}");
    assert_eq!(names(&ev, "X"), ["step", "load"]);
    let out = record(
        &dir,
        &["-q", "--nvtx-domain-include", "default"],
        &[exe.to_str().unwrap()],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let ev = events(&load(&dir.join("trace.json")));
    assert!(ev.iter().all(|e| e.cat == "nvtx"), "{ev:?}");
}

#[test]
fn thousands_separators_on_request() {
    let exe = compile_c("differential.c", Producer::NvidiaHeader, &[]);
    let dir = scratch("separators");
    let out = record(
        &dir,
        &["--separators", "--csv"],
        &[exe.to_str().unwrap()],
        &[],
    );
    // `--csv` needs a value: a clear usage error, nothing run.
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let csv = dir.join("summary.csv");
    let out = record(
        &dir,
        &["-q", "--separators", "--csv", csv.to_str().unwrap()],
        &[scenarios().to_str().unwrap(), "many"],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(
        csv.contains("\"20,000\",") && csv.contains(",PushPop,:busy 0"),
        "{csv}"
    );
}

#[test]
fn torchrun_style_ranks_get_a_recording_each_named_by_rank() {
    let dir = scratch("ranks");
    let python = nvtxr_harness::python();
    let script = dir.join("rank.py");
    std::fs::write(
        &script,
        "import nvtx, os\nwith nvtx.annotate(f\"step on rank {os.environ['RANK']}\"):\n    pass\n",
    )
    .unwrap();
    let output = dir.join("run.%q{RANK}.json");
    let runs: Vec<_> = (0..2)
        .map(|rank| {
            Command::new(&artifacts().nvtxr)
                .args(["record", "-q", "-o"])
                .arg(&output)
                .arg("--")
                .arg(&python)
                .arg(&script)
                .env_remove(nvtxr_harness::INJECTION_PATH_VAR)
                .env("PYTHONPATH", python_nvtx())
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", "2")
                .spawn()
                .unwrap()
        })
        .collect();
    for mut run in runs {
        assert!(run.wait().unwrap().success());
    }
    for rank in 0..2 {
        let trace = load(&dir.join(format!("run.{rank}.json")));
        let ev = events(&trace);
        assert_eq!(names(&ev, "X"), [format!("step on rank {rank}")]);
        let meta = trace["traceEvents"].as_array().unwrap();
        let name = meta
            .iter()
            .find(|m| m["name"] == "process_name")
            .map(|m| m["args"]["name"].as_str().unwrap().to_string())
            .unwrap();
        assert!(name.starts_with(&format!("rank {rank} (")), "{name}");
        assert!(
            meta.iter().any(|m| m["name"] == "process_labels"
                && m["args"]["labels"]
                    .as_str()
                    .unwrap()
                    .starts_with("2 ranks; ")),
            "{trace}"
        );
    }
    // A name that needs a variable nobody set is a clear usage error.
    let out = Command::new(&artifacts().nvtxr)
        .args([
            "record",
            "-o",
            "run.%q{NVTXR_TEST_NOT_SET}.json",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("NVTXR_TEST_NOT_SET"), "{}", text(&out));
}

/// The names of the events of phase `ph`, in order.
pub fn names<'a>(events: &'a [Event], ph: &str) -> Vec<&'a str> {
    events
        .iter()
        .filter(|e| e.ph == ph)
        .map(|e| e.name.as_str())
        .collect()
}
