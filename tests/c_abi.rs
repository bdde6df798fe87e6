//! The C ABI, driven by `tests/c/scenarios.c` linked to nvtxr shared and
//! static, recorded by the recording tool: exact event sequences and return
//! values, with and without a tool.

use nvtxr_harness::{compile_c, run, Producer, Run, Tool, INIT_OK};
use std::path::PathBuf;
use std::sync::OnceLock;

fn exe(producer: Producer) -> PathBuf {
    static SHARED: OnceLock<PathBuf> = OnceLock::new();
    static STATIC: OnceLock<PathBuf> = OnceLock::new();
    let cell = if producer == Producer::NvtxrShared {
        &SHARED
    } else {
        &STATIC
    };
    cell.get_or_init(|| compile_c("scenarios.c", producer, &[]))
        .clone()
}

/// Runs a scenario with the event-log tool, linked both ways; both must agree.
fn recorded(scenario: &str) -> Run {
    let shared = run(
        &exe(Producer::NvtxrShared),
        &[scenario],
        Tool::EventLog("record"),
        &[],
    );
    let stat = run(
        &exe(Producer::NvtxrStatic),
        &[scenario],
        Tool::EventLog("record"),
        &[],
    );
    assert!(shared.success, "{shared:?}");
    assert_eq!(
        shared.events, stat.events,
        "static and shared builds differ"
    );
    assert_eq!(
        shared.stdout, stat.stdout,
        "static and shared builds differ"
    );
    assert_eq!(
        shared.events.first().map(String::as_str),
        Some(INIT_OK),
        "{shared:?}"
    );
    shared
}

#[test]
fn basic_marks_and_ranges() {
    let r = recorded("basic");
    assert_eq!(
        r.calls(),
        [
            "MarkA \"hello\"",
            "RangePushA \"outer\" -> 0",
            "RangePushA \"inner\" -> 1",
            "RangePop -> 1",
            "RangePop -> 0",
            "RangeStartA \"async\" -> 1",
            "RangeEnd 1",
        ]
    );
    assert_eq!(
        r.lines(),
        [
            "push -> 0",
            "push -> 1",
            "pop -> 1",
            "pop -> 0",
            "start -> 1",
            "end -> 0"
        ]
    );
}

#[test]
fn attributes_colors_categories_payloads_registered_strings() {
    let r = recorded("attributes");
    assert_eq!(
        r.calls(),
        [
            "MarkEx {msg=\"colored\" color=0xff00ff00 category=7}",
            "MarkEx {msg=\"payload\" payload=u64:18446744073709551615}",
            "MarkEx {msg=\"payload\" payload=i64:-42}",
            "MarkEx {msg=\"payload\" payload=f64:0.5}",
            "MarkEx {msg=\"payload\" payload=u32:4000000000}",
            "MarkEx {msg=\"payload\" payload=i32:-7}",
            "MarkEx {msg=\"payload\" payload=f32:1.25}",
            "MarkEx {}",
            "RangePushEx {msg=\"colored\" color=0xff00ff00 category=7} -> 0",
            "RangePop -> 0",
            "RangeStartEx {msg=\"colored\" color=0xff00ff00 category=7} -> 1",
            "RangeEnd 1",
            "DomainRegisterStringA default \"registered\"",
            "DomainMarkEx default {msg=reg:\"registered\"}",
            "DomainMarkEx default {msg=reg:\"registered\" payload=i32:3}",
        ]
    );
}

#[test]
fn domains_strings_and_lifecycle() {
    let r = recorded("domains");
    assert_eq!(
        r.calls(),
        [
            // Two creates of one name: one tool domain. Two registrations: one tool call.
            "DomainCreateA \"trainer\"",
            "DomainRegisterStringA domain=\"trainer\" \"step\"",
            "DomainNameCategoryA domain=\"trainer\" 1 \"io\"",
            "DomainMarkEx domain=\"trainer\" {msg=\"domain mark\"}",
            "DomainMarkEx domain=\"trainer\" {msg=reg:\"step\"}",
            "DomainRangePushEx domain=\"trainer\" {msg=reg:\"step\"} -> 0",
            "DomainRangePop domain=\"trainer\" -> 0",
            "DomainRangeStartEx domain=\"trainer\" {msg=reg:\"step\"} -> 1",
            "DomainRangeEnd domain=\"trainer\" 1",
            "DomainMarkEx domain=\"trainer\" {msg=reg:\"step\" color=0x80123456 category=1}",
            "DomainMarkEx domain=\"trainer\" {msg=\"still alive\"}",
            // The second destroy is the last reference: the tool destroys once.
            "DomainDestroy domain=\"trainer\"",
            // Re-creating revives the handle and re-registers its strings.
            "DomainCreateA \"trainer\"",
            "DomainRegisterStringA domain=\"trainer\" \"step\"",
            "DomainMarkEx domain=\"trainer\" {msg=reg:\"step\"}",
            "DomainCreateA \"other\"",
        ]
    );
    assert_eq!(
        r.lines(),
        [
            "same handle: 1",
            "same string: 1",
            "name category -> 0",
            "push -> 0",
            "pop -> 0",
            "end -> 0",
            "destroy -> 0",
            "mark after first destroy -> 0",
            "destroy -> 0",
            "destroy again -> -103",
            "mark after destroy -> -103",
            "push after destroy -> -103",
            "pop after destroy -> -103",
            "start after destroy -> 0",
            "end after destroy -> -103",
            "string after destroy -> -103",
            "register after destroy -> NULL",
            "category after destroy -> -103",
            "destroy default -> 0",
            "revived same handle: 1",
            "string after revive -> 0",
            "foreign string -> -102",
        ]
    );
}

#[test]
fn thread_and_cuda_naming() {
    let r = recorded("naming");
    assert_eq!(
        r.calls(),
        [
            "NameOsThreadA tid=self \"main thread\"",
            "NameOsThreadA tid=4242 \"worker 4242\"",
            "NameCategoryA 3 \"default-domain category\"",
            "NameCuDeviceA 0 \"cu device 0\"",
            "NameCuContextA 0x1000 \"cu context\"",
            "NameCuStreamA 0x2000 \"cu stream\"",
            "NameCuEventA 0x3000 \"cu event\"",
            "NameCudaDeviceA 1 \"cuda device 1\"",
            "NameCudaStreamA 0x4000 \"cuda stream\"",
            "NameCudaEventA 0x5000 \"cuda event\"",
        ]
    );
}

#[test]
fn bad_input_is_refused_with_a_code_and_forwards_nothing() {
    let r = recorded("bad_input");
    assert_eq!(
        r.calls(),
        [
            "DomainCreateA \"bad\"",
            "DomainCreateA \"other\"",
            "DomainRegisterStringA domain=\"other\" \"elsewhere\"",
            // Unbalanced pops and every id, 0 included (Nsight Compute's first
            // range id), are the tool's to judge, as in NVIDIA's API.
            "RangePop -> -1",
            "RangeEnd 0",
            "RangeEnd 20015998343868",
            "RangeStartA \"twice\" -> 1",
            "RangeEnd 1",
            "RangeEnd 1",
            // Bytes are forwarded as they are.
            "MarkA \"bad \\xff\\xfe utf8\"",
            "MarkA \"still working\"",
        ]
    );
    assert_eq!(
        r.lines(),
        [
            "mark NULL message -> -101",
            "mark_ex NULL event -> -101",
            "mark_string NULL -> -101",
            "bad payload type -> -102",
            "bad color type -> -102",
            "both messages -> -102",
            "foreign string -> -102",
            "push NULL -> -101",
            "start NULL -> 0",
            "unbalanced pop -> -1",
            "end 0 -> 0",
            "end unknown -> 0",
            "end -> 0",
            "end again -> 0",
            "invalid utf8 -> 0",
            "domain NULL name -> NULL",
            "register NULL -> NULL",
            "name thread NULL -> -101",
            "name category NULL -> -101",
            "cuda NULL name -> -101",
        ]
    );
}

#[test]
fn without_a_tool_every_call_is_a_no_op_with_the_documented_result() {
    for producer in [Producer::NvtxrShared, Producer::NvtxrStatic] {
        let r = run(&exe(producer), &["basic"], Tool::None, &[]);
        assert!(r.success && r.events.is_empty(), "{r:?}");
        assert_eq!(
            r.lines(),
            [
                "push -> -2",
                "push -> -2",
                "pop -> -2",
                "pop -> -2",
                "start -> 0",
                "end -> 0"
            ]
        );

        let d = run(&exe(producer), &["domains"], Tool::None, &[]);
        assert!(d.success && d.events.is_empty(), "{d:?}");
        // Handles work without a tool; lifecycle errors are still reported.
        assert!(
            d.stdout.contains("same handle: 1\nsame string: 1\n"),
            "{}",
            d.stdout
        );
        assert!(d.stdout.contains("destroy again -> -103\n"), "{}", d.stdout);
        assert!(
            d.stdout.contains("register after destroy -> NULL\n"),
            "{}",
            d.stdout
        );

        let b = run(&exe(producer), &["bad_input"], Tool::None, &[]);
        assert!(b.success && b.events.is_empty(), "{b:?}");
        assert!(
            b.stdout.contains("mark NULL message -> 0\n"),
            "no tool: arguments are not read"
        );
        assert!(b.stdout.contains("domain NULL name -> NULL\n"));
    }
}

#[test]
fn header_version_matches_runtime_and_cargo() {
    let r = run(&exe(Producer::NvtxrShared), &["version"], Tool::None, &[]);
    let v = env!("CARGO_PKG_VERSION");
    let packed: u32 = env!("CARGO_PKG_VERSION_MAJOR").parse::<u32>().unwrap() * 1_000_000
        + env!("CARGO_PKG_VERSION_MINOR").parse::<u32>().unwrap() * 1_000
        + env!("CARGO_PKG_VERSION_PATCH").parse::<u32>().unwrap();
    assert_eq!(
        r.lines(),
        [
            format!("header {v} {packed}"),
            format!("runtime {v} {packed}")
        ]
    );
}

#[test]
fn no_memory_errors_under_valgrind() {
    if !nvtxr_harness::have_tool("valgrind") {
        return;
    }
    for scenario in ["basic", "attributes", "domains", "naming", "bad_input"] {
        let r = nvtxr_harness::run_under(
            &[
                "valgrind",
                "-q",
                "--error-exitcode=99",
                "--track-origins=yes",
            ],
            &exe(Producer::NvtxrShared),
            &[scenario],
            Tool::EventLog("record"),
            &[],
        );
        assert!(
            r.success,
            "{scenario}: valgrind found errors:\n{}",
            r.stderr
        );
        assert_eq!(
            r.events,
            recorded(scenario).events,
            "{scenario}: same events under valgrind"
        );
    }
}

#[test]
fn only_the_fields_the_event_size_covers_are_read() {
    let exe = nvtxr_harness::compile_c("scenarios.c", nvtxr_harness::Producer::NvtxrShared, &[]);
    let r = nvtxr_harness::run(
        &exe,
        &["event_size"],
        nvtxr_harness::Tool::EventLog("record"),
        &[],
    );
    assert!(r.success, "{r:?}");
    assert_eq!(
        r.lines(),
        ["smaller 0", "full 0", "size 0 -102", "bigger 0"]
    );
    assert_eq!(
        r.calls(),
        [
            "MarkEx {msg=\"older header\" color=0xff112233}",
            "MarkEx {msg=\"older header\" color=0xff112233 payload=u64:7}",
            "MarkEx {msg=\"older header\" color=0xff112233 payload=u64:7}",
        ],
        "the payload past the smaller size is not read; size 0 is refused"
    );
}

#[test]
fn a_domain_is_enabled_as_nvtx_answers() {
    let exe = nvtxr_harness::compile_c("scenarios.c", nvtxr_harness::Producer::NvtxrShared, &[]);
    for (tool, lines) in [
        (
            nvtxr_harness::Tool::None,
            ["default 0 domain 0", "destroyed 0"],
        ),
        // The tool answers (the event-log tool: yes).
        (
            nvtxr_harness::Tool::EventLog("record"),
            ["default 1 domain 1", "destroyed 0"],
        ),
        // A tool that declines its extensions: as no tool.
        (
            nvtxr_harness::Tool::EventLog("ext-decline"),
            ["default 0 domain 0", "destroyed 0"],
        ),
        // A tool without the function: yes.
        (
            nvtxr_harness::Tool::EventLog("ext-partial"),
            ["default 1 domain 1", "destroyed 0"],
        ),
    ] {
        let r = nvtxr_harness::run(&exe, &["is_enabled"], tool, &[]);
        assert!(r.success, "{r:?}");
        assert_eq!(r.lines(), lines, "{tool:?}");
        if matches!(tool, nvtxr_harness::Tool::EventLog("record")) {
            let asked: Vec<&str> = r
                .calls()
                .into_iter()
                .filter(|c| c.starts_with("DomainIsEnabled"))
                .collect();
            assert_eq!(
                asked,
                [
                    "DomainIsEnabled default",
                    "DomainIsEnabled domain=\"asked\""
                ]
            );
        }
    }
}

#[test]
fn a_handle_of_the_wrong_kind_is_refused() {
    let exe = nvtxr_harness::compile_c("scenarios.c", nvtxr_harness::Producer::NvtxrShared, &[]);
    let r = nvtxr_harness::run(
        &exe,
        &["handle_kinds"],
        nvtxr_harness::Tool::EventLog("record"),
        &[],
    );
    assert!(r.success, "{r:?}");
    assert_eq!(
        r.lines(),
        [
            "mark in a string -102",
            "push in a string -102",
            "register in a string NULL",
            "a domain as message -102",
            "a domain in an event -102",
            "destroy a string -102",
            "right kinds 0",
        ]
    );
    let marks: Vec<&str> = r
        .calls()
        .into_iter()
        .filter(|c| c.contains("Mark"))
        .collect();
    assert_eq!(
        marks,
        ["DomainMarkEx domain=\"kinds\" {msg=reg:\"text\"}"],
        "nothing else reached the tool"
    );
}

#[test]
fn sync_objects_and_opencl_names_through_nvtxrs_own_names() {
    let exe = nvtxr_harness::compile_c("scenarios.c", nvtxr_harness::Producer::NvtxrShared, &[]);
    let r = nvtxr_harness::run(
        &exe,
        &["sync_and_opencl"],
        nvtxr_harness::Tool::EventLog("record"),
        &[],
    );
    assert!(r.success, "{r:?}");
    assert_eq!(r.lines(), ["sync created", "cl event 0", "null name -101"]);
    let sync = "{msg=\"work queue\" version=3 size=16}";
    assert_eq!(
        r.calls(),
        [
            "DomainCreateA \"locks\"".to_string(),
            format!("DomainSyncUserCreate domain=\"locks\" {sync}"),
            format!("DomainSyncUserAcquireStart {sync}"),
            format!("DomainSyncUserAcquireFailed {sync}"),
            format!("DomainSyncUserAcquireStart {sync}"),
            format!("DomainSyncUserAcquireSuccess {sync}"),
            format!("DomainSyncUserReleasing {sync}"),
            format!("DomainSyncUserDestroy {sync}"),
            "NameClDeviceA 0x1000 \"gpu0\"".into(),
            "NameClContextA 0x1000 \"ctx\"".into(),
            "NameClCommandQueueA 0x1000 \"queue\"".into(),
            "NameClMemObjectA 0x1000 \"buffer\"".into(),
            "NameClSamplerA 0x1000 \"sampler\"".into(),
            "NameClProgramA 0x1000 \"program\"".into(),
            "NameClEventA 0x1000 \"event\"".into(),
        ]
    );
    // No tool: NULL object, every call a no-op that reads nothing.
    let r = nvtxr_harness::run(&exe, &["sync_and_opencl"], nvtxr_harness::Tool::None, &[]);
    assert_eq!(r.lines(), ["sync NULL", "cl event 0", "null name 0"]);
}

#[test]
fn handles_nvtxr_never_made_are_refused_where_a_cheap_check_can_tell() {
    // Before: nvtxr_domain_destroy((void*)0x10) read the tag at 0x10 (SIGSEGV).
    for tool in [Tool::None, Tool::EventLog("record")] {
        let r = run(&exe(Producer::NvtxrShared), &["forged_handles"], tool, &[]);
        assert!(r.success, "{r:?}");
        assert_eq!(
            r.lines(),
            (0..4)
                .map(|i| format!("{i} destroy 1 register 1 mark 1 push_string 1"))
                .collect::<Vec<_>>()
        );
    }
}
