//! The C example (the demo's workload) and the benchmark program still work.

use nvtxr_harness::{compile_c, run, Producer, Tool, INIT_OK};

#[test]
fn example_training_loop_events() {
    let exe = compile_c("example.c", Producer::NvtxrShared, &[]);
    let r = run(&exe, &[], Tool::EventLog("record"), &[]);
    assert!(r.success, "{r:?}");
    assert_eq!(r.stdout, "example: trained 2 epochs (tool attached: yes)\n");
    let d = "domain=\"training\"";
    let mut expected = vec![
        INIT_OK.to_string(),
        "NameOsThreadA tid=self \"trainer\"".into(),
        "DomainCreateA \"training\"".into(),
        format!("DomainNameCategoryA {d} 1 \"compute\""),
        format!("DomainNameCategoryA {d} 2 \"io\""),
        format!("DomainRegisterStringA {d} \"epoch\""),
        format!("DomainRegisterStringA {d} \"forward\""),
        format!("DomainRegisterStringA {d} \"backward\""),
        "RangeStartA \"load data\" -> 1".into(),
        "NameOsThreadA tid=self \"prefetcher\"".into(),
        "MarkA \"prefetch done\"".into(),
        "RangeEnd 1".into(),
    ];
    for (epoch, loss) in [(0, "1"), (1, "0.5")] {
        expected.push(format!(
            "DomainRangePushEx {d} {{msg=reg:\"epoch\" color=0xff4c9aff payload=i32:{epoch}}} -> 0"
        ));
        for _ in 0..2 {
            expected.push(format!(
                "DomainRangePushEx {d} {{msg=reg:\"forward\" color=0xff76b900 category=1}} -> 1"
            ));
            expected.push(format!("DomainRangePop {d} -> 1"));
            expected.push(format!(
                "DomainRangePushEx {d} {{msg=reg:\"backward\" color=0xffe6522c category=1}} -> 1"
            ));
            expected.push(format!("DomainRangePop {d} -> 1"));
        }
        expected.push(format!(
            "DomainMarkEx {d} {{msg=\"loss\" payload=f64:{loss}}}"
        ));
        expected.push(format!("DomainRangePop {d} -> 0"));
    }
    expected.push(format!("DomainDestroy {d}"));
    assert_eq!(r.events, expected);
}

#[test]
fn benchmark_program_runs_through_every_producer() {
    for producer in [
        Producer::NvtxrShared,
        Producer::NvtxrStatic,
        Producer::NvidiaHeader,
        Producer::NvidiaInterop,
    ] {
        let exe = compile_c("bench.c", producer, &[]);
        for tool in [Tool::None, Tool::EventLog("null")] {
            let r = run(&exe, &["1000"], tool, &[]);
            assert!(r.success, "{producer:?} {tool:?}: {r:?}");
            let ops: Vec<&str> = r
                .lines()
                .iter()
                .map(|l| l.split('\t').next().unwrap())
                .collect();
            assert_eq!(
                ops,
                [
                    "mark",
                    "push+pop",
                    "start+end",
                    "domain push+pop, registered string",
                    "domain push+pop, full attributes"
                ]
            );
            assert!(
                r.events.iter().all(|l| l.starts_with("init")),
                "the null tool records nothing"
            );
        }
    }
}

#[test]
fn c_scoped_range_macros_pop_on_every_exit_path() {
    for producer in [Producer::NvtxrShared, Producer::NvtxrStatic] {
        let exe = compile_c("scoped.c", producer, &[]);
        let r = run(&exe, &[], Tool::EventLog("record"), &[]);
        assert!(r.success, "{r:?}");
        let d = "domain=\"scoped\"";
        assert_eq!(
            r.calls(),
            [
                "DomainCreateA \"scoped\"".to_string(),
                format!("DomainRangePushEx {d} {{msg=\"colored\" color=0xff0000ff}} -> 0"),
                format!("DomainRangePushEx {d} {{msg=\"inner\"}} -> 1"),
                format!("DomainRangePop {d} -> 1"),
                format!("DomainRangePop {d} -> 0"),
                // early_return(1): registered once, popped on return
                "DomainRegisterStringA default \"early_return\"".into(),
                "DomainRangePushEx default {msg=reg:\"early_return\"} -> 0".into(),
                "RangePushA \"positive\" -> 1".into(),
                "RangePop -> 1".into(),
                "RangePop -> 0".into(),
                // early_return(0): the cached string, no second registration
                "DomainRangePushEx default {msg=reg:\"early_return\"} -> 0".into(),
                "RangePop -> 0".into(),
                "DomainRegisterStringA default \"loop_with_break\"".into(),
                "DomainRangePushEx default {msg=reg:\"loop_with_break\"} -> 0".into(),
                "RangePushA \"iteration\" -> 1".into(),
                "RangePop -> 1".into(),
                "RangePushA \"iteration\" -> 1".into(),
                "RangePop -> 1".into(),
                "RangePop -> 0".into(),
                // NVTXR_SCOPED_RANGE(NULL, NULL) was refused: nothing pushed, nothing popped
                format!("DomainDestroy {d}"),
            ]
        );
    }
}

#[test]
fn cpp_header_in_cpp17_and_cpp20() {
    for std in ["-std=c++17", "-std=c++20"] {
        let exe = compile_c("example.cpp", Producer::NvtxrShared, &[std]);
        let r = run(&exe, &[], Tool::EventLog("record"), &[]);
        assert!(r.success, "{std}: {r:?}");
        assert_eq!(r.stdout, "cpp example: done\n");
        let d = "domain=\"trainer\"";
        let mut expected: Vec<String> = vec![
            "NameOsThreadA tid=self \"cpp main\"".into(),
            "DomainCreateA \"trainer\"".into(),
            format!("DomainNameCategoryA {d} 1 \"compute\""),
            format!("DomainRegisterStringA {d} \"step\""),
            "RangePushA \"epoch\" -> 0".into(),
        ];
        for i in 0..2 {
            expected.push(format!("DomainRangePushEx {d} {{msg=reg:\"step\"}} -> 0"));
            if i == 0 {
                expected.push("DomainRegisterStringA default \"forward\"".into());
            }
            expected.push("DomainRangePushEx default {msg=reg:\"forward\"} -> 1".into());
            expected.push("RangePop -> 1".into());
            if i == 0 {
                expected.push(format!("DomainRegisterStringA {d} \"backward\""));
            }
            expected.push(format!(
                "DomainRangePushEx {d} {{msg=reg:\"backward\"}} -> 1"
            ));
            expected.push(format!("DomainRangePop {d} -> 1"));
            expected.push(format!("DomainRangePop {d} -> 0"));
        }
        expected.extend([
            "MarkEx {msg=\"loss\" color=0xff00ff00 category=1 payload=f64:0.5}".into(),
            "RangePop -> 0".into(),
            format!("DomainRangeStartEx {d} {{msg=\"load\" payload=u64:7}} -> 1"),
            format!("DomainRangeEnd {d} 1"),
            "RangeStartA \"moved\" -> 2".into(),
            "RangeEnd 2".into(),
            format!("DomainMarkEx {d} {{msg=reg:\"step\"}}"),
            format!("DomainDestroy {d}"),
        ]);
        assert_eq!(r.calls(), expected, "{std}");
    }
}
