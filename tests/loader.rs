//! The tool loader: every way a tool can fail to attach, races, re-entry and fork.

use nvtxr_harness::{artifacts, compile_c, run, Producer, Tool, INIT_OK};
use std::path::PathBuf;
use std::sync::OnceLock;

fn exe() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile_c("scenarios.c", Producer::NvtxrShared, &[]))
        .clone()
}

/// Runs the `status` scenario with `NVTX_INJECTION64_PATH=path`.
fn status_with(path: &str) -> nvtxr_harness::Run {
    let r = run(&exe(), &["status"], Tool::Path(path), &[]);
    assert!(r.success, "{r:?}");
    r
}

#[test]
fn no_tool_configured() {
    let r = run(&exe(), &["status"], Tool::None, &[]);
    assert_eq!(r.lines(), ["attached 0", "tool_attached 0", "error (none)"]);
    assert_eq!(r.stderr, "");
}

#[test]
fn explicit_no_tool() {
    let r = status_with("./.");
    assert_eq!(r.lines(), ["attached 0", "tool_attached 0", "error (none)"]);
    assert_eq!(r.stderr, "");
}

#[test]
fn missing_file_is_reported_once() {
    let r = status_with("/nonexistent/libtool.so");
    assert_eq!(r.lines()[..2], ["attached 0", "tool_attached 0"]);
    assert!(
        r.lines()[2].starts_with("error could not load NVTX tool \"/nonexistent/libtool.so\": "),
        "{r:?}"
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r
        .stderr
        .starts_with("nvtxr: could not load NVTX tool \"/nonexistent/libtool.so\""));
}

#[test]
fn quiet_variable_silences_the_report_but_not_the_api() {
    let r = run(
        &exe(),
        &["status"],
        Tool::Path("/nonexistent/libtool.so"),
        &[("NVTXR_QUIET", "1")],
    );
    assert_eq!(r.stderr, "");
    assert!(
        r.lines()[2].starts_with("error could not load NVTX tool"),
        "{r:?}"
    );
}

#[test]
fn file_that_is_not_a_library() {
    let path = nvtxr_harness::work_dir().join("not-a-library.so");
    std::fs::write(&path, "this is text, not ELF\n").unwrap();
    let r = status_with(path.to_str().unwrap());
    assert_eq!(r.lines()[0], "attached 0");
    assert!(
        r.lines()[2].starts_with("error could not load NVTX tool"),
        "{r:?}"
    );
    assert!(r.stderr.contains("not-a-library.so"), "{}", r.stderr);
}

#[test]
fn library_without_the_entry_point() {
    // nvtxr's own shared library is a real library with no InitializeInjectionNvtx2.
    let lib = artifacts().lib_dir.join("libnvtxr.so");
    let r = status_with(lib.to_str().unwrap());
    assert_eq!(r.lines()[0], "attached 0");
    assert_eq!(
        r.lines()[2],
        format!(
            "error NVTX tool {:?} has no InitializeInjectionNvtx2 entry point",
            lib.to_str().unwrap()
        )
    );
}

#[test]
fn entry_point_returning_zero_gets_no_events() {
    // The event-log tool fills every slot, then declines: nvtxr must clear them.
    let r = run(&exe(), &["status"], Tool::EventLog("decline"), &[]);
    assert!(r.success, "{r:?}");
    assert_eq!(
        r.events,
        [INIT_OK],
        "no event may reach a tool that declined"
    );
    assert_eq!(r.lines()[0], "attached 0");
    assert!(
        r.lines()[2].ends_with("InitializeInjectionNvtx2 returned 0 (the tool declined to attach)"),
        "{r:?}"
    );
}

#[test]
fn sixteen_threads_race_the_first_call_against_a_slow_tool() {
    let r = run(&exe(), &["race"], Tool::EventLog("slow"), &[]);
    assert!(r.success, "{r:?}");
    let inits = r.events.iter().filter(|l| l.starts_with("init")).count();
    assert_eq!(inits, 1, "initialized once");
    let calls = r.calls();
    assert_eq!(calls.len(), 48, "all 48 events arrive: {calls:?}");
    for i in 0..16 {
        let n = |prefix: &str| calls.iter().filter(|l| l.starts_with(prefix)).count();
        assert_eq!(n(&format!("MarkA \"racer {i}\"")), 1);
        assert_eq!(n(&format!("RangePushA \"racer {i}\" -> 0")), 1);
    }
    assert_eq!(calls.iter().filter(|l| **l == "RangePop -> 0").count(), 16);
}

#[test]
fn tool_calling_back_during_its_init_does_not_hang() {
    let r = run(&exe(), &["reenter"], Tool::EventLog("reenter"), &[]);
    assert!(r.success, "hung or crashed: {r:?}");
    assert_eq!(r.lines(), ["returned"]);
    // The tool filled its MarkA slot before calling back, so its re-entrant
    // call reaches it, as with NVIDIA's loader (a slot it has not filled yet
    // drops the call); the triggering call is forwarded.
    assert_eq!(
        r.events,
        [
            INIT_OK,
            "MarkA \"from inside init\"",
            "reenter: nvtxr_mark returned 0",
            "MarkA \"first\"",
            "MarkA \"second\""
        ]
    );
}

#[test]
fn fork_after_init_keeps_the_tool_in_the_child() {
    let r = run(&exe(), &["fork_after_init"], Tool::EventLog("record"), &[]);
    assert!(r.success, "{r:?}");
    assert_eq!(r.lines(), ["child exit 0"]);
    assert_eq!(
        r.events,
        [
            INIT_OK,
            "MarkA \"parent before fork\"",
            "MarkA \"child\"",
            "MarkA \"parent after fork\""
        ]
    );
}

#[test]
fn fork_while_another_thread_initializes_does_not_leave_the_child_stuck() {
    let r = run(&exe(), &["fork_during_init"], Tool::EventLog("slow"), &[]);
    assert!(r.success, "{r:?}");
    // 0: the child finished (a hang would end in SIGALRM, 142).
    assert_eq!(r.lines(), ["child exit 0"]);
    // The child has no tool (re-running a half-done dlopen or tool init in
    // it can hang or crash); the parent's event arrived.
    let calls = r.calls();
    assert!(
        !calls.contains(&"MarkA \"child during parent init\""),
        "{r:?}"
    );
    assert!(calls.contains(&"MarkA \"parent thread\""), "{r:?}");
    assert_eq!(
        r.events.iter().filter(|l| l.starts_with("init")).count(),
        1,
        "only the parent initializes"
    );
}

#[test]
fn a_fork_anywhere_in_the_first_call_never_leaves_the_child_stuck() {
    // Before the loader registered its fork handler at load time, a fork
    // landing while another thread registered it (on the first call) left
    // the child waiting forever: about 1 trial in 15 here.
    for tool in [Tool::EventLog("record"), Tool::Path(record_tool())] {
        let r = run(&exe(), &["fork_race"], tool, &[]);
        assert!(r.success, "{r:?}");
        assert_eq!(r.lines(), ["stuck 0 of 200"]);
    }
}

fn record_tool() -> &'static str {
    artifacts().record_tool.to_str().unwrap()
}

#[test]
fn fork_while_another_thread_creates_a_domain_does_not_leave_the_child_stuck() {
    let r = run(
        &exe(),
        &["fork_during_domain_create"],
        Tool::EventLog("slow-domain"),
        &[],
    );
    assert!(r.success, "{r:?}");
    assert_eq!(r.lines(), ["child exit 0"], "a hang ends in SIGALRM (142)");
    let calls = r.calls();
    assert!(
        calls.contains(&"DomainMarkEx domain=\"child\" {msg=\"child domain works\"}"),
        "{r:?}"
    );
    assert!(calls.contains(&"DomainCreateA \"slow\""), "{r:?}");
}

#[test]
fn a_tool_creating_domains_and_strings_in_its_init_does_not_hang_and_they_work() {
    let r = run(
        &exe(),
        &["register_first"],
        Tool::EventLog("reenter-create"),
        &[],
    );
    assert!(r.success, "hung or crashed: {r:?}");
    assert_eq!(r.lines(), ["returned"]);
    let calls = r.calls();
    assert!(
        r.events
            .contains(&"reenter-create: domain true strings true true".to_string()),
        "{r:?}"
    );
    // Made during init, attached to the tool at first use: the right domain
    // and the right text, never NULL or the default domain.
    for expected in [
        "DomainRegisterStringA default \"first call\"",
        "DomainMarkEx default {msg=reg:\"first call\"}",
        "DomainCreateA \"made in init\"",
        "DomainRegisterStringA domain=\"made in init\" \"string from init\"",
        "DomainMarkEx domain=\"made in init\" {msg=reg:\"string from init\"}",
        "DomainRegisterStringA default \"default string from init\"",
        "DomainMarkEx default {msg=reg:\"default string from init\"}",
        "DomainMarkEx domain=\"made in init\" {msg=\"text in made in init\"}",
    ] {
        assert_eq!(
            calls.iter().filter(|c| **c == expected).count(),
            1,
            "{expected}: {calls:#?}"
        );
    }
}

#[test]
fn a_tool_forking_in_its_init_does_not_hang() {
    let r = run(
        &exe(),
        &["register_first"],
        Tool::EventLog("fork-in-init"),
        &[],
    );
    assert!(r.success, "hung or crashed: {r:?}");
    assert_eq!(r.lines(), ["returned"]);
    assert!(
        r.events.contains(&"fork-in-init: child exit 0".to_string()),
        "{r:?}"
    );
    // Forked mid-initialization: the child has no tool, so its mark is a no-op.
    assert!(
        !r.calls().contains(&"MarkA \"in the forked child\""),
        "{r:?}"
    );
    assert_eq!(r.events.iter().filter(|l| l.starts_with("init")).count(), 1);
}

#[test]
fn a_tool_calling_nvtxr_and_forking_from_domain_create_does_not_hang() {
    let r = run(
        &exe(),
        &["hostile_domain"],
        Tool::EventLog("hostile-callbacks"),
        &[],
    );
    assert!(r.success, "hung or crashed: {r:?}");
    assert_eq!(r.lines(), ["returned"]);
    assert!(
        r.events
            .contains(&"hostile: mark 0, nested domain true, child exit 0".to_string()),
        "{r:?}"
    );
    let calls = r.calls();
    assert!(calls.contains(&"MarkA \"from DomainCreate\""), "{calls:?}");
    assert!(calls.contains(&"DomainCreateA \"nested\""), "{calls:?}");
    assert!(
        calls.contains(&"DomainMarkEx domain=\"hostile\" {msg=\"after\"}"),
        "{calls:?}"
    );
}

#[test]
fn destroying_a_domain_while_threads_annotate_in_it() {
    let r = run(&exe(), &["destroy_race"], Tool::EventLog("record"), &[]);
    assert!(r.success, "hung or crashed: {r:?}");
    let calls = r.calls();
    let marks = |expected: &str| {
        let marks: Vec<&&str> = calls
            .iter()
            .filter(|c| c.starts_with("DomainMarkEx") && c.contains("in racy"))
            .filter(|c| c.contains("registered") == expected.contains("registered"))
            .collect();
        assert!(marks.len() > 100, "the threads marked: {}", marks.len());
        for m in &marks {
            assert_eq!(
                **m, expected,
                "no event after destroy carries the destroyed handle (nor a string \
                 registered in another life of the domain), none moves to the default domain"
            );
        }
    };
    marks("DomainMarkEx domain=\"racy\" {msg=\"in racy\"}");
    marks("DomainMarkEx domain=\"racy\" {msg=reg:\"in racy, registered\"}");
    // Destroyed and revived 300 times: one DomainCreate per life, and the
    // string registered at most once per life.
    let count = |p: &str| calls.iter().filter(|c| c.starts_with(p)).count();
    assert_eq!(count("DomainDestroy domain=\"racy\""), 300);
    assert_eq!(count("DomainCreateA \"racy\""), 301);
    let registered = count("DomainRegisterStringA domain=\"racy\"");
    assert!(
        (1..=301).contains(&registered),
        "registered {registered} times"
    );
}

#[test]
fn domain_and_string_calls_from_a_signal_handler_never_deadlock() {
    let r = run(&exe(), &["signal_register"], Tool::EventLog("null"), &[]);
    assert!(r.success, "hung (SIGALRM) or crashed: {r:?}");
    assert_eq!(r.lines(), ["handled 200"]);
}

#[test]
fn control_characters_in_the_tool_path_are_escaped_in_the_report() {
    let r = status_with("/nonexistent/evil\n\x1b[2Jtool.so");
    assert_eq!(r.stderr.lines().count(), 1, "one line: {:?}", r.stderr);
    assert!(!r.stderr.contains('\x1b'), "{:?}", r.stderr);
    assert!(
        r.stderr.contains("evil\\n\\u{1b}[2Jtool.so"),
        "{:?}",
        r.stderr
    );
}

#[test]
fn a_tool_that_fills_only_domain_slots_gets_domain_calls_only() {
    let r = run(
        &exe(),
        &["domains_only"],
        Tool::EventLog("domains-only"),
        &[],
    );
    assert!(r.success, "{r:?}");
    assert_eq!(
        r.lines(),
        [
            "domain mark 0",
            "domain push 0",
            "domain pop 0",
            "default mark 0",
            "default push -2",
            "default pop -2",
            "default start 0",
            "default ex 0",
            "null message 1"
        ]
    );
    assert_eq!(
        r.events,
        [
            INIT_OK,
            "DomainCreateA \"lib\"",
            "DomainRegisterStringA domain=\"lib\" \"registered\"",
            "DomainMarkEx domain=\"lib\" {msg=\"in domain\"}",
            "DomainRangePushEx domain=\"lib\" {msg=reg:\"registered\"} -> 0",
            "DomainRangePop domain=\"lib\" -> 0"
        ]
    );
}
