//! NVIDIA's `nvtx` crate's `tracing` layer, per span entry (enter + exit),
//! per span (new + close) and per event: the same measurements as
//! `nvtxr-tracing`'s `examples/bench.rs`. Prints `name ns` lines.

use std::time::Instant;
use tracing_subscriber::prelude::*;

const N: u32 = 2_000_000;

fn time(name: &str, f: impl Fn()) {
    f();
    let best = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..N {
                f();
            }
            t.elapsed().as_nanos() as f64 / f64::from(N)
        })
        .fold(f64::INFINITY, f64::min);
    println!("{name} {best:.1}");
}

fn main() {
    tracing_subscriber::registry()
        .with(nvtx::tracing::NvtxLayer::default())
        .init();
    let span = tracing::info_span!("step");
    time("span enter+exit", || drop(span.enter()));
    time("span new+close", || drop(tracing::info_span!("short")));
    time("event", || tracing::info!("tick"));
}
