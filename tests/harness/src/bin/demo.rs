//! The demo: builds nvtxr and the recording tool, compiles the C example
//! (`bindings/c/example.c`) against nvtxr, runs it with the tool attached and
//! prints every call the tool received.

use nvtxr_harness::{artifacts, compile_c, run, Producer, Tool};

fn main() {
    let exe = compile_c("example.c", Producer::NvtxrShared, &[]);
    println!(
        "\n$ NVTX_INJECTION64_PATH={} {}",
        artifacts().recorder.display(),
        exe.display()
    );
    let r = run(&exe, &[], Tool::Recorder("record"), &[]);
    print!("{}{}", r.stdout, r.stderr);
    println!("\nThe tool received {} calls:", r.events.len());
    for line in &r.events {
        println!("  {line}");
    }
    std::process::exit(if r.success && !r.events.is_empty() {
        0
    } else {
        1
    });
}
