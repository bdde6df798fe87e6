//! Builds the initial-exec thread-local slot for each thread's writer (see
//! `c/current.c`): stable Rust cannot choose a thread local's TLS model.

fn main() {
    println!("cargo:rerun-if-changed=c/current.c");
    cc::Build::new()
        .file("c/current.c")
        .flag("-ftls-model=initial-exec")
        .compile("nvtxr_record_current");
}
