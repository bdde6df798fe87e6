//! The C example (the demo's workload) and the benchmark program still work.

use nvtxr_harness::{compile_c, run, Producer, Tool, INIT_OK};

#[test]
fn example_training_loop_events() {
    let exe = compile_c("example.c", Producer::NvtxrShared, &[]);
    let r = run(&exe, &[], Tool::Recorder("record"), &[]);
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
        for tool in [Tool::None, Tool::Recorder("null")] {
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
