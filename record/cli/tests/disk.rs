//! A recording's disk use follows its events, not its threads: a thread
//! that ends hands the rest of its chunk to the next new thread.

mod common;

use common::*;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Bytes a folder's files take on disk, and their apparent size.
fn disk_use(dir: &Path) -> (u64, u64) {
    let (mut used, mut apparent) = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        if meta.is_dir() {
            let (u, a) = disk_use(&entry.path());
            (used, apparent) = (used + u, apparent + a);
        } else {
            used += meta.blocks() * 512;
            apparent += meta.len();
        }
    }
    (used, apparent)
}

#[test]
fn short_lived_threads_share_chunks_and_cost_what_their_events_take() {
    let dir = scratch_in("disk", "short-threads");
    let rec = dir.join("rec");
    let threads = 2000;
    let out = record(
        &dir,
        &["-q", "--keep", rec.to_str().unwrap()],
        &[
            scenarios().to_str().unwrap(),
            "short_threads",
            &threads.to_string(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let ev = events(&load(&dir.join("trace.json")));
    assert_eq!(count(&ev, "X", "request"), threads);
    assert_eq!(count(&ev, "i", "tick"), threads);
    // Each thread's records stay its own where threads share a chunk: its
    // mark lies inside its own range (a tid the kernel reused has two).
    let mut ranges: HashMap<u64, Vec<(i64, i64)>> = HashMap::new();
    for e in ev.iter().filter(|e| e.name == "request") {
        ranges.entry(e.tid).or_default().push((e.start, e.end));
    }
    for e in ev.iter().filter(|e| e.name == "tick") {
        let inside = ranges[&e.tid]
            .iter()
            .any(|&(s, end)| s <= e.start && e.start <= end);
        assert!(
            inside,
            "{e:?} is outside its thread's ranges {:?}",
            ranges[&e.tid]
        );
    }
    let files = chunk_files(&rec).len();
    assert!(files <= 20, "{files} chunk files for {threads} threads");
    let (used, apparent) = disk_use(&rec);
    assert!(
        used <= threads as u64 * 256 + (1 << 20),
        "{used} bytes on disk for {threads} threads ({apparent} apparent)"
    );
}

#[test]
fn a_thread_killed_in_a_chunk_handed_on_to_it_loses_nothing_recorded() {
    let dir = scratch_in("disk", "handed-on-kill");
    let rec = dir.join("rec");
    let threads = 100;
    let out = record(
        &dir,
        &["-q", "--keep", rec.to_str().unwrap()],
        &[
            scenarios().to_str().unwrap(),
            "short_threads_then_kill",
            &threads.to_string(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(128 + 9), "{}", text(&out));
    let ev = events(&load(&dir.join("trace.json")));
    assert_eq!(count(&ev, "X", "request"), threads);
    assert_eq!(count(&ev, "i", "tick"), threads);
    let open = ev
        .iter()
        .find(|e| e.name == "open at death")
        .expect("the open range");
    // Its own thread's, closed at the process's last event.
    assert!(
        ev.iter().filter(|e| e.tid == open.tid).count() == 1,
        "{open:?}"
    );
    // The threads shared chunks: far fewer files than threads.
    let files = chunk_files(&rec).len();
    assert!(
        files <= 12,
        "{files} chunk files for {} threads",
        threads + 2
    );
}
