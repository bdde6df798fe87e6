//! `nvtxr report` reading a recording: only its regular files, a damaged
//! chunk losing only itself, an empty report saying why.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> common::Scratch {
    scratch_in("record", name)
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
