//! A recording's disk use follows its events, not its threads: a thread
//! that ends gives back its chunk's unused pages.

mod common;

use common::*;
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
fn short_lived_threads_cost_a_page_each_not_a_chunk() {
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
    let (used, apparent) = disk_use(&rec);
    // A filesystem without holes (or with larger blocks) keeps the chunks
    // whole: then there is nothing to check.
    if used < apparent / 2 {
        assert!(
            used <= threads as u64 * 8192 + (1 << 20),
            "{used} bytes on disk for {threads} threads ({apparent} apparent)"
        );
    }
}
