//! The layer's cost per span entry (enter + exit), per span (new + close)
//! and per event, beside a direct nvtxr push/pop in the same process:
//! `cargo xtask bench-tracing` runs it with
//! no tool and with a do-nothing tool. Prints `name ns` lines.

use tracing_subscriber::prelude::*;

#[path = "common/timing.rs"]
mod timing;
use timing::time;

fn main() {
    tracing_subscriber::registry()
        .with(nvtxr_tracing::NvtxLayer::new())
        .init();
    let span = tracing::info_span!("step");
    time("span enter+exit", || drop(span.enter()));
    time("span new+close", || drop(tracing::info_span!("short")));
    time("event", || tracing::info!("tick"));
    time("event with a field", || tracing::info!(n = 7, "tick"));
    let n = std::cell::Cell::new(0u64);
    time("event with a changing field", || {
        n.set(n.get() + 1);
        tracing::info!(n = n.get(), "tick")
    });
    time("nvtxr push+pop (reference)", || drop(nvtxr::range!("raw")));
}
