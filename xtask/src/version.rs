//! The C library's version and SONAME (by the rule in `capi/soname.rs`,
//! shared with `capi/build.rs`).

#[path = "../../capi/soname.rs"]
mod rule;

pub use rule::soname_of;

/// The C library's version, from `capi/Cargo.toml`.
pub fn nvtxr_version() -> String {
    let capi = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../capi/Cargo.toml");
    let manifest = std::fs::read_to_string(capi).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("version = "))
        .expect("version in Cargo.toml");
    line.trim_start_matches("version = ")
        .trim_matches('"')
        .to_string()
}

/// The C library's SONAME.
pub fn soname() -> String {
    soname_of(&nvtxr_version())
}
