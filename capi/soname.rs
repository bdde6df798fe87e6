// The C library's SONAME, by Cargo's compatibility rule (docs/abi.md):
// `libnvtxr.so.MAJOR`, or `libnvtxr.so.0.MINOR` while the major version is
// 0, when a minor release may break compatibility. The one source of the
// rule: `build.rs` links with it, and `xtask` (which includes this file as
// its module `soname`) installs the links by it.

/// The SONAME of version `major.minor...`.
pub fn soname_of(version: &str) -> String {
    let mut parts = version.split('.');
    let major = parts.next().unwrap_or("0");
    match major {
        "0" => format!("libnvtxr.so.0.{}", parts.next().unwrap_or("0")),
        _ => format!("libnvtxr.so.{major}"),
    }
}
