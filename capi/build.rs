//! Link settings for the shared library: a SONAME, and an export list that
//! holds only `nvtxr_` symbols (rustc already hides everything that is not
//! `#[unsafe(no_mangle)]`, and every `#[no_mangle]` item is `nvtxr_`-prefixed; a test
//! reads the dynamic symbol table to keep it so).

include!("soname.rs");

fn main() {
    let soname = soname_of(&std::env::var("CARGO_PKG_VERSION").unwrap());
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap();
    if target_os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=soname.rs");
}
