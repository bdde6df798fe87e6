//! Builds the initial-exec thread-local slot for each thread's writer (see
//! `c/current.c`): stable Rust cannot choose a thread local's TLS model.
//! And says where this crate's source is (see `links` in Cargo.toml).

fn main() {
    println!("cargo:rerun-if-changed=c/current.c");
    // For nvtxr-record's build script, which builds this crate as the
    // shared library the `nvtxr` command carries.
    println!(
        "cargo:source={}",
        std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")
    );
    cc::Build::new()
        .file("c/current.c")
        .flag("-ftls-model=initial-exec")
        .compile("nvtxr_record_current");
}
