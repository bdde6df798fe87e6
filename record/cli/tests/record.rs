//! `nvtxr record` end to end: producers other than nvtxr (NVIDIA's NVTX3
//! headers, NVIDIA's Python `nvtx`), a valid and properly nested trace, a
//! summary that matches it, several processes, signals, exit() from a thread,
//! write failures, use without the launcher, and the HTML timeline in
//! headless Chromium.

mod common;

use common::*;
use nvtxr_harness::{artifacts, compile_c, have_tool, python_nvtx, Producer};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    scratch_in("record", name)
}

/// Compiles `tests/c/<source>` for `producer` and records it into scratch
/// folder `name`: the trace `t.json`, the recording kept in `rec`. Returns
/// the folder and what `nvtxr record` printed (the program's output
/// included); the recording succeeded.
fn recorded_program(source: &str, producer: Producer, name: &str) -> (PathBuf, Output) {
    recorded_program_with(source, producer, name, &[])
}

/// [`recorded_program`], compiled with `extra` arguments.
fn recorded_program_with(
    source: &str,
    producer: Producer,
    name: &str,
    extra: &[&str],
) -> (PathBuf, Output) {
    let exe = compile_c(source, producer, extra);
    let dir = scratch(name);
    let out = nvtxr(
        &[
            "record",
            "--keep",
            dir.join("rec").to_str().unwrap(),
            "-o",
            dir.join("t.json").to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{source} ({producer:?}): {}",
        text(&out)
    );
    let said = format!(
        "nvtxr: the recording is kept in {}",
        dir.join("rec").display()
    );
    assert!(text(&out).contains(&said), "{}", text(&out));
    (dir, out)
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
fn sigterm_keeps_what_was_recorded() {
    let dir = scratch("sigterm");
    let out = record(
        &dir,
        &["-q"],
        &[scenarios().to_str().unwrap(), "sigterm"],
        &[],
    );
    assert_eq!(out.status.code(), Some(128 + 15), "{}", text(&out));
    assert!(text(&out).contains("killed by signal 15"));
    let ev = events(&load(&dir.join("trace.json")));
    assert_eq!(count(&ev, "X", "before signal"), 10);
    assert_eq!(
        count(&ev, "X", "open at signal"),
        1,
        "the open range, closed at the process's last event"
    );
}

#[test]
fn exit_from_another_thread_still_writes_every_thread() {
    let dir = scratch("thread-exit");
    let out = record(
        &dir,
        &["-q"],
        &[scenarios().to_str().unwrap(), "thread_exit"],
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let ev = events(&load(&dir.join("trace.json")));
    assert_eq!(count(&ev, "X", "thread work"), 5);
    assert_eq!(
        count(&ev, "X", "main waits"),
        1,
        "still open at exit: closed at the last event"
    );
}

#[test]
fn write_failure_is_reported_and_the_recording_kept() {
    let exe = scenarios();
    // A place that cannot be written is refused before the program runs.
    let never = scratch("never-run").join("ran");
    let out = Command::new(&artifacts().nvtxr)
        .args([
            "record",
            "-q",
            "-o",
            "/nonexistent/dir/trace.json",
            "--",
            "touch",
        ])
        .arg(&never)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(
        text(&out),
        "nvtxr: cannot write /nonexistent/dir/trace.json: the directory /nonexistent/dir does not exist\n"
    );
    assert!(!never.exists(), "the program did not run");
    // A write that fails after the run keeps the recording.
    {
        let (target, why) = ("/dev/full", "No space left on device");
        let out = Command::new(&artifacts().nvtxr)
            .args([
                "record",
                "-q",
                "-o",
                target,
                "--",
                exe.to_str().unwrap(),
                "worker",
            ])
            .output()
            .unwrap();
        let msg = text(&out);
        assert_eq!(out.status.code(), Some(1), "{msg}");
        assert!(
            msg.contains(&format!("nvtxr: cannot write {target}: {why}")),
            "{msg}"
        );
        let kept = kept_recording_in(&msg).expect("says where the recording is");
        let dir = scratch("kept");
        let again = Command::new(&artifacts().nvtxr)
            .args(["report", "-q", "-o"])
            .arg(dir.join("trace.json"))
            .arg(kept)
            .output()
            .unwrap();
        assert!(again.status.success(), "{}", text(&again));
        assert_eq!(
            count(
                &events(&load(&dir.join("trace.json"))),
                "X",
                "exec'd worker"
            ),
            50
        );
        std::fs::remove_dir_all(kept).unwrap();
    }
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
fn html_timeline_renders_the_ranges_in_headless_chromium() {
    if !have_tool("chromium") {
        return;
    }
    let exe = compile_c("example.c", Producer::NvtxrShared, &[]);
    let dir = scratch("html");
    let out = record(&dir, &["-q", "--html"], &[exe.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let page = dir.join("trace.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "the page needs no network"
    );
    let dom = dump_dom(&dir, &format!("file://{}", page.display()));
    assert_draws_the_example(&dom);
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
fn html_timeline_of_a_long_trace_draws_about_a_bar_per_pixel() {
    if !have_tool("chromium") {
        return;
    }
    let dir = html_of("html-many", "many");
    let dom = dump_dom(
        &dir,
        &format!("file://{}", dir.join("trace.html").display()),
    );
    let bars = dom.matches("class=\"range\"").count();
    // 80,000 ranges on 4 thread rows, about 1,000 pixels wide each.
    assert!((4..=4 * 1200).contains(&bars), "{bars} bars drawn");
    for t in 0..4 {
        assert!(
            dom.contains(&format!("data-name=\"busy {t}\"")),
            "busy {t} not drawn"
        );
    }
}

/// Records `record_scenarios SCENARIO` with `--html` into `scratch(name)`.
fn html_of(name: &str, scenario: &str) -> PathBuf {
    let dir = scratch(name);
    let out = record(
        &dir,
        &["-q", "--html"],
        &[scenarios().to_str().unwrap(), scenario],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    dir
}

/// `nvtxr record -q [extra] -- record_scenarios NAME`, with its trace's events.
fn scenario(name: &str, extra: &[&str]) -> (Output, Vec<Event>, PathBuf) {
    let dir = scratch(name);
    let mut args = vec!["-q"];
    args.extend(extra);
    let out = record(&dir, &args, &[scenarios().to_str().unwrap(), name], &[]);
    let ev = events(&load(&dir.join("trace.json")));
    (out, ev, dir)
}

#[test]
fn sigkill_segfault_and_abort_lose_nothing_already_recorded() {
    for (how, signal) in [("kill", 9), ("segv", 11), ("abort", 6)] {
        let (out, ev, _) = scenario(&format!("die-{how}"), &[]);
        assert_eq!(out.status.code(), Some(128 + signal), "{}", text(&out));
        assert_eq!(count(&ev, "X", "before death"), 1000, "{how}");
        assert_eq!(count(&ev, "i", "tick"), 1000, "{how}");
        assert_eq!(
            count(&ev, "X", "open at death"),
            1,
            "{how}: closed at the last event"
        );
    }
}

/// The `handled N` a signal scenario prints.
fn handled(out: &Output) -> usize {
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .strip_prefix("handled ")
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn marks_from_a_signal_handler_neither_deadlock_nor_corrupt() {
    let (out, ev, _) = scenario("signal_marks", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let handled = handled(&out);
    let ranges = count(&ev, "X", "under signals");
    assert!(ranges >= 100 && ranges.is_multiple_of(100), "{ranges}");
    assert_eq!(count(&ev, "X", "before signals"), 1);
    assert_eq!(
        count(&ev, "i", "tick"),
        ranges + 1,
        "no event lost or garbled"
    );
    // Handlers that interrupt their thread mid-record too: every mark is there.
    assert_eq!(count(&ev, "i", "from handler"), handled);
}

#[test]
fn a_signal_handler_event_inside_malloc_never_aborts_hangs_or_is_lost() {
    let (out, ev, _) = scenario("signal_storm", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let handled = handled(&out);
    assert!(handled >= 64 * 50, "every thread's timer fired: {handled}");
    assert_eq!(count(&ev, "i", "storm handler"), handled);
    assert_eq!(count(&ev, "i", "storm thread"), 64);
}

#[test]
fn more_threads_than_file_descriptors_are_all_recorded() {
    let (out, ev, _) = scenario("many_threads", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(count(&ev, "X", "thread"), 1100);
    let threads: std::collections::BTreeSet<u64> = ev.iter().map(|e| e.tid).collect();
    assert_eq!(threads.len(), 1100);
}

#[test]
fn a_file_size_limit_drops_events_loudly_and_never_kills_the_program() {
    let dir = scratch("file_limit");
    // The kept recording goes to $TMPDIR: here, the test's own folder.
    let out = record(
        &dir,
        &["-q"],
        &[scenarios().to_str().unwrap(), "file_limit"],
        &[("TMPDIR", dir.to_str().unwrap())],
    );
    let msg = text(&out);
    assert!(msg.contains("still alive"), "not killed by SIGXFSZ: {msg}");
    assert!(
        msg.contains("cannot create a chunk file: the file size limit (ulimit -f) is reached"),
        "{msg}"
    );
    assert!(
        msg.contains("the recording is incomplete: events dropped: 300 in process"),
        "{msg}"
    );
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(msg.contains("the recording is kept in"), "{msg}");
    assert!(
        msg.contains(
            "no NVTX range or mark was recorded (1 process loaded the tool); nothing written"
        ),
        "{msg}"
    );
    assert!(
        !dir.join("trace.json").exists(),
        "no empty trace is written"
    );
}

#[test]
fn a_program_that_recorded_nothing_leaves_no_recording_behind() {
    for scenario in ["quiet", "thread_names_only"] {
        let dir = scratch(scenario);
        let out = record(
            &dir,
            &["-q"],
            &[scenarios().to_str().unwrap(), scenario],
            &[("TMPDIR", dir.to_str().unwrap())],
        );
        let msg = text(&out);
        assert_eq!(out.status.code(), Some(1), "{msg}");
        assert!(msg.contains("no NVTX range or mark was recorded"), "{msg}");
        assert!(!msg.contains("kept"), "{msg}");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{scenario}: left behind: {left:?}");
    }
}

#[test]
fn exec_without_fork_keeps_the_events_before_it() {
    let (out, ev, _) = scenario("exec_self", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(count(&ev, "X", "before exec"), 20);
    assert_eq!(count(&ev, "X", "exec'd worker"), 50);
    let pids: std::collections::BTreeSet<u64> = ev.iter().map(|e| e.pid).collect();
    assert_eq!(pids.len(), 1, "one process, before and after exec");
}

#[test]
fn a_child_that_outlives_its_parent_is_recorded_to_its_end() {
    let (out, ev, _) = scenario("orphan", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(count(&ev, "X", "parent"), 3);
    assert_eq!(count(&ev, "X", "orphan"), 7);
    let (out, ev, _) = scenario("orphan", &["--wait", "primary"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(count(&ev, "X", "parent"), 3);
    assert_eq!(count(&ev, "X", "orphan"), 0, "--wait primary does not wait");
}

#[test]
fn marks_from_atexit_handlers_and_destructors_are_recorded() {
    let (out, ev, _) = scenario("at_exit", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(count(&ev, "X", "main"), 2);
    assert_eq!(count(&ev, "i", "from atexit"), 1);
    assert_eq!(count(&ev, "i", "from destructor"), 1);
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
fn messages_of_every_length_are_recorded_whole_up_to_the_cut() {
    let (out, ev, _) = scenario("texts", &[]);
    assert!(out.status.success(), "{}", text(&out));
    for length in [127, 128, 200, 70000] {
        // The tool keeps at most 64 KiB of a message.
        let kept: String = (0..length.min(64 << 10))
            .map(|j| char::from(b'a' + (j % 26) as u8))
            .collect();
        for ph in ["i", "X", "b"] {
            assert_eq!(count(&ev, ph, &kept), 1, "{ph} of {length} bytes");
        }
    }
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
fn the_recording_directory_is_private_and_never_follows_planted_files() {
    let (out, _, _) = scenario("dir_mode", &[]);
    assert!(text(&out).contains("mode 700"), "{}", text(&out));
    // By hand, a directory that is a symlink or open to others is refused,
    // and nothing is written through it.
    let dir = scratch("planted");
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let target = dir.join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    std::os::unix::fs::symlink(&target, dir.join("link")).unwrap();
    let open = dir.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    for (raw, why) in [
        (
            dir.join("link"),
            "is not a directory (a symlink is refused)",
        ),
        (open.clone(), "is open to other users (mode 777)"),
    ] {
        let out = Command::new(scenarios())
            .arg("worker")
            .env(nvtxr_harness::INJECTION_PATH_VAR, &artifacts().record_tool)
            .env("NVTXR_RECORD_DIR", &raw)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(text(&out).contains(why), "{}", text(&out));
    }
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn two_runs_writing_one_output_leave_a_valid_trace() {
    let dir = scratch("same-output");
    let runs: Vec<_> = (0..2)
        .map(|_| {
            record_command(&dir, &["-q"], &[scenarios().to_str().unwrap(), "many"])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut run in runs {
        assert!(run.wait().unwrap().success());
    }
    let ev = events(&load(&dir.join("trace.json")));
    assert_eq!(count(&ev, "i", "tick"), 80000, "one run's whole trace");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".nvtxr-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
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
fn a_full_disk_fails_loudly_and_keeps_what_was_recorded() {
    let dir = scratch("disk-full");
    let (trace, exe) = (dir.join("trace.json"), scenarios());
    let args = ["record", "-q", "-o", trace.to_str().unwrap(), "--"];
    let args = [&args[..], &[exe.to_str().unwrap(), "many"]].concat();
    let Some((out, _)) = nvtxr_with_small_tmpdir(&dir, "512k", &args) else {
        return;
    };
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(
        msg.contains("cannot create a chunk file: No space left on device"),
        "{msg}"
    );
    assert!(
        msg.contains("the recording is incomplete: events dropped: "),
        "{msg}"
    );
    let ev = events(&load(&dir.join("trace.json")));
    let kept = count(&ev, "i", "tick");
    assert!(
        kept > 1000 && kept < 80000,
        "what fitted is in the trace: {kept}"
    );
}

#[test]
fn html_timeline_bars_are_visible_readable_findable_and_summarized() {
    if !have_tool("chromium") {
        return;
    }
    let dir = html_of("html-colors", "colors");
    let page = dir.join("trace.html");
    let dom = dump_dom(&dir, &format!("file://{}#find=whi", page.display()));
    // Every bar has an outline (a white bar on a white row shows).
    assert!(
        dom.contains(".range rect { stroke: rgba(0, 0, 0, .45)"),
        "{dom}"
    );
    // Labels: dark on light bars, white on dark ones.
    for (name, ink) in [
        ("white", "#111"),
        ("yellow", "#111"),
        ("cyan", "#111"),
        ("navy", "#fff"),
    ] {
        let bar = dom
            .split("<g class=\"")
            .find(|g| g.contains(&format!("data-name=\"{name}\"")))
            .unwrap_or_else(|| panic!("{name} not drawn:\n{dom}"));
        assert!(
            bar.contains(&format!("fill=\"{ink}\">{name}")),
            "{name}: {bar}"
        );
    }
    // Found by name: the match outlined, the others dimmed.
    assert!(
        dom.contains("<g class=\"range found\" data-name=\"white\""),
        "{dom}"
    );
    assert!(
        dom.contains("<g class=\"range dim\" data-name=\"navy\""),
        "{dom}"
    );
    assert!(
        dom.contains("<span id=\"found\">1 match in view</span>"),
        "{dom}"
    );
    // Names with no color of their own: a distinct color each.
    let fill = |name: &str| {
        let bar = dom
            .split("<g class=\"")
            .find(|g| g.contains(&format!("data-name=\"{name}\"")))
            .unwrap_or_else(|| panic!("{name} not drawn"));
        bar.split("fill=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string()
    };
    let fills: std::collections::BTreeSet<String> =
        ["compute", "barrier", "loss", "Loss", "prefetch done"]
            .into_iter()
            .map(fill)
            .collect();
    assert_eq!(fills.len(), 5, "{fills:?}");
    // The legend and the summary table: the legend capped to the names with
    // the most time, in natural order.
    assert!(dom.contains("background:#ffff00\"></span>yellow"), "{dom}");
    assert!(dom.contains("and 14 more (by least time)"), "{dom}");
    let legend = dom.split("id=\"legend\"").nth(1).unwrap();
    let (two, ten) = (
        legend.find("</span>step 2<"),
        legend.find("</span>step 10<"),
    );
    if let (Some(two), Some(ten)) = (two, ten) {
        assert!(two < ten, "natural order");
    }
    assert_eq!(
        dom.matches("<td class=\"style\">PushPop</td><td>").count(),
        54,
        "{dom}"
    );
    // A process that recorded nothing says so.
    assert!(
        dom.contains("no NVTX events: the process made no NVTX call while recorded"),
        "{dom}"
    );
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

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn outputs_go_through_symlinks_and_descriptors_never_over_them() {
    let dir = scratch("links");
    let exe = scenarios();
    let worker = [exe.to_str().unwrap(), "worker"];
    // A symlink to a file: the file gets the trace, the link stays a link.
    std::fs::create_dir(dir.join("real")).unwrap();
    std::os::unix::fs::symlink("real/trace.json", dir.join("link.json")).unwrap();
    let link = dir.join("link.json");
    let out = nvtxr(
        &[
            &["record", "-q", "-o", link.to_str().unwrap(), "--"][..],
            &worker,
        ]
        .concat(),
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        count(
            &events(&load(&dir.join("real/trace.json"))),
            "X",
            "exec'd worker"
        ),
        50
    );
    // A symlink to this process's standard output (as /dev/stdout is):
    // the trace goes where the shell sent it; the summary goes to stderr.
    let stdout_link = dir.join("stdout.json");
    std::os::unix::fs::symlink("/proc/self/fd/1", &stdout_link).unwrap();
    let sent = dir.join("sent.json");
    let out = Command::new(&artifacts().nvtxr)
        .args(["record", "-o", stdout_link.to_str().unwrap(), "--"])
        .args(worker)
        .stdout(std::fs::File::create(&sent).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::symlink_metadata(&stdout_link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(count(&events(&load(&sent)), "X", "exec'd worker"), 50);
    assert!(
        text(&out).contains("NVTX range summary"),
        "the summary, on stderr"
    );
    // Not a regular file: written in place, never replaced.
    let out = nvtxr(
        &[&["record", "-q", "-o", "/dev/null", "--"][..], &worker].concat(),
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".nvtxr-"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

use std::os::unix::fs::FileTypeExt;

#[test]
fn outputs_honour_the_umask_and_keep_an_existing_files_mode() {
    let dir = scratch("modes");
    let exe = scenarios();
    let run = |umask: &str, output: &Path| {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec \"$0\" record -q -o \"$1\" -- \"$2\" worker"
            ))
            .arg(&artifacts().nvtxr)
            .arg(output)
            .arg(&exe)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    };
    run("077", &dir.join("private.json"));
    assert_eq!(mode(&dir.join("private.json")), 0o600);
    run("022", &dir.join("shared.json"));
    assert_eq!(mode(&dir.join("shared.json")), 0o644);
    let existing = dir.join("existing.json");
    std::fs::write(&existing, "old").unwrap();
    std::fs::set_permissions(
        &existing,
        std::os::unix::fs::PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    run("022", &existing);
    assert_eq!(mode(&existing), 0o640, "an existing file keeps its mode");
    assert_eq!(count(&events(&load(&existing)), "X", "exec'd worker"), 50);
}

#[test]
fn bad_outputs_and_settings_are_refused_before_the_program_runs() {
    let dir = scratch("up-front");
    let ran = dir.join("ran");
    let touch = ["--", "touch", ran.to_str().unwrap()];
    let record_args = |extra: &[&str]| -> Vec<String> {
        [&["record", "-q"][..], extra, &touch]
            .concat()
            .into_iter()
            .map(String::from)
            .collect()
    };
    let d = dir.to_str().unwrap().to_string();
    let same = format!("{d}/same.json");
    /// Options, environment, what nvtxr says.
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, String);
    let cases: Vec<Case> = vec![
        (vec!["-o", &d], vec![], format!("{d} is a directory")),
        (
            vec!["-o", &same, "--json", &same],
            vec![],
            "are the same file".into(),
        ),
        (
            vec!["-o", "t.json"],
            vec![("NVTXR_RECORD_TOOL", "/nonexistent/libtool.so")],
            "NVTXR_RECORD_TOOL=/nonexistent/libtool.so: No such file or directory".into(),
        ),
        (
            vec!["-o", "t.json"],
            vec![("NVTXR_RECORD_TOOL", "/etc/passwd")],
            "NVTXR_RECORD_TOOL=/etc/passwd: not a shared library".into(),
        ),
        (
            vec!["-o", "t.json"],
            vec![("NVTXR_RECORD_CLOCK", "fast")],
            "NVTXR_RECORD_CLOCK=fast: unknown clock (use auto or monotonic)".into(),
        ),
    ];
    for (extra, env, says) in cases {
        let args = record_args(&extra);
        let out = nvtxr(&args.iter().map(String::as_str).collect::<Vec<_>>(), &env);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", text(&out));
        assert!(text(&out).contains(&says), "{extra:?}: {}", text(&out));
        assert!(!ran.exists(), "{extra:?}: the program ran");
    }
    // An unknown option before the command is not taken for the command.
    let out = nvtxr(
        &["record", "--bogus", "--", "touch", ran.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("unexpected argument '--bogus'"),
        "{}",
        text(&out)
    );
    assert!(!ran.exists());
    // --keep: another user's open directory is refused, and left as it was.
    let theirs = dir.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let args = record_args(&["--keep", theirs.to_str().unwrap()]);
    let out = nvtxr(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("belongs to another user"),
        "{}",
        text(&out)
    );
    assert_eq!(mode(&theirs), 0o777, "not chmod'ed");
    assert!(!ran.exists());
    // --keep in a folder that does not exist: the error names it.
    let nowhere = dir.join("no/such/rec");
    let args = record_args(&["--keep", nowhere.to_str().unwrap()]);
    let out = nvtxr(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let says = format!("{}: No such file or directory", nowhere.display());
    assert!(text(&out).contains(&says), "{}", text(&out));
    assert!(!ran.exists());
}

#[test]
fn a_write_past_the_file_size_limit_is_reported_and_the_recording_kept() {
    // 1100 threads: 64 KiB chunks (under the limit), a trace over 128 KiB.
    let dir = scratch("fsize");
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 128 && exec \"$0\" record -q -o \"$1\" -- \"$2\" many_threads")
        .arg(&artifacts().nvtxr)
        .arg(dir.join("trace.json"))
        .arg(scenarios())
        .env("TMPDIR", &dir)
        .output()
        .unwrap();
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "not killed by SIGXFSZ: {msg}");
    assert!(msg.contains("File too large"), "{msg}");
    let kept = kept_recording_in(&msg).expect("says where the recording is");
    assert!(Path::new(kept).starts_with(&dir), "kept in $TMPDIR: {kept}");
    assert!(!dir.join("trace.json").exists(), "no partial trace");
    let again = nvtxr(
        &[
            "report",
            "-q",
            "-o",
            dir.join("again.json").to_str().unwrap(),
            kept,
        ],
        &[],
    );
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        count(&events(&load(&dir.join("again.json"))), "X", "thread"),
        1100
    );
}

/// `nvtxr report -q -o TRACE REC`.
fn report(trace: &Path, rec: &Path) -> Output {
    nvtxr(
        &[
            "report",
            "-q",
            "-o",
            trace.to_str().unwrap(),
            rec.to_str().unwrap(),
        ],
        &[],
    )
}

/// A recording of the worker scenario kept in `dir/rec`.
fn kept_recording(dir: &Path) -> PathBuf {
    let exe = scenarios();
    kept(
        dir,
        &["-o", dir.join("t.json").to_str().unwrap()],
        &[exe.to_str().unwrap(), "worker"],
    )
}

/// Every `.events` file of a recording.
fn chunk_files(rec: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(rec)
        .unwrap()
        .flat_map(|f| std::fs::read_dir(f.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "events"))
        .collect();
    files.sort();
    files
}

#[test]
fn report_reads_only_regular_files_of_the_recording_and_skips_what_it_cannot_read() {
    let dir = scratch("hostile-rec");
    let rec = kept_recording(&dir);
    // A process folder whose header is /dev/zero, and a chunk that is a FIFO.
    std::fs::create_dir(rec.join("99999.0")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", rec.join("99999.0/process")).unwrap();
    let folder = chunk_files(&rec)[0].parent().unwrap().to_path_buf();
    let fifo = folder.join("999.events");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let trace = dir.join("trace.json");
    let started = std::time::Instant::now();
    let out = report(&trace, &rec);
    assert!(started.elapsed().as_secs() < 30, "no hang, no endless read");
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(
        msg.contains("process 99999 (image 0): its header cannot be read"),
        "{msg}"
    );
    assert!(
        msg.contains("999.events: not a regular file: left out"),
        "{msg}"
    );
    assert_eq!(
        count(&events(&load(&trace)), "X", "exec'd worker"),
        50,
        "the rest is written"
    );
}

#[test]
fn a_damaged_chunk_loses_only_itself_and_says_so() {
    let dir = scratch("damaged");
    let rec = kept_recording(&dir);
    // The first chunk that holds records (the tool makes some ahead that
    // no thread may claim).
    let committed_of = |bytes: &[u8]| u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
    let (chunk, bytes) = chunk_files(&rec)
        .into_iter()
        .map(|c| {
            let bytes = std::fs::read(&c).unwrap();
            (c, bytes)
        })
        .find(|(_, bytes)| committed_of(bytes) > 0)
        .unwrap();
    let committed = committed_of(&bytes);
    // Cut the file in the middle of its committed records.
    std::fs::write(&chunk, &bytes[..64 + committed / 2]).unwrap();
    let trace = dir.join("trace.json");
    let out = report(&trace, &rec);
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(
        msg.contains("bytes of recorded events cannot be read (a damaged or truncated file)"),
        "{msg}"
    );
    let kept = count(&events(&load(&trace)), "i", "tick");
    assert!(
        kept > 0 && kept < 50,
        "what came before the damage is kept: {kept}"
    );
    // A chunk that is not one at all, in one of two recordings: the other is whole.
    let dir2 = scratch("damaged-2");
    let other = kept_recording(&dir2);
    std::fs::write(&chunk, b"garbage, not a chunk").unwrap();
    let merged = dir.join("merged.json");
    let out = nvtxr(
        &[
            "report",
            "-q",
            "-o",
            merged.to_str().unwrap(),
            rec.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
        &[],
    );
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(msg.contains("not an nvtxr chunk: left out"), "{msg}");
    assert_eq!(count(&events(&load(&merged)), "X", "exec'd worker"), 50);
}

#[test]
fn a_report_that_would_be_empty_says_why_and_fails() {
    let dir = scratch("empty");
    let rec = kept_recording(&dir);
    let trace = dir.join("trace.json");
    let t = trace.to_str().unwrap();
    let r = rec.to_str().unwrap();
    let not_a_recording = dir.join("nothing");
    std::fs::create_dir(&not_a_recording).unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![not_a_recording.to_str().unwrap()], "no recorded process (not an nvtxr recording"),
        (vec![r, "--nvtx-domain-include", "io"], "--nvtx-domain-include io selected no range or mark; nothing written. The recording has the domains: default; and the ranges: exec'd worker"),
        (vec![r, "--capture-range", "nope"], "--capture-range nope selected no range or mark"),
        (vec![r, "-q", "--per-rank", "NOSUCH"], "--per-rank NOSUCH: no range named NOSUCH"),
    ];
    for (args, says) in cases {
        let _ = std::fs::remove_file(&trace);
        let out = nvtxr(&[&["report", "-o", t][..], &args].concat(), &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
        assert!(!trace.exists(), "{args:?}: nothing written");
    }
    // A program that never loads the tool.
    let out = nvtxr(&["record", "-q", "-o", t, "--", "true"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("no process of true loaded the recording tool"),
        "{}",
        text(&out)
    );
}

/// One range or mark, as both formats can show it: kind (`slice`,
/// `instant`), name, pid, tid (`None` for start/end ranges, which Perfetto
/// puts on async tracks), start and end ns from the trace's origin, args.
type Shown = (String, String, u64, Option<u64>, i64, i64, String);

/// The JSON trace's ranges and marks as [`Shown`].
fn shown_in_json(trace: &Path) -> Vec<Shown> {
    let mut out: Vec<Shown> = events(&load(trace))
        .into_iter()
        .map(|e| {
            let kind = match e.ph.as_str() {
                "i" => "instant",
                "C" => "counter",
                _ => "slice",
            };
            // Counter tracks belong to the process, named with their domain.
            let tid = (e.ph != "b" && e.ph != "C").then_some(e.tid);
            let name = match e.ph.as_str() {
                "C" if e.cat != "nvtx" => format!("{}: {}", e.cat, e.name),
                _ => e.name,
            };
            (
                kind.into(),
                name,
                e.pid,
                tid,
                e.start,
                e.end,
                sorted(&e.args),
            )
        })
        .collect();
    out.sort();
    out
}

/// A `.pftrace` checked by `perfetto_check.py` with Perfetto's own protos;
/// its ranges and marks as [`Shown`], and its flows (from, to) by tid.
fn shown_in_perfetto(trace: &Path) -> (Vec<Shown>, Vec<(u64, u64)>) {
    let out = Command::new(nvtxr_harness::python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/perfetto_check.py"))
        .arg(trace)
        .env("PYTHONPATH", nvtxr_harness::perfetto_protos())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let mut shown = Vec::new();
    let mut flows: HashMap<u64, (Option<u64>, Option<u64>)> = HashMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let Some(kind) = v["kind"].as_str() else {
            continue; // a track
        };
        let tid = v["tid"].as_u64();
        if kind == "flow" {
            for (key, to) in [("flow_ids", false), ("terminating", true)] {
                for id in v["args"][key].as_array().unwrap() {
                    let ends = flows.entry(id.as_u64().unwrap()).or_default();
                    if to {
                        ends.1 = tid
                    } else {
                        ends.0 = tid
                    }
                }
            }
            continue;
        }
        shown.push((
            kind.to_string(),
            v["name"].as_str().unwrap().to_string(),
            v["pid"].as_u64().unwrap(),
            tid,
            v["start"].as_i64().unwrap(),
            v["end"].as_i64().unwrap(),
            sorted(&v["args"]),
        ));
    }
    shown.sort();
    let flows = flows
        .into_values()
        .map(|(from, to)| (from.expect("a flow's start"), to.expect("a flow's end")))
        .collect();
    (shown, flows)
}

#[test]
fn nccls_own_payload_schemas_are_decoded_field_by_field() {
    // NCCL's nvtx_payload_schemas.h (vendored, tests/c/nccl), registered and
    // sent as NCCL sends them, on NVIDIA's headers and over nvtxr's drop-in.
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, _) =
            recorded_program("nccl_payloads.cpp", producer, &format!("nccl-{producer:?}"));
        let (json, rec) = (dir.join("t.json"), dir.join("rec"));
        let ev = events(&load(&json));
        let shown: Vec<(String, String)> = ev
            .iter()
            .map(|e| {
                assert_eq!(e.cat, "NCCL", "{e:?}");
                (e.name.clone(), e.args["fields"].to_string())
            })
            .collect();
        let comm = r#""NCCL communicator ID":18364758544493064720"#;
        let expected = [
            ("ncclAllReduce", format!(r#"{{{comm},"Message size [bytes]":1048576,"Reduction operation":"Max"}}"#)),
            ("ncclAllGather", format!(r#"{{{comm},"Message size [bytes]":4096}}"#)),
            ("ncclBroadcast", format!(r#"{{{comm},"Message size [bytes]":512,"Root":3}}"#)),
            ("ncclReduce", format!(r#"{{{comm},"Message size [bytes]":256,"Root":0,"Reduction operation":"Avg"}}"#)),
            ("ncclSend", format!(r#"{{{comm},"Message size [bytes]":64,"Peer rank":7}}"#)),
            ("ncclCommInitRank", format!(r#"{{{comm},"No. of ranks":8,"Rank":2,"CUDA device":1}}"#)),
            (
                "ncclCommSplit",
                r#"{"NCCL communicator ID":18364758544493064721,"Parent NCCL communicator ID":18364758544493064720,"No. of ranks":4,"Rank":1,"CUDA device":1,"Color":5,"Key":-1}"#.to_string(),
            ),
        ];
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(n, f)| (n.to_string(), f))
            .collect();
        assert_eq!(shown, expected, "{producer:?}");
        // The summary split by message size, as NCCL users group their calls.
        let ranges = grouped_ranges(&dir, &rec, "Message size [bytes]");
        assert!(
            ranges
                .iter()
                .any(|r| r == "NCCL:ncclAllReduce [Message size [bytes]=1048576]")
                && ranges.iter().any(|r| r == "NCCL:ncclCommInitRank"),
            "{ranges:?}"
        );
    }
}

/// The summary's ranges (`domain:name [FIELD=value]`) when recording `rec`
/// is reported again into `dir` with `--group-by FIELD`.
fn grouped_ranges(dir: &Path, rec: &Path, field: &str) -> Vec<String> {
    let summary = dir.join("summary.json");
    let out = nvtxr(
        &[
            "report",
            rec.to_str().unwrap(),
            "-q",
            "-o",
            dir.join("grouped.pftrace").to_str().unwrap(),
            "--json",
            summary.to_str().unwrap(),
            "--group-by",
            field,
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    load(&summary)
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["range"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn memory_heaps_and_regions_are_recorded_as_marks() {
    // NVIDIA's memory extension, header-only and over nvtxr's drop-in.
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, out) = recorded_program(
            "memory_regions.c",
            producer,
            &format!("memory-{producer:?}"),
        );
        assert!(text(&out).contains("handles addresses"), "{}", text(&out));
        let (marks, id) = memory_marks(&dir);
        // The permissions object's id, as its creation says.
        let perm = marks[3].1.split(',').next().unwrap();
        let perm = perm.trim_start_matches(r#"{"permissions":"#);
        let expected = [
            ("memory heap registered", format!(r#"{{"heap":{id},"name":"pool","usage":"sub-allocator","address":"0x10000000","size":1048576}}"#)),
            ("memory regions registered", format!(r#"{{"heap":{id},"count":2,"regions":[{{"address":"0x10000000","size":4096}},{{"address":"0x10001000","size":256}}]}}"#)),
            ("memory regions named", r#"{"regions":[{"region":"0x10000000","name":"weights"},{"region":"0x10001000","name":"bias"}]}"#.to_string()),
            ("memory permissions created", format!(r#"{{"permissions":{perm},"exclude global":["write"]}}"#)),
            ("memory permissions assigned", format!(r#"{{"permissions":{perm},"count":2,"regions":[{{"region":"0x10000000","access":["read"]}},{{"region":"0x10001000","access":["read","write"]}}]}}"#)),
            ("memory permissions bound", format!(r#"{{"permissions":{perm},"scope":"cpu thread","strict":["write"]}}"#)),
            ("memory permissions unbound", r#"{"scope":"cpu thread"}"#.to_string()),
            ("memory permissions reset", format!(r#"{{"permissions":{perm}}}"#)),
            ("memory permissions destroyed", format!(r#"{{"permissions":{perm}}}"#)),
            ("memory permissions reset", r#"{"permissions":0}"#.to_string()),
            ("memory regions resized", r#"{"count":1,"regions":[{"address":"0x10000000","size":8192}]}"#.to_string()),
            ("memory regions unregistered", r#"{"count":2,"regions":["0x10000000","0x10001000"]}"#.to_string()),
            ("memory heap reset", format!(r#"{{"heap":{id}}}"#)),
            ("memory heap unregistered", format!(r#"{{"heap":{id}}}"#)),
        ];
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(n, f)| (n.to_string(), f))
            .collect();
        assert_eq!(marks, expected, "{producer:?}");
    }
}

#[test]
fn cuda_runtime_memory_calls_are_recorded() {
    // NVIDIA's header needs CUDA's for two handle types: stubs stand in.
    let stubs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/c/cuda-stubs");
    let include = format!("-I{}", stubs.display());
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let name = format!("memory-cuda-{producer:?}");
        let (dir, out) = recorded_program_with("memory_cuda.c", producer, &name, &[&include]);
        assert!(text(&out).contains("handles distinct"), "{}", text(&out));
        let (marks, process) = memory_marks(&dir);
        let process: u64 = process
            .trim_start_matches(r#"{"permissions":"#)
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let device = process + 1;
        let expected = [
            ("memory cuda permissions", format!(r#"{{"permissions":{process},"cuda":"process"}}"#)),
            ("memory cuda permissions", format!(r#"{{"permissions":{device},"cuda":{{"device":1}}}}"#)),
            ("memory cuda peer access", format!(r#"{{"permissions":{device},"peer":0,"access":["read"]}}"#)),
            ("memory cuda peer access", format!(r#"{{"permissions":{process},"peer":"all devices","access":["read","write"]}}"#)),
            ("memory cuda initialized", r#"{"stream":"0x5000","per-thread stream":true,"count":2,"regions":[{"address":"0x20000000","size":4096},{"address":"0x20001000","size":512}]}"#.to_string()),
        ];
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(n, f)| (n.to_string(), f))
            .collect();
        assert_eq!(marks, expected, "{producer:?}");
    }
}

/// The memory marks of the trace `t.json` in `dir` (name, fields), every
/// one an instant of domain "memory", and the heap's id (the first's).
fn memory_marks(dir: &Path) -> (Vec<(String, String)>, String) {
    let marks: Vec<(String, String)> = events(&load(&dir.join("t.json")))
        .iter()
        .map(|e| {
            assert_eq!((e.ph.as_str(), e.cat.as_str()), ("i", "memory"), "{e:?}");
            (e.name.clone(), e.args["fields"].to_string())
        })
        .collect();
    let heap = marks[0].1.split(',').next().unwrap().to_string();
    let id = heap.trim_start_matches(r#"{"heap":"#).to_string();
    (marks, id)
}

#[test]
fn nvtxr_c_memory_calls_are_recorded_as_nvidias_are() {
    let (dir, out) = recorded_program("nvtxr_memory.c", Producer::NvtxrShared, "nvtxr-memory");
    assert!(text(&out).contains("refused -101 0 -102"), "{}", text(&out));
    let (marks, id) = memory_marks(&dir);
    let region = |address: &str, size: u32| {
        format!(r#"{{"heap":{id},"count":1,"regions":[{{"address":"{address}","size":{size}}}]}}"#)
    };
    let named = |address: &str, name: &str| {
        format!(r#"{{"regions":[{{"region":"{address}","name":"{name}"}}]}}"#)
    };
    let gone = |address: &str| format!(r#"{{"count":1,"regions":["{address}"]}}"#);
    let expected = [
        (
            "memory heap registered",
            format!(
                r#"{{"heap":{id},"name":"pool","usage":"sub-allocator","address":"0x10000000","size":1048576}}"#
            ),
        ),
        ("memory regions registered", region("0x10000000", 4096)),
        ("memory regions registered", region("0x10001000", 256)),
        ("memory regions named", named("0x10000000", "weights")),
        ("memory regions named", named("0x10001000", "bias")),
        (
            "memory regions resized",
            r#"{"count":1,"regions":[{"address":"0x10000000","size":8192}]}"#.to_string(),
        ),
        ("memory regions unregistered", gone("0x10000000")),
        ("memory regions unregistered", gone("0x10001000")),
        ("memory heap reset", format!(r#"{{"heap":{id}}}"#)),
        ("memory heap unregistered", format!(r#"{{"heap":{id}}}"#)),
    ];
    let expected: Vec<(String, String)> = expected
        .into_iter()
        .map(|(n, f)| (n.to_string(), f))
        .collect();
    assert_eq!(marks, expected);
}

#[test]
fn deferred_events_land_at_their_own_times() {
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, out) = recorded_program(
            "deferred_events.c",
            producer,
            &format!("deferred-{producer:?}"),
        );
        assert!(
            text(&out).contains("time domains: dynamic 1, static 1, again 1, refused 1"),
            "{}",
            text(&out)
        );
        let (json, rec) = (dir.join("t.json"), dir.join("rec"));
        let ev = events(&load(&json));
        let one = |name: &str| -> &Event {
            let found: Vec<&Event> = ev.iter().filter(|e| e.name == name).collect();
            assert_eq!(found.len(), 1, "{name}: {ev:?}");
            found[0]
        };
        // The range spans the mark made between its two timestamps, and ends
        // before the mark made before it was submitted.
        let span = one("deferred work");
        let (between, before) = (one("in between"), one("before submit"));
        assert_eq!(span.ph, "b", "a start/end range: {span:?}");
        assert!(
            span.start <= between.start && between.start <= span.end,
            "{span:?} {between:?}"
        );
        assert!(span.end <= before.start, "{span:?} {before:?}");
        assert_eq!(
            span.args["fields"],
            serde_json::json!({"name": "deferred work", "step": 7})
        );
        // The batch's marks: 1 ms apart, 10 ms before the submission.
        let samples: Vec<&Event> = ev.iter().filter(|e| e.name == "sample").collect();
        let values: Vec<&Value> = samples.iter().map(|e| &e.args["fields"]["value"]).collect();
        assert_eq!(values, [1, 2, 3], "{samples:?}");
        for pair in samples.windows(2) {
            let gap = pair[1].start - pair[0].start;
            assert!((gap - 1_000_000).abs() <= 5_000, "1 ms apart (ns): {gap}");
        }
        assert!(samples[2].start < before.start, "{samples:?} {before:?}");
        // A time domain nvtxr does not convert: recorded when submitted.
        assert_eq!(
            one("realtime").args["fields"],
            serde_json::json!({"value": 4, "timestamp error": "time domain 12 is not converted"})
        );
        check_registered_time_domains(&ev);
        // Perfetto shows the same, the events before others on their thread included.
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let (shown, _) = shown_in_perfetto(&pftrace);
        assert_eq!(shown, shown_in_json(&json), "{producer:?}");
    }
}

/// Marks stamped in registered time domains at the reference mark's instant
/// (in microseconds for three of them) land there; the one in a domain
/// nothing relates is recorded at its submission, with the reason.
fn check_registered_time_domains(ev: &[Event]) {
    let one = |name: &str| -> &Event {
        let found: Vec<&Event> = ev.iter().filter(|e| e.name == name).collect();
        assert_eq!(found.len(), 1, "{name}: {ev:?}");
        found[0]
    };
    let reference = one("reference");
    for (name, value) in [
        ("in us", 1),
        ("in half ns", 2),
        ("chained", 3),
        ("from a timer", 4),
        ("from a timer with data", 5),
    ] {
        let mark = one(name);
        assert_eq!(mark.args["fields"], serde_json::json!({"value": value}));
        let off = mark.start - reference.start;
        assert!(off.abs() <= 10_000, "{name}: {off} ns from the reference");
    }
    let unrelated = &one("unrelated").args["fields"];
    assert!(
        unrelated["timestamp error"].as_str().is_some_and(|e| {
            e.ends_with(
                "no sync points, conversion factor or timer source relate it to a clock nvtxr reads",
            )
        }),
        "{unrelated}"
    );
}

#[test]
fn nvtxr_c_time_domains_place_deferred_events() {
    let source = "nvtxr_time_domains.c";
    let (dir, out) = recorded_program(source, Producer::NvtxrShared, "nvtxr-time-domains");
    for line in [
        "time domains: dynamic 1, static 1, again 1",
        "statuses 0 0 0 0 0 0",
        "refused 0 0 0 -101 -101 -101",
    ] {
        assert!(text(&out).contains(line), "{line}: {}", text(&out));
    }
    check_registered_time_domains(&events(&load(&dir.join("t.json"))));
    // With no tool: no ids, every call a no-op but for the NULL checks.
    let alone = Command::new(compile_c(source, Producer::NvtxrShared, &[]))
        .output()
        .unwrap();
    assert!(alone.status.success(), "{}", text(&alone));
    assert_eq!(
        text(&alone).lines().collect::<Vec<_>>(),
        [
            "time domains: dynamic 0, static 0, again 1",
            "statuses 0 0 0 0 0 0",
            "refused 0 0 0 -101 -101 -101",
        ]
    );
}

#[test]
fn nvtxr_c_payloads_are_decoded_into_named_values() {
    let (dir, out) = recorded_program("nvtxr_payloads.c", Producer::NvtxrShared, "nvtxr-payloads");
    let json = dir.join("t.json");
    // The enum and point get the ids asked for, the others the tool's; the
    // bad registrations give 0 and the bad events INVALID_ARGUMENT.
    assert!(text(&out).contains("ids 1 0 params dyn"), "{}", text(&out));
    assert!(
        text(&out).contains("status 0 1 refused 0 -102 -102"),
        "{}",
        text(&out)
    );
    let ev = events(&load(&json));
    let fields = |name: &str| -> Vec<Value> {
        ev.iter()
            .filter(|e| e.name == name)
            .map(|e| e.args["fields"].clone())
            .collect()
    };
    let params = |label: &str, op: &str| {
        serde_json::json!({
            "comm": 0xfedc_ba98_7654_3210_u64,
            "bytes": 1048576,
            "op": op,
            "tag": "grad",
            "label": label,
            "at": {"x": -7, "y": 2.25},
            "dims": [1, -2, 3],
        })
    };
    assert_eq!(fields("allreduce"), [params("allreduce", "max")]);
    assert_eq!(fields("step"), [params("allreduce", "sum")]);
    assert_eq!(
        fields("window"),
        [serde_json::json!({"n": 2, "values": [10, -20], "payload": 0.25})]
    );
    // The deferred range spans the mark made between its timestamps.
    assert!(text(&out).contains("deferred 0 -101"), "{}", text(&out));
    let deferred = ev
        .iter()
        .find(|e| e.name == "deferred")
        .expect("the deferred range");
    let inside = ev.iter().find(|e| e.name == "inside").expect("the mark");
    assert!(
        deferred.start <= inside.start && inside.start <= deferred.end,
        "{deferred:?} {inside:?}"
    );
    assert_eq!(
        deferred.args["fields"],
        serde_json::json!({"name": "deferred"})
    );
    assert_eq!(ev.len(), 5, "nothing of the refused calls: {ev:?}");
}

/// `v` as JSON text with every object's keys sorted (the JSON trace keeps
/// its arguments in order, the Perfetto check in another).
fn sorted(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let members: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::from(k.as_str()), sorted(&map[k])))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(sorted).collect::<Vec<_>>().join(",")
        ),
        v => v.to_string(),
    }
}

#[test]
fn counters_are_recorded_and_shown_as_counter_tracks() {
    // NVIDIA's header-only counters, NVIDIA's API over nvtxr's drop-in,
    // and nvtxr's own C API.
    for (source, producer) in [
        ("counters.c", Producer::NvidiaHeader),
        ("counters.c", Producer::NvtxrCompat),
        ("nvtxr_counters.c", Producer::NvtxrShared),
    ] {
        let exe = compile_c(source, producer, &[]);
        let dir = scratch(&format!("counters-{producer:?}"));
        let rec = kept(
            &dir,
            &["-o", dir.join("t.json").to_str().unwrap()],
            &[exe.to_str().unwrap()],
        );
        let json = dir.join("t.json");
        let ev = events(&load(&json));
        let values = |name: &str| -> Vec<String> {
            ev.iter()
                .filter(|e| e.ph == "C" && e.name == name)
                .map(|e| {
                    assert_eq!(e.cat, "train", "{e:?}");
                    e.args["value"].to_string()
                })
                .collect()
        };
        assert_eq!(
            values("batches"),
            ["0", "10", "20", "30", "40"],
            "{producer:?}"
        );
        assert_eq!(
            values("loss"),
            ["1.0", "0.5", "0.3333333333333333", "0.25", "0.2"],
            "{producer:?}"
        );
        if producer == Producer::NvtxrShared {
            // The batch: each sample at its own time, right after its "taken"
            // mark, before the submission; bad arrays refused.
            let times = |name: &str| -> Vec<i64> {
                ev.iter()
                    .filter(|e| e.name == name)
                    .map(|e| e.start)
                    .collect()
            };
            assert_eq!(values("queue"), ["100", "101", "102"]);
            let (taken, queue) = (times("taken"), times("queue"));
            let mut after = taken[1..].to_vec();
            after.extend(times("submitted"));
            for ((t, q), next) in taken.iter().zip(&queue).zip(&after) {
                assert!(t <= q && q <= next, "{taken:?} {queue:?} {after:?}");
            }
            let alone = Command::new(&exe)
                .env_remove(nvtxr_harness::INJECTION_PATH_VAR)
                .output()
                .unwrap();
            assert!(
                text(&alone).contains("batch 0 -101 0"),
                "NULL arrays with a count refused: {}",
                text(&alone)
            );
        }
        // Each sample inside its "step" range, on the thread that took it.
        let steps: Vec<&Event> = ev.iter().filter(|e| e.name == "step").collect();
        assert_eq!(steps.len(), 5);
        for (step, sample) in steps.iter().zip(ev.iter().filter(|e| e.name == "batches")) {
            assert!(step.start <= sample.start && sample.start <= step.end);
            assert_eq!(step.tid, sample.tid);
        }
        // The Perfetto trace: counter tracks with the same values and times.
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let (shown, _) = shown_in_perfetto(&pftrace);
        assert_eq!(shown, shown_in_json(&json), "{producer:?}");
        assert_eq!(
            shown
                .iter()
                .filter(|s| s.0 == "counter" && s.1 == "train: loss")
                .count(),
            5
        );
    }
}

#[test]
fn payload_schemas_are_decoded_into_named_values() {
    // NVIDIA's header-only payload extension, and NVIDIA's API over nvtxr's drop-in.
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, out) = recorded_program(
            "payload_schemas.c",
            producer,
            &format!("payloads-{producer:?}"),
        );
        let (json, rec) = (dir.join("t.json"), dir.join("rec"));
        // Registration: the enum and schemas get their static ids, the
        // dynamic schema a tool id; a bad id and an unknown entry type are refused.
        assert!(
            text(&out).contains("ids 1 0 2 dynamic 0 0"),
            "{producer:?}: {}",
            text(&out)
        );
        assert!(
            text(&out).contains("a payload schema was refused: schema id 5 is not a static id"),
            "{}",
            text(&out)
        );
        assert!(
            text(&out).contains("unknown entry type 999"),
            "{}",
            text(&out)
        );
        let ev = events(&load(&json));
        let fields = |name: &str| -> Vec<Value> {
            ev.iter()
                .filter(|e| e.name == name)
                .map(|e| {
                    assert_eq!(e.cat, "comm", "{e:?}");
                    e.args["fields"].clone()
                })
                .collect()
        };
        let params = |label: &str, op: &str| {
            serde_json::json!({
                "comm": 0xfedc_ba98_7654_3210_u64,
                "bytes": 1048576,
                "op": op,
                "ratio": 0.5,
                "tag": "grad",
                "label": label,
                "at": {"x": -7, "y": 2.25},
                "dims": [1, -2, 3],
                "phase": "backward",
            })
        };
        // A mark named by its message entry; the hidden entry left out.
        assert_eq!(
            fields("allreduce"),
            [params("allreduce", "max")],
            "{producer:?}"
        );
        // The pop's payload joins its range's.
        let mut pushed = params("pushed", "max");
        pushed["payload"] = 7.into();
        assert_eq!(fields("pushed"), [pushed], "{producer:?}");
        // NCCL's way: the core event keeps its message.
        assert_eq!(
            fields("ncclAllReduce"),
            [params("pushed", "sum")],
            "{producer:?}"
        );
        // A dynamic schema's variable-length array; the end's doubles.
        let start_end: Vec<&Event> = ev.iter().filter(|e| e.ph == "b").collect();
        assert_eq!(start_end.len(), 1, "{producer:?}");
        assert_eq!(
            start_end[0].args["fields"],
            serde_json::json!({"n": 3, "values": [10, -20, 30], "after": 65535, "payload": [0.25, -1.5]}),
            "{producer:?}"
        );
        // An array whose length is in the event's other payload (shown too).
        assert_eq!(
            fields("histogram")[0],
            serde_json::json!({"payload": 3, "samples": [0.5, 1.5, 2.5]}),
            "{producer:?}"
        );
        // A union: the member its selector entry chooses.
        let tagged = fields("tagged");
        assert_eq!(
            tagged[..2],
            [
                serde_json::json!({"kind": 0, "value": {"i": -5}}),
                serde_json::json!({"kind": 1, "value": {"d": 2.5}}),
            ],
            "{producer:?}"
        );
        // Bad payloads: raw bytes and the reason.
        let unregistered = fields("(unnamed)");
        let errors: Vec<&str> = ev
            .iter()
            .filter_map(|e| e.args["fields"]["payload error"].as_str())
            .collect();
        assert_eq!(
            errors,
            [
                "entry value: member 7 of a union of 2",
                "schema 16777316 is not registered in this domain",
                "8 bytes at offset 8 are past the payload's 12",
                "entry samples: payload 0 does not hold one integer",
            ],
            "{unregistered:?}"
        );
        assert!(ev
            .iter()
            .filter(|e| !e.args["fields"]["payload error"].is_null())
            .all(|e| e.args["fields"]["raw"].is_string()));
        // The Perfetto trace shows the same values (nested debug annotations).
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let (shown, _) = shown_in_perfetto(&pftrace);
        assert_eq!(shown, shown_in_json(&json), "{producer:?}");
        // SQL: Nsight's jsonText column.
        let db = dir.join("t.sqlite");
        let out = report(&db, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let bytes: Vec<i64> = rusqlite::Connection::open(&db)
            .unwrap()
            .prepare("SELECT json_extract(jsonText, '$.bytes') FROM NVTX_EVENTS WHERE json_extract(jsonText, '$.op') = 'max'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(bytes, [1048576, 1048576], "{producer:?}");
        // The recorder guide's query.
        let readme =
            std::fs::read_to_string(nvtxr_harness::root().join("docs/recording.md")).unwrap();
        let query = readme
            .split("sqlite3 t.sqlite \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the README's SQL");
        let groups: Vec<(Option<i64>, i64)> = rusqlite::Connection::open(&db)
            .unwrap()
            .prepare(query)
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // Without `bytes`: the start/end, the histogram, three tagged unions,
        // the three bad payloads.
        assert_eq!(groups, [(None, 8), (Some(1048576), 3)], "{query}");
        // The summary split by a field's value.
        let mut ranges = grouped_ranges(&dir, &rec, "op");
        ranges.sort();
        assert_eq!(
            ranges,
            [
                "comm:(unnamed)",
                "comm:ncclAllReduce [op=sum]",
                "comm:pushed [op=max]"
            ]
        );
    }
}

#[test]
fn counter_groups_no_value_samples_and_batches_are_recorded() {
    for producer in [Producer::NvidiaHeader, Producer::NvtxrCompat] {
        let (dir, _) = recorded_program(
            "counter_groups.c",
            producer,
            &format!("counter-groups-{producer:?}"),
        );
        let (json, rec) = (dir.join("t.json"), dir.join("rec"));
        let ev = events(&load(&json));
        let series = |name: &str| -> Vec<(i64, String)> {
            ev.iter()
                .filter(|e| e.ph == "C" && e.name == name)
                .map(|e| (e.start, e.args["value"].to_string()))
                .collect()
        };
        let values =
            |name: &str| -> Vec<String> { series(name).into_iter().map(|s| s.1).collect() };
        // A group: a series per field.
        assert_eq!(values("gpu util"), ["50", "60"], "{producer:?}");
        assert_eq!(values("gpu temp"), ["70.5", "71.5"], "{producer:?}");
        // "No value": zero is 0, unchanged adds nothing.
        assert_eq!(values("queue"), ["5", "0"], "{producer:?}");
        // A batch: each sample at its own time, right after its mark.
        let steps: Vec<i64> = ev
            .iter()
            .filter(|e| e.name == "step")
            .map(|e| e.start)
            .collect();
        let losses = series("loss");
        assert_eq!(
            losses.iter().map(|l| l.1.as_str()).collect::<Vec<_>>(),
            ["0.5", "0.25", "0.125"]
        );
        for (i, (t, _)) in losses.iter().enumerate() {
            assert!(steps[i] <= *t, "{losses:?} {steps:?}");
            if let Some(next) = steps.get(i + 1) {
                assert!(t < next, "{losses:?} {steps:?}");
            }
        }
        // A first time and an interval: evenly spaced.
        let rates = series("rate");
        assert_eq!(
            rates.iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
            ["10", "20", "30", "40"]
        );
        let gaps: Vec<i64> = rates.windows(2).map(|w| w[1].0 - w[0].0).collect();
        assert!(
            gaps.iter()
                .all(|g| (g - gaps[0]).abs() <= 2 && *g >= 1_000_000),
            "{gaps:?}"
        );
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{}", text(&out));
        let (shown, _) = shown_in_perfetto(&pftrace);
        assert_eq!(shown, shown_in_json(&json), "{producer:?}");
    }
}

#[test]
fn the_perfetto_trace_shows_exactly_what_the_json_shows() {
    let exe = scenarios();
    let example = compile_c("example.c", Producer::NvtxrShared, &[]);
    let nvidia = compile_c("differential.c", Producer::NvidiaHeader, &[]);
    let programs: [(&str, Vec<&str>); 5] = [
        ("pf-processes", vec![exe.to_str().unwrap(), "processes"]),
        ("pf-example", vec![example.to_str().unwrap()]),
        ("pf-nvidia", vec![nvidia.to_str().unwrap()]),
        ("pf-async", vec![exe.to_str().unwrap(), "async_ids"]),
        ("pf-signals", vec![exe.to_str().unwrap(), "signal_marks"]),
    ];
    for (name, command) in programs {
        let dir = scratch(name);
        let rec = kept(
            &dir,
            &["-o", dir.join("t.json").to_str().unwrap()],
            &command,
        );
        let pftrace = dir.join("t.pftrace");
        let out = report(&pftrace, &rec);
        assert!(out.status.success(), "{name}: {}", text(&out));
        let json = shown_in_json(&dir.join("t.json"));
        let (perfetto, flows) = shown_in_perfetto(&pftrace);
        assert!(!json.is_empty(), "{name}");
        assert_eq!(perfetto, json, "{name}");
        if name == "pf-example" {
            // The example's "load data" starts on main and ends on its prefetch thread.
            assert_eq!(flows.len(), 1, "{flows:?}");
            assert_ne!(flows[0].0, flows[0].1);
        }
        let (p, j) = (
            std::fs::metadata(&pftrace).unwrap().len(),
            std::fs::metadata(dir.join("t.json")).unwrap().len(),
        );
        // Past the fixed cost of small traces: a fraction of the JSON.
        assert!(
            j < 20_000 || p * 5 < j,
            "{name}: {p} bytes against the JSON's {j}"
        );
    }
}

/// Nsight Systems' `nvtx_sum` as SQL over the NVTX tables of an export: a
/// row per style and `domain:name`, with total, instances, average, median,
/// minimum, maximum and the variance (SQLite has no square root everywhere).
const NVTX_SUM: &str = "
WITH
    domains AS (
        SELECT DISTINCT domainId AS id, globalTid >> 24 AS process, text AS name
        FROM NVTX_EVENTS WHERE eventType = 75),
    ranges AS (
        SELECT e.eventType AS type,
               coalesce(d.name, '') || ':' || coalesce(s.value, e.text) AS range,
               e.end - e.start AS duration
        FROM NVTX_EVENTS AS e
        LEFT JOIN domains AS d ON e.domainId = d.id AND e.globalTid >> 24 = d.process
        LEFT JOIN StringIds AS s ON e.textId = s.id
        WHERE e.eventType IN (59, 60)),
    ranked AS (
        SELECT type, range, duration,
               ROW_NUMBER() OVER (PARTITION BY type, range ORDER BY duration) AS k,
               COUNT(*) OVER (PARTITION BY type, range) AS n,
               AVG(duration) OVER (PARTITION BY type, range) AS mean
        FROM ranges)
SELECT CASE type WHEN 59 THEN 'PushPop' ELSE 'StartEnd' END, range,
       SUM(duration), COUNT(*), AVG(duration),
       AVG(CASE WHEN k IN ((n + 1) / 2, (n + 2) / 2) THEN duration END),
       MIN(duration), MAX(duration),
       CASE WHEN COUNT(*) > 1
            THEN SUM((duration - mean) * (duration - mean)) / (COUNT(*) - 1) ELSE 0 END
FROM ranked GROUP BY type, range ORDER BY 3 DESC, 2";

/// One row of [`NVTX_SUM`]: style, range, total, instances, average,
/// median, minimum, maximum, variance.
type SumRow = (String, String, i64, i64, f64, f64, i64, i64, f64);

#[test]
fn the_sqlite_export_answers_nvtx_sum_as_the_summary_does() {
    let exe = scenarios();
    let example = compile_c("example.c", Producer::NvtxrShared, &[]);
    for (name, command) in [
        ("sql-example", vec![example.to_str().unwrap()]),
        ("sql-processes", vec![exe.to_str().unwrap(), "processes"]),
    ] {
        let dir = scratch(name);
        let db = dir.join("t.sqlite");
        let out = nvtxr(
            &[
                &[
                    "record",
                    "-q",
                    "-o",
                    dir.join("t.json").to_str().unwrap(),
                    "--json",
                    dir.join("summary.json").to_str().unwrap(),
                    "--sqlite",
                    db.to_str().unwrap(),
                    // As nvtx_sum: a row per exact name.
                    "--exact-names",
                    "--",
                ][..],
                &command,
            ]
            .concat(),
            &[],
        );
        assert!(out.status.success(), "{name}: {}", text(&out));
        let summary = load(&dir.join("summary.json"));
        let sql = rusqlite::Connection::open(&db).unwrap();
        let rows: Vec<SumRow> = sql
            .prepare(NVTX_SUM)
            .unwrap()
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                ))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let expected = summary.as_array().unwrap();
        assert_eq!(rows.len(), expected.len(), "{name}: {rows:?}");
        for (row, want) in rows.iter().zip(expected) {
            let close =
                |a: f64, b: &Value| (a - b.as_f64().unwrap()).abs() <= 1e-6 * a.abs().max(1.0);
            assert_eq!(row.0, want["style"].as_str().unwrap(), "{name}");
            assert_eq!(row.1, want["range"].as_str().unwrap(), "{name}");
            assert_eq!(
                row.2,
                want["total_ns"].as_i64().unwrap(),
                "{name} {}",
                row.1
            );
            assert_eq!(
                row.3,
                want["instances"].as_i64().unwrap(),
                "{name} {}",
                row.1
            );
            assert!(close(row.4, &want["avg_ns"]), "{name} {row:?} {want}");
            assert!(close(row.5, &want["median_ns"]), "{name} {row:?} {want}");
            assert_eq!(row.6, want["min_ns"].as_i64().unwrap(), "{name} {}", row.1);
            assert_eq!(row.7, want["max_ns"].as_i64().unwrap(), "{name} {}", row.1);
            assert!(
                close(row.8.sqrt(), &want["stddev_ns"]),
                "{name} {row:?} {want}"
            );
        }
        // The tables and columns SQL against an nsys export names.
        for (table, columns) in [
            ("NVTX_EVENTS", 19),
            ("StringIds", 2),
            ("ThreadNames", 3),
            ("PROCESSES", 3),
            ("TARGET_INFO_SESSION_START_TIME", 3),
        ] {
            let n: i64 = sql
                .query_row(
                    &format!("SELECT count(*) FROM pragma_table_info('{table}')"),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, columns, "{table}");
        }
        let threads: i64 = sql
            .query_row(
                "SELECT count(*) FROM ThreadNames JOIN StringIds ON nameId = id",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(threads > 0, "{name}: named threads");
    }
}

#[test]
fn chunks_made_ahead_by_the_helper_lose_nothing() {
    // 6 million events: about 20 MB, several 4 MiB chunks, the later ones
    // made ahead (and the last ones, never claimed, skipped).
    let dir = scratch("long");
    let summary = dir.join("summary.json");
    let exe = scenarios();
    let rec = kept(
        &dir,
        &[
            "-o",
            dir.join("t.pftrace").to_str().unwrap(),
            "--json",
            summary.to_str().unwrap(),
        ],
        &[exe.to_str().unwrap(), "long"],
    );
    assert_eq!(load(&summary)[0]["instances"], 3_000_000);
    assert!(chunk_files(&rec).len() >= 5, "{:?}", chunk_files(&rec));
    // What the helper made and no thread claimed (no magic) is bounded: one
    // of each size below 4 MiB (64 KiB to 2 MiB) and two of 4 MiB per process.
    // One the helper was making as the program exited may be empty.
    let mut unclaimed: BTreeMap<PathBuf, Vec<u64>> = BTreeMap::new();
    for chunk in chunk_files(&rec) {
        let bytes = std::fs::read(&chunk).unwrap();
        if bytes.iter().take(8).all(|&b| b == 0) {
            let size = std::fs::metadata(&chunk).unwrap().len();
            let process = chunk.parent().unwrap().to_path_buf();
            unclaimed.entry(process).or_default().push(size);
        }
    }
    for sizes in unclaimed.values() {
        assert!(
            sizes.len() <= 8 && sizes.iter().sum::<u64>() <= (4 << 20) * 3,
            "{unclaimed:?}"
        );
    }
    // Too long for every event in one HTML page: an overview, saying so.
    let out = nvtxr(
        &[
            "report",
            "-q",
            "--html",
            "-o",
            dir.join("o.pftrace").to_str().unwrap(),
            rec.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let page = std::fs::read_to_string(dir.join("o.html")).unwrap();
    assert!(page.len() < 4 << 20, "{} bytes", page.len());
    assert!(
        page.contains("\"overview\":\"an overview of 6000000 events"),
        "the page says it is an overview"
    );
    assert!(page.contains("{\"n\":\"long\""), "the ranges are drawn");
    if have_tool("chromium") {
        let dom = dump_dom(&dir, &format!("file://{}", dir.join("o.html").display()));
        assert!(dom.contains("data-name=\"long\""), "drawn in the browser");
        assert!(dom.contains("an overview of 6000000 events"), "and says so");
    }
    // On a terminal, a progress line (shown from the start: conversions of
    // 6 million events can take less than the second it waits for).
    if have_tool("script") {
        let command = format!(
            "{nvtxr} report -q -o {quiet} {rec} && {nvtxr} report -o {shown} {rec}",
            nvtxr = artifacts().nvtxr.display(),
            quiet = dir.join("quiet.pftrace").display(),
            shown = dir.join("shown.pftrace").display(),
            rec = rec.display()
        );
        let on_tty = Command::new("script")
            .args(["-qc", &command, "/dev/null"])
            .env("NVTXR_PROGRESS_AFTER_MS", "0")
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&on_tty.stdout);
        let lines = shown.matches("\r\x1b[Knvtxr: ").count();
        assert!(lines >= 1, "{shown:?}");
        assert!(shown.contains("M of 6.0M events, "), "{shown:?}");
        assert!(shown.contains(" s left"), "{shown:?}");
        let last = shown.rfind(" s left").unwrap();
        assert!(
            shown[last..].starts_with(" s left\r\x1b[K"),
            "the line is cleared: {shown:?}"
        );
        let piped = nvtxr(
            &[
                "report",
                "-o",
                dir.join("piped.pftrace").to_str().unwrap(),
                rec.to_str().unwrap(),
            ],
            &[("NVTXR_PROGRESS_AFTER_MS", "0")],
        );
        assert!(
            !text(&piped).contains("events/s"),
            "no progress line off a terminal"
        );
    }
}
