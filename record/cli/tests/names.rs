//! The summary groups range names as people mean them (`step {n}`), the
//! HTML page colors each group alike by the same rule, and
//! `--exact-names` / `--operators` say otherwise.

mod common;

use common::*;
use nvtxr_harness::{have_tool, root};
use std::process::Command;

#[test]
fn the_pages_grouping_is_the_summarys() {
    if !have_tool("node") {
        return;
    }
    let tests = root().join("record/cli/tests");
    let out = Command::new("node")
        .arg(tests.join("group_of.js"))
        .arg(root().join("record/cli/src/html/timeline.html"))
        .arg(tests.join("name_groups.json"))
        .output()
        .unwrap();
    let said = text(&out);
    assert!(out.status.success() && said.starts_with("all "), "{said}");
}

#[test]
fn numbered_names_are_one_row_and_exact_names_on_request() {
    let dir = scratch_in("names", "rows");
    let exe = scenarios();
    // 4 threads × 20000 ranges named "busy N", and as many marks.
    let summary = |extra: &[&str]| -> Vec<(String, u64)> {
        let out = Command::new(&nvtxr_harness::artifacts().nvtxr)
            .args(["record", "-q", "-o"])
            .arg(dir.join("t.json"))
            .arg("--json")
            .arg(dir.join("s.json"))
            .args(extra)
            .args(["--", exe.to_str().unwrap(), "many"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let rows = load(&dir.join("s.json"));
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["range"].as_str().unwrap().to_string(),
                    r["instances"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(summary(&[]), [(":busy {n}".to_string(), 80000)]);
    let mut exact = summary(&["--exact-names"]);
    exact.sort();
    assert_eq!(
        exact,
        (0..4)
            .map(|t| (format!(":busy {t}"), 20000))
            .collect::<Vec<_>>()
    );
    // The trace keeps every exact name.
    let ev = events(&load(&dir.join("t.json")));
    assert_eq!(count(&ev, "X", "busy 3"), 20000);
}
