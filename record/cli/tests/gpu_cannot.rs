//! When GPU recording cannot work (no libcupti, another profiler holding
//! CUPTI, CUPTI failing, a CUPTI too old, `--gpu off`/`on`, another tool's CUDA injection,
//! GPU times on CUPTI's own clock, a CUPTI that cannot record launches
//! alone): the NVTX recording unchanged, one line saying why. The test
//! CUPTI and program: `gpu.rs`.

mod common;

use common::cuda::*;
use common::{load, record, scratch_in, text};

#[test]
fn without_cupti_the_nvtx_recording_is_unchanged_and_one_line_says_why() {
    for (name, env, why) in [
        (
            "missing",
            vec![("NVTXR_CUPTI", "/nonexistent/libcupti.so")],
            "no usable libcupti",
        ),
        ("busy", vec![("FAKE_CUPTI_BUSY", "1")], "another profiler"),
        (
            "failing",
            vec![("FAKE_CUPTI_ENABLE_FAILS", "1")],
            "cuptiActivityEnable",
        ),
        // CUDA 11.5's CUPTI: its records' layouts are not the ones read.
        (
            "old",
            vec![("FAKE_CUPTI_VERSION", "16")],
            "is CUPTI API version 16, older than CUDA 11.6's (17)",
        ),
    ] {
        let (cupti, app) = built();
        let dir = scratch_in("gpu", name);
        let cupti = cupti.display().to_string();
        let mut all = vec![
            ("NVTXR_CUPTI", cupti.as_str()),
            ("FAKE_CUPTI", cupti.as_str()),
        ];
        all.extend(env.iter().copied());
        // A later NVTXR_CUPTI wins (the missing one).
        let out = record(&dir, &[], &[app.to_str().unwrap()], &all);
        let said = text(&out);
        assert!(out.status.success(), "{name}: {said}");
        let warnings: Vec<_> = said
            .lines()
            .filter(|l| l.contains("GPU activity not recorded"))
            .collect();
        assert_eq!(warnings.len(), 1, "{name}: {said}");
        assert!(warnings[0].contains(why), "{name}: {said}");
        let trace = load(&dir.join("trace.json"));
        assert!(kernels(&trace).is_empty(), "{name}");
        let ranges = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "nvtx")
            .count();
        // Five push/pop ranges, three start/end ranges (a begin and an end each).
        assert_eq!(ranges, 5 + 3 * 2, "{name}: every NVTX range");
    }
}

#[test]
fn gpu_off_records_none_and_gpu_on_refuses_a_missing_cupti_before_running() {
    let (dir, out) = run("off", &["--gpu", "off"], &[]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("GPU"), "{said}");
    assert!(kernels(&load(&dir.join("trace.json"))).is_empty());

    let dir = scratch_in("gpu", "on");
    let marker = dir.join("ran");
    let out = record(
        &dir,
        &["--gpu", "on"],
        &["touch", marker.to_str().unwrap()],
        &[("NVTXR_CUPTI", "/nonexistent/libcupti.so")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--gpu on: no libcupti loads"),
        "{}",
        text(&out)
    );
    assert!(!marker.exists(), "the program did not run");
}

#[test]
fn another_tools_cuda_injection_is_left_alone() {
    let dir = scratch_in("gpu", "other-injection");
    let show = ["sh", "-c", "echo injection=$CUDA_INJECTION64_PATH"];
    let other = [("CUDA_INJECTION64_PATH", "/opt/other/libinjection.so")];
    let out = record(&dir, &[], &show, &other);
    let said = text(&out);
    assert!(
        said.contains("injection=/opt/other/libinjection.so"),
        "{said}"
    );
    assert!(
        said.contains("nvtxr: GPU activity not recorded: CUDA_INJECTION64_PATH already names /opt/other/libinjection.so"),
        "{said}"
    );
    let out = record(&dir, &["--gpu", "on"], &show, &other);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        !text(&out).contains("injection="),
        "not run: {}",
        text(&out)
    );
}

#[test]
fn gpu_times_on_cuptis_own_clock_are_placed_by_a_measured_offset() {
    let (dir, out) = run("own-clock", &[], &[("FAKE_CUPTI_OWN_CLOCK", "1")]);
    assert!(out.status.success(), "{}", text(&out));
    let trace = load(&dir.join("trace.json"));
    // Each under its range: the launches' times are placed by the same offset.
    assert_eq!(kernels(&trace), scripted_kernels());
    // Each kernel starts after its launch and before the trace's last event + 1 ms.
    let events = trace["traceEvents"].as_array().unwrap();
    for end in events.iter().filter(|e| e["ph"] == "f") {
        let start = events
            .iter()
            .find(|s| s["ph"] == "s" && s["id"] == end["id"])
            .unwrap();
        let (s, e) = (start["ts"].as_f64().unwrap(), end["ts"].as_f64().unwrap());
        assert!(s <= e && e - s < 10_000.0, "launch {s} µs, activity {e} µs");
    }
}

#[test]
fn a_cupti_without_per_api_records_records_every_call_and_keeps_the_launches() {
    // Every API call is then recorded by CUPTI (cudaMalloc too); the tool
    // keeps the traced ones, and says what it costs.
    let (dir, out) = run("whole", &[], &[("FAKE_CUPTI_WHOLE_API", "1")]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert_eq!(
        said.matches("cannot record only the launch calls").count(),
        1,
        "{said}"
    );
    assert_eq!(kernels(&load(&dir.join("trace.json"))), scripted_kernels());
    let db = rusqlite::Connection::open(dir.join("trace.sqlite")).unwrap();
    let runtime: i64 = db
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(runtime, 10, "the traced calls, not cudaMalloc");
}

#[test]
fn apis_cupti_refuses_lose_their_launches_and_nothing_else() {
    // The driver's launch API refused: its kernel has no launch, the
    // runtime's launches keep theirs, and no API is recorded wholesale.
    let (dir, out) = run("no-driver-api", &[], &[("FAKE_CUPTI_NO_DRIVER_API", "1")]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        !said.contains("cannot record only the launch calls"),
        "{said}"
    );
    let mut expected = scripted_kernels();
    let driver = "gemm(float const*, float const*, float*, int)";
    let at = expected
        .iter()
        .position(|k| k.0 == driver && k.1 == "backward")
        .unwrap();
    expected[at].1 = String::new();
    expected.sort();
    assert_eq!(kernels(&load(&dir.join("trace.json"))), expected);
}

#[test]
fn a_program_without_cuda_is_said_under_gpu_on_and_not_under_auto() {
    let exe = nvtxr_harness::compile_c("example.c", nvtxr_harness::Producer::NvtxrShared, &[]);
    let (cupti, _) = built();
    let cupti = cupti.display().to_string();
    for (mode, said_once) in [("on", true), ("auto", false)] {
        let dir = scratch_in("gpu", &format!("no-cuda-{mode}"));
        let out = record(
            &dir,
            &["--gpu", mode],
            &[exe.to_str().unwrap()],
            &[("NVTXR_CUPTI", &cupti)],
        );
        let said = text(&out);
        assert!(out.status.success(), "{mode}: {said}");
        let lines: Vec<_> = (said.lines())
            .filter(|l| l.contains("GPU activity not recorded"))
            .collect();
        assert_eq!(lines.len(), usize::from(said_once), "{mode}: {said}");
        if said_once {
            assert!(lines[0].contains("initialized CUDA"), "{said}");
        }
        // The NVTX recording as it is.
        let trace = load(&dir.join("trace.json"));
        assert!(
            (trace["traceEvents"].as_array().unwrap().iter()).any(|e| e["cat"] == "nvtx"),
            "{mode}"
        );
    }
}

#[test]
fn cupti_failing_mid_run_is_one_line_and_the_rest_is_recorded() {
    let (normal, out) = run("mid-run-normal", &[], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let nvtx = |dir: &std::path::Path| -> usize {
        let trace = load(&dir.join("trace.json"));
        let events = trace["traceEvents"].as_array().unwrap();
        (events.iter()).filter(|e| e["cat"] == "nvtx").count()
    };
    // The script's ranges: 5 push/pop, 3 start/end (a begin and an end each).
    assert_eq!(nvtx(&normal), 11);
    // A record CUPTI cannot read: the rest of that buffer is lost, said
    // once; every other buffer, and every NVTX event, is recorded. The
    // buffer is the first handed over: the API records of every launch up
    // to the silent thread's, so their kernels are recorded without their
    // launches (and ranges); the last launch's, handed over at exit, keeps
    // its range.
    let (dir, out) = run("record-fails", &[], &[("FAKE_CUPTI_RECORD_FAILS", "1")]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert_eq!(
        said.matches("GPU activity records lost: cuptiActivityGetNextRecord: CUPTI_ERROR_INVALID_KIND (21); the rest of that buffer is left out").count(),
        1,
        "{said}"
    );
    let mut expected = scripted_kernels();
    for k in expected.iter_mut().filter(|k| k.1 != "last") {
        k.1 = String::new();
    }
    expected.sort();
    assert_eq!(kernels(&load(&dir.join("trace.json"))), expected);
    assert_eq!(nvtx(&dir), nvtx(&normal));
    // The flush at exit failing: the records CUPTI still held (the last
    // kernel's and the API records) are lost, said in one line.
    let (dir, out) = run("flush-fails", &[], &[("FAKE_CUPTI_FLUSH_FAILS", "1")]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert_eq!(
        said.matches("GPU activity records lost: cuptiActivityFlushAll: CUPTI_ERROR_UNKNOWN (999); the records CUPTI still held are left out").count(),
        1,
        "{said}"
    );
    assert_eq!(nvtx(&dir), nvtx(&normal));
    let trace = load(&dir.join("trace.json"));
    assert!(kernels(&trace).len() < scripted_kernels().len(), "{said}");
    // The flushing thread's flush failing: said once, the thread stops.
    let env = [
        ("FAKE_CUPTI_FLUSH_FAILS", "1"),
        ("LINGER_MS", "600"),
        ("KILL", "1"),
    ];
    let (_, out) = run(
        "periodic-flush-fails",
        &["--gpu-flush-interval", "100"],
        &env,
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(137), "{said}");
    assert_eq!(
        said.matches("GPU activity records handed over at exit only from here on: cuptiActivityFlushAll: CUPTI_ERROR_UNKNOWN (999)").count(),
        1,
        "{said}"
    );
    // A periodic flush that never returns: the exit waits for it a while,
    // then ends as it would, said in one line (CUPTI's records lost).
    let env = [("FAKE_CUPTI_FLUSH_HANGS", "1"), ("LINGER_MS", "600")];
    let (dir, out) = run(
        "periodic-flush-hangs",
        &["--gpu-flush-interval", "100"],
        &env,
    );
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert_eq!(
        said.matches("GPU activity records lost: the periodic cuptiActivityFlushAll has not returned in 2 s; the records CUPTI still held are left out").count(),
        1,
        "{said}"
    );
    assert!(
        !said.contains("ended without running its exit handlers"),
        "{said}"
    );
    assert_eq!(nvtx(&dir), nvtx(&normal));
}

#[test]
fn a_cupti_that_refuses_peer_copies_records_the_rest_and_says_so() {
    let env = [("PEER_COPY", "1"), ("FAKE_CUPTI_REFUSE_KIND", "22")];
    let (dir, out) = run("no-peer", &[], &env);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let lines: Vec<_> = said
        .lines()
        .filter(|l| l.contains("peer-to-peer"))
        .collect();
    assert_eq!(
        lines,
        ["nvtxr record: GPU peer-to-peer copies not recorded: cuptiActivityEnable(22): CUPTI_ERROR_NOT_COMPATIBLE (14)"],
        "{said}"
    );
    assert!(!said.contains("GPU activity not recorded"), "{said}");
    let trace = load(&dir.join("trace.json"));
    assert_eq!(kernels(&trace), scripted_kernels());
    let copies = trace["traceEvents"].as_array().unwrap().iter();
    let copies: Vec<_> = copies.filter(|e| e["cat"] == "memcpy").collect();
    assert_eq!(copies.len(), 2, "the two copies within one GPU");
}

/// A program that is itself a CUPTI client, as PyTorch's profiler is one
/// (`cuda_app.c`'s `ANOTHER_CLIENT`, after Kineto's source): what CUPTI
/// handed it of the tool's is said lost, in one line, and the tool's exit
/// calls none of its callbacks, gone by then (they abort).
#[test]
fn another_cupti_client_in_the_program_is_said_and_never_called_at_exit() {
    let (dir, out) = run("another-client", &[], &[("ANOTHER_CLIENT", "1")]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let lines: Vec<_> = (said.lines())
        .filter(|l| l.contains("another CUPTI client in the program"))
        .collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(
        lines[0].contains("CUPTI handed it 2 of the tool's buffers"),
        "{said}"
    );
    // `taken()` and `profiled()` went to the other client in the tool's
    // buffers; `after()` was launched with kernel records off.
    let trace = load(&dir.join("trace.json"));
    assert_eq!(kernels(&trace), [kernel("before()", "before", 0, 7)]);
    let ranges = (trace["traceEvents"].as_array().unwrap().iter())
        .filter(|e| e["cat"] == "nvtx")
        .count();
    assert_eq!(ranges, 3, "every NVTX range");
}
