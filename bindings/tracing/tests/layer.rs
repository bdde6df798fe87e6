//! The layer under nvtxr's event-log tool: a tokio multi-thread runtime with
//! instrumented futures that migrate between worker threads, nested
//! synchronous spans, events, and nothing with no tool. Each test re-runs
//! this binary as a child with the event-log tool attached.

use std::collections::HashMap;
use tracing::Instrument;
use tracing_subscriber::prelude::*;

/// The event-log tool's calls for `scenario` with the layer installed, run
/// in a child process under the tool (or none; see `nvtxr_harness::in_child`).
fn recorded(name: &str, tool: bool, scenario: fn()) -> Vec<String> {
    recorded_with(name, tool, nvtxr_tracing::NvtxLayer::new, scenario)
}

/// As [`recorded`], with the layer `layer` makes.
fn recorded_with(
    name: &str,
    tool: bool,
    layer: fn() -> nvtxr_tracing::NvtxLayer,
    scenario: fn(),
) -> Vec<String> {
    nvtxr_harness::in_child(name, tool, || {
        tracing_subscriber::registry().with(layer()).init();
        scenario();
    })
    .into_iter()
    .filter(|l| !l.starts_with("init "))
    .collect()
}

async fn job(n: u32) {
    for _ in 0..5 {
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    tracing::info!(n, "job done");
}

fn migrating_tasks() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("tokio-worker")
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|n| tokio::spawn(job(n).instrument(tracing::info_span!("job", n))))
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
}

#[test]
fn async_spans_are_one_range_each_and_polls_balance_per_thread() {
    let calls = recorded(
        "async_spans_are_one_range_each_and_polls_balance_per_thread",
        true,
        migrating_tasks,
    );
    // Every span: one start/end range, its id started and ended exactly once.
    let mut ids: HashMap<String, (usize, usize)> = HashMap::new();
    for c in &calls {
        // The span's life shows its field: "job n=3", payload 3.
        if c.contains("RangeStartEx") && c.contains("{msg=\"job n=") {
            let n = c.split("job n=").nth(1).unwrap().split('"').next().unwrap();
            assert!(c.contains(&format!("payload=u64:{n}}}")), "{c}");
            let id = c.rsplit(" -> ").next().unwrap();
            ids.entry(id.to_string()).or_default().0 += 1;
        } else if let Some(id) = c.strip_prefix("RangeEnd ") {
            ids.entry(id.to_string()).or_default().1 += 1;
        }
    }
    assert_eq!(ids.len(), 8, "{calls:#?}");
    assert!(ids.values().all(|&n| n == (1, 1)), "{ids:?}");
    // Every poll: a push and a pop on the thread that ran it (the event-log tool
    // returns -1 for a pop with nothing pushed on that thread).
    let pushes = calls
        .iter()
        .filter(|c| c.starts_with("DomainRangePushEx default {msg=reg:\"job\"}"))
        .count();
    let pops = calls.iter().filter(|c| c.starts_with("RangePop")).count();
    assert!(
        pushes >= 8 * 6,
        "at least a poll per await and one more: {pushes}"
    );
    assert_eq!(pushes, pops);
    assert!(
        !calls.iter().any(|c| c.ends_with("-> -1")),
        "a pop on the wrong thread: {calls:#?}"
    );
    // Events are marks; worker threads are named.
    let marks = calls
        .iter()
        .filter(|c| c.contains("Mark") && c.contains("\"job done n="))
        .count();
    assert_eq!(marks, 8, "{calls:#?}");
    assert!(calls
        .iter()
        .any(|c| c.starts_with("NameOsThreadA") && c.ends_with("\"tokio-worker\"")));
}

#[test]
fn every_span_life_ends_once_when_more_live_than_the_span_table_holds() {
    // 5,000 spans alive at once: more than the layer's table of live spans
    // (4,096 entries, some lost to collisions sooner), so some lives are
    // kept in the registry instead. Each is entered once, then all close.
    let calls = recorded(
        "every_span_life_ends_once_when_more_live_than_the_span_table_holds",
        true,
        || {
            let spans: Vec<_> = (0..5000).map(|_| tracing::info_span!("many")).collect();
            for span in &spans {
                drop(span.enter());
            }
        },
    );
    let mut ids: HashMap<&str, (usize, usize)> = HashMap::new();
    for c in &calls {
        if c.starts_with("DomainRangeStartEx default {msg=reg:\"many\"}") {
            ids.entry(c.rsplit(" -> ").next().unwrap()).or_default().0 += 1;
        } else if let Some(id) = c.strip_prefix("RangeEnd ") {
            ids.entry(id).or_default().1 += 1;
        }
    }
    assert_eq!(ids.len(), 5000, "{:?}", &calls[..20]);
    assert!(ids.values().all(|&n| n == (1, 1)));
    let pushes = calls
        .iter()
        .filter(|c| c.starts_with("DomainRangePushEx default {msg=reg:\"many\"}"))
        .count();
    let pops = calls.iter().filter(|c| c.starts_with("RangePop")).count();
    assert_eq!((pushes, pops), (5000, 5000));
}

#[test]
fn synchronous_spans_nest() {
    let calls = recorded("synchronous_spans_nest", true, || {
        let outer = tracing::info_span!("outer");
        let _o = outer.enter();
        {
            let inner = tracing::info_span!("inner");
            let _i = inner.enter();
            tracing::warn!("inside");
        }
    });
    let shape: Vec<String> = calls
        .iter()
        .filter(|c| c.contains("Push") || c.contains("Pop") || c.contains("Mark"))
        .map(|c| {
            // The call and its message, the event's line number dropped.
            let message = c
                .split("msg=reg:")
                .nth(1)
                .map_or("", |m| m.split([':', '}']).next().unwrap());
            c.split(" {").next().unwrap().to_string() + message
        })
        .collect();
    assert_eq!(
        shape,
        [
            "DomainRangePushEx default\"outer\"",
            "DomainRangePushEx default\"inner\"",
            "DomainMarkEx default\"inside\"",
            "RangePop -> 1",
            "RangePop -> 0",
        ],
        "{calls:#?}"
    );
}

#[test]
fn events_show_their_message_and_fields() {
    let calls = recorded("events_show_their_message_and_fields", true, || {
        for n in [5u64, 5, 6] {
            tracing::info!(n, "fetched");
        }
        tracing::warn!(ratio = 0.5, who = "me", "odd {}", 7);
    });
    let marks: Vec<&str> = calls
        .iter()
        .map(String::as_str)
        .filter(|c| c.contains("Mark") || c.contains("RegisterString"))
        .collect();
    assert_eq!(
        marks,
        [
            // Registered at the callsite's first event, reused while its text is the same.
            "DomainRegisterStringA default \"fetched n=5\"",
            "DomainMarkEx default {msg=reg:\"fetched n=5\" payload=u64:5}",
            "DomainMarkEx default {msg=reg:\"fetched n=5\" payload=u64:5}",
            // Another text: not registered (the default domain's nvtxMarkEx).
            "MarkEx {msg=\"fetched n=6\" payload=u64:6}",
            "DomainRegisterStringA default \"odd 7 ratio=0.5 who=me\"",
            "DomainMarkEx default {msg=reg:\"odd 7 ratio=0.5 who=me\" payload=f64:0.5}",
        ],
        "{calls:#?}"
    );
}

#[test]
fn nothing_is_emitted_with_no_tool() {
    let calls = recorded("nothing_is_emitted_with_no_tool", false, migrating_tasks);
    assert!(calls.is_empty(), "{calls:?}");
}

#[test]
fn without_fields_events_are_named_by_their_callsite() {
    let calls = recorded_with(
        "without_fields_events_are_named_by_their_callsite",
        true,
        || nvtxr_tracing::NvtxLayer::new().without_fields(),
        || {
            for n in 0..3u64 {
                tracing::info!(n, "fetched");
            }
        },
    );
    let marks: Vec<&String> = calls.iter().filter(|c| c.contains("Mark")).collect();
    assert_eq!(marks.len(), 3, "{calls:#?}");
    for m in marks {
        assert!(
            m.starts_with("DomainMarkEx default {msg=reg:\"event bindings/tracing/tests/layer.rs:")
                && !m.contains("payload"),
            "{m}"
        );
    }
}

#[test]
fn a_configured_layer_formats_fields_names_ranges_and_reports_errors() {
    let calls = recorded_with(
        "a_configured_layer_formats_fields_names_ranges_and_reports_errors",
        true,
        || {
            nvtxr_tracing::NvtxLayer::new()
                .with_range_name(nvtxr_tracing::RangeName::TargetAndName)
                .with_field_formatter(|text, name, value| {
                    use std::fmt::Write;
                    let _ = write!(text, " [{name}: {value}]");
                })
                .on_error(|why| nvtxr::mark(&format!("error: {why}")))
        },
        || {
            tracing::info!(rows = 3, who = "me", "loaded");
            let outer = tracing::info_span!("outer", n = 1);
            let inner = tracing::info_span!("inner");
            let a = outer.enter();
            let b = inner.enter();
            // Out of order: `outer` exits while `inner` is still entered.
            drop(a);
            drop(b);
        },
    );
    let shown: Vec<&str> = calls
        .iter()
        .map(String::as_str)
        .filter(|c| !c.contains("NameOsThread"))
        .collect();
    assert_eq!(
        shown,
        [
            // The event: the formatter's text after the message.
            "DomainRegisterStringA default \"loaded [rows: 3] [who: me]\"",
            "DomainMarkEx default {msg=reg:\"loaded [rows: 3] [who: me]\" payload=i64:3}",
            // Spans named by target and name; the life's range with its fields.
            "DomainRegisterStringA default \"layer::outer\"",
            "RangeStartEx {msg=\"layer::outer [n: 1]\" payload=i64:1} -> 1",
            "DomainRegisterStringA default \"layer::inner\"",
            "DomainRangeStartEx default {msg=reg:\"layer::inner\"} -> 2",
            "DomainRangePushEx default {msg=reg:\"layer::outer\"} -> 0",
            "DomainRangePushEx default {msg=reg:\"layer::inner\"} -> 1",
            // `outer` exits first: both entries end, and the hook is told.
            "RangePop -> 1",
            "RangePop -> 0",
            "MarkA \"error: a span exited before the spans entered after it on its thread\"",
            "RangeEnd 2",
            "RangeEnd 1",
        ],
        "{calls:#?}"
    );
}
