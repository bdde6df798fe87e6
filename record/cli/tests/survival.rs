//! `nvtxr record` keeps what was recorded whatever the program does:
//! signals (and events from their handlers), exit() from a thread, exec,
//! a child outliving its parent, atexit handlers, file size limits, a full
//! disk, more threads than file descriptors.

mod common;

use common::*;
use nvtxr_harness::{artifacts, have_tool};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};

fn scratch(name: &str) -> common::Scratch {
    scratch_in("record", name)
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
