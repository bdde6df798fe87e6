//! The Rust API under the event-log tool. Each test re-runs this test binary as a
//! child process (one process per tool attachment), with the event-log tool attached.

use nvtxr::{Color, Domain, EventAttributes, Payload};
use nvtxr_harness::INIT_OK;

/// The event-log tool's lines for `scenario`, run in a child process (see
/// `nvtxr_harness::in_child`), after its `init` line.
fn recorded(name: &str, scenario: fn()) -> Vec<String> {
    let events = nvtxr_harness::in_child(name, true, scenario);
    assert_eq!(events.first().map(String::as_str), Some(INIT_OK));
    events[1..].to_vec()
}

#[test]
fn guards_attributes_and_domains() {
    let events = recorded("guards_attributes_and_domains", || {
        nvtxr::name_current_thread("rust main");
        {
            let _outer = nvtxr::push("outer");
            nvtxr::mark(
                EventAttributes::new("attrs")
                    .color(Color::rgb(1, 2, 3))
                    .category(5)
                    .payload(Payload::I64(-9)),
            );
        }
        let domain = Domain::new("rust domain");
        domain.name_category(5, "five");
        let step = domain.register("step");
        let again = domain.register("step");
        assert_eq!(step.text(), again.text());
        {
            let _r = domain.push(&step);
            domain.mark(EventAttributes::new(&step).payload(Payload::F32(0.5)));
        }
        let cross = domain.start("cross thread");
        std::thread::scope(|s| {
            s.spawn(move || cross.end());
        });
        nvtxr::mark("nul\0inside"); // interior NUL becomes U+FFFD
        let long = "x".repeat(300); // longer than the stack buffer
        nvtxr::mark(long.as_str());
    });
    let long = format!("MarkA \"{}\"", "x".repeat(300));
    assert_eq!(
        events,
        [
            "NameOsThreadA tid=self \"rust main\"",
            "RangePushA \"outer\" -> 0",
            "MarkEx {msg=\"attrs\" color=0xff010203 category=5 payload=i64:-9}",
            "RangePop -> 0",
            "DomainCreateA \"rust domain\"",
            "DomainNameCategoryA domain=\"rust domain\" 5 \"five\"",
            "DomainRegisterStringA domain=\"rust domain\" \"step\"",
            "DomainRangePushEx domain=\"rust domain\" {msg=reg:\"step\"} -> 0",
            "DomainMarkEx domain=\"rust domain\" {msg=reg:\"step\" payload=f32:0.5}",
            "DomainRangePop domain=\"rust domain\" -> 0",
            "DomainRangeStartEx domain=\"rust domain\" {msg=\"cross thread\"} -> 1",
            "DomainRangeEnd domain=\"rust domain\" 1",
            "MarkA \"nul\u{fffd}inside\"",
            long.as_str(),
            // Dropping the last Domain value destroys the domain.
            "DomainDestroy domain=\"rust domain\"",
        ]
    );
}

fn annotated_function() {
    let _r = nvtxr::function_range!();
    let _inner = nvtxr::range!("per call site");
}

#[test]
fn call_site_macros_register_once() {
    let events = recorded("call_site_macros_register_once", || {
        annotated_function();
        annotated_function();
    });
    assert_eq!(
        events,
        [
            "DomainRegisterStringA default \"rust_api::annotated_function\"",
            "DomainRangePushEx default {msg=reg:\"rust_api::annotated_function\"} -> 0",
            "DomainRegisterStringA default \"per call site\"",
            "DomainRangePushEx default {msg=reg:\"per call site\"} -> 1",
            "RangePop -> 1",
            "RangePop -> 0",
            // The second call: no registration, the handles are reused.
            "DomainRangePushEx default {msg=reg:\"rust_api::annotated_function\"} -> 0",
            "DomainRangePushEx default {msg=reg:\"per call site\"} -> 1",
            "RangePop -> 1",
            "RangePop -> 0",
        ]
    );
}

#[test]
fn range_guard_is_send_and_local_range_is_not() {
    fn assert_send<T: Send>() {}
    assert_send::<nvtxr::Range<'static>>();
    // LocalRange: see the compile_fail doctest on nvtxr::LocalRange.
}

#[test]
fn no_tool_means_no_effects() {
    // This process has no tool configured (the parent never sets one).
    if std::env::var_os("NVTXR_RUST_API_CHILD").is_some() {
        return;
    }
    std::env::remove_var(nvtxr_harness::INJECTION_PATH_VAR);
    assert!(!nvtxr::is_tool_attached());
    assert_eq!(nvtxr::load_error(), None);
    let r = nvtxr::start("x");
    assert_eq!(r.id(), 0);
}

#[test]
fn a_refused_push_is_not_popped() {
    let events = recorded("a_refused_push_is_not_popped", || {
        let a = Domain::new("a");
        let b = Domain::new("b");
        let in_a = a.register("belongs to a");
        let _outer = b.push("outer");
        {
            // A registered string of another domain: refused, so not popped.
            let _refused = b.push(&in_a);
        }
        b.mark("still inside outer");
    });
    let calls: Vec<&str> = events
        .iter()
        .map(String::as_str)
        .filter(|e| e.contains("Range") || e.contains("Mark"))
        .collect();
    assert_eq!(
        calls,
        [
            "DomainRangePushEx domain=\"b\" {msg=\"outer\"} -> 0",
            "DomainMarkEx domain=\"b\" {msg=\"still inside outer\"}",
            "DomainRangePop domain=\"b\" -> 0",
        ]
    );
}

#[test]
fn scope_lasts_until_the_end_of_its_block() {
    let events = recorded("scope_lasts_until_the_end_of_its_block", || {
        {
            nvtxr::scope!("block");
            nvtxr::mark("inside");
        }
        nvtxr::mark("after");
    });
    let calls: Vec<&str> = events
        .iter()
        .map(String::as_str)
        .filter(|e| !e.starts_with("DomainRegisterString"))
        .collect();
    assert_eq!(
        calls,
        [
            "DomainRangePushEx default {msg=reg:\"block\"} -> 0",
            "MarkA \"inside\"",
            "RangePop -> 0",
            "MarkA \"after\"",
        ]
    );
}

#[test]
fn sync_objects_and_opencl_names() {
    let events = recorded("sync_objects_and_opencl_names", || {
        let domain = Domain::new("rust locks");
        {
            let lock = nvtxr::SyncUser::new(&domain, "mutex");
            std::thread::scope(|s| {
                s.spawn(|| {
                    lock.acquire_start();
                    lock.acquire_success();
                });
            });
            lock.releasing();
        }
        nvtxr::name_opencl(nvtxr::OpenClObject::CommandQueue, 0x2000, "queue");
    });
    let sync = "{msg=\"mutex\" version=3 size=16}";
    let expected = [
        "DomainCreateA \"rust locks\"".to_string(),
        format!("DomainSyncUserCreate domain=\"rust locks\" {sync}"),
        format!("DomainSyncUserAcquireStart {sync}"),
        format!("DomainSyncUserAcquireSuccess {sync}"),
        format!("DomainSyncUserReleasing {sync}"),
        format!("DomainSyncUserDestroy {sync}"),
        "NameClCommandQueueA 0x2000 \"queue\"".into(),
    ];
    assert_eq!(events[..expected.len()], expected);
}

#[test]
fn counters_reach_the_tool() {
    let events = recorded("counters_reach_the_tool", || {
        let domain = Domain::new("train");
        let loss = domain.counter::<f64>("loss");
        let batches = domain.counter::<i64>("batches");
        loss.sample(0.25);
        batches.sample(-3);
        assert!(batches.batch(&[1, 2], &[10]).is_err(), "lengths differ");
        batches.batch(&[1, 2], &[10, 20]).unwrap();
    });
    assert_eq!(
        events,
        [
            "DomainCreateA \"train\"",
            // As NVIDIA's producers: the core initialized before a module.
            "Initialize",
            "ExtInit module=4 compat=0x0102 version=3 size=40 segments=1 segment=0 slots=63 types=none",
            "CounterRegister domain=\"train\" name=\"loss\" schema=44 description=NULL scope=0 semantics=[]",
            "CounterRegister domain=\"train\" name=\"batches\" schema=17 description=NULL scope=0 semantics=[]",
            "CounterSampleFloat64 domain=\"train\" counter=4294967303 value=0.25",
            "CounterSampleInt64 domain=\"train\" counter=4294967303 value=-3",
            // The batch of two (the one of mismatched lengths never reaches the tool).
            "CounterBatchSubmit domain=\"train\" batch=ptr",
            "DomainDestroy domain=\"train\"",
        ]
    );
}

/// The Chrome JSON trace `nvtxr report` makes of recording `dir`.
fn reported(dir: &std::path::Path) -> String {
    let trace = dir.join("t.json");
    let out = std::process::Command::new(&nvtxr_harness::artifacts().nvtxr)
        .args(["report", "-q", "-o"])
        .arg(&trace)
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::read_to_string(&trace).unwrap()
}

#[test]
fn a_counter_batch_is_recorded_at_its_timestamps() {
    let dir =
        nvtxr_harness::recorded_in_child("a_counter_batch_is_recorded_at_its_timestamps", || {
            let domain = Domain::new("train");
            let loss = domain.counter::<f64>("loss");
            let (mut values, mut times) = (Vec::new(), Vec::new());
            for step in 0..3 {
                domain.mark("taken");
                times.push(nvtxr::timestamp());
                values.push(1.0 / f64::from(step + 1));
            }
            loss.batch(&values, &times).unwrap();
            domain.mark("submitted");
        });
    let json: serde_json::Value = serde_json::from_str(&reported(&dir)).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let at = |name: &str| -> Vec<f64> {
        events
            .iter()
            .filter(|e| e["name"] == name && e["ph"] != "M")
            .map(|e| e["ts"].as_f64().unwrap())
            .collect()
    };
    let values: Vec<f64> = events
        .iter()
        .filter(|e| e["name"] == "loss" && e["ph"] == "C")
        .map(|e| e["args"]["value"].as_f64().unwrap())
        .collect();
    assert_eq!(values, [1.0, 0.5, 1.0 / 3.0]);
    // Each sample after its "taken" mark, before the next one (or the submission).
    let (taken, loss) = (at("taken"), at("loss"));
    let mut next = taken[1..].to_vec();
    next.extend(at("submitted"));
    for ((t, l), n) in taken.iter().zip(&loss).zip(&next) {
        assert!(t <= l && l <= n, "{taken:?} {loss:?} {next:?}");
    }
}

nvtxr::payload_struct! {
    /// A collective call, as NCCL describes one.
    struct AllReduce {
        bytes: u64,
        ranks: u32,
        ratio: f32,
        dims: [i16; 3],
        root: bool,
    }
}

#[test]
fn struct_payloads_are_recorded_field_by_field() {
    let dir =
        nvtxr_harness::recorded_in_child("struct_payloads_are_recorded_field_by_field", || {
            let domain = Domain::new("comm");
            let schema = domain.payload_schema::<AllReduce>();
            assert_ne!(schema.id(), 0, "the recording tool registers schemas");
            let call = AllReduce {
                bytes: 1 << 20,
                ranks: 8,
                ratio: 0.5,
                dims: [1, -2, 3],
                root: true,
            };
            domain.mark(EventAttributes::new("allreduce").payload_struct(&schema, &call));
            let _range = domain.push(EventAttributes::empty().payload_struct(&schema, &call));
        });
    let json = reported(&dir);
    let fields = r#""fields":{"bytes":1048576,"ranks":8,"ratio":0.5,"dims":[1,-2,3],"root":1}"#;
    // The mark under its message, the range under the schema's name.
    for name in [r#""name":"allreduce""#, r#""name":"AllReduce""#] {
        let event = json
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} in {json}"));
        assert!(event.contains(fields), "{event}");
    }
}
