//! Signals to `nvtxr` itself: while the program runs they reach it and
//! what it recorded is converted; while nvtxr converts they stop it at
//! once, leave no output half-written, keep the recording and say how to
//! finish the job.

mod common;

use common::*;
use nvtxr_harness::artifacts;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> common::Scratch {
    scratch_in("signals", name)
}

const SIGNALS: [(i32, &str); 3] = [(2, "SIGINT"), (15, "SIGTERM"), (1, "SIGHUP")];

fn signal(child: &Child, signal: i32) {
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, signal) };
}

/// The child's exit code and stderr, once it has ended; a panic when it is
/// still running `limit` after the signal (then it is killed).
fn ended(mut child: Child, limit: Duration, what: &str) -> (Option<i32>, String) {
    let sent = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            return (status.code(), stderr);
        }
        if sent.elapsed() > limit {
            let _ = child.kill();
            panic!("{what}: nvtxr still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `nvtxr record` of `bulk N` with `outputs` (relative to `dir`), started;
/// returns once the program has ended and nvtxr has reaped it (nvtxr
/// converts from then: a signal stops the conversion instead of reaching
/// the program).
fn bulk_recording(dir: &Path, ranges: u32, outputs: &[&str]) -> Child {
    let mut child = Command::new(&artifacts().nvtxr)
        .current_dir(dir)
        .arg("record")
        .args(outputs)
        .args([
            "--",
            scenarios().to_str().unwrap(),
            "bulk",
            &ranges.to_string(),
        ])
        .env_remove(nvtxr_harness::INJECTION_PATH_VAR)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid = line
        .strip_prefix("done ")
        .and_then(|p| p.trim().parse::<u32>().ok())
        .unwrap_or_else(|| panic!("the program's pid, not {line:?}"));
    let reaped = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            reaped.elapsed() < Duration::from_secs(120),
            "the program never ended"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

/// The recording nvtxr kept and the command it printed to convert it.
fn kept(stderr: &str) -> (PathBuf, String) {
    let line = stderr
        .lines()
        .find(|l| l.contains("the recording is kept in "))
        .unwrap_or_else(|| panic!("where the recording is, not said: {stderr}"));
    let dir = line
        .split("the recording is kept in ")
        .nth(1)
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    let command = line.split("convert it with: ").nth(1).unwrap();
    assert!(Path::new(dir).join("").is_dir(), "{dir} kept: {stderr}");
    (PathBuf::from(dir), command.to_string())
}

/// Nothing half-written: no temporary file, and each output that is
/// there is whole.
fn nothing_half_written(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with(".nvtxr-"), "temporary file left: {name}");
    }
    if dir.join("t.json").is_file() {
        assert_eq!(
            count(&events(&load(&dir.join("t.json"))), "X", "bulk"),
            200_000
        );
    }
}

/// A FIFO no one reads: nvtxr blocks opening it, as on a full pipe.
fn fifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_signal_during_each_output_stops_nvtxr_and_keeps_the_recording() {
    // Each output in turn is a FIFO no one reads: nvtxr, writing it, waits
    // there until the signal comes (the ones before it are written whole).
    let outputs = [
        "-o", "t.json", "--sqlite", "t.sqlite", "--html", "--csv", "t.csv", "--json", "s.json",
    ];
    for (stuck, (number, name)) in ["t.json", "t.sqlite", "t.html", "t.csv", "s.json"]
        .iter()
        .zip(SIGNALS.iter().cycle())
    {
        let dir = scratch(&format!("output-{stuck}"));
        fifo(&dir.join(stuck));
        let child = bulk_recording(&dir, 200_000, &outputs);
        std::thread::sleep(Duration::from_millis(1500));
        signal(&child, *number);
        let what = format!("{name} while writing {stuck}");
        let (code, stderr) = ended(child, Duration::from_secs(20), &what);
        assert_eq!(code, Some(128 + number), "{what}: {stderr}");
        assert!(
            stderr.contains(&format!("stopped by signal {number}")),
            "{what}: {stderr}"
        );
        nothing_half_written(&dir);
        let (rec, command) = kept(&stderr);
        assert!(
            command.starts_with(
                "nvtxr report -o t.json --html --csv t.csv --json s.json --sqlite t.sqlite "
            ),
            "{command}"
        );
        std::fs::remove_dir_all(rec).unwrap();
    }
}

#[test]
fn a_signal_at_any_point_of_a_long_conversion_stops_it_and_its_command_finishes_the_job() {
    for (delay_ms, (number, name)) in [300, 1500, 3000].into_iter().zip(SIGNALS) {
        let dir = scratch(&format!("long-{delay_ms}"));
        let child = bulk_recording(
            &dir,
            200_000,
            &["-q", "-o", "t.json", "--sqlite", "t.sqlite", "--html"],
        );
        std::thread::sleep(Duration::from_millis(delay_ms));
        signal(&child, number);
        let what = format!("{name} {delay_ms} ms into the conversion");
        let (code, stderr) = ended(child, Duration::from_secs(20), &what);
        nothing_half_written(&dir);
        if code == Some(0) {
            continue; // This machine converted it all first.
        }
        assert_eq!(code, Some(128 + number), "{what}: {stderr}");
        let (rec, command) = kept(&stderr);
        let path = format!(
            "{}:{}",
            artifacts().nvtxr.parent().unwrap().display(),
            std::env::var("PATH").unwrap()
        );
        let out = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .current_dir(&dir)
            .env("PATH", path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {}", text(&out));
        nothing_half_written(&dir);
        for output in ["t.json", "t.sqlite", "t.html"] {
            assert!(dir.join(output).is_file(), "{command} wrote {output}");
        }
        std::fs::remove_dir_all(rec).unwrap();
    }
}

#[test]
fn a_signal_stops_nvtxr_report_and_a_second_ends_it_at_once() {
    let dir = scratch("report");
    let child = bulk_recording(&dir, 20_000, &["-q", "--keep", "rec", "-o", "first.json"]);
    let (code, stderr) = ended(child, Duration::from_secs(60), "recording");
    assert_eq!(code, Some(0), "{stderr}");
    let before = std::fs::read_dir(dir.join("rec")).unwrap().count();
    for twice in [false, true] {
        fifo(&dir.join("t.json"));
        let child = Command::new(&artifacts().nvtxr)
            .current_dir(&dir)
            .args(["report", "-q", "-o", "t.json", "rec"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        signal(&child, 2);
        if twice {
            signal(&child, 2);
        }
        let (code, stderr) = ended(child, Duration::from_secs(20), "SIGINT to nvtxr report");
        assert_eq!(code, Some(130), "{stderr}");
        assert!(stderr.contains("the recording is as it was"), "{stderr}");
        std::fs::remove_file(dir.join("t.json")).unwrap();
    }
    assert_eq!(std::fs::read_dir(dir.join("rec")).unwrap().count(), before);
}

#[test]
fn sigint_to_nvtxr_reaches_the_command_and_the_trace_is_complete() {
    let dir = scratch("sigint");
    let mut child = record_command(&dir, &["-q"], &[scenarios().to_str().unwrap(), "loop"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line, "ready\n");
    std::thread::sleep(std::time::Duration::from_millis(100));
    signal(&child, 2);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 2));
    let ev = events(&load(&dir.join("trace.json")));
    assert_eq!(count(&ev, "X", "before ready"), 5);
    assert!(count(&ev, "X", "looping") > 10);
    check_summary(&dir, &ev);
}

/// `nvtxr record` of 4 threads recording until SIGTERM, sent to nvtxr once
/// they run; the child and the program's stdout after its "ready" line.
fn record_until_sigterm(
    dir: &Path,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
) {
    let mut child = record_command(
        dir,
        &["-q"],
        &[scenarios().to_str().unwrap(), "until_sigterm"],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line, "ready\n");
    std::thread::sleep(std::time::Duration::from_millis(50));
    signal(&child, 15); // nvtxr forwards it

    (child, stdout)
}

#[test]
fn sigterm_to_nvtxr_mid_run_loses_no_completed_range() {
    let dir = scratch("sigterm-mid-run");
    let (mut child, mut stdout) = record_until_sigterm(&dir);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(128 + 15));
    let completed: Vec<usize> = line
        .trim()
        .strip_prefix("completed ")
        .unwrap()
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    let ev = events(&load(&dir.join("trace.json")));
    for (t, done) in completed.iter().enumerate() {
        let recorded = count(&ev, "X", &format!("counted {t}"));
        // Each range completed before the signal is there (the other
        // threads went on while the handler read the counters).
        assert!(
            recorded >= *done,
            "thread {t}: {recorded} recorded, {done} completed"
        );
        assert!(*done > 1000, "thread {t} ran: {done}");
    }
}

#[test]
fn sigterm_then_sigkill_as_mpirun_sends_them_leaves_a_trace_or_the_recording_and_no_debris() {
    let dir = scratch("sigterm-sigkill");
    let (mut child, _stdout) = record_until_sigterm(&dir);
    let mut line = String::new();
    // nvtxr says where the recording is before it converts; then it is killed.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let kept = loop {
        line.clear();
        assert!(std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() > 0);
        if let Some(dir) = kept_recording_in(&line) {
            assert!(
                line.contains("terminated: writing the outputs now"),
                "{line}"
            );
            break PathBuf::from(dir);
        }
    };
    signal(&child, 9);
    child.wait().unwrap();
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".nvtxr-"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    if dir.join("trace.json").exists() {
        // Finished before the SIGKILL: the trace is whole.
        assert!(count(&events(&load(&dir.join("trace.json"))), "X", "counted 0") > 1000);
    } else {
        let again = dir.join("again.json");
        let out = Command::new(&artifacts().nvtxr)
            .args(["report", "-q", "-o"])
            .arg(&again)
            .arg(&kept)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        assert!(count(&events(&load(&again)), "X", "counted 0") > 1000);
        std::fs::remove_dir_all(&kept).unwrap();
    }
}
