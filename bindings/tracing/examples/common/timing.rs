//! The timing both layer benchmarks use (`examples/bench.rs`, and
//! `compare/`, NVIDIA's layer): best of 5 runs of 2,000,000 calls, printed
//! as a `name ns` line. `BENCH_CALLS=N` runs N calls instead, once: for
//! counting instructions under callgrind, which dumps its counts after each
//! call of `time` (`--dump-after='*timing::time*'`).

use std::time::Instant;

/// Prints `name` and the best ns per call of `f`. Never inlined, so that
/// callgrind sees each call.
#[inline(never)]
pub fn time(name: &str, f: impl Fn()) {
    let (calls, runs) = match std::env::var("BENCH_CALLS") {
        Ok(n) => (n.parse().expect("BENCH_CALLS: a number"), 1),
        Err(_) => (2_000_000u32, 5),
    };
    f();
    let best = (0..runs)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                f();
            }
            t.elapsed().as_nanos() as f64 / f64::from(calls)
        })
        .fold(f64::INFINITY, f64::min);
    println!("{name} {best:.1}");
}
