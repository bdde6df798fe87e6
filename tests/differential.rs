//! The same C program through NVIDIA's `libnvtx3interop.so.1` and through
//! nvtxr (shared and static), under the same event-log tool: identical events and
//! identical return values, with and without a tool.

use nvtxr_harness::{compile_c, run, Producer, Tool, INIT_OK};

#[test]
fn nvtxr_matches_nvidia_interop() {
    let reference = compile_c("differential.c", Producer::NvidiaInterop, &[]);
    let expected = run(&reference, &[], Tool::EventLog("record"), &[]);
    assert!(expected.success, "{expected:?}");
    assert_eq!(expected.events[0], INIT_OK);
    assert!(
        expected.events.len() > 25,
        "the reference recorded too little: {expected:?}"
    );
    let expected_plain = run(&reference, &[], Tool::None, &[]);

    for producer in [Producer::NvtxrShared, Producer::NvtxrStatic] {
        let exe = compile_c("differential.c", producer, &[]);
        let got = run(&exe, &[], Tool::EventLog("record"), &[]);
        assert!(got.success, "{got:?}");
        assert_eq!(
            got.events, expected.events,
            "{producer:?}: events differ from NVIDIA's"
        );
        assert_eq!(
            got.stdout, expected.stdout,
            "{producer:?}: return values differ from NVIDIA's"
        );

        let plain = run(&exe, &[], Tool::None, &[]);
        assert!(plain.events.is_empty());
        assert_eq!(
            plain.stdout, expected_plain.stdout,
            "{producer:?}: no-tool results differ"
        );
    }
}

#[test]
fn reference_events_are_the_expected_ones() {
    // Pins the reference itself, so a change in NVIDIA's library or in the
    // event-log tool shows up here and not as a puzzling diff above.
    let reference = compile_c("differential.c", Producer::NvidiaInterop, &[]);
    let r = run(&reference, &[], Tool::EventLog("record"), &[]);
    assert_eq!(
        r.calls(),
        [
            "Initialize",
            "NameOsThreadA tid=self \"main\"",
            "NameCategoryA 1 \"compute\"",
            "MarkA \"start\"",
            "MarkEx {msg=\"checkpoint\" color=0xff00ff00 category=1 payload=f64:0.75}",
            "RangePushA \"epoch 1\" -> 0",
            "RangePushEx {msg=\"forward\" color=0xffff0000 category=1 payload=f64:3} -> 1",
            "RangePop -> 1",
            "RangePop -> 0",
            "RangeStartA \"async\" -> 1",
            "RangeStartEx {msg=\"async full\" color=0xff0000ff category=2 payload=f64:-1.5} -> 2",
            "RangeEnd 2",
            "RangeEnd 1",
            "DomainCreateA \"trainer\"",
            "DomainRegisterStringA domain=\"trainer\" \"step\"",
            "DomainNameCategoryA domain=\"trainer\" 4 \"io\"",
            "DomainMarkEx domain=\"trainer\" {msg=\"domain mark\"}",
            "DomainMarkEx domain=\"trainer\" {msg=reg:\"step\"}",
            "DomainRangePushEx domain=\"trainer\" {msg=reg:\"step\"} -> 0",
            "DomainRangePushEx domain=\"trainer\" {msg=\"load\" color=0x80808080 category=4 payload=f64:42} -> 1",
            "DomainRangePop domain=\"trainer\" -> 1",
            "DomainRangePop domain=\"trainer\" -> 0",
            "DomainRangeStartEx domain=\"trainer\" {msg=reg:\"step\"} -> 3",
            "DomainRangeEnd domain=\"trainer\" 3",
            "NameCuDeviceA 0 \"gpu 0\"",
            "NameCuStreamA 0x10 \"stream\"",
            "NameCudaDeviceA 1 \"gpu 1\"",
            "NameCudaEventA 0x20 \"event\"",
            "DomainDestroy domain=\"trainer\"",
            "RangePop -> -1",
        ]
    );
}
