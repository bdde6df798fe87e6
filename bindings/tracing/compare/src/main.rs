//! NVIDIA's `nvtx` crate's `tracing` layer, per span entry (enter + exit),
//! per span (new + close) and per event: the same measurements as
//! `nvtxr-tracing`'s `examples/bench.rs`. Prints `name ns` lines.

use tracing_subscriber::prelude::*;

#[path = "../../examples/common/timing.rs"]
mod timing;
use timing::time;

fn main() {
    tracing_subscriber::registry()
        .with(nvtx::tracing::NvtxLayer::default())
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
}
