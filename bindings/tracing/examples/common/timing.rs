//! The timing both layer benchmarks use (`examples/bench.rs`, and
//! `compare/`, NVIDIA's layer): best of 5 runs of 2,000,000 calls, printed
//! as a `name ns` line.

use std::time::Instant;

const N: u32 = 2_000_000;

/// Prints `name` and the best ns per call of `f`.
pub fn time(name: &str, f: impl Fn()) {
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
