//! Link settings for the shared library: a SONAME, and an export list that
//! holds only `nvtxr_` symbols (rustc already hides everything that is not
//! `#[unsafe(no_mangle)]`, and every `#[no_mangle]` item is `nvtxr_`-prefixed; a test
//! reads the dynamic symbol table to keep it so).

fn main() {
    // Cargo's compatibility rule (docs/abi.md): libnvtxr.so.MAJOR, or
    // libnvtxr.so.0.MINOR while the major version is 0; as
    // `xtask::install::soname_of` (tests/exports.rs checks they agree).
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap();
    let soname = match major.as_str() {
        "0" => format!("libnvtxr.so.0.{minor}"),
        _ => format!("libnvtxr.so.{major}"),
    };
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap();
    if target_os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
